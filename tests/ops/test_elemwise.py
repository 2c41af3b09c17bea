"""Element-wise operators (mxlite/ops/elemwise.py) against NumPy/SciPy oracles.

Unary math for every dtype, broadcasting binary ops on random shapes (hypothesis), the
``elemwise_*`` same-shape ops, the ``_*_scalar`` ops, integer corner cases (x/0, x%0,
INT_MIN/-1, negative integer powers), mixed-dtype promotion and the error paths.

The oracles and the dtype rules below are written from the documented semantics (MXNet
names, NumPy values), not read back from the implementation.
"""
import math
import operator

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mxlite as mx
from mxlite import MXNetError
from mxlite._core.kernel_table import BINARY, BOOL_UNARY, UNARY
from mxlite.ops.elemwise import SCALAR_OPS
from mxlite.ops.registry import REGISTRY

FLOATS = ("float16", "float32", "float64")
INTS = ("int8", "uint8", "int32", "int64")
ALL_DTYPES = FLOATS + INTS + ("bool",)

# (rtol, atol) of a unary result against a float64 oracle rounded to the dtype
UNARY_TOL = {"float16": (2e-3, 1e-4), "float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


# ---- oracles ------------------------------------------------------------------------------
def _round_half_away(x):
    """MXNet's round: halves go away from zero (NumPy's round/rint go to even)."""
    t = np.trunc(x)
    return np.copysign(t + np.sign(x) * (np.abs(x - t) >= 0.5), x)


def _rint_half_down(x):
    """MXNet's documented rint: the nearest integer, a tie (n + 0.5) going down to n
    (rint(2.5) = 2, rint(-2.5) = -3), written independently of the kernel's floor/ceil
    comparison: floor(x) plus 1 where the fractional part is strictly above one half, the
    sign of a zero result taken from x (as the C floor/ceil functions give it)."""
    f = np.floor(x)
    with np.errstate(invalid="ignore"):
        r = f + ((x - f) > 0.5)
    r = np.where(np.isfinite(x), r, x)
    return np.where(r == 0, np.copysign(0.0, x), r)


# name: (oracle on float64, sampling domain (lo, hi), "uniform" | "magnitude" (random sign))
UNARY_SPEC = {
    "abs": (np.abs, (-10, 10), "uniform"),
    "sign": (np.sign, (-10, 10), "uniform"),
    "negative": (np.negative, (-10, 10), "uniform"),
    "reciprocal": (np.reciprocal, (0.1, 10), "magnitude"),
    "square": (np.square, (-10, 10), "uniform"),
    "sqrt": (np.sqrt, (0, 100), "uniform"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100), "uniform"),
    "cbrt": (np.cbrt, (-100, 100), "uniform"),
    "rcbrt": (lambda x: 1 / np.cbrt(x), (0.01, 100), "magnitude"),
    "exp": (np.exp, (-10, 10), "uniform"),
    "expm1": (np.expm1, (-3, 3), "uniform"),
    "log": (np.log, (0.01, 100), "uniform"),
    "log2": (np.log2, (0.01, 100), "uniform"),
    "log10": (np.log10, (0.01, 100), "uniform"),
    "log1p": (np.log1p, (-0.99, 10), "uniform"),
    "sin": (np.sin, (-10, 10), "uniform"),
    "cos": (np.cos, (-10, 10), "uniform"),
    "tan": (np.tan, (-1.5, 1.5), "uniform"),
    "arcsin": (np.arcsin, (-1, 1), "uniform"),
    "arccos": (np.arccos, (-1, 1), "uniform"),
    "arctan": (np.arctan, (-10, 10), "uniform"),
    "sinh": (np.sinh, (-5, 5), "uniform"),
    "cosh": (np.cosh, (-5, 5), "uniform"),
    "tanh": (np.tanh, (-5, 5), "uniform"),
    "arcsinh": (np.arcsinh, (-10, 10), "uniform"),
    "arccosh": (np.arccosh, (1, 100), "uniform"),
    "arctanh": (np.arctanh, (-0.99, 0.99), "uniform"),
    "degrees": (np.degrees, (-10, 10), "uniform"),
    "radians": (np.radians, (-500, 500), "uniform"),
    "sigmoid": (sp.expit, (-10, 10), "uniform"),
    "relu": (lambda x: np.maximum(x, 0), (-10, 10), "uniform"),
    "softsign": (lambda x: x / (1 + np.abs(x)), (-10, 10), "uniform"),
    "erf": (sp.erf, (-3, 3), "uniform"),
    "erfinv": (sp.erfinv, (-0.999, 0.999), "uniform"),
    "gamma": (sp.gamma, (0.1, 10), "uniform"),
    "gammaln": (sp.gammaln, (0.1, 20), "uniform"),
    "floor": (np.floor, (-10, 10), "uniform"),
    "ceil": (np.ceil, (-10, 10), "uniform"),
    "round": (_round_half_away, (-10, 10), "uniform"),
    "rint": (_rint_half_down, (-10, 10), "uniform"),
    "fix": (np.fix, (-10, 10), "uniform"),
    "trunc": (np.trunc, (-10, 10), "uniform"),
    "logical_not": (lambda x: (x == 0).astype(x.dtype), (-3, 3), "uniform"),
}
# Ops that keep an integer dtype (an integer kernel) and ops that keep bool.
INT_UNARY = {"abs", "sign", "negative", "square", "relu", "floor", "ceil", "round", "rint",
             "fix", "trunc", "logical_not"}
