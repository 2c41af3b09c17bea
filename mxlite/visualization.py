"""``mx.viz``: a symbol's layers as a table (``print_summary``) or a graph (``plot_network``).

``plot_network`` returns a ``graphviz.Digraph``; the graphviz Python package is an optional
extra (``pip install 'mxlite[viz]'``), imported only when the function is called.

Which variables are parameters. A variable is a *parameter* when every operator that reads
it reads it at a parameter input (the registry's input names ``weight``, ``bias``,
``gamma``, ``beta``, ``parameters``, or an auxiliary state such as BatchNorm's
``moving_mean``); every other variable (data, labels, the operands of ``a + b``) is a *data
input* and appears as a layer. MXNet decided by the variable's name (``*_weight``,
``*_bias``, ...), so a user-named weight showed up as a layer; mxlite decides by use.

Graph nodes are named by their position in the graph, not by their names, so two nodes with
one name (``FullyConnected(name='fc')`` twice) stay two nodes; a warning still says that
names repeat, as MXNet's does, since the labels are then ambiguous.
"""
import json
import warnings

import numpy as np

from .base import MXNetError

__all__ = ["print_summary", "plot_network"]


# the registry's names of inputs that hold learned values
_PARAMETER_INPUTS = frozenset({"weight", "bias", "gamma", "beta", "parameters"})


class _Graph:
    """A symbol's nodes (its JSON) with what both views need: which variables are
    parameters, each node's output shapes and dtypes (when inferable)."""

    def __init__(self, symbol, where, shape=None, dtype=None):
        from .symbol import Symbol
        if not isinstance(symbol, Symbol):
            raise MXNetError(f"viz.{where}: symbol must be a Symbol, got {type(symbol).__name__}")
        self.where = where
        self.symbol = symbol
        graph = json.loads(symbol.tojson())
        self.nodes = graph["nodes"]
        self.heads = graph["heads"]
        self.params = self._parameter_variables()
        self.shapes = self._outputs(shape, "shape")
        self.dtypes = self._outputs(dtype, "dtype")

    def _input_names(self, node):
        """The registry's names of a node's inputs, and those that are auxiliary states."""
        from .ops.registry import get_op
        op = get_op(node["op"])
        return op.list_inputs(op.parse_attrs(node.get("attrs", {}))), set(op.aux_inputs)

    def _parameter_variables(self):
        """Indices of the variables every reader reads at a non-data input."""
        at_data, at_param = set(), set()
        for node in self.nodes:
            if node["op"] == "null":
                continue
            names, aux = self._input_names(node)
            for slot, (src, _, _) in enumerate(node["inputs"]):
                if self.nodes[src]["op"] != "null":
                    continue
                name = names[slot] if slot < len(names) else None
                is_param = name in _PARAMETER_INPUTS or name in aux
                (at_param if is_param else at_data).add(src)
        return at_param - at_data

    def _outputs(self, given, what):
        """{(node, output index): shape or dtype} inferred from ``given`` (a dict of the
        data inputs'), or {} when nothing is given."""
        if given is None:
            return {}
        if not isinstance(given, dict):
            raise MXNetError(f"viz.{self.where}: {what} must be a dict of input name -> "
                             f"{what}, got {type(given).__name__}")
        internals = self.symbol.get_internals()
        infer = internals.infer_shape if what == "shape" else internals.infer_type
        try:
            _, outs, _ = infer(**given)
        except MXNetError as e:
            raise MXNetError(f"viz.{self.where}: cannot infer the {what}s from {given}: {e}") \
                from e
        if outs is None:
            raise MXNetError(f"viz.{self.where}: the {what}s {given} do not determine every "
                             f"output")
        keys = [(i, k) for i, node in enumerate(self.nodes)
                for k in range(self._num_outputs(node))]
        if len(keys) != len(outs):      # a programming error: the views would mislabel
            raise MXNetError(f"viz.{self.where}: {len(outs)} inferred outputs for "
                             f"{len(keys)} node outputs")
        return dict(zip(keys, outs))

    def _num_outputs(self, node):
        if node["op"] == "null":
            return 1
        from .ops.registry import get_op
        op = get_op(node["op"])
        return op.num_visible_outputs(op.parse_attrs(node.get("attrs", {})))

    def shown(self, index, hide_weights=True):
        """Whether a node is a layer of the views (operators and data inputs)."""
        return not (hide_weights and index in self.params)

    def node_shapes(self, index):
        return [self.shapes[(index, k)] for k in range(self._num_outputs(self.nodes[index]))
                if (index, k) in self.shapes]

    def param_count(self, index, counted):
        """The number of parameter values a node reads (each shared parameter counted at
        its first reader only)."""
        total = 0
        for src, _, _ in self.nodes[index]["inputs"]:
            if src in self.params and src not in counted:
                counted.add(src)
                shape = self.shapes.get((src, 0))
                total += int(np.prod(shape, dtype=np.int64)) if shape else 0
        return total

    def repeated_names(self):
        seen, repeated = set(), []
        for node in self.nodes:
            if node["name"] in seen and node["name"] not in repeated:
                repeated.append(node["name"])
            seen.add(node["name"])
        return repeated


def _shape_text(shapes):
    if not shapes:
        return ""
    if len(shapes) == 1:
        return str(tuple(shapes[0]))
    if all(s == shapes[0] for s in shapes):
        return f"{len(shapes)} x {tuple(shapes[0])}"
    return ", ".join(str(tuple(s)) for s in shapes)


def _row(fields, positions):
    """One line of the table: each field cut to its column and padded to the next stop."""
    line = ""
    for field, stop in zip(fields, positions):
        line = (line + str(field))[:stop - 1].ljust(stop)
    return line.rstrip()


