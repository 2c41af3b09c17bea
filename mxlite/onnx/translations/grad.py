"""The registered operators gradient graphs are made of (``mx.sym.grad``): the softmax
family's input gradients and the convolution's weight gradient, so gradients export too."""
import numpy as np

from ..table import translates


@translates("_softmax_grad", onnx_ops=["Mul", "ReduceSum", "Sub"], opset=18,
            notes="y * (g - sum(g * y)) along axis")
def _softmax_grad(ctx, node, ins, outs):
    y, g = ins
    axes = ctx.int64s([int(node.attrs.axis)], "axes")
    s = ctx.node("ReduceSum", [ctx.node("Mul", [g, y]), axes], keepdims=1)
    ctx.node("Mul", [y, ctx.node("Sub", [g, s])], outs)


@translates("_log_softmax_grad", onnx_ops=["Exp", "Mul", "ReduceSum", "Sub"], opset=18,
            notes="g - exp(y) * sum(g) along axis")
def _log_softmax_grad(ctx, node, ins, outs):
    y, g = ins
    axes = ctx.int64s([int(node.attrs.axis)], "axes")
    s = ctx.node("ReduceSum", [g, axes], keepdims=1)
    ctx.node("Sub", [g, ctx.node("Mul", [ctx.node("Exp", [y]), s])], outs)


@translates("_conv_weight_grad", onnx_ops=["Transpose", "Conv", "Slice"],
            notes="a Conv of the data with the output gradient (batch and channels "
                  "swapped); num_group 1")
def _conv_weight_grad(ctx, node, ins, outs):
    a = node.attrs
    if a.num_group != 1:
        raise ctx.unsupported(node, f"num_group={a.num_group}")
    nd = len(a.kernel)
    last = a.layout is not None and a.layout[-1] == "C"
    if last:        # channels-last data and gradient: (N, *s, C) -> (N, C, *s)
        to_first = [0, nd + 1] + list(range(1, nd + 1))
        ins = [ctx.node("Transpose", [v], perm=to_first) for v in ins]
    stride = list(a.stride or (1,) * nd)
    dilate = list(a.dilate or (1,) * nd)
    pad = list(a.pad or (0,) * nd)
    perm = [1, 0] + list(range(2, nd + 2))
    # dW[o, c, k] = sum over n, p of g[n, o, p] x[n, c, p * stride + k * dilate - pad]: a
    # convolution of x read as (C, N, ...) with g read as (O, N, ...) as its weight, the
    # roles of stride and dilation exchanged
    xt = ctx.node("Transpose", [ins[0]], perm=perm)
    gt = ctx.node("Transpose", [ins[1]], perm=perm)
    full = ctx.node("Conv", [xt, gt], strides=dilate, dilations=stride, pads=pad + pad)
    # the correlation covers at least the kernel's extent: keep the first `kernel` taps
    taps = ctx.node("Slice", [full, ctx.int64s([0] * nd, "starts"),
                              ctx.int64s(list(a.kernel), "ends"),
                              ctx.int64s(list(range(2, nd + 2)), "axes")])
    if last:        # the weight gradient (O, C, *k) as MXNet's channels-last (O, *k, C)
        w = ctx.node("Transpose", [taps], perm=perm)
        ctx.node("Transpose", [w], outs, perm=[0] + list(range(2, nd + 2)) + [1])
        return
    ctx.node("Transpose", [taps], outs, perm=perm)


# comparisons give 1 or 0 in the input's dtype (MXNet's)
_COMPARE = {"equal": ("Equal", False), "not_equal": ("Equal", True),
            "greater": ("Greater", False), "greater_equal": ("GreaterOrEqual", False),
            "lesser": ("Less", False), "lesser_equal": ("LessOrEqual", False)}


def _compare(onnx_op, negate, scalar):
    def translate(ctx, node, ins, outs):
        dt = ctx.dtype(node.inputs[0])
        rhs = ctx.const(np.asarray(node.attrs.scalar, dt), base="scalar") if scalar else ins[1]
        b = ctx.node(onnx_op, [ins[0], rhs])
        if negate:
            b = ctx.node("Not", [b])
        ctx.node("Cast", [b], outs,
                 to=ctx.onnx.helper.np_dtype_to_tensor_dtype(ctx.dtype((node, 0))))
    return translate


for _short, (_op, _neg) in _COMPARE.items():
    _ops = [_op, "Cast"] + (["Not"] if _neg else [])
    translates(f"_{_short}_scalar", onnx_ops=_ops)(_compare(_op, _neg, True))
    translates(f"broadcast_{_short}", f"_{_short}", onnx_ops=_ops)(_compare(_op, _neg, False))


@translates("sum_to", onnx_ops=["ReduceSum", "Reshape"], opset=18,
            notes="sums the broadcast axes")
def _sum_to(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    target = list(ctx.shape((node, 0)))
    lead = len(shape) - len(target)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(target)
                                 if d == 1 and shape[lead + i] != 1]
    if not axes:
        ctx.node("Identity", ins, outs)
        return
    y = ctx.node("ReduceSum", [ins[0], ctx.int64s(axes, "axes")], keepdims=1)
    ctx.node("Reshape", [y, ctx.int64s(target)], outs)
