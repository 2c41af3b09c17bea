"""Spatial transformers: GridGenerator as products with the target's coordinate grid (a
constant), BilinearSampler as GridSample (align_corners, zero padding: MXNet's pixel-centre
convention, corners outside reading zero), SpatialTransformer as the two."""
import numpy as np

from ..table import translates


def _normalised_grid(h, w, dtype):
    """(3, h * w): the rows x, y, 1 of every target pixel, x = -1 + 2 j / (w - 1) and
    y = -1 + 2 i / (h - 1) (row-major pixels)."""
    ys, xs = np.meshgrid(-1 + 2 * np.arange(h) / (h - 1), -1 + 2 * np.arange(w) / (w - 1),
                         indexing="ij")
    return np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)]).astype(dtype)


def _affine_grid(ctx, theta, h, w, dtype, outs=None):
    """The (N, 2, h, w) grid of the (N, 6) affine matrices ``theta``."""
    mats = ctx.node("Reshape", [theta, ctx.int64s([-1, 2, 3])])
    grid = ctx.node("MatMul", [mats, ctx.const(_normalised_grid(h, w, dtype), base="grid")])
    return ctx.node("Reshape", [grid, ctx.int64s([-1, 2, h, w])], outs)


def _warp_grid(ctx, flow, h, w, dtype, outs):
    """The grid of a pixel flow (N, 2, h, w): (flow + pixel) / ((size - 1) / 2) - 1."""
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    pixels = ctx.const(np.stack([xs, ys])[None].astype(dtype), base="pixels")
    scale = ctx.const(np.asarray([(w - 1) / 2, (h - 1) / 2], dtype).reshape(1, 2, 1, 1),
                      base="half_size")
    moved = ctx.node("Div", [ctx.node("Add", [flow, pixels]), scale])
    return ctx.node("Sub", [moved, ctx.const(np.asarray(1, dtype))], outs)


@translates("GridGenerator", onnx_ops=["Reshape", "MatMul", "Add", "Div", "Sub"])
def _grid_generator(ctx, node, ins, outs):
    h, w = ctx.shape((node, 0))[2:]
    dtype = ctx.dtype(node.inputs[0])
    if node.attrs.transform_type == "affine":
        _affine_grid(ctx, ins[0], h, w, dtype, outs[:1])
    else:
        _warp_grid(ctx, ins[0], h, w, dtype, outs[:1])


def _sample(ctx, data, grid, outs):
    """GridSample of (N, C, H, W) ``data`` at the (N, 2, Ho, Wo) ``grid``."""
    points = ctx.node("Transpose", [grid], perm=[0, 2, 3, 1])
    return ctx.node("GridSample", [data, points], outs, align_corners=1, padding_mode="zeros",
                    mode="linear" if ctx.opset >= 20 else "bilinear")


_NOTES = "GridSample with align_corners=1 and zero padding"


@translates("BilinearSampler", onnx_ops=["Transpose", "GridSample"], opset=16, notes=_NOTES)
def _bilinear_sampler(ctx, node, ins, outs):
    _sample(ctx, ins[0], ins[1], outs[:1])


@translates("SpatialTransformer", onnx_ops=["Reshape", "MatMul", "Transpose", "GridSample"],
            opset=16, notes=_NOTES)
def _spatial_transformer(ctx, node, ins, outs):
    h, w = ctx.shape((node, 0))[2:]
    grid = _affine_grid(ctx, ins[1], h, w, ctx.dtype(node.inputs[0]))
    _sample(ctx, ins[0], grid, outs[:1])


def _deformable(ctx, node, ins, outs, modulated):
    a = node.attrs
    if a.layout not in (None, "NCHW"):
        raise ctx.unsupported(node, f"layout={a.layout!r}")
    pad = list(a.pad) or [0, 0]
    data, offset = ins[0], ins[1]
    mask, rest = (ins[2], ins[3:]) if modulated else (None, ins[2:])
    weight = rest[0]
    bias = None if a.no_bias else rest[1]
    inputs = [data, weight, offset, bias or "", mask or ""]
    while inputs[-1] == "":
        inputs.pop()
    ctx.node("DeformConv", inputs, outs[:1], kernel_shape=list(a.kernel),
             strides=list(a.stride) or [1, 1], dilations=list(a.dilate) or [1, 1],
             pads=pad + pad, group=a.num_group, offset_group=a.num_deformable_group)


@translates("_contrib_DeformableConvolution", onnx_ops=["DeformConv"], opset=19,
            notes="offsets per tap (y, x), as ONNX's")
def _deformable_convolution(ctx, node, ins, outs):
    _deformable(ctx, node, ins, outs, False)


@translates("_contrib_ModulatedDeformableConvolution", onnx_ops=["DeformConv"], opset=19,
            notes="offsets per tap (y, x), the mask per tap, as ONNX's")
def _modulated_deformable_convolution(ctx, node, ins, outs):
    _deformable(ctx, node, ins, outs, True)
