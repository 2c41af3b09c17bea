"""``mx.io.ImageRecordIter``: batches of images decoded from a RecordIO file (made by
``python -m mxlite.tools.im2rec``), as MXNet 1.9.1's, over the optional Pillow.

Each record is ``recordio.pack``'s header and an encoded image. An image is decoded to RGB
(or gray for one channel), its shorter edge resized to ``resize`` when given, cropped to
``data_shape`` (at the centre, or at random with ``rand_crop``), mirrored left-right with
probability 1/2 under ``rand_mirror``, and normalised as ``(pixel - mean) / std * scale``
per channel (``mean_r``, ``std_r`` ... in RGB order). ``part_index`` / ``num_parts`` read
one of ``num_parts`` contiguous shares of the records (one per worker); ``shuffle``
reorders this share every epoch from a generator seeded with ``seed``. Batching (and
``round_batch``) is the shared batch loader's (``mxlite/io/native.py``).
"""
import numpy as np

from .. import recordio
from ..base import MXNetError
from .native import _BatchLoader, _shape

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordIter_v1",
           "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter", "ImageDetRecordIter"]

_OP = "ImageRecordIter"
_MEANS = ("mean_r", "mean_g", "mean_b", "mean_a")
_STDS = ("std_r", "std_g", "std_b", "std_a")
# MXNet's parameters mxlite takes and ignores: threading and buffering of the C++ loader
_ACCEPTED = ("prefetch_buffer", "verbose", "ctx", "num_decode_threads")


