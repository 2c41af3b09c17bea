"""The data of a symbol graph: ``SymNode`` and ``topo_order``.

A node is a variable (``op`` None) or one application of a registered operator. Its
``inputs`` are entries ``(SymNode, output_index)``. A variable is *auxiliary* when some
op consumes it at one of its ``aux_inputs`` positions (BatchNorm's moving statistics): this
is not stored on the node, it follows from the graph (``aux_variables``).
"""

import itertools

__all__ = ["SymNode", "topo_order", "aux_variables", "input_names"]

_created = itertools.count()    # SymNode.seq: creation rank (the executor runs nodes by it)


class SymNode:
    """One node of a symbol graph.

    op          the ``OpDef``, or None for a variable
    name        the node's name (``fc1``, ``fc1_weight``)
    attrs       the op's parsed ``Attrs`` (``op.parse_attrs``); None for a variable
    inputs      list of ``(SymNode, output_index)``, in ``op.list_inputs(attrs)`` order
    user_attrs  dict str -> str: MXNet's ``attr=``, ``__shape__``, ``__dtype__``,
                ``__init__``, ``__lr_mult__``, ...
    given       names of the parameters the caller gave (what a JSON ``attrs`` writes,
                as MXNet writes only those); None means every parameter
    seq         creation rank: an Executor runs nodes in this order (the order an imperative
                program made them, so results and gradient sums match ``mx.nd`` bit for bit)
    """

    __slots__ = ("op", "name", "attrs", "inputs", "user_attrs", "given", "seq")

    def __init__(self, op, name, attrs=None, inputs=(), user_attrs=None, given=None):
        self.op, self.name, self.attrs = op, name, attrs
        self.inputs = list(inputs)
        self.user_attrs = dict(user_attrs or {})
        self.given = given
        self.seq = next(_created)

    @property
    def is_variable(self):
        """True for a variable (no op)."""
        return self.op is None

    def num_outputs(self):
        """All outputs of the node (hidden ones included); 1 for a variable."""
        return 1 if self.op is None else self.op.output_count(self.attrs)

    def num_visible_outputs(self):
        """The outputs a symbol of this node shows (MXNet's FNumVisibleOutputs)."""
        return 1 if self.op is None else self.op.num_visible_outputs(self.attrs)

    def output_names(self):
        """MXNet's names of the visible outputs: ``<name>_<output>`` for an op
        (``fc1_output``), the variable's own name for a variable."""
        if self.op is None:
            return [self.name]
        names = self.op.list_outputs(self.attrs)[:self.num_visible_outputs()]
        return [f"{self.name}_{n}" for n in names]

    def __repr__(self):
        return f"<SymNode {self.name} ({self.op.name if self.op else 'variable'})>"


def input_names(node):
    """The names of ``node``'s inputs (``op.list_inputs(attrs)``); () for a variable."""
    return () if node.op is None else tuple(node.op.list_inputs(node.attrs))


def topo_order(entries):
    """Every node reachable from ``entries`` (pairs ``(SymNode, index)``), inputs before
    their users, in MXNet's DFSVisit order: depth first, inputs in order, each node once."""
    order, seen = [], set()
    for head, _ in entries:
        if id(head) in seen:
            continue
        seen.add(id(head))
        stack = [(head, 0)]
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def aux_variables(nodes):
    """The ids of the variables among ``nodes`` that some op consumes as an auxiliary state."""
    aux = set()
    for node in nodes:
        # an op that mutates inputs may name its auxiliary states per call (Custom's come
        # from its CustomOpProp), so ask the record
        if node.op is not None and (node.op.aux_inputs or node.op.mutate_inputs):
            names = node.op.list_auxiliary_states(node.attrs)
            for name, (child, _) in zip(input_names(node), node.inputs):
                if name in names and child.op is None:
                    aux.add(id(child))
    return aux
