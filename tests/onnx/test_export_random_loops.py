"""The samplers of ``translations/random_loops.py`` (gamma, Poisson, the negative binomials,
unique Zipfian classes) exported: ONNX draws from the runtime's stream, so each test checks
the shape, the dtype, the support and the distribution (moments of many draws within five
standard errors, frequencies of small counts against the probability mass) instead of values.
Exported at opset 21: onnxruntime 1.32 has no kernels for the random operators of opset 22."""
import math

import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_eval

N = 40000          # draws per moment check


def _moments(x, mean, var, kurtosis):
    """The sample mean within five standard errors of ``mean``, the sample variance within
    five standard errors of ``var`` (``kurtosis``: the excess kurtosis, for its error)."""
    x = np.asarray(x, np.float64).ravel()
    n = x.size
    assert abs(x.mean() - mean) <= 5 * math.sqrt(var / n), (x.mean(), mean)
    se_var = var * math.sqrt((kurtosis + 2) / n)
    assert abs(x.var() - var) <= 5 * se_var, (x.var(), var)


def _counts(x):
    x = np.asarray(x, np.float64)
    assert (x >= 0).all() and (x == np.floor(x)).all()


# (name, parameters, mean, variance, excess kurtosis) of each distribution
def gamma_moments(alpha, beta):
    return alpha * beta, alpha * beta ** 2, 6 / alpha


def poisson_moments(lam):
    return lam, lam, 1 / lam if lam else 0.0


def nb_moments(k, p):
    mean = k * (1 - p) / p
    var = mean / p
    return mean, var, 6 / k + p ** 2 / (k * (1 - p)) if p < 1 else 0.0


def gnb_moments(mu, alpha):
    if alpha == 0:
        return poisson_moments(mu)
    return nb_moments(1 / alpha, 1 / (1 + mu * alpha))


