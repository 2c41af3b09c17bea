"""Per-element samplers (``_sample_*``), nd.random's array-parameter dispatch and float16
draws in blocks (``mxlite/ops/sampling.py``, ``mxlite/ops/random.py``)."""
import numpy as np
import pytest
from scipy import stats

import mxlite as mx
from mxlite._core import random as _k
from mxlite.base import MXNetError
from mxlite.ops import random as _random


# ---- float16 draws in blocks ------------------------------------------------------------------
@pytest.mark.parametrize("dist,params", [("uniform", dict(low=-2.0, high=3.0)),
                                         ("normal", dict(loc=1.0, scale=2.0)),
                                         ("exponential", dict(lam=2.0)),
                                         ("gamma", dict(alpha=2.5, beta=0.5)),
                                         ("poisson", dict(lam=4.0))])
def test_float16_blocks_equal_the_whole_float32_draw_rounded(monkeypatch, dist, params):
    """A float16 output larger than a block is drawn block by block (no full float32
    temporary); its samples are still the float32 draw of the whole, rounded."""
    monkeypatch.setattr(_random, "F16_BLOCK", 2 * _k.CHUNK)
    n = 5 * _k.CHUNK + 7
    mx.random.seed(11)
    half = getattr(mx.nd.random, dist)(shape=(n,), dtype="float16", **params).asnumpy()
    mx.random.seed(11)
    full = getattr(mx.nd.random, dist)(shape=(n,), dtype="float32", **params).asnumpy()
    np.testing.assert_array_equal(half, full.astype(np.float16))


def test_float16_block_draw_allocates_one_block(monkeypatch):
    """The float32 scratch of a float16 draw is one block, not the output's size (on the
    CPU: a GPU writes float16 samples directly)."""
    if mx.current_context().device_type != "cpu":
        pytest.skip("a GPU draws float16 directly")
    monkeypatch.setattr(_random, "F16_BLOCK", 2 * _k.CHUNK)
    from mxlite.device import cpu as _cpu
    sizes, orig = [], _cpu.empty

    def spy(shape, dtype=None, *a, **kw):
        if np.dtype(dtype) == np.float32:
            sizes.append(int(np.prod(shape)))
        return orig(shape, dtype, *a, **kw)
    monkeypatch.setattr(_cpu, "empty", spy)
    mx.nd.random.uniform(shape=(7 * _k.CHUNK,), dtype="float16").wait_to_read()
    assert sizes and max(sizes) <= 2 * _k.CHUNK


# ---- per-element samplers: distributions --------------------------------------------------
P_MIN = 1e-6        # a correct sampler fails a test at this level once in a million seeds
N = 20000


def _draw(name, params, dtype="float64", seed=1234):
    mx.random.seed(seed)
    arrays = [mx.nd.array(v, dtype="float64") for v in params]
    return getattr(mx.nd, f"sample_{name}")(*arrays, shape=(N,), dtype=dtype).asnumpy()


CONTINUOUS = [
    ("uniform", ([-2.0, 10.0], [3.0, 10.5]), lambda lo, hi: stats.uniform(lo, hi - lo)),
    ("normal", ([0.0, -5.0], [1.0, 0.25]), lambda mu, s: stats.norm(mu, s)),
    ("exponential", ([1.0, 7.5],), lambda lam: stats.expon(scale=1 / lam)),
    ("gamma", ([0.3, 4.0], [2.0, 0.5]), lambda a, b: stats.gamma(a, scale=b)),
]


