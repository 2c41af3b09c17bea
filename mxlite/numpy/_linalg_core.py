"""Building blocks of ``mx.np.linalg``: input checks and the shape-free compositions of
registered ``linalg`` operators that several public functions share.

Every helper here works on np arrays and on Symbols alike: a Symbol traced in a Gluon
block knows its shape and dtype (``_front.shape_of``/``dtype_of``) and is treated as an
array; where they are unknown (a bare ``mx.sym.var``) the compositions need neither.
"""
import numpy as onp

from ..base import MXNetError, op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._front import call
from ._manipulation import expand_dims as _expand_dims, squeeze as _squeeze
from .multiarray import asarray

FLOATS = (onp.dtype(onp.float32), onp.dtype(onp.float64))


def symbolic(*xs):
    """True when some of ``xs`` is a Symbol."""
    return _front.is_symbolic([x for x in xs if x is not None])


def shape_of(x):
    """The shape of an array or of a traced Symbol; None where it is not (fully) known."""
    shape = _front.shape_of(x)
    return None if shape is None or any(d < 0 for d in shape) else tuple(shape)


def dtype_of(x):
    """The dtype of an array or of a traced Symbol; None where it is not known."""
    dt = _front.dtype_of(x)
    return None if dt is None else onp.dtype(dt)


def as_input(fn, a, arg="a"):
    """``a`` as an np array (or the Symbol itself) of a float dtype: integers and booleans
    are taken as float64 (NumPy's rule); other dtypes are an MXNetError."""
    if not (isinstance(a, NDArray) or symbolic(a)):
        a = asarray(a)
    dt = dtype_of(a)
    if dt is None:
        return a
    if dt.kind in "biu":
        return call("cast", [a], dtype="float64")
    if dt not in FLOATS:
        raise op_error(fn, f"{arg} has dtype {a.dtype}; float32 and float64 are supported "
                           "(integers are taken as float64)")
    return a


def matrices(fn, a, square=False, arg="a"):
    """``as_input`` plus NumPy's checks: at least 2 axes, square matrices if asked."""
    a = as_input(fn, a, arg)
    shape = shape_of(a)
    if shape is not None:
        if len(shape) < 2:
            raise op_error(fn, f"{arg} must have at least 2 dimensions (a stack of matrices), "
                               f"got shape {shape}")
        if square and shape[-1] != shape[-2]:
            raise op_error(fn, f"{arg} must hold square matrices on its last two axes, got "
                               f"shape {shape}")
    return a


def named(fn, thunk):
    """``thunk()``, with an operator's MXNetError re-raised under the public name ``fn``."""
    try:
        return thunk()
    except MXNetError as e:
        raise op_error(fn, str(e)) from None


def T(x):
    """The trailing two axes swapped."""
    return call("swapaxes", [x], dim1=-2, dim2=-1)


def lift(x):
    """A stack of matrices with one more leading axis: per-matrix scalars of one matrix come
    back with shape (1,), so ``drop`` can make them 0-d without knowing the rank."""
    return _expand_dims(x, 0)


def drop(x):
    """The inverse of ``lift``."""
    return squeeze_axes(x, (0,))


def squeeze_axes(x, axes):
    """x without its length-1 ``axes``; a traced Symbol through an exact reshape, so that
    removing every axis gives 0-d there too (the legacy squeeze keeps (1,))."""
    shape = shape_of(x)
    if shape is None or not symbolic(x):
        return _squeeze(x, axes)
    drop_axes = {ax % len(shape) for ax in axes}
    target = tuple(d for i, d in enumerate(shape) if i not in drop_axes)
    if 0 in target:                 # the legacy reshape reads 0 as "keep this axis"
        return _squeeze(x, axes)
    return call("reshape", [x], shape=target)


def safe_sqrt(x):
    """sqrt(x) for x >= 0 whose gradient at 0 is 0 (not inf * 0 = NaN): a zero singular
    value or a zero vector norm takes the subgradient 0."""
    from ._indexing import where
    from ._creation import ones_like, zeros_like
    from ._ufuncs import greater, sqrt
    pos = greater(x, 0)
    return where(pos, sqrt(where(pos, x, ones_like(x))), zeros_like(x))


def safe_reciprocal(x, keep):
    """1 / x where ``keep``, else 0 (and a gradient of 0 there)."""
    from ._indexing import where
    from ._creation import ones_like, zeros_like
    from ._ufuncs import reciprocal
    return where(keep, reciprocal(where(keep, x, ones_like(x))), zeros_like(x))


def symmetric(a, lower=True):
    """The symmetric matrices read from ``a``'s lower (upper) triangle, whose gradient is
    that of ``(a + a^T) / 2``: the derivative along symmetric perturbations, the same number
    in both triangles (NumPy reads one triangle; the gradient is the symmetric one, as
    MXNet's, PyTorch's and JAX's)."""
    if not lower:
        a = T(a)
    exact = (call("_la_trian_mask", [a], lower=True, diag=1.0) +
             T(call("_la_trian_mask", [a], lower=True, diag=0.0)))
    half = (a + T(a)) * 0.5
    return half + call("BlockGrad", [exact - half])


def upcast(a):
    """(work, back): a float32 array computed in float64 (the Gram matrices of the SVD
    square the condition number), ``back`` casting a result to ``a``'s dtype. Symbols
    of unknown dtype are computed in it."""
    if dtype_of(a) != onp.float32:
        return a, lambda x: x
    return call("cast", [a], dtype="float64"), lambda x: call("cast", [x], dtype="float32")


def gram_svd(a):
    """(ut, s, v) of ``a`` (..., M, N) with M <= N: ``a = ut @ diag(s) @ v``, s descending.

    The left vectors are the eigenvectors of ``a a^T`` (``_linalg_syevd``); the rows of
    ``U a`` are ``s_i v_i``, so s is their norm (accurate to about eps * s_max relative to
    s_max, not the sqrt(eps) of the eigenvalues) and v the normalised rows. A zero singular
    value gives a zero row of v. Every step is a registered op: differentiable (the
    gradient needs distinct nonzero singular values, as every SVD gradient)."""
    from ._reductions import sum as _sum
    from ._creation import ones_like
    from ._ufuncs import greater, multiply, true_divide
    from ._indexing import where
    g = call("_linalg_gemm2", [a, a], transpose_b=True)
    u, _ = call("_linalg_syevd", [g])                       # rows, ascending eigenvalues
    u = call("reverse", [u], axis=-2)
    p = call("_linalg_gemm2", [u, a])                       # rows s_i v_i
    s = safe_sqrt(_sum(multiply(p, p), axis=-1))
    den = where(greater(s, 0), s, ones_like(s))
    v = true_divide(p, _expand_dims(den, -1))
    return T(u), s, v


def oriented_svd(a):
    """``gram_svd`` for any M, N when the shape is known (a tall stack is decomposed
    through its transpose: ut (M, K), s (K,), v (K, N), K = min(M, N)); a Symbol of
    unknown shape is taken with M <= N."""
    shape = shape_of(a)
    if shape is not None and shape[-2] > shape[-1]:
        ut, s, v = gram_svd(T(a))
        return T(v), s, T(ut)
    return gram_svd(a)
