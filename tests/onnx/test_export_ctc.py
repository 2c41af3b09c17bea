"""CTCLoss (its loss and hidden gradient output), _ctc_loss_grad and the recursions of its
gradient graph (_ctc_alpha, _ctc_wrec): exported, checked (full check), run in onnxruntime
and compared with mxlite's own values, in float32 and float64; gradients of the first,
second and third order as exported graphs."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run

S = mx.sym
rng = np.random.default_rng(5)
DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-5, "float64": 1e-10}


def run(sym, values, tmp_path, dtype, rtol=None):
    """``sym`` exported and run with ``values`` (data in ``dtype``), against its evaluation
    by mxlite."""
    names = sym.list_arguments()
    expected = sym.eval(ctx=mx.cpu(), **{k: mx.nd.array(v, dtype=v.dtype)
                                         for k, v in values.items()})
    got = export_and_run(sym, {}, {n: values[n] for n in names}, tmp_path)
    assert len(got) == len(expected)
    tol = rtol or TOL[dtype]
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    return got, [e.asnumpy() for e in expected]


def with_grad(node):
    """CTCLoss's loss and its hidden gradient output."""
    return S.Group([node[0], S.Symbol([(node._outputs[0][0], 1)])])


# label rows: padded as mxlite reads them ('first': 0 pads, classes from 1; 'last': -1 pads)
LABELS = {
    "first": np.array([[1, 2, 2, 3], [3, 0, 0, 0], [4, 4, 1, 0], [2, 1, 3, 4]], np.float32),
    "last": np.array([[0, 1, 1, 2], [2, -1, -1, -1], [3, 3, 0, -1], [1, 0, 2, 3]], np.float32),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blank", ["first", "last"])
@pytest.mark.parametrize("steps,scale", [(9, 1.0), (12, 3.0)])
def test_ctc_loss_padded_labels(tmp_path, dtype, blank, steps, scale):
    data = (rng.standard_normal((steps, 4, 5)) * scale).astype(dtype)
    node = S.CTCLoss(S.var("data"), S.var("label"), blank_label=blank)
    got, expected = run(with_grad(node), {"data": data, "label": LABELS[blank]}, tmp_path,
                        dtype)
    assert np.isfinite(expected[0]).all() and (expected[0] > 0).all()
    np.testing.assert_allclose(got[1].sum(axis=2), 0, atol=1e-5)   # softmax - posteriors


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blank", ["first", "last"])
@pytest.mark.parametrize("use_data,use_label", [(True, True), (True, False), (False, True)])
def test_ctc_loss_lengths(tmp_path, dtype, blank, use_data, use_label):
    """data_lengths / label_lengths: steps from a sequence's length on give no gradient,
    label positions from the label length on are not read (whatever they hold)."""
    data = rng.standard_normal((10, 4, 5)).astype(dtype)
    label = LABELS[blank].copy()
    lengths = {"data_lengths": np.array([10, 4, 7, 9], np.float32),
               "label_lengths": np.array([3, 1, 2, 4], np.float32)}
    if use_label:
        label[0, 3] = label[2, 2]       # read only without label_lengths
    args = [S.var("data"), S.var("label")]
    values = {"data": data, "label": label}
    for name, used in (("data_lengths", use_data), ("label_lengths", use_label)):
        if used:
            args.append(S.var(name))
            values[name] = lengths[name]
    node = S.CTCLoss(*args, use_data_lengths=use_data, use_label_lengths=use_label,
                     blank_label=blank)
    got, _ = run(with_grad(node), values, tmp_path, dtype)
    if use_data:
        assert not got[1][4:, 1].any() and not got[1][7:, 2].any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_ctc_loss_label_that_does_not_fit(tmp_path, dtype):
    """A label needing more steps than the data has: loss inf, gradient zero (mxlite's)."""
    data = rng.standard_normal((3, 2, 4)).astype(dtype)
    label = np.array([[1, 1, 2], [1, 2, 0]], np.float32)       # 1 1 2 needs 4 steps
    got, expected = run(with_grad(S.CTCLoss(S.var("data"), S.var("label"))),
                        {"data": data, "label": label}, tmp_path, dtype)
    assert np.isinf(got[0][0]) and np.isfinite(got[0][1])
    assert not got[1][:, 0].any() and got[1][:, 1].any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blank", ["first", "last"])
def test_ctc_loss_grad_op(tmp_path, dtype, blank):
    data = rng.standard_normal((8, 4, 5)).astype(dtype)
    sym = S._internal._ctc_loss_grad(S.var("data"), S.var("label"), S.var("label_lengths"),
                                     use_label_lengths=True, blank_label=blank)
    run(sym, {"data": data, "label": LABELS[blank],
              "label_lengths": np.array([4, 1, 3, 2], np.float32)}, tmp_path, dtype)


def _masks(n, s, lengths_max):
    skip = (rng.random((n, s)) < 0.5).astype(np.float32)
    first = np.zeros((n, s), np.float32)
    first[:, :2] = 1
    first[0, 2] = 1
    lengths = rng.integers(0, lengths_max + 1, n).astype(np.float32)
    lengths[0] = lengths_max
    return skip, first, lengths


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,t,s", [(3, 5, 7), (2, 1, 3), (1, 6, 9)])
def test_ctc_alpha(tmp_path, dtype, n, t, s):
    skip, first, lengths = _masks(n, s, t)
    sym = S._internal._ctc_alpha(S.var("e"), S.var("skip"), S.var("first"), S.var("tn"))
    values = {"e": -np.abs(rng.standard_normal((n, t, s))).astype(dtype), "skip": skip,
              "first": first, "tn": lengths}
    got, _ = run(sym, values, tmp_path, dtype, rtol=1e-5 if dtype == "float32" else 1e-12)
    assert (got[0][0, 0, :2] > -1e29).all()                       # reachable states


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n,t,s", [(2, 5, 7), (1, 3, 2), (3, 1, 5)])
def test_ctc_wrec(tmp_path, dtype, reverse, n, t, s):
    names = ["w0", "w1", "w2", "g"]
    values = {k: rng.uniform(0, 1, (n, t, s)).astype(dtype) for k in names}
    sym = S._internal._ctc_wrec(*[S.var(k) for k in names], reverse=reverse)
    got, expected = run(sym, values, tmp_path, dtype)
    if t > 1:       # the recursion, not g alone
        assert not np.allclose(expected[0], values["g"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blank", ["first", "last"])
def test_ctc_gradients_to_third_order(tmp_path, dtype, blank):
    """d loss, then d <g, sin data> (through _ctc_loss_grad's Hessian graph: _ctc_alpha,
    _ctc_wrec), then once more."""
    values = {"data": rng.standard_normal((6, 3, 5)).astype(dtype),
              "label": LABELS[blank][:3, :3],
              "dl": np.array([6, 3, 5], np.float32), "ll": np.array([3, 1, 2], np.float32)}
    v = {k: S.var(k, shape=a.shape, dtype=a.dtype) for k, a in values.items()}
    loss = S.CTCLoss(v["data"], v["label"], v["dl"], v["ll"], use_data_lengths=True,
                     use_label_lengths=True, blank_label=blank)
    g1 = S.grad(S.sum(loss * loss), [v["data"]])[0]
    g2 = S.grad(S.sum(g1 * S.sin(v["data"])), [v["data"]])[0]
    g3 = S.grad(S.sum(g2 * S.cos(v["data"])), [v["data"]])[0]
    from mxlite.symbol.graph import topo_order
    ops = {n.op.name for n in topo_order(g3._outputs) if n.op is not None}
    assert {"_ctc_loss_grad", "_ctc_alpha", "_ctc_wrec"} <= ops
    run(S.Group([g1, g2, g3]), values, tmp_path, dtype,
        rtol=1e-4 if dtype == "float32" else 1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("depth,on,off", [(3, 1.0, 0.0), (5, 2.5, -1.0)])
def test_one_hot_as_the_gradient_graph_uses_it(tmp_path, dtype, depth, on, off):
    """one_hot (CTCLoss's Hessian graph takes the extended labels' one-hot in data's dtype):
    float64 too, and an index outside 0 .. depth-1 is off everywhere (not counted from the
    end)."""
    sym = S.one_hot(S.var("i"), depth=depth, on_value=on, off_value=off, dtype=dtype)
    got, _ = run(sym, {"i": np.array([[-1, 1, 7], [2, 0, -3]], np.float32)}, tmp_path, dtype)
    assert (got[0][0, 0] == off).all() and (got[0][0, 2] == off).all()
