"""``mx.np.linalg``'s least squares, rank, matrix powers and chained products: ``lstsq``,
``matrix_rank``, ``matrix_power``, ``multi_dot`` (MXNet ran them all on the host through
NumPy; here ``lstsq``'s solution, ``matrix_power`` and ``multi_dot`` are differentiable
compositions, the rank a host count).
"""
import numbers

import numpy as onp

from ..base import op_error
from ._front import call
from ._manipulation import expand_dims as _expand_dims, squeeze as _squeeze
from ._linalg_core import as_input, shape_of, symbolic
from . import _reductions as R
from . import _ufuncs as U

__all__ = ["lstsq", "matrix_rank", "matrix_power", "multi_dot"]


def _needs_array(fn, *xs):
    if symbolic(*xs):
        raise op_error(fn, "needs the values of arrays, not Symbols (it is computed on the "
                           "host and cannot be traced into a hybridized block)")


def _same_float(a, b):
    """a and b (arrays) cast to one float dtype (float64 when they differ)."""
    if a.dtype == b.dtype:
        return a, b
    return call("cast", [a], dtype="float64"), call("cast", [b], dtype="float64")


def lstsq(a, b, rcond="warn"):
    """``(x, residuals, rank, s)``: the least-squares solution of ``a @ x = b`` for a matrix
    ``a`` (M, N) and ``b`` (M,) or (M, K), as NumPy: singular values at most
    ``rcond * s_max`` count as zero (``None``: ``eps * max(M, N)``; ``'warn'`` or negative:
    machine precision), residuals the squared 2-norms of ``b - a @ x`` when rank is N < M
    (else empty), s the singular values. ``x``, ``residuals`` and ``s`` are differentiable
    (``pinv(a) @ b``); ``rank`` is an int counted on the host. Needs arrays.

    >>> from mxlite import np
    >>> x = np.linalg.lstsq(np.array([[1.0], [1.0]]), np.array([1.0, 3.0]), rcond=None)[0]
    >>> x.tolist()
    [2.0]
    """
    from .linalg import pinv, svd
    _needs_array("lstsq", a, b)
    a, b = as_input("lstsq", a), as_input("lstsq", b, "b")
    a, b = _same_float(a, b)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise op_error("lstsq", f"a must be a matrix (M, N) and b (M,) or (M, K), got shapes "
                                f"{tuple(a.shape)} and {tuple(b.shape)}")
    m, n = a.shape
    eps = float(onp.finfo(onp.float64).eps)
    if rcond is None:
        rcond = eps * max(m, n)
    elif isinstance(rcond, str) or rcond < 0:
        if isinstance(rcond, str) and rcond != "warn":
            raise op_error("lstsq", f"rcond must be a number, None or 'warn', got {rcond!r}")
        rcond = eps
    bm = _expand_dims(b, -1) if b.ndim == 1 else b
    from ._creation import zeros
    if m and n:
        s = svd(a)[1]
        xm = call("_linalg_gemm2", [pinv(a, rcond), bm])
    else:
        s = zeros((0,), dtype=a.dtype, ctx=a.context)
        xm = zeros((n, bm.shape[1]), dtype=a.dtype, ctx=a.context)
    x_out = _squeeze(xm, (-1,)) if b.ndim == 1 else xm
    sv = s.asnumpy()
    rank = int((sv > rcond * sv.max()).sum()) if sv.size else 0
    if rank == n and m > n:
        resid = U.subtract(bm, call("_linalg_gemm2", [a, xm]))
        residuals = R.sum(U.multiply(resid, resid), axis=0)
    else:
        residuals = zeros((0,), dtype=a.dtype, ctx=a.context)
    return x_out, residuals, rank, s


