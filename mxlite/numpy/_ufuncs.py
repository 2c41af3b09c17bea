"""NumPy's element-wise functions (ufuncs) over the registered element-wise operators.

Binary functions take arrays or numbers in either place and broadcast; operands of
different dtypes are cast (a recorded ``cast``) to the result dtype of ``_dtypes`` before
the operator runs, so gradients flow back to each operand in its own dtype. Comparisons and
logical functions give booleans. Unary functions of integer data that give fractions
(``sin``, ``exp``, ``sqrt``, ...) compute in the default float, as MXNet's ``mx.np``.
"""
import numbers

import numpy as _onp

from ..base import op_error
from ..ndarray.ndarray import NDArray
from . import _front
from ._dtypes import default_float, result_type, scalar_result_type, true_divide_type

# name -> (array op, scalar op, scalar-on-the-left op, kind); kind: 'arith' keeps the
# promoted dtype, 'div' true division, 'bool' a boolean result
_BINARY = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", "arith"),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", "arith"),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar", "arith"),
    "true_divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar", "div"),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", "arith"),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar", "arith"),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar", "arith"),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar", "arith"),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar", "float"),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar", "bool"),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar", "bool"),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar", "bool"),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar", "bool"),
    "less": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar", "bool"),
    "less_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                   "bool"),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                    "bool"),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar", "bool"),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                    "bool"),
}
_ALIASES = {"divide": "true_divide", "remainder": "mod"}

# name -> (registered op, kind); kind 'float': integer data computes in the default float;
# 'same': keeps the dtype; 'bool': a boolean result
_UNARY = {
    "negative": ("negative", "same"), "absolute": ("abs", "same"), "abs": ("abs", "same"),
    "fabs": ("abs", "float"), "sign": ("sign", "same"), "square": ("square", "same"),
    "ceil": ("ceil", "same"), "floor": ("floor", "same"), "trunc": ("trunc", "same"),
    "fix": ("fix", "same"),
    "sqrt": ("sqrt", "float"), "cbrt": ("cbrt", "float"), "reciprocal": ("reciprocal", "same"),
    "exp": ("exp", "float"), "expm1": ("expm1", "float"), "log": ("log", "float"),
    "log2": ("log2", "float"), "log10": ("log10", "float"), "log1p": ("log1p", "float"),
    "sin": ("sin", "float"), "cos": ("cos", "float"), "tan": ("tan", "float"),
    "arcsin": ("arcsin", "float"), "arccos": ("arccos", "float"),
    "arctan": ("arctan", "float"), "sinh": ("sinh", "float"), "cosh": ("cosh", "float"),
    "tanh": ("tanh", "float"), "arcsinh": ("arcsinh", "float"),
    "arccosh": ("arccosh", "float"), "arctanh": ("arctanh", "float"),
    "degrees": ("degrees", "float"), "rad2deg": ("degrees", "float"),
    "radians": ("radians", "float"), "deg2rad": ("radians", "float"),
    "logical_not": ("logical_not", "bool"),
    "isnan": ("_contrib_isnan", "bool"), "isinf": ("_contrib_isinf", "bool"),
    "isfinite": ("_contrib_isfinite", "bool"), "isposinf": ("_contrib_isposinf", "bool"),
    "isneginf": ("_contrib_isneginf", "bool"),
}

__all__ = sorted(set(_BINARY) | set(_ALIASES) | set(_UNARY) |
                 {"positive", "floor_divide", "rint", "fmax", "fmin"})

_BOOL = _onp.dtype(_onp.bool_)
_builtin_any = any


def _is_number(x):
    return isinstance(x, (numbers.Number, _onp.generic)) and not isinstance(x, NDArray)


def _cast(x, dtype):
    """``x`` in ``dtype`` (a recorded cast when it differs)."""
    if _front.dtype_of(x) == dtype:
        return x
    return _front.call("cast", [x], dtype=dtype)


def _as_bool(y):
    if _front.dtype_of(y) != _BOOL:
        return _front.call("cast", [y], dtype=_BOOL)
    return y


def _number(v):
    return v.item() if isinstance(v, _onp.generic) else v


