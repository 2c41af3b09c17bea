"""Rounding to ``decimals`` places, half to even: ``around``, ``round``, ``round_``."""
import numpy as _onp

from ..base import op_error
from . import _front
from ._math_common import (_cast, _dtype_of, _finish, _is_number, _negative_sign, _operand,
                           _select)
from ._ufuncs import (absolute, add, equal, floor, greater, mod, multiply, negative,
                      subtract, true_divide)

__all__ = ["around", "round", "round_"]


def around(a, decimals=0, out=None):
    """``a`` rounded to ``decimals`` decimal places, halves to even (NumPy's rule: the
    value is scaled by ``10**decimals``, rounded with ``rint``, and scaled back in its
    dtype). Integers with ``decimals >= 0`` are copied; with ``decimals < 0`` they are
    rounded exactly in float64 and cast back. The gradient is zero.

    >>> mx.np.around(mx.np.array([0.5, 1.5, 2.5, -0.5]))
    array([ 0.,  2.,  2., -0.])
    """
    if _is_number(a):
        return _onp.around(a, decimals)
    if not isinstance(decimals, (int, _onp.integer)) or isinstance(decimals, bool):
        raise op_error("around", f"decimals must be an int, got {decimals!r}")
    decimals = int(decimals)
    a = _operand(a)
    dt = _dtype_of(a)
    if dt is not None and dt.kind in "biu":
        if decimals >= 0:
            return _finish(_front.call("_copy", [a]), out)
        scale = 10.0 ** -decimals
        y = _half_even(true_divide(_cast(a, _onp.dtype(_onp.float64)), scale))
        return _finish(_cast(multiply(y, scale), dt), out)
    if decimals == 0:
        return _finish(_half_even(a), out)
    if decimals > 0:
        scale = 10.0 ** decimals
        return _finish(true_divide(_half_even(multiply(a, scale)), scale), out)
    scale = 10.0 ** -decimals
    return _finish(multiply(_half_even(true_divide(a, scale)), scale), out)


def _half_even(x):
    """``x`` rounded to the nearest integer, halves to the even one, the sign of ``x`` kept
    (``-0.4`` gives ``-0.0``); infinities and NaN stay. ``x - floor(x)`` is exact, so the
    halves are found exactly."""
    low = floor(x)
    frac = subtract(x, low)
    up = add(low, 1.0)
    tie = add(low, mod(low, 2.0))           # the even neighbour
    y = _select(equal(frac, 0.5), tie, _select(greater(frac, 0.5), up, low))
    y = absolute(y)
    return _select(_negative_sign(x), negative(y), y)


def round(a, decimals=0, out=None):  # noqa: A001 (NumPy's name)
    """``around``."""
    return around(a, decimals, out)


round_ = round
