"""The compiled colour steps of the random colour operators (mxlite/_core/colour.pxi, in the
resample extension) against the array path they replace on the CPU (the step functions of
mxlite/ops/image.py with any other device's kernels: the path the GPU runs): bit for bit on
float32 and float64 blocks big enough to take several threads, with greys, ties, extremes
and non-finite values; the saturating store into integer images; the argument checks."""
from types import SimpleNamespace

import numpy as np
import pytest

import mxlite as mx
from mxlite._core import resample as _k
from mxlite.base import MXNetError
from mxlite.device import cpu as _cpu
from mxlite.ops import image as _image

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the ops: test_image.py)

COMPILED = SimpleNamespace(kernels="cpu", xp=_cpu)
ARRAYS = SimpleNamespace(kernels="array path", xp=_cpu)     # any device but the CPU's


def _pixels(rng, dtype, n=90_000):
    """(n, 3) pixels of ``dtype``: uniform on [-20, 275], then rows of every kind of
    pixel the hue formula branches on (greys, ties for the largest and smallest channel,
    pure colours, signed zeros, huge values)."""
    x = rng.uniform(-20, 275, (n, 3))
    special = [(40, 40, 40), (200, 200, 10), (10, 200, 200), (200, 10, 200), (255, 0, 0),
               (0, 255, 0), (0, 0, 255), (0, 0, 0), (255, 255, 255), (-0.0, 0.0, -0.0),
               (1e30, -1e30, 0), (3, 3, 3 + 1e-5), (128, 128.00001, 128)]
    x[:len(special)] = special
    x[len(special):2000] = rng.integers(0, 256, (2000 - len(special), 3))   # uint8 values
    return x.astype(dtype).reshape(30, 3000, 3)


def _same_bits(got, want):
    """Equal bit for bit (signed zeros included): the kernel repeats NumPy's arithmetic."""
    assert got.shape == want.shape and got.dtype == want.dtype
    bits = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


STEPS = [(_image._hue, a) for a in (0.0, 0.13, 0.5, 0.97, 1.45, -0.3)] + \
        [(_image._saturation, a) for a in (0.0, 0.37, 1.0, 1.9)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("step, alpha", STEPS)
def test_colour_step_matches_array_path(dtype, step, alpha):
    x = _pixels(np.random.default_rng(int(alpha * 100) % 7), dtype)
    want = step(ARRAYS, x.copy(), alpha)
    _same_bits(step(COMPILED, x.copy(), alpha), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_luma_matches_array_path(dtype):
    x = _pixels(np.random.default_rng(3), dtype)
    _same_bits(_image._gray(COMPILED, x), _image._gray(ARRAYS, x))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")    # the array path's
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_non_finite_pixels_match_array_path(dtype):
    x = np.array([[np.nan, 1, 2], [np.inf, 0, 5], [-np.inf, np.inf, 0], [1, np.nan, np.nan],
                  [np.inf, np.inf, np.inf]], dtype)
    for step, alpha in STEPS:
        np.testing.assert_array_equal(step(COMPILED, x.copy(), alpha),
                                      step(ARRAYS, x.copy(), alpha))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16"])
def test_store_clips_and_truncates_as_the_array_path(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    value = rng.uniform(info.min - 300.0, info.max + 300.0, 100_000).astype(np.float32)
    value[:8] = [-0.9, 0.9, -0.0, info.max + 0.5, info.min - 0.5, info.max, info.min, 1.5]
    got, want = np.zeros(value.shape, dtype), np.zeros(value.shape, dtype)
    _image._store_block(COMPILED, value, got)
    _image._store(_cpu, value, want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, kwargs", [
    ("random_hue", dict(min_factor=0.1, max_factor=0.4)),
    ("random_saturation", dict(min_factor=0.3, max_factor=1.7)),
    ("random_contrast", dict(min_factor=0.3, max_factor=1.7)),
    ("random_color_jitter", dict(brightness=0.3, contrast=0.3, saturation=0.3, hue=0.3))])
def test_uint8_operator_is_the_array_path(op, kwargs, monkeypatch):
    """The operator on a uint8 batch: the compiled steps and store give the array path's
    image (the same seed draws the same factors)."""
    x = mx.nd.array(np.random.default_rng(9).integers(0, 256, (4, 50, 60, 3)), dtype="uint8")
    mx.random.seed(4)
    got = getattr(mx.nd.image, op)(x, **kwargs).asnumpy()
    monkeypatch.setattr(_image, "_compiled", lambda rctx, img: False)
    monkeypatch.setattr(_image, "_store_block", lambda rctx, v, out: _image._store(
        rctx.xp, v, out))
    mx.random.seed(4)
    want = getattr(mx.nd.image, op)(x, **kwargs).asnumpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call", [
    lambda a: _k.colour_hue(a, 0.0, 1e-4), lambda a: _k.colour_saturation(a, 0.5),
    _k.colour_luma])
def test_bad_blocks_are_clear_errors(call):
    with pytest.raises(MXNetError, match="must be a .*3"):
        call(np.zeros((4, 2), np.float32))                     # two channels
    with pytest.raises(MXNetError, match="float32 or float64"):
        call(np.zeros((4, 3), np.int32))
    with pytest.raises(MXNetError, match="contiguous"):
        call(np.zeros((4, 6), np.float32)[:, ::2])
    with pytest.raises(MXNetError, match="must be a"):
        call([[1.0, 2.0, 3.0]])


def test_bad_store_arguments_are_clear_errors():
    value = np.zeros(6, np.float32)
    with pytest.raises(MXNetError, match="colour_store: out must be"):
        _k.colour_store(value, np.zeros(6, np.int32))
    with pytest.raises(MXNetError, match="colour_store: out must be .* of 6 elements"):
        _k.colour_store(value, np.zeros(5, np.uint8))
    with pytest.raises(MXNetError, match="colour_store: value must be"):
        _k.colour_store(value.astype(np.float64), np.zeros(6, np.uint8))
