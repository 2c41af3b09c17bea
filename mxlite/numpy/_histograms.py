"""Counting and searching on the host: ``histogram`` and relatives, ``bincount`` (with
``weights``, differentiable w.r.t. them), ``digitize``, ``searchsorted``."""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._stats_common import (_arr, _const, _ctx, _dtype_of, _float_of, _host, _in, _is_sym,
                            _no_symbol, _numpy, _SYMBOLIC)
from .multiarray import array

__all__ = ["histogram", "histogram_bin_edges", "histogram2d", "histogramdd", "bincount",
           "digitize", "searchsorted"]


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
    if weights is not None or density:      # (the weights' sum, the bins' widths' use)
        _front.needs_values("histogram", a)
    dt = _float_of(_dtype_of(a))
    data = _in(a, dt, _SYMBOLIC)
    if isinstance(bins, (int, _onp.integer)):
        if range is None:                   # the edges come from the data's range
            _front.needs_values("histogram", a)
        low, high = (float(v) for v in range)
        if int(bins) < 1 or not low <= high:
            raise op_error("histogram", f"bins must be positive and range increasing, got "
                           f"bins={bins}, range={range}")
        counts, edges = _front.call("_histogram", [data], bin_cnt=int(bins),
                                    range=(low, high))
        return counts, edges
    if isinstance(bins, str):               # bins estimated from the data
        _front.needs_values("histogram", a)
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
