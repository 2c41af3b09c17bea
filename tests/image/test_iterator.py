"""mx.image.ImageIter (mxlite/image/iterator.py) over image lists and RecordIO files written
in a temporary folder with Pillow (PNG, so the pixels come back exactly)."""
import io
import random

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

PIL_Image = pytest.importorskip("PIL.Image")

COUNT, SIDE = 7, 6
SHAPE = (3, SIDE, SIDE)


def _pixels(k):
    """Image k: every pixel (10 k, 10 k + 1, 10 k + 2) plus its position, so images and
    their orientation are told apart."""
    grid = np.add.outer(np.arange(SIDE), np.arange(SIDE))[:, :, None]
    return (grid + np.array([10 * k, 10 * k + 1, 10 * k + 2])).astype(np.uint8)


def _png(pixels):
    buf = io.BytesIO()
    PIL_Image.fromarray(pixels).save(buf, "PNG")
    return buf.getvalue()


def _chw(k):
    return _pixels(k).transpose(2, 0, 1).astype(np.float32)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    for k in range(COUNT):
        (root / f"img{k}.png").write_bytes(_png(_pixels(k)))
    return root


@pytest.fixture(scope="module")
def records(folder):
    """A RecordIO file of the images (label k) with its index (keys 100 + k)."""
    rec, idx = str(folder / "data.rec"), str(folder / "data.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for k in range(COUNT):
        header = mx.recordio.IRHeader(0, float(k), k, 0)
        writer.write_idx(100 + k, mx.recordio.pack(header, _png(_pixels(k))))
    writer.close()
    return rec, idx


def _list_iter(folder, batch_size=3, **kwargs):
    imglist = [[float(k), f"img{k}.png"] for k in range(COUNT)]
    return mx.image.ImageIter(batch_size, SHAPE, imglist=imglist, path_root=str(folder),
                              **kwargs)


def _ids(batch):
    """The image number of each slot of a batch (from its first pixel's red value)."""
    return [int(v) // 10 for v in batch.data[0][:, 0, 0, 0].asnumpy()]


def _epoch(it):
    return [(_ids(b), b.pad) for b in it]


def test_batches_hold_the_images_and_labels(folder):
    it = _list_iter(folder)
    assert it.provide_data == [("data", (3,) + SHAPE)]
    assert it.provide_label == [("softmax_label", (3,))]
    batch = it.next()
    for slot in range(3):
        np.testing.assert_array_equal(batch.data[0][slot].asnumpy(), _chw(slot))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [0, 1, 2])
    assert batch.data[0].dtype == np.float32


def test_last_batch_pad(folder):
    it = _list_iter(folder, last_batch_handle="pad")
    for _ in range(2):
        assert _epoch(it) == [([0, 1, 2], 0), ([3, 4, 5], 0), ([6, 0, 1], 2)]
        it.reset()


def test_last_batch_discard(folder):
    it = _list_iter(folder, last_batch_handle="discard")
    assert _epoch(it) == [([0, 1, 2], 0), ([3, 4, 5], 0)]
    it.reset()
    assert _epoch(it) == [([0, 1, 2], 0), ([3, 4, 5], 0)]


def test_last_batch_roll_over(folder):
    it = _list_iter(folder, last_batch_handle="roll_over")
    assert _epoch(it) == [([0, 1, 2], 0), ([3, 4, 5], 0)]      # image 6 is kept
    it.reset()
    # the kept image, then the new epoch; pad counts the images added (MXNet's count)
    assert _epoch(it) == [([6, 0, 1], 2), ([2, 3, 4], 0)]      # 5 and 6 kept
    it.reset()
    assert _epoch(it) == [([5, 6, 0], 1), ([1, 2, 3], 0), ([4, 5, 6], 0)]
    it.hard_reset()
    assert _epoch(it) == [([0, 1, 2], 0), ([3, 4, 5], 0)]


def test_shuffle_is_python_random(folder):
    random.seed(4)
    it = _list_iter(folder, batch_size=COUNT, shuffle=True)
    first = _ids(it.next())
    assert sorted(first) == list(range(COUNT))
    random.seed(4)
    order = [str(k + 1) for k in range(COUNT)]
    random.shuffle(order)
    assert first == [int(key) - 1 for key in order]


def test_path_imglist_with_label_width_and_dtype(folder):
    lst = folder / "multi.lst"
    lst.write_text("".join(f"{k}\t{k}\t{2 * k}\timg{k}.png\n" for k in range(COUNT)))
    it = mx.image.ImageIter(4, SHAPE, label_width=2, path_imglist=str(lst),
                            path_root=str(folder), dtype="int32")
    assert it.provide_label == [("softmax_label", (4, 2))]
    batch = it.next()
    assert batch.label[0].dtype == np.int32
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [[k, 2 * k] for k in range(4)])
    assert _ids(batch) == [0, 1, 2, 3]


def test_record_file_in_order(records):
    rec, _ = records
    it = mx.image.ImageIter(4, SHAPE, path_imgrec=rec)
    batches = list(it)
    assert [(_ids(b), b.pad) for b in batches] == [([0, 1, 2, 3], 0), ([4, 5, 6, 0], 1)]
    np.testing.assert_array_equal(batches[0].label[0].asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(batches[1].data[0][2].asnumpy(), _chw(6))


def test_record_file_parts_and_shuffle(records):
    rec, idx = records
    parts = [mx.image.ImageIter(1, SHAPE, path_imgrec=rec, path_imgidx=idx, num_parts=2,
                                part_index=p) for p in range(2)]
    # 7 images in 2 parts: 3 each, the remainder dropped
    assert [[_ids(b)[0] for b in it] for it in parts] == [[0, 1, 2], [3, 4, 5]]
    random.seed(0)
    it = mx.image.ImageIter(COUNT, SHAPE, path_imgrec=rec, path_imgidx=idx, shuffle=True)
    batch = it.next()
    assert sorted(_ids(batch)) == list(range(COUNT))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), _ids(batch))
    with pytest.raises(MXNetError, match="ImageIter: shuffle and num_parts > 1 need .* "
                                         "path_imgidx"):
        mx.image.ImageIter(2, SHAPE, path_imgrec=rec, shuffle=True)


