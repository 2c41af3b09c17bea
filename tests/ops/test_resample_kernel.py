"""The compiled tap filter of the resize operators (mxlite/_core/resample.pyx) against the
NumPy tap path it replaces on the CPU (``mxlite.ops.image._interpolate_xp``, which the GPU
namespace still runs): bit for bit on every dtype, any strides, batches that take several
threads; its argument checks; and the saturation it does right."""
import numpy as np
import pytest

import mxlite as mx
from mxlite._core import resample as _k
from mxlite.base import MXNetError
from mxlite.device import cpu as _cpu
from mxlite.ops import image as _image

pytestmark = pytest.mark.cpu_only      # the CPU kernel (GPU runs of the ops: test_image.py)

DTYPES = ("uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "float32",
          "float64")
# bounds of the random data: the integer ones use their whole range (saturation included)
# except int32/int64, whose float32 results are not exact near their limits
_RANGE = {"int32": 1e6, "int64": 1e6, "float16": 100.0, "float32": 1e3, "float64": 1e3}


def _data(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind in "iu" and dt.name not in _RANGE:
        info = np.iinfo(dt)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dt)
    bound = _RANGE[dt.name]
    if dt.kind in "iu":
        return rng.integers(-bound, bound, size=shape).astype(dt)
    return rng.uniform(-bound, bound, size=shape).astype(dt)


def _random_taps(rng, n_out, n_in, k):
    """(n_out, k) int64 indices into n_in and float64 weights of mixed sign, some zero."""
    index = rng.integers(0, n_in, size=(n_out, k))
    weight = rng.normal(0.0, 0.6, size=(n_out, k))
    weight[rng.random((n_out, k)) < 0.1] = 0.0
    return index, weight


def _numpy_path(x, out_shape, taps_h, taps_w):
    """The reference: the NumPy tap path, in a fresh output."""
    out = np.zeros(out_shape, x.dtype)
    _image._interpolate_xp(_cpu, x, out, taps_h, taps_w)
    return out


def _kernel(x, out_shape, taps_h, taps_w, out=None):
    out = np.zeros(out_shape, x.dtype) if out is None else out
    work = _image._work_dtype(x.dtype)
    _k.resample(x, out, *_image._kernel_taps(taps_h, work), *_image._kernel_taps(taps_w, work))
    return out


def _same_bits(got, want):
    """Equal bit for bit (signed zeros included): the kernel repeats NumPy's arithmetic."""
    assert got.shape == want.shape and got.dtype == want.dtype
    bits = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_random_taps_match_numpy_path(dtype, k):
    rng = np.random.default_rng(k * 31 + DTYPES.index(dtype))
    x = _data(rng, (2, 7, 9, 3), dtype)
    taps_h, taps_w = _random_taps(rng, 5, 7, k), _random_taps(rng, 11, 9, 7 - k)
    _same_bits(_kernel(x, (2, 5, 11, 3), taps_h, taps_w),
               _numpy_path(x, (2, 5, 11, 3), taps_h, taps_w))


@pytest.mark.parametrize("dtype", ["uint8", "int32", "float16", "float32", "float64"])
@pytest.mark.parametrize("interp", [0, 1, 2, 3])
def test_resize_taps_over_several_threads(dtype, interp):
    """A batch of many output rows (the rows are shared among threads, one scratch each)."""
    rng = np.random.default_rng(interp)
    x = _data(rng, (3, 61, 83, 3), dtype)
    taps_h, taps_w = _image._taps(47, 61, interp), _image._taps(120, 83, interp)
    _same_bits(_kernel(x, (3, 47, 120, 3), taps_h, taps_w),
               _numpy_path(x, (3, 47, 120, 3), taps_h, taps_w))


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_adjoint_taps_match_numpy_path(dtype):
    """_backward_image_resize's transposed taps: many taps per pixel when shrinking by 5."""
    rng = np.random.default_rng(5)
    g = _data(rng, (2, 6, 8, 1), dtype)
    taps_h = _image._adjoint_taps(_image._taps(6, 30, 3), 30)
    taps_w = _image._adjoint_taps(_image._taps(8, 41, 2), 41)
    _same_bits(_kernel(g, (2, 30, 41, 1), taps_h, taps_w),
               _numpy_path(g, (2, 30, 41, 1), taps_h, taps_w))


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_pixel_images(dtype):
    rng = np.random.default_rng(1)
    for shape, out_shape in (((1, 1, 1, 1), (1, 5, 7, 1)), ((4, 1, 1, 3), (4, 1, 1, 3)),
                             ((1, 9, 6, 3), (1, 1, 1, 3))):
        x = _data(rng, shape, dtype)
        taps_h = _image._taps(out_shape[1], shape[1], 2)
        taps_w = _image._taps(out_shape[2], shape[2], 1)
        _same_bits(_kernel(x, out_shape, taps_h, taps_w),
                   _numpy_path(x, out_shape, taps_h, taps_w))


