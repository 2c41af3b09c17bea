"""Large-tensor rows: index ops (take, pick, one_hot, Embedding), the sequence ops, and the
scatter adjoints behind their gradients. Every row goes past 2**32.

Arrays an op reads are zero arrays with markers (``t.big``, plus ``extra`` markers where a
row needs one at a given place), so every element is known in closed form; an input read
for its shape only (a scatter's ``data``, a gradient's variable) is left uninitialised and
costs no host memory. Index ops use int64 indices above 2**32 (float32 cannot hold them):
gathers must return the markers, scatters must write exactly where the indices say. Checks
read the head, around 2**31 and 2**32, the tail, every position the op was told to touch,
and that position shifted by 2**32 (where a wrapped 32-bit index would land).

take, Embedding and SequenceLast also check a gradient recorded with ``mx.autograd`` at the
far end, in float16 past 2**32 (a float dtype; these gradients only move or add a few
values, so no half conversion runs over the big array). ``autograd.grad`` returns it
without writing the variable's gradient buffer.

The sequence rows move rows of 16 or 256 elements: their kernels copy one row at a time.
"""
import numpy as np

import mxlite as mx

from . import Row
from .sparse import also, embedding_part

VALUES = (3, 5, 7, 9)        # t.big's marker values, cycled over t.marks(n)


# ---- building --------------------------------------------------------------------------------
def _marked(t, dtype, n, extra=None):
    """(x, marks): ``t.big(dtype, n)`` with ``extra`` ({flat position: value}) written too,
    and {flat position: value} of every non-zero element of x."""
    x = t.big(dtype, n)
    marks = {p: VALUES[i % len(VALUES)] for i, p in enumerate(t.marks(n))}
    for p, v in (extra or {}).items():
        x[p] = v
        marks[p] = v
    return x, marks


def _shape_only(t, shape, dtype):
    """An uninitialised array for an input the op reads for its shape only, or whose values
    do not matter (a gradient's variable): its pages are never touched on the host."""
    x = mx.nd.empty(shape, dtype=dtype)
    t.seen(x)
    return x


def _i64(values):
    """int64 indices (exact above 2**32) on the trial's device."""
    return mx.nd.array(np.array(values, dtype=np.int64), dtype="int64")


def _grad(x, forward, head):
    """d(sum(forward(x) * head))/dx, recorded with autograd and returned by ``autograd.grad``
    (x's gradient buffer is never written)."""
    x.attach_grad()
    with mx.autograd.record():
        y = forward(x)
    return mx.autograd.grad(y, [x], head_grads=head)[0]


# ---- checking --------------------------------------------------------------------------------
def _check(t, arr, expect, touched, what):
    """``arr``'s elements at the head, around 2**31 and 2**32, the tail, at the flat positions
    ``touched`` and at those shifted by +-P32 equal ``expect(flat position)``."""
    n = int(arr.size)
    pos = set(t.positions(n))
    for p in touched:
        pos |= {q for q in (p, p - t.P32, p + t.P32) if 0 <= q < n}
    pos = sorted(pos)
    want = np.array([expect(p) for p in pos], dtype=arr.dtype)
    t.equal(t.values(arr, pos), want, what)


def _check_sparse(t, arr, written, what, fill=0):
    """``arr`` holds ``written`` ({flat position: value}) and ``fill`` everywhere else."""
    _check(t, arr, lambda p: written.get(p, fill), written, what)


def _check_gather(t, got, want, what):
    """A small result equals ``want`` (a nested list of values) exactly."""
    t.equal(got, np.array(want, dtype=got.dtype), what)


def _scatter_sums(targets, values):
    """{target: sum of its values}: what a scatter-add leaves (duplicates accumulate)."""
    sums = {}
    for p, v in zip(targets, values):
        sums[p] = sums.get(p, 0) + v
    return sums


