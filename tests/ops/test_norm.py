"""BatchNorm, LayerNorm, InstanceNorm, L2Normalization, Dropout, Embedding: values against
NumPy references written here, train/predict behaviour, masks, gradients, errors."""
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

RNG = np.random.default_rng(1234)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _nd(a, dtype="float64"):
    return mx.nd.array(np.asarray(a), dtype=dtype)


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)


# ---- references ---------------------------------------------------------------------------------
def _bn_ref(x, gamma, beta, mean, var, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    r = lambda v: np.reshape(v, shape)
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def _batch_stats(x, axis):
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    return x.mean(axis=axes), x.var(axis=axes)


# ---- BatchNorm ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((5, 3), 1), ((4, 3, 2, 5), 1), ((2, 4, 3), -1),
                                        ((3, 2, 4), 0)])
def test_batchnorm_training_values_and_moving_update(dtype, shape, axis):
    x = RNG.standard_normal(shape) * 3 + 1
    c = shape[axis]
    gamma, beta = RNG.uniform(0.5, 2, c), RNG.standard_normal(c)
    mm0, mv0 = RNG.standard_normal(c), RNG.uniform(0.5, 2, c)
    mm, mv = _nd(mm0, dtype), _nd(mv0, dtype)
    with mx.autograd.train_mode():
        y, mean, rstd = mx.nd.BatchNorm(_nd(x, dtype), _nd(gamma, dtype), _nd(beta, dtype), mm,
                                        mv, eps=1e-3, momentum=0.8, fix_gamma=False,
                                        axis=axis, output_mean_var=True)
    bm, bv = _batch_stats(x, axis)
    tol = _tol(dtype)
    np.testing.assert_allclose(y.asnumpy(), _bn_ref(x, gamma, beta, bm, bv, 1e-3, axis), **tol)
    np.testing.assert_allclose(mean.asnumpy(), bm, **tol)
    np.testing.assert_allclose(rstd.asnumpy(), 1 / np.sqrt(bv + 1e-3), **tol)   # MXNet: inv std
    np.testing.assert_allclose(mm.asnumpy(), 0.8 * mm0 + 0.2 * bm, **tol)
    np.testing.assert_allclose(mv.asnumpy(), 0.8 * mv0 + 0.2 * bv, **tol)   # biased variance


def test_batchnorm_inference_uses_and_keeps_moving_stats():
    x = RNG.standard_normal((6, 3, 2))
    gamma, beta = RNG.uniform(0.5, 2, 3), RNG.standard_normal(3)
    mm0, mv0 = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    mm, mv = _nd(mm0), _nd(mv0)
    y, mean, rstd = mx.nd.BatchNorm(_nd(x), _nd(gamma), _nd(beta), mm, mv, fix_gamma=False,
                                    output_mean_var=True)
    np.testing.assert_allclose(y.asnumpy(), _bn_ref(x, gamma, beta, mm0, mv0, 1e-3, 1),
                               rtol=1e-12)
    np.testing.assert_allclose(mean.asnumpy(), mm0)
    np.testing.assert_allclose(rstd.asnumpy(), 1 / np.sqrt(mv0 + 1e-3), rtol=1e-12)
    np.testing.assert_array_equal(mm.asnumpy(), mm0)
    np.testing.assert_array_equal(mv.asnumpy(), mv0)
    with mx.autograd.record(train_mode=False):          # recording in predict mode
        mx.nd.BatchNorm(_nd(x), _nd(gamma), _nd(beta), mm, mv)
    np.testing.assert_array_equal(mm.asnumpy(), mm0)


def test_batchnorm_moving_stats_updated_once_per_training_forward():
    x = RNG.standard_normal((8, 2))
    mm, mv = mx.nd.zeros(2, dtype="float64"), mx.nd.ones(2, dtype="float64")
    gamma, beta = mx.nd.ones(2, dtype="float64"), mx.nd.zeros(2, dtype="float64")
    bm, bv = _batch_stats(x, 1)
    expect_m, expect_v = np.zeros(2), np.ones(2)
    xs = _nd(x)
    xs.attach_grad()
    for k in range(3):
        v0 = mm._version[0]
        with mx.autograd.record():
            y = mx.nd.BatchNorm(xs, gamma, beta, mm, mv)
        y.backward()                        # backward does not update them again (MXNet did)
        expect_m = 0.9 * expect_m + 0.1 * bm
        expect_v = 0.9 * expect_v + 0.1 * bv
        np.testing.assert_allclose(mm.asnumpy(), expect_m, rtol=1e-12)
        np.testing.assert_allclose(mv.asnumpy(), expect_v, rtol=1e-12)
        assert mm._version[0] == v0 + 1     # an in-place write: the version moved once