# bool input: logical ops keep bool, everything else is arithmetic on 0/1 in float32
BOOL_KEEP = {"logical_not"}
FLOAT_ONLY = sorted(set(UNARY_SPEC) - INT_UNARY)


def _sample(rng, name, dtype, shape):
    lo, hi = UNARY_SPEC[name][1]
    x = rng.uniform(lo, hi, size=shape)
    if UNARY_SPEC[name][2] == "magnitude":
        x *= rng.choice([-1.0, 1.0], size=shape)
    if name in ("floor", "ceil", "round", "rint", "fix", "trunc"):
        x.flat[: x.size // 3] = np.round(x.flat[: x.size // 3] * 2) / 2   # exact halves
    if name == "logical_not":
        x.flat[::3] = 0
    return x.astype(dtype)


def _unary_expected(name, x):
    """The oracle in float64 on the (already rounded) input, rounded to x's dtype."""
    with np.errstate(all="ignore"):
        return np.asarray(UNARY_SPEC[name][0](x.astype(np.float64))).astype(x.dtype)


def _nd(x, dtype=None):
    return mx.nd.array(x, dtype=dtype if dtype is not None else x.dtype)


def _wrap_int(v, dtype):
    """Python int -> the value a fixed-width two's-complement integer of ``dtype`` holds."""
    bits = np.dtype(dtype).itemsize * 8
    v %= 1 << bits
    if np.issubdtype(dtype, np.signedinteger) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _trunc_div(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _py_mod(a, b):
    return 0 if b == 0 else a % b      # Python's % takes the divisor's sign, as NumPy


def _int_pow(a, b, bits):
    if b < 0:      # 1 / a**|b| truncated toward zero
        return 1 if a == 1 else ((-1) ** (-b) if a == -1 else 0)
    return pow(a, b, 1 << bits)


def _elementwise_py(fn, a, b, dtype):
    a, b = np.broadcast_arrays(a, b)
    flat = [_wrap_int(fn(int(x), int(y)), dtype) for x, y in zip(a.ravel(), b.ravel())]
    return np.array(flat, dtype=np.int64 if dtype != "uint8" else np.uint64).astype(dtype).reshape(a.shape)


_COMPARE = {"equal": operator.eq, "not_equal": operator.ne, "greater": operator.gt,
            "greater_equal": operator.ge, "lesser": operator.lt, "lesser_equal": operator.le,
            "logical_and": np.logical_and, "logical_or": np.logical_or,
            "logical_xor": np.logical_xor}
_FLOAT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                 "mod": np.mod, "power": np.power, "maximum": np.maximum,
                 "minimum": np.minimum, "hypot": np.hypot}
_INT_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
               "div": _trunc_div, "mod": _py_mod, "maximum": max, "minimum": min}
# binary kernels that compute bool in float32 (all but comparisons and logical ops) / compute
# integers in float32
BOOL_TO_FLOAT = {"add", "sub", "mul", "div", "mod", "power", "maximum", "minimum", "hypot"}
FLOAT_RESULT = {"hypot"}


def binary_expected(kname, a, b):
    """Oracle for ``kname`` on arrays a, b of one dtype (the operator's result dtype)."""
    dt = a.dtype
    if kname in _COMPARE:
        return np.asarray(_COMPARE[kname](a, b)).astype(dt)
    if dt.kind == "f":
        work = np.float32 if dt == np.float16 else dt
        with np.errstate(all="ignore"):
            return np.asarray(_FLOAT_BINARY[kname](a.astype(work), b.astype(work))).astype(dt)
    if kname == "power":
        bits = dt.itemsize * 8
        return _elementwise_py(lambda x, y: _int_pow(x, y, bits), a, b, dt)
    return _elementwise_py(_INT_BINARY[kname], a, b, dt)


def assert_result(got, expected, exact=False, rtol=None):
    """dtype, shape and values (NaN == NaN) of an NDArray against a NumPy array."""
    assert isinstance(got, mx.nd.NDArray)
    g = got.asnumpy()
    assert g.dtype == expected.dtype, (g.dtype, expected.dtype)
    assert g.shape == expected.shape, (g.shape, expected.shape)
    if exact or expected.dtype.kind in "iub":
        np.testing.assert_array_equal(g, expected)
    else:
        fi = np.finfo(expected.dtype)
        rtol = rtol if rtol is not None else {2: 1e-3, 4: 1e-6, 8: 1e-14}[fi.bits // 8]
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=float(fi.tiny), equal_nan=True)


# ---- the spec tables cover the registry ---------------------------------------------------
def test_spec_tables_cover_every_kernel():
    assert set(UNARY_SPEC) == set(UNARY)
    assert INT_UNARY == {n for n, (f, i) in UNARY.items() if i is not None}
    assert BOOL_KEEP == set(BOOL_UNARY)
    assert set(_FLOAT_BINARY) | set(_COMPARE) == set(BINARY)
    for name in UNARY:
        assert REGISTRY[name].elementwise and callable(getattr(mx.nd, name))
    for kname in BINARY:
        assert callable(getattr(mx.nd, f"broadcast_{kname}"))


