"""The fused recurrent operator RNN (rnn_relu, rnn_tanh, lstm, gru) with MXNet's packed parameter
layout, and ``_rnn_param_concat`` (the concat Gluon packs the parameters with).

Layout of ``parameters`` (MXNet 1.9.1's, checked against its ``gluon.rnn`` layers): first every
weight, layer by layer and within a layer direction by direction (forward, then backward):
``i2h`` (G*H, I), ``h2h`` (G*H, R) and, for an LSTM with ``projection_size`` P, ``h2r``
(P, H); then every bias in the same order: ``i2h`` (G*H,), ``h2h`` (G*H,). G is the number of
gates (1, 4 for lstm in the order i, f, g, o, 3 for gru in the order r, z, n), H is
``state_size``, R the recurrent size (P with a projection, else H) and I the layer's input
size (C for the first layer, D*R above it, D the number of directions).

The forward pass is NumPy/CuPy through the device namespace: one GEMM (oneDNN's matmul
on the CPU for float32, see ``linalg._blocked_matmul``) projects the whole
sequence's inputs, then one GEMM per step for the recurrence; the activations are the
registered ``tanh``/``relu`` kernels of the same device (the sigmoid gates through tanh),
so one function serves every device. It keeps what backpropagation needs as hidden
outputs: each layer's outputs (the last layer's is ``output``) and, for lstm and gru,
every step's gates and cells (gru: W_hn h + b_hn), one array per layer and direction.

Off the autograd tape nothing reads the saved values: they are optional outputs, not made,
and every mode runs on oneDNN's fused recurrent primitives where oneDNN takes them
(``_onednn_layers``; mxlite/_core/mx_dnnl_rnn.h).

The gradient is a graph of registered ops over those saved values: per step the adjoint of
the cell and one GEMM with W_h (the recurrence), then one GEMM each for the input and the
weight gradients over all steps. No step of the forward pass is replayed. Because the
saved values are outputs of the op, a higher-order gradient reaches them as head gradients
(zeros at first order), which enter the same recurrence: gradients of every order (a
gradient penalty through an LSTM) are exact.
"""
import math

import numpy as np

from ..base import op_error
from . import onednn
from .common import plus
from .linalg import _blocked_matmul
from .registry import REQUIRED, OpDef, Param, get_op, register
from .shape_partial import known_rank, partial_rule, unify

_FLOATS = (np.dtype("float32"), np.dtype("float64"))
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
# lstm last: a generic caller that tries each choice in turn ends on the mode taking the most
# inputs (tests/test_registry.py's binding check)
_BLOCK = 1 << 22          # scratch elements of one block of sequences
_MODES = ("gru", "rnn_relu", "rnn_tanh", "lstm")


# ---- the packed parameter layout ---------------------------------------------------------------
class _Layout:
    """Sizes of one RNN configuration and where each weight lies in ``parameters``.

    ``weights[k]`` for k = layer * D + direction is a dict name -> (offset, shape) for
    ``wx``, ``wh``, ``wr`` (projection only), ``bx``, ``bh``."""

    def __init__(self, attrs, input_size):
        self.mode = attrs.mode
        self.H = attrs.state_size
        self.L = attrs.num_layers
        self.D = 2 if attrs.bidirectional else 1
        self.P = attrs.projection_size
        self.R = self.P if self.P is not None else self.H       # recurrent / output size
        self.G = _GATES[self.mode]
        self.C = input_size
        gh = self.G * self.H
        self.weights = []
        offset = 0
        for k in range(self.L * self.D):
            inp = self.C if k < self.D else self.D * self.R
            w = {"wx": (offset, (gh, inp))}
            offset += gh * inp
            w["wh"] = (offset, (gh, self.R))
            offset += gh * self.R
            if self.P is not None:
                w["wr"] = (offset, (self.P, self.H))
                offset += self.P * self.H
            self.weights.append(w)
        for w in self.weights:
            for name in ("bx", "bh"):
                w[name] = (offset, (gh,))
                offset += gh
        self.size = offset

    def input_size(self, layer):
        return self.C if layer == 0 else self.D * self.R

    def names(self):
        """The weight names in packing order: all weights, then all biases."""
        ws = [(k, n) for k in range(self.L * self.D)
              for n in (("wx", "wh", "wr") if self.P is not None else ("wx", "wh"))]
        return ws + [(k, n) for k in range(self.L * self.D) for n in ("bx", "bh")]


def rnn_param_size(attrs, input_size):
    """The length of ``parameters`` (MXNet's ``GetRnnParamSize``)."""
    return _Layout(attrs, input_size).size


# ---- attributes, inputs, shapes, types ----------------------------------------------------------
def _check_attrs(attrs):
    if attrs.state_size < 1:
        raise op_error("RNN", f"state_size must be positive, got {attrs.state_size}")
    if attrs.num_layers < 1:
        raise op_error("RNN", f"num_layers must be positive, got {attrs.num_layers}")
    if not 0.0 <= attrs.p < 1.0:
        raise op_error("RNN", f"p (the dropout rate) must be in [0, 1), got {attrs.p}")
    if attrs.projection_size is not None:
        if attrs.mode != "lstm":
            raise op_error("RNN", f"projection_size is only supported for mode='lstm', got "
                           f"mode={attrs.mode!r}")
        if not 1 <= attrs.projection_size <= attrs.state_size:
            raise op_error("RNN", f"projection_size must be in [1, state_size={attrs.state_size}]"
                           f", got {attrs.projection_size}")
    lo, hi = attrs.lstm_state_clip_min, attrs.lstm_state_clip_max
    if lo is not None or hi is not None:
        if attrs.mode != "lstm":
            raise op_error("RNN", f"state clipping is only supported for mode='lstm', got "
                           f"mode={attrs.mode!r}")
        if lo is None or hi is None:
            raise op_error("RNN", "lstm_state_clip_min and lstm_state_clip_max must be given "
                           f"together, got min={lo}, max={hi}")
        if not lo <= hi:
            raise op_error("RNN", f"lstm_state_clip_max={hi} must be at least "
                           f"lstm_state_clip_min={lo}")


