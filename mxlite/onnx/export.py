"""``mx.onnx.export_model``: a Symbol (or a ``-symbol.json``, or a hybridized Gluon block)
with its parameters as an ONNX model, one translation per registered operator
(``table.py``)."""
import difflib
import os

import numpy as np

from ..base import MXNetError
from . import translations  # noqa: F401  (registers every translation)
from ._onnx import require
from .context import ExportContext
from .table import NOT_EXPRESSIBLE, TRANSLATIONS

__all__ = ["export_model", "get_operator_support", "MIN_OPSET", "emit_graph", "Subgraph"]

MIN_OPSET = 17


def get_operator_support(opset_version=None):
    """The registered operators that export at ``opset_version`` (default: the newest the
    installed onnx supports), sorted."""
    opset = _opset(opset_version, require("get_operator_support"))
    return sorted(n for n, t in TRANSLATIONS.items() if t.opset <= opset)


def _opset(asked, onnx):
    newest = onnx.defs.onnx_opset_version()
    opset = newest if asked is None else int(asked)
    if not MIN_OPSET <= opset <= newest:
        raise MXNetError(f"export_model: opset_version {opset} is outside {MIN_OPSET}.."
                         f"{newest} (the installed onnx {onnx.__version__} supports up to "
                         f"{newest})")
    return opset


def _symbol_and_params(sym, params):
    """(Symbol, {name: NDArray}) from a Symbol / ``-symbol.json`` path / hybridized
    HybridBlock and a dict / [arg_params, aux_params] / ``.params`` path."""
    from .. import ndarray as nd
    from .. import symbol as _sym
    from ..gluon import HybridBlock
    if isinstance(sym, HybridBlock):
        block = sym
        if not block._cached_graph:
            raise MXNetError("export_model: the Gluon block must be hybridized and called "
                             "once (block.hybridize(); block(x)) before it is exported")
        sym = block._cached_graph[1]
        if params is None:
            params = {name: p._reduce() for name, p in block.collect_params().items()}
    elif isinstance(sym, (str, os.PathLike)):
        sym = _sym.load(os.fspath(sym))
    if not isinstance(sym, _sym.Symbol):
        raise MXNetError(f"export_model: sym must be a Symbol, a -symbol.json path or a "
                         f"hybridized HybridBlock, got {type(sym).__name__}")
    if isinstance(params, (str, os.PathLike)):
        params = nd.load(os.fspath(params))
    if isinstance(params, (list, tuple)):
        if len(params) != 2:
            raise MXNetError("export_model: params as a list must be [arg_params, aux_params]")
        params = {**params[0], **params[1]}
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise MXNetError(f"export_model: params must be a dict, [arg_params, aux_params] or a "
                         f".params path, got {type(params).__name__}")
    clean = {}
    for k, v in params.items():
        name = k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k
        clean[name] = v
    return sym, clean


