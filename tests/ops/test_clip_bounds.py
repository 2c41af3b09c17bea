"""clip with bounds outside the dtype, fractional bounds on integer data and exact int64
bounds (issue 7, item 6).

The documented rule: a bound beyond the dtype's range on the harmless side is a no-op; a bound
that would make every result unrepresentable (a_min above the dtype's largest value, a_max
below its smallest) is an MXNetError; on integer data a fractional a_min rounds up and a
fractional a_max rounds down, which is exact. MXNet cast the bounds (uint8 a_min=-5 became
251; int8 a_min=200 became -56). Oracles: NumPy clip in float64 (values and bounds exact
there), then rounded inward; NumPy clip in int64 for integer bounds.
"""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxlite as mx
from mxlite import MXNetError

INTS = ("int8", "uint8", "int32", "int64")


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _limits(dt):
    dt = np.dtype(dt)
    return (0, 1) if dt == np.bool_ else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))


def oracle(x, a_min, a_max):
    """NumPy's clip computed in float64, then each result moved inward to the nearest integer
    of [a_min, a_max] (ceil at the lower bound, floor at the upper), then limited to the
    dtype's range (the harmless side). Exact for |values| < 2**53."""
    y = np.clip(x.astype(np.float64), a_min, a_max)
    y = np.where(y < math.ceil(a_min) if math.isfinite(a_min) else False, math.ceil(a_min), y) \
        if math.isfinite(a_min) else y
    y = np.where(y > math.floor(a_max), math.floor(a_max), y) if math.isfinite(a_max) else y
    lo, hi = _limits(x.dtype)
    return np.clip(y, lo, hi).astype(x.dtype)


def test_int8_bounds_beyond_the_range_on_the_harmless_side_are_no_ops():
    x = np.array([-128, -100, -1, 0, 1, 100, 127], np.int8)
    for a_min, a_max in ((-1000, 1000), (-1e30, 1e30), (-math.inf, math.inf), (-129, 128),
                         (-1000, 50), (-50, 1000)):
        got = mx.nd.clip(_nd(x), a_min, a_max).asnumpy()
        want = np.clip(x.astype(np.int64), max(a_min, -128), min(a_max, 127)).astype(np.int8)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.int8


@pytest.mark.parametrize("dtype", INTS + ("bool",))
def test_bounds_that_leave_no_representable_result_are_errors(dtype):
    lo, hi = _limits(dtype)
    x = _nd(np.zeros(3, dtype))
    with pytest.raises(MXNetError, match=rf"clip: a_min={hi + 1} is above the largest {dtype} "
                                         rf"value {hi}"):
        mx.nd.clip(x, hi + 1, hi + 100)
    with pytest.raises(MXNetError, match=rf"clip: a_max={lo - 1} is below the smallest {dtype} "
                                         rf"value {lo}"):
        mx.nd.clip(x, lo - 100, lo - 1)
    with pytest.raises(MXNetError, match=r"clip: a_min=.* is above"):
        mx.nd.clip(x, hi + 0.5, math.inf)
    # exactly at the limits is fine
    np.testing.assert_array_equal(mx.nd.clip(x, hi, hi + 5).asnumpy(), np.full(3, hi, dtype))
    np.testing.assert_array_equal(mx.nd.clip(x, lo - 5, lo).asnumpy(), np.full(3, lo, dtype))


def test_issue_examples():
    x = _nd(np.array([-100, 0, 100], np.int8))
    np.testing.assert_array_equal(mx.nd.clip(x, -1000, 1000).asnumpy(), [-100, 0, 100])
    with pytest.raises(MXNetError, match="clip: a_min=200 is above the largest int8 value 127"):
        mx.nd.clip(x, 200, 300)
    u = _nd(np.array([0, 3, 200, 255], np.uint8))
    np.testing.assert_array_equal(mx.nd.clip(u, -5, 10).asnumpy(), [0, 3, 10, 10])


@pytest.mark.parametrize("dtype", INTS)
def test_fractional_bounds_round_inward(dtype):
    lo, hi = _limits(dtype)
    lo, hi = max(lo, -2 ** 53), min(hi, 2 ** 53)        # where the float64 oracle is exact
    x = np.array(sorted(v for v in {lo, lo + 1, -3, -2, -1, 0, 1, 2, 3, hi - 1, hi}
                        if lo <= v <= hi), dtype)
    for a_min, a_max in ((-2.5, 2.5), (-2.0001, 1.9999), (0.1, 0.9 + 1), (-0.5, 0.5),
                         (lo + 0.5, hi - 0.5), (-1e300, 2.7), (1.2, 1e300)):
        if a_max < lo or a_min > hi:
            continue
        got = mx.nd.clip(_nd(x), a_min, a_max).asnumpy()
        want = oracle(x, a_min, a_max)
        np.testing.assert_array_equal(got, want)
        assert (got >= a_min).all() and (got <= a_max).all()
        assert (np.abs(got - np.clip(x.astype(np.float64), a_min, a_max)) < 1).all()


