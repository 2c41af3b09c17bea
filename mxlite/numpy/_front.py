"""The ``np`` invoke strategy: registered operators called with NumPy conventions.

Every ``mx.np`` function is an entry point onto registered operators: it calls
``call(op_name, inputs, **attrs)``, which runs the op through ``mx.nd``'s invoke (the same
kernels, tape and devices) and hands the results back as ``mx.np.ndarray`` objects, or,
when an input is a Symbol (a hybridized block traced with ``F = mx.sym``), builds the
graph node through ``mx.sym``'s invoke and gives an ``mx.sym.np`` symbol. Nothing here
restates an operator.
"""
import threading

import numpy as _np

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .._core.dispatch import invoke as _nd_invoke
from ..ops.registry import REGISTRY

__all__ = ["call", "as_np", "as_nd", "is_symbolic", "symbolic_creation", "tracing",
           "symbol_meta", "dtype_of", "shape_of", "uses_shapes"]

_np_class = None        # mxlite.numpy.multiarray.ndarray (set by that module)
_sym_class = None       # mxlite.symbol.numpy._Symbol (set by that module)
_creation = threading.local()     # inside mx.sym.np's creation functions: build symbols


def set_classes(array_cls=None, symbol_cls=None):
    """Register the np array class and the np Symbol class (by their modules)."""
    global _np_class, _sym_class
    if array_cls is not None:
        _np_class = array_cls
    if symbol_cls is not None:
        _sym_class = symbol_cls


def as_np(result):
    """``result`` (an NDArray, a list or tuple of them, or anything else) with every dense
    NDArray retyped in place to ``mx.np.ndarray`` (the same object: the tape, views and
    versions are untouched)."""
    if type(result) is NDArray:
        result.__class__ = _np_class
        return result
    if isinstance(result, (list, tuple)):
        return type(result)(as_np(r) for r in result)
    if _sym_class is not None and _is_symbol(result) and type(result) is not _sym_class:
        result.__class__ = _sym_class
    return result


def as_nd(result):
    """The inverse of ``as_np`` for a result made inside an np function (retype in place)."""
    if _np_class is not None and type(result) is _np_class:
        result.__class__ = NDArray
    return result


_Symbol = None          # mxlite.symbol.symbol.Symbol, imported on first use (symbol is above)


def _symbol_class():
    global _Symbol
    if _Symbol is None:
        from ..symbol.symbol import Symbol
        _Symbol = Symbol
    return _Symbol


def _is_symbol(x):
    return isinstance(x, _Symbol or _symbol_class())


def is_symbolic(inputs):
    """True when some input is a Symbol, or inside ``mx.sym.np``'s creation functions."""
    if getattr(_creation, "on", False):
        return True
    symbol = _Symbol or _symbol_class()
    for x in inputs:
        if isinstance(x, symbol):
            return True
    return False


class symbolic_creation:
    """``with symbolic_creation():`` functions without array inputs build symbols."""

    def __enter__(self):
        self._prev = getattr(_creation, "on", False)
        _creation.on = True

    def __exit__(self, *exc):
        _creation.on = self._prev


def call(op_name, inputs, out=None, **attrs):
    """Run registered operator ``op_name`` on ``inputs`` (arrays or Symbols) with
    parameters ``attrs``; np arrays (or np Symbols) back. ``out`` is an np array the
    result is written into (and returned)."""
    op = REGISTRY[op_name]
    if getattr(_creation, "on", False) or any(isinstance(x, _Symbol or _symbol_class())
                                              for x in inputs):
        from ..symbol.symbol import invoke as sym_invoke
        _check_graph_inputs(op_name, inputs)
        name = attrs.pop("name", None)
        return as_np(sym_invoke(op, list(inputs), attrs, None, name=name))
    result = _nd_invoke(op, inputs if type(inputs) is list else list(inputs), attrs, out)
    if out is not None:
        return result               # the caller's array, whatever its class
    if type(result) is NDArray:
        result.__class__ = _np_class
        return result
    return as_np(result)


class ValuesNeeded(MXNetError):
    """An np function needs its inputs' values (its result's shape depends on them, or it
    runs on the host), which a Symbol does not have. A hybridized block whose trace raises
    it runs imperatively instead (``HybridBlock.forward``)."""


