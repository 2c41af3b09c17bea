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
    "exp": ("mx::exp_v(x)", None),
    "expm1": ("mx::expm1_v(x)", None),
    "log": ("mx::log_v(x)", None),
    "log2": ("mx::log2_v(x)", None),
    "log10": ("mx::log10_v(x)", None),
    "log1p": ("mx::log1p_v(x)", None),
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
    "sigmoid": ("mx::sigmoid_v(x)", None),
    "relu": ("(x < 0 ? (T)0 : x)", "(x < 0 ? (T)0 : x)"),
    "softsign": ("x / ((T)1 + mx::fabs(x))", None),
    "erf": ("mx::erf_v(x)", None),
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
    # x**2 and x**1 are exact (a * a is the correctly rounded square), without a libm call
    "power": ("(b == (T)2 ? a * a : b == (T)1 ? a : mx::pow(a, b))", "mx::int_pow(a, b)",
              None),
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

# ---- reductions (reduce.pyx.in and mxlite/cuda/ops/reduce.py) --------------------------------
# op: (float kernel, integer kernel or None), each (accumulator type, transform of an element
# v of type {T} into the accumulator, combine of accumulators a and b, identity). Integers
# sum and multiply in uint64_t (wrapping exactly, stored as int64); {LO}/{HI} are the
# dtype's limits. Max and min propagate NaN, as NumPy.
REDUCE = {
    "sum": (("{T}", "({T})v", "a + b", "0"), ("uint64_t", "(uint64_t)v", "a + b", "0")),
    "nansum": (("{T}", "(v == v ? v : ({T})0)", "a + b", "0"), None),
    "abssum": (("{T}", "(v < 0 ? -v : v)", "a + b", "0"), None),
    "sumsq": (("double", "(double)v * (double)v", "a + b", "0"), None),
    "prod": (("{T}", "v", "a * b", "1"), ("uint64_t", "(uint64_t)v", "a * b", "1")),
    "nanprod": (("{T}", "(v == v ? v : ({T})1)", "a * b", "1"), None),
    "max": (("{T}", "v", "(a > b || a != a) ? a : b", "-INFINITY"),
            ("{T}", "v", "a > b ? a : b", "{LO}")),
    "min": (("{T}", "v", "(a < b || a != a) ? a : b", "INFINITY"),
            ("{T}", "v", "a < b ? a : b", "{HI}")),
}
# Float sums are pairwise on the CPU (the GPU sums strided slices in a fixed order).
PAIRWISE = ("sum", "nansum", "abssum", "sumsq")
# argmax/argmin: v replaces the best b when strictly better, or when v is the first NaN
# (NumPy: NaN counts as the extreme value and the first one wins).
ARG_BETTER = {"max": "(v) > (b) || ((v) != (v) && (b) == (b))",
              "min": "(v) < (b) || ((v) != (v) && (b) == (b))"}

# ---- finiteness tests on float bits (finite.pyx.in and mxlite/cuda/ops/finite.py) ----------
# (dtype, word type, exponent mask, sign-less mask, +inf bits, -inf bits, 1.0 bits) where
# the masks apply to one word per element: the whole float16/float32, and for float64 its
# high 32 bits (sign, exponent, top of the mantissa) with bit 0 set when the low 32 bits are
# non-zero -- bit 0 is no exponent bit, and every class boundary constant has it clear, so
# the tests give the float64 answer on that word (32-bit lanes vectorize on every CPU).
FINITE_FLOATS = [
    ("float16", "uint16_t", "0x7c00u", "0x7fffu", "0x7c00u", "0xfc00u", "0x3c00u"),
    ("float32", "uint32_t", "0x7f800000u", "0x7fffffffu", "0x7f800000u", "0xff800000u",
     "0x3f800000u"),
    ("float64", "uint32_t", "0x7ff00000u", "0x7fffffffu", "0x7ff00000u", "0xfff00000u",
     "0x3ff00000u"),
]
# C statement loading element i's word into b, and storing value r for element i
FINITE_LOAD = {"float16": "b = x[i];", "float32": "b = x[i];",
               "float64": "b = x[2 * i + 1] | (uint32_t)(x[2 * i] != 0);"}
FINITE_STORE = {"float16": "y[i] = %s;", "float32": "y[i] = %s;",
                "float64": "y[2 * i] = 0; y[2 * i + 1] = %s;"}
# element-wise tests on the bits b: (name, true where the element is in the class)
FINITE_TESTS = [
    ("isfinite", "(b & EXP) != EXP"),
    ("isinf", "(b & ABS) == INF"),
    ("isnan", "(b & ABS) > INF"),
    ("isposinf", "b == INF"),
    ("isneginf", "b == NINF"),
]
# scans for "is there any ...": (name, true where the element counts)
FINITE_SCANS = [
    ("nonfinite", "(b & EXP) == EXP"),
    ("nan", "(b & ABS) > INF"),
    ("inf", "(b & ABS) == INF"),
]


def finite_bits(expr, row):
    """``expr`` of FINITE_TESTS/FINITE_SCANS with its constants for one FINITE_FLOATS row."""
    _, _, exp, abs_, inf, ninf, _ = row
    for name, value in (("NINF", ninf), ("EXP", exp), ("ABS", abs_), ("INF", inf)):
        expr = expr.replace(name, "(%s)%s" % (row[1], value))
    return expr