def test_batchnorm_use_global_stats_in_training():
    x = RNG.standard_normal((5, 3))
    mm0, mv0 = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    mm, mv = _nd(mm0), _nd(mv0)
    g = RNG.uniform(0.5, 2, 3)
    with mx.autograd.train_mode():
        y = mx.nd.BatchNorm(_nd(x), _nd(g), mx.nd.zeros(3, dtype="float64"), mm, mv,
                            use_global_stats=True, fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy(), _bn_ref(x, g, np.zeros(3), mm0, mv0, 1e-3, 1),
                               rtol=1e-12)
    np.testing.assert_array_equal(mm.asnumpy(), mm0)
    np.testing.assert_array_equal(mv.asnumpy(), mv0)


def test_batchnorm_fix_gamma_ignores_gamma_and_gives_zero_gradient():
    x = RNG.standard_normal((6, 2))
    gamma = _nd([5.0, -3.0])
    gamma.attach_grad()
    xs = _nd(x)
    with mx.autograd.record():
        y = mx.nd.BatchNorm(xs, gamma, mx.nd.zeros(2, dtype="float64"),
                            mx.nd.zeros(2, dtype="float64"), mx.nd.ones(2, dtype="float64"))
        loss = (y * y * xs).sum()
    bm, bv = _batch_stats(x, 1)
    np.testing.assert_allclose(y.asnumpy(), (x - bm) / np.sqrt(bv + 1e-3), rtol=1e-12)
    loss.backward()
    np.testing.assert_array_equal(gamma.grad.asnumpy(), [0.0, 0.0])


