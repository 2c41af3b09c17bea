"""The matrix factorisations and solves of mx.nd.linalg (potrf, potri, trsm, inverse, gelqf)
as ONNX Loops over the static matrix size: one column (or row) of the result per
iteration, every matrix of the batch at once, in the input's dtype (gelqf in float64, as
mxlite computes it). ONNX has no factorisation operator; these are the column-by-column
algorithms written with Gather, MatMul and Where."""
import numpy as np

from ..table import not_expressible, translates
from .linalg import _t
from .loop import loop

_LOOP_OPS = ["Loop", "Gather", "Unsqueeze", "Equal", "Where", "MatMul", "Sub", "Div",
             "ConstantOfShape", "Shape", "Identity"]
_SINGULAR = ("a singular matrix gives inf or NaN where mxlite raises an MXNetError")


# ---- shared pieces ---------------------------------------------------------------------------
def _elem(ctx, dtype):
    return ctx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _zeros_like(ctx, x, dtype):
    """Zeros of ``x``'s (run-time) shape: ``x * 0`` would turn an inf of x into NaN."""
    zero = ctx.onnx.numpy_helper.from_array(np.zeros(1, dtype), "zero")
    return ctx.node("ConstantOfShape", [ctx.node("Shape", [x])], value=zero)


def _is(ctx, n, at, column=False):
    """Bool (n,) (or (n, 1) with ``column``): position == ``at`` (an int64 scalar)."""
    hit = ctx.node("Equal", [ctx.const(np.arange(n, dtype=np.int64)), at])
    return ctx.node("Unsqueeze", [hit, ctx.int64s([1])]) if column else hit


def _pick(ctx, x, at, axis, keep=False):
    """``x`` at index ``at`` (an int64 scalar) of ``axis``; the axis kept with ``keep``."""
    got = ctx.node("Gather", [x, at], axis=axis)
    return ctx.node("Unsqueeze", [got, ctx.int64s([axis])]) if keep else got


def _eye_like(ctx, a, n, dtype):
    """Identity matrices of ``a``'s (run-time) shape (..., n, n)."""
    return ctx.node("Expand", [ctx.const(np.eye(n, dtype=dtype)), ctx.node("Shape", [a])])


# ---- Cholesky --------------------------------------------------------------------------------
def _cholesky(ctx, a, n, dtype):
    """L with a = L L^T from a's lower triangle (..., n, n): column j of L is
    (a[:, j] - L L[j]^T) / sqrt of its j-th entry, on and below the diagonal."""
    def body(j, values):
        low = values[0]
        row = ctx.node("Unsqueeze", [_pick(ctx, low, j, -2), ctx.int64s([-1])])   # (..., n, 1)
        v = ctx.node("Sub", [_pick(ctx, a, j, -1, keep=True), ctx.node("MatMul", [low, row])])
        root = ctx.node("Sqrt", [_pick(ctx, v, j, -2, keep=True)])                 # (..., 1, 1)
        below = ctx.node("Where", [
            ctx.node("GreaterOrEqual", [ctx.const(np.arange(n, dtype=np.int64)[:, None]), j]),
            ctx.node("Div", [v, root]), ctx.const(np.zeros(1, dtype))])
        return None, [ctx.node("Where", [_is(ctx, n, j), below, low])], []
    return loop(ctx, [(_zeros_like(ctx, a, dtype), _elem(ctx, dtype))], body,
                trips=ctx.const(np.int64(n)))[0]


@translates("_linalg_potrf", onnx_ops=_LOOP_OPS + ["Sqrt", "GreaterOrEqual", "Transpose"],
            notes="Cholesky by columns in a Loop; a matrix that is not positive definite "
                  "gives NaN (or inf) on and below the diagonal from the column of the first "
                  "non-positive pivot on, where mxlite raises an MXNetError")
def _potrf(ctx, node, ins, outs):
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    nd, n = len(shape), shape[-1]
    if node.attrs.lower:
        ctx.node("Identity", [_cholesky(ctx, ins[0], n, dtype)], outs)
    else:                                   # U = chol(A^T)^T reads A's upper triangle
        _t_into(ctx, _cholesky(ctx, _t(ctx, ins[0], nd), n, dtype), nd, outs)


def _t_into(ctx, x, nd, outs):
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    ctx.node("Transpose", [x], outs, perm=perm)


# ---- triangular solve ------------------------------------------------------------------------
def _solve(ctx, m, r, n, lower, dtype):
    """X with m X = r, m (..., n, n) triangular (the other triangle zero) and r (..., n, k):
    forward (lower) or backward substitution, one row of X per iteration."""
    def body(step, values):
        x = values[0]
        i = step if lower else ctx.node("Sub", [ctx.const(np.int64(n - 1)), step])
        mrow = _pick(ctx, m, i, -2, keep=True)                              # (..., 1, n)
        rest = ctx.node("Sub", [_pick(ctx, r, i, -2, keep=True), ctx.node("MatMul", [mrow, x])])
        xi = ctx.node("Div", [rest, _pick(ctx, mrow, i, -1, keep=True)])    # (..., 1, k)
        return None, [ctx.node("Where", [_is(ctx, n, i, column=True), xi, x])], []
    return loop(ctx, [(_zeros_like(ctx, r, dtype), _elem(ctx, dtype))], body,
                trips=ctx.const(np.int64(n)))[0]


