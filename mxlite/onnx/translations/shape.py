"""Shape and indexing operators, and the reductions."""
import numpy as np

from ..table import translates

_INT64_MAX = np.iinfo(np.int64).max


def _out_shape(ctx, node, i=0):
    return list(ctx.shape((node, i)))


def _codes(node):
    """MXNet's reshape codes of a ``reshape`` node (``shape``, or the old ``target_shape``)."""
    a = node.attrs
    codes = a.shape if a.shape is not None else a.target_shape
    return list(codes or ())


def _dim_expressions(codes, ndim):
    """Each output dimension of MXNet's reshape codes as an expression of the input's:
    ('const', n), ('dim', i), ('prod', i) (dims i and i + 1), ('div', i, n) (dim i / n),
    ('infer',). None when the codes are not understood."""
    out, i, k = [], 0, 0
    while k < len(codes):
        c = codes[k]
        if c == 0:
            out.append(("dim", i))
            i += 1
        elif c == -1:
            out.append(("infer",))
            i += 1
        elif c == -2:
            out.extend(("dim", j) for j in range(i, ndim))
            i = ndim
        elif c == -3:
            out.append(("prod", i))
            i += 2
        elif c == -4:
            a, b = codes[k + 1], codes[k + 2]
            k += 2
            if a == -1:
                out += [("div", i, b), ("const", b)]
            elif b == -1:
                out += [("const", a), ("div", i, a)]
            else:
                out += [("const", a), ("const", b)]
            i += 1
        elif c > 0:
            out.append(("const", c))
            i += 1
        else:
            return None
        k += 1
    return out


def _dynamic_target(ctx, node, x):
    """The Reshape target: the static output shape, or with a symbolic batch axis, the
    shape computed from the input's at run time by MXNet's codes."""
    target = _out_shape(ctx, node)
    if not ctx.dynamic:
        return ctx.int64s(target)
    in_shape = ctx.shape(node.inputs[0])
    exprs = None if node.op.name != "reshape" or node.attrs.reverse else \
        _dim_expressions(_codes(node), len(in_shape))
    if exprs is None or len(exprs) != len(target):
        if target and in_shape and target[0] == in_shape[0]:
            return ctx.int64s([0] + target[1:])       # the batch axis copied, the rest static
        raise ctx.unsupported(node, "this reshape of the batch axis with dynamic=True")
    shape = ctx.node("Shape", [x])

    def dim(j):
        return ctx.node("Slice", [shape, ctx.int64s([j], "start"), ctx.int64s([j + 1], "end")])
    parts = []
    for e in exprs:
        if e[0] == "const":
            parts.append(ctx.int64s([e[1]], "dim"))
        elif e[0] == "dim":
            parts.append(dim(e[1]))
        elif e[0] == "prod":
            parts.append(ctx.node("Mul", [dim(e[1]), dim(e[1] + 1)]))
        elif e[0] == "div":
            parts.append(ctx.node("Div", [dim(e[1]), ctx.int64s([e[2]], "dim")]))
        else:
            parts.append(ctx.int64s([-1], "dim"))
    return ctx.node("Concat", parts, axis=0)


@translates("reshape", "_npx_reshape", "reshape_like",
            onnx_ops=["Reshape", "Shape", "Slice", "Mul", "Div", "Concat"],
            notes="MXNet's codes (0, -1, -2, -3, -4; npx.reshape's -1 to -6) are resolved to "
                  "the shape mxlite infers; with dynamic=True reshape's are computed from the "
                  "input's shape")
def _reshape(ctx, node, ins, outs):
    ctx.node("Reshape", [ins[0], _dynamic_target(ctx, node, ins[0])], outs)


@translates("flatten", onnx_ops=["Flatten"])
def _flatten(ctx, node, ins, outs):
    ctx.node("Flatten", ins, outs, axis=1)


@translates("transpose", onnx_ops=["Transpose"])
def _transpose(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0]))
    axes = node.attrs.axes
    perm = [a % ndim for a in axes] if axes else list(reversed(range(ndim)))
    ctx.node("Transpose", ins, outs, perm=perm)


@translates("swapaxes", onnx_ops=["Transpose"])
def _swapaxes(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0]))
    perm = list(range(ndim))
    d1, d2 = node.attrs.dim1 % ndim, node.attrs.dim2 % ndim
    perm[d1], perm[d2] = perm[d2], perm[d1]
    ctx.node("Transpose", ins, outs, perm=perm)


