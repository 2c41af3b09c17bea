"""``DataLoader``: batches of a dataset, in order or shuffled, optionally prepared by a pool of
workers."""
import collections
import concurrent.futures

import numpy as np

from ... import ndarray as nd
from ...base import MXNetError
from ...context import Context
from .dataset import samples_of
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_batchify_fn"]


def default_batchify_fn(data):
    """Stack a list of samples into a batch: NDArrays with ``nd.stack``, tuples element by
    element (a list of batches), anything else through NumPy, keeping its dtype: scalars
    (the samples of a 1-D array) give shape ``(B,)``, arrays of shape ``S`` give
    ``(B,) + S``."""
    return _batchify(list(data), "default_batchify_fn")


def _batchify(samples, where):
    """``default_batchify_fn`` for ``samples``; ``where`` says which field of a tuple sample
    is being stacked, for the errors."""
    if not samples:
        raise MXNetError(f"{where}: no samples to batch")
    first = samples[0]
    if isinstance(first, tuple):
        return [_batchify(list(field), f"{where}: field {k} of the tuple samples")
                for k, field in enumerate(zip(*_same_length(samples, where)))]
    _same_kind(samples, where)
    if isinstance(first, nd.NDArray):
        _same_shape({x.shape for x in samples}, where)
        return nd.stack(*samples)
    try:
        array = np.asarray(samples)
    except ValueError:      # ragged
        _same_shape({_shape(x) for x in samples}, where)
        raise
    try:
        return nd.array(array, dtype=array.dtype)
    except MXNetError as err:       # a dtype NDArrays cannot hold (str, object)
        raise MXNetError(f"{where}: cannot stack samples of type {type(first).__name__} "
                         f"({err})") from None


def _same_length(samples, where):
    """Tuple samples, checked to have one length (``zip`` would drop fields silently)."""
    width = len(samples[0])
    for i, x in enumerate(samples):
        if not isinstance(x, tuple) or len(x) != width:
            raise MXNetError(f"{where}: sample 0 ({_describe(samples[0])}) and sample {i} "
                             f"({_describe(x)}) are not tuples of one length")
    return samples


def _same_kind(samples, where):
    """NDArray samples stack with NDArrays only, the others through NumPy only."""
    is_nd = isinstance(samples[0], nd.NDArray)
    for i, x in enumerate(samples):
        if isinstance(x, nd.NDArray) != is_nd or isinstance(x, tuple):
            raise MXNetError(f"{where}: sample 0 ({_describe(samples[0])}) and sample {i} "
                             f"({_describe(x)}) differ in kind; the samples of a batch must "
                             "be all NDArrays, all tuples or all NumPy-convertible")


def _shape(x):
    try:
        return np.shape(x)
    except ValueError:      # a ragged list
        return "ragged"


def _same_shape(shapes, where):
    if len(shapes) > 1:
        raise MXNetError(f"{where}: the samples differ in shape ({sorted(map(str, shapes))}), "
                         "so they cannot be stacked; give a batchify_fn that pads them")


def _describe(x):
    if isinstance(x, tuple):
        return f"tuple of {len(x)}"
    if isinstance(x, (nd.NDArray, np.ndarray)):
        return f"{type(x).__name__} of shape {x.shape}"
    return type(x).__name__


class DataLoader:
    """Iterates over ``dataset`` in batches (MXNet 1.x's gluon.data.DataLoader).

    Give ``batch_size`` (with ``shuffle``, ``sampler`` and ``last_batch`` in
    ``'keep' | 'discard' | 'rollover'``) or a ``batch_sampler``. ``batchify_fn`` turns a list
    of samples into a batch (default: ``default_batchify_fn``). With ``num_workers > 0``,
    that many threads fetch and batchify up to ``prefetch`` batches ahead (MXNet used
    processes unless ``thread_pool=True``; mxlite always uses threads: the batch work is
    NumPy and mxlite kernels, which release the GIL, and a thread's batches need no copy
    back through a pipe or shared memory). A DataLoader also runs in a forked child process.
    ``pin_memory`` places batches on ``cpu_pinned``. With ``auto_reload`` the workers start on
    the first batches when the loader is made and again when an epoch ends (MXNet's
    prefetch of the next epoch; ``refresh()`` and ``clean()`` start and drop it by hand).
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120,
                 auto_reload=False):
        self._dataset = samples_of(dataset, "DataLoader")
        if batch_sampler is None:
            if batch_size is None:
                raise MXNetError("DataLoader: batch_size must be given when batch_sampler is not")
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else \
                    SequentialSampler(len(dataset))
            elif shuffle:
                raise MXNetError("DataLoader: shuffle must be False when a sampler is given")
            batch_sampler = BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise MXNetError("DataLoader: batch_size, shuffle, sampler and last_batch must not "
                             "be given with batch_sampler")
        if num_workers < 0:
            raise MXNetError(f"DataLoader: num_workers must be >= 0, got {num_workers}")
        self._batch_sampler = batch_sampler
        self._batchify = batchify_fn or default_batchify_fn
        self._num_workers = int(num_workers)
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._pin = Context("cpu_pinned", pin_device_id) if pin_memory else None
        self._timeout = timeout
        self.auto_reload = auto_reload
        self._iter = None
        if auto_reload:
            self.refresh()

    def refresh(self):
        """Start the next epoch's iterator now: with workers, its first batches are
        submitted at once (what ``auto_reload`` does at construction and after each epoch)."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop the prefetched iterator; the next ``iter(loader)`` starts a new one."""
        self._iter = None

    def __len__(self):
        return len(self._batch_sampler)

    def _batch(self, indices):
        batch = self._batchify([self._dataset[i] for i in indices])
        if self._pin is not None:
            batch = _to(batch, self._pin)
        return batch

    def __iter__(self):
        batches, self._iter = self._iter, None     # a prefetched iterator serves one epoch
        if batches is None:
            batches = self._prefetch_iter()
        yield from batches
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return (self._batch(indices) for indices in self._batch_sampler)
        return _Prefetcher(self)

    def _result(self, future):
        try:
            return future.result(timeout=self._timeout)
        except concurrent.futures.TimeoutError:
            raise MXNetError(f"DataLoader: a worker took more than {self._timeout} s") from None


class _Prefetcher:
    """An epoch's batches computed by a pool of ``num_workers`` threads, up to ``prefetch``
    batches ahead of the one returned; the first ones are submitted when it is made."""

    def __init__(self, loader):
        self._loader = loader
        self._pool = concurrent.futures.ThreadPoolExecutor(loader._num_workers)
        self._indices = iter(loader._batch_sampler)
        self._pending = collections.deque()
        self._fill()

    def _fill(self):
        while len(self._pending) <= self._loader._prefetch:
            indices = next(self._indices, None)
            if indices is None:
                return
            self._pending.append(self._pool.submit(self._loader._batch, indices))

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pending:
            self._pool.shutdown(wait=False)
            raise StopIteration
        future = self._pending.popleft()
        self._fill()
        return self._loader._result(future)

    def __del__(self):
        # an epoch left unfinished: its queued batches are dropped, the threads end
        self._pool.shutdown(wait=False, cancel_futures=True)


def _to(batch, ctx):
    if isinstance(batch, nd.NDArray):
        return batch.as_in_context(ctx)
    return [_to(b, ctx) for b in batch]
