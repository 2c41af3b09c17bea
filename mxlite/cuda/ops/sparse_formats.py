"""csr and row_sparse storage on a GPU: the format check, conversions to and from dense, and
copies, as kernels of the device (the functions ``mxlite.ops.sparse.formats`` does on host
arrays for the CPU). Registered in ``formats.DEVICE['gpu']``.

The check raises the CPU's MXNetError for the same fault (``formats.index_error``), reading
back a few counters. dense -> csr counts each row's non-zeros (NaN included, as NumPy's
``nonzero``), makes indptr by a prefix sum and writes each row's entries in column order;
dense -> row_sparse keeps the rows holding any non-zero. csr -> dense assigns each stored
value (a canonical matrix) or adds repeated columns in stored order (``segment_add``: the
CPU's ``numpy.add.at`` order, float16 rounded after each addition).
"""
import sys

import numpy as np

from ...base import MXNetError
from ...ops.sparse import formats as F
from ..casts import CTYPE
from ..kernels import kernel
from . import sparse_kernels as K
from .gather import CARRIER, I64, segment_add

__all__ = ["checked", "to_dense", "from_dense", "empty_like_storage", "copy"]


def checked(xp, value, op, canonical=True, force=False):
    """``value`` after the format check of its device arrays (done once per value unless
    ``force``; see ``formats.checked``): MXNetError naming the fault, as the CPU's check."""
    if not force and (value.valid or (value.in_range and not canonical)):
        return value
    F._check_shapes(value, op)
    if isinstance(value, F.CSR):
        nnz = value.nnz
        ends = xp.to_host(value.indptr[::value.indptr.shape[0] - 1 or 1])
        first, last = int(ends[0]), int(ends[-1])
        if first != 0 or last != nnz:
            raise F.index_error(op, "indptr_ends", value, first, last)
        bad_rows, bad_cols, bad_order = K.check_csr(xp, value.indptr, value.indices,
                                                    value.shape[1], nnz, canonical)
        for count, kind in ((bad_rows, "indptr_decreases"), (bad_cols, "col_range"),
                            (bad_order, "col_order")):
            if count:
                raise F.index_error(op, kind, value)
    else:
        bad_range, bad_order = K.check_rsp(xp, value.indices, value.shape[0], canonical)
        if bad_range:
            raise F.index_error(op, "row_range", value)
        if bad_order:
            raise F.index_error(op, "row_order", value)
    value.in_range = True
    if canonical:
        value.valid = True
    return value


# ---- dense -> csr / row_sparse ----------------------------------------------------------------
def _count_kernel(dt, c):
    name = f"mxlite_sparse_row_nonzeros_{dt}"
    return kernel(K.FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* x, long long* count, mx_idx cols, mx_idx m) {{
    MX_GRID_LOOP(r, m) {{
        long long k = 0;
        for (mx_idx j = 0; j < cols; ++j) k += {K._nonzero(dt, "x[r * cols + j]")};
        count[r] = k;
    }}
}}
""")


def _fill_kernel(dt, c):
    name = f"mxlite_sparse_csr_fill_{dt}"
    return kernel(K.FAMILY, name, f"""
