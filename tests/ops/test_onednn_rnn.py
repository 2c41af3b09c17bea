"""RNN inference on oneDNN's fused recurrent primitive (every mode; one or two directions; any
number of layers) against the reference kernels, and the calls that stay on the reference: a
recorded call (the gradient reads the saved gates), a projection, clipping, sequence
lengths, dropout in training."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.ops import onednn
from mxlite.ops.registry import get_op
from mxlite.ops.rnn import rnn_param_size
from onednn_spy import Spy, small_problems_too  # noqa: F401  (a fixture, used below)

pytestmark = [pytest.mark.cpu_only, pytest.mark.usefixtures("small_problems_too"),
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]

T, N, C, H = 5, 3, 4, 6


def _inputs(mode, layers, bidirectional, seed=0, **extra):
    rng = np.random.default_rng(seed)
    attrs = dict(state_size=H, num_layers=layers, bidirectional=bidirectional, mode=mode,
                 state_outputs=True, **extra)
    op = get_op("RNN")
    size = rnn_param_size(op.parse_attrs(attrs), C)
    d = 2 if bidirectional else 1
    r = extra.get("projection_size") or H
    arrays = [rng.standard_normal((T, N, C)), rng.standard_normal(size) * 0.4,
              rng.standard_normal((layers * d, N, r))]
    if mode == "lstm":
        arrays.append(rng.standard_normal((layers * d, N, H)))
    return [mx.nd.array(a, dtype="float32") for a in arrays], attrs


def _reference(args, attrs):
    with onednn.enabled(False):
        return [o.asnumpy() for o in mx.nd.RNN(*args, **attrs)]


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers", [1, 3])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_inference_on_onednn_equals_the_reference(monkeypatch, mode, layers, bidirectional):
    args, attrs = _inputs(mode, layers, bidirectional)
    spy = Spy(monkeypatch, "rnn_forward")
    got = mx.nd.RNN(*args, **attrs)
    assert spy.ran["rnn_forward"] == layers              # one primitive call per layer
    for g, r in zip(got, _reference(args, attrs)):
        np.testing.assert_allclose(g.asnumpy(), r, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("extra", [{"projection_size": 3},
                                   {"lstm_state_clip_min": -0.5, "lstm_state_clip_max": 0.5},
                                   {"use_sequence_length": True}],
                         ids=["projection", "clipping", "sequence lengths"])
def test_what_onednn_does_not_take_runs_on_the_reference(monkeypatch, extra):
    args, attrs = _inputs("lstm", 2, True, **extra)
    if extra.get("use_sequence_length"):
        args.append(mx.nd.array([5, 2, 0], dtype="float32"))
    spy = Spy(monkeypatch, "rnn_forward")
    got = mx.nd.RNN(*args, **attrs)
    assert spy.calls["rnn_forward"] == 0
    for g, r in zip(got, _reference(args, attrs)):
        np.testing.assert_array_equal(g.asnumpy(), r)


def test_dropout_between_layers_in_training_runs_on_the_reference(monkeypatch):
    args, attrs = _inputs("lstm", 2, False, p=0.5)
    spy = Spy(monkeypatch, "rnn_forward")
    with autograd.train_mode():
        mx.random.seed(3)
        got = mx.nd.RNN(*args, **attrs)[0].asnumpy()
    assert spy.calls["rnn_forward"] == 0
    with autograd.train_mode(), onednn.enabled(False):
        mx.random.seed(3)
        ref = mx.nd.RNN(*args, **attrs)[0].asnumpy()
    np.testing.assert_array_equal(got, ref)
    assert not np.allclose(got, mx.nd.RNN(*args, **attrs)[0].asnumpy())   # inference: none


def test_a_recorded_call_keeps_the_reference_and_its_gradient(monkeypatch):
    args, attrs = _inputs("lstm", 2, True)
    for a in args:
        a.attach_grad()
    spy = Spy(monkeypatch, "rnn_forward")
    with autograd.record():
        out = mx.nd.RNN(*args, **attrs)[0]
    out.backward(mx.nd.ones_like(out))
    assert spy.calls["rnn_forward"] == 0                  # the gradient reads the gates
    np.testing.assert_allclose(out.asnumpy(), _reference(args, attrs)[0], rtol=1e-6)
    assert np.abs(args[1].grad.asnumpy()).sum() > 0


def test_an_inference_call_makes_none_of_the_saved_outputs():
    """Off the tape the hidden outputs (gates and cells of every step) are not made: the
    record's optional outputs depend on the attributes (layers, directions)."""
    op = get_op("RNN")
    attrs = op.parse_attrs(dict(state_size=H, num_layers=2, bidirectional=True, mode="lstm"))
    assert op.optional_outputs_of(attrs) == frozenset(range(3, op.output_count(attrs)))


@pytest.mark.parametrize("hybridize", [False, True])
def test_gluon_lstm_inference_runs_on_onednn(monkeypatch, hybridize):
    layer = gluon.rnn.LSTM(H, num_layers=2, bidirectional=True, input_size=C)
    layer.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(1).standard_normal((T, N, C)), dtype="float32")
    with onednn.enabled(False):
        ref = layer(x).asnumpy()
    if hybridize:
        layer.hybridize(static_alloc=True)
    spy = Spy(monkeypatch, "rnn_forward")
    np.testing.assert_allclose(layer(x).asnumpy(), ref, rtol=1e-5, atol=2e-6)
    assert spy.ran["rnn_forward"] == 2
