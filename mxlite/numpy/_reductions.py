"""NumPy's reductions over the registered reduce operators.

``axis`` is None (every axis), an int or a tuple (``()`` reduces nothing); a full
reduction is 0-d, as in NumPy (the legacy operators give ``(1,)``; the result is reshaped,
a recorded view). ``initial`` and ``where`` follow NumPy: ``where`` masks elements out
(they count as the reduction's identity, or ``initial``). Result dtypes follow NumPy for
``sum``/``prod``/``cumsum`` of integers (int64) and booleans, and MXNet for ``mean``,
``std`` and ``var`` of integers (the default float).
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from ..ops.registry import REGISTRY
from ..ops.shape_utils import normalize_axes
from . import _front
from ._dtypes import as_dtype, default_float
from .multiarray import asarray, ndarray

__all__ = ["sum", "prod", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "all",
           "any", "std", "var", "cumsum", "cumprod", "average", "nansum", "nanprod", "ptp",
           "count_nonzero"]

_builtin_sum, _builtin_all, _builtin_any = sum, all, any  # noqa: A001 (shadowed below)


def _arr(a):
    """``a`` as an np array (a legacy NDArray as a zero-copy np view; lists and numbers as
    new arrays); Symbols as they are."""
    return a if isinstance(a, ndarray) or _front.is_symbolic([a]) else asarray(a)


class _Dtype:
    """Stands for an array of dtype ``dtype`` where only the dtype matters."""

    def __init__(self, dtype):
        self.dtype = dtype


class _Rank:
    """Stands for an array of ``ndim`` axes where only the rank matters."""

    def __init__(self, ndim):
        self.ndim = ndim


def _axes(fn, a, axis):
    """The reduced axes (a sorted tuple) of ``a`` for NumPy's ``axis``."""
    if axis is None:
        return tuple(range(a.ndim))
    if isinstance(axis, (int, _onp.integer)):
        axis = (int(axis),)
    return tuple(sorted(normalize_axes(fn, tuple(axis), a.ndim, "axis")))


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reshape(y, shape):
    from ._manipulation import reshape
    have = _front.shape_of(y)
    return y if have is not None and tuple(have) == tuple(shape) else reshape(y, shape)


def _finish(fn, y, out):
    if out is None:
        return y
    if not isinstance(out, NDArray) or tuple(out.shape) != tuple(y.shape):
        raise op_error(fn, f"out must be an array of shape {tuple(y.shape)}")
    return _front.call("cast", [y], out=out, dtype=out.dtype)


def _reduce(fn, op, a, axis, keepdims, dtype, out, identity=None, initial=None, where=None,
            combine=None):
    a = _arr(a)
    if _front.is_symbolic([a]):
        if where is not None or initial is not None:
            raise op_error(fn, "where= and initial= need an array, not a Symbol")
        a, post = _accumulate_in(fn, a, dtype)
        if axis == () or axis == []:
            y = _front.call("_copy", [a])      # NumPy: nothing reduced (the op: all)
        else:
            y = _front.call(op, [a], axis=axis, keepdims=keepdims)
            shape = _front.shape_of(a)
            if not keepdims and (axis is None or shape is not None and
                                 len(_axes(fn, _Rank(len(shape)), axis)) == len(shape)):
                y = _front.call("reshape", [y], shape=())      # a full reduction is 0-d
        return y if post is None else _front.call("cast", [y], dtype=post)
    axes = _axes(fn, a, axis)
    a, post = _accumulate_in(fn, a, dtype)
    if where is not None:
        if identity is None:
            if initial is None:
                raise op_error(fn, "where= needs initial= (this reduction has no identity)")
            fill = initial
        else:
            fill = identity
        from ._indexing import where as np_where
        a = np_where(asarray(where), a, _onp.asarray(fill, dtype=a.dtype).item())
    shape = _reduced_shape(a.shape, axes, keepdims)
    if initial is not None:
        initial = _onp.asarray(initial).astype(a.dtype).item()   # NumPy: in a's dtype
    if not axes:
        y = _front.call("_copy", [a])
    elif a.size == 0:
        # nothing to reduce: the identity (or initial) fills the result, which is
        # zero-size itself unless a reduced axis is the empty one
        empty_axis = _builtin_any(a.shape[i] == 0 for i in axes)
        fill = identity if identity is not None else initial
        if fill is None and empty_axis:
            raise op_error(fn, f"zero-size array of shape {tuple(a.shape)} has no {fn} "
                           f"along axis {axis}: the reduction has no identity; pass initial=")
        from ._creation import full
        y = full(shape, 0 if fill is None else fill, dtype=a.dtype, ctx=a._ctx)
        # + the (zero) sum of the empty input, so the result stays on the tape
        dep = _front.call("reshape", [_front.call("sum", [a])], shape=(1,) * len(shape))
        y = _front.call("broadcast_add", [y, dep])
        if identity is None:
            initial = None                  # already the fill
    else:
        y = _reshape(_front.call(op, [a], axis=axes, keepdims=keepdims), shape)
    if initial is not None:
        y = combine(y, initial)
    if post is not None:
        y = _front.call("cast", [y], dtype=post)
    return _finish(fn, y, out)


