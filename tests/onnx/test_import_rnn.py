"""The fused RNN exported (one ONNX RNN/LSTM/GRU node per layer) and imported back: the
imported graph's outputs and states equal mx.nd.RNN's."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import onnx  # noqa: F401  (skips without onnx)
from mxlite.ops.rnn import rnn_param_size


@pytest.mark.parametrize("mode,layers,bidirectional", [
    ("lstm", 1, False), ("lstm", 2, True), ("gru", 1, True), ("gru", 2, False),
    ("rnn_tanh", 1, False), ("rnn_relu", 2, True)])
def test_rnn_round_trip(mode, layers, bidirectional, tmp_path):
    t, n, c, h = 5, 3, 4, 6
    d = 2 if bidirectional else 1
    attrs = dict(state_size=h, num_layers=layers, mode=mode, bidirectional=bidirectional,
                 state_outputs=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((t, n, c)).astype(np.float32)
    size = rnn_param_size(_attrs(attrs), c)
    params = {"p": mx.nd.array(0.3 * rng.standard_normal(size))}
    state = {"s": mx.nd.array(0.2 * rng.standard_normal((layers * d, n, h)))}
    if mode == "lstm":
        state["sc"] = mx.nd.array(0.2 * rng.standard_normal((layers * d, n, h)))
    sym = mx.sym.RNN(mx.sym.var("x"), mx.sym.var("p"), mx.sym.var("s"),
                     *([mx.sym.var("sc")] if mode == "lstm" else []), **attrs)
    expected = mx.nd.RNN(mx.nd.array(x), params["p"], state["s"],
                         *([state["sc"]] if mode == "lstm" else []), **attrs)
    path = str(tmp_path / "rnn.onnx")
    mx.onnx.export_model(sym, {**params, **state}, in_shapes=[x.shape], onnx_file_path=path)
    back, args, aux = mx.contrib.onnx.import_model(path)
    got = back.eval(x=mx.nd.array(x), **args, **aux)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.asnumpy(), e.asnumpy(), rtol=1e-5, atol=1e-6)


def _attrs(kw):
    from mxlite.ops.registry import get_op
    return get_op("RNN").parse_attrs(kw)
