"""Index operators: take, pick, one_hot, where, clip — and ``_take_grad`` / ``_pick_grad``,
the scatters that the gradients of take and pick are made of.

Indices may be of any supported dtype; float indices are truncated toward zero (MXNet's cast)
and NaN is always an error. Every index is turned into an int64 position once, in Cython
(``_core.index.prepare_indices``), which applies the out-of-range rule of ``mode``:

* ``clip``: below 0 reads element 0, past the end reads the last element (MXNet; note that
  this means negative indices do *not* count from the end);
* ``wrap``: the index is taken modulo the axis size (so -1 is the last element);
* ``raise`` (take only): any index outside ``[0, size)`` raises MXNetError naming the index
  and the axis size. MXNet's 'raise' also rejected negative indices; so does mxlite.

An index into an axis of size 0 is an error in every mode (there is nothing to clip to).
"""
import math

import numpy as np

from .._core import index as _k
from ..base import (NARROW_FLOATS, as_number, dtype_kind, dtype_range, exact_value,
                    is_bfloat16, op_error)
from .common import F32, check_num_inputs, same_type, write_back
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register
from .shape_utils import check_alloc, check_shape, size_of

_CLIP_WRAP_RAISE = ("clip", "wrap", "raise")
_CLIP_WRAP = ("clip", "wrap")


# ---- shared helpers ------------------------------------------------------------------------
# ---- gradients -----------------------------------------------------------------------------
def _take_gradient(F, node, ograds):
    """d take(a, idx)/da scatters the head gradient back: ``_take_grad``; indices get none."""
    a, indices = node.inputs
    return [F._internal._take_grad(ograds[0], indices, a, axis=node.attrs.axis,
                                   mode=node.attrs.mode), None]


def _pick_gradient(F, node, ograds):
    """d pick(x, idx)/dx puts the head gradient where pick read: ``_pick_grad``."""
    data, index = node.inputs
    return [F._internal._pick_grad(ograds[0], index, data, axis=node.attrs.axis,
                                   keepdims=node.attrs.keepdims, mode=node.attrs.mode), None]


def _where_gradient(F, node, ograds):
    """d where(c, x, y): the head gradient goes to x where c is non-zero, to y elsewhere."""
    cond, x, _ = node.inputs
    g = ograds[0]
    zeros = F.zeros_like(g)
    return [None,
            F.where(cond, g, zeros) if node.wants[1] else None,
            F.where(cond, zeros, g) if node.wants[2] else None]


def _clip_gradient(F, node, ograds):
    """d clip(x)/dx = 1 inside [a_min, a_max], 0 outside (the bounds count as inside)."""
    x = node.inputs[0]
    inside = (x >= node.attrs.a_min) * (x <= node.attrs.a_max)
    return [ograds[0] * inside]


def _take_grad_gradient(F, node, ograds):
    """_take_grad is linear in grad: its adjoint is ``take``; indices and data get none."""
    _, indices, _ = node.inputs
    return [F.take(ograds[0], indices, axis=node.attrs.axis, mode=node.attrs.mode), None, None]


def _pick_grad_gradient(F, node, ograds):
    """_pick_grad is linear in grad: its adjoint is ``pick``; index and data get none."""
    _, index, _ = node.inputs
    return [F.pick(ograds[0], index, axis=node.attrs.axis, keepdims=node.attrs.keepdims,
                   mode=node.attrs.mode), None, None]


def _axis(op, axis, shape, arg="data"):
    """``axis`` normalised for an array of ``shape``; MXNetError naming both when out of range."""
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise op_error(op, f"axis={axis} is out of range for {arg} of shape {shape} "
                       f"({ndim} dimension(s))")
    return axis + ndim if axis < 0 else axis


def _split(shape, axis):
    """(outer, n, inner): the sizes before, at and after ``axis``."""
    return size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1:])


