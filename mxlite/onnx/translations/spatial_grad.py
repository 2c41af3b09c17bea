"""Resampling ops and the derivatives of the spatial transformers: adaptive average pooling
and bilinear resize as products with the op's own per-axis weight matrices (their adjoints
with the transposes), the bilinear sampler with differentiated weights and its adjoint as
gathers and scatter-adds at the four corners of every grid point, the affine grid's adjoint
and the deformable convolution's sampling grid."""
import numpy as np

from ..table import translates
from ...device import cpu as _host
from ...ops import roi as _roi
from ...ops import spatial as _spatial


# ---- separable linear maps ---------------------------------------------------------------------
def _separable(ctx, x, rows, cols, outs):
    """``rows @ x @ cols^T`` on the last two axes (the op's order: columns first)."""
    tmp = ctx.node("MatMul", [x, ctx.const(np.ascontiguousarray(cols.T), base="cols")])
    return ctx.node("MatMul", [ctx.const(rows, base="rows"), tmp], outs)


@translates("_contrib_AdaptiveAvgPooling2D", onnx_ops=["MatMul"],
            notes="products with the bin-averaging matrix of each spatial axis")
def _adaptive(ctx, node, ins, outs):
    h, w = ctx.shape(node.inputs[0])[2:]
    oh, ow = ctx.shape((node, 0))[2:]
    dtype = ctx.dtype(node.inputs[0])
    _separable(ctx, ins[0], _spatial._bin_matrix(_host, h, oh, dtype),
               _spatial._bin_matrix(_host, w, ow, dtype), outs[:1])


@translates("_adaptive_avg_pooling2d_adjoint", onnx_ops=["MatMul"],
            notes="products with the transposed bin-averaging matrices")
def _adaptive_adjoint(ctx, node, ins, outs):
    oh, ow = ctx.shape(node.inputs[0])[2:]
    h, w = ctx.shape((node, 0))[2:]
    dtype = ctx.dtype(node.inputs[0])
    _separable(ctx, ins[0], _spatial._bin_matrix(_host, h, oh, dtype).T,
               _spatial._bin_matrix(_host, w, ow, dtype).T, outs[:1])


@translates("_contrib_BilinearResize2D", onnx_ops=["MatMul"],
            notes="products with the interpolation matrix of each axis (every mode, both "
                  "align_corners rules); mode 'like' takes only the shape of like (a graph "
                  "input of that shape that no node reads)")
def _bilinear_resize(ctx, node, ins, outs):
    h, w = ctx.shape(node.inputs[0])[2:]
    oh, ow = ctx.shape((node, 0))[2:]
    dtype, ac = ctx.dtype(node.inputs[0]), node.attrs.align_corners
    _separable(ctx, ins[0], _spatial._interp_matrix(_host, h, oh, ac, dtype),
               _spatial._interp_matrix(_host, w, ow, ac, dtype), outs[:1])


@translates("_bilinear_resize2d_adjoint", onnx_ops=["MatMul"],
            notes="products with the transposed interpolation matrices")
def _bilinear_resize_adjoint(ctx, node, ins, outs):
    oh, ow = ctx.shape(node.inputs[0])[2:]
    h, w = ctx.shape((node, 0))[2:]
    dtype, ac = ctx.dtype(node.inputs[0]), node.attrs.align_corners
    _separable(ctx, ins[0], _spatial._interp_matrix(_host, h, oh, ac, dtype).T,
               _spatial._interp_matrix(_host, w, ow, ac, dtype).T, outs[:1])


def _slice(ctx, x, axis, i):
    """``x[..., i:i + 1, ...]`` on ``axis``."""
    return ctx.node("Slice", [x, ctx.int64s([i]), ctx.int64s([i + 1]), ctx.int64s([axis])])