class ImageRecordIter(_BatchLoader):
    """Batches ``(batch_size,) + data_shape`` float32 of the images of the RecordIO file
    ``path_imgrec`` with their labels (``label_width`` per image; ``(batch_size,)`` for 1).

    ``path_imgidx`` (the ``.idx`` written beside the ``.rec``) gives the records' offsets;
    without it the file's part headers are scanned once. ``path_imglist`` (an ``.lst``:
    ``index<TAB>label...<TAB>path``) overrides the records' labels by image id.
    See the module docstring for the augmentations. ``preprocess_threads`` images of a batch
    are decoded at once (Pillow decodes outside the GIL); each image's random crop and
    mirror come from its own seed, drawn in order from ``seed``'s stream, so the batches do
    not depend on the thread count. ``prefetch_buffer`` and ``verbose`` are accepted as
    MXNet's.
    """

    def __init__(self, path_imgrec, data_shape, batch_size, label_width=1, path_imgidx="",
                 path_imglist="", shuffle=False, seed=0, part_index=0, num_parts=1,
                 round_batch=True, resize=-1, rand_crop=False, rand_mirror=False, scale=1.0,
                 inter_method=1, data_name="data", label_name="softmax_label", dtype=None,
                 preprocess_threads=4, **kwargs):
        super().__init__(batch_size, round_batch, data_name, label_name, _OP)
        self._means, self._stds = _normalisation(kwargs)
        unknown = sorted(set(kwargs) - set(_ACCEPTED))
        if unknown:
            raise MXNetError(f"{_OP}: unsupported arguments {unknown}")
        self._data_shape = _shape(_OP, data_shape, "data_shape")
        if len(self._data_shape) != 3 or self._data_shape[0] not in (1, 3):
            raise MXNetError(f"{_OP}: data_shape must be (channels, height, width) with 1 or 3 "
                             f"channels, got {data_shape!r}")
        if dtype not in (None, "float32", "uint8"):
            raise MXNetError(f"{_OP}: dtype must be 'float32' or 'uint8', got {dtype!r}")
        # uint8 batches are the raw pixels (no mean/std/scale), as ImageRecordUInt8Iter's
        self.dtype = np.dtype(dtype or "float32")
        if self.dtype == np.uint8 and (any(self._means) or any(s != 1 for s in self._stds)
                                       or scale != 1):
            raise MXNetError(f"{_OP}: uint8 batches are not normalised; mean_*, std_* and "
                             "scale need dtype float32")
        self._label_dims = (int(label_width),)
        if self._label_dims[0] < 1:
            raise MXNetError(f"{_OP}: label_width must be positive, got {label_width!r}")
        self.resize, self.rand_crop, self.rand_mirror = int(resize), rand_crop, rand_mirror
        self.scale, self.inter_method, self.shuffle = float(scale), int(inter_method), shuffle
        self._rng = np.random.RandomState(seed)
        self._threads = int(preprocess_threads)
        if self._threads < 1:
            raise MXNetError(f"{_OP}: preprocess_threads must be positive, got "
                             f"{preprocess_threads!r}")
        self._reader = recordio.MXRecordIO(path_imgrec, "r")
        offsets = _offsets(path_imgrec, path_imgidx)
        self._offsets = _share(offsets, part_index, num_parts)
        self._labels = _read_list(path_imglist) if path_imglist else None
        self._order = np.arange(len(self._offsets))
        self._rewind_source()

    def _rewind_source(self):
        if self.shuffle:
            self._rng.shuffle(self._order)
        self._next = 0

    def _next_record(self):
        """``(offset, header, encoded image, augmentation seed)`` of the next record, or None."""
        if self._next >= len(self._order):
            return None
        offset = self._offsets[self._order[self._next]]
        self._next += 1
        self._reader.handle.seek(offset)          # offsets come from the index or the scan
        header, encoded = recordio.unpack(self._reader.read())
        return offset, header, encoded, self._rng.randint(0, 2**31)

    def _fill(self, data, label, index, top):
        """Reads the records of the slots from ``top`` in order, then decodes their images on
        ``preprocess_threads`` threads."""
        records = []
        while top + len(records) < self.batch_size:
            record = self._next_record()
            if record is None:
                break
            records.append(record)
        for slot, (offset, header, _, _) in enumerate(records, top):
            label[slot], index[slot] = self._label(header, offset), header.id
        if self._threads > 1 and len(records) > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(min(self._threads, len(records))) as pool:
                images = list(pool.map(lambda r: self._image(r[2], r[0], r[3]), records))
        else:
            images = [self._image(r[2], r[0], r[3]) for r in records]
        for slot, image in enumerate(images, top):
            data[slot] = image
        return top + len(records)

    def _label(self, header, offset):
        label = header.label
        if self._labels is not None:
            if header.id not in self._labels:
                raise MXNetError(f"{_OP}: image id {header.id} (record at byte {offset}) is "
                                 "not in path_imglist")
            label = self._labels[header.id]
        label = np.atleast_1d(np.asarray(label, np.float32))
        if label.size < self._label_size:
            raise MXNetError(f"{_OP}: the record at byte {offset} has {label.size} labels, "
                             f"label_width is {self._label_size}")
        return label[:self._label_size]

    def _image(self, encoded, offset, seed):
        """The decoded, resized, cropped, mirrored and normalised (C, H, W) image; the random
        crop and mirror are drawn from ``seed``."""
        from ..ops import image_io
        channels, height, width = self._data_shape
        pixels = image_io.decode(_OP, encoded, flag=0 if channels == 1 else 1, to_rgb=True)
        if self.resize > 0:
            pixels = resize_short(pixels, self.resize, self.inter_method)
        rows, cols = pixels.shape[:2]
        if rows < height or cols < width:
            raise MXNetError(f"{_OP}: the image at byte {offset} is {rows} x {cols} pixels, "
                             f"smaller than data_shape {self._data_shape} (use resize)")
        rng = np.random.RandomState(seed)
        if self.rand_crop:
            top = rng.randint(0, rows - height + 1)
            left = rng.randint(0, cols - width + 1)
        else:
            top, left = (rows - height) // 2, (cols - width) // 2
        pixels = pixels[top:top + height, left:left + width]
        if self.rand_mirror and rng.randint(0, 2):
            pixels = pixels[:, ::-1]
        if self.dtype == np.uint8:
            return pixels.transpose(2, 0, 1)
        out = pixels.transpose(2, 0, 1).astype(np.float32)
        mean = np.asarray(self._means[:channels], np.float32)[:, None, None]
        std = np.asarray(self._stds[:channels], np.float32)[:, None, None]
        return (out - mean) / std * np.float32(self.scale)


