"""Large-tensor rows: shape ops, creation ops, getitem/setitem and their scatters, the copy
between devices.

Every op here moves or fills int8 data, so every row runs past 2**32 elements (a 4 GiB
array; with its input or output, a peak of ~8 GiB). An input is zeros with marker values at known flat
positions (``t.big``, or ``_marked`` for an input smaller than 2**31); the oracle is a
closed form ``src_of(p)``: the input position output element ``p`` comes from. A row reads
the output at the head, around 2**31 and 2**32, at the tail and wherever the markers land
(``dst_of``), so a 32-bit offset that wraps reads or writes a marker at the wrong place.
Periodic outputs (tile, arange) use periods that do not divide 2**32, so a wrapped index
reads a different value there too. Creation ops write over a marked (dirty) array with
``out=``, so a fill that stops short leaves a marker.

Shapes keep the copy kernel's rows long (a row of a few bytes costs more than its bytes):
N = 16 * K with K = 2**28 + 1 (prime at the small scale), so the interleaves (concat, stack,
swapaxes, split) move rows of K elements and the transpose is (N/2, 2) -> (2, N/2).

int8 holds 256 values and 2**32 distinct values need a 4-byte dtype (16 GiB of output), so
the arange row makes 65 int8 values, each repeated (``repeat``) past 2**32 elements in all.
"""
import math
from dataclasses import dataclass

import numpy as np

import mxlite as mx

from . import Row

I8 = "int8"


# ---- sizes, inputs and the closed-form oracle -----------------------------------------------
@dataclass
class _Sizes:
    n: int      # N = 2**32 + 16 elements
    p31: int    # 2**31
    p32: int    # 2**32
    k: int      # N // 16 = 2**28 + 1
    m: int      # N // 2  = 2**31 + 8


