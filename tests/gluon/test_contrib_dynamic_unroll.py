"""mxlite/gluon/contrib/rnn/rnn_cell.py: ``dynamic_unroll`` equal to ``cell.unroll`` (values,
states and gradients; TNC and NTC; with and without ``valid_length``; imperative and
hybridized), equal to MXNet 1.9.1's (fixture), its dropout masks shared along time, and
its errors."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon
from mxlite.base import MXNetError
from mxlite.gluon import rnn
from mxlite.gluon.contrib import rnn as crnn
from mxlite.gluon.contrib.rnn.rnn_cell import dynamic_unroll

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "gluon_conv_rnn_mxnet.npz")
SEQ, BATCH, IN, HIDDEN = 5, 4, 3, 2
VALID = [3, 5, 1, 4]


class _Unroller(gluon.HybridBlock):
    """A block around dynamic_unroll (so it can be hybridized); an empty valid_length list
    stands for None, as in MXNet's own test."""

    def __init__(self, make_cell, layout, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.cell = make_cell()
        self._layout = layout

    def hybrid_forward(self, F, inputs, states, valid_length):
        if isinstance(valid_length, list) and not valid_length:
            valid_length = None
        return dynamic_unroll(self.cell, inputs, states, layout=self._layout,
                              valid_length=valid_length)


CELLS = {"rnn": (lambda: rnn.RNNCell(HIDDEN, prefix="c_"), 1),
         "lstm": (lambda: rnn.LSTMCell(HIDDEN, prefix="c_"), 2),
         "gru": (lambda: rnn.GRUCell(HIDDEN, prefix="c_"), 1)}


def _data(layout, n_states, seed):
    rng = np.random.default_rng(seed)
    shape = (SEQ, BATCH, IN) if layout == "TNC" else (BATCH, SEQ, IN)
    x = mx.nd.array(rng.normal(size=shape))
    states = [mx.nd.array(rng.normal(size=(BATCH, HIDDEN))) for _ in range(n_states)]
    return x, states


def _run(fn, params, x):
    """fn() under record, backpropagating sum(outputs) + sum(states); returns the values,
    the parameters' gradients and the input's gradient."""
    x.attach_grad()
    with mx.autograd.record():
        outputs, states = fn()
        total = outputs.sum() + sum(s.sum() for s in states)
    total.backward()
    values = [outputs.asnumpy()] + [s.asnumpy() for s in states]
    grads = {k[k.index("c_"):]: p.grad().asnumpy() for k, p in params.items()}
    return values, grads, x.grad.asnumpy()


@pytest.mark.parametrize("kind", sorted(CELLS))
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("with_valid", [False, True])
@pytest.mark.parametrize("hybridize", [False, True])
def test_dynamic_unroll_equals_unroll(kind, layout, with_valid, hybridize):
    make, n_states = CELLS[kind]
    x, states = _data(layout, n_states, seed=len(kind) + len(layout))
    valid = mx.nd.array(VALID) if with_valid else None
    block = _Unroller(make, layout)
    block.initialize()
    block(x, states, valid if with_valid else [])             # finish the deferred init
    cell = make()
    cell.initialize()
    cell(x[0] if layout == "TNC" else x[:, 0], states)
    for (_, p), (_, q) in zip(sorted(block.collect_params().items()),
                              sorted(cell.collect_params().items())):
        q.set_data(p.data())
    if hybridize:
        block.hybridize()
    want = _run(lambda: cell.unroll(SEQ, x, states, layout=layout, merge_outputs=True,
                                    valid_length=valid), cell.collect_params(), x)
    got = _run(lambda: block(x, states, valid if with_valid else []),
               block.collect_params(), x)
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert sorted(got[1]) == sorted(want[1])
    for name in want[1]:
        np.testing.assert_allclose(got[1][name], want[1][name], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-5)


def test_valid_length_masks_outputs_and_keeps_last_valid_states():
    make, _ = CELLS["gru"]
    cell = make()
    cell.initialize()
    x, states = _data("TNC", 1, seed=9)
    outs, (h,) = dynamic_unroll(cell, x, states, valid_length=mx.nd.array(VALID))
    full, _ = dynamic_unroll(cell, x, states)
    outs, full = outs.asnumpy(), full.asnumpy()
    for b, n in enumerate(VALID):
        np.testing.assert_array_equal(outs[n:, b], 0)
        np.testing.assert_allclose(outs[:n, b], full[:n, b], rtol=1e-6)
        np.testing.assert_allclose(h.asnumpy()[b], full[n - 1, b], rtol=1e-6)


def test_list_of_steps_and_conv_cell():
    """A list of per-step arrays is accepted, and a convolutional cell unrolls the same."""
    rng = np.random.default_rng(5)
    cell = crnn.Conv1DLSTMCell((2, 6), 3, 3, 3)
    cell.initialize()
    steps = [mx.nd.array(rng.normal(size=(2, 2, 6))) for _ in range(3)]
    states = cell.begin_state(batch_size=2)
    got, got_states = dynamic_unroll(cell, steps, states)
    want, want_states = cell.unroll(3, steps, states, layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)
    for g, w in zip(got_states, want_states):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-6)


