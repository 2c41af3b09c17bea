"""Storage-type inference over a symbol graph (MXNet's FInferStorageType pass).

From the storage types of the variables (``__storage_type__`` or ``stype_dict``), each node
takes the output storage types of the first storage rule of its operator that takes its
inputs (``OpDef.storage``), dense otherwise (a fallback); and each variable's gradient gets
the storage type its consumers' ``OpDef.grad_stypes`` ask for, when they all agree (dense
otherwise). ``simple_bind`` uses the gradient types for the gradient arrays it makes; an
executor whose graph has a node that a storage rule runs on sparse storage (``native_nodes``)
runs its nodes through the rules (``mxlite.executor``), and the others compute densely.
"""
from ..ops.sparse.rules import find
from .graph import topo_order
from .infer import shape_table

__all__ = ["storage_types", "native_nodes"]

DEFAULT = "default"


def _infer(symbol, var_stypes, shapes):
    """``(stype, asked, native)``: {(id(node), output): storage type}, {variable: the set
    of gradient storage types its consumers ask for}, and the names of the nodes a storage
    rule takes with a sparse input or output."""
    entries = symbol._outputs
    _, shape_of = shape_table(entries, {k: tuple(v) for k, v in shapes.items()})
    stype = {}
    asked = {}
    native = []
    for node in topo_order(entries):
        if node.op is None:
            stype[(id(node), 0)] = var_stypes.get(node.name, DEFAULT)
            continue
        ins = tuple(stype.get((id(c), i), DEFAULT) for c, i in node.inputs)
        in_shapes = [shape_of.get(c, i) for c, i in node.inputs]
        rule = None
        if node.op.storage and all(s is not None for s in in_shapes):
            rule = find(node.op, ins, node.attrs, in_shapes)
        n_out = node.op.output_count(node.attrs)
        outs = rule.output_stypes(node.attrs, ins) if rule is not None else (DEFAULT,) * n_out
        if rule is not None and any(s != DEFAULT for s in ins + tuple(outs)):
            native.append(node.name)
        for i, s in enumerate(outs):
            stype[(id(node), i)] = s
        wants = node.op.grad_stypes(node.attrs, ins) if node.op.grad_stypes else ()
        wants = tuple(wants) + (None,) * (len(node.inputs) - len(wants))
        for (c, i), want in zip(node.inputs, wants):
            if c.op is None:
                asked.setdefault(c.name, set()).add(want or DEFAULT)
    return stype, asked, native


def storage_types(symbol, var_stypes, shapes):
    """``(out_stypes, grad_stypes)``: the storage type of each output of ``symbol``, and
    ``{variable name: storage type of its gradient}`` for those given a sparse one.
    ``var_stypes`` {name: stype} (dense where missing); ``shapes`` {name: shape} of the
    variables (the rules' ``when`` reads shapes)."""
    stype, asked, _ = _infer(symbol, var_stypes, shapes)
    grads = {name: kinds.pop() for name, kinds in asked.items()
             if len(kinds) == 1 and next(iter(kinds)) != DEFAULT}
    return [stype.get((id(n), i), DEFAULT) for n, i in symbol._outputs], grads


def native_nodes(symbol, var_stypes, shapes):
    """The names of the nodes of ``symbol`` that a storage rule computes on sparse storage
    (a sparse input or output), given the variables' storage types and shapes: MXNet's
    FComputeEx dispatch. Empty where the whole graph computes densely."""
    return _infer(symbol, var_stypes, shapes)[2]
