"""``CachedOp``: a traced Gluon graph run through the symbol executor (MXNet's CachedOp).

A hybridized block is traced once with ``F = mx.sym``; this class runs that Symbol. One
``Executor`` (``mxlite.executor``) is bound per input signature: the input shapes and
dtypes, the context, and which inputs need a gradient (under ``autograd.record()``). Each
call runs the executor's forward plan over *this call's* arrays (the data and the
parameters' current arrays put in the variable slots), so nothing is copied in and two
calls under one ``record()`` keep separate values.

Under ``record()`` the outputs get one tape node whose gradient runs the executor's
backward plan (the symbolic gradient graph of the same FGradients ``mx.autograd`` calls)
over the values that call's forward kept: first-order gradients equal the imperative
ones. A gradient asked with ``create_graph=True`` instead replays the graph through
``mx.nd`` on the tape and differentiates that, so gradients of any order work too --
except through random operators (Dropout) in train mode, whose replay would draw new
masks: that raises MXNetError asking to call the block without ``hybridize``.

The executor's plan (``_values``, ``_slot``, ``_steps``, ``_out_slots``, ``_grad_steps``,
``_grad_template``, ``_head_slots``, ``_grad_results``) is read here, which is why this
module lives beside the executor's only other caller, ``Executor.forward/backward``.
"""
from .. import autograd
from .. import ndarray as nd
from .._core.dispatch import attach, parents
from ..base import MXNetError
from ..executor import Executor, _run

__all__ = ["CachedOp"]


def _execute(steps, values, ctx, uses_context):
    """Run an executor plan's ``steps`` over ``values``, off the tape, in this thread's
    train mode (inside ``with ctx:`` where an op without inputs makes its output on it)."""
    with autograd.pause(autograd.is_training()):
        if uses_context:
            with ctx:
                _run(steps, values, ctx)
        else:
            _run(steps, values, ctx)


class _Saved:
    """What one recorded call keeps for its gradient: the executor and its value slots."""

    __slots__ = ("exe", "values", "arg_names", "aux", "training")

    def __init__(self, exe, values, arg_names, aux, training):
        self.exe, self.values, self.arg_names, self.aux = exe, values, arg_names, aux
        self.training = training


class _CachedOpDef:
    """The tape's view of a cached graph: the duck-typed operator record a ``Node`` holds
    (name, what the gradient needs, the FGradient)."""

    grad_needs = ("inputs",)
    variadic = True
    inputs = ()
    mutate_inputs = ()

    def __init__(self, cached):
        self.name = f"_CachedOp({cached.name})"
        self._cached = cached

    def gradient(self, F, node, ograds):
        """First order: the executor's backward plan over the forward's values. With
        ``create_graph`` (the engine records): the graph replayed on the tape, then
        differentiated with ``create_graph=True``."""
        if autograd.is_recording():
            return self._cached.replay_gradient(node, ograds)
        saved = node.attrs
        exe = saved.exe
        values = saved.values + exe._grad_template
        for k, g in zip(exe._head_slots, ograds):
            if k is not None:
                values[k] = g
        _execute(exe._grad_steps, values, node.context, exe._grad_uses_context)
        return [values[k] if k is not None else None for k in exe._grad_results]


class CachedOp:
    """Runs ``sym`` (a traced block) for data arrays named ``data_names`` and the
    Parameters ``params`` ({name: Parameter}) that fill its other variables."""

    def __init__(self, sym, data_names, params, name="graph"):
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
        self._executors = {}
        self._op = _CachedOpDef(self)
        self._random = any(n.op is not None and n.op.name.startswith(("Dropout", "_random"))
                           for n in sym._nodes())

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
        return ctx, arrays

    def _executor(self, ctx, arrays, needs):
        key = (ctx, needs, *[a._data.shape for a in arrays], *[a._data.dtype for a in arrays])
        exe = self._executors.get(key)
        if exe is None:
            args, aux = arrays[:self._n_args], arrays[self._n_args:]
            reqs, grads = {}, {}
            for n, a, need in zip(self._arg_names, args, needs or [False] * len(args)):
                reqs[n] = "write" if need else "null"
                if need:
                    grads[n] = nd.zeros(a.shape, ctx=ctx, dtype=a.dtype)
            exe = Executor(self._sym, ctx, dict(zip(self._arg_names, args)), grads or None,
                           reqs, dict(zip(self._aux_names, aux)))
            names = self._arg_names + self._aux_names
            by_name = {node.name: s for (node, _), s in exe._slot.items() if node.op is None}
            exe._cached_slots = [by_name.get(n) for n in names]
            self._executors[key] = exe
        return exe

    def __call__(self, data):
        """The outputs (a list of NDArrays) for the list of input arrays ``data``."""
        ctx, arrays = self._arrays(data)
        args = arrays[:self._n_args]
        entries = parents(args) if autograd.is_recording() else None
        needs = None
        if entries is not None and any(e is not None for e in entries):
            needs = tuple(e is not None for e in entries)
        exe = self._executor(ctx, arrays, needs)
        values = list(exe._values)
        for s, a in zip(exe._cached_slots, arrays):
            if s is not None:
                values[s] = a
        _execute(exe._steps, values, ctx, exe._uses_context)
        outs = [values[i] for i in exe._out_slots]
        seen = {id(a) for a in arrays}
        for i, o in enumerate(outs):        # an output that is an input or another output
            if id(o) in seen:
                outs[i] = o.copy()
            seen.add(id(outs[i]))
        if needs is not None:
            saved = _Saved(exe, values, self._arg_names, arrays[self._n_args:],
                           autograd.is_training())
            attach(self._op, saved, entries, args, outs)
        return outs

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
        return f"<CachedOp {self.name}: {len(self._executors)} executor(s)>"

