"""``DataLoader``: batches of a dataset, in order or shuffled, optionally prepared by a pool of
workers."""
import collections
import concurrent.futures

import numpy as np

from ... import ndarray as nd
from ...base import MXNetError
from ...context import Context
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_batchify_fn"]


def default_batchify_fn(data):
    """Stack a list of samples into a batch: NDArrays with ``nd.stack``, tuples element by
    element, anything else through NumPy (keeping its dtype)."""
    first = data[0]
    if isinstance(first, nd.NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(items)) for items in zip(*data)]
    array = np.asarray(data)
    return nd.array(array, dtype=array.dtype)


class DataLoader:
    """Iterates over ``dataset`` in batches (MXNet 1.x's gluon.data.DataLoader).

    Give ``batch_size`` (with ``shuffle``, ``sampler`` and ``last_batch`` in
    ``'keep' | 'discard' | 'rollover'``) or a ``batch_sampler``. ``batchify_fn`` turns a list
    of samples into a batch (default: ``default_batchify_fn``). With ``num_workers > 0``,
    that many threads fetch and batchify up to ``prefetch`` batches ahead (MXNet used
    processes unless ``thread_pool=True``; mxlite always uses threads: the batch work is
    NumPy and mxlite kernels, which release the GIL, and a thread's batches need no copy
    back through a pipe or shared memory). A DataLoader also runs in a forked child process.
    ``pin_memory`` places batches on ``cpu_pinned``.
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120):
        self._dataset = dataset
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

    def __len__(self):
        return len(self._batch_sampler)

    def _batch(self, indices):
        batch = self._batchify([self._dataset[i] for i in indices])
        if self._pin is not None:
            batch = _to(batch, self._pin)
        return batch

    def __iter__(self):
        if self._num_workers == 0:
            for indices in self._batch_sampler:
                yield self._batch(indices)
            return
        with concurrent.futures.ThreadPoolExecutor(self._num_workers) as pool:
            pending = collections.deque()
            batches = iter(self._batch_sampler)
            for indices in batches:
                pending.append(pool.submit(self._batch, indices))
                if len(pending) > self._prefetch:
                    yield self._result(pending.popleft())
            while pending:
                yield self._result(pending.popleft())

    def _result(self, future):
        try:
            return future.result(timeout=self._timeout)
        except concurrent.futures.TimeoutError:
            raise MXNetError(f"DataLoader: a worker took more than {self._timeout} s") from None


def _to(batch, ctx):
    if isinstance(batch, nd.NDArray):
        return batch.as_in_context(ctx)
    return [_to(b, ctx) for b in batch]
