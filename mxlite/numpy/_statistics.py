"""NumPy's statistics, histograms, polynomials, searching and window functions.

Three kinds of function live here:

* differentiable ones, composed of registered operators (``sort``, ``take``,
  ``_take_along_axis``, ``slice_axis``, ``dot``, the ufuncs and reductions), so autograd
  records them and they differentiate to any order: ``quantile``/``percentile``/``median``
  and their ``nan`` versions (the gradient goes to the selected elements), ``diff``,
  ``ediff1d``, ``interp`` (w.r.t. ``x``, ``xp`` and ``fp``), ``polyval``, ``vander``,
  ``cov``, ``corrcoef``, ``correlate``, ``trapz``, ``unwrap`` (its correction, a multiple
  of the period, is a constant), ``polyadd``, ``polysub``, ``polymul``, ``bincount`` with
  ``weights`` (w.r.t. the weights) and the windows ``hanning``, ``hamming``, ``blackman``;
* counting and searching ones, whose results are counts or indices (int64, not
  differentiable), computed on the host with NumPy: ``histogram`` and relatives,
  ``bincount`` without weights, ``digitize``, ``searchsorted``;
* NumPy "fallbacks" computed on the host (in float64) and not recorded, as MXNet's
  ``mx.np`` ran them with NumPy too: ``polyfit``, ``polydiv``, ``polyint``, ``poly``,
  ``roots``, ``i0``.

Dtypes follow ``mx.np``'s rule of no silent float64: a float result is in the inputs'
float dtype (the widest of them), integer inputs give the default float (float32, or
float64 after ``npx.set_np(dtype=True)``); NumPy often widens to float64 instead.
Counts and indices are int64.

Symbols (a hybridized Gluon block): the quantiles (``q`` a number, a list or a Symbol),
``median``, ``diff``, ``ediff1d``, ``trapz``, ``polyval``, ``vander``, ``cov``,
``corrcoef``, the windows and ``histogram`` (an int ``bins`` with ``range``, or given
edges) build graph nodes, using the shapes a traced Symbol knows;
the functions that read values (the ``nan`` quantiles, whose positions depend on the NaN
count, ``interp``, ``correlate``, ``unwrap``, the counting, searching and fallback ones)
refuse Symbols with an MXNetError.
"""
import math

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from ..ops.shape_utils import normalize_axes, normalize_axis
from . import _front
from ._dtypes import as_dtype, default_float
from ._reductions import _finish
from .multiarray import array, asarray, ndarray, to_ctx

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "bincount",
           "digitize", "searchsorted", "interp", "diff", "ediff1d", "polyval", "polyfit",
           "polyadd", "polysub", "polymul", "polydiv", "polyint", "poly", "roots", "vander",
           "cov", "corrcoef", "correlate", "trapz", "unwrap", "i0", "hanning", "hamming",
           "blackman"]


# ---------------------------------------------------------------------------- helpers

def _arr(a):
    """``a`` as an np array (legacy NDArrays viewed as np arrays, recorded as identities;
    Symbols as they are)."""
    return a if isinstance(a, ndarray) or _is_sym(a) else asarray(a)


_SYMBOLIC = "symbolic"      # the "context" of operands that must be Symbols


def _is_sym(x):
    from ..symbol.symbol import Symbol
    return isinstance(x, Symbol)


def _where(*xs):
    """Where new constants go: ``_SYMBOLIC`` when an operand is a Symbol, else the
    operands' context."""
    return _SYMBOLIC if any(_is_sym(x) for x in xs) else _ctx(*xs)


def _sym_const(values, dtype):
    """Host ``values`` as a constant Symbol (``_full`` nodes joined)."""
    values = _onp.asarray(values)
    with _front.symbolic_creation():
        parts = [_front.call("_full", [], shape=(1,), val=v.item(), dtype=dtype)
                 for v in values.reshape(-1)]
        if not parts:
            return _front.call("_zeros", [], shape=values.shape, dtype=dtype)
        y = parts[0] if len(parts) == 1 else _front.call("concat", parts, dim=0,
                                                          num_args=len(parts))
        return _front.call("reshape", [y], shape=values.shape)


def _in(v, dtype, ctx):
    """An operand as an np array (or Symbol) of ``dtype``: arrays and Symbols cast
    (recorded), anything else a new constant on ``ctx`` (``_SYMBOLIC``: a Symbol)."""
    if _is_sym(v):
        return v if _front.dtype_of(v) == dtype else _front.call("cast", [v], dtype=dtype)
    if ctx is _SYMBOLIC:
        return _sym_const(_host(v), dtype)
    return _arr(v).astype(dtype, copy=False) if isinstance(v, NDArray) else \
        _const(v, dtype, ctx)


def _no_symbol(fn, *xs):
    if _front.is_symbolic([x for x in xs if x is not None]):
        raise op_error(fn, "reads the values of its inputs (its result's shape depends on "
                       "them, or it runs on the host), which a Symbol does not have; call it "
                       "on arrays, outside a hybridized block")


