"""Shape manipulation: operators that move data without arithmetic.

Every kernel here follows one pattern: build a *view* of the input (reshape, basic
slicing, transpose, ``broadcast_to``, ``as_strided`` -- metadata only, O(1)) whose shape is
the output's, then move the bytes with the device namespace's strided copy
(``rctx.xp.strided_copy``; on CPU the parallel int64 kernel ``mxlite._core.copy``). No
data-moving routine (concatenate, tile, repeat, ...) runs, and nothing here depends on the
device: the views and the copy come from ``rctx.xp``. Being pure data movement, every dtype (bool and float16 included) works
unchanged.

All of these operators are linear, and so is each FGradient: the gradient of a data
movement is the reverse data movement (reshape back, the inverse permutation, the same flip,
slices of a join, a join of slices), built from registered operators only, so it is
recorded under ``create_graph=True`` and differentiable again to any order. Copies made by
broadcasting, tile and repeat are summed back with ``sum_to`` (whose gradient is
``broadcast_to``). Two internal operators exist only to be gradients: ``_slice_scatter``
(the adjoint of ``slice``) and ``_diag_scatter`` (the adjoint of ``diag`` on >= 2-D input);
each has the forward operator as its own gradient. Every gradient here reads only shapes
and parameters (``grad_needs=()``), so the tape keeps no arrays for these operators.
"""
import numpy as np

from ..base import op_error
from .common import same_type
from .registry import REQUIRED, OpDef, Param, register
from .shape_partial import known_rank, partial_rule, unify
from .shape_utils import (same_input_shapes, check_shape, infer_npx_reshape, infer_reshape,
                          infer_target_shape, normalize_axes, normalize_axis, size_of)

_ALL = slice(None)


# ---- helpers -------------------------------------------------------------------------------
def _one_input(name, shapes):
    if len(shapes) != 1:
        raise op_error(name, f"expected 1 input, got {len(shapes)}")
    return tuple(shapes[0])


def _as_view(a, shape):
    """``a`` seen with ``shape``. ``a`` is C-contiguous, so this is a view, never a copy --
    which matters because outputs are written through these views."""
    if not a.flags.c_contiguous:
        raise RuntimeError("shape kernels expect C-contiguous arrays")
    return a.reshape(shape)


def _interleave(a, b):
    """(a0, b0, a1, b1, ...)."""
    return tuple(v for pair in zip(a, b) for v in pair)


def _axis_index(axis, index):
    """An index tuple selecting ``index`` (int or slice) along ``axis``, all of the others.

    The trailing Ellipsis makes NumPy return a (possibly 0-d) view, never a scalar copy."""
    return (_ALL,) * axis + (index, Ellipsis)


def _same_dtype(name):
    def infer_type(dtypes, attrs):
        first = dtypes[0]
        for i, dt in enumerate(dtypes):
            if dt != first:
                raise op_error(name, f"all inputs must have the same dtype; input 0 is {first} "
                               f"and input {i} is {dt}")
        return [first]
    return infer_type


# ---- reshape family (same bytes, new shape) ------------------------------------------------
def _reshape_compute(rctx, ins, outs, attrs):
    # the (C-contiguous) output seen with the input's shape: one strided copy whatever the
    # input's strides (a compiled graph hands a transposed view over as it is)
    rctx.xp.strided_copy(ins[0], _as_view(outs[0], ins[0].shape))


def _reshape_view(x, shape, attrs):
    """The reshape family inside a compiled graph: ``x`` seen with the output's ``shape``
    (the same elements in the same C order); None for a non-contiguous ``x``, which NumPy
    would copy."""
    return x.reshape(shape) if x.flags.c_contiguous else None


def _reshape_shape(shapes, attrs):
    src = _one_input("reshape", shapes)
    if attrs.shape or attrs.target_shape is None:     # MXNet: a non-empty shape wins
        if attrs.shape is None:
            raise op_error("reshape", "needs shape (or the pre-1.0 target_shape)")
        return [infer_reshape("reshape", src, attrs.shape, attrs.reverse)]
    return [infer_target_shape("reshape", src, attrs.target_shape, attrs.keep_highest)]


def _npx_reshape_shape(shapes, attrs):
    return [infer_npx_reshape("_npx_reshape", _one_input("_npx_reshape", shapes), attrs.newshape,
                              attrs.reverse)]


def _range_of(name, begin, end, ndim, what):
    """[begin, end) of ``what`` (None: the start / the end; negative counts from the end)."""
    b = 0 if begin is None else begin + ndim if begin < 0 else begin
    e = ndim if end is None else end + ndim if end < 0 else end
    if not 0 <= b <= e <= ndim:
        raise op_error(name, f"{what}_begin={begin}, {what}_end={end} is not a range of the "
                       f"{ndim} axes of {what}")
    return b, e


def _reshape_like_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error("reshape_like", f"expected 2 inputs (lhs, rhs), got {len(shapes)}")
    lhs, rhs = tuple(shapes[0]), tuple(shapes[1])
    lb, le = _range_of("reshape_like", attrs.lhs_begin, attrs.lhs_end, len(lhs), "lhs")
    rb, re_ = _range_of("reshape_like", attrs.rhs_begin, attrs.rhs_end, len(rhs), "rhs")
    out = lhs[:lb] + rhs[rb:re_] + lhs[le:]
    if size_of(out) != size_of(lhs):
        raise op_error("reshape_like", f"lhs of shape {lhs} ({size_of(lhs)} elements) cannot "
                       f"take the shape {out} from rhs of shape {rhs}")
    return [out]


def _reshape_like_grad(F, node, ograds):
    """y = lhs with another shape: dlhs = dy reshaped back; rhs only gives a shape."""
    grads = [_reshape_to(F, node, ograds[0], node.output_shapes[0], node.input_shapes[0],
                         node.input_dtypes[0]) if node.wants[0] else None]
    grads.append(_zeros(F, node, node.input_shapes[1], node.input_dtypes[1])
                 if node.wants[1] else None)
    return grads


def _flatten_shape(shapes, attrs):
    src = _one_input("flatten", shapes)
    if not src:
        return [(1, 1)]
    return [(src[0], size_of(src[1:]))]


def _expand_dims_shape(shapes, attrs):
    src = _one_input("expand_dims", shapes)
    axis = normalize_axis("expand_dims", attrs.axis, len(src) + 1)
    return [src[:axis] + (1,) + src[axis:]]