def _index_view(indices):
    """Indices in a dtype ``prepare_indices`` reads: float16 and bfloat16 widened, bool read
    as uint8."""
    if indices.dtype in NARROW_FLOATS:
        return indices.astype(F32)
    if indices.dtype == np.bool_:
        return indices.view(np.uint8)
    return indices


def _positions(xp, op, indices, n, mode, axis):
    """int64 positions of ``indices`` on an axis of size ``n`` (same shape as ``indices``).

    The conversion runs without the GIL and only counts invalid indices; the first one is
    found and reported here, after the kernel has returned.
    """
    pos = xp.empty(indices.shape, np.int64)
    nbad = _k.prepare_indices(_index_view(indices), pos, n, _k.MODES[mode])
    if nbad and mode != "drop":
        raise bad_index_error(op, indices, xp.argmax(pos.reshape(-1) < 0), n, axis)
    return pos


def bad_index_error(op, indices, k, n, axis):
    """The MXNetError for the invalid index at flat position ``k`` of ``indices`` (NaN, an
    axis of size 0, or out of range under mode 'raise'); shared with the GPU kernels."""
    bad = indices.reshape(-1)[k].item()
    if isinstance(bad, float) and math.isnan(bad):
        return op_error(op, f"index {bad} at position {k} of indices is not a number")
    if n == 0:
        return op_error(op, f"cannot index axis {axis} of size 0 (index {bad} at position "
                        f"{k} of indices)")
    return op_error(op, f"index {bad} at position {k} of indices is out of range for axis "
                    f"{axis} of size {n} (mode='raise' accepts 0 to {n - 1})")


def _no_bool_grad(op):
    def infer_type(dtypes, attrs):
        if dtypes[0] == np.bool_:
            raise op_error(op, "gradients are not defined for bool arrays (grad has dtype bool)")
        return [dtypes[0]]
    return infer_type


# ---- take ----------------------------------------------------------------------------------
def _take_out_shape(op, data, indices, axis):
    if len(data) == 0:
        raise op_error(op, f"data must have at least one dimension, got shape {data}")
    ax = _axis(op, axis, data)
    return ax, data[:ax] + tuple(indices) + data[ax + 1:]


def _take_shape(shapes, attrs):
    check_num_inputs("take", shapes, 2)
    return [check_shape("take", _take_out_shape("take", shapes[0], shapes[1], attrs.axis)[1])]


def _take_compute(rctx, ins, outs, attrs):
    data, indices = ins
    out = outs[0]
    ax = _axis("take", attrs.axis, data.shape)
    outer, n, inner = _split(data.shape, ax)
    if out.size == 0 and attrs.mode != "raise":
        return
    pos = _positions(rctx.xp, "take", indices, n, attrs.mode, ax)
    _k.take(data, pos, out, outer, n, inner)


register(OpDef(
    "take", inputs=("a", "indices"),
    params=(Param("axis", "int", 0, "the axis of a to take from; negative counts from the end"),
            Param("mode", "str", "clip", "out-of-range indices: 'clip', 'wrap' or 'raise'",
                  choices=_CLIP_WRAP_RAISE)),
    infer_shape=_take_shape, infer_type=same_type, compute={"cpu": _take_compute},
    gradient=_take_gradient,
    doc="""Take slices of ``a`` along ``axis`` at the given indices.

The output has shape ``a.shape[:axis] + indices.shape + a.shape[axis+1:]`` and a's dtype;
``out[..., j..., ...] = a[..., indices[j...], ...]``. Indices may be integers or floats
(truncated toward zero). Out-of-range indices follow ``mode``: 'clip' (default) clamps to
[0, size-1], 'wrap' takes them modulo the size, 'raise' raises MXNetError.

>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
>>> mx.nd.take(x, mx.nd.array([[0, 1], [1, 2]])).asnumpy().tolist()
[[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [5.0, 6.0]]]
>>> mx.nd.take(x, mx.nd.array([0, 3, -1]), axis=1, mode='wrap').asnumpy().tolist()
[[1.0, 2.0, 2.0], [3.0, 4.0, 4.0], [5.0, 6.0, 6.0]]
"""))


