"""mx.recordio: MXNet 1.9.1's files (tests/fixtures/recordio, written by
make_recordio_fixture.py) read by mxlite, mxlite writing the same bytes, the format's
corner cases from its definition, and bad files as MXNetError."""
import os
import pickle
import shutil
import struct
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
sys.path.insert(0, FIXTURES)
from make_recordio_fixture import KEYS, PACKED, records  # noqa: E402

MXNET = os.path.join(FIXTURES, "recordio")
MAGIC = struct.pack("<I", 0xced7230a)


def _bytes(path):
    with open(path, "rb") as f:
        return f.read()


def test_reads_mxnet_file():
    reader = mx.recordio.MXRecordIO(os.path.join(MXNET, "plain.rec"), "r")
    assert [reader.read() for _ in records()] == records()
    assert reader.read() is None
    reader.reset()
    assert reader.read() == records()[0]


def test_writes_mxnet_bytes(tmp_path):
    writer = mx.recordio.MXRecordIO(str(tmp_path / "plain.rec"), "w")
    for rec in records():
        writer.write(rec)
    del writer                                       # closing flushes, as MXNet's test does
    assert _bytes(tmp_path / "plain.rec") == _bytes(os.path.join(MXNET, "plain.rec"))


def test_indexed_mxnet_file_and_bytes(tmp_path):
    reader = mx.recordio.MXIndexedRecordIO(os.path.join(MXNET, "indexed.idx"),
                                           os.path.join(MXNET, "indexed.rec"), "r")
    assert reader.keys == KEYS
    for key, rec in reversed(list(zip(KEYS, records()))):
        assert reader.read_idx(key) == rec
    writer = mx.recordio.MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "w")
    for key, rec in zip(KEYS, records()):
        writer.write_idx(key, rec)
    writer.close()
    assert _bytes(tmp_path / "i.idx") == _bytes(os.path.join(MXNET, "indexed.idx"))
    assert _bytes(tmp_path / "i.rec") == _bytes(os.path.join(MXNET, "indexed.rec"))


def test_unpack_mxnet_packed():
    reader = mx.recordio.MXRecordIO(os.path.join(MXNET, "packed.rec"), "r")
    for header, payload in PACKED:
        got, body = mx.recordio.unpack(reader.read())
        assert body == payload
        np.testing.assert_array_equal(np.asarray(got.label, np.float32),
                                      np.asarray(header[1], np.float32))
        assert (got.id, got.id2) == header[2:]
        assert got.flag == (0 if np.isscalar(header[1]) else len(header[1]))


def test_part_layout_from_the_format():
    # the magic at offset 2 is unaligned: one whole part (flag 0) of 7 bytes, padded to 8
    assert mx.recordio.encode_record(b"ab" + MAGIC + b"c") == (
        MAGIC + struct.pack("<I", 7) + b"ab" + MAGIC + b"c" + b"\0")
    # aligned magic at 4: parts "abcd" (flag 1) and "e" (flag 3), the magic dropped
    assert mx.recordio.encode_record(b"abcd" + MAGIC + b"e") == (
        MAGIC + struct.pack("<I", (1 << 29) | 4) + b"abcd"
        + MAGIC + struct.pack("<I", (3 << 29) | 1) + b"e" + b"\0\0\0")


def test_tell_counts_bytes(tmp_path):
    writer = mx.recordio.MXIndexedRecordIO(str(tmp_path / "t.idx"), str(tmp_path / "t.rec"), "w")
    offsets = []
    for i in range(5):
        offsets.append(writer.tell())
        writer.write_idx(i, b"x" * i)
    # 8-byte header plus the length rounded up to 4
    assert offsets == [0, 8, 20, 32, 44]


def test_pickle_reopens(tmp_path):
    path = str(tmp_path / "p.rec")
    writer = mx.recordio.MXRecordIO(path, "w")
    writer.write(b"one")
    writer.write(b"two")
    writer.close()
    reader = mx.recordio.MXRecordIO(path, "r")
    assert reader.read() == b"one"
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.is_open and copy.read() == b"one"       # reopened at the first record
    assert reader.read() == b"two"                      # the original is left as it was
    copy.close()
    assert not pickle.loads(pickle.dumps(copy)).is_open
    writer = mx.recordio.MXRecordIO(path, "w")
    writer.write(b"kept")
    with pytest.raises(MXNetError, match="open for writing"):
        pickle.dumps(writer)
    writer.close()
    assert pickle.loads(pickle.dumps(writer)).is_open is False
    assert _bytes(path).startswith(MAGIC + struct.pack("<I", 4) + b"kept")


