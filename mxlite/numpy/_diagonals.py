"""Diagonals: ``diagonal``, ``trace``, ``diag``, ``diagflat``."""
from ..base import op_error
from . import _front
from ._math_common import _operand
from ._reductions import sum as _sum

__all__ = ["trace", "diagonal", "diag", "diagflat"]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the planes ``(axis1, axis2)`` of ``a`` (at least 2-d),
    as the last axis of the result; an offset beyond the planes gives an empty diagonal.
    A copy (the registered ``diag`` operator); differentiable."""
    from ..ops.shape_utils import normalize_axis
    a = _operand(a)
    offset = int(offset)
    shape = _front.shape_of(a)
    if shape is None:           # a Symbol of unknown shape: the operator checks when bound
        return _front.call("diag", [a], k=offset, axis1=axis1, axis2=axis2)
    if len(shape) < 2:
        raise op_error("diagonal", f"needs an array of at least 2 axes, got shape {shape}")
    ax1 = normalize_axis("diagonal", axis1, len(shape))
    ax2 = normalize_axis("diagonal", axis2, len(shape))
    if ax1 == ax2:
        raise op_error("diagonal", f"axis1 and axis2 cannot be the same axis ({ax1})")
    rows, cols = shape[ax1], shape[ax2]
    if rows >= 0 and cols >= 0 and (offset >= cols or -offset >= rows):
        # no element on that diagonal: an empty slice keeps the tape and the dtype
        a = _front.call("slice_axis", [a], axis=ax2, begin=0, end=0)
        offset = 0
    return _front.call("diag", [a], k=offset, axis1=ax1, axis2=ax2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along the ``offset`` diagonal of the planes ``(axis1, axis2)``; integers
    sum in int64 as ``np.sum``. Differentiable."""
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def diag(v, k=0):
    """A 1-d ``v``: the square matrix with ``v`` on its ``k``-th diagonal; a 2-d ``v``:
    its ``k``-th diagonal. Differentiable."""
    v = _operand(v)
    shape = _front.shape_of(v)
    if shape is not None and len(shape) == 2:
        return diagonal(v, k, 0, 1)
    if shape is not None and len(shape) != 1:
        raise op_error("diag", f"takes a 1-d or 2-d array, got shape {shape}")
    return _front.call("diag", [v], k=int(k))


def diagflat(v, k=0):
    """The square matrix with the flattened ``v`` on its ``k``-th diagonal."""
    from ._manipulation import reshape
    return diag(reshape(_operand(v), (-1,)), k)
