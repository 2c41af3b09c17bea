"""Large-tensor rows: gather_nd, scatter_nd, _backward_gather_nd, _scatter_set_nd,
batch_take, slice_like, shape_array, size_array (mxlite/ops/array_ops.py). Every row goes
past 2**32 elements of int8, with int64 indices above 2**32 (exact, unlike float32) where the
op takes n-d indices; the checks are index.py's: the head, around 2**31 and 2**32, the tail,
every position touched and that position shifted by 2**32 (where a wrapped 32-bit index
would land)."""
import numpy as np

import mxlite as mx

from . import Row, elementwise
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


# ---- creation and moments --------------------------------------------------------------------
def _eye_row(t):
    h = t.N // 2                                 # (2, h), ones at (0, k) and (1, k + 1)
    k = t.P32 + 3 - h - 1
    out = mx.nd.eye(2, h, k, dtype="int8")
    t.shape(out, (2, h), "eye")
    _check_sparse(t, out, {k: 1, h + k + 1: 1}, "eye")


def _linspace_row(t):
    N = t.N
    lo, hi = -100.5, 100.5
    out = mx.nd.linspace(lo, hi, N, dtype="int8")
    step = (hi - lo) / (N - 1)
    value = lambda p: int(hi) if p == N - 1 else int(lo + p * step)   # noqa: E731 - truncated
    t.shape(out, (N,), "linspace")
    _check(t, out, value, [], "linspace")


