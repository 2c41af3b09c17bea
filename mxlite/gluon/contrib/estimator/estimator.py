"""``Estimator``: a training loop driven by event handlers (MXNet 1.9.1's
``gluon.contrib.estimator.Estimator``)."""
import copy
import logging
import sys
import warnings

from ....base import MXNetError
from ....context import Context, cpu, gpu, num_gpus
from ....initializer import Uniform
from ....metric import Loss as metric_loss
from ...block import Block
from ...data import DataLoader
from ...loss import Loss as gluon_loss
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler,
                            LoggingHandler, MetricHandler, StoppingHandler, TrainBegin,
                            TrainEnd, ValidationHandler, _check_event_handlers)
from .utils import (EstimatorAssertionError, EstimatorRuntimeError, _check_handler_metric_ref,
                    _check_int, _check_metrics, _suggest_metric_for_loss)

__all__ = ["Estimator"]

_TRAINING, _VALIDATION = "training ", "validation "


def _with_prefix(name, prefix, replace=""):
    """``name`` with ``prefix`` in front, replacing a leading ``replace``; a name that
    already has the prefix is kept (so metrics reused by a second Estimator do not become
    'training training accuracy', as in MXNet)."""
    if name.startswith(prefix):
        return name
    if replace and name.startswith(replace):
        name = name[len(replace):]
    return prefix + name


