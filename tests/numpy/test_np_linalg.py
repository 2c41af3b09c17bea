"""mx.np.linalg against numpy.linalg: values (shapes with batches, float32/float64),
gradients against finite differences in float64, and the errors."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import autograd, np
from mxlite.base import MXNetError
from mxlite.test_utils import check_grads

RNG = onp.random.default_rng(7)
TOL = {onp.float32: 2e-4, onp.float64: 1e-9}
DTYPES = [onp.float32, onp.float64]
SHAPES = [(1, 1), (3, 3), (4, 4), (2, 3, 3), (2, 2, 4, 4), (0, 3, 3)]


def close(got, want, dtype=onp.float64, scale=1.0):
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    assert got.shape == onp.shape(want), (got.shape, onp.shape(want))
    tol = TOL[dtype] * scale
    onp.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def well_conditioned(shape):
    """Random matrices with singular values in [1, 3] (an orthogonal factor times them)."""
    a = RNG.standard_normal(shape)
    if 0 in shape:
        return a
    q, _ = onp.linalg.qr(a)
    s = RNG.uniform(1.0, 3.0, shape[:-1])
    return (q * s[..., None, :]) @ onp.swapaxes(onp.linalg.qr(RNG.standard_normal(shape))[0],
                                               -1, -2)


def spd(shape):
    a = well_conditioned(shape)
    return a @ onp.swapaxes(a, -1, -2) + onp.eye(shape[-1]) if 0 not in shape else a


# ---- values ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_square_functions_match_numpy(shape, dtype):
    a = well_conditioned(shape).astype(dtype)
    x = np.array(a, dtype=dtype)
    close(np.linalg.det(x), onp.linalg.det(a), dtype, 10)
    sign, logdet = np.linalg.slogdet(x)
    want_sign, want_log = onp.linalg.slogdet(a)
    close(sign, want_sign, dtype)
    close(logdet, want_log, dtype, 10)
    close(np.linalg.inv(x), onp.linalg.inv(a), dtype, 10)
    s = spd(shape).astype(dtype)
    close(np.linalg.cholesky(np.array(s, dtype=dtype)), onp.linalg.cholesky(s), dtype, 10)
    assert np.linalg.det(x).dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_numpy_and_reads_one_triangle(shape, dtype, uplo):
    a = spd(shape) - 2 * onp.eye(shape[-1])
    junk = onp.triu(RNG.standard_normal(shape), 1)          # the triangle that is not read
    a = (a + (junk if uplo == "L" else onp.swapaxes(junk, -1, -2))).astype(dtype)
    w, v = np.linalg.eigh(np.array(a, dtype=dtype), UPLO=uplo)
    want_w = onp.linalg.eigvalsh(a, UPLO=uplo)
    close(w, want_w, dtype, 100)
    close(np.linalg.eigvalsh(np.array(a, dtype=dtype), UPLO=uplo), want_w, dtype, 100)
    full = onp.linalg.eigh(a, UPLO=uplo)[1]
    sym = full @ (want_w[..., None] * onp.swapaxes(full, -1, -2))
    v = v.asnumpy()
    close(v @ (w.asnumpy()[..., None] * onp.swapaxes(v, -1, -2)), sym, dtype, 100)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (2, 3, 4), (2, 2, 1, 3), (0, 2),
                                   (3, 0, 2, 2)])
def test_svd_mxnet_form(shape, dtype):
    a = RNG.uniform(-3, 3, shape).astype(dtype)
    ut, s, v = np.linalg.svd(np.array(a, dtype=dtype))
    k = min(shape[-2:])
    assert ut.shape == shape[:-1] + (k,) and s.shape == shape[:-2] + (k,)
    assert v.shape == shape[:-2] + (k, shape[-1])
    close(s, onp.linalg.svd(a, compute_uv=False), dtype, 100)
    ut, s, v = ut.asnumpy(), s.asnumpy(), v.asnumpy()
    close(ut * s[..., None, :] @ v, a, dtype, 100)
    close(onp.swapaxes(ut, -1, -2) @ ut, onp.broadcast_to(onp.eye(k), shape[:-2] + (k, k)),
          dtype, 100)
    close(v @ onp.swapaxes(v, -1, -2), onp.broadcast_to(onp.eye(k), shape[:-2] + (k, k)),
          dtype, 100)


def test_svd_rank_deficient_has_no_nan():
    a = onp.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5, 2.0])
    ut, s, v = np.linalg.svd(np.array(a, dtype="float64"))
    close(s, onp.linalg.svd(a, compute_uv=False), onp.float64, 1e3)
    assert onp.isfinite(v.asnumpy()).all()
    close(ut.asnumpy() * s.asnumpy() @ v.asnumpy(), a, onp.float64, 1e3)


NORM_CASES = [((5,), None, None), ((5,), 3, None), ((5,), -onp.inf, None), ((2, 3), None, None),
              ((2, 3, 4), None, None), ((2, 3, 4), 1, 1), ((2, 3, 4), 0, 2), ((2, 3, 4), -3.2, 2),
              ((2, 3, 4), onp.inf, -1), ((2, 3, 4), 2, 0), ((2, 3), -1, None),
              ((3, 2), 2, None), ((3, 4), -2, None), ((4, 3), -2, None), ((2, 3), "nuc", None),
              ((2, 3, 4), "fro", (0, 2)), ((2, 3, 4), 1, (2, 1)), ((2, 3, 4), -onp.inf, (1, 0)),
              ((2, 3, 4, 5), 2, (2, 3)), ((4, 2, 3, 4), -2, (0, 2)), ((2, 3, 4), "nuc", (2, 0)),
              ((2, 0, 4), "fro", (0, 2)), ((2, 3, 0, 4), -2, 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, ord, axis", NORM_CASES)
def test_norm_matches_numpy(shape, ord, axis, dtype):
    a = RNG.uniform(-5, 5, shape).astype(dtype)
    for keepdims in (False, True):
        got = np.linalg.norm(np.array(a, dtype=dtype), ord=ord, axis=axis, keepdims=keepdims)
        close(got, onp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims), dtype, 100)


def test_norm_mxnet_spellings_and_integers():
    a = onp.arange(24.0).reshape(2, 3, 4) - 10
    close(np.linalg.norm(np.array(a), "inf", 1), onp.linalg.norm(a, onp.inf, 1))
    close(np.linalg.norm(np.array(a), "-inf", (1, 0)), onp.linalg.norm(a, -onp.inf, (1, 0)))
    # ord with axis None on a stack: the matrix norm of the last two axes (MXNet)
    close(np.linalg.norm(np.array(a), 2), onp.linalg.norm(a, 2, axis=(1, 2)))
    close(np.linalg.norm(np.array(a), "fro", 2), onp.linalg.norm(a, 2, 2))
    got = np.linalg.norm(np.array([3, 4], dtype="int32"))
    assert got.dtype == onp.float64 and float(got) == 5.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape_a, shape_b", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 4, 4), (2, 4)),
                                              ((2, 4, 4), (2, 4, 3)), ((2, 3, 3), (1, 3, 1)),
                                              ((0, 2, 2), (0, 2, 1))])
def test_solve_matches_numpy(shape_a, shape_b, dtype):
    a = well_conditioned(shape_a).astype(dtype)
    b = RNG.standard_normal(shape_b).astype(dtype)
    want = onp.linalg.solve(a, b[..., None])[..., 0] if len(shape_b) == len(shape_a) - 1 \
        else onp.linalg.solve(a, b)
    close(np.linalg.solve(np.array(a, dtype=dtype), np.array(b, dtype=dtype)), want, dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (4, 6), (6, 4), (2, 3, 5), (2, 5, 3)])
def test_pinv_matches_numpy(shape, dtype):
    a = RNG.uniform(-3, 3, shape).astype(dtype)
    close(np.linalg.pinv(np.array(a, dtype=dtype)), onp.linalg.pinv(a), dtype, 100)
    rcond = RNG.uniform(0.05, 0.5, shape[:-2])
    close(np.linalg.pinv(np.array(a, dtype=dtype), np.array(rcond, dtype=dtype)),
          onp.linalg.pinv(a, rcond), dtype, 100)
    sym = (a @ onp.swapaxes(a, -1, -2)).astype(dtype)
    close(np.linalg.pinv(np.array(sym, dtype=dtype), hermitian=True),
          onp.linalg.pinv(sym, hermitian=True), dtype, 1e3)


def test_pinv_of_singular_matrix_drops_the_zero_singular_value():
    a = onp.outer([1.0, 2.0], [3.0, 1.0, 1.0])
    close(np.linalg.pinv(np.array(a, dtype="float64"), 1e-10), onp.linalg.pinv(a, 1e-10),
          onp.float64, 1e4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 4, 3), (2, 3, 4)])
def test_qr_matches_numpy(shape, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    q, r = np.linalg.qr(np.array(a, dtype=dtype))
    want_q, want_r = onp.linalg.qr(a)
    signs = onp.sign(onp.diagonal(want_r, axis1=-2, axis2=-1)) * onp.sign(
        onp.diagonal(r.asnumpy(), axis1=-2, axis2=-1))
    close(q.asnumpy() * signs[..., None, :], want_q, dtype, 100)
    close(r.asnumpy() * signs[..., :, None], want_r, dtype, 100)
    close(np.linalg.qr(np.array(a, dtype=dtype), mode="r"), r.asnumpy(), dtype)


def test_tensorinv_tensorsolve_match_numpy():
    a = well_conditioned((6, 6)).reshape(6, 2, 3)
    close(np.linalg.tensorinv(np.array(a), ind=1), onp.linalg.tensorinv(a, ind=1))
    b = well_conditioned((6, 6)).reshape(2, 3, 3, 2)
    close(np.linalg.tensorinv(np.array(b)), onp.linalg.tensorinv(b))
    c = well_conditioned((6, 6)).reshape(2, 3, 6)
    rhs = RNG.standard_normal(6)
    close(np.linalg.tensorsolve(np.array(c), np.array(rhs), axes=(0, 1)),
          onp.linalg.tensorsolve(c, rhs, axes=(0, 1)))
    d = well_conditioned((12, 12)).reshape(3, 4, 2, 6)
    rhs = RNG.standard_normal((3, 4))
    close(np.linalg.tensorsolve(np.array(d), np.array(rhs)), onp.linalg.tensorsolve(d, rhs))


def test_eig_eigvals_real_spectrum():
    q = well_conditioned((2, 4, 4))
    a = q @ (onp.arange(1.0, 5.0)[:, None] * onp.linalg.inv(q))     # eigenvalues 1..4
    w, v = np.linalg.eig(np.array(a))
    close(onp.sort(w.asnumpy(), -1), onp.broadcast_to(onp.arange(1.0, 5.0), (2, 4)),
          scale=1e4)
    close(a @ v.asnumpy(), v.asnumpy() * w.asnumpy()[..., None, :], scale=1e4)
    close(onp.sort(np.linalg.eigvals(np.array(a)).asnumpy(), -1),
          onp.sort(onp.linalg.eigvals(a).real, -1), scale=1e4)
    assert np.linalg.eigvals(np.array(a.astype("float32"), dtype="float32")).dtype == onp.float32
    assert np.linalg.eigvals(np.array([[2, 0], [0, 3]], dtype="int32")).dtype == onp.float64


def test_lstsq_rank_cond_power_multidot():
    a, b = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 2))
    x, res, rank, s = np.linalg.lstsq(np.array(a), np.array(b), rcond=None)
    wx, wres, wrank, ws = onp.linalg.lstsq(a, b, rcond=None)
    close(x, wx), close(res, wres), close(s, ws)
    assert rank == wrank == 3
    low = onp.outer([1.0, 2.0, 3.0], [1.0, 0.0, 2.0])
    assert int(np.linalg.matrix_rank(np.array(low))) == 1
    assert np.linalg.matrix_rank(np.array(RNG.standard_normal((2, 3, 3)))).tolist() == [3, 3]
    m = RNG.standard_normal((2, 3, 3))
    for p in (None, 2, -2, "fro", "nuc", 1, -1, onp.inf, -onp.inf):
        close(np.linalg.cond(np.array(m), p), onp.linalg.cond(m, p), scale=1e4)
    for n in (0, 1, 2, 5, -1, -3):
        close(np.linalg.matrix_power(np.array(m), n), onp.linalg.matrix_power(m, n), scale=1e4)
    mi = RNG.integers(-3, 3, (3, 3))
    got = np.linalg.matrix_power(np.array(mi, dtype="int64"), 3)
    assert got.dtype == onp.int64 and (got.asnumpy() == onp.linalg.matrix_power(mi, 3)).all()
    ms = [RNG.standard_normal(s) for s in [(4,), (4, 6), (6, 2), (2, 5), (5,)]]
    close(np.linalg.multi_dot([np.array(v) for v in ms]), onp.linalg.multi_dot(ms))
    ms = ms[1:4]
    close(np.linalg.multi_dot([np.array(v) for v in ms]), onp.linalg.multi_dot(ms))


def test_integer_input_is_float64_and_empty_matrices():
    a = np.array([[2, 1], [1, 3]], dtype="int32")
    for fn in (np.linalg.det, np.linalg.inv, np.linalg.cholesky, np.linalg.eigvalsh):
        assert fn(a).dtype == onp.float64
    close(np.linalg.det(np.zeros((0, 0))), 1.0)
    close(np.linalg.det(np.zeros((2, 0, 0))), onp.ones(2))
    close(np.linalg.slogdet(np.zeros((0, 0)))[1], 0.0)


# ---- gradients (float64, finite differences) -------------------------------------------------
def f64(a):
    return mx.nd.array(a, dtype="float64")


def sym(f):
    """f of the symmetric part: directions stay symmetric (cholesky, eigh take symmetric
    input; their gradient is the symmetric one)."""
    return lambda x: f(x + mx.nd.swapaxes(x, dim1=-1, dim2=-2))


def svd_sign_free(ut, s, v):
    """s, and ut and v with each singular pair's sign fixed by the first row of ut."""
    lead = ut[:, :1, :]
    return [s, ut * lead, v * np.swapaxes(lead, 1, 2)]


