"""Shape and type inference over a symbol graph (MXNet's ``infer_shape``/``infer_type``).

Shapes: every node's ``OpDef.infer_shape_partial`` (backward rules fill unknown inputs from
known inputs and outputs, ``infer_shape`` the outputs) is applied over the graph, forwards
then backwards, until nothing changes. Seeds are the shapes given by the caller and the
variables' ``__shape__`` attributes (``Variable(shape=...)``; a 0 in ``__shape__`` is an
unknown dimension, so such a shape is only a hint). Two different shapes for one entry
raise ``MXNetError`` naming the node, the input or output, and both shapes.

Types: the same sweep with ``OpDef.infer_type``; an input whose dtype is unknown while
another input of its node is known takes that input's dtype when it is a float type, else
float32 (MXNet's element-wise type rule, which is how ``FullyConnected`` gets its weight's
dtype from its data), and ``__dtype__`` attributes seed it.
"""
import numpy as np

from ..base import MXNetError, dtype_kind
from ..ops.shape_partial import is_complete, unify
from ._deferred import expand
from .graph import aux_variables, input_names, topo_order

__all__ = ["infer_shape", "infer_type", "shape_table", "type_table"]


def _np_shape():
    """True inside MXNet's NumPy-shape semantics (``mx.np_shape()``): -1 marks an unknown
    dimension and None an unknown shape; else (legacy) 0 and ``()`` do."""
    try:
        from ..util import is_np_shape
    except ImportError:         # no NumPy-shape switch: legacy semantics only
        return False
    return bool(is_np_shape())


def to_partial(shape, np_shape=None):
    """The partial shape (None for unknown; see ``mxlite.ops.shape_partial``) of an API
    shape: legacy ``0`` dims and ``()`` are unknown; with NumPy shapes ``-1`` and None."""
    if np_shape is None:
        np_shape = _np_shape()
    if shape is None:
        return None
    dims = tuple(int(d) for d in shape)
    if np_shape:
        return tuple(None if d == -1 else d for d in dims)
    if not dims:
        return None
    return tuple(None if d == 0 else d for d in dims)


def from_partial(shape, np_shape=None):
    """The API form of a partial shape (the inverse of ``to_partial``)."""
    if np_shape is None:
        np_shape = _np_shape()
    if shape is None:
        return None if np_shape else ()
    unknown = -1 if np_shape else 0
    return tuple(unknown if d is None else d for d in shape)


def _seed_shape(node):
    """The partial shape a variable's ``__shape__`` gives (0 or -1: an unknown dimension)."""
    s = node.user_attrs.get("__shape__")
    if s is None:
        return None
    from ..ops.params import Param
    shape = Param("__shape__", "shape", None).parse(node.name, s)
    if shape is None:
        return None
    np_shape = _np_shape()
    return tuple(None if d == -1 or (d == 0 and not np_shape) else int(d) for d in shape)


def complete_seed_shape(node):
    """A variable's ``__shape__`` when it is complete, else None."""
    s = _seed_shape(node)
    return s if s is not None and None not in s else None


def _seed_dtype(node):
    from .symbol import FLAG_DTYPES
    d = node.user_attrs.get("__dtype__")
    if d is None:
        return None
    return np.dtype(FLAG_DTYPES.get(d, d))


def _given(sym, args, kwargs, what, convert):
    """``{variable name: value}`` from positional values (``list_arguments`` order) and
    keyword values (any input name)."""
    arguments = sym.list_arguments()
    inputs = set(sym.list_inputs())
    if len(args) > len(arguments):
        raise MXNetError(f"{what}: {len(args)} positional values for {len(arguments)} "
                         f"arguments {arguments}")
    given = {}
    for name, v in zip(arguments, args):
        if v is not None:
            given[name] = convert(name, v)
    for name, v in kwargs.items():
        if name not in inputs:
            raise MXNetError(f"{what}: {name!r} is not an input of the symbol; its inputs "
                             f"are {sorted(inputs)}")
        if v is not None:
            given[name] = convert(name, v)
    return given


def _shape_of(name, v):
    try:
        return to_partial(v)
    except (TypeError, ValueError):
        raise MXNetError(f"infer_shape: the shape of {name!r} must be a tuple of ints, got "
                         f"{v!r}") from None


def _dtype_of(name, v):
    from .symbol import FLAG_DTYPES
    try:
        return np.dtype(FLAG_DTYPES.get(v, v) if isinstance(v, (str, int)) else v)
    except TypeError:
        raise MXNetError(f"infer_type: bad dtype {v!r} for {name!r}") from None


