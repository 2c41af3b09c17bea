"""MXNet-1.x semantics decided in issue 7: bool arithmetic (item 8), rint and sign (item 9),
and exact scalar operands for integer arrays (the comparisons and maximum/minimum that bool
arithmetic brought up).

Oracles: NumPy on the float32 0/1 values, NumPy formulas of the documented rules, and Python's
exact int/float comparisons.
"""
import math
import operator
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxlite as mx
from mxlite import MXNetError
from mxlite._core.kernel_table import BINARY, UNARY
from mxlite.ops.elemwise import LOGICAL_OPS, SCALAR_OPS, bool_result

T = np.array([True, False, True, False])
U = np.array([True, True, False, False])
INTS = ("int8", "uint8", "int32", "int64")


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


# ---- item 8: bool arithmetic is float32 ------------------------------------------------------
def test_issue_example():
    got = mx.nd.array([True, False], dtype="bool") * 5
    assert got.dtype == np.float32 and got.asnumpy().tolist() == [5.0, 0.0]


def test_bool_rule_is_one_rule():
    """Comparisons and logical ops keep bool; every other element-wise kernel is float32."""
    assert {k for k in BINARY if bool_result(k) == np.bool_} == LOGICAL_OPS - {"logical_not"}
    assert {k for k in UNARY if bool_result(k) == np.bool_} == {"logical_not"}
    assert all(bool_result(k) == np.float32 for k in BINARY if k not in LOGICAL_OPS)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_on_bool(name):
    got = getattr(mx.nd, name)(_nd(T))
    as_float = getattr(mx.nd, name)(_nd(T.astype(np.float32))).asnumpy()
    if name == "logical_not":
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.asnumpy(), ~T)
    else:
        assert got.dtype == np.float32, name
        np.testing.assert_array_equal(got.asnumpy(), as_float)


@pytest.mark.parametrize("kname", sorted(BINARY))
def test_binary_on_bool(kname):
    for op in (f"broadcast_{kname}",) + ((f"elemwise_{kname}",)
                                         if kname in ("add", "sub", "mul", "div") else ()):
        got = getattr(mx.nd, op)(_nd(T), _nd(U))
        as_float = getattr(mx.nd, op)(_nd(T.astype(np.float32)), _nd(U.astype(np.float32)))
        if kname in LOGICAL_OPS:
            assert got.dtype == np.bool_, op
            np.testing.assert_array_equal(got.asnumpy(), as_float.asnumpy().astype(bool))
        else:
            assert got.dtype == np.float32, op
            np.testing.assert_array_equal(got.asnumpy(), as_float.asnumpy())


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
@pytest.mark.parametrize("scalar", [0, 1, 2, -1, 0.5, 2.5])
def test_scalar_ops_on_bool(name, scalar):
    kname = SCALAR_OPS[name][0]
    fn = getattr(mx.nd._internal, name)
    got = fn(_nd(T), scalar=scalar)
    as_float = fn(_nd(T.astype(np.float32)), scalar=scalar).asnumpy()
    if kname in LOGICAL_OPS:          # exact comparisons of the truth values 0/1
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.asnumpy(), as_float.astype(bool))
    else:
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.asnumpy(), as_float)


def test_bool_arithmetic_against_numpy():
    f = T.astype(np.float32)
    g = U.astype(np.float32)
    t, u = _nd(T), _nd(U)
    cases = [(t + u, f + g), (t - u, f - g), (t * u, f * g), (t * 5, f * 5), (5 * t, 5 * f),
             (t + 1, f + 1), (1 - t, 1 - f), (-t, -f), (t * 2.5, f * np.float32(2.5)),
             (t ** 2, f ** 2), (mx.nd.broadcast_maximum(t, u), np.maximum(f, g)),
             (mx.nd.sum(t * 1), np.array(f.sum(), np.float32))]
    for got, want in cases:
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.asnumpy(), want)
    # mixed with a numeric dtype: NumPy's promotion, unchanged
    assert (t + _nd(np.ones(4, np.int8))).dtype == np.int8
    assert (t + _nd(np.ones(4, np.float64))).dtype == np.float64


def test_bool_docstrings_state_the_rule():
    for fn in (mx.nd.broadcast_add, mx.nd.negative, mx.nd._internal._mul_scalar):
        assert "float32" in fn.__doc__ and "bool" in fn.__doc__


# ---- exact scalar operands on integer arrays ------------------------------------------------
_CMP = {"_equal_scalar": operator.eq, "_not_equal_scalar": operator.ne,
        "_greater_scalar": operator.gt, "_greater_equal_scalar": operator.ge,
        "_lesser_scalar": operator.lt, "_lesser_equal_scalar": operator.le}
_LOGIC = {"_logical_and_scalar": lambda a, b: bool(a) and bool(b),
          "_logical_or_scalar": lambda a, b: bool(a) or bool(b),
          "_logical_xor_scalar": lambda a, b: bool(a) != bool(b)}


