"""Sparse arrays in ``mx.sym`` graphs (tests/sparse/test_sparse_executor.py checks the
storage rules in executors), sparse gradient buffers of an executor, the test helpers' ``grad_stypes``, and
the local kvstore's row_sparse values (``row_sparse_pull``, lazy updates of pushed
row_sparse gradients)."""
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite.test_utils import check_numeric_gradient, check_symbolic_backward, \
    check_symbolic_forward


def csr(rng, shape, density=0.4):
    dense = rng.standard_normal(shape).astype(np.float32)
    dense[rng.random(shape) >= density] = 0
    return dense


@pytest.mark.filterwarnings("ignore:Storage type fallback")
def test_variable_stype_and_simple_bind():
    x = mx.sym.Variable("x", stype="csr")
    assert x.attr_dict()["x"]["__storage_type__"] == "2"
    y = mx.sym.Variable("y")
    exe = mx.sym.sparse.dot(x, y).simple_bind(mx.cpu(), x=(4, 3), y=(3, 2))
    assert exe.arg_dict["x"].stype == "csr" and exe.arg_dict["y"].stype == "default"
    exe = (y * 2).simple_bind(mx.cpu(), y=(3, 2), stype_dict={"y": "row_sparse"})
    assert exe.arg_dict["y"].stype == "row_sparse"
    with pytest.raises(mx.MXNetError, match="storage type"):
        mx.sym.Variable("z", stype="coo")


def test_executor_runs_sparse_arguments_and_sees_their_updates(rng):
    x, y = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("y")
    a, b = csr(rng, (5, 4)), rng.standard_normal((4, 3)).astype(np.float32)
    args = {"x": mx.nd.array(a).tostype("csr"), "y": mx.nd.array(b)}
    grads = {"y": mx.nd.sparse.zeros("row_sparse", (4, 3))}
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # dot(csr, dense) runs natively
        exe = mx.sym.dot(x, y).bind(mx.cpu(), args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), a @ b, rtol=1e-5, atol=1e-6)
    head = rng.standard_normal((5, 3)).astype(np.float32)
    exe.backward(mx.nd.array(head))
    assert exe.grad_dict["y"].stype == "row_sparse"
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), a.T @ head, rtol=1e-5,
                               atol=1e-6)
    a2 = csr(rng, (5, 4))
    mx.nd.array(a2).tostype("csr").copyto(exe.arg_dict["x"])   # a new value, same array
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), a2 @ b, rtol=1e-5, atol=1e-6)
    exe.forward(is_train=True, x=mx.nd.array(a).tostype("csr"))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), a @ b, rtol=1e-5, atol=1e-6)


