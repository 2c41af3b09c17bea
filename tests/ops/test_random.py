"""Random operators (mxlite/ops/random.py, mxlite/_core/random.pyx, mxlite/_core/philox.h).

The generator is pinned against the published Random123 known-answer vectors, and the
integer, uniform, normal, exponential and shuffle streams against an independent NumPy
re-implementation of Philox4x32-10 + Lemire written below (never against copied output).
The other distributions are checked by goodness-of-fit tests (scipy.stats KS / chi-square)
with fixed seeds, so each test is deterministic.
"""
import hashlib
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

import mxlite as mx
from mxlite import MXNetError
from mxlite._core import random as _kernels
from mxlite.device.rng import device_key
from mxlite.ops.registry import NON_DIFFERENTIABLE, REGISTRY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLOATS = ["float16", "float32", "float64"]
BIG = 150_000            # above PARALLEL_MIN: the kernels' parallel paths, several chunks
P_MIN = 1e-4             # goodness-of-fit threshold (fixed seeds: deterministic)


# ==== an independent reference: Philox4x32-10 and the stream layout of philox.h ===============
MASK32 = 0xFFFFFFFF
M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
FLAG = 1 << 63


def philox_py(counter, key):
    """Philox4x32-10 on Python ints, straight from the Random123 paper."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & MASK32
        k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
    return c0, c1, c2, c3


def philox_np(index, key, offset):
    """Blocks (n, 4) uint32 for 64-bit counter indices ``index`` (uint64 array)."""
    index = np.asarray(index, dtype=np.uint64)
    u = np.uint64
    c0 = index & u(MASK32)
    c1 = index >> u(32)
    c2 = np.full_like(index, offset & MASK32)
    c3 = np.full_like(index, offset >> 32)
    k0, k1 = key & MASK32, key >> 32
    for _ in range(10):
        p0, p1 = c0 * u(M0), c2 * u(M1)          # < 2^64: exact in uint64
        c0, c1, c2, c3 = ((p1 >> u(32)) ^ c1 ^ u(k0), p1 & u(MASK32),
                          (p0 >> u(32)) ^ c3 ^ u(k1), p0 & u(MASK32))
        k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def words_np(key, offset, n):
    """W[0 .. n) of the direct stream: block t // 4, word t % 4."""
    nblocks = (n + 3) // 4
    return philox_np(np.arange(nblocks, dtype=np.uint64), key, offset).reshape(-1)[:n]


def draws64_np(key, offset, n):
    """The 64-bit draw of elements 0 .. n-1: W[2i] | W[2i+1] << 32."""
    w = words_np(key, offset, 2 * n).astype(np.uint64)
    return w[0::2] | (w[1::2] << np.uint64(32))


def stream_block_np(key, offset, elements, attempt):
    """Block ``attempt`` of the element streams of ``elements``: (n, 4) uint32."""
    index = (np.asarray(elements, dtype=np.uint64) | np.uint64(FLAG)
             | np.uint64(attempt << 48))
    return philox_np(index, key, offset)


def lemire_np(key, offset, low, high, n, dtype):
    """randint as philox.h defines it: Lemire on W[i] (32-bit) or draw64 (wider ranges),
    rejected elements continuing on their own stream."""
    span = high - low
    out = [0] * n
    if span <= 1 << 32:
        x = words_np(key, offset, n).astype(np.uint64)
        if span == 1 << 32:
            values = x.tolist()
            pending = []
        else:
            threshold = (1 << 32) % span
            m = x * np.uint64(span)
            values = (m >> np.uint64(32)).tolist()
            pending = np.nonzero((m & np.uint64(MASK32)) < np.uint64(threshold))[0]
            attempt = 0
            while len(pending):
                block = stream_block_np(key, offset, pending, attempt).astype(np.uint64)
                still = []
                for row, i in zip(block.tolist(), pending.tolist()):
                    for w in row:
                        prod = w * span
                        if prod & MASK32 >= threshold:
                            values[i] = prod >> 32
                            break
                    else:
                        still.append(i)
                pending, attempt = np.array(still, dtype=np.int64), attempt + 1
    else:
        x = draws64_np(key, offset, n).tolist()
        if span == 1 << 64:
            values = x
        else:
            threshold = (1 << 64) % span
            values = []
            for i, xi in enumerate(x):
                attempt, draws = 0, []
                while (xi * span) & (2 ** 64 - 1) < threshold:
                    if not draws:
                        w = stream_block_np(key, offset, [i], attempt)[0].tolist()
                        draws = [w[0] | w[1] << 32, w[2] | w[3] << 32]
                        attempt += 1
                    xi = draws.pop(0)
                values.append((xi * span) >> 64)
    bits = np.dtype(dtype).itemsize * 8
    for i, v in enumerate(values):
        r = (low + v) % (1 << bits)
        out[i] = r - (1 << bits) if r >= 1 << (bits - 1) else r
    return np.array(out, dtype=dtype)


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def device_state():
    """The (seed, offset) the next random call on the current context's device will use."""
    return mx.random.get_state(device_key(mx.current_context()))


