"""Large-tensor rows of the operators of sparse storage.

``_sparse_retain`` runs twice: on a dense int8 array of N = 2**32 + 16 rows of one element
(rows kept at the head, past 2**31 and 2**32 and at the tail; the other marked rows must
come back 0), and on the CPU on a row_sparse array whose dense shape has N rows, storing
four of them: its indices are int64 past 2**32, so a wrapped 32-bit row number would keep
the wrong row or none. Sparse storage lives on the CPU; on a GPU the second part checks
that a row_sparse array there is a clear MXNetError.
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
    if t.ctx.device_type != "cpu":
        try:
            mx.nd.sparse.zeros("row_sparse", (n, 1), ctx=t.ctx)
        except mx.MXNetError as e:
            t.check("CPU only" in str(e), f"sparse storage on {t.ctx}: {e}")
        else:
            t.check(False, f"a row_sparse array on {t.ctx} did not raise")
        return
    rows = np.array(sorted({3, t.P31 + 5, t.P32 + 3, n - 1}), np.int64)
    data = np.arange(1, rows.size + 1, dtype=np.int8).reshape(-1, 1)
    r = mx.nd.sparse.row_sparse_array((data, rows), shape=(n, 1))
    t.largest = max(t.largest, n)               # its dense shape passes 2**32 rows
    # row 3 is stored too: a wrapped 32-bit P32 + 3 would keep it (at full scale)
    picked = mx.nd.sparse.retain(r, mx.nd.array([n - 1, t.P32 + 3, 7], dtype="int64"))
    picked.check_format()
    t.equal(picked.indices, np.array([t.P32 + 3, n - 1], np.int64), "row_sparse retain's rows")
    t.equal(picked.data, data[np.isin(rows, [t.P32 + 3, n - 1])], "row_sparse retain's data")


ROWS = {"_sparse_retain": Row(_retain_row, "int8")}
