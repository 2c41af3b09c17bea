"""NDArray indexing as registered operators, so ``x[key]`` and ``x[key] = v`` are on the tape.

``_getitem`` reads ``data[key]`` (NumPy basic and advanced indexing), ``_getitem_scatter`` is
its adjoint (zeros of ``shape`` with ``data`` added at ``key``) and ``_setitem`` is ``data``
with ``value`` written at ``key``. Each one's gradient is built from the three of them, so
indexing is differentiable to any order. ``key`` is the canonical tuple made by
``canonical_key``: ints, slices, None, Ellipsis and int64 (or bool) NumPy arrays.
"""
import numpy as np

from ..base import MXNetError, op_error
from .common import same_type
from .registry import OpDef, Param, register
from .shape_utils import check_shape

__all__ = ["canonical_key", "region_shape", "is_basic", "has_repeats", "write_region"]

_PROBE = np.zeros(1, np.int8)


def _probe(op, shape, key):
    """``key`` applied to a stride-0 stand-in of ``shape``: checks the key, gives the shape."""
    try:
        return np.ndarray(shape, np.int8, _PROBE, 0, (0,) * len(shape))[key]
    except IndexError as e:
        raise IndexError(f"{op}: index {key!r} for shape {shape}: {e}") from None
    except (TypeError, ValueError) as e:
        raise op_error(op, f"invalid index {key!r} for shape {shape}: {e}") from None


def _index_array(op, k):
    k = np.asarray(k)
    if k.dtype.kind == "b":
        return k
    if k.dtype.kind == "f":
        if not np.all(np.isfinite(k)) or not np.array_equal(k, np.trunc(k)):
            raise IndexError(f"{op}: index array holds non-integer values")
        return k.astype(np.int64)
    if k.dtype.kind in "iu":
        if k.dtype.kind == "u" and k.size and k.max() > np.iinfo(np.int64).max:
            raise IndexError(f"{op}: index array holds values beyond int64")
        return k.astype(np.int64, copy=False)
    raise IndexError(f"{op}: an index array must hold integers or booleans, got {k.dtype}")


def _item(op, k):
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, (bool, np.bool_)):
        raise IndexError(f"{op}: a boolean scalar is not a valid index")
    if isinstance(k, (int, np.integer)):
        return int(k)
    if isinstance(k, (list, np.ndarray)):
        return _index_array(op, k)
    raise IndexError(f"{op}: an index must be an integer, slice, None, Ellipsis or an array "
                     f"of integers, got {type(k).__name__} {k!r}")


def canonical_key(key, shape, op="__getitem__", numpy=False):
    """The canonical tuple for NumPy-level ``key`` on an array of ``shape`` (checked later,
    where it is applied).

    MXNet 1.x rule (``numpy=False``, ``mx.nd``): indexing every axis with an integer gives
    shape ``(1,)``, not a 0-d array (``x[i]`` on a 1-d array is ``x[i:i+1]``, a view that
    writes through). ``numpy=True`` (``mx.np``) keeps NumPy's 0-d result.
    """
    if type(key) is slice or type(key) is int:
        items = (key,)          # the common case, already canonical
    else:
        items = tuple(_item(op, k) for k in (key if isinstance(key, tuple) else (key,)))
    if numpy:
        return items
    ints = [j for j, k in enumerate(items) if type(k) is int]
    if shape and len(ints) == len(shape) and all(type(k) is int or k is Ellipsis
                                                 for k in items):
        # every axis taken by an integer (an Ellipsis then stands for no axis)
        last = ints[-1]
        n, i = shape[-1], items[last]
        if not -n <= i < n:
            raise IndexError(f"{op}: index {i} is out of bounds for axis {len(shape) - 1} "
                             f"with size {n} (shape {shape})")
        i %= n
        items = items[:last] + (slice(i, i + 1),) + items[last + 1:]
    return items


def region_shape(key, shape, op="__getitem__"):
    """The shape ``key`` selects from an array of ``shape`` (IndexError/MXNetError if bad)."""
    return _probe(op, shape, key).shape


def is_basic(key):
    """True when ``key`` has no index array (the selected region is a strided view)."""
    return not any(isinstance(k, np.ndarray) for k in key)


def has_repeats(key, shape):
    """True when an advanced ``key`` selects some element of ``shape`` more than once."""
    if is_basic(key):
        return False
    counts = np.zeros(shape, np.int32)
    np.add.at(counts, key, 1)
    return bool(counts.max(initial=0) > 1)


# ---- _getitem ---------------------------------------------------------------------------------
def _getitem_shape(shapes, attrs):
    return [_probe("_getitem", shapes[0], attrs.key).shape]


def _getitem_compute(rctx, ins, outs, attrs):
    key = attrs.key
    if is_basic(key):                       # a strided view: the copy kernel moves it
        rctx.xp.strided_copy(ins[0][_view_key(key)], outs[0])
    else:
        outs[0][...] = ins[0][key]