# ---- unary -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY_SPEC))
def test_unary_float(name, dtype, rng):
    x = _sample(rng, name, dtype, (3, 37))
    got = getattr(mx.nd, name)(_nd(x))
    rtol, atol = UNARY_TOL[dtype]
    expected = _unary_expected(name, x)
    assert got.dtype == np.dtype(dtype) and got.shape == x.shape
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY_SPEC))
def test_unary_zero_dim_empty_and_fluent(name, rng):
    x0 = _sample(rng, name, "float32", ())
    got = getattr(mx.nd, name)(_nd(x0))
    assert got.shape == ()
    np.testing.assert_allclose(got.asnumpy(), _unary_expected(name, x0), rtol=1e-5, atol=1e-6)
    empty = getattr(mx.nd, name)(_nd(np.zeros((0, 3), np.float64)))
    assert empty.shape == (0, 3) and empty.dtype == np.float64
    # the fluent method is the same operator
    x = _sample(rng, name, "float64", (2, 3))
    np.testing.assert_array_equal(getattr(_nd(x), name)().asnumpy(),
                                  getattr(mx.nd, name)(_nd(x)).asnumpy())


@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "abs", "round", "erfinv"])
def test_unary_parallel_size(name, rng):
    """Above the prange threshold (2**16 elements) the kernel runs in parallel."""
    x = _sample(rng, name, "float64", (70001,))
    np.testing.assert_allclose(getattr(mx.nd, name)(_nd(x)).asnumpy(), _unary_expected(name, x),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", sorted(INT_UNARY))
def test_unary_integer_kernel(name, dtype, rng):
    """Integer kernels keep the dtype and wrap like NumPy (abs(-128) is -128 in int8)."""
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=200, dtype=dtype, endpoint=True)
    x[:6] = np.array([0, 1, info.max, info.min, info.min + 1, 0]).astype(dtype)
    got = getattr(mx.nd, name)(_nd(x))
    with np.errstate(all="ignore"):
        expected = {
            "abs": np.abs, "sign": np.sign, "negative": np.negative, "square": np.square,
            "relu": lambda v: np.maximum(v, 0), "logical_not": lambda v: (v == 0).astype(v.dtype),
        }.get(name, lambda v: v)(x)       # floor/ceil/round/rint/fix/trunc: identity
    assert_result(got, expected.astype(dtype))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_unary_integer_input_of_float_op_gives_float32(name, dtype, rng):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -20), min(info.max, 20)
    if name in ("gamma", "gammaln"):
        lo = max(lo, 1)        # poles at 0, -1, ...: SciPy and C disagree on the sign of inf
    x = rng.integers(lo, hi, size=60, dtype=dtype, endpoint=True)
    got = getattr(mx.nd, name)(_nd(x))
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        expected = np.asarray(UNARY_SPEC[name][0](x.astype(np.float64))).astype(np.float32)
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY_SPEC))
def test_unary_bool(name):
    x = np.array([True, False, True, True, False])
    got = getattr(mx.nd, name)(_nd(x))
    if name in BOOL_KEEP:
        expected = ~x if name == "logical_not" else x
        assert_result(got, expected)
    else:    # computed on 0/1 in float32
        assert got.dtype == np.float32
        with np.errstate(all="ignore"):
            expected = np.asarray(UNARY_SPEC[name][0](x.astype(np.float64))).astype(np.float32)
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-6, equal_nan=True)


# IEEE edge values. Where NumPy/SciPy give no answer the C library's is also accepted:
#  softsign(+-inf): x/(1+|x|) is inf/inf (NaN) in both; gammaln(-inf): C says +inf, SciPy -inf;
#  the sign of a zero result of sign/relu/erfinv is not specified by NumPy/SciPy.
EDGE = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0])
EDGE_SKIP = {"gammaln": [-np.inf]}
NO_SIGNED_ZERO = {"sign", "relu", "erfinv"}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY_SPEC))
def test_unary_edge_values(name, dtype):
    x = np.array([v for v in EDGE if not any(v is s or v == s for s in EDGE_SKIP.get(name, []))],
                 dtype=dtype)
    got = getattr(mx.nd, name)(_nd(x)).asnumpy()
    expected = _unary_expected(name, x)
    np.testing.assert_allclose(got, expected, rtol=UNARY_TOL[dtype][0], equal_nan=True)
    if name not in NO_SIGNED_ZERO:
        zero = expected == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(expected[zero]))


def test_unary_gamma_negative_non_integers():
    x = np.array([-0.5, -1.5, -2.5, -3.7])
    np.testing.assert_allclose(mx.nd.gamma(_nd(x)).asnumpy(), sp.gamma(x), rtol=1e-12)
    np.testing.assert_allclose(mx.nd.gammaln(_nd(x)).asnumpy(), sp.gammaln(x), rtol=1e-10)


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_is_half_away_from_zero_and_rint_half_down(dtype):
    """round: halves away from zero; rint: MXNet's documented rule, "for input n.5 rint
    returns n while round returns n+1; for -n.5 both return -n-1" (a tie goes down)."""
    x = _nd(np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, -0.51], dtype=dtype))
    assert_result(mx.nd.round(x), np.array([1, 2, 3, -1, -2, -3, 0, -1], dtype=dtype))
    assert_result(mx.nd.rint(x), np.array([0, 1, 2, -1, -2, -3, 0, -1], dtype=dtype))
    assert_result(mx.nd.fix(x), np.array([0, 1, 2, -0.0, -1, -2, 0, -0.0], dtype=dtype))


