"""gluon.rnn's fused layers (RNN, LSTM, GRU): values and gradients against MXNet 1.9.1
(``tests/fixtures/make_gluon_rnn_fixture.py``, loading MXNet's own parameter files), the
packing against the operator, the states, layouts, deferred shapes, sequence lengths and the
errors."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import rnn

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "gluon_rnn_mxnet.npz")

LAYERS = {
    "rnn_tanh": lambda: rnn.RNN(5, num_layers=2, activation="tanh"),
    "rnn_relu_bi": lambda: rnn.RNN(4, bidirectional=True, layout="NTC"),
    "lstm_bi": lambda: rnn.LSTM(4, num_layers=2, bidirectional=True),
    "lstm_proj": lambda: rnn.LSTM(5, num_layers=2, projection_size=3),
    "gru_bi": lambda: rnn.GRU(4, num_layers=2, bidirectional=True, layout="NTC"),
}


def fixture_case(case):
    """The arrays of one fixture case, keys without the ``<case>/`` prefix."""
    with np.load(FIXTURE) as data:
        return {k.split("/", 1)[1]: data[k] for k in data.files if k.startswith(case + "/")}


def check_against_fixture(block, case, run, tmp_path):
    """Load MXNet's parameter file into ``block``, run ``run(x, states)`` (-> (out,
    states)) under record on the fixture's inputs, backprop its heads, compare every value
    and gradient with MXNet's."""
    ref = fixture_case(case)
    path = str(tmp_path / f"{case}.params")
    ref["params"].tofile(path)
    block.load_parameters(path)
    x = mx.nd.array(ref["x"])
    states = [mx.nd.array(ref[f"state{k}"]) for k in range(_count(ref, "state"))]
    kwargs = {}
    if "valid_length" in ref:
        kwargs["valid_length"] = mx.nd.array(ref["valid_length"])
    trained = "grad:x" in ref
    for a in [x] + states:
        a.attach_grad()
    with mx.autograd.record(train_mode=trained):
        out, new_states = run(x, states, **kwargs)
        results = [out] + list(new_states)
        loss = mx.nd.add_n(*[(r * mx.nd.array(ref[f"head{k}"])).sum()
                             for k, r in enumerate(results)]) if trained else None
    assert len(results) == _count(ref, "result")
    for k, r in enumerate(results):
        np.testing.assert_allclose(r.asnumpy(), ref[f"result{k}"], rtol=1e-4, atol=1e-5,
                                   err_msg=f"{case} result{k}")
    if not trained:
        return
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), ref["grad:x"], rtol=1e-4, atol=1e-5)
    for k, s in enumerate(states):
        np.testing.assert_allclose(s.grad.asnumpy(), ref[f"grad:state{k}"], rtol=1e-4,
                                   atol=1e-5, err_msg=f"{case} grad:state{k}")
    params = block._collect_params_with_prefix()
    assert {f"grad:{k}" for k in params} == {k for k in ref if k.startswith("grad:")} - {
        "grad:x"} - {f"grad:state{k}" for k in range(len(states))}
    for key, p in params.items():
        np.testing.assert_allclose(p.grad().asnumpy(), ref[f"grad:{key}"], rtol=1e-4,
                                   atol=1e-5, err_msg=f"{case} grad:{key}")


def _count(ref, stem):
    return sum(1 for k in ref if k.startswith(stem) and k[len(stem):].isdigit())


@pytest.mark.parametrize("case", sorted(LAYERS))
@pytest.mark.parametrize("hybridize", [False, True])
def test_layer_matches_mxnet(case, hybridize, tmp_path):
    layer = LAYERS[case]()
    layer.initialize()
    if hybridize:
        layer.hybridize()
    check_against_fixture(layer, case, lambda x, s: layer(x, s), tmp_path)


# ---- the packing, against the operator ---------------------------------------------------------
def test_packing_is_the_operators_layout():
    """The layer's output is F.RNN's on the parameters concatenated in MXNet's order (all
    weights, then all biases; layer, direction, i2h/h2h)."""
    layer = rnn.GRU(3, num_layers=2, bidirectional=True, input_size=2)
    layer.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.uniform(shape=(4, 2, 2))
    h = mx.nd.random.uniform(shape=(4, 2, 3))
    p = layer.collect_params()
    order = [f"{d}{l}_{g}_{t}" for t in ("weight", "bias") for l in range(2) for d in "lr"
             for g in ("i2h", "h2h")]
    flat = mx.nd.concat(*[p[layer.prefix + n].data().reshape(-1) for n in order], dim=0)
    out, hn = mx.nd.RNN(x, flat, h, state_size=3, num_layers=2, bidirectional=True,
                        mode="gru", state_outputs=True)
    got, [got_h] = layer(x, [h])
    np.testing.assert_array_equal(got.asnumpy(), out.asnumpy())
    np.testing.assert_array_equal(got_h.asnumpy(), hn.asnumpy())


