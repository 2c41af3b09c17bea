"""Symbolic gradients (``mx.sym.grad``, ``Symbol.gradient``) and a plain evaluator
(``Symbol.eval``).

``grad(heads, wrt)`` walks the graph backwards and calls each op's FGradient with
``F = mx.sym``, on a node view that carries the graph's inferred shapes and dtypes
(``input_shapes``, ``input_dtypes``, ``output_shapes``, ``output_dtypes``), ``context``,
``wants`` and, per ``grad_needs``, ``inputs``/``outputs`` as Symbols. Every FGradient is
built from registered ops, so the gradient is again a Symbol of registered ops and can be
differentiated again, to any order (MXNet's ``Symbol.gradient`` was never implemented and
its executors refused "Backward of Backward").

FGradients are written with NDArray semantics; while they run, Symbol arithmetic of two
symbols broadcasts (``broadcast_*``), as NDArray's does.

The gradient graph is specialised to the inferred shapes (a gradient may create zeros of a
shape, or reshape to one): the shapes come from ``shapes=`` and the variables' ``__shape__``
(``mx.sym.var('x', shape=(3,))``); dtypes from ``dtypes=`` and ``__dtype__``, float32 for
a variable nothing else determines.
"""
import numpy as np

from ..base import MXNetError
from ..context import Context, current_context
from ..ops.registry import NON_DIFFERENTIABLE, Attrs
from .graph import input_names
from .infer import _seed_dtype, complete_seed_shape, shape_table, type_table

__all__ = ["grad", "evaluate"]


class GradNode:
    """What an FGradient reads of its node (the same fields as the autograd tape's Node)."""

    __slots__ = ("op", "attrs", "input_shapes", "input_dtypes", "output_shapes",
                 "output_dtypes", "context", "wants", "inputs", "outputs")

    def __repr__(self):
        return f"<GradNode {self.op.name}>"


def _entries_of(heads):
    from .symbol import Symbol
    heads = heads if isinstance(heads, (list, tuple)) else [heads]
    entries = []
    for h in heads:
        if not isinstance(h, Symbol):
            raise MXNetError(f"grad: heads must be Symbols, got {type(h).__name__}")
        entries += h._outputs
    return entries


def _wrt(wrt):
    """``[(name, variable node or None)]`` for names or variable Symbols."""
    from .symbol import Symbol
    single = not isinstance(wrt, (list, tuple))
    out = []
    for w in ([wrt] if single else wrt):
        node = None
        if isinstance(w, Symbol):
            node = w._single("grad")
            if node.op is not None:
                raise MXNetError(f"grad: wrt {w.name!r} is not a variable")
            w = node.name
        if not isinstance(w, str):
            raise MXNetError(f"grad: wrt must be variable names or Symbols, got {w!r}")
        out.append((w, node))
    return out


def _check_known(table, node, i, what):
    v = table.get(node, i)
    if v is None or (what == "shape" and None in v):
        raise MXNetError(f"grad: the {what} of {node.name!r} (output {i}) cannot be inferred; "
                         "give the variables' shapes (mx.sym.var(name, shape=...) or "
                         "shapes={name: shape})")
    return v


