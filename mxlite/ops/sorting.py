"""Sorting and scans: topk, sort, argsort, cumsum, argmax_channel — plus smooth_l1, and the
gather/scatter pair ``_take_along_axis`` / ``_take_along_axis_grad`` that the value
gradients of topk and sort are made of.

Ordering is **stable** in both directions: equal elements keep their original order
(``argsort([0, 5, 5, 2], is_ascend=False)`` is ``[1, 2, 3, 0]``, as in MXNet), and NaN sorts
above every number (last ascending, first descending). The gradient of a sorted or top-k
value flows to the element it came from (``_take_along_axis_grad``, a scatter-add whose own
gradient is the gather ``_take_along_axis``), so gradients of any order follow; index and
mask outputs have zero gradient.
"""
import numpy as np

from .._core import reduce as _kr
from .._core import sorting as _k
from ..base import FLOAT_DTYPES, NARROW_FLOATS, dtype_kind, op_error
from .common import (F32, check_num_inputs, compute_dtype, truncates,
                     kernels, write_back)
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import normalize_axis, size_of

I64 = np.dtype(np.int64)
_INDEX_DTYPES = ("uint8", "int32", "int64", "float16", "float32", "float64")
_RET_TYPES = ("value", "indices", "mask", "both")


# ---- shared helpers ------------------------------------------------------------------------
def _geometry(op, shape, axis):
    """(axis or None, outer, n, inner) of a sort along ``axis`` of ``shape`` (None: the
    flattened array)."""
    if axis is None:
        return None, 1, size_of(shape), 1
    if len(shape) == 0:
        raise op_error(op, f"data must have at least one dimension, got shape {shape}")
    ax = normalize_axis(op, axis, len(shape))
    return ax, size_of(shape[:ax]), shape[ax], size_of(shape[ax + 1:])


def _check_index_dtype(op, dtype, n):
    """Indices 0..n-1 must be exact in ``dtype`` (float32 holds integers up to 2**24)."""
    dt = np.dtype(dtype)
    top = {"float16": 2 ** 11, "float32": 2 ** 24, "uint8": 2 ** 8 - 1,
           "int32": 2 ** 31 - 1}.get(dt.name)
    if top is not None and n - 1 > top:
        raise op_error(op, f"dtype={dt.name} cannot hold the indices 0..{n - 1} exactly (axis "
                       f"of size {n}); use dtype='int64'")


def _sort_input(x, ax):
    """The array the sort reads: the flattened data for axis=None; bool as uint8."""
    if x.dtype == np.bool_:
        x = x.view(np.uint8)
    return x.reshape(-1) if ax is None else x


# Elements sorted per step of a sort along an axis: the int64 positions NumPy builds are
# 8 bytes per element, so sorting all rows at once needs 8x an int8 input in scratch
# (32 GiB for 2**32 elements); a step over a block of rows needs at most 8 * _BLOCK bytes.
_BLOCK = 2 ** 22


