"""``mx.optimizer.contrib``: MXNet 1.x's contributed optimizers (registered with the others,
so ``mx.optimizer.create('groupadagrad')`` finds them too)."""
import math

from .. import ndarray as nd
from ..base import MXNetError
from .optimizer import Optimizer, _check_range, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-D weight (MXNet's
    ``mx.optimizer.contrib.GroupAdaGrad``); state: the ``(rows, 1)`` history::

        grad = clip(rescale_grad * grad, clip_gradient)
        history += mean(grad**2, axis=1, keepdims=True)
        weight -= lr * grad / sqrt(history + eps)

    Weight decay is not supported: a non-zero ``wd`` for a weight raises MXNetError.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        _check_range("GroupAdaGrad", "eps", eps, 0.0, math.inf)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if weight.ndim != 2:
            raise MXNetError(f"GroupAdaGrad: weight {index!r} must be 2-D (rows share a "
                             f"learning rate), got shape {weight.shape}")
        return nd.zeros((weight.shape[0], 1), ctx=weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd = self._common(index, weight, grad)
        if wd != 0:
            raise MXNetError(f"GroupAdaGrad: weight decay is not supported, got wd={wd} for "
                             f"weight {index!r}")
        grad = self._clipped(grad * self.rescale_grad)
        state += nd.mean(nd.square(grad), axis=1, keepdims=True)
        weight -= lr * grad / nd.sqrt(state + self.float_stable_eps)