def _moments_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    R = 16                                       # rows of R: moments of each row, and of each
    x, marks = _marked(t, "int8", N, extra={P32 + 2: 8})   # column (over N / R rows)
    mean, var = mx.nd.moments(x.reshape((N // R, R)), axes=(1,))
    rows = {}
    for p, v in marks.items():
        rows.setdefault(p // R, []).append(v)

    def row_moments(r):
        vals = rows.get(r, []) + [0] * (R - len(rows.get(r, [])))
        m = int(sum(vals) / R)                   # truncated toward zero (MXNet's int mean)
        return m, int(sum((v - m) ** 2 for v in vals) / R)
    touched = sorted(rows)
    _check(t, mean, lambda r: row_moments(r)[0], touched, "moments' mean, rows")
    _check(t, var, lambda r: row_moments(r)[1], touched, "moments' var, rows")
    del mean, var
    mean, var = mx.nd.moments(x.reshape((N // R, R)), axes=(0,))
    cols = [[v for p, v in marks.items() if p % R == c] for c in range(R)]
    n = N // R
    want_m = [int(sum(c) / n) for c in cols]
    _check_gather(t, mean, want_m, "moments' mean, columns")
    _check_gather(t, var, [int((sum((v - m) ** 2 for v in c) + (n - len(c)) * m * m) / n)
                           for c, m in zip(cols, want_m)], "moments' var, columns")


ROWS.update({
    "_eye": Row(_eye_row, "int8"),
    "_linspace": Row(_linspace_row, "int8"),
    "moments": Row(_moments_row, "int8"),
})


def _histogram_row(t):
    N = t.N
    x, marks = _marked(t, "int8", N, extra={t.P32 + 2: -3, t.P31 + 9: 12})
    counts, edges = mx.nd.histogram(x, bins=10, range=(0, 10))
    want = [0] * 10
    want[0] = N - len(marks)                     # the zeros
    for v in marks.values():
        if 0 <= v <= 10:
            want[min(int(v), 9)] += 1
    _check_gather(t, counts, want, "histogram's counts")
    _check_gather(t, edges, list(range(11)), "histogram's edges")


ROWS["_histogram"] = Row(_histogram_row, "int8")


def _ravel_row(t):
    N = t.N                                      # (1, N) coordinates on an axis of 128
    x, marks = _marked(t, "int8", N, extra={t.P32 + 2: 127})
    out = mx.nd.ravel_multi_index(x.reshape((1, N)), shape=(128,))
    t.shape(out, (N,), "ravel_multi_index")
    _check_sparse(t, out, marks, "ravel_multi_index")
    h = N // 2                                   # int64 multi-indices into (2, h): past 2**32
    idx = _i64([[1, 0, 1], [t.P32 + 3 - h, t.P31 + 5, h - 1]])
    _check_gather(t, mx.nd.ravel_multi_index(idx, shape=(2, h)),
                  [t.P32 + 3, t.P31 + 5, N - 1], "ravel_multi_index, int64")


def _unravel_row(t):
    N = t.N                                      # flat indices into (16, 8): coordinates
    x, marks = _marked(t, "int8", N, extra={t.P32 + 2: 127})
    out = mx.nd.unravel_index(x, shape=(16, 8))
    t.shape(out, (2, N), "unravel_index")
    _check(t, out, lambda p: (marks.get(p - N, 0) % 8 if p >= N else marks.get(p, 0) // 8),
           list(marks) + [N + m for m in marks], "unravel_index")
    h = N // 2
    got = mx.nd.unravel_index(_i64([t.P32 + 3, N - 1]), shape=(2, h))
    _check_gather(t, got, [[1, 1], [t.P32 + 3 - h, h - 1]], "unravel_index, int64")


ROWS["_ravel_multi_index"] = Row(_ravel_row, "int8")
ROWS["_unravel_index"] = Row(_unravel_row, "int8")


def _split_v2_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    x, marks = _marked(t, "int8", N)
    h = N // 2                                   # (2, h) split along the columns
    cut = P32 + 3 - h                            # part 1 holds 2**32 + 3 (row 1)
    parts = mx.nd.split_v2(x.reshape((2, h)), (cut,), axis=1)
    for k, (lo, hi) in enumerate([(0, cut), (cut, h)]):
        w = hi - lo
        t.shape(parts[k], (2, w), f"split_v2 part {k}")
        _check(t, parts[k], lambda p, lo=lo, w=w: marks.get((p // w) * h + lo + p % w, 0),
               [(m // h) * w + m % h - lo for m in marks if lo <= m % h < hi],
               f"split_v2 part {k}")
    del parts
    last = mx.nd.split_v2(x, 16, axis=0)[-1]     # equal sections: the tail
    _check(t, last, lambda p: marks.get(N - N // 16 + p, 0),
           [m - (N - N // 16) for m in marks if m >= N - N // 16], "split_v2, sections")


ROWS["_split_v2"] = Row(_split_v2_row, "int8")


def _fill_element_row(t):
    N, P32 = t.N, t.P32
    R = 16                                       # (R, N / R): rows start past 2**31, 2**32
    C = N // R
    x, marks = _marked(t, "int8", N)
    cols = [(r * 5) % C for r in range(R)]
    cols[(P32 + 3) // C] = (P32 + 3) % C         # overwrite the marker past 2**32
    cols[R - 1] = C - 1                          # and the last element
    vals = [100 + r for r in range(R)]
    out = mx.nd.fill_element_0index(x.reshape((R, C)), mx.nd.array(vals, dtype="int8"),
                                    _i64(cols))
    written = dict(marks)
    written.update({r * C + c: v for r, (c, v) in enumerate(zip(cols, vals))})
    _check(t, out, lambda p: written.get(p, 0), written, "fill_element_0index")


def _onehot_encode_row(t):
    N = t.N
    out = mx.nd.empty((1, N), dtype="int8")
    t.seen(out)
    got = mx.nd.onehot_encode(_i64([t.P32 + 3]), out)
    t.shape(got, (1, N), "onehot_encode")
    _check_sparse(t, got, {t.P32 + 3: 1}, "onehot_encode")


ROWS["fill_element_0index"] = Row(_fill_element_row, "int8")
ROWS["_onehot_encode"] = Row(_onehot_encode_row, "int8")


def _amp_multicast_row(t):
    x = t.big("int8")
    pos = t.positions(t.N)
    before = t.small(x, pos)
    a, b = mx.nd.amp_multicast(x, mx.nd.ones((2,), dtype="float16"), num_outputs=2)
    t.shape(a, (t.N,), "amp_multicast")
    t.equal(t.values(a, pos), before, "amp_multicast passes int8 through")
    t.equal(b, np.ones(2, np.float16), "amp_multicast's float16 input")


ROWS.update({
    "cast_storage": elementwise(lambda x, out=None: mx.nd.cast_storage(x, stype="default",
                                                                        out=out)),
    "amp_cast": elementwise(lambda x, out=None: mx.nd.amp_cast(x, dtype="float16", out=out)),
    "amp_multicast": Row(_amp_multicast_row, "int8"),
})


def _reset_arrays_row(t):
    x = t.big("int8")
    y = mx.nd.ones((3,), dtype="float16")
    t.check(mx.nd.reset_arrays(x, y, num_arrays=2) == [], "reset_arrays returns []")
    _check_sparse(t, x, {}, "reset_arrays")
    t.equal(y, np.zeros(3, np.float16), "reset_arrays, the small array")


ROWS["reset_arrays"] = Row(_reset_arrays_row, "int8")
