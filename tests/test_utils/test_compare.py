"""Tolerances per dtype and the comparisons of mxlite.test_utils (MXNet's semantics)."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.test_utils import (almost_equal, assert_allclose, assert_almost_equal,
                               assert_almost_equal_ignore_nan, assert_almost_equal_with_err,
                               collapse_sum_like, compare_ndarray_tuple, default_atols,
                               default_numeric_eps, default_rtols, get_atol, get_rtol,
                               get_tolerance, get_tols, locationError, np_reduce, same,
                               same_array)


@pytest.mark.parametrize("dtype, rtol, atol", [(np.float16, 1e-2, 1e-1), (np.float32, 1e-4, 1e-3),
                                               (np.float64, 1e-5, 1e-20), (np.int32, 0, 0),
                                               (np.uint8, 0, 0), (np.bool_, 0, 0)])
def test_default_tolerances_per_dtype(dtype, rtol, atol):
    assert default_rtols()[np.dtype(dtype)] == rtol
    assert default_atols()[np.dtype(dtype)] == atol
    x = np.zeros(2, dtype=dtype)
    assert get_tols(x, x, None, None) == (rtol, atol)
    assert get_tolerance(mx.nd.array(x, dtype=dtype), None, default_rtols()) == rtol


def test_tolerance_rules():
    half, double = np.zeros(1, np.float16), np.zeros(1, np.float64)
    assert get_tols(half, double, None, None) == (1e-2, 1e-1)       # the looser of the two
    assert get_tols(half, double, 0.5, None) == (0.5, 1e-1)         # a number wins
    assert get_tols(double, double, {np.dtype(np.float64): 3e-3}, None) == (3e-3, 1e-20)
    assert get_tols(1.0, 2, None, None) == (1e-5, 1e-20)            # Python numbers: float64/int
    assert get_rtol() == 1e-5 and get_atol() == 1e-20 and get_rtol(0.3) == 0.3
    assert get_atol(dtype=np.float16) == 1e-1
    assert default_numeric_eps()[np.dtype(np.float32)] == 2.0 ** -9
    d = default_rtols()
    d[np.dtype(np.float32)] = 1.0                                   # a fresh dict each call
    assert default_rtols()[np.dtype(np.float32)] == 1e-4
    with pytest.raises(MXNetError, match="complex64"):
        get_tols(np.zeros(1, np.complex64), np.zeros(1, np.complex64), None, None)


def test_float32_default_tolerance_boundary():
    b = np.array([1000.0], dtype=np.float32)
    inside = b + np.float32(0.9 * (1e-3 + 1e-4 * 1000))    # atol + rtol * |b| = 0.101
    outside = b + np.float32(1.2 * (1e-3 + 1e-4 * 1000))
    assert_almost_equal(inside, b)
    with pytest.raises(AssertionError):
        assert_almost_equal(outside, b)


def test_failure_names_the_worst_element_and_share():
    a = np.zeros((3, 4), dtype=np.float64)
    b = a.copy()
    b[1, 2], b[2, 0] = 1.0, 0.5
    with pytest.raises(AssertionError) as err:
        assert_almost_equal(mx.nd.array(a, dtype="float64"), b, names=("got", "want"))
    text = str(err.value)
    assert "Location of maximum error: (1, 2)" in text
    assert "got=0.00000000, want=1.00000000" in text
    assert "mismatch 16.666667%" in text          # 2 of 12 elements


def test_inputs_and_special_values():
    a = mx.nd.array([1.0, 2.0])
    assert_almost_equal(a, [1.0, 2.0])
    assert_almost_equal(np.array([np.inf, -np.inf]), np.array([np.inf, -np.inf]))
    with pytest.raises(AssertionError):
        assert_almost_equal(np.array([np.nan]), np.array([np.nan]))
    assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), equal_nan=True)
    assert_almost_equal(np.ones((2, 3)), np.ones(3))           # broadcasting by default
    with pytest.raises(AssertionError, match="shape"):
        assert_almost_equal(np.ones((2, 3)), np.ones(3), use_broadcast=False)
    with pytest.raises(AssertionError, match="broadcast"):
        assert_almost_equal(np.ones(2), np.ones(3))
    with pytest.raises(AssertionError):
        assert_almost_equal(np.array([True, False]), np.array([True, True]))
    with pytest.raises(AssertionError):            # integers compare exactly
        assert_almost_equal(np.array([3], np.int32), np.array([4], np.int32))


def test_almost_equal_uses_float64_defaults():
    x = np.float32([1.0])
    assert almost_equal(x, x * (1 + 5e-6))
    assert not almost_equal(x, x + 1e-3)         # float64's 1e-5 rtol, not float32's
    assert almost_equal(x, x + 1e-3, rtol=1e-2)
    assert not almost_equal(np.ones(2), np.ones(3))
    assert_allclose(np.array([1.0]), np.array([1.0 + 1e-8]))
    assert_allclose(np.array([np.nan]), np.array([np.nan]))


def test_error_rate_and_nan_ignoring():
    a, b = np.zeros(10), np.zeros(10)
    b[0] = 1.0
    assert_almost_equal_with_err(a, b, etol=0.15)      # 10% mismatch allowed
    with pytest.raises(AssertionError):
        assert_almost_equal_with_err(a, b, etol=0.05)
    c = a.copy()
    c[3] = np.nan
    assert_almost_equal_ignore_nan(c, a)
    with pytest.raises(AssertionError):
        assert_almost_equal_ignore_nan(c, b)


def test_same_and_same_array():
    a = mx.nd.array([[1e-20, np.inf], [np.nan, 0.0]])
    assert same(np.arange(3), np.arange(3)) and not same(np.arange(3), np.arange(4))
    assert same(mx.nd.array([1, 2]), np.array([1, 2], np.float32))
    assert same_array(a, a)
    b = a.copy()
    assert not same_array(a, b)
    scalar = mx.nd.array(np.float32(3))
    assert same_array(scalar, scalar) and scalar.asnumpy() == 3        # 0-d arrays too
    got = a.asnumpy()
    assert got[0, 0] == np.float32(1e-20) and np.isinf(got[0, 1]) and np.isnan(got[1, 0])


def test_compare_ndarray_tuple():
    t = (mx.nd.ones(2), (mx.nd.zeros(1), None))
    compare_ndarray_tuple(t, (np.ones(2), (np.zeros(1), np.ones(1))))
    compare_ndarray_tuple(None, t)
    with pytest.raises(AssertionError):
        compare_ndarray_tuple(t, (np.ones(2), (np.ones(1), None)))


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, True), ((0, 2), False),
                                            ([-1], True)])
def test_np_reduce_matches_numpy(axis, keepdims):
    x = np.arange(24.0).reshape(2, 3, 4)
    want = np.sum(x, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)
    np.testing.assert_array_equal(np_reduce(x, axis, keepdims, np.sum), want)


def test_collapse_sum_like():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(collapse_sum_like(a, (3, 1)), a.sum(axis=(0, 2))[:, None])
    np.testing.assert_array_equal(collapse_sum_like(a, (1, 1, 4)), a.sum(axis=(0, 1))[None, None])
    assert collapse_sum_like(np.zeros((0, 3)), (1, 3)).tolist() == [[0.0, 0.0, 0.0]]
    # booleans count (NumPy's sum): a broadcast boolean factor's gradient sums to 2, not True
    assert collapse_sum_like(np.ones((3, 2), bool), (3, 1)).tolist() == [[2], [2], [2]]
    with pytest.raises(MXNetError, match="does not broadcast"):
        collapse_sum_like(a, (2, 4))


def test_location_error_text():
    a, b = np.array([[1.0, 2.0]]), np.array([[1.0, 3.0]])
    assert locationError(a, b, (0, 1), ("x", "y"), maxError=True) == \
        "Location of maximum error: (0, 1), x=2.00000000, y=3.00000000"
