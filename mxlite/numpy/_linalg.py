"""``mx.np.linalg``: NumPy's linear algebra over the registered ``linalg`` operators.

Each function composes registered ops (``_linalg_det``, ``_linalg_inverse``,
``_linalg_potrf``, ``_linalg_syevd``, ``_linalg_gelqf``, ``_linalg_gemm2``, reductions), so
the results are recorded by autograd and differentiate to any order; the exceptions are
named in their docstrings (``eig``/``eigvals``/``matrix_rank``/``lstsq``'s rank, computed
on the host as MXNet's were). Stacks of matrices (..., M, N) are batched over the leading
axes. Integer input is taken as float64 (NumPy's rule).

The SVD is that of the Gram matrix ``a a^T`` (``_linalg_syevd``) with the singular values
taken as the row norms of ``U a`` (see ``svd``); ``svd`` returns MXNet's form
``(ut, s, v)`` with ``a = ut @ diag(s) @ v``.

Functions take Symbols too: one traced in a hybridized Gluon block knows its shape and
dtype and is treated as an array; one of unknown shape (a bare ``mx.sym.var``) takes
shape-free compositions, and a function that needs shapes (``tensorsolve``) or values
(``lstsq``, ``matrix_rank``) raises an MXNetError for it. The modules: ``_linalg_core``
(checks, the Gram-matrix SVD), ``_linalg_norm`` (``norm``, ``cond``), ``_linalg_eig``
(``eig``, ``eigvals``), ``_linalg_products`` (``lstsq``, ``matrix_rank``,
``matrix_power``, ``multi_dot``), and this one (determinants, inverses, solves,
factorisations).
"""
import numbers

import numpy as onp

from ..base import op_error
from ._front import call
from ._manipulation import expand_dims as _expand_dims, squeeze as _squeeze
from ._linalg_core import (T, as_input, drop, dtype_of, lift, matrices, named,
                           oriented_svd, safe_reciprocal, shape_of, symmetric, upcast)
from ._linalg_eig import eig, eigvals
from ._linalg_norm import cond, norm
from ._linalg_products import lstsq, matrix_power, matrix_rank, multi_dot
from . import _reductions as R
from . import _ufuncs as U

__all__ = ["norm", "svd", "cholesky", "qr", "inv", "pinv", "det", "slogdet", "solve",
           "lstsq", "eig", "eigh", "eigvals", "eigvalsh", "tensorinv", "tensorsolve",
           "matrix_rank", "matrix_power", "multi_dot", "cond"]


def _needs_shapes(fn, *xs):
    """The shapes of ``xs`` (arrays or traced Symbols), or an MXNetError."""
    shapes = [shape_of(x) for x in xs]
    if any(s is None for s in shapes):
        raise op_error(fn, "needs inputs of known shape (arrays, or Symbols traced in a "
                           "Gluon block)")
    return shapes


def _same_float(fn, a, b):
    """a and b cast to one float dtype (float64 when they differ)."""
    da, db = dtype_of(a), dtype_of(b)
    if da is None or db is None or da == db:
        return a, b
    return call("cast", [a], dtype="float64"), call("cast", [b], dtype="float64")


# ---- determinants, inverses, solves ---------------------------------------------------------
def det(a):
    """The determinant of every square matrix of ``a`` (..., M, M): shape ``a.shape[:-2]``
    (0-d for one matrix). Differentiable (``det(a) * inv(a)^T``, which needs ``a``
    invertible).

    >>> from mxlite import np
    >>> float(np.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
    -2.0
    """
    a = matrices("det", a, square=True)
    return drop(call("_linalg_det", [lift(a)]))


def slogdet(a):
    """``(sign, logabsdet)`` of every square matrix: ``det = sign * exp(logabsdet)``, each of
    shape ``a.shape[:-2]``; a singular matrix gives (0, -inf). ``logabsdet`` is
    differentiable (``inv(a)^T``); ``sign`` is piecewise constant.

    >>> from mxlite import np
    >>> sign, logdet = np.linalg.slogdet(np.array([[-2.0, 0.0], [0.0, 1.0]]))
    >>> float(sign), round(float(logdet), 4)
    (-1.0, 0.6931)
    """
    a = matrices("slogdet", a, square=True)
    sign, logabs = call("_linalg_slogdet", [lift(a)])
    return drop(sign), drop(logabs)


