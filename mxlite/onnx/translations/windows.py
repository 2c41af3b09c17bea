"""Sliding windows: pooling's gradient ops (``_pool_backward`` as products with the
transposed per-axis window matrices; ``_pool_max_scatter`` / ``_pool_max_gather`` at each
window's first maximum, found by gathering the windows' taps) and ``im2col`` / ``col2im``
(a Gather of the blocks' taps and its ScatterElements-add adjoint).

The taps of every window are a constant index table from the static spatial sizes (the
batch and channels stay free): a tap in the padding points one past the plane, at a zero
appended to it, so reading it gives 0 and writing to it is dropped.
"""
import numpy as np

from ..table import translates
from ...ops import layers as _layers
from ...ops import pooling as _pooling
from ...ops.registry import Attrs


def _work(dtype):
    """The dtype mxlite computes in: float64 for float64, float32 for the other floats."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def _taps(in_sp, out_sp, kernel, stride, pad, dilate):
    """(O, K) flat input positions of the K taps of the O windows (row-major windows and
    taps), ``prod(in_sp)`` for a tap outside the input, and (O, K) whether it is inside."""
    nd = len(in_sp)
    steps = np.cumprod((tuple(in_sp[1:]) + (1,))[::-1])[::-1]
    flat, inside = np.zeros((1,) * 2 * nd, np.int64), np.ones((1,) * 2 * nd, bool)
    for d in range(nd):
        pos = (np.arange(out_sp[d])[:, None] * stride[d] - pad[d]
               + np.arange(kernel[d])[None, :] * dilate[d])
        shape = [1] * 2 * nd
        shape[d], shape[nd + d] = out_sp[d], kernel[d]
        flat = flat + (pos * steps[d]).reshape(shape)
        inside = inside & ((pos >= 0) & (pos < in_sp[d])).reshape(shape)
    o, k = int(np.prod(out_sp)), int(np.prod(kernel))
    flat = np.where(inside, flat, int(np.prod(in_sp)))
    return flat.reshape(o, k), inside.reshape(o, k)


# ---- layout and dtype --------------------------------------------------------------------------
def _channels_last(layout):
    return layout is not None and layout[-1] == "C"


def _channels_first(shape, last):
    """A shape in the op's layout as channels first."""
    return (shape[0], shape[-1]) + tuple(shape[1:-1]) if last else tuple(shape)


def _first(ctx, x, ndim, last):
    return ctx.node("Transpose", [x], perm=[0, ndim - 1] + list(range(1, ndim - 1))) \
        if last else x


def _finish(ctx, value, ndim, last, work, dtype, outs):
    """``value`` (channels first, in ``work``) written as the op's layout and dtype."""
    if last:
        value = ctx.node("Transpose", [value], perm=[0] + list(range(2, ndim)) + [1])
    if np.dtype(dtype) != work:
        return ctx.node("Cast", [value], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
            np.dtype(dtype)))
    return ctx.node("Identity", [value], outs)


def _in_work(ctx, x, dtype):
    return x if np.dtype(dtype) == _work(dtype) else ctx.cast(x, _work(dtype))


def _planes(ctx, x, c, size):
    """(N, C, *spatial) as (N, C, size + 1): the flattened planes and one zero after each."""
    flat = ctx.node("Reshape", [x, ctx.int64s([0, c, size])])
    return ctx.node("Pad", [flat, ctx.int64s([0, 0, 0, 0, 0, 1])])


def _zeros_as(ctx, x, dtype):
    zero = ctx.onnx.helper.make_tensor("zero", ctx.onnx.helper.np_dtype_to_tensor_dtype(
        np.dtype(dtype)), [1], [0])
    return ctx.node("ConstantOfShape", [ctx.node("Shape", [x])], value=zero)


# ---- pooling gradients -------------------------------------------------------------------------
def _geometry(node, data_shape):
    """The window geometry of a pooling of channels-first data of ``data_shape``."""
    kernel, stride, pad, in_sp, out_sp = _pooling.pool_geometry(
        node.op.name, data_shape, Attrs(node.attrs, global_pool=False, layout=None))
    return kernel, stride, pad, tuple(in_sp), tuple(out_sp)


def _window_matrix(n_in, n_out, kernel, stride, pad, pool_type, include_pad):
    """(n_out, n_in): row o covers the inputs of window o along one axis, weighted 1 (sum)
    or 1 / the axis's share of the avg divisor (clipped to the padded input, or to the
    input without count_include_pad): the divisor is the product of the axes' shares."""
    m = np.zeros((n_out, n_in), np.float64)
    for o in range(n_out):
        s = o * stride - pad
        end = min(s + kernel, n_in + pad)
        lo, hi = max(s, 0), min(end, n_in)
        count = (end - s) if include_pad else (hi - lo)
        if hi > lo and count > 0:
            m[o, lo:hi] = 1.0 if pool_type == "sum" else 1.0 / count
    return m


