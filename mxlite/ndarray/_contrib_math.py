"""``mx.nd.contrib.boolean_mask``: MXNet's operator with a data-dependent output shape.

mxlite infers every operator's output shape from its input shapes and parameters alone, so
the rows a mask keeps cannot be a registered operator's output. The front end reads the mask
(one host copy of a vector), and selects the kept positions with ``take``: the recorded
operator is ``take``, so ``autograd`` differentiates through it to any order (the rows not
kept get a zero gradient, the mask none). A symbol cannot express it (its shape would be
unknown until run): ``mx.sym.contrib`` has no boolean_mask.
"""
import numpy as np

from ..base import MXNetError
from .ndarray import NDArray, array

__all__ = ["boolean_mask"]


def _axis(data, axis):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) \
            or not -data.ndim <= axis < data.ndim:
        raise MXNetError(f"boolean_mask: axis={axis!r} is outside data of shape {data.shape}")
    return int(axis) % data.ndim


def boolean_mask(data, index, axis=0, out=None, name=None):
    """The slices of ``data`` along ``axis`` whose entry of the mask ``index`` (a vector of
    ``data.shape[axis]`` numbers) is non-zero, in order. Any axis (MXNet 1.9.1 took axis 0
    only). The gradient of data is the head gradient at the kept slices, zero elsewhere;
    the mask gets none.

    >>> mx.nd.contrib.boolean_mask(mx.nd.array([[1, 2], [3, 4], [5, 6]]),
    ...                            mx.nd.array([0, 1, 1])).asnumpy().tolist()
    [[3.0, 4.0], [5.0, 6.0]]
    """
    from . import take
    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise MXNetError(f"boolean_mask: data and index must be NDArrays, got "
                         f"{type(data).__name__} and {type(index).__name__}")
    ax = _axis(data, axis)
    if index.ndim != 1 or index.shape[0] != data.shape[ax]:
        raise MXNetError(f"boolean_mask: index must be a vector of data.shape[{ax}] = "
                         f"{data.shape[ax]} entries (data shape {data.shape}), got shape "
                         f"{index.shape}")
    keep = np.flatnonzero(index.asnumpy())
    positions = array(keep, ctx=data.context, dtype="int64")
    return take(data, positions, axis=ax, out=out) if out is not None else \
        take(data, positions, axis=ax)
