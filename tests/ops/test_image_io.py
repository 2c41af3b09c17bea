"""Image decoding (mxlite/ops/image_io.py, mxlite/ndarray/_image_io.py): MXNet 1.9.1's
``_cvimdecode`` values of a PNG (fixtures/image_mxnet.npz), ``_cvimread`` in mx.nd and a
bound mx.sym, ``mx.nd.imdecode``, and corrupt, hostile and missing-Pillow inputs as
MXNetErrors."""
import os
import struct
import sys
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

pytest.importorskip("PIL")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures"))
import make_image_fixture as fixture  # noqa: E402

DATA = np.load(os.path.join(os.path.dirname(fixture.__file__), "image_mxnet.npz"))
PIXELS = DATA["decode/pixels"]
PNG = DATA["decode/png"].tobytes()


def _buf(data):
    return mx.nd.array(np.frombuffer(data, np.uint8), dtype="uint8")


@pytest.mark.parametrize("flag, to_rgb", [(1, True), (1, False), (0, True)])
def test_cvimdecode_matches_mxnet(flag, to_rgb):
    want = DATA[f"decode/flag{flag}_rgb{int(to_rgb)}"]
    got = mx.nd._internal._cvimdecode(_buf(PNG), flag=flag, to_rgb=to_rgb).asnumpy()
    assert got.dtype == np.uint8 and got.shape == want.shape
    if flag == 1:           # lossless colour: exact (and the source pixels)
        np.testing.assert_array_equal(got, want)
    else:                   # OpenCV's and Pillow's fixed-point luma differ by rounding
        np.testing.assert_allclose(got.astype(int), want, atol=1)
    if flag == 1 and to_rgb:
        np.testing.assert_array_equal(got, PIXELS)


def test_cvimdecode_out_on_the_buffers_context():
    out = mx.nd.zeros(PIXELS.shape, dtype="uint8")
    got = mx.nd._internal._cvimdecode(_buf(PNG), out=out)
    assert got is out
    np.testing.assert_array_equal(out.asnumpy(), PIXELS)
    with pytest.raises(MXNetError, match="out must be"):
        mx.nd._internal._cvimdecode(_buf(PNG), out=mx.nd.zeros((2, 2, 3), dtype="uint8"))


def test_cvimread_in_nd_and_in_a_bound_symbol(tmp_path):
    path = str(tmp_path / "img.png")
    with open(path, "wb") as f:
        f.write(PNG)
    got = mx.nd._internal._cvimread(filename=path)
    np.testing.assert_array_equal(got.asnumpy(), PIXELS)
    sym = mx.sym._internal._cvimread(filename=path, flag=0)
    assert sym.infer_shape()[1] == [PIXELS.shape[:2] + (1,)]
    exe = sym.bind(mx.cpu(), args={})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(),
                                  mx.nd._internal._cvimread(filename=path, flag=0).asnumpy())
    with pytest.raises(MXNetError, match="_cvimread: cannot read"):
        mx.nd._internal._cvimread(filename=str(tmp_path / "missing.png"))


def test_imdecode_is_the_bgr_float_tensor():
    want = PIXELS[..., ::-1].transpose(2, 0, 1).astype(np.float32)     # OpenCV's BGR, CHW
    np.testing.assert_array_equal(mx.nd.imdecode(PNG).asnumpy(), want)
    crop = mx.nd.imdecode(PNG, clip_rect=(1, 2, 4, 5)).asnumpy()
    np.testing.assert_array_equal(crop, want[:, 2:5, 1:4])
    mean = mx.nd.full(want.shape, 10.0)
    np.testing.assert_array_equal(mx.nd.imdecode(PNG, mean=mean).asnumpy(), want - 10)
    out = mx.nd.zeros((2,) + want.shape)
    mx.nd.imdecode(PNG, out=out, index=1)
    np.testing.assert_array_equal(out.asnumpy()[1], want)
    assert not out.asnumpy()[0].any()
    gray = mx.nd.imdecode(PNG, channels=1)
    assert gray.shape == (1,) + PIXELS.shape[:2]


@pytest.mark.parametrize("call, words", [
    (lambda: mx.nd.imdecode(PNG, clip_rect=(0, 0, 9, 1)), "inside"),
    (lambda: mx.nd.imdecode(PNG, channels=2), "channels"),
    (lambda: mx.nd.imdecode(PNG, out=mx.nd.zeros((2, 3, 5, 7)), index=2), "index"),
    (lambda: mx.nd._internal._cvimdecode(_buf(PNG), flag=3), "flag"),
    (lambda: mx.nd._internal._cvimdecode(mx.nd.zeros((4,)), flag=1), "uint8"),
    (lambda: mx.sym._internal._cvimdecode(mx.sym.Variable("b")).infer_shape(b=(10,)),
     "depends on the bytes"),
])
def test_bad_calls(call, words):
    with pytest.raises(MXNetError, match=words):
        call()


def _png_claiming(width, height):
    """A PNG header for a ``width`` x ``height`` image, with a few bytes of pixel data."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("data, words", [
    (b"not an image at all", "cannot decode"),
    (PNG[:len(PNG) // 2], "cannot decode"),                              # truncated
    (PNG[:40] + bytes(len(PNG) - 40), "cannot decode"),                 # corrupt body
    (_png_claiming(1 << 20, 1 << 20), "pixels"),                        # a decompression bomb
    (_png_claiming(50000, 50000), "pixels"),
    (b"", "empty"),
])
def test_hostile_bytes_are_errors_not_crashes(data, words):
    with pytest.raises(MXNetError, match=words) as info:
        if data:
            mx.nd._internal._cvimdecode(_buf(data))
        else:
            mx.nd.imdecode(data)
    assert "_cvimdecode" in str(info.value) or "_imdecode" in str(info.value)


def test_a_header_smaller_than_its_data_is_an_error():
    """A PNG whose header claims 8 x 8 pixels but whose data is a few bytes."""
    with pytest.raises(MXNetError, match="cannot decode"):
        mx.nd._internal._cvimdecode(_buf(_png_claiming(8, 8)))


def test_missing_pillow_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(MXNetError, match="_cvimdecode.*Pillow.*pip install .mxlite.image.."):
        mx.nd._internal._cvimdecode(_buf(PNG))


def test_import_mxlite_does_not_import_pillow():
    import subprocess
    code = "import sys, mxlite; assert 'PIL' not in sys.modules, 'PIL imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