def test_round_just_below_half():
    # 0.5 - ulp: a floor(x + 0.5) implementation would give 1
    for dt in (np.float32, np.float64):
        v = np.nextafter(dt(0.5), dt(0))
        assert mx.nd.round(_nd(np.array([v, -v]))).asnumpy().tolist() == [0.0, -0.0]


def test_unary_in_place_out():
    x = mx.nd.array([0.25, 1.0, 4.0], dtype="float64")
    y = mx.nd.sqrt(x, out=x)
    assert y is x
    np.testing.assert_array_equal(x.asnumpy(), [0.5, 1.0, 2.0])


def test_unary_rejects_non_ndarray():
    with pytest.raises(TypeError, match="sin"):
        mx.nd.sin([1.0, 2.0])


# ---- binary, broadcasting -----------------------------------------------------------------
def _supported(kname):
    return list(ALL_DTYPES)


def _result_dtype(kname, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.dtype(np.float32) if kname in BOOL_TO_FLOAT else dt
    return np.dtype(np.float32) if (kname in FLOAT_RESULT and dt.kind in "iu") else dt


def _check_binary(op, kname, a, b):
    got = getattr(mx.nd, op)(_nd(a), _nd(b))
    rdt = _result_dtype(kname, a.dtype)
    expected = binary_expected(kname, a.astype(rdt), b.astype(rdt))
    assert_result(got, expected)


@st.composite
def _binary_case(draw, kname):
    dtype = draw(st.sampled_from(_supported(kname)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, min_side=0,
                                                    max_side=4))
    a = draw(hnp.arrays(dtype, shapes.input_shapes[0]))
    b = draw(hnp.arrays(dtype, shapes.input_shapes[1]))
    return a, b


@pytest.mark.parametrize("kname", sorted(BINARY))
def test_broadcast_binary_random_shapes(kname):
    @settings(max_examples=30)
    @given(_binary_case(kname))
    def check(case):
        a, b = case
        _check_binary(f"broadcast_{kname}", kname, a, b)
        assert getattr(mx.nd, f"broadcast_{kname}")(_nd(a), _nd(b)).shape == \
            np.broadcast_shapes(a.shape, b.shape)
    check()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("kname", sorted(BINARY))
def test_broadcast_binary_every_dtype(kname, dtype, rng):
    """Each (op, dtype) pair, with a 3-D broadcast that exercises strides 0 on both sides."""
    shape_a, shape_b = (4, 1, 5), (3, 1)
    if dtype in FLOATS:
        a, b = rng.uniform(-4, 4, shape_a), rng.uniform(-4, 4, shape_b)
        if kname == "power":
            a = np.abs(a)
        b[0, 0] = a[0, 0, 0] = 1.5       # equal elements for the comparisons
    elif dtype == "bool":
        a, b = rng.integers(0, 2, shape_a), rng.integers(0, 2, shape_b)
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, shape_a, endpoint=True)
        b = rng.integers(max(info.min, -9), min(info.max, 9), shape_b, endpoint=True)
    _check_binary(f"broadcast_{kname}", kname, a.astype(dtype), b.astype(dtype))
    # the large-size (parallel) path, with the smaller operand broadcast along rows
    big_a = np.resize(a.astype(dtype), (300, 250))
    big_b = np.resize(b.astype(dtype), (1, 250))
    _check_binary(f"broadcast_{kname}", kname, big_a, big_b)


