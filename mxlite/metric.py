"""Online evaluation metrics (``mx.metric``), as MXNet 1.9.1 names and computes them.

Every metric keeps two pairs of running statistics: the *local* ones (``sum_metric``,
``num_inst``), cleared by ``reset_local()`` (a training loop does this every few batches
to log a moving value), and the *global* ones (``global_sum_metric``, ``global_num_inst``),
cleared only by ``reset()``. ``get()`` reads the local value, ``get_global()`` the global one.

Labels and predictions may be NDArrays or NumPy arrays, one array or a list of them. Each
batch is reduced in the arrays' own dtype (as MXNet did); the running sums across batches
are Python floats, so a long epoch does not drift in float32.

Where MXNet 1.9.1 was wrong, mxlite differs (each class's docstring says how):
``TopKAccuracy`` with 1-D predictions, the global value of ``PearsonCorrelation(average=
'micro')``, ``get_config`` dropping ``average``/``axis`` and renaming ``TopKAccuracy``,
``CompositeEvalMetric.get_metric`` returning (not raising) its error, and out-of-range
class labels, which MXNet clipped or wrapped silently and mxlite rejects.
"""
import json
import math
import warnings
from collections import OrderedDict

import numpy

from .base import MXNetError
from .ndarray.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np",
           "create", "register", "alias", "check_label_shapes"]


# ---- input helpers ---------------------------------------------------------------------------
def _is_array(x):
    return isinstance(x, (NDArray, numpy.ndarray))


def _numpy(x, where, what):
    """``x`` (an NDArray or NumPy array) as a NumPy array; anything else is an MXNetError."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, numpy.ndarray):
        return x
    raise MXNetError(f"{where}: {what} must be an NDArray or a NumPy array, "
                     f"got {type(x).__name__}")


def _length(x, where, what):
    try:
        return len(x)
    except TypeError:
        raise MXNetError(f"{where}: {what} must be an array or a list of arrays, "
                         f"got {type(x).__name__}") from None


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that ``labels`` and ``preds`` agree, and return them.

    With ``shape=False`` their lengths (the number of arrays, or of rows) must be equal; with
    ``shape=True`` their ``.shape``. With ``wrap=True`` a single array (NDArray or NumPy) is
    returned wrapped in a list. A mismatch raises ``MXNetError`` (a ``ValueError``, as MXNet's).
    """
    where = "mx.metric.check_label_shapes"
    if shape:
        label_shape, pred_shape = tuple(labels.shape), tuple(preds.shape)
    else:
        label_shape = _length(labels, where, "labels")
        pred_shape = _length(preds, where, "preds")
    if label_shape != pred_shape:
        raise MXNetError(f"{where}: shape of labels {label_shape} does not match shape of "
                         f"predictions {pred_shape}")
    if wrap:
        labels = [labels] if _is_array(labels) else labels
        preds = [preds] if _is_array(preds) else preds
    return labels, preds


def _class_indices(label, num_classes, where):
    """``label`` (any shape) as flat int64 class indices, each in ``[0, num_classes)``.

    MXNet indexed with the raw values: negative ones wrapped around, too large ones raised an
    IndexError (or, in ``pick``, were clipped). A label outside the classes is a bad label.
    """
    flat = numpy.asarray(label).ravel()
    idx = flat.astype(numpy.int64)
    bad = (idx < 0) | (idx >= num_classes)
    if bad.any():
        raise MXNetError(f"{where}: label {flat[bad][0].item()!r} is not a class index in "
                         f"[0, {num_classes}) (predictions have {num_classes} classes)")
    return idx


# ---- registry --------------------------------------------------------------------------------
_REGISTRY = {}


def _add(name, klass):
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f"mx.metric: {klass.__module__}.{klass.__name__} replaces "
                      f"{old.__module__}.{old.__name__} registered as {name!r}", stacklevel=3)
    _REGISTRY[name] = klass


def _check_metric_class(klass, what):
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise MXNetError(f"mx.metric.{what}: expected a subclass of mx.metric.EvalMetric, "
                         f"got {klass!r}")


def register(klass):
    """Register an ``EvalMetric`` subclass under its lower-cased class name (a decorator),
    so that ``mx.metric.create(name)`` finds it."""
    _check_metric_class(klass, "register")
    _add(klass.__name__.lower(), klass)
    return klass


def alias(*aliases):
    """Decorator registering an ``EvalMetric`` subclass under extra names (``@alias('acc')``)."""
    def reg(klass):
        _check_metric_class(klass, "alias")
        for name in aliases:
            _add(name.lower(), klass)
        return klass
    return reg


