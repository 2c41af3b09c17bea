"""Recurrent layers and cells (MXNet 1.x ``mx.gluon.rnn``): the fused ``RNN``, ``LSTM`` and
``GRU`` layers over the ``RNN`` operator, and the step-by-step cells with ``unroll``."""
from .rnn_cell import (RecurrentCell, HybridRecurrentCell, RNNCell, LSTMCell, GRUCell,
                       SequentialRNNCell, HybridSequentialRNNCell, DropoutCell, ModifierCell,
                       ZoneoutCell, ResidualCell, BidirectionalCell)
from .rnn_layer import RNN, LSTM, GRU
from . import rnn_cell, rnn_layer

__all__ = rnn_cell.__all__ + rnn_layer.__all__
