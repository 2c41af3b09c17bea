"""VGG 11/13/16/19, with or without BatchNorm ("Very Deep Convolutional Networks for
Large-Scale Image Recognition", Simonyan and Zisserman 2014), as MXNet 1.9.1 built them."""
from ....base import MXNetError
from ....context import cpu
from ....initializer import Xavier
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]


def _make_features(layers, filters, batch_norm):
    """``layers[i]`` 3x3 ReLU convolutions of ``filters[i]`` channels, then 2x2/2 max pool."""
    featurizer = nn.HybridSequential(prefix="")
    for num, channels in zip(layers, filters):
        for _ in range(num):
            featurizer.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                     weight_initializer=Xavier(rnd_type="gaussian",
                                                               factor_type="out", magnitude=2),
                                     bias_initializer="zeros"))
            if batch_norm:
                featurizer.add(nn.BatchNorm())
            featurizer.add(nn.Activation("relu"))
        featurizer.add(nn.MaxPool2D(strides=2))
    return featurizer


def _dense(units, **kwargs):
    return nn.Dense(units, weight_initializer="normal", bias_initializer="zeros", **kwargs)


class VGG(HybridBlock):
    """VGG: the convolution stages ``layers``/``filters``, two 4096-wide ReLU dense layers
    with dropout 0.5 and a ``classes``-wide output; ``batch_norm`` adds BatchNorm after each
    convolution."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise MXNetError(f"VGG: layers and filters need one entry per stage; got "
                             f"layers={list(layers)}, filters={list(filters)}")
        with self.name_scope():
            self.features = _make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(_dense(4096, activation="relu"), nn.Dropout(rate=0.5))
            self.output = _dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (convolutions per stage, channels per stage)
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """VGG of depth ``num_layers`` (11, 13, 16, 19; ``batch_norm=True`` for the BN variant);
    ``pretrained=True`` loads MXNet's published weights from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``."""
    if num_layers not in vgg_spec:
        raise MXNetError(f"get_vgg: num_layers must be one of {sorted(vgg_spec)}, "
                         f"got {num_layers!r}")
    net = VGG(*vgg_spec[num_layers], **kwargs)
    if pretrained:
        suffix = "_bn" if kwargs.get("batch_norm") else ""
        load_pretrained(net, f"vgg{num_layers}{suffix}", ctx, root)
    return net


def _constructor(depth, batch_norm):
    def build(**kwargs):
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(depth, **kwargs)
    suffix = "_bn" if batch_norm else ""
    build.__name__ = build.__qualname__ = f"vgg{depth}{suffix}"
    build.__doc__ = (f"VGG-{depth}{' with BatchNorm' if batch_norm else ''}: "
                     f"``get_vgg({depth}, {'batch_norm=True, ' if batch_norm else ''}"
                     "**kwargs)``.")
    return build


vgg11, vgg13, vgg16, vgg19 = (_constructor(d, False) for d in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_constructor(d, True) for d in (11, 13, 16, 19))
