"""Large-tensor rows of the operators of sparse storage, and the sparse parts of the rows of
``dot``, ``sum`` and ``sgd_update`` (``also``: run after their dense part, on the row's device).

``_sparse_retain`` runs twice: on a dense int8 array of N = 2**32 + 16 rows of one element
(rows kept at the head, past 2**31 and 2**32 and at the tail; the other marked rows must
come back 0), and on a row_sparse array whose dense shape has N rows, storing four of them:
its indices are int64 past 2**32, so a wrapped 32-bit row number would keep the wrong row
or none. Sparse storage lives on every device: on a GPU the same parts run its kernels.

The other parts build small sparse arrays whose dense shape passes 2**32 (a csr matrix of
N columns storing a value at the head, past 2**31 and 2**32 and at the tail; a row_sparse
gradient of such rows): ``dot(csr.T, dense)`` must give row_sparse rows at those column
numbers, ``sum`` of the csr matrix along each axis the values at the right places, and a
lazy ``sgd_update`` must change exactly the gradient's rows of a float32 weight past 2**31
rows (16 GiB would not fit past 2**32), by the dense update of those rows alone.
"""
import numpy as np

import mxlite as mx

from . import Row


def _retain_row(t):
    n = t.N
    x = t.big("int8", n, values=(3, 5, 7, 9)).reshape((n, 1))
    marks = t.marks(n)
    keep = [marks[0], marks[2]] if len(marks) > 2 else marks[:1]
    keep = sorted(set(keep) | {n - 1})
    y = mx.nd.sparse.retain(x, mx.nd.array(keep[::-1], dtype="int64"))
    t.shape(y, (n, 1), "dense retain")
    pos = t.positions(n)
    want = np.zeros(len(pos), np.int8)
    flat_x = t.values(x.reshape((-1,)), pos)
    for i, p in enumerate(pos):
        if p in keep:
            want[i] = flat_x[i]
    t.equal(t.values(y.reshape((-1,)), pos), want, "dense retain at the far end")
    rows = np.array(sorted({3, t.P31 + 5, t.P32 + 3, n - 1}), np.int64)
    data = np.arange(1, rows.size + 1, dtype=np.int8).reshape(-1, 1)
    r = mx.nd.sparse.row_sparse_array((data, rows), shape=(n, 1), ctx=t.ctx)
    t.check(r.context == t.ctx, f"row_sparse_array made on {r.context}, not {t.ctx}")
    t.largest = max(t.largest, n)               # its dense shape passes 2**32 rows
    # row 3 is stored too: a wrapped 32-bit P32 + 3 would keep it (at full scale)
    picked = mx.nd.sparse.retain(r, mx.nd.array([n - 1, t.P32 + 3, 7], dtype="int64"))
    t.check(picked.context == t.ctx, f"retain ran on {picked.context}")
    picked.check_format()
    t.equal(picked.indices, np.array([t.P32 + 3, n - 1], np.int64), "row_sparse retain's rows")
    t.equal(picked.data, data[np.isin(rows, [t.P32 + 3, n - 1])], "row_sparse retain's data")


def also(row, part):
    """``row`` followed by the sparse ``part(t)`` on the same device."""
    def run(t):
        row.run(t)
        part(t)
    return Row(run, row.dtype, row.size, row.reason)


def _far_csr(t, n, rows=4):
    """A (rows, n) int8 csr matrix storing 1..k at columns [3, P31 + 5, P32 + 3, n - 1] (the
    ones below n), row i % rows each, and those columns."""
    cols = np.array(sorted({3, t.P31 + 5, t.P32 + 3, n - 1} - {n}), np.int64)
    cols = cols[cols < n]
    which = np.arange(cols.size) % rows
    dense_rows = [cols[which == r] for r in range(rows)]
    vals = np.arange(1, cols.size + 1, dtype=np.int8)
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum([c.size for c in dense_rows], out=indptr[1:])
    order = np.argsort(which, kind="stable")
    a = mx.nd.sparse.csr_matrix((vals[order], cols[order], indptr), shape=(rows, n),
                                ctx=t.ctx)
    t.largest = max(t.largest, rows * n)
    return a, cols, which, vals


def dot_part(t):
    """dot(csr.T, dense): a row_sparse result whose rows are the csr's far column numbers."""
    n = t.N
    a, cols, which, vals = _far_csr(t, n)
    b = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int8)
    y = mx.nd.dot(a, mx.nd.array(b, dtype="int8"), transpose_a=True)
    t.check(y.stype == "row_sparse", f"dot(csr.T, dense) is {y.stype}")
    t.shape(y, (n, 2), "dot(csr.T, dense)")
    t.equal(y.indices, cols, "dot(csr.T, dense)'s rows")
    t.equal(y.data, (vals[:, None] * b[which]).astype(np.int8), "dot(csr.T, dense)'s values")


