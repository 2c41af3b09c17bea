"""``Module``: a symbol bound for training and inference on one or more contexts
(MXNet 1.x's ``mx.mod.Module``).

With several contexts each batch is split along its batch axis (``work_load_list``) and
each context's executor runs its slice; ``update`` sums the gradients over the contexts
(through the kvstore) and keeps every context's parameters equal. The optimizer's default
``rescale_grad`` is ``1 / batch_size`` (the whole batch, times the workers of a
``dist_sync`` store), so a loss layer's per-example gradients average over the batch.
"""
import logging
import os
import warnings

import numpy as np

from .. import context as _ctx
from .. import kvstore as _kvs
from .. import ndarray as nd
from .. import optimizer as _opt
from .. import symbol as _sym
from ..base import MXNetError
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..model import load_checkpoint
from ..optimizer import states_io
from .base_module import (BaseModule, MissingParamError, _as_list, _check_input_names,
                          _parse_data_desc, _require)
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]

# MXNet's size above which a 'local' store sums gradients but lets the module update
# (updating a very large array on the CPU store is slow)
_LARGE_PARAM = 1024 * 1024 * 16


def create_kvstore(kvstore, num_device, arg_params):
    """``(kvstore or None, update_on_kvstore)`` as MXNet's training loops choose them: no
    store for one device outside a dist job; a 'local' store with an array above 16M
    elements lets the module update; ``MXNET_UPDATE_ON_KVSTORE=0`` never updates in the
    store."""
    update_on_kvstore = os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1").strip() not in \
        ("0", "false", "False")
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, _kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = _kvs.create(kvstore)
            if kvstore == "local":
                largest = max((int(np.prod(p.shape)) for p in arg_params.values()), default=0)
                if largest > _LARGE_PARAM:
                    update_on_kvstore = False
    else:
        raise MXNetError(f"init_optimizer: kvstore must be a KVStore, a str or None, got "
                         f"{type(kvstore).__name__}")
    if kv is None:
        return None, False
    return kv, update_on_kvstore and kv.is_capable(_kvs.KVStoreBase.OPTIMIZER)


