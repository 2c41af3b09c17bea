"""mx.nd.image (mxlite/ops/image.py): MXNet 1.9.1's values (fixtures/image_mxnet.npz, made by
fixtures/make_image_fixture.py), NumPy and colorsys references, the random operators'
seeding, gradients against closed forms, and clear errors on bad input."""
import colorsys
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures"))
import make_image_fixture as fixture  # noqa: E402

DATA = np.load(os.path.join(os.path.dirname(fixture.__file__), "image_mxnet.npz"))
GRAY = np.array([0.299, 0.587, 0.114])
IM = mx.nd.image


def _call(op, data, dtype, /, **kwargs):
    """``mx.nd.image.<op>`` on NumPy ``data`` as ``dtype`` (crop's keywords include x, y)."""
    return getattr(IM, op)(mx.nd.array(data, dtype=dtype), **kwargs).asnumpy()


# ---- MXNet 1.9.1's values ----------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(c for c in fixture.CASES if c != "saturation_mxnet"))
def test_matches_mxnet(case):
    op, (_, dtype), kwargs = fixture.CASES[case]
    x, want = DATA[f"{case}/in"], DATA[f"{case}/out"]
    got = _call(op, x, dtype, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    if case == "flip_lr":
        # MXNet 1.9.1 swaps columns pairwise and never writes the middle one of an odd
        # width (uninitialised memory); mxlite copies it
        np.testing.assert_array_equal(got[:, 2], x[:, 2])
        got, want = np.delete(got, 2, axis=1), np.delete(want, 2, axis=1)
    atol = 1 if dtype == "uint8" and op == "random_hue" else 2e-4
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("case", sorted(fixture.RESIZES))
def test_resize_matches_mxnet_opencv(case):
    """OpenCV's resize: float within rounding, uint8 within 1 (OpenCV's fixed point)."""
    _, dtype, size, keep, interp = fixture.RESIZES[case]
    x, want = DATA[f"resize_{case}/in"], DATA[f"resize_{case}/out"]
    got = _call("resize", x, dtype, size=size, keep_ratio=keep, interp=interp)
    assert got.dtype == want.dtype and got.shape == want.shape
    atol = 1 if dtype == "uint8" else 2e-4
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("case", sorted(fixture.CV))
def test_opencv_helpers_match_mxnet(case):
    op, _, dtype, kwargs = fixture.CV[case]
    x, want = DATA[f"{case}/in"], DATA[f"{case}/out"]
    got = getattr(mx.nd._internal, op)(mx.nd.array(x, dtype=dtype), **kwargs).asnumpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    atol = 1 if dtype == "uint8" and op == "_cvimresize" else 2e-4
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("mode, border", [(1, "edge"), (2, "symmetric"), (3, "wrap"),
                                          (4, "reflect")])
def test_copy_make_border_is_numpy_pad(mode, border):
    """Margins wider than the image too (repeated mirrors and wraps)."""
    x = np.random.default_rng(13).uniform(-1, 1, (2, 3, 2))
    got = mx.nd._internal._cvcopyMakeBorder(mx.nd.array(x, dtype="float64"), 3, 1, 0, 5,
                                            type=mode).asnumpy()
    np.testing.assert_array_equal(got, np.pad(x, ((3, 1), (0, 5), (0, 0)), mode=border))


def test_cvimresize_is_image_resize():
    x = mx.nd.array(np.random.default_rng(14).uniform(0, 255, (5, 7, 3)))
    for interp in range(4):
        np.testing.assert_array_equal(
            mx.nd._internal._cvimresize(x, w=4, h=9, interp=interp).asnumpy(),
            IM.resize(x, size=(4, 9), interp=interp).asnumpy())


def test_saturation_blends_with_the_luma_not_mxnets_blue_term():
    x = DATA["saturation_mxnet/in"].astype(np.float64)
    a = 0.5
    gray = x @ GRAY
    want = a * x + (1 - a) * gray[..., None]
    got = _call("random_saturation", x, "float64", min_factor=a, max_factor=a)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # MXNet 1.9.1 kept only the last term of its luma sum (gray = 0.114 B)
    mxnet_gray = x[..., 2] * GRAY[2]
    np.testing.assert_allclose(DATA["saturation_mxnet/out"],
                               a * x + (1 - a) * mxnet_gray[..., None], rtol=1e-4, atol=1e-3)


# ---- NumPy / colorsys references -----------------------------------------------------------------
@pytest.mark.parametrize("turn", [0.3, 0.95, 1.45, 0.0, 0.5])
def test_hue_rotation_matches_colorsys(turn):
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 255, (6, 4, 3))
    x[0, 0] = (40, 40, 40)                          # grey: no hue
    x[0, 1] = (200, 200, 10)                        # ties for the largest channel
    x[0, 2] = (10, 200, 200)
    x[0, 3] = (200, 10, 200)
    x[1, 0] = (255, 0, 0)                           # pure colours, black, white
    x[1, 1] = (0, 0, 255)
    x[1, 2] = (0, 0, 0)
    x[1, 3] = (255, 255, 255)
    want = np.array([[colorsys.hls_to_rgb((h + turn) % 1.0, l, s)
                      for h, l, s in (colorsys.rgb_to_hls(*(p / 255)) for p in row)]
                     for row in x]) * 255
    got = _call("random_hue", x, "float64", min_factor=turn, max_factor=turn)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_contrast_and_lighting_references():
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 255, (2, 3, 4, 3))
    a = 0.7
    mean = (x @ GRAY).mean(axis=(1, 2))[:, None, None, None]     # one mean per image
    got = _call("random_contrast", x, "float64", min_factor=a, max_factor=a)
    np.testing.assert_allclose(got, a * x + (1 - a) * mean, rtol=1e-12)
    alpha = np.array([0.1, -0.2, 0.05])
    eig = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])
    got = _call("adjust_lighting", x, "float64", alpha=tuple(alpha))
    np.testing.assert_allclose(got, x + eig @ alpha, rtol=1e-12)


