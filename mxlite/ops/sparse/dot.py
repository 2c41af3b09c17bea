"""Storage rules of ``dot`` with a csr operand (MXNet 1.9.1's output storage types):

=====================  ==================  ============
call                   result              kernel
=====================  ==================  ============
dot(csr, dense)        dense               rows_sum
dot(csr.T, dense)      row_sparse          rows_sum (entries by column)
dot(dense, csr)        csr                 dense_csr
dot(dense.T, csr)      dense               dense_csr
dot(csr, row_sparse)   as with a dense rhs (the rhs is made dense)
=====================  ==================  ============

``transpose_b`` reads a transposed copy of the dense operand; ``forward_stype`` (when
given) converts the result to that storage type. float32 and float64 run in the compiled
kernels (mxlite/_core/sparse.pyx); other dtypes in NumPy, with the same sums.
"""
import numpy as np

from ..._core import sparse as kernels
from . import formats as F
from ..registry import REGISTRY
from .rules import StorageRule, add_rule

CPU = "cpu"
_FAST = (np.dtype(np.float32), np.dtype(np.float64))
_NO_ORDER = np.zeros(0, F.INDEX)


def _two_d(attrs, shapes):
    return len(shapes[0]) == 2 and len(shapes[1]) == 2


def _rows_of(x):
    """The row number of each stored value of csr ``x``."""
    return np.repeat(np.arange(x.shape[0], dtype=F.INDEX), np.diff(x.indptr))


def _dense_operand(v, transpose):
    v = F.to_dense(v)
    return np.ascontiguousarray(v.T if transpose else v)


def csr_dense(x, rhs):
    """csr ``x`` (m, k) @ dense ``rhs`` (k, n) -> dense (m, n)."""
    out = np.empty((x.shape[0], rhs.shape[1]), rhs.dtype)
    if rhs.dtype in _FAST:
        kernels.rows_sum(x.data, x.indices, _NO_ORDER, x.indptr, rhs, out)
    else:
        out[...] = 0
        np.add.at(out, _rows_of(x), x.data[:, None] * rhs[x.indices])
    return out


def csr_t_dense(x, rhs):
    """csr ``x`` (m, k) transposed @ dense ``rhs`` (m, n) -> row_sparse (k, n): a row for
    each column of x that holds a value."""
    order = np.argsort(x.indices, kind="stable")
    sorted_cols = x.indices[order]
    first = np.ones(sorted_cols.shape[0], bool)
    first[1:] = sorted_cols[1:] != sorted_cols[:-1]
    starts = np.append(np.flatnonzero(first), sorted_cols.shape[0]).astype(F.INDEX)
    cols = sorted_cols[first]
    rows_of = _rows_of(x)
    out = np.empty((cols.shape[0], rhs.shape[1]), rhs.dtype)
    if rhs.dtype in _FAST:
        kernels.rows_sum(x.data, rows_of, order.astype(F.INDEX), starts, rhs, out)
    else:
        group = np.repeat(np.arange(cols.shape[0]), np.diff(starts))
        out[...] = 0
        np.add.at(out, group, x.data[order][:, None] * rhs[rows_of[order]])
    return F.RowSparse(out, cols, (x.shape[1], rhs.shape[1]), True)


def dense_csr(lhs, x):
    """dense ``lhs`` (m, k) @ csr ``x`` (k, n) -> dense (m, n)."""
    out = np.empty((lhs.shape[0], x.shape[1]), lhs.dtype)
    if lhs.dtype in _FAST:
        kernels.dense_csr(lhs, x.data, x.indices, x.indptr, out)
    else:
        out[...] = 0
        rows = _rows_of(x)
        for i in range(lhs.shape[0]):       # (rare dtypes: one row at a time in NumPy)
            np.add.at(out[i], x.indices, lhs[i, rows] * x.data)
    return out


def _transposed(x):
    """csr ``x`` transposed, as csr (the same values, ordered by column)."""
    order = np.argsort(x.indices, kind="stable")
    indptr = np.zeros(x.shape[1] + 1, F.INDEX)
    np.cumsum(np.bincount(x.indices, minlength=x.shape[1]), out=indptr[1:])
    return F.CSR(np.ascontiguousarray(x.data[order]), _rows_of(x)[order], indptr,
                 (x.shape[1], x.shape[0]), True)


def _finish(value, attrs, default):
    want = attrs.forward_stype or default
    if F.stype_of_raw(value) == want:
        return value
    dense = F.to_dense(value)
    if want == F.CSR_STYPE:
        return F.dense_to_csr(dense)
    return F.dense_to_rsp(dense) if want == F.RSP_STYPE else dense


def _csr_lhs(rctx, values, attrs, shapes, dtypes):
    x = F.checked(values[0], "dot", canonical=False)
    rhs = _dense_operand(values[1], attrs.transpose_b).astype(dtypes[0], copy=False)
    if attrs.transpose_a:
        return [_finish(csr_t_dense(x, rhs), attrs, F.RSP_STYPE)]
    return [_finish(csr_dense(x, rhs), attrs, F.DEFAULT)]


def _csr_rhs(rctx, values, attrs, shapes, dtypes):
    lhs = _dense_operand(values[0], attrs.transpose_a)
    x = F.checked(values[1], "dot", canonical=False)
    if attrs.transpose_b:
        x = _transposed(x)
    return [_finish(dense_csr(lhs, x), attrs, _dense_csr_stype(attrs))]


def _lhs_stype(default):
    return lambda attrs, stypes: (attrs.forward_stype or default(attrs),)


_lhs_default = _lhs_stype(lambda attrs: F.RSP_STYPE if attrs.transpose_a else F.DEFAULT)
for _rhs in (F.DEFAULT, F.RSP_STYPE):
    add_rule("dot", StorageRule((F.CSR_STYPE, _rhs), _lhs_default, {CPU: _csr_lhs},
                                when=_two_d))
def _dense_csr_stype(attrs):
    return F.DEFAULT if attrs.transpose_a else F.CSR_STYPE


add_rule("dot", StorageRule((F.DEFAULT, F.CSR_STYPE), _lhs_stype(_dense_csr_stype),
                            {CPU: _csr_rhs}, when=_two_d))


def _dot_grad_stypes(attrs, in_stypes):
    """dot(csr, dense): the dense operand's gradient is csr.T @ head, row_sparse."""
    if in_stypes[0] == F.CSR_STYPE and not attrs.transpose_a and not attrs.transpose_b:
        return (None, F.RSP_STYPE)
    return (None, None)


REGISTRY["dot"].grad_stypes = _dot_grad_stypes