GRADS = [
    ("det", lambda x: np.linalg.det(x), well_conditioned((2, 3, 3)), 3),
    ("det_2d", lambda x: np.linalg.det(x), well_conditioned((3, 3)), 1),
    ("slogdet", lambda x: np.linalg.slogdet(x)[1], well_conditioned((2, 3, 3)), 2),
    ("inv", lambda x: np.linalg.inv(x), well_conditioned((2, 3, 3)), 3),
    ("cholesky", sym(np.linalg.cholesky), spd((2, 3, 3)) / 2, 2),
    ("eigh_w", sym(lambda x: np.linalg.eigh(x)[0]), spd((3, 3)) / 2, 1),
    ("eigh_v", sym(lambda x: np.linalg.eigh(x)[1] * np.linalg.eigh(x)[1][:, :1, :]),
     spd((2, 3, 3)) / 2, 1),
    ("norm_vec", lambda x: np.linalg.norm(x, axis=1), RNG.standard_normal((3, 4)), 2),
    ("norm_p3", lambda x: np.linalg.norm(x, 3, axis=0), RNG.standard_normal((3, 4)), 1),
    ("norm_fro", lambda x: np.linalg.norm(x), RNG.standard_normal((3, 4)), 2),
    ("norm_2", lambda x: np.linalg.norm(x, 2, axis=(0, 2)), RNG.standard_normal((3, 2, 4)), 1),
    ("norm_m2", lambda x: np.linalg.norm(x, -2), RNG.standard_normal((4, 3)), 1),
    ("norm_nuc", lambda x: np.linalg.norm(x, "nuc"), RNG.standard_normal((3, 4)), 1),
    ("norm_1", lambda x: np.linalg.norm(x, 1, axis=(1, 0)), RNG.standard_normal((3, 4)), 1),
    ("svd", lambda x: svd_sign_free(*np.linalg.svd(x)), RNG.standard_normal((2, 3, 4)), 1),
    ("svd_tall", lambda x: svd_sign_free(*np.linalg.svd(x)), RNG.standard_normal((2, 4, 3)), 1),
    ("pinv", lambda x: np.linalg.pinv(x), RNG.standard_normal((4, 3)), 1),
    ("qr", lambda x: np.linalg.qr(x), RNG.standard_normal((4, 3)), 1),
    ("tensorinv", lambda x: np.linalg.tensorinv(x, ind=1),
     well_conditioned((6, 6)).reshape(6, 2, 3), 1),
    ("cond", lambda x: np.linalg.cond(x), well_conditioned((3, 3)), 1),
    ("matrix_power", lambda x: np.linalg.matrix_power(x, -2), well_conditioned((3, 3)), 1),
]


