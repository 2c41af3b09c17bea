"""``gluon.contrib.rnn``: the recurrent cells MXNet 1.x kept in contrib -- the
convolutional RNN/LSTM/GRU cells (``conv_rnn_cell``), ``LSTMPCell`` and
``VariationalDropoutCell`` (the same classes as in ``gluon.rnn``) -- and
``rnn_cell.dynamic_unroll``."""
from . import conv_rnn_cell, rnn_cell
from .conv_rnn_cell import *        # noqa: F401,F403
from .rnn_cell import *             # noqa: F401,F403

__all__ = conv_rnn_cell.__all__ + rnn_cell.__all__
