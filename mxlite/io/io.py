"""The data-iterator protocol of MXNet 1.9.1's ``mx.io``: ``DataDesc``, ``DataBatch``,
``DataIter`` and the iterators that wrap others (``ResizeIter``, ``PrefetchingIter``).

An iterator yields ``DataBatch`` objects (lists of NDArrays, plus ``pad``: how many examples
at the end of the batch are filler). ``provide_data`` / ``provide_label`` describe a batch's
arrays as ``DataDesc`` (name, shape, dtype, layout), which is what ``Module.bind`` reads.
"""
import threading
from collections import namedtuple

import numpy as np

from ..base import MXNetError

__all__ = ["DataDesc", "DataBatch", "DataIter", "ResizeIter", "PrefetchingIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """The name and shape of one input of a batch, with its ``dtype`` (float32 by default)
    and ``layout`` (``'NCHW'`` by default; the position of ``N`` is the batch axis).

    As in MXNet it is a ``(name, shape)`` tuple (``name, shape = desc`` works, and equality
    compares the name and shape only) carrying ``dtype`` and ``layout`` as attributes.
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __getnewargs__(self):
        return (self.name, self.shape, self.dtype, self.layout)

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The batch axis of ``layout`` (the position of ``'N'``; -1 when it has none, 0 for
        a layout of None)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """``DataDesc`` for each ``(name, shape)`` of ``shapes``, with the dtype that
        ``types`` (``(name, dtype)`` pairs, or None for float32) gives that name."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        type_of = dict(types)
        return [DataDesc(name, shape, type_of[name]) for name, shape in shapes]


class DataBatch:
    """One batch: ``data`` and ``label`` (lists of NDArrays; ``label`` may be None), ``pad``
    (the number of filler examples at its end), ``index`` (the examples' indices),
    ``bucket_key``, ``provide_data`` and ``provide_label`` (for bucketing modules)."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        for what, value in (("data", data), ("label", label)):
            if value is not None and not isinstance(value, (list, tuple)):
                raise MXNetError(f"DataBatch: {what} must be a list of NDArrays, got "
                                 f"{type(value).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = None if self.label is None else [lab.shape for lab in self.label]
        return (f"{type(self).__name__}: data shapes: {data_shapes} "
                f"label shapes: {label_shapes}")


class DataIter:
    """The base of the data iterators: Python iteration over ``DataBatch`` objects.

    A subclass defines ``iter_next`` (advance; False at the end of the epoch) and the
    ``getdata``/``getlabel``/``getpad``/``getindex`` of the current batch, or overrides
    ``next``; ``reset`` starts the next epoch.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Goes back to the start of the data (the next epoch)."""

    def next(self):
        """The next ``DataBatch``; raises StopIteration at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=self.getindex())

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Moves to the next batch; False when the epoch is over."""
        raise NotImplementedError(f"{type(self).__name__}.iter_next")

    def getdata(self):
        """The data of the current batch."""
        raise NotImplementedError(f"{type(self).__name__}.getdata")

    def getlabel(self):
        """The label of the current batch."""
        raise NotImplementedError(f"{type(self).__name__}.getlabel")

    def getindex(self):
        """The indices of the current batch's examples (None when unknown)."""
        return None

    def getpad(self):
        """How many examples at the end of the current batch are filler."""
        raise NotImplementedError(f"{type(self).__name__}.getpad")


class _FromCurrentBatch(DataIter):
    """A DataIter whose getters read ``self.current_batch`` (a wrapping iterator's)."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_FromCurrentBatch):
    """``data_iter`` seen as epochs of exactly ``size`` batches: it is reset and read again
    when it runs out within an epoch, and an epoch may end before it does (the next epoch
    continues from there unless ``reset_internal``)."""

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise MXNetError(f"ResizeIter: size must be a non-negative int, got {size!r}")
        self.data_iter = data_iter
        self.size = int(size)
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise MXNetError("ResizeIter: the wrapped iterator yields no batch after "
                                 "reset()") from None
        self.cur += 1
        return True


class _Prefetcher:
    """One background thread that reads the next batch of ``it`` while the last is used."""

    def __init__(self, it):
        self.it = it
        self.batch = None
        self.error = None
        self.pending = False             # a read was requested and its result not taken
        self.ready = threading.Event()
        self.requested = threading.Event()
        self.alive = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self._request()

    def _request(self):
        self.pending = True
        self.requested.set()

    def _run(self):
        while True:
            self.requested.wait()
            self.requested.clear()
            if not self.alive:
                return
            try:
                self.batch, self.error = self.it.next(), None
            except StopIteration:
                self.batch, self.error = None, None
            except Exception as err:     # noqa: BLE001  (re-raised in the consumer's thread)
                self.batch, self.error = None, err
            self.ready.set()

    def _wait(self):
        self.ready.wait()
        self.ready.clear()
        self.pending = False

    def take(self):
        """The prefetched batch (None at the end of the epoch); starts reading the next."""
        if not self.pending:             # the epoch already ended
            return None
        self._wait()
        if self.error is not None:
            raise self.error
        if self.batch is not None:
            self._request()
        return self.batch

    def restart(self):
        """Waits for the read in flight, resets the iterator and prefetches again."""
        if self.pending:
            self._wait()
        self.it.reset()
        self._request()

    def stop(self):
        self.alive = False
        self.requested.set()
        self.thread.join()


class PrefetchingIter(_FromCurrentBatch):
    """Reads the next batch of each iterator of ``iters`` in a background thread and yields
    their batches joined (data lists, then label lists, concatenated in order).

    ``rename_data`` / ``rename_label``: one ``{old name: new name}`` dict per iterator,
    applied to ``provide_data`` / ``provide_label``. All iterators must end their epochs
    together.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        self.iters = list(iters) if isinstance(iters, (list, tuple)) else [iters]
        if not self.iters:
            raise MXNetError("PrefetchingIter: iters is empty")
        for what, renames in (("rename_data", rename_data), ("rename_label", rename_label)):
            if renames is not None and len(renames) != len(self.iters):
                raise MXNetError(f"PrefetchingIter: {what} has {len(renames)} dicts for "
                                 f"{len(self.iters)} iterators")
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.current_batch = None
        self._prefetchers = [_Prefetcher(it) for it in self.iters]

    def __del__(self):
        for prefetcher in getattr(self, "_prefetchers", ()):
            prefetcher.stop()

    @staticmethod
    def _renamed(descs_per_iter, renames):
        out = []
        for i, descs in enumerate(descs_per_iter):
            rename = renames[i] if renames is not None else {}
            for desc in descs:
                if isinstance(desc, DataDesc):
                    out.append(DataDesc(rename.get(desc.name, desc.name), desc.shape,
                                        desc.dtype, desc.layout))
                else:
                    out.append(DataDesc(rename.get(desc[0], desc[0]), desc[1]))
        return out

    @property
    def provide_data(self):
        return self._renamed([it.provide_data for it in self.iters], self.rename_data)

    @property
    def provide_label(self):
        return self._renamed([it.provide_label for it in self.iters], self.rename_label)

    def reset(self):
        for prefetcher in self._prefetchers:
            prefetcher.restart()

    def iter_next(self):
        batches = [prefetcher.take() for prefetcher in self._prefetchers]
        ended = [batch is None for batch in batches]
        if all(ended):
            return False
        if any(ended):
            raise MXNetError(f"PrefetchingIter: the iterators' epochs differ in length "
                             f"(iterators {[i for i, e in enumerate(ended) if e]} ended, "
                             "the others did not)")
        self.current_batch = DataBatch(
            data=sum([list(b.data) for b in batches], []),
            label=sum([list(b.label or []) for b in batches], []),
            pad=batches[0].pad, index=batches[0].index,
            provide_data=self.provide_data, provide_label=self.provide_label)
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return self.current_batch

