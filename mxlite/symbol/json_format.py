"""MXNet 1.x's symbol JSON (``prefix-symbol.json``): ``tojson`` and ``load_json``.

Layout (what MXNet 1.9.1 writes)::

    {"nodes": [{"op": "null" | op name, "name": ..., "attrs": {str: str}, "inputs":
                [[node_id, output_index, 0], ...]}, ...],
     "arg_nodes": [ids of the variables], "node_row_ptr": [cumulative output counts],
     "heads": [[node_id, output_index, 0], ...],
     "attrs": {"mxnet_version": ["int", 10901]}}

Nodes are in graph order (inputs first). An op node's ``attrs`` hold the parameters the
caller gave, in MXNet's string forms (``OpDef.format_attrs``), and its user attributes; a
variable's hold its attributes (``__shape__``, ``__init__``, ...). Loading also reads the
pre-1.0 keys ``param`` (parameters) and ``attr`` (attributes). On load a key of an op
node that is not one of its parameters is kept as a user attribute when it is one
(``__key__``, ``ctx_group``, ``lr_mult``, ...) or one of MXNet's performance hints that do
not change results (``workspace``, ``cudnn_tune``, ``cudnn_off``); any other key, an
unknown op, a bad reference or bad JSON raise ``MXNetError`` naming the node.

MXNet's ``_zeros``, ``_ones``, ``_full`` (``value``) and ``_arange`` are mxlite's ``zeros``,
``ones``, ``full`` (``val``) and ``arange``: read and written under MXNet's names. Graphs
holding mxlite's own internal ops (gradient graphs: ``sum_to``, ``_conv_weight_grad``, ...)
are written faithfully but MXNet cannot load them.

A file is checked before anything is made from it: bytes that are not UTF-8, nesting too
deep for the parser, a field of the wrong type, a reference to a node that does not come
before its user (so no cycle can be written) and a count parameter that disagrees with the
inputs the node lists raise ``MXNetError`` naming the field. A node has at most
``MAX_NODE_OUTPUTS`` outputs and a graph's nodes at most ``MAX_EXTRA_OUTPUTS`` outputs beyond
one each, so a few bytes (``split`` with ``num_outputs=2**40``) cannot make a symbol whose
output names fill the memory (MXNet 1.9.1 has no such limits).
"""
import json

from ..base import MXNetError
from ..ops.registry import REGISTRY
from ._deferred import DEFERRED
from .graph import SymNode, topo_order

__all__ = ["tojson", "load_json", "MXNET_VERSION", "MAX_NODE_OUTPUTS", "MAX_EXTRA_OUTPUTS"]

MXNET_VERSION = 10901

# Limits on what a loaded graph may declare (a real network is far below them: a node's
# outputs are arrays a caller handles one by one, and each output costs a name in memory)
MAX_NODE_OUTPUTS = 1 << 16
MAX_EXTRA_OUTPUTS = 1 << 20

_USER_KEYS = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
              "profiler_scope"}
# MXNet parameters that only tune speed or memory, never the result
_HINTS = {"workspace", "cudnn_tune", "cudnn_off"}
_SUBGRAPH = "subgraph"          # the parameter holding a loop's body (JSON: "subgraphs")
MAX_SUBGRAPH_DEPTH = 16         # loops in loops a loaded graph may nest


# Ops MXNet registers under another name than mxlite (its Python wrappers ``mx.sym.zeros``
# ... call ``_zeros`` ...): mxlite name -> (MXNet's name, {mxlite param: MXNet param}).
_MXNET_NAMES = {"zeros": ("_zeros", {}), "ones": ("_ones", {}),
                "full": ("_full", {"val": "value"}), "arange": ("_arange", {})}
_FROM_MXNET = {mx_name: (name, {v: k for k, v in renames.items()})
               for name, (mx_name, renames) in _MXNET_NAMES.items()}


def _node_json_attrs(node):
    attrs = {}
    if node.op is not None:
        given = node.attrs if node.given is None else \
            {k: node.attrs[k] for k in node.given if k in node.attrs}
        given = {k: v for k, v in given.items() if k != _SUBGRAPH}     # JSON: "subgraphs"
        renames = _MXNET_NAMES.get(node.op.name, (None, {}))[1]
        attrs.update({renames.get(k, k): v for k, v in node.op.format_attrs(given).items()})
        if _SUBGRAPH in node.attrs and "num_args" in attrs:     # MXNet counts the graphs too
            bodies = node.attrs[_SUBGRAPH]
            attrs["num_args"] = str(node.attrs["num_args"]
                                    + (len(bodies) if isinstance(bodies, tuple) else 1))
    attrs.update(node.user_attrs)
    return attrs


_AMP_CASTS = ("amp_cast", "amp_multicast")


