"""The densities of mxlite/ops/pdf.py (random_pdf_*) against MXNet 1.9.1
(tests/fixtures/pdf_mxnet.npz, made by make_pdf_fixture.py) and SciPy in float64: values,
log-values, gradients, shapes, the support (where mxlite differs from MXNet), the tiled
compute, in-place output, the namespaces and the errors."""
import importlib.util
import os

import numpy as np
import pytest
from scipy import special, stats

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops import pdf as pdf_ops

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_pdf_fixture", os.path.join(HERE, "..", "fixtures", "make_pdf_fixture.py"))
FIX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIX)
DATA = np.load(os.path.join(HERE, "..", "fixtures", "pdf_mxnet.npz"))

NAMES = ["uniform", "normal", "gamma", "exponential", "poisson", "negative_binomial",
         "generalized_negative_binomial", "dirichlet"]
# MXNet 1.9.1 computes in the input dtype, and its float64 is not exact either (pi and
# Cephes' digamma to about 1e-7; SciPy is the float64 oracle, to 1e-12, below)
RTOL = {"float16": 3e-3, "float32": 2e-5, "float64": 1e-6}


def _arr(values, dtype="float64", ctx=None):
    return mx.nd.array(np.asarray(values, dtype=dtype), dtype=dtype, ctx=ctx)


@pytest.mark.parametrize("case", sorted(FIX.CASES))
def test_matches_mxnet(case, device):
    name, inputs, kwargs, diff = FIX.CASES[case]
    xs = [_arr(v, dt, device) for v, dt in inputs]
    for i in diff:
        xs[i].attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(*xs, **kwargs)
    want = DATA[f"{case}/out"]
    assert y.dtype == want.dtype and y.shape == want.shape, (case, y.dtype, y.shape)
    rtol = RTOL[str(want.dtype)]
    np.testing.assert_allclose(y.asnumpy(), want, rtol=rtol, atol=rtol * 1e-2,
                               err_msg=f"{case} out")
    if diff:
        y.backward(_arr(FIX.head(y.shape, y.dtype), np.dtype(y.dtype).name, device))
        for i in diff:
            np.testing.assert_allclose(xs[i].grad.asnumpy(), DATA[f"{case}/grad{i}"],
                                       rtol=rtol * 10, atol=rtol * 1e-1,
                                       err_msg=f"{case} grad{i}")


# ---- SciPy in float64 ---------------------------------------------------------------------------
def _scipy_logpdf(name, x, params):
    """log-density of SciPy's distribution, params (P,) broadcast over x (P, S)."""
    p = [q[:, None] for q in params]
    if name == "uniform":
        return stats.uniform.logpdf(x, p[0], p[1] - p[0])
    if name == "normal":
        return stats.norm.logpdf(x, p[0], p[1])
    if name == "gamma":
        return stats.gamma.logpdf(x, p[0], scale=1.0 / p[1])       # beta is the rate
    if name == "exponential":
        return stats.expon.logpdf(x, scale=1.0 / p[0])
    if name == "poisson":
        return stats.poisson.logpmf(x, p[0])
    if name == "negative_binomial":
        return stats.nbinom.logpmf(x, p[0], p[1])
    if name == "generalized_negative_binomial":
        mu, alpha = p
        return stats.nbinom.logpmf(x, 1.0 / alpha, 1.0 / (1.0 + mu * alpha))
    raise AssertionError(name)


def _random_case(name, rng):
    """(sample (4, 6), params (4,)) inside the support."""
    P, S = 4, 6
    if name == "uniform":
        low = rng.uniform(-2, 0, P)
        high = low + rng.uniform(0.5, 3, P)
        return low[:, None] + rng.uniform(0, 1, (P, S)) * (high - low)[:, None], [low, high]
    if name == "normal":
        return rng.normal(0, 2, (P, S)), [rng.normal(0, 1, P), rng.uniform(0.3, 2, P)]
    if name == "gamma":
        return rng.uniform(0.01, 5, (P, S)), [rng.uniform(0.2, 5, P), rng.uniform(0.2, 3, P)]
    if name == "exponential":
        return rng.uniform(0, 5, (P, S)), [rng.uniform(0.2, 3, P)]
    counts = rng.randint(0, 12, (P, S)).astype(np.float64)
    if name == "poisson":
        return counts, [rng.uniform(0.2, 8, P)]
    if name == "negative_binomial":
        return counts, [rng.uniform(0.3, 6, P), rng.uniform(0.05, 0.95, P)]
    return counts, [rng.uniform(0.3, 6, P), rng.uniform(0.05, 3, P)]


