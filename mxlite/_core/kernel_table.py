"""Element-wise math written once, as C++ expressions, for every backend.

``setup.py`` feeds these tables to the Cython templates (``elemwise.pyx.in``); the CUDA
backend builds its kernels from the same strings. Expressions use ``x`` (unary) or ``a``
and ``b`` (binary) of element type ``T`` and helpers from ``mx_math.h`` (namespace ``mx``).
This file is pure data: setup.py loads it without importing mxlite.
"""

# name: (expression for float T, expression for integer T or None when float-only)
UNARY = {
    "abs": ("mx::fabs(x)", "(x < 0 ? (T)-x : x)"),
    "sign": ("(x > 0 ? (T)1 : (x < 0 ? (T)-1 : x))", "(T)((x > 0) - (x < 0))"),
    "negative": ("-x", "(T)-x"),
    "reciprocal": ("(T)1 / x", None),
    "square": ("x * x", "(T)(x * x)"),
    "sqrt": ("mx::sqrt(x)", None),
    "rsqrt": ("(T)1 / mx::sqrt(x)", None),
    "cbrt": ("mx::cbrt(x)", None),
    "rcbrt": ("(T)1 / mx::cbrt(x)", None),
    "exp": ("mx::exp(x)", None),
    "expm1": ("mx::expm1(x)", None),
    "log": ("mx::log(x)", None),
    "log2": ("mx::log2(x)", None),
    "log10": ("mx::log10(x)", None),
    "log1p": ("mx::log1p(x)", None),
    "sin": ("mx::sin(x)", None),
    "cos": ("mx::cos(x)", None),
    "tan": ("mx::tan(x)", None),
    "arcsin": ("mx::asin(x)", None),
    "arccos": ("mx::acos(x)", None),
    "arctan": ("mx::atan(x)", None),
    "sinh": ("mx::sinh(x)", None),
    "cosh": ("mx::cosh(x)", None),
    "tanh": ("mx::tanh(x)", None),
    "arcsinh": ("mx::asinh(x)", None),
    "arccosh": ("mx::acosh(x)", None),
    "arctanh": ("mx::atanh(x)", None),
    "degrees": ("x * (T)57.295779513082320876798", None),
    "radians": ("x * (T)0.017453292519943295769237", None),
    "sigmoid": ("(T)1 / ((T)1 + mx::exp(-x))", None),
    "relu": ("(x < 0 ? (T)0 : x)", "(x < 0 ? (T)0 : x)"),
    "softsign": ("x / ((T)1 + mx::fabs(x))", None),
    "erf": ("mx::erf(x)", None),
    "erfinv": ("mx::erfinv(x)", None),
    "gamma": ("mx::tgamma(x)", None),
    "gammaln": ("mx::lgamma(x)", None),
    "floor": ("mx::floor(x)", "x"),
    "ceil": ("mx::ceil(x)", "x"),
    "round": ("mx::round(x)", "x"),
    # MXNet's rint: nearest integer, a tie goes down (rint(2.5) = 2, rint(-2.5) = -3)
    "rint": ("(x - mx::floor(x) <= mx::ceil(x) - x ? mx::floor(x) : mx::ceil(x))", "x"),
    "fix": ("mx::trunc(x)", "x"),
    "trunc": ("mx::trunc(x)", "x"),
    "logical_not": ("(T)(x == 0)", "(T)(x == 0)"),
}

# name: (expression for float T, for integer T, for bool T) - None where the dtype is refused.
# Only comparisons and logical ops have bool kernels: arithmetic on bool computes in float32
# (mxlite/ops/elemwise.py: bool_result).
BINARY = {
    "add": ("a + b", "(T)(a + b)", None),
    "sub": ("a - b", "(T)(a - b)", None),
    "mul": ("a * b", "(T)(a * b)", None),
    "div": ("a / b", "mx::int_div(a, b)", None),
    "mod": ("mx::float_mod(a, b)", "mx::int_mod(a, b)", None),
    "power": ("mx::pow(a, b)", "mx::int_pow(a, b)", None),
    "maximum": ("(a > b || a != a ? a : b)", "(a > b ? a : b)", None),
    "minimum": ("(a < b || a != a ? a : b)", "(a < b ? a : b)", None),
    "hypot": ("mx::hypot(a, b)", None, None),
    "equal": ("(T)(a == b)",) * 3,
    "not_equal": ("(T)(a != b)",) * 3,
    "greater": ("(T)(a > b)",) * 3,
    "greater_equal": ("(T)(a >= b)",) * 3,
    "lesser": ("(T)(a < b)",) * 3,
    "lesser_equal": ("(T)(a <= b)",) * 3,
    "logical_and": ("(T)(a != 0 && b != 0)",) * 3,
    "logical_or": ("(T)(a != 0 || b != 0)",) * 3,
    "logical_xor": ("(T)((a != 0) != (b != 0))",) * 3,
}

# Kernel dtypes: (NumPy name, C type, family). float16 is computed through float32.
DTYPES = [
    ("float32", "float", "float"),
    ("float64", "double", "float"),
    ("int8", "int8_t", "int"),
    ("uint8", "uint8_t", "int"),
    ("int32", "int32_t", "int"),
    ("int64", "int64_t", "int"),
    ("bool", "uint8_t", "bool"),
]

# Unary ops with a bool kernel: only logical_not (arithmetic on bool computes in float32).
BOOL_UNARY = ("logical_not",)
