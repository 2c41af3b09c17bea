"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: MXNet's symbolic loops and
branch, one ``_foreach``, ``_while_loop`` or ``_cond`` node whose body (branches) is a graph. The user's function runs once (on
placeholder variables for a loop); what it reads from outside (weights, values computed
before) becomes the node's inputs."""
from .._nested import flatten, regroup as _regroup
from ..base import MXNetError
from . import graph as _graph
from .graph import SymNode, topo_order
from .naming import NameManager
from .symbol import Symbol, var

__all__ = ["foreach", "cond", "while_loop"]


def _flatten(value, what):
    flat, structure = flatten(value, what, Symbol)
    for x in flat:
        if len(x._outputs) != 1:
            raise MXNetError(f"{what}: a Symbol of {len(x._outputs)} outputs; pass a list")
    return flat, structure


def _cut(entries, start, prefix):
    """The body graph of ``entries`` with every operator node made before the body ran
    (``seq < start``: computed outside the loop) replaced by a new variable; returns the
    body's outputs and ``{variable name: outer entry}`` for those cuts."""
    copies, cuts = {}, {}

    def entry(e):
        node, i = e
        if node.op is not None and node.seq < start:
            key = (id(node), i)
            if key not in cuts:
                cuts[key] = (SymNode(None, f"{prefix}_in{len(cuts)}"), e)
            return cuts[key][0], 0
        return rebuilt(node), i

    def rebuilt(node):
        if node.op is None:
            return node
        if id(node) not in copies:
            copy = SymNode(node.op, node.name, node.attrs, [entry(e) for e in node.inputs],
                           node.user_attrs, node.given)
            copy.seq = node.seq
            copies[id(node)] = copy
        return copies[id(node)]

    outs = [entry(e) for e in entries]
    return outs, {v.name: outer for v, outer in cuts.values()}


def foreach(body, data, init_states, name="foreach"):
    """Run ``body`` over axis 0 of ``data`` as one graph node (MXNet's
    ``mx.sym.contrib.foreach``): ``out_t, states = body(data[t], states)`` from
    ``init_states``. Returns ``(outputs, states)``: each output stacked over the steps on
    axis 0, in the structure ``body`` returned, and the final states.

    ``body`` runs once, on placeholder variables, to build the loop's graph; it may read
    Symbols from outside (weights, values computed before the loop), which the node takes
    as inputs. Every sequence and state must be used by the body. The node's gradient is a
    loop too, differentiable again to any order.
    """
    flat_data, data_fmt = _flatten(data, "foreach: data")
    flat_states, state_fmt = _flatten(init_states, "foreach: init_states")
    name = NameManager.current.get(None, name)      # foreach0, foreach1, ... as MXNet
    start = next(_graph._created)       # nodes made from here on belong to the body
    data_vars = [var(f"{name}_data{i}") for i in range(len(flat_data))]
    state_vars = [var(f"{name}_state{k}") for k in range(len(flat_states))]
    outs, new_states = body(_regroup(data_vars, data_fmt), _regroup(state_vars, state_fmt))
    flat_out, out_fmt = _flatten(outs, "foreach: body's outputs")
    flat_new, _ = _flatten(new_states, "foreach: body's states")
    if len(flat_new) != len(flat_states):
        raise MXNetError(f"foreach: the body returned {len(flat_new)} states for "
                         f"{len(flat_states)} initial states")
    heads, cuts = _cut([s._outputs[0] for s in flat_out + flat_new], start, name)
    subgraph = Symbol(heads)
    names = subgraph.list_inputs()
    unused = [v.name for v in data_vars + state_vars if v.name not in names]
    if unused:
        raise MXNetError(f"foreach: the body must use every sequence and state; it does not "
                         f"read {unused}")
    placeholders = {v.name for v in data_vars + state_vars}
    rest = [n for n in names if n not in placeholders]
    outer_vars = {n.name: n for n in topo_order(heads) if n.op is None}
    remain = [Symbol([cuts[n]]) if n in cuts else Symbol([(outer_vars[n], 0)]) for n in rest]
    from .. import symbol as S
    node = S._internal._foreach(
        *flat_data, *flat_states, *remain, subgraph=subgraph,
        num_args=len(flat_data) + len(flat_states) + len(remain),
        num_outputs=len(flat_out) + len(flat_new), num_out_data=len(flat_out),
        in_data_locs=tuple(names.index(v.name) for v in data_vars),
        in_state_locs=tuple(names.index(v.name) for v in state_vars),
        remain_locs=tuple(names.index(n) for n in rest), name=name)
    n_out = len(flat_out)
    outputs = [node[j] for j in range(n_out)]
    states = [node[n_out + k] for k in range(len(flat_new))]
    return _regroup(outputs, out_fmt), _regroup(states, state_fmt)


def _branch_graph(make, prefix, what):
    """A graph of ``make()``'s outputs with what it reads from outside cut into variables:
    ``(graph, {variable name: outer entry}, output structure)``. An output that is an input
    goes through ``identity``, so every head is an operator (as MXNet builds it)."""
    from .. import symbol as S
    start = next(_graph._created)
    flat, fmt = _flatten(make(), what)
    heads, cuts = _cut([s._outputs[0] for s in flat], start, prefix)
    for k, (node, i) in enumerate(heads):
        if node.op is None:
            heads[k] = S.identity(Symbol([(node, i)]))._outputs[0]
    return Symbol(heads), cuts, fmt


