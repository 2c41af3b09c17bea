"""Trainer: updates against hand-computed optimizer formulas, multipliers, batch-size
rescaling, stale gradients, several contexts, the kvstore path equal to the direct path,
learning rate and optimizer states."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn

nd = mx.nd


def make_param(name, value, **kwargs):
    p = gluon.Parameter(name, shape=np.shape(value), **kwargs)
    p.initialize(mx.init.Constant(nd.array(value)))
    return p


def backward(params, coefs):
    """loss = sum_i sum(coef_i * p_i): the gradient of p_i is coef_i."""
    with autograd.record():
        loss = sum((p.data() * nd.array(c)).sum() for p, c in zip(params, coefs))
    loss.backward()


def test_sgd_momentum_weight_decay_formula():
    w0, g = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.5])
    w = make_param("w", w0)
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    ref, mom = w0.copy(), np.zeros(3)
    for _ in range(3):
        backward([w], [g])
        trainer.step(4)
        grad = g / 4 + 0.01 * ref
        mom = 0.9 * mom - 0.1 * grad
        ref = ref + mom
    np.testing.assert_allclose(w.data().asnumpy(), ref, rtol=1e-6)


def test_adam_formula_and_multipliers():
    w0, g = np.array([1.0, 2.0]), np.array([0.3, -0.7])
    w = make_param("w_weight", w0, lr_mult=0.5)
    trainer = gluon.Trainer({"w": w}, "adam", {"learning_rate": 0.01})
    m, v, ref = np.zeros(2), np.zeros(2), w0.copy()
    for t in range(1, 4):
        backward([w], [g])
        trainer.step(1)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        lr = 0.005 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        ref = ref - lr * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(w.data().asnumpy(), ref, rtol=1e-5)


def test_stale_gradient_and_ignore():
    a, b = make_param("a", [1.0]), make_param("b", [1.0])
    trainer = gluon.Trainer([a, b], "sgd", {"learning_rate": 1.0})
    backward([a, b], [[1.0], [2.0]])
    trainer.step(1)
    assert (a.data().asnumpy()[0], b.data().asnumpy()[0]) == (0.0, -1.0)
    backward([a], [[1.0]])
    with pytest.raises(mx.MXNetError, match="'b'.*has not been updated"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)
    assert (a.data().asnumpy()[0], b.data().asnumpy()[0]) == (-1.0, -1.0)


def test_frozen_parameter_not_updated():
    a = make_param("a", [1.0])
    frozen = make_param("f", [5.0], grad_req="null")
    trainer = gluon.Trainer([a, frozen], "sgd", {"learning_rate": 1.0})
    backward([a], [[2.0]])
    trainer.step(1)
    assert frozen.data().asnumpy().tolist() == [5.0]
    assert a.data().asnumpy().tolist() == [-1.0]


def _train(kvstore, ctxs=(mx.cpu(),), steps=3, optimizer="sgd", update_on_kvstore=None):
    mx.random.seed(0)
    net = nn.Dense(3, in_units=4, prefix="d_")
    net.initialize(mx.init.Xavier(), ctx=list(ctxs))
    trainer = gluon.Trainer(net.collect_params(), optimizer,
                            {"learning_rate": 0.1, "momentum": 0.9} if optimizer == "sgd"
                            else {"learning_rate": 0.01},
                            kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    rng = np.random.RandomState(0)
    for _ in range(steps):
        x = rng.standard_normal((4, 4))
        with autograd.record():
            losses = [(net(nd.array(x[i::len(ctxs)], ctx=c)) ** 2).sum()
                      for i, c in enumerate(ctxs)]
        for loss in losses:
            loss.backward()
        trainer.step(4)
    return [p.data(ctxs[-1]).asnumpy() for p in net.collect_params().values()], trainer


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_kvstore_path_equals_direct(optimizer):
    direct, t1 = _train("device", optimizer=optimizer)
    assert t1._kvstore is None                      # one context: MXNet's direct path
    for store in ("device", "local"):
        for on_kv in (False, True):
            via_kv, t2 = _train(mx.kv.create(store), optimizer=optimizer,
                                update_on_kvstore=on_kv)
            assert t2._kvstore is not None and t2._update_on_kvstore == on_kv
            for a, b in zip(direct, via_kv):
                np.testing.assert_array_equal(a, b)


def test_two_contexts_sum_gradients():
    """Half of each batch on each of two contexts gives one context's whole-batch step."""
    one, _ = _train("device")
    two, trainer = _train("device", ctxs=(mx.cpu(0), mx.cpu(1)))
    assert trainer._kvstore is not None
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_allreduce_then_update_and_errors():
    a = make_param("a", [1.0, 1.0])
    trainer = gluon.Trainer([a], "sgd", {"learning_rate": 0.5})
    backward([a], [[1.0, 2.0]])
    trainer.allreduce_grads()
    trainer.update(2)
    np.testing.assert_allclose(a.data().asnumpy(), [0.75, 0.5])
    on_kv = gluon.Trainer([make_param("b", [1.0])], "sgd", kvstore=mx.kv.create("local"),
                          update_on_kvstore=True)
    with pytest.raises(mx.MXNetError, match="update_on_kvstore"):
        on_kv.update(1)
    with pytest.raises(mx.MXNetError, match="Parameters"):
        gluon.Trainer([1.0], "sgd")
    with pytest.raises(mx.MXNetError, match="optimizer_params"):
        gluon.Trainer([a], mx.optimizer.SGD(), {"learning_rate": 1.0})
    with pytest.raises(mx.MXNetError, match="Cannot find optimizer"):
        gluon.Trainer([a], "no_such_optimizer")


