"""The longer tail of NumPy's functions over registered operators (each documented where
defined)."""
import numpy as _onp

from . import _front
from ._ufuncs import logical_not, negative, subtract

__all__ = ["invert", "bitwise_not"]


def invert(x, out=None):
    """Bit-wise NOT: ``logical_not`` for booleans, ``-x - 1`` for integers."""
    if x.dtype == _onp.bool_:
        return logical_not(x, out=out)
    if x.dtype.kind not in "iu":
        from ..base import op_error
        raise op_error("invert", f"not supported for dtype {x.dtype}")
    return subtract(negative(x), 1, out=out)


bitwise_not = invert
