"""The fused recurrent operator RNN (rnn_relu, rnn_tanh, lstm, gru) with MXNet's packed parameter
layout, and ``_rnn_param_concat`` (the concat Gluon packs the parameters with).

Layout of ``parameters`` (MXNet 1.9.1's, checked against its ``gluon.rnn`` layers): first every
weight, layer by layer and within a layer direction by direction (forward, then backward):
``i2h`` (G*H, I), ``h2h`` (G*H, R) and, for an LSTM with ``projection_size`` P, ``h2r``
(P, H); then every bias in the same order: ``i2h`` (G*H,), ``h2h`` (G*H,). G is the number of
gates (1, 4 for lstm in the order i, f, g, o, 3 for gru in the order r, z, n), H is
``state_size``, R the recurrent size (P with a projection, else H) and I the layer's input
size (C for the first layer, D*R above it, D the number of directions).

The forward pass is NumPy/CuPy through the device namespace: one GEMM projects the whole
sequence's inputs, then one GEMM per step for the recurrence; the activations are the
registered ``sigmoid``/``tanh``/``relu`` kernels of the same device, so one function serves
every device. The gradient is a graph of registered ops: it replays the forward pass with
those ops (FullyConnected, split, sigmoid, tanh, ...) and runs backpropagation through time
with them, so gradients of every order (a gradient penalty through an LSTM) work.
"""
import math

import numpy as np

from ..base import op_error
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


def _num_outputs(attrs):
    """out, hy, (cy for lstm), the dropout mask: every state is computed, the visible count
    follows state_outputs."""
    return 3 + (attrs.get("mode") == "lstm")


def _num_visible(attrs):
    return (2 + (attrs.get("mode") == "lstm")) if attrs.state_outputs else 1


def _output_names(attrs):
    names = ["output", "state_output"]
    if attrs.get("mode") == "lstm":
        names.append("statecell_output")
    return tuple(names) + ("dropout_mask",)


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
    """One direction of one layer: the per-step state update of a mode, on device arrays."""

    def __init__(self, rctx, attrs, lay, w):
        self.rctx, self.attrs, self.lay, self.w = rctx, attrs, lay, w

    def step(self, a, h, c, hw):
        """The new (output, c) from the pre-activation ``a`` = x W_x^T + biases + h W_h^T (rnn,
        lstm) or ``a`` = x W_x^T + b_x and ``hw`` = h W_h^T + b_h (gru)."""
        mode, rctx, H = self.attrs.mode, self.rctx, self.lay.H
        if mode in ("rnn_tanh", "rnn_relu"):
            # a new array: ``a`` is the buffer the next step's product writes into
            return _act(rctx, "tanh" if mode == "rnn_tanh" else "relu", a), None
        if mode == "gru":
            s = a[:, :2 * H] + hw[:, :2 * H]
            _act(rctx, "sigmoid", s, s)
            r, z = s[:, :H], s[:, H:]
            n = a[:, 2 * H:] + r * hw[:, 2 * H:]
            _act(rctx, "tanh", n, n)
            return n + z * (h - n), None
        sig, th = _act(rctx, "sigmoid", a), _act(rctx, "tanh", a)
        c = sig[:, H:2 * H] * c + sig[:, :H] * th[:, 2 * H:3 * H]
        c = self._clip(c)
        h = sig[:, 3 * H:] * _act(rctx, "tanh", c)
        if self.lay.P is not None:
            r = self.rctx.xp.empty((h.shape[0], self.lay.P), h.dtype)
            self.rctx.xp.matmul(h, self.w["wr"].T, r)
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


def _run_direction(rctx, attrs, lay, w, x, h0, c0, masks, y, reverse):
    """One direction of one layer over the whole sequence: writes its outputs into ``y``
    (T, N, R) view, returns the final (h, c)."""
    xp = rctx.xp
    t, n, _ = x.shape
    gh = lay.G * lay.H
    xw = xp.empty((t * n, gh), x.dtype)
    xp.matmul(x.reshape(t * n, -1), w["wx"].T, xw)
    xw += w["bx"]
    if attrs.mode != "gru":
        xw += w["bh"]            # both biases enter every gate alike: fold them in once
    xw = xw.reshape(t, n, gh)
    cell = _Cell(rctx, attrs, lay, w)
    h, c = h0, c0
    hw = xp.empty((n, gh), x.dtype)
    for i in range(t):
        s = t - 1 - i if reverse else i
        xp.matmul(h, w["wh"].T, hw)
        if attrs.mode == "gru":
            hw += w["bh"]
            a = xw[s]
        else:
            hw += xw[s]
            a = hw
        h_new, c_new = cell.step(a, h, c, hw)
        if masks is None:
            h, c = h_new, c_new
            xp.copyto(y[s], h_new)
        else:
            m = masks[s]
            xp.copyto(y[s], h_new * m)
            h = h + m * (h_new - h)
            if c is not None:
                c = c + m * (c_new - c)
    return h, c


