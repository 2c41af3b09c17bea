"""Automatic mixed precision: MXNet 1.9.1's ``mx.contrib.amp`` API.

* ``init()`` wraps the ``mx.nd`` and ``mx.sym`` functions of the listed operators, as MXNet's
  monkey-patching did: a low-precision op (``FullyConnected``, ``Convolution``, ...) casts its
  float inputs to the target dtype, a float32 op (``softmax``, norms, losses, ...) to float32,
  a widest-type op (``elemwise_add``, ``concat``, ...) to the widest dtype among its inputs,
  and the loss outputs (``SoftmaxOutput``, ...) of ``mx.nd`` scale their ``grad_scale`` by the
  loss scale. Gluon blocks call these functions, so a model built after ``init()`` runs in
  mixed precision, imperative or hybridized.
* ``init_trainer(trainer)``, ``scale_loss(loss, trainer)``, ``unscale(trainer)``: dynamic
  loss scaling with a Gluon ``Trainer`` (a step whose gradients overflowed is skipped and
  the scale halves; see ``DynamicLossScaler``).
* ``convert_symbol``, ``convert_model``, ``convert_hybrid_block``: the same lists applied to
  a float32 graph (``mxlite.contrib.amp.convert``).

The target dtype defaults to float16 on a GPU context and bfloat16 on a CPU (MXNet's default
was float16 everywhere; CPUs compute bfloat16, with oneDNN's bf16 kernels where the CPU has
them).
"""
import contextlib
import logging

import numpy as np

from ... import autograd
from ... import ndarray as nd_mod
from ... import symbol as sym_mod
from ...base import MXNetError
from ...ndarray import NDArray
from ...ops.registry import REGISTRY, namespace_of
from ...symbol.graph import input_names
from ...symbol.symbol import Symbol
from .convert import (_conditions, _names, convert_bucketing_module, convert_hybrid_block,
                      convert_model, convert_symbol, target_dtype_of)
from .lists import for_dtype
from .loss_scaler import DynamicLossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model",
           "convert_hybrid_block", "convert_bucketing_module", "convert_symbol",
           "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params",
           "DynamicLossScaler"]

F32 = np.dtype("float32")
_AMP_FLOATS = ("float16", "bfloat16", "float32")
# the casts the wrappers insert, taken before anything is wrapped
_nd_amp_cast, _nd_amp_multicast = nd_mod.amp_cast, nd_mod.amp_multicast
_sym_amp_cast, _sym_amp_multicast = sym_mod.amp_cast, sym_mod.amp_multicast


class _State:
    """What ``init`` did: the target dtype, the loss scaler it made (the first
    ``init_trainer`` takes it, as MXNet), and the functions it replaced."""
    target = None
    scaler = None
    scaler_taken = False
    replaced = []           # (namespace module, attribute, original function)


# ---- the lists ----------------------------------------------------------------------------------
def list_lp16_ops(target_dtype):
    """The ops computed in ``target_dtype`` ('float16' or 'bfloat16')."""
    return list(for_dtype(target_dtype_of(target_dtype, "amp.list_lp16_ops")).lp16)


def list_fp32_ops(target_dtype):
    """The ops computed in float32."""
    return list(for_dtype(target_dtype_of(target_dtype, "amp.list_fp32_ops")).fp32)


def list_lp16_fp32_ops(target_dtype):
    """The ops computed in whichever dtype they are given."""
    return list(for_dtype(target_dtype_of(target_dtype, "amp.list_lp16_fp32_ops")).lp16_fp32)


def list_conditional_fp32_ops(target_dtype):
    """``(op, parameter, values)``: computed in float32 for those parameter values."""
    lists = for_dtype(target_dtype_of(target_dtype, "amp.list_conditional_fp32_ops"))
    return list(lists.conditional_fp32)


def list_widest_type_cast(target_dtype):
    """The ops whose inputs are cast to the widest dtype among them."""
    return list(for_dtype(target_dtype_of(target_dtype, "amp.list_widest_type_cast")).widest)


def list_loss_output_functions(target_dtype):
    """The loss outputs whose ``grad_scale`` follows the loss scale after ``init()``."""
    lists = for_dtype(target_dtype_of(target_dtype, "amp.list_loss_output_functions"))
    return list(lists.loss_output)