def inv(a):
    """The inverse of every square matrix of ``a``; a singular matrix is an MXNetError
    (NumPy's LinAlgError). Differentiable (``-inv^T g inv^T``).

    >>> from mxlite import np
    >>> np.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    a = matrices("inv", a, square=True)
    return named("inv", lambda: call("_linalg_inverse", [a]))


def solve(a, b):
    """``x`` with ``a @ x = b`` for square ``a`` (..., M, M): ``b`` is a stack of vectors
    (..., M) when it has one axis fewer than ``a`` (NumPy 1.x's and MXNet's rule), else of
    matrices (..., M, K); leading axes broadcast. Computed as ``inv(a) @ b``;
    a singular ``a`` is an MXNetError. Differentiable in both. A Symbol ``b`` is taken as
    a stack of matrices with ``a``'s leading axes.

    >>> from mxlite import np
    >>> np.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    a = matrices("solve", a, square=True)
    b = as_input("solve", b, "b")
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return call("_linalg_gemm2", [call("_linalg_inverse", [a]), b])
    a, b = _same_float("solve", a, b)
    vector = len(sb) == len(sa) - 1
    if len(sb) < 1 or (not vector and len(sb) < 2):
        raise op_error("solve", f"b must be a vector or a stack of matrices, got shape {sb}")
    bm = _expand_dims(b, -1) if vector else b
    if (sb + (1,) if vector else sb)[-2] != sa[-1]:
        raise op_error("solve", f"a of shape {sa} needs b with {sa[-1]} rows, got shape {sb}")
    a, bm = _broadcast_batches("solve", a, bm)
    x = call("_linalg_gemm2", [named("solve", lambda: call("_linalg_inverse", [a])), bm])
    return _squeeze(x, (-1,)) if vector else x


def _broadcast_batches(fn, a, b):
    """a and b with their leading (batch) axes broadcast to one shape."""
    from ._manipulation import broadcast_to
    sa, sb = shape_of(a), shape_of(b)
    try:
        batch = onp.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise op_error(fn, f"the leading axes of shapes {sa} and {sb} do not "
                           "broadcast") from None
    out = []
    for x, s in ((a, sa), (b, sb)):
        shape = batch + s[-2:]
        out.append(x if s == shape else broadcast_to(x, shape))
    return out


