"""Storage rules of ``sum`` and ``mean`` of a csr matrix along one axis (0 or 1, or -1/-2):
a dense result, from the stored values alone (MXNet 1.9.1's; other reductions of sparse
arrays run on dense copies); ``_contrib_getnnz``, the count of stored values; and
``_square_sum`` (MXNet's sum of squares, natively for row_sparse rows)."""
import numpy as np

from ...base import op_error
from ..reduce import (_AXIS_PARAMS, _kernel_input, _output_shape, _spread, reduced_axes,
                      run_reduce)
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


# ---- _square_sum ---------------------------------------------------------------------------
def _square_sum_shape(shapes, attrs):
    return [_output_shape("_square_sum", tuple(shapes[0]), attrs.axis, attrs.exclude,
                                  attrs.keepdims)]


def _square_sum_type(dtypes, attrs):
    if np.dtype(dtypes[0]).kind != "f":
        raise op_error("_square_sum", f"data must be a float array, got {np.dtype(dtypes[0])}")
    return [dtypes[0]]


def _square_sum_dense(rctx, ins, outs, attrs):
    """The sum of squares over the axes, in double (the reduce kernels' ``sumsq``: no
    temporary of the input's size)."""
    x = ins[0]
    axes = reduced_axes("_square_sum", x.shape, attrs.axis, attrs.exclude)
    run_reduce(rctx, "sumsq", _kernel_input(x), axes, outs[0])


def _square_sum_grad(F_, node, ograds):
    """d sum(x**2)/dx = 2 x times the head gradient spread over the reduced axes."""
    return [F_.elemwise_mul(_spread(F_, node, ograds[0]), node.inputs[0]) * 2.0]


def _rsp_rows_axis(attrs, shapes):
    return len(shapes[0]) == 2 and attrs.axis is not None and len(attrs.axis) == 1 \
        and not attrs.exclude and attrs.axis[0] in (0, 1, -1, -2)


def _rsp_square_sum(rctx, values, attrs, shapes, dtypes):
    """row_sparse data: per stored row (axis 1), or over the stored rows (axis 0)."""
    x = F.checked(values[0], "_square_sum")
    sq = (x.data.astype(np.float64) ** 2)
    if attrs.axis[0] % 2 == 0:
        return [sq.sum(axis=0).astype(dtypes[0]).reshape(shapes[0])]
    rows = sq.sum(axis=1).astype(dtypes[0])
    if attrs.keepdims:
        return [F.RowSparse(rows.reshape(-1, 1), x.indices, shapes[0], True)]
    out = np.zeros(shapes[0], dtypes[0])
    out[x.indices] = rows
    return [out]


def _square_sum_stype(attrs, stypes):
    return (F.RSP_STYPE,) if attrs.axis[0] % 2 == 1 and attrs.keepdims else (F.DEFAULT,)


register(OpDef(
    "_square_sum", inputs=("data",), params=_AXIS_PARAMS,
    infer_shape=_square_sum_shape, infer_type=_square_sum_type,
    compute={"cpu": _square_sum_dense}, gradient=_square_sum_grad,
    doc="""The sum of the squares of ``data`` over ``axis`` (``sum(square(data))``, summed
in double; float dtypes). For a 2-D row_sparse array along one axis it reads the stored rows
alone: per row (``axis=1``; with ``keepdims`` a row_sparse result of the stored rows) or
over the rows (``axis=0``).

>>> mx.nd._internal._square_sum(mx.nd.array([[1, 2], [3, 4]]), axis=1).asnumpy().tolist()
[5.0, 25.0]
"""))
add_rule("_square_sum", StorageRule((F.RSP_STYPE,), _square_sum_stype,
                                    {CPU: _rsp_square_sum}, when=_rsp_rows_axis))
