"""``mx.np.pad``: NumPy's ``pad`` over registered operators, one axis after the other.

Padding axis 0, then axis 1 of that result, and so on, is NumPy's own order (the corners
come from the regions padded before), so every mode composes per axis:

* 'constant' and 'empty' (zeros): ``concat`` with constant blocks;
* 'edge', 'wrap', and 'reflect'/'symmetric' (``reflect_type='even'``): the padded axis is
  a pure re-indexing, ``_getitem`` along the axis with the positions NumPy's ``pad`` gives
  ``arange(n)`` (computed on the host from the shape only);
* 'maximum', 'minimum', 'mean', 'median': the statistic of the first/last ``stat_length``
  elements (registered reductions; the median from ``sort``), broadcast and concatenated;
* 'linear_ramp', and 'reflect'/'symmetric' with ``reflect_type='odd'``: the padded axis
  is an affine map of the axis, ``M @ x + c``, with ``M`` NumPy's padding of the identity
  matrix and ``c`` its padding of zeros (``dot`` along the axis; arrays only).

So a float array's padding is recorded and differentiable for every mode (MXNet 1.9.1
had constant, edge, reflect, symmetric, maximum and minimum), and inside a traced Gluon
block the same code builds the graph (all modes but the affine ones). Integer and boolean
arrays are padded by the same operators where that is exact, and by NumPy itself on the
host where NumPy rounds (integer 'mean', 'median', 'linear_ramp') or for a callable
``mode``.
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._gather import (arr, ctx_of, dtype_of, is_symbol, numpy_errors, refuse_symbols,
                      shape_of)

__all__ = ["pad"]

_ALLOWED = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
            "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
            "linear_ramp": ("end_values",), "mean": ("stat_length",),
            "maximum": ("stat_length",), "minimum": ("stat_length",),
            "median": ("stat_length",)}
_STATISTICS = ("maximum", "minimum", "mean", "median")
_ROUNDED = ("mean", "median", "linear_ramp")      # NumPy rounds these for integer arrays


def _pairs(name, value, ndim, integral):
    """``value`` (a number, a pair, or one pair per axis) as an ``(ndim, 2)`` host array."""
    h = _onp.asarray(value.asnumpy() if isinstance(value, NDArray) else value)
    if integral:
        if h.size and h.dtype.kind not in "iu":
            raise op_error("pad", f"{name} must hold integers, got {value!r}")
        h = h.astype(_onp.int64)
        if (h < 0).any():
            raise op_error("pad", f"{name} must hold non-negative values, got {value!r}")
    try:
        if h.ndim > 2:
            raise ValueError
        return _onp.broadcast_to(h, (ndim, 2))
    except ValueError:
        raise op_error("pad", f"{name} {value!r} cannot be broadcast to one (before, after) "
                       f"pair per axis of a {ndim}-d array") from None


def pad(array, pad_width, mode="constant", **kwargs):  # noqa: A002  (NumPy's argument name)
    """``array`` padded by ``pad_width`` (an int, ``(before, after)``, or one pair per axis)
    with ``mode`` and its keywords as ``numpy.pad`` (see the module docstring): 'constant'
    (``constant_values``), 'edge', 'linear_ramp' (``end_values``), 'maximum', 'mean',
    'median', 'minimum' (``stat_length``), 'reflect', 'symmetric' (``reflect_type``),
    'wrap', 'empty' (zeros here), or a callable (host). Differentiable for float arrays.

    >>> x = mx.np.array([[1., 2.], [3., 4.]])
    >>> mx.np.pad(x, ((0, 1), (1, 0)), mode="edge")
    array([[1., 1., 2.],
           [3., 3., 4.],
           [3., 3., 4.]])
    >>> y = mx.np.array([1., 2., 3.])
    >>> y.attach_grad()
    >>> with mx.autograd.record():
    ...     z = mx.np.pad(y, 2, mode="reflect")
    >>> z.backward()
    >>> z, y.grad          # each element's gradient counts its copies
    (array([3., 2., 1., 2., 3., 2., 1.]), array([2., 3., 2.]))"""
    a = arr(array)
    sym = is_symbol(a)
    shape, dt = shape_of("pad", a), dtype_of("pad", a)
    widths = _pairs("pad_width", pad_width, len(shape), True)
    if callable(mode):
        refuse_symbols("pad", a)
        return _host_pad(a, widths, mode, kwargs)
    if mode not in _ALLOWED:
        raise op_error("pad", f"mode must be one of {sorted(_ALLOWED)} or a callable, got "
                       f"{mode!r}")
    unknown = set(kwargs) - set(_ALLOWED[mode])
    if unknown:
        raise op_error("pad", f"unsupported keyword(s) {sorted(unknown)} for mode {mode!r}")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise op_error("pad", f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    affine = mode == "linear_ramp" or (mode in ("reflect", "symmetric") and
                                       reflect_type == "odd")
    # integers: NumPy rounds the statistics and ramps, and wraps the odd reflections
    exact = dt.kind in "fV" or (dt.kind in "iu" and mode not in _ROUNDED and not affine)
    if sym and (affine or (dt.kind in "iu" and not exact)):
        raise op_error("pad", f"mode {mode!r} (reflect_type {reflect_type!r}) of a {dt} "
                       "array cannot be built into a graph; call it on np arrays")
    if not exact and not sym:
        return _host_pad(a, widths, mode, kwargs)
    per_axis = {k: _pairs(k, v, len(shape), k == "stat_length") if v is not None else None
                for k, v in kwargs.items() if k != "reflect_type"}
    y = a
    for ax in range(len(shape)):
        lo, hi = (int(w) for w in widths[ax])
        if lo or hi:
            kw = {k: (tuple(v[ax].tolist()) if v is not None else None)
                  for k, v in per_axis.items()}
            _axis_check(shape[ax], dt, ax, lo, hi, mode, kw, reflect_type)
            y = _pad_axis(y, ax, lo, hi, mode, kw, reflect_type, dt)
    return y if y is not a else _front.call("_copy", [a])


def _host_pad(a, widths, mode, kwargs):
    from .multiarray import array as make
    with numpy_errors("pad"):
        out = _onp.pad(a.asnumpy(), widths, mode=mode, **kwargs)
    return make(out, dtype=out.dtype, ctx=a._ctx)


def _axis_check(n, dt, ax, lo, hi, mode, kw, reflect_type):
    """NumPy's own checks for this axis (widths, statistics, constants that the dtype
    cannot hold), run on a 1-D stand-in of the axis' length and the array's dtype."""
    kw = {k: v for k, v in kw.items() if v is not None}
    if mode in ("reflect", "symmetric"):
        kw["reflect_type"] = reflect_type
    if mode in ("mean", "median"):
        dt = _onp.dtype(_onp.float64)         # NumPy warns (not raises) for a statistic of nothing
    with numpy_errors("pad"):
        _onp.pad(_onp.zeros(n, dtype=dt if dt.kind != "V" else _onp.float32), (lo, hi),
                 mode=mode, **kw)
    if n == 0 and mode not in ("constant", "empty"):
        raise op_error("pad", f"cannot extend the empty axis {ax} with mode {mode!r}")


def _pad_axis(y, ax, lo, hi, mode, kw, reflect_type, dt):
    if mode in ("constant", "empty"):
        values = kw.get("constant_values") or (0, 0)
        return _concat(y, ax, [_block(y, ax, lo, values[0], dt)] if lo else [],
                       [_block(y, ax, hi, values[1], dt)] if hi else [])
    if mode in _STATISTICS:
        return _pad_statistic(y, ax, lo, hi, mode, kw.get("stat_length"), dt)
    n = shape_of("pad", y)[ax]
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and
                                    reflect_type == "even"):
        with numpy_errors("pad"):
            index = _onp.pad(_onp.arange(n), (lo, hi), mode=mode)
        return _front.call("_getitem", [y], key=(slice(None),) * ax + (index,))
    return _pad_affine(y, ax, lo, hi, mode, kw, reflect_type, dt)


def _blocks_shape(y, ax, width):
    shape = list(shape_of("pad", y))
    shape[ax] = width
    return tuple(shape)


def _block(y, ax, width, value, dt):
    """A constant block of ``y``'s shape with ``width`` along ``ax``."""
    shape = _blocks_shape(y, ax, width)
    value = _onp.asarray(value).astype(dt).item()
    if is_symbol(y):
        with _front.symbolic_creation():
            return _front.call("_full", [], shape=shape, val=value, dtype=dt)
    return _front.call("_full", [], shape=shape, val=value, dtype=dt, ctx=ctx_of(y))


