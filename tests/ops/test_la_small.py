"""The compiled small-matrix kernels under linalg potrf, potri, trsm, inverse, det and slogdet
(mxlite/_core/la_small.pxi, mx_la_small.h): against NumPy in float64 on either side of the
size where numpy.linalg takes over, their errors, exact cases, in-place use, and the same
bits at every SIMD level."""
import itertools

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite._core import sorting
from simd_levels import outputs_at_each_level

pytestmark = pytest.mark.cpu_only       # CPU kernels

SMALL = sorting.LA_SMALL_MAX
SIZES = (1, 2, 3, 7, 16, SMALL, SMALL + 1)          # the last one through numpy.linalg
TOL = {"float32": 2e-6, "float64": 1e-12}


def _general(rng, batch, n):
    return rng.standard_normal(batch + (n, n)) + 2 * np.sqrt(n) * np.eye(n)


def _factor(rng, batch, n, lower):
    """A triangle (diagonal 1..2) with noise in the other, unread, triangle."""
    t = rng.uniform(-0.5, 0.5, batch + (n, n)) + np.eye(n) * rng.uniform(1, 2, batch + (n, 1))
    noise = rng.uniform(-9, 9, batch + (n, n))
    return (np.tril(t) + np.triu(noise, 1)) if lower else (np.triu(t) + np.tril(noise, -1))


def _close(got, want, dtype):
    scale = max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