def _bn_grads_ref(x, gamma, gy, eps, train, mean=None, var=None):
    """Hand-derived first-order BatchNorm gradients (axis 1 of a 2-D input)."""
    if train:
        mean, var = x.mean(0), x.var(0)
    r = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * r
    g = gy * gamma
    dx = r * (g - g.mean(0) - xhat * (g * xhat).mean(0)) if train else r * g
    return dx, (gy * xhat).sum(0), gy.sum(0)


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_gradient_formula(train):
    x, gy = RNG.standard_normal((7, 3)), RNG.standard_normal((7, 3))
    gamma, beta = RNG.uniform(0.5, 2, 3), RNG.standard_normal(3)
    mm0, mv0 = RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    args = [_nd(x), _nd(gamma), _nd(beta)]
    for a in args:
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        y = mx.nd.BatchNorm(*args, _nd(mm0), _nd(mv0), fix_gamma=False)
    y.backward(_nd(gy))
    dx, dg, db = _bn_grads_ref(x, gamma, gy, 1e-3, train, mm0, mv0)
    for a, ref in zip(args, (dx, dg, db)):
        np.testing.assert_allclose(a.grad.asnumpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("heads", ["output and mean", "mean only"])
def test_batchnorm_gradient_through_the_mean_output(heads):
    """A head gradient on the batch mean (output_mean_var) adds w / n to every element of
    its channel; the hidden outputs nothing sent a gradient to count as zero."""
    x, gy, w = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 3)), RNG.standard_normal(3)
    gamma, beta = RNG.uniform(0.5, 2, 3), RNG.standard_normal(3)
    args = [_nd(x), _nd(gamma), _nd(beta)]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y, mean, _ = mx.nd.BatchNorm(*args, _nd(np.zeros(3)), _nd(np.ones(3)),
                                     fix_gamma=False, output_mean_var=True)
        loss = (mean * _nd(w)).sum()
        if heads == "output and mean":
            loss = loss + (y * _nd(gy)).sum()
    loss.backward()
    dx, dg, db = (np.zeros_like(x), np.zeros(3), np.zeros(3)) if heads == "mean only" else \
        _bn_grads_ref(x, gamma, gy, 1e-3, True, None, None)
    np.testing.assert_allclose(args[0].grad.asnumpy(), dx + w / 6, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(args[1].grad.asnumpy(), dg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(args[2].grad.asnumpy(), db, rtol=1e-10, atol=1e-12)


def test_batchnorm_backward_makes_no_zeros_of_the_data_size(monkeypatch):
    """The hidden xhat output gets no head gradient: its FGradient takes None (the record's
    ``none_ograds``), not a data-sized array of zeros to add."""
    made = []
    zeros = mx.nd.zeros

    def spy(shape, *args, **kwargs):
        made.append(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
        return zeros(shape, *args, **kwargs)
    monkeypatch.setattr(mx.nd, "zeros", spy)
    x = mx.nd.array(RNG.standard_normal((4, 3, 5, 5)), dtype="float32")
    gamma = mx.nd.ones(3)
    for a in (x, gamma):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.BatchNorm(x, gamma, mx.nd.zeros(3), mx.nd.zeros(3), mx.nd.ones(3),
                            fix_gamma=False)
    made.clear()
    y.backward()
    assert x.grad.shape == x.shape and (4, 3, 5, 5) not in made, made


def _channels_last_bn_step(x, gy):
    """y, dx, dgamma, dbeta of a training BatchNorm over the last axis of ``x``."""
    c, dt = x.shape[-1], x.dtype
    args = [mx.nd.array(x, dtype=dt), mx.nd.array(np.linspace(0.5, 2, c), dtype=dt),
            mx.nd.zeros(c, dtype=dt)]
    for a in args:
        a.attach_grad()
    with mx.autograd.record(train_mode=True):
        y = mx.nd.BatchNorm(*args, mx.nd.zeros(c, dtype=dt), mx.nd.ones(c, dtype=dt),
                            fix_gamma=False, axis=-1)
    y.backward(mx.nd.array(gy, dtype=dt))
    return [y.asnumpy()] + [a.grad.asnumpy() for a in args]


@pytest.mark.parametrize("rows", [7, 300, 5000])      # one row chunk, two, twenty
def test_channels_last_batchnorm_sums_wide_rows_in_chunks(rows):
    """BatchNorm over the last axis of (rows, 3, 40) data: one group of wide rows, whose
    column statistics and gradient are summed over row chunks in parallel; the values and
    gradients are those of the float64 formulas."""
    x = RNG.standard_normal((rows, 3, 40)) * 2 + 1
    gy = RNG.standard_normal(x.shape)
    y, dx, dg, db = _channels_last_bn_step(x, gy)
    flat, gflat = x.reshape(-1, 40), gy.reshape(-1, 40)
    mean, var = flat.mean(0), flat.var(0)
    gamma = np.linspace(0.5, 2, 40)
    want_y = _bn_ref(flat, gamma, np.zeros(40), mean, var, 1e-3, 1)
    np.testing.assert_allclose(y.reshape(-1, 40), want_y, rtol=1e-10, atol=1e-12)
    want = _bn_grads_ref(flat, gamma, gflat, 1e-3, True, None, None)
    for got, ref in zip((dx.reshape(-1, 40), dg, db), want):
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-11)


@pytest.mark.cpu_only
def test_channels_last_batchnorm_does_not_depend_on_the_thread_count():
    """Its row chunks depend on the shape alone: one OpenMP thread gives the same bits."""
    script = ("import sys, numpy as np\n"
              "sys.path.insert(0, 'tests/ops')\n"
              "from test_norm import _channels_last_bn_step\n"
              "rng = np.random.default_rng(9)\n"
              "x, gy = rng.standard_normal((4, 30, 30, 48)), rng.standard_normal((4, 30, 30, 48))\n"
              "out = _channels_last_bn_step(x.astype(np.float32), gy.astype(np.float32))\n"
              "sys.stdout.write(repr([o.tobytes().hex() for o in out]))\n")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    one = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    rng = np.random.default_rng(9)
    x, gy = rng.standard_normal((4, 30, 30, 48)), rng.standard_normal((4, 30, 30, 48))
    out = _channels_last_bn_step(x.astype(np.float32), gy.astype(np.float32))
    assert one == repr([o.tobytes().hex() for o in out])


def test_batchnorm_layer_used_twice_in_one_recorded_pass():
    """The moving statistics change between the two calls; the tape never saved them, so
    backward works (a GAN critic applied to real and fake batches)."""
    mm, mv = mx.nd.zeros(2, dtype="float64"), mx.nd.ones(2, dtype="float64")
    gamma, beta = _nd([1.5, 0.5]), _nd([0.0, 1.0])
    gamma.attach_grad()
    a, b = _nd(RNG.standard_normal((4, 2))), _nd(RNG.standard_normal((4, 2)))
    with mx.autograd.record():
        loss = (mx.nd.BatchNorm(a, gamma, beta, mm, mv, fix_gamma=False) ** 2).sum() + \
            (mx.nd.BatchNorm(b, gamma, beta, mm, mv, fix_gamma=False) ** 3).sum()
    loss.backward()
    assert np.isfinite(gamma.grad.asnumpy()).all()


def test_batchnorm_visible_outputs():
    args = [mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.zeros(3), mx.nd.zeros(3), mx.nd.ones(3)]
    assert isinstance(mx.nd.BatchNorm(*args), mx.nd.NDArray)
    assert len(mx.nd.BatchNorm(*args, output_mean_var=True)) == 3
    op = mx.nd.BatchNorm.op
    attrs = op.parse_attrs({})
    assert op.list_arguments(attrs) == ("data", "gamma", "beta")
    assert op.list_auxiliary_states(attrs) == ("moving_mean", "moving_var")
    assert op.list_outputs(attrs)[:3] == ["output", "mean", "var"]


@pytest.mark.parametrize("shapes,kwargs,match", [
    ([(2, 3), (4,), (3,), (3,), (3,)], {}, "gamma must have shape \\(3,\\)"),
    ([(2, 3), (3,), (3,), (3,), (2,)], {}, "moving_var must have shape"),
    ([(2, 3), (3,), (3, 1), (3,), (3,)], {}, "beta must have shape"),
    ([(2, 3), (3,), (3,), (3,), (3,)], {"axis": 2}, "axis=2 is out of range"),
    ([(2, 3), (2,), (2,), (2,), (2,)], {"axis": -3}, "axis=-3"),
])
def test_batchnorm_errors(shapes, kwargs, match):
    with pytest.raises(MXNetError, match="BatchNorm: " + match):
        mx.nd.BatchNorm(*[mx.nd.ones(s) for s in shapes], **kwargs)


def test_batchnorm_dtype_errors():
    with pytest.raises(MXNetError, match="BatchNorm: gamma has dtype float64"):
        mx.nd.BatchNorm(mx.nd.ones((2, 3)), mx.nd.ones(3, dtype="float64"), mx.nd.zeros(3),
                        mx.nd.zeros(3), mx.nd.ones(3))
    with pytest.raises(MXNetError, match="BatchNorm: data must be float32 or float64"):
        mx.nd.BatchNorm(mx.nd.ones((2, 3), dtype="int32"), mx.nd.ones(3), mx.nd.zeros(3),
                        mx.nd.zeros(3), mx.nd.ones(3))
    with pytest.raises(MXNetError, match="BatchNorm: momentum"):
        mx.nd.BatchNorm(mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.zeros(3), mx.nd.zeros(3),
                        mx.nd.ones(3), momentum=1.5)


# ---- LayerNorm / InstanceNorm ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((4, 7), -1), ((3, 5, 2), 1), ((3, 5, 2), 0),
                                        ((6,), 0), ((2, 3, 300), -1)])