def _squeeze_shape(shapes, attrs):
    src = _one_input("squeeze", shapes)
    if attrs.axis is None:
        drop = {i for i, d in enumerate(src) if d == 1}
    else:
        drop = set(normalize_axes("squeeze", attrs.axis, len(src)))
        for a in sorted(drop):
            if src[a] != 1:
                raise op_error("squeeze", f"cannot squeeze axis {a} of shape {src}: its size "
                               f"is {src[a]}, not 1")
    out = tuple(d for i, d in enumerate(src) if i not in drop)
    if src and not out:        # MXNet 1.x: squeezing every axis leaves shape (1,)
        out = (1,)
    return [out]


# ---- axis permutations ---------------------------------------------------------------------
def _transpose_axes(shape, axes):
    ndim = len(shape)
    if not axes:               # None or () (MXNet's default): reverse the axes
        return tuple(range(ndim - 1, -1, -1))
    if len(axes) != ndim:
        raise op_error("transpose", f"axes={axes} must list each of the {ndim} axes of an "
                       f"array of shape {shape} exactly once")
    return normalize_axes("transpose", axes, ndim, arg="axes")


def _transpose_shape(shapes, attrs):
    src = _one_input("transpose", shapes)
    return [tuple(src[a] for a in _transpose_axes(src, attrs.axes))]


def _transpose_compute(rctx, ins, outs, attrs):
    x = ins[0]
    rctx.xp.strided_copy(x.transpose(_transpose_axes(x.shape, attrs.axes)), outs[0])


def _transpose_view(x, shape, attrs):
    """transpose inside a compiled graph: a strided view of ``x``, whatever its strides."""
    return x.transpose(_transpose_axes(x.shape, attrs.axes))


def _swap_dims(shape, attrs):
    ndim = len(shape)
    return (normalize_axis("swapaxes", attrs.dim1, ndim, "dim1"),
            normalize_axis("swapaxes", attrs.dim2, ndim, "dim2"))


def _swapaxes_shape(shapes, attrs):
    src = list(_one_input("swapaxes", shapes))
    d1, d2 = _swap_dims(src, attrs)
    src[d1], src[d2] = src[d2], src[d1]
    return [tuple(src)]


def _swapaxes_compute(rctx, ins, outs, attrs):
    x = ins[0]
    rctx.xp.strided_copy(x.swapaxes(*_swap_dims(x.shape, attrs)), outs[0])


def _swapaxes_view(x, shape, attrs):
    """swapaxes inside a compiled graph: a strided view of ``x``, whatever its strides."""
    return x.swapaxes(*_swap_dims(x.shape, attrs))


def _flip_axes(shape, axis):
    return normalize_axes("flip", axis, len(shape))


def _flip_shape(shapes, attrs):
    src = _one_input("flip", shapes)
    _flip_axes(src, attrs.axis)
    return [src]


def _flip_compute(rctx, ins, outs, attrs):
    x = ins[0]
    key = [_ALL] * x.ndim
    for a in _flip_axes(x.shape, attrs.axis):
        key[a] = slice(None, None, -1)
    rctx.xp.strided_copy(x[tuple(key) + (Ellipsis,)], outs[0])


# ---- tile / repeat (broadcast views of a reshaped input) -----------------------------------
def _tile_layout(shape, reps):
    """Input shape and reps, both promoted to the output's number of dimensions."""
    d = max(len(shape), len(reps))
    return (1,) * (d - len(shape)) + tuple(shape), (1,) * (d - len(reps)) + tuple(reps)


def _tile_shape(shapes, attrs):
    src = _one_input("tile", shapes)
    if any(r < 0 for r in attrs.reps):
        raise op_error("tile", f"reps={attrs.reps} has a negative entry")
    shape, reps = _tile_layout(src, attrs.reps)
    return [check_shape("tile", tuple(s * r for s, r in zip(shape, reps)), "output shape")]


def _tile_compute(rctx, ins, outs, attrs):
    # (s0, s1) tiled (r0, r1): view x as (1, s0, 1, s1), broadcast to (r0, s0, r1, s1);
    # the C-contiguous output (r0*s0, r1*s1) has exactly that layout.
    x, out = ins[0], outs[0]
    shape, reps = _tile_layout(x.shape, attrs.reps)
    src = rctx.xp.broadcast_to(_as_view(x, _interleave((1,) * len(shape), shape)),
                               _interleave(reps, shape))
    rctx.xp.strided_copy(src, _as_view(out, src.shape))


def _repeat_layout(shape, attrs):
    """(input viewed with a unit axis after ``axis``, that view broadcast ``repeats`` times)."""
    r = attrs.repeats
    if attrs.axis is None:
        n = size_of(shape)
        return (n, 1), (n, r)
    a = normalize_axis("repeat", attrs.axis, len(shape))
    head, tail = tuple(shape[:a + 1]), tuple(shape[a + 1:])
    return head + (1,) + tail, head + (r,) + tail


def _repeat_shape(shapes, attrs):
    src = _one_input("repeat", shapes)
    if attrs.repeats < 0:
        raise op_error("repeat", f"repeats={attrs.repeats} must not be negative")
    if attrs.axis is None:
        return [check_shape("repeat", (size_of(src) * attrs.repeats,), "output shape")]
    a = normalize_axis("repeat", attrs.axis, len(src))
    out = src[:a] + (src[a] * attrs.repeats,) + src[a + 1:]
    return [check_shape("repeat", out, "output shape")]


def _repeat_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    unit, wide = _repeat_layout(x.shape, attrs)
    src, dst = rctx.xp.broadcast_to(_as_view(x, unit), wide), _as_view(out, wide)
    if unit[-1] == 1:
        # the copies are the last axis: the copy kernel's inner loop would run over just
        # `repeats` elements; walk the copies outside so it runs along the data instead
        src, dst = src.swapaxes(-1, -2), dst.swapaxes(-1, -2)
    rctx.xp.strided_copy(src, dst)


# ---- joining and splitting -----------------------------------------------------------------
def _concat_axis(shapes, dim):
    if not shapes:
        raise op_error("concat", "needs at least one input")
    ndim = len(shapes[0])
    if ndim == 0:
        raise op_error("concat", "cannot concatenate 0-d arrays")
    return normalize_axis("concat", dim, ndim, "dim")


def _concat_shape(shapes, attrs):
    shapes = [tuple(s) for s in shapes]
    axis = _concat_axis(shapes, attrs.dim)
    first = shapes[0]
    total = 0
    for i, s in enumerate(shapes):
        if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
            raise op_error("concat", f"input {i} has shape {s}, incompatible with input 0 of "
                           f"shape {first}: all shapes must agree except on dim={attrs.dim}")
        total += s[axis]
    return [check_shape("concat", first[:axis] + (total,) + first[axis + 1:], "output shape")]