@pytest.mark.parametrize("name, f, a, order", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_finite_differences(name, f, a, order):
    # no zeros in the head gradients: a per-matrix scalar of a 2-stack would be all zeros
    check_grads(f, [f64(a)], order=order, rtol=1e-4, atol=1e-6, name=name, zero_fraction=0.0)


def test_solve_gradients_in_both_inputs():
    a, b = well_conditioned((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    check_grads(lambda x, y: np.linalg.solve(x, y), [f64(a), f64(b)], order=2, rtol=1e-4,
                atol=1e-6, name="solve", zero_fraction=0.0)
    check_grads(lambda x, y: np.linalg.tensorsolve(x, y), [f64(a[0]), f64(b[0, :, 0])],
                order=1, rtol=1e-4, atol=1e-6, name="tensorsolve", zero_fraction=0.0)


def test_the_gradient_check_sees_a_missing_term():
    """The checks above are not vacuous: half of det's gradient missing is caught."""
    def half(x):
        return np.linalg.det(x) + np.linalg.det(mx.nd.BlockGrad(x))
    with pytest.raises(AssertionError, match="order 1"):
        check_grads(half, [f64(well_conditioned((2, 3, 3)))], order=1, rtol=1e-4, atol=1e-6,
                    zero_fraction=0.0)


def test_cholesky_gradient_is_symmetric():
    x = np.array(spd((3, 3)), dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = np.linalg.cholesky(x).sum()
    y.backward()
    g = x.grad.asnumpy()
    onp.testing.assert_allclose(g, g.T, atol=1e-12)


# ---- errors ----------------------------------------------------------------------------------
ERRORS = [
    (lambda: np.linalg.inv(np.ones((2, 3))), ["inv", "square", "(2, 3)"]),
    (lambda: np.linalg.det(np.ones((3,))), ["det", "2 dimensions", "(3,)"]),
    (lambda: np.linalg.inv(np.array([[1.0, 2.0], [2.0, 4.0]])), ["inv", "singular"]),
    (lambda: np.linalg.solve(np.array([[1.0, 2.0], [2.0, 4.0]]), np.ones(2)),
     ["solve", "singular"]),
    (lambda: np.linalg.solve(np.eye(3), np.ones((2, 2))), ["solve", "3 rows", "(2, 2)"]),
    (lambda: np.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])),
     ["cholesky", "positive definite"]),
    (lambda: np.linalg.eigh(np.eye(2), UPLO="X"), ["eigh", "UPLO"]),
    (lambda: np.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]])), ["eigvals", "complex"]),
    (lambda: np.linalg.norm(np.ones((2, 3)), "nuc", axis=1), ["norm", "vectors"]),
    (lambda: np.linalg.norm(np.ones((2, 3)), 3), ["norm", "matrices"]),
    (lambda: np.linalg.norm(np.ones((2, 3)), axis=(1, -1)), ["norm", "duplicate"]),
    (lambda: np.linalg.tensorinv(np.ones((2, 3)), ind=1), ["tensorinv", "not square"]),
    (lambda: np.linalg.tensorsolve(np.ones((2, 3)), np.ones(2)), ["tensorsolve", "square"]),
    (lambda: np.linalg.qr(np.ones((3, 2)), mode="complete"), ["qr", "complete"]),
    (lambda: np.linalg.matrix_power(np.eye(2), 1.5), ["matrix_power", "integer"]),
    (lambda: np.linalg.multi_dot([np.ones((2, 3)), np.ones((2, 3))]), ["multi_dot", "aligned"]),
    (lambda: np.linalg.det(np.ones((2, 2), dtype="float16")), ["det", "float16"]),
    (lambda: np.linalg.matrix_rank(mx.sym.var("a")), ["matrix_rank", "Symbol"]),
]


