"""``quantile``, ``percentile``, ``median`` and their ``nan`` versions (differentiable:
the gradient goes to the selected elements; the ``nan`` ones refuse Symbols)."""
import numpy as _onp

from ..base import op_error
from ..ops.shape_utils import normalize_axes
from . import _front
from ._dtypes import default_float
from ._reductions import _finish
from ._stats_common import (_arr, _const, _float_of, _host, _in, _is_sym, _no_symbol,
                            _shape, _slice, _SYMBOLIC, _ufuncs)

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian"]


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_q(fn, q, scale):
    """``q`` on the host as float64 fractions in [0, 1] (``scale`` 100 for percentiles)."""
    qh = _host(q).astype(_onp.float64)
    if qh.size and (_onp.isnan(qh).any() or qh.min() < 0 or qh.max() > scale):
        bound = "[0, 100]" if scale == 100 else "[0, 1]"
        raise op_error(fn, f"q must be in {bound}, got values in [{qh.min()}, {qh.max()}]")
    return qh / scale


def _q_operand(fn, q, scale, symbolic, ctx):
    """``(fractions, q's shape)``: ``q`` divided by ``scale`` as a float64 array, or a
    Symbol when ``symbolic`` (a host ``q`` is checked; a Symbol ``q`` cannot be)."""
    if _is_sym(q):
        qshape = _shape(fn, q)
        return _ufuncs().true_divide(_front.call("cast", [q], dtype=_onp.float64), scale), \
            qshape
    qh = _check_q(fn, q, scale)
    return _in(qh, _onp.float64, _SYMBOLIC if symbolic else ctx), qh.shape


def _round_half_even(u, x):
    """NumPy's rounding of non-negative ``x`` (halves to the even neighbour), composed."""
    lo = u.floor(x)
    frac = u.subtract(x, lo)
    odd = u.equal(u.mod(lo, 2.0), 1.0)
    up = u.logical_or(u.greater(frac, 0.5), u.logical_and(u.equal(frac, 0.5), odd))
    return u.add(lo, _front.call("cast", [up], dtype=_onp.float64))


def _gather(ordered, pos, axis):
    """``ordered`` at the (integral, float64) positions ``pos`` along its last axis."""
    idx = _front.call("cast", [pos], dtype=_onp.int64)
    return _front.call("take", [ordered, idx], axis=axis, mode="clip")


def _moved(a, axes, shape):
    """``a`` with the axes ``axes`` moved last and merged: shape ``kept + (N,)``."""
    from ._manipulation import reshape, transpose
    kept = [i for i in range(len(shape)) if i not in axes]
    order = kept + list(axes)
    if order != list(range(len(shape))):
        a = transpose(a, order)
    size = int(_onp.prod([shape[i] for i in axes], dtype=_onp.int64))
    return reshape(a, tuple(shape[i] for i in kept) + (size,)), size


def _nan_slices(u, y, ordered, n, kept_ndim, qndim):
    """``y`` with NaN wherever its slice of ``ordered`` (sorted: NaN last) holds a NaN."""
    from ._manipulation import broadcast_to, reshape
    last = _slice(ordered, kept_ndim, n - 1, n)
    yshape = _shape("quantile", y)
    mask = reshape(u.isnan(last), yshape[:kept_ndim] + (1,) * qndim)
    mask = _front.call("cast", [broadcast_to(mask, yshape)], dtype=_front.dtype_of(y))
    nans = u.add(u.multiply(y, 0.0), float("nan"))
    return _front.call("where", [mask, nans, y])


def _lerp(u, a, b, t):
    """``a + (b - a) t``, from ``b``'s end when ``t >= 0.5`` (NumPy's form: exact at
    ``t = 1``, and an infinite end point gives that infinity rather than NaN)."""
    from ._manipulation import broadcast_to
    diff = u.subtract(b, a)
    near_a = u.add(a, u.multiply(diff, t))
    near_b = u.subtract(b, u.multiply(diff, u.subtract(1.0, t)))
    shape = _shape("quantile", near_a)
    cond = broadcast_to(_front.call("cast", [u.greater_equal(t, 0.5)],
                                    dtype=_front.dtype_of(near_a)), shape)
    return _front.call("where", [cond, near_b, near_a])


