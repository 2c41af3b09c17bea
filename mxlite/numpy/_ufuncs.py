"""NumPy's element-wise functions (ufuncs) over the registered element-wise operators.

Binary functions take arrays or numbers in either place and broadcast; operands of
different dtypes are cast (a recorded ``cast``) to the result dtype of ``_dtypes`` before
the operator runs, so gradients flow back to each operand in its own dtype. Comparisons and
logical functions give booleans. Unary functions of integer data that give fractions
(``sin``, ``exp``, ``sqrt``, ...) compute in the default float, as MXNet's ``mx.np``.
"""
import numbers

import numpy as _onp

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
_ALIASES = {"divide": "true_divide", "remainder": "mod", "fmax": "maximum", "fmin": "minimum"}

# name -> (registered op, kind); kind 'float': integer data computes in the default float;
# 'same': keeps the dtype; 'bool': a boolean result
_UNARY = {
    "negative": ("negative", "same"), "absolute": ("abs", "same"), "abs": ("abs", "same"),
    "fabs": ("abs", "float"), "sign": ("sign", "same"), "square": ("square", "same"),
    "ceil": ("ceil", "same"), "floor": ("floor", "same"), "trunc": ("trunc", "same"),
    "rint": ("rint", "same"), "fix": ("fix", "same"),
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

__all__ = sorted(set(_BINARY) | set(_ALIASES) | set(_UNARY) | {"positive", "floor_divide"})

_BOOL = _onp.dtype(_onp.bool_)


def _is_number(x):
    return isinstance(x, (numbers.Number, _onp.generic)) and not isinstance(x, NDArray)


def _cast(x, dtype):
    """``x`` in ``dtype`` (a recorded cast when it differs)."""
    if _front.dtype_of(x) == dtype:
        return x
    return _front.call("cast", [x], dtype=dtype)


def _as_bool(y, out=None):
    if _front.dtype_of(y) != _BOOL or out is not None:
        return _front.call("cast", [y], out=out, dtype=_BOOL)
    return y


def _number(v):
    return v.item() if isinstance(v, _onp.generic) else v


def binary(name, x1, x2, out=None):
    """NumPy's binary ufunc ``name`` on arrays or numbers (module docstring)."""
    name = _ALIASES.get(name, name)
    array_op, scalar_op, rscalar_op, kind = _BINARY[name]
    if _is_number(x1) and _is_number(x2):
        return _onp.asarray(getattr(_onp, name)(x1, x2)).item()
    if not isinstance(x1, (NDArray, _front_symbol())) and not _is_number(x1):
        from .multiarray import to_array
        x1 = to_array(x1, like=x2)
    if not isinstance(x2, (NDArray, _front_symbol())) and not _is_number(x2):
        from .multiarray import to_array
        x2 = to_array(x2, like=x1)
    if _is_number(x2) or _is_number(x1):
        arr, value, op = (x1, x2, scalar_op) if _is_number(x2) else (x2, x1, rscalar_op)
        known = _front.dtype_of(arr)
        if known is not None:           # (a symbol's dtype is known while a block traces)
            dt = scalar_result_type(known, value)
            if kind in ("div", "float"):
                dt = true_divide_type(dt)
            arr = _cast(arr, dt)
        y = _front.call(op, [arr], out=None if kind == "bool" else out, scalar=_number(value))
    else:
        d1, d2 = _front.dtype_of(x1), _front.dtype_of(x2)
        if d1 is not None and d2 is not None:
            dt = result_type(d1, d2)
            if kind in ("div", "float"):
                dt = true_divide_type(dt)
            x1, x2 = _cast(x1, dt), _cast(x2, dt)
        y = _front.call(array_op, [x1, x2], out=None if kind == "bool" else out)
    return _as_bool(y, out) if kind == "bool" else y


def unary(name, x, out=None):
    """NumPy's unary ufunc ``name`` on an array (or a number: a Python number back)."""
    op, kind = _UNARY[name]
    if _is_number(x):
        return getattr(_onp, name)(x).item()
    if not isinstance(x, (NDArray, _front_symbol())):
        from .multiarray import to_array
        x = to_array(x)
    known = _front.dtype_of(x)
    if kind == "float" and known is not None and known.kind in "biu":
        x = _cast(x, default_float())
    if kind == "bool" and known is not None and known.kind in "biu" and \
            not _front.is_symbolic([x]):
        if op == "logical_not":
            return _as_bool(_front.call("_equal_scalar", [x], scalar=0), out)
        return _front.call("_zeros", [], out=out, shape=x.shape, dtype=_BOOL, ctx=x._ctx) \
            if op != "_contrib_isfinite" else _front.call("_ones", [], out=out, shape=x.shape,
                                                           dtype=_BOOL, ctx=x._ctx)
    y = _front.call(op, [x], out=None if kind == "bool" else out)
    return _as_bool(y, out) if kind == "bool" else y


def _front_symbol():
    from ..symbol.symbol import Symbol
    return Symbol


def _binary_function(name):
    def function(x1, x2, out=None, **kwargs):
        _no_where(name, kwargs)
        return binary(name, x1, x2, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"NumPy's ``{name}(x1, x2)``: element-wise, broadcasting; operands "
                        "may be arrays or numbers (see ``mxlite.numpy._ufuncs``).")
    return function


def _unary_function(name):
    def function(x, out=None, **kwargs):
        _no_where(name, kwargs)
        return unary(name, x, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"NumPy's ``{name}(x)``: element-wise (registered op ``{_UNARY[name][0]}``)."
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
    """NumPy's ``floor_divide``: ``floor(x1 / x2)`` in the operands' promoted dtype (for
    integers, the floor of the exact quotient)."""
    q = binary("true_divide", x1, x2)
    if _is_number(q):
        return _onp.floor_divide(x1, x2).item()
    dt = _promoted(x1, x2)
    if dt is not None and dt.kind in "iu":
        # integers: floor of the float quotient is exact below 2**24 (float32) / 2**53;
        # compute in float64 for the full range
        q = binary("true_divide", _cast_any(x1, _onp.float64), _cast_any(x2, _onp.float64))
    y = _front.call("floor", [q])
    return _front.call("cast", [y], out=out, dtype=dt) if dt is not None else y


def _promoted(x1, x2):
    dts = [x._data.dtype if isinstance(x, NDArray) else None for x in (x1, x2)]
    if None not in dts:
        return result_type(*dts)
    known = [d for d in dts if d is not None]
    if not known:
        return None
    other = x2 if dts[0] is not None else x1
    return scalar_result_type(known[0], other) if _is_number(other) else known[0]


def _cast_any(x, dtype):
    return x if _is_number(x) else _cast(x, _onp.dtype(dtype))
