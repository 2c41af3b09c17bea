"""The adjoints of the gathering operators (the scatters gradient graphs are made of):
``_backward_gather_nd``, ``_take_grad``, ``_pick_grad``, ``_take_along_axis_grad``,
``_sequence_last_grad``, ``_slice_scatter``, ``_diag_scatter``, ``_pad_backward``; NDArray
indexing (``_getitem``, ``_getitem_scatter``, ``_setitem``) and ``_rnn_param_concat``."""
import numpy as np

from ...ops.shape import _slice_key
from ..table import translates
from .indexing import _index_last, _int64, _region_grid

_NARROW = (np.dtype(np.float16),)


def _filled_zeros(ctx, shape, dtype):
    """Zeros of ``dtype`` and the shape the int64 1-D value ``shape`` holds."""
    return ctx.node("ConstantOfShape", [shape],
                    value=ctx.onnx.numpy_helper.from_array(np.zeros(1, dtype)))


def _zeros(ctx, shape, dtype):
    """Zeros of the static ``shape`` and ``dtype``."""
    return _filled_zeros(ctx, ctx.int64s(shape), dtype)


def _scatter_add(ctx, node, op_type, shape, indices, updates, outs, **attrs):
    """``op_type`` (ScatterElements or ScatterND) adding ``updates`` into zeros of the
    shape the int64 value ``shape`` holds, in the output's dtype; float16 sums in float32
    (as mxlite's kernels, and onnxruntime adds no float16), rounded once. Returns the
    scattered value (``outs`` names it when given)."""
    out = ctx.dtype((node, 0))
    work = np.dtype(np.float32) if out in _NARROW else out
    src = ctx.dtype(node.inputs[0])
    if src != work:
        updates = ctx.cast(updates, work)
    y = ctx.node(op_type, [_filled_zeros(ctx, shape, work), indices, updates],
                 None if work != out else outs, reduction="add", **attrs)
    if work != out:
        y = ctx.node("Cast", [y], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(out))
    return y


def _axis_size(ctx, data, shape, axis):
    """The size of ``axis`` of the value ``data`` (static ``shape``) as an int64 (1,) value:
    read from the value where it is the symbolic batch axis."""
    if ctx.dynamic and axis == 0:
        return ctx.node("Shape", [data], start=0, end=1)
    return ctx.int64s([shape[axis]], "size")


def _mode_positions(ctx, idx, n, mode):
    """int64 positions of the indices ``idx`` on an axis of size ``n`` (an int64 (1,) value):
    truncated toward zero, then clipped ('clip') or taken modulo n ('wrap'); 'raise' keeps
    them (mxlite refuses an index outside the axis)."""
    pos = _int64(ctx, idx)
    if mode == "clip":
        last = ctx.node("Sub", [n, ctx.const(np.int64(1), base="one")])
        pos = ctx.node("Max", [pos, ctx.const(np.int64(0), base="first")])
        return ctx.node("Min", [pos, last])
    if mode == "wrap":
        return ctx.node("Mod", [pos, n], fmod=0)
    return pos


@translates("_backward_gather_nd", onnx_ops=["Cast", "Transpose", "ConstantOfShape",
                                             "ScatterND"], opset=16,
            notes="a ScatterND with reduction add (repeated indices accumulate); float16 "
                  "sums in float32")
def _backward_gather_nd(ctx, node, ins, outs):
    _scatter_add(ctx, node, "ScatterND", ctx.int64s(ctx.shape((node, 0))),
                 _index_last(ctx, node, ins[1]), ins[0], outs)


@translates("_take_grad", onnx_ops=["Cast", "Sub", "Max", "Min", "Mod", "Shape", "Reshape",
                                    "Expand", "ConstantOfShape", "ScatterElements"], opset=16,
            notes="the gradient slices added at the positions take read (mode clip or wrap); "
                  "float16 sums in float32")
def _take_grad(ctx, node, ins, outs):
    a = node.attrs
    data = ctx.shape(node.inputs[2])
    axis = a.axis % len(data)
    tail = list(data[axis + 1:])
    pos = _mode_positions(ctx, ins[1], _axis_size(ctx, ins[2], data, axis), a.mode)
    # grad (before..., indices..., after...) with the indices' axes merged into one; shapes
    # copied from the values (Reshape's 0), so a symbolic batch axis stays symbolic
    g = ctx.node("Reshape", [ins[0], ctx.int64s([0] * axis + [-1] + tail)])
    pos = ctx.node("Reshape", [pos, ctx.int64s([1] * axis + [-1] + [1] * len(tail))])
    pos = ctx.node("Expand", [pos, ctx.node("Shape", [g])])
    _scatter_add(ctx, node, "ScatterElements", ctx.node("Shape", [ins[2]]), pos, g, outs,
                 axis=axis)


