"""The fused recurrent layers (MXNet 1.x ``mx.gluon.rnn.RNN``, ``LSTM``, ``GRU``): one block
over the registered ``RNN`` operator for the whole stack of layers and directions.

Each layer and direction holds its own parameters, named as MXNet names them
(``l0_i2h_weight``, ``r1_h2h_bias``, ``l0_h2r_weight``); ``hybrid_forward`` flattens them and
packs them into the operator's one parameter vector in the operator's order (every weight,
then every bias; within each, layer by layer, forward direction first, ``i2h`` before
``h2h`` before ``h2r``). ``save_parameters`` writes the keys MXNet 1.x writes
(``_unfused.0.i2h_weight``; ``_unfused.0.l_cell.i2h_weight`` when bidirectional), so
parameter files move between MXNet and mxlite both ways.
"""
import re

from ... import ndarray as nd
from ... import symbol as sym
from ...base import MXNetError
from ...ndarray import NDArray
from ...symbol import Symbol
from ..block import HybridBlock
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_PARAM_KEY = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")


def _check_positive_int(layer, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MXNetError(f"{layer}: {name} must be a positive integer, got {value!r}")


class _RNNLayer(HybridBlock):
    """What RNN, LSTM and GRU share: the parameters, the states, the call and the packing."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise MXNetError(f"{name}: invalid layout {layout!r}; must be 'TNC' or 'NTC'")
        _check_positive_int(name, "hidden_size", hidden_size)
        _check_positive_int(name, "num_layers", num_layers)
        if not 0 <= dropout < 1:
            raise MXNetError(f"{name}: dropout must be in [0, 1), got {dropout!r}")
        if projection_size:
            _check_positive_int(name, "projection_size", projection_size)
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self._gates = _GATES[mode]
        inits = {"i2h_weight": i2h_weight_initializer, "h2h_weight": h2h_weight_initializer,
                 "i2h_bias": i2h_bias_initializer, "h2h_bias": h2h_bias_initializer,
                 "h2r_weight": h2r_weight_initializer}
        ni = input_size
        for layer in range(num_layers):
            for d in self._directions():
                for key, shape in self._param_shapes(ni).items():
                    self._register_param(f"{d}{layer}_{key}", shape, inits[key], dtype)
            ni = self._output_size() * self._dir

    def _directions(self):
        return ["l", "r"][:self._dir]

    def _output_size(self):
        """The size of each direction's output and recurrent state h (P with a projection)."""
        return self._projection_size or self._hidden_size

    def _param_shapes(self, ni):
        """The shapes of one layer-direction's parameters for input size ``ni``."""
        gh = self._gates * self._hidden_size
        shapes = {"i2h_weight": (gh, ni), "h2h_weight": (gh, self._output_size()),
                  "i2h_bias": (gh,), "h2h_bias": (gh,)}
        if self._projection_size:
            shapes["h2r_weight"] = (self._projection_size, self._hidden_size)
        return shapes

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=dtype)
        setattr(self, name, p)

    def _packing_order(self):
        """Parameter names in the order of the RNN operator's flat ``parameters``."""
        gates = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        names = [f"{d}{layer}_{g}_weight" for layer in range(self._num_layers)
                 for d in self._directions() for g in gates]
        return names + [f"{d}{layer}_{g}_bias" for layer in range(self._num_layers)
                        for d in self._directions() for g in ("i2h", "h2h")]

    def __repr__(self):
        text = f"{type(self).__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            text += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            text += f", dropout={self._dropout}"
        if self._dir == 2:
            text += ", bidirectional"
        shape = self.l0_i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return text.format(mapping=mapping) + ")"

    def _collect_params_with_prefix(self, prefix=""):
        """MXNet 1.x's keys for parameter files: ``_unfused.<layer>.<gate>_<kind>``, with
        ``l_cell``/``r_cell`` between them when bidirectional (the names of the unfused
        stack of cells these layers once were)."""
        if prefix:
            prefix += "."
        ret = {}
        for key, val in self._reg_params.items():
            d, layer, gate, kind = _PARAM_KEY.match(key).groups()
            cell = f"{d}_cell." if self._dir == 2 else ""
            ret[f"{prefix}_unfused.{layer}.{cell}{gate}_{kind}"] = val
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def _unfuse(self):
        """The same network as a HybridSequentialRNNCell of cells sharing this layer's
        parameters (BidirectionalCell per layer when bidirectional, DropoutCell between
        layers); no projection or state clipping."""
        if self._projection_size or self._lstm_state_clip_min is not None:
            raise MXNetError(f"{self.name}: _unfuse supports neither projection_size nor "
                             "state clipping")
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for layer in range(self._num_layers):
                cells = [self._unfused_cell(f"{d}{layer}_", ni) for d in self._directions()]
                stack.add(cells[0] if self._dir == 1 else rnn_cell.BidirectionalCell(*cells))
                if self._dropout > 0 and layer != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def _unfused_cell(self, prefix, input_size):
        """The cell of one layer and direction (its parameters found by name)."""
        if self._mode == "lstm":
            return rnn_cell.LSTMCell(self._hidden_size, input_size=input_size, prefix=prefix)
        if self._mode == "gru":
            return rnn_cell.GRUCell(self._hidden_size, input_size=input_size, prefix=prefix)
        return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:],
                                input_size=input_size, prefix=prefix)

    def cast(self, dtype):
        """Cast the parameters; the default states take the new dtype too."""
        super().cast(dtype)
        self._dtype = dtype

    def state_info(self, batch_size=0):
        """Shape, layout and dtype of each state: ``(num_layers * directions, batch, size)``."""
        raise NotImplementedError

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """The initial states, made by ``func`` (``mx.nd.zeros``, ``mx.sym.zeros``,
        ``mx.sym.var``, ...) from each ``state_info`` entry updated with ``kwargs``
        (``ctx``, ``dtype``); named ``<prefix>h0_<i>``."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info.update(kwargs)
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def infer_shape(self, inputs, *args):
        """The first layer's ``i2h`` weights take the input's feature size (C of the
        layout)."""
        ni = inputs.shape[self._layout.find("C")]
        if not ni:
            raise MXNetError(f"{self.name}: cannot infer the input size from an input of "
                             f"shape {inputs.shape}")
        for d in self._directions():
            getattr(self, f"{d}0_i2h_weight").shape = (self._gates * self._hidden_size, ni)

    def __call__(self, inputs, states=None, sequence_length=None):
        """``layer(inputs)`` returns the output; ``layer(inputs, states)`` returns
        ``(output, new_states)``. With ``use_sequence_length=True``, ``sequence_length``
        (batch,) gives each sequence's valid length."""
        skip_states = states is None
        if skip_states:
            states = self._default_states(inputs)
        if isinstance(states, (NDArray, Symbol)):
            states = [states]
        if self._use_sequence_length:
            if sequence_length is None:
                raise MXNetError(f"{self.name}: use_sequence_length=True needs the "
                                 "sequence_length argument")
            out = super().__call__(inputs, states, sequence_length)
        else:
            if sequence_length is not None:
                raise MXNetError(f"{self.name}: sequence_length was given but the layer was "
                                 "made with use_sequence_length=False")
            out = super().__call__(inputs, states)
        # the graph always returns the states (so a cached graph serves both kinds of call)
        return out[0] if skip_states else out

    def _default_states(self, inputs):
        if isinstance(inputs, NDArray):
            if inputs.ndim != 3:
                raise MXNetError(f"{self.name}: inputs must be 3-d ({self._layout}), got shape "
                                 f"{inputs.shape}")
            batch_size = inputs.shape[self._layout.find("N")]
            return self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
        return self._symbolic_zero_states(inputs)

    def _symbolic_zero_states(self, inputs):
        """Zero states for a Symbol input, their batch size taken from it: one element per
        sequence of the data, zeroed, broadcast to each state's shape (``sym.zeros`` would
        need the batch size, which a traced graph does not know)."""
        t_axis, c_axis = self._layout.find("T"), self._layout.find("C")
        one = sym.slice_axis(sym.slice_axis(inputs, axis=t_axis, begin=0, end=1),
                             axis=c_axis, begin=0, end=1)
        if self._layout == "NTC":
            one = sym.swapaxes(one, dim1=0, dim2=1)
        zero = sym.zeros_like(one)                      # (1, N, 1)
        return [sym.broadcast_axis(zero, axis=(0, 2), size=(info["shape"][0],
                                                            info["shape"][2]))
                for info in self.state_info()]

    def _check_states(self, inputs, states):
        if len(states) != len(self.state_info()):
            raise MXNetError(f"{self.name}: expected {len(self.state_info())} states, got "
                             f"{len(states)}")
        if inputs.ndim != 3:
            raise MXNetError(f"{self.name}: inputs must be 3-d ({self._layout}), got shape "
                             f"{inputs.shape}")
        batch_size = inputs.shape[self._layout.find("N")]
        for state, info in zip(states, self.state_info(batch_size)):
            if state.shape != info["shape"]:
                raise MXNetError(f"{self.name}: invalid recurrent state shape; expected "
                                 f"{info['shape']}, got {state.shape}")

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **params):
        """The fused ``RNN`` operator on the packed parameters; returns ``(output,
        states)``."""
        if F is nd:
            self._check_states(inputs, states)
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        packed = F._internal._rnn_param_concat(
            *[params[name].reshape(-1) for name in self._packing_order()], dim=0)
        args = list(states) + ([sequence_length] if self._use_sequence_length else [])
        rnn = F.RNN(inputs, packed, *args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs = rnn[0]
        new_states = [rnn[1], rnn[2]] if self._mode == "lstm" else [rnn[1]]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, new_states

    def _state(self, batch_size, size):
        return {"shape": (self._num_layers * self._dir, batch_size, size),
                "__layout__": "LNC", "dtype": self._dtype}


class RNN(_RNNLayer):
    """A stack of Elman RNN layers: ``h_t = act(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)``
    with ``activation`` 'relu' (the default, as MXNet's) or 'tanh'.

    Inputs: ``data`` of shape (T, N, C) for layout 'TNC' ((N, T, C) for 'NTC'), and
    optionally ``states``: one array (num_layers * directions, N, hidden_size). Output:
    (T, N, directions * hidden_size) in the same layout, and the new states when states
    were given. ``dropout`` applies between layers (not after the last).

    >>> layer = mx.gluon.rnn.RNN(6, num_layers=2, activation='tanh')
    >>> layer.initialize()
    >>> out, h = layer(mx.nd.ones((5, 3, 4)), layer.begin_state(batch_size=3))
    >>> out.shape, h[0].shape
    ((5, 3, 6), (2, 3, 6))
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise MXNetError(f"RNN: activation must be 'relu' or 'tanh', got {activation!r}")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        """One state, h: (num_layers * directions, batch_size, hidden_size)."""
        return [self._state(batch_size, self._hidden_size)]


class LSTM(_RNNLayer):
    """A stack of LSTM layers (gates i, f, g, o; MXNet's order and packing).

    States: ``[h, c]``, each (num_layers * directions, N, hidden_size); with
    ``projection_size`` P (LSTMP: h_t = W_hr (o * tanh(c_t))) h is (..., N, P) and the
    output has directions * P features. ``state_clip_min``/``state_clip_max`` clip the
    cell state c at every step (``state_clip_nan`` maps NaN to the bounds).

    >>> layer = mx.gluon.rnn.LSTM(5, bidirectional=True, layout='NTC')
    >>> layer.initialize()
    >>> layer(mx.nd.ones((2, 7, 3))).shape
    (2, 7, 10)
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        """h (hidden_size, or projection_size) and c (hidden_size)."""
        return [self._state(batch_size, self._output_size()),
                self._state(batch_size, self._hidden_size)]


class GRU(_RNNLayer):
    """A stack of GRU layers (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h +
    b_hn))``, as MXNet and cuDNN compute it). One state h: (num_layers * directions, N,
    hidden_size).

    >>> layer = mx.gluon.rnn.GRU(4, input_size=3)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((6, 2, 3))).shape
    (6, 2, 4)
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size=0):
        """One state, h: (num_layers * directions, batch_size, hidden_size)."""
        return [self._state(batch_size, self._hidden_size)]
