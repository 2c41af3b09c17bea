"""``BaseModule``: the interface every module implements and the training loop over it
(MXNet 1.x's ``mx.module.BaseModule``).

A module is bound to input shapes (``bind``), gets parameters (``init_params``) and an
optimizer (``init_optimizer``), then runs ``forward`` / ``backward`` / ``update`` per batch.
``fit``, ``score``, ``predict`` and ``iter_predict`` are written once here over those
methods, so ``Module``, ``BucketingModule``, ``SequentialModule`` and ``PythonModule``
share them.
"""
import logging
import time
import warnings

import numpy as np

from .. import metric as _metric
from .. import ndarray as nd
from ..base import MXNetError
from ..initializer import Uniform
from ..io import DataDesc, NDArrayIter
from ..model import BatchEndParam

__all__ = ["BaseModule", "ShapeTypeError", "MissingParamError"]


class ShapeTypeError(MXNetError, TypeError):
    """A data/label shape that is not a tuple of integers (a TypeError, as in MXNet)."""


class MissingParamError(MXNetError, RuntimeError):
    """A parameter missing from ``arg_params`` without ``allow_missing`` (a RuntimeError,
    as in MXNet)."""


def _as_list(obj):
    if obj is None:
        return []
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _check_input_names(who, symbol, names, typename, throw):
    """Each of ``names`` must be an argument of ``symbol``: raise MXNetError (``throw``)
    or warn, listing the arguments that look like inputs."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma",
                                                          "_beta"))]
        msg = (f"{who}: {typename}_names={list(names)} but {name!r} is not among the "
               f"symbol's arguments; did you mean one of {candidates}?")
        if throw:
            raise MXNetError(msg)
        logging.warning(msg)


def _parse_shape(who, kind, item):
    """One ``DataDesc`` from a ``DataDesc`` or a ``(name, shape)`` pair."""
    if isinstance(item, DataDesc):
        name, shape = item.name, item.shape
    elif isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
        name, shape = item
    else:
        raise ShapeTypeError(f"{who}: each of {kind}_shapes must be a DataDesc or a "
                             f"(name, shape) pair, got {item!r}")
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
            for s in shape):
        raise ShapeTypeError(f"{who}: the shape of {kind} {name!r} must be a tuple of "
                             f"non-negative ints, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    if isinstance(item, DataDesc):
        return DataDesc(name, shape, item.dtype, item.layout)
    return DataDesc(name, shape)


def _parse_data_desc(who, data_names, label_names, data_shapes, label_shapes):
    """``(data_shapes, label_shapes)`` as lists of ``DataDesc`` whose names are exactly
    ``data_names`` / ``label_names`` (in any order)."""
    if data_shapes is None:
        raise MXNetError(f"{who}: data_shapes must be given (a list of DataDesc or "
                         "(name, shape) pairs, e.g. train_iter.provide_data)")
    data = [_parse_shape(who, "data", d) for d in _as_list(data_shapes)]
    _check_names(who, "data", data_names, data)
    if label_shapes is None or (not _as_list(label_shapes) and not label_names):
        return data, None
    label = [_parse_shape(who, "label", d) for d in _as_list(label_shapes)]
    if sorted(d.name for d in label) != sorted(label_names):
        # MXNet warns here rather than refusing (a MakeLoss network with label_names=None
        # fed by an iterator that has labels); labels the module does not take are dropped
        logging.warning("%s: label_shapes name %s, but the module's label_names are %s; "
                        "the others are ignored", who, [d.name for d in label], label_names)
        label = [d for d in label if d.name in label_names]
    return data, (label or None)


def _check_names(who, kind, names, descs):
    given = sorted(d.name for d in descs)
    if given != sorted(names):
        raise MXNetError(f"{who}: {kind}_shapes name {given}, but the module's {kind}_names "
                         f"are {sorted(names)}")


def _check_iter(who, argument, data):
    """MXNetError unless ``data`` is a data iterator (iterable, with ``reset``)."""
    if data is None or not hasattr(data, "__iter__") or not hasattr(data, "reset"):
        raise MXNetError(f"{who}: {argument} must be a data iterator (an mx.io.DataIter), got "
                         f"{'None' if data is None else type(data).__name__}")


def _require(who, module, *states):
    """MXNetError naming ``who`` unless the module is ``binded`` / ``params_initialized``
    / ``optimizer_initialized`` as listed."""
    advice = {"binded": "call bind() first",
              "params_initialized": "call init_params() first",
              "optimizer_initialized": "call init_optimizer() first",
              "inputs_need_grad": "bind with inputs_need_grad=True"}
    for state in states:
        if not getattr(module, state):
            raise MXNetError(f"{who}: the module is not {state.replace('_', ' ')} "
                             f"({advice[state]})")


class BaseModule:
    """The module interface and its generic loops.

    Subclasses implement ``bind``, ``init_params``, ``init_optimizer``, ``forward``,
    ``backward``, ``update``, ``get_outputs``, ``get_input_grads``, ``update_metric``,
    ``get_params``, ``set_params`` (or ``init_params``) and the properties
    ``data_names``, ``output_names``, ``data_shapes``, ``label_shapes`` and
    ``output_shapes``.
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ---- high level ------------------------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run ``eval_data`` (at most ``num_batch`` batches) forward in inference mode and
        return ``eval_metric``'s ``get_name_value()``. ``batch_end_callback`` gets a
        ``BatchEndParam`` after each batch, ``score_end_callback`` one at the end (its
        ``nbatch`` the number of batches)."""
        _require("score", self, "binded", "params_initialized")
        _check_iter("score", "eval_data", eval_data)
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        eval_metric.reset()
        done = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            self._update_metric_of(eval_metric, batch)
            _call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            done += 1
        _call_all(score_end_callback, BatchEndParam(epoch, done, eval_metric, locals()))
        return eval_metric.get_name_value()

    def _update_metric_of(self, eval_metric, batch):
        if isinstance(batch, list):
            self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
        else:
            self.update_metric(eval_metric, batch.label)

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch of ``eval_data``: the outputs of an
        inference forward without the batch's ``pad`` filler examples."""
        _require("iter_predict", self, "binded", "params_initialized")
        _check_iter("iter_predict", "eval_data", eval_data)
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            yield [out[0:out.shape[0] - pad] for out in self.get_outputs()], nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """The outputs of an inference forward over ``eval_data`` (a data iterator, or one
        NDArray / NumPy array taken as a single batch), without ``pad`` filler examples.

        With ``merge_batches`` each output's batches are concatenated along axis 0 and the
        result is one NDArray when the module has one output (unless
        ``always_output_list``), else a list; without it, a list per batch of the outputs.

        An array runs in inference mode and gives every output, as an iterator does (MXNet
        ran it with ``is_train`` of the binding, so Dropout was active in a module bound for
        training, and returned the first output only).
        """
        _require("predict", self, "binded", "params_initialized")
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):
            array = eval_data if isinstance(eval_data, nd.NDArray) else nd.array(eval_data)
            eval_data = NDArrayIter(array, batch_size=array.shape[0])
        _check_iter("predict", "eval_data", eval_data)
        per_batch = [[out.copy() for out in outs] for outs, _, _ in
                     self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not per_batch or not merge_batches:
            return per_batch
        counts = {len(outs) for outs in per_batch}
        if len(counts) != 1:
            raise MXNetError(f"predict: cannot merge batches with different numbers of "
                             f"outputs {sorted(counts)} (bucketing?); use "
                             "merge_batches=False")
        merged = [nd.concat(*[outs[i] for outs in per_batch], dim=0)
                  for i in range(len(per_batch[0]))]
        if len(merged) == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train for epochs ``begin_epoch .. num_epoch - 1`` over ``train_data``.

        Binds to ``train_data.provide_data`` / ``provide_label``, initializes the
        parameters (``initializer``, ``arg_params``, ``aux_params``, ``allow_missing``,
        ``force_init``) and the optimizer (``kvstore``, ``optimizer``,
        ``optimizer_params``), then per batch runs ``forward_backward``, ``update`` and
        ``update_metric(eval_metric)`` and calls each ``batch_end_callback`` with a
        ``BatchEndParam``. After each epoch it logs the training metric, calls each
        ``epoch_end_callback(epoch, symbol, arg_params, aux_params)``, scores ``eval_data``
        with ``validation_metric`` (default ``eval_metric``) and resets ``train_data``.
        A batch's labels are read before the next batch is fetched (an iterator may reuse
        its buffers).
        """
        _check_iter("fit", "train_data", train_data)
        if num_epoch is None:
            raise MXNetError("fit: num_epoch must be given (the epoch to stop before)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params,
                         aux_params=aux_params, allow_missing=allow_missing,
                         force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            name_values = self._fit_epoch(epoch, train_data, eval_metric, batch_end_callback,
                                          monitor, sparse_row_id_fn)
            for name, val in name_values:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            # the parameters as one copy (averaged over the devices), pushed back so every
            # device holds the same values
            arg_params_, aux_params_ = self.get_params()
            self.set_params(arg_params_, aux_params_)
            for callback in _as_list(epoch_end_callback):
                callback(epoch, self.symbol, arg_params_, aux_params_)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _fit_epoch(self, epoch, train_data, eval_metric, batch_end_callback, monitor,
                   sparse_row_id_fn):
        """One epoch of ``fit``; the training metric's global ``(name, value)`` pairs."""
        eval_metric.reset()
        data_iter = iter(train_data)
        try:
            next_batch = next(data_iter)
        except StopIteration:
            raise MXNetError(f"fit: train_data yielded no batch in epoch {epoch}") from None
        nbatch, end_of_epoch, name_values = 0, False, []
        while not end_of_epoch:
            batch = next_batch
            if monitor is not None:
                monitor.tic()
            self.forward_backward(batch)
            self.update()
            self._update_metric_of(eval_metric, batch)
            try:
                next_batch = next(data_iter)
                self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
            except StopIteration:
                end_of_epoch = True
            if monitor is not None:
                monitor.toc_print()
            if end_of_epoch:
                name_values = eval_metric.get_global_name_value()
            _call_all(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            nbatch += 1
        return name_values

    # ---- symbol and shapes -----------------------------------------------------------------
    @property
    def data_names(self):
        """The names of the data inputs."""
        raise NotImplementedError()

    @property
    def output_names(self):
        """The names of the outputs."""
        raise NotImplementedError()

    @property
    def data_shapes(self):
        """The ``DataDesc`` of the data inputs."""
        raise NotImplementedError()

    @property
    def label_shapes(self):
        """The ``DataDesc`` of the labels (None without labels)."""
        raise NotImplementedError()

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output."""
        raise NotImplementedError()

    @property
    def symbol(self):
        """The module's symbol."""
        return self._symbol

    # ---- parameters ------------------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)``: dicts of name to NDArray."""
        raise NotImplementedError()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters."""
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign the parameters from ``arg_params`` / ``aux_params`` (``init_params``
        without an initializer); with ``allow_missing`` the names not given keep their
        values (a module that can assign part of its parameters implements
        ``_assign_params``)."""
        if not allow_missing or not hasattr(self, "_assign_params"):
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        _require("set_params", self, "binded")
        self._assign_params(arg_params, aux_params, force_init, allow_extra)
        self._params_dirty = True

    def save_params(self, fname):
        """Save the parameters to ``fname`` (``mx.nd.save`` keys ``arg:<name>`` and
        ``aux:<name>``, as ``mx.model.save_checkpoint``)."""
        arg_params, aux_params = self.get_params()
        save = {f"arg:{k}": v.as_in_context(_cpu()) for k, v in arg_params.items()}
        save.update({f"aux:{k}": v.as_in_context(_cpu()) for k, v in aux_params.items()})
        nd.save(fname, save)

    def load_params(self, fname):
        """Load parameters saved by ``save_params`` (or MXNet) and ``set_params`` them."""
        loaded = nd.load(fname)
        if not isinstance(loaded, dict):
            raise MXNetError(f"load_params: {fname!r} holds a list of arrays, not a dict keyed "
                             "'arg:<name>'/'aux:<name>'")
        arg_params, aux_params = {}, {}
        for key, value in loaded.items():
            kind, sep, name = key.partition(":")
            if not sep or kind not in ("arg", "aux"):
                raise MXNetError(f"load_params: key {key!r} in {fname!r} is not "
                                 "'arg:<name>' or 'aux:<name>'")
            (arg_params if kind == "arg" else aux_params)[name] = value
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        """The values of the state inputs (none by default)."""
        _require("get_states", self, "binded", "params_initialized")
        return []

    def set_states(self, states=None, value=None):
        """Set the state inputs (none by default)."""
        _require("set_states", self, "binded", "params_initialized")

    def install_monitor(self, mon):
        """Install a monitor on the module's executors."""
        raise NotImplementedError()

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare for ``data_batch`` (MXNet pulls sparse rows here; dense arrays need
        nothing)."""
        if sparse_row_id_fn is not None:
            self.logger.warning("sparse_row_id_fn is ignored: mxlite's parameters are dense")

    # ---- computation -----------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Forward ``data_batch``."""
        raise NotImplementedError()

    def backward(self, out_grads=None):
        """Backward from ``out_grads`` (None for loss outputs)."""
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward."""
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs from the last backward."""
        raise NotImplementedError()

    def update(self):
        """Apply the optimizer to the parameters with the last gradients."""
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the last outputs and ``labels``."""
        raise NotImplementedError()

    # ---- setup -----------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Allocate the executors for these input shapes."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up the optimizer."""
        raise NotImplementedError()


def _cpu():
    from ..context import cpu
    return cpu()


def _call_all(callbacks, param):
    for callback in _as_list(callbacks):
        callback(param)

