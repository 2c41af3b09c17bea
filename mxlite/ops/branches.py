"""``_cond``: if-then-else whose condition and branches are graphs (MXNet's symbolic
``contrib.cond``; ``mx.sym.contrib.cond`` builds it, MXNet's JSON stores the three graphs in
the node's ``subgraphs``).

The node's inputs are the union of what the three graphs read; ``cond_input_locs``,
``then_input_locs`` and ``else_input_locs`` say which of them each graph takes, in its own
input order. The condition graph gives one value; the branch it picks runs.

The gradient is another ``_cond`` on the same condition whose branches are the symbolic
gradients of these (``mx.sym.grad``), so it is differentiable again, to any order.
"""
from ..base import op_error
from .graph_shapes import fill_from_graphs
from .registry import REQUIRED, OpDef, Param, register

_NAME = "_cond"
_PARTS = ("cond", "then", "else")


def _graphs(attrs):
    """(condition, then, else) graphs with their input positions, checked."""
    graphs = attrs.subgraph
    if not (isinstance(graphs, tuple) and len(graphs) == 3
            and all(hasattr(g, "list_inputs") for g in graphs)):
        raise op_error(_NAME, "subgraph must be three Symbols: the condition, then, else")
    locs = (attrs.cond_input_locs, attrs.then_input_locs, attrs.else_input_locs)
    n = attrs.num_args
    for part, g, loc in zip(_PARTS, graphs, locs):
        if len(loc) != len(g.list_inputs()) or any(not 0 <= i < n for i in loc):
            raise op_error(_NAME, f"{part}_input_locs {tuple(loc)} must give one of the "
                           f"{n} inputs for each of the {part} graph's inputs "
                           f"{g.list_inputs()}")
    if len(graphs[0].list_outputs()) != 1:
        raise op_error(_NAME, "the condition graph must have one output")
    for part, g in zip(_PARTS[1:], graphs[1:]):
        if len(g.list_outputs()) != attrs.num_outputs:
            raise op_error(_NAME, f"the {part} graph has {len(g.list_outputs())} outputs; "
                           f"num_outputs is {attrs.num_outputs}")
    return list(zip(graphs, locs))


def _named(graph, loc, values):
    return dict(zip(graph.list_inputs(), (values[i] for i in loc)))


def _infer(method, what):
    def infer(values, attrs):
        (cond, cl), (then, tl), (other, el) = _graphs(attrs)
        if len(values) != attrs.num_args:
            raise op_error(_NAME, f"num_args={attrs.num_args} but {len(values)} inputs given")
        results = []
        for part, g, loc in (("then", then, tl), ("else", other, el)):
            _, out, _ = getattr(g, method)(**_named(g, loc, values))
            if out is None:
                raise op_error(_NAME, f"cannot infer the {part} branch's output {what}s")
            results.append([tuple(o) if what == "shape" else o for o in out])
        if results[0] != results[1]:
            raise op_error(_NAME, f"the branches give outputs of different {what}s: then "
                           f"{results[0]}, else {results[1]}")
        _, pred, _ = getattr(cond, method)(**_named(cond, cl, values))
        if what == "shape" and pred is not None and _size(pred[0]) != 1:
            raise op_error(_NAME, f"the condition must be one value, got shape {pred[0]}")
        return results[0]
    return infer


def _backward_shape(in_shapes, out_shapes, attrs):
    """Unknown inputs (a weight only a branch reads) from the three graphs' own inference
    (``graph_shapes``)."""
    return fill_from_graphs(in_shapes, _graphs(attrs))


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _compute(rctx, ins, outs, attrs):
    from .._core.dispatch import wrap          # ops/ is below ndarray/ and symbol/:
    from ..ndarray.ndarray import tape_state    # looked up at run time
    from ..symbol.grad import evaluate
    (cond, cl), (then, tl), (other, el) = _graphs(attrs)
    ctx = rctx.ctx
    values = [wrap(x, ctx) for x in ins]
    prev = tape_state.recording
    tape_state.recording = False        # the node is what the tape records
    try:
        pred = evaluate(cond, ctx, **_named(cond, cl, values))[0]
        graph, loc = (then, tl) if bool(pred.asnumpy().reshape(-1)[0]) else (other, el)
        result = evaluate(graph, ctx, **_named(graph, loc, values))
    finally:
        tape_state.recording = prev
    for out, r in zip(outs, result):
        rctx.xp.copyto(out, r._data)