# NumPy's booleans: add/maximum are "or", multiply/minimum "and"; functions without a
# boolean loop compute in int8 (NumPy's choice); subtract is an error
_BOOL_LOGICAL = {"add": "logical_or", "maximum": "logical_or", "multiply": "logical_and",
                 "minimum": "logical_and"}


def _bool_operands(x1, x2):
    """True when both operands are boolean (arrays of bool, or a Python bool)."""
    def is_bool(x):
        if isinstance(x, (bool, _onp.bool_)):
            return True
        return not _is_number(x) and _front.dtype_of(x) == _BOOL
    return is_bool(x1) and is_bool(x2) and not (_is_number(x1) and _is_number(x2))


def binary(name, x1, x2, out=None):
    """NumPy's binary ufunc ``name`` on arrays or numbers (module docstring). ``out``
    takes the result cast to its dtype under NumPy's 'same_kind' rule."""
    name = _ALIASES.get(name, name)
    array_op, scalar_op, rscalar_op, kind = _BINARY[name]
    if out is None and kind != "bool":
        fast = _fast_float(array_op, scalar_op, rscalar_op, x1, x2)
        if fast is not None:
            return fast
    if _is_number(x1) and _is_number(x2):
        return _onp.asarray(getattr(_onp, name)(x1, x2)).item()
    if not isinstance(x1, (NDArray, _front_symbol())) and not _is_number(x1):
        from .multiarray import to_array
        x1 = to_array(x1, like=x2)
    if not isinstance(x2, (NDArray, _front_symbol())) and not _is_number(x2):
        from .multiarray import to_array
        x2 = to_array(x2, like=x1)
    # an array's dtype, or a Symbol's while a block is traced (None: not known)
    if _builtin_any(_front.dtype_of(x) is None for x in (x1, x2) if not _is_number(x)):
        if _is_number(x2) or _is_number(x1):
            arr, value, op = (x1, x2, scalar_op) if _is_number(x2) else (x2, x1, rscalar_op)
            y = _front.call(op, [arr], scalar=_number(value))
        else:
            y = _front.call(array_op, [x1, x2])
        return _as_bool(y) if kind == "bool" else y
    if kind == "arith" and _bool_operands(x1, x2):
        if name in _BOOL_LOGICAL:
            return binary(_BOOL_LOGICAL[name], x1, x2, out=out)
        if name == "subtract":
            raise op_error("subtract", "boolean subtract is not supported (NumPy's rule); "
                           "use logical_xor")
        x1, x2 = (_onp.int8(v) if _is_number(v) else _cast(v, _onp.dtype(_onp.int8))
                  for v in (x1, x2))
    if _is_number(x2) or _is_number(x1):
        arr, value, op = (x1, x2, scalar_op) if _is_number(x2) else (x2, x1, rscalar_op)
        dt = scalar_result_type(_front.dtype_of(arr), value)
        if kind in ("div", "float"):
            dt = true_divide_type(dt)
        _check_scalar(name, dt, value)
        if name == "power" and dt.kind in "iu":
            _check_int_power(x2)
        operands = [_cast(arr, dt)]
        attrs = {"scalar": _number(value)}
    else:
        dt = result_type(_front.dtype_of(x1), _front.dtype_of(x2))
        if kind in ("div", "float"):
            dt = true_divide_type(dt)
        if name == "power" and dt.kind in "iu":
            _check_int_power(x2)
        op, operands, attrs = array_op, [_cast(x1, dt), _cast(x2, dt)], {}
    if kind == "bool":
        return _into(_as_bool(_front.call(op, operands, **attrs)), out)
    direct = out if out is not None and _front.dtype_of(out) == dt else None
    return _into(_front.call(op, operands, out=direct, **attrs), out)


_FLOAT_KINDS = frozenset("f")
_NUMBER_TYPES = (int, float)


