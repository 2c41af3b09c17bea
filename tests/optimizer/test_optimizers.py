"""mx.optimizer's multi-precision training and the optimizers MXNet 1.9.1 registers beyond
SGD/Adam & co. (LAMB, FTML, LARS, LBSGD, DCASGD, GroupAdaGrad), against NumPy references
written from MXNet's documented update rules."""
import math

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError

RNG = np.random.default_rng(77)
SHAPE = (3, 4)
W0 = RNG.standard_normal(SHAPE)
GRADS = [RNG.standard_normal(SHAPE) for _ in range(4)]

MXNET_1_9_1_OPTIMIZERS = {"adadelta", "adagrad", "adam", "adamax", "ccsgd", "dcasgd", "ftml",
                          "ftrl", "groupadagrad", "lamb", "lars", "lbsgd", "nadam", "nag",
                          "rmsprop", "sgd", "sgld", "signum", "test"}


def _run(opt, w0=W0, grads=GRADS, dtype="float64", index=0):
    w = mx.nd.array(w0, dtype=dtype)
    state = opt.create_state_multi_precision(index, w)
    for g in grads:
        opt.update_multi_precision(index, w, mx.nd.array(g, dtype=dtype), state)
    return w, state


def test_every_mxnet_optimizer_is_registered():
    assert MXNET_1_9_1_OPTIMIZERS <= set(mx.optimizer.Optimizer.opt_registry)
    assert type(mx.optimizer.create("groupadagrad")) is mx.optimizer.contrib.GroupAdaGrad


# ---- multi_precision -------------------------------------------------------------------------
@pytest.mark.parametrize("name, kwargs, master_first", [
    ("sgd", dict(momentum=0.9, wd=0.01), False), ("sgd", dict(), False),
    ("nag", dict(momentum=0.9, clip_gradient=0.5), False), ("lars", dict(momentum=0.9), False),
    ("adam", dict(wd=0.01), True), ("adamax", dict(), True), ("ftml", dict(), True),
    ("lamb", dict(wd=0.01), True), ("rmsprop", dict(centered=True), True),
])
def test_multi_precision_updates_the_float32_master_copy(name, kwargs, master_first):
    """The master copy follows exactly the float32 run with the float16 gradients; the weight
    is its cast."""
    opt16 = mx.optimizer.create(name, multi_precision=True, **kwargs)
    opt32 = mx.optimizer.create(name, **kwargs)
    w16 = mx.nd.array(W0, dtype="float16")
    w32 = w16.astype("float32")
    state16 = opt16.create_state_multi_precision(0, w16)
    state32 = opt32.create_state_multi_precision(0, w32)
    master = state16[0] if master_first else state16[1]
    assert master.dtype == np.float32 and master is not w32
    np.testing.assert_array_equal(master.asnumpy(), w32.asnumpy())
    for g in GRADS:
        g16 = mx.nd.array(g, dtype="float16")
        opt16.update_multi_precision(0, w16, g16, state16)
        opt32.update_multi_precision(0, w32, g16.astype("float32"), state32)
        assert w16.dtype == np.float16
        np.testing.assert_array_equal(master.asnumpy(), w32.asnumpy())
        np.testing.assert_array_equal(w16.asnumpy(), w32.asnumpy().astype(np.float16))


def test_multi_precision_state_layouts_are_mxnets():
    w16 = mx.nd.ones(SHAPE, dtype="float16")
    mom, master = mx.optimizer.SGD(momentum=0.9, multi_precision=True) \
        .create_state_multi_precision(0, w16)
    assert (mom.dtype, master.dtype) == (np.float32, np.float32)
    none, master = mx.optimizer.NAG(multi_precision=True).create_state_multi_precision(0, w16)
    assert none is None and master.dtype == np.float32
    master, (mean, var) = mx.optimizer.Adam(multi_precision=True) \
        .create_state_multi_precision(0, w16)
    assert master.dtype == mean.dtype == var.dtype == np.float32
    # float32 weights keep the plain state
    assert mx.optimizer.SGD(multi_precision=True).create_state_multi_precision(
        0, mx.nd.ones(SHAPE)) is None


