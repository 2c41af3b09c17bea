"""float32 GELU and its derivatives (mx_act.h ``mx_gelu_f32``, ``mx_d_gelu_f32``,
``mx_d2_gelu_f32``): computed in float32, checked against float64 SciPy over a sweep of every
float32 bit pattern at a stride (tails, subnormals and huge values included) and at the
special values."""
import numpy as np
import pytest
import scipy.special as sp

import mxlite as mx
from f32_kernels import run_kernel, ulp_error

_C = 1.0 / np.sqrt(2.0 * np.pi)
_FLT_MIN = 2.0 ** -126


def _sweep():
    """Every 331st float32 bit pattern that is finite (about 13M points, both signs)."""
    x = np.arange(0, 2 ** 32, 331, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return x[np.isfinite(x)]


def _exact(kind, x):
    """The float64 value at float32 points: x Phi(x), Phi + x phi, phi (2 - x^2)."""
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(-0.5 * v * v)
        return {"gelu": v * sp.ndtr(v),
                "d_gelu": sp.ndtr(v) + np.where(e == 0, 0.0, v * _C * e),
                "d2_gelu": np.where(e == 0, 0.0, _C * e * (2.0 - v * v))}[kind]




# the worst relative error (ulps) away from the derivative's zeros, the absolute error near them
@pytest.mark.cpu_only
@pytest.mark.parametrize("kind,ulps,near_zero,abs_tol", [
    ("gelu", 8, (), 0.0),
    ("d_gelu", 12, ((-1.0, -0.5),), 2e-7),          # d gelu / dx = 0 at x = -0.7518
    ("d2_gelu", 5, ((-1.6, -1.2), (1.2, 1.6)), 2e-7),   # phi (2 - x^2) = 0 at +-sqrt 2
])
def test_float32_gelu_kernels_against_float64(kind, ulps, near_zero, abs_tol):
    """Within a few float32 ulps of the float64 value wherever the result is a normal float
    (before: 1 ulp, at 3x to 4x the time, in double), within 2**-126 absolutely where it
    underflows, and within ``abs_tol`` absolutely near a zero of the derivative (no float32
    formula of Phi + x phi keeps relative accuracy where the two terms cancel)."""
    x = _sweep()
    got, want = run_kernel(kind, x), _exact(kind, x)
    err = np.abs(got.astype(np.float64) - want)
    normal = np.abs(want) >= _FLT_MIN
    near = np.zeros(x.shape, bool)
    for lo, hi in near_zero:
        near |= (x >= lo) & (x < hi)
    u = ulp_error(got, want)
    far = normal & ~near
    worst = np.argmax(np.where(far, u, 0))
    assert u[far].max() <= ulps, (kind, x[worst], got[worst], want[worst])
    assert err[~normal].max() < _FLT_MIN
    if near.any():
        assert err[near].max() <= abs_tol


@pytest.mark.cpu_only
def test_float32_gelu_left_tail_keeps_relative_accuracy():
    """Deep in the left tail (x down to -13, results down to 1e-37) the error stays a few
    ulps: -x^2 / 2 is carried in two parts (rounded once, x^2 alone costs 40 ulp at x = -9),
    and the exponential is scaled so results just above FLT_MIN are not flushed."""
    x = np.linspace(-13.1, -5.0, 200001).astype(np.float32)
    for kind, ulps in (("gelu", 8), ("d_gelu", 12), ("d2_gelu", 5)):
        got, want = run_kernel(kind, x), _exact(kind, x)
        assert (np.abs(want) >= _FLT_MIN).all()
        assert ulp_error(got, want).max() <= ulps, kind


@pytest.mark.cpu_only
@pytest.mark.parametrize("kind,want", [
    ("gelu", [0.0, -0.0, np.inf, -0.0, np.nan]),
    ("d_gelu", [0.5, 0.5, 1.0, 0.0, np.nan]),
    ("d2_gelu", [2 * _C, 2 * _C, 0.0, 0.0, np.nan]),
])
def test_float32_gelu_special_values(kind, want):
    """+-0, +-inf and NaN: gelu(-inf) = -0, gelu(inf) = inf, gelu(-0) = -0, NaN stays NaN;
    the derivatives' limits at +-inf."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    got = run_kernel(kind, x)
    want = np.array(want, np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=0)
    if kind == "gelu":
        assert np.signbit(got[1]) and np.signbit(got[3]) and not np.signbit(got[0])


@pytest.mark.cpu_only
def test_float32_gelu_parallel_chunks_match_serial():
    """A large array (several 16384-element chunks, over PARALLEL_MIN) gives the bits of the
    same elements computed one small call at a time."""
    x = (np.random.default_rng(3).standard_normal(200003) * 5).astype(np.float32)
    for kind in ("gelu", "d_gelu", "d2_gelu"):
        whole = run_kernel(kind, x)
        parts = np.concatenate([run_kernel(kind, x[i:i + 1000]) for i in range(0, x.size, 1000)])
        np.testing.assert_array_equal(whole.view(np.int32), parts.view(np.int32))


def test_leaky_gelu_op_and_gradient_use_the_float32_kernels():
    """LeakyReLU(gelu) forward and its autograd gradient in float32 agree with float64 SciPy
    to a few ulps (the gradient is g * _gelu_derivative(x) and g = 1 here)."""
    x = np.linspace(-9.0, 9.0, 10001).astype(np.float32)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(a, act_type="gelu")
    y.backward(mx.nd.ones(a.shape))
    assert ulp_error(y.asnumpy(), _exact("gelu", x)).max() <= 8
    g, want = a.grad.asnumpy(), _exact("d_gelu", x)
    far = (x < -1.0) | (x >= -0.5)
    assert ulp_error(g[far], want[far]).max() <= 12
    assert np.abs(g[~far] - want[~far]).max() <= 2e-7
