"""Parameters of Gluon blocks: ``Parameter``, ``Constant`` and ``ParameterDict`` (MXNet 1.x
``mx.gluon.parameter``).

A ``Parameter`` holds one array per context (and a gradient buffer per context, marked
for autograd with its ``grad_req``). A shape with unknown dimensions (``0``, MXNet's legacy
marker) defers initialization: ``initialize`` records the initializer and the contexts, and
the block that owns the parameter finishes it at its first forward, once shape inference
knows the shape (``in_units=0`` in ``Dense``).
"""
import re
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer
from .. import ndarray as nd
from ..base import MXNetError
from ..context import Context, cpu, current_context
from ..device import namespace_for
from ..numpy._front import as_np as _as_np
from ..ops import onednn
from ..util import is_np_array, is_np_shape

__all__ = ["DeferredInitializationError", "StorageTypeError", "Parameter", "Constant",
           "ParameterDict"]

_GRAD_REQS = ("write", "add", "null")
_STYPES = ("default", "row_sparse", "csr")


class DeferredInitializationError(MXNetError):
    """A parameter's data was asked for before its deferred initialization finished (its
    shape is still unknown)."""


class StorageTypeError(MXNetError, RuntimeError):
    """An access its storage type does not allow: ``data()`` of a row_sparse parameter,
    ``row_sparse_data()`` of a dense one, a row_sparse parameter without its Trainer or with
    a second one (a ``RuntimeError`` too, as MXNet raised)."""


def _shape_known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _contexts(ctx):
    """``ctx`` (None, a Context or a list of them) as a list of Contexts."""
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    ctx = list(ctx)
    if not ctx or not all(isinstance(c, Context) for c in ctx):
        raise MXNetError(f"Parameter: ctx must be a Context or a non-empty list of Contexts, "
                         f"got {ctx!r}")
    return ctx


