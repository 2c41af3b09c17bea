"""Sorting and selection: topk, sort, argsort, as ONNX TopK (whose order, like mxlite's, is
stable: equal elements by increasing position in both directions)."""
import numpy as np

from ..table import translates


def _top(ctx, node, x, k, largest):
    """(values, int64 indices) of the ``k`` largest/smallest along MXNet's ``axis`` (None:
    the flattened data); ``k < 1`` the whole axis. A dtype TopK does not take (bool) goes
    through float64."""
    shape = ctx.shape(node.inputs[0])
    axis = node.attrs.axis
    if axis is None:
        x = ctx.node("Reshape", [x, ctx.int64s([-1])])
        axis, n = 0, int(np.prod(shape, dtype=np.int64))
    else:
        axis %= len(shape)
        n = shape[axis]
    dt = ctx.dtype(node.inputs[0])
    if not ctx.takes("TopK", dt):
        x = ctx.cast(x, np.float64)
    values, idx = ctx.node("TopK", [x, ctx.int64s([n if k < 1 else k], "k")],
                           [ctx.fresh("values"), ctx.fresh("indices")], axis=axis,
                           largest=int(largest), sorted=1)
    if not ctx.takes("TopK", dt):
        values = ctx.cast(values, dt)
    return values, idx, axis


@translates("topk", onnx_ops=["TopK", "Cast", "Reshape", "ScatterElements", "ConstantOfShape",
                              "Expand", "Shape"],
            notes="ret_typ value, indices, both and mask; indices in MXNet's dtype")
def _topk(ctx, node, ins, outs):
    a = node.attrs
    values, idx, axis = _top(ctx, node, ins[0], a.k, not a.is_ascend)
    if a.ret_typ == "mask":
        dt = ctx.dtype(node.inputs[0])
        zeros = ctx.node("ConstantOfShape", [ctx.node("Shape", [ins[0]])],
                         value=ctx.onnx.numpy_helper.from_array(np.zeros(1, dt)))
        ones = ctx.node("Expand", [ctx.const(np.ones((), dt), base="one"),
                                   ctx.node("Shape", [idx])])
        ctx.node("ScatterElements", [zeros, idx, ones], outs, axis=axis)
        return
    if a.ret_typ in ("value", "both"):
        ctx.node("Identity", [values], outs[:1])
    if a.ret_typ in ("indices", "both"):
        ctx.node("Cast", [idx], outs[-1:], to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
            ctx.dtype((node, len(outs) - 1))))


@translates("sort", onnx_ops=["TopK", "Reshape"])
def _sort(ctx, node, ins, outs):
    values, _, _ = _top(ctx, node, ins[0], 0, not node.attrs.is_ascend)
    ctx.node("Identity", [values], outs)


@translates("argsort", onnx_ops=["TopK", "Cast", "Reshape"],
            notes="indices in MXNet's dtype")
def _argsort(ctx, node, ins, outs):
    _, idx, _ = _top(ctx, node, ins[0], 0, not node.attrs.is_ascend)
    ctx.node("Cast", [idx], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
        ctx.dtype((node, 0))))