# ==== the generator ==========================================================================
KAT = [  # Random123 kat_vectors, philox4x32_10
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


@pytest.mark.cpu_only      # calls the CPU kernels directly
@pytest.mark.parametrize("counter, key, expected", KAT)
def test_philox_known_answers(counter, key, expected):
    assert tuple(_kernels.philox4x32_10(counter, key)) == expected
    assert philox_py(counter, key) == expected        # the reference below is right too
    idx = np.array([counter[0] | counter[1] << 32], dtype=np.uint64)
    block = philox_np(idx, key[0] | key[1] << 32, counter[2] | counter[3] << 32)
    assert tuple(block[0].tolist()) == expected


@pytest.mark.cpu_only      # the CPU's SIMD implementations
@pytest.mark.parametrize("simd", _kernels.available_simd())
def test_every_simd_path_gives_the_reference_words(simd):
    try:
        assert _kernels.use_simd(simd) == simd
        for key, offset in ((0, 0), (0xDEADBEEF12345678, 0xFFFFFFFFFFFFFFFF), (7, 1 << 40)):
            got = np.empty(5000, np.uint32)          # several chunks and a partial one
            _kernels.stream_words(got, key, offset)
            np.testing.assert_array_equal(got, words_np(key, offset, 5000))
        mx.random.seed(11)
        x = mx.nd.random.randint(-5, 2 ** 31 - 1, shape=(BIG,)).asnumpy()
        mx.random.seed(11)
        np.testing.assert_array_equal(x, lemire_np(11, 0, -5, 2 ** 31 - 1, BIG, "int32"))
    finally:
        _kernels.use_simd(None)


@pytest.mark.cpu_only      # the CPU's SIMD implementations
@pytest.mark.parametrize("simd", _kernels.available_simd())
@pytest.mark.parametrize("dist, p0, p1", [("gamma", 2.5, 0.5), ("gamma", 0.3, 1.0),
                                          ("poisson", 40.0, 0.0),
                                          ("negative_binomial", 3.0, 0.4)])
def test_stream_samplers_take_their_first_blocks_from_every_simd_path(simd, dist, p0, p1):
    """fill_stream computes blocks 0 and 1 of a chunk of element streams in SIMD: the samples
    equal those drawn one element at a time from the scalar stream (philox.h's
    mx_stream_sample, run by ``stream_sample``), over several chunks and a partial one."""
    try:
        assert _kernels.use_simd(simd) == simd
        out = np.empty(600, np.float64)
        _kernels.fill_stream(dist, out, 0xDEADBEEF12345678, 1 << 40, p0, p1)
        one = [_kernels.stream_sample(dist, 0xDEADBEEF12345678, 1 << 40, i, p0, p1)
               for i in (0, 1, 255, 256, 257, 511, 512, 599)]
        np.testing.assert_array_equal(out[[0, 1, 255, 256, 257, 511, 512, 599]], one)
    finally:
        _kernels.use_simd(None)


# ==== randint =================================================================================
RANGES = [
    ("int32", 0, 1000),
    ("int32", -(2 ** 31), 2 ** 31),               # the full int32 range: raw words
    ("int32", -7, 3 * 2 ** 29),                   # range 3 * 2^29 + 7: a quarter rejected
    ("int32", -(2 ** 31), 1),                     # range 2^31 + 1: half the words rejected
    ("int64", 0, 1000),
    ("int64", -(2 ** 31), 2 ** 31),
    ("int64", 0, 2 ** 40),                        # 64-bit draws
    ("int64", -(2 ** 62), 2 ** 62 + 1),           # 64-bit draws, half rejected
    ("int64", -(2 ** 63), 2 ** 63),               # the full int64 range: raw draws
    ("int64", -(2 ** 63), 2 ** 63 - 1),           # range 2^64 - 1
    ("int64", 2 ** 63 - 1, 2 ** 63),              # range 1 at the top
]


@pytest.mark.parametrize("dtype, low, high", RANGES)
def test_randint_matches_the_reference_stream(dtype, low, high):
    mx.random.seed(20240601)
    key, offset = device_state()
    x = mx.nd.random.randint(low, high, shape=(3000,), dtype=dtype)
    assert x.dtype == np.dtype(dtype) and x.shape == (3000,)
    want = lemire_np(key, offset, low, high, 3000, dtype)
    # the hash of the first samples pins the stream per dtype and range
    assert sha(x.asnumpy()[:1000]) == sha(want[:1000])
    np.testing.assert_array_equal(x.asnumpy(), want)
    got = x.asnumpy().astype(object)
    assert got.min() >= low and got.max() < high


@pytest.mark.parametrize("dtype, low, high", [("int32", 0, 1000), ("int64", 0, 2 ** 40),
                                              ("int64", -(2 ** 63), 2 ** 63)])
def test_randint_parallel_path_matches_the_reference(dtype, low, high):
    key, offset = device_state()
    x = mx.nd.random.randint(low, high, shape=(BIG,), dtype=dtype).asnumpy()
    np.testing.assert_array_equal(x, lemire_np(key, offset, low, high, BIG, dtype))


def test_randint_full_int64_range_reaches_both_ends():
    mx.random.seed(3)
    x = mx.nd.random.randint(-(2 ** 63), 2 ** 63, shape=(100_000,), dtype="int64").asnumpy()
    assert (x < 0).mean() == pytest.approx(0.5, abs=0.01)
    # P(no sample within 2^63/1000 of an end) = (1 - 1/2000)^100000 ~ e^-50
    assert x.min() < -(2 ** 63) + 2 ** 63 // 1000
    assert x.max() > 2 ** 63 - 2 ** 63 // 1000
    assert len(np.unique(x)) == len(x)


def test_randint_full_int32_range():
    mx.random.seed(4)
    x = mx.nd.random.randint(-(2 ** 31), 2 ** 31, shape=(100_000,)).asnumpy()
    assert x.dtype == np.int32
    assert (x < 0).mean() == pytest.approx(0.5, abs=0.01)
    assert x.min() < -(2 ** 31) + 2 ** 31 // 1000 and x.max() > 2 ** 31 - 2 ** 31 // 1000


@pytest.mark.parametrize("dtype, low", [("int32", 5), ("int32", -(2 ** 31)),
                                        ("int32", 2 ** 31 - 1), ("int64", -(2 ** 63)),
                                        ("int64", 2 ** 63 - 1), ("int64", 0)])
def test_randint_range_of_one_is_always_low(dtype, low):
    x = mx.nd.random.randint(low, low + 1, shape=(1000,), dtype=dtype).asnumpy()
    assert (x == low).all()


def test_randint_range_2_64_minus_1_never_returns_the_top():
    mx.random.seed(5)
    x = mx.nd.random.randint(-(2 ** 63), 2 ** 63 - 1, shape=(20_000,), dtype="int64")
    x = x.asnumpy()
    assert (x < 2 ** 63 - 1).all() and (x < 0).mean() == pytest.approx(0.5, abs=0.02)


def test_randint_odd_even_balance_above_2_24():
    """A float32-based sampler returns only multiples of 128 here (and float64 ones fail
    further up); an exact one gives odd values half the time."""
    mx.random.seed(6)
    for dtype in ("int32", "int64"):
        x = mx.nd.random.randint(2 ** 30, 2 ** 30 + 2 ** 25, shape=(100_000,),
                                 dtype=dtype).asnumpy()
        assert (x % 2).mean() == pytest.approx(0.5, abs=0.01)
        assert (x % 128 != 0).mean() > 0.98
    x = mx.nd.random.randint(2 ** 62, 2 ** 62 + 2 ** 55, shape=(100_000,),
                             dtype="int64").asnumpy()
    assert (x % 2).mean() == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("dtype, low, high", [
    ("int32", 0, 7), ("int32", -3, 10), ("int64", 10, 16),
    ("int64", -(2 ** 40), -(2 ** 40) + 13), ("int64", 0, 2 ** 33 + 3)])
def test_randint_chi_square_uniformity(dtype, low, high):
    mx.random.seed(7)
    x = mx.nd.random.randint(low, high, shape=(70_000,), dtype=dtype).asnumpy()
    if high - low > 100:            # wide range: chi-square on 16 equal buckets of the range
        counts = np.bincount(((x.astype(object) - low) * 16 // (high - low)).astype(np.int64),
                             minlength=16)
        assert stats.chisquare(counts).pvalue > P_MIN
        return
    counts = np.bincount(x - low, minlength=high - low)
    assert len(counts) == high - low
    assert stats.chisquare(counts).pvalue > P_MIN


def test_randint_default_dtype_shape_and_signature():
    x = mx.nd.random.randint(0, 5)
    assert x.dtype == np.int32 and x.shape == (1,)
    assert mx.nd.random.randint(0, 5, shape=()).shape == ()
    assert mx.nd.random.randint(0, 5, shape=(0, 3)).shape == (0, 3)
    assert mx.nd.random.randint(0, 5, (2, 3), "int64").dtype == np.int64
    out = mx.nd.zeros((4,), dtype="int64")
    assert mx.nd.random.randint(10, 20, shape=(4,), dtype="int64", out=out) is out
    assert ((out.asnumpy() >= 10) & (out.asnumpy() < 20)).all()
    assert mx.nd.random_randint(0, 3, shape=(2,)).shape == (2,)


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(low=3, high=3), "low must be < high"),
    (dict(low=5, high=2), "low must be < high"),
    (dict(low=0, high=2 ** 33), "does not fit int32"),
    (dict(low=-(2 ** 31) - 1, high=0), "does not fit int32"),
    (dict(low=0, high=2 ** 63 + 1, dtype="int64"), "does not fit int64"),
    (dict(low=-(2 ** 63) - 1, high=0, dtype="int64"), "does not fit int64"),
    (dict(low=0, high=5, shape=(2, -1)), "negative dimension"),
    (dict(low=0, high=5, dtype="float32"), "dtype"),
    (dict(low=0, high=5, dtype="uint8"), "dtype"),
    (dict(low=0, high=5, dtype="int16"), "dtype"),
    (dict(low=0.5, high=5), "low"),
    (dict(high=5), "low"),
])
def test_randint_errors(kwargs, pattern):
    with pytest.raises(MXNetError, match="_random_randint.*" + pattern):
        mx.nd.random.randint(**kwargs)