@translates("_pick_grad", onnx_ops=["Cast", "Sub", "Max", "Min", "Mod", "Shape", "Size",
                                    "Reshape", "Unsqueeze", "ConstantOfShape",
                                    "ScatterElements"],
            notes="the gradient written where pick read (mode clip or wrap; axis None: the "
                  "flattened data)")
def _pick_grad(ctx, node, ins, outs):
    a = node.attrs
    data = ctx.shape(node.inputs[2])
    dt = ctx.dtype((node, 0))
    full = ctx.node("Shape", [ins[2]])
    if a.axis is None:                   # one element of the flattened data
        size = ctx.node("Reshape", [ctx.node("Size", [ins[2]]), ctx.int64s([1])])
        pos = ctx.node("Reshape", [_mode_positions(ctx, ins[1], size, a.mode),
                                   ctx.int64s([1])])
        g = ctx.node("Reshape", [ins[0], ctx.int64s([1])])
        y = ctx.node("ScatterElements", [_filled_zeros(ctx, size, dt), pos, g], axis=0)
        ctx.node("Reshape", [y, full], outs)
        return
    axis = a.axis % len(data)
    pos = _mode_positions(ctx, ins[1], _axis_size(ctx, ins[2], data, axis), a.mode)
    g = ins[0]
    # every output of pick reads its own element: a plain write, no accumulation; index
    # and grad get data's rank back (a size-1 axis at `axis`)
    if len(data) == 1:
        pos, g = (ctx.node("Reshape", [v, ctx.int64s([1])]) for v in (pos, g))
    else:
        if len(ctx.shape(node.inputs[1])) < len(data):
            pos = ctx.node("Unsqueeze", [pos, ctx.int64s([axis], "axes")])
        if len(ctx.shape(node.inputs[0])) < len(data):
            g = ctx.node("Unsqueeze", [g, ctx.int64s([axis], "axes")])
    ctx.node("ScatterElements", [_filled_zeros(ctx, full, dt), pos, g], outs, axis=axis)


@translates("_take_along_axis_grad", onnx_ops=["Cast", "Shape", "Size", "Reshape",
                                               "ConstantOfShape", "ScatterElements"],
            opset=16,
            notes="a ScatterElements with reduction add; indices truncated toward zero; "
                  "float16 sums in float32")
def _take_along_axis_grad(ctx, node, ins, outs):
    data = ctx.shape(node.inputs[2])
    axis = node.attrs.axis
    pos, g = _int64(ctx, ins[1]), ins[0]
    full = ctx.node("Shape", [ins[2]])
    if axis is None:                     # the flattened data, 1-d indices
        size = ctx.node("Reshape", [ctx.node("Size", [ins[2]]), ctx.int64s([1])])
        y = _scatter_add(ctx, node, "ScatterElements", size, pos, g, None, axis=0)
        ctx.node("Reshape", [y, full], outs)
        return
    _scatter_add(ctx, node, "ScatterElements", full, pos, g, outs, axis=axis % len(data))


@translates("_sequence_last_grad", onnx_ops=["Cast", "Sub", "Shape", "Gather", "Range",
                                             "Unsqueeze", "Equal", "Where"],
            notes="the gradient at the step SequenceLast read (lengths truncated toward "
                  "zero), zeros elsewhere")
