"""Element-wise binary functions beyond the core ufuncs: the differentiable ``arctan2``,
``copysign``, ``ldexp``, ``heaviside``, ``float_power``, ``fmod``, ``divmod``, and the
integer ones run on the host (``gcd``, ``lcm``, ``bitwise_and``/``or``/``xor``,
``invert``/``bitwise_not``)."""
import numpy as _onp

from ..base import op_error
from . import _front
from ._dtypes import result_type, true_divide_type
from ._extra import host_ufunc
from ._math_common import (_as_array, _binary_operands, _both_numbers, _cast, _dtype_of,
                           _finish, _is_number, _negative_sign, _number, _operand,
                           _promoted, _select)
from ._ufuncs import (absolute, add, arctan, check_ufunc_kwargs, equal, floor, floor_divide,
                      greater, greater_equal, isinf, isnan, logical_and, logical_not,
                      logical_or, logical_xor, mod, multiply, negative, power, subtract,
                      true_divide)

__all__ = ["arctan2", "copysign", "ldexp", "lcm", "gcd", "bitwise_and", "bitwise_or",
           "bitwise_xor", "invert", "bitwise_not", "heaviside", "float_power", "divmod",
           "fmod"]


# ---------------------------------------------------------------- differentiable binaries

def arctan2(x1, x2, out=None, **kwargs):
    """The angle of the point ``(x2, x1)`` in radians, in ``[-pi, pi]``, element-wise,
    with NumPy's values at signed zeros and infinities. Integers compute in the default
    float. Differentiable everywhere except the origin: where ``|x2| >= |x1|`` it is
    ``arctan(x1 / x2)`` (plus ``+-pi`` on the left half-plane), elsewhere
    ``+-pi/2 - arctan(x2 / x1)``, so no branch divides by a small number.

    >>> mx.np.arctan2(mx.np.array([1., -1.]), mx.np.array([-1., -1.]))
    array([ 2.3561945, -2.3561945])
    """
    check_ufunc_kwargs("arctan2", kwargs)
    if _both_numbers(x1, x2):
        return _onp.arctan2(x1, x2)
    y, x, _ = _binary_operands("arctan2", x1, x2, float_only=True)
    neg_x, neg_y = _negative_sign(x), _negative_sign(y)
    both_inf = logical_and(isinf(x), isinf(y))
    flat = logical_or(greater_equal(absolute(x), absolute(y)), both_inf)   # NaN: steep
    steep = logical_not(flat)
    # flat branch: arctan(y / x); operands the branch does not use are replaced by 1 and 0
    # (so no gradient meets a division by zero), two infinities by +-1
    x_flat = _select(both_inf, _signed(1.0, neg_x, x),
                     _select(logical_or(steep, equal(x, 0)), 1.0, x))
    y_flat = _select(both_inf, _signed(1.0, neg_y, y), _select(steep, 0.0, y))
    t_flat = arctan(true_divide(y_flat, x_flat))
    t_flat = _select(neg_x, add(t_flat, _signed(_onp.pi, neg_y, y)), t_flat)
    # steep branch: +-pi/2 - arctan(x / y)
    y_steep = _select(flat, 1.0, y)
    t_steep = subtract(_signed(_onp.pi / 2, neg_y, y), arctan(true_divide(x, y_steep)))
    return _finish(_select(flat, t_flat, t_steep), out)


def _signed(value, negative_mask, like):
    """``-value`` where ``negative_mask``, else ``value``, shaped and typed as ``like`` (no
    gradient)."""
    dt = _dtype_of(like)
    return _select(negative_mask, _as_array(-value, like, dt), _as_array(value, like, dt))


