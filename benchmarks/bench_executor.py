"""The executor's own cost: a hybridized Gluon step on tiny shapes, per graph node.

    python benchmarks/bench_executor.py [--quick] [--issue] [--profile [CONFIG]]

Two transformer encoder blocks (LayerNorm, 4-head self-attention through the
``reshape -> transpose -> reshape -> batch_dot`` pattern, softmax, a GELU MLP, two residual
adds) and a mean as the loss, on batch 2, sequence 4, width 8: every kernel takes a few
microseconds, so the step's time is the executor's Python around them. One step is
forward + backward under ``autograd.record()`` (no optimizer update). ``--issue``: one
block at the issue's shapes (batch 16, sequence 64, width 256), where the kernels and the
copies that views save count.

Printed, per configuration -- ``invoke path`` (every node through ``invoke``, as before
memory plans; the path an op hook takes), ``hybridize()`` (direct kernel calls and views,
each array allocated by its node) and ``static_alloc`` (``hybridize(static_alloc=True)``:
planned buffers kept between calls) -- the forward and backward node counts of the cached
plan, the median step time with its quartiles (the configurations called in turn,
``benchmarks/timing.interleaved``), and the microseconds per node. The time of the same
kernels called alone (each plan step's compute function on prepared arrays, no executor
around it) is printed as ``kernels``, so ``step - kernels`` is the executor's share
(planned runs make no copy for a reshape or transpose, so theirs can be below the
kernels'). Then the step's memory (``HybridBlock.memory_stats``), the contiguous copies a
planned step makes of strided views, and the peak bytes of one step of each configuration
as tracemalloc sees them (Python objects included: meaningful at ``--issue``'s shapes).
``--profile`` adds a cProfile listing of one configuration (top 20 by internal time).
``MXLITE_ONEDNN=0`` runs the reference kernels instead of oneDNN's (whose per-call cost on
tiny matrices can hide the executor's).
"""
import argparse
import cProfile
import os
import pstats
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxlite as mx  # noqa: E402
from mxlite import autograd  # noqa: E402
from mxlite.gluon import nn  # noqa: E402
from timing import interleaved, quartiles  # noqa: E402

# (batch, sequence, width, heads, blocks): tiny, so the kernels take microseconds; and the
# issue's transformer step (--issue), where the kernels and the copies of views count
TINY = (2, 4, 8, 4, 2)
ISSUE = (16, 64, 256, 4, 1)


