"""mx.image's detection augmenters and ImageDetIter (mxlite/image/detection.py)."""
import io
import json
import random

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.image.detection import parse_label

PIL_Image = pytest.importorskip("PIL.Image")


def _label(*boxes):
    """A parsed label: one row (class, xmin, ymin, xmax, ymax) per box."""
    return np.array([[k] + list(box) for k, box in enumerate(boxes)], dtype=np.float64)


@pytest.fixture
def src(rng):
    return rng.integers(0, 256, size=(20, 30, 3), dtype=np.uint8)


def test_parse_label():
    raw = [2, 5, 1, 0.1, 0.2, 0.5, 0.6, 3, 0.5, 0.5, 0.4, 0.9]      # the 2nd box is empty
    np.testing.assert_array_equal(parse_label(raw), [[1, 0.1, 0.2, 0.5, 0.6]])
    raw = [4, 6, 9, 9, 1, 0.1, 0.2, 0.5, 0.6, 7]                      # a wider header, object
    np.testing.assert_array_equal(parse_label(raw), [[1, 0.1, 0.2, 0.5, 0.6, 7]])
    for bad in ([2, 5, 1, 0.1], [2, 5, 1, 0.1, 0.2, 0.5, 0.6, 1], [2, 5, 1, 0.5, 0.2, 0.1, 0.6]):
        with pytest.raises(RuntimeError):
            parse_label(bad)


def test_flip(src):
    label = _label((0.1, 0.2, 0.4, 0.9))
    out, new = mx.image.DetHorizontalFlipAug(1.0)(mx.nd.array(src, dtype="uint8"), label)
    np.testing.assert_array_equal(out.asnumpy(), src[:, ::-1])
    np.testing.assert_allclose(new, _label((0.6, 0.2, 0.9, 0.9)))
    np.testing.assert_array_equal(label, _label((0.1, 0.2, 0.4, 0.9)))   # not changed


def test_random_crop_moves_the_boxes_with_the_crop(src):
    label = _label((0.2, 0.25, 0.6, 0.75), (0.5, 0.1, 0.9, 0.5))
    aug = mx.image.DetRandomCropAug(min_object_covered=0.5, area_range=(0.3, 0.9),
                                    min_eject_coverage=0.3)
    for seed in range(5):
        random.seed(seed)
        proposal = aug._random_crop_proposal(label, 20, 30)
        random.seed(seed)
        out, new = aug(mx.nd.array(src, dtype="uint8"), label)
        x, y, w, h, expected = proposal
        np.testing.assert_array_equal(out.asnumpy(), src[y:y + h, x:x + w])
        np.testing.assert_allclose(new, expected)
        assert 0.3 * 600 <= w * h <= 0.9 * 600
        # a kept object's pixel box, cut to the crop, seen from the crop's corner
        for row in new:
            old = label[int(row[0])]
            xs = np.clip(old[[1, 3]] * 30, x, x + w) - x
            ys = np.clip(old[[2, 4]] * 20, y, y + h) - y
            np.testing.assert_allclose(row[[1, 3]] * w, xs, atol=1e-9)
            np.testing.assert_allclose(row[[2, 4]] * h, ys, atol=1e-9)


def test_random_crop_gives_up_and_invalid_ranges_disable(src):
    label = _label((0.0, 0.0, 0.05, 0.05))          # too small to keep in any crop
    aug = mx.image.DetRandomCropAug(area_range=(0.1, 0.2), max_attempts=5)
    out, new = aug(mx.nd.array(src, dtype="uint8"), label)
    assert out.shape == src.shape and new is label
    with pytest.warns(UserWarning, match="disabled: invalid area_range"):
        assert not mx.image.DetRandomCropAug(area_range=(0.9, 0.1)).enabled


def test_random_pad(src):
    label = _label((0.2, 0.25, 0.6, 0.75))
    aug = mx.image.DetRandomPadAug(area_range=(1.5, 3.0), pad_val=(1, 2, 3))
    random.seed(2)
    x, y, w, h, _ = aug._random_pad_proposal(label, 20, 30)
    random.seed(2)
    out, new = aug(mx.nd.array(src, dtype="uint8"), label)
    out = out.asnumpy()
    # the area is drawn for a rounded height: within a row or column of the range
    assert out.shape == (h, w, 3) and abs(w * h - np.clip(w * h, 900, 1800)) <= w + h
    np.testing.assert_array_equal(out[y:y + 20, x:x + 30], src)
    canvas = np.ones((h, w), bool)
    canvas[y:y + 20, x:x + 30] = False
    np.testing.assert_array_equal(out[canvas], np.tile([1, 2, 3], (canvas.sum(), 1)))
    np.testing.assert_allclose(new[0, [1, 3]] * w, label[0, [1, 3]] * 30 + x)
    np.testing.assert_allclose(new[0, [2, 4]] * h, label[0, [2, 4]] * 20 + y)