# ==== uniform / normal / exponential against the reference ====================================
def unit32(w):
    return (w >> np.uint32(8)).astype(np.float64) * 2.0 ** -24


def unit64(x):
    return (x >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def ref_continuous(dist, key, offset, n, dtype, a, b):
    if dtype == "float64":
        x = draws64_np(key, offset, n + (n & 1))
        if dist == "uniform":
            v = a + b * unit64(x)
        elif dist == "exponential":
            v = -np.log(unit64(x) + 2.0 ** -54) * b
        else:
            r = np.sqrt(-2 * np.log(unit64(x[0::2]) + 2.0 ** -54))
            theta = 2 * np.pi * unit64(x[1::2])
            v = np.stack([a + b * r * np.cos(theta), a + b * r * np.sin(theta)], 1).reshape(-1)
        return v[:n]
    w = words_np(key, offset, n + (n & 1))
    if dist == "uniform":
        # float16 and float32 both draw 24 bits (float16 rounds the float32 sample)
        v = a + b * ((w >> np.uint32(8)).astype(np.float64) * 2.0 ** -24)
    elif dist == "exponential":
        v = -np.log((w.astype(np.float64) + 0.5) * 2.0 ** -32) * b
    else:
        r = np.sqrt(-2 * np.log((w[0::2].astype(np.float64) + 0.5) * 2.0 ** -32))
        theta = 2 * np.pi * (w[1::2].astype(np.float64) * 2.0 ** -32)
        v = np.stack([a + b * r * np.cos(theta), a + b * r * np.sin(theta)], 1).reshape(-1)
    return v[:n]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 3001, BIG])
