"""``gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``nn``: concurrent containers,
``Identity``, pixel shuffles, ``SyncBatchNorm``; ``rnn``: the extra recurrent cells;
``cnn``: the deformable convolutions)."""
from . import cnn, nn, rnn

__all__ = ["cnn", "nn", "rnn"]
