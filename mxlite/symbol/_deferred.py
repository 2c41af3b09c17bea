"""Deferred ``mx.np`` calls: np functions applied to Symbols that do not know their shapes
or dtypes yet.

NumPy's rules depend on what the inputs are: ``dot`` contracts by rank, the mean of an
integer array is a float, ``x / 2`` of an int array is a float. While a Gluon block is traced
its np Symbols know their inputs (``mxlite.numpy._front.tracing``), and np functions build
registered operators at once. A Symbol made from bare variables (``mx.sym.var('x')``) or read
from a symbol file knows neither, and building the operators then would have to guess. So
``mx.sym.np``'s functions (and the np Symbol's operators and methods) record such a call
instead: one ``_np_deferred`` node holding the function's public name, its other arguments
(as JSON) and its input Symbols.

``expand`` replaces each deferred node by the call itself, made on Symbols that know their
inputs, once the graph's input shapes and dtypes are given: binding an executor, running a
``SymbolBlock`` or ``CachedOp``, ``infer_shape``/``infer_type``, ``mx.sym.grad``, ONNX export.
The graph that runs holds registered operators only -- gradients, devices, memory planning
and export are theirs -- and computes what the same calls compute on arrays. A deferred node
never computes itself.
"""
import json
import threading

import numpy as _onp

from ..base import MXNetError
from ..ops.params import Param
from ..ops.registry import REQUIRED, OpDef
from .graph import SymNode, topo_order

__all__ = ["DEFERRED", "deferrable", "expand", "expand_symbol"]

_state = threading.local()      # .expanding: inside expand (a call must build, not defer)
_ARRAY_LIMIT = 4096             # NumPy constants up to this size are kept in the node
_MAX_OUTPUTS = 4096
_SUBMODULES = ("linalg", "random", "image")


def _never_computes(rctx, ins, outs, attrs):
    raise MXNetError(f"_np_deferred ({attrs.function}): a deferred np call runs only after "
                     "its graph is expanded with its input shapes and dtypes")


class _DeferredOp(OpDef):
    """The placeholder operator: shape and type inference know nothing of its outputs
    (``expand`` replaces it before anything runs)."""

    __slots__ = ()
    deferred = True

    def parse_attrs(self, kwargs):
        attrs = OpDef.parse_attrs(self, kwargs)
        if not 1 <= attrs.num_outputs <= _MAX_OUTPUTS:
            raise MXNetError(f"_np_deferred: num_outputs={attrs.num_outputs} is not in "
                             f"[1, {_MAX_OUTPUTS}]")
        _function(attrs.function)           # a public np function, or refused
        return attrs

    def infer_shape_partial(self, in_shapes, attrs, out_shapes=None):
        n = self.output_count(attrs)
        return list(in_shapes), list(out_shapes or [None] * n)


def _unknown(values, attrs):
    raise MXNetError(f"_np_deferred ({attrs.function}): its outputs are known only once the "
                     "graph is expanded with its input shapes and dtypes")


DEFERRED = _DeferredOp(
    "_np_deferred", inputs=("args",), variadic=True, key_var_num_args="num_args",
    params=(Param("function", "str", REQUIRED, "the np function's public name"),
            Param("arguments", "str", REQUIRED, "its arguments, JSON with input markers"),
            Param("num_outputs", "int", 1, "how many Symbols the call returns"),
            Param("num_args", "int", REQUIRED, "the number of input Symbols")),
    infer_shape=_unknown, infer_type=_unknown, compute={"cpu": _never_computes},
    num_outputs=lambda attrs: attrs.num_outputs, doc=__doc__)


# ---- arguments as JSON -------------------------------------------------------------------
class _NotEncodable(Exception):
    pass


