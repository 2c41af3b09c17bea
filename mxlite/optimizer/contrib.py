"""``mx.optimizer.contrib``: MXNet 1.x's contributed optimizers (registered with the others,
so ``mx.optimizer.create('groupadagrad')`` finds them too)."""
from .optimizer import GroupAdaGrad

__all__ = ["GroupAdaGrad"]