@pytest.mark.parametrize("dtype", ["uint8", "int64", "float16", "float32"])
def test_strided_source_and_destination(dtype):
    """Reversed, subsampled and transposed views in, a slice of a larger array out."""
    rng = np.random.default_rng(2)
    base = _data(rng, (3, 20, 26, 6), dtype)
    views = [base[::2, ::-2, 1::3, ::2],             # (2, 10, 9, 3): every axis strided
             base[:, :, :, :3].swapaxes(1, 2),       # (3, 26, 20, 3): H and W swapped
             base[1:2, 3:4, :, 2:3]]                  # one row of single-channel pixels
    for x in views:
        out_shape = (x.shape[0], 7, 5, x.shape[3])
        taps_h, taps_w = _image._taps(7, x.shape[1], 2), _image._taps(5, x.shape[2], 3)
        big = np.zeros((x.shape[0], 9, 12, x.shape[3] * 2), x.dtype)
        dst = big[:, 1:8, ::-2][:, :, :5, ::2]
        _kernel(x, out_shape, taps_h, taps_w, out=dst)
        _same_bits(dst, _numpy_path(np.ascontiguousarray(x), out_shape, taps_h, taps_w))
        assert not big[:, :, :, 1::2].any()          # nothing written between the elements


def test_integers_round_half_to_even_and_saturate():
    """Closed forms: 0.5 * (1 + 2) = 1.5 -> 2, 0.5 * (2 + 3) = 2.5 -> 2; 2 * 200 -> 255."""
    x = np.array([1, 2, 3, 200], np.uint8).reshape(1, 1, 4, 1)
    index_w = np.array([[0, 1], [1, 2], [3, 3], [0, 0]])
    weight_w = np.array([[0.5, 0.5], [0.5, 0.5], [1.0, 1.0], [-3.0, 0.0]])
    taps_h = (np.zeros((1, 1), np.int64), np.ones((1, 1)))
    got = _kernel(x, (1, 1, 4, 1), taps_h, (index_w, weight_w))
    assert got.ravel().tolist() == [2, 2, 255, 0]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_extremes_saturate_to_the_limits(dtype):
    """The dtype's maximum stays the maximum: in float32 it rounds up to 2**31 (2**63),
    which the NumPy path's clip kept and its cast wrapped to the minimum."""
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min], dtype).reshape(1, 1, 2, 1)
    y = mx.nd.image.resize(mx.nd.array(x.reshape(1, 2, 1), dtype=dtype), size=(4, 1), interp=0)
    assert y.asnumpy().ravel().tolist() == [info.max, info.max, info.min, info.min]


def test_signed_zero_kept():
    x = np.full((1, 2, 2, 1), -0.0, np.float32)
    got = _kernel(x, (1, 3, 3, 1), _image._taps(3, 2, 1), _image._taps(3, 2, 1))
    assert np.signbit(got).all()


