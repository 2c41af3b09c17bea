"""Row_sparse weights: ``Parameter(stype='row_sparse')`` living in its Trainer's kvstore,
``row_sparse_data`` pulls, ``gluon.contrib.nn.SparseEmbedding``, and the embedding ops on a
row_sparse weight (``Embedding``, ``contrib.SparseEmbedding``), against NumPy."""
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon
from mxlite.base import MXNetError
from mxlite.gluon.parameter import StorageTypeError

CTXS = [mx.cpu(0), mx.cpu(1)]


@pytest.fixture(autouse=True)
def no_storage_fallback():
    """These paths compute natively: a dense fallback (a RuntimeWarning) fails the test."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Storage type fallback", RuntimeWarning)
        yield


def _param(shape=(10, 4), ctx=CTXS, **kw):
    p = gluon.Parameter("weight", shape=shape, stype="row_sparse", grad_stype="row_sparse",
                        **kw)
    p.initialize(init=mx.init.Uniform(1.0), ctx=ctx)
    return p


def _rows(a, which):
    return a.asnumpy()[which]


# ---- the ops on a row_sparse weight ------------------------------------------------------------
@pytest.mark.parametrize("op", ["Embedding", "SparseEmbedding"])
def test_lookup_in_a_row_sparse_weight_reads_missing_rows_as_zero(op):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((9, 3)).astype(np.float32)
    stored = np.array([0, 4, 5, 8])
    w = mx.nd.sparse.row_sparse_array((table[stored], stored), shape=(9, 3))
    ids = np.array([[8, 1], [4, 4], [0, 7]])
    f = mx.nd.Embedding if op == "Embedding" else mx.nd.contrib.SparseEmbedding
    extra = {"sparse_grad": True} if op == "Embedding" else {}
    w.attach_grad(stype="row_sparse")
    head = rng.standard_normal((3, 2, 3)).astype(np.float32)
    with mx.autograd.record():
        out = f(mx.nd.array(ids), w, input_dim=9, output_dim=3, **extra)
    out.backward(mx.nd.array(head))
    want = np.where(np.isin(ids, stored)[..., None], table[ids], 0)
    np.testing.assert_array_equal(out.asnumpy(), want)
    g = w.grad
    assert g.stype == "row_sparse"
    g.check_format()
    np.testing.assert_array_equal(g.indices.asnumpy(), np.unique(ids))
    dense = np.zeros((9, 3), np.float32)
    np.add.at(dense, ids.reshape(-1), head.reshape(-1, 3))
    np.testing.assert_allclose(g.asnumpy(), dense, rtol=1e-6)


def test_sparse_embedding_op_refuses_an_index_out_of_range():
    w = mx.nd.ones((4, 2))
    with pytest.raises(MXNetError, match="SparseEmbedding.*out of range"):
        mx.nd.contrib.SparseEmbedding(mx.nd.array([1, 4]), w, input_dim=4, output_dim=2)
    rsp = w.tostype("row_sparse")
    with pytest.raises(MXNetError, match="SparseEmbedding.*out of range"):
        mx.nd.contrib.SparseEmbedding(mx.nd.array([-1]), rsp, input_dim=4, output_dim=2)


def test_sparse_embedding_symbol_gives_a_row_sparse_weight_gradient():
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("w", stype="row_sparse")
    y = mx.sym.contrib.SparseEmbedding(data, weight, input_dim=6, output_dim=2)
    ids = np.array([5, 0, 5, 2])
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    head = np.arange(8, dtype=np.float32).reshape(4, 2)
    with warnings.catch_warnings():     # executors run sparse arguments as dense copies
        warnings.filterwarnings("ignore", "Storage type fallback detected: the executor")
        exe = y.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(4,))
        exe.arg_dict["data"][:] = ids
        exe.arg_dict["w"][:] = table
        out = exe.forward(is_train=True)[0]
        exe.backward([mx.nd.array(head)])
    np.testing.assert_array_equal(out.asnumpy(), table[ids])
    g = exe.grad_dict["w"]
    assert g.stype == "row_sparse"
    dense = np.zeros((6, 2), np.float32)
    np.add.at(dense, ids, head)
    np.testing.assert_array_equal(g.asnumpy(), dense)


# ---- Parameter ------------------------------------------------------------------------------------
def test_a_row_sparse_parameter_is_read_through_row_sparse_data_only():
    p = _param()
    for access in (p.data, p.list_data):
        with pytest.raises(RuntimeError, match="row_sparse_data"):
            access()
    with pytest.raises(StorageTypeError, match="no Trainer"):
        p.row_sparse_data(mx.nd.array([0]))
    dense = gluon.Parameter("d", shape=(3, 2))
    dense.initialize()
    gluon.Trainer([dense], "sgd")
    with pytest.raises(RuntimeError, match="is for row_sparse parameters"):
        dense.row_sparse_data(mx.nd.array([0]))
    with pytest.raises(MXNetError, match="unknown stype"):
        gluon.Parameter("x", shape=(2,), stype="dense")
    with pytest.raises(MXNetError, match="csr"):
        gluon.Parameter("x", shape=(2, 2), stype="csr")
    assert p.var().attr("__storage_type__") == "1"      # MXNet's id of row_sparse
    assert p.grad(mx.cpu(1)).stype == "row_sparse"


def test_row_sparse_data_pulls_the_rows_asked_onto_their_context():
    p = _param()
    full = p._data[0].asnumpy().copy()          # the initial weight, all rows stored
    gluon.Trainer([p], "sgd")
    w = p.row_sparse_data(mx.nd.array([7, 1, 7], ctx=mx.cpu(1)))
    assert w.context == mx.cpu(1) and w.stype == "row_sparse"
    w.check_format()
    np.testing.assert_array_equal(w.indices.asnumpy(), [1, 7])
    np.testing.assert_array_equal(w.data.asnumpy(), full[[1, 7]])
    ws = p.list_row_sparse_data(mx.nd.array([2]))
    assert [a.context for a in ws] == CTXS
    for a in ws:
        np.testing.assert_array_equal(a.asnumpy(), np.where(np.arange(10)[:, None] == 2,
                                                            full, 0))


def test_one_trainer_per_row_sparse_parameter_and_it_needs_a_kvstore():
    p = _param()
    t = gluon.Trainer([p], "sgd")
    with pytest.raises(RuntimeError, match="already has a Trainer"):
        gluon.Trainer([p], "sgd")
    p._set_trainer(None)
    q = _param()
    for kwargs, what in (({"kvstore": None}, "kvstore must be"),
                         ({"update_on_kvstore": False}, "update_on_kvstore=False")):
        t = gluon.Trainer([q], "sgd", **kwargs)
        with pytest.raises(MXNetError, match=what):
            q.row_sparse_data(mx.nd.array([0]))
        q._set_trainer(None)
    del t


def _lazy_sgd(weight, rows_grads, lr, momentum, wd, mom):
    """NumPy oracle: MXNet's lazy SGD touches only the rows a gradient stores."""
    for r, g in rows_grads.items():
        mom[r] = momentum * mom[r] - lr * (g + wd * weight[r])
        weight[r] += mom[r]


