"""Small blocks the model zoo needs beyond ``gluon.nn``: MXNet took them from
``gluon.contrib.nn`` (``HybridConcurrent``, ``Identity``), which mxlite does not have yet."""
from ...block import HybridBlock
from ... import nn

__all__ = ["HybridConcurrent", "Identity", "ReLU6"]


class HybridConcurrent(nn.HybridSequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``
    (MXNet's ``gluon.contrib.nn.HybridConcurrent``)."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (MXNet's ``gluon.contrib.nn.Identity``): the pass-through branch of
    a concatenation."""

    def hybrid_forward(self, F, x):
        return x


class ReLU6(HybridBlock):
    """``min(max(x, 0), 6)``, the activation of MobileNet v2 (MXNet's ``RELU6``)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")
