"""Datasets: anything with ``__getitem__`` and ``__len__`` (MXNet 1.x's gluon.data).

The shape rule: a sample of a 1-D array is a scalar, so a batch of them has shape ``(B,)``
whatever holds the array (NumPy, a list, an NDArray). NDArray indexing cannot give a scalar
(``nd.array([1, 2])[0]`` has shape ``(1,)``, MXNet 1.x's rule), so a 1-D NDArray is read
through NumPy (``samples_of``), as MXNet's ``ArrayDataset`` does.
"""
import os

from ... import ndarray as nd
from ... import recordio
from ...base import MXNetError
from ..utils import part_bounds

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


def samples_of(data, what):
    """``data`` ready to be indexed sample by sample: a 1-D NDArray as NumPy (its samples
    are then scalars, not arrays of shape ``(1,)``), anything else as it is. ``what`` names
    the caller in the error raised for data with no length (a 0-d array, a number)."""
    if isinstance(data, nd.NDArray):
        if data.ndim == 0:
            raise MXNetError(f"{what}: a 0-d NDArray has no samples; give an array with a "
                             "first axis to index")
        if data.ndim == 1:
            return data.asnumpy()
    elif not hasattr(data, "__len__") or not hasattr(data, "__getitem__") or \
            getattr(data, "ndim", 1) == 0:
        raise MXNetError(f"{what}: an object of type {type(data).__name__} is not indexable "
                         "with a length; give an array, a list or a Dataset")
    return data


class Dataset:
    """The base of datasets: ``dataset[i]`` is sample ``i``, ``len(dataset)`` their number."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def transform(self, fn, lazy=True):
        """A dataset of ``fn(*sample)`` (``fn(sample)`` for samples that are not tuples),
        computed on access (``lazy=True``) or now."""
        trans = _LazyTransformDataset(self, fn)
        return trans if lazy else SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """A dataset with ``fn`` applied to the first element of each sample only."""
        return self.transform(_TransformFirst(fn), lazy)

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true."""
        return SimpleDataset([self[i] for i in range(len(self)) if fn(self[i])])

    def take(self, count):
        """The first ``count`` samples (all of them for None)."""
        count = len(self) if count is None else min(count, len(self))
        return _SubDataset(self, range(count))

    def shard(self, num_shards, index):
        """Shard ``index`` of ``num_shards`` contiguous shards whose sizes differ by at most
        one, the larger ones first (MXNet's order: 9 samples in 4 shards are 3, 2, 2, 2)."""
        if not 0 <= index < num_shards:
            raise MXNetError(f"Dataset.shard: index {index} out of range for {num_shards} shards")
        start, stop = part_bounds(len(self), num_shards)[index]
        return _SubDataset(self, range(start, stop))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields."""
        return _SubDataset(self, list(sampler))


class SimpleDataset(Dataset):
    """A dataset over a list (or anything indexable with a length). The samples of a 1-D
    NDArray are scalars, as they are in ``ArrayDataset`` (MXNet's ``SimpleDataset`` gave
    arrays of shape ``(1,)`` here, and batches of shape ``(B, 1)``)."""

    def __init__(self, data):
        self._data = samples_of(data, "SimpleDataset")

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class ArrayDataset(Dataset):
    """Zips arrays of equal length: sample ``i`` is ``(a[i], b[i], ...)`` (``a[i]`` for one
    array). Arrays may be NDArrays, NumPy arrays, lists or datasets; a 1-D NDArray is held
    as NumPy, so its samples are scalars and a ``DataLoader`` batch of them has shape
    ``(B,)`` (MXNet's rule)."""

    def __init__(self, *args):
        if not args:
            raise MXNetError("ArrayDataset needs at least one array")
        args = [samples_of(a, f"ArrayDataset (array {i})") for i, a in enumerate(args)]
        self._length = len(args[0])
        for i, a in enumerate(args):
            if len(a) != self._length:
                raise MXNetError(f"ArrayDataset: array {i} has length {len(a)}, array 0 has "
                                 f"{self._length}")
        self._data = args

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(a[idx] for a in self._data)

    def __len__(self):
        return self._length


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data, self._fn = data, fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class _TransformFirst:
    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        return (self._fn(x),) + args if args else self._fn(x)


class _SubDataset(Dataset):
    def __init__(self, data, indices):
        self._data, self._indices = data, indices

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._data[self._indices[idx]]


class RecordFileDataset(Dataset):
    """The records of a RecordIO file ``filename``, read through its index ``<name>.idx``
    beside it (as ``im2rec`` writes them): sample ``i`` is the raw bytes of the ``i``-th
    indexed record (``mx.recordio.unpack`` splits its header off). The file handle reopens
    itself in ``DataLoader`` worker processes."""

    def __init__(self, filename):
        self.filename = filename
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self._record = recordio.MXIndexedRecordIO(self.idx_file, filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
