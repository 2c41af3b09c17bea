"""The fused RNN operator exported as ONNX RNN/LSTM/GRU nodes: every mode, one and several
layers, one and two directions, with the final states and per-sequence lengths, run in
onnxruntime and compared with ``mx.nd.RNN``."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run
from mxlite.ops.rnn import rnn_param_size

rng = np.random.default_rng(7)


def _inputs(mode, t, n, c, h, layers, bidir, lengths=None):
    d = 2 if bidir else 1
    attrs = dict(state_size=h, num_layers=layers, bidirectional=bidir, mode=mode)
    size = rnn_param_size(_Attrs(attrs), c)
    feeds = {"data": rng.standard_normal((t, n, c)).astype(np.float32),
             "parameters": (rng.standard_normal(size) * 0.4).astype(np.float32),
             "state": rng.standard_normal((layers * d, n, h)).astype(np.float32)}
    if mode == "lstm":
        feeds["state_cell"] = rng.standard_normal((layers * d, n, h)).astype(np.float32)
    if lengths is not None:
        feeds["sequence_length"] = np.asarray(lengths, np.float32)
    return attrs, feeds


class _Attrs(dict):
    __getattr__ = dict.get


CONFIGS = [  # mode, (T, N, C), H, layers, bidirectional
    ("rnn_tanh", (5, 3, 4), 6, 1, False),
    ("rnn_relu", (4, 2, 3), 5, 2, True),
    ("lstm", (6, 3, 4), 5, 1, False),
    ("lstm", (4, 2, 3), 4, 3, True),
    ("lstm", (3, 4, 7), 8, 2, False),
    ("gru", (5, 3, 4), 6, 1, True),
    ("gru", (4, 2, 5), 3, 2, False),
    ("gru", (7, 1, 2), 4, 2, True),
]


def _check(attrs, feeds, tmp_path, state_outputs=True):
    names = list(feeds)
    sym = mx.sym.RNN(*[mx.sym.var(n) for n in names], state_outputs=state_outputs,
                     use_sequence_length="sequence_length" in feeds, **attrs)
    expected = mx.nd.RNN(*[mx.nd.array(feeds[n]) for n in names], state_outputs=state_outputs,
                         use_sequence_length="sequence_length" in feeds, **attrs)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    got = export_and_run(sym, {}, feeds, tmp_path)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,tnc,h,layers,bidir", CONFIGS)
def test_rnn_exports_as_onnx_recurrent_nodes(mode, tnc, h, layers, bidir, tmp_path):
    attrs, feeds = _inputs(mode, *tnc, h, layers, bidir)
    _check(attrs, feeds, tmp_path)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_rnn_without_state_outputs(mode, tmp_path):
    attrs, feeds = _inputs(mode, 4, 2, 3, 5, 2, True)
    _check(attrs, feeds, tmp_path, state_outputs=False)


@pytest.mark.parametrize("mode,bidir", [("lstm", True), ("gru", False), ("rnn_relu", True)])
def test_rnn_sequence_lengths(mode, bidir, tmp_path):
    attrs, feeds = _inputs(mode, 5, 3, 4, 4, 2, bidir, lengths=[5, 2, 3])
    _check(attrs, feeds, tmp_path)


@pytest.mark.parametrize("extra", [dict(projection_size=2),
                                   dict(lstm_state_clip_min=-1.0, lstm_state_clip_max=1.0)])
def test_rnn_lstm_options_onnx_lacks_are_refused(extra, tmp_path):
    attrs, feeds = _inputs("lstm", 3, 2, 3, 4, 1, False)
    attrs.update(extra)
    if "projection_size" in extra:
        feeds["parameters"] = np.zeros(rnn_param_size(_Attrs(attrs), 3), np.float32)
        feeds["state"] = np.zeros((1, 2, 2), np.float32)
    sym = mx.sym.RNN(*[mx.sym.var(n) for n in feeds], **attrs)
    with pytest.raises(mx.MXNetError, match=list(extra)[0]):
        mx.onnx.export_model(sym, {}, in_shapes=[v.shape for v in feeds.values()],
                             in_types=[v.dtype for v in feeds.values()],
                             onnx_file_path=str(tmp_path / "m.onnx"))


def test_rnn_dropout_is_inference_identity(tmp_path):
    """p > 0 drops between layers in training only: the export is the inference graph."""
    attrs, feeds = _inputs("lstm", 4, 2, 3, 5, 3, True)
    attrs["p"] = 0.4
    _check(attrs, feeds, tmp_path)


def test_rnn_with_a_symbolic_batch_runs_at_another_batch_size(tmp_path):
    from onnx_harness import run_onnx
    attrs, feeds = _inputs("gru", 5, 3, 4, 6, 2, True)
    names = list(feeds)
    sym = mx.sym.RNN(*[mx.sym.var(n) for n in names], state_outputs=True, **attrs)
    path = str(tmp_path / "m.onnx")
    dyn = [(5, None, 4), feeds["parameters"].shape, (4, None, 6)]
    mx.onnx.export_model(sym, {}, in_shapes=[feeds[n].shape for n in names],
                         in_types=[np.float32] * 3, onnx_file_path=path,
                         dynamic_input_shapes=dyn)
    _, other = _inputs("gru", 5, 7, 4, 6, 2, True)          # batch 7, exported with 3
    other["parameters"] = feeds["parameters"]
    got = run_onnx(path, other)
    expected = mx.nd.RNN(*[mx.nd.array(other[n]) for n in names], state_outputs=True, **attrs)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.asnumpy(), rtol=1e-4, atol=1e-5)
