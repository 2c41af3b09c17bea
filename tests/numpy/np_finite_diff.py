"""Finite differences shared by the mx.np tests: the gradient of a scalar NumPy function."""
import numpy as onp


def finite_difference(f, x, eps=1e-6):
    """d f / d x of scalar-valued ``f`` at float64 array ``x``, by central differences."""
    g = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g
