"""``mx.monitor`` (also ``mx.mon``): statistics of an executor's arrays, for debugging.

A :class:`Monitor` is installed on executors (``Monitor.install(exe)``, or a Module's
``install_monitor``); between ``tic()`` and ``toc()`` of every ``interval``-th batch it
collects a statistic of each operator output the executor reports (with ``monitor_all``
also each operator input, and each variable feeding an operator under its own name), then
at ``toc()`` of every argument and auxiliary state, keeping those whose name matches
``pattern`` (``re.match``: anchored at the start).

The statistic is computed when the executor reports the array, so it sees the value at
that moment (a later in-place update does not change it).
"""
import logging
import math
import numbers
import re

from . import ndarray
from .base import MXNetError, py_str
from .ndarray import NDArray

__all__ = ["Monitor"]


def _rms(x):
    """``norm(x) / sqrt(x.size)``: the root mean square of ``x``, MXNet's default statistic
    (MXNet's docstring called it the mean absolute value; its code computed this)."""
    return ndarray.norm(x) / math.sqrt(x.size)


def _stat_string(name, stats):
    """MXNet's text of one entry's statistics: each NDArray of ``stats`` (one or a list)
    as a scalar if its shape is ``(1,)``, else as its NumPy text, each followed by a tab."""
    stats = [stats] if isinstance(stats, NDArray) else stats
    if not isinstance(stats, (list, tuple)) or not all(isinstance(v, NDArray) for v in stats):
        raise MXNetError(f"Monitor.toc: stat_func must return an NDArray or a list of "
                         f"NDArrays; for {name!r} it returned {type(stats).__name__}")
    return "".join((str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
                   for v in stats)


class Monitor:
    """Monitor inputs, outputs, weights and gradients of executors, as MXNet's
    ``mx.monitor.Monitor``.

    Parameters
    ----------
    interval : int
        Statistics are collected at every ``interval``-th ``tic`` (the 1st, the
        ``interval + 1``-th, ...).
    stat_func : callable, optional
        ``NDArray -> NDArray`` (or a list of NDArrays): the statistic. Default: the root
        mean square ``norm(x) / sqrt(x.size)``.
    pattern : str
        A regular expression; only names it matches (``re.match``) are kept, e.g.
        ``'.*weight|.*output'``.
    sort : bool
        Sort ``toc()``'s entries by name (stable).
    monitor_all : bool
        Report operator inputs too, not only outputs.
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        if isinstance(interval, bool) or not isinstance(interval, numbers.Integral) \
                or interval < 1:
            raise MXNetError(f"Monitor: interval must be a positive integer, got {interval!r}")
        if stat_func is not None and not callable(stat_func):
            raise MXNetError(f"Monitor: stat_func must be callable, got {stat_func!r}")
        try:
            self.re_prog = re.compile(pattern)
        except (re.error, TypeError) as e:
            raise MXNetError(f"Monitor: pattern {pattern!r} is not a regular expression: "
                             f"{e}") from None
        self.interval = int(interval)
        self.stat_func = _rms if stat_func is None else stat_func
        self.sort = sort
        self.monitor_all = monitor_all
        self.activated = False
        self.queue = []      # (step, name, statistic) of the batch being collected
        self.step = 0
        self.exes = []

    def stat_helper(self, name, array):
        """The executor's monitor callback: queue ``stat_func(array)`` when collecting and
        ``name`` (str or bytes) matches ``pattern``."""
        name = py_str(name) if isinstance(name, bytes) else name
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe):
        """Install on ``exe`` (an ``Executor``; several may be installed): its forward
        reports operator outputs (and inputs with ``monitor_all``) to this monitor."""
        if not callable(getattr(exe, "set_monitor_callback", None)):
            raise MXNetError(f"Monitor.install: exe must be an Executor, got "
                             f"{type(exe).__name__}")
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start a batch (call before ``forward``): collecting starts at every
        ``interval``-th call."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End the batch (call after ``forward``/``backward``): ``[(step, name, text)]`` of
        every statistic collected, the installed executors' arguments and auxiliary states
        last; ``[]`` when this batch was not collected. ``step`` counts ``tic`` calls from 1;
        ``text`` is each statistic's value followed by a tab."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        queue, self.queue = self.queue, []
        if self.sort:
            queue.sort(key=lambda entry: entry[1])
        return [(step, name, _stat_string(name, stats)) for step, name, stats in queue]

    def toc_print(self):
        """``toc()`` logged, one ``Batch: <step> <name> <text>`` line per entry."""
        for step, name, text in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(step, name, text))