class _Table:
    """Known values per entry ``(id(node), index)``; ``set`` checks consistency (shapes are
    partial and unified dimension by dimension)."""

    def __init__(self, what):
        self.values, self.what, self.changed = {}, what, False
        self.merge = None

    def get(self, node, i):
        return self.values.get((id(node), i))

    def set(self, node, i, value, where):
        if value is None:
            return
        key = (id(node), i)
        old = self.values.get(key)
        if old is None:
            self.values[key] = value
            self.changed = True
        elif old == value:
            return
        elif self.merge is not None:
            try:
                merged = self.merge(old, value)
            except MXNetError:
                raise MXNetError(f"infer_{self.what}: shape inconsistent for {where}: "
                                 f"{_fmt(old)} vs {_fmt(value)}") from None
            if merged != old:
                self.values[key] = merged
                self.changed = True
        else:
            raise MXNetError(f"infer_{self.what}: inconsistent {self.what} for {where}: "
                             f"{_fmt(old)} vs {_fmt(value)}")


def _fmt(v):
    if isinstance(v, tuple):
        return "(" + ", ".join("?" if d is None else str(d) for d in v) + \
            ("," if len(v) == 1 else "") + ")"
    return np.dtype(v).name


def _where(node, kind, name):
    op = node.op.name if node.op is not None else "variable"
    return f"{kind} {name!r} of node {node.name!r} ({op})"


def _sweep(nodes, table, step):
    """Run ``step`` over the nodes forwards, then backwards, until nothing changes."""
    for _ in range(4 * len(nodes) + 4):
        table.changed = False
        for node in nodes:
            if node.op is not None:
                step(node)
        for node in reversed(nodes):
            if node.op is not None:
                step(node)
        if not table.changed:
            return
    raise MXNetError("inference did not converge")   # (cannot happen: values only get set)


def _result(sym, nodes, table, partial, unknown, complete=lambda v: v is not None,
            outputs=None):
    aux = aux_variables(nodes)
    variables = {}
    for n in nodes:
        if n.op is None:
            variables.setdefault(n.name, n)
    args = [table.get(variables[name], 0) if name in variables else None
            for name in sym.list_arguments()]
    outs = [table.get(n, i) for n, i in (outputs or sym._outputs)]
    auxs = [table.get(n, 0) for n in nodes if n.op is None and id(n) in aux]
    if not partial:
        if not all(map(complete, args + outs + auxs)):
            return None, None, None
        return args, outs, auxs
    fill = (lambda v: unknown if v is None else v)
    return [fill(v) for v in args], [fill(v) for v in outs], [fill(v) for v in auxs]


def infer_shape(sym, args, kwargs, partial=False):
    """``(arg_shapes, out_shapes, aux_shapes)`` of ``sym`` in ``list_arguments``,
    ``list_outputs``, ``list_auxiliary_states`` order; (None, None, None) when some shape
    stays incomplete, or with ``partial`` each shape as far as it is known (MXNet's legacy
    forms: 0 for an unknown dimension, ``()`` for an unknown shape; with ``mx.np_shape()``
    -1 and None)."""
    np_shape = _np_shape()
    given = _given(sym, args, kwargs, "infer_shape", _shape_of)
    entries = expand(sym._outputs, given, {})       # deferred np calls, dtypes as declared
    nodes, table = shape_table(entries, given)
    res = _result(sym, nodes, table, partial, None, is_complete, entries)
    if res[0] is None:
        return res
    return tuple([from_partial(s, np_shape) for s in part] for part in res)


