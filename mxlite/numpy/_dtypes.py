"""The dtypes of ``mx.np``: the default float, and MXNet's type promotion.

* ``default_float()``: float32, as MXNet's ``mx.np`` (its arrays feed float32 kernels),
  or NumPy's float64 after ``npx.set_np(dtype=True)``.
* ``result_type(a, b)``: the dtype of a binary operation. NumPy's rule, except that an
  integer or boolean array meeting a floating one gives that float (``int32 + float16`` is
  float16, ``int64 + float32`` float32; NumPy widens both to float64), MXNet's rule, so
  mixing integer data into a float32 model never doubles its precision silently. NumPy's
  int16 (``int8`` with ``uint8``), which mxlite does not store, widens to int32, MXNet's
  result.
* ``scalar_result_type(a, value)``: an array with a Python number: the array's dtype,
  except a float number with an integer/bool array (the default float) and an int with a
  bool array (int64), as MXNet's ``_npi_*_scalar`` operators.
"""
import numbers
import threading

import numpy as np

from ..base import normalize_dtype

__all__ = ["default_float", "set_default_float64", "is_np_default_dtype", "result_type",
           "scalar_result_type", "as_dtype", "true_divide_type"]

_state = threading.local()
_global = {"float64": False}


def set_default_float64(active, thread_only=False):
    """Make float64 (``active``) or float32 the default float; returns the previous state."""
    prev = is_np_default_dtype()
    if thread_only:
        _state.float64 = bool(active)
    else:
        _global["float64"] = bool(active)
        _state.float64 = bool(active)
    return prev


def is_np_default_dtype():
    """Whether the default float is float64 (``npx.set_np(dtype=True)``)."""
    return getattr(_state, "float64", _global["float64"])


def default_float():
    """The dtype ``np.array([1, 2])``, ``np.zeros(3)`` and true division of integers give."""
    return np.dtype(np.float64) if is_np_default_dtype() else np.dtype(np.float32)


def as_dtype(dtype, op="dtype"):
    """``dtype`` (a name, type or NumPy dtype; None: the default float) as a NumPy dtype
    mxlite stores, or MXNetError naming ``op``."""
    if dtype is None:
        return default_float()
    return normalize_dtype(dtype, op)


def _kind(dt):
    return "f" if dt.kind == "V" or dt.kind == "f" else dt.kind     # bfloat16 is a float


def result_type(a, b):
    """The dtype of a binary operation on arrays of dtypes ``a`` and ``b`` (module doc)."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ka, kb = _kind(a), _kind(b)
    if ka == "f" and kb != "f":
        return a
    if kb == "f" and ka != "f":
        return b
    return _stored(np.result_type(a, b))


def _stored(dt):
    """``dt`` widened to a dtype mxlite stores (int16 -> int32, unsigned wider than 8 bits
    -> int64)."""
    if dt == np.int16:
        return np.dtype(np.int32)
    if dt.kind == "u" and dt.itemsize > 1:
        return np.dtype(np.int64)
    return dt


def scalar_result_type(dtype, value):
    """The dtype of an array of ``dtype`` combined with the Python number ``value``."""
    dtype = np.dtype(dtype)
    kind = _kind(dtype)
    if isinstance(value, (bool, np.bool_)):
        return dtype
    if isinstance(value, numbers.Integral):
        return np.dtype(np.int64) if kind == "b" else dtype
    if kind in "biu":
        return default_float()
    return dtype


def true_divide_type(dtype):
    """``a / b`` of one dtype: floats keep theirs, integers and bools give the default
    float."""
    dtype = np.dtype(dtype)
    return dtype if _kind(dtype) == "f" else default_float()
