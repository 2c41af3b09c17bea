"""``unravel_index``: flat indices as coordinates."""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._math_common import _dtype_of, _is_number, _operand
from ._reductions import max as _max, min as _min

__all__ = ["unravel_index"]


def unravel_index(indices, shape, order="C"):
    """The coordinates, one array per axis of ``shape``, of the flat ``indices`` (integer
    array or int) in an array of ``shape``; ``order='F'`` counts the first axis fastest.
    Arrays keep their integer dtype (the registered ``unravel_index`` operator); an int
    gives NumPy int64 scalars. An index outside ``shape`` is an MXNetError."""
    if order not in ("C", "F"):
        raise op_error("unravel_index", f"order must be 'C' or 'F', got {order!r}")
    shape = (int(shape),) if isinstance(shape, (int, _onp.integer)) else \
        tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise op_error("unravel_index", f"dimensions must be non-negative, got {shape}")
    if _is_number(indices):
        try:
            return tuple(_onp.int64(i) for i in _onp.unravel_index(indices, shape, order))
        except (ValueError, TypeError) as e:
            raise op_error("unravel_index", str(e)) from None
    indices = _operand(indices)
    dt, ishape = _dtype_of(indices), _front.shape_of(indices)
    if ishape is None or -1 in ishape:
        raise op_error("unravel_index", "needs the shape of indices: it takes arrays, or "
                       "Symbols inside a hybridized block traced on arrays")
    if dt is not None and dt.kind not in "iu":
        raise op_error("unravel_index", f"indices must be integers, got dtype {dt}")
    size = int(_onp.prod(shape))
    if isinstance(indices, NDArray) and indices.size and \
            (int(_min(indices)) < 0 or int(_max(indices)) >= size):
        raise op_error("unravel_index", f"an index is out of bounds for an array of shape "
                       f"{shape} (size {size})")
    op_shape = shape if order == "C" else shape[::-1]
    if not shape:
        return ()
    from ._manipulation import reshape
    flat = reshape(indices, (-1,))
    coords = _front.call("unravel_index", [flat], shape=op_shape)
    rows = [reshape(_front.call("slice_axis", [coords], axis=0, begin=i, end=i + 1), ishape)
            for i in range(len(shape))]
    return tuple(rows if order == "C" else rows[::-1])
