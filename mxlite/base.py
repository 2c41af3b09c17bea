"""Errors and dtype rules shared by every layer of mxlite."""
import numpy as np

__all__ = ["MXNetError", "normalize_dtype", "DTYPES", "FLOAT_DTYPES", "op_error"]


class MXNetError(ValueError):
    """Raised for every bad argument: the message names the operator, the argument and the shapes."""


def op_error(op_name, message):
    """Build the MXNetError for operator ``op_name`` (``"op: message"``)."""
    return MXNetError(f"{op_name}: {message}")


# The dtypes an NDArray may hold, MXNet's names.
DTYPES = {name: np.dtype(name) for name in
          ("float16", "float32", "float64", "int8", "uint8", "int32", "int64", "bool")}
FLOAT_DTYPES = frozenset(DTYPES[n] for n in ("float16", "float32", "float64"))
INT_DTYPES = frozenset(DTYPES[n] for n in ("int8", "uint8", "int32", "int64"))
_ALLOWED = frozenset(DTYPES.values())


def normalize_dtype(dtype, op_name="dtype", default="float32"):
    """Return the ``numpy.dtype`` for ``dtype`` (a name, a NumPy dtype or type), or raise MXNetError."""
    if dtype is None:
        dtype = default
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in _ALLOWED:
        raise op_error(op_name, f"unsupported dtype {dtype!r}; expected one of {sorted(DTYPES)}")
    return dt
