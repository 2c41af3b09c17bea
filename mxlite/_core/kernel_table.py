"""Element-wise math written once, as C++ expressions, for every backend.

``setup.py`` feeds these tables to the Cython templates (``elemwise.pyx.in``); the CUDA
backend builds its kernels from the same strings. Expressions use ``x`` (unary) or ``a``
and ``b`` (binary) of element type ``T`` and helpers from ``mx_math.h`` (namespace ``mx``).
This file is pure data: setup.py loads it without importing mxlite.
"""

# name: (expression for float T, expression for integer T or None when float-only)
UNARY = {
    "abs": ("std::fabs(x)", "(x < 0 ? (T)-x : x)"),
    "sign": ("(x > 0 ? (T)1 : (x < 0 ? (T)-1 : x))", "(T)((x > 0) - (x < 0))"),
    "negative": ("-x", "(T)-x"),
    "reciprocal": ("(T)1 / x", None),
    "square": ("x * x", "(T)(x * x)"),
    "sqrt": ("std::sqrt(x)", None),
    "rsqrt": ("(T)1 / std::sqrt(x)", None),
    "cbrt": ("std::cbrt(x)", None),
    "rcbrt": ("(T)1 / std::cbrt(x)", None),
    "exp": ("std::exp(x)", None),
    "expm1": ("std::expm1(x)", None),
    "log": ("std::log(x)", None),
    "log2": ("std::log2(x)", None),
    "log10": ("std::log10(x)", None),
    "log1p": ("std::log1p(x)", None),
    "sin": ("std::sin(x)", None),
    "cos": ("std::cos(x)", None),
    "tan": ("std::tan(x)", None),
    "arcsin": ("std::asin(x)", None),
    "arccos": ("std::acos(x)", None),
    "arctan": ("std::atan(x)", None),
    "sinh": ("std::sinh(x)", None),
    "cosh": ("std::cosh(x)", None),
    "tanh": ("mx::tanh(x)", None),
    "arcsinh": ("std::asinh(x)", None),
    "arccosh": ("std::acosh(x)", None),
    "arctanh": ("std::atanh(x)", None),
    "degrees": ("x * (T)57.295779513082320876798", None),
    "radians": ("x * (T)0.017453292519943295769237", None),
    "sigmoid": ("(T)1 / ((T)1 + std::exp(-x))", None),
    "relu": ("(x < 0 ? (T)0 : x)", "(x < 0 ? (T)0 : x)"),
    "softsign": ("x / ((T)1 + std::fabs(x))", None),
    "erf": ("std::erf(x)", None),
    "erfinv": ("mx::erfinv(x)", None),
    "gamma": ("std::tgamma(x)", None),
    "gammaln": ("std::lgamma(x)", None),
    "floor": ("std::floor(x)", "x"),
    "ceil": ("std::ceil(x)", "x"),
    "round": ("std::round(x)", "x"),
    # MXNet's rint: nearest integer, a tie goes down (rint(2.5) = 2, rint(-2.5) = -3)
    "rint": ("(x - std::floor(x) <= std::ceil(x) - x ? std::floor(x) : std::ceil(x))", "x"),
    "fix": ("std::trunc(x)", "x"),
    "trunc": ("std::trunc(x)", "x"),
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
    "power": ("std::pow(a, b)", "mx::int_pow(a, b)", None),
    "maximum": ("(a > b || a != a ? a : b)", "(a > b ? a : b)", None),
    "minimum": ("(a < b || a != a ? a : b)", "(a < b ? a : b)", None),
    "hypot": ("std::hypot(a, b)", None, None),
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