class _Echo(rnn.HybridRecurrentCell):
    """Outputs its input; its one state passes through."""

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, 1), "__layout__": "NC"}]

    def hybrid_forward(self, F, inputs, states):
        return F.identity(inputs), [F.identity(states[0])]


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("which", ["drop_inputs", "drop_outputs"])
def test_dropout_mask_is_shared_along_time(layout, which):
    """Each (sequence, feature) is dropped at every step or at none (variational dropout),
    for both layouts (MXNet 1.9.1 shared the mask along the batch for 'NTC')."""
    shape = (6, 8, 50) if layout == "TNC" else (8, 6, 50)
    time_axis = layout.find("T")
    mx.random.seed(3)
    with mx.autograd.record():
        outs, _ = dynamic_unroll(_Echo(), mx.nd.ones(shape), [mx.nd.zeros((8, 1))],
                                 layout=layout, **{which: 0.5})
    kept = np.moveaxis(outs.asnumpy(), time_axis, 0) != 0      # (T, N, C)
    assert 0.3 < kept.mean() < 0.7
    assert (kept == kept[0:1]).all()
    np.testing.assert_allclose(outs.asnumpy()[outs.asnumpy() != 0], 2.0)


@pytest.fixture(scope="module")
def mxnet_ref():
    return np.load(FIXTURE)


@pytest.mark.parametrize("case,make,layout", [
    ("unroll_gru_tnc", lambda: rnn.GRUCell(3, input_size=2, prefix="u_"), "TNC"),
    ("unroll_lstm_ntc", lambda: rnn.LSTMCell(3, input_size=2, prefix="v_"), "NTC"),
    ("unroll_gru_tnc_valid", lambda: rnn.GRUCell(3, input_size=2, prefix="w_"), "TNC"),
    ("unroll_lstm_ntc_valid", lambda: rnn.LSTMCell(3, input_size=2, prefix="x_"), "NTC")])
def test_dynamic_unroll_matches_mxnet(case, make, layout, mxnet_ref):
    ref = {k[len(case) + 1:]: mxnet_ref[k] for k in mxnet_ref.files
           if k.startswith(case + "/")}
    cell = make()
    cell.initialize()
    for name in ref["names"]:
        cell.collect_params()[name].set_data(mx.nd.array(ref["param:" + name]))
    n_states = len(cell.state_info())
    valid = mx.nd.array(ref["valid_length"]) if "valid_length" in ref else None
    outs, states = dynamic_unroll(cell, mx.nd.array(ref["x"]),
                                  [mx.nd.array(ref[f"state{k}"]) for k in range(n_states)],
                                  layout=layout, valid_length=valid)
    for k, value in enumerate([outs] + list(states)):
        np.testing.assert_allclose(value.asnumpy(), ref[f"result{k}"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs,match", [
    ({"layout": "TCN"}, "layout must be 'TNC' or 'NTC'"),
    ({"begin_state": None}, "begin_state must be given"),
    ({"drop_inputs": 1.0}, "drop_inputs must be a dropout rate"),
    ({"drop_outputs": -0.1}, "drop_outputs must be a dropout rate"),
    ({"valid_length": mx.nd.array([1, 2])}, r"valid_length must have shape \(batch_size,\)"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    cell = rnn.GRUCell(HIDDEN, input_size=IN)
    cell.initialize()
    x, states = _data("TNC", 1, seed=0)
    args = {"begin_state": states, **kwargs}
    begin_state = args.pop("begin_state")
    with pytest.raises(MXNetError, match="dynamic_unroll: " + match):
        dynamic_unroll(cell, x, begin_state, **args)


def test_begin_state_count_must_match_the_cell():
    cell = rnn.LSTMCell(HIDDEN, input_size=IN)
    cell.initialize()
    x, states = _data("TNC", 2, seed=0)
    with pytest.raises(MXNetError, match=r"dynamic_unroll: .* has 2 state\(s\), begin_state "
                                         r"gives 1"):
        dynamic_unroll(cell, x, states[:1])


def test_one_array_is_one_state():
    cell = rnn.GRUCell(HIDDEN, input_size=IN)
    cell.initialize()
    x, states = _data("TNC", 1, seed=0)
    got, _ = dynamic_unroll(cell, x, states[0])
    want, _ = dynamic_unroll(cell, x, states)
    np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_empty_sequence_is_an_error():
    cell = rnn.GRUCell(HIDDEN, input_size=IN)
    cell.initialize()
    with pytest.raises(MXNetError, match="dynamic_unroll: the sequence has no steps"):
        dynamic_unroll(cell, mx.nd.zeros((0, BATCH, IN)), [mx.nd.zeros((BATCH, HIDDEN))])


@pytest.mark.parametrize("with_valid", [False, True])
def test_deferred_init_hybridized(with_valid):
    """A cell without input_size inside a hybridized block: the loop node gives the cell's
    weights their shapes (MXNet's test_contrib_unroll does this)."""
    block = _Unroller(lambda: rnn.LSTMCell(HIDDEN, prefix="c_"), "NTC")
    block.initialize()
    block.hybridize()
    x, states = _data("NTC", 2, seed=4)
    outs, _ = block(x, states, mx.nd.array(VALID) if with_valid else [])
    assert block.cell.i2h_weight.shape == (4 * HIDDEN, IN)
    assert outs.shape == (BATCH, SEQ, HIDDEN)