def shape_table(entries, given):
    """``(nodes, table)``: the graph of ``entries`` in order and the partial shape of every
    entry (``table.get(node, i)``: None where unknown, None dimensions where partly known),
    from ``given`` ``{variable: partial shape}``."""
    nodes = topo_order(entries)
    table = _Table("shape")
    table.merge = unify
    for n in nodes:
        if n.op is None:
            table.set(n, 0, given.get(n.name, _seed_shape(n)), _where(n, "variable", n.name))

    checked = set()     # nodes whose complete shapes were checked (complete shapes stay)

    def step(node):
        if id(node) in checked or node.op.deferred:
            return
        names = input_names(node)
        ins = [table.get(c, i) for c, i in node.inputs]
        n_out = node.op.output_count(node.attrs)
        outs = [table.get(node, i) for i in range(n_out)]
        if all(map(is_complete, ins)) and all(map(is_complete, outs)):
            # every constraint is checked, also where both sides were filled from elsewhere
            checked.add(id(node))
        try:
            new_ins, new_outs = node.op.infer_shape_partial(ins, node.attrs, outs)
        except MXNetError as e:
            raise MXNetError(f"infer_shape: node {node.name!r} ({node.op.name}) with input "
                             f"shapes {dict(zip(names, ins))}: {e}") from None
        for name, (c, i), s in zip(names, node.inputs, new_ins):
            table.set(c, i, None if s is None else tuple(s), _where(node, "input", name))
        out_names = node.op.list_outputs(node.attrs)
        for i, s in enumerate(new_outs):
            table.set(node, i, None if s is None else tuple(s),
                      _where(node, "output", out_names[i]))

    _sweep(nodes, table, step)
    return nodes, table


def infer_type(sym, args, kwargs, partial=False):
    """``(arg_types, out_types, aux_types)`` (NumPy scalar types such as ``np.float32``, as
    MXNet); (None, None, None) when some type stays unknown, or None for each with
    ``partial``."""
    given = _given(sym, args, kwargs, "infer_type", _dtype_of)
    entries = expand(sym._outputs, {}, given)     # deferred np calls, shapes as declared
    nodes, table = type_table(entries, given)
    args_, outs_, auxs_ = _result(sym, nodes, table, partial, None, outputs=entries)
    if args_ is None:
        return None, None, None
    conv = (lambda d: None if d is None else np.dtype(d).type)
    return [conv(d) for d in args_], [conv(d) for d in outs_], [conv(d) for d in auxs_]


_TYPE_PROBES = (np.dtype("float32"), np.dtype("float64"))


def _type_without_inputs(node, table, names):
    """A node none of whose input dtypes is known yet: ``infer_type`` probed with every
    input float32, then float64. An output dtype both give does not depend on the inputs
    (``Cast``'s ``dtype``) and is known; where the first output follows the inputs (MXNet's
    element-wise type rule) a known output dtype gives the inputs theirs."""
    try:
        runs = [[np.dtype(d) for d in node.op.infer_type([t] * len(names), node.attrs)]
                for t in _TYPE_PROBES]
    except Exception:       # noqa: BLE001 -- a probe that fails teaches nothing
        return
    out_names = node.op.list_outputs(node.attrs)
    for i, (a, b) in enumerate(zip(*runs)):
        if a == b:
            table.set(node, i, a, _where(node, "output", out_names[i]))
    out = table.get(node, 0)
    if out is not None and [r[0] for r in runs] == list(_TYPE_PROBES):
        for name, (c, i) in zip(names, node.inputs):
            table.set(c, i, out, _where(node, "input", name))


def type_table(entries, given):
    """``(nodes, table)`` as ``shape_table``, for dtypes (``np.dtype`` values)."""
    nodes = topo_order(entries)
    table = _Table("type")
    for n in nodes:
        if n.op is None:
            d = given.get(n.name, _seed_dtype(n))      # given as a type (np.float64) too
            table.set(n, 0, None if d is None else np.dtype(d), _where(n, "variable", n.name))

    def step(node):
        if node.op.deferred:        # known once expanded (mxlite.symbol._deferred)
            return
        names = input_names(node)
        ins = [table.get(c, i) for c, i in node.inputs]
        if None in ins:
            known = [d for d in ins if d is not None]
            if not known:
                _type_without_inputs(node, table, names)
                return
            fill = known[0] if dtype_kind(known[0]) == "f" else np.dtype("float32")
            for name, (c, i), d in zip(names, node.inputs, ins):
                if d is None:
                    table.set(c, i, fill, _where(node, "input", name))
            ins = [table.get(c, i) for c, i in node.inputs]
        if table.get(node, 0) is not None and node.inputs:
            return
        try:
            outs = node.op.infer_type(ins, node.attrs)
        except MXNetError as e:
            raise MXNetError(f"infer_type: node {node.name!r} ({node.op.name}) with input "
                             f"types {dict(zip(names, map(_fmt, ins)))}: {e}") from None
        out_names = node.op.list_outputs(node.attrs)
        for i, d in enumerate(outs):
            table.set(node, i, np.dtype(d), _where(node, "output", out_names[i]))

    _sweep(nodes, table, step)
    return nodes, table
