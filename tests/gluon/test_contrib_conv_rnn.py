"""mxlite/gluon/contrib/rnn/conv_rnn_cell.py: each convolutional cell's step against a NumPy
convolution and gate composition written here (every layout, pads, dilations,
activations), the parameters' names and shapes and one step against MXNet 1.9.1's fixture
(tests/fixtures/make_gluon_conv_rnn_fixture.py), symbolic unrolls' shapes, deferred input
channels, and the errors."""
import itertools
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import contrib, nn
from mxlite.gluon.contrib import rnn as crnn

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "gluon_conv_rnn_mxnet.npz")


# ---- a NumPy reference -------------------------------------------------------------------
def _np_conv(x, w, b, pad, dilate):
    """Stride-1 cross-correlation of channel-first ``x`` (N, C, *S) with ``w`` (O, C, *K)."""
    dims = x.ndim - 2
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in pad))
    kernel = w.shape[2:]
    out_size = [xp.shape[2 + i] - dilate[i] * (kernel[i] - 1) for i in range(dims)]
    out = np.zeros((x.shape[0], w.shape[0]) + tuple(out_size))
    for k in np.ndindex(*kernel):
        window = tuple(slice(ki * d, ki * d + o) for ki, d, o in zip(k, dilate, out_size))
        patch = xp[(slice(None), slice(None)) + window]
        out += np.einsum("nc...,oc->no...", patch, w[(slice(None), slice(None)) + k])
    return out + b.reshape((1, -1) + (1,) * dims)


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


_ACT = {"tanh": np.tanh, "relu": lambda v: np.maximum(v, 0), "sigmoid": _sigmoid,
        "softsign": lambda v: v / (1 + np.abs(v)), "leaky": lambda v: np.where(v > 0, v, .1 * v)}


def _np_step(kind, x, states, p, spec, channel_last):
    """One step of a ``kind`` ('RNN', 'LSTM', 'GRU') cell in NumPy; ``p`` its parameters,
    ``spec`` (i2h_pad, i2h_dilate, h2h_dilate, activation)."""
    i2h_pad, i2h_dilate, h2h_dilate, act = spec
    act = _ACT[act]
    if channel_last:                           # compute channel-first, move the axis back
        first = lambda a: np.moveaxis(a, -1, 1)     # noqa: E731
        x, states = first(x), [first(s) for s in states]
        p = {k: (first(v) if v.ndim > 1 else v) for k, v in p.items()}
    h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, p["h2h_weight"].shape[2:]))
    i2h = _np_conv(x, p["i2h_weight"], p["i2h_bias"], i2h_pad, i2h_dilate)
    h2h = _np_conv(states[0], p["h2h_weight"], p["h2h_bias"], h2h_pad, h2h_dilate)
    if kind == "RNN":
        out = act(i2h + h2h)
        new = [out]
    elif kind == "LSTM":
        i, f, g, o = np.split(i2h + h2h, 4, axis=1)
        c = _sigmoid(f) * states[1] + _sigmoid(i) * act(g)
        out = _sigmoid(o) * act(c)
        new = [out, c]
    else:
        ir, iz, in_ = np.split(i2h, 3, axis=1)
        hr, hz, hn = np.split(h2h, 3, axis=1)
        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
        out = (1 - z) * act(in_ + r * hn) + z * states[0]
        new = [out]
    if channel_last:
        last = lambda a: np.moveaxis(a, 1, -1)      # noqa: E731
        out, new = last(out), [last(s) for s in new]
    return out, new


def _cell(kind, dims):
    return getattr(crnn, f"Conv{dims}D{kind}Cell")


def _randomize(cell, rng):
    """Uniform(-0.5, 0.5) parameters (after the deferred init); returns them by short name."""
    out = {}
    for name, param in cell.collect_params().items():
        value = rng.uniform(-0.5, 0.5, param.shape)
        param.set_data(mx.nd.array(value))
        out[name[len(cell.prefix):]] = value.astype(np.float32).astype(np.float64)
    return out


def _run_step(cell, x, states):
    out, new = cell(mx.nd.array(x), [mx.nd.array(s) for s in states])
    return out.asnumpy(), [s.asnumpy() for s in new]


