"""Samplers of MXNet 1.x's ``gluon.contrib.data.sampler``."""
import numbers

from ....base import MXNetError
from ...data.sampler import Sampler

__all__ = ["IntervalSampler"]


class IntervalSampler(Sampler):
    """Indices ``0..length-1`` taken every ``interval``: ``i, i + interval, i + 2 *
    interval, ...`` for each start ``i`` in ``0..interval-1`` (``rollover=True``), or for
    the start 0 only (``rollover=False``). With a batch of ``interval`` sequences read
    consecutively, each sequence continues where it stopped in the previous batch.

    Differs from MXNet 1.9.1, whose ``len()`` was ``length`` also without rollover; here it
    is the number of indices the sampler gives.

    >>> list(mx.gluon.contrib.data.IntervalSampler(7, 3))
    [0, 3, 6, 1, 4, 2, 5]
    >>> len(mx.gluon.contrib.data.IntervalSampler(7, 3, rollover=False))
    3
    """

    def __init__(self, length, interval, rollover=True):
        for name, value in (("length", length), ("interval", interval)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise MXNetError(f"IntervalSampler: {name} must be a non-negative integer, "
                                 f"got {value!r}")
        if not 0 < interval <= max(length, 1):
            raise MXNetError(f"IntervalSampler: interval must be at least 1 and at most "
                             f"length={length}, got {interval}")
        self._length, self._interval, self._rollover = int(length), int(interval), rollover

    def _starts(self):
        return range(self._interval if self._rollover else 1)

    def __iter__(self):
        for start in self._starts():
            yield from range(start, self._length, self._interval)

    def __len__(self):
        return sum(len(range(s, self._length, self._interval)) for s in self._starts())
