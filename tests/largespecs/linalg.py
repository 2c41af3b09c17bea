"""Large-tensor rows: dot, batch_dot, khatri_rao and the linalg ops (mxlite/ops/linalg.py,
mxlite/ops/la.py).

Every check is exact: the inputs hold small integers (or matrices with integer inverses,
factors and powers-of-two determinants), so the products, solves and factorisations of the
few matrices read back are exact in any summation order.

* Products (``dot``, ``batch_dot``, ``gemm``, ``gemm2``): a big ``t.big`` operand of rows of
  K = 16 times small weights gives one small output row per row of it; the rows holding the
  markers, the head, the tail and those around 2**31 and 2**32 equal NumPy's product of
  those rows read back. ``syrk`` reduces 16 segments of a big ``(16, 1, L)`` array to a
  (16, 1, 1) result, against the closed form of its markers.
* Stacks of square matrices past 2**31 elements (16x16; 32x32 for the LAPACK-backed ops,
  whose cost is per call; 256x256 triangles for ``trmm`` at full scale): zeros (``det``,
  ``slogdet``, ``sumlogdiag``, ``extractdiag``, ``trmm``: singular is fine) or identities
  (``potrf``, ``potri``, ``inverse``, ``trsm``: they must be invertible), with chosen exact
  matrices in the first batch, either side of flat 2**31 and in the last batch; those
  results against closed forms (``slogdet``'s and ``sumlogdiag``'s logarithms against the
  same op on those matrices alone), and a batch just past 2**31 left as filled against its
  default. ``trmm``/``trsm`` take a small (count, n, 1) right-hand side: a big one and the
  output of the same size would pass the peak together.
* ``makediag`` writes a stack past 2**31 from a small input; ``_la_trian_mask`` masks a
  ``t.big`` stack in place (an element-wise op); ``khatri_rao`` writes an output past
  2**31 from two small matrices.

``dot`` and ``batch_dot`` take int8 and pass 2**32. The other ops are float32/float64 only
(khatri_rao computes float16 in a float32 copy), so they stop at 2**31: 2**32 float32
elements are 16 GiB, the whole peak. ``potrf``, ``potri`` and ``inverse`` map a stack to a
stack of its size: they run in place (input and output together would pass the peak).
``det``, ``slogdet``, ``trsm``, ``potrf``, ``potri`` and ``inverse`` run compiled loops on
these small matrices (mxlite/_core/mx_la_small.h; numpy.linalg's per-call cost made them
13-60 s of CPU time at full scale).
"""
import numpy as np

import mxlite as mx

from . import Row
from .sparse import also, dot_part

K = 16                 # row width of the product operands, default matrix size
F32 = "float32"
F32_REASON = ("float32/float64 only: 2**32 float32 elements are 16 GiB, over the 16 GiB "
              "peak")
F32_KR_REASON = ("float inputs only (float16 is computed in a float32 copy): 2**32 float32 "
                 "elements are 16 GiB, over the 16 GiB peak")


# ---- reading ---------------------------------------------------------------------------------
def _marked(t, n):
    """{flat position: value} of the markers ``t.big`` writes into ``n`` elements."""
    values = (3, 5, 7, 9)
    return {p: values[i % len(values)] for i, p in enumerate(t.marks(n))}