def _accumulate_in(fn, a, dtype):
    """``(a cast for the reduction, dtype to cast the result to or None)`` for a requested
    ``dtype``: wider or another kind casts first (an int8 sum in int64 cannot overflow); a
    narrower float reduces in ``a``'s precision and rounds once at the end (more accurate
    than NumPy's rounding of every element and partial sum)."""
    if dtype is None:
        return a, None
    dt, src = as_dtype(dtype, fn), _front.dtype_of(a)
    if src == dt:
        return a, None
    if src is not None and src.kind == "f" and dt.kind == "f" and dt.itemsize < src.itemsize:
        return a, dt
    return _front.call("cast", [a], dtype=dt), None


_RESHAPE = REGISTRY["reshape"]
_TO_0D = _RESHAPE.parse_attrs({"shape": ()})


def _zero_dim(y):
    """The one-element result of a full reduction as a 0-d view (recorded reshape)."""
    return _front.as_np(y._alias(y._data.reshape(()), _RESHAPE, _TO_0D))


def _sum_dtype(dt):
    """NumPy's accumulator dtype of sum/prod/cumsum: int64 for narrower integers and
    booleans; unsigned integers also give int64 (NumPy's uint64 is not a dtype mxlite
    stores)."""
    dt = _onp.dtype(dt)
    if dt.kind in "bu" or (dt.kind == "i" and dt.itemsize < 8):
        return _onp.dtype(_onp.int64)
    return dt


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """The sum over ``axis`` (module docstring)."""
    if axis is None and dtype is None and out is None and not keepdims and initial is None \
            and where is None and type(a) is _front.np_class() and a._data.dtype.kind == "f" \
            and a._data.size:               # the common case: all of a float array
        return _zero_dim(_front.call_direct("sum", [a], None))
    a = _arr(a)
    if dtype is None and _front.dtype_of(a) is not None:
        dtype = _sum_dtype(_front.dtype_of(a))
    from ._ufuncs import add
    return _reduce("sum", "sum", a, axis, keepdims, dtype, out, 0, initial, where, add)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """The sum over ``axis`` with NaN counted as 0."""
    a = _arr(a)
    if dtype is None and _front.dtype_of(a) is not None:
        dtype = _sum_dtype(_front.dtype_of(a))
    return _reduce("nansum", "nansum", a, axis, keepdims, dtype, out, 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """The product over ``axis``."""
    a = _arr(a)
    if dtype is None and _front.dtype_of(a) is not None:
        dtype = _sum_dtype(_front.dtype_of(a))
    from ._ufuncs import multiply
    return _reduce("prod", "prod", a, axis, keepdims, dtype, out, 1, initial, where, multiply)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """The product over ``axis`` with NaN counted as 1."""
    return _reduce("nanprod", "nanprod", _arr(a), axis, keepdims, dtype, out, 1)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """The largest element over ``axis``."""
    from ._ufuncs import maximum
    return _reduce("max", "max", a, axis, keepdims, None, out, None, initial, where, maximum)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """The smallest element over ``axis``."""
    from ._ufuncs import minimum
    return _reduce("min", "min", a, axis, keepdims, None, out, None, initial, where, minimum)


amax, amin = max, min


def ptp(a, axis=None, out=None, keepdims=False):
    """``max - min`` over ``axis``."""
    from ._ufuncs import subtract
    return _finish("ptp", subtract(max(a, axis, keepdims=keepdims),
                                   min(a, axis, keepdims=keepdims)), out)


def _float_of(fn, a, dtype):
    if dtype is not None:
        return as_dtype(dtype, fn)
    return a.dtype if a.dtype.kind == "f" else default_float()


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """The mean over ``axis`` (integers: in the default float, as MXNet)."""
    a = _arr(a)
    if _front.is_symbolic([a]):
        known = _front.dtype_of(a)
        dt = dtype if known is None else _float_of("mean", _Dtype(known), dtype)
        return _reduce("mean", "mean", a, axis, keepdims, dt, out)
    dt = _float_of("mean", a, dtype)
    if where is not None:
        from ._ufuncs import true_divide
        total = sum(a, axis, dt, None, keepdims, where=where)
        count = sum(_broadcast_mask(where, a).astype(dt), axis, keepdims=keepdims)
        return _finish("mean", true_divide(total, count), out)
    # an empty reduction is NaN (0 / 0), as NumPy's
    return _reduce("mean", "mean", a, axis, keepdims, dt, out, float("nan"))


def _broadcast_mask(where, a):
    from ._manipulation import broadcast_to
    return broadcast_to(asarray(where, ctx=a._ctx), a.shape)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The variance over ``axis`` (``ddof``: delta degrees of freedom)."""
    from ._ufuncs import multiply, subtract, true_divide
    a = _arr(a)
    dt = _float_of("var", a, dtype)
    a = a.astype(dt, copy=False)
    centred = subtract(a, mean(a, axis, keepdims=True))
    sq = sum(multiply(centred, centred), axis, keepdims=keepdims)
    axes = _axes("var", a, axis)
    n = 1
    for i in axes:
        n *= a.shape[i]
    return _finish("var", true_divide(sq, float(n - ddof)) if n - ddof > 0 else
                   multiply(sq, float("nan")), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The standard deviation over ``axis``."""
    from ._ufuncs import sqrt
    return _finish("std", sqrt(var(a, axis, dtype, None, ddof, keepdims)), out)


def _arg(fn, op, a, axis, out, keepdims):
    a = _arr(a)
    shape = _front.shape_of(a)
    if shape is None:
        if axis is None:
            raise op_error(fn, "needs the rank of its input, which this Symbol does not know")
        # a Symbol of unknown rank with a given axis: the operator checks the axis when bound
        y = _front.call(op, [a], axis=int(axis), keepdims=keepdims)
        return _finish(fn, _front.call("cast", [y], dtype=_onp.int64), out)
    ndim = len(shape)
    if ndim == 0 and axis is not None:
        normalize_axes(fn, (int(axis),), 1, "axis")        # 0 and -1 only, as NumPy
        axis = None
    if axis is None:
        from ._manipulation import reshape
        y = _front.call(op, [reshape(a, (-1,))], axis=0)
        y = _reshape(y, (1,) * ndim if keepdims else ())
    else:
        ax = normalize_axes(fn, (int(axis),), ndim, "axis")[0]
        if shape[ax] == 0:
            raise op_error(fn, f"attempt to get {fn} of an empty sequence")
        if 0 in shape and not _front.is_symbolic([a]):     # an empty result
            return _finish(fn, _front.call("_zeros", [], shape=_reduced_shape(
                shape, (ax,), keepdims), dtype=_onp.int64, ctx=a._ctx), out)
        y = _reshape(_front.call(op, [a], axis=ax, keepdims=keepdims),
                     _reduced_shape(shape, (ax,), keepdims))
    if _front.dtype_of(y) != _onp.int64:
        y = _front.call("cast", [y], dtype=_onp.int64)
    return _finish(fn, y, out)


def argmax(a, axis=None, out=None, keepdims=False):
    """The index (int64) of the largest element (of the flattened array if no ``axis``)."""
    return _arg("argmax", "argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    """The index (int64) of the smallest element (of the flattened array if no ``axis``)."""
    return _arg("argmin", "argmin", a, axis, out, keepdims)


def _truth(fn, op, a, axis, out, keepdims, empty):
    a = _arr(a)
    if _front.is_symbolic([a]):
        # a graph: count the (false, for all) elements, which also holds for empty axes
        from ._ufuncs import equal, logical_not, not_equal
        t = a if _front.dtype_of(a) == _onp.bool_ else not_equal(a, 0)
        if fn == "all":
            t = logical_not(t)
        n = _reduce(fn, "sum", _front.call("cast", [t], dtype=_onp.int64), axis, keepdims,
                    None, None)
        return equal(n, 0) if fn == "all" else not_equal(n, 0)
    if a.dtype != _onp.bool_:
        from ._ufuncs import not_equal
        a = not_equal(a, 0)
    if a.size == 0:
        from ._creation import full
        shape = _reduced_shape(a.shape, _axes(fn, a, axis), keepdims)
        return _finish(fn, full(shape, empty, dtype=_onp.bool_, ctx=a._ctx), out)
    return _reduce(fn, op, a, axis, keepdims, None, out)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether every element (over ``axis``) is true; booleans."""
    return _truth("all", "min", a, axis, out, keepdims, True)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether some element (over ``axis``) is true; booleans."""
    return _truth("any", "max", a, axis, out, keepdims, False)


def count_nonzero(a, axis=None, keepdims=False):
    """The number of non-zero elements over ``axis`` (int64)."""
    from ._ufuncs import not_equal
    return sum(not_equal(_arr(a), 0), axis, dtype=_onp.int64, keepdims=keepdims)


def cumsum(a, axis=None, dtype=None, out=None):
    """The running sum along ``axis`` (of the flattened array if None)."""
    a = _arr(a)
    if dtype is None:
        dtype = _sum_dtype(a.dtype)
    y = _front.call("cumsum", [a], axis=axis, dtype=as_dtype(dtype, "cumsum"))
    return _finish("cumsum", y, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """The running product along ``axis`` (of the flattened array if None): a scan of
    ``log2(n)`` element-wise products with shifted copies (``y *= [1]*s ++ y[:-s]`` for
    s = 1, 2, 4, ...), exact for integers, zero- and sign-safe, and differentiable."""
    a = _arr(a)
    if _front.is_symbolic([a]):
        raise op_error("cumprod", "needs an array, not a Symbol")
    if axis is None:
        from ._manipulation import reshape
        a, axis = reshape(a, (-1,)), 0
    axis = normalize_axes("cumprod", (int(axis),), a.ndim, "axis")[0]
    dt = as_dtype(_sum_dtype(a.dtype) if dtype is None else dtype, "cumprod")
    y = a if a.dtype == dt else _front.call("cast", [a], dtype=dt)
    n = a.shape[axis]
    lead = (slice(None),) * axis
    from ._creation import ones
    from ._manipulation import concatenate
    from ._ufuncs import multiply
    step = 1
    while step < n:
        pad = ones(tuple(step if i == axis else d for i, d in enumerate(y.shape)), dtype=dt,
                   ctx=a._ctx)
        y = multiply(y, concatenate([pad, y[lead + (slice(0, n - step),)]], axis=axis))
        step *= 2
    if y is a:
        y = _front.call("_copy", [a])
    return _finish("cumprod", y, out)


def average(a, axis=None, weights=None, returned=False):
    """The (weighted) mean over ``axis``; ``returned=True`` also gives the weights' sum.
    On traced Symbols too (the shapes are known while a block is traced)."""
    from ._ufuncs import multiply, true_divide
    a = _arr(a)
    shape = _front.shape_of(a)
    if shape is None:
        raise op_error("average", "needs the shape of its input")
    if weights is None:
        avg = mean(a, axis)
        if not returned:
            return avg
        n = 1
        for i in (_axes("average", _Rank(len(shape)), axis)):
            n *= shape[i]
        from ._creation import full_like
        return avg, full_like(avg, float(n))
    w = _arr(weights)
    wshape = _front.shape_of(w)
    if tuple(wshape) != tuple(shape):
        if axis is None or len(wshape) != 1 or wshape[0] != shape[axis]:
            raise op_error("average", f"weights of shape {tuple(wshape)} do not match a of "
                           f"shape {tuple(shape)} along axis {axis}")
        view = [1] * len(shape)
        view[axis] = wshape[0]
        from ._manipulation import reshape
        w = reshape(w, tuple(view))
    known = _front.dtype_of(a)
    dt = known if known is not None and known.kind == "f" else default_float()
    a, w = (v if _front.dtype_of(v) == dt else _front.call("cast", [v], dtype=dt)
            for v in (a, w))
    from ._manipulation import broadcast_to
    scl = sum(broadcast_to(w, tuple(shape)), axis)
    avg = true_divide(sum(multiply(a, w), axis), scl)
    return (avg, scl) if returned else avg


def _broadcast(w, a):
    from ._manipulation import broadcast_to
    return broadcast_to(w, a.shape)