def _host(x):
    """``x`` as a NumPy array (arrays copied to the host, lists, also of arrays, converted
    as NumPy does)."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)) and any(isinstance(v, NDArray) for v in x):
        return _onp.asarray([_host(v) for v in x])
    return _onp.asarray(x)


def _ctx(*xs):
    for x in xs:
        if isinstance(x, NDArray):
            return x._ctx
    return to_ctx(None)


def _float_of(*dtypes):
    """The widest float among ``dtypes`` (None entries skipped), else the default float."""
    floats = [_onp.dtype(d) for d in dtypes if d is not None and _onp.dtype(d).kind == "f"]
    if not floats:
        return default_float()
    return max(floats, key=lambda d: d.itemsize)


def _dtype_of(x):
    """The dtype ``x`` has (an array) or gets from mx.np (a list or number: None, that is
    'no float preference')."""
    if isinstance(x, (NDArray, _onp.ndarray)):
        return _onp.dtype(x.dtype)
    if _is_sym(x):
        return _front.dtype_of(x)
    return None


def _const(value, dtype, ctx):
    """A host value as an (unrecorded) np array of ``dtype`` on ``ctx``."""
    return array(_onp.asarray(value), dtype=dtype, ctx=ctx)


def _numpy(fn, func, *args, **kwargs):
    """``func(*args, **kwargs)`` with NumPy's errors turned into MXNetErrors naming ``fn``."""
    try:
        return func(*args, **kwargs)
    except (ValueError, TypeError, IndexError, ZeroDivisionError,
            _onp.linalg.LinAlgError) as err:
        raise op_error(fn, str(err)) from None


def _from_host(fn, value, ctx, float_dtype):
    """A host result as an np array on ``ctx``: floats in ``float_dtype``, integers as
    they are, complex results refused unless real (mxlite arrays are real)."""
    value = _onp.asarray(value)
    if value.dtype.kind == "c":
        if _onp.any(value.imag != 0):
            raise op_error(fn, "the result is complex, and mxlite arrays are real")
        value = value.real
    dt = float_dtype if value.dtype.kind == "f" else value.dtype
    return array(value, dtype=dt, ctx=ctx)


def _slice(a, axis, begin, end):
    """``a[begin:end]`` along ``axis`` (recorded; works on Symbols)."""
    return _front.call("slice_axis", [a], axis=axis, begin=begin, end=end)


def _ufuncs():
    from . import _ufuncs as u
    return u


# ---------------------------------------------------------------------------- quantiles

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _shape(fn, x):
    """The shape of an array, or of a Symbol while a block is traced, else MXNetError."""
    shape = _front.shape_of(x) if _is_sym(x) else tuple(_arr(x).shape)
    if shape is None or any(d < 0 for d in shape):
        raise op_error(fn, "needs the shape of its input, which this Symbol does not know "
                       "(symbols know it while a Gluon block is traced on arrays)")
    return tuple(shape)


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


# ---------------------------------------------------------------------------- histograms

def _edges_dtype(a, bins):
    if isinstance(bins, NDArray) and _onp.dtype(bins.dtype).kind == "f":
        return _onp.dtype(bins.dtype)
    return _float_of(_dtype_of(a), _dtype_of(bins) if not isinstance(bins, str) else None)


def _weights_dtype(weights, density, counts_dtype=_onp.int64):
    if density:
        return _float_of(_dtype_of(weights))
    if weights is None:
        return _onp.dtype(counts_dtype)
    wd = _dtype_of(weights)
    return _onp.dtype(wd) if wd is not None else _onp.asarray(weights).dtype


def _bins_arg(bins):
    """``bins`` for NumPy: arrays to the host, also inside a per-axis sequence."""
    if isinstance(bins, (list, tuple)):
        return [_host(b) if isinstance(b, NDArray) else b for b in bins]
    return _host(bins) if isinstance(bins, NDArray) else bins


def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    """The histogram of the flattened ``a``: ``(counts, bin_edges)``. ``bins``: a number
    of equal bins over ``range`` (default: the data's min to max), an increasing array of
    edges, or one of NumPy's estimator names ('auto', 'fd', ...). Counts are int64 (with
    ``weights``: the weights' dtype; with ``density``, ``normed`` being its old name: a
    float); edges are float (``bins``' dtype when given as a float array). Computed on the
    host; not differentiable (counts). On a Symbol (a hybridized block) the registered
    ``_histogram`` operator counts, for an int ``bins`` with ``range`` or given edges.

    >>> from mxlite import np
    >>> c, e = np.histogram(np.array([0.5, 1.5, 1.7, 3.9]), bins=2, range=(0, 4))
    >>> c.tolist(), e.tolist()
    ([3, 1], [0.0, 2.0, 4.0])
    """
    density = bool(density or normed)
    if _is_sym(a) or _is_sym(bins):
        return _symbolic_histogram(a, bins, range, weights, density)
    _no_symbol("histogram", a, bins, weights)
    counts, edges = _numpy("histogram", _onp.histogram, _host(a), bins=_bins_arg(bins),
                           range=range,
                           weights=None if weights is None else _host(weights),
                           density=density)
    ctx = _ctx(a, bins, weights)
    return (array(counts, dtype=_weights_dtype(weights, density), ctx=ctx),
            array(edges, dtype=_edges_dtype(a, bins), ctx=ctx))


