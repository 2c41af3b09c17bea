"""The machinery of ``mx.np``'s structural functions: "host index, device gather".

A function such as ``insert``, ``delete``, ``resize``, ``choose`` or ``compress`` only moves
elements. Its result is computed in two steps:

1. on the host, NumPy's own function runs on *tags* -- int64 arrays of the inputs' shapes
   holding each element's position in the concatenation of the flattened inputs -- so the
   result says, for every output element, which input element it is (NumPy's broadcasting,
   casting of positions and error rules apply unchanged, and nothing of the data is read);
2. on the device, the registered ``take`` operator gathers those elements from the
   concatenated inputs.

The result is therefore recorded by autograd and differentiates (to any order) with
respect to every value input, through ``take``'s and ``concat``'s gradients. Arguments
that decide *where* elements go (indices, conditions) are read on the host; they are not
differentiable. None of this can run on a Symbol (the tags need shapes): such a call is
an MXNetError naming the function.
"""
import contextlib

import numpy as _onp

from ..base import MXNetError, op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float, result_type, scalar_result_type
from .multiarray import array, asarray, ndarray

__all__ = ["arr", "host", "refuse_symbols", "numpy_errors", "tags", "gather", "common_dtype",
           "as_source", "int_array"]

_NUMPY_ERRORS = (ValueError, TypeError, IndexError, OverflowError, _onp.exceptions.AxisError)


def arr(a):
    """``a`` as an np array: np arrays and Symbols pass through, a legacy ``mx.nd`` array
    becomes an np view of it (recorded, so gradients reach it), anything else a new array."""
    if isinstance(a, ndarray) or _front.is_symbolic([a]):
        return a
    if isinstance(a, NDArray):
        from ._manipulation import reshape
        return reshape(a, tuple(a.shape))
    return asarray(a)


def host(a):
    """The host NumPy data of an array, or ``a`` itself as a NumPy array."""
    return a.asnumpy() if isinstance(a, NDArray) else _onp.asarray(a)


def refuse_symbols(fn, *inputs):
    """Raise MXNetError when an input of ``fn`` is a Symbol (its result needs shapes or
    data a graph node does not have)."""
    if _front.is_symbolic(inputs):
        raise op_error(fn, "needs the shapes and data of its inputs, which a Symbol does not "
                       "have; call it on np arrays (outside a hybridized block)")


@contextlib.contextmanager
def numpy_errors(fn):
    """Turn the ValueError/TypeError/IndexError of a host NumPy call into an MXNetError
    naming ``fn``."""
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
    """The dtype mxlite's promotion gives ``values`` together: arrays first, then lists,
    then Python numbers (which keep an array's dtype unless their kind is wider)."""
    arrays = [v for v in values if isinstance(v, NDArray)]
    lists = [v for v in values if not isinstance(v, NDArray) and _onp.ndim(v) > 0]
    numbers = [v for v in values if not isinstance(v, NDArray) and _onp.ndim(v) == 0]
    dt = None
    for d in [_onp.dtype(a.dtype) for a in arrays] + [_value_dtype(v) for v in lists]:
        dt = d if dt is None else result_type(dt, d)
    for v in numbers:
        dt = _value_dtype(v) if dt is None else scalar_result_type(dt, _onp.asarray(v).item())
    return _onp.dtype(dt)


def as_source(v, dtype=None, ctx=None):
    """``v`` as an np array (of ``dtype`` when given) on ``ctx``: arrays are cast (a
    recorded cast), other values converted (lists of floats: the default float)."""
    if isinstance(v, NDArray):
        v = arr(v)
        return v if dtype is None or v.dtype == dtype else v.astype(dtype)
    if dtype is None:
        h = _onp.asarray(v)
        return array(v, ctx=ctx) if h.dtype.kind == "f" else array(v, dtype=h.dtype, ctx=ctx)
    return array(_onp.asarray(v).astype(dtype), dtype=dtype, ctx=ctx)


def int_array(values, ctx=None):
    """A host integer array as an np int64 array on ``ctx``."""
    return array(_onp.asarray(values, dtype=_onp.int64), dtype=_onp.int64, ctx=ctx)


def gather(fn, sources, index):
    """The array ``out[i] = concat(flattened sources)[index[i]]`` of ``index``'s shape
    (``index`` a host integer array made from ``tags``); ``sources`` are np arrays of one
    dtype on one context. Recorded: the gradient reaches every source."""
    from ._manipulation import concatenate, reshape
    index = _onp.asarray(index, dtype=_onp.int64)
    ctx = sources[0]._ctx
    flat = [reshape(arr(s), (-1,)) for s in sources]
    flat = flat[0] if len(flat) == 1 else concatenate(flat, axis=0)
    total = flat.shape[0]
    if index.size and total == 0:
        raise op_error(fn, "cannot take elements of an empty array")
    idx = int_array(index.reshape(-1), ctx)
    y = _front.call("take", [flat, idx], axis=0, mode="clip")
    return reshape(y, index.shape)