def _listify(value, n, what):
    if value is None:
        return [None] * n
    if isinstance(value, tuple) and value and all(isinstance(v, (int, np.integer))
                                                  for v in value):
        value = [value]                 # one shape for one input
    if not isinstance(value, (list, tuple)):
        value = [value] * n
    value = list(value)
    if len(value) == 1 and n > 1 and what == "in_types":
        value = value * n
    if len(value) != n:
        raise MXNetError(f"export_model: {what} has {len(value)} entries for {n} data "
                         f"inputs")
    return value


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path="model.onnx", verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None, opset_version=None):
    """Write ``sym`` with ``params`` as an ONNX model to ``onnx_file_path``; returns the
    path (MXNet 1.9.1's ``mx.onnx.export_model``).

    ``sym``: a Symbol, a ``-symbol.json`` path, or (an mxlite addition) a hybridized Gluon
    block called once, whose parameters are used when ``params`` is None. ``params``: a
    dict (``arg:``/``aux:`` prefixes allowed), ``[arg_params, aux_params]`` or a
    ``.params`` path. ``in_shapes`` / ``in_types``: one per data input (the arguments not in
    ``params``, in ``list_arguments`` order); ``input_shape`` / ``input_type`` are the old
    names. ``dynamic=True`` makes the first axis of every input and output symbolic
    (``batch``), or uses ``dynamic_input_shapes`` (None entries symbolic). The opset is the
    newest the installed onnx supports, or (an mxlite addition) ``opset_version``, from 17:
    an operator whose translation needs a newer one is an MXNetError naming it.
    """
    onnx = require("export_model")
    in_shapes = input_shape if in_shapes is None else in_shapes
    in_types = input_type if input_type is not None else in_types
    sym, params = _symbol_and_params(sym, params)
    opset = _opset(opset_version, onnx)
    from ..symbol.graph import topo_order
    from ..symbol.infer import shape_table, type_table
    args = sym.list_arguments()
    aux = sym.list_auxiliary_states()
    unread = _unread_variables(sym)
    data_names = [a for a in args if a not in params and a not in unread]
    missing_aux = [a for a in aux if a not in params]
    if missing_aux:
        raise MXNetError(f"export_model: params lack the auxiliary states {missing_aux}")
    shapes = _listify(in_shapes, len(data_names), "in_shapes")
    types = _listify(in_types, len(data_names), "in_types")
    if any(s is None for s in shapes):
        raise MXNetError(f"export_model: in_shapes must give the shape of every data input "
                         f"{data_names}")
    given_shapes = {n: tuple(int(d) for d in s) for n, s in zip(data_names, shapes)}
    given_types = {n: np.dtype(t) for n, t in zip(data_names, types)}
    for name, value in params.items():
        given_shapes[name] = tuple(value.shape)
        given_types[name] = np.dtype(value.dtype)
    from ..symbol._deferred import expand
    entries = expand(sym._outputs, given_shapes, given_types)    # deferred np calls, made
    _check_translations(topo_order(entries), opset)
    try:
        nodes, shape_tab = shape_table(entries, given_shapes)
        _, type_tab = type_table(entries, given_types)
    except MXNetError as e:
        raise MXNetError(f"export_model: the shapes and dtypes of the graph cannot be inferred "
                         f"from in_shapes {shapes}: {e}") from None
    for node in nodes:
        for i in range(node.num_outputs()):
            if shape_tab.get(node, i) is None:
                raise MXNetError(f"export_model: the shape of node {node.name!r} output {i} "
                                 f"cannot be inferred from in_shapes {shapes}")
    ctx = ExportContext(onnx, opset, shape_tab, type_tab, dynamic)
    names = _value_names(ctx, nodes)
    helper = onnx.helper
    inputs, used_params = [], set()
    dyn = _dynamic_shapes(data_names, given_shapes, dynamic, dynamic_input_shapes)
    for node in nodes:
        if node.op is not None or node.name in unread:
            continue
        if node.name in params:
            used_params.add(node.name)
            ctx.initializers.append(onnx.numpy_helper.from_array(
                params[node.name].asnumpy(), names[(id(node), 0)]))
        else:
            inputs.append(helper.make_tensor_value_info(
                names[(id(node), 0)], _tensor_type(onnx, given_types[node.name]),
                dyn[node.name]))
    _translate(ctx, nodes, names)
    outputs = []
    for n, i in entries:
        shape = list(shape_tab.get(n, i))
        if dynamic and shape:
            shape[0] = "batch"
        outputs.append(helper.make_tensor_value_info(
            names[(id(n), i)], _tensor_type(onnx, type_tab.get(n, i)), shape))
    graph = helper.make_graph(ctx.nodes, "mxlite", inputs, outputs, ctx.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="mxlite")
    if run_shape_inference:
        model = onnx.shape_inference.infer_shapes(model)
    onnx.save(model, os.fspath(onnx_file_path))
    if verbose:
        print(helper.printable_graph(model.graph))
    return onnx_file_path


def _unread_variables(sym):
    """Variables every consumer of which does not read them in ONNX (a loss layer's label:
    ``Translation.unread``); they are not inputs of the exported graph."""
    from ..symbol.graph import topo_order
    read, unread = set(), set()
    for node in topo_order(sym._outputs):
        if node.op is None:
            continue
        t = TRANSLATIONS.get(node.op.name)
        skip = t.unread if t is not None else ()
        for pos, (child, _) in enumerate(node.inputs):
            if child.op is None:
                (unread if pos in skip else read).add(child.name)
    return unread - read


def _tensor_type(onnx, dtype):
    return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _dynamic_shapes(data_names, shapes, dynamic, dynamic_input_shapes):
    """Each data input's ONNX shape: static, or with a symbolic batch axis."""
    if dynamic_input_shapes is not None:
        if len(dynamic_input_shapes) != len(data_names):
            raise MXNetError(f"export_model: dynamic_input_shapes has "
                             f"{len(dynamic_input_shapes)} entries for {len(data_names)} data "
                             "inputs")
        return {n: [d if d is not None else f"{n}_dim{i}" for i, d in enumerate(s)]
                for n, s in zip(data_names, dynamic_input_shapes)}
    out = {}
    for n in data_names:
        s = list(shapes[n])
        if dynamic and s:
            s[0] = "batch"
        out[n] = s
    return out


def _value_names(ctx, nodes):
    """The ONNX name of every mxlite value: a variable's own name, an op's output names
    (``fc1_output``), ``<node>_hidden<i>`` for a hidden output."""
    names = {}
    for node in nodes:
        if node.op is None:
            names[(id(node), 0)] = ctx.reserve(node.name)
            continue
        visible = node.output_names()
        for i in range(node.num_outputs()):
            name = visible[i] if i < len(visible) else f"{node.name}_hidden{i}"
            names[(id(node), i)] = ctx.reserve(name)
    return names