def _symbolic_histogram(a, bins, range, weights, density):  # noqa: A002
    """``histogram`` in a graph: the registered ``_histogram`` operator, for the bins whose
    number is known without the data (an int with ``range``, or edges)."""
    if weights is not None or density:
        raise op_error("histogram", "weights and density need arrays, not Symbols")
    dt = _float_of(_dtype_of(a))
    data = _in(a, dt, _SYMBOLIC)
    if isinstance(bins, (int, _onp.integer)):
        if range is None:
            raise op_error("histogram", "with a Symbol, an int bins needs range=(low, high) "
                           "(the data's range is not known)")
        low, high = (float(v) for v in range)
        if int(bins) < 1 or not low <= high:
            raise op_error("histogram", f"bins must be positive and range increasing, got "
                           f"bins={bins}, range={range}")
        counts, edges = _front.call("_histogram", [data], bin_cnt=int(bins),
                                    range=(low, high))
        return counts, edges
    if isinstance(bins, str):
        raise op_error("histogram", f"bins={bins!r} estimates from the data: not with a "
                       "Symbol")
    if not _is_sym(bins):
        host = _host(bins)
        if host.ndim != 1 or host.size < 2 or _onp.any(_onp.diff(host) < 0):
            raise op_error("histogram", "bins must be 1-d, increasing, with at least 2 "
                           f"edges, got {host.tolist()}")
    counts, edges = _front.call("_histogram", [data, _in(bins, dt, _SYMBOLIC)])
    return counts, edges


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges ``histogram`` would use (float; host computation)."""
    _no_symbol("histogram_bin_edges", a, bins, weights)
    edges = _numpy("histogram_bin_edges", _onp.histogram_bin_edges, _host(a),
                   bins=_bins_arg(bins), range=range,
                   weights=None if weights is None else _host(weights))
    return array(edges, dtype=_edges_dtype(a, bins), ctx=_ctx(a, bins, weights))


def histogram2d(x, y, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    """The 2-d histogram of points ``(x, y)``: ``(H, xedges, yedges)``; ``H`` is float,
    as NumPy's (counts, weighted sums or densities). Host computation, not differentiable."""
    density = bool(density or normed)
    _no_symbol("histogram2d", x, y, weights)
    h, xe, ye = _numpy("histogram2d", _onp.histogram2d, _host(x), _host(y),
                       bins=_bins_arg(bins), range=range, density=density,
                       weights=None if weights is None else _host(weights))
    ctx = _ctx(x, y, weights)
    fdt = _float_of(_dtype_of(x), _dtype_of(y), _dtype_of(weights))
    return (array(h, dtype=fdt, ctx=ctx), array(xe, dtype=fdt, ctx=ctx),
            array(ye, dtype=fdt, ctx=ctx))