def test_layernorm_values(dtype, shape, axis):
    x = RNG.standard_normal(shape) * 10 + 100          # a large mean: a one-pass sum would
    n = shape[axis]                                     # lose digits in float32
    gamma, beta = RNG.standard_normal(n), RNG.standard_normal(n)
    y, mean, std = mx.nd.LayerNorm(_nd(x, dtype), _nd(gamma, dtype), _nd(beta, dtype),
                                   axis=axis, eps=1e-5, output_mean_var=True)
    m = x.mean(axis=axis, keepdims=True)
    s = np.sqrt(x.var(axis=axis, keepdims=True) + 1e-5)
    pshape = [1] * x.ndim
    pshape[axis] = n
    ref = (x - m) / s * gamma.reshape(pshape) + beta.reshape(pshape)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else _tol(dtype)
    np.testing.assert_allclose(y.asnumpy(), ref, **tol)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-6)
    np.testing.assert_allclose(std.asnumpy(), s, rtol=1e-5)


def test_layernorm_single_output_and_errors():
    y = mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.zeros(3))
    assert isinstance(y, mx.nd.NDArray) and y.shape == (2, 3)
    with pytest.raises(MXNetError, match="LayerNorm: gamma must have shape \\(3,\\)"):
        mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones(2), mx.nd.zeros(3))
    with pytest.raises(MXNetError, match="LayerNorm: axis=2 is out of range"):
        mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.zeros(3), axis=2)


def test_instancenorm_values():
    x = RNG.standard_normal((2, 3, 4, 5))
    gamma, beta = RNG.standard_normal(3), RNG.standard_normal(3)
    y = mx.nd.InstanceNorm(_nd(x), _nd(gamma), _nd(beta), eps=1e-3)
    m = x.mean(axis=(2, 3), keepdims=True)
    v = x.var(axis=(2, 3), keepdims=True)
    ref = (x - m) / np.sqrt(v + 1e-3) * gamma[:, None, None] + beta[:, None, None]
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-12, atol=1e-12)


