"""NumPy's selection, sorting and clipping functions over registered operators.

Functions whose output shape depends on the values (``nonzero``, ``argwhere``,
``where(condition)``) read the data on the host and give int64 indices; they are not
differentiable (indices are not). Everything else is a registered operator, so recorded.
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from ..ops.shape_utils import normalize_axis
from . import _front
from ._dtypes import result_type, scalar_result_type
from .multiarray import array, asarray, ndarray

__all__ = ["where", "nonzero", "argwhere", "flatnonzero", "take", "take_along_axis", "clip",
           "sort", "argsort"]


def _arr(a, like=None):
    """``a`` as an np array (a legacy NDArray as a zero-copy np view; other data as a new
    array on ``like``'s context); Symbols as they are."""
    if isinstance(a, ndarray) or _front.is_symbolic([a]):
        return a
    if isinstance(a, NDArray):
        return asarray(a)
    return asarray(a) if like is None else array(a, ctx=like._ctx,
                                                   dtype=_onp.asarray(a).dtype)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` is true, else ``y`` (all broadcast); with only
    ``condition``, ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise op_error("where", "either both or neither of x and y must be given")
    if _front.is_symbolic([condition, x, y]):
        return _symbolic_where(condition, x, y)
    cond = _arr(condition)
    numbers = [v for v in (x, y) if not isinstance(v, NDArray)]
    arrays = [v for v in (x, y) if isinstance(v, NDArray)]
    if arrays:
        dt = arrays[0].dtype if len(arrays) == 1 else result_type(x.dtype, y.dtype)
        for v in numbers:
            dt = scalar_result_type(dt, v)
    else:
        dt = _onp.result_type(*[_onp.asarray(v) for v in numbers])
        if dt.kind == "f":
            from ._dtypes import default_float
            dt = default_float()
    x, y = (v.astype(dt, copy=False) if isinstance(v, NDArray) else
            array(v, dtype=dt, ctx=cond._ctx) for v in (x, y))
    from ._manipulation import broadcast_to
    shape = _onp.broadcast_shapes(tuple(cond.shape), tuple(x.shape), tuple(y.shape))
    cond, x, y = (v if tuple(v.shape) == shape else broadcast_to(v, shape)
                  for v in (cond, x, y))
    if cond.dtype != dt:
        cond = cond.astype(dt)
    return _front.call("where", [cond, x, y])


def _where_dtype(x, y):
    """The result dtype of ``where`` for operands ``x``, ``y`` (arrays or numbers; None
    when a Symbol's dtype is not known)."""
    dts = [None if _is_num(v) else _front.dtype_of(v) for v in (x, y)]
    known = [d for d in dts if d is not None]
    if len(known) < sum(not _is_num(v) for v in (x, y)):
        return None
    if known:
        dt = known[0] if len(known) == 1 else result_type(*known)
        for v in (x, y):
            if _is_num(v):
                dt = scalar_result_type(dt, v)
        return dt
    dt = _onp.result_type(*[_onp.asarray(v) for v in (x, y)])
    if dt.kind == "f":
        from ._dtypes import default_float
        dt = default_float()
    return dt


def _is_num(v):
    return isinstance(v, (int, float, bool, _onp.number, _onp.bool_))


def _symbolic_where(condition, x, y):
    """``where`` building a graph node: numbers become constant symbols, the operands are
    cast to the result dtype and broadcast to a common shape (when the traced shapes are
    known; otherwise they must already agree)."""
    items = [condition, x, y]
    ref = next(v for v in items if _front.is_symbolic([v]) and not _is_num(v))
    dt = _where_dtype(x, y)
    shapes = [() if _is_num(v) else _front.shape_of(v) for v in items]
    target = None
    if all(sh is not None and -1 not in sh for sh in shapes):
        target = tuple(_onp.broadcast_shapes(*shapes))
    out = []
    for v, sh in zip(items, shapes):
        if _is_num(v):
            value = float(v) if not isinstance(v, (bool, _onp.bool_)) else float(bool(v))
            if target is not None:
                with _front.symbolic_creation():
                    v = _front.call("_full", [], shape=target, val=value,
                                    dtype=dt if dt is not None else _onp.float32)
            else:
                v = _front.call("_plus_scalar", [_front.call("zeros_like", [ref])],
                                scalar=value)
        elif target is not None and tuple(sh) != target:
            from ._manipulation import broadcast_to
            v = broadcast_to(v, target)
        if dt is not None and _front.dtype_of(v) != dt:
            v = _front.call("cast", [v], dtype=dt)
        out.append(v)
    return _front.call("where", out)


def nonzero(a):
    """The indices of the non-zero elements, one int64 array per axis (read on the host)."""
    a = _arr(a)
    host = a.asnumpy()
    if host.ndim == 0:
        host = host.reshape(1)
    return tuple(array(i.astype(_onp.int64), dtype=_onp.int64, ctx=a._ctx)
                 for i in _onp.nonzero(host))


def flatnonzero(a):
    """The indices of the non-zero elements of the flattened array (int64)."""
    a = _arr(a)
    return array(_onp.flatnonzero(a.asnumpy()).astype(_onp.int64), dtype=_onp.int64,
                 ctx=a._ctx)


def argwhere(a):
    """The indices of the non-zero elements, one row per element (int64, shape
    ``(N, a.ndim)``)."""
    a = _arr(a)
    return array(_onp.argwhere(a.asnumpy()).astype(_onp.int64), dtype=_onp.int64, ctx=a._ctx)


def take(a, indices, axis=None, mode="raise", out=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array if None).
    ``mode``: 'raise' (an out-of-range index is an error), 'wrap' or 'clip'."""
    a = _arr(a)
    if mode not in ("raise", "wrap", "clip"):
        raise op_error("take", f"mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    scalar = isinstance(indices, (int, _onp.integer))
    idx = _arr(indices if not scalar else [indices], like=a)
    if axis is None:
        from ._manipulation import reshape
        a, axis = reshape(a, (-1,)), 0
    axis = normalize_axis("take", axis, a.ndim)
    if mode == "raise" and not _front.is_symbolic([idx]):
        host = idx.asnumpy()
        n = a.shape[axis]
        if host.size and (host.min() < -n or host.max() >= n):
            raise op_error("take", f"index out of range: indices in [{host.min()}, "
                           f"{host.max()}] for axis {axis} of length {n}")
        if host.size and host.min() < 0:
            idx = array(_onp.where(host < 0, host + n, host), dtype=_onp.int64, ctx=a._ctx)
        mode = "clip"
    y = _front.call("take", [a, idx], axis=axis, mode=mode)
    if scalar:
        key = (slice(None),) * axis + (0,)
        y = y[key]
    return y if out is None else _front.call("_copy", [y], out=out)


def take_along_axis(arr, indices, axis):
    """``arr`` picked at ``indices`` (of ``arr``'s rank) along ``axis``."""
    a = _arr(arr)
    idx = _arr(indices, like=a)
    if axis is None:
        from ._manipulation import reshape
        a, axis = reshape(a, (-1,)), 0
    return _front.call("_take_along_axis", [a, idx], axis=axis)


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """``a`` limited to ``[a_min, a_max]`` (either may be None, not both), in ``a``'s
    dtype (MXNet's rule; NumPy would promote an integer array with float bounds to
    float). For integer data, fractional bounds round inwards (``clip(int_array, 2.5,
    7.5)`` lies in ``[3, 7]``), so no result falls outside the bounds. ``min=``/``max=``
    are NumPy 2's (and ``ndarray.clip``'s) names for the bounds."""
    if "min" in kwargs or "max" in kwargs:
        if a_min is not None or a_max is not None:
            raise op_error("clip", "give the bounds as a_min/a_max or as min/max, not both")
        a_min, a_max = kwargs.pop("min", None), kwargs.pop("max", None)
    if kwargs:
        raise TypeError(f"clip() got unexpected keyword arguments {sorted(kwargs)}")
    a = _arr(a)
    if a_min is None and a_max is None:
        raise op_error("clip", "a_min and a_max cannot both be None")
    if isinstance(a_min, NDArray) or isinstance(a_max, NDArray):
        from ._ufuncs import maximum, minimum
        y = a if a_min is None else maximum(a, a_min)
        y = y if a_max is None else minimum(y, a_max)
        return y if out is None else _front.call("_copy", [y], out=out)
    lo = -_onp.inf if a_min is None else a_min
    hi = _onp.inf if a_max is None else a_max
    if not _front.is_symbolic([a]) and a.dtype.kind in "iub":
        info = _onp.iinfo(a.dtype) if a.dtype.kind != "b" else None
        if info is not None:
            # the result keeps the integer dtype: fractional bounds round inwards, so
            # every result lies inside [a_min, a_max]
            lo = int(max(_onp.ceil(lo), info.min)) if _onp.isfinite(lo) else int(info.min)
            hi = int(min(_onp.floor(hi), info.max)) if _onp.isfinite(hi) else int(info.max)
    return _front.call("clip", [a], out=out, a_min=lo, a_max=hi)


def sort(a, axis=-1, kind=None, order=None):
    """A sorted copy along ``axis`` (of the flattened array if None)."""
    a = _arr(a)
    if axis is None:
        from ._manipulation import reshape
        a, axis = reshape(a, (-1,)), 0
    return _front.call("sort", [a], axis=axis, is_ascend=True)


def argsort(a, axis=-1, kind=None, order=None):
    """The int64 indices that sort ``a`` along ``axis`` (of the flattened array if None);
    stable, as NumPy's ``kind='stable'``."""
    a = _arr(a)
    if axis is None:
        from ._manipulation import reshape
        a, axis = reshape(a, (-1,)), 0
    return _front.call("argsort", [a], axis=axis, is_ascend=True, dtype=_onp.int64)
