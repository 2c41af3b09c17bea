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


@translates("Correlation", onnx_ops=["Pad", "Slice", "Mul", "Sub", "Abs", "ReduceSum",
                                     "AveragePool", "Div", "Concat", "Cast"],
            opset=18, notes="one product (or absolute difference), channel sum and K x K average "
                            "pool per displacement; float16 through float32")
def _correlation(ctx, node, ins, outs):
    a = node.attrs
    n, c, h, w = ctx.shape(node.inputs[0])
    th, tw = ctx.shape((node, 0))[2:]
    dtype = ctx.dtype(node.inputs[0])
    work = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    k, md, s1, s2, pad = (a.kernel_size, a.max_displacement, a.stride1, a.stride2, a.pad_size)
    pads = ctx.int64s([0, 0, pad, pad, 0, 0, pad, pad], base="pads")
    p1, p2 = (ctx.node("Pad", [x if dtype == work else ctx.cast(x, work), pads])
              for x in ins[:2])
    hr, wr = (th - 1) * s1 + k, (tw - 1) * s1 + k      # the rows and columns the output reads

    def window(x, dy, dx):
        return ctx.node("Slice", [x, ctx.int64s([md + dy, md + dx]),
                                  ctx.int64s([md + dy + hr, md + dx + wr]), ctx.int64s([2, 3])])
    first = window(p1, 0, 0)
    scale = ctx.const(np.asarray(c, work), base="channels")
    d = md // s2
    planes = []
    for dy in range(-d, d + 1):
        for dx in range(-d, d + 1):
            second = window(p2, dy * s2, dx * s2)
            compared = (ctx.node("Mul", [first, second]) if a.is_multiply else
                        ctx.node("Abs", [ctx.node("Sub", [first, second])]))
            summed = ctx.node("ReduceSum", [compared, ctx.int64s([1])], keepdims=1)
            pooled = ctx.node("AveragePool", [summed], kernel_shape=[k, k], strides=[s1, s1])
            planes.append(ctx.node("Div", [pooled, scale]))
    volume = ctx.node("Concat", planes, axis=1) if len(planes) > 1 else planes[0]
    if dtype == work:
        ctx.node("Identity", [volume], outs[:1])
    else:
        ctx.node("Cast", [volume], outs[:1], to=ctx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