def list_lp16_use_fp32_params(target_dtype):
    """{op: input names kept in float32 when the op runs in ``target_dtype``}; None for
    float16."""
    lists = for_dtype(target_dtype_of(target_dtype, "amp.list_lp16_use_fp32_params"))
    return None if lists.lp16_use_fp32_params is None else dict(lists.lp16_use_fp32_params)


# ---- casting arguments --------------------------------------------------------------------------
def _cast_nd(x, dtype):
    """NDArray ``x`` as ``dtype`` when it holds a float amp moves; anything else as it is."""
    if isinstance(x, NDArray) and x.dtype != dtype and np.dtype(x.dtype).name in _AMP_FLOATS:
        return _nd_amp_cast(x, dtype=dtype.name)
    return x


def _cast_args(args, kwargs, dtype, kept):
    """``(args, kwargs)`` with every NDArray cast by ``_cast_nd``, except the op's inputs
    in ``kept`` = (positions, keyword names)."""
    positions, names = kept
    args = [a if i in positions else _cast_nd(a, dtype) for i, a in enumerate(args)]
    kwargs = {k: v if k in names else _cast_nd(v, dtype) for k, v in kwargs.items()}
    return args, kwargs


def _applies(condition, kwargs):
    """True unless a conditional op's parameter is absent or has another value."""
    if condition is None:
        return True
    param, values = condition
    return param in kwargs and str(kwargs[param]) in values


def _nd_wrapper(f, dtype, kept=((), ()), condition=None):
    def wrapped(*args, **kwargs):
        if not _applies(condition, kwargs):
            return f(*args, **kwargs)
        args, kwargs = _cast_args(args, kwargs, dtype, kept)
        return f(*args, **kwargs)
    return _like(wrapped, f)


def _sym_wrapper(f, dtype, kept=((), ()), condition=None):
    """Build the node, then give each of its inputs (the variables the call made for it
    too) an ``amp_cast``; auxiliary states and the ``kept`` inputs stay as they are."""
    names = set(kept[1])

    def wrapped(*args, **kwargs):
        out = f(*args, **kwargs)
        node = out._one_node() if _applies(condition, kwargs) else None
        if node is None or node.op is None:
            return out
        fixed = set(node.op.list_auxiliary_states(node.attrs)) | names
        node.inputs = [e if n in fixed else _sym_amp_cast(Symbol([e]), dtype=dtype.name)
                       ._outputs[0] for n, e in zip(input_names(node), node.inputs)]
        return out
    return _like(wrapped, f)


def _widest_wrapper(f, symbolic):
    """The array arguments through one ``amp_multicast`` (the widest float among them)."""
    def wrapped(*args, **kwargs):
        args = list(args)
        kind = Symbol if symbolic else NDArray
        slots = [(args, i) for i, a in enumerate(args) if isinstance(a, kind)]
        slots += [(kwargs, k) for k, v in kwargs.items() if isinstance(v, kind)]
        if len(slots) > 1 and (symbolic or len({c[k].dtype for c, k in slots}) > 1):
            multicast = _sym_amp_multicast if symbolic else _nd_amp_multicast
            cast = multicast(*[c[k] for c, k in slots], num_outputs=len(slots))
            for (c, k), x in zip(slots, cast):
                c[k] = x
        return f(*args, **kwargs)
    return _like(wrapped, f)


def _loss_wrapper(f, symbolic):
    """``mx.nd``: ``grad_scale`` times the current loss scale (the gradient a loss output
    writes is then the scaled one). ``mx.sym``: a warning, as MXNet's (a graph keeps the
    scale it was built with)."""
    def wrapped(*args, **kwargs):
        if symbolic:
            logging.warning("%s does not support dynamic loss scaling in symbolic and "
                            "hybridized execution", getattr(f, "__name__", "loss output"))
        else:
            kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * _State.scaler.loss_scale
        return f(*args, **kwargs)
    return _like(wrapped, f)