def _from_json(text):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:   # RecursionError: nesting too deep
        raise MXNetError(f"mx.metric.create: invalid JSON {text[:200]!r}: "
                         f"{type(e).__name__}") from None


def _create_registered(metric, *args, **kwargs):
    """Build a registered metric from its name, a config dict or the JSON of either."""
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise MXNetError(f"mx.metric.create: extra arguments given with the instance "
                             f"{metric!r}")
        return metric
    if isinstance(metric, dict):
        return create(**metric, **kwargs)
    if not isinstance(metric, str):
        raise MXNetError(f"mx.metric.create: expected a metric name, an EvalMetric, a list or "
                         f"a function, got {type(metric).__name__}")
    if metric.lstrip().startswith(("[", "{")):
        if args or kwargs:
            raise MXNetError("mx.metric.create: extra arguments given with a JSON description")
        desc = _from_json(metric)
        if isinstance(desc, dict):
            return create(**desc)
        if isinstance(desc, list) and len(desc) == 2 and isinstance(desc[1], dict):
            return create(desc[0], **desc[1])
        raise MXNetError(f"mx.metric.create: expected a JSON object or [name, {{kwargs}}], "
                         f"got {metric[:200]!r}")
    klass = _REGISTRY.get(metric.lower())
    if klass is None:
        raise MXNetError(f"mx.metric.create: {metric!r} is not a registered metric; known: "
                         f"{sorted(_REGISTRY)} (register new ones with mx.metric.register)")
    try:
        return klass(*args, **kwargs)
    except TypeError as e:
        raise MXNetError(f"mx.metric.create: bad arguments for {klass.__name__}: {e}") from None


def create(metric, *args, **kwargs):
    """Make a metric.

    ``metric`` may be a registered name (case-insensitive, e.g. ``'acc'``, ``'f1'``,
    ``'TopKAccuracy'``; ``args``/``kwargs`` go to its constructor), an ``EvalMetric``
    (returned as it is), a list of any of these (a ``CompositeEvalMetric``), a function
    ``feval(label, pred)`` of NumPy arrays (a ``CustomMetric``), or a config from
    ``get_config()`` (a dict, or its JSON).

    >>> mx.metric.create('acc').name
    'accuracy'
    >>> mx.metric.create(['acc', 'mse']).get()
    (['accuracy', 'mse'], [nan, nan])
    """
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create_registered(metric, *args, **kwargs)


# ---- base class ------------------------------------------------------------------------------
class EvalMetric:
    """Base class of the evaluation metrics.

    Parameters
    ----------
    name : str
        The metric's display name.
    output_names, label_names : list of str, optional
        The predictions / labels that ``update_dict`` passes on (all, by default).
    has_global_stats : bool (keyword)
        Whether the subclass keeps global statistics apart from the local ones; without,
        ``get_global()`` is ``get()``.
    **kwargs
        The subclass's own settings, reported by ``get_config()``.
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The settings that rebuild this metric: ``mx.metric.create(**m.get_config())``
        (also through ``json.dumps``)."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update from name→array mappings, picking ``label_names`` / ``output_names``."""
        self.update(self._select(label, self.label_names, "label"),
                    self._select(pred, self.output_names, "pred"))

    def _select(self, mapping, names, what):
        if names is None:
            return list(mapping.values())
        missing = [n for n in names if n not in mapping]
        if missing:
            raise MXNetError(f"mx.metric.{type(self).__name__}.update_dict: {what} names "
                             f"{missing} not among {list(mapping)}")
        return [mapping[n] for n in names]

    def update(self, labels, preds):
        """Add a batch: ``labels`` and ``preds`` are arrays or lists of arrays."""
        raise NotImplementedError(f"{type(self).__name__}.update")

    def _add(self, value, count):
        """Add one batch's contribution to both the local and the global statistics."""
        value = float(value)
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def _where(self):
        return f"mx.metric.{type(self).__name__}.update"

    def reset(self):
        """Clear the local and the global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` of the local statistics (``nan`` before any update)."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` of the global statistics (``nan`` before any update)."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``get()`` as a list of ``(name, value)`` pairs."""
        return _pairs(*self.get())

    def get_global_name_value(self):
        """``get_global()`` as a list of ``(name, value)`` pairs."""
        return _pairs(*self.get_global())


