"""mx.image's functions and augmenters (mxlite/image/image.py) against NumPy and Pillow."""
import io
import json
import random
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

PIL_Image = pytest.importorskip("PIL.Image")


def _png(pixels):
    buf = io.BytesIO()
    PIL_Image.fromarray(pixels).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def pixels(rng):
    return rng.integers(0, 256, size=(12, 17, 3), dtype=np.uint8)


# ---- decoding -----------------------------------------------------------------------------------
def test_imdecode_png_is_exact_in_every_buffer_type(pixels):
    data = _png(pixels)
    for buf in (data, bytearray(data), np.frombuffer(data, np.uint8),
                mx.nd.array(np.frombuffer(data, np.uint8), dtype="uint8")):
        img = mx.image.imdecode(buf)
        assert img.dtype == np.uint8
        np.testing.assert_array_equal(img.asnumpy(), pixels)
    np.testing.assert_array_equal(mx.image.imdecode(data, to_rgb=False).asnumpy(),
                                  pixels[:, :, ::-1])
    gray = np.asarray(PIL_Image.fromarray(pixels).convert("L"))
    np.testing.assert_array_equal(mx.image.imdecode(data, flag=0).asnumpy(), gray[:, :, None])


def test_imdecode_into_out(pixels):
    out = mx.nd.zeros(pixels.shape, dtype="uint8")
    mx.image.imdecode(_png(pixels), out=out)
    np.testing.assert_array_equal(out.asnumpy(), pixels)


def test_imdecode_jpeg_matches_pillow(tmp_path, pixels):
    path = tmp_path / "x.jpg"
    PIL_Image.fromarray(pixels).save(path, quality=90)
    expected = np.asarray(PIL_Image.open(path).convert("RGB"))
    np.testing.assert_array_equal(mx.image.imdecode(path.read_bytes()).asnumpy(), expected)


@pytest.mark.parametrize("buf, words", [
    ("not bytes", ["imdecode", "buf", "str"]),
    (b"", ["imdecode", "empty"]),
    (b"clearly not an image", ["imdecode", "cannot decode"]),
])
def test_imdecode_bad_buffers(buf, words):
    with pytest.raises(MXNetError) as err:
        mx.image.imdecode(buf)
    assert all(w in str(err.value) for w in words)


def test_imdecode_bad_flag(pixels):
    with pytest.raises(MXNetError, match=r"imdecode.*flag must be 0 .* got 2"):
        mx.image.imdecode(_png(pixels), flag=2)


def test_missing_pillow_is_a_clear_error(monkeypatch, pixels, tmp_path):
    data = _png(pixels)
    (tmp_path / "x.png").write_bytes(data)
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(MXNetError, match=r"mx\.image\.imdecode: .*Pillow.*mxlite\[image\]"):
        mx.image.imdecode(data)
    with pytest.raises(MXNetError, match=r"mx\.image\.imread: .*Pillow.*mxlite\[image\]"):
        mx.image.imread(str(tmp_path / "x.png"))
    it = mx.image.ImageIter(1, (3, 4, 4), imglist=[[0, "x.png"]], path_root=str(tmp_path))
    with pytest.raises(MXNetError, match=r"ImageIter: broken image \(file 'x.png'\).*Pillow"):
        it.next()


def test_imread_equals_imdecode(tmp_path, pixels):
    path = tmp_path / "x.png"
    path.write_bytes(_png(pixels))
    np.testing.assert_array_equal(mx.image.imread(str(path)).asnumpy(), pixels)
    np.testing.assert_array_equal(mx.img.imread(path, to_rgb=False).asnumpy(),
                                  pixels[:, :, ::-1])
    assert mx.image.imread(str(path), flag=0).shape == pixels.shape[:2] + (1,)


def test_imread_missing_file():
    with pytest.raises(MXNetError, match=r"mx\.image\.imread: filename '/no/such\.png' is not "
                                         "a file"):
        mx.image.imread("/no/such.png")