def histogramdd(sample, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    """The D-dimensional histogram of ``sample`` (``(N, D)``): ``(H, [edges per axis])``,
    ``H`` float as NumPy's. Host computation, not differentiable."""
    density = bool(density or normed)
    _no_symbol("histogramdd", sample, weights)
    points = [_host(v) for v in sample] if isinstance(sample, (list, tuple)) else \
        _host(sample)                   # a sequence holds one coordinate array per axis
    h, edges = _numpy("histogramdd", _onp.histogramdd, points, bins=_bins_arg(bins),
                      range=range, density=density,
                      weights=None if weights is None else _host(weights))
    ctx = _ctx(sample, weights)
    fdt = _float_of(_dtype_of(sample), _dtype_of(weights))
    return array(h, dtype=fdt, ctx=ctx), [array(e, dtype=fdt, ctx=ctx) for e in edges]


def _int_indices(fn, x, name):
    """``x`` (1-d, non-negative integers) on the host, or an MXNetError."""
    xh = _host(x)
    if xh.size == 0 and xh.dtype.kind == "f" and not isinstance(x, NDArray):
        xh = xh.astype(_onp.int64)
    if xh.dtype.kind not in "iub":
        raise op_error(fn, f"{name} must hold integers, got dtype {xh.dtype}")
    if xh.ndim != 1:
        raise op_error(fn, f"{name} must be 1-d, got shape {xh.shape}")
    if xh.size and xh.min() < 0:
        raise op_error(fn, f"{name} must be non-negative, got a minimum of {xh.min()}")
    return xh.astype(_onp.int64)


def bincount(x, weights=None, minlength=0):
    """How often each value ``0..max(x)`` occurs in ``x`` (1-d non-negative integers), at
    least ``minlength`` entries. Counts are int64 (computed on the host). With
    ``weights`` (``x``'s shape) the sums of the weights instead, in the weights' float
    dtype (integers: the default float), recorded: differentiable w.r.t. ``weights``.

    >>> from mxlite import np
    >>> np.bincount(np.array([0, 1, 1, 3], dtype='int64')).tolist()
    [1, 2, 0, 1]
    """
    _no_symbol("bincount", x, weights)
    if int(minlength) < 0:
        raise op_error("bincount", f"minlength must be non-negative, got {minlength}")
    xh = _int_indices("bincount", x, "x")
    length = max(int(xh.max()) + 1 if xh.size else 0, int(minlength))
    ctx = _ctx(x, weights)
    if weights is None:
        return array(_onp.bincount(xh, minlength=length), dtype=_onp.int64, ctx=ctx)
    w = _arr(weights)
    if tuple(w.shape) != xh.shape:
        raise op_error("bincount", f"weights must have x's shape {xh.shape}, got "
                       f"{tuple(w.shape)}")
    w = w.astype(_float_of(w.dtype), copy=False)
    zeros = _front.call("_zeros", [], shape=(length,), dtype=w.dtype, ctx=ctx)
    return _front.call("_take_grad", [w, _const(xh, _onp.int64, ctx), zeros], axis=0,
                       mode="clip")


def digitize(x, bins, right=False):
    """The index of the bin of ``bins`` (1-d, monotonic) each value of ``x`` falls in
    (NumPy's ``digitize``; int64, host computation)."""
    _no_symbol("digitize", x, bins)
    idx = _numpy("digitize", _onp.digitize, _host(x), _host(bins), right=right)
    return array(_onp.asarray(idx, dtype=_onp.int64), dtype=_onp.int64, ctx=_ctx(x, bins))


def searchsorted(a, v, side="left", sorter=None):
    """The indices at which ``v`` would be inserted into the sorted 1-d ``a`` to keep it
    sorted (``side`` 'left' or 'right'; ``sorter``: indices sorting ``a``). int64, host
    computation; a number ``v`` gives a 0-d array."""
    _no_symbol("searchsorted", a, v)
    if side not in ("left", "right"):
        raise op_error("searchsorted", f"side must be 'left' or 'right', got {side!r}")
    ah = _host(a)
    if ah.ndim != 1:
        raise op_error("searchsorted", f"a must be 1-d, got shape {ah.shape}")
    idx = _numpy("searchsorted", _onp.searchsorted, ah, _host(v), side=side,
                 sorter=None if sorter is None else _host(sorter))
    return array(_onp.asarray(idx, dtype=_onp.int64), dtype=_onp.int64, ctx=_ctx(a, v))


# ---------------------------------------------------------------------------- interpolation

def _periodic(xph, period):
    """The sorted, wrapped sample positions of a periodic ``interp``: the order of
    ``xp mod period`` with one sample repeated on each side."""
    order = _onp.argsort(_onp.mod(xph, period), kind="stable")
    ext = _onp.concatenate([order[-1:], order, order[:1]])
    shift = _onp.concatenate([[-period], _onp.zeros(len(order)), [period]])
    return ext, shift


def interp(x, xp, fp, left=None, right=None, period=None):
    """The piecewise-linear interpolant through ``(xp, fp)`` (``xp`` 1-d increasing,
    unless ``period`` is given) at ``x``; ``left``/``right`` below/above the range
    (default ``fp[0]``/``fp[-1]``). Float result (the inputs' widest float, else the
    default float). Recorded: differentiable w.r.t. ``x``, ``xp`` and ``fp`` (the bracket
    of each point is found on the host).

    >>> from mxlite import np
    >>> np.interp(np.array([0.5, 1.5]), np.array([0., 1, 2]), np.array([0., 10, 30])).tolist()
    [5.0, 20.0]
    """
    _no_symbol("interp", x, xp, fp)
    dt = _float_of(_dtype_of(x), _dtype_of(xp), _dtype_of(fp))
    ctx = _ctx(x, xp, fp)
    xa, xpa, fpa = (_in(v, dt, ctx) for v in (x, xp, fp))
    if xpa.ndim != 1 or fpa.ndim != 1 or xpa.shape != fpa.shape or xpa.shape[0] == 0:
        raise op_error("interp", f"xp and fp must be 1-d of the same non-zero length, got "
                       f"shapes {tuple(xpa.shape)} and {tuple(fpa.shape)}")
    from ._indexing import take, where
    u = _ufuncs()
    xph = xpa.asnumpy().astype(_onp.float64)
    if period is not None:
        if period == 0:
            raise op_error("interp", "period must be non-zero")
        period = abs(float(period))
        ext, shift = _periodic(xph, period)
        xpa = u.add(u.mod(take(xpa, _const(ext, _onp.int64, ctx)), period),
                    _const(shift, dt, ctx))
        fpa = take(fpa, _const(ext, _onp.int64, ctx))
        xa = u.mod(xa, period)
        xph = xpa.asnumpy().astype(_onp.float64)
        left = right = None
    xh = xa.asnumpy().astype(_onp.float64)
    m = xph.shape[0]
    idx = _onp.clip(_onp.searchsorted(xph, xh, side="right") - 1, 0, max(m - 2, 0))
    i0 = _const(idx, _onp.int64, ctx)
    y0 = take(fpa, i0)
    if m > 1:
        i1 = _const(idx + 1, _onp.int64, ctx)
        x0, x1, y1 = take(xpa, i0), take(xpa, i1), take(fpa, i1)
        slope = u.true_divide(u.subtract(y1, y0), u.subtract(x1, x0))
        y = u.add(y0, u.multiply(slope, u.subtract(xa, x0)))
        # NumPy's guards against non-finite samples: NaN from one end, try the other;
        # still NaN between equal values, that value; a sample point itself, its value
        y = where(u.isnan(y), u.add(y1, u.multiply(slope, u.subtract(xa, x1))), y)
        y = where(u.logical_and(u.isnan(y), u.equal(y0, y1)), y0, y)
        exact = _const(xh == xph[idx], _onp.bool_, ctx)
        y = where(u.logical_and(exact, u.not_equal(y, y0)), y0, y)
        y = where(_const(xh == xph[-1], _onp.bool_, ctx), take(fpa, _const(
            _onp.full(xh.shape, m - 1), _onp.int64, ctx)), y)
    else:
        y = y0
    for mask, value, end in ((xh < xph[0], left, 0), (xh > xph[-1], right, m - 1)):
        if mask.any():
            fill = take(fpa, _const(_onp.full(xh.shape, end), _onp.int64, ctx)) \
                if value is None else float(value)
            y = where(_const(mask, _onp.bool_, ctx), fill, y)
    return y


# ---------------------------------------------------------------------------- differences

def _edge(value, like, shape, axis):
    """``prepend``/``append``: an array, or a number broadcast to ``like``'s ``shape``
    with length 1 along ``axis``."""
    from ._manipulation import broadcast_to, expand_dims
    v = _in(value, _dtype_of(like), _where(like))
    vshape = _shape("diff", v)
    if not vshape:
        return broadcast_to(v, tuple(1 if i == axis else d for i, d in enumerate(shape)))
    if len(vshape) == len(shape) - 1:
        v = expand_dims(v, axis)
    return v


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``out[i] = a[i+1] - a[i]``,
    applied ``n`` times; booleans: ``!=``), after joining ``prepend``/``append`` along
    ``axis``. Recorded; builds graph nodes on Symbols.

    >>> from mxlite import np
    >>> np.diff(np.array([1., 4, 9, 16]), n=2).tolist()
    [2.0, 2.0]
    """
    if int(n) != n or n < 0:
        raise op_error("diff", f"n must be a non-negative int, got {n}")
    n = int(n)
    a = _arr(a)
    shape = _front.shape_of(a) if _is_sym(a) else tuple(a.shape)
    if shape is None or any(d < 0 for d in shape):        # a Symbol of unknown shape
        if prepend is not None or append is not None:
            raise op_error("diff", "prepend/append need the shape of a, which this Symbol "
                           "does not know")
        for _ in range(n):
            a = _ufuncs().subtract(_slice(a, axis, 1, None), _slice(a, axis, 0, -1))
        return a
    if not shape:
        raise op_error("diff", "needs an array of at least one dimension, got a 0-d array")
    axis = normalize_axis("diff", axis, len(shape))
    if n == 0:
        return a
    if prepend is not None or append is not None:
        from ._manipulation import concatenate
        parts = ([_edge(prepend, a, shape, axis)] if prepend is not None else []) + [a] + \
            ([_edge(append, a, shape, axis)] if append is not None else [])
        a = concatenate(parts, axis=axis)
    u = _ufuncs()
    op = u.not_equal if _onp.dtype(_dtype_of(a)).kind == "b" else u.subtract
    for _ in range(n):
        length = _shape("diff", a)[axis]
        if length <= 1:
            return _slice(a, axis, 0, 0)
        a = op(_slice(a, axis, 1, length), _slice(a, axis, 0, length - 1))
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences between consecutive elements of the flattened ``ary``, with
    ``to_begin`` and ``to_end`` (numbers or arrays, flattened, cast to ``ary``'s dtype)
    joined before and after. Recorded (gradients flow to ``ary`` and to array
    ``to_begin``/``to_end``); builds graph nodes on Symbols."""
    from ._manipulation import concatenate, reshape
    a = reshape(_arr(ary), (-1,))
    where, dt = _where(a, to_begin, to_end), _dtype_of(a)
    d = diff(a) if _shape("ediff1d", a)[0] > 1 else _slice(a, 0, 0, 0)
    parts = [reshape(_in(v, dt, where), (-1,)) for v in (to_begin,) if v is not None] + \
        [d] + [reshape(_in(v, dt, where), (-1,)) for v in (to_end,) if v is not None]
    return parts[0] if len(parts) == 1 else concatenate(parts)


