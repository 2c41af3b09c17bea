"""Reductions and selections beyond shape.py's: _square_sum, nansum, nanprod, norm, moments,
cumsum, argmax_channel, pick, softmax_cross_entropy."""
import numpy as np

from ..table import translates
from .shape import _out_shape, _reduce, _reduced_axes


def _to(ctx, dtype):
    return ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _nan_as(fill, onnx_op):
    """NaN replaced by ``fill`` (integers have none), then ``onnx_op`` over MXNet's axes."""
    def translate(ctx, node, ins, outs):
        dt = ctx.dtype(node.inputs[0])
        x = ins[0]
        if dt.kind == "f":
            x = ctx.node("Where", [ctx.node("IsNaN", [x]), ctx.const(np.asarray(fill, dt)), x])
        axes = _reduced_axes(node, len(ctx.shape(node.inputs[0])))
        if axes:
            x = ctx.node(onnx_op, [x, ctx.int64s(axes, "axes")], keepdims=1)
        ctx.node("Reshape", [x, ctx.int64s(_out_shape(ctx, node))], outs)
    return translate


# (mxlite sums the squares in double, ONNX in the input's dtype: float32 within rounding)
translates("_square_sum", onnx_ops=["ReduceSumSquare", "Reshape"], opset=18)(
    _reduce("ReduceSumSquare"))
translates("nansum", onnx_ops=["IsNaN", "Where", "ReduceSum", "Reshape"], opset=18)(
    _nan_as(0, "ReduceSum"))
translates("nanprod", onnx_ops=["IsNaN", "Where", "ReduceProd", "Reshape"], opset=18)(
    _nan_as(1, "ReduceProd"))


@translates("norm", onnx_ops=["Cast", "ReduceL1", "ReduceL2", "Reshape"], opset=18,
            notes="ord 1 and 2 over any axes (entry-wise)")
def _norm(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    if a.ord not in (1, 2):
        raise ctx.unsupported(node, f"ord={a.ord}")
    axis = a.axis
    axes = list(range(ndim)) if axis is None or axis == () else sorted(
        {v % ndim for v in (axis if isinstance(axis, (tuple, list)) else [axis])})
    out = ctx.dtype((node, 0))
    x = ins[0] if ctx.dtype(node.inputs[0]) == out else ctx.cast(ins[0], out)
    y = ctx.node("ReduceL1" if a.ord == 1 else "ReduceL2", [x, ctx.int64s(axes, "axes")],
                 keepdims=1)
    ctx.node("Reshape", [y, ctx.int64s(_out_shape(ctx, node))], outs)


@translates("moments", onnx_ops=["ReduceMean", "Sub", "Mul", "Reshape", "Cast"], opset=18,
            notes="float dtypes (float16 through float32); integer moments (MXNet's "
                  "truncated int64 sums) are not exported")
def _moments(ctx, node, ins, outs):
    dt = ctx.dtype(node.inputs[0])
    if dt.kind != "f":
        raise ctx.unsupported(node, f"data of dtype {dt}")
    ndim = len(ctx.shape(node.inputs[0]))
    axes = ctx.int64s(sorted({v % ndim for v in (node.attrs.axes or range(ndim))}), "axes")
    x = ctx.cast(ins[0], np.float32) if dt == np.float16 else ins[0]
    mean = ctx.node("ReduceMean", [x, axes], keepdims=1)
    d = ctx.node("Sub", [x, mean])
    var = ctx.node("ReduceMean", [ctx.node("Mul", [d, d]), axes], keepdims=1)
    for i, (v, o) in enumerate(zip((mean, var), outs)):
        if dt == np.float16:
            v = ctx.cast(v, dt)
        ctx.node("Reshape", [v, ctx.int64s(_out_shape(ctx, node, i))], [o])


@translates("cumsum", onnx_ops=["Reshape", "Cast", "CumSum"],
            notes="axis None sums the flattened array")
def _cumsum(ctx, node, ins, outs):
    out = ctx.dtype((node, 0))
    x = ins[0]
    axis = node.attrs.axis
    if axis is None:
        x, axis = ctx.node("Reshape", [x, ctx.int64s([-1])]), 0
    wide = out if ctx.takes("CumSum", out) and out != np.float16 else np.dtype(np.float32) \
        if out == np.float16 else np.dtype(np.float64)     # float16 accumulates in float32
    if ctx.dtype(node.inputs[0]) != wide:
        x = ctx.cast(x, wide)
    y = ctx.node("CumSum", [x, ctx.const(np.int64(axis), base="axis")])
    ctx.node("Cast", [y], outs, to=_to(ctx, out))


@translates("argmax_channel", onnx_ops=["ArgMax", "Cast"], notes="indices as float32")
def _argmax_channel(ctx, node, ins, outs):
    i = ctx.node("ArgMax", ins, axis=1, keepdims=0, select_last_index=0)
    ctx.node("Cast", [i], outs, to=_to(ctx, ctx.dtype((node, 0))))


@translates("pick", onnx_ops=["Cast", "Clip", "Mod", "Unsqueeze", "GatherElements",
                              "Reshape"],
            notes="indices truncated, then clipped or wrapped (mode)")
def _pick(ctx, node, ins, outs):
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    axis = a.axis % len(shape)
    n = shape[axis]
    idx = ctx.node("Cast", [ins[1]], to=ctx.onnx.TensorProto.INT64)    # truncates
    if a.mode == "clip":
        idx = ctx.node("Clip", [idx, ctx.const(np.int64(0), base="first"),
                                ctx.const(np.int64(n - 1), base="last")])
    else:
        idx = ctx.node("Mod", [idx, ctx.int64s([n], "n")], fmod=0)
    if len(ctx.shape(node.inputs[1])) < len(shape):
        idx = ctx.node("Unsqueeze", [idx, ctx.int64s([axis], "axes")])
    y = ctx.node("GatherElements", [ins[0], idx], axis=axis)
    ctx.node("Reshape", [y, ctx.int64s(_out_shape(ctx, node))], outs)


@translates("softmax_cross_entropy", onnx_ops=["LogSoftmax", "Cast", "Unsqueeze",
                                               "GatherElements", "ReduceSum", "Neg",
                                               "Reshape"], opset=18,
            notes="-sum log softmax(data)[label], shape (1,)")
def _softmax_cross_entropy(ctx, node, ins, outs):
    logp = ctx.node("LogSoftmax", [ins[0]], axis=1)
    label = ctx.node("Cast", [ins[1]], to=ctx.onnx.TensorProto.INT64)
    label = ctx.node("Unsqueeze", [label, ctx.int64s([1], "axes")])
    picked = ctx.node("GatherElements", [logp, label], axis=1)
    total = ctx.node("ReduceSum", [picked, ctx.int64s([0, 1], "axes")], keepdims=0)
    ctx.node("Reshape", [ctx.node("Neg", [total]), ctx.int64s([1])], outs)
