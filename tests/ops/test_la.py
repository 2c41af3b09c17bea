"""mx.nd.linalg.* and khatri_rao against NumPy (mxlite/ops/la.py)."""
import itertools

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.test_utils import check_grads

RNG = np.random.default_rng(42)


def nd64(a):
    return mx.nd.array(a, dtype="float64")


def spd(batch, n, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal(batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def factor(batch, n, lower, seed=0):
    """A triangular factor (diagonal near 2) with noise in the triangle that is not read."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(-0.5, 0.5, batch + (n, n)) + 2 * np.eye(n)
    noise = rng.uniform(-9, 9, batch + (n, n))
    return (np.tril(t) + np.triu(noise, 1)) if lower else (np.triu(t) + np.tril(noise, -1))


def tri(a, lower):
    return np.tril(a) if lower else np.triu(a)


def mT(a):
    return np.swapaxes(a, -1, -2)


# ---- gemm / gemm2 --------------------------------------------------------------------------
@pytest.mark.parametrize("ta,tb", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_and_gemm2(ta, tb, dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 3) if ta else (2, 3, 4)).astype(dtype)
    b = rng.standard_normal((2, 5, 4) if tb else (2, 4, 5)).astype(dtype)
    c = rng.standard_normal((2, 3, 5)).astype(dtype)
    ref = (mT(a) if ta else a) @ (mT(b) if tb else b)
    tol = 1e-5 if dtype == "float32" else 1e-12
    got = mx.nd.linalg.gemm(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype),
                            mx.nd.array(c, dtype=dtype), transpose_a=ta, transpose_b=tb,
                            alpha=0.5, beta=-2.0)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got.asnumpy(), 0.5 * ref - 2.0 * c, rtol=tol, atol=tol)
    got2 = mx.nd.linalg_gemm2(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype),
                              transpose_a=ta, transpose_b=tb, alpha=3.0)
    np.testing.assert_allclose(got2.asnumpy(), 3.0 * ref, rtol=tol, atol=tol)
    check_grads(lambda x, y, z: mx.nd.linalg.gemm(x * x, y, z, transpose_a=ta,
                                                  transpose_b=tb, alpha=0.5, beta=-2.0),
                [nd64(a), nd64(b), nd64(c)], order=2)


def test_gemm_axis_is_a_swapaxes():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 2, 6, 4))       # rows on axis 0: matrices (3, 4), batch (2, 6)
    b = rng.standard_normal((4, 2, 6, 5))
    c = rng.standard_normal((3, 2, 6, 5))
    sw = lambda x: np.swapaxes(x, 0, 2)         # noqa: E731  (MXNet's definition of axis)
    ref = sw(sw(a) @ sw(b) + sw(c))
    got = mx.nd.linalg.gemm(nd64(a), nd64(b), nd64(c), axis=0)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-12)
    check_grads(lambda x, y: mx.nd.linalg.gemm2(x, y * y, axis=0), [nd64(a), nd64(b)], order=2)


def test_gemm_errors():
    with pytest.raises(MXNetError, match="gemm2: shapes .* are not aligned"):
        mx.nd.linalg.gemm2(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match="gemm: C has shape"):
        mx.nd.linalg.gemm(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match="gemm2: input 0 has dtype int32"):
        mx.nd.linalg.gemm2(mx.nd.ones((2, 2), dtype="int32"), mx.nd.ones((2, 2), dtype="int32"))
    with pytest.raises(MXNetError, match="gemm2: A and B must have the same batch"):
        mx.nd.linalg.gemm2(mx.nd.ones((2, 2, 2)), mx.nd.ones((3, 2, 2)))


# ---- potrf / potri -------------------------------------------------------------------------
@pytest.mark.parametrize("lower", [True, False])
def test_potrf_potri(lower):
    a = spd((2,), 4, seed=3)
    stored = a + (np.triu if lower else np.tril)(RNG.uniform(-5, 5, a.shape), 1 if lower else -1)
    L = mx.nd.linalg.potrf(nd64(stored), lower=lower).asnumpy()
    ref = np.linalg.cholesky(a)
    np.testing.assert_allclose(L, ref if lower else mT(ref), rtol=1e-12, atol=1e-12)
    inv = mx.nd.linalg.potri(nd64(L), lower=lower).asnumpy()
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    check_grads(lambda x: mx.nd.linalg.potrf(x, lower=lower), [nd64(stored)], order=2)
    check_grads(lambda x: mx.nd.linalg.potri(x, lower=lower),
                [nd64(factor((2,), 3, lower, seed=4))], order=2)


def test_potrf_gradient_through_a_symmetric_input_matches_the_symmetric_convention():
    """For A = X X^T + n I (a symmetric function of X) the gradient with respect to X is the
    same whichever convention the op uses; check it against finite differences directly."""
    x = nd64(np.random.default_rng(5).standard_normal((3, 3)))
    check_grads(lambda v: mx.nd.linalg.sumlogdiag(mx.nd.linalg.potrf(
        mx.nd.linalg.syrk(v) + nd64(3 * np.eye(3)))), [x], order=3)
    a = nd64(spd((), 3, seed=6))
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.potrf(a).sum()
    y.backward()
    assert not np.triu(a.grad.asnumpy(), 1).any()      # the upper triangle is never read


def test_potrf_errors():
    with pytest.raises(MXNetError, match="potrf: the matrix is not positive definite"):
        mx.nd.linalg.potrf(mx.nd.array([[1, 2], [2, 1]]))
    with pytest.raises(MXNetError, match="potrf: A must hold square matrices"):
        mx.nd.linalg.potrf(mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match="potri: the triangular factor is singular"):
        mx.nd.linalg.potri(mx.nd.array([[1, 0], [1, 0]]))


# ---- trsm / trmm ---------------------------------------------------------------------------
CASES = list(itertools.product([False, True], repeat=3))   # transpose, rightside, lower


@pytest.mark.parametrize("transpose,rightside,lower", CASES)
def test_trsm_trmm(transpose, rightside, lower):
    A = factor((2,), 3, lower, seed=7)
    B = np.random.default_rng(8).standard_normal((2, 4, 3) if rightside else (2, 3, 4))
    T = tri(A, lower)
    opT = mT(T) if transpose else T
    kw = dict(transpose=transpose, rightside=rightside, lower=lower)
    prod = mx.nd.linalg.trmm(nd64(A), nd64(B), alpha=1.5, **kw).asnumpy()
    np.testing.assert_allclose(prod, 1.5 * ((B @ opT) if rightside else (opT @ B)), rtol=1e-12)
    X = mx.nd.linalg.trsm(nd64(A), nd64(B), alpha=-2.0, **kw).asnumpy()
    back = (X @ opT) if rightside else (opT @ X)
    np.testing.assert_allclose(back, -2.0 * B, rtol=1e-10, atol=1e-12)
    check_grads(lambda a, b: mx.nd.linalg.trsm(a, b * b, alpha=-2.0, **kw),
                [nd64(A), nd64(B)], order=2)
    check_grads(lambda a, b: mx.nd.linalg.trmm(a * a, b, alpha=1.5, **kw),
                [nd64(A), nd64(B)], order=2)


def test_trsm_errors():
    with pytest.raises(MXNetError, match="trsm: B of shape \\(2, 4\\) has 4 columns"):
        mx.nd.linalg.trsm(mx.nd.ones((3, 3)), mx.nd.ones((2, 4)), rightside=True)
    with pytest.raises(MXNetError, match="trsm: the triangular matrix is singular"):
        mx.nd.linalg.trsm(mx.nd.array([[1, 0], [5, 0]]), mx.nd.ones((2, 1)))


# ---- syrk, sumlogdiag, diagonals -----------------------------------------------------------
@pytest.mark.parametrize("transpose", [False, True])
def test_syrk(transpose):
    a = np.random.default_rng(9).standard_normal((2, 3, 5))
    got = mx.nd.linalg.syrk(nd64(a), transpose=transpose, alpha=0.25).asnumpy()
    np.testing.assert_allclose(got, 0.25 * ((mT(a) @ a) if transpose else (a @ mT(a))),
                               rtol=1e-12)
    check_grads(lambda x: mx.nd.linalg.syrk(x, transpose=transpose, alpha=0.25), [nd64(a)],
                order=3)


def test_sumlogdiag_and_diagonals():
    a = np.random.default_rng(10).uniform(0.5, 2, (2, 3, 4, 4))
    got = mx.nd.linalg.sumlogdiag(nd64(a))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got.asnumpy(), np.log(np.diagonal(a, 0, -2, -1)).sum(-1))
    assert mx.nd.linalg.sumlogdiag(nd64(a[0, 0])).shape == (1,)
    for off in (-2, 0, 1):
        d = mx.nd.linalg.extractdiag(nd64(a), offset=off).asnumpy()
        np.testing.assert_array_equal(d, np.diagonal(a, off, -2, -1))
        m = mx.nd.linalg.makediag(nd64(d), offset=off).asnumpy()
        ref = np.zeros(d.shape[:-1] + (4, 4))
        for idx in np.ndindex(d.shape[:-1]):
            ref[idx] = np.diag(d[idx], off)
        np.testing.assert_array_equal(m, ref)
    with pytest.raises(MXNetError, match="extractdiag: offset=4 is outside"):
        mx.nd.linalg.extractdiag(nd64(a), offset=4)


# ---- inverse, det, slogdet -----------------------------------------------------------------
def test_inverse_det_slogdet():
    a = np.random.default_rng(11).standard_normal((3, 4, 4)) + 2 * np.eye(4)
    a[1] *= -1
    np.testing.assert_allclose(mx.nd.linalg.inverse(nd64(a)).asnumpy(), np.linalg.inv(a),
                               rtol=1e-10)
    np.testing.assert_allclose(mx.nd.linalg.det(nd64(a)).asnumpy(), np.linalg.det(a),
                               rtol=1e-10)
    sign, logabs = mx.nd.linalg.slogdet(nd64(a))
    ref_sign, ref_log = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.asnumpy(), ref_sign)
    np.testing.assert_allclose(logabs.asnumpy(), ref_log, rtol=1e-12)
    assert mx.nd.linalg.det(nd64(a[0])).shape == (1,)
    sign, logabs = mx.nd.linalg.slogdet(mx.nd.zeros((2, 2)))
    assert sign.asnumpy().tolist() == [0] and logabs.asnumpy().tolist() == [-np.inf]
    with pytest.raises(MXNetError, match="inverse: the matrix is singular"):
        mx.nd.linalg.inverse(mx.nd.zeros((2, 2)))
    x = nd64(a)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.linalg.det(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(),
                               np.linalg.det(a)[:, None, None] * mT(np.linalg.inv(a)),
                               rtol=1e-10)


# ---- khatri_rao ----------------------------------------------------------------------------
def test_khatri_rao():
    rng = np.random.default_rng(12)
    mats = [rng.standard_normal((n, 3)) for n in (2, 4, 3)]
    got = mx.nd.khatri_rao(*[nd64(m) for m in mats]).asnumpy()
    ref = np.stack([np.kron(np.kron(mats[0][:, c], mats[1][:, c]), mats[2][:, c])
                    for c in range(3)], axis=1)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_array_equal(mx.nd.khatri_rao(nd64(mats[0])).asnumpy(), mats[0])
    f32 = mx.nd.khatri_rao(mx.nd.array(mats[0]), mx.nd.array(mats[1]), num_args=2)
    assert f32.dtype == np.float32
    check_grads(lambda a, b: mx.nd.khatri_rao(a, b * b), [nd64(mats[0]), nd64(mats[1])],
                order=2)
    with pytest.raises(MXNetError, match="khatri_rao: every input must have 3 columns"):
        mx.nd.khatri_rao(mx.nd.ones((2, 3)), mx.nd.ones((2, 2)))
    with pytest.raises(MXNetError, match="khatri_rao: input 0 must be a matrix"):
        mx.nd.khatri_rao(mx.nd.ones((2, 3, 1)))


@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (2, 4, 3)])
@pytest.mark.parametrize("lower", [True, False])
def test_trian_mask_of_non_square_matrices(shape, lower, rng):
    """The diagonal of a wide or tall matrix is min(rows, cols) long (was an IndexError)."""
    a = rng.normal(size=shape)
    expected = np.tril(a) if lower else np.triu(a)
    k = np.arange(min(shape[-2:]))
    expected[..., k, k] *= 0.5
    got = mx.nd._internal._la_trian_mask(mx.nd.array(a, dtype="float64"), lower=lower, diag=0.5)
    np.testing.assert_array_equal(got.asnumpy(), expected)


@pytest.mark.cpu_only
def test_blocked_kernels_match_one_call_and_raise_in_order(monkeypatch, rng):
    """Large stacks run in blocks on a thread pool: every matrix is computed alone, so the
    results equal NumPy's on the whole stack, and a failing matrix is an error whichever
    block it falls in."""
    from mxlite.ops import la
    monkeypatch.setattr(la, "BLOCK", 64)                  # 4 matrices of 4x4 per block
    a = rng.standard_normal((50, 4, 4))
    spd = a @ a.transpose(0, 2, 1) + 4 * np.eye(4)
    x = mx.nd.array(spd, dtype="float64")
    np.testing.assert_allclose(mx.nd.linalg.inverse(x).asnumpy(), np.linalg.inv(spd),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mx.nd.linalg.potrf(x).asnumpy(), np.linalg.cholesky(spd),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mx.nd.linalg.det(x).asnumpy(), np.linalg.det(spd), rtol=1e-12)
    bad = spd.copy()
    bad[37] = -np.eye(4)                                  # not positive definite, block 9
    with pytest.raises(MXNetError, match="potrf.*positive definite"):
        mx.nd.linalg.potrf(mx.nd.array(bad, dtype="float64"))
