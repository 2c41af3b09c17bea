"""Linear algebra (``mx.nd.linalg.*``): gemm, gemm2, potrf, potri, trsm, trmm, syrk,
sumlogdiag, extractdiag, makediag, inverse, det, slogdet — and khatri_rao.

Every ``_linalg_X`` op works on the trailing two axes and is batched over the leading ones
(``gemm``/``gemm2`` take the row axis from ``axis``); ``linalg_X`` is its top-level alias, as
in MXNet. float32 and float64 only (MXNet's rule). The work runs in ``mxlite._core.sorting``:
stacks of small matrices (n <= ``sorting.LA_SMALL_MAX``) in compiled loops computed in
float64 (potrf, potri, trsm, inverse, det, slogdet: about a microsecond per 16x16 matrix,
where LAPACK's per-call cost was several), others through ``numpy.linalg`` (LAPACK); a
singular or non-positive-definite matrix is an MXNetError naming the op.

Triangular inputs (potrf's A, potri's, trsm's and trmm's factor) are read from the triangle
``lower`` selects, the other triangle is ignored, and the gradient is the true derivative: it
is zero on the ignored triangle (MXNet returned the symmetric gradient for potrf; for a
symmetric A built symmetrically, e.g. ``A = X X^T``, the two agree on every upstream
gradient). Gradients are graphs of these same ops plus ``_la_trian_mask`` (keep a triangle,
scale its diagonal), so they differentiate to any order.

``potrf``, ``potri`` and ``inverse`` may write over their input (``out=A``, MXNet's in-place
option): each matrix's result is computed before it is written, so a stack that fills half
the memory can be factorised or inverted.
"""
import concurrent.futures
import os

import numpy as np

from .._core import sorting as _k
from ..base import FLOAT_DTYPES, op_error
from .common import compute_dtype, write_back
from .registry import OpDef, Param, register
from .shape_utils import normalize_axis, size_of


# ---- helpers -------------------------------------------------------------------------------
def _float_type(op):
    def infer_type(dtypes, attrs):
        for i, dt in enumerate(dtypes):
            if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
                raise op_error(op, f"input {i} has dtype {dt}; only float32 and float64 are "
                               "supported")
        if len(set(dtypes)) > 1:
            raise op_error(op, f"inputs must share a dtype, got {[str(d) for d in dtypes]}")
        return [dtypes[0]]
    return infer_type


