"""The fused RNN operator of mxlite/ops/rnn.py against MXNet 1.9.1 (tests/fixtures/rnn_mxnet.npz,
made by make_rnn_fixture.py: the op's outputs and gradients, and Gluon layers whose parameters
are packed here in mxlite's layout) and against a NumPy reference written below for what MXNet
1.9.1's CPU path ignored (sequence_length, state clipping); dropout between layers, symbol
JSON, ``_rnn_param_concat``'s shape inference and the errors."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.ops.rnn import rnn_param_size

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = np.load(os.path.join(HERE, "..", "fixtures", "rnn_mxnet.npz"))
OP_CASES = sorted({k.split("/")[0][3:] for k in FIXTURE.files if k.startswith("op:")})
GLUON_CASES = sorted({k.split("/")[0][6:] for k in FIXTURE.files if k.startswith("gluon:")})
_INPUTS = ("x", "params", "h0", "c0")


def _get(case, name):
    return FIXTURE[f"{case}/{name}"]


@pytest.mark.parametrize("case", OP_CASES)
def test_rnn_against_mxnet(case):
    key = f"op:{case}"
    kw = json.loads(str(_get(key, "kwargs")))
    names = [n for n in _INPUTS if f"{key}/{n}" in FIXTURE.files]
    ins = [mx.nd.array(_get(key, n)) for n in names]
    train = f"{key}/head0" in FIXTURE.files
    for a in ins:
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        outs = mx.nd.RNN(*ins, **kw)
    for j, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), _get(key, f"out{j}"), rtol=1e-4, atol=1e-5)
    if train:
        heads = [mx.nd.array(_get(key, f"head{j}")) for j in range(len(outs))]
        mx.autograd.backward(list(outs), heads)
        for n, a in zip(names, ins):
            np.testing.assert_allclose(a.grad.asnumpy(), _get(key, f"grad_{n}"), rtol=1e-4,
                                       atol=1e-5, err_msg=n)


def _pack_gluon(key, layers, d, projection):
    """Gluon's per-layer parameters in the fused op's layout: every weight (layer, direction:
    i2h, h2h, h2r), then every bias (i2h, h2h)."""
    dirs = ["l", "r"][:d]
    weights = ["i2h_weight", "h2h_weight"] + (["h2r_weight"] if projection else [])
    parts = [_get(key, f"param:{p}{i}_{w}") for i in range(layers) for p in dirs for w in weights]
    parts += [_get(key, f"param:{p}{i}_{b}") for i in range(layers) for p in dirs
              for b in ("i2h_bias", "h2h_bias")]
    return np.concatenate([p.ravel() for p in parts])


_GLUON = {"LSTM_2bi": ("lstm", 5, 2, True, None), "GRU_2": ("gru", 4, 2, False, None),
          "RNN_tanh_bi": ("rnn_tanh", 3, 1, True, None), "LSTMP_2bi": ("lstm", 6, 2, True, 3)}


@pytest.mark.parametrize("case", GLUON_CASES)
def test_layout_round_trips_mxnet_gluon(case):
    mode, h, layers, bi, proj = _GLUON[case]
    key = f"gluon:{case}"
    params = _pack_gluon(key, layers, 2 if bi else 1, proj)
    states = [mx.nd.array(_get(key, f"state{j}")) for j in range(2 if mode == "lstm" else 1)]
    outs = mx.nd.RNN(mx.nd.array(_get(key, "x")), mx.nd.array(params), *states, state_size=h,
                     num_layers=layers, bidirectional=bi, mode=mode, projection_size=proj,
                     state_outputs=True)
    np.testing.assert_allclose(outs[0].asnumpy(), _get(key, "out"), rtol=1e-4, atol=1e-5)
    for j in range(len(states)):
        np.testing.assert_allclose(outs[1 + j].asnumpy(), _get(key, f"new_state{j}"),
                                   rtol=1e-4, atol=1e-5)


# ---- a NumPy reference (one step at a time, straight from the equations) ---------------------
def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _np_rnn(x, params, h0, c0, mode, h, layers, bi, lengths=None, clip=None, clip_nan=False,
            proj=None):
    t, n, c = x.shape
    g = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}[mode]
    d = 2 if bi else 1
    r = proj or h
    pos, ws = 0, []
    for k in range(layers * d):
        inp = c if k < d else d * r
        shapes = [(g * h, inp), (g * h, r)] + ([(proj, h)] if proj else [])
        w = []
        for s in shapes:
            w.append(params[pos:pos + s[0] * s[1]].reshape(s))
            pos += s[0] * s[1]
        ws.append(w)
    for k in range(layers * d):
        ws[k] += [params[pos:pos + g * h], params[pos + g * h:pos + 2 * g * h]]
        pos += 2 * g * h
    lengths = np.full(n, t) if lengths is None else np.asarray(lengths)
    hy, cy, inp = [], [], x
    for layer in range(layers):
        y = np.zeros((t, n, d * r))
        for di in range(d):
            k = layer * d + di
            w = ws[k]
            wx, wh, bx, bh = w[0], w[1], w[-2], w[-1]
            hs, cs = h0[k].copy(), (c0[k].copy() if c0 is not None else None)
            order = range(t - 1, -1, -1) if di else range(t)
            for s in order:
                for b in range(n):
                    if s >= lengths[b]:
                        continue
                    ax, ah = wx @ inp[s, b] + bx, wh @ hs[b] + bh
                    if mode == "lstm":
                        i, f = _sigmoid(ax[:h] + ah[:h]), _sigmoid(ax[h:2 * h] + ah[h:2 * h])
                        gg, o = np.tanh(ax[2 * h:3 * h] + ah[2 * h:3 * h]), _sigmoid(
                            ax[3 * h:] + ah[3 * h:])
                        cn = f * cs[b] + i * gg
                        if clip is not None:
                            cn = np.where(np.isnan(cn), clip[0], cn) if clip_nan else cn
                            cn = np.clip(cn, *clip)
                        hn = o * np.tanh(cn)
                        hn = w[2] @ hn if proj else hn
                        cs[b] = cn
                    elif mode == "gru":
                        rr, z = _sigmoid(ax[:h] + ah[:h]), _sigmoid(ax[h:2 * h] + ah[h:2 * h])
                        nn = np.tanh(ax[2 * h:] + rr * ah[2 * h:])
                        hn = (1 - z) * nn + z * hs[b]
                    else:
                        a = ax + ah
                        hn = np.tanh(a) if mode == "rnn_tanh" else np.maximum(a, 0)
                    hs[b] = hn
                    y[s, b, di * r:(di + 1) * r] = hn
            hy.append(hs)
            if c0 is not None:
                cy.append(cs)
        inp = y
    return inp, np.stack(hy), (np.stack(cy) if c0 is not None else None)


def _random_case(rng, mode, t, n, c, h, layers, bi, proj=None):
    d = 2 if bi else 1
    r = proj or h
    size = mx.sym.RNN(mx.sym.var("x"), state_size=h, num_layers=layers, bidirectional=bi,
                      mode=mode, projection_size=proj).infer_shape(x=(t, n, c))[0][1][0]
    x = rng.uniform(-1, 1, (t, n, c))
    p = rng.uniform(-0.6, 0.6, size)
    h0 = rng.uniform(-1, 1, (layers * d, n, r))
    c0 = rng.uniform(-1, 1, (layers * d, n, h)) if mode == "lstm" else None
    return x, p, h0, c0


def _nd_rnn(x, p, h0, c0, **kw):
    ins = [mx.nd.array(a, dtype="float64") for a in (x, p, h0, c0) if a is not None]
    if kw.get("use_sequence_length"):
        kw["sequence_length"] = mx.nd.array(kw.pop("lengths"))
    return [o.asnumpy() for o in mx.nd.RNN(*ins, state_outputs=True, **kw)]


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_sequence_length_against_numpy(mode):
    """cuDNN's padded layout: zeros past each length, the backward direction starting at
    the last valid step, final states from the last valid step (MXNet's CPU ignored it)."""
    rng = np.random.RandomState(1)
    x, p, h0, c0 = _random_case(rng, mode, 5, 4, 3, 4, 2, True)
    lengths = [5, 2, 0, 3]
    got = _nd_rnn(x, p, h0, c0, state_size=4, num_layers=2, bidirectional=True, mode=mode,
                  use_sequence_length=True, lengths=lengths)
    want = _np_rnn(x, p, h0, c0, mode, 4, 2, True, lengths=lengths)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_blocks_of_sequences(monkeypatch):
    """A batch computed in blocks of sequences (bounded scratch memory) equals the reference,
    lengths and dropout masks included."""
    import mxlite.ops.rnn as rnn_ops
    monkeypatch.setattr(rnn_ops, "_BLOCK", 100)          # 3 * 40 per sequence: one a block
    rng = np.random.RandomState(8)
    x, p, h0, c0 = _random_case(rng, "lstm", 3, 5, 2, 2, 2, True)
    lengths = [3, 1, 2, 0, 3]
    got = _nd_rnn(x, p, h0, c0, state_size=2, num_layers=2, bidirectional=True, mode="lstm",
                  use_sequence_length=True, lengths=lengths)
    want = _np_rnn(x, p, h0, c0, "lstm", 2, 2, True, lengths=lengths)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    test_dropout_between_layers()


def test_lstm_state_clip_and_projection_against_numpy():
    rng = np.random.RandomState(2)
    x, p, h0, c0 = _random_case(rng, "lstm", 4, 3, 3, 5, 2, True, proj=2)
    p *= 4                                          # large cells, so the clip bites
    got = _nd_rnn(x, p, h0, c0, state_size=5, num_layers=2, bidirectional=True, mode="lstm",
                  projection_size=2, lstm_state_clip_min=-0.3, lstm_state_clip_max=0.5)
    want = _np_rnn(x, p, h0, c0, "lstm", 5, 2, True, clip=(-0.3, 0.5), proj=2)
    assert np.abs(want[2]).max() > 0.29
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_lstm_state_clip_nan():
    """A NaN cell state stops at lstm_state_clip_min with clip_nan, propagates without."""
    x, p, h0, c0 = _random_case(np.random.RandomState(3), "lstm", 2, 1, 2, 2, 1, False)
    c0[0, 0, 0] = np.nan
    kw = dict(state_size=2, num_layers=1, mode="lstm", lstm_state_clip_min=-0.25,
              lstm_state_clip_max=0.25)
    _, _, cy = _nd_rnn(x, p, h0, c0, lstm_state_clip_nan=True, **kw)
    want = _np_rnn(x, p, h0, c0, "lstm", 2, 1, False, clip=(-0.25, 0.25), clip_nan=True)[2]
    assert not np.isnan(cy).any()
    np.testing.assert_allclose(cy, want, rtol=1e-12)
    assert np.isnan(_nd_rnn(x, p, h0, c0, **kw)[2]).any()


def test_dropout_between_layers():
    """Inference ignores p; training drops the first layer's outputs with one mask that the
    gradient reuses (same seed, same mask: the gradient matches finite differences)."""
    rng = np.random.RandomState(4)
    x, p, h0, c0 = _random_case(rng, "gru", 3, 4, 3, 6, 2, False)
    kw = dict(state_size=6, num_layers=2, mode="gru")
    ins = [mx.nd.array(a, dtype="float64") for a in (x, p, h0)]
    plain = mx.nd.RNN(*ins, **kw).asnumpy()
    np.testing.assert_allclose(mx.nd.RNN(*ins, p=0.5, **kw).asnumpy(), plain)
    np.testing.assert_allclose(plain, _np_rnn(x, p, h0, None, "gru", 6, 2, False)[0],
                               rtol=1e-10)
    head = rng.uniform(-1, 1, plain.shape)

    def loss(xv):
        mx.random.seed(7)
        with mx.autograd.train_mode():
            y = mx.nd.RNN(mx.nd.array(xv, dtype="float64"), *ins[1:], p=0.5, **kw)
        return float((y.asnumpy() * head).sum())

    xa = ins[0].copy()
    xa.attach_grad()
    mx.random.seed(7)
    with mx.autograd.record():
        y = mx.nd.RNN(xa, *ins[1:], p=0.5, **kw)
    assert not np.allclose(y.asnumpy(), plain)
    y.backward(mx.nd.array(head, dtype="float64"))
    u = rng.uniform(-1, 1, x.shape)
    eps = 1e-6
    fd = (loss(x + eps * u) - loss(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose((xa.grad.asnumpy() * u).sum(), fd, rtol=1e-6)


def test_gradient_penalty_through_lstm():
    """d/dw of |dL/dx|^2 (a gradient penalty) against finite differences of the first
    gradient along a random direction."""
    rng = np.random.RandomState(5)
    x, p, h0, c0 = _random_case(rng, "lstm", 3, 2, 2, 3, 1, False)
    kw = dict(state_size=3, num_layers=1, mode="lstm")
    xs, hs, cs = (mx.nd.array(a, dtype="float64") for a in (x, h0, c0))

    def penalty(pv, create_graph):
        xv = xs.copy()
        xv.attach_grad()
        pa = mx.nd.array(pv, dtype="float64")
        pa.attach_grad()
        with mx.autograd.record():
            y = mx.nd.RNN(xv, pa, hs, cs, **kw)
            (gx,) = mx.autograd.grad([(y * y).sum()], [xv], create_graph=create_graph)
            pen = (gx * gx).sum()
        if create_graph:
            pen.backward()
            return pa.grad.asnumpy()
        return pen.asnumpy().item()

    u = rng.uniform(-1, 1, p.shape)
    eps = 1e-6
    fd = (penalty(p + eps * u, False) - penalty(p - eps * u, False)) / (2 * eps)
    np.testing.assert_allclose((penalty(p, True) * u).sum(), fd, rtol=1e-6)


def _lstm_inputs(rng, t, n, c, h, layers, bi):
    x, p, h0, c0 = _random_case(rng, "lstm", t, n, c, h, layers, bi)
    return [mx.nd.array(a, dtype="float64") for a in (x, p, h0, c0)]


def test_gradient_reads_the_saved_states_without_replaying_the_forward(monkeypatch):
    """The backward of a T-step LSTM layer runs T recurrent products (one per step) plus one
    each for the input and the two weight gradients: the forward pass is not replayed (it
    was: 2T + 4 products before the states were saved)."""
    import mxlite.device.cpu as cpu
    if mx.current_context().device_type != "cpu":
        pytest.skip("counts the products of the CPU namespace (the gradient graph is the same "
                    "on every device)")
    t = 6
    ins = _lstm_inputs(np.random.RandomState(9), t, 3, 4, 5, 1, False)
    for a in ins:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.RNN(*ins, state_size=5, num_layers=1, mode="lstm")
    calls = []
    real = cpu.matmul
    monkeypatch.setattr(cpu, "matmul", lambda a, b, out: calls.append(out.shape) or
                        real(a, b, out))
    y.backward(mx.nd.ones(y.shape, dtype="float64"))
    assert len(calls) == t + 3, calls
    assert calls.count((3, 5)) == t          # (N, H): the recurrent product of each step


def test_masked_clipped_dropout_lstm_gradients_to_order_three():
    """Saved states with sequence_length (masked steps save constant zeros, the reverse
    direction starts from the initial state), a cell clip that bites and dropout between
    layers: gradients of orders 1 to 3 against finite differences. The saved values' head
    gradients are not zero at orders 2 and 3, so this checks the recurrence they enter."""
    from mxlite.test_utils import check_grads
    rng = np.random.RandomState(10)
    x, p, h0, c0 = _lstm_inputs(rng, 3, 3, 2, 2, 2, True)
    lengths = mx.nd.array([3, 1, 2], dtype="float64")
    kw = dict(state_size=2, num_layers=2, bidirectional=True, mode="lstm", p=0.4,
              state_outputs=True, use_sequence_length=True, lstm_state_clip_min=-0.4,
              lstm_state_clip_max=0.45)

    def f(*args):
        mx.random.seed(3)                      # the same dropout mask on every call
        with mx.autograd.train_mode():
            return list(mx.nd.RNN(*args, sequence_length=lengths, **kw))

    outs = f(x, p * 3, h0, c0)
    assert np.abs(outs[2].asnumpy()).max() >= 0.4 - 1e-12      # the clip bites
    check_grads(f, [x, p * 3, h0, c0], order=3, name="RNN lstm masked clipped dropout")


@pytest.mark.parametrize("mode", ["gru", "rnn_tanh"])
def test_masked_gradients_to_order_three(mode):
    """gru (saved gates and W_hn h + b_hn) and rnn_tanh (the saved outputs only), two
    bidirectional layers with sequence_length, to order 3."""
    from mxlite.test_utils import check_grads
    rng = np.random.RandomState(11)
    x, p, h0, _ = _random_case(rng, mode, 3, 2, 2, 2, 2, True)
    lengths = mx.nd.array([2, 3], dtype="float64")
    kw = dict(state_size=2, num_layers=2, bidirectional=True, mode=mode, state_outputs=True,
              use_sequence_length=True)
    check_grads(lambda *a: list(mx.nd.RNN(*a, sequence_length=lengths, **kw)),
                [mx.nd.array(a, dtype="float64") for a in (x, p, h0)], order=3,
                name=f"RNN {mode} masked")


def test_saved_states_are_hidden_outputs():
    """The saved arrays are outputs of the op that calls and symbols do not show."""
    ins = _lstm_inputs(np.random.RandomState(12), 2, 2, 3, 4, 2, True)
    outs = mx.nd.RNN(*ins, state_size=4, num_layers=2, bidirectional=True, mode="lstm",
                     state_outputs=True)
    assert len(outs) == 3
    net = mx.sym.RNN(mx.sym.var("x"), mx.sym.var("p"), mx.sym.var("h"), mx.sym.var("c"),
                     state_size=4, num_layers=2, bidirectional=True, mode="lstm",
                     state_outputs=True, name="rnn")
    assert net.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]


def test_symbol_json_round_trip():
    rng = np.random.RandomState(6)
    x, p, h0, c0 = _random_case(rng, "lstm", 3, 2, 4, 5, 2, True)
    net = mx.sym.RNN(mx.sym.var("data"), state_size=5, num_layers=2, bidirectional=True,
                     mode="lstm", state_outputs=True, name="rnn")
    loaded = mx.sym.load_json(net.tojson())
    assert loaded.list_arguments() == ["data", "rnn_parameters", "rnn_state", "rnn_state_cell"]
    assert loaded.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]
    args = dict(zip(loaded.list_arguments(),
                    (mx.nd.array(a, dtype="float64") for a in (x, p, h0, c0))))
    outs = loaded.bind(mx.current_context(), args).forward()
    want = _np_rnn(x, p, h0, c0, "lstm", 5, 2, True)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.asnumpy(), w, rtol=1e-10)