def _pairs(name, value):
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns the list of names and values.

    ``metrics`` (and ``add``) take anything ``create`` does. ``get_metric(i)`` of a missing
    index raises MXNetError (MXNet 1.9.1 returned the error object instead of raising it).
    """

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Append a child metric (anything ``create`` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except (IndexError, TypeError):
            raise MXNetError(f"mx.metric.CompositeEvalMetric.get_metric: index {index!r} is "
                             f"out of range for {len(self.metrics)} metrics") from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", ()):   # reset() runs before metrics exist
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def _collect(self, read):
        names, values = [], []
        for metric in self.metrics:
            for name, value in _pairs(*read(metric)):
                names.append(name)
                values.append(value)
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


# ---- classification --------------------------------------------------------------------------
def _predicted_classes(label, pred, axis, where):
    """Class predictions: ``pred`` itself when it has the label's shape, else its argmax."""
    if pred.shape == label.shape:
        return pred
    if not -pred.ndim <= axis < pred.ndim:
        raise MXNetError(f"{where}: axis {axis} is out of range for predictions of shape "
                         f"{pred.shape} (labels {label.shape})")
    return numpy.argmax(pred, axis=axis)


@register
@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of predictions equal to the labels.

    A prediction of the label's shape is a class index; otherwise its argmax along ``axis``
    (default 1) is. Labels of any shape are flattened (a label may be 2-D).
    """

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _numpy(label, self._where(), "label")
            pred = _predicted_classes(label, _numpy(pred, self._where(), "pred"),
                                      self.axis, self._where())
            label = label.astype(numpy.int32).ravel()
            pred = pred.astype(numpy.int32).ravel()
            if label.size != pred.size:
                raise MXNetError(f"{self._where()}: {label.size} labels but {pred.size} "
                                 f"predicted classes")
            self._add((pred == label).sum(), label.size)


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the ``top_k`` highest-scored classes.

    ``top_k`` must be at least 2 (use ``Accuracy`` otherwise); the display name gets
    ``_<top_k>`` appended. Predictions are (batch, classes) scores. 1-D predictions are
    taken as predicted class indices (MXNet 1.9.1 compared the positions of its argpartition
    with the labels, a meaningless count, and left the global statistics out). ``get_config``
    reports the name without the suffix, so that ``create(**config)`` rebuilds the same name
    (MXNet's appended a second suffix).
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        if not isinstance(top_k, (int, numpy.integer)) or isinstance(top_k, bool) or top_k < 2:
            raise MXNetError(f"mx.metric.TopKAccuracy: top_k must be an integer of at least 2 "
                             f"(use Accuracy for 1), got {top_k!r}")
        super().__init__(name, top_k=int(top_k), output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.top_k = int(top_k)
        self._base_name = self.name
        self.name += f"_{self.top_k}"

    def get_config(self):
        config = super().get_config()
        config["name"] = self._base_name
        return config

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _numpy(label, self._where(), "label").astype(numpy.int32).ravel()
            pred = _numpy(pred, self._where(), "pred")
            if pred.ndim > 2:
                raise MXNetError(f"{self._where()}: predictions must be 1-D or 2-D, got shape "
                                 f"{pred.shape}")
            if pred.shape[0] != label.size:
                raise MXNetError(f"{self._where()}: {label.size} labels but predictions of "
                                 f"shape {pred.shape}")
            self._add(self._hits(label, pred), label.size)

    def _hits(self, label, pred):
        if pred.ndim == 1:
            return (pred.astype(numpy.int32) == label).sum()
        k = min(self.top_k, pred.shape[1])
        # argpartition: the k best in any order is all we need, in O(classes) per row.
        top = numpy.argpartition(pred.astype(numpy.float32), -k, axis=1)[:, -k:]
        return (top == label[:, None]).any(axis=1).sum()


class _BinaryCounts:
    """Confusion counts (tp, fp, fn, tn) of a binary classifier, local and global."""

    def __init__(self):
        self.local = numpy.zeros(4, dtype=numpy.int64)
        self.glob = numpy.zeros(4, dtype=numpy.int64)

    def add(self, label, pred, where):
        """Count one batch: ``pred`` is (batch, 2) scores, class 1 the positive one."""
        if pred.ndim != 2:
            raise MXNetError(f"{where}: predictions must be (batch, classes) scores, got "
                             f"shape {pred.shape}")
        label = label.astype(numpy.int32).ravel()
        if label.size != pred.shape[0]:
            raise MXNetError(f"{where}: {label.size} labels but predictions of shape "
                             f"{pred.shape}")
        if numpy.unique(label).size > 2:
            raise MXNetError(f"{where}: only binary classification is supported, got labels "
                             f"{numpy.unique(label)[:10].tolist()}")
        pred_pos = numpy.argmax(pred, axis=1) == 1
        label_pos = label == 1
        batch = numpy.array([(pred_pos & label_pos).sum(), (pred_pos & ~label_pos).sum(),
                             (~pred_pos & label_pos).sum(), (~pred_pos & ~label_pos).sum()])
        self.local += batch
        self.glob += batch

    def reset_local(self):
        self.local[:] = 0

    def reset(self):
        self.local[:] = 0
        self.glob[:] = 0


def _fscore(counts):
    tp, fp, fn, _ = (float(c) for c in counts)
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _matthews(counts):
    """MCC; a zero factor of the denominator counts as 1 (so a constant predictor gives 0)."""
    tp, fp, fn, tn = (float(c) for c in counts)
    if tp + fp + fn + tn == 0:
        return 0.0
    denom = 1.0
    for margin in (tp + fp, tp + fn, tn + fp, tn + fn):
        if margin != 0:
            denom *= margin
    return (tp * tn - fp * fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: a score of the binary confusion counts, averaged over batches ('macro')
    or of the counts of all batches together ('micro')."""
    _score = None   # counts -> float

    def __init__(self, name, output_names, label_names, average):
        if average not in ("macro", "micro"):
            raise MXNetError(f"mx.metric.{type(self).__name__}: average must be 'macro' or "
                             f"'micro', got {average!r}")
        self.average = average
        self._counts = _BinaryCounts()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average, has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._counts.add(_numpy(label, self._where(), "label"),
                             _numpy(pred, self._where(), "pred"), self._where())
        score = type(self)._score
        if self.average == "macro":
            self._add(score(self._counts.local), 1)
            self._counts.reset()
        else:
            total, global_total = int(self._counts.local.sum()), int(self._counts.glob.sum())
            self.sum_metric = score(self._counts.local) * total
            self.num_inst = total
            self.global_sum_metric = score(self._counts.glob) * global_total
            self.global_num_inst = global_total

    def reset(self):
        super().reset()
        self._counts.reset()

    def reset_local(self):
        super().reset_local()
        self._counts.reset_local()