def _blocks(n, per_item):
    """Slices of the ``n`` sequences of a batch, each about ``_BLOCK`` scratch elements (the
    recurrence of one sequence does not read another's, so blocks bound the scratch memory
    whatever the batch)."""
    step = max(1, _BLOCK // max(per_item, 1))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _rnn_compute(rctx, ins, outs, attrs):
    x, params, h0 = ins[0], ins[1], ins[2]
    lstm = attrs.mode == "lstm"
    t, n, c = x.shape
    lay = _Layout(attrs, c)
    masks = _step_masks(rctx, ins[-1], t, n, x.dtype) if attrs.use_sequence_length else None
    for b in _blocks(n, t * max(lay.G * lay.H, lay.D * lay.R, c)):
        _run_layers(rctx, attrs, lay, params, x[:, b], h0[:, b], ins[3][:, b] if lstm else None,
                    None if masks is None else masks[:, b],
                    [o[:, b] for o in outs[:-1]], outs[-1][:, :, b] if _has_mask(attrs) else None)


def _run_layers(rctx, attrs, lay, params, x, h0, c0, masks, outs, drop_mask):
    """Every layer over one block of sequences: ``outs`` (out, hy[, cy]) and the dropout
    masks between layers are views of the op's outputs."""
    xp = rctx.xp
    t, n, _ = x.shape
    inp = x
    for layer in range(lay.L):
        last = layer == lay.L - 1
        y = outs[0] if last else xp.empty((t, n, lay.D * lay.R), x.dtype)
        for d in range(lay.D):
            k = layer * lay.D + d
            h, cell = _run_direction(rctx, attrs, lay, _weights(params, lay, k), inp, h0[k],
                                     None if c0 is None else c0[k], masks,
                                     y[:, :, d * lay.R:(d + 1) * lay.R], reverse=d == 1)
            xp.copyto(outs[1][k], h)
            if c0 is not None:
                xp.copyto(outs[2][k], cell)
        if not last and drop_mask is not None:
            drop = get_op("Dropout")
            m = xp.empty(y.shape, y.dtype)
            drop.compute[rctx.kernels](rctx, [y], [y, m], drop.parse_attrs({"p": attrs.p}))
            xp.copyto(drop_mask[layer], m)
        inp = y


# ---- gradient: the forward pass replayed with registered ops, then BPTT with them ---------------
def _parts(F, x, num, axis):
    """``x`` split into ``num`` parts along ``axis``, the axis removed, as a list."""
    if num == 1:
        return [_squeeze(F, x, axis)]
    s = F.split(x, num_outputs=num, axis=axis, squeeze_axis=True)
    return [s[i] for i in range(num)]


def _squeeze(F, x, axis):
    """``x`` without its axis ``axis`` of length 1 (split's gradient is concat)."""
    return F.split(x, num_outputs=1, axis=axis, squeeze_axis=True)


def _gates(F, a, num):
    """The ``num`` gate blocks of a (N, num * H) pre-activation."""
    if num == 1:
        return [a]
    s = F.split(a, num_outputs=num, axis=1)
    return [s[i] for i in range(num)]


class _GraphDirection:
    """One direction of one layer written with registered ops: ``forward`` records what
    ``backward`` (backpropagation through time) needs, per step."""

    def __init__(self, F, attrs, lay, w, masks, reverse):
        self.F, self.attrs, self.lay, self.w = F, attrs, lay, w
        self.masks, self.reverse = masks, reverse

    def forward(self, x, h0, c0, t, n, inp):
        F, lay, mode = self.F, self.lay, self.attrs.mode
        gh = lay.G * lay.H
        self.x2 = F.reshape(x, shape=(t * n, inp))
        bias = self.w["bx"] if mode == "gru" else self.w["bx"] + self.w["bh"]
        xw = F.FullyConnected(self.x2, self.w["wx"], bias, num_hidden=gh)
        xws = _parts(F, F.reshape(xw, shape=(t, n, gh)), t, 0)
        self.steps, outs = [None] * t, [None] * t
        h, c = h0, c0
        for i in range(t):
            s = t - 1 - i if self.reverse else i
            st = {"hin": h, "cin": c}
            h_new, c_new = self._cell(st, xws[s], h, c)
            m = None if self.masks is None else self.masks[s]
            st["m"] = m
            if m is None:
                outs[s], h, c = h_new, h_new, c_new
            else:
                outs[s] = F.broadcast_mul(h_new, m)
                h = h + F.broadcast_mul(m, h_new - h)
                c = None if c is None else c + F.broadcast_mul(m, c_new - c)
            self.steps[s] = st
        self.y = F.stack(*outs, axis=0)
        return self.y, h, c

    def _cell(self, st, xw, h, c):
        F, mode, lay = self.F, self.attrs.mode, self.lay
        if mode == "gru":
            hw = F.FullyConnected(h, self.w["wh"], self.w["bh"], num_hidden=lay.G * lay.H)
            xr, xz, xn = _gates(F, xw, 3)
            hr, hz, hn = _gates(F, hw, 3)
            r, z = F.sigmoid(xr + hr), F.sigmoid(xz + hz)
            nn = F.tanh(xn + r * hn)
            st.update(r=r, z=z, n=nn, hn=hn)
            return nn + z * (h - nn), None
        a = xw + F.FullyConnected(h, self.w["wh"], no_bias=True, num_hidden=lay.G * lay.H)
        if mode == "rnn_tanh":
            st["h"] = F.tanh(a)
            return st["h"], None
        if mode == "rnn_relu":
            st["h"] = F.relu(a)
            return st["h"], None
        ai, af, ag, ao = _gates(F, a, 4)
        i, f, g, o = F.sigmoid(ai), F.sigmoid(af), F.tanh(ag), F.sigmoid(ao)
        craw = f * c + i * g
        lo, hi = self.attrs.lstm_state_clip_min, self.attrs.lstm_state_clip_max
        cn = craw if lo is None else F.clip(craw, lo, hi)
        tc = F.tanh(cn)
        hh = o * tc
        st.update(i=i, f=f, g=g, o=o, tc=tc, hh=hh)
        if lo is not None:
            st["cmask"] = F.BlockGrad((craw >= lo) * (craw <= hi))
        if lay.P is not None:
            return F.FullyConnected(hh, self.w["wr"], no_bias=True, num_hidden=lay.P), cn
        return hh, cn

    def backward(self, gy, ghy, gcy, t, n, inp, want_dx, want_w):
        """Gradients of this direction's outputs ``gy`` (T, N, R) and final states:
        (dx, {weight name: gradient}, dh0, dc0)."""
        F, lay, mode = self.F, self.lay, self.attrs.mode
        gys = _parts(F, gy, t, 0)
        dxw, dhw, dr = [None] * t, [None] * t, [None] * t
        dh, dc = ghy, gcy
        for i in range(t):
            s = i if self.reverse else t - 1 - i          # the processing order, reversed
            st = self.steps[s]
            m = st["m"]
            if m is None:
                dnew, dpass = dh + gys[s], None
                dcnew, dcpass = dc, None
            else:
                dnew = F.broadcast_mul(m, dh + gys[s])
                dpass = dh - F.broadcast_mul(m, dh)
                dcnew = None if dc is None else F.broadcast_mul(m, dc)
                dcpass = None if dc is None else dc - dcnew
            dxw[s], dhw[s], dh, dc, dr[s] = self._cell_backward(st, dnew, dcnew)
            if dpass is not None:
                dh = dh + dpass
                dc = None if dc is None else dc + dcpass
        gh = lay.G * lay.H
        dxw2 = F.reshape(F.stack(*dxw, axis=0), shape=(t * n, gh))
        grads = {}
        if want_w:
            hin2 = F.reshape(F.stack(*[st["hin"] for st in self.steps], axis=0),
                             shape=(t * n, lay.R))
            dhw2 = dxw2 if mode != "gru" else F.reshape(F.stack(*dhw, axis=0), shape=(t * n, gh))
            grads["wx"] = F.dot(dxw2, self.x2, transpose_a=True)
            grads["wh"] = F.dot(dhw2, hin2, transpose_a=True)
            grads["bx"] = F.sum(dxw2, axis=0)
            grads["bh"] = grads["bx"] if mode != "gru" else F.sum(dhw2, axis=0)
            if lay.P is not None:
                hh2 = F.reshape(F.stack(*[st["hh"] for st in self.steps], axis=0),
                                shape=(t * n, lay.H))
                dr2 = F.reshape(F.stack(*dr, axis=0), shape=(t * n, lay.P))
                grads["wr"] = F.dot(dr2, hh2, transpose_a=True)
        dx = F.reshape(F.dot(dxw2, self.w["wx"]), shape=(t, n, inp)) if want_dx else None
        return dx, grads, dh, dc

    def _cell_backward(self, st, dnew, dc):
        """One step's adjoint: (d pre-activation of the x part, of the h part, d h_in, d c_in,
        d projection output)."""
        F, mode, w = self.F, self.attrs.mode, self.w
        if mode == "rnn_tanh":
            da = dnew * (1 - F.square(st["h"]))
            return da, da, F.dot(da, w["wh"]), None, None
        if mode == "rnn_relu":
            da = dnew * F.BlockGrad(st["h"] > 0)
            return da, da, F.dot(da, w["wh"]), None, None
        if mode == "gru":
            r, z, nn, hn, hin = st["r"], st["z"], st["n"], st["hn"], st["hin"]
            dn = dnew * (1 - z)
            dan = dn * (1 - F.square(nn))
            dar = dan * hn * r * (1 - r)
            daz = dnew * (hin - nn) * z * (1 - z)
            dxw = F.concat(dar, daz, dan, dim=1)
            dhw = F.concat(dar, daz, dan * r, dim=1)
            return dxw, dhw, dnew * z + F.dot(dhw, w["wh"]), None, None
        dr = None
        dh = dnew
        if self.lay.P is not None:
            dr, dh = dnew, F.dot(dnew, w["wr"])
        i, f, g, o, tc = st["i"], st["f"], st["g"], st["o"], st["tc"]
        dcell = dh * o * (1 - F.square(tc))
        dcell = dcell if dc is None else dcell + dc
        if "cmask" in st:
            dcell = dcell * st["cmask"]
        da = F.concat(dcell * g * i * (1 - i), dcell * st["cin"] * f * (1 - f),
                      dcell * i * (1 - F.square(g)), dh * tc * o * (1 - o), dim=1)
        return da, da, F.dot(da, w["wh"]), dcell * f, dr


def _graph_masks(F, node, t, n):
    """Step masks (N, 1) per step from sequence_length, constants of the graph."""
    lengths = F.BlockGrad(F.cast(node.inputs[-1], dtype=node.input_dtypes[0]))
    steps = F.arange(0, t, dtype=node.input_dtypes[0], ctx=node.context)
    m = F.broadcast_lesser(F.reshape(steps, shape=(t, 1)), F.reshape(lengths, shape=(1, n)))
    return _parts(F, F.reshape(m, shape=(t, n, 1)), t, 0)


def _graph_weights(F, params, lay, k):
    out = {}
    for name, (off, shape) in lay.weights[k].items():
        size = math.prod(shape)
        out[name] = F.reshape(F.slice_axis(params, axis=0, begin=off, end=off + size),
                              shape=shape)
    return out


def _rnn_grad(F, node, ograds):
    """y, hy, cy = RNN(x, w, h0, c0): the forward pass replayed with registered ops
    (FullyConnected, split, sigmoid, tanh, ...), then backpropagation through time with
    them — per step the adjoint of the cell (lstm: dc = dh o (1 - tanh^2 c) + dc',
    d(i, f, g, o) pre-activations, dh' = d(gates) W_h; gru with the reset gate applied to
    W_hn h + b_hn), the weight gradients as one GEMM over all steps. The dropout masks
    between layers are the forward pass's (a hidden output, constant); sequence_length
    gets no gradient."""
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
    drop = node.outputs[-1] if _has_mask(attrs) else None
    dirs, inp = [], x
    for layer in range(lay.L):
        ys = []
        for d in range(lay.D):
            k = layer * lay.D + d
            gd = _GraphDirection(F, attrs, lay, _graph_weights(F, params, lay, k), masks, d == 1)
            y, _, _ = gd.forward(inp, h0s[k], c0s[k], t, n, lay.input_size(layer))
            dirs.append(gd)
            ys.append(y)
        inp = ys[0] if lay.D == 1 else F.concat(*ys, dim=2)
        if drop is not None and layer < lay.L - 1:
            inp = inp * _squeeze(F, F.slice_axis(drop, axis=0, begin=layer, end=layer + 1), 0)
    ghys = _parts(F, ograds[1], kk, 0)
    gcys = _parts(F, ograds[2], kk, 0) if lstm else [None] * kk
    grads, dh0, dc0 = [None] * kk, [None] * kk, [None] * kk
    g = ograds[0]
    for layer in reversed(range(lay.L)):
        if drop is not None and layer < lay.L - 1:
            g = g * _squeeze(F, F.slice_axis(drop, axis=0, begin=layer, end=layer + 1), 0)
        gparts = [g] if lay.D == 1 else _split_last(F, g, lay.D)
        dx = None
        for d in range(lay.D):
            k = layer * lay.D + d
            res = dirs[k].backward(gparts[d], ghys[k], gcys[k], t, n, lay.input_size(layer),
                                   want_dx=layer > 0 or want_x, want_w=want_w)
            if res[0] is not None:
                dx = res[0] if dx is None else dx + res[0]
            grads[k], dh0[k], dc0[k] = res[1], res[2], res[3]
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


def _split_last(F, g, num):
    """The ``num`` direction blocks of a (T, N, num * R) gradient."""
    s = F.split(g, num_outputs=num, axis=2)
    return [s[i] for i in range(num)]


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