def test_uint8_results_saturate():
    x = np.array([[[10, 200, 250]]], dtype=np.uint8)
    got = _call("random_brightness", x, "uint8", min_factor=2, max_factor=2)
    assert got.tolist() == [[[20, 255, 255]]]
    got = _call("adjust_lighting", x, "uint8", alpha=(1, 0, 0))      # adds about -31
    assert got.min() == 0 and got.dtype == np.uint8


@pytest.mark.parametrize("op, kwargs", [
    ("flip_left_right", {}), ("flip_top_bottom", {}), ("adjust_lighting", dict(alpha=(1, 2, 3))),
    ("crop", dict(x=1, y=0, width=2, height=2)), ("resize", dict(size=(5, 3))),
    ("random_contrast", dict(min_factor=0.5, max_factor=0.5)),
    ("random_hue", dict(min_factor=0.2, max_factor=0.2)), ("to_tensor", {})])
def test_a_batch_is_its_images(op, kwargs):
    x = np.random.default_rng(5).uniform(0, 255, (3, 4, 5, 3))
    got = _call(op, x, "float64", **kwargs)
    for i in range(3):
        np.testing.assert_allclose(got[i], _call(op, x[i], "float64", **kwargs), rtol=1e-12)


@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 0, 4, 3), (0, 2, 2, 3)])
def test_empty_images(shape):
    x = mx.nd.zeros(shape)
    for op, kwargs in RANDOM + [("flip_top_bottom", {}),
                                ("adjust_lighting", dict(alpha=(1, 2, 3)))]:
        assert getattr(IM, op)(x, **kwargs).shape == shape
    assert IM.to_tensor(x).shape == (shape[:-3] + (3,) + shape[-3:-1])


def test_normalize_reads_the_first_channels_of_a_longer_tuple():
    x = np.random.default_rng(6).uniform(0, 1, (3, 2, 2))
    got = _call("normalize", x, "float64", mean=(0.1, 0.2, 0.3, 9), std=(1, 2, 4, 9))
    want = (x - np.array([0.1, 0.2, 0.3])[:, None, None]) / np.array([1, 2, 4])[:, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---- the random operators ------------------------------------------------------------------------
RANDOM = [("random_flip_left_right", {}), ("random_flip_top_bottom", {}),
          ("random_brightness", dict(min_factor=0.5, max_factor=1.5)),
          ("random_contrast", dict(min_factor=0.5, max_factor=1.5)),
          ("random_saturation", dict(min_factor=0.5, max_factor=1.5)),
          ("random_hue", dict(min_factor=0.1, max_factor=0.4)),
          ("random_color_jitter", dict(brightness=0.3, contrast=0.3, saturation=0.3, hue=0.1)),
          ("random_lighting", dict(alpha_std=0.2))]


@pytest.mark.parametrize("op, kwargs", RANDOM)
def test_random_ops_replay_a_seed_and_vary_between_calls(op, kwargs):
    x = mx.nd.array(np.random.default_rng(7).uniform(0, 255, (4, 5, 3)))
    mx.random.seed(11)
    first = [getattr(IM, op)(x, **kwargs).asnumpy() for _ in range(6)]
    mx.random.seed(11)
    again = [getattr(IM, op)(x, **kwargs).asnumpy() for _ in range(6)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(first[0], f) for f in first[1:])


def test_random_flip_is_the_image_or_its_flip_and_both_happen():
    x = np.arange(12.0).reshape(2, 2, 3)
    seen = set()
    for _ in range(40):
        got = _call("random_flip_left_right", x, "float64")
        assert np.array_equal(got, x) or np.array_equal(got, x[:, ::-1])
        seen.add(np.array_equal(got, x))
    assert seen == {True, False}


def test_random_brightness_factor_in_range():
    x = np.full((2, 2, 3), 10.0)
    factors = {_call("random_brightness", x, "float64", min_factor=0.5,
                     max_factor=0.75)[0, 0, 0] / 10 for _ in range(20)}
    assert all(0.5 <= f <= 0.75 for f in factors) and len(factors) > 1


def test_random_ops_with_no_strength_are_the_identity():
    x = np.random.default_rng(8).uniform(0, 255, (3, 4, 3))
    np.testing.assert_array_equal(_call("random_color_jitter", x, "float64", brightness=0,
                                        contrast=0, saturation=0, hue=0), x)
    np.testing.assert_array_equal(_call("random_lighting", x, "float64", alpha_std=0), x)


# ---- gradients (closed forms) ----------------------------------------------------------------
def _grad(call, x, head):
    x = mx.nd.array(x, dtype=x.dtype)
    x.attach_grad()
    with mx.autograd.record():
        y = call(x)
    y.backward(mx.nd.array(head, dtype=y.dtype))
    return x.grad.asnumpy()


def test_to_tensor_gradient_is_the_transpose_over_255():
    x = np.random.default_rng(9).uniform(0, 1, (2, 3, 4, 3))
    head = np.random.default_rng(10).uniform(-1, 1, (2, 3, 3, 4)).astype(np.float32)
    got = _grad(IM.to_tensor, x, head)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, head.transpose(0, 2, 3, 1) / 255, rtol=1e-6)


