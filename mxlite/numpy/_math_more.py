"""NumPy's element-wise and small-array math beyond the core ufuncs.

Differentiable functions are compositions of registered operators (through the other
``mx.np`` functions), so autograd differentiates them to any order and, where no shape or
dtype is needed, they build graphs on Symbols:

* ``arctan2``, ``copysign``, ``ldexp``, ``heaviside``, ``float_power``, ``divmod``,
  ``modf``, ``frexp`` (the mantissa), ``nan_to_num``, ``around``/``round``/``round_``,
  ``trace``, ``diagonal``, ``diag``, ``diagflat``, ``einsum`` (``_einsum``), ``nanmax``,
  ``nanmin``, ``nancumsum``, ``real``, ``fmod``;
* integer and boolean functions without a registered operator (``gcd``, ``lcm``,
  ``bitwise_and``/``or``/``xor``, ``signbit``, ``spacing``, ``frexp``'s exponent) run
  NumPy's ufunc on the host inside one Custom operator (``_extra``); their gradients are
  zero;
* ``isclose``, ``nanargmax``/``nanargmin`` and ``unravel_index`` give booleans or indices;
  ``allclose``, ``array_equal`` and ``array_equiv`` give Python booleans (they read the
  data).

Binary functions take arrays or Python numbers in either place and broadcast; operands
are promoted with ``_dtypes.result_type`` (an integer meeting a float gives that float), and
functions that are only defined on floats compute integer data in the default float. Two
numbers give NumPy's result (a NumPy scalar). The ufunc keywords ``where``, ``casting``,
``order``, ``dtype`` and ``subok`` are accepted at their defaults only (another legal value
is ``NotImplementedError``, an illegal one ``TypeError``).
"""
import numbers

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float, result_type, scalar_result_type, true_divide_type
from ._einsum import einsum
from ._extra import host_ufunc
from ._indexing import where
from ._reductions import all as _all, any as _any, argmax, argmin, cumprod, cumsum, max as _max
from ._reductions import min as _min, prod, sum as _sum
from ._ufuncs import (absolute, add, arctan, check_ufunc_kwargs, equal, floor, floor_divide,
                      greater, greater_equal, isinf, isnan, less, logical_and, logical_not,
                      logical_or, logical_xor, mod, multiply, negative, power, subtract,
                      true_divide, trunc)

__all__ = ["arctan2", "copysign", "ldexp", "lcm", "gcd", "bitwise_and", "bitwise_or",
           "bitwise_xor", "invert", "bitwise_not", "heaviside", "float_power", "divmod",
           "modf", "frexp", "signbit", "spacing", "nan_to_num", "isclose", "allclose",
           "array_equal", "array_equiv", "around", "round", "round_", "trace", "diagonal",
           "diag", "diagflat", "einsum", "fmod", "real", "nancumsum", "nancumprod", "nanmax",
           "nanmin", "nanargmax", "nanargmin", "product", "alltrue", "sometrue",
           "unravel_index"]

def _is_number(x):
    return isinstance(x, (numbers.Number, _onp.generic)) and not isinstance(x, NDArray)


def _operand(x, like=None):
    """``x`` as an np array or Symbol (numbers stay numbers; a list of integers or booleans
    keeps NumPy's dtype, other lists take the default float, as ``mx.np.array``)."""
    if _is_number(x) or isinstance(x, NDArray) or _front.is_symbolic([x]):
        return x
    from .multiarray import to_array
    host = _onp.asarray(x)
    return to_array(x, like=like, dtype=host.dtype if host.dtype.kind in "biu" else None)


def _dtype_of(x):
    """The dtype of an array (or of a Symbol while a block is traced); None for a number
    or an unknown dtype."""
    return None if _is_number(x) else _front.dtype_of(x)


def _promoted(x1, x2):
    """The result dtype of two operands (arrays, Symbols or numbers; None where a dtype
    is not known)."""
    d1, d2 = _dtype_of(x1), _dtype_of(x2)
    if d1 is not None and d2 is not None:
        return result_type(d1, d2)
    if d1 is not None and _is_number(x2):
        return scalar_result_type(d1, _number(x2))
    if d2 is not None and _is_number(x1):
        return scalar_result_type(d2, _number(x1))
    return None


