"""Large-tensor rows: extracttrian and maketrian (mxlite/ops/la_factor.py).

Both are float32/float64 only, so they stop at 2**31 (2**32 float32 elements are 16 GiB, the
whole peak). extracttrian reads a ``t.big`` stack of 32x32 matrices past 2**31 elements (its
lower triangles, 528 of 1024 elements, come out); maketrian writes a stack past 2**31 from
the triangles of a marked input of 528/1024 its size. gelqf factors a stack of diagonal
(2, 16) matrices past 2**30 elements (Q has A's size), syevd a stack of diagonal 4x4
matrices (U has A's size). Every check is exact: the markers
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


def _gelqf_row(t):
    """A stack of (2, 16) matrices [D | 0] past 2**30 elements, D diagonal (ones, and marker
    values in the matrices at the head, around 2**29/2**30 and at the tail): no reflection
    moves anything, so L = D and Q = [I | 0] exactly."""
    import mxlite as mx
    import numpy as np
    count = t.power("2**30") // 32 + 1
    a = mx.nd.zeros((count, 2, 16), dtype="float32")
    a[:, 0, 0] = 1
    a[:, 1, 1] = 1
    special = sorted({0, count // 4, count // 2, count - 1})
    for k, b in enumerate(special):
        a[b, 0, 0] = 3 + k
        a[b, 1, 1] = -(5 + k)
    t.seen(a)
    q, l = mx.nd.linalg.gelqf(a)
    t.shape(q, (count, 2, 16), "Q")
    t.shape(l, (count, 2, 2), "L")
    eye = np.eye(2, 16, dtype=np.float32).ravel()
    _check(t, q, lambda p: eye[p % 32], [], "Q = [I | 0]")
    diag = {b: (3 + k, -(5 + k)) for k, b in enumerate(special)}
    want_l = lambda p: (diag.get(p // 4, (1, 1))[(p % 4) // 3]    # noqa: E731
                        if p % 4 in (0, 3) else 0)
    _check(t, l, want_l, [b * 4 + j for b in special for j in range(4)], "L = D")


def _syevd_row(t):
    """A stack of diagonal 4x4 matrices past 2**30 elements, diag(1, 2, 3, 4) but for
    diag(4, -5, 1, 2) (plus k) in the matrices at the head, around 2**29/2**30 and at the
    tail: Jacobi has nothing to rotate, so lambda is the sorted diagonal and U the
    permutation that sorts it, exactly."""
    import mxlite as mx
    import numpy as np
    count = t.power("2**30") // 16 + 1
    a = mx.nd.zeros((count, 4, 4), dtype="float32")
    for i in range(4):
        a[:, i, i] = i + 1
    special = sorted({0, count // 4, count // 2, count - 1})
    for k, b in enumerate(special):
        for i, v in enumerate((4, -5, 1, 2)):
            a[b, i, i] = v + (k if i == 0 else 0)
    t.seen(a)
    u, lam = mx.nd.linalg.syevd(a)
    t.shape(u, (count, 4, 4), "U")
    t.shape(lam, (count, 4), "L")
    plain_u = np.eye(4, dtype=np.float32).ravel()
    odd_u = np.eye(4, dtype=np.float32)[[1, 2, 3, 0]].ravel()     # rows sort (-5, 1, 2, 4+k)
    at = {b: k for k, b in enumerate(special)}
    _check(t, u, lambda p: (odd_u if p // 16 in at else plain_u)[p % 16],
           [b * 16 + j for b in special for j in range(16)], "U")
    _check(t, lam, lambda p: ([-5, 1, 2, 4 + at[p // 4]] if p // 4 in at else [1, 2, 3, 4])[p % 4],
           [b * 4 + j for b in special for j in range(4)], "L")


ROWS = {
    "_linalg_extracttrian": Row(_extracttrian_row, "float32", "2**31", REASON),
    "_linalg_maketrian": Row(_maketrian_row, "float32", "2**31", REASON),
    "_linalg_syevd": Row(_syevd_row, "float32", "2**30",
                         "float32/float64 only, and U has A's size: A and U past 2**31 float32 "
                         "elements are 16 GiB, the whole peak"),
    "_linalg_gelqf": Row(_gelqf_row, "float32", "2**30",
                         "float32/float64 only, and Q has A's size: A and Q past 2**31 float32 "
                         "elements are 16 GiB, the whole peak"),
}
