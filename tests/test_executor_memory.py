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
    """exp -> tanh -> sin -> sum of 8 floats, no gradient. exp's result (32 bytes) is read
    last by tanh, so sin's result takes its buffer: two 32-byte buffers serve three
    intermediates. At most two of them are alive at once (64 bytes); the output (sum, 4
    bytes) is a new array of each call."""
    x = mx.sym.var("x")
    y = mx.sym.sum(mx.sym.sin(mx.sym.tanh(mx.sym.exp(x))))
    plan = _plan(y, {"x": (8,)}, [False])
    memory = plan.memory_plan(run_context(mx.cpu()))
    exp_slot, tanh_slot, sin_slot = (step[3] for step in plan.steps[:3])
    assert memory.sizes == [8 * F32, 8 * F32]
    assert memory.buffer_of[sin_slot] == memory.buffer_of[exp_slot]
    assert memory.buffer_of[tanh_slot] != memory.buffer_of[exp_slot]
    assert memory.fresh_forward == list(plan.out_slots)
    assert memory_stats(plan, mx.cpu()) == {"forward_peak": 64, "step_peak": 64,
                                            "planned_bytes": 64 + F32}


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


def test_memory_stats_of_a_graph_that_cannot_be_planned_is_none():
    """A step made on another device than the plan's has no planned buffer."""
    x = mx.sym.var("x")
    y = x + mx.sym.zeros((2,), ctx=mx.cpu(1))
    plan = _plan(y, {"x": (2,)}, [False])
    assert memory_stats(plan, mx.cpu()) is None