def _gradient(F, node, ograds):
    """The branch taken is a function of the inputs it reads: the gradient is a ``_cond``
    on the same condition whose branches give each input's gradient (zeros for inputs the
    branch does not read)."""
    from .. import symbol as S          # ops/ is below symbol/: looked up at run time
    attrs = node.attrs
    (cond, cl), (then, tl), (other, el) = _graphs(attrs)
    n = attrs.num_args
    level = 0
    names = set().union(*(g.list_inputs() for g in (cond, then, other)))
    while any(x.startswith(f"_grad{level}_") for x in names):
        level += 1
    p = f"_grad{level}_"
    ins = [S.var(f"{p}in{i}", shape=tuple(s), dtype=d)
           for i, (s, d) in enumerate(zip(node.input_shapes, node.input_dtypes))]
    heads = [S.var(f"{p}head{j}", shape=tuple(s), dtype=d)
             for j, (s, d) in enumerate(zip(node.output_shapes, node.output_dtypes))]

    def branch_gradient(graph, loc):
        """The gradient of every node input through ``graph``, a graph over ``ins`` and
        ``heads``."""
        inner = graph.list_inputs()
        shapes = {nm: tuple(node.input_shapes[i]) for nm, i in zip(inner, loc)}
        dtypes = {nm: node.input_dtypes[i] for nm, i in zip(inner, loc)}
        shapes.update({h.name: tuple(s) for h, s in zip(heads, node.output_shapes)})
        dtypes.update({h.name: d for h, d in zip(heads, node.output_dtypes)})
        vjp = S.grad(graph, inner, head_grads=heads, shapes=shapes, dtypes=dtypes,
                     ctx=node.context)
        total = [S.zeros_like(x) for x in ins]
        for nm, i, g in zip(inner, loc, vjp):
            total[i] = total[i] + g
        # the graph read its inputs under its own names: rename them to ins[i]
        return _renamed(S, S.Group(total), {nm: ins[i] for nm, i in zip(inner, loc)})

    pred = _renamed(S, cond, {nm: ins[i] for nm, i in zip(cond.list_inputs(), cl)})
    then_g, else_g = branch_gradient(then, tl), branch_gradient(other, el)
    args = list(node.inputs) + list(ograds[:attrs.num_outputs])
    order = [v.name for v in ins] + [h.name for h in heads]

    def locs(g):
        return tuple(order.index(nm) for nm in g.list_inputs())
    result = F._internal._cond(
        *args, subgraph=(pred, then_g, else_g), num_args=len(args), num_outputs=n,
        cond_input_locs=locs(pred), then_input_locs=locs(then_g), else_input_locs=locs(else_g))
    result = result if isinstance(result, (list, tuple)) else (
        [result] if n == 1 or not hasattr(result, "list_outputs")
        else [result[i] for i in range(n)])
    return [g if want else None for g, want in zip(result, node.wants)]


def _renamed(S, graph, mapping):
    """``graph`` with its variables named in ``mapping`` replaced by the given Symbols
    (nodes that change are copied; ``graph`` is left as it is)."""
    from ..symbol.graph import SymNode      # ops/ is below symbol/
    by_name = {nm: sym._outputs[0] for nm, sym in mapping.items()}
    copies = {}

    def entry(e):
        nd, i = e
        if nd.op is None:
            return by_name.get(nd.name, e)
        if id(nd) not in copies:
            c = SymNode(nd.op, nd.name, nd.attrs, [entry(x) for x in nd.inputs],
                        nd.user_attrs, nd.given)
            c.seq = nd.seq
            copies[id(nd)] = c
        return copies[id(nd)], i
    return S.Symbol([entry(e) for e in graph._outputs])


register(OpDef(
    _NAME, inputs=("data",), variadic=True, key_var_num_args="num_args",
    params=(Param("subgraph", "any", REQUIRED, "(condition, then, else) Symbols"),
            Param("num_args", "int", REQUIRED, "number of inputs"),
            Param("num_outputs", "int", REQUIRED, "number of outputs of each branch"),
            Param("cond_input_locs", "shape", REQUIRED, "inputs the condition reads"),
            Param("then_input_locs", "shape", REQUIRED, "inputs the then branch reads"),
            Param("else_input_locs", "shape", REQUIRED, "inputs the else branch reads")),
    infer_shape=_infer("infer_shape", "shape"), backward_shape=_backward_shape,
    infer_type=_infer("infer_type", "dtype"), compute={"cpu": _compute},
    gradient=_gradient, grad_needs=("inputs",), num_outputs=lambda attrs: attrs.num_outputs,
    doc="""If-then-else over graphs: what ``mx.sym.contrib.cond`` builds (see there). Its
gradient is a ``_cond`` too, differentiable again."""))
