"""Array operators of MXNet 1.9.1 outside the older families: ``gather_nd``, ``scatter_nd``
(and ``_backward_gather_nd``, the scatter-add behind gather_nd's gradient;
``_scatter_set_nd``, NDArray's indexed assignment in MXNet), ``batch_take``, ``slice_like``,
``shape_array``, ``size_array``, ``_eye`` (``eye``), ``_linspace`` (``linspace``) and
``moments``.

The n-d index ops read ``indices`` of shape ``(M, Y0, ..., Yk)``: row ``m`` indexes axis
``m`` of the indexed array. Indices may have any dtype; as MXNet's bound check, an index
``i`` on an axis of size ``n`` must satisfy ``-n <= i <= n - 1`` (compared before any
truncation, so 2.2 on an axis of size 3 is out of range) and a negative one counts from the
end (``i + n``, then truncated toward zero: MXNet's order). Anything else, and NaN, is an
MXNetError naming the index, its position and the axis (MXNet's scatter_nd dropped such
writes silently).

Every compute function works through the device namespace (``rctx.xp``) and the array
methods NumPy and CuPy share, or calls the compute function the same device has for
``take``/``pick``, so it runs unchanged on a GPU.
"""
import numpy as np

from .._core import sorting as _sorting
from ..base import NARROW_FLOATS, dtype_kind, dtype_range, op_error
from .common import check_num_inputs, same_type, truncates
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, get_op, register
from .shape_utils import check_alloc, check_shape, size_of

I64 = np.dtype("int64")
F64 = np.dtype("float64")

_DERIVED = {}      # op name -> parsed attrs of the op a compute function calls


def _attrs_of(name, **kw):
    key = (name, tuple(sorted(kw.items())))
    if key not in _DERIVED:
        _DERIVED[key] = get_op(name).parse_attrs(kw)
    return _DERIVED[key]


def _run(rctx, name, ins, outs, **kw):
    """Run the compute function op ``name`` has on ``rctx``'s device."""
    get_op(name).compute[rctx.kernels](rctx, ins, outs, _attrs_of(name, **kw))


# ---- n-d indices -----------------------------------------------------------------------------
def _nd_geometry(op, indices, target, arg="data"):
    """(M, index part Y, trailing part X[M:]) for ``indices`` into an array of shape
    ``target``; MXNetError where they do not fit."""
    indices, target = tuple(indices), tuple(target)
    if len(indices) < 2:
        raise op_error(op, f"indices must have at least 2 dimensions (M, Y0, ...), got shape "
                       f"{indices}")
    m = indices[0]
    if m > len(target):
        raise op_error(op, f"indices of shape {indices} index {m} axes, but {arg} of shape "
                       f"{target} has {len(target)}")
    if m == 0:
        raise op_error(op, f"indices of shape {indices} index no axis (its first dimension "
                       f"is 0)")
    return m, indices[1:], target[m:]


def _bad_index(op, row, bad, m, n, what):
    """The MXNetError for the first true element of ``bad`` (a mask over ``row``)."""
    k = int(bad.reshape(-1).argmax())
    value = row.reshape(-1)[k].item()
    return op_error(op, f"index {value} at position {k} of indices[{m}] {what} axis {m} of "
                    f"size {n} (indices must lie in [-{n}, {n - 1}])")


def nd_flat_positions(xp, op, indices, dims):
    """int64 flat positions (shape ``indices.shape[1:]``) into the first ``M`` axes
    ``dims`` of an array, row-major; MXNetError for NaN or an index outside ``[-n, n-1]``."""
    flat = xp.zeros(indices.shape[1:], I64)
    if flat.size == 0:
        return flat
    stride = 1
    for m in range(len(dims) - 1, -1, -1):
        n, row = dims[m], indices[m]
        if dtype_kind(row.dtype) == "f":
            r = row.astype(F64)
            nan = r != r
            if bool(nan.any()):
                raise _bad_index(op, row, nan, m, n, "is not a number; it indexes")
            bad = (r < -n) | (r > n - 1)
            if bool(bad.any()):
                raise _bad_index(op, row, bad, m, n, "is out of range for")
            pos = (r + (r < 0) * float(n)).astype(I64)       # MXNet: add n, then truncate
        else:
            pos = row.astype(I64)
            bad = (pos < -n) | (pos > n - 1)
            if row.dtype.kind == "u" and row.dtype.itemsize == 8:
                bad = bad | (row > n - 1)                    # beyond int64: wrapped above
            if bool(bad.any()):
                raise _bad_index(op, row, bad, m, n, "is out of range for")
            pos = pos + (pos < 0) * n
        flat += pos * stride
        stride *= n
    return flat


# ---- gather_nd -------------------------------------------------------------------------------
def _gather_nd_shape(shapes, attrs):
    check_num_inputs("gather_nd", shapes, 2)
    _, ys, xs = _nd_geometry("gather_nd", shapes[1], shapes[0])
    return [check_shape("gather_nd", tuple(ys) + tuple(xs))]


def _gather_nd_compute(rctx, ins, outs, attrs):
    data, indices = ins
    out = outs[0]
    m = indices.shape[0]
    dims = data.shape[:m]
    flat = nd_flat_positions(rctx.xp, "gather_nd", indices, dims)
    if out.size == 0:
        return
    rows, inner = size_of(dims), size_of(data.shape[m:])
    _run(rctx, "take", [data.reshape(rows, inner), flat.reshape(-1)],
         [out.reshape(flat.size, inner)], axis=0, mode="clip")


def _gather_nd_gradient(F, node, ograds):
    """d gather_nd(data, idx)/d data adds the head gradient where gather_nd read:
    ``_backward_gather_nd``; the indices get none."""
    _, indices = node.inputs
    return [F._internal._backward_gather_nd(ograds[0], indices,
                                            shape=node.input_shapes[0]), None]


register(OpDef(
    "gather_nd", inputs=("data", "indices"),
    infer_shape=_gather_nd_shape, infer_type=same_type, compute={"cpu": _gather_nd_compute},
    gradient=_gather_nd_gradient,
    doc="""Gather elements or slices of ``data`` at n-d indices.

``indices`` has shape ``(M, Y0, ..., Yk)`` with ``1 <= M <= data.ndim``; the output has
shape ``(Y0, ..., Yk) + data.shape[M:]`` and data's dtype:
``out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]``. Indices may be of any
dtype; a negative index counts from the end, and one outside ``[-n, n-1]`` (or NaN) is an
MXNetError, as MXNet's bound check (floats are compared before truncation). The gradient
adds the head gradient back at the indices (``_backward_gather_nd``): repeated indices
accumulate.

>>> data = mx.nd.array([[0, 1], [2, 3]])
>>> mx.nd.gather_nd(data, mx.nd.array([[1, 1, 0], [0, 1, 0]])).asnumpy().tolist()
[2.0, 3.0, 0.0]
>>> mx.nd.gather_nd(data, mx.nd.array([[1, -2]])).asnumpy().tolist()
[[2.0, 3.0], [0.0, 1.0]]
"""))


# ---- scatter_nd and _backward_gather_nd ------------------------------------------------------
def _scatter_geometry(op, data, indices, shape):
    target = check_shape(op, shape, "shape")
    _, ys, xs = _nd_geometry(op, indices, target, "shape")
    want = tuple(ys) + tuple(xs)
    if tuple(data) != want:
        raise op_error(op, f"data has shape {tuple(data)}; with indices of shape "
                       f"{tuple(indices)} and shape={target} it must be {want}")
    return target


def _scatter_shape(op):
    def infer_shape(shapes, attrs):
        check_num_inputs(op, shapes, 2)
        return [_scatter_geometry(op, shapes[0], shapes[1], attrs.shape)]
    return infer_shape