def test_normalize_and_crop_gradients():
    rng = np.random.default_rng(11)
    x, head = rng.uniform(0, 1, (3, 2, 2)), rng.uniform(-1, 1, (3, 2, 2))
    got = _grad(lambda v: IM.normalize(v, mean=(1, 2, 3), std=(0.5, 2, 4)), x, head)
    np.testing.assert_allclose(got, head / np.array([0.5, 2, 4])[:, None, None], rtol=1e-12)
    x, head = rng.uniform(0, 1, (2, 4, 5, 1)), rng.uniform(-1, 1, (2, 2, 3, 1))
    got = _grad(lambda v: IM.crop(v, x=2, y=1, width=3, height=2), x, head)
    want = np.zeros_like(x)
    want[:, 1:3, 2:5] = head
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("interp", [0, 1, 2, 3])
def test_resize_gradient_is_its_adjoint(interp):
    """<resize(x), g> == <x, resize'(g)>: the gradient is the transposed interpolation."""
    rng = np.random.default_rng(12 + interp)
    x, head = rng.uniform(-1, 1, (5, 7, 2)), rng.uniform(-1, 1, (3, 4, 2))
    y = _call("resize", x, "float64", size=(4, 3), interp=interp)
    dx = _grad(lambda v: IM.resize(v, size=(4, 3), interp=interp), x, head)
    np.testing.assert_allclose(np.vdot(y, head), np.vdot(x, dx), rtol=1e-12)
    # each output pixel is a weighted mean: the weights of a row sum to 1
    ones = _call("resize", np.ones((5, 7, 2)), "float64", size=(4, 3), interp=interp)
    np.testing.assert_allclose(ones, 1.0, rtol=1e-12)


def test_flip_gradients_flip_the_head_gradient():
    x, head = np.ones((2, 3, 1)), np.arange(6.0).reshape(2, 3, 1)
    np.testing.assert_array_equal(_grad(IM.flip_left_right, x, head), head[:, ::-1])
    np.testing.assert_array_equal(_grad(IM.flip_top_bottom, x, head), head[::-1])


def test_random_ops_are_not_differentiable():
    """NON_DIFFERENTIABLE: the gradient stops there (no factor is kept to differentiate)."""
    x = mx.nd.ones((2, 2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = IM.random_brightness(x, min_factor=1, max_factor=2) + x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), 1.0)


