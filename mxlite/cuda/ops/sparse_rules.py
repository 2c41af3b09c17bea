"""GPU compute of the storage rules of ``mxlite/ops/sparse`` (``rule.compute['gpu']``).

The rules whose CPU function is table-driven run the same table on the GPU: the value rules
(``abs``, ``x * 2``, ``cast``, ...) map the stored values with the op's own GPU element-wise
kernel (generated from ``kernel_table.py``), the lazy optimizer updates run the op's own GPU
update kernel (``mx_optim.h``) on the gathered rows, and a dense+sparse sum runs the GPU's
``elemwise_add``/``elemwise_sub``. The index work is the kernels of ``sparse_kernels``:
merges of sorted int64 positions by binary search (``elemwise_add/sub/mul``, ``add_n``,
``_sparse_retain``; the union's keys sorted by the library), row gathers and scatters, the deterministic ``segment_add`` of
``_take_grad``. ``dot``, ``sum``/``mean`` and ``_square_sum`` are in ``sparse_dot``.

``FALLBACK`` names the rules without GPU kernels: on a GPU such a call runs the op's dense
GPU kernels on dense copies and converts the result to the rule's storage type
(``mxlite.ndarray._sparse_invoke``), with the storage-fallback warning.
"""
import numpy as np

from ...base import op_error
from ...ops.registry import REGISTRY
from ...ops.sparse import convert as _convert, formats as F, optim as _optim
from ...ops.sparse.elemwise import SCALAR, UNARY
from ..kernels import kernel
from . import sparse_formats as D, sparse_kernels as K
from .gather import CARRIER, I64, segment_add
from .index import positions

__all__ = ["gpu_rule", "FALLBACK"]

# op name -> why its sparse rule has no GPU kernel (its GPU calls run densely)
FALLBACK = {
    "slice": "a csr row/column slice: the dense slice on the GPU, converted back to csr",
    "take": "csr rows by index: the dense take on the GPU, converted back to csr",
}


def gpu_rule(name, fn, inputs=None, cpu=None):
    """Make ``fn`` the GPU compute of op ``name``'s storage rules taking ``inputs`` (all
    when None) whose CPU function's qualified name starts with ``cpu`` (any when None)."""
    hits = 0
    for rule in REGISTRY[name].storage:
        if (inputs is None or rule.inputs == tuple(inputs)) and (
                cpu is None or rule.compute["cpu"].__qualname__.startswith(cpu)):
            rule.compute["gpu"] = fn
            hits += 1
    if not hits:
        raise ValueError(f"no storage rule of {name} takes {inputs} ({cpu})")


def _with_data(x, data):
    if isinstance(x, F.CSR):
        return F.CSR(data, x.indices, x.indptr, x.shape, x.valid)
    return F.RowSparse(data, x.indices, x.shape, x.valid)


def _as(xp, a, dtype):
    return xp.ascontiguousarray(a, np.dtype(dtype))


# ---- conversions, copies, zeros --------------------------------------------------------------
def _cast(rctx, values, attrs, shapes, dtypes):
    xp, x, want = rctx.xp, values[0], attrs.stype
    have = F.stype_of_raw(x)
    if want == F.DEFAULT:
        return [D.to_dense(xp, x)]
    if have == want:
        return [D.copy(xp, D.checked(xp, x, "cast_storage"))]
    if have != F.DEFAULT:
        raise op_error("cast_storage", f"{have} storage does not convert to {want} (convert "
                       "to 'default' first)")
    return [D.from_dense(xp, x, want)]


def _zeros(rctx, values, attrs, shapes, dtypes):
    return [D.empty_like_storage(rctx.xp, attrs.stype, shapes[0], dtypes[0])]


def _zeros_like(rctx, values, attrs, shapes, dtypes):
    x = values[0]
    return [D.empty_like_storage(rctx.xp, F.stype_of_raw(x), x.shape, x.dtype)]


def _same(rctx, values, attrs, shapes, dtypes):
    return [D.copy(rctx.xp, D.checked(rctx.xp, values[0], "copy", canonical=False))]