def _list_inputs(attrs):
    names = ["data", "parameters", "state"]
    if attrs.get("mode") == "lstm":
        names.append("state_cell")
    if attrs.use_sequence_length:
        names.append("sequence_length")
    return tuple(names)


def _has_mask(attrs):
    """A dropout mask between layers (hidden output) exists when p > 0 and layers > 1."""
    return attrs.p > 0.0 and attrs.num_layers > 1


def _num_state_outputs(attrs):
    """out, hy and (lstm) cy: what the op computes for its caller."""
    return 2 + (attrs.get("mode") == "lstm")


def _saved_slots(attrs):
    """Where the hidden outputs the gradient reads lie among the outputs: (dropout mask,
    [output of layer l for every layer but the last], [(gates, cells) of layer * D +
    direction] for lstm (gru: (gates, W_hn h + b_hn)), [] for the rnn modes)."""
    layers = attrs.get("num_layers") or 1
    dirs = 2 if attrs.get("bidirectional") else 1
    drop = _num_state_outputs(attrs)
    below = list(range(drop + 1, drop + layers))
    first = drop + layers
    gated = [(first + 2 * k, first + 2 * k + 1) for k in range(layers * dirs)]
    return drop, below, gated if attrs.get("mode") in ("lstm", "gru") else []


def _num_outputs(attrs):
    """out, hy, (cy for lstm), then the hidden outputs the gradient reads: the dropout mask,
    each layer's outputs but the last's, and (lstm, gru) the gates and cells of every step
    of each layer and direction. Every state is computed, the visible count follows
    state_outputs."""
    drop, below, gated = _saved_slots(attrs)
    return drop + 1 + len(below) + 2 * len(gated)


def _num_visible(attrs):
    return _num_state_outputs(attrs) if attrs.state_outputs else 1


def _output_names(attrs):
    names = ["output", "state_output"]
    mode = attrs.get("mode")
    if mode == "lstm":
        names.append("statecell_output")
    drop, below, gated = _saved_slots(attrs)
    names.append("dropout_mask")
    names += [f"layer{layer}_output" for layer in range(len(below))]
    second = "cells" if mode == "lstm" else "hidden_projection"
    for k in range(len(gated)):
        names += [f"gates{k}", f"{second}{k}"]
    return tuple(names)


def _expected_shapes(attrs, data):
    """{input name: shape} every input must have for data (T, N, C)."""
    t, n, c = data
    lay = _Layout(attrs, c)
    want = {"data": data, "parameters": (lay.size,), "state": (lay.L * lay.D, n, lay.R),
            "state_cell": (lay.L * lay.D, n, lay.H), "sequence_length": (n,)}
    return lay, want


def _rnn_shape(shapes, attrs):
    _check_attrs(attrs)
    names = _list_inputs(attrs)
    if len(shapes) != len(names):
        raise op_error("RNN", f"expected {len(names)} inputs {names}, got {len(shapes)}")
    data = tuple(shapes[0])
    if len(data) != 3:
        raise op_error("RNN", f"data must be 3-D (sequence length, batch, input size) in layout "
                       f"'TNC', got shape {data}")
    if data[0] < 1 or data[2] < 1:
        raise op_error("RNN", f"data must hold at least one time step of at least one input "
                       f"feature, got shape {data}")
    lay, want = _expected_shapes(attrs, data)
    for name, shape in zip(names[1:], shapes[1:]):
        if tuple(shape) != want[name]:
            raise op_error("RNN", f"{name} must have shape {want[name]} for data {data} "
                           f"(mode={attrs.mode!r}, state_size={attrs.state_size}, num_layers="
                           f"{attrs.num_layers}, bidirectional={attrs.bidirectional}, "
                           f"projection_size={attrs.projection_size}), got {tuple(shape)}")
    t, n, _ = data
    outs = [(t, n, lay.D * lay.R), (lay.L * lay.D, n, lay.R)]
    if attrs.mode == "lstm":
        outs.append((lay.L * lay.D, n, lay.H))
    outs.append((lay.L - 1, t, n, lay.D * lay.R) if _has_mask(attrs) else (0,))
    outs += [(t, n, lay.D * lay.R)] * (lay.L - 1)
    if lay.G > 1:            # saved per step: gates, and lstm's cells / gru's W_hn h + b_hn
        outs += [(t, n, lay.G * lay.H), (t, n, lay.H)] * (lay.L * lay.D)
    return outs


def _rnn_backward_shape(in_shapes, out_shapes, attrs):
    """parameters, state, state_cell and sequence_length from data (MXNet's rule)."""
    data = in_shapes[0]
    if data is None or len(data) != 3:
        return list(in_shapes)
    _, want = _expected_shapes(attrs, tuple(data))
    return [want[name] if s is None else s for name, s in zip(_list_inputs(attrs), in_shapes)]


def _rnn_type(dtypes, attrs):
    names = _list_inputs(attrs)
    dt = np.dtype(dtypes[0])
    if dt not in _FLOATS:
        raise op_error("RNN", f"data must be float32 or float64, got {dt}")
    for name, d in zip(names[1:], dtypes[1:]):
        d = np.dtype(d)
        if name == "sequence_length":
            if d.kind not in "iuf":
                raise op_error("RNN", f"sequence_length must hold numbers, got {d}")
        elif d != dt:
            raise op_error("RNN", f"{name} has dtype {d}, data has {dt}: data, parameters and "
                           "states must share one float dtype")
    return [dt] * _num_outputs(attrs)


# ---- forward compute (device namespace + the registered activation kernels) ---------------------
def _act(rctx, name, x, out=None):
    """``out = name(x)`` with the registered element-wise op's kernel of this device."""
    op = get_op(name)
    out = rctx.xp.empty(x.shape, x.dtype) if out is None else out
    op.compute[rctx.kernels](rctx, [x], [out], op.default_attrs)
    return out


def _weights(params, layout, k):
    return {name: params[off:off + math.prod(shape)].reshape(shape)
            for name, (off, shape) in layout.weights[k].items()}


