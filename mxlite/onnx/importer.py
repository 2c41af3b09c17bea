"""``mx.contrib.onnx``: ONNX models as mxlite Symbols (``import_model``), their inputs and
outputs (``get_model_metadata``), and as Gluon blocks (``import_to_gluon``).

Every ONNX value becomes either a constant (a NumPy array: an initializer, a ``Constant``,
or anything computed from constants and static shapes, folded at import time: the shape
arithmetic of an exported dynamic reshape) or a Symbol. A constant a Symbol reads becomes
a parameter (in ``arg_params``, or ``aux_params`` for BatchNormalization's statistics).
Shapes come from ONNX's shape inference at the model's input shapes.
"""
import os

import numpy as np

from ..base import MXNetError
from ._onnx import require
from .context import Names
from . import (import_control, import_more, import_ops,  # noqa: F401  (the importers)
               import_scatter)
from .import_table import IMPORTS

__all__ = ["import_model", "get_model_metadata", "import_to_gluon", "Value"]


class Value:
    """One ONNX value: ``const`` (a NumPy array) or ``sym`` (a Symbol), with its static
    ``shape`` (None where unknown) and dtype. ``infer`` (a function giving (shape, dtype))
    fills in an unknown shape or dtype when first read."""

    __slots__ = ("const", "sym", "_shape", "_dtype", "_infer")

    def __init__(self, const=None, sym=None, shape=None, dtype=None, infer=None):
        self.const, self.sym = const, sym
        if const is not None:
            shape, dtype = const.shape, const.dtype
        self._shape = None if shape is None else tuple(shape)
        self._dtype = None if dtype is None else np.dtype(dtype)
        self._infer = infer if self._shape is None or self._dtype is None else None

    def _resolve(self):
        infer, self._infer = self._infer, None
        shape, dtype = infer()
        self._shape = self._shape if self._shape is not None or shape is None else tuple(shape)
        self._dtype = self._dtype if self._dtype is not None or dtype is None else \
            np.dtype(dtype)

    @property
    def shape(self):
        if self._shape is None and self._infer is not None:
            self._resolve()
        return self._shape

    @property
    def dtype(self):
        if self._dtype is None and self._infer is not None:
            self._resolve()
        return self._dtype

    @property
    def is_const(self):
        return self.const is not None


