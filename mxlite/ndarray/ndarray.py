"""``NDArray``: a C-contiguous buffer on a device, and the ``nd`` invoke strategy.

Storage is a NumPy array on CPU. Every computation goes through a registered operator via
``invoke``; the arithmetic dunders are thin routes to ``broadcast_*`` and ``_*_scalar`` ops.
"""
import numbers

import numpy as np

from .._core.copy import strided_copy
from ..base import DTYPES, MXNetError, normalize_dtype, op_error
from ..context import Context, current_context
from ..ops.registry import REGISTRY, Attrs
from ..ops.shape_utils import check_shape, infer_reshape

__all__ = ["NDArray", "invoke", "array", "empty", "waitall"]

_EMPTY_ATTRS = Attrs()
_CPU = Context("cpu", 0)
# Set by mxlite.autograd: called as hook(op, attrs, inputs, outputs) for each executed op
# while recording. Kept as a module global so the non-recording path costs one test.
_record_hook = None


class NDArray:
    """An n-dimensional array on a device (``mx.nd.array([1, 2])``), MXNet 1.x semantics.

    A slice along the first axis (``x[1:3]``, ``x[2]``) is a view that writes through;
    other indexing copies.
    """

    __slots__ = ("_data", "_ctx", "_grad", "_grad_req", "_node", "__weakref__")
    __array_priority__ = 1000.0

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def _wrap(cls, data, ctx=_CPU):
        self = cls.__new__(cls)
        self._data = data
        self._ctx = ctx
        self._grad = None
        self._grad_req = "null"
        self._node = None
        return self

    def __init__(self, *args, **kwargs):
        raise TypeError("NDArray: create arrays with mx.nd.array, mx.nd.zeros, ...")

    # ---- properties ---------------------------------------------------------------------
    shape = property(lambda self: self._data.shape, doc="Tuple of dimensions.")
    dtype = property(lambda self: self._data.dtype.type, doc="NumPy scalar type, e.g. numpy.float32.")
    size = property(lambda self: self._data.size, doc="Number of elements.")
    ndim = property(lambda self: self._data.ndim, doc="Number of dimensions.")
    context = property(lambda self: self._ctx, doc="The device Context.")
    ctx = context
    stype = property(lambda self: "default", doc="Storage type (always 'default', dense).")
    T = property(lambda self: _call(REGISTRY["transpose"], self), doc="Transposed copy (reversed axes).")

    @property
    def grad(self):
        """The gradient buffer attached by ``attach_grad`` (None if none)."""
        return self._grad

    def __repr__(self):
        return f"\n{self._data!r}\n<NDArray {'x'.join(map(str, self.shape)) or '0-d'} @{self._ctx}>"

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        if self.size != 1:
            raise MXNetError(f"the truth value of an NDArray with {self.size} elements is ambiguous")
        return bool(self._data.reshape(-1)[0])

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
        """A NumPy copy of the data."""
        return self._data.copy()

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 passes copy=True from np.array(x): the caller must not get our buffer
        data = self._data if dtype is None else self._data.astype(dtype, copy=False)
        if data is self._data and copy:
            return data.copy()
        if data is not self._data and copy is False:
            raise ValueError(f"NDArray.__array__: a {self._data.dtype} array cannot be viewed as "
                             f"{np.dtype(dtype)} without a copy")
        return data

    def asscalar(self):
        """The single element as a NumPy scalar; MXNetError if the array has another size."""
        if self.size != 1:
            raise MXNetError(f"asscalar: the array has shape {self.shape}, expected one element")
        return self._data.reshape(-1)[0]

    def astype(self, dtype, copy=True):
        """A copy cast to ``dtype`` (no copy when ``copy=False`` and the dtype already matches)."""
        dt = normalize_dtype(dtype, "astype")
        if not copy and dt == self._data.dtype:
            return self
        return _call(REGISTRY["cast"], self, dtype=dt)

    def copy(self):
        """A deep copy on the same device."""
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into NDArray ``other`` (same shape) and return it, or into a new array on Context ``other``."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise op_error("copyto", f"shape mismatch: source {self.shape}, target {other.shape}")
            _assign(other._data, self._data, "copyto")
            return other
        if isinstance(other, Context):
            out = np.empty_like(self._data)
            _assign(out, self._data, "copyto")
            return NDArray._wrap(out, other)
        raise TypeError(f"copyto: expected an NDArray or Context, got {type(other).__name__}")

    def as_in_context(self, context):
        """This array on ``context`` (itself when already there)."""
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
        view = NDArray._wrap(self._data.reshape(new), self._ctx)
        _share_grad_source(view, self, {"shape": new})
        return view

    # ---- autograd ------------------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """Allocate ``.grad`` (zeros) and mark this array as a variable for autograd."""
        from .. import autograd
        autograd.mark_variables([self], [NDArray._wrap(np.zeros_like(self._data), self._ctx)],
                                grad_req)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Back-propagate from this array into the ``.grad`` of the variables it depends on."""
        from .. import autograd
        autograd.backward([self], None if out_grad is None else [out_grad], retain_graph,
                          train_mode)

    def detach(self):
        """The same data, cut from the autograd graph."""
        return NDArray._wrap(self._data, self._ctx)

    def wait_to_read(self):
        """Block until pending writes finish (computation is synchronous on CPU)."""

    wait_to_write = wait_to_read

    # ---- indexing -----------------------------------------------------------------------
    def __getitem__(self, key):
        key = _index_key(key, self.shape)
        try:
            view = self._data[key]
        except IndexError as e:
            raise IndexError(f"NDArray index {key!r} for shape {self.shape}: {e}") from None
        if not isinstance(view, np.ndarray):    # an integer index down to a scalar
            view = np.asarray(view).reshape(())
            return NDArray._wrap(view.copy(), self._ctx)
        if view.base is None or not view.flags.c_contiguous:
            view = _contiguous(view)
        elif not _is_first_axis_view(key):
            view = _contiguous(view)
        return NDArray._wrap(view, self._ctx)

    def __setitem__(self, key, value):
        key = _index_key(key, self.shape)
        try:
            target = self._data[key]
        except IndexError as e:
            raise IndexError(f"NDArray index {key!r} for shape {self.shape}: {e}") from None
        if not isinstance(target, np.ndarray) or not np.may_share_memory(target, self._data):
            # an element, or an advanced (fancy) index whose result is a copy: NumPy scatters
            try:
                self._data[key] = _value_array(value, self._data.dtype, "__setitem__")
            except ValueError as e:
                raise op_error("__setitem__", f"cannot assign to index {key!r} of an array of "
                               f"shape {self.shape}: {e}") from None
            return
        _assign(target, _value_array(value, self._data.dtype, "__setitem__"), "__setitem__")

    # ---- arithmetic ---------------------------------------------------------------------
    def _binary(self, other, array_op, scalar_op, out=None):
        if isinstance(other, NDArray):
            return invoke(REGISTRY[array_op], [self, other], None, out)
        if isinstance(other, (numbers.Number, np.generic)):
            return invoke(REGISTRY[scalar_op], [self], {"scalar": other}, out)
        if isinstance(other, np.ndarray):
            return invoke(REGISTRY[array_op], [self, array(other, ctx=self._ctx, dtype=other.dtype)],
                          None, out)
        return NotImplemented

    def _rbinary(self, other, array_op, rscalar_op):
        if isinstance(other, (numbers.Number, np.generic)):
            return invoke(REGISTRY[rscalar_op], [self], {"scalar": other}, None)
        if isinstance(other, np.ndarray):
            return invoke(REGISTRY[array_op], [array(other, ctx=self._ctx, dtype=other.dtype), self],
                          None, None)
        return NotImplemented

    def _inplace(self, other, array_op, scalar_op):
        result = self._binary(other, array_op, scalar_op, out=self)
        return self if result is not NotImplemented else result

    def __neg__(self):
        return _call(REGISTRY["negative"], self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _call(REGISTRY["abs"], self)

    def __getstate__(self):
        return {"data": self._data, "ctx": (self._ctx.device_type, self._ctx.device_id)}

    def __setstate__(self, state):
        self._data = state["data"]
        self._ctx = Context(*state["ctx"])
        self._grad, self._grad_req, self._node = None, "null", None

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


# (dunder, array op, scalar op, reflected scalar op)
_ARITHMETIC = [
    ("add", "broadcast_add", "_plus_scalar", "_plus_scalar"),
    ("sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    ("mul", "broadcast_mul", "_mul_scalar", "_mul_scalar"),
    ("truediv", "broadcast_div", "_div_scalar", "_rdiv_scalar"),
    ("mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    ("pow", "broadcast_power", "_power_scalar", "_rpower_scalar"),
]
_COMPARISONS = [
    ("eq", "broadcast_equal", "_equal_scalar"),
    ("ne", "broadcast_not_equal", "_not_equal_scalar"),
    ("gt", "broadcast_greater", "_greater_scalar"),
    ("ge", "broadcast_greater_equal", "_greater_equal_scalar"),
    ("lt", "broadcast_lesser", "_lesser_scalar"),
    ("le", "broadcast_lesser_equal", "_lesser_equal_scalar"),
]


def _install_dunders():
    def forward(a, s):
        return lambda self, other: self._binary(other, a, s)

    def reflected(a, r):
        return lambda self, other: self._rbinary(other, a, r)

    def inplace(a, s):
        return lambda self, other: self._inplace(other, a, s)

    for name, a, s, r in _ARITHMETIC:
        setattr(NDArray, f"__{name}__", forward(a, s))
        setattr(NDArray, f"__r{name}__", reflected(a, r))
        setattr(NDArray, f"__i{name}__", inplace(a, s))
    NDArray.__div__, NDArray.__rdiv__, NDArray.__idiv__ = (
        NDArray.__truediv__, NDArray.__rtruediv__, NDArray.__itruediv__)
    for name, a, s in _COMPARISONS:
        setattr(NDArray, f"__{name}__", forward(a, s))


_install_dunders()


# MXNet's nd.add, nd.maximum, ...: functions whose operands may each be an NDArray or a
# scalar, routed to the broadcast_* op or to the scalar op (reflected when the scalar is on
# the left). name: (array op, scalar op, scalar-on-the-left op)
_BINARY_FUNCTIONS = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "modulo": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar"),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar"),
    "lesser": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar"),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar"),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar"),
}


def _binary_function(name, array_op, scalar_op, left_scalar_op):
    def function(lhs, rhs):
        if isinstance(lhs, NDArray):
            result = lhs._binary(rhs, array_op, scalar_op)
        elif isinstance(rhs, NDArray):
            result = rhs._rbinary(lhs, array_op, left_scalar_op)
        else:
            raise TypeError(f"{name}: at least one operand must be an NDArray, got "
                            f"{type(lhs).__name__} and {type(rhs).__name__}")
        if result is NotImplemented:
            raise TypeError(f"{name}: unsupported operands {type(lhs).__name__} and "
                            f"{type(rhs).__name__}")
        return result
    function.__name__ = name
    function.__doc__ = (f"``{array_op}`` of two NDArrays, or ``{scalar_op}`` when one operand "
                        "is a scalar (MXNet's nd." + name + "); the result is an NDArray.")
    return function


BINARY_FUNCTIONS = {name: _binary_function(name, *ops) for name, ops in _BINARY_FUNCTIONS.items()}


# ---- the nd invoke strategy ----------------------------------------------------------------
def invoke(op, inputs, kwargs, out=None):
    """Execute ``op`` now: parse params, infer output shapes/dtypes, allocate, run the kernel.

    ``out`` (an NDArray, or a list for multi-output ops) receives the result in place.
    Multi-output ops (``num_outputs != 1``) return a list.
    """
    attrs = op.parse_attrs(kwargs) if (kwargs or op.params) else _EMPTY_ATTRS
    arrays, in_shapes, in_dtypes = [], [], []
    ctx = None
    for x in inputs:
        if type(x) is not NDArray and not isinstance(x, NDArray):
            _bad_input(op, inputs, x)
        if ctx is None:
            ctx = x._ctx
        elif x._ctx is not ctx and x._ctx != ctx:
            raise op_error(op.name, f"inputs are on different devices ({ctx} and {x._ctx})")
        a = x._data
        arrays.append(a)
        in_shapes.append(a.shape)
        in_dtypes.append(a.dtype)
    if ctx is None:
        if op.variadic and op.inputs:
            raise op_error(op.name, "needs at least one input")
        ctx = attrs.get("ctx") or current_context()
        if not isinstance(ctx, Context):
            ctx = Context(ctx)
    shapes = op.infer_shape(in_shapes, attrs)
    dtypes = op.infer_type(in_dtypes, attrs)
    if out is not None:
        outputs = _out_arrays(op, shapes, dtypes, out, arrays)
    elif len(shapes) == 1:
        outputs = [np.empty(shapes[0], dtypes[0])]
    else:
        outputs = [np.empty(s, d) for s, d in zip(shapes, dtypes)]
    kernel = op.compute.get(ctx.device_type)
    if kernel is None:
        raise op_error(op.name, f"has no kernel for {ctx.device_type}")
    kernel(arrays, outputs, attrs)
    if out is not None:
        result = out
    elif len(outputs) == 1:
        result = NDArray._wrap(outputs[0], ctx)
    else:
        result = [NDArray._wrap(o, ctx) for o in outputs]
    if _record_hook is not None:
        _record_hook(op, attrs, inputs, result)
    return result


def _bad_input(op, inputs, x):
    i = next(k for k, y in enumerate(inputs) if y is x)
    name = op.inputs[0 if op.variadic else i] if op.inputs else "data"
    raise TypeError(f"{op.name}: input {name!r} must be an NDArray, got {type(x).__name__}")


def _out_arrays(op, shapes, dtypes, out, arrays):
    outs = out if isinstance(out, (list, tuple)) else [out]
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
        for i, a in enumerate(arrays):
            if not np.may_share_memory(o._data, a):
                continue
            if not op.elementwise:
                raise op_error(op.name, "out= overlaps an input; this operator cannot run in place")
            if a.shape != o.shape or a.ctypes.data != o._data.ctypes.data:
                # Element-wise in place is safe only element-on-itself; a shifted or
                # broadcast overlap (``x[1:] += x[:-1]``, ``x += x[0]``) would read values
                # already overwritten, so that input is copied first, as NumPy does.
                arrays[i] = a.copy()
        result.append(o._data)
    return result


def _call(op, *inputs, out=None, **kwargs):
    return invoke(op, list(inputs), kwargs, out)


# ---- creation -------------------------------------------------------------------------------
def array(source_array, ctx=None, dtype=None):
    """Create an NDArray from a list, NumPy array, scalar or NDArray (a copy).

    The dtype defaults to float32 (MXNet), or the source's dtype when it is an NDArray or
    NumPy array of a supported dtype.
    """
    ctx = ctx or current_context()
    if isinstance(source_array, NDArray):
        source_array = source_array._data
    if dtype is None:
        src_dt = getattr(source_array, "dtype", None)
        dtype = src_dt if src_dt is not None and np.dtype(src_dt) in DTYPES.values() else "float32"
    dt = normalize_dtype(dtype, "array")
    try:
        data = np.array(source_array, dtype=dt, order="C", copy=True)
    except (ValueError, TypeError, OverflowError) as e:     # ragged, non-numbers, out of range
        raise MXNetError(f"array: cannot convert {type(source_array).__name__} to an NDArray "
                         f"of {dt}: {e}") from None
    if data.dtype == object:
        raise MXNetError("array: the source is ragged or holds non-numbers")
    return NDArray._wrap(data, ctx if isinstance(ctx, Context) else Context(ctx))


def empty(shape, ctx=None, dtype=None):
    """An uninitialised NDArray of ``shape`` (float32 by default)."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = check_shape("empty", shape)
    ctx = ctx or current_context()
    return NDArray._wrap(np.empty(shape, normalize_dtype(dtype, "empty")), ctx)


