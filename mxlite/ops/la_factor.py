"""More of mx.nd.linalg: extracttrian and maketrian (a triangle of square matrices as a
vector, and back).

A triangle is chosen as MXNet's: ``offset = k > 0`` the elements on and above diagonal k,
``k < 0`` those on and below diagonal k, ``k = 0`` the lower (``lower=True``) or upper
triangle; its elements are stored as MXNet stores them: a lower triangle row by row, an
upper triangle column by column. The two ops are each other's adjoint,
so each one's gradient is the other (differentiable to any order). The positions are
computed on the device (``rctx.xp.arange``, comparisons, boolean selection) and the batch
is moved in blocks of matrices, so the scratch memory stays bounded.
"""
import math

import numpy as np

from ..base import op_error
from .la import _float_type
from .registry import OpDef, Param, register
from .shape_utils import size_of

_BLOCK = 1 << 22          # elements of one block of matrices (scratch memory per block)


def _in_triangle(i, j, offset, lower):
    """Element (i, j) (arrays) is in the triangle ``offset``/``lower`` selects."""
    if offset > 0 or (offset == 0 and not lower):
        return (j - i) >= offset
    return (i - j) >= -offset


def _positions(xp, n, attrs):
    """Flat positions of the triangle's elements in an n x n matrix (int64, on the device),
    in MXNet's order: a lower triangle row by row, an upper one column by column (the lower
    triangle of the transpose, row by row)."""
    a = xp.arange(n * n, np.int64)
    major, minor = a // n, a % n
    if attrs.offset > 0 or (attrs.offset == 0 and not attrs.lower):
        return (minor * n + major)[_in_triangle(minor, major, attrs.offset, attrs.lower)]
    return a[_in_triangle(major, minor, attrs.offset, attrs.lower)]


def _count(n, offset):
    """How many elements the triangle of an n x n matrix with this offset holds."""
    m = n - abs(offset)
    return m * (m + 1) // 2 if m > 0 else 0


