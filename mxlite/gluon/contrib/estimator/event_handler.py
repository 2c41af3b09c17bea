"""Event handlers of the Gluon Estimator (MXNet 1.9.1's
``gluon.contrib.estimator.event_handler``).

A handler is an object deriving from one or more of the six event mixins (``TrainBegin``,
``EpochBegin``, ``BatchBegin``, ``BatchEnd``, ``EpochEnd``, ``TrainEnd``); the Estimator
calls each mixin's method at that event, handlers sorted by their ``priority`` (ascending,
0 when a handler has none; ties keep the order given). A ``batch_end`` or ``epoch_end``
that returns True stops training.
"""
import math
import os
import re
import time
import warnings

from ....base import MXNetError
from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as metric_loss
from .utils import (EstimatorAssertionError, _check_int, _check_metrics, _check_mode,
                    _check_number, _less, _monitor_op)

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler",
           "LoggingHandler", "CheckpointHandler", "EarlyStoppingHandler",
           "GradientUpdateHandler"]


class EventHandler:
    """Base of the event mixins; ``isinstance(h, EventHandler)`` marks a handler."""


def _check_event_handlers(handlers):
    """``handlers`` (None, an EventHandler or a list of them) as a new list: the caller's
    list is never extended in place (MXNet appended its default handlers to it, so a list
    reused for a second ``fit`` carried stale ones)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    if handlers is None:
        return []
    if not isinstance(handlers, (list, tuple)) or \
            not all(isinstance(h, EventHandler) for h in handlers):
        raise MXNetError("Estimator: event_handlers must be an EventHandler or a list of "
                         f"EventHandler, got {handlers!r}")
    return list(handlers)


class TrainBegin(EventHandler):
    """Mixin: ``train_begin(estimator)`` runs once before the first epoch."""

    def train_begin(self, estimator, *args, **kwargs):
        """Called once when ``fit`` starts."""


class TrainEnd(EventHandler):
    """Mixin: ``train_end(estimator)`` runs once after training stops."""

    def train_end(self, estimator, *args, **kwargs):
        """Called once when ``fit`` ends."""


class EpochBegin(EventHandler):
    """Mixin: ``epoch_begin(estimator)`` runs before each pass over the data."""

    def epoch_begin(self, estimator, *args, **kwargs):
        """Called at the start of every epoch (and of every ``evaluate``)."""


class EpochEnd(EventHandler):
    """Mixin: ``epoch_end(estimator)`` runs after each pass; True stops training."""

    def epoch_end(self, estimator, *args, **kwargs):
        """Called at the end of every epoch; return True to stop training."""
        return False


class BatchBegin(EventHandler):
    """Mixin: ``batch_begin(estimator, batch=...)`` runs before each batch."""

    def batch_begin(self, estimator, *args, **kwargs):
        """Called before each batch, with ``batch=`` the batch."""


class BatchEnd(EventHandler):
    """Mixin: ``batch_end(estimator, batch, pred, label, loss)`` runs after each batch; True
    stops training."""

    def batch_end(self, estimator, *args, **kwargs):
        """Called after each batch with ``batch``, ``pred``, ``label``, ``loss`` keywords;
        return True to stop training."""
        return False


def _format_metrics(metrics):
    """``'name: value, name: value'`` of ``metrics`` (4 decimals, as MXNet logged them)."""
    return ", ".join(f"{name}: {value:.4f}" for metric in metrics
                     for name, value in metric.get_name_value())


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``max_epoch`` epochs or ``max_batch`` batches.

    The Estimator adds one to every ``fit``; at train begin it takes the limits from the
    estimator (``fit(epochs=...)`` / ``fit(batches=...)``).
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = _check_int(max_epoch, "StoppingHandler", "max_epoch", 1, True)
        self.max_batch = _check_int(max_batch, "StoppingHandler", "max_batch", 1, True)
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at each epoch begin and updates them at each batch end: an
    ``mx.metric.Loss`` with the batch's losses, any other metric with ``(label, pred)``.

    ``priority`` (default -1000) runs it before the handlers that read the metrics.
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics, "MetricHandler")
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` (typically
    ``estimator.evaluate``) every ``epoch_period`` epochs and every ``batch_period``
    batches (None or 0: never).

    ``priority`` (default -1000) runs it before the handlers that read validation metrics;
    ``event_handlers`` are passed on to ``eval_fn``.
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None,
                 priority=-1000, event_handlers=None):
        if not callable(eval_fn):
            raise MXNetError(f"ValidationHandler: eval_fn must be callable, got {eval_fn!r}")
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = _check_int(epoch_period, "ValidationHandler", "epoch_period",
                                       0, True)
        self.batch_period = _check_int(batch_period, "ValidationHandler", "batch_period",
                                       0, True)
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer, the learning rate, timings and ``metrics`` to
    ``estimator.logger``, in MXNet's words.

    ``log_interval='epoch'`` logs at epoch begin and end; an int k also logs every k-th
    batch (``[Epoch e][Batch b][Samples n] time/interval: ...``). ``priority`` (default
    +inf) runs it after every other handler, so the values it logs are up to date.
    """

    def __init__(self, log_interval="epoch", metrics=None, priority=math.inf):
        if log_interval != "epoch" and (isinstance(log_interval, bool)
                                        or not isinstance(log_interval, int)
                                        or log_interval < 1):
            raise MXNetError("LoggingHandler: log_interval must be 'epoch' or an int >= 1, "
                             f"got {log_interval!r}")
        self.metrics = _check_metrics(metrics, "LoggingHandler")
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def _log(self, estimator, msg, *args):
        estimator.logger.info(msg, *args)

    def _with_metrics(self, msg):
        values = _format_metrics(self.metrics)
        return msg + values if values else msg.rstrip(", ")

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        self._log(estimator, "Training begin: using optimizer %s with current learning "
                  "rate %.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            self._log(estimator, "Train for %d epochs.", estimator.max_epoch)
        else:
            self._log(estimator, "Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        seconds = time.time() - self.train_start
        self._log(estimator, "%s", self._with_metrics(
            "Train finished using total %ds with %d epochs. " % (seconds, self.current_epoch)))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            # samples along the batch axis (MXNet counted axis 0 whatever batch_axis was)
            axis = getattr(estimator, "batch_axis", 0)
            self.processed_samples += kwargs["batch"][0].shape[axis]
            if self.batch_index % self.log_interval == 0:
                msg = "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs " % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                self._log(estimator, "%s", self._with_metrics(msg))
        self.batch_index += 1

    def _is_training(self):
        # the Estimator prefixes its training metrics' names with 'training ' (MXNet looked
        # for 'training' anywhere, so 'validation pretraining acc' counted as training)
        return any(metric.name.startswith("training ") for metric in self.metrics)

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        if self._is_training():
            self._log(estimator, "[Epoch %d] Begin, current learning rate: %.4f",
                      self.current_epoch, estimator.trainer.learning_rate)
        else:
            self._log(estimator, "Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        seconds = time.time() - self.epoch_start
        self._log(estimator, "%s", self._with_metrics(
            "[Epoch %d] Finished in %.3fs, " % (self.current_epoch, seconds)))
        self.current_epoch += 1
        self.batch_index = 0


def _check_monitor(monitor, where, required):
    """``monitor`` checked to be a single (non-composite) EvalMetric, or None if allowed."""
    if monitor is None and not required:
        return None
    if not isinstance(monitor, EvalMetric):
        raise MXNetError(f"{where}: monitor must be one of the metric objects of "
                         "estimator.train_metrics or estimator.val_metrics, got "
                         f"{monitor!r}")
    if isinstance(monitor, CompositeEvalMetric):
        raise MXNetError(f"{where}: monitor must be a single metric, not a "
                         "CompositeEvalMetric; pass one of its members")
    return monitor


def _monitored_value(monitor, where):
    """``monitor``'s value, or None (with a warning) while it has not been updated."""
    name, value = monitor.get()
    if isinstance(value, (list, tuple)) or math.isnan(value):
        warnings.warn(RuntimeWarning(
            f"{where}: {name} has not been updated (or is not a single value); pass one of "
            "the metric objects of estimator.train_metrics / estimator.val_metrics as "
            "monitor"))
        return None
    return value


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the network's parameters and the trainer's states every ``epoch_period``
    epochs and/or every ``batch_period`` batches, as
    ``{model_dir}/{model_prefix}-epoch{E}batch{B}.params`` and ``.states``, keeping the
    newest ``max_checkpoints``; with ``save_best`` also ``{model_prefix}-best.params`` /
    ``.states`` whenever ``monitor`` improves (``mode`` 'auto', 'min' or 'max'). A
    hybridized network's graph is saved once, after the first batch, as
    ``{model_prefix}-symbol.json``.

    File numbers follow MXNet: at an epoch end E is the epoch's index and B the number of
    batches trained so far; at a batch end B is the batch's index.

    ``resume_from_checkpoint=True`` loads the newest checkpoint in ``model_dir`` at train
    begin and trains only the remaining epochs (or batches), numbering on from it; the
    training must be counted in the same unit as the checkpoints (epochs with
    ``epoch_period`` only, or batches with ``batch_period`` only). ``verbose=1`` logs each
    save.
    """

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        where = "CheckpointHandler"
        if not isinstance(model_prefix, str) or not model_prefix \
                or os.sep in model_prefix or (os.altsep and os.altsep in model_prefix):
            raise MXNetError(f"{where}: model_prefix must be a non-empty file name "
                             f"(no directory), got {model_prefix!r}")
        self.monitor = _check_monitor(monitor, where, required=save_best)
        self.verbose = verbose
        self.model_dir = os.fspath(model_dir)
        self.model_prefix = model_prefix
        self.save_best = bool(save_best)
        self.epoch_period = _check_int(epoch_period, where, "epoch_period", 0, True)
        self.batch_period = _check_int(batch_period, where, "batch_period", 0, True)
        self.max_checkpoints = _check_int(max_checkpoints, where, "max_checkpoints", 0)
        self.resume_from_checkpoint = bool(resume_from_checkpoint)
        _check_mode(mode, where)
        self.monitor_op = _monitor_op(self.monitor, mode, where) if self.save_best else None
        self.best = None
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = -1
        self.trained_batch = -1
        self.saved_checkpoints = []
        os.makedirs(self.model_dir, exist_ok=True)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        self.best = math.inf if self.monitor_op is _less else -math.inf
        self.trained_epoch = self.trained_batch = -1
        if self.resume_from_checkpoint:
            self._check_resume_periods(estimator)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator, self.current_batch + 1)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator, self.current_batch)
        self.current_epoch += 1

    def _file(self, prefix, ext):
        return os.path.join(self.model_dir, prefix + ext)

    def _checkpoint_numbers(self, estimator):
        """(epoch, batch) of the checkpoint saved now, counted on from a resumed one."""
        if self.trained_epoch < 0:
            return self.current_epoch, self.current_batch
        epoch = self.current_epoch + self.trained_epoch + 1
        # an epoch-end save counts batches trained, a batch-end save the batch's index
        batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        return epoch, batch

    def _save_checkpoint(self, estimator, trained_batches):
        epoch, batch = self._checkpoint_numbers(estimator)
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch, batch)
        self._save_params_and_trainer(estimator, prefix)
        # a name saved again (a second fit numbers from 0 again) is one checkpoint, the
        # newest: MXNet listed it twice and pruning the old entry deleted the new files
        if prefix in self.saved_checkpoints:
            self.saved_checkpoints.remove(prefix)
        self.saved_checkpoints.append(prefix)
        self._prune_checkpoints()
        if self.verbose > 0:
            # MXNet logged one batch too many at epoch ends
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  trained_batches, self.model_dir, prefix)
        if self.save_best:
            self._save_if_best(estimator)

    def _save_if_best(self, estimator):
        value = _monitored_value(self.monitor, "CheckpointHandler")
        if value is None:
            return
        name = self.monitor.get()[0]
        if not self.monitor_op(value, self.best):
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                      "%0.5f, skipping updating best model",
                                      self.current_epoch, name, self.best)
            return
        prefix = self.model_prefix + "-best"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                  "%0.5f, updating best model at %s with prefix: %s",
                                  self.current_epoch, name, self.best, value, self.model_dir,
                                  prefix)
        self.best = value

    def _save_symbol(self, estimator):
        symbol_file = self._file(self.model_prefix, "-symbol.json")
        cached = getattr(estimator.net, "_cached_graph", None)
        if cached:
            cached[1].save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator "
                "in order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, prefix):
        estimator.net.save_parameters(self._file(prefix, ".params"))
        estimator.trainer.save_states(self._file(prefix, ".states"))

    def _prune_checkpoints(self):
        """Delete the oldest checkpoints beyond ``max_checkpoints`` (exactly their two files:
        MXNet deleted every file starting with the prefix, so pruning ``epoch1batch4`` also
        took ``epoch1batch40``)."""
        while len(self.saved_checkpoints) > self.max_checkpoints:
            prefix = self.saved_checkpoints.pop(0)
            for ext in (".params", ".states"):
                if os.path.isfile(self._file(prefix, ext)):
                    os.remove(self._file(prefix, ext))

    def _check_resume_periods(self, estimator):
        if estimator.max_batch and (not self.batch_period or self.epoch_period) or \
                estimator.max_epoch and (not self.epoch_period or self.batch_period):
            unit = "batches" if estimator.max_batch else "epochs"
            raise EstimatorAssertionError(
                "CheckpointHandler: resume_from_checkpoint needs checkpoints counted in the "
                f"unit the training is counted in: training for {unit} needs "
                + ("batch_period set and epoch_period=None" if estimator.max_batch else
                   "epoch_period set and batch_period=None")
                + f", got epoch_period={self.epoch_period}, batch_period={self.batch_period}")

    def _existing_checkpoints(self):
        """``[(epoch, batch, prefix)]`` of the checkpoints of this prefix in ``model_dir``,
        oldest first."""
        pattern = re.compile(re.escape(self.model_prefix) + r"-epoch(\d+)batch(\d+)\.params")
        found = []
        for fname in os.listdir(self.model_dir):
            if not fname.startswith(self.model_prefix + "-epoch") or \
                    not fname.endswith(".params"):
                continue
            match = pattern.fullmatch(fname)
            if match is None:
                raise MXNetError(f"CheckpointHandler: cannot parse checkpoint file {fname!r} "
                                 f"in {self.model_dir!r}; expected names "
                                 f"{self.model_prefix}-epoch<E>batch<B>.params")
            found.append((int(match.group(1)), int(match.group(2)), fname[:-len(".params")]))
        return sorted(found)

    def _resume_from_checkpoint(self, estimator):
        found = self._existing_checkpoints()
        if not found:
            unit = "batches" if estimator.max_batch else "epochs"
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for %d %s", estimator.max_batch or
                                  estimator.max_epoch, unit)
            return
        self.trained_epoch, self.trained_batch, prefix = found[-1]
        # earlier checkpoints count towards max_checkpoints (MXNet forgot them)
        self.saved_checkpoints = [p for _, _, p in found]
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to "
               "train for " % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            estimator.max_epoch = self._remaining(estimator.max_epoch, self.trained_epoch,
                                                  "epochs")
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            estimator.max_batch = self._remaining(estimator.max_batch, self.trained_batch,
                                                  "batches")
            msg += "%d batches " % estimator.max_batch
        for ext in (".params", ".states"):
            if not os.path.isfile(self._file(prefix, ext)):
                raise EstimatorAssertionError(f"CheckpointHandler: cannot resume: "
                                              f"{self._file(prefix, ext)} does not exist")
        estimator.net.load_parameters(self._file(prefix, ".params"), ctx=estimator.context)
        estimator.trainer.load_states(self._file(prefix, ".states"))
        estimator.logger.warning(msg)
        self._prune_checkpoints()

    def _remaining(self, total, trained_index, unit):
        """How many of ``total`` epochs/batches remain after index ``trained_index``."""
        if trained_index >= total - 1:
            raise MXNetError(f"CheckpointHandler: the checkpoints in {self.model_dir!r} "
                             f"already reach {total} {unit} (index {trained_index}); pass "
                             "resume_from_checkpoint=False to train from scratch, or train "
                             "for more")
        return total - trained_index - 1


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training once ``monitor`` has not improved for ``patience`` epochs.

    An epoch improves when the value beats the best so far by more than ``min_delta``
    (greater for ``mode='max'``, less for ``'min'``; ``'auto'`` maximises names holding
    'acc' or 'f1' and minimises others). ``baseline``, when given, is the best value to
    beat from the start. ``patience=0`` stops at the first epoch without improvement.
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        where = "EarlyStoppingHandler"
        self.monitor = _check_monitor(monitor, where, required=True)
        self.min_delta = _check_number(min_delta, where, "min_delta", minimum=0)
        self.patience = _check_int(patience, where, "patience", 0)
        self.baseline = None if baseline is None else _check_number(baseline, where,
                                                                    "baseline")
        self.monitor_op = _monitor_op(self.monitor, mode, where)
        self.best = None
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = math.inf if self.monitor_op is _less else -math.inf

    def _improved(self, value):
        # the value must beat the best by more than min_delta, in the improving direction
        shift = self.min_delta if self.monitor_op is _less else -self.min_delta
        return self.monitor_op(value + shift, self.best)

    def epoch_end(self, estimator, *args, **kwargs):
        value = _monitored_value(self.monitor, "EarlyStoppingHandler")
        if value is not None:
            if self._improved(value):
                self.best = value
                self.wait = 0
            else:
                self.wait += 1
                if self.wait >= self.patience:
                    self.stopped_epoch = self.current_epoch
                    self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        # MXNet logged only when stopped_epoch > 0, so a stop at epoch 0 went unreported
        if self.stop_training:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Applies the gradients at each batch end: ``estimator.trainer.step(n)`` with ``n``
    the number of samples in the batch's losses. ``priority`` (default -2000) runs it
    first."""

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, (list, tuple)) else [loss]
        estimator.trainer.step(sum(each.shape[0] for each in losses))