def test_a_range_holding_no_integer_is_an_error():
    with pytest.raises(MXNetError, match=r"clip: no int32 value lies in \[a_min=0.2, a_max=0.8\]"):
        mx.nd.clip(_nd(np.array([1, 2], np.int32)), 0.2, 0.8)


def test_int64_bounds_are_exact():
    """Integer bounds are kept as Python ints: no rounding through float64."""
    x = np.array([2 ** 62, 2 ** 62 + 1, 2 ** 62 + 2, -2 ** 63, 2 ** 63 - 1, 0], np.int64)
    for a_min, a_max in ((2 ** 62 + 1, 2 ** 62 + 1), (2 ** 53 + 1, 2 ** 62 + 1),
                         (-2 ** 63 + 1, 2 ** 63 - 2), (-2 ** 70, 2 ** 53 + 3)):
        got = mx.nd.clip(_nd(x), a_min, a_max).asnumpy()
        want = np.clip(x, max(a_min, -2 ** 63), min(a_max, 2 ** 63 - 1))   # NumPy in int64
        np.testing.assert_array_equal(got, want)


def test_bool_data():
    t = _nd(np.array([True, False]))
    np.testing.assert_array_equal(mx.nd.clip(t, 0.5, 2).asnumpy(), [True, True])
    np.testing.assert_array_equal(mx.nd.clip(t, -1, 0.5).asnumpy(), [False, False])
    np.testing.assert_array_equal(mx.nd.clip(t, -1, 2).asnumpy(), [True, False])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_bounds_that_overflow_the_dtype(dtype):
    big = float(np.finfo(dtype).max)
    over = big * 1.01 if dtype != "float64" else 10 ** 309
    x = _nd(np.array([-1.0, 0.5, 3.0], dtype))
    with pytest.raises(MXNetError, match=rf"clip: a_min={re.escape(str(over))} is above the "
                                         rf"largest {dtype}"):
        mx.nd.clip(x, over, math.inf)
    with pytest.raises(MXNetError, match=rf"clip: a_max=-{re.escape(str(over))} is below the "
                                         rf"smallest {dtype}"):
        mx.nd.clip(x, -math.inf, -over)
    # beyond the range on the harmless side, or infinite: fine
    np.testing.assert_array_equal(mx.nd.clip(x, -over, over).asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(mx.nd.clip(x, math.inf, math.inf).asnumpy(),
                                  np.full(3, np.inf, dtype))


def test_bad_bounds():
    x = mx.nd.array([1.0, 2.0])
    for a_min, a_max, pattern in ((2, 1, "a_min must not exceed a_max, got a_min=2, a_max=1"),
                                  (math.nan, 1, "a_min and a_max must not be NaN"),
                                  ("zero", 1, "a_min must be a real number"),
                                  (0, None, "a_max must be a real number")):
        with pytest.raises(MXNetError, match="clip: " + pattern):
            mx.nd.clip(x, a_min, a_max)


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from(INTS + ("bool",)), seed=st.integers(0, 2 ** 32 - 1),
       a=st.one_of(st.integers(-2 ** 40, 2 ** 40), st.floats(-1e6, 1e6), st.floats(-300, 300)),
       b=st.one_of(st.integers(-2 ** 40, 2 ** 40), st.floats(-1e6, 1e6), st.floats(-300, 300)))
def test_clip_integer_data_random_bounds(dtype, seed, a, b):
    a_min, a_max = min(a, b), max(a, b)
    lo, hi = _limits(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(lo, hi, 50, endpoint=True).astype(dtype)
    if a_min > hi or a_max < lo:
        with pytest.raises(MXNetError, match="clip: a_m(in|ax)=.* cannot hold"):
            mx.nd.clip(_nd(x), a_min, a_max)
        return
    if math.ceil(max(a_min, lo)) > math.floor(min(a_max, hi)):
        with pytest.raises(MXNetError, match=r"clip: no \w+ value lies in"):
            mx.nd.clip(_nd(x), a_min, a_max)
        return
    np.testing.assert_array_equal(mx.nd.clip(_nd(x), a_min, a_max).asnumpy(),
                                  oracle(x, a_min, a_max))