def _triangle(ctx, a, lower):
    return ctx.node("Trilu", [a], upper=0 if lower else 1)


@translates("_linalg_trsm", onnx_ops=_LOOP_OPS + ["Trilu", "Transpose", "Mul"],
            notes="substitution by rows in a Loop; the other triangle of A is ignored "
                  "(Trilu); a zero on A's diagonal gives inf or NaN where mxlite raises an "
                  "MXNetError")
def _trsm(ctx, node, ins, outs):
    a = node.attrs
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    nd, n = len(shape), shape[-1]
    m, lower = _triangle(ctx, ins[0], a.lower), bool(a.lower)
    if a.transpose:
        m, lower = _t(ctx, m, nd), not lower
    r = ins[1]
    if a.alpha != 1.0:
        r = ctx.node("Mul", [r, ctx.const(np.asarray(a.alpha, dtype))])
    if not a.rightside:
        ctx.node("Identity", [_solve(ctx, m, r, n, lower, dtype)], outs)
        return
    # X op(T) = R  <=>  op(T)^T X^T = R^T
    _t_into(ctx, _solve(ctx, _t(ctx, m, nd), _t(ctx, r, nd), n, not lower, dtype), nd, outs)


@translates("_linalg_potri", onnx_ops=_LOOP_OPS + ["Trilu", "Transpose", "Expand"],
            notes="the factor's inverse by substitution in a Loop, then its product with "
                  "its transpose; the other triangle is ignored (Trilu); a zero on the "
                  "diagonal gives inf or NaN where mxlite raises an MXNetError")
def _potri(ctx, node, ins, outs):
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    nd, n = len(shape), shape[-1]
    lower = bool(node.attrs.lower)
    tri = _triangle(ctx, ins[0], lower)
    inv = _solve(ctx, tri, _eye_like(ctx, ins[0], n, dtype), n, lower, dtype)
    pair = [_t(ctx, inv, nd), inv] if lower else [inv, _t(ctx, inv, nd)]
    ctx.node("MatMul", pair, outs)       # (L L^T)^-1 = L^-T L^-1; (U^T U)^-1 = U^-1 U^-T


# ---- general inverse -------------------------------------------------------------------------
@translates("_linalg_inverse", onnx_ops=_LOOP_OPS + [
    "Abs", "ArgMax", "GreaterOrEqual", "GatherElements", "Expand", "Concat", "Mul", "Slice"],

    notes="Gauss-Jordan elimination with partial pivoting in a Loop (the results agree "
          "with mxlite's LU up to rounding); " + _SINGULAR)
def _inverse(ctx, node, ins, outs):
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    n = shape[-1]
    positions = ctx.const(np.arange(n, dtype=np.int64))
    work = ctx.node("Concat", [ins[0], _eye_like(ctx, ins[0], n, dtype)], axis=-1)

    def body(j, values):
        w = values[0]                                                   # (..., n, 2n)
        col = _pick(ctx, w, j, -1)                                      # (..., n)
        # the pivot: the largest magnitude on or below the diagonal (the first of ties)
        candidates = ctx.node("Where", [ctx.node("GreaterOrEqual", [positions, j]),
                                        ctx.node("Abs", [col]), ctx.const(np.asarray(-1, dtype))])
        p = ctx.node("ArgMax", [candidates], axis=-1, keepdims=1)       # (..., 1)
        perm = ctx.node("Where", [_is(ctx, n, j), p, ctx.node("Where", [
            ctx.node("Equal", [positions, p]), j, positions])])         # rows j and p swapped
        index = ctx.node("Expand", [ctx.node("Unsqueeze", [perm, ctx.int64s([-1])]),
                                    ctx.node("Shape", [w])])
        w = ctx.node("GatherElements", [w, index], axis=-2)
        row = _pick(ctx, w, j, -2, keep=True)                           # (..., 1, 2n)
        row = ctx.node("Div", [row, _pick(ctx, row, j, -1, keep=True)])
        factors = ctx.node("Where", [_is(ctx, n, j, column=True), ctx.const(np.zeros(1, dtype)),
                                     _pick(ctx, w, j, -1, keep=True)])  # (..., n, 1)
        w = ctx.node("Sub", [w, ctx.node("Mul", [factors, row])])
        return None, [ctx.node("Where", [_is(ctx, n, j, column=True), row, w])], []
    done = loop(ctx, [(work, _elem(ctx, dtype))], body, trips=ctx.const(np.int64(n)))[0]
    ctx.node("Slice", [done, ctx.int64s([n]), ctx.int64s([2 * n]), ctx.int64s([-1])], outs)


