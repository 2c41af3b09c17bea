"""Image decoding: MXNet 1.9.1's ``_cvimdecode``, ``_cvimread`` and the legacy ``_imdecode``
(``mx.nd.imdecode``), over the optional package Pillow (``pip install 'mxlite[image]'``)
where MXNet used OpenCV.

``import mxlite`` never needs Pillow: it is imported on the first decode, and a missing
Pillow is an MXNetError naming the operator and the package. Encoded bytes are untrusted:
the header's size is checked against ``MAX_PIXELS`` before any pixel is decoded (a tiny
file may claim a huge image), and whatever a corrupt, truncated or hostile file makes Pillow
raise becomes an MXNetError naming the operator.

A decoded image is (height, width, channels) uint8: 3 channels (RGB, or OpenCV's BGR with
``to_rgb=False``) for ``flag=1``, 1 channel (Pillow's ITU-R 601-2 luma, OpenCV's within 1)
for ``flag=0``. ``_cvimread`` reads the header in shape inference (its filename is a
parameter), so it also works in a symbol; ``_cvimdecode``'s shape depends on the bytes of its
input array, which no shape inference sees: ``mx.nd._internal._cvimdecode``
(``mxlite/ndarray/_image_io.py``) reads the header, allocates the output and runs the
operator's compute function on the buffer's device; a symbol of it is an error.
"""
import io

import numpy as np

from ..base import op_error
from .registry import NON_DIFFERENTIABLE, REQUIRED, OpDef, Param, register

MAX_PIXELS = 1 << 28          # 256 M pixels (768 MiB as RGB): the largest image decoded

__all__ = ["MAX_PIXELS", "decode", "header", "buffer_bytes"]


def _pillow(op):
    try:
        from PIL import Image
    except ImportError:
        raise op_error(op, "decoding images needs the optional package Pillow (pip install "
                       "'mxlite[image]')") from None
    return Image


def _open(op, data):
    """A lazily decoded Pillow image of ``data`` whose header size is checked."""
    image_mod = _pillow(op)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise op_error(op, f"the encoded image must be bytes, got {type(data).__name__}")
    if len(data) == 0:
        raise op_error(op, "the encoded image is empty")
    # Pillow's own bomb limit (2 x 89.5 M pixels) would refuse images within mxlite's cap:
    # raised to the cap for this open only (the caller's Pillow setting is restored)
    limit, image_mod.MAX_IMAGE_PIXELS = image_mod.MAX_IMAGE_PIXELS, MAX_PIXELS
    try:
        img = image_mod.open(io.BytesIO(bytes(data)))
        width, height = img.size
    except Exception as err:     # noqa: BLE001  (any failure on untrusted bytes is bad input)
        raise op_error(op, f"cannot decode the image ({len(data)} bytes): "
                       f"{type(err).__name__}: {err}") from None
    finally:
        image_mod.MAX_IMAGE_PIXELS = limit
    if width <= 0 or height <= 0 or width * height > MAX_PIXELS:
        raise op_error(op, f"the image is {width} x {height} pixels; mxlite decodes 1 to "
                       f"{MAX_PIXELS} pixels")
    return img


def header(op, data, flag=1):
    """``(height, width, channels)`` of the encoded image ``data``, from its header alone."""
    width, height = _open(op, data).size
    return (height, width, 1 if flag == 0 else 3)


def decode(op, data, flag=1, to_rgb=True):
    """The (H, W, C) uint8 pixels of the encoded image ``data`` (C = 1 for ``flag`` 0, else
    3; BGR unless ``to_rgb``)."""
    img = _open(op, data)
    image_mod = _pillow(op)
    limit, image_mod.MAX_IMAGE_PIXELS = image_mod.MAX_IMAGE_PIXELS, MAX_PIXELS
    try:
        pixels = np.asarray(img.convert("L" if flag == 0 else "RGB"), dtype=np.uint8)
    except Exception as err:     # noqa: BLE001  (a truncated or corrupt body)
        raise op_error(op, f"cannot decode the image ({len(data)} bytes): "
                       f"{type(err).__name__}: {err}") from None
    finally:
        image_mod.MAX_IMAGE_PIXELS = limit
    if flag == 0:
        return pixels.reshape(pixels.shape + (1,))
    return pixels if to_rgb else np.ascontiguousarray(pixels[..., ::-1])


