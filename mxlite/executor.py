"""``Executor``: a Symbol bound to arrays (MXNet 1.x ``Symbol.bind`` / ``simple_bind``).

Forward runs the graph's nodes in creation order (the order of the imperative calls that
built it; a topological order) through the ``nd`` invoke strategy -- the same compiled
path and kernels as ``mx.nd.<op>``, so the results are identical to the imperative ones
(tests/test_duality.py checks every registered op). The plan (``Plan``) is made once at
bind: a flat list of value slots, and per node its op, its non-default parameters as
keywords (so ``invoke`` memoises their parse and the shape inference as for an ``mx.nd``
call) and the slots it reads and writes. A plan depends on the arguments' shapes and dtypes
only and holds no array, so a hybridized block's ``CachedOp`` keeps plans, not executors,
and runs them over each call's arrays.

Memory (``MemoryPlan``, made once per plan): at the bound shapes every slot's shape and
dtype is known, so each step becomes a direct call of the op's compute function
(``run_planned``): the kernels ``invoke`` would call, on the same inputs, with no
inference, parsing or wrapping per node; pooled (an executor, ``static_alloc``), each
intermediate lives in a planned buffer shared with the slots whose lifetimes do not
overlap, so a run allocates nothing but what it hands out. A reshape-family op or a
transpose is a view of its input there (``OpDef.view``), where no caller can write through
it; a kernel that reads only C-contiguous arrays gets a contiguous copy of a strided view,
once per value. An executor allocates its buffers at its first forward and runs every forward in
them (MXNet's executor plans its memory at bind); the arrays it hands out (``outputs``,
``grad_arrays``) are its own, written by copy. ``memory_stats()`` gives the bytes. A
monitor (``set_monitor_callback``), or a graph that cannot be planned (an op without a
kernel for the device, an output made on another device), runs every node through
``invoke`` instead, with the same results.

Backward is a symbolic gradient graph, built once at bind when some argument has
``grad_req != 'null'``: ``mx.sym.grad(outputs, wrt=<those arguments>, head_grads=<one
variable per output>)`` at the bound shapes and dtypes -- every op's FGradient called with
``F = mx.sym``, the same FGradients ``mx.autograd`` calls with ``F = mx.nd``, summing the
contributions of several users in the engine's order (creation order), so the gradients are
those of ``mx.autograd`` bit for bit. It is planned like the forward (slots and steps,
after the forward's slots): the forward nodes the gradient reads (inputs, outputs) are not
steps of it but the forward's slots, so ``backward`` evaluates only the gradient nodes over
the values the last ``forward`` computed and never runs a forward node again. A node whose
hidden outputs the gradient reads (Dropout's mask, BatchNorm's batch statistics and mode
flag) runs its kernel directly in ``forward`` and keeps every output, so the mask the
gradient applies is the one the forward drew. The head-gradient slots take ``out_grads``
(a loss layer's FGradient reads none, so ``out_grads`` may be left out); the results are
written ('write') or added ('add') into ``grad_arrays``, 'null' arguments left out, and an
argument no gradient reaches gets zeros ('write') or nothing ('add'). Neither pass touches
the autograd tape (the bound arrays keep their own autograd state). An error building the
gradient graph is raised by ``backward``, as the autograd engine raised it. Speed
(``benchmarks/bench_symbol.py``): forward + backward of the 784-256-256-10 MLP takes about
0.90-0.93x the imperative ``autograd.record()`` step (no tape in forward, no FGradient calls in
backward).

MXNet behaviour kept: ``backward()`` without ``out_grads`` is allowed only when every head
is a loss layer (``SoftmaxOutput``, ``*RegressionOutput``), whose gradient does not read
the head gradient; ``backward`` may run several times after one forward ('add' then
accumulates); Dropout is active only with ``is_train=True``.

As MXNet's executor: ``forward`` writes into the same ``outputs`` arrays (made at bind), so
a reference held across calls sees the new values; ``reshape`` shares memory (an array that
keeps its shape is the same array, a smaller one a view of the old buffer, outputs
included); ``set_monitor_callback`` reports each op's outputs (and inputs with
``monitor_all``); a gradient that is zeros by construction (through ``BlockGrad``) is not
propagated, so nothing upstream of it runs; at bind, common subexpressions are merged
(``eliminate_common_expr``, MXNet's ``MXNET_ELIMINATE_COMMON_EXPR``, on unless '0';
``get_optimized_symbol`` gives the graph run). A merged node's gradient is summed before it
is propagated, which may round differently from the tape's per-use sums: the bit-for-bit
agreement with ``mx.autograd`` above holds with ``MXNET_ELIMINATE_COMMON_EXPR=0`` (or where
nothing merges). Each plan step releases the values it read last
(``_with_liveness``; the buffers of ``MemoryPlan`` follow the same liveness), keeping only
the outputs and what the backward reads: an inference holds a few intermediates, not all
(``debug_str`` ends with MXNet's ``Total <n> MB allocated``, the forward's peak).

Deviations: BatchNorm's moving statistics (auxiliary states, passed to the kernel as the
executor's own ``aux_arrays``) are updated by ``forward(is_train=True)``, once per training
forward; MXNet 1.9.1's CPU executor updated them in ``backward``. ``group2ctx`` is accepted
and ignored.

Sparse storage (``docs/guide/sparse.rst``): where the graph's storage inference finds a node
that a storage rule computes on a sparse argument or value, or an argument has a sparse
gradient array, the executor binds its sparse arrays themselves and runs every node, forward
and gradient, through ``_storage_invoke`` (``mx.nd``'s call: the op's storage rule, or its
storage fallback on dense copies), not the memory plan, so outputs and gradients store the
positions MXNet's FComputeEx kernels store. Otherwise sparse arguments run as dense copies,
refreshed each forward (MXNet's storage fallback, announced once per executor), and an output
whose inferred storage type is sparse is converted from the dense result. A sparse gradient
array receives its gradient converted to its storage type.
"""
import functools
import math
import os

import numpy as np

from . import autograd as _autograd
from ._core.dispatch import invoke as _invoke, parse_cached as _parse_cached, wrap as _wrap
from .base import MXNetError
from .context import Context, current_context
from .ndarray import NDArray
from .ops.registry import REGISTRY, REQUIRED, Attrs, namespace_of
from . import ndarray as _nd

__all__ = ["Executor", "bind", "simple_bind"]

# Heads whose gradient ignores the head gradient: backward() needs no out_grads for them
# (MXNet's loss layers, and BlockGrad, whose gradient is zero whatever the head's).
_LOSS_OPS = frozenset(("SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
                       "MAERegressionOutput", "MakeLoss", "make_loss", "SVMOutput",
                       "BlockGrad"))
_GRAD_REQS = ("write", "add", "null")


def _run_order(entries):
    """The nodes reachable from ``entries`` in creation order (``SymNode.seq``): the order
    the imperative program that built the graph ran its ops, so the values, the random
    draws and the tape's gradient sums (ordered by when each op ran) match ``mx.nd`` bit
    for bit. A graph whose creation order is not topological (edited by hand) runs in
    MXNet's depth-first order instead."""
    from .symbol.graph import topo_order
    order = topo_order(entries)
    by_seq = sorted(order, key=lambda n: n.seq)
    rank = {id(n): i for i, n in enumerate(by_seq)}
    if all(rank[id(c)] < rank[id(n)] for n in by_seq for c, _ in n.inputs):
        return by_seq
    return order


# ops whose two applications to the same inputs may differ (random draws) or that act on
# something besides their inputs: never merged by eliminate_common_expr
_NOT_MERGED = frozenset(("Dropout", "LeakyReLU", "_shuffle", "Custom"))


def _mergeable(node):
    op = node.op
    return op is not None and bool(node.inputs) and not op.mutate_inputs and \
        op.name not in _NOT_MERGED and namespace_of(op.name)[0] != "random" and \
        not op.name.startswith("_sample_")


def eliminate_common_expr(symbol):
    """A copy of ``symbol`` in which nodes applying the same op with the same parameters and
    attributes to the same inputs are one node (MXNet's ``MXNET_ELIMINATE_COMMON_EXPR``
    pass). Random and stateful ops are never merged; an output that becomes another
    output's entry is a ``_copy`` of it, so the outputs stay distinct arrays."""
    from .symbol.graph import SymNode
    from .symbol.symbol import Symbol
    made, seen = {}, {}
    for node in _run_order(symbol._outputs):
        if node.op is None:
            made[id(node)] = node
            continue
        inputs = [(made[id(c)], i) for c, i in node.inputs]
        key = None
        if _mergeable(node):
            key = (node.op.name, repr(sorted(node.attrs.items())),
                   repr(sorted(node.user_attrs.items())), tuple((id(c), i) for c, i in inputs))
            if key in seen:
                made[id(node)] = seen[key]
                continue
        made[id(node)] = new = SymNode(node.op, node.name, node.attrs, inputs,
                                       node.user_attrs, node.given)
        if key is not None:
            seen[key] = new
    outputs = []
    for node, i in symbol._outputs:
        entry = (made[id(node)], i)
        if entry in outputs:
            copy = REGISTRY["_copy"]
            entry = (SymNode(copy, f"{node.name}_copy{len(outputs)}", copy.parse_attrs({}),
                             [entry]), 0)
        outputs.append(entry)
    return Symbol(outputs)


def _eliminates_common_expr():
    """MXNet's switch ``MXNET_ELIMINATE_COMMON_EXPR`` (on unless '0'), read at each bind."""
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip() not in ("0", "false",
                                                                               "False")


