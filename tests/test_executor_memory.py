"""The memory plan of an executor plan (``mxlite/executor.py``: ``MemoryPlan``,
``memory_stats``): slot shapes, buffers shared by slots whose lifetimes do not overlap, and
the peak bytes of a forward and of a forward + backward, against graphs counted by hand."""
import numpy as np

import mxlite as mx
from mxlite.device import run_context
from mxlite.executor import Plan, memory_stats

F32 = 4       # bytes of a float32


def _plan(symbol, shapes, wants):
    names = symbol.list_arguments()
    return Plan(symbol, mx.cpu(), shapes, {n: np.float32 for n in names}, wants)


def test_a_chain_reuses_the_buffer_its_last_reader_freed():
    """exp -> flip -> sin -> sum of 8 floats, no gradient. flip cannot run in place, so its
    result takes a second buffer; exp's result (32 bytes) is read last by flip, and sin,
    element-wise, runs in place over flip's result: two 32-byte buffers serve three
    intermediates. At most two of them are alive at once (64 bytes); the output (sum, 4
    bytes) is a new array of each call."""
    x = mx.sym.var("x")
    y = mx.sym.sum(mx.sym.sin(mx.sym.flip(mx.sym.exp(x), axis=0)))
    plan = _plan(y, {"x": (8,)}, [False])
    memory = plan.memory_plan(run_context(mx.cpu()))
    exp_slot, flip_slot, sin_slot = (step[3] for step in plan.steps[:3])
    assert memory.sizes == [8 * F32, 8 * F32]
    assert memory.buffer_of[sin_slot] == memory.buffer_of[flip_slot]
    assert memory.buffer_of[flip_slot] != memory.buffer_of[exp_slot]
    assert memory.fresh_forward == list(plan.out_slots)
    assert memory_stats(plan, mx.cpu()) == {"forward_peak": 64, "step_peak": 64,
                                            "planned_bytes": 64 + F32}


def test_an_element_wise_chain_runs_in_one_buffer():
    """exp -> tanh -> sin -> sum: each element-wise op reads its input last and writes over
    it (as ``out=`` its input), so one 32-byte buffer serves the three intermediates."""
    x = mx.sym.var("x")
    y = mx.sym.sum(mx.sym.sin(mx.sym.tanh(mx.sym.exp(x))))
    plan = _plan(y, {"x": (8,)}, [False])
    memory = plan.memory_plan(run_context(mx.cpu()))
    slots = [step[3] for step in plan.steps[:3]]
    assert memory.sizes == [8 * F32]
    assert {memory.buffer_of[k] for k in slots} == {0}
    assert memory.planned_bytes == 8 * F32 + F32
    out = mx.sym.Group([y]).simple_bind(mx.cpu(), x=(8,))
    xs = np.linspace(-1, 1, 8, dtype=np.float32)
    got = out.forward(x=mx.nd.array(xs))[0].asnumpy()
    np.testing.assert_allclose(got, np.sin(np.tanh(np.exp(xs))).sum(), rtol=1e-6)


def test_only_the_first_output_takes_over_an_input():
    """Dropout (train mode) writes its mask, a hidden output of the data's shape, while it
    still reads the data: the mask must not take over the data's buffer, even where the
    first output is handed out and takes no buffer."""
    x = mx.sym.var("x")
    y = mx.sym.Dropout(mx.sym.exp(x), p=0.5)
    plan = _plan(y, {"x": (64,)}, [False])
    memory = plan.memory_plan(run_context(mx.cpu()))
    exp_slot = plan.steps[0][3]
    mask_slots = [k for k in memory.buffer_of if k != exp_slot]
    assert mask_slots and all(memory.buffer_of[k] != memory.buffer_of[exp_slot]
                              for k in mask_slots)


def test_forward_and_backward_peak_of_a_hand_counted_graph():
    """y = (x * w) * w on 8 floats, gradient for x only. Forward: a = x * w (32 bytes), then
    y (32, the output); a is read by nothing after (y's gradient for a is head * w), so it
    is freed: forward peak 64. Backward: g = head * w takes a's old buffer (32), then
    dx = g * w (32, handed out): 96 at once. One 32-byte buffer serves a and g; with y and dx
    a run holds 96 bytes."""
    x, w = mx.sym.var("x"), mx.sym.var("w")
    plan = _plan((x * w) * w, {"x": (8,), "w": (8,)}, [True, False])
    memory = plan.memory_plan(run_context(mx.cpu()))
    assert memory.sizes == [32]
    assert memory_stats(plan, mx.cpu()) == {"forward_peak": 64, "step_peak": 96,
                                            "planned_bytes": 96}