def test_sparse_embedding_trains_on_two_contexts_like_numpy_lazy_sgd():
    rng = np.random.default_rng(3)
    net = gluon.contrib.nn.SparseEmbedding(20, 3, prefix="emb_")
    net.initialize(mx.init.Uniform(1.0), ctx=CTXS)
    weight = net.weight._data[0].asnumpy().astype(np.float64)
    mom = np.zeros_like(weight)
    lr, momentum, wd = 0.1, 0.9, 0.01
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": lr, "momentum": momentum, "wd": wd})
    for step in range(3):
        ids = [rng.integers(0, 20, size=5) for _ in CTXS]
        heads = [rng.standard_normal((5, 3)).astype(np.float32) for _ in CTXS]
        with mx.autograd.record():
            outs = [net(mx.nd.array(i, ctx=c)) for i, c in zip(ids, CTXS)]
        for o, h, c in zip(outs, heads, CTXS):
            o.backward(mx.nd.array(h, ctx=c))
        for o, i in zip(outs, ids):
            np.testing.assert_allclose(o.asnumpy(), weight[i], rtol=1e-5, atol=1e-6)
        grads = {}
        for i, h in zip(ids, heads):
            for r, row in zip(i, h):
                grads[r] = grads.get(r, 0) + row.astype(np.float64) / 10
        trainer.step(10)
        _lazy_sgd(weight, grads, lr, momentum, wd, mom)
    got = net.weight.row_sparse_data(mx.nd.arange(20)).asnumpy()
    np.testing.assert_allclose(got, weight, rtol=1e-5, atol=1e-6)


