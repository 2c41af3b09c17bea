"""The fused recurrent operator RNN as ONNX RNN, LSTM and GRU nodes, one per layer.

MXNet packs every weight in one flat ``parameters`` input (the layout is in
``mxlite/ops/rnn.py``); the translation slices each layer's weights out of it inside the
graph (so the parameters stay an input or an initializer, as the user gave them) and
reorders the gates where ONNX's order differs: LSTM i, f, g, o (MXNet) -> i, o, f, c (ONNX),
GRU r, z, n -> z, r, h. MXNet's GRU applies the reset gate after the recurrent product,
ONNX's ``linear_before_reset=1``.
"""
import math

from ..table import translates
from ...ops.rnn import _Layout

# the MXNet gate block each ONNX gate block takes, per mode
_GATE_ORDER = {"lstm": (0, 3, 1, 2), "gru": (1, 0, 2), "rnn_relu": (0,), "rnn_tanh": (0,)}
_ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_relu": "RNN", "rnn_tanh": "RNN"}


@translates("RNN", onnx_ops=["RNN", "LSTM", "GRU", "Slice", "Reshape", "Gather", "Concat",
                             "Identity", "Transpose", "Cast"],
            notes="one ONNX node per layer, the weights sliced from ``parameters`` and the "
                  "gates reordered in the graph; inference (no dropout between layers); not "
                  "projection_size or lstm_state_clip_* (ONNX's LSTM has neither)")
def _rnn(ctx, node, ins, outs):
    a = node.attrs
    if a.projection_size is not None:
        raise ctx.unsupported(node, f"projection_size={a.projection_size}")
    if a.lstm_state_clip_min is not None or a.lstm_state_clip_max is not None:
        # ONNX's ``clip`` bounds the gates' inputs, not the cell state
        raise ctx.unsupported(node, f"lstm_state_clip_min={a.lstm_state_clip_min}, "
                                    f"lstm_state_clip_max={a.lstm_state_clip_max}")
    lay = _Layout(a, ctx.shape(node.inputs[0])[2])
    lstm = a.mode == "lstm"
    lengths = None
    if a.use_sequence_length:
        lengths = ctx.cast(ins[-1], "int32")
    x = ins[0]
    hs, cs = [], []
    for layer in range(lay.L):
        y, h, c = _layer(ctx, a, lay, layer, x, ins[1], ins[2], ins[3] if lstm else None,
                         lengths)
        hs.append(h)
        cs.append(c)
        last = layer == lay.L - 1
        x = _merge_directions(ctx, y, outs[0] if last else None)
    _concat_states(ctx, hs, outs[1] if len(outs) > 1 else None)
    if lstm and len(outs) > 2:
        _concat_states(ctx, cs, outs[2])


def _merge_directions(ctx, y, out):
    """ONNX's (T, D, N, H) output as MXNet's (T, N, D*H)."""
    moved = ctx.node("Transpose", [y], perm=[0, 2, 1, 3])
    return ctx.node("Reshape", [moved, ctx.int64s([0, 0, -1])], None if out is None else [out])


def _concat_states(ctx, states, out):
    """The per-layer (D, N, H) final states as MXNet's (L*D, N, H)."""
    if out is None:
        return
    if len(states) == 1:
        ctx.node("Identity", states, [out])
    else:
        ctx.node("Concat", states, [out], axis=0)


def _layer(ctx, a, lay, layer, x, params, state, state_cell, lengths):
    """One layer as one ONNX recurrent node: its (T, D, N, H) output and (D, N, H) states."""
    dirs = range(layer * lay.D, (layer + 1) * lay.D)
    w = _stack(ctx, [_weight(ctx, a.mode, lay, params, k, "wx") for k in dirs])
    r = _stack(ctx, [_weight(ctx, a.mode, lay, params, k, "wh") for k in dirs])
    b = _stack(ctx, [_bias(ctx, a.mode, lay, params, k) for k in dirs])
    rows = ctx.int64s([layer * lay.D]), ctx.int64s([(layer + 1) * lay.D])
    h0 = ctx.node("Slice", [state, *rows, ctx.int64s([0])])
    inputs = [x, w, r, b, lengths or "", h0]
    if state_cell is not None:
        inputs.append(ctx.node("Slice", [state_cell, *rows, ctx.int64s([0])]))
    while inputs[-1] == "":
        inputs.pop()
    attrs = dict(hidden_size=lay.H, direction="bidirectional" if lay.D == 2 else "forward")
    if a.mode == "gru":
        attrs["linear_before_reset"] = 1
    elif a.mode != "lstm":
        act = "Relu" if a.mode == "rnn_relu" else "Tanh"
        attrs["activations"] = [act] * lay.D
    n_out = 3 if a.mode == "lstm" else 2
    results = [ctx.fresh("y"), ctx.fresh("y_h"), ctx.fresh("y_c")][:n_out]
    ctx.node(_ONNX_OP[a.mode], inputs, results, **attrs)
    return results[0], results[1], results[2] if n_out == 3 else None


def _stack(ctx, per_direction):
    """(1, ...) per direction -> (D, ...)."""
    if len(per_direction) == 1:
        return per_direction[0]
    return ctx.node("Concat", per_direction, axis=0)


def _bias(ctx, mode, lay, params, k):
    """ONNX's (1, 2*G*H) bias of layer-direction ``k``: the input's, then the recurrence's."""
    both = ctx.node("Concat", [_weight(ctx, mode, lay, params, k, "bx"),
                               _weight(ctx, mode, lay, params, k, "bh")], axis=0)
    return ctx.node("Reshape", [both, ctx.int64s([1, -1])])


def _weight(ctx, mode, lay, params, k, name):
    """Weight ``name`` of layer-direction ``k`` from the flat parameters, gates in ONNX's
    order, with a leading axis of 1: (1, G*H, in) for a matrix, (G*H,) for a bias."""
    offset, shape = lay.weights[k][name]
    flat = ctx.node("Slice", [params, ctx.int64s([offset]),
                              ctx.int64s([offset + math.prod(shape)]), ctx.int64s([0])])
    blocks = ctx.node("Reshape", [flat, ctx.int64s((lay.G, lay.H) + shape[1:])])
    order = _GATE_ORDER[mode]
    if order != tuple(range(lay.G)):
        blocks = ctx.node("Gather", [blocks, ctx.int64s(order, base="gates")], axis=0)
    lead = (1,) if len(shape) == 2 else ()
    return ctx.node("Reshape", [blocks, ctx.int64s(lead + (shape[0],) + shape[1:])])
