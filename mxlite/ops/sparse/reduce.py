"""Storage rules of ``sum`` and ``mean`` of a csr matrix along one axis (0 or 1, or -1/-2):
a dense result, from the stored values alone (MXNet 1.9.1's; other reductions of sparse
arrays run on dense copies); and ``_contrib_getnnz``, the count of stored values."""
import numpy as np

from ...base import op_error
from ..registry import NON_DIFFERENTIABLE, OpDef, Param, register
from . import formats as F
from .rules import StorageRule, add_rule

CPU = "cpu"


def _one_axis(attrs, shapes):
    return attrs.axis is not None and len(attrs.axis) == 1 and not attrs.exclude \
        and attrs.axis[0] in (0, 1, -1, -2)


def _row_sums(x, dtype):
    return F.segment_sums(x.data.astype(dtype, copy=False), x.indptr)


def _col_sums(x, dtype):
    out = np.zeros(x.shape[1], dtype)
    np.add.at(out, x.indices, x.data.astype(dtype, copy=False))
    return out


def _reduce(mean):
    def compute(rctx, values, attrs, shapes, dtypes):
        x = F.checked(values[0], "sum", canonical=False)
        axis = attrs.axis[0] % 2
        out = _col_sums(x, dtypes[0]) if axis == 0 else _row_sums(x, dtypes[0])
        if mean:
            out = (out / x.shape[axis]).astype(dtypes[0], copy=False) if x.shape[axis] else \
                np.full(out.shape, np.nan, dtypes[0])
        return [out.reshape(shapes[0])]
    return compute


add_rule("sum", StorageRule((F.CSR_STYPE,), (F.DEFAULT,), {CPU: _reduce(False)},
                            when=_one_axis))
add_rule("mean", StorageRule((F.CSR_STYPE,), (F.DEFAULT,), {CPU: _reduce(True)},
                             when=_one_axis))


# ---- _contrib_getnnz -----------------------------------------------------------------------
def _getnnz_shape(shapes, attrs):
    from ..common import check_num_inputs
    check_num_inputs("_contrib_getnnz", shapes, 1)
    if len(shapes[0]) != 2:
        raise op_error("_contrib_getnnz", f"data must be a 2-D csr matrix, got shape "
                       f"{tuple(shapes[0])}")
    if attrs.axis not in (None, 1, -1):
        raise op_error("_contrib_getnnz", f"axis must be None or 1 (per row), got {attrs.axis}")
    return [(1,) if attrs.axis is None else (shapes[0][0],)]


def _getnnz_dense(rctx, ins, outs, attrs):
    raise op_error("_contrib_getnnz", "data must be a CSRNDArray (csr storage): it counts "
                   "the stored values")


def _getnnz(rctx, values, attrs, shapes, dtypes):
    x = F.checked(values[0], "_contrib_getnnz", canonical=False)
    if attrs.axis is None:
        return [np.array([x.nnz], np.int64)]
    return [np.diff(x.indptr).astype(np.int64)]


register(OpDef(
    "_contrib_getnnz", inputs=("data",),
    params=(Param("axis", "axis", None, "None: all stored values; 1: per row"),),
    infer_shape=_getnnz_shape, infer_type=lambda dtypes, attrs: [np.dtype(np.int64)],
    compute={"cpu": _getnnz_dense}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
    doc="""The number of values a csr matrix stores (int64): all of them (shape (1,)), or
with ``axis=1`` each row's. ``data`` must be a CSRNDArray (MXNet's rule).

>>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
>>> mx.nd.contrib.getnnz(a, axis=1).asnumpy().tolist()
[2, 0, 1]
"""))
add_rule("_contrib_getnnz", StorageRule((F.CSR_STYPE,), (F.DEFAULT,), {CPU: _getnnz}))