def grad(heads, wrt, head_grads=None, shapes=None, dtypes=None, ctx=None):
    """Gradient Symbols of ``sum_i <heads[i], head_grads[i]>`` with respect to the variables
    ``wrt`` (names or variable Symbols): one Symbol per ``wrt`` entry (a list).

    - ``heads``: a Symbol (every output is a head) or a list of Symbols.
    - ``head_grads``: a list of Symbols, one per head output; None for ``ones_like`` (MXNet).
    - ``shapes``, ``dtypes``: ``{variable: shape / dtype}`` for inference, besides
      ``__shape__`` / ``__dtype__``; float32 where nothing determines a dtype.
    - ``ctx``: the device that arrays the gradient creates (zeros) are made on (default
      the current context).
    """
    from .. import symbol as F
    from ._deferred import expand
    from .symbol import Symbol, broadcasting
    # np calls recorded on inputs of unknown shape or dtype, made with the shapes given
    entries = expand(_entries_of(heads), dict(shapes or {}), dict(dtypes or {}))
    wrt = _wrt(wrt)
    names = [n for n, _ in wrt]
    ctx = ctx if isinstance(ctx, Context) else Context(ctx) if ctx else current_context()
    if head_grads is not None:
        head_grads = list(head_grads) if isinstance(head_grads, (list, tuple)) \
            else [head_grads]
        if len(head_grads) != len(entries):
            raise MXNetError(f"grad: {len(head_grads)} head_grads for {len(entries)} heads")
    all_entries = entries + [e for g in (head_grads or []) if g is not None
                             for e in _entries_of(g)]
    nodes, shape_t = shape_table(all_entries, {k: tuple(v) for k, v in (shapes or {}).items()})
    variables = {n.name: n for n in nodes if n.op is None}
    absent = {}         # variables given as Symbols that the heads do not use: zero gradients
    for name, node in wrt:
        if name not in variables:
            if node is None:
                raise MXNetError(f"grad: {name!r} is not a variable of the heads "
                                 f"({sorted(variables)}); pass the variable Symbol to get "
                                 "its zero gradient")
            absent[name] = node
    given_t = {k: np.dtype(v) for k, v in (dtypes or {}).items()}
    _, type_t = type_table(all_entries, given_t)
    unknown = {n.name for n in nodes if n.op is None and type_t.get(n, 0) is None}
    if unknown:             # nothing determines them: float32 (MXNet's default)
        given_t.update({k: np.dtype("float32") for k in unknown})
        _, type_t = type_table(all_entries, given_t)

    # which nodes lead to a wanted variable
    wanted = {id(variables[n]) for n in names if n in variables}
    leads = set()
    for n in nodes:
        if id(n) in wanted or any(id(c) in leads for c, _ in n.inputs):
            leads.add(id(n))

    pending = {}            # (id(node), i) -> list of gradient Symbols

    def add(node, i, g):
        pending.setdefault((id(node), i), []).append(g)

    with broadcasting():
        for k, (node, i) in enumerate(entries):
            if id(node) not in leads:
                continue
            g = head_grads[k] if head_grads is not None else None
            if g is None:
                g = F.ones_like(Symbol([(node, i)]))
            add(node, i, g)
        for node in reversed(_creation_order(nodes)):
            if node.op is None or id(node) not in leads:
                continue
            n_out = node.op.output_count(node.attrs)
            got = [pending.pop((id(node), i), None) for i in range(n_out)]
            if all(g is None for g in got):
                continue
            op = node.op
            if op.gradient == NON_DIFFERENTIABLE:
                continue
            if not callable(op.gradient):
                raise MXNetError(f"grad: {op.name} (node {node.name!r}) declares no gradient")
            view = GradNode()
            view.op, view.attrs, view.context = op, node.attrs, ctx
            view.input_shapes = [_check_known(shape_t, c, i, "shape") for c, i in node.inputs]
            view.input_dtypes = [_check_known(type_t, c, i, "dtype") for c, i in node.inputs]
            view.output_shapes = [_check_known(shape_t, node, i, "shape") for i in range(n_out)]
            view.output_dtypes = [_check_known(type_t, node, i, "dtype") for i in range(n_out)]
            view.wants = [id(c) in leads for c, _ in node.inputs]
            view.inputs = [Symbol([e]) for e in node.inputs] \
                if "inputs" in op.grad_needs else None
            view.outputs = [Symbol([(node, i)]) for i in range(n_out)] \
                if "outputs" in op.grad_needs else None
            ograds = [_total(F, g) if g is not None else
                      None if op.none_ograds else
                      F.zeros(shape=view.output_shapes[i], dtype=view.output_dtypes[i],
                              ctx=ctx)
                      for i, g in enumerate(got)]
            grads = op.gradient(F, view, ograds)
            if len(grads) != len(node.inputs):
                raise MXNetError(f"grad: {op.name}'s FGradient gave {len(grads)} gradients "
                                 f"for {len(node.inputs)} inputs {list(input_names(node))}")
            for (child, i), want, g in zip(node.inputs, view.wants, grads):
                if want and g is not None and not _is_zero(g):
                    add(child, i, g)
        out = []
        for name in names:
            if name in absent:
                var = absent[name]
                shape = (shapes or {}).get(name, complete_seed_shape(var))
                if shape is None:
                    raise MXNetError(f"grad: the shape of {name!r} (not used by the heads) "
                                     "is unknown; give it with shapes= or var(shape=...)")
                dtype = (dtypes or {}).get(name, _seed_dtype(var) or np.dtype("float32"))
                out.append(F.zeros(shape=tuple(shape), dtype=dtype, ctx=ctx))
                continue
            var = variables[name]
            got = pending.get((id(var), 0))
            if got is None:
                out.append(F.zeros(shape=_check_known(shape_t, var, 0, "shape"),
                                   dtype=_check_known(type_t, var, 0, "dtype"), ctx=ctx))
            else:
                out.append(_total(F, got))
    return out