def _scatter_backward_shape(in_shapes, out_shapes, attrs):
    """data's shape from indices' and ``shape``: ``indices.shape[1:] + shape[M:]``."""
    data, indices = in_shapes
    if data is None and indices is not None and len(indices) >= 1 and all(
            d is not None for d in indices):
        data = tuple(indices[1:]) + tuple(attrs.shape[indices[0]:])
    return [data, indices]


def _scatter_compute(accumulate):
    op = "_backward_gather_nd" if accumulate else "scatter_nd"

    def compute(rctx, ins, outs, attrs):
        data, indices = ins
        out, xp = outs[0], rctx.xp
        m = indices.shape[0]
        dims = out.shape[:m]
        flat = nd_flat_positions(xp, op, indices, dims)
        xp.fill_zero(out)
        if data.size == 0:
            return
        inner = size_of(out.shape[m:])
        target = out.reshape(size_of(dims), inner)
        values = data.reshape(flat.size, inner)
        if accumulate:
            xp.add_at(target, (flat.reshape(-1),), values)
        else:
            target[flat.reshape(-1)] = values
    return compute


def _scatter_nd_gradient(F, node, ograds):
    """scatter_nd is linear in data: its adjoint reads the head gradient back at the
    indices (``gather_nd``; with repeated indices every copy gets it, as MXNet)."""
    _, indices = node.inputs
    return [F.gather_nd(ograds[0], indices), None]


def _backward_gather_nd_gradient(F, node, ograds):
    """_backward_gather_nd is linear in data: its adjoint is ``gather_nd``."""
    _, indices = node.inputs
    return [F.gather_nd(ograds[0], indices), None]


_SHAPE = Param("shape", "shape", REQUIRED, "shape of the output")

register(OpDef(
    "scatter_nd", inputs=("data", "indices"), params=(_SHAPE,),
    infer_shape=_scatter_shape("scatter_nd"), backward_shape=_scatter_backward_shape,
    infer_type=same_type, compute={"cpu": _scatter_compute(False)},
    gradient=_scatter_nd_gradient,
    doc="""Scatter ``data`` into zeros of ``shape`` at n-d indices: the inverse of
``gather_nd``.

``indices`` has shape ``(M, Y0, ..., Yk)``; ``data`` must have shape
``(Y0, ..., Yk) + shape[M:]``; ``out[indices[0, y...], ..., indices[M-1, y...]] = data[y...]``
and zero elsewhere. Where indices repeat, one of the values is kept (which one is
unspecified, as MXNet). Indices follow gather_nd's rules: negative ones count from the end,
out-of-range ones and NaN are an MXNetError (MXNet dropped those writes). The gradient reads
the head gradient at the indices (``gather_nd``).

>>> mx.nd.scatter_nd(mx.nd.array([2, 3]), mx.nd.array([[1, 1], [0, 1]]),
...                  shape=(2, 2)).asnumpy().tolist()
[[0.0, 0.0], [2.0, 3.0]]
"""))

register(OpDef(
    "_backward_gather_nd", inputs=("data", "indices"), params=(_SHAPE,),
    infer_shape=_scatter_shape("_backward_gather_nd"), backward_shape=_scatter_backward_shape,
    infer_type=same_type, compute={"cpu": _scatter_compute(True)},
    gradient=_backward_gather_nd_gradient,
    doc="""``scatter_nd`` that adds: zeros of ``shape`` with ``data`` added at the n-d
indices, repeated indices accumulating (in the order of the indices). The gradient of
``gather_nd``, whose own gradient is ``gather_nd``.

>>> mx.nd._internal._backward_gather_nd(mx.nd.array([2, 3]), mx.nd.array([[1, 1], [0, 0]]),
...                                     shape=(2, 2)).asnumpy().tolist()
[[0.0, 0.0], [5.0, 0.0]]
"""))


# ---- _scatter_set_nd -------------------------------------------------------------------------
def _scatter_set_shape(shapes, attrs):
    check_num_inputs("_scatter_set_nd", shapes, 3)
    lhs, rhs, indices = (tuple(s) for s in shapes)
    target = _scatter_geometry("_scatter_set_nd", rhs, indices, attrs.shape)
    if lhs != target:
        raise op_error("_scatter_set_nd", f"lhs has shape {lhs}, but shape={target}")
    return [target]


def _scatter_set_backward_shape(in_shapes, out_shapes, attrs):
    lhs, rhs, indices = in_shapes
    lhs = tuple(attrs.shape) if lhs is None else lhs
    rhs = _scatter_backward_shape([rhs, indices], out_shapes, attrs)[0]
    return [lhs, rhs, indices]


def _scatter_set_type(dtypes, attrs):
    if dtypes[0] != dtypes[1]:
        raise op_error("_scatter_set_nd", f"lhs and rhs must have one dtype, got {dtypes[0]} "
                       f"and {dtypes[1]}")
    return [dtypes[0]]


def _scatter_set_compute(rctx, ins, outs, attrs):
    lhs, rhs, indices = ins
    out, xp = outs[0], rctx.xp
    m = indices.shape[0]
    dims = out.shape[:m]
    flat = nd_flat_positions(xp, "_scatter_set_nd", indices, dims)
    if xp.may_share_memory(out, rhs):           # out= rhs: read it before lhs lands
        rhs = rhs.copy()
    if not (out.shape == lhs.shape and xp.data_ptr(out) == xp.data_ptr(lhs)):
        xp.copyto(out, lhs)
    if rhs.size:
        inner = size_of(out.shape[m:])
        out.reshape(size_of(dims), inner)[flat.reshape(-1)] = rhs.reshape(flat.size, inner)


register(OpDef(
    "_scatter_set_nd", inputs=("lhs", "rhs", "indices"), params=(_SHAPE,),
    infer_shape=_scatter_set_shape, backward_shape=_scatter_set_backward_shape,
    infer_type=_scatter_set_type, compute={"cpu": _scatter_set_compute},
    gradient=None, in_place=True,
    doc="""``lhs`` with ``rhs`` written at n-d indices (``scatter_nd``'s rules; ``shape``
must be lhs's shape): MXNet's kernel for ``x[index arrays] = value``. MXNet ran it in place
on ``lhs`` (``out=lhs``); mxlite writes a new array unless ``out=`` names one. As in MXNet
it has no gradient (differentiating it is an MXNetError).

>>> mx.nd._internal._scatter_set_nd(mx.nd.ones((2, 2)), mx.nd.array([5]),
...                                 mx.nd.array([[1], [0]]), shape=(2, 2)).asnumpy().tolist()
[[1.0, 1.0], [5.0, 1.0]]
"""))


# ---- batch_take ------------------------------------------------------------------------------
def _batch_take_shape(shapes, attrs):
    check_num_inputs("batch_take", shapes, 2)
    a, indices = tuple(shapes[0]), tuple(shapes[1])
    if len(a) < 2:
        raise op_error("batch_take", f"a must have at least 2 dimensions, got shape {a}")
    if size_of(a[:-1]) != size_of(indices):
        raise op_error("batch_take", f"indices has shape {indices} ({size_of(indices)} "
                       f"elements); a of shape {a} has {size_of(a[:-1])} rows of {a[-1]}, "
                       f"one index each")
    return [indices]


def _batch_take_type(dtypes, attrs):
    if dtypes[1] != np.int32:
        raise op_error("batch_take", f"indices must be int32 (as MXNet), got {dtypes[1]}")
    return [dtypes[0]]


def _batch_take_compute(rctx, ins, outs, attrs):
    a, indices = ins
    if outs[0].size == 0:
        return
    rows = size_of(a.shape[:-1])
    _run(rctx, "pick", [a.reshape(rows, a.shape[-1]), indices.reshape(rows)],
         [outs[0].reshape(rows)], axis=1, keepdims=False, mode="clip")


