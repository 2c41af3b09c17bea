"""The symbolic recurrent cells of MXNet 1.x's legacy ``mx.rnn`` (before Gluon): each cell
builds ``mx.sym`` graphs one step per call, its weights are ``mx.sym.var`` variables from an
``RNNParams`` container, and ``unroll`` builds a whole sequence.

``state_info`` is a property here (Gluon's takes a batch size) whose shapes hold 0 for the
batch. ``unroll`` without ``begin_state`` takes the zero states' batch size from the data,
so the graph's shapes are inferred from the data alone.
"""
import math

from .. import symbol
from ..base import MXNetError
from ..initializer import FusedRNN, LSTMBias
from ..symbol import Symbol

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "BidirectionalCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell",
           "ConvGRUCell"]


class RNNParams:
    """The weights of cells, by name: ``get(name)`` returns the variable ``prefix + name``
    (made once, keyword arguments passed to ``mx.sym.var``), so cells built on one container
    share their weights."""

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.var(name, **kwargs)
        return self._params[name]


# ---- sequences ---------------------------------------------------------------------------------
def _check_layout(layout):
    if layout not in ("NTC", "TNC"):
        raise MXNetError(f"unroll: layout must be 'NTC' or 'TNC', got {layout!r}")
    return layout.find("T")


def _steps(length, inputs, layout):
    """``inputs`` (one Symbol in ``layout`` or a list of per-step Symbols) as a list."""
    axis = _check_layout(layout)
    if isinstance(inputs, Symbol):
        if len(inputs.list_outputs()) != 1:
            raise MXNetError("unroll: a grouped symbol is not a sequence; pass list(inputs)")
        return list(symbol.split(inputs, axis=axis, num_outputs=length, squeeze_axis=1))
    inputs = list(inputs)
    if len(inputs) != length:
        raise MXNetError(f"unroll: expected {length} step inputs, got {len(inputs)}")
    return inputs


def _merged(steps, layout, merge_outputs):
    """The per-step outputs as a list, or stacked on the layout's time axis."""
    if not merge_outputs:
        return steps
    return symbol.stack(*steps, axis=_check_layout(layout))


def _zero_states(cell, step):
    """Zero states whose batch size is the data's (``mx.sym.zeros`` of a 0 batch would be
    an empty array): a (batch,) zero from the step's data (batch first), broadcast to each
    state's shape with the batch at the state's 0 entry."""
    zero = symbol.zeros_like(symbol.sum(step, axis=0, exclude=True))      # (batch,)
    return [_broadcast_batch(zero, info["shape"]) for info in cell.state_info]


def _broadcast_batch(zero, shape):
    """The (batch,) ``zero`` broadcast to ``shape``, whose 0 entry is the batch axis."""
    if list(shape).count(0) != 1:
        raise MXNetError(f"unroll: a state shape needs exactly one 0 (the batch axis) to be "
                         f"made from the data, got {shape}; pass begin_state")
    batch_axis = list(shape).index(0)
    for axis in range(len(shape)):
        if axis != batch_axis:
            zero = symbol.expand_dims(zero, axis=axis)
    others = tuple(a for a in range(len(shape)) if a != batch_axis)
    return symbol.broadcast_axis(zero, axis=others, size=tuple(shape[a] for a in others))


