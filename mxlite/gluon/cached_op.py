"""``CachedOp``: a traced Gluon graph run through the symbol executor (MXNet's CachedOp).

A hybridized block is traced once with ``F = mx.sym``; this class runs that Symbol. One
``Plan`` (``mxlite.executor``: the steps of the forward and, under ``autograd.record()``,
of the backward, over a flat list of value slots) is made per input signature: the input
shapes and dtypes, the context, and which inputs need a gradient. Each call runs the
plan's forward over *this call's* arrays (the data and the parameters' current arrays put
in the variable slots), so nothing is copied in and two calls under one ``record()`` keep
separate values.

Memory stays bounded whatever the inputs: a plan holds no array (but the buffer sets that
``static_alloc`` keeps, below), and the plans are kept in
a least-recently-used cache of ``MAX_PLANS`` signatures (those of one input shape with
``hybridize(static_shape=True)``, which promises one input shape: a new shape replaces the
plans, as MXNet's static_shape allows "but slower"; the plans of that shape for different
wanted gradients stay, so a gradient penalty's two kinds of call do not evict each other
on every call); an evicted signature seen again is
planned again. A call that is not recorded keeps nothing once it returns. A recorded call
keeps, on its tape node, only the forward values its backward reads, until a backward
without ``retain_graph`` frees the node. Parameter gradients are not the plan's: they flow
through the tape into each Parameter's one gradient buffer (``param.grad()``), for 'write'
and 'add' alike. MXNet 1.9.1 keeps one graph per context and re-plans its memory when the
input shape changes.

Each call runs its plan's ``MemoryPlan`` (``mxlite.executor``) as a ``PlannedRun``: every
step a direct call of the op's kernel, with no shape inference, parameter parsing or
wrapping per node, and a reshape or transpose a view of its input rather than a copy. The
outputs and the gradients a call hands out are new arrays every call, so what a caller
keeps is not overwritten by a later call. Without ``static_alloc`` each intermediate array
is allocated by its step and freed after its last reader, and a recorded call keeps only
what its backward reads, as through ``invoke``. ``static_alloc=True`` (MXNet's static
memory) plans buffers shared by intermediates whose lifetimes do not overlap, in the
forward and the backward, allocates them once per signature and keeps them between calls
(``MAX_SPARE`` sets: a recorded call holds its set until its tape node is freed; a second
call meanwhile takes another). ``memory_stats()`` gives the bytes. An op hook
(``register_op_hook``) runs every node through ``invoke`` instead, which reports each op's
arrays.

Under ``record()`` the outputs get one tape node whose gradient runs the plan's backward
(the symbolic gradient graph of the same FGradients ``mx.autograd`` calls) over the values
that call's forward kept: first-order gradients equal the imperative ones. A gradient
asked with ``create_graph=True`` instead replays the graph through ``mx.nd`` on the tape
and differentiates that, so gradients of any order work too -- except through random
operators (Dropout) in train mode, whose replay would draw new masks: that raises
MXNetError asking to call the block without ``hybridize``.
"""
import collections

import numpy as np

from .. import autograd
from .._core.dispatch import attach, parents
from ..base import MXNetError
from ..device import run_context
from ..executor import Plan, PlannedRun, execute, memory_stats, monitored_steps
from ..ops import onednn
from ..symbol import _channels_last as channels_last
from ..symbol._deferred import expand_symbol, is_random

__all__ = ["CachedOp", "MAX_PLANS"]

# Input signatures whose plans a CachedOp keeps (least recently used dropped first): enough
# for a bucketed workload's shapes, each for training and for inference. A plan holds no
# array, only steps (14 KB for a four-layer network's training plan); making one costs a
# gradient graph (milliseconds), which an evicted signature seen again pays again.
MAX_PLANS = 32

# With static_alloc: sets of planned buffers a signature keeps between calls. One serves
# calls in turn; a second serves a call made while the last one's values still wait for
# its backward (two calls under one record()). Sets beyond these are freed with their run.
MAX_SPARE = 2