def test_instancenorm_errors():
    with pytest.raises(MXNetError, match="InstanceNorm: data must have at least 3"):
        mx.nd.InstanceNorm(mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.zeros(3))
    with pytest.raises(MXNetError, match="InstanceNorm: beta must have shape \\(3,\\)"):
        mx.nd.InstanceNorm(mx.nd.ones((2, 3, 4)), mx.nd.ones(3), mx.nd.zeros(4))


def test_layernorm_gradient_formula():
    x, gy = RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6))
    gamma, beta = RNG.standard_normal(6), RNG.standard_normal(6)
    args = [_nd(x), _nd(gamma), _nd(beta)]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LayerNorm(*args, eps=1e-5)
    y.backward(_nd(gy))
    m, v = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    r = 1 / np.sqrt(v + 1e-5)
    xhat = (x - m) * r
    g = gy * gamma
    dx = r * (g - g.mean(1, keepdims=True) - xhat * (g * xhat).mean(1, keepdims=True))
    for a, ref in zip(args, (dx, (gy * xhat).sum(0), gy.sum(0))):
        np.testing.assert_allclose(a.grad.asnumpy(), ref, rtol=1e-10, atol=1e-12)


# ---- L2Normalization ----------------------------------------------------------------------------
@pytest.mark.parametrize("mode,axes", [("instance", (1, 2, 3)), ("channel", (1,)),
                                       ("spatial", (2, 3))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_l2normalization_values(mode, axes, dtype):
    x = RNG.standard_normal((2, 3, 4, 5))
    y = mx.nd.L2Normalization(_nd(x, dtype), mode=mode, eps=1e-6)
    ref = x / np.sqrt((x * x).sum(axis=axes, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y.asnumpy(), ref, **_tol(dtype))


def test_l2normalization_errors():
    with pytest.raises(MXNetError, match="L2Normalization"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode="pixel")
    with pytest.raises(MXNetError, match="L2Normalization: mode='spatial' needs data with at "
                       "least 3 dimensions"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode="spatial")
    with pytest.raises(MXNetError, match="L2Normalization: data must be float32 or float64"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3), dtype="int32"))


# ---- Dropout ------------------------------------------------------------------------------------
def test_dropout_identity_outside_training():
    x = _nd(RNG.standard_normal((3, 4)), "float32")
    y = mx.nd.Dropout(x, p=0.7)
    assert isinstance(y, mx.nd.NDArray)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    with mx.autograd.record(train_mode=False):
        np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.7).asnumpy(), x.asnumpy())


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_mask_statistics(p):
    n = 200_000
    with mx.autograd.train_mode():
        y = mx.nd.Dropout(mx.nd.ones((n,)), p=p).asnumpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / (1 - p), rtol=1e-6)     # survivors scaled
    sigma = np.sqrt(n * p * (1 - p))
    assert abs((~kept).sum() - n * p) < 5 * sigma                    # binomial(n, p) drops
    assert abs(y.mean() - 1.0) < 5 * sigma / n / (1 - p)              # mean preserved


def test_dropout_mode_always_and_p_zero():
    x = mx.nd.ones((1000,))
    assert (mx.nd.Dropout(x, p=0.5, mode="always").asnumpy() == 0).any()
    with mx.autograd.train_mode():
        np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.0).asnumpy(), x.asnumpy())


def test_dropout_axes_share_the_mask():
    with mx.autograd.train_mode():
        y = mx.nd.Dropout(mx.nd.ones((3, 200, 4)), p=0.5, axes=(0, 2)).asnumpy()
    assert (y == y[:1, :, :1]).all()
    assert 0 < (y[0, :, 0] == 0).sum() < 200


def test_dropout_seed_reproducible():
    x = mx.nd.ones((50,))
    mx.random.seed(7)
    a = mx.nd.Dropout(x, mode="always").asnumpy()
    b = mx.nd.Dropout(x, mode="always").asnumpy()
    mx.random.seed(7)
    np.testing.assert_array_equal(mx.nd.Dropout(x, mode="always").asnumpy(), a)
    assert (a != b).any()


def test_dropout_gradient_uses_the_forward_mask_at_every_order():
    x = _nd(RNG.uniform(0.5, 1.5, (400,)))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.4)
        z = (y * y * y).sum()                         # z = sum(mask^3 x^3)
        (g,) = mx.autograd.grad(z, [x], create_graph=True)
        h = g.sum()
    mask = y.asnumpy() / x.asnumpy()
    assert set(np.unique(mask.round(12))) == {0.0, round(1 / 0.6, 12)}
    xv = x.asnumpy()
    np.testing.assert_allclose(g.asnumpy(), 3 * mask ** 3 * xv ** 2, rtol=1e-12)
    h.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * mask ** 3 * xv, rtol=1e-12)