def _named_list(what, names, given, required=True, strict_names=False):
    """``given`` (a list in ``names`` order, a dict by name, or None) as a list.

    A dict may hold other names too, which are ignored (MXNet's rule for args and
    aux_states: every name the symbol needs must still be there); with ``strict_names``
    (args_grad) an unknown name is an error: a gradient buffer under a name the symbol lacks
    would never be written, silently."""
    if given is None:
        if required:
            raise MXNetError(f"bind: {what} must be given")
        return [None] * len(names)
    if isinstance(given, dict):
        unknown = [k for k in given if k not in names]
        if unknown and strict_names:
            raise MXNetError(f"bind: {what} has names {unknown} that are not among the "
                             f"symbol's {'auxiliary states' if what == 'aux_states' else 'arguments'}"
                             f" {names}")
        out = [given.get(n) for n in names]
    elif isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise MXNetError(f"bind: {what} has {len(given)} arrays, the symbol needs "
                             f"{len(names)} ({names})")
        out = list(given)
    else:
        raise MXNetError(f"bind: {what} must be a list or a dict, got {type(given).__name__}")
    for n, a in zip(names, out):
        if a is None:
            if required:
                raise MXNetError(f"bind: {what} lacks an array for {n!r}")
        elif not isinstance(a, NDArray):
            raise MXNetError(f"bind: {what}[{n!r}] must be an NDArray, got {type(a).__name__}")
    return out


def _grad_req_list(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, dict):
        unknown = [k for k in grad_req if k not in names]
        if unknown:
            raise MXNetError(f"bind: grad_req names {unknown} are not arguments ({names})")
        reqs = [grad_req.get(n, "null") for n in names]
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise MXNetError(f"bind: grad_req has {len(grad_req)} entries for {len(names)} "
                             "arguments")
        reqs = list(grad_req)
    else:
        raise MXNetError(f"bind: grad_req must be a str, list or dict, got {grad_req!r}")
    for r in reqs:
        if r not in _GRAD_REQS:
            raise MXNetError(f"bind: grad_req must be 'write', 'add' or 'null', got {r!r}")
    return reqs


def _same_value(a, b):
    """``a == b`` with the type and the sign of a zero kept apart (1 is not True, -0.0 not 0.0)."""
    if type(a) is not type(b):
        return False
    try:
        if a != b:
            return False
    except Exception:       # noqa: BLE001 -- incomparable values are different
        return False
    return not isinstance(a, float) or a != 0.0 or math.copysign(1, a) == math.copysign(1, b)


def _created_shapes(symbol, shapes):
    """``{id(node): shape}`` for the creation ops of ``symbol`` whose ``shape`` has unknown
    (legacy 0) dimensions, completed by shape inference from the bound ``shapes``
    ({variable: shape}); MXNetError for one the graph leaves unknown."""
    from .ops.shape_partial import is_complete, unknown_created_shape
    from .symbol.infer import shape_table, to_partial
    nodes = [n for n in symbol._nodes()
             if n.op is not None and unknown_created_shape(n.op, n.attrs) is not None]
    if not nodes:
        return {}
    _, table = shape_table(symbol._outputs, {k: to_partial(v) for k, v in shapes.items()})
    found = {}
    for n in nodes:
        shape = table.get(n, 0)
        if not is_complete(shape):
            raise MXNetError(f"bind: the shape {tuple(n.attrs['shape'])} of {n.name!r} "
                             f"({n.op.name}) has unknown (0) dimensions the graph does not "
                             "determine; give them")
        found[id(n)] = tuple(int(d) for d in shape)
    return found


def _call_form(op, attrs):
    """What the executor hands ``invoke`` as the call's parameters: the parameters that
    differ from their defaults, as keywords of parsed values, where they parse back to the
    same Attrs (``invoke`` then memoises the parse and the shape/type inference by keywords,
    as for ``mx.nd.<op>(..., k=v)``, and a call at the defaults shares ``default_attrs``);
    else the Attrs themselves."""
    kwargs = {}
    for p in op.params:
        value = attrs[p.name]
        if p.default is not REQUIRED:
            try:
                if _same_value(value, p.parse(op.name, p.default)):
                    continue
            except Exception:       # noqa: BLE001 -- keep the value
                pass
        kwargs[p.name] = value
    try:
        if op.parse_attrs(kwargs) == attrs:
            return kwargs
    except Exception:       # noqa: BLE001 -- any refusal: hand over the parsed Attrs
        pass
    return attrs


_ZEROS_OPS = frozenset(("zeros", "_zeros"))


def _hidden_reads(gsyms):
    """The ids of the forward nodes whose hidden outputs the gradient graph reads."""
    if gsyms is None:
        return frozenset()
    return _hidden_read_by([s._outputs[0] for s in gsyms[0]])


def _hidden_read_by(entries):
    """The ids of the nodes whose hidden outputs the graph of ``entries`` reads."""
    from .symbol.graph import topo_order
    hidden = set()
    for node in topo_order(entries):
        for c, i in node.inputs:
            if c.op is not None and i >= c.op.num_visible_outputs(c.attrs):
                hidden.add(id(c))
    return hidden


def execute(steps, values, ctx, uses_context, training, call=_invoke):
    """Run a plan's ``steps`` over ``values`` off the autograd tape, in train mode
    ``training``; inside ``with ctx:`` where ``uses_context`` (an op without inputs makes its
    output on the current context). ``call(op, inputs, attrs)`` runs a step: ``invoke``, or
    ``_storage_invoke`` for a graph run through the storage rules."""
    state = _autograd._state
    previous = state.recording, state.training
    state.recording, state.training = False, bool(training)
    try:
        if uses_context:
            with ctx:
                _run(steps, values, ctx, call)
        else:
            _run(steps, values, ctx, call)
    finally:
        state.recording, state.training = previous


def _run(steps, values, ctx, call=_invoke):
    """Run a plan's steps over ``values``. A negative count: the node's kernel runs directly
    and every output (hidden ones included) is kept. After each step the slots it read last
    are released (``dead``), so an inference holds a few intermediate arrays, not all."""
    for op, attrs, ins, first, n, dead in steps:
        if type(op) is _Monitor:
            op.report_inputs([values[i] for i in ins])
            _run([(op.op, attrs, ins, first, n, ())], values, ctx, call)
            op.report_outputs(values[first:first + abs(n)])
            for i in dead:
                values[i] = None
            continue
        if n == 1:
            values[first] = call(op, [values[i] for i in ins], attrs)
        elif n > 0:
            values[first:first + n] = call(op, [values[i] for i in ins], attrs)
        else:
            values[first:first - n] = _invoke_all(op, [values[i] for i in ins], attrs, ctx)
        for i in dead:
            values[i] = None


def _storage_invoke(op, inputs, attrs):
    """A step of a graph run through the storage rules: ``mx.nd``'s call, so a node with a
    sparse input runs its op's storage rule, or on dense copies where none takes it
    (``mxlite.ndarray._sparse_invoke``: MXNet's FComputeEx, or its storage fallback with
    its one-time warning), and a rule that makes a sparse output from dense inputs
    (``_take_grad(sparse_grad=True)``) runs too; any other node runs as ``invoke``."""
    if op.storage:
        from .ndarray._sparse_invoke import front_invoke
        return front_invoke(op, inputs, attrs)
    return _invoke(op, inputs, attrs)


def _with_liveness(steps, keep):
    """``steps`` (op, attrs, ins, first, n) with a sixth entry: the slots whose last reader
    (or, never read, whose writer) is that step, except those in ``keep`` (variables,
    outputs, what the backward reads)."""
    last = {}
    for k, (_, _, ins, first, n) in enumerate(steps):
        for i in range(first, first + abs(n)):
            last[i] = k
        for i in ins:
            last[i] = k
    dead = [[] for _ in steps]
    for i, k in last.items():
        if i not in keep:
            dead[k].append(i)
    return [step + (tuple(sorted(d)),) for step, d in zip(steps, dead)]


def _invoke_all(op, inputs, attrs, ctx):
    """``invoke`` returning every output of ``op`` (the hidden ones too): the same kernel,
    run directly (as ``Symbol.eval`` runs a node whose hidden outputs a gradient reads)."""
    from .device import run_context
    if inputs:
        ctx = inputs[0].context
    rctx = run_context(ctx)
    # (a sparse input: the kernel reads its dense copy, MXNet's storage fallback)
    datas = [x._data if x._data is not None else x.tostype("default")._data for x in inputs]
    shapes = op.infer_shape([d.shape for d in datas], attrs)
    types = op.infer_type([d.dtype for d in datas], attrs)
    outs = [rctx.xp.empty(tuple(s), np.dtype(t)) for s, t in zip(shapes, types)]
    op.compute[rctx.kernels](rctx, datas, outs, attrs)
    if op.mutate_inputs:
        for i in op.mutated_indices(attrs):
            inputs[i]._version[0] += 1
    return [_wrap(o, ctx) for o in outs]


def _share(array, shape):
    """An array of ``shape`` over the first elements of ``array``'s buffer (a view that
    writes through, sharing its version counter)."""
    n = math.prod(shape)
    return array._alias(array._data.reshape(-1)[:n].reshape(shape), None, None)


def _step_names(node, n_out):
    """MXNet's monitor names of a node's inputs and outputs (``<node>_<output>``). Per input
    a tuple: ``(<node>_<input>,)``, or, for a variable, ``(<variable>, <node>_<input>)``:
    MXNet's executor reports a variable under its own name first."""
    from .symbol.graph import input_names
    outs = node.op.list_outputs(node.attrs)[:n_out]
    ins = tuple(((src.name,) if src.op is None else ()) + (f"{node.name}_{n}",)
                for (src, _), n in zip(node.inputs, input_names(node)))
    return ins, tuple(f"{node.name}_{n}" for n in outs)


def _input_slots(node, slot, what, why):
    """The value slots of ``node``'s inputs; MXNetError for an input no slot holds."""
    ins = []
    for src, index in node.inputs:
        if (src, index) not in slot:
            raise MXNetError(f"bind: {what} {node.name!r} reads output {index} of "
                             f"{src.name!r}, which {why}")
        ins.append(slot[(src, index)])
    return ins


def _reserve_outputs(node, n_keep, slot, first, values):
    """Slots ``first ..`` for the first ``n_keep`` outputs of ``node``, appended to ``values``."""
    for k in range(n_keep):
        slot[(node, k)] = first + k
        values.append(None)


