"""``hybridize(static_alloc=True)``: a cached graph run over buffers planned and allocated
once per input signature (``mxlite/gluon/cached_op.py``, ``mxlite/executor.py``
``MemoryPlan``/``PlannedRun``). The results must be those of the default path bit for bit,
and nothing handed to the caller -- outputs, gradients -- may live in a buffer a later call
overwrites."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.gluon import nn

nd = mx.nd


class _Attention(nn.HybridBlock):
    """LayerNorm, a 2-head self-attention through reshape/transpose/batch_dot, a residual,
    BatchNorm over the features and Dropout: a graph with hidden outputs, auxiliary states
    updated in place and random draws."""

    def __init__(self, width=8, heads=2, **kwargs):
        super().__init__(**kwargs)
        self.heads = heads
        with self.name_scope():
            self.ln = nn.LayerNorm(in_channels=width)
            self.qkv = nn.Dense(3 * width, flatten=False, in_units=width)
            self.bn = nn.BatchNorm(axis=-1, in_channels=width)
            self.drop = nn.Dropout(0.25)

    def _split_heads(self, F, x):
        x = F.transpose(F.reshape(x, shape=(0, 0, self.heads, -1)), axes=(0, 2, 1, 3))
        return F.reshape(x, shape=(-3, 0, 0))

    def hybrid_forward(self, F, x):
        q, k, v = F.split(self.qkv(self.ln(x)), num_outputs=3, axis=-1)
        q, k, v = (self._split_heads(F, t) for t in (q, k, v))
        att = F.batch_dot(F.softmax(F.batch_dot(q, k, transpose_b=True), axis=-1), v)
        att = F.reshape(att, shape=(-4, -1, self.heads, 0, 0))
        att = F.reshape(F.transpose(att, axes=(0, 2, 1, 3)), shape=(0, 0, -3))
        return self.drop(self.bn(x + F.tanh(att)))


def _net(static_alloc, seed=0, planned=True):
    """The block hybridized with or without ``static_alloc``; ``planned=False``: every node
    through ``invoke`` (the reference path, an op hook's)."""
    mx.random.seed(seed)
    net = _Attention()
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=static_alloc, static_shape=static_alloc)
    if not planned:
        with autograd.pause():
            net(_batch(0))      # the CachedOp exists after a first call
        net._cached_op.planned = False
    return net


def _batch(seed, shape=(2, 3, 8)):
    return nd.array(np.random.RandomState(seed).standard_normal(shape))


def _step(net, x, head):
    """One recorded forward and backward; the output, x's gradient and the parameters'
    gradients, as the caller holds them (NDArrays, not copies)."""
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y.backward(head)
    return y, x.grad, [p.grad() for p in net.collect_params().values()
                       if p.grad_req != "null"]


def test_planned_runs_give_the_invoke_results_bit_for_bit():
    """Five training steps and an inference, over planned memory (buffers of each call's
    own, and static_alloc's kept ones) and through ``invoke``: outputs, input and parameter
    gradients, and BatchNorm's moving statistics (updated in place by the kernel) are the
    same bits, Dropout's masks included (the same random stream)."""
    nets = {"invoke": _net(False, planned=False), "planned": _net(False), "static": _net(True)}
    for step in range(5):
        results = {}
        for flag, net in nets.items():
            mx.random.seed(100 + step)
            y, gx, grads = _step(net, _batch(step), _batch(50 + step))
            results[flag] = [y.asnumpy(), gx.asnumpy()] + [g.asnumpy() for g in grads]
        for flag in ("planned", "static"):
            assert len(results[flag]) == len(results["invoke"]) > 2
            for a, b in zip(results[flag], results["invoke"]):
                np.testing.assert_array_equal(a, b)
    x = _batch(9)
    for flag in ("planned", "static"):
        for a, b in zip(nets["invoke"].collect_params().values(),
                        nets[flag].collect_params().values()):
            np.testing.assert_array_equal(b.data().asnumpy(), a.data().asnumpy(),
                                          err_msg=a.name)
        np.testing.assert_array_equal(nets[flag](x).asnumpy(), nets["invoke"](x).asnumpy())


def test_what_a_step_hands_out_is_unchanged_by_the_next_step():
    """The caller keeps step k's output, input gradient and (through autograd.grad) the
    parameter gradients; step k+1 on other data reuses the planned buffers and must not
    change any of them."""
    net = _net(True)
    params = [p.data() for p in net.collect_params().values() if p.grad_req != "null"]
    kept = []
    for step in range(3):
        x = _batch(step)
        x.attach_grad()
        with autograd.record():
            y = net(x)
        grads = autograd.grad(y, [x] + params, head_grads=_batch(70 + step),
                              retain_graph=True)
        y.backward(_batch(70 + step))
        kept.append(([y, x.grad] + list(grads),
                     [a.asnumpy().copy() for a in [y, x.grad] + list(grads)]))
    for arrays, values in kept:
        for a, v in zip(arrays, values):
            np.testing.assert_array_equal(a.asnumpy(), v)