def test_learning_rate_and_states(tmp_path):
    w = make_param("w", [1.0, 2.0])
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    assert trainer.learning_rate == 0.1
    trainer.set_learning_rate(0.2)
    assert trainer.learning_rate == 0.2
    backward([w], [[1.0, 1.0]])
    trainer.step(1)
    fname = str(tmp_path / "trainer.states")
    trainer.save_states(fname)
    saved_w = w.data().copy()
    backward([w], [[1.0, 1.0]])
    trainer.step(1)
    after = w.data().asnumpy()
    w.set_data(saved_w)
    other = gluon.Trainer([w], "sgd", {"learning_rate": 0.7, "momentum": 0.0})
    other.load_states(fname)
    assert other.learning_rate == 0.2
    backward([w], [[1.0, 1.0]])
    other.step(1)                       # the momentum state came back too
    np.testing.assert_allclose(w.data().asnumpy(), after, rtol=1e-6)
    with open(fname, "wb") as f:
        f.write(b"not a pickle")
    with pytest.raises(mx.MXNetError, match="no optimizer states"):
        other.load_states(fname)


def test_deferred_parameters_train():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation="relu"), nn.Dense(1))
    net.initialize()
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    x = nd.array(np.random.RandomState(0).standard_normal((8, 3)))
    y = x.sum(axis=1, keepdims=True)
    losses = []
    for _ in range(30):
        with autograd.record():
            loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        trainer.step(1)
        losses.append(loss.asscalar())
    assert losses[-1] < 0.5 * losses[0]


def test_set_data_after_steps():
    """New values set between steps are what the next step updates."""
    for kvstore, on_kv in (("device", None), (mx.kv.create("local"), False)):
        w = make_param("w", [1.0, 1.0])
        trainer = gluon.Trainer([w], "sgd", {"learning_rate": 1.0}, kvstore=kvstore,
                                update_on_kvstore=on_kv)
        backward([w], [[1.0, 1.0]])
        trainer.step(1)
        w.set_data(nd.array([5.0, 5.0]))
        backward([w], [[1.0, 2.0]])
        trainer.step(1)
        assert w.data().asnumpy().tolist() == [4.0, 3.0]
    for kvstore in ("local", mx.kv.create("local")):
        w = make_param("w", [1.0, 1.0])
        w2 = make_param("w2", [1.0, 1.0])
        trainer = gluon.Trainer([w, w2], "sgd", {"learning_rate": 1.0},
                                kvstore=kvstore, update_on_kvstore=True)
        backward([w, w2], [[1.0, 1.0], [0.0, 0.0]])
        trainer.step(1)
        w.set_data(nd.array([5.0, 5.0]))
        backward([w, w2], [[1.0, 2.0], [0.0, 0.0]])
        if isinstance(kvstore, str):        # by name, on one context: updated directly
            trainer.step(1)
            assert w.data().asnumpy().tolist() == [4.0, 3.0]
        else:
            with pytest.raises(mx.MXNetError, match="new Trainer"):
                trainer.step(1)


def test_a_store_without_an_optimizer_reduces_and_the_devices_update():
    """'teststore' (a KVStoreBase that applies no optimizer): the Trainer pushes and pulls
    each key through the store's own interface and updates on the devices; asking the store
    to update is an error."""
    ctxs = [mx.cpu(0), mx.cpu(1)]
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=ctxs, init="zeros")
    kv = mx.kv.create("teststore")
    assert kv.type == "teststore" and not kv.is_capable("optimizer")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 0.5}, kvstore=kv)
    with autograd.record():
        ys = [w * nd.array([1.0, 2.0, 3.0], ctx=w.context) * (i + 1)
              for i, w in enumerate(x.list_data())]
    for y in ys:
        y.backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    for w in x.list_data():             # the gradient summed over both contexts: 3 * [1, 2, 3]
        np.testing.assert_array_equal(w.asnumpy(), [-1.5, -3.0, -4.5])
    with pytest.raises(ValueError, match="applies no optimizer"):
        gluon.Trainer([x], "sgd", kvstore=kv, update_on_kvstore=True)._init_kvstore()