def test_uniform_matches_the_reference(dtype, n):
    key, offset = device_state()
    x = mx.nd.random.uniform(-2.0, 3.0, shape=(n,), dtype=dtype).asnumpy()
    want = ref_continuous("uniform", key, offset, n, dtype, -2.0, 5.0)
    if dtype != "float64":
        want = want.astype(np.float32)      # computed in float64, stored via float32
    top = np.nextafter(np.array(3.0, dtype), np.array(-np.inf, dtype))
    np.testing.assert_array_equal(x, np.minimum(want.astype(dtype), top))


@pytest.mark.parametrize("dist, a, b", [("normal", 1.5, 2.0), ("exponential", 0.0, 0.25)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_and_exponential_match_the_reference(dist, a, b, dtype):
    key, offset = device_state()
    n = 5001
    if dist == "normal":
        x = mx.nd.random.normal(a, b, shape=(n,), dtype=dtype)
    else:
        x = mx.nd.random.exponential(1 / b, shape=(n,), dtype=dtype)
    want = ref_continuous(dist, key, offset, n, dtype, a, b).astype(dtype)
    # float32 normals are computed in float (logf, sinf, cosf): a few float32 ulps of r * cos
    rtol = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(x.asnumpy(), want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_bounds_and_default_interval(dtype):
    mx.random.seed(8)
    x = mx.nd.random.uniform(shape=(200_000,), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype)
    assert x.min() >= 0 and x.max() < 1
    assert x.min() < 1e-3 and x.max() > 1 - 1e-3
    # an interval whose upper end rounds: the stored values stay below the stored high
    y = mx.nd.random.uniform(0.1, 0.1000001, shape=(10_000,), dtype=dtype).asnumpy()
    lo, hi = np.array(0.1, dtype), np.array(0.1000001, dtype)
    if lo < hi:
        assert (y >= lo).all() and (y < hi).all() and (y == y.max()).any()
    else:                           # float16: both ends round to the same value
        assert (y == lo).all()
    assert (mx.nd.random.uniform(2.5, 2.5, shape=(5,), dtype=dtype).asnumpy() == 2.5).all()
    wide = mx.nd.random.uniform(-1e308, 1e308, shape=(1000,), dtype="float64").asnumpy()
    assert np.isfinite(wide).all() and (wide < 1e308).all() and (wide < 0).any()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dist, kwargs, frozen", [
    ("uniform", dict(low=-1.0, high=3.0), stats.uniform(-1, 4)),
    ("normal", dict(loc=2.0, scale=3.0), stats.norm(2, 3)),
    ("exponential", dict(lam=4.0), stats.expon(scale=0.25)),
    ("gamma", dict(alpha=0.3, beta=2.0), stats.gamma(0.3, scale=2.0)),
    ("gamma", dict(alpha=1.0, beta=1.0), stats.gamma(1.0)),
    ("gamma", dict(alpha=4.5, beta=0.5), stats.gamma(4.5, scale=0.5)),
])
def test_continuous_goodness_of_fit(dist, kwargs, frozen, dtype):
    mx.random.seed(9)
    x = getattr(mx.nd.random, dist)(shape=(20_000,), dtype=dtype, **kwargs).asnumpy()
    assert x.dtype == np.dtype(dtype)
    assert stats.kstest(x.astype(np.float64), frozen.cdf).pvalue > P_MIN


def test_gamma_parallel_path_and_tiny_shape():
    mx.random.seed(10)
    x = mx.nd.random.gamma(2.0, 3.0, shape=(BIG,), dtype="float64").asnumpy()
    assert stats.kstest(x, stats.gamma(2.0, scale=3.0).cdf).pvalue > P_MIN
    tiny = mx.nd.random.gamma(1e-3, 1.0, shape=(1000,)).asnumpy()
    assert np.isfinite(tiny).all() and (tiny >= 0).all()


def discrete_fit(x, pmf, kmax):
    """Chi-square p-value of integer samples ``x`` against ``pmf`` on 0..kmax plus the tail;
    cells expected to hold fewer than 5 samples are pooled."""
    assert (x == np.floor(x)).all() and (x >= 0).all()
    observed = np.bincount(np.minimum(x, kmax + 1).astype(np.int64), minlength=kmax + 2)
    p = pmf(np.arange(kmax + 1))
    expected = np.append(p, max(1.0 - p.sum(), 0.0)) * len(x)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 1e-9:
        assert obs[-1] == 0
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dist, kwargs, frozen, kmax", [
    ("poisson", dict(lam=0.5), stats.poisson(0.5), 8),
    ("poisson", dict(lam=4.0), stats.poisson(4.0), 20),
    ("poisson", dict(lam=9.9), stats.poisson(9.9), 30),
    ("poisson", dict(lam=10.0), stats.poisson(10.0), 30),     # first lam on PTRS
    ("poisson", dict(lam=57.0), stats.poisson(57.0), 100),
    ("negative_binomial", dict(k=3, p=0.4), stats.nbinom(3, 0.4), 40),
    ("negative_binomial", dict(k=1, p=0.9), stats.nbinom(1, 0.9), 10),
    ("generalized_negative_binomial", dict(mu=2.0, alpha=0.3),
     stats.nbinom(1 / 0.3, 1 / (1 + 0.3 * 2.0)), 30),
    ("generalized_negative_binomial", dict(mu=3.0, alpha=0.0), stats.poisson(3.0), 20),
])
def test_discrete_goodness_of_fit(dist, kwargs, frozen, kmax, dtype):
    mx.random.seed(12)
    x = getattr(mx.nd.random, dist)(shape=(20_000,), dtype=dtype, **kwargs).asnumpy()
    assert x.dtype == np.dtype(dtype)
    assert discrete_fit(x.astype(np.float64), frozen.pmf, kmax) > P_MIN


