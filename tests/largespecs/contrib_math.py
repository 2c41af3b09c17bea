"""Large-tensor rows: the contrib operators of mxlite/ops/contrib_math.py.

* round_ste, sign_ste take int8 and pass 2**32 (element-wise, against the op on the
  elements read back); allclose compares two int8 arrays past 2**32 (equal, then one element
  past 2**32 changed); arange_like writes int8 past 2**32 with ``repeat`` large enough for
  its values to fit int8, against the closed form; index_copy replaces rows of an int8
  (N / 16, 16) array whose elements pass 2**32.
* div_sqrt_dim, gradientmultiplier, quadratic are float only: float32 past 2**31, in place;
  count_sketch sums float32 data past 2**31 (16 features) into 4 buckets; fft writes, and
  ifft reads, interleaved pairs past 2**31 float32 elements (4-point transforms, exact).
* The attention products are float only (MXNet: float32): the scores of the qk products
  and the attention input of the valatt products pass 2**31 float32 elements, with
  head_dim 1 and small integers so that every product is exact; every other tensor is small.
* index_array writes int64 coordinates: its output passes 2**30 elements (8 GiB).
"""
import math

import numpy as np

import mxlite as mx

from . import Row, elementwise
from .index import _check, _check_sparse, _i64, _marked, _shape_only

F32_REASON = ("float dtypes only: 2**32 float32 elements are 16 GiB, over the 16 GiB peak; "
              "the row runs in place")
ATT_REASON = ("float only (MXNet: float32): 2**32 float32 scores are 16 GiB, over the "
              "16 GiB peak")
INDEX_ARRAY_REASON = ("its output is int64 coordinates, one per element and axis: 2**31 of "
                      "them are 16 GiB, the whole peak")


def _ste(name):
    return elementwise(lambda x, out=None: getattr(mx.nd.contrib, name)(x, out=out))


def _float_inplace(call):
    return elementwise(call, "float32", values=(4, 16, 36, 64), size="2**31",
                       reason=F32_REASON, inplace=True)