# ---- LQ by Householder reflections -----------------------------------------------------------
def _reflector(ctx, x, i, n):
    """mxlite's (LAPACK's larfg) reflector of row ``x`` (..., n) at column ``i``: beta, tau
    (...) and v (..., n) (zero before i, 1 at i) with H = I - tau v v^T taking x[i:] to
    (beta, 0, ...); beta = -sign(x[i]) ||x[i:]|| (+ for x[i] = 0), and H = I (tau = 0,
    beta = x[i]) when x[i + 1:] is zero already."""
    f64 = np.float64
    one, zero = ctx.const(np.asarray(1.0, f64)), ctx.const(np.asarray(0.0, f64))
    after = ctx.node("Greater", [ctx.const(np.arange(n, dtype=np.int64)), i])
    alpha = _pick(ctx, x, i, -1)
    tail = ctx.node("ReduceSum", [ctx.node("Where", [after, ctx.node("Mul", [x, x]), zero]),
                                  ctx.int64s([-1])], keepdims=0)
    norm = ctx.node("Sqrt", [ctx.node("Add", [ctx.node("Mul", [alpha, alpha]), tail])])
    negative = ctx.node("Less", [alpha, zero])
    beta = ctx.node("Mul", [norm, ctx.node("Where", [negative, one, ctx.const(np.asarray(
        -1.0, f64))])])
    still = ctx.node("Equal", [tail, zero])
    beta = ctx.node("Where", [still, alpha, beta])
    den = ctx.node("Where", [still, one, ctx.node("Sub", [alpha, beta])])
    safe = ctx.node("Where", [ctx.node("Equal", [beta, zero]), one, beta])
    tau = ctx.node("Div", [ctx.node("Sub", [beta, alpha]), safe])
    scaled = ctx.node("Div", [x, ctx.node("Unsqueeze", [den, ctx.int64s([-1])])])
    v = ctx.node("Where", [_is(ctx, n, i), one, ctx.node("Where", [after, scaled, zero])])
    return beta, tau, v


def _reflect(ctx, w, tau, v):
    """``w`` (..., r, n) times I - tau v v^T from the right."""
    wv = ctx.node("MatMul", [w, ctx.node("Unsqueeze", [v, ctx.int64s([-1])])])     # (..., r, 1)
    step = ctx.node("Mul", [ctx.node("Mul", [ctx.node("Unsqueeze", [tau, ctx.int64s([-1, -2])]),
                                             wv]),
                            ctx.node("Unsqueeze", [v, ctx.int64s([-2])])])
    return ctx.node("Sub", [w, step])


@translates("_linalg_gelqf", onnx_ops=_LOOP_OPS + [
    "Cast", "Greater", "Less", "ReduceSum", "Sqrt", "Add", "Mul", "Expand", "Slice"],

    notes="Householder reflections in two Loops, in float64 as mxlite computes them "
          "(LAPACK's signs: the diagonal of L may be negative)")
def _gelqf(ctx, node, ins, outs):
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    m, n = shape[-2:]
    f64 = _elem(ctx, np.float64)
    a = ins[0] if dtype == np.float64 else ctx.cast(ins[0], np.float64)

    def reduce(i, values):
        w = values[0]
        beta, tau, v = _reflector(ctx, _pick(ctx, w, i, -2), i, n)
        w = _reflect(ctx, w, tau, v)
        row = _pick(ctx, w, i, -2, keep=True)                                   # (..., 1, n)
        after = ctx.node("Greater", [ctx.const(np.arange(n, dtype=np.int64)), i])
        row = ctx.node("Where", [after, ctx.const(np.zeros(1)), ctx.node("Where", [
            _is(ctx, n, i), ctx.node("Unsqueeze", [beta, ctx.int64s([-1, -2])]), row])])
        return None, [ctx.node("Where", [_is(ctx, m, i, column=True), row, w])], [tau, v]
    w, taus, vs = loop(ctx, [(a, f64)], reduce, trips=ctx.const(np.int64(m)),
                       scanned=[f64, f64])

    def build(step, values):                     # Q = [I 0] H_{m-1} ... H_0
        i = ctx.node("Sub", [ctx.const(np.int64(m - 1)), step])
        tau, v = _pick(ctx, taus, i, 0), _pick(ctx, vs, i, 0)
        return None, [_reflect(ctx, values[0], tau, v)], []
    start = ctx.node("Expand", [ctx.const(np.eye(m, n)), ctx.node("Shape", [a])])
    q = loop(ctx, [(start, f64)], build, trips=ctx.const(np.int64(m)))[0]
    low = ctx.node("Slice", [w, ctx.int64s([0]), ctx.int64s([m]), ctx.int64s([-1])])
    for value, out in ((q, outs[0]), (low, outs[1])):
        if dtype == np.float64:
            ctx.node("Identity", [value], [out])
        else:
            ctx.node("Cast", [value], [out], to=_elem(ctx, dtype))


not_expressible(
    "a symmetric eigensystem: ONNX has no eigensolver, and a composition would have to "
    "iterate Jacobi rotations to convergence per matrix size",
    "_linalg_syevd")