def _check_flag(op, flag):
    if flag not in (0, 1):
        raise op_error(op, f"flag must be 0 (grayscale) or 1 (colour), got {flag}")


def _read(op, filename):
    try:
        with open(filename, "rb") as f:
            return f.read()
    except OSError as err:
        raise op_error(op, f"cannot read {filename!r}: {err}") from None


def _uint8(dtypes, attrs):
    return [np.dtype("uint8")]


# ---- _cvimdecode --------------------------------------------------------------------------------
def _cvimdecode_shape(shapes, attrs):
    raise op_error("_cvimdecode", "the decoded image's shape depends on the bytes of buf, "
                   "which shape inference does not see: call mx.nd._internal._cvimdecode "
                   "(mx.image.imdecode) on an NDArray, or _cvimread in a symbol")


def buffer_bytes(op, xp, buf):
    """The bytes of the 1-D uint8 device array ``buf``, checked."""
    if buf.ndim != 1 or buf.dtype != np.uint8:
        raise op_error(op, f"buf must be a 1-D uint8 array, got {buf.dtype} of shape "
                       f"{tuple(buf.shape)}")
    return np.ascontiguousarray(xp.to_host(buf)).tobytes()


def _cvimdecode_compute(rctx, ins, outs, attrs):
    """Decode ``buf`` into ``outs[0]``, whose shape the caller read from the header
    (``mx.nd._internal._cvimdecode``)."""
    op, out = "_cvimdecode", outs[0]
    _check_flag(op, attrs.flag)
    pixels = decode(op, buffer_bytes(op, rctx.xp, ins[0]), attrs.flag, attrs.to_rgb)
    if pixels.shape != tuple(out.shape) or out.dtype != np.uint8:
        raise op_error(op, f"out must be a uint8 array of shape {pixels.shape}, got "
                       f"{out.dtype} {tuple(out.shape)}")
    rctx.xp.copyto(out, rctx.xp.from_host(pixels))


