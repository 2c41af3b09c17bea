"""Sparse gradients through the tape and lazy optimizer updates: row_sparse weight
gradients of ``dot(csr, w)`` and ``Embedding(sparse_grad=True)``, ``attach_grad(stype=)``,
Gluon's ``grad_stype`` and the Trainer's lazy updates, each against the dense computation."""
import warnings

import numpy as np
import pytest
import scipy.sparse as spsp

import mxlite as mx


@pytest.fixture(autouse=True)
def _no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # every step here runs a storage rule
        yield


def csr(rng, shape, density=0.3):
    return spsp.random(*shape, density=density, format="csr", dtype=np.float32,
                       random_state=np.random.RandomState(int(rng.integers(1 << 30))))


@pytest.mark.parametrize("grad_stype", [None, "default", "row_sparse"])
def test_dot_csr_weight_gradient(rng, grad_stype):
    s = csr(rng, (9, 7))
    w = mx.nd.array(rng.standard_normal((7, 3)).astype(np.float32))
    w.attach_grad(stype=grad_stype)
    with mx.autograd.record():
        loss = (mx.nd.dot(mx.nd.sparse.csr_matrix(s), w) ** 2).sum()
    loss.backward()
    assert w.grad.stype == (grad_stype or "default")
    want = s.T @ (2 * (s @ w.asnumpy()))
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5, atol=1e-5)
    if grad_stype == "row_sparse":
        np.testing.assert_array_equal(w.grad.indices.asnumpy(), np.unique(s.indices))
        w.grad.check_format()


def test_grad_req_add_accumulates_row_sparse(rng):
    w = mx.nd.array(rng.standard_normal((6, 2)).astype(np.float32))
    w.attach_grad(grad_req="add", stype="row_sparse")
    total = np.zeros((6, 2), np.float32)
    for rows in ([1, 4], [4, 5]):
        with mx.autograd.record():
            loss = mx.nd.Embedding(mx.nd.array(rows), w, input_dim=6, output_dim=2,
                                   sparse_grad=True).sum()
        loss.backward()
        total[rows] += 1
    assert w.grad.stype == "row_sparse"
    np.testing.assert_array_equal(w.grad.indices.asnumpy(), [1, 4, 5])
    np.testing.assert_array_equal(w.grad.asnumpy(), total)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_sparse_grad_equals_dense(rng, dtype):
    idx = mx.nd.array(rng.integers(0, 50, (6, 4)))
    head = mx.nd.array(rng.standard_normal((6, 4, 3)), dtype=dtype)
    grads = []
    w = mx.nd.array(rng.standard_normal((50, 3)), dtype=dtype)
    for sparse in (False, True):
        w.attach_grad(stype="row_sparse" if sparse else None)
        with mx.autograd.record():
            out = mx.nd.Embedding(idx, w, input_dim=50, output_dim=3, dtype=dtype,
                                  sparse_grad=sparse)
        out.backward(head)
        grads.append(w.grad)
    assert grads[1].stype == "row_sparse" and grads[1].dtype == dtype
    np.testing.assert_array_equal(grads[1].indices.asnumpy(),
                                  np.unique(idx.asnumpy().astype(np.int64)))
    np.testing.assert_allclose(grads[1].asnumpy(), grads[0].asnumpy(), rtol=1e-6)


def test_embedding_sparse_grad_bad_index_is_clear():
    w = mx.nd.ones((4, 2))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        out = mx.nd.Embedding(mx.nd.array([1, 2]), w, input_dim=4, output_dim=2,
                              sparse_grad=True)
    out.backward()
    with pytest.raises(mx.MXNetError, match="Embedding"):
        mx.nd.Embedding(mx.nd.array([9]), w, input_dim=4, output_dim=2, sparse_grad=True)


def _update(name, weight, grad, states, **kw):
    fn = getattr(mx.nd, name)
    return fn(weight, grad, *states, out=weight, **kw)


_UPDATES = [("sgd_update", 0, dict(lr=0.1, wd=0.05)),
            ("sgd_mom_update", 1, dict(lr=0.1, momentum=0.9, wd=0.05)),
            ("adam_update", 2, dict(lr=0.1, wd=0.05)),
            ("ftrl_update", 2, dict(lr=0.1, wd=0.05))]


@pytest.mark.parametrize("name,n_states,kw", _UPDATES)
def test_lazy_update_touches_only_the_gradient_rows(rng, name, n_states, kw):
    """The stored rows update exactly as a dense update of those rows would; the others,
    and their states, are untouched (wd and the states' decay apply to stored rows only)."""
    weight = rng.standard_normal((8, 3)).astype(np.float32)
    states = [np.abs(rng.standard_normal((8, 3))).astype(np.float32) for _ in range(n_states)]
    rows = np.array([1, 4, 6])
    gdata = rng.standard_normal((3, 3)).astype(np.float32)
    w = mx.nd.array(weight)
    st = [mx.nd.array(s) for s in states]
    version = w.version
    _update(name, w, mx.nd.sparse.row_sparse_array((gdata, rows), shape=(8, 3)), st, **kw)
    assert w.version > version
    # the oracle: the dense kernel on the stored rows alone
    w_rows, st_rows = mx.nd.array(weight[rows]), [mx.nd.array(s[rows]) for s in states]
    _update(name, w_rows, mx.nd.array(gdata), st_rows, **kw)
    want_w, want_s = weight.copy(), [s.copy() for s in states]
    want_w[rows] = w_rows.asnumpy()
    for s, r in zip(want_s, st_rows):
        s[rows] = r.asnumpy()
    np.testing.assert_array_equal(w.asnumpy(), want_w)
    for got, want in zip(st, want_s):
        np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("name,n_states,kw", _UPDATES[:3])