@pytest.mark.parametrize("name,params,dist", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_samples_follow_each_elements_distribution(name, params, dist):
    x = _draw(name, params)
    assert x.shape == (2, N) and x.dtype == np.float64
    for j in range(2):
        law = dist(*(p[j] for p in params))
        assert stats.kstest(x[j], law.cdf).pvalue > P_MIN, (name, j)


def _chi_square_p(samples, pmf, top):
    """p-value of a chi-square test of integer ``samples`` against ``pmf`` on 0..top-1 and a
    tail bin, bins merged until each expects >= 5."""
    counts = np.bincount(np.minimum(samples.astype(np.int64), top), minlength=top + 1)
    probs = np.append(pmf(np.arange(top)), 0.0)
    probs[-1] = 1.0 - probs[:-1].sum()
    obs, exp, acc_o, acc_e = [], [], 0, 0.0
    for o, e in zip(counts, probs * samples.size):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= 5:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o, acc_e = 0, 0.0
    obs[-1] += acc_o
    exp[-1] += acc_e
    return stats.chisquare(obs, exp).pvalue


COUNTS = [
    ("poisson", ([0.5, 30.0],), lambda lam: stats.poisson(lam)),
    ("negative_binomial", ([1.0, 4.0], [0.3, 0.8]), lambda k, p: stats.nbinom(k, p)),
    ("generalized_negative_binomial", ([2.0, 5.0], [0.5, 1e-9]),
     lambda mu, a: stats.nbinom(1 / a, 1 / (1 + a * mu))),
]


@pytest.mark.parametrize("name,params,dist", COUNTS, ids=[c[0] for c in COUNTS])
def test_count_samples_follow_each_elements_distribution(name, params, dist):
    x = _draw(name, params, dtype="float32")
    assert x.dtype == np.float32 and (x == np.floor(x)).all() and (x >= 0).all()
    for j in range(2):
        law = dist(*(p[j] for p in params))
        top = int(law.ppf(1 - 1e-4)) + 1
        assert _chi_square_p(x[j], law.pmf, top) > P_MIN, (name, j)


def test_output_shape_is_parameter_shape_then_shape_and_dtype_float32_by_default():
    low = mx.nd.zeros((2, 3), dtype="float64")
    y = mx.nd.sample_uniform(low, low + 1, shape=(4, 5))
    assert y.shape == (2, 3, 4, 5) and y.dtype == np.float32
    assert mx.nd.sample_normal(low, low + 1).shape == (2, 3)
    assert mx.nd.sample_poisson(low, dtype="float16").dtype == np.float16


def test_uniform_samples_stay_below_high_in_float16():
    high = mx.nd.array([1.0, 2.0])
    y = mx.nd.sample_uniform(high - 1e-3, high, shape=(5000,), dtype="float16").asnumpy()
    assert (y < high.asnumpy()[:, None].astype(np.float16)).all()


def test_a_seed_replays_and_the_cpu_gives_what_a_gpu_stream_gives():
    lam = mx.nd.array([0.5, 3.0, 9.0])
    mx.random.seed(7)
    a = mx.nd.sample_poisson(lam, shape=(10,)).asnumpy()
    mx.random.seed(7)
    np.testing.assert_array_equal(mx.nd.sample_poisson(lam, shape=(10,)).asnumpy(), a)


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.sample_uniform(mx.nd.array([1.0]), mx.nd.array([0.0])), "low must be <= high"),
    (lambda: mx.nd.sample_normal(mx.nd.array([0.0]), mx.nd.array([-1.0])), "sigma"),
    (lambda: mx.nd.sample_gamma(mx.nd.array([0.0]), mx.nd.array([1.0])), "alpha"),
    (lambda: mx.nd.sample_exponential(mx.nd.array([np.inf])), "lam"),
    (lambda: mx.nd.sample_poisson(mx.nd.array([np.nan])), "lam"),
    (lambda: mx.nd.sample_negative_binomial(mx.nd.array([1.0]), mx.nd.array([0.0])), "p must"),
    (lambda: mx.nd.sample_generalized_negative_binomial(mx.nd.array([-1.0]),
                                                        mx.nd.array([1.0])), "mu"),
    (lambda: mx.nd.sample_uniform(mx.nd.zeros((2,)), mx.nd.ones((3,))), "one shape"),
    (lambda: mx.nd.sample_uniform(mx.nd.zeros((2,)), mx.nd.ones((2,), dtype="float64")),
     "one float dtype"),
    (lambda: mx.nd.sample_uniform(mx.nd.zeros((2,), dtype="int32"),
                                  mx.nd.ones((2,), dtype="int32")),
     "one float dtype"),
    (lambda: mx.nd.sample_normal(mx.nd.array([0.0]), mx.nd.array([1e30]), dtype="float16"),
     "cannot be represented"),
    (lambda: mx.nd.sample_poisson(mx.nd.array([1e6]), dtype="float16"), "exactly"),
])
def test_bad_parameters_are_errors_naming_the_op(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


# ---- nd.random / sym.random dispatch ---------------------------------------------------------
def test_nd_random_with_arrays_calls_the_per_element_sampler():
    mu, sigma = mx.nd.array([0.0, 100.0]), mx.nd.array([1.0, 1.0])
    y = mx.nd.random.normal(mu, sigma, shape=(500,))
    assert y.shape == (2, 500)
    means = y.asnumpy().mean(axis=1)
    assert abs(means[0]) < 0.5 and abs(means[1] - 100) < 0.5
    assert mx.nd.random.uniform(0, 1, shape=(3,)).shape == (3,)     # scalars: one distribution
    assert mx.nd.random.uniform().shape == (1,)
    assert mx.nd.random.gamma(alpha=mu + 1, beta=sigma).shape == (2,)
    assert mx.nd.random.randn(2, 3).shape == (2, 3)


def test_nd_random_mixing_numbers_and_arrays_is_an_error():
    with pytest.raises(MXNetError, match="random.uniform: high given as NDArray but low as"):
        mx.nd.random.uniform(0, mx.nd.array([1.0]))


def test_sym_random_with_symbols_is_a_sample_node():
    y = mx.sym.random.poisson(mx.sym.var("lam"), shape=(4,))
    assert y.tojson().count('"op": "_sample_poisson"') == 1
    _, out, _ = y.infer_shape(lam=(3,))
    assert out == [(3, 4)]
    got = y.eval(lam=mx.nd.array([0.0, 0.0, 0.0]))[0].asnumpy()
    np.testing.assert_array_equal(got, np.zeros((3, 4), np.float32))


def test_two_identical_sample_nodes_are_not_merged():
    lam = mx.sym.var("lam")
    y = mx.sym.sample_exponential(lam, shape=(50,)) - mx.sym.sample_exponential(lam, shape=(50,))
    got = y.eval(lam=mx.nd.array([1.0]))[0].asnumpy()
    assert np.abs(got).max() > 0


# ---- _sample_unique_zipfian, contrib.rand_zipfian ----------------------------------------
def _zipf_pmf(range_max):
    c = np.arange(range_max)
    return np.log((c + 2.0) / (c + 1.0)) / np.log(range_max + 1.0)


def test_unique_zipfian_rows_are_distinct_and_first_draws_follow_the_base_distribution():
    mx.random.seed(21)
    s, tries = mx.nd._internal._sample_unique_zipfian(range_max=10, shape=(20000, 4))
    s, tries = s.asnumpy(), tries.asnumpy()
    assert s.dtype == np.int64 and tries.dtype == np.int64 and tries.shape == (20000,)
    assert ((s >= 0) & (s < 10)).all() and (tries >= 4).all()
    assert all(np.unique(r).size == 4 for r in s[:500])
    # the first sample of a row is its first draw: P(c) = log((c + 2) / (c + 1)) / log(11)
    counts = np.bincount(s[:, 0], minlength=10)
    assert stats.chisquare(counts, _zipf_pmf(10) * s.shape[0]).pvalue > P_MIN


def test_unique_zipfian_all_classes_and_bad_shapes():
    s, _ = mx.nd._internal._sample_unique_zipfian(range_max=6, shape=(3, 6))
    assert (np.sort(s.asnumpy(), axis=1) == np.arange(6)).all()
    with pytest.raises(MXNetError, match="cannot draw 7 distinct classes"):
        mx.nd._internal._sample_unique_zipfian(range_max=6, shape=(3, 7))
    with pytest.raises(MXNetError, match="2-D"):
        mx.nd._internal._sample_unique_zipfian(range_max=6, shape=(3,))


def test_rand_zipfian_samples_and_expected_counts():
    mx.random.seed(5)
    true = mx.nd.array([0, 3, 7])
    s, et, es = mx.nd.contrib.rand_zipfian(true, 20000, 8)
    assert s.dtype == np.int64 and et.dtype == np.float64 and es.dtype == np.float64
    pmf = _zipf_pmf(8)
    np.testing.assert_allclose(et.asnumpy(), pmf[[0, 3, 7]] * 20000, rtol=1e-12)
    np.testing.assert_allclose(es.asnumpy(), pmf[s.asnumpy()] * 20000, rtol=1e-12)
    counts = np.bincount(s.asnumpy(), minlength=8)
    assert stats.chisquare(counts, pmf * 20000).pvalue > P_MIN
    sym = mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 5, 8)
    outs = mx.sym.Group(list(sym)).eval(t=true)
    assert [o.shape for o in outs] == [(5,), (3,), (5,)]
    with pytest.raises(MXNetError, match="range_max"):
        mx.nd.contrib.rand_zipfian(true, 4, 0)


def test_mx_random_takes_array_parameters_as_nd_random():
    lam = mx.nd.array([1.0, 2.0, 3.0])
    assert mx.random.poisson(lam).shape == (3,)
    assert mx.random.gamma(lam, lam, shape=(2,)).shape == (3, 2)
    with pytest.raises(MXNetError, match="random.uniform: low must be a number or an NDArray"):
        mx.random.uniform("0")


def test_positional_shape_dtype_after_the_parameters():
    """MXNet's order: random.normal(loc, scale, shape, dtype, ...), for numbers and arrays."""
    x = mx.nd.random.normal(0, 1, (5, 6, 7))
    assert x.shape == (5, 6, 7)
    y = mx.nd.random.uniform(0, 1, (2,), "float64")
    assert y.shape == (2,) and y.dtype == np.float64
    z = mx.nd.random.normal(mx.nd.zeros(2), mx.nd.ones(2), (3,))
    assert z.shape == (2, 3)
    with pytest.raises(MXNetError, match="multiple values for .shape."):
        mx.nd.random.normal(0, 1, (2,), shape=(3,))
