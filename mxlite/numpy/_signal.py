"""Functions of sampled sequences: interpolation (``interp``), differences and
integrals (``diff``, ``ediff1d``, ``trapz``, ``unwrap``), ``correlate`` and the windows
(``hanning``, ``hamming``, ``blackman``)."""
import math

import numpy as _onp

from ..base import op_error
from ..ops.shape_utils import normalize_axis
from . import _front
from ._dtypes import as_dtype
from ._stats_common import (_arr, _const, _ctx, _dtype_of, _float_of, _in, _is_sym,
                            _no_symbol, _shape, _slice, _ufuncs, _where)

__all__ = ["interp", "diff", "ediff1d", "trapz", "unwrap", "correlate", "hanning",
           "hamming", "blackman"]


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


# ---------------------------------------------------------------------------- correlation

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