def _probe_rows(t, n, width):
    """Rows (of ``width``) of an ``n``-element array holding a position ``t.positions``
    reads or a marker."""
    return sorted({p // width for p in list(t.positions(n)) + t.marks(n)})


def _rows(t, arr, rows):
    """``arr``'s rows ``rows`` (``arr`` seen as rows of its last axis) as NumPy."""
    k = arr.shape[-1]
    return t.values(arr, [r * k + j for r in rows for j in range(k)]).reshape(len(rows), k)


# ---- products: one small output row per row of a big operand ---------------------------------
def _product(call, dtype, size="2**32", batch=0, finish=None, reason=None):
    """A row for ``call(t, a, w)``: ``a`` a ``t.big`` operand of rows of K (``(R, K)``, or
    ``(batch, R, K)``) past ``size``, ``w`` NumPy weights ``(max(batch, 1), K, 1)``; the
    result has one element per row of ``a``, equal to ``finish`` of the row's exact product
    with its batch's weights."""
    finish = finish or (lambda p: p)

    def run(t):
        nb = max(batch, 1)
        rows = (t.P32 if size == "2**32" else t.P31) // (nb * K) + 1
        shape = ((batch,) if batch else ()) + (rows, K)
        a = t.big(dtype, nb * rows * K, shape=shape)
        w = (np.arange(nb * K) % 5 + 1).reshape(nb, K, 1)
        out = call(t, a, w)
        t.shape(out, shape[:-1] + (1,), "result")
        probe = _probe_rows(t, a.size, K)
        have = _rows(t, a, probe).astype(np.int64)
        want = np.stack([have[i] @ w[r // rows] for i, r in enumerate(probe)])
        t.equal(_rows(t, out, probe), finish(want).astype(dtype),
                "rows at the head, around 2**31 and 2**32, at the markers and the tail")
    return Row(run, dtype, size, reason)


def _syrk(t):
    """16 segments of L elements, A (16, 1, L): syrk gives alpha * the sum of squares of
    each segment, the markers' squares in the segments holding them."""
    n = t.N31
    a = t.big(F32, n, shape=(16, 1, n // 16))
    out = mx.nd.linalg.syrk(a, alpha=0.5)
    want = np.zeros((16, 1, 1))
    for p, v in _marked(t, n).items():
        want[p // (n // 16)] += 0.5 * v * v
    t.shape(out, (16, 1, 1), "result")
    t.equal(out, want.astype(F32), "segment sums of squares")


# ---- square-matrix stacks ---------------------------------------------------------------------
def _stack(t, fill, n):
    """(a, far, plain): a float32 stack of n x n matrices past 2**31 elements, zeros or
    identities (``fill``); the batches a check reads: the first, the two either side of flat
    2**31 and the last; and one left as filled, just past 2**31."""
    count = t.P31 // (n * n) + 3
    if fill == "identity":
        a = mx.nd.broadcast_to(mx.nd.array(np.eye(n), dtype=F32).reshape((1, n, n)),
                               shape=(count, n, n))
    else:
        a = mx.nd.zeros((count, n, n), dtype=F32)
    t.seen(a)
    b31 = t.P31 // (n * n)
    return a, [0, b31 - 1, b31, count - 1], b31 + 1


def _unit_lower(j, n):
    """A lower bidiagonal matrix: ones on the diagonal but a 2 at ``j``, -1, 0, 1 below it
    (varying with ``j``). Its inverse has entries of magnitude <= 1 (dyadic), so the
    inverse, the factor of L L^T and (L L^T)^-1 are exact, and LU needs no pivoting."""
    low = np.eye(n) + np.diag((np.arange(n - 1) + j) % 3 - 1.0, -1)
    low[j % n, j % n] = 2
    return low


def _upper(j, n):
    """An upper triangle with a diagonal of ones but -2 at ``j`` and 2**(j+1) at ``j + 5``
    and -1, 0, 1 above it: LU needs no pivoting, the determinant is -2**(j+2) exactly."""
    r, c = np.indices((n, n))
    up = np.where(r < c, (r + 2 * c + j) % 3 - 1, 0) + np.eye(n)
    up[j % n, j % n] = -2
    up[(j + 5) % n, (j + 5) % n] = 2.0 ** (j + 1)
    return up


def _dense(j, n):
    """Distinct values n*n*j + 1 ... n*n*(j + 1)."""
    return np.arange(n * n).reshape(n, n) + n * n * j + 1.0


def _wide(t):
    """A matrix size for ops whose cost is per call (a BLAS product per matrix): the
    largest power of two up to 256 whose n x n matrices fit 8 times below 2**31."""
    return min(256, 2 ** ((t.P31.bit_length() - 4) // 2))


def _square(fill, matrix, call, check, plain, n=K):
    """A row for ``call(a)`` over a ``_stack`` of n x n matrices whose far batches hold
    ``matrix(j, n)``: ``check(t, outs, far, mats)`` verifies those batches, ``plain(t,
    outs, n, b)`` the batch ``b`` left as filled. LAPACK-backed ops take n = 32 (their cost
    grows with n, their per-call overhead with the count); ``n`` may be a function of the
    trial (``_wide``)."""
    def run(t):
        size = n(t) if callable(n) else n
        a, far, untouched = _stack(t, fill, size)
        mats = [matrix(j, size) for j in range(len(far))]
        for b, m in zip(far, mats):
            a[b] = mx.nd.array(m, dtype=F32)
        outs = call(a)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for o in outs:
            t.check(o.shape[0] == a.shape[0], f"result shape {o.shape}")
        check(t, outs, far, mats)
        plain(t, [_batch(t, o, untouched) for o in outs], size, untouched)
    return Row(run, F32, "2**31", F32_REASON)


def _batch(t, out, b):
    """Batch ``b`` of ``out`` as NumPy."""
    per = out.size // out.shape[0]
    return t.values(out, range(b * per, (b + 1) * per)).reshape(out.shape[1:])


def _matrices_equal(want_of):
    """A check: batch ``far[i]`` of the first output equals ``want_of(mats[i], far[i])``
    (the batch index, for ``_rhs``)."""
    def check(t, outs, far, mats):
        for b, m in zip(far, mats):
            t.equal(_batch(t, outs[0], b), want_of(m, b).astype(F32), f"batch {b}")
    return check


def _rhs_values(b, n):
    """Batch ``b`` of ``_rhs``: small integers varying with the batch."""
    return ((b * n + np.arange(n)) % 7 + 1.0).reshape(n, 1)


def _rhs(a):
    """(count, n, 1) right-hand sides for the stack ``a``: batch b is ``_rhs_values(b, n)``."""
    count, n = a.shape[0], a.shape[1]
    return (mx.nd.arange(count * n, dtype="int32") % 7 + 1).astype(F32).reshape((count, n, 1))


def _same_op_on_small(call, exact=None):
    """A check: the far batches of every output equal ``call`` on those matrices alone
    (the same kernel on a small stack); ``exact(mats)`` gives closed forms for the outputs
    it names ({output index: values})."""
    def check(t, outs, far, mats):
        small = call(mx.nd.array(np.stack(mats), dtype=F32))
        small = small if isinstance(small, (list, tuple)) else [small]
        for k, (o, s) in enumerate(zip(outs, small)):
            got = np.stack([_batch(t, o, b) for b in far])
            t.equal(got, s, f"output {k} at batches {far}")
        for k, want in (exact(mats) if exact else {}).items():
            t.equal(np.stack([_batch(t, outs[k], b) for b in far]), want.astype(F32),
                    f"output {k}: closed form")
    return check


def _plain(*wants):
    """A verdict on the batch ``b`` left as filled (zeros or an identity): output k equals
    ``wants[k](n, b)`` (n the matrix size)."""
    def plain(t, outs, n, b):
        for k, (o, w) in enumerate(zip(outs, wants)):
            t.equal(o, np.asarray(w(n, b), dtype=F32).reshape(o.shape), f"output {k} of the "
                    f"batch {b} left as filled")
    return plain


def _const(value):
    return lambda n, b: value


def _eye(n, b):
    return np.eye(n)


def _exact_inverse(m):
    """The inverse in float64: exact for ``_unit_lower`` (dyadic entries of magnitude <= 1)."""
    return np.linalg.inv(m)


# ---- makediag, extractdiag, _la_trian_mask, khatri_rao ----------------------------------------
def _makediag(t):
    """(count, 15) vectors -> (count, 16, 16) matrices past 2**31 with offset 1: the far
    batches (vectors with distinct values) and a zero batch read back whole."""
    count = t.P31 // (K * K) + 2
    b31 = t.P31 // (K * K)
    far = [0, b31 - 1, b31, count - 1]
    v = mx.nd.zeros((count, K - 1), dtype=F32)
    vals = {b: np.arange(K - 1) + 16 * i + 1 for i, b in enumerate(far)}
    for b, row in vals.items():
        v[b] = mx.nd.array(row, dtype=F32)
    out = mx.nd.linalg.makediag(v, offset=1)
    t.shape(out, (count, K, K), "result")
    for b in far + [1]:
        want = np.diag(vals[b], 1) if b in vals else np.zeros((K, K))
        t.equal(_batch(t, out, b), want.astype(F32), f"batch {b}")


def _trian_mask(t):
    """A ``t.big`` stack of (2, 8) matrices past 2**31, masked in place (an element-wise
    op: in and out together would pass the peak): the upper triangle kept, the diagonal
    halved, the lower part zeroed, at every position read."""
    a = t.big(F32, t.N31, shape=(t.N31 // 16, 2, 8))
    pos = sorted(set(t.positions(a.size)) | set(t.marks(a.size)))
    have = t.values(a, pos)
    out = mx.nd._internal._la_trian_mask(a, lower=False, diag=0.5, out=a)     # in place
    t.shape(out, a.shape, "result")
    r, c = (np.array(pos) // 8) % 2, np.array(pos) % 8
    want = np.where(c > r, have, np.where(c == r, have * np.float32(0.5), 0))
    t.equal(t.values(out, pos), want.astype(F32), "masked values")


def _khatri_rao(t):
    """A (r1, 16) and B (64, 16) of small integers: the (64 r1, 16) output past 2**31 at
    the rows read (head, around 2**31, tail) is A[i] * B[j] column by column."""
    r2 = 64
    r1 = t.P31 // (r2 * K) + 1
    a = (mx.nd.arange(r1 * K, dtype="int32") % 7 + 1).astype(F32).reshape((r1, K))
    b = (mx.nd.arange(r2 * K, dtype="int32") % 11 + 1).astype(F32).reshape((r2, K))
    out = mx.nd.khatri_rao(a, b)
    t.shape(out, (r1 * r2, K), "result")
    probe = _probe_rows(t, out.size, K)
    want = _rows(t, a, [r // r2 for r in probe]) * _rows(t, b, [r % r2 for r in probe])
    t.equal(_rows(t, out, probe), want, "rows at the head, around 2**31 and the tail")


def _dot(t, a, w):
    return mx.nd.dot(a, mx.nd.array(w[0].T, dtype=a.dtype), transpose_b=True)


def _batch_dot(t, a, w):
    return mx.nd.batch_dot(a, mx.nd.array(w, dtype=a.dtype))


def _gemm(t, a, w):
    c = mx.nd.full((a.shape[0], 1), 3, dtype=F32)
    return mx.nd.linalg.gemm(a, mx.nd.array(w[0], dtype=F32), c, alpha=2.0, beta=-1.0)


def _gemm2(t, a, w):
    return mx.nd.linalg.gemm2(a, mx.nd.array(w[0].T, dtype=F32), transpose_b=True, alpha=0.5)


def _sumlogdiag(a):
    with np.errstate(divide="ignore"):          # log(0) of the zero batches: -inf
        return mx.nd.linalg.sumlogdiag(a)


def _det_signs(mats):
    return {0: np.array([np.prod(np.diag(m)) for m in mats])}


ROWS = {
    "dot": also(_product(_dot, "int8"), dot_part),
    "batch_dot": _product(_batch_dot, "int8", batch=4),
    "_linalg_gemm": _product(_gemm, F32, "2**31", finish=lambda p: 2 * p - 3,
                             reason=F32_REASON),
    "_linalg_gemm2": _product(_gemm2, F32, "2**31", finish=lambda p: 0.5 * p,
                              reason=F32_REASON),
    "_linalg_syrk": Row(_syrk, F32, "2**31", F32_REASON),
    "_linalg_trmm": _square("zeros", _upper,
                            lambda a: mx.nd.linalg.trmm(a, _rhs(a), lower=False, alpha=0.5),
                            _matrices_equal(lambda m, b: 0.5 * np.triu(m) @ _rhs_values(
                                b, len(m))),
                            _plain(lambda n, b: np.zeros((n, 1))), n=_wide),
    "_linalg_trsm": _square("identity", _unit_lower,
                            lambda a: mx.nd.linalg.trsm(a, _rhs(a), alpha=2.0),
                            _matrices_equal(lambda m, b: np.linalg.solve(
                                m, 2 * _rhs_values(b, len(m)))),
                            _plain(lambda n, b: 2 * _rhs_values(b, n)), n=32),
    "_linalg_det": _square("zeros", _upper, mx.nd.linalg.det,
                           _matrices_equal(lambda m, b: np.prod(np.diag(m)).reshape(())),
                           _plain(_const(0)), n=32),
    "_linalg_slogdet": _square("zeros", _upper, lambda a: mx.nd.linalg.slogdet(a),
                               _same_op_on_small(lambda a: mx.nd.linalg.slogdet(a),
                                                 lambda mats: {0: np.sign(
                                                     _det_signs(mats)[0])}),
                               _plain(_const(0), _const(-np.inf)), n=32),
    "_linalg_sumlogdiag": _square("zeros", lambda j, n: np.abs(_upper(j, n)), _sumlogdiag,
                                  _same_op_on_small(mx.nd.linalg.sumlogdiag),
                                  _plain(_const(-np.inf))),
    "_linalg_extractdiag": _square("zeros", _dense,
                                   lambda a: mx.nd.linalg.extractdiag(a, offset=-1),
                                   _matrices_equal(lambda m, b: np.diag(m, -1)),
                                   _plain(lambda n, b: np.zeros(n - 1))),
    "_linalg_potrf": _square("identity", lambda j, n: _unit_lower(j, n) @ _unit_lower(j, n).T,
                             lambda a: mx.nd.linalg.potrf(a, out=a),
                             _matrices_equal(lambda m, b: np.rint(np.linalg.cholesky(m))),
                             _plain(_eye)),
    "_linalg_potri": _square("identity", _unit_lower, lambda a: mx.nd.linalg.potri(a, out=a),
                             _matrices_equal(lambda m, b: _exact_inverse(m).T @ _exact_inverse(m)),
                             _plain(_eye)),
    "_linalg_inverse": _square("identity", _unit_lower,
                               lambda a: mx.nd.linalg.inverse(a, out=a),
                               _matrices_equal(lambda m, b: _exact_inverse(m)),
                               _plain(_eye)),
    "_linalg_makediag": Row(_makediag, F32, "2**31", F32_REASON),
    "_la_trian_mask": Row(_trian_mask, F32, "2**31", F32_REASON),
    "khatri_rao": Row(_khatri_rao, F32, "2**31", F32_KR_REASON),
}
