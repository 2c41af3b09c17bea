"""NumPy's shape and joining functions over the registered shape operators.

Reshapes of contiguous data are views (recorded, so gradients flow), as ``mx.nd``'s;
everything else is a copy. Axes follow NumPy (negative counts from the end; a bad axis is
an ``MXNetError`` naming the function).
"""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from ..ops.registry import REGISTRY
from ..ops.shape_utils import normalize_axes, normalize_axis
from . import _front
from .multiarray import asarray, ndarray

__all__ = ["reshape", "transpose", "moveaxis", "swapaxes", "rollaxis", "squeeze",
           "expand_dims", "ravel", "broadcast_to", "broadcast_arrays", "atleast_1d",
           "atleast_2d", "atleast_3d", "concatenate", "append", "stack", "vstack", "row_stack",
           "hstack", "dstack", "column_stack", "split", "array_split", "hsplit", "vsplit",
           "dsplit", "flip", "fliplr", "flipud", "roll", "rot90", "tile", "repeat", "shape",
           "ndim", "size"]

_RESHAPE = REGISTRY["reshape"]


def _arr(a):
    """``a`` as an np array (a legacy NDArray as a zero-copy np view; lists and numbers as
    new arrays); Symbols as they are."""
    return a if isinstance(a, ndarray) or _front.is_symbolic([a]) else asarray(a)


def _np_shape(fn, src, newshape):
    """NumPy's reshape rule: one -1 is inferred, other entries are taken literally."""
    if isinstance(newshape, (int, _onp.integer)):
        newshape = (int(newshape),)
    newshape = tuple(int(d) for d in newshape)
    size = 1
    for d in src:
        size *= d
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in newshape):
        raise op_error(fn, f"cannot reshape an array of shape {tuple(src)} into {newshape}: "
                       "only one -1 is allowed and no other negative size")
    known = 1
    for d in newshape:
        if d != -1:
            known *= d
    if unknown:
        if known == 0 or size % known:
            raise op_error(fn, f"cannot reshape an array of size {size} into shape {newshape}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    elif known != size:
        raise op_error(fn, f"cannot reshape an array of size {size} into shape {newshape}")
    return newshape


def reshape(a, newshape, order="C"):
    """``a`` with shape ``newshape`` (NumPy's rule: one -1 inferred); a view of
    contiguous data, recorded under autograd."""
    if order not in ("C", None):
        raise op_error("reshape", f"order={order!r} is not supported; only 'C'")
    a = _arr(a)
    if _front.is_symbolic([a]):
        shape = (newshape,) if isinstance(newshape, (int, _onp.integer)) else tuple(newshape)
        shape = tuple(int(d) for d in shape)
        if any(d < -1 for d in shape) or shape.count(-1) > 1:
            raise op_error("reshape", f"takes sizes >= 0 and one -1, got {shape}")
        src = _front.shape_of(a)
        if 0 in shape and src is not None and -1 not in src:
            return _symbolic_empty(a, _np_shape("reshape", src, shape))
        if 0 in shape:
            raise op_error("reshape", f"a symbolic reshape takes positive sizes and one -1, "
                           f"got {shape}")
        return _front.call("reshape", [a], shape=shape)
    new = _np_shape("reshape", a.shape, newshape)
    if new == tuple(a.shape):
        return _front.as_np(a._alias(a._data, _RESHAPE, _RESHAPE.parse_attrs({"shape": new})))
    return _front.as_np(a._alias(a._data.reshape(new), _RESHAPE,
                                 _RESHAPE.parse_attrs({"shape": new})))


def _symbolic_empty(a, shape):
    """A zero-size Symbol ``a`` reshaped to the zero-size ``shape``: the operator reads a 0
    in its shape as "keep this axis", so the (empty) result is made as zeros of ``shape``
    plus the sum of ``a`` (0, broadcast), which keeps ``a`` in the graph."""
    dt = _front.dtype_of(a) or _onp.dtype(_onp.float32)
    with _front.symbolic_creation():
        y = _front.call("_zeros", [], shape=shape, dtype=dt)
    total = _front.call("reshape", [_front.call("sum", [a])], shape=(1,) * len(shape))
    return _front.call("broadcast_add", [y, total])


def ravel(x, order="C"):
    """``x`` as a 1-d array (a view)."""
    return reshape(x, (-1,), order)


def shape(a):
    """The shape tuple of ``a``."""
    return tuple(_arr(a).shape)


def ndim(a):
    """The number of axes of ``a``."""
    return _arr(a).ndim


def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis``)."""
    a = _arr(a)
    return a.size if axis is None else a.shape[axis]


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed by default); a copy."""
    a = _arr(a)
    if axes is not None:
        if _front.is_symbolic([a]):
            return _front.call("transpose", [a], axes=tuple(axes))
        axes = tuple(normalize_axes("transpose", tuple(axes), a.ndim, "axes"))
        if sorted(axes) != list(range(a.ndim)):
            raise op_error("transpose", f"axes {axes} are not a permutation of the "
                           f"{a.ndim} axes")
    return _front.call("transpose", [a], axes=axes)