def test_param_concat_infers_unknown_inputs_from_the_output():
    a, b, c = (mx.sym.var(v) for v in "abc")
    cat = mx.sym._internal._rnn_param_concat(a, b, c, dim=0, num_args=3)
    out = mx.sym.RNN(mx.sym.var("x"), cat, mx.sym.var("s"), state_size=2, num_layers=1,
                     mode="rnn_tanh")
    shapes, _, _ = out.infer_shape(x=(3, 1, 4), a=(8,))      # 2*(4+2+2)=16 = 8 + 2 * 4
    assert dict(zip(out.list_arguments(), shapes))["b"] == (4,)
    assert dict(zip(out.list_arguments(), shapes))["c"] == (4,)
    got = mx.nd._internal._rnn_param_concat(mx.nd.ones((2, 1)), mx.nd.zeros((2, 2)))
    assert got.asnumpy().tolist() == [[1, 0, 0], [1, 0, 0]]          # MXNet's dim=1


@pytest.mark.parametrize("kwargs, inputs, match", [
    (dict(mode="gru", projection_size=2), None, "projection_size"),
    (dict(mode="rnn_tanh", lstm_state_clip_min=0.0, lstm_state_clip_max=1.0), None, "clip"),
    (dict(mode="lstm", lstm_state_clip_min=0.0), None, "together"),
    (dict(mode="lstm", lstm_state_clip_min=1.0, lstm_state_clip_max=0.0), None, "at least"),
    (dict(mode="lstm", p=1.0), None, "p"),
    (dict(mode="lstm", projection_size=5), None, "projection_size"),
    (dict(mode="gru"), [(3, 2, 4), (10,), (1, 2, 3)], "parameters must have shape"),
    (dict(mode="gru"), [(3, 2, 4), (81,), (2, 2, 3)], "state must have shape"),
    (dict(mode="gru"), [(3, 4), (81,), (1, 2, 3)], "3-D"),
    (dict(mode="gru"), [(0, 2, 4), (81,), (1, 2, 3)], "time step"),
    (dict(mode="gru"), [(2, 2, 0), (45,), (1, 2, 3)], "input feature"),
])
def test_errors(kwargs, inputs, match):
    kw = dict(state_size=3, num_layers=1)
    kw.update(kwargs)
    mode = kw["mode"]
    if inputs is None:
        inputs = [(3, 2, 4), (200,), (1, 2, 3)] + ([(1, 2, 3)] if mode == "lstm" else [])
    with pytest.raises(MXNetError, match=match):
        mx.nd.RNN(*[mx.nd.zeros(s) for s in inputs], **kw)


