"""Random samples must be representable in the requested dtype (issue 7, item 5).

``uniform(0, 1e5, dtype='float16')`` used to clamp a third of its samples to 65504. Now every
random op with a dtype parameter refuses parameters whose samples the dtype cannot hold:
continuous distributions may not overflow to infinity (the generators' samples are bounded,
and the bounds are checked), counts (Poisson family) must be exact integers in the dtype.
"""
import math

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.ops import random as R

F16_MAX = 65504.0


def test_issue_example():
    with pytest.raises(MXNetError, match=r"_random_uniform: high=100000.0 is beyond the largest "
                                         r"finite float16 value 65504"):
        mx.nd.random.uniform(0, 1e5, shape=(1000,), dtype="float16")
    with pytest.raises(MXNetError, match=r"_random_uniform: low=-100000.0 .*float16"):
        mx.nd.random.uniform(-1e5, 0, shape=(10,), dtype="float16")
    with pytest.raises(MXNetError, match=r"_random_uniform: high=1e\+39 .*float32"):
        mx.nd.random.uniform(0, 1e39, shape=(10,))


def test_uniform_up_to_the_float16_limit_is_not_clamped():
    mx.random.seed(3)
    x = mx.nd.random.uniform(-F16_MAX, F16_MAX, shape=(200_000,), dtype="float16").asnumpy()
    assert np.isfinite(x).all() and (x < F16_MAX).all() and (x >= -F16_MAX).all()
    # the top value (the largest below high) is hit about as often as any other of its width
    top = np.nextafter(np.float16(F16_MAX), np.float16(0))
    assert (x == top).mean() < 1e-3
    wide = mx.nd.random.uniform(-1e308, 1e308, shape=(1000,), dtype="float64").asnumpy()
    assert np.isfinite(wide).all()


def test_generator_bounds_behind_the_checks():
    """The constants in mxlite.ops.random bound what the kernels can produce: the open unit
    draws are (w + 0.5) / 2**32 >= 2**-33 (float32 kernels) and ((x >> 11) + 0.5) / 2**53 >=
    2**-54 (float64 kernels and the gamma sampler's normals)."""
    u32, u64 = 0.5 / 2 ** 32, 0.5 / 2 ** 53
    assert math.sqrt(-2 * math.log(u32)) <= R._Z_MAX[32]
    assert math.sqrt(-2 * math.log(u64)) <= R._Z_MAX[64] == R._Z_STREAM
    assert -math.log(u32) <= R._E_MAX[32]
    assert -math.log(u64) <= R._E_MAX[64]
    # Marsaglia-Tsang: d (1 + c z)^3 is increasing in z; the boost U^(1/alpha) is below 1
    for alpha in (1e-3, 0.5, 1.0, 4.5, 1e6):
        a = alpha + 1 if alpha < 1 else alpha
        d = a - 1 / 3
        assert R._gamma_max(alpha) >= d * (1 + R._Z_STREAM / math.sqrt(9 * d)) ** 3 * 0.999999
    assert R._EXACT_INT == {np.dtype("float16"): 2048, np.dtype("float32"): 2 ** 24,
                            np.dtype("float64"): 2 ** 53}
    for dt, top in R._EXACT_INT.items():      # every integer up to top is exact, top + 1 is not
        assert float(dt.type(top)) == top and float(dt.type(top - 1)) == top - 1
        assert float(dt.type(top + 1)) != top + 1


# (distribution, dtype, parameters that fit, parameters that do not)
CASES = [
    ("uniform", "float16", dict(low=0, high=F16_MAX), dict(low=0, high=1e5)),
    ("uniform", "float32", dict(low=-3e38, high=3e38), dict(low=-1e39, high=0)),
    ("normal", "float16", dict(loc=0, scale=9000), dict(loc=0, scale=10_000)),
    ("normal", "float16", dict(loc=60_000, scale=600), dict(loc=65_000, scale=100)),
    ("normal", "float32", dict(loc=0, scale=1e37), dict(loc=0, scale=1e38)),
    ("normal", "float64", dict(loc=0, scale=1e306), dict(loc=0, scale=1e308)),
    ("exponential", "float16", dict(lam=1e-3), dict(lam=1e-4)),
    ("exponential", "float32", dict(lam=1e-36), dict(lam=1e-38)),
    ("exponential", "float64", dict(lam=1e-300), dict(lam=1e-307)),
    ("gamma", "float16", dict(alpha=1.0, beta=100.0), dict(alpha=1.0, beta=1e4)),
    ("gamma", "float16", dict(alpha=2000.0, beta=1.0), dict(alpha=65_000.0, beta=1.0)),
    ("gamma", "float32", dict(alpha=1.0, beta=1e36), dict(alpha=1.0, beta=1e37)),
    ("gamma", "float64", dict(alpha=1.0, beta=1e300), dict(alpha=1.0, beta=1e307)),
    ("poisson", "float16", dict(lam=1500.0), dict(lam=2000.0)),
    ("poisson", "float32", dict(lam=1.6e7), dict(lam=1.677e7)),      # 2**24 = 16777216
    ("poisson", "float64", dict(lam=1e12), dict(lam=9.0071992e15)),  # 2**53 = 9.0071993e15
    ("negative_binomial", "float16", dict(k=10, p=0.1), dict(k=1, p=0.002)),
    ("negative_binomial", "float32", dict(k=3, p=1e-4), dict(k=1, p=1e-7)),
    ("generalized_negative_binomial", "float16", dict(mu=2.0, alpha=0.3),
     dict(mu=100.0, alpha=0.5)),
    ("generalized_negative_binomial", "float16", dict(mu=1500.0, alpha=0.0),
     dict(mu=2000.0, alpha=0.0)),
    ("generalized_negative_binomial", "float32", dict(mu=1e4, alpha=0.1),
     dict(mu=1e7, alpha=1.0)),
]
COUNTS = {"poisson", "negative_binomial", "generalized_negative_binomial"}