# ---- take and its adjoint --------------------------------------------------------------------
def _take_row(t):
    x, marks = _marked(t, "int8", t.N)
    N, P31, P32 = t.N, t.P31, t.P32
    at = lambda p: marks.get(p, 0)               # noqa: E731 - the closed form of x
    idx = [N - 1, P32 + 3, P32 + 2, P31 + 5, 3, 0, N + 7, -1]
    clipped = [min(max(i, 0), N - 1) for i in idx]
    _check_gather(t, mx.nd.take(x, _i64(idx)), [at(p) for p in clipped], "take, clip")
    idx = [-1, P32 + 3 + N, 3 - N, P31 + 5 + 2 * N]
    _check_gather(t, mx.nd.take(x, _i64(idx), mode="wrap"), [at(i % N) for i in idx],
                  "take, wrap")
    h = N // 2                                   # (2, h): row 1 holds 2**32 + 3 and the tail
    cols = [h - 1, P32 + 3 - h, P31 + 5, 3, h - 2]
    got = mx.nd.take(x.reshape((2, h)), _i64(cols), axis=1)
    _check_gather(t, got, [[at(o * h + c) for c in cols] for o in range(2)], "take, axis=1")
    del x, got
    # the gradient: float16 data of N elements, indices above 2**32 with a duplicate
    data = _shape_only(t, (N,), "float16")
    idx = [N - 1, P32 + 3, P31 + 5, P32 + 3, 3]
    head = [1, 2, 4, 8, 16]
    g = _grad(data, lambda a: mx.nd.take(a, _i64(idx)), mx.nd.array(head, dtype="float16"))
    t.shape(g, (N,), "take's gradient")
    _check_sparse(t, g, _scatter_sums(idx, head), "take's gradient")