def tensorinv(a, ind=2):
    """The inverse of ``a`` as a tensor operator of its first ``ind`` axes onto the rest:
    ``tensordot(tensorinv(a, ind), a, ind)`` is the identity. ``prod(a.shape[:ind])`` must
    equal ``prod(a.shape[ind:])``; the result has shape ``a.shape[ind:] + a.shape[:ind]``.
    Differentiable. On a Symbol (0 < ind < ndim) the same is built from shape-free reshapes.

    >>> from mxlite import np
    >>> np.linalg.tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = as_input("tensorinv", a)
    if not isinstance(ind, (numbers.Integral, onp.integer)) or ind <= 0:
        raise op_error("tensorinv", f"ind must be a positive integer, got {ind!r}")
    ind = int(ind)
    shape = shape_of(a)
    if shape is None:
        m = a
        for _ in range(ind - 1):
            m = call("reshape", [m], shape=(-3, -2))       # merge the first two axes
        inverse = call("_linalg_inverse", [call("reshape", [m], shape=(0, -1))])
        out = call("reshape_like", [inverse, a], lhs_begin=0, lhs_end=1, rhs_begin=ind,
                   rhs_end=None)
        return call("reshape_like", [out, a], lhs_begin=-1, lhs_end=None, rhs_begin=0,
                    rhs_end=ind)
    if ind > len(shape):
        raise op_error("tensorinv", f"ind={ind} exceeds the {len(shape)} axes of a")
    front, back = shape[:ind], shape[ind:]
    rows, cols = int(onp.prod(front)), int(onp.prod(back))
    if rows != cols:
        raise op_error("tensorinv", f"a of shape {shape} is not square as an "
                                    f"operator of its first {ind} axes ({rows} x {cols})")
    m = call("reshape", [a], shape=(rows, cols))
    inverse = named("tensorinv", lambda: call("_linalg_inverse", [m]))
    return call("reshape", [inverse], shape=back + front)


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b``: ``x.shape`` is the trailing
    ``a.ndim - b.ndim`` axes of ``a`` (after moving ``axes`` of ``a`` to the end), whose
    product must equal ``b.size``. Differentiable in both; needs known shapes (arrays, or
    Symbols traced in a Gluon block).

    >>> from mxlite import np
    >>> np.linalg.tensorsolve(np.eye(6).reshape(6, 2, 3), np.ones(6)).shape
    (2, 3)
    """
    a, b = as_input("tensorsolve", a), as_input("tensorsolve", b, "b")
    sa, sb = _needs_shapes("tensorsolve", a, b)
    a, b = _same_float("tensorsolve", a, b)
    if axes is not None:
        nd = max(len(sa), 1)
        order = [k for k in range(len(sa)) if k not in [ax % nd for ax in axes]]
        order += [ax % nd for ax in axes]
        if sorted(order) != list(range(len(sa))):
            raise op_error("tensorsolve", f"axes {axes} are not distinct axes of a of "
                                          f"shape {sa}")
        a = call("transpose", [a], axes=tuple(order))
        sa = tuple(sa[k] for k in order)
    xshape = sa[-(len(sa) - len(sb)):]         # NumPy's slice (b may have more axes)
    n = int(onp.prod(xshape))
    if n * n != int(onp.prod(sa)) or n != int(onp.prod(sb)):
        raise op_error("tensorsolve", f"a of shape {sa} and b of shape {sb} do not make a "
                                      f"square system (x would have shape {xshape})")
    m = call("reshape", [a], shape=(n, n))
    inverse = named("tensorsolve", lambda: call("_linalg_inverse", [m]))
    x = call("_linalg_gemm2", [inverse, call("reshape", [b], shape=(n, 1))])
    return call("reshape", [x], shape=xshape)


