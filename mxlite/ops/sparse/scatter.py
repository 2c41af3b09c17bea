"""Storage rules of MXNet's sparse-storage forms (``mxlite/ops/scatter.py``) and of
``contrib.quadratic`` of a csr matrix (see that module's docstring)."""
import numpy as np

from ..registry import REGISTRY
from . import formats as F
from .elemwise import _on_values
from .rules import ANY, SPARSE, StorageRule

CPU = "cpu"


def _same_stype(attrs, stypes):
    return stypes[:1]


def rows_of(value, rows, op):
    """Rows ``rows`` (int64, in range) of ``value`` (dense, csr or row_sparse) as a dense
    array: a row a sparse ``value`` does not store is zeros, a csr's repeated column the sum
    of its values. Only those rows are made, whatever ``value``'s dense shape."""
    if isinstance(value, F.RowSparse):
        value = F.checked(value, op)
        out = np.zeros((rows.size,) + value.shape[1:], value.dtype)
        if value.nnz and rows.size:
            slot = np.minimum(np.searchsorted(value.indices, rows), value.nnz - 1)
            stored = value.indices[slot] == rows
            out[stored] = value.data[slot[stored]]
        return out
    if isinstance(value, F.CSR):
        value = F.checked(value, op, canonical=False)
        starts, counts = value.indptr[rows], np.diff(value.indptr)[rows]
        which = np.repeat(np.arange(rows.size, dtype=F.INDEX), counts)
        entries = np.repeat(starts - np.cumsum(counts) + counts, counts) + \
            np.arange(int(counts.sum()), dtype=F.INDEX)
        out = np.zeros((rows.size, value.shape[1]), value.dtype)
        np.add.at(out, (which, value.indices[entries]), value.data[entries])
        return out
    return np.ascontiguousarray(np.asarray(value)[rows])


def _rows_divided(op):
    """``lhs``'s stored rows divided by the same rows of ``rhs`` (any storage)."""
    def compute(rctx, values, attrs, shapes, dtypes):
        lhs = F.checked(values[0], op.name, canonical=False)
        rows = rows_of(values[1], lhs.indices, op.name)
        out = np.empty(lhs.data.shape, dtypes[0])
        op.compute[rctx.kernels](rctx, [np.ascontiguousarray(lhs.data), rows], [out], attrs)
        return [F.RowSparse(out, lhs.indices, lhs.shape, lhs.valid)]
    return compute


for _name in ("_scatter_plus_scalar", "_scatter_minus_scalar"):
    REGISTRY[_name].storage = (StorageRule((SPARSE,), _same_stype,
                                           {CPU: _on_values(REGISTRY[_name])}),)
_div = REGISTRY["_scatter_elemwise_div"]
_div.storage = (StorageRule((F.RSP_STYPE, ANY), (F.RSP_STYPE,), {CPU: _rows_divided(_div)}),)

_quadratic = REGISTRY["_contrib_quadratic"]
_quadratic.storage = _quadratic.storage + (StorageRule(
    (F.CSR_STYPE,), (F.CSR_STYPE,), {CPU: _on_values(_quadratic)},
    when=lambda attrs, shapes: attrs.c == 0),)
