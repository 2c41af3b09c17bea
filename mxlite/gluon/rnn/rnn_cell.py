"""Recurrent cells (MXNet 1.x ``mx.gluon.rnn`` cells): one step of a recurrence per call,
``unroll`` for a whole sequence, and the cells that combine or modify other cells.

A cell maps ``(inputs, states) -> (output, new_states)`` for one time step, inputs of shape
(batch, features). ``unroll(length, inputs, layout='NTC')`` runs it over a sequence (one
array in the layout, or a list of per-step arrays) and returns the outputs as a list or, with
``merge_outputs=True``, one array; ``valid_length`` (batch,) masks padded steps to zero and
returns each sequence's last valid state.
"""
import numbers

from ... import ndarray as nd
from ... import symbol as sym
from ...base import MXNetError, _as_list
from ...ndarray import NDArray
from ...symbol import Symbol
from ..block import Block, HybridBlock, _indent
from ..nn.activations import LeakyReLU

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]

_TENSORS = (NDArray, Symbol)


# ---- sequences ---------------------------------------------------------------------------------
def _namespace(x):
    return sym if isinstance(x, Symbol) else nd


def _outputs(x):
    """The outputs of a multi-output result as a list (a Symbol group iterates over its
    outputs; one NDArray is a list of one)."""
    return list(x) if isinstance(x, Symbol) else _as_list(x)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """``inputs`` (one array in ``in_layout``, or a list of per-step arrays) as a list of
    ``length`` steps (``merge=False``), one array in ``layout`` (``merge=True``) or as given
    (``None``). Returns (inputs, time axis, F, batch size or 0)."""
    if inputs is None:
        raise MXNetError("unroll: inputs must be given (unroll(inputs=None) is not supported);"
                         " make the input variables outside unroll")
    if layout not in ("NTC", "TNC"):
        raise MXNetError(f"unroll: layout must be 'NTC' or 'TNC', got {layout!r}")
    axis, batch_axis = layout.find("T"), layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, _TENSORS):
        F = _namespace(inputs)
        if F is nd:
            if inputs.ndim < 2:
                raise MXNetError(f"unroll: inputs must have time and batch axes, got shape "
                                 f"{inputs.shape}")
            batch_size = inputs.shape[batch_axis]
            if length is not None and length != inputs.shape[in_axis]:
                raise MXNetError(f"unroll: length={length} does not match the {layout} inputs "
                                 f"of shape {inputs.shape}")
        if merge is False:
            if F is sym and len(inputs.list_outputs()) != 1:
                raise MXNetError("unroll: a grouped symbol is not a sequence; pass "
                                 "list(inputs) instead")
            steps = length if F is sym else inputs.shape[in_axis]
            return (_outputs(F.split(inputs, axis=in_axis, num_outputs=steps,
                                     squeeze_axis=1)), axis, F, batch_size)
    else:
        inputs = list(inputs)
        if not inputs or (length is not None and len(inputs) != length):
            raise MXNetError(f"unroll: expected a list of length={length} step inputs, got "
                             f"{len(inputs)}")
        F = _namespace(inputs[0])
        if F is nd:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, _TENSORS) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_padding(F, data, length, valid_length, time_axis, merge):
    """Zero the steps at or past each sequence's ``valid_length``."""
    if not isinstance(data, _TENSORS):
        data = F.stack(*data, axis=time_axis)
    out = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                         axis=time_axis)
    if not merge:
        out = _outputs(F.split(out, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return out


def _reverse_steps(steps, length, valid_length=None):
    """The list of steps reversed (each sequence within its valid length)."""
    if valid_length is None:
        return list(reversed(steps))
    F = _namespace(steps[0])
    rev = F.SequenceReverse(F.stack(*steps, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return _outputs(F.split(rev, axis=0, num_outputs=length, squeeze_axis=True))


def _begin_state(cell, F, begin_state, inputs, batch_size, layout):
    """``begin_state`` or the cell's zeros (on the inputs' context)."""
    if begin_state is not None:
        return begin_state
    if F is nd:
        first = inputs if isinstance(inputs, NDArray) else inputs[0]
        return cell.begin_state(func=nd.zeros, batch_size=batch_size, ctx=first.context)
    return _symbolic_zero_states(cell, inputs, layout)


def _symbolic_zero_states(cell, inputs, layout):
    """Zero states of a traced graph, whose batch size is the data's: ``sym.zeros`` of a
    ``(0, hidden)`` state_info shape would be a zero-size array, not an unknown batch. The
    zeros come from a (batch,) reduction of the data, zeroed and broadcast to each
    (batch, size) state; states of other ranks come from the cell's ``begin_state``."""
    infos = cell.state_info()
    if not all(len(i["shape"]) == 2 for i in infos):
        return cell.begin_state(func=sym.zeros)
    if isinstance(inputs, Symbol):
        data, batch_axis = inputs, layout.find("N")
    else:
        data, batch_axis = inputs[0], 0
    per_row = sym.expand_dims(sym.sum(data, axis=batch_axis, exclude=True), axis=1)
    zero = sym.zeros_like(per_row)                          # (batch, 1)
    cell._check_unmodified()
    return [sym.broadcast_axis(zero, axis=1, size=i["shape"][1]) for i in infos]


def _cells_state_info(cells, batch_size):
    return sum((c.state_info(batch_size) for c in cells), [])


def _cells_begin_state(cells, **kwargs):
    return sum((c.begin_state(**kwargs) for c in cells), [])


# ---- the base classes --------------------------------------------------------------------------
class RecurrentCell(Block):
    """The base of the recurrent cells: ``forward(inputs, states)`` is one step;
    subclasses define ``state_info`` and the step."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step counters (``unroll`` does it before each sequence)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """A list of dicts, one per state: ``shape``, ``__layout__``."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info")

    def _check_unmodified(self):
        if self._modified:
            raise MXNetError(f"{self.name}: after applying a modifier cell (ZoneoutCell, "
                             "ResidualCell, ...) call the modifier cell, not its base cell")

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """The initial states made by ``func`` (``mx.nd.zeros``, ``mx.sym.zeros``,
        ``mx.sym.var``, ...) from each ``state_info`` entry updated with ``kwargs``; named
        ``<prefix>begin_state_<k>``."""
        self._check_unmodified()
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` steps of ``inputs``; returns (outputs, states).

        ``merge_outputs``: True for one array in ``layout``, False for a list of steps, None
        for whichever is cheaper. With ``valid_length`` (batch,), outputs past each
        sequence's length are zero and the states are those of its last valid step."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _begin_state(self, F, begin_state, inputs, batch_size, layout)
        outputs, all_states = [], []
        for step in inputs:
            output, states = self(step, states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*per_step, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for per_step in zip(*all_states)]
            outputs = _mask_padding(F, outputs, len(inputs), valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(len(inputs), outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """``activation`` (a name, a LeakyReLU block or a callable) applied to ``inputs``."""
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation) if isinstance(activation, str) else None
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: (output, new_states)."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is a ``hybrid_forward`` (so it can be hybridized)."""

    def hybrid_forward(self, F, x, *args, **kwargs):
        """One step; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")


# ---- the gated cells ---------------------------------------------------------------------------
class _GatedCell(HybridRecurrentCell):
    """What RNNCell, LSTMCell and GRUCell share: ``i2h``/``h2h`` weights and biases of
    ``gates * hidden_size`` rows; ``input_size=0`` is inferred at the first step; the
    recurrence reads a state of ``recurrent_size`` (``hidden_size`` unless projected)."""

    _num_gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params,
                 recurrent_size=None):
        super().__init__(prefix=prefix, params=params)
        if isinstance(hidden_size, bool) or not isinstance(hidden_size, int) or hidden_size < 1:
            raise MXNetError(f"{type(self).__name__}: hidden_size must be a positive integer, "
                             f"got {hidden_size!r}")
        self._hidden_size = hidden_size
        self._input_size = input_size
        gh = self._num_gates * hidden_size
        for name, shape, init in (("i2h_weight", (gh, input_size), i2h_weight_initializer),
                                  ("h2h_weight", (gh, recurrent_size or hidden_size),
                                   h2h_weight_initializer),
                                  ("i2h_bias", (gh,), i2h_bias_initializer),
                                  ("h2h_bias", (gh,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        """``_num_states`` states of shape (batch_size, hidden_size)."""
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}
                for _ in range(self._num_states)]

    _num_states = 1

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]})"

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        n = self._num_gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + "h2h")
        return i2h, h2h


class RNNCell(_GatedCell):
    """Elman cell: ``h' = activation(W_ih x + b_ih + W_hh h + b_hh)``; output h'.

    >>> cell = mx.gluon.rnn.RNNCell(3, input_size=2)
    >>> cell.initialize()
    >>> out, states = cell(mx.nd.ones((4, 2)), cell.begin_state(batch_size=4))
    >>> out.shape
    (4, 3)
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        self._activation = activation
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return super().__repr__()[:-1] + f", {self._activation})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + "plus0"),
                                      self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    """LSTM cell, gates (i, f, g, o) in MXNet's order along the weights' rows:
    ``c' = f * c + i * g``, ``h' = o * activation(c')`` with ``recurrent_activation`` on
    i, f, o. States ``[h, c]``; output h'.

    >>> cell = mx.gluon.rnn.LSTMCell(3)
    >>> cell.initialize()
    >>> outs, states = cell.unroll(5, mx.nd.ones((2, 5, 4)), merge_outputs=True)
    >>> outs.shape, len(states)
    ((2, 5, 3), 2)
    """

    _num_gates = 4
    _num_states = 2

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + "plus0"), num_outputs=4,
                               name=prefix + "slice")
        rec, act = self._recurrent_activation, self._activation
        in_gate = self._get_activation(F, gates[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, gates[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, gates[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, act,
                                                               name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """GRU cell, gates (r, z, n) in MXNet's order: ``r = sigmoid(.)``, ``z = sigmoid(.)``,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    >>> cell = mx.gluon.rnn.GRUCell(3)
    >>> cell.initialize()
    >>> cell(mx.nd.ones((2, 4)), [mx.nd.zeros((2, 3))])[0].shape
    (2, 3)
    """

    _num_gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        h = states[0]
        i2h, h2h = self._projections(F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                                     prefix)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset = F.Activation(F.elemwise_add(i2h_r, h2h_r), act_type="sigmoid",
                             name=prefix + "r_act")
        update = F.Activation(F.elemwise_add(i2h_z, h2h_z), act_type="sigmoid",
                              name=prefix + "z_act")
        cand = F.Activation(F.elemwise_add(i2h_n, F.elemwise_mul(reset, h2h_n)),
                            act_type="tanh", name=prefix + "h_act")
        keep = F.elemwise_sub(F.ones_like(update), update)
        next_h = F.elemwise_add(F.elemwise_mul(keep, cand), F.elemwise_mul(update, h),
                                name=prefix + "out")
        return next_h, [next_h]


# ---- stacks ------------------------------------------------------------------------------------
class _CellStack:
    """What SequentialRNNCell and HybridSequentialRNNCell share: cells run one after
    another, each on its slice of the states."""

    def __repr__(self):
        mods = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{mods}\n)"

    def add(self, cell):
        """Append a cell."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        """The cells' states, in order."""
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        """The cells' initial states, in order."""
        self._check_unmodified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def _split_states(self, states):
        """Each cell with its slice of ``states``."""
        p = 0
        for cell in self._children.values():
            n = len(cell.state_info())
            yield cell, states[p:p + n]
            p += n

    def __call__(self, inputs, states):
        """One step through every cell."""
        self._counter += 1
        next_states = []
        for cell, state in self._split_states(states):
            if isinstance(cell, BidirectionalCell):
                raise MXNetError(f"{self.name}: a BidirectionalCell cannot be stepped; use "
                                 "unroll")
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Each cell unrolled over the previous one's outputs (see RecurrentCell.unroll)."""
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        if begin_state is None and F is sym:
            # each cell shapes its zero states from its own inputs in the graph (a
            # convolutional cell's are not (batch, hidden): only the cell knows them)
            per_cell = [(cell, None) for cell in self._children.values()]
        else:
            per_cell = self._split_states(_begin_state(self, F, begin_state, inputs,
                                                       batch_size, layout))
        last = len(self._children) - 1
        next_states = []
        for i, (cell, states) in enumerate(per_cell):
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=merge_outputs if i == last else None,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_CellStack, RecurrentCell):
    """Cells stacked (any RecurrentCell); the states are the cells' states concatenated.

    >>> stack = mx.gluon.rnn.SequentialRNNCell()
    >>> with stack.name_scope():
    ...     stack.add(mx.gluon.rnn.LSTMCell(4))
    ...     stack.add(mx.gluon.rnn.GRUCell(3))
    >>> stack.initialize()
    >>> out, states = stack.unroll(2, mx.nd.ones((5, 2, 6)), merge_outputs=True)
    >>> out.shape, [s.shape for s in states]
    ((5, 2, 3), [(5, 4), (5, 4), (5, 3)])
    """


class HybridSequentialRNNCell(_CellStack, HybridRecurrentCell):
    """Hybrid cells stacked; the states are the cells' states concatenated."""

    def hybrid_forward(self, F, inputs, states):
        """One step through every cell."""
        return self.__call__(inputs, states)


# ---- cells without parameters, modifiers, bidirectional ---------------------------------------
class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (rate ``rate``, mask shared along ``axes``); no states.

    >>> cell = mx.gluon.rnn.DropoutCell(0.5)
    >>> cell(mx.nd.ones((2, 3)), [])[0].asnumpy().tolist()   # identity outside training
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate < 1:
            raise MXNetError(f"DropoutCell: rate must be a number in [0, 1), got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        """No states."""
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        """Dropout on the inputs; the states pass through."""
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Dropout on the whole sequence at once when it is one array."""
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, _TENSORS):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """The base of the cells that wrap another cell (``base_cell``) and change its step;
    its parameters are the base cell's. A cell can be modified once, and is then called
    through its modifier only."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise MXNetError(f"Cell {base_cell.name} is already modified. One cell cannot be "
                             "modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        """The base cell's parameters."""
        return self.base_cell.params

    def state_info(self, batch_size=0):
        """The base cell's states."""
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=nd.zeros, **kwargs):
        """The base cell's initial states. ``func`` defaults to ``mx.nd.zeros``, as for
        every other cell (MXNet 1.x defaulted to ``mx.sym.zeros`` here only)."""
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        """One step; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell})"


def _is_bidirectional(cell):
    return isinstance(cell, BidirectionalCell) or (
        isinstance(cell, _CellStack) and any(map(_is_bidirectional, cell._children.values())))


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): in training each output and state element keeps its
    previous value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if _is_bidirectional(base_cell):
            raise MXNetError("ZoneoutCell: a bidirectional cell cannot be stepped; apply "
                             "ZoneoutCell to the cells inside it instead")
        for name, p in (("zoneout_outputs", zoneout_outputs),
                        ("zoneout_states", zoneout_states)):
            if not 0 <= p < 1:
                raise MXNetError(f"ZoneoutCell: {name} must be in [0, 1), got {p!r}")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        """Restart the counters and forget the previous output."""
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        """The base step, then each element zoned out to its previous value."""
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            # Dropout of ones: nonzero (keep the new value) with probability 1 - p in
            # training, all ones outside it
            return F.Dropout(F.ones_like(like), p=p)

        prev = self._prev_output if self._prev_output is not None else \
            F.zeros_like(next_output)
        output = F.where(keep_new(self.zoneout_outputs, next_output), next_output, prev) \
            if self.zoneout_outputs != 0 else next_output
        if self.zoneout_states != 0:
            next_states = [F.where(keep_new(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """A residual connection (Wu et al., 2016): the output is the base cell's output plus
    the input (which must have as many features)."""

    def hybrid_forward(self, F, inputs, states):
        """The base step plus its input."""
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """The base cell unrolled, plus the (masked) inputs."""
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, _TENSORS) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge)
        if valid_length is not None:
            inputs = _mask_padding(F, inputs, length, valid_length, axis, merge)
        if merge:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """``l_cell`` run forward and ``r_cell`` backward over the sequence, their outputs
    concatenated on the feature axis; only ``unroll`` (a step has no backward direction).
    States: ``l_cell``'s then ``r_cell``'s.

    >>> bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(3, prefix='l_'),
    ...                                     mx.gluon.rnn.GRUCell(2, prefix='r_'))
    >>> bi.initialize()
    >>> bi.unroll(4, mx.nd.ones((5, 4, 6)), merge_outputs=True)[0].shape
    (5, 4, 5)
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise MXNetError("BidirectionalCell cannot be stepped. Please use unroll")

    def __repr__(self):
        return (f"{type(self).__name__}(forward={self._children['l_cell']}, "
                f"backward={self._children['r_cell']})")

    def state_info(self, batch_size=0):
        """l_cell's states, then r_cell's."""
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        """l_cell's initial states, then r_cell's."""
        self._check_unmodified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Both directions over the sequence (each sequence reversed within its
        ``valid_length``); see RecurrentCell.unroll."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        length = len(inputs)
        reversed_inputs = _reverse_steps(inputs, length, valid_length)
        states = _begin_state(self, F, begin_state, inputs, batch_size, layout)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=False,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        r_outputs = _reverse_steps(r_outputs, length, valid_length)
        outputs = [F.concat(l_o, r_o, dim=1, name=f"{self._output_prefix}t{i}")
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if valid_length is not None:
            # merged, as RecurrentCell.unroll's masked outputs (merge_outputs=None keeps it)
            outputs = _mask_padding(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, l_states + r_states


# ---- MXNet's gluon.contrib.rnn cells (built on the cells above) --------------------------------
class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani, 2016) around ``base_cell``: one dropout
    mask per sequence (made at its first step, kept until ``reset``/the next ``unroll``) on
    the inputs (``drop_inputs``), the first state h (``drop_states``) and the outputs
    (``drop_outputs``). MXNet 1.x has it as ``gluon.contrib.rnn.VariationalDropoutCell``."""

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and _is_bidirectional(base_cell):
            raise MXNetError("VariationalDropoutCell: a bidirectional cell has no step for "
                             "state dropout; wrap the cells inside it instead")
        for name, p in (("drop_inputs", drop_inputs), ("drop_states", drop_states),
                        ("drop_outputs", drop_outputs)):
            if not 0 <= p < 1:
                raise MXNetError(f"VariationalDropoutCell: {name} must be in [0, 1), got "
                                 f"{p!r}")
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = (drop_inputs, drop_states,
                                                                 drop_outputs)
        self._masks = {}

    def _alias(self):
        return "vardrop"

    def reset(self):
        """Restart the counters; the next step makes new masks."""
        super().reset()
        self._masks = {}

    def __repr__(self):
        return (f"{type(self).__name__}(p_out = {self.drop_outputs}, "
                f"p_state = {self.drop_states})")

    def _mask(self, F, which, p, like):
        """The sequence's mask for ``which`` (ones dropped with rate p), made once."""
        if which not in self._masks:
            self._masks[which] = F.Dropout(F.ones_like(like), p=p)
        return self._masks[which]

    def hybrid_forward(self, F, inputs, states):
        """The base step on masked inputs and h; masked outputs."""
        if self.drop_states:
            states = [states[0] * self._mask(F, "states", self.drop_states, states[0])] + \
                list(states[1:])
        if self.drop_inputs:
            inputs = inputs * self._mask(F, "inputs", self.drop_inputs, inputs)
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            output = output * self._mask(F, "outputs", self.drop_outputs, output)
        return output, next_states


class LSTMPCell(_GatedCell):
    """LSTM cell with a projection (Sak et al., 2014): ``c' = f * c + i * g``, ``r' =
    W_hr (o * tanh(c'))`` of ``projection_size``; states ``[r, c]``, output r'. The
    recurrence reads r, so ``h2h_weight`` is (4 * hidden_size, projection_size). MXNet 1.x
    has it as ``gluon.contrib.rnn.LSTMPCell``."""

    _num_gates = 4

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        self._projection_size = projection_size
        # the recurrence reads r: h2h_weight is (4H, P)
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params,
                         recurrent_size=projection_size)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer,
                                          allow_deferred_init=True)

    def _alias(self):
        return "lstmp"

    def state_info(self, batch_size=0):
        """r (batch, projection_size) and c (batch, hidden_size)."""
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h), num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(gates[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1]),
                                F.elemwise_mul(in_gate, in_transform), name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                name=prefix + "hidden")
        next_r = F.FullyConnected(hidden, h2r_weight, num_hidden=self._projection_size,
                                  no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]