class _Monitor:
    """A step's op stand-in that runs the op and reports its arrays to a monitor callback
    (MXNet's ``set_monitor_callback``)."""

    def __init__(self, op, callback, in_names, out_names):
        self.op, self.callback = op, callback
        self.in_names, self.out_names = in_names, out_names

    def report_inputs(self, inputs):
        """Before the op runs (as MXNet), so an input the op updates is seen unchanged."""
        for names, a in zip(self.in_names, inputs):
            for name in names:
                self.callback(name, a)

    def report_outputs(self, outputs):
        outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        for name, a in zip(self.out_names, outputs):
            self.callback(name, a)


def monitored_steps(plan, callback, monitor_all, with_op=False):
    """``plan``'s forward steps, each reporting to ``callback(name, array)`` (with
    ``with_op``: ``callback(name, op_name, array)``, Gluon's op hook) its outputs and, with
    ``monitor_all``, first its inputs; the same kernels run. The executor's monitor names a
    variable input under its own name too, Gluon's op hook (``with_op``) does not, as
    MXNet's."""
    out = []
    for step, (in_names, out_names) in zip(plan.steps, plan.step_names):
        op, attrs, ins, first, n, dead = step
        report = callback
        if with_op:
            report = functools.partial(_with_op_name, callback, op.name)
            in_names = tuple(names[-1:] for names in in_names)
        out.append((_Monitor(op, report, in_names if monitor_all else (), out_names),
                    attrs, ins, first, n, dead))
    return out


def _with_op_name(callback, op_name, name, array):
    callback(name, op_name, array)


class Plan:
    """How to run ``symbol`` at given argument shapes and dtypes, holding no array: the
    forward steps over a flat list of value slots and, where some argument wants a gradient,
    the backward steps over slots after the forward's. An ``Executor`` runs one over its
    bound arrays; a hybridized block's ``CachedOp`` keeps a few, one per input signature,
    and runs them over each call's arrays, so a plan never keeps a call's data alive (with
    ``static_alloc`` its ``spare_buffers`` keep planned buffer sets that no run holds; see
    ``memory_plan``).

    ``shapes``/``dtypes``: {name: shape/dtype} of every argument and auxiliary state;
    ``wants``: per argument (``list_arguments()`` order), whether it wants a gradient.

    Attributes read by the runners: ``values`` (the slot template: None everywhere; a runner
    copies it and puts its arrays in ``var_slots``), ``var_slots`` (the slot of each
    argument, then each auxiliary state), ``steps``, ``uses_context``, ``out_slots``,
    ``head_ops``; for the gradient ``grad_steps``, ``grad_template`` (the slots after the
    forward's), ``head_slots`` (None: a head gradient nothing reads), ``grad_uses_context``,
    ``grad_results`` (per argument, the slot of its gradient; None: no gradient wanted or
    none reaches it), ``saved_slots`` (the forward slots the backward reads) and
    ``grad_error`` (why the gradient graph could not be built, raised by the first backward,
    as the autograd engine raised it)."""

    def __init__(self, symbol, ctx, shapes, dtypes, wants, names=None):
        # ``names``: (arguments, auxiliary states) in the caller's order, where ``symbol``
        # lists them in another (a graph whose deferred np calls were expanded)
        self.arg_names, self.aux_names = (list(n) for n in names) if names else \
            (list(symbol.list_arguments()), list(symbol.list_auxiliary_states()))
        # (shape, dtype) of each argument, then auxiliary state: the signature (memory plan)
        self.var_specs = [(tuple(shapes[n]), np.dtype(dtypes[n]))
                          for n in self.arg_names + self.aux_names]
        self._memory = {}       # the MemoryPlans, made when first asked (memory_plan())
        self.spare_buffers = []     # planned buffer sets no run holds (static_alloc)
        self.grad_error = None
        self.wants_grad = any(wants)
        gsyms = (self._gradient_symbols(symbol, ctx, shapes, dtypes, wants)
                 if self.wants_grad else None)
        self._created_shapes = _created_shapes(symbol, shapes)
        slot = self._plan_forward(symbol, _hidden_reads(gsyms))
        self.grad_steps, self.grad_template, self.head_slots = [], [], []
        self.grad_uses_context = False
        self.grad_results = [None] * len(self.arg_names)
        self.saved_slots = []
        if gsyms is not None:
            self._plan_backward(gsyms, slot, wants)
        keep = set(self.var_slots) | set(self.out_slots) | set(self.saved_slots)
        self.steps = _with_liveness(self.steps, keep)
        self.grad_steps = _with_liveness(
            self.grad_steps, set(range(len(self.values))) | set(self.grad_results))

    # ---- the forward: one flat list of value slots ------------------------------------------
    def _plan_forward(self, symbol, hidden):
        """The forward plan; returns the slot of every (node, output) it keeps. ``hidden``:
        the ids of the nodes whose hidden outputs (Dropout's mask, BatchNorm's statistics and
        mode flag) the gradient graph reads; those run their kernel directly and keep every
        output in a slot."""
        entries = list(symbol._outputs)
        # and those whose hidden outputs the graph itself reads (a gradient graph from
        # mx.sym.grad reads Dropout's mask, a loop's state history)
        hidden = set(hidden) | _hidden_read_by(entries)
        names = self.arg_names + self.aux_names
        self.step_names = []     # per step: (input names, output names), for a monitor
        var_slot = {}
        slot = {}
        values = []
        steps = []
        for node in _run_order(entries):
            if node.op is None:
                if node.name not in names:
                    raise MXNetError(f"bind: no array for variable {node.name!r}")
                slot[(node, 0)] = var_slot[node.name] = len(values)
                values.append(None)
                continue
            full = id(node) in hidden
            n_vis = node.op.num_visible_outputs(node.attrs)
            n_keep = node.op.output_count(node.attrs) if full else n_vis
            ins = _input_slots(node, slot, "node", "a call does not return")
            first = len(values)
            _reserve_outputs(node, n_keep, slot, first, values)
            attrs = node.attrs
            if id(node) in self._created_shapes:
                attrs = Attrs(attrs, shape=self._created_shapes[id(node)])
            attrs = attrs if full else _call_form(node.op, attrs)
            steps.append((node.op, attrs, ins, first, -n_keep if full else n_vis))
            self.step_names.append(_step_names(node, n_keep if full else n_vis))
        self.values = values
        self.var_slots = [var_slot.get(n) for n in names]
        self.uses_context = any(not step[2] for step in steps)
        self.steps = steps
        self.out_slots = []
        for e in entries:
            if e not in slot:
                raise MXNetError(f"bind: the symbol's output {e[1]} of {e[0].name!r} is not "
                                 "an output a call returns")
            self.out_slots.append(slot[e])
        self.head_ops = [e[0].op for e in entries]
        self.slot_of = slot         # (node, output) -> slot, for the memory count
        return slot

    def bound(self, arrays):
        """A fresh slot list with ``arrays`` (the arguments, then the auxiliary states) in
        the variable slots, ready for ``run``."""
        values = list(self.values)
        for s, a in zip(self.var_slots, arrays):
            if s is not None:
                values[s] = a
        return values

    def saved(self, values):
        """The forward ``values`` the backward reads (``saved_slots``), the others None: what
        a recorded call keeps for its gradient, and no more."""
        kept = [None] * len(values)
        for i in self.saved_slots:
            kept[i] = values[i]
        return kept

    def memory_plan(self, rctx, pooled=True):
        """The ``MemoryPlan`` of this plan on the device of run context ``rctx`` (made once
        per plan and ``pooled``: a plan serves one device), or None where some step cannot
        run as a direct kernel call (no kernel for the device, an output made on another
        device, an inference error or a dtype the planner does not know: ``invoke`` runs
        those, and raises what is an error)."""
        memory = self._memory.get(pooled)
        if memory is None:
            try:
                memory = MemoryPlan(self, rctx.ctx, rctx.kernels, pooled=pooled)
            except Exception:       # noqa: BLE001 -- invoke runs it, and raises its errors
                memory = False
            self._memory[pooled] = memory
        return memory or None

    # ---- the backward: a gradient graph of the same FGradients ------------------------------
    def _gradient_symbols(self, symbol, ctx, shapes, dtypes, wants):
        """``mx.sym.grad`` of the outputs with respect to the arguments that want gradients,
        the head gradients variables, at the given shapes and dtypes: (gradient Symbols,
        head-gradient variable nodes, names). None (the error kept in ``grad_error``) where
        an op has no gradient."""
        from . import symbol as _sym
        entries = list(symbol._outputs)
        arg_shapes = {n: shapes[n] for n in self.arg_names}
        arg_dtypes = {n: dtypes[n] for n in self.arg_names}
        try:
            _, out_shapes, _ = symbol.infer_shape(**arg_shapes)
            _, out_types, _ = symbol.infer_type(**arg_dtypes)
            heads = [_sym.var(f"__head_grad_{k}__", shape=tuple(s), dtype=np.dtype(t).name)
                     for k, (s, t) in enumerate(zip(out_shapes, out_types))]
            names = [n for n, w in zip(self.arg_names, wants) if w]
            gsyms = _sym.grad(symbol, names, head_grads=heads, shapes=shapes, dtypes=dtypes,
                              ctx=ctx)
        except Exception as e:      # noqa: BLE001 -- raised by backward, as autograd would
            self.grad_error = e
            return None
        if len(entries) != len(heads):
            self.grad_error = MXNetError("backward: the outputs do not match the heads")
            return None
        return gsyms, [h._outputs[0][0] for h in heads], names

    def _plan_backward(self, gsyms, forward_slot, wants):
        """Slots and steps of the gradient graph, after the forward's slots: a node the
        forward ran is read from the forward's slots (never run again)."""
        gsyms, head_vars, names = gsyms
        slot = dict(forward_slot)
        n_fwd = len(self.values)
        template = []
        head_slots = []
        for hv in head_vars:
            slot[(hv, 0)] = n_fwd + len(template)
            head_slots.append(n_fwd + len(template))
            template.append(None)
        entries = [s._outputs[0] for s in gsyms]
        # an argument no gradient reaches: grad() gives zeros (written, not computed)
        zero = [e[0].op is not None and not e[0].inputs and e[0].op.name in _ZEROS_OPS
                and e not in forward_slot for e in entries]
        steps = []
        for node in _run_order([e for e, z in zip(entries, zero) if not z]):
            if node.op is None:
                if (node, 0) not in slot:
                    raise MXNetError(f"bind: the gradient graph reads variable {node.name!r}, "
                                     "which has no array")
                continue
            if (node, 0) in slot:        # run by forward
                continue
            n_out = node.op.output_count(node.attrs)
            n_vis = node.op.num_visible_outputs(node.attrs)
            ins = _input_slots(node, slot, "gradient node", "the forward does not keep")
            first = n_fwd + len(template)
            full = n_vis != n_out
            n_keep = n_out if full else n_vis
            _reserve_outputs(node, n_keep, slot, first, template)
            attrs = node.attrs
            if id(node) in self._created_shapes:
                attrs = Attrs(attrs, shape=self._created_shapes[id(node)])
            attrs = attrs if full else _call_form(node.op, attrs)
            steps.append((node.op, attrs, ins, first, -n_keep if full else n_vis))
        results = {name: None if z else slot[e] for name, e, z in zip(names, entries, zero)}
        read = {i for step in steps for i in step[2]} | set(results.values())
        self.grad_steps = steps
        self.grad_template = template
        # None: a head gradient nothing reads (a loss layer's, a head no argument needs)
        self.head_slots = [k if k in read else None for k in head_slots]
        self.grad_uses_context = any(not step[2] for step in steps)
        self.grad_results = [results.get(n) if w else None
                             for n, w in zip(self.arg_names, wants)]
        self.saved_slots = sorted(i for i in read if i is not None and i < n_fwd)


