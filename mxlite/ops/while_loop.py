"""``_while_loop``: a loop that runs while a condition graph holds, at most
``max_iterations`` times (MXNet's symbolic ``contrib.while_loop``; ``mx.sym.contrib.while_loop``
builds it, MXNet's JSON stores the condition and the body in the node's ``subgraphs``).

The node's inputs are the union of what the two graphs read (``cond_input_locs``,
``func_input_locs``); ``func_var_locs`` says which of the body's inputs are the loop
variables. The body's outputs are ``num_out_data`` step outputs (stacked, ``max_iterations``
rows; the rows after the last step are zeros: MXNet left them undefined), then the new loop
variables. With ``keep_history`` (mxlite's) the node also gives each loop variable as it
entered each step and the number of steps run: what the gradient reads. The gradient runs
the loop again with it (a forward pass keeps no history: a loop over a large variable costs
``max_iterations`` copies of it only when differentiated).

The gradient is a ``_foreach`` over the steps in reverse whose body is the symbolic
gradient of this body, masked to the steps that ran: differentiable again, to any order.
It replays ``max_iterations`` steps, so a loop bounded only by its condition
(``max_iterations=UNBOUNDED``, as the ONNX import gives a Loop without a constant trip
count) runs forward only: its gradient is an MXNetError.
"""
from ..base import op_error
from .graph_shapes import fill_from_graphs
from .registry import REQUIRED, OpDef, Param, register

_NAME = "_while_loop"

#: max_iterations of a loop that ends only on its condition: it runs, it is not differentiated
UNBOUNDED = 2 ** 31 - 1


def _graphs(attrs):
    """(condition, body) graphs, checked against the node's parameters; returns them with
    the positions of the loop variables among the node's inputs."""
    graphs = attrs.subgraph
    if not (isinstance(graphs, tuple) and len(graphs) == 2
            and all(hasattr(g, "list_inputs") for g in graphs)):
        raise op_error(_NAME, "subgraph must be two Symbols: the condition and the body")
    cond, func = graphs
    n = attrs.num_args
    for part, g, loc in (("cond", cond, attrs.cond_input_locs),
                         ("func", func, attrs.func_input_locs)):
        if len(loc) != len(g.list_inputs()) or any(not 0 <= i < n for i in loc):
            raise op_error(_NAME, f"{part}_input_locs {tuple(loc)} must give one of the {n} "
                           f"inputs for each of the {part} graph's inputs {g.list_inputs()}")
    n_vars = attrs.num_outputs - attrs.num_out_data
    if len(attrs.func_var_locs) != n_vars or any(
            not 0 <= i < len(attrs.func_input_locs) for i in attrs.func_var_locs):
        raise op_error(_NAME, f"func_var_locs {tuple(attrs.func_var_locs)} must place each "
                       f"of the {n_vars} loop variables among the body's inputs")
    if len(func.list_outputs()) != attrs.num_outputs or len(cond.list_outputs()) != 1:
        raise op_error(_NAME, f"the body must give num_outputs={attrs.num_outputs} outputs "
                       "and the condition one")
    if attrs.max_iterations < 0:
        raise op_error(_NAME, f"max_iterations must be >= 0, got {attrs.max_iterations}")
    var_inputs = [attrs.func_input_locs[j] for j in attrs.func_var_locs]
    if len(set(var_inputs)) != len(var_inputs):
        raise op_error(_NAME, f"loop variables share node inputs {tuple(var_inputs)} "
                       "(func_input_locs at func_var_locs): each loop variable needs an "
                       "input of its own")
    return cond, func, var_inputs


def _named(graph, loc, values):
    return dict(zip(graph.list_inputs(), (values[i] for i in loc)))


def _infer(method, what):
    def infer(values, attrs):
        cond, func, var_inputs = _graphs(attrs)
        if len(values) != attrs.num_args:
            raise op_error(_NAME, f"num_args={attrs.num_args} but {len(values)} inputs given")
        _, out, _ = getattr(func, method)(**_named(func, attrs.func_input_locs, values))
        if out is None:
            raise op_error(_NAME, f"cannot infer the body's output {what}s")
        n_out = attrs.num_out_data
        for k, i in enumerate(var_inputs):
            if out[n_out + k] != values[i]:
                raise op_error(_NAME, f"loop variable {k} enters the body with {what} "
                               f"{values[i]} and leaves it with {out[n_out + k]}")
        keep = attrs.keep_history
        if what == "shape":
            m = attrs.max_iterations
            return ([(m,) + tuple(s) for s in out[:n_out]] + [tuple(s) for s in out[n_out:]]
                    + ([(m,) + tuple(values[i]) for i in var_inputs] + [(1,)] if keep
                       else []))
        return list(out) + ([values[i] for i in var_inputs] + [_int64()] if keep else [])
    return infer