@register
class F1(_BinaryMetric):
    """The F1 score (harmonic mean of precision and recall) of a binary classifier; the
    prediction is the argmax of (batch, 2) scores, class 1 is positive. ``average='macro'``
    averages the per-batch scores, ``'micro'`` scores all the counts together."""
    _score = staticmethod(_fscore)

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)


@register
class MCC(_BinaryMetric):
    """The Matthews correlation coefficient of a binary classifier (see ``F1`` for the
    inputs and ``average``); zero factors of its denominator count as 1."""
    _score = staticmethod(_matthews)

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability given to the true labels.

    ``pred`` holds probabilities along ``axis`` (default last); labels equal to
    ``ignore_label`` (``None``: none) are left out. Probabilities are floored at 1e-10.
    A label outside the classes raises MXNetError (MXNet 1.9.1 clipped it to the nearest
    class).
    """

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, axis=axis,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            loss, count = self._batch(_numpy(label, self._where(), "label").ravel(),
                                      _numpy(pred, self._where(), "pred"))
            self._add(loss, count)

    def _batch(self, label, pred):
        if not -pred.ndim <= self.axis < pred.ndim:
            raise MXNetError(f"{self._where()}: axis {self.axis} is out of range for "
                             f"predictions of shape {pred.shape}")
        probs = numpy.moveaxis(pred, self.axis, -1)
        probs = probs.reshape(-1, probs.shape[-1])
        if label.size != probs.shape[0]:
            raise MXNetError(f"{self._where()}: {label.size} labels but predictions of shape "
                             f"{pred.shape} hold {probs.shape[0]} distributions")
        keep = numpy.ones(label.size, dtype=bool)
        if self.ignore_label is not None:
            keep = label != self.ignore_label
        idx = _class_indices(label[keep], probs.shape[1], self._where())
        picked = probs[numpy.nonzero(keep)[0], idx]
        return -numpy.log(numpy.maximum(1e-10, picked)).sum(), int(keep.sum())

    def get(self):
        name, value = super().get()
        return (name, math.exp(value) if self.num_inst else value)

    def get_global(self):
        name, value = super().get_global()
        return (name, math.exp(value) if self.global_num_inst else value)


# ---- regression ------------------------------------------------------------------------------
def _columns(label, pred, where):
    """Label and prediction as broadcast-compatible arrays, 1-D ones as (n, 1) columns."""
    label = label.reshape(label.shape[0], 1) if label.ndim == 1 else label
    pred = pred.reshape(pred.shape[0], 1) if pred.ndim == 1 else pred
    try:
        numpy.broadcast_shapes(label.shape, pred.shape)
    except ValueError:
        raise MXNetError(f"{where}: labels of shape {label.shape} and predictions of shape "
                         f"{pred.shape} do not broadcast") from None
    return label, pred


class _RegressionMetric(EvalMetric):
    """A per-batch mean error, averaged over batches (each batch counts once, as in MXNet)."""

    def __init__(self, name, output_names, label_names):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _columns(_numpy(label, self._where(), "label"),
                                   _numpy(pred, self._where(), "pred"), self._where())
            self._add(self._error(label - pred), 1)


@register
class MAE(_RegressionMetric):
    """Mean absolute error, per batch, averaged over batches."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff):
        return numpy.abs(diff).mean()


