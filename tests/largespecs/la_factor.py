"""Large-tensor rows: extracttrian and maketrian (mxlite/ops/la_factor.py).

Both are float32/float64 only, so they stop at 2**31 (2**32 float32 elements are 16 GiB, the
whole peak). extracttrian reads a ``t.big`` stack of 32x32 matrices past 2**31 elements (its
lower triangles, 528 of 1024 elements, come out); maketrian writes a stack past 2**31 from
the triangles of a marked input of 528/1024 its size. Every check is exact: the markers
are read back where the triangle's row-major order puts them, zeros elsewhere."""
from . import Row
from .index import _check, _marked

N = 32                                           # matrix side
TRI = [(r, c) for r in range(N) for c in range(r + 1)]       # lower triangle, row-major
INDEX = {rc: e for e, rc in enumerate(TRI)}
REASON = ("float32/float64 only: 2**32 float32 elements are 16 GiB, over the 16 GiB peak")


def _matrices(t):
    return t.P31 // (N * N) + 1                  # a stack just past 2**31 elements


def _extracttrian_row(t):
    import mxlite as mx
    count = _matrices(t)
    a, marks = _marked(t, "float32", count * N * N)
    out = mx.nd.linalg.extracttrian(a.reshape((count, N, N)))
    t.shape(out, (count, len(TRI)), "extracttrian")
    touched = [b * len(TRI) + INDEX[(r, c)] for b, r, c in
               ((p // (N * N), (p % (N * N)) // N, p % N) for p in marks) if c <= r]

    def source(q):
        b, e = divmod(q, len(TRI))
        r, c = TRI[e]
        return marks.get(b * N * N + r * N + c, 0)
    _check(t, out, source, touched, "extracttrian")


def _maketrian_row(t):
    import mxlite as mx
    count = _matrices(t)
    a, marks = _marked(t, "float32", count * len(TRI))
    out = mx.nd.linalg.maketrian(a.reshape((count, len(TRI))))
    t.shape(out, (count, N, N), "maketrian")
    def value(q):
        b, rem = divmod(q, N * N)
        e = INDEX.get(divmod(rem, N))
        return 0 if e is None else marks.get(b * len(TRI) + e, 0)
    touched = [(p // len(TRI)) * N * N + TRI[p % len(TRI)][0] * N + TRI[p % len(TRI)][1]
               for p in marks]
    _check(t, out, value, touched, "maketrian")


ROWS = {
    "_linalg_extracttrian": Row(_extracttrian_row, "float32", "2**31", REASON),
    "_linalg_maketrian": Row(_maketrian_row, "float32", "2**31", REASON),
}