# ---- the base ----------------------------------------------------------------------------------
class BaseRNNCell:
    """The base of the legacy cells: ``cell(inputs, states) -> (output, states)`` for one
    step of Symbols; subclasses define ``state_info`` and ``__call__``."""

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step counters (``unroll`` does it first)."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")

    @property
    def params(self):
        """The RNNParams container of the weights."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Shape (0 for the batch) and layout of each state."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info")

    @property
    def state_shape(self):
        """The states' shapes."""
        return [ele["shape"] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_unmodified(self):
        if self._modified:
            raise MXNetError(f"{self._prefix}: after applying a modifier cell (ZoneoutCell, "
                             "ResidualCell, ...) call the modifier cell, not its base cell")

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The initial states made by ``func`` (``mx.sym.zeros``, ``mx.sym.var``, ...) named
        ``<prefix>begin_state_<k>``."""
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unpack_weights(self, args):
        """Split the gate-stacked ``i2h``/``h2h`` weights and biases of ``args`` (a dict of
        NDArrays) into one entry per gate (``<prefix>i2h_f_weight``); a container cell
        (SequentialRNNCell, BidirectionalCell) splits its cells' weights."""
        args = dict(args)
        for cell in getattr(self, "_cells", ()):
            args = cell.unpack_weights(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``."""
        from .. import ndarray
        args = dict(args)
        for cell in getattr(self, "_cells", ()):
            args = cell.pack_weights(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [args.pop(f"{self._prefix}{group}{gate}_{kind}")
                         for gate in self._gate_names]
                args[f"{self._prefix}{group}_{kind}"] = ndarray.concat(*parts, dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """The cell over ``length`` steps of ``inputs``; returns (outputs, states), the
        outputs a list, or one Symbol in ``layout`` with ``merge_outputs=True``."""
        self.reset()
        steps = _steps(length, inputs, layout)
        states = begin_state if begin_state is not None else _zero_states(self, steps[0])
        outputs = []
        for step in steps:
            output, states = self(step, states)
            outputs.append(output)
        return _merged(outputs, layout, merge_outputs), states

    def _get_activation(self, inputs, activation, **kwargs):
        """``activation`` (an Activation act_type, or a function of a Symbol)."""
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


# ---- the gated cells ---------------------------------------------------------------------------
class _GatedCell(BaseRNNCell):
    """What RNNCell, LSTMCell and GRUCell share: the weights and the two projections."""

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias", init=i2h_bias_init)
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        """(batch, num_hidden) states, one per ``_num_states``."""
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}
                for _ in range(self._num_states)]

    _num_states = 1

    def _projections(self, inputs, h, name):
        n = len(self._gate_names) * self._num_hidden
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=n, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=h, weight=self._hW, bias=self._hB, num_hidden=n,
                                    name=f"{name}h2h")
        return i2h, h2h

    def _step_name(self):
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"


class RNNCell(_GatedCell):
    """Elman cell: ``h' = activation(W_ih x + b_ih + W_hh h + b_hh)``."""

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._projections(inputs, states[0], name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(_GatedCell):
    """LSTM cell (gates i, f, c, o); the i2h bias starts at ``forget_bias`` for f."""

    _num_states = 2

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params, i2h_bias_init=LSTMBias(forget_bias))

    @property
    def _gate_names(self):
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._projections(inputs, states[0], name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                        name=f"{name}state")
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                       name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """GRU cell (gates r, z, o): ``h' = (1 - z) * tanh(W_o x + r * (U_o h)) + z * h``."""

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(num_hidden, prefix, params)

    @property
    def _gate_names(self):
        return ("_r", "_z", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        h = states[0]
        i2h, h2h = self._projections(inputs, h, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        cand = symbol.Activation(i2h + reset * h2h, act_type="tanh", name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1. - update) * cand, update * h, name=f"{name}out")
        return next_h, [next_h]


class FusedRNNCell(BaseRNNCell):
    """All layers and steps in one ``RNN`` operator over a flat ``parameters`` variable
    (the operator's packed layout); ``unfuse()`` gives the equivalent stack of cells."""

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False, dropout=0.,
                 get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
            raise MXNetError(f"FusedRNNCell: mode must be rnn_relu, rnn_tanh, lstm or gru, got "
                             f"{mode!r}")
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._forget_bias = forget_bias
        self._parameter = self.params.get("parameters", init=FusedRNN(
            None, num_hidden, num_layers, mode, bidirectional, forget_bias))

    @property
    def state_info(self):
        """(layers * directions, batch, num_hidden) states: h (and c for lstm)."""
        n = 2 if self._mode == "lstm" else 1
        shape = ((self._bidirectional + 1) * self._num_layers, 0, self._num_hidden)
        return [{"shape": shape, "__layout__": "LNC"} for _ in range(n)]

    def __call__(self, inputs, states):
        raise MXNetError("FusedRNNCell cannot be stepped. Please use unroll")

    @property
    def _gate_names(self):
        return {"lstm": ("_i", "_f", "_c", "_o"), "gru": ("_r", "_z", "_o")}.get(self._mode,
                                                                                ("",))

    def _packed_layout(self, num_input):
        """``[(name, shape)]`` of the per-gate pieces in the ``RNN`` operator's flat
        parameter vector, in order: every layer's (and direction's) i2h then h2h weights,
        then all the i2h then h2h biases; named ``<prefix><l|r><layer>_<i2h|h2h><gate>_...``
        as the step cells of ``unfuse()``."""
        h, gates = self._num_hidden, self._gate_names
        dirs = ("l", "r") if self._bidirectional else ("l",)
        width = [num_input] + [h * len(dirs)] * (self._num_layers - 1)
        weights, biases = [], []
        for layer in range(self._num_layers):
            for d in dirs:
                for group, cols in (("i2h", width[layer]), ("h2h", h)):
                    stem = f"{self._prefix}{d}{layer}_{group}"
                    weights += [(f"{stem}{g}_weight", (h, cols)) for g in gates]
                    biases += [(f"{stem}{g}_bias", (h,)) for g in gates]
        return weights + biases

    def _num_input(self, total):
        """The input width a flat parameter vector of ``total`` elements implies."""
        h, b, g = self._num_hidden, 2 if self._bidirectional else 1, len(self._gate_names)
        rest = (self._num_layers - 1) * (b * h + h + 2)
        num_input, leftover = divmod(total, g * h * b)
        num_input -= rest + h + 2
        if leftover or num_input <= 0:
            raise MXNetError(f"FusedRNNCell.unpack_weights: {total} parameters fit no input "
                             f"width of a {self._num_layers}-layer {self._mode} with "
                             f"num_hidden={h}, bidirectional={self._bidirectional}")
        return num_input

    def unpack_weights(self, args):
        """``args`` with the flat ``<prefix>parameters`` split into one array per layer,
        direction, gate and kind (``<prefix>l0_i2h_f_weight``, ...): copies."""
        args = dict(args)
        flat = args.pop(self._parameter.name).reshape((-1,))
        start = 0
        for name, shape in self._packed_layout(self._num_input(flat.size)):
            size = math.prod(shape)
            args[name] = flat[start:start + size].reshape(shape).copy()
            start += size
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``: the pieces concatenated into
        ``<prefix>parameters``."""
        from .. import ndarray
        args = dict(args)
        first = f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"
        if first not in args:
            raise MXNetError(f"FusedRNNCell.pack_weights: no {first!r} in the arguments")
        layout = self._packed_layout(args[first].shape[1])
        args[self._parameter.name] = ndarray.concat(
            *[args.pop(name).reshape((-1,)) for name, _ in layout], dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """The ``RNN`` operator over the sequence; the states are returned with
        ``get_next_state=True`` (else an empty list)."""
        self.reset()
        axis = _check_layout(layout)
        if not isinstance(inputs, Symbol):
            inputs = symbol.stack(*_steps(length, inputs, layout), axis=axis)
        if axis == 1:
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        if begin_state is None:
            first = symbol.slice_axis(inputs, axis=0, begin=0, end=1).reshape((-3, -2))
            begin_state = _zero_states(self, first)
        rnn = symbol.RNN(inputs, self._parameter, *begin_state, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state,
                         mode=self._mode, name=f"{self._prefix}rnn")
        if self._get_next_state:
            outputs, states = rnn[0], [rnn[i] for i in range(1, len(self.state_info) + 1)]
        else:
            outputs, states = rnn, []
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        if merge_outputs is False:
            outputs = list(symbol.split(outputs, axis=axis, num_outputs=length,
                                        squeeze_axis=1))
        return outputs, states

    def unfuse(self):
        """The same network as a SequentialRNNCell of step cells (BidirectionalCell per
        layer when bidirectional, DropoutCell between layers)."""
        def make(prefix):
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=prefix, forget_bias=self._forget_bias)
            if self._mode == "gru":
                return GRUCell(self._num_hidden, prefix=prefix)
            return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=prefix)

        stack = SequentialRNNCell()
        p = self._prefix
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{p}l{i}_"), make(f"{p}r{i}_"),
                                            output_prefix=f"{p}bi_l{i}_"))
            else:
                stack.add(make(f"{p}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{p}_dropout{i}_"))
        return stack


# ---- containers and modifiers ------------------------------------------------------------------
class SequentialRNNCell(BaseRNNCell):
    """Cells stacked; the states are theirs concatenated."""

    def __init__(self, params=None):
        self._cells = []
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None

    def add(self, cell):
        """Append a cell (given this stack's parameters if the stack was made with some)."""
        self._cells.append(cell)
        if self._override_cell_params:
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        """The cells' states, in order."""
        return sum((c.state_info for c in self._cells), [])

    def begin_state(self, **kwargs):
        """The cells' initial states, in order."""
        self._check_unmodified()
        return sum((c.begin_state(**kwargs) for c in self._cells), [])

    def _split(self, states):
        p = 0
        for cell in self._cells:
            n = len(cell.state_info)
            yield cell, states[p:p + n]
            p += n

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        for cell, state in self._split(states):
            if isinstance(cell, BidirectionalCell):
                raise MXNetError("SequentialRNNCell: a BidirectionalCell cannot be stepped; "
                                 "use unroll")
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Each cell unrolled over the previous one's outputs."""
        self.reset()
        steps = _steps(length, inputs, layout)
        begin_state = begin_state if begin_state is not None else \
            _zero_states(self, steps[0])
        last = len(self._cells) - 1
        next_states = []
        for i, (cell, states) in enumerate(self._split(begin_state)):
            steps, states = cell.unroll(length, steps, begin_state=states, layout=layout,
                                        merge_outputs=merge_outputs if i == last else None)
            next_states.extend(states)
        return steps, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs; no states."""

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if not 0 <= dropout < 1:
            raise MXNetError(f"DropoutCell: dropout must be in [0, 1), got {dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self):
        """No states."""
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Dropout on the whole sequence at once when it is one Symbol."""
        self.reset()
        if isinstance(inputs, Symbol) and merge_outputs is not False:
            return self(inputs, []) if begin_state is None else self(inputs, begin_state)
        return super().unroll(length, inputs, begin_state, layout, merge_outputs)


class ModifierCell(BaseRNNCell):
    """The base of cells that wrap ``base_cell`` and change its step; the parameters are
    the base cell's."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise MXNetError(f"Cell {base_cell._prefix} is already modified. One cell cannot "
                             "be modified twice")
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        """The base cell's parameters."""
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        """The base cell's states."""
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        """The base cell's initial states."""
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class ZoneoutCell(ModifierCell):
    """Zoneout: each output/state element keeps its previous value with probability
    ``zoneout_outputs``/``zoneout_states`` in training."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise MXNetError(f"ZoneoutCell: {type(base_cell).__name__} cannot be stepped; "
                             "apply ZoneoutCell to the cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        prev = self.prev_output if self.prev_output is not None else \
            symbol.zeros_like(next_output)
        output = symbol.where(keep_new(self.zoneout_outputs, next_output), next_output,
                              prev) if self.zoneout_outputs != 0 else next_output
        if self.zoneout_states != 0:
            next_states = [symbol.where(keep_new(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self.prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input."""

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual"), \
            states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """The base cell unrolled, plus the inputs."""
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, begin_state, layout,
                                                    merge_outputs)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, Symbol) if merge_outputs is None else merge_outputs
        if merge:
            if not isinstance(inputs, Symbol):
                inputs = symbol.stack(*inputs, axis=_check_layout(layout))
            return symbol.elemwise_add(outputs, inputs), states
        steps = _steps(length, inputs, layout)
        return [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                for o, i in zip(outputs, steps)], states


class BidirectionalCell(BaseRNNCell):
    """``l_cell`` forward and ``r_cell`` backward over the sequence, outputs concatenated
    (``<output_prefix>t<k>``); only ``unroll``."""

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        self._cells = [l_cell, r_cell]
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        for cell in self._cells:
            if self._override_cell_params:
                cell.params._params.update(self.params._params)
            self.params._params.update(cell.params._params)

    def __call__(self, inputs, states):
        raise MXNetError("BidirectionalCell cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        """l_cell's states, then r_cell's."""
        return self._cells[0].state_info + self._cells[1].state_info

    def begin_state(self, **kwargs):
        """l_cell's initial states, then r_cell's."""
        self._check_unmodified()
        return self._cells[0].begin_state(**kwargs) + self._cells[1].begin_state(**kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Both directions; outputs concatenated step by step."""
        self.reset()
        steps = _steps(length, inputs, layout)
        states = begin_state if begin_state is not None else _zero_states(self, steps[0])
        l_cell, r_cell = self._cells
        n = len(l_cell.state_info)
        l_out, l_states = l_cell.unroll(length, steps, states[:n], layout, False)
        r_out, r_states = r_cell.unroll(length, list(reversed(steps)), states[n:], layout,
                                        False)
        outputs = [symbol.concat(lo, ro, dim=1, name=f"{self._output_prefix}t{i}")
                   for i, (lo, ro) in enumerate(zip(l_out, reversed(r_out)))]
        return _merged(outputs, layout, merge_outputs), l_states + r_states


# ---- convolutional cells -----------------------------------------------------------------------
def _leaky(inputs, **kwargs):
    """The convolutional cells' default activation: leaky ReLU of slope 0.2."""
    return symbol.LeakyReLU(inputs, act_type="leaky", slope=0.2, **kwargs)


class BaseConvRNNCell(BaseRNNCell):
    """What the convolutional cells (Shi et al., 2015) share: the input-to-state
    convolution (``i2h_*``) and the state-to-state one (odd ``h2h_kernel``, padded to keep
    the state's size); ``input_shape`` is one step's input shape, which fixes the states'."""

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel,
                 i2h_stride, i2h_pad, i2h_dilate, i2h_weight_initializer,
                 h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                 activation, prefix="", params=None, conv_layout="NCHW"):
        super().__init__(prefix=prefix, params=params)
        if not all(k % 2 == 1 for k in h2h_kernel):
            raise MXNetError(f"{type(self).__name__}: h2h_kernel must be odd (the state keeps "
                             f"its size), got {tuple(h2h_kernel)}")
        self._h2h_kernel, self._h2h_dilate = tuple(h2h_kernel), tuple(h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for k, d in zip(h2h_kernel, h2h_dilate))
        self._i2h = dict(kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate)
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        state = symbol.Convolution(symbol.var("data"), num_filter=num_hidden,
                                   layout=conv_layout, no_bias=True, **self._i2h)
        shape = state.infer_shape(data=tuple(input_shape))[1][0]
        self._state_shape = (0,) + tuple(shape[1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    _num_states = 1

    @property
    def state_info(self):
        """(batch, num_hidden, spatial...) states in ``conv_layout``."""
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    def _channel_axis(self):
        return self._conv_layout.find("C")

    def _conv_forward(self, inputs, states, name):
        n = self._num_hidden * len(self._gate_names)
        i2h = symbol.Convolution(inputs, self._iW, self._iB, num_filter=n,
                                 layout=self._conv_layout, name=f"{name}i2h", **self._i2h)
        h2h = symbol.Convolution(states[0], self._hW, self._hB, num_filter=n,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1,) * len(self._h2h_kernel),
                                 layout=self._conv_layout, name=f"{name}h2h")
        return i2h, h2h

    def _step_name(self):
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


def _conv_defaults(cls):
    """The convolutional cells' shared keyword defaults."""
    return dict(h2h_kernel=(3, 3), h2h_dilate=(1, 1), i2h_kernel=(3, 3), i2h_stride=(1, 1),
                i2h_pad=(1, 1), i2h_dilate=(1, 1), i2h_weight_initializer=None,
                h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                h2h_bias_initializer="zeros", activation=_leaky, params=None,
                conv_layout="NCHW", prefix=f"{cls}_")


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional Elman cell: ``h' = activation(conv_i2h(x) + conv_h2h(h))``."""

    def __init__(self, input_shape, num_hidden, **kwargs):
        super().__init__(input_shape, num_hidden, **dict(_conv_defaults("ConvRNN"), **kwargs))

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (gates i, f, c, o along the channels; ``activation`` for
    the candidate and the cell output)."""

    _num_states = 2

    def __init__(self, input_shape, num_hidden, **kwargs):
        super().__init__(input_shape, num_hidden, **dict(_conv_defaults("ConvLSTM"), **kwargs))

    @property
    def _gate_names(self):
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis(),
                                    name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(gates[2], self._activation, name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                     name=f"{name}state")
        next_h = symbol.elemwise_mul(out_gate, self._get_activation(next_c, self._activation),
                                     name=f"{name}out")
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell (gates r, z, o along the channels)."""

    def __init__(self, input_shape, num_hidden, **kwargs):
        super().__init__(input_shape, num_hidden, **dict(_conv_defaults("ConvGRU"), **kwargs))

    @property
    def _gate_names(self):
        return ("_r", "_z", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        axis = self._channel_axis()      # MXNet sliced axis 1 whatever the layout
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, axis=axis,
                                                name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, axis=axis,
                                                name=f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        cand = self._get_activation(i2h + reset * h2h, self._activation, name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1. - update) * cand, update * states[0], name=f"{name}out")
        return next_h, [next_h]