@partial_rule
def _reshape_backward_shape(in_shapes, out_shapes, attrs):
    """The data's one unknown dimension from a known output: the output's size over the
    product of the data's known dimensions (MXNet's backward rule of Reshape)."""
    src, out = in_shapes[0], out_shapes[0]
    if src is None or out is None or None in out or list(src).count(None) != 1:
        return [src]
    known = 1
    for d in src:
        known *= 1 if d is None else d
    total = 1
    for d in out:
        total *= d
    if known == 0 or total % known:
        return [src]                         # refused once the shapes are complete
    return [tuple(total // known if d is None else d for d in src)]


@partial_rule
def _concat_backward_shape(in_shapes, out_shapes, attrs):
    """Every input's dimensions but ``dim`` from the output and the other inputs; the one
    input whose ``dim`` size is unknown gets what the output's size leaves (MXNet's rule)."""
    rank = known_rank(*in_shapes, *out_shapes)
    if rank is None or not -rank <= attrs.dim < rank:
        return [None] * len(in_shapes)
    axis = attrs.dim % rank
    common = None
    for s in list(in_shapes) + list(out_shapes):
        if s is not None and len(s) == rank:
            common = unify(common, s[:axis] + (None,) + s[axis + 1:], "concat")
    sizes = [None if s is None else s[axis] for s in in_shapes]
    total = None if out_shapes[0] is None else out_shapes[0][axis]
    unknown = [i for i, d in enumerate(sizes) if d is None]
    if total is not None and len(unknown) == 1:
        sizes[unknown[0]] = total - sum(d for d in sizes if d is not None)
    return [common[:axis] + (d,) + common[axis + 1:] for d in sizes]


@partial_rule
def _split_backward_shape(in_shapes, out_shapes, attrs):
    """The input from any output's shape: the split axis ``num_outputs`` times as long (or
    ``num_outputs`` long where ``squeeze_axis`` removed it)."""
    part = None
    for s in out_shapes:
        part = unify(part, s, "split")
    if part is None:
        return [None]
    rank = len(part) + (1 if attrs.squeeze_axis else 0)
    if not -rank <= attrs.axis < rank:
        return [None]
    axis = attrs.axis % rank
    if attrs.squeeze_axis:
        return [part[:axis] + (attrs.num_outputs,) + part[axis:]]
    size = None if part[axis] is None else part[axis] * attrs.num_outputs
    return [part[:axis] + (size,) + part[axis + 1:]]


def _concat_compute(rctx, ins, outs, attrs):
    out = outs[0]
    axis = _concat_axis([x.shape for x in ins], attrs.dim)
    start = 0
    for x in ins:
        n = x.shape[axis]
        rctx.xp.strided_copy(x, out[_axis_index(axis, slice(start, start + n))])
        start += n


def _stack_shape(shapes, attrs):
    first = same_input_shapes("stack", shapes)
    axis = normalize_axis("stack", attrs.axis, len(first) + 1)
    return [check_shape("stack", first[:axis] + (len(shapes),) + first[axis:], "output shape")]


def _stack_compute(rctx, ins, outs, attrs):
    out = outs[0]
    axis = normalize_axis("stack", attrs.axis, out.ndim)
    for i, x in enumerate(ins):
        rctx.xp.strided_copy(x, out[_axis_index(axis, i)])


def _split_params(shape, attrs):
    n = attrs.num_outputs
    if n < 1:
        raise op_error("split", f"num_outputs={n} must be at least 1")
    if not shape:
        raise op_error("split", "cannot split a 0-d array")
    axis = normalize_axis("split", attrs.axis, len(shape))
    if shape[axis] % n:
        raise op_error("split", f"axis {axis} of shape {shape} (size {shape[axis]}) does not "
                       f"divide into num_outputs={n} equal parts")
    step = shape[axis] // n
    if attrs.squeeze_axis and step != 1:
        raise op_error("split", f"squeeze_axis=True needs num_outputs ({n}) equal to the size "
                       f"of axis {axis} of shape {shape}")
    return axis, step


def _split_shape(shapes, attrs):
    src = _one_input("split", shapes)
    axis, step = _split_params(src, attrs)
    part = src[:axis] + (() if attrs.squeeze_axis else (step,)) + src[axis + 1:]
    return [part] * attrs.num_outputs


def _split_type(dtypes, attrs):
    return [dtypes[0]] * attrs.num_outputs


def _split_compute(rctx, ins, outs, attrs):
    x = ins[0]
    axis, step = _split_params(x.shape, attrs)
    for i, out in enumerate(outs):
        index = i if attrs.squeeze_axis else slice(i * step, (i + 1) * step)
        rctx.xp.strided_copy(x[_axis_index(axis, index)], out)


# ---- slicing ---------------------------------------------------------------------------------
def _optional_ints(name, arg, value):
    """A tuple of int-or-None from a tuple/list (or one int/None)."""
    if value is None or isinstance(value, (int, np.integer)):
        value = (value,)
    try:
        items = tuple(value)
    except TypeError:
        raise op_error(name, f"{arg}={value!r} must be a tuple of integers or None") from None
    out = []
    for v in items:
        if v is None:
            out.append(None)
        elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            out.append(int(v))
        else:
            raise op_error(name, f"{arg}={value!r} must hold integers or None, got {v!r}")
    return tuple(out)


def _slice_key(shape, attrs, name="slice"):
    """Python slices for MXNet's ``slice``: per-axis begin/end/step, None = the default end."""
    begin = _optional_ints(name, "begin", attrs.begin)
    end = _optional_ints(name, "end", attrs.end)
    step = _optional_ints(name, "step", attrs.step) if attrs.step is not None else ()
    if not shape:
        raise op_error(name, "cannot slice a 0-d array")
    if len(begin) != len(end):
        raise op_error(name, f"begin={begin} and end={end} must have the same length")
    if len(begin) > len(shape):
        raise op_error(name, f"begin={begin} has more entries than the {len(shape)} "
                       f"axes of shape {shape}")
    if step and len(step) != len(begin):
        raise op_error(name, f"step={step} must be empty or as long as begin={begin}")
    if any(s == 0 for s in step):
        raise op_error(name, f"step={step} has a zero entry")
    key = [slice(b, e, step[i] if step else None) for i, (b, e) in enumerate(zip(begin, end))]
    return tuple(key)


def _sliced_shape(src, attrs, name="slice"):
    key = _slice_key(src, attrs, name)
    out = [len(range(*k.indices(d))) for k, d in zip(key, src)]
    return tuple(out) + src[len(key):]


def _slice_shape(shapes, attrs):
    return [_sliced_shape(_one_input("slice", shapes), attrs)]


def _slice_compute(rctx, ins, outs, attrs):
    x = ins[0]
    rctx.xp.strided_copy(x[_slice_key(x.shape, attrs) + (Ellipsis,)], outs[0])


def _slice_scatter_shape(shapes, attrs):
    src = _one_input("_slice_scatter", shapes)
    target = check_shape("_slice_scatter", attrs.shape, "shape")
    region = _sliced_shape(target, attrs, "_slice_scatter")
    if region != src:
        raise op_error("_slice_scatter", f"data of shape {src} does not fill the region "
                       f"begin={attrs.begin}, end={attrs.end}, step={attrs.step} of "
                       f"shape={target}, which has shape {region}")
    return [target]


def _slice_scatter_compute(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.fill_zero(out)
    # a slice selects each element at most once: a plain write, no accumulation
    key = _slice_key(out.shape, attrs, "_slice_scatter") + (Ellipsis,)
    rctx.xp.strided_copy(ins[0], out[key])


def _slice_axis_params(shape, attrs):
    if not shape:
        raise op_error("slice_axis", "cannot slice a 0-d array")
    axis = normalize_axis("slice_axis", attrs.axis, len(shape))
    n = shape[axis]
    begin = attrs.begin + n if attrs.begin < 0 else attrs.begin
    end = n if attrs.end is None else (attrs.end + n if attrs.end < 0 else attrs.end)
    if not 0 <= begin <= end <= n:
        raise op_error("slice_axis", f"begin={attrs.begin}, end={attrs.end} is not a valid "
                       f"range of axis {axis} of shape {shape} (size {n})")
    return axis, begin, end


def _slice_axis_shape(shapes, attrs):
    src = _one_input("slice_axis", shapes)
    axis, begin, end = _slice_axis_params(src, attrs)
    return [src[:axis] + (end - begin,) + src[axis + 1:]]


def _slice_axis_compute(rctx, ins, outs, attrs):
    x = ins[0]
    axis, begin, end = _slice_axis_params(x.shape, attrs)
    rctx.xp.strided_copy(x[_axis_index(axis, slice(begin, end))], outs[0])


# ---- broadcasting ----------------------------------------------------------------------------
def _broadcast_compute(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.strided_copy(ins[0], out)       # the kernel broadcasts (stride 0 on repeated axes)


def _broadcast_to_shape(shapes, attrs):
    src = _one_input("broadcast_to", shapes)
    target = tuple(attrs.shape)
    if len(target) < len(src):
        raise op_error("broadcast_to", f"cannot broadcast shape {src} to shape={target}: "
                       f"the target has fewer dimensions")
    lead = len(target) - len(src)
    out = list(target[:lead])
    for s, t in zip(src, target[lead:]):
        if t == 0:
            out.append(s)      # MXNet: 0 keeps the input's dimension
        elif s == t or s == 1:
            out.append(t)
        else:
            raise op_error("broadcast_to", f"cannot broadcast shape {src} to shape={target}")
    return [check_shape("broadcast_to", out, "shape")]


def _broadcast_like_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error("broadcast_like", f"expected 2 inputs (lhs, rhs), got {len(shapes)}")
    lhs, rhs = tuple(shapes[0]), tuple(shapes[1])
    la, ra = attrs.lhs_axes, attrs.rhs_axes
    if la is None and ra is None:
        if len(lhs) != len(rhs) or any(a != b and a != 1 for a, b in zip(lhs, rhs)):
            raise op_error("broadcast_like", f"lhs of shape {lhs} cannot be broadcast like rhs "
                           f"of shape {rhs}")
        return [rhs]
    if la is None or ra is None or len(la) != len(ra) or not la:
        raise op_error("broadcast_like", f"lhs_axes={la} and rhs_axes={ra} must be given "
                       f"together, non-empty and of the same length")
    la = normalize_axes("broadcast_like", la, len(lhs), "lhs_axes")
    ra = tuple(normalize_axis("broadcast_like", a, len(rhs), "rhs_axes") for a in ra)
    out = list(lhs)
    for a, b in zip(la, ra):
        if lhs[a] != 1 and lhs[a] != rhs[b]:
            raise op_error("broadcast_like", f"axis {a} of lhs shape {lhs} (size {lhs[a]}) "
                           f"cannot be broadcast to axis {b} of rhs shape {rhs} (size {rhs[b]})")
        out[a] = rhs[b]
    return [tuple(out)]


def _broadcast_axis_shape(shapes, attrs):
    src = _one_input("broadcast_axis", shapes)
    axes = normalize_axes("broadcast_axis", attrs.axis or (), len(src))
    size = tuple(attrs.size)
    if len(axes) != len(size):
        raise op_error("broadcast_axis", f"axis={attrs.axis} and size={size} must have the same "
                       f"length")
    out = list(src)
    for a, n in zip(axes, size):
        if src[a] != 1 and src[a] != n:
            raise op_error("broadcast_axis", f"axis {a} of shape {src} has size {src[a]}; only "
                           f"size-1 axes can be broadcast (to size {n})")
        out[a] = n
    return [check_shape("broadcast_axis", out, "output shape")]


# ---- diag ------------------------------------------------------------------------------------
def _diag_axes(shape, attrs, name="diag"):
    a1 = normalize_axis(name, attrs.axis1, len(shape), "axis1")
    a2 = normalize_axis(name, attrs.axis2, len(shape), "axis2")
    if a1 == a2:
        raise op_error(name, f"axis1={attrs.axis1} and axis2={attrs.axis2} name the same axis "
                       f"of shape {shape}")
    return a1, a2


def _diag_len(h, w, k):
    return max(0, min(h + min(k, 0), w - max(k, 0)))


def _diagonal_shape(src, attrs, name="diag"):
    """Shape of diagonal ``k`` of the (axis1, axis2) planes of an array of shape ``src``.
    Diagonal ``k`` must start inside or on the edge of an ``h x w`` plane, ``-h <= k <= w``
    (an empty diagonal then), as MXNet's "Diagonal does not exist" check requires."""
    a1, a2 = _diag_axes(src, attrs, name)
    h, w, k = src[a1], src[a2], attrs.k
    if not -h <= k <= w:
        raise op_error(name, f"k={k} names no diagonal of the {h} x {w} planes (axis1="
                       f"{attrs.axis1}, axis2={attrs.axis2}) of shape {tuple(src)}: "
                       f"it must lie in [{-h}, {w}]")
    rest = tuple(d for i, d in enumerate(src) if i not in (a1, a2))
    return rest + (_diag_len(h, w, k),)


def _diag_shape(shapes, attrs):
    src = _one_input("diag", shapes)
    if not src:
        raise op_error("diag", "needs an input of at least 1 dimension, got a 0-d array")
    if len(src) == 1:
        n = src[0] + abs(attrs.k)
        return [check_shape("diag", (n, n), "output shape")]
    return [_diagonal_shape(src, attrs)]


def _diagonal_view(xp, x, attrs, writeable=False):
    """The strided view of diagonal ``k`` of ``x``'s (axis1, axis2) planes (rest axes first,
    the diagonal last). Distinct diagonal elements never share memory, so writing through
    the view is safe."""
    k = attrs.k
    a1, a2 = _diag_axes(x.shape, attrs)
    corner = x[tuple(slice(max(-k, 0), None) if i == a1 else
                     slice(max(k, 0), None) if i == a2 else _ALL for i in range(x.ndim))]
    rest = [i for i in range(x.ndim) if i not in (a1, a2)]
    shape = tuple(x.shape[i] for i in rest) + (_diag_len(x.shape[a1], x.shape[a2], k),)
    return xp.as_strided(corner, shape,
                         tuple(x.strides[i] for i in rest) + (x.strides[a1] + x.strides[a2],),
                         writeable=writeable)


def _diag_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    k = attrs.k
    if x.ndim == 1:
        # zero the matrix, then write x along a strided view of diagonal k
        rctx.xp.fill_zero(out)
        corner = out[:, k:] if k >= 0 else out[-k:, :]
        rctx.xp.strided_copy(x, rctx.xp.as_strided(corner, x.shape, (sum(out.strides),),
                                                   writeable=True))
        return
    rctx.xp.strided_copy(_diagonal_view(rctx.xp, x, attrs), out)


def _diag_scatter_shape(shapes, attrs):
    src = _one_input("_diag_scatter", shapes)
    target = check_shape("_diag_scatter", attrs.shape, "shape")
    if len(target) < 2:
        raise op_error("_diag_scatter", f"shape={target} must have at least 2 dimensions")
    diagonal = _diagonal_shape(target, attrs, "_diag_scatter")
    if diagonal != src:
        raise op_error("_diag_scatter", f"data of shape {src} does not match diagonal "
                       f"k={attrs.k} of shape={target}, which has shape {diagonal}")
    return [target]


def _diag_scatter_compute(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.fill_zero(out)
    rctx.xp.strided_copy(ins[0], _diagonal_view(rctx.xp, out, attrs, writeable=True))


# ---- gradients -------------------------------------------------------------------------------
# Each FGradient calls registered operators on handles only (F is ``mx.nd`` or, later,
# ``mx.sym``) and takes every shape, dtype and the device from ``node``, never from a handle
# or its data (tests/test_symbolic_gradients.py traces every FGradient on bare handles).
def _zeros(F, node, shape, dtype):
    """Zeros of ``shape`` and ``dtype``, on the device ``node`` ran on."""
    return F.zeros(shape, dtype=dtype, ctx=node.context)


def _reshape_to(F, node, g, g_shape, shape, dtype):
    """``g`` (of shape ``g_shape``) reshaped to the plain shape ``shape``. An empty ``shape``
    would be misread (a 0 in reshape's ``shape`` copies an input dimension), and a gradient
    of an empty input has no elements anyway: it is then an empty constant."""
    shape = tuple(shape)
    if size_of(shape) == 0:
        return _zeros(F, node, shape, dtype)
    return g if tuple(g_shape) == shape else F.reshape(g, shape=shape)


def _sum_copies(F, node, g, wide, unit):
    """Sum the copies made by broadcasting ``unit`` to ``wide``: ``g`` seen as ``wide``,
    summed down to ``unit`` (``sum_to``), seen as the input's shape."""
    in_shape, dtype = node.input_shapes[0], node.input_dtypes[0]
    if size_of(wide) == 0 or size_of(in_shape) == 0:   # no copies: the gradient is zero
        return _zeros(F, node, in_shape, dtype)
    g = _reshape_to(F, node, g, node.output_shapes[0], wide, dtype)
    if tuple(wide) != tuple(unit):      # reps or repeats of 1 made no copies
        g = F.sum_to(g, shape=unit)
    return _reshape_to(F, node, g, unit, in_shape, dtype)


def _reshape_grad(F, node, ograds):
    """y = x with a new shape (reshape, flatten, expand_dims, squeeze):
    dx = dy reshaped back to x's shape."""
    return [_reshape_to(F, node, ograds[0], node.output_shapes[0], node.input_shapes[0],
                        node.input_dtypes[0])]


def _transpose_grad(F, node, ograds):
    """y = transpose(x, p): dx = transpose(dy, p^-1), the inverse permutation."""
    perm = _transpose_axes(node.input_shapes[0], node.attrs.axes)
    inverse = [0] * len(perm)
    for i, a in enumerate(perm):
        inverse[a] = i
    return [F.transpose(ograds[0], axes=tuple(inverse))]


def _swapaxes_grad(F, node, ograds):
    """y = swapaxes(x, d1, d2): a swap is its own inverse, dx = swapaxes(dy, d1, d2)."""
    return [F.swapaxes(ograds[0], dim1=node.attrs.dim1, dim2=node.attrs.dim2)]


def _flip_grad(F, node, ograds):
    """y = flip(x, axes): a flip is its own inverse, dx = flip(dy, axes)."""
    return [F.flip(ograds[0], axis=node.attrs.axis)]


def _tile_grad(F, node, ograds):
    """y = tile(x, reps): every x element appears once per tile, so dx is the sum of the
    tiles of dy: dy seen as (r0, s0, r1, s1, ...), summed over the r axes."""
    shape, reps = _tile_layout(node.input_shapes[0], node.attrs.reps)
    return [_sum_copies(F, node, ograds[0], _interleave(reps, shape),
                        _interleave((1,) * len(shape), shape))]


def _repeat_grad(F, node, ograds):
    """y = repeat(x, r, axis): dx sums the r consecutive copies of each element:
    dy seen as (..., s_axis, r, ...), summed over the r axis."""
    unit, wide = _repeat_layout(node.input_shapes[0], node.attrs)
    return [_sum_copies(F, node, ograds[0], wide, unit)]


def _concat_grad(F, node, ograds):
    """y = concat(x_0, ..., x_n; dim): dx_i = the slice of dy along ``dim`` that x_i filled."""
    g, shapes = ograds[0], node.input_shapes
    axis = _concat_axis(shapes, node.attrs.dim)
    grads, start = [], 0
    for shape, want in zip(shapes, node.wants):
        n = shape[axis]
        grads.append(F.slice_axis(g, axis=axis, begin=start, end=start + n) if want else None)
        start += n
    return grads


def _stack_grad(F, node, ograds):
    """y = stack(x_0, ..., x_n; axis): dx_i = dy[..., i, ...] (index i of the new axis)."""
    g, n = ograds[0], len(node.input_shapes)
    axis = normalize_axis("stack", node.attrs.axis, len(node.output_shapes[0]))
    if all(node.wants):
        parts = F.split(g, num_outputs=n, axis=axis, squeeze_axis=True)
        return parts if n > 1 else [parts]
    shape, dtype = node.input_shapes[0], node.input_dtypes[0]
    part = shape[:axis] + (1,) + shape[axis:]
    return [_reshape_to(F, node, F.slice_axis(g, axis=axis, begin=i, end=i + 1), part, shape,
                        dtype)
            if want else None for i, want in enumerate(node.wants)]


def _split_grad(F, node, ograds):
    """[y_0, ..., y_n] = split(x; axis): dx = concat(dy_0, ..., dy_n; axis) (stack when
    squeeze_axis removed the axis). Outputs without a gradient arrive as zeros."""
    axis, _ = _split_params(node.input_shapes[0], node.attrs)
    if node.attrs.squeeze_axis:
        return [F.stack(*ograds, axis=axis)]
    return [F.concat(*ograds, dim=axis)]


def _slice_grad(F, node, ograds):
    """y = x[begin:end:step]: dx = zeros like x with dy written into that region
    (``_slice_scatter``, whose own gradient is ``slice`` again)."""
    a = node.attrs
    return [F._internal._slice_scatter(ograds[0], shape=node.input_shapes[0], begin=a.begin,
                                       end=a.end, step=a.step)]


def _slice_axis_grad(F, node, ograds):
    """y = x[..., begin:end, ...] along ``axis``: dx = zeros like x with dy in that range
    (``_slice_scatter`` with whole slices before ``axis``)."""
    in_shape = node.input_shapes[0]
    axis, begin, end = _slice_axis_params(in_shape, node.attrs)
    return [F._internal._slice_scatter(ograds[0], shape=in_shape,
                                       begin=(None,) * axis + (begin,),
                                       end=(None,) * axis + (end,))]


def _slice_scatter_grad(F, node, ograds):
    """y = zeros(shape) with x written into [begin:end:step] (linear in x):
    dx = dy[begin:end:step], i.e. ``slice`` with the same parameters."""
    a = node.attrs
    return [F.slice(ograds[0], begin=a.begin, end=a.end, step=a.step)]


def _unbroadcast_grad(F, node, ograds):
    """y = x broadcast (broadcast_to, broadcast_axis, broadcast_like's lhs): each x element
    is copied along the broadcast axes, so dx = sum_to(dy, x.shape) (whose gradient is
    broadcast_to again). broadcast_like's rhs only gives a shape: its gradient is zero."""
    g, in_shape = ograds[0], node.input_shapes[0]
    grads = [(g if node.output_shapes[0] == in_shape else F.sum_to(g, shape=in_shape))
             if node.wants[0] else None]
    if len(node.input_shapes) == 2:
        grads.append(_zeros(F, node, node.input_shapes[1], node.input_dtypes[1])
                     if node.wants[1] else None)
    return grads


def _diag_grad(F, node, ograds):
    """1-D x: y = the matrix with x on diagonal k, so dx = diagonal k of dy (``diag`` again).
    >= 2-D x: y = diagonal k of the (axis1, axis2) planes, so dx = zeros like x with dy on
    that diagonal (``_diag_scatter``, whose own gradient is ``diag``)."""
    g, in_shape, a = ograds[0], node.input_shapes[0], node.attrs
    if len(in_shape) == 1:
        return [F.diag(g, k=a.k)]
    return [F._internal._diag_scatter(g, shape=in_shape, k=a.k, axis1=a.axis1, axis2=a.axis2)]


def _diag_scatter_grad(F, node, ograds):
    """y = zeros(shape) with x on diagonal k of the (axis1, axis2) planes (linear in x):
    dx = that diagonal of dy (``diag`` with the same parameters)."""
    a = node.attrs
    return [F.diag(ograds[0], k=a.k, axis1=a.axis1, axis2=a.axis2)]


# ---- registration ----------------------------------------------------------------------------
def _op(name, infer_shape, compute, doc, gradient, params=(), aliases=(), inputs=("data",),
        infer_type=same_type, **kw):
    # every gradient here reads shapes and parameters only: the tape keeps no arrays
    register(OpDef(name, inputs=inputs, params=params, aliases=aliases, infer_shape=infer_shape,
                   infer_type=infer_type, compute={"cpu": compute}, doc=doc,
                   gradient=gradient, grad_needs=(), **kw))


_op("reshape", _reshape_shape, _reshape_compute, gradient=_reshape_grad,
    aliases=("Reshape",), view=_reshape_view, strided_inputs=True,
    backward_shape=_reshape_backward_shape, params=(
        Param("shape", "shape", None, "the target shape, with MXNet's special codes"),
        Param("reverse", "bool", False, "apply the special codes from right to left"),
        Param("target_shape", "shape", None,
              "(deprecated: use shape) the pre-1.0 target shape; one 0 is inferred"),
        Param("keep_highest", "bool", False,
              "(deprecated: use shape) with target_shape: keep the first dimension")),
    doc="""Give the data a new shape with the same number of elements (a copy).

``shape`` may hold MXNet's special codes: 0 copies the input dimension at this position,
-1 is inferred from the rest, -2 copies all remaining dimensions, -3 merges two consecutive
dimensions, -4 splits one dimension into the two values that follow (one may be -1).
With ``reverse=True`` the codes are matched right to left.

>>> x = mx.nd.zeros((2, 3, 4))
>>> mx.nd.reshape(x, shape=(0, -1)).shape
(2, 12)
>>> mx.nd.reshape(x, shape=(-4, 1, 2, -2)).shape
(1, 2, 3, 4)

MXNet's pre-1.0 parameters still work (symbol files of that time use them): with no
``shape``, ``target_shape`` is the new shape, where one 0 is inferred from the size, and
``keep_highest=True`` keeps the input's first dimension in place of ``target_shape[0]``.

>>> mx.nd.reshape(x, target_shape=(4, 0)).shape
(4, 6)
>>> mx.nd.reshape(x, target_shape=(9, 0), keep_highest=True).shape
(2, 12)""")

_op("_npx_reshape", _npx_reshape_shape, _reshape_compute, gradient=_reshape_grad,
    aliases=("_npi_reshape",), inputs=("a",), view=_reshape_view, strided_inputs=True,
    backward_shape=_reshape_backward_shape, params=(
        Param("newshape", "shape", REQUIRED, "the new shape, with npx.reshape's codes"),
        Param("reverse", "bool", False, "read the codes and the input's shape right to left"),
        Param("order", "str", "C", "element order; only 'C' (row-major)", choices=("C",))),
    doc="""``a`` with a new shape of the same size (a copy): ``mx.npx.reshape``'s operator.

Its codes differ from ``reshape``'s: an entry >= 0 is that size (0 included), -1 is
inferred, -2 copies one input dimension, -3 drops an input dimension of size 1, -4 copies
all remaining input dimensions, -5 multiplies two consecutive input dimensions and -6
splits one input dimension into the two entries that follow it (one may be -1). With
``reverse=True`` the codes are matched right to left.

>>> x = mx.nd.zeros((2, 1, 3, 8))
>>> mx.nd._internal._npx_reshape(x, newshape=(-2, -3, -5)).shape
(2, 24)
>>> mx.nd._internal._npx_reshape(x, newshape=(-2, -2, -2, -6, 2, -1)).shape
(2, 1, 3, 2, 4)
>>> mx.nd._internal._npx_reshape(x, newshape=(-1, -2), reverse=True).shape
(6, 8)""")

_op("reshape_like", _reshape_like_shape, _reshape_compute, gradient=_reshape_like_grad,
    strided_inputs=True, inputs=("lhs", "rhs"), infer_type=lambda dtypes, attrs: [dtypes[0]],
    params=(
        Param("lhs_begin", "int", None, "first axis of lhs to replace (None: 0)"),
        Param("lhs_end", "int", None, "axis of lhs after the last replaced (None: ndim)"),
        Param("rhs_begin", "int", None, "first axis of rhs whose sizes are taken (None: 0)"),
        Param("rhs_end", "int", None, "axis of rhs after the last taken (None: ndim)")),
    doc="""Give ``lhs`` the shape of ``rhs`` (same number of elements; a copy), or replace
axes ``[lhs_begin, lhs_end)`` of lhs by axes ``[rhs_begin, rhs_end)`` of rhs. The output has
lhs's dtype; rhs only gives a shape.

>>> mx.nd.reshape_like(mx.nd.zeros((2, 3)), mx.nd.zeros((3, 2))).shape
(3, 2)
>>> mx.nd.reshape_like(mx.nd.zeros((30, 7)), mx.nd.zeros((15, 2, 4)), lhs_begin=0,
...                    lhs_end=1, rhs_begin=0, rhs_end=2).shape
(15, 2, 7)""")

_op("flatten", _flatten_shape, _reshape_compute, gradient=_reshape_grad, aliases=("Flatten",),
    view=_reshape_view, strided_inputs=True,
    doc="Collapse all axes but the first: shape (d0, d1, ..., dk) becomes (d0, d1*...*dk). "
        "A 1-D input of n elements gives (n, 1); a 0-d input gives (1, 1).")

_op("expand_dims", _expand_dims_shape, _reshape_compute, gradient=_reshape_grad,
    view=_reshape_view, strided_inputs=True,
    params=(Param("axis", "int", REQUIRED, "position of the new axis, in [-ndim-1, ndim]"),),
    doc="Insert a new axis of size 1 at position ``axis``.")

_op("squeeze", _squeeze_shape, _reshape_compute, gradient=_reshape_grad,
    view=_reshape_view, strided_inputs=True,
    params=(Param("axis", "axes", None, "axes to remove (each must have size 1); None: all "
                  "size-1 axes"),),
    doc="Remove axes of size 1. Squeezing a non-1 axis is an error. As in MXNet 1.x, "
        "squeezing every axis of a non-0-d array leaves shape (1,).")

_op("transpose", _transpose_shape, _transpose_compute, gradient=_transpose_grad,
    view=_transpose_view, strided_inputs=True,
    params=(Param("axes", "axes", None, "the permutation of the axes; None or (): reversed"),),
    doc="Permute the axes: output axis i is input axis ``axes[i]`` (reversed by default).")

_op("swapaxes", _swapaxes_shape, _swapaxes_compute, gradient=_swapaxes_grad,
    aliases=("SwapAxis",), view=_swapaxes_view, strided_inputs=True, params=(
        Param("dim1", "int", 0, "the first axis"), Param("dim2", "int", 0, "the second axis")),
    doc="Interchange two axes of the array (negative axes count from the end).")

_op("flip", _flip_shape, _flip_compute, gradient=_flip_grad, aliases=("reverse",),
    params=(Param("axis", "axes", REQUIRED, "the axes along which to reverse the order"),),
    doc="Reverse the order of the elements along the given axes.")

_op("tile", _tile_shape, _tile_compute, gradient=_tile_grad,
    params=(Param("reps", "shape", REQUIRED, "repetitions along each axis"),),
    doc="""Repeat the whole array ``reps`` times along each axis (NumPy's ``tile``).

If ``reps`` is shorter than the array's ndim it is padded with leading 1s; if longer, the
array gains leading axes of size 1. A 0 in ``reps`` gives an empty result (MXNet 1.x
could not represent that shape).""")

_op("repeat", _repeat_shape, _repeat_compute, gradient=_repeat_grad, params=(
    Param("repeats", "int", REQUIRED, "how many times each element is repeated"),
    Param("axis", "axis", None, "the axis to repeat along; None: repeat the flattened input")),
    doc="Repeat each element ``repeats`` times along ``axis`` (NumPy's ``repeat``). "
        "``repeats=0`` gives an empty array whose ``axis`` has size 0 (MXNet 1.x returned "
        "shape (0,) whatever the axis, as it could not represent other empty shapes).")

# MXNet's num_args: the front end fills it with the number of inputs given, or checks it
_NUM_ARGS = Param("num_args", "int", None, "number of inputs (default: the number given)")

_op("concat", _concat_shape, _concat_compute, gradient=_concat_grad,
    aliases=("Concat",), variadic=True, key_var_num_args="num_args",
    infer_type=_same_dtype("concat"), backward_shape=_concat_backward_shape,
    params=(_NUM_ARGS, Param("dim", "int", 1, "the axis along which to join the inputs")),
    doc="Join arrays along axis ``dim``; all other axes (and the dtypes) must match.")

_op("stack", _stack_shape, _stack_compute, gradient=_stack_grad,
    variadic=True, key_var_num_args="num_args", infer_type=_same_dtype("stack"),
    params=(_NUM_ARGS, Param("axis", "int", 0, "position of the new axis in the result")),
    doc="Join arrays of identical shape along a new axis at position ``axis``.")

_op("split", _split_shape, _split_compute, gradient=_split_grad,
    aliases=("SliceChannel",), infer_type=_split_type, backward_shape=_split_backward_shape,
    num_outputs=lambda attrs: attrs["num_outputs"], params=(
        Param("num_outputs", "int", REQUIRED, "number of equal parts"),
        Param("axis", "int", 1, "the axis to split along"),
        Param("squeeze_axis", "bool", False,
              "remove the split axis from the outputs (needs parts of size 1)")),
    doc="Split an array into ``num_outputs`` equal parts along ``axis``; returns a list "
        "(a single NDArray when num_outputs is 1, as MXNet).")

_op("slice", _slice_shape, _slice_compute, gradient=_slice_grad, aliases=("crop",), params=(
    Param("begin", "opt_ints", REQUIRED, "start index per axis (None: from the start)"),
    Param("end", "opt_ints", REQUIRED, "stop index per axis, exclusive (None: to the end)"),
    Param("step", "opt_ints", (), "step per axis (None or empty: 1); may be negative")),
    doc="""Slice along the leading axes: ``slice(x, begin=(b0, b1), end=(e0, e1), step=(s0, s1))``
is ``x[b0:e0:s0, b1:e1:s1]``, with Python's rules for negative and out-of-range indices (as
MXNet). A None entry takes the default for its step's sign; axes past ``len(begin)`` are kept
whole.""")

_op("slice_axis", _slice_axis_shape, _slice_axis_compute, gradient=_slice_axis_grad, params=(
    Param("axis", "int", REQUIRED, "the axis to slice"),
    Param("begin", "int", REQUIRED, "start index (negative counts from the end)"),
    Param("end", "axis", REQUIRED, "stop index, exclusive (negative counts from the end; "
          "None: the axis size)")),
    doc="Take elements ``begin`` to ``end`` (exclusive) along ``axis``. An out-of-range "
        "``begin``/``end`` is an error; ``begin == end`` gives an empty array (MXNet "
        "rejected that).")

_op("broadcast_to", _broadcast_to_shape, _broadcast_compute, gradient=_unbroadcast_grad,
    params=(Param("shape", "shape", (), "the target shape; 0 keeps the input dimension"),),
    doc="""Broadcast size-1 axes to the target ``shape``.

As in MXNet, a 0 in ``shape`` keeps the input's size on that axis. Beyond MXNet, ``shape``
may have more axes than the input, which is aligned to the right as in NumPy (in those
leading positions 0 means size 0).""")

_op("broadcast_like", _broadcast_like_shape, _broadcast_compute, gradient=_unbroadcast_grad,
    inputs=("lhs", "rhs"),
    params=(
        Param("lhs_axes", "axes", None, "axes of lhs to broadcast (with rhs_axes)"),
        Param("rhs_axes", "axes", None, "axes of rhs whose sizes lhs_axes take")),
    doc="Broadcast ``lhs`` to the shape of ``rhs`` (same ndim), or only axes ``lhs_axes`` to "
        "the sizes of ``rhs_axes`` of rhs. The output has lhs's dtype; rhs only gives a shape.")

_op("broadcast_axis", _broadcast_axis_shape, _broadcast_compute, gradient=_unbroadcast_grad,
    aliases=("broadcast_axes",),
    params=(Param("axis", "axes", (), "the size-1 axes to broadcast"),
            Param("size", "shape", (), "the target size of each axis")),
    doc="Broadcast the size-1 axes ``axis`` to sizes ``size``.")

_op("diag", _diag_shape, _diag_compute, gradient=_diag_grad, params=(
    Param("k", "int", 0, "the diagonal: 0 main, >0 above, <0 below"),
    Param("axis1", "int", 0, "first axis of the 2-D planes (input of >= 2 dims)"),
    Param("axis2", "int", 1, "second axis of the 2-D planes (input of >= 2 dims)")),
    doc="""A 1-D input of n elements gives the (n+|k|, n+|k|) matrix with it on diagonal k.
A >=2-D input gives its diagonal k in the planes (axis1, axis2), as NumPy's ``diagonal``: those
two axes are removed and the diagonal becomes the last axis.""")

# ---- internal operators that exist to be gradients (each has the forward op as gradient) ----
_op("_slice_scatter", _slice_scatter_shape, _slice_scatter_compute,
    gradient=_slice_scatter_grad, params=(
        Param("shape", "shape", REQUIRED, "shape of the result"),
        Param("begin", "opt_ints", REQUIRED, "start index per axis, as in slice"),
        Param("end", "opt_ints", REQUIRED, "stop index per axis, as in slice"),
        Param("step", "opt_ints", (), "step per axis, as in slice")),
    doc="""Zeros of ``shape`` with ``data`` written into the region ``[begin:end:step]``
(``slice``'s rules); ``data`` must have that region's shape. The adjoint of ``slice``, and
its gradient: ``slice(_slice_scatter(x, ...), ...)`` gives ``x`` back.

>>> y = mx.nd._internal._slice_scatter(mx.nd.ones((2,)), shape=(5,), begin=(1,), end=(None,),
...                                    step=(3,))
>>> y.asnumpy().tolist()
[0.0, 1.0, 0.0, 0.0, 1.0]""")

_op("_diag_scatter", _diag_scatter_shape, _diag_scatter_compute,
    gradient=_diag_scatter_grad, params=(
        Param("shape", "shape", REQUIRED, "shape of the result (at least 2-D)"),
        Param("k", "int", 0, "the diagonal: 0 main, >0 above, <0 below"),
        Param("axis1", "int", 0, "first axis of the 2-D planes"),
        Param("axis2", "int", 1, "second axis of the 2-D planes")),
    doc="""Zeros of ``shape`` with ``data`` written on diagonal ``k`` of the (axis1, axis2)
planes; ``data`` must have the shape ``diag`` gives for that diagonal (other axes first, the
diagonal last). The adjoint of ``diag`` on >= 2-D input, and its gradient.

>>> y = mx.nd._internal._diag_scatter(mx.nd.array([1, 2]), shape=(2, 3), k=1)
>>> y.asnumpy().tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]""")
