"""MobileNet v1 ("MobileNets: Efficient Convolutional Neural Networks for Mobile Vision
Applications", Howard et al. 2017) and v2 ("Inverted Residuals and Linear Bottlenecks",
Sandler et al. 2018), as MXNet 1.9.1 built them."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained
from ._blocks import ReLU6

__all__ = ["MobileNet", "MobileNetV2", "mobilenet1_0", "mobilenet_v2_1_0", "mobilenet0_75",
           "mobilenet_v2_0_75", "mobilenet0_5", "mobilenet_v2_0_5", "mobilenet0_25",
           "mobilenet_v2_0_25", "get_mobilenet", "get_mobilenet_v2"]

RELU6 = ReLU6   # MXNet's name for the block


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    """Append a convolution without bias, BatchNorm and (when ``active``) ReLU or ReLU6."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(ReLU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """Append a depthwise 3x3 convolution and a pointwise 1x1 one."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(nn.HybridBlock):
    """MobileNet v2's inverted residual: 1x1 expansion by ``t``, depthwise 3x3 (with the
    stride), linear 1x1 projection to ``channels``; the input is added back when the shape
    is kept."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                      num_group=in_channels * t, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _scaled(widths, multiplier):
    # int() truncates, as MXNet's published weights were made with
    return [int(w * multiplier) for w in widths]


class MobileNet(HybridBlock):
    """MobileNet v1 with every width scaled by ``multiplier``, ``classes`` outputs."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        dw_channels = _scaled([32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024],
                              multiplier)
        channels = _scaled([64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2, multiplier)
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(nn.HybridBlock):
    """MobileNet v2 with every width scaled by ``multiplier`` (the last 1280-wide
    convolution only grows, never shrinks), ``classes`` outputs from a 1x1 convolution."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        in_group = _scaled([32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3,
                           multiplier)
        out_group = _scaled([16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                            + [320], multiplier)
        expansions = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                for in_c, c, t, s in zip(in_group, out_group, expansions, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _weights_name(family, multiplier):
    """The model-store name of a multiplier: ``1.0``, ``0.75``, ``0.5``, ``0.25``."""
    suffix = f"{multiplier:.2f}"
    if suffix in ("1.00", "0.50"):
        suffix = suffix[:-1]
    return f"{family}{suffix}"


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet v1 of width ``multiplier``; ``pretrained=True`` loads MXNet's published
    weights (multipliers 1.0, 0.75, 0.5, 0.25) from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, _weights_name("mobilenet", multiplier), ctx, root)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet v2 of width ``multiplier``; ``pretrained=True`` loads MXNet's published
    weights (multipliers 1.0, 0.75, 0.5, 0.25) from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, _weights_name("mobilenetv2_", multiplier), ctx, root)
    return net


def _constructor(getter, multiplier, name):
    def build(**kwargs):
        return getter(multiplier, **kwargs)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"``{getter.__name__}({multiplier}, **kwargs)``."
    return build


mobilenet1_0 = _constructor(get_mobilenet, 1.0, "mobilenet1_0")
mobilenet0_75 = _constructor(get_mobilenet, 0.75, "mobilenet0_75")
mobilenet0_5 = _constructor(get_mobilenet, 0.5, "mobilenet0_5")
mobilenet0_25 = _constructor(get_mobilenet, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _constructor(get_mobilenet_v2, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _constructor(get_mobilenet_v2, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _constructor(get_mobilenet_v2, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _constructor(get_mobilenet_v2, 0.25, "mobilenet_v2_0_25")
