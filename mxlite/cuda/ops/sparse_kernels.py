"""CUDA kernels of sparse storage (family ``sparse``), generated per dtype from one table, and
the host wrappers that launch them.

Index work (format checks, the row of each stored value, searches in sorted index arrays,
row gathers and scatters) runs in kernels over int64 indices (``long long``): a row or
column number past 2**32 is exact. Values move as raw bits (one kernel per element size);
arithmetic has one kernel per dtype, float16 stored as its bits and computed in float32 with
a rounding after every operation, integers wrapping, as NumPy computes those dtypes (the
CPU's rules for dtypes its compiled kernels do not take).

Every sum adds its terms in a fixed order, one thread per result element, so results do not
depend on the launch configuration: the CPU's order where it defines one (``dot``, column
sums, scatter-adds), the stored order elsewhere. Sorting, prefix sums and compaction of
int64 index arrays go through the array library (``xp.lib``: CuPy's radix sort and scans).
"""
import numpy as np

from ..casts import CTYPE as _CTYPE
from ..kernels import kernel
from .gather import CARRIER, I64

__all__ = ["VALUE_DTYPES", "ARITH_DTYPES", "check_csr", "check_rsp", "csr_offsets", "rsp_offsets", "entry_rows", "gather_rows",
           "scatter_rows", "lower_bound", "indptr_of", "nonzero", "total", "arith"]

FAMILY = "sparse"
VALUE_DTYPES = tuple(_CTYPE)                     # every dtype a format stores
ARITH_DTYPES = tuple(d for d in VALUE_DTYPES if d != "bool")    # with + - * kernels


def _load(dt, expr):
    return f"mx_half_to_float({expr})" if dt == "float16" else expr


def _store(dt, expr):
    c = _CTYPE[dt]
    return f"mx_float_to_half((float)({expr}))" if dt == "float16" else f"({c})({expr})"


def _work(dt):
    return "float" if dt == "float16" else _CTYPE[dt]


def _nonzero(dt, expr):
    """C test: element ``expr`` of dtype ``dt`` is not 0 (NaN is; -0.0 is not)."""
    return f"(({expr}) & 0x7fff) != 0" if dt == "float16" else f"({expr}) != 0"


# ---- format checks ---------------------------------------------------------------------------
_CHECK_CSR = kernel(FAMILY, "mxlite_sparse_check_csr", """
extern "C" __global__ void mxlite_sparse_check_csr(const long long* indptr, const long long* idx,
        unsigned long long* res, long long cols, long long nnz, long long canonical, mx_idx m) {
    MX_GRID_LOOP(r, m) {
        long long lo = indptr[r], hi = indptr[r + 1];
        if (hi < lo || lo < 0 || hi > nnz) { atomicAdd(&res[0], 1ULL); continue; }
        for (long long j = lo; j < hi; ++j) {
            if (idx[j] < 0 || idx[j] >= cols) atomicAdd(&res[1], 1ULL);
            else if (canonical && j > lo && idx[j] <= idx[j - 1]) atomicAdd(&res[2], 1ULL);
        }
    }
}
""")

_CHECK_RSP = kernel(FAMILY, "mxlite_sparse_check_rsp", """
extern "C" __global__ void mxlite_sparse_check_rsp(const long long* idx, unsigned long long* res,
        long long rows, long long canonical, mx_idx n) {
    MX_GRID_LOOP(i, n) {
        if (idx[i] < 0 || idx[i] >= rows) atomicAdd(&res[0], 1ULL);
        else if (canonical && i > 0 && idx[i] <= idx[i - 1]) atomicAdd(&res[1], 1ULL);
    }
}
""")


def check_csr(xp, indptr, indices, cols, nnz, canonical):
    """[bad row ranges, column indices out of range, column order breaks] of a csr matrix."""
    m = indptr.shape[0] - 1
    res = xp.zeros((3,), np.uint64)
    xp.launch(_CHECK_CSR, m, indptr, indices, res, np.int64(cols), np.int64(nnz),
              np.int64(bool(canonical)), np.int64(m))
    return [int(v) for v in xp.to_host(res)]