def _normalisation(kwargs):
    """The per-channel means and standard deviations (popped from ``kwargs``)."""
    means = [float(kwargs.pop(name, 0.0)) for name in _MEANS]
    stds = [float(kwargs.pop(name, 1.0)) for name in _STDS]
    if any(s == 0 for s in stds):
        raise MXNetError(f"{_OP}: std_r/std_g/std_b/std_a must be non-zero, got {stds}")
    return means, stds


def resize_short(pixels, size, interp=1):
    """The uint8 image ``pixels`` ((H, W) or (H, W, C)) resized (OpenCV's ``interp``) so that
    its shorter edge is ``size``, the longer scaled alike and floored, as MXNet's."""
    from .. import ndarray as nd
    rows, cols = pixels.shape[:2]
    if rows <= cols:
        new_rows, new_cols = size, max(1, cols * size // rows)
    else:
        new_rows, new_cols = max(1, rows * size // cols), size
    image = pixels if pixels.ndim == 3 else pixels[:, :, None]
    out = nd._internal._cvimresize(nd.array(image, dtype=np.uint8), w=new_cols, h=new_rows,
                                   interp=interp).asnumpy()
    return out if pixels.ndim == 3 else out[:, :, 0]


def _offsets(path_imgrec, path_imgidx):
    if not path_imgidx:
        return recordio.scan_offsets(path_imgrec)
    index = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
    try:
        return [index.idx[key] for key in index.keys]
    finally:
        index.close()


def _share(offsets, part_index, num_parts):
    """Part ``part_index`` of ``num_parts`` contiguous, near-equal shares of ``offsets``."""
    if not 0 <= part_index < num_parts:
        raise MXNetError(f"{_OP}: part_index must be in [0, num_parts={num_parts}), got "
                         f"{part_index}")
    count = len(offsets)
    share = offsets[part_index * count // num_parts:(part_index + 1) * count // num_parts]
    if not share:
        raise MXNetError(f"{_OP}: part {part_index} of {num_parts} holds no record (the file "
                         f"has {count})")
    return share


def _read_list(path):
    """``{image id: labels}`` of the ``.lst`` file ``path`` (``id<TAB>label...<TAB>path``)."""
    labels = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as err:
        raise MXNetError(f"{_OP}: cannot read path_imglist {path!r}: {err}") from None
    for number, line in enumerate(lines, 1):
        fields = line.strip().split("\t")
        if fields == [""]:
            continue
        try:
            labels[int(fields[0])] = np.array(fields[1:-1], np.float32)
        except (ValueError, IndexError):
            raise MXNetError(f"{_OP}: line {number} of path_imglist {path!r} is not "
                             f"'index<TAB>label...<TAB>path': {line[:80]!r}") from None
    return labels


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with ``dtype='uint8'``: batches of the cropped, mirrored pixels,
    not normalised."""

    def __init__(self, path_imgrec, data_shape, batch_size, **kwargs):
        kwargs.setdefault("dtype", "uint8")
        super().__init__(path_imgrec, data_shape, batch_size, **kwargs)


# MXNet's first-generation parsers: the same iterators here
ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter


class ImageRecordInt8Iter(ImageRecordIter):
    """MXNet's int8 (quantised) image iterator is not implemented: an MXNetError."""

    def __init__(self, *args, **kwargs):  # noqa: D107  (always raises)
        raise MXNetError("ImageRecordInt8Iter is not implemented in mxlite; use "
                         "ImageRecordUInt8Iter or ImageRecordIter")


class ImageDetRecordIter(ImageRecordIter):
    """MXNet's detection iterator (box labels with their augmenters) is not implemented:
    an MXNetError."""

    def __init__(self, *args, **kwargs):  # noqa: D107  (always raises)
        raise MXNetError("ImageDetRecordIter is not implemented in mxlite; read the records "
                         "with mx.recordio and batch them with NDArrayIter")