def _backward_shape(in_shapes, out_shapes, attrs):
    """Unknown inputs (a weight only the condition or the body reads) from those graphs'
    own inference (``graph_shapes``)."""
    cond, func, _ = _graphs(attrs)
    return fill_from_graphs(in_shapes, [(cond, attrs.cond_input_locs),
                                        (func, attrs.func_input_locs)])


def _int64():
    import numpy as np
    return np.dtype("int64")


def _compute(rctx, ins, outs, attrs):
    from .._core.dispatch import wrap          # ops/ is below ndarray/ and symbol/:
    from ..ndarray.ndarray import tape_state    # looked up at run time
    from ..symbol.grad import evaluate
    cond, func, var_inputs = _graphs(attrs)
    xp, ctx, n_out = rctx.xp, rctx.ctx, attrs.num_out_data
    n_vars = len(var_inputs)
    values = [wrap(x, ctx) for x in ins]
    history = outs[attrs.num_outputs:attrs.num_outputs + n_vars] if attrs.keep_history else []
    for out in outs[:n_out] + history:
        xp.fill_zero(out)
    steps = 0
    prev = tape_state.recording
    tape_state.recording = False        # the node is what the tape records
    try:
        while steps < attrs.max_iterations:
            pred = evaluate(cond, ctx, **_named(cond, attrs.cond_input_locs, values))[0]
            if not bool(pred.asnumpy().reshape(-1)[0]):
                break
            for k, h in enumerate(history):
                xp.copyto(h[steps], values[var_inputs[k]]._data)
            result = evaluate(func, ctx, **_named(func, attrs.func_input_locs, values))
            for j in range(n_out):
                xp.copyto(outs[j][steps], result[j]._data)
            values = list(values)
            for k, i in enumerate(var_inputs):
                values[i] = result[n_out + k]     # fresh arrays: nothing writes them
            steps += 1
    finally:
        tape_state.recording = prev
    for k, i in enumerate(var_inputs):
        xp.copyto(outs[n_out + k], values[i]._data)
    if attrs.keep_history:
        outs[-1].fill(steps)