def _retain(rctx, values, attrs, shapes, dtypes):
    """The stored rows whose numbers are listed (the list is planned on the host)."""
    xp = rctx.xp
    x = D.checked(xp, values[0], "_sparse_retain")
    keep = xp.from_host(_convert._retained_rows(xp.to_host(values[1]), x.shape[0]))
    _, found = K.lower_bound(xp, x.indices, keep)
    pick = K.nonzero(xp, found)
    return [F.RowSparse(K.gather_rows(xp, x.data, pick), K.gather_rows(xp, x.indices, pick),
                        x.shape, True)]


# ---- value rules: the op's own GPU kernel on the stored values ---------------------------------
def _on_values(op):
    gpu = op.compute["gpu"]

    def compute(rctx, values, attrs, shapes, dtypes):
        xp = rctx.xp
        x = D.checked(xp, values[0], op.name, canonical=False)
        out = xp.empty(x.data.shape, dtypes[0])
        gpu(rctx, [x.data], [out], attrs)
        return [_with_data(x, out)]
    return compute


# ---- two operands: merges of sorted positions --------------------------------------------------
_INDPTR_OF_KEYS = kernel(K.FAMILY, "mxlite_sparse_indptr_of_keys", """
extern "C" __global__ void mxlite_sparse_indptr_of_keys(const long long* keys, long long nkeys,
        long long step, long long* indptr, long long* cols, mx_idx m1) {
    MX_GRID_LOOP(r, m1) {
        long long lo = 0, hi = nkeys, v = r * step;     // the first key of row r
        while (lo < hi) {
            long long mid = lo + (hi - lo) / 2;
            if (keys[mid] < v) lo = mid + 1; else hi = mid;
        }
        indptr[r] = lo;
        if (cols) for (long long j = lo; j < nkeys && keys[j] < v + step; ++j) cols[j] = keys[j] - v;
    }
}
""")


def _keys(xp, x):
    """One int64 key per stored position (csr: row * cols + col; row_sparse: the row)."""
    if isinstance(x, F.CSR):
        return K.csr_offsets(xp, K.entry_rows(xp, x.indptr, x.nnz), x.indices, x.shape[1], 1)
    return x.indices


def _rebuild(xp, like, keys, data):
    if isinstance(like, F.CSR):
        m, cols = like.shape
        indptr, indices = xp.empty((m + 1,), I64), xp.empty(keys.shape, I64)
        xp.launch(_INDPTR_OF_KEYS, m + 1, keys, np.int64(keys.shape[0]), np.int64(cols),
                  indptr, indices, np.int64(m + 1))
        return F.CSR(data, indices, indptr, like.shape, True)
    return F.RowSparse(data, keys, like.shape, True)


def _union(xp, a, b, sign, dtype):
    """a + b (or a - b) over the union of the stored positions, as the CPU: zeros, then
    a's values added, then b's added or subtracted."""
    ka, kb = _keys(xp, a), _keys(xp, b)
    keys = xp.lib.unique(xp.lib.concatenate([ka, kb])).astype(I64, copy=False)
    n = keys.shape[0]
    pa, _ = K.lower_bound(xp, ka, keys)         # each position's place in the union
    pb, _ = K.lower_bound(xp, kb, keys)
    data = xp.zeros((n,) + tuple(a.data.shape[1:]), dtype)
    add, sub = K.arith("place_add", dtype), K.arith("place_sub", dtype)
    inner = K._inner(data)
    for src, pos, k in ((a.data, pa, add), (b.data, pb, add if sign > 0 else sub)):
        if src.size:
            xp.launch(k, src.size, _as(xp, src, dtype), pos, data, np.int64(inner),
                      np.int64(src.size))
    return _rebuild(xp, a, keys, data)


def _intersection(xp, a, b, dtype):
    ka, kb = _keys(xp, a), _keys(xp, b)
    rank, found = K.lower_bound(xp, ka, kb)
    ia = K.nonzero(xp, found)
    ib = K.gather_rows(xp, rank, ia)
    data = xp.empty((ia.shape[0],) + tuple(a.data.shape[1:]), dtype)
    if data.size:
        xp.launch(K.arith("pick_mul", dtype), data.size, _as(xp, a.data, dtype), ia,
                  _as(xp, b.data, dtype), ib, data, np.int64(K._inner(data)),
                  np.int64(data.size))
    return _rebuild(xp, a, K.gather_rows(xp, ka, ia), data)


def _arith_ok(dtype):
    return K.arith("place_add", dtype) is not None


