"""``NDArray``: a C-contiguous buffer on a device, and the ``nd`` invoke strategy.

Storage is a NumPy array on CPU. Every computation goes through a registered operator via
``invoke``; the arithmetic dunders are thin routes to ``broadcast_*`` and ``_*_scalar`` ops.
"""
import threading

import numpy as np

from .._core import dispatch as _dispatch
from ..base import (MXNetError, bfloat16_source, dtype_kind, dtype_range, is_bfloat16,
                    normalize_dtype, op_error)
from ..context import Context, current_context
from ..device import namespace_for
from ..ops import onednn as _onednn
from ..ops.indexing import canonical_key, has_repeats, is_basic, region_shape, write_region
from ..ops.registry import REGISTRY, Attrs
from ..ops.routing import ARITHMETIC as _ARITHMETIC, BINARY_FUNCTIONS as _BINARY_FUNCTIONS
from ..ops.routing import binary_function
from ..ops.routing import COMPARISONS as _COMPARISONS
from ..ops.shape_utils import check_alloc, infer_reshape, normalize_axes, size_of

__all__ = ["NDArray", "invoke", "array", "empty", "waitall", "concatenate", "moveaxis"]

# MXNet's ndarray module named the builtin so, its own ``slice`` being the operator; code
# written for MXNet imports it from here
py_slice = slice

_GETITEM, _SETITEM, _RESHAPE, _COPY, _CAST, _COPYTO = (
    REGISTRY[n] for n in ("_getitem", "_setitem", "reshape", "_copy", "cast", "_copyto"))


class _TapeState(threading.local):
    """Per-thread autograd switches (MXNet records and trains per thread)."""

    recording = False
    training = False


tape_state = _TapeState()
# The mxlite.autograd module (parents/attach/begin_write/end_write, backward), set when it
# is imported (it imports this module, so it cannot be imported here).
_tape = None