def _fast_float(array_op, scalar_op, rscalar_op, x1, x2):
    """The common case without the general rules: two np arrays of one float dtype, or
    one with a Python int/float (a float dtype keeps its dtype either way). None when the
    call needs the general path."""
    np_cls = _front.np_class()
    if type(x1) is np_cls:
        d1 = x1._data.dtype
        if d1.kind != "f":
            return None
        if type(x2) is np_cls:
            if x2._data.dtype != d1:
                return None
            return _front.call_direct(array_op, [x1, x2], None)
        if type(x2) in _NUMBER_TYPES:
            return _front.call_direct(scalar_op, [x1], {"scalar": x2})
        return None
    if type(x2) is np_cls and type(x1) in _NUMBER_TYPES and x2._data.dtype.kind == "f":
        return _front.call_direct(rscalar_op, [x2], {"scalar": x1})
    return None


def _into(y, out):
    """``y`` written into ``out`` (cast to its dtype where NumPy's 'same_kind' rule
    allows), or ``y`` itself when there is no ``out``."""
    if out is None or y is out:
        return y
    if _front.is_symbolic([y]):
        raise op_error("out", "out= is not supported for Symbols (a graph returns new "
                       "values)")
    if not isinstance(out, NDArray):
        raise TypeError(f"out must be an mx.np.ndarray, got {type(out).__name__}")
    src, dst = y._data.dtype, out._data.dtype
    if src == _BOOL and dst != _BOOL:
        # a boolean result (comparisons, predicates) goes into a boolean out only, as
        # MXNet's (NumPy would cast it)
        raise TypeError(f"the boolean result cannot be written into out of dtype {dst}")
    if not _onp.can_cast(src, dst, "same_kind"):
        raise TypeError(f"cannot cast the result of dtype {src} into out of dtype {dst} "
                        "with casting rule 'same_kind'")
    if tuple(out.shape) != tuple(y.shape):
        raise op_error("out", f"out has shape {tuple(out.shape)}, the result has shape "
                       f"{tuple(y.shape)}")
    if src == dst:
        return _front.call("_copy", [y], out=out)
    return _front.call("cast", [y], out=out, dtype=dst)


def _check_scalar(name, dtype, value):
    """A Python integer that ``dtype`` (an integer dtype) cannot hold is an error, as in
    NumPy (it would wrap around silently)."""
    if dtype.kind in "iu" and isinstance(value, (int, _onp.integer)) and \
            not isinstance(value, (bool, _onp.bool_)):
        info = _onp.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise op_error(name, f"Python integer {int(value)} is out of bounds for the "
                           f"array's dtype {dtype}")


def _check_int_power(exponent):
    """Integers to negative integer powers are an error (NumPy's rule: no integer
    result exists); read on the host for an array exponent."""
    if isinstance(exponent, NDArray):
        if exponent._data.dtype.kind != "i" or exponent.size == 0:
            return
        negative = bool(exponent.asnumpy().min() < 0)
    elif _is_number(exponent):
        negative = exponent < 0
    else:
        return                  # a Symbol: its values are not known here
    if negative:
        raise op_error("power", "integers to negative integer powers are not allowed")


_BOOL_UNARY_COPY = {"absolute", "abs", "fabs", "ceil", "floor", "trunc", "rint", "fix"}


def unary(name, x, out=None):
    """NumPy's unary ufunc ``name`` on an array (or a number: a Python number back).
    Functions of kind 'same' keep the input's dtype (integers too: ``reciprocal`` of an
    integer truncates, as NumPy's)."""
    op, kind = _UNARY[name]
    if out is None and kind != "bool" and type(x) is _front.np_class() and \
            x._data.dtype.kind == "f":          # the common case: a float array
        return _front.call_direct(op, [x], None)
    if _is_number(x):
        return getattr(_onp, name)(x).item()
    if not isinstance(x, (NDArray, _front_symbol())):
        from .multiarray import to_array
        x = to_array(x)
    dt = _front.dtype_of(x)         # (a Symbol's is known while a block is traced)
    if dt is None:
        y = _front.call(op, [x])
        return _as_bool(y) if kind == "bool" else y
    if kind == "float" and dt.kind in "biu":
        x = _cast(x, default_float())
    if kind == "bool" and dt.kind in "biu":
        if op == "logical_not":
            return _into(_as_bool(_front.call("_equal_scalar", [x], scalar=0)), out)
        # integers are never NaN or infinite
        fill = "ones_like" if op == "_contrib_isfinite" else "zeros_like"
        return _into(_as_bool(_front.call(fill, [x])), out)
    if kind == "same" and dt == _BOOL:
        if name in _BOOL_UNARY_COPY:
            return _into(_front.call("_copy", [x]), out)
        if name in ("negative", "sign"):
            raise op_error(name, "is not defined for boolean arrays (NumPy's rule); use "
                           "logical_not")
        dt = _onp.dtype(_onp.int8)          # NumPy computes these in int8
        x = _cast(x, dt)
    if kind == "bool":
        return _into(_as_bool(_front.call(op, [x])), out)
    y = _front.call(op, [x], out=out if out is not None and _front.dtype_of(out) == dt
                    and kind == "same" else None)
    if kind == "same" and _front.dtype_of(y) != dt:
        y = _front.call("cast", [y], dtype=dt)
    return _into(y, out)