@translates("expand_dims", onnx_ops=["Unsqueeze"])
def _expand_dims(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0])) + 1
    ctx.node("Unsqueeze", [ins[0], ctx.int64s([node.attrs.axis % ndim], "axes")], outs)


@translates("squeeze", onnx_ops=["Squeeze"])
def _squeeze(ctx, node, ins, outs):
    shape = ctx.shape(node.inputs[0])
    axis = node.attrs.axis
    if axis is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    else:
        axes = [a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    if not axes:
        ctx.node("Identity", ins, outs)
        return
    ctx.node("Squeeze", [ins[0], ctx.int64s(axes, "axes")], outs)


@translates("concat", onnx_ops=["Concat"])
def _concat(ctx, node, ins, outs):
    ctx.node("Concat", ins, outs, axis=int(node.attrs.dim))


@translates("stack", onnx_ops=["Unsqueeze", "Concat"])
def _stack(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0])) + 1
    axis = node.attrs.axis % ndim
    axes = ctx.int64s([axis], "axes")
    ctx.node("Concat", [ctx.node("Unsqueeze", [x, axes]) for x in ins], outs, axis=axis)


@translates("split", onnx_ops=["Split", "Squeeze"])
def _split(ctx, node, ins, outs):
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    axis = a.axis % len(shape)
    n = a.num_outputs
    sizes = ctx.int64s([shape[axis] // n] * n, "split")
    if not a.squeeze_axis:
        ctx.node("Split", [ins[0], sizes], outs, axis=axis)
        return
    parts = [ctx.fresh("part") for _ in range(n)]
    ctx.node("Split", [ins[0], sizes], parts, axis=axis)
    axes = ctx.int64s([axis], "axes")
    for p, o in zip(parts, outs):
        ctx.node("Squeeze", [p, axes], [o])


def _slice(ctx, ins, outs, starts, ends, axes, steps):
    ctx.node("Slice", [ins[0], ctx.int64s(starts, "starts"), ctx.int64s(ends, "ends"),
                       ctx.int64s(axes, "axes"), ctx.int64s(steps, "steps")], outs)


@translates("slice", onnx_ops=["Slice"], notes="None begin/end/step: the whole axis")
def _slice_op(ctx, node, ins, outs):
    a = node.attrs
    steps = list(a.step or ()) + [None] * (len(a.begin) - len(a.step or ()))
    starts, ends, axes, stride = [], [], [], []
    for i, (b, e, s) in enumerate(zip(a.begin, a.end, steps)):
        s = 1 if s is None else int(s)
        starts.append((0 if s > 0 else -1) if b is None else int(b))
        ends.append((_INT64_MAX if s > 0 else -_INT64_MAX) if e is None else int(e))
        axes.append(i)
        stride.append(s)
    _slice(ctx, ins, outs, starts, ends, axes, stride)


@translates("slice_axis", onnx_ops=["Slice"])
def _slice_axis(ctx, node, ins, outs):
    a = node.attrs
    end = _INT64_MAX if a.end is None else int(a.end)
    _slice(ctx, ins, outs, [int(a.begin)], [end], [int(a.axis)], [1])


@translates("zeros_like", "ones_like", onnx_ops=["Shape", "ConstantOfShape"])
def _filled_like(ctx, node, ins, outs):
    value = np.array([0 if node.op.name == "zeros_like" else 1], ctx.dtype((node, 0)))
    ctx.node("ConstantOfShape", [ctx.node("Shape", ins)], outs,
             value=ctx.onnx.numpy_helper.from_array(value))


@translates("tile", onnx_ops=["Tile"])
def _tile(ctx, node, ins, outs):
    ndim = len(ctx.shape(node.inputs[0]))
    reps = list(node.attrs.reps)
    if len(reps) < ndim:
        reps = [1] * (ndim - len(reps)) + reps
    elif len(reps) > ndim:
        x = ctx.node("Reshape", [ins[0], ctx.int64s([1] * (len(reps) - ndim)
                                                     + list(ctx.shape(node.inputs[0])))])
        ctx.node("Tile", [x, ctx.int64s(reps, "reps")], outs)
        return
    ctx.node("Tile", [ins[0], ctx.int64s(reps, "reps")], outs)


@translates("broadcast_to", "broadcast_like", onnx_ops=["Expand"])
def _broadcast_to(ctx, node, ins, outs):
    ctx.node("Expand", [ins[0], ctx.int64s(_out_shape(ctx, node))], outs)


# reductions: MXNet's axis (None: all), keepdims and exclude (reduce the other axes)
_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd"}


def _reduced_axes(node, ndim):
    axis = node.attrs.axis
    if axis is None or axis == ():
        axes = list(range(ndim))
    else:
        axes = sorted({a % ndim for a in (axis if isinstance(axis, (tuple, list)) else [axis])})
    if node.attrs.exclude:
        axes = [i for i in range(ndim) if i not in axes]
    return axes


def _reduce(onnx_op):
    def translate(ctx, node, ins, outs):
        ndim = len(ctx.shape(node.inputs[0]))
        axes = _reduced_axes(node, ndim)
        keep = bool(node.attrs.keepdims)
        if not axes:
            ctx.node("Identity", ins, outs)
            return
        y = ctx.node(onnx_op, [ins[0], ctx.int64s(axes, "axes")], keepdims=1 if keep else 0)
        # MXNet keeps a reduction to a scalar 1-D: shape (1,)
        target = _out_shape(ctx, node)
        ctx.node("Reshape", [y, ctx.int64s(target)], outs)
    return translate


for _name, _op in _REDUCE.items():
    translates(_name, onnx_ops=[_op, "Reshape"], opset=18)(_reduce(_op))


def _arg_reduce(onnx_op):
    def translate(ctx, node, ins, outs):
        shape = ctx.shape(node.inputs[0])
        axis = node.attrs.axis
        x = ins[0]
        if axis is None:
            x = ctx.node("Reshape", [x, ctx.int64s([-1])])
            axis = 0
        i = ctx.node(onnx_op, [x], axis=int(axis) % max(len(shape), 1),
                     keepdims=1 if node.attrs.keepdims else 0)
        y = ctx.node("Cast", [i], to=ctx.onnx.helper.np_dtype_to_tensor_dtype(
            ctx.dtype((node, 0))))
        ctx.node("Reshape", [y, ctx.int64s(_out_shape(ctx, node))], outs)
    return translate


translates("argmax", onnx_ops=["ArgMax", "Cast"], notes="indices as MXNet's float32")(
    _arg_reduce("ArgMax"))
translates("argmin", onnx_ops=["ArgMin", "Cast"], notes="indices as MXNet's float32")(
    _arg_reduce("ArgMin"))


@translates("take", onnx_ops=["Cast", "Clip", "Mod", "Gather"],
            notes="mode 'clip' clips the indices, 'wrap' takes them modulo the axis")
def _take(ctx, node, ins, outs):
    a = node.attrs
    shape = ctx.shape(node.inputs[0])
    axis = a.axis % len(shape)
    idx = ctx.node("Cast", [ins[1]], to=ctx.onnx.TensorProto.INT64)
    n = shape[axis]
    if a.mode == "clip":
        idx = ctx.node("Clip", [idx, ctx.const(np.int64(0), base="first"),
                                ctx.const(np.int64(n - 1), base="last")])
    elif a.mode == "wrap":
        idx = ctx.node("Mod", [idx, ctx.int64s([n], "n")], fmod=0)
    ctx.node("Gather", [ins[0], idx], outs, axis=axis)


@translates("Pad", onnx_ops=["Pad"], notes="constant, edge and reflect modes")
def _pad(ctx, node, ins, outs):
    a = node.attrs
    widths = list(a.pad_width)
    begins, ends = widths[0::2], widths[1::2]
    value = ctx.const(np.asarray(a.constant_value, ctx.dtype(node.inputs[0])), base="value")
    ctx.node("Pad", [ins[0], ctx.int64s(begins + ends, "pads"), value], outs, mode=a.mode)


@translates("one_hot", onnx_ops=["Cast", "Unsqueeze", "Equal", "Where"],
            notes="a comparison with 0 .. depth-1: an index outside them gives off_value in "
                  "every position, as mxlite (ONNX's OneHot counts a negative one from the end)")
def _one_hot(ctx, node, ins, outs):
    a = node.attrs
    dt = ctx.dtype((node, 0))
    idx = ctx.node("Cast", [ins[0]], to=ctx.onnx.TensorProto.INT64)
    hit = ctx.node("Equal", [ctx.node("Unsqueeze", [idx, ctx.int64s([-1], "axes")]),
                             ctx.const(np.arange(a.depth, dtype=np.int64), base="classes")])
    ctx.node("Where", [hit, ctx.const(np.asarray(a.on_value, dt), base="on"),
                       ctx.const(np.asarray(a.off_value, dt), base="off")], outs)