def _quantile(fn, a, q, axis, out, method, keepdims, scale, skip_nan):
    a = _arr(a)
    if method not in _METHODS:
        raise op_error(fn, f"interpolation must be one of {_METHODS}, got {method!r}")
    if skip_nan:
        return _nan_quantile(fn, a, q, axis, out, method, keepdims, scale)
    shape = _shape(fn, a)
    symbolic = _is_sym(a) or _is_sym(q)
    dtype = _onp.dtype(_front.dtype_of(a) or default_float())
    if dtype.kind == "b":
        a, dtype = _front.call("cast", [a], dtype=_onp.int64), _onp.dtype(_onp.int64)
    axes = _quantile_axes(fn, axis, len(shape))
    kept_shape = tuple(d for i, d in enumerate(shape) if i not in axes)
    flat, n = _moved(a, axes, shape)
    if n == 0:
        raise op_error(fn, f"cannot take a quantile over a zero-size axis of an array of "
                       f"shape {shape} (axis={axis})")
    qa, qshape = _q_operand(fn, q, scale, symbolic, None if symbolic else a._ctx)
    from ._indexing import sort
    u = _ufuncs()
    ordered = sort(flat, axis=-1)
    k = len(kept_shape)
    pos = u.multiply(qa, float(n - 1))
    lo = {"lower": u.floor, "linear": u.floor, "midpoint": u.floor, "higher": u.ceil,
          "nearest": lambda p: _round_half_even(u, p)}[method](pos)
    y = _gather(ordered, lo, k)
    if method in ("linear", "midpoint"):
        dt = _float_of(dtype)
        work = _onp.dtype(_onp.float32) if dt.itemsize < 4 else dt    # half: in float32
        hi = u.minimum(u.add(lo, 1.0), float(n - 1))      # NumPy's next order statistic
        frac = u.subtract(pos, lo) if method == "linear" else \
            u.multiply(_front.call("cast", [u.greater(pos, lo)], dtype=_onp.float64), 0.5)
        y = _lerp(u, _front.call("cast", [y], dtype=work),
                  _front.call("cast", [_gather(ordered, hi, k)], dtype=work),
                  _front.call("cast", [frac], dtype=work))
        if work != dt:
            y = _front.call("cast", [y], dtype=dt)
    if dtype.kind == "f":
        y = _nan_slices(u, y, ordered, n, k, len(qshape))
    from ._manipulation import reshape, transpose
    if k and qshape:
        y = transpose(y, tuple(range(k, k + len(qshape))) + tuple(range(k)))
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims \
        else kept_shape
    return _finish(fn, reshape(y, tuple(qshape) + out_shape), out)


