"""Large-tensor rows: gather_nd, scatter_nd, _backward_gather_nd, _scatter_set_nd,
batch_take, slice_like, shape_array, size_array (mxlite/ops/array_ops.py). Every row goes
past 2**32 elements of int8, with int64 indices above 2**32 (exact, unlike float32) where the
op takes n-d indices; the checks are index.py's: the head, around 2**31 and 2**32, the tail,
every position touched and that position shifted by 2**32 (where a wrapped 32-bit index
would land)."""
import mxlite as mx

from . import Row
from .index import _check, _check_gather, _check_sparse, _i64, _marked, _scatter_sums, \
    _shape_only


def _gather_nd_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    x, marks = _marked(t, "int8", N)
    at = lambda p: marks.get(p, 0)               # noqa: E731 - the closed form of x
    flat = [N - 1, P32 + 3, P31 + 5, 3, -1, 3 - N]
    got = mx.nd.gather_nd(x, _i64([flat]))
    _check_gather(t, got, [at(p % N) for p in flat], "gather_nd, 1-d")
    h = N // 2                                   # (2, h): [row, column] pairs
    pairs = [(1, P32 + 3 - h), (0, P31 + 5), (1, h - 1), (-1, -1), (0, 3)]
    got = mx.nd.gather_nd(x.reshape((2, h)), _i64([[r for r, _ in pairs], [c for _, c in pairs]]))
    _check_gather(t, got, [at((r % 2) * h + c % h) for r, c in pairs], "gather_nd, 2-d")
    R = 16                                       # rows of R elements: M=1 of a 2-d array
    rows = [N // R - 1, P32 // R, P31 // R]
    got = mx.nd.gather_nd(x.reshape((N // R, R)), _i64([rows]))
    _check_gather(t, got, [[at(r * R + i) for i in range(R)] for r in rows], "gather_nd, rows")


def _scatter(add):
    def run(t):
        N, P31, P32 = t.N, t.P31, t.P32
        h = N // 2
        targets = [(1, P32 + 3 - h), (0, P31 + 5), (1, h - 1), (0, 3)] + (
            [(1, P32 + 3 - h)] if add else [])
        values = [1, 2, 4, 8, 16][:len(targets)]
        idx = _i64([[r for r, _ in targets], [c for _, c in targets]])
        data = mx.nd.array(values, dtype="int8")
        if add:
            out = mx.nd._internal._backward_gather_nd(data, idx, shape=(2, h))
        else:
            out = mx.nd.scatter_nd(data, idx, shape=(2, h))
        t.shape(out, (2, h), "scatter")
        _check_sparse(t, out, _scatter_sums([r * h + c for r, c in targets], values), "scatter")
    return run


def _scatter_set_nd_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    x, marks = _marked(t, "int8", N)
    targets = [P32 + 2, P31 + 6, N - 2, 1]
    out = mx.nd._internal._scatter_set_nd(x, mx.nd.array([11, 12, 13, 14], dtype="int8"),
                                          _i64([targets]), shape=(N,))
    written = dict(marks)
    written.update(zip(targets, [11, 12, 13, 14]))
    _check(t, out, lambda p: written.get(p, 0), written, "_scatter_set_nd")


def _batch_take_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    R = 16                                       # (R, N / R): rows start past 2**31, 2**32
    C = N // R
    x, marks = _marked(t, "int8", N)
    cols = [(P32 + 3) % C if r == (P32 + 3) // C else (r * 7) % C for r in range(R)]
    cols[(P31 + 5) // C] = (P31 + 5) % C
    cols[R - 1] = C + 9                          # clipped to the last column
    got = mx.nd.batch_take(x.reshape((R, C)), mx.nd.array(cols, dtype="int32"))
    _check_gather(t, got, [marks.get(r * C + min(c, C - 1), 0) for r, c in enumerate(cols)],
                  "batch_take")


def _slice_like_row(t):
    N = t.N
    h = N // 2
    x, marks = _marked(t, "int8", N)
    got = mx.nd.slice_like(x.reshape((2, h)), mx.nd.zeros((1, h - 3), dtype="int8"), axes=(1,))
    t.shape(got, (2, h - 3), "slice_like")
    w = h - 3
    # element p of the result is x[p // w, p % w]
    _check(t, got, lambda p: marks.get((p // w) * h + p % w, 0),
           [(m // h) * w + m % h for m in marks if m % h < w], "slice_like")


def _shape_array_row(t):
    x = _shape_only(t, (2, t.N // 2), "int8")
    _check_gather(t, mx.nd.shape_array(x), [2, t.N // 2], "shape_array")


def _size_array_row(t):
    x = _shape_only(t, (2, t.N // 2), "int8")
    _check_gather(t, mx.nd.size_array(x), [t.N], "size_array")


ROWS = {
    "gather_nd": Row(_gather_nd_row, "int8"),
    "scatter_nd": Row(_scatter(False), "int8"),
    "_backward_gather_nd": Row(_scatter(True), "int8"),
    "_scatter_set_nd": Row(_scatter_set_nd_row, "int8"),
    "batch_take": Row(_batch_take_row, "int8"),
    "slice_like": Row(_slice_like_row, "int8"),
    "shape_array": Row(_shape_array_row, "int8"),
    "size_array": Row(_size_array_row, "int8"),
}