def _add_sub(sign):
    def compute(rctx, values, attrs, shapes, dtypes):
        xp = rctx.xp
        a, b = (D.checked(xp, v, "elemwise") for v in values)
        if not _arith_ok(dtypes[0]):
            return _dense_then(rctx, "elemwise_add" if sign > 0 else "elemwise_sub",
                               values, attrs, dtypes, F.stype_of_raw(a))
        return [_union(xp, a, b, sign, dtypes[0])]
    return compute


def _mul(rctx, values, attrs, shapes, dtypes):
    xp = rctx.xp
    a, b = (D.checked(xp, v, "elemwise_mul") for v in values)
    if not _arith_ok(dtypes[0]):
        return _dense_then(rctx, "elemwise_mul", values, attrs, dtypes, F.stype_of_raw(a))
    return [_intersection(xp, a, b, dtypes[0])]


def _dense_then(rctx, name, values, attrs, dtypes, stype):
    """The op's dense GPU kernel on dense copies, in storage ``stype`` (dtypes without a
    sparse arithmetic kernel: bool)."""
    xp = rctx.xp
    dense = [_as(xp, D.to_dense(xp, v), dtypes[0]) for v in values]
    shape = np.broadcast_shapes(*(d.shape for d in dense))
    out = xp.empty(shape, dtypes[0])
    REGISTRY[name].compute["gpu"](rctx, dense, [out], attrs)
    return [out if stype == F.DEFAULT else D.from_dense(xp, out, stype)]


def _dense_plus_sparse(name):
    def compute(rctx, values, attrs, shapes, dtypes):
        return _dense_then(rctx, name, values, attrs, dtypes, F.DEFAULT)
    return compute


def _sparse_times_dense(name, sparse_index, divide=False):
    """The sparse operand's positions times (or divided by) the dense one's values there
    (broadcast from a row or column vector for a csr lhs)."""
    def compute(rctx, values, attrs, shapes, dtypes):
        xp = rctx.xp
        x = D.checked(xp, values[sparse_index], "elemwise_mul")
        k = K.arith("div_at" if divide else "mul_at", dtypes[0])
        if k is None:           # integer division, bool: the dense kernel, then stored
            return _dense_then(rctx, name, values, attrs, dtypes, F.stype_of_raw(x))
        dense = _as(xp, values[1 - sparse_index], dtypes[0])
        if isinstance(x, F.CSR):
            dm, dn = dense.shape
            off = K.csr_offsets(xp, K.entry_rows(xp, x.indptr, x.nnz), x.indices,
                                dn if dm != 1 else 0, 1 if dn != 1 else 0)
        else:
            off = K.rsp_offsets(xp, x.indices, K._inner(x.data))
        data = _as(xp, x.data, dtypes[0])
        out = xp.empty(data.shape, dtypes[0])
        if out.size:
            xp.launch(k, out.size, data, dense, off, out, np.int64(out.size))
        return [_with_data(x, out)]
    return compute


def _add_n_rsp(rctx, values, attrs, shapes, dtypes):
    xp = rctx.xp
    out = D.checked(xp, values[0], "add_n")
    if not _arith_ok(dtypes[0]):
        return _dense_then(rctx, "add_n", values, attrs, dtypes, F.RSP_STYPE)
    for v in values[1:]:
        out = _union(xp, out, D.checked(xp, v, "add_n"), 1, dtypes[0])
    return [D.copy(xp, out) if len(values) == 1 else out]


# ---- embeddings ---------------------------------------------------------------------------------
def _take_grad_rows(rctx, values, attrs, shapes, dtypes):
    """The rows looked up (ascending), each the sum of its head-gradient rows in index order
    (``segment_add``: the CPU's order); float16 sums in float32 and rounds once."""
    xp = rctx.xp
    grad, indices = values[0], values[1]
    shape = tuple(values[2].shape)
    inner = int(np.prod(shape[1:], dtype=np.int64))
    pos = positions(xp, "_take_grad", indices, shape[0], attrs.mode, 0).reshape(-1)
    rows = xp.lib.unique(pos).astype(I64, copy=False)
    slot, _ = K.lower_bound(xp, pos, rows)
    work = np.dtype(np.float32) if dtypes[0].itemsize < 4 else dtypes[0]
    sums = xp.zeros((rows.shape[0] * inner,), work)
    if pos.size and inner:
        segment_add(xp, _as(xp, grad, work).reshape(-1), K.rsp_offsets(xp, slot, inner), sums)
    out = _as(xp, sums, dtypes[0]).reshape((rows.shape[0],) + shape[1:])
    return [F.RowSparse(out, rows, shape, True)]


