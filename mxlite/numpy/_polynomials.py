"""Polynomials: ``polyval``, ``vander``, ``polyadd``, ``polysub``, ``polymul``
(differentiable), and the NumPy fallbacks run on the host ``polydiv``, ``polyint``,
``poly``, ``roots``, ``polyfit``, with the Bessel function ``i0``."""
import numpy as _onp

from ..base import op_error
from . import _front
from ._signal import correlate
from ._stats_common import (_arr, _ctx, _dtype_of, _float_of, _from_host, _host, _in,
                            _no_symbol, _numpy, _shape, _slice, _ufuncs)

__all__ = ["polyval", "polyfit", "polyadd", "polysub", "polymul", "polydiv", "polyint",
           "poly", "roots", "vander", "i0"]


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
