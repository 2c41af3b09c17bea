"""A hybridized block's memory stays bounded whatever the input shapes (``CachedOp``'s plan
cache, ``mxlite/gluon/cached_op.py``; ``Plan``, ``mxlite/executor.py``), and its results,
gradients included, stay those of the same block run imperatively.

Memory is measured deterministically where it can be: the number of cached plans, the bytes
of the arrays reachable from the cache or from a tape node, and ``tracemalloc`` (which NumPy
reports its buffers to). A coarse RSS bound backs them up.
"""
import gc
import os
import tracemalloc
import types

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn
from mxlite.gluon.cached_op import MAX_PLANS
from mxlite.ops.registry import REGISTRY

nd = mx.nd
FEATURES = 64
# Objects whose references reach the whole interpreter (globals, classes, callers' frames):
# an array reachable only through them is not held by the object walked.
_OPAQUE = (type, types.ModuleType, types.FrameType, types.TracebackType, types.CodeType)


def _array_bytes(root):
    """Bytes of the NDArrays (and bare NumPy arrays) reachable from ``root`` through
    containers and plain objects, each counted once."""
    seen, total, stack = set(), 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _OPAQUE) or callable(obj):
            continue
        seen.add(id(obj))
        if isinstance(obj, mx.nd.NDArray):
            total += obj._data.nbytes
        elif isinstance(obj, np.ndarray):
            total += obj.nbytes
        else:
            stack.extend(gc.get_referents(obj))
    return total


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _net(seed=0):
    """Dense -> BatchNorm (auxiliary states) -> tanh -> Dense, with parameters from ``seed``."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(32, in_units=FEATURES), nn.BatchNorm(in_channels=32),
                nn.Activation("tanh"), nn.Dense(4, in_units=32))
    net.initialize(mx.init.Uniform(0.5))
    rng = np.random.RandomState(seed)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.uniform(-0.5, 0.5, p.shape) + (1.0 if "gamma" in p.name else 0)))
    return net


def _train_step(net, trainer, batch):
    x = nd.ones((batch, FEATURES)) * (1.0 / batch)
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(batch)


def _infer(net, batch):
    net(nd.ones((batch, FEATURES))).wait_to_read()


def _live_array_bytes():
    """Bytes of every NDArray alive in the process."""
    return sum(a._data.nbytes for a in gc.get_objects() if isinstance(a, mx.nd.NDArray))


@pytest.mark.parametrize("step", ["train", "infer"])
def test_memory_is_flat_over_a_thousand_batch_sizes(step):
    """1,000 distinct batch sizes: at most MAX_PLANS plans stay cached and they hold no
    array; the NDArrays alive after the thousandth size are those alive after the hundredth
    (the parameters, their gradients and BatchNorm's statistics); of what the last 100 sizes
    allocated (traced by tracemalloc, NumPy's buffers included) only the replaced plans
    remain; the RSS barely moves. Before, each size kept a bound executor with its own
    gradient buffers, its first input and its outputs (+463 MB for 100 sizes of a 4 MB
    layer)."""
    net = _net()
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    run = (lambda b: _train_step(net, trainer, b)) if step == "train" else (
        lambda b: _infer(net, b))
    for b in range(1, 101):
        run(b)
    gc.collect()
    live_100, rss_100 = _live_array_bytes(), _rss_bytes()
    for b in range(101, 901):
        run(b)
    tracemalloc.start()     # only for the last sizes: it slows every allocation down
    try:
        for b in range(901, 1001):
            run(b)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    live_1000, rss_1000 = _live_array_bytes(), _rss_bytes()
    cached = net._cached_op
    assert cached.cached_plans() == MAX_PLANS
    assert _array_bytes(cached._plans) == 0
    assert live_1000 == live_100
    # 32 plans' Python objects; one input of these sizes kept per size would be 25 MB
    assert traced < 4 << 20, traced
    assert rss_1000 - rss_100 < 64 << 20, (rss_100, rss_1000)


def test_dispatch_caches_keyed_by_shape_stay_bounded():
    """The per-op memo of parsed parameters and inferred shapes (``_core/dispatch.pyx``)
    restarts at 512 entries: 1,000 shapes through an op leave at most that many."""
    for b in range(1, 1001):
        nd.tanh(nd.ones((b, 3)))
    op = REGISTRY["tanh"]
    assert len(op.infer_cache) <= 512 and len(op.attrs_cache) <= 512


def _twins():
    """Two nets with the same parameters: one hybridized, one imperative."""
    hybrid, imperative = _net(), _net()
    hybrid.hybridize()
    return hybrid, imperative


def _grads(net):
    return [p.grad().asnumpy() for p in net.collect_params().values()
            if p.grad_req != "null"]


def _assert_same(hybrid, imperative):
    for a, b in zip(hybrid.collect_params().values(), imperative.collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy(), err_msg=a.name)
    for g, h in zip(_grads(hybrid), _grads(imperative)):
        np.testing.assert_array_equal(g, h)


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_results_equal_the_imperative_block_across_evictions(grad_req):
    """Outputs, parameter and input gradients (accumulated with grad_req='add') and the
    BatchNorm moving statistics equal the imperative block's bit for bit, for more sizes than
    the cache keeps, each seen twice: on the second pass every size's plan was evicted and is
    made again."""
    hybrid, imperative = _twins()
    for net in (hybrid, imperative):
        net.collect_params().setattr("grad_req", grad_req)
    rng = np.random.RandomState(1)
    sizes = list(range(1, MAX_PLANS + 6)) * 2
    for b in sizes:
        x_np = rng.standard_normal((b, FEATURES))
        head = nd.array(rng.standard_normal((b, 4)))
        outs = []
        for net in (hybrid, imperative):
            x = nd.array(x_np)
            x.attach_grad(grad_req)
            with autograd.record():
                y = net(x)
            y.backward(head)
            outs.append((y.asnumpy(), x.grad.asnumpy()))
        np.testing.assert_array_equal(outs[0][0], outs[1][0], err_msg=f"output, batch {b}")
        np.testing.assert_array_equal(outs[0][1], outs[1][1], err_msg=f"x.grad, batch {b}")
        _assert_same(hybrid, imperative)
        assert hybrid._cached_op.cached_plans() <= MAX_PLANS
    for b in (1, 7, 40):            # inference (predict mode: the moving statistics)
        x = nd.array(rng.standard_normal((b, FEATURES)))
        np.testing.assert_array_equal(hybrid(x).asnumpy(), imperative(x).asnumpy())


def test_parameters_have_one_gradient_buffer():
    """Every shape's gradient goes into the Parameter's own buffer (``param.grad()``): the
    same array object before and after calls of many shapes, and no other gradient-sized
    array is kept by the cache."""
    net, _ = _twins()
    trained = [p for p in net.collect_params().values() if p.grad_req != "null"]
    buffers = {p.name: p.grad() for p in trained}
    for b in range(1, 50):
        with autograd.record():
            y = net(nd.ones((b, FEATURES)))
        y.backward()
    for p in trained:
        assert len(p.list_grad()) == 1 and p.grad() is buffers[p.name], p.name
    assert _array_bytes(net._cached_op._plans) == 0


def test_a_recorded_call_keeps_what_its_backward_reads_until_backward():
    """The tape node of a recorded call keeps only the forward values its backward reads --
    for a Dense layer its input and weight, not its (here much larger) output -- and nothing
    once a backward without retain_graph has run, even while the output is still held."""
    net = nn.Dense(4096, in_units=2)
    net.initialize()
    net.hybridize()
    x = nd.ones((64, 2))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    node = y._node[0]
    kept = _array_bytes(node.attrs.values)
    assert 0 < kept < y._data.nbytes
    y.backward()
    assert _array_bytes(y._node[0].attrs) == 0
    with autograd.record():
        y = net(x)
    y.backward(retain_graph=True)
    assert _array_bytes(y._node[0].attrs.values) == kept    # retained for a second backward
    y.backward()
    expected = net.weight.data().asnumpy().astype(np.float64).sum(axis=0)   # head: ones
    np.testing.assert_allclose(x.grad.asnumpy(), np.broadcast_to(expected, (64, 2)),
                               rtol=1e-4, atol=1e-5)


def test_static_shape_keeps_one_plan():
    """hybridize(static_alloc=True, static_shape=True) promises one input shape: one plan is
    kept, a new shape replaces it, and the results stay right."""
    hybrid, imperative = _twins()
    hybrid.hybridize(static_alloc=True, static_shape=True)
    for b in (3, 5, 3, 8):
        x = nd.array(np.random.RandomState(b).standard_normal((b, FEATURES)))
        np.testing.assert_array_equal(hybrid(x).asnumpy(), imperative(x).asnumpy())
        assert hybrid._cached_op.cached_plans() == 1


def test_static_shape_keeps_a_plan_per_set_of_wanted_gradients():
    """A gradient penalty calls the block on an input that wants its gradient and on
    others that do not, at one shape: with static_shape both plans stay, so no call
    re-plans (it rebuilt a gradient graph on each of them, milliseconds a call)."""
    hybrid, _ = _twins()
    hybrid.hybridize(static_alloc=True, static_shape=True)
    x_hat = nd.array(np.random.RandomState(0).standard_normal((4, FEATURES)))
    x_hat.attach_grad()
    x = nd.array(np.random.RandomState(1).standard_normal((4, FEATURES)))
    plans = []
    for _ in range(3):
        with autograd.record():
            d = hybrid(x_hat)
            g = autograd.grad(d, [x_hat], head_grads=nd.ones_like(d), create_graph=True)[0]
            loss = hybrid(x).sum() + (g ** 2).sum()
        loss.backward()
        plans.append(dict(hybrid._cached_op._plans))
    assert len(plans[-1]) == 2
    assert all(plans[-1][k] is plan for k, plan in plans[0].items())      # none re-made


def test_a_gradient_that_cannot_be_built_raises_in_backward(monkeypatch):
    """Where the gradient graph cannot be built (an FGradient refuses), the hybridized
    block's backward raises that error, as the imperative block's does -- the forward and
    inference still run. (Before, an AttributeError of the executor.)"""
    def refuse(F, node, ograds):
        raise mx.base.MXNetError("Activation: no gradient in this test")
    monkeypatch.setattr(REGISTRY["Activation"], "gradient", refuse)
    for hybridize in (False, True):
        net = nn.Dense(3, activation="tanh", in_units=2)
        net.initialize()
        if hybridize:
            net.hybridize()
        x = nd.ones((4, 2))
        with autograd.record():
            y = net(x)
        with pytest.raises(mx.base.MXNetError, match="Activation: no gradient in this test"):
            y.backward()
        assert net(x).shape == (4, 3)


def test_symbol_block_plans_are_bounded_too():
    """A SymbolBlock runs through the same cache: MAX_PLANS plans at most, one with
    static_shape, and the results of a plain Symbol evaluation."""
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    block = gluon.SymbolBlock(out, data)
    block.initialize()
    block(nd.ones((1, 2)))          # the parameters' shapes come from a first call
    params = {p.name: p.data() for p in block.collect_params().values()}
    for static_shape, limit in ((False, MAX_PLANS), (True, 1)):
        block.hybridize(static_alloc=static_shape, static_shape=static_shape)
        for b in range(1, MAX_PLANS + 10):
            x = nd.ones((b, 2)) * b
            expected = out.eval(data=x, **params)[0]
            np.testing.assert_array_equal(block(x).asnumpy(), expected.asnumpy())
            assert block._cached_op.cached_plans() <= limit


def test_an_output_written_in_place_before_backward_raises_as_imperatively():
    """tanh's gradient reads its output: writing into the output before backward makes the
    gradient wrong, so the backward refuses -- hybridized as imperatively (before, the
    hybridized gradient silently used the overwritten values). Two calls under one
    record(), whose BatchNorm updates its statistics in place, are no such write."""
    for hybridize in (False, True):
        net = nn.Activation("tanh")
        if hybridize:
            net.hybridize()
        x = nd.array([0.5, 1.0])
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y[:] = 0
        with pytest.raises(mx.base.MXNetError, match="modified in place"):
            y.backward()
    hybrid, imperative = _twins()
    rng = np.random.RandomState(3)
    x1, x2 = rng.standard_normal((5, FEATURES)), rng.standard_normal((6, FEATURES))
    for net in (hybrid, imperative):
        with autograd.record():
            loss = net(nd.array(x1)).sum() + (net(nd.array(x2)) * 2).sum()
        loss.backward()
    _assert_same(hybrid, imperative)