def _check_translations(nodes, opset):
    """MXNetError before anything is written: an op without a translation (with the nearest
    ones that have one) or needing a newer opset."""
    for node in nodes:
        if node.op is None:
            continue
        name = node.op.name
        t = TRANSLATIONS.get(name)
        if t is None:
            why = NOT_EXPRESSIBLE.get(name)
            near = difflib.get_close_matches(name, list(TRANSLATIONS), n=3)
            raise MXNetError(
                f"export_model: no ONNX translation for operator {name!r} (node "
                f"{node.name!r})" + (f": {why}" if why else "")
                + (f"; operators with one that are close: {near}" if near else ""))
        if t.opset > opset:
            raise MXNetError(f"export_model: operator {name!r} (node {node.name!r}) needs ONNX "
                             f"opset {t.opset}, the export targets {opset}")


def _translate(ctx, nodes, names):
    """Write the ONNX nodes of the operator nodes of ``nodes`` (in order) into ``ctx``;
    ``names``: the ONNX name of every value."""
    for node in nodes:
        if node.op is None:
            continue
        ins = [names[(id(c), i)] for c, i in node.inputs]
        outs = [names[(id(node), i)] for i in range(node.num_outputs())]
        TRANSLATIONS[node.op.name].fn(ctx, node, ins, outs)


# ---- graphs inside a node: a loop's body, a branch (``_foreach``, ``_while_loop``, ``_cond``)
def _scope(ctx, shapes, dtypes, nodes):
    """An ExportContext over another graph's shape and dtype tables that writes its nodes to
    ``nodes`` and shares ``ctx``'s names and initializers: ONNX wants every value name
    unique across a model and its subgraphs, and a subgraph may read an outer initializer."""
    scope = ExportContext(ctx.onnx, ctx.opset, shapes, dtypes, ctx.dynamic)
    scope._names = ctx._names
    scope.initializers = ctx.initializers
    scope.nodes = nodes
    return scope


def emit_graph(ctx, sym, bound, shapes, dtypes):
    """Translate the graph ``sym`` into ``ctx`` (its nodes added to ``ctx.nodes``), each of
    its variables read as the ONNX value ``bound[name]``, at the variables' ``shapes`` and
    ``dtypes`` ({name: ...}). Returns the ONNX names of ``sym``'s outputs (a variable's is
    its bound name). An operator inside without a translation is an MXNetError."""
    from ..symbol.graph import topo_order
    from ..symbol.infer import shape_table, type_table
    entries = sym._outputs
    nodes = topo_order(entries)
    _check_translations(nodes, ctx.opset)
    try:
        nodes, shape_tab = shape_table(entries, dict(shapes))
        _, type_tab = type_table(entries, dict(dtypes))
    except MXNetError as e:
        raise MXNetError(f"export_model: the shapes and dtypes of a subgraph cannot be "
                         f"inferred from its inputs {dict(shapes)}: {e}") from None
    scope = _scope(ctx, shape_tab, type_tab, ctx.nodes)
    names = {}
    for node in nodes:
        if node.op is None:
            if node.name not in bound:
                raise MXNetError(f"export_model: subgraph variable {node.name!r} is bound to "
                                 "no value")
            names[(id(node), 0)] = bound[node.name]
            continue
        for i, visible in enumerate(node.output_names()):
            names[(id(node), i)] = scope.fresh(visible)
        for i in range(len(node.output_names()), node.num_outputs()):
            names[(id(node), i)] = scope.fresh(f"{node.name}_hidden{i}")
        if any(shape_tab.get(node, i) is None for i in range(node.num_outputs())):
            raise MXNetError(f"export_model: the shape of subgraph node {node.name!r} cannot "
                             f"be inferred from its inputs {dict(shapes)}")
    _translate(scope, nodes, names)
    return [names[(id(n), i)] for n, i in entries]


class Subgraph:
    """An ONNX graph under construction for a graph attribute (a Loop's or Scan's body, an
    If's branch), inside the export ``ctx``: ``input`` declares its inputs in order,
    ``emit`` translates an mxlite graph into it, ``output`` declares its outputs in order,
    ``proto`` gives the GraphProto. Values of the enclosing graphs may be read by name."""

    def __init__(self, ctx, name):
        self.ctx, self.name = ctx, name
        self.nodes, self.inputs, self.outputs = [], [], []
        self.scope = _scope(ctx, None, None, self.nodes)

    def input(self, base, dtype, shape):
        """A new graph input of ``dtype`` and ``shape`` (a tuple; None: unknown); returns
        its name."""
        name = self.ctx.fresh(base)
        self.inputs.append(self._info(name, dtype, shape))
        return name

    def output(self, value, dtype, shape):
        """Declare ``value`` (a name in this graph or an enclosing one) the next output,
        through an Identity (an output must be computed in the graph itself)."""
        name = self.scope.node("Identity", [value])
        self.outputs.append(self._info(name, dtype, shape))
        return name

    def emit(self, sym, bound, shapes, dtypes):
        """``emit_graph`` into this graph."""
        return emit_graph(self.scope, sym, bound, shapes, dtypes)

    def _info(self, name, dtype, shape):
        return self.ctx.helper.make_tensor_value_info(
            name, _tensor_type(self.ctx.onnx, dtype), None if shape is None else list(shape))

    def proto(self):
        """The finished GraphProto."""
        return self.ctx.helper.make_graph(self.nodes, self.ctx.fresh(self.name), self.inputs,
                                          self.outputs)