def _sequence_last_grad(ctx, node, ins, outs):
    a = node.attrs
    shape = ctx.shape(node.inputs[1])
    one = ctx.const(np.int64(1), base="one")
    # the number of steps, read from data where it is the symbolic batch axis
    t = (ctx.node("Gather", [ctx.node("Shape", [ins[1]]), ctx.const(np.int64(0))], axis=0)
         if ctx.dynamic and a.axis == 0 else ctx.const(np.int64(shape[a.axis]), base="steps"))
    steps = ctx.node("Range", [ctx.const(np.int64(0), base="zero"), t, one])
    if a.use_sequence_length:
        last = ctx.node("Sub", [_int64(ctx, ins[2]), one])         # (B,)
        last = ctx.node("Unsqueeze", [last, ctx.int64s([a.axis], "axes")])
    else:
        last = ctx.node("Sub", [t, one])                             # every sequence's
    # mask[t, b] (axis 0) or mask[b, t] (axis 1): step t is sequence b's last
    steps = ctx.node("Unsqueeze", [steps, ctx.int64s([1 - a.axis], "axes")])
    mask = ctx.node("Equal", [steps, last])
    extra = list(range(2, len(shape)))
    if extra:
        mask = ctx.node("Unsqueeze", [mask, ctx.int64s(extra, "axes")])
    g = ctx.node("Unsqueeze", [ins[0], ctx.int64s([a.axis], "axes")])
    zero = ctx.const(np.zeros((), ctx.dtype((node, 0))), base="zero")
    ctx.node("Where", [mask, g, zero], outs)          # broadcast to data's shape


@translates("_slice_scatter", onnx_ops=["Reshape", "Expand", "Unsqueeze", "Concat",
                                        "ConstantOfShape", "ScatterND"],
            notes="the region's indices (static) as a ScatterND into zeros")
def _slice_scatter(ctx, node, ins, outs):
    shape = list(ctx.shape((node, 0)))
    key = _slice_key(tuple(shape), node.attrs, "_slice_scatter")
    positions = [list(range(*k.indices(d))) for k, d in zip(key, shape)]
    positions += [list(range(d)) for d in shape[len(key):]]
    zeros = _zeros(ctx, shape, ctx.dtype((node, 0)))
    ctx.node("ScatterND", [zeros, _region_grid(ctx, positions), ins[0]], outs)


@translates("_diag_scatter", onnx_ops=["ConstantOfShape", "Reshape", "Expand",
                                       "ScatterElements", "Transpose"],
            notes="the diagonal written into the flattened planes, zeros elsewhere")
def _diag_scatter(ctx, node, ins, outs):
    a = node.attrs
    shape = list(ctx.shape((node, 0)))
    nd = len(shape)
    a1, a2 = a.axis1 % nd, a.axis2 % nd
    rest = [i for i in range(nd) if i not in (a1, a2)]
    r, c, k = shape[a1], shape[a2], int(a.k)
    lead = [shape[i] for i in rest]
    flat = [i * c + i + k for i in range(max(0, -k), min(r, c - k))]   # (i, i + k)
    pos = ctx.const(np.asarray(flat, np.int64).reshape([1] * len(lead) + [len(flat)]),
                    base="diagonal")
    pos = ctx.node("Expand", [pos, ctx.int64s(lead + [len(flat)])])
    planes = ctx.node("ScatterElements", [_zeros(ctx, lead + [r * c], ctx.dtype((node, 0))),
                                          pos, ins[0]], axis=len(lead))
    planes = ctx.node("Reshape", [planes, ctx.int64s(lead + [r, c])])
    order = rest + [a1, a2]                  # the axes of `planes`, by their place in out
    ctx.node("Transpose", [planes], outs, perm=[order.index(i) for i in range(nd)])


def _pad_sources(mode, lo, n, hi):
    """The position of data each element of a padded axis was read from."""
    return np.pad(np.arange(n, dtype=np.int64), (lo, hi), mode=mode)


@translates("_pad_backward", onnx_ops=["Slice", "Shape", "Concat", "ConstantOfShape",
                                       "Expand", "ScatterElements", "Cast", "Identity"],
            opset=16,
            notes="constant: the centre; edge and reflect: each padded axis added back onto "
                  "the positions it was read from (ScatterElements add); float16 sums in "
                  "float32")
