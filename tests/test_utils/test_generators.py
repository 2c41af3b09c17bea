"""Statistical checks of generators: a fair generator passes, a biased one is rejected."""
import math

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.test_utils import (chi_square_check, gen_buckets_probs_with_ppf, mean_check,
                               var_check, verify_generator)


def _uniform_ppf(q):
    return q


def test_buckets_from_a_quantile_function():
    buckets, probs = gen_buckets_probs_with_ppf(lambda q: 2 * q, 4)
    assert buckets == [(0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0)]
    assert probs == [0.25] * 4
    with pytest.raises(MXNetError):
        gen_buckets_probs_with_ppf(_uniform_ppf, 0)


def test_verify_generator_accepts_a_fair_generator():
    rng = np.random.default_rng(0)
    buckets, probs = gen_buckets_probs_with_ppf(_uniform_ppf, 5)
    ps = verify_generator(lambda n: rng.uniform(size=n), buckets, probs, nsamples=20000)
    assert len(ps) == 5


def test_verify_generator_rejects_a_biased_generator():
    rng = np.random.default_rng(1)
    buckets, probs = gen_buckets_probs_with_ppf(_uniform_ppf, 5)
    # x ** 1.1 on uniform samples: slightly more mass near 0
    with pytest.raises(AssertionError, match="Generator test fails"):
        verify_generator(lambda n: rng.uniform(size=n) ** 1.1, buckets, probs, nsamples=20000)


def test_chi_square_on_discrete_values_and_ndarrays():
    rng = np.random.default_rng(2)
    p, obs, exp = chi_square_check(lambda n: mx.nd.array(rng.integers(0, 3, n)), [0, 1, 2],
                                   [1 / 3] * 3, nsamples=3000)
    assert p > 1e-4 and obs.sum() == 3000 and np.allclose(exp, 1000)
    # a value outside every bucket is impossible under probabilities that sum to 1
    p, _, _ = chi_square_check(lambda n: np.full(n, 7), [0, 1], [0.5, 0.5], nsamples=10)
    assert p == 0.0


def test_chi_square_statistic_matches_the_closed_form():
    samples = np.array([0.1] * 30 + [0.6] * 70)
    p, obs, _ = chi_square_check(lambda n: samples, [(0.0, 0.5), (0.5, 1.0)], [0.5, 0.5],
                                 nsamples=100)
    stat = (30 - 50) ** 2 / 50 + (70 - 50) ** 2 / 50          # 16, one degree of freedom
    assert obs.tolist() == [30, 70]
    assert p == pytest.approx(math.erfc(math.sqrt(stat / 2)), rel=1e-9)


def test_chi_square_rejects_overlapping_buckets():
    with pytest.raises(MXNetError, match="disjoint"):
        chi_square_check(lambda n: np.zeros(n), [(0.0, 0.6), (0.5, 1.0)], [0.5, 0.5], 10)


def test_mean_and_variance_checks():
    rng = np.random.default_rng(3)
    assert mean_check(lambda n: rng.normal(0.0, 1.0, n), 0.0, 1.0, nsamples=40000)
    assert not mean_check(lambda n: rng.normal(0.1, 1.0, n), 0.0, 1.0, nsamples=40000)
    assert var_check(lambda n: rng.normal(0.0, 2.0, n), 2.0, nsamples=40000)
    assert not var_check(lambda n: rng.normal(0.0, 2.2, n), 2.0, nsamples=40000)
