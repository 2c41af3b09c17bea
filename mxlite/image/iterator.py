"""``mx.image.ImageIter``: batches of decoded, augmented images, as MXNet 1.9.1's.

The images come from a RecordIO file (``path_imgrec``, as ``tools/im2rec.py`` writes it,
with its ``.idx`` index ``path_imgidx`` for shuffling and partitions), or from files under
``path_root`` listed in a ``.lst`` file (``path_imglist``: ``index<TAB>label...<TAB>path``)
or a Python list (``imglist``: ``[label or labels..., path]`` items).

The batching is MXNet's, because training scripts depend on it: ``'pad'`` fills the last
batch from the start of the data and ends the epoch; ``'discard'`` drops it; ``'roll_over'``
keeps its images and the next epoch's first batch completes them, reporting as ``pad`` the
number of images it added (MXNet's count). Shuffling uses Python's ``random.shuffle``
(seed it with ``random.seed``); ``num_parts`` splits the images into equal contiguous parts
(the remainder of the division is dropped, so that every worker sees the same number).
"""
import inspect
import logging
import numbers
import os
import random

import numpy as np

from .. import io, recordio
from .. import ndarray as nd
from ..base import MXNetError
from .image import CreateAugmenter, imdecode

__all__ = ["ImageIter"]

LABEL_DTYPES = ("int32", "float32", "int64", "float64")
LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")