# ---- resizing -----------------------------------------------------------------------------------
def test_imresize_nearest_doubling_repeats_pixels(pixels):
    out = mx.image.imresize(mx.nd.array(pixels, dtype="uint8"), 34, 24, interp=0)
    np.testing.assert_array_equal(out.asnumpy(), pixels.repeat(2, axis=0).repeat(2, axis=1))


def _bilinear_1d(values, n):
    """OpenCV's bilinear resampling along one axis: half-pixel centres, clamped."""
    pos = np.clip((np.arange(n) + 0.5) * len(values) / n - 0.5, 0, len(values) - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, len(values) - 1)
    return values[lo] * (1 - (pos - lo)) + values[hi] * (pos - lo)


def test_imresize_bilinear_and_out(rng):
    row = rng.uniform(0, 100, size=5)
    src = mx.nd.array(row.reshape(1, 5, 1))
    out = mx.nd.zeros((1, 9, 1))
    mx.image.imresize(src, 9, 1, interp=1, out=out)
    np.testing.assert_allclose(out.asnumpy().ravel(), _bilinear_1d(row, 9), rtol=1e-5)


def test_interp_codes():
    get = mx.image.image._get_interp_method
    assert [get(i) for i in range(4)] == [0, 1, 2, 3]
    assert get(9, (10, 10, 20, 20)) == 2          # enlarge: bicubic
    assert get(9, (10, 10, 5, 5)) == 3            # shrink: area
    assert get(9, (10, 10, 20, 5)) == 1           # mixed: bilinear
    assert get(9) == 2
    random.seed(3)
    draws = {get(10) for _ in range(200)}
    assert draws == {0, 1, 2, 3}
    with pytest.raises(MXNetError, match=r"resize_short: interp .* got 4 \(Lanczos"):
        mx.image.resize_short(mx.nd.zeros((4, 4, 3)), 2, interp=4)
    with pytest.raises(MXNetError, match="imresize: interp"):
        mx.image.imresize(mx.nd.zeros((4, 4, 3)), 2, 2, interp=7)


