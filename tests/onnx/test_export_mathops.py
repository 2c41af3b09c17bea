"""ONNX export of the element-wise math of ``translations/mathops.py`` on one-op graphs
(MXNet's rounding halves, mod signs, hypot without overflow, gamma functions by series),
run in onnxruntime and compared with ``mx.nd``; the expected values of the rules that
differ from ONNX's operators are also checked against NumPy / closed forms."""
import math

import numpy as np
import pytest

from test_export_ops import normal, positive
from test_export_ops import test_one_op_graph_runs_in_onnxruntime_as_in_mxlite as _run_one

CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.49999997, 3.7, -3.2, 0.0],
                  np.float32)
for name in ("round", "rint", "fix", "trunc"):
    case(name, lambda F, x, n=name: getattr(F, n)(x), halves)
    case(name + "_2d", lambda F, x, n=name: getattr(F, n)(x), normal(3, 4) * 4)
for name in ("log2", "log10", "gammaln", "gamma"):
    case(name, lambda F, x, n=name: getattr(F, n)(x), positive(3, 4) * 3, rtol=1e-4)
case("log2_exact", lambda F, x: F.log2(x), np.array([1, 2, 8, 0.25], np.float32))
case("gammaln_negative", lambda F, x: F.gammaln(x),
     np.array([-0.5, -1.5, -2.7, 0.1, 0.5, 1.0, 2.0, 10.5, 40.0], np.float32), rtol=1e-4)
case("gamma_negative", lambda F, x: F.gamma(x),
     np.array([-0.5, -1.5, -2.7, 0.1, 0.5, 1.0, 5.0, 12.5], np.float32), rtol=1e-4)
for name in ("cbrt", "rcbrt", "degrees", "radians"):
    case(name, lambda F, x, n=name: getattr(F, n)(x), normal(3, 4) * 5, rtol=1e-5)
    case(name + "_3d", lambda F, x, n=name: getattr(F, n)(x), normal(2, 2, 3), rtol=1e-5)
case("hard_sigmoid", lambda F, x: F.hard_sigmoid(x), normal(4, 5) * 4)
case("hard_sigmoid_attrs", lambda F, x: F.hard_sigmoid(x, alpha=0.7, beta=0.1), normal(2, 3, 3))
case("smooth_l1", lambda F, x: F.smooth_l1(x), normal(4, 5) * 2)
case("smooth_l1_sigma", lambda F, x: F.smooth_l1(x, scalar=2.5), normal(3, 7))
case("softmin", lambda F, x: F.softmin(x), normal(3, 5))
case("softmin_axis_t", lambda F, x: F.softmin(x, axis=0, temperature=2.0), normal(4, 3, 2))
signs = (np.array([-5.5, 5.0, -5.0, 5.0, 7.25, -0.0, 3.0], np.float32),
         np.array([3.0, -3.0, -3.0, 3.0, 2.0, 3.0, -1.5], np.float32))
case("broadcast_mod_signs", lambda F, a, b: F.broadcast_mod(a, b), *signs)
case("broadcast_mod_bcast", lambda F, a, b: F.broadcast_mod(a, b), normal(2, 3, 4) * 5,
     np.array([[1.5], [-2.0], [0.7]], np.float32))
case("_mod_scalar", lambda F, x: F._internal._mod_scalar(x, scalar=-2.5), normal(3, 4) * 5)
case("_mod_scalar_pos", lambda F, x: F._internal._mod_scalar(x, scalar=3.0), normal(5) * 5)
case("_rmod_scalar", lambda F, x: F._internal._rmod_scalar(x, scalar=7.0), signs[1])
case("_rmod_scalar_neg", lambda F, x: F._internal._rmod_scalar(x, scalar=-4.0),
     positive(2, 3) * 3)
huge = (np.array([3e30, 0.0, -5.0, 1e-30], np.float32), np.array([4e30, 0.0, 12.0, 0.0],
                                                                 np.float32))
case("broadcast_hypot_range", lambda F, a, b: F.broadcast_hypot(a, b), *huge)
case("broadcast_hypot_bcast", lambda F, a, b: F.broadcast_hypot(a, b), normal(3, 4), normal(4))
case("_hypot_scalar", lambda F, x: F._internal._hypot_scalar(x, scalar=-1.5), normal(3, 3))
case("_hypot_scalar_zero", lambda F, x: F._internal._hypot_scalar(x, scalar=0.0),
     np.array([0.0, -2.0, 3.0], np.float32))
