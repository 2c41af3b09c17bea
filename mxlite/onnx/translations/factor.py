"""The matrix factorisations and solves of mx.nd.linalg (potrf, potri, trsm, inverse, gelqf,
syevd) as ONNX Loops over the static matrix size: one column (or row, or rotation) of the
result per iteration, every matrix of the batch at once, in the input's dtype (gelqf and
syevd in float64, as mxlite computes them, with mxlite's own algorithms: Householder
reflections, cyclic Jacobi rotations). ONNX has no factorisation operator; these are the
column-by-column algorithms written with Gather, MatMul and Where."""
import numpy as np

from ..table import translates
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


def _t_into(ctx, x, nd, outs):
    """``x`` with its last two axes exchanged, written into ``outs``."""
    ctx.node("Transpose", [x], outs, perm=list(range(nd - 2)) + [nd - 1, nd - 2])


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



# ---- symmetric eigensystem by cyclic Jacobi rotations ----------------------------------------
_SWEEPS = 50              # mxlite's bound on the sweeps (la_factor._SWEEPS)


def _while(ctx, go, carried, body, trips):
    """An ONNX Loop of at most ``trips`` iterations that runs while the bool scalar ``go``
    holds, tested before every iteration (the first included): ``body(values)`` returns
    the new values and the next ``go``. ``carried``: (initial value, ONNX element type)."""
    helper = ctx.helper
    saved, ctx.nodes = ctx.nodes, []
    try:
        iteration, condition = ctx.fresh("iteration"), ctx.fresh("condition")
        names = [ctx.fresh("carried") for _ in carried]
        new, more = body(names)
        outputs = [ctx.node("Identity", [v]) for v in [more] + list(new)]
        nodes = ctx.nodes
    finally:
        ctx.nodes = saved
    bool_t, int_t = ctx.onnx.TensorProto.BOOL, ctx.onnx.TensorProto.INT64
    graph = helper.make_graph(
        nodes, ctx.fresh("loop_body"),
        [helper.make_tensor_value_info(iteration, int_t, []),
         helper.make_tensor_value_info(condition, bool_t, [])]
        + [helper.make_tensor_value_info(n, t, None) for n, (_, t) in zip(names, carried)],
        [helper.make_tensor_value_info(outputs[0], bool_t, [])]
        + [helper.make_tensor_value_info(o, t, None) for o, (_, t) in zip(outputs[1:], carried)])
    results = ctx.node("Loop", [ctx.const(np.int64(trips)), go] + [v for v, _ in carried],
                       [ctx.fresh("loop_out") for _ in carried], body=graph)
    return results if isinstance(results, list) else [results]


def _entry(ctx, m, p, q):
    """m[..., p, q] for int64 scalars p and q: shape (...)."""
    return _pick(ctx, _pick(ctx, m, p, -2), q, -1)


def _rotate(ctx, m, n, p, q, c, s, rows):
    """mxlite's Jacobi rotation (p, q) of m (..., n, n): columns p and q become
    c m_p - s m_q and s m_p + c m_q (and the rows the same first, with ``rows``)."""
    c, s = (ctx.node("Unsqueeze", [x, ctx.int64s([-1, -2])]) for x in (c, s))
    for axis in ([-2, -1] if rows else [-1]):
        mp, mq = _pick(ctx, m, p, axis, keep=True), _pick(ctx, m, q, axis, keep=True)
        new_p = ctx.node("Sub", [ctx.node("Mul", [c, mp]), ctx.node("Mul", [s, mq])])
        new_q = ctx.node("Add", [ctx.node("Mul", [s, mp]), ctx.node("Mul", [c, mq])])
        column = axis == -2                   # rows p, q: their flags down the row axis
        m = ctx.node("Where", [_is(ctx, n, p, column), new_p, ctx.node("Where", [
            _is(ctx, n, q, column), new_q, m])])
    return m