def test_lazy_update_false_is_the_dense_update(rng, name, n_states, kw):
    weight = rng.standard_normal((8, 3)).astype(np.float32)
    states = [np.abs(rng.standard_normal((8, 3))).astype(np.float32) for _ in range(n_states)]
    g = mx.nd.sparse.row_sparse_array((rng.standard_normal((2, 3)).astype(np.float32),
                                       [0, 5]), shape=(8, 3))
    w, st = mx.nd.array(weight), [mx.nd.array(s) for s in states]
    _update(name, w, g, st, lazy_update=False, **kw)
    w2, st2 = mx.nd.array(weight), [mx.nd.array(s) for s in states]
    _update(name, w2, g.tostype("default"), st2, **kw)
    np.testing.assert_array_equal(w.asnumpy(), w2.asnumpy())
    for a, b in zip(st, st2):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_update_without_out_leaves_the_weight(rng):
    weight = rng.standard_normal((5, 2)).astype(np.float32)
    w = mx.nd.array(weight)
    g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [3]), shape=(5, 2))
    new = mx.nd.sgd_update(w, g, lr=0.5)
    np.testing.assert_array_equal(w.asnumpy(), weight)
    want = weight.copy()
    want[3] -= 0.5
    np.testing.assert_allclose(new.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("optimizer,params", [
    ("sgd", {"learning_rate": 0.1, "wd": 0.01}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
    ("adam", {"learning_rate": 0.01}), ("ftrl", {"learning_rate": 0.1})])
def test_gluon_embedding_sparse_grad_trains_only_used_rows(rng, optimizer, params):
    net = mx.gluon.nn.Embedding(200, 6, sparse_grad=True)
    net.initialize(mx.init.Uniform(0.1))
    assert net.weight.grad().stype == "row_sparse"
    trainer = mx.gluon.Trainer(net.collect_params(), optimizer, params)
    before = net.weight.data().asnumpy().copy()
    x = mx.nd.array(rng.integers(0, 200, (3, 7)))
    for _ in range(2):
        with mx.autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(3)
    moved = np.flatnonzero(np.abs(net.weight.data().asnumpy() - before).sum(1))
    np.testing.assert_array_equal(moved, np.unique(x.asnumpy().astype(np.int64)))


def test_gluon_sparse_and_dense_embeddings_agree_on_the_used_rows(rng):
    x = mx.nd.array(rng.integers(0, 30, (4, 5)))
    results = []
    for sparse in (False, True):
        net = mx.gluon.nn.Embedding(30, 4, sparse_grad=sparse)
        net.initialize(mx.init.Constant(0.5))
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        with mx.autograd.record():
            loss = (net(x) * mx.nd.arange(4)).sum()
        loss.backward()
        trainer.step(1)
        results.append(net.weight.data().asnumpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)   # no wd: the same


def test_zero_grad_empties_a_row_sparse_gradient():
    net = mx.gluon.nn.Embedding(10, 2, sparse_grad=True)
    net.initialize()
    with mx.autograd.record():
        net(mx.nd.array([3])).sum().backward()
    assert net.weight.grad().data.shape[0] == 1
    net.collect_params().zero_grad()
    assert net.weight.grad().stype == "row_sparse" and net.weight.grad().data.shape[0] == 0


def test_methods_of_a_sparse_variable_are_on_the_tape(rng):
    """copy, astype, tostype, negation and arithmetic of a sparse variable are recorded:
    the gradient reaches it through each (never a silent zero)."""
    dense = rng.standard_normal((4, 3)).astype(np.float32)
    dense[1] = 0
    identity = (lambda x: x.copy(), lambda x: x.astype("float64").astype("float32"),
                lambda x: x.tostype("default"), lambda x: -(-x), lambda x: x * 2 / 2)
    cases = [(f, dense) for f in identity] + [(lambda x: mx.nd.sqrt(x * x), np.abs(dense))]
    for make, want in cases:             # loss = sum(make(x) * dense): its gradient
        x = mx.nd.array(dense).tostype("row_sparse")
        x.attach_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (negative's derivative: ones_like, densely)
            with mx.autograd.record():
                y = make(x)
                loss = mx.nd.sum(y.tostype("default") * mx.nd.array(dense))
            loss.backward()
        assert x.grad.stype == "row_sparse"
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_adagrad_with_row_sparse_gradients_is_lazy(rng):
    """Gluon's AdaGrad on a sparse embedding: sparse.adagrad_update on the looked-up rows."""
    net = mx.gluon.nn.Embedding(40, 3, sparse_grad=True)
    net.initialize(mx.init.Uniform(0.1))
    trainer = mx.gluon.Trainer(net.collect_params(), "adagrad", {"learning_rate": 0.1})
    before = net.weight.data().asnumpy().copy()
    ids = mx.nd.array([3, 17, 3])
    with mx.autograd.record():
        loss = (net(ids) * mx.nd.array(rng.standard_normal((3, 3)))).sum()
    loss.backward()
    grad = net.weight.grad().asnumpy()
    trainer.step(1)
    moved = np.flatnonzero(np.abs(net.weight.data().asnumpy() - before).sum(1))
    np.testing.assert_array_equal(moved, [3, 17])
    want = before - 0.1 * grad / np.sqrt(grad * grad + 1e-7)
    np.testing.assert_allclose(net.weight.data().asnumpy()[[3, 17]], want[[3, 17]], rtol=1e-5)
    with pytest.raises(mx.MXNetError, match="wd must be 0"):
        mx.nd.sparse.adagrad_update(mx.nd.ones(2), mx.nd.ones(2), mx.nd.zeros(2), lr=0.1,
                                    wd=0.1)
