"""contrib operators on plain arrays: div_sqrt_dim, gradientmultiplier, round_ste, sign_ste,
quadratic, allclose, arange_like, index_array, index_copy, boolean_mask and the four
interleaved attention products (interleaved_matmul_selfatt_qk / _valatt, _encdec_qk /
_valatt).

Compute functions use the device namespace (``rctx.xp``: ``arange``, ``matmul``,
``strided_copy``, ``cast_into``), the array methods NumPy and CuPy share, and the compute
function the same device has for ``round``, ``sign`` and ``take``, so one function serves
every device. Element-wise work on large arrays runs in blocks (bounded scratch memory).

Every gradient is a graph of registered operators: the attention products' are
``batch_dot`` between head-split views (``reshape``/``transpose``/``slice_axis``) and the
interleaving back is a ``concat``; index_copy's is index_copy of the head gradient with zeros
(old tensor) and ``take`` (new tensor); the straight-through estimators pass the head
gradient unchanged.
"""
import math

import numpy as np

from .._core import sorting as _sorting
from ..base import FLOAT_DTYPES, dtype_kind, op_error
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, get_op, register
from .shape_utils import normalize_axis, size_of

_BLOCK = 1 << 22          # elements of one block of element-wise work (scratch memory)


def _blocks(n):
    return [slice(s, min(n, s + _BLOCK)) for s in range(0, n, _BLOCK)]


def _float_type(op, names):
    """infer_type: every input a float dtype, all the same; the output has it."""
    def infer_type(dtypes, attrs):
        for name, dt in zip(names, dtypes):
            if np.dtype(dt) not in FLOAT_DTYPES:
                raise op_error(op, f"{name} must have a float dtype, got {np.dtype(dt)}")
        if len({np.dtype(d) for d in dtypes}) > 1:
            raise op_error(op, f"{', '.join(names)} must share a dtype, got "
                           f"{[str(np.dtype(d)) for d in dtypes]}")
        return [dtypes[0]]
    return infer_type


def _same_shape(shapes, attrs):
    return [tuple(shapes[0])]


def _matrix_of_rows(a):
    """a viewed as (rows, last axis); unlike reshape(-1, n) it works for a zero-sized
    last axis."""
    return a.reshape(size_of(a.shape[:-1]), a.shape[-1])


def _run_op(name, rctx, ins, outs):
    """Run the compute function op ``name`` has on this device, with its default attrs."""
    op = get_op(name)
    op.compute[rctx.kernels](rctx, ins, outs, op.default_attrs)


# ---- div_sqrt_dim, gradientmultiplier, round_ste, sign_ste, quadratic ------------------------
def _divide_compute(divisor_of):
    """out = data / divisor_of(data, attrs), element-wise in blocks (``out`` may be data);
    the divisor is rounded to data's dtype first, as MXNet's kernel divides."""
    def compute(rctx, ins, outs, attrs):
        x, out = ins[0].reshape(-1), outs[0].reshape(-1)
        d = divisor_of(ins[0], attrs)
        for b in _blocks(x.size):
            if d == 1.0:
                rctx.xp.copyto(out[b], x[b])
            else:
                rctx.xp.cast_into(out[b], x[b] / x.dtype.type(d))
    return compute


def _sqrt_dim(x, attrs):
    """sqrt of the last axis' length; 1 for a 0-d array or an empty last axis (nothing to
    divide)."""
    d = x.shape[-1] if x.ndim else 1
    return math.sqrt(d) if d else 1.0


register(OpDef(
    "_contrib_div_sqrt_dim", inputs=("data",),
    infer_shape=_same_shape, infer_type=_float_type("div_sqrt_dim", ("data",)),
    compute={"cpu": _divide_compute(_sqrt_dim)},
    gradient=lambda F, node, og: [F.contrib.div_sqrt_dim(og[0])],
    backward_shape="same", elementwise=True,
    doc="""``data / sqrt(data.shape[-1])``: the scaling of attention scores. Float dtypes
(MXNet also accepted integers, dividing in the integer type). Its gradient is the same
scaling of the head gradient.

>>> mx.nd.contrib.div_sqrt_dim(mx.nd.array([[2.0, 4.0, 6.0, 8.0]])).asnumpy().tolist()
[[1.0, 2.0, 3.0, 4.0]]
"""))


register(OpDef(
    "_contrib_gradientmultiplier", inputs=("data",),
    params=(Param("scalar", "float", 1.0, "the factor applied to the gradient"),
            Param("is_int", "bool", True, "kept for MXNet's signature (the scalar is used "
                  "as given)")),
    infer_shape=_same_shape, infer_type=_float_type("gradientmultiplier", ("data",)),
    compute={"cpu": _divide_compute(lambda x, attrs: 1.0)},
    gradient=lambda F, node, og: [og[0] * node.attrs.scalar],
    backward_shape="same", elementwise=True,
    doc="""The identity whose gradient is the head gradient times ``scalar`` (a gradient
reversal layer with ``scalar=-1``).

>>> mx.nd.contrib.gradientmultiplier(mx.nd.array([1.5, -2.0]), scalar=-1).asnumpy().tolist()
[1.5, -2.0]
"""))