truth = (np.array([[0, 2, 0, -0.5]], np.float32), np.array([[3, 0, 0, 0.25]], np.float32))
for short in ("and", "or", "xor"):
    case(f"broadcast_logical_{short}", lambda F, a, b, s=short: getattr(
        F, f"broadcast_logical_{s}")(a, b), *truth)
    case(f"broadcast_logical_{short}_bcast", lambda F, a, b, s=short: getattr(
        F, f"broadcast_logical_{s}")(a, b), np.round(normal(2, 3)), np.array([0, 1, 0],
                                                                             np.float32))
    case(f"_logical_{short}_scalar", lambda F, x, s=short: getattr(
        F._internal, f"_logical_{s}_scalar")(x, scalar=0.5), truth[0])
    case(f"_logical_{short}_scalar_zero", lambda F, x, s=short: getattr(
        F._internal, f"_logical_{s}_scalar")(x, scalar=0.0), truth[1])
case("logical_not", lambda F, x: F.logical_not(x), truth[0])
case("logical_not_3d", lambda F, x: F.logical_not(x), np.round(normal(2, 2, 2)))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_math_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    _run_one(fn, inputs, rtol, tmp_path)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_math_graph_in_other_dtypes(fn, inputs, rtol, dtype, tmp_path):
    """float64 and integers (values scaled and rounded; a zero divisor of an integer mod
    gives 0): onnxruntime's missing kernels are its limit, a skip."""
    import mxlite as mx
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    if dtype != "float64":
        inputs = [np.round(a * 3).astype(dtype) for a in inputs]
    else:
        inputs = [a.astype(dtype) for a in inputs]
    try:
        _run_one(fn, inputs, rtol, tmp_path)
    except OrtMissing as e:
        pytest.skip(f"onnxruntime has no kernel: {str(e)[:120]}")
    except mx.MXNetError as e:
        pytest.skip(f"mxlite refuses the dtype: {str(e)[:120]}")


def test_the_reference_rules_hold_against_numpy():
    """The rules the compositions reproduce, against NumPy and closed forms (so the
    mxlite side the tests compare with is itself right)."""
    import mxlite as mx
    x = mx.nd.array(halves)
    away = np.sign(halves) * np.floor(np.abs(halves).astype(np.float64) + 0.5)
    away[np.abs(halves) == np.float32(0.49999997)] = 0
    np.testing.assert_array_equal(mx.nd.round(x).asnumpy(), away)
    rint = [-3, -2, -1, 0, 1, 2, 0, -0, 4, -3, 0]
    np.testing.assert_array_equal(mx.nd.rint(x).asnumpy(), rint)
    a, b = signs
    np.testing.assert_array_equal(mx.nd.broadcast_mod(mx.nd.array(a), mx.nd.array(b))
                                  .asnumpy(), np.remainder(a, b))
    g = mx.nd.gamma(mx.nd.array([0.5, -0.5, 5.0])).asnumpy()
    np.testing.assert_allclose(g, [math.sqrt(math.pi), -2 * math.sqrt(math.pi), 24.0],
                               rtol=1e-6)


def test_gamma_poles_and_zero_signs(tmp_path):
    """Gamma at 0 and -0 is an infinity of the zero's sign, at a negative integer NaN."""
    x = np.array([0.0, -0.0, -1.0, -3.0, 2.0], np.float32)
    _run_one(lambda F, v: F.gamma(v), [x], 1e-5, tmp_path)


@pytest.mark.parametrize("values", [
    np.linspace(-0.9999, 0.9999, 41, dtype=np.float32).reshape(41),
    np.array([[-1.0, 1.0, 0.0], [1.5, np.nan, 1 - 2 ** -24], [-1e-7, 0.3, -0.99999]],
             np.float32)], ids=["grid", "edges"])
def test_erfinv(values, tmp_path):
    """Within float32 accuracy of mxlite's erfinv, inf at +-1, NaN outside [-1, 1]."""
    _run_one(lambda F, v: F.erfinv(v), [values], 2e-6, tmp_path)


def test_erfinv_inverts_erf_by_numpy_closed_form():
    """The reference side: erf(erfinv(y)) = y (erf from math, independent of mxlite)."""
    import mxlite as mx
    y = np.linspace(-0.99, 0.99, 23)
    x = mx.nd.erfinv(mx.nd.array(y, dtype="float64")).asnumpy()
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=1e-12, atol=1e-15)