register(OpDef(
    "batch_take", inputs=("a", "indices"),
    infer_shape=_batch_take_shape, infer_type=_batch_take_type,
    compute={"cpu": _batch_take_compute}, gradient=None,
    doc="""One element of every row of ``a`` (its last axis): ``out[i] =
a.reshape(-1, a.shape[-1])[i, indices.flat[i]]``, in indices' shape. ``indices`` must be
int32 with one index per row; an out-of-range index is clipped to ``[0, a.shape[-1] - 1]``.
Deprecated in MXNet (use ``pick``), which also registered no gradient for it; with data of
more than 2 dimensions MXNet read the wrong rows, mxlite reads the rows of the last axis.

>>> mx.nd.batch_take(mx.nd.array([[1, 2], [3, 4], [5, 6]]),
...                  mx.nd.array([0, 1, 5], dtype='int32')).asnumpy().tolist()
[1.0, 4.0, 6.0]
"""))


# ---- slice_like ------------------------------------------------------------------------------
def _slice_like_axes(data, like, axes):
    """The axes slice_like cuts (normalised against data's rank) and the output shape."""
    data, like = tuple(data), tuple(like)
    if not axes:
        if len(data) != len(like):
            raise op_error("slice_like", f"with axes=() every axis is sliced, so data and "
                           f"shape_like need one rank; got {data} and {like}")
        cut = tuple(range(len(data)))
    else:
        cut = []
        for ax in axes:
            a = ax + len(data) if ax < 0 else ax
            if not 0 <= a < len(data):
                raise op_error("slice_like", f"axis {ax} is out of range for data of shape "
                               f"{data}")
            if a >= len(like):
                raise op_error("slice_like", f"axis {ax} is out of range for shape_like of "
                               f"shape {like}")
            cut.append(a)
    out = list(data)
    for a in cut:
        if like[a] > data[a]:
            raise op_error("slice_like", f"axis {a}: shape_like has size {like[a]}, more than "
                           f"data's {data[a]} (data {data}, shape_like {like})")
        out[a] = like[a]
    return tuple(out)


def _slice_like_shape(shapes, attrs):
    check_num_inputs("slice_like", shapes, 2)
    return [_slice_like_axes(shapes[0], shapes[1], attrs.axes)]


def _slice_like_compute(rctx, ins, outs, attrs):
    out = outs[0]
    key = tuple(slice(0, n) for n in out.shape)
    rctx.xp.strided_copy(ins[0][key + (Ellipsis,)], out)


def _slice_like_gradient(F, node, ograds):
    """The head gradient written into zeros of data's shape at the leading corner
    (``_slice_scatter``); shape_like gets none (its values are never read)."""
    out_shape = _slice_like_axes(node.input_shapes[0], node.input_shapes[1], node.attrs.axes)
    return [F._internal._slice_scatter(ograds[0], shape=node.input_shapes[0],
                                       begin=(0,) * len(out_shape), end=out_shape), None]


register(OpDef(
    "slice_like", inputs=("data", "shape_like"),
    params=(Param("axes", "axes", (), "the axes to slice to shape_like's size (negative "
                  "counts from data's end); () slices every axis"),),
    infer_shape=_slice_like_shape, infer_type=same_type, compute={"cpu": _slice_like_compute},
    gradient=_slice_like_gradient, grad_needs=(),
    doc="""Slice ``data`` to the shape of ``shape_like`` (from index 0) along ``axes``
(every axis when ``axes`` is empty: then the ranks must match). Each sliced axis must exist
in both arrays and shape_like's size may not exceed data's. The output has data's dtype;
shape_like's values are never read, and its gradient is zero.

>>> x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
>>> mx.nd.slice_like(x, mx.nd.zeros((1, 2))).asnumpy().tolist()
[[1.0, 2.0]]
>>> mx.nd.slice_like(x, mx.nd.zeros((1, 9)), axes=(0,)).asnumpy().tolist()
[[1.0, 2.0, 3.0]]
"""))


# ---- shape_array, size_array -----------------------------------------------------------------
def _int64_out(dtypes, attrs):
    return [I64]


def _shape_array_compute(rctx, ins, outs, attrs):
    for i, n in enumerate(ins[0].shape):
        outs[0][i:i + 1].fill(n)


def _size_array_compute(rctx, ins, outs, attrs):
    outs[0].fill(ins[0].size)


