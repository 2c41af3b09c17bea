"""``gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``nn``: concurrent containers,
``Identity``, pixel shuffles, ``SyncBatchNorm``; ``rnn``: the extra recurrent cells;
``cnn``: the deformable convolutions; ``data``: IntervalSampler)."""
from . import cnn, data, nn, rnn

__all__ = ["cnn", "data", "nn", "rnn"]