def test_bad_sequence_length_and_dtype():
    x, p, h0 = mx.nd.zeros((3, 2, 4)), mx.nd.zeros((81,)), mx.nd.zeros((1, 2, 3))
    kw = dict(state_size=3, num_layers=1, mode="gru")
    with pytest.raises(MXNetError, match="sequence_length must hold integers in"):
        mx.nd.RNN(x, p, h0, sequence_length=mx.nd.array([4, 1]), use_sequence_length=True, **kw)
    with pytest.raises(MXNetError, match="sequence_length must hold integers in"):
        mx.nd.RNN(x, p, h0, sequence_length=mx.nd.array([1.5, 1]), use_sequence_length=True, **kw)
    with pytest.raises(MXNetError, match="dtype"):
        mx.nd.RNN(x, p.astype("float64"), h0, **kw)
    with pytest.raises(MXNetError, match="float32 or float64"):
        mx.nd.RNN(x.astype("int32"), p, h0, **kw)


def test_empty_batch():
    """N = 0: empty outputs and zero gradients (the parameters shape no output)."""
    x, p, h0 = mx.nd.zeros((3, 0, 4)), mx.nd.ones((81,)), mx.nd.zeros((1, 0, 3))
    p.attach_grad()
    with mx.autograd.record():
        outs = mx.nd.RNN(x, p, h0, state_size=3, num_layers=1, mode="gru", state_outputs=True)
    assert [o.shape for o in outs] == [(3, 0, 3), (1, 0, 3)]
    outs[0].backward()
    assert p.grad.asnumpy().tolist() == [0.0] * 81