def sum_part(t):
    """sum of the csr matrix along axis 1 (per row) and axis 0 (the far columns)."""
    n = t.N
    a, cols, which, vals = _far_csr(t, n)
    rows = mx.nd.sum(a, axis=1)
    t.equal(rows, np.array([vals[which == r].sum() for r in range(4)], np.int8),
            "sum(csr, axis=1)")
    total = mx.nd.sum(a, axis=0)
    t.shape(total, (n,), "sum(csr, axis=0)")
    pos = sorted(set(t.positions(n)) | set(cols.tolist()))
    want = np.zeros(len(pos), np.int8)
    for i, p in enumerate(pos):
        want[i] = vals[cols == p].sum() if p in cols else 0
    t.equal(t.values(total, pos), want, "sum(csr, axis=0) at the far columns")


def sgd_part(t):
    """A lazy sgd_update with a row_sparse gradient of rows past 2**31: exactly those rows
    change, as the dense update of those rows alone."""
    n = t.N31
    weight = t.big("float32", n, values=(0.5, 1.5, 2.5, 3.5)).reshape((n, 1))
    rows = np.array([3, t.P31 + 5, n - 1], np.int64)
    g = np.array([[1.0], [2.0], [4.0]], np.float32)
    before = t.values(weight.reshape((-1,)), sorted(set(t.positions(n)) | set(rows.tolist())))
    pos = sorted(set(t.positions(n)) | set(rows.tolist()))
    grad = mx.nd.sparse.row_sparse_array((g, rows), shape=(n, 1), ctx=t.ctx)
    mx.nd.sgd_update(weight, grad, lr=0.25, wd=0.125, out=weight)
    small = mx.nd.array(before[[pos.index(r) for r in rows]].reshape(-1, 1))
    mx.nd.sgd_update(small, mx.nd.array(g), lr=0.25, wd=0.125, out=small)
    want = before.copy()
    for k, r in enumerate(rows):
        want[pos.index(r)] = small.asnumpy()[k, 0]
    t.equal(t.values(weight.reshape((-1,)), pos), want, "lazy sgd_update at the far rows")


def embedding_part(t, op=mx.nd.Embedding):
    """A lookup in a row_sparse weight of N rows storing rows past 2**31 and 2**32 (a Gluon
    row_sparse parameter's pulled rows): the stored rows come back, a row not stored reads
    as zeros, and the weight gradient is row_sparse at the rows looked up."""
    n = t.N
    rows = np.array([3, t.P31 + 5, t.P32 + 3, n - 1], np.int64)
    data = np.arange(1, 2 * rows.size + 1, dtype=np.float32).reshape(-1, 2)
    w = mx.nd.sparse.row_sparse_array((data, rows), shape=(n, 2), ctx=t.ctx)
    t.largest = max(t.largest, 2 * n)
    ids = np.array([n - 1, t.P32 + 3, 7, t.P31 + 5, t.P32 + 3], np.int64)
    w.attach_grad(stype="row_sparse")
    extra = {"sparse_grad": True} if op is mx.nd.Embedding else {}
    with mx.autograd.record():
        out = op(mx.nd.array(ids, dtype="int64"), w, input_dim=n, output_dim=2, **extra)
    want = np.array([data[rows == i][0] if i in rows else [0, 0] for i in ids], np.float32)
    t.equal(out, want, "lookup in a row_sparse weight past 2**32 rows")
    head = np.arange(10, dtype=np.float32).reshape(5, 2)
    out.backward(mx.nd.array(head))
    g = w.grad
    t.check(g.stype == "row_sparse", f"the weight gradient is {g.stype}")
    t.equal(g.indices, np.unique(ids), "the weight gradient's rows")
    t.equal(g.data, np.array([head[ids == r].sum(axis=0) for r in np.unique(ids)]),
            "the weight gradient's rows' sums")


def _getnnz_row(t):
    """getnnz of a (4, N) csr matrix storing values at columns past 2**32: 4 in all, one per
    row (on the row's device)."""
    a, cols, which, vals = _far_csr(t, t.N)
    t.equal(mx.nd.contrib.getnnz(a), np.array([cols.size], np.int64), "getnnz")
    t.equal(mx.nd.contrib.getnnz(a, axis=1),
            np.array([(which == r).sum() for r in range(4)], np.int64), "getnnz per row")