def moveaxis(a, source, destination):
    """``a`` with axes ``source`` moved to ``destination`` (the others keep their order)."""
    a = _arr(a)
    src = normalize_axes("moveaxis", _list(source), a.ndim, "source")
    dst = normalize_axes("moveaxis", _list(destination), a.ndim, "destination")
    if len(src) != len(dst):
        raise op_error("moveaxis", "source and destination must name as many axes")
    order = [ax for ax in range(a.ndim) if ax not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, tuple(order))


def _list(axes):
    return (int(axes),) if isinstance(axes, (int, _onp.integer)) else tuple(axes)


def swapaxes(a, axis1, axis2):
    """``a`` with two axes exchanged."""
    a = _arr(a)
    i = normalize_axis("swapaxes", axis1, a.ndim)
    j = normalize_axis("swapaxes", axis2, a.ndim)
    order = list(range(a.ndim))
    order[i], order[j] = order[j], order[i]
    return transpose(a, tuple(order))


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved before position ``start``."""
    a = _arr(a)
    axis = normalize_axis("rollaxis", axis, a.ndim)
    if start < 0:
        start += a.ndim
    if not 0 <= start <= a.ndim:
        raise op_error("rollaxis", f"start={start} is out of range for {a.ndim} axes")
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def squeeze(a, axis=None):
    """``a`` without its length-1 axes (those in ``axis``); a view."""
    a = _arr(a)
    shape = _front.shape_of(a)
    if shape == () and isinstance(axis, (int, _onp.integer)):
        normalize_axis("squeeze", int(axis), 1)      # NumPy: axis 0 or -1 of a 0-d array
        return _front.call("_copy", [a])
    if shape is None or -1 in shape:    # a Symbol of unknown shape: the operator's rule
        return _front.call("squeeze", [a], axis=axis)
    if axis is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    else:
        axes = normalize_axes("squeeze", _list(axis), len(shape), "axis")
        bad = [i for i in axes if shape[i] != 1]
        if bad:
            raise op_error("squeeze", f"cannot select an axis to squeeze out which has size "
                           f"not equal to one (axes {bad} of shape {tuple(shape)})")
    return reshape(a, tuple(d for i, d in enumerate(shape) if i not in axes))


def expand_dims(a, axis):
    """``a`` with new length-1 axes at ``axis`` (an int or a tuple); a view."""
    a = _arr(a)
    if _front.is_symbolic([a]):
        return _front.call("expand_dims", [a], axis=int(axis))
    axes = _list(axis)
    out_ndim = a.ndim + len(axes)
    axes = sorted(normalize_axes("expand_dims", axes, out_ndim, "axis"))
    it = iter(a.shape)
    return reshape(a, tuple(1 if i in axes else next(it) for i in range(out_ndim)))


def broadcast_to(array, shape):  # noqa: A002
    """``array`` broadcast to ``shape`` (NumPy's rules; a copy). A -2 in ``shape`` keeps
    the input's length on that (right-aligned) axis, as MXNet's."""
    a = _arr(array)
    shape = (int(shape),) if isinstance(shape, (int, _onp.integer)) else tuple(shape)
    if -2 in shape:         # MXNet's extension: -2 keeps the input's (right-aligned) length
        src = _front.shape_of(a)
        if src is None or len(src) > len(shape):
            raise op_error("broadcast_to", f"-2 in shape {shape} needs the input's shape")
        lead = len(shape) - len(src)
        shape = tuple(src[i - lead] if d == -2 and i >= lead else d
                      for i, d in enumerate(shape))
        if -2 in shape:
            raise op_error("broadcast_to", f"-2 in shape {shape} has no input axis to keep")
    if not _front.is_symbolic([a]):
        try:
            _onp.broadcast_shapes(tuple(a.shape), shape)
            ok = _onp.broadcast_shapes(tuple(a.shape), shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise op_error("broadcast_to", f"cannot broadcast an array of shape "
                           f"{tuple(a.shape)} to {shape}")
        if a.ndim < len(shape):
            a = reshape(a, (1,) * (len(shape) - a.ndim) + tuple(a.shape))
        if tuple(a.shape) == shape:
            return _front.call("_copy", [a])
        if 0 in shape:
            # the operator reads a 0 in shape as "keep this axis": broadcast a length-1
            # axis to 1 and cut it to 0 (recorded, so the result stays on the tape)
            full = tuple(a.shape[i] if d == 0 else d for i, d in enumerate(shape))
            y = a if full == tuple(a.shape) else \
                _front.call("broadcast_to", [a], shape=full)
            return y[tuple(slice(0, 0) if d == 0 else slice(None) for d in shape)]
    src = _front.shape_of(a)
    if src is not None and len(src) < len(shape) and -1 not in src:
        src = (1,) * (len(shape) - len(src)) + tuple(src)
        a = reshape(a, src)
    if src is not None and len(src) == len(shape):
        for axis, (have, want) in enumerate(zip(src, shape)):
            if want == 0 and have == 1:     # the operator reads a 0 in shape as "keep"
                a = _front.call("slice_axis", [a], axis=axis, begin=0, end=0)
    return _front.call("broadcast_to", [a], shape=shape)


def broadcast_arrays(*args):
    """The arrays broadcast against each other."""
    arrays = [_arr(a) for a in args]
    target = _onp.broadcast_shapes(*[tuple(a.shape) for a in arrays])
    return [broadcast_to(a, target) for a in arrays]


def _atleast(n, arys):
    out = []
    for a in arys:
        a = _arr(a)
        if a.ndim < n:
            if n == 3 and a.ndim == 2:
                a = reshape(a, tuple(a.shape) + (1,))
            elif n == 3 and a.ndim == 1:
                a = reshape(a, (1, a.shape[0], 1))
            else:
                a = reshape(a, (1,) * (n - a.ndim) + tuple(a.shape))
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input with at least one axis."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """Each input with at least two axes (new ones in front)."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """Each input with at least three axes (NumPy's placement of the new ones)."""
    return _atleast(3, arys)


def concatenate(seq, axis=0, out=None):
    """The arrays joined along an existing ``axis`` (``axis=None``: flattened first)."""
    arrays = [_arr(a) for a in _sequence("concatenate", seq)]
    if not arrays:
        raise op_error("concatenate", "need at least one array to concatenate")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    arrays = _promote_all(arrays)
    if not _front.is_symbolic(arrays):
        if arrays[0].ndim == 0:
            raise op_error("concatenate", "zero-dimensional arrays cannot be concatenated")
        axis = normalize_axis("concatenate", axis, arrays[0].ndim)
    return _front.call("concat", arrays, out=out, dim=axis, num_args=len(arrays))


def _promote_all(arrays):
    """The arrays in their promoted dtype (Symbols as traced; unchanged while a Symbol's
    dtype is unknown)."""
    from ._dtypes import result_type
    dtypes = [_front.dtype_of(a) for a in arrays]
    if any(d is None for d in dtypes):      # (not `None in`: dtype(None) is float64)
        return arrays
    dt = dtypes[0]
    for d in dtypes[1:]:
        dt = result_type(dt, d)
    return [a if d == dt else a.astype(dt) for a, d in zip(arrays, dtypes)]


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (flattened when None)."""
    return concatenate([arr, values], axis=axis)


def stack(arrays, axis=0, out=None):
    """The arrays (of one shape) joined along a new ``axis``."""
    arrays = [_arr(a) for a in _sequence("stack", arrays)]
    if not arrays:
        raise op_error("stack", "need at least one array to stack")
    arrays = _promote_all(arrays)
    if not _front.is_symbolic(arrays):
        axis = normalize_axis("stack", axis, arrays[0].ndim + 1)
    return _front.call("stack", arrays, out=out, axis=axis, num_args=len(arrays))


def vstack(tup, out=None):
    """The arrays stacked row-wise (1-d ones become rows)."""
    return concatenate(_as_list(atleast_2d(*_sequence("vstack", tup))), axis=0, out=out)


row_stack = vstack


def hstack(tup, out=None):
    """The arrays stacked column-wise (along axis 1; 1-d ones along axis 0)."""
    arrays = _as_list(atleast_1d(*_sequence("hstack", tup)))
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1, out=out)


def dstack(tup):
    """The arrays stacked along the third axis."""
    return concatenate(_as_list(atleast_3d(*_sequence("dstack", tup))), axis=2)


def column_stack(tup):
    """1-d arrays as columns of a 2-d array (2-d arrays as they are)."""
    cols = []
    for a in _sequence("column_stack", tup):
        a = _arr(a)
        cols.append(reshape(a, (-1, 1)) if a.ndim < 2 else a)
    return concatenate(cols, axis=1)


def _as_list(x):
    return x if isinstance(x, list) else [x]


def _sequence(fn, seq):
    """``seq``, the arrays a joining function takes. An array stands for the sequence of its
    rows, as in NumPy; a Symbol cannot be iterated so, and is refused rather than read as a
    one-element sequence."""
    if _front.is_symbolic([seq]) and not isinstance(seq, (list, tuple)):
        raise op_error(fn, "takes a sequence of arrays; got one Symbol (pass a list of "
                       "Symbols)")
    return seq

def _ndim(fn, a):
    """The rank of an array, or of a Symbol as traced (MXNetError when not known)."""
    shape = _front.shape_of(a)
    if shape is None:
        raise op_error(fn, "needs the rank of its input, which this Symbol does not know")
    return len(shape)


def _split(fn, ary, indices_or_sections, axis, even):
    a = _arr(ary)
    shape = _front.shape_of(a)
    symbolic = _front.is_symbolic([a])
    if symbolic and (shape is None or shape[normalize_axis(fn, axis, len(shape))] < 0):
        # the length along axis is not known here: equal sections by the operator
        if not isinstance(indices_or_sections, (int, _onp.integer)):
            raise op_error(fn, "a Symbol of unknown shape splits into equal sections only")
        return list(_front.call("split", [a], num_outputs=int(indices_or_sections),
                                axis=axis, squeeze_axis=False))
    axis = normalize_axis(fn, axis, len(shape))
    n = shape[axis]
    if isinstance(indices_or_sections, (int, _onp.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise op_error(fn, f"number of sections must be larger than 0, got {sections}")
        if even and n % sections:
            raise op_error(fn, f"array split does not result in an equal division: axis "
                           f"{axis} of length {n} into {sections} sections")
        base, extra = divmod(n, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        bounds = list(_onp.cumsum([0] + sizes))
    else:
        points = [int(i) for i in indices_or_sections]
        bounds = [0] + [min(max(p + n if p < 0 else p, 0), n) for p in points] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi = int(lo), int(max(lo, hi))
        if symbolic:
            out.append(_front.call("slice_axis", [a], axis=axis, begin=lo, end=hi))
        else:
            out.append(a[(slice(None),) * axis + (slice(lo, hi),)])
    return out


def split(ary, indices_or_sections, axis=0):
    """``ary`` cut into equal sections (an int) or at the given indices along ``axis``."""
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """``split``, but a number of sections need not divide the axis."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for 1-d arrays)."""
    a = _arr(ary)
    return split(a, indices_or_sections, axis=0 if _ndim("hsplit", a) == 1 else 1)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 (at least 2-d)."""
    a = _arr(ary)
    if _ndim("vsplit", a) < 2:
        raise op_error("vsplit", "vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 (at least 3-d)."""
    a = _arr(ary)
    if _ndim("dsplit", a) < 3:
        raise op_error("dsplit", "dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, axis=2)


def flip(m, axis=None, out=None):
    """``m`` with the order of elements along ``axis`` (all axes by default) reversed."""
    m = _arr(m)
    if axis is not None and _front.shape_of(m) is None:
        # a Symbol of unknown rank: the operator checks the axes when bound
        return _front.call("flip", [m], out=out, axis=_list(axis))
    if axis is None:
        axis = tuple(range(m.ndim))
    axes = _list(axis)
    if not axes or m.ndim == 0:
        return _front.call("_copy", [m], out=out)
    return _front.call("flip", [m], out=out, axis=axes)


def fliplr(m):
    """``m`` with the columns reversed (axis 1)."""
    return flip(m, 1)


def flipud(m):
    """``m`` with the rows reversed (axis 0)."""
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Elements shifted by ``shift`` along ``axis`` (of the flattened array if None),
    wrapping around."""
    a = _arr(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), tuple(a.shape))
    shifts, axes = _list(shift), _list(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise op_error("roll", "shift and axis must have the same length")
    for s, ax in zip(shifts, axes):
        ax = normalize_axis("roll", ax, a.ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        s %= n
        if s:
            lead = (slice(None),) * ax
            a = concatenate([a[lead + (slice(n - s, None),)], a[lead + (slice(0, n - s),)]],
                            axis=ax)
    return a


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    m = _arr(m)
    axes = tuple(normalize_axes("rot90", tuple(axes), m.ndim, "axes"))
    if len(axes) != 2 or axes[0] == axes[1]:
        raise op_error("rot90", f"axes must name two different axes, got {axes}")
    k %= 4
    if k == 0:
        return _front.call("_copy", [m])
    if k == 2:
        return flip(m, axes)
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return transpose(flip(m, axes[1]), tuple(order))
    return flip(transpose(m, tuple(order)), axes[1])


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis."""
    a = _arr(A)
    reps = _list(reps)
    if any(r < 0 for r in reps):
        raise op_error("tile", f"reps must be non-negative, got {reps}")
    return _front.call("tile", [a], reps=reps)


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (flattened when None)."""
    a = _arr(a)
    if not isinstance(repeats, (int, _onp.integer)):
        reps = _onp.asarray(repeats.asnumpy() if isinstance(repeats, NDArray) else repeats)
        if reps.size == 1:
            repeats = int(reps.reshape(-1)[0])
        else:
            from ._indexing import take
            flat = reshape(a, (-1,)) if axis is None else a
            ax = 0 if axis is None else normalize_axis("repeat", axis, a.ndim)
            if reps.shape != (flat.shape[ax],) or (reps < 0).any():
                raise op_error("repeat", f"repeats of shape {reps.shape} do not match axis "
                               f"{ax} of length {flat.shape[ax]}")
            idx = _onp.repeat(_onp.arange(flat.shape[ax]), reps)
            return take(flat, asarray(idx.astype(_onp.int64), ctx=a._ctx), axis=ax)
    if repeats < 0:
        raise op_error("repeat", f"repeats must be non-negative, got {repeats}")
    if axis is None:
        return _front.call("repeat", [reshape(a, (-1,))], repeats=int(repeats), axis=0)
    return _front.call("repeat", [a], repeats=int(repeats),
                       axis=normalize_axis("repeat", axis, a.ndim))