def _step_masks(rctx, lengths, t, n, dtype):
    """(T, N, 1) with 1 where step t < sequence_length[b] (cuDNN's padded layout), checked."""
    xp = rctx.xp
    host = np.asarray(xp.to_host(lengths)).astype(np.float64)
    bad = ~((host >= 0) & (host <= t) & (host == np.floor(host)))
    if bad.any():
        raise op_error("RNN", f"sequence_length must hold integers in [0, {t}] (the sequence "
                       f"length of data), got {host[bad][:4].tolist()}")
    steps = np.arange(t, dtype=np.float64)[:, None]
    return xp.from_host((steps < host[None, :]).astype(dtype)[:, :, None])


class _Cell:
    """One direction of one layer: the per-step state update of a mode, on device arrays.
    The step writes what the gradient reads into the hidden outputs ``save`` (views of this
    direction's ``gates`` and ``cells`` rows of step s), zeroed at masked steps."""

    def __init__(self, rctx, attrs, lay, w, scale):
        self.rctx, self.attrs, self.lay, self.w = rctx, attrs, lay, w
        self.scale = scale
        self.shift = None if scale is None else 1 - scale

    def step(self, a, h, c, hw, save):
        """The new (output, c) from the pre-activation ``a`` = x W_x^T + biases + h W_h^T (rnn,
        lstm) or ``a`` = x W_x^T + b_x and ``hw`` = h W_h^T + b_h (gru)."""
        mode = self.attrs.mode
        if mode in ("rnn_tanh", "rnn_relu"):
            # a new array: ``a`` is the buffer the next step's product writes into
            return _act(self.rctx, "tanh" if mode == "rnn_tanh" else "relu", a), None
        if mode == "gru":
            return self._gru(a, h, hw, save), None
        return self._lstm(a, c, save)

    def _gru(self, a, h, hw, save):
        rctx, H = self.rctx, self.lay.H
        gates, hn = save
        s = a[:, :2 * H] + hw[:, :2 * H]             # (r, z) pre-activations, halved
        _act(rctx, "tanh", s, s)
        s *= 0.5
        s += 0.5
        r, z = s[:, :H], s[:, H:]
        n = a[:, 2 * H:] + r * hw[:, 2 * H:]
        _act(rctx, "tanh", n, n)
        rctx.xp.copyto(gates[:, :2 * H], s)
        rctx.xp.copyto(gates[:, 2 * H:], n)
        rctx.xp.copyto(hn, hw[:, 2 * H:])
        return n + z * (h - n)

    def _lstm(self, a, c, save):
        rctx, xp, H = self.rctx, self.rctx.xp, self.lay.H
        gates, cells = save
        _act(rctx, "tanh", a, gates)                # the sigmoid gates' pre-activations halved
        gates *= self.scale
        gates += self.shift
        craw = gates[:, H:2 * H] * c + gates[:, :H] * gates[:, 2 * H:3 * H]
        xp.copyto(cells, craw)                      # before the clip: its mask needs it
        c = self._clip(craw)
        h = gates[:, 3 * H:] * _act(rctx, "tanh", c)
        if self.lay.P is not None:
            r = xp.empty((h.shape[0], self.lay.P), h.dtype)
            _blocked_matmul(xp, h, self.w["wr"].T, r)
            h = r
        return h, c

    def _clip(self, c):
        lo, hi = self.attrs.lstm_state_clip_min, self.attrs.lstm_state_clip_max
        if lo is None:
            return c
        nan = (c != c) if self.attrs.lstm_state_clip_nan else None
        c = c.clip(lo, hi)
        if nan is not None:
            c[nan] = lo          # NaN stops at the lower bound (clip_nan), see the op's doc
        return c


def _sigmoid_scale(xp, mode, H, dtype):
    """(G*H,): 1/2 on the columns of the sigmoid gates (lstm i, f, o; gru r, z), 1 elsewhere,
    or None (rnn modes). The gates are computed as sigmoid(a) = tanh(a / 2) / 2 + 1/2 with
    the halving folded into the weights: one tanh kernel for all four lstm gates, about
    three times faster than the sigmoid and tanh kernels on their parts. Float32 results
    differ from a direct sigmoid by at most about 3e-8 absolute (the rounding of 1/2 +
    tanh / 2), which is below the rounding of the products the gates enter."""
    if mode not in ("lstm", "gru"):
        return None
    scale = xp.ones((_GATES[mode] * H,), dtype)
    scale[:2 * H] = 0.5                   # lstm i, f; gru r, z
    if mode == "lstm":
        scale[3 * H:] = 0.5               # lstm o
    return scale


def _run_direction(rctx, attrs, lay, w, x, h0, c0, masks, y, save, reverse):
    """One direction of one layer over the whole sequence: writes its outputs into ``y``
    (T, N, R) view and what the gradient reads into ``save`` ((T, N, G*H) gates and (T, N, H)
    cells / gru's W_hn h + b_hn views, or None), returns the final (h, c)."""
    xp = rctx.xp
    t, n, _ = x.shape
    gh = lay.G * lay.H
    scale = _sigmoid_scale(xp, attrs.mode, lay.H, x.dtype)
    wx, wh, bx, bh = w["wx"].T, w["wh"].T, w["bx"], w["bh"]
    if scale is not None:        # the sigmoid gates' rows halved: sigmoid through tanh
        wx, wh, bx, bh = wx * scale, wh * scale, bx * scale, bh * scale
    xw = xp.empty((t * n, gh), x.dtype)
    _blocked_matmul(xp, x.reshape(t * n, -1), wx, xw)
    xw += bx
    if attrs.mode != "gru":
        xw += bh                 # both biases enter every gate alike: fold them in once
    xw = xw.reshape(t, n, gh)
    cell = _Cell(rctx, attrs, lay, w, scale)
    h, c = h0, c0
    hw = xp.empty((n, gh), x.dtype)
    # a row-major W_h^T: BLAS and oneDNN run the small per-step product faster on it than
    # on the transposed view
    wh = xp.ascontiguousarray(wh)
    for i in range(t):
        s = t - 1 - i if reverse else i
        _blocked_matmul(xp, h, wh, hw)
        if attrs.mode == "gru":
            hw += bh
            a = xw[s]
        else:
            hw += xw[s]
            a = hw
        step_save = None if save is None else (save[0][s], save[1][s])
        h_new, c_new = cell.step(a, h, c, hw, step_save)
        if masks is None:
            h, c = h_new, c_new
            xp.copyto(y[s], h_new)
            continue
        m = masks[s]
        xp.copyto(y[s], h_new * m)
        h = h + m * (h_new - h)
        if c is not None:
            c = c + m * (c_new - c)
        if save is not None:     # a masked step's saved values are constants (zeros)
            for part in step_save:
                part *= m
    return h, c


