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
from .multiarray import array, asarray

__all__ = ["where", "nonzero", "argwhere", "flatnonzero", "take", "take_along_axis", "clip",
           "sort", "argsort"]


def _arr(a, like=None):
    if isinstance(a, NDArray) or _front.is_symbolic([a]):
        return a
    return asarray(a) if like is None else array(a, ctx=like._ctx,
                                                   dtype=_onp.asarray(a).dtype)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` is true, else ``y`` (all broadcast); with only
    ``condition``, ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise op_error("where", "either both or neither of x and y must be given")
    cond = _arr(condition)
    if _front.is_symbolic([cond, x, y]):
        return _front.call("where", [cond, x, y])
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


def clip(a, a_min, a_max, out=None):
    """``a`` limited to ``[a_min, a_max]`` (either may be None, not both)."""
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
            lo = int(max(lo, info.min)) if _onp.isfinite(lo) else int(info.min)
            hi = int(min(hi, info.max)) if _onp.isfinite(hi) else int(info.max)
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
