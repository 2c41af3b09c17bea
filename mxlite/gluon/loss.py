"""Gluon losses (``mx.gluon.loss``): each a ``HybridBlock`` whose ``hybrid_forward(F, pred,
label, sample_weight=None)`` is registered operators alone, so a loss runs imperatively, as a
hybridized graph, and under gradients of any order.

Every loss returns one value per sample: the mean over every axis except ``batch_axis``
(KLDivLoss and TripletLoss: the sum, as MXNet).
``weight`` (a number) scales the loss; ``sample_weight`` (an array broadcastable to the
loss) weights each element, as MXNet 1.x.

Called on NDArrays, a loss checks its inputs' shapes first, so a mistake is reported by the
loss's name, its inputs' names (MXNet's: ``pred``, ``label``, ``sample_weight``, ...) and
their shapes, never by the internal operator (``pick``, ``reshape_like``, ``where``) it
happened to reach. A ``sample_weight`` must broadcast to the loss's own shape: one that
would broadcast it larger (weights of shape ``(N,)`` against a loss of shape ``(N, 1)`` give
``(N, N)``) is refused, where MXNet averaged the wrong numbers silently.
"""
import math

import numpy as np

from ..base import MXNetError
from ..ndarray import NDArray
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "HuberLoss", "HingeLoss",
           "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "CTCLoss", "SDMLLoss"]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight`` (either may be None)."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` with ``y``'s shape (same number of elements)."""
    return F.reshape_like(x, y)


# ---- input checks: the loss, the input and the shapes in every message -------------------
def _size(shape):
    return math.prod(shape)


def _fail(loss, message):
    raise MXNetError(f"{type(loss).__name__}: {message}")


def _require(loss, shapes, *names):
    for name in names:
        if name not in shapes:
            _fail(loss, f"{name} is missing")


def _check_same_size(loss, shapes, name, like):
    """``shapes[name]`` has as many elements as ``shapes[like]`` (it is reshaped like it)."""
    got, want = shapes[name], shapes[like]
    if _size(got) != _size(want):
        _fail(loss, f"{name} has shape {got} ({_size(got)} elements) but {like} has shape "
                    f"{want} ({_size(want)} elements); they must have the same number of "
                    "elements")


def _check_broadcasts_to(loss, shapes, name, target, what):
    """``shapes[name]`` (if given) broadcasts to ``target`` without enlarging it."""
    got = shapes.get(name)
    if got is None:
        return
    try:
        ok = np.broadcast_shapes(got, target) == tuple(target)
    except ValueError:
        ok = False
    if not ok:
        hint = ""
        if name == "sample_weight" and target:
            hint = f" (for one weight per sample give shape {_per_sample(loss, target)})"
        _fail(loss, f"{name} has shape {got}, which does not broadcast to {what} {target}"
                    f"{hint}")


def _per_sample(loss, shape):
    """``shape`` with every axis but the batch axis of size 1."""
    batch = loss._batch_axis % len(shape)
    return tuple(n if i == batch else 1 for i, n in enumerate(shape))


def _check_axis(loss, name, axis, shape, of="pred"):
    if not -len(shape) <= axis < len(shape):
        _fail(loss, f"{name}={axis} is out of range for {of} of shape {shape} "
                    f"({len(shape)} axes)")


class Loss(HybridBlock):
    """The base of the losses: ``weight`` (a global scale or None) and ``batch_axis`` (the
    axis kept in the result).

    A loss that sets ``_inputs`` (the names of ``hybrid_forward``'s positional inputs,
    MXNet's) has its NDArray inputs checked by ``_check_shapes`` before it runs; a user's
    subclass that does not is run as it is."""

    _inputs = None
    _numbers = ()       # inputs that may be plain numbers

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def forward(self, x, *args):
        """Check the shapes of NDArray inputs (Symbols have none yet), then compute."""
        if self._inputs is not None and isinstance(x, NDArray):
            self._check_shapes(self._shapes_of((x,) + args))
        return super().forward(x, *args)

    def _shapes_of(self, inputs):
        """``{input name: shape}`` of the inputs given (None: not given)."""
        names = self._inputs
        if len(inputs) > len(names):
            _fail(self, f"takes at most {len(names)} inputs ({', '.join(names)}), "
                        f"got {len(inputs)}")
        shapes = {}
        for name, a in zip(names, inputs):
            if a is None or (name in self._numbers and isinstance(a, (int, float))):
                continue
            if not isinstance(a, NDArray):
                _fail(self, f"{name} must be an NDArray, got {type(a).__name__}")
            shapes[name] = a.shape
        return shapes

    def _finish(self, F, loss, sample_weight, weight=None):
        """Weighting, then the mean over every axis but the batch axis."""
        loss = _apply_weighting(F, loss, self._weight if weight is None else weight,
                                sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The loss of ``x`` (each subclass defines it)."""
        raise NotImplementedError


class _ElementwiseLoss(Loss):
    """A loss of ``pred`` against a ``label`` reshaped like it, element by element."""

    _inputs = ("pred", "label", "sample_weight")

    def _check_shapes(self, shapes):
        """The usual contract: ``label`` has ``pred``'s number of elements, ``sample_weight``
        broadcasts to ``pred``'s shape, ``batch_axis`` is an axis of ``pred``."""
        _require(self, shapes, "label")
        _check_axis(self, "batch_axis", self._batch_axis, shapes["pred"])
        _check_same_size(self, shapes, "label", "pred")
        _check_broadcasts_to(self, shapes, "sample_weight", shapes["pred"], "pred's shape")


class L2Loss(_ElementwiseLoss):
    """``weight / 2 * (label - pred) ** 2`` (MXNet's default ``weight=1.``)."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        loss = F.square(_reshape_like(F, label, pred) - pred)
        return self._finish(F, loss, sample_weight, self._weight / 2)


class L1Loss(_ElementwiseLoss):
    """``|label - pred|``."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        return self._finish(F, F.abs(_reshape_like(F, label, pred) - pred), sample_weight)


class SigmoidBinaryCrossEntropyLoss(_ElementwiseLoss):
    """Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` itself with
    ``from_sigmoid=True``) against labels in [0, 1]; ``pos_weight`` (an array broadcastable
    to ``label``) weights the positive term. From logits it is computed stably:
    ``relu(x) - x * z + log(1 + exp(-|x|))``."""

    _inputs = ("pred", "label", "sample_weight", "pos_weight")

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def _check_shapes(self, shapes):
        super()._check_shapes(shapes)
        _check_broadcasts_to(self, shapes, "pos_weight", shapes["pred"], "pred's shape")

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        """The loss per sample."""
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            softplus = F.Activation(-F.abs(pred), act_type="softrelu")
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + softplus
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (softplus + F.relu(-pred))
        else:
            eps = 1e-12
            positive = F.log(pred + eps) * label
            if pos_weight is not None:
                positive = F.broadcast_mul(positive, pos_weight)
            loss = -(positive + F.log(1. - pred + eps) * (1. - label))
        return self._finish(F, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Cross-entropy of ``softmax(pred, axis)`` (``pred`` is already log-probabilities with
    ``from_logits=True``) against class indices (``sparse_label=True``) or a distribution
    of ``pred``'s shape."""

    _inputs = ("pred", "label", "sample_weight")

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis, self._sparse_label, self._from_logits = axis, sparse_label, from_logits

    def _check_shapes(self, shapes):
        """A sparse label has ``pred``'s shape without ``axis`` (or with it of size 1: the
        rule of ``pick``); a dense one ``pred``'s number of elements. ``sample_weight``
        broadcasts to the loss before averaging, ``pred``'s shape with ``axis`` of size 1."""
        _require(self, shapes, "label")
        pred = shapes["pred"]
        _check_axis(self, "axis", self._axis, pred)
        _check_axis(self, "batch_axis", self._batch_axis, pred)
        axis = self._axis % len(pred)
        kept = pred[:axis] + (1,) + pred[axis + 1:]
        if not self._sparse_label:
            _check_same_size(self, shapes, "label", "pred")
        elif shapes["label"] not in (pred[:axis] + pred[axis + 1:], kept):
            _fail(self, f"label has shape {shapes['label']}; for pred of shape {pred} and "
                        f"axis={self._axis} (class indices) it must be "
                        f"{pred[:axis] + pred[axis + 1:]} (or {kept})")
        _check_broadcasts_to(self, shapes, "sample_weight", kept, "the loss's shape")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            loss = -F.sum(pred * _reshape_like(F, label, pred), axis=self._axis, keepdims=True)
        return self._finish(F, loss, sample_weight)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """Kullback-Leibler divergence ``label * (log(label) - pred)`` summed over every axis
    but the batch axis; ``pred`` holds log-probabilities (``from_logits=True``, MXNet's
    default) or logits."""

    _inputs = ("pred", "label", "sample_weight")

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._axis = from_logits, axis

    def _check_shapes(self, shapes):
        """``label`` broadcasts to ``pred`` (it is not reshaped, as in MXNet)."""
        _require(self, shapes, "label")
        pred = shapes["pred"]
        _check_axis(self, "batch_axis", self._batch_axis, pred)
        if not self._from_logits:
            _check_axis(self, "axis", self._axis, pred)
        _check_broadcasts_to(self, shapes, "label", pred, "pred's shape")
        _check_broadcasts_to(self, shapes, "sample_weight", pred, "pred's shape")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HuberLoss(_ElementwiseLoss):
    """Smooth L1: ``0.5 / rho * d ** 2`` where ``d = |label - pred| <= rho``, else
    ``d - 0.5 * rho``."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        d = F.abs(_reshape_like(F, label, pred) - pred)
        loss = F.where(d > self._rho, d - 0.5 * self._rho, (0.5 / self._rho) * F.square(d))
        return self._finish(F, loss, sample_weight)


class HingeLoss(_ElementwiseLoss):
    """``max(0, margin - pred * label)`` for labels in {-1, 1}."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        loss = F.relu(self._margin - pred * _reshape_like(F, label, pred))
        return self._finish(F, loss, sample_weight)