class _Saved:
    """What one recorded call keeps for its gradient: the plan, the forward values its
    backward reads (the others None) -- or, for a run over planned memory, the
    ``PlannedRun`` -- with the versions of the arrays among them that a caller can write
    (all of them; for a planned run the variables and outputs), and for a replay the
    call's auxiliary states and mode."""

    __slots__ = ("plan", "values", "run", "versions", "arg_names", "aux", "training")

    def __init__(self, plan, values, arg_names, aux, training, run=None, watched=None):
        self.plan, self.values, self.run = plan, values, run
        self.arg_names, self.aux = arg_names, aux
        if watched is None:
            watched = [values[i] for i in plan.saved_slots]
        self.versions = [(x, x._version[0]) for x in watched]
        self.training = training

    def check_unchanged(self, name):
        """MXNetError where a value the backward reads (an output returned to the caller,
        say) was written in place since the forward: its gradient would be silently wrong
        (the tape's rule for every operator's saved inputs and outputs)."""
        for x, version in self.versions:
            if x._version[0] != version:
                raise MXNetError(
                    f"autograd: the gradient of {name!r} needs a value its forward computed "
                    f"(shape {x.shape}, {np.dtype(x.dtype).name}) as it was when the block "
                    f"ran, but that array was modified in place afterwards (version {version} "
                    f"-> {x._version[0]}). Write into a copy, or before the array is used.")


class _CachedOpDef:
    """The tape's view of a cached graph: the duck-typed operator record a ``Node`` holds
    (name, what the gradient needs, the FGradient)."""

    grad_needs = ("inputs",)
    variadic = True
    inputs = ()
    mutate_inputs = ()
    none_ograds = False

    def __init__(self, cached):
        self.name = f"_CachedOp({cached.name})"
        self._cached = cached

    def gradient(self, F, node, ograds):
        """First order: the plan's backward over the forward's values. With
        ``create_graph`` (the engine records): the graph replayed on the tape, then
        differentiated with ``create_graph=True``."""
        if autograd.is_recording():
            return self._cached.replay_gradient(node, ograds)
        saved = node.attrs
        plan = saved.plan
        if plan.grad_error is not None:     # an op without a gradient, as autograd raises it
            raise plan.grad_error
        saved.check_unchanged(self.name)
        if saved.run is not None:
            return saved.run.backward(ograds, autograd.is_training())
        values = saved.values + plan.grad_template
        for k, g in zip(plan.head_slots, ograds):
            if k is not None:
                values[k] = g
        execute(plan.grad_steps, values, node.context, plan.grad_uses_context,
                autograd.is_training())
        return [values[k] if k is not None else None for k in plan.grad_results]