def _ste_type(op):
    def infer_type(dtypes, attrs):
        if dtype_kind(dtypes[0]) not in "fiu":
            raise op_error(op, f"data must be a number array, got dtype {np.dtype(dtypes[0])}")
        return [dtypes[0]]
    return infer_type


def _ste(name, base, what):
    register(OpDef(
        f"_contrib_{name}", inputs=("data",),
        infer_shape=_same_shape, infer_type=_ste_type(name),
        compute={"cpu": lambda rctx, ins, outs, attrs: _run_op(base, rctx, ins, outs)},
        gradient=lambda F, node, og: [F.identity(og[0])],
        backward_shape="same", elementwise=True,
        doc=f"""``{base}(data)`` with the straight-through gradient: {what} in the forward
pass, the head gradient passed unchanged in the backward pass (the derivative of the
identity), so quantised values can be trained.

>>> mx.nd.contrib.{name}(mx.nd.array([-1.5, 0.4, 2.5])).asnumpy().tolist()
{[-2.0, 0.0, 3.0] if base == 'round' else [-1.0, 1.0, 1.0]}
"""))


_ste("round_ste", "round", "rounding half away from zero")
_ste("sign_ste", "sign", "the sign (-1, 0 or 1)")


def _quadratic_compute(rctx, ins, outs, attrs):
    x, out = ins[0].reshape(-1), outs[0].reshape(-1)
    a, b, c = attrs.a, attrs.b, attrs.c
    for s in _blocks(x.size):
        t = x[s] * a             # Horner: (a x + b) x + c
        t += b
        t *= x[s]
        t += c
        rctx.xp.cast_into(out[s], t)


register(OpDef(
    "_contrib_quadratic", inputs=("data",),
    params=(Param("a", "float", 0.0, "coefficient of the quadratic term"),
            Param("b", "float", 0.0, "coefficient of the linear term"),
            Param("c", "float", 0.0, "constant term")),
    infer_shape=_same_shape, infer_type=_float_type("quadratic", ("data",)),
    compute={"cpu": _quadratic_compute},
    gradient=lambda F, node, og: [og[0] * (node.inputs[0] * (2.0 * node.attrs.a)
                                           + node.attrs.b)],
    backward_shape="same", elementwise=True,
    doc="""``a * data**2 + b * data + c``, element-wise. The gradient is
``(2 a data + b)`` times the head gradient.

>>> mx.nd.contrib.quadratic(mx.nd.array([1.0, 2.0]), a=2, b=3, c=1).asnumpy().tolist()
[6.0, 15.0]
"""))


# ---- allclose ----------------------------------------------------------------------------------
def _allclose_shape(shapes, attrs):
    a, b = (tuple(s) for s in shapes)
    if a != b:
        raise op_error("allclose", f"a and b must have the same shape, got {a} and {b}")
    return [(1,)]


def _allclose_type(dtypes, attrs):
    a, b = (np.dtype(d) for d in dtypes)
    if a != b or dtype_kind(a) not in "fiu":
        raise op_error("allclose", f"a and b must be number arrays of one dtype, got {a} "
                       f"and {b}")
    return [np.dtype(np.uint8)]


def _close_block(a, b, attrs):
    """True where a[i] and b[i] are close: equal (infinities included), both NaN with
    ``equal_nan``, or finite with |a - b| <= atol + rtol |b|."""
    if a.dtype.kind != "f":        # (bfloat16 too: its arithmetic would round the bound)
        a, b = a.astype(np.float64), b.astype(np.float64)
    same = a == b
    if attrs.equal_nan:
        same |= (a != a) & (b != b)
    finite = (abs(a) < np.inf) & (abs(b) < np.inf)     # False for infinities and NaN
    a, b = a.copy(), b.copy()
    a[~finite] = 0       # no inf - inf (an invalid-value warning); decided by a == b above
    b[~finite] = 0
    near = (abs(a - b) <= abs(b) * attrs.rtol + attrs.atol) & finite
    return same | near


def _allclose_compute(rctx, ins, outs, attrs):
    a, b = ins[0].reshape(-1), ins[1].reshape(-1)
    close = True
    for s in _blocks(a.size):
        if bool((a[s] == b[s]).all()):
            continue                         # equal blocks need no tolerance arithmetic
        if not bool(_close_block(a[s], b[s], attrs).all()):
            close = False
            break
    outs[0].fill(1 if close else 0)