def _numpy_lstm(x, h, c, wx, wh, bx, bh, clip=None):
    """A one-layer LSTM over (T, N, C) in NumPy (gates i, f, g, o; the cell state clipped
    to ``clip`` = (lo, hi) at every step)."""
    def sig(v):
        return 1 / (1 + np.exp(-v))
    outs = []
    for t in range(x.shape[0]):
        g = x[t] @ wx.T + bx + h @ wh.T + bh
        i, f, gg, o = np.split(g, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(gg)
        if clip is not None:
            c = np.clip(c, *clip)
        h = sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def test_lstm_against_numpy_and_ntc_layout():
    layer = rnn.LSTM(3, layout="NTC")
    layer.initialize(mx.init.Uniform(0.7))
    x = np.random.RandomState(1).uniform(-1, 1, (2, 5, 4)).astype(np.float32)
    out = layer(mx.nd.array(x))                 # deferred input size, states made
    assert layer.l0_i2h_weight.shape == (12, 4)
    p = {k: v.data().asnumpy() for k, v in layer._reg_params.items()}
    ref, _, _ = _numpy_lstm(x.transpose(1, 0, 2), np.zeros((2, 3)), np.zeros((2, 3)),
                            p["l0_i2h_weight"], p["l0_h2h_weight"], p["l0_i2h_bias"],
                            p["l0_h2h_bias"])
    np.testing.assert_allclose(out.asnumpy(), ref.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)


def test_lstm_state_clip_against_numpy():
    """The cell state is clipped at every step (MXNet 1.9.1 clipped on cuDNN only; its CPU
    operator ignored the bounds)."""
    layer = rnn.LSTM(3, input_size=2, state_clip_min=-0.2, state_clip_max=0.25)
    layer.initialize()
    rng = np.random.RandomState(2)
    for p in layer.collect_params().values():      # large weights: the bounds are reached
        p.set_data(mx.nd.array(rng.uniform(-1.5, 1.5, p.shape)))
    x, h, c = (rng.uniform(-2, 2, s).astype(np.float32) for s in ((6, 4, 2), (1, 4, 3),
                                                                  (1, 4, 3)))
    out, (hn, cn) = layer(mx.nd.array(x), [mx.nd.array(h), mx.nd.array(c)])
    p = {k: v.data().asnumpy() for k, v in layer._reg_params.items()}
    ref, rh, rc = _numpy_lstm(x, h[0], c[0], p["l0_i2h_weight"], p["l0_h2h_weight"],
                              p["l0_i2h_bias"], p["l0_h2h_bias"], clip=(-0.2, 0.25))
    assert rc.max() == pytest.approx(0.25) and rc.min() == pytest.approx(-0.2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cn.asnumpy()[0], rc, rtol=1e-5, atol=1e-6)


def test_sequence_length_gives_each_sequences_last_state():
    """With use_sequence_length, sequence b's states are those after its own length (the
    layer run on the sequence cut there) and its padded outputs are zero."""
    layer = rnn.LSTM(3, input_size=2, use_sequence_length=True)
    layer.initialize(mx.init.Uniform(0.7))
    plain = rnn.LSTM(3, input_size=2, params=layer.collect_params(), prefix=layer.prefix)
    x = mx.nd.random.uniform(-1, 1, shape=(5, 2, 2))
    lengths = [2, 5]
    out, (h, c) = layer(x, layer.begin_state(2), sequence_length=mx.nd.array(lengths))
    for b, n in enumerate(lengths):
        ref, (rh, rc) = plain(x[:n, b:b + 1], plain.begin_state(1))
        np.testing.assert_allclose(out.asnumpy()[:n, b], ref.asnumpy()[:, 0], rtol=1e-5)
        assert not out.asnumpy()[n:, b].any()
        np.testing.assert_allclose(h.asnumpy()[:, b], rh.asnumpy()[:, 0], rtol=1e-5)
        np.testing.assert_allclose(c.asnumpy()[:, b], rc.asnumpy()[:, 0], rtol=1e-5)


# ---- states, calls, files ----------------------------------------------------------------------
def test_state_info_and_begin_state():
    layer = rnn.LSTM(5, num_layers=2, bidirectional=True, projection_size=3, prefix="l_")
    assert [i["shape"] for i in layer.state_info(7)] == [(4, 7, 3), (4, 7, 5)]
    assert layer.state_info()[0]["__layout__"] == "LNC"
    h, c = layer.begin_state(7, func=mx.nd.ones, dtype="float64")
    assert h.shape == (4, 7, 3) and c.dtype == np.float64 and h.asnumpy().all()
    s = rnn.GRU(2, prefix="g_").begin_state(0, func=mx.sym.var)
    assert [v.name for v in s] == ["g_h0_0"]


@pytest.mark.parametrize("hybridize", [False, True])
def test_call_with_and_without_states(hybridize):
    """Without states the call returns the output only, with states (a list or one array)
    (output, states); a hybridized layer serves both kinds of call."""
    layer = rnn.RNN(4, input_size=3)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    x = mx.nd.random.uniform(shape=(2, 3, 3))
    out = layer(x)
    assert isinstance(out, mx.nd.NDArray) and out.shape == (2, 3, 4)
    out2, states = layer(x, mx.nd.zeros((1, 3, 4)))
    np.testing.assert_array_equal(out.asnumpy(), out2.asnumpy())
    assert states[0].shape == (1, 3, 4)
    assert isinstance(layer(x), mx.nd.NDArray)


def test_save_parameters_writes_mxnets_keys(tmp_path):
    layer = rnn.GRU(3, bidirectional=True, input_size=2)
    layer.initialize()
    path = str(tmp_path / "gru.params")
    layer.save_parameters(path)
    keys = set(mx.nd.load(path))
    assert "_unfused.0.l_cell.i2h_weight" in keys and "_unfused.0.r_cell.h2h_bias" in keys
    other = rnn.GRU(3, bidirectional=True)
    other.load_parameters(path)
    np.testing.assert_array_equal(other.r0_h2h_weight.data().asnumpy(),
                                  layer.r0_h2h_weight.data().asnumpy())


def test_layer_inside_hybridized_sequential():
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(rnn.GRU(4, layout="NTC"), mx.gluon.nn.Dense(2, flatten=False))
    net.initialize()
    x = mx.nd.random.uniform(shape=(3, 5, 2))
    eager = net(x)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), eager.asnumpy(), rtol=1e-6)


