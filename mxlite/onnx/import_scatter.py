"""ONNX importers of element and n-d index scatters and gathers (registered in
``import_table.IMPORTS``): GatherElements, ScatterElements and ScatterND, onto mxlite's n-d
index operators (``gather_nd``, ``_scatter_set_nd``, ``_backward_gather_nd``).

mxlite's n-d indices have shape ``(M, Y...)`` (row ``m`` indexes axis ``m``); ONNX's
ScatterND/GatherND put the tuple on the last axis instead, and the element operators give
one index per element along ``axis`` only. Both become full ``(M, Y...)`` index tuples: the
element operators' other coordinates are constant grids of the indices' static shape. The
n-d operators read negative indices from the end and refuse out-of-range ones (NaN
included), as ONNX asks.
"""
import numpy as np

from .import_ops import _S, _all_const, _value
from .import_table import imports


def _text(value, default):
    value = default if value is None else value
    return value.decode() if isinstance(value, bytes) else value


def _static(ic, node, value, what):
    if value.shape is None:
        raise ic.error(node, f"needs the static shape of {what}")
    return value.shape


def _element_tuples(ic, node, indices, rank, axis):
    """The ``(rank, I...)`` n-d index tuples of element indices of shape ``I`` along
    ``axis``: ``indices`` itself on row ``axis``, the position on every other axis (a
    constant grid) on the others. A constant when ``indices`` is one."""
    shape = _static(ic, node, indices, "the indices")
    if len(shape) != rank:
        raise ic.error(node, f"indices of rank {len(shape)} for data of rank {rank}")
    dtype = indices.dtype if indices.dtype is not None else np.dtype(np.int64)
    grid = np.indices(shape, dtype=dtype)
    if indices.is_const:
        grid[axis] = indices.const
        return _value(grid)
    S = _S()
    parts = []
    if axis > 0:
        parts.append(ic.sym(_value(grid[:axis])))
    parts.append(S.expand_dims(ic.sym(indices), axis=0))
    if axis < rank - 1:
        parts.append(ic.sym(_value(grid[axis + 1:])))
    tuples = parts[0] if len(parts) == 1 else S.concat(*parts, dim=0)
    from .importer import Value
    return Value(sym=tuples, shape=(rank,) + tuple(shape), dtype=dtype)


def _axis(ic, node, rank):
    axis = ic.attr(node, "axis", 0)
    if not -rank <= axis < rank:
        raise ic.error(node, f"axis={axis} for data of rank {rank}")
    return axis % rank


def _np_positions(ic, node, tuples, dims):
    """Constant ``(M, Y...)`` tuples as a NumPy index (negative ones from the end)."""
    t = np.asarray(tuples).astype(np.int64)
    for m, n in enumerate(dims):
        if ((t[m] < -n) | (t[m] > n - 1)).any():
            raise ic.error(node, f"an index outside [-{n}, {n - 1}] on axis {m}")
    return tuple(t[m] % n for m, n in enumerate(dims))


@imports("GatherElements", into=["gather_nd", "concat", "expand_dims"])
def _gather_elements(ic, node, ins):
    """``out[i...] = data[i... with i[axis] replaced by indices[i...]]``: a ``gather_nd`` of
    the full index tuples (indices may be smaller than data on the other axes too)."""
    data, indices = ins
    rank = len(_static(ic, node, data, "data"))
    axis = _axis(ic, node, rank)
    tuples = _element_tuples(ic, node, indices, rank, axis)
    if _all_const([data, tuples]):
        where = _np_positions(ic, node, tuples.const, data.shape)
        return [_value(data.const[where])]
    return [ic.out(_S().gather_nd(ic.sym(data), ic.sym(tuples)), node)]


_NP_REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _scatter(ic, node, data, tuples, updates):
    """``data`` with ``updates`` written at the ``(M, Y...)`` tuples, combined as the node's
    ``reduction`` says: 'none' writes (``_scatter_set_nd``), 'add' adds (data plus the
    ``_backward_gather_nd`` scatter-add, repeated indices accumulating)."""
    reduction = _text(ic.attr(node, "reduction"), "none")
    shape = _static(ic, node, data, "data")
    if _all_const([data, tuples, updates]):
        out = data.const.copy()
        m = tuples.const.shape[0]
        where = _np_positions(ic, node, tuples.const, shape[:m])
        if reduction == "none":
            out[where] = updates.const
        elif reduction in _NP_REDUCE:
            _NP_REDUCE[reduction].at(out, where, updates.const)
        else:
            raise ic.error(node, f"reduction={reduction!r}")
        return [_value(out)]
    S = _S()
    if reduction == "none":
        y = S._internal._scatter_set_nd(ic.sym(data), ic.sym(updates), ic.sym(tuples),
                                        shape=tuple(shape))
    elif reduction == "add":
        added = S._internal._backward_gather_nd(ic.sym(updates), ic.sym(tuples),
                                                shape=tuple(shape))
        y = S.elemwise_add(ic.sym(data), added)
    else:
        raise ic.error(node, f"reduction={reduction!r} (mxlite's scatters write or add; none "
                             "multiplies or takes the max/min)")
    return [ic.out(y, node)]


@imports("ScatterElements", "Scatter", into=["_scatter_set_nd", "_backward_gather_nd",
                                             "elemwise_add", "concat", "expand_dims"])
def _scatter_elements(ic, node, ins):
    """``data`` with ``updates[i...]`` at ``i...`` with ``i[axis]`` replaced by
    ``indices[i...]``; reduction 'none' or 'add' (opset 9's Scatter: 'none')."""
    data, indices, updates = ins
    rank = len(_static(ic, node, data, "data"))
    axis = _axis(ic, node, rank)
    return _scatter(ic, node, data, _element_tuples(ic, node, indices, rank, axis), updates)


def _tuples_first(ic, node, indices):
    """ONNX's ``(Y..., M)`` n-d indices as mxlite's ``(M, Y...)``; a single tuple ``(M,)``
    becomes ``(M, 1)``."""
    shape = _static(ic, node, indices, "the indices")
    q = len(shape)
    from .importer import Value
    if indices.is_const:
        t = indices.const.reshape(shape[0], 1) if q == 1 else \
            np.moveaxis(indices.const, -1, 0)
        return _value(np.ascontiguousarray(t))
    x = ic.sym(indices)
    S = _S()
    if q == 1:
        return Value(sym=S.expand_dims(x, axis=1), shape=(shape[0], 1), dtype=indices.dtype)
    perm = (q - 1,) + tuple(range(q - 1))
    return Value(sym=S.transpose(x, axes=perm), shape=tuple(shape[p] for p in perm),
                 dtype=indices.dtype)


@imports("ScatterND", into=["_scatter_set_nd", "_backward_gather_nd", "elemwise_add",
                            "transpose", "expand_dims"])
def _scatter_nd(ic, node, ins):
    """``data`` with ``updates[y...]`` written (or added) at ``indices[y..., :]``."""
    data, indices, updates = ins
    tuples = _tuples_first(ic, node, indices)
    if len(indices.shape) == 1:             # one tuple: updates gain its leading axis of 1
        if updates.is_const:
            updates = _value(updates.const[None])
        else:
            from .importer import Value
            shape = None if updates.shape is None else (1,) + updates.shape
            updates = Value(sym=_S().expand_dims(ic.sym(updates), axis=0), shape=shape,
                            dtype=updates.dtype)
    return _scatter(ic, node, data, tuples, updates)