@pytest.mark.parametrize("kwargs,match", [({"p": 1.0}, "p must be in \\[0, 1\\)"),
                                          ({"p": -0.1}, "p must be in"),
                                          ({"axes": (2,)}, "axes=2 is out of range"),
                                          ({"mode": "sometimes"}, "mode")])
def test_dropout_errors(kwargs, match):
    with pytest.raises(MXNetError, match="Dropout: .*" + match):
        mx.nd.Dropout(mx.nd.ones((2, 3)), **kwargs)


# ---- Embedding ----------------------------------------------------------------------------------
def test_embedding_values_and_gradient():
    w = RNG.standard_normal((5, 3))
    idx = np.array([[4, 0, 2], [2, 2, 1]], dtype=np.float64)
    weight = _nd(w, "float32")
    weight.attach_grad()
    gy = RNG.standard_normal((2, 3, 3))
    with mx.autograd.record():
        out = mx.nd.Embedding(_nd(idx, "float32"), weight, input_dim=5, output_dim=3)
    np.testing.assert_allclose(out.asnumpy(), w.astype(np.float32)[idx.astype(int)])
    out.backward(_nd(gy, "float32"))
    ref = np.zeros((5, 3))
    np.add.at(ref, idx.astype(int), gy)                 # repeated rows accumulate
    np.testing.assert_allclose(weight.grad.asnumpy(), ref, rtol=1e-6, atol=1e-6)


def test_embedding_errors():
    w = mx.nd.ones((4, 2))
    with pytest.raises(MXNetError, match="Embedding: index 4.0 at position 1"):
        mx.nd.Embedding(mx.nd.array([1, 4]), w, input_dim=4, output_dim=2)
    with pytest.raises(MXNetError, match="Embedding: index -1.0"):
        mx.nd.Embedding(mx.nd.array([-1]), w, input_dim=4, output_dim=2)
    with pytest.raises(MXNetError, match="Embedding: weight must have shape"):
        mx.nd.Embedding(mx.nd.array([1]), w, input_dim=3, output_dim=2)
    with pytest.raises(MXNetError, match="Embedding: weight has dtype float32; parameter "
                       "dtype is float64"):
        mx.nd.Embedding(mx.nd.array([1]), w, input_dim=4, output_dim=2, dtype="float64")
    with pytest.raises(MXNetError, match="Embedding: missing required parameter"):
        mx.nd.Embedding(mx.nd.array([1]), w)


# ---- random shapes and axes (hypothesis) --------------------------------------------------------
from hypothesis import given, settings                      # noqa: E402
from hypothesis import strategies as st                     # noqa: E402


@st.composite
def _shape_and_axis(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return shape, axis


@settings(max_examples=40, deadline=None)
@given(_shape_and_axis(), st.sampled_from(["float32", "float64"]), st.booleans())
def test_layernorm_and_batchnorm_random_shapes(shape_axis, dtype, train):
    shape, axis = shape_axis
    rng = np.random.default_rng(zlib.crc32(repr((shape, axis)).encode()))
    x = rng.standard_normal(shape) * 4 - 2
    n = shape[axis]
    gamma, beta = rng.standard_normal(n), rng.standard_normal(n)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    y = mx.nd.LayerNorm(_nd(x, dtype), _nd(gamma, dtype), _nd(beta, dtype), axis=axis)
    m, v = x.mean(axis=axis, keepdims=True), x.var(axis=axis, keepdims=True)
    pshape = [1] * x.ndim
    pshape[axis] = n
    ref = (x - m) / np.sqrt(v + 1e-5) * gamma.reshape(pshape) + beta.reshape(pshape)
    np.testing.assert_allclose(y.asnumpy(), ref, **tol)
    mm0, mv0 = rng.standard_normal(n), rng.uniform(0.5, 2, n)
    mm, mv = _nd(mm0, dtype), _nd(mv0, dtype)
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        y = mx.nd.BatchNorm(_nd(x, dtype), _nd(gamma, dtype), _nd(beta, dtype), mm, mv,
                            axis=axis, fix_gamma=False)
    bm, bv = _batch_stats(x, axis) if train else (mm0, mv0)
    np.testing.assert_allclose(y.asnumpy(), _bn_ref(x, gamma, beta, bm, bv, 1e-3, axis), **tol)
    if train:
        np.testing.assert_allclose(mm.asnumpy(), 0.9 * mm0 + 0.1 * bm, **tol)
        np.testing.assert_allclose(mv.asnumpy(), 0.9 * mv0 + 0.1 * bv, **tol)


def test_dropout_predict_mode_gradient_is_identity():
    x = _nd(RNG.standard_normal((5, 4)))
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        y = mx.nd.Dropout(x, p=0.9)
    y.backward(_nd(np.full((5, 4), 3.0)))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((5, 4), 3.0))


