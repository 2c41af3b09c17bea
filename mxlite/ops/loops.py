"""``_foreach``: a loop over axis 0 whose body is a graph (MXNet's symbolic
``contrib.foreach``; ``mx.sym.contrib.foreach`` builds it, MXNet's JSON stores the body in the
node's ``subgraphs``).

The op's inputs are the sequences (``in_data_locs``: where each goes among the body's
inputs), the initial states (``in_state_locs``) and the loop-invariant rest (``remain_locs``:
weights, values computed outside the loop). The body's outputs are ``num_out_data`` per-step
outputs, stacked on a new axis 0, then the new states. Hidden outputs keep each state as it
entered each step, which the gradient reads.

The gradient is another ``_foreach``, over the reversed sequences, whose body is the
symbolic gradient of this body (``mx.sym.grad``): a graph of registered ops, so it is
differentiable again, to any order.
"""
from ..base import MXNetError, op_error
from .graph_shapes import graph_input_shapes
from .registry import REQUIRED, OpDef, Param, register

_NAME = "_foreach"


def _roles(attrs):
    """(body input names, data count, state count, remain count), checked."""
    body = attrs.subgraph
    if not hasattr(body, "list_inputs"):
        raise op_error(_NAME, f"subgraph must be a Symbol, got {type(body).__name__}")
    names = body.list_inputs()
    locs = list(attrs.in_data_locs) + list(attrs.in_state_locs) + list(attrs.remain_locs)
    if sorted(locs) != list(range(len(names))):
        raise op_error(_NAME, f"in_data_locs {attrs.in_data_locs}, in_state_locs "
                       f"{attrs.in_state_locs} and remain_locs {attrs.remain_locs} must "
                       f"place each of the body's {len(names)} inputs {names} once")
    n_data, n_states = len(attrs.in_data_locs), len(attrs.in_state_locs)
    if n_data < 1:
        raise op_error(_NAME, "the loop needs at least one sequence (in_data_locs is empty)")
    n_body_out = len(body.list_outputs())
    if attrs.num_outputs != n_body_out or attrs.num_out_data != n_body_out - n_states:
        raise op_error(_NAME, f"num_outputs={attrs.num_outputs}, num_out_data="
                       f"{attrs.num_out_data}: the body has {n_body_out} outputs for "
                       f"{n_states} states")
    return names, n_data, n_states, len(attrs.remain_locs)


def _named(attrs, values, step_of_data):
    """{body input name: value} for the op's inputs ``values`` (``step_of_data`` maps a
    sequence input to its per-step value)."""
    names, n_data, n_states, _ = _roles(attrs)
    locs = list(attrs.in_data_locs) + list(attrs.in_state_locs) + list(attrs.remain_locs)
    return {names[loc]: (step_of_data(v) if k < n_data else v)
            for k, (loc, v) in enumerate(zip(locs, values))}


def _steps(op_name, shapes, n_data):
    lengths = {s[0] for s in shapes[:n_data] if len(s) >= 1}
    if any(len(s) < 1 for s in shapes[:n_data]) or len(lengths) != 1:
        raise op_error(op_name, f"every sequence must have the same length on axis 0, got "
                       f"shapes {[tuple(s) for s in shapes[:n_data]]}")
    return lengths.pop()


def _infer_shape(shapes, attrs):
    names, n_data, n_states, _ = _roles(attrs)
    if len(shapes) != len(names):
        raise op_error(_NAME, f"the loop takes {len(names)} inputs, got {len(shapes)}")
    steps = _steps(_NAME, shapes, n_data)
    named = _named(attrs, [tuple(s) for s in shapes], lambda s: s[1:])
    _, out, _ = attrs.subgraph.infer_shape(**named)
    if out is None:
        raise op_error(_NAME, f"cannot infer the body's output shapes from its inputs {named}")
    n_out = attrs.num_out_data
    states_in = [tuple(shapes[n_data + k]) for k in range(n_states)]
    for k, (before, after) in enumerate(zip(states_in, out[n_out:])):
        if tuple(before) != tuple(after):
            raise op_error(_NAME, f"state {k} enters the body with shape {before} and leaves "
                           f"it with shape {tuple(after)}")
    return ([(steps,) + tuple(s) for s in out[:n_out]] + [tuple(s) for s in out[n_out:]]
            + [(steps,) + s for s in states_in])