def test_row_sparse_parameters_save_and_load_in_mxnet_sparse_records(tmp_path):
    d = gluon.ParameterDict("net_")
    d.get("w1", shape=(10, 4), stype="row_sparse")
    d.get("w0", shape=(3,))
    d.initialize()
    trainer = gluon.Trainer(d, "sgd", {"learning_rate": 1.0})
    w1 = d.get("w1")
    with mx.autograd.record():
        y = w1.row_sparse_data(mx.nd.array([2])) * 1
    y.backward()
    trainer.step(1, ignore_stale_grad=True)     # row 2 changes in the store only
    want = w1.row_sparse_data(mx.nd.arange(10)).asnumpy()
    path = str(tmp_path / "p.params")
    d.save(path)
    saved = mx.nd.load(path)
    assert saved["net_w1"].stype == "row_sparse"
    np.testing.assert_array_equal(saved["net_w1"].asnumpy(), want)
    again = gluon.ParameterDict("net_")
    again.get("w1", shape=(10, 4), stype="row_sparse")
    again.get("w0", shape=(3,))
    again.load(path, mx.cpu(0))
    gluon.Trainer(again, "sgd")
    np.testing.assert_array_equal(
        again.get("w1").row_sparse_data(mx.nd.arange(10)).asnumpy(), want)
    dense = gluon.ParameterDict("net_")
    dense.get("w1", shape=(10, 4))
    dense.get("w0", shape=(3,))
    dense.load(path, mx.cpu(0))
    np.testing.assert_array_equal(dense.get("w1").data().asnumpy(), want)


def test_trainer_states_round_trip_with_a_row_sparse_parameter(tmp_path):
    p = _param(shape=(6, 1), ctx=[mx.cpu(0)], lr_mult=1.0)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "momentum": 0.5})
    with mx.autograd.record():
        y = p.row_sparse_data(mx.nd.arange(6)) * 2
    y.backward()
    trainer.step(1)
    path = str(tmp_path / "t.states")
    trainer.save_states(path)
    trainer.load_states(path)
    p.lr_mult = 2.0
    assert trainer._kvstore._updater.optimizer._get_lr(0) == pytest.approx(0.2)


def test_a_hybrid_block_refuses_a_row_sparse_parameter():
    params = gluon.ParameterDict("net_")
    params.get("weight", shape=(5, 5), stype="row_sparse")
    params.get("bias", shape=(5,))
    net = gluon.nn.Dense(5, params=params)
    net.initialize()
    with pytest.raises(RuntimeError, match="row_sparse"):
        net(mx.nd.ones((2, 5)))


class _EmbedThenDense(gluon.Block):
    """A row_sparse embedding read by a Dense layer whose shape waits for the first
    forward: the Dense weight enters the store after the first context's forward read it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.table = self.params.get("table", shape=(5, 3), stype="row_sparse",
                                         grad_stype="row_sparse")
            self.dense = gluon.nn.Dense(2)

    def forward(self, x):
        rows = self.table.row_sparse_data(x)
        return self.dense(mx.nd.Embedding(x, rows, input_dim=5, output_dim=3,
                                          sparse_grad=True))


@pytest.mark.parametrize("ctxs", [CTXS, CTXS[:1]])
def test_a_deferred_dense_layer_after_a_row_sparse_embedding_trains(ctxs):
    net = _EmbedThenDense(prefix="net_")
    net.initialize(mx.init.One(), ctx=ctxs)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    xs = gluon.utils.split_and_load(mx.nd.array([[3, 1], [1, 1]]), ctxs)
    with mx.autograd.record():
        ys = [net(x) for x in xs]
    for y in ys:
        y.backward()
    trainer.step(1)
    # each lookup's gradient row is the Dense weight's column sums, 2; row 1 is read 3 times
    got = net.table.row_sparse_data(mx.nd.arange(5)).asnumpy()
    np.testing.assert_array_equal(got, [[1] * 3, [-2] * 3, [1] * 3, [0] * 3, [1] * 3])