def _pad_backward(ctx, node, ins, outs):
    a = node.attrs
    g_shape = ctx.shape(node.inputs[0])
    nd = len(g_shape)
    widths = list(a.pad_width)
    lows, highs = widths[0::2], widths[1::2]
    data = [d - lo - hi for d, lo, hi in zip(g_shape, lows, highs)]
    if a.mode == "constant":
        axes = [i for i in range(nd) if lows[i] or highs[i]]
        if not axes:
            ctx.node("Identity", ins, outs)
            return
        ctx.node("Slice", [ins[0], ctx.int64s([lows[i] for i in axes], "starts"),
                           ctx.int64s([lows[i] + data[i] for i in axes], "ends"),
                           ctx.int64s(axes, "axes")], outs)
        return
    out = ctx.dtype((node, 0))
    work = np.dtype(np.float32) if out in _NARROW else out
    cur = ins[0] if work == out else ctx.cast(ins[0], work)
    axes = [i for i in reversed(range(nd)) if lows[i] or highs[i]]
    for j, ax in enumerate(axes):
        src = _pad_sources(a.mode, lows[ax], data[ax], highs[ax])
        along = [1] * nd
        along[ax] = src.size
        # shapes from the value itself, so a symbolic batch axis stays symbolic
        full = ctx.node("Shape", [cur])
        pos = ctx.node("Expand", [ctx.const(src.reshape(along), base="sources"), full])
        parts = ([ctx.node("Shape", [cur], end=ax)] if ax else []) + [
            ctx.int64s([data[ax]], "size")] + (
            [ctx.node("Shape", [cur], start=ax + 1)] if ax + 1 < nd else [])
        target = ctx.node("Concat", parts, axis=0)
        zeros = ctx.node("ConstantOfShape", [target],
                         value=ctx.onnx.numpy_helper.from_array(np.zeros(1, work)))
        last = j == len(axes) - 1 and work == out
        cur = ctx.node("ScatterElements", [zeros, pos, cur], outs if last else None,
                       axis=ax, reduction="add")
    if not axes:
        ctx.node("Identity", ins, outs)
    elif work != out:
        ctx.node("Cast", [cur], outs, to=ctx.onnx.helper.np_dtype_to_tensor_dtype(out))


# ---- NDArray indexing: the key is static, so are the flat positions it selects -------------
def _key_positions(ctx, node, shape):
    """The flat positions ``key`` selects from an array of ``shape``, in the order (and the
    shape) of ``data[key]``."""
    if ctx.dynamic:
        raise ctx.unsupported(node, "an index key with dynamic=True (its positions are "
                              "computed from the static shape)")
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(
        shape)[node.attrs.key]


@translates("_getitem", onnx_ops=["Reshape", "Gather"],
            notes="the key's flat positions (static) gathered from the flattened data")
def _getitem(ctx, node, ins, outs):
    pos = _key_positions(ctx, node, ctx.shape(node.inputs[0]))
    flat = ctx.node("Reshape", [ins[0], ctx.int64s([-1])])
    ctx.node("Gather", [flat, ctx.const(pos, base="positions")], outs, axis=0)


@translates("_getitem_scatter", onnx_ops=["Reshape", "ConstantOfShape", "ScatterElements",
                                          "Cast"], opset=16,
            notes="zeros with the data added at the key's flat positions (repeated advanced "
                  "indices accumulate); float16 sums in float32")
def _getitem_scatter(ctx, node, ins, outs):
    shape = list(ctx.shape((node, 0)))
    pos = _key_positions(ctx, node, tuple(shape)).reshape(-1)
    flat = ctx.node("Reshape", [ins[0], ctx.int64s([-1])])
    size = ctx.int64s([int(np.prod(shape, dtype=np.int64))])
    y = _scatter_add(ctx, node, "ScatterElements", size,
                     ctx.const(pos, base="positions"), flat, None, axis=0)
    ctx.node("Reshape", [y, ctx.int64s(shape)], outs)


@translates("_setitem", onnx_ops=["Reshape", "Expand", "ScatterElements"],
            notes="the value (broadcast) written at the key's flat positions; at repeated "
                  "advanced indices the last write stays (as NumPy), which ONNX leaves to the "
                  "runtime (onnxruntime writes in order)")
def _setitem(ctx, node, ins, outs):
    shape = list(ctx.shape(node.inputs[0]))
    pos = _key_positions(ctx, node, tuple(shape))
    value = ctx.node("Expand", [ins[1], ctx.int64s(pos.shape)])
    value = ctx.node("Reshape", [value, ctx.int64s([-1])])
    flat = ctx.node("Reshape", [ins[0], ctx.int64s([-1])])
    y = ctx.node("ScatterElements", [flat, ctx.const(pos.reshape(-1), base="positions"),
                                     value], axis=0)
    ctx.node("Reshape", [y, ctx.int64s(shape)], outs)


@translates("_rnn_param_concat", onnx_ops=["Concat"], notes="concat along dim")
def _rnn_param_concat(ctx, node, ins, outs):
    ctx.node("Concat", ins, outs, axis=int(node.attrs.dim))
