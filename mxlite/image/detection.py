"""Object detection's augmenters and ``ImageDetIter`` (MXNet 1.9.1's ``mx.image.det``).

A detection label is an (objects, width) float array, one row per object: class id, then
the box ``xmin, ymin, xmax, ymax`` in fractions of the image's width and height, then any
extra fields. The raw label of a sample (a record's, or an image list's) is flat:
``header_width, object_width, <header_width - 2 more>, <objects * object_width values>``.

A detection augmenter takes and returns ``(image, label)``. Every random draw is Python's
``random`` (seed it with ``random.seed``), as in MXNet. Unlike MXNet's, no augmenter
changes the label it is given (MXNet's flip rewrote it in place), and every ``dumps()`` is
a JSON string.
"""
import json
import logging
import math
import numbers
import random
import warnings

import numpy as np

from .. import io
from .. import ndarray as nd
from ..base import MXNetError
from .image import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug,
                    HueJitterAug, LightingAug, RandomGrayAug, ResizeAug, _IMAGENET_EIGVAL,
                    _IMAGENET_EIGVEC, _IMAGENET_MEAN, _IMAGENET_STD, _jsonable, fixed_crop)
from .iterator import ImageIter, _as_numpy, augmenters

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter", "ImageDetIter"]


class DetAugmenter:
    """The base of the detection augmenters: ``aug(src, label)`` returns the augmented
    ``(src, label)``; ``dumps()`` describes the augmenter as JSON ``[name, arguments]``."""

    def __init__(self, **kwargs):
        self._kwargs = {key: _jsonable(value) for key, value in kwargs.items()}

    def _describe(self):
        return [type(self).__name__.lower(), self._kwargs]

    def dumps(self):
        """The JSON string ``[lower-case class name, {argument: value}]``."""
        return json.dumps(self._describe())

    def __call__(self, src, label):
        raise NotImplementedError(f"{type(self).__name__}.__call__ must be overridden")