def trapz(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points
    ``x`` (1-d, or ``y``'s shape) or spaced ``dx``. Float result (integers: the default
    float); recorded, differentiable w.r.t. ``y`` and ``x``; builds graph nodes on
    Symbols.

    >>> from mxlite import np
    >>> float(np.trapz(np.array([1., 2, 3])))
    4.0
    """
    from ._manipulation import reshape
    from ._reductions import sum as np_sum
    u = _ufuncs()
    y = _arr(y)
    shape = _shape("trapz", y)
    if not shape:
        raise op_error("trapz", "y must have at least one dimension, got a 0-d array")
    axis = normalize_axis("trapz", axis, len(shape))
    dt = _float_of(_dtype_of(y), _dtype_of(x))
    y = _in(y, dt, None)
    length = shape[axis]
    if length < 2:
        from ._creation import zeros_like
        return np_sum(zeros_like(_slice(y, axis, 0, 0)), axis=axis)
    mid = u.add(_slice(y, axis, 1, length), _slice(y, axis, 0, length - 1))
    if x is None:
        return np_sum(u.multiply(mid, float(dx) / 2.0), axis=axis)
    xa = _in(x, dt, _where(y))
    xshape = _shape("trapz", xa)
    if len(xshape) == 1:
        if xshape[0] != length:
            raise op_error("trapz", f"x has length {xshape[0]}, y has {length} samples "
                           f"along axis {axis}")
        d = reshape(diff(xa), tuple(length - 1 if i == axis else 1 for i in range(len(shape))))
    else:
        if xshape != shape:
            raise op_error("trapz", f"x must be 1-d or of y's shape {shape}, got {xshape}")
        d = diff(xa, axis=axis)
    return np_sum(u.multiply(u.multiply(d, mid), 0.5), axis=axis)


def unwrap(p, discont=None, axis=-1, period=2 * math.pi):
    """``p`` with jumps between neighbours along ``axis`` larger than ``max(discont,
    period/2)`` removed by adding multiples of ``period``. The correction is computed on
    the host and added as a constant, so the result is recorded with gradient 1 w.r.t.
    ``p``. Float result (integers: the default float)."""
    p = _arr(p)
    _no_symbol("unwrap", p)
    if p.ndim == 0:
        raise op_error("unwrap", "p must have at least one dimension, got a 0-d array")
    axis = normalize_axis("unwrap", axis, p.ndim)
    dt = _float_of(p.dtype)
    p = p.astype(dt, copy=False)
    host = p.asnumpy().astype(_onp.float64)
    period = float(period)
    discont = period / 2 if discont is None else max(float(discont), period / 2)
    dd = _onp.diff(host, axis=axis)
    half = period / 2
    ddmod = _onp.mod(dd + half, period) - half
    ddmod[(ddmod == -half) & (dd > 0)] = half
    correct = ddmod - dd
    correct[_onp.abs(dd) < discont] = 0
    pad = [(0, 0)] * host.ndim
    pad[axis] = (1, 0)
    correction = _onp.pad(_onp.cumsum(correct, axis=axis), pad)
    return _ufuncs().add(p, _const(correction, dt, p._ctx))


# ---------------------------------------------------------------------------- polynomials

def polyval(p, x):
    """The polynomial with coefficients ``p`` (1-d, highest power first) at ``x``, by
    Horner's rule. Float result (the inputs' widest float, integers the default float);
    recorded, differentiable w.r.t. ``p`` and ``x``; builds graph nodes on traced Symbols.

    >>> from mxlite import np
    >>> np.polyval(np.array([1., 2, 3]), np.array([1., 2])).tolist()
    [6.0, 11.0]
    """
    dt = _float_of(_dtype_of(p), _dtype_of(x))
    ctx = None if _front.is_symbolic([p, x]) else _ctx(p, x)
    pa, xa = (_in(v, dt, ctx) for v in (p, x))
    pshape = _shape("polyval", pa)
    if len(pshape) != 1:
        raise op_error("polyval", f"p must be 1-d, got shape {pshape}")
    u = _ufuncs()
    from ._creation import zeros_like
    from ._manipulation import reshape
    y = zeros_like(xa)
    for i in range(pshape[0]):
        y = u.add(u.multiply(y, xa), reshape(_slice(pa, 0, i, i + 1), ()))
    return y


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-d ``x``: columns ``x**(N-1), ..., x, 1`` (or increasing
    powers), ``N`` default ``len(x)``; ``x``'s dtype. Built by repeated multiplication,
    recorded and differentiable w.r.t. ``x`` (at 0 too)."""
    xa = _arr(x)
    shape = _shape("vander", xa)
    if len(shape) != 1:
        raise op_error("vander", f"x must be 1-d, got shape {shape}")
    n = shape[0] if N is None else int(N)
    if n < 0:
        raise op_error("vander", f"N must be non-negative, got {N}")
    from ._creation import ones_like
    from ._manipulation import stack
    if n == 0:
        return _slice(stack([xa], axis=1), 1, 0, 0)
    cols = [ones_like(xa)]
    for _ in range(n - 1):
        cols.append(_ufuncs().multiply(cols[-1], xa))
    return stack(cols if increasing else cols[::-1], axis=1)