def _take_grad_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    # 1-d data: single elements scattered past 2**32, a duplicate accumulates
    idx = [N - 1, P32 + 3, P31 + 5, P32 + 3, 3, N + 5]          # clip: N + 5 -> N - 1
    g = mx.nd.array([1, 2, 4, 8, 16, 32], dtype="int8")
    data = _shape_only(t, (N,), "int8")
    out = mx.nd._internal._take_grad(g, _i64(idx), data)
    t.shape(out, (N,), "_take_grad, 1-d")
    _check_sparse(t, out, _scatter_sums([min(i, N - 1) for i in idx], [1, 2, 4, 8, 16, 32]),
                  "_take_grad, 1-d")
    del out
    # rows of R elements: whole rows scattered, the last one past 2**32
    R = 16
    rows = [N // R - 1, P32 // R, P31 // R, P32 // R, 0]
    g = mx.nd.arange(len(rows) * R, dtype="int64").reshape((len(rows), R)) % 7 + 1
    gv = g.asnumpy()
    out = mx.nd._internal._take_grad(g.astype("int8"), _i64(rows), data.reshape((N // R, R)))
    t.shape(out, (N // R, R), "_take_grad, rows")
    written = _scatter_sums([r * R + i for r in rows for i in range(R)], gv.ravel().tolist())
    _check_sparse(t, out, written, "_take_grad, rows")


# ---- pick and its adjoint --------------------------------------------------------------------
def _pick_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    x, marks = _marked(t, "int8", N)
    at = lambda p: marks.get(p, 0)               # noqa: E731
    col = x.reshape((N, 1))                      # pick along an axis of N > 2**32
    _check_gather(t, mx.nd.pick(col, _i64([P32 + 3]), axis=0), [at(P32 + 3)], "pick, axis=0")
    _check_gather(t, mx.nd.pick(col, _i64([N + 5]), axis=0, keepdims=True), [[at(N - 1)]],
                  "pick, clip, keepdims")
    _check_gather(t, mx.nd.pick(col, _i64([P32 + 3 - N]), axis=0, mode="wrap"), [at(P32 + 3)],
                  "pick, wrap")
    _check_gather(t, mx.nd.pick(col, _i64([P31 + 5 + 2 * N]), axis=None, mode="wrap"),
                  [at(P31 + 5)], "pick, flattened, wrap")
    h = N // 2                                   # (2, h): row o picks o * h + index[o]
    got = mx.nd.pick(x.reshape((2, h)), _i64([P31 + 5, P32 + 3 - h]), axis=1)
    _check_gather(t, got, [at(P31 + 5), at(P32 + 3)], "pick, axis=1")


def _pick_grad_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    R = 16                                       # data (N / R, R), picked along axis 0
    V = N // R
    rows = [V - 1, P32 // R, P31 // R, 0, P32 // R - 1, 3, V + 5] + [P32 // R] * (R - 7)
    g = mx.nd.arange(1, R + 1, dtype="int8")
    out = mx.nd._internal._pick_grad(g, _i64(rows), _shape_only(t, (V, R), "int8"), axis=0)
    t.shape(out, (V, R), "_pick_grad")
    clipped = [min(r, V - 1) for r in rows]      # V + 5 clips to the last row
    _check_sparse(t, out, {r * R + i: i + 1 for i, r in enumerate(clipped)}, "_pick_grad")


# ---- one_hot ---------------------------------------------------------------------------------
def _one_hot_row(t):
    out = mx.nd.one_hot(_i64([t.P32 + 3]), t.N, on_value=7, off_value=-1, dtype="int8")
    t.shape(out, (1, t.N), "one_hot")
    _check_sparse(t, out, {t.P32 + 3: 7}, "one_hot", fill=-1)


# ---- Embedding -------------------------------------------------------------------------------
def _embedding_row(t, op=mx.nd.Embedding, name="Embedding"):
    N, P31, P32 = t.N, t.P31, t.P32
    D = 16                                       # weight (V, D): 2**32 + 16 elements
    V = N // D
    rows = [[V - 1, P32 // D], [P31 // D, 0]]
    value = lambda r, i: (7 * r + i) % 2048     # noqa: E731 - exact in float16
    w = _shape_only(t, (V, D), "float16")       # only the rows looked up are written
    for r in sorted({r for pair in rows for r in pair}):
        w[r] = mx.nd.array([value(r, i) for i in range(D)], dtype="float16")
    emb = lambda a: op(_i64(rows), a, input_dim=V, output_dim=D,  # noqa: E731
                       dtype="float16")
    got = emb(w)
    _check_gather(t, got, [[[value(r, i) for i in range(D)] for r in pair] for pair in rows],
                  name)
    del got
    # the weight gradient: rows of the head gradient added into rows past 2**32
    rows = [[V - 1, P32 // D], [P31 // D, P32 // D]]
    head = np.arange(1, 4 * D + 1, dtype=np.float16).reshape((2, 2, D))
    g = _grad(w, emb, mx.nd.array(head, dtype="float16"))
    t.shape(g, (V, D), f"{name}'s weight gradient")
    if g.stype != "default":
        g = g.tostype("default")
    targets = [r * D + i for pair in rows for r in pair for i in range(D)]
    _check_sparse(t, g, _scatter_sums(targets, head.ravel().tolist()),
                  f"{name}'s weight gradient")


# ---- sequence ops ----------------------------------------------------------------------------
def _sequence_last_row(t):
    N, P31, P32 = t.N, t.P31, t.P32
    x, marks = _marked(t, "int8", N, extra={N - 2: 11})
    at = lambda p: marks.get(p, 0)               # noqa: E731
    got = mx.nd.SequenceLast(x.reshape((N, 1)), _i64([P32 + 4]), use_sequence_length=True)
    _check_gather(t, got, [at(P32 + 3)], "SequenceLast, T = N")
    h = N // 2
    _check_gather(t, mx.nd.SequenceLast(x.reshape((h, 2))), [at(N - 2), at(N - 1)],
                  "SequenceLast, last step")
    got = mx.nd.SequenceLast(x.reshape((2, h)), _i64([P31 + 6, h]), use_sequence_length=True,
                             axis=1)
    _check_gather(t, got, [at(P31 + 5), at(N - 1)], "SequenceLast, axis=1")
    del x, got
    # the gradient: float16 (T, B, R) data, the rows read put back past 2**32
    R, B = 16, 2
    n = P32 + R * B
    T = n // (R * B)
    lengths = [T, T // 2]
    head = np.arange(1, B * R + 1, dtype=np.float16).reshape((B, R))
    data = _shape_only(t, (T, B, R), "float16")
    g = _grad(data, lambda a: mx.nd.SequenceLast(a, _i64(lengths), use_sequence_length=True),
              mx.nd.array(head, dtype="float16"))
    t.shape(g, (T, B, R), "SequenceLast's gradient")
    written = {((lengths[b] - 1) * B + b) * R + i: head[b, i] for b in range(B) for i in range(R)}
    _check_sparse(t, g, written, "SequenceLast's gradient")


def _sequence_last_grad_row(t):
    R, B = 16, 2                                 # data (B, T, R), axis=1
    n = t.P32 + R * B
    T = n // (R * B)
    lengths = [T, T - 3]
    g = mx.nd.arange(1, B * R + 1, dtype="float16").reshape((B, R))
    out = mx.nd._internal._sequence_last_grad(g, _shape_only(t, (B, T, R), "float16"),
                                              _i64(lengths), use_sequence_length=True, axis=1)
    t.shape(out, (B, T, R), "_sequence_last_grad")
    written = {(b * T + lengths[b] - 1) * R + i: b * R + i + 1 for b in range(B)
               for i in range(R)}
    _check_sparse(t, out, written, "_sequence_last_grad")


def _sequence_mask_row(t):
    R, B = 16, 2
    n = t.P32 + R * B
    T = n // (R * B)
    x, marks = _marked(t, "int8", n, extra={n - R * B: 11})
    for shape, axis in (((T, B, R), 0), ((B, T, R), 1)):
        lengths = [T - 1, T]                     # batch 0 loses its last step
        out = mx.nd.SequenceMask(x.reshape(shape), _i64(lengths), use_sequence_length=True,
                                 value=-1, axis=axis)
        t.shape(out, shape, f"SequenceMask, axis={axis}")
        masked = {(((T - 1) * B) if axis == 0 else (T - 1)) * R + i for i in range(R)}
        _check(t, out, lambda p: -1 if p in masked else marks.get(p, 0), set(marks) | masked,
               f"SequenceMask, axis={axis}")
        del out


def _sequence_reverse_row(t):
    R, B = 256, 2
    n = t.P32 + R * B
    T = n // (R * B)
    x, marks = _marked(t, "int8", n, extra={n - R * B: 11, R * B + 1: 13})
    lengths = [T, T - 2]                         # batch 1 keeps its last 2 steps in place

    def source(p):                               # out's flat p reads x's source(p)
        row, i = divmod(p, R)
        s, b = divmod(row, B)
        if s < lengths[b]:
            s = lengths[b] - 1 - s
        return (s * B + b) * R + i

    out = mx.nd.SequenceReverse(x.reshape((T, B, R)), _i64(lengths), use_sequence_length=True)
    t.shape(out, (T, B, R), "SequenceReverse")
    # the reversal is its own inverse: marker p lands at source(p)
    _check(t, out, lambda p: marks.get(source(p), 0), [source(p) for p in marks],
           "SequenceReverse")


ROWS = {
    "take": Row(_take_row, "int8"),
    "_take_grad": Row(_take_grad_row, "int8"),
    "pick": Row(_pick_row, "int8"),
    "_pick_grad": Row(_pick_grad_row, "int8"),
    "one_hot": Row(_one_hot_row, "int8"),
    "Embedding": also(Row(_embedding_row, "float16"), embedding_part),
    "_contrib_SparseEmbedding": also(Row(lambda t: _embedding_row(
        t, mx.nd.contrib.SparseEmbedding, "SparseEmbedding"), "float16"),
        lambda t: embedding_part(t, mx.nd.contrib.SparseEmbedding)),
    "SequenceLast": Row(_sequence_last_row, "int8"),
    "_sequence_last_grad": Row(_sequence_last_grad_row, "float16"),
    "SequenceMask": Row(_sequence_mask_row, "int8"),
    "SequenceReverse": Row(_sequence_reverse_row, "int8"),
}
