"""AlexNet ("One weird trick for parallelizing convolutional neural networks",
Krizhevsky 2014: the single-tower variant), as MXNet 1.9.1 built it."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """Five ReLU convolutions with three 3x3/2 max poolings, two 4096-wide ReLU dense layers
    with dropout 0.5, and a ``classes``-wide output layer."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                for channels, kernel, stride, pad, pool in ((64, 11, 4, 2, True),
                                                            (192, 5, 1, 2, True),
                                                            (384, 3, 1, 1, False),
                                                            (256, 3, 1, 1, False),
                                                            (256, 3, 1, 1, True)):
                    self.features.add(nn.Conv2D(channels, kernel_size=kernel, strides=stride,
                                                padding=pad, activation="relu"))
                    if pool:
                        self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(4096, activation="relu"), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """AlexNet; ``pretrained=True`` loads MXNet's published weights from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``."""
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, "alexnet", ctx, root)
    return net