def test_broadcast_aliases():
    a, b = _nd(np.arange(6.0).reshape(2, 3)), _nd(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(mx.nd.broadcast_plus(a, b).asnumpy(),
                                  mx.nd.broadcast_add(a, b).asnumpy())
    np.testing.assert_array_equal(mx.nd.broadcast_minus(a, b).asnumpy(),
                                  a.asnumpy() - b.asnumpy())


def test_broadcast_non_broadcastable_shapes():
    with pytest.raises(MXNetError, match=r"broadcast_mul.*\(2, 3\).*\(4,\)"):
        mx.nd.broadcast_mul(mx.nd.array(np.ones((2, 3))), mx.nd.array(np.ones(4)))


def test_binary_inputs_with_zero_and_one_sized_dims():
    a = _nd(np.ones((0, 1, 3), np.float32))
    b = _nd(np.ones((2, 1), np.float32))
    assert mx.nd.broadcast_add(a, b).shape == (0, 2, 3)
    c = _nd(np.float64(2.0) * np.ones(()))
    assert_result(mx.nd.broadcast_mul(c, _nd(np.arange(3.0))), np.arange(3.0) * 2)


# ---- integer corner cases -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_and_mod_by_zero_give_zero(dtype):
    a = _nd(np.array([7, 0, 1, 100], dtype=dtype))
    z = _nd(np.zeros(4, dtype=dtype))
    assert_result(mx.nd.broadcast_div(a, z), np.zeros(4, dtype))
    assert_result(mx.nd.broadcast_mod(a, z), np.zeros(4, dtype))
    assert_result(mx.nd.elemwise_div(a, z), np.zeros(4, dtype))
    assert_result(a / 0, np.zeros(4, dtype))
    assert_result(a % 0, np.zeros(4, dtype))
    assert_result(mx.nd._internal._rdiv_scalar(z, scalar=5), np.zeros(4, dtype))
    assert_result(mx.nd._internal._rmod_scalar(z, scalar=5), np.zeros(4, dtype))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_min_divided_by_minus_one(dtype):
    lo = np.iinfo(dtype).min
    a = _nd(np.array([lo, lo, 5], dtype=dtype))
    m1 = _nd(np.array([-1, -1, -1], dtype=dtype))
    assert_result(mx.nd.broadcast_div(a, m1), np.array([lo, lo, -5], dtype))   # wraps
    assert_result(mx.nd.broadcast_mod(a, m1), np.zeros(3, dtype))
    assert_result(mx.nd._internal._div_scalar(a, scalar=-1), np.array([lo, lo, -5], dtype))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_division_truncates_and_mod_takes_divisor_sign(dtype):
    a = _nd(np.array([7, -7, 7, -7], dtype=dtype))
    b = _nd(np.array([2, 2, -2, -2], dtype=dtype))
    assert_result(mx.nd.broadcast_div(a, b), np.array([3, -3, -3, 3], dtype))
    assert_result(mx.nd.broadcast_mod(a, b), np.array([1, 1, -1, -1], dtype))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_power_negative_exponent(dtype):
    base = np.array([-3, -2, -1, 0, 1, 2, 3], dtype=dtype)
    a = _nd(np.repeat(base, 3))
    e = _nd(np.tile(np.array([-1, -2, -3], dtype=dtype), 7))
    expected = np.array([0, 0, 0, 0, 0, 0, -1, 1, -1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype)
    assert_result(mx.nd.broadcast_power(a, e), expected)
    assert_result(mx.nd.broadcast_power(_nd(np.array([2, -3], dtype)), _nd(np.array([5, 3], dtype))),
                  np.array([32, -27], dtype))


def test_integer_power_wraps_like_fixed_width():
    a = _nd(np.array([3, 2, -2], dtype="int64"))
    e = _nd(np.array([40, 63, 63], dtype="int64"))
    expected = np.array([_wrap_int(3 ** 40, "int64"), _wrap_int(2 ** 63, "int64"),
                         _wrap_int((-2) ** 63, "int64")], dtype="int64")
    assert_result(mx.nd.broadcast_power(a, e), expected)


# ---- mixed dtypes ---------------------------------------------------------------------------
def _promoted(d1, d2):
    """NumPy's promotion, except int8 with uint8 (NumPy: int16, not an mxlite dtype) -> int32."""
    p = np.promote_types(d1, d2)
    return np.dtype(np.int32) if p == np.int16 else p


@pytest.mark.parametrize("d2", ALL_DTYPES)
@pytest.mark.parametrize("d1", ALL_DTYPES)
def test_mixed_dtype_promotion(d1, d2):
    a = np.array([[0, 1, 5], [2, 3, 1]]).astype(d1)
    b = np.array([1, 0, 5]).astype(d2)
    p = _promoted(d1, d2)
    ap = np.dtype(np.float32) if p == np.bool_ else p      # bool arithmetic is float32
    assert_result(mx.nd.broadcast_add(_nd(a), _nd(b)),
                  binary_expected("add", a.astype(ap), b.astype(ap)))
    assert_result(mx.nd.broadcast_greater(_nd(a), _nd(b)),
                  binary_expected("greater", a.astype(p), b.astype(p)))
    hp = np.dtype(np.float32) if p.kind in "iub" else p
    assert_result(mx.nd.broadcast_hypot(_nd(a), _nd(b)),
                  binary_expected("hypot", a.astype(hp), b.astype(hp)))


def test_int8_with_uint8_values():
    a = _nd(np.array([-100, 127, -128], dtype="int8"))
    b = _nd(np.array([200, 255, 0], dtype="uint8"))
    assert_result(mx.nd.broadcast_add(a, b), np.array([100, 382, -128], dtype="int32"))


# ---- elemwise_* (same shape) ---------------------------------------------------------------
ELEMWISE = {"elemwise_add": ("add", ("_plus", "_add")), "elemwise_sub": ("sub", ("_minus", "_sub")),
            "elemwise_mul": ("mul", ("_mul",)), "elemwise_div": ("div", ("_div",))}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", sorted(ELEMWISE))
def test_elemwise_same_shape(op, dtype, rng):
    kname, aliases = ELEMWISE[op]
    if dtype == "bool":
        a = rng.integers(0, 2, (3, 4)).astype(bool)
        b = rng.integers(0, 2, (3, 4)).astype(bool)
    else:
        a = rng.integers(-20, 20, (3, 4)).astype(dtype) if dtype != "uint8" else \
            rng.integers(0, 255, (3, 4)).astype(dtype)
        b = rng.integers(-5, 5, (3, 4)).astype(dtype) if dtype != "uint8" else \
            rng.integers(0, 9, (3, 4)).astype(dtype)
    rdt = _result_dtype(kname, a.dtype)
    expected = binary_expected(kname, a.astype(rdt), b.astype(rdt))
    assert_result(getattr(mx.nd, op)(_nd(a), _nd(b)), expected)
    for alias in aliases:
        assert_result(getattr(mx.nd._internal, alias)(_nd(a), _nd(b)), expected)


@pytest.mark.parametrize("op", sorted(ELEMWISE))
def test_elemwise_shape_mismatch(op):
    a, b = mx.nd.array(np.ones((2, 3))), mx.nd.array(np.ones((1, 3)))
    with pytest.raises(MXNetError, match=rf"{op}.*\(2, 3\).*\(1, 3\)"):
        getattr(mx.nd, op)(a, b)
    with pytest.raises(MXNetError, match=op):
        getattr(mx.nd, op)(mx.nd.array(np.ones(3)), mx.nd.array(np.ones(())))


def test_bool_arithmetic_is_float32():
    """Arithmetic reads bool as 0/1 and returns float32 (MXNet's default dtype); comparisons
    and logical ops keep bool."""
    t = mx.nd.array([True, False], dtype="bool")
    f = np.array([1.0, 0.0], np.float32)
    assert_result(t * 5, np.array([5, 0], np.float32))
    assert_result(5 * t, np.array([5, 0], np.float32))
    assert_result(t + t, f + f)
    assert_result(t - 1, f - 1)
    assert_result(t * t, f * f)
    assert_result(t / 2, f / 2)
    assert_result(-t, -f)
    assert_result(t * 2.5, f * np.float32(2.5))
    for op, ref in (("broadcast_add", np.add), ("broadcast_sub", np.subtract),
                    ("broadcast_mul", np.multiply), ("broadcast_maximum", np.maximum),
                    ("broadcast_minimum", np.minimum), ("elemwise_add", np.add)):
        assert_result(getattr(mx.nd, op)(t, t[::-1]), ref(f, f[::-1]))
    for name in ("abs", "sign", "square", "relu", "floor", "rint", "negative"):
        got = getattr(mx.nd, name)(t)
        assert got.dtype == np.float32, name
    # comparisons and logical ops keep bool, and compare the truth values exactly
    assert_result(t == t, np.array([True, True]))
    assert_result(t > 0.5, np.array([True, False]))
    assert_result(t == 2, np.array([False, False]))
    assert_result(mx.nd.broadcast_logical_xor(t, t[::-1]), np.array([True, True]))
    assert_result(mx.nd.logical_not(t), np.array([False, True]))


# ---- scalar ops ------------------------------------------------------------------------------
# name: (binary kernel, reversed: op(x, s) = kernel(s, x))
SCALAR_SPEC = {
    "_plus_scalar": ("add", False), "_minus_scalar": ("sub", False),
    "_rminus_scalar": ("sub", True), "_mul_scalar": ("mul", False),
    "_div_scalar": ("div", False), "_rdiv_scalar": ("div", True),
    "_mod_scalar": ("mod", False), "_rmod_scalar": ("mod", True),
    "_power_scalar": ("power", False), "_rpower_scalar": ("power", True),
    "_maximum_scalar": ("maximum", False), "_minimum_scalar": ("minimum", False),
    "_hypot_scalar": ("hypot", False),
    "_equal_scalar": ("equal", False), "_not_equal_scalar": ("not_equal", False),
    "_greater_scalar": ("greater", False), "_greater_equal_scalar": ("greater_equal", False),
    "_lesser_scalar": ("lesser", False), "_lesser_equal_scalar": ("lesser_equal", False),
    "_logical_and_scalar": ("logical_and", False), "_logical_or_scalar": ("logical_or", False),
    "_logical_xor_scalar": ("logical_xor", False),
}
SCALARS = {"float": [0.0, 1.0, -1.0, 2.5, -3.75, 0.5], "int": [0, 1, -1, 2.5, -3.75, 7],
           "uint8": [0, 1, 2.5, 7, 200], "bool": [0, 1, 2.5]}


_INT_ARITH = ("add", "sub", "mul", "div", "mod", "power", "hypot")


def test_integer_arithmetic_scalars_out_of_range():
    x = mx.nd.array([100, -100, 7], dtype="int8")
    # +, - and * wrap exactly modulo 2**8, as the results themselves do
    assert_result(x + 300, (np.array([100, -100, 7]) + 300).astype(np.int8))
    assert_result(x * 300, (np.array([100, -100, 7]) * 300).astype(np.int8))
    for op in (lambda: x / 300, lambda: x % 300, lambda: x ** 300):
        with pytest.raises(MXNetError, match="outside the int8 range"):
            op()


def test_scalar_spec_matches_registry():
    assert set(SCALAR_SPEC) == set(SCALAR_OPS)
    for name in SCALAR_SPEC:
        assert hasattr(mx.nd._internal, name)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", sorted(SCALAR_SPEC))
def test_scalar_op(name, dtype, rng):
    """Result keeps the array's dtype; the scalar is cast to the compute dtype (MXNet)."""
    kname, reverse = SCALAR_SPEC[name]
    fn = getattr(mx.nd._internal, name)
    if dtype == "bool":
        x = np.array([True, False, True, False])
        scalars = SCALARS["bool"]
    elif dtype in FLOATS:
        x = rng.uniform(-5, 5, 12).astype(dtype)
        x[:3] = [0, 1, 2.5]
        if kname == "power" and not reverse:
            x = np.abs(x)
        scalars = SCALARS["float"]
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -50), min(info.max, 50), 12, endpoint=True).astype(dtype)
        x[:3] = np.array([0, 1, 2]).astype(dtype)
        scalars = SCALARS["uint8" if dtype == "uint8" else "int"]
    rdt = _result_dtype(kname, np.dtype(dtype))
    work = np.float32 if rdt == np.float16 else rdt
    for s in scalars:
        if (rdt.kind in "iu" and kname in _INT_ARITH and isinstance(s, float)
                and not s.is_integer()):
            # a fraction would be truncated (MXNet did so silently): refused
            with pytest.raises(MXNetError, match="is not an integer"):
                fn(_nd(x), scalar=s)
            continue
        if rdt.kind in "iub" and kname in _COMPARE:       # exact, whatever the scalar
            expected = np.asarray(_COMPARE[kname](x.astype(np.float64), s)).astype(rdt)
        elif rdt.kind in "iu" and kname in ("maximum", "minimum"):   # clip's rounding
            b = math.ceil(s) if kname == "maximum" else math.floor(s)
            expected = binary_expected(kname, x, np.full(x.shape, b).astype(rdt))
        else:                          # the scalar cast to the compute dtype (MXNet)
            sv = np.full(x.shape, np.array(s).astype(work)).astype(rdt) \
                if rdt != np.float16 else np.full(x.shape, np.float32(s))
            xr = x.astype(rdt) if rdt != np.float16 else x.astype(np.float32)
            expected = binary_expected(kname, sv, xr) if reverse else \
                binary_expected(kname, xr, sv)
        assert_result(fn(_nd(x), scalar=s), expected.astype(rdt))


