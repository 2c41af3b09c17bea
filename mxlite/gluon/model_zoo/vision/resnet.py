"""ResNet v1 ("Deep Residual Learning for Image Recognition", He et al. 2015) and v2
("Identity Mappings in Deep Residual Networks", He et al. 2016), with MXNet 1.9.1's block
structure and parameter names (``resnetv10_stage1_conv0_weight``)."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained
from ....base import MXNetError

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    """A 3x3 convolution without bias that keeps the size at stride 1."""
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _projection_v1(channels, stride, in_channels):
    """The shortcut of a v1 block that changes shape: 1x1 convolution, then BatchNorm."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels))
    out.add(nn.BatchNorm())
    return out


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with BatchNorm, added to the shortcut, then ReLU (ResNet-18/34
    v1). ``downsample`` projects the shortcut when the shape changes."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        shortcut = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + shortcut, act_type="relu")


class BottleneckV1(HybridBlock):
    """1x1 (to ``channels // 4``), 3x3, 1x1 (to ``channels``) convolutions with BatchNorm,
    added to the shortcut, then ReLU (ResNet-50/101/152 v1; the stride is on the first 1x1
    convolution, as in MXNet's weights)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        mid = channels // 4
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(mid, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(mid, 1, mid), nn.BatchNorm(),
                      nn.Activation("relu"), nn.Conv2D(channels, kernel_size=1, strides=1),
                      nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        shortcut = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + shortcut, act_type="relu")


class _PreActivation(HybridBlock):
    """What the v2 blocks share: BatchNorm-ReLU before each convolution, the projection
    shortcut taken from the first pre-activation, no activation after the sum."""

    def _shortcut(self, channels, stride, downsample, in_channels):
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        shortcut = x
        pairs = self._pairs()
        for i, (bn, conv) in enumerate(pairs):
            x = F.Activation(bn(x), act_type="relu")
            if i == 0 and self.downsample:
                shortcut = self.downsample(x)
            x = conv(x)
        return x + shortcut


class BasicBlockV2(_PreActivation):
    """Two pre-activated 3x3 convolutions plus the shortcut (ResNet-18/34 v2)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self._shortcut(channels, stride, downsample, in_channels)

    def _pairs(self):
        return [(self.bn1, self.conv1), (self.bn2, self.conv2)]


class BottleneckV2(_PreActivation):
    """Pre-activated 1x1, 3x3 (with the stride), 1x1 convolutions plus the shortcut
    (ResNet-50/101/152 v2)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        mid = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self._shortcut(channels, stride, downsample, in_channels)

    def _pairs(self):
        return [(self.bn1, self.conv1), (self.bn2, self.conv2), (self.bn3, self.conv3)]


def _check_spec(who, layers, channels):
    if len(layers) != len(channels) - 1:
        raise MXNetError(f"{who}: channels needs one entry more than layers (the stem's "
                         f"width first); got layers={list(layers)}, channels={list(channels)}")


def _stem(features, channels, thumbnail):
    """A 3x3 convolution for small images (``thumbnail``), else the 7x7/2 convolution,
    BatchNorm, ReLU and 3x3/2 max pooling of the ImageNet models."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(),
                     nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))


def _make_stage(block, num_blocks, channels, stride, stage_index, in_channels):
    """Stage ``stage_index`` (prefix ``stage<k>_``): the first block strides and projects
    when the width changes, the others keep the shape."""
    stage = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=""))
        for _ in range(num_blocks - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


class _ResNet(HybridBlock):
    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """ResNet v1: ``block`` (BasicBlockV1 or BottleneckV1) repeated ``layers[i]`` times in
    stage ``i``, ``channels`` the stem's width then each stage's; ``classes`` outputs;
    ``thumbnail`` replaces the ImageNet stem by one 3x3 convolution (CIFAR-sized images)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec("ResNetV1", layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            _stem(self.features, channels[0], thumbnail)
            for i, num_blocks in enumerate(layers):
                self.features.add(_make_stage(block, num_blocks, channels[i + 1],
                                              1 if i == 0 else 2, i + 1, channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet v2 (pre-activation): as ResNetV1 with BasicBlockV2 or BottleneckV2, a
    BatchNorm without scale and shift on the input, and BatchNorm-ReLU before pooling."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec("ResNetV2", layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _stem(self.features, channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_blocks in enumerate(layers):
                self.features.add(_make_stage(block, num_blocks, channels[i + 1],
                                              1 if i == 0 else 2, i + 1, in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                              nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


# depth -> (block kind, blocks per stage, stem width then stage widths)
resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}

resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """ResNet ``version`` (1 or 2) of depth ``num_layers`` (18, 34, 50, 101, 152);
    ``pretrained=True`` loads MXNet's published ImageNet weights from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``; other keywords go to ResNetV1/ResNetV2."""
    if num_layers not in resnet_spec:
        raise MXNetError(f"get_resnet: num_layers must be one of {sorted(resnet_spec)}, "
                         f"got {num_layers!r}")
    if version not in (1, 2):
        raise MXNetError(f"get_resnet: version must be 1 or 2, got {version!r}")
    kind, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][kind], layers,
                                           channels, **kwargs)
    if pretrained:
        load_pretrained(net, f"resnet{num_layers}_v{version}", ctx, root)
    return net


def _constructor(version, depth):
    def build(**kwargs):
        return get_resnet(version, depth, **kwargs)
    build.__name__ = build.__qualname__ = f"resnet{depth}_v{version}"
    build.__doc__ = (f"ResNet-{depth} v{version}: ``get_resnet({version}, {depth}, "
                     "**kwargs)`` (``pretrained``, ``ctx``, ``root``, ``classes``, ...).")
    return build


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (
    _constructor(1, d) for d in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (
    _constructor(2, d) for d in (18, 34, 50, 101, 152))
