"""mx.np.random and mx.npx.random: shapes, dtypes and devices; seeding; goodness of fit
against SciPy's distributions (fixed seeds, so each test is deterministic; the threshold
P_MIN is what a correct sampler passes for almost every seed); reparameterisation gradients
against finite differences of the seeded sampler; bad arguments."""
import itertools
import math
import warnings

import numpy as onp
import pytest
from scipy import stats

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError
from mxlite.numpy import _dtypes
from mxlite.numpy_extension import random as npx_random

np = mx.np
R = mx.np.random
P_MIN = 1e-4
N = 20000

# name -> (positional parameters, SciPy distribution of those parameters)
CONTINUOUS = {
    "uniform": ((-1.0, 3.0), stats.uniform(-1.0, 4.0)),
    "normal": ((1.0, 2.0), stats.norm(1.0, 2.0)),
    "lognormal": ((0.5, 0.75), stats.lognorm(0.75, scale=math.exp(0.5))),
    "exponential": ((2.0,), stats.expon(scale=2.0)),
    "gamma": ((3.0, 2.0), stats.gamma(3.0, scale=2.0)),
    "beta": ((2.0, 0.5), stats.beta(2.0, 0.5)),
    "chisquare": ((3.0,), stats.chi2(3.0)),
    "logistic": ((1.0, 0.5), stats.logistic(1.0, 0.5)),
    "gumbel": ((-1.0, 2.0), stats.gumbel_r(-1.0, 2.0)),
    "laplace": ((0.5, 1.5), stats.laplace(0.5, 1.5)),
    "rayleigh": ((2.0,), stats.rayleigh(scale=2.0)),
    "weibull": ((1.5,), stats.weibull_min(1.5)),
    "pareto": ((3.0,), stats.lomax(3.0)),
    "power": ((2.5,), stats.powerlaw(2.5)),
}
WITH_DTYPE = {"uniform", "normal", "lognormal", "gamma", "beta", "chisquare", "laplace"}


@pytest.fixture(autouse=True)
def _on_device(device):
    """Every test runs on every device (cpu; gpu where there is one)."""
    yield device


@pytest.fixture
def float64_default():
    prev = _dtypes.set_default_float64(True)
    yield
    _dtypes.set_default_float64(prev)


def _draw(name, *args, **kw):
    return getattr(R, name)(*args, **kw)


# ---- shapes, dtypes, devices -----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_shapes_and_default_dtype(name):
    args, _ = CONTINUOUS[name]
    for size, shape in [(None, ()), ((), ()), (3, (3,)), ((2, 3), (2, 3)), ((4, 0, 5), (4, 0, 5))]:
        x = _draw(name, *args, size=size)
        assert isinstance(x, mx.np.ndarray)
        assert x.shape == shape and x.dtype == onp.float32
    # array parameters: the broadcast shape, or the size they broadcast to
    arrays = [np.full((2, 1), a) if i == 0 else np.full((3,), a) for i, a in enumerate(args)]
    want = (2, 1) if len(args) == 1 else (2, 3)
    assert _draw(name, *arrays).shape == want
    assert _draw(name, *arrays, size=(4,) + want).shape == (4,) + want


@pytest.mark.parametrize("name", sorted(WITH_DTYPE))
def test_dtypes(name, float64_default):
    args, _ = CONTINUOUS[name]
    assert _draw(name, *args, size=2).dtype == onp.float64      # the default float
    for dt in ("float16", "float32", "float64"):
        assert _draw(name, *args, size=(2, 2), dtype=dt).dtype == onp.dtype(dt)
        # whatever the parameters' dtype
        x = _draw(name, *[np.array([a], dtype="float16") for a in args], dtype=dt)
        assert x.dtype == onp.dtype(dt) and x.shape == (1,)


def test_float16_uniform_stays_below_high():
    x = R.uniform(0.0, 1.0, size=(200000,), dtype="float16").asnumpy()
    assert x.max() < 1.0 and x.min() >= 0.0
    assert R.rand(100000, dtype="float16").asnumpy().max() < 1.0