@pytest.mark.parametrize("thunk, words", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(thunk, words):
    with pytest.raises(MXNetError) as e:
        thunk()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ---- symbols ---------------------------------------------------------------------------------
SL = mx.sym.np.linalg     # graphs: calls on Symbols of unknown shape are deferred


def test_shape_free_functions_build_symbols():
    a = onp.stack([spd((3, 3))] * 2)
    x = mx.sym.var("x")
    outs = mx.sym.Group([SL.det(x), SL.inv(x), SL.cholesky(x),
                         SL.eigh(x)[0], SL.norm(x, 2, axis=(1, 2)),
                         SL.svd(x)[1]])
    got = outs.eval(x=mx.nd.array(a, dtype="float64"))
    close(got[0], onp.linalg.det(a))
    close(got[1], onp.linalg.inv(a))
    close(got[2], onp.linalg.cholesky(a))
    close(got[3], onp.linalg.eigvalsh(a))
    close(got[4], onp.linalg.norm(a, 2, axis=(1, 2)))
    close(got[5], onp.linalg.svd(a, compute_uv=False))


def test_shape_free_compositions_of_untraced_symbols():
    """Symbols of unknown shape (a bare variable) take the shape-free compositions."""
    x, y = mx.sym.var("x"), mx.sym.var("y")
    t = well_conditioned((6, 6)).reshape(2, 3, 3, 2)
    close(SL.tensorinv(x, ind=2).eval(x=f64(t))[0], onp.linalg.tensorinv(t, ind=2))
    a, b = well_conditioned((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    close(SL.solve(x, y).eval(x=f64(a), y=f64(b))[0], onp.linalg.solve(a, b))
    m = RNG.standard_normal((3, 2, 4))
    for ord, axis in (("nuc", (2, 0)), (-2, (0, 2)), (2, (-1, 0)), (1, (0, 2))):
        close(SL.norm(x, ord, axis).eval(x=f64(m))[0], onp.linalg.norm(m, ord, axis))
    tall = RNG.standard_normal((2, 4, 3))
    q, r = SL.qr(x)
    got_q, got_r = mx.sym.Group([q, r]).eval(x=f64(tall))
    close(onp.matmul(got_q.asnumpy(), got_r.asnumpy()), tall)
    close(onp.abs(got_r.asnumpy()), onp.abs(onp.linalg.qr(tall)[1]))


def test_eig_in_a_graph_runs_on_the_host():
    x = mx.sym.var("x")
    w, v = SL.eig(x)
    a = onp.array([[2.0, 1.0], [0.0, 3.0]])
    got_w, got_v = mx.sym.Group([w, v]).eval(x=mx.nd.array(a, dtype="float64"))
    want_w, want_v = onp.linalg.eig(a)
    close(got_w, want_w)
    close(got_v, want_v)
    got = SL.eigvals(x).eval(x=mx.nd.array([[1, 0], [0, 4]], dtype="int32"))[0]
    assert got.dtype == onp.float64 and got.asnumpy().tolist() == [1.0, 4.0]


# ---- devices ---------------------------------------------------------------------------------
def test_linalg_on_the_device(device):
    """The compositions run on the device's kernels (the GPU or its emulator, CPU kernels
    refused) and stay there."""
    a, b = well_conditioned((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    s, m = spd((2, 3, 3)), RNG.standard_normal((2, 3, 4))
    x, y = np.array(a, dtype="float64"), np.array(b, dtype="float64")
    cases = [
        (np.linalg.det(x), onp.linalg.det(a)),
        (np.linalg.inv(x), onp.linalg.inv(a)),
        (np.linalg.solve(x, y), onp.linalg.solve(a, b)),
        (np.linalg.cholesky(np.array(s, dtype="float64")), onp.linalg.cholesky(s)),
        (np.linalg.eigvalsh(np.array(s, dtype="float64")), onp.linalg.eigvalsh(s)),
        (np.linalg.svd(np.array(m, dtype="float64"))[1], onp.linalg.svd(m, compute_uv=False)),
        (np.linalg.norm(np.array(m, dtype="float64"), "nuc", (1, 2)),
         onp.linalg.norm(m, "nuc", (1, 2))),
        (np.linalg.pinv(np.array(m, dtype="float64")), onp.linalg.pinv(m)),
        (np.linalg.eigvals(np.array(s, dtype="float64")), onp.linalg.eigvals(s)),
    ]
    for got, want in cases:
        assert got.ctx == device
        close(got, want, scale=1e3)
    x.attach_grad()
    with autograd.record():
        z = np.linalg.det(x).sum()
    z.backward()
    close(x.grad, onp.linalg.det(a)[:, None, None] * onp.swapaxes(onp.linalg.inv(a), -1, -2),
          scale=1e3)