_LOOKUP = {size: kernel(K.FAMILY, f"mxlite_sparse_lookup_{size}", f"""
extern "C" __global__ void mxlite_sparse_lookup_{size}(const {c}* wdata, const long long* widx,
        long long nnz, const long long* pos, {c}* out, mx_idx inner, mx_idx total) {{
    MX_GRID_LOOP(t, total) {{
        long long p = pos[t / inner], lo = 0, hi = nnz;
        while (lo < hi) {{
            long long mid = lo + (hi - lo) / 2;
            if (widx[mid] < p) lo = mid + 1; else hi = mid;
        }}
        out[t] = (lo < nnz && widx[lo] == p) ? wdata[lo * inner + t % inner] : ({c})0;
    }}
}}
""") for size, c in CARRIER.items()}


def _lookup_of(name):
    def lookup(rctx, values, attrs, shapes, dtypes):
        xp = rctx.xp
        weight = D.checked(xp, values[1], name)
        pos = positions(xp, name, values[0], attrs.input_dim, "raise", 0).reshape(-1)
        out = xp.empty((pos.shape[0], attrs.output_dim), dtypes[0])
        if out.size:
            xp.launch(_LOOKUP[out.dtype.itemsize], out.size, _as(xp, weight.data, dtypes[0]),
                      weight.indices, np.int64(weight.nnz), pos, out,
                      np.int64(attrs.output_dim), np.int64(out.size))
        return [out.reshape(shapes[0])]
    return lookup


# ---- optimizer updates ----------------------------------------------------------------------------
def _lazy(op):
    """The op's GPU update kernel on the gradient's rows of the weight and states, written
    back (the other rows untouched)."""
    gpu = op.compute["gpu"]

    def compute(rctx, values, attrs, shapes, dtypes, out=None):
        xp = rctx.xp
        weight, grad, states = values[0], D.checked(xp, values[1], op.name), values[2:]
        target = out[0] if out is not None else xp.empty(weight.shape, weight.dtype)
        if target is not weight:
            xp.copyto(target, weight)
        rows = grad.indices
        w_rows = K.gather_rows(xp, xp.ascontiguousarray(weight), rows)
        s_rows = [K.gather_rows(xp, s, rows) for s in states]
        new_rows = xp.empty(w_rows.shape, w_rows.dtype)
        gpu(rctx, [w_rows, grad.data] + s_rows, [new_rows], attrs)
        K.scatter_rows(xp, new_rows, rows, target)
        for s, r in zip(states, s_rows):
            K.scatter_rows(xp, r, rows, s)
        return [target]
    return compute


def _densified(op):
    gpu = op.compute["gpu"]

    def compute(rctx, values, attrs, shapes, dtypes, out=None):
        xp = rctx.xp
        ins = [values[0], D.to_dense(xp, D.checked(xp, values[1], op.name))] + list(values[2:])
        target = out[0] if out is not None else xp.empty(shapes[0], dtypes[0])
        gpu(rctx, ins, [target], attrs)
        return [target]
    return compute


def _rows_divided(op):
    """``_scatter_elemwise_div`` of a row_sparse ``lhs``: its stored rows divided by the
    same rows of ``rhs`` (any storage), by the op's GPU kernel; a row_sparse result."""
    gpu = op.compute["gpu"]

    def compute(rctx, values, attrs, shapes, dtypes):
        xp = rctx.xp
        lhs = D.checked(xp, values[0], op.name, canonical=False)
        rhs = values[1]
        if isinstance(rhs, F.RowSparse):        # the rows looked up: zeros where not stored
            rhs = D.checked(xp, rhs, op.name)
            inner = int(np.prod(rhs.shape[1:], dtype=np.int64))
            rows = xp.empty((lhs.indices.shape[0],) + rhs.shape[1:], rhs.dtype)
            if rows.size:
                xp.launch(_LOOKUP[rows.dtype.itemsize], rows.size, rhs.data, rhs.indices,
                          np.int64(rhs.nnz), lhs.indices, rows, np.int64(inner),
                          np.int64(rows.size))
        else:                                   # (a csr rhs is made dense first)
            rows = K.gather_rows(xp, xp.ascontiguousarray(D.to_dense(xp, rhs)), lhs.indices)
        out = xp.empty(lhs.data.shape, dtypes[0])
        gpu(rctx, [xp.ascontiguousarray(lhs.data), rows], [out], attrs)
        return [F.RowSparse(out, lhs.indices, lhs.shape, lhs.valid)]
    return compute