# case: kind, dims, input shape, hidden, i2h_kernel, h2h_kernel, keyword settings
CASES = [
    ("RNN", 1, (3, 9), 4, 3, 3, {}),
    ("RNN", 2, (2, 5, 6), 3, (3, 2), 3, {"i2h_pad": (1, 0), "activation": "relu"}),
    ("RNN", 3, (2, 4, 5, 4), 2, 3, (1, 3, 1), {}),
    ("LSTM", 1, (2, 9), 3, 3, 3, {"i2h_dilate": 2, "h2h_dilate": 2}),
    ("LSTM", 2, (3, 5, 5), 2, 3, 3, {"i2h_pad": 1}),
    ("LSTM", 3, (1, 3, 4, 5), 2, (1, 2, 3), 3, {"activation": "softsign"}),
    ("GRU", 1, (2, 8), 3, 5, 1, {"i2h_pad": 2}),
    ("GRU", 2, (2, 4, 6), 3, 3, 3, {"activation": "sigmoid"}),
    ("GRU", 3, (2, 3, 3, 4), 2, 2, 3, {"h2h_dilate": (1, 2, 1)}),
    # channel-last layouts (input_shape in that layout)
    ("RNN", 1, (9, 3), 2, 3, 3, {"conv_layout": "NWC"}),
    ("LSTM", 2, (5, 6, 2), 3, (2, 3), 3, {"conv_layout": "NHWC", "i2h_pad": (0, 1)}),
    ("GRU", 3, (3, 4, 4, 2), 2, 2, 3, {"conv_layout": "NDHWC"}),
]


def _spec(dims, kw):
    def tup(v):
        return (v,) * dims if isinstance(v, int) else tuple(v)
    return (tup(kw.get("i2h_pad", 0)), tup(kw.get("i2h_dilate", 1)),
            tup(kw.get("h2h_dilate", 1)), kw.get("activation", "tanh"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}{c[1]}d_"
                         f"{c[6].get('conv_layout', 'first')}")
@pytest.mark.parametrize("hybridize", [False, True])
def test_cell_step_matches_numpy(case, hybridize):
    kind, dims, in_shape, hidden, i2h_k, h2h_k, kw = case
    rng = np.random.default_rng(dims * 10 + len(kind) + len(kw))
    cell = _cell(kind, dims)(in_shape, hidden, i2h_k, h2h_k, **kw)
    cell.initialize()
    if hybridize:
        cell.hybridize()
    batch = 2
    x = rng.uniform(-1, 1, (batch,) + in_shape)
    states = [rng.uniform(-1, 1, info["shape"]) for info in cell.state_info(batch)]
    _run_step(cell, x, states)
    params = _randomize(cell, rng)
    got, got_states = _run_step(cell, x, states)
    want, want_states = _np_step(kind, x, states, params, _spec(dims, kw),
                                 kw.get("conv_layout", "NCW").endswith("C"))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for g, w in zip(got_states, want_states):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    assert [s.shape for s in got_states] == [i["shape"] for i in cell.state_info(batch)]


def test_leaky_relu_block_as_activation():
    rng = np.random.default_rng(7)
    cell = crnn.Conv1DRNNCell((2, 6), 3, 3, 3, activation=nn.LeakyReLU(0.1))
    cell.initialize()
    x, h = rng.uniform(-1, 1, (2, 2, 6)), rng.uniform(-1, 1, (2, 3, 4))
    _run_step(cell, x, [h])
    params = _randomize(cell, rng)
    got, _ = _run_step(cell, x, [h])
    want, _ = _np_step("RNN", x, [h], params, ((0,), (1,), (1,), "leaky"), False)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# ---- against MXNet 1.9.1 -------------------------------------------------------------------
FIXTURE_CASES = {
    "rnn1d": lambda: crnn.Conv1DRNNCell((3, 7), 4, 3, 3, prefix="a_"),
    "rnn2d_pad_relu": lambda: crnn.Conv2DRNNCell((2, 5, 6), 3, (3, 2), 3, i2h_pad=(1, 0),
                                                 activation="relu", prefix="b_"),
    "rnn3d": lambda: crnn.Conv3DRNNCell((2, 4, 5, 4), 2, 3, (1, 3, 1), prefix="c_"),
    "lstm1d_dilate": lambda: crnn.Conv1DLSTMCell((2, 9), 3, 3, 3, i2h_dilate=2, h2h_dilate=2,
                                                 prefix="d_"),
    "lstm2d": lambda: crnn.Conv2DLSTMCell((3, 5, 5), 2, 3, 3, i2h_pad=1, prefix="e_"),
    "lstm3d": lambda: crnn.Conv3DLSTMCell((1, 3, 4, 5), 2, (1, 2, 3), 3, prefix="f_"),
    "gru1d": lambda: crnn.Conv1DGRUCell((2, 8), 3, 5, 1, i2h_pad=2, prefix="g_"),
    "gru2d_softsign": lambda: crnn.Conv2DGRUCell((2, 4, 6), 3, 3, 3, activation="softsign",
                                                 prefix="h_"),
    "gru3d": lambda: crnn.Conv3DGRUCell((2, 3, 3, 4), 2, 2, 3, prefix="i_"),
}


