"""``gluon.contrib.rnn.rnn_cell``: the recurrent cells MXNet 1.x kept in contrib
(``LSTMPCell``, ``VariationalDropoutCell``, the same classes as in ``gluon.rnn``) and
``dynamic_unroll``, which runs a cell over a sequence with ``contrib.foreach`` (one loop
node in a graph instead of one copy of the cell per step)."""
import numbers

from ...rnn.rnn_cell import LSTMPCell, VariationalDropoutCell, _format_sequence, _TENSORS
from .... import ndarray as nd
from ....base import MXNetError

__all__ = ["VariationalDropoutCell", "LSTMPCell"]


def _check_rate(rate, what):
    if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0 <= rate < 1:
        raise MXNetError(f"dynamic_unroll: {what} must be a dropout rate in [0, 1), got "
                         f"{rate!r}")


def _check_valid_length(valid_length, batch_size, F):
    """``valid_length`` must be one length per sequence (checked where shapes are known)."""
    if F is nd and valid_length is not None and tuple(valid_length.shape) != (batch_size,):
        raise MXNetError(f"dynamic_unroll: valid_length must have shape (batch_size,) = "
                         f"({batch_size},), got {tuple(valid_length.shape)}")


def _state_list(cell, begin_state):
    """``begin_state`` as a list (one array is one state), as many as the cell has."""
    states = [begin_state] if isinstance(begin_state, _TENSORS) else list(begin_state)
    try:
        want = len(cell.state_info())
    except NotImplementedError:         # a user's cell without state_info: trust the call
        return states
    if len(states) != want:
        raise MXNetError(f"dynamic_unroll: {cell.name} has {want} state(s), begin_state "
                         f"gives {len(states)}")
    return states


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Run ``cell`` over every step of ``inputs`` with ``F.contrib.foreach``; returns
    ``(outputs, states)``: the outputs as one array in ``layout`` and the final states.

    ``inputs`` is one array of layout 'TNC' (the fast one) or 'NTC', or a list of per-step
    arrays; ``begin_state`` the cell's initial states (required). ``drop_inputs`` /
    ``drop_outputs`` apply dropout to the inputs / outputs with one mask per sequence,
    shared by all its steps. With ``valid_length`` (shape ``(batch,)``), each sequence's
    outputs past its length are zero and its states are those of its last valid step --
    the results of ``cell.unroll(..., valid_length=valid_length)``.

    Imperatively ``foreach`` is a Python loop; in a hybridized block it is one loop node.

    Differs from MXNet 1.9.1: MXNet's dropout masks were shared along the batch axis, not
    the time axis, for 'NTC' inputs (it passed the original time axis to ``Dropout`` after
    moving time to axis 0); here the mask is shared along time for both layouts. The cell
    is ``reset()`` first, as ``unroll`` does, so a VariationalDropoutCell draws new masks
    for each sequence.

    >>> cell = mx.gluon.rnn.GRUCell(3, input_size=2)
    >>> cell.initialize()
    >>> x = mx.nd.ones((4, 5, 2))                        # TNC: 4 steps, batch 5
    >>> outs, states = mx.gluon.contrib.rnn.rnn_cell.dynamic_unroll(
    ...     cell, x, [mx.nd.zeros((5, 3))], valid_length=mx.nd.array([4, 3, 2, 1, 4]))
    >>> outs.shape, float(outs[3, 1].abs().sum().asscalar())
    ((4, 5, 3), 0.0)
    """
    if layout not in ("TNC", "NTC"):
        raise MXNetError(f"dynamic_unroll: layout must be 'TNC' or 'NTC', got {layout!r}")
    if begin_state is None:
        raise MXNetError("dynamic_unroll: begin_state must be given (the cell's initial "
                         "states, e.g. cell.begin_state(batch_size))")
    _check_rate(drop_inputs, "drop_inputs")
    _check_rate(drop_outputs, "drop_outputs")
    inputs, axis, F, batch_size = _format_sequence(None, inputs, layout, True)
    _check_valid_length(valid_length, batch_size, F)
    if F is nd and inputs.shape[axis] == 0:
        raise MXNetError(f"dynamic_unroll: the sequence has no steps (inputs of shape "
                         f"{inputs.shape}, layout {layout})")
    if axis != 0:
        inputs = F.swapaxes(inputs, dim1=0, dim2=axis)          # time first
    cell.reset()
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(0,))
    states = _state_list(cell, begin_state)
    if valid_length is None:
        outputs, states = F.contrib.foreach(lambda x, s: cell(x, s), inputs, states)
    else:
        outputs, states = _masked_foreach(F, cell, inputs, states, valid_length)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if axis != 0:
        outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=axis)
    return outputs, states


def _masked_foreach(F, cell, inputs, states, valid_length):
    """``foreach`` with a step counter as an extra state: a sequence's states stop changing
    once the counter reaches its ``valid_length``. Returns (outputs, states)."""
    lengths = F.cast(valid_length, dtype="float32")     # the counter is float32

    def body(x, carried):
        cell_states, step = carried[:-1], carried[-1]
        out, new_states = cell(x, cell_states)
        running = F.broadcast_greater(lengths, step)        # (batch,): still inside
        kept = [F.where(running, new, old) for new, old in zip(new_states, cell_states)]
        return out, kept + [step + 1]

    device = {"ctx": inputs.context} if F is nd else {}
    counter = F.zeros(shape=(1,), dtype="float32", **device)
    outputs, carried = F.contrib.foreach(body, inputs, states + [counter])
    return outputs, carried[:-1]
