"""GPU ``dot`` with a csr operand, ``sum``/``mean`` of a csr matrix along an axis,
``_contrib_getnnz`` and ``_square_sum`` of row_sparse rows (the rules of
``mxlite/ops/sparse/dot.py`` and ``reduce.py``).

One kernel, ``rows_sum``, makes every product: result element (r, c) is the sum over the
entries t of group r (``starts[r]:starts[r+1]``, entry ``order[t]`` when ordered) of
``data[e] * rhs[rows[e], c]``, added from 0 in that order, the operands addressed through
strides. csr @ dense groups by csr row; csr.T @ dense groups the entries by column (a stable
sort: row order within a column); dense @ csr reads the csr matrix by column the same way,
with the dense operand as a transposed rhs. These are the CPU's orders (``_core/sparse.pyx``
for float32/float64; NumPy's ``add.at`` for the other dtypes, whose every product and sum
is rounded to the dtype, as here), so the results are bit-identical to the CPU's.

Column sums add in stored order (``segment_add``, the CPU's ``add.at``). Row sums and
``_square_sum`` along rows add each row's values in stored order; the CPU reduces those with
NumPy's own summation (blocked, SIMD), whose order it does not define: the results agree to
rounding.
"""
import numpy as np

from ...base import op_error
from ...ops.sparse import formats as F
from ..casts import CTYPE
from ..kernels import kernel
from . import sparse_formats as D, sparse_kernels as K
from .gather import I64, segment_add, sorted_targets
from .sparse_rules import gpu_rule

__all__ = ["csr_dense", "csr_t_dense", "dense_csr"]