def _along(ctx, x, matrix, axis, shape):
    """``x`` (N, C, *spatial of ``shape``) with ``matrix`` (new, old) applied along spatial
    axis ``axis`` (counted from the end: -1, -2 or -3)."""
    if axis == -1:
        return ctx.node("MatMul", [x, ctx.const(np.ascontiguousarray(matrix.T), base="win")])
    if axis == -2:
        return ctx.node("MatMul", [ctx.const(matrix, base="win"), x])
    d, h, w = shape[-3:]
    flat = ctx.node("Reshape", [x, ctx.int64s([0, shape[1], d, h * w])])
    prod = ctx.node("MatMul", [ctx.const(matrix, base="win"), flat])
    return ctx.node("Reshape", [prod, ctx.int64s([0, shape[1], matrix.shape[0], h, w])])


@translates("_pool_backward", onnx_ops=["Transpose", "Cast", "MatMul", "Reshape"],
            notes="avg and sum: products with the transposed window matrix of each axis "
                  "(the avg divisor is a product of per-axis shares); float16 through "
                  "float32")
def _pool_backward(ctx, node, ins, outs):
    a = node.attrs
    g_shape = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    last = _channels_last(a.layout)
    ndim = len(g_shape)
    kernel, stride, pad, in_sp, out_sp = _geometry(node, _channels_first(ctx.shape((node, 0)),
                                                                         last))
    x = _first(ctx, _in_work(ctx, ins[0], dtype), ndim, last)
    c = g_shape[-1] if last else g_shape[1]
    sizes = list(out_sp)
    for d in reversed(range(len(in_sp))):
        m = _window_matrix(in_sp[d], out_sp[d], kernel[d], stride[d], pad[d], a.pool_type,
                           a.count_include_pad)
        sizes[d] = in_sp[d]
        x = _along(ctx, x, m.T.astype(_work(dtype)), d - len(in_sp),
                   [g_shape[0], c] + sizes[:d] + [out_sp[d]] + sizes[d + 1:])
    _finish(ctx, x, ndim, last, _work(dtype), dtype, outs[:1])


def _first_maxima(ctx, node, planes, data_shape, work):
    """The flat position in its plane (the appended zero for a window with no input) of
    each window's first maximum of the data (``planes``: from ``_planes``, in ``work``):
    (N, C, O); a NaN is the maximum of a window it is in (the first NaN), padding never
    is."""
    kernel, stride, pad, in_sp, out_sp = _geometry(node, data_shape)
    table, inside = _taps(in_sp, out_sp, kernel, stride, pad, (1,) * len(in_sp))
    taps = ctx.node("Gather", [planes, ctx.const(table, base="taps")], axis=2)  # (N, C, O, K)
    inside = ctx.const(inside, base="inside")
    nan = ctx.node("And", [ctx.node("IsNaN", [taps]), inside])
    plain = ctx.node("And", [inside, ctx.node("Not", [nan])])
    values = ctx.node("Where", [plain, taps, ctx.const(np.asarray(-np.inf, work))])
    top = ctx.node("ReduceMax", [values, ctx.int64s([3])], keepdims=1)
    at_top = ctx.node("And", [plain, ctx.node("Equal", [taps, top])])
    nan_f = ctx.cast(nan, np.float32)
    any_nan = ctx.node("Greater", [ctx.node("ReduceMax", [nan_f, ctx.int64s([3])], keepdims=1),
                                   ctx.const(np.asarray(0, np.float32))])
    winner = ctx.node("Where", [any_nan, nan_f, ctx.cast(at_top, np.float32)])
    pick = ctx.node("ArgMax", [winner], axis=3, keepdims=0)            # the first one
    o, k = table.shape
    row = ctx.const((np.arange(o, dtype=np.int64) * k), base="rows")
    # the chosen tap's position: entry o * K + pick of the flattened table
    return ctx.node("Gather", [ctx.const(table.ravel(), base="taps"),
                               ctx.node("Add", [pick, row])], axis=0)


def _plane_sizes(node, data_shape):
    """Channels, spatial sizes and plane size of channels-first data."""
    in_sp = _geometry(node, data_shape)[3]
    return data_shape[1], in_sp, int(np.prod(in_sp))


_MAX_OPS = ["Transpose", "Cast", "Reshape", "Pad", "Gather", "IsNaN", "And", "Not", "Where",
            "ReduceMax", "Equal", "Greater", "ArgMax", "Add"]


def _max_inputs(ctx, node, ins):
    """data and the second input channels first in the work dtype, data's channels-first
    shape, and the layout facts."""
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    last, ndim = _channels_last(a.layout), len(shape)
    x, other = (_first(ctx, _in_work(ctx, v, dtype), ndim, last) for v in ins[:2])
    return x, other, _channels_first(shape, last), dtype, last, ndim