def test_float16_is_refused_clearly():
    with pytest.raises(MXNetError, match="LayerNorm: data must be float32 or float64, got "
                       "float16"):
        mx.nd.LayerNorm(mx.nd.ones((2, 3), dtype="float16"), mx.nd.ones(3, dtype="float16"),
                        mx.nd.zeros(3, dtype="float16"))
    with pytest.raises(MXNetError, match="Dropout: data must be float16, float32 or "
                       "float64, got int32"):
        mx.nd.Dropout(mx.nd.ones((2, 3), dtype="int32"))


@pytest.mark.parametrize("p", [0.3, 0.7, 0.9])
def test_dropout_float16_output_and_mask(p):
    """float16 data (as MXNet): output and hidden mask are float16, the mask is 0 or
    1/(1-p) rounded once to float16, the output the float16 product data * mask, rounded
    once (NumPy's float16 multiply)."""
    x = RNG.uniform(-300, 300, (64, 33)).astype(np.float16)
    y, mask = mx.nd.Dropout(mx.nd.array(x, dtype="float16"), p=p, mode="always",
                            out=[mx.nd.empty(x.shape, dtype="float16"),
                                 mx.nd.empty(x.shape, dtype="float16")])
    assert y.dtype == mask.dtype == np.float16
    m = mask.asnumpy()
    kept = np.float16(1 / (1 - p))
    assert set(np.unique(m).tolist()) == {0.0, float(kept)}
    np.testing.assert_array_equal(y.asnumpy(), x * m)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_float16_keeps_one_minus_p(p):
    """The uniforms stay float32 (24 bits) for float16 data: over 10**6 elements the kept
    fraction is binomial(n, 1 - p) (within 5 sigma), each kept value float16(1/(1-p))."""
    n = 10 ** 6
    with mx.autograd.train_mode():
        y = mx.nd.Dropout(mx.nd.ones((n,), dtype="float16"), p=p).asnumpy()
    assert y.dtype == np.float16
    kept = y != 0
    assert (y[kept] == np.float16(1 / (1 - p))).all()
    assert abs(kept.sum() - n * (1 - p)) < 5 * np.sqrt(n * p * (1 - p))


def test_dropout_float16_identity_outside_training_and_shared_axes():
    x = RNG.standard_normal((3, 200, 4)).astype(np.float16)
    y = mx.nd.Dropout(mx.nd.array(x, dtype="float16"), p=0.5, axes=(0, 2))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y.asnumpy(), x)                   # mode='training'
    with mx.autograd.train_mode():
        m = mx.nd.Dropout(mx.nd.ones(x.shape, dtype="float16"), p=0.5, axes=(0, 2)).asnumpy()
    assert (m == m[:1, :, :1]).all()                                 # one draw per (., j, .)
    assert set(np.unique(m).tolist()) == {0.0, 2.0}


def test_dropout_float16_product_rounds_once():
    """Products that land between float16 values round to nearest even, as NumPy's
    float16 multiply (float32 holds the exact product)."""
    x = np.arange(1, 2049, dtype=np.float16)          # every float16 in [1, 2048]
    with mx.autograd.train_mode():
        y, mask = [a.asnumpy() for a in mx.nd.Dropout(
            mx.nd.array(x, dtype="float16"), p=0.3,
            out=[mx.nd.empty(x.shape, dtype="float16"), mx.nd.empty(x.shape, dtype="float16")])]
    want = (x.astype(np.float64) * mask.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(y, want)


def test_dropout_float16_gradient_is_head_times_mask():
    x = mx.nd.array(RNG.uniform(-2, 2, (300,)), dtype="float16")
    x.attach_grad()
    head = RNG.uniform(-2, 2, (300,)).astype(np.float16)
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.4)
    y.backward(mx.nd.array(head, dtype="float16"))
    mask = np.where(y.asnumpy() == 0, np.float16(0), np.float16(1 / 0.6))
    mask[(x.asnumpy() == 0)] = np.nan            # a zero input hides its mask value
    ok = ~np.isnan(mask)
    assert x.grad.dtype == np.float16
    np.testing.assert_array_equal(x.grad.asnumpy()[ok], (head * mask)[ok])