def _rows_sum_kernel(dt):
    c, w = CTYPE[dt], K._work(dt)
    load, store = (lambda e: K._load(dt, e)), (lambda e: K._store(dt, e))
    if dt in ("float32", "float64"):
        step = "acc += data[e] * rhs[rows[e] * rs0 + j * rs1];"
        result = "acc"
    else:       # every product and every sum rounded to the dtype (NumPy's add.at)
        ld, lr = load("data[e]"), load("rhs[rows[e] * rs0 + j * rs1]")
        prod = store(f"({w}){ld} * ({w}){lr}")
        la, lp = load("acc"), load(prod)
        total = store(f"({w}){la} + ({w}){lp}")
        step = f"acc = {total};"
        result = "acc"
    name = f"mxlite_sparse_rows_sum_{dt}"
    return kernel(K.FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* data, const long long* rows, const long long* order,
        long long ordered, const long long* starts, const {c}* rhs, long long rs0,
        long long rs1, {c}* out, long long os0, long long os1, mx_idx n, mx_idx total) {{
    MX_GRID_LOOP(t, total) {{
        mx_idx r = t / n, j = t % n;
        {c} acc = {store("0")};
        for (long long s = starts[r]; s < starts[r + 1]; ++s) {{
            long long e = ordered ? order[s] : s;
            {step}
        }}
        out[r * os0 + j * os1] = {result};
    }}
}}
""")


_ROWS_SUM = {dt: _rows_sum_kernel(dt) for dt in K.ARITH_DTYPES}


def _rows_sum(xp, data, rows, order, starts, rhs, rs, out, os, groups, n):
    k = _ROWS_SUM.get(np.dtype(out.dtype).name)
    if k is None:
        raise op_error("dot", f"no GPU sparse kernel for dtype {out.dtype}")
    if groups * n:
        xp.launch(k, groups * n, data, rows, order if order is not None else rows,
                  np.int64(order is not None), starts, rhs, np.int64(rs[0]), np.int64(rs[1]),
                  out, np.int64(os[0]), np.int64(os[1]), np.int64(n), np.int64(groups * n))
    return out


_RUN_STARTS = kernel(K.FAMILY, "mxlite_sparse_run_starts", """
extern "C" __global__ void mxlite_sparse_run_starts(const long long* s, unsigned char* first,
                                                    mx_idx n) {
    MX_GRID_LOOP(i, n) first[i] = i == 0 || s[i] != s[i - 1];
}
""")


def _by_column(xp, x):
    """(order, sorted columns): the entries of csr ``x`` stably sorted by column."""
    return sorted_targets(xp, x.indices)


def _appended(xp, a, value):
    out = xp.empty((a.shape[0] + 1,), I64)
    xp.strided_copy(a, out[:a.shape[0]])
    xp.strided_copy(xp.from_host(np.array([value], np.int64)), out[a.shape[0]:])
    return out


def csr_dense(xp, x, rhs):
    """csr ``x`` (m, k) @ dense ``rhs`` (k, n) -> dense (m, n)."""
    m, n = x.shape[0], rhs.shape[1]
    out = xp.empty((m, n), rhs.dtype)
    return _rows_sum(xp, _as(xp, x.data, rhs.dtype), x.indices, None, x.indptr, rhs, (n, 1),
                     out, (n, 1), m, n)


def csr_t_dense(xp, x, rhs):
    """csr ``x`` (m, k) transposed @ dense ``rhs`` (m, n) -> row_sparse (k, n)."""
    n = rhs.shape[1]
    order, cols_sorted = _by_column(xp, x)
    first = xp.empty(cols_sorted.shape, np.uint8)
    if x.nnz:
        xp.launch(_RUN_STARTS, x.nnz, cols_sorted, first, np.int64(x.nnz))
    starts = K.nonzero(xp, first)
    cols = K.gather_rows(xp, cols_sorted, starts)
    g = cols.shape[0]
    out = xp.empty((g, n), rhs.dtype)
    _rows_sum(xp, _as(xp, x.data, rhs.dtype), K.entry_rows(xp, x.indptr, x.nnz), order,
              _appended(xp, starts, x.nnz), rhs, (n, 1), out, (n, 1), g, n)
    return F.RowSparse(out, cols, (x.shape[1], n), True)


def _transposed(xp, x):
    """csr ``x`` transposed, as csr (the entries ordered by column, stably)."""
    order, cols_sorted = _by_column(xp, x)
    rows = K.gather_rows(xp, K.entry_rows(xp, x.indptr, x.nnz), order)
    return F.CSR(K.gather_rows(xp, x.data, order), rows, _indptr_by(xp, cols_sorted,
                                                                   x.shape[1]),
                 (x.shape[1], x.shape[0]), True)


def _indptr_by(xp, sorted_keys, m):
    """indptr of ``m`` rows over sorted row numbers ``sorted_keys``."""
    from .sparse_rules import _INDPTR_OF_KEYS
    indptr = xp.empty((m + 1,), I64)
    scratch = xp.empty(sorted_keys.shape, I64)
    xp.launch(_INDPTR_OF_KEYS, m + 1, sorted_keys, np.int64(sorted_keys.shape[0]), np.int64(1),
              indptr, scratch, np.int64(m + 1))
    return indptr


def dense_csr(xp, lhs, x):
    """dense ``lhs`` (m, k) @ csr ``x`` (k, n) -> dense (m, n): each result column reads the
    csr column's entries in row order (the CPU's order)."""
    m, k, n = lhs.shape[0], lhs.shape[1], x.shape[1]
    order, cols_sorted = _by_column(xp, x)
    out = xp.empty((m, n), lhs.dtype)
    return _rows_sum(xp, _as(xp, x.data, lhs.dtype), K.entry_rows(xp, x.indptr, x.nnz), order,
                     _indptr_by(xp, cols_sorted, n), lhs, (1, k), out, (1, n), n, m)


def _as(xp, a, dtype):
    return xp.ascontiguousarray(a, np.dtype(dtype))


def _dense_operand(xp, v, transpose, dtype=None):
    v = D.to_dense(xp, v)
    return _as(xp, v.T if transpose else v, dtype or v.dtype)


def _finish(xp, value, attrs, default):
    want = attrs.forward_stype or default
    if F.stype_of_raw(value) == want:
        return value
    dense = D.to_dense(xp, value)
    return dense if want == F.DEFAULT else D.from_dense(xp, dense, want)


def _csr_lhs(rctx, values, attrs, shapes, dtypes):
    xp = rctx.xp
    x = D.checked(xp, values[0], "dot", canonical=False)
    rhs = _dense_operand(xp, values[1], attrs.transpose_b, dtypes[0])
    if attrs.transpose_a:
        return [_finish(xp, csr_t_dense(xp, x, rhs), attrs, F.RSP_STYPE)]
    return [_finish(xp, csr_dense(xp, x, rhs), attrs, F.DEFAULT)]


def _csr_rhs(rctx, values, attrs, shapes, dtypes):
    xp = rctx.xp
    lhs = _dense_operand(xp, values[0], attrs.transpose_a)
    x = D.checked(xp, values[1], "dot", canonical=False)
    if attrs.transpose_b:
        x = _transposed(xp, x)
    default = F.DEFAULT if attrs.transpose_a else F.CSR_STYPE
    return [_finish(xp, dense_csr(xp, lhs, x), attrs, default)]


# ---- sum / mean of a csr matrix ---------------------------------------------------------------
def _segment_kernel(dt):
    c, w = CTYPE[dt], K._work(dt)
    name = f"mxlite_sparse_segment_sum_{dt}"
    return kernel(K.FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* v, const long long* indptr, {c}* out, mx_idx m) {{
    MX_GRID_LOOP(r, m) {{
        {w} acc = 0;
        for (long long j = indptr[r]; j < indptr[r + 1]; ++j) acc = acc + ({w}){K._load(dt, "v[j]")};
        out[r] = {K._store(dt, "acc")};
    }}
}}
""")


