"""Image reading, resizing and cropping, and the augmenters of MXNet 1.9.1's ``mx.image``.

Images are (height, width, channels) NDArrays, uint8 as decoded (``imread``, ``imdecode``);
sizes are given as (width, height), crop boxes as (x0, y0, width, height), as in MXNet.
Decoding uses the optional package Pillow (``pip install 'mxlite[image]'``), imported on the
first decode: ``import mxlite`` never needs it.

Interpolation codes are OpenCV's: 0 nearest, 1 bilinear, 2 bicubic, 3 area; 9 picks from
the sizes (bicubic to enlarge, area to shrink, bilinear otherwise) and 10 draws one at
random. Lanczos (4) is not implemented by mxlite's resize: asking for it is an MXNetError,
and 10 draws from 0-3 only (MXNet drew from 0-4).

Randomness is MXNet's: the crops, the colour jitters, the flips, the random grey and
``interp=10`` draw from Python's ``random`` module (seed it with ``random.seed``); the
lighting noise and ``random_rotate`` from NumPy's global generator (``np.random.seed``).

Unlike MXNet, no function or augmenter changes its input: MXNet's ``color_normalize`` and
the colour jitters updated ``src`` in place (``src -= mean``) and returned it. An integer
image given to the colour functions is computed on as float32 (as ``CastAug`` would).
"""
import contextlib
import json
import numbers
import os
import random
import warnings

import numpy as np

from .. import ndarray as nd
from ..base import MXNetError

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate", "Augmenter", "SequentialAug", "RandomOrderAug",
           "ResizeAug", "ForceResizeAug", "RandomCropAug", "RandomSizedCropAug",
           "CenterCropAug", "BrightnessJitterAug", "ContrastJitterAug",
           "SaturationJitterAug", "HueJitterAug", "ColorJitterAug", "LightingAug",
           "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter"]

INTERP_METHODS = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area"}
_AUTO_INTERP, _RANDOM_INTERP = 9, 10
_LUMA = (0.299, 0.587, 0.114)             # ITU-R BT.601 weights of R, G, B


class ImageTypeError(MXNetError, TypeError):
    """An argument of the wrong type: an MXNetError that is also the TypeError MXNet raised
    (``imrotate``), so code catching either works."""


@contextlib.contextmanager
def _named(fn):
    """Prefix the MXNetError of an operator called by ``fn`` with ``fn``'s name, so the
    message says which mx.image function the user called."""
    try:
        yield
    except MXNetError as err:
        raise MXNetError(f"mx.image.{fn}: {err}") from None


def _hwc(fn, src):
    """``(height, width, channels)`` of the image NDArray ``src``, checked."""
    if not isinstance(src, nd.NDArray):
        raise MXNetError(f"mx.image.{fn}: src must be an (height, width, channels) NDArray, "
                         f"got {type(src).__name__}")
    if src.ndim != 3:
        raise MXNetError(f"mx.image.{fn}: src must be an (height, width, channels) image, "
                         f"got shape {src.shape}")
    return src.shape