class NDArray(_dispatch.NDArrayBase):
    """An n-dimensional array on a device (``mx.nd.array([1, 2])``), MXNet 1.x semantics.

    Basic indexing that selects one contiguous block (``x[1:3]``, ``x[2]``, ``x[0, 1:]``)
    is a view that writes through, as in MXNet 1.9.1; other indexing copies. Under
    ``autograd.record()`` every indexing and every in-place write is recorded.
    """

    # The fields live in the compiled base (mxlite/_core/dispatch.pyx): _data, _ctx, _grad,
    # _grad_req, _node (the tape entry); _version, a one-element list shared by every array
    # aliasing this buffer, bumped by each in-place write; _node_version, its value when
    # _node was set; _view, (base, op, attrs) for a view made by indexing or reshape (op
    # None for a detach()ed alias).
    __slots__ = ()
    __array_priority__ = 1000.0

    # ---- construction -------------------------------------------------------------------
    _wrap = staticmethod(_dispatch.wrap)     # NDArray._wrap(data, ctx=cpu(0))

    def _alias(self, data, op, attrs):
        """A view of this array's buffer made by ``op`` (None: a detached alias)."""
        view = NDArray._wrap(data, self._ctx)
        view._version = self._version
        view._node_version = self._version[0]
        view._view = (self, op, attrs)
        if op is not None and tape_state.recording:
            _tape.attach(op, attrs, _tape.parents([self]), [self], view)
        return view

    def __init__(self, *args, **kwargs):
        raise TypeError("NDArray: create arrays with mx.nd.array, mx.nd.zeros, ...")

    # ---- properties ---------------------------------------------------------------------
    shape = property(lambda self: self._data.shape, doc="Tuple of dimensions.")
    dtype = property(lambda self: self._data.dtype.type, doc="NumPy scalar type, e.g. numpy.float32.")
    size = property(lambda self: self._data.size, doc="Number of elements.")
    ndim = property(lambda self: self._data.ndim, doc="Number of dimensions.")
    context = property(lambda self: self._ctx, doc="The device Context.")
    ctx = context
    stype = property(lambda self: "default", doc="Storage type: 'default' (dense); see mx.nd.sparse.")
    writable = property(lambda self: True, doc="Whether the array may be written (always True).")
    T = property(lambda self: _call(REGISTRY["transpose"], self), doc="Transposed copy (reversed axes).")

    @property
    def version(self):
        """How many in-place writes this array's buffer has seen (shared with its views)."""
        return self._version[0]

    @property
    def grad(self):
        """The gradient buffer attached by ``attach_grad`` (None if none)."""
        return self._grad

    def __repr__(self):
        """MXNet's format: the values, then ``<NDArray 2x3 @cpu(0)>``."""
        return f"\n{self._data}\n<NDArray {'x'.join(map(str, self.shape))} @{self._ctx}>"

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        """An empty array is False (MXNet 1.x), one element its value's truth; more elements
        are ambiguous (an MXNetError)."""
        if self.size == 0:
            return False
        if self.size != 1:
            raise MXNetError(f"the truth value of an NDArray with {self.size} elements is ambiguous")
        return bool(self.asscalar())

    def __hash__(self):
        return id(self)

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self.size != 1:
            raise TypeError("only integer scalar NDArrays can be used as an index")
        return int(self.asscalar())

    # ---- conversion ---------------------------------------------------------------------
    def asnumpy(self):
        """A NumPy copy of the data (on a GPU: one device-to-host copy, after the kernels
        that write it)."""
        return namespace_for(self._ctx).asnumpy(self._data)

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 passes copy=True from np.array(x): the caller must not get our buffer
        host = namespace_for(self._ctx).to_host(self._data)
        data = host if dtype is None else host.astype(dtype, copy=False)
        if data is self._data and copy:
            return data.copy()
        if data is not host and copy is False:
            raise ValueError(f"NDArray.__array__: a {self._data.dtype} array cannot be viewed as "
                             f"{np.dtype(dtype)} without a copy")
        if data is self._data:
            _onednn.untrack(data)       # writes through it move no version
        return data

    def asscalar(self):
        """The single element as a NumPy scalar; MXNetError if the array has another size."""
        if self.size != 1:
            raise MXNetError(f"asscalar: the array has shape {self.shape}, expected one element")
        return namespace_for(self._ctx).to_host(self._data.reshape(-1))[0]

    def astype(self, dtype, copy=True):
        """A copy cast to ``dtype`` (no copy when ``copy=False`` and the dtype already matches)."""
        dt = normalize_dtype(dtype, "astype")
        if not copy and dt == self._data.dtype:
            return self
        return _call(REGISTRY["cast"], self, dtype=dt)

    def copy(self):
        """A deep copy on the same device (the ``_copy`` operator: recorded, differentiable)."""
        return _call(_COPY, self)

    def tostype(self, stype):
        """This array in storage type ``stype`` (a copy, as MXNet's ``cast_storage``):
        ``'default'`` (dense, recorded and differentiable), ``'csr'`` (2-D) or
        ``'row_sparse'``."""
        check_storage_type("tostype", stype)
        if stype == "default":
            return _call(_COPY, self)
        from . import cast_storage
        return cast_storage(self, stype=stype)

    def copyto(self, other):
        """Copy into NDArray ``other`` (same shape; cast to its dtype; on any device) and
        return it, or into a new array on Context ``other``. Recorded under
        ``autograd.record()``: a copy to another device is the ``_copyto`` operator, whose
        gradient is copied back to this array's device."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise op_error("copyto", f"shape mismatch: source {self.shape}, target {other.shape}")
            if other._data is None:         # into sparse storage: converted on the way
                return self.tostype(other.stype).copyto(other)
            if other._ctx != self._ctx:
                if other._data.dtype != self._data.dtype:
                    return _call(_CAST, _call(_COPYTO, self, ctx=other._ctx),
                                 dtype=other._data.dtype, out=other)
                return _call(_COPYTO, self, ctx=other._ctx, out=other)
            if other._data.dtype != self._data.dtype:
                return _call(_CAST, self, dtype=other._data.dtype, out=other)
            if namespace_for(self._ctx).may_share_memory(other._data, self._data):
                return _call(_COPY, _call(_COPY, self), out=other)
            return _call(_COPY, self, out=other)
        if isinstance(other, Context):
            if other == self._ctx:
                return _call(_COPY, self)
            return _call(_COPYTO, self, ctx=other)
        raise TypeError(f"copyto: expected an NDArray or Context, got {type(other).__name__}")

    def as_in_context(self, context):
        """This array on ``context`` (itself when already there; else a recorded copy)."""
        if not isinstance(context, Context):
            raise TypeError(f"as_in_context: expected a Context, got {type(context).__name__}")
        return self if context == self._ctx else self.copyto(context)

    def reshape(self, *shape, reverse=False, **kwargs):
        """A view with a new shape; MXNet codes 0, -1, -2, -3, -4 are understood."""
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        elif len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        new = infer_reshape("reshape", self.shape, tuple(shape), reverse)
        return self._alias(self._data.reshape(new), _RESHAPE, _RESHAPE.parse_attrs({"shape": new}))

    def _shape_op(self, name, inplace, **params):
        """Shape operator ``name`` on this array: its result (a copy), or with ``inplace`` a
        view of the same buffer with the op's output shape (MXNet's ``inplace=True``)."""
        op = REGISTRY[name]
        if not inplace:
            return _call(op, self, **params)
        (new,) = op.infer_shape([self.shape], op.parse_attrs(params))
        return self._alias(self._data.reshape(new), _RESHAPE, _RESHAPE.parse_attrs({"shape": new}))

    def flatten(self, inplace=False):
        """Shape ``(d0, d1 * ... * dk)``: a copy, or a view sharing the data with ``inplace``."""
        return self._shape_op("flatten", inplace)

    def expand_dims(self, axis, inplace=False):
        """A new axis of length 1 at ``axis``: a copy, or a view with ``inplace``."""
        return self._shape_op("expand_dims", inplace, axis=axis)

    def squeeze(self, axis=None, inplace=False):
        """Without the length-1 axes ``axis`` (all of them by default): a copy, or a view
        with ``inplace``."""
        return self._shape_op("squeeze", inplace, axis=axis)

    # ---- autograd ------------------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """Allocate ``.grad`` (zeros, in storage ``stype``: by default this array's, as
        MXNet) and mark this array as a variable for autograd. A gradient of another
        storage type is converted into it (row_sparse keeps only the rows a gradient has)."""
        check_storage_type("attach_grad", stype)
        stype = stype or self.stype
        if stype == "default":
            zeros = namespace_for(self._ctx).zeros(tuple(self.shape), np.dtype(self.dtype))
            grad = NDArray._wrap(zeros, self._ctx)
        else:
            from .sparse import zeros as sparse_zeros
            grad = sparse_zeros(stype, self.shape, ctx=self._ctx, dtype=self.dtype)
        _tape.mark_variables([self], [grad], grad_req)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Back-propagate from this array into the ``.grad`` of the variables it depends on;
        ``out_grad`` (the head gradient, default ones) must be on this array's device."""
        if isinstance(out_grad, NDArray) and out_grad._ctx != self._ctx:
            raise MXNetError(f"backward: out_grad is on {out_grad._ctx}, the array on "
                             f"{self._ctx}; copy it with out_grad.as_in_context({self._ctx})")
        _tape.backward([self], None if out_grad is None else [out_grad], retain_graph,
                       train_mode)

    @property
    def _fresh_grad(self):
        """Whether ``.grad`` was written since this array was marked (``attach_grad``) or
        since ``_fresh_grad = False`` (MXNet's flag, which gluon's Trainer reads)."""
        return _tape.fresh_grad(self)

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        _tape.set_fresh_grad(self, value)

    def detach(self):
        """The same buffer, cut from the autograd graph (writes to either show in both)."""
        return self._alias(self._data, None, None)

    def wait_to_read(self):
        """Block until the kernels writing this array finish (on a GPU: a synchronize of
        its device's stream; CPU kernels are synchronous)."""
        namespace_for(self._ctx).synchronize()

    wait_to_write = wait_to_read

    # ---- DLPack (zero-copy exchange with NumPy, CuPy, torch, JAX) -------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack capsule of this array's buffer (no copy), for ``torch.from_dlpack``,
        ``np.from_dlpack``, ``cupy.from_dlpack``...: the array API's protocol, answered by
        the storage (NumPy on CPU, CuPy on a GPU)."""
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        if not copy:
            _onednn.untrack(self._data)     # the consumer's writes move no version
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        """``(device type, device id)`` of the buffer in DLPack's codes (1 CPU, 2 CUDA). The
        GPU emulator of the tests stores in host memory and says so (1)."""
        return self._data.__dlpack_device__()

    def to_dlpack_for_read(self):
        """A DLPack capsule of this array for reading (MXNet's API), after pending writes."""
        self.wait_to_read()
        return self.__dlpack__()

    def to_dlpack_for_write(self):
        """A DLPack capsule of this array for writing (MXNet's API): the consumer's writes
        show in this array (they are not recorded by autograd nor counted as versions)."""
        self.wait_to_write()
        return self.__dlpack__()

    # ---- indexing -----------------------------------------------------------------------
    def __getitem__(self, key):
        """``x[key]``: NumPy indexing with MXNet 1.x results. A basic key (integers, slices,
        None, Ellipsis) that selects one contiguous block (``x[1:3]``, ``x[2]``, ``x[0, 1:]``)
        gives a view that writes through, as MXNet's; others give a copy. Every integer key
        on all axes gives shape ``(1,)`` (``x[i]`` on a 1-d array is ``x[i:i+1]``).
        Recorded under ``autograd.record()`` (the ``_getitem`` operator)."""
        key = canonical_key(_index_key(key), self.shape)
        attrs = Attrs(key=key)
        if is_basic(key):
            try:
                data = self._data[key]
            except IndexError as e:
                raise IndexError(f"__getitem__: index {key!r} for shape {self.shape}: {e}") from None
            if data.flags.c_contiguous:
                return self._alias(data, _GETITEM, attrs)
        return invoke(_GETITEM, [self], attrs)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether the slices ``slc_key`` (one per axis of a C-contiguous ``shape``) select
        a C-contiguous block (MXNet's helper; NumPy's ``flags.c_contiguous`` of the result):
        every axis that keeps more than one element must have the stride a C-ordered
        result of the selected shape would have."""
        if len(slc_key) != len(shape):
            raise MXNetError(f"_basic_indexing_slice_is_contiguous: {len(slc_key)} slices for "
                             f"shape {tuple(shape)}")
        spans = [s.indices(n) for s, n in zip(slc_key, shape)]
        lengths = [len(range(*span)) for span in spans]
        if 0 in lengths:
            return True
        want, source = 1, 1         # strides in elements: of a C-ordered result, of the source
        for n, m, (_, _, step) in zip(reversed(shape), reversed(lengths), reversed(spans)):
            if m > 1 and step * source != want:
                return False
            want, source = want * m, source * n
        return True

    def __setitem__(self, key, value):
        """``x[key] = value`` in place (``value`` broadcast and cast to ``x``'s dtype; an
        integer or NaN that the dtype cannot hold is an error). Under ``autograd.record()``
        the write is recorded (``_setitem``), and arrays ``x`` is a view of see it too."""
        key = canonical_key(_index_key(key), self.shape, "__setitem__")
        region = region_shape(key, self.shape, "__setitem__")
        value = _drop_leading_ones(_value_nd(value, self._data.dtype, self._ctx), len(region))
        if value._ctx != self._ctx:      # as MXNet: the value is copied over (recorded)
            value = value.as_in_context(self._ctx)
        if tape_state.recording:
            plan = _tape.begin_write([self], [self, value])
            if plan[0][1] is not None and has_repeats(key, self.shape):
                raise op_error("__setitem__", f"index {key!r} repeats elements of shape "
                               f"{self.shape}: only one write survives, so a recorded value's "
                               "gradient is undefined")
        else:
            plan = None
        xp = namespace_for(self._ctx)
        src = value._data
        if xp.may_share_memory(src, self._data):     # x[1:] = x[:-1] reads before it writes
            src = src.copy()
        try:
            write_region(xp, self._data, key, src)
        except ValueError:
            raise op_error("__setitem__", f"cannot assign a value of shape {value.shape} to "
                           f"index {key!r} of shape {self.shape}, which selects shape "
                           f"{region}") from None
        self._version[0] += 1
        if plan is not None:
            _tape.end_write(plan, _SETITEM, Attrs(key=key), [self, value], [self])

    # ---- arithmetic (compiled routing: mxlite/_core/dispatch.pyx ``route``) ---------------
    def _binary(self, other, array_op, scalar_op):
        return _dispatch.route(self, other, REGISTRY[array_op], REGISTRY[scalar_op], 0)

    def _rbinary(self, other, array_op, rscalar_op):
        return _dispatch.route(self, other, REGISTRY[array_op], REGISTRY[rscalar_op], 1)

    def __neg__(self):
        return _call(REGISTRY["negative"], self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _call(REGISTRY["abs"], self)

    def __getstate__(self):
        return {"data": namespace_for(self._ctx).to_host(self._data),
                "ctx": (self._ctx.device_type, self._ctx.device_id)}

    def __setstate__(self, state):
        """Restore mxlite's state (``{'data', 'ctx'}``) or MXNet's (``{'handle'}``: the array's
        record in MXNet's binary format; a GPU array comes back on the CPU when no GPU is
        visible, as in MXNet)."""
        if "handle" in state:
            from .io import _load_record       # io builds on this module
            loaded = _load_record(bytes(state["handle"]), "the pickled NDArray")
            state = {"data": namespace_for(loaded._ctx).to_host(loaded._data),
                     "ctx": (loaded._ctx.device_type, loaded._ctx.device_id)}
        self._ctx = Context(*state["ctx"])
        self._data = namespace_for(self._ctx).from_host(state["data"])
        self._grad, self._grad_req, self._node = None, "null", None
        self._version, self._node_version, self._view = [0], 0, None

    # ---- finiteness checks (operators of mxlite/ops/debug.py) ---------------------------
    def isfinite(self):
        """1 where finite, else 0, in this array's dtype (``mx.nd.contrib.isfinite``)."""
        return _call(REGISTRY["_contrib_isfinite"], self)

    def isinf(self):
        """1 where +-inf, else 0, in this array's dtype (``mx.nd.contrib.isinf``)."""
        return _call(REGISTRY["_contrib_isinf"], self)

    def isnan(self):
        """1 where NaN, else 0, in this array's dtype (``mx.nd.contrib.isnan``)."""
        return _call(REGISTRY["_contrib_isnan"], self)

    def all_finite(self):
        """True when no element is infinite or NaN (one early-exit pass)."""
        return bool(_call(REGISTRY["_contrib_all_finite"], self).asscalar())

    def has_nan(self):
        """True when some element is NaN (one early-exit pass)."""
        return bool(_call(REGISTRY["_has_nan"], self).asscalar())

    def has_inf(self):
        """True when some element is +inf or -inf (one early-exit pass)."""
        return bool(_call(REGISTRY["_has_inf"], self).asscalar())


def _install_dunders():
    """``a + b``, ``2 - a``, ``a *= 3``, ``a < b``: compiled methods routed by ops/routing.py."""
    def method(array_op, scalar_op, kind):
        return _dispatch.binary_method(REGISTRY[array_op], REGISTRY[scalar_op], kind)

    for name, a, s, r in _ARITHMETIC:
        setattr(NDArray, f"__{name}__", method(a, s, 0))
        setattr(NDArray, f"__r{name}__", method(a, r, 1))
        setattr(NDArray, f"__i{name}__", method(a, s, 2))
    NDArray.__div__, NDArray.__rdiv__, NDArray.__idiv__ = (
        NDArray.__truediv__, NDArray.__rtruediv__, NDArray.__itruediv__)
    for name, a, s in _COMPARISONS:
        setattr(NDArray, f"__{name}__", method(a, s, 0))


_install_dunders()


# nd.add, nd.maximum, ...: array-or-scalar functions (ops/routing.py)
BINARY_FUNCTIONS = {name: binary_function(name, NDArray) for name in _BINARY_FUNCTIONS}


# ---- the nd invoke strategy ----------------------------------------------------------------
invoke = _dispatch.invoke      # the nd invoke strategy (compiled: mxlite/_core/dispatch.pyx)


def _allocate(op_name, shape, dtype, xp):
    """``xp.empty``, with MXNetError naming the op and the shape when memory runs out."""
    try:
        return xp.empty(shape, dtype)
    except MemoryError:
        raise op_error(op_name, f"cannot allocate an output of shape {tuple(shape)} and dtype "
                       f"{np.dtype(dtype)} ({size_of(shape) * np.dtype(dtype).itemsize} bytes): "
                       "out of memory") from None


def _saved_inputs(op, inputs, outputs, entries, xp):
    """The inputs the tape keeps for ``op``'s gradient, with a copy of any that ``out=`` is
    about to overwrite (``y *= x`` must keep the old ``y``, and its place on the tape)."""
    if "inputs" not in op.grad_needs:
        return inputs
    kept = []
    for x, entry in zip(inputs, entries):
        if any(xp.may_share_memory(x._data, o) for o in outputs):
            x = NDArray._wrap(x._data.copy(), x._ctx)
            x._node = entry
        kept.append(x)
    return kept


def _bad_input(op, inputs, x):
    i = next(k for k, y in enumerate(inputs) if y is x)
    name = op.inputs[0 if op.variadic else i] if op.inputs else "data"
    if x is None:               # the front end hands a left-out input on as None
        raise op_error(op.name, f"missing input {name!r}")
    raise TypeError(f"{op.name}: input {name!r} must be an NDArray, got {type(x).__name__}")


def _out_arrays(op, shapes, dtypes, outs, arrays, rctx):
    xp = rctx.xp
    if len(outs) != len(shapes):
        raise op_error(op.name, f"expected {len(shapes)} output array(s) in out=, got {len(outs)}")
    result = []
    for o, s, d in zip(outs, shapes, dtypes):
        if not isinstance(o, NDArray):
            raise TypeError(f"{op.name}: out= must be an NDArray, got {type(o).__name__}")
        if o.shape != tuple(s):
            raise op_error(op.name, f"out= has shape {o.shape}, the result has shape {tuple(s)}")
        if o._data.dtype != d:
            raise op_error(op.name, f"out= has dtype {o._data.dtype}, the result has dtype {np.dtype(d)}")
        if o._ctx != rctx.ctx:
            raise op_error(op.name, f"out= is on {o._ctx}, the operator runs on {rctx.ctx}; "
                           "copy with copyto/as_in_context")
        for i, a in enumerate(arrays):
            # an input of another array library (_copyto's, from another device) cannot overlap
            if not isinstance(a, xp.ndarray) or not xp.may_share_memory(o._data, a):
                continue
            if not op.in_place:
                raise op_error(op.name, "out= overlaps an input; this operator cannot run in place")
            if a.shape != o.shape or xp.data_ptr(a) != xp.data_ptr(o._data):
                # In place is safe only element-on-itself; a shifted or broadcast overlap
                # (``x[1:] += x[:-1]``, ``x += x[0]``) would read values already
                # overwritten, so that input is copied first, as NumPy does.
                arrays[i] = a.copy()
        result.append(o._data)
    return result


class _SlowPaths:
    """The rare paths of ``invoke``, in Python (handed to the compiled path)."""

    allocate = staticmethod(_allocate)
    array = staticmethod(lambda source, ctx, dtype: array(source, ctx=ctx, dtype=dtype))
    saved_inputs = staticmethod(_saved_inputs)
    bad_input = staticmethod(_bad_input)
    out_arrays = staticmethod(_out_arrays)

    @staticmethod
    def sparse_invoke(op, inputs, attrs, out):
        from ._sparse_invoke import sparse_invoke
        return sparse_invoke(op, inputs, attrs, out)


_dispatch.configure(NDArray, tape_state, Attrs, current_context, Context, _SlowPaths)
_dispatch.set_transfer_op(_COPYTO)


def _call(op, *inputs, out=None, **kwargs):
    return invoke(op, list(inputs), kwargs, out)


# ---- creation -------------------------------------------------------------------------------
def array(source_array, ctx=None, dtype=None):
    """Create an NDArray from a list, NumPy array, scalar or NDArray (a copy).

    The dtype defaults to the source's dtype for an NDArray and to float32 otherwise, NumPy
    arrays included (MXNet's rule: ``array(np.arange(3)) / 2`` is ``[0, 0.5, 1]``). A value
    the dtype cannot hold (NaN into an integer dtype, 300 into int8), complex numbers, None
    and ragged lists raise MXNetError.
    """
    if (isinstance(source_array, NDArray) and source_array._data is None) or \
            type(source_array).__module__.startswith("scipy.sparse"):
        from .sparse import array as sparse_array      # sparse in, sparse out (MXNet's)
        return sparse_array(source_array, ctx=ctx, dtype=dtype)
    ctx = ctx or current_context()
    ctx = ctx if isinstance(ctx, Context) else Context(ctx)
    if isinstance(source_array, NDArray):
        src = source_array._data
        if dtype is None or normalize_dtype(dtype, "array") == src.dtype:
            xp = namespace_for(ctx)          # device to device: one copy, no host round trip
            data = _allocate("array", src.shape, src.dtype, xp)
            xp.receive(data, src)
            return NDArray._wrap(data, ctx)
        source_array = namespace_for(source_array._ctx).to_host(src)
    dt = normalize_dtype(dtype, "array")
    data = _checked_values(source_array, dt, "array")      # always a fresh C-order copy
    return NDArray._wrap(namespace_for(ctx).from_host(data), ctx)


#: MXNet's storage-type codes (the ``__storage_type__`` attribute of symbols and files).
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}