@pytest.fixture(scope="module")
def mxnet_ref():
    return np.load(FIXTURE)


@pytest.mark.parametrize("case", sorted(FIXTURE_CASES))
def test_cell_matches_mxnet(case, mxnet_ref):
    ref = {k[len(case) + 1:]: mxnet_ref[k] for k in mxnet_ref.files
           if k.startswith(case + "/")}
    cell = FIXTURE_CASES[case]()
    params = cell.collect_params()
    assert sorted(params.keys()) == list(ref["names"])
    assert {n: p.shape for n, p in params.items()} == \
        {n: tuple(ref["shape:" + n]) for n in ref["names"]}
    assert repr(cell) == str(ref["repr"])
    cell.initialize()
    for name in ref["names"]:
        params[name].set_data(mx.nd.array(ref["param:" + name]))
    n_states = len(cell.state_info())
    got, new = _run_step(cell, ref["x"], [ref[f"state{k}"] for k in range(n_states)])
    for k, value in enumerate([got] + new):
        np.testing.assert_allclose(value, ref[f"result{k}"], rtol=1e-5, atol=1e-6)


# ---- unrolling -----------------------------------------------------------------------------
@pytest.mark.parametrize("kind,dims", list(itertools.product(["RNN", "LSTM", "GRU"], [1, 2, 3])))
def test_symbolic_unroll_shapes_and_names(kind, dims):
    """A symbolic unroll without begin_state (zero states shaped from the data): MXNet's
    output names and the i2h convolution's output size."""
    spatial = (9, 8, 7)[:dims]
    cell = _cell(kind, dims)((4,) + spatial, 5, 3, 3, prefix="rnn_")
    steps = [mx.sym.var(f"rnn_t{i}_data") for i in range(3)]
    outputs, states = cell.unroll(3, steps)
    group = mx.sym.Group(outputs)
    assert group.list_outputs() == [f"rnn_t{i}_out_output" for i in range(3)]
    assert sorted(cell.collect_params().keys()) == ["rnn_h2h_bias", "rnn_h2h_weight",
                                                    "rnn_i2h_bias", "rnn_i2h_weight"]
    shape = (2, 4) + spatial
    _, outs, _ = group.infer_shape(**{f"rnn_t{i}_data": shape for i in range(3)})
    assert outs == [(2, 5) + tuple(s - 2 for s in spatial)] * 3


def test_symbolic_unroll_channel_last_from_zeros_matches_imperative():
    rng = np.random.default_rng(3)
    cell = crnn.Conv2DGRUCell((5, 4, 2), 3, 3, 3, conv_layout="NHWC", i2h_pad=1, prefix="g_")
    cell.initialize()
    x = rng.uniform(-1, 1, (2, 3, 5, 4, 2))             # NTC: batch, time, H, W, C
    want, _ = cell.unroll(3, mx.nd.array(x), merge_outputs=True)
    params = {n: p.data() for n, p in cell.collect_params().items()}
    outs, _ = cell.unroll(3, mx.sym.var("data"), merge_outputs=True)
    got = outs.eval(data=mx.nd.array(x), **params)[0]
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_unroll_backward_and_stack():
    """MXNet's check: unroll a stack of cells (channels feeding channels) under record and
    backpropagate; every parameter gets a gradient."""
    net = mx.gluon.rnn.SequentialRNNCell()
    net.add(crnn.Conv1DLSTMCell((5, 7), 4, 3, 3))
    net.add(crnn.Conv1DRNNCell((4, 5), 3, 3, 3))
    net.add(crnn.Conv1DGRUCell((3, 3), 2, 3, 3))
    net.collect_params().initialize()
    x = mx.nd.ones((2, 3, 5, 7))
    x.attach_grad()
    with mx.autograd.record():
        out, _ = net.unroll(3, x, merge_outputs=True)
    assert out.shape == (2, 3, 2, 1)
    out.backward()
    grads = [p.grad().asnumpy() for p in net.collect_params().values()]
    assert all(np.isfinite(g).all() for g in grads)
    assert np.abs(x.grad.asnumpy()).sum() > 0


