"""``NDArrayIter``: batches of in-memory arrays, as MXNet 1.9.1's ``mx.io.NDArrayIter``.

The cursor arithmetic is MXNet's, because scripts depend on it: ``cursor`` is the first
example of the current batch and starts an epoch at ``-batch_size``. With
``last_batch_handle='roll_over'`` the incomplete last batch of an epoch is not returned but
kept, and the next epoch starts with it: ``reset()`` puts the cursor at ``-len(kept)`` so that
the first batch is the kept examples followed by the first ``batch_size - len(kept)`` of the
(re-shuffled) data, and that batch reports ``pad = len(kept)`` as MXNet did. ``'pad'`` fills
the last batch from the start of the data (repeating it when ``batch_size`` exceeds the
data); ``'discard'`` drops it.
"""
import numpy as np

from ..base import MXNetError
from .io import DataBatch, DataDesc, DataIter
from .utils import _getdata_by_idx, _init_data

__all__ = ["NDArrayIter"]

LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")


class NDArrayIter(DataIter):
    """Iterates over ``data`` and ``label`` (each an array, a list of arrays or a dict of
    name to array; NumPy arrays become NDArrays) in batches of ``batch_size`` along the
    ``N`` axis of ``layout``.

    ``shuffle`` reorders the examples (NumPy's global random state, as MXNet) at every
    ``reset``; ``last_batch_handle`` is ``'pad'``, ``'discard'`` or ``'roll_over'`` (see the
    module docstring); ``data_name`` / ``label_name`` name a single array (several in a
    list are ``_0_data``, ``_1_data``, ...). ``hard_reset()`` starts again without the
    rolled-over examples.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        _check_args(batch_size, last_batch_handle, layout)
        self.layout = layout
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        self.num_data = _count_examples(self.data + self.label, self._axis)
        self._original_data, self._original_label = self.data, self.label
        self.idx = np.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = int(batch_size)
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None
        self.reset()
        self.data_list = [arr for _, arr in self.data] + [arr for _, arr in self.label]
        self.num_source = len(self.data_list)

    @property
    def _axis(self):
        return self.layout.find("N")

    def _descs(self, arrays):
        axis = self._axis
        return [DataDesc(name, arr.shape[:axis] + (self.batch_size,) + arr.shape[axis + 1:],
                         arr.dtype, layout=self.layout) for name, arr in arrays]

    @property
    def provide_data(self):
        """``DataDesc`` of each data array of a batch."""
        return self._descs(self.data)

    @property
    def provide_label(self):
        """``DataDesc`` of each label array of a batch."""
        return self._descs(self.label)

    def hard_reset(self):
        """Starts the data again, dropping any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Starts the next epoch (with the rolled-over examples under ``'roll_over'``)."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # the cursor is at the kept incomplete batch: the next epoch's first batch is
            # those (num_data - cursor) examples, then the start of the data
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        if self.cursor >= 0:             # past the batch that used the kept examples
            self._cache_data = self._cache_label = None
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data, label = self.getdata(), self.getlabel()
        if data[0].shape[self._axis] != self.batch_size:
            # a short last batch ('discard', 'roll_over') ends the epoch; roll_over's next
            # epoch starts with it
            self._cache_data, self._cache_label = data, label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _slice(self, source, start, end):
        from .. import ndarray as nd
        return [nd.slice_axis(arr, axis=self._axis, begin=start, end=end)
                for _, arr in source]

    def _concat(self, first, second):
        from .. import ndarray as nd
        if not first or not second:
            return first or second
        return [nd.concat(a, b, dim=self._axis) for a, b in zip(first, second)]

    def _wrapped(self, source, count):
        """The first ``count`` examples of the data, repeating it as often as needed."""
        from .. import ndarray as nd
        whole, rest = divmod(count, self.num_data)
        out = []
        if whole:
            out = [nd.tile(arr, reps=_reps(arr.ndim, self._axis, whole)) for _, arr in source]
        if rest:
            out = self._concat(out, self._slice(source, 0, rest))
        return out

    def _batchify(self, source, cached):
        """The current batch of ``source`` (``cached``: its kept examples, for roll_over)."""
        if self.cursor >= self.num_data:
            raise MXNetError("NDArrayIter: the epoch is over; call reset()")
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            if cached is None:
                raise MXNetError("NDArrayIter: no rolled-over batch is kept for this epoch "
                                 "(the cursor was moved by hand?)")
            return self._concat(cached, self._slice(source, 0, self.cursor + self.batch_size))
        end = self.cursor + self.batch_size
        if self.last_batch_handle == "pad" and end > self.num_data:
            return self._concat(self._slice(source, self.cursor, self.num_data),
                                self._wrapped(source, end - self.num_data))
        return self._slice(source, self.cursor, min(end, self.num_data))

    def getdata(self):
        return self._batchify(self.data, self._cache_data)

    def getlabel(self):
        return self._batchify(self.label, self._cache_label)

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        # gathered from the original arrays, so that example i of the epoch is always
        # original example idx[i] (MXNet re-permuted the already shuffled arrays)
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self._original_data, self.idx)
        self.label = _getdata_by_idx(self._original_label, self.idx)


def _reps(ndim, axis, count):
    reps = [1] * ndim
    reps[axis] = count
    return tuple(reps)


def _check_args(batch_size, last_batch_handle, layout):
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size <= 0:
        raise MXNetError(f"NDArrayIter: batch_size must be a positive int, got {batch_size!r}")
    if last_batch_handle not in LAST_BATCH_HANDLES:
        raise MXNetError(f"NDArrayIter: last_batch_handle must be one of "
                         f"{LAST_BATCH_HANDLES}, got {last_batch_handle!r}")
    if not isinstance(layout, str) or "N" not in layout:
        raise MXNetError(f"NDArrayIter: layout must name the batch axis N, got {layout!r}")


def _count_examples(arrays, axis):
    """The number of examples, which every array must hold along the batch axis."""
    counts = {}
    for name, arr in arrays:
        if arr.ndim <= axis:
            raise MXNetError(f"NDArrayIter: {name} of shape {arr.shape} has no batch axis "
                             f"{axis}")
        counts[name] = arr.shape[axis]
    if len(set(counts.values())) != 1:
        raise MXNetError(f"NDArrayIter: every array needs the same number of examples along "
                         f"the batch axis, got {counts}")
    count = next(iter(counts.values()))
    if count == 0:
        raise MXNetError("NDArrayIter: the data holds no example")
    return count
