"""Checks shared by the mx.np tests: an np result equal to NumPy's, and the finite-difference
gradient of a scalar NumPy function."""
import numpy as onp

from mxlite import np


def same(got, want):
    """``got`` is an ``mx.np.ndarray`` with ``want``'s shape, dtype and exact values."""
    assert isinstance(got, np.ndarray), type(got)
    want = onp.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                 want.shape, want.dtype)
    onp.testing.assert_array_equal(got.asnumpy(), want)


def finite_difference(f, x, eps=1e-6):
    """d f / d x of scalar-valued ``f`` at float64 array ``x``, by central differences."""
    g = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g
