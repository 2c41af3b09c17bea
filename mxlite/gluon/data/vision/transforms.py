"""Image transforms of MXNet 1.9.1's ``gluon.data.vision.transforms``: Blocks over the
``mx.nd.image`` operators, with MXNet's argument names and defaults.

Images are (H, W, C) arrays or (N, H, W, C) batches until ``ToTensor`` makes (C, H, W)
float32 tensors in [0, 1], which ``Normalize`` works on. The crops take one image or a
batch (MXNet's ``CenterCrop`` and ``RandomResizedCrop`` took one image only). The random
crops draw from Python's ``random`` as MXNet's did; the random colour operators from the
device's Philox stream (``mx.random.seed``); ``RandomRotation`` from NumPy's global
generator, as MXNet's.
"""
import math
import random

import numpy as np

from ....base import MXNetError, numeric_types
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation",
           "RandomResizedCrop", "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply", "rotate"]


class Compose(Sequential):
    """Apply ``transforms`` (a list of Blocks or callables) in order. Each run of two or more
    consecutive HybridBlocks is grouped into one hybridized ``HybridSequential``.

    >>> t = Compose([Cast('float32'), ToTensor()])
    >>> t(mx.nd.zeros((4, 2, 3), dtype='uint8')).shape
    (3, 4, 2)
    """

    def __init__(self, transforms):
        super().__init__()
        run = []
        for t in list(transforms) + [None]:     # the caller's list is left as it was
            if isinstance(t, HybridBlock):
                run.append(t)
                continue
            self._add_run(run)
            run = []
            if t is not None:
                self.add(t)

    def _add_run(self, run):
        if len(run) == 1:
            self.add(run[0])
        elif run:
            block = HybridSequential()
            block.add(*run)
            block.hybridize()
            self.add(block)


class Cast(HybridBlock):
    """Cast the input to ``dtype`` (default float32)."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """An (H, W, C) image or (N, H, W, C) batch of values in [0, 255] to a (C, H, W) or
    (N, C, H, W) float32 tensor in [0, 1]."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a (C, H, W) tensor or (N, C, H, W) batch; ``mean``
    and ``std`` are one value for every channel or one per channel."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = _per_channel(mean)
        self._std = _per_channel(std)

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, mean=self._mean, std=self._std)


def _per_channel(value):
    """A scalar as a 1-tuple, which the operator applies to every channel."""
    return (value,) if isinstance(value, numeric_types) else tuple(value)


def _size_wh(what, size):
    """``size`` (one int for both sides, or (width, height)) as a (width, height) pair."""
    if isinstance(size, numeric_types):
        size = (size, size)
    try:
        width, height = (int(s) for s in size)
    except (TypeError, ValueError):
        raise MXNetError(f"{what}: size must be an int or (width, height), got "
                         f"{size!r}") from None
    if width <= 0 or height <= 0:
        raise MXNetError(f"{what}: size must be positive, got {size!r}")
    return width, height


def _crop_resize(x, x0, y0, width, height, size, interp):
    """The (x0, y0, width, height) box of ``x``, resized to ``size`` (width, height) unless it
    already has that size."""
    from .... import ndarray as nd
    out = nd.image.crop(x, x0, y0, width, height)
    if size is not None and (width, height) != tuple(size):
        out = nd.image.resize(out, size=size, interp=interp)
    return out


def _hw(what, x):
    if x.ndim not in (3, 4):
        raise MXNetError(f"{what}: expects an (H, W, C) image or (N, H, W, C) batch, got shape "
                         f"{x.shape}")
    return x.shape[-3], x.shape[-2]


def _center_box(src_w, src_h, size):
    """The centred box of ``size``'s aspect ratio that fits in the image: ``size`` itself
    when the image is large enough, else scaled down to fit (then resized up)."""
    width, height = size
    if src_h < height:
        width, height = width * src_h / height, src_h
    if src_w < width:
        width, height = src_w, height * src_w / width
    width, height = max(1, int(width)), max(1, int(height))
    return (src_w - width) // 2, (src_h - height) // 2, width, height


