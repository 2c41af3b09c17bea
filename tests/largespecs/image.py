"""Large-tensor rows: the operators of mxlite/ops/image.py.

Each row runs the op on a uint8 batch of small (H, W, C) images past 2**32 elements (4 GiB;
the colour, normalize and resize arithmetic runs through float32 scratch in blocks of
images, so the peak is the input and the output): the images around 2**31 and 2**32 and the
last one equal the op on a small batch of those images (a random op after the same seed
draws the same factors). to_tensor's float32 output of 2**32 elements would be 16 GiB, so
its row passes 2**31 output elements.
"""
import numpy as np

import mxlite as mx

from . import Row
from .nn import _check_items, _items, _take_items

_IMG = (8, 16, 3)                  # one small image (384 elements)
_CHW = (3, 8, 16)
_TO_TENSOR_REASON = ("its output is float32 whatever the input: 2**32 float32 elements are "
                     "16 GiB, the whole peak, beside the input")


def _image_row(call, shape=_IMG, size="2**32", reason=None, seeded=False):
    """A row for ``call`` on each image of a uint8 batch of ``shape`` images past ``size``
    elements (the input's count; to_tensor's output count); ``seeded`` seeds the random
    stream before each of the two calls."""
    def run(t):
        per = int(np.prod(shape))
        total = t.power(size)
        shp = (total // per + 1,) + shape
        x = t.big("uint8", int(np.prod(shp)), shape=shp, fill=1)
        items = _items(t, x.size, per)
        small = _take_items(t, x, items)

        def once(data):
            if seeded:
                mx.random.seed(23)
            return call(data)
        want = once(small).asnumpy()
        y = once(x)
        t.seen(y)
        _check_items(t, y, items, want, "output images")
    return Row(run, "uint8", size, reason)


_WIDE = 2048                       # the width of the one big image of the _cv* rows


def _big_image(t):
    """One (H, 2048, 1) uint8 image past 2**32 elements, H even."""
    rows = 2 * (t.P32 // (2 * _WIDE) + 1)
    return t.big("uint8", rows * _WIDE, shape=(rows, _WIDE, 1), fill=1)


def _marked_rows(t, x):
    """The rows of image ``x`` holding ``t.big``'s markers and the checked positions."""
    return sorted({p // _WIDE for p in set(t.marks(x.size)) | set(t.positions(x.size))})


def _one_big_image(t):
    """Halving each side, bilinear: output row i reads source rows 2i and 2i + 1 only, so
    the output rows of the marked source rows equal _cvimresize of those row pairs."""
    x = _big_image(t)
    y = mx.nd._internal._cvimresize(x, w=_WIDE // 2, h=x.shape[0] // 2)
    t.seen(y)
    for r in sorted({r // 2 for r in _marked_rows(t, x)}):
        pair = t.small(x, list(range(2 * r * _WIDE, (2 * r + 2) * _WIDE))).reshape((2, _WIDE, 1))
        want = mx.nd._internal._cvimresize(pair, w=_WIDE // 2, h=1).asnumpy().ravel()
        got = t.values(y, list(range(r * _WIDE // 2, (r + 1) * _WIDE // 2)))
        t.equal(got, want, f"output row {r}")


def _one_big_border(t):
    """A wrapped border of 1 pixel: output row r + 1 is source row r, wrapped by one pixel
    at each end."""
    x = _big_image(t)
    y = mx.nd._internal._cvcopyMakeBorder(x, 1, 1, 1, 1, type=3)
    t.seen(y)
    out_w = _WIDE + 2
    for r in _marked_rows(t, x):
        row = t.values(x, list(range(r * _WIDE, (r + 1) * _WIDE)))
        want = np.concatenate([row[-1:], row, row[:1]])
        got = t.values(y, list(range((r + 1) * out_w, (r + 2) * out_w)))
        t.equal(got, want, f"output row {r + 1}")


_DECODE_REASON = ("a decoded image is capped at mxlite.ops.image_io.MAX_PIXELS = 2**28 "
                  "pixels (a hostile header must not allocate more): an RGB image just past "
                  "2**29 elements is the most a decode can give")


def _decoder_row(call):
    """Decode a BMP (uncompressed: quick to make) of an RGB image just past 2**29 elements
    with markers; ``call(bytes, path)`` decodes it. The decoded marker positions (RGB order,
    HWC) hold the markers."""
    def run(t):
        import io
        import os
        import tempfile
        try:
            from PIL import Image
        except ImportError:
            return                      # the decoders need the optional Pillow
        n = t.power("2**29")
        width = 1024
        height = n // (3 * width) + 1
        pixels = np.ones(height * width * 3, np.uint8)
        marks = t.marks(pixels.size)
        pixels[marks] = [3, 5, 7, 9] * (len(marks) // 4) + [3, 5, 7, 9][:len(marks) % 4]
        encoded = io.BytesIO()
        Image.fromarray(pixels.reshape(height, width, 3)).save(encoded, "BMP")
        del pixels
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "big.bmp")
            with open(path, "wb") as f:
                f.write(encoded.getvalue())
            y = call(encoded.getvalue(), path)
        t.seen(y)
        t.equal(t.values(y.reshape((-1,)), marks),
                np.array([3, 5, 7, 9] * len(marks), np.uint8)[:len(marks)], "decoded markers")
    return Row(run, "uint8", "2**29", _DECODE_REASON)


def _bgr_to_rgb_hwc(chw):
    """imdecode's (3, H, W) float32 BGR as (H, W, 3) uint8 RGB."""
    return mx.nd.flip(chw.transpose((1, 2, 0)), axis=2).astype("uint8")


_IM = mx.nd.image

ROWS = {
    "_image_to_tensor": _image_row(_IM.to_tensor, size="2**31", reason=_TO_TENSOR_REASON),
    "_image_normalize": _image_row(lambda x: _IM.normalize(x, mean=(1, 2, 3), std=(0.5, 2, 1)),
                                   shape=_CHW),
    "_image_flip_left_right": _image_row(_IM.flip_left_right),
    "_image_flip_top_bottom": _image_row(_IM.flip_top_bottom),
    "_image_random_flip_left_right": _image_row(_IM.random_flip_left_right, seeded=True),
    "_image_random_flip_top_bottom": _image_row(_IM.random_flip_top_bottom, seeded=True),
    "_image_crop": _image_row(lambda x: _IM.crop(x, x=3, y=2, width=12, height=5)),
    "_image_resize": _image_row(lambda x: _IM.resize(x, size=(8, 4))),
    "_backward_image_resize": _image_row(lambda g: mx.nd._internal._backward_image_resize(
        g, height=4, width=8)),
    "_image_random_brightness": _image_row(lambda x: _IM.random_brightness(
        x, min_factor=1.5, max_factor=3), seeded=True),
    "_image_random_contrast": _image_row(lambda x: _IM.random_contrast(
        x, min_factor=0.5, max_factor=2), seeded=True),
    "_image_random_saturation": _image_row(lambda x: _IM.random_saturation(
        x, min_factor=0.5, max_factor=2), seeded=True),
    "_image_random_hue": _image_row(lambda x: _IM.random_hue(
        x, min_factor=0.1, max_factor=0.3), seeded=True),
    "_image_random_color_jitter": _image_row(lambda x: _IM.random_color_jitter(
        x, brightness=0.5, contrast=0.5, saturation=0.5, hue=0.2), seeded=True),
    "_image_adjust_lighting": _image_row(lambda x: _IM.adjust_lighting(
        x, alpha=(0.01, 0.02, 0.03))),
    "_cvimresize": Row(_one_big_image, "uint8"),
    "_cvcopyMakeBorder": Row(_one_big_border, "uint8"),
    "_cvimdecode": _decoder_row(lambda data, path: mx.nd._internal._cvimdecode(
        mx.nd.array(np.frombuffer(data, np.uint8), dtype="uint8"))),
    "_cvimread": _decoder_row(lambda data, path: mx.nd._internal._cvimread(filename=path)),
    "_imdecode": _decoder_row(lambda data, path: _bgr_to_rgb_hwc(mx.nd.imdecode(data))),
    "_image_random_lighting": _image_row(lambda x: _IM.random_lighting(x, alpha_std=0.1),
                                         seeded=True),
}
