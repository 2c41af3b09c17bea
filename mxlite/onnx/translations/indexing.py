"""Indexing, shape and creation operators beyond shape.py's: gather_nd, scatter_nd, flip,
repeat, diag, depth_to_space, space_to_depth, slice_like, broadcast_axis, shape_array,
size_array, Crop, the Sequence* layers, zeros/ones/full/_eye/arange, the AMP casts and the
identity-like loss layers."""
import numpy as np

from ..table import translates
from .shape import _INT64_MAX, _out_shape


def _to(ctx, dtype):
    return ctx.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _int64(ctx, x):
    """Indices as int64 (a float index is truncated toward zero, as mxlite reads it)."""
    return ctx.node("Cast", [x], to=ctx.onnx.TensorProto.INT64)


def _index_last(ctx, node, x):
    """MXNet's (M, Y...) indices as ONNX's (Y..., M) int64 ones."""
    ndim = len(ctx.shape(node.inputs[1]))
    return ctx.node("Transpose", [_int64(ctx, x)], perm=list(range(1, ndim)) + [0])


@translates("gather_nd", onnx_ops=["Cast", "Transpose", "GatherND"],
            notes="indices (M, Y...) moved to ONNX's (Y..., M); negative ones count from "
                  "the end")
def _gather_nd(ctx, node, ins, outs):
    ctx.node("GatherND", [ins[0], _index_last(ctx, node, ins[1])], outs)


@translates("scatter_nd", onnx_ops=["Cast", "Transpose", "ConstantOfShape", "ScatterND"],
            notes="repeated indices keep one value, unspecified which (as MXNet)")
def _scatter_nd(ctx, node, ins, outs):
    dt = ctx.dtype(node.inputs[0])
    zeros = ctx.node("ConstantOfShape", [ctx.int64s(_out_shape(ctx, node))],
                     value=ctx.onnx.numpy_helper.from_array(np.zeros(1, dt)))
    ctx.node("ScatterND", [zeros, _index_last(ctx, node, ins[1]), ins[0]], outs)


def _reversed(ctx, x, axes, outs=None):
    """``x`` reversed along ``axes``: a Slice with step -1 from the end to before 0."""
    n = len(axes)
    return ctx.node("Slice", [x, ctx.int64s([-1] * n, "starts"),
                              ctx.int64s([-_INT64_MAX] * n, "ends"),
                              ctx.int64s(axes, "axes"), ctx.int64s([-1] * n, "steps")], outs)


@translates("flip", onnx_ops=["Slice"])
def _flip(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0]))
    axis = node.attrs.axis
    axes = sorted({a % ndim for a in (axis if isinstance(axis, (tuple, list)) else [axis])})
    if not axes:
        ctx.node("Identity", ins, outs)
        return
    _reversed(ctx, ins[0], axes, outs)


@translates("repeat", onnx_ops=["Reshape", "Unsqueeze", "Tile"],
            notes="axis None repeats the flattened data")
def _repeat(ctx, node, ins, outs):
    a = node.attrs
    x = ins[0]
    if a.axis is None:
        x, axis = ctx.node("Reshape", [x, ctx.int64s([-1])]), 0
        ndim = 1
    else:
        ndim = len(ctx.shape(node.inputs[0]))
        axis = a.axis % ndim
    # each element followed by its copies: a new axis after `axis`, tiled, then merged
    x = ctx.node("Unsqueeze", [x, ctx.int64s([axis + 1], "axes")])
    reps = [1] * (ndim + 1)
    reps[axis + 1] = int(a.repeats)
    x = ctx.node("Tile", [x, ctx.int64s(reps, "repeats")])
    ctx.node("Reshape", [x, ctx.int64s(_out_shape(ctx, node))], outs)


@translates("diag", onnx_ops=["Pad", "Unsqueeze", "ConstantOfShape", "EyeLike", "Cast", "Where",
                              "Transpose", "Reshape", "Gather"],
            notes="1-D: a Where over EyeLike's diagonal k; n-D: a Gather of the flattened "
                  "planes")