def _blocks(n, per_item):
    """Slices of the ``n`` sequences of a batch, each about ``_BLOCK`` scratch elements (the
    recurrence of one sequence does not read another's, so blocks bound the scratch memory
    whatever the batch)."""
    step = max(1, _BLOCK // max(per_item, 1))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _hidden_outputs(attrs):
    """The outputs past the states (dropout mask, lower layers' outputs, gates, cells): only
    the gradient reads them, so a call off the tape may skip them (``optional_outputs``)."""
    return range(_num_state_outputs(attrs), _num_outputs(attrs))


def _onednn_weights(xp, params, lay, k, dtype):
    """``(weights, wx_offset, wh_offset, wx_step, wh_step, bias)`` of the layer whose first
    direction is ``k``, as ``dnnl.rnn_forward`` reads them: lstm's and the rnn modes' gates
    are in oneDNN's order, so their weights are the packed parameters themselves and the
    bias the sum of the two; gru's are copied into oneDNN's order u, r, o (MXNet's z, r, n),
    its bias (b_z, b_r, bx_n, bh_n) (linear before reset: bh_n stays inside r * (.))."""
    D, G, H = lay.D, lay.G, lay.H
    ws = [_weights(params, lay, k + d) for d in range(D)]
    if lay.mode != "gru":
        first = lay.weights[k]
        step = lay.weights[k + 1]["wx"][0] - first["wx"][0] if D == 2 else params.size
        bias = xp.empty((D, G * H), dtype)
        for d, w in enumerate(ws):
            bias[d] = w["bx"] + w["bh"]
        return params, first["wx"][0], first["wh"][0], step, step, bias
    order = [1, 0, 2]
    i = ws[0]["wx"].shape[1]
    packed = xp.empty(D * G * H * (i + H), dtype)
    wx = packed[:D * G * H * i].reshape(D, G, H, i)
    wh = packed[D * G * H * i:].reshape(D, G, H, H)
    bias = xp.empty((D, 4, H), dtype)
    for d, w in enumerate(ws):
        wx[d] = w["wx"].reshape(G, H, i)[order]
        wh[d] = w["wh"].reshape(G, H, H)[order]
        bx, bh = w["bx"].reshape(G, H), w["bh"].reshape(G, H)
        bias[d, :2] = bx[[1, 0]] + bh[[1, 0]]
        bias[d, 2], bias[d, 3] = bx[2], bh[2]
    return packed, 0, D * G * H * i, G * H * i, G * H * H, bias.reshape(D, 4 * H)


def _onednn_layers(rctx, attrs, lay, ins, outs):
    """Every layer on oneDNN's fused recurrent primitive (inference: nothing reads the
    hidden outputs); True when it ran, False where the reference kernels must (a
    projection, clipping, sequence lengths, dropout in training, or oneDNN off or
    refusing)."""
    if (lay.P is not None
            or attrs.lstm_state_clip_min is not None or attrs.use_sequence_length
            or (_has_mask(attrs) and rctx.is_train)):
        return False
    lstm = attrs.mode == "lstm"
    x, params, h0 = ins[0], ins[1], ins[2]
    states = list(ins[2:4] if lstm else ins[2:3]) + list(outs[:3 if lstm else 2])
    module = onednn.primitives(rctx.xp, x, params, *states)
    if module is None:
        return False
    xp, (t, n, _), D, H = rctx.xp, x.shape, lay.D, lay.H
    inp = x
    try:
        for layer in range(lay.L):
            k = layer * D
            weights = _onednn_weights(xp, params, lay, k, x.dtype)
            y = outs[0] if layer == lay.L - 1 else xp.empty((t, n, D * H), x.dtype)
            module.rnn_forward(inp, *weights, h0[k:k + D], ins[3][k:k + D] if lstm else None,
                               y, outs[1][k:k + D], outs[2][k:k + D] if lstm else None,
                               attrs.mode, H)
            inp = y
    except module.Refused:
        return False
    return True


def _rnn_compute(rctx, ins, outs, attrs):
    x, params, h0 = ins[0], ins[1], ins[2]
    lstm = attrs.mode == "lstm"
    t, n, c = x.shape
    lay = _Layout(attrs, c)
    if any(outs[i] is None for i in _hidden_outputs(attrs)):
        if _onednn_layers(rctx, attrs, lay, ins, outs):
            return
        shapes = _rnn_shape([a.shape for a in ins], attrs)      # scratch for the skipped
        outs = [rctx.xp.empty(s, x.dtype) if o is None else o for o, s in zip(outs, shapes)]
    masks = _step_masks(rctx, ins[-1], t, n, x.dtype) if attrs.use_sequence_length else None
    nv = _num_state_outputs(attrs)
    drop, below, gated = _saved_slots(attrs)
    for b in _blocks(n, t * max(lay.G * lay.H, lay.D * lay.R, c)):
        saved = _Saved(outs[drop][:, :, b] if _has_mask(attrs) else None,
                       [outs[i][:, b] for i in below],
                       [(outs[i][:, b], outs[j][:, b]) for i, j in gated])
        _run_layers(rctx, attrs, lay, params, x[:, b], h0[:, b], ins[3][:, b] if lstm else None,
                    None if masks is None else masks[:, b], [o[:, b] for o in outs[:nv]],
                    saved)


class _Saved:
    """Views of the hidden outputs over one block of sequences: ``drop`` the dropout masks
    (or None), ``below[l]`` layer l's output, ``gated[k]`` the (gates, cells) of layer *
    D + direction (empty for the rnn modes)."""

    def __init__(self, drop, below, gated):
        self.drop, self.below, self.gated = drop, below, gated


def _run_layers(rctx, attrs, lay, params, x, h0, c0, masks, outs, saved):
    """Every layer over one block of sequences: ``outs`` (out, hy[, cy]) and ``saved`` (the
    hidden outputs: dropout masks, layer outputs, gates, cells; None where empty) are views
    of the op's outputs."""
    xp = rctx.xp
    t, n, _ = x.shape
    inp = x
    for layer in range(lay.L):
        last = layer == lay.L - 1
        y = outs[0] if last else saved.below[layer]
        for d in range(lay.D):
            k = layer * lay.D + d
            save = saved.gated[k] if saved.gated else None
            h, cell = _run_direction(rctx, attrs, lay, _weights(params, lay, k), inp, h0[k],
                                     None if c0 is None else c0[k], masks,
                                     y[:, :, d * lay.R:(d + 1) * lay.R], save, reverse=d == 1)
            xp.copyto(outs[1][k], h)
            if c0 is not None:
                xp.copyto(outs[2][k], cell)
        inp = xp.ascontiguousarray(y)
        if not last and saved.drop is not None:
            drop = get_op("Dropout")
            dropped, m = xp.empty(y.shape, y.dtype), xp.empty(y.shape, y.dtype)
            drop.compute[rctx.kernels](rctx, [inp], [dropped, m],
                                       drop.parse_attrs({"p": attrs.p}))
            xp.copyto(saved.drop[layer], m)
            inp = dropped


# ---- gradient: backpropagation through time over the saved states, with registered ops --------
def _parts(F, x, num, axis):
    """``x`` split into ``num`` parts along ``axis``, the axis removed, as a list (None
    parts for None: a head gradient nothing sent)."""
    if x is None:
        return [None] * num
    if num == 1:
        return [_squeeze(F, x, axis)]
    s = F.split(x, num_outputs=num, axis=axis, squeeze_axis=True)
    return [s[i] for i in range(num)]


def _squeeze(F, x, axis):
    """``x`` without its axis ``axis`` of length 1 (split's gradient is concat)."""
    return F.split(x, num_outputs=1, axis=axis, squeeze_axis=True)


def _blocks_of(F, x, num):
    """The ``num`` equal blocks of a (T, N, num * X) array along its last axis (the
    directions of a layer's output or of its gradient)."""
    if num == 1 or x is None:
        return [x] * num
    s = F.split(x, num_outputs=num, axis=2)
    return [s[i] for i in range(num)]


def _pick(F, x, index):
    """``x[index]`` of a stacked hidden output, the leading axis removed."""
    return _squeeze(F, F.slice_axis(x, axis=0, begin=index, end=index + 1), 0)


class _Direction:
    """The adjoint of one direction of one layer from what the forward pass saved: its
    outputs ``y`` (T, N, R), gates and cells (lstm; gru: W_hn h + b_hn) per step, all zero
    at masked steps. The recurrence runs step by step (the cell's adjoint on (N, H) slices
    of the saved values and one GEMM with W_h); one GEMM each then gives the input and
    weight gradients over all steps."""

    def __init__(self, F, attrs, lay, w, masks, reverse, t, n):
        self.F, self.attrs, self.lay, self.w = F, attrs, lay, w
        self.reverse, self.t, self.n = reverse, t, n
        self.m = masks
        if masks is not None:
            self.m_steps = _parts(F, masks, t, 0)
            # 0 where the previous step was masked (1 at the first step, which reads the
            # initial state anyway)
            self.m_prev = self._shift(masks, F.ones_like(self.m_steps[0]))

    def _shift(self, seq, first):
        """(T, N, X): what each step reads from the step before it in processing order,
        ``first`` (N, X) at the first step."""
        F, t = self.F, self.t
        first = F.expand_dims(first, axis=0)
        if t == 1:
            return first
        if self.reverse:
            return F.concat(F.slice_axis(seq, axis=0, begin=1, end=t), first, dim=0)
        return F.concat(first, F.slice_axis(seq, axis=0, begin=0, end=t - 1), dim=0)

    def state_in(self, seq, first):
        """The state each step starts from (T, N, X): the previous step's saved value, or
        ``first`` where no earlier step ran (masked steps save zeros and pass the state)."""
        prev = self._shift(seq, first)
        if self.m is None:
            return prev
        F = self.F
        return prev + F.broadcast_mul(1 - self.m_prev, F.expand_dims(first, axis=0))

    def masked(self, g):
        """``g`` (T, N, X) zero at masked steps (the head gradient of a saved value that is
        the constant zero there); None stays None."""
        return g if self.m is None or g is None else self.F.broadcast_mul(g, self.m)

    def backward(self, inp, y, h0, c0, saved, gy, ghy, gcy, gsaved, want_dx, want_w):
        """(dx, {weight name: gradient}, dh0, dc0) for this direction's input ``inp``
        (T, N, I), outputs ``y`` and their gradient ``gy`` (T, N, R), the final states'
        gradients, and the saved values with theirs."""
        F, lay, t, n, mode = self.F, self.lay, self.t, self.n, self.attrs.mode
        hin = self.state_in(y, h0)
        if mode == "lstm":
            rec = _LSTMTerms(self, saved, gsaved, c0)
        elif mode == "gru":
            rec = _GRUTerms(self, saved, gsaved, hin)
        else:
            rec = _RNNTerms(self, y)
        dnews, das, dh, dc = self._through_time(rec, gy, ghy, gcy)
        dxw2, dhw2 = rec.pre_activation_grads(dnews, das)     # (T * N, G * H) each
        grads = {}
        if want_w:
            grads["wx"] = F.dot(dxw2, F.reshape(inp, shape=(t * n, -1)), transpose_a=True)
            grads["bx"] = F.sum(dxw2, axis=0)
            grads["bh"] = grads["bx"] if dhw2 is None else F.sum(dhw2, axis=0)
            grads["wh"] = F.dot(dxw2 if dhw2 is None else dhw2,
                                F.reshape(hin, shape=(t * n, lay.R)), transpose_a=True)
            if lay.P is not None:
                grads["wr"] = F.dot(F.concat(*dnews, dim=0),
                                    F.reshape(rec.hh, shape=(t * n, lay.H)), transpose_a=True)
        dx = F.reshape(F.dot(dxw2, self.w["wx"]), shape=(t, n, -1)) if want_dx else None
        return dx, grads, dh, dc

    def _through_time(self, rec, gy, ghy, gcy):
        """The recurrence backwards: per step the gradient of the step's new output
        ``dnew`` and of its pre-activations; the gradients of the initial states."""
        F, t = self.F, self.t
        gys = _parts(F, self.masked(gy), t, 0)
        dnews, das = [None] * t, [None] * t
        dh, dc = ghy, gcy
        for i in range(t):
            s = i if self.reverse else t - 1 - i          # the processing order, reversed
            if self.m is None:
                dnew, dcnew = dh + gys[s], dc
            else:                                         # a masked step passes the state
                mdh = F.broadcast_mul(self.m_steps[s], dh)
                dnew, dh = mdh + gys[s], dh - mdh
                dcnew = None if dc is None else F.broadcast_mul(self.m_steps[s], dc)
                dc = None if dc is None else dc - dcnew
            das[s], dhin, dcin = rec.step(s, dnew, dcnew)
            dnews[s] = dnew
            dh = dhin if self.m is None else dh + dhin
            if dcin is not None:
                dc = dcin if self.m is None else dc + dcin
        return dnews, das, dh, dc


class _RNNTerms:
    """rnn_tanh / rnn_relu: h = act(a), da = dnew act'(a) from the saved output.

    Each mode's terms give ``step(s, dnew, dc)`` -> (d pre-activations of the h part,
    dh_in, dc_in) and ``pre_activation_grads`` -> the gradients of the x part's and the h
    part's pre-activations over all steps, (T * N, G * H) each, steps in order (None for
    the h part: the same as the x part's)."""

    def __init__(self, direction, y):
        F = direction.F
        self.F, self.wh = F, direction.w["wh"]
        deriv = 1 - F.square(y) if direction.attrs.mode == "rnn_tanh" else F.BlockGrad(y > 0)
        self.deriv = _parts(F, deriv, direction.t, 0)

    def step(self, s, dnew, dc):
        da = dnew * self.deriv[s]
        return da, self.F.dot(da, self.wh), None

    def pre_activation_grads(self, dnews, das):
        return self.F.concat(*das, dim=0), None


def _gates(F, a, num):
    """The ``num`` gate blocks of one step's (N, num * H) array (None blocks for None)."""
    if a is None:
        return [None] * num
    s = F.split(a, num_outputs=num, axis=1)
    return [s[i] for i in range(num)]


class _LSTMTerms:
    """lstm: saved gates i, f, g, o (activated) and cells c' = f c_in + i g before the clip
    c = clip(c'); h = o tanh(c) (projected r = W_hr h). Per step, with u the gradient of c'
    and g_* the saved values' head gradients: u = (dh o (1 - tanh^2 c) + dc) * clip mask +
    g_c', d(pre-activation i) = (u g + g_i) i (1 - i), of f (u c_in + g_f) f (1 - f), of g
    (u i + g_g)(1 - g^2), of o (dh tanh c + g_o) o (1 - o); dc_in = u f, dh_in =
    d(pre-activations) W_h. Written per step on (N, H) slices, which stay in cache: cheaper
    than the same element-wise work over the whole sequence."""

    def __init__(self, direction, saved, gsaved, c0):
        F, attrs, t, H = direction.F, direction.attrs, direction.t, direction.lay.H
        self.F, self.w, self.proj = F, direction.w, direction.lay.P is not None
        gates, craw = saved
        lo, hi = attrs.lstm_state_clip_min, attrs.lstm_state_clip_max
        c = craw if lo is None else direction.masked(F.clip(craw, lo, hi))
        tc = F.tanh(c)
        self.gates, self.tc = _parts(F, gates, t, 0), _parts(F, tc, t, 0)
        self.cin = _parts(F, direction.state_in(c, c0), t, 0)
        self.g_gates = _parts(F, direction.masked(gsaved[0]), t, 0)
        self.g_cells = _parts(F, direction.masked(gsaved[1]), t, 0)
        self.cmask = None
        if lo is not None:
            self.cmask = _parts(F, F.BlockGrad((craw >= lo) * (craw <= hi)), t, 0)
        self.hh = (F.slice_axis(gates, axis=2, begin=3 * H, end=4 * H) * tc
                   if self.proj else None)

    def step(self, s, dnew, dc):
        F = self.F
        i, f, g, o = _gates(F, self.gates[s], 4)
        gi, gf, gg, go = _gates(F, self.g_gates[s], 4)      # None at first order
        tc = self.tc[s]
        dh = F.dot(dnew, self.w["wr"]) if self.proj else dnew
        u = plus(dh * o * (1 - tc * tc), dc)
        if self.cmask is not None:
            u = u * self.cmask[s]
        u = plus(u, self.g_cells[s])
        da = F.concat(plus(u * g, gi) * (i * (1 - i)), plus(u * self.cin[s], gf) * (f * (1 - f)),
                      plus(u * i, gg) * (1 - g * g), plus(dh * tc, go) * (o * (1 - o)), dim=1)
        return da, F.dot(da, self.w["wh"]), u * f

    def pre_activation_grads(self, dnews, das):
        return self.F.concat(*das, dim=0), None


class _GRUTerms:
    """gru: saved gates r, z, n (activated) and hn = W_hn h + b_hn; h' = (1 - z) n + z h,
    n = tanh(x_n + r hn). Per step, with g_* the saved values' head gradients:
    d(pre-activation n) = (dnew (1 - z) + g_n)(1 - n^2), of r (d(n) hn + g_r) r (1 - r),
    of z (dnew (h - n) + g_z) z (1 - z), d(hn) = d(n) r + g_hn; the x part's gradient is
    (d r, d z, d n), the h part's (d r, d z, d hn), dh_in = dnew z + (d r, d z, d hn) W_h."""

    def __init__(self, direction, saved, gsaved, hin):
        F, t = direction.F, direction.t
        self.F, self.wh = F, direction.w["wh"]
        gates, hn = saved
        self.gates, self.hn, self.hin = (_parts(F, a, t, 0) for a in (gates, hn, hin))
        self.g_gates = _parts(F, direction.masked(gsaved[0]), t, 0)
        self.g_hn = _parts(F, direction.masked(gsaved[1]), t, 0)
        self.dxw = [None] * t

    def step(self, s, dnew, dc):
        F = self.F
        r, z, n = _gates(F, self.gates[s], 3)
        gr, gz, gn = _gates(F, self.g_gates[s], 3)          # None at first order
        dan = plus(dnew * (1 - z), gn) * (1 - n * n)
        dar = plus(dan * self.hn[s], gr) * (r * (1 - r))
        daz = plus(dnew * (self.hin[s] - n), gz) * (z * (1 - z))
        self.dxw[s] = F.concat(dar, daz, dan, dim=1)
        dhw = F.concat(dar, daz, plus(dan * r, self.g_hn[s]), dim=1)
        return dhw, dnew * z + F.dot(dhw, self.wh), None

    def pre_activation_grads(self, dnews, dhws):
        F = self.F
        return F.concat(*self.dxw, dim=0), F.concat(*dhws, dim=0)


def _graph_masks(F, node, t, n):
    """(T, N, 1): 1 where step t < sequence_length[b], a constant of the graph."""
    lengths = F.BlockGrad(F.cast(node.inputs[-1], dtype=node.input_dtypes[0]))
    steps = F.arange(0, t, dtype=node.input_dtypes[0], ctx=node.context)
    m = F.broadcast_lesser(F.reshape(steps, shape=(t, 1)), F.reshape(lengths, shape=(1, n)))
    return F.reshape(m, shape=(t, n, 1))


def _graph_weights(F, params, lay, k):
    out = {}
    for name, (off, shape) in lay.weights[k].items():
        size = math.prod(shape)
        out[name] = F.reshape(F.slice_axis(params, axis=0, begin=off, end=off + size),
                              shape=shape)
    return out


def _rnn_grad(F, node, ograds):
    """y, hy, cy = RNN(x, w, h0, c0): backpropagation through time from the values the
    forward pass saved as hidden outputs (each layer's outputs, the gates and cells of each
    step), with registered ops — per step the adjoint of the cell (lstm: dc' = dh o (1 -
    tanh^2 c) + dc, d(i, f, g, o) pre-activations, dh' = d(gates) W_h; gru with the reset
    gate applied to W_hn h + b_hn), the input and weight gradients as one GEMM each over
    all steps. The saved values are outputs of the op: their head gradients (zero at first
    order, not at higher orders, whose graphs read them) enter the same recurrence, so
    every order is exact. The dropout masks between layers are the forward pass's
    (constants); sequence_length gets no gradient."""
    attrs = node.attrs
    lstm = attrs.mode == "lstm"
    t, n, c = node.input_shapes[0]
    lay = _Layout(attrs, c)
    x, params, h0 = node.inputs[0], node.inputs[1], node.inputs[2]
    wants = node.wants
    if n == 0:                       # an empty batch: nothing depends on the inputs
        return [F.zeros_like(a) if w and name != "sequence_length" else None
                for a, w, name in zip(node.inputs, wants, _list_inputs(attrs))]
    want_w, want_x = wants[1], wants[0]
    masks = _graph_masks(F, node, t, n) if attrs.use_sequence_length else None
    kk = lay.L * lay.D
    h0s = _parts(F, h0, kk, 0)
    c0s = _parts(F, node.inputs[3], kk, 0) if lstm else [None] * kk
    slot_drop, below, gated = _saved_slots(attrs)
    outs = node.outputs
    # the states' head gradients as zeros where nothing sent one; the saved values' stay
    # None (none_ograds: at first order no zeros of every step's gates are made or added)
    ograds = [F.zeros(node.output_shapes[i], dtype=node.output_dtypes[i], ctx=node.context)
              if g is None and i < _num_state_outputs(attrs) else g
              for i, g in enumerate(ograds)]
    drop = outs[slot_drop] if _has_mask(attrs) else None
    ghys = _parts(F, ograds[1], kk, 0)
    gcys = _parts(F, ograds[2], kk, 0) if lstm else [None] * kk
    grads, dh0, dc0 = [None] * kk, [None] * kk, [None] * kk

    def layer_input(layer):
        if layer == 0:
            return x
        y = outs[below[layer - 1]]
        return y if drop is None else y * _pick(F, drop, layer - 1)

    def saved(values, k):
        return (values[gated[k][0]], values[gated[k][1]]) if gated else None

    g = ograds[0]
    for layer in reversed(range(lay.L)):
        last = layer == lay.L - 1
        y = outs[0] if last else outs[below[layer]]
        if not last:                 # the saved layer output's own head gradient
            g = plus(g, ograds[below[layer]])
        inp, ys, gparts = layer_input(layer), _blocks_of(F, y, lay.D), _blocks_of(F, g, lay.D)
        dx = None
        for d in range(lay.D):
            k = layer * lay.D + d
            direction = _Direction(F, attrs, lay, _graph_weights(F, params, lay, k), masks,
                                   d == 1, t, n)
            res = direction.backward(inp, ys[d], h0s[k], c0s[k], saved(outs, k), gparts[d],
                                     ghys[k], gcys[k], saved(ograds, k),
                                     want_dx=layer > 0 or want_x, want_w=want_w)
            if res[0] is not None:
                dx = res[0] if dx is None else dx + res[0]
            grads[k], dh0[k], dc0[k] = res[1], res[2], res[3]
        if layer > 0 and drop is not None:
            dx = dx * _pick(F, drop, layer - 1)
        g = dx
    out = [g if want_x else None]
    out.append(F.concat(*[F.reshape(grads[k][name], shape=(-1,)) for k, name in lay.names()],
                        dim=0) if want_w else None)
    out.append(F.stack(*dh0, axis=0) if wants[2] else None)
    if lstm:
        out.append(F.stack(*dc0, axis=0) if wants[3] else None)
    if attrs.use_sequence_length:
        out.append(None)
    return out


register(OpDef(
    "RNN", inputs=("data", "parameters", "state", "state_cell", "sequence_length"),
    list_inputs=_list_inputs,
    params=(Param("state_size", "int", REQUIRED, "size of the state of each layer"),
            Param("num_layers", "int", REQUIRED, "number of stacked layers"),
            Param("bidirectional", "bool", False, "bidirectional recurrent layers"),
            Param("mode", "str", REQUIRED, "the recurrence", choices=_MODES),
            Param("p", "float", 0.0, "dropout rate on the outputs of every layer but the "
                  "last, in training"),
            Param("state_outputs", "bool", False, "also return the final states"),
            Param("projection_size", "int", None, "LSTM projection size (LSTMP)"),
            Param("lstm_state_clip_min", "float", None, "lower clip of the LSTM cell state"),
            Param("lstm_state_clip_max", "float", None, "upper clip of the LSTM cell state"),
            Param("lstm_state_clip_nan", "bool", False, "NaN cell states become the lower "
                  "clip bound instead of propagating"),
            Param("use_sequence_length", "bool", False, "take per-sequence valid lengths")),
    infer_shape=_rnn_shape, infer_type=_rnn_type, compute={"cpu": _rnn_compute},
    backward_shape=_rnn_backward_shape, gradient=_rnn_grad,
    grad_needs=("inputs", "outputs"), num_outputs=_num_outputs,
    output_names=_output_names, num_visible_outputs=_num_visible,
    optional_outputs=_hidden_outputs, none_ograds=True,
    doc="""Fused recurrent layers (MXNet 1.9.1's ``RNN``): ``num_layers`` stacked layers of
``mode`` ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'`` over ``data`` (T, N, C) in
layout 'TNC', optionally bidirectional (the output joins the forward and backward
directions on the last axis). Inputs: ``parameters``, every weight and bias packed into
one vector in MXNet's layout (all weights layer by layer, direction by direction:
i2h (G*H, I), h2h (G*H, R), h2r (P, H) with a projection; then all biases i2h, h2h),
``state`` (L*D, N, R) and, for lstm, ``state_cell`` (L*D, N, H).

Gates: lstm ``i, f, g, o``; gru ``r, z, n`` with ``n = tanh(W_in x + b_in + r * (W_hn h +
b_hn))``, ``h' = (1 - z) n + z h``. ``projection_size`` (lstm) projects each output
``r = W_hr h`` (the recurrent state and output have size P). ``p`` drops the outputs of
every layer but the last in training. ``state_outputs`` also returns the final states
``hy`` (L*D, N, R) and ``cy`` (lstm). Where MXNet 1.9.1 on CPU silently ignored
``use_sequence_length``, ``lstm_state_clip_*`` (cuDNN only), mxlite implements them on
every device with cuDNN's semantics: step t of sequence b runs only while t <
sequence_length[b] (zeros are output past it, the backward direction starts at the last
valid step, and the final state is the one after the last valid step); the cell state is
clipped to [min, max] after each update, and with ``lstm_state_clip_nan`` a NaN cell state
becomes ``lstm_state_clip_min``. The gradient (any order) is a graph of registered ops.

>>> x = mx.nd.ones((2, 1, 1))
>>> w = mx.nd.array([0.5, 1.0, 0.0, 0.0])      # i2h W, h2h W, i2h b, h2h b
>>> mx.nd.RNN(x, w, mx.nd.zeros((1, 1, 1)), state_size=1, num_layers=1,
...           mode='rnn_relu').asnumpy().ravel().tolist()
[0.5, 1.0]
"""))


# ---- _rnn_param_concat --------------------------------------------------------------------------
def _param_concat_shape(shapes, attrs):
    return get_op("concat").infer_shape(shapes, attrs)


@partial_rule
def _param_concat_backward_shape(in_shapes, out_shapes, attrs):
    """MXNet's rule: the other dimensions shared; one or two inputs whose ``dim`` size is
    unknown share what the output's size leaves equally."""
    rank = known_rank(*in_shapes, *out_shapes)
    if rank is None or not -rank <= attrs.dim < rank:
        return list(in_shapes)
    axis = attrs.dim % rank
    common = None
    for s in list(in_shapes) + list(out_shapes):
        if s is not None and len(s) == rank:
            common = unify(common, s[:axis] + (None,) + s[axis + 1:], "_rnn_param_concat")
    sizes = [None if s is None else s[axis] for s in in_shapes]
    total = None if out_shapes[0] is None else out_shapes[0][axis]
    unknown = [i for i, d in enumerate(sizes) if d is None]
    if total is not None and unknown:
        rest = total - sum(d for d in sizes if d is not None)
        if rest < 0:
            raise op_error("_rnn_param_concat", f"the known inputs hold {total - rest} "
                           f"elements along dim={attrs.dim}, more than the output's {total}")
        if len(unknown) <= 2 and rest % len(unknown) == 0:
            for i in unknown:            # else left unknown (MXNet rounded down: wrong shapes)
                sizes[i] = rest // len(unknown)
    return [common[:axis] + (d,) + common[axis + 1:] for d in sizes]


def _register_param_concat():
    concat = get_op("concat")
    register(OpDef(
        "_rnn_param_concat", inputs=concat.inputs, variadic=True,
        key_var_num_args="num_args", params=concat.params,
        infer_shape=_param_concat_shape, infer_type=concat.infer_type,
        compute=dict(concat.compute), gradient=concat.gradient,
        backward_shape=_param_concat_backward_shape,
        doc="""``concat`` with MXNet's shape inference for packing RNN parameters (MXNet
1.9.1's ``_rnn_param_concat``, also ``_npi_rnn_param_concat``): one or two inputs whose size
along ``dim`` is unknown get equal shares of what the output's size leaves. Default
``dim=1``, as MXNet's; Gluon packs flattened parameters with ``dim=0``.

>>> a, b = mx.nd.ones((2,)), mx.nd.zeros((3,))
>>> mx.nd._internal._rnn_param_concat(a, b, dim=0).asnumpy().tolist()
[1.0, 1.0, 0.0, 0.0, 0.0]
"""))


_register_param_concat()


# Functions that compute on the host (tests/test_device.py reads this).
HOST_CODE = {
    "_step_masks": "the (T, N) step mask from a host copy of sequence_length, checked there "
                   "and sent with from_host",
}
