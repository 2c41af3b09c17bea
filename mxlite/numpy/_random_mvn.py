"""``mx.np.random.multivariate_normal``: mean + A z for z ~ N(0, I) and A A^T = cov, A the
Cholesky factor (``_linalg_potrf``) of a positive definite cov, else U^T diag(sqrt(lambda))
from the eigendecomposition (``_linalg_syevd``) of a positive semi-definite one. Both are
registered operators, so the samples differentiate with respect to mean and (through the
Cholesky factor) cov."""
import warnings

import numpy as _onp

from ..base import MXNetError, op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float, result_type
from ._random_draw import as_size, broadcast_shapes, is_symbol, output_shape
from ._ufuncs import add, maximum, multiply, sqrt
from .multiarray import array

__all__ = ["multivariate_normal"]

_FN = "np.random.multivariate_normal"
_F32, _F64 = _onp.dtype(_onp.float32), _onp.dtype(_onp.float64)


def _factor(cov, check_valid, tol):
    """A with A A^T = cov (batched): Cholesky when cov is positive definite; otherwise the
    eigen factor, after ``check_valid`` ('warn', 'raise', 'ignore') judged the negative
    eigenvalues (below -tol * (1 + max |cov|): cov is not positive semi-definite)."""
    try:
        return _front.call("_linalg_potrf", [cov])
    except MXNetError:
        pass
    u, lam = _front.call("_linalg_syevd", [cov])
    host = lam.asnumpy()
    limit = tol * (1.0 + float(_onp.abs(cov.asnumpy()).max(initial=0.0)))
    if check_valid != "ignore" and (host < -limit).any():
        msg = (f"cov is not positive semi-definite (an eigenvalue is "
               f"{float(host.min())!r})")
        if check_valid == "raise":
            raise op_error(_FN, msg)
        warnings.warn(f"{_FN}: {msg}", RuntimeWarning, stacklevel=3)
    root = _front.call("expand_dims", [sqrt(maximum(lam, 0.0))], axis=-2)
    return multiply(_front.call("swapaxes", [u], dim1=-1, dim2=-2), root)


def _combine(mean, factor, z):
    """mean + factor @ z over the last axis, with broadcasting batches."""
    rows = _front.call("expand_dims", [z], axis=-2)
    return add(mean, _front.call("sum", [multiply(factor, rows)], axis=-1))


def _symbolic(mean, cov, size):
    work = default_float()
    mean = _front.call("cast", [mean], dtype=work)
    cov = _front.call("cast", [cov], dtype=work)
    _, template = output_shape(_FN, ["mean", "cov"], [mean, _front.call("sum", [cov], axis=-1)],
                               None, size, True)
    z = _front.call("_random_normal_like", [template])
    return _combine(mean, _front.call("_linalg_potrf", [cov]), z)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples from the multivariate normal distributions of ``mean`` (..., N) and
    covariance ``cov`` (..., N, N), whose batch axes broadcast: shape
    ``size + broadcast(mean.shape, cov.shape[:-1])``, in the parameters' float dtype.

    ``check_valid`` ('warn' by default, 'raise', 'ignore') and ``tol`` (1e-8) judge a cov
    that is not positive semi-definite, as NumPy's. The samples differentiate with respect
    to mean, and to a positive definite cov.

    >>> x = mx.np.random.multivariate_normal(mx.np.array([1.0, 2.0]), mx.np.eye(2), size=3)
    >>> x.shape
    (3, 2)
    """
    if check_valid not in (None, "warn", "raise", "ignore"):
        raise op_error(_FN, f"check_valid must be 'warn', 'raise' or 'ignore', got "
                       f"{check_valid!r}")
    check_valid = check_valid or "warn"
    tol = 1e-8 if tol is None else float(tol)
    size = as_size(_FN, size) or ()
    if _front.is_symbolic([mean, cov]):
        if not (is_symbol(mean) and is_symbol(cov)):
            raise op_error(_FN, "mean and cov must both be Symbols inside a graph")
        return _symbolic(mean, cov, size)
    mean = mean if isinstance(mean, NDArray) else array(mean)
    cov = cov if isinstance(cov, NDArray) else array(cov, ctx=mean._ctx)
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-1] != cov.shape[-2] or \
            cov.shape[-1] != mean.shape[-1]:
        raise op_error(_FN, f"mean must have shape (..., N) and cov (..., N, N), got mean "
                       f"{mean.shape} and cov {cov.shape}")
    dt = result_type(mean.dtype, cov.dtype)
    dt = dt if dt.kind == "f" else default_float()
    work = _F64 if dt == _F64 else _F32
    mean = mean if mean.dtype == work else _front.call("cast", [mean], dtype=work)
    cov = cov if cov.dtype == work else _front.call("cast", [cov], dtype=work)
    shape = size + broadcast_shapes(_FN, ["mean", "cov"], [mean.shape, cov.shape[:-1]])
    z = _front.call("_random_normal", [], shape=shape, dtype=work, ctx=mean._ctx)
    if z.size == 0:
        y = z
    else:
        y = _combine(mean, _factor(cov, check_valid, tol), z)
    return y if y.dtype == dt else _front.call("cast", [y], dtype=dt)
