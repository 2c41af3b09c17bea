"""``mx.callback``: the callbacks MXNet 1.x training loops call (``Module.fit``,
``FeedForward``, user loops).

Two kinds, as MXNet's:

* epoch-end callbacks ``cb(iter_no, sym, arg_params, aux_params)`` with the 0-based epoch
  just finished -- :func:`do_checkpoint`, :func:`module_checkpoint`;
* batch-end callbacks ``cb(param)`` with a :class:`mxlite.model.BatchEndParam`
  (``epoch``, ``nbatch``, ``eval_metric``, ``locals``) -- :func:`log_train_metric`,
  :class:`Speedometer`, :class:`ProgressBar`, :class:`LogValidationMetricsCallback`.

They log through the root logger (``logging.info``) with MXNet's exact message formats, so
scripts that parse or grep MXNet's training logs read mxlite's unchanged.

Deviation: MXNet silently turned a checkpoint ``period`` below 1 into 1 and failed only at
the first batch (``ZeroDivisionError``) for a ``frequent``/``period`` of 0; here every
count is checked when the callback is made and a bad one raises ``MXNetError`` naming the
function and the argument.
"""
import logging
import math
import numbers
import os
import time

from .base import MXNetError
from .model import save_checkpoint

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer",
           "ProgressBar", "LogValidationMetricsCallback"]