def test_mxnet_symbol_json_loads_and_runs():
    """MXNet 1.9.1's JSON of an RNN node (attrs as MXNet writes them) binds and gives MXNet's
    outputs on op case lstm_2bi's inputs (inference: its p is ignored)."""
    net = mx.sym.load_json(str(FIXTURE["json:lstm_2bi/json"]))
    assert net.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]
    arrays = [mx.nd.array(_get("op:lstm_2bi", n)) for n in _INPUTS]
    exe = net.bind(mx.current_context(), dict(zip(net.list_arguments(), arrays)))
    for j, o in enumerate(exe.forward(is_train=False)):
        np.testing.assert_allclose(o.asnumpy(), _get("op:lstm_2bi", f"out{j}"), rtol=1e-4,
                                   atol=1e-5)
    assert mx.sym.load_json(net.tojson()).tojson() == net.tojson()


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_backward_makes_no_zeros_for_the_saved_gates(monkeypatch, mode):
    """At first order nothing sends the saved gates and cells a head gradient: the RNN's
    FGradient takes None for them (``none_ograds``), not zeros of every step's gates to
    add (the gradient's values are the gradient table's: tests/test_gradients.py)."""
    t, n, c, h = 4, 2, 3, 5
    g = {"lstm": 4, "gru": 3}[mode]
    size = rnn_param_size(mx.nd.RNN.op.parse_attrs(dict(state_size=h, num_layers=1,
                                                        mode=mode)), c)
    rng = np.random.default_rng(0)
    args = [mx.nd.array(rng.standard_normal(s), dtype="float64") for s in
            [(t, n, c), (size,), (1, n, h)] + ([(1, n, h)] if mode == "lstm" else [])]
    for a in args:
        a.attach_grad()
    made = []
    zeros = mx.nd.zeros

    def spy(shape, *a, **k):
        made.append(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
        return zeros(shape, *a, **k)
    with mx.autograd.record():
        y = mx.nd.RNN(*args, state_size=h, num_layers=1, mode=mode)
    monkeypatch.setattr(mx.nd, "zeros", spy)
    y.backward()
    monkeypatch.undo()
    assert (t, n, g * h) not in made, made
    assert all(np.isfinite(a.grad.asnumpy()).all() for a in args)