@translates("_pool_max_scatter", onnx_ops=_MAX_OPS + ["Shape", "ConstantOfShape",
                                                      "ScatterElements", "Slice"], opset=18,
            notes="ScatterElements add of the head gradient at each window's first maximum "
                  "(found by gathering the windows' taps); float16 through float32")
def _pool_max_scatter(ctx, node, ins, outs):
    x, g, data_shape, dtype, last, ndim = _max_inputs(ctx, node, ins)
    work = _work(dtype)
    c, in_sp, size = _plane_sizes(node, data_shape)
    planes = _planes(ctx, x, c, size)
    where = _first_maxima(ctx, node, planes, data_shape, work)
    updates = ctx.node("Reshape", [g, ctx.int64s([0, c, -1])])
    summed = ctx.node("ScatterElements", [_zeros_as(ctx, planes, work), where, updates],
                      axis=2, reduction="add")
    kept = ctx.node("Slice", [summed, ctx.int64s([0]), ctx.int64s([size]), ctx.int64s([2])])
    value = ctx.node("Reshape", [kept, ctx.int64s([0, c] + list(in_sp))])
    _finish(ctx, value, ndim, last, work, dtype, outs[:1])


@translates("_pool_max_gather", onnx_ops=_MAX_OPS + ["GatherElements"], opset=18,
            notes="GatherElements of the head at each window's first maximum (found by "
                  "gathering the windows' taps); float16 through float32")
def _pool_max_gather(ctx, node, ins, outs):
    x, h, data_shape, dtype, last, ndim = _max_inputs(ctx, node, ins)
    work = _work(dtype)
    c, _, size = _plane_sizes(node, data_shape)
    out_sp = _geometry(node, data_shape)[4]
    where = _first_maxima(ctx, node, _planes(ctx, x, c, size), data_shape, work)
    picked = ctx.node("GatherElements", [_planes(ctx, h, c, size), where], axis=2)
    value = ctx.node("Reshape", [picked, ctx.int64s([0, c] + list(out_sp))])
    _finish(ctx, value, ndim, last, work, dtype, outs[:1])


# ---- im2col, col2im ----------------------------------------------------------------------------
def _cols_taps(op, image_shape, attrs):
    """(K, L) flat image positions of every column entry (tap-major), and the spatial
    sizes of the image."""
    kernel, stride, dilate, pad, in_sp, out_sp = _layers._cols_geometry(op, image_shape, attrs)
    table, _ = _taps(in_sp, out_sp, kernel, stride, pad, dilate)
    return np.ascontiguousarray(table.T), tuple(in_sp)


@translates("im2col", onnx_ops=["Reshape", "Pad", "Gather"],
            notes="a Gather of every block's taps (the padding reads an appended zero)")
def _im2col(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    table, in_sp = _cols_taps("im2col", shape, node.attrs)
    c = shape[1]
    cols = ctx.node("Gather", [_planes(ctx, ins[0], c, int(np.prod(in_sp))),
                               ctx.const(table, base="taps")], axis=2)     # (N, C, K, L)
    ctx.node("Reshape", [cols, ctx.int64s([0, c * table.shape[0], table.shape[1]])], outs[:1])


@translates("col2im", onnx_ops=["Cast", "Reshape", "Concat", "Shape", "Expand", "ConstantOfShape",
                                "ScatterElements", "Slice"],
            notes="ScatterElements add of the columns at their taps' image positions; "
                  "float16 through float32")
def _col2im(ctx, node, ins, outs):
    a = node.attrs
    n, ck, l = ctx.shape(node.inputs[0])
    dtype = ctx.dtype(node.inputs[0])
    work = _work(dtype)
    k = int(np.prod(a.kernel))
    c = ck // k
    image = (n, c) + tuple(a.output_size)
    table, in_sp = _cols_taps("col2im", image, a)
    size = int(np.prod(in_sp))
    updates = ctx.node("Reshape", [_in_work(ctx, ins[0], dtype), ctx.int64s([0, c, k * l])])
    index = ctx.node("Expand", [ctx.const(table.reshape(1, 1, -1), base="taps"),
                                ctx.node("Shape", [updates])])
    shape = ctx.node("Concat", [ctx.node("Shape", [updates], start=0, end=2),
                                ctx.int64s([size + 1])], axis=0)
    zero = ctx.onnx.helper.make_tensor("zero", ctx.onnx.helper.np_dtype_to_tensor_dtype(work),
                                       [1], [0])
    zeros = ctx.node("ConstantOfShape", [shape], value=zero)
    summed = ctx.node("ScatterElements", [zeros, index, updates], axis=2, reduction="add")
    kept = ctx.node("Slice", [summed, ctx.int64s([0]), ctx.int64s([size]), ctx.int64s([2])])
    value = ctx.node("Reshape", [kept, ctx.int64s([0, c] + list(in_sp))])
    _finish(ctx, value, 3, False, work, dtype, outs[:1])