def _refuses(op, attrs, target, kept):
    """True when op ``op`` with ``attrs`` has no kernel for ``target`` inputs (the inputs
    named in ``kept`` float32): its type rule refuses them."""
    try:
        names = op.list_inputs(attrs)
    except MXNetError:
        return False            # (a variadic op's count comes with the call: no verdict)
    try:
        op.infer_type([F32 if n in kept else target for n in names], attrs)
    except MXNetError:
        return True
    return False


def _either_wrapper(f, target, kept, symbolic):
    """An op MXNet's lists run in whichever dtype it is given, whose mxlite kernel takes no
    ``target`` input (BatchNorm and LRN in bfloat16, say): float32 inputs when it would be
    given ``target`` ones, instead of an error. (MXNet's oneDNN kernels took bfloat16.)"""
    op, names = getattr(f, "op", None), set(kept[1])
    if op is None:
        return f
    cast = _sym_wrapper(f, F32, kept) if symbolic else _nd_wrapper(f, F32, kept)
    verdicts = {}               # the call's parameters -> whether the op refuses ``target``

    def refuses(kwargs):
        params = {k: v for k, v in kwargs.items()
                  if k not in ("out", "name", "attr") and not isinstance(v, (NDArray, Symbol))}
        key = repr(sorted(params.items()))
        if key not in verdicts:
            if len(verdicts) >= 512:
                verdicts.clear()            # (parameters that vary call to call)
            try:
                verdicts[key] = _refuses(op, op.parse_attrs(params), target, names)
            except (MXNetError, TypeError):
                verdicts[key] = False       # the call itself is wrong: let it say so
        return verdicts[key]

    def wrapped(*args, **kwargs):
        if not symbolic and not any(isinstance(a, NDArray) and a.dtype == target
                                    for a in list(args) + list(kwargs.values())):
            return f(*args, **kwargs)       # no low-precision input: nothing to decide
        return cast(*args, **kwargs) if refuses(kwargs) else f(*args, **kwargs)
    return _like(wrapped, f)


def _like(wrapped, f):
    wrapped.__name__ = getattr(f, "__name__", "amp_wrapped")
    wrapped.__doc__ = getattr(f, "__doc__", None)
    wrapped.__wrapped__ = f
    return wrapped


def _kept_inputs(name, use_fp32_params):
    """(positions, names) of op ``name``'s inputs that stay float32 in low precision."""
    names = [n for n in (use_fp32_params or {}).get(name, ()) if n]
    op_inputs = list(REGISTRY[name].inputs)
    return {op_inputs.index(n) for n in names if n in op_inputs}, set(names)


# ---- init ---------------------------------------------------------------------------------------
def _replace(module, name, make):
    """Put ``make(f)`` where ``module`` (``mx.nd`` or ``mx.sym``) shows op ``name``'s
    function ``f``; the original is remembered."""
    ns, short = namespace_of(name)
    holder = module if not ns else getattr(module, ns, None)
    f = getattr(holder, short, None) if holder is not None else None
    if f is None:
        return
    _State.replaced.append((holder, short, f))
    setattr(holder, short, make(f))


