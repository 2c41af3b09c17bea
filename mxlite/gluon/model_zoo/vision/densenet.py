"""DenseNet ("Densely Connected Convolutional Networks", Huang et al. 2016), as MXNet 1.9.1
built it (parameter names ``densenet0_stage1_conv0_weight``)."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained
from ....base import MXNetError
from ._blocks import HybridConcurrent, Identity

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]


def _bn_relu_conv(out, channels, kernel_size, padding=0):
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=kernel_size, padding=padding, use_bias=False))


def _make_dense_layer(growth_rate, bn_size, dropout):
    """The input concatenated with ``growth_rate`` new channels (a 1x1 bottleneck of
    ``bn_size * growth_rate`` channels, then a 3x3 convolution)."""
    new_features = nn.HybridSequential(prefix="")
    _bn_relu_conv(new_features, bn_size * growth_rate, 1)
    _bn_relu_conv(new_features, growth_rate, 3, padding=1)
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), new_features)
    return out


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    out = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features):
    """BatchNorm-ReLU-1x1 convolution to ``num_output_features``, then 2x2/2 average pool."""
    out = nn.HybridSequential(prefix="")
    _bn_relu_conv(out, num_output_features, 1)
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet: a 7x7/2 stem of ``num_init_features`` channels, dense blocks of
    ``block_config[i]`` layers each adding ``growth_rate`` channels, transitions halving the
    channels between blocks, a 7x7 average pool (224x224 input) and a dense output layer."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate,
                                                    dropout, i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_make_transition(num_features))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"),
                              nn.AvgPool2D(pool_size=7), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (stem channels, growth rate, layers per dense block)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """DenseNet of depth ``num_layers`` (121, 161, 169, 201); ``pretrained=True`` loads
    MXNet's published weights from ``root`` (default ``$MXNET_HOME/models``) onto ``ctx``."""
    if num_layers not in densenet_spec:
        raise MXNetError(f"get_densenet: num_layers must be one of {sorted(densenet_spec)}, "
                         f"got {num_layers!r}")
    net = DenseNet(*densenet_spec[num_layers], **kwargs)
    if pretrained:
        load_pretrained(net, f"densenet{num_layers}", ctx, root)
    return net


def _constructor(depth):
    def build(**kwargs):
        return get_densenet(depth, **kwargs)
    build.__name__ = build.__qualname__ = f"densenet{depth}"
    build.__doc__ = f"DenseNet-{depth}: ``get_densenet({depth}, **kwargs)``."
    return build


densenet121, densenet161, densenet169, densenet201 = (
    _constructor(d) for d in (121, 161, 169, 201))
