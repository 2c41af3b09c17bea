"""The contiguous-row kernels of LayerNorm and ``_norm_project`` (``mx_norm_rows.h``):
float32 rows summed in float lanes per block and in double across blocks, checked against
float64 NumPy references at lengths around the lane and block sizes, long rows and rows
with a large common offset."""
import numpy as np
import pytest

import mxlite as mx
from mxlite._core import norm as _k
from simd_levels import outputs_at_each_level

# the CPU kernels, called directly (tests/gpu/test_norm_rows_gpu.py checks the GPU's)
pytestmark = pytest.mark.cpu_only

RNG = np.random.default_rng(20261129)
EPS32 = np.finfo(np.float32).eps
# lengths below, at and past the 16 lanes and the 256-element blocks, and long rows
LENGTHS = [1, 3, 15, 16, 17, 255, 256, 257, 1000, 4099, 70001]


def _ln_ref(x, gamma, beta, eps):
    """LayerNorm over the last axis in float64: (y, mean, std)."""
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return (x - mean) / std * gamma + beta, mean, std


def _rows(q, offset, dtype):
    p = max(1, 4096 // q)
    return (RNG.standard_normal((p, q)) * 2.5 + offset).astype(dtype)


@pytest.mark.parametrize("q", LENGTHS)
@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_layer_norm_rows_float32_within_float32_tolerance(q, offset):
    x = _rows(q, offset, np.float32)
    gamma = RNG.uniform(0.5, 1.5, q).astype(np.float32)
    beta = RNG.uniform(-1, 1, q).astype(np.float32)
    y, mean, std = (np.asarray(a) for a in mx.nd.LayerNorm(
        mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(beta), eps=1e-5,
        output_mean_var=True))
    ry, rmean, rstd = _ln_ref(x, gamma.astype(np.float64), beta.astype(np.float64), 1e-5)
    # the float32 mean rounds by eps * |mean| / 2: that, over the std, bounds the shift of
    # every normalised value, plus a few roundings of the affine pass
    scale = np.abs(rmean) / rstd + 1.0
    assert np.all(np.abs(y - ry) <= 8 * EPS32 * scale * (np.abs(ry) + 2)), np.abs(y - ry).max()
    np.testing.assert_allclose(mean, rmean, rtol=2 * EPS32, atol=4 * EPS32 * rstd.max())
    np.testing.assert_allclose(std, rstd, rtol=4 * EPS32 * (1 + offset / 1e3))


@pytest.mark.parametrize("q", [1, 17, 256, 4099])
def test_layer_norm_rows_float64_matches_reference(q):
    x = _rows(q, 3.0, np.float64)
    gamma, beta = RNG.uniform(0.5, 1.5, q), RNG.uniform(-1, 1, q)
    y, mean, std = np.empty_like(x), np.empty(x.shape[0]), np.empty(x.shape[0])
    _k.layer_norm_rows(x, x.shape[0], q, gamma, beta, 1e-3, y, mean, std)
    ry, rmean, rstd = _ln_ref(x, gamma, beta, 1e-3)
    np.testing.assert_allclose(y, ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, rmean[:, 0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(std, rstd[:, 0], rtol=1e-13)


def test_layer_norm_rows_constant_row_and_eps():
    """A constant row has variance 0: y = beta exactly, std = sqrt(eps)."""
    x = np.full((3, 37), 7.25, np.float32)
    gamma, beta = np.ones(37, np.float32), np.arange(37, dtype=np.float32)
    y, mean, std = np.empty_like(x), np.empty(3, np.float32), np.empty(3, np.float32)
    _k.layer_norm_rows(x, 3, 37, gamma, beta, 0.25, y, mean, std)
    assert np.array_equal(y, np.broadcast_to(beta, x.shape))
    assert np.array_equal(mean, np.full(3, 7.25, np.float32))
    assert np.array_equal(std, np.full(3, 0.5, np.float32))


def test_layer_norm_rows_checks_sizes_and_dtypes():
    x = np.zeros((2, 4), np.float32)
    v, s = np.zeros(4, np.float32), np.zeros(2, np.float32)
    with pytest.raises(ValueError, match="layer_norm_rows"):
        _k.layer_norm_rows(x, 2, 4, v, np.zeros(3, np.float32), 1e-5, x.copy(), s, s.copy())
    with pytest.raises(ValueError, match="layer_norm_rows"):
        _k.layer_norm_rows(x, 2, 4, v, v.astype(np.float64), 1e-5, x.copy(), s, s.copy())
    with pytest.raises(TypeError, match="layer_norm_rows"):
        _k.layer_norm_rows(x.astype(np.int32), 2, 4, v, v, 1e-5, x.copy(), s, s.copy())


def _project_ref(g, xh, r, t, a, b):
    g, xh = g.astype(np.float64), xh.astype(np.float64)
    mg = g.mean(axis=1, keepdims=True)
    mgx = (g * xh).mean(axis=1, keepdims=True)
    return r * (g - t * (mg + xh * mgx)) + xh * a + b


@pytest.mark.parametrize("q", LENGTHS)
def test_norm_project_float32_rows_within_float32_tolerance(q):
    p = max(1, 4096 // q)
    g = (RNG.standard_normal((p, q)) + 0.5).astype(np.float32)
    xh = RNG.standard_normal((p, q)).astype(np.float32)
    r, a, b = (RNG.uniform(0.5, 2.0, (p, 1)).astype(np.float32) for _ in range(3))
    out = mx.nd._internal._norm_project(mx.nd.array(g), mx.nd.array(xh), mx.nd.array(r),
                                        mx.nd.ones((1,)), mx.nd.array(a), mx.nd.array(b),
                                        axis=1).asnumpy()
    ref = _project_ref(g, xh, r.astype(np.float64), 1.0, a.astype(np.float64),
                       b.astype(np.float64))
    # each term is O(|g| + |xh|) in size: float32 rounding of a handful of operations
    bound = 16 * EPS32 * (np.abs(g) + np.abs(xh) + 1) * r.max() * 4
    assert np.all(np.abs(out - ref) <= bound), np.abs(out - ref).max()


# ---- _layer_norm_grad: LayerNorm's fused backward ---------------------------------------------
def _lng_ref(gy, x, gamma, mean, std, gm, gs, axis):
    """The backward of y = (x - mean) / std * gamma + beta through mean and std, in float64
    from the textbook formula (dx = (G - mean(G) - xhat mean(G xhat)) / std + the heads of
    the mean and std outputs spread over the axis)."""
    f = lambda a: np.asarray(a, np.float64)
    gy, x, mean, std, gm, gs = map(f, (gy, x, mean, std, gm, gs))
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    n = x.shape[axis]
    xhat = (x - mean) / std
    g = gy * f(gamma).reshape(shape)
    dx = (g - g.mean(axis, keepdims=True) - xhat * (g * xhat).mean(axis, keepdims=True)) / std
    dx += gm / n + gs * xhat / n
    red = tuple(i for i in range(x.ndim) if i != axis)
    return dx, (gy * xhat).sum(red), gy.sum(red)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((64, 256), 1), ((130, 17), -1), ((3, 70001), 1),
                                        ((4, 5, 6), 1), ((2, 3, 33), 2), ((7,), 0)])
def test_layer_norm_grad_matches_the_float64_formula(dtype, shape, axis):
    ax = axis % len(shape)
    kept = tuple(1 if i == ax else d for i, d in enumerate(shape))
    x = RNG.standard_normal(shape) * 2 + 0.5
    mean = x.mean(axis=ax, keepdims=True)
    std = np.sqrt(x.var(axis=ax, keepdims=True) + 1e-5)
    gy = RNG.standard_normal(shape)
    gamma = RNG.uniform(0.5, 1.5, shape[ax])
    gm, gs = RNG.standard_normal(kept), RNG.standard_normal(kept)
    args = [a.astype(dtype) for a in (gy, x, gamma, mean, std, gm, gs)]
    got = [o.asnumpy() for o in mx.nd._internal._layer_norm_grad(
        *(mx.nd.array(a, dtype=dtype) for a in args), axis=axis)]
    want = _lng_ref(*args, ax)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    for name, g, w in zip(("dx", "dgamma", "dbeta"), got, want):
        scale = 1.0 if name == "dx" else np.sqrt(x.size / shape[ax])   # sums of many terms
        np.testing.assert_allclose(g, w, rtol=tol["rtol"], atol=tol["atol"] * scale,
                                   err_msg=name)


def test_layer_norm_grad_is_layernorms_gradient():
    """LayerNorm's backward (through its fused op) against the float64 formula, the mean
    and std outputs' heads included."""
    x = RNG.standard_normal((5, 9))
    gamma, beta = RNG.uniform(0.5, 1.5, 9), RNG.standard_normal(9)
    heads = [RNG.standard_normal(s) for s in ((5, 9), (5, 1), (5, 1))]
    xs, gs, bs = (mx.nd.array(a, dtype="float64") for a in (x, gamma, beta))
    for a in (xs, gs, bs):
        a.attach_grad()
    with mx.autograd.record():
        outs = mx.nd.LayerNorm(xs, gs, bs, output_mean_var=True, eps=1e-3)
    mx.autograd.backward(outs, [mx.nd.array(h, dtype="float64") for h in heads])
    mean, std = x.mean(1, keepdims=True), np.sqrt(x.var(1, keepdims=True) + 1e-3)
    # the std head also reaches x through std = sqrt(var + eps): d std / dx = xhat / n
    dx, dgamma, dbeta = _lng_ref(heads[0], x, gamma, mean, std, heads[1], heads[2], 1)
    np.testing.assert_allclose(xs.grad.asnumpy(), dx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gs.grad.asnumpy(), dgamma, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bs.grad.asnumpy(), dbeta, rtol=1e-10, atol=1e-12)


def test_layer_norm_grad_errors():
    x = mx.nd.ones((2, 3))
    s = mx.nd.ones((2, 1))
    with pytest.raises(mx.base.MXNetError, match="_layer_norm_grad: ograd must have the shape"):
        mx.nd._internal._layer_norm_grad(mx.nd.ones((3, 2)), x, mx.nd.ones(3), s, s, s, s)
    with pytest.raises(mx.base.MXNetError, match="_layer_norm_grad: gamma must have shape"):
        mx.nd._internal._layer_norm_grad(x, x, mx.nd.ones(2), s, s, s, s)
    with pytest.raises(mx.base.MXNetError, match="_layer_norm_grad: std must have shape"):
        mx.nd._internal._layer_norm_grad(x, x, mx.nd.ones(3), s, mx.nd.ones((1, 3)), s, s)
    with pytest.raises(mx.base.MXNetError, match="_layer_norm_grad: .*float32 or float64"):
        i = lambda sh: mx.nd.ones(sh, dtype="int32")
        mx.nd._internal._layer_norm_grad(i((2, 3)), i((2, 3)), i(3), i((2, 1)), i((2, 1)),
                                         i((2, 1)), i((2, 1)))


_LEVEL_SCRIPT = r"""
import sys
import numpy as np
import mxlite as mx
z = np.load(sys.argv[1])
x, gy, gamma = (mx.nd.array(z[k]) for k in ("x", "gy", "gamma"))
beta = mx.nd.array(z["beta"])
for a in (x, gamma, beta):
    a.attach_grad()
with mx.autograd.record():
    y, mean, std = mx.nd.LayerNorm(x, gamma, beta, output_mean_var=True)
y.backward(gy)
# BatchNorm in training: channels of 1327 elements per sample (_norm_project's channel rows)
xb = mx.nd.array(z["x"][:36].reshape(4, 9, -1))
c1, c0 = mx.nd.ones((9,)), mx.nd.zeros((9,))
xb.attach_grad()
with mx.autograd.record():
    yb = mx.nd.BatchNorm(xb, c1, c0, c0.copy(), c1.copy(), fix_gamma=False)
yb.backward(mx.nd.array(z["gy"][:36].reshape(4, 9, -1)))
np.savez(sys.argv[2], y=y.asnumpy(), mean=mean.asnumpy(), std=std.asnumpy(),
         dx=x.grad.asnumpy(), dgamma=gamma.grad.asnumpy(), dbeta=beta.grad.asnumpy(),
         bn=yb.asnumpy(), bn_dx=xb.grad.asnumpy())
"""


def test_simd_levels_agree_bit_for_bit(tmp_path):
    """The AVX2 bodies hold the same 16 lanes as the SSE ones (two 8-wide registers for four
    4-wide ones) and the same operations per element: LayerNorm's forward and fused
    backward, and BatchNorm's backward (_norm_project over channels), equal the baseline
    level's (MXLITE_SIMD=baseline) bit for bit, over rows with tails past the lanes, a block
    and a vector."""
    q = 1000 + 16 * 20 + 7
    z = {"x": (RNG.standard_normal((37, q)) * 3 + 5).astype(np.float32),
         "gy": RNG.standard_normal((37, q)).astype(np.float32),
         "gamma": RNG.uniform(0.5, 1.5, q).astype(np.float32),
         "beta": RNG.standard_normal(q).astype(np.float32)}
    outs = outputs_at_each_level(tmp_path, _LEVEL_SCRIPT, z)
    for key in ("y", "mean", "std", "dx", "dgamma", "dbeta", "bn", "bn_dx"):
        assert np.array_equal(outs[0][key], outs[1][key]), key
