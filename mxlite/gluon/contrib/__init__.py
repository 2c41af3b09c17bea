"""``gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``nn``: concurrent containers,
``Identity``, pixel shuffles, ``SyncBatchNorm``; ``rnn``: the extra recurrent cells;
``cnn``: the deformable convolutions; ``data``: IntervalSampler; ``estimator``: the
Estimator training loop)."""
from . import cnn, data, nn, rnn
from . import estimator

__all__ = ["cnn", "data", "estimator", "nn", "rnn"]