def _polynomial_dtype(*ps):
    return _float_of(*[_dtype_of(p) for p in ps])


def _wide(host):
    """Host floats in float64 (a fallback computes in double, then casts back)."""
    return host.astype(_onp.float64) if host.dtype.kind == "f" else host


def _fallback(fn, func, *arrays, **kwargs):
    """NumPy's ``func`` on the host copies of ``arrays`` (the results as np arrays, floats
    in the inputs' float dtype; not recorded)."""
    _no_symbol(fn, *arrays)
    result = _numpy(fn, func, *[_wide(_host(a)) for a in arrays], **kwargs)
    ctx, fdt = _ctx(*arrays), _polynomial_dtype(*arrays)
    if isinstance(result, tuple):
        return tuple(_from_host(fn, r, ctx, fdt) for r in result)
    return _from_host(fn, result, ctx, fdt)


def _coefficients(fn, *polys):
    """Polynomials as 1-d np arrays of their common dtype (a number: degree 0)."""
    from ._dtypes import result_type
    from ._manipulation import reshape
    arrays = [_arr(p) for p in polys]
    _no_symbol(fn, *arrays)
    for p in arrays:
        if p.ndim > 1:
            raise op_error(fn, f"coefficients must be 1-d, got shape {tuple(p.shape)}")
    dt = result_type(arrays[0].dtype, arrays[1].dtype)
    return [reshape(p, (-1,)).astype(dt, copy=False) for p in arrays]


def _aligned(a, b):
    """``a`` and ``b`` with zeros in front of the shorter (the same powers aligned)."""
    from ._creation import zeros
    from ._manipulation import concatenate
    n = max(a.shape[0], b.shape[0])
    return [p if p.shape[0] == n else
            concatenate([zeros((n - p.shape[0],), dtype=p.dtype, ctx=p._ctx), p])
            for p in (a, b)]