# ---- pick ----------------------------------------------------------------------------------
def _pick_geometry(op, data, index, axis, keepdims):
    """(axis or None, output shape) of pick; checks index's shape."""
    if axis is None:
        if size_of(index) != 1:
            raise op_error(op, f"with axis=None, index must hold one element, got shape {index}")
        return None, ((1,) * len(data) if keepdims else (1,))
    if len(data) == 0:
        raise op_error(op, f"data must have at least one dimension, got shape {data}")
    ax = _axis(op, axis, data)
    reduced, kept = data[:ax] + data[ax + 1:], data[:ax] + (1,) + data[ax + 1:]
    if tuple(index) not in (reduced, kept):
        raise op_error(op, f"index has shape {index}; for data of shape {data} and axis={axis} "
                       f"it must be {reduced} (or {kept})")
    # MXNet 1.x: picking along the only axis gives shape (1,), not a 0-d array
    return ax, (kept if keepdims or not reduced else reduced)


def _pick_split(data_shape, ax):
    if ax is None:                 # the flattened data
        return 1, size_of(data_shape), 1
    return _split(data_shape, ax)


def _pick_shape(shapes, attrs):
    check_num_inputs("pick", shapes, 2)
    return [_pick_geometry("pick", shapes[0], shapes[1], attrs.axis, attrs.keepdims)[1]]


def _pick_compute(rctx, ins, outs, attrs):
    data, index = ins
    ax, _ = _pick_geometry("pick", data.shape, index.shape, attrs.axis, attrs.keepdims)
    outer, n, inner = _pick_split(data.shape, ax)
    if outs[0].size == 0:
        return
    pos = _positions(rctx.xp, "pick", index, n, attrs.mode, "(flattened)" if ax is None else ax)
    _k.pick(data, pos, outs[0], outer, n, inner)


register(OpDef(
    "pick", inputs=("data", "index"), aliases=("choose_element_0index",),
    params=(Param("axis", "axis", -1, "the axis to pick along; None picks from the flattened "
                  "data"),
            Param("keepdims", "bool", False, "keep the picked axis as a dimension of size 1"),
            Param("mode", "str", "clip", "out-of-range indices: 'clip' or 'wrap'",
                  choices=_CLIP_WRAP)),
    infer_shape=_pick_shape, infer_type=same_type, compute={"cpu": _pick_compute},
    gradient=_pick_gradient,
    doc="""Pick one element along ``axis`` for every position of the other axes.

``index`` has data's shape without ``axis`` (or with it as size 1); the output is
``out[..., i...] = data[..., index[..., i...], i...]`` (``numpy.take_along_axis``), with
``axis`` dropped (or kept as size 1 with ``keepdims=True``). Indices may be integers or
floats (truncated); out-of-range ones are clipped (default) or wrapped.

>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
>>> mx.nd.pick(x, mx.nd.array([0, 1, 0]), axis=1).asnumpy().tolist()
[1.0, 4.0, 5.0]
>>> mx.nd.pick(x, mx.nd.array([0, 1]), axis=0).asnumpy().tolist()
[1.0, 4.0]

Picking along the only axis of a 1-d array gives shape (1,) (MXNet 1.x), as does
``axis=None`` without keepdims. ``choose_element_0index`` is the same operator (MXNet's
legacy name).
"""))


# ---- one_hot -------------------------------------------------------------------------------
def _one_hot_values(attrs):
    """on_value and off_value as exact scalars of the output dtype (MXNetError otherwise)."""
    dt = np.dtype(attrs.dtype)
    return (exact_value("one_hot", "on_value", attrs.on_value, dt),
            exact_value("one_hot", "off_value", attrs.off_value, dt))


def _one_hot_shape(shapes, attrs):
    check_num_inputs("one_hot", shapes, 1)
    if attrs.depth < 0:
        raise op_error("one_hot", f"depth must be non-negative, got {attrs.depth}")
    _one_hot_values(attrs)
    return [check_alloc("one_hot", tuple(shapes[0]) + (attrs.depth,), np.dtype(attrs.dtype))]


