"""Sparse storage inside bound executors: a graph with a node that a storage rule runs on
sparse storage runs its nodes through the rules (MXNet's FComputeEx in a bound graph), so
its outputs and gradients have the storage types and the stored positions of the
imperative ``mx.nd`` calls (the oracle for stored positions), and NumPy's values."""
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.test_utils import check_numeric_gradient


def sparse_value(rng, shape, density=0.4, zero_rows=()):
    """A random dense array with about ``density`` of it nonzero, rows ``zero_rows`` zero."""
    dense = rng.standard_normal(shape).astype(np.float32)
    dense[rng.random(shape) >= density] = 0
    dense[list(zero_rows)] = 0
    return dense


def same_storage(got, want):
    """``got`` has ``want``'s storage type, stored positions and values."""
    assert got.stype == want.stype
    if want.stype != "default":
        np.testing.assert_array_equal(got.indices.asnumpy(), want.indices.asnumpy())
        if want.stype == "csr":
            np.testing.assert_array_equal(got.indptr.asnumpy(), want.indptr.asnumpy())
        np.testing.assert_allclose(got.data.asnumpy(), want.data.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6)


def bound(sym, args, **kw):
    """``sym`` bound to ``args``, warning of no storage fallback (every node runs natively)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return sym.bind(mx.cpu(), args, **kw)


# (graph as fn(F, x, y), storage types of x and y, NumPy's values): each node runs natively
GRAPHS = {
    "relu_times_2": (lambda F, x, y: F.relu(x) * 2, ("row_sparse", "default"),
                     lambda x, y: np.maximum(x, 0) * 2),
    "csr_square_scaled": (lambda F, x, y: F.square(x) / 4, ("csr", "default"),
                          lambda x, y: x * x / 4),
    "rsp_sum_and_difference": (lambda F, x, y: F.elemwise_sub(F.elemwise_add(x, y), y),
                               ("row_sparse", "row_sparse"), lambda x, y: x + y - y),
    "csr_times_dense": (lambda F, x, y: F.elemwise_mul(x, y), ("csr", "default"),
                        lambda x, y: x * y),
    "dot_csr_dense": (lambda F, x, y: F.dot(x, F.transpose(y)), ("csr", "default"),
                      lambda x, y: x @ y.T),
    "dot_transposed": (lambda F, x, y: F.dot(x, y, transpose_a=True) * 3, ("csr", "default"),
                       lambda x, y: 3 * x.T @ y),
    "scatter_div": (lambda F, x, y: F._internal._scatter_elemwise_div(x, y),
                    ("row_sparse", "default"), lambda x, y: x / y),
    "scatter_plus": (lambda F, x, y: F._internal._scatter_plus_scalar(x, scalar=9.0),
                     ("csr", "default"), None),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_outputs_have_the_imperative_storage_and_positions(name, rng):
    fn, (sx, sy), numpy_fn = GRAPHS[name]
    a = sparse_value(rng, (6, 4), zero_rows=(1,))
    a[2] = -np.abs(a[2]) - 1        # a stored row that relu makes 0: still stored
    b = sparse_value(rng, (6, 4), density=0.5) + (2.0 if name == "scatter_div" else 0.0)
    xa, ya = mx.nd.array(a).tostype(sx), mx.nd.array(b).tostype(sy)
    want = fn(mx.nd, xa, ya)
    sym = fn(mx.sym, mx.sym.Variable("x", stype=sx), mx.sym.Variable("y", stype=sy))
    exe = bound(sym, {n: v for n, v in (("x", xa), ("y", ya)) if n in sym.list_arguments()})
    got = exe.forward()[0]
    same_storage(got, want)
    if numpy_fn is not None:
        expected = numpy_fn(a, b)
        if name == "scatter_div":           # rows x does not store are 0
            expected[np.all(a == 0, axis=1)] = 0
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_stored_zero_rows_are_kept_as_mxnet_keeps_them():
    x = mx.sym.Variable("x", stype="row_sparse")
    value = mx.nd.sparse.row_sparse_array(([[-1.0, -2.0], [3.0, -4.0]], [1, 4]), shape=(6, 2))
    out = bound(mx.sym.relu(x), {"x": value}).forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.indices.asnumpy(), [1, 4])     # row 1 computes to 0
    np.testing.assert_array_equal(out.data.asnumpy(), [[0, 0], [3, 0]])


def test_scatter_ops_keep_the_positions_of_their_sparse_operand():
    x = mx.sym.Variable("x", stype="csr")
    value = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
    for op, scalar, sign in (("_scatter_plus_scalar", 9.0, 1), ("_scatter_minus_scalar", 1.0, -1)):
        out = bound(getattr(mx.sym._internal, op)(x, scalar=scalar), {"x": value}).forward()[0]
        assert out.stype == "csr"
        np.testing.assert_array_equal(out.indices.asnumpy(), [0, 2, 1])
        np.testing.assert_allclose(out.data.asnumpy(), np.array([1, 2, 3]) + sign * scalar)
        # on a dense array, the plain scalar op
        dense = getattr(mx.nd._internal, op)(value.tostype("default"), scalar=scalar)
        np.testing.assert_allclose(dense.asnumpy(), value.asnumpy() + sign * scalar)
    # _scatter_elemwise_div of a csr lhs has no rule: dense, as MXNet's fallback
    with pytest.warns(RuntimeWarning, match="Storage type fallback"):
        out = mx.nd._internal._scatter_elemwise_div(value, value.tostype("default") + 1)
    assert out.stype == "default"


def test_a_graph_without_native_nodes_still_falls_back_once(rng):
    x = mx.sym.Variable("x", stype="row_sparse")
    a = sparse_value(rng, (4, 3))
    with pytest.warns(RuntimeWarning, match="Storage type fallback detected: the executor"):
        exe = mx.sym.exp(x).bind(mx.cpu(), {"x": mx.nd.array(a).tostype("row_sparse")})
    out = exe.forward()[0]
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), np.exp(a), rtol=1e-6)
    assert exe._native is False


def test_dense_graphs_keep_the_planned_path():
    x = mx.sym.Variable("x")
    exe = (mx.sym.relu(x) * 2).bind(mx.cpu(), {"x": mx.nd.ones((3, 2))})
    exe.forward()
    assert exe._native is False and exe._buffers is not None      # planned buffers


@pytest.mark.filterwarnings("ignore:Storage type fallback")
def test_a_mixed_graph_runs_dense_nodes_on_dense_copies(rng):
    """exp has no rule: that node falls back (the operator's own warning), the rest is native."""
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    a, b = sparse_value(rng, (5, 4)), rng.standard_normal((4, 3)).astype(np.float32)
    exe = mx.sym.exp(mx.sym.dot(x, w, transpose_a=False) * 0.5).bind(
        mx.cpu(), {"x": mx.nd.array(a).tostype("csr"), "w": mx.nd.array(b)})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), np.exp(a @ b * 0.5), rtol=1e-5)
    y = mx.sym.Variable("y", stype="row_sparse")
    exe = mx.sym.exp(mx.sym.relu(y)).bind(mx.cpu(), {"y": mx.nd.array(a).tostype("row_sparse")})
    assert exe._native
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), np.exp(np.maximum(a, 0)), rtol=1e-6)