def test_buffers_are_allocated_once_per_signature():
    """Calls at one shape run in the same planned buffers (an intermediate's memory is the
    same from call to call); a new shape gets its own."""
    net = _net(True)
    net(_batch(0))
    plan = next(iter(net._cached_op._plans.values()))
    spare = plan.spare_buffers
    assert len(spare) == 1
    first = [a.__array_interface__["data"][0] for a in spare[0] if a is not None]
    for step in range(3):
        net(_batch(step))
        assert len(spare) == 1
        assert [a.__array_interface__["data"][0] for a in spare[0] if a is not None] == first
    net(_batch(0, shape=(1, 5, 8)))
    assert net._cached_op.cached_plans() == 1      # static_shape: the new shape replaced it


def test_two_calls_under_one_record_keep_separate_buffers():
    """The first call's values wait for the backward while the second call runs: the
    second gets a set of buffers of its own, and the gradients are the ``invoke`` path's."""
    results = []
    for flag, planned in ((False, False), (False, True), (True, True)):
        net = _net(flag, planned=planned)
        x1, x2 = _batch(1), _batch(2)
        for x in (x1, x2):
            x.attach_grad()
        mx.random.seed(7)
        with autograd.record():
            loss = (net(x1) * _batch(3)).sum() + (net(x2) * _batch(4)).sum()
        loss.backward()
        results.append([x1.grad.asnumpy(), x2.grad.asnumpy()] +
                       [p.grad().asnumpy() for p in net.collect_params().values()
                        if p.grad_req != "null"])
    for other in results[1:]:
        for a, b in zip(other, results[0]):
            np.testing.assert_array_equal(a, b)


def test_an_output_written_before_backward_raises_with_static_alloc():
    """tanh's gradient reads its output: a write into the returned output before backward
    is refused, as on the default path."""
    net = nn.Activation("tanh")
    net.hybridize(static_alloc=True)
    x = nd.array([0.5, 1.0])
    x.attach_grad()
    with autograd.record():
        y = net(x)
    y[:] = 0
    with pytest.raises(mx.base.MXNetError, match="modified in place"):
        y.backward()


def test_an_output_that_is_the_input_is_a_copy():
    """A graph returning its input (and that input twice) hands out copies: writing into
    an output changes neither the input nor the other output."""
    class Identity(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return x, F.identity(x), x
    net = Identity()
    net.hybridize(static_alloc=True)
    x = nd.array([1.0, 2.0])
    a, b, c = net(x)
    a[:] = 5
    b[:] = 6
    np.testing.assert_array_equal(x.asnumpy(), [1, 2])
    np.testing.assert_array_equal(c.asnumpy(), [1, 2])


def test_memory_stats_of_a_hybridized_block():
    """Dense(4, in_units=3) on a batch of 2 with its loss: the forward creates the
    FullyConnected output (2 x 4 floats, 32 bytes) and the sum (4 bytes); the backward's
    arrays add to that. None before the first call."""
    net = nn.Dense(4, in_units=3)
    net.initialize()
    assert net.memory_stats() is None
    net.hybridize(static_alloc=True)
    net(nd.ones((2, 3)))
    stats = net.memory_stats()
    assert stats["forward_peak"] == 2 * 4 * 4
    assert stats["step_peak"] == stats["forward_peak"]        # not recorded: no gradient
    assert stats["planned_bytes"] == 2 * 4 * 4                # the output, new each call


def test_planned_runs_on_each_device(device):
    """The planned run (its buffers, views and contiguous copies in the device's namespace)
    gives the ``invoke`` path's outputs and gradients on every device."""
    results = []
    for static_alloc, planned in ((False, False), (False, True), (True, True)):
        mx.random.seed(0)
        net = _Attention()
        net.initialize(mx.init.Zero(), ctx=device)
        rng = np.random.RandomState(0)
        for p in net.collect_params().values():
            p.set_data(nd.array(rng.uniform(0.5, 1.0, p.shape), ctx=device))
        net.hybridize(static_alloc=static_alloc)
        x = _batch(1).as_in_context(device)
        with autograd.pause():
            net(x)
        net._cached_op.planned = planned
        mx.random.seed(5)
        y, gx, grads = _step(net, x, _batch(2).as_in_context(device))
        results.append([y.asnumpy(), gx.asnumpy()] + [g.asnumpy() for g in grads])
    for other in results[1:]:
        for a, b in zip(other, results[0]):
            np.testing.assert_array_equal(a, b)


def test_an_error_in_a_static_run_gives_its_buffers_back(monkeypatch):
    """A failure in the middle of a static_alloc call (here the contiguous copy of a view,
    as a kernel running out of memory would): the error reaches the caller, the call's
    buffers go back to the spares (one set, not a new one per failed call), and the next
    call runs right."""
    from mxlite import executor
    net = _net(True)
    x = _batch(0)
    expected = net(x).asnumpy()
    plan = next(iter(net._cached_op._plans.values()))

    def failing(array, xp):
        raise MemoryError("refused in this test")
    monkeypatch.setattr(executor, "materialize", failing)
    for _ in range(3):
        with pytest.raises(MemoryError, match="refused in this test"):
            net(x)
        assert len(plan.spare_buffers) == 1
    monkeypatch.undo()
    np.testing.assert_array_equal(net(x).asnumpy(), expected)
