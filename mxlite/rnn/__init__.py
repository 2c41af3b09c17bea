"""MXNet 1.x's legacy symbolic RNN API (``mx.rnn``): symbol-building cells with ``unroll``,
the text iterator for bucketing, and RNN checkpoints. New code should use
``mx.gluon.rnn``."""
from . import io, rnn, rnn_cell
from .io import BucketSentenceIter, encode_sentences
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .rnn_cell import (BaseConvRNNCell, BaseRNNCell, BidirectionalCell, ConvGRUCell,
                       ConvLSTMCell, ConvRNNCell, DropoutCell, FusedRNNCell, GRUCell, LSTMCell,
                       ModifierCell, ResidualCell, RNNCell, RNNParams, SequentialRNNCell,
                       ZoneoutCell)

__all__ = rnn_cell.__all__ + io.__all__ + rnn.__all__
