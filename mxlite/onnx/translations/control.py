"""The operators whose bodies are graphs: ``_foreach`` as ONNX Scan, ``_while_loop`` as Loop,
``_cond`` as If, each body or branch exported as an ONNX graph attribute (``export.Subgraph``;
nested loops and branches nest the same way). A body reads what it takes from outside the
loop (weights, values computed before it) by name from the enclosing graph, as ONNX allows.
"""
import numpy as np

from ..table import translates


def _export():
    # export.py imports this package while it loads: its helpers are looked up at run time
    from .. import export
    return export


def _shape(ctx, shape):
    """A subgraph value's declared shape: None (unknown) under a dynamic batch axis, which
    the loop's static shapes would contradict."""
    return None if ctx.dynamic else tuple(shape)


def _first_as_bool(ctx, value):
    """The first element of ``value`` as a (1,) bool (mxlite reads a condition's first
    element and takes any non-zero value, NaN included, as true)."""
    flat = ctx.node("Reshape", [value, ctx.int64s([-1])])
    first = ctx.node("Slice", [flat, ctx.int64s([0]), ctx.int64s([1])])    # shape (1,)
    return ctx.cast(first, np.bool_)


def _graph_io(graph, locs):
    """{variable of ``graph``: node input position} for a graph reading the node's inputs
    at ``locs`` in its own input order."""
    return dict(zip(graph.list_inputs(), locs))


# ---- _foreach -----------------------------------------------------------------------------
@translates("_foreach", onnx_ops=["Scan", "Identity"], opset=16,
            notes="ONNX Scan over axis 0, the body a graph attribute; the hidden per-step "
                  "states (what the gradient reads) are extra scan outputs")
def _foreach(ctx, node, ins, outs):
    """Scan's body takes the states then one step of each sequence and gives the new states
    then the per-step outputs; mxlite's body gives the per-step outputs first. The hidden
    outputs (each state as it entered each step) are the body's state inputs, scanned."""
    a = node.attrs
    body = a.subgraph
    names = body.list_inputs()
    n_data, n_states = len(a.in_data_locs), len(a.in_state_locs)
    n_out = a.num_out_data
    sub = _export().Subgraph(ctx, "foreach_body")
    bound, shapes, dtypes = {}, {}, {}
    state_names = []
    for k, loc in enumerate(a.in_state_locs):       # Scan's body: the states first
        entry = node.inputs[n_data + k]
        shapes[names[loc]] = ctx.shape(entry)
        dtypes[names[loc]] = ctx.dtype(entry)
        bound[names[loc]] = sub.input(f"{node.name}_state{k}", ctx.dtype(entry),
                                      _shape(ctx, ctx.shape(entry)))
        state_names.append(names[loc])
    for k, loc in enumerate(a.in_data_locs):
        entry = node.inputs[k]
        shapes[names[loc]] = ctx.shape(entry)[1:]
        dtypes[names[loc]] = ctx.dtype(entry)
        bound[names[loc]] = sub.input(f"{node.name}_step{k}", ctx.dtype(entry),
                                      _shape(ctx, ctx.shape(entry)[1:]))
    for k, loc in enumerate(a.remain_locs):         # loop-invariant: read from outside
        entry = node.inputs[n_data + n_states + k]
        shapes[names[loc]] = ctx.shape(entry)
        dtypes[names[loc]] = ctx.dtype(entry)
        bound[names[loc]] = ins[n_data + n_states + k]
    results = sub.emit(body, bound, shapes, dtypes)
    for k in range(n_states):
        j = n_out + k
        sub.output(results[j], ctx.dtype((node, j)), _shape(ctx, ctx.shape((node, j))))
    for j in range(n_out):
        sub.output(results[j], ctx.dtype((node, j)), _shape(ctx, ctx.shape((node, j))[1:]))
    for k, nm in enumerate(state_names):            # the hidden history
        sub.output(bound[nm], dtypes[nm], _shape(ctx, shapes[nm]))
    history = list(outs[a.num_outputs:])
    ctx.node("Scan", list(ins[n_data:n_data + n_states]) + list(ins[:n_data]),
             list(outs[n_out:a.num_outputs]) + list(outs[:n_out]) + history,
             body=sub.proto(), num_scan_inputs=n_data)


# ---- _while_loop --------------------------------------------------------------------------
@translates("_while_loop", onnx_ops=["Loop", "Pad", "Shape", "Reshape", "Cast",
                                     "Sub", "Concat", "Add", "Slice", "Identity"], opset=16,
            notes="ONNX Loop (at most max_iterations steps while the condition holds), the "
                  "condition evaluated before the loop and at the end of every step; the "
                  "step outputs padded with zero rows to max_iterations as mxlite's")
