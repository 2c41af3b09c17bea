"""SqueezeNet 1.0 and 1.1 ("SqueezeNet: AlexNet-level accuracy with 50x fewer parameters",
Iandola et al. 2016), as MXNet 1.9.1 built them."""
from ....base import MXNetError
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained
from ._blocks import HybridConcurrent

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]


def _fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze, expand1x1, expand3x3):
    """A fire module: a 1x1 squeeze convolution, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential(prefix="")
    out.add(_fire_conv(squeeze, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_fire_conv(expand1x1, 1), _fire_conv(expand3x3, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


# version -> (stem channels, stem kernel, the stages after the stem: a tuple of fire module
# widths (squeeze, expand) each, pooled before every stage but the first)
_SPEC = {"1.0": (96, 7, ((16, 16, 32), (32, 48, 48, 64), (64,))),
         "1.1": (64, 3, ((16, 16), (32, 32), (48, 48, 64, 64)))}


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` ('1.0' or '1.1'); the classifier is a 1x1 convolution to
    ``classes`` channels, ReLU and a 13x13 average pool (224x224 input)."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _SPEC:
            raise MXNetError(f"SqueezeNet: version must be '1.0' or '1.1', got {version!r}")
        stem_channels, stem_kernel, stages = _SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2),
                              nn.Activation("relu"))
            for stage in stages:
                self.features.add(_pool())
                for squeeze in stage:
                    self.features.add(_fire(squeeze, 4 * squeeze, 4 * squeeze))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """SqueezeNet ``version``; ``pretrained=True`` loads MXNet's published weights from
    ``root`` (default ``$MXNET_HOME/models``) onto ``ctx``."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, f"squeezenet{version}", ctx, root)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0: ``get_squeezenet('1.0', **kwargs)``."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1 (2.4x less computation than 1.0): ``get_squeezenet('1.1', **kwargs)``."""
    return get_squeezenet("1.1", **kwargs)