_MAX_LINE = 1000        # a table wider than this is a mistake, not a layout


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Print a table of ``symbol``'s layers: name (type), output shape, number of
    parameters and the layers it reads, then the total number of parameters. ``shape``
    (a dict of the data inputs' shapes) lets it infer output shapes and parameter counts;
    without it those columns stay empty and the counts are 0. ``positions`` are the
    columns' right edges, as fractions of ``line_length`` (or absolute when above 1)."""
    if (not isinstance(line_length, int) or isinstance(line_length, bool)
            or not 20 <= line_length <= _MAX_LINE):
        raise MXNetError(f"viz.print_summary: line_length must be an integer from 20 to "
                         f"{_MAX_LINE}, got {line_length!r}")
    try:
        edges = [float(p) for p in positions]
    except (TypeError, ValueError):
        edges = []
    if (len(edges) != 4 or edges != sorted(edges) or edges[0] <= 0
            or edges[-1] > max(1.0, line_length)):
        raise MXNetError(f"viz.print_summary: positions must be 4 increasing column edges "
                         f"(fractions of line_length, or columns up to it), got {positions!r}")
    graph = _Graph(symbol, "print_summary", shape=shape)
    stops = [int(line_length * p) if p <= 1 else int(p) for p in edges]
    lines = ["_" * line_length,
             _row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], stops),
             "=" * line_length]
    counted, total = set(), 0
    for i, node in enumerate(graph.nodes):
        if not graph.shown(i):
            continue
        kind = "Variable" if node["op"] == "null" else node["op"]
        params = graph.param_count(i, counted)
        total += params
        previous = [graph.nodes[src]["name"] for src, _, _ in node["inputs"] if graph.shown(src)]
        first = [f"{node['name']}({kind})", _shape_text(graph.node_shapes(i)), params,
                 previous[0] if previous else ""]
        lines.append(_row(first, stops))
        for name in previous[1:]:
            lines.append(_row(["", "", "", name], stops))
        lines.append("_" * line_length)
    lines.append(f"Total params: {total}")
    lines.append("_" * line_length)
    print("\n".join(lines))


# Fill colours by operator family (the palette is colour-blind safe)
_COLOURS = {"null": "#8dd3c7", "FullyConnected": "#fb8072", "Convolution": "#fb8072",
            "Deconvolution": "#fb8072", "Activation": "#ffffb3", "LeakyReLU": "#ffffb3",
            "BatchNorm": "#bebada", "Pooling": "#80b1d3", "Concat": "#fdb462",
            "Flatten": "#fdb462", "Reshape": "#fdb462", "SoftmaxOutput": "#b3de69"}
_DEFAULT_COLOUR = "#fccde5"


def _label(node):
    """A node's text: its name, and for an operator its type and main settings."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == "null":
        return node["name"]
    detail = []
    if op == "Convolution" or op == "Deconvolution":
        detail.append(f"{attrs.get('kernel', '')}/{attrs.get('stride', '(1)')}, "
                      f"{attrs.get('num_filter', '')}")
    elif op == "FullyConnected":
        detail.append(attrs.get("num_hidden", ""))
    elif op in ("Activation", "LeakyReLU"):
        detail.append(attrs.get("act_type", ""))
    elif op == "Pooling":
        detail.append(f"{attrs.get('pool_type', 'max')}, {attrs.get('kernel', '')}")
    return "\n".join([node["name"], op] + [d for d in detail if d])


def _edge_label(graph, src, index):
    parts = []
    shape = graph.shapes.get((src, index))
    if shape is not None:
        parts.append("x".join(str(d) for d in shape) if shape else "scalar")
    dtype = graph.dtypes.get((src, index))
    if dtype is not None:
        parts.append(np.dtype(dtype).name)
    return "\n".join(parts)


def _graphviz():
    try:
        import graphviz
    except ImportError:
        raise MXNetError("viz.plot_network needs the graphviz Python package: "
                         "pip install 'mxlite[viz]' (or pip install graphviz)") from None
    return graphviz


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None,
                 node_attrs=None, hide_weights=True):
    """``symbol``'s graph as a ``graphviz.Digraph`` (render it with ``.render()``, or view
    it in a notebook): a node per operator and data input (and parameter, unless
    ``hide_weights``), an edge from each producer to its reader, labelled with the shape
    (``shape``: a dict of the data inputs' shapes) and dtype (``dtype``: a dict of theirs)
    where given. ``node_attrs`` adds graphviz attributes to every node."""
    graphviz = _graphviz()
    if node_attrs is not None and not isinstance(node_attrs, dict):
        raise MXNetError(f"viz.plot_network: node_attrs must be a dict, got "
                         f"{type(node_attrs).__name__}")
    graph = _Graph(symbol, "plot_network", shape=shape, dtype=dtype)
    repeated = graph.repeated_names()
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph: "
                      f"{', '.join(repeated)}; the plot keeps them apart but their labels "
                      "are ambiguous", stacklevel=2)
    style = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
             "style": "filled"}
    style.update({str(k): str(v) for k, v in (node_attrs or {}).items()})
    dot = graphviz.Digraph(name=title, format=save_format)
    for i, node in enumerate(graph.nodes):
        if not graph.shown(i, hide_weights):
            continue
        colour = _COLOURS.get(node["op"], _DEFAULT_COLOUR)
        shape_attr = {"shape": "oval"} if node["op"] == "null" else {}
        dot.node(f"n{i}", _label(node), **{**style, **shape_attr, "fillcolor": colour})
    for i, node in enumerate(graph.nodes):
        if not graph.shown(i, hide_weights):
            continue
        for src, index, _ in node["inputs"]:
            if graph.shown(src, hide_weights):
                dot.edge(f"n{src}", f"n{i}", label=_edge_label(graph, src, index))
    return dot
