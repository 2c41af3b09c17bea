"""Element-wise unary functions beyond the core ufuncs: ``modf``, ``frexp``, ``signbit``,
``spacing``, ``nan_to_num``, ``real``."""
import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._binary_math import ldexp
from ._dtypes import default_float
from ._extra import host_ufunc
from ._math_common import (_as_array, _cast, _dtype_of, _finish, _is_number, _negative_sign,
                           _operand, _select)
from ._ufuncs import (check_ufunc_kwargs, equal, greater, isinf, isnan, less, logical_and,
                      negative, subtract, trunc)

__all__ = ["modf", "frexp", "signbit", "spacing", "nan_to_num", "real"]


def _float_operand(fn, x):
    x = _operand(x)
    dt = _dtype_of(x)
    if dt is not None and dt.kind in "biu":
        x = _cast(x, default_float())
    return x


def modf(x, out=None, **kwargs):
    """``(fractional part, integral part)``, both with the sign of ``x`` (``modf(-2.0)``
    is ``(-0.0, -2.0)``; infinities have fractional part ``+-0``). Integers compute in
    the default float. The fractional part has gradient 1 (0 at integers)."""
    check_ufunc_kwargs("modf", kwargs)
    if _is_number(x):
        return _onp.modf(x)
    x = _float_operand("modf", x)
    whole = trunc(x)
    dt = _dtype_of(x)
    signed_zero = _select(_negative_sign(x), _as_array(-0.0, x, dt), _as_array(0.0, x, dt))
    frac = _select(equal(x, whole), signed_zero, subtract(x, whole))
    if out is None:
        return frac, whole
    return _finish(frac, out[0]), _finish(whole, out[1])


def frexp(x, out=None, **kwargs):
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent`` and
    ``0.5 <= |mantissa| < 1`` (0, infinities and NaN give themselves and exponent 0).
    The exponent (int32) is found on the host; the mantissa is ``ldexp(x, -exponent)``,
    differentiable. Integers compute in the default float."""
    check_ufunc_kwargs("frexp", kwargs)
    if _is_number(x):
        return _onp.frexp(x)
    x = _float_operand("frexp", x)
    e = host_ufunc("frexp_exponent", [x])
    m = ldexp(x, negative(e))
    m = _cast(m, _dtype_of(x))
    if out is None:
        return m, e
    return _finish(m, out[0]), _finish(e, out[1])


def signbit(x, out=None, **kwargs):
    """Booleans: whether the sign bit is set (``-0.0`` and negative NaNs included);
    read on the host."""
    check_ufunc_kwargs("signbit", kwargs)
    if _is_number(x):
        return _onp.signbit(x)
    return host_ufunc("signbit", [_operand(x)], out)


def spacing(x, out=None, **kwargs):
    """The distance from ``x`` to the next float away from zero (of ``x``'s dtype;
    integers: float64, NumPy's rule). Computed on the host; its gradient is zero."""
    check_ufunc_kwargs("spacing", kwargs)
    if _is_number(x):
        return _onp.spacing(x)
    return host_ufunc("spacing", [_operand(x)], out)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    """``x`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (default: the dtype's largest and smallest finite values). Integers and booleans are
    returned unchanged (a copy unless ``copy=False``). ``copy=False`` writes into ``x``.
    The gradient is 1 at finite elements and 0 at the replaced ones."""
    if kwargs:
        raise TypeError(f"nan_to_num() got unexpected keyword arguments {sorted(kwargs)}")
    if _is_number(x):
        return _onp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
    x = _operand(x)
    dt = _dtype_of(x)
    if dt is None:
        if posinf is None or neginf is None:
            raise op_error("nan_to_num", "a Symbol of unknown dtype needs explicit posinf= "
                           "and neginf=")
    else:
        if dt.kind != "f":
            return x if not copy else _front.call("_copy", [x])
        info = _onp.finfo(dt)
        posinf = float(info.max) if posinf is None else posinf
        neginf = float(info.min) if neginf is None else neginf
    y = _select(isnan(x), _fill(nan, x, dt), x)
    y = _select(logical_and(isinf(x), greater(x, 0)), _fill(posinf, x, dt), y)
    y = _select(logical_and(isinf(x), less(x, 0)), _fill(neginf, x, dt), y)
    if not copy and isinstance(x, NDArray):
        return _front.call("_copy", [y], out=x)
    return y


def _fill(value, like, dtype):
    """``value`` as an operand of ``where`` beside ``like`` in ``dtype``."""
    return _as_array(value, like, dtype)


def real(val):
    """The real part: the array itself as a view (mxlite arrays are real)."""
    val = _operand(val)
    if _is_number(val):
        return _onp.real(val)
    if _front.is_symbolic([val]):
        return _front.call("_copy", [val])
    from ._manipulation import reshape
    return reshape(val, val.shape)
