"""``BucketingModule``: one ``Module`` per bucket key, all sharing one set of parameters
(MXNet 1.x's ``mx.mod.BucketingModule``), for inputs of several lengths.

``sym_gen(bucket_key)`` gives ``(symbol, data_names, label_names)`` for a key; the module of
``default_bucket_key`` is bound first and owns the parameters, gradients and optimizer;
every other bucket's module is bound with it as ``shared_module`` when a batch with that
``bucket_key`` first arrives, so all buckets train the same weights.
"""
import logging

import numpy as np

from .. import ndarray as nd
from .. import symbol as _sym
from ..base import MXNetError
from ..context import cpu
from ..initializer import Uniform
from ..io import DataDesc
from ..model import load_params
from ..name import NameManager
from .base_module import BaseModule, _as_list, _check_input_names, _require
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """Modules for the bucket keys of ``sym_gen``, sharing parameters.

    ``context``, ``work_load_list``, ``fixed_param_names``, ``state_names``,
    ``group2ctxs`` and ``compression_params`` are handed to each bucket's ``Module``. A
    batch without a ``bucket_key`` runs in the default bucket.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise MXNetError("BucketingModule: default_bucket_key must be given")
        if not callable(sym_gen):
            raise MXNetError(f"BucketingModule: sym_gen must be callable, got {sym_gen!r}")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        self._fixed_param_names = list(_as_list(fixed_param_names))
        self._state_names = list(_as_list(state_names))
        _check_input_names("BucketingModule", symbol, data_names, "data", True)
        _check_input_names("BucketingModule", symbol, label_names, "label", False)
        _check_input_names("BucketingModule", symbol, self._state_names, "state", True)
        _check_input_names("BucketingModule", symbol, self._fixed_param_names, "fixed_param",
                           True)
        self._module_kwargs = dict(logger=logger, context=context if context is not None
                                   else cpu(), work_load_list=work_load_list,
                                   fixed_param_names=self._fixed_param_names,
                                   state_names=self._state_names, group2ctxs=group2ctxs,
                                   compression_params=compression_params)
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None
        self._loaded_symbols = {}    # bucket key -> Symbol, from load()
        self._loaded_params = None   # (arg_params, aux_params) from load(), set by bind

    def _call_sym_gen(self, bucket_key):
        """``(symbol, data_names, label_names)`` of ``bucket_key``, names as lists. The call
        runs under a fresh ``NameManager`` so that automatic names (``embedding0_weight``)
        restart in each bucket: the buckets' parameters must have the same names to be
        shared."""
        with NameManager():
            result = self._sym_gen(bucket_key)
        if not isinstance(result, tuple) or len(result) != 3:
            raise MXNetError(f"BucketingModule: sym_gen({bucket_key!r}) must return "
                             f"(symbol, data_names, label_names), got {result!r}")
        symbol, data_names, label_names = result
        return symbol, list(_as_list(data_names)), list(_as_list(label_names))

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # ---- properties ------------------------------------------------------------------------
    @property
    def data_names(self):
        """The data inputs of the current (or the default) bucket."""
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        """The outputs of the current (or the default) bucket."""
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        """The current bucket's data shapes."""
        _require("data_shapes", self, "binded")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        """The current bucket's label shapes."""
        _require("label_shapes", self, "binded")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        """The current bucket's output shapes."""
        _require("output_shapes", self, "binded")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's symbol."""
        _require("symbol", self, "binded")
        return self._curr_module.symbol

    # ---- parameters ------------------------------------------------------------------------
    def get_params(self):
        """The shared parameters (from the current bucket's module)."""
        _require("get_params", self, "binded", "params_initialized")
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def _assign_params(self, arg_params, aux_params, force_init, allow_extra):
        """``set_params(allow_missing=True)``: the shared parameters, through the current
        bucket's module."""
        self._curr_module.set_params(arg_params, aux_params, allow_missing=True,
                                     force_init=force_init, allow_extra=allow_extra)
        self.params_initialized = True

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the shared parameters (as ``Module.init_params``)."""
        if self.params_initialized and not force_init:
            return
        _require("init_params", self, "binded")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        """The current bucket's state inputs."""
        _require("get_states", self, "binded", "params_initialized")
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the current bucket's state inputs."""
        _require("set_states", self, "binded", "params_initialized")
        self._curr_module.set_states(states, value)

    # ---- binding ---------------------------------------------------------------------------
    def _new_module(self, bucket_key):
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        symbol = self._loaded_symbols.get(bucket_key, symbol)
        return Module(symbol, data_names, label_names, **self._module_kwargs)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the default bucket's module (the others bind on ``switch_bucket``)."""
        previous = None
        if self.params_initialized and self.binded:
            previous = self.get_params()
        elif self._loaded_params is not None:
            previous = self._loaded_params
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise MXNetError("bind: shared_module is not supported by BucketingModule")
        module = self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self._monitor is not None:
            module.install_monitor(self._monitor)
        if previous is not None:
            self.params_initialized = False
            self.set_params(*previous)
            self._loaded_params = None

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key`` the current bucket, binding its module (sharing the default
        bucket's parameters) on first use, or reshaping it for new ``data_shapes``."""
        _require("switch_bucket", self, "binded")
        if bucket_key is None:
            bucket_key = self._default_bucket_key
        module = self._buckets.get(bucket_key)
        if module is None:
            if data_shapes is None:
                raise MXNetError(f"switch_bucket: bucket {bucket_key!r} is new, so data_shapes "
                                 "must be given")
            default = self._buckets[self._default_bucket_key]
            module = self._new_module(bucket_key)
            module.bind(data_shapes, label_shapes, default.for_training,
                        default.inputs_need_grad, force_rebind=False, shared_module=default,
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        elif data_shapes is not None and _shapes(data_shapes) != _shapes(module.data_shapes):
            module.reshape(data_shapes, label_shapes)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # ---- optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up the optimizer on the current bucket and share it with the others."""
        _require("init_optimizer", self, "binded", "params_initialized")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ---- computation -----------------------------------------------------------------------
    def _batch_shapes(self, batch):
        """``(data_shapes, label_shapes)`` of ``batch``: its ``provide_data`` /
        ``provide_label``, else the shapes of its arrays under the current names."""
        data = getattr(batch, "provide_data", None)
        if not data:
            data = [DataDesc(d.name, tuple(x.shape), d.dtype, d.layout) for d, x in
                    zip(self._curr_module.data_shapes, batch.data)]
        label = getattr(batch, "provide_label", None)
        if not label and getattr(batch, "label", None) and self._curr_module.label_shapes:
            label = [DataDesc(d.name, tuple(x.shape), d.dtype, d.layout) for d, x in
                     zip(self._curr_module.label_shapes, batch.label)]
        return data, label or None

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket (if new) ahead of its ``forward``."""
        _require("prepare", self, "binded", "params_initialized")
        original = self._curr_bucket_key
        self.switch_bucket(getattr(data_batch, "bucket_key", None),
                           *self._batch_shapes(data_batch))
        self._curr_module.prepare(data_batch, sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        """Switch to the batch's ``bucket_key`` and forward it there."""
        _require("forward", self, "binded", "params_initialized")
        self.switch_bucket(getattr(data_batch, "bucket_key", None),
                           *self._batch_shapes(data_batch))
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """Backward in the current bucket."""
        _require("backward", self, "binded", "params_initialized")
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """Update the shared parameters with the current bucket's gradients."""
        _require("update", self, "binded", "params_initialized", "optimizer_initialized")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """The current bucket's outputs."""
        _require("get_outputs", self, "binded", "params_initialized")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The current bucket's input gradients."""
        _require("get_input_grads", self, "binded", "params_initialized", "inputs_need_grad")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the current bucket's outputs."""
        _require("update_metric", self, "binded", "params_initialized")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every bucket's executors (and on buckets bound later)."""
        _require("install_monitor", self, "binded")
        self._monitor = mon
        for module in self._buckets.values():
            module.install_monitor(mon)

    # ---- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params`` (the shared parameters), ``prefix-<key>-symbol.json``
        per bucket and ``prefix.buckets`` (the keys, which must be integers, as MXNet)."""
        if not self._buckets:
            raise MXNetError("save_checkpoint: the BucketingModule has no bucket (bind it "
                             "first)")
        keys = list(self._buckets)
        if not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in keys):
            raise MXNetError(f"save_checkpoint: bucket keys must be integers to be saved, "
                             f"got {keys}")
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for key, module in self._buckets.items():
            module.symbol.save("%s-%s-symbol.json" % (prefix, key),
                               remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix, nd.array(keys, dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule of ``save_checkpoint``'s files; the parameters are set when it
        is bound (``kwargs`` go to ``BucketingModule``)."""
        if sym_gen is None or default_bucket_key is None:
            raise MXNetError("BucketingModule.load: sym_gen and default_bucket_key must be "
                             "given")
        keys = nd.load("%s.buckets" % prefix)
        keys = keys[0] if isinstance(keys, list) else next(iter(keys.values()))
        symbols = {int(k): _sym.load("%s-%s-symbol.json" % (prefix, int(k)))
                   for k in keys.asnumpy().astype(np.int64)}
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        arg_params, aux_params = load_params(prefix, epoch)
        mod._loaded_symbols = symbols
        mod._loaded_params = (arg_params, aux_params)
        mod.params_initialized = True
        return mod


def _shapes(descs):
    return [tuple(d[1]) for d in _as_list(descs)]