def test_scalar_default_and_positional():
    x = mx.nd.array([1.0, 2.0])
    assert_result(mx.nd._internal._plus_scalar(x), np.array([2.0, 3.0], np.float32))  # scalar=1
    assert_result(mx.nd._internal._mul_scalar(x, 3), np.array([3.0, 6.0], np.float32))
    assert_result(mx.nd._internal._rminus_scalar(x, scalar="10"), np.array([9.0, 8.0], np.float32))


def test_scalar_op_bad_scalar():
    with pytest.raises(MXNetError, match="_plus_scalar.*scalar"):
        mx.nd._internal._plus_scalar(mx.nd.array([1.0]), scalar="abc")
    with pytest.raises(MXNetError, match="_plus_scalar.*scalar"):
        mx.nd._internal._plus_scalar(mx.nd.array([1.0]), scalar=None)


@pytest.mark.parametrize("dtype", FLOATS)
def test_maximum_minimum_propagate_nan(dtype):
    a = _nd(np.array([np.nan, 1.0, np.nan, -np.inf], dtype=dtype))
    b = _nd(np.array([1.0, np.nan, np.nan, np.inf], dtype=dtype))
    for op, ref in (("broadcast_maximum", np.maximum), ("broadcast_minimum", np.minimum)):
        assert_result(getattr(mx.nd, op)(a, b), ref(a.asnumpy(), b.asnumpy()), exact=True)
    assert_result(mx.nd._internal._maximum_scalar(a, scalar=0.0),
                  np.array([np.nan, 1.0, np.nan, 0.0], dtype), exact=True)