def _concat(y, ax, head, tail):
    parts = head + [y] + tail
    return _front.call("concat", parts, dim=ax, num_args=len(parts))


def _pad_affine(y, ax, lo, hi, mode, kw, reflect_type, dt):
    """``M @ x + c`` along axis ``ax``: M is NumPy's padding of the identity matrix (the
    linear part), c its padding of zeros (linear_ramp's end values)."""
    from ._manipulation import moveaxis, reshape
    from .multiarray import array as make
    n = shape_of("pad", y)[ax]
    extra = {"reflect_type": reflect_type} if mode in ("reflect", "symmetric") else {}
    end = kw.get("end_values") if mode == "linear_ramp" else None
    with numpy_errors("pad"):
        m = _onp.pad(_onp.eye(n), ((lo, hi), (0, 0)), mode=mode, **extra)
        c = _onp.pad(_onp.zeros(n), (lo, hi), mode=mode, end_values=end) if end else None
    x = moveaxis(y, ax, 0)
    rest = tuple(x.shape[1:])
    x2 = reshape(x, (n, -1))
    out = _front.call("dot", [make(m, dtype=dt, ctx=y._ctx), x2])
    if c is not None and c.any():
        out = out + make(c.reshape(-1, 1), dtype=dt, ctx=y._ctx)
    return moveaxis(reshape(out, (n + lo + hi,) + rest), 0, ax)


