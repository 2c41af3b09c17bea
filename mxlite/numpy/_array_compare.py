"""Comparisons of whole arrays: ``isclose`` (element-wise booleans), and ``allclose``,
``array_equal``, ``array_equiv`` (Python booleans; they read the data)."""
import numpy as _onp

from ..base import op_error
from . import _front
from ._math_common import _as_array, _cast, _is_number, _operand, _promoted, _select
from ._reductions import all as _all
from ._ufuncs import (absolute, add, equal, isnan, logical_and, logical_or, multiply,
                      subtract)

__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Booleans: ``|a - b| <= atol + rtol * |b|`` for finite elements, equality for
    infinite ones, and (``equal_nan``) NaN against NaN. Integers compare in float64, floats
    in their promoted dtype (NumPy's rules)."""
    if _is_number(a) and _is_number(b):
        return _onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    a, b = _operand(a, b), _operand(b, a)
    dt = _promoted(a, b)
    if dt is not None and dt.kind in "biu":
        dt = _onp.dtype(_onp.float64)
    a, b = _cast(a, dt), _cast(b, dt)
    a, b = _as_array(a, b, dt), _as_array(b, a, dt)
    from ._ufuncs import isfinite, less_equal
    tol = add(multiply(absolute(b), float(rtol)), float(atol))
    finite = logical_and(isfinite(a), isfinite(b))
    close = _select(finite, less_equal(absolute(subtract(a, b)), tol), equal(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def _values(fn, x):
    x = _operand(x)
    if _front.is_symbolic([x]):
        raise op_error(fn, "gives a Python bool and reads the data: it takes arrays, not "
                       "Symbols")
    return x


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere (a Python bool); shapes must broadcast."""
    a, b = _values("allclose", a), _values("allclose", b)
    return bool(_all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements (a Python bool;
    ``equal_nan``: NaN equals NaN)."""
    a1, a2 = _values("array_equal", a1), _values("array_equal", a2)
    s1, s2 = _onp.shape(a1), _onp.shape(a2)
    if s1 != s2:
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return bool(_all(same))


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast to one shape with equal elements (a Python
    bool)."""
    a1, a2 = _values("array_equiv", a1), _values("array_equiv", a2)
    try:
        _onp.broadcast_shapes(_onp.shape(a1), _onp.shape(a2))
    except ValueError:
        return False
    return bool(_all(equal(a1, a2)))