def test_check_symbolic_helpers_take_sparse_values_and_gradients(rng):
    x, y = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("y")
    a, b = csr(rng, (6, 5)), rng.standard_normal((5, 2)).astype(np.float32)
    location = {"x": mx.nd.array(a).tostype("csr"), "y": mx.nd.array(b)}
    sym = mx.sym.sparse.dot(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_symbolic_forward(sym, location, [a @ b], rtol=1e-5, atol=1e-6)
        head = np.ones((6, 2), np.float32)
        grads = check_symbolic_backward(sym, location, [head], {"y": a.T @ head},
                                        grad_req={"x": "null", "y": "write"},
                                        grad_stypes={"y": "row_sparse"}, rtol=1e-5, atol=1e-5)
        assert grads["y"].stype == "row_sparse"
        check_numeric_gradient(sym, location, grad_nodes=["y"],
                               grad_stype_dict={"y": "row_sparse"}, numeric_eps=1e-2,
                               rtol=1e-2, atol=1e-2)


def test_kvstore_row_sparse_pull_picks_rows(rng):
    kv = mx.kv.create("local")
    table = rng.standard_normal((12, 3)).astype(np.float32)
    kv.init("emb", mx.nd.array(table))
    outs = [mx.nd.sparse.zeros("row_sparse", (12, 3)) for _ in range(2)]
    kv.row_sparse_pull("emb", out=outs, row_ids=[mx.nd.array([9, 1, 1]), mx.nd.array([4])])
    np.testing.assert_array_equal(outs[0].indices.asnumpy(), [1, 9])
    np.testing.assert_array_equal(outs[0].data.asnumpy(), table[[1, 9]])
    np.testing.assert_array_equal(outs[1].indices.asnumpy(), [4])
    with pytest.raises(mx.MXNetError, match="row_ids"):
        kv.row_sparse_pull("emb", out=outs[0], row_ids=mx.nd.array([12]))
    with pytest.raises(mx.MXNetError, match="RowSparseNDArray"):
        kv.row_sparse_pull("emb", out=mx.nd.zeros((12, 3)), row_ids=mx.nd.array([1]))


def test_kvstore_push_of_row_sparse_gradients_updates_lazily(rng):
    kv = mx.kv.create("local")
    table = rng.standard_normal((10, 2)).astype(np.float32)
    kv.init(0, mx.nd.array(table))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, wd=0.1))
    grads = [mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [r]), shape=(10, 2))
             for r in (3, 6, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kv.push(0, grads)
    got = mx.nd.zeros((10, 2))
    kv.pull(0, out=got)
    want = table.copy()
    summed = {3: np.array([2.0, 4.0]), 6: np.array([1.0, 2.0])}
    for r, g in summed.items():
        want[r] = want[r] - 0.5 * (g + 0.1 * want[r])
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_kvstore_without_optimizer_sums_row_sparse_values():
    kv = mx.kv.create("local")
    kv.init("g", mx.nd.sparse.zeros("row_sparse", (5, 2)))
    kv.push("g", [mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [r]), shape=(5, 2))
                  for r in (0, 4)])
    out = mx.nd.sparse.zeros("row_sparse", (5, 2))
    kv.pull("g", out=out)
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.indices.asnumpy(), [0, 4])


@pytest.mark.filterwarnings("ignore:Storage type fallback")
def test_executor_takes_a_sparse_head_gradient(rng):
    x = mx.sym.Variable("x")
    exe = (x * 3).bind(mx.cpu(), {"x": mx.nd.ones((4, 2))},
                       args_grad={"x": mx.nd.zeros((4, 2))})
    exe.forward(is_train=True)
    head = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [2]), shape=(4, 2))
    exe.backward(head)
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), 3 * head.asnumpy())


@pytest.mark.filterwarnings("ignore:Storage type fallback")
def test_storage_inference_gives_outputs_and_gradients_their_types(rng):
    """The graph's storage inference (mxlite.symbol._storage): relu of row_sparse is
    row_sparse (its values the dense result's); simple_bind gives Embedding(sparse_grad)'s
    weight and dot(csr, w)'s w row_sparse gradient arrays, and dense ones otherwise."""
    x = mx.sym.Variable("x", stype="row_sparse")
    dense = np.array([[1, -2], [0, 0], [3, 4]], np.float32)
    exe = mx.sym.relu(x).bind(mx.cpu(), {"x": mx.nd.array(dense).tostype("row_sparse")})
    out = exe.forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(dense, 0))
    assert mx.sym.exp(x).bind(mx.cpu(), {"x": mx.nd.array(dense).tostype(
        "row_sparse")}).forward()[0].stype == "default"
    data, w = mx.sym.Variable("data"), mx.sym.Variable("w")
    for sparse in (True, False):
        emb = mx.sym.Embedding(data, w, input_dim=10, output_dim=3, sparse_grad=sparse)
        exe = emb.simple_bind(mx.cpu(), data=(4,), grad_req={"data": "null", "w": "write"})
        assert exe.grad_dict["w"].stype == ("row_sparse" if sparse else "default")
    exe.arg_dict["data"][:] = np.array([1, 7, 7, 2])
    lhs = mx.sym.Variable("lhs", stype="csr")
    exe = mx.sym.dot(lhs, w).simple_bind(mx.cpu(), lhs=(4, 10), w=(10, 3))
    assert exe.grad_dict["w"].stype == "row_sparse"
    # a variable that also feeds a dense-gradient op keeps a dense gradient array
    exe = mx.sym.broadcast_add(mx.sym.dot(lhs, w), mx.sym.sum(w)).simple_bind(
        mx.cpu(), lhs=(4, 10), w=(10, 3))
    assert exe.grad_dict["w"].stype == "default"
