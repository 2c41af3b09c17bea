"""``mx.model``: MXNet 1.x checkpoints, ``prefix-symbol.json`` + ``prefix-%04d.params``.

The ``.params`` file is an ``mx.nd.save`` dict whose keys are ``arg:<name>`` for the
arguments (weights, biases, BatchNorm's gamma/beta) and ``aux:<name>`` for the auxiliary
states (BatchNorm's moving mean/variance), so checkpoints move between MXNet and mxlite
in both directions.
"""
import logging
from collections import namedtuple

from . import ndarray as nd
from .base import MXNetError
from .context import cpu

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params"]

#: What a training loop hands each ``batch_end_callback`` (and, with ``nbatch`` the batch
#: count, each ``eval_batch_end_callback``): the epoch, the batch index within it, the
#: running ``EvalMetric`` and the loop's ``locals()``, as MXNet's ``mx.model.BatchEndParam``.
BatchEndParam = namedtuple("BatchEndParam", ["epoch", "nbatch", "eval_metric", "locals"])


def _params_name(prefix, epoch):
    return "%s-%04d.params" % (prefix, epoch)


def _cpu_copies(kind, params):
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise MXNetError(f"save_checkpoint: {kind}_params must be a dict of str->NDArray, got "
                         f"{type(params).__name__}")
    out = {}
    for k, v in params.items():
        if not isinstance(v, nd.NDArray):
            raise MXNetError(f"save_checkpoint: {kind}_params[{k!r}] must be an NDArray, got "
                             f"{type(v).__name__}")
        out[f"{kind}:{k}"] = v.as_in_context(cpu())
    return out


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Save ``symbol`` to ``prefix-symbol.json`` (unless it is None) and the parameters to
    ``prefix-%04d.params`` (``epoch``), keyed ``arg:<name>`` / ``aux:<name>``, as MXNet's
    ``mx.model.save_checkpoint``; MXNet 1.x loads the files.

    With ``remove_amp_cast`` the symbol file leaves out the ``amp_cast`` and
    ``amp_multicast`` nodes (``Symbol.tojson``).
    """
    save_dict = _cpu_copies("arg", arg_params)
    save_dict.update(_cpu_copies("aux", aux_params))
    if symbol is not None:
        symbol.save("%s-symbol.json" % prefix, remove_amp_cast=remove_amp_cast)
    param_name = _params_name(prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)``, dicts name->NDArray, from ``prefix-%04d.params``.

    Keys other than ``arg:``/``aux:`` are skipped (as MXNet); a file saved from a list, or a
    key without a ``type:`` prefix, raises MXNetError naming the file.
    """
    fname = _params_name(prefix, epoch)
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise MXNetError(f"load_params: {fname!r} holds a list of {len(save_dict)} arrays, not "
                         "a dict keyed 'arg:<name>'/'aux:<name>'")
    for k, v in save_dict.items():
        tp, sep, name = k.partition(":")
        if not sep:
            raise MXNetError(f"load_params: key {k!r} in {fname!r} has no 'arg:'/'aux:' prefix")
        if tp == "arg":
            arg_params[name] = v
        elif tp == "aux":
            aux_params[name] = v
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from ``prefix-symbol.json`` and
    ``prefix-%04d.params``, as MXNet's ``mx.model.load_checkpoint`` (files written by MXNet
    1.x or by ``save_checkpoint``)."""
    from . import symbol as sym
    symbol = sym.load("%s-symbol.json" % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