def _while_loop(ctx, node, ins, outs):
    """Loop runs a step while its trip count and condition allow: the condition on the
    initial loop variables is computed before the Loop, the body computes the step then the
    condition on the new variables. A node input the loop carries (a loop variable) is read
    by both graphs as its current value, any other from outside, as mxlite evaluates them.
    The scanned step outputs (and with ``keep_history`` each variable as it entered each
    step, and the step count) are padded to ``max_iterations`` rows of zeros."""
    a = node.attrs
    cond, func = a.subgraph
    n_out, m = a.num_out_data, a.max_iterations
    var_inputs = [a.func_input_locs[j] for j in a.func_var_locs]
    n_vars = len(var_inputs)
    keep = a.keep_history
    exp = _export()

    def shapes_of(graph, locs):
        return ({nm: ctx.shape(node.inputs[i]) for nm, i in _graph_io(graph, locs).items()},
                {nm: ctx.dtype(node.inputs[i]) for nm, i in _graph_io(graph, locs).items()})

    def bound_to(graph, locs, current):
        return {nm: current.get(i, ins[i]) for nm, i in _graph_io(graph, locs).items()}

    c_shapes, c_dtypes = shapes_of(cond, a.cond_input_locs)
    pred = exp.emit_graph(ctx, cond, bound_to(cond, a.cond_input_locs, {}), c_shapes,
                          c_dtypes)[0]
    start = _first_as_bool(ctx, pred)
    sub = exp.Subgraph(ctx, "while_body")
    sub.input(f"{node.name}_iter", np.int64, ())
    sub.input(f"{node.name}_cond", np.bool_, None)
    current = {}
    for k, i in enumerate(var_inputs):
        current[i] = sub.input(f"{node.name}_var{k}", ctx.dtype(node.inputs[i]),
                               _shape(ctx, ctx.shape(node.inputs[i])))
    if keep:
        count = sub.input(f"{node.name}_count", np.int64, (1,))
    f_shapes, f_dtypes = shapes_of(func, a.func_input_locs)
    results = sub.emit(func, bound_to(func, a.func_input_locs, current), f_shapes, f_dtypes)
    after = {i: results[n_out + k] for k, i in enumerate(var_inputs)}
    again = sub.emit(cond, bound_to(cond, a.cond_input_locs, after), c_shapes, c_dtypes)[0]
    sub.output(_first_as_bool(sub.scope, again), np.bool_, None)    # (1,), as cond
    for k, i in enumerate(var_inputs):
        sub.output(after[i], ctx.dtype(node.inputs[i]), _shape(ctx, ctx.shape(node.inputs[i])))
    if keep:
        sub.output(sub.scope.node("Add", [count, ctx.int64s([1], base="one")]), np.int64, (1,))
    for j in range(n_out):
        sub.output(results[j], ctx.dtype((node, j)), _shape(ctx, ctx.shape((node, j))[1:]))
    if keep:
        for k, i in enumerate(var_inputs):
            sub.output(current[i], ctx.dtype(node.inputs[i]),
                       _shape(ctx, ctx.shape(node.inputs[i])))
    finals = list(outs[n_out:a.num_outputs])
    scanned = [ctx.fresh(f"{node.name}_rows") for _ in range(n_out + (n_vars if keep else 0))]
    carried = [ins[i] for i in var_inputs]
    if keep:
        carried.append(ctx.int64s([0], base="zero"))
        finals.append(outs[-1])
    ctx.node("Loop", [ctx.const(np.int64(m), base="max_iterations"), start] + carried,
             finals + scanned, body=sub.proto())
    padded = list(range(n_out)) + (list(range(a.num_outputs, a.num_outputs + n_vars))
                                   if keep else [])
    for rows, j in zip(scanned, padded):
        _pad_rows(ctx, rows, outs[j], m, len(ctx.shape((node, j))))


def _pad_rows(ctx, rows, out, m, rank):
    """``rows`` (the steps that ran, stacked) with zero rows after them to ``m`` rows."""
    ran = ctx.node("Slice", [ctx.node("Shape", [rows]), ctx.int64s([0]), ctx.int64s([1])])
    missing = ctx.node("Sub", [ctx.int64s([m], base="max_iterations"), ran])
    pads = [ctx.int64s([0] * rank, base="zeros"), missing]       # ONNX: begins, then ends
    if rank > 1:
        pads.append(ctx.int64s([0] * (rank - 1), base="zeros"))
    ctx.node("Pad", [rows, ctx.node("Concat", pads, axis=0)], [out])


# ---- _cond --------------------------------------------------------------------------------
@translates("_cond", onnx_ops=["If", "Reshape", "Slice", "Cast", "Identity"], opset=16,
            notes="ONNX If on the condition graph's first element, each branch a graph "
                  "attribute reading the node's inputs from outside")
def _cond(ctx, node, ins, outs):
    """The condition graph is written before the If; each branch is a graph without inputs
    that reads the node's inputs from the enclosing graph."""
    a = node.attrs
    exp = _export()
    graphs = list(zip(a.subgraph, (a.cond_input_locs, a.then_input_locs, a.else_input_locs)))

    def parts(graph, locs):
        io = _graph_io(graph, locs)
        return ({nm: ins[i] for nm, i in io.items()},
                {nm: ctx.shape(node.inputs[i]) for nm, i in io.items()},
                {nm: ctx.dtype(node.inputs[i]) for nm, i in io.items()})

    pred = exp.emit_graph(ctx, graphs[0][0], *parts(*graphs[0]))[0]
    branches = {}
    for key, (graph, locs) in zip(("then_branch", "else_branch"), graphs[1:]):
        sub = exp.Subgraph(ctx, key)
        results = sub.emit(graph, *parts(graph, locs))
        for j, r in enumerate(results):
            sub.output(r, ctx.dtype((node, j)), _shape(ctx, ctx.shape((node, j))))
        branches[key] = sub.proto()
    ctx.node("If", [_first_as_bool(ctx, pred)], list(outs), **branches)