def _front_symbol():
    from ..symbol.symbol import Symbol
    return Symbol


def _binary_function(name):
    def function(x1, x2, out=None, **kwargs):
        _no_where(name, kwargs)
        return binary(name, x1, x2, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"NumPy's ``{name}(x1, x2)``: element-wise, broadcasting; operands "
                        "may be arrays or numbers; ``out`` as NumPy's (see "
                        "``mxlite.numpy._ufuncs``).")
    return function


def _unary_function(name):
    def function(x, out=None, **kwargs):
        _no_where(name, kwargs)
        return unary(name, x, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"NumPy's ``{name}(x)``: element-wise (registered op "
                        f"``{_UNARY[name][0]}``); ``out`` as NumPy's.")
    return function


def _no_where(name, kwargs):
    """NumPy's ufunc keywords ``where``, ``casting``, ``order``, ``dtype``, ``subok``: only
    their defaults are implemented (MXNet's rule: another legal value is
    NotImplementedError, an illegal value or an unknown keyword TypeError)."""
    for key, value in kwargs.items():
        if key not in _UFUNC_DEFAULTS:
            raise TypeError(f"{key} is an invalid keyword to function '{name}'")
        default = _UFUNC_DEFAULTS[key]
        if value is default or (type(value) is type(default) and value == default):
            continue
        if _legal_ufunc_option(key, value):
            raise NotImplementedError(f"{name}: {key}={value} is not implemented")
        raise TypeError(f"{name}: {key} {value!r} not understood")


check_ufunc_kwargs = _no_where

_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
                   "subok": True}


def _legal_ufunc_option(key, value):
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        try:
            return _onp.dtype(value).name in ("int8", "uint8", "int32", "int64", "float16",
                                              "float32", "float64")
        except TypeError:
            return False
    return isinstance(value, bool)      # subok


for _name in list(_BINARY) + list(_ALIASES):
    globals()[_name] = _binary_function(_name)
for _name in _UNARY:
    globals()[_name] = _unary_function(_name)
del _name


def positive(x, out=None):
    """NumPy's ``positive``: a copy of ``x``."""
    return _front.call("_copy", [x], out=out)


def floor_divide(x1, x2, out=None):
    """NumPy's ``floor_divide`` in the operands' promoted dtype. Floats: NumPy's exact
    rule, ``(x1 - mod(x1, x2)) / x2`` rounded (``floor(x1 / x2)`` is off by one where the
    quotient rounds up to an integer, as ``-1 // float16(0.3333)``), and ``x1 / x2`` where
    ``x2`` is 0. Integers: exact (``_integer_floor_divide``), 0 for a zero divisor
    (NumPy's integer result)."""
    if _is_number(x1) and _is_number(x2):
        return _onp.floor_divide(x1, x2).item()
    dt = _promoted(x1, x2)
    if dt is not None and dt.kind in "iub":
        return _into(_integer_floor_divide(x1, x2, dt), out)
    exact = rint(binary("true_divide", binary("subtract", x1, binary("mod", x1, x2)),
                                 x2))
    if dt is None:                       # symbolic operands: no zero-divisor handling
        return exact if out is None else _front.call("_copy", [exact], out=out)
    from ._indexing import where
    y = where(binary("equal", x2, 0), binary("true_divide", x1, x2), exact)
    return _into(_front.call("cast", [y], dtype=dt), out)