SQUARE_SUM_REASON = ("float32: the reduce kernel reads float16 widened to float32, so a float16 "
                     "input past 2**32 would take 8 + 16 GiB")


def _square_sum_row(t):
    """_square_sum of a dense float32 vector past 2**31 (its markers' squares) on every
    device; then of a row_sparse array of N rows there, per stored row."""
    x = t.big("float32", t.N31, values=(3, 5, 7, 9))
    total = mx.nd._internal._square_sum(x)
    want = sum(float(v) ** 2 for v in t.values(x, t.marks(t.N31)))
    t.equal(total, np.array([want], np.float32), "_square_sum of the whole array")
    n = t.N
    rows = np.array([3, t.P32 + 3, n - 1], np.int64)
    r = mx.nd.sparse.row_sparse_array((np.array([[2.0], [3.0], [4.0]], np.float32), rows),
                                      shape=(n, 1), ctx=t.ctx)
    y = mx.nd._internal._square_sum(r, axis=1, keepdims=True)
    t.check(y.stype == "row_sparse", f"_square_sum of row_sparse rows is {y.stype}")
    t.equal(y.indices, rows, "_square_sum's rows")
    t.equal(y.data, np.array([[4.0], [9.0], [16.0]], np.float32), "_square_sum's values")


def _far_rsp(t, rows, values, dtype):
    """An (N, 1) row_sparse array storing ``values`` at ``rows`` (past 2**31 and 2**32)."""
    data = np.array(values, dtype).reshape(-1, 1)
    t.largest = max(t.largest, t.N)
    return mx.nd.sparse.row_sparse_array((data, np.array(rows, np.int64)), shape=(t.N, 1),
                                         ctx=t.ctx)


def _scatter_scalar_row(name, sign):
    """``name`` (x +/- 2 on the stored values only) of a csr matrix storing values at columns
    past 2**32 and of a row_sparse array storing rows past 2**32: the same positions, the
    values moved by 2, nothing stored elsewhere. (A dense input runs the very kernel of the
    op it scatters, whose row covers it.)"""
    def run(t):
        op = getattr(mx.nd._internal, name)
        a, cols, which, vals = _far_csr(t, t.N)
        y = op(a, scalar=2)
        t.check(y.stype == "csr", f"{name} of csr is {y.stype}")
        t.equal(y.indices, a.indices, f"{name}: the csr positions")
        t.equal(y.data, (vals[np.argsort(which, kind="stable")] + sign * 2).astype(np.int8),
                f"{name}: the csr values")
        rows = [3, t.P31 + 5, t.P32 + 3, t.N - 1]
        r = op(_far_rsp(t, rows, [1, 2, 3, 4], "int8"), scalar=2)
        t.check(r.stype == "row_sparse", f"{name} of row_sparse is {r.stype}")
        t.equal(r.indices, np.array(rows, np.int64), f"{name}: the rows")
        t.equal(r.data, np.array([[1], [2], [3], [4]], np.int8) + sign * 2, f"{name}: rows' values")
    return Row(run, "int8")


def _scatter_div_row(t):
    """``_scatter_elemwise_div`` of row_sparse arrays of N rows: the lhs's rows (past 2**32),
    each divided by the rhs's same row (0 where the rhs stores nothing, so inf), only those
    rows made dense (never the rhs's dense shape)."""
    rows = [3, t.P31 + 5, t.P32 + 3, t.N - 1]
    lhs = _far_rsp(t, rows, [2, 4, 6, 8], "float32")
    rhs = _far_rsp(t, [t.P31 + 5, t.P32 + 3, t.P32 + 7, t.N - 1], [1, 2, 5, 4], "float32")
    y = mx.nd._internal._scatter_elemwise_div(lhs, rhs)
    t.check(y.stype == "row_sparse", f"_scatter_elemwise_div is {y.stype}")
    t.equal(y.indices, np.array(rows, np.int64), "_scatter_elemwise_div's rows")
    t.equal(y.data, np.array([[np.inf], [4.0], [3.0], [2.0]], np.float32),
            "_scatter_elemwise_div's values")


ROWS = {"_scatter_plus_scalar": _scatter_scalar_row("_scatter_plus_scalar", 1),
        "_scatter_minus_scalar": _scatter_scalar_row("_scatter_minus_scalar", -1),
        "_scatter_elemwise_div": Row(_scatter_div_row, "float32"),
        "_sparse_retain": Row(_retain_row, "int8"), "_contrib_getnnz": Row(_getnnz_row, "int8"),
        "_square_sum": Row(_square_sum_row, "float32", "2**31", SQUARE_SUM_REASON)}