def _mean_kernel(dt):
    c, w = CTYPE[dt], K._work(dt)
    name = f"mxlite_sparse_divide_count_{dt}"
    if dt.startswith("float"):
        expr = K._store(dt, f"({w}){K._load(dt, 'out[i]')} / ({w})count")
    else:           # NumPy's true division, then the cast back
        expr = f"({c})((double)out[i] / (double)count)"
    return kernel(K.FAMILY, name, f"""
extern "C" __global__ void {name}({c}* out, long long count, mx_idx n) {{
    MX_GRID_LOOP(i, n) out[i] = {expr};
}}
""")


_SEGMENT = {dt: _segment_kernel(dt) for dt in K.ARITH_DTYPES}
_MEAN = {dt: _mean_kernel(dt) for dt in K.ARITH_DTYPES}


def _reduce(mean):
    def compute(rctx, values, attrs, shapes, dtypes):
        xp = rctx.xp
        x = D.checked(xp, values[0], "sum", canonical=False)
        dt = np.dtype(dtypes[0])
        if dt.name not in _SEGMENT:
            raise op_error("sum", f"no GPU sparse kernel for dtype {dt}")
        axis = attrs.axis[0] % 2
        data = _as(xp, x.data, dt)
        out = xp.zeros((x.shape[1 - axis],), dt)
        if axis == 0:
            segment_add(xp, data, x.indices, out, round_each=True)
        elif x.shape[0]:
            xp.launch(_SEGMENT[dt.name], x.shape[0], data, x.indptr, out, np.int64(x.shape[0]))
        if mean:
            if not x.shape[axis]:
                out = xp.from_host(np.full(out.shape, np.nan, dt))
            elif out.size:
                xp.launch(_MEAN[dt.name], out.size, out, np.int64(x.shape[axis]),
                          np.int64(out.size))
        return [out.reshape(shapes[0])]
    return compute


# ---- _contrib_getnnz ----------------------------------------------------------------------------
_ROW_COUNTS = kernel(K.FAMILY, "mxlite_sparse_row_counts", """
extern "C" __global__ void mxlite_sparse_row_counts(const long long* indptr, long long* out,
                                                    mx_idx m) {
    MX_GRID_LOOP(r, m) out[r] = indptr[r + 1] - indptr[r];
}
""")


def _getnnz(rctx, values, attrs, shapes, dtypes):
    xp = rctx.xp
    x = D.checked(xp, values[0], "_contrib_getnnz", canonical=False)
    if attrs.axis is None:
        return [xp.from_host(np.array([x.nnz], np.int64))]
    out = xp.empty((x.shape[0],), I64)
    if x.shape[0]:
        xp.launch(_ROW_COUNTS, x.shape[0], x.indptr, out, np.int64(x.shape[0]))
    return [out]


# ---- _square_sum of row_sparse rows -------------------------------------------------------------
def _square_kernel(dt, by_row):
    c = CTYPE[dt]
    name = f"mxlite_sparse_square_sum_{'rows' if by_row else 'cols'}_{dt}"
    v = f"(double){K._load(dt, 'x[k * inner + i]')}"
    loop = ("for (mx_idx i = 0; i < inner; ++i)" if by_row else "for (mx_idx k = 0; k < m; ++k)")
    head = "mx_idx k = t;" if by_row else "mx_idx i = t;"
    return kernel(K.FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* x, double* out, mx_idx m, mx_idx inner,
                                  mx_idx n) {{
    MX_GRID_LOOP(t, n) {{
        {head}
        double acc = 0;
        {loop} {{ double s = {v}; acc = acc + s * s; }}
        out[t] = acc;
    }}
}}
""")


_SQUARE = {(dt, r): _square_kernel(dt, r) for dt in ("float16", "float32", "float64")
           for r in (False, True)}


def _rsp_square_sum(rctx, values, attrs, shapes, dtypes):
    xp = rctx.xp
    x = D.checked(xp, values[0], "_square_sum")
    m, inner = x.data.shape[0], K._inner(x.data)
    by_row = attrs.axis[0] % 2 == 1
    n = m if by_row else inner
    sums = xp.zeros((n,), np.float64)
    if n:
        xp.launch(_SQUARE[(np.dtype(x.dtype).name, by_row)], n, x.data, sums, np.int64(m),
                  np.int64(inner), np.int64(n))
    sums = _as(xp, sums, dtypes[0])
    if not by_row:
        return [sums.reshape(shapes[0])]
    if attrs.keepdims:
        return [F.RowSparse(sums.reshape(-1, 1), D._copy_array(xp, x.indices), shapes[0], True)]
    out = xp.zeros((x.shape[0],), dtypes[0])
    K.scatter_rows(xp, sums, x.indices, out)
    return [out.reshape(shapes[0])]


gpu_rule("dot", _csr_lhs, cpu="_csr_lhs")
gpu_rule("dot", _csr_rhs, cpu="_csr_rhs")
gpu_rule("sum", _reduce(False))
gpu_rule("mean", _reduce(True))
gpu_rule("_contrib_getnnz", _getnnz)
gpu_rule("_square_sum", _rsp_square_sum)