@register
class MSE(_RegressionMetric):
    """Mean squared error, per batch, averaged over batches."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff):
        return (diff ** 2.0).mean()


@register
class RMSE(_RegressionMetric):
    """Root of the mean squared error, per batch, averaged over batches."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff):
        return numpy.sqrt((diff ** 2.0).mean())


class _LogLikelihoodMetric(EvalMetric):
    """Mean of ``-log(p + eps)`` of the probability ``p`` given to each sample's label."""

    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _numpy(label, self._where(), "label").ravel()
            pred = _numpy(pred, self._where(), "pred")
            if pred.ndim != 2 or pred.shape[0] != label.size:
                raise MXNetError(f"{self._where()}: predictions must be (batch, classes) "
                                 f"with batch = {label.size} labels, got shape {pred.shape}")
            idx = _class_indices(label, pred.shape[1], self._where())
            prob = pred[numpy.arange(label.size), idx]
            self._add((-numpy.log(prob + self.eps)).sum(), label.size)


@register
@alias("ce")
class CrossEntropy(_LogLikelihoodMetric):
    """Cross entropy of (batch, classes) probabilities against class-index labels."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLikelihoodMetric):
    """Negative log-likelihood of (batch, classes) probabilities and class-index labels."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


class _Comoments:
    """Count, means, sums of squared deviations and co-deviation of two series, merged batch
    by batch (Chan et al.'s pairwise update: exact, and stable where the raw sums are not)."""

    def __init__(self):
        self.n, self.mx, self.my, self.sxx, self.syy, self.sxy = 0, 0.0, 0.0, 0.0, 0.0, 0.0

    def add(self, x, y):
        m = x.size
        if m == 0:
            return
        bx, by = x.mean(), y.mean()
        dx, dy = x - bx, y - by
        n = self.n + m
        ex, ey = bx - self.mx, by - self.my
        self.sxx += float(dx @ dx) + ex * ex * self.n * m / n
        self.syy += float(dy @ dy) + ey * ey * self.n * m / n
        self.sxy += float(dx @ dy) + ex * ey * self.n * m / n
        self.mx += ex * m / n
        self.my += ey * m / n
        self.n = n

    def correlation(self):
        if self.n == 0:
            return float("nan")
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return float(numpy.float64(self.sxy) / numpy.sqrt(self.sxx * self.syy))


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels (of equal shapes, flattened).

    ``average='macro'`` averages the per-batch correlations; ``'micro'`` is the correlation
    of all the values together: since ``reset_local()`` for ``get()``, since ``reset()`` for
    ``get_global()`` (MXNet 1.9.1's global micro value was 0, and its ``reset_local`` left
    the micro statistics in place).
    """

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        if average not in ("macro", "micro"):
            raise MXNetError(f"mx.metric.PearsonCorrelation: average must be 'macro' or "
                             f"'micro', got {average!r}")
        self.average = average
        self._local, self._global = _Comoments(), _Comoments()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average, has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, shape=True)
            label = _numpy(label, self._where(), "label").ravel().astype(numpy.float64)
            pred = _numpy(pred, self._where(), "pred").ravel().astype(numpy.float64)
            if self.average == "macro":
                with numpy.errstate(divide="ignore", invalid="ignore"):
                    self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._local.add(pred, label)
                self._global.add(pred, label)
                self.num_inst += 1
                self.global_num_inst += 1

    def reset(self):
        super().reset()
        self._local, self._global = _Comoments(), _Comoments()

    def reset_local(self):
        super().reset_local()
        self._local = _Comoments()

    def get(self):
        if self.average == "macro" or self.num_inst == 0:
            return super().get()
        return (self.name, self._local.correlation())

    def get_global(self):
        if self.average == "macro" or self.global_num_inst == 0:
            return super().get_global()
        return (self.name, self._global.correlation())


# A k-class confusion matrix of float64 holds k*k entries; refuse one above 1 GiB rather than
# allocate it because of one stray huge label.
_PCC_MAX_CLASSES = 11585


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Gorodkin's R_K) of a growing confusion matrix.

    Predictions are class indices (the label's shape) or scores (argmax along axis 1). For two
    classes it equals MCC. The value is ``nan`` while a margin of the matrix is constant.
    Each ``update`` call counts once in ``num_inst``.
    """

    def __init__(self, name="pcc", output_names=None, label_names=None,
                 has_global_stats=True):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, k):
        pad = ((0, k - self.k), (0, k - self.k))
        self.lcm = numpy.pad(self.lcm, pad)
        self.gcm = numpy.pad(self.gcm, pad)
        self.k = k

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _numpy(label, self._where(), "label")
            pred = _predicted_classes(label, _numpy(pred, self._where(), "pred"), 1,
                                      self._where())
            label = label.astype(numpy.int64).ravel()
            pred = pred.astype(numpy.int64).ravel()
            if label.size != pred.size:
                raise MXNetError(f"{self._where()}: {label.size} labels but {pred.size} "
                                 f"predicted classes")
            if label.size == 0:
                continue
            low, high = min(label.min(), pred.min()), max(label.max(), pred.max())
            if low < 0 or high >= _PCC_MAX_CLASSES:
                raise MXNetError(f"{self._where()}: class index {low if low < 0 else high} "
                                 f"is outside [0, {_PCC_MAX_CLASSES})")
            if high >= self.k:
                self._grow(int(high) + 1)
            batch = numpy.bincount(pred * self.k + label, minlength=self.k * self.k)
            batch = batch.reshape(self.k, self.k)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """The mean of the predictions themselves (the outputs of a loss); labels are ignored."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        for pred in ([preds] if _is_array(preds) else preds):
            pred = _numpy(pred, self._where(), "pred")
            self._add(pred.sum(), pred.size)


@register
class Torch(Loss):
    """``Loss`` under the name 'torch' (kept for old scripts)."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """``Loss`` under the name 'caffe' (kept for old scripts)."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from a function ``feval(label, pred)`` of NumPy arrays, called per pair.

    ``feval`` returns the batch's value (counted once) or a ``(sum, count)`` pair. The name
    defaults to the function's (``custom(<lambda>)`` for a lambda). With
    ``allow_extra_outputs`` there may be more predictions than labels (an RNN's states);
    the extra ones are ignored. A custom metric has no config (``get_config`` raises).
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if not callable(feval):
            raise MXNetError(f"mx.metric.CustomMetric: feval must be callable, got "
                             f"{type(feval).__name__}")
        if name is None:
            name = getattr(feval, "__name__", type(feval).__name__)
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        else:
            labels = [labels] if _is_array(labels) else labels
            preds = [preds] if _is_array(preds) else preds
        for pred, label in zip(preds, labels):
            value = self._feval(_numpy(label, self._where(), "label"),
                                _numpy(pred, self._where(), "pred"))
            if isinstance(value, tuple):
                if len(value) != 2:
                    raise MXNetError(f"{self._where()}: {self.name} returned a tuple of "
                                     f"{len(value)}; expected (sum_metric, num_inst)")
                self._add(*value)
            else:
                self._add(value, 1)

    def get_config(self):
        raise NotImplementedError(f"mx.metric.CustomMetric {self.name!r}: a custom metric "
                                  f"cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):   # pylint: disable=invalid-name
    """A ``CustomMetric`` from a function of NumPy arrays (usable as a decorator).

    >>> @mx.metric.np
    ... def mean_abs(label, pred):
    ...     return float(abs(label - pred).mean())
    >>> mean_abs.update([mx.nd.array([1, 2])], [mx.nd.array([1, 4])])
    >>> mean_abs.get()
    ('mean_abs', 1.0)
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, "__name__", "feval")
    return CustomMetric(feval, name, allow_extra_outputs)