def _row_blocks(outer, n, inner):
    """(start, stop) ranges of the outer index that each sort about _BLOCK elements (whole
    (n, inner) slices: a sort along the axis never crosses them)."""
    step = max(1, _BLOCK // max(1, n * inner))
    return [(a, min(a + step, outer)) for a in range(0, outer, step)]


def _as_rows(a, outer, n, inner):
    """``a`` seen as (outer, n, inner): a view of a C-contiguous ``a`` (writes reach it)."""
    return a.reshape(outer, n, inner)


def _blocked(xp, outs, fill):
    """Runs ``fill(targets)`` on C-contiguous stand-ins of ``outs`` (the outputs themselves
    when they are; else scratch arrays copied back after)."""
    targets = [o if o.flags.c_contiguous else xp.empty(o.shape, o.dtype) for o in outs]
    fill(targets)
    for o, t in zip(outs, targets):
        if t is not o:
            xp.copyto(o, t)


# ---- _take_along_axis and its adjoint ------------------------------------------------------
def _along_geometry(op, data, indices, axis):
    """(axis or None, k): checks that ``indices`` matches ``data`` except along ``axis``."""
    if axis is None:
        if len(indices) != 1:
            raise op_error(op, f"with axis=None indices must be 1-d, got shape {indices}")
        return None, indices[0]
    if len(data) == 0:
        raise op_error(op, f"data must have at least one dimension, got shape {data}")
    ax = normalize_axis(op, axis, len(data))
    if len(indices) != len(data) or any(a != b for i, (a, b) in enumerate(zip(indices, data))
                                        if i != ax):
        raise op_error(op, f"indices has shape {indices}; for data of shape {data} it must "
                       f"match every axis but axis={axis}")
    return ax, indices[ax]


def _positions(rctx, indices):
    """``indices`` as C-contiguous int64 positions (floats truncated toward zero); the
    kernels count the ones outside the axis (``_bad_index``)."""
    pos = indices if indices.dtype == I64 else indices.astype(I64)
    return rctx.xp.ascontiguousarray(pos)


def _bad_index(op, count, n):
    if count:
        raise op_error(op, f"{count} index value(s) outside [0, {n}) along the axis")


def _take_along_shape(shapes, attrs):
    check_num_inputs("_take_along_axis", shapes, 2)
    _along_geometry("_take_along_axis", shapes[0], shapes[1], attrs.axis)
    return [tuple(shapes[1])]


def _take_along_compute(rctx, ins, outs, attrs):
    data, indices = ins
    ax, outer, n, inner = _geometry("_take_along_axis", data.shape, attrs.axis)
    k = indices.shape[0] if ax is None else indices.shape[ax]
    pos = _positions(rctx, indices)
    _bad_index("_take_along_axis", _k.gather(data, pos, outs[0], outer, n, inner, k), n)


def _take_along_gradient(F, node, ograds):
    """Linear in data: the adjoint is the scatter-add ``_take_along_axis_grad``; indices
    get none."""
    data, indices = node.inputs
    return [F._internal._take_along_axis_grad(ograds[0], indices, data, axis=node.attrs.axis),
            None]


_AXIS_PARAM = Param("axis", "axis", -1, "the axis to gather along; None: the flattened data")

register(OpDef(
    "_take_along_axis", inputs=("data", "indices"), params=(_AXIS_PARAM,),
    infer_shape=_take_along_shape, infer_type=lambda dtypes, attrs: [dtypes[0]],
    compute={"cpu": _take_along_compute}, gradient=_take_along_gradient,
    doc="""Gather along an axis: ``out[..., j, ...] = data[..., indices[..., j, ...], ...]``
(``numpy.take_along_axis``).

``indices`` (any numeric dtype; floats are truncated) has data's shape except along ``axis``;
the output has indices' shape and data's dtype. An index outside ``[0, size)`` is an
MXNetError. With ``axis=None`` data is flattened and indices is 1-d.

>>> x = mx.nd.array([[10, 20, 30], [40, 50, 60]])
>>> mx.nd._internal._take_along_axis(x, mx.nd.array([[2, 0], [1, 1]]), axis=1).asnumpy().tolist()
[[30.0, 10.0], [50.0, 50.0]]
"""))


def _take_along_grad_shape(shapes, attrs):
    check_num_inputs("_take_along_axis_grad", shapes, 3)
    grad, indices, data = (tuple(s) for s in shapes)
    _along_geometry("_take_along_axis_grad", data, indices, attrs.axis)
    if grad != indices:
        raise op_error("_take_along_axis_grad", f"grad has shape {grad}; expected the shape "
                       f"of indices {indices}")
    return [data]


def _take_along_grad_type(dtypes, attrs):
    """The output has grad's dtype: a float, or an integer one (integer data with an integer
    head gradient, as MXNet's topk of int32 data takes; the sums wrap)."""
    if dtype_kind(dtypes[0]) not in "fiu":
        raise op_error("_take_along_axis_grad", f"grad must be a numeric array, got {dtypes[0]}")
    return [dtypes[0]]


def _take_along_grad_compute(rctx, ins, outs, attrs):
    grad, indices, data = ins
    out, xp = outs[0], rctx.xp
    ax, outer, n, inner = _geometry("_take_along_axis_grad", data.shape, attrs.axis)
    k = indices.shape[0] if ax is None else indices.shape[ax]
    pos = _positions(rctx, indices)
    work = compute_dtype(out.dtype)
    target = out if work == out.dtype else xp.empty(out.shape, work)
    xp.fill_zero(target)
    src = grad if grad.dtype == work else grad.astype(work)
    bad = _k.scatter_add(src.reshape(-1), pos.reshape(-1), target.reshape(-1),
                         outer, n, inner, k)
    _bad_index("_take_along_axis_grad", bad, n)
    write_back(xp, target, out)


def _take_along_grad_gradient(F, node, ograds):
    """Linear in grad: the adjoint is the gather ``_take_along_axis``; indices and data get
    none."""
    _, indices, _ = node.inputs
    return [F._internal._take_along_axis(ograds[0], indices, axis=node.attrs.axis), None, None]


register(OpDef(
    "_take_along_axis_grad", inputs=("grad", "indices", "data"),
    params=(Param("axis", "axis", -1, "the axis of the gather; None: the flattened data"),),
    infer_shape=_take_along_grad_shape, infer_type=_take_along_grad_type,
    compute={"cpu": _take_along_grad_compute}, gradient=_take_along_grad_gradient,
    doc="""The adjoint of ``_take_along_axis(data, indices, axis)``: zeros of data's shape
(grad's dtype) with ``out[..., indices[..., j, ...], ...] += grad[..., j, ...]`` (duplicate
indices accumulate). ``data`` is read for its shape only.

>>> g = mx.nd._internal._take_along_axis_grad(mx.nd.array([[1, 2]]), mx.nd.array([[2, 2]]),
...                                           mx.nd.zeros((1, 3)), axis=1)
>>> g.asnumpy().tolist()
[[0.0, 0.0, 3.0]]
"""))


# ---- topk ----------------------------------------------------------------------------------
def _topk_k(op, shape, attrs):
    ax, outer, n, inner = _geometry(op, shape, attrs.axis)
    k = attrs.k
    if k > n:
        raise op_error(op, f"k={k} exceeds the size {n} of axis {attrs.axis} of data with "
                       f"shape {shape}")
    return ax, outer, n, inner, (n if k < 1 else k)


def _topk_count(attrs):
    return 2 if attrs.ret_typ == "both" else 1


def _topk_shape(shapes, attrs):
    check_num_inputs("topk", shapes, 1)
    shape = tuple(shapes[0])
    ax, _, n, _, k = _topk_k("topk", shape, attrs)
    if attrs.ret_typ in ("indices", "both"):
        _check_index_dtype("topk", attrs.dtype, n)
    if attrs.ret_typ == "mask":
        return [shape]
    out = (k,) if ax is None else shape[:ax] + (k,) + shape[ax + 1:]
    return [out] * _topk_count(attrs)


def _topk_type(dtypes, attrs):
    data, index = dtypes[0], np.dtype(attrs.dtype)
    return {"value": [data], "mask": [data], "indices": [index],
            "both": [data, index]}[attrs.ret_typ]


def _topk_compute(rctx, ins, outs, attrs):
    """One block of rows at a time (``_row_blocks``): a block's positions are found, then
    gathered, scattered or cast into that block of the outputs."""
    xp = rctx.xp
    ax, outer, n, inner, k = _topk_k("topk", ins[0].shape, attrs)
    x = _as_rows(_sort_input(ins[0], ax), outer, n, inner)
    data = _as_rows(ins[0], outer, n, inner)
    mask = attrs.ret_typ == "mask"

    def fill(targets):
        res = [_as_rows(o, outer, n if mask else k, inner) for o in targets]
        if mask:
            xp.fill_zero(targets[0])
        for a0, a1 in _row_blocks(outer, n, inner):
            pos = _k.topk_positions(x[a0:a1], 1, k, attrs.is_ascend)
            if mask:
                ones = xp.ones(pos.shape, targets[0].dtype)
                _k.scatter(ones, pos, res[0][a0:a1], a1 - a0, n, inner, k)
                continue
            if attrs.ret_typ in ("value", "both"):
                _k.gather(data[a0:a1], pos, res[0][a0:a1], a1 - a0, n, inner, k)
            if attrs.ret_typ in ("indices", "both"):
                xp.cast_into(res[-1][a0:a1], pos)
    _blocked(xp, outs, fill)


def _topk_gradient(F, node, ograds):
    """The values' head gradient goes back to the elements they came from (a scatter-add
    through the int64 top-k indices, recomputed); indices and masks have zero gradient."""
    a = node.attrs
    x = node.inputs[0]
    if a.ret_typ in ("indices", "mask"):
        return [F.zeros_like(x)]
    idx = F.topk(x, axis=a.axis, k=a.k, ret_typ="indices", is_ascend=a.is_ascend,
                 dtype="int64")
    return [F._internal._take_along_axis_grad(ograds[0], idx, x, axis=a.axis)]


register(OpDef(
    "topk", inputs=("data",),
    params=(Param("axis", "axis", -1, "the axis to search; None: the flattened data"),
            Param("k", "int", 1, "how many elements; k < 1 takes the whole axis"),
            Param("ret_typ", "str", "indices", "what to return: 'value', 'indices', 'both' "
                  "(values, indices) or 'mask' (1 at the top-k positions, 0 elsewhere)",
                  choices=_RET_TYPES),
            Param("is_ascend", "bool", False, "take the k smallest (True) or largest (False)"),
            Param("dtype", "dtype", "float32", "the dtype of the indices",
                  choices=_INDEX_DTYPES)),
    infer_shape=_topk_shape, infer_type=_topk_type, compute={"cpu": _topk_compute},
    gradient=_topk_gradient, num_outputs=_topk_count,
    doc="""The k largest (or smallest, ``is_ascend=True``) elements along ``axis``, in order.

``ret_typ`` selects the output: 'indices' (default; positions along the axis, in ``dtype``),
'value', 'both' (``[values, indices]``) or 'mask' (data's shape and dtype, 1 where an element
is among the top k). The order is stable: equal elements are taken by increasing position, in
both directions; NaN counts as larger than every number. ``k < 1`` takes the whole axis;
``k`` above the axis size is an MXNetError, and so is an index dtype that cannot hold every
position exactly (MXNet silently rounded float32 indices above 2**24). The values' gradient
flows to the chosen elements; indices and masks get zero gradient.

>>> x = mx.nd.array([[3, 1, 2, 1], [0, 5, 5, 2]])
>>> mx.nd.topk(x, k=2).asnumpy().tolist()
[[0.0, 2.0], [1.0, 2.0]]
>>> mx.nd.topk(x, k=2, ret_typ='value', is_ascend=True).asnumpy().tolist()
[[1.0, 1.0], [0.0, 2.0]]
>>> mx.nd.topk(x, k=1, ret_typ='mask', axis=0).asnumpy().tolist()
[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 1.0]]
"""))


# ---- sort / argsort ------------------------------------------------------------------------
def _sort_shape(op):
    def infer_shape(shapes, attrs):
        check_num_inputs(op, shapes, 1)
        shape = tuple(shapes[0])
        ax, _, n, _ = _geometry(op, shape, attrs.axis)
        if op == "argsort":
            _check_index_dtype(op, attrs.dtype, n)
        return [(n,) if ax is None else shape]
    return infer_shape


def _sort_compute(rctx, ins, outs, attrs):
    """One block of rows at a time (``_row_blocks``: a block's sorted copy is the scratch)."""
    ax, outer, n, inner = _geometry("sort", ins[0].shape, attrs.axis)
    x = _as_rows(_sort_input(ins[0], ax), outer, n, inner)

    def fill(targets):
        out = targets[0].view(np.uint8) if targets[0].dtype == np.bool_ else targets[0]
        out = _as_rows(out, outer, n, inner)
        for a0, a1 in _row_blocks(outer, n, inner):
            _k.sort_values(x[a0:a1], 1, attrs.is_ascend, out[a0:a1])
    _blocked(rctx.xp, outs, fill)


def _argsort_compute(rctx, ins, outs, attrs):
    """One block of rows at a time (``_row_blocks``), each block's int64 positions cast
    into the output."""
    ax, outer, n, inner = _geometry("argsort", ins[0].shape, attrs.axis)
    x = _as_rows(_sort_input(ins[0], ax), outer, n, inner)

    def fill(targets):
        out = _as_rows(targets[0], outer, n, inner)
        for a0, a1 in _row_blocks(outer, n, inner):
            rctx.xp.cast_into(out[a0:a1], _k.argsort(x[a0:a1], 1, attrs.is_ascend))
    _blocked(rctx.xp, outs, fill)


def _sort_gradient(F, node, ograds):
    """Each sorted value's head gradient goes back to its source element (a scatter through
    the int64 argsort, recomputed)."""
    a, x = node.attrs, node.inputs[0]
    idx = F.argsort(x, axis=a.axis, is_ascend=a.is_ascend, dtype="int64")
    return [F._internal._take_along_axis_grad(ograds[0], idx, x, axis=a.axis)]


_SORT_PARAMS = (Param("axis", "axis", -1, "the axis to sort along; None: the flattened data"),
                Param("is_ascend", "bool", True, "ascending (True) or descending order"))

register(OpDef(
    "sort", inputs=("data",), params=_SORT_PARAMS, infer_shape=_sort_shape("sort"),
    infer_type=lambda dtypes, attrs: [dtypes[0]], compute={"cpu": _sort_compute},
    gradient=_sort_gradient,
    doc="""The elements sorted along ``axis`` (``axis=None``: the flattened array, 1-d).

Stable, NaN above every number. The gradient flows to each value's source element.

>>> mx.nd.sort(mx.nd.array([[3, 1, 2], [0, 5, 4]]), is_ascend=False).asnumpy().tolist()
[[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]]
"""))

register(OpDef(
    "argsort", inputs=("data",),
    params=_SORT_PARAMS + (Param("dtype", "dtype", "float32", "the dtype of the indices",
                                 choices=_INDEX_DTYPES),),
    infer_shape=_sort_shape("argsort"), infer_type=lambda dtypes, attrs: [np.dtype(attrs.dtype)],
    compute={"cpu": _argsort_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""The positions that sort ``data`` along ``axis``, in ``dtype`` (float32 by default,
as MXNet; an index dtype that cannot hold every position exactly is an MXNetError).

Stable in both directions: equal elements keep their order (MXNet's). NaN sorts above every
number.

>>> mx.nd.argsort(mx.nd.array([[3, 1, 2, 1], [0, 5, 5, 2]])).asnumpy().tolist()
[[1.0, 3.0, 2.0, 0.0], [0.0, 3.0, 1.0, 2.0]]
>>> mx.nd.argsort(mx.nd.array([0, 5, 5, 2]), is_ascend=False, dtype='int64').asnumpy().tolist()
[1, 2, 3, 0]
"""))


# ---- cumsum --------------------------------------------------------------------------------
_CUMSUM_DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64")


def _cumsum_out_dtype(dtype, attrs):
    if attrs.dtype is not None:
        return np.dtype(attrs.dtype)
    dt = np.dtype(dtype)
    if dt == np.bool_ or (dt.kind in "iu" and dt.itemsize < 8):
        return I64          # NumPy's rule: narrow integers accumulate in the platform int
    return dt


def _cumsum_shape(shapes, attrs):
    check_num_inputs("cumsum", shapes, 1)
    shape = tuple(shapes[0])
    ax, _, n, _ = _geometry("cumsum", shape, attrs.axis)
    return [(n,) if ax is None else shape]


def _cumsum_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    ax, outer, n, inner = _geometry("cumsum", x.shape, attrs.axis)
    work = compute_dtype(out.dtype)
    src = x if x.dtype == work else x.astype(work)
    target = out if work == out.dtype else rctx.xp.empty(out.shape, work)
    _k.cumsum(src.reshape(-1), target.reshape(-1), outer, n, inner)
    write_back(rctx.xp, target, out)


def _cumsum_gradient(F, node, ograds):
    """d cumsum: x_j reaches every output i >= j, so dx is the reversed cumulative sum of the
    head gradient: flip(cumsum(flip(g))) (reshaped back for axis=None, cast back to x's
    dtype when ``dtype`` changed it); zero where ``dtype`` makes float data integers (a
    piecewise-constant map)."""
    a = node.attrs
    x_shape, x_dtype = node.input_shapes[0], node.input_dtypes[0]
    if truncates(x_dtype, node.output_dtypes[0]):
        return [F.zeros_like(node.inputs[0])]
    ax = 0 if a.axis is None else a.axis
    g = F.flip(F.cumsum(F.flip(ograds[0], axis=ax), axis=ax), axis=ax)
    if a.axis is None:
        g = F.reshape(g, shape=x_shape)
    if node.output_dtypes[0] != x_dtype:
        g = F.cast(g, dtype=x_dtype)
    return [g]


register(OpDef(
    "cumsum", inputs=("a",),
    params=(Param("axis", "axis", None, "the axis to sum along; None: the flattened array"),
            Param("dtype", "dtype", None, "the output and accumulator dtype (None: a's dtype; "
                  "bool and integers narrower than int64 give int64)", choices=_CUMSUM_DTYPES)),
    infer_shape=_cumsum_shape,
    infer_type=lambda dtypes, attrs: [_cumsum_out_dtype(dtypes[0], attrs)],
    compute={"cpu": _cumsum_compute}, gradient=_cumsum_gradient,
    doc="""Cumulative sum along ``axis`` (MXNet's ``np.cumsum``): ``out[..., i, ...] =
sum(a[..., :i+1, ...])``; ``axis=None`` sums the flattened array (1-d result).

Sums run left to right in the output dtype (float16 accumulates in float32 and is rounded
once); integers wrap on overflow, as in NumPy. The gradient is the reversed cumulative sum of
the head gradient.

>>> mx.nd.cumsum(mx.nd.array([[1, 2, 3], [4, 5, 6]]), axis=1).asnumpy().tolist()
[[1.0, 3.0, 6.0], [4.0, 9.0, 15.0]]
>>> mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]], dtype='int32')).asnumpy().tolist()
[1, 3, 6, 10]
"""))


# ---- argmax_channel ------------------------------------------------------------------------
def _argmax_channel_shape(shapes, attrs):
    check_num_inputs("argmax_channel", shapes, 1)
    shape = tuple(shapes[0])
    if len(shape) < 2:
        raise op_error("argmax_channel", f"data must have at least 2 dimensions (batch, "
                       f"channel, ...), got shape {shape}")
    if shape[1] == 0:
        raise op_error("argmax_channel", f"cannot take the argmax of an empty channel axis: "
                       f"data shape {shape}")
    if shape[1] - 1 > 2 ** 24:          # float32 indices would round silently
        raise op_error("argmax_channel", f"{shape[1]} channels: its float32 output holds "
                       f"indices exactly up to 2**24; use argmax(data, axis=1) (int64)")
    return [shape[:1] + shape[2:]]


def _argmax_channel_compute(rctx, ins, outs, attrs):
    x = ins[0]
    if x.dtype == np.bool_:
        x = x.view(np.uint8)
    elif x.dtype in NARROW_FLOATS:
        x = x.astype(F32)
    pos = rctx.xp.empty(outs[0].shape, I64)
    kernels(rctx, _kr).argreduce(0, x.reshape(-1), pos.reshape(-1), x.shape[0], x.shape[1],
                                 size_of(x.shape[2:]))
    rctx.xp.cast_into(outs[0], pos)


register(OpDef(
    "argmax_channel", inputs=("data",), infer_shape=_argmax_channel_shape,
    infer_type=lambda dtypes, attrs: [F32], compute={"cpu": _argmax_channel_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""Index of the maximum along axis 1 (the channel axis), as float32 (MXNet).

The output drops axis 1: ``(N, C, ...) -> (N, ...)``. The first maximum wins on ties; NaN
counts as the maximum. float32 holds every index exactly up to 2**24, so more than 2**24 + 1
channels is an MXNetError (MXNet silently rounded); use ``argmax(data, axis=1)`` for int64
indices.

>>> mx.nd.argmax_channel(mx.nd.array([[1, 3, 2], [5, 1, 5]])).asnumpy().tolist()
[1.0, 0.0]
"""))