def needs_values(fn, *inputs):
    """Raise ``ValuesNeeded`` for ``fn`` when an input (or an entry of a list input) is a
    Symbol."""
    flat = [y for x in inputs for y in (x if isinstance(x, (list, tuple)) else [x])]
    if any(_is_symbol(x) for x in flat if x is not None):
        raise ValuesNeeded(f"{fn}: needs the values of its inputs (its result's shape depends "
                           "on them, or it runs on the host), which a Symbol does not have; "
                           "call it on arrays (a hybridized block calling it runs "
                           "imperatively)")


# ---- what a traced Symbol is known to be ---------------------------------------------------
_trace = threading.local()      # .inputs {variable name: (shape, dtype)}, .cache, .building


class building_graph:
    """``with building_graph():`` np functions may take Symbols that do not know their shape
    or dtype: ``mx.sym.np``'s functions (which defer such calls, mxlite.symbol._deferred)
    enter it. Elsewhere -- ``mx.np.dot(sym, sym)`` called directly -- such a Symbol is an
    error, as NumPy's rules could not be applied to it."""

    def __enter__(self):
        _trace.building = getattr(_trace, "building", 0) + 1

    def __exit__(self, *exc):
        _trace.building -= 1


def _check_graph_inputs(op_name, inputs):
    if getattr(_trace, "building", 0) or getattr(_trace, "inputs", None) is not None:
        return
    for x in inputs:
        if _is_symbol(x) and (len(x._outputs) != 1 or
                              any(v is None for v in symbol_meta(x))):
            from ..base import op_error
            raise op_error(op_name, "an mx.np function was given a Symbol whose shape or "
                           "dtype is not known, so NumPy's rules cannot be applied; build "
                           "graphs with mx.sym.np (it defers such calls until the inputs "
                           "are known) or call mx.np inside a hybridized block")


class tracing:
    """``with tracing({name: (shape, dtype)}):`` a block's ``hybrid_forward`` traced on
    inputs of these shapes and dtypes: inside, an np Symbol's ``shape``/``dtype`` are
    inferred from them (``symbol_meta``), so np functions apply NumPy's rules (promotion,
    0-d results, axis checks) to symbols as to arrays. ``shapes_used`` says afterwards
    whether the graph holds tables made from the inputs' full shapes (``uses_shapes``)."""

    def __init__(self, inputs):
        self._inputs = dict(inputs)
        self.shapes_used = False

    def __enter__(self):
        self._prev = (getattr(_trace, "inputs", None), getattr(_trace, "cache", None),
                      getattr(_trace, "shapes_used", False))
        _trace.inputs, _trace.cache, _trace.shapes_used = self._inputs, {}, False
        return self

    def __exit__(self, *exc):
        self.shapes_used = _trace.shapes_used
        _trace.inputs, _trace.cache, _trace.shapes_used = self._prev


def uses_shapes():
    """Note that the graph being traced holds tables made from its inputs' full shapes
    (index tables, sizes): the block then traces again when a shape changes, not only the
    rank. Outside a trace, nothing."""
    if getattr(_trace, "inputs", None) is not None:
        _trace.shapes_used = True


def symbol_meta(sym):
    """``(shape, dtype)`` of a single-output Symbol: inferred from the traced inputs
    (``tracing``) and the variables' own attributes; unknown dimensions are -1, an unknown
    shape or dtype None."""
    (node, index), = sym._outputs
    cache = getattr(_trace, "cache", None)
    key = (id(node), index)
    if cache is not None and key in cache:
        return cache[key][1]
    known = getattr(_trace, "inputs", None) or {}
    if cache is None and not _declared(node):
        # no trace, and a variable below declares no shape or dtype (or a deferred call):
        # nothing to infer from (this answer costs no pass over the graph)
        _trace.unknown_seen = True
        return None, None
    if cache is not None:
        metas = _forward_meta(node, cache, known)
        if metas is not None:
            for i, meta in enumerate(metas):
                cache[(id(node), i)] = (node, meta)
            return metas[index]
    args = sym.list_arguments()
    shapes = {n: known[n][0] for n in args if n in known}
    dtypes = {n: known[n][1] for n in args if n in known}
    from ..util import np_shape
    from ..symbol._deferred import expand_symbol
    sym = expand_symbol(sym, shapes, dtypes)      # np calls recorded on unknown inputs
    try:
        with np_shape(True):
            out_shape = sym.infer_shape_partial(**shapes)[1][0]
    except Exception:           # an inconsistent graph is reported when it is bound
        out_shape = None
    try:
        out_dtype = sym.infer_type_partial(**dtypes)[1][0]
    except Exception:
        out_dtype = None
    meta = (None if out_shape is None else tuple(out_shape),
            None if out_dtype is None else _np.dtype(out_dtype))
    if cache is not None:
        cache[key] = (node, meta)       # (the node kept alive, so its id stays unique)
    if meta[0] is None or meta[1] is None:
        _trace.unknown_seen = True      # read by mx.sym.np's deferral (symbol/_deferred.py)
    return meta