def _backward_shape(in_shapes, out_shapes, attrs):
    """Unknown inputs (a weight only the body reads) from the body's own inference on one
    step of the sequences, the states and the known rest (``graph_shapes``)."""
    names, n_data, _, _ = _roles(attrs)
    lengths = {s[0] for s in in_shapes[:n_data] if s}
    steps = lengths.pop() if len(lengths) == 1 else None
    named = _named(attrs, list(in_shapes), lambda s: None if s is None else s[1:])
    found = graph_input_shapes(attrs.subgraph,
                               {n: tuple(s) for n, s in named.items() if s is not None})
    locs = list(attrs.in_data_locs) + list(attrs.in_state_locs) + list(attrs.remain_locs)
    out = [found.get(names[loc]) for loc in locs]
    for k in range(n_data):                     # a sequence is its step with the length
        out[k] = None if out[k] is None or steps is None else (steps,) + out[k]
    return out


def _infer_type(dtypes, attrs):
    names, n_data, n_states, _ = _roles(attrs)
    named = _named(attrs, list(dtypes), lambda d: d)
    _, out, _ = attrs.subgraph.infer_type(**named)
    if out is None:
        raise op_error(_NAME, "cannot infer the body's output dtypes")
    return list(out) + [dtypes[n_data + k] for k in range(n_states)]


def _compute(rctx, ins, outs, attrs):
    from .._core.dispatch import wrap          # ops/ is below ndarray/ and symbol/:
    from ..ndarray.ndarray import tape_state    # looked up at run time
    from ..symbol.grad import evaluate
    _, n_data, n_states, _ = _roles(attrs)
    n_out, xp, ctx = attrs.num_out_data, rctx.xp, rctx.ctx
    steps = ins[0].shape[0]
    states = [wrap(s, ctx) for s in ins[n_data:n_data + n_states]]
    rest = [wrap(r, ctx) for r in ins[n_data + n_states:]]
    history = outs[attrs.num_outputs:]
    prev = tape_state.recording
    tape_state.recording = False        # the node running the loop is what the tape records
    try:
        for t in range(steps):
            for k, s in enumerate(states):
                xp.copyto(history[k][t], s._data)
            values = [wrap(d[t], ctx) for d in ins[:n_data]] + states + rest
            named = _named(attrs, values, lambda v: v)
            result = evaluate(attrs.subgraph, ctx, **named)
            for j in range(n_out):
                xp.copyto(outs[j][t], result[j]._data)
            states = result[n_out:]         # fresh arrays: nothing writes them
    finally:
        tape_state.recording = prev
    for k, s in enumerate(states):
        xp.copyto(outs[n_out + k], s._data)


def _gradient(F, node, ograds):
    """With s_t the state entering step t (the hidden history) and
    (o_t, s_{t+1}) = body(d_t, s_t, r), in reverse order t = T-1..0:

        (gd_t, gs_t, gr_t) = VJP of body at (d_t, s_t, r) of (g o_t, g s_{t+1})
        g s_t += g history_t;  g r += gr_t

    one ``_foreach`` over the reversed sequences (d, s history, g o, g history) with states
    (g s, g r), whose body is ``mx.sym.grad`` of this body."""
    from .. import symbol as S          # ops/ is below symbol/: looked up at run time
    attrs = node.attrs
    names, n_data, n_states, n_rest = _roles(attrs)
    n_out = attrs.num_out_data
    locs = list(attrs.in_data_locs) + list(attrs.in_state_locs) + list(attrs.remain_locs)
    shapes = {names[loc]: (tuple(s)[1:] if k < n_data else tuple(s))
              for k, (loc, s) in enumerate(zip(locs, node.input_shapes))}
    dtypes = {names[loc]: d for loc, d in zip(locs, node.input_dtypes)}
    data_names = [names[loc] for loc in attrs.in_data_locs]
    state_names = [names[loc] for loc in attrs.in_state_locs]
    rest_names = [names[loc] for loc in attrs.remain_locs]
    outs_shape = [tuple(s)[1:] for s in node.output_shapes[:n_out]]
    level = 0           # a gradient of a gradient loop names its variables one level up
    while any(n.startswith(f"_grad{level}_") for n in names):
        level += 1
    p = f"_grad{level}_"
    head = {f"{p}out{j}": (s, node.output_dtypes[j]) for j, s in enumerate(outs_shape)}
    carry = {f"{p}state{k}": (shapes[n], dtypes[n]) for k, n in enumerate(state_names)}
    extra = {f"{p}history{k}": (shapes[n], dtypes[n]) for k, n in enumerate(state_names)}
    acc = {f"{p}rest{m}": (shapes[n], dtypes[n]) for m, n in enumerate(rest_names)}
    var = {n: S.var(n, shape=sd[0], dtype=sd[1])
           for n, sd in {**head, **carry, **extra, **acc}.items()}
    body = attrs.subgraph
    vjp = S.grad(body, names, head_grads=[var[n] for n in list(head) + list(carry)],
                 shapes={**shapes, **{n: sd[0] for n, sd in {**head, **carry}.items()}},
                 dtypes={**dtypes, **{n: sd[1] for n, sd in {**head, **carry}.items()}},
                 ctx=node.context)
    by_name = dict(zip(names, vjp))
    back = S.Group([by_name[n] for n in data_names]
                   + [by_name[n] + var[g] for n, g in zip(state_names, extra)]
                   + [by_name[n] + var[a] for n, a in zip(rest_names, acc)])
    seq_names = data_names + state_names + list(head) + list(extra)
    init_names = list(carry) + list(acc)
    back = _using_all(S, back, seq_names + init_names)
    back_names = back.list_inputs()
    rest2 = [n for n in back_names if n not in seq_names and n not in init_names]
    given = dict(zip(data_names, node.inputs[:n_data]))
    given.update(zip(state_names, node.outputs[attrs.num_outputs:]))       # histories
    given.update(zip(list(head), ograds[:n_out]))
    given.update(zip(list(extra), ograds[attrs.num_outputs:]))
    init = list(ograds[n_out:n_out + n_states]) + [
        F.zeros_like(r) for r in node.inputs[n_data + n_states:]]
    rest_values = dict(zip(rest_names, node.inputs[n_data + n_states:]))
    missing = [n for n in rest2 if n not in rest_values]
    if missing:
        raise MXNetError(f"{_NAME}: the gradient body reads {missing}, which are not inputs of "
                         "the loop")
    inputs = ([F.reverse(given[n], axis=0) for n in seq_names] + init
              + [rest_values[n] for n in rest2])
    result = F._internal._foreach(
        *inputs, subgraph=back, num_args=len(inputs), num_outputs=len(back.list_outputs()),
        num_out_data=n_data,
        in_data_locs=tuple(back_names.index(n) for n in seq_names),
        in_state_locs=tuple(back_names.index(n) for n in init_names),
        remain_locs=tuple(back_names.index(n) for n in rest2))
    result = _outputs_of(result, len(back.list_outputs()))
    grads = ([F.reverse(result[i], axis=0) for i in range(n_data)]
             + [result[n_data + k] for k in range(n_states)]
             + [result[n_data + n_states + m] for m in range(n_rest)])
    return [g if want else None for g, want in zip(grads, node.wants)]


