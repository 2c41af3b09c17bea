"""Inception v3 ("Rethinking the Inception Architecture for Computer Vision", Szegedy et al.
2015), as MXNet 1.9.1 built it (299x299 input; parameter names ``inception30_A1_conv0_weight``)."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained
from ._blocks import HybridConcurrent

__all__ = ["Inception3", "inception_v3"]


def _basic_conv(channels, kernel_size, strides=None, padding=None):
    """Convolution without bias, BatchNorm (epsilon 0.001), ReLU. ``None`` keeps the
    convolution's default stride 1 / padding 0."""
    kwargs = {"channels": channels, "kernel_size": kernel_size}
    if strides is not None:
        kwargs["strides"] = strides
    if padding is not None:
        kwargs["padding"] = padding
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001),
            nn.Activation("relu"))
    return out


def _branch(pool, *convs):
    """An optional pool (``'avg'``: 3x3/1 padded, ``'max'``: 3x3/2), then basic
    convolutions, each ``(channels, kernel, strides, padding)``."""
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for conv in convs:
        out.add(_basic_conv(*conv))
    return out


def _concurrent(prefix, *branches):
    """The branches (made by thunks inside the scope, so they are named under ``prefix``)
    concatenated along the channels."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _split(*convs):
    """Two basic-convolution branches (1x3 and 3x1) of one input, concatenated."""
    out = HybridConcurrent(axis=1, prefix="")
    for conv in convs:
        out.add(_branch(None, conv))
    return out


def _make_A(pool_features, prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (64, 1)),
                       lambda: _branch(None, (48, 1), (64, 5, None, 2)),
                       lambda: _branch(None, (64, 1), (96, 3, None, 1), (96, 3, None, 1)),
                       lambda: _branch("avg", (pool_features, 1)))


def _make_B(prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (384, 3, 2)),
                       lambda: _branch(None, (64, 1), (96, 3, None, 1), (96, 3, 2)),
                       lambda: _branch("max"))


def _make_C(c7, prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (192, 1)),
                       lambda: _branch(None, (c7, 1), (c7, (1, 7), None, (0, 3)),
                                       (192, (7, 1), None, (3, 0))),
                       lambda: _branch(None, (c7, 1), (c7, (7, 1), None, (3, 0)),
                                       (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                                       (192, (1, 7), None, (0, 3))),
                       lambda: _branch("avg", (192, 1)))


def _make_D(prefix):
    return _concurrent(prefix,
                       lambda: _branch(None, (192, 1), (320, 3, 2)),
                       lambda: _branch(None, (192, 1), (192, (1, 7), None, (0, 3)),
                                       (192, (7, 1), None, (3, 0)), (192, 3, 2)),
                       lambda: _branch("max"))


def _stack(*make):
    """A HybridSequential (prefix '') of blocks made in order."""
    out = nn.HybridSequential(prefix="")
    for m in make:
        out.add(m())
    return out


def _make_E(prefix):
    one_by_three = ((384, (1, 3), None, (0, 1)), (384, (3, 1), None, (1, 0)))
    return _concurrent(prefix,
                       lambda: _branch(None, (320, 1)),
                       lambda: _stack(lambda: _branch(None, (384, 1)),
                                      lambda: _split(*one_by_three)),
                       lambda: _stack(lambda: _branch(None, (448, 1), (384, 3, None, 1)),
                                      lambda: _split(*one_by_three)),
                       lambda: _branch("avg", (192, 1)))


def make_aux(classes):
    """The auxiliary classifier of the paper (MXNet defines it but Inception3 does not use
    it)."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.AvgPool2D(pool_size=5, strides=3), _basic_conv(128, 1), _basic_conv(768, 5),
            nn.Flatten(), nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception v3 for 299x299 images, with a ``classes``-wide output."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_basic_conv(32, 3, 2), _basic_conv(32, 3),
                              _basic_conv(64, 3, None, 1), nn.MaxPool2D(pool_size=3, strides=2),
                              _basic_conv(80, 1), _basic_conv(192, 3),
                              nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_A(32, "A1_"), _make_A(64, "A2_"), _make_A(64, "A3_"),
                              _make_B("B_"), _make_C(128, "C1_"), _make_C(160, "C2_"),
                              _make_C(160, "C3_"), _make_C(192, "C4_"), _make_D("D_"),
                              _make_E("E1_"), _make_E("E2_"))
            self.features.add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """Inception v3; ``pretrained=True`` loads MXNet's published weights from ``root``
    (default ``$MXNET_HOME/models``) onto ``ctx``."""
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, "inceptionv3", ctx, root)
    return net