def check_rsp(xp, indices, rows, canonical):
    """[row indices out of range, row order breaks] of a row_sparse array."""
    n = indices.shape[0]
    res = xp.zeros((2,), np.uint64)
    xp.launch(_CHECK_RSP, n, indices, res, np.int64(rows), np.int64(bool(canonical)),
              np.int64(n))
    return [int(v) for v in xp.to_host(res)]


# ---- rows of entries, prefix sums, compaction ------------------------------------------------
_ENTRY_ROWS = kernel(FAMILY, "mxlite_sparse_entry_rows", """
extern "C" __global__ void mxlite_sparse_entry_rows(const long long* indptr, long long* rows,
                                                    mx_idx m) {
    MX_GRID_LOOP(r, m) for (long long j = indptr[r]; j < indptr[r + 1]; ++j) rows[j] = r;
}
""")


def entry_rows(xp, indptr, nnz):
    """The row number of each stored value of a csr matrix (int64, nnz entries)."""
    rows = xp.empty((nnz,), I64)
    xp.launch(_ENTRY_ROWS, indptr.shape[0] - 1, indptr, rows, np.int64(indptr.shape[0] - 1))
    return rows


def indptr_of(xp, per_row):
    """The int64 indptr (rows + 1 entries, from 0) of the int64 per-row counts ``per_row``."""
    indptr = xp.zeros((per_row.shape[0] + 1,), I64)
    if per_row.shape[0]:
        xp.lib.cumsum(per_row, out=indptr[1:])
    return indptr


def total(xp, a):
    """The last element of the 1-D int64 device array ``a`` as a Python int (0 if empty)."""
    return int(xp.to_host(a[-1:])[0]) if a.shape[0] else 0


def nonzero(xp, flags):
    """The int64 positions of the true (non-zero) entries of 1-D ``flags``, ascending."""
    return xp.lib.flatnonzero(flags).astype(I64, copy=False)


# ---- row gathers and scatters (raw bits) -----------------------------------------------------
def _rows_kernel(direction, size, c):
    name = f"mxlite_sparse_{direction}_rows_{size}"
    move = ("out[k * inner + i] = src[idx[k] * inner + i];" if direction == "gather" else
            "out[idx[k] * inner + i] = src[k * inner + i];")
    return kernel(FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* src, const long long* idx, {c}* out,
                                  mx_idx inner, mx_idx total) {{
    MX_GRID_LOOP(t, total) {{
        mx_idx k = t / inner, i = t % inner;
        {move}
    }}
}}
""")


_ROWS = {(d, size): _rows_kernel(d, size, c) for d in ("gather", "scatter")
         for size, c in CARRIER.items()}


def _inner(a):
    return int(np.prod(a.shape[1:], dtype=np.int64)) if a.ndim > 1 else 1


def gather_rows(xp, src, idx, out=None):
    """``out[k] = src[idx[k]]`` for rows of C-contiguous ``src`` (idx int64, in range)."""
    if out is None:
        out = xp.empty((idx.shape[0],) + tuple(src.shape[1:]), src.dtype)
    inner = _inner(src)
    if out.size:
        xp.launch(_ROWS[("gather", src.dtype.itemsize)], out.size, src, idx, out,
                  np.int64(inner), np.int64(out.size))
    return out


def scatter_rows(xp, src, idx, out):
    """``out[idx[k]] = src[k]`` for rows of C-contiguous arrays (idx int64, distinct)."""
    if src.size:
        xp.launch(_ROWS[("scatter", src.dtype.itemsize)], src.size, src, idx, out,
                  np.int64(_inner(out)), np.int64(src.size))
    return out


# ---- searches in sorted int64 arrays ---------------------------------------------------------
_LOWER_BOUND = kernel(FAMILY, "mxlite_sparse_lower_bound", """
extern "C" __global__ void mxlite_sparse_lower_bound(const long long* x, const long long* y,
        long long* rank, unsigned char* found, long long ny, mx_idx nx) {
    MX_GRID_LOOP(i, nx) {
        long long lo = 0, hi = ny, v = x[i];
        while (lo < hi) {
            long long mid = lo + (hi - lo) / 2;
            if (y[mid] < v) lo = mid + 1; else hi = mid;
        }
        found[i] = lo < ny && y[lo] == v;
        rank[i] = lo;
    }
}
""")


def lower_bound(xp, x, y):
    """(rank, found): for each int64 ``x[i]``, the number of entries of the sorted int64 ``y``
    below it, and whether ``y`` holds it (uint8)."""
    rank, found = xp.empty(x.shape, I64), xp.empty(x.shape, np.uint8)
    if x.size:
        xp.launch(_LOWER_BOUND, x.size, x, y, rank, found, np.int64(y.shape[0]),
                  np.int64(x.size))
    return rank, found


# ---- element-wise arithmetic on stored values ------------------------------------------------
def _arith_kernels():
    ks = {}
    for dt in ARITH_DTYPES:
        c, w = _CTYPE[dt], _work(dt)

        def bin_(a, b, op, dt=dt, w=w):
            return _store(dt, f"({w}){_load(dt, a)} {op} ({w}){_load(dt, b)}")
        for sign, op in (("add", "+"), ("sub", "-")):
            # out[pos[k]] = out[pos[k]] op src[k] (rows of ``inner`` values)
            name = f"mxlite_sparse_place_{sign}_{dt}"
            ks[(f"place_{sign}", dt)] = kernel(FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* src, const long long* pos, {c}* out,
                                  mx_idx inner, mx_idx total) {{
    MX_GRID_LOOP(t, total) {{
        mx_idx o = pos[t / inner] * inner + t % inner;
        out[o] = {bin_("out[o]", "src[t]", op)};
    }}
}}
""")
        # out[k] = a[ia[k]] * b[ib[k]] (rows of ``inner`` values)
        name = f"mxlite_sparse_pick_mul_{dt}"
        ks[("pick_mul", dt)] = kernel(FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* a, const long long* ia, const {c}* b,
                                  const long long* ib, {c}* out, mx_idx inner, mx_idx total) {{
    MX_GRID_LOOP(t, total) {{
        mx_idx k = t / inner, i = t % inner;
        out[t] = {bin_("a[ia[k] * inner + i]", "b[ib[k] * inner + i]", "*")};
    }}
}}
""")
        # out[e] = data[e] op dense[off[e]]
        for opname, op in (("mul", "*"), ("div", "/")):
            if opname == "div" and dt not in ("float16", "float32", "float64"):
                continue
            name = f"mxlite_sparse_{opname}_at_{dt}"
            ks[(f"{opname}_at", dt)] = kernel(FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* data, const {c}* dense, const long long* off,
                                  {c}* out, mx_idx n) {{
    MX_GRID_LOOP(e, n) out[e] = {bin_("data[e]", "dense[off[e]]", op)};
}}
""")
    return ks