def _encode(value, inputs):
    from .symbol import Symbol
    from .numpy import _Symbol
    if isinstance(value, Symbol):
        first = len(inputs)
        inputs.extend(value._outputs)
        return {"$sym": list(range(first, len(inputs))), "np": isinstance(value, _Symbol)}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, _onp.integer)) and not isinstance(value, _onp.bool_):
        return int(value)
    if isinstance(value, (float, _onp.floating)):
        return float(value)
    if isinstance(value, _onp.bool_):
        return bool(value)
    if isinstance(value, (tuple, list)):
        items = [_encode(v, inputs) for v in value]
        return items if isinstance(value, list) else {"$tuple": items}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"$dict": {k: _encode(v, inputs) for k, v in value.items()}}
    if isinstance(value, slice):
        return {"$slice": [_encode(v, inputs) for v in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"$ellipsis": True}
    if isinstance(value, _onp.dtype) or (isinstance(value, type) and
                                          issubclass(value, _onp.generic)):
        return {"$dtype": _onp.dtype(value).name}
    from ..context import Context
    if isinstance(value, Context):
        return {"$ctx": [value.device_type, value.device_id]}
    if isinstance(value, _onp.ndarray) and value.size <= _ARRAY_LIMIT and \
            value.dtype.kind in "biuf":
        return {"$array": value.tolist(), "dtype": value.dtype.name,
                "shape": list(value.shape)}
    raise _NotEncodable(type(value).__name__)


def _decode(value, entries):
    from .symbol import Symbol
    from .numpy import _Symbol
    if isinstance(value, list):
        return [_decode(v, entries) for v in value]
    if not isinstance(value, dict):
        return value
    if "$sym" in value:
        return (_Symbol if value["np"] else Symbol)([entries[k] for k in value["$sym"]])
    if "$tuple" in value:
        return tuple(_decode(v, entries) for v in value["$tuple"])
    if "$dict" in value:
        return {k: _decode(v, entries) for k, v in value["$dict"].items()}
    if "$slice" in value:
        return slice(*(_decode(v, entries) for v in value["$slice"]))
    if "$ellipsis" in value:
        return Ellipsis
    if "$dtype" in value:
        return _onp.dtype(value["$dtype"])
    if "$ctx" in value:
        from ..context import Context
        return Context(str(value["$ctx"][0]), int(value["$ctx"][1]))
    if "$array" in value:
        return _onp.array(value["$array"], dtype=value["dtype"]).reshape(value["shape"])
    raise MXNetError(f"_np_deferred: cannot read the argument {value!r}")


# ---- recording a call --------------------------------------------------------------------
def _symbols(value, found):
    from .symbol import Symbol
    if isinstance(value, Symbol):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _symbols(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _symbols(v, found)
    return found


def _knows_itself(sym):
    from ..numpy import _front
    if len(sym._outputs) != 1:
        return False
    shape, dtype = _front.symbol_meta(sym)
    return shape is not None and dtype is not None


def _structure(result):
    """The number of Symbols a call returned, or None when it returned anything else."""
    from .symbol import Symbol
    if isinstance(result, Symbol) and len(result._outputs) == 1:
        return 1
    if isinstance(result, (tuple, list)) and result and \
            all(isinstance(r, Symbol) and len(r._outputs) == 1 for r in result):
        return len(result)
    return None


def deferrable(fn, path):
    """``fn`` (the public np function named ``path``, e.g. ``numpy.dot``) recording a
    deferred node when a Symbol argument does not know its shape or dtype."""
    import functools
    from ..numpy import _front

    meta_free = getattr(fn, "meta_free", False)      # (module docstring of mx.npx._entry)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        symbols = _symbols((args, kwargs), [])
        with _front.building_graph():
            if not symbols or meta_free or getattr(_state, "expanding", False) or \
                    all(_knows_itself(s) for s in symbols):
                return fn(*args, **kwargs)
            return _record(fn, path, args, kwargs)
    call.deferred_path = path
    return call


def _record(fn, path, args, kwargs):
    from .naming import NameManager
    from .symbol import Symbol, invoke
    from .numpy import _Symbol
    entries = []
    try:
        arguments = json.dumps({"args": _encode(list(args), entries),
                                "kwargs": {k: _encode(v, entries) for k, v in kwargs.items()}})
    except _NotEncodable as e:
        raise MXNetError(f"{path}: a Symbol here does not know its shape or dtype, so the "
                         f"call must wait for them, and an argument of type {e} cannot be "
                         "kept until then; declare the variables' shape and dtype "
                         "(mx.sym.var(name, shape=..., dtype=...)) or call it in a "
                         "hybridized block") from None
    # the call made once as it is, with scratch names, tells how many Symbols it returns;
    # an error it raises without asking for an unknown shape or dtype is the caller's
    from ..numpy import _front
    _front.unknown_seen(reset=True)
    try:
        with NameManager():
            count = _structure(fn(*args, **kwargs))
    except MXNetError:
        if not _front.unknown_seen():
            raise
        count = 1
    if count is None:
        return fn(*args, **kwargs)
    inputs = [Symbol([e]) for e in entries]
    out = invoke(DEFERRED, inputs, {"function": path, "arguments": arguments,
                                   "num_outputs": count, "num_args": len(inputs)},
                 None, hint=path.rsplit(".", 1)[-1].strip("_"))
    outs = [_Symbol([e]) for e in out._outputs]
    return outs[0] if count == 1 else outs


# ---- expanding -------------------------------------------------------------------------
def _function(path):
    """The ``mx.sym`` function named ``path``: a public name of ``mx.sym.np``/``mx.sym.npx``
    (``numpy.dot``, ``numpy.linalg.norm``) or an np Symbol method (``ndarray.__add__``).
    Anything else -- a file may name anything -- is refused."""
    from .. import symbol
    from .numpy import _Symbol
    parts = path.split(".") if isinstance(path, str) else []
    if len(parts) == 2 and parts[0] == "ndarray" and callable(vars(_Symbol).get(parts[1])):
        return getattr(_Symbol, parts[1])
    ok = len(parts) >= 2 and parts[0] in ("numpy", "numpy_extension") and \
        all(p in _SUBMODULES for p in parts[1:-1])
    target = symbol
    for part in parts[:-1] if ok else ():
        target = getattr(target, part)
    if not ok or parts[-1] not in getattr(target, "__all__", ()) or \
            not callable(getattr(target, parts[-1], None)):
        raise MXNetError(f"_np_deferred: {path!r} is not a function of mx.np or mx.npx")
    return getattr(target, parts[-1])


def _expanded_call(node, inputs):
    """The entries the deferred ``node`` stands for, made on ``inputs`` (inside ``expand``'s
    trace); None while an input does not know its shape and dtype."""
    from ..numpy import _front
    from .symbol import Symbol
    attrs = node.attrs
    for e in inputs:        # (each meta is inferred once in the trace)
        shape, dtype = _front.symbol_meta(Symbol([e]))
        if shape is None or dtype is None or any(d < 0 for d in shape):
            return None
    try:
        call = json.loads(attrs.arguments)
        args = list(_decode(call["args"], inputs))
        kwargs = {str(k): _decode(v, inputs) for k, v in call["kwargs"].items()}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        raise MXNetError(f"_np_deferred (node {node.name!r}): cannot read its arguments "
                         f"{attrs.arguments[:200]!r}: {e}") from None
    fn = _function(attrs.function)
    previous, _state.expanding = getattr(_state, "expanding", False), True
    try:
        with _front.symbolic_creation():
            result = fn(*args, **kwargs)
    finally:
        _state.expanding = previous
    results = result if isinstance(result, (tuple, list)) else [result]
    outs = [e for r in results if isinstance(r, Symbol) for e in r._outputs]
    if len(outs) != attrs.num_outputs or len(outs) != len(results):
        raise MXNetError(f"{attrs.function} (node {node.name!r}): gave {len(results)} "
                         f"results once its inputs were known, {attrs.num_outputs} when the "
                         "graph was built")
    return outs


def expand(entries, shapes, dtypes):
    """``entries`` with every deferred call replaced by the operators it makes once the
    variables' shapes and dtypes are known (``{name: shape}``, ``{name: dtype}``; a
    variable's ``__shape__``/``__dtype__`` otherwise, float32 for a dtype nothing gives).
    The same list when the graph holds no deferred call; a deferred call whose inputs stay
    unknown is kept."""
    nodes = topo_order(entries)
    if not any(n.op is DEFERRED for n in nodes):
        return entries
    from ..numpy import _front
    from .infer import _seed_dtype, _seed_shape
    known = {}
    for n in nodes:
        if n.op is None:
            shape = shapes.get(n.name, _seed_shape(n))
            dtype = dtypes.get(n.name, _seed_dtype(n)) or _onp.float32
            if shape is not None and None not in tuple(shape):
                known[n.name] = (tuple(int(d) for d in shape), _onp.dtype(dtype))
    if not known:       # a call was deferred because some variable was unknown: it still is
        return entries
    new = {}
    with _front.tracing(known):         # one trace: each meta is inferred once
        for node in nodes:
            if node.op is None:
                new[id(node)] = [(node, 0)]
                continue
            ins = [new[id(c)][i] for c, i in node.inputs]
            if node.op is DEFERRED:
                outs = _expanded_call(node, ins)
                if outs is not None:
                    new[id(node)] = outs
                    continue
            if ins == node.inputs:
                new[id(node)] = [(node, i) for i in range(node.num_outputs())]
            else:
                copy = SymNode(node.op, node.name, node.attrs, ins, node.user_attrs,
                               node.given)
                new[id(node)] = [(copy, i) for i in range(node.num_outputs())]
    return [new[id(n)][i] for n, i in entries]


def expand_symbol(symbol, shapes, dtypes):
    """``symbol`` with its deferred calls expanded (``expand``); ``symbol`` itself when it
    holds none."""
    entries = expand(symbol._outputs, shapes, dtypes)
    return symbol if entries is symbol._outputs else type(symbol)(entries)


def is_random(node):
    """Whether ``node`` is a deferred call of a sampling function (``np.random.*``)."""
    return node.op is DEFERRED and ".random." in node.attrs.function