def _positive_int(func, name, value):
    """``value`` as an int >= 1; MXNetError naming ``func`` and ``name`` otherwise. An
    integral float (``2.0``) is accepted, as MXNet's ``int(period)`` accepted it."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)) \
            or (isinstance(value, float) and not value.is_integer()):
        raise MXNetError(f"{func}: {name} must be a positive integer, got {value!r}")
    if value < 1:
        raise MXNetError(f"{func}: {name} must be a positive integer, got {value!r}")
    return int(value)


def _checked_prefix(func, prefix):
    """``prefix`` (a str or path); MXNetError naming ``func`` otherwise (found now, not at
    the end of the first epoch)."""
    if not isinstance(prefix, (str, os.PathLike)):
        raise MXNetError(f"{func}: prefix must be a str or path, got {type(prefix).__name__}")
    return os.fspath(prefix)


def _checkpoint_due(iter_no, period):
    """Whether the epoch ``iter_no`` (0-based) just finished is a ``period``-th one: files
    are numbered from 1, so ``period=2`` saves after epochs 1, 3, ... as ``-0002``,
    ``-0004``, ..."""
    return (iter_no + 1) % period == 0


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback that calls ``mod.save_checkpoint(prefix, epoch,
    save_optimizer_states)`` after every ``period``-th epoch, ``epoch`` counted from 1
    (``prefix-symbol.json``, ``prefix-%04d.params`` and, when asked, ``prefix-%04d.states``).

    ``mod``: a Module (anything with ``save_checkpoint``). The callback takes
    ``(iter_no, sym=None, arg=None, aux=None)`` and ignores all but ``iter_no``: the module
    saves its own parameters.
    """
    if not callable(getattr(mod, "save_checkpoint", None)):
        raise MXNetError(f"module_checkpoint: mod must have a save_checkpoint method, got "
                         f"{type(mod).__name__}")
    prefix = _checked_prefix("module_checkpoint", prefix)
    period = _positive_int("module_checkpoint", "period", period)

    def _callback(iter_no, sym=None, arg=None, aux=None):    # noqa: ARG001 -- fit's signature
        if _checkpoint_due(iter_no, period):
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """An epoch-end callback ``(iter_no, sym, arg, aux)`` that writes
    ``mx.model.save_checkpoint(prefix, iter_no + 1, sym, arg, aux)`` after every
    ``period``-th epoch: ``prefix-symbol.json`` and ``prefix-%04d.params``, numbered from 1
    as MXNet (the files ``mx.model.load_checkpoint(prefix, n)`` reads).

    >>> import mxlite as mx
    >>> cb = mx.callback.do_checkpoint("/tmp/mymodel", period=2)
    >>> cb(0, None, {}, {})     # epoch 1: nothing is written
    """
    prefix = _checked_prefix("do_checkpoint", prefix)
    period = _positive_int("do_checkpoint", "period", period)

    def _callback(iter_no, sym, arg, aux):
        if _checkpoint_due(iter_no, period):
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback that logs ``Iter[<epoch>] Batch[<nbatch>] Train-<name>=<value>``
    (one line per metric value) every ``period`` batches (when ``nbatch % period == 0``),
    then, with ``auto_reset``, resets the metric's local statistics (``reset_local``)."""
    period = _positive_int("log_train_metric", "period", period)

    def _callback(param):
        if param.nbatch % period != 0 or param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name,
                         value)
        if auto_reset:
            param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """A batch-end callback that logs the training speed and the metric every ``frequent``
    batches, in MXNet's format::

        Epoch[0] Batch [50-100]\\tSpeed: 1843.21 samples/sec\\taccuracy=0.912500

    With ``auto_reset`` (the default) the metric's local statistics are reset after each
    line, so each value covers the batches ``[count - frequent, count]`` the line names;
    without it the values accumulate and the line says ``Batch [0-<count>]``. Without a
    metric the line is ``Iter[<epoch>] Batch [<count>]\\tSpeed: ... samples/sec``.

    The speed is ``frequent * batch_size`` over the time since the previous line (or since
    the first batch of the epoch); the first call of an epoch (``nbatch`` smaller than the
    last one seen) only starts the clock. The clock is monotonic (``time.perf_counter``),
    where MXNet's wall clock (``time.time``) could give a negative speed when the system
    time was set back; a zero interval gives ``inf``, as MXNet.
    """

    _clock = staticmethod(time.perf_counter)

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = _positive_int("Speedometer", "batch_size", batch_size)
        self.frequent = _positive_int("Speedometer", "frequent", frequent)
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:      # a new epoch began: restart the clock
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = self._clock()
            return
        if count % self.frequent != 0:
            return
        elapsed = self._clock() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        self._log(param, count, speed)
        self.tic = self._clock()

    def _log(self, param, count, speed):
        """One line in MXNet's format (see the class docstring)."""
        if param.eval_metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
            return
        name_value = param.eval_metric.get_name_value()
        values = [x for pair in name_value for x in pair]
        first = count - self.frequent if self.auto_reset else 0
        msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(name_value)
        if self.auto_reset:
            param.eval_metric.reset_local()
        logging.info(msg, param.epoch, first, count, speed, *values)


class ProgressBar:
    """A batch-end callback that logs a progress bar of ``length`` characters for batch
    ``nbatch`` of ``total``, as MXNet's::

        [========--------] 50%\\r

    ``round(length * nbatch / total)`` ``=`` then ``-``, and ``ceil(100 * nbatch / total)``
    percent. A batch past ``total`` fills the bar (MXNet drew a bar longer than ``length``);
    the percentage still says how far past.
    """

    def __init__(self, total, length=80):
        self.total = _positive_int("ProgressBar", "total", total)
        self.bar_len = _positive_int("ProgressBar", "length", length)

    def bar(self, count):
        """The message for batch ``count`` (without logging it)."""
        filled = min(self.bar_len, max(0, int(round(self.bar_len * count / float(self.total)))))
        percents = math.ceil(100.0 * count / float(self.total))
        return "[%s] %s%s\r" % ("=" * filled + "-" * (self.bar_len - filled), percents, "%")

    def __call__(self, param):
        logging.info("%s", self.bar(param.nbatch))


class LogValidationMetricsCallback:
    """A callback (``eval_end_callback``) that logs
    ``Epoch[<epoch>] Validation-<name>=<value>`` for each value of ``param.eval_metric``
    (nothing without a metric)."""

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