def _union(graphs, placeholders):
    """The node inputs of ``graphs`` (each ``(graph, cuts)``) and each graph's input
    positions among them: a placeholder stands for its outer Symbol, a cut for the outer
    value, any other variable for itself; one input per distinct value, and one per
    placeholder (loop variables that start from the same Symbol are still two variables)."""
    inputs, keys, all_locs = [], {}, []
    for graph, cuts in graphs:
        outer = {n.name: n for n in topo_order(graph._outputs) if n.op is None}
        locs = []
        for nm in graph.list_inputs():
            if nm in placeholders:
                entry = placeholders[nm]._outputs[0]
            else:
                entry = cuts[nm] if nm in cuts else (outer[nm], 0)
            key = ("placeholder", nm) if nm in placeholders else (id(entry[0]), entry[1])
            if key not in keys:
                keys[key] = len(inputs)
                inputs.append(Symbol([entry]))
            locs.append(keys[key])
        all_locs.append(tuple(locs))
    return inputs, all_locs


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run ``step_output, loop_vars = func(*loop_vars)`` while ``cond(*loop_vars)`` holds, at
    most ``max_iterations`` times, as one graph node (MXNet's
    ``mx.sym.contrib.while_loop``). Returns ``(outputs, loop_vars)``: each step output
    stacked on axis 0 with ``max_iterations`` rows (the rows after the last step are zeros;
    MXNet left them undefined) and the final loop variables. Both functions run once, on
    placeholder variables, and may read Symbols from outside. The node's gradient is a loop
    too, differentiable again."""
    if max_iterations is None:
        raise MXNetError("while_loop: max_iterations must be given")
    max_iterations = int(max_iterations)
    flat_vars, var_fmt = _flatten(loop_vars, "while_loop: loop_vars")
    if not flat_vars:
        raise MXNetError("while_loop: loop_vars must hold at least one Symbol")
    name = NameManager.current.get(None, name)
    holders = [var(f"{name}_var{k}") for k in range(len(flat_vars))]
    args = _regroup(holders, var_fmt)
    args = args if isinstance(args, list) else [args]
    cond_g, cond_cuts, _ = _branch_graph(lambda: cond(*args), f"{name}_cond",
                                         "while_loop: cond's value")
    if len(cond_g.list_outputs()) != 1:
        raise MXNetError("while_loop: cond must give one Symbol")
    out_fmt = {}

    def step():
        outs, new_vars = func(*args)
        flat_out, out_fmt["fmt"] = _flatten(outs if outs is not None else [],
                                            "while_loop: func's step output")
        flat_new, _ = _flatten(new_vars, "while_loop: func's loop variables")
        if len(flat_new) != len(flat_vars):
            raise MXNetError(f"while_loop: func returned {len(flat_new)} loop variables for "
                             f"{len(flat_vars)}")
        out_fmt["n"] = len(flat_out)
        return flat_out + flat_new
    func_g, func_cuts, _ = _branch_graph(step, f"{name}_func", "while_loop: func's outputs")
    names = func_g.list_inputs()
    unused = [h.name for h in holders if h.name not in names]
    if unused:
        raise MXNetError(f"while_loop: func must use every loop variable; it does not read "
                         f"{unused}")
    placeholders = dict(zip((h.name for h in holders), flat_vars))
    inputs, (cond_locs, func_locs) = _union([(cond_g, cond_cuts), (func_g, func_cuts)],
                                            placeholders)
    from .. import symbol as S
    n_out = out_fmt["n"]
    node = S._internal._while_loop(
        *inputs, subgraph=(cond_g, func_g), num_args=len(inputs),
        num_outputs=n_out + len(flat_vars), num_out_data=n_out,
        max_iterations=max_iterations, cond_input_locs=cond_locs, func_input_locs=func_locs,
        func_var_locs=tuple(names.index(h.name) for h in holders), name=name)
    outputs = [node[j] for j in range(n_out)]
    final = [node[n_out + k] for k in range(len(flat_vars))]
    return (_regroup(outputs, out_fmt["fmt"]) if n_out else []), _regroup(final, var_fmt)


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` where the one-element ``pred`` is non-zero, else ``else_func()``, as
    one graph node (MXNet's ``mx.sym.contrib.cond``); both give outputs of the same shapes
    and dtypes. Only the branch taken runs. The node's gradient is a ``_cond`` too,
    differentiable again."""
    name = NameManager.current.get(None, name)
    graphs = [_branch_graph(lambda: pred, f"{name}_pred", "cond: pred"),
              _branch_graph(then_func, f"{name}_then", "cond: then_func's outputs"),
              _branch_graph(else_func, f"{name}_else", "cond: else_func's outputs")]
    n_then, n_else = (len(g.list_outputs()) for g, _, _ in graphs[1:])
    if len(graphs[0][0].list_outputs()) != 1:
        raise MXNetError("cond: pred must be one Symbol output")
    if n_then != n_else:
        raise MXNetError(f"cond: then_func gives {n_then} outputs, else_func {n_else}")
    inputs, all_locs = _union([(g, cuts) for g, cuts, _ in graphs], {})
    from .. import symbol as S
    node = S._internal._cond(
        *inputs, subgraph=tuple(g for g, _, _ in graphs), num_args=len(inputs),
        num_outputs=n_then, cond_input_locs=all_locs[0], then_input_locs=all_locs[1],
        else_input_locs=all_locs[2], name=name)
    outputs = [node[j] for j in range(n_then)] if n_then > 1 else [node]
    return _regroup(outputs, graphs[1][2])