# ---- the bilinear sampler's derivatives --------------------------------------------------------
def _corners(ctx, grid, h, w, dx, dy, dtype):
    """The four corners each point of ``grid`` (N, 2, Ho, Wo) reads, in the op's order (y
    corner outer): [(flat pixel index (N, P) int64, weight (N, P))]; the weights of corners
    outside the image are zero, those differentiated in x (y) are -+ (W - 1) / 2 ((H - 1) /
    2) times the other axis's."""
    def c(v):
        return ctx.const(np.asarray(v, dtype))
    sx, sy = (w - 1) / 2.0, (h - 1) / 2.0
    gx, gy = _slice(ctx, grid, 1, 0), _slice(ctx, grid, 1, 1)
    flat = ctx.int64s([0, -1])
    x = ctx.node("Mul", [ctx.node("Add", [ctx.node("Reshape", [gx, flat]), c(1)]), c(sx)])
    y = ctx.node("Mul", [ctx.node("Add", [ctx.node("Reshape", [gy, flat]), c(1)]), c(sy)])

    def axis_weights(pos, order, scale):
        low = ctx.node("Floor", [pos])
        frac = ctx.node("Sub", [pos, low])
        if order == 0:
            return low, (ctx.node("Sub", [c(1), frac]), frac)
        zero = ctx.node("Mul", [frac, c(0)])        # 0 * frac, as the op (NaN stays NaN)
        return low, (ctx.node("Add", [zero, c(-scale)]), ctx.node("Add", [zero, c(scale)]))
    x0, wx = axis_weights(x, dx, sx)
    y0, wy = axis_weights(y, dy, sy)
    out = []
    for j in (0, 1):
        yi = ctx.node("Add", [y0, c(j)]) if j else y0
        for i in (0, 1):
            xi = ctx.node("Add", [x0, c(i)]) if i else x0
            inside = ctx.node("And", [
                ctx.node("And", [ctx.node("GreaterOrEqual", [xi, c(0)]),
                                 ctx.node("LessOrEqual", [xi, c(w - 1)])]),
                ctx.node("And", [ctx.node("GreaterOrEqual", [yi, c(0)]),
                                 ctx.node("LessOrEqual", [yi, c(h - 1)])])])
            pos = ctx.node("Add", [
                ctx.node("Mul", [ctx.node("Clip", [yi, c(0), c(h - 1)]), c(w)]),
                ctx.node("Clip", [xi, c(0), c(w - 1)])])
            weight = ctx.node("Mul", [ctx.node("Mul", [wx[i], wy[j]]),
                                      ctx.cast(inside, dtype)])
            out.append((ctx.cast(pos, np.int64), weight))
    return out


_SAMPLER_OPS = ["Slice", "Reshape", "Add", "Sub", "Mul", "Floor", "GreaterOrEqual",
                "LessOrEqual", "And", "Clip", "Cast", "Unsqueeze", "Expand"]


def _per_channel(ctx, index, c):
    """(N, P) corner indices as (N, C, P) (every channel reads the same pixels)."""
    return ctx.node("Expand", [ctx.node("Unsqueeze", [index, ctx.int64s([1])]),
                               ctx.int64s([1, c, 1])])


@translates("_bilinear_sampler_d", onnx_ops=_SAMPLER_OPS + ["GatherElements"],
            notes="the four corners' GatherElements and weighted sum (the weights "
                  "differentiated dx, dy times)")
def _sampler_d(ctx, node, ins, outs):
    n, c, h, w = ctx.shape(node.inputs[0])
    ho, wo = ctx.shape(node.inputs[1])[2:]
    dtype = ctx.dtype(node.inputs[0])
    flat = ctx.node("Reshape", [ins[0], ctx.int64s([0, c, h * w])])
    acc = None
    for index, weight in _corners(ctx, ins[1], h, w, node.attrs.dx, node.attrs.dy, dtype):
        picked = ctx.node("GatherElements", [flat, _per_channel(ctx, index, c)], axis=2)
        term = ctx.node("Mul", [picked, ctx.node("Unsqueeze", [weight, ctx.int64s([1])])])
        acc = term if acc is None else ctx.node("Add", [acc, term])
    ctx.node("Reshape", [acc, ctx.int64s([0, c, ho, wo])], outs[:1])