def _quantile_axes(fn, axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    return tuple(sorted(normalize_axes(fn, axes, ndim, "axis")))


def _nan_positions(qh, counts, method):
    """The lower and upper gather indices and the interpolation weight of each quantile
    ``qh`` (shape Q) in slices holding ``counts`` (shape K) valid sorted values."""
    n = _onp.maximum(counts, 1)[..., None].astype(_onp.float64)
    pos = qh.reshape(-1) * (n - 1)
    lo = {"higher": _onp.ceil, "nearest": _onp.around}.get(method, _onp.floor)(pos)
    hi = _onp.minimum(lo + 1, n - 1)            # NumPy's next order statistic
    frac = 0.5 * (pos > lo) if method == "midpoint" else pos - lo
    return lo.astype(_onp.int64), hi.astype(_onp.int64), frac


def _nan_quantile(fn, a, q, axis, out, method, keepdims, scale):
    """The NaN-skipping quantiles: the number of valid values of each slice, hence the
    positions, are read on the host (arrays only)."""
    _no_symbol(fn, a, q)
    qh = _check_q(fn, q, scale)
    if a.dtype.kind == "b":
        a = a.astype(_onp.int64)
    axes = _quantile_axes(fn, axis, a.ndim)
    kept_shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    flat, n = _moved(a, axes, tuple(a.shape))
    if n == 0:
        raise op_error(fn, f"cannot take a quantile over a zero-size axis of an array of "
                       f"shape {tuple(a.shape)} (axis={axis})")
    host = flat.asnumpy()
    isnan = _onp.isnan(host) if host.dtype.kind == "f" else _onp.zeros(host.shape, bool)
    counts = (~isnan).sum(-1)
    lo, hi, frac = _nan_positions(qh, counts, method)
    from ._indexing import sort, take_along_axis, where
    ordered = sort(flat, axis=-1)
    ctx = a._ctx
    y = take_along_axis(ordered, _const(lo, _onp.int64, ctx), axis=-1)
    if method in ("linear", "midpoint"):
        dt = _float_of(a.dtype)
        work = _onp.dtype(_onp.float32) if dt.itemsize < 4 else dt    # half: in float32
        upper = take_along_axis(ordered, _const(hi, _onp.int64, ctx), axis=-1)
        y = _lerp(_ufuncs(), y.astype(work, copy=False), upper.astype(work, copy=False),
                  _const(frac, work, ctx)).astype(dt, copy=False)
    if (counts == 0).any():
        y = where(_const(_onp.broadcast_to((counts == 0)[..., None], lo.shape), _onp.bool_,
                         ctx), _onp.nan, y)
    from ._manipulation import moveaxis, reshape
    y = moveaxis(y, -1, 0)
    shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape)) if keepdims \
        else kept_shape
    return _finish(fn, reshape(y, qh.shape + shape), out)


def _method(interpolation, method):
    return interpolation if method is None else method


def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
             keepdims=False, method=None):
    """The ``q``-th quantiles (``q`` in [0, 1], a number or an array) of ``a`` over
    ``axis`` (None: all elements; an int or a tuple). ``interpolation`` (or NumPy 2's name
    ``method``) between neighbouring order statistics: 'linear', 'lower', 'higher',
    'midpoint', 'nearest'. The result has shape ``q.shape + reduced shape``; 'linear' and
    'midpoint' give a float (integers: the default float), the others ``a``'s dtype. A
    slice holding NaN gives NaN. Differentiable w.r.t. ``a`` (the gradient goes to the
    selected elements, weighted by the interpolation); not w.r.t. ``q``.

    >>> from mxlite import np
    >>> np.quantile(np.array([[1., 2, 3, 4], [5, 6, 7, 9]]), 0.5, axis=1).tolist()
    [2.5, 6.5]
    """
    return _quantile("quantile", a, q, axis, out, _method(interpolation, method), keepdims,
                     1.0, False)


def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
               keepdims=False, method=None):
    """The ``q``-th percentiles (``q`` in [0, 100]) of ``a``; otherwise as ``quantile``.

    >>> from mxlite import np
    >>> float(np.percentile(np.array([1., 2, 3, 4]), 25))
    1.75
    """
    return _quantile("percentile", a, q, axis, out, _method(interpolation, method), keepdims,
                     100.0, False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of ``a`` over ``axis`` (``quantile(a, 0.5)``; differentiable)."""
    return _quantile("median", a, 0.5, axis, out, "linear", keepdims, 1.0, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, interpolation="linear",
                keepdims=False, method=None):
    """``quantile`` ignoring NaN (an all-NaN slice gives NaN); differentiable w.r.t. the
    non-NaN elements of ``a``."""
    return _quantile("nanquantile", a, q, axis, out, _method(interpolation, method),
                     keepdims, 1.0, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, interpolation="linear",
                  keepdims=False, method=None):
    """``percentile`` ignoring NaN (an all-NaN slice gives NaN)."""
    return _quantile("nanpercentile", a, q, axis, out, _method(interpolation, method),
                     keepdims, 100.0, True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``median`` ignoring NaN (an all-NaN slice gives NaN)."""
    return _quantile("nanmedian", a, 0.5, axis, out, "linear", keepdims, 1.0, True)