def test_select_borrow_and_dumps(src):
    label = _label((0.1, 0.1, 0.5, 0.5))
    img = mx.nd.array(src, dtype="uint8")
    flip = mx.image.DetHorizontalFlipAug(1.0)
    out, new = mx.image.DetRandomSelectAug([flip], skip_prob=1.0)(img, label)
    assert out is img and new is label
    out, _ = mx.image.DetRandomSelectAug([flip], skip_prob=0.0)(img, label)
    np.testing.assert_array_equal(out.asnumpy(), src[:, ::-1])
    assert mx.image.DetRandomSelectAug([]).skip_prob == 1
    borrow = mx.image.DetBorrowAug(mx.image.CastAug())
    out, new = borrow(img, label)
    assert out.dtype == np.float32 and new is label
    assert json.loads(borrow.dumps()) == ["detborrowaug", ["castaug", {"type": "float32"}]]
    with pytest.raises(MXNetError, match="DetBorrowAug: augmenter must be"):
        mx.image.DetBorrowAug(flip)
    with pytest.raises(MXNetError, match="DetRandomSelectAug: aug_list holds DetAugmenters"):
        mx.image.DetRandomSelectAug([mx.image.CastAug()])


def test_create_augmenters():
    multi = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5, 0.9],
                                                  area_range=(0.2, 1.0), skip_prob=0.25)
    assert [a.min_object_covered for a in multi.aug_list] == [0.1, 0.5, 0.9]
    assert all(a.area_range == (0.2, 1.0) for a in multi.aug_list) and multi.skip_prob == 0.25
    with pytest.raises(MXNetError, match="share one length"):
        mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.2],
                                              max_attempts=[1, 2, 3])
    augs = mx.image.CreateDetAugmenter((3, 16, 24), resize=20, rand_crop=0.5, rand_pad=0.5,
                                       rand_mirror=True, mean=True, std=True, brightness=0.1,
                                       hue=0.1, pca_noise=0.1, rand_gray=0.1)
    names = [type(a).__name__ if type(a).__name__ != "DetBorrowAug"
             else type(a.augmenter).__name__ for a in augs]
    assert names == ["ResizeAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
                     "DetRandomSelectAug", "ForceResizeAug", "CastAug", "ColorJitterAug",
                     "HueJitterAug", "LightingAug", "RandomGrayAug", "ColorNormalizeAug"]
    assert augs[3].aug_list[0].area_range == (1.0, 3.0)


# ---- ImageDetIter ------------------------------------------------------------------------------
def _png(k):
    buf = io.BytesIO()
    PIL_Image.fromarray(np.full((8, 8, 3), 10 * k, np.uint8)).save(buf, "PNG")
    return buf.getvalue()


OBJECTS = {0: [(0.1, 0.1, 0.5, 0.5)], 1: [(0.1, 0.1, 0.5, 0.5), (0.5, 0.5, 0.9, 0.9)],
           2: [(0.2, 0.2, 0.3, 0.3)], 3: [(0.0, 0.0, 1.0, 1.0)]}


def _raw(k):
    return [2, 5] + [v for j, box in enumerate(OBJECTS[k]) for v in (j,) + box]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("det")
    for k in OBJECTS:
        (root / f"{k}.png").write_bytes(_png(k))
    return root


def test_det_iter_batches(folder):
    imglist = [_raw(k) + [f"{k}.png"] for k in OBJECTS]
    it = mx.image.ImageDetIter(3, (3, 8, 8), imglist=imglist, path_root=str(folder))
    assert it.label_shape == (2, 5)
    assert it.provide_label == [("label", (3, 2, 5))]
    batches = list(it)
    assert [b.pad for b in batches] == [0, 2]
    label = batches[0].label[0].asnumpy()
    np.testing.assert_allclose(label[0], [[0, 0.1, 0.1, 0.5, 0.5], [-1] * 5])
    np.testing.assert_allclose(label[1], [[0, 0.1, 0.1, 0.5, 0.5], [1, 0.5, 0.5, 0.9, 0.9]])
    np.testing.assert_array_equal(batches[0].data[0][2].asnumpy(), np.full((3, 8, 8), 20))