def _declared(node):
    """Whether every variable below ``node`` declares its shape and dtype (``__shape__``,
    ``__dtype__``) and no deferred np call lies between: without a trace, the only graphs
    whose metas can be inferred."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if n.op is None:
            if "__shape__" not in n.user_attrs or "__dtype__" not in n.user_attrs:
                return False
        elif n.op.deferred:
            return False
        else:
            stack.extend(c for c, _ in n.inputs)
    return True


def _complete(meta):
    return meta is not None and meta[0] is not None and meta[1] is not None and \
        all(d >= 0 for d in meta[0])


def _forward_meta(node, cache, known):
    """The ``(shape, dtype)`` of each output of ``node`` from its inputs' metas already
    in the trace's ``cache`` (or a traced variable's), by the op's own inference rules:
    one step per node, so a trace costs time linear in its graph. None when an input's
    meta is not complete there (the caller infers over the whole graph instead)."""
    if node.op is None:
        meta = known.get(node.name)
        return [meta] if _complete(meta) and not node.user_attrs.get("__shape__") else None
    if node.op.deferred:
        return None
    ins = []
    for child, i in node.inputs:
        entry = cache.get((id(child), i))
        meta = entry[1] if entry is not None else None
        if meta is None and child.op is None:
            meta = known.get(child.name)
        if not _complete(meta):
            return None
        ins.append(meta)
    try:
        shapes = node.op.infer_shape([m[0] for m in ins], node.attrs)
        dtypes = node.op.infer_type([m[1] for m in ins], node.attrs)
    except Exception:       # noqa: BLE001 -- the whole-graph inference reports it
        return None
    if len(shapes) != len(dtypes):
        return None
    return [(tuple(int(d) for d in s), _np.dtype(t)) for s, t in zip(shapes, dtypes)]


def unknown_seen(reset=False):
    """Whether ``symbol_meta`` answered "unknown" since the last reset (``reset=True``
    answers and starts again)."""
    seen = getattr(_trace, "unknown_seen", False)
    if reset:
        _trace.unknown_seen = False
    return seen


def dtype_of(x):
    """The dtype of an array, or of a Symbol while a block is traced; None if unknown."""
    if isinstance(x, NDArray):
        return x._data.dtype if x._data is not None else _np.dtype(x.dtype)
    if _is_symbol(x) and len(x._outputs) == 1:
        return symbol_meta(x)[1]
    return None


def shape_of(x):
    """The shape of an array, or of a Symbol while a block is traced (-1 for a dimension
    not known yet); None if unknown."""
    if isinstance(x, NDArray):
        return tuple(x.shape)
    if _is_symbol(x) and len(x._outputs) == 1:
        return symbol_meta(x)[0]
    return None


def np_class():
    """The ``mx.np.ndarray`` class."""
    return _np_class


_REGISTRY_GET = REGISTRY.__getitem__


def call_direct(op_name, inputs, attrs):
    """``call`` for np arrays already checked by the caller (no Symbol, no ``out``): the
    compiled invoke and the retype, nothing else."""
    result = _nd_invoke(_REGISTRY_GET(op_name), inputs, attrs, None)
    if type(result) is NDArray:
        result.__class__ = _np_class
        return result
    return as_np(result)