def test_forward_sees_new_sparse_values_and_writes_the_same_output_arrays(rng):
    x = mx.sym.Variable("x", stype="row_sparse")
    first = sparse_value(rng, (6, 3), zero_rows=(0, 5))
    exe = bound(mx.sym.relu(x) * 2, {"x": mx.nd.array(first).tostype("row_sparse")})
    out = exe.outputs[0]
    assert out.stype == "row_sparse"        # made at bind in its inferred storage
    exe.forward()
    assert exe.outputs[0] is out
    same_storage(out, mx.nd.relu(mx.nd.array(first).tostype("row_sparse")) * 2)
    second = sparse_value(rng, (6, 3), zero_rows=(1, 2, 3))
    mx.nd.array(second).tostype("row_sparse").copyto(exe.arg_dict["x"])
    exe.forward()
    same_storage(out, mx.nd.relu(mx.nd.array(second).tostype("row_sparse")) * 2)
    exe.forward(x=mx.nd.array(first).tostype("row_sparse"))
    same_storage(exe.outputs[0], mx.nd.relu(mx.nd.array(first).tostype("row_sparse")) * 2)
    assert exe.outputs[0] is out


def imperative_grad(fn, values, wrt, head, grad_stype):
    """The gradient of ``fn(mx.nd, *values)`` w.r.t. ``values[wrt]`` by mx.autograd."""
    values = [v.copy() for v in values]
    values[wrt].attach_grad(stype=grad_stype)
    with mx.autograd.record():
        out = fn(mx.nd, *values)
    out.backward(head)
    return values[wrt].grad