class Parameter:
    """A weight of a Block: its data and gradient on one or more contexts.

    Parameters
    ----------
    name : str
        The full name (``dense0_weight``).
    grad_req : {'write', 'add', 'null'}
        How ``backward`` stores the gradient ('null': no gradient).
    shape : int or tuple of int
        The shape; a 0 marks a dimension to infer at the first forward (deferred
        initialization, where ``allow_deferred_init``).
    dtype : str or numpy dtype, default float32
    lr_mult, wd_mult : float
        Multipliers of the optimizer's learning rate and weight decay for this parameter.
    init : Initializer or str
        Overrides the default initializer given to ``initialize``.
    allow_deferred_init : bool
        Whether ``initialize`` may wait for the shape.
    differentiable : bool
        False makes ``grad_req`` 'null'.
    stype : {'default', 'row_sparse'}
        'row_sparse': the weight lives in the kvstore of its ``Trainer`` (created with it)
        and each context holds only the rows pulled for a batch (``row_sparse_data``):
        a large embedding table's step touches the rows the batch uses.
    grad_stype : {'default', 'row_sparse', 'csr'}
        The storage type of the gradient ('row_sparse': the rows backward wrote).

    >>> w = mx.gluon.Parameter('w', shape=(2, 3), init=mx.init.One())
    >>> w.initialize()
    >>> w.data().asnumpy().tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    _stype = _grad_stype = "default"

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        for what, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value not in _STYPES:
                raise MXNetError(f"Parameter {name!r}: unknown {what} {value!r} (one of "
                                 f"{_STYPES})")
        if stype == "csr":
            raise MXNetError(f"Parameter {name!r}: stype='csr': a weight is dense or "
                             "row_sparse (csr is for data)")
        self._stype, self._grad_stype = stype, grad_stype
        self._var = None
        self._data = None           # list of NDArrays, one per context
        self._grad = None
        self._ctx_list = None
        self._trainer = None
        self._deferred_init = ()    # (init, ctx list, default_init, data or None)
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        self._seen = None           # gradient versions at the last Trainer update
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init

    def __repr__(self):
        dtype = np.dtype(self.dtype).name if self.dtype is not None else None
        return f"Parameter {self.name} (shape={self.shape}, dtype={dtype})"

    # ---- attributes ------------------------------------------------------------------------
    @property
    def grad_req(self):
        """'write', 'add' or 'null'. Changing it re-marks the data for autograd."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise MXNetError(f"Parameter {self.name!r}: grad_req must be one of {_GRAD_REQS}, "
                             f"got {req!r}")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The data type."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self._dtype = dtype

    @property
    def shape(self):
        """The shape; 0 marks a dimension not known yet."""
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(new_shape) if new_shape is not None else None
        if self._shape is None or new_shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
                j in (0, i) for i, j in zip(new_shape, self._shape)):
            raise MXNetError(f"Parameter {self.name!r}: expected shape {new_shape} is "
                             f"incompatible with its shape {self._shape}")
        self._shape = new_shape

    def _set_trainer(self, trainer):
        if self._trainer is not None and trainer is not None and self._trainer is not trainer \
                and self._stype != "default":
            # its weight lives in the first Trainer's kvstore
            raise StorageTypeError(
                f"Parameter {self.name!r} (stype {self._stype!r}) already has a Trainer: a "
                "row_sparse weight lives in its Trainer's kvstore, so one Trainer only "
                "(call param._set_trainer(None) first to move it)")
        self._trainer = trainer     # a dense parameter may move to a new Trainer

    # ---- data access -----------------------------------------------------------------------
    def _check_initialized(self, what):
        if self._data is not None:
            return
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialized yet because its shape "
                f"{self.shape} is not known: run a forward pass first (or give in_units, "
                f"in_channels, ... to the layer) before calling {what}")
        raise MXNetError(
            f"Parameter {self.name!r} has not been initialized; call .initialize() on it or "
            f"on the block that owns it before calling {what}")

    def _index(self, ctx, what):
        self._check_initialized(what)
        if ctx is None:         # the one context, else the current one (MXNet's rule)
            if len(self._ctx_list) == 1:
                return 0
            ctx = current_context()
        for i, c in enumerate(self._ctx_list):
            if c == ctx:
                return i
        raise MXNetError(f"Parameter {self.name!r} was not initialized on context {ctx}; it "
                         f"was only initialized on {self._ctx_list}")

    def _dense_only(self, what):
        if self._stype != "default":
            raise StorageTypeError(
                f"Parameter {self.name!r}: {what} is for dense parameters, its storage type "
                f"is {self._stype!r}: use row_sparse_data(row_id) / "
                "list_row_sparse_data(row_id)")

    def data(self, ctx=None):
        """The array on ``ctx`` (None: the only context, or the current one)."""
        self._dense_only("data()")
        array = self._data[self._index(ctx, "data()")]
        if onednn.keeping_weights():
            onednn.track(array)         # convolutions may keep it in oneDNN's layout
        return array

    def list_data(self):
        """The arrays on every context, in the order of ``list_ctx``."""
        self._dense_only("list_data()")
        self._check_initialized("list_data()")
        return list(self._data)

    def row_sparse_data(self, row_id):
        """The rows ``row_id`` (an NDArray of row numbers) of a row_sparse parameter, pulled
        from its Trainer's kvstore into the array on ``row_id``'s context and returned
        (a RowSparseNDArray of the full shape storing those rows)."""
        i = self._row_sparse_index(row_id, "row_sparse_data()")
        return self._pull_rows([self._data[i]], row_id)[0]

    def list_row_sparse_data(self, row_id):
        """``row_sparse_data(row_id)`` on every context (a list, in ``list_ctx`` order)."""
        self._row_sparse_index(row_id, "list_row_sparse_data()", any_context=True)
        return self._pull_rows(list(self._data), row_id)

    def _row_sparse_index(self, row_id, what, any_context=False):
        from ..ndarray import NDArray
        if self._stype != "row_sparse":
            raise StorageTypeError(f"Parameter {self.name!r}: {what} is for row_sparse "
                                   f"parameters, its storage type is {self._stype!r}: use "
                                   "data() / list_data()")
        if not isinstance(row_id, NDArray):
            raise MXNetError(f"Parameter {self.name!r}: {what}: row_id must be an NDArray, "
                             f"got {type(row_id).__name__}")
        if self._trainer is None:
            raise StorageTypeError(
                f"Parameter {self.name!r}: {what} pulls rows from the kvstore of the "
                "parameter's Trainer, and no Trainer was created with it")
        return None if any_context else self._index(row_id.context, what)

    def _pull_rows(self, arrays, row_id):
        self._trainer._row_sparse_pull(self, arrays, row_id)
        return arrays

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        i = self._index(ctx, "grad()")
        if self._grad is None:
            raise MXNetError(f"Parameter {self.name!r}: no gradient array because "
                             "grad_req='null'")
        return self._grad[i]

    def list_grad(self):
        """The gradient buffers on every context."""
        self._check_initialized("list_grad()")
        if self._grad is None:
            raise MXNetError(f"Parameter {self.name!r}: no gradient array because "
                             "grad_req='null'")
        return list(self._grad)

    def list_ctx(self):
        """The contexts the parameter lives on (or will, once deferred init finishes)."""
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise MXNetError(f"Parameter {self.name!r} has not been initialized")
        return list(self._ctx_list)

    # ---- initialization --------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Make the data (and gradient) arrays on ``ctx`` (a Context or a list; the current
        context by default). ``init`` overrides ``self.init``, which overrides
        ``default_init`` (``Uniform()``). With an unknown shape the initialization waits
        for the first forward (``allow_deferred_init``), else raises MXNetError. An
        initialized parameter is left alone (with a warning) unless ``force_reinit``."""
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        self._var = None
        ctx = _contexts(ctx)
        if default_init is None:
            default_init = initializer.Uniform()
        if init is None:
            init = default_init if self.init is None else self.init
        if not _shape_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise MXNetError(f"Cannot initialize Parameter {self.name!r} because it has "
                             f"invalid shape: {self.shape}")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Initialize now that the shape is known (called by the owning block)."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        if not _shape_known(self.shape):
            raise MXNetError(f"Cannot initialize Parameter {self.name!r} because it has "
                             f"invalid shape: {self.shape}. Please specify in_units, "
                             "in_channels, etc for `Block`s.")
        self._deferred_init = ()
        with autograd.pause():
            owned = data is None
            if owned:
                data = nd.zeros(self.shape, dtype=self.dtype, ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            if data.stype != self._stype:
                data = data.tostype(self._stype)
            self._init_impl(data, ctx, owned)

    def _init_impl(self, data, ctx_list, owned=False):
        """Hold ``data`` on every context of ``ctx_list``: copies, except that an array made
        for this parameter alone (``owned``) is kept as it is on its own single context (a
        copy would hold the weights twice while the model is built)."""
        self._ctx_list = list(ctx_list)
        with autograd.pause():
            if owned and len(ctx_list) == 1 and data.context == ctx_list[0]:
                self._data = [data]
            else:
                self._data = [data.copyto(c) if data.context != c or len(ctx_list) > 1
                              else data.copy() for c in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if is_np_array():           # made under npx.set_np(): np arrays (MXNet's rule)
            self._data = [_as_np(d) for d in self._data]
        if self.grad_req == "null":
            self._grad = None
            return
        self._data = [d.detach() for d in self._data]
        grad_stype = self._grad_stype
        if grad_stype != "default":       # nothing stored until a backward
            self._grad = [nd.sparse.zeros(grad_stype, d.shape, ctx=d.context,
                                          dtype=d.dtype) for d in self._data]
        else:
            # pages mapped on first write: an inference-only model's gradients take no memory
            self._grad = [nd.NDArray._wrap(
                namespace_for(d.context).untouched_zeros(d.shape, d.dtype), d.context)
                for d in self._data]
        if is_np_array():
            self._grad = [_as_np(g) for g in self._grad]
        autograd.mark_variables(self._data, self._grad, self.grad_req)
        self._seen = [g._version[0] for g in self._grad]

    def _fresh_grads(self):
        """Per context, whether backward wrote the gradient since the last Trainer update
        (MXNet's ``_fresh_grad``; read from the buffers' version counters)."""
        return [g._version[0] != v for g, v in zip(self._grad, self._seen)]

    def _mark_stale(self):
        self._seen = [g._version[0] for g in self._grad]

    def _reduce(self):
        """The data on the CPU: what ``save_parameters``, ``export``, ``ParameterDict.save``
        and ``reset_ctx`` keep. On several contexts, the mean of the copies, as MXNet, but
        written ``x0 + sum(x_i - x0) / n``: copies that agree (a Trainer keeps them in step)
        give ``x0`` bit for bit. MXNet's ``sum(x_i) / n`` changes about one float32 weight in
        seven by an ulp on three devices, and overflows float16 weights above 32752."""
        if self._stype != "default":
            return self._all_rows()
        with autograd.pause():
            arrays = [d.as_in_context(cpu()) for d in self.list_data()]
            first = arrays[0]
            if len(arrays) == 1:
                return first.copy() if first is self._data[0] else first
            spread = nd.add_n(*[a - first for a in arrays[1:]])
            return first + spread / len(arrays)

    def _all_rows(self):
        """A row_sparse parameter's whole weight on the CPU: pulled from its Trainer's
        kvstore (where updates go), else the array of its first context."""
        self._check_initialized("save")
        with autograd.pause():
            if self._trainer is None:
                return self._data[0].copyto(cpu())
            out = nd.sparse.zeros("row_sparse", self.shape, ctx=cpu(), dtype=self.dtype)
            self._trainer._row_sparse_pull(self, [out],
                                           nd.arange(self.shape[0], dtype="int64"))
            return out

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """(Re)initialize from loaded ``data`` (``load_parameters``)."""
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise MXNetError(f"Parameter {self.name!r}: dtype_source must be 'current' or "
                             f"'saved', got {dtype_source!r}")
        if self.shape:
            if len(self.shape) != len(data.shape) or not all(
                    s in (0, d) for s, d in zip(self.shape, data.shape)):
                raise MXNetError(f"Failed loading Parameter {self.name!r} from saved params: "
                                 f"shape incompatible expected {self.shape} vs saved "
                                 f"{data.shape}")
            self.shape = tuple(d for d in data.shape)
        else:
            self.shape = data.shape
        if self.dtype is not None and np.dtype(self.dtype) != data.dtype:
            if not cast_dtype:
                raise MXNetError(
                    f"Failed loading Parameter {self.name!r} from saved params: dtype "
                    f"incompatible expected {np.dtype(self.dtype).name} vs saved "
                    f"{np.dtype(data.dtype).name}. Set cast_dtype=True to cast the dtype of "
                    "saved params.")
            if dtype_source == "current":
                data = data.astype(self.dtype)
            else:
                self.dtype = data.dtype
        if data.stype != self._stype:           # a dense file into a sparse parameter, ...
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                ctx = self._deferred_init[1] if ctx is None else ctx
            elif ctx is None:
                ctx = [cpu()]
            self._deferred_init = ()
            self._var = None
            self._init_impl(data, list(ctx))
        else:
            if ctx is not None and set(ctx) != set(self._ctx_list):
                raise MXNetError(f"Failed to load Parameter {self.name!r} on {ctx} because "
                                 f"it was previously initialized on {self._ctx_list}")
            if data.dtype != self._data[0].dtype:     # dtype_source='saved' changed it
                self._var = None
                self._init_impl(data, self._ctx_list)
            else:
                self.set_data(data)
        self._deferred_init = ()

    def reset_ctx(self, ctx):
        """Move the parameter to ``ctx`` (a Context or a list of them)."""
        ctx = _contexts(ctx)
        if self._data:
            data = self._reduce()
            self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise MXNetError(f"Cannot reset context for Parameter {self.name!r} because it "
                             "has not been initialized")

    def set_data(self, data):
        """Write ``data`` into the parameter on every context (in place: blocks and
        Trainers that hold the arrays see the new value)."""
        if not isinstance(data, nd.NDArray):
            data = nd.array(data, dtype=self.dtype)
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise MXNetError(f"Parameter {self.name!r} has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        if data.shape != self._data[0].shape:
            raise MXNetError(f"Parameter {self.name!r}: set_data got shape {data.shape}, the "
                             f"parameter has {self._data[0].shape}")
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore:
            trainer._reset_kvstore()
        with autograd.pause():
            for arr in self._data:
                value = data.as_in_context(arr.context).astype(arr.dtype, copy=False)
                if arr.stype != "default":
                    value.tostype(arr.stype).copyto(arr)
                else:
                    arr[:] = value

    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing for grad_req 'null' or before
        initialization)."""
        if self._grad is None:
            return
        with autograd.pause():
            for g in self._grad:
                if g.stype != "default":
                    nd.sparse.zeros(g.stype, g.shape, ctx=g.context, dtype=g.dtype).copyto(g)
                else:
                    g[:] = 0

    def var(self):
        """The symbol variable of this parameter (shape, dtype, multipliers and
        initializer as attributes), used when a block is traced with ``F = mx.sym``."""
        if self._var is None:
            from .. import symbol
            init = self.init
            if init is not None and not isinstance(init, str):
                init = init.dumps()
            shape = self.shape
            if shape is not None and is_np_shape():   # NumPy shapes: -1 marks unknown
                shape = tuple(-1 if d == 0 else d for d in shape)
            self._var = symbol.var(self.name, shape=shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=init,
                                   stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Cast the data and gradient to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
        if self._grad is not None:
            self._init_grad()


class Constant(Parameter):
    """A parameter that training never changes (grad_req 'null'; ``set_data`` still
    writes it).

    >>> c = mx.gluon.Constant('c', [[1, 2], [3, 4]])
    >>> c.initialize()
    >>> c.data().asnumpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """

    def __init__(self, name, value):
        if not isinstance(value, nd.NDArray):
            value = nd.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=initializer.Constant(value))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={np.dtype(self.dtype).name})"

    @property
    def grad_req(self):
        """Always 'null'."""
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.', stacklevel=2)
        self._grad_req = "null"