def _number(v):
    return v.item() if isinstance(v, _onp.generic) else v


def _cast(x, dtype):
    """Array ``x`` in ``dtype`` (a recorded cast when it differs); numbers and Symbols as
    they are."""
    if dtype is None or _is_number(x) or _dtype_of(x) == dtype:
        return x
    return _front.call("cast", [x], dtype=dtype)


def _binary_operands(name, x1, x2, float_only=False):
    """Both operands promoted to one dtype (the default float for integers when
    ``float_only``); numbers become 0-d arrays of that dtype beside an array."""
    x1, x2 = _operand(x1, x2), _operand(x2, x1)
    dt = _promoted(x1, x2)
    if dt is not None and float_only:
        dt = true_divide_type(dt)
    x1, x2 = _cast(x1, dt), _cast(x2, dt)
    x1, x2 = _as_array(x1, x2, dt), _as_array(x2, x1, dt)
    s1, s2 = _front.shape_of(x1), _front.shape_of(x2)
    if s1 is not None and s2 is not None and s1 != s2 and -1 not in s1 + s2:
        # one shape for both, so every later selection is element to element
        from ._manipulation import broadcast_to
        try:
            shape = _onp.broadcast_shapes(s1, s2)
        except ValueError:
            raise op_error(name, f"operands could not be broadcast together with shapes "
                           f"{s1} {s2}") from None
        x1 = x1 if s1 == shape else broadcast_to(x1, shape)
        x2 = x2 if s2 == shape else broadcast_to(x2, shape)
    return x1, x2, dt


def _select(condition, x, y):
    """``where(condition, x, y)`` for operands of one shape (numbers become operands of the
    other's dtype), on arrays and on Symbols."""
    x = _as_array(x, y, _dtype_of(y)) if _is_number(x) else x
    y = _as_array(y, x, _dtype_of(x)) if _is_number(y) else y
    shapes = [_front.shape_of(v) for v in (condition, x, y)]
    if shapes[0] is not None and shapes[0] == shapes[1] == shapes[2] and \
            _dtype_of(x) == _dtype_of(y) is not None:
        return _front.call("where", [condition, x, y])      # the operator, directly
    if not _front.is_symbolic([condition, x, y]):
        return where(condition, x, y)
    return _front.call("where", [_cast(condition, _dtype_of(x)), x, y])


def _as_array(x, like, dtype):
    """A number ``x`` as an operand beside ``like``: an array of ``like``'s shape and
    ``dtype`` filled with ``x`` (beside a Symbol: ``x`` added to ``zeros_like``)."""
    if not _is_number(x):
        return x
    if isinstance(like, NDArray):
        return _front.call("_full", [], shape=tuple(like.shape), val=_number(x),
                           dtype=dtype or default_float(), ctx=like._ctx)
    return _front.call("_plus_scalar", [_front.call("zeros_like", [like])], scalar=_number(x))


def _finish(y, out):
    """``y``, or ``y`` written into ``out`` (cast to ``out``'s dtype)."""
    if out is None:
        return y
    if not isinstance(out, NDArray):
        raise op_error("mx.np", f"out= must be an mx.np.ndarray, got {type(out).__name__}")
    return _front.call("cast", [y], out=out, dtype=out.dtype)


def _both_numbers(x1, x2):
    return _is_number(x1) and _is_number(x2)


def _negative_sign(x):
    """Booleans: where ``x`` has its sign bit set, ``-0.0`` included (the sign of a NaN is
    read as positive; ``signbit`` reads it exactly)."""
    neg = less(x, 0)
    dt = _dtype_of(x)
    if dt is not None and dt.kind in "biu":
        return neg
    return logical_or(neg, less(true_divide(1, x), 0))      # 1 / -0.0 is -inf


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


# ---------------------------------------------------------------- unary functions

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


# ---------------------------------------------------------------- rounding

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


# ---------------------------------------------------------------- diagonals