@pytest.mark.cpu_only      # calls the CPU kernels of mxlite._core directly
def test_kernels_refuse_strided_buffers():
    """The raw kernels walk buffers linearly: a strided/reversed view must be refused, not read
    out of bounds."""
    from mxlite._core import elemwise as k
    x, y = np.arange(10.0), np.empty(5)
    with pytest.raises(ValueError, match="contiguous"):
        k.unary(k.UNARY_IDS["sin"], x[::-2], y)
    with pytest.raises(ValueError, match="contiguous"):
        k.unary(k.UNARY_IDS["sin"], x[:5], x[::2])
    with pytest.raises(ValueError, match="contiguous"):
        k.binary(k.BINARY_IDS["add"], x[::2], x[:5], y)
    readonly = np.empty(5)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        k.binary(k.BINARY_IDS["add"], x[:5], x[:5], readonly)
    with pytest.raises(ValueError):
        k.binary(k.BINARY_IDS["add"], x[:5], x[:4], y)       # not broadcastable to out


def test_float32_tanh_is_within_one_ulp_of_the_rounded_exact_value():
    """float32 tanh has its own vectorized kernel (mx_math.h tanh_f32): it stays within one
    ulp of float64 tanh rounded to float32 (exact for nearly every input), keeps the sign
    of zero, saturates to +-1 and passes NaN."""
    rng = np.random.default_rng(5)
    x = np.concatenate([np.linspace(-12, 12, 400_001), rng.standard_normal(200_000) * 3,
                        np.logspace(-45, 1.2, 20_000), -np.logspace(-45, 1.2, 20_000),
                        [0.0, -0.0, np.inf, -np.inf, 9.1, -9.1, 9.09, 1e-8]]).astype(np.float32)
    got = mx.nd.tanh(mx.nd.array(x)).asnumpy()
    want = np.tanh(x.astype(np.float64)).astype(np.float32)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1 and (ulps == 0).mean() > 0.9999
    assert np.signbit(got[x.size - 7]) and got[x.size - 6] == 1 and got[x.size - 5] == -1
    assert np.isnan(mx.nd.tanh(mx.nd.array([np.nan])).asnumpy()[0])


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("op", ["broadcast_div", "broadcast_mod", "broadcast_power"])
def test_8_bit_division_modulo_and_power_on_every_operand_pair(op, dtype, device):
    """The branch-free 8-bit kernels (quotients through float32, power by fixed squaring
    rounds) agree with the int64 kernels, wrapped to 8 bits, on all 65536 operand pairs
    (division by zero included)."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1)
    a = mx.nd.array(np.repeat(values, values.size).astype(dtype), dtype=dtype)
    b = mx.nd.array(np.tile(values, values.size).astype(dtype), dtype=dtype)
    got = getattr(mx.nd, op)(a, b)
    want = getattr(mx.nd, op)(a.astype("int64"), b.astype("int64")).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


# ---- add_n ---------------------------------------------------------------------------------
def _add_n_oracle(arrays):
    """The sum in order, in the work dtype (float32 for float16, rounded once at the end);
    integers wrap as NumPy's fixed-width addition does."""
    work = np.float32 if arrays[0].dtype == np.float16 else arrays[0].dtype
    total = arrays[0].astype(work)
    with np.errstate(over="ignore"):
        for a in arrays[1:]:
            total = (total + a.astype(work)).astype(work)
    return total.astype(arrays[0].dtype)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_add_n_is_the_sum_of_its_inputs(rng, dtype, n):
    arrays = [(rng.standard_normal((3, 5)) * 50).astype(dtype) for _ in range(n)]
    got = mx.nd.add_n(*[mx.nd.array(a, dtype=dtype) for a in arrays])
    assert got.dtype == np.dtype(dtype) and got.shape == (3, 5)
    np.testing.assert_array_equal(got.asnumpy(), _add_n_oracle(arrays))


