"""Linear algebra (``_linalg_*``): the products, the diagonal and triangle gathers, the
determinant; the factorisations and solves ONNX has no operator for, with the reason.

Every op works on the trailing two axes (gemm/gemm2: rows on ``axis``) and is batched over
the leading ones, as MatMul is. Diagonals and triangles are Gathers of fixed positions on
the flattened matrices (exact: a mask product would turn an inf elsewhere into NaN).
"""
import numpy as np

from ..table import translates
from ...ops import la_factor


class _HostXp:
    """The one device-namespace call ``la_factor._positions`` makes, on the host."""
    @staticmethod
    def arange(n, dtype):
        return np.arange(n, dtype=dtype)


def _triangle_positions(n, attrs):
    """Flat positions of the triangle extracttrian reads, in its order (the op's own rule)."""
    return la_factor._positions(_HostXp, n, attrs).tolist()


def _swap_perm(ndim, a, b):
    perm = list(range(ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


def _t(ctx, x, ndim):
    """``x`` with its last two axes exchanged."""
    return ctx.node("Transpose", [x], perm=_swap_perm(ndim, ndim - 2, ndim - 1))


def _scale(ctx, x, alpha, dtype, outs=None):
    """``alpha * x`` (no node for alpha = 1 unless ``outs`` names the result)."""
    if alpha == 1.0:
        return x if outs is None else ctx.node("Identity", [x], outs)
    return ctx.node("Mul", [x, ctx.const(np.asarray(alpha, dtype), base="alpha")], outs)


def _gemm_product(ctx, node, ins, outs=None):
    """``alpha op(A) op(B)`` with rows on ``axis``: the row axis moved next to the columns,
    multiplied, moved back."""
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    ax = a.axis % ndim
    x, y = ins[0], ins[1]
    if ax != ndim - 2:
        x, y = (ctx.node("Transpose", [v], perm=_swap_perm(ndim, ax, ndim - 2)) for v in (x, y))
    if a.transpose_a:
        x = _t(ctx, x, ndim)
    if a.transpose_b:
        y = _t(ctx, y, ndim)
    prod = ctx.node("MatMul", [x, y])
    if ax != ndim - 2:
        prod = ctx.node("Transpose", [prod], perm=_swap_perm(ndim, ax, ndim - 2))
    return _scale(ctx, prod, a.alpha, ctx.dtype(node.inputs[0]), outs)


@translates("_linalg_gemm", onnx_ops=["MatMul", "Transpose", "Mul", "Add"])
def _gemm(ctx, node, ins, outs):
    prod = _gemm_product(ctx, node, ins)
    c = _scale(ctx, ins[2], node.attrs.beta, ctx.dtype(node.inputs[2]))
    ctx.node("Add", [prod, c], outs)


@translates("_linalg_gemm2", onnx_ops=["MatMul", "Transpose", "Mul"])
def _gemm2(ctx, node, ins, outs):
    _gemm_product(ctx, node, ins, outs)


@translates("_linalg_syrk", onnx_ops=["MatMul", "Transpose", "Mul"])
def _syrk(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    at = _t(ctx, ins[0], ndim)
    pair = [at, ins[0]] if a.transpose else [ins[0], at]
    _scale(ctx, ctx.node("MatMul", pair), a.alpha, ctx.dtype(node.inputs[0]), outs)


@translates("_linalg_trmm", onnx_ops=["Trilu", "MatMul", "Transpose", "Mul"],
            notes="the other triangle of A is ignored (Trilu), as in MXNet")
def _trmm(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    tri = ctx.node("Trilu", [ins[0]], upper=0 if a.lower else 1)
    if a.transpose:
        tri = _t(ctx, tri, ndim)
    pair = [ins[1], tri] if a.rightside else [tri, ins[1]]
    _scale(ctx, ctx.node("MatMul", pair), a.alpha, ctx.dtype(node.inputs[0]), outs)


def _gather_flat(ctx, x, ndim_in, merge, positions, out_tail, outs=None):
    """Gather ``positions`` from ``x`` with its last ``merge`` axes flattened into one, the
    result's last axis reshaped to ``out_tail``."""
    batch = ndim_in - merge
    flat = ctx.node("Reshape", [x, ctx.int64s([0] * batch + [-1])]) if merge != 1 else x
    got = ctx.node("Gather", [flat, ctx.int64s(positions, base="positions")], axis=batch)
    if tuple(out_tail) == (len(positions),):
        return ctx.node("Identity", [got], outs) if outs else got
    return ctx.node("Reshape", [got, ctx.int64s([0] * batch + list(out_tail))], outs)


def _diagonal_positions(n, offset):
    """Flat positions of diagonal ``offset`` of an n x n matrix, top to bottom."""
    rows = range(max(0, -offset), min(n, n - offset))
    return [i * n + i + offset for i in rows]


def _scatter_positions(n, positions):
    """For each element of an n x n matrix: the index of its value in a vector holding the
    ``positions``' values followed by one zero (the element's value or the zero)."""
    where = np.full(n * n, len(positions), np.int64)
    where[np.asarray(positions, np.int64)] = np.arange(len(positions))
    return where.tolist()


def _from_vector(ctx, node, ins, outs, n, positions):
    """Matrices (..., n, n) holding the vectors of ``ins[0]`` at ``positions``, zeros
    elsewhere: the vectors padded with one zero, then gathered."""
    ndim = len(ctx.shape(node.inputs[0]))
    pads = ctx.int64s([0] * ndim + [0] * (ndim - 1) + [1], base="pads")
    padded = ctx.node("Pad", [ins[0], pads, ctx.const(np.asarray(0, ctx.dtype(node.inputs[0])))])
    _gather_flat(ctx, padded, ndim, 1, _scatter_positions(n, positions), (n, n), outs)


@translates("_linalg_extractdiag", onnx_ops=["Reshape", "Gather"])
def _extractdiag(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    positions = _diagonal_positions(shape[-1], node.attrs.offset)
    _gather_flat(ctx, ins[0], len(shape), 2, positions, (len(positions),), outs)


@translates("_linalg_makediag", onnx_ops=["Pad", "Gather", "Reshape"])
def _makediag(ctx, node, ins, outs):
    n = ctx.shape((node, 0))[-1]
    _from_vector(ctx, node, ins, outs, n, _diagonal_positions(n, node.attrs.offset))


@translates("_linalg_extracttrian", onnx_ops=["Reshape", "Gather"],
            notes="MXNet's order: a lower triangle row by row, an upper one column by column")
def _extracttrian(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    positions = _triangle_positions(shape[-1], node.attrs)
    _gather_flat(ctx, ins[0], len(shape), 2, positions, (len(positions),), outs)


@translates("_linalg_maketrian", onnx_ops=["Pad", "Gather", "Reshape"])
def _maketrian(ctx, node, ins, outs):
    n = ctx.shape((node, 0))[-1]
    _from_vector(ctx, node, ins, outs, n, _triangle_positions(n, node.attrs))


def _per_matrix(ctx, node, value, out):
    """A per-matrix scalar (batch shape; () for one matrix) as mxlite's output shape ((1,)
    for one matrix)."""
    return ctx.node("Reshape", [value, ctx.int64s([0] * (len(ctx.shape(node.inputs[0])) - 2)
                                                  or [1])], [out])


@translates("_linalg_sumlogdiag", onnx_ops=["Reshape", "Gather", "Log", "ReduceSum"],
            opset=18)
def _sumlogdiag(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    diag = _gather_flat(ctx, ins[0], len(shape), 2, _diagonal_positions(shape[-1], 0),
                        (shape[-1],))
    total = ctx.node("ReduceSum", [ctx.node("Log", [diag]), ctx.int64s([-1])], keepdims=0)
    _per_matrix(ctx, node, total, outs[0])


@translates("_linalg_det", onnx_ops=["Det", "Reshape"])
def _det(ctx, node, ins, outs):
    _per_matrix(ctx, node, ctx.node("Det", ins[:1]), outs[0])


@translates("_linalg_slogdet", onnx_ops=["Det", "Sign", "Abs", "Log", "Reshape"],
            notes="through the determinant (ONNX has no LU): a determinant beyond the "
                  "dtype's range (float32: about 1e38) gives a log of inf, one below it sign 0")
def _slogdet(ctx, node, ins, outs):
    det = ctx.node("Det", ins[:1])
    sign = ctx.node("Sign", [det])
    logabs = ctx.node("Log", [ctx.node("Abs", [det])])
    _per_matrix(ctx, node, sign, outs[0])
    _per_matrix(ctx, node, logabs, outs[1])


@translates("_la_trian_mask", onnx_ops=["Trilu", "Mul"])
def _trian_mask(ctx, node, ins, outs):
    a = node.attrs
    tri = ctx.node("Trilu", ins[:1], outs if a.diag == 1.0 else None, upper=0 if a.lower else 1)
    if a.diag != 1.0:
        n = ctx.shape(node.inputs[0])[-1]
        scale = np.ones((n, n)) + (a.diag - 1.0) * np.eye(n)    # diag on the diagonal, 1 off
        ctx.node("Mul", [tri, ctx.const(scale, ctx.dtype(node.inputs[0]), base="diag")], outs)


@translates("khatri_rao", onnx_ops=["Reshape", "Mul", "Cast"],
            notes="float16 through float32, as mxlite")
def _khatri_rao(ctx, node, ins, outs):
    dtype = ctx.dtype(node.inputs[0])
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    mats = [m if dtype == work else ctx.cast(m, work) for m in ins]
    k = ctx.shape(node.inputs[0])[1]
    acc = mats[0]
    for m in mats[1:]:
        # (rows so far, 1, k) * (1, n, k): row (i, j) is the product of row i and row j
        pair = ctx.node("Mul", [ctx.node("Reshape", [acc, ctx.int64s([-1, 1, k])]),
                                ctx.node("Reshape", [m, ctx.int64s([1, -1, k])])])
        acc = ctx.node("Reshape", [pair, ctx.int64s([-1, k])])
    if dtype == work:
        ctx.node("Identity", [acc], outs)
    else:
        ctx.node("Cast", [acc], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