# ---- smooth_l1 -----------------------------------------------------------------------------
def _smooth_l1_type(dtypes, attrs):
    dt = np.dtype(dtypes[0])
    return [dt if dt in FLOAT_DTYPES else F32]


def _smooth_l1_compute(rctx, ins, outs, attrs):
    x, out = ins[0], outs[0]
    work = compute_dtype(out.dtype)
    src = x if x.dtype == work else x.astype(work)
    target = out if work == out.dtype else rctx.xp.empty(out.shape, work)
    s = float(attrs.scalar)
    _k.smooth_l1(src.reshape(-1), target.reshape(-1), s * s)
    write_back(rctx.xp, target, out)


def _smooth_l1_gradient(F, node, ograds):
    """f'(x) = sigma^2 x where sigma^2 |x| < 1, else sign(x): exactly clip(sigma^2 x, -1, 1)
    (so f'' = sigma^2 inside, 0 outside)."""
    s = float(node.attrs.scalar)
    return [ograds[0] * F.clip(node.inputs[0] * (s * s), a_min=-1.0, a_max=1.0)]


register(OpDef(
    "smooth_l1", inputs=("data",),
    params=(Param("scalar", "float", 1.0, "sigma: the quadratic zone is |x| < 1 / sigma**2"),),
    infer_shape=lambda shapes, attrs: [tuple(shapes[0])], backward_shape="same",
    infer_type=_smooth_l1_type, compute={"cpu": _smooth_l1_compute},
    gradient=_smooth_l1_gradient, elementwise=True,
    doc="""Smooth L1 (Huber-like) loss, element-wise, with ``sigma = scalar``:
``0.5 * (sigma * x)**2`` where ``|x| < 1 / sigma**2``, else ``|x| - 0.5 / sigma**2``.

Integer input is computed in float32 and returns float32 (MXNet truncated to the integer
type).

>>> mx.nd.smooth_l1(mx.nd.array([-2, -0.5, 0.25, 3])).asnumpy().tolist()
[1.5, 0.125, 0.03125, 2.5]
>>> mx.nd.smooth_l1(mx.nd.array([-0.5, 0.125]), scalar=2.0).asnumpy().tolist()
[0.375, 0.03125]
"""))