@pytest.mark.parametrize("name", NAMES[:-1])
def test_matches_scipy(name):
    rng = np.random.RandomState(NAMES.index(name))
    x, params = _random_case(name, rng)
    want = _scipy_logpdf(name, x, params)
    fn = getattr(mx.nd, f"random_pdf_{name}")
    args = [_arr(x)] + [_arr(p) for p in params]
    np.testing.assert_allclose(fn(*args, is_log=True).asnumpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fn(*args).asnumpy(), np.exp(want), rtol=1e-12, atol=1e-300)


def test_dirichlet_matches_scipy():
    rng = np.random.RandomState(7)
    alpha = rng.uniform(0.3, 4, (3, 4))
    x = rng.dirichlet(np.ones(4), (3, 5))                       # (P, S, K) on the simplex
    want = np.array([[stats.dirichlet.logpdf(x[i, j], alpha[i]) for j in range(5)]
                     for i in range(3)])
    got = mx.nd.random_pdf_dirichlet(_arr(x), _arr(alpha), is_log=True).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_generalized_negative_binomial_alpha_zero_is_poisson():
    x = _arr([[0, 1, 2, 7], [3, 0, 1, 4]])
    mu, alpha = np.array([1.5, 4.0]), np.array([0.0, 0.0])
    got = mx.nd.random_pdf_generalized_negative_binomial(x, _arr(mu), _arr(alpha)).asnumpy()
    np.testing.assert_allclose(got, stats.poisson.pmf(x.asnumpy(), mu[:, None]), rtol=1e-12)
    mixed = mx.nd.random_pdf_generalized_negative_binomial(x, _arr(mu), _arr([0.0, 0.5]))
    np.testing.assert_allclose(mixed.asnumpy()[1],
                               stats.nbinom.pmf(x.asnumpy()[1], 2.0, 1.0 / 3.0), rtol=1e-12)


# ---- gradients against the closed forms of d log p ---------------------------------------------
def _grads(name, x, params, is_log):
    args = [_arr(x)] + [_arr(p) for p in params]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, f"random_pdf_{name}")(*args, is_log=is_log)
    y.backward()
    return y.asnumpy(), [a.grad.asnumpy() for a in args]


def test_gamma_gradient_closed_form():
    x = np.array([[0.5, 1.0, 2.5], [0.2, 3.0, 1.5]])
    a, b = np.array([2.5, 0.7]), np.array([1.5, 0.4])
    _, (gx, ga, gb) = _grads("gamma", x, [a, b], True)
    np.testing.assert_allclose(gx, (a[:, None] - 1) / x - b[:, None], rtol=1e-12)
    np.testing.assert_allclose(
        ga, (np.log(b)[:, None] + np.log(x) - special.digamma(a)[:, None]).sum(1), rtol=1e-12)
    np.testing.assert_allclose(gb, (a[:, None] / b[:, None] - x).sum(1), rtol=1e-12)


def test_generalized_negative_binomial_gradient_closed_form():
    """d log p / d(mu, alpha) through k = 1 / alpha, p = 1 / (1 + mu alpha) by the chain rule
    (SciPy's digamma), against the simplified forms of the op."""
    x = np.array([[0.0, 2.0, 5.0]])
    mu, al = np.array([2.5]), np.array([0.8])
    k, p = 1 / al, 1 / (1 + mu * al)
    dk = special.digamma(x + k) - special.digamma(k) + np.log(p)
    dp = k / p - x / (1 - p)
    dmu = dp * -al / (1 + mu * al) ** 2
    dal = dk * -1 / al ** 2 + dp * -mu / (1 + mu * al) ** 2
    _, (gx, gmu, gal) = _grads("generalized_negative_binomial", x, [mu, al], True)
    np.testing.assert_array_equal(gx, 0)
    np.testing.assert_allclose(gmu, dmu.sum(1), rtol=1e-12)
    np.testing.assert_allclose(gal, dal.sum(1), rtol=1e-12)


