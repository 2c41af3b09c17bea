"""The stores of the samplers' CPU kernels (mxlite/_core/random.pyx): ``affine_into``, the
transform of ``_sample_uniform/normal/exponential`` (``min(z b + a, top)`` in double, rounded
once to the output dtype), and ``to_half``, the float16 store of every float16 sample, against
the NumPy expressions they replace, bit for bit: float32 and float64 samples into float16,
float32 and float64, values at float16's rounding ties and range ends, chunks over several
threads; the samplers draw into a CPU output directly; bad arguments are clear errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite._core import random as _k
from mxlite.device import rng as _rng
from mxlite.ops import sampling as _sampling

pytestmark = pytest.mark.cpu_only      # the CPU kernel (the GPU samplers are their own)


def _numpy(z, dtype, a, b, top):
    """The reference: the float64 copy of z scaled, shifted, clipped, then cast."""
    t = z.astype(np.float64)
    t *= b
    t += a
    np.minimum(t, top, out=t)
    with np.errstate(over="ignore"):
        return t.astype(dtype)


def _samples(zdtype, n=300_000):
    rng = np.random.default_rng(len(zdtype))
    z = rng.normal(0.0, 3.0, n)
    # float16 ties and near-ties (1 + 2**-11 +- tiny), its largest values, subnormals, zeros
    z[:12] = [1 + 2.0 ** -11, 1 + 2.0 ** -11 + 2.0 ** -40, 1 + 3 * 2.0 ** -11, 65504.0,
              65519.99, 65520.0, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, -0.0, 0.0, 1e300]
    with np.errstate(over="ignore"):
        return z.astype(zdtype)


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    bits = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


@pytest.mark.parametrize("zdtype", ["float32", "float64"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("a, b, top", [(0.0, 1.0, np.inf), (3.0, 0.5, np.inf),
                                       (-2.0, 4.0, 1.9990234375), (0.0, 0.25, 0.0)])
def test_affine_matches_numpy(zdtype, dtype, a, b, top):
    z = _samples(zdtype)
    out = np.empty(z.size, dtype)
    _k.affine_into(z, out, a, b, top)
    _same_bits(out, _numpy(z, dtype, a, b, top))


@pytest.mark.parametrize("dist, params", [
    ("normal", dict(mu=(0.0, 3.0), sigma=(1.0, 0.5))), ("exponential", dict(lam=(1.0, 4.0))),
    ("uniform", dict(low=(-2.0, 0.5), high=(2.0, 0.75)))])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sampler_is_the_transform_of_its_standard_samples(dist, params, dtype):
    """Each parameter's run: the NumPy expression on the standard samples of its part of the
    stream (drawn into the output directly, through blocks of BLOCK elements)."""
    per = _sampling.BLOCK + 5000
    arrays = [mx.nd.array(v, dtype="float64") for v in params.values()]
    mx.random.seed(21)
    key, offset = _rng.get_state(_rng.device_key(mx.cpu()))
    got = getattr(mx.nd, f"sample_{dist}")(*arrays, shape=(per,), dtype=dtype).asnumpy()
    work = np.float64 if dtype == "float64" else np.float32
    z = np.empty(2 * per, work)
    _sampling._standard(dist, z, key, offset, 0)
    coef = _sampling.coefficients(dist, [np.array(v) for v in params.values()], np.dtype(dtype))
    for j in range(2):
        want = _numpy(z[j * per:(j + 1) * per], dtype, coef[0][j], coef[1][j], coef[2][j])
        _same_bits(got[j], want)


def test_float16_store_rounds_once_from_double():
    """Every kind of float64 (random bits over float16's whole range and beyond: subnormal
    results, ties, overflow, infinities) stored as float16 as NumPy casts it."""
    rng = np.random.default_rng(12)
    exponent = rng.integers(1023 - 30, 1023 + 18, 400_000).astype(np.uint64)
    mantissa = rng.integers(0, 1 << 52, 400_000, dtype=np.uint64)
    mantissa[::3] &= ~np.uint64((1 << 41) - 1)             # ties and near-ties at 2**-11
    sign = rng.integers(0, 2, 400_000).astype(np.uint64) << np.uint64(63)
    z = (sign | (exponent << np.uint64(52)) | mantissa).view(np.float64)
    z[:6] = [np.inf, -np.inf, 0.0, -0.0, 5e-324, -1e308]
    out = np.empty(z.size, np.float16)
    _k.affine_into(z, out, 0.0, 1.0, np.inf)
    _same_bits(out, _numpy(z, "float16", 0.0, 1.0, np.inf))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_to_half_is_numpys_cast(dtype):
    """Random bit patterns over float16's whole range and beyond (ties included), zeros,
    infinities and NaN."""
    rng = np.random.default_rng(13)
    info = np.finfo(dtype)
    width, bias = info.bits, info.maxexp - 1
    mbits = info.nmant
    u = np.dtype(f"u{width // 8}").type
    exponent = rng.integers(bias - 30, bias + 18, 300_000).astype(u)
    mantissa = rng.integers(0, 1 << mbits, 300_000, dtype=np.uint64).astype(u)
    mantissa[::3] &= ~u((1 << (mbits - 11)) - 1)            # ties and near-ties
    sign = rng.integers(0, 2, 300_000).astype(u) << u(width - 1)
    x = (sign | (exponent << u(mbits)) | mantissa).view(dtype)
    x[:6] = [np.inf, -np.inf, 0.0, -0.0, np.nan, -np.nan]
    out = np.empty(x.size, np.float16)
    _k.to_half(x, out)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    _same_bits(out[6:], want[6:])
    np.testing.assert_array_equal(out[:6], want[:6])            # NaN payloads aside


def test_float16_random_output_is_the_rounded_float32_draw():
    """mx.nd.random.uniform into float16 past F16_BLOCK: NumPy's cast of the float32 draw of
    the whole, block for block."""
    from mxlite.ops import random as _random
    n = _random.F16_BLOCK + 3000
    mx.random.seed(5)
    key, offset = _rng.get_state(_rng.device_key(mx.cpu()))
    got = mx.nd.random.normal(0, 2, shape=(n,), dtype="float16").asnumpy()
    z = np.empty(n, np.float32)
    _k.fill_continuous("normal", z, key, offset, 0.0, 2.0)
    _same_bits(got, z.astype(np.float16))


def test_bad_arguments_are_clear_errors():
    z = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="affine_into: z must be"):
        _k.affine_into(z.astype(np.float16), np.zeros(8, np.float32), 0.0, 1.0, np.inf)
    with pytest.raises(ValueError, match="affine_into: out must be .* of z's 8 elements"):
        _k.affine_into(z, np.zeros(7, np.float32), 0.0, 1.0, np.inf)
    with pytest.raises(ValueError, match="affine_into: out must be"):
        _k.affine_into(z, np.zeros(8, np.int32), 0.0, 1.0, np.inf)
    with pytest.raises(ValueError, match="affine_into: out must be"):
        _k.affine_into(z, np.zeros(16, np.float32)[::2], 0.0, 1.0, np.inf)
    with pytest.raises(ValueError, match="to_half: src must be"):
        _k.to_half(z.astype(np.float16), np.zeros(8, np.float16))
    with pytest.raises(ValueError, match="to_half: dst must be .* of src's 8 elements"):
        _k.to_half(z, np.zeros(9, np.float16))
