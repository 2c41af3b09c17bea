"""``cov`` and ``corrcoef`` (differentiable; ``fweights``/``aweights`` as NumPy's)."""
import numpy as _onp

from ..base import op_error
from . import _front
from ._dtypes import as_dtype
from ._stats_common import (_const, _ctx, _dtype_of, _float_of, _host, _in, _no_symbol,
                            _ufuncs)

__all__ = ["cov", "corrcoef"]


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