@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16", "float64"])
@pytest.mark.parametrize("interp", [0, 1, 2, 3])
def test_operators_match_numpy_path(dtype, interp):
    """The ops on the CPU (now the kernel) against the NumPy path on the same taps."""
    rng = np.random.default_rng(interp + 10)
    x = _data(rng, (2, 13, 17, 3), dtype)
    y = mx.nd.image.resize(mx.nd.array(x, dtype=dtype), size=(9, 21), interp=interp)
    taps_h, taps_w = _image._taps(21, 13, interp), _image._taps(9, 17, interp)
    _same_bits(y.asnumpy(), _numpy_path(x, (2, 21, 9, 3), taps_h, taps_w))
    g = mx.nd._internal._backward_image_resize(y, height=13, width=17, interp=interp)
    adj_h, adj_w = _image._adjoint_taps(taps_h, 13), _image._adjoint_taps(taps_w, 17)
    _same_bits(g.asnumpy(), _numpy_path(y.asnumpy(), (2, 13, 17, 3), adj_h, adj_w))


# ---- bad arguments: a clear MXNetError, never a crash ---------------------------------------
def _args():
    x = np.zeros((1, 4, 5, 3), np.float32)
    out = np.zeros((1, 2, 3, 3), np.float32)
    ih, wh = np.zeros((2, 2), np.int64), np.zeros((2, 2), np.float32)
    iw, ww = np.zeros((3, 1), np.int64), np.zeros((3, 1), np.float32)
    return [x, out, ih, wh, iw, ww]


def _with(i, value):
    args = _args()
    args[i] = value(args[i]) if callable(value) else value
    return args


_BAD = {
    "src not an array": (_with(0, [[1.0]]), "src must be a 4-D"),
    "src 3-D": (_with(0, lambda a: a[0]), "src must be a 4-D"),
    "dtypes differ": (_with(1, lambda a: a.astype(np.float64)), "share one dtype"),
    "bool": ([a.astype(bool) if i < 2 else a for i, a in enumerate(_args())], "share one dtype"),
    "channels differ": (_with(1, np.zeros((1, 2, 3, 1), np.float32)), "batch and channels"),
    "index not int64": (_with(2, lambda a: a.astype(np.int32)), "index_h must be"),
    "weight float64": (_with(3, lambda a: a.astype(np.float64)), "weight_h must be"),
    "taps rows differ": (_with(4, np.zeros((4, 1), np.int64)), "index_w (4, 1)"),
    "no taps": (_with(2, np.zeros((2, 0), np.int64)), "K >= 1"),
    "index past the edge": (_with(4, np.full((3, 1), 5, np.int64)), "[0, 5)"),
    "index negative": (_with(2, np.full((2, 2), -1, np.int64)), "[0, 4)"),
    "weight nan": (_with(5, np.full((3, 1), np.nan, np.float32)), "finite"),
    "dst read-only": (_with(1, lambda a: np.broadcast_to(a[:, :1], a.shape)), "read-only"),
}


@pytest.mark.parametrize("case", sorted(_BAD))
def test_bad_arguments_raise(case):
    args, message = _BAD[case]
    with pytest.raises(MXNetError, match="resample") as info:
        _k.resample(*args)
    assert message in str(info.value)


def test_overlapping_source_and_destination_raise():
    buf = np.zeros((1, 4, 5, 3), np.float32)
    args = _args()
    args[0], args[1] = buf, buf[:, :2, :3]
    with pytest.raises(MXNetError, match="overlap"):
        _k.resample(*args)


def test_every_float16_bit_pattern_converts_exactly():
    """Weight 1 on one tap: each of the 65536 float16 values (subnormals, infinities, NaNs)
    comes back as it went in, as through the NumPy path."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(1, 256, 256, 1)
    one = (np.arange(256)[:, None], np.ones((256, 1)))
    got = _kernel(x, x.shape, one, one)
    with np.errstate(invalid="ignore"):         # NumPy flags signalling NaNs times 1
        want = _numpy_path(x, x.shape, one, one)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    _same_bits(got[~nan], want[~nan])
    _same_bits(got[~nan], x[~nan])