def test_add_n_rounds_float16_once():
    """2048 + 1 + 1 is 2050 in float16; adding in float16 step by step gives 2048 (2049 is
    a tie between 2048 and 2050 and rounds to even)."""
    a, one = mx.nd.full((4,), 2048, dtype="float16"), mx.nd.ones((4,), dtype="float16")
    np.testing.assert_array_equal(mx.nd.add_n(a, one, one).asnumpy(),
                                  np.full(4, 2050, np.float16))


def test_add_n_names_num_args_and_symbols():
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([10.0, 20.0])
    for f in (mx.nd.add_n, mx.nd.ElementWiseSum):
        np.testing.assert_array_equal(f(a, b, a, num_args=3).asnumpy(), [12.0, 24.0])
    s = mx.sym.ElementWiseSum(mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("z"))
    assert s.list_arguments() == ["x", "y", "z"]
    assert s.infer_shape(x=(2, 3))[1] == [(2, 3)]
    assert s.attr_dict()[s.name]["num_args"] == "3"
    out = s.bind(mx.current_context(), {"x": a, "y": b, "z": b}).forward()[0]
    np.testing.assert_array_equal(out.asnumpy(), [21.0, 42.0])


def test_add_n_of_bools_counts_in_float32():
    t = mx.nd.array([True, False, True], dtype="bool")
    f = mx.nd.array([True, False, False], dtype="bool")
    got = mx.nd.add_n(t, f, t)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy(), [3.0, 0.0, 2.0])


def test_add_n_gradient_is_the_head_gradient_for_each_input():
    x, y = mx.nd.array([1.0, -2.0, 3.0]), mx.nd.array([0.5, 0.5, 0.5])
    x.attach_grad()
    y.attach_grad()
    head = mx.nd.array([1.0, 0.0, -3.0])
    with mx.autograd.record():
        z = mx.nd.add_n(x, y, x)
    z.backward(head)
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * head.asnumpy())   # x appears twice
    np.testing.assert_array_equal(y.grad.asnumpy(), head.asnumpy())


@pytest.mark.parametrize("call, words", [
    (lambda a: mx.nd.add_n(), ["add_n", "at least one input"]),
    (lambda a: mx.nd.add_n(a, mx.nd.ones((3, 2))), ["add_n", "(2, 3)", "(3, 2)", "input 1"]),
    (lambda a: mx.nd.add_n(a, a.astype("float64")), ["add_n", "float32", "float64"]),
    (lambda a: mx.nd.add_n(a, a, num_args=3), ["add_n", "num_args=3", "2"]),
    (lambda a: mx.nd.add_n(a, mx.nd.ones((2, 3)), out=a), ["add_n", "out="]),
])
def test_add_n_refuses_bad_input_by_name(call, words):
    with pytest.raises(MXNetError) as err:
        call(mx.nd.ones((2, 3)))
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("form", ["relu", "Activation"])
def test_relu_gradient_propagates_nan(form):
    # relu passes NaN through, so its slope there is NaN too (MXNet's relu gradient); the
    # step is 1 above 0 (infinity included) and 0 at or below it
    xs = np.array([np.nan, -1.0, 2.0, 0.0, np.inf, -np.inf])
    f = mx.nd.relu if form == "relu" else (lambda a: mx.nd.Activation(a, act_type="relu"))
    x = mx.nd.array(xs)
    x.attach_grad()
    with mx.autograd.record():
        y = f(x)
    y.backward(mx.nd.array([3.0] * 6))
    np.testing.assert_array_equal(y.asnumpy(), np.maximum(xs, 0).astype(np.float32))
    np.testing.assert_array_equal(x.grad.asnumpy(), [np.nan, 0, 3, 0, 3, 0])