class SquaredHingeLoss(HingeLoss):
    """``max(0, margin - pred * label) ** 2`` for labels in {-1, 1}."""

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        loss = F.square(F.relu(self._margin - pred * _reshape_like(F, label, pred)))
        return self._finish(F, loss, sample_weight)


class LogisticLoss(_ElementwiseLoss):
    """``log(1 + exp(-pred * label))`` for labels in {-1, 1} (``label_format='signed'``) or
    {0, 1} (``'binary'``), computed stably."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise ValueError(f"LogisticLoss: label_format must be 'signed' or 'binary', "
                             f"got {label_format!r}")
        self._label_format = label_format

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        label = _reshape_like(F, label, pred)
        if self._label_format == "binary":
            label = 2 * label - 1
        z = -pred * label
        loss = F.relu(z) + F.Activation(-F.abs(z), act_type="softrelu")
        return self._finish(F, loss, sample_weight)


class TripletLoss(Loss):
    """``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)``, the squared distances
    summed over every axis but the batch axis."""

    _inputs = ("pred", "positive", "negative", "sample_weight")

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def _check_shapes(self, shapes):
        """``positive`` and ``negative`` have ``pred``'s number of elements;
        ``sample_weight`` broadcasts to the loss, one value per sample."""
        _require(self, shapes, "positive", "negative")
        for name in ("positive", "negative"):
            _check_same_size(self, shapes, name, "pred")
        pred = shapes["pred"]
        _check_axis(self, "batch_axis", self._batch_axis, pred)
        _check_broadcasts_to(self, shapes, "sample_weight", (pred[self._batch_axis],),
                             "the loss's shape")

    def hybrid_forward(self, F, pred, positive, negative, sample_weight=None):
        """The loss per sample."""
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        gap = F.square(positive - pred) - F.square(negative - pred)
        loss = F.relu(F.sum(gap, axis=self._batch_axis, exclude=True) + self._margin)
        return _apply_weighting(F, loss, self._weight, sample_weight)


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of ``target`` under a Poisson of rate ``pred`` (or
    ``exp(pred)`` with ``from_logits=True``); ``compute_full`` adds Stirling's term for
    targets above 1 (selected with ``where``: MXNet multiplied it by the mask ``target > 1``,
    which gives NaN for a zero target). The mean over every element, as MXNet."""

    _inputs = ("pred", "target", "sample_weight", "epsilon")
    _numbers = ("epsilon",)

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._compute_full = from_logits, compute_full

    def _check_shapes(self, shapes):
        """``target`` has ``pred``'s number of elements, ``sample_weight`` broadcasts to
        ``pred`` (the batch axis is not used: the result is one mean)."""
        _require(self, shapes, "target")
        _check_same_size(self, shapes, "target", "pred")
        _check_broadcasts_to(self, shapes, "sample_weight", shapes["pred"], "pred's shape")

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        """The mean loss."""
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * 3.141592653589793)
            loss = loss + F.where(target > 1, stirling, F.zeros_like(stirling))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(a, b)`` for label 1, ``max(0, cos(a, b) - margin)`` for label -1 and 0 for
    any other label (MXNet's rule), the cosine over the last axis of ``input2``
    (``input1`` is reshaped like it): one pair per row, and 1-D inputs are one pair.
    ``label`` has one value per pair; the result has shape ``(pairs, 1)``, as MXNet's."""

    _inputs = ("input1", "input2", "label", "sample_weight")

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def _check_shapes(self, shapes):
        """``input1`` has ``input2``'s number of elements, ``label`` one value per pair
        (MXNet broadcast a 1-D pair against any number of labels; a count that differs
        from the pairs' is refused here), ``sample_weight`` broadcasts to ``(pairs, 1)``."""
        _require(self, shapes, "input2", "label")
        _check_same_size(self, shapes, "input1", "input2")
        vectors = shapes["input2"]
        if not vectors:
            _fail(self, "input2 is 0-d; give vectors along its last axis")
        pairs = _size(vectors[:-1])
        if _size(shapes["label"]) != pairs:
            _fail(self, f"label has shape {shapes['label']} but input2 of shape {vectors} "
                        f"holds {pairs} pair(s) of vectors along its last axis; give one "
                        "label per pair")
        _check_broadcasts_to(self, shapes, "sample_weight", (pairs, 1), "the loss's shape")

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        """The loss per pair, shape ``(pairs, 1)``."""
        input1 = _reshape_like(F, input1, input2)
        dot = F.sum(input1 * input2, axis=-1, keepdims=True)
        norms = (F.sqrt(F.sum(F.square(input1), axis=-1, keepdims=True))
                 * F.sqrt(F.sum(F.square(input2), axis=-1, keepdims=True)))
        # one row per pair, whatever input2's rank (a 1-D pair is one row)
        cos = F.reshape(dot / F.maximum(norms, 1e-12), shape=(-1, 1))
        label = F.reshape(label, shape=(-1, 1))
        dissimilar = F.where(label == -1, F.relu(cos - self._margin), F.zeros_like(cos))
        loss = F.where(label == 1, 1 - cos, dissimilar)
        return _apply_weighting(F, loss, self._weight, sample_weight)


class CTCLoss(Loss):
    """Connectionist temporal classification loss (the Gluon face of ``CTCLoss``), with
    MXNet's conventions: the blank is the last class (``blank_label='last'``, labels padded
    with -1), ``pred`` holds activations (softmax applied inside) in ``layout`` 'NTC' or
    'TNC', ``label`` in ``label_layout`` 'NT' or 'TN'; optional ``pred_lengths`` and
    ``label_lengths`` (N,). The result is one loss per sequence, shape (N,)."""

    _inputs = ("pred", "label", "pred_lengths", "label_lengths", "sample_weight")

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            _fail(self, f"layout must be 'NTC' or 'TNC', got {layout!r}")
        if label_layout not in ("NT", "TN"):
            _fail(self, f"label_layout must be 'NT' or 'TN', got {label_layout!r}")
        self._layout, self._label_layout = layout, label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def _check_shapes(self, shapes):
        """``pred`` is 3-D and ``label`` 2-D; the operator checks the rest (batch sizes,
        lengths, label values) and names the offending shapes."""
        _require(self, shapes, "label")
        if len(shapes["pred"]) != 3 or len(shapes["label"]) != 2:
            _fail(self, f"pred must be 3-D ({self._layout}) and label 2-D "
                        f"({self._label_layout}), got {shapes['pred']} and {shapes['label']}")

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        """The loss per sequence, shape (N,)."""
        if self._layout == "NTC":
            pred = F.swapaxes(pred, dim1=0, dim2=1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, dim1=0, dim2=1)
        lengths = {k: v for k, v in (("data_lengths", pred_lengths),
                                     ("label_lengths", label_lengths)) if v is not None}
        loss = F.CTCLoss(pred, label, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last",
                         **lengths)
        return _apply_weighting(F, loss, self._weight, sample_weight)


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss (Bonadiman et al., 2019) of two aligned batches
    of vectors: row i of ``x2`` is the positive match of row i of ``x1`` and every other row
    of the batch a negative. With ``D[i, j] = |x1[i] - x2[j]|^2``, each row's loss is the
    KL divergence from the smoothed labels (``1 - smoothing_parameter`` on the diagonal,
    ``smoothing_parameter / (batch - 1)`` elsewhere) to ``softmax(-D[i])``. Inputs
    ``x1``, ``x2`` of shape ``(batch, dim)``, batch >= 2; the result has shape
    ``(batch,)``.

    Differs from MXNet 1.9.1, whose ``weight`` had no effect (the loss was its inner
    KLDivLoss's, built without it) and which ran imperatively only (it read the shapes of
    its inputs): here ``weight`` scales the loss and the loss hybridizes. ``batch_axis``
    other than 0 is refused (MXNet accepted and ignored it).
    """

    _inputs = ("x1", "x2")

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if batch_axis != 0:
            _fail(self, f"batch_axis must be 0 (rows are the samples), got {batch_axis}")
        if not 0 <= smoothing_parameter < 1:
            _fail(self, f"smoothing_parameter must be in [0, 1), got {smoothing_parameter}")
        self.smoothing_parameter = smoothing_parameter

    def _check_shapes(self, shapes):
        """Two ``(batch, dim)`` batches of one shape, at least two rows (the labels spread
        the smoothing mass over the other ``batch - 1`` rows)."""
        _require(self, shapes, "x2")
        x1, x2 = shapes["x1"], shapes["x2"]
        if len(x1) != 2 or x1 != x2:
            _fail(self, f"x1 and x2 must be (batch, dim) arrays of one shape, got {x1} and "
                        f"{x2}")
        if x1[0] < 2:
            _fail(self, f"needs a batch of at least 2 pairs (the other rows are the "
                        f"negatives), got x1 of shape {x1}")

    def _labels(self, F, x1):
        """The smoothed identity ``(batch, batch)``, built from ``x1`` so that the batch
        size need not be known (a hybridized graph)."""
        ones = F.ones_like(F.sum(x1, axis=1))                   # (batch,)
        eye = F.diag(ones)
        others = F.broadcast_div((1 - eye) * self.smoothing_parameter, F.sum(ones) - 1)
        return eye * (1 - self.smoothing_parameter) + others

    def hybrid_forward(self, F, x1, x2):
        """The loss per row of ``x1``."""
        # |a|^2 + |b|^2 - 2 a.b: (batch, batch) memory, where differencing every pair
        # would hold (batch, batch, dim); clipped at 0 against rounding
        sq1 = F.sum(F.square(x1), axis=1, keepdims=True)
        sq2 = F.sum(F.square(x2), axis=1, keepdims=True)
        cross = F.dot(x1, x2, transpose_b=True)
        distances = F.relu(F.broadcast_add(sq1, F.transpose(sq2)) - 2 * cross)
        log_prob = F.log_softmax(-distances, axis=1)
        labels = self._labels(F, x1)
        loss = F.sum(labels * (F.log(labels + 1e-12) - log_prob), axis=1)
        return _apply_weighting(F, loss, self._weight)
