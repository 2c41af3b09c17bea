"""Sparse matrix products (``dot`` with a csr operand), float32 and float64.

The callers (mxlite/ops/sparse/dot.py) hand in formats that passed the full format check
(every index in range, so no kernel reads or writes outside a buffer) and C-contiguous
dense operands. Each output row is computed by one thread, summing its terms in the order
they are stored, so a result does not depend on the number of threads.

- ``csr_dense``: out (m, n) = csr (m, k) @ dense (k, n), a row of out per csr row;
- ``csr_t_dense``: the rows ``cols`` of csr.T (k, m) @ dense (m, n), for the columns of
  csr that hold a value, whose entries are listed column by column in ``order`` (stable:
  in row order within a column), ``starts`` delimiting the columns; the result's rows are
  a row_sparse array's data;
- ``dense_csr``: out (m, n) = dense (m, k) @ csr (k, n), a row of out per dense row.

A value not stored is a structural zero: it multiplies nothing, so a NaN or infinity of the
dense operand meets only the stored values (SciPy's meaning of a sparse product, and
MXNet's).

Sizes, indices and loop counters are ``int64_t`` throughout.
"""
from cython.parallel cimport prange

from .common cimport idx_t, real


def csr_dense(const real[::1] data, const idx_t[::1] indices, const idx_t[::1] indptr,
              const real[:, ::1] rhs, real[:, ::1] out):
    """out = csr @ rhs (out is overwritten)."""
    cdef idx_t m = out.shape[0], n = out.shape[1], i, j, c, col
    cdef real v
    with nogil:
        for i in prange(m, schedule="guided"):
            for c in range(n):
                out[i, c] = 0
            for j in range(indptr[i], indptr[i + 1]):
                v = data[j]
                col = indices[j]
                for c in range(n):
                    out[i, c] += v * rhs[col, c]


def csr_t_dense(const real[::1] data, const idx_t[::1] rows_of, const idx_t[::1] order,
                const idx_t[::1] starts, const real[:, ::1] rhs, real[:, ::1] out):
    """out[r] = sum over the entries e of column group r of data[e] * rhs[rows_of[e]]."""
    cdef idx_t g = out.shape[0], n = out.shape[1], r, t, e, c, row
    cdef real v
    with nogil:
        for r in prange(g, schedule="guided"):
            for c in range(n):
                out[r, c] = 0
            for t in range(starts[r], starts[r + 1]):
                e = order[t]
                v = data[e]
                row = rows_of[e]
                for c in range(n):
                    out[r, c] += v * rhs[row, c]


def dense_csr(const real[:, ::1] lhs, const real[::1] data, const idx_t[::1] indices,
              const idx_t[::1] indptr, real[:, ::1] out):
    """out = lhs @ csr (out is overwritten)."""
    cdef idx_t m = out.shape[0], n = out.shape[1], k = lhs.shape[1], i, r, j, c
    cdef real a
    with nogil:
        for i in prange(m, schedule="guided"):
            for c in range(n):
                out[i, c] = 0
            for r in range(k):
                a = lhs[i, r]
                for j in range(indptr[r], indptr[r + 1]):
                    out[i, indices[j]] += a * data[j]
