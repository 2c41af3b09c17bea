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
"""
import json

from ..base import MXNetError
from ..ops.registry import REGISTRY
from .graph import SymNode, topo_order

__all__ = ["tojson", "load_json", "MXNET_VERSION"]

MXNET_VERSION = 10901

_USER_KEYS = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
              "profiler_scope"}
# MXNet parameters that only tune speed or memory, never the result
_HINTS = {"workspace", "cudnn_tune", "cudnn_off"}


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
        renames = _MXNET_NAMES.get(node.op.name, (None, {}))[1]
        attrs.update({renames.get(k, k): v for k, v in node.op.format_attrs(given).items()})
    attrs.update(node.user_attrs)
    return attrs


def tojson(sym):
    """The graph of ``sym`` as MXNet 1.x's JSON text."""
    nodes = topo_order(sym._outputs)
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
        out.append(item)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    graph = {"nodes": out,
             "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
             "node_row_ptr": row_ptr,
             "heads": [[index[id(n)], i, 0] for n, i in sym._outputs],
             "attrs": {"mxnet_version": ["int", MXNET_VERSION]}}
    return json.dumps(graph, indent=2)


def _bad(where, message):
    return MXNetError(f"load_json: {where}: {message}")


def _entry(ref, made, where):
    if not isinstance(ref, list) or len(ref) not in (2, 3) or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in ref):
        raise _bad(where, f"an input/head must be [node_id, output_index(, version)], got "
                   f"{ref!r}")
    nid, idx = ref[0], ref[1]
    if not 0 <= nid < len(made):
        raise _bad(where, f"refers to node {nid}, but only nodes 0..{len(made) - 1} come "
                   "before it")
    node = made[nid]
    if not 0 <= idx < node.num_outputs():
        raise _bad(where, f"refers to output {idx} of node {node.name!r}, which has "
                   f"{node.num_outputs()} output(s)")
    return node, idx


def _str_dict(value, where, key):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(where, f"{key!r} must be an object of strings, got {value!r}")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def load_json(text):
    """The Symbol described by MXNet JSON ``text`` (as written by MXNet 1.x or ``tojson``)."""
    from .symbol import Symbol
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        graph = json.loads(text)
    except (ValueError, TypeError) as e:
        raise MXNetError(f"load_json: not valid JSON ({e})") from None
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list) or \
            not isinstance(graph.get("heads"), list):
        raise MXNetError("load_json: a symbol JSON is an object with 'nodes' and 'heads' lists")
    made = []
    for k, item in enumerate(graph["nodes"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or \
                not isinstance(item.get("op"), str):
            raise MXNetError(f"load_json: node {k} must be an object with string 'op' and "
                             f"'name', got {item!r}")
        name, opname = item["name"], item["op"]
        where = f"node {k} ({name!r}, op {opname!r})"
        attrs = _str_dict(item.get("attrs"), where, "attrs")
        attrs.update(_str_dict(item.get("attr"), where, "attr"))
        params = _str_dict(item.get("param"), where, "param")
        inputs = item.get("inputs", [])
        if not isinstance(inputs, list):
            raise _bad(where, f"'inputs' must be a list, got {inputs!r}")
        entries = [_entry(ref, made, where) for ref in inputs]
        if opname == "null":
            if entries:
                raise _bad(where, "a variable has no inputs")
            attrs.update(params)
            made.append(SymNode(None, name, user_attrs=attrs))
            continue
        renames = {}
        if opname in _FROM_MXNET:
            opname, renames = _FROM_MXNET[opname]
            attrs = {renames.get(k, k): v for k, v in attrs.items()}
            params = {renames.get(k, k): v for k, v in params.items()}
        op = REGISTRY.get(opname)
        if op is None:
            raise _bad(where, f"unknown operator {opname!r}")
        user = {}
        for key, value in attrs.items():
            if key in op._param_map:
                params[key] = value
            elif (key.startswith("__") and key.endswith("__")) or key in _USER_KEYS \
                    or key in _HINTS:
                user[key] = value
            else:
                raise _bad(where, f"{key!r} is not a parameter of {op.name} (parameters: "
                           f"{sorted(op._param_map)})")
        if op.key_var_num_args and op.key_var_num_args not in params:
            params[op.key_var_num_args] = str(len(entries))
        try:
            parsed = op.parse_attrs(params)
            names = op.list_inputs(parsed)
        except MXNetError as e:
            raise _bad(where, str(e)) from None
        missing = names[len(entries):]
        if missing and all(m in op.aux_inputs for m in missing):
            # MXNet before 0.9 kept auxiliary states out of the inputs: make them
            # (MXNet's upgrade of old JSON names them <node>_<input> too)
            entries += [(SymNode(None, f"{name}_{m}"), 0) for m in missing]
        if len(names) != len(entries):
            raise _bad(where, f"{op.name} takes {len(names)} input(s) {list(names)} with these "
                       f"parameters, the node lists {len(entries)}")
        made.append(SymNode(op, name, parsed, entries, user, tuple(params)))
    heads = [_entry(ref, made, "heads") for ref in graph["heads"]]
    if not heads:
        raise MXNetError("load_json: 'heads' is empty")
    return Symbol(heads)

