"""The machinery of ``mx.np``'s structural functions: "host index, device gather".

A function such as ``insert``, ``delete``, ``resize``, ``choose`` or ``compress`` only moves
elements. Its result is computed in two steps:

1. on the host, NumPy's own function runs on *tags* -- int64 arrays of the inputs' shapes
   holding each element's position in the concatenation of the flattened inputs -- so the
   result says, for every output element, which input element it is (NumPy's broadcasting,
   casting of positions and error rules apply unchanged, and nothing of the data is read);
2. the registered ``_getitem`` operator picks those elements from the concatenated inputs
   (the positions are its key).

The result is therefore recorded by autograd and differentiates (to any order) with
respect to every value input. Arguments that decide *where* elements go (indices,
conditions) are read on the host; they are not differentiable.

The same code builds graph nodes when the inputs are Symbols of a Gluon block being
traced (their shapes are known then): the positions become the key of a ``_getitem``
node, and the trace is marked as depending on the inputs' full shapes
(``_front.uses_shapes``), so the block traces again for other shapes. A Symbol whose shape
is not known, or an argument whose *data* is needed (a condition, an index array), is an
MXNetError naming the function.
"""
import contextlib

import numpy as _onp

from ..base import MXNetError, op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float, result_type, scalar_result_type
from .multiarray import array, asarray, ndarray

__all__ = ["arr", "host", "refuse_symbols", "numpy_errors", "tags", "gather", "common_dtype",
           "as_source", "int_array", "shape_of", "dtype_of", "ctx_of", "constant",
           "is_symbol", "index_constant"]

_NUMPY_ERRORS = (ValueError, TypeError, IndexError, OverflowError, _onp.exceptions.AxisError)

def is_symbol(x):
    """Whether ``x`` is a Symbol (a graph node), not data."""
    from ..symbol.symbol import Symbol
    return isinstance(x, Symbol)


def arr(a):
    """``a`` as an np array: np arrays and Symbols pass through, a legacy ``mx.nd`` array
    becomes an np view of it (recorded, so gradients reach it), anything else a new array."""
    if isinstance(a, ndarray) or is_symbol(a):
        return a
    if isinstance(a, NDArray):
        from ._manipulation import reshape
        return reshape(a, tuple(a.shape))
    return asarray(a)


def host(a):
    """The host NumPy data of an array, or ``a`` itself as a NumPy array."""
    return a.asnumpy() if isinstance(a, NDArray) else _onp.asarray(a)


def refuse_symbols(fn, *inputs):
    """Raise ``_front.ValuesNeeded`` when an input of ``fn`` (or an entry of a list input)
    is a Symbol: its data is needed."""
    _front.needs_values(fn, *inputs)


def shape_of(fn, a):
    """The full shape of an array, or of a Symbol of a block being traced (then the trace
    is marked as depending on shapes); MXNetError when it is not known."""
    shape = _front.shape_of(a)
    if shape is None or any(d < 0 for d in shape):
        raise op_error(fn, "needs the shape of its input, which this Symbol does not know "
                       "(a Symbol knows it while a Gluon block is traced on arrays)")
    if is_symbol(a):
        _front.uses_shapes()
    return tuple(shape)


def dtype_of(fn, a):
    """The dtype of an array or of a traced Symbol; MXNetError when it is not known."""
    dt = _front.dtype_of(a)
    if dt is None:
        raise op_error(fn, "needs the dtype of its input, which this Symbol does not know")
    return _onp.dtype(dt)


def ctx_of(*values):
    """The context of the first array among ``values`` (None: the current one)."""
    return next((v._ctx for v in values if isinstance(v, NDArray)), None)


@contextlib.contextmanager
def numpy_errors(fn):
    """Turn the errors of a host NumPy call into an MXNetError naming ``fn``."""
    try:
        yield
    except MXNetError:
        raise
    except _NUMPY_ERRORS as e:
        raise op_error(fn, str(e)) from None


def tags(shapes):
    """One int64 host array per shape: the positions of its elements in the concatenation
    of all of them, flattened in order."""
    out, start = [], 0
    for shape in shapes:
        n = int(_onp.prod(shape, dtype=_onp.int64))
        out.append(_onp.arange(start, start + n, dtype=_onp.int64).reshape(shape))
        start += n
    return out


def _value_dtype(v):
    """The dtype ``as_source(v)`` gives a non-array value."""
    h = _onp.asarray(v)
    return default_float() if h.dtype.kind == "f" else h.dtype