_ARITH = _arith_kernels()


def arith(name, dtype):
    """The kernel ``name`` ('place_add', 'place_sub', 'pick_mul', 'mul_at', 'div_at') for
    ``dtype``, or None."""
    return _ARITH.get((name, np.dtype(dtype).name))


# ---- offsets of stored positions in a (broadcast) dense operand ------------------------------
_CSR_OFFSETS = kernel(FAMILY, "mxlite_sparse_csr_offsets", """
extern "C" __global__ void mxlite_sparse_csr_offsets(const long long* rows, const long long* cols,
        long long* off, long long s0, long long s1, mx_idx n) {
    MX_GRID_LOOP(e, n) off[e] = rows[e] * s0 + cols[e] * s1;
}
""")

_RSP_OFFSETS = kernel(FAMILY, "mxlite_sparse_rsp_offsets", """
extern "C" __global__ void mxlite_sparse_rsp_offsets(const long long* rows, long long* off,
        mx_idx inner, mx_idx n) {
    MX_GRID_LOOP(t, n) off[t] = rows[t / inner] * inner + t % inner;
}
""")


def csr_offsets(xp, rows, cols, s0, s1):
    """Element offsets ``rows * s0 + cols * s1`` (int64) of stored csr positions."""
    off = xp.empty(rows.shape, I64)
    if rows.size:
        xp.launch(_CSR_OFFSETS, rows.size, rows, cols, off, np.int64(s0), np.int64(s1),
                  np.int64(rows.size))
    return off


def rsp_offsets(xp, rows, inner):
    """Element offsets of every stored value of a row_sparse array in its dense form."""
    n = rows.shape[0] * inner
    off = xp.empty((n,), I64)
    if n:
        xp.launch(_RSP_OFFSETS, n, rows, off, np.int64(inner), np.int64(n))
    return off
