"""``mx.np._internal``: the two boolean-mask assignment entry points of MXNet's NumPy
interface that code calls by name (``F.np._internal.boolean_mask_assign_scalar`` /
``_tensor``). Each is NumPy's ``data[:, ..., mask] = value`` with ``mask`` starting at axis
``start_axis``, through ``mx.np.ndarray``'s boolean-mask assignment."""
from ..base import op_error
from . import _front

__all__ = ["boolean_mask_assign_scalar", "boolean_mask_assign_tensor"]


def _assign(fn, data, mask, value, start_axis, out):
    if _front.is_symbolic([data, mask, value]):
        raise op_error(fn, "assigns in place, which a graph cannot; call it on arrays")
    if out is not None and out is not data:
        raise op_error(fn, "out must be data itself (the assignment is in place) or None")
    target = data if out is not None else data.copy()
    start = int(start_axis)
    if not 0 <= start <= data.ndim - mask.ndim:
        raise op_error(fn, f"start_axis={start_axis} does not place a mask of shape "
                       f"{mask.shape} within data of shape {data.shape}")
    target[(slice(None),) * start + (mask,)] = value
    return target


def boolean_mask_assign_scalar(data, mask, value, start_axis=0, out=None):
    """``data`` with ``value`` (a number) written where the boolean ``mask`` (aligned with
    ``data``'s axes from ``start_axis``) is true; in place when ``out`` is ``data``."""
    return _assign("boolean_mask_assign_scalar", data, mask, value, start_axis, out)


def boolean_mask_assign_tensor(data, mask, value, start_axis=0, out=None):
    """``data`` with the array ``value`` (one row per true element of ``mask``, or one
    broadcast over them) written where ``mask`` is true; in place when ``out`` is
    ``data``."""
    return _assign("boolean_mask_assign_tensor", data, mask, value, start_axis, out)