register(OpDef(
    "_contrib_allclose", inputs=("a", "b"),
    params=(Param("rtol", "float", 1e-05, "relative tolerance"),
            Param("atol", "float", 1e-08, "absolute tolerance"),
            Param("equal_nan", "bool", True, "NaN in a and NaN in b count as equal")),
    infer_shape=_allclose_shape, infer_type=_allclose_type,
    compute={"cpu": _allclose_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""1 (uint8, shape (1,)) when every ``|a - b| <= atol + rtol * |b|``, else 0. Equal
infinities are close, an infinity and a finite value are not (MXNet compared them with the
same formula, where ``inf <= inf`` holds); NaNs are close to each other only with
``equal_nan``. a and b must have one shape (no broadcasting, as MXNet) and one dtype.
MXNet 1.9.1 returned a 0-d array; mxlite returns shape (1,) as its other whole-array
reductions. A truth value: not differentiable.

>>> mx.nd.contrib.allclose(mx.nd.array([1.0, 2.0]), mx.nd.array([1.0, 2.0 + 1e-6])).asnumpy()
array([1], dtype=uint8)
"""))


# ---- arange_like, index_array ---------------------------------------------------------------
def _arange_like_shape(shapes, attrs):
    data = tuple(shapes[0])
    if attrs.repeat < 1:
        raise op_error("arange_like", f"repeat must be at least 1, got {attrs.repeat}")
    if attrs.axis is None:
        return [data]
    return [(data[normalize_axis("arange_like", attrs.axis, len(data))],)]


def _arange_like_compute(rctx, ins, outs, attrs):
    out = outs[0].reshape(-1)
    xp = rctx.xp
    for s in _blocks(out.size):
        i = xp.arange(s.stop - s.start, np.int64) + s.start
        i //= attrs.repeat
        xp.cast_into(out[s], i.astype(np.float64) * attrs.step + attrs.start)


register(OpDef(
    "_contrib_arange_like", inputs=("data",),
    params=(Param("start", "float", 0.0, "the first value"),
            Param("step", "float", 1.0, "spacing between values"),
            Param("repeat", "int", 1, "how often each value repeats"),
            Param("ctx", "str", "", "kept for MXNet's signature: the output is on data's "
                  "device"),
            Param("axis", "int", None, "count along this axis only (a 1-d output); "
                  "None: data's whole shape")),
    infer_shape=_arange_like_shape, infer_type=lambda dtypes, attrs: [dtypes[0]],
    compute={"cpu": _arange_like_compute},
    gradient=lambda F, node, og: [F.zeros_like(node.inputs[0])],
    doc="""``start + (i // repeat) * step`` for the flat positions ``i`` of an array shaped as
data (or as its ``axis``), in data's dtype (computed in float64, then cast). The values do
not depend on data's values: the gradient is zero.

>>> mx.nd.contrib.arange_like(mx.nd.zeros((2, 3)), start=1, repeat=2).asnumpy().tolist()
[[1.0, 1.0, 2.0], [2.0, 3.0, 3.0]]
"""))


def _index_array_axes(shape, attrs):
    if attrs.axes is None:
        return tuple(range(len(shape)))
    return tuple(normalize_axis("index_array", a, len(shape)) for a in attrs.axes)


def _index_array_compute(rctx, ins, outs, attrs):
    shape = ins[0].shape
    axes = _index_array_axes(shape, attrs)
    out = _matrix_of_rows(outs[0])
    xp = rctx.xp
    for s in _blocks(out.shape[0]):
        flat = xp.arange(s.stop - s.start, np.int64) + s.start
        for j, ax in enumerate(axes):
            inner = size_of(shape[ax + 1:])
            xp.copyto(out[s, j], (flat // inner) % shape[ax])


register(OpDef(
    "_contrib_index_array", inputs=("data",),
    params=(Param("axes", "axes", None, "the axes whose coordinates to give (negative "
                  "counts from the end); None: every axis"),),
    infer_shape=lambda shapes, attrs: [tuple(shapes[0]) + (
        len(_index_array_axes(tuple(shapes[0]), attrs)),)],
    infer_type=lambda dtypes, attrs: [np.dtype(np.int64)],
    compute={"cpu": _index_array_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""The coordinates of every element of data: ``out[i, j, ..., k]`` is the index of
that element along each of ``axes`` (int64, shape ``data.shape + (len(axes),)``).
Integer positions: not differentiable.

>>> mx.nd.contrib.index_array(mx.nd.zeros((2, 2))).asnumpy().tolist()
[[[0, 0], [0, 1]], [[1, 0], [1, 1]]]
"""))


# ---- index_copy -----------------------------------------------------------------------------
def _index_copy_shape(shapes, attrs):
    old, index, new = (tuple(s) for s in shapes)
    if len(old) < 1 or len(index) != 1:
        raise op_error("index_copy", f"old_tensor must have at least 1 dimension and "
                       f"index_vector exactly 1, got shapes {old} and {index}")
    if new != index + old[1:]:
        raise op_error("index_copy", f"new_tensor must have shape {index + old[1:]} (one row "
                       f"of old_tensor {old} per index), got {new}")
    return [old]


def _index_copy_type(dtypes, attrs):
    old, index, new = (np.dtype(d) for d in dtypes)
    if old != new:
        raise op_error("index_copy", f"old_tensor and new_tensor must share a dtype, got {old} "
                       f"and {new}")
    if index.kind not in "fiu":
        raise op_error("index_copy", f"index_vector must be a number array, got {index}")
    return [old]


def _rows(xp, index, n):
    """index_vector as int64 positions on the device; MXNetError for a position outside
    [0, n) or repeated (the row written would depend on the order of the writes)."""
    host = xp.to_host(index)
    rows = host.astype(np.int64)
    if index.dtype.kind == "f" and bool((rows != host).any()):
        raise op_error("index_copy", f"index_vector must hold whole numbers, got {host.tolist()}")
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= n):
        raise op_error("index_copy", f"index_vector {rows.tolist()} has a position outside "
                       f"[0, {n}) (the rows of old_tensor)")
    seen = set(rows.tolist())
    if len(seen) != rows.size:
        raise op_error("index_copy", f"index_vector {rows.tolist()} repeats a position")
    return xp.from_host(rows)


def _index_copy_compute(rctx, ins, outs, attrs):
    old, index, new = ins
    rows = _rows(rctx.xp, index, old.shape[0])
    rctx.xp.copyto(outs[0], old)
    outs[0][rows] = new


def _index_copy_gradient(F, node, ograds):
    """Rows of old_tensor that index_copy overwrote get no gradient (the head gradient with
    those rows zeroed, an index_copy of zeros); new_tensor gets the rows it was copied to."""
    old, index, new = node.inputs
    g = ograds[0]
    d_old = F.contrib.index_copy(g, index, F.zeros_like(new)) if node.wants[0] else None
    d_new = F.take(g, index, axis=0) if node.wants[2] else None
    return [d_old, None, d_new]


register(OpDef(
    "_contrib_index_copy", inputs=("old_tensor", "index_vector", "new_tensor"),
    infer_shape=_index_copy_shape, infer_type=_index_copy_type,
    compute={"cpu": _index_copy_compute}, gradient=_index_copy_gradient,
    doc="""old_tensor with its rows ``index_vector[i]`` replaced by ``new_tensor[i]``. The
positions must be whole numbers in ``[0, old_tensor.shape[0])`` and distinct: a repeated
position is an MXNetError (MXNet wrote the rows in an unspecified order, and its gradient
gave every copy the head gradient of the row that was kept).

>>> mx.nd.contrib.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([2, 0]),
...                          mx.nd.array([[1, 2], [3, 4]])).asnumpy().tolist()
[[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
"""))


# ---- interleaved attention products ------------------------------------------------------------
# MXNet's layout: a (T, B, heads * parts * D) projection holds, for each head, its ``parts``
# rows of D (q, k, v for self-attention; k, v for encoder-decoder) one after another. The
# products are per (batch, head): scores (B * heads, Tq, Tk), outputs (T, B, heads * D).
def _heads(op, attrs):
    if attrs.heads < 1:
        raise op_error(op, f"heads must be at least 1, got {attrs.heads}")
    return attrs.heads


def _split(op, shape, heads, parts, arg):
    """(T, B, D) of a (T, B, heads * parts * D) projection."""
    if len(shape) != 3 or shape[2] % (heads * parts):
        raise op_error(op, f"{arg} must be (seq_len, batch, heads * {parts} * head_dim) with "
                       f"heads={heads}, got shape {tuple(shape)}")
    return shape[0], shape[1], shape[2] // (heads * parts)


def _dims(shape, heads, parts):
    """(T, B, D) of a projection whose shape infer_shape has already checked."""
    return shape[0], shape[1], shape[2] // (heads * parts)


def _part(x, T, B, H, parts, D, i):
    """View (B, H, T, D) of part ``i`` of an interleaved projection on the device."""
    return x.reshape(T, B, H, parts, D)[:, :, :, i, :].transpose(1, 2, 0, 3)


def _scores_compute(self_attention):
    """qk: out (B*H, Tq, Tk) = Q K^T / sqrt(D)."""
    def compute(rctx, ins, outs, attrs):
        H = attrs.heads
        if self_attention:                # q and k from one projection
            T, B, D = _dims(ins[0].shape, H, 3)
            q, k = _part(ins[0], T, B, H, 3, D, 0), _part(ins[0], T, B, H, 3, D, 1)
            Tk = T
        else:
            T, B, D = _dims(ins[0].shape, H, 1)
            Tk = ins[1].shape[0]
            q, k = _part(ins[0], T, B, H, 1, D, 0), _part(ins[1], Tk, B, H, 2, D, 0)
        out = outs[0].reshape(B, H, T, Tk)
        rctx.xp.matmul(q, k.transpose(0, 1, 3, 2), out)
        out /= out.dtype.type(math.sqrt(D)) if D else 1
    return compute


def _values_compute(parts):
    """valatt: out (T, B, H*D) = merged heads of attention @ V."""
    def compute(rctx, ins, outs, attrs):
        H = attrs.heads
        T, B, D = _dims(ins[0].shape, H, parts)
        v = _part(ins[0], T, B, H, parts, D, parts - 1)
        Tq = ins[1].shape[1]
        tmp = rctx.xp.empty((B, H, Tq, D), outs[0].dtype)
        rctx.xp.matmul(ins[1].reshape(B, H, Tq, T), v, tmp)
        rctx.xp.strided_copy(tmp.transpose(2, 0, 1, 3), outs[0].reshape(Tq, B, H, D))
    return compute


def _selfatt_qk_shape(shapes, attrs):
    op = "interleaved_matmul_selfatt_qk"
    T, B, D = _split(op, shapes[0], _heads(op, attrs), 3, "queries_keys_values")
    return [(B * attrs.heads, T, T)]


def _selfatt_valatt_shape(shapes, attrs):
    op = "interleaved_matmul_selfatt_valatt"
    T, B, D = _split(op, shapes[0], _heads(op, attrs), 3, "queries_keys_values")
    if tuple(shapes[1]) != (B * attrs.heads, T, T):
        raise op_error(op, f"attention must have shape {(B * attrs.heads, T, T)} "
                       f"(batch * heads, seq_len, seq_len) for queries_keys_values "
                       f"{tuple(shapes[0])}, got {tuple(shapes[1])}")
    return [(T, B, attrs.heads * D)]


def _encdec_qk_shape(shapes, attrs):
    op = "interleaved_matmul_encdec_qk"
    H = _heads(op, attrs)
    Tq, B, D = _split(op, shapes[0], H, 1, "queries")
    Tk, Bk, Dk = _split(op, shapes[1], H, 2, "keys_values")
    if (Bk, Dk) != (B, D):
        raise op_error(op, f"keys_values {tuple(shapes[1])} must have the batch size and "
                       f"head_dim of queries {tuple(shapes[0])}: shape ({Tk}, {B}, {2 * H * D})")
    return [(B * H, Tq, Tk)]


def _encdec_valatt_shape(shapes, attrs):
    op = "interleaved_matmul_encdec_valatt"
    H = _heads(op, attrs)
    Tk, B, D = _split(op, shapes[0], H, 2, "keys_values")
    att = tuple(shapes[1])
    if len(att) != 3 or att[0] != B * H or att[2] != Tk:
        raise op_error(op, f"attention must have shape ({B * H}, query_len, {Tk}) (batch * "
                       f"heads, query_len, key_len) for keys_values {tuple(shapes[0])}, got "
                       f"{att}")
    return [(att[1], B, H * D)]


# The gradients, on symbols or arrays alike: head-split (B*H, T, D) views and back.
def _f_part(F, x, T, B, H, parts, D, i):
    p = F.slice_axis(F.reshape(x, shape=(T, B, H, parts, D)), axis=3, begin=i, end=i + 1)
    return F.reshape(F.transpose(F.reshape(p, shape=(T, B, H, D)), axes=(1, 2, 0, 3)),
                     shape=(B * H, T, D))


def _f_merge(F, y, T, B, H, D):
    """(B*H, T, D) -> (T, B, H, 1, D): one part of an interleaved projection."""
    return F.reshape(F.transpose(F.reshape(y, shape=(B, H, T, D)), axes=(2, 0, 1, 3)),
                     shape=(T, B, H, 1, D))


def _f_interleave(F, ys, T, B, H, D):
    """Parts (B*H, T, D) -> the (T, B, H * parts * D) projection."""
    merged = [_f_merge(F, y, T, B, H, D) for y in ys]
    whole = merged[0] if len(merged) == 1 else F.concat(*merged, dim=3)
    return F.reshape(whole, shape=(T, B, H * len(ys) * D))


def _empty_gradient(gradient):
    """An op with an empty input has an empty or all-zero output: zero gradients (reshape's
    code 0 would read a zero-sized target as "copy the dimension")."""
    def wrapped(F, node, ograds):
        if any(0 in tuple(shape) for shape in node.input_shapes):
            return [F.zeros_like(x) if want else None
                    for x, want in zip(node.inputs, node.wants)]
        return gradient(F, node, ograds)
    wrapped.__doc__ = gradient.__doc__
    return wrapped


def _selfatt_qk_gradient(F, node, ograds):
    """S = Q K^T / sqrt(D): dQ = G K / sqrt(D), dK = G^T Q / sqrt(D), dV = 0."""
    H = node.attrs.heads
    x, g = node.inputs[0], ograds[0]
    T, B, D = _dims(node.input_shapes[0], H, 3)
    q, k = _f_part(F, x, T, B, H, 3, D, 0), _f_part(F, x, T, B, H, 3, D, 1)
    s = 1.0 / math.sqrt(D)
    dq = F.batch_dot(g, k) * s
    dk = F.batch_dot(g, q, transpose_a=True) * s
    return [_f_interleave(F, [dq, dk, F.zeros_like(dq)], T, B, H, D)]


def _selfatt_valatt_gradient(F, node, ograds):
    """O = A V (heads merged): dA = G V^T, dV = A^T G, dQ = dK = 0."""
    H = node.attrs.heads
    x, att = node.inputs
    T, B, D = _dims(node.input_shapes[0], H, 3)
    v = _f_part(F, x, T, B, H, 3, D, 2)
    g = _f_part(F, ograds[0], T, B, H, 1, D, 0)
    dv = F.batch_dot(att, g, transpose_a=True)
    z = F.zeros_like(dv)
    return [_f_interleave(F, [z, z, dv], T, B, H, D) if node.wants[0] else None,
            F.batch_dot(g, v, transpose_b=True) if node.wants[1] else None]


def _encdec_qk_gradient(F, node, ograds):
    """S = Q K^T / sqrt(D): dQ = G K / sqrt(D), dK = G^T Q / sqrt(D), dV = 0."""
    H = node.attrs.heads
    qs, kv = node.inputs
    Tq, B, D = _dims(node.input_shapes[0], H, 1)
    Tk = node.input_shapes[1][0]
    q, k = _f_part(F, qs, Tq, B, H, 1, D, 0), _f_part(F, kv, Tk, B, H, 2, D, 0)
    s = 1.0 / math.sqrt(D)
    g = ograds[0]
    dq = _f_interleave(F, [F.batch_dot(g, k) * s], Tq, B, H, D) if node.wants[0] else None
    dk = None
    if node.wants[1]:
        dk_ = F.batch_dot(g, q, transpose_a=True) * s
        dk = _f_interleave(F, [dk_, F.zeros_like(dk_)], Tk, B, H, D)
    return [dq, dk]


def _encdec_valatt_gradient(F, node, ograds):
    """O = A V (heads merged): dA = G V^T, dV = A^T G, dK = 0."""
    H = node.attrs.heads
    kv, att = node.inputs
    Tk, B, D = _dims(node.input_shapes[0], H, 2)
    Tq = node.input_shapes[1][1]
    v = _f_part(F, kv, Tk, B, H, 2, D, 1)
    g = _f_part(F, ograds[0], Tq, B, H, 1, D, 0)
    dv = F.batch_dot(att, g, transpose_a=True)
    return [_f_interleave(F, [F.zeros_like(dv), dv], Tk, B, H, D) if node.wants[0] else None,
            F.batch_dot(g, v, transpose_b=True) if node.wants[1] else None]


_HEADS = (Param("heads", "int", REQUIRED, "the number of attention heads"),)


def _attention_op(name, inputs, infer_shape, compute, gradient, doc):
    register(OpDef(
        f"_contrib_interleaved_matmul_{name}", inputs=inputs, params=_HEADS,
        infer_shape=infer_shape, infer_type=_float_type(f"interleaved_matmul_{name}", inputs),
        compute={"cpu": compute}, gradient=_empty_gradient(gradient), grad_needs=("inputs",),
        doc=doc))


_attention_op(
    "selfatt_qk", ("queries_keys_values",), _selfatt_qk_shape, _scores_compute(True),
    _selfatt_qk_gradient,
    """Self-attention scores from one interleaved projection: queries_keys_values
``(T, B, heads * 3 * D)`` holds, per head, its query, key and value rows of D; the output
``(B * heads, T, T)`` is ``Q K^T / sqrt(D)`` for every (batch, head).

>>> mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.ones((2, 1, 6)), heads=1).shape
(1, 2, 2)
""")
_attention_op(
    "selfatt_valatt", ("queries_keys_values", "attention"), _selfatt_valatt_shape,
    _values_compute(3), _selfatt_valatt_gradient,
    """Attention applied to the values of an interleaved self-attention projection
(``(T, B, heads * 3 * D)``, see interleaved_matmul_selfatt_qk): attention
``(B * heads, T, T)`` times each head's values, the heads merged into ``(T, B, heads * D)``.

>>> mx.nd.contrib.interleaved_matmul_selfatt_valatt(mx.nd.ones((2, 1, 6)), mx.nd.ones((1, 2, 2)),
...                                                 heads=1).shape
(2, 1, 2)
""")
_attention_op(
    "encdec_qk", ("queries", "keys_values"), _encdec_qk_shape, _scores_compute(False),
    _encdec_qk_gradient,
    """Encoder-decoder attention scores: queries ``(Tq, B, heads * D)`` against the keys of
keys_values ``(Tk, B, heads * 2 * D)`` (per head, its key and value rows of D); the output
``(B * heads, Tq, Tk)`` is ``Q K^T / sqrt(D)``.

>>> mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.ones((3, 1, 2)), mx.nd.ones((4, 1, 4)),
...                                            heads=1).shape
(1, 3, 4)
""")
_attention_op(
    "encdec_valatt", ("keys_values", "attention"), _encdec_valatt_shape, _values_compute(2),
    _encdec_valatt_gradient,
    """Encoder-decoder attention applied to the values of keys_values
``(Tk, B, heads * 2 * D)``: attention ``(B * heads, Tq, Tk)`` times each head's values, the
heads merged into ``(Tq, B, heads * D)``.

>>> mx.nd.contrib.interleaved_matmul_encdec_valatt(mx.nd.ones((4, 1, 4)), mx.nd.ones((1, 3, 4)),
...                                                heads=1).shape
(3, 1, 2)
""")


# ---- count_sketch ------------------------------------------------------------------------------
def _count_sketch_shape(shapes, attrs):
    data, h, s = (tuple(x) for x in shapes)
    if len(data) < 1:
        raise op_error("count_sketch", "data must have at least 1 dimension (..., in_dim), "
                       "got shape ()")
    d = data[-1]
    for name, shape in (("h", h), ("s", s)):
        if shape not in ((1, d), (d,)):
            raise op_error("count_sketch", f"{name} must have shape (1, {d}) (one entry per "
                           f"input feature of data {data}), got {shape}")
    if attrs.out_dim < 1:
        raise op_error("count_sketch", f"out_dim must be at least 1, got {attrs.out_dim}")
    return [data[:-1] + (attrs.out_dim,)]


def _count_sketch_type(dtypes, attrs):
    data, h, s = (np.dtype(d) for d in dtypes)
    if data not in FLOAT_DTYPES or s != data:
        raise op_error("count_sketch", f"data and s must share a float dtype, got {data} and "
                       f"{s}")
    if h.kind not in "fiu":
        raise op_error("count_sketch", f"h must be a number array, got {h}")
    return [data]


def _buckets(xp, h, out_dim):
    """h as int64 bucket numbers on the device; MXNetError unless whole and in
    [0, out_dim)."""
    host = xp.to_host(h).reshape(-1)
    idx = host.astype(np.int64)
    if h.dtype.kind == "f" and bool((idx != host).any()):
        raise op_error("count_sketch", f"h must hold whole numbers, got {host.tolist()}")
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= out_dim):
        raise op_error("count_sketch", f"h {idx.tolist()} has a bucket outside [0, {out_dim}) "
                       f"(out_dim={out_dim})")
    return xp.from_host(idx)