class EncoderBlock(nn.HybridBlock):
    """Pre-norm transformer encoder block: x + attn(ln(x)), then + mlp(ln(.))."""

    def __init__(self, width, heads, **kwargs):
        super().__init__(**kwargs)
        self.width, self.heads = width, heads
        with self.name_scope():
            self.ln1 = nn.LayerNorm(in_channels=width)
            self.ln2 = nn.LayerNorm(in_channels=width)
            self.qkv = nn.Dense(3 * width, flatten=False, in_units=width)
            self.proj = nn.Dense(width, flatten=False, in_units=width)
            self.fc1 = nn.Dense(4 * width, flatten=False, in_units=width)
            self.fc2 = nn.Dense(width, flatten=False, in_units=4 * width)

    def _heads(self, F, x):
        """(B, T, W) -> (B * H, T, W / H): the attention pattern's reshape/transpose."""
        x = F.reshape(x, shape=(0, 0, self.heads, -1))
        x = F.transpose(x, axes=(0, 2, 1, 3))
        return F.reshape(x, shape=(-3, 0, 0))

    def hybrid_forward(self, F, x):
        h = self.ln1(x)
        qkv = self.qkv(h)
        q, k, v = F.split(qkv, num_outputs=3, axis=-1)
        q, k, v = self._heads(F, q), self._heads(F, k), self._heads(F, v)
        scores = F.batch_dot(q, k, transpose_b=True) / float(np.sqrt(self.width // self.heads))
        att = F.batch_dot(F.softmax(scores, axis=-1), v)
        att = F.reshape(att, shape=(-4, -1, self.heads, 0, 0))
        att = F.reshape(F.transpose(att, axes=(0, 2, 1, 3)), shape=(0, 0, -3))
        x = x + self.proj(att)
        h = self.fc2(F.LeakyReLU(self.fc1(self.ln2(x)), act_type="gelu"))
        return x + h


class Encoder(nn.HybridBlock):
    """``depth`` encoder blocks and a mean: a scalar loss, so backward needs no head grad."""

    def __init__(self, width, heads, depth, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.blocks = nn.HybridSequential()
            for _ in range(depth):
                self.blocks.add(EncoderBlock(width, heads))

    def hybrid_forward(self, F, x):
        return F.mean(self.blocks(x))


def make_step(case, static_alloc, seed=0, planned=True):
    """(step function, net, x): one forward+backward of a hybridized ``Encoder`` of
    ``case`` (``planned=False``: every node through ``invoke``, as before memory plans)."""
    batch, seq, width, heads, depth = case
    mx.random.seed(seed)
    net = Encoder(width, heads, depth)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=static_alloc, static_shape=static_alloc)
    rng = np.random.default_rng(seed)
    x = mx.nd.array(rng.standard_normal((batch, seq, width)).astype(np.float32))
    if not planned:
        net(x)          # builds the CachedOp
        net._cached_op.planned = False

    def step():
        with autograd.record():
            loss = net(x)
        loss.backward()
        return loss

    step()
    return step, net, x


def node_counts(net):
    """(forward steps, backward steps) of the one plan the block's CachedOp holds."""
    plans = list(net._cached_op._plans.values())
    return len(plans[-1].steps), len(plans[-1].grad_steps)


def kernels_only(net, x):
    """A callable running each plan step's compute function alone on arrays prepared once
    (a forward then its backward, outputs preallocated): what the kernels cost without any
    executor around them."""
    from mxlite.executor import execute
    cached = net._cached_op
    plan = list(cached._plans.values())[-1]
    ctx, arrays = cached._arrays([x])
    keep_all = [tuple(s[:5]) + ((),) for s in plan.steps]     # no slot released
    keep_all_grad = [tuple(s[:5]) + ((),) for s in plan.grad_steps]
    values = plan.bound(arrays)
    execute(keep_all, values, ctx, plan.uses_context, True)
    values = values + plan.grad_template
    for k, h in zip(plan.head_slots, plan.out_slots):
        if k is not None:
            values[k] = mx.nd.ones_like(values[h])
    execute(keep_all_grad, values, ctx, plan.grad_uses_context, True)
    calls = []
    rctx = ctx._run
    for step in list(plan.steps) + list(plan.grad_steps):
        op, attrs, ins, first, n = step[:5]
        op = getattr(op, "op", op)
        parsed = attrs if not isinstance(attrs, dict) else op.parse_attrs(attrs)
        datas = [values[i]._data for i in ins]
        outs = [np.empty_like(values[k]._data) if values[k] is not None else None
                for k in range(first, first + abs(n))]
        if any(o is None for o in outs):
            continue
        calls.append((op.compute[rctx.kernels], datas, outs, parsed))

    def run():
        with autograd.train_mode():
            for compute, datas, outs, attrs in calls:
                compute(rctx, datas, outs, attrs)
    return run


def copies(net, x):
    """The contiguous copies a planned step makes of strided views (``materialize``)."""
    from mxlite import executor
    real, count = executor.materialize, [0]

    def counted(array, xp):
        count[0] += 1
        return real(array, xp)
    executor.materialize = counted
    try:
        with autograd.record():
            loss = net(x)
        loss.backward()
    finally:
        executor.materialize = real
    return count[0]


def traced_peak(step):
    """The most bytes NumPy held at once during one ``step`` beyond what it held before
    (tracemalloc, which NumPy reports its buffers to): a static_alloc step's kept buffers
    are not counted, being allocated before."""
    import gc
    import tracemalloc
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        step()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def report(case, repeat, profile):
    configs = {"invoke path": make_step(case, False, planned=False),
               "hybridize()": make_step(case, False), "static_alloc": make_step(case, True)}
    fwd, bwd = node_counts(configs["invoke path"][1])
    fns = {k: v[0] for k, v in configs.items()}
    fns["kernels"] = kernels_only(*configs["invoke path"][1:])
    rounds = interleaved(fns, repeat)
    kern = quartiles(rounds["kernels"])["median"]
    batch, seq, width, heads, depth = case
    print(f"encoder x{depth}, batch {batch}, seq {seq}, width {width}, {heads} heads: {fwd} "
          f"forward + {bwd} backward nodes = {fwd + bwd}")
    print(f"{'config':>14} {'median ms':>10} {'q1':>8} {'q3':>8} {'us/node':>8} "
          f"{'outside kernels us/node':>24}")
    for name, times in rounds.items():
        q = quartiles(times)
        outside = (q["median"] - kern) / (fwd + bwd) * 1e6 if name != "kernels" else 0.0
        print(f"{name:>14} {q['median'] * 1e3:10.3f} {q['q1'] * 1e3:8.3f} "
              f"{q['q3'] * 1e3:8.3f} {q['median'] / (fwd + bwd) * 1e6:8.2f} {outside:24.2f}")
    stats = configs["static_alloc"][1].memory_stats()
    print(f"memory (bytes): forward peak {stats['forward_peak']}, step peak "
          f"{stats['step_peak']}, static_alloc's buffers and outputs "
          f"{stats['planned_bytes']}; contiguous copies of views per planned step: "
          f"{copies(*configs['hybridize()'][1:])}")
    print("traced peak of one step (bytes): " + ", ".join(
        f"{name} {traced_peak(config[0])}" for name, config in configs.items()))
    if profile:
        prof = cProfile.Profile()
        step = configs[profile][0]
        prof.enable()
        for _ in range(repeat):
            step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--profile", nargs="?", const="hybridize()", default=None,
                        help="cProfile a configuration's step (default: hybridize())")
    parser.add_argument("--issue", action="store_true",
                        help="the issue's transformer block (batch 16, seq 64, width 256)")
    args = parser.parse_args()
    repeat = 30 if args.quick else 200
    report(ISSUE if args.issue else TINY, max(5, repeat // 10) if args.issue else repeat,
           args.profile)


if __name__ == "__main__":
    main()