def waitall():
    """Wait for all pending computation (synchronous on CPU: returns at once)."""


# ---- helpers ------------------------------------------------------------------------------
def _index_key(key, shape):
    """Turn NDArray indices into NumPy ones; reject floats and other junk early."""
    if isinstance(key, tuple):
        return tuple(_index_item(k) for k in key)
    return _index_item(key)


def _index_item(k):
    if isinstance(k, NDArray):
        k = k._data
        if k.dtype.kind == "f":
            k = k.astype(np.int64)
        return k
    if isinstance(k, (float, np.floating)):
        raise IndexError(f"NDArray index must be an integer, slice, None or Ellipsis, got {k!r}")
    return k


def _is_first_axis_view(key):
    """True when ``key`` only touches the first axis (int or step-1 slice): MXNet's write-through views."""
    if isinstance(key, tuple):
        if len(key) != 1:
            return False
        key = key[0]
    if isinstance(key, (int, np.integer)):
        return True
    return isinstance(key, slice) and key.step in (None, 1)


def _contiguous(view):
    out = np.empty(view.shape, view.dtype)
    strided_copy(view, out)
    return out


def _value_array(value, dtype, op):
    if isinstance(value, NDArray):
        value = value._data
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    try:
        return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise MXNetError(f"{op}: cannot use {type(value).__name__} as a value: {e}") from None


def _assign(target, value, op):
    """Broadcast ``value`` into the view ``target`` with the strided-copy kernel."""
    if value.dtype != target.dtype:
        value = value.astype(target.dtype)
    if np.may_share_memory(value, target):
        value = value.copy()
    try:
        strided_copy(value, target)          # broadcasts value itself
    except ValueError:
        raise op_error(op, f"cannot assign a value of shape {value.shape} to a region of shape "
                       f"{target.shape}") from None


def _share_grad_source(view, source, kwargs):
    """Record a reshape view for autograd (the hook treats it as a ``reshape`` op)."""
    if _record_hook is not None and "reshape" in REGISTRY:
        _record_hook(REGISTRY["reshape"], REGISTRY["reshape"].parse_attrs(kwargs), [source], view)
