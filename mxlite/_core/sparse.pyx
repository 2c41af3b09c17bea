"""Sparse matrix products (``dot`` with a csr operand), float32 and float64.

The callers (mxlite/ops/sparse/dot.py) hand in formats that passed the full format check
(every index in range, so no kernel reads or writes outside a buffer) and C-contiguous
dense operands. Each output row is computed by one thread, summing its terms in the order
they are stored, so a result does not depend on the number of threads.

- ``rows_sum``: out (m, n) = csr (m, k) @ dense (k, n), a row of out per csr row; and the
  rows of csr.T (k, m) @ dense (m, n) for the columns of csr that hold a value, their
  entries listed column by column in ``order`` (stable: in row order within a column),
  the result's rows a row_sparse array's data;
- ``dense_csr``: out (m, n) = dense (m, k) @ csr (k, n), a row of out per dense row.

A value not stored is a structural zero: it multiplies nothing, so a NaN or infinity of the
dense operand meets only the stored values (SciPy's meaning of a sparse product, and
MXNet's).

Sizes, indices and loop counters are ``int64_t`` throughout.
"""
from cython.parallel cimport prange

from .common cimport idx_t, real


def rows_sum(const real[::1] data, const idx_t[::1] rows, const idx_t[::1] order,
             const idx_t[::1] starts, const real[:, ::1] rhs, real[:, ::1] out):
    """out[r] = the sum over t in [starts[r], starts[r+1]) of data[e] * rhs[rows[e]], with
    e = order[t] (e = t when ``order`` is empty); out is overwritten.

    csr @ dense: rows = indices, starts = indptr, no order. csr.T @ dense: the entries of
    each stored column (``order``, stable), rows = each entry's row, starts delimiting the
    columns."""
    cdef idx_t g = out.shape[0], n = out.shape[1], r, t, e, c, row
    cdef bint ordered = order.shape[0] > 0
    cdef real v
    with nogil:
        for r in prange(g, schedule="guided"):
            for c in range(n):
                out[r, c] = 0
            for t in range(starts[r], starts[r + 1]):
                e = order[t] if ordered else t
                v = data[e]
                row = rows[e]
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