def _gradient(F, node, ograds):
    """With v_t the loop variables entering step t (the loop run again with
    ``keep_history``), r the other inputs of the body and (o_t, v_{t+1}) = func(v_t, r) for
    the ``steps`` steps that ran, in reverse order: (gv_t, gr_t) = VJP of func at (v_t, r)
    of (g o_t, g v_{t+1}) (+ the head gradient of history row t on a node that gives it);
    g r += gr_t. One ``_foreach`` over the reversed rows, masked to the steps that ran
    (``where``: a step that did not run passes the gradient on untouched)."""
    from .. import symbol as S          # ops/ is below symbol/: looked up at run time
    attrs = node.attrs
    cond, func, var_inputs = _graphs(attrs)
    n_out, m = attrs.num_out_data, attrs.max_iterations
    if m >= UNBOUNDED:
        raise op_error(_NAME, f"max_iterations={m}: a loop bounded only by its condition is "
                       "not differentiable (its gradient replays max_iterations steps and "
                       "keeps a copy of the loop variables for each); give the loop a tighter "
                       "max_iterations")
    n_vars = len(var_inputs)
    names = func.list_inputs()
    loc = list(attrs.func_input_locs)
    var_names = [names[j] for j in attrs.func_var_locs]
    rest = [(nm, i) for nm, i in zip(names, loc) if nm not in var_names]
    shapes = {nm: tuple(node.input_shapes[i]) for nm, i in zip(names, loc)}
    dtypes = {nm: node.input_dtypes[i] for nm, i in zip(names, loc)}
    level = 0
    while any(x.startswith(f"_grad{level}_") for x in names):
        level += 1
    p = f"_grad{level}_"
    step_shapes = [tuple(s)[1:] for s in node.output_shapes[:n_out]]
    head = [S.var(f"{p}out{j}", shape=s, dtype=node.output_dtypes[j])
            for j, s in enumerate(step_shapes)]
    carry = [S.var(f"{p}var{k}", shape=shapes[nm], dtype=dtypes[nm])
             for k, nm in enumerate(var_names)]
    # a node that gives its history (the gradient's own rerun) takes gradients on it too
    keep = attrs.keep_history
    extra = [S.var(f"{p}history{k}", shape=shapes[nm], dtype=dtypes[nm])
             for k, nm in enumerate(var_names)] if keep else []
    acc = [S.var(f"{p}rest{q}", shape=shapes[nm], dtype=dtypes[nm])
           for q, (nm, _) in enumerate(rest)]
    mask = S.var(f"{p}ran", shape=(1,), dtype=dtypes[var_names[0]] if var_names else None)
    vjp = S.grad(func, names, head_grads=head + carry,
                 shapes={**shapes, **{v.name: s for v, s in zip(head, step_shapes)}},
                 dtypes={**dtypes, **{v.name: d for v, d in zip(head, node.output_dtypes)}},
                 ctx=node.context)
    by_name = dict(zip(names, vjp))

    def masked(new, old):
        return S.where(S.broadcast_like(mask, new), new, old)
    back = S.Group(
        [masked(by_name[nm] + extra[k] if keep else by_name[nm], c)
         for k, (nm, c) in enumerate(zip(var_names, carry))]
        + [a + masked(by_name[nm], S.zeros_like(a)) for (nm, _), a in zip(rest, acc)])
    seq = var_names + [v.name for v in head + extra] + [mask.name]
    init = [v.name for v in carry + acc]
    from .loops import _using_all
    back = _using_all(S, back, seq + init)
    back_names = back.list_inputs()
    rest2 = [nm for nm in back_names if nm not in seq and nm not in init]
    rest_values = {nm: node.inputs[i] for nm, i in rest}
    given = {k: attrs[k] for k in ("num_outputs", "num_out_data", "max_iterations",
                                   "cond_input_locs", "func_input_locs", "func_var_locs")}
    outs = F._internal._while_loop(*node.inputs, subgraph=attrs.subgraph,
                                   num_args=attrs.num_args, keep_history=True, **given)
    from .loops import _outputs_of
    outs = _outputs_of(outs, attrs.num_outputs + n_vars + 1)   # the loop again, with history
    ran = F.reshape(F.broadcast_lesser(
        F.arange(0, m, dtype=dtypes[var_names[0]], ctx=node.context),
        F.cast(outs[attrs.num_outputs + n_vars], dtype=dtypes[var_names[0]])), shape=(m, 1))
    sequences = (list(outs[attrs.num_outputs:attrs.num_outputs + n_vars])
                 + list(ograds[:n_out])
                 + (list(ograds[attrs.num_outputs:attrs.num_outputs + n_vars]) if keep
                    else []) + [ran])
    inputs = ([F.reverse(x, axis=0) for x in sequences]
              + list(ograds[n_out:attrs.num_outputs])
              + [F.zeros_like(node.inputs[i]) for _, i in rest]
              + [rest_values[nm] for nm in rest2])
    result = F._internal._foreach(
        *inputs, subgraph=back, num_args=len(inputs), num_outputs=len(back.list_outputs()),
        num_out_data=0, in_data_locs=tuple(back_names.index(nm) for nm in seq),
        in_state_locs=tuple(back_names.index(nm) for nm in init),
        remain_locs=tuple(back_names.index(nm) for nm in rest2))
    result = _outputs_of(result, len(back.list_outputs()))
    grads = [None] * attrs.num_args
    for k, i in enumerate(var_inputs):
        grads[i] = result[k]
    for q, (_, i) in enumerate(rest):
        grads[i] = result[n_vars + q] if grads[i] is None else grads[i] + result[n_vars + q]
    return [(g if g is not None else F.zeros_like(x)) if want else None
            for g, x, want in zip(grads, node.inputs, node.wants)]


def _count_outputs(attrs):
    history = attrs.num_outputs - attrs.num_out_data + 1 if attrs.keep_history else 0
    return attrs.num_outputs + history


register(OpDef(
    _NAME, inputs=("data",), variadic=True, key_var_num_args="num_args",
    params=(Param("subgraph", "any", REQUIRED, "(condition, body) Symbols"),
            Param("num_args", "int", REQUIRED, "number of inputs"),
            Param("num_outputs", "int", REQUIRED, "number of the body's outputs"),
            Param("num_out_data", "int", REQUIRED, "number of per-step outputs"),
            Param("max_iterations", "int", REQUIRED, "the most steps the loop runs"),
            Param("cond_input_locs", "shape", REQUIRED, "inputs the condition reads"),
            Param("func_input_locs", "shape", REQUIRED, "inputs the body reads"),
            Param("func_var_locs", "shape", REQUIRED,
                  "positions of the loop variables among the body's inputs"),
            Param("keep_history", "bool", False,
                  "also give each loop variable per step and the step count (mxlite's: what "
                  "the gradient reads)")),
    infer_shape=_infer("infer_shape", "shape"), backward_shape=_backward_shape,
    infer_type=_infer("infer_type", "dtype"), compute={"cpu": _compute},
    gradient=_gradient, grad_needs=("inputs",), num_outputs=_count_outputs,
    doc="""A loop while a condition graph holds, at most ``max_iterations`` steps: what
``mx.sym.contrib.while_loop`` builds (see there). Its gradient is a loop too,
differentiable again."""))
