"""Input normalisation shared by the array iterators (MXNet's ``mx.io.utils`` helpers)."""
from collections import OrderedDict

import numpy as np

from ..base import MXNetError

__all__ = ["_init_data", "_has_instance", "_getdata_by_idx"]


def _init_data(data, allow_empty, default_name):
    """``[(name, NDArray)]`` sorted by name, from an array, a list of arrays (named
    ``default_name``, or ``_<i>_<default_name>`` for several) or a dict of name to array."""
    from .. import ndarray as nd
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, nd.NDArray)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise MXNetError(f"NDArrayIter: {default_name} is an empty list")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise MXNetError(f"NDArrayIter: {default_name} must be an NDArray, a numpy.ndarray, a "
                         f"list of them or a dict of them, got {type(data).__name__}")
    out = {}
    for name, value in data.items():
        if isinstance(value, nd.NDArray):
            out[name] = value
            continue
        try:
            out[name] = nd.array(value)
        except Exception:                # noqa: BLE001  (anything NumPy cannot read)
            raise MXNetError(f"NDArrayIter: {name} must be an NDArray or array-like, got "
                             f"{type(value).__name__}") from None
    return sorted(out.items())


def _has_instance(data, dtype):
    """Whether an array of ``data`` (``[(name, array)]``) is a ``dtype``."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """``data`` (``[(name, NDArray)]``) with the examples of each taken in the order ``idx``."""
    from .. import ndarray as nd
    return [(name, nd.array(arr.asnumpy()[idx], ctx=arr.context, dtype=arr.dtype))
            for name, arr in data]