def test_executor_memory_stats_counts_the_hidden_outputs():
    """Dropout in train mode keeps its mask (a hidden output the gradient reads): the
    executor's forward holds output and mask, 2 x 40 bytes; the backward adds the data
    gradient (mask * head, 40)."""
    x = mx.sym.var("x")
    exe = mx.sym.Dropout(x, p=0.5).simple_bind(mx.cpu(), x=(10,))
    stats = exe.memory_stats()
    assert stats["forward_peak"] == 80
    assert stats["step_peak"] == 120


def _batchnorm_inference_plan(wants_grad):
    x = mx.sym.var("x")
    y = mx.sym.sum(mx.sym.BatchNorm(x, fix_gamma=False, name="bn"))
    names = y.list_arguments() + y.list_auxiliary_states()
    shapes = {"x": (4, 2, 5), "bn_gamma": (2,), "bn_beta": (2,), "bn_moving_mean": (2,),
              "bn_moving_var": (2,)}
    return Plan(y, mx.cpu(), shapes, {n: np.float32 for n in names},
                [wants_grad if n == "x" else False for n in y.list_arguments()])


def test_batchnorm_xhat_takes_no_memory_where_no_gradient_reads_it():
    """BatchNorm's xhat (an optional hidden output) costs nothing in a plan without a
    gradient: the forward holds y (40 floats), the three per-channel outputs (mean, rstd,
    gamma used: 2 floats each) and the mode flag (1), not a second copy of the data; with a
    gradient xhat is planned (the gradient reads it)."""
    stats = memory_stats(_batchnorm_inference_plan(False), mx.cpu())
    assert stats["forward_peak"] == (40 + 3 * 2 + 1) * F32
    with_grad = memory_stats(_batchnorm_inference_plan(True), mx.cpu())
    assert with_grad["forward_peak"] == (40 + 40 + 3 * 2 + 1) * F32


def test_batchnorm_off_the_tape_gives_the_taped_result():
    """Off the autograd tape BatchNorm skips xhat; its output is the taped call's, in
    inference and in training mode, and a taped call's gradient still works."""
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.normal(size=(4, 3, 5)))
    gamma, beta = mx.nd.array(rng.uniform(0.5, 2, 3)), mx.nd.array(rng.normal(size=3))
    stats = [mx.nd.array(rng.normal(size=3)), mx.nd.array(rng.uniform(0.5, 2, 3))]
    for train in (False, True):
        with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
            off = mx.nd.BatchNorm(x, gamma, beta, *[s.copy() for s in stats], fix_gamma=False)
            x.attach_grad()
            with mx.autograd.record(train_mode=train):
                on = mx.nd.BatchNorm(x, gamma, beta, *[s.copy() for s in stats],
                                     fix_gamma=False)
            on.backward()
        assert np.array_equal(off.asnumpy(), on.asnumpy())
        assert np.isfinite(x.grad.asnumpy()).all()


def test_memory_stats_of_a_graph_that_cannot_be_planned_is_none():
    """A step made on another device than the plan's has no planned buffer."""
    x = mx.sym.var("x")
    y = x + mx.sym.zeros((2,), ctx=mx.cpu(1))
    plan = _plan(y, {"x": (2,)}, [False])
    assert memory_stats(plan, mx.cpu()) is None


def _attention_symbol(heads=2):
    """x -> FullyConnected -> the attention pattern reshape -> transpose -> reshape -> batch_dot
    (the scores of each head), then back through reshape -> transpose -> reshape."""
    x, w = mx.sym.var("x"), mx.sym.var("w")
    h = mx.sym.FullyConnected(x, w, num_hidden=8, no_bias=True, flatten=False)
    h = mx.sym.reshape(mx.sym.transpose(mx.sym.reshape(h, shape=(0, 0, heads, -1)),
                                        axes=(0, 2, 1, 3)), shape=(-3, 0, 0))
    att = mx.sym.batch_dot(mx.sym.softmax(mx.sym.batch_dot(h, h, transpose_b=True)), h)
    att = mx.sym.reshape(att, shape=(-4, -1, heads, 0, 0))
    return mx.sym.reshape(mx.sym.transpose(att, axes=(0, 2, 1, 3)), shape=(0, 0, -3))


def _planned_step(symbol, views, arrays, head):
    """A forward and backward over a MemoryPlan with views on or off: (output, gradients)."""
    from mxlite.executor import MemoryPlan, PlannedRun
    names = symbol.list_arguments()
    plan = Plan(symbol, mx.cpu(), {n: a.shape for n, a in zip(names, arrays)},
                {n: np.float32 for n in names}, [True] * len(names))
    rctx = run_context(mx.cpu())
    memory = MemoryPlan(plan, rctx.ctx, rctx.kernels, views=views)
    run = PlannedRun(plan, memory, memory.allocate(rctx.xp), arrays, rctx)
    out = run.forward(True)[0]
    return out.asnumpy(), [g.asnumpy() for g in run.backward([head], True)]


