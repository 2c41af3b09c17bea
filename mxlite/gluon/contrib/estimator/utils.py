"""Checks shared by the Estimator and its event handlers: metric lists, counts and periods,
the comparison a monitored metric improves by, and the errors MXNet raised as assertions."""
import math
import numbers

from ....base import MXNetError
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss

__all__ = []


class EstimatorAssertionError(MXNetError, AssertionError):
    """An MXNetError raised where MXNet 1.9.1's estimator used ``assert`` (an unavailable
    context, a checkpoint that cannot be resumed): it is also an ``AssertionError`` so that
    scripts catching MXNet's exception keep working."""


class EstimatorRuntimeError(MXNetError, RuntimeError):
    """An MXNetError for a validation network whose parameters are not initialized, where
    MXNet 1.9.1 raised ``RuntimeError`` (after a whole epoch of training): it is also a
    ``RuntimeError`` so that scripts catching MXNet's exception keep working."""


def _check_metrics(metrics, where="Estimator", arg="metrics"):
    """``metrics`` (None, an EvalMetric, a CompositeEvalMetric or a list of EvalMetric) as
    a flat list of EvalMetric; a composite is flattened into its members."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric, where, arg)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    if metrics is None:
        return []
    if not isinstance(metrics, (list, tuple)) or \
            not all(isinstance(m, EvalMetric) for m in metrics):
        raise MXNetError(f"{where}: {arg} must be an mx.metric.EvalMetric or a list of "
                         f"EvalMetric, got {metrics!r}")
    return list(metrics)


def _handler_metrics(handler):
    """The metrics an event handler holds in its attributes named like ``*metric*`` or
    ``*monitor*`` (MXNet meant to check both; its ``['metric' or 'monitor']`` checked only
    the first)."""
    found = []
    for attr, value in vars(handler).items():
        if "metric" not in attr and "monitor" not in attr:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        found.extend(v for v in values if isinstance(v, EvalMetric))
    return found


def _check_handler_metric_ref(handler, known_metrics):
    """Raise MXNetError when ``handler`` refers to a metric that is not one of the
    estimator's own (``known_metrics``): such a metric would never be updated."""
    for metric in _handler_metrics(handler):
        if not any(metric is known for known in known_metrics):
            raise MXNetError(
                f"Estimator: event handler {type(handler).__name__} refers to metric "
                f"{metric.name!r}, which is none of the estimator's metrics and would never be "
                "updated; use the objects in estimator.train_metrics / estimator.val_metrics")


def _suggest_metric_for_loss(loss):
    """The metric that goes with ``loss`` by default (Accuracy for softmax cross-entropy)."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None


def _check_int(value, where, arg, minimum=0, allow_none=False):
    """``value`` checked to be an int (not a bool) of at least ``minimum``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        what = f"an int >= {minimum}" + (" or None" if allow_none else "")
        raise MXNetError(f"{where}: {arg} must be {what}, got {value!r}")
    return int(value)


def _check_number(value, where, arg, minimum=None):
    """``value`` checked to be a finite real number (at least ``minimum`` if given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise MXNetError(f"{where}: {arg} must be a finite number{bound}, got {value!r}")
    return value


def _greater(a, b):
    return a > b


def _less(a, b):
    return a < b


def _check_mode(mode, where):
    """MXNet warned about an unknown mode and used 'auto'; a typo here is an error."""
    if mode not in ("auto", "min", "max"):
        raise MXNetError(f"{where}: mode must be 'auto', 'min' or 'max', got {mode!r}")


def _monitor_op(monitor, mode, where):
    """The comparison by which ``monitor`` improves: ``mode`` 'max' (greater), 'min' (less)
    or 'auto' (greater for names holding 'acc' or 'f1', less otherwise). MXNet's auto test
    (``'acc' or 'f1' in name``) was always true, so it maximised losses too."""
    _check_mode(mode, where)
    if mode == "auto":
        name = str(monitor.get()[0]).lower()
        mode = "max" if ("acc" in name or "f1" in name) else "min"
    return _greater if mode == "max" else _less