def test_poisson_large_rates_and_degenerate_parameters():
    mx.random.seed(13)
    for lam in (1e6, 1e12):
        x = mx.nd.random.poisson(lam, shape=(20_000,), dtype="float64").asnumpy()
        assert (x == np.floor(x)).all()
        assert abs(x.mean() - lam) < 5 * math.sqrt(lam / len(x))
        assert x.var() == pytest.approx(lam, rel=0.05)
    assert (mx.nd.random.poisson(0.0, shape=(100,)).asnumpy() == 0).all()
    assert (mx.nd.random.negative_binomial(5, 1.0, shape=(100,)).asnumpy() == 0).all()
    assert (mx.nd.random.generalized_negative_binomial(0.0, 0.5, shape=(50,)).asnumpy()
            == 0).all()
    # a tiny success probability: huge gamma rates, PTRS must stay accurate and terminate
    x = mx.nd.random.negative_binomial(2, 1e-9, shape=(2000,), dtype="float64").asnumpy()
    assert np.isfinite(x).all() and x.mean() == pytest.approx(2 * (1 - 1e-9) / 1e-9, rel=0.1)


def test_poisson_parallel_path():
    mx.random.seed(14)
    x = mx.nd.random.poisson(3.0, shape=(BIG,)).asnumpy()
    assert discrete_fit(x.astype(np.float64), stats.poisson(3.0).pmf, 15) > P_MIN


CONTINUOUS_ERRORS = [
    ("uniform", dict(low=2.0, high=1.0), "low must be <= high"),
    ("uniform", dict(low=float("nan")), "low must be finite"),
    ("uniform", dict(high=float("inf")), "high must be finite"),
    ("normal", dict(scale=-1.0), "scale"),
    ("normal", dict(loc=float("nan")), "loc"),
    ("exponential", dict(lam=0.0), "lam"),
    ("exponential", dict(lam=-2.0), "lam"),
    ("gamma", dict(alpha=0.0), "alpha"),
    ("gamma", dict(beta=-1.0), "beta"),
    ("gamma", dict(alpha=float("inf")), "alpha"),
    ("poisson", dict(lam=-1.0), "lam"),
    ("poisson", dict(lam=float("nan")), "lam"),
    ("negative_binomial", dict(k=0), "k"),
    ("negative_binomial", dict(p=0.0), "p must be in"),
    ("negative_binomial", dict(p=1.5), "p must be in"),
    ("generalized_negative_binomial", dict(mu=-1.0), "mu"),
    ("generalized_negative_binomial", dict(alpha=-0.1), "alpha"),
    ("uniform", dict(shape=(2, -3)), "negative dimension"),
    ("normal", dict(dtype="int32"), "dtype"),
    ("gamma", dict(dtype="uint8"), "dtype"),
    ("poisson", dict(dtype="bool"), "dtype"),
]


@pytest.mark.parametrize("dist, kwargs, pattern", CONTINUOUS_ERRORS)
def test_distribution_parameter_errors(dist, kwargs, pattern):
    with pytest.raises(MXNetError, match=f"_random_{dist}.*{pattern}"):
        getattr(mx.nd.random, dist)(**kwargs)
    like = {k: v for k, v in kwargs.items() if k not in ("shape", "dtype")}
    if like:
        with pytest.raises(MXNetError, match=f"_random_{dist}_like.*{pattern}"):
            getattr(mx.nd.random, dist + "_like")(mx.nd.zeros((2,)), **like)


@pytest.mark.parametrize("dist", ["uniform", "normal", "exponential", "gamma", "poisson",
                                  "negative_binomial", "generalized_negative_binomial"])
def test_like_variants_take_shape_and_dtype_from_data(dist):
    like = getattr(mx.nd.random, dist + "_like")
    for dtype in FLOATS:
        data = mx.nd.array(np.full((3, 0, 2) if dtype == "float16" else (4, 5), 7.0), dtype=dtype)
        x = like(data)
        assert x.shape == data.shape and x.dtype == np.dtype(dtype)
        assert (data.asnumpy() == 7.0).all()
    with pytest.raises(MXNetError, match=f"_random_{dist}_like.*float dtype"):
        like(mx.nd.zeros((2,), dtype="int32"))
    # the same stream as the shape-taking operator
    mx.random.seed(31)
    a = like(mx.nd.zeros((5, 3), dtype="float64")).asnumpy()
    mx.random.seed(31)
    np.testing.assert_array_equal(getattr(mx.nd.random, dist)(shape=(5, 3), dtype="float64")
                                  .asnumpy(), a)