# ---- factorisations -------------------------------------------------------------------------
def cholesky(a):
    """The lower-triangular ``L`` with ``a = L @ L^T`` of every symmetric positive-definite
    matrix; ``a`` is read from its lower triangle (NumPy). A matrix that is not positive
    definite is an MXNetError. Differentiable; the gradient is the symmetric one (the
    derivative along symmetric perturbations, both triangles alike, as MXNet's).

    >>> from mxlite import np
    >>> np.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    a = matrices("cholesky", a, square=True)
    return named("cholesky", lambda: call("_linalg_potrf", [symmetric(a)]))


def eigh(a, UPLO="L"):
    """``(w, v)``: the eigenvalues (ascending) and eigenvectors (the columns of v) of every
    symmetric matrix of ``a``, read from its lower (``UPLO='L'``) or upper triangle.
    Differentiable (Jacobi rotations in float64, ``_linalg_syevd``; the gradient needs
    distinct eigenvalues and is the symmetric one, as ``cholesky``'s). Each eigenvector has
    its largest-magnitude entry positive.

    >>> from mxlite import np
    >>> w, v = np.linalg.eigh(np.array([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist(), v.tolist()
    ([1.0, 2.0], [[0.0, 1.0], [1.0, 0.0]])
    """
    if UPLO not in ("L", "U"):
        raise op_error("eigh", f"UPLO must be 'L' or 'U', got {UPLO!r}")
    a = matrices("eigh", a, square=True)
    u, w = call("_linalg_syevd", [symmetric(a, UPLO == "L")])
    return w, T(u)


def eigvalsh(a, UPLO="L"):
    """The eigenvalues (ascending) of every symmetric matrix of ``a`` (``eigh``'s w).

    >>> from mxlite import np
    >>> np.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    return eigh(a, UPLO)[0]


def svd(a):
    """MXNet's SVD ``(ut, s, v)`` of every matrix of ``a`` (..., M, N): ``a = ut @ diag(s)
    @ v`` with s descending, ut (..., M, K), v (..., K, N), K = min(M, N), orthonormal
    columns of ut and rows of v. MXNet took only M <= N; a taller array is decomposed
    through its transpose (a Symbol is taken with M <= N).

    Computed from the Gram matrix ``a a^T`` (``_linalg_syevd``, float64 for float32 input):
    ut its eigenvectors, s the norms of the rows of ``ut^T a`` (accurate to about
    eps * s_max), v those rows normalised; a zero singular value has a zero row of v.
    Differentiable (the gradient needs distinct nonzero singular values).

    >>> from mxlite import np
    >>> ut, s, v = np.linalg.svd(np.array([[3.0, 0.0], [0.0, -2.0]]))
    >>> [round(x, 4) for x in s.tolist()]
    [3.0, 2.0]
    """
    a = matrices("svd", a)
    work, back = upcast(a)
    return tuple(back(x) for x in oriented_svd(work))


def qr(a, mode="reduced"):
    """The QR factorisation ``a = q @ r`` of every matrix (..., M, N): ``mode='reduced'``
    gives q (..., M, K) with orthonormal columns and upper-triangular r (..., K, N),
    K = min(M, N); ``'r'`` gives r only; ``'complete'`` (q (M, M)) when M <= N. Householder
    reflections (``_linalg_gelqf`` of the transpose), differentiable. A Symbol is taken
    with M >= N.

    >>> from mxlite import np
    >>> q, r = np.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> [round(x, 4) for x in np.abs(r).reshape(-1).tolist()]
    [5.0, 2.2, 0.0, 0.4]
    """
    if mode not in ("reduced", "r", "complete"):
        raise op_error("qr", f"mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a = matrices("qr", a)
    shape = shape_of(a)
    m, n = (None, None) if shape is None else shape[-2:]
    if mode == "complete" and m is not None and m > n:
        raise op_error("qr", f"mode='complete' needs M <= N (a full Q is not computed), got "
                             f"shape {shape}")
    if m is None or m >= n:
        lq, low = call("_linalg_gelqf", [T(a)])
        q, r = T(lq), T(low)
    else:
        square = call("slice_axis", [a], axis=-1, begin=0, end=m)
        lq, low = call("_linalg_gelqf", [T(square)])
        q = T(lq)
        rest = call("_linalg_gemm2", [q, call("slice_axis", [a], axis=-1, begin=m,
                                                          end=None)], transpose_a=True)
        r = call("concat", [T(low), rest], dim=-1, num_args=2)
    return r if mode == "r" else (q, r)


def pinv(a, rcond=1e-15, hermitian=False):
    """The Moore-Penrose pseudo-inverse (..., N, M) of every matrix: singular values at most
    ``rcond * s_max`` are taken as zero (``rcond`` a number or an array broadcasting
    against the leading axes). ``hermitian=True`` uses the symmetric eigendecomposition
    (MXNet had none). Differentiable (``svd``'s Gram-matrix SVD; a Symbol is taken with
    M <= N).

    >>> from mxlite import np
    >>> np.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    a = matrices("pinv", a)
    work, back = upcast(a)
    if not isinstance(rcond, numbers.Number):
        rcond = as_input("pinv", rcond, "rcond")
        if dtype_of(work) is not None and dtype_of(rcond) != dtype_of(work):
            rcond = call("cast", [rcond], dtype=dtype_of(work))
    if not isinstance(rcond, numbers.Number):
        rcond = _expand_dims(rcond, -1)
    if hermitian:
        w, v = eigh(work)
        size = U.absolute(w)
        keep = U.greater(size, U.multiply(rcond, R.max(size, axis=-1, keepdims=True)))
        scaled = U.multiply(v, _expand_dims(safe_reciprocal(w, keep), -2))
        return back(call("_linalg_gemm2", [scaled, v], transpose_b=True))
    ut, s, v = oriented_svd(work)
    if 0 in (shape_of(s) or ()):
        return back(T(work))
    keep = U.greater(s, U.multiply(rcond, R.max(s, axis=-1, keepdims=True)))
    scaled = U.multiply(v, _expand_dims(safe_reciprocal(s, keep), -1))
    return back(call("_linalg_gemm2", [scaled, ut], transpose_a=True, transpose_b=True))