def _diag(ctx, node, ins, outs):
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    dt = ctx.dtype(node.inputs[0])
    k = int(a.k)
    if len(shape) == 1:
        m = shape[0] + abs(k)
        # row i of diagonal k holds x[i] (k >= 0) or x[i - |k|] (k < 0): x padded to m
        pads = [0, abs(k)] if k >= 0 else [abs(k), 0]
        col = ctx.node("Pad", [ins[0], ctx.int64s(pads, "pads")])
        col = ctx.node("Unsqueeze", [col, ctx.int64s([1], "axes")])
        base = ctx.node("ConstantOfShape", [ctx.int64s([m, m])],
                        value=ctx.onnx.numpy_helper.from_array(np.zeros(1, np.float32)))
        # (onnxruntime's EyeLike makes no bool: a float eye cast to bool)
        eye = ctx.node("Cast", [ctx.node("EyeLike", [base], k=k)], to=ctx.onnx.TensorProto.BOOL)
        ctx.node("Where", [eye, col, ctx.const(np.zeros((), dt), base="zero")], outs)
        return
    ndim = len(shape)
    a1, a2 = a.axis1 % ndim, a.axis2 % ndim
    rest = [i for i in range(ndim) if i not in (a1, a2)]
    x = ctx.node("Transpose", [ins[0]], perm=rest + [a1, a2])
    r, c = shape[a1], shape[a2]
    x = ctx.node("Reshape", [x, ctx.int64s([shape[i] for i in rest] + [r * c])])
    rows = range(max(0, -k), min(r, c - k))          # row i, column i + k
    flat = [i * c + i + k for i in rows]
    ctx.node("Gather", [x, ctx.int64s(flat, "diagonal")], outs, axis=len(rest))


@translates("depth_to_space", onnx_ops=["DepthToSpace"], notes="MXNet's order is DCR")
def _depth_to_space(ctx, node, ins, outs):
    ctx.node("DepthToSpace", ins, outs, blocksize=int(node.attrs.block_size), mode="DCR")


@translates("space_to_depth", onnx_ops=["SpaceToDepth"])
def _space_to_depth(ctx, node, ins, outs):
    ctx.node("SpaceToDepth", ins, outs, blocksize=int(node.attrs.block_size))


def _crop_to(ctx, x, axes, starts, sizes, outs):
    ends = [s + n for s, n in zip(starts, sizes)]
    return ctx.node("Slice", [x, ctx.int64s(starts, "starts"), ctx.int64s(ends, "ends"),
                              ctx.int64s(axes, "axes")], outs)


@translates("slice_like", onnx_ops=["Slice"],
            notes="shape_like's static shape (its values are never read)")
