"""Normalisation layers and their kin: InstanceNorm, GroupNorm, L2Normalization, LRN,
SoftmaxActivation, UpSampling."""
import numpy as np

from ..table import translates


def _scalar(ctx, value, dtype, base):
    return ctx.const(np.asarray(value, dtype), base=base)


def _standardize(ctx, node, x, groups, gamma, beta, outs):
    """``x`` (N, C, ...) viewed as (N, groups, M), each (sample, group) row standardised
    (biased variance, two passes as mxlite computes it), scaled and shifted by ``gamma`` /
    ``beta`` of shape (groups,), viewed back. With hidden outputs asked for, the mean and
    ``std = sqrt(var + eps)`` of shape (N, groups)."""
    dt = ctx.dtype(node.inputs[0])
    # Reshape's 0 copies the batch axis, so a symbolic batch stays symbolic
    view = ctx.node("Reshape", [x, ctx.int64s([0, groups, -1])])
    axes = ctx.int64s([2], "axes")
    mean = ctx.node("ReduceMean", [view, axes], keepdims=1)
    centred = ctx.node("Sub", [view, mean])
    var = ctx.node("ReduceMean", [ctx.node("Mul", [centred, centred]), axes], keepdims=1)
    std = ctx.node("Sqrt", [ctx.node("Add", [var, _scalar(ctx, node.attrs.eps, dt, "eps")])])
    per_group = ctx.int64s([1, groups, 1])
    y = ctx.node("Div", [centred, std])
    y = ctx.node("Mul", [y, ctx.node("Reshape", [gamma, per_group])])
    y = ctx.node("Add", [y, ctx.node("Reshape", [beta, per_group])])
    ctx.node("Reshape", [y, ctx.node("Shape", [x])], outs[:1])
    # the statistics in the shapes mxlite gives them: (N, groups) for GroupNorm,
    # (N, C, 1, ...) for InstanceNorm (Reshape's 0 keeps a symbolic batch axis)
    for i, (stat, out) in enumerate(zip((mean, std), outs[1:]), 1):
        ctx.node("Reshape", [stat, ctx.int64s([0] + list(ctx.shape((node, i))[1:]))], [out])


@translates("InstanceNorm", onnx_ops=["Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt",
                                      "Div", "Shape"], opset=18,
            notes="a composition (the hidden mean and std outputs too)")
def _instance_norm(ctx, node, ins, outs):
    c = ctx.shape(node.inputs[0])[1]
    _standardize(ctx, node, ins[0], c, ins[1], ins[2], outs)


@translates("GroupNorm", onnx_ops=["Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt",
                                   "Div", "Shape"], opset=18,
            notes="gamma and beta per group (MXNet 1.9.1); output_mean_var gives the std")
def _group_norm(ctx, node, ins, outs):
    _standardize(ctx, node, ins[0], node.attrs.num_groups, ins[1], ins[2], outs)


def _l2_axes(ndim, mode):
    return {"instance": list(range(1, ndim)), "channel": [1],
            "spatial": list(range(2, ndim))}[mode]


@translates("L2Normalization", onnx_ops=["ReduceSumSquare", "Add", "Sqrt", "Div"], opset=18,
            notes="modes instance, channel and spatial")
def _l2_normalization(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    dt = ctx.dtype(node.inputs[0])
    ss = ctx.node("ReduceSumSquare", [ins[0], ctx.int64s(_l2_axes(ndim, a.mode), "axes")],
                  keepdims=1)
    norm = ctx.node("Sqrt", [ctx.node("Add", [ss, _scalar(ctx, a.eps, dt, "eps")])])
    ctx.node("Div", [ins[0], norm], outs)


@translates("LRN", onnx_ops=["LRN"],
            notes="an even nsize: MXNet's window of nsize - 1 channels, alpha still over "
                  "nsize (ONNX's alpha rescaled)")
def _lrn(ctx, node, ins, outs):
    a = node.attrs
    # MXNet sums 2 * ((nsize - 1) // 2) + 1 channels centred on the channel and divides
    # alpha by nsize; ONNX sums `size` channels and divides alpha by size: with an odd size
    # of MXNet's window the windows agree, and alpha is rescaled to MXNet's divisor
    size = 2 * ((a.nsize - 1) // 2) + 1
    ctx.node("LRN", ins, outs, size=size, alpha=float(a.alpha) * size / a.nsize,
             beta=float(a.beta), bias=float(a.knorm))


@translates("SoftmaxActivation", onnx_ops=["Softmax"], notes="modes instance and channel")
def _softmax_activation(ctx, node, ins, outs):
    axis = 1 if node.attrs.mode == "channel" else -1
    ctx.node("Softmax", ins, outs, axis=axis)


@translates("UpSampling", onnx_ops=["Resize", "Concat", "Sum", "ConvTranspose"],
            notes="nearest: Resize (each input by its own integer scale, concat or sum); "
                  "bilinear: the depthwise ConvTranspose MXNet computes")
def _upsampling(ctx, node, ins, outs):
    a = node.attrs
    if a.sample_type == "bilinear":
        s = int(a.scale)
        k = 2 * s - s % 2
        p = s // 2
        ctx.node("ConvTranspose", ins[:2], outs, kernel_shape=[k, k], strides=[s, s],
                 pads=[p, p, p, p], group=int(a.num_filter))
        return
    oh = ctx.shape(node.inputs[0])[2] * a.scale
    parts = []
    for x, e in zip(ins, node.inputs):
        s = oh // ctx.shape(e)[2]
        # asymmetric coordinates with floor: output i reads input floor(i / s), a repeat
        scales = ctx.const(np.asarray([1, 1, s, s], np.float32), base="scales")
        parts.append(ctx.node("Resize", [x, "", scales], mode="nearest",
                              coordinate_transformation_mode="asymmetric",
                              nearest_mode="floor"))
    if len(parts) == 1:
        ctx.node("Identity", parts, outs)
    else:
        ctx.node("Sum" if a.multi_input_mode == "sum" else "Concat", parts, outs,
                 axis=None if a.multi_input_mode == "sum" else 1)


@translates("_contrib_SyncBatchNorm", onnx_ops=["BatchNormalization"],
            notes="inference: BatchNorm's, the moving statistics (no cross-rank sums)")
def _sync_batch_norm(ctx, node, ins, outs):
    from .nn import _batch_norm
    _batch_norm(ctx, node, ins, outs)


@translates("_contrib_BatchNormWithReLU", onnx_ops=["BatchNormalization", "Relu"],
            notes="inference: BatchNorm's, the moving statistics, then Relu")
def _batch_norm_relu(ctx, node, ins, outs):
    from .nn import _batch_norm
    normed = ctx.fresh("batchnorm")
    _batch_norm(ctx, node, ins, [normed])
    ctx.node("Relu", [normed], outs[:1])