def test_dot_gradient_is_row_sparse_with_the_imperative_rows(rng):
    fn = lambda F, x, w: F.dot(x, w)        # noqa: E731
    a = sparse_value(rng, (5, 6), density=0.3)
    a[:, [1, 4]] = 0                        # columns the batch does not store
    b = rng.standard_normal((6, 3)).astype(np.float32)
    head = rng.standard_normal((5, 3)).astype(np.float32)
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    exe = fn(mx.sym, x, w).simple_bind(mx.cpu(), x=(5, 6), w=(6, 3),
                                        grad_req={"x": "null", "w": "write"})
    assert exe.grad_dict["w"].stype == "row_sparse"
    mx.nd.array(a).tostype("csr").copyto(exe.arg_dict["x"])
    exe.arg_dict["w"][:] = b
    exe.forward(is_train=True)
    exe.backward(mx.nd.array(head))
    want = imperative_grad(fn, [mx.nd.array(a).tostype("csr"), mx.nd.array(b)], 1,
                           mx.nd.array(head), "row_sparse")
    same_storage(exe.grad_dict["w"], want)
    assert 1 not in exe.grad_dict["w"].indices.asnumpy()
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), a.T @ head, rtol=1e-5, atol=1e-6)
    # the same gradient as a dense executor of the same graph
    dense = fn(mx.sym, mx.sym.Variable("x"), w).bind(
        mx.cpu(), {"x": mx.nd.array(a), "w": mx.nd.array(b)},
        args_grad={"w": mx.nd.zeros((6, 3))}, grad_req={"x": "null", "w": "write"})
    dense.forward(is_train=True)
    dense.backward(mx.nd.array(head))
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), dense.grad_dict["w"].asnumpy(),
                               rtol=1e-5, atol=1e-6)


def test_grad_req_add_accumulates_into_a_row_sparse_gradient(rng):
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    exe = mx.sym.dot(x, w).simple_bind(mx.cpu(), x=(4, 6), w=(6, 2),
                                        grad_req={"x": "null", "w": "add"})
    grad = exe.grad_dict["w"]
    heads = []
    rows = set()
    total = np.zeros((6, 2), np.float32)
    for _ in range(2):
        a = sparse_value(rng, (4, 6), density=0.25)
        head = rng.standard_normal((4, 2)).astype(np.float32)
        exe.forward(is_train=True, x=mx.nd.array(a).tostype("csr"))
        exe.backward(mx.nd.array(head))
        heads.append(head)
        rows |= set(np.flatnonzero(np.any(a != 0, axis=0)))
        total += a.T @ head
    assert exe.grad_dict["w"] is grad and grad.stype == "row_sparse"
    np.testing.assert_array_equal(grad.indices.asnumpy(), sorted(rows))
    np.testing.assert_allclose(grad.asnumpy(), total, rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:Storage type fallback")   # a gradient node falls back
def test_dense_gradients_through_sparse_nodes_match_the_dense_graph(rng):
    """w's gradient through elemwise_mul(row_sparse x, w) and relu: the dense executor's,
    and the finite differences'."""
    fn = lambda F, x, w: F.relu(F.elemwise_mul(x, w)) * 3      # noqa: E731
    a = sparse_value(rng, (5, 4), zero_rows=(2,))
    b = rng.standard_normal((5, 4)).astype(np.float32)
    head = rng.standard_normal((5, 4)).astype(np.float32)
    results = []
    for stype in ("row_sparse", "default"):
        x, w = mx.sym.Variable("x", stype=stype), mx.sym.Variable("w")
        exe = fn(mx.sym, x, w).bind(
            mx.cpu(), {"x": mx.nd.array(a).tostype(stype), "w": mx.nd.array(b)},
            args_grad={"w": mx.nd.zeros((5, 4))}, grad_req={"x": "null", "w": "write"})
        assert exe._native == (stype != "default")
        out = exe.forward(is_train=True)[0]
        assert out.stype == stype
        exe.backward(mx.nd.array(head))
        results.append(exe.grad_dict["w"].asnumpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    np.testing.assert_allclose(results[0], 3 * head * a * (a * b > 0), rtol=1e-5, atol=1e-6)
    x = mx.sym.Variable("x", stype="row_sparse")
    check_numeric_gradient(fn(mx.sym, x, mx.sym.Variable("w")),
                           {"x": mx.nd.array(a).tostype("row_sparse"), "w": mx.nd.array(b)},
                           grad_nodes=["w"], numeric_eps=1e-3, rtol=1e-2, atol=1e-2)


def test_embedding_sparse_grad_stores_the_rows_looked_up(rng):
    """Row 7 is looked up with a zero head gradient: stored all the same (MXNet's kernel)."""
    data, w = mx.sym.Variable("data"), mx.sym.Variable("w")
    emb = mx.sym.Embedding(data, w, input_dim=10, output_dim=3, sparse_grad=True)
    exe = emb.simple_bind(mx.cpu(), data=(4,), grad_req={"data": "null", "w": "write"})
    ids = np.array([1, 7, 1, 2], np.float32)
    weight = rng.standard_normal((10, 3)).astype(np.float32)
    head = rng.standard_normal((4, 3)).astype(np.float32)
    head[1] = 0
    exe.arg_dict["data"][:] = ids
    exe.arg_dict["w"][:] = weight
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), weight[[1, 7, 1, 2]])
    exe.backward(mx.nd.array(head))
    fn = lambda F, d, w: F.Embedding(d, w, input_dim=10, output_dim=3,      # noqa: E731
                                     sparse_grad=True)
    want = imperative_grad(fn, [mx.nd.array(ids), mx.nd.array(weight)], 1, mx.nd.array(head),
                           "row_sparse")
    same_storage(exe.grad_dict["w"], want)
    np.testing.assert_array_equal(exe.grad_dict["w"].indices.asnumpy(), [1, 2, 7])