def _div_sqrt_dim_row(t):
    n = t.N31                                    # rows of 16: divided by sqrt(16) = 4, exact
    x, marks = _marked(t, "float32", n)
    x = x.reshape((n // 16, 16))
    mx.nd.contrib.div_sqrt_dim(x, out=x)
    _check(t, x, lambda p: marks.get(p, 0) / 4, marks, "div_sqrt_dim")


def _allclose_row(t):
    a = t.big("int8", t.N)
    b = a.copy()
    t.seen(b)
    t.equal(mx.nd.contrib.allclose(a, b), np.array([1], np.uint8), "equal arrays")
    b[t.P32 + 7] = 1                             # one difference past 2**32
    t.equal(mx.nd.contrib.allclose(a, b, atol=0.5), np.array([0], np.uint8), "one differs")


def _arange_like_row(t):
    repeat = t.P32 >> 4                          # values 1 + p // repeat <= 17: exact in int8
    x = _shape_only(t, (t.N,), "int8")
    out = mx.nd.contrib.arange_like(x, start=1, repeat=repeat)
    t.shape(out, (t.N,), "arange_like")
    _check(t, out, lambda p: 1 + p // repeat, [], "arange_like")


def _index_copy_row(t):
    R = t.N // 16
    old, marks = _marked(t, "int8", t.N)
    rows = [R - 1, t.P32 // 16 - 1, t.P31 // 16 + 1, 0]     # past 2**32, below it, past 2**31
    new = mx.nd.array(np.arange(1, 1 + 16 * len(rows)).reshape(len(rows), 16), dtype="int8")
    out = mx.nd.contrib.index_copy(old.reshape((R, 16)), _i64(rows), new)
    want = dict(marks)
    for i, r in enumerate(rows):
        want.update({r * 16 + j: 1 + 16 * i + j for j in range(16)})
    _check_sparse(t, out, want, "index_copy")


def _index_array_row(t):
    n = t.power("2**30") // 2 + 8                # (n, 2) coordinates past 2**30 elements
    x = _shape_only(t, (n // 8, 8), "int8")
    out = mx.nd.contrib.index_array(x)
    t.shape(out, (n // 8, 8, 2), "index_array")
    _check(t, out, lambda p: (p // 2) // 8 if p % 2 == 0 else (p // 2) % 8, [], "index_array")


# ---- attention: head_dim 1, 2 heads, batch 1 -------------------------------------------------
def _side(t):
    """A sequence length T with 2 T**2 past 2**31 (the scores of 2 heads)."""
    return math.isqrt(t.P31 // 2) + 1


def _qk_values(T, parts):
    """(T, 1, 2 * parts) small-integer projections: head h, part i, position s holds
    ``(s * (2 * parts) + h * parts + i) % 7 - 3``."""
    return ((np.arange(T * 2 * parts) % 7) - 3).reshape(T, 1, 2 * parts).astype(np.float32)


def _scores_check(t, out, q, k, what):
    """out[h, i, j] = q[i, h] * k[j, h] (head_dim 1) at the far-end positions."""
    T, Tk = out.shape[1], out.shape[2]
    _check(t, out, lambda p: float(q[(p // Tk) % T, p // (T * Tk)] * k[p % Tk, p // (T * Tk)]),
           [], what)


def _selfatt_qk_row(t):
    T = _side(t)
    x = _qk_values(T, 3)
    out = mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(x), heads=2)
    t.shape(out, (2, T, T), "selfatt_qk")
    r = x.reshape(T, 2, 3)
    _scores_check(t, out, r[:, :, 0], r[:, :, 1], "selfatt_qk")


def _encdec_qk_row(t):
    T = _side(t)
    q = _qk_values(T, 1)
    kv = _qk_values(T + 1, 2)
    out = mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.array(q), mx.nd.array(kv), heads=2)
    t.shape(out, (2, T, T + 1), "encdec_qk")
    _scores_check(t, out, q.reshape(T, 2), kv.reshape(T + 1, 2, 2)[:, :, 0], "encdec_qk")


def _valatt(parts):
    """attention (2, T, T) past 2**31: zeros and the trial's markers; values all ones, so
    out[s, 0, h] is the sum of attention row (h, s)."""
    def run(t):
        T = _side(t)
        att, marks = _marked(t, "float32", 2 * T * T)
        att = att.reshape((2, T, T))
        proj = mx.nd.ones((T, 1, 2 * parts), dtype="float32")
        if parts == 3:
            out = mx.nd.contrib.interleaved_matmul_selfatt_valatt(proj, att, heads=2)
        else:
            out = mx.nd.contrib.interleaved_matmul_encdec_valatt(proj, att, heads=2)
        t.shape(out, (T, 1, 2), "valatt")
        want = np.zeros((T, 1, 2), np.float32)
        for p, v in marks.items():
            want[(p // T) % T, 0, p // (T * T)] += v
        t.equal(out, want, "row sums of the attention")
    return run


def _count_sketch_row(t):
    """data (R, 16) float32 past 2**31 (zeros and the markers) into 4 buckets."""
    R = t.N31 // 16
    data, marks = _marked(t, "float32", R * 16)
    h = [i % 4 for i in range(16)]
    s = [1 if i % 3 else -1 for i in range(16)]
    out = mx.nd.contrib.count_sketch(data.reshape((R, 16)), mx.nd.array([h]),
                                     mx.nd.array([s]), out_dim=4)
    t.shape(out, (R, 4), "count_sketch")
    want = {}
    for p, v in marks.items():
        r, i = divmod(p, 16)
        want[r * 4 + h[i]] = want.get(r * 4 + h[i], 0) + s[i] * v
    _check_sparse(t, out, want, "count_sketch")


def _fft_rows(t, n):
    """Rows of 4 samples: the DFT of 4 points is exact (quarter-turn twiddles)."""
    return n // 4


def _fft_row(t):
    """fft of float32 (R, 4) data past 2**30 elements: the output (R, 8) passes 2**31.
    Markers only: a row with one sample v at k has X_j = v (cos, -sin)(2 pi j k / 4)."""
    R = _fft_rows(t, t.P31 // 2 + 16)
    x, marks = _marked(t, "float32", R * 4)
    out = mx.nd.contrib.fft(x.reshape((R, 4)))
    t.shape(out, (R, 8), "fft")
    turn = [(1, 0), (0, -1), (-1, 0), (0, 1)]           # (cos, -sin) of k quarter turns
    want = {}
    for p, v in marks.items():
        r, k = divmod(p, 4)
        for j in range(4):
            c, s = turn[(j * k) % 4]
            want[r * 8 + 2 * j] = want.get(r * 8 + 2 * j, 0) + v * c
            want[r * 8 + 2 * j + 1] = want.get(r * 8 + 2 * j + 1, 0) + v * s
    _check_sparse(t, out, {p: v for p, v in want.items() if v}, "fft")


def _ifft_row(t):
    """ifft of float32 (R, 8) pairs past 2**31 elements into (R, 4): a marker v at the real
    part of frequency j gives y_k = v cos(2 pi j k / 4), at the imaginary part -v sin."""
    R = _fft_rows(t, t.N31 // 2 + 16)
    x, marks = _marked(t, "float32", R * 8)
    out = mx.nd.contrib.ifft(x.reshape((R, 8)))
    t.shape(out, (R, 4), "ifft")
    cos, sin = [1, 0, -1, 0], [0, 1, 0, -1]
    want = {}
    for p, v in marks.items():
        r, e = divmod(p, 8)
        j, imag = divmod(e, 2)
        for k in range(4):
            w = -v * sin[(j * k) % 4] if imag else v * cos[(j * k) % 4]
            want[r * 4 + k] = want.get(r * 4 + k, 0) + w
    _check_sparse(t, out, {p: v for p, v in want.items() if v}, "ifft")


ROWS = {
    "_contrib_round_ste": _ste("round_ste"),
    "_contrib_sign_ste": _ste("sign_ste"),
    "_contrib_allclose": Row(_allclose_row, "int8"),
    "_contrib_arange_like": Row(_arange_like_row, "int8"),
    "_contrib_index_copy": Row(_index_copy_row, "int8"),
    "_contrib_index_array": Row(_index_array_row, "int64", "2**30", INDEX_ARRAY_REASON),
    "_contrib_div_sqrt_dim": Row(_div_sqrt_dim_row, "float32", "2**31", F32_REASON),
    "_contrib_gradientmultiplier": _float_inplace(
        lambda x, out=None: mx.nd.contrib.gradientmultiplier(x, scalar=-2.0, out=out)),
    "_contrib_quadratic": _float_inplace(
        lambda x, out=None: mx.nd.contrib.quadratic(x, a=0.5, b=-2.0, c=3.0, out=out)),
    "_contrib_fft": Row(_fft_row, "float32", "2**31", F32_REASON),
    "_contrib_ifft": Row(_ifft_row, "float32", "2**31", F32_REASON),
    "_contrib_count_sketch": Row(_count_sketch_row, "float32", "2**31", F32_REASON),
    "_contrib_interleaved_matmul_selfatt_qk": Row(_selfatt_qk_row, "float32", "2**31",
                                                  ATT_REASON),
    "_contrib_interleaved_matmul_encdec_qk": Row(_encdec_qk_row, "float32", "2**31",
                                                 ATT_REASON),
    "_contrib_interleaved_matmul_selfatt_valatt": Row(_valatt(3), "float32", "2**31",
                                                      ATT_REASON),
    "_contrib_interleaved_matmul_encdec_valatt": Row(_valatt(2), "float32", "2**31",
                                                     ATT_REASON),
}