def test_shapes_dtypes_and_out():
    assert mx.nd.random.uniform().shape == (1,)               # MXNet's default
    assert mx.nd.random.normal(shape=()).shape == ()
    assert mx.nd.random.gamma(shape=(0, 4)).shape == (0, 4)
    assert mx.nd.random.uniform(shape=5).shape == (5,)
    assert mx.nd.random.uniform(shape=(2, 3)).dtype == np.float32
    out = mx.nd.zeros((3, 2), dtype="float64")
    assert mx.nd.random.normal(shape=(3, 2), dtype="float64", out=out) is out
    assert (out.asnumpy() != 0).all()
    with pytest.raises(MXNetError, match="_random_normal.*dtype"):
        mx.nd.random.normal(shape=(3, 2), out=out)            # float32 result, float64 out
    assert mx.nd.uniform(shape=(2,)).shape == (2,)             # MXNet's deprecated aliases
    assert mx.nd.random_normal(shape=(2,)).shape == (2,)
    assert mx.nd.random_gamma(shape=(2,)).shape == (2,)


# ==== seeds, offsets, threads =================================================================
def test_seed_reproduces_and_consecutive_calls_differ():
    mx.random.seed(123)
    a = mx.nd.random.uniform(shape=(100,)).asnumpy()
    b = mx.nd.random.uniform(shape=(100,)).asnumpy()
    c = mx.nd.random.randint(0, 2 ** 31 - 1, shape=(100,)).asnumpy()
    assert not np.array_equal(a, b)
    mx.random.seed(123)
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(100,)).asnumpy(), a)
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(100,)).asnumpy(), b)
    np.testing.assert_array_equal(mx.nd.random.randint(0, 2 ** 31 - 1, shape=(100,)).asnumpy(), c)
    mx.random.seed(124)
    assert not np.array_equal(mx.nd.random.uniform(shape=(100,)).asnumpy(), a)


def test_every_call_advances_the_offset_by_one():
    mx.random.seed(2 ** 64 - 1)
    assert device_state() == (2 ** 64 - 1, 0)
    calls = [lambda: mx.nd.random.uniform(shape=(3,)), lambda: mx.nd.random.randint(0, 9),
             lambda: mx.nd.random.gamma(shape=(0,)), lambda: mx.nd.random.shuffle(mx.nd.ones(4)),
             lambda: mx.nd.random.multinomial(mx.nd.array([0.5, 0.5])),
             lambda: mx.nd.random.normal_like(mx.nd.ones(2))]
    for i, call in enumerate(calls, 1):
        call()
        assert device_state() == (2 ** 64 - 1, i)


@pytest.mark.cpu_only      # CPU contexts share one generator (tests/gpu/test_random.py: GPU)
def test_seed_per_context_and_all():
    mx.random.seed(1)
    a = mx.nd.random.uniform(shape=(10,)).asnumpy()
    mx.random.seed(99)
    mx.random.seed(1, ctx=mx.cpu())
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(10,)).asnumpy(), a)
    mx.random.seed(1, ctx=mx.cpu(1))                   # one generator for every CPU
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(10,), ctx=mx.cpu(1)).asnumpy(), a)
    mx.random.seed(-1)
    assert device_state() == (2 ** 64 - 1, 0)
    for bad in (1.5, "3", None, True, 2 ** 64, -(2 ** 63) - 1):
        with pytest.raises(MXNetError, match="seed"):
            mx.random.seed(bad)
    with pytest.raises(MXNetError, match="ctx"):
        mx.random.seed(1, ctx="cpu")


