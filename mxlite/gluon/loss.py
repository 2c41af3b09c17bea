"""Gluon losses (``mx.gluon.loss``): each a ``HybridBlock`` whose ``hybrid_forward(F, pred,
label, sample_weight=None)`` is registered operators alone, so a loss runs imperatively, as a
hybridized graph, and under gradients of any order.

Every loss returns one value per sample: the mean over every axis except ``batch_axis``
(KLDivLoss and TripletLoss: the sum, as MXNet).
``weight`` (a number) scales the loss; ``sample_weight`` (an array broadcastable to the
loss) weights each element, as MXNet 1.x.
"""
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "HuberLoss", "HingeLoss",
           "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss"]


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


class Loss(HybridBlock):
    """The base of the losses: ``weight`` (a global scale or None) and ``batch_axis`` (the
    axis kept in the result)."""

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _finish(self, F, loss, sample_weight, weight=None):
        """Weighting, then the mean over every axis but the batch axis."""
        loss = _apply_weighting(F, loss, self._weight if weight is None else weight,
                                sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The loss of ``x`` (each subclass defines it)."""
        raise NotImplementedError


class L2Loss(Loss):
    """``weight / 2 * (label - pred) ** 2`` (MXNet's default ``weight=1.``)."""

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        loss = F.square(_reshape_like(F, label, pred) - pred)
        return self._finish(F, loss, sample_weight, self._weight / 2)


class L1Loss(Loss):
    """``|label - pred|``."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        return self._finish(F, F.abs(_reshape_like(F, label, pred) - pred), sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` itself with
    ``from_sigmoid=True``) against labels in [0, 1]; ``pos_weight`` (an array broadcastable
    to ``label``) weights the positive term. From logits it is computed stably:
    ``relu(x) - x * z + log(1 + exp(-|x|))``."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

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

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis, self._sparse_label, self._from_logits = axis, sparse_label, from_logits

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

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._axis = from_logits, axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        """The loss per sample."""
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HuberLoss(Loss):
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


class HingeLoss(Loss):
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


class LogisticLoss(Loss):
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

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

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

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._compute_full = from_logits, compute_full

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
    """``1 - cos(a, b)`` for label 1 and ``max(0, cos(a, b) - margin)`` for label -1, the
    cosine over the last axis; shape ``(N, 1)`` as MXNet."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        """The loss per sample."""
        input1 = _reshape_like(F, input1, input2)
        dot = F.sum(input1 * input2, axis=-1, keepdims=True)
        norms = (F.sqrt(F.sum(F.square(input1), axis=-1, keepdims=True))
                 * F.sqrt(F.sum(F.square(input2), axis=-1, keepdims=True)))
        cos = dot / F.maximum(norms, 1e-12)
        label = F.reshape(label, shape=(-1, 1))
        loss = F.where(label == 1, 1 - cos, F.relu(cos - self._margin))
        return _apply_weighting(F, loss, self._weight, sample_weight)
