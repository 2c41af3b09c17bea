"""Small blocks the model zoo needs beyond ``gluon.nn``: ``HybridConcurrent`` and
``Identity`` from ``gluon.contrib.nn`` (where MXNet's model zoo took them), and ``ReLU6``."""
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent, Identity

__all__ = ["HybridConcurrent", "Identity", "ReLU6"]


class ReLU6(HybridBlock):
    """``min(max(x, 0), 6)``, the activation of MobileNet v2 (MXNet's ``RELU6``)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")