def _sizes(t):
    return _Sizes(t.N, t.P31, t.P32, t.N // 16, t.N // 2)


def _big_marks(t, n):
    """{flat position: value} of the markers ``t.big(I8, n)`` writes."""
    values = (3, 5, 7, 9)
    return {p: values[i % len(values)] for i, p in enumerate(t.marks(n))}


def _marked(t, n, marks, shape=None):
    """Zeros of ``n`` int8 elements with ``marks`` {position: value}: an input smaller than
    2**31, where ``t.big`` would mark past its end."""
    x = mx.nd.zeros((n,), dtype=I8)
    for p, v in marks.items():
        x[p] = v
    t.seen(x)
    return x if shape is None else x.reshape(shape)


def _lookup(marks, src):
    """The int8 values at flat positions ``src`` of an array that is zero except ``marks``
    (a position of -1, outside the input, is zero)."""
    src = np.asarray(src, np.int64)
    out = np.zeros(src.shape, np.int8)
    for p, v in marks.items():
        out[src == p] = v
    return out


def _check(t, y, shape, want, extra=(), what="result"):
    """``y`` has ``shape`` and holds ``want(p)`` (int8) at flat positions ``p``: the head,
    around 2**31 and 2**32, the tail and ``extra``."""
    t.shape(y, shape, what)
    n = math.prod(shape)
    pos = sorted(set(t.positions(n)) | {int(p) for p in np.ravel(extra) if 0 <= p < n})
    t.equal(t.values(y, pos), want(np.array(pos, np.int64)), what)


def _check_moved(t, y, shape, src_of, marks, dst, what="result"):
    """``y`` (of ``shape``) holds input element ``src_of(p)`` at ``p``; the input is zero
    but for ``marks``, which land at ``dst``."""
    _check(t, y, shape, lambda p: _lookup(marks, src_of(p)), dst, what)


def _identity(s, p):
    return p


# ---- row builders ------------------------------------------------------------------------------
def _moved(in_shape, call, out_shape, src_of=_identity, dst_of=_identity):
    """A row for a data-movement op: ``y = call(s, x)`` on the marked int8 ``x`` of
    ``in_shape(s)`` (past 2**32 elements); output element ``p`` is input element
    ``src_of(s, p)``, and the input's element ``m`` lands at ``dst_of(s, m)`` (one or more
    positions per marker). The default maps keep the flat order (reshape and its kin)."""
    def run(t):
        s = _sizes(t)
        shape = in_shape(s)
        n = math.prod(shape)
        marks = _big_marks(t, n)
        y = call(s, t.big(I8, n, shape=shape))
        _check_moved(t, y, out_shape(s), lambda p: src_of(s, p), marks,
                     dst_of(s, np.array(sorted(marks), np.int64)))
    return Row(run, I8)


def _filled(t, call, value):
    """``call(s, x)`` writes ``value`` over the marked int8 ``x`` of N elements (through
    ``out=``); a fill that stops short leaves a marker. Returns the sizes and ``x``."""
    s = _sizes(t)
    marks = _big_marks(t, s.n)
    x = t.big(I8, s.n)
    y = call(s, x)
    t.check(y is x, "out= returned another array")
    _check(t, x, (s.n,), lambda p: np.full(p.shape, value, np.int8), list(marks),
           "filled array")
    return s, x


def _fill(call, value):
    """A row for a creation op: see ``_filled``."""
    return Row(lambda t: _filled(t, call, value), I8)


def _zeros(t):
    """zeros over a marked array, then single elements written at -1, 2**31 + 5 and
    2**32 + 3 and read back (as x[-1] and x[N - 1] too); the sum of all N elements is
    theirs alone: nothing else was written."""
    s, x = _filled(t, lambda s, x: mx.nd.zeros((s.n,), dtype=I8, out=x), 0)
    writes = {s.n - 1: 3, s.p31 + 5: 9, s.p32 + 3: 7}
    x[-1] = 3
    x[s.p31 + 5] = 9
    x[s.p32 + 3] = 7
    for i, v in [(-1, 3)] + list(writes.items()):
        t.check(int(x[i].asscalar()) == v, f"x[{i}] = {x[i].asscalar()}, want {v}")
    _check(t, x, (s.n,), lambda p: _lookup(writes, p), list(writes), "after the writes")
    total = mx.nd.sum(x)
    t.check(int(total.asscalar()) == 19, f"sum of all elements {total.asscalar()}, want 19")


def _halves(s, x):
    """The two halves of ``x`` (N elements), each an (8, K) view."""
    rows = x.reshape((2, 8, s.k))
    return rows[0], rows[1]


# ---- maps of the permuting ops -------------------------------------------------------------
def _transpose_src(s, p):                  # (M, 2) -> (2, M)
    return (p % s.m) * 2 + p // s.m


def _transpose_dst(s, m):
    return (m % 2) * s.m + m // 2


def _interleave_src(s, p):                 # two (8, K) halves -> (8, 2, K)
    return ((p // s.k) % 2) * (8 * s.k) + (p // (2 * s.k)) * s.k + p % s.k


def _interleave_dst(s, m):
    return ((m % (8 * s.k)) // s.k) * 2 * s.k + (m // (8 * s.k)) * s.k + m % s.k


def _flip_src(s, p):                       # (16, K) reversed on both axes: all of it
    return s.n - 1 - p


def _slice_src(s, p):                      # (K, 16)[K-1 : P31/16 - 2 : -1, 15::-2]
    return (s.k - 1 - p // 8) * 16 + 15 - 2 * (p % 8)


def _slice_dst(s, m):
    r, c = m // 16, m % 16
    return np.where((c % 2 == 1) & (r > s.p31 // 16 - 2), (s.k - 1 - r) * 8 + (15 - c) // 2, -1)


def _slice_axis_src(s, p):                 # (K, 16)[:, 3:10]
    return (p // 7) * 16 + 3 + p % 7


def _slice_axis_dst(s, m):
    c = m % 16
    return np.where((3 <= c) & (c < 10), (m // 16) * 7 + c - 3, -1)


def _getitem_src(s, p):                    # (K, 16)[P31/16:, 3::4]
    return (s.p31 // 16 + p // 4) * 16 + 3 + 4 * (p % 4)


def _getitem_dst(s, m):
    r, c = m // 16, m % 16
    return np.where((r >= s.p31 // 16) & (c % 4 == 3), (r - s.p31 // 16) * 4 + c // 4, -1)


def _row_bcast_src(s, p):                  # (1, M) -> (2, M)
    return p % s.m


def _row_bcast_dst(s, m):
    return np.concatenate([m, m + s.m])


def _axis_bcast_src(s, p):                 # (2, 1, M/2) -> (2, 2, M/2)
    return (p // s.m) * (s.m // 2) + p % (s.m // 2)


def _axis_bcast_dst(s, m):
    h = s.m // 2
    return np.concatenate([(m // h) * s.m + m % h, (m // h) * s.m + h + m % h])


def _repeat_src(s, p):                     # (8, K) repeated twice along axis 0
    return (p // s.k // 2) * s.k + p % s.k


def _repeat_dst(s, m):
    r, c = m // s.k, m % s.k
    return np.concatenate([2 * r * s.k + c, (2 * r + 1) * s.k + c])


# ---- rows with their own shapes ------------------------------------------------------------
def _split(t):
    """(8, 2K) split into two (8, K) along axis 1: part j holds columns jK..jK+K-1 (the
    inverse of the concat row)."""
    s = _sizes(t)
    marks = _big_marks(t, s.n)
    parts = mx.nd.split(t.big(I8, shape=(8, 2 * s.k)), num_outputs=2, axis=1)
    m = np.array(sorted(marks), np.int64)
    for j, part in enumerate(parts):
        dst = np.where((m // s.k) % 2 == j, (m // (2 * s.k)) * s.k + m % s.k, -1)
        _check_moved(t, part, (8, s.k), lambda p, j=j: (p // s.k) * 2 * s.k + j * s.k + p % s.k,
                     marks, dst, f"part {j}")


def _tile(t):
    """A (3, 17) array of distinct values tiled (P32 // 102 + 1, 2) times: the periods 3 and
    17 do not divide 2**32, so a wrapped offset reads another value."""
    s = _sizes(t)
    x = mx.nd.array(np.arange(51).reshape(3, 17) - 25, dtype=I8)
    reps = s.p32 // 102 + 1
    y = mx.nd.tile(x, reps=(reps, 2))
    _check(t, y, (3 * reps, 34),
           lambda p: ((p // 34) % 3 * 17 + (p % 34) % 17 - 25).astype(np.int8))


def _arange(t):
    """65 values -32..32, each repeated P32/64 times: N/64 more elements than 2**32; the
    value changes at 2**31 and 2**32 and ends at the tail."""
    r = t.P32 // 64
    y = mx.nd.arange(-32, 33, repeat=r, dtype=I8)
    _check(t, y, (65 * r,), lambda p: (p // r - 32).astype(np.int8))


def _getitem(t):
    """A strided basic index from 2**31 on (rows, every 4th column), an index array holding
    positions past 2**32 (one of them twice), and the view x[P32:] written through."""
    s = _sizes(t)
    marks = _big_marks(t, s.n)
    x = t.big(I8, shape=(s.k, 16))
    m = np.array(sorted(marks), np.int64)
    _check_moved(t, x[s.p31 // 16:, 3::4], (s.k - s.p31 // 16, 4),
                 lambda p: _getitem_src(s, p), marks, _getitem_dst(s, m), "x[P31/16:, 3::4]")
    flat = x.reshape((-1,))
    idx = np.array([s.n - 1, s.p32 + 3, 3, s.p31 + 5, s.p32 + 3, s.p32 + 2], np.int64)
    t.equal(flat[idx], _lookup(marks, idx), "x[index array past 2**32]")
    tail = flat[s.p32:]                     # a first-axis slice: a view that writes through
    t.shape(tail, (16,), "x[P32:]")
    tail[:] = mx.nd.array(np.arange(1, 17), dtype=I8)
    written = {**marks, **{s.p32 + i: i + 1 for i in range(16)}}
    _check(t, flat, (s.n,), lambda p: _lookup(written, p), list(written),
           "x after writing through the view x[P32:]")


def _setitem(t):
    """(K, 16) with a (2, 4) value written at rows P32/16 - 1 and P32/16, columns 1::4:
    either side of 2**32."""
    s = _sizes(t)
    marks = _big_marks(t, s.n)
    x = t.big(I8, shape=(s.k, 16))
    value = mx.nd.array(np.arange(1, 9).reshape(2, 4), dtype=I8)
    r0 = s.p32 // 16 - 1
    y = mx.nd._internal._setitem(x, value, key=(slice(r0, None), slice(1, None, 4)))
    written = {r * 16 + c: 1 + 4 * (r - r0) + (c - 1) // 4
               for r in (r0, r0 + 1) for c in (1, 5, 9, 13)}
    _check(t, y, (s.k, 16), lambda p: _lookup({**marks, **written}, p),
           list(marks) + list(written))


def _getitem_scatter(t):
    """Zeros of N with values added at an index array past 2**32 (one index twice), and
    zeros of (K, 16) with a (2, 4) value written at a strided region across 2**32."""
    s = _sizes(t)
    idx = np.array([3, s.p31 + 5, s.p32 + 3, s.n - 1, s.p32 + 3], np.int64)
    y = mx.nd._internal._getitem_scatter(mx.nd.array([1, 2, 3, 4, 5], dtype=I8), key=(idx,),
                                         shape=(s.n,))
    added = {3: 1, s.p31 + 5: 2, s.p32 + 3: 3 + 5, s.n - 1: 4}
    _check(t, y, (s.n,), lambda p: _lookup(added, p), list(added), "index array")
    del y
    r0 = s.p32 // 16 - 1
    y = mx.nd._internal._getitem_scatter(
        mx.nd.array(np.arange(1, 9).reshape(2, 4), dtype=I8),
        key=(slice(r0, None), slice(None, None, 5)), shape=(s.k, 16))
    written = {r * 16 + c: 1 + 4 * (r - r0) + c // 5 for r in (r0, r0 + 1) for c in (0, 5, 10, 15)}
    _check(t, y, (s.k, 16), lambda p: _lookup(written, p), list(written), "strided region")


def _slice_scatter(t):
    """Zeros of N with three values at P31 + 5 + k * (P31/2 + 1): the last past 2**32."""
    s = _sizes(t)
    step = s.p31 // 2 + 1
    y = mx.nd._internal._slice_scatter(mx.nd.array([1, 2, 3], dtype=I8), shape=(s.n,),
                                       begin=(s.p31 + 5,), end=(None,), step=(step,))
    written = {s.p31 + 5 + k * step: k + 1 for k in range(3)}
    _check(t, y, (s.n,), lambda p: _lookup(written, p), list(written))


def _diag_side(t):
    """The side of a square matrix with more than 2**32 elements (65537 at full scale)."""
    return math.isqrt(t.P32) + 1


def _diag_marks(d):
    """Markers of a diagonal of ``d`` elements: head, middle (near 2**31 in the matrix) and
    the last two (past 2**32)."""
    return {3: 3, d // 2: 5, d - 2: 7, d - 1: 9}


def _diag(t):
    """Diagonal -1 of a (D, D) matrix with markers on and off it, then the (D, D) matrix
    made from a marked vector of D elements."""
    d = _diag_side(t)
    marks = _big_marks(t, d * d)
    on = {(i + 1) * d + i: v for i, v in _diag_marks(d - 1).items()}   # x[i + 1, i]
    x = t.big(I8, d * d, shape=(d, d))
    for p, v in on.items():
        x.reshape((-1,))[p] = v
    y = mx.nd.diag(x, k=-1)
    want = _lookup({**marks, **on}, np.arange(d - 1) * (d + 1) + d)
    t.equal(y, want, "diagonal -1 of the matrix")
    del x, y
    _diag_matrix(t, d, lambda v: mx.nd.diag(v, k=0), 0, "diag of a vector")


def _diag_matrix(t, d, call, k, what):
    """``call(v)`` is the (D, D) matrix with the marked vector ``v`` on diagonal ``k`` >= 0:
    element i at (i, i + k)."""
    marks = _diag_marks(d - k)
    y = call(_marked(t, d - k, marks))

    def want(p):
        on = (p % (d + 1) == k) & (p // (d + 1) < d - k)
        return np.where(on, _lookup(marks, p // (d + 1)), 0).astype(np.int8)
    _check(t, y, (d, d), want, [i * (d + 1) + k for i in marks], what)


def _diag_scatter(t):
    """A marked vector of D - 1 elements written on diagonal 1 of (D, D) zeros."""
    d = _diag_side(t)
    _diag_matrix(t, d, lambda v: mx.nd._internal._diag_scatter(v, shape=(d, d), k=1), 1,
                 "diagonal 1 of zeros")


def _copyto(t):
    """N elements copied to another device (the CPU when the trial runs on a GPU, cpu(1)
    otherwise): every element crosses."""
    s = _sizes(t)
    other = mx.cpu(1) if t.ctx.device_type == "cpu" else mx.cpu(0)
    marks = _big_marks(t, s.n)
    y = mx.nd._internal._copyto(t.big(I8, s.n), ctx=other)
    t.check(y.context == other, f"copy on {y.context}, want {other}")
    _check_moved(t, y, (s.n,), lambda p: p, marks, list(marks))


def _ones_like(t):
    """ones_like of a marked N-element array (a fresh output: a fill that stops short
    leaves zeros)."""
    s = _sizes(t)
    y = mx.nd.ones_like(t.big(I8, s.n))
    _check(t, y, (s.n,), lambda p: np.ones(p.shape, np.int8))


def _zeros_like(t):
    """zeros_like of a marked N-element array, written over a dirty array (all 6)."""
    s = _sizes(t)
    x = t.big(I8, s.n)
    y = mx.nd.zeros_like(x, out=mx.nd.full((s.n,), 6, dtype=I8))
    _check(t, y, (s.n,), lambda p: np.zeros(p.shape, np.int8))


ROWS = {
    # same flat order, new shape (copies): every marker stays at its flat position
    "reshape": _moved(lambda s: (s.n,), lambda s, x: mx.nd.reshape(x, shape=(2, -1)),
                      lambda s: (2, s.m)),
    "flatten": _moved(lambda s: (2, 2, s.n // 4), lambda s, x: mx.nd.flatten(x),
                      lambda s: (2, s.m)),
    "expand_dims": _moved(lambda s: (2, s.m), lambda s, x: mx.nd.expand_dims(x, axis=1),
                          lambda s: (2, 1, s.m)),
    "squeeze": _moved(lambda s: (2, 1, s.m), lambda s, x: mx.nd.squeeze(x, axis=1),
                      lambda s: (2, s.m)),
    "_npx_reshape": _moved(lambda s: (2, s.m), lambda s, x: mx.nd._internal._npx_reshape(
        x, newshape=(-2, -6, -1, 4)), lambda s: (2, s.m // 4, 4)),
    "reshape_like": _moved(
        lambda s: (s.k, 16),
        lambda s, x: mx.nd.reshape_like(x, mx.nd.zeros((4, 4), dtype=I8), lhs_begin=1,
                                        lhs_end=2, rhs_begin=0, rhs_end=2),
        lambda s: (s.k, 4, 4)),
    # permutations
    "transpose": _moved(lambda s: (s.m, 2), lambda s, x: mx.nd.transpose(x),
                        lambda s: (2, s.m), _transpose_src, _transpose_dst),
    "swapaxes": _moved(lambda s: (2, 8, s.k), lambda s, x: mx.nd.swapaxes(x, dim1=0, dim2=1),
                       lambda s: (8, 2, s.k), _interleave_src, _interleave_dst),
    "flip": _moved(lambda s: (16, s.k), lambda s, x: mx.nd.flip(x, axis=(0, 1)),
                   lambda s: (16, s.k), _flip_src, _flip_src),
    # joins of the two halves of x, interleaved row by row
    "concat": _moved(lambda s: (s.n,), lambda s, x: mx.nd.concat(*_halves(s, x), dim=1),
                     lambda s: (8, 2 * s.k), _interleave_src, _interleave_dst),
    "stack": _moved(lambda s: (s.n,), lambda s, x: mx.nd.stack(*_halves(s, x), axis=1),
                    lambda s: (8, 2, s.k), _interleave_src, _interleave_dst),
    "split": Row(_split, I8),
    # slicing from the far end
    "slice": _moved(lambda s: (s.k, 16),
                    lambda s, x: mx.nd.slice(x, begin=(None, None), end=(s.p31 // 16 - 2, None),
                                             step=(-1, -2)),
                    lambda s: (s.k - s.p31 // 16 + 1, 8), _slice_src, _slice_dst),
    "slice_axis": _moved(lambda s: (s.k, 16),
                         lambda s, x: mx.nd.slice_axis(x, axis=1, begin=3, end=10),
                         lambda s: (s.k, 7), _slice_axis_src, _slice_axis_dst),
    "_getitem": Row(_getitem, I8),
    "_setitem": Row(_setitem, I8),
    "_getitem_scatter": Row(_getitem_scatter, I8),
    "_slice_scatter": Row(_slice_scatter, I8),
    # copies of a small or half-size input past 2**32
    "tile": Row(_tile, I8),
    "repeat": _moved(lambda s: (8, s.k), lambda s, x: mx.nd.repeat(x, repeats=2, axis=0),
                     lambda s: (16, s.k), _repeat_src, _repeat_dst),
    "broadcast_to": _moved(lambda s: (1, s.m), lambda s, x: mx.nd.broadcast_to(x, shape=(2, 0)),
                           lambda s: (2, s.m), _row_bcast_src, _row_bcast_dst),
    "broadcast_like": _moved(
        lambda s: (1, s.m),
        lambda s, x: mx.nd.broadcast_like(x, mx.nd.zeros((2,), dtype=I8), lhs_axes=(0,),
                                          rhs_axes=(0,)),
        lambda s: (2, s.m), _row_bcast_src, _row_bcast_dst),
    "broadcast_axis": _moved(lambda s: (2, 1, s.m // 2),
                             lambda s, x: mx.nd.broadcast_axis(x, axis=1, size=2),
                             lambda s: (2, 2, s.m // 2), _axis_bcast_src, _axis_bcast_dst),
    "diag": Row(_diag, I8),
    "_diag_scatter": Row(_diag_scatter, I8),
    "_copyto": Row(_copyto, I8),
    # creation
    "zeros": Row(_zeros, I8),
    "ones": _fill(lambda s, x: mx.nd.ones((s.n,), dtype=I8, out=x), 1),
    "full": _fill(lambda s, x: mx.nd.full((s.n,), -7, dtype=I8, out=x), -7),
    "zeros_like": Row(_zeros_like, I8),
    "ones_like": Row(_ones_like, I8),
    "arange": Row(_arange, I8),
}