THREAD_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import mxlite as mx
    n = int(sys.argv[1])
    mx.random.seed(77)
    outs = [
        mx.nd.random.randint(-5, 2 ** 31 + 1, shape=(n,), dtype="int64"),
        mx.nd.random.randint(0, 2 ** 40, shape=(n,), dtype="int64"),
        mx.nd.random.uniform(shape=(n,)),
        mx.nd.random.normal(shape=(n,), dtype="float64"),
        mx.nd.random.exponential(shape=(n,), dtype="float16"),
        mx.nd.random.gamma(0.7, shape=(n // 4,)),
        mx.nd.random.poisson(30.0, shape=(n // 4,)),
        mx.nd.random.multinomial(mx.nd.array(np.ones((n // 8, 5))), shape=4),
        mx.nd.random.shuffle(mx.nd.arange(n)),
    ]
    for o in outs:
        print(hashlib.sha256(o.asnumpy().tobytes()).hexdigest())
""")


def test_same_numbers_for_one_and_two_threads():
    def run(threads):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=ROOT)
        done = subprocess.run([sys.executable, "-c", THREAD_SCRIPT, str(2 * BIG)], env=env,
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()
    one, two = run(1), run(2)
    assert len(one) == 9 and one == two


# ==== multinomial =============================================================================
def test_multinomial_goodness_of_fit_and_zero_probabilities():
    mx.random.seed(15)
    p = np.array([[0.0, 1.0, 2.0, 3.0, 4.0], [4.0, 0.0, 3.0, 0.0, 1.0]])   # not normalised
    for dtype in FLOATS:
        x = mx.nd.random.multinomial(mx.nd.array(p, dtype=dtype), shape=20_000).asnumpy()
        assert x.shape == (2, 20_000) and x.dtype == np.int32
        for row, probs in zip(x, p):
            counts = np.bincount(row, minlength=5)
            assert (counts[probs == 0] == 0).all()
            nz = probs > 0
            assert stats.chisquare(counts[nz], probs[nz] / probs.sum() * len(row)).pvalue > P_MIN


def test_multinomial_shapes_get_prob_and_dtype():
    p = (np.random.default_rng(0).random((3, 2, 6)) + 0.01).astype(np.float32)
    data = mx.nd.array(p)
    x = mx.nd.random.multinomial(data)
    assert x.shape == (3, 2) and x.dtype == np.int32
    idx, logp = mx.nd.random.multinomial(data, shape=(4, 5), get_prob=True, dtype="int64")
    assert idx.shape == logp.shape == (3, 2, 4, 5)
    assert idx.dtype == np.int64 and logp.dtype == np.float32
    i = idx.asnumpy()
    p64 = p.astype(np.float64)
    want = np.log(np.take_along_axis(p64, i.reshape(3, 2, 20), -1) / p64.sum(-1, keepdims=True))
    np.testing.assert_allclose(logp.asnumpy().reshape(3, 2, 20), want, rtol=1e-5)
    one = mx.nd.random.multinomial(mx.nd.array([0.2, 0.8]), shape=3)
    assert one.shape == (3,)
    assert mx.nd.random.multinomial(mx.nd.array(np.ones((0, 3)))).shape == (0,)
    u8 = mx.nd.random.multinomial(mx.nd.array([1.0]), dtype="uint8")
    assert u8.shape == () and u8.dtype == np.uint8 and u8.asnumpy().item() == 0
    f = mx.nd.random.multinomial(mx.nd.array([0.0, 0.0, 1.0]), shape=4, dtype="float32")
    assert f.dtype == np.float32 and f.asnumpy().tolist() == [2.0] * 4
    big = mx.nd.random.multinomial(mx.nd.array(np.ones((BIG // 8, 3))), shape=8)
    assert set(np.unique(big.asnumpy()).tolist()) == {0, 1, 2}


@pytest.mark.parametrize("data, kwargs, pattern", [
    (np.array(0.5), {}, "at least 1 dimension"),
    (np.ones((2, 0)), {}, "no categories"),
    (np.array([[0.5, -0.1, 0.6], [0.1, 0.2, 0.7]]), {}, r"row \(0,\)"),
    (np.array([[0.5, 0.5], [0.0, 0.0]]), {}, r"row \(1,\)"),
    (np.array([0.5, np.nan]), {}, "row"),
    (np.array([0.5, np.inf]), {}, "row"),
    (np.ones(300), dict(dtype="uint8"), "cannot hold"),
    (np.ones(300), dict(dtype="bool"), "dtype"),
    (np.ones(3), dict(shape=(-1,)), "negative dimension"),
])
def test_multinomial_errors(data, kwargs, pattern):
    with pytest.raises(MXNetError, match="_sample_multinomial.*" + pattern):
        mx.nd.random.multinomial(mx.nd.array(data), **kwargs)


def test_multinomial_rejects_integer_data():
    with pytest.raises(MXNetError, match="_sample_multinomial.*float"):
        mx.nd.random.multinomial(mx.nd.array([1, 2], dtype="int32"))


# ==== shuffle =================================================================================
def ref_permutation(key, offset, n):
    """Fisher-Yates as the kernel defines it: draw j is Lemire on element j's 64-bit draw."""
    x = draws64_np(key, offset, n).tolist()
    perm = list(range(n))
    for j in range(n - 1):
        span = n - j
        threshold = (1 << 64) % span
        xj, attempt, draws = x[j], 0, []
        while (xj * span) & (2 ** 64 - 1) < threshold:
            if not draws:
                w = stream_block_np(key, offset, [j], attempt)[0].tolist()
                draws, attempt = [w[0] | w[1] << 32, w[2] | w[3] << 32], attempt + 1
            xj = draws.pop(0)
        r = j + ((xj * span) >> 64)
        perm[j], perm[r] = perm[r], perm[j]
    return np.array(perm)


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "float16", "int64"])
def test_shuffle_matches_the_reference_and_keeps_rows(dtype):
    data = np.arange(1000 * 3).reshape(1000, 3).astype(dtype)
    key, offset = device_state()
    x = mx.nd.random.shuffle(mx.nd.array(data, dtype=dtype))
    assert x.dtype == np.dtype(dtype) and x.shape == data.shape
    np.testing.assert_array_equal(x.asnumpy(), data[ref_permutation(key, offset, 1000)])


def test_shuffle_permutations_are_uniform():
    mx.random.seed(16)
    data = mx.nd.array([0, 1, 2, 3])
    counts = {}
    for _ in range(4800):
        key = tuple(mx.nd.random.shuffle(data).asnumpy().astype(int).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 24
    assert stats.chisquare(list(counts.values())).pvalue > P_MIN


def test_shuffle_corner_cases():
    x = mx.nd.array(np.arange(BIG))
    y = mx.nd.random.shuffle(x).asnumpy()
    assert sorted(y.tolist()) == list(range(BIG)) and not np.array_equal(y, np.arange(BIG))
    assert (x.asnumpy() == np.arange(BIG)).all()              # a copy: data unchanged
    assert mx.nd.random.shuffle(mx.nd.array(3.0)).asnumpy() == 3.0
    assert mx.nd.random.shuffle(mx.nd.zeros((0, 4))).shape == (0, 4)
    assert mx.nd.random.shuffle(mx.nd.array([[1, 2]])).asnumpy().tolist() == [[1, 2]]
    t = mx.nd.array(np.arange(12).reshape(3, 4)).T            # a transposed (copied) input
    rows = {tuple(r) for r in mx.nd.random.shuffle(t).asnumpy().tolist()}
    assert rows == {tuple(r) for r in np.arange(12).reshape(3, 4).T.tolist()}
    assert mx.nd.shuffle(mx.nd.ones(3)).shape == (3,)          # MXNet's alias
    assert mx.nd._internal._shuffle(mx.nd.ones(3)).shape == (3,)


# ==== mx.random, gradients, registry ==========================================================
def test_mx_random_module():
    mx.random.seed(5)
    a = mx.random.uniform(-1, 1, shape=(2, 3))
    mx.random.seed(5)
    np.testing.assert_array_equal(mx.nd.random.uniform(-1, 1, shape=(2, 3)).asnumpy(),
                                  a.asnumpy())
    assert mx.random.uniform().shape == (1,)
    out = mx.nd.zeros((2, 2))
    assert mx.random.normal(out=out) is out                   # shape taken from out
    out64 = mx.nd.zeros((3,), dtype="int64")
    assert mx.random.randint(0, 9, out=out64) is out64        # and the dtype
    assert mx.random.uniform(out=mx.nd.zeros((2,), dtype="float64")).dtype == np.float64
    assert mx.random.randn(2, 3).shape == (2, 3)
    assert mx.random.randn((4,), dtype="float64").dtype == np.float64
    assert mx.nd.random.randn(3, 2, loc=5.0).shape == (3, 2)
    mx.random.seed(8)
    z = mx.nd.random.randn(1000, scale=2.0).asnumpy()
    mx.random.seed(8)
    np.testing.assert_array_equal(mx.nd.random.normal(0, 2.0, shape=(1000,)).asnumpy(), z)
    assert mx.random.randint(0, 4, shape=(5,)).dtype == np.int32
    assert mx.random.exponential(2.0, shape=(3,)).shape == (3,)
    assert mx.random.gamma(2.0, 1.0, shape=(3,)).shape == (3,)
    assert mx.random.poisson(2.0, shape=(3,)).shape == (3,)
    assert mx.random.negative_binomial(2, 0.5, shape=(3,)).shape == (3,)
    assert mx.random.generalized_negative_binomial(2.0, 0.5, shape=(3,)).shape == (3,)
    assert mx.random.multinomial(mx.nd.array([0.5, 0.5]), shape=4).shape == (4,)
    assert mx.random.shuffle(mx.nd.ones((3, 2))).shape == (3, 2)
    assert mx.random.uniform(ctx=mx.current_context(), dtype="float16").dtype == np.float16
    with pytest.raises(MXNetError, match="uniform.*low.*number"):
        mx.random.uniform(mx.nd.zeros(2), 1)
    with pytest.raises(MXNetError, match="_random_randint.*low must be < high"):
        mx.random.randint(3, 3)


RANDOM_OPS = sorted(name for name, op in REGISTRY.items()   # the samplers (the densities
                    if op.name == name and (name.startswith(("_random_", "_sample_"))  # are
                                            or name == "_shuffle")               # functions)
                    and not name.startswith("_random_pdf_"))


def test_all_random_ops_are_registered():
    assert set(RANDOM_OPS) >= {
        "_random_uniform", "_random_normal", "_random_randint", "_random_exponential",
        "_random_gamma", "_random_poisson", "_random_negative_binomial",
        "_random_generalized_negative_binomial", "_sample_multinomial", "_shuffle",
        "_random_uniform_like", "_random_normal_like", "_random_gamma_like",
        "_random_exponential_like", "_random_poisson_like", "_random_negative_binomial_like",
        "_random_generalized_negative_binomial_like"}


@pytest.mark.parametrize("name", RANDOM_OPS)
def test_random_ops_are_non_differentiable(name):
    assert REGISTRY[name].gradient == NON_DIFFERENTIABLE


def test_recording_a_random_like_op_gives_no_gradient_through_data():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        noise = mx.nd.random.normal_like(x)
        y = x * noise
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), noise.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [0.2, 0.5, 1.0, 3.0, 20.0, 1000.0])
def test_gamma_goodness_of_fit_over_shapes(alpha, dtype):
    """The float (float32) and double (float64) Marsaglia-Tsang samplers against scipy's gamma
    CDF, boosted shapes (< 1) to large ones; 100k samples, a mean within 4 standard errors
    too (a wrong squeeze, log or normal shows in one or the other)."""
    mx.random.seed(31)
    x = mx.nd.random.gamma(alpha, 1.5, shape=(100_000,), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype) and np.isfinite(x).all() and (x >= 0).all()
    x = x.astype(np.float64)
    assert stats.kstest(x, stats.gamma(alpha, scale=1.5).cdf).pvalue > P_MIN
    assert abs(x.mean() - 1.5 * alpha) < 4 * 1.5 * np.sqrt(alpha / x.size)