def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the planes ``(axis1, axis2)`` of ``a`` (at least 2-d),
    as the last axis of the result; an offset beyond the planes gives an empty diagonal.
    A copy (the registered ``diag`` operator); differentiable."""
    from ..ops.shape_utils import normalize_axis
    a = _operand(a)
    offset = int(offset)
    shape = _front.shape_of(a)
    if shape is None:           # a Symbol of unknown shape: the operator checks when bound
        return _front.call("diag", [a], k=offset, axis1=axis1, axis2=axis2)
    if len(shape) < 2:
        raise op_error("diagonal", f"needs an array of at least 2 axes, got shape {shape}")
    ax1 = normalize_axis("diagonal", axis1, len(shape))
    ax2 = normalize_axis("diagonal", axis2, len(shape))
    if ax1 == ax2:
        raise op_error("diagonal", f"axis1 and axis2 cannot be the same axis ({ax1})")
    rows, cols = shape[ax1], shape[ax2]
    if rows >= 0 and cols >= 0 and (offset >= cols or -offset >= rows):
        # no element on that diagonal: an empty slice keeps the tape and the dtype
        a = _front.call("slice_axis", [a], axis=ax2, begin=0, end=0)
        offset = 0
    return _front.call("diag", [a], k=offset, axis1=ax1, axis2=ax2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along the ``offset`` diagonal of the planes ``(axis1, axis2)``; integers
    sum in int64 as ``np.sum``. Differentiable."""
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def diag(v, k=0):
    """A 1-d ``v``: the square matrix with ``v`` on its ``k``-th diagonal; a 2-d ``v``:
    its ``k``-th diagonal. Differentiable."""
    v = _operand(v)
    shape = _front.shape_of(v)
    if shape is not None and len(shape) == 2:
        return diagonal(v, k, 0, 1)
    if shape is not None and len(shape) != 1:
        raise op_error("diag", f"takes a 1-d or 2-d array, got shape {shape}")
    return _front.call("diag", [v], k=int(k))


def diagflat(v, k=0):
    """The square matrix with the flattened ``v`` on its ``k``-th diagonal."""
    from ._manipulation import reshape
    return diag(reshape(_operand(v), (-1,)), k)


# ---------------------------------------------------------------- comparisons of arrays

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


# ---------------------------------------------------------------- NaN-skipping reductions

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


# ---------------------------------------------------------------- indices

def unravel_index(indices, shape, order="C"):
    """The coordinates, one array per axis of ``shape``, of the flat ``indices`` (integer
    array or int) in an array of ``shape``; ``order='F'`` counts the first axis fastest.
    Arrays keep their integer dtype (the registered ``unravel_index`` operator); an int
    gives NumPy int64 scalars. An index outside ``shape`` is an MXNetError."""
    if order not in ("C", "F"):
        raise op_error("unravel_index", f"order must be 'C' or 'F', got {order!r}")
    shape = (int(shape),) if isinstance(shape, (int, _onp.integer)) else \
        tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise op_error("unravel_index", f"dimensions must be non-negative, got {shape}")
    if _is_number(indices):
        try:
            return tuple(_onp.int64(i) for i in _onp.unravel_index(indices, shape, order))
        except (ValueError, TypeError) as e:
            raise op_error("unravel_index", str(e)) from None
    indices = _operand(indices)
    dt, ishape = _dtype_of(indices), _front.shape_of(indices)
    if ishape is None or -1 in ishape:
        raise op_error("unravel_index", "needs the shape of indices: it takes arrays, or "
                       "Symbols inside a hybridized block traced on arrays")
    if dt is not None and dt.kind not in "iu":
        raise op_error("unravel_index", f"indices must be integers, got dtype {dt}")
    size = int(_onp.prod(shape))
    if isinstance(indices, NDArray) and indices.size and \
            (int(_min(indices)) < 0 or int(_max(indices)) >= size):
        raise op_error("unravel_index", f"an index is out of bounds for an array of shape "
                       f"{shape} (size {size})")
    op_shape = shape if order == "C" else shape[::-1]
    if not shape:
        return ()
    from ._manipulation import reshape
    flat = reshape(indices, (-1,))
    coords = _front.call("unravel_index", [flat], shape=op_shape)
    rows = [reshape(_front.call("slice_axis", [coords], axis=0, begin=i, end=i + 1), ishape)
            for i in range(len(shape))]
    return tuple(rows if order == "C" else rows[::-1])