def _scalars(dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    lo, hi = (0, 1) if info is None else (int(info.min), int(info.max))
    return [lo - 1, lo, hi, hi + 1, 2.5, -2.5, 0.5, -0.5, 0, 1, -1, 1e300, -1e300, math.inf,
            -math.inf, math.nan, hi + 0.5 if hi < 2 ** 53 else 2.0 ** 63, 2 ** 70, -2 ** 70]


@pytest.mark.parametrize("dtype", INTS + ("bool",))
@pytest.mark.parametrize("name", sorted(_CMP) + sorted(_LOGIC))
def test_integer_comparisons_with_any_scalar_are_exact(name, dtype, rng):
    """Python compares ints with floats exactly; that is the oracle (MXNet cast the scalar to
    the array's dtype first: uint8 > -1 was all false)."""
    if dtype == "bool":
        x = np.array([True, False])
    else:
        info = np.iinfo(dtype)
        x = np.concatenate([np.array([info.min, info.max, 0, 1, 2, -1 if info.min else 3]),
                            rng.integers(info.min, info.max, 20, endpoint=True)]).astype(dtype)
    fn = getattr(mx.nd._internal, name)
    ref = _CMP.get(name) or _LOGIC[name]
    for s in _scalars(dtype):
        got = fn(_nd(x), scalar=s)
        want = np.array([ref(int(v), s) for v in x]).astype(dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.asnumpy(), want, err_msg=f"{name}({dtype}, {s!r})")


def test_issue_style_examples():
    u = _nd(np.array([5, 10], np.uint8))
    assert (u > -1).asnumpy().tolist() == [1, 1]
    assert (u == 261).asnumpy().tolist() == [0, 0]
    i = _nd(np.array([5, 10], np.int8))
    assert (i == 5.5).asnumpy().tolist() == [0, 0]
    assert (i >= 5.5).asnumpy().tolist() == [0, 1]
    big = _nd(np.array([2 ** 62 + 1, 3], np.int64))
    assert (big == 2 ** 62 + 1).asnumpy().tolist() == [1, 0]          # no float rounding
    np.testing.assert_array_equal((big + (2 ** 53 + 1)).asnumpy(),
                                  np.array([2 ** 62 + 2 ** 53 + 2, 2 ** 53 + 4], np.int64))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_maximum_minimum_follow_clip(dtype, rng):
    """maximum(x, s) is clip(x, s, inf): a fractional s rounds up (down for minimum), beyond
    the range on the harmless side it changes nothing, on the other side it is an error."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    x = rng.integers(lo, hi, 30, endpoint=True).astype(dtype)
    x64 = x.astype(object)
    for s in (2.5, -2.5, 0, lo - 1, lo - 1e30, -math.inf, lo):
        if math.isfinite(s) and math.ceil(s) > hi:
            continue
        got = mx.nd._internal._maximum_scalar(_nd(x), scalar=s).asnumpy()
        want = np.array([max(v, max(math.ceil(s) if math.isfinite(s) else lo, lo)) for v in x64])
        np.testing.assert_array_equal(got, want.astype(dtype), err_msg=f"maximum {s}")
    for s in (2.5, -2.5, 0, hi + 1, hi + 1e30, math.inf, hi):
        if math.isfinite(s) and math.floor(s) < lo:
            continue                  # an error: checked below
        got = mx.nd._internal._minimum_scalar(_nd(x), scalar=s).asnumpy()
        want = np.array([min(v, min(math.floor(s) if math.isfinite(s) else hi, hi)) for v in x64])
        np.testing.assert_array_equal(got, want.astype(dtype), err_msg=f"minimum {s}")
    with pytest.raises(MXNetError, match=rf"_maximum_scalar: scalar={hi + 1} is above the "
                                         rf"largest {dtype} value {hi}"):
        mx.nd._internal._maximum_scalar(_nd(x), scalar=hi + 1)
    with pytest.raises(MXNetError, match=rf"_minimum_scalar: scalar={lo - 1} is below the "
                                         rf"smallest {dtype} value {lo}"):
        mx.nd._internal._minimum_scalar(_nd(x), scalar=lo - 1)


@pytest.mark.parametrize("name", ["_plus_scalar", "_minus_scalar", "_mul_scalar", "_div_scalar",
                                  "_rdiv_scalar", "_mod_scalar", "_power_scalar",
                                  "_maximum_scalar"])
def test_integer_arithmetic_with_a_non_finite_scalar_is_an_error(name):
    x = _nd(np.array([1, 2], np.int32))
    for s in (math.nan, math.inf, -math.inf):
        if name == "_maximum_scalar" and s != math.nan and s < 0:
            continue                  # maximum with -inf is a no-op
        if name == "_maximum_scalar" and s == math.inf:
            pattern = "above the largest"
        else:
            pattern = "not a finite number"
        with pytest.raises(MXNetError, match=rf"{name}: scalar={s} .*{pattern}"):
            getattr(mx.nd._internal, name)(x, scalar=s)


def test_integer_ring_arithmetic_with_wide_scalars_wraps_exactly():
    """+, - and * with an out-of-range integer scalar: the scalar is cast (wrapped) as MXNet
    did, which equals the exact result wrapped to the dtype (NumPy's int8 arithmetic)."""
    x = np.array([-128, -5, 0, 7, 127], np.int8)
    for s in (1000, -1000, 2 ** 40 + 3):
        for name, op in (("_plus_scalar", operator.add), ("_minus_scalar", operator.sub),
                         ("_mul_scalar", operator.mul)):
            got = getattr(mx.nd._internal, name)(_nd(x), scalar=s).asnumpy()
            want = np.array([(op(int(v), s) + 128) % 256 - 128 for v in x], np.int8)
            np.testing.assert_array_equal(got, want)


def test_scalar_parameter_is_a_number():
    x = mx.nd.array([1.0])
    assert mx.nd._internal._plus_scalar(x, scalar="2").asnumpy().tolist() == [3.0]   # MXNet
    for bad in ("abc", None, 1j, [1]):
        with pytest.raises(MXNetError, match="_plus_scalar: .*scalar"):
            mx.nd._internal._plus_scalar(x, scalar=bad)


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(INTS), name=st.sampled_from(sorted(_CMP)),
       s=st.one_of(st.integers(-2 ** 65, 2 ** 65), st.floats(allow_nan=True)),
       seed=st.integers(0, 2 ** 32 - 1))
def test_integer_comparisons_random(dtype, name, s, seed):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, 16, endpoint=True).astype(dtype)
    if isinstance(s, int) and info.min <= s <= info.max:
        x[0] = s                                      # equality is exercised too
    got = getattr(mx.nd._internal, name)(_nd(x), scalar=s).asnumpy()
    np.testing.assert_array_equal(got, np.array([_CMP[name](int(v), s) for v in x]).astype(dtype))


