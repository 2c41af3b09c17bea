"""Which registered operator a Python operator or an ``nd.add``-style function calls.

Shared by every front end (``mx.nd`` dunders and functions today, ``mx.sym`` later): each
row names registered ops only, so a front end routes by name and never hard-codes one.
"""

import numbers
import operator

__all__ = ["ARITHMETIC", "COMPARISONS", "BINARY_FUNCTIONS", "binary_function"]

# (dunder stem, array op, scalar op, reflected scalar op): ``a - 2`` runs ``_minus_scalar``,
# ``2 - a`` runs ``_rminus_scalar``, ``a - b`` runs ``broadcast_sub``.
ARITHMETIC = (
    ("add", "broadcast_add", "_plus_scalar", "_plus_scalar"),
    ("sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    ("mul", "broadcast_mul", "_mul_scalar", "_mul_scalar"),
    ("truediv", "broadcast_div", "_div_scalar", "_rdiv_scalar"),
    ("mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    ("pow", "broadcast_power", "_power_scalar", "_rpower_scalar"),
)

# (dunder stem, array op, scalar op); Python reflects comparisons itself (``2 < a`` is
# ``a > 2``), so no reflected op is needed.
COMPARISONS = (
    ("eq", "broadcast_equal", "_equal_scalar"),
    ("ne", "broadcast_not_equal", "_not_equal_scalar"),
    ("gt", "broadcast_greater", "_greater_scalar"),
    ("ge", "broadcast_greater_equal", "_greater_equal_scalar"),
    ("lt", "broadcast_lesser", "_lesser_scalar"),
    ("le", "broadcast_lesser_equal", "_lesser_equal_scalar"),
)

# MXNet's nd.add, nd.maximum, ...: functions whose operands may each be an array or a
# scalar, routed to the broadcast_* op or to the scalar op (reflected when the scalar is on
# the left). name: (array op, scalar op, scalar-on-the-left op)
BINARY_FUNCTIONS = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "modulo": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar"),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar"),
    "lesser": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar"),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar"),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar"),
}

# MXNet's result when both operands are numbers: a Python number, no array (its _ufunc_helper)
SCALAR_RESULTS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "modulo": operator.mod, "power": operator.pow,
    "maximum": lambda x, y: x if x > y else y, "minimum": lambda x, y: x if x < y else y,
    "equal": lambda x, y: 1 if x == y else 0, "not_equal": lambda x, y: 1 if x != y else 0,
    "greater": lambda x, y: 1 if x > y else 0, "greater_equal": lambda x, y: 1 if x >= y else 0,
    "lesser": lambda x, y: 1 if x < y else 0, "lesser_equal": lambda x, y: 1 if x <= y else 0,
    "logical_and": lambda x, y: 1 if x and y else 0,
    "logical_or": lambda x, y: 1 if x or y else 0,
    "logical_xor": lambda x, y: 1 if bool(x) ^ bool(y) else 0,
}


def binary_function(name, handle_type, error=TypeError):
    """MXNet's ``nd.<name>(lhs, rhs)`` for a front end whose arrays are ``handle_type``
    (with ``_binary``/``_rbinary`` routing methods): either operand may be a scalar; the
    array op or scalar op comes from ``BINARY_FUNCTIONS[name]``. Two numbers give a Python
    number (``SCALAR_RESULTS``), as in MXNet: ``nd.power(0.9, 2)`` is 0.81."""
    array_op, scalar_op, left_scalar_op = BINARY_FUNCTIONS[name]
    on_numbers = SCALAR_RESULTS.get(name)
    kind = handle_type.__name__
    article = "an" if kind[0] in "AEIOUN" else "a"      # an NDArray, a Symbol

    def function(lhs, rhs):
        if isinstance(lhs, handle_type):
            result = lhs._binary(rhs, array_op, scalar_op)
        elif isinstance(rhs, handle_type):
            result = rhs._rbinary(lhs, array_op, left_scalar_op)
        elif (on_numbers is not None and isinstance(lhs, numbers.Number)
              and isinstance(rhs, numbers.Number)):
            return on_numbers(lhs, rhs)
        else:
            raise error(f"{name}: at least one operand must be {article} {kind}, got "
                        f"{type(lhs).__name__} and {type(rhs).__name__}")
        if result is NotImplemented:
            raise error(f"{name}: unsupported operands {type(lhs).__name__} and "
                        f"{type(rhs).__name__}")
        return result
    function.__name__ = name
    function.__doc__ = (f"``{array_op}`` of two arrays, or ``{scalar_op}`` when one operand "
                        f"is a scalar (MXNet's {name}); the result is {article} {kind}.")
    return function