def _batches(count, per_item):
    step = max(1, _BLOCK // max(per_item, 1))
    return [slice(s, min(count, s + step)) for s in range(0, count, step)]


# ---- extracttrian ------------------------------------------------------------------------------
def _extract_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 2 or a[-1] != a[-2]:
        raise op_error("extracttrian", f"A must hold square matrices on its last two axes, "
                       f"got shape {a}")
    n = a[-1]
    if n and abs(attrs.offset) >= n:
        raise op_error("extracttrian", f"offset={attrs.offset} is outside matrices of shape "
                       f"{a[-2:]}")
    return [a[:-2] + (_count(n, attrs.offset),)]


def _extract_compute(rctx, ins, outs, attrs):
    a, out = ins[0], outs[0]
    n = a.shape[-1]
    count = size_of(a.shape[:-2])
    flat_a, flat_o = a.reshape(count, n * n), out.reshape(count, out.shape[-1])
    pos = _positions(rctx.xp, n, attrs)
    for b in _batches(count, n * n):
        rctx.xp.copyto(flat_o[b], flat_a[b][:, pos])


register(OpDef(
    "_linalg_extracttrian", inputs=("A",), aliases=("linalg_extracttrian",),
    params=(Param("offset", "int", 0, "the diagonal the triangle starts at: 0 main, > 0 "
                  "above (an upper triangle), < 0 below (a lower triangle)"),
            Param("lower", "bool", True, "the lower (True) or upper triangle when offset=0")),
    infer_shape=_extract_shape, infer_type=_float_type("extracttrian"),
    compute={"cpu": _extract_compute},
    gradient=lambda F, node, og: [F.linalg.maketrian(og[0], offset=node.attrs.offset,
                                                     lower=node.attrs.lower)],
    doc="""The triangle of every square matrix of A as a vector (a lower triangle row by row,
an upper one column by column, as MXNet):
``(..., n, n) -> (..., m (m + 1) / 2)`` with ``m = n - |offset|``. ``offset > 0`` takes the
elements on and above diagonal ``offset``, ``offset < 0`` those on and below it, ``offset = 0``
the lower or upper triangle (``lower``). Its adjoint, and gradient, is maketrian.

>>> mx.nd.linalg.extracttrian(mx.nd.array([[1, 2], [3, 4]])).asnumpy().tolist()
[1.0, 3.0, 4.0]
"""))


# ---- maketrian ---------------------------------------------------------------------------------
def _side(op, length, offset):
    """n of the n x n matrices whose triangle (this offset) holds ``length`` elements."""
    m = (math.isqrt(8 * length + 1) - 1) // 2
    if m < 1 or m * (m + 1) // 2 != length:
        raise op_error(op, f"A's last axis ({length}) is not the size of a triangle "
                       f"(m (m + 1) / 2 for some m >= 1)")
    return m + abs(offset)


def _make_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 1:
        raise op_error("maketrian", "A must have at least 1 dimension (triangles as vectors), "
                       "got shape ()")
    n = _side("maketrian", a[-1], attrs.offset)
    return [a[:-1] + (n, n)]


def _make_compute(rctx, ins, outs, attrs):
    a, out = ins[0], outs[0]
    n = out.shape[-1]
    count = size_of(a.shape[:-1])
    flat_a, flat_o = a.reshape(count, a.shape[-1]), out.reshape(count, n * n)
    out.fill(0)
    pos = _positions(rctx.xp, n, attrs)
    for b in _batches(count, n * n):
        block = flat_o[b]
        block[:, pos] = flat_a[b]


register(OpDef(
    "_linalg_maketrian", inputs=("A",), aliases=("linalg_maketrian",),
    params=(Param("offset", "int", 0, "the diagonal the triangle starts at: 0 main, > 0 "
                  "above (an upper triangle), < 0 below (a lower triangle)"),
            Param("lower", "bool", True, "the lower (True) or upper triangle when offset=0")),
    infer_shape=_make_shape, infer_type=_float_type("maketrian"),
    compute={"cpu": _make_compute},
    gradient=lambda F, node, og: [F.linalg.extracttrian(og[0], offset=node.attrs.offset,
                                                        lower=node.attrs.lower)],
    doc="""Square matrices with the vectors of A in the triangle extracttrian reads (in its
order), zeros elsewhere: ``(..., m (m + 1) / 2) -> (..., n, n)`` with ``n = m + |offset|``.
Its adjoint, and gradient, is extracttrian.

>>> mx.nd.linalg.maketrian(mx.nd.array([1, 2, 3]), offset=1).asnumpy().tolist()
[[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]
"""))


# ---- gelqf: A = L Q by Householder reflections (LAPACK gelqf + orglq) ----------------------
def _gelqf_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 2 or a[-2] > a[-1]:
        raise op_error("gelqf", f"A must hold matrices of shape (x, y) with x <= y on its last "
                       f"two axes, got shape {a}")
    return [a, a[:-1] + (a[-2],)]


def _reflector(x):
    """LAPACK's larfg for the rows x (batch, k): (beta, tau, v) with H = I - tau v v^T,
    v[:, 0] = 1, taking x to (beta, 0, ..., 0); beta = -sign(x0) ||x|| (+ for x0 = 0), and
    H = I (tau = 0, beta = x0) where x[:, 1:] is already zero."""
    alpha = x[:, 0].copy()
    tail = (x[:, 1:] * x[:, 1:]).sum(axis=1)
    norm = (alpha * alpha + tail) ** 0.5
    beta = norm * ((alpha < 0) * 2.0 - 1.0)        # -sign(alpha) * norm
    still = tail == 0
    beta[still] = alpha[still]
    den = alpha - beta
    den[still] = 1.0
    safe = beta.copy()
    safe[beta == 0] = 1.0
    tau = (beta - alpha) / safe
    v = x.copy()
    v[:, 1:] /= den[:, None]
    v[:, 0] = 1.0
    return beta, tau, v


def _apply(w, tau, v):
    """w (batch, r, k) times H = I - tau v v^T from the right, in place."""
    wv = (w * v[:, None, :]).sum(axis=2)            # (batch, r)
    w -= (tau[:, None] * wv)[:, :, None] * v[:, None, :]


def _lq(xp, a, q_out, l_out):
    """Q and L of every matrix of a (batch, m, n), computed in float64."""
    count, m, n = a.shape
    w = a.astype(np.float64)                        # a copy: reduced in place
    taus, vs = [], []
    for i in range(m):
        beta, tau, v = _reflector(w[:, i, i:])
        _apply(w[:, i:, i:], tau, v)
        w[:, i, i] = beta
        w[:, i, i + 1:] = 0
        taus.append(tau)
        vs.append(v)
    q = xp.zeros((count, m, n), np.float64)
    q[:, :, :m] += xp.broadcast_to(_identity(xp, m), (count, m, m))
    for i in reversed(range(m)):                    # Q = [I 0] H_{m-1} ... H_0
        _apply(q[:, :, i:], taus[i], vs[i])
    xp.cast_into(q_out, q)
    l = w[:, :, :m]
    xp.cast_into(l_out, l)


def _identity(xp, m):
    a = xp.arange(m * m, np.int64).reshape(m, m)
    return ((a // m) == (a % m)).astype(np.float64)


def _gelqf_compute(rctx, ins, outs, attrs):
    a = ins[0]
    m, n = a.shape[-2:]
    count = size_of(a.shape[:-2])
    flat_a = a.reshape(count, m, n)
    flat_q, flat_l = outs[0].reshape(count, m, n), outs[1].reshape(count, m, m)
    for b in _batches(count, m * n):
        _lq(rctx.xp, flat_a[b], flat_q[b], flat_l[b])


def _gelqf_gradient(F, node, ograds):
    """A = L Q: with M = L^T dL - dQ Q^T, dA = L^-T (dQ + copyltu(M) Q), where copyltu(M)
    mirrors M's lower triangle into the upper one (MXNet's rule)."""
    Q, L = node.outputs
    dQ, dL = ograds
    nd = len(node.input_shapes[0])
    if 0 in tuple(node.input_shapes[0]):     # empty: nothing to solve against
        return [F.zeros_like(Q)]                               # Q has A's shape
    if dQ is None:
        dQ = F.zeros_like(Q)
    if dL is None:
        dL = F.zeros_like(L)
    M = F.linalg.gemm2(L, dL, transpose_a=True) - F.linalg.gemm2(dQ, Q, transpose_b=True)
    low = F._internal._la_trian_mask(M, lower=True)
    strict = F._internal._la_trian_mask(M, lower=True, diag=0.0)
    sym = low + F.swapaxes(strict, dim1=nd - 2, dim2=nd - 1)
    X = dQ + F.linalg.gemm2(sym, Q)
    return [F.linalg.trsm(L, X, transpose=True, lower=True)]


register(OpDef(
    "_linalg_gelqf", inputs=("A",), aliases=("linalg_gelqf",),
    infer_shape=_gelqf_shape, infer_type=lambda dtypes, attrs: [
        _float_type("gelqf")(dtypes, attrs)[0]] * 2,
    compute={"cpu": _gelqf_compute}, gradient=_gelqf_gradient, grad_needs=("outputs",),
    num_outputs=2,
    doc="""The LQ factorization ``A = L Q`` of every (x, y) matrix of A with ``x <= y``:
outputs ``Q`` (x, y) with orthonormal rows and ``L`` (x, x) lower triangular. LAPACK's
convention (gelqf then orglq, as MXNet): Householder reflections, the diagonal of L is
``-sign`` of the pivot times its norm, so it may be negative. Computed in float64 by
reflections in array operations on every device. The gradient (MXNet's rule) needs A of full
rank (a non-zero diagonal of L).

>>> q, l = mx.nd.linalg.gelqf(mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
>>> [round(v, 4) for v in l.asnumpy()[:, 0].tolist()]
[-3.7417, -8.5524]
"""))


# ---- syevd: A = U^T diag(lambda) U by cyclic Jacobi rotations (or LAPACK, see _eigen) ----
_SWEEPS = 50              # cyclic Jacobi converges quadratically: a few sweeps in practice


def _syevd_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 2 or a[-1] != a[-2]:
        raise op_error("syevd", f"A must hold square (symmetric) matrices on its last two "
                       f"axes, got shape {a}")
    return [a, a[:-1]]


def _symmetric(xp, a):
    """float64 symmetric matrices from the lower triangles of a (batch, n, n)."""
    n = a.shape[-1]
    idx = xp.arange(n * n, np.int64).reshape(n, n)
    low = (idx // n >= idx % n).astype(np.float64)
    strict = (idx // n > idx % n).astype(np.float64)
    w = a.astype(np.float64)
    return w * low + (w * strict).swapaxes(1, 2)


def _rotate(m, p, q, c, s, rows):
    """m (batch, n, n) times the Jacobi rotation (p, q) from the right (and its transpose
    from the left when ``rows``), in place."""
    if rows:
        mp, mq = m[:, p, :].copy(), m[:, q, :].copy()
        m[:, p, :] = c[:, None] * mp - s[:, None] * mq
        m[:, q, :] = s[:, None] * mp + c[:, None] * mq
    mp, mq = m[:, :, p].copy(), m[:, :, q].copy()
    m[:, :, p] = c[:, None] * mp - s[:, None] * mq
    m[:, :, q] = s[:, None] * mp + c[:, None] * mq


def _jacobi(xp, w):
    """Eigenvalues (batch, n) and eigenvector columns V (batch, n, n) of symmetric w,
    reduced in place."""
    count, n, _ = w.shape
    idx = xp.arange(n * n, np.int64).reshape(n, n)
    v = xp.zeros((count, n, n), np.float64) + ((idx // n) == (idx % n))
    off_mask = ((idx // n) != (idx % n)).astype(np.float64)
    total = (w * w).sum(axis=(1, 2))
    for _ in range(_SWEEPS):
        off = (w * w * off_mask).sum(axis=(1, 2))
        if not bool((off > total * 1e-32).any()):
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = w[:, p, q].copy()
                # a negligible a_pq (its rotation angle below 1e-150): no rotation, and no
                # overflow in theta
                zero = abs(apq) * 1e150 <= abs(w[:, q, q] - w[:, p, p])
                apq[zero] = 1.0
                theta = (w[:, q, q] - w[:, p, p]) / (2 * apq)
                t = ((theta >= 0) * 2.0 - 1.0) / (abs(theta) + (theta * theta + 1) ** 0.5)
                t[zero] = 0.0
                c = 1 / (t * t + 1) ** 0.5
                _rotate(w, p, q, c, t * c, True)
                _rotate(v, p, q, c, t * c, False)
    return w.diagonal(axis1=1, axis2=2).copy(), v


_TIE = 1e-10    # eigenvalues this close (relative to the largest) count as repeated


def _eigen(xp, w):
    """Eigenvalues and eigenvector columns of symmetric float64 w (batch, n, n). On the CPU,
    LAPACK (NumPy's eigh) for the matrices whose eigenvalues are apart: their eigenvectors
    are unique up to sign, so this is the rotations' result up to rounding, a thousand
    times sooner (the rotations are O(n^2) array operations per sweep: a 128 x 128 matrix
    took a minute). The vectors of a repeated eigenvalue depend on the algorithm, so those
    matrices, and every matrix on other devices, take the rotations (which the ONNX export
    reproduces)."""
    if not hasattr(xp, "eigh_distinct"):
        return _jacobi(xp, w)
    lam, v, tied = xp.eigh_distinct(w, _TIE)
    if tied.any():
        lam[tied], v[tied] = _jacobi(xp, w[tied])
    return lam, v


def _eig(xp, a, u_out, l_out):
    """U (eigenvectors as rows, ascending eigenvalues, each row's largest-magnitude entry
    positive: MXNet's convention) and lambda of every matrix of a (batch, n, n)."""
    lam, v = _eigen(xp, _symmetric(xp, a))
    count, n = lam.shape
    order = lam.argsort(axis=1)
    batch = xp.arange(count, np.int64).reshape(count, 1)
    lam = lam[batch, order]
    u = v.swapaxes(1, 2)[batch, order]
    big = abs(u).argmax(axis=2)
    lead = u[batch, xp.arange(n, np.int64).reshape(1, n), big]
    u *= ((lead >= 0) * 2.0 - 1.0)[:, :, None]
    xp.cast_into(u_out, u)
    xp.cast_into(l_out, lam)


def _syevd_compute(rctx, ins, outs, attrs):
    a = ins[0]
    n = a.shape[-1]
    count = size_of(a.shape[:-2])
    if not (n and count):
        return                                  # empty outputs: nothing to write
    flat_a = a.reshape(count, n, n)
    flat_u, flat_l = outs[0].reshape(count, n, n), outs[1].reshape(count, n)
    for b in _batches(count, n * n):
        _eig(rctx.xp, flat_a[b], flat_u[b], flat_l[b])


def _syevd_gradient(F, node, ograds):
    """A = U^T diag(l) U (A read from its lower triangle): with S = U dU^T and
    Fm[r, c] = 1 / (l_c - l_r) off the diagonal, G = U^T (diag(dl) + Fm * S) U; the
    gradient of the lower triangle is G + G^T, of the diagonal G's (the upper triangle is
    not read: zero)."""
    U, lam = node.outputs
    dU, dl = ograds
    shape = node.input_shapes[0]
    nd, n = len(shape), shape[-1]
    if 0 in tuple(shape):         # empty: reshape's code 0 cannot name a zero-sized target
        return [F.zeros_like(U)]                               # U has A's shape
    if dU is None:
        dU = F.zeros_like(U)
    if dl is None:
        dl = F.zeros_like(lam)
    S = F.linalg.gemm2(U, dU, transpose_b=True)
    row = F.reshape(lam, shape=tuple(shape[:-2]) + (1, n))
    col = F.reshape(lam, shape=tuple(shape[:-2]) + (n, 1))
    eye = F.eye(n, dtype=node.output_dtypes[1], ctx=node.context)
    gap = F.broadcast_add(F.broadcast_sub(row, col), eye)      # l_c - l_r, 1 on the diagonal
    Fm = F.broadcast_mul(F.reciprocal(gap), 1 - eye)
    M = F.linalg.makediag(dl) + Fm * S
    G = F.linalg.gemm2(F.linalg.gemm2(U, M, transpose_a=True), U)
    both = G + F.swapaxes(G, dim1=nd - 2, dim2=nd - 1)
    return [F._internal._la_trian_mask(both, lower=True, diag=0.5)]


register(OpDef(
    "_linalg_syevd", inputs=("A",),     # no linalg_syevd alias: MXNet 1.9.1 has none
    infer_shape=_syevd_shape, infer_type=lambda dtypes, attrs: [
        _float_type("syevd")(dtypes, attrs)[0]] * 2,
    compute={"cpu": _syevd_compute}, gradient=_syevd_gradient, grad_needs=("outputs",),
    num_outputs=2,
    doc="""The eigendecomposition ``A = U^T diag(L) U`` of every symmetric matrix of A:
outputs ``U`` (n, n) with the orthonormal eigenvectors as rows and ``L`` (n,) the
eigenvalues in ascending order; each row of U has its largest-magnitude entry positive
(MXNet's convention). A is read from its lower triangle (the upper one is ignored, and its
gradient is zero: the true derivative, where MXNet returned a symmetric one). Computed in
float64 by cyclic Jacobi rotations in array operations (on the CPU by LAPACK where no
two eigenvalues are within 1e-10 of the largest: the same result up to rounding). The
gradient needs distinct eigenvalues (MXNet's rule).

>>> u, l = mx.nd.linalg.syevd(mx.nd.array([[1.0, 2.0], [2.0, 4.0]]))
>>> [round(v, 4) for v in l.asnumpy().tolist()], [round(v, 4) for v in u.asnumpy()[0].tolist()]
([0.0, 5.0], [0.8944, -0.4472])
"""))