@pytest.mark.parametrize("dist, dtype, good, bad", CASES)
def test_every_distribution_checks_its_dtype(dist, dtype, good, bad):
    mx.random.seed(5)
    x = getattr(mx.nd.random, dist)(shape=(20_000,), dtype=dtype, **good).asnumpy()
    assert x.dtype == np.dtype(dtype) and np.isfinite(x).all()
    if dist in COUNTS:
        assert (x == np.floor(x)).all() and (x >= 0).all()
        assert x.max() <= R._EXACT_INT[np.dtype(dtype)]
    with pytest.raises(MXNetError, match=rf"_random_{dist}: .*cannot be represented in {dtype}"):
        getattr(mx.nd.random, dist)(shape=(2,), dtype=dtype, **bad)
    like = getattr(mx.nd.random, dist + "_like")
    data = mx.nd.zeros((3,), dtype=dtype)
    assert like(data, **good).dtype == np.dtype(dtype)
    with pytest.raises(MXNetError, match=rf"_random_{dist}_like: .*cannot be represented in "
                                         rf"{dtype}"):
        like(data, **bad)


def test_normal_at_the_largest_allowed_float16_scale_stays_finite():
    mx.random.seed(6)
    scale = F16_MAX / R._Z_MAX[32] * 0.9999
    x = mx.nd.random.normal(0, scale, shape=(400_000,), dtype="float16").asnumpy()
    assert np.isfinite(x).all()
    with pytest.raises(MXNetError, match="_random_normal: .*float16"):
        mx.nd.random.normal(0, scale * 1.001, shape=(1,), dtype="float16")
    lam = R._E_MAX[32] / F16_MAX
    x = mx.nd.random.exponential(lam, shape=(400_000,), dtype="float16").asnumpy()
    assert np.isfinite(x).all()


def test_a_count_beyond_the_exact_limit_is_never_stored(monkeypatch):
    """The parameter check makes such a draw improbable; if one happens anyway (here: the
    check is switched off), the call raises instead of storing a rounded count."""
    monkeypatch.setattr(R, "_poisson_rate_ok", lambda rate, limit: True)
    with pytest.raises(MXNetError, match=r"_random_poisson: drew \d+, above 2048"):
        mx.nd.random.poisson(5000.0, shape=(100,), dtype="float16")
    with pytest.raises(MXNetError, match=r"_random_poisson: drew \d+, above 16777216"):
        mx.nd.random.poisson(2e7, shape=(100,), dtype="float32")
    with pytest.raises(MXNetError, match=r"_random_negative_binomial: drew"):
        mx.nd.random.negative_binomial(1, 1e-4, shape=(1000,), dtype="float16")


def test_integer_and_index_dtypes():
    """The other random ops with a dtype: randint and multinomial refuse what the dtype
    cannot hold."""
    with pytest.raises(MXNetError, match=r"_random_randint: .*does not fit int32"):
        mx.nd.random.randint(0, 2 ** 31 + 1, shape=(2,), dtype="int32")
    x = mx.nd.random.randint(-2 ** 63, 2 ** 63, shape=(1000,), dtype="int64")
    assert x.dtype == np.int64
    with pytest.raises(MXNetError, match=r"_sample_multinomial: dtype float16 cannot hold"):
        mx.nd.random.multinomial(mx.nd.ones((2050,)), dtype="float16")   # index 2049
    assert mx.nd.random.multinomial(mx.nd.ones((2049,)), shape=(5,), dtype="float16").dtype \
        == np.float16
    with pytest.raises(MXNetError, match=r"_sample_multinomial: dtype uint8 cannot hold"):
        mx.nd.random.multinomial(mx.nd.ones((257,)), dtype="uint8")


def test_float16_uniform_is_rounded_from_24_random_bits():
    """float16 uniforms are float32 draws rounded to nearest, so an exact 0 on [0, 1) is
    about a 2**-24 event (an 11-bit grid gave 0 once in 2048 draws: 0/0 in Adamax), values
    below 2**-11 occur, and every sample stays below high."""
    x = mx.nd.random.uniform(0, 1, shape=(1_000_000,), dtype="float16").asnumpy()
    assert x.dtype == np.float16
    assert (x == 0).sum() <= 2          # expected 0.06; the 11-bit grid gave about 488
    assert ((x > 0) & (x < 2.0 ** -11)).sum() > 200      # expected about 488
    assert x.max() < 1 and x.min() >= 0
    assert abs(float(x.astype(np.float64).mean()) - 0.5) < 5 * (1 / 12 / 1e6) ** 0.5