def common_dtype(values):
    """The dtype mxlite's promotion gives ``values`` together: arrays (and traced Symbols)
    first, then lists, then Python numbers (which keep an array's dtype unless their kind
    is wider)."""
    def is_array(v):
        return isinstance(v, NDArray) or is_symbol(v)
    arrays = [v for v in values if is_array(v)]
    lists = [v for v in values if not is_array(v) and _onp.ndim(v) > 0]
    numbers = [v for v in values if not is_array(v) and _onp.ndim(v) == 0]
    dt = None
    for d in [dtype_of("dtype", a) for a in arrays] + [_value_dtype(v) for v in lists]:
        dt = d if dt is None else result_type(dt, d)
    for v in numbers:
        dt = _value_dtype(v) if dt is None else scalar_result_type(dt, _onp.asarray(v).item())
    return _onp.dtype(dt)


def constant(values, dtype, symbolic=False, ctx=None):
    """The host data ``values`` as an np array of ``dtype`` on ``ctx``, or as a constant
    graph node (for a graph being traced: small constants only, one ``_full`` per element)."""
    h = _onp.asarray(values).astype(dtype)
    if not symbolic:
        return array(h, dtype=h.dtype, ctx=ctx)
    with _front.symbolic_creation():
        if h.ndim == 0 or h.size == 0:
            return _front.call("_full", [], shape=h.shape, val=h.item() if h.size else 0,
                               dtype=h.dtype)
        parts = [_front.call("_full", [], shape=(1,), val=v, dtype=h.dtype)
                 for v in h.reshape(-1).tolist()]
    flat = parts[0] if len(parts) == 1 else _front.call("concat", parts, dim=0,
                                                        num_args=len(parts))
    return flat if h.ndim == 1 else _front.call("reshape", [flat], shape=h.shape)


def as_source(v, dtype=None, ctx=None, symbolic=False):
    """``v`` as an np array (or Symbol) of ``dtype`` when given: arrays and Symbols are
    cast (a recorded cast), other values made constants (lists of floats: the default
    float)."""
    if isinstance(v, NDArray) or is_symbol(v):
        v = arr(v)
        if dtype is None or dtype_of("cast", v) == dtype:
            return v
        return _front.call("cast", [v], dtype=_onp.dtype(dtype))
    return constant(v, _value_dtype(v) if dtype is None else dtype, symbolic, ctx)


def int_array(values, ctx=None):
    """A host integer array as an np int64 array on ``ctx``."""
    return array(_onp.asarray(values, dtype=_onp.int64), dtype=_onp.int64, ctx=ctx)


def index_constant(values, symbolic=False, ctx=None):
    """Non-negative host integers as an int64 array on ``ctx``, or as a graph node: the
    picks ``values`` of an ``_arange`` (one node, whatever the size)."""
    h = _onp.asarray(values, dtype=_onp.int64)
    if not symbolic:
        return int_array(h, ctx)
    with _front.symbolic_creation():
        base = _front.call("_arange", [], start=0, stop=int(h.max()) + 1 if h.size else 1,
                           dtype=_onp.int64)
    return _front.call("_getitem", [base], key=(h,))


def gather(fn, sources, index):
    """The array (or Symbol) ``out[i] = concat(flattened sources)[index[i]]`` of
    ``index``'s shape, ``index`` a host integer array made from ``tags``; ``sources`` are
    of one dtype (on one context). Recorded: the gradient reaches every source."""
    index = _onp.asarray(index, dtype=_onp.int64)
    sizes = [int(_onp.prod(shape_of(fn, s), dtype=_onp.int64)) for s in sources]
    if index.size and sum(sizes) == 0:
        raise op_error(fn, "cannot take elements of an empty array")
    if index.size == 0 and not any(is_symbol(s) for s in sources):
        from ._creation import zeros
        return zeros(index.shape, dtype=dtype_of(fn, sources[0]), ctx=ctx_of(*sources))
    # an empty source holds no position of the index: left out of the concatenation
    flat = [_front.call("reshape", [arr(s)], shape=(-1,))
            for s, n in zip(sources, sizes) if n] or [arr(sources[0])]
    flat = flat[0] if len(flat) == 1 else _front.call("concat", flat, dim=0,
                                                      num_args=len(flat))
    return _front.call("_getitem", [flat], key=(index,))