def _zeros_like_batch(ctx, x, tail, dtype):
    """Zeros of shape (x's first axis,) + ``tail`` (the batch may be symbolic)."""
    shape = ctx.node("Concat", [ctx.node("Shape", [x], start=0, end=1), ctx.int64s(tail)],
                     axis=0)
    zero = ctx.onnx.helper.make_tensor("zero", ctx.onnx.helper.np_dtype_to_tensor_dtype(
        np.dtype(dtype)), [1], [0])
    return ctx.node("ConstantOfShape", [shape], value=zero)


@translates("_bilinear_sampler_adjoint", onnx_ops=_SAMPLER_OPS + [
    "Shape", "Concat", "ConstantOfShape", "ScatterElements"],
    notes="ScatterElements add of the weighted head gradient at the four corners")
def _sampler_adjoint(ctx, node, ins, outs):
    a = node.attrs
    n, c, ho, wo = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    g = ctx.node("Reshape", [ins[0], ctx.int64s([0, c, ho * wo])])
    indices, updates = [], []
    for index, weight in _corners(ctx, ins[1], a.height, a.width, a.dx, a.dy, dtype):
        indices.append(_per_channel(ctx, index, c))
        updates.append(ctx.node("Mul", [g, ctx.node("Unsqueeze", [weight, ctx.int64s([1])])]))
    zeros = _zeros_like_batch(ctx, ins[0], [c, a.height * a.width], dtype)
    summed = ctx.node("ScatterElements", [zeros, ctx.node("Concat", indices, axis=2),
                                          ctx.node("Concat", updates, axis=2)],
                      axis=2, reduction="add")
    ctx.node("Reshape", [summed, ctx.int64s([0, c, a.height, a.width])], outs[:1])


# ---- grids -------------------------------------------------------------------------------------
@translates("_grid_generator_affine_adjoint", onnx_ops=["Reshape", "MatMul"],
            notes="a product with the target's transposed coordinate grid")
def _affine_adjoint(ctx, node, ins, outs):
    h, w = ctx.shape(node.inputs[0])[2:]
    dtype = ctx.dtype(node.inputs[0])
    base = np.ascontiguousarray(_spatial._base_grid(_host, (h, w), dtype).T)
    g = ctx.node("Reshape", [ins[0], ctx.int64s([0, 2, h * w])])
    prod = ctx.node("MatMul", [g, ctx.const(base, base="grid")])
    ctx.node("Reshape", [prod, ctx.int64s([0, 6])], outs[:1])


@translates("_deform_grid", onnx_ops=["Cast", "Reshape", "Slice", "Add", "Mul", "Sub",
                                      "Concat"],
            notes="the offsets plus the taps' positions, normalised (in float64, as the op)")
def _deform_grid(ctx, node, ins, outs):
    a = node.attrs
    h, w = a.data_shape[2:]
    _, _, ho, wo = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    kk = a.kernel[0] * a.kernel[1]
    f64 = np.dtype(np.float64)
    off = ctx.node("Reshape", [ctx.cast(ins[0], f64), ctx.int64s([-1, kk, 2, ho, wo])])
    oy, ox = _slice(ctx, off, 2, 0), _slice(ctx, off, 2, 1)
    base_y = _roi._base(_host, a, (h, w), 0)[:, None, :, None]          # (K, 1, Ho, 1)
    base_x = _roi._base(_host, a, (h, w), 1)[:, None, None, :]          # (K, 1, 1, Wo)

    def normalised(o, base, size):
        moved = ctx.node("Add", [o, ctx.const(base.astype(f64), base="taps")])
        scaled = ctx.node("Mul", [moved, ctx.const(np.asarray(2.0 / (size - 1), f64))])
        value = ctx.node("Sub", [scaled, ctx.const(np.asarray(1.0, f64))])
        return ctx.node("Reshape", [value, ctx.int64s([-1, 1, kk * ho, wo])])
    grid = ctx.node("Concat", [normalised(ox, base_x, w), normalised(oy, base_y, h)], axis=1)
    if dtype == f64:
        ctx.node("Identity", [grid], outs[:1])
    else:
        ctx.node("Cast", [grid], outs[:1], to=ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