# ---- memory planning: every slot's shape is known at a plan's signature ---------------------
class _NotPlanned(Exception):
    """A plan the planned runner does not take (it runs through ``invoke`` instead)."""


def _parsed(op, attrs):
    """A step's parameters as Attrs (a step holds keywords where that memoises ``invoke``)."""
    return attrs if type(attrs) is Attrs else _parse_cached(op, attrs)


def _step_outputs(op, attrs, in_specs):
    """(shape, dtype) of every output of one step, hidden ones too, from the op's inference
    functions: the specification ``invoke`` follows, so these are the arrays it allocates."""
    shapes = op.infer_shape([s for s, _ in in_specs], attrs)
    dtypes = op.infer_type([d for _, d in in_specs], attrs)
    return [(tuple(int(d) for d in s), np.dtype(t)) for s, t in zip(shapes, dtypes)]


def _nbytes(spec):
    shape, dtype = spec
    return math.prod(shape) * dtype.itemsize


def _padded(nbytes):
    """``nbytes`` rounded up to whole 8-byte words, so that a buffer is seen whole as an
    array of any dtype up to 8 bytes (``allocate`` makes one such view per buffer and
    dtype, and slices the slots' arrays from it)."""
    return -(-nbytes // 8) * 8


class _Pool:
    """Buffers handed out in run order: an output takes the smallest free buffer that holds
    it, else the largest free one grown to its size (cheaper than a new one), else a new
    one; ``give`` frees a buffer once no live slot uses it."""

    def __init__(self):
        self.sizes = []         # bytes of each buffer
        self._free = set()      # ids of the free buffers

    def take(self, nbytes):
        sizes = self.sizes
        fits = [b for b in self._free if sizes[b] >= nbytes]
        if fits:
            b = min(fits, key=lambda i: (sizes[i], i))
        elif self._free:
            b = max(self._free, key=lambda i: (sizes[i], -i))
            sizes[b] = nbytes
        else:
            sizes.append(nbytes)
            return len(sizes) - 1
        self._free.discard(b)
        return b

    def give(self, b):
        self._free.add(b)


def _updated_slots(steps):
    """The slots whose arrays some step's kernel updates in place (``op.mutate_inputs``)."""
    for op, attrs, ins, _, _, _ in steps:
        if op.mutate_inputs:
            for i in op.mutated_indices(_parsed(op, attrs)):
                yield ins[i]


class MemoryPlan:
    """The memory of a ``Plan`` at its signature: the shape and dtype of every slot (and of
    every hidden output, in a scratch slot after the plan's), where each array lives, and
    the steps as direct kernel calls (``run_planned``): no shape inference, parameter
    parsing or wrapping per node.

    ``pooled=True`` (``static_alloc``, a bound executor): every intermediate lives in a
    buffer planned here. In run order (the forward, then the backward), a step's output
    takes the smallest free buffer that holds it, else the largest free one grown to its
    size, else a new one (``_Pool``), and a buffer is free again once the step that reads
    its slot last has run (``_with_liveness``: what the backward reads stays to the end;
    a hidden output nothing reads is free after its step, and takes no memory at all where
    the op may skip it, ``OpDef.optional_outputs``). The buffers are allocated
    together (``allocate``), and a caller may keep them for its next run. ``pooled=False``
    (a hybridized block's default): each array is allocated by the step that makes it and
    dropped after its last reader, as the ``invoke`` path does. Either way the arrays handed
    out -- the outputs and the argument gradients (``fresh_forward``, ``fresh_grad``) --
    are new every run, so nothing a caller holds is overwritten by a later run; the
    variables and head gradients are the caller's arrays.

    Views (``views=True``): a step whose op has a ``view`` function (reshape, Flatten,
    expand_dims, squeeze: contiguous views; transpose, SwapAxis: strided ones) makes its
    output a view of its input instead of a copy where no caller can write through it
    (``_viewed``); the buffer under a view stays taken while the view is read, and a
    kernel without ``strided_inputs`` gets a contiguous copy of a strided view, made once
    per value (``materialize``) and dropped after the value's last reader. An output
    handed out is never a view: the op's kernel copies it.

    Bytes (variables -- arguments, parameters, auxiliary states -- and head gradients not
    counted): ``forward_peak`` / ``step_peak``, the most that the arrays a forward (a
    forward and then its backward) creates hold at once when each is freed after its last
    reader and every view is a copy, as the ``invoke`` path runs them; ``planned_bytes``,
    what a pooled run holds (every buffer plus the fresh arrays; contiguous copies of views
    not counted)."""

    def __init__(self, plan, ctx, kernels, views=True, pooled=True):
        n_slots = len(plan.values) + len(plan.grad_template)
        self.specs = [None] * n_slots
        self.var_pos = {s: p for p, s in enumerate(plan.var_slots) if s is not None}
        for s, p in self.var_pos.items():
            self.specs[s] = plan.var_specs[p]
        self.pooled, self.views = pooled, views
        self.buffer_of = {}             # slot -> buffer id (pooled)
        self.root = {}                  # a view's slot -> the slot whose array it views
        self.saved = frozenset(plan.saved_slots)
        self._updated = frozenset(_updated_slots(plan.steps))
        self._owned = set()             # slots of arrays the run makes and hands out never
        self._aliases = {}              # slot with a buffer -> the live slots using it
        self._pool, self._alive, self._live = _Pool(), set(), 0
        self.step_peak = 0
        made = set()
        self.forward_calls = self._plan_steps(plan.steps, ctx, kernels, set(plan.out_slots),
                                              made)
        self.forward_peak = self.step_peak
        self.fresh_forward = [k for k in dict.fromkeys(plan.out_slots) if k in made]
        for k, o in zip(plan.head_slots, plan.out_slots):
            if k is not None:
                self.specs[k] = self.specs[o]
        results = {k for k in plan.grad_results if k is not None}
        self.grad_made = set()
        self.grad_calls = self._plan_steps(plan.grad_steps, ctx, kernels, results,
                                           self.grad_made)
        self.fresh_grad = [k for k in dict.fromkeys(plan.grad_results) if k in self.grad_made]
        self.sizes = self._pool.sizes
        del self._pool, self._alive, self._live, self._aliases, self._owned
        # per planned slot: (slot, buffer, element count, shape, dtype), for allocate
        self._layout = [(k, b, math.prod(self.specs[k][0]), *self.specs[k])
                        for k, b in self.buffer_of.items()]
        self.planned_bytes = sum(self.sizes) + sum(
            _nbytes(self.specs[k]) for k in self.fresh_forward + self.fresh_grad)

    def _plan_steps(self, steps, ctx, kernels, fresh, made):
        """The direct calls of ``steps``: their output slots get specs and a place (a view,
        a buffer, or an array the step allocates), added to ``made``."""
        calls = []
        for op, attrs, ins, first, n, dead in steps:
            compute = op.compute.get(kernels)
            parsed = _parsed(op, attrs)
            where = parsed.get("ctx")
            if compute is None or op.name == "_copyto" or where not in (None, ctx):
                raise _NotPlanned(op.name)      # no kernel here, or made on another device
            out_specs = _step_outputs(op, parsed, [self.specs[i] for i in ins])
            outs = list(range(first, first + abs(n)))
            for _ in range(len(outs), len(out_specs)):      # hidden outputs: scratch slots
                outs.append(len(self.specs))
                self.specs.append(None)
            view = self._viewed(op, ins, outs, fresh)
            reusable = self._reusable(op, ins, dead) if view is None else []
            # a hidden output nothing reads (n > 0) that the kernel may skip gets no memory:
            # its slot stays None in every run
            skipped = {outs[j] for j in op.optional_outputs_of(parsed)
                       if n > 0 and abs(n) <= j < len(outs)}
            for k in skipped:
                self.specs[k] = out_specs[outs.index(k)]
            placed = [(k, spec) for k, spec in zip(outs, out_specs) if k not in skipped]
            new = self._place([k for k, _ in placed], [spec for _, spec in placed], view, ins,
                              fresh, made, reusable)
            self.step_peak = max(self.step_peak, self._live)
            gone = outs[abs(n):] + list(dead)
            for k in gone:
                self._release(k)
            # arrays of the run's own (not in a buffer) read last here go now
            drop = tuple(k for k in gone if k in made and k not in self.buffer_of)
            if view is not None:
                calls.append((view, parsed, tuple(ins), tuple(outs), out_specs[0][0], _VIEW,
                              (), drop))
                continue
            mutated = ()
            if op.mutate_inputs:
                mutated = tuple(self.var_pos[ins[i]] for i in op.mutated_indices(parsed)
                                if ins[i] in self.var_pos)
            strided = None if op.strided_inputs else tuple(
                i for i, k in enumerate(ins) if k in self.root) or None
            calls.append((compute, parsed, tuple(ins), tuple(outs), mutated, strided, new,
                          drop))
        return calls

    def _reusable(self, op, ins, dead):
        """The input slots of a step whose buffers its outputs may take over (in place): an
        op whose kernel may write over an input (``op.in_place``), inputs read last here
        that own a planned buffer no view of them shares (a view would be strided or
        reshaped, not element-on-itself)."""
        if not (self.pooled and op.in_place):
            return []
        dead = set(dead)
        return [k for k in dict.fromkeys(ins)
                if k in dead and k in self.buffer_of and k not in self.root
                and self._aliases.get(k) == {k}]

    def _place(self, outs, out_specs, view, ins, fresh, made, reusable=()):
        """Where each output of a step lives: a view of the step's input, a planned buffer
        (pooled, not handed out), or an array the step allocates, listed in the returned
        ``(slot, shape, dtype)`` tuple. The first output, pooled, takes over the buffer of
        a ``reusable`` input of its own shape and dtype (the kernel runs in place, as
        ``out=`` that input would; a later output, Dropout's mask say, may be written
        before the input is read), else one from the pool."""
        new = []
        for j, (k, spec) in enumerate(zip(outs, out_specs)):
            if j:
                reusable = ()
            self.specs[k] = spec
            made.add(k)
            self._alive.add(k)
            self._live += _nbytes(spec)
            if view is not None:
                self.root[k] = root = self.root.get(ins[0], ins[0])
                if root in self._aliases:
                    self._aliases[root].add(k)
                continue
            if k not in fresh:
                self._owned.add(k)
                if self.pooled:
                    same = next((i for i in reusable if self.specs[i] == spec), None)
                    if same is not None:        # the input's buffer passes to the output:
                        del self._aliases[same]     # releasing the input gives nothing back
                        self.buffer_of[k] = self.buffer_of[same]
                    else:
                        self.buffer_of[k] = self._pool.take(_padded(_nbytes(spec)))
                    self._aliases[k] = {k}
                    continue
            new.append((k, *spec))
        return tuple(new)

    def _viewed(self, op, ins, outs, fresh):
        """The op's ``view`` function where this step's output may be a view of its first
        input, else None. Never for an output handed out (``fresh``: it must own its
        memory) or where views are off. The viewed memory must be out of every caller's
        reach while the view is read: an array the run made and keeps to itself always is;
        a caller's array (a variable, a head gradient, an output handed out) is during the
        run, so its view may serve the rest of the run but not the backward of a forward
        (``saved``: the caller may write into the array in between, where a copy would
        have kept the old values), nor outlive a kernel that updates that array in place."""
        if not self.views or op.view is None or len(outs) != 1 or outs[0] in fresh:
            return None
        source = self.root.get(ins[0], ins[0])
        if source in self._owned:
            return op.view
        if source in self._updated or outs[0] in self.saved:
            return None
        return op.view

    def _release(self, k):
        """Slot ``k`` is read no more: its bytes leave the live count, and its buffer goes
        back to the pool once no slot viewing it is live either."""
        if k not in self._alive:
            return
        self._alive.discard(k)
        self._live -= _nbytes(self.specs[k])
        root = self.root.get(k, k)
        aliases = self._aliases.get(root)
        if aliases is None:
            return
        aliases.discard(k)
        if not aliases:
            self._pool.give(self.buffer_of[root])

    def allocate(self, xp):
        """A slot list with every pooled slot a view of its buffer (the buffers allocated
        here), None elsewhere: the memory of one pooled run."""
        buffers = [xp.empty((n,), np.uint8) for n in self.sizes]
        slots = [None] * len(self.specs)
        typed = {}      # (buffer, dtype) -> the whole buffer as that dtype
        for k, b, count, shape, dtype in self._layout:
            flat = typed.get((b, dtype))
            if flat is None:
                whole = buffers[b]
                whole = whole[:len(whole) - len(whole) % dtype.itemsize]
                typed[(b, dtype)] = flat = whole.view(dtype)
            slots[k] = (flat if len(flat) == count else flat[:count]).reshape(shape)
        return slots


def memory_stats(plan, ctx):
    """{'forward_peak', 'step_peak', 'planned_bytes'} of ``plan`` on ``ctx`` in bytes (see
    ``MemoryPlan``; 'step_peak' is the forward's when the plan has no gradient), or None
    where the plan cannot be planned."""
    from .device import run_context
    memory = plan.memory_plan(ctx._run if ctx._run is not None else run_context(ctx))
    if memory is None:
        return None
    return {"forward_peak": memory.forward_peak, "step_peak": memory.step_peak,
            "planned_bytes": memory.planned_bytes}


_VIEW = object()        # the kind of a planned call that makes a view (MemoryPlan)


def run_planned(calls, slots, variables, rctx, training):
    """Run a memory plan's direct ``calls`` over ``slots`` off the autograd tape, in train
    mode ``training`` (a kernel reads the mode from ``rctx``); ``variables`` (the call's
    NDArrays in variable order) have their versions moved where a kernel updates one.

    A call is ``(compute, attrs, input slots, output slots, mutated variables, strided,
    new, drop)``: ``strided`` lists the inputs that may be non-contiguous views, made
    contiguous first (``_contiguous``); ``new``, the ``(slot, shape, dtype)`` of the
    outputs the step allocates; ``drop``, the slots of the run's own arrays read for the
    last time, emptied after the call (so those arrays are freed). A view's call is
    ``(view, attrs, input slots, output slot, output shape, _VIEW, (), drop)``."""
    state = _autograd._state
    previous = state.recording, state.training
    state.recording, state.training = False, bool(training)
    xp = rctx.xp
    try:
        for compute, attrs, ins, outs, mutated, strided, new, drop in calls:
            if strided is _VIEW:
                _view_step(compute, attrs, ins[0], outs[0], mutated, slots, xp)
            else:
                if strided is not None:
                    for i in strided:
                        _contiguous(slots, ins[i], xp)
                for k, shape, dtype in new:
                    slots[k] = xp.empty(shape, dtype)
                compute(rctx, [slots[i] for i in ins], [slots[k] for k in outs], attrs)
                for p in mutated:
                    variables[p]._version[0] += 1
            for k in drop:
                slots[k] = None
    finally:
        state.recording, state.training = previous


def _view_step(view, attrs, source, target, shape, slots, xp):
    """Slot ``target`` as a view of slot ``source``; where the view function refuses the
    source's layout (a reshape of a transposed view), the source is made contiguous first,
    once for all its readers."""
    result = view(slots[source], shape, attrs)
    if result is None:
        result = view(_contiguous(slots, source, xp), shape, attrs)
    slots[target] = result


def materialize(array, xp):
    """A C-contiguous copy of ``array``: the one copy a compiled graph's view costs, made
    where a kernel that reads only contiguous arrays meets a strided view (tests count
    these calls)."""
    return xp.ascontiguousarray(array)


def _contiguous(slots, k, xp):
    """Slot ``k``'s array, replaced by a contiguous copy of it where it is not contiguous,
    so that the later readers of the slot reuse that copy."""
    array = slots[k]
    if not array.flags.c_contiguous:
        slots[k] = array = materialize(array, xp)
    return array


class PlannedRun:
    """One call of a plan through its ``MemoryPlan``: ``forward`` gives the outputs,
    ``backward`` (after it, any number of times) the argument gradients.

    ``buffers``: for a pooled plan, a slot list of planned views (``MemoryPlan.allocate``),
    which the run uses in a copy with the call's variables put in; ``release`` (or None) is
    called with it once this run is gone -- nothing can read its values any more -- so a
    hybridized block with ``static_alloc`` hands it to its next call (MXNet's static
    memory), while a gradient still to come keeps this run alive. ``buffers=None`` for a
    plan not pooled: each step allocates its outputs, and ``keep_saved`` drops every value
    the backward does not read once the forward (or a backward) is over, as the ``invoke``
    path keeps only those."""

    __slots__ = ("plan", "memory", "buffers", "slots", "variables", "rctx", "release")

    def __init__(self, plan, memory, buffers, variables, rctx, release=None):
        self.plan, self.memory, self.buffers = plan, memory, buffers
        self.variables, self.rctx, self.release = variables, rctx, release
        self.slots = [None] * len(memory.specs) if buffers is None else list(buffers)
        for s, a in zip(plan.var_slots, variables):
            if s is not None:
                self.slots[s] = a._data

    def __del__(self):
        release = self.release
        if release is not None:
            self.release = None
            release(self.buffers)

    def forward(self, training):
        """The outputs, each a new array (an output that is a variable or repeats another
        output is a copy), never a planned buffer."""
        memory, slots, rctx = self.memory, self.slots, self.rctx
        run_planned(memory.forward_calls, slots, self.variables, rctx, training)
        outs, seen = [], set()
        for k in self.plan.out_slots:
            if k in memory.var_pos:
                outs.append(self.variables[memory.var_pos[k]].copy())
            elif k in seen:
                outs.append(_wrap(slots[k].copy(), rctx.ctx))
            else:
                outs.append(_wrap(slots[k], rctx.ctx))
            seen.add(k)
        return outs

    def keep_saved(self):
        """Drop (in place) every value but those the backward reads, where the run's arrays
        are its own (not pooled): the others are freed."""
        if self.buffers is None:
            slots, saved = self.slots, self.memory.saved
            for k in range(len(slots)):
                if k not in saved:
                    slots[k] = None

    def watched(self, outputs):
        """The NDArrays among the values the backward reads (variables, ``outputs``): a write
        to one of them after the forward makes the gradient wrong, so it is checked."""
        plan, saved = self.plan, self.memory.saved
        arrays = [self.variables[p] for s, p in self.memory.var_pos.items() if s in saved]
        return arrays + [o for k, o in zip(plan.out_slots, outputs) if k in saved]

    def backward(self, ograds, training):
        """The gradient of each argument (None: not wanted, or nothing reaches it) for head
        gradients ``ograds`` (NDArrays, one per output; one of another dtype than its output
        is cast to it, as the gradient graph was planned)."""
        plan, memory, slots, rctx = self.plan, self.memory, self.slots, self.rctx
        for k, g in zip(plan.head_slots, ograds):
            if k is not None:
                data = g._data
                dtype = memory.specs[k][1]
                slots[k] = data if data.dtype == dtype else rctx.xp.ascontiguousarray(data,
                                                                                    dtype)
        run_planned(memory.grad_calls, slots, self.variables, rctx, training)
        heads = dict(zip(plan.head_slots, ograds))
        grads = [self._result(k, heads) for k in plan.grad_results]
        self.keep_saved()
        return grads

    def _result(self, k, heads):
        """Slot ``k`` as a gradient handed out: new or the caller's own array, never a
        planned buffer (a later run overwrites those)."""
        memory = self.memory
        if k is None:
            return None
        if k in memory.grad_made:
            return _wrap(self.slots[k], self.rctx.ctx)
        if k in memory.var_pos:
            return self.variables[memory.var_pos[k]]
        if k in heads:
            return heads[k]
        return _wrap(self.slots[k].copy(), self.rctx.ctx)


class Executor:
    """A Symbol bound to argument, gradient and auxiliary arrays (made by ``Symbol.bind`` or
    ``Symbol.simple_bind``); ``forward`` and ``backward`` run it."""

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req="write", aux_states=None):
        self._symbol = symbol
        self._ctx = ctx if isinstance(ctx, Context) else Context(ctx) if ctx else current_context()
        self._arg_names = list(symbol.list_arguments())
        self._aux_names = list(symbol.list_auxiliary_states())
        self._out_names = list(symbol.list_outputs())
        self.arg_arrays = _named_list("args", self._arg_names, args)
        grads = _named_list("args_grad", self._arg_names, args_grad, required=False,
                            strict_names=True)
        if isinstance(args_grad, dict) and isinstance(grad_req, str):
            grad_req = {n: grad_req for n in args_grad if n in self._arg_names}
        reqs = _grad_req_list(grad_req, self._arg_names)
        # an argument without a gradient array gets no gradient (MXNet: args_grad=None)
        self._grad_reqs = [r if g is not None else "null" for r, g in zip(reqs, grads)]
        self.grad_arrays = [g if r != "null" else None for g, r in zip(grads, self._grad_reqs)]
        self.aux_arrays = _named_list("aux_states", self._aux_names, aux_states,
                                      required=bool(self._aux_names))
        for what, names, arrays in (("args", self._arg_names, self.arg_arrays),
                                    ("args_grad", self._arg_names, self.grad_arrays),
                                    ("aux_states", self._aux_names, self.aux_arrays)):
            for n, a in zip(names, arrays):
                if a is not None and a.context != self._ctx:
                    raise MXNetError(f"bind: {what}[{n!r}] is on {a.context}, the executor on "
                                     f"{self._ctx}")
        for n, a, g in zip(self._arg_names, self.arg_arrays, self.grad_arrays):
            if g is not None and g.shape != a.shape:
                raise MXNetError(f"bind: args_grad[{n!r}] has shape {g.shape}, the argument "
                                 f"{a.shape}")
        names = self._arg_names + self._aux_names
        # np calls recorded on inputs of unknown shape or dtype, made now that they are known
        from .symbol._deferred import expand_symbol
        bound = self.arg_arrays + self.aux_arrays
        graph = expand_symbol(symbol, {n: a.shape for n, a in zip(names, bound)},
                              {n: a.dtype for n, a in zip(names, bound)})
        # the graph the plan runs (get_optimized_symbol)
        self._optimized = eliminate_common_expr(graph) if _eliminates_common_expr() \
            else graph
        self._native = self._runs_sparse_rules()
        arrays = self._bound_arrays = self.arg_arrays + self.aux_arrays
        self._sparse = []       # the sparse arguments run as dense copies (_dense_arrays)
        if not self._native:
            arrays = self._dense_arrays(arrays)
        self._plan = Plan(self._optimized, self._ctx, {n: a.shape for n, a in zip(names, arrays)},
                          {n: a.dtype for n, a in zip(names, arrays)},
                          [r != "null" for r in self._grad_reqs],
                          (self._arg_names, self._aux_names))
        self._values = self._plan.bound(arrays)
        self._out_stypes = self._output_stypes() if self._native or self._sparse else None
        self.outputs = self._initial_outputs()
        # (the last forward's value slots or PlannedRun, its outputs): what backward reads
        self._fwd = None
        self._buffers = None      # the planned buffers every forward runs in (_planned_run)
        self._monitor = None      # (callback, monitor_all) of set_monitor_callback
        self._call = _storage_invoke if self._native else _invoke   # how a step runs

    def _runs_sparse_rules(self):
        """Whether the graph runs through the operators' storage rules (MXNet's FComputeEx
        nodes): a node of the graph computes on a sparse argument or makes a sparse value
        (``mxlite.symbol._storage.native_nodes``), or an argument has a sparse gradient
        array (which a rule may make: ``dot``, ``Embedding(sparse_grad=True)``). Such a graph
        runs node by node through the storage-aware invoke (``_storage_invoke``) on the
        bound arrays themselves; any other runs densely and planned."""
        if any(g is not None and g._data is None for g in self.grad_arrays):
            return True
        arrays = self.arg_arrays + self.aux_arrays
        if all(a._data is not None for a in arrays):
            return False
        from .symbol._storage import native_nodes
        names = self._arg_names + self._aux_names
        return bool(native_nodes(self._optimized, {n: a.stype for n, a in zip(names, arrays)},
                                 {n: a.shape for n, a in zip(names, arrays)}))

    def _dense_arrays(self, arrays):
        """The arrays the plan binds: each sparse argument's dense copy (refreshed by every
        ``forward``), the others themselves. A graph runs on dense arrays: sparse arguments
        are MXNet's storage fallback, announced once per executor."""
        self._sparse = [i for i, a in enumerate(arrays) if a is not None and a._data is None]
        if self._sparse:
            import warnings
            names = self._arg_names + self._aux_names
            warnings.warn(f"Storage type fallback detected: the executor runs the graph on "
                          f"dense copies of its sparse arguments "
                          f"{[names[i] for i in self._sparse]} and makes dense outputs (the "
                          "result is the same)", RuntimeWarning, stacklevel=4)
        self._bound_arrays = [a.tostype("default") if i in self._sparse else a
                              for i, a in enumerate(arrays)]
        return self._bound_arrays

    def _refresh_dense(self):
        """Copy each sparse argument's current values into its dense copy."""
        sources = self.arg_arrays + self.aux_arrays
        for i in self._sparse:
            dense = self._bound_arrays[i]
            sources[i].tostype("default").copyto(dense)

    def _initial_outputs(self):
        """Zero arrays of the outputs' inferred shapes, dtypes and storage types (MXNet
        allocates the outputs at bind); [] where the graph's shapes cannot be inferred from
        the arrays."""
        shapes = {n: a.shape for n, a in zip(self._arg_names, self.arg_arrays)}
        dtypes = {n: a.dtype for n, a in zip(self._arg_names, self.arg_arrays)}
        try:
            _, out_shapes, _ = self._optimized.infer_shape(**shapes)
            _, out_types, _ = self._optimized.infer_type(**dtypes)
        except MXNetError:
            return []
        if out_shapes is None or out_types is None:
            return []
        stypes = self._out_stypes or ["default"] * len(out_shapes)
        return [_nd.zeros(tuple(s), ctx=self._ctx, dtype=t) if st == "default" else
                _nd.sparse.zeros(st, tuple(s), ctx=self._ctx, dtype=t)
                for s, t, st in zip(out_shapes, out_types, stypes)]

    # ---- dictionaries -------------------------------------------------------------------------
    @property
    def arg_dict(self):
        """{argument name: its array}."""
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        """{argument name: its gradient array}, None for an argument with grad_req 'null'
        (as MXNet)."""
        return dict(zip(self._arg_names, self.grad_arrays))

    @property
    def aux_dict(self):
        """{auxiliary state name: its array}."""
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        """{output name: the array of the last forward}."""
        return dict(zip(self._out_names, self.outputs))

    # ---- running ------------------------------------------------------------------------------
    def forward(self, is_train=False, **kwargs):
        """Compute the outputs (``self.outputs``, also returned). Keyword arguments are copied
        into the argument arrays of those names first. ``is_train=True`` runs in train mode
        (Dropout active, BatchNorm with batch statistics updating its moving averages).
        When some argument wants a gradient, what ``backward`` needs is recorded (in either
        mode, as MXNet's executor keeps it)."""
        if kwargs:
            arg_dict = self.arg_dict
            for name, value in kwargs.items():
                if name not in arg_dict:
                    raise MXNetError(f"forward: {name!r} is not an argument of the symbol "
                                     f"({self._arg_names})")
                dst = arg_dict[name]
                shape = tuple(getattr(value, "shape", ()))
                if shape != dst.shape:
                    raise MXNetError(f"forward: {name!r} has shape {shape}, the bound array "
                                     f"{dst.shape}")
                if isinstance(value, NDArray):
                    value.copyto(dst)
                else:
                    dst[:] = value
        if self._sparse:
            self._refresh_dense()
        plan = self._plan
        run = self._planned_run() if self._monitor is None and not self._native else None
        if run is not None:
            results = run.forward(is_train)
            values = run
        else:
            values = list(self._values)     # the bound arrays, then a slot per op output
            execute(self._monitored(plan) if self._monitor is not None else plan.steps,
                    values, self._ctx, plan.uses_context, is_train, self._call)
            results = [values[i] for i in plan.out_slots]
        self._store_outputs(results)
        # backward may follow an is_train=False forward too (MXNet's executor keeps it)
        self._fwd = (values, results) if plan.wants_grad else None
        return self.outputs

    def _planned_run(self):
        """A ``PlannedRun`` of the plan over this executor's one set of planned buffers,
        allocated by the first forward and reused by every later one (MXNet's executor
        plans its memory once, at bind); None where the graph cannot be planned."""
        from .device import run_context
        rctx = self._ctx._run if self._ctx._run is not None else run_context(self._ctx)
        memory = self._plan.memory_plan(rctx)
        if memory is None:
            return None
        if self._buffers is None:
            self._buffers = memory.allocate(rctx.xp)
        return PlannedRun(self._plan, memory, self._buffers, self._bound_arrays, rctx)

    def _output_stypes(self):
        """The storage type of each output (``mxlite.symbol._storage``), from the arguments'."""
        from .symbol._storage import storage_types
        arrays = self.arg_arrays + self.aux_arrays
        names = self._arg_names + self._aux_names
        out, _ = storage_types(self._symbol, {n: a.stype for n, a in zip(names, arrays)},
                               {n: a.shape for n, a in zip(names, arrays)})
        return out if any(s != "default" for s in out) else None

    def _store_outputs(self, results):
        """Copy the results into ``self.outputs``, the arrays made at bind, so a reference to
        ``exe.outputs[0]`` held across ``forward`` sees the new values (MXNet's executor
        writes its outputs in place). A graph run through the storage rules makes each
        output in its inferred storage type (the positions the rules store); on dense copies
        of sparse arguments, an output whose inferred type is sparse is the dense result
        converted to it (the positions holding a value)."""
        if self._out_stypes is not None:
            results = [r if s == r.stype else _converted(r, s)
                       for r, s in zip(results, self._out_stypes)]
        if len(self.outputs) != len(results) or any(
                o.shape != r.shape or o.dtype != r.dtype or o.stype != r.stype
                for o, r in zip(self.outputs, results)):
            self.outputs = [r.copy() for r in results]     # shapes unknown at bind
            return
        for o, r in zip(self.outputs, results):
            if o is r:
                continue
            if o._data is None:
                r.copyto(o)
            else:
                o._data[...] = r._data
                o._version[0] += 1

    # ---- monitoring ---------------------------------------------------------------------------
    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` during each ``forward`` with every operator output
        (``<node>_<output>``) and, with ``monitor_all``, every operator input first
        (``<node>_<input>``, before the op runs; an input that is a variable is reported
        under its own name too, just before), as MXNet's executor monitor.
        ``callback=None`` removes it."""
        if callback is not None and not callable(callback):
            raise MXNetError(f"set_monitor_callback: callback must be callable, got "
                             f"{callback!r}")
        self._monitor = None if callback is None else (callback, bool(monitor_all))

    def _monitored(self, plan):
        """The forward steps, each followed by the monitor's calls (same kernels)."""
        return monitored_steps(plan, *self._monitor)

    def backward(self, out_grads=None, is_train=True):
        """Gradients of the last ``forward``'s outputs into ``grad_arrays``
        ('write' overwrites, 'add' accumulates). ``out_grads`` (an NDArray or a list, one per
        output) is required unless every output is a loss layer."""
        plan = self._plan
        if not plan.wants_grad:
            return
        if self._fwd is None:
            raise MXNetError("backward: call forward first (no forward has run since bind)")
        if plan.grad_error is not None:
            raise plan.grad_error
        fwd, heads = self._fwd
        if out_grads is None:
            grads = [None] * len(heads)
        else:
            grads = [out_grads] if isinstance(out_grads, NDArray) else list(out_grads)
            if len(grads) != len(heads):
                raise MXNetError(f"backward: {len(grads)} out_grads for {len(heads)} outputs")
        for i, (g, h, op) in enumerate(zip(grads, heads, plan.head_ops)):
            if g is None:
                if op is None or op.name not in _LOSS_OPS:
                    raise MXNetError(
                        f"backward: output {i} ({self._out_names[i]!r}) is not a loss layer, "
                        "so its head gradient is required: pass out_grads (or end the network "
                        "with a loss layer such as SoftmaxOutput)")
            elif not isinstance(g, NDArray):
                grads[i] = g = _nd.array(g, ctx=self._ctx, dtype=h.dtype)
            elif g._data is None:               # a sparse head gradient: its dense copy
                grads[i] = g = g.tostype("default")
            if g is not None and g.shape != h.shape:
                raise MXNetError(f"backward: out_grads[{i}] has shape {g.shape}, output "
                                 f"{self._out_names[i]!r} has {h.shape}")
        for i, (k, g, h) in enumerate(zip(plan.head_slots, grads, heads)):
            if k is not None and g is None:        # a loss layer's (as autograd: ones)
                grads[i] = _nd.ones(h.shape, ctx=self._ctx, dtype=h.dtype)
        if isinstance(fwd, PlannedRun):
            results = fwd.backward(grads, is_train)
        else:
            values = fwd + plan.grad_template
            for k, g in zip(plan.head_slots, grads):
                if k is not None:
                    values[k] = g
            execute(plan.grad_steps, values, self._ctx, plan.grad_uses_context, is_train,
                    self._call)
            results = [values[k] if k is not None else None for k in plan.grad_results]
        self._write_gradients(results)

    def _write_gradients(self, results):
        """Each argument's gradient (``results``: an NDArray, or None where none reaches
        it) written into ``grad_arrays`` ('write') or added to it ('add')."""
        xp = None
        for buf, req, g in zip(self.grad_arrays, self._grad_reqs, results):
            if req == "null":
                continue
            if buf._data is None:               # a sparse gradient array: converted
                _write_sparse_gradient(buf, req, g)
                continue
            if g is not None and g._data is None:       # a sparse gradient: densified
                g = g.tostype("default")
            data = buf._data
            buf._version[0] += 1
            if g is None:
                if req == "write":
                    data[...] = 0
            elif req == "add":
                data += g._data
            else:
                if xp is None:
                    from .device import namespace_for
                    xp = namespace_for(self._ctx)
                xp.cast_into(data, g._data)

    # ---- parameters and shapes ----------------------------------------------------------------
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy arrays from ``arg_params`` / ``aux_params`` ({name: NDArray}) into the bound
        arguments / auxiliary states; a name the symbol lacks raises unless
        ``allow_extra_params``."""
        for params, names, arrays, what in ((arg_params, self._arg_names, self.arg_arrays,
                                              "arguments"),
                                             (aux_params or {}, self._aux_names,
                                              self.aux_arrays, "auxiliary states")):
            target = dict(zip(names, arrays))
            for name, value in params.items():
                if name not in target:
                    if allow_extra_params:
                        continue
                    raise ValueError(f'Find name "{name}" that is not in the {what}')
                dst = target[name]
                if isinstance(value, NDArray):
                    if value.shape != dst.shape:
                        raise MXNetError(f"copy_params_from: {name!r} has shape {value.shape}, "
                                         f"the bound array {dst.shape}")
                    value.astype(dst.dtype, copy=False).copyto(dst)
                else:
                    dst[:] = value

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new Executor for new input shapes (``name=shape`` keywords) sharing memory with
        this one, as MXNet's: an array whose shape stays is the same array; one that shrinks
        is a view of the start of the old buffer (writes show through); one that grows is a
        new array, allowed only with ``allow_up_sizing``. An array whose shape changes
        without being named raises unless ``partial_shaping``. The new executor's outputs
        are views of this one's where they fit, so the two cannot run at once."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise MXNetError(f"reshape: the new shapes {kwargs} do not determine every "
                             "argument's shape")
        resize = functools.partial(self._resized, kwargs, partial_shaping, allow_up_sizing)
        new_args = [resize(n, a, s) for n, a, s in zip(self._arg_names, self.arg_arrays,
                                                       arg_shapes)]
        new_grads = {n: resize(n, g, s) for n, g, s in zip(self._arg_names, self.grad_arrays,
                                                           arg_shapes) if g is not None}
        new_aux = [resize(n, a, s) for n, a, s in zip(self._aux_names, self.aux_arrays,
                                                      aux_shapes)]
        new = Executor(self._symbol, self._ctx, new_args, new_grads,
                       dict(zip(self._arg_names, self._grad_reqs)), new_aux)
        new.outputs = [_share(old, o.shape) if o._data is not None and old._data is not None
                       and o.size <= old.size and o.dtype == old.dtype
                       else o for o, old in zip(new.outputs, self.outputs)]
        new._monitor = self._monitor
        return new

    def _resized(self, named, partial_shaping, allow_up_sizing, name, old, shape):
        """``old`` itself, a view of its buffer, or a new array of ``shape`` (``reshape``);
        a sparse array of a new shape is a new one of its storage type, nothing stored (its
        stored values have no buffer to share)."""
        shape = tuple(shape)
        if shape == old.shape:
            return old
        if not partial_shaping and name not in named:
            raise MXNetError(
                f"reshape: the shape of {name!r}, which was not given, changes from "
                f"{old.shape} to {shape}; the new executor would not share it with this one. "
                "Set partial_shaping=True if this is intended")
        if math.prod(shape) > math.prod(old.shape):
            if not allow_up_sizing:
                raise MXNetError(
                    f"reshape: the new shape {shape} of {name!r} is larger than its shape "
                    f"{old.shape}; set allow_up_sizing=True to allocate a new array")
            if old._data is not None:
                return _nd.zeros(shape, ctx=self._ctx, dtype=old.dtype)
        if old._data is None:
            return _nd.sparse.zeros(old.stype, shape, ctx=self._ctx, dtype=old.dtype)
        return _share(old, shape)

    def get_optimized_symbol(self):
        """The symbol this executor runs: its graph after the bind-time passes (common
        expressions merged unless ``MXNET_ELIMINATE_COMMON_EXPR=0``)."""
        return self._optimized

    def debug_str(self):
        """A listing of the bound graph, one line per operator node, and MXNet's closing
        line ``Total <n> MB allocated``: the most memory the forward's intermediate arrays
        take at once (what the last op reads is released after it; what the backward
        reads stays until then). Bound arrays (arguments, gradients, auxiliary states) are
        not counted."""
        lines = [f"Symbol outputs: {self._out_names}"]
        for op, attrs, ins, first, n, _ in self._plan.steps:
            lines.append(f"Op:{op.name}, inputs={ins}, outputs={list(range(first, first + abs(n)))}")
        lines.append(f"Total {self._forward_peak_bytes() >> 20} MB allocated")
        return "\n".join(lines)

    def memory_stats(self):
        """The bytes this executor's arrays take beyond the bound ones (arguments, gradients,
        auxiliary states, head gradients): {'forward_peak': the most a ``forward`` holds at
        once, 'step_peak': the same over a forward and its ``backward``, 'planned_bytes':
        a run over buffers planned once (a hybridized block's ``static_alloc``)}; None
        where the graph cannot be planned. An mxlite addition."""
        return memory_stats(self._plan, self._ctx)

    def _forward_peak_bytes(self):
        """The peak of the bytes the forward's live intermediate slots hold."""
        from .symbol.infer import shape_table, type_table
        plan = self._plan
        arrays = self.arg_arrays + self.aux_arrays
        names = self._arg_names + self._aux_names
        _, shapes = shape_table(self._optimized._outputs,
                                {n: a.shape for n, a in zip(names, arrays)})
        _, dtypes = type_table(self._optimized._outputs,
                               {n: np.dtype(a.dtype) for n, a in zip(names, arrays)})
        size = {}
        for (node, i), k in plan.slot_of.items():
            shape, dtype = shapes.get(node, i), dtypes.get(node, i)
            if node.op is not None and shape is not None and dtype is not None:
                size[k] = math.prod(shape) * np.dtype(dtype).itemsize
        live = peak = 0
        for _, _, _, first, n, dead in plan.steps:
            live += sum(size.get(k, 0) for k in range(first, first + abs(n)))
            peak = max(peak, live)
            live -= sum(size.get(k, 0) for k in dead)
        return peak

    def __repr__(self):
        return f"<Executor outputs={self._out_names} ctx={self._ctx}>"


# ---- Symbol.bind / simple_bind ----------------------------------------------------------------
def _converted(x, stype):
    """``x`` in storage type ``stype`` (sparse to sparse through dense)."""
    if x.stype != "default" and stype != "default":
        x = x.tostype("default")
    return x.tostype(stype)


def _write_sparse_gradient(buf, req, g):
    """Gradient ``g`` (dense, or None for zero) into sparse array ``buf``: 'write' stores it
    in ``buf``'s storage type, 'add' adds it first."""
    if g is None:
        if req == "write":
            _nd.sparse.zeros(buf.stype, buf.shape, ctx=buf.context, dtype=buf.dtype).copyto(buf)
        return
    if req == "add":
        g = _nd.elemwise_add(buf, g)
    (g if g.stype == buf.stype else _converted(g, buf.stype)).copyto(buf)


def bind(symbol, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
         shared_exec=None):
    """Bind ``symbol`` to arrays: ``args`` (a list in ``list_arguments()`` order or a dict),
    ``args_grad`` (the same, or None for no gradients), ``grad_req`` ('write', 'add', 'null',
    or a list/dict of them), ``aux_states`` (list or dict). ``group2ctx`` and ``shared_exec``
    are accepted for MXNet compatibility and ignored (one device per executor)."""
    return Executor(symbol, ctx, args, args_grad, grad_req, aux_states)


def simple_bind(symbol, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
    """Bind ``symbol`` to new arrays: shapes from ``infer_shape(**kwargs)`` (input shapes by
    name), dtypes from ``infer_type(**type_dict)`` (float32 where nothing says otherwise);
    arguments and auxiliary states start at zero, and every argument whose ``grad_req`` is not
    'null' gets a zero gradient array.

    ``shared_exec`` with ``shared_arg_names``: those arguments (and their gradient arrays)
    are ``shared_exec``'s own arrays, as MXNet's Module shares parameters between the
    executors of its buckets; their shapes must agree. ``shared_buffer`` ({name: NDArray},
    updated): every other argument, and its gradient (key ``'grad of <name>'``), is a view of
    the buffer's array of that name where it is large enough and of the dtype, else a new
    array stored there (MXNet's rule). An argument whose storage type is sparse
    (``stype_dict``, or the variable's ``stype``) gets a sparse array with nothing stored; a
    gradient array is sparse where the graph's storage inference gives the gradient a sparse
    type (``mxlite.symbol._storage``: the weight of ``Embedding(sparse_grad=True)``, the
    dense operand of ``dot(csr, dense)``), else dense. ``group2ctx`` is accepted and ignored
    (one device)."""
    ctx = ctx if isinstance(ctx, Context) else Context(ctx) if ctx else current_context()
    arg_names = symbol.list_arguments()
    arg_shapes, _, aux_shapes = symbol.infer_shape(**kwargs)
    if arg_shapes is None:
        partial, _, aux_partial = symbol.infer_shape_partial(**kwargs)
        unknown = [n for n, s in zip(arg_names + symbol.list_auxiliary_states(),
                                     partial + aux_partial)
                   if n not in kwargs and (not s or 0 in s)]
        raise MXNetError(f"simple_bind: the shapes given ({kwargs}) do not determine the "
                         f"shapes of {unknown}")
    arg_types, _, aux_types = symbol.infer_type_partial(**dict(type_dict or {}))
    reqs = _grad_req_list(grad_req, arg_names)
    shared = {}
    if shared_exec is not None:
        for name in shared_arg_names or ():
            if name in arg_names:
                shared[name] = (shared_exec.arg_dict[name], shared_exec.grad_dict.get(name))
    stypes = _arg_stypes(symbol, stype_dict)
    grad_stypes = {}
    if any(s != "default" for s in stypes.values()) or _has_grad_stypes(symbol):
        from .symbol._storage import storage_types
        _, grad_stypes = storage_types(symbol, stypes, dict(zip(arg_names, arg_shapes)))
    args, grads = [], {}
    for name, shape, dt, req in zip(arg_names, arg_shapes, arg_types, reqs):
        shape, dt = tuple(shape), dt if dt is not None else "float32"
        if name in grad_stypes and req != "null" and name not in shared:
            grads[name] = _nd.sparse.zeros(grad_stypes[name], shape, ctx=ctx, dtype=dt)
        if stypes.get(name, "default") != "default" and name not in shared:
            args.append(_nd.sparse.zeros(stypes[name], shape, ctx=ctx, dtype=dt))
            if req != "null" and name not in grads:
                grads[name] = _nd.zeros(shape, ctx=ctx, dtype=dt)
            continue
        if name in shared:
            array, grad = shared[name]
            if array.shape != shape:
                raise MXNetError(f"simple_bind: shared argument {name!r} has shape "
                                 f"{array.shape} in shared_exec, {shape} here")
            args.append(array)
            if req != "null":
                grads[name] = grad if grad is not None else _nd.zeros(shape, ctx=ctx,
                                                                     dtype=array.dtype)
            continue
        args.append(_from_buffer(shared_buffer, name, shape, dt, ctx))
        if req != "null" and name not in grads:
            grads[name] = _from_buffer(shared_buffer, f"grad of {name}", shape, dt, ctx)
    aux = [_nd.zeros(tuple(s), ctx=ctx, dtype=dt if dt is not None else "float32")
           for s, dt in zip(aux_shapes, aux_types)]
    return Executor(symbol, ctx, args, grads, dict(zip(arg_names, reqs)), aux)


def _has_grad_stypes(symbol):
    """Whether an op of ``symbol`` may ask a sparse gradient of an input (OpDef.grad_stypes)."""
    return any(n.op is not None and n.op.grad_stypes is not None for n in symbol._nodes())


def _arg_stypes(symbol, stype_dict):
    """{argument: storage type}: ``stype_dict``'s, else the variable's ``__storage_type__``."""
    from .ndarray.ndarray import _STORAGE_TYPE_ID_TO_STR
    out = {}
    for name, attrs in symbol.attr_dict().items():
        code = attrs.get("__storage_type__")
        if code is not None:
            out[name] = _STORAGE_TYPE_ID_TO_STR.get(int(code), "default")
    out.update(stype_dict or {})
    return out


def _from_buffer(buffer, key, shape, dtype, ctx):
    """A zero array of ``shape``, or with ``buffer`` a view of ``buffer[key]`` where that is
    large enough and of ``dtype`` (else a new array, stored as ``buffer[key]``)."""
    if buffer is None:
        return _nd.zeros(shape, ctx=ctx, dtype=dtype)
    if not isinstance(buffer, dict):
        raise MXNetError(f"simple_bind: shared_buffer must be a dict of NDArrays, got "
                         f"{type(buffer).__name__}")
    old = buffer.get(key)
    if isinstance(old, NDArray) and old.context == ctx and np.dtype(old.dtype) == \
            np.dtype(dtype) and old.size >= math.prod(shape):
        return _share(old, shape)
    buffer[key] = new = _nd.zeros(shape, ctx=ctx, dtype=dtype)
    return new


def _attach():
    """``Symbol.bind`` and ``Symbol.simple_bind`` are this module's functions."""
    from .symbol.symbol import Symbol
    Symbol.bind = bind
    Symbol.simple_bind = simple_bind


_attach()
