"""Convolutional recurrent cells (MXNet 1.9.1's ``gluon.contrib.rnn.conv_rnn_cell``): the
Elman, LSTM and GRU recurrences with the input-to-hidden and hidden-to-hidden products
replaced by convolutions, over 1, 2 or 3 spatial axes (Shi et al., 2015, "Convolutional
LSTM Network").

Each step convolves the input with ``i2h_weight`` (kernel ``i2h_kernel``, padding
``i2h_pad``, dilation ``i2h_dilate``, stride 1) and the previous hidden state with
``h2h_weight`` (kernel ``h2h_kernel``, odd sizes only, padded to keep the state's size),
both to ``gates * hidden_channels`` channels, and combines the gates as the dense cells do.
The state has the spatial size of the i2h convolution's output. Parameter names and shapes
are MXNet's: ``i2h_weight`` ``(gates * hidden, in_channels, *i2h_kernel)`` (channel-last
layouts: ``(gates * hidden, *i2h_kernel, in_channels)``), ``h2h_weight`` likewise with
``hidden`` input channels, ``i2h_bias`` and ``h2h_bias`` ``(gates * hidden,)``. An
``input_shape`` with 0 input channels is inferred at the first step.
"""
import numbers

from ...rnn.rnn_cell import HybridRecurrentCell, _TENSORS
from .... import symbol as sym
from ....base import MXNetError

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _spec(value, dims, what, who):
    """A convolution setting as a tuple of ``dims`` ints (one int stands for all axes)."""
    if _is_int(value):
        return (int(value),) * dims
    try:
        value = tuple(value)
    except TypeError:
        value = None
    if value is None or len(value) != dims or not all(_is_int(v) for v in value):
        raise MXNetError(f"{who}: {what} must be an int or a tuple of {dims} ints for a "
                         f"{dims}-D convolution, got {value!r}")
    return tuple(int(v) for v in value)


def _conv_out_size(size, kernel, pad, dilate):
    """The output length of a stride-1 convolution (0 where the input length is unknown)."""
    return size + 2 * pad - dilate * (kernel - 1) if size else 0