def _sweep(ctx, w, v, n):
    """One cyclic sweep of Jacobi rotations over the pairs p < q, in mxlite's order and
    arithmetic; returns the rotated w and v."""
    pairs = [(p, q) for p in range(n - 1) for q in range(p + 1, n)]
    ps = ctx.const(np.asarray([p for p, _ in pairs], np.int64))
    qs = ctx.const(np.asarray([q for _, q in pairs], np.int64))
    f64 = np.float64
    one, zero = ctx.const(np.asarray(1.0, f64)), ctx.const(np.asarray(0.0, f64))

    def body(k, values):
        w, v = values
        p, q = _pick(ctx, ps, k, 0), _pick(ctx, qs, k, 0)
        apq = _entry(ctx, w, p, q)
        gap = ctx.node("Sub", [_entry(ctx, w, q, q), _entry(ctx, w, p, p)])
        # a negligible a_pq (a rotation angle below 1e-150): no rotation, no overflow
        tiny = ctx.node("LessOrEqual", [
            ctx.node("Mul", [ctx.node("Abs", [apq]), ctx.const(np.asarray(1e150, f64))]),
            ctx.node("Abs", [gap])])
        apq = ctx.node("Where", [tiny, one, apq])
        theta = ctx.node("Div", [gap, ctx.node("Mul", [ctx.const(np.asarray(2.0, f64)), apq])])
        sign = ctx.node("Where", [ctx.node("GreaterOrEqual", [theta, zero]), one,
                                  ctx.const(np.asarray(-1.0, f64))])
        root = ctx.node("Sqrt", [ctx.node("Add", [ctx.node("Mul", [theta, theta]), one])])
        t = ctx.node("Div", [sign, ctx.node("Add", [ctx.node("Abs", [theta]), root])])
        t = ctx.node("Where", [tiny, zero, t])
        c = ctx.node("Div", [one, ctx.node("Sqrt", [ctx.node("Add", [
            ctx.node("Mul", [t, t]), one])])])
        s = ctx.node("Mul", [t, c])
        return None, [_rotate(ctx, w, n, p, q, c, s, True),
                      _rotate(ctx, v, n, p, q, c, s, False)], []
    f64_t = _elem(ctx, f64)
    return loop(ctx, [(w, f64_t), (v, f64_t)], body, trips=ctx.const(np.int64(len(pairs))))


@translates("_linalg_syevd", onnx_ops=_LOOP_OPS + [
    "Cast", "Mul", "Add", "Transpose", "Abs", "LessOrEqual", "GreaterOrEqual", "Greater",
    "Sqrt", "ReduceSum", "ReduceMax", "TopK", "GatherElements", "ArgMax", "Expand"],
    notes="mxlite's cyclic Jacobi rotations in nested Loops (in float64, the same "
          "convergence test), eigenvalues ascending (TopK: tied ones keep the order the "
          "rotations left them in), each eigenvector's largest-magnitude entry positive; "
          "equal to mxlite's results up to rounding")
def _syevd(ctx, node, ins, outs):
    shape, dtype = ctx.shape(node.inputs[0]), ctx.dtype(node.inputs[0])
    nd, n = len(shape), shape[-1]
    f64 = np.float64
    a = ins[0] if dtype == f64 else ctx.cast(ins[0], f64)
    # the symmetric matrix of A's lower triangle
    low = ctx.node("Mul", [a, ctx.const(np.tri(n))])
    strict = ctx.node("Mul", [a, ctx.const(np.tri(n, k=-1))])
    w = ctx.node("Add", [low, _t(ctx, strict, nd)])
    v = ctx.node("Expand", [ctx.const(np.eye(n)), ctx.node("Shape", [a])])
    last2 = ctx.int64s([-2, -1])
    total = ctx.node("ReduceSum", [ctx.node("Mul", [w, w]), last2], keepdims=0)
    bound = ctx.node("Mul", [total, ctx.const(np.asarray(1e-32, f64))])
    off_mask = ctx.const(1.0 - np.eye(n))

    def unconverged(w):                 # any matrix of the batch still off diagonal
        off = ctx.node("ReduceSum", [ctx.node("Mul", [ctx.node("Mul", [w, w]), off_mask]),
                                     last2], keepdims=0)
        above = ctx.cast(ctx.node("Greater", [off, bound]), f64)
        return ctx.node("Greater", [ctx.node("ReduceMax", [above], keepdims=0), ctx.const(
            np.asarray(0.0, f64))])

    def sweep(values):
        w, v = _sweep(ctx, values[0], values[1], n)
        return [w, v], unconverged(w)
    f64_t = _elem(ctx, f64)
    w, v = _while(ctx, unconverged(w), [(w, f64_t), (v, f64_t)], sweep, _SWEEPS)
    lam = ctx.node("ReduceSum", [ctx.node("Mul", [w, ctx.const(np.eye(n))]), ctx.int64s([-1])],
                   keepdims=0)                                             # the diagonal
    lam, order = ctx.node("TopK", [lam, ctx.int64s([n])], outputs=[
        ctx.fresh("eigenvalues"), ctx.fresh("order")], axis=-1, largest=0, sorted=1)
    rows = _t(ctx, v, nd)                                                  # eigenvectors
    index = ctx.node("Expand", [ctx.node("Unsqueeze", [order, ctx.int64s([-1])]),
                                ctx.node("Shape", [rows])])
    u = ctx.node("GatherElements", [rows, index], axis=-2)
    big = ctx.node("ArgMax", [ctx.node("Abs", [u])], axis=-1, keepdims=1)
    lead = ctx.node("GatherElements", [u, big], axis=-1)                   # (..., n, 1)
    u = ctx.node("Mul", [u, ctx.node("Where", [
        ctx.node("GreaterOrEqual", [lead, ctx.const(np.asarray(0.0, f64))]),
        ctx.const(np.asarray(1.0, f64)), ctx.const(np.asarray(-1.0, f64))])])
    for value, out in ((u, outs[0]), (lam, outs[1])):
        if dtype == f64:
            ctx.node("Identity", [value], [out])
        else:
            ctx.node("Cast", [value], [out], to=_elem(ctx, dtype))