def test_symbolic_unroll_of_a_stack_without_begin_state():
    """Each cell of a stack makes its zero states from its own inputs in the graph (a
    convolutional cell's states are not (batch, hidden)); equal to the imperative unroll."""
    net = mx.gluon.rnn.SequentialRNNCell()
    net.add(crnn.Conv1DLSTMCell((5, 7), 4, 3, 3))
    net.add(crnn.Conv1DRNNCell((4, 5), 3, 3, 3))
    net.add(mx.gluon.rnn.GRUCell(2))
    net.collect_params().initialize()
    x = mx.nd.array(np.random.default_rng(6).uniform(-1, 1, (2, 3, 5, 7)))
    want, _ = net.unroll(3, x, merge_outputs=True)         # (the GRU flattens its steps)
    outs, _ = net.unroll(3, mx.sym.var("data"), merge_outputs=True)
    params = {n: p.data() for n, p in net.collect_params().items()}
    got = outs.eval(data=x, **params)[0]
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_input_channels_zero_are_inferred_hybridized():
    cell = crnn.Conv1DLSTMCell((0, 7), 3, (3,), (3,))
    assert cell.i2h_weight.shape == (12, 0, 3)
    cell.hybridize()
    cell.initialize()
    out, _ = cell.unroll(2, mx.nd.ones((2, 2, 5, 7)), merge_outputs=True)
    assert cell.i2h_weight.shape == (12, 5, 3) and out.shape == (2, 2, 3, 5)


def test_state_info_and_aliases():
    cell = crnn.Conv2DLSTMCell((2, 6, 5), 4, 3, 3)
    assert cell.prefix.startswith("conv_lstm")
    assert cell.state_info(7) == [{"shape": (7, 4, 4, 3), "__layout__": "NCHW"}] * 2
    assert crnn.Conv3DGRUCell((2, 4, 4, 4), 1, 3, 3).prefix.startswith("conv_gru")
    cl = crnn.Conv1DRNNCell((6, 2), 4, 3, 5, conv_layout="NWC")
    assert cl.prefix.startswith("conv_rnn")
    assert cl.state_info(1) == [{"shape": (1, 4, 4), "__layout__": "NWC"}]
    assert cl.i2h_weight.shape == (4, 3, 2) and cl.h2h_weight.shape == (4, 5, 4)


# ---- errors --------------------------------------------------------------------------------
@pytest.mark.parametrize("make,match", [
    (lambda: crnn.Conv2DLSTMCell((2, 5, 5), 3, 3, (3, 2)), "only odd h2h_kernel"),
    (lambda: crnn.Conv1DRNNCell((2, 5), 3, 3, 4), "only odd h2h_kernel"),
    (lambda: crnn.Conv2DGRUCell((2, 5, 5), 3, (3, 3, 3), 3), "i2h_kernel must be an int or "
                                                             "a tuple of 2 ints"),
    (lambda: crnn.Conv1DRNNCell((2, 5), 3, 3, 3, i2h_pad=(1, 1)), "i2h_pad must be"),
    (lambda: crnn.Conv1DRNNCell((2, 5), 3, 3, 3, conv_layout="NCHW"), "conv_layout must be "
                                                                      "one of"),
    (lambda: crnn.Conv2DRNNCell((2, 5), 3, 3, 3), "input_shape must be 3 non-negative ints"),
    (lambda: crnn.Conv1DRNNCell((2, 5), 0, 3, 3), "hidden_channels must be a positive"),
    (lambda: crnn.Conv1DRNNCell((2, 2), 3, 3, 3), "leaves no output"),
    (lambda: crnn.Conv1DRNNCell(5, 3, 3, 3), "input_shape must be"),
])
def test_bad_settings_are_clear_errors(make, match):
    with pytest.raises(MXNetError, match=match):
        make()


def test_contrib_rnn_exports_mxnet_names():
    names = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
             "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
             "Conv3DGRUCell", "VariationalDropoutCell", "LSTMPCell"]
    assert sorted(contrib.rnn.__all__) == sorted(names)
    assert contrib.rnn.conv_rnn_cell.Conv2DLSTMCell is contrib.rnn.Conv2DLSTMCell
    assert callable(contrib.rnn.rnn_cell.dynamic_unroll)
