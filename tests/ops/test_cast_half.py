"""The compiled float16 casts (mxlite/_core/copy.pyx ``cast_half``, behind the CPU's
``cast_into`` and the float16 ops' float32 work copies) give NumPy's bits: every float16 to
float32/float64, and float32/float64 bit patterns to float16 (random ones, the float16
values and the midpoints between them a rounding step apart, signaling NaNs, overflow,
subnormals)."""
import numpy as np
import pytest

from mxlite._core.copy import cast_half
from mxlite.device import cpu
from simd_levels import outputs_at_each_level

pytestmark = pytest.mark.cpu_only       # a CPU kernel


def _numpy(src, dtype):
    with np.errstate(all="ignore"):
        return src.astype(dtype)


def _ours(src, dtype):
    out = np.empty(src.shape, dtype)
    cast_half(src, out)
    return out


def _bits(a):
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


@pytest.mark.parametrize("wide", [np.float32, np.float64])
def test_every_float16_widens_as_numpy(wide):
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    assert (_bits(_ours(h, wide)) == _bits(_numpy(h, wide))).all()


def _edges(wide):
    """Every float16 value, the midpoints to its neighbours and a step either side of them
    (in ``wide``), infinities, NaNs with every float16 payload, huge and tiny values."""
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h)].astype(wide)
    with np.errstate(all="ignore"):
        up = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(wide)
    mid = (h + up) / 2
    steps = [np.nextafter(mid, wide(np.inf)), np.nextafter(mid, wide(-np.inf))]
    ubits = np.uint32 if wide == np.float32 else np.uint64
    shift = 13 if wide == np.float32 else 42
    top = ubits(0x7f800000) if wide == np.float32 else ubits(0x7ff0000000000000)
    payload = np.arange(1 << 10, dtype=ubits) << ubits(shift)
    low = np.arange(1, 1 << 6, dtype=ubits)                 # payloads below float16's
    nans = np.concatenate([top | payload, top | low, (top | low) | (ubits(1) << ubits(
        8 * np.dtype(wide).itemsize - 1))]).view(wide)
    big = np.array([65504, 65519.99, 65520, 1e6, 1e300 if wide == np.float64 else 3e38,
                    np.inf, 2.0 ** -25, 2.0 ** -26, 1e-30, 0.0], wide)
    return np.concatenate([h, mid] + steps + [nans, big, -big])


@pytest.mark.parametrize("wide", [np.float32, np.float64])
def test_narrowing_matches_numpy(wide):
    x = _edges(wide)
    rng = np.random.default_rng(5)
    ubits = np.uint32 if wide == np.float32 else np.uint64
    raw = rng.integers(0, np.iinfo(ubits).max, 1 << 20, dtype=ubits, endpoint=True).view(wide)
    with np.errstate(all="ignore"):
        scaled = raw * wide(2.0 ** -100) if wide == np.float64 else raw
    for src in (x, raw, scaled):
        got, want = _bits(_ours(src, np.float16)), _bits(_numpy(src, np.float16))
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (src[bad[:3]], got[bad[:3]], want[bad[:3]])


def test_cast_into_and_converted_take_the_kernel_alike():
    """cast_into (any shape: C-contiguous both) and converted give NumPy's results, and fall
    back to NumPy for strided or other dtypes."""
    x = np.linspace(-70000, 70000, 3 * (2 ** 17 + 5)).astype(np.float32).reshape(3, -1)
    out = np.empty(x.shape, np.float16)
    cpu.cast_into(out, x)
    assert (_bits(out) == _bits(_numpy(x, np.float16))).all()
    back = cpu.converted(out, np.float32)
    assert back.dtype == np.float32 and (back == out.astype(np.float32)).all()
    strided = x[:, ::2]
    assert (_bits(cpu.converted(strided, np.float16)) ==
            _bits(_numpy(strided, np.float16))).all()
    with pytest.raises(ValueError):
        cast_half(x, np.empty(x.shape, np.int16))


def test_float64_narrowing_rounds_once():
    """float64 -> float16 rounds the double itself: random doubles of every exponent from
    float16's zero to its overflow, and the midpoints between float16 neighbours moved by
    less than a float32 step (a cast through a rounded-to-nearest float32 would land on the
    midpoint and round it the wrong way) or by one double step."""
    rng = np.random.default_rng(11)
    n = 1 << 18
    expo = rng.integers(1023 - 27, 1023 + 18, n, dtype=np.uint64)
    bits = (expo << np.uint64(52)) | rng.integers(0, 1 << 52, n, dtype=np.uint64)
    bits |= rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    h = h[np.isfinite(h) & (h >= 0)]
    with np.errstate(all="ignore"):
        mid = (h.astype(np.float64) + np.nextafter(h, np.float16(np.inf)).astype(np.float64)) / 2
    mid = mid[np.isfinite(mid)]
    near = [mid * (1 + s * 2.0 ** -40) for s in (-1, 1)] + \
        [np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)]
    for src in [bits.view(np.float64), mid, -mid] + near:
        got, want = _bits(_ours(src, np.float16)), _bits(_numpy(src, np.float16))
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (src[bad[:3]], got[bad[:3]], want[bad[:3]])
    assert (mid * (1 + 2.0 ** -40)).astype(np.float32).tolist() == mid.astype(
        np.float32).tolist()                     # the trap is real: float32 keeps the midpoint


def test_float64_casts_take_the_kernel_in_the_namespace():
    x = np.random.default_rng(12).standard_normal((3, 70001)) * 3e4
    assert cpu.half_pair(x, np.dtype(np.float16))
    out = np.empty(x.shape, np.float16)
    cpu.cast_into(out, x)
    assert (_bits(out) == _bits(_numpy(x, np.float16))).all()
    assert (_bits(cpu.converted(x, np.float16)) == _bits(_numpy(x, np.float16))).all()


_LEVEL_SCRIPT = """
import sys, numpy as np
from mxlite._core.copy import cast_half
z = np.load(sys.argv[1])
outs = {}
for k in z.files:
    o = np.empty(z[k].shape, np.float16 if z[k].dtype != np.float16 else np.float32)
    cast_half(z[k], o)
    outs[k] = o.view(np.uint16 if o.dtype == np.float16 else np.uint32)
np.savez(sys.argv[2], **outs)
"""


def test_simd_levels_agree_bit_for_bit(tmp_path):
    z = {"f64": _edges(np.float64), "f32": _edges(np.float32),
         "f16": np.arange(65536, dtype=np.uint16).view(np.float16)}
    outs = outputs_at_each_level(tmp_path, _LEVEL_SCRIPT, z)
    for key in outs[0].files:
        assert np.array_equal(outs[0][key], outs[1][key]), key