def _matrix(op, shape, arg="A", square=False):
    shape = tuple(shape)
    if len(shape) < 2:
        raise op_error(op, f"{arg} must have at least 2 dimensions (a matrix), got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise op_error(op, f"{arg} must hold square matrices, got shape {shape}")
    return shape


def _same_batch(op, shapes, names):
    batch = shapes[0][:-2]
    for s, n in zip(shapes[1:], names[1:]):
        if s[:-2] != batch:
            raise op_error(op, f"{names[0]} and {n} must have the same leading (batch) "
                           f"dimensions, got shapes {shapes[0]} and {s}")


def _batch_out(shape):
    """The output shape of a per-matrix scalar: the batch shape, or (1,) for one matrix."""
    return tuple(shape[:-2]) or (1,)


def _t(F, x, ndim):
    """Transpose the trailing two axes."""
    return F.swapaxes(x, dim1=ndim - 2, dim2=ndim - 1)


def _run(op, fn, *args):
    try:
        fn(*args)
    except ValueError as e:
        raise op_error(op, str(e)) from None


def _mask(F, x, lower, diag=1.0):
    return F._internal._la_trian_mask(x, lower=lower, diag=diag)


BLOCK = 1 << 22     # elements of the largest array one call of a blocked kernel sees


def _blocked(fn, n_arrays):
    """``fn`` run on blocks of the batch. Its first ``n_arrays`` arguments are arrays sharing
    the batch shape of the first one's matrices (inputs, then the outputs it writes into:
    matrices, or one value per matrix); the kernels build full-size NumPy results and
    temporaries (a triangle, a scaled right-hand side, numpy.linalg's float64 copy of a
    float32 input) before copying into ``out``, two to four times the output's or the
    input's memory on a large batch. Blocks of at most ``BLOCK`` elements bound that (and
    spread the compiled small-matrix kernels over the cores); every matrix is computed
    alone, so the results are those of one call."""
    def run(*args):
        arrays, rest = args[:n_arrays], args[n_arrays:]
        nb = arrays[0].ndim - 2
        count = size_of(arrays[0].shape[:nb])
        step = max(1, BLOCK // max(1, max(a.size for a in arrays) // max(count, 1)))
        if count <= step:
            return fn(*args)
        flat = [a.reshape((count,) + a.shape[nb:]) for a in arrays]    # views: C-contiguous

        def block(start):
            fn(*(f[start:start + step] for f in flat), *rest)
        # the kernels release the GIL: blocks run on the OpenMP threads' worth of cores
        for _ in _pool().map(block, range(0, count, step)):
            pass                 # the first block's error, in order, is the one raised
    return run


_POOL = None


def _pool():
    """The thread pool of blocked kernels: one thread per core the kernels may use
    (OMP_NUM_THREADS, else the cores this process may run on)."""
    global _POOL
    if _POOL is None:
        threads = os.environ.get("OMP_NUM_THREADS", "")
        n = int(threads) if threads.isdigit() and int(threads) > 0 else (
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        _POOL = concurrent.futures.ThreadPoolExecutor(max(1, n or 1), "mxlite-linalg")
    return _POOL


def _forget_pool():
    """A forked child has none of the pool's threads (work sent to it would wait forever):
    it starts its own pool when it needs one."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


# ---- _la_trian_mask, extractdiag, makediag -------------------------------------------------
def _trian_mask_compute(rctx, ins, outs, attrs):
    _blocked(_k.trian_mask, 2)(ins[0], outs[0], attrs.lower, float(attrs.diag))


register(OpDef(
    "_la_trian_mask", inputs=("A",),
    params=(Param("lower", "bool", True, "keep the lower (True) or upper triangle"),
            Param("diag", "float", 1.0, "factor applied to the diagonal")),
    infer_shape=lambda shapes, attrs: [_matrix("_la_trian_mask", shapes[0])],
    infer_type=_float_type("_la_trian_mask"), compute={"cpu": _trian_mask_compute},
    gradient=lambda F, node, og: [_mask(F, og[0], node.attrs.lower, node.attrs.diag)],
    elementwise=True,
    doc="""The lower (or upper) triangle of every matrix, the other triangle zeroed and the
diagonal multiplied by ``diag``. An element-wise mask, so it is its own adjoint (its gradient
is the same op applied to the head gradient), and ``out=`` may be its input.

>>> mx.nd._internal._la_trian_mask(mx.nd.array([[1, 2], [3, 4]]), diag=0.5).asnumpy().tolist()
[[0.5, 0.0], [3.0, 2.0]]
"""))


def _diag_len(op, shape, offset):
    n = _matrix(op, shape, square=True)[-1]
    if abs(offset) >= n and n:
        raise op_error(op, f"offset={offset} is outside matrices of shape {shape[-2:]}")
    return n - abs(offset)


register(OpDef(
    "_linalg_extractdiag", inputs=("A",), aliases=("linalg_extractdiag",),
    params=(Param("offset", "int", 0, "the diagonal: 0 main, > 0 above, < 0 below"),),
    infer_shape=lambda shapes, attrs: [tuple(shapes[0][:-2]) + (
        _diag_len("extractdiag", shapes[0], attrs.offset),)],
    infer_type=_float_type("extractdiag"),
    compute={"cpu": lambda rctx, ins, outs, attrs: _k.extractdiag(ins[0], outs[0],
                                                                  attrs.offset)},
    gradient=lambda F, node, og: [F.linalg.makediag(og[0], offset=node.attrs.offset)],
    doc="""The diagonal ``offset`` of every square matrix: ``(..., n, n) -> (..., n - |offset|)``.
Its adjoint is ``makediag``.

>>> mx.nd.linalg.extractdiag(mx.nd.array([[1, 2], [3, 4]])).asnumpy().tolist()
[1.0, 4.0]
"""))


def _makediag_shape(shapes, attrs):
    a = tuple(shapes[0])
    if len(a) < 1:
        raise op_error("makediag", "A must have at least 1 dimension (vectors), got shape ()")
    return [a[:-1] + (a[-1] + abs(attrs.offset),) * 2]


register(OpDef(
    "_linalg_makediag", inputs=("A",), aliases=("linalg_makediag",),
    params=(Param("offset", "int", 0, "the diagonal: 0 main, > 0 above, < 0 below"),),
    infer_shape=_makediag_shape,
    infer_type=_float_type("makediag"),
    compute={"cpu": lambda rctx, ins, outs, attrs: _k.makediag(ins[0], outs[0], attrs.offset)},
    gradient=lambda F, node, og: [F.linalg.extractdiag(og[0], offset=node.attrs.offset)],
    doc="""Square matrices with the vectors of A on diagonal ``offset``, zeros elsewhere:
``(..., n) -> (..., n + |offset|, n + |offset|)``. Its adjoint is ``extractdiag``.

>>> mx.nd.linalg.makediag(mx.nd.array([1, 2])).asnumpy().tolist()
[[1.0, 0.0], [0.0, 2.0]]
"""))


# ---- gemm, gemm2 ---------------------------------------------------------------------------
def _gemm_geometry(op, a, b, attrs):
    a, b = _matrix(op, a, "A"), _matrix(op, b, "B")
    if len(a) != len(b):
        raise op_error(op, f"A and B must have the same number of dimensions, got shapes "
                       f"{a} and {b}")
    ax = normalize_axis(op, attrs.axis, len(a))
    if ax == len(a) - 1:
        raise op_error(op, f"axis={attrs.axis} is the column axis; it must name the row axis")
    sa, sb = _swap(a, ax), _swap(b, ax)
    m, ka = (sa[-1], sa[-2]) if attrs.transpose_a else (sa[-2], sa[-1])
    kb, n = (sb[-1], sb[-2]) if attrs.transpose_b else (sb[-2], sb[-1])
    if sa[:-2] != sb[:-2]:
        raise op_error(op, f"A and B must have the same batch dimensions, got shapes {a} and {b}"
                       f" (axis={attrs.axis})")
    if ka != kb:
        raise op_error(op, f"shapes {a} and {b} are not aligned (transpose_a="
                       f"{attrs.transpose_a}, transpose_b={attrs.transpose_b}, axis="
                       f"{attrs.axis}): {ka} != {kb}")
    return ax, _swap(sa[:-2] + (m, n), ax)


def _swap(shape, ax):
    """``shape`` with axis ``ax`` and the second-to-last axis exchanged."""
    s = list(shape)
    s[ax], s[-2] = s[-2], s[ax]
    return tuple(s)


def _gemm_product(rctx, a, b, attrs, ax):
    """out (matrix axes last, a fresh array) = alpha * op(a) op(b) in the axis layout."""
    nd = a.ndim
    a, b = a.swapaxes(ax, nd - 2), b.swapaxes(ax, nd - 2)
    if attrs.transpose_a:
        a = a.swapaxes(nd - 2, nd - 1)
    if attrs.transpose_b:
        b = b.swapaxes(nd - 2, nd - 1)
    xp = rctx.xp
    prod = xp.empty(a.shape[:-1] + (b.shape[-1],), a.dtype)
    xp.matmul(xp.ascontiguousarray(a), xp.ascontiguousarray(b), prod)
    if attrs.alpha != 1.0:
        prod *= attrs.alpha
    return prod.swapaxes(ax, nd - 2)


def _gemm_shape(shapes, attrs):
    a, b, c = shapes
    _, out = _gemm_geometry("gemm", a, b, attrs)
    if tuple(c) != out:
        raise op_error("gemm", f"C has shape {tuple(c)}; op(A) op(B) has shape {out}")
    return [out]


def _gemm_compute(rctx, ins, outs, attrs):
    a, b, c = ins
    ax = normalize_axis("gemm", attrs.axis, a.ndim)
    prod = _gemm_product(rctx, a, b, attrs, ax)
    if attrs.beta != 0.0:
        prod = prod + c * attrs.beta
    rctx.xp.copyto(outs[0], prod)


def _gemm2_shape(shapes, attrs):
    return [_gemm_geometry("gemm2", shapes[0], shapes[1], attrs)[1]]


def _gemm2_compute(rctx, ins, outs, attrs):
    a, b = ins
    ax = normalize_axis("gemm2", attrs.axis, a.ndim)
    rctx.xp.copyto(outs[0], _gemm_product(rctx, a, b, attrs, ax))


def _gemm_ab_grads(F, node, G):
    """dA, dB of alpha op(A) op(B) (the dot rules, as gemm2 calls in the same axis layout)."""
    a = node.attrs
    ta, tb, alpha, ax = a.transpose_a, a.transpose_b, a.alpha, a.axis
    A, B = node.inputs[0], node.inputs[1]
    dA = dB = None
    if node.wants[0]:
        dA = (F.linalg.gemm2(B, G, transpose_a=tb, transpose_b=True, alpha=alpha, axis=ax)
              if ta else
              F.linalg.gemm2(G, B, transpose_b=not tb, alpha=alpha, axis=ax))
    if node.wants[1]:
        dB = (F.linalg.gemm2(G, A, transpose_a=True, transpose_b=ta, alpha=alpha, axis=ax)
              if tb else
              F.linalg.gemm2(A, G, transpose_a=not ta, alpha=alpha, axis=ax))
    return dA, dB


def _gemm_gradient(F, node, ograds):
    """out = alpha op(A) op(B) + beta C: dA = alpha G op(B)^T (transposed for transpose_a),
    dB = alpha op(A)^T G (likewise), dC = beta G."""
    dA, dB = _gemm_ab_grads(F, node, ograds[0])
    dC = ograds[0] * node.attrs.beta if node.wants[2] else None
    return [dA, dB, dC]


def _gemm2_gradient(F, node, ograds):
    """out = alpha op(A) op(B): dA = alpha G op(B)^T, dB = alpha op(A)^T G (transposed where
    A or B enters transposed)."""
    return list(_gemm_ab_grads(F, node, ograds[0]))


_GEMM_PARAMS = (Param("transpose_a", "bool", False, "multiply with the transpose of A"),
                Param("transpose_b", "bool", False, "multiply with the transpose of B"),
                Param("alpha", "float", 1.0, "factor of op(A) op(B)"))
_AXIS = Param("axis", "int", -2, "the axis of the matrix rows (columns are the last axis)")

register(OpDef(
    "_linalg_gemm", inputs=("A", "B", "C"), aliases=("linalg_gemm",),
    params=_GEMM_PARAMS + (Param("beta", "float", 1.0, "factor of C"), _AXIS),
    infer_shape=_gemm_shape, infer_type=_float_type("gemm"), compute={"cpu": _gemm_compute},
    gradient=_gemm_gradient,
    doc="""``alpha * op(A) @ op(B) + beta * C`` per matrix (op transposes when asked).

Rows are on ``axis`` (default -2), columns on the last axis; the other axes are batch axes
and must agree.

>>> A, B = mx.nd.ones((2, 2)), mx.nd.ones((3, 2))
>>> mx.nd.linalg.gemm(A, B, mx.nd.ones((2, 3)), transpose_b=True, alpha=2.0,
...                   beta=10.0).asnumpy().tolist()
[[14.0, 14.0, 14.0], [14.0, 14.0, 14.0]]
"""))

register(OpDef(
    "_linalg_gemm2", inputs=("A", "B"), aliases=("linalg_gemm2",),
    params=_GEMM_PARAMS + (_AXIS,),
    infer_shape=_gemm2_shape, infer_type=_float_type("gemm2"), compute={"cpu": _gemm2_compute},
    gradient=_gemm2_gradient,
    doc="""``alpha * op(A) @ op(B)`` per matrix (rows on ``axis``, batched as ``gemm``).

>>> mx.nd.linalg.gemm2(mx.nd.array([[1, 2]]), mx.nd.array([[3], [4]])).asnumpy().tolist()
[[11.0]]
"""))


# ---- potrf, potri --------------------------------------------------------------------------
_LOWER = Param("lower", "bool", True, "the factor is lower (True) or upper triangular")


def _potrf_gradient(F, node, ograds):
    """L = chol(A) reading A's lower triangle (a = L L^T): with W = L^-T Phi(L^T Lbar) L^-1,
    Phi the lower triangle with half its diagonal, dA = tril(W + W^T) with half its diagonal
    (the triangle that was read). Upper: U = L^T, the same in transposed form."""
    lower, nd = node.attrs.lower, len(node.input_shapes[0])
    Lf, G = node.outputs[0], ograds[0]
    if lower:
        X = _mask(F, F.linalg.gemm2(Lf, G, transpose_a=True), True, 0.5)
        Y = F.linalg.trsm(Lf, X, transpose=True)                    # L^-T X
        W = F.linalg.trsm(Lf, Y, rightside=True)                    # Y L^-1
    else:                                   # U = L^T: L^T Lbar = U Gbar^T, L^-T = U^-1
        X = _mask(F, F.linalg.gemm2(Lf, G, transpose_b=True), True, 0.5)
        Y = F.linalg.trsm(Lf, X, lower=False)                       # U^-1 X
        W = F.linalg.trsm(Lf, Y, rightside=True, transpose=True, lower=False)   # Y U^-T
    return [_mask(F, W + _t(F, W, nd), lower, 0.5)]


def _potri_gradient(F, node, ograds):
    """out = (L L^T)^-1: with Q = out G out, dL = -tril((Q + Q^T) L); upper (out = (U^T U)^-1):
    dU = -triu(U (Q + Q^T))."""
    lower, nd = node.attrs.lower, len(node.input_shapes[0])
    out, G = node.outputs[0], ograds[0]
    L = _mask(F, node.inputs[0], lower)             # the triangle the forward pass read
    Q = F.linalg.gemm2(F.linalg.gemm2(out, G), out)
    S = Q + _t(F, Q, nd)
    prod = F.linalg.gemm2(S, L, alpha=-1.0) if lower else F.linalg.gemm2(L, S, alpha=-1.0)
    return [_mask(F, prod, lower)]


def _square_shape(op):
    def infer_shape(shapes, attrs):
        return [_matrix(op, shapes[0], square=True)]
    return infer_shape


register(OpDef(
    "_linalg_potrf", inputs=("A",), aliases=("linalg_potrf",), params=(_LOWER,),
    infer_shape=_square_shape("potrf"), infer_type=_float_type("potrf"),
    compute={"cpu": lambda rctx, ins, outs, attrs: _run("potrf", _blocked(_k.potrf, 2), ins[0],
                                                        outs[0], attrs.lower)},
    gradient=_potrf_gradient, grad_needs=("outputs",), in_place=True,
    doc="""Cholesky factorisation of symmetric positive-definite matrices: L with
``A = L L^T`` (lower, default) or U with ``A = U^T U``; only A's ``lower`` (upper) triangle is
read. A matrix that is not positive definite is an MXNetError. The gradient is taken with
respect to the triangle read (see the module notes).

>>> mx.nd.linalg.potrf(mx.nd.array([[4, 2], [2, 5]])).asnumpy().tolist()
[[2.0, 0.0], [1.0, 2.0]]
"""))

register(OpDef(
    "_linalg_potri", inputs=("A",), aliases=("linalg_potri",), params=(_LOWER,),
    infer_shape=_square_shape("potri"), infer_type=_float_type("potri"),
    compute={"cpu": lambda rctx, ins, outs, attrs: _run("potri", _blocked(_k.potri, 2), ins[0],
                                                        outs[0], attrs.lower)},
    gradient=_potri_gradient, grad_needs=("inputs", "outputs"), in_place=True,
    doc="""The inverse ``(L L^T)^-1`` of the matrix whose Cholesky factor L (lower triangle of
A; ``U^T U`` with ``lower=False``) is given: ``potri(potrf(B))`` is ``B^-1``.

>>> mx.nd.linalg.potri(mx.nd.array([[2, 0], [1, 2]])).asnumpy().tolist()
[[0.3125, -0.125], [-0.125, 0.25]]
"""))


# ---- trsm, trmm ----------------------------------------------------------------------------
_TRI_PARAMS = (Param("transpose", "bool", False, "use the transpose of the triangular A"),
               Param("rightside", "bool", False, "A multiplies from the right"),
               _LOWER,
               Param("alpha", "float", 1.0, "factor of B"))


def _tri_shape(op):
    def infer_shape(shapes, attrs):
        a = _matrix(op, shapes[0], "A", square=True)
        b = _matrix(op, shapes[1], "B")
        if len(a) != len(b):
            raise op_error(op, f"A and B must have the same number of dimensions, got shapes "
                           f"{a} and {b}")
        _same_batch(op, [a, b], ["A", "B"])
        k = b[-1] if attrs.rightside else b[-2]
        if k != a[-1]:
            side = "columns" if attrs.rightside else "rows"
            raise op_error(op, f"B of shape {b} has {k} {side}; A of shape {a} needs {a[-1]} "
                           f"(rightside={attrs.rightside})")
        return [b]
    return infer_shape


def _tri_products(F, node, X, Y):
    """d op(T) terms shared by trsm and trmm: the four side/transpose cases of the gradient
    with respect to the triangle T, as one gemm2 of X and Y."""
    a = node.attrs
    if not a.rightside:
        return (F.linalg.gemm2(X, Y, transpose_b=True) if a.transpose
                else F.linalg.gemm2(Y, X, transpose_b=True))
    return (F.linalg.gemm2(Y, X, transpose_a=True) if a.transpose
            else F.linalg.gemm2(X, Y, transpose_a=True))


def _trsm_gradient(F, node, ograds):
    """X = alpha op(T)^-1 B (or alpha B op(T)^-1): with Y = op(T)^-T G (G op(T)^-T),
    dB = alpha Y and dT = -(Y X^T, X Y^T, X^T Y or Y^T X for left, left-transposed, right,
    right-transposed), restricted to T's triangle."""
    a = node.attrs
    A, X, G = node.inputs[0], node.outputs[0], ograds[0]
    Y = F.linalg.trsm(A, G, transpose=not a.transpose, rightside=a.rightside, lower=a.lower)
    dA = _mask(F, _tri_products(F, node, X, Y) * -1.0, a.lower) if node.wants[0] else None
    dB = Y * a.alpha if node.wants[1] else None
    return [dA, dB]


def _trmm_gradient(F, node, ograds):
    """out = alpha op(T) B (or alpha B op(T)): dB = alpha op(T)^T G (G op(T)^T), dT = alpha
    (G B^T, B G^T, B^T G or G^T B), restricted to T's triangle."""
    a = node.attrs
    A, B, G = node.inputs[0], node.inputs[1], ograds[0]
    dA = (_mask(F, _tri_products(F, node, B, G) * a.alpha, a.lower)
          if node.wants[0] else None)
    dB = (F.linalg.trmm(A, G, transpose=not a.transpose, rightside=a.rightside, lower=a.lower,
                        alpha=a.alpha) if node.wants[1] else None)
    return [dA, dB]


def _tri_compute(op, fn):
    def compute(rctx, ins, outs, attrs):
        _run(op, _blocked(fn, 3), ins[0], ins[1], outs[0], attrs.transpose, attrs.rightside,
             attrs.lower, float(attrs.alpha))
    return compute


register(OpDef(
    "_linalg_trsm", inputs=("A", "B"), aliases=("linalg_trsm",), params=_TRI_PARAMS,
    infer_shape=_tri_shape("trsm"), infer_type=_float_type("trsm"),
    compute={"cpu": _tri_compute("trsm", _k.trsm)},
    gradient=_trsm_gradient, grad_needs=("inputs", "outputs"),
    doc="""Solve the triangular system ``op(A) X = alpha B`` (``X op(A) = alpha B`` with
``rightside``); A's ``lower`` (upper) triangle is read, op transposes when ``transpose``.
A singular triangle is an MXNetError.

>>> mx.nd.linalg.trsm(mx.nd.array([[2, 0], [1, 1]]), mx.nd.array([[2], [3]])).asnumpy().tolist()
[[1.0], [2.0]]
"""))

register(OpDef(
    "_linalg_trmm", inputs=("A", "B"), aliases=("linalg_trmm",), params=_TRI_PARAMS,
    infer_shape=_tri_shape("trmm"), infer_type=_float_type("trmm"),
    compute={"cpu": _tri_compute("trmm", _k.trmm)},
    gradient=_trmm_gradient,
    doc="""Triangular product ``alpha op(A) B`` (``alpha B op(A)`` with ``rightside``); A's
``lower`` (upper) triangle is read.

>>> mx.nd.linalg.trmm(mx.nd.array([[2, 9], [1, 1]]), mx.nd.array([[1], [2]])).asnumpy().tolist()
[[2.0], [3.0]]
"""))


# ---- syrk ----------------------------------------------------------------------------------
def _syrk_shape(shapes, attrs):
    a = _matrix("syrk", shapes[0])
    n = a[-1] if attrs.transpose else a[-2]
    return [a[:-2] + (n, n)]


def _syrk_compute(rctx, ins, outs, attrs):
    a = ins[0]
    nd = a.ndim
    at = a.swapaxes(nd - 2, nd - 1)
    xp = rctx.xp
    lhs, rhs = (at, a) if attrs.transpose else (a, at)
    xp.matmul(xp.ascontiguousarray(lhs), xp.ascontiguousarray(rhs), outs[0])
    if attrs.alpha != 1.0:
        outs[0] *= attrs.alpha


def _syrk_gradient(F, node, ograds):
    """out = alpha A A^T: dA = alpha (G + G^T) A; transposed (alpha A^T A): dA = alpha A (G + G^T)."""
    a, nd = node.attrs, len(node.input_shapes[0])
    A, G = node.inputs[0], ograds[0]
    S = G + _t(F, G, nd)
    return [F.linalg.gemm2(A, S, alpha=a.alpha) if a.transpose
            else F.linalg.gemm2(S, A, alpha=a.alpha)]


register(OpDef(
    "_linalg_syrk", inputs=("A",), aliases=("linalg_syrk",),
    params=(Param("transpose", "bool", False, "compute A^T A instead of A A^T"),
            Param("alpha", "float", 1.0, "factor of the product")),
    infer_shape=_syrk_shape, infer_type=_float_type("syrk"), compute={"cpu": _syrk_compute},
    gradient=_syrk_gradient,
    doc="""Symmetric rank-k product ``alpha A A^T`` (``alpha A^T A`` with ``transpose``).

>>> mx.nd.linalg.syrk(mx.nd.array([[1, 2, 3], [4, 5, 6]])).asnumpy().tolist()
[[14.0, 32.0], [32.0, 77.0]]
"""))


# ---- sumlogdiag, inverse, det, slogdet -----------------------------------------------------
def _scalar_shape(op):
    def infer_shape(shapes, attrs):
        return [_batch_out(_matrix(op, shapes[0], square=True))]
    return infer_shape


def _per_matrix(F, node, g):
    """A per-matrix head gradient reshaped to (batch..., 1, 1), ready to broadcast."""
    return F.reshape(g, shape=tuple(node.input_shapes[0][:-2]) + (1, 1))


def _sumlogdiag_gradient(F, node, ograds):
    """d sum(log diag A) = diag(1 / diag A), times the head gradient."""
    A = node.inputs[0]
    g = F.reshape(ograds[0], shape=tuple(node.input_shapes[0][:-2]) + (1,))
    return [F.linalg.makediag(F.broadcast_div(g, F.linalg.extractdiag(A)))]


register(OpDef(
    "_linalg_sumlogdiag", inputs=("A",), aliases=("linalg_sumlogdiag",),
    infer_shape=_scalar_shape("sumlogdiag"), infer_type=_float_type("sumlogdiag"),
    compute={"cpu": lambda rctx, ins, outs, attrs: _k.sumlogdiag(ins[0], outs[0])},
    gradient=_sumlogdiag_gradient,
    doc="""``sum(log(diag(A)))`` per square matrix (the log-determinant of a Cholesky factor,
halved). One matrix gives shape (1,) (MXNet), a batch its batch shape. A non-positive
diagonal element gives NaN or -inf, as in MXNet.

>>> round(float(mx.nd.linalg.sumlogdiag(mx.nd.array([[4, 9], [1, 3]])).asscalar()), 4)
2.4849
"""))


def _inverse_gradient(F, node, ograds):
    """d A^-1 = -A^-1 dA A^-1: dA = -(A^-1)^T G (A^-1)^T."""
    out = node.outputs[0]
    return [F.linalg.gemm2(F.linalg.gemm2(out, ograds[0], transpose_a=True), out,
                           transpose_b=True, alpha=-1.0)]


register(OpDef(
    "_linalg_inverse", inputs=("A",), aliases=("linalg_inverse",),
    infer_shape=_square_shape("inverse"), infer_type=_float_type("inverse"),
    compute={"cpu": lambda rctx, ins, outs, attrs: _run("inverse", _blocked(_k.inverse, 2),
                                                        ins[0], outs[0])},
    gradient=_inverse_gradient, grad_needs=("outputs",), in_place=True,
    doc="""The inverse of every square matrix; a singular one is an MXNetError.

>>> mx.nd.linalg.inverse(mx.nd.array([[2, 0], [0, 4]])).asnumpy().tolist()
[[0.5, 0.0], [0.0, 0.25]]
"""))


def _per_matrix_compute(kernel, empty_values):
    """The compute function of det/slogdet: ``kernel`` on the stack, or for 0 x 0 matrices
    the value of an empty product (det 1; slogdet sign 1, log 0, as NumPy)."""
    def compute(rctx, ins, outs, attrs):
        if ins[0].shape[-1] == 0:
            for out, value in zip(outs, empty_values):
                out[...] = value
            return
        _blocked(kernel, 1 + len(outs))(ins[0], *outs)
    return compute


def _det_gradient(F, node, ograds):
    """d det A = det A * A^-T : dA = g det(A) inverse(A)^T."""
    A, out = node.inputs[0], node.outputs[0]
    nd = len(node.input_shapes[0])
    scale = _per_matrix(F, node, ograds[0] * out)
    return [F.broadcast_mul(scale, _t(F, F.linalg.inverse(A), nd))]


register(OpDef(
    "_linalg_det", inputs=("A",), aliases=("linalg_det",),
    infer_shape=_scalar_shape("det"), infer_type=_float_type("det"),
    compute={"cpu": _per_matrix_compute(_k.det, (1.0,))},
    gradient=_det_gradient, grad_needs=("inputs", "outputs"),
    doc="""The determinant of every square matrix (LU). One matrix gives shape (1,), a batch its
batch shape. The gradient ``det(A) A^-T`` needs A invertible.

>>> mx.nd.linalg.det(mx.nd.array([[1, 2], [3, 4]])).asnumpy().round(6).tolist()
[-2.0]
"""))


def _slogdet_gradient(F, node, ograds):
    """d log|det A| = A^-T (the sign is piecewise constant: no gradient)."""
    A = node.inputs[0]
    nd = len(node.input_shapes[0])
    return [F.broadcast_mul(_per_matrix(F, node, ograds[1]), _t(F, F.linalg.inverse(A), nd))]


def _slogdet_shape(shapes, attrs):
    out = _scalar_shape("slogdet")(shapes, attrs)[0]
    return [out, out]


register(OpDef(
    "_linalg_slogdet", inputs=("A",), aliases=("linalg_slogdet",),
    infer_shape=_slogdet_shape,
    infer_type=lambda dtypes, attrs: _float_type("slogdet")(dtypes, attrs) * 2,
    compute={"cpu": _per_matrix_compute(_k.slogdet, (1.0, 0.0))},
    gradient=_slogdet_gradient, num_outputs=2,
    doc="""``[sign, log|det A|]`` of every square matrix (outputs ``output0``, ``output1``, as
in MXNet; a singular matrix gives sign 0 and -inf). The sign has no gradient;
log|det A|'s is ``A^-T``.

>>> sign, logabs = mx.nd.linalg.slogdet(mx.nd.array([[-1, 0], [0, 2]]))
>>> sign.asnumpy().tolist(), round(float(logabs.asscalar()), 4)
([-1.0], 0.6931)
"""))


# ---- khatri_rao ----------------------------------------------------------------------------
def _khatri_rao_shape(shapes, attrs):
    if not shapes:
        raise op_error("khatri_rao", "needs at least one input matrix")
    k = None
    rows = 1
    for i, s in enumerate(shapes):
        s = tuple(s)
        if len(s) != 2:
            raise op_error("khatri_rao", f"input {i} must be a matrix (2-d), got shape {s}")
        if k is None:
            k = s[1]
        elif s[1] != k:
            raise op_error("khatri_rao", f"every input must have {k} columns (input 0); "
                           f"input {i} has shape {s}")
        rows *= s[0]
    return [(rows, k)]


def _khatri_rao_type(dtypes, attrs):
    if len(set(dtypes)) > 1:
        raise op_error("khatri_rao", f"inputs must share a dtype, got {[str(d) for d in dtypes]}")
    if dtypes[0] not in FLOAT_DTYPES:
        raise op_error("khatri_rao", f"inputs must be float arrays, got {dtypes[0]}")
    return [dtypes[0]]


def _khatri_rao_compute(rctx, ins, outs, attrs):
    xp, out = rctx.xp, outs[0]
    work = compute_dtype(out.dtype)
    mats = [m if m.dtype == work else m.astype(work) for m in ins]
    k = out.shape[1]
    acc = mats[0]
    for i, m in enumerate(mats[1:], 2):         # the last step writes into out itself
        nxt = (out if i == len(mats) and out.dtype == work
               else xp.empty((acc.shape[0] * m.shape[0], k), work))
        _k.khatri_rao_step(acc.reshape(-1), acc.shape[0], m.reshape(-1), m.shape[0],
                           nxt.reshape(-1), k)
        acc = nxt
    write_back(xp, acc, out)


def _khatri_rao_gradient(F, node, ograds):
    """out[(i1, ..., im), c] = prod_l A_l[i_l, c]: dA_l[j, c] = sum over the other indices of
    G[(.., j, ..), c] times the product of the other factors (their khatri_rao, broadcast)."""
    mats, shapes = node.inputs, node.input_shapes
    m = len(mats)
    if m == 1:
        return [ograds[0]]
    rows = tuple(s[0] for s in shapes)
    k = shapes[0][1]
    G = F.reshape(ograds[0], shape=rows + (k,))
    grads = []
    for l in range(m):
        if not node.wants[l]:
            grads.append(None)
            continue
        others = [mats[i] for i in range(m) if i != l]
        P = others[0] if len(others) == 1 else F.khatri_rao(*others)
        P = F.reshape(P, shape=tuple(1 if i == l else r for i, r in enumerate(rows)) + (k,))
        axes = tuple(i for i in range(m) if i != l)
        grads.append(F.sum(F.broadcast_mul(G, P), axis=axes))
    return grads


register(OpDef(
    "khatri_rao", inputs=("args",), variadic=True, key_var_num_args="num_args",
    params=(Param("num_args", "int", None, "the number of input matrices"),),
    infer_shape=_khatri_rao_shape, infer_type=_khatri_rao_type,
    compute={"cpu": _khatri_rao_compute}, gradient=_khatri_rao_gradient,
    doc="""Column-wise Kronecker (Khatri-Rao) product of matrices ``(n_i, k)``: the output
``(prod n_i, k)`` has column c equal to ``kron(A_1[:, c], ..., A_m[:, c])``.

>>> A, B = mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 2], [3, 4], [5, 6]])
>>> mx.nd.khatri_rao(A, B).asnumpy().tolist()
[[1.0, 4.0], [3.0, 8.0], [5.0, 12.0], [3.0, 8.0], [9.0, 16.0], [15.0, 24.0]]
"""))