def test_float16_without_multi_precision_or_master_copy_raises():
    w16 = mx.nd.ones((2,), dtype="float16")
    with pytest.raises(MXNetError, match="Adam: weight 0 is float16.*multi_precision=True"):
        mx.optimizer.Adam().create_state_multi_precision(0, w16)
    with pytest.raises(MXNetError, match="Adam.update_multi_precision.*weight32"):
        mx.optimizer.Adam(multi_precision=True).update_multi_precision(0, w16, w16, None)
    with pytest.raises(MXNetError, match="SGD.update_multi_precision.*weight32"):
        mx.optimizer.SGD(multi_precision=True).update_multi_precision(0, w16, w16, None)


# ---- LAMB ------------------------------------------------------------------------------------
def _lamb_reference(lr, wd, beta1=0.9, beta2=0.999, eps=1e-6, lower=None, upper=None,
                    bias_correction=True, rescale=1.0, clip=None):
    w, m, v = W0.copy(), np.zeros(SHAPE), np.zeros(SHAPE)
    for t, g in enumerate(GRADS, 1):
        g = rescale * g
        if clip:
            g = np.clip(g, -clip, clip)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        mh, vh = (m / (1 - beta1 ** t), v / (1 - beta2 ** t)) if bias_correction else (m, v)
        step = mh / (np.sqrt(vh) + eps) + wd * w
        r1, r2 = np.linalg.norm(w), np.linalg.norm(step)
        r1 = max(r1, lower) if lower else r1
        r1 = min(r1, upper) if upper else r1
        w = w - lr * (r1 / r2 if r1 and r2 else 1.0) * step
    return w


@pytest.mark.parametrize("kwargs", [dict(), dict(wd=0.05, clip_gradient=0.5, rescale_grad=0.5),
                                    dict(bias_correction=False, lower_bound=3.0),
                                    dict(upper_bound=0.5, wd=0.01)])
def test_lamb_matches_numpy(kwargs):
    w, _ = _run(mx.optimizer.LAMB(learning_rate=0.01, **kwargs))
    want = _lamb_reference(0.01, kwargs.get("wd", 0.0), lower=kwargs.get("lower_bound"),
                           upper=kwargs.get("upper_bound"),
                           bias_correction=kwargs.get("bias_correction", True),
                           rescale=kwargs.get("rescale_grad", 1.0),
                           clip=kwargs.get("clip_gradient"))
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-10)


def test_lamb_aggregated_lists_equal_one_by_one():
    opt_a, opt_b = mx.optimizer.LAMB(wd=0.01), mx.optimizer.LAMB(wd=0.01)
    ws_a = [mx.nd.array(W0), mx.nd.array(W0[0])]
    ws_b = [w.copy() for w in ws_a]
    st_a = [opt_a.create_state_multi_precision(i, w) for i, w in enumerate(ws_a)]
    st_b = [opt_b.create_state_multi_precision(i, w) for i, w in enumerate(ws_b)]
    for g in GRADS:
        grads = [mx.nd.array(g), mx.nd.array(g[0])]
        opt_a.update_multi_precision([0, 1], ws_a, grads, st_a)
        for i in range(2):
            opt_b.update_multi_precision(i, ws_b[i], grads[i], st_b[i])
    for a, b in zip(ws_a, ws_b):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


# ---- FTML ------------------------------------------------------------------------------------
def test_ftml_matches_numpy():
    lr, b1, b2, eps, wd = 0.05, 0.6, 0.999, 1e-8, 0.01
    w, d, v, z = W0.copy(), np.zeros(SHAPE), np.zeros(SHAPE), np.zeros(SHAPE)
    for t, g in enumerate(GRADS, 1):
        g = np.clip(0.5 * g + wd * w, -0.8, 0.8)
        v = b2 * v + (1 - b2) * g * g
        d_t = (1 - b1 ** t) / lr * (np.sqrt(v / (1 - b2 ** t)) + eps)
        z = b1 * z + (1 - b1) * g - (d_t - b1 * d) * w
        d, w = d_t, -z / d_t
    got, _ = _run(mx.optimizer.FTML(learning_rate=lr, wd=wd, rescale_grad=0.5,
                                    clip_gradient=0.8))
    np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-10)