class ImportContext(Names):
    """What an importer reads: attributes, constants, symbols, shapes; and where the
    constants a symbol reads go (``params``, ``aux``)."""

    def __init__(self, onnx, model, shapes):
        super().__init__()
        self.onnx, self.model = onnx, model
        self.shapes = shapes               # value name -> (shape, dtype) from shape inference
        self.params, self.aux = {}, set()
        self.inputs = {}                   # graph input name -> (static shape or None, dtype)
        self.placeholders = {}             # loop body input variable name -> Value
        self._node_memo = {}               # id(node) -> (node, shapes, dtypes, scalar): infer

    def attr(self, node, name, default=None):
        for a in node.attribute:
            if a.name == name:
                return self.onnx.helper.get_attribute_value(a)
        return default

    @property
    def opset(self):
        """The model's default-domain opset."""
        return next((o.version for o in self.model.opset_import
                     if o.domain in ("", "ai.onnx")), None)

    def error(self, node, what):
        """MXNetError: ``node`` asks for ``what``, which the import cannot honour (named with
        its operator and the model's opset)."""
        return MXNetError(f"import_model: ONNX node {node.name!r} ({node.op_type}, opset "
                          f"{self.opset}): {what}")

    def const(self, node, value, what):
        """``value``'s array; MXNetError unless it is known at import time."""
        if value is None or not value.is_const:
            raise self.error(node, f"{what} must be a constant (an initializer, a Constant, or "
                                   "computed from them and static shapes)")
        return value.const

    def sym(self, value, name=None, aux=False):
        """``value`` as a Symbol (a constant becomes a parameter)."""
        from .. import symbol as _sym
        if value.sym is not None:
            return value.sym
        name = self.reserve(name or self.fresh("const"))
        self.params[name] = value.const
        if aux:
            self.aux.add(name)
        value.sym = _sym.var(name, shape=value.shape, dtype=value.dtype)
        return value.sym

    def out(self, sym, node, i=0):
        """The Value of ``node``'s output ``i``, computed by ``sym``: its shape and dtype from
        ONNX's shape inference, else from mxlite's own inference of ``sym`` (``infer``: ONNX
        infers none past shape arithmetic it does not propagate, a Range over a folded
        Shape, nor inside a loop body whose states it does not know)."""
        shape, dtype = self.shapes.get(node.output[i], (None, None))
        return Value(sym=sym, shape=shape, dtype=dtype, infer=lambda: self.infer(sym))

    def infer(self, sym):
        """(shape, dtype) of ``sym``'s single output from the variables the import knows
        (the model's inputs, the parameters, the loop bodies' placeholders), node by node
        with each node's shapes and dtypes kept (``_inferred``: an import is linear in its
        nodes); None for what cannot be inferred, and for a shape (1,) that may be a
        scalar's (a scalar parameter is read as (1,): mxlite's symbolic shapes read () as
        unknown, and it broadcasts the same)."""
        if len(sym._outputs) != 1:
            return None, None
        node, i = sym._outputs[0]
        _, shapes, dtypes, scalar = self._inferred(node)
        shape = None if shapes is None else shapes[i]
        if shape is not None and scalar and tuple(shape) == (1,):
            shape = None
        return shape, None if dtypes is None else dtypes[i]

    def _inferred(self, top):
        """(node, output shapes or None, output dtypes or None, whether a scalar parameter
        was read as (1,)) of the node ``top``, inferring the nodes under it not inferred
        yet (depth first, without recursion)."""
        memo = self._node_memo
        stack = [top]
        while stack:
            n = stack[-1]
            if id(n) in memo:
                stack.pop()
                continue
            pending = [c for c, _ in n.inputs if id(c) not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            memo[id(n)] = (n,) + self._node_inferred(n, memo)
        return memo[id(top)]

    def _node_inferred(self, n, memo):
        if n.op is None:
            shape = dtype = None
            scalar = False
            if n.name in self.params:
                shape, dtype = np.shape(self.params[n.name]), self.params[n.name].dtype
                if shape == ():
                    shape, scalar = (1,), True
            elif n.name in self.placeholders:
                v = self.placeholders[n.name]
                shape, dtype = v.shape, v.dtype
            elif n.name in self.inputs:
                shape, dtype = self.inputs[n.name]
            return ([tuple(shape)] if shape is not None else None,
                    [np.dtype(dtype)] if dtype is not None else None, scalar)
        ins = [(memo[id(c)], i) for c, i in n.inputs]
        scalar = any(m[3] for m, _ in ins)
        shapes = dtypes = None
        if all(m[1] is not None for m, _ in ins):
            try:
                out = n.op.infer_shape([m[1][i] for m, i in ins], n.attrs)
                if all(s and all(d > 0 for d in s) for s in out):
                    shapes = [tuple(int(d) for d in s) for s in out]
            except (MXNetError, TypeError, ValueError, IndexError):
                pass
        if all(m[2] is not None for m, _ in ins):
            try:
                dtypes = [np.dtype(t) for t in n.op.infer_type([m[2][i] for m, i in ins],
                                                               n.attrs)]
            except (MXNetError, TypeError, ValueError, IndexError):
                pass
        return shapes, dtypes, scalar


def _load(onnx, path):
    if not os.path.exists(path):
        raise MXNetError(f"import_model: no such file {path!r}")
    try:
        model = onnx.load(os.fspath(path))
    except Exception as e:                      # noqa: BLE001 - protobuf's DecodeError, etc.
        raise MXNetError(f"import_model: {path!r} is not a readable ONNX model (truncated or "
                         f"corrupt?): {type(e).__name__}: {e}") from None
    if not model.graph.node and not model.graph.output:
        raise MXNetError(f"import_model: {path!r} holds no ONNX graph")
    return model


def _dims(value_info):
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)


def _np_dtype(onnx, elem_type):
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))


def _graph_inputs(model):
    init = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in init]


def get_model_metadata(model_file):
    """``{'input_tensor_data': [(name, shape)], 'output_tensor_data': [(name, shape)]}`` of
    an ONNX file (MXNet's ``get_model_metadata``; a symbolic dimension is None)."""
    onnx = require("get_model_metadata")
    model = _load(onnx, model_file)
    return {"input_tensor_data": [(i.name, _dims(i)) for i in _graph_inputs(model)],
            "output_tensor_data": [(o.name, _dims(o)) for o in model.graph.output]}