def _slice_like(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    like = ctx.shape(node.inputs[1])
    axes = node.attrs.axes
    axes = sorted({v % len(shape) for v in axes}) if axes else list(range(len(shape)))
    _crop_to(ctx, ins[0], axes, [0] * len(axes), [like[i] for i in axes], outs)


@translates("Crop", onnx_ops=["Slice"],
            notes="crop_like's static shape (its values are never read)")
def _crop(ctx, node, ins, outs):
    a = node.attrs
    _, _, h, w = ctx.shape(node.inputs[0])
    oh, ow = ctx.shape((node, 0))[2:]
    y, x = ((h - oh) // 2, (w - ow) // 2) if a.center_crop else tuple(a.offset)
    _crop_to(ctx, ins[0], [2, 3], [y, x], [oh, ow], outs)


@translates("broadcast_axis", onnx_ops=["Expand"])
def _broadcast_axis(ctx, node, ins, outs):
    ctx.node("Expand", [ins[0], ctx.int64s(_out_shape(ctx, node))], outs)


@translates("shape_array", onnx_ops=["Shape"])
def _shape_array(ctx, node, ins, outs):
    ctx.node("Shape", ins, outs)


@translates("size_array", onnx_ops=["Size", "Reshape"])
def _size_array(ctx, node, ins, outs):
    ctx.node("Reshape", [ctx.node("Size", ins), ctx.int64s([1])], outs)


# ---- sequences: time on axis 0 (T, B, ...) or 1 (B, T, ...) ----------------------------------
def _steps_mask(ctx, node, lengths):
    """Bool (T, B) or (B, T), broadcastable to data: step t < the (truncated) length."""
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    t = shape[a.axis]
    steps = ctx.int64s(range(t), "steps")
    steps = ctx.node("Unsqueeze", [steps, ctx.int64s([1 - a.axis], "axes")])  # (T,1)/(1,T)
    lens = ctx.node("Unsqueeze", [_int64(ctx, lengths), ctx.int64s([a.axis], "axes")])
    mask = ctx.node("Less", [steps, lens])
    extra = list(range(2, len(shape)))
    return ctx.node("Unsqueeze", [mask, ctx.int64s(extra, "axes")]) if extra else mask


@translates("SequenceMask", onnx_ops=["Cast", "Unsqueeze", "Less", "Where"],
            notes="lengths truncated toward zero")
def _sequence_mask(ctx, node, ins, outs):
    a = node.attrs
    if not a.use_sequence_length:
        ctx.node("Identity", ins[:1], outs)
        return
    value = ctx.const(np.asarray(a.value, ctx.dtype(node.inputs[0])), base="value")
    ctx.node("Where", [_steps_mask(ctx, node, ins[1]), ins[0], value], outs)


@translates("SequenceLast", onnx_ops=["Gather", "Cast", "Sub", "Transpose", "Unsqueeze",
                                      "GatherND"],
            notes="lengths truncated toward zero")
def _sequence_last(ctx, node, ins, outs):
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    if not a.use_sequence_length:
        last = ctx.const(np.int64(shape[a.axis] - 1), base="last")
        ctx.node("Gather", [ins[0], last], outs, axis=a.axis)
        return
    x = ins[0]
    if a.axis == 0:                                  # batch first, for GatherND's batch_dims
        perm = [1, 0] + list(range(2, len(shape)))
        x = ctx.node("Transpose", [x], perm=perm)
    idx = ctx.node("Sub", [_int64(ctx, ins[1]), ctx.const(np.int64(1), base="one")])
    idx = ctx.node("Unsqueeze", [idx, ctx.int64s([1], "axes")])       # (B, 1)
    ctx.node("GatherND", [x, idx], outs, batch_dims=1)


@translates("SequenceReverse", onnx_ops=["Slice", "Cast", "ReverseSequence"],
            notes="lengths truncated toward zero")
def _sequence_reverse(ctx, node, ins, outs):
    a = node.attrs
    if not a.use_sequence_length:
        _reversed(ctx, ins[0], [a.axis], outs)
        return
    ctx.node("ReverseSequence", [ins[0], _int64(ctx, ins[1])], outs, time_axis=a.axis,
             batch_axis=1 - a.axis)


# ---- creation ops: no input, the attributes make the value -----------------------------------
def _filled(ctx, node, value, outs):
    dt = ctx.dtype((node, 0))
    ctx.node("ConstantOfShape", [ctx.int64s(_out_shape(ctx, node))], outs,
             value=ctx.onnx.numpy_helper.from_array(np.asarray([value], dt)))


@translates("zeros", onnx_ops=["ConstantOfShape"])
def _zeros(ctx, node, ins, outs):
    _filled(ctx, node, 0, outs)


@translates("ones", onnx_ops=["ConstantOfShape"])
def _ones(ctx, node, ins, outs):
    _filled(ctx, node, 1, outs)


@translates("full", onnx_ops=["ConstantOfShape"])
def _full(ctx, node, ins, outs):
    _filled(ctx, node, node.attrs.val, outs)


@translates("_eye", onnx_ops=["ConstantOfShape", "EyeLike"])
def _eye(ctx, node, ins, outs):
    base = ctx.node("ConstantOfShape", [ctx.int64s(_out_shape(ctx, node))],
                    value=ctx.onnx.numpy_helper.from_array(np.zeros(1, np.float32)))
    ctx.node("EyeLike", [base], outs, k=int(node.attrs.k), dtype=_to(ctx, ctx.dtype((node, 0))))


@translates("arange", onnx_ops=["Range", "Cast", "Mul", "Add", "Unsqueeze", "Tile",
                                "Reshape"],
            notes="start + k * step in float64 (int64 for integers), then the dtype")
def _arange(ctx, node, ins, outs):
    a = node.attrs
    if a.infer_range:
        raise ctx.unsupported(node, "infer_range=True")
    out = ctx.dtype((node, 0))
    count = _out_shape(ctx, node)[0] // max(int(a.repeat), 1)
    start = 0 if a.stop is None else a.start          # arange(n) counts from 0
    wide = np.dtype(np.int64) if out.kind in "iu" else np.dtype(np.float64)
    k = ctx.node("Range", [ctx.const(np.int64(0)), ctx.const(np.int64(count)),
                           ctx.const(np.int64(1))])
    k = ctx.cast(k, wide) if wide != np.int64 else k
    v = ctx.node("Add", [ctx.node("Mul", [k, ctx.const(np.asarray(a.step, wide))]),
                         ctx.const(np.asarray(start, wide))])
    if a.repeat > 1:
        v = ctx.node("Unsqueeze", [v, ctx.int64s([1], "axes")])
        v = ctx.node("Tile", [v, ctx.int64s([1, int(a.repeat)], "repeats")])
        v = ctx.node("Reshape", [v, ctx.int64s([-1])])
    ctx.node("Cast", [v], outs, to=_to(ctx, out))


# ---- casts and identity-like layers ----------------------------------------------------------
@translates("amp_cast", "amp_multicast", onnx_ops=["Cast", "Identity"],
            notes="each output cast to the dtype mxlite infers for it")
def _amp_casts(ctx, node, ins, outs):
    for i, (x, e, o) in enumerate(zip(ins, node.inputs, outs)):
        if ctx.dtype(e) == ctx.dtype((node, i)):
            ctx.node("Identity", [x], [o])
        else:
            ctx.node("Cast", [x], [o], to=_to(ctx, ctx.dtype((node, i))))


@translates("MakeLoss", onnx_ops=["Identity"], notes="the forward pass: the identity")
def _make_loss(ctx, node, ins, outs):
    ctx.node("Identity", ins[:1], outs[:1])


@translates("IdentityAttachKLSparseReg", onnx_ops=["Identity"], unread=(1,),
            notes="inference: the identity; the moving average is not an input")
def _identity_kl(ctx, node, ins, outs):
    ctx.node("Identity", ins[:1], outs[:1])


# ---- more indexing: positions, gathers along an axis, splits, (un)ravelling ------------------
def _positions(ctx, count):
    """int64 0, 1, ..., count - 1."""
    return ctx.node("Range", [ctx.const(np.int64(0)), ctx.const(np.int64(count)),
                              ctx.const(np.int64(1))])


@translates("_contrib_arange_like", onnx_ops=["Range", "Div", "Cast", "Mul", "Add",
                                              "Reshape"],
            notes="start + (i // repeat) * step in float64, then data's dtype")
def _arange_like(ctx, node, ins, outs):
    a = node.attrs
    shape = _out_shape(ctx, node)
    i = _positions(ctx, int(np.prod(shape, dtype=np.int64)))
    if a.repeat > 1:
        i = ctx.node("Div", [i, ctx.const(np.int64(a.repeat))])   # non-negative: floor
    v = ctx.node("Add", [ctx.node("Mul", [ctx.cast(i, np.float64),
                                          ctx.const(np.float64(a.step))]),
                         ctx.const(np.float64(a.start))])
    v = ctx.node("Cast", [v], to=_to(ctx, ctx.dtype((node, 0))))
    ctx.node("Reshape", [v, ctx.int64s(shape)], outs)


@translates("_contrib_index_array", onnx_ops=["Range", "Reshape", "Expand", "Unsqueeze",
                                              "Concat"])
def _index_array(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    ndim = len(shape)
    axes = node.attrs.axes
    axes = range(ndim) if axes is None else [v % ndim for v in axes]
    planes = []
    for ax in axes:
        along = [1] * ndim
        along[ax] = shape[ax]
        p = ctx.node("Reshape", [_positions(ctx, shape[ax]), ctx.int64s(along)])
        p = ctx.node("Expand", [p, ctx.int64s(shape)])
        planes.append(ctx.node("Unsqueeze", [p, ctx.int64s([ndim], "axes")]))
    ctx.node("Concat", planes, outs, axis=ndim)


@translates("_take_along_axis", onnx_ops=["Cast", "Reshape", "GatherElements"],
            notes="indices truncated toward zero; axis None gathers from the flattened data")
def _take_along_axis(ctx, node, ins, outs):
    axis = node.attrs.axis
    x = ins[0]
    if axis is None:
        x, axis = ctx.node("Reshape", [x, ctx.int64s([-1])]), 0
    ctx.node("GatherElements", [x, _int64(ctx, ins[1])], outs,
             axis=axis % len(ctx.shape(node.inputs[1])))


@translates("batch_take", onnx_ops=["Reshape", "Cast", "Clip", "GatherElements"],
            notes="indices clipped to the row")
def _batch_take(ctx, node, ins, outs):
    m = ctx.shape(node.inputs[0])[-1]
    rows = ctx.node("Reshape", [ins[0], ctx.int64s([-1, m])])
    idx = ctx.node("Reshape", [_int64(ctx, ins[1]), ctx.int64s([-1, 1])])
    idx = ctx.node("Clip", [idx, ctx.const(np.int64(0)), ctx.const(np.int64(m - 1))])
    y = ctx.node("GatherElements", [rows, idx], axis=1)
    ctx.node("Reshape", [y, ctx.int64s(_out_shape(ctx, node))], outs)


@translates("_linspace", onnx_ops=["Range", "Cast", "Mul", "Add", "Equal", "Where"],
            notes="start + i * step in float64 (the last value exactly stop with endpoint), "
                  "then the dtype")
def _linspace(ctx, node, ins, outs):
    a = node.attrs
    num = int(a.num)
    i = ctx.cast(_positions(ctx, num), np.float64)
    div = (num - 1) if a.endpoint else num
    step = (a.stop - a.start) / div if div > 0 else 0.0
    v = ctx.node("Add", [ctx.node("Mul", [i, ctx.const(np.float64(step))]),
                         ctx.const(np.float64(a.start))])
    if a.endpoint and num > 1:
        last = ctx.node("Equal", [i, ctx.const(np.float64(num - 1))])
        v = ctx.node("Where", [last, ctx.const(np.float64(a.stop)), v])
    ctx.node("Cast", [v], outs, to=_to(ctx, ctx.dtype((node, 0))))


@translates("_split_v2", onnx_ops=["Split", "Squeeze"],
            notes="sections or split points; squeeze_axis drops the axis of size-1 parts")
def _split_v2(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    axis = a.axis % ndim
    # a squeezed part had size 1 along the axis
    sizes = [1 if a.squeeze_axis else ctx.shape((node, i))[axis] for i in range(len(outs))]
    parts = [ctx.fresh("part") for _ in outs] if a.squeeze_axis else outs
    ctx.node("Split", [ins[0], ctx.int64s(sizes, "split")], parts, axis=axis)
    if a.squeeze_axis:
        for p, o in zip(parts, outs):
            ctx.node("Squeeze", [p, ctx.int64s([axis], "axes")], [o])


def _strides(shape):
    return [int(np.prod(shape[m + 1:], dtype=np.int64)) for m in range(len(shape))]


@translates("_ravel_multi_index", onnx_ops=["Cast", "Mul", "ReduceSum"], opset=18,
            notes="indices truncated toward zero")
def _ravel_multi_index(ctx, node, ins, outs):
    shape = list(node.attrs.shape)
    strides = ctx.const(np.asarray(_strides(shape), np.int64).reshape(-1, 1), base="strides")
    flat = ctx.node("ReduceSum", [ctx.node("Mul", [_int64(ctx, ins[0]), strides]),
                                  ctx.int64s([0], "axes")], keepdims=0)
    ctx.node("Cast", [flat], outs, to=_to(ctx, ctx.dtype((node, 0))))


@translates("_unravel_index", onnx_ops=["Cast", "Unsqueeze", "Div", "Mod"],
            notes="indices truncated toward zero")
def _unravel_index(ctx, node, ins, outs):
    shape = list(node.attrs.shape)
    ndim = len(ctx.shape(node.inputs[0]))
    col = [len(shape)] + [1] * ndim
    strides = ctx.const(np.asarray(_strides(shape), np.int64).reshape(col), base="strides")
    sizes = ctx.const(np.asarray(shape, np.int64).reshape(col), base="sizes")
    flat = ctx.node("Unsqueeze", [_int64(ctx, ins[0]), ctx.int64s([0], "axes")])
    coords = ctx.node("Mod", [ctx.node("Div", [flat, strides]), sizes], fmod=0)
    ctx.node("Cast", [coords], outs, to=_to(ctx, ctx.dtype((node, 0))))


@translates("fill_element_0index", onnx_ops=["Cast", "Unsqueeze", "ScatterElements"],
            notes="column indices truncated toward zero")
def _fill_element_0index(ctx, node, ins, outs):
    cols = ctx.node("Unsqueeze", [_int64(ctx, ins[2]), ctx.int64s([1], "axes")])
    vals = ctx.node("Unsqueeze", [ins[1], ctx.int64s([1], "axes")])
    ctx.node("ScatterElements", [ins[0], cols, vals], outs, axis=1)


@translates("_onehot_encode", onnx_ops=["Cast", "Unsqueeze", "Range", "Equal"],
            notes="rhs gives the shape and dtype (its values are never read)")
def _onehot_encode(ctx, node, ins, outs):
    depth = ctx.shape(node.inputs[1])[1]
    idx = ctx.node("Unsqueeze", [_int64(ctx, ins[0]), ctx.int64s([1], "axes")])
    hot = ctx.node("Equal", [idx, _positions(ctx, depth)])      # out of range: no match
    ctx.node("Cast", [hot], outs, to=_to(ctx, ctx.dtype((node, 0))))


@translates("_contrib_gradientmultiplier", "_copyto", onnx_ops=["Identity"],
            notes="the forward pass: the identity")
def _forward_identity(ctx, node, ins, outs):
    ctx.node("Identity", ins[:1], outs[:1])


@translates("_identity_with_attr_like_rhs", onnx_ops=["Identity"], unread=(1,),
            notes="lhs; rhs (never read) is not an input")
def _identity_like_rhs(ctx, node, ins, outs):
    ctx.node("Identity", ins[:1], outs)


@translates("cast_storage", onnx_ops=["Identity"], notes="dense storage (mxlite's only one)")
def _cast_storage(ctx, node, ins, outs):
    if node.attrs.stype != "default":
        raise ctx.unsupported(node, f"stype={node.attrs.stype!r}")
    ctx.node("Identity", ins, outs)


@translates("_contrib_index_copy", onnx_ops=["Cast", "Unsqueeze", "ScatterND"],
            notes="positions truncated toward zero")
def _index_copy(ctx, node, ins, outs):
    rows = ctx.node("Unsqueeze", [_int64(ctx, ins[1]), ctx.int64s([1], "axes")])
    ctx.node("ScatterND", [ins[0], rows, ins[2]], outs)


@translates("_scatter_set_nd", onnx_ops=["Cast", "Transpose", "ScatterND"])
def _scatter_set_nd(ctx, node, ins, outs):
    idx = ctx.node("Transpose", [_int64(ctx, ins[2])],
                   perm=list(range(1, len(ctx.shape(node.inputs[2])))) + [0])
    ctx.node("ScatterND", [ins[0], idx, ins[1]], outs)


@translates("_contrib_count_sketch", onnx_ops=["Cast", "Reshape", "Expand", "Mul",
                                               "ConstantOfShape", "ScatterElements"],
            notes="a ScatterElements with reduction add")
def _count_sketch(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    dt = ctx.dtype((node, 0))
    flat = ctx.int64s([-1])
    h = ctx.node("Expand", [ctx.node("Reshape", [_int64(ctx, ins[1]), flat]),
                            ctx.int64s(shape)])
    s = ctx.node("Reshape", [ins[2], flat])
    s = s if ctx.dtype(node.inputs[2]) == dt else ctx.cast(s, dt)
    x = ins[0] if ctx.dtype(node.inputs[0]) == dt else ctx.cast(ins[0], dt)
    zeros = ctx.node("ConstantOfShape", [ctx.int64s(_out_shape(ctx, node))],
                     value=ctx.onnx.numpy_helper.from_array(np.zeros(1, dt)))
    ctx.node("ScatterElements", [zeros, h, ctx.node("Mul", [x, s])], outs,
             axis=len(shape) - 1, reduction="add")


def _dft_matrix(d, inverse):
    """The real matrix of the DFT of a length-d axis: (d, 2d) from real data to interleaved
    (re, im) frequencies, or (2d, d) from them back to the real part (unnormalised)."""
    j = np.arange(d)
    angle = 2 * np.pi * np.outer(j, j) / d
    w = np.empty((d, 2 * d))
    w[:, 0::2], w[:, 1::2] = np.cos(angle), -np.sin(angle)
    return w.T.copy() if inverse else w


def _dft(inverse):
    def translate(ctx, node, ins, outs):
        d = ctx.shape((node, 0))[-1]               # fft: 2 d outputs, ifft: d
        d = d if inverse else d // 2
        x = ctx.cast(ins[0], np.float64)
        w = ctx.const(_dft_matrix(d, inverse), base="dft")
        ctx.node("Cast", [ctx.node("MatMul", [x, w])], outs,
                 to=_to(ctx, ctx.dtype((node, 0))))
    return translate


translates("_contrib_fft", onnx_ops=["Cast", "MatMul"],
           notes="a float64 matrix product (as mxlite), interleaved (re, im) output")(
    _dft(False))
translates("_contrib_ifft", onnx_ops=["Cast", "MatMul"],
           notes="a float64 matrix product (as mxlite): the unnormalised real part")(
    _dft(True))


# ---- slice assignment: the region [begin:end:step] as static positions per axis ------------
def _region(node, shape):
    """The positions the region covers on every axis (Python's slice rules, which are
    ``slice``'s; axes past ``begin`` whole)."""
    a = node.attrs
    begin, end, step = list(a.begin), list(a.end), list(a.step or ())
    out = []
    for i, n in enumerate(shape):
        if i < len(begin):
            s = step[i] if i < len(step) and step[i] is not None else 1
            out.append(list(range(*slice(begin[i], end[i], s).indices(n))))
        else:
            out.append(list(range(n)))
    return out


def _region_grid(ctx, positions):
    """int64 (r0, ..., rk, ndim): the index of every element of the region (ScatterND's
    indices), from the per-axis positions."""
    ndim = len(positions)
    sizes = [len(p) for p in positions]
    planes = []
    for ax, pos in enumerate(positions):
        along = [1] * ndim
        along[ax] = len(pos)
        p = ctx.node("Reshape", [ctx.int64s(pos, "positions"), ctx.int64s(along)])
        p = ctx.node("Expand", [p, ctx.int64s(sizes)])
        planes.append(ctx.node("Unsqueeze", [p, ctx.int64s([ndim], "axes")]))
    return ctx.node("Concat", planes, axis=ndim)


@translates("_slice_assign", onnx_ops=["Reshape", "Expand", "Unsqueeze", "Concat",
                                       "ScatterND"],
            notes="a new array (mxlite without out=); the region's indices as a ScatterND")
def _slice_assign(ctx, node, ins, outs):
    positions = _region(node, ctx.shape(node.inputs[0]))
    ctx.node("ScatterND", [ins[0], _region_grid(ctx, positions), ins[1]], outs)


@translates("_slice_assign_scalar", onnx_ops=["Reshape", "Expand", "Unsqueeze", "Concat",
                                              "ConstantOfShape", "ScatterND"],
            notes="a new array (mxlite without out=)")
def _slice_assign_scalar(ctx, node, ins, outs):
    positions = _region(node, ctx.shape(node.inputs[0]))
    dt = ctx.dtype(node.inputs[0])
    fill = ctx.node("ConstantOfShape", [ctx.int64s([len(p) for p in positions])],
                    value=ctx.onnx.numpy_helper.from_array(
                        np.asarray([node.attrs.scalar]).astype(dt)))
    ctx.node("ScatterND", [ins[0], _region_grid(ctx, positions), fill], outs)