class _BaseConvRNNCell(HybridRecurrentCell):
    """What the convolutional cells share: settings, parameters, state shapes and the two
    convolutions of a step. Subclasses set ``_dims`` (spatial axes) and ``_gate_names``."""

    _dims = 0
    _gate_names = ()

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=0,
                 i2h_dilate=1, h2h_dilate=1, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=None, activation="tanh",
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        who, dims = type(self).__name__, self._dims
        if not _is_int(hidden_channels) or hidden_channels < 1:
            raise MXNetError(f"{who}: hidden_channels must be a positive integer, got "
                             f"{hidden_channels!r}")
        conv_layout = _LAYOUTS[dims][0] if conv_layout is None else conv_layout
        if conv_layout not in _LAYOUTS[dims]:
            raise MXNetError(f"{who}: conv_layout must be one of {_LAYOUTS[dims]}, got "
                             f"{conv_layout!r}")
        self._hidden_channels = int(hidden_channels)
        self._conv_layout = conv_layout
        self._activation = activation
        self._channel_axis = conv_layout.find("C")
        self._i2h_kernel = _spec(i2h_kernel, dims, "i2h_kernel", who)
        self._i2h_pad = _spec(i2h_pad, dims, "i2h_pad", who)
        self._i2h_dilate = _spec(i2h_dilate, dims, "i2h_dilate", who)
        self._h2h_kernel = _spec(h2h_kernel, dims, "h2h_kernel", who)
        self._h2h_dilate = _spec(h2h_dilate, dims, "h2h_dilate", who)
        self._stride = (1,) * dims
        # an odd kernel, padded by half its dilated extent, keeps the state's size
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise MXNetError(f"{who}: only odd h2h_kernel sizes are supported (the "
                             f"recurrent convolution must keep the state's size), got "
                             f"{self._h2h_kernel}")
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._in_channels, spatial = self._split_input_shape(input_shape, who)
        self._input_shape = tuple(input_shape)
        self._state_shape = self._decide_state_shape(spatial, who)
        self._make_params(i2h_weight_initializer, h2h_weight_initializer,
                          i2h_bias_initializer, h2h_bias_initializer)

    def _split_input_shape(self, input_shape, who):
        """(in_channels, spatial sizes) of the per-step ``input_shape`` (no batch axis)."""
        try:
            shape = tuple(input_shape)
        except TypeError:
            shape = None
        if shape is None or len(shape) != self._dims + 1 or \
                not all(_is_int(s) and s >= 0 for s in shape):
            raise MXNetError(f"{who}: input_shape must be {self._dims + 1} non-negative ints "
                             f"in the layout {self._conv_layout} without its batch axis, got "
                             f"{input_shape!r}")
        if self._channel_axis == 1:
            return int(shape[0]), shape[1:]
        return int(shape[-1]), shape[:-1]

    def _decide_state_shape(self, spatial, who):
        """The per-sample state shape: the i2h convolution's output (0 where unknown)."""
        out = tuple(_conv_out_size(s, k, p, d) for s, k, p, d in
                    zip(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate))
        if any(s and o <= 0 for s, o in zip(spatial, out)):
            raise MXNetError(f"{who}: the i2h convolution of input_shape {self._input_shape}"
                             f" (kernel {self._i2h_kernel}, pad {self._i2h_pad}, dilate "
                             f"{self._i2h_dilate}) leaves no output, sizes {out}")
        hidden = (self._hidden_channels,)
        return hidden + out if self._channel_axis == 1 else out + hidden

    def _make_params(self, i2h_weight_initializer, h2h_weight_initializer,
                     i2h_bias_initializer, h2h_bias_initializer):
        total = self._hidden_channels * len(self._gate_names)

        def weight_shape(channels, kernel):
            if self._channel_axis == 1:
                return (total, channels) + kernel
            return (total,) + kernel + (channels,)

        for name, shape, init in (
                ("i2h_weight", weight_shape(self._in_channels, self._i2h_kernel),
                 i2h_weight_initializer),
                ("h2h_weight", weight_shape(self._hidden_channels, self._h2h_kernel),
                 h2h_weight_initializer),
                ("i2h_bias", (total,), i2h_bias_initializer),
                ("h2h_bias", (total,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        """One state (two for the LSTM) of shape ``(batch_size,) + state shape``."""
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    _num_states = 1

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({in_channels or None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        """The two convolutions of a step: (i2h of the input, h2h of the hidden state)."""
        total = self._hidden_channels * len(self._gate_names)
        i2h = F.Convolution(data=inputs, weight=i2h_weight, bias=i2h_bias, num_filter=total,
                            kernel=self._i2h_kernel, stride=self._stride, pad=self._i2h_pad,
                            dilate=self._i2h_dilate, layout=self._conv_layout,
                            name=prefix + "i2h")
        h2h = F.Convolution(data=states[0], weight=h2h_weight, bias=h2h_bias,
                            num_filter=total, kernel=self._h2h_kernel, stride=self._stride,
                            pad=self._h2h_pad, dilate=self._h2h_dilate,
                            layout=self._conv_layout, name=prefix + "h2h")
        return i2h, h2h

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """``RecurrentCell.unroll``; a symbolic unroll without ``begin_state`` starts from
        zeros shaped from the data (the batch size is not known before)."""
        if begin_state is None and _is_symbolic(inputs):
            begin_state = self._symbolic_zero_states(_first_step(inputs, layout))
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=valid_length)

    def _symbolic_zero_states(self, step):
        """Zero states of a graph, computed from one step of the data: a one-channel,
        all-zero-weight copy of the i2h convolution gives the state's batch and spatial
        size; ``zeros_like`` makes it exact zeros (even for inf data), and a broadcast
        gives the hidden channels."""
        axis = self._channel_axis
        per_position = sym.sum(step, axis=axis, keepdims=True)
        if axis == 1:
            kernel = sym.zeros(shape=(1, 1) + self._i2h_kernel)
        else:
            kernel = sym.zeros(shape=(1,) + self._i2h_kernel + (1,))
        sized = sym.Convolution(per_position, kernel, num_filter=1, kernel=self._i2h_kernel,
                                stride=self._stride, pad=self._i2h_pad,
                                dilate=self._i2h_dilate, layout=self._conv_layout,
                                no_bias=True)
        zero = sym.broadcast_axis(sym.zeros_like(sized), axis=axis,
                                  size=self._hidden_channels)
        return [zero] * self._num_states

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step; the subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")


def _is_symbolic(inputs):
    if isinstance(inputs, _TENSORS):
        return isinstance(inputs, sym.Symbol)
    inputs = list(inputs) if inputs is not None else []
    return bool(inputs) and isinstance(inputs[0], sym.Symbol)


def _first_step(inputs, layout):
    """Step 0 of a symbolic sequence (one Symbol in ``layout`` or a list of steps)."""
    if not isinstance(inputs, sym.Symbol):
        return list(inputs)[0]
    axis = layout.find("T")
    return sym.squeeze(sym.slice_axis(inputs, axis=axis, begin=0, end=1), axis=axis)


class _ConvRNNCell(_BaseConvRNNCell):
    """``h' = activation(i2h(x) + h2h(h))``; output h'."""

    _gate_names = ("",)

    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    """Gates (i, f, c, o) along the channel axis: ``c' = f * c + i * activation(.)``,
    ``h' = o * activation(c')`` with sigmoid i, f, o. States ``[h, c]``; output h'."""

    _gate_names = ("_i", "_f", "_c", "_o")
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis,
                               name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    """Gates (r, z, n) along the channel axis: ``r, z = sigmoid(.)``,
    ``n = activation(i2h_n + r * h2h_n)``, ``h' = (1 - z) * n + z * h``; output h'."""

    _gate_names = ("_r", "_z", "_o")

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        """One step."""
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        axis = self._channel_axis
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, axis=axis,
                                             name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, axis=axis,
                                             name=prefix + "h2h_slice")
        reset = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        cand = self._get_activation(F, i2h_n + reset * h2h_n, self._activation,
                                    name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update) * cand, update * states[0], name=prefix + "out")
        return next_h, [next_h]


_KINDS = {"RNN": (_ConvRNNCell, "Elman (tanh) recurrence"),
          "LSTM": (_ConvLSTMCell, "LSTM"),
          "GRU": (_ConvGRUCell, "GRU")}


def _cell_class(dims, kind):
    """``Conv{dims}D{kind}Cell``: the cell of ``kind`` over ``dims`` spatial axes."""
    base, what = _KINDS[kind]
    name = f"Conv{dims}D{kind}Cell"
    first, last = _LAYOUTS[dims]
    doc = (f"{dims}-D convolutional {what} cell. ``input_shape`` is one step's sample shape "
           f"without the batch axis, in ``conv_layout`` ('{first}', the default, or "
           f"'{last}'); ``hidden_channels`` the state's channels; ``i2h_kernel``, "
           "``h2h_kernel`` (odd), ``i2h_pad``, ``i2h_dilate``, ``h2h_dilate`` an int or a "
           f"tuple of {dims}; the four initializers, ``activation`` (a name, a LeakyReLU "
           "block or a callable; default 'tanh'), ``prefix`` and ``params`` as MXNet's.")
    return type(name, (base,), {"_dims": dims, "__doc__": doc,
                                "__module__": __name__})


Conv1DRNNCell, Conv2DRNNCell, Conv3DRNNCell = (_cell_class(d, "RNN") for d in (1, 2, 3))
Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell = (_cell_class(d, "LSTM") for d in (1, 2, 3))
Conv1DGRUCell, Conv2DGRUCell, Conv3DGRUCell = (_cell_class(d, "GRU") for d in (1, 2, 3))