def without_amp_casts(entries):
    """``entries`` (``(node, output)`` pairs) of a graph with every ``amp_cast`` and
    ``amp_multicast`` node taken out, as MXNet's ``remove_amp_cast``: a use of
    ``amp_cast(x)`` reads ``x``, a use of output ``i`` of ``amp_multicast`` its input ``i``.
    Nodes that change are copied; the graph given is left as it is."""
    copies = {}

    def source(entry):
        node, i = entry
        while node.op is not None and node.op.name in _AMP_CASTS:
            node, i = node.inputs[0 if node.op.name == "amp_cast" else i]
        return rebuilt(node), i

    def rebuilt(node):
        if node.op is None:
            return node
        if id(node) not in copies:
            inputs = [source(e) for e in node.inputs]
            if all(a[0] is b[0] and a[1] == b[1] for a, b in zip(inputs, node.inputs)):
                copies[id(node)] = node
            else:
                copy = SymNode(node.op, node.name, node.attrs, inputs, node.user_attrs,
                               node.given)
                copy.seq = node.seq         # the executor's order stays the user's
                copies[id(node)] = copy
        return copies[id(node)]

    return [source(e) for e in entries]


def tojson(sym, remove_amp_cast=False):
    """The graph of ``sym`` as MXNet 1.x's JSON text; ``remove_amp_cast`` leaves out its
    ``amp_cast``/``amp_multicast`` nodes (``without_amp_casts``)."""
    return json.dumps(_graph_dict(sym._outputs, remove_amp_cast), indent=2)


def _graph_dict(heads, remove_amp_cast):
    """The JSON object of the graph of ``heads``; a loop's body goes into its node's
    ``subgraphs`` (MXNet's layout), not its ``attrs``."""
    heads = without_amp_casts(heads) if remove_amp_cast else list(heads)
    nodes = topo_order(heads)
    index = {id(n): i for i, n in enumerate(nodes)}
    out, row_ptr = [], [0]
    for n in nodes:
        opname = "null" if n.op is None else _MXNET_NAMES.get(n.op.name, (n.op.name,))[0]
        item = {"op": opname, "name": n.name}
        attrs = _node_json_attrs(n)
        if attrs:
            item["attrs"] = dict(sorted(attrs.items()))
        mutated = n.op.mutated_indices(n.attrs) if n.op is not None else ()
        # MXNet numbers a variable's versions: an entry an op writes (FMutateInputs) is 1
        item["inputs"] = [[index[id(c)], i, int(k in mutated and c.op is None)]
                          for k, (c, i) in enumerate(n.inputs)]
        if n.op is not None and _SUBGRAPH in n.attrs:
            bodies = n.attrs[_SUBGRAPH]
            bodies = bodies if isinstance(bodies, tuple) else (bodies,)
            item["subgraphs"] = [_graph_dict(b._outputs, remove_amp_cast) for b in bodies]
        out.append(item)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    graph = {"nodes": out,
             "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
             "node_row_ptr": row_ptr,
             "heads": [[index[id(n)], i, 0] for n, i in heads],
             "attrs": {"mxnet_version": ["int", MXNET_VERSION]}}
    if _np_shape():     # its shapes use -1 for unknown (MXNet marks such a graph)
        graph["attrs"]["is_np_shape"] = ["int", 1]
    return graph


def _legacy_shapes_to_np(made):
    """A graph saved with legacy shapes (0: unknown dimension, ``()``: unknown shape) read
    under NumPy-shape semantics: its variables' ``__shape__`` in the new form (MXNet's
    conversion on load), so ``(128, 0)`` still means an unknown second dimension."""
    from ..ops.params import Param
    from .infer import from_partial, to_partial
    for node in made:
        if isinstance(node, _Translated):
            continue
        text = node.user_attrs.get("__shape__") if node.op is None else None
        if text is None:
            continue
        try:
            shape = Param("__shape__", "shape", None).parse(node.name, text)
        except MXNetError:
            continue        # left as it is: inference reports it
        partial = to_partial(shape, np_shape=False)
        if partial is None:
            del node.user_attrs["__shape__"]
        else:
            node.user_attrs["__shape__"] = str(from_partial(partial, np_shape=True))


def _np_shape():
    from .infer import _np_shape as current
    return current()


def _bad(where, message):
    return MXNetError(f"load_json: {where}: {message}")