def _getitem_grad(F, node, ograds):
    """y = x[key]: dx = zeros like x with dy added at key (repeated advanced indices sum)."""
    return [F._internal._getitem_scatter(ograds[0], key=node.attrs.key,
                                         shape=node.input_shapes[0])]


# ---- _getitem_scatter ------------------------------------------------------------------------
def _scatter_shape(shapes, attrs):
    target = check_shape("_getitem_scatter", attrs.shape, "shape")
    region = _probe("_getitem_scatter", target, attrs.key).shape
    if region != shapes[0]:
        raise op_error("_getitem_scatter", f"data of shape {shapes[0]} does not fill index "
                       f"{attrs.key!r} of shape {target}, which selects shape {region}")
    return [target]


def _scatter_compute(rctx, ins, outs, attrs):
    out = outs[0]
    out[...] = 0
    if is_basic(attrs.key):
        write_region(rctx.xp, out, attrs.key, ins[0])   # each element selected once: a write
    else:
        rctx.xp.add_at(out, attrs.key, ins[0])


def _scatter_grad(F, node, ograds):
    """y = zeros(shape) with x added at key (linear in x): dx = dy[key]."""
    return [F._internal._getitem(ograds[0], key=node.attrs.key)]


# ---- _setitem ---------------------------------------------------------------------------------
def _setitem_shape(shapes, attrs):
    data, value = shapes
    region = _probe("_setitem", data, attrs.key).shape
    try:
        fits = np.broadcast_shapes(value, region) == region
    except ValueError:
        fits = False
    if not fits:
        raise op_error("_setitem", f"cannot assign a value of shape {value} to index "
                       f"{attrs.key!r} of shape {data}, which selects shape {region}")
    return [data]


def _setitem_type(dtypes, attrs):
    if dtypes[0] != dtypes[1]:
        raise op_error("_setitem", f"value has dtype {dtypes[1]}, data has dtype {dtypes[0]}")
    return [dtypes[0]]


def _view_key(key):
    """A basic ``key`` that gives a view even where every axis is indexed (0-d)."""
    return key if any(k is Ellipsis for k in key) else key + (Ellipsis,)


def write_region(xp, target, key, value):
    """``target[key] = value`` (broadcasting ``value``) with namespace ``xp``'s strided copy."""
    if is_basic(key):
        view = target[_view_key(key)]
        # checked here, not by the copy: an empty region would accept any value on the CPU
        if np.broadcast_shapes(value.shape, view.shape) != view.shape:
            raise ValueError(f"cannot broadcast {value.shape} to {view.shape}")
        xp.strided_copy(value, view)
    else:
        target[key] = value


def _setitem_compute(rctx, ins, outs, attrs):
    rctx.xp.strided_copy(ins[0], outs[0])
    write_region(rctx.xp, outs[0], attrs.key, ins[1])


def _setitem_grad(F, node, ograds):
    """y = data with value written at key: d data = dy with zeros at key; d value = dy[key]
    summed over the axes value was broadcast along. With repeated advanced indices only one
    write survives, so the value's gradient is refused there (see ``has_repeats``)."""
    g, a = ograds[0], node.attrs
    data_shape, value_shape = node.input_shapes
    grads = [None, None]
    if node.wants[0]:
        zero = F.zeros((), dtype=node.input_dtypes[1], ctx=node.context)
        grads[0] = F._internal._setitem(g, zero, key=a.key)
    if node.wants[1]:
        if has_repeats(a.key, data_shape):
            raise MXNetError("_setitem: the gradient of a value written at repeated advanced "
                             "indices is undefined (only one write survives)")
        region = F._internal._getitem(g, key=a.key)
        region_shape = _probe("_setitem", data_shape, a.key).shape
        grads[1] = region if region_shape == tuple(value_shape) else F.sum_to(
            region, shape=value_shape)
    return grads


_KEY = Param("key", "index", doc="canonical index tuple (ints, slices, None, Ellipsis, arrays)")

register(OpDef(
    "_getitem", inputs=("data",), params=(_KEY,), infer_shape=_getitem_shape,
    infer_type=same_type, compute={"cpu": _getitem_compute}, gradient=_getitem_grad,
    grad_needs=(), doc="``data[key]`` (NumPy basic and advanced indexing), a copy; what "
    "``NDArray.__getitem__`` records."))
register(OpDef(
    "_getitem_scatter", inputs=("data",), infer_shape=_scatter_shape, infer_type=same_type,
    params=(_KEY, Param("shape", "shape", doc="shape of the output")),
    compute={"cpu": _scatter_compute}, gradient=_scatter_grad, grad_needs=(),
    doc="Zeros of ``shape`` with ``data`` added at ``key``: the adjoint of ``_getitem``."))
register(OpDef(
    "_setitem", inputs=("data", "value"), params=(_KEY,), infer_shape=_setitem_shape,
    infer_type=_setitem_type, compute={"cpu": _setitem_compute}, gradient=_setitem_grad,
    grad_needs=(), doc="``data`` with ``value`` (broadcast) written at ``key``; what "
    "``NDArray.__setitem__`` records."))
