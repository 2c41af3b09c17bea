"""The legacy symbolic RNN API (mx.rnn): unrolled cells against NumPy, the fused cell
against NumPy and its unfused stack, shapes inferred from the data alone, names, weights
per gate, checkpoints, the text iterator and the errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _sig(v):
    return 1 / (1 + np.exp(-v))


def _numpy_lstm(steps, wx, wh, bx, bh):
    """A one-layer LSTM over a list of (N, C) steps from zero states (gates i, f, c, o)."""
    n, hidden = steps[0].shape[0], wh.shape[1]
    h, c, outs = np.zeros((n, hidden)), np.zeros((n, hidden)), []
    for x in steps:
        i, f, g, o = np.split(x @ wx.T + bx + h @ wh.T + bh, 4, axis=1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return outs, h, c


def _weights(rng, gates, hidden, inputs):
    return {"i2h_weight": rng.uniform(-0.7, 0.7, (gates * hidden, inputs)),
            "h2h_weight": rng.uniform(-0.7, 0.7, (gates * hidden, hidden)),
            "i2h_bias": rng.uniform(-0.7, 0.7, (gates * hidden,)),
            "h2h_bias": rng.uniform(-0.7, 0.7, (gates * hidden,))}


def test_lstm_cell_unroll_against_numpy():
    rng = np.random.RandomState(0)
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    outs, (h, c) = cell.unroll(4, [mx.sym.var(f"t{i}") for i in range(4)])
    steps = [rng.uniform(-1, 1, (2, 5)) for _ in range(4)]
    w = _weights(rng, 4, 3, 5)
    feed = {f"t{i}": mx.nd.array(s) for i, s in enumerate(steps)}
    feed.update({f"l_{k}": mx.nd.array(v) for k, v in w.items()})
    got = mx.sym.Group(outs + [h, c]).eval(**feed)
    ref, rh, rc = _numpy_lstm(steps, w["i2h_weight"], w["h2h_weight"], w["i2h_bias"],
                              w["h2h_bias"])
    for g, r in zip(got, ref + [rh, rc]):
        np.testing.assert_allclose(g.asnumpy(), r, rtol=1e-5, atol=1e-6)


def test_gru_cell_step_against_numpy():
    rng = np.random.RandomState(1)
    cell = mx.rnn.GRUCell(3, prefix="g_")
    out, _ = cell(mx.sym.var("x"), [mx.sym.var("h")])
    x, h = rng.uniform(-1, 1, (2, 4)), rng.uniform(-1, 1, (2, 3))
    w = _weights(rng, 3, 3, 4)
    feed = {f"g_{k}": mx.nd.array(v) for k, v in w.items()}
    got = out.eval(x=mx.nd.array(x), h=mx.nd.array(h), **feed)[0].asnumpy()
    gx = x @ w["i2h_weight"].T + w["i2h_bias"]
    gh = h @ w["h2h_weight"].T + w["h2h_bias"]
    r, z = _sig(gx[:, :3] + gh[:, :3]), _sig(gx[:, 3:6] + gh[:, 3:6])
    ref = (1 - z) * np.tanh(gx[:, 6:] + r * gh[:, 6:]) + z * h
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_fused_cell_against_numpy_and_names():
    """FusedRNNCell is the RNN operator on its flat parameters (i2h, h2h weights, then the
    biases); unrolled without begin_state it infers every shape from the data."""
    rng = np.random.RandomState(2)
    cell = mx.rnn.FusedRNNCell(3, mode="lstm", prefix="f_", get_next_state=True)
    out, states = cell.unroll(4, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    group = mx.sym.Group([out] + states)
    args, shapes, _ = group.infer_shape(data=(2, 4, 5))
    assert shapes == [(2, 4, 3), (1, 2, 3), (1, 2, 3)]
    w = _weights(rng, 4, 3, 5)
    flat = np.concatenate([w[k].ravel() for k in ("i2h_weight", "h2h_weight", "i2h_bias",
                                                  "h2h_bias")])
    data = rng.uniform(-1, 1, (2, 4, 5))
    got = group.eval(data=mx.nd.array(data), f_parameters=mx.nd.array(flat))
    ref, rh, rc = _numpy_lstm([data[:, t] for t in range(4)], w["i2h_weight"],
                              w["h2h_weight"], w["i2h_bias"], w["h2h_bias"])
    np.testing.assert_allclose(got[0].asnumpy(), np.stack(ref, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2].asnumpy()[0], rc, rtol=1e-5, atol=1e-6)


def test_unfused_stack_names_and_shapes():
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode="gru", bidirectional=True, dropout=0.3,
                               prefix="u_").unfuse()
    outs, states = cell.unroll(3, [mx.sym.var(f"t{i}") for i in range(3)])
    group = mx.sym.Group(outs)
    assert group.list_outputs() == [f"u_bi_l1_t{i}_output" for i in range(3)]
    _, shapes, _ = group.infer_shape(t0=(5, 2), t1=(5, 2), t2=(5, 2))
    assert shapes == [(5, 8)] * 3 and len(states) == 4


def test_residual_bidirectional_and_zoneout_shapes():
    cell = mx.rnn.ResidualCell(mx.rnn.BidirectionalCell(mx.rnn.GRUCell(3, prefix="l_"),
                                                        mx.rnn.GRUCell(3, prefix="r_")))
    outs, _ = cell.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    feed = {f"{d}_{k}": mx.nd.zeros(s) for d in "lr" for k, s in
            (("i2h_weight", (9, 6)), ("h2h_weight", (9, 3)), ("i2h_bias", (9,)),
             ("h2h_bias", (9,)))}
    got = mx.sym.Group(outs).eval(a=mx.nd.ones((2, 6)), b=mx.nd.ones((2, 6)) * 2, **feed)
    # zero weights: each GRU direction outputs 0.5 * tanh(0) + 0.5 * h = 0; output = input
    np.testing.assert_array_equal(got[1].asnumpy(), np.full((2, 6), 2.0))
    zone = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(4, prefix="z_"), 0.5, 0.5)
    outs, _ = zone.unroll(3, mx.sym.var("data"), merge_outputs=True)
    assert outs.infer_shape(data=(2, 3, 5))[1] == [(2, 3, 4)]


def test_lstm_forget_bias_initializer():
    cell = mx.rnn.LSTMCell(2, prefix="b_", forget_bias=3.0)
    bias = cell.params.get("i2h_bias")
    arr = mx.nd.zeros((8,))
    # as Module initializes: the variable's __init__ attribute overrides the global init
    mx.init.Uniform()(mx.init.InitDesc("b_i2h_bias", attrs={"__init__": bias.attr("__init__")}),
                      arr)
    np.testing.assert_array_equal(arr.asnumpy(), [0, 0, 3, 3, 0, 0, 0, 0])


def test_unpack_pack_weights_and_checkpoint(tmp_path):
    cell = mx.rnn.LSTMCell(2, prefix="c_")
    args = {"c_i2h_weight": mx.nd.arange(24).reshape((8, 3)), "c_h2h_weight": mx.nd.ones((8, 2)),
            "c_i2h_bias": mx.nd.arange(8), "c_h2h_bias": mx.nd.zeros((8,))}
    unpacked = cell.unpack_weights(args)
    np.testing.assert_array_equal(unpacked["c_i2h_f_weight"].asnumpy(),
                                  np.arange(24).reshape(8, 3)[2:4])
    packed = cell.pack_weights(unpacked)
    assert set(packed) == set(args)
    np.testing.assert_array_equal(packed["c_i2h_weight"].asnumpy(),
                                  args["c_i2h_weight"].asnumpy())
    out, _ = cell.unroll(1, [mx.sym.var("x")])
    prefix = str(tmp_path / "m")
    mx.rnn.save_rnn_checkpoint(cell, prefix, 3, out[0], args, {})
    assert "arg:c_i2h_o_weight" in mx.nd.load(prefix + "-0003.params")
    _, arg, _ = mx.rnn.load_rnn_checkpoint(cell, prefix, 3)
    np.testing.assert_array_equal(arg["c_i2h_bias"].asnumpy(), np.arange(8))


@pytest.mark.parametrize("mode, bidirectional", [("lstm", True), ("gru", False),
                                                 ("rnn_tanh", True), ("rnn_relu", False)])
def test_fused_weights_unpack_into_the_unfused_stack(mode, bidirectional):
    """The flat parameters split per layer, direction and gate, packed into the unfused
    stack's cells, give that stack the fused operator's outputs."""
    cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=bidirectional,
                               prefix="f_")
    out, _ = cell.unroll(4, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    size = out.infer_shape(data=(4, 2, 5))[0][1]
    rng = np.random.RandomState(4)
    flat, data = mx.nd.array(rng.normal(size=size)), mx.nd.array(rng.normal(size=(4, 2, 5)))
    pieces = cell.unpack_weights({"f_parameters": flat})
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    dirs = 2 if bidirectional else 1
    assert len(pieces) == 2 * 2 * 2 * gates * dirs          # layers x (i2h, h2h) x (w, b)
    assert pieces["f_l0_i2h" + ("_i" if mode == "lstm" else "_r" if mode == "gru" else "")
                  + "_weight"].shape == (3, 5)
    assert pieces["f_l1_h2h" + ("_o" if gates > 1 else "") + "_weight"].shape == (3, 3)
    unfused = cell.unfuse()
    uout, _ = unfused.unroll(4, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    expect = out.eval(data=data, f_parameters=flat)[0].asnumpy()
    got = uout.eval(data=data, **unfused.pack_weights(pieces))[0].asnumpy()
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(cell.pack_weights(pieces)["f_parameters"].asnumpy(),
                                  flat.asnumpy())
    with pytest.raises(MXNetError, match="unpack_weights: 7 parameters"):
        cell.unpack_weights({"f_parameters": mx.nd.zeros((7,))})


def test_fused_rnn_initializer_sets_each_piece():
    cell = mx.rnn.FusedRNNCell(2, num_layers=1, mode="lstm", bidirectional=True,
                               forget_bias=2.5, prefix="g_")
    out, _ = cell.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    size = out.infer_shape(data=(3, 1, 4))[0][1]
    arr = mx.nd.full(size, 9.0)
    init = mx.init.FusedRNN(mx.init.One(), 2, 1, "lstm", True, forget_bias=2.5)
    init(mx.init.InitDesc("g_parameters", attrs={"__init__": init.dumps()}), arr)
    pieces = cell.unpack_weights({"g_parameters": arr})
    for name, piece in pieces.items():
        want = 2.5 if name.endswith("i2h_f_bias") else 0 if name.endswith("_bias") else 1
        np.testing.assert_array_equal(piece.asnumpy(), np.full(piece.shape, want), name)
    # the cell's variable carries it, so a global initializer meets it as MXNet's Module does
    attr = cell.params.get("parameters").attr("__init__")
    arr = mx.nd.zeros(size)
    mx.init.Uniform(0.5)(mx.init.InitDesc("g_parameters", attrs={"__init__": attr}), arr)
    pieces = cell.unpack_weights({"g_parameters": arr})
    assert np.all(pieces["g_r0_i2h_f_bias"].asnumpy() == 2.5)
    assert np.all(pieces["g_l0_h2h_o_bias"].asnumpy() == 0)
    weights = pieces["g_r0_h2h_c_weight"].asnumpy()
    assert np.all(np.abs(weights) <= 0.5) and np.unique(weights).size == weights.size


def test_errors():
    with pytest.raises(MXNetError, match="cannot be stepped"):
        mx.rnn.FusedRNNCell(3)(mx.sym.var("x"), [])
    with pytest.raises(MXNetError, match="mode"):
        mx.rnn.FusedRNNCell(3, mode="elman")
    with pytest.raises(MXNetError, match="expected 3 step inputs, got 2"):
        mx.rnn.RNNCell(3).unroll(3, [mx.sym.var("a"), mx.sym.var("b")])
    with pytest.raises(MXNetError, match="layout"):
        mx.rnn.RNNCell(3).unroll(3, mx.sym.var("a"), layout="CTN")
    base = mx.rnn.GRUCell(2)
    mx.rnn.ResidualCell(base)
    with pytest.raises(MXNetError, match="already modified"):
        mx.rnn.ZoneoutCell(base)
    with pytest.raises(MXNetError, match="modifier"):
        base.begin_state()


def test_conv_rnn_cell_step_against_numpy():
    """ConvRNNCell: leaky_relu(conv_i2h(x) + conv_h2h(h)) with 'same' 3x3 convolutions; the
    zero states take their batch from the data."""
    rng = np.random.RandomState(4)
    cell = mx.rnn.ConvRNNCell(input_shape=(1, 2, 4, 5), num_hidden=3, prefix="cr_")
    assert cell.state_info[0]["shape"] == (0, 3, 4, 5)
    outs, _ = cell.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    w = {"cr_i2h_weight": rng.uniform(-1, 1, (3, 2, 3, 3)), "cr_i2h_bias": rng.uniform(-1, 1, 3),
         "cr_h2h_weight": rng.uniform(-1, 1, (3, 3, 3, 3)), "cr_h2h_bias": rng.uniform(-1, 1, 3)}
    xs = [rng.uniform(-1, 1, (2, 2, 4, 5)) for _ in range(2)]
    got = mx.sym.Group(outs).eval(a=mx.nd.array(xs[0]), b=mx.nd.array(xs[1]),
                                  **{k: mx.nd.array(v) for k, v in w.items()})

    def conv(x, weight, bias):          # 'same' 3x3 cross-correlation, NCHW
        pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((x.shape[0], weight.shape[0]) + x.shape[2:])
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", pad[:, :, i:i + x.shape[2], j:j + x.shape[3]],
                                 weight[:, :, i, j])
        return out + bias[None, :, None, None]

    h = np.zeros((2, 3, 4, 5))
    for x, g in zip(xs, got):
        v = conv(x, w["cr_i2h_weight"], w["cr_i2h_bias"]) + conv(h, w["cr_h2h_weight"],
                                                                 w["cr_h2h_bias"])
        h = np.where(v > 0, v, 0.2 * v)
        np.testing.assert_allclose(g.asnumpy(), h, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [mx.rnn.ConvLSTMCell, mx.rnn.ConvGRUCell])
def test_conv_gated_cells_shapes(make):
    cell = make(input_shape=(1, 3, 8, 6), num_hidden=4, i2h_stride=(2, 2), prefix="c_")
    outs, states = cell.unroll(2, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    _, shapes, _ = mx.sym.Group([outs] + states).infer_shape(data=(2, 5, 3, 8, 6))
    assert shapes[0] == (2, 5, 4, 4, 3) and all(s == (5, 4, 4, 3) for s in shapes[1:])
    with pytest.raises(MXNetError, match="h2h_kernel must be odd"):
        make(input_shape=(1, 3, 8, 6), num_hidden=4, h2h_kernel=(2, 2))