def _parse(text, source):
    """The JSON value of ``text`` (str or UTF-8 bytes), or MXNetError naming ``source``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise MXNetError(f"load_json: {source} is not UTF-8 text (byte {e.start}: "
                             f"{e.reason})") from None
    if not isinstance(text, str):
        raise MXNetError(f"load_json: expected JSON text (str or bytes), got "
                         f"{type(text).__name__}")
    try:
        return json.loads(text)
    except ValueError as e:
        raise MXNetError(f"load_json: {source} is not valid JSON ({e})") from None
    except RecursionError:
        raise MXNetError(f"load_json: {source} nests lists or objects too deeply for a "
                         "symbol JSON") from None


def _check_counts(op, parsed, n_inputs, where):
    """MXNetError unless the node's count parameters agree with its ``n_inputs`` listed
    inputs and its outputs are within ``MAX_NODE_OUTPUTS``; returns its output count.
    Checked before the inputs and outputs are named (a count of 1e9 would name 1e9)."""
    key = op.key_var_num_args
    if key and parsed.get(key) != n_inputs:
        raise _bad(where, f"{key}={parsed.get(key)!r} but the node lists {n_inputs} input(s)")
    count = op.output_count(parsed)
    if not 1 <= count <= MAX_NODE_OUTPUTS:
        raise _bad(where, f"{op.name} with these parameters has {count} outputs; a loaded "
                   f"node may have 1..{MAX_NODE_OUTPUTS}")
    return count


def _entry(ref, made, where):
    if not isinstance(ref, list) or len(ref) not in (2, 3) or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in ref):
        raise _bad(where, f"an input/head must be [node_id, output_index(, version)], got "
                   f"{_short(ref)}")
    nid, idx = ref[0], ref[1]
    if not 0 <= nid < len(made):
        raise _bad(where, f"refers to node {nid}, but only nodes 0..{len(made) - 1} come "
                   "before it")
    node = made[nid]
    if isinstance(node, _Translated):
        if not 0 <= idx < len(node.outputs):
            raise _bad(where, f"refers to output {idx} of node {node.name!r}, which has "
                       f"{len(node.outputs)} output(s)")
        return node.outputs[idx]
    if not 0 <= idx < node.num_outputs():
        raise _bad(where, f"refers to output {idx} of node {node.name!r}, which has "
                   f"{node.num_outputs()} output(s)")
    return node, idx


def _str_dict(value, where, key):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(where, f"{key!r} must be an object of strings, got {_short(value)}")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def _short(value, limit=200):
    """``repr(value)``, cut to ``limit`` characters (a hostile file's values can be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def load_json(text, source=None):
    """The Symbol described by MXNet JSON ``text`` (as written by MXNet 1.x or ``tojson``);
    errors name ``source`` when given (``symbol.load`` passes the file's name)."""
    graph = _parse(text, source or "the JSON text")
    return _graph_symbol(graph, f"{source}: " if source else "", 0)


def _graph_symbol(graph, prefix, depth):
    """The Symbol of one graph object (a file's, or a loop body's at nesting ``depth``)."""
    from .symbol import Symbol
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list) or \
            not isinstance(graph.get("heads"), list):
        raise MXNetError(f"load_json: {prefix}a symbol JSON is an object with 'nodes' and "
                         "'heads' lists")
    made, extra_outputs = [], 0
    for k, item in enumerate(graph["nodes"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or \
                not isinstance(item.get("op"), str):
            raise MXNetError(f"load_json: {prefix}node {k} must be an object with string "
                             f"'op' and 'name', got {_short(item)}")
        name, opname = item["name"], item["op"]
        where = f"{prefix}node {k} ({_short(name, 80)}, op {_short(opname, 80)})"
        attrs = _str_dict(item.get("attrs"), where, "attrs")
        attrs.update(_str_dict(item.get("attr"), where, "attr"))
        params = _str_dict(item.get("param"), where, "param")
        inputs = item.get("inputs", [])
        if not isinstance(inputs, list):
            raise _bad(where, f"'inputs' must be a list, got {_short(inputs)}")
        entries = [_entry(ref, made, where) for ref in inputs]
        if opname == "null":
            if entries:
                raise _bad(where, "a variable has no inputs")
            attrs.update(params)
            made.append(SymNode(None, name, user_attrs=attrs))
            continue
        if opname.startswith(("_np_", "_npi_", "_npx_")) and opname not in REGISTRY and \
                opname != DEFERRED.name:
            made.append(_translated(opname, name, entries, attrs, where))
            continue
        renames = {}
        if opname in _FROM_MXNET:
            opname, renames = _FROM_MXNET[opname]
            attrs = {renames.get(k, k): v for k, v in attrs.items()}
            params = {renames.get(k, k): v for k, v in params.items()}
        op = DEFERRED if opname == DEFERRED.name else REGISTRY.get(opname)
        if op is None:
            raise _bad(where, f"unknown operator {opname!r}")
        if "is_int" in attrs and "scalar" in op._param_map:
            # MXNet's NumPy interface marks an integer scalar (written "2.0") with is_int
            if attrs.pop("is_int") in ("True", "1", "true"):
                attrs["scalar"] = _int_text(attrs.get("scalar"))
        user = {}
        for key, value in attrs.items():
            if key in op._param_map and key != _SUBGRAPH:
                params[key] = value
            elif (key.startswith("__") and key.endswith("__")) or key in _USER_KEYS \
                    or key in _HINTS:
                user[key] = value
            else:
                raise _bad(where, f"{key!r} is not a parameter of {op.name} (parameters: "
                           f"{sorted(op._param_map)})")
        if _SUBGRAPH in op._param_map:
            params[_SUBGRAPH] = _subgraph_of(item, where, depth)
            if "num_args" in params:        # MXNet's count includes the graphs
                params["num_args"] = _less(params["num_args"], len(item["subgraphs"]), where)
        elif "subgraphs" in item:
            raise _bad(where, f"{op.name} takes no subgraphs")
        if op.key_var_num_args and op.key_var_num_args not in params:
            params[op.key_var_num_args] = str(len(entries))
        try:
            parsed = op.parse_attrs(params)
        except MXNetError as e:
            raise _bad(where, str(e)) from None
        except RecursionError:                  # a parameter in JSON form (an index key)
            raise _bad(where, "a parameter nests lists too deeply") from None
        extra_outputs += _check_counts(op, parsed, len(entries), where) - 1
        try:
            names = op.list_inputs(parsed)
        except MXNetError as e:
            raise _bad(where, str(e)) from None
        if extra_outputs > MAX_EXTRA_OUTPUTS:
            raise _bad(where, f"the graph's nodes have more than {MAX_EXTRA_OUTPUTS} outputs "
                       "beyond one each")
        missing = names[len(entries):]
        if missing and all(m in op.aux_inputs for m in missing):
            # MXNet before 0.9 kept auxiliary states out of the inputs: make them
            # (MXNet's upgrade of old JSON names them <node>_<input> too)
            entries += [(SymNode(None, f"{name}_{m}"), 0) for m in missing]
        if len(names) != len(entries):
            raise _bad(where, f"{op.name} takes {len(names)} input(s) {list(names)} with these "
                       f"parameters, the node lists {len(entries)}")
        made.append(SymNode(op, name, parsed, entries, user, tuple(params)))
    graph_attrs = graph.get("attrs")
    if _np_shape() and not (isinstance(graph_attrs, dict) and "is_np_shape" in graph_attrs):
        _legacy_shapes_to_np(made)
    heads = [_entry(ref, made, f"{prefix}heads") for ref in graph["heads"]]
    if not heads:
        raise MXNetError(f"load_json: {prefix}'heads' is empty")
    return Symbol(heads)


def _int_text(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return text             # the parameter's parser reports it
    return str(int(value)) if value.is_integer() else text


class _Translated:
    """A node of MXNet's NumPy interface (``_npi_add``...) rebuilt from ``mx.np`` calls:
    its outputs are entries of the nodes those calls made."""

    def __init__(self, name, outputs):
        self.name, self.outputs = name, outputs


def _translated(opname, name, entries, attrs, where):
    from .numpy import _Symbol
    from .numpy.json_names import translation
    from ..numpy._front import symbolic_creation
    build = translation(opname)
    if build is None:
        raise _bad(where, f"unknown operator {opname!r} (MXNet's NumPy interface; mxlite "
                   "reads the ones listed in mxlite.symbol.numpy.json_names)")
    inputs = [_Symbol([e]) for e in entries]
    try:
        with symbolic_creation():
            out = build(inputs, {k: v for k, v in attrs.items() if not k.startswith("__")})
    except (MXNetError, TypeError, ValueError, KeyError, SyntaxError) as e:
        raise _bad(where, f"cannot read {opname} with attributes {_short(attrs)}: {e}") \
            from None
    outputs = list(out._outputs)
    nodes = {id(n) for n, _ in outputs}
    if len(nodes) == 1 and outputs[0][0].op is not None:
        outputs[0][0].name = name           # MXNet's node name (output names follow it)
    return _Translated(name, outputs)


def _less(text, n, where):
    try:
        return str(int(text) - n)
    except ValueError:
        raise _bad(where, f"num_args must be an integer, got {_short(text)}") from None


def _subgraph_of(item, where, depth):
    """The graphs a control-flow node's ``subgraphs`` holds: one Symbol (a loop body), or
    a tuple of them (``_cond``'s three); the op checks how many it takes."""
    subs = item.get("subgraphs")
    if not isinstance(subs, list) or not 1 <= len(subs) <= 3:
        raise _bad(where, f"a control-flow node needs 'subgraphs' holding 1 to 3 graphs, "
                   f"got {_short(subs)}")
    if depth >= MAX_SUBGRAPH_DEPTH:
        raise _bad(where, f"subgraphs nest more than {MAX_SUBGRAPH_DEPTH} deep")
    graphs = tuple(_graph_symbol(g, f"{where} subgraph {i}: ", depth + 1)
                   for i, g in enumerate(subs))
    return graphs[0] if len(graphs) == 1 else graphs