def test_dirichlet_gradient_closed_form():
    x = np.array([[[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]])
    a = np.array([[2.0, 0.5, 3.0]])
    y, (gx, ga) = _grads("dirichlet", x, [a], False)
    np.testing.assert_allclose(gx, y[..., None] * (a[:, None] - 1) / x, rtol=1e-12)
    dlog = np.log(x) + special.digamma(a.sum()) - special.digamma(a)[:, None]
    np.testing.assert_allclose(ga, (y[..., None] * dlog).sum(1), rtol=1e-12)


# ---- the support: where mxlite differs from MXNet ---------------------------------------------
OUTSIDE = {
    "uniform": ([[-0.5, 2.5, 1.0]], [[0.0], [2.0]], [False, False, True]),
    "gamma": ([[-1.0, -0.25, 1.0]], [[2.0], [1.0]], [False, False, True]),
    "exponential": ([[-1.0, -0.25, 1.0]], [[2.0]], [False, False, True]),
    "poisson": ([[-1.0, -0.5, 2.0]], [[2.0]], [False, False, True]),
    "negative_binomial": ([[-1.0, -0.5, 2.0]], [[2.0], [0.5]], [False, False, True]),
    "generalized_negative_binomial": ([[-1.0, -0.5, 2.0]], [[2.0], [0.5]],
                                      [False, False, True]),
    "dirichlet": ([[0.5, -0.5], [0.25, 0.75]], [[2.0, 3.0]], [False, True]),
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_zero_density_and_gradients_outside_the_support(name):
    """MXNet 1.9.1 returned 1 / (high - low), lam exp(-lam x), NaN or positive values there."""
    x, params, inside = OUTSIDE[name]
    out = (slice(None), ~np.array(inside)) if name != "dirichlet" else ~np.array(inside)
    for is_log in (False, True):
        y, grads = _grads(name, np.array(x), [np.array(p) for p in params], is_log)
        assert np.all(y[out] == (-np.inf if is_log else 0.0)), (name, is_log, y)
        for g in grads:
            assert np.all(np.isfinite(g)), (name, is_log, grads)
        assert np.all(grads[0][out] == 0), (name, is_log, grads[0])


@pytest.mark.parametrize("name", ["gamma", "dirichlet", "negative_binomial"])
def test_second_order_stays_finite_outside_the_support(name):
    """The partials run at a stand-in sample inside the support: no NaN of log(-x) or of a
    digamma pole reaches a gradient of the gradient."""
    x, params, _ = OUTSIDE[name]
    args = [_arr(x)] + [_arr(p) for p in params]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, f"random_pdf_{name}")(*args, is_log=True)
        g = mx.autograd.grad(y, args[1:], create_graph=True)
        total = sum(gi.sum() for gi in g)
    total.backward()
    for a in args:
        assert np.all(np.isfinite(a.grad.asnumpy())), (name, [a.grad for a in args])


def test_boundary_limits():
    """0 log 0 = 0 at the edge of the support (MXNet 1.9.1: NaN)."""
    g = mx.nd.random_pdf_gamma(_arr([[0.0, 1.0]]), _arr([1.0]), _arr([2.5])).asnumpy()
    np.testing.assert_allclose(g, stats.gamma.pdf([[0.0, 1.0]], 1.0, scale=0.4), rtol=1e-12)
    nb = mx.nd.random_pdf_negative_binomial(_arr([[0.0, 1.0]]), _arr([2.0]), _arr([1.0]))
    np.testing.assert_array_equal(nb.asnumpy(), [[1.0, 0.0]])
    d = mx.nd.random_pdf_dirichlet(_arr([[0.0, 1.0]]), _arr([1.0, 2.0])).asnumpy()
    np.testing.assert_allclose(d, [2.0], rtol=1e-12)          # Beta(1, 2) at 0: 2 (1 - 0)
    assert np.isnan(mx.nd.random_pdf_normal(_arr([[np.nan]]), _arr([0.0]), _arr([1.0]))
                    .asnumpy()).all()


@pytest.mark.parametrize("name, params", [("normal", [[0.0], [1.0]]), ("gamma", [[3.0], [2.0]]),
                                          ("exponential", [[2.0]]), ("poisson", [[3.0]]),
                                          ("negative_binomial", [[2.0], [0.5]]),
                                          ("generalized_negative_binomial", [[3.0], [0.5]])])
def test_infinite_samples_have_density_zero(name, params):
    y = getattr(mx.nd, f"random_pdf_{name}")(_arr([[np.inf]]), *map(_arr, params)).asnumpy()
    np.testing.assert_array_equal(y, [[0.0]])


# ---- shapes, tiles, in place, dtypes -----------------------------------------------------------
def test_shapes_follow_mxnet():
    x = mx.nd.ones((2, 3, 4))
    assert mx.nd.random_pdf_normal(x, mx.nd.zeros((2,)), mx.nd.ones((2,))).shape == (2, 3, 4)
    assert mx.nd.random_pdf_normal(x, mx.nd.zeros((2, 3)), mx.nd.ones((2, 3))).shape \
        == (2, 3, 4)
    s = mx.nd.full((2, 3, 4), 0.25)
    assert mx.nd.random_pdf_dirichlet(s, mx.nd.ones((2, 4))).shape == (2, 3)
    assert mx.nd.random_pdf_dirichlet(s, mx.nd.ones((4,))).shape == (2, 3)
    assert mx.nd.random_pdf_dirichlet(mx.nd.full((4,), 0.25), mx.nd.ones((4,))).shape == (1,)
    sym = mx.sym.random_pdf_dirichlet(mx.sym.var("s"), mx.sym.var("a"))
    assert sym.infer_shape(s=(2, 3, 4), a=(2, 4))[1] == [(2, 3)]
    assert mx.sym.random.pdf_normal(mx.sym.var("x"), mx.sym.var("m"), mx.sym.var("s")) \
        .list_arguments() == ["x", "m", "s"]


def test_empty_sample():
    y = mx.nd.random_pdf_gamma(mx.nd.ones((2, 0)), mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert y.shape == (2, 0)
    assert mx.nd.random_pdf_normal(mx.nd.ones((0, 3)), mx.nd.ones((0,)),
                                   mx.nd.ones((0,))).shape == (0, 3)


@pytest.mark.parametrize("cols", [1, 5, 40])
def test_tiles_cover_every_element(monkeypatch, cols):
    """Tiles of 16 elements: several rows per tile, one row per tile and runs of a row."""
    monkeypatch.setattr(pdf_ops, "_BLOCK", 16)
    rng = np.random.RandomState(cols)
    x, mu, sigma = rng.normal(size=(7, cols)), rng.normal(size=7), rng.uniform(0.5, 2, 7)
    got = mx.nd.random_pdf_normal(_arr(x), _arr(mu), _arr(sigma), is_log=True).asnumpy()
    np.testing.assert_allclose(got, stats.norm.logpdf(x, mu[:, None], sigma[:, None]),
                               rtol=1e-12)
    a = rng.uniform(0.5, 3, (3, 4))
    s = rng.dirichlet(np.ones(4), (3, cols))
    got = mx.nd.random_pdf_dirichlet(_arr(s), _arr(a), is_log=True).asnumpy()
    want = [[stats.dirichlet.logpdf(s[i, j], a[i]) for j in range(cols)] for i in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-11)


def test_out_may_be_the_sample():
    x = _arr([[0.5, 1.0], [2.0, 3.0]])
    want = stats.expon.pdf(x.asnumpy(), scale=1 / np.array([[2.0], [0.5]]))
    y = mx.nd.random_pdf_exponential(x, _arr([2.0, 0.5]), out=x)
    assert y is x
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-12)


def test_float16_computes_in_float64_then_rounds():
    x = np.array([[0.5, 1.25, 3.0]], np.float16)
    y = mx.nd.random_pdf_gamma(_arr(x, "float16"), _arr([2.5], "float16"),
                               _arr([1.5], "float16"))
    assert y.dtype == np.float16
    want = stats.gamma.pdf(x.astype(np.float64), 2.5, scale=1 / 1.5).astype(np.float16)
    np.testing.assert_array_equal(y.asnumpy(), want)


# ---- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_names(name):
    fn = getattr(mx.nd, f"random_pdf_{name}")
    assert getattr(mx.nd.random, f"pdf_{name}").op is fn.op
    assert getattr(mx.nd._internal, f"_random_pdf_{name}").op is fn.op
    assert hasattr(mx.sym, f"random_pdf_{name}") and hasattr(mx.sym.random, f"pdf_{name}")
    assert fn.op.name == f"_random_pdf_{name}"
    assert [p.name for p in fn.op.params] == ["is_log"] and fn.op.params[0].default is False


# ---- errors ------------------------------------------------------------------------------------
def test_dtype_errors():
    with pytest.raises(MXNetError, match=r"_random_pdf_normal.*float dtype.*sample float32.*"
                                         r"mu float64"):
        mx.nd.random_pdf_normal(mx.nd.ones((2,)), _arr([0.0, 0.0]), mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"_random_pdf_poisson.*float dtype.*int32"):
        mx.nd.random_pdf_poisson(mx.nd.ones((2,), dtype="int32"),
                                 mx.nd.ones((2,), dtype="int32"))


def test_shape_errors():
    with pytest.raises(MXNetError, match=r"_random_pdf_normal.*one shape.*mu \(3,\), "
                                         r"sigma \(2,\)"):
        mx.nd.random_pdf_normal(mx.nd.ones((3, 2)), mx.nd.ones((3,)), mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"_random_pdf_gamma.*leading.*sample \(2,\), "
                                         r"alpha \(3,\)"):
        mx.nd.random_pdf_gamma(mx.nd.ones((2,)), mx.nd.ones((3,)), mx.nd.ones((3,)))
    with pytest.raises(MXNetError, match=r"_random_pdf_exponential.*leading"):
        mx.nd.random_pdf_exponential(mx.nd.ones((2,)), mx.nd.ones((2, 1)))
    with pytest.raises(MXNetError, match=r"_random_pdf_exponential.*at least 1 dimension"):
        mx.nd.random_pdf_exponential(mx.nd.ones((2,)), mx.nd.ones(()))
    with pytest.raises(MXNetError, match=r"_random_pdf_dirichlet.*sample must have shape.*"
                                         r"sample \(1, 3\), alpha \(2,\)"):
        mx.nd.random_pdf_dirichlet(mx.nd.ones((1, 3)), mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"_random_pdf_dirichlet.*sample must have shape"):
        mx.nd.random_pdf_dirichlet(mx.nd.ones((2, 2)), mx.nd.ones((1, 2)))
    with pytest.raises(MXNetError, match=r"_random_pdf_dirichlet.*at least 1"):
        mx.nd.random_pdf_dirichlet(mx.nd.ones((2, 0)), mx.nd.ones((0,)))
    with pytest.raises(MXNetError, match=r"_random_pdf_normal.*shape"):
        mx.sym.random_pdf_normal(mx.sym.var("x"), mx.sym.var("m"), mx.sym.var("s")) \
            .infer_shape(x=(2, 3), m=(3,), s=(3,))


BAD = [
    ("uniform", [[1.0], [2.0]], [[0.0, 3.0], [1.0, 3.0]], r"high must be greater than low; "
     r"element 1 of high is 3.0"),
    ("uniform", [[1.0], [2.0]], [[0.0, -np.inf], [1.0, 3.0]], r"low must be finite; element 1"),
    ("normal", [[1.0], [2.0]], [[0.0, 0.0], [1.0, 0.0]], r"sigma must be positive and finite; "
     r"element 1 of sigma is 0.0"),
    ("gamma", [[1.0]], [[-1.0], [1.0]], r"alpha must be positive.*element 0 of alpha is -1.0"),
    ("exponential", [[1.0]], [[np.nan]], r"lam must be positive.*nan"),
    ("poisson", [[1.0]], [[0.0]], r"lam must be positive"),
    ("negative_binomial", [[1.0]], [[2.0], [1.5]], r"p must be in \(0, 1\]; element 0 of p "
     r"is 1.5"),
    ("generalized_negative_binomial", [[1.0]], [[2.0], [-0.5]], r"alpha must be non-negative"),
    ("dirichlet", [0.5, 0.5], [[1.0, 0.0]], r"alpha must be positive.*element 1 of alpha"),
]


@pytest.mark.parametrize("name, x, params, msg", BAD)
def test_parameters_out_of_range(name, x, params, msg):
    """MXNet 1.9.1 computed NaN or a wrong value; mxlite names the first bad element."""
    fn = getattr(mx.nd, f"random_pdf_{name}")
    args = [_arr(x)] + [_arr(p) for p in params]
    with pytest.raises(MXNetError, match=rf"_random_pdf_{name}: {msg}"):
        fn(*args)