class CachedOp:
    """Runs ``sym`` (a traced block) for data arrays named ``data_names`` and the
    Parameters ``params`` ({name: Parameter}) that fill its other variables.
    ``static_shape=True`` keeps the plans of one input shape (one per set of wanted
    gradients), else of ``MAX_PLANS`` signatures;
    ``static_alloc=True`` runs each over buffers planned and allocated once (module
    docstring); other MXNet CachedOp flags are accepted and change nothing."""

    def __init__(self, sym, data_names, params, name="graph", static_alloc=False,
                 static_shape=False, **flags):
        self.name = name
        self._sym = sym
        self._arg_names = sym.list_arguments()
        self._aux_names = sym.list_auxiliary_states()
        data_index = {n: i for i, n in enumerate(data_names)}
        sources = []
        for n in self._arg_names + self._aux_names:
            if n in data_index:
                sources.append((True, data_index[n]))
            elif n in params:
                sources.append((False, params[n]))
            else:
                raise MXNetError(f"{name}: the graph reads variable {n!r}, which is neither an "
                                 f"input ({list(data_names)}) nor a parameter of the block")
        self._sources = sources
        self._n_args = len(self._arg_names)
        self._plans = collections.OrderedDict()     # signature -> Plan, least recent first
        self._max_plans = MAX_PLANS
        self._static_shape = bool(static_shape)
        self._static_alloc = bool(static_alloc)
        self._op = _CachedOpDef(self)
        self.op_hook = None         # (callback, monitor_all) of HybridBlock.register_op_hook
        # False: every node through ``invoke`` (the path an op hook takes), the reference
        # the planned runs are tested and benchmarked against
        self.planned = True
        self._random = any(n.op is not None and (n.op.name.startswith(("Dropout", "_random"))
                                                 or is_random(n)) for n in sym._nodes())

    def _arrays(self, data):
        ctx = data[0].context if data else None
        arrays = []
        for is_data, src in self._sources:
            if is_data:
                arrays.append(data[src])
                continue
            held = src._data        # the one copy on ctx, without data()'s lookup
            if held is not None and len(held) == 1 and held[0]._ctx is ctx:
                arrays.append(held[0])
            else:
                arrays.append(src.data(ctx))
        if onednn.keeping_weights():
            for is_data, a in zip(self._sources, arrays):
                if not is_data[0]:
                    onednn.track(a)     # convolutions may keep it in oneDNN's layout
        return ctx, arrays

    def _plan(self, ctx, arrays, needs):
        """The plan of this signature: from the cache (now its most recent entry), or made
        and cached, dropping the least recently used beyond ``_max_plans``."""
        key = (ctx, needs, self.op_hook is None, *[a._data.shape for a in arrays],
               *[a._data.dtype for a in arrays])
        plan = self._plans.get(key)
        if plan is not None:
            try:
                self._plans.move_to_end(key)
            except KeyError:    # evicted by another thread calling the block meanwhile
                pass
            return plan
        names = self._arg_names + self._aux_names
        dtypes = {n: a.dtype for n, a in zip(names, arrays)}
        shapes = {n: a.shape for n, a in zip(names, arrays)}
        # np calls recorded on inputs of unknown shape or dtype, made now (symbol/numpy/_deferred)
        sym = expand_symbol(self._sym, shapes, dtypes)
        if self.op_hook is None and channels_last.wanted(sym, ctx, dtypes, shapes):
            sym = channels_last.rewrite(sym)     # an op hook sees the block's own graph
        plan = Plan(sym, ctx, shapes, dtypes, needs or (False,) * self._n_args,
                    (self._arg_names, self._aux_names))
        if self._static_shape:      # one input shape: the plans of another one go
            for other in [k for k in self._plans if k[3:] != key[3:]]:
                self._plans.pop(other, None)
        self._plans[key] = plan
        while len(self._plans) > self._max_plans:
            try:
                self._plans.popitem(last=False)
            except KeyError:    # emptied by other threads meanwhile
                break
        return plan

    def __call__(self, data):
        """The outputs (a list of NDArrays) for the list of input arrays ``data``."""
        ctx, arrays = self._arrays(data)
        args = arrays[:self._n_args]
        entries = parents(args) if autograd.is_recording() else None
        needs = None
        if entries is not None and any(e is not None for e in entries):
            needs = tuple(e is not None for e in entries)
        plan = self._plan(ctx, arrays, needs)
        if self.planned and self.op_hook is None:
            rctx = ctx._run if ctx._run is not None else run_context(ctx)
            memory = plan.memory_plan(rctx, pooled=self._static_alloc)
            if memory is not None:
                return self._call_planned(plan, memory, rctx, arrays, entries, needs)
        values = plan.bound(arrays)
        steps = plan.steps
        if self.op_hook is not None:
            steps = monitored_steps(plan, *self.op_hook, with_op=True)
        execute(steps, values, ctx, plan.uses_context, autograd.is_training())
        outs = [values[i] for i in plan.out_slots]
        seen = {id(a) for a in arrays}
        for i, o in enumerate(outs):        # an output that is an input or another output
            if id(o) in seen:
                outs[i] = o.copy()
            seen.add(id(outs[i]))
        if needs is not None:
            saved = _Saved(plan, plan.saved(values), self._arg_names, arrays[self._n_args:],
                           autograd.is_training())
            attach(self._op, saved, entries, args, outs)
        return outs

    def _call_planned(self, plan, memory, rctx, arrays, entries, needs):
        """``__call__`` as a ``PlannedRun``. With ``static_alloc``: over a spare set of the
        plan's buffers (or a new one), which goes back to the plan's spares when the run is
        gone (at once without ``record()``, else when its tape node is freed). Without:
        over arrays of its own, of which a recorded call keeps only those its backward
        reads."""
        if self._static_alloc:
            spare = plan.spare_buffers
            try:
                buffers = spare.pop()
            except IndexError:
                buffers = memory.allocate(rctx.xp)
            run = PlannedRun(plan, memory, buffers, arrays, rctx, self._give_back(spare))
        else:
            run = PlannedRun(plan, memory, None, arrays, rctx)
        outs = run.forward(autograd.is_training())
        if needs is not None:
            run.keep_saved()
            saved = _Saved(plan, run.slots, self._arg_names, arrays[self._n_args:],
                           autograd.is_training(), run, run.watched(outs))
            attach(self._op, saved, entries, arrays[:self._n_args], outs)
        return outs

    @staticmethod
    def _give_back(spare):
        """The release of a run's buffers: kept as a spare unless ``MAX_SPARE`` are (runs
        alive at once, each holding its own set, need not all stay allocated)."""
        def release(buffers):
            if len(spare) < MAX_SPARE:
                spare.append(buffers)
        return release

    def replay_gradient(self, node, ograds):
        """The input gradients of a recorded call, recorded on the tape: the graph run again
        through ``mx.nd`` from the call's inputs, differentiated with ``create_graph``."""
        saved = node.attrs
        if self._random and saved.training:
            raise MXNetError(
                f"{self.name}: a gradient of a hybridized block with random operators "
                "(Dropout) cannot be differentiated again (create_graph=True): replaying the "
                "graph would draw new random numbers. Call the block without hybridize() "
                "(net.hybridize(False)) to take higher-order gradients through it.")
        inputs = node.inputs
        # the moving statistics of BatchNorm are mutated by a training replay: use copies
        values = dict(zip(saved.arg_names, inputs))
        values.update(zip(self._aux_names, [a.copy() for a in saved.aux]))
        with autograd.train_mode() if saved.training else autograd.predict_mode():
            outs = self._sym.eval(ctx=node.context, **values)
        wanted = [i for i, w in enumerate(node.wants) if w]
        # outputs that depend on no wanted input pass no gradient back (autograd.grad
        # refuses such heads, rightly for a user's, so they are left out here)
        heads = [(o, g) for o, g in zip(outs, ograds) if autograd._differentiable(o)]
        result = [None] * len(inputs)
        if not heads:
            return result
        grads = autograd.grad([o for o, _ in heads], [inputs[i] for i in wanted],
                              head_grads=[g for _, g in heads], retain_graph=True,
                              create_graph=True)
        for i, g in zip(wanted, grads):
            result[i] = g
        return result

    def __repr__(self):
        return f"<CachedOp {self.name}: {len(self._plans)} plan(s)>"

    def memory_stats(self):
        """Bytes of a call at the input signature run last (``mxlite.executor.MemoryPlan``):
        {'forward_peak': the most the arrays a forward creates hold at once, 'step_peak':
        the same over a forward and its backward (recorded calls), 'planned_bytes': the
        buffers ``static_alloc`` keeps plus the outputs and gradients each call makes}.
        Parameters, inputs and head gradients are not counted. None before the first call
        or where the graph cannot be planned."""
        if not self._plans:
            return None
        key, plan = next(reversed(self._plans.items()))
        return memory_stats(plan, key[0])

    def cached_plans(self):
        """How many input signatures have a plan cached now (at most ``MAX_PLANS``)."""
        return len(self._plans)