def matrix_rank(A, tol=None, hermitian=False):
    """The rank of every matrix of ``A`` (a 0-d or ``A.shape[:-2]`` int64 array): the
    singular values above ``tol`` (default ``s_max * max(M, N) * eps``); a vector's rank
    is 1 unless it is all zeros. A count: computed on the host by NumPy (exact LAPACK
    singular values, as MXNet's fallback), not differentiable, needs arrays.

    >>> from mxlite import np
    >>> int(np.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    _needs_array("matrix_rank", A, tol)
    A = as_input("matrix_rank", A, "A")
    host_tol = tol.asnumpy() if hasattr(tol, "asnumpy") else tol
    rank = onp.linalg.matrix_rank(A.asnumpy(), tol=host_tol, hermitian=hermitian)
    from .multiarray import array
    return array(onp.asarray(rank, dtype=onp.int64), dtype=onp.int64, ctx=A.context)


def _identity_like(a):
    """Identity matrices of ``a``'s shape and dtype."""
    if symbolic(a):
        return call("_linalg_makediag", [call("ones_like", [call("_linalg_extractdiag",
                                                                  [a])])])
    from ._manipulation import broadcast_to
    from ._creation import eye
    return broadcast_to(eye(a.shape[-1], dtype=a.dtype, ctx=a.context), tuple(a.shape)) * 1


def matrix_power(a, n):
    """``a`` raised to the integer power ``n`` for every square matrix (repeated squaring;
    ``n = 0`` the identity, ``n < 0`` powers of ``inv(a)``). Integer matrices stay integer
    for n >= 0. Differentiable.

    >>> from mxlite import np
    >>> np.linalg.matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    from ._products import matmul
    if not isinstance(n, (numbers.Integral, onp.integer)):
        raise op_error("matrix_power", f"n must be an integer, got {n!r}")
    n = int(n)
    if not symbolic(a):
        from .multiarray import asarray
        from ..ndarray.ndarray import NDArray
        a = a if isinstance(a, NDArray) else asarray(a)
    shape = shape_of(a)
    if shape is not None and (len(shape) < 2 or shape[-1] != shape[-2]):
        raise op_error("matrix_power", f"a must hold square matrices, got shape {shape}")
    if n == 0:
        return _identity_like(a)
    if n < 0:
        from .linalg import inv
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def _chain_order(dims):
    """NumPy's optimal parenthesisation of a matrix chain with dimensions ``dims``:
    split[i][j] is where the product of matrices i..j splits."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(arrays, out=None):
    """The product of two or more arrays in the cheapest order (NumPy's dynamic program
    over the shapes; Symbols multiply left to right): the first may be a vector (a row),
    the last a vector (a column), the others are matrices. Differentiable.

    >>> from mxlite import np
    >>> np.linalg.multi_dot([np.ones(2), np.ones((2, 3)), np.ones(3)]).item()
    6.0
    """
    from ._products import dot
    arrays = list(arrays)
    if len(arrays) < 2:
        raise op_error("multi_dot", f"needs at least two arrays, got {len(arrays)}")
    if symbolic(*arrays) and any(shape_of(x) is None for x in arrays):
        result = arrays[0]
        for x in arrays[1:]:
            result = dot(result, x)
        return result
    from .multiarray import asarray
    arrays = [x if symbolic(x) else asarray(x) for x in arrays]
    shapes = [shape_of(x) for x in arrays]
    first, last = len(shapes[0]) == 1, len(shapes[-1]) == 1
    mats = list(arrays)
    dims = [tuple(sh) for sh in shapes]
    if first:
        mats[0], dims[0] = _expand_dims(mats[0], 0), (1,) + dims[0]
    if last:
        mats[-1], dims[-1] = _expand_dims(mats[-1], -1), dims[-1] + (1,)
    for i, d in enumerate(dims):
        if len(d) != 2:
            raise op_error("multi_dot", f"array {i} must be a matrix (the first and last may "
                                        f"be vectors), got shape {shapes[i]}")
    for i in range(len(dims) - 1):
        if dims[i][1] != dims[i + 1][0]:
            raise op_error("multi_dot", f"shapes {shapes[i]} and {shapes[i + 1]} are not "
                                        "aligned")
    split = _chain_order([dims[0][0]] + [d[1] for d in dims])

    def product(i, j):
        if i == j:
            return mats[i]
        return dot(product(i, split[i][j]), product(split[i][j] + 1, j))
    result = product(0, len(mats) - 1)
    if first or last:
        result = _squeeze(result, tuple(ax for ax, on in ((0, first), (-1, last)) if on))
    if out is not None:
        out[...] = result
        return out
    return result
