"""``mx.np.pad``: NumPy's ``pad`` over registered operators, one axis after the other.

Padding axis 0, then axis 1 of that result, and so on, is NumPy's own order (the corners
come from the regions padded before), so every mode composes per axis:

* 'constant' and 'empty' (zeros): ``concatenate`` with constant blocks;
* 'edge', 'wrap', and 'reflect'/'symmetric' (``reflect_type='even'``): the padded axis is
  a pure re-indexing, ``take`` along the axis with the positions NumPy's ``pad`` gives
  ``arange(n)`` (computed on the host from the shape only);
* 'linear_ramp', 'mean', and 'reflect'/'symmetric' with ``reflect_type='odd'``: the padded
  axis is an affine map of the axis, ``M @ x + c``, with ``M`` NumPy's padding of the
  identity matrix and ``c`` its padding of zeros (``dot`` along the axis);
* 'maximum', 'minimum', 'median': the statistic of the first/last ``stat_length``
  elements (registered reductions; the median from ``sort``), broadcast and concatenated.

So a float array's padding is recorded and differentiable for every mode (MXNet 1.9.1's
supported constant, edge, reflect, symmetric, maximum and minimum, and NumPy's others).
Integer and boolean arrays (not differentiable) and a callable ``mode`` are padded on
the host by NumPy itself, which also rounds integer statistics as NumPy does.
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._gather import arr, int_array, numpy_errors, refuse_symbols

__all__ = ["pad"]

_ALLOWED = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
            "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
            "linear_ramp": ("end_values",), "mean": ("stat_length",),
            "maximum": ("stat_length",), "minimum": ("stat_length",),
            "median": ("stat_length",)}
_STATISTICS = ("maximum", "minimum", "median")


def _pairs(fn, name, value, ndim, integral):
    """``value`` (a number, a pair, or one pair per axis) as an ``(ndim, 2)`` host array."""
    h = _onp.asarray(value.asnumpy() if isinstance(value, NDArray) else value)
    if integral:
        if h.size and h.dtype.kind not in "iu":
            raise op_error(fn, f"{name} must hold integers, got {value!r}")
        h = h.astype(_onp.int64)
        if (h < 0).any():
            raise op_error(fn, f"{name} must hold non-negative values, got {value!r}")
    try:
        return _onp.broadcast_to(h, (ndim, 2)) if h.ndim <= 2 else None
    except ValueError:
        raise op_error(fn, f"{name} {value!r} cannot be broadcast to one (before, after) pair "
                       f"per axis of a {ndim}-d array") from None


def pad(array, pad_width, mode="constant", **kwargs):  # noqa: A002  (NumPy's argument name)
    """``array`` padded by ``pad_width`` (an int, ``(before, after)``, or one pair per axis)
    with ``mode`` and its keywords as ``numpy.pad`` (module docstring): 'constant'
    (``constant_values``), 'edge', 'linear_ramp' (``end_values``), 'maximum', 'mean',
    'median', 'minimum' (``stat_length``), 'reflect', 'symmetric' (``reflect_type``),
    'wrap', 'empty' (zeros here), or a callable (host). Differentiable for float arrays."""
    a = arr(array)
    refuse_symbols("pad", a)
    widths = _pairs("pad", "pad_width", pad_width, a.ndim, True)
    if callable(mode) or a.dtype.kind not in "fV":
        return _host_pad(a, widths, mode, kwargs)
    if mode not in _ALLOWED:
        raise op_error("pad", f"mode must be one of {sorted(_ALLOWED)} or a callable, got "
                       f"{mode!r}")
    unknown = set(kwargs) - set(_ALLOWED[mode])
    if unknown:
        raise op_error("pad", f"unsupported keyword(s) {sorted(unknown)} for mode {mode!r}")
    per_axis = {k: _pairs("pad", k, v, a.ndim, k == "stat_length") if v is not None else None
                for k, v in kwargs.items() if k != "reflect_type"}
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise op_error("pad", f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    y = a
    for ax in range(a.ndim):
        lo, hi = (int(w) for w in widths[ax])
        if lo or hi:
            kw = {k: (tuple(v[ax]) if v is not None else None) for k, v in per_axis.items()}
            y = _pad_axis(y, ax, lo, hi, mode, kw, reflect_type)
    return y if y is not a else _front.call("_copy", [a])


def _host_pad(a, widths, mode, kwargs):
    from .multiarray import array as make
    with numpy_errors("pad"):
        out = _onp.pad(a.asnumpy(), widths, mode=mode, **kwargs)
    return make(out, dtype=out.dtype, ctx=a._ctx)


def _axis_check(y, ax, lo, hi, mode, kw):
    """NumPy's own checks for this axis, on a 1-D stand-in of the axis' length."""
    n = y.shape[ax]
    kw = {k: v for k, v in kw.items() if v is not None}
    with numpy_errors("pad"):
        _onp.pad(_onp.zeros(n), (lo, hi), mode=mode, **kw)


def _pad_axis(y, ax, lo, hi, mode, kw, reflect_type):
    n = y.shape[ax]
    if mode in ("constant", "empty"):
        values = kw.get("constant_values") or (0, 0)
        return _concat_blocks(y, ax, lo, hi, values)
    if mode not in ("constant", "empty") and n == 0:
        raise op_error("pad", f"cannot extend the empty axis {ax} of shape {tuple(y.shape)} "
                       f"with mode {mode!r} (only 'constant' and 'empty')")
    if mode in _STATISTICS:
        _axis_check(y, ax, lo, hi, mode, kw)
        return _pad_statistic(y, ax, lo, hi, mode, kw.get("stat_length"))
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and reflect_type == "even"):
        with numpy_errors("pad"):
            index = _onp.pad(_onp.arange(n), (lo, hi), mode=mode)
        return _front.call("take", [y, int_array(index, y._ctx)], axis=ax, mode="clip")
    return _pad_affine(y, ax, lo, hi, mode, kw, reflect_type)


def _blocks_shape(y, ax, width):
    shape = list(y.shape)
    shape[ax] = width
    return tuple(shape)


def _concat_blocks(y, ax, lo, hi, values):
    from ._creation import full
    from ._manipulation import concatenate
    parts = []
    if lo:
        parts.append(full(_blocks_shape(y, ax, lo), values[0], dtype=y.dtype, ctx=y._ctx))
    parts.append(y)
    if hi:
        parts.append(full(_blocks_shape(y, ax, hi), values[1], dtype=y.dtype, ctx=y._ctx))
    return concatenate(parts, axis=ax)


def _pad_affine(y, ax, lo, hi, mode, kw, reflect_type):
    """``M @ x + c`` along axis ``ax``: M is NumPy's padding of the identity matrix (the
    linear part), c its padding of zeros (linear_ramp's end values)."""
    from ._manipulation import moveaxis, reshape
    from .multiarray import array as make
    n = y.shape[ax]
    extra = {"reflect_type": reflect_type} if mode in ("reflect", "symmetric") else {}
    if mode == "mean" and kw.get("stat_length") is not None:
        extra["stat_length"] = (kw["stat_length"], (1, 1))
    end = kw.get("end_values") if mode == "linear_ramp" else None
    with numpy_errors("pad"):
        m = _onp.pad(_onp.eye(n), ((lo, hi), (0, 0)), mode=mode, **extra)
        c = _onp.pad(_onp.zeros(n), (lo, hi), mode=mode, end_values=end) if end else None
    x = moveaxis(y, ax, 0)
    rest = tuple(x.shape[1:])
    x2 = reshape(x, (n, -1))
    out = _front.call("dot", [make(m, dtype=y.dtype, ctx=y._ctx), x2])
    if c is not None and c.any():
        out = out + make(c.reshape(-1, 1), dtype=y.dtype, ctx=y._ctx)
    return moveaxis(reshape(out, (n + lo + hi,) + rest), 0, ax)


def _pad_statistic(y, ax, lo, hi, mode, stat_length):
    """The statistic of the first / last ``stat_length`` elements along ``ax`` (all of
    them if None), broadcast over the padding."""
    from ._manipulation import broadcast_to, concatenate
    n = y.shape[ax]
    s_lo, s_hi = (n, n) if stat_length is None else (min(int(stat_length[0]), n),
                                                     min(int(stat_length[1]), n))
    parts = []
    for width, window in ((lo, slice(0, s_lo)), (hi, slice(n - s_hi, n))):
        if width:
            key = (slice(None),) * ax + (window,)
            stat = _statistic(y[key], ax, mode)
            parts.append(broadcast_to(stat, _blocks_shape(y, ax, width)))
    head = parts[:1] if lo else []
    tail = parts[-1:] if hi else []
    return concatenate(head + [y] + tail, axis=ax)


def _statistic(w, ax, mode):
    from ._reductions import max as amax, mean, min as amin
    if mode == "maximum":
        return amax(w, axis=ax, keepdims=True)
    if mode == "minimum":
        return amin(w, axis=ax, keepdims=True)
    from ._indexing import sort
    m = w.shape[ax]
    s = sort(w, axis=ax)
    mid = int_array(sorted({(m - 1) // 2, m // 2}), w._ctx)
    return mean(_front.call("take", [s, mid], axis=ax, mode="clip"), axis=ax, keepdims=True)