_SKETCH_DTYPES = (np.dtype("float32"), np.dtype("float64"))   # mxlite._core.sorting.bucket_add


def _count_sketch_compute(rctx, ins, outs, attrs):
    data, h, s = ins
    d = data.shape[-1]
    idx = _buckets(rctx.xp, h, attrs.out_dim)
    rows = _matrix_of_rows(data)
    out = _matrix_of_rows(outs[0])
    out.fill(0)
    if rctx.kernels == "cpu" and data.dtype in _SKETCH_DTYPES and s.dtype == data.dtype \
            and rows.flags.c_contiguous and out.flags.c_contiguous:
        # the same products and sums, compiled: rows across threads (add.at is slow)
        _sorting.bucket_add(rows, idx, s.reshape(-1), out)
        return
    sign = s.reshape(1, d)
    for b in _blocks_of_rows(rows.shape[0], d):
        rctx.xp.add_at(out[b], (slice(None), idx), rows[b] * sign)


def _blocks_of_rows(n, width):
    step = max(1, _BLOCK // max(width, 1))
    return [slice(r, min(n, r + step)) for r in range(0, n, step)]


def _count_sketch_gradient(F, node, ograds):
    """out[..., h[i]] += s[i] data[..., i]: d data = s * g[..., h] (a take of the head
    gradient), d s = the sum over rows of data * g[..., h]; h (bucket numbers) gets none."""
    data, h, s = node.inputs
    nd = len(node.input_shapes[0])
    d = node.input_shapes[0][-1]
    picked = F.take(ograds[0], F.reshape(h, shape=(-1,)), axis=nd - 1)
    sign = F.reshape(s, shape=(1,) * (nd - 1) + (d,))
    d_data = F.broadcast_mul(picked, sign) if node.wants[0] else None
    d_s = None
    if node.wants[2]:
        total = F.reshape(data * picked, shape=(-1, d))
        d_s = F.reshape(F.sum(total, axis=0), shape=node.input_shapes[2])
    return [d_data, None, d_s]


register(OpDef(
    "_contrib_count_sketch", inputs=("data", "h", "s"),
    params=(Param("out_dim", "int", REQUIRED, "the output dimension (number of buckets)"),
            Param("processing_batch_size", "int", 32, "kept for MXNet's signature (rows run "
                  "in blocks of bounded memory)")),
    infer_shape=_count_sketch_shape, infer_type=_count_sketch_type,
    compute={"cpu": _count_sketch_compute}, gradient=_empty_gradient(_count_sketch_gradient),
    grad_needs=("inputs",),
    doc="""Count sketch: ``out[..., h[i]] += s[i] * data[..., i]`` for every input feature i,
an ``(..., in_dim) -> (..., out_dim)`` projection (MXNet: 2-D data, GPU only). h holds whole
bucket numbers in ``[0, out_dim)`` (else an MXNetError), s the signs (any values are
used as given). The gradient reaches data and s (MXNet's reached data only).

>>> mx.nd.contrib.count_sketch(mx.nd.array([[1.0, 2.0, 3.0]]), mx.nd.array([[0, 2, 0]]),
...                            mx.nd.array([[1, -1, 1]]), out_dim=3).asnumpy().tolist()
[[4.0, 0.0, -2.0]]
"""))


# ---- fft / ifft: MXNet's interleaved (real, imaginary) layout, unnormalised ----------------
def _fft_shape(inverse):
    op = "ifft" if inverse else "fft"

    def infer_shape(shapes, attrs):
        data = tuple(shapes[0])
        if len(data) < 1:
            raise op_error(op, "data must have at least 1 dimension, got shape ()")
        if attrs.compute_size < 1:
            raise op_error(op, f"compute_size must be at least 1, got {attrs.compute_size}")
        if inverse:
            if data[-1] % 2:
                raise op_error(op, f"data's last axis holds (real, imaginary) pairs: it must "
                               f"be even, got shape {data}")
            return [data[:-1] + (data[-1] // 2,)]
        return [data[:-1] + (2 * data[-1],)]
    return infer_shape


def _twiddles(rctx, d, cols, sign):
    """cos and sign * sin of 2 pi j k / d for j < d and k in ``cols`` (float64, (d, len)):
    the angle from (j k mod d), exact at multiples of a quarter turn."""
    xp = rctx.xp
    j = xp.arange(d, np.int64).reshape(d, 1)
    k = (xp.arange(cols.stop - cols.start, np.int64) + cols.start).reshape(1, -1)
    m = (j * k) % d
    theta = m.astype(np.float64) * (2 * math.pi / d)
    c, s = xp.empty(theta.shape, np.float64), xp.empty(theta.shape, np.float64)
    _run_op("cos", rctx, [theta], [c])
    _run_op("sin", rctx, [theta], [s])
    quarter = (4 * m) % d == 0
    q = (4 * m) // d
    for turn, (cv, sv) in enumerate(((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))):
        at = quarter & (q == turn)
        c[at] = cv
        s[at] = sv
    return c, s * sign


def _fft_compute(inverse):
    def compute(rctx, ins, outs, attrs):
        x, out = ins[0], outs[0]
        d = out.shape[-1] if inverse else x.shape[-1]
        rows = _matrix_of_rows(x)
        flat = _matrix_of_rows(out)
        step = max(1, _BLOCK // max(d, 1))
        for b in range(0, d, step):          # output frequencies / samples, in blocks
            cols = slice(b, min(d, b + step))
            c, s = _twiddles(rctx, d, cols, 1.0 if inverse else -1.0)
            for r in _blocks_of_rows(rows.shape[0], max(d, cols.stop - cols.start) * 2):
                _transform_rows(rctx, inverse, rows[r].astype(np.float64), flat[r], cols, c, s)
    return compute


def _transform_rows(rctx, inverse, rows, flat, cols, c, s):
    """One block: rows (float64) against the twiddles of output columns ``cols``."""
    xp = rctx.xp
    y = xp.empty((rows.shape[0], cols.stop - cols.start), np.float64)
    if inverse:           # y_k = sum_j re_j cos - im_j sin  (unnormalised, real part)
        w = xp.empty((2 * c.shape[0], c.shape[1]), np.float64)   # one product over the
        w[0::2] = c                                              # interleaved pairs (a
        w[1::2] = -s                                             # strided operand would
        xp.matmul(rows, w, y)                                    # miss BLAS)
        xp.cast_into(flat[:, cols], y)
    else:                 # X_j = sum_k x_k (cos - i sin), interleaved
        xp.matmul(rows, c, y)
        xp.cast_into(flat[:, 2 * cols.start:2 * cols.stop:2], y)
        xp.matmul(rows, s, y)
        xp.cast_into(flat[:, 2 * cols.start + 1:2 * cols.stop:2], y)


_COMPUTE_SIZE = (Param("compute_size", "int", 128, "kept for MXNet's signature (rows run "
                       "together; the transform matrix goes in blocks of bounded memory)"),)


register(OpDef(
    "_contrib_fft", inputs=("data",), params=_COMPUTE_SIZE,
    infer_shape=_fft_shape(False), infer_type=_float_type("fft", ("data",)),
    compute={"cpu": _fft_compute(False)},
    gradient=lambda F, node, og: [F.contrib.ifft(og[0])],
    doc="""The discrete Fourier transform of the last axis of real data: ``(..., d) ->
(..., 2 d)``, each frequency as an interleaved (real, imaginary) pair (MXNet's layout). The
transform is a matrix product in float64 (O(d^2) per row; MXNet ran cuFFT on GPU only).
fft and ifft are each other's adjoints (ifft is unnormalised), so each one's gradient is
the other.

>>> mx.nd.contrib.fft(mx.nd.array([[1.0, 2.0, 3.0, 4.0]])).asnumpy().tolist()
[[10.0, 0.0, -2.0, 2.0, -2.0, 0.0, -2.0, -2.0]]
"""))

register(OpDef(
    "_contrib_ifft", inputs=("data",), params=_COMPUTE_SIZE,
    infer_shape=_fft_shape(True), infer_type=_float_type("ifft", ("data",)),
    compute={"cpu": _fft_compute(True)},
    gradient=lambda F, node, og: [F.contrib.fft(og[0])],
    doc="""The inverse discrete Fourier transform of the last axis of interleaved (real,
imaginary) pairs, real part only and unnormalised (MXNet's cuFFT result: ``d`` times
NumPy's ``ifft(...).real``): ``(..., 2 d) -> (..., d)``. Its gradient is fft.

>>> mx.nd.contrib.ifft(mx.nd.contrib.fft(mx.nd.array([[1.0, 2.0, 3.0, 4.0]]))).asnumpy().tolist()
[[4.0, 8.0, 12.0, 16.0]]
"""))
