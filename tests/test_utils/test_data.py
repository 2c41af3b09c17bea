"""download and friends, offline: file:// URLs, failures as MXNetError, DummyIter."""
import gzip
import os
import struct

import numpy as np
import pytest

from mxlite.base import MXNetError
from mxlite.test_utils import DummyIter, download, get_im2rec_path, get_mnist_iterator


def test_download_file_url(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    got = download(src.as_uri(), fname="copy.bin", dirname=str(tmp_path / "out"))
    assert got == str(tmp_path / "out" / "copy.bin")
    assert open(got, "rb").read() == b"payload"
    src.write_bytes(b"changed")
    assert open(download(src.as_uri(), fname=got), "rb").read() == b"payload"   # kept
    download(src.as_uri(), fname=got, overwrite=True)
    assert open(got, "rb").read() == b"changed"


def test_download_failure_is_an_mxnet_error(tmp_path):
    missing = (tmp_path / "absent.bin").as_uri()
    target = str(tmp_path / "t.bin")
    with pytest.raises(MXNetError, match="absent.bin.*2 attempts"):
        download(missing, fname=target, retries=1)
    assert not os.path.exists(target) and not os.path.exists(target + ".part")
    with pytest.raises(MXNetError, match="retries"):
        download(missing, retries=-1)


def test_io_and_tools_refusals(monkeypatch, tmp_path):
    with pytest.raises(MXNetError, match="issue 23"):
        get_mnist_iterator(8, (1, 28, 28))
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    with pytest.raises(MXNetError, match="im2rec"):
        get_im2rec_path()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "im2rec.py").write_text("")
    assert get_im2rec_path() == str(tmp_path / "tools" / "im2rec.py")


def test_dummy_iter_repeats_the_first_batch():
    class Real:
        provide_data, provide_label, batch_size = ["d"], ["l"], 2

        def __iter__(self):
            return iter([1, 2, 3])

    it = DummyIter(Real())
    assert [next(it) for _ in range(4)] == [1, 1, 1, 1] and it.next() == 1
    assert it.provide_data == ["d"] and it.batch_size == 2


def test_mnist_reader_parses_idx_files(tmp_path, monkeypatch):
    from mxlite.test_utils import _data
    labels = np.array([3, 1], dtype=np.int8)
    images = np.arange(2 * 28 * 28, dtype=np.uint32).astype(np.uint8)
    lf, imf = tmp_path / "l.gz", tmp_path / "i.gz"
    with gzip.open(lf, "wb") as f:
        f.write(struct.pack(">II", 2049, 2) + labels.tobytes())
    with gzip.open(imf, "wb") as f:
        f.write(struct.pack(">IIII", 2051, 2, 28, 28) + images.tobytes())
    label, image = _data._read_idx(str(lf), str(imf))
    assert label.tolist() == [3, 1] and image.shape == (2, 1, 28, 28)
    np.testing.assert_allclose(image.ravel(), images / np.float32(255), rtol=1e-6)