# ---- DCASGD ----------------------------------------------------------------------------------
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_dcasgd_matches_numpy(momentum):
    lr, wd, lamda = 0.1, 0.01, 0.04
    w, prev, mom = W0.copy(), W0.copy(), np.zeros(SHAPE)
    for g in GRADS:
        step = -lr * (g + wd * w + lamda * g * g * (w - prev))
        mom = momentum * mom + step if momentum else step
        prev, w = w, w + mom
    got, (_, previous) = _run(mx.optimizer.DCASGD(learning_rate=lr, wd=wd, momentum=momentum))
    np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-12)
    np.testing.assert_allclose(previous.asnumpy(), prev, rtol=1e-12)


# ---- LARS ------------------------------------------------------------------------------------
def test_lars_scales_the_rate_by_the_norm_ratio_except_for_biases():
    lr, eta, wd = 0.5, 0.01, 0.001
    opt = mx.optimizer.LARS(learning_rate=lr, eta=eta, wd=wd, rescale_grad=0.5,
                            param_idx2name={0: "fc_weight", 1: "fc_bias"})
    w, _ = _run(opt, index=0, grads=GRADS[:1])
    g = 0.5 * GRADS[0]
    rate = lr * eta * np.linalg.norm(W0) / (np.linalg.norm(g) + wd * np.linalg.norm(W0))
    np.testing.assert_allclose(w.asnumpy(), (1 - rate * wd) * W0 - rate * g, rtol=1e-6)
    b, _ = _run(opt, index=1, grads=GRADS[:1])      # a bias: plain SGD, and no weight decay
    np.testing.assert_allclose(b.asnumpy(), W0 - lr * g, rtol=1e-12)


# ---- LBSGD -----------------------------------------------------------------------------------
def test_lbsgd_steps_with_the_mean_of_batch_scale_gradients():
    opt = mx.optimizer.LBSGD(learning_rate=0.1, batch_scale=2, warmup_epochs=1,
                             updates_per_epoch=4, warmup_strategy="linear")
    w = mx.nd.array(W0)
    state = opt.create_state(0, w)
    opt.update(0, w, mx.nd.array(GRADS[0]), state)
    np.testing.assert_array_equal(w.asnumpy(), W0.astype(np.float32))  # accumulating
    opt.update(0, w, mx.nd.array(GRADS[1]), state)
    mult = 1.0 + (2 - 1) * 2 / 4                # linear warm-up after 2 of 4 updates
    want = W0 - 0.1 * mult * (GRADS[0] + GRADS[1]) / 2
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(MXNetError, match="LBSGD: warmup_strategy"):
        mx.optimizer.LBSGD(warmup_strategy="cubic")


# ---- GroupAdaGrad ----------------------------------------------------------------------------
def test_group_adagrad_has_one_rate_per_row():
    lr, eps = 0.1, 1e-5
    w, hist = W0.copy(), np.zeros((SHAPE[0], 1))
    for g in GRADS:
        hist += np.mean(g * g, axis=1, keepdims=True)
        w = w - lr * g / np.sqrt(hist + eps)
    got, state = _run(mx.optimizer.create("groupadagrad", learning_rate=lr))
    assert state.shape == (SHAPE[0], 1)
    np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-12)
    with pytest.raises(MXNetError, match="GroupAdaGrad: weight decay"):
        _run(mx.optimizer.contrib.GroupAdaGrad(wd=0.1))
    with pytest.raises(MXNetError, match="GroupAdaGrad: weight 0 must be 2-D"):
        mx.optimizer.contrib.GroupAdaGrad().create_state(0, mx.nd.ones((3,)))