CASES = [
    ("gamma", dict(alpha=0.3, beta=2.0), gamma_moments(0.3, 2.0)),
    ("gamma", dict(alpha=4.5, beta=0.25), gamma_moments(4.5, 0.25)),
    ("poisson", dict(lam=3.5), poisson_moments(3.5)),
    ("poisson", dict(lam=80.0), poisson_moments(80.0)),
    ("negative_binomial", dict(k=3, p=0.4), nb_moments(3, 0.4)),
    ("negative_binomial", dict(k=1, p=0.9), nb_moments(1, 0.9)),
    ("generalized_negative_binomial", dict(mu=2.0, alpha=0.5), gnb_moments(2.0, 0.5)),
    ("generalized_negative_binomial", dict(mu=30.0, alpha=0.0), gnb_moments(30.0, 0.0)),
]
IDS = [f"{c[0]}_{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("name,kw,moments", CASES, ids=IDS)
@pytest.mark.parametrize("dtype,shape", [("float32", (N,)), ("float64", (200, N // 200))])
def test_random(name, kw, moments, dtype, shape, tmp_path):
    sym = getattr(mx.sym._internal, f"_random_{name}")(shape=shape, dtype=dtype, **kw)
    (x,) = export_eval(sym, {}, tmp_path)
    assert (x >= 0).all() and np.isfinite(x).all()
    if name != "gamma":
        _counts(x)
    _moments(x, *moments)


@pytest.mark.parametrize("name,kw,moments", CASES, ids=IDS)
@pytest.mark.parametrize("dtype,shape", [("float16", (100, N // 100)), ("float64", (N,))])
def test_random_like_takes_the_shape_and_dtype_of_data(name, kw, moments, dtype, shape,
                                                       tmp_path):
    sym = getattr(mx.sym._internal, f"_random_{name}_like")(mx.sym.var("d"), **kw)
    (x,) = export_eval(sym, {"d": np.full(shape, np.nan, dtype)}, tmp_path)   # values not read
    if name != "gamma":
        _counts(x)
    _moments(x, *moments)


SAMPLE_CASES = [
    ("gamma", [[0.5, 7.0], [1.0, 0.3]], gamma_moments),
    ("poisson", [[0.0, 0.7, 9.5, 10.0, 400.0]], poisson_moments),
    ("negative_binomial", [[1.0, 5.0, 2.0], [0.5, 0.25, 1.0]], nb_moments),
    ("generalized_negative_binomial", [[4.0, 0.5, 6.0], [0.0, 2.0, 0.1]], gnb_moments),
]


@pytest.mark.parametrize("name,params,moments", SAMPLE_CASES, ids=[c[0] for c in SAMPLE_CASES])
@pytest.mark.parametrize("pdtype,dtype", [("float32", None), ("float64", "float64")])
def test_sample_per_distribution(name, params, moments, pdtype, dtype, tmp_path):
    """Parameters of shape (2, m): one distribution per element, N / 4 samples of each (as
    (50, N / 200))."""
    arrays = [np.stack([np.asarray(p), np.asarray(p)]).astype(pdtype) for p in params]
    names = [f"p{i}" for i in range(len(arrays))]
    kw = {} if dtype is None else {"dtype": dtype}
    sym = getattr(mx.sym, f"sample_{name}")(*[mx.sym.var(n) for n in names],
                                            shape=(50, N // 200), **kw)
    (x,) = export_eval(sym, dict(zip(names, arrays)), tmp_path)
    assert x.shape == arrays[0].shape + (50, N // 200)
    if name != "gamma":
        _counts(x)
    for i in range(2):
        for j in range(arrays[0].shape[1]):
            _moments(x[i, j], *moments(*(float(a[i, j]) for a in arrays)))


def test_sample_without_shape(tmp_path):
    lam = np.full((N,), 2.5, np.float32)
    (x,) = export_eval(mx.sym.sample_poisson(mx.sym.var("lam")), {"lam": lam}, tmp_path)
    assert x.shape == (N,)
    _counts(x)
    _moments(x, *poisson_moments(2.5))


@pytest.mark.parametrize("lam", [0.6, 9.0, 14.0])
def test_poisson_probability_mass(lam, tmp_path):
    """The frequency of each count up to twice the rate within five standard errors of
    lam^k e^-lam / k! (both methods: below 10 and above). Counts expected fewer than 20
    times are pooled into one bin (the normal approximation behind five standard errors
    fails for a handful of expected draws: two zeros at rate 14 are 1 % likely)."""
    (x,) = export_eval(mx.sym.random.poisson(lam, shape=(4, N), dtype="float64"), {}, tmp_path)
    n = x.size
    rare_p, rare_freq = 0.0, 0.0
    for k in range(int(2 * lam) + 2):
        p = math.exp(k * math.log(lam) - lam - math.lgamma(k + 1))
        freq = float((x == k).mean())
        if n * p < 20:
            rare_p, rare_freq = rare_p + p, rare_freq + freq
            continue
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / n), (k, freq, p)
    if n * rare_p >= 20:
        assert abs(rare_freq - rare_p) < 5 * math.sqrt(rare_p * (1 - rare_p) / n), \
            (rare_freq, rare_p)


def test_gamma_distribution_function(tmp_path):
    """Gamma(2, 1): P(X <= x) = 1 - (1 + x) e^-x at a few points, within five standard
    errors (the whole distribution, not only its moments)."""
    (x,) = export_eval(mx.sym.random.gamma(2.0, 1.0, shape=(4, N), dtype="float64"), {}, tmp_path)
    for t in (0.5, 1.0, 2.0, 4.0):
        p = 1 - (1 + t) * math.exp(-t)
        freq = float((x <= t).mean())
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / x.size), (t, freq, p)


# ---- unique Zipfian classes ---------------------------------------------------------------------
def _zipf(range_max, shape, tmp_path):
    sym = mx.sym._internal._sample_unique_zipfian(range_max=range_max, shape=shape)
    samples, tries = export_eval(sym, {}, tmp_path)
    assert samples.dtype == np.int64 and tries.dtype == np.int64
    assert samples.shape == shape and tries.shape == shape[:1]
    assert ((samples >= 0) & (samples < range_max)).all()
    for row in samples:
        assert len(set(row.tolist())) == shape[1]
    assert (tries >= shape[1]).all()
    return samples, tries


def test_unique_zipfian_one_class_per_row_is_log_uniform(tmp_path):
    """One class a row: the first draw, P(c) = log((c + 2) / (c + 1)) / log(R + 1); one try."""
    r = 12
    samples, tries = _zipf(r, (N, 1), tmp_path)
    assert (tries == 1).all()
    freq = np.bincount(samples.ravel(), minlength=r) / N
    p = np.log((np.arange(r) + 2) / (np.arange(r) + 1)) / np.log(r + 1)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N)), (freq, p)


@pytest.mark.parametrize("range_max,shape", [(50, (3000, 8)), (6, (2000, 6))])
def test_unique_zipfian_matches_mxlite_in_distribution(range_max, shape, tmp_path):
    """Each class's frequency in the samples and the mean of num_tries as mxlite's (its own
    draws of the same size), within five standard errors of the difference; shape[1] ==
    range_max draws every class, a permutation per row."""
    samples, tries = _zipf(range_max, shape, tmp_path)
    ref, ref_tries = (a.asnumpy() for a in mx.nd._internal._sample_unique_zipfian(
        range_max=range_max, shape=shape))
    se = math.sqrt((tries.var() + ref_tries.var()) / shape[0])
    assert abs(tries.mean() - ref_tries.mean()) < 5 * se + 1e-12, (tries.mean(),
                                                                   ref_tries.mean())
    got = np.bincount(samples.ravel(), minlength=range_max) / shape[0]
    want = np.bincount(ref.ravel(), minlength=range_max) / shape[0]
    # a class is in a row or not: frequencies of 0/1 indicators
    se = np.sqrt((got * (1 - got) + want * (1 - want)) / shape[0])
    assert np.all(np.abs(got - want) < 5 * se + 1e-12), (got, want)
    if shape[1] == range_max:
        assert (np.sort(samples, axis=1) == np.arange(range_max)).all()