class DetBorrowAug(DetAugmenter):
    """Apply the image ``augmenter`` (an ``mx.image.Augmenter`` that moves no pixel: a
    resize, a colour change) and keep the label."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise MXNetError(f"DetBorrowAug: augmenter must be an mx.image.Augmenter, got "
                             f"{type(augmenter).__name__}")
        super().__init__()
        self.augmenter = augmenter

    def _describe(self):
        return [type(self).__name__.lower(), self.augmenter._describe()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """With probability ``skip_prob`` pass the sample through, else apply one augmenter of
    ``aug_list`` chosen at random (an empty list always skips)."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        aug_list = list(aug_list) if isinstance(aug_list, (list, tuple)) else [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise MXNetError(f"DetRandomSelectAug: aug_list holds DetAugmenters only, got "
                                 f"{type(aug).__name__}")
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def _describe(self):
        return [type(self).__name__.lower(), [aug._describe() for aug in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        return random.choice(self.aug_list)(src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """With probability ``p``, mirror the image left to right and its boxes with it."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            label = label.copy()
            label[:, 1], label[:, 3] = 1.0 - label[:, 3], 1.0 - label[:, 1]
        return src, label


def _pair(fn, name, value):
    """``value`` as a (low, high) pair: a number is both."""
    if isinstance(value, numbers.Number):
        return (value, value)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise MXNetError(f"{fn}: {name} must be a number or a (min, max) pair, got {value!r}")
    return tuple(value)


def _areas(boxes):
    """The areas of (N, 4) boxes ``xmin, ymin, xmax, ymax`` (0 for an empty one)."""
    return np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])


def _intersect(boxes, window):
    """Each of the (N, 4) ``boxes`` cut to ``window`` (x1, y1, x2, y2); zeros where they do
    not overlap."""
    x1, y1, x2, y2 = window
    out = np.stack([np.maximum(boxes[:, 0], x1), np.maximum(boxes[:, 1], y1),
                    np.minimum(boxes[:, 2], x2), np.minimum(boxes[:, 3], y2)], axis=1)
    out[(out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3])] = 0
    return out


class DetRandomCropAug(DetAugmenter):
    """A random crop of area ``area_range`` (fractions of the image's) and aspect ratio
    ``aspect_ratio_range`` (width / height) that keeps more than ``min_object_covered`` of
    every object it touches; objects left with at most ``min_eject_coverage`` of their area
    are dropped. After ``max_attempts`` proposals the sample is kept as it is. Invalid
    ranges disable the augmenter with a warning, as MXNet's."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _pair("DetRandomCropAug", "aspect_ratio_range", aspect_ratio_range)
        area_range = _pair("DetRandomCropAug", "area_range", area_range)
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = _ranges_valid("DetRandomCropAug", area_range, aspect_ratio_range,
                                     min_area_above=0)

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _random_crop_proposal(self, label, height, width):
        """``(x, y, w, h, new label)`` of an acceptable crop, or ``()``."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            size = _crop_size(random.uniform(*self.aspect_ratio_range), min_area, max_area,
                              width, height)
            if size is None:
                continue
            w, h = size
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers_objects(label, (x, y, x + w, y + h), width, height):
                new_label = self._crop_label(label, (x, y, w, h), width, height)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()

    def _covers_objects(self, label, crop, width, height):
        """True when the crop (pixels x1, y1, x2, y2) is more than one pixel and holds more
        than ``min_object_covered`` of each (non-tiny) object it overlaps, and one at
        least."""
        x1, y1, x2, y2 = crop
        if (x2 - x1) * (y2 - y1) < 2:
            return False
        boxes = label[:, 1:5]
        areas = _areas(boxes)
        boxes, areas = boxes[areas * width * height > 2], areas[areas * width * height > 2]
        if not len(boxes):
            return False
        window = (x1 / width, y1 / height, x2 / width, y2 / height)
        coverages = _areas(_intersect(boxes, window)) / areas
        coverages = coverages[coverages > 0]
        return coverages.size > 0 and coverages.min() > self.min_object_covered

    def _crop_label(self, label, crop, width, height):
        """The label in the crop's coordinates, without the objects the crop ejects; None
        when none is left."""
        x, y, w, h = crop[0] / width, crop[1] / height, crop[2] / width, crop[3] / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - y) / h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            coverage = _areas(out[:, 1:5]) * w * h / _areas(label[:, 1:5])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (coverage > self.min_eject_coverage)
        return out[keep] if keep.any() else None


def _ranges_valid(fn, area_range, aspect_ratio_range, min_area_above):
    """False (with a warning; the augmenter then does nothing) for an empty area range or
    a non-positive aspect ratio range."""
    if area_range[1] <= min_area_above or area_range[0] > area_range[1]:
        warnings.warn(f"{fn} is disabled: invalid area_range {area_range}")
        return False
    if aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
        warnings.warn(f"{fn} is disabled: invalid aspect_ratio_range {aspect_ratio_range}")
        return False
    return True


def _crop_size(ratio, min_area, max_area, width, height):
    """A random (w, h) with w / h about ``ratio``, area in [min_area, max_area], that fits
    in width x height; None when this ratio allows none."""
    if ratio <= 0:
        return None
    h = int(round(math.sqrt(min_area / ratio)))
    max_h = int(round(math.sqrt(max_area / ratio)))
    if round(max_h * ratio) > width:
        max_h = int((width + 0.4999999) / ratio)       # the largest h whose width fits
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h = random.randint(h, max_h)
    w = int(round(h * ratio))
    # rounding may leave the area just outside its range: one step of h mends it
    if w * h < min_area:
        h += 1
        w = int(round(h * ratio))
    if w * h > max_area:
        h -= 1
        w = int(round(h * ratio))
    if min_area <= w * h <= max_area and 0 <= w <= width and 0 <= h <= height:
        return w, h
    return None


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``, of area
    ``area_range`` (multiples of the image's, above 1) and aspect ratio
    ``aspect_ratio_range``; the boxes shrink with it. A canvas less than 2 pixels larger
    in either side is not worth it: after ``max_attempts`` such proposals the sample is
    kept as it is."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        pad_val = (pad_val,) if isinstance(pad_val, numbers.Number) else tuple(pad_val)
        aspect_ratio_range = _pair("DetRandomPadAug", "aspect_ratio_range", aspect_ratio_range)
        area_range = _pair("DetRandomPadAug", "area_range", area_range)
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = _ranges_valid("DetRandomPadAug", area_range, aspect_ratio_range,
                                     min_area_above=1.0)

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            src = nd._internal._cvcopyMakeBorder(src, y, h - y - height, x, w - x - width,
                                                 type=0, values=self.pad_val)
        return src, label

    def _random_pad_proposal(self, label, height, width):
        """``(x, y, w, h, new label)``: the canvas and where the image sits in it, or
        ``()``."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(math.sqrt(min_area / ratio)))
            max_h = int(round(math.sqrt(max_area / ratio)))
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)     # wide enough for the image
            h = min(max(h, height), max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue
            y = random.randint(0, h - height)
            x = random.randint(0, w - width)
            out = label.copy()
            out[:, (1, 3)] = (out[:, (1, 3)] * width + x) / w
            out[:, (2, 4)] = (out[:, (2, 4)] * height + y) / h
            return (x, y, w, h, out)
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A ``DetRandomSelectAug`` over several ``DetRandomCropAug``: each argument is one
    value for all, or a list with one value per augmenter (lists of one length)."""
    params = [min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
              max_attempts]
    params = [p if isinstance(p, list) else [p] for p in params]
    count = max(len(p) for p in params)
    if any(len(p) not in (1, count) for p in params):
        raise MXNetError(f"CreateMultiRandCropAugmenter: the list arguments must share one "
                         f"length, got lengths {[len(p) for p in params]}")
    params = [p * count if len(p) == 1 else p for p in params]
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2,
                       min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                       area_range=(0.05, 3.0), min_eject_coverage=0.3, max_attempts=50,
                       pad_val=(127, 127, 127)):
    """The standard detection augmenter list for ``data_shape`` (3, height, width): resize
    the shorter side (``resize`` > 0); random crops with probability ``rand_crop``
    (``CreateMultiRandCropAugmenter`` of the crop arguments); a flip with probability 0.5
    (``rand_mirror``); a random pad with probability ``rand_pad`` (to ``area_range[1]``
    times the area, filled with ``pad_val``); the resize to (width, height); the cast to
    float32; the colour jitters, hue, PCA noise and random grey; ``color_normalize`` by
    ``mean`` and ``std`` (True: ImageNet's)."""
    fn = "CreateDetAugmenter"
    if len(tuple(data_shape)) != 3:
        raise MXNetError(f"{fn}: data_shape must be (channels, height, width), got "
                         f"{data_shape!r}")
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(
            min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
            max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:          # as late as possible: padding makes every later step larger
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, _pair(fn, "area_range", area_range)[1]),
                              max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, _IMAGENET_EIGVAL, _IMAGENET_EIGVEC)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = np.array(_IMAGENET_MEAN) if mean is True else mean
    std = np.array(_IMAGENET_STD) if std is True else std
    for name, value in (("mean", mean), ("std", std)):
        if value is not None and (not isinstance(value, (np.ndarray, nd.NDArray))
                                  or value.ndim != 1 or value.shape[0] not in (1, 3)):
            raise MXNetError(f"{fn}: {name} must be True, None or a (1,) or (3,) array, got "
                             f"{value!r}")
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


def parse_label(raw):
    """The (objects, object_width) label of the flat raw label ``raw`` (see the module
    docstring), keeping the objects whose box is not empty. RuntimeError (the sample is
    skipped) when it is malformed or holds no object."""
    raw = _as_numpy(raw).ravel()
    if raw.size < 7:
        raise RuntimeError(f"a detection label needs at least 7 values, got {raw.size}")
    header_width, object_width = int(raw[0]), int(raw[1])
    if header_width < 2 or object_width < 5 or (raw.size - header_width) % object_width:
        raise RuntimeError(f"a label of {raw.size} values does not hold a {header_width}-wide "
                           f"header and {object_width}-wide objects")
    objects = raw[header_width:].reshape(-1, object_width)
    objects = objects[(objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])]
    if not len(objects):
        raise RuntimeError("the label holds no object with a non-empty box")
    return objects


class ImageDetIter(ImageIter):
    """``ImageIter`` for object detection: labels are (batch, objects, object_width)
    float32, each image's objects (see ``parse_label``) then rows of -1. The number of
    objects is the most any image has, found when the iterator is made (from the image
    list, or by reading every record's header); ``reshape`` and ``sync_label_shape`` make it
    larger. Augmenters are detection augmenters (``CreateDetAugmenter(data_shape,
    **kwargs)`` by default)."""

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = augmenters("ImageDetIter", CreateDetAugmenter, data_shape, aug_list,
                                  kwargs)
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [self._label_desc(self.label_shape)]

    def _label_desc(self, label_shape):
        return io.DataDesc(self.provide_label[0].name, (self.batch_size,) + tuple(label_shape))

    def _estimate_label_shape(self):
        """(most objects of an image, object width) over the valid labels."""
        shapes = [label.shape for label in self._all_labels()]
        if not shapes:
            raise MXNetError("ImageDetIter: no image has a valid detection label")
        widths = {width for _, width in shapes}
        if len(widths) > 1:
            raise MXNetError(f"ImageDetIter: the labels have different object widths "
                             f"{sorted(widths)}")
        return (max(count for count, _ in shapes), widths.pop())

    def _all_labels(self):
        """The parsed label of every image (invalid ones left out): from the image list,
        else from the records (their images are read but not decoded)."""
        if self.imglist is not None:
            raws = [self.imglist[key][0] for key in (self.seq or self.imglist)]
        else:
            raws = []
            self.reset()
            try:
                while True:
                    raws.append(self.next_sample()[0])
            except StopIteration:
                pass
            self.hard_reset()
        labels = []
        for raw in raws:
            try:
                labels.append(parse_label(raw))
            except RuntimeError as err:
                logging.debug("ImageDetIter: invalid label, skipping: %s", err)
        return labels

    def _transform(self, image, label):
        self.check_valid_image(image)
        image, label = self.augmentation_transform(image, parse_label(label))
        _check_valid_label(label)
        return image, label

    def _new_label_batch(self):
        return nd.full(self.provide_label[0].shape, -1.0)

    def _put_label(self, batch_label, i, value):
        count = value.shape[0]
        if count > self.label_shape[0] or value.shape[1] != self.label_shape[1]:
            raise MXNetError(f"ImageDetIter: an augmented label of shape {value.shape} does not "
                             f"fit the label shape {self.label_shape}")
        slot = np.full(self.label_shape, -1.0)
        slot[:count] = value
        batch_label[i] = slot

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """``(data, label)`` passed through every detection augmenter in order."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def check_label_shape(self, label_shape):
        """Checks that ``label_shape`` (objects, object width) keeps the object width and
        holds at least as many objects as now."""
        if len(tuple(label_shape)) != 2:
            raise MXNetError(f"ImageDetIter: label_shape must be (objects, object width), got "
                             f"{label_shape!r}")
        if label_shape[0] < self.label_shape[0]:
            raise MXNetError(f"ImageDetIter: label_shape {tuple(label_shape)} holds fewer "
                             f"objects than the {self.label_shape[0]} an image has")
        if label_shape[1] != self.label_shape[1]:
            raise MXNetError(f"ImageDetIter: label_shape {tuple(label_shape)} changes the "
                             f"object width {self.label_shape[1]}")

    def reshape(self, data_shape=None, label_shape=None):
        """Change the batches' data shape (3, height, width) and/or label shape."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.data_shape = tuple(data_shape)
            self.provide_data = [io.DataDesc(self.provide_data[0].name,
                                             (self.batch_size,) + self.data_shape)]
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.label_shape = tuple(label_shape)
            self.provide_label = [self._label_desc(self.label_shape)]

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name="draw_next", id2labels=None):
        """Yield the next images, augmented, as (H, W, 3) uint8 NumPy arrays in OpenCV's BGR
        order (as MXNet's) with each object's box drawn ``thickness`` pixels wide in
        ``color`` (RGB; None: a random colour per box, NumPy's generator). ``mean`` and
        ``std`` (True: ImageNet's) undo a ``color_normalize``; ``clip`` clips to [0, 255].
        Drawn with NumPy: showing a window (``waitKey``) and class names (``id2labels``)
        need OpenCV, which mxlite does not use (``waitKey`` is an error, names are not
        written)."""
        if waitKey is not None:
            raise MXNetError(f"ImageDetIter.draw_next: showing the window {window_name!r} "
                             "needs OpenCV; leave waitKey None and show the yielded arrays")
        del id2labels                          # class names need OpenCV's text rendering
        std = np.array(_IMAGENET_STD) if std is True else std
        mean = np.array(_IMAGENET_MEAN) if mean is True else mean
        while True:
            try:
                raw, encoded = self.next_sample()
            except StopIteration:
                return
            image = self.imdecode(encoded)
            try:
                self.check_valid_image(image)
                label = parse_label(raw)
            except RuntimeError as err:
                logging.debug("ImageDetIter: invalid image, skipping: %s", err)
                continue
            image, label = self.augmentation_transform(image, label)
            yield _draw_boxes(_displayable(image.asnumpy(), mean, std, clip), label, color,
                              thickness)

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and the ImageDetIter ``it`` (say training and validation) the
        same label shape, the larger; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise MXNetError(f"ImageDetIter.sync_label_shape: it must be an ImageDetIter, got "
                             f"{type(it).__name__}")
        if it.label_shape[1] != self.label_shape[1]:
            raise MXNetError(f"ImageDetIter.sync_label_shape: object widths differ: "
                             f"{self.label_shape[1]} and {it.label_shape[1]}")
        count = max(self.label_shape[0], it.label_shape[0])
        for each in (self, it):
            if each.label_shape[0] < count:
                each.reshape(None, (count, each.label_shape[1]))
        if verbose:
            logging.info("ImageDetIter: label_shape is (%d, %d)", count, self.label_shape[1])
        return it


def _check_valid_label(label):
    """RuntimeError (the sample is skipped) unless the augmented label keeps an object."""
    if label.ndim != 2 or label.shape[1] < 5:
        raise RuntimeError(f"a label must be (objects, 5 or more), got shape {label.shape}")
    valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
    if not valid.any():
        raise RuntimeError("the augmented label holds no valid object")


def _displayable(image, mean, std, clip):
    """A float image back in pixel values, as uint8 BGR."""
    image = image.astype(np.float64)
    if std is not None:
        image = image * _as_numpy(std)
    if mean is not None:
        image = image + _as_numpy(mean)
    if clip:
        image = np.clip(image, 0, 255)
    return np.ascontiguousarray(image[:, :, ::-1]).astype(np.uint8)


def _draw_boxes(image, label, color, thickness):
    """``image`` (BGR) with the outline of each object's box drawn in ``color`` (RGB)."""
    height, width, _ = image.shape
    for row in label:
        if row[0] < 0:
            continue
        x1, x2 = (np.clip(row[[1, 3]] * width, 0, width - 1)).astype(int)
        y1, y2 = (np.clip(row[[2, 4]] * height, 0, height - 1)).astype(int)
        bgr = (np.random.rand(3) * 255 if color is None else np.asarray(color))[::-1]
        t = max(1, int(thickness))
        for ys, xs in ((slice(y1, y1 + t), slice(x1, x2 + 1)),
                       (slice(max(y2 - t + 1, y1), y2 + 1), slice(x1, x2 + 1)),
                       (slice(y1, y2 + 1), slice(x1, x1 + t)),
                       (slice(y1, y2 + 1), slice(max(x2 - t + 1, x1), x2 + 1))):
            image[ys, xs] = bgr
    return image