def copysign(x1, x2, out=None, **kwargs):
    """``|x1|`` with the sign of ``x2``, element-wise (``-0.0`` counts as negative; the
    sign bit of a NaN in ``x2`` is read as positive). Integers keep their dtype, as
    MXNet's; the gradient is ``+-1`` towards ``x1`` and zero towards ``x2``."""
    check_ufunc_kwargs("copysign", kwargs)
    if _both_numbers(x1, x2):
        return _onp.copysign(x1, x2)
    x1, x2 = _operand(x1, x2), _operand(x2, x1)
    if _is_number(x1):
        dt = _promoted(x1, x2)
        magnitude = abs(_number(x1))
        return _finish(_select(_negative_sign(x2), _as_array(-magnitude, x2, dt),
                             _as_array(magnitude, x2, dt)), out)
    if _is_number(x2):
        y = absolute(x1)
        return _finish(negative(y) if _onp.signbit(x2) else y, out)
    x1, x2, _ = _binary_operands("copysign", x1, x2)
    y = absolute(x1)
    return _finish(_select(_negative_sign(x2), negative(y), y), out)


def ldexp(x1, x2, out=None, **kwargs):
    """``x1 * 2**x2`` element-wise. ``x1``'s float dtype is kept (integers give the default
    float); ``x2`` may be integer or float (MXNet's rule; NumPy takes integers only). The
    product is formed in float64 with the power split in three parts, so a result in range
    is exact (one rounding to the result dtype) even where ``2**x2`` alone would overflow.
    Differentiable in both operands."""
    check_ufunc_kwargs("ldexp", kwargs)
    if _both_numbers(x1, x2):
        return _onp.ldexp(x1, x2)
    x1, x2 = _operand(x1, x2), _operand(x2, x1)
    d1 = _dtype_of(x1) if not _is_number(x1) else None
    d2 = _dtype_of(x2) if not _is_number(x2) else None
    if d1 is not None and d1.kind == "f":
        dt = d1 if d2 is None or d2.kind != "f" else result_type(d1, d2)
    elif d1 is None and d2 is None:
        dt = None
    else:
        dt = _promoted(x1, x2)
        dt = true_divide_type(dt)
    f64 = _onp.dtype(_onp.float64)
    if _is_number(x2):
        e = min(max(float(x2), -_EXP_LIMIT), _EXP_LIMIT)
        third = _onp.floor(e / 3)
        y = _cast(x1, f64)
        for piece in (third, third, e - 2 * third):
            y = multiply(y, float(_onp.exp2(piece)))
        return _finish(_cast(y, dt), out)
    y = _cast(x1, f64) if not _is_number(x1) else _as_array(float(x1), x2, f64)
    e = _front.call("clip", [_cast(x2, f64)], a_min=-_EXP_LIMIT, a_max=_EXP_LIMIT)
    third = floor(multiply(e, 1.0 / 3))
    for piece in (third, third, subtract(e, multiply(third, 2.0))):
        y = multiply(y, power(2.0, piece))
    return _finish(_cast(y, dt), out)


_EXP_LIMIT = 2200.0     # past it every product is 0 or inf; a third of it stays finite


def heaviside(x1, x2, out=None, **kwargs):
    """The step function: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``
    (NaN stays NaN); integers compute in the default float. Differentiable towards
    ``x2`` (where ``x1 == 0``)."""
    check_ufunc_kwargs("heaviside", kwargs)
    if _both_numbers(x1, x2):
        return _onp.heaviside(x1, x2)
    x1, x2, dt = _binary_operands("heaviside", x1, x2, float_only=True)
    step = _select(greater(x1, 0), _as_array(1.0, x1, dt), _as_array(0.0, x1, dt))
    y = _select(equal(x1, 0), x2, step)
    return _finish(_select(isnan(x1), x1, y), out)


def float_power(x1, x2, out=None, **kwargs):
    """``x1 ** x2`` computed in float64 whatever the inputs (NumPy's rule);
    differentiable in both operands."""
    check_ufunc_kwargs("float_power", kwargs)
    if _both_numbers(x1, x2):
        return _onp.float_power(x1, x2)
    x1, x2 = _operand(x1, x2), _operand(x2, x1)
    f64 = _onp.dtype(_onp.float64)
    x1 = float(x1) if _is_number(x1) else _cast(x1, f64)
    x2 = float(x2) if _is_number(x2) else _cast(x2, f64)
    return _finish(power(x1, x2), out)


