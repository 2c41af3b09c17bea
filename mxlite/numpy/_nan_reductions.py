"""Reductions beyond ``_reductions``: the NaN-skipping ``nancumsum``, ``nancumprod``,
``nanmax``, ``nanmin``, ``nanargmax``, ``nanargmin``, and NumPy's old names ``product``,
``alltrue``, ``sometrue``."""
import numpy as _onp

from ..base import op_error
from ._math_common import _as_array, _dtype_of, _finish, _operand, _select
from ._reductions import (all as _all, any as _any, argmax, argmin, cumprod, cumsum,
                          max as _max, min as _min, prod)
from ._ufuncs import isnan

__all__ = ["nancumsum", "nancumprod", "nanmax", "nanmin", "nanargmax", "nanargmin",
           "product", "alltrue", "sometrue"]


def _nan_filled(fn, a, fill):
    a = _operand(a)
    dt = _dtype_of(a)
    if dt is not None and dt.kind not in "fV":
        return a, None
    nan = isnan(a)
    return _select(nan, _as_array(fill, a, _dtype_of(a)), a), nan


def nancumsum(a, axis=None, dtype=None, out=None):
    """The running sum along ``axis`` (flattened if None), NaN counted as 0;
    differentiable."""
    filled, _ = _nan_filled("nancumsum", a, 0.0)
    return cumsum(filled, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """The running product along ``axis`` (flattened if None), NaN counted as 1 (as
    ``cumprod``, on the host)."""
    filled, _ = _nan_filled("nancumprod", a, 1.0)
    return cumprod(filled, axis, dtype, out)


def _nan_extreme(fn, reduce, fill, a, axis, out, keepdims):
    filled, nan = _nan_filled(fn, a, fill)
    y = reduce(filled, axis=axis, keepdims=keepdims)
    if nan is not None:
        all_nan = _all(nan, axis=axis, keepdims=keepdims)
        y = _select(all_nan, _as_array(float("nan"), y, _dtype_of(y)), y)
    return _finish(y, out)


def nanmax(a, axis=None, out=None, keepdims=False):
    """The largest element over ``axis`` ignoring NaN (NaN where a slice is all NaN);
    differentiable like ``max``."""
    return _nan_extreme("nanmax", _max, -_onp.inf, a, axis, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    """The smallest element over ``axis`` ignoring NaN (NaN where a slice is all NaN);
    differentiable like ``min``."""
    return _nan_extreme("nanmin", _min, _onp.inf, a, axis, out, keepdims)


def _nan_arg(fn, arg, fill, a, axis, out):
    filled, nan = _nan_filled(fn, a, fill)
    if nan is not None and bool(_any(_all(nan, axis=axis))):
        raise op_error(fn, "All-NaN slice encountered")
    return arg(filled, axis=axis, out=out)


def nanargmax(a, axis=None, out=None):
    """The index (int64) of the largest element ignoring NaN; an all-NaN slice is an
    MXNetError (it reads the data)."""
    return _nan_arg("nanargmax", argmax, -_onp.inf, a, axis, out)


def nanargmin(a, axis=None, out=None):
    """The index (int64) of the smallest element ignoring NaN; an all-NaN slice is an
    MXNetError (it reads the data)."""
    return _nan_arg("nanargmin", argmin, _onp.inf, a, axis, out)


def product(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
            where=None):  # noqa: A002 (NumPy's keyword)
    """``prod`` (NumPy's old name)."""
    return prod(a, axis, dtype, out, keepdims, initial, where)


def alltrue(a, axis=None, out=None, keepdims=False):
    """``all`` (NumPy's old name)."""
    return _all(a, axis, out, keepdims)


def sometrue(a, axis=None, out=None, keepdims=False):
    """``any`` (NumPy's old name)."""
    return _any(a, axis, out, keepdims)
