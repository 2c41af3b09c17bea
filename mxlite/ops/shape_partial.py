"""Shape inference in both directions over *partial* shapes (what ``mx.sym`` needs to bind a
graph whose variables have no shapes, or only some dimensions, yet).

A partial shape is None (nothing known, not even the number of dimensions) or a tuple whose
entries are ints or None (an unknown dimension): MXNet's legacy ``(0, 10)`` is ``(None, 10)``
here; ``mxlite.symbol.infer`` converts at the API (legacy ``0`` / NumPy-shape ``-1``).

``infer_shape_partial(op, in_shapes, attrs, out_shapes)``:

1. ``'same'`` ops (element-wise: every input and the first output have one shape) unify
   every known dimension of them, so ``(None, 10)`` and ``(12, None)`` make ``(12, 10)``;
2. an op's ``backward_shape`` rule fills inputs from the known inputs and outputs. A rule
   marked ``@partial_rule`` reads partial shapes itself; any other is called on *probes*
   (below), so FullyConnected's rule gives weight ``(16, 4)`` from data ``(None, 4)``;
3. when every input is complete the op's ``infer_shape`` gives the outputs (an output given
   a different shape raises "shape inconsistent"); when every input's rank is known but
   some dimension is not, the outputs are *probed*: ``infer_shape`` runs twice with every
   unknown dimension set to one large value, then another, and an output dimension that
   comes out equal both times is known (``dot((None, 3, 4), (4, 5))`` is ``(None, 3, 5)``).
   A probe that raises teaches nothing (the op could not tell yet, as MXNet's shape
   functions return "unknown"); the check happens once the shapes are complete.

Every merge is a unification (``unify``): a dimension known twice must agree, which is how an
impossible graph is refused wherever its constraints meet.
"""
from ..base import MXNetError, op_error

__all__ = ["infer_shape_partial", "unknown_created_shape", "same_shape_backward", "resolve_backward_shape",
           "partial_rule", "probed", "combine", "unify", "is_complete", "known_rank"]

# Two probe values for unknown dimensions: large, distinct, with many small divisors (so
# a probe splits evenly where an op divides a dimension: SliceChannel, Reshape).
_PROBES = (720720 * 1009, 720720 * 1013)

# Ops whose shape function wants every input complete before it says anything (MXNet's
# ``where`` infers nothing from a partly known condition).
_COMPLETE_INPUTS_ONLY = frozenset(("where",))


def is_complete(shape):
    """True for a shape whose rank and every dimension are known."""
    return shape is not None and None not in shape


def unify(a, b, where=None):
    """The partial shape that agrees with both ``a`` and ``b``; MXNetError ("shape
    inconsistent") where they disagree on the rank or on a known dimension."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b) or any(x is not None and y is not None and x != y
                               for x, y in zip(a, b)):
        message = f"shape inconsistent: {_show(a)} vs {_show(b)}"
        raise op_error(where, message) if where else MXNetError(message)
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _show(shape):
    return "unknown" if shape is None else \
        "(" + ", ".join("?" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def known_rank(*shapes):
    """The rank of the first of ``shapes`` whose rank is known, else None."""
    return next((len(s) for s in shapes if s is not None), None)


def partial_rule(fn):
    """Mark a ``backward_shape`` rule as reading partial shapes (None dimensions) itself."""
    fn.partial_dims = True
    return fn


@partial_rule
def same_shape_backward(in_shapes, out_shapes, attrs):
    """Every input has the shape of the inputs and first output, unified (element-wise ops)."""
    merged = None
    for s in list(in_shapes) + list(out_shapes[:1]):
        merged = unify(merged, s)
    return [merged] * len(in_shapes)


_RULES = {"same": same_shape_backward}


def resolve_backward_shape(op_name, rule):
    """The rule function for an ``OpDef``'s ``backward_shape`` (None, a name, or a function)."""
    if rule is None:
        return rule
    if callable(rule):
        return probed(rule)
    try:
        return _RULES[rule]
    except KeyError:
        raise ValueError(f"OpDef {op_name}: unknown backward_shape {rule!r}; expected a "
                         f"function or one of {sorted(_RULES)}") from None


def _shapes(op, what, shapes, n, names):
    if len(shapes) != n:
        raise op_error(op.name, f"expected {n} {what} shape(s) {names}, got {len(shapes)}")
    return [None if s is None else tuple(None if d is None else int(d) for d in s)
            for s in shapes]


def _fill(value, shape):
    return None if shape is None else tuple(value if d is None else d for d in shape)


def _probe(fn, shapes_lists):
    """Run ``fn(*lists)`` with every unknown dimension set to each probe value; a list of
    partial shapes whose dimensions agree between the runs (None where they do not, or
    where the rank differs); None when a run raises or returns something else."""
    runs = []
    for value in _PROBES:
        try:
            got = fn(*[[_fill(value, s) for s in shapes] for shapes in shapes_lists])
            runs.append([None if g is None else tuple(int(d) for d in g) for g in got])
        except Exception:       # noqa: BLE001 -- a probe that fails teaches nothing
            return None
    first, second = runs
    if len(first) != len(second):
        return None
    return [None if a is None or b is None or len(a) != len(b) else
            tuple(x if x == y and x not in _PROBES else None for x, y in zip(a, b))
            for a, b in zip(first, second)]