class ParameterDict:
    """An ordered dictionary of Parameters by full name; ``get(name)`` makes
    ``prefix + name``, or reuses it from ``shared`` (parameter sharing between blocks).

    >>> params = mx.gluon.ParameterDict('net_')
    >>> w = params.get('weight', shape=(2, 2))
    >>> list(params.keys())
    ['net_weight']
    """

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        body = "\n".join(f"  {v}" for v in self.values())
        name = self._prefix + " " if self._prefix else ""
        return f"{name}(\n{body}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        """(name, Parameter) pairs in creation order."""
        return self._params.items()

    def keys(self):
        """The names, in creation order."""
        return self._params.keys()

    def values(self):
        """The Parameters, in creation order."""
        return self._params.values()

    @property
    def prefix(self):
        """The prefix ``get`` puts before names."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter ``prefix + name``: found here, or in ``shared``, or made with
        ``kwargs``. An existing parameter's attributes must agree with ``kwargs`` (a 0 in a
        shape matches any size)."""
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape" and v is not None and len(v) == len(existing):
                if all(a == b or a == 0 or b == 0 for a, b in zip(v, existing)):
                    param._shape = tuple(a if a != 0 else b for a, b in zip(v, existing))
                    continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if v is not None and v != existing:
                raise MXNetError(f"Cannot retrieve Parameter {name!r} because desired "
                                 f"attribute does not match with stored for attribute "
                                 f"{k!r}: desired {v!r} vs stored {existing!r}")
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, made with ``value`` when new."""
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise MXNetError(f"No constant named {name!r}. Please specify value if you "
                                 "want to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise MXNetError(f"Parameter {name!r} already exists but it is not a constant")
            value = value.asnumpy() if isinstance(value, nd.NDArray) else np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise MXNetError(f"Constant {name!r} already exists but its value doesn't "
                                 "match the new value")
        return param

    def update(self, other):
        """Add the parameters of ``other``; a name held by a different Parameter raises."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise MXNetError(f"Cannot update self with other because they have different "
                                 f"Parameters with the same name {k!r}")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (``init``, default ``Uniform()``, is the default
        initializer; a parameter's own ``init`` takes precedence)."""
        if init is None:
            init = initializer.Uniform()
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """Every context some parameter lives on."""
        out = []
        for p in self.values():
            for c in p.list_ctx():
                if c not in out:
                    out.append(c)
        return out

    def setattr(self, name, value):
        """Set attribute ``name`` of every parameter (``setattr('grad_req', 'null')``)."""
        for p in self.values():
            setattr(p, name, value)

    def select(self, pattern):
        """A ParameterDict of the parameters whose names match the regular expression."""
        out = ParameterDict(self._prefix)
        regex = re.compile(pattern)
        out.update(OrderedDict((k, v) for k, v in self.items() if regex.match(k)))
        return out

    def save(self, filename, strip_prefix=""):
        """Save the data to ``filename`` (``mx.nd.save`` of {name: array}), names with
        ``strip_prefix`` removed."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise MXNetError(f"Prefix {strip_prefix!r} is to be stripped before saving, "
                                 f"but Parameter's name {param.name!r} does not start with it")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        nd.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load the data saved by ``save`` (or an ``arg:``/``aux:`` checkpoint)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise MXNetError(f"restore_prefix is {restore_prefix!r} but Parameter "
                                     f"name {name!r} does not start with it")
        self.load_dict(nd.load(filename), ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load from a dict {name: NDArray} (``arg:``/``aux:`` prefixes are dropped)."""
        if not isinstance(param_dict, dict):
            raise MXNetError(f"load: {filename or 'param_dict'} holds a list of arrays, not a "
                             "dict of named parameters")
        arg_dict = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v
                    for k, v in param_dict.items()}
        where = f"file {filename!r}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise MXNetError(f"Parameter {name[len(restore_prefix):]!r} is missing in "
                                     f"{where}, which contains parameters: "
                                     f"{sorted(arg_dict)[:10]}. Please make sure source and "
                                     "target networks have the same prefix.")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise MXNetError(f"Parameter {name[len(restore_prefix):]!r} loaded from "
                                     f"{where} is not present in ParameterDict, choices are: "
                                     f"{list(self._params)[:10]}. Set ignore_extra to True to "
                                     "ignore.")
                continue
            self._params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)