_ZERO_OPS = frozenset(("zeros_like", "zeros", "_zeros"))


def _is_zero(g):
    """True for a gradient that is zeros by construction (BlockGrad's): it is not passed on,
    so nothing upstream is computed for it (MXNet's zero propagation); an input that only
    such gradients reach gets the zeros of an unreached one."""
    from .symbol import Symbol
    return isinstance(g, Symbol) and len(g._outputs) == 1 and \
        g._outputs[0][0].op is not None and g._outputs[0][0].op.name in _ZERO_OPS


def _creation_order(nodes):
    """``nodes`` in creation order when that is an order of the graph (else as given): the
    order the autograd engine walks, so gradients summed from several users add up in the
    same order as ``mx.autograd``'s (bit for bit)."""
    by_seq = sorted(nodes, key=lambda n: n.seq)
    rank = {id(n): k for k, n in enumerate(by_seq)}
    if all(rank[id(c)] < rank[id(n)] for n in by_seq for c, _ in n.inputs):
        return by_seq
    return nodes


def _total(F, gs):
    total = gs[0]
    for g in gs[1:]:
        total = F.elemwise_add(total, g)
    return total


def evaluate(sym, ctx=None, **kwargs):
    """The outputs of ``sym`` (a list of NDArrays) for the arrays given by variable name
    (MXNet's ``Symbol.eval``): each node runs through ``mx.nd``, in the order the nodes were
created when that is an order of the graph (else depth first); a node whose
    hidden outputs a gradient graph reads (Dropout's mask, ...) runs its kernel directly to
    keep them."""
    from .. import ndarray as nd
    from .._core.dispatch import invoke, wrap
    from ..device import run_context
    from .graph import topo_order
    from ._deferred import expand_symbol
    ctx = ctx if isinstance(ctx, Context) else Context(ctx) if ctx else current_context()
    sym = expand_symbol(sym, {k: v.shape for k, v in kwargs.items()},
                        {k: v.dtype for k, v in kwargs.items()})
    nodes = topo_order(sym._outputs)
    # creation order when it is topological: the order the program that built the graph
    # made its calls, so random ops draw in the order mx.nd would (as the Executor runs)
    by_seq = sorted(nodes, key=lambda n: n.seq)
    rank = {id(n): k for k, n in enumerate(by_seq)}
    if all(rank[id(c)] < rank[id(n)] for n in by_seq for c, _ in n.inputs):
        nodes = by_seq
    hidden = set()
    for n in nodes:
        for c, i in n.inputs:
            if c.op is not None and i >= c.num_visible_outputs():
                hidden.add(id(c))
    for n, i in sym._outputs:
        if n.op is not None and i >= n.num_visible_outputs():
            hidden.add(id(n))
    from ..executor import _created_shapes
    created = _created_shapes(sym, {k: v.shape for k, v in kwargs.items()
                                    if hasattr(v, "shape")})
    values = {}
    with ctx:
        for n in nodes:
            if n.op is None:
                if n.name not in kwargs:
                    raise MXNetError(f"eval: no value given for variable {n.name!r}")
                v = kwargs[n.name]
                if not isinstance(v, nd.NDArray):
                    v = nd.array(v, ctx=ctx)
                values[id(n)] = [v.as_in_context(ctx)]
                continue
            ins = [values[id(c)][i] for c, i in n.inputs]
            attrs = n.attrs if id(n) not in created else Attrs(n.attrs, shape=created[id(n)])
            if id(n) in hidden:
                op = n.op
                rctx = run_context(ctx)
                shapes = op.infer_shape([x.shape for x in ins], attrs)
                types = op.infer_type([x._data.dtype for x in ins], attrs)
                outs = [rctx.xp.empty(tuple(s), np.dtype(t)) for s, t in zip(shapes, types)]
                op.compute[rctx.kernels](rctx, [x._data for x in ins], outs, attrs)
                values[id(n)] = [wrap(o, ctx) for o in outs]
            else:
                r = invoke(n.op, ins, attrs)
                values[id(n)] = list(r) if isinstance(r, (list, tuple)) else [r]
    return [values[id(n)][i] for n, i in sym._outputs]