def init(target_dtype=None, target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Turn automatic mixed precision on for the ``mx.nd`` and ``mx.sym`` functions (call it
    before building the model; a second call does nothing, as in MXNet).

    ``target_dtype``: 'float16' or 'bfloat16' (None: float16 on a GPU context, bfloat16 on
    a CPU). ``target_precision_ops``, ``fp32_ops`` (op names) and ``conditional_fp32_ops``
    (``(op, parameter, values)``) replace the default lists.

    An NDArray argument is cast only when it holds float16, bfloat16 or float32 (float64
    and integers pass); in ``mx.sym`` every input of a listed op gets an ``amp_cast``
    node, the variables the call creates (weights) included, except auxiliary states. An op
    the lists run in either dtype but whose mxlite kernel takes no input of the target dtype
    (BatchNorm in bfloat16 or float16, say) gets float32 inputs instead.
    """
    if _State.target is not None:
        return
    what = "amp.init"
    target = target_dtype_of(target_dtype, what)
    lists = for_dtype(target)
    low = _names(what, "target_precision_ops", target_precision_ops, lists.lp16)
    high = _names(what, "fp32_ops", fp32_ops, lists.fp32)
    conditional = _conditions(what, conditional_fp32_ops, lists.conditional_fp32)
    _State.target, _State.scaler, _State.scaler_taken = target, DynamicLossScaler(), False
    logging.info("Using AMP (%s)", target.name)
    for module, symbolic in ((nd_mod, False), (sym_mod, True)):
        cast = _sym_wrapper if symbolic else _nd_wrapper
        for name in low:
            kept = _kept_inputs(name, lists.lp16_use_fp32_params)
            _replace(module, name, lambda f, k=kept: cast(f, target, k))
        for name in high:
            _replace(module, name, lambda f: cast(f, F32))
        for name, param, values in conditional:
            _replace(module, name, lambda f, c=(param, set(values)): cast(f, F32, condition=c))
        for name in lists.widest:
            _replace(module, name, lambda f, s=symbolic: _widest_wrapper(f, s))
        for name in set(lists.lp16_fp32) - set(low) - set(high) - set(lists.widest):
            kept = _kept_inputs(name, lists.lp16_use_fp32_params)
            _replace(module, name, lambda f, k=kept, s=symbolic: _either_wrapper(f, target, k, s))
        for name in lists.loss_output:
            _replace(module, name, lambda f, s=symbolic: _loss_wrapper(f, s))


def _restore():
    """Undo ``init`` (for tests: MXNet had no way back)."""
    for holder, attr, f in reversed(_State.replaced):
        setattr(holder, attr, f)
    _State.replaced = []
    _State.target = _State.scaler = None
    _State.scaler_taken = False


# ---- loss scaling with a Trainer ----------------------------------------------------------------
def _trainer_class():
    from ...gluon.trainer import Trainer
    return Trainer


def _check_trainer(what, optimizer_or_trainer):
    from ...optimizer import Optimizer
    if isinstance(optimizer_or_trainer, _trainer_class()):
        return optimizer_or_trainer
    if isinstance(optimizer_or_trainer, Optimizer):
        raise MXNetError(f"{what}: AMP works with a Gluon Trainer, not an Optimizer (as in "
                         "MXNet)")
    raise MXNetError(f"{what}: expected a Gluon Trainer, got "
                     f"{type(optimizer_or_trainer).__name__}")


def init_trainer(optimizer_or_trainer):
    """Give a Gluon ``Trainer`` dynamic loss scaling: its ``step`` skips an update whose
    gradients overflowed (the scale then halves, and grows again after 2000 good steps).
    Call ``amp.init()`` first; the first trainer gets the loss scaler ``init`` made (the one
    the loss outputs of ``mx.nd`` follow), later ones their own."""
    trainer = _check_trainer("amp.init_trainer", optimizer_or_trainer)
    if _State.target is None:
        raise MXNetError("amp.init_trainer: AMP is not initialized; call amp.init() first")
    scaler = _State.scaler if not _State.scaler_taken else DynamicLossScaler()
    _State.scaler_taken = True
    trainer._amp_loss_scaler = scaler
    trainer._amp_original_scale = trainer._scale


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """``with amp.scale_loss(loss, trainer) as scaled: autograd.backward(scaled)``.

    Yields the loss (or list of losses) times the trainer's loss scale, and sets the
    trainer to divide the gradients by that scale in its next ``step``. Also takes a
    ``DynamicLossScaler`` itself, for a loop without a Trainer (then ``scaler.step``
    unscales). Enter it inside ``autograd.record()``."""
    if isinstance(optimizer_or_trainer, DynamicLossScaler):
        yield optimizer_or_trainer.scale(loss)
        return
    trainer = _check_trainer("amp.scale_loss", optimizer_or_trainer)
    scaler = getattr(trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise MXNetError("amp.scale_loss: the trainer has no loss scaler; call "
                         "amp.init_trainer(trainer) first")
    trainer._scale = trainer._amp_original_scale / scaler.loss_scale
    yield scaler.scale(loss)


def unscale(optimizer_or_trainer):
    """Divide the trainer's gradients by the loss scale now, in place (before clipping
    them, say); its next ``step`` then applies no scale of its own."""
    trainer = _check_trainer("amp.unscale", optimizer_or_trainer)
    with autograd.pause():
        for param in trainer._params:
            if param.grad_req != "null" and param._data is not None:
                for g in param.list_grad():
                    g *= trainer._scale
    trainer._scale = 1.0