def test_square_kernels_against_float64_numpy(n, dtype):
    rng = np.random.default_rng(n)
    a = _general(rng, (3, 2), n).astype(dtype)
    a64 = a.astype(np.float64)
    x = mx.nd.array(a, dtype=dtype)
    _close(mx.nd.linalg.inverse(x).asnumpy(), np.linalg.inv(a64), dtype)
    _close(mx.nd.linalg.det(x).asnumpy(), np.linalg.det(a64), dtype)
    sign, logabs = mx.nd.linalg.slogdet(x)
    want_sign, want_log = np.linalg.slogdet(a64)
    assert (sign.asnumpy() == want_sign).all()
    _close(logabs.asnumpy(), want_log, dtype)
    for lower in (True, False):
        f = _factor(rng, (4,), n, lower).astype(dtype)
        t = (np.tril if lower else np.triu)(f.astype(np.float64))
        spd = t @ np.swapaxes(t, -1, -2) if lower else np.swapaxes(t, -1, -2) @ t
        _close(mx.nd.linalg.potri(mx.nd.array(f, dtype=dtype), lower=lower).asnumpy(),
               np.linalg.inv(spd), dtype)
        spd = ((spd + np.swapaxes(spd, -1, -2)) / 2).astype(dtype)
        unread = (np.triu if lower else np.tril)(rng.uniform(-9, 9, spd.shape), 1 if lower else -1)
        stored = (spd + unread).astype(dtype)
        got = mx.nd.linalg.potrf(mx.nd.array(stored, dtype=dtype), lower=lower).asnumpy()
        chol = np.linalg.cholesky(spd.astype(np.float64))
        _close(got, chol if lower else np.swapaxes(chol, -1, -2), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose,rightside,lower", list(itertools.product([0, 1], repeat=3)))
def test_trsm_against_float64_numpy(transpose, rightside, lower, dtype):
    rng = np.random.default_rng(3)
    for n, k in ((1, 3), (5, 1), (16, 70), (SMALL, 2), (SMALL + 1, 2)):   # 70: two panels
        A = _factor(rng, (2,), n, lower).astype(dtype)
        B = rng.standard_normal((2, k, n) if rightside else (2, n, k)).astype(dtype)
        X = mx.nd.linalg.trsm(mx.nd.array(A, dtype=dtype), mx.nd.array(B, dtype=dtype),
                              transpose=bool(transpose), rightside=bool(rightside),
                              lower=bool(lower), alpha=-1.5).asnumpy()
        T = (np.tril if lower else np.triu)(A.astype(np.float64))
        T = np.swapaxes(T, -1, -2) if transpose else T
        rhs = -1.5 * B.astype(np.float64)
        want = (np.swapaxes(np.linalg.solve(np.swapaxes(T, -1, -2), np.swapaxes(rhs, -1, -2)),
                            -1, -2) if rightside else np.linalg.solve(T, rhs))
        _close(X, want, dtype)


def test_errors_name_the_first_bad_matrix_wherever_it_is():
    a = np.stack([np.eye(4) * 2] * 9).astype(np.float32)
    sing = a.copy()
    sing[5, 2] = sing[5, 1]                          # two equal rows: an exact zero pivot
    with pytest.raises(MXNetError, match="inverse: the matrix is singular"):
        mx.nd.linalg.inverse(mx.nd.array(sing))
    d = mx.nd.linalg.det(mx.nd.array(sing)).asnumpy()
    assert d[5] == 0 and (np.delete(d, 5) == 16).all()
    sign, logabs = mx.nd.linalg.slogdet(mx.nd.array(sing))
    assert sign.asnumpy()[5] == 0 and logabs.asnumpy()[5] == -np.inf
    assert np.allclose(np.delete(logabs.asnumpy(), 5), 4 * np.log(2))
    tri = a.copy()
    tri[7, 3, 3] = 0                                 # a zero on a triangle's diagonal
    with pytest.raises(MXNetError, match="potri: the triangular factor is singular"):
        mx.nd.linalg.potri(mx.nd.array(tri))
    with pytest.raises(MXNetError, match="trsm: the triangular matrix is singular"):
        mx.nd.linalg.trsm(mx.nd.array(tri), mx.nd.ones((9, 4, 2)))
    indef = a.copy()
    indef[8, 3, 3] = -1
    with pytest.raises(MXNetError, match="potrf: the matrix is not positive definite"):
        mx.nd.linalg.potrf(mx.nd.array(indef))
    nan = a.copy()
    nan[1, 0, 0] = np.nan
    with pytest.raises(MXNetError, match="potrf: the matrix is not positive definite"):
        mx.nd.linalg.potrf(mx.nd.array(nan))


def test_determinants_scale_without_overflow():
    """The pivots' product is kept as mantissa and exponent: 2**600 * 2**600 * 2**-700 *
    2**-450 is 2**50 exactly (a float64 product would overflow, a sum of logarithms round),
    and a float32 determinant past float32's range is inf, not an error."""
    d = np.diag([2.0 ** 600, 2.0 ** 600, 2.0 ** -700, -2.0 ** -450])
    assert mx.nd.linalg.det(mx.nd.array(d, dtype="float64")).asnumpy().tolist() == [-2.0 ** 50]
    sign, logabs = mx.nd.linalg.slogdet(mx.nd.array(d, dtype="float64"))
    assert sign.asnumpy().tolist() == [-1.0]
    assert abs(logabs.asnumpy()[0] - 50 * np.log(2)) < 1e-13
    big = np.diag([2.0 ** 100] * 3).astype(np.float32)
    assert mx.nd.linalg.det(mx.nd.array(big)).asnumpy().tolist() == [np.inf]
    assert mx.nd.linalg.slogdet(mx.nd.array(big))[1].asnumpy()[0] == np.float32(300 * np.log(2))


def test_exact_small_integer_cases():
    """Unit triangular matrices with dyadic inverses: every result is exact."""
    L = np.eye(5) + np.diag([1.0, -1, 0, 1], -1) + np.diag([0.5, 0, 0], -2)
    inv = np.linalg.inv(L)
    x = mx.nd.array(L)
    assert (mx.nd.linalg.inverse(x).asnumpy() == inv).all()
    assert (mx.nd.linalg.potri(x).asnumpy() == inv.T @ inv).all()
    assert (mx.nd.linalg.potrf(mx.nd.array(L @ L.T)).asnumpy() == L).all()
    assert mx.nd.linalg.det(mx.nd.array(L * 2)).asnumpy().tolist() == [32.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_results_equal_fresh_ones(dtype):
    rng = np.random.default_rng(8)
    a = _general(rng, (6,), 8).astype(dtype)
    f = _factor(rng, (6,), 8, True).astype(dtype)
    spd = np.tril(f) @ np.swapaxes(np.tril(f), -1, -2)
    for call, src in ((mx.nd.linalg.inverse, a), (mx.nd.linalg.potri, f),
                      (mx.nd.linalg.potrf, spd)):
        fresh = call(mx.nd.array(src, dtype=dtype)).asnumpy()
        x = mx.nd.array(src, dtype=dtype)
        call(x, out=x)
        assert np.array_equal(x.asnumpy(), fresh), call


_LEVEL_SCRIPT = """
import sys, numpy as np, mxlite as mx
z = np.load(sys.argv[1])
a, f, b = (mx.nd.array(z[k], dtype=z[k].dtype) for k in ("a", "f", "b"))
s, l = mx.nd.linalg.slogdet(a)
out = dict(inv=mx.nd.linalg.inverse(a), det=mx.nd.linalg.det(a), s=s, l=l,
           potri=mx.nd.linalg.potri(f), potrf=mx.nd.linalg.potrf(mx.nd.linalg.potri(f)),
           trsm=mx.nd.linalg.trsm(f, b, transpose=True, alpha=0.5))
np.savez(sys.argv[2], **{k: v.asnumpy() for k, v in out.items()})
"""


def test_simd_levels_agree_bit_for_bit(tmp_path):
    rng = np.random.default_rng(9)
    z = {"a": _general(rng, (40,), 13).astype(np.float32),
         "f": _factor(rng, (40,), 13, True),
         "b": rng.standard_normal((40, 13, 9))}
    z["b"] = z["b"].astype(np.float64)
    outs = outputs_at_each_level(tmp_path, _LEVEL_SCRIPT, z)
    for key in outs[0].files:
        assert np.array_equal(outs[0][key], outs[1][key], equal_nan=True), key