@pytest.mark.parametrize("shape, size, expected", [
    ((40, 60, 3), 20, (20, 30, 3)), ((60, 40, 3), 20, (30, 20, 3)),
    ((7, 100, 3), 5, (5, 100 * 5 // 7, 3)), ((30, 30, 1), 45, (45, 45, 1))])
def test_resize_short_shapes(shape, size, expected):
    assert mx.image.resize_short(mx.nd.zeros(shape, dtype="uint8"), size).shape == expected


def test_scale_down():
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, int(120 * 640 / 720))
    assert mx.image.scale_down((360, 1000), (480, 500)) == (360, int(500 * 360 / 480))
    assert mx.image.scale_down((300, 400), (200, 100)) == (200, 100)
    assert mx.image.scale_down((300, 400), (0, 0)) == (0, 0)


@pytest.mark.parametrize("code, mode", [(1, "edge"), (2, "symmetric"), (3, "wrap"),
                                        (4, "reflect")])
def test_copyMakeBorder_matches_numpy_pad(pixels, code, mode):
    out = mx.image.copyMakeBorder(mx.nd.array(pixels, dtype="uint8"), 2, 3, 4, 1, type=code)
    np.testing.assert_array_equal(out.asnumpy(),
                                  np.pad(pixels, ((2, 3), (4, 1), (0, 0)), mode=mode))


def test_copyMakeBorder_constant_values(pixels):
    out = mx.nd.zeros((15, 20, 3), dtype="uint8")
    mx.image.copyMakeBorder(mx.nd.array(pixels, dtype="uint8"), 1, 2, 0, 3,
                            values=(7, 8, 9), out=out)
    expected = np.empty((15, 20, 3), np.uint8)
    expected[:] = (7, 8, 9)
    expected[1:13, 0:17] = pixels
    np.testing.assert_array_equal(out.asnumpy(), expected)


# ---- crops --------------------------------------------------------------------------------------
def test_fixed_crop_is_a_copy(pixels):
    src = mx.nd.array(pixels, dtype="uint8")
    crop = mx.image.fixed_crop(src, 3, 2, 5, 4)
    np.testing.assert_array_equal(crop.asnumpy(), pixels[2:6, 3:8])
    crop[:] = 0
    np.testing.assert_array_equal(src.asnumpy(), pixels)
    assert mx.image.fixed_crop(src, 3, 2, 5, 4, size=(10, 8), interp=0).shape == (8, 10, 3)


@pytest.mark.parametrize("box, word", [((14, 0, 5, 4), "x0=14"), ((0, -1, 5, 4), "y0=-1"),
                                       ((0, 0, 0, 4), "w must be")])
def test_fixed_crop_outside_the_image(pixels, box, word):
    with pytest.raises(MXNetError, match="fixed_crop") as err:
        mx.image.fixed_crop(mx.nd.array(pixels, dtype="uint8"), *box)
    assert word in str(err.value)


def test_center_crop(pixels):
    out, box = mx.image.center_crop(mx.nd.array(pixels, dtype="uint8"), (6, 5))
    assert box == ((17 - 6) // 2, (12 - 5) // 2, 6, 5)
    np.testing.assert_array_equal(out.asnumpy(), pixels[3:8, 5:11])


def test_random_crop_draws_from_python_random(pixels):
    src = mx.nd.array(pixels, dtype="uint8")
    for seed in range(5):
        random.seed(seed)
        x0, y0 = random.randint(0, 17 - 6), random.randint(0, 12 - 5)
        random.seed(seed)
        out, box = mx.image.random_crop(src, (6, 5))
        assert box == (x0, y0, 6, 5)
        np.testing.assert_array_equal(out.asnumpy(), pixels[y0:y0 + 5, x0:x0 + 6])


def test_crop_larger_than_the_image_is_scaled_down_then_resized(pixels):
    out, box = mx.image.random_crop(mx.nd.array(pixels, dtype="uint8"), (34, 6), interp=0)
    assert box[2:] == (17, 3) and out.shape == (6, 34, 3)
    with pytest.raises(MXNetError, match=r"center_crop: size\[0\] \(width\) must be"):
        mx.image.center_crop(mx.nd.array(pixels), (0, 3))


def test_random_size_crop_bounds(rng):
    src = mx.nd.array(rng.uniform(0, 255, size=(40, 50, 3)))
    random.seed(0)
    for _ in range(20):
        out, (x0, y0, w, h) = mx.image.random_size_crop(src, (20, 20), 0.3, (0.75, 1.333))
        assert out.shape == (20, 20, 3)
        assert 0 <= x0 <= 50 - w and 0 <= y0 <= 40 - h
        if (x0, y0, w, h) != mx.image.center_crop(src, (20, 20))[1]:
            assert 0.3 * 2000 * 0.9 <= w * h <= 2000
            assert 0.75 - 0.05 <= w / h <= 1.333 + 0.05
    # the whole image is the only box of area 1 and ratio 50/40
    _, box = mx.image.random_size_crop(src, (5, 4), (1.0, 1.0), (1.25, 1.25))
    assert box == (0, 0, 50, 40)
    with pytest.raises(MXNetError, match="random_size_crop: area"):
        mx.image.random_size_crop(src, (5, 4), 1.5, (1, 1))
    with pytest.raises(MXNetError, match="random_size_crop: ratio"):
        mx.image.random_size_crop(src, (5, 4), 0.5, (2, 1))


def test_color_normalize(rng):
    src = rng.uniform(0, 255, size=(6, 7, 3)).astype(np.float32)
    mean, std = rng.uniform(0, 255, 3), rng.uniform(1, 2, 3)
    x = mx.nd.array(src)
    out = mx.image.color_normalize(x, mx.nd.array(mean), mx.nd.array(std))
    np.testing.assert_allclose(out.asnumpy(), (src - mean) / std, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(x.asnumpy(), src)          # the input is left alone
    out = mx.image.color_normalize(mx.nd.array(src.astype(np.uint8), dtype="uint8"), mean)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), src.astype(np.uint8) - mean, rtol=1e-5,
                               atol=1e-4)


# ---- rotation -----------------------------------------------------------------------------------
def test_imrotate_quarter_turn(rng):
    img = rng.uniform(size=(2, 5, 5)).astype(np.float32)
    out = mx.image.imrotate(mx.nd.array(img), 90).asnumpy()
    # output (i, j) samples the source at x = -(i - 2), y = j - 2 about the centre (2, 2)
    expected = np.empty_like(img)
    for i in range(5):
        for j in range(5):
            expected[:, i, j] = img[:, j, 4 - i]
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_imrotate_errors_and_batches():
    batch = mx.nd.ones((3, 1, 4, 6))
    assert mx.image.imrotate(batch, mx.nd.array([1, 2, 3]), zoom_out=True).shape == (3, 1, 4, 6)
    assert mx.image.random_rotate(batch, (-5, 5)).shape == (3, 1, 4, 6)
    with pytest.raises(MXNetError, match="zoom_in and zoom_out"):
        mx.image.imrotate(batch, 3, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="float32"):
        mx.image.imrotate(batch.astype("uint8"), 3)
    with pytest.raises(TypeError, match="one number"):
        mx.image.imrotate(batch[0], mx.nd.array([1, 2]))
    with pytest.raises(MXNetError, match="3 images need 3 rotation angles, got 2"):
        mx.image.imrotate(batch, mx.nd.array([1, 2]))


# ---- augmenters ---------------------------------------------------------------------------------
@pytest.fixture
def image(rng):
    return rng.uniform(0, 255, size=(5, 6, 3)).astype(np.float32)


def _seeded(aug, src, seed=7):
    random.seed(seed)
    return aug(mx.nd.array(src)).asnumpy()


def _draw(low, high, seed=7):
    random.seed(seed)
    return random.uniform(low, high)


def test_brightness_jitter(image):
    alpha = 1 + _draw(-0.3, 0.3)
    np.testing.assert_allclose(_seeded(mx.image.BrightnessJitterAug(0.3), image),
                               image * alpha, rtol=1e-5)


def test_contrast_jitter(image):
    alpha = 1 + _draw(-0.4, 0.4)
    mean_luma = (image @ np.array([0.299, 0.587, 0.114])).mean()
    np.testing.assert_allclose(_seeded(mx.image.ContrastJitterAug(0.4), image),
                               image * alpha + (1 - alpha) * mean_luma, rtol=1e-4)


def test_saturation_jitter(image):
    alpha = 1 + _draw(-0.4, 0.4)
    luma = image @ np.array([0.299, 0.587, 0.114])
    np.testing.assert_allclose(_seeded(mx.image.SaturationJitterAug(0.4), image),
                               image * alpha + (1 - alpha) * luma[:, :, None], rtol=1e-4)


def test_hue_jitter_keeps_luma_and_inverts(image):
    out = _seeded(mx.image.HueJitterAug(0.5), image)
    weights = np.array([0.299, 0.587, 0.114])
    np.testing.assert_allclose(out @ weights, image @ weights, atol=0.5)   # rounded YIQ tables
    alpha = _draw(-0.5, 0.5)
    back = out @ mx.image.image.hue_matrix(-alpha)
    np.testing.assert_allclose(back, image, atol=1.5)
    assert np.abs(out - image).max() > 1          # the hue did turn


def test_lighting(image):
    eigval, eigvec = np.array([3.0, 2.0, 1.0]), np.linalg.qr(np.arange(9.0).reshape(3, 3) + 1)[0]
    np.random.seed(5)
    alpha = np.random.normal(0, 0.1, size=3)
    np.random.seed(5)
    out = mx.image.LightingAug(0.1, eigval, eigvec)(mx.nd.array(image)).asnumpy()
    shift = sum(alpha[k] * eigval[k] * eigvec[:, k] for k in range(3))
    np.testing.assert_allclose(out, image + shift, rtol=1e-5)


def test_gray_flip_cast(image):
    gray = image @ np.array([0.21, 0.72, 0.07])
    np.testing.assert_allclose(mx.image.RandomGrayAug(1.0)(mx.nd.array(image)).asnumpy(),
                               np.repeat(gray[:, :, None], 3, axis=2), rtol=1e-5)
    np.testing.assert_array_equal(mx.image.RandomGrayAug(0.0)(mx.nd.array(image)).asnumpy(),
                                  image)
    np.testing.assert_array_equal(mx.image.HorizontalFlipAug(1.0)(mx.nd.array(image)).asnumpy(),
                                  image[:, ::-1])
    np.testing.assert_array_equal(mx.image.HorizontalFlipAug(0.0)(mx.nd.array(image)).asnumpy(),
                                  image)
    assert mx.image.CastAug("float64")(mx.nd.array(image)).dtype == np.float64


def test_colour_augmenters_take_uint8(image):
    src = mx.nd.array(image.astype(np.uint8), dtype="uint8")
    for aug in (mx.image.BrightnessJitterAug(0.2), mx.image.ContrastJitterAug(0.2),
                mx.image.SaturationJitterAug(0.2), mx.image.HueJitterAug(0.2),
                mx.image.LightingAug(0.1, [1, 1, 1], np.eye(3)), mx.image.RandomGrayAug(1)):
        assert aug(src).dtype == np.float32


def test_color_normalize_aug_takes_numpy(image):
    mean, std = np.array([10.0, 20.0, 30.0]), np.array([1.5, 2.0, 2.5])
    out = mx.image.ColorNormalizeAug(mx.nd.array(mean), std)(mx.nd.array(image))
    np.testing.assert_allclose(out.asnumpy(), (image - mean) / std, rtol=1e-5)


def test_dumps():
    assert json.loads(mx.image.ResizeAug(10).dumps()) == ["resizeaug", {"size": 10, "interp": 2}]
    aug = mx.image.LightingAug(0.1, np.array([1.0, 2.0, 3.0]), mx.nd.array(np.eye(3)))
    assert json.loads(aug.dumps())[1]["eigval"] == [1.0, 2.0, 3.0]
    seq = mx.image.SequentialAug([mx.image.CastAug(), mx.image.HorizontalFlipAug(0.5)])
    assert json.loads(seq.dumps()) == ["sequentialaug", [["castaug", {"type": "float32"}],
                                                         ["horizontalflipaug", {"p": 0.5}]]]


def test_random_order_applies_each_once(image):
    class Add(mx.image.Augmenter):
        def __init__(self, k):
            super().__init__(k=k)
            self.k = k

        def __call__(self, src):
            return src * 10 + self.k

    random.seed(1)
    outs = {float(mx.image.RandomOrderAug([Add(1), Add(2)])(mx.nd.zeros((1, 1, 3)))[0, 0, 0]
                  .asscalar()) for _ in range(30)}
    assert outs == {12.0, 21.0}


def test_create_augmenter_lists():
    names = [type(a).__name__ for a in mx.image.CreateAugmenter((3, 8, 8))]
    assert names == ["CenterCropAug", "CastAug"]
    augs = mx.image.CreateAugmenter((3, 8, 9), resize=10, rand_crop=True, rand_resize=True,
                                    rand_mirror=True, mean=True, std=True, brightness=0.1,
                                    contrast=0.1, hue=0.1, pca_noise=0.1, rand_gray=0.1)
    assert [type(a).__name__ for a in augs] == [
        "ResizeAug", "RandomSizedCropAug", "HorizontalFlipAug", "CastAug", "ColorJitterAug",
        "HueJitterAug", "LightingAug", "RandomGrayAug", "ColorNormalizeAug"]
    assert augs[1].size == (9, 8)
    assert [type(a).__name__ for a in augs[4].ts] == ["BrightnessJitterAug", "ContrastJitterAug"]
    src = mx.nd.array(np.full((12, 15, 3), 100, np.uint8), dtype="uint8")
    for aug in augs:
        src = aug(src)
    assert src.shape == (8, 9, 3) and src.dtype == np.float32
    with pytest.raises(MXNetError, match="CreateAugmenter: rand_resize=True needs rand_crop"):
        mx.image.CreateAugmenter((3, 8, 8), rand_resize=True)
    with pytest.raises(MXNetError, match=r"CreateAugmenter: mean must be .* \(3,\)"):
        mx.image.CreateAugmenter((3, 8, 8), mean=np.zeros(4))
