"""Storage rules of the embedding lookups.

- ``_take_grad(sparse_grad=True)``, the weight gradient of ``Embedding(sparse_grad=True)``
  and of ``_contrib_SparseEmbedding``: a row_sparse array of the rows looked up (ascending),
  each the sum of its head-gradient rows, in the order the indices come (as the dense kernel
  adds them). Its third input gives only the shape, so a row_sparse weight is not densified.
- ``Embedding``/``_contrib_SparseEmbedding`` of a row_sparse weight (a Gluon
  ``Parameter(stype='row_sparse')`` holds only the rows pulled for the batch): a dense
  output, a row the weight does not store read as zeros.
- Their backward storage types (a row_sparse weight gradient, for ``simple_bind``).
"""
import numpy as np

from ..._core import index as _k
from ..index import _positions
from ..registry import REGISTRY
from . import formats as F
from .rules import ANY, StorageRule, add_rule

CPU = "cpu"


def _rows_only(attrs, shapes):
    return attrs.sparse_grad and attrs.axis in (0, -len(shapes[2]))


def _take_grad_rows(rctx, values, attrs, shapes, dtypes):
    grad, indices, data = values
    n = data.shape[0]
    inner = int(np.prod(data.shape[1:], dtype=np.int64))
    pos = _positions(rctx.xp, "_take_grad", indices, n, attrs.mode, 0)
    rows, slot = _k.distinct_positions(pos)
    work = np.float32 if dtypes[0].itemsize < 4 else dtypes[0]
    sums = np.empty((1, rows.size, inner), work)
    _k.take_grad(np.ascontiguousarray(grad, dtype=work), slot, sums, 1, rows.size, inner)
    out = sums.reshape((rows.size,) + tuple(data.shape[1:])).astype(dtypes[0], copy=False)
    return [F.RowSparse(out, rows.astype(F.INDEX), data.shape, True)]


add_rule("_take_grad", StorageRule((F.DEFAULT, F.DEFAULT, ANY), (F.RSP_STYPE,),
                                   {CPU: _take_grad_rows}, when=_rows_only))


def _lookup_of(name):
    def lookup(rctx, values, attrs, shapes, dtypes):
        data, weight = values
        weight = F.checked(weight, name)
        pos = _positions(rctx.xp, name, data, attrs.input_dim, "raise", 0).reshape(-1)
        if not weight.nnz or not pos.size:
            return [np.zeros(shapes[0], dtypes[0])]
        out = np.empty((pos.size, attrs.output_dim), dtypes[0])
        slot = np.minimum(np.searchsorted(weight.indices, pos), weight.nnz - 1)
        _k.take(weight.data, slot, out, 1, weight.nnz, attrs.output_dim)
        missing = weight.indices[slot] != pos       # rows not stored read as zeros
        if missing.any():
            out[missing] = 0
        return [out.reshape(shapes[0])]
    return lookup


def _embedding_grad_stypes(attrs, in_stypes):
    return (None, F.RSP_STYPE if getattr(attrs, "sparse_grad", True) else None)


for _name in ("Embedding", "_contrib_SparseEmbedding"):
    add_rule(_name, StorageRule((F.DEFAULT, F.RSP_STYPE), (F.DEFAULT,), {CPU: _lookup_of(_name)}))
    REGISTRY[_name].grad_stypes = _embedding_grad_stypes