specials = np.array([[1.0, np.inf, -np.inf], [np.nan, 0.0, -2.0]], np.float32)
CONTRIB = [
    ("isposinf", lambda F, x: F.contrib.isposinf(x), [specials]),
    ("isneginf", lambda F, x: F.contrib.isneginf(x), [specials]),
    ("isposinf_int", lambda F, x: F.contrib.isposinf(x), [np.arange(4, dtype=np.int32)]),
    ("round_ste", lambda F, x: F.contrib.round_ste(x), [halves]),
    ("round_ste_2d", lambda F, x: F.contrib.round_ste(x), [normal(3, 4) * 4]),
    ("sign_ste", lambda F, x: F.contrib.sign_ste(x), [normal(3, 4)]),
    ("sign_ste_zero", lambda F, x: F.contrib.sign_ste(x), [np.array([0.0, -3.0], np.float32)]),
    ("div_sqrt_dim", lambda F, x: F.contrib.div_sqrt_dim(x), [normal(2, 3, 4)]),
    ("div_sqrt_dim_5", lambda F, x: F.contrib.div_sqrt_dim(x), [normal(5)]),
    ("quadratic", lambda F, x: F.contrib.quadratic(x, a=1.5, b=-2.0, c=0.5), [normal(3, 4)]),
    ("quadratic_default", lambda F, x: F.contrib.quadratic(x), [normal(2, 2)]),
    ("has_nan", lambda F, x: F._internal._has_nan(x), [specials]),
    ("has_nan_none", lambda F, x: F._internal._has_nan(x), [normal(3, 2)]),
    ("has_inf", lambda F, x: F._internal._has_inf(x), [specials]),
    ("has_inf_none", lambda F, x: F._internal._has_inf(x), [np.array([np.nan], np.float32)]),
    ("all_finite", lambda F, x: F.contrib.all_finite(x), [normal(3, 2)]),
    ("all_finite_two", lambda F, x, y: F.contrib.all_finite(x, y, num_arrays=2),
     [normal(3), specials]),
    ("all_finite_int", lambda F, x, y: F.contrib.all_finite(x, y, num_arrays=2),
     [np.arange(3, dtype=np.int32), normal(2)]),
    ("allclose", lambda F, a, b: F.contrib.allclose(a, b), [specials, specials.copy()]),
    ("allclose_no_nan", lambda F, a, b: F.contrib.allclose(a, b, equal_nan=False),
     [specials, specials.copy()]),
    ("allclose_tol", lambda F, a, b: F.contrib.allclose(a, b, rtol=0.1, atol=0.0),
     [np.array([1.0, 2.0], np.float32), np.array([1.05, 2.1], np.float32)]),
    ("allclose_far", lambda F, a, b: F.contrib.allclose(a, b),
     [np.array([1.0, np.inf], np.float32), np.array([1.0, 5.0], np.float32)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in CONTRIB])
def test_contrib_math_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, tmp_path):
    _run_one(fn, inputs, 1e-5, tmp_path)


@pytest.mark.parametrize("values", [
    positive(3, 4) * 5,
    np.array([1.0, 0.5, -0.5, 0.0, -2.0, 10.0, 1e-3, -3.7, 40.0, 0.6], np.float32)],
    ids=["positive", "negative_and_poles"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_digamma(values, dtype, tmp_path):
    """polygamma n=0 (digamma) against mxlite: poles NaN, negative x by reflection."""
    _run_one(lambda F, v: F._internal._polygamma(v, n=0), [values.astype(dtype)], 1e-5,
             tmp_path)


def test_digamma_closed_forms():
    """The reference side: psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 log 2."""
    import mxlite as mx
    got = mx.nd._internal._polygamma(mx.nd.array([1.0, 0.5], dtype="float64"), n=0).asnumpy()
    euler = 0.5772156649015329
    np.testing.assert_allclose(got, [-euler, -euler - 2 * math.log(2)], rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polygamma_of_higher_order(n, dtype, tmp_path):
    """psi_n against mxlite, positive and negative x (reflection), poles NaN."""
    x = np.array([0.3, 1.0, 2.5, 7.0, 30.0, -0.5, -2.3, -7.75, 0.0, -3.0], dtype)
    _run_one(lambda F, v: F._internal._polygamma(v, n=n), [x], 1e-5, tmp_path)


def test_cot_derivative_polynomials_by_closed_form():
    """d/dx cot(pi x) = -pi (1 + cot^2), d2 = 2 pi^2 cot (1 + cot^2)."""
    from mxlite.onnx.translations.mathops import _cot_derivative_poly
    assert _cot_derivative_poly(1) == [-1.0, 0.0, -1.0]
    assert _cot_derivative_poly(2) == [0.0, 2.0, 0.0, 2.0]