def _one_hot_type(dtypes, attrs):
    return [np.dtype(attrs.dtype)]


def _one_hot_compute(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    on, off = _one_hot_values(attrs)
    pos = _positions(xp, "one_hot", ins[0], attrs.depth, "drop", -1)
    _k.one_hot(pos, out, attrs.depth, xp.scalar(on, out.dtype), xp.scalar(off, out.dtype))


register(OpDef(
    "one_hot", inputs=("indices",),
    params=(Param("depth", "int", REQUIRED, "the size of the one-hot dimension"),
            Param("on_value", "number", 1, "the value where index == position (a number)"),
            Param("off_value", "number", 0, "the value everywhere else (a number)"),
            Param("dtype", "dtype", "float32", "the output dtype")),
    infer_shape=_one_hot_shape, infer_type=_one_hot_type, compute={"cpu": _one_hot_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""One-hot encoding: output shape ``indices.shape + (depth,)``.

``out[i..., j] = on_value if j == indices[i...] else off_value``. Float indices are truncated
toward zero; an index outside ``[0, depth)`` (NaN included) gives a row of ``off_value``, as
in MXNet. on_value and off_value must be representable in ``dtype`` (for integer dtypes:
integers inside the range, kept exact; for floats: no overflow to infinity; bool takes their
truth value), else MXNetError (MXNet cast them, wrapping -1 to 255 in uint8). A negative depth, or an output
too large to allocate, is an MXNetError naming the shape.

>>> mx.nd.one_hot(mx.nd.array([1, 0, 2, 5]), 3).asnumpy().tolist()
[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
"""))


# ---- where ---------------------------------------------------------------------------------
def _where_shape(shapes, attrs):
    check_num_inputs("where", shapes, 3)
    cond, x, y = (tuple(s) for s in shapes)
    if x != y:
        raise op_error("where", f"x and y must have the same shape, got {x} and {y}")
    if cond != x and not (len(cond) == 1 and len(x) >= 1 and cond[0] == x[0]):
        rows = f" or ({x[0]},) (one value per row of x)" if x else ""
        raise op_error("where", f"condition has shape {cond}; expected {x} (the shape of x)"
                       + rows)
    return [x]


def _where_type(dtypes, attrs):
    if dtypes[1] != dtypes[2]:
        raise op_error("where", f"x and y must have the same dtype, got {dtypes[1]} and "
                       f"{dtypes[2]}")
    return [dtypes[1]]


def _where_compute(rctx, ins, outs, attrs):
    cond, x, y = ins
    out = outs[0]
    if out.size == 0:
        return
    block = 1 if cond.shape == x.shape else out.size // x.shape[0]
    if cond.itemsize == 1:            # bool, int8, uint8: non-zero bytes are true
        mask = cond.view(np.uint8)
    elif is_bfloat16(cond.dtype):     # zero is all-zero magnitude bits, as in float16
        mask = rctx.xp.empty(cond.shape, np.uint8)
        _k.nonzero_mask(cond.view(np.float16), mask)
    else:
        mask = rctx.xp.empty(cond.shape, np.uint8)
        _k.nonzero_mask(cond, mask)
    _k.where(mask, x, y, out, block)


register(OpDef(
    "where", inputs=("condition", "x", "y"),
    infer_shape=_where_shape, infer_type=_where_type, compute={"cpu": _where_compute},
    gradient=_where_gradient,
    doc="""Elements of ``x`` where ``condition`` is non-zero, else of ``y``.

``x`` and ``y`` must have the same shape and dtype (the output's). ``condition`` (any dtype;
NaN counts as true) has x's shape, or is 1-d with one value per row: then it selects whole
rows ``x[i]`` / ``y[i]`` (MXNet's rule). No other broadcasting.

>>> mx.nd.where(mx.nd.array([1, 0, 1]), mx.nd.array([1, 2, 3]),
...             mx.nd.array([7, 8, 9])).asnumpy().tolist()
[1.0, 8.0, 3.0]
>>> mx.nd.where(mx.nd.array([0, 1]), mx.nd.array([[1, 2], [3, 4]]),
...             mx.nd.array([[5, 6], [7, 8]])).asnumpy().tolist()
[[5.0, 6.0], [3.0, 4.0]]
"""))


# ---- clip ----------------------------------------------------------------------------------
def _clip_bounds(attrs):
    """a_min and a_max as exact Python numbers; MXNetError for NaN, non-numbers or a_min > a_max."""
    a_min = as_number("clip", "a_min", attrs.a_min)
    a_max = as_number("clip", "a_max", attrs.a_max)
    if _isnan(a_min) or _isnan(a_max):
        raise op_error("clip", f"a_min and a_max must not be NaN, got a_min={a_min}, "
                       f"a_max={a_max}")
    if a_min > a_max:
        raise op_error("clip", f"a_min must not exceed a_max, got a_min={a_min}, a_max={a_max}")
    return a_min, a_max


def _isnan(v):
    return isinstance(v, float) and math.isnan(v)


def _isinf(v):
    return isinstance(v, float) and math.isinf(v)


def _float(v):
    """``v`` as a float; an int beyond float64 becomes the infinity of its sign."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _num(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def _dtype_bounds(dt, a_min, a_max):
    """The bounds clip applies to data of dtype ``dt``, exact.

    Integer dtypes (and bool, range [0, 1]): a_min rounds up, a_max rounds down (the integers
    of [a_min, a_max] are exactly those of [ceil(a_min), floor(a_max)]); a bound beyond the
    dtype's range on its harmless side changes nothing and is limited to the range. A bound
    that would make every result unrepresentable (a_min above the dtype's largest value, a_max
    below its smallest), or a range holding no integer, is an MXNetError. Float dtypes: the
    same for a finite bound that overflows to infinity in the dtype.
    """
    lo_t, hi_t = dtype_range(dt)
    if dtype_kind(dt) == "f":        # a finite bound that rounds to infinity in the dtype
        with np.errstate(over="ignore"):
            over_min = not _isinf(a_min) and dt.type(_float(a_min)) == np.inf
            over_max = not _isinf(a_max) and dt.type(_float(a_max)) == -np.inf
    else:
        over_min, over_max = a_min > hi_t, a_max < lo_t
    if over_min:
        raise op_error("clip", f"a_min={a_min} is above the largest {dt} value {_num(hi_t)}: "
                       f"every result would be a_min, which {dt} cannot hold")
    if over_max:
        raise op_error("clip", f"a_max={a_max} is below the smallest {dt} value {_num(lo_t)}: "
                       f"every result would be a_max, which {dt} cannot hold")
    if dtype_kind(dt) == "f":
        return _float(a_min), _float(a_max)
    lo = lo_t if a_min <= lo_t else math.ceil(a_min)
    hi = hi_t if a_max >= hi_t else math.floor(a_max)
    if lo > hi:
        raise op_error("clip", f"no {dt} value lies in [a_min={a_min}, a_max={a_max}]")
    return lo, hi


def _clip_shape(shapes, attrs):
    check_num_inputs("clip", shapes, 1)
    _clip_bounds(attrs)
    return [shapes[0]]


def _clip_type(dtypes, attrs):
    dt = dtypes[0]
    _dtype_bounds(dt, *_clip_bounds(attrs))
    return [dt]


def _clip_compute(rctx, ins, outs, attrs):
    x, y = ins[0], outs[0]
    dt = x.dtype
    lo, hi = _dtype_bounds(dt, *_clip_bounds(attrs))
    if dt in NARROW_FLOATS:          # stored, not computed: clip in float32, round once
        tmp = x.astype(F32)
        _k.clip(tmp, tmp, lo, hi)
        write_back(rctx.xp, tmp, y)
    else:
        _k.clip(x, y, lo, hi)


register(OpDef(
    "clip", inputs=("data",),
    params=(Param("a_min", "number", REQUIRED, "the lower bound (a number)"),
            Param("a_max", "number", REQUIRED, "the upper bound (a number)")),
    infer_shape=_clip_shape, backward_shape="same", infer_type=_clip_type,
    compute={"cpu": _clip_compute},
    gradient=_clip_gradient,
    elementwise=True,
    doc="""Limit every element to [a_min, a_max]: ``min(max(x, a_min), a_max)``.

The dtype is kept; NaN stays NaN. a_min > a_max (or a NaN bound) is an error. The bounds are
exact numbers (an int bound is not rounded through float). For integer (and bool) data the
result is exactly the nearest integer of [a_min, a_max]: a fractional a_min rounds up and a
fractional a_max rounds down; a bound beyond the dtype's range on the harmless side (a_min
below its smallest value, a_max above its largest) changes nothing. A bound that would make
the results unrepresentable (a_min above the dtype's largest value, a_max below its smallest;
for float data a finite bound that overflows to infinity) is an MXNetError, and so is a range
holding no integer for integer data. MXNet cast the bounds to the dtype, so clipping uint8
data to [-5, 10] wrapped -5 to 251 and int8 data to [200, 300] gave garbage.

>>> mx.nd.clip(mx.nd.array([-2, 0.5, 3]), 0, 1).asnumpy().tolist()
[0.0, 0.5, 1.0]
>>> mx.nd.clip(mx.nd.array([0, 3, 200], dtype='uint8'), -5, 10).asnumpy().tolist()
[0, 3, 10]
>>> mx.nd.clip(mx.nd.array([-100, 5, 100], dtype='int8'), -7.5, 1000).asnumpy().tolist()
[-7, 5, 100]
"""))


# ---- gradient scatters ---------------------------------------------------------------------
def _take_grad_shape(shapes, attrs):
    check_num_inputs("_take_grad", shapes, 3)
    grad, indices, data = (tuple(s) for s in shapes)
    _, expected = _take_out_shape("_take_grad", data, indices, attrs.axis)
    if grad != expected:
        raise op_error("_take_grad", f"grad has shape {grad}; take of data {data} with indices "
                       f"{indices} along axis {attrs.axis} has shape {expected}")
    return [data]


def _take_grad_compute(rctx, ins, outs, attrs):
    grad, indices, data = ins
    out, xp = outs[0], rctx.xp
    ax = _axis("_take_grad", attrs.axis, data.shape)
    outer, n, inner = _split(data.shape, ax)
    pos = (_positions(xp, "_take_grad", indices, n, attrs.mode, ax)
           if grad.size or attrs.mode == "raise" else xp.zeros(indices.shape, np.int64))
    if out.dtype in NARROW_FLOATS:
        _take_grad_f16(xp, grad, pos, out, outer, n, inner)
    else:
        _k.take_grad(grad, pos, out, outer, n, inner)


def _take_grad_f16(xp, grad, pos, out, outer, n, inner):
    """float16 (or bfloat16) ``_take_grad``: sums in float32, rounded once. With fewer indices than rows
    (an embedding table's gradient) only the rows indexed are summed, in the same order, and
    stored into the zeroed output: a float32 copy of the whole output would triple its memory
    and convert every element."""
    if pos.size >= n:
        tmp = xp.empty(out.shape, F32)
        _k.take_grad(grad.astype(F32), pos, tmp, outer, n, inner)
        write_back(xp, tmp, out)
        return
    rows, slot = _k.distinct_positions(pos)
    sums = xp.empty((outer, rows.size, inner), F32)
    _k.take_grad(grad.astype(F32), slot, sums, outer, rows.size, inner)
    rounded = xp.empty(sums.shape, out.dtype)
    write_back(xp, sums, rounded)
    xp.fill_zero(out)
    out.reshape((outer, n, inner))[:, rows, :] = rounded


register(OpDef(
    "_take_grad", inputs=("grad", "indices", "data"),
    params=(Param("axis", "int", 0, "the axis of the take"),
            Param("mode", "str", "clip", "the take's mode: 'clip', 'wrap' or 'raise'",
                  choices=_CLIP_WRAP_RAISE),
            Param("sparse_grad", "bool", False, "with axis 0: a row_sparse result holding "
                  "only the rows indexed (mx.nd; a compiled graph makes it dense)")),
    infer_shape=_take_grad_shape, infer_type=_no_bool_grad("_take_grad"),
    compute={"cpu": _take_grad_compute}, gradient=_take_grad_gradient,
    doc="""The adjoint of ``take(data, indices, axis, mode)`` (its gradient with respect to data).

Returns zeros of data's shape (grad's dtype) into which every slice of ``grad`` is added at
the position its index maps to under ``mode``: ``out[..., pos(indices[j]), ...] +=
grad[..., j, ...]``. Duplicate indices accumulate (``numpy.add.at``). ``data`` is read for its
shape only. Being linear in ``grad``, its own gradient is ``take(head_grad, indices, axis,
mode)`` with respect to grad and zero with respect to indices and data.

>>> g = mx.nd._internal._take_grad(mx.nd.ones((4, 2)), mx.nd.array([0, 2, 2, 9]),
...                                mx.nd.zeros((3, 2)))
>>> g.asnumpy().tolist()
[[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]]
"""))


def _pick_grad_shape(shapes, attrs):
    check_num_inputs("_pick_grad", shapes, 3)
    grad, index, data = (tuple(s) for s in shapes)
    _, expected = _pick_geometry("_pick_grad", data, index, attrs.axis, attrs.keepdims)
    if grad != expected:
        raise op_error("_pick_grad", f"grad has shape {grad}; pick of data {data} with index "
                       f"{index} along axis {attrs.axis} has shape {expected}")
    return [data]


def _pick_grad_compute(rctx, ins, outs, attrs):
    grad, index, data = ins
    out = outs[0]
    ax, _ = _pick_geometry("_pick_grad", data.shape, index.shape, attrs.axis, attrs.keepdims)
    outer, n, inner = _pick_split(data.shape, ax)
    if grad.size == 0:
        out.fill(0)
        return
    pos = _positions(rctx.xp, "_pick_grad", index, n, attrs.mode,
                     "(flattened)" if ax is None else ax)
    _k.pick_grad(grad, pos, out, outer, n, inner)


register(OpDef(
    "_pick_grad", inputs=("grad", "index", "data"),
    params=(Param("axis", "axis", -1, "the axis of the pick (None: flattened)"),
            Param("keepdims", "bool", False, "the pick's keepdims"),
            Param("mode", "str", "clip", "the pick's mode: 'clip' or 'wrap'",
                  choices=_CLIP_WRAP)),
    infer_shape=_pick_grad_shape, infer_type=_no_bool_grad("_pick_grad"),
    compute={"cpu": _pick_grad_compute}, gradient=_pick_grad_gradient,
    doc="""The adjoint of ``pick(data, index, axis, keepdims, mode)`` (its gradient w.r.t. data).

Returns zeros of data's shape (grad's dtype) with ``grad[..., i...]`` stored at
``[..., pos(index[..., i...]), i...]``, the element pick read. Every output of pick reads a
different element, so nothing accumulates. ``data`` is read for its shape only. Being
linear in ``grad``, its own gradient is ``pick(head_grad, index, axis, keepdims, mode)`` with
respect to grad and zero with respect to index and data.

>>> g = mx.nd._internal._pick_grad(mx.nd.array([5, 6]), mx.nd.array([1, 0]),
...                                mx.nd.zeros((2, 3)))
>>> g.asnumpy().tolist()
[[0.0, 5.0, 0.0], [6.0, 0.0, 0.0]]
"""))