def test_repr():
    assert repr(rnn.LSTM(10, num_layers=2, bidirectional=True, dropout=0.5)) == \
        "LSTM(None -> 10, TNC, num_layers=2, dropout=0.5, bidirectional)"
    assert repr(rnn.RNN(5, input_size=3, layout="NTC")) == "RNN(3 -> 5, NTC)"


# ---- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, match", [
    (lambda: rnn.LSTM(4, layout="NCT"), "layout"),
    (lambda: rnn.GRU(0), "hidden_size"),
    (lambda: rnn.RNN(3, num_layers=0), "num_layers"),
    (lambda: rnn.RNN(3, activation="sigmoid"), "activation"),
    (lambda: rnn.LSTM(3, dropout=1.0), "dropout"),
    (lambda: rnn.LSTM(3, projection_size=-2), "projection_size"),
])
def test_bad_arguments(make, match):
    with pytest.raises(MXNetError, match=match):
        make()


def test_bad_calls():
    layer = rnn.LSTM(4, input_size=3)
    layer.initialize()
    x = mx.nd.ones((2, 5, 3))
    with pytest.raises(MXNetError, match=r"state shape.*\(1, 5, 4\).*\(1, 2, 4\)"):
        layer(x, [mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 5, 4))])
    with pytest.raises(MXNetError, match="expected 2 states"):
        layer(x, [mx.nd.zeros((1, 5, 4))])
    with pytest.raises(MXNetError, match="3-d"):
        layer(mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match="use_sequence_length"):
        layer(x, sequence_length=mx.nd.array([1, 2, 1, 2, 1]))
    with pytest.raises(MXNetError, match="sequence_length"):
        rnn.LSTM(4, input_size=3, use_sequence_length=True)(x)


def test_deferred_input_size_when_hybridized():
    """The first layer's i2h weights (both directions) take the input's feature size; the
    layers above take directions * hidden_size."""
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True, layout="NTC")
    layer.initialize()
    layer.hybridize()
    assert layer(mx.nd.ones((2, 5, 3))).shape == (2, 5, 8)
    assert layer.l0_i2h_weight.shape == layer.r0_i2h_weight.shape == (16, 3)
    assert layer.l1_i2h_weight.shape == (16, 8)


def test_layer_on_each_device(device):
    """The fused layer gives the CPU's values on the device. (Forward only, and no cells:
    under the GPU emulator the RNN gradient's bias sums and FullyConnected reach CPU
    kernels.)"""
    x_np = np.random.RandomState(5).uniform(-1, 1, (4, 2, 3)).astype(np.float32)
    results = []
    for ctx in (mx.cpu(), device):
        layer = rnn.GRU(3, num_layers=2, bidirectional=True, input_size=3, prefix="d_")
        layer.initialize(mx.init.Zero(), ctx=ctx)       # values set below
        for p in layer.collect_params().values():
            p.set_data(mx.nd.array(np.random.RandomState(6).uniform(-1, 1, p.shape)))
        out, [h] = layer(mx.nd.array(x_np, ctx=ctx), layer.begin_state(2, ctx=ctx))
        assert out.context == ctx
        results.append([out.asnumpy(), h.asnumpy()])
    for cpu, dev in zip(*results):
        np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-6)