class CenterCrop(Block):
    """Crop the centre of ``size`` (an int, or (width, height)) out of an (H, W, C) image or
    (N, H, W, C) batch; an image smaller than ``size`` gives its largest centred box of
    that aspect ratio, resized up with ``interpolation`` (OpenCV's codes: 0 nearest,
    1 bilinear, 2 bicubic, 3 area)."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size = _size_wh("CenterCrop", size)
        self._interp = interpolation

    def forward(self, x):
        h, w = _hw("CenterCrop", x)
        return _crop_resize(x, *_center_box(w, h, self._size), self._size, self._interp)


class RandomResizedCrop(Block):
    """Crop a random box, of area ``scale`` (a fraction range) of the image and aspect ratio
    (width / height) in ``ratio`` (drawn log-uniformly), and resize it to ``size`` (an int
    or (width, height)). After ten boxes that do not fit, the centre crop is taken."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._size = _size_wh("RandomResizedCrop", size)
        if isinstance(scale, numeric_types):
            scale = (scale, 1.0)
        if not 0 < scale[0] <= scale[1] or not 0 < ratio[0] <= ratio[1]:
            raise MXNetError(f"RandomResizedCrop: scale and ratio must be positive, ordered "
                             f"ranges, got scale={scale!r}, ratio={ratio!r}")
        self._scale, self._ratio, self._interp = tuple(scale), tuple(ratio), interpolation

    def _box(self, w, h):
        for _ in range(10):
            area = random.uniform(*self._scale) * w * h
            aspect = math.exp(random.uniform(math.log(self._ratio[0]), math.log(self._ratio[1])))
            new_w = int(round(math.sqrt(area * aspect)))
            new_h = int(round(math.sqrt(area / aspect)))
            if 0 < new_w <= w and 0 < new_h <= h:
                return random.randint(0, w - new_w), random.randint(0, h - new_h), new_w, new_h
        return _center_box(w, h, self._size)

    def forward(self, x):
        h, w = _hw("RandomResizedCrop", x)
        return _crop_resize(x, *self._box(w, h), self._size, self._interp)


class CropResize(HybridBlock):
    """Crop the box at (``x``, ``y``) of ``width`` x ``height`` out of an (H, W, C) image or
    (N, H, W, C) batch, then resize it to ``size`` (an int or (width, height)) when given,
    with ``interpolation`` (default bilinear)."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = size
        self._interp = 1 if interpolation is None else interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, *self._box)
        if self._size is not None:
            out = F.image.resize(out, size=self._size, keep_ratio=False, interp=self._interp)
        return out


class Resize(HybridBlock):
    """Resize an (H, W, C) image or (N, H, W, C) batch to ``size`` (an int, or (width,
    height)); with ``keep_ratio`` and one int, the short side becomes ``size`` and the long
    side keeps the aspect ratio. ``interpolation``: OpenCV's codes (1 bilinear)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._size = size
        self._keep = keep_ratio
        self._interp = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, size=self._size, keep_ratio=self._keep, interp=self._interp)