def polyadd(a1, a2):
    """The sum of two polynomials (1-d coefficients, highest power first). Recorded:
    differentiable w.r.t. both."""
    return _ufuncs().add(*_aligned(*_coefficients("polyadd", a1, a2)))


def polysub(a1, a2):
    """The difference ``a1 - a2`` of two polynomials (recorded, differentiable)."""
    return _ufuncs().subtract(*_aligned(*_coefficients("polysub", a1, a2)))


def polymul(a1, a2):
    """The product of two polynomials: the full convolution of their coefficients
    (recorded, differentiable w.r.t. both)."""
    from ._manipulation import flip
    a, b = _coefficients("polymul", a1, a2)
    if a.shape[0] == 0 or b.shape[0] == 0:
        raise op_error("polymul", "the coefficients must not be empty")
    return correlate(a, flip(b, 0), "full")


def polydiv(u, v):
    """Quotient and remainder of polynomial division (host fallback, not recorded)."""
    return _fallback("polydiv", _onp.polydiv, u, v)


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of polynomial ``p`` with integration constants ``k``
    (host fallback, not recorded)."""
    return _fallback("polyint", _onp.polyint, p, m=m, k=None if k is None else _host(k))


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or a square
    matrix's characteristic polynomial). Host fallback, not recorded; complex
    coefficients are refused."""
    return _fallback("poly", _onp.poly, seq_of_zeros)


