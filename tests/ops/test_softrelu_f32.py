"""float32 softrelu log(1 + e^x) and its derivative sigmoid (mx_act.h ``mx_softrelu_f32``,
``mx_d_softrelu_f32``): computed in float32 (before: double through libm, one element at a
time), checked against float64 NumPy over a sweep of every float32 bit pattern at a stride
and at the special values."""
import numpy as np
import pytest

import mxlite as mx
from f32_kernels import run_kernel, ulp_error

_FLT_MIN = 2.0 ** -126


def _exact(kind, x):
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if kind == "softrelu":
            return np.maximum(v, 0.0) + np.log1p(np.exp(-np.abs(v)))
        e = np.exp(-np.abs(v))
        return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))




@pytest.mark.cpu_only
@pytest.mark.parametrize("kind,ulps", [("softrelu", 4), ("d_softrelu", 3)])
def test_float32_softrelu_kernels_against_float64(kind, ulps):
    """A few ulps wherever the result is a normal float, below FLT_MIN absolutely where it
    underflows (e^x flushes to 0 below x = -87.3)."""
    x = np.arange(0, 2 ** 32, 331, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    got, want = run_kernel(kind, x), _exact(kind, x)
    normal = np.abs(want) >= _FLT_MIN
    u = ulp_error(got, want)
    worst = np.argmax(np.where(normal, u, 0))
    assert u[normal].max() <= ulps, (kind, x[worst], got[worst], want[worst])
    assert np.abs(got.astype(np.float64) - want)[~normal].max() < _FLT_MIN


@pytest.mark.cpu_only
@pytest.mark.parametrize("kind,want", [
    ("softrelu", [np.log(2.0), np.log(2.0), np.inf, 0.0, np.nan, 3e38]),
    ("d_softrelu", [0.5, 0.5, 1.0, 0.0, np.nan, 1.0]),
])
def test_float32_softrelu_special_values(kind, want):
    """+-0, +-inf, NaN and the largest floats: no overflow, NaN kept."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38], np.float32)
    np.testing.assert_allclose(run_kernel(kind, x), np.array(want, np.float32), rtol=1e-7, atol=0)


@pytest.mark.cpu_only
def test_float32_softrelu_parallel_chunks_match_serial():
    """Over PARALLEL_MIN the chunks in parallel give the bits of small serial calls."""
    x = (np.random.default_rng(5).standard_normal(200003) * 30).astype(np.float32)
    for kind in ("softrelu", "d_softrelu"):
        whole = run_kernel(kind, x)
        parts = np.concatenate([run_kernel(kind, x[i:i + 1000]) for i in range(0, x.size, 1000)])
        np.testing.assert_array_equal(whole.view(np.int32), parts.view(np.int32))


def test_activation_softrelu_op_and_gradient_in_float32():
    """Activation(softrelu) and its autograd gradient (sigmoid) through the op."""
    x = np.linspace(-90.0, 90.0, 20001).astype(np.float32)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Activation(a, act_type="softrelu")
    y.backward(mx.nd.ones(a.shape))
    for got, kind in ((y.asnumpy(), "softrelu"), (a.grad.asnumpy(), "d_softrelu")):
        want = _exact(kind, x)
        normal = np.abs(want) >= _FLT_MIN
        assert ulp_error(got[normal], want[normal]).max() <= 4, kind