def test_det_iter_records_reshape_and_sync(folder, tmp_path):
    rec = str(tmp_path / "det.rec")
    writer = mx.recordio.MXRecordIO(rec, "w")
    for k in (0, 2):
        writer.write(mx.recordio.pack(mx.recordio.IRHeader(0, _raw(k), k, 0), _png(k)))
    writer.close()
    small = mx.image.ImageDetIter(2, (3, 8, 8), path_imgrec=rec)
    assert small.label_shape == (1, 5)
    batch = small.next()
    np.testing.assert_allclose(batch.label[0].asnumpy()[1], [[0, 0.2, 0.2, 0.3, 0.3]])
    large = mx.image.ImageDetIter(2, (3, 8, 8), imglist=[_raw(1) + ["1.png"]],
                                  path_root=str(folder))
    assert large.sync_label_shape(small) is small
    assert small.label_shape == (2, 5) and small.provide_label[0].shape == (2, 2, 5)
    small.reset()
    assert small.next().label[0].shape == (2, 2, 5)
    with pytest.raises(MXNetError, match="fewer objects"):
        small.reshape(label_shape=(1, 5))
    with pytest.raises(MXNetError, match="object width"):
        small.reshape(label_shape=(3, 6))
    small.reshape(data_shape=(3, 4, 4))
    assert small.provide_data[0].shape == (2, 3, 4, 4)


def test_det_iter_with_augmenters_and_bad_labels(folder):
    imglist = [_raw(k) + [f"{k}.png"] for k in OBJECTS] + [[2, 5, 0, 0.5, 0.5, 0.1, 0.1, "0.png"]]
    random.seed(0)
    it = mx.image.ImageDetIter(5, (3, 6, 6), imglist=imglist, path_root=str(folder),
                               rand_crop=1, rand_pad=1, rand_mirror=True, mean=True,
                               area_range=(0.3, 2.0), last_batch_handle="discard")
    batches = list(it)     # the sample with no valid box is skipped: 4 images, no full batch
    assert batches == []
    it = mx.image.ImageDetIter(4, (3, 6, 6), imglist=imglist, path_root=str(folder),
                               rand_crop=1, rand_pad=1, rand_mirror=True)
    batch = it.next()
    assert batch.data[0].shape == (4, 3, 6, 6) and batch.pad == 0
    label = batch.label[0].asnumpy()
    boxes = label[label[:, :, 0] >= 0]
    assert len(boxes) >= 4 and (boxes[:, 1:] >= 0).all() and (boxes[:, 1:] <= 1).all()
    with pytest.raises(MXNetError, match="no image has a valid detection label"):
        mx.image.ImageDetIter(1, (3, 6, 6), imglist=[[2, 5, 0, 0.5, 0.5, 0.1, 0.1, "0.png"]],
                              path_root=str(folder))


def test_det_iter_unknown_augmenter_argument(folder):
    with pytest.raises(MXNetError, match=r"ImageDetIter: unknown arguments \['rand_cropp'\]"):
        mx.image.ImageDetIter(1, (3, 6, 6), imglist=[_raw(0) + ["0.png"]],
                              path_root=str(folder), rand_cropp=0.5)


def test_draw_next(folder):
    it = mx.image.ImageDetIter(1, (3, 10, 10), imglist=[_raw(0) + ["0.png"]],
                               path_root=str(folder))
    (image,) = list(it.draw_next(color=(255, 0, 0), thickness=1))
    # box (0.1, 0.1)-(0.5, 0.5) of a 10 x 10 image: pixels 1 to 5; red is (0, 0, 255) in BGR
    expected = np.zeros((10, 10, 3), np.uint8)
    outline = np.zeros((10, 10), bool)
    outline[1:6, 1:6] = True
    outline[2:5, 2:5] = False
    expected[outline] = (0, 0, 255)
    np.testing.assert_array_equal(image, expected)
    with pytest.raises(MXNetError, match="draw_next: showing the window .* needs OpenCV"):
        next(it.draw_next(waitKey=0))
