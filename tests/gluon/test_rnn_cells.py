"""gluon.rnn's cells: values and gradients of unrolled cells against MXNet 1.9.1
(``tests/fixtures/make_gluon_rnn_fixture.py``), steps against NumPy, unroll's layouts, lists,
valid lengths and symbols, the modifier cells, the unfused layers and the errors."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import rnn

from .test_rnn_layers import check_against_fixture


def _stack():
    stack = rnn.HybridSequentialRNNCell(prefix="stack_")
    with stack.name_scope():
        stack.add(rnn.LSTMCell(3, prefix="a_"))
        stack.add(rnn.ResidualCell(rnn.GRUCell(3, prefix="b_")))
    return stack


CELLS = {
    "rnn_cell": lambda: rnn.RNNCell(4, activation="relu", prefix="c_"),
    "lstm_cell": lambda: rnn.LSTMCell(4, prefix="c_"),
    "gru_cell": lambda: rnn.GRUCell(4, prefix="c_"),
    "bi_cell": lambda: rnn.BidirectionalCell(rnn.LSTMCell(3, prefix="l_"),
                                             rnn.GRUCell(2, prefix="r_")),
    "stack_cell": _stack,
}


@pytest.mark.parametrize("case", sorted(CELLS))
@pytest.mark.parametrize("hybridize", [False, True])
def test_unrolled_cell_matches_mxnet(case, hybridize, tmp_path):
    cell = CELLS[case]()
    cell.initialize()
    if hybridize:
        cell.hybridize()

    def run(x, states, valid_length=None):
        return cell.unroll(x.shape[1], x, begin_state=states, layout="NTC",
                           merge_outputs=True, valid_length=valid_length)

    check_against_fixture(cell, case, run, tmp_path)


# ---- steps against NumPy -----------------------------------------------------------------------
def _sig(v):
    return 1 / (1 + np.exp(-v))


def _params(cell):
    return {k: v.data().asnumpy().astype(np.float64) for k, v in cell._reg_params.items()}


def test_gru_step_against_numpy():
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize(mx.init.Uniform(0.8))
    rng = np.random.RandomState(0)
    x, h = rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, (4, 3))
    out, [new_h] = cell(mx.nd.array(x), [mx.nd.array(h)])
    p = _params(cell)
    gx = x @ p["i2h_weight"].T + p["i2h_bias"]
    gh = h @ p["h2h_weight"].T + p["h2h_bias"]
    r = _sig(gx[:, :3] + gh[:, :3])
    z = _sig(gx[:, 3:6] + gh[:, 3:6])
    n = np.tanh(gx[:, 6:] + r * gh[:, 6:])
    ref = (1 - z) * n + z * h
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert new_h is out


def test_lstm_cell_activations_against_numpy():
    """activation / recurrent_activation replace tanh / sigmoid."""
    cell = rnn.LSTMCell(2, input_size=3, activation="relu", recurrent_activation="tanh")
    cell.initialize(mx.init.Uniform(0.8))
    rng = np.random.RandomState(1)
    x, h, c = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 2)), rng.uniform(-1, 1, (2, 2))
    out, [nh, nc] = cell(mx.nd.array(x), [mx.nd.array(h), mx.nd.array(c)])
    p = _params(cell)
    g = x @ p["i2h_weight"].T + p["i2h_bias"] + h @ p["h2h_weight"].T + p["h2h_bias"]
    i, f, gg, o = np.split(g, 4, axis=1)
    ref_c = np.tanh(f) * c + np.tanh(i) * np.maximum(gg, 0)
    np.testing.assert_allclose(nc.asnumpy(), ref_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nh.asnumpy(), np.tanh(o) * np.maximum(ref_c, 0), rtol=1e-5,
                               atol=1e-6)


# ---- unroll ------------------------------------------------------------------------------------
def _cell():
    cell = rnn.LSTMCell(3, input_size=2, prefix="u_")
    cell.initialize(mx.init.Uniform(0.8))
    return cell


def test_unroll_layouts_and_lists_agree():
    cell = _cell()
    x = mx.nd.random.uniform(-1, 1, shape=(4, 5, 2))          # NTC
    ntc, s1 = cell.unroll(5, x, layout="NTC", merge_outputs=True)
    tnc, s2 = cell.unroll(5, x.swapaxes(0, 1), layout="TNC", merge_outputs=True)
    steps, s3 = cell.unroll(5, [x[:, t] for t in range(5)], merge_outputs=False)
    assert ntc.shape == (4, 5, 3) and tnc.shape == (5, 4, 3)
    assert isinstance(steps, list) and len(steps) == 5
    np.testing.assert_allclose(tnc.asnumpy().swapaxes(0, 1), ntc.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(np.stack([s.asnumpy() for s in steps], 1), ntc.asnumpy(),
                               rtol=1e-6)
    for a, b, c in zip(s1, s2, s3):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(a.asnumpy(), c.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: rnn.LSTMCell(3, input_size=2),
    lambda: rnn.BidirectionalCell(rnn.GRUCell(3, input_size=2, prefix="l_"),
                                  rnn.GRUCell(3, input_size=2, prefix="r_")),
])
def test_valid_length_equals_unrolling_each_sequence_alone(make):
    """Each sequence's outputs are those of unrolling it alone over its valid steps (the
    backward direction starting at its last valid step), zero past them; its states are
    the ones after its last valid step."""
    cell = make()
    cell.initialize(mx.init.Uniform(0.8))
    x = mx.nd.random.uniform(-1, 1, shape=(3, 5, 2))
    lengths = [2, 5, 3]
    out, states = cell.unroll(5, x, merge_outputs=True, valid_length=mx.nd.array(lengths))
    # masked outputs are merged: merge_outputs=None keeps them so
    assert isinstance(cell.unroll(5, x, valid_length=mx.nd.array(lengths))[0], mx.nd.NDArray)
    for b, n in enumerate(lengths):
        ref, ref_states = cell.unroll(n, x[b:b + 1, :n], merge_outputs=True)
        np.testing.assert_allclose(out.asnumpy()[b, :n], ref.asnumpy()[0], rtol=1e-5,
                                   atol=1e-6)
        assert not out.asnumpy()[b, n:].any()
        for s, r in zip(states, ref_states):
            np.testing.assert_allclose(s.asnumpy()[b], r.asnumpy()[0], rtol=1e-5, atol=1e-6)


def test_symbolic_unroll_infers_shapes():
    """Unrolled on Symbols, the zero states take the batch size from the data."""
    stack = rnn.SequentialRNNCell(prefix="s_")
    with stack.name_scope():
        stack.add(rnn.LSTMCell(6))
        stack.add(rnn.GRUCell(4))
    outs, states = stack.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    _, out_shapes, _ = mx.sym.Group([outs] + states).infer_shape(data=(7, 3, 5))
    assert out_shapes == [(7, 3, 4), (7, 6), (7, 6), (7, 4)]


def test_begin_state_names_and_reset():
    cell = rnn.GRUCell(3, prefix="g_")
    assert [s.name for s in cell.begin_state(func=mx.sym.var)] == ["g_begin_state_0"]
    assert [s.name for s in cell.begin_state(func=mx.sym.var)] == ["g_begin_state_1"]
    cell.reset()
    assert [s.name for s in cell.begin_state(func=mx.sym.var)] == ["g_begin_state_0"]
    assert cell.state_info(5) == [{"shape": (5, 3), "__layout__": "NC"}]
    zeros = cell.begin_state(batch_size=2, func=mx.nd.ones)
    assert zeros[0].shape == (2, 3) and zeros[0].asnumpy().all()


# ---- containers and modifiers ------------------------------------------------------------------
def test_sequential_step_equals_unroll():
    stack = rnn.HybridSequentialRNNCell()
    with stack.name_scope():
        stack.add(rnn.RNNCell(3, input_size=2))
        stack.add(rnn.LSTMCell(2, input_size=3))
    stack.initialize(mx.init.Uniform(0.8))
    assert len(stack) == 2 and isinstance(stack[1], rnn.LSTMCell)
    x = mx.nd.random.uniform(-1, 1, shape=(2, 4, 2))
    out, states = stack.unroll(4, x, merge_outputs=True)
    s = stack.begin_state(batch_size=2)
    for t in range(4):
        step, s = stack(x[:, t], s)
        np.testing.assert_allclose(step.asnumpy(), out.asnumpy()[:, t], rtol=1e-6)
    for a, b in zip(s, states):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


def test_residual_cell_adds_the_input():
    base = rnn.GRUCell(3, input_size=3)
    cell = rnn.ResidualCell(base)
    cell.initialize(mx.init.Uniform(0.8))
    x = mx.nd.random.uniform(-1, 1, shape=(2, 4, 3))
    out, _ = cell.unroll(4, x, merge_outputs=True)
    base._modified = False          # look behind the modifier
    ref, _ = base.unroll(4, x, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy() + x.asnumpy(), rtol=1e-6)


def test_zoneout_keeps_the_previous_values_in_training():
    base = rnn.RNNCell(50, input_size=2, prefix="z_")
    cell = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    cell.initialize(mx.init.Uniform(0.8))
    x = mx.nd.random.uniform(-1, 1, shape=(4, 3, 2))
    plain = rnn.RNNCell(50, input_size=2, prefix="z_", params=base.params)
    ref, _ = plain.unroll(3, x, merge_outputs=False)
    out, _ = cell.unroll(3, x, merge_outputs=False)           # inference: no zoneout
    np.testing.assert_allclose(out[2].asnumpy(), ref[2].asnumpy(), rtol=1e-6)
    cell.reset()                    # forget the unroll's last output: the first step's is 0
    with mx.autograd.record():
        first, [state] = cell(x[:, 0], cell.begin_state(batch_size=4))
    new = ref[0].asnumpy()
    got = first.asnumpy()
    kept_new = got == new
    assert np.all(kept_new | (got == 0)) and 0 < kept_new.mean() < 1
    assert np.all((state.asnumpy() == new) | (state.asnumpy() == 0))


def test_dropout_cell():
    cell = rnn.DropoutCell(0.5)
    x = mx.nd.ones((20, 30))
    with mx.autograd.record():
        out, states = cell(x, [])
    vals = set(np.unique(out.asnumpy()))
    assert vals == {0.0, 2.0} and states == []
    seq, _ = cell.unroll(3, mx.nd.ones((2, 3, 4)), merge_outputs=True)
    assert seq.shape == (2, 3, 4)


def test_unfused_layer_equals_fused():
    layer = rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2)
    layer.initialize(mx.init.Uniform(0.8))
    x = mx.nd.random.uniform(-1, 1, shape=(5, 2, 2))
    fused = layer(x)
    cells = layer._unfuse()
    out, _ = cells.unroll(5, x, layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), fused.asnumpy(), rtol=1e-5, atol=1e-6)


# ---- errors ------------------------------------------------------------------------------------
def test_modified_cell_is_called_through_its_modifier():
    base = rnn.GRUCell(3)
    rnn.ZoneoutCell(base, 0.1)
    with pytest.raises(MXNetError, match="modifier"):
        base.begin_state(batch_size=2)
    with pytest.raises(MXNetError, match="already modified"):
        rnn.ResidualCell(base)


def test_bad_cells_and_calls():
    with pytest.raises(MXNetError, match="cannot be stepped"):
        rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2))(mx.nd.ones((1, 2)), [])
    with pytest.raises(MXNetError, match="ZoneoutCell"):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2)), 0.1)
    with pytest.raises(MXNetError, match="rate"):
        rnn.DropoutCell("0.5")
    with pytest.raises(MXNetError, match="hidden_size"):
        rnn.LSTMCell(0)
    cell = _cell()
    with pytest.raises(MXNetError, match=r"length=4.*\(2, 5, 2\)"):
        cell.unroll(4, mx.nd.ones((2, 5, 2)))
    with pytest.raises(MXNetError, match="layout"):
        cell.unroll(5, mx.nd.ones((2, 5, 2)), layout="NCT")
    with pytest.raises(MXNetError, match="inputs must be given"):
        cell.unroll(5, None)


# ---- MXNet's gluon.contrib.rnn cells -----------------------------------------------------------
def test_lstmp_cell_against_numpy():
    from mxlite.gluon.rnn.rnn_cell import LSTMPCell
    cell = LSTMPCell(4, 2, input_size=3)
    cell.initialize(mx.init.Uniform(0.8))
    assert cell.h2h_weight.shape == (16, 2) and cell.h2r_weight.shape == (2, 4)
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (2, 5, 3))
    out, (r, c) = cell.unroll(5, mx.nd.array(x), merge_outputs=True)
    p = _params(cell)
    rr, cc, ref = np.zeros((2, 2)), np.zeros((2, 4)), []
    for t in range(5):
        g = x[:, t] @ p["i2h_weight"].T + p["i2h_bias"] + rr @ p["h2h_weight"].T + \
            p["h2h_bias"]
        i, f, gg, o = np.split(g, 4, axis=1)
        cc = _sig(f) * cc + _sig(i) * np.tanh(gg)
        rr = (_sig(o) * np.tanh(cc)) @ p["h2r_weight"].T
        ref.append(rr)
    np.testing.assert_allclose(out.asnumpy(), np.stack(ref, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), cc, rtol=1e-5, atol=1e-6)


def test_variational_dropout_one_mask_per_sequence():
    """In training the same elements are dropped at every step of a sequence (a new mask
    for the next unroll); in inference the cell is its base cell."""
    from mxlite.gluon.rnn.rnn_cell import VariationalDropoutCell
    base = rnn.RNNCell(40, input_size=3, prefix="v_")
    cell = VariationalDropoutCell(base, drop_inputs=0.3, drop_states=0.3, drop_outputs=0.5)
    cell.initialize(mx.init.Uniform(0.8))
    x = mx.nd.random.uniform(0.1, 1, shape=(3, 4, 3))
    plain = rnn.RNNCell(40, input_size=3, prefix="v_", params=base.params)
    out, _ = cell.unroll(4, x, merge_outputs=True)
    ref, _ = plain.unroll(4, x, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
    with mx.autograd.record():
        first, _ = cell.unroll(4, x, merge_outputs=True)
        second, _ = cell.unroll(4, x, merge_outputs=True)
    dropped = first.asnumpy() == 0
    assert (dropped == dropped[:, :1]).all() and 0 < dropped.mean() < 1
    assert ((second.asnumpy() == 0) != dropped).any()
    with pytest.raises(MXNetError, match="drop_outputs"):
        VariationalDropoutCell(rnn.GRUCell(2), drop_outputs=1.5)