extern "C" __global__ void {name}(const {c}* x, const long long* indptr, {c}* data,
                                  long long* indices, mx_idx cols, mx_idx m) {{
    MX_GRID_LOOP(r, m) {{
        long long k = indptr[r];
        for (mx_idx j = 0; j < cols; ++j) {{
            {c} v = x[r * cols + j];
            if ({K._nonzero(dt, "v")}) {{ data[k] = v; indices[k] = j; ++k; }}
        }}
    }}
}}
""")


_COUNT = {dt: _count_kernel(dt, c) for dt, c in CTYPE.items()}
_FILL = {dt: _fill_kernel(dt, c) for dt, c in CTYPE.items()}


def _dtype_name(a):
    name = np.dtype(a.dtype).name
    if name not in CTYPE:
        raise MXNetError(f"cast_storage: no GPU sparse storage for dtype {name}")
    return name


def dense_to_csr(xp, dense):
    """The csr form of a 2-D device array (every element that is not 0, row-major)."""
    if dense.ndim != 2:
        raise MXNetError(f"cast_storage: csr storage is 2-D, got an array of shape {dense.shape}")
    dense = xp.ascontiguousarray(dense)
    m, cols = dense.shape
    dt = _dtype_name(dense)
    per_row = xp.zeros((m,), I64)
    if m and cols:
        xp.launch(_COUNT[dt], m, dense, per_row, np.int64(cols), np.int64(m))
    indptr = K.indptr_of(xp, per_row)
    nnz = K.total(xp, indptr)
    data, indices = xp.empty((nnz,), dense.dtype), xp.empty((nnz,), I64)
    if nnz:
        xp.launch(_FILL[dt], m, dense, indptr, data, indices, np.int64(cols), np.int64(m))
    return F.CSR(data, indices, indptr, dense.shape, valid=True)


def dense_to_rsp(xp, dense):
    """The row_sparse form of a device array (ndim >= 1): the rows holding a non-zero."""
    if dense.ndim < 1:
        raise MXNetError("cast_storage: row_sparse storage needs at least 1 dimension")
    dense = xp.ascontiguousarray(dense)
    m = dense.shape[0]
    inner = K._inner(dense)
    dt = _dtype_name(dense)
    per_row = xp.zeros((m,), I64)
    if m and inner:
        xp.launch(_COUNT[dt], m, dense.reshape(m, inner), per_row, np.int64(inner),
                  np.int64(m))
    rows = K.nonzero(xp, per_row)
    return F.RowSparse(K.gather_rows(xp, dense, rows), rows, dense.shape, valid=True)


def from_dense(xp, dense, stype):
    """``dense`` (a device array) in storage ``stype``."""
    return dense_to_csr(xp, dense) if stype == F.CSR_STYPE else dense_to_rsp(xp, dense)


# ---- csr / row_sparse -> dense ------------------------------------------------------------------
_SCATTER_CSR = {size: kernel(K.FAMILY, f"mxlite_sparse_csr_scatter_{size}", f"""
extern "C" __global__ void mxlite_sparse_csr_scatter_{size}(const {c}* data,
        const long long* rows, const long long* cols, {c}* out, mx_idx ncols, mx_idx n) {{
    MX_GRID_LOOP(e, n) out[rows[e] * ncols + cols[e]] = data[e];
}}
""") for size, c in CARRIER.items()}


def to_dense(xp, value):
    """The dense device array of a csr/row_sparse ``value`` (checked first); a dense array
    is returned as it is."""
    if isinstance(value, F.CSR):
        checked(xp, value, "cast_storage", canonical=False)
        out = xp.zeros(value.shape, value.dtype)
        if not value.nnz:
            return out
        rows = K.entry_rows(xp, value.indptr, value.nnz)
        if value.valid:
            xp.launch(_SCATTER_CSR[out.dtype.itemsize], value.nnz, value.data, rows,
                      value.indices, out, np.int64(value.shape[1]), np.int64(value.nnz))
        else:               # repeated columns of a row add up, in stored order
            targets = K.csr_offsets(xp, rows, value.indices, value.shape[1], 1)
            segment_add(xp, value.data, targets, out, round_each=True)
        return out
    if isinstance(value, (F.RowSparse,)):
        checked(xp, value, "cast_storage")
        out = xp.zeros(value.shape, value.dtype)
        return K.scatter_rows(xp, value.data, value.indices, out)
    return value


# ---- empty values, copies, transfers ------------------------------------------------------------
def empty_like_storage(xp, stype, shape, dtype):
    """The all-zero device value of storage ``stype`` (dense: zeros)."""
    if stype == F.CSR_STYPE:
        return F.CSR(xp.zeros((0,), dtype), xp.zeros((0,), I64), xp.zeros((shape[0] + 1,), I64),
                     shape, valid=True)
    if stype == F.RSP_STYPE:
        return F.RowSparse(xp.zeros((0,) + tuple(shape[1:]), dtype), xp.zeros((0,), I64),
                           shape, valid=True)
    return xp.zeros(shape, dtype)


def _copy_array(xp, a):
    out = xp.empty(a.shape, a.dtype)
    xp.strided_copy(a, out)
    return out


def copy(xp, value):
    """A copy of a device format (the same flags)."""
    parts = [_copy_array(xp, a) for a in (value.data,) + value.aux[::-1]]
    out = F.CSR(parts[0], parts[1], parts[2], value.shape, value.valid) \
        if isinstance(value, F.CSR) else F.RowSparse(parts[0], parts[1], value.shape,
                                                     value.valid)
    out.in_range = value.in_range
    return out


F.DEVICE["gpu"] = sys.modules[__name__]