def _merge_into(shapes, found, where):
    """``shapes`` with ``found`` (same length, None where unknown) unified in."""
    return [unify(s, None if f is None else tuple(f), where) for s, f in zip(shapes, found)]


def _merge_lenient(shapes, found):
    """As ``_merge_into``, keeping ``shapes`` where a probe's guess disagrees (the complete
    inference that follows reports a true conflict)."""
    out = []
    for s, f in zip(shapes, found):
        try:
            out.append(unify(s, f))
        except Exception:       # noqa: BLE001
            out.append(s)
    return out


def probed(rule):
    """The partial rule of a ``backward_shape`` rule written for complete shapes: it reads
    the complete shapes as they are and the partial ones through probes (each unknown
    dimension set to a probe value; what both runs agree on is known)."""
    if getattr(rule, "partial_dims", False):
        return rule

    @partial_rule
    def run(in_shapes, out_shapes, attrs):
        def complete_only(shapes):
            return [s if is_complete(s) else None for s in shapes]
        # the rule fills what it reads as unknown (None) from what is complete ...
        known = rule(complete_only(in_shapes), complete_only(out_shapes), attrs)
        shapes = _merge_lenient(in_shapes, [None if f is None else tuple(f) for f in known])
        if all(s is None or is_complete(s) for s in list(shapes) + list(out_shapes)):
            return shapes
        # ... and from partial shapes through probes
        found = _probe(lambda i, o: rule(i, o, attrs), [shapes, out_shapes])
        return shapes if found is None else _merge_lenient(shapes, found)
    run.__name__ = run.__qualname__ = getattr(rule, "__name__", "rule")
    run.__doc__ = rule.__doc__
    return run


def combine(*rules):
    """One partial rule applying ``rules`` in turn, each seeing what the others filled."""
    rules = [probed(r) for r in rules]

    @partial_rule
    def run(in_shapes, out_shapes, attrs):
        shapes = list(in_shapes)
        for r in rules:
            shapes = _merge_into(shapes, r(shapes, out_shapes, attrs), "backward_shape")
        return shapes
    return run


def _backward(op, ins, outs, attrs):
    """Step 2: inputs filled by the op's backward rule (MXNetError where the rule's shapes
    disagree with known ones)."""
    try:
        found = op.backward_shape(ins, outs, attrs)
    except MXNetError as e:
        if str(e).startswith(f"{op.name}:"):
            raise
        raise op_error(op.name, str(e)) from None
    if op.backward_shape is same_shape_backward and outs and found:
        outs[0] = unify(outs[0], found[0], op.name)
    return _merge_into(ins, found, op.name)


def unknown_created_shape(op, attrs):
    """The partial output shape of a creation op (no inputs, a ``shape`` parameter:
    ``zeros``, ``ones``, ``full``, the samplers) whose ``shape`` has a 0 dimension, which
    MXNet 1.x's symbols read as unknown (filled from the rest of the graph, as a
    ``begin_state`` of shape ``(0, num_hidden)`` gets its batch size); None for any other op
    or call, and under NumPy shape semantics (where 0 is an empty dimension)."""
    shape = attrs.get("shape") if not op.inputs and not op.variadic else None
    if not shape or 0 not in shape:
        return None
    from ..util import is_np_shape
    if is_np_shape():
        return None
    return tuple(None if d == 0 else int(d) for d in shape)


def infer_shape_partial(op, in_shapes, attrs, out_shapes=None):
    """``(in_shapes, out_shapes)`` of ``op`` with ``attrs`` as partial shapes, everything it
    can infer filled in. MXNetError ("shape inconsistent") when known dimensions disagree."""
    in_shapes = list(in_shapes)
    if op.variadic and attrs.get(op.key_var_num_args) is None:    # count unknown: any
        names = [f"arg{i}" for i in range(len(in_shapes))]
    else:
        names = op.list_inputs(attrs)
    ins = _shapes(op, "input", in_shapes, len(names), list(names))
    n_out = op.output_count(attrs)
    outs = [None] * n_out if out_shapes is None else \
        _shapes(op, "output", list(out_shapes), n_out, op.list_outputs(attrs))
    created = unknown_created_shape(op, attrs)
    if created is not None:
        # the creation op's shape has unknown (legacy 0) dimensions: the graph fills them
        outs[0] = unify(created, outs[0], op.name)
        return ins, outs
    if op.backward_shape is not None and not all(map(is_complete, ins)):
        ins = _backward(op, ins, outs, attrs)
    if all(map(is_complete, ins)):
        inferred = [tuple(int(d) for d in s) for s in op.infer_shape(ins, attrs)]
        for name, given, got in zip(op.list_outputs(attrs), outs, inferred):
            if given is not None and any(g is not None and g != d for g, d in zip(given, got)):
                raise op_error(op.name, f"shape inconsistent: output {name!r} is given shape "
                               f"{_show(given)}, but inputs of shapes {ins} give {got}")
        return ins, inferred
    if None in ins or op.name in _COMPLETE_INPUTS_ONLY:
        return ins, outs
    found = _probe(lambda i: op.infer_shape(i, attrs), [ins])
    if found is not None and len(found) == len(outs):
        outs = _merge_lenient(outs, found)
    return ins, outs