def test_augmenters_and_overridden_steps(folder):
    class EvenOnly(mx.image.ImageIter):
        def check_valid_image(self, data):
            if int(data[0, 0, 0].asscalar()) // 10 % 2:
                raise RuntimeError("odd image")

    it = EvenOnly(2, (3, 4, 4), imglist=[[k, f"img{k}.png"] for k in range(COUNT)],
                  path_root=str(folder), aug_list=[mx.image.HorizontalFlipAug(1.0),
                                                  mx.image.CenterCropAug((4, 4)),
                                                  mx.image.CastAug()])
    batch = it.next()
    assert _ids(batch) == [0, 2]
    flipped = _pixels(2)[:, ::-1][1:5, 1:5].transpose(2, 0, 1)
    np.testing.assert_array_equal(batch.data[0][1].asnumpy(), flipped)
    # CreateAugmenter's arguments: a resize then a centre crop
    it = _list_iter(folder, batch_size=2, resize=12, inter_method=0)
    assert it.auglist[0].size == 12
    np.testing.assert_array_equal(it.next().data[0][0].asnumpy(),
                                  _pixels(0).repeat(2, 0).repeat(2, 1)[3:9, 3:9]
                                  .transpose(2, 0, 1))


def test_jpeg_list(tmp_path):
    pixels = np.random.default_rng(1).integers(0, 256, (6, 6, 3), dtype=np.uint8)
    PIL_Image.fromarray(pixels).save(tmp_path / "a.jpg", quality=95)
    it = mx.image.ImageIter(1, SHAPE, imglist=[[1, "a.jpg"]], path_root=str(tmp_path))
    expected = np.asarray(PIL_Image.open(tmp_path / "a.jpg").convert("RGB"))
    np.testing.assert_array_equal(it.next().data[0][0].asnumpy(),
                                  expected.transpose(2, 0, 1))


@pytest.mark.parametrize("kwargs, words", [
    (dict(last_batch_handle="keep"), "last_batch_handle must be one of"),
    (dict(dtype="uint8"), "dtype (of the labels) must be one of"),
    (dict(num_parts=2, part_index=2), "part_index must be in [0, num_parts=2)"),
    (dict(data_shape=(1, 4, 4)), "data_shape must have 3 channels"),
    (dict(data_shape=(4, 4)), "data_shape must be (channels, height, width)"),
    (dict(imglist=None), "give path_imgrec, path_imglist or imglist"),
    (dict(imglist=[["a.png"]]), "imglist item 0 must be [label(s)..., path]"),
    (dict(num_parts=2), "1 images cannot be split into num_parts=2 non-empty parts"),
    (dict(rand_mirorr=True), "unknown arguments ['rand_mirorr']: the keyword arguments are "
                             "CreateAugmenter's"),
])
def test_bad_arguments(folder, kwargs, words):
    args = dict(batch_size=2, data_shape=SHAPE, imglist=[[0, "img0.png"]],
                path_root=str(folder))
    args.update(kwargs)
    with pytest.raises(MXNetError) as err:
        mx.image.ImageIter(**args)
    assert "ImageIter" in str(err.value) and words in str(err.value)


def test_bad_images(folder, tmp_path):
    (tmp_path / "broken.png").write_bytes(b"not an image at all")
    it = mx.image.ImageIter(1, SHAPE, imglist=[[0, "broken.png"]], path_root=str(tmp_path))
    with pytest.raises(MXNetError, match=r"ImageIter: broken image \(file 'broken.png'\)"):
        it.next()
    it = mx.image.ImageIter(1, SHAPE, imglist=[[0, "missing.png"]], path_root=str(tmp_path))
    with pytest.raises(MXNetError, match=r"ImageIter.read_image: cannot read .*missing.png"):
        it.next()
    it = _list_iter(folder, label_width=2)
    with pytest.raises(MXNetError, match="ImageIter: label_width is 2, but an image has 1"):
        it.next()
    lst = tmp_path / "bad.lst"
    lst.write_text("zero\t1\timg0.png\n")
    with pytest.raises(MXNetError, match="line 1 of path_imglist .* is not 'index"):
        mx.image.ImageIter(1, SHAPE, path_imglist=str(lst))


def test_record_labels_from_the_list(records, folder):
    rec, idx = records
    lst = folder / "relabel.lst"
    lst.write_text("".join(f"{100 + k}\t{50 + k}\tunused.png\n" for k in range(COUNT)))
    it = mx.image.ImageIter(COUNT, SHAPE, path_imgrec=rec, path_imgidx=idx,
                            path_imglist=str(lst))
    batch = it.next()
    assert _ids(batch) == list(range(COUNT))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [50 + k for k in range(COUNT)])
    it = mx.image.ImageIter(2, SHAPE, path_imgrec=rec, path_imgidx=idx,
                            imglist=[[0, "a.png"]])
    with pytest.raises(MXNetError, match="ImageIter: the record index has key 100, which the "
                                         "image list does not"):
        it.next()