def _subgraphs(graph):
    """The graphs held by ``graph``'s nodes' attributes (Loop, Scan and If bodies), nested
    ones included."""
    for node in graph.node:
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield g
                yield from _subgraphs(g)


def _inferred(onnx, model):
    """{value name: (shape, dtype)} by ONNX shape inference with data propagation (the
    values of control-flow bodies too, per iteration; the main graph's names first)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:                           # noqa: BLE001 - best effort
        inferred = model
    out = {}
    for graph in [inferred.graph, *_subgraphs(inferred.graph)]:
        for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
            if vi.type.HasField("tensor_type") and vi.name not in out:
                dims = _dims(vi)
                out[vi.name] = (None if dims is None or None in dims else dims,
                                _np_dtype(onnx, vi.type.tensor_type.elem_type))
    return out


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of an ONNX model (MXNet's
    ``mx.contrib.onnx.import_model``): the graph as a Symbol over the model's inputs, its
    initializers (and constants folded at import) as NDArray parameters."""
    onnx = require("import_model")
    from .. import ndarray as nd
    from .. import symbol as _sym
    model = _load(onnx, model_file)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    ic = ImportContext(onnx, model, _inferred(onnx, model))
    values = {}
    ic.values = values          # what a subgraph (a Loop's body, an If's branch) reads by name
    for init in model.graph.initializer:
        values[init.name] = Value(const=onnx.numpy_helper.to_array(init))
    for inp in _graph_inputs(model):
        dtype = _np_dtype(onnx, inp.type.tensor_type.elem_type)
        dims = _dims(inp)
        values[inp.name] = Value(sym=_sym.var(inp.name, dtype=dtype),
                                 shape=None if dims is None or None in dims else dims,
                                 dtype=dtype)
        ic.inputs[inp.name] = (values[inp.name].shape, dtype)
        ic.reserve(inp.name)
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            raise MXNetError(f"import_model: ONNX node {node.name!r}: operator {node.op_type} "
                             f"of domain {node.domain!r} (opset {opset}) has no mxlite import")
        importer = IMPORTS.get(node.op_type)
        if importer is None:
            raise MXNetError(f"import_model: ONNX node {node.name!r}: operator "
                             f"{node.op_type} (opset {opset}) has no mxlite import")
        ins = [values.get(n) if n else None for n in node.input]
        for n, v in zip(node.input, ins):
            if n and v is None:
                raise ic.error(node, f"reads {n!r}, which no node or initializer gives")
        outs = importer.fn(ic, node, ins)
        for name, v in zip(node.output, outs):
            if name:
                values[name] = v
    outputs = []
    for o in model.graph.output:
        v = values[o.name]
        if v.is_const:
            outputs.append(ic.sym(v, name=ic.fresh(o.name)))
        elif v.shape == ():        # a scalar a loop held as (1,) is the model's scalar again
            outputs.append(_sym.reshape(v.sym, shape=()))
        else:
            outputs.append(v.sym)
    sym = outputs[0] if len(outputs) == 1 else _sym.Group(outputs)
    used = set(sym.list_arguments()) | set(sym.list_auxiliary_states())
    args = {k: nd.array(v, dtype=v.dtype) for k, v in ic.params.items()
            if k in used and k not in ic.aux}
    aux = {k: nd.array(v, dtype=v.dtype) for k, v in ic.params.items()
           if k in used and k in ic.aux}
    return sym, args, aux


def import_to_gluon(model_file, ctx=None):
    """The ONNX model as a ``gluon.SymbolBlock`` with its parameters loaded on ``ctx``
    (MXNet's ``import_to_gluon``)."""
    from .. import symbol as _sym
    from ..gluon import SymbolBlock
    sym, args, aux = import_model(model_file)
    inputs = [name for name, _ in get_model_metadata(model_file)["input_tensor_data"]]
    net = SymbolBlock(sym, [_sym.var(n) for n in inputs])
    params = net.collect_params()
    from ..context import cpu
    ctx = ctx or cpu()
    for name, value in {**args, **aux}.items():
        if name in params:
            params[name]._load_init(value, ctx)
    return net