# ---- states files --------------------------------------------------------------------------
def _structure(state):
    """The nesting of a state with each array replaced by its dtype name."""
    if isinstance(state, (tuple, list)):
        return type(state).__name__, [_structure(s) for s in state]
    return None if state is None else str(state.dtype)


@pytest.mark.parametrize("name, kwargs", [
    ("sgd", dict(momentum=0.9)), ("nag", dict()), ("adam", dict(wd=0.01)),
    ("lamb", dict(wd=0.01)), ("ftml", dict()), ("rmsprop", dict(centered=True))])
def test_multi_precision_states_round_trip_without_pickle(name, kwargs):
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, multi_precision=True,
                                                           **kwargs))
    ws = [mx.nd.array(W0, dtype="float16"), mx.nd.array(W0[0], dtype="float16")]

    def train(upd, weights, grads):
        for g in grads:
            upd([0, 1], [mx.nd.array(g, dtype="float16"),
                         mx.nd.array(g[0], dtype="float16")], weights)

    train(updater, ws, GRADS[:2])
    blob = updater.get_states(dump_optimizer=True)
    assert blob[:1] != b"\x80"                              # not a pickle
    clone = mx.optimizer.get_updater(mx.optimizer.SGD())
    clone.set_states(blob)
    assert clone.optimizer.multi_precision
    for i in (0, 1):
        assert _structure(clone.states[i]) == _structure(updater.states[i])
    ws2 = [w.copy() for w in ws]
    train(updater, ws, GRADS[2:])
    train(clone, ws2, GRADS[2:])
    for a, b in zip(ws, ws2):
        assert b.dtype == np.float16
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


# ---- Signum ----------------------------------------------------------------------------------
def test_signum_without_momentum_applies_wd_lh():
    lr, wd, wd_lh = 0.05, 0.1, 0.2
    w = W0.copy()
    for g in GRADS:
        w = (1 - lr * (wd + wd_lh)) * w - lr * np.sign(g)
    got, state = _run(mx.optimizer.Signum(learning_rate=lr, momentum=0.0, wd=wd, wd_lh=wd_lh))
    assert state is None
    np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-12)


# ---- aggregated SGD --------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(momentum=0.9, wd=0.01, clip_gradient=0.5),
                                    dict(rescale_grad=0.5),
                                    dict(momentum=0.9, multi_precision=True),
                                    dict(multi_precision=True, wd=0.1)])
def test_sgd_updater_aggregates_like_one_weight_at_a_time(kwargs):
    """An Updater hands SGD lists of aggregate_num weights (multi-tensor operators); the
    result equals updating each weight alone, with per-weight rate multipliers."""
    dtype = "float16" if kwargs.get("multi_precision") else "float32"
    shapes = [(3, 4), (5,), (2, 3), (4,), (6,), (1, 2)]     # 6 weights: lists of 4 and 2
    agg = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, **kwargs))
    one = mx.optimizer.SGD(learning_rate=0.1, **kwargs)
    assert agg.optimizer.aggregate_num == 4 and agg.aggregate_updates
    for opt in (agg.optimizer, one):
        opt.set_lr_mult({1: 0.5, 4: 2.0})
    ws_a = [mx.nd.array(RNG.standard_normal(s), dtype=dtype) for s in shapes]
    ws_b = [w.copy() for w in ws_a]
    states_b = [one.create_state_multi_precision(i, w) for i, w in enumerate(ws_b)]
    calls = []
    real = agg.optimizer.update_multi_precision
    agg.optimizer.update_multi_precision = lambda i, *a: calls.append(len(i)) or real(i, *a)
    for _ in range(3):
        grads = [mx.nd.array(RNG.standard_normal(s), dtype=dtype) for s in shapes]
        agg(list(range(6)), grads, ws_a)
        for i in range(6):
            one.update_multi_precision(i, ws_b[i], grads[i], states_b[i])
    assert calls == [4, 2] * 3
    for a, b in zip(ws_a, ws_b):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