def _outputs_of(result, count):
    """The outputs of a call as a list: mx.nd returns a list (one output: the array),
    mx.sym one Symbol of ``count`` outputs."""
    if isinstance(result, (list, tuple)):
        return list(result)
    if count == 1 or not hasattr(result, "list_outputs"):
        return [result]
    return [result[i] for i in range(count)]


def _using_all(S, group, needed):
    """``group`` with every name of ``needed`` among its inputs: an input the gradient
    does not read (a sequence whose values never matter) is added through a zero-weighted
    term (a zero of its shape, summed), so the loop's inputs stay what the caller passes.""" 
    have = set(group.list_inputs())
    unused = [n for n in needed if n not in have]
    if not unused:
        return group
    outputs = list(group)
    first = outputs[0]
    for n in unused:        # zeros_like reads no values: a NaN there stays out
        first = S.broadcast_add(first, S.sum(S.zeros_like(S.var(n)), keepdims=True))
    return S.Group([first] + outputs[1:])


def _count_outputs(attrs):
    return attrs.num_outputs + len(attrs.in_state_locs)


register(OpDef(
    _NAME, inputs=("data",), variadic=True, key_var_num_args="num_args",
    params=(Param("subgraph", "any", REQUIRED, "the loop body (a Symbol)"),
            Param("num_args", "int", REQUIRED, "number of inputs"),
            Param("num_outputs", "int", REQUIRED, "number of the body's outputs"),
            Param("num_out_data", "int", REQUIRED, "number of per-step outputs"),
            Param("in_data_locs", "shape", REQUIRED, "body input positions of the sequences"),
            Param("in_state_locs", "shape", REQUIRED, "body input positions of the states"),
            Param("remain_locs", "shape", REQUIRED,
                  "body input positions of the loop-invariant inputs")),
    infer_shape=_infer_shape, backward_shape=_backward_shape, infer_type=_infer_type,
    compute={"cpu": _compute}, gradient=_gradient, grad_needs=("inputs", "outputs"),
    num_outputs=_count_outputs,
    num_visible_outputs=lambda attrs: attrs.num_outputs,
    doc="""A loop over axis 0 of the sequence inputs whose body is a graph: what
``mx.sym.contrib.foreach`` builds (see there). Per-step outputs are stacked on axis 0; the
final states follow. Its gradient is a loop too, differentiable again."""))
