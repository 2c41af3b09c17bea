"""Shape inference in both directions, with None for an unknown shape (what ``mx.sym``
needs to bind a graph whose variables have no shapes yet).

``infer_shape_partial(op, in_shapes, attrs, out_shapes)``:

1. when some input shape is unknown and the op declares ``backward_shape``, that rule fills
   the inputs it can from the known inputs, the known outputs and ``attrs``;
2. when every input shape is then known, the op's ``infer_shape`` gives the outputs, which
   must agree with any output shape given.

Anything still unknown stays None. A ``backward_shape`` rule is
``fn(in_shapes, out_shapes, attrs) -> in_shapes`` (a list, None where it cannot tell); it
never needs to check consistency, as step 2 does. ``'same'`` names the built-in rule of
element-wise ops whose inputs and outputs all have one shape. A layer declares its own: a
``FullyConnected(num_hidden=16)`` rule fills ``weight`` as ``(num_hidden, prod(data[1:]))``
and ``bias`` as ``(num_hidden,)``, so data ``(8, 4)`` infers weight ``(16, 4)``, as MXNet.
"""
from ..base import op_error

__all__ = ["infer_shape_partial", "same_shape_backward", "resolve_backward_shape"]


def same_shape_backward(in_shapes, out_shapes, attrs):
    """Every input has the shape of any known input or output (element-wise ops)."""
    known = next((s for s in list(in_shapes) + list(out_shapes) if s is not None), None)
    return [known if s is None else s for s in in_shapes]


_RULES = {"same": same_shape_backward}


def resolve_backward_shape(op_name, rule):
    """The rule function for an ``OpDef``'s ``backward_shape`` (None, a name, or a function)."""
    if rule is None or callable(rule):
        return rule
    try:
        return _RULES[rule]
    except KeyError:
        raise ValueError(f"OpDef {op_name}: unknown backward_shape {rule!r}; expected a "
                         f"function or one of {sorted(_RULES)}") from None


def _shapes(op, what, shapes, n, names):
    if len(shapes) != n:
        raise op_error(op.name, f"expected {n} {what} shape(s) {names}, got {len(shapes)}")
    return [None if s is None else tuple(int(d) for d in s) for s in shapes]


def infer_shape_partial(op, in_shapes, attrs, out_shapes=None):
    """``(in_shapes, out_shapes)`` of ``op`` with ``attrs``, every shape it can infer filled in
    and None for the rest. MXNetError when the known shapes disagree."""
    in_shapes = list(in_shapes)
    if op.variadic and attrs.get(op.key_var_num_args) is None:    # count unknown: any
        names = [f"arg{i}" for i in range(len(in_shapes))]
    else:
        names = op.list_inputs(attrs)
    ins = _shapes(op, "input", in_shapes, len(names), list(names))
    n_out = op.output_count(attrs)
    outs = [None] * n_out if out_shapes is None else \
        _shapes(op, "output", list(out_shapes), n_out, op.list_outputs(attrs))
    if None in ins and op.backward_shape is not None:
        filled = op.backward_shape(ins, outs, attrs)
        ins = [s if s is not None else (None if f is None else tuple(f))
               for s, f in zip(ins, filled)]
    if None in ins:
        return ins, outs
    inferred = [tuple(s) for s in op.infer_shape(ins, attrs)]
    for name, given, got in zip(op.list_outputs(attrs), outs, inferred):
        if given is not None and given != got:
            raise op_error(op.name, f"output {name!r} is given shape {given}, but inputs of "
                           f"shapes {ins} give {got}")
    return ins, inferred