register(OpDef(
    "shape_array", inputs=("data",),
    infer_shape=lambda shapes, attrs: [(len(shapes[0]),)], infer_type=_int64_out,
    compute={"cpu": _shape_array_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""The shape of ``data`` as a 1-d int64 array of ``data.ndim`` elements (a 0-d
``data`` gives an empty array; MXNet refused it). Integer output: not differentiable.

>>> mx.nd.shape_array(mx.nd.zeros((2, 3, 4))).asnumpy().tolist()
[2, 3, 4]
"""))

register(OpDef(
    "size_array", inputs=("data",),
    infer_shape=lambda shapes, attrs: [(1,)], infer_type=_int64_out,
    compute={"cpu": _size_array_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""The number of elements of ``data`` as an int64 array of shape (1,). Integer
output: not differentiable.

>>> mx.nd.size_array(mx.nd.zeros((2, 3, 4))).asnumpy().tolist()
[24]
"""))


# ---- _eye (eye), _linspace (linspace) --------------------------------------------------------
_BLOCK = 1 << 22        # values computed / converted at a time: temporaries stay O(_BLOCK)
_CTX = Param("ctx", "ctx", None, "device context (default: current context)")
_FLOAT32 = Param("dtype", "dtype", "float32", "element dtype")


def _dtype_out(dtypes, attrs):
    return [np.dtype(attrs.dtype)]


def _eye_shape(shapes, attrs):
    if attrs.N < 0 or attrs.M < 0:
        raise op_error("_eye", f"N and M must be non-negative, got N={attrs.N}, M={attrs.M}")
    return [check_alloc("_eye", (attrs.N, attrs.M or attrs.N), np.dtype(attrs.dtype))]


def _eye_compute(rctx, ins, outs, attrs):
    out = outs[0]
    rctx.xp.fill_zero(out)
    rows, cols = out.shape
    k = attrs.k
    first = k if k >= 0 else -k * cols                  # flat position of the diagonal's head
    length = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    if length:
        out.reshape(-1)[first:first + (length - 1) * (cols + 1) + 1:cols + 1].fill(1)


register(OpDef(
    "_eye", inputs=(), aliases=("eye",),
    params=(Param("N", "int", REQUIRED, "number of rows"),
            Param("M", "int", 0, "number of columns; 0 means N"),
            Param("k", "int", 0, "the diagonal: 0 the main one, positive above, negative below"),
            _CTX, _FLOAT32),
    infer_shape=_eye_shape, infer_type=_dtype_out, compute={"cpu": _eye_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""An ``N x M`` array (``M`` = N when 0) with ones on diagonal ``k`` and zeros
elsewhere (``numpy.eye``); a diagonal outside the array gives all zeros. ``eye`` is the same
operator (MXNet's ``nd.eye`` called ``_eye``). A creation op: not differentiable.

>>> mx.nd.eye(2, 3, 1).asnumpy().tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
"""))


def _linspace_plan(attrs):
    """(start, step, num) in float64, checked against the output dtype."""
    op, dt = "_linspace", np.dtype(attrs.dtype)
    start, stop, num = float(attrs.start), float(attrs.stop), attrs.num
    if num < 0:
        raise op_error(op, f"num must be non-negative, got {num}")
    for name, v in (("start", start), ("stop", stop)):
        if v != v or v in (float("inf"), float("-inf")):
            raise op_error(op, f"{name} must be a finite number, got {v}")
    div = num - 1 if attrs.endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    last = start + (num - 1) * step if num else start
    for name, v in (("start", start), ("the last value", last)):
        if num and dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= int(v) <= info.max:
                raise op_error(op, f"{name} {v} does not fit in {dt} ([{info.min}, "
                               f"{info.max}])")
        elif num and dtype_kind(dt) == "f" and abs(v) > dtype_range(dt)[1]:
            raise op_error(op, f"{name} {v} overflows {dt}")
    return start, step, num


def _linspace_shape(shapes, attrs):
    _, _, num = _linspace_plan(attrs)
    return [check_alloc("_linspace", (num,), np.dtype(attrs.dtype))]


def _linspace_compute(rctx, ins, outs, attrs):
    start, step, num = _linspace_plan(attrs)
    out = outs[0]
    if num == 0:
        return
    for b in range(0, num, _BLOCK):              # float64 temporaries of _BLOCK values
        m = min(_BLOCK, num - b)
        values = (rctx.xp.arange(m, F64) + float(b)) * step + start
        if attrs.endpoint and num > 1 and b + m == num:
            values[m - 1:].fill(float(attrs.stop))      # exactly stop, as numpy.linspace
        rctx.xp.cast_into(out[b:b + m], values)


register(OpDef(
    "_linspace", inputs=(), aliases=("linspace",),
    params=(Param("start", "float", REQUIRED, "the first value"),
            Param("stop", "float", REQUIRED, "the last value (with endpoint), else the bound"),
            Param("num", "int", REQUIRED, "the number of values"),
            Param("endpoint", "bool", True, "whether stop is the last value"),
            _CTX, _FLOAT32),
    infer_shape=_linspace_shape, infer_type=_dtype_out, compute={"cpu": _linspace_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""``num`` evenly spaced values from ``start`` to ``stop`` (included when
``endpoint``, else the values stop one step short of it): ``start + i * step`` computed in
float64, with ``step = (stop - start) / (num - 1)`` (or ``/ num`` without endpoint), then
converted to ``dtype`` (integers truncate toward zero, as MXNet). With endpoint the last
value is exactly ``stop``. start and stop must be finite, and every value must fit an
integer dtype (MXNet wrapped: -3.3 became 253 in uint8) and not overflow a float one.
``linspace`` is the same operator (MXNet's ``nd.linspace`` called ``_linspace``). A creation
op: not differentiable.

>>> mx.nd.linspace(2.0, 3.0, 5).asnumpy().tolist()
[2.0, 2.25, 2.5, 2.75, 3.0]
>>> mx.nd.linspace(0, 10, 4, endpoint=False, dtype='int32').asnumpy().tolist()
[0, 2, 5, 7]
"""))


# ---- moments ---------------------------------------------------------------------------------
def _moments_axes(shape, attrs):
    if attrs.axes is None or len(attrs.axes) == 0:
        raise op_error("moments", "axes must name at least one axis (MXNet refused empty axes; "
                       f"pass every axis, {tuple(range(len(shape)))}, for global moments)")
    axes = []
    for ax in attrs.axes:
        a = ax + len(shape) if ax < 0 else ax
        if not 0 <= a < len(shape):
            raise op_error("moments", f"axis {ax} is out of range for data of shape {shape}")
        if a in axes:
            raise op_error("moments", f"axes {attrs.axes} name axis {a} twice")
        axes.append(a)
    return tuple(sorted(axes))


def _moments_shape(shapes, attrs):
    check_num_inputs("moments", shapes, 1)
    shape = tuple(shapes[0])
    axes = _moments_axes(shape, attrs)
    if any(shape[a] == 0 for a in axes):
        raise op_error("moments", f"cannot take moments over an empty axis (data {shape}, "
                       f"axes {axes})")
    if attrs.keepdims:
        out = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        out = tuple(d for i, d in enumerate(shape) if i not in axes) or (1,)
    return [out, out]


def _moments_type(dtypes, attrs):
    if dtypes[0] == np.bool_:
        raise op_error("moments", "data must be numeric, got bool")
    return [dtypes[0], dtypes[0]]


def _divide_into(total, n):
    """``total / n`` in total's dtype, in place (``total`` is returned): float division, or
    integer division truncated toward zero (MXNet's integer mean): a negative total moved
    up by n - 1 first, so that the floor division rounds it toward zero. In place because
    fresh memory is what these passes cost (page faults: a new (N,) int64 temporary took
    longer than the division)."""
    if dtype_kind(total.dtype) == "f":
        total /= float(n)
        return total
    total[total < 0] += n - 1
    total //= n
    return total


def _moments_compute(rctx, ins, outs, attrs):
    """Two passes over blocks of data's first axis (each block converted to the work dtype
    in one scratch buffer, reused, so no temporary of data's size and no fresh memory per
    block): the sums give the mean, then the sums of squares about it give the variance."""
    x, xp = ins[0], rctx.xp
    axes = _moments_axes(x.shape, attrs)
    # integers as MXNet: the mean truncated in int64, the variance about it truncated too
    work = I64 if x.dtype.kind in "iu" else F64 if x.dtype == F64 else np.dtype("float32")
    kshape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    n = size_of([x.shape[a] for a in axes])
    rows = max(1, _BLOCK // max(1, size_of(x.shape[1:])))
    blocks = [(b, min(b + rows, x.shape[0])) for b in range(0, x.shape[0], rows)]
    scratch = xp.empty((min(rows, x.shape[0]),) + x.shape[1:], work)
    sums_of = xp.empty((1,) + kshape[1:], work)       # a block's sums over axis 0

    def converted(b0, b1):
        part = scratch[:b1 - b0]
        xp.cast_into(part, x[b0:b1])
        return part

    def sums(values_of):
        total = xp.zeros(kshape, work)
        for b0, b1 in blocks:
            part = values_of(b0, b1)
            if 0 in axes:
                _run(rctx, "sum", [part], [sums_of], axis=axes, keepdims=True)
                total += sums_of
            else:                       # a block's own rows of the sums: written in place
                _run(rctx, "sum", [part], [total[b0:b1]], axis=axes, keepdims=True)
        return _divide_into(total, n)

    mean = sums(converted)

    def squares(b0, b1):
        d = converted(b0, b1)
        d -= mean if 0 in axes else mean[b0:b1]
        d *= d
        return d
    var = sums(squares)
    xp.cast_into(outs[0], mean.reshape(outs[0].shape))
    xp.cast_into(outs[1], var.reshape(outs[1].shape))


def _moments_gradient(F, node, ograds):
    """d mean = g_mean / n on every element; d var = g_var * 2 (x - mean) / n, with the
    reduced axes broadcast back (registered ops throughout, so it differentiates again)."""
    x = node.inputs[0]
    shape = node.input_shapes[0]
    axes = _moments_axes(shape, node.attrs)
    kshape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    n = float(size_of([shape[a] for a in axes]))
    gm, gv = (F.reshape(g, shape=kshape) for g in ograds)
    mean = F.mean(x, axis=axes, keepdims=True)
    centred = F.broadcast_sub(x, mean)
    return [F.broadcast_add(F.broadcast_mul(centred, gv * (2.0 / n)), gm * (1.0 / n))]


register(OpDef(
    "moments", inputs=("data",),
    params=(Param("axes", "axes", None, "the axes to take the moments over (at least one)"),
            Param("keepdims", "bool", False, "keep the reduced axes as size-1 dimensions")),
    infer_shape=_moments_shape, infer_type=_moments_type, compute={"cpu": _moments_compute},
    gradient=_moments_gradient, num_outputs=2, output_names=("mean", "var"),
    doc="""The mean and the (population) variance of ``data`` over ``axes``: two outputs of
data's dtype, without the reduced axes (or with them as size 1 with ``keepdims``; reducing
every axis without keepdims gives shape (1,), as MXNet). float16 is computed in float32;
integers as MXNet, in exact int64 sums: the mean truncated toward zero, the variance the
truncated mean of the squares about that mean. ``axes`` must name at least one axis, each once, and
none may be empty. The gradient of both outputs is built from registered ops, so it
differentiates again.

>>> mean, var = mx.nd.moments(mx.nd.array([[1, 2], [3, 6]]), axes=(1,))
>>> mean.asnumpy().tolist(), var.asnumpy().tolist()
([1.5, 4.5], [0.25, 2.25])
"""))


# ---- _histogram ------------------------------------------------------------------------------
def _hist_uniform(attrs):
    return attrs.bin_cnt is not None


def _hist_range(attrs):
    """(lo, hi) of uniform bins: MXNet widens an empty range by 0.5 either side."""
    lo, hi = (float(v) for v in attrs.range)
    if not lo <= hi or lo != lo:
        raise op_error("_histogram", f"range must be (low, high) with low <= high, got "
                       f"{tuple(attrs.range)}")
    return (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)


def _hist_shape(shapes, attrs):
    if _hist_uniform(attrs):
        check_num_inputs("_histogram", shapes, 1)
        if attrs.range is None or len(attrs.range) != 2:
            raise op_error("_histogram", "bin_cnt needs range=(low, high) (as MXNet: both or "
                           "neither; without them the bins are an input)")
        if attrs.bin_cnt < 0:
            raise op_error("_histogram", f"bin_cnt must be non-negative, got {attrs.bin_cnt}")
        _hist_range(attrs)
        return [(attrs.bin_cnt,), (attrs.bin_cnt + 1,)]
    check_num_inputs("_histogram", shapes, 2)
    if attrs.range is not None:
        raise op_error("_histogram", "range goes with bin_cnt; with a bins input give neither")
    bins = tuple(shapes[1])
    if len(bins) != 1 or bins[0] < 2:
        raise op_error("_histogram", f"bins must be a 1-d array of at least 2 edges, got shape "
                       f"{bins}")
    return [(bins[0] - 1,), bins]


def _hist_type(dtypes, attrs):
    if dtypes[0] == np.bool_:
        raise op_error("_histogram", "data must be numeric, got bool")
    if len(dtypes) > 1 and dtypes[1] != dtypes[0]:
        raise op_error("_histogram", f"bins must have data's dtype {dtypes[0]}, got "
                       f"{dtypes[1]}")
    return [I64, dtypes[0]]


_HIST_KINDS = "bBhHilqfd"      # the dtypes mxlite._core.sorting.uniform_histogram counts


def _hist_compute(rctx, ins, outs, attrs):
    """Counts over blocks of the flattened data (float64 temporaries of one block): uniform
    bins by arithmetic (MXNet's ``(x - lo) * n / (hi - lo)``, x == hi in the last bin),
    explicit edges by counting the values at or above each edge."""
    xp, data = rctx.xp, ins[0].reshape(-1)
    counts, edges = outs
    xp.fill_zero(counts)
    if _hist_uniform(attrs):
        lo, hi = _hist_range(attrs)
        n = attrs.bin_cnt
        _run(rctx, "_linspace", [], [edges], start=lo, stop=hi, num=n + 1,
             dtype=np.dtype(edges.dtype).name)
        if n == 0:
            return
        if rctx.kernels == "cpu" and data.dtype.char in _HIST_KINDS \
                and data.flags.c_contiguous and counts.dtype == I64:
            # the same arithmetic compiled: one pass, chunks across threads
            _sorting.uniform_histogram(data, counts, lo, hi)
            return
        scale = n / (hi - lo)
        part = xp.empty((n,), I64)
        for b in range(0, data.size, _BLOCK):
            x = data[b:b + _BLOCK].astype(F64)
            x = x[(x >= lo) & (x <= hi)]
            if x.size:
                idx = ((x - lo) * scale).astype(I64)
                idx[idx >= n] = n - 1
                # the count of each bin: take's scatter-add of ones (int64, deterministic)
                _run(rctx, "_take_grad", [xp.ones(idx.shape, I64), idx, counts], [part],
                     axis=0, mode="clip")
                counts += part
        return
    bins = ins[1]
    xp.copyto(edges, bins)
    e = bins.astype(F64)
    if bool((e[1:] < e[:-1]).any()) or bool((e != e).any()):
        raise op_error("_histogram", "bins must be increasing edges (no NaN)")
    k = e.shape[0]
    above = xp.zeros((k,), I64)                  # values >= edge i (> for the last edge)
    for b in range(0, data.size, _BLOCK):
        x = data[b:b + _BLOCK].astype(F64)
        for i in range(k):
            hit = (x > e[i:i + 1]) if i == k - 1 else (x >= e[i:i + 1])
            above[i:i + 1] += hit.sum()
    xp.copyto(counts, above[:-1] - above[1:])


register(OpDef(
    "_histogram", inputs=("data", "bins"),
    list_inputs=lambda attrs: ("data",) if attrs.bin_cnt is not None else ("data", "bins"),
    params=(Param("bin_cnt", "int", None, "number of equal bins over range (then no bins "
                  "input)"),
            Param("range", "floats", None, "(low, high) of the equal bins, with bin_cnt")),
    infer_shape=_hist_shape, infer_type=_hist_type, compute={"cpu": _hist_compute},
    gradient=NON_DIFFERENTIABLE, num_outputs=2,
    doc="""The histogram of the flattened ``data``: int64 counts and the bin edges (in
data's dtype). Either ``bin_cnt`` equal bins over ``range=(low, high)`` (an empty range is
widened by 0.5 either side, as MXNet), or the edges as a 1-d input ``bins`` (increasing, at
least 2, data's dtype). A value belongs to ``[edge_i, edge_i+1)``, the last bin including
its upper edge; values outside the edges and NaN are not counted. ``mx.nd.histogram(a,
bins=10, range=None)`` is MXNet's front end: an int ``bins`` without range takes the range
of the data. Not differentiable (counts).

>>> counts, edges = mx.nd.histogram(mx.nd.array([0.5, 1.5, 2.2, 3.9, 4.0, -1]), bins=4,
...                                 range=(0, 4))
>>> counts.asnumpy().tolist(), edges.asnumpy().tolist()
([1, 1, 1, 2], [0.0, 1.0, 2.0, 3.0, 4.0])
"""))


# ---- _ravel_multi_index, _unravel_index ------------------------------------------------------
def _shape_param(op, attrs):
    if attrs.shape is None or len(attrs.shape) == 0:
        raise op_error(op, "shape (the shape the indices apply to) is required")
    return tuple(attrs.shape)


def _ravel_shape(shapes, attrs):
    check_num_inputs("_ravel_multi_index", shapes, 1)
    shape, data = _shape_param("_ravel_multi_index", attrs), tuple(shapes[0])
    if len(data) != 2 or data[0] != len(shape):
        raise op_error("_ravel_multi_index", f"data must be 2-d with one row per axis of shape="
                       f"{shape}, i.e. ({len(shape)}, n); got {data}")
    return [(data[1],)]


def _unravel_shape(shapes, attrs):
    check_num_inputs("_unravel_index", shapes, 1)
    shape = _shape_param("_unravel_index", attrs)
    return [check_shape("_unravel_index", (len(shape),) + tuple(shapes[0]))]


def _index_work(dtype, largest):
    """The integer dtype of index arithmetic on ``dtype`` data whose values, results and
    scalar factors and divisors are at most ``largest``: the data's own integer dtype where
    it holds ``largest`` (no conversion either way; NumPy divides int8 several times faster
    than int64), else int64."""
    if dtype.kind in "iu" and largest <= np.iinfo(dtype).max:
        return dtype
    return I64


def _index_values(op, xp, values, n, what, offset=0, work=I64):
    """``values`` (one block) as a new array of the integer dtype ``work``, floats truncated
    toward zero; MXNetError for NaN or a value outside ``[0, n)``."""
    if dtype_kind(values.dtype) == "f":
        v = values.astype(F64)
        nan = v != v
        if bool(nan.any()):
            raise op_error(op, f"{what}: index {values.reshape(-1)[int(nan.argmax())].item()} "
                           f"is not a number")
        bad = (v <= -1) | (v >= n)               # truncated toward zero: (-1, n) is [0, n)
    else:
        v = values
        bad = (v < 0) | (v >= n) if values.dtype.kind != "b" else v < 0
    if bool(bad.any()):
        k = int(bad.reshape(-1).argmax())
        raise op_error(op, f"{what}: index {values.reshape(-1)[k].item()} at position "
                       f"{offset + k} is out of range [0, {n - 1}]")
    return v.astype(work)


def _ravel_compute(rctx, ins, outs, attrs):
    data, out, xp = ins[0], outs[0], rctx.xp
    shape = tuple(attrs.shape)
    work = _index_work(data.dtype, max(size_of(shape) - 1, size_of(shape[1:])))
    for b in range(0, out.size, _BLOCK):
        flat = xp.zeros((min(_BLOCK, out.size - b),), work)
        stride = 1
        for m in range(len(shape) - 1, -1, -1):
            flat += _index_values("_ravel_multi_index", xp, data[m, b:b + _BLOCK], shape[m],
                                  f"row {m} of data (axis of size {shape[m]})", b,
                                  work) * stride
            stride *= shape[m]
        xp.cast_into(out[b:b + flat.size], flat)


def _unravel_compute(rctx, ins, outs, attrs):
    data, out, xp = ins[0].reshape(-1), outs[0], rctx.xp
    shape = tuple(attrs.shape)
    rows = out.reshape(len(shape), data.size)
    total = size_of(shape)
    work = _index_work(data.dtype, max(total - 1, max(shape)))
    for b in range(0, data.size, _BLOCK):
        rest = _index_values("_unravel_index", xp, data[b:b + _BLOCK], total,
                             f"data (flat indices into shape={shape})", b, work)
        for m in range(len(shape) - 1, -1, -1):
            # the remainder from the quotient: one integer division per axis, not two
            q = rest // shape[m]
            rest -= q * shape[m]
            xp.cast_into(rows[m, b:b + rest.size], rest)
            rest = q


_RAVEL_SHAPE = Param("shape", "shape", None, "the shape the multi-indices apply to")

register(OpDef(
    "_ravel_multi_index", inputs=("data",), aliases=("ravel_multi_index",),
    params=(_RAVEL_SHAPE,),
    infer_shape=_ravel_shape, infer_type=same_type, compute={"cpu": _ravel_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""Flat (row-major) indices of multi-indices: ``data`` has shape ``(len(shape), n)``,
column ``j`` one multi-index, and the output ``(n,)`` holds
``sum_m data[m, j] * prod(shape[m+1:])`` in data's dtype (``numpy.ravel_multi_index``).
Float indices are truncated toward zero; an index outside ``[0, shape[m])`` or NaN is an
MXNetError (MXNet computed a wrong flat index). Not differentiable (indices).

>>> mx.nd.ravel_multi_index(mx.nd.array([[3, 6, 6], [4, 5, 1]]), shape=(7, 6)).asnumpy().tolist()
[22.0, 41.0, 37.0]
"""))

register(OpDef(
    "_unravel_index", inputs=("data",), aliases=("unravel_index",),
    params=(_RAVEL_SHAPE,),
    infer_shape=_unravel_shape, infer_type=same_type, compute={"cpu": _unravel_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""Multi-indices of flat (row-major) indices: the output has shape
``(len(shape),) + data.shape``, row ``m`` the coordinate on axis ``m``
(``numpy.unravel_index`` stacked), in data's dtype. Float indices are truncated toward
zero; an index outside ``[0, prod(shape))`` or NaN is an MXNetError (MXNet gave coordinates
outside the shape). Not differentiable (indices).

>>> mx.nd.unravel_index(mx.nd.array([22, 41, 37]), shape=(7, 6)).asnumpy().tolist()
[[3.0, 6.0, 6.0], [4.0, 5.0, 1.0]]
"""))


# ---- _split_v2 -------------------------------------------------------------------------------
def _split_v2_parts(shape, attrs):
    """(axis, [(start, end)] per output) of a _split_v2 call on data of ``shape``."""
    op = "_split_v2"
    shape = tuple(shape)
    if not shape:
        raise op_error(op, "cannot split a 0-d array")
    axis = attrs.axis + len(shape) if attrs.axis < 0 else attrs.axis
    if not 0 <= axis < len(shape):
        raise op_error(op, f"axis={attrs.axis} is out of range for data of shape {shape}")
    n = shape[axis]
    if attrs.sections < 0:
        raise op_error(op, f"sections must be non-negative, got {attrs.sections}")
    if attrs.sections > 0:
        if n % attrs.sections:
            raise op_error(op, f"axis {axis} of size {n} does not split into {attrs.sections} "
                           "equal sections")
        size = n // attrs.sections
        starts = [i * size for i in range(attrs.sections)]
    else:
        starts = list(attrs.indices)
        if not starts:
            raise op_error(op, "give indices (the start of each part, the first 0) or "
                           "sections > 0")
        if starts[0] != 0:
            raise op_error(op, f"indices are the start of each part and begin with 0, got "
                           f"{tuple(starts)} (split_v2 adds the 0 to its split points)")
    parts = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else n
        if not start <= end <= n:
            raise op_error(op, f"part {i} would be [{start}, {end}) of axis {axis} of size "
                           f"{n}: split points must be increasing and at most {n}")
        if attrs.squeeze_axis and end - start != 1:
            raise op_error(op, f"squeeze_axis needs parts of size 1 along axis {axis}; part "
                           f"{i} has {end - start}")
        parts.append((start, end))
    return axis, parts


def _split_v2_count(attrs):
    # at least 1: no indices and no sections is refused by shape inference, naming both
    return attrs.sections if attrs.sections > 0 else max(1, len(attrs.get("indices", ())))


def _split_v2_shape(shapes, attrs):
    check_num_inputs("_split_v2", shapes, 1)
    shape = tuple(shapes[0])
    axis, parts = _split_v2_parts(shape, attrs)
    outs = []
    for start, end in parts:
        if attrs.squeeze_axis:
            outs.append(shape[:axis] + shape[axis + 1:])
        else:
            outs.append(shape[:axis] + (end - start,) + shape[axis + 1:])
    return outs


def _split_v2_compute(rctx, ins, outs, attrs):
    x = ins[0]
    axis, parts = _split_v2_parts(x.shape, attrs)
    lead = (slice(None),) * axis
    for (start, end), out in zip(parts, outs):
        index = start if attrs.squeeze_axis else slice(start, end)
        rctx.xp.strided_copy(x[lead + (index, Ellipsis)], out)


def _split_v2_gradient(F, node, ograds):
    """dx = the head gradients joined along the axis (``concat``; each re-expanded first when
    squeeze_axis removed it). Outputs without a gradient arrive as zeros."""
    axis, parts = _split_v2_parts(node.input_shapes[0], node.attrs)
    grads = list(ograds)
    if node.attrs.squeeze_axis:
        grads = [F.expand_dims(g, axis=axis) for g in grads]
    # empty parts add nothing (and a 0 in a shape reads as unknown to symbolic inference)
    grads = [g for g, (start, end) in zip(grads, parts) if end > start]
    if not grads:
        return [F.zeros(shape=node.input_shapes[0], dtype=node.input_dtypes[0])]
    return [grads[0] if len(grads) == 1 else F.concat(*grads, dim=axis)]


register(OpDef(
    "_split_v2", inputs=("data",),
    params=(Param("indices", "shape", REQUIRED, "the start of each part along axis (the "
                  "first 0); ignored when sections > 0"),
            Param("axis", "int", 1, "the axis to split along"),
            Param("squeeze_axis", "bool", False, "remove the axis from the parts (each must "
                  "have size 1 along it)"),
            Param("sections", "int", 0, "split into this many equal parts (0: by indices)")),
    infer_shape=_split_v2_shape, infer_type=lambda dtypes, attrs: [dtypes[0]] * _split_v2_count(
        attrs), compute={"cpu": _split_v2_compute}, gradient=_split_v2_gradient, grad_needs=(),
    num_outputs=_split_v2_count,
    doc="""Split ``data`` along ``axis`` into ``sections`` equal parts, or into parts
starting at ``indices`` (the first 0; a part ends where the next starts, the last at the end
of the axis; equal neighbours give an empty part). The operator behind ``split_v2(ary,
indices_or_sections, axis=0, squeeze_axis=False)``, which takes NumPy's split points (without
the leading 0) or a number of sections. One output is returned as an array, several as a
list (MXNet). The gradient joins the head gradients along the axis.

>>> [p.shape for p in mx.nd.split_v2(mx.nd.zeros((4, 6)), (1, 4), axis=1)]
[(4, 1), (4, 3), (4, 2)]
>>> [p.shape for p in mx.nd._internal._split_v2(mx.nd.zeros((4, 6)), indices=(), sections=3)]
[(4, 2), (4, 2), (4, 2)]
"""))


# ---- fill_element_0index, _onehot_encode -----------------------------------------------------
def _fill_element_shape(shapes, attrs):
    check_num_inputs("fill_element_0index", shapes, 3)
    lhs, mhs, rhs = (tuple(s) for s in shapes)
    if len(lhs) != 2 or mhs != (lhs[0],) or rhs != (lhs[0],):
        raise op_error("fill_element_0index", f"lhs must be 2-d (n, m) with mhs and rhs of "
                       f"shape (n,); got lhs {lhs}, mhs {mhs}, rhs {rhs}")
    return [lhs]


def _fill_element_type(dtypes, attrs):
    if dtypes[1] != dtypes[0]:
        raise op_error("fill_element_0index", f"mhs (the values) must have lhs's dtype "
                       f"{dtypes[0]}, got {dtypes[1]}")
    return [dtypes[0]]


def _fill_element_compute(rctx, ins, outs, attrs):
    lhs, mhs, rhs = ins
    out, xp = outs[0], rctx.xp
    rows, cols = lhs.shape
    pos = _index_values("fill_element_0index", xp, rhs, cols, f"rhs (column indices into "
                        f"{cols} columns)")
    if xp.may_share_memory(out, mhs):
        mhs = mhs.copy()
    if not (xp.data_ptr(out) == xp.data_ptr(lhs)):
        xp.copyto(out, lhs)
    if rows:
        out.reshape(-1)[xp.arange(rows, I64) * cols + pos] = mhs


def _fill_element_gradient(F, node, ograds):
    """Linear in lhs and mhs: lhs gets the head gradient with the filled elements zeroed
    (fill_element_0index of zeros), mhs the head gradient at them (``pick``); rhs none."""
    _, mhs, rhs = node.inputs
    g = ograds[0]
    return [F.fill_element_0index(g, F.zeros_like(mhs), rhs) if node.wants[0] else None,
            F.pick(g, rhs, axis=1) if node.wants[1] else None, None]


register(OpDef(
    "fill_element_0index", inputs=("lhs", "mhs", "rhs"),
    infer_shape=_fill_element_shape, infer_type=_fill_element_type,
    compute={"cpu": _fill_element_compute}, gradient=_fill_element_gradient, in_place=True,
    doc="""``lhs`` (n, m) with one element of every row replaced: ``out[i, rhs[i]] =
mhs[i]``. ``mhs`` has lhs's dtype; the column indices ``rhs`` may be of any dtype (floats
truncated toward zero) and must lie in ``[0, m)`` (MXNet skipped others silently; mxlite
raises MXNetError). MXNet registered no gradient; mxlite's is the linear map's (lhs: the
head gradient with the filled elements zeroed; mhs: the head gradient at them).

>>> mx.nd.fill_element_0index(mx.nd.zeros((2, 3)), mx.nd.array([5, 6]),
...                           mx.nd.array([2, 0])).asnumpy().tolist()
[[0.0, 0.0, 5.0], [6.0, 0.0, 0.0]]
"""))


def _onehot_encode_shape(shapes, attrs):
    check_num_inputs("_onehot_encode", shapes, 2)
    idx, like = tuple(shapes[0]), tuple(shapes[1])
    if len(like) != 2 or idx != (like[0],):
        raise op_error("_onehot_encode", f"rhs must be 2-d (n, depth) and lhs (the indices) of "
                       f"shape (n,); got lhs {idx}, rhs {like}")
    return [like]


def _onehot_encode_compute(rctx, ins, outs, attrs):
    out = outs[0]
    _run(rctx, "one_hot", [ins[0]], [out], depth=out.shape[1], dtype=np.dtype(out.dtype).name)


register(OpDef(
    "_onehot_encode", inputs=("lhs", "rhs"),
    infer_shape=_onehot_encode_shape, infer_type=lambda dtypes, attrs: [dtypes[1]],
    compute={"cpu": _onehot_encode_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    in_place=True,        # rhs is read for its shape only: out= rhs is MXNet's call
    doc="""One-hot rows in the shape and dtype of ``rhs`` (n, depth): ``out[i, lhs[i]] = 1``,
zero elsewhere; an index outside ``[0, depth)`` gives a row of zeros (``one_hot``'s rules).
The operator behind MXNet's deprecated ``mx.nd.onehot_encode(indices, out)``, which writes
into ``out`` (MXNet took float32 only; mxlite any dtype). Not differentiable.

>>> out = mx.nd.zeros((3, 4))
>>> mx.nd.onehot_encode(mx.nd.array([0, 3, 7]), out).asnumpy().tolist()
[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
"""))


# ---- cast_storage, amp_cast, amp_multicast ---------------------------------------------------
def _cast_storage_shape(shapes, attrs):
    check_num_inputs("cast_storage", shapes, 1)
    if attrs.stype == "csr" and len(shapes[0]) != 2:
        raise op_error("cast_storage", f"csr storage is 2-D, the data has shape {shapes[0]}")
    if attrs.stype == "row_sparse" and len(shapes[0]) < 1:
        raise op_error("cast_storage", "row_sparse storage needs at least 1 dimension")
    return [tuple(shapes[0])]


def _cast_storage_dense(rctx, ins, outs, attrs):
    # the dense values: what a compiled graph (which runs dense arrays) holds for any stype;
    # mx.nd reaches the op's storage rules first (mxlite.ops.sparse), which make the
    # sparse storage itself
    _copy_into(rctx, ins, outs, attrs)


def _copy_into(rctx, ins, outs, attrs):
    if ins[0] is not outs[0]:
        rctx.xp.copyto(outs[0], ins[0])


register(OpDef(
    "cast_storage", inputs=("data",),
    params=(Param("stype", "str", REQUIRED, "the output storage type: 'default' (dense), "
                  "'csr' (2-D) or 'row_sparse'", choices=("default", "csr", "row_sparse")),),
    infer_shape=_cast_storage_shape, backward_shape="same", infer_type=same_type,
    compute={"cpu": _cast_storage_dense}, elementwise=True,
    gradient=lambda F, node, ograds: [F.cast_storage(ograds[0], stype="default")],
    grad_needs=(),
    doc="""``data`` in storage type ``stype`` (a copy): 'default' (dense), 'csr' or
'row_sparse'. Dense converts to either sparse type (keeping every element that is not 0,
NaN included) and back; csr and row_sparse do not convert into each other (MXNet's rule).
The gradient is dense.

>>> mx.nd.cast_storage(mx.nd.array([[0, 1], [0, 0]]), stype='csr').indices.asnumpy().tolist()
[1]
"""))


# the dtypes automatic mixed precision moves between; float64 and the integers pass through
# (MXNet 1.9.1's amp_cast and amp_multicast: AMP never narrows a float64 model)
_F16, _F32 = np.dtype("float16"), np.dtype("float32")
_AMP_FLOATS = NARROW_FLOATS | {_F32}


def _amp_cast_type(dtypes, attrs):
    # (np.dtype(): a graph's seed may be a type such as np.float32, which no set holds)
    return [np.dtype(attrs.dtype) if np.dtype(dtypes[0]) in _AMP_FLOATS else dtypes[0]]


def _amp_cast_compute(rctx, ins, outs, attrs):
    rctx.xp.cast_into(outs[0], ins[0])


def _cast_back(F, node, ograds):
    """Each head gradient cast back to its input's dtype (zero where the forward cast took a
    float to an integer: a piecewise-constant map, as ``cast``)."""
    grads = []
    for g, want, din, dout in zip(ograds, node.wants, node.input_dtypes, node.output_dtypes):
        if not want:
            grads.append(None)
            continue
        if truncates(din, dout):
            g = F.zeros_like(g)
        grads.append(g if np.dtype(din) == np.dtype(dout) else F.cast(g, dtype=din))
    return grads


register(OpDef(
    "amp_cast", inputs=("data",),
    params=(Param("dtype", "dtype", REQUIRED, "the dtype float inputs are cast to"),),
    infer_shape=lambda shapes, attrs: [tuple(shapes[0])], backward_shape="same",
    infer_type=_amp_cast_type, compute={"cpu": _amp_cast_compute}, elementwise=True,
    gradient=_cast_back, grad_needs=(),
    doc="""Automatic mixed precision's cast: a float16, bfloat16 or float32 input is cast to
``dtype`` (bfloat16 rounds to nearest even); any other input (float64, integers) passes
through unchanged, as in MXNet 1.9.1. The gradient is the head gradient cast back to the
input's dtype (zero from a float to an integer dtype, as ``cast``).

>>> mx.nd.amp_cast(mx.nd.array([1.5, 2.5]), dtype='float16').dtype
<class 'numpy.float16'>
>>> mx.nd.amp_cast(mx.nd.array([1, 2], dtype='int32'), dtype='float16').dtype
<class 'numpy.int32'>
"""))

def _amp_multicast_types(dtypes, attrs):
    """float16/bfloat16/float32 inputs all go to the widest of them or, with cast_narrow,
    the narrowest; other dtypes pass through (MXNet)."""
    dtypes = [np.dtype(d) for d in dtypes]
    mixed = {d for d in dtypes if d in _AMP_FLOATS}
    if not mixed:
        return dtypes
    target = _amp_narrowest(mixed) if attrs.cast_narrow else _amp_widest(mixed)
    return [target if d in _AMP_FLOATS else d for d in dtypes]


def _amp_widest(mixed):
    """The narrowest dtype that holds every dtype of ``mixed``: float32 when it is there or
    when float16 meets bfloat16 (neither holds the other; MXNet took the first input's)."""
    return mixed.pop() if len(mixed) == 1 else _F32


def _amp_narrowest(mixed):
    """The one low-precision dtype of ``mixed`` (float32 if there is none)."""
    narrow = mixed & NARROW_FLOATS
    if len(narrow) > 1:
        raise op_error("amp_multicast", "cast_narrow with both float16 and bfloat16 inputs: "
                       "neither dtype holds the other's values (MXNet's choice depended on "
                       "the order of the inputs); cast them to one dtype first")
    return narrow.pop() if narrow else _F32


def _amp_multicast_shape(shapes, attrs):
    if attrs.num_outputs is not None and attrs.num_outputs != len(shapes):
        raise op_error("amp_multicast", f"num_outputs={attrs.num_outputs} but "
                       f"{len(shapes)} inputs were given (one output per input)")
    if not shapes:
        raise op_error("amp_multicast", "needs at least one input")
    return [tuple(s) for s in shapes]


def _amp_multicast_compute(rctx, ins, outs, attrs):
    for x, out in zip(ins, outs):
        if x is not out:
            rctx.xp.cast_into(out, x)


register(OpDef(
    "amp_multicast", inputs=("data",), variadic=True, key_var_num_args="num_outputs",
    params=(Param("num_outputs", "int", None, "number of inputs (and outputs); default: the "
                  "number given"),
            Param("cast_narrow", "bool", False, "cast to the narrowest type instead")),
    infer_shape=_amp_multicast_shape, infer_type=_amp_multicast_types,
    compute={"cpu": _amp_multicast_compute},
    num_outputs=lambda attrs: attrs.get("num_outputs") or 1,
    gradient=_cast_back, grad_needs=(),
    doc="""Automatic mixed precision's multi-cast: the float16, bfloat16 and float32 inputs are
all cast to the widest of their dtypes (float32 if any input is float32, or when float16 and
bfloat16 meet), or with ``cast_narrow`` to the narrowest (the low-precision one if any; both
float16 and bfloat16 is an MXNetError); inputs of other dtypes (float64, integers) pass
through unchanged, as in MXNet. One output per input; the gradients are the head gradients
cast back to the inputs' dtypes.

>>> a, b = mx.nd.amp_multicast(mx.nd.ones((2,)), mx.nd.ones((2,), dtype='float16'),
...                            num_outputs=2)
>>> a.dtype, b.dtype
(<class 'numpy.float32'>, <class 'numpy.float32'>)
"""))


# ---- reset_arrays ----------------------------------------------------------------------------
class _MutateAll(OpDef):
    """A variadic record whose kernel writes every input in place (MXNet's FMutateInputs
    listing all of them)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # non-empty after the declaration check (a variadic record may not name inputs):
        # invoke then bumps the version of every input mutated_indices gives
        self.mutate_inputs = self.inputs

    def mutated_indices(self, attrs):
        return tuple(range(len(self.list_inputs(attrs))))


def _reset_shape(shapes, attrs):
    if attrs.num_arrays is not None and attrs.num_arrays != len(shapes):
        raise op_error("reset_arrays", f"num_arrays={attrs.num_arrays} but {len(shapes)} "
                       "arrays were given")
    return []


def _reset_compute(rctx, ins, outs, attrs):
    for x in ins:
        rctx.xp.fill_zero(x)


register(_MutateAll(
    "reset_arrays", inputs=("data",), variadic=True, key_var_num_args="num_arrays",
    params=(Param("num_arrays", "int", None, "number of arrays (default: the number given)"),),
    infer_shape=_reset_shape, infer_type=lambda dtypes, attrs: [],
    compute={"cpu": _reset_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    num_outputs=0,
    doc="""Set every element of every input array to zero, in place (the arrays' version
counters advance, so a gradient that saved one of them raises). No outputs: ``mx.nd`` returns
an empty list, as MXNet. Arrays of any dtype (MXNet took float dtypes only).

>>> a, b = mx.nd.ones((2,)), mx.nd.ones((3,), dtype='int32')
>>> mx.nd.reset_arrays(a, b, num_arrays=2)
[]
>>> a.asnumpy().tolist(), b.asnumpy().tolist()
([0.0, 0.0], [0, 0, 0])
"""))