class RandomFlipLeftRight(HybridBlock):
    """Flip the image (or each call's batch) left to right with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip the image (or each call's batch) top to bottom with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


def _factor_range(what, value):
    """The factor range ``[max(0, 1 - value), 1 + value]`` of a random colour transform."""
    if not isinstance(value, numeric_types) or value < 0:
        raise MXNetError(f"{what}: the factor must be a number >= 0, got {value!r}")
    return max(0.0, 1.0 - value), 1.0 + value


class _RandomFactor(HybridBlock):
    """A random colour operator of factor in ``[max(0, 1 - value), 1 + value]``."""
    _op = None

    def __init__(self, value):
        super().__init__()
        self._range = _factor_range(type(self).__name__, value)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._range)


class RandomBrightness(_RandomFactor):
    """Scale the brightness by a factor drawn uniformly from [max(0, 1 - brightness),
    1 + brightness]."""
    _op = "random_brightness"

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_RandomFactor):
    """Blend with the mean gray by a factor drawn from [max(0, 1 - contrast), 1 + contrast]."""
    _op = "random_contrast"

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_RandomFactor):
    """Blend with the gray image by a factor drawn from [max(0, 1 - saturation),
    1 + saturation]."""
    _op = "random_saturation"

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_RandomFactor):
    """Rotate the hue by a factor drawn from [max(0, 1 - hue), 1 + hue] (the operator's
    convention, as MXNet)."""
    _op = "random_hue"

    def __init__(self, hue):
        super().__init__(hue)


class RandomColorJitter(HybridBlock):
    """Random brightness, contrast, saturation and hue changes in a random order, each of
    the strength given (0: left out)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        for name, value in (("brightness", brightness), ("contrast", contrast),
                            ("saturation", saturation), ("hue", hue)):
            _factor_range(f"RandomColorJitter: {name}", value)
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet's PCA lighting noise: add the ImageNet RGB eigenvectors weighted by normal
    draws of standard deviation ``alpha``."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, alpha_std=self._alpha)


class _DTypeError(MXNetError, TypeError):
    """Data of a dtype a transform does not take: an MXNetError that is also the TypeError
    MXNet raised, so code catching either works."""


def _check_float32(what, x):
    if np.dtype(x.dtype) != np.float32:
        raise _DTypeError(f"{what}: expects float32 data (use it after ToTensor), got "
                          f"{np.dtype(x.dtype).name}")
    if x.ndim not in (3, 4):
        raise MXNetError(f"{what}: expects a (C, H, W) tensor or (N, C, H, W) batch, got "
                         f"shape {x.shape}")


def rotate(x, degrees, zoom_in=False, zoom_out=False):
    """``x`` (float32 (C, H, W) or (N, C, H, W)) rotated counter-clockwise about its centre
    by ``degrees`` (one angle, or one per image of a batch), sampled bilinearly with zeros
    outside: ``mx.image.imrotate``."""
    from .... import image
    _check_float32("Rotate", x)
    degrees = np.asarray(degrees, np.float64).reshape(-1)
    if x.ndim == 4:
        return image.imrotate(x, np.broadcast_to(degrees, (x.shape[0],)), zoom_in, zoom_out)
    if degrees.size != 1:
        raise MXNetError(f"Rotate: one image takes one angle, got {degrees.size}")
    return image.imrotate(x, float(degrees[0]), zoom_in, zoom_out)


class Rotate(Block):
    """Rotate a float32 (C, H, W) tensor or (N, C, H, W) batch counter-clockwise by
    ``rotation_degrees`` about its centre, with zeros outside the image; ``zoom_in`` scales
    so that no padding shows, ``zoom_out`` so that the whole image does."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        return rotate(x, *self._args)


class RandomRotation(Block):
    """With probability ``rotate_with_proba``, rotate by an angle drawn uniformly from
    ``angle_limits`` (lower, upper) degrees (one per image of a batch), as ``Rotate``."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise MXNetError(f"RandomRotation: angle_limits must be an ordered pair, got "
                             f"{angle_limits!r}")
        if not 0 <= rotate_with_proba <= 1:
            raise MXNetError(f"RandomRotation: rotate_with_proba must be in [0, 1], got "
                             f"{rotate_with_proba!r}")
        self._limits = (lower, upper)
        self._zoom = (zoom_in, zoom_out)
        self._proba = rotate_with_proba

    def forward(self, x):
        if random.random() > self._proba:
            return x
        _check_float32("RandomRotation", x)
        count = 1 if x.ndim == 3 else x.shape[0]
        return rotate(x, np.random.uniform(*self._limits, size=count), *self._zoom)


class RandomApply(Sequential):
    """Apply ``transforms`` with probability ``p``, else pass the input through."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)
