"""Storage rule of ``_take_grad(sparse_grad=True)``, the weight gradient of
``Embedding(sparse_grad=True)``: a row_sparse array of the rows looked up (ascending), each
the sum of its head-gradient rows, in the order the indices come (as the dense kernel adds
them); and Embedding's backward storage type (a row_sparse weight gradient with
``sparse_grad``, for ``simple_bind``)."""
import numpy as np

from ..._core import index as _k
from ..index import _positions
from ..registry import REGISTRY
from . import formats as F
from .rules import StorageRule, add_rule

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


add_rule("_take_grad", StorageRule((F.DEFAULT,) * 3, (F.RSP_STYPE,), {CPU: _take_grad_rows},
                                   when=_rows_only))


def _embedding_grad_stypes(attrs, in_stypes):
    return (None, F.RSP_STYPE if attrs.sparse_grad else None)


REGISTRY["Embedding"].grad_stypes = _embedding_grad_stypes