def test_monitor_sees_sparse_values(rng):
    x = mx.sym.Variable("x", stype="row_sparse")
    exe = bound(mx.sym.relu(x, name="r") * 2,
                {"x": mx.nd.array(sparse_value(rng, (4, 3))).tostype("row_sparse")})
    seen = {}
    exe.set_monitor_callback(lambda name, arr: seen.setdefault(name, arr.stype))
    exe.forward()
    assert seen["r_output"] == "row_sparse"


def test_bad_sparse_arguments_raise_mxnet_errors():
    x, y = mx.sym.Variable("x", stype="row_sparse"), mx.sym.Variable("y")
    sym = mx.sym._internal._scatter_elemwise_div(x, y)
    with pytest.raises(MXNetError):
        sym.bind(mx.cpu(), {"x": mx.nd.sparse.zeros("row_sparse", (4, 3)),
                            "y": mx.nd.ones((5, 3))}).forward()
    bad = mx.nd.sparse.row_sparse_array((np.ones((1, 3), np.float32), [9]), shape=(4, 3))
    exe = sym.bind(mx.cpu(), {"x": bad, "y": mx.nd.ones((4, 3))})
    with pytest.raises(MXNetError, match="_scatter_elemwise_div"):
        exe.forward()


def test_reshape_keeps_running_the_storage_rules(rng):
    x = mx.sym.Variable("x", stype="row_sparse")
    exe = bound(mx.sym.relu(x) * 2, {"x": mx.nd.sparse.zeros("row_sparse", (6, 3))})
    small = exe.reshape(x=(4, 3))
    a = sparse_value(rng, (4, 3), zero_rows=(2,))
    out = small.forward(x=mx.nd.array(a).tostype("row_sparse"))[0]
    same_storage(out, mx.nd.relu(mx.nd.array(a).tostype("row_sparse")) * 2)


def test_a_dense_gradient_array_receives_a_rule_made_sparse_gradient(rng):
    """dot(csr, w)'s rule makes w's gradient row_sparse; a dense buffer gets it densified."""
    a = sparse_value(rng, (5, 6), density=0.3)
    b = rng.standard_normal((6, 2)).astype(np.float32)
    head = rng.standard_normal((5, 2)).astype(np.float32)
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    for req, start in (("write", 0.0), ("add", 1.5)):
        exe = bound(mx.sym.dot(x, w), {"x": mx.nd.array(a).tostype("csr"), "w": mx.nd.array(b)},
                    args_grad={"w": mx.nd.full((6, 2), start)}, grad_req={"x": "null", "w": req})
        exe.forward(is_train=True)
        exe.backward(mx.nd.array(head))
        assert exe.grad_dict["w"].stype == "default"
        np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), start + a.T @ head, rtol=1e-5,
                                   atol=1e-5)