def _positive_int(fn, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise MXNetError(f"mx.image.{fn}: {name} must be a positive integer, got {value!r}")
    return int(value)


def _size_pair(fn, size, name="size"):
    """The (width, height) ``size``, checked: two positive integers."""
    try:
        w, h = size
    except (TypeError, ValueError):
        raise MXNetError(f"mx.image.{fn}: {name} must be (width, height), got "
                         f"{size!r}") from None
    return _positive_int(fn, f"{name}[0] (width)", w), _positive_int(fn, f"{name}[1] (height)", h)


def _float(src):
    """``src`` as a float array: integer images are computed on as float32."""
    return src if np.dtype(src.dtype).kind == "f" else src.astype("float32")


# ---- reading and decoding --------------------------------------------------------------------
def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode the image file ``filename`` into an (H, W, C) uint8 NDArray: 3
    channels (RGB, or OpenCV's BGR with ``to_rgb=False``) for ``flag=1``, 1 grey channel for
    ``flag=0``. ``out`` receives the image when given. Needs Pillow
    (``pip install 'mxlite[image]'``).

    >>> mx.image.imread("/no/such/file.jpg")
    Traceback (most recent call last):
    ...
    mxlite.base.MXNetError: mx.image.imread: filename '/no/such/file.jpg' is not a file
    """
    if not isinstance(filename, (str, os.PathLike)):
        raise MXNetError(f"mx.image.imread: filename must be a path, got "
                         f"{type(filename).__name__}")
    filename = os.fspath(filename)
    if not os.path.isfile(filename):
        raise MXNetError(f"mx.image.imread: filename {filename!r} is not a file")
    with _named("imread"):
        return nd._internal._cvimread(filename=filename, flag=flag, to_rgb=to_rgb, out=out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode the encoded image ``buf`` (bytes, bytearray, a NumPy array or a 1-D uint8
    NDArray of the file's bytes: JPEG, PNG, BMP, ...) into an (H, W, C) uint8 NDArray, as
    ``imread``. Needs Pillow (``pip install 'mxlite[image]'``)."""
    if not isinstance(buf, nd.NDArray):
        if not isinstance(buf, (bytes, bytearray, np.ndarray)):
            raise MXNetError(f"mx.image.imdecode: buf must be bytes, bytearray, a NumPy array "
                             f"or an NDArray, got {type(buf).__name__} (encode a str to "
                             "bytes first)")
        data = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
        buf = nd.array(np.ascontiguousarray(data).view(np.uint8).ravel(), dtype="uint8")
    with _named("imdecode"):
        return nd._internal._cvimdecode(buf, flag=flag, to_rgb=to_rgb, out=out)


# ---- resizing and borders --------------------------------------------------------------------
def imresize(src, w, h, interp=1, out=None):
    """``src`` (H, W, C) resized to (h, w, C) with the OpenCV interpolation ``interp`` (0
    nearest, 1 bilinear, 2 bicubic, 3 area; 9 and 10 as ``resize_short``)."""
    height, width, _ = _hwc("imresize", src)
    w, h = _positive_int("imresize", "w", w), _positive_int("imresize", "h", h)
    interp = _get_interp_method(interp, (height, width, h, w), fn="imresize")
    with _named("imresize"):
        return nd._internal._cvimresize(src, w=w, h=h, interp=interp, out=out)


def scale_down(src_size, size):
    """The crop ``size`` (width, height) shrunk, keeping its aspect ratio, until it fits in
    an image of ``src_size`` (width, height); the sides are truncated to integers.

    >>> mx.image.scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def copyMakeBorder(src, top, bot, left, right, type=0,  # noqa: A002  (MXNet's name)
                   value=0.0, values=(), out=None):
    """``src`` (H, W, C) surrounded by ``top``, ``bot``, ``left`` and ``right`` pixels, with
    OpenCV's border codes: 0 a constant (``values`` per channel, or ``value``), 1 the edge
    pixel repeated, 2 a mirror (``fedcba|abcdef``), 3 the image wrapped around, 4 a mirror
    without the edge (``edcb|abcde``). (MXNet's docstring listed other numbers; its code,
    like this one, used OpenCV's.)"""
    _hwc("copyMakeBorder", src)
    with _named("copyMakeBorder"):
        return nd._internal._cvcopyMakeBorder(src, top, bot, left, right, type=type,
                                              value=value, values=tuple(values), out=out)


def _get_interp_method(interp, sizes=(), fn="resize"):
    """The interpolation code (0-3) that ``interp`` asks for: 9 picks from ``sizes``
    (old height, old width, new height, new width): bicubic (2) to enlarge both sides, area
    (3) to shrink both, bilinear (1) otherwise, bicubic without sizes; 10 draws one of 0-3
    with Python's ``random``."""
    if interp == _AUTO_INTERP:
        if not sizes:
            return 2
        old_h, old_w, new_h, new_w = sizes
        if new_h > old_h and new_w > old_w:
            return 2
        if new_h < old_h and new_w < old_w:
            return 3
        return 1
    if interp == _RANDOM_INTERP:
        return random.randint(0, len(INTERP_METHODS) - 1)
    if interp not in INTERP_METHODS:
        lanczos = " (Lanczos, 4, is not implemented)" if interp == 4 else ""
        raise MXNetError(f"mx.image.{fn}: interp must be one of 0-3 (nearest, bilinear, "
                         f"bicubic, area), 9 (auto) or 10 (random), got {interp!r}{lanczos}")
    return interp


def resize_short(src, size, interp=2):
    """``src`` resized so that its shorter side is ``size``; the longer side is scaled alike
    and truncated (at least 1).

    >>> mx.image.resize_short(mx.nd.zeros((40, 60, 3), dtype="uint8"), 20).shape
    (20, 30, 3)
    """
    h, w, _ = _hwc("resize_short", src)
    size = _positive_int("resize_short", "size", size)
    if h == 0 or w == 0:
        raise MXNetError(f"mx.image.resize_short: src {src.shape} is empty")
    if h > w:
        new_h, new_w = max(1, size * h // w), size
    else:
        new_h, new_w = size, max(1, size * w // h)
    return _resize(src, new_w, new_h, interp, "resize_short")


def _resize(src, w, h, interp, fn):
    h0, w0, _ = src.shape
    method = _get_interp_method(interp, (h0, w0, h, w), fn=fn)
    with _named(fn):
        return nd._internal._cvimresize(src, w=w, h=h, interp=method)


# ---- crops ------------------------------------------------------------------------------------
def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The ``w`` x ``h`` box of ``src`` whose top-left corner is (``x0``, ``y0``), resized
    to ``size`` (width, height) when given. The box must lie inside the image (MXNet cut it
    silently). The crop is a copy, never a view of ``src``."""
    height, width, _ = _hwc("fixed_crop", src)
    w, h = _positive_int("fixed_crop", "w", w), _positive_int("fixed_crop", "h", h)
    if not (isinstance(x0, numbers.Integral) and isinstance(y0, numbers.Integral)
            and 0 <= x0 and 0 <= y0 and x0 + w <= width and y0 + h <= height):
        raise MXNetError(f"mx.image.fixed_crop: the crop x0={x0}, y0={y0}, w={w}, h={h} does "
                         f"not fit in the {width} x {height} image (shape {src.shape})")
    out = nd.slice(src, begin=(int(y0), int(x0), None), end=(int(y0) + h, int(x0) + w, None))
    if size is not None and tuple(size) != (w, h):
        new_w, new_h = _size_pair("fixed_crop", size)
        out = _resize(out, new_w, new_h, interp, "fixed_crop")
    return out


def _crop_size(fn, src, size):
    """The image's (width, height) and the crop ``size`` scaled down to fit in it."""
    height, width, _ = _hwc(fn, src)
    size = _size_pair(fn, size)
    if height == 0 or width == 0:
        raise MXNetError(f"mx.image.{fn}: src {src.shape} is empty")
    new_w, new_h = scale_down((width, height), size)
    return width, height, max(1, new_w), max(1, new_h)


def random_crop(src, size, interp=2):
    """A crop of ``size`` (width, height) at a random place (Python's ``random``); a size
    larger than the image is first scaled down to fit (keeping its aspect ratio), and the
    crop then resized to ``size``. Returns ``(crop, (x0, y0, width, height))``, the box in
    ``src``."""
    width, height, new_w, new_h = _crop_size("random_crop", src, size)
    x0 = random.randint(0, width - new_w)
    y0 = random.randint(0, height - new_h)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """The crop of ``size`` (width, height) at the centre of ``src``, scaled down to fit and
    resized as ``random_crop``. Returns ``(crop, (x0, y0, width, height))``."""
    width, height, new_w, new_h = _crop_size("center_crop", src, size)
    x0, y0 = (width - new_w) // 2, (height - new_h) // 2
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` (either may be None: skipped), broadcast over the channels.
    ``mean`` and ``std`` are NDArrays, NumPy arrays or numbers. A new array: MXNet changed
    ``src`` in place."""
    out = _float(src)
    if mean is not None:
        out = out - _as_nd(mean, out)
    if std is not None:
        out = out / _as_nd(std, out)
    return out


def _as_nd(value, like):
    """``value`` (a number, NumPy array or NDArray) as something ``like`` combines with."""
    if isinstance(value, numbers.Number):
        return float(value)
    if isinstance(value, nd.NDArray):
        return value.astype(like.dtype) if value.dtype != like.dtype else value
    return nd.array(np.asarray(value), ctx=like.context, dtype=like.dtype)


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A random crop whose area is a fraction of the image's drawn from ``area`` ((min, max)
    or min, max 1) and whose aspect ratio (width / height) is drawn log-uniformly from
    ``ratio`` (min, max), resized to ``size`` (width, height). Ten tries at a box that
    fits; then ``center_crop``. Draws from Python's ``random``. Returns
    ``(crop, (x0, y0, width, height))``. ``min_area`` is the deprecated name of ``area``."""
    height, width, _ = _hwc("random_size_crop", src)
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                      DeprecationWarning)
        area = kwargs.pop("min_area")
    if kwargs:
        raise MXNetError(f"mx.image.random_size_crop: unexpected keyword arguments "
                         f"{sorted(kwargs)}")
    low, high = _area_range(area)
    log_ratio = _log_ratio_range(ratio)
    for _ in range(10):
        target = random.uniform(low, high) * height * width
        aspect = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target * aspect)))
        new_h = int(round(np.sqrt(target / aspect)))
        if 0 < new_w <= width and 0 < new_h <= height:
            x0 = random.randint(0, width - new_w)
            y0 = random.randint(0, height - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _area_range(area):
    low, high = (area, 1.0) if isinstance(area, numbers.Number) else tuple(area)
    if not 0 < low <= high:
        raise MXNetError(f"mx.image.random_size_crop: area must be a fraction in (0, 1] or "
                         f"an ordered (min, max) pair, got {area!r}")
    return float(low), float(high)


def _log_ratio_range(ratio):
    try:
        low, high = ratio
    except (TypeError, ValueError):
        low = high = None
    if low is None or not 0 < low <= high:
        raise MXNetError(f"mx.image.random_size_crop: ratio must be an ordered (min, max) "
                         f"pair of positive aspect ratios, got {ratio!r}")
    return float(np.log(low)), float(np.log(high))


# ---- rotation ---------------------------------------------------------------------------------
def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """``src`` (float32 (C, H, W), or an (N, C, H, W) batch) rotated counter-clockwise about
    its centre by ``rotation_degrees`` (a number, or for a batch an NDArray of one angle per
    image), sampled bilinearly with zeros outside. ``zoom_in`` scales so that no padding
    shows, ``zoom_out`` so that the whole image shows (not both)."""
    if zoom_in and zoom_out:
        raise MXNetError("mx.image.imrotate: zoom_in and zoom_out cannot both be True")
    if not isinstance(src, nd.NDArray) or np.dtype(src.dtype) != np.float32:
        raise ImageTypeError(f"mx.image.imrotate: src must be a float32 NDArray, got "
                             f"{getattr(src, 'dtype', type(src).__name__)}")
    if src.ndim not in (3, 4):
        raise MXNetError(f"mx.image.imrotate: src must be (C, H, W) or (N, C, H, W), got "
                         f"shape {src.shape}")
    batch = src.expand_dims(axis=0) if src.ndim == 3 else src
    degrees = _angles(rotation_degrees, batch.shape[0], single=src.ndim == 3)
    grid = _rotation_grid(degrees, batch.shape[2], batch.shape[3], zoom_in, zoom_out)
    out = nd.BilinearSampler(batch, nd.array(grid, ctx=src.context, dtype="float32"))
    return out[0] if src.ndim == 3 else out


def _angles(rotation_degrees, count, single):
    """One angle (float64 degrees) per image of the batch."""
    if isinstance(rotation_degrees, numbers.Number):
        return np.full(count, float(rotation_degrees))
    if single:
        raise ImageTypeError("mx.image.imrotate: a single image takes one number as "
                             f"rotation_degrees, got {type(rotation_degrees).__name__}")
    values = rotation_degrees.asnumpy() if isinstance(rotation_degrees, nd.NDArray) \
        else np.asarray(rotation_degrees)
    values = values.astype(np.float64).ravel()
    if values.size != count:
        raise MXNetError(f"mx.image.imrotate: {count} images need {count} rotation angles, "
                         f"got {values.size}")
    return values


def _rotation_grid(degrees, h, w, zoom_in, zoom_out):
    """BilinearSampler's (N, 2, H, W) grid: each output pixel's source position, rotated
    about the centre and normalised to [-1, 1] (x, then y)."""
    a = np.radians(degrees)[:, None, None]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    xs, ys = xs - (w - 1) / 2, ys - (h - 1) / 2
    src_x = xs * np.cos(a) - ys * np.sin(a)
    src_y = xs * np.sin(a) + ys * np.cos(a)
    scale = _zoom(np.radians(degrees), h, w, zoom_in, zoom_out)[:, None, None]
    # a 1-pixel side has no extent to normalise by
    grid = np.stack([src_x / max((w - 1) / 2, 0.5), src_y / max((h - 1) / 2, 0.5)], axis=1)
    return grid * scale[:, None]


def _zoom(radians, h, w, zoom_in, zoom_out):
    """The grid's scale: the rotated image's bounding box is ``w|cos a| + h|sin a|`` by
    ``w|sin a| + h|cos a|``; ``zoom_out`` fits it in the output, ``zoom_in`` the output in
    it."""
    if not (zoom_in or zoom_out):
        return np.ones_like(radians)
    cos, sin = np.abs(np.cos(radians)), np.abs(np.sin(radians))
    box_w, box_h = w * cos + h * sin, w * sin + h * cos
    if zoom_out:
        return np.maximum(box_w / w, box_h / h)
    return np.minimum(w / box_w, h / box_h)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """``imrotate`` by angles drawn uniformly from ``angle_limits`` (lower, upper) degrees,
    one per image, from NumPy's global generator."""
    if not isinstance(src, nd.NDArray) or src.ndim not in (3, 4):
        raise MXNetError("mx.image.random_rotate: src must be a (C, H, W) or (N, C, H, W) "
                         "NDArray")
    if src.ndim == 3:
        return imrotate(src, float(np.random.uniform(*angle_limits)), zoom_in, zoom_out)
    angles = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, nd.array(angles), zoom_in, zoom_out)


# ---- augmenters -------------------------------------------------------------------------------
class Augmenter:
    """The base of the image augmenters: ``aug(src)`` returns the augmented image;
    ``dumps()`` describes the augmenter as JSON ``[name, arguments]``."""

    def __init__(self, **kwargs):
        self._kwargs = {key: _jsonable(value) for key, value in kwargs.items()}

    def _describe(self):
        return [type(self).__name__.lower(), self._kwargs]

    def dumps(self):
        """The JSON string ``[lower-case class name, {argument: value}]``."""
        return json.dumps(self._describe())

    def __call__(self, src):
        raise NotImplementedError(f"{type(self).__name__}.__call__ must be overridden")


def _jsonable(value):
    if isinstance(value, nd.NDArray):
        value = value.asnumpy()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


class SequentialAug(Augmenter):
    """Apply the augmenters ``ts`` in order."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def _describe(self):
        return [type(self).__name__.lower(), [t._describe() for t in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class RandomOrderAug(SequentialAug):
    """Apply the augmenters ``ts`` in a random order (Python's ``random.shuffle``), drawn
    anew for each image. ``dumps`` gives, like every augmenter's, a JSON string (MXNet's
    returned a list for this one and ``SequentialAug``)."""

    def __call__(self, src):
        order = list(self.ts)
        random.shuffle(order)
        for aug in order:
            src = aug(src)
        return src


class ResizeAug(Augmenter):
    """Resize the shorter side to ``size`` (``resize_short``)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resize to ``size`` (width, height) whatever the aspect ratio."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        _hwc("ForceResizeAug", src)
        w, h = _size_pair("ForceResizeAug", self.size)
        return _resize(src, w, h, self.interp, "ForceResizeAug")


class RandomCropAug(Augmenter):
    """A random crop of ``size`` (width, height) (``random_crop``)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """A random crop of random area and aspect ratio resized to ``size``
    (``random_size_crop``); ``min_area`` is the deprecated name of ``area``."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        if "min_area" in kwargs:
            warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                          DeprecationWarning)
            area = kwargs.pop("min_area")
        if kwargs:
            raise MXNetError(f"mx.image.RandomSizedCropAug: unexpected keyword arguments "
                             f"{sorted(kwargs)}")
        self.size = size
        self.area = area
        self.ratio = ratio
        self.interp = interp

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(Augmenter):
    """The centre crop of ``size`` (width, height) (``center_crop``)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Scale the image by ``1 + u``, ``u`` uniform in [-brightness, brightness] (Python's
    ``random``)."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        return _float(src) * alpha


class ContrastJitterAug(Augmenter):
    """Blend the image with its mean luma: ``alpha * src + (1 - alpha) * mean(gray)``,
    ``alpha = 1 + u``, ``u`` uniform in [-contrast, contrast] (Python's ``random``); the
    grey level is the BT.601 luma (0.299 R + 0.587 G + 0.114 B) averaged over the image."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        src = _float(src)
        luma = nd.sum(src * _luma(src)) * (3.0 / src.size)    # the mean of the per-pixel luma
        return src * alpha + luma * (1.0 - alpha)


def _luma(src):
    return nd.array([[_LUMA]], ctx=src.context, dtype=src.dtype)


class SaturationJitterAug(Augmenter):
    """Blend each pixel with its own luma: ``alpha * src + (1 - alpha) * gray``, ``alpha =
    1 + u``, ``u`` uniform in [-saturation, saturation] (Python's ``random``)."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        src = _float(src)
        gray = nd.sum(src * _luma(src), axis=2, keepdims=True)
        return src * alpha + gray * (1.0 - alpha)


# RGB <-> YIQ (NTSC), the colour space the hue is rotated in
_RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114],
                        [0.596, -0.274, -0.321],
                        [0.211, -0.523, 0.311]])
_YIQ_TO_RGB = np.array([[1.0, 0.956, 0.621],
                        [1.0, -0.272, -0.647],
                        [1.0, -1.107, 1.705]])


def hue_matrix(alpha):
    """The (3, 3) matrix ``M`` with ``rgb @ M`` the colour whose hue is turned by ``alpha``
    half-turns: a rotation of the I-Q plane of YIQ (an approximation of an HSV hue turn)."""
    cos, sin = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
    turn = np.array([[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]])
    return (_YIQ_TO_RGB @ turn @ _RGB_TO_YIQ).T


class HueJitterAug(Augmenter):
    """Turn the hue by ``u`` half-turns, ``u`` uniform in [-hue, hue] (Python's ``random``),
    by ``hue_matrix``."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        src = _float(src)
        return nd.dot(src, nd.array(hue_matrix(alpha), ctx=src.context, dtype=src.dtype))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitters (those above 0) in a random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: add ``eigvec @ (alpha * eigval)``, ``alpha`` three
    draws from N(0, alphastd**2) (NumPy's global generator), to every pixel."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = np.asarray(_jsonable(eigval), dtype=np.float64)
        self.eigvec = np.asarray(_jsonable(eigvec), dtype=np.float64)
        if self.eigval.shape != (3,) or self.eigvec.shape != (3, 3):
            raise MXNetError(f"mx.image.LightingAug: eigval must have shape (3,) and eigvec "
                             f"(3, 3), got {self.eigval.shape} and {self.eigvec.shape}")

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = self.eigvec @ (alpha * self.eigval)
        src = _float(src)
        return src + nd.array(rgb, ctx=src.context, dtype=src.dtype)


class ColorNormalizeAug(Augmenter):
    """``color_normalize`` with ``mean`` and ``std`` (NDArrays, NumPy arrays or None)."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, nd.NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, nd.NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


# every output channel the same weighting of R, G and B (ITU-R BT.709 rounded)
_GRAY_MIX = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])


class RandomGrayAug(Augmenter):
    """With probability ``p`` (Python's ``random``), replace every channel by the grey
    ``0.21 R + 0.72 G + 0.07 B`` (the image keeps its 3 channels)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = _float(src)
            src = nd.dot(src, nd.array(_GRAY_MIX, ctx=src.context, dtype=src.dtype))
        return src


class HorizontalFlipAug(Augmenter):
    """With probability ``p`` (Python's ``random``), mirror the image left to right."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast the image to ``typ`` (float32 by default)."""

    def __init__(self, typ="float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


# ImageNet's RGB statistics: PCA eigenvalues and eigenvectors, means and standard deviations
_IMAGENET_EIGVAL = np.array([55.46, 4.794, 1.148])
_IMAGENET_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                             [-0.5808, -0.0045, -0.8140],
                             [-0.5836, -0.6948, 0.4203]])
_IMAGENET_MEAN = (123.68, 116.28, 103.53)
_IMAGENET_STD = (58.395, 57.12, 57.375)


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False,
                    rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                    saturation=0, hue=0, pca_noise=0, rand_gray=0, inter_method=2):
    """The standard augmenter list for images of ``data_shape`` (channels, height, width):
    resize the shorter side to ``resize`` (when > 0); a random sized crop (``rand_resize``,
    which needs ``rand_crop``), a random crop (``rand_crop``) or a centre crop to the
    (width, height) of ``data_shape``; a horizontal flip with probability 0.5
    (``rand_mirror``); the cast to float32; the colour jitters (``brightness``,
    ``contrast``, ``saturation``, then ``hue``); PCA lighting noise (``pca_noise``); a
    random grey (probability ``rand_gray``); ``color_normalize`` by ``mean`` and ``std``
    (True: ImageNet's RGB statistics; else a (1,) or (3,) array or None).
    ``inter_method`` is the interpolation of every resize (see ``resize_short``)."""
    fn = "CreateAugmenter"
    if len(tuple(data_shape)) != 3:
        raise MXNetError(f"mx.image.{fn}: data_shape must be (channels, height, width), got "
                         f"{data_shape!r}")
    if rand_resize and not rand_crop:
        raise MXNetError(f"mx.image.{fn}: rand_resize=True needs rand_crop=True")
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, _IMAGENET_EIGVAL, _IMAGENET_EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    mean = _statistic(fn, "mean", mean, _IMAGENET_MEAN)
    std = _statistic(fn, "std", std, _IMAGENET_STD)
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


def _statistic(fn, name, value, imagenet):
    """``mean`` or ``std`` of CreateAugmenter: True is ImageNet's, else None or a (1,) or
    (3,) array."""
    if value is True:
        return nd.array(imagenet)
    if value is None or value is False:
        return None
    if not isinstance(value, (np.ndarray, nd.NDArray)) or value.ndim != 1 \
            or value.shape[0] not in (1, 3):
        raise MXNetError(f"mx.image.{fn}: {name} must be True, None or a (1,) or (3,) array, "
                         f"got {value!r}")
    return value