# ---- item 9: rint and sign ------------------------------------------------------------------
def rint_mxnet(x):
    """MXNet's documented rint, as a NumPy formula: floor(x) when x - floor(x) <= ceil(x) - x,
    else ceil(x) -- the nearest integer, a tie going down."""
    f, c = np.floor(x), np.ceil(x)
    with np.errstate(invalid="ignore"):
        return np.where(x - f <= c - x, f, c)


def rint_exact(v):
    """The same rule on exact rationals: nearest integer, ties to the smaller one."""
    q = Fraction(float(v))
    f = math.floor(q)
    return float(f if q - f <= Fraction(1, 2) else f + 1)


def test_rint_documented_examples():
    x = mx.nd.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -2.1, -1.9, 1.9, 2.1])
    assert mx.nd.rint(x).asnumpy().tolist() == [0, 1, 2, -1, -2, -3, -2, -2, 2, 2]
    # MXNet's documentation: n.5 -> n for rint, n + 1 for round; -n.5 -> -n-1 for both
    assert mx.nd.round(x).asnumpy().tolist()[:6] == [1, 2, 3, -1, -2, -3]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rint_matches_the_documented_rule(dtype, rng):
    x = rng.uniform(-2000, 2000, 5000)
    x[:2000] = np.round(x[:2000] * 2) / 2                     # exact halves: ties
    x[2000:2100] = rng.integers(-50, 50, 100) + 0.5
    x = np.concatenate([x, [0.0, -0.0, 0.49999997, -0.49999997, np.inf, -np.inf, np.nan,
                            2.0 ** 52 + 0.5 if dtype == "float64" else 1024.5,
                            -(2.0 ** 52) - 0.5 if dtype == "float64" else -1024.5]])
    x = x.astype(dtype)
    got = mx.nd.rint(_nd(x)).asnumpy()
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, rint_mxnet(x.astype(np.float64)).astype(dtype))
    finite = np.isfinite(x)
    np.testing.assert_array_equal(got[finite], np.array([rint_exact(v) for v in x[finite]],
                                                        dtype))
    # the signs of zeros follow floor / ceil: rint(-0.3) = ceil(-0.3) = -0.0
    assert np.signbit(mx.nd.rint(mx.nd.array([-0.3, 0.3])).asnumpy()).tolist() == [True, False]


def test_rint_integers_unchanged_and_docstring():
    x = np.array([-5, 0, 7], np.int32)
    np.testing.assert_array_equal(mx.nd.rint(_nd(x)).asnumpy(), x)
    assert "tie" in mx.nd.rint.__doc__ and "MXNet" in mx.nd.rint.__doc__


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sign_propagates_nan(dtype):
    """mxlite differs from MXNet's kernel (sign(NaN) = 0) on purpose: NaN stays NaN, as in
    NumPy; zeros keep their sign bit."""
    x = np.array([np.nan, -np.inf, -3.5, -0.0, 0.0, 2.0, np.inf], dtype)
    got = mx.nd.sign(_nd(x)).asnumpy()
    np.testing.assert_array_equal(got, np.sign(x))            # NaN == NaN here
    assert np.isnan(got[0])
    assert np.signbit(got[3]) and not np.signbit(got[4])
    assert "NaN" in mx.nd.sign.__doc__ and "MXNet" in mx.nd.sign.__doc__


@pytest.mark.parametrize("dtype", INTS)
def test_sign_integers(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, -1, 0, 1, info.max], dtype) if info.min else \
        np.array([0, 1, info.max], dtype)
    np.testing.assert_array_equal(mx.nd.sign(_nd(x)).asnumpy(), np.sign(x))
