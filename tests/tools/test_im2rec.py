"""python -m mxlite.tools.im2rec: a folder of class sub-folders to a .lst, then to .rec/.idx
read back by mx.recordio and mx.io.ImageRecordIter."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.tools import im2rec

Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def folder(tmp_path):
    """root/cat/{a,b}.png and root/dog/c.png (4 x 6 RGB); returns root and the images."""
    rng = np.random.default_rng(1)
    images = {}
    for rel in ("cat/a.png", "cat/b.png", "dog/c.png"):
        os.makedirs(tmp_path / "root" / os.path.dirname(rel), exist_ok=True)
        images[rel] = rng.integers(0, 256, size=(4, 6, 3), dtype=np.uint8)
        Image.fromarray(images[rel]).save(tmp_path / "root" / rel)
    (tmp_path / "root" / "cat" / "notes.txt").write_text("not an image")
    return str(tmp_path / "root"), images


def test_list_then_pack(folder, tmp_path):
    root, images = folder
    prefix = str(tmp_path / "data")
    assert im2rec.main([prefix, root, "--list", "--recursive", "--no-shuffle"]) == 0
    lines = [line.split("\t") for line in open(prefix + ".lst").read().splitlines()]
    assert lines == [["0", "0.000000", "cat/a.png"], ["1", "0.000000", "cat/b.png"],
                     ["2", "1.000000", "dog/c.png"]]
    assert im2rec.main([prefix, root, "--encoding", ".png"]) == 0
    reader = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    assert reader.keys == [0, 1, 2]
    for key, rel in zip(reader.keys, ("cat/a.png", "cat/b.png", "dog/c.png")):
        header, bgr = mx.recordio.unpack_img(reader.read_idx(key))
        np.testing.assert_array_equal(bgr[:, :, ::-1], images[rel])
        assert header.id == key and header.label == (1.0 if rel.startswith("dog") else 0.0)
    it = mx.io.ImageRecordIter(path_imgrec=prefix + ".rec", data_shape=(3, 4, 6), batch_size=3)
    batch = it.next()
    np.testing.assert_array_equal(batch.label[0].asnumpy(), [0, 0, 1])
    np.testing.assert_array_equal(batch.data[0].asnumpy()[2],
                                  images["dog/c.png"].transpose(2, 0, 1))


def test_pass_through_split_and_resize(folder, tmp_path):
    root, _ = folder
    prefix = str(tmp_path / "s")
    im2rec.main([prefix, root, "--list", "--recursive", "--train-ratio", "0.67",
                 "--test-ratio", "0.34"])
    sizes = {n: len(open(str(tmp_path / n)).read().splitlines())
             for n in ("s_train.lst", "s_test.lst")}
    assert sizes == {"s_train.lst": 2, "s_test.lst": 1}
    im2rec.main([prefix, root, "--pass-through"])
    reader = mx.recordio.MXRecordIO(prefix + "_test.rec", "r")
    _, body = mx.recordio.unpack(reader.read())
    assert body[:8] == b"\x89PNG\r\n\x1a\n"            # the file's own bytes
    prefix = str(tmp_path / "r")
    im2rec.main([prefix, root, "--list", "--recursive"])
    im2rec.main([prefix, root, "--resize", "2", "--center-crop", "--encoding", ".png"])
    _, img = mx.recordio.unpack_img(mx.recordio.MXRecordIO(prefix + ".rec", "r").read())
    assert img.shape == (2, 2, 3)


def test_bad_list(folder, tmp_path):
    root, _ = folder
    (tmp_path / "bad.lst").write_text("zero\t1\tcat/a.png\n")
    with pytest.raises(MXNetError, match="line 1"):
        im2rec.main([str(tmp_path / "bad"), root])