# ---- bad input --------------------------------------------------------------------------------
BAD = [
    ("to_tensor", (2, 3), {}, "3-D"),
    ("normalize", (4, 2, 2), {}, "channels"),
    ("normalize", (3, 2, 2), dict(mean=(0, 1)), "mean"),
    ("normalize", (3, 2, 2), dict(std=(1, 0, 1)), "std"),
    ("flip_left_right", (2, 2, 2), {}, "channels"),
    ("flip_top_bottom", (2, 2, 2, 2, 3), {}, "4-D"),
    ("crop", (4, 5, 3), dict(x=3, y=0, width=3, height=2), "does not fit"),
    ("crop", (4, 5, 3), dict(x=0, y=0, width=0, height=2), "positive"),
    ("crop", (4, 5, 3), dict(x=-1, y=0, width=2, height=2), "does not fit"),
    ("resize", (4, 5, 3), dict(size=(0, 3)), "size"),
    ("resize", (4, 5, 3), dict(size=(1, 2, 3)), "size"),
    ("resize", (4, 5, 3), dict(size=(3,), interp=4), "interp"),
    ("resize", (4, 5, 3), dict(size=(1 << 40, 2)), "cannot resize"),
    ("resize", (4, 5, 3), dict(size=(1 << 20, 1 << 20)), "memory"),
    ("adjust_lighting", (2, 2, 3), dict(alpha=(1, 2)), "alpha"),
    ("random_brightness", (2, 2, 3), dict(min_factor=2, max_factor=1), "min_factor"),
    ("random_lighting", (2, 2, 3), dict(alpha_std=-1), "alpha_std"),
]


@pytest.mark.parametrize("op, shape, kwargs, words", BAD)
def test_bad_input_is_a_clear_error(op, shape, kwargs, words):
    with pytest.raises(MXNetError, match=words) as info:
        getattr(IM, op)(mx.nd.zeros(shape), **kwargs)
    assert f"_image_{op}" in str(info.value)


CV_BAD = [
    ("_cvimresize", (2, 3, 4, 1), dict(w=2, h=2), "image"),
    ("_cvimresize", (2, 3, 1), dict(w=0, h=2), "cannot resize"),
    ("_cvimresize", (2, 3, 1), dict(w=2, h=2, interp=7), "interp"),
    ("_cvcopyMakeBorder", (2, 3, 1), dict(top=-1, bot=0, left=0, right=0), ">= 0"),
    ("_cvcopyMakeBorder", (2, 3, 1), dict(top=1, bot=0, left=0, right=0, type=6), "type"),
    ("_cvcopyMakeBorder", (0, 3, 1), dict(top=1, bot=0, left=0, right=0, type=2), "non-empty"),
    ("_cvcopyMakeBorder", (2, 3, 1), dict(top=1, bot=0, left=0, right=0,
                                          values=(1, 2, 3, 4, 5)), "at most 4"),
    ("_cvcopyMakeBorder", (2, 3, 1), dict(top=1 << 40, bot=0, left=0, right=0), "memory"),
    ("_cvcopyMakeBorder", (2, 3, 3), dict(top=1 << 30, bot=0, left=1 << 30, right=0),
     "memory|int64"),
    ("_cvimresize", (2, 3, 1), dict(w=1 << 20, h=1 << 20), "memory"),
]


@pytest.mark.parametrize("op, shape, kwargs, words", CV_BAD)
def test_opencv_helpers_bad_input(op, shape, kwargs, words):
    with pytest.raises(MXNetError, match=words) as info:
        getattr(mx.nd._internal, op)(mx.nd.zeros(shape), **kwargs)
    assert op in str(info.value)


def test_symbols_infer_image_shapes():
    data = mx.sym.Variable("data")
    out = mx.sym.image.normalize(mx.sym.image.to_tensor(mx.sym.image.resize(
        data, size=(6, 4))), mean=(0.5,), std=(0.2,))
    _, out_shapes, _ = out.infer_shape(data=(2, 10, 12, 3))
    assert out_shapes == [(2, 3, 4, 6)]


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_results_saturate_at_the_dtype_maximum(dtype, device):
    """A result at or past an integer dtype's maximum is the maximum on every device: the
    float32 computation rounds int32's maximum up to 2**31, which a plain cast wraps to the
    minimum (a silently wrong pixel before)."""
    top = int(np.iinfo(dtype).max)
    x = mx.nd.array(np.full((2, 2, 1), top, np.int64), dtype=dtype, ctx=device)
    for out in (mx.nd.image.resize(x, size=(3, 3)),
                mx.nd.image.random_brightness(x, min_factor=2, max_factor=2)):
        np.testing.assert_array_equal(out.asnumpy(), np.full(out.shape, top))


def test_border_fill_saturates_at_int64s_maximum():
    """1e30 as an int64 border is the maximum (a float64 clip rounds it up to 2**63, which
    a cast wraps to the minimum)."""
    x = mx.nd.zeros((2, 2, 1), dtype="int64")
    out = mx.nd._internal._cvcopyMakeBorder(x, top=1, bot=0, left=0, right=0, type=0,
                                            value=1e30).asnumpy()
    np.testing.assert_array_equal(out[0], np.full((2, 1), np.iinfo(np.int64).max))
    low = mx.nd._internal._cvcopyMakeBorder(x, top=1, bot=0, left=0, right=0, type=0,
                                            value=-1e30).asnumpy()
    np.testing.assert_array_equal(low[0], np.full((2, 1), np.iinfo(np.int64).min))