def check_storage_type(fn, stype):
    """MXNet's ``stype=`` keyword: None, 'default', 'csr' or 'row_sparse'; anything else is
    an MXNetError naming ``fn``."""
    if stype not in (None, "default", "csr", "row_sparse"):
        raise MXNetError(f"{fn}: unknown storage type {stype!r}; expected 'default', 'csr' or "
                         "'row_sparse'")


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised NDArray of ``shape`` (float32 by default); with ``stype`` 'csr' or
    'row_sparse', a sparse array with nothing stored."""
    check_storage_type("empty", stype)
    if stype in ("csr", "row_sparse"):
        from .sparse import empty as sparse_empty
        return sparse_empty(stype, shape, ctx=ctx, dtype=dtype)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    dt = normalize_dtype(dtype, "empty")
    shape = check_alloc("empty", shape, dt, "shape")
    ctx = ctx or current_context()
    ctx = ctx if isinstance(ctx, Context) else Context(ctx)
    return NDArray._wrap(_allocate("empty", shape, dt, namespace_for(ctx)), ctx)


def waitall():
    """Wait for all pending computation: every GPU in use is synchronized (CPU kernels are
    synchronous)."""
    from ..device import synchronize_gpus
    synchronize_gpus()


def concatenate(arrays, axis=0, always_copy=True):
    """The ``arrays`` joined along ``axis`` (MXNet's legacy helper over ``concat``: recorded
    and differentiable). With ``always_copy=False`` a single array is returned as it is."""
    arrays = list(arrays)
    if not arrays or not all(isinstance(a, NDArray) for a in arrays):
        raise op_error("concatenate", f"arrays must be a non-empty list of NDArrays, got "
                       f"{[type(a).__name__ for a in arrays]}")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return _call(REGISTRY["concat"], *arrays, dim=axis)


def moveaxis(tensor, source, destination):
    """``tensor`` with axes ``source`` (an int or a sequence) moved to positions
    ``destination``, the other axes in their order (``numpy.moveaxis``; a transpose, so a
    copy). Bad or repeated axes are an MXNetError (a ValueError, as MXNet raised)."""
    ndim = tensor.ndim
    src = normalize_axes("moveaxis", _axis_list(source), ndim, "source")
    dst = normalize_axes("moveaxis", _axis_list(destination), ndim, "destination")
    if len(src) != len(dst):
        raise op_error("moveaxis", f"source {source!r} and destination {destination!r} must "
                       "name as many axes")
    order = [ax for ax in range(ndim) if ax not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _call(REGISTRY["transpose"], tensor, axes=tuple(order))


def _axis_list(axes):
    return (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)


# ---- helpers ------------------------------------------------------------------------------
def _index_key(key):
    """Turn NDArray indices into NumPy ones; reject floats and other junk early."""
    if isinstance(key, tuple):
        return tuple(_index_item(k) for k in key)
    return _index_item(key)


def _index_item(k):
    if isinstance(k, NDArray):          # an index array is a parameter: host data
        return namespace_for(k._ctx).to_host(k._data)
    if isinstance(k, (float, np.floating)):
        raise IndexError(f"NDArray index must be an integer, slice, None or Ellipsis, got {k!r}")
    return k


def _value_nd(value, dtype, ctx):
    """The value of ``x[key] = value`` as an NDArray of ``dtype`` (a recorded cast for an
    NDArray of another dtype; a value the dtype cannot hold is an error either way)."""
    if isinstance(value, NDArray):
        if value._data.dtype == dtype:
            return value
        _check_fits("__setitem__", namespace_for(value._ctx).to_host(value._data), dtype)
        return _call(_CAST, value, dtype=dtype)
    return NDArray._wrap(namespace_for(ctx).from_host(_checked_values(value, dtype,
                                                                      "__setitem__")), ctx)


def _drop_leading_ones(value, ndim):
    """``value`` without the leading length-1 axes beyond ``ndim`` (NumPy and MXNet assign
    a ``(1, 1, 9)`` value to a ``(4, 9)`` region); a recorded reshape, so gradients follow."""
    extra = 0
    while value.ndim - extra > ndim and value.shape[extra] == 1:
        extra += 1
    return value.reshape(value.shape[extra:]) if extra else value


def _checked_values(source, dtype, op):
    """``source`` (numbers, nested lists, a NumPy array) as a C-ordered NumPy array of
    ``dtype``, or MXNetError when complex numbers, None, strings or ragged lists are given
    or a value would not survive the conversion (see ``_check_fits``)."""
    try:
        src = np.asarray(source)
    except (ValueError, TypeError) as e:      # ragged nested lists
        raise op_error(op, f"cannot convert {type(source).__name__} to an array: {e}") from None
    if dtype_kind(src.dtype) not in "biuf":
        raise op_error(op, f"cannot convert {type(source).__name__} of {src.dtype} values "
                       f"(shape {src.shape}) to {dtype}; expected real numbers")
    _check_fits(op, src, dtype)
    if is_bfloat16(dtype):
        src = bfloat16_source(src)          # one rounding from float64 (see there)
    return src.astype(dtype, order="C")


def _check_fits(op, src, dtype):
    """MXNetError unless every value of ``src`` survives conversion to ``dtype``: NaN or
    inf into an integer dtype, an integer part outside the dtype's range, and a finite
    value that overflows a float dtype to inf are refused (truncating a fraction toward
    zero is the conversion's meaning, as in NumPy, and is kept)."""
    if not src.size or src.dtype == dtype or src.dtype.kind == "b" or dtype.kind == "b":
        return
    if dtype.kind in "iu":
        if dtype_kind(src.dtype) == "f":
            if not np.isfinite(src).all():
                raise op_error(op, f"NaN or infinity cannot be stored in {dtype}")
            src = np.trunc(src)
        info = np.iinfo(dtype)
        lo, hi = src.min(), src.max()
        if lo < info.min or hi > info.max:
            raise op_error(op, f"values in [{lo}, {hi}] do not fit in {dtype} "
                           f"([{info.min}, {info.max}])")
    elif src.dtype.itemsize > dtype.itemsize or src.dtype.kind in "iu" \
            or is_bfloat16(src.dtype):       # (its range is float32's, in 2 bytes)
        finite = src[np.isfinite(src)] if dtype_kind(src.dtype) == "f" else src
        big = np.abs(finite.astype(np.float64)).max(initial=0)
        with np.errstate(over="ignore"):
            overflows = np.isinf(np.float64(big).astype(dtype))
        if overflows:
            raise op_error(op, f"the value {big} overflows {dtype} (largest finite "
                           f"{dtype_range(dtype)[1]})")