class Module(BaseModule):
    """A symbol as a trainable module.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : names of the data and label inputs (``label_names`` may be
        None: no labels).
    context : Context or list of Contexts; a list splits each batch over them.
    work_load_list : relative slice sizes, one per context (default equal).
    fixed_param_names : parameters that get no gradient and are never updated.
    state_names : inputs that are neither data nor labels nor learned (RNN states), set
        with ``set_states``.
    group2ctxs, compression_params : accepted; mxlite runs each executor on one device and
        reduces gradients in full precision.
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if not isinstance(symbol, _sym.Symbol):
            raise MXNetError(f"Module: symbol must be an mx.sym.Symbol, got "
                             f"{type(symbol).__name__}")
        if context is None:
            context = _ctx.cpu()
        self._context = [context] if isinstance(context, _ctx.Context) else \
            list(context) if isinstance(context, (list, tuple)) else None
        if not self._context or not all(isinstance(c, _ctx.Context) for c in self._context):
            raise MXNetError(f"Module: context must be a Context or a non-empty list of them, "
                             f"got {context!r}")
        self._work_load_list = list(work_load_list) if work_load_list is not None else \
            [1] * len(self._context)
        if len(self._work_load_list) != len(self._context):
            raise MXNetError(f"Module: work_load_list has {len(self._work_load_list)} "
                             f"entries for {len(self._context)} contexts")
        self._group2ctxs = group2ctxs
        self._compression_params = compression_params
        self._symbol = symbol
        self._data_names = list(_as_list(data_names))
        self._label_names = list(_as_list(label_names))
        self._state_names = list(_as_list(state_names))
        self._fixed_param_names = list(_as_list(fixed_param_names))
        _check_input_names("Module", symbol, self._data_names, "data", True)
        _check_input_names("Module", symbol, self._label_names, "label", False)
        _check_input_names("Module", symbol, self._state_names, "state", True)
        _check_input_names("Module", symbol, self._fixed_param_names, "fixed_param", True)
        inputs = set(self._data_names + self._label_names + self._state_names)
        self._param_names = [a for a in symbol.list_arguments() if a not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._optimizer = self._kvstore = self._updater = None
        self._update_on_kvstore = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    # ---- checkpoints -----------------------------------------------------------------------
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module of the checkpoint ``prefix-symbol.json`` + ``prefix-%04d.params``
        (``kwargs`` go to ``Module``); its parameters are set when it is bound, and with
        ``load_optimizer_states`` the optimizer states of ``prefix-%04d.states`` are loaded
        by ``init_optimizer``."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        mod = Module(symbol=symbol, **kwargs)
        mod._arg_params, mod._aux_params = arg_params, aux_params
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = "%s-%04d.states" % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states``."""
        self._symbol.save("%s-symbol.json" % prefix, remove_amp_cast=remove_amp_cast)
        param_name = "%s-%04d.params" % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = "%s-%04d.states" % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    # ---- properties ------------------------------------------------------------------------
    @property
    def data_names(self):
        """The names of the data inputs."""
        return self._data_names

    @property
    def label_names(self):
        """The names of the label inputs."""
        return self._label_names

    @property
    def output_names(self):
        """The names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """The ``DataDesc`` of the data inputs (after ``bind``)."""
        _require("data_shapes", self, "binded")
        return self._data_shapes

    @property
    def label_shapes(self):
        """The ``DataDesc`` of the labels (None when bound without labels)."""
        _require("label_shapes", self, "binded")
        return self._label_shapes

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output (after ``bind``)."""
        _require("output_shapes", self, "binded")
        return self._exec_group.get_output_shapes()

    # ---- parameters ------------------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)``: the parameters, averaged over the contexts when
        an update changed them."""
        _require("get_params", self, "binded", "params_initialized")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters: each from ``arg_params`` / ``aux_params`` when it is
        there, else (a name missing from a given dict needs ``allow_missing``) by
        ``initializer`` with the variable's attributes (``__init__``). Ignored, with a
        warning, when already initialized unless ``force_init``."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        _require("init_params", self, "binded")
        attrs = self._symbol.attr_dict()
        for params, given in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
            for name, arr in sorted(params.items()):
                self._init_one(InitDesc(name, attrs.get(name, None)), arr, given, initializer,
                               allow_missing)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    @staticmethod
    def _init_one(name, arr, given, initializer, allow_missing):
        if given is not None and name in given:
            if given[name] is not arr:
                src = given[name]
                if not isinstance(src, nd.NDArray):
                    src = nd.array(src)
                if src.shape != arr.shape:
                    raise MXNetError(f"init_params: {str(name)!r} has shape {src.shape}, the "
                                     f"module's parameter {arr.shape}")
                src.astype(arr.dtype, copy=False).copyto(arr)
            return
        if given is not None and not allow_missing:
            raise MissingParamError(f"init_params: {str(name)!r} is not in the given "
                                    "parameters (pass allow_missing=True to initialize it)")
        if initializer is not None:
            initializer(name, arr)
        elif given is None:
            raise MXNetError(f"init_params: no initializer and no value for {str(name)!r}")

    def _assign_params(self, arg_params, aux_params, force_init, allow_extra):
        """``set_params(allow_missing=True)``: the names given, into the executors."""
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self.params_initialized = True

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # ---- binding ---------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the executors for ``data_shapes`` / ``label_shapes`` (lists of
        ``DataDesc`` or ``(name, shape)``). ``inputs_need_grad`` keeps the data inputs'
        gradients (``get_input_grads``); ``shared_module`` (bound, initialized) lends its
        parameter arrays and optimizer; ``grad_req`` is 'write', 'add' or 'null' (or a
        list/dict per argument). Already bound: a warning, unless ``force_rebind``."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise MXNetError("bind: inputs_need_grad=True needs for_training=True")
        data, label = _parse_data_desc("bind", self._data_names, self._label_names,
                                       data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not isinstance(shared_module, Module):
                raise MXNetError(f"bind: shared_module must be a Module, got "
                                 f"{type(shared_module).__name__}")
            _require("bind (shared_module)", shared_module, "binded", "params_initialized")
            shared_group = shared_module._exec_group
            if len(shared_group.execs) < len(self._context):
                raise MXNetError("bind: shared_module runs on fewer contexts than this module")
        group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, data, label, self._param_names,
            for_training, inputs_need_grad, shared_group, logger=self.logger,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = data, label
        self._exec_group = group
        self._total_exec_bytes = group._total_exec_bytes
        self.binded = True
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params, self._aux_params = shared_module._arg_params, \
                shared_module._aux_params
        elif self.params_initialized:
            group.set_params(self._arg_params, self._aux_params)
        else:
            self._arg_params = {n: nd.zeros(b[0].shape, dtype=b[0].dtype)
                                for n, b in zip(self._param_names, group.param_arrays)}
            self._aux_params = {n: nd.zeros(b[0].shape, dtype=b[0].dtype)
                                for n, b in zip(self._aux_names, group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind for new input shapes (a different batch size), sharing the parameters."""
        _require("reshape", self, "binded")
        data, label = _parse_data_desc("reshape", self._data_names, self._label_names,
                                       data_shapes, label_shapes)
        self._exec_group.reshape(data, label)
        self._data_shapes, self._label_shapes = data, label

    # ---- optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set up ``optimizer`` (a name with ``optimizer_params``, or an ``Optimizer``) and
        the kvstore. A named optimizer gets ``rescale_grad = 1 / batch_size`` unless
        ``optimizer_params`` sets it, and the module's ``param_idx2name`` and symbol (for
        ``__lr_mult__`` / ``__wd_mult__``)."""
        _require("init_optimizer", self, "binded", "params_initialized")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = self._exec_group.batch_size
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size if batch_size else 1.0
        idx2name = self._idx2name(update_on_kvstore)
        optimizer = self._make_optimizer(optimizer, optimizer_params, rescale_grad, idx2name)
        self._optimizer, self._kvstore = optimizer, kv
        self._update_on_kvstore, self._updater = update_on_kvstore, None
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
            self._init_kvstore(kv, update_on_kvstore)
        if not update_on_kvstore:
            self._updater = _opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def _idx2name(self, update_on_kvstore):
        """The optimizer's index -> name: the parameter index in the store, or
        ``index * num_device + k`` for context ``k``'s copy when the module updates."""
        names = self._exec_group.param_names
        if update_on_kvstore:
            return dict(enumerate(names))
        n = len(self._context)
        return {i * n + k: name for i, name in enumerate(names) for k in range(n)}

    def _make_optimizer(self, optimizer, optimizer_params, rescale_grad, idx2name):
        if isinstance(optimizer, str):
            params = dict(optimizer_params or {})
            params.setdefault("rescale_grad", rescale_grad)
            return _opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name, **params)
        if not isinstance(optimizer, _opt.Optimizer):
            raise MXNetError(f"init_optimizer: optimizer must be a name or an "
                             f"mx.optimizer.Optimizer, got {type(optimizer).__name__}")
        if optimizer.rescale_grad != rescale_grad:
            warnings.warn(f"Optimizer created manually outside Module but rescale_grad is "
                          f"not normalized to 1.0/batch_size/num_workers "
                          f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this intended?",
                          stacklevel=3)
        if not optimizer.idx2name:
            optimizer.idx2name = idx2name.copy()
        return optimizer

    def _init_kvstore(self, kv, update_on_kvstore):
        """Each parameter's key holds its initial value; with updates in the store every
        context pulls it."""
        for name, block in zip(self._param_names, self._exec_group.param_arrays):
            kv.init(name, self._arg_params[name])
            if update_on_kvstore:
                kv.pull(name, block)

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, kvstore and updater (the buckets of a
        ``BucketingModule`` share one)."""
        _require("borrow_optimizer (shared_module)", shared_module, "optimizer_initialized")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname):
        """Write the optimizer states to ``fname`` (mxlite's data-only format, not MXNet's
        pickle)."""
        _require("save_optimizer_states", self, "optimizer_initialized")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, "wb") as f:
                f.write(self._updater.get_states())

    def load_optimizer_states(self, fname, allow_pickle=False):
        """Read the optimizer states from ``fname``. MXNet's files are pickles and load
        only with ``allow_pickle=True`` (unpickling runs the code a file names)."""
        _require("load_optimizer_states", self, "optimizer_initialized")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname, allow_pickle=allow_pickle)
        else:
            data = states_io.read_file(fname, "load_optimizer_states")
            self._updater._restore(data, "load_optimizer_states", repr(fname), allow_pickle)

    # ---- computation -----------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Forward ``data_batch`` (anything with ``data`` and optionally ``label``); a
        batch whose data shapes differ from the bound ones reshapes the executors first."""
        _require("forward", self, "binded", "params_initialized")
        data = getattr(data_batch, "data", None)
        if data is None:
            raise MXNetError(f"forward: data_batch must have a 'data' list of arrays, got "
                             f"{type(data_batch).__name__}")
        data = _as_list(data)
        if len(data) != len(self._data_shapes):
            raise MXNetError(f"forward: the batch has {len(data)} data arrays, the module "
                             f"takes {len(self._data_shapes)} ({self._data_names})")
        new_shapes = tuple(tuple(d.shape) for d in data)
        old_shapes = tuple(d.shape for d in self._data_shapes)
        if new_shapes != old_shapes:
            try:
                self.reshape(*self._shapes_of(data_batch, data))
            except MXNetError as e:
                raise MXNetError(f"forward: the batch's data shapes {list(new_shapes)} do not "
                                 f"fit the module bound for {list(old_shapes)}: {e}") from e
        self._exec_group.forward(data_batch, is_train)

    def _shapes_of(self, batch, data):
        """The ``(data_shapes, label_shapes)`` a batch of new shapes binds to."""
        provided = getattr(batch, "provide_data", None)
        if provided:
            new_data = provided
        else:
            new_data = [DataDesc(d.name, tuple(x.shape), d.dtype, d.layout)
                        for d, x in zip(self._data_shapes, data)]
        provided = getattr(batch, "provide_label", None)
        label = getattr(batch, "label", None)
        if provided:
            new_label = provided
        elif label and self._label_shapes:
            new_label = [DataDesc(d.name, tuple(x.shape), d.dtype, d.layout)
                         for d, x in zip(self._label_shapes, label)]
        elif self._label_shapes:     # no label in the batch: labels follow the batch size
            new_label = [self._label_like(d, new_data) for d in self._label_shapes]
        else:
            new_label = None
        return new_data, new_label

    def _label_like(self, desc, new_data):
        """``desc`` with its batch axis set to the new data's batch size."""
        old_axis = DataDesc.get_batch_axis(self._data_shapes[0].layout)
        new_axis = DataDesc.get_batch_axis(new_data[0].layout)
        axis = DataDesc.get_batch_axis(desc.layout)
        if min(old_axis, new_axis, axis) < 0:
            return desc
        shape = list(desc.shape)
        shape[axis] = new_data[0].shape[new_axis]
        return DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout)

    def backward(self, out_grads=None):
        """Backward from ``out_grads`` (needed unless the outputs are loss layers)."""
        _require("backward", self, "binded", "params_initialized")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer with the last gradients: summed over the contexts through
        the kvstore, the update made in the store or by the module on every context."""
        _require("update", self, "binded", "params_initialized", "optimizer_initialized")
        self._params_dirty = True
        group = self._exec_group
        pairs = [(i, name, ws, gs) for i, (name, ws, gs) in
                 enumerate(zip(self._param_names, group.param_arrays, group.grad_arrays))
                 if gs[0] is not None]
        kv = self._kvstore
        if self._update_on_kvstore:
            for _, name, ws, gs in pairs:
                kv.push(name, gs)
                kv.pull(name, ws)
            return
        n = len(self._context)
        # one updater call per context: an aggregated update runs its weights as one
        # multi-tensor op, whose arrays must share a device
        per_context = [([], [], []) for _ in range(n)]
        for i, name, ws, gs in pairs:
            if kv is not None:       # the sum of the contexts' gradients, in each copy
                kv.push(name, gs)
                kv.pull(name, gs)
            for k, (w, g) in enumerate(zip(ws, gs)):
                indices, grads, weights = per_context[k]
                indices.append(i * n + k)
                grads.append(g)
                weights.append(w)
        for indices, grads, weights in per_context:
            if indices:
                self._updater(indices, grads, weights)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward: merged over the contexts, or a list per output
        of the per-context arrays."""
        _require("get_outputs", self, "binded", "params_initialized")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The data inputs' gradients (bind with ``inputs_need_grad=True``)."""
        _require("get_input_grads", self, "binded", "params_initialized", "inputs_need_grad")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The state inputs' values."""
        _require("get_states", self, "binded", "params_initialized")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the state inputs to ``states`` (per state, per context) or ``value``."""
        _require("set_states", self, "binded", "params_initialized")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the last outputs and ``labels``."""
        _require("update_metric", self, "binded")
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every executor."""
        _require("install_monitor", self, "binded")
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare for dense parameters (MXNet pulls sparse rows here)."""
        _require("prepare", self, "binded")
        super().prepare(data_batch, sparse_row_id_fn)