class ImageIter(io.DataIter):
    """Batches of ``batch_size`` images as (batch_size, 3, height, width) float32 NDArrays
    (``data_shape`` is (3, height, width)) with their labels ((batch_size,) for
    ``label_width`` 1, else (batch_size, label_width); dtype ``dtype``).

    Each image is decoded (``imdecode``), checked (``check_valid_image``: a RuntimeError
    skips it), augmented (``augmentation_transform``: ``aug_list``, or
    ``CreateAugmenter(data_shape, **kwargs)``) and moved to channel-first layout
    (``postprocess_data``); subclasses override these steps. Unlike MXNet, the label batch
    has the ``dtype`` asked for (MXNet's was float32 whatever ``dtype`` said).
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad",
                 **kwargs):
        super().__init__(batch_size)
        self._check_args(batch_size, label_width, dtype, last_batch_handle, part_index,
                         num_parts)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise MXNetError("ImageIter: give path_imgrec, path_imglist or imglist (a list)")
        self.check_data_shape(data_shape)
        self.imgrec, self.imgidx = _open_records(path_imgrec, path_imgidx)
        self.imglist, keys = self._image_list(path_imglist, imglist, dtype)
        self.path_root = path_root or ""
        self.batch_size = batch_size
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.dtype = dtype
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        label_shape = (batch_size,) if label_width == 1 else (batch_size, label_width)
        self.provide_data = [io.DataDesc(data_name, (batch_size,) + self.data_shape)]
        self.provide_label = [io.DataDesc(label_name, label_shape, np.dtype(dtype).type)]
        self.seq = self._sequence(keys, shuffle, num_parts, path_imgidx)
        if num_parts > 1:
            self.seq = _part(self.seq, part_index, num_parts)
        self.num_image = len(self.seq) if self.seq is not None else None
        self.auglist = augmenters(type(self).__name__, CreateAugmenter, data_shape, aug_list,
                                  kwargs)
        self.cur = 0
        self._allow_read = True
        self._cache = None            # roll_over: (data, label, count) kept for the next epoch
        self.reset()

    # ---- construction ------------------------------------------------------------------------
    @staticmethod
    def _check_args(batch_size, label_width, dtype, last_batch_handle, part_index, num_parts):
        for name, value in (("batch_size", batch_size), ("label_width", label_width),
                            ("num_parts", num_parts)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise MXNetError(f"ImageIter: {name} must be a positive integer, got {value!r}")
        if dtype not in LABEL_DTYPES:
            raise MXNetError(f"ImageIter: dtype (of the labels) must be one of "
                             f"{', '.join(LABEL_DTYPES)}, got {dtype!r}")
        if last_batch_handle not in LAST_BATCH_HANDLES:
            raise MXNetError(f"ImageIter: last_batch_handle must be one of "
                             f"{', '.join(LAST_BATCH_HANDLES)}, got {last_batch_handle!r}")
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"ImageIter: part_index must be in [0, num_parts={num_parts}), "
                             f"got {part_index!r}")

    def _image_list(self, path_imglist, imglist, dtype):
        """``({key: (label array, path)}, [keys in order])`` of the image list, or
        ``(None, None)`` without one."""
        if path_imglist:
            return _read_imglist(path_imglist, dtype)
        if isinstance(imglist, list):
            return _parse_imglist(imglist, dtype)
        return None, None

    def _sequence(self, keys, shuffle, num_parts, path_imgidx):
        """The keys to read in order, or None to read the record file sequentially."""
        if self.imgrec is None:
            return list(keys)
        if shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise MXNetError("ImageIter: shuffle and num_parts > 1 need the record "
                                 "file's index: give path_imgidx")
            return list(self.imgidx)
        return None

    # ---- epochs ------------------------------------------------------------------------------
    def reset(self):
        """Start the next epoch (reshuffled when ``shuffle``). With ``'roll_over'`` and
        images kept from the last epoch, the reading goes on where it was."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Start the next epoch, dropping any images kept by ``'roll_over'``."""
        self._cache = None
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True

    def next_sample(self):
        """``(label, encoded image bytes)`` of the next image; StopIteration at the end of
        the data (the reading then restarts from the beginning, except for 'discard')."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            return self._next_record()
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        key = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is None:
            label, fname = self._listed(key)
            return label, self.read_image(fname)
        header, img = recordio.unpack(self.imgrec.read_idx(key))
        if self.imglist is not None:
            return self._listed(key)[0], img
        return header.label, img

    def _listed(self, key):
        """The image list's ``(label, path)`` of the record or image ``key``."""
        try:
            return self.imglist[key]
        except KeyError:
            raise MXNetError(f"ImageIter: the record index has key {key!r}, which the image "
                             "list does not (a path_imglist's indices key the records of "
                             "path_imgrec; an imglist's items are keyed '1', '2', ...)") from None

    def _next_record(self):
        record = self.imgrec.read()
        if record is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        self.cur += 1
        header, img = recordio.unpack(record)
        return header.label, img

    def next(self):
        """The next ``DataBatch``; StopIteration at the end of the epoch."""
        if self._cache is not None:
            data, label, count = self._cache
        else:
            data = nd.zeros((self.batch_size,) + self.data_shape)
            label = self._new_label_batch()
            count = self._batchify(data, label)
        pad = self.batch_size - count
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache is None:
                self._cache = (data, label, count)
                raise StopIteration
            self._batchify(data, label, count)      # from the start of the data
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache = None
        return io.DataBatch([data], [label], pad=pad)

    def _batchify(self, data, label, start=0):
        """Fill ``data[start:]`` and ``label[start:]``; the number of images now in the
        batch. StopIteration when the data ended before any image was read."""
        i = start
        try:
            while i < self.batch_size:
                sample_label, encoded = self.next_sample()
                image = self.imdecode(encoded)
                try:
                    image, sample_label = self._transform(image, sample_label)
                except RuntimeError as err:
                    logging.debug("%s: invalid image, skipping: %s", type(self).__name__, err)
                    continue
                data[i] = self.postprocess_data(image)
                self._put_label(label, i, sample_label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _transform(self, image, label):
        """The checked and augmented ``(image, label)`` of one sample; a RuntimeError skips
        the sample."""
        self.check_valid_image(image)
        return self.augmentation_transform(image), label

    def _new_label_batch(self):
        return nd.empty(self.provide_label[0].shape, dtype=self.dtype)

    def _put_label(self, batch_label, i, value):
        """Store the label of one image in slot ``i`` of the batch, its width checked."""
        values = _as_numpy(value).ravel()
        if values.size != self.label_width:
            raise MXNetError(f"ImageIter: label_width is {self.label_width}, but an image has "
                             f"{values.size} labels ({values.tolist()[:8]})")
        batch_label[i] = values[0] if self.label_width == 1 else values

    # ---- the steps a subclass may override ----------------------------------------------------
    def check_data_shape(self, data_shape):
        """Checks that ``data_shape`` is (3, height, width)."""
        shape = tuple(data_shape) if isinstance(data_shape, (tuple, list)) else ()
        if len(shape) != 3 or not all(isinstance(v, numbers.Integral) and v > 0
                                      for v in shape):
            raise MXNetError(f"ImageIter: data_shape must be (channels, height, width), got "
                             f"{data_shape!r}")
        if shape[0] != 3:
            raise MXNetError(f"ImageIter: data_shape must have 3 channels, got {data_shape!r}")

    def check_valid_image(self, data):
        """Raises RuntimeError (the image is then skipped) for an image without pixels."""
        if data.ndim != 3 or data.shape[0] == 0 or data.shape[1] == 0:
            raise RuntimeError(f"the decoded image has shape {data.shape}")

    def imdecode(self, s):
        """The decoded image of the encoded bytes ``s`` (``mx.image.imdecode``); an
        MXNetError naming the file or record when it cannot be decoded."""
        try:
            return imdecode(s)
        except MXNetError as err:
            raise MXNetError(f"ImageIter: broken image {self._locate()}: {err}") from None

    def _locate(self):
        """The file name or record index of the image read last."""
        position = max(self.cur - 1, 0)
        key = self.seq[position] if self.seq is not None else position
        if self.imglist is not None and key in self.imglist:
            return f"(file {self.imglist[key][1]!r})"
        return f"(record {key})"

    def read_image(self, fname):
        """The encoded bytes of the image file ``fname`` under ``path_root``."""
        path = os.path.join(self.path_root, fname)
        try:
            with open(path, "rb") as fin:
                return fin.read()
        except OSError as err:
            raise MXNetError(f"ImageIter.read_image: cannot read {path!r}: {err}") from None

    def augmentation_transform(self, data):
        """``data`` passed through every augmenter of ``auglist`` in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """The augmented (H, W, C) image as the batch holds it: (C, H, W)."""
        return nd.transpose(datum, axes=(2, 0, 1))


def _part(seq, part_index, num_parts):
    """Part ``part_index`` of ``num_parts`` equal contiguous parts of ``seq`` (the remainder
    is dropped, so that every worker reads as many images)."""
    share = len(seq) // num_parts
    if share == 0:
        raise MXNetError(f"ImageIter: {len(seq)} images cannot be split into num_parts="
                         f"{num_parts} non-empty parts")
    return seq[part_index * share:(part_index + 1) * share]


def augmenters(fn, create, data_shape, aug_list, kwargs):
    """``aug_list``, or ``create(data_shape, **kwargs)`` without one; ``kwargs`` must be
    arguments of ``create`` either way (a misspelt one is an error, not ignored)."""
    known = set(inspect.signature(create).parameters) - {"data_shape"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise MXNetError(f"{fn}: unknown arguments {unknown}: the keyword arguments are "
                         f"{create.__name__}'s ({', '.join(sorted(known))})")
    return create(data_shape, **kwargs) if aug_list is None else aug_list


def _as_numpy(value):
    """A label (number, sequence, NumPy array or NDArray) as a float64 NumPy array."""
    return np.asarray(value.asnumpy() if isinstance(value, nd.NDArray) else value,
                      dtype=np.float64)


def _open_records(path_imgrec, path_imgidx):
    """``(record reader, keys of its index or None)``; ``(None, None)`` without a file."""
    if not path_imgrec:
        return None, None
    logging.info("ImageIter: loading recordio %s...", path_imgrec)
    if path_imgidx:
        reader = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
        return reader, list(reader.keys)
    return recordio.MXRecordIO(path_imgrec, "r"), None


def _labels(what, values, dtype):
    try:
        return nd.array(np.asarray(values, dtype=np.float64).ravel(), dtype=dtype)
    except (TypeError, ValueError):
        raise MXNetError(f"ImageIter: {what} has labels that are not numbers: "
                         f"{values!r}") from None


def _read_imglist(path, dtype):
    """The ``.lst`` file ``path`` (``index<TAB>label...<TAB>path`` lines) as
    ``({index: (labels, path)}, [indices in file order])``."""
    try:
        with open(path) as fin:
            lines = fin.read().splitlines()
    except OSError as err:
        raise MXNetError(f"ImageIter: cannot read path_imglist {path!r}: {err}") from None
    imglist, keys = {}, []
    for number, line in enumerate(lines, 1):
        fields = line.strip().split("\t")
        if fields == [""]:
            continue
        try:
            key = int(fields[0])
        except ValueError:
            key = None
        if key is None or len(fields) < 3:
            raise MXNetError(f"ImageIter: line {number} of path_imglist {path!r} is not "
                             f"'index<TAB>label...<TAB>path': {line[:80]!r}")
        imglist[key] = (_labels(f"line {number} of {path!r}", fields[1:-1], dtype), fields[-1])
        keys.append(key)
    return imglist, keys


def _parse_imglist(items, dtype):
    """The Python list ``items`` (``[label or labels..., path]`` each) keyed '1', '2', ...
    as MXNet keyed it."""
    imglist, keys = {}, []
    for index, item in enumerate(items, 1):
        if not isinstance(item, (list, tuple)) or len(item) < 2:
            raise MXNetError(f"ImageIter: imglist item {index - 1} must be [label(s)..., "
                             f"path], got {item!r}")
        labels = item[:-1] if len(item) > 2 else item[0]
        key = str(index)
        imglist[key] = (_labels(f"imglist item {index - 1}", labels, dtype), item[-1])
        keys.append(key)
    return imglist, keys