# ---- _norm_project (the fused backward core) ------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,kw,red", [((4, 3, 5), {"axis": 1, "exclude": True}, (0, 2)),
                                          ((4, 3, 5), {"axis": (1,)}, (1,)),
                                          ((4, 3, 5), {"axis": (2,)}, (2,)),
                                          ((2, 3, 4, 5), {"axis": (2, 3)}, (2, 3))])
def test_norm_project_values(dtype, shape, kw, red):
    g, xh = RNG.standard_normal(shape), RNG.standard_normal(shape)
    kept = tuple(1 if i in red else d for i, d in enumerate(shape))
    r, a, b = RNG.uniform(0.5, 2, kept), RNG.standard_normal(kept), RNG.standard_normal(kept)
    t = 0.7
    ref = r * (g - t * (g.mean(axis=red, keepdims=True)
                        + xh * (g * xh).mean(axis=red, keepdims=True))) + xh * a + b
    out = mx.nd._internal._norm_project(_nd(g, dtype), _nd(xh, dtype), _nd(r, dtype),
                                        _nd([t], dtype), _nd(a, dtype), _nd(b, dtype), **kw)
    np.testing.assert_allclose(out.asnumpy(), ref, **_tol(dtype))


def test_norm_project_errors():
    x = mx.nd.ones((2, 3, 4))
    with pytest.raises(MXNetError, match="_norm_project: rstd must have shape \\(1, 3, 1\\)"):
        mx.nd._internal._norm_project(x, x, mx.nd.ones((3,)), mx.nd.ones(1),
                                      mx.nd.ones((1, 3, 1)), mx.nd.ones((1, 3, 1)), axis=1,
                                      exclude=True)
    y, k = mx.nd.ones((2, 3, 4, 5)), mx.nd.ones((1, 3, 1, 5))
    with pytest.raises(MXNetError, match="_norm_project: the reduced axes \\(0, 2\\)"):
        mx.nd._internal._norm_project(y, y, k, mx.nd.ones(1), k, k, axis=(0, 2))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_dropout_mask_drawn_in_blocks_equals_one_draw(dtype, monkeypatch):
    """A mask larger than the uniform block is drawn block by block from the same stream
    positions: the very mask of one draw of the whole (no float32 array of the data's size)."""
    from mxlite.ops import norm
    x = mx.nd.ones((5, 3000), dtype=dtype)

    def draw(block):
        monkeypatch.setattr(norm, "_MASK_BLOCK", block)
        mx.random.seed(11)
        return mx.nd.Dropout(x, p=0.4, mode="always").asnumpy()
    whole, blocked = draw(1 << 30), draw(4096)
    np.testing.assert_array_equal(blocked, whole)
    kept = whole != 0
    assert 0.5 < kept.mean() < 0.7
    np.testing.assert_array_equal(whole[kept], np.asarray(1 / 0.6, dtype))


@pytest.mark.parametrize("axis, shape", [(0, (4, 6)), (1, (3, 4, 5)), (-1, (6, 4))])
@pytest.mark.parametrize("alias", ["ograd", "data"])
def test_layer_norm_grad_in_place_over_an_input(axis, shape, alias):
    """``_layer_norm_grad`` may write its data gradient over ograd or data (``out=`` that
    input, as a memory plan does): dgamma and dbeta, which read ograd, are the same as
    with separate outputs, along any axis."""
    rng = np.random.default_rng(4)
    x = mx.nd.array(rng.standard_normal(shape))
    g = mx.nd.array(rng.standard_normal(shape))
    q = shape[axis]
    gamma = mx.nd.array(rng.standard_normal(q))
    mean = x.mean(axis=axis, keepdims=True)
    std = mx.nd.sqrt(((x - mean) ** 2).mean(axis=axis, keepdims=True) + 1e-5)
    gm, gs = (mx.nd.array(rng.standard_normal(mean.shape)) for _ in range(2))
    want = mx.nd._internal._layer_norm_grad(g, x, gamma, mean, std, gm, gs, axis=axis)
    g2, x2 = g.copy(), x.copy()
    target = g2 if alias == "ograd" else x2
    dgamma, dbeta = mx.nd.zeros((q,)), mx.nd.zeros((q,))
    mx.nd._internal._layer_norm_grad(g2, x2, gamma, mean, std, gm, gs, axis=axis,
                                     out=(target, dgamma, dbeta))
    for got, ref in zip((target, dgamma, dbeta), want):
        np.testing.assert_array_equal(got.asnumpy(), ref.asnumpy())