def _pad_statistic(y, ax, lo, hi, mode, stat_length, dt):
    """The statistic of the first / last ``stat_length`` elements along ``ax`` (all of
    them if None), broadcast over the padding."""
    n = shape_of("pad", y)[ax]
    s_lo, s_hi = (n, n) if stat_length is None else (min(int(stat_length[0]), n),
                                                     min(int(stat_length[1]), n))
    blocks = []
    for width, window in ((lo, slice(0, s_lo)), (hi, slice(n - s_hi, n))):
        if width:
            part = _front.call("_getitem", [y], key=(slice(None),) * ax + (window,))
            stat = _statistic(part, ax, mode, window.stop - window.start)
            blocks.append(_front.call("broadcast_to", [stat],
                                      shape=_blocks_shape(y, ax, width)))
    return _concat(y, ax, blocks[:1] if lo else [], blocks[-1:] if hi else [])


def _statistic(w, ax, mode, m):
    """max, min, mean or median of ``w`` along ``ax`` (``m`` elements), keeping the axis."""
    from ._reductions import max as amax, mean, min as amin
    if mode == "maximum":
        return amax(w, axis=ax, keepdims=True)
    if mode == "minimum":
        return amin(w, axis=ax, keepdims=True)
    if mode == "median":
        from ._indexing import sort
        mid = _onp.array(sorted({(m - 1) // 2, m // 2}), dtype=_onp.int64)
        w = _front.call("_getitem", [sort(w, axis=ax)], key=(slice(None),) * ax + (mid,))
    return mean(w, axis=ax, keepdims=True)