register(OpDef(
    "_cvimdecode", inputs=("buf",),
    params=(Param("flag", "int", 1, "1 colour, 0 grayscale"),
            Param("to_rgb", "bool", True, "RGB (else OpenCV's BGR) channel order")),
    infer_shape=_cvimdecode_shape, infer_type=_uint8, compute={"cpu": _cvimdecode_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""Decode an encoded image (PNG, JPEG, BMP, ... as a 1-D uint8 array) into an
(H, W, C) uint8 image with Pillow (optional: ``pip install 'mxlite[image]'``). ``flag=0``
decodes to one grayscale channel; ``to_rgb=False`` gives OpenCV's BGR order. Images above
``mxlite.ops.image_io.MAX_PIXELS`` pixels and corrupt files are MXNetErrors. Imperative
only (the shape depends on the bytes). Not differentiable."""))


# ---- _cvimread ----------------------------------------------------------------------------------
def _cvimread_shape(shapes, attrs):
    _check_flag("_cvimread", attrs.flag)
    return [header("_cvimread", _read("_cvimread", attrs.filename), attrs.flag)]


def _cvimread_compute(rctx, ins, outs, attrs):
    op, out = "_cvimread", outs[0]
    pixels = decode(op, _read(op, attrs.filename), attrs.flag, attrs.to_rgb)
    if pixels.shape != tuple(out.shape):
        raise op_error(op, f"{attrs.filename!r} changed while it was read: decoded "
                       f"{pixels.shape}, its header said {tuple(out.shape)}")
    rctx.xp.copyto(out, rctx.xp.from_host(pixels))


register(OpDef(
    "_cvimread", inputs=(),
    params=(Param("filename", "str", REQUIRED, "the image file"),
            Param("flag", "int", 1, "1 colour, 0 grayscale"),
            Param("to_rgb", "bool", True, "RGB (else OpenCV's BGR) channel order")),
    infer_shape=_cvimread_shape, infer_type=_uint8, compute={"cpu": _cvimread_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""Read and decode the image file ``filename`` into an (H, W, C) uint8 image, as
``_cvimdecode`` (Pillow, optional). The header is read in shape inference, so a symbol of
it infers its shape. Not differentiable."""))


# ---- _imdecode (mx.nd.imdecode) -----------------------------------------------------------------
def _imdecode_box(attrs):
    """(channels, y0, y1, x0, x1) of the decoded crop, checked against the header."""
    op = "_imdecode"
    if attrs.c not in (1, 3):
        raise op_error(op, f"channels must be 1 or 3, got {attrs.c}")
    h, w, _ = header(op, attrs.str_img, 0 if attrs.c == 1 else 1)
    x0, y0, x1, y1 = attrs.x0, attrs.y0, attrs.x1, attrs.y1
    if y1 == y0:                                  # MXNet: an empty box means the whole image
        x0, y0, x1, y1 = 0, 0, w, h
    if not (0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h):
        raise op_error(op, f"clip_rect (x0={x0}, y0={y0}, x1={x1}, y1={y1}) must lie inside "
                       f"the {w} x {h} image and be non-empty")
    return attrs.c, y0, y1, x0, x1


def _imdecode_shape(shapes, attrs):
    c, y0, y1, x0, x1 = _imdecode_box(attrs)
    return [(c, y1 - y0, x1 - x0)]


def _imdecode_compute(rctx, ins, outs, attrs):
    c, y0, y1, x0, x1 = _imdecode_box(attrs)
    # OpenCV's order: the legacy operator never converted BGR to RGB
    pixels = decode("_imdecode", attrs.str_img, 0 if c == 1 else 1, to_rgb=False)
    chw = np.ascontiguousarray(pixels[y0:y1, x0:x1].transpose(2, 0, 1))
    rctx.xp.cast_into(outs[0], rctx.xp.from_host(chw))


register(OpDef(
    "_imdecode", inputs=(),
    params=(Param("index", "int", 0, "the batch slot of out (mx.nd.imdecode)"),
            Param("x0", "int", 0, "left of the crop"), Param("y0", "int", 0, "top of the crop"),
            Param("x1", "int", 0, "right of the crop (exclusive)"),
            Param("y1", "int", 0, "bottom of the crop (exclusive); y0 == y1: whole image"),
            Param("c", "int", 3, "channels: 3 (BGR) or 1 (grayscale)"),
            Param("size", "int", 0, "the length of str_img (MXNet's; unused)"),
            Param("str_img", "any", REQUIRED, "the encoded image bytes")),
    infer_shape=_imdecode_shape, infer_type=lambda dtypes, attrs: [np.dtype("float32")],
    compute={"cpu": _imdecode_compute}, gradient=NON_DIFFERENTIABLE,
    doc="""The legacy decoder behind ``mx.nd.imdecode``: the crop (x0, y0)-(x1, y1) of the
encoded image ``str_img`` as a (c, H, W) float32 array in OpenCV's BGR order (Pillow,
optional). Not differentiable."""))

# Decoding runs on the host: the encoded bytes are host data (Pillow decodes them) and the
# pixels reach the device through xp.from_host (tests/test_device.py reads this).
HOST_CODE = {
    "decode": "Pillow's decoded pixels as a contiguous host array, before from_host",
    "buffer_bytes": "the encoded bytes of a uint8 buffer, copied to the host to decode",
    "_imdecode_compute": "the bytes parameter of _imdecode as a host array, to decode",
}