def test_indexed_pickle_and_string_keys(tmp_path):
    idx, rec = str(tmp_path / "s.idx"), str(tmp_path / "s.rec")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w", key_type=str)
    for key in ("b", "a"):
        writer.write_idx(key, key.encode() * 3)
    writer.close()
    reader = pickle.loads(pickle.dumps(mx.recordio.MXIndexedRecordIO(idx, rec, "r",
                                                                     key_type=str)))
    assert reader.keys == ["b", "a"] and reader.read_idx("a") == b"aaa"


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[:-3], "truncated"),
    (lambda b: b[:5], "truncated"),
    (lambda b: b"\1" + b[1:], "magic"),
    (lambda b: b[:4] + struct.pack("<I", (2 << 29) | 4) + b[8:], "flag"),
    (lambda b: b[:4] + struct.pack("<I", (1 << 29) - 1) + b[8:], "truncated"),
])
def test_corrupt_files(tmp_path, damage, message):
    path = tmp_path / "bad.rec"
    path.write_bytes(damage(_bytes(os.path.join(MXNET, "plain.rec"))[:40]))
    reader = mx.recordio.MXRecordIO(str(path), "r")
    with pytest.raises(MXNetError, match=message):
        for _ in range(10):
            reader.read()


def test_bad_use(tmp_path):
    with pytest.raises(MXNetError, match="flag"):
        mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "a")
    with pytest.raises(MXNetError, match="cannot open"):
        mx.recordio.MXRecordIO(str(tmp_path / "missing.rec"), "r")
    writer = mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "w")
    with pytest.raises(MXNetError, match="bytes, got str"):
        writer.write("text")
    with pytest.raises(MXNetError, match="flag 'w'"):
        writer.read()
    writer.close()
    with pytest.raises(MXNetError, match="closed"):
        writer.write(b"x")
    shutil.copy(os.path.join(MXNET, "indexed.rec"), tmp_path / "i.rec")
    (tmp_path / "i.idx").write_text("1\t0\nnot a line\n")
    with pytest.raises(MXNetError, match="line 2"):
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "r")
    (tmp_path / "i.idx").write_text("1\t0\n")
    reader = mx.recordio.MXIndexedRecordIO(str(tmp_path / "i.idx"), str(tmp_path / "i.rec"), "r")
    with pytest.raises(MXNetError, match="key 2"):
        reader.read_idx(2)


def test_other_process_refused(tmp_path, monkeypatch):
    writer = mx.recordio.MXRecordIO(str(tmp_path / "x.rec"), "w")
    monkeypatch.setattr(os, "getpid", lambda: writer.pid + 1)
    with pytest.raises(MXNetError, match="process"):
        writer.write(b"x")


def test_pack_unpack_labels():
    label = np.arange(5, dtype=np.float32) / 3
    header, body = mx.recordio.unpack(mx.recordio.pack((0, label, 3, 4), b"body"))
    np.testing.assert_array_equal(header.label, label)
    assert (header.flag, header.id, header.id2, body) == (5, 3, 4, b"body")
    header, body = mx.recordio.unpack(mx.recordio.pack(mx.recordio.IRHeader(9, 2.5, 1, 0), b""))
    assert (header.flag, header.label, body) == (0, 2.5, b"")
    with pytest.raises(MXNetError, match="header"):
        mx.recordio.unpack(b"short")
    with pytest.raises(MXNetError, match="float32 labels"):
        mx.recordio.unpack(struct.pack("<IfQQ", 100, 0, 0, 0) + b"1234")


def test_pack_img_round_trip():
    pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    bgr = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    header, img = mx.recordio.unpack_img(
        mx.recordio.pack_img((0, 1.0, 2, 0), bgr, quality=3, img_fmt=".png"))
    np.testing.assert_array_equal(img, bgr)            # PNG is lossless; BGR kept
    assert header.label == 1.0
    gray = bgr[:, :, 0]
    _, img = mx.recordio.unpack_img(mx.recordio.pack_img((0, 1.0, 2, 0), gray, img_fmt=".png"))
    np.testing.assert_array_equal(img, gray)            # iscolor=-1 keeps gray
    _, img = mx.recordio.unpack_img(
        mx.recordio.pack_img((0, 1.0, 2, 0), gray, img_fmt=".png"), iscolor=1)
    np.testing.assert_array_equal(img, np.repeat(gray[:, :, None], 3, axis=2))
    smooth = np.full((16, 16, 3), (10, 120, 240), np.uint8)
    _, img = mx.recordio.unpack_img(mx.recordio.pack_img((0, 0, 0, 0), smooth, quality=95))
    assert np.abs(img.astype(int) - smooth).max() <= 3   # JPEG of a flat colour, BGR kept
    with pytest.raises(MXNetError, match="img_fmt"):
        mx.recordio.pack_img((0, 0, 0, 0), smooth, img_fmt=".gif")
    with pytest.raises(MXNetError, match="uint8"):
        mx.recordio.pack_img((0, 0, 0, 0), smooth.astype(np.float32))


def test_threads_reading_one_indexed_file_get_their_own_records(tmp_path):
    """DataLoader workers are threads sharing one file position: a seek between another
    thread's seek and read must not hand it the wrong record (or None)."""
    import threading
    rec, idx = str(tmp_path / "t.rec"), str(tmp_path / "t.idx")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    payloads = {i: bytes([i % 251]) * (1000 + 37 * i) for i in range(64)}
    for i, p in payloads.items():
        writer.write_idx(i, p)
    writer.close()
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    wrong = []

    def work(seed):
        order = np.random.default_rng(seed).permutation(64).tolist() * 20
        for key in order:
            if reader.read_idx(key) != payloads[key]:
                wrong.append(key)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
