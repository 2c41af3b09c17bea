"""``gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``nn``: concurrent containers,
``Identity``, pixel shuffles, ``SyncBatchNorm``; ``rnn``: the extra recurrent cells)."""
from . import nn, rnn

__all__ = ["nn", "rnn"]
