"""``gluon.contrib.rnn``: the recurrent cells MXNet 1.x kept in contrib (``LSTMPCell``,
``VariationalDropoutCell``), the same classes as in ``gluon.rnn``."""
from ..rnn.rnn_cell import LSTMPCell, VariationalDropoutCell

__all__ = ["LSTMPCell", "VariationalDropoutCell"]