def test_rand_randn_and_out():
    assert R.rand(2, 3).shape == (2, 3) and R.rand().shape == ()
    assert R.randn(4, dtype="float64").dtype == onp.float64
    assert R.randn(0, 3).shape == (0, 3)
    out = np.zeros((3, 2), dtype="float64")
    y = R.normal(5.0, 0.0, out=out)             # size and dtype from out
    assert y is out and (out.asnumpy() == 5.0).all()
    R.exponential(1.0, size=(3, 2), out=out)
    assert (out.asnumpy() > 0).all()


def test_device(device):
    for name in ("normal", "gamma", "pareto"):
        args, _ = CONTINUOUS[name]
        assert _draw(name, *args, size=(3,)).ctx == device
        assert _draw(name, *[np.array([a, a]) for a in args]).ctx == device
    assert R.randint(3, size=2).ctx == device
    assert R.choice(np.arange(5), 2).ctx == device
    assert npx_random.bernoulli(0.5, size=2).ctx == device
    # the device's stream replays after a seed
    mx.random.seed(11)
    here = R.logistic(np.array([0.0, 1.0]), size=(5, 2)).asnumpy()
    mx.random.seed(11)
    assert (R.logistic(np.array([0.0, 1.0]), size=(5, 2)).asnumpy() == here).all()


# ---- seeding ---------------------------------------------------------------------------------
def test_seed_replays_every_sampler():
    def run():
        return [R.normal(size=3), R.gamma(np.array([0.5, 2.0])), R.logistic(size=2),
                R.randint(10, size=4), R.choice(6, 3, replace=False),
                R.multinomial(5, [0.5, 0.5]), npx_random.normal_n(0.0, 1.0, batch_shape=2),
                R.multivariate_normal(np.zeros(2), np.eye(2))]
    R.seed(123)
    a = [x.asnumpy() for x in run()]
    npx_random.seed(123)
    b = [x.asnumpy() for x in run()]
    R.seed(124)
    c = [x.asnumpy() for x in run()]
    assert all((x == y).all() for x, y in zip(a, b))
    assert not (a[0] == c[0]).all()


def test_number_parameters_draw_the_nd_stream():
    for fn, nd_fn, args in [("normal", "normal", (1.0, 2.0)), ("uniform", "uniform", (0.0, 3.0)),
                            ("gamma", "gamma", (2.0, 1.5))]:
        mx.random.seed(9)
        x = getattr(R, fn)(*args, size=(4,))
        mx.random.seed(9)
        y = getattr(mx.nd.random, nd_fn)(*args, shape=(4,))
        assert (x.asnumpy() == y.asnumpy()).all()


