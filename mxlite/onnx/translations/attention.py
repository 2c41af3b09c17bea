"""The interleaved attention matmuls (contrib): projections laid out (T, B, heads * parts * D)
split into per-(batch, head) matrices, multiplied with MatMul."""
import numpy as np

from ..table import translates

_OPS = ["Reshape", "Gather", "Transpose", "MatMul", "Mul"]


def _heads(ctx, x, shape, heads, parts, which):
    """Part ``which`` of every head of ``x`` (T, B, heads * parts * D) as (B * heads, T, D)."""
    t, b, width = shape
    d = width // (heads * parts)
    x = ctx.node("Reshape", [x, ctx.int64s([t, b, heads, parts, d])])
    x = ctx.node("Gather", [x, ctx.const(np.int64(which), base="part")], axis=3)
    x = ctx.node("Transpose", [x], perm=[1, 2, 0, 3])                  # (B, heads, T, D)
    return ctx.node("Reshape", [x, ctx.int64s([b * heads, t, d])]), d


def _scores(ctx, node, q, k, d, outs):
    """Q K^T / sqrt(D)."""
    kt = ctx.node("Transpose", [k], perm=[0, 2, 1])
    scale = ctx.const(np.asarray(1 / np.sqrt(d), ctx.dtype((node, 0))), base="scale")
    ctx.node("Mul", [ctx.node("MatMul", [q, kt]), scale], outs)


def _merged(ctx, att, v, t, b, heads, d, outs):
    """attention (B * heads, Tq, Tk) times values (B * heads, Tk, D), the heads merged into
    (Tq, B, heads * D)."""
    y = ctx.node("MatMul", [att, v])
    y = ctx.node("Reshape", [y, ctx.int64s([b, heads, t, d])])
    y = ctx.node("Transpose", [y], perm=[2, 0, 1, 3])
    ctx.node("Reshape", [y, ctx.int64s([t, b, heads * d])], outs)


@translates("_contrib_interleaved_matmul_selfatt_qk", onnx_ops=_OPS)
def _selfatt_qk(ctx, node, ins, outs):
    h = int(node.attrs.heads)
    shape = ctx.shape(node.inputs[0])
    q, d = _heads(ctx, ins[0], shape, h, 3, 0)
    k, _ = _heads(ctx, ins[0], shape, h, 3, 1)
    _scores(ctx, node, q, k, d, outs)


@translates("_contrib_interleaved_matmul_selfatt_valatt", onnx_ops=_OPS)
def _selfatt_valatt(ctx, node, ins, outs):
    h = int(node.attrs.heads)
    shape = ctx.shape(node.inputs[0])
    v, d = _heads(ctx, ins[0], shape, h, 3, 2)
    _merged(ctx, ins[1], v, shape[0], shape[1], h, d, outs)


@translates("_contrib_interleaved_matmul_encdec_qk", onnx_ops=_OPS)
def _encdec_qk(ctx, node, ins, outs):
    h = int(node.attrs.heads)
    q, d = _heads(ctx, ins[0], ctx.shape(node.inputs[0]), h, 1, 0)
    k, _ = _heads(ctx, ins[1], ctx.shape(node.inputs[1]), h, 2, 0)
    _scores(ctx, node, q, k, d, outs)


@translates("_contrib_interleaved_matmul_encdec_valatt", onnx_ops=_OPS)
def _encdec_valatt(ctx, node, ins, outs):
    h = int(node.attrs.heads)
    shape = ctx.shape(node.inputs[0])
    v, d = _heads(ctx, ins[0], shape, h, 2, 1)
    tq = ctx.shape(node.inputs[1])[1]
    _merged(ctx, ins[1], v, tq, shape[1], h, d, outs)