def _integer_floor_divide(x1, x2, dt):
    """Exact integer ``x1 // x2``: ``x1 - mod(x1, x2)`` is a multiple of ``x2``, which the
    integer division operator divides exactly; a zero divisor gives 0 (NumPy's integer
    loops); booleans compute in int8, as NumPy's."""
    from ._indexing import where
    if dt == _BOOL:
        dt = _onp.dtype(_onp.int8)
    x1, x2 = _cast_any(x1, dt), _cast_any(x2, dt)
    num = binary("subtract", x1, binary("mod", x1, x2))
    if _is_number(num):
        return _onp.floor_divide(x1, x2).item()
    if _is_number(x2):
        if x2 == 0:
            return _front.call("zeros_like", [num])
        return _front.call("_div_scalar", [num], scalar=int(x2))
    zero = binary("equal", x2, 0)
    q = _front.call("broadcast_div", [num, _cast(where(zero, 1, x2), dt)])
    return _cast(where(zero, 0, q), dt)


def _promoted(x1, x2):
    dts = [None if _is_number(x) else _front.dtype_of(x) for x in (x1, x2)]
    known = [d for d in dts if d is not None]     # (a dtype == None: float64 compares equal)
    if len(known) == 2:
        return result_type(*dts)
    if not known:
        return None
    other = x2 if dts[0] is not None else x1
    return scalar_result_type(known[0], other) if _is_number(other) else known[0]


def _cast_any(x, dtype):
    return x if _is_number(x) else _cast(x, _onp.dtype(dtype))


def rint(x, out=None, **kwargs):
    """NumPy's ``rint``: the nearest integer, halves to the even one (``rint(2.5)`` is 2,
    ``rint(-0.5)`` is -0); integers and booleans as they are. (The registered ``rint``
    operator rounds halves down, MXNet's rule; this composes ``floor`` and ``where``.)"""
    _no_where("rint", kwargs)
    if _is_number(x):
        return _onp.rint(x).item()
    if not isinstance(x, (NDArray, _front_symbol())):
        from .multiarray import to_array
        x = to_array(x)
    dt = _front.dtype_of(x)
    if dt is not None and dt.kind in "biu":
        return _into(_front.call("_copy", [x]), out)
    from ._indexing import where
    up = _front.call("floor", [binary("add", x, 0.5)])
    # a tie (x + 0.5 an odd integer) goes down to the even neighbour
    tie = binary("logical_and", binary("equal", binary("subtract", up, x), 0.5),
                 binary("equal", binary("mod", up, 2.0), 1.0))
    y = where(tie, binary("subtract", up, 1.0), up)
    # integers stay (x + 0.5 is inexact beyond 2**24 / 2**53), so do inf and nan
    y = where(binary("equal", _front.call("floor", [x]), x), x, y)
    y = where(unary("isnan", x), x, y)
    y = where(binary("equal", y, 0.0), binary("multiply", x, 0.0), y)    # -0.5 -> -0.0
    return _into(y, out)


def _nan_ignoring(name, pick):
    def function(x1, x2, out=None, **kwargs):
        _no_where(name, kwargs)
        if _is_number(x1) and _is_number(x2):
            return getattr(_onp, name)(x1, x2).item()
        from ._indexing import where
        y = binary(pick, x1, x2)
        if _onp.dtype(_front.dtype_of(y) or _onp.float32).kind == "f":
            # a NaN operand gives the other one (both NaN: NaN)
            y = where(unary("isnan", x1) if not _is_number(x1) else _onp.isnan(x1), x2, y)
            y = where(unary("isnan", x2) if not _is_number(x2) else _onp.isnan(x2), x1, y)
            y = _cast(y, _front.dtype_of(binary(pick, x1, x2)))
        return _into(y, out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"NumPy's ``{name}(x1, x2)``: the element-wise {pick}, a NaN operand "
                        "ignored (``maximum``/``minimum`` propagate NaN).")
    return function


fmax = _nan_ignoring("fmax", "maximum")
fmin = _nan_ignoring("fmin", "minimum")