class Estimator:
    """Trains and evaluates a Gluon network with a loop of event handlers.

    Parameters
    ----------
    net : gluon.Block
        The model to train; initialized here (with ``initializer``, or the default) unless
        every parameter already is.
    loss : gluon.loss.Loss
        The training objective.
    train_metrics, val_metrics : EvalMetric or list of EvalMetric, optional
        Metrics of the training and validation data. By default the training metrics are
        the loss's suggested metric (Accuracy for ``SoftmaxCrossEntropyLoss``) and an
        ``mx.metric.Loss`` named after the loss; the validation metrics are copies of the
        training ones. Names get a ``'training '`` / ``'validation '`` prefix, which is how
        handlers tell them apart.
    initializer : Initializer, optional
        Initializer of the parameters not yet initialized.
    trainer : gluon.Trainer, optional
        Default: SGD with learning rate 0.001 over ``net.collect_params()`` (with a
        warning).
    context : Context or list of Context, optional
        The devices; default ``gpu(0)`` if there is a GPU, else ``cpu()``.
    val_net : gluon.Block, optional
        The network evaluated on validation data (default ``net``); it may share ``net``'s
        parameters (``params=net.collect_params()``) and must be initialized.
    val_loss : gluon.loss.Loss, optional
        The validation objective (default ``loss``).
    batch_processor : BatchProcessor, optional
        What is done with each batch (default :py:class:`BatchProcessor`).

    ``logger`` is this estimator's own ``logging.Logger`` (level INFO, writing to
    ``sys.stdout``); the handlers log there. Add handlers to it to log elsewhere.
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None,
                 batch_processor=None):
        # every argument is checked before anything is changed (metric names, parameters)
        self.net = self._check_block(net, "net")
        self.val_net = self.net if val_net is None else self._check_block(val_net, "val_net")
        self.loss = self._check_loss(loss, "loss")
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss,
                                                                            "val_loss")
        self._train_metrics = _check_metrics(train_metrics, "Estimator", "train_metrics")
        self._val_metrics = _check_metrics(val_metrics, "Estimator", "val_metrics")
        if trainer is not None and not isinstance(trainer, Trainer):
            raise MXNetError(f"Estimator: trainer must be a gluon.Trainer, got {trainer!r}")
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.context = self._check_context(context)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self._initialize(initializer)
        self.trainer = trainer if trainer is not None else self._default_trainer()
        self.max_epoch = None
        self.max_batch = None
        self.batch_axis = 0

    # ---- argument checks -------------------------------------------------------------------
    @staticmethod
    def _check_block(net, arg):
        if not isinstance(net, Block):
            raise MXNetError(f"Estimator: {arg} must be a gluon.Block, got {net!r}")
        return net

    @staticmethod
    def _check_loss(loss, arg):
        if not isinstance(loss, gluon_loss):
            raise MXNetError(f"Estimator: {arg} must be a gluon.loss.Loss, got {loss!r}")
        return loss

    def _check_context(self, context):
        """``context`` as a non-empty list of available contexts, agreeing with where the
        net's initialized parameters live. Default: those contexts (MXNet picked gpu(0)
        whenever there was a GPU, so a net initialized on the CPU failed at the first
        batch), else gpu(0) if there is a GPU, else cpu()."""
        gpus = num_gpus()
        placed = self._placed_contexts()
        if not context:
            if placed:
                return placed
            if gpus > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To "
                              "utilize all your GPUs, specify context as a list of gpus, "
                              "e.g. context=[mx.gpu(0), mx.gpu(1)] ")
            return [gpu(0)] if gpus > 0 else [cpu()]
        if isinstance(context, Context):
            context = [context]
        if not isinstance(context, (list, tuple)) or not context or \
                not all(isinstance(c, Context) for c in context):
            raise MXNetError("Estimator: context must be a Context or a list of Context, "
                             f"e.g. mx.cpu() or [mx.gpu(0), mx.gpu(1)], got {context!r}")
        for ctx in context:
            if ctx.device_type == "gpu" and not 0 <= ctx.device_id < gpus:
                raise EstimatorAssertionError(
                    f"Estimator: context {ctx} is not available; this machine has {gpus} "
                    "GPU(s): use mx.cpu()" + "".join(f", mx.gpu({i})" for i in range(gpus)))
        if placed and set(placed) != set(context):
            raise MXNetError(f"Estimator: context {list(context)} differs from the contexts "
                             f"{placed} the net's parameters are initialized on; pass "
                             "context=None, or initialize the net on the same contexts")
        return list(context)

    def _placed_contexts(self):
        """The contexts the net's initialized parameters live on, in order ([] if none)."""
        placed = []
        for param in self.net.collect_params().values():
            try:
                contexts = param.list_ctx()
            except MXNetError:
                continue
            placed.extend(c for c in contexts if c not in placed)
        return placed

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not callable(getattr(batch_processor, "fit_batch", None)) or \
                not callable(getattr(batch_processor, "evaluate_batch", None)):
            raise MXNetError("Estimator: batch_processor must have fit_batch() and "
                             f"evaluate_batch() methods, got {batch_processor!r}")
        return batch_processor

    def _default_trainer(self):
        warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                      "0.001 is used.")
        return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})

    @staticmethod
    def _check_loader(data, arg, where):
        if not isinstance(data, DataLoader):
            raise MXNetError(f"Estimator.{where}: {arg} must be a gluon.data.DataLoader, got "
                             f"{type(data).__name__}; wrap arrays or a DataIter's data in a "
                             "gluon.data.ArrayDataset and a DataLoader")

    # ---- initialization and metrics --------------------------------------------------------
    @staticmethod
    def _uninitialized(net):
        """The parameters of ``net`` neither initialized nor waiting for deferred init."""
        missing = []
        for param in net.collect_params().values():
            try:
                param.list_ctx()
            except MXNetError:
                missing.append(param)
        return missing

    def _is_initialized(self):
        return not self._uninitialized(self.net)

    def _initialize(self, initializer):
        missing = self._uninitialized(self.net)
        if missing:
            # only the missing parameters are initialized (fine-tuning a pretrained body with
            # a new head): net.initialize would warn about every other one
            default = initializer if initializer is not None else Uniform()
            for param in missing:
                param.initialize(None, self.context, default)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True) to force re-initialize.")

    def _check_val_net(self):
        """A val_net of its own must be initialized before validation: MXNet found out
        only at the first validation, after a whole epoch of training."""
        if self.val_net is not self.net and self._uninitialized(self.val_net):
            raise EstimatorRuntimeError(
                "Estimator: val_net has parameters that are not initialized; initialize it, "
                "or build it with params=net.collect_params() (inside the same name scopes) "
                "so that it shares net's parameters")

    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(metric_loss(self.loss.name.rstrip("0123456789")))
        for metric in self._train_metrics:
            metric.name = _with_prefix(metric.name, _TRAINING)

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(metric) for metric in self._train_metrics]
        for metric in self._val_metrics:
            metric.name = _with_prefix(metric.name, _VALIDATION, replace=_TRAINING)

    @property
    def train_metrics(self):
        """The training metrics (a list of EvalMetric, names prefixed 'training ')."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The validation metrics (a list of EvalMetric, names prefixed 'validation ')."""
        return self._val_metrics

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return self.batch_processor._get_data_and_label(batch, ctx, batch_axis)

    # ---- the loops -------------------------------------------------------------------------
    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Run ``val_net`` over ``val_data`` (a DataLoader of ``(data, label)`` batches)
        once, updating ``val_metrics``.

        ``event_handlers`` get the epoch and batch events of this pass; a MetricHandler
        and a LoggingHandler over ``val_metrics`` are added unless given.
        """
        self._check_loader(val_data, "val_data", "evaluate")
        self.batch_axis = _check_int(batch_axis, "Estimator.evaluate", "batch_axis")
        self._check_val_net()
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def _check_fit_length(self, epochs, batches):
        if (epochs is None) == (batches is None):
            raise MXNetError("Estimator.fit: give exactly one of epochs or batches, got "
                             f"epochs={epochs!r}, batches={batches!r}")
        # a count that the stopping handler never reaches would train forever
        if epochs is not None:
            return _check_int(epochs, "Estimator.fit", "epochs", 1), None
        return None, _check_int(batches, "Estimator.fit", "batches", 1)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train on ``train_data`` (a DataLoader of ``(data, label)`` batches) for
        ``epochs`` epochs or ``batches`` batches (exactly one of them).

        ``event_handlers`` are run at the events of the loop, sorted by priority. A
        StoppingHandler is always added, and a GradientUpdateHandler, a MetricHandler, a
        LoggingHandler and (with ``val_data``) a ValidationHandler unless one of the kind is
        given. ``batch_axis`` is the axis along which batches split over the contexts.
        """
        self._check_loader(train_data, "train_data", "fit")
        if val_data is not None:
            self._check_loader(val_data, "val_data", "fit")
        self.max_epoch, self.max_batch = self._check_fit_length(epochs, batches)
        self.batch_axis = _check_int(batch_axis, "Estimator.fit", "batch_axis")
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        if any(isinstance(h, ValidationHandler) for h in handlers):
            self._check_val_net()
        self._run(train_data, *self._categorize_handlers(handlers))

    def _run(self, train_data, train_begin, epoch_begin, batch_begin, batch_end, epoch_end,
             train_end):
        """The training loop: epochs until a batch_end or epoch_end handler says stop."""
        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            seen = 0
            for batch in train_data:
                seen += 1
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch,
                                                                      self.batch_axis)
                stops = [handler.batch_end(self, batch=batch, pred=pred, label=label,
                                           loss=loss) for handler in batch_end]
                if any(stops):
                    break
            if not seen:
                # an empty loader would never reach a batch count: MXNet looped forever
                raise MXNetError("Estimator.fit: train_data yielded no batches (an empty "
                                 "dataset, or last_batch='discard' with fewer samples than "
                                 "batch_size)")
            # the epoch's end runs even after a stop at batch end (validation, checkpoints);
            # a stop at batch end then ends training (MXNet ended only the epoch unless an
            # epoch_end handler also said stop)
            if any([handler.epoch_end(self) for handler in epoch_end]) or any(stops):
                break
        for handler in train_end:
            handler.train_end(self)

    # ---- handlers --------------------------------------------------------------------------
    @staticmethod
    def _missing(handlers, kind):
        return not any(isinstance(h, kind) for h in handlers)

    def _finish_handlers(self, handlers, added, known_metrics):
        """``handlers`` + ``added``, checked to use only ``known_metrics`` when the user's
        handlers and default ones mix, sorted by priority (stable)."""
        mixing = bool(handlers) and bool(added)
        handlers = handlers + added
        if mixing:
            for handler in handlers:
                _check_handler_metric_ref(handler, known_metrics)
        handlers.sort(key=lambda handler: getattr(handler, "priority", 0))
        return handlers

    def _prepare_default_handlers(self, val_data, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if self._missing(handlers, GradientUpdateHandler):
            added.append(GradientUpdateHandler())
        if self._missing(handlers, MetricHandler):
            added.append(MetricHandler(metrics=self.train_metrics))
        if self._missing(handlers, ValidationHandler) and val_data is not None:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if self._missing(handlers, LoggingHandler):
            added.append(LoggingHandler(metrics=self.train_metrics))
        return self._finish_handlers(handlers, added,
                                     self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = []
        if self._missing(handlers, MetricHandler):
            added.append(MetricHandler(metrics=self.val_metrics))
        if self._missing(handlers, LoggingHandler):
            added.append(LoggingHandler(metrics=self.val_metrics))
        return self._finish_handlers(handlers, added, self.val_metrics)

    @staticmethod
    def _categorize_handlers(event_handlers):
        """The handlers of each event, in order: (train_begin, epoch_begin, batch_begin,
        batch_end, epoch_end, train_end)."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in kinds)