def _copies(monkeypatch):
    """Counts of the copies a planned run makes: contiguous copies of views, and kernel
    calls of the view ops (which copy)."""
    from mxlite import executor
    from mxlite.ops.registry import REGISTRY
    counts = {"materialize": 0, "compute": 0}
    real = executor.materialize

    def counted(array, xp):
        counts["materialize"] += 1
        return real(array, xp)
    monkeypatch.setattr(executor, "materialize", counted)
    for name in ("reshape", "transpose"):
        op = REGISTRY[name]
        compute = op.compute["cpu"]

        def counted_compute(rctx, ins, outs, attrs, compute=compute):
            counts["compute"] += 1
            return compute(rctx, ins, outs, attrs)
        monkeypatch.setitem(op.compute, "cpu", counted_compute)
    return counts


def test_views_give_the_values_of_copies_and_copy_once_per_pattern(monkeypatch):
    """The attention pattern with views on and off gives the same output and gradients bit
    for bit. Without views the reshape/transpose kernels copy 15 times: 3 + 3 in the
    forward, 3 + 3 for the two patterns' gradients, 3 reshapes in FullyConnected's
    gradient. With views each of the four patterns copies once: the forward's head split
    and the two in the backward make their transposed view contiguous once (3
    ``materialize``), the output's copy is the edge copy every output makes (a reshape
    kernel reading the transposed view as it is); the only other copy is x's gradient,
    handed out, a reshape kernel too."""
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.standard_normal((2, 3, 8)))
    w = mx.nd.array(rng.standard_normal((8, 8)))
    head = mx.nd.array(rng.standard_normal((2, 3, 8)))
    symbol = _attention_symbol()
    counts = _copies(monkeypatch)
    copied = _planned_step(symbol, False, [x, w], head)
    assert counts == {"materialize": 0, "compute": 15}
    counts.update(materialize=0, compute=0)
    viewed = _planned_step(symbol, True, [x, w], head)
    assert counts == {"materialize": 3, "compute": 2}
    np.testing.assert_array_equal(viewed[0], copied[0])
    for a, b in zip(viewed[1], copied[1]):
        np.testing.assert_array_equal(a, b)


def test_a_forward_of_the_attention_pattern_copies_once(monkeypatch):
    """Inference (no gradient): FullyConnected, then reshape -> transpose -> reshape ->
    batch_dot: exactly one contiguous copy."""
    x, w = mx.sym.var("x"), mx.sym.var("w")
    h = mx.sym.FullyConnected(x, w, num_hidden=8, no_bias=True, flatten=False)
    h = mx.sym.reshape(mx.sym.transpose(mx.sym.reshape(h, shape=(0, 0, 2, -1)),
                                        axes=(0, 2, 1, 3)), shape=(-3, 0, 0))
    y = mx.sym.sum(mx.sym.batch_dot(h, h, transpose_b=True))
    op = mx.nd.CachedOp(y, flags=[("static_alloc", True)])
    rng = np.random.RandomState(1)
    xs, ws = rng.standard_normal((2, 3, 8)), rng.standard_normal((8, 8))
    counts = _copies(monkeypatch)
    got = op(mx.nd.array(xs), mx.nd.array(ws)).asnumpy()
    assert counts == {"materialize": 1, "compute": 0}
    hn = (xs.astype(np.float32) @ ws.astype(np.float32).T).reshape(2, 3, 2, 4)
    hn = hn.transpose(0, 2, 1, 3).reshape(4, 3, 4)
    np.testing.assert_allclose(got, [np.einsum("bik,bjk->", hn, hn)], rtol=1e-5)


def test_an_executor_runs_in_buffers_allocated_once():
    """An executor's forwards all run in the buffers its first forward allocated (MXNet's
    executor plans its memory at bind), with the results of the same executor run through
    ``invoke`` (as it is with a monitor): outputs, and gradients written and added."""
    sym = _attention_symbol()
    rng = np.random.RandomState(3)
    exes = []
    for monitored in (False, True):
        exe = sym.simple_bind(mx.cpu(), x=(2, 3, 8), w=(8, 8),
                             grad_req={"x": "write", "w": "add"})
        if monitored:
            exe.set_monitor_callback(lambda name, array: None)
        exes.append(exe)
    buffers = None
    for step in range(3):
        x, w = rng.standard_normal((2, 3, 8)), rng.standard_normal((8, 8))
        head = mx.nd.array(rng.standard_normal((2, 3, 8)))
        for exe in exes:
            exe.forward(is_train=True, x=x, w=w)
            exe.backward(head)
        planned, invoked = exes
        if buffers is None:
            buffers = planned._buffers
        assert planned._buffers is buffers and invoked._buffers is None
        np.testing.assert_array_equal(planned.outputs[0].asnumpy(),
                                      invoked.outputs[0].asnumpy())
        for name in ("x", "w"):
            np.testing.assert_array_equal(planned.grad_dict[name].asnumpy(),
                                          invoked.grad_dict[name].asnumpy())