# ---- goodness of fit -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_fits_scipy(name):
    args, dist = CONTINUOUS[name]
    R.seed(2024)
    x = _draw(name, *args, size=N).asnumpy().astype(onp.float64)
    assert stats.kstest(x, dist.cdf).pvalue > P_MIN
    # array parameters: each column follows its own distribution
    cols = _draw(name, *[np.array([a, a]) for a in args], size=(N // 2, 2)).asnumpy()
    for j in range(2):
        assert stats.kstest(cols[:, j].astype(onp.float64), dist.cdf).pvalue > P_MIN


def test_per_element_parameters_fit():
    R.seed(5)
    loc, scale = onp.array([-3.0, 0.0, 4.0]), onp.array([0.5, 1.0, 3.0])
    x = R.normal(np.array(loc), np.array(scale), size=(N // 4, 3)).asnumpy()
    shape = onp.array([0.3, 1.0, 7.0])
    g = R.gamma(np.array(shape), 2.0, size=(N // 4, 3)).asnumpy()
    for j in range(3):
        assert stats.kstest(x[:, j], stats.norm(loc[j], scale[j]).cdf).pvalue > P_MIN
        assert stats.kstest(g[:, j], stats.gamma(shape[j], scale=2.0).cdf).pvalue > P_MIN


def test_npx_samplers_fit():
    R.seed(8)
    x = npx_random.normal_n(np.array([1.0, -2.0]), 3.0, batch_shape=(N // 2,)).asnumpy()
    assert x.shape == (N // 2, 2)
    for j, m in enumerate((1.0, -2.0)):
        assert stats.kstest(x[:, j], stats.norm(m, 3.0).cdf).pvalue > P_MIN
    u = npx_random.uniform_n(np.array([[0.0], [1.0]]), 2.0, batch_shape=N // 2).asnumpy()
    assert u.shape == (N // 2, 2, 1)
    assert stats.kstest(u[:, 1, 0], stats.uniform(1.0, 1.0).cdf).pvalue > P_MIN
    for prob, logit in [(0.3, None), (None, -1.2), (np.array([0.8]), None)]:
        b = npx_random.bernoulli(prob, logit, size=(N,), dtype="int32").asnumpy()
        p = float(prob if prob is not None and not isinstance(prob, mx.np.ndarray) else
                  0.8 if prob is not None else 1 / (1 + math.exp(1.2)))
        assert set(onp.unique(b)) <= {0, 1}
        assert stats.binomtest(int(b.sum()), N, p).pvalue > P_MIN


def test_multivariate_normal_fits():
    R.seed(3)
    mean = onp.array([1.0, -1.0, 2.0])
    a = onp.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-1.0, 0.3, 0.7]])
    cov = a @ a.T
    x = R.multivariate_normal(np.array(mean, dtype="float64"), np.array(cov, dtype="float64"),
                              size=N).asnumpy()
    assert x.shape == (N, 3) and x.dtype == onp.float64
    for v in (onp.array([1.0, 0.0, 0.0]), onp.array([0.3, -0.8, 0.5])):
        proj = stats.norm(v @ mean, math.sqrt(v @ cov @ v))
        assert stats.kstest(x @ v, proj.cdf).pvalue > P_MIN
    # a singular (positive semi-definite) cov: the eigen factor
    single = R.multivariate_normal(np.zeros(2), np.array([[1.0, 1.0], [1.0, 1.0]]), size=N)
    single = single.asnumpy()
    assert onp.allclose(single[:, 0], single[:, 1], atol=1e-5)
    assert stats.kstest(single[:, 0].astype(onp.float64), stats.norm().cdf).pvalue > P_MIN
    # batches broadcast
    assert R.multivariate_normal(np.zeros((3, 2)), np.ones((4, 1, 2, 2)) + np.eye(2),
                                 size=(5,)).shape == (5, 4, 3, 2)


def _chisq(counts, probs):
    counts = onp.asarray(counts, onp.float64)
    return stats.chisquare(counts, probs * counts.sum()).pvalue


def test_randint_fits_and_dtypes():
    R.seed(21)
    x = R.randint(-3, 4, size=N).asnumpy()
    assert x.dtype == onp.int64 and x.min() >= -3 and x.max() <= 3
    assert _chisq(onp.bincount(x + 3, minlength=7), onp.full(7, 1 / 7)) > P_MIN
    for dt in ("int8", "uint8", "int32", "bool"):
        y = R.randint(2, size=(10,), dtype=dt)
        assert y.dtype == onp.dtype(dt)
    assert R.randint(5).shape == ()
    big = R.randint(-2 ** 63, 2 ** 63 - 1, size=1000).asnumpy()     # nearly the full range
    assert (big < -2 ** 61).any() and (big > 2 ** 61).any()


def test_choice_fits():
    R.seed(31)
    p = onp.array([0.1, 0.2, 0.3, 0.4])
    x = R.choice(4, size=N, p=p).asnumpy()
    assert _chisq(onp.bincount(x, minlength=4), p) > P_MIN
    u = R.choice(np.array([10.0, 20.0, 30.0]), size=(N // 2, 2)).asnumpy()
    assert u.shape == (N // 2, 2)
    assert _chisq([(u == v).sum() for v in (10, 20, 30)], onp.full(3, 1 / 3)) > P_MIN
    # without replacement: ordered pairs, P(i, j) = p_i p_j / (1 - p_i)
    pairs = onp.array([R.choice(4, 2, replace=False, p=p).asnumpy() for _ in range(3000)])
    assert (pairs[:, 0] != pairs[:, 1]).all()
    order = list(itertools.permutations(range(4), 2))
    want = onp.array([p[i] * p[j] / (1 - p[i]) for i, j in order])
    got = [((pairs[:, 0] == i) & (pairs[:, 1] == j)).sum() for i, j in order]
    assert _chisq(got, want) > P_MIN
    assert sorted(R.choice(7, 7, replace=False).asnumpy().tolist()) == list(range(7))
    # zero-probability entries are never drawn without replacement
    z = R.choice(5, 2, replace=False, p=[0.5, 0.0, 0.5, 0.0, 0.0]).asnumpy()
    assert sorted(z.tolist()) == [0, 2]


def test_multinomial_fits():
    R.seed(41)
    c = R.multinomial(30, [0.2, 0.3, 0.5], size=(N // 10,)).asnumpy()
    assert c.shape == (N // 10, 3) and c.dtype == onp.int64 and (c.sum(axis=1) == 30).all()
    assert _chisq(c.sum(axis=0), onp.array([0.2, 0.3, 0.5])) > P_MIN
    # each count is Binomial(n, p_i) (the tail from 12 on in one bin)
    binom = stats.binom(30, 0.2)
    got = list(onp.bincount(onp.minimum(c[:, 0], 12), minlength=13))
    assert _chisq(got, onp.append(binom.pmf(onp.arange(12)), binom.sf(11))) > P_MIN
    # the last probability is what the others leave (NumPy)
    d = R.multinomial(100, [0.5, 0.5, 0.7], size=200).asnumpy()
    assert (d[:, 2] == 0).all()
    assert R.multinomial(0, [0.5, 0.5]).asnumpy().tolist() == [0, 0]


def test_shuffle_is_uniform_and_in_place():
    R.seed(51)
    x = np.arange(12.0).reshape(4, 3)
    R.shuffle(x)
    rows = x.asnumpy()
    assert sorted(rows[:, 0].tolist()) == [0, 3, 6, 9] and ((rows - rows[:, :1]) ==
                                                            [0, 1, 2]).all()
    perms = list(itertools.permutations(range(3)))
    counts = onp.zeros(6)
    for _ in range(1200):
        y = np.arange(3)
        R.shuffle(y)
        counts[perms.index(tuple(y.asnumpy().tolist()))] += 1
    assert _chisq(counts, onp.full(6, 1 / 6)) > P_MIN


# ---- gradients -------------------------------------------------------------------------------
# name -> (parameters, which are differentiable)
GRADS = {
    "normal": ((0.3, 1.5), (0, 1)), "uniform": ((-1.0, 2.0), (0, 1)),
    "lognormal": ((0.2, 0.6), (0, 1)), "exponential": ((1.7,), (0,)),
    "gamma": ((2.5, 1.3), (1,)), "logistic": ((0.4, 0.8), (0, 1)),
    "gumbel": ((0.4, 0.8), (0, 1)), "laplace": ((0.4, 0.8), (0, 1)),
    "rayleigh": ((1.2,), (0,)), "weibull": ((1.7,), (0,)), "pareto": ((2.5,), (0,)),
    "power": ((2.5,), (0,)),
}


def _seeded(name, params, weights):
    """sum(weights * samples): a smooth function of the parameters for a fixed seed."""
    R.seed(77)
    return (getattr(R, name)(*params, size=weights.shape, out=np.zeros(weights.shape,
                                                                          dtype="float64"))
            * weights).sum()


@pytest.mark.parametrize("name", sorted(GRADS))
def test_reparameterisation_gradient(name):
    base, which = GRADS[name]
    weights = np.array(onp.linspace(-1.0, 1.5, 12).reshape(4, 3), dtype="float64")
    params = [np.array(onp.full(3, v) * (1 + 0.1 * onp.arange(3)), dtype="float64")
              for v in base]
    for p in params:
        p.attach_grad()
    with autograd.record():
        y = _seeded(name, params, weights)
    y.backward()
    eps = 1e-6
    for i in which:
        for j in range(3):
            shifted = []
            for sign in (1, -1):
                q = [p.asnumpy().copy() for p in params]
                q[i][j] += sign * eps
                shifted.append(float(_seeded(name, [np.array(v, dtype="float64") for v in q],
                                             weights)))
            fd = (shifted[0] - shifted[1]) / (2 * eps)
            assert abs(float(params[i].grad.asnumpy()[j]) - fd) <= 1e-5 * (1 + abs(fd)), \
                (name, i, j)


def test_gradient_in_float32_parameters_and_broadcast():
    loc, scale = np.zeros((3, 1)), np.ones((1, 2))
    loc.attach_grad()
    scale.attach_grad()
    R.seed(4)
    with autograd.record():
        y = R.normal(loc, scale, size=(5, 3, 2))
    y.backward()
    assert loc.grad.shape == (3, 1) and onp.allclose(loc.grad.asnumpy(), 10.0)
    R.seed(4)
    z = R.normal(size=(5, 3, 2)).asnumpy()
    assert onp.allclose(scale.grad.asnumpy(), z.sum(axis=(0, 1))[None, :], rtol=1e-5)


def test_multivariate_normal_gradient():
    mean = np.array([0.5, -1.0], dtype="float64")
    a = onp.array([[2.0, 0.3], [0.3, 1.0]])
    w = np.array(onp.array([[1.0, -2.0], [0.5, 0.25], [-1.0, 1.0]]), dtype="float64")

    def f(m, c):
        R.seed(19)
        return (R.multivariate_normal(m, c, size=3) * w).sum()

    cov = np.array(a, dtype="float64")
    mean.attach_grad()
    cov.attach_grad()
    with autograd.record():
        y = f(mean, cov)
    y.backward()
    assert onp.allclose(mean.grad.asnumpy(), w.asnumpy().sum(axis=0))
    # along a symmetric direction (cov stays symmetric)
    d = onp.array([[0.4, -0.7], [-0.7, 0.2]])
    eps = 1e-6
    fd = (float(f(mean, np.array(a + eps * d, dtype="float64"))) -
          float(f(mean, np.array(a - eps * d, dtype="float64")))) / (2 * eps)
    assert abs(float((cov.grad.asnumpy() * d).sum()) - fd) < 1e-5 * (1 + abs(fd))


# ---- bad arguments ---------------------------------------------------------------------------
BAD = [
    lambda: R.normal(0.0, -1.0), lambda: R.normal(0.0, np.array([1.0, -1.0])),
    lambda: R.normal(float("nan")), lambda: R.uniform(0.0, float("inf")),
    lambda: R.exponential(-1.0), lambda: R.exponential(np.array([-1.0])),
    lambda: R.gamma(0.0), lambda: R.gamma(1.0, 0.0), lambda: R.gamma(np.array([-1.0])),
    lambda: R.beta(0.0, 1.0), lambda: R.chisquare(np.array([0.0])),
    lambda: R.logistic(0.0, -1.0), lambda: R.gumbel(0.0, -1.0), lambda: R.laplace(0.0, -1.0),
    lambda: R.rayleigh(-1.0), lambda: R.weibull(0.0), lambda: R.pareto(-1.0),
    lambda: R.power(np.array([0.0])), lambda: R.lognormal(0.0, -1.0),
    lambda: R.normal(size=-1), lambda: R.normal(size=(2, -1)), lambda: R.normal(size=3.5),
    lambda: R.normal(size="a"), lambda: R.normal(dtype="int32"),
    lambda: R.normal(np.zeros((2, 3)), size=(3,)), lambda: R.normal(np.zeros(2), np.ones(3)),
    lambda: R.normal(size=(2,), out=np.zeros(3)),
    lambda: R.normal(size=(2,), dtype="float64", out=np.zeros(2, dtype="float32")),
    lambda: R.randint(5, 3), lambda: R.randint(0), lambda: R.randint(np.array([5])),
    lambda: R.randint(5, dtype="float32"), lambda: R.randint(0, 300, dtype="int8"),
    lambda: R.randint(1.5),
    lambda: R.choice(5, 6, replace=False), lambda: R.choice(0, 1),
    lambda: R.choice(3, p=[0.5, 0.6, 0.1]), lambda: R.choice(3, p=[0.5, 0.5]),
    lambda: R.choice(3, p=[1.5, -0.5, 0.0]), lambda: R.choice(3, 2, False, p=[1.0, 0.0, 0.0]),
    lambda: R.choice(np.array(3.0)),
    lambda: R.multinomial(-1, [0.5, 0.5]), lambda: R.multinomial(3, [0.7, 0.7, 0.0]),
    lambda: R.multinomial(3, [[0.5, 0.5]]), lambda: R.multinomial(2.5, [1.0]),
    lambda: R.shuffle([1, 2, 3]),
    lambda: R.multivariate_normal(np.zeros(2), np.eye(3)),
    lambda: R.multivariate_normal(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]),
                                  check_valid="raise"),
    lambda: R.multivariate_normal(np.zeros(2), np.eye(2), check_valid="maybe"),
    lambda: npx_random.bernoulli(), lambda: npx_random.bernoulli(0.5, 0.0),
    lambda: npx_random.bernoulli(1.5), lambda: npx_random.bernoulli(np.array([-0.1])),
    lambda: npx_random.normal_n(0.0, -1.0, batch_shape=2),
    lambda: npx_random.uniform_n(batch_shape=(-1,)),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_arguments_raise(i):
    with pytest.raises(MXNetError):
        BAD[i]()


def test_non_psd_cov_warns_by_default():
    with pytest.warns(RuntimeWarning, match="positive semi-definite"):
        R.multivariate_normal(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R.multivariate_normal(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]),
                              check_valid="ignore")


# ---- graphs ----------------------------------------------------------------------------------
def test_symbol_parameters_build_graph_nodes():
    SR = mx.sym.np.random
    loc, scale = mx.sym.Variable("loc"), mx.sym.Variable("scale")
    feeds = {"loc": mx.nd.zeros((2, 3)), "scale": mx.nd.ones((3,))}
    cases = [(SR.normal(loc, scale), (2, 3)), (SR.gamma(scale, 2.0, size=(4, 3)), (4, 3)),
             (SR.weibull(scale), (3,)), (SR.beta(scale, scale, size=(5, 3)), (5, 3)),
             (mx.sym.npx.random.normal_n(loc, scale, batch_shape=(4,)), (4, 2, 3)),
             (SR.choice(scale, 2, replace=False), (2,))]
    for y, shape in cases:
        assert isinstance(y, mx.sym.Symbol)
        args = {k: v.as_in_context(mx.current_context()) for k, v in feeds.items()
                if k in y.list_arguments()}
        assert y.eval(ctx=mx.current_context(), **args)[0].shape == shape


def test_multinomial_takes_float32_probabilities_within_their_rounding():
    p = np.array(onp.array([0.2, 0.3, 0.5, 1e-7], dtype=onp.float32))
    head = onp.float64(p.asnumpy()[:-1].astype(onp.float64).sum())
    assert head > 1.0             # rounding put the first three a little over 1
    counts = np.random.multinomial(50, p, size=3)
    assert counts.sum(axis=1).tolist() == [50, 50, 50]
    with pytest.raises(mx.base.MXNetError, match="exceeds 1"):
        np.random.multinomial(5, onp.array([0.5, 0.5 + 1e-9, 0.0]))


@pytest.mark.parametrize("size", [None, (2,), (3, 0)])
def test_multinomial_without_outcomes_counts_nothing(size):
    """Empty pvals: an empty int64 count per draw, NumPy's shape (size + (0,))."""
    want = onp.random.multinomial(10, [], size=size)
    for pvals in ([], np.array([])):
        got = np.random.multinomial(10, pvals, size=size)
        assert got.shape == want.shape and got.dtype == want.dtype