def fmod(x1, x2, out=None, **kwargs):
    """The C remainder ``x1 - trunc(x1 / x2) * x2``, with the sign of ``x1`` (``mod``
    takes the sign of ``x2``). Integers keep their dtype; differentiable like ``mod``."""
    check_ufunc_kwargs("fmod", kwargs)
    if _both_numbers(x1, x2):
        return _onp.fmod(x1, x2)
    x1, x2, _ = _binary_operands("fmod", x1, x2)
    # the remainder of the magnitudes (exact) with the sign of x1
    r = mod(absolute(x1), absolute(x2))
    return _finish(_select(_negative_sign(x1), negative(r), r), out)


def divmod(x1, x2, out=None, **kwargs):  # noqa: A001 (NumPy's name)
    """``(floor_divide(x1, x2), mod(x1, x2))``; ``out`` is a pair of arrays."""
    check_ufunc_kwargs("divmod", kwargs)
    if _both_numbers(x1, x2):
        return _onp.divmod(x1, x2)
    q, r = floor_divide(x1, x2), mod(x1, x2)
    if out is None:
        return q, r
    return _finish(q, out[0]), _finish(r, out[1])


# ---------------------------------------------------------------- integer / host binaries

def _host_binary(name, x1, x2, out, kwargs):
    check_ufunc_kwargs(name, kwargs)
    if _both_numbers(x1, x2):
        return getattr(_onp, name)(x1, x2)
    x1, x2 = _operand(x1, x2), _operand(x2, x1)
    dt = _promoted(x1, x2)
    if dt is not None and dt.kind == "f":
        raise op_error(name, f"takes integer (or boolean) operands, got dtype {dt}")
    if dt == _onp.bool_ and name in _LOGICAL:       # booleans: the registered logical ops
        return _LOGICAL[name](x1, x2, out=out)
    x1, x2 = _cast(x1, dt), _cast(x2, dt)
    return host_ufunc(name, [_as_array(x1, x2, dt), _as_array(x2, x1, dt)], out)


_LOGICAL = {"bitwise_and": logical_and, "bitwise_or": logical_or, "bitwise_xor": logical_xor}


def _host_binary_function(name, what):
    def function(x1, x2, out=None, **kwargs):
        return _host_binary(name, x1, x2, out, kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"NumPy's ``{name}(x1, x2)``: {what}, element-wise and broadcast, "
                        "on integer (bitwise: also boolean) operands promoted to one dtype. "
                        "Integers run on the host (one Custom operator; no gradient); "
                        "booleans use the registered logical operators.")
    return function


gcd = _host_binary_function("gcd", "the greatest common divisor of ``|x1|`` and ``|x2|``")
lcm = _host_binary_function("lcm", "the least common multiple of ``|x1|`` and ``|x2|``")
bitwise_and = _host_binary_function("bitwise_and", "the bit-wise AND")
bitwise_or = _host_binary_function("bitwise_or", "the bit-wise OR")
bitwise_xor = _host_binary_function("bitwise_xor", "the bit-wise XOR")


def invert(x, out=None, **kwargs):
    """Bit-wise NOT: ``logical_not`` for booleans, ``-x - 1`` (two's complement, so
    unsigned integers wrap) for integers; floats are an error."""
    check_ufunc_kwargs("invert", kwargs)
    if _is_number(x):
        return _onp.invert(x)
    x = _operand(x)
    dt = _dtype_of(x)
    if dt == _onp.bool_:
        return logical_not(x, out=out)
    if dt is not None and dt.kind not in "iu":
        raise op_error("invert", f"takes integer or boolean arrays, got dtype {dt}")
    return _finish(subtract(negative(x), 1), out)


bitwise_not = invert