def _where_csr(rctx, values, attrs, shapes, dtypes):
    """``where`` with a csr condition: the dense GPU ``where`` on the condition made dense
    (repeated columns summed, as the CPU rule reads them); the output is dense and as large
    as the condition's dense shape anyway."""
    xp = rctx.xp
    cond = D.to_dense(xp, D.checked(xp, values[0], "where", canonical=False))
    out = xp.empty(shapes[0], dtypes[0])
    REGISTRY["where"].compute["gpu"](rctx, [cond, values[1], values[2]], [out], attrs)
    return [out]


# ---- attach -----------------------------------------------------------------------------------------
SPARSE = ("csr", "row_sparse")
gpu_rule("cast_storage", _cast)
gpu_rule("zeros", _zeros)
gpu_rule("zeros_like", _zeros_like)
for _name in ("_copy", "stop_gradient", "make_loss"):
    if _name in REGISTRY:
        gpu_rule(_name, _same)
gpu_rule("_sparse_retain", _retain)
for _name in UNARY + SCALAR + ("cast",):
    gpu_rule(_name, _on_values(REGISTRY[_name]))
for _stype in SPARSE:
    gpu_rule("elemwise_add", _add_sub(1), (_stype, _stype))
    gpu_rule("elemwise_sub", _add_sub(-1), (_stype, _stype))
    gpu_rule("elemwise_mul", _mul, (_stype, _stype))
    gpu_rule("elemwise_mul", _sparse_times_dense("elemwise_mul", 0), (_stype, F.DEFAULT))
    gpu_rule("elemwise_mul", _sparse_times_dense("elemwise_mul", 1), (F.DEFAULT, _stype))
    for _pair in ((_stype, F.DEFAULT), (F.DEFAULT, _stype)):
        gpu_rule("elemwise_add", _dense_plus_sparse("elemwise_add"), _pair)
        gpu_rule("elemwise_sub", _dense_plus_sparse("elemwise_sub"), _pair)
gpu_rule("broadcast_mul", _sparse_times_dense("broadcast_mul", 0))
gpu_rule("broadcast_div", _sparse_times_dense("broadcast_div", 0, divide=True))
gpu_rule("add_n", _add_n_rsp)
gpu_rule("_take_grad", _take_grad_rows)
for _name in ("Embedding", "_contrib_SparseEmbedding"):
    gpu_rule(_name, _lookup_of(_name))
gpu_rule("where", _where_csr)
for _name in ("_scatter_plus_scalar", "_scatter_minus_scalar"):
    gpu_rule(_name, _on_values(REGISTRY[_name]))
gpu_rule("_contrib_quadratic", _on_values(REGISTRY["_contrib_quadratic"]), ("csr",))
gpu_rule("_scatter_elemwise_div", _rows_divided(REGISTRY["_scatter_elemwise_div"]))
for _name in _optim.LAZY:
    gpu_rule(_name, _lazy(REGISTRY[_name]), cpu="_lazy")
    if any(p.name == "lazy_update" for p in REGISTRY[_name].params):
        gpu_rule(_name, _densified(REGISTRY[_name]), cpu="_densified")
    for _rule in REGISTRY[_name].storage:       # a row_sparse weight: the same on dense copies
        if _rule.inputs[0] == F.RSP_STYPE:
            _inner = (_lazy if _rule.when is _optim._is_lazy else _densified)(REGISTRY[_name])
            _rule.compute["gpu"] = _optim.sparse_weight(
                REGISTRY[_name], _inner, lambda r, v, o: D.checked(r.xp, v, o),
                lambda r, v: D.to_dense(r.xp, v), lambda r: r.xp.lib)