def roots(p):
    """The roots of polynomial ``p`` (host fallback, not recorded); complex roots are
    refused (mxlite arrays are real)."""
    return _fallback("roots", _onp.roots, p)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial fit of degree ``deg`` to ``(x, y)`` (NumPy's
    ``polyfit``, its extra outputs with ``full``/``cov``; integers ``rank`` as int64).
    Host fallback, not recorded."""
    _no_symbol("polyfit", x, y, w)
    result = _numpy("polyfit", _onp.polyfit, _wide(_host(x)), _wide(_host(y)), deg,
                    rcond=rcond, full=full, w=None if w is None else _wide(_host(w)), cov=cov)
    ctx, fdt = _ctx(x, y, w), _polynomial_dtype(x, y, w)
    if isinstance(result, tuple):
        return tuple(_from_host("polyfit", _onp.asarray(r), ctx, fdt) for r in result)
    return _from_host("polyfit", result, ctx, fdt)


def i0(x):
    """The modified Bessel function of the first kind, order 0, element-wise. Host
    fallback, not recorded; float result (integers: the default float)."""
    return _fallback("i0", _onp.i0, x)


# ---------------------------------------------------------------------------- covariance

def _observations(fn, m, rowvar, dt):
    from ._manipulation import reshape, transpose
    a = _in(m, dt, _ctx(m))
    if a.ndim > 2:
        raise op_error(fn, f"m and y must be 1-d or 2-d, got shape {tuple(a.shape)}")
    if a.ndim < 2:
        a = reshape(a, (1, -1))
    if not rowvar and a.shape[0] != 1:
        a = transpose(a)
    return a


def _cov_weights(fweights, aweights, n):
    """The host weights (or None) and the sums ``cov`` normalises with."""
    w = None
    for name, weights, integral in (("fweights", fweights, True), ("aweights", aweights,
                                                                   False)):
        if weights is None:
            continue
        wh = _host(weights).astype(_onp.float64)
        if integral and _onp.any(wh != _onp.around(wh)):
            raise op_error("cov", "fweights must be integers")
        if wh.ndim != 1 or wh.shape[0] != n:
            raise op_error("cov", f"{name} must be 1-d of length {n} (the observations), "
                           f"got shape {wh.shape}")
        if _onp.any(wh < 0):
            raise op_error("cov", f"{name} must be non-negative")
        w = wh if w is None else w * wh
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """The covariance matrix of the variables in ``m`` (rows, or columns with
    ``rowvar=False``), with those of ``y`` appended; ``ddof`` default 1 (0 with
    ``bias``); frequency/analytic weights as NumPy's. A float of ``m``'s dtype (integers:
    the default float; NumPy gives float64). Recorded: differentiable w.r.t. ``m`` and
    ``y`` (the weights are constants).

    >>> from mxlite import np
    >>> np.cov(np.array([[0., 1, 2], [2, 1, 0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if fweights is not None or aweights is not None:
        _no_symbol("cov", m, y)
    if ddof is not None and int(ddof) != ddof:
        raise op_error("cov", f"ddof must be an integer, got {ddof}")
    dt = as_dtype(dtype, "cov") if dtype is not None else _float_of(_dtype_of(m),
                                                                     _dtype_of(y))
    x = _observations("cov", m, rowvar, dt)
    if y is not None:
        from ._manipulation import concatenate
        yy = _observations("cov", y, rowvar, dt)
        if yy.shape[1] != x.shape[1]:
            raise op_error("cov", f"m and y must have the same number of observations, got "
                           f"{x.shape[1]} and {yy.shape[1]}")
        x = concatenate([x, yy], axis=0)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    n = x.shape[1]
    w = _cov_weights(fweights, aweights, n)
    u = _ufuncs()
    from ._manipulation import squeeze
    from ._reductions import mean, sum as np_sum
    if w is None:
        centred = u.subtract(x, mean(x, axis=1, keepdims=True))
        fact = n - ddof
        weighted = centred
    else:
        w_sum = w.sum()
        wa = _const(w, dt, x._ctx)
        avg = u.true_divide(np_sum(u.multiply(x, wa), axis=1, keepdims=True), float(w_sum))
        centred = u.subtract(x, avg)
        if aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * (w * _host(aweights)).sum() / w_sum
        weighted = u.multiply(centred, wa)
    c = _front.call("dot", [weighted, centred], transpose_b=True)     # (a Symbol too)
    c = u.true_divide(c, float(max(fact, 0)))
    return squeeze(c)


def corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
    """The Pearson correlation coefficients of the variables of ``x`` (and ``y``): the
    covariance divided by the outer product of the standard deviations, clipped to
    [-1, 1]. ``bias``/``ddof`` have no effect (as in NumPy). Recorded, differentiable."""
    c = cov(x, y, rowvar, dtype=dtype)
    u = _ufuncs()
    if c.ndim == 0:
        return u.true_divide(c, c)
    from ._indexing import clip
    from ._manipulation import reshape
    d = u.sqrt(_front.call("diag", [c]))
    c = u.true_divide(c, u.multiply(reshape(d, (-1, 1)), reshape(d, (1, -1))))
    return clip(c, -1.0, 1.0)


def correlate(a, v, mode="valid"):
    """The cross-correlation of 1-d ``a`` and ``v``: ``c[k] = sum_n a[n+k] v[n]`` over
    the overlaps ``mode`` selects ('valid', 'same' or 'full'). Gathers the windows of
    ``a`` and reduces: recorded, differentiable w.r.t. both. NumPy's result dtype
    (MXNet's rule for int with float)."""
    _no_symbol("correlate", a, v)
    if mode not in ("valid", "same", "full"):
        raise op_error("correlate", f"mode must be 'valid', 'same' or 'full', got {mode!r}")
    from ._dtypes import result_type
    aa, va = _arr(a), _arr(v)
    if aa.ndim != 1 or va.ndim != 1 or aa.shape[0] == 0 or va.shape[0] == 0:
        raise op_error("correlate", f"a and v must be non-empty and 1-d, got shapes "
                       f"{tuple(aa.shape)} and {tuple(va.shape)}")
    dt = result_type(aa.dtype, va.dtype)
    aa, va = aa.astype(dt, copy=False), va.astype(dt, copy=False)
    n, m = aa.shape[0], va.shape[0]
    lo, hi = min(n, m), max(n, m)
    if mode == "full":
        start, length = 0, n + m - 1
    elif mode == "valid":
        start, length = lo - 1, hi - lo + 1
    else:
        start, length = ((m - 1) // 2 if n >= m else n - 1 - (n - 1) // 2), hi
    from ._creation import zeros
    from ._indexing import take
    from ._manipulation import concatenate
    pad = zeros((m - 1,), dtype=dt, ctx=aa._ctx)
    padded = concatenate([pad, aa, pad]) if m > 1 else aa
    idx = _onp.arange(start, start + length)[:, None] + _onp.arange(m)[None, :]
    windows = take(padded, _const(idx, _onp.int64, aa._ctx))
    from ._reductions import sum as np_sum
    return np_sum(_ufuncs().multiply(windows, va), axis=1, dtype=dt)


# ---------------------------------------------------------------------------- windows

# name -> cosine-series coefficients a_k of w(n) = sum_k (-1)^k a_k cos(2 pi k n / (M-1))
_WINDOWS = {"hanning": (0.5, 0.5), "hamming": (0.54, 0.46), "blackman": (0.42, 0.5, 0.08)}


def _window(fn, M, dtype, ctx):
    from ._creation import arange, ones, zeros
    dt = as_dtype(dtype, fn)
    M = int(M)
    if M < 1:
        return zeros((0,), dtype=dt, ctx=ctx)
    if M == 1:
        return ones((1,), dtype=dt, ctx=ctx)
    u = _ufuncs()
    n = arange(0, M, dtype=_onp.float64, ctx=ctx)     # in double, then cast
    w = None
    for k, coef in enumerate(_WINDOWS[fn]):
        term = coef * (-1) ** k
        if k:
            term = u.multiply(u.cos(u.multiply(n, 2.0 * math.pi * k / (M - 1))), term)
            w = u.add(w, term)
        else:
            w = u.add(u.multiply(n, 0.0), term)
    return _front.call("cast", [w], dtype=dt)


def hanning(M, dtype=None, ctx=None):
    """The Hann window of ``M`` points, ``0.5 - 0.5 cos(2 pi n / (M-1))`` (``M < 1``:
    empty; ``dtype`` default: the default float). Builds graph nodes inside hybridized
    blocks."""
    return _window("hanning", M, dtype, ctx)


def hamming(M, dtype=None, ctx=None):
    """The Hamming window of ``M`` points, ``0.54 - 0.46 cos(2 pi n / (M-1))``."""
    return _window("hamming", M, dtype, ctx)


def blackman(M, dtype=None, ctx=None):
    """The Blackman window of ``M`` points,
    ``0.42 - 0.5 cos(2 pi n / (M-1)) + 0.08 cos(4 pi n / (M-1))``."""
    return _window("blackman", M, dtype, ctx)
