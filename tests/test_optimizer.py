"""Fused optimizer update ops (mxlite/ops/optimizer_ops.py) and mx.optimizer.

Every update is checked over several steps against NumPy formulas written here from MXNet's
documentation (float64, with momentum, weight decay, rescale_grad and clipping), plus the
in-place contract: same buffer, versions bumped, a saved value made stale raises.
"""
import json
import math
import os
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError

RNG = np.random.default_rng(1234)


def _clip(g, c):
    return np.clip(g, -c, c) if c is not None and c > 0 else g


# ---- NumPy references: one step each, returning (new weight, new states) ---------------------
def ref_sgd(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    return (1 - lr * wd) * w - lr * _clip(rescale_grad * g, clip_gradient), []


def ref_sgd_mom(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    mom = momentum * mom - lr * wd * w - lr * _clip(rescale_grad * g, clip_gradient)
    return w + mom, [mom]


def ref_nag_mom(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    # the optimizer's form: state = momentum*state + grad; weight -= lr*(grad + momentum*state)
    # with grad = clip(rescale*g) + wd*w and the kernel's mom = -lr * state
    grad = _clip(rescale_grad * g, clip_gradient) + wd * w
    state = momentum * (-mom / lr) + grad
    return w - lr * (grad + momentum * state), [-lr * state]


def ref_adam(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
             rescale_grad=1.0, clip_gradient=-1.0):
    grad = _clip(rescale_grad * g + wd * w, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad ** 2
    return w - lr * mean / (np.sqrt(var) + epsilon), [mean, var]


def ref_adamw(w, g, mean, var, scale, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
              clip_gradient=-1.0):
    grad = _clip(scale * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad ** 2
    return w - eta * (lr * mean / (np.sqrt(var) + epsilon) + wd * w), [mean, var]


def ref_rmsprop(w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, clip_weights=-1.0):
    grad = _clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * grad ** 2 + gamma1 * n
    return _clip(w - lr * grad / np.sqrt(n + epsilon), clip_weights), [n]


def ref_rmspropalex(w, g, n, gs, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0,
                    rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0):
    grad = _clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * grad ** 2 + gamma1 * n
    gs = (1 - gamma1) * grad + gamma1 * gs
    delta = gamma2 * delta - lr * grad / np.sqrt(n - gs ** 2 + epsilon)
    return _clip(w + delta, clip_weights), [n, gs, delta]


def ref_signsgd(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    return (1 - lr * wd) * w - lr * np.sign(g), []


def ref_signum(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
               wd_lh=0.0):
    grad = _clip(rescale_grad * g, clip_gradient) + wd * w
    mom = momentum * mom - (1 - momentum) * grad
    return (1 - lr * wd_lh) * w + lr * np.sign(mom), [mom]


def ref_ftrl(w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
             clip_gradient=-1.0):
    grad = _clip(rescale_grad * g, clip_gradient)
    z = z + grad - (np.sqrt(n + grad ** 2) - np.sqrt(n)) * w / lr
    n = n + grad ** 2
    w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return w, [z, n]


# op name: (reference, number of states, parameter sets to try)
CASES = {
    "sgd_update": (ref_sgd, 0, [dict(lr=0.1), dict(lr=0.05, wd=0.1, rescale_grad=0.5,
                                                   clip_gradient=0.3)]),
    "sgd_mom_update": (ref_sgd_mom, 1, [dict(lr=0.1, momentum=0.9),
                                        dict(lr=0.05, momentum=0.5, wd=0.01, rescale_grad=2.0,
                                             clip_gradient=0.5)]),
    "nag_mom_update": (ref_nag_mom, 1, [dict(lr=0.1, momentum=0.9),
                                        dict(lr=0.05, momentum=0.7, wd=0.02, rescale_grad=0.5,
                                             clip_gradient=0.2)]),
    "adam_update": (ref_adam, 2, [dict(lr=0.01),
                                  dict(lr=0.02, beta1=0.8, beta2=0.99, epsilon=1e-6, wd=0.1,
                                       rescale_grad=0.5, clip_gradient=0.4)]),
    "rmsprop_update": (ref_rmsprop, 1, [dict(lr=0.01),
                                        dict(lr=0.02, gamma1=0.9, epsilon=1e-6, wd=0.1,
                                             rescale_grad=2.0, clip_gradient=0.5,
                                             clip_weights=1.2)]),
    "rmspropalex_update": (ref_rmspropalex, 3, [dict(lr=0.01),
                                                dict(lr=0.02, gamma1=0.9, gamma2=0.8,
                                                     epsilon=1e-4, wd=0.1, rescale_grad=0.5,
                                                     clip_gradient=0.5, clip_weights=1.1)]),
    "signsgd_update": (ref_signsgd, 0, [dict(lr=0.1), dict(lr=0.05, wd=0.2)]),
    "signum_update": (ref_signum, 1, [dict(lr=0.1, momentum=0.9),
                                      dict(lr=0.05, momentum=0.5, wd=0.1, wd_lh=0.2,
                                           rescale_grad=0.5, clip_gradient=0.3)]),
    "ftrl_update": (ref_ftrl, 2, [dict(lr=0.1),
                                  dict(lr=0.5, lamda1=0.05, beta=0.5, wd=0.1, rescale_grad=2.0,
                                       clip_gradient=0.8)]),
}


def _case_ids():
    return [(name, i) for name, (_, _, sets) in CASES.items() for i in range(len(sets))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,which", _case_ids())
def test_update_ops_match_numpy_over_steps(name, which, dtype):
    ref, n_states, sets = CASES[name]
    params = sets[which]
    shape = (3, 5)
    w = RNG.standard_normal(shape)
    # FTRL's n and RMSProp's state must stay positive; zeros are the usual start
    states = [np.zeros(shape) for _ in range(n_states)]
    nw = mx.nd.array(w, dtype=dtype)
    nstates = [mx.nd.array(s, dtype=dtype) for s in states]
    fn = getattr(mx.nd, name)
    for step in range(4):
        g = RNG.standard_normal(shape) * (1 + step)
        w, states = ref(w, g, *states, **params)
        out = fn(nw, mx.nd.array(g, dtype=dtype), *nstates, out=nw, **params)
        assert out is nw
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(nw.asnumpy(), w, **tol)
    for got, want in zip(nstates, states):
        np.testing.assert_allclose(got.asnumpy(), want, **tol)


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(CASES)),
       shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple),
       wd=st.sampled_from([0.0, 0.05]), rescale=st.floats(0.1, 3.0),
       clip=st.sampled_from([-1.0, 0.0, 0.3, 2.0]), seed=st.integers(0, 2 ** 16))
def test_update_ops_random_shapes_and_parameters(name, shape, wd, rescale, clip, seed):
    """Any shape (empty ones too), weight decay, rescaling and clipping, float64."""
    ref, n_states, sets = CASES[name]
    params = dict(sets[-1], wd=wd, rescale_grad=rescale, clip_gradient=clip)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape)
    states = [np.zeros(shape) for _ in range(n_states)]
    nw = mx.nd.array(w, dtype="float64")
    nstates = [mx.nd.array(x, dtype="float64") for x in states]
    for _ in range(2):
        g = rng.standard_normal(shape)
        w, states = ref(w, g, *states, **params)
        getattr(mx.nd, name)(nw, mx.nd.array(g, dtype="float64"), *nstates, out=nw, **params)
    np.testing.assert_allclose(nw.asnumpy(), w, rtol=1e-10, atol=1e-12)
    for got, want in zip(nstates, states):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_adamw_matches_numpy_and_takes_the_scale_as_an_array(dtype):
    shape = (4, 3)
    w = RNG.standard_normal(shape)
    mean, var = np.zeros(shape), np.zeros(shape)
    nw = mx.nd.array(w, dtype=dtype)
    nm, nv = mx.nd.zeros(shape, dtype=dtype), mx.nd.zeros(shape, dtype=dtype)
    params = dict(lr=0.5, eta=0.1, beta1=0.8, beta2=0.95, epsilon=1e-6, wd=0.05,
                  clip_gradient=0.7)
    for step, scale in enumerate([1.0, 0.5, 2.0]):
        g = RNG.standard_normal(shape)
        w, (mean, var) = ref_adamw(w, g, mean, var, scale, **params)
        mx.nd.contrib.adamw_update(nw, mx.nd.array(g, dtype=dtype), nm, nv,
                                   mx.nd.array([scale], dtype=dtype), out=nw, **params)
    tol = dict(rtol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(nw.asnumpy(), w, **tol)
    np.testing.assert_allclose(nm.asnumpy(), mean, **tol)
    np.testing.assert_allclose(nv.asnumpy(), var, **tol)
    assert mx.nd._internal._adamw_update.op is mx.nd.contrib.adamw_update.op


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), 0.0])
def test_adamw_skips_the_update_for_an_unusable_scale(scale):
    w = mx.nd.array([1.0, -2.0])
    m, v = mx.nd.array([0.1, 0.2]), mx.nd.array([0.3, 0.4])
    mx.nd.contrib.adamw_update(w, mx.nd.array([1.0, 1.0]), m, v, mx.nd.array([scale]),
                               lr=0.1, eta=1.0, out=w)
    assert w.asnumpy().tolist() == [1.0, -2.0]
    np.testing.assert_array_equal(m.asnumpy(), np.float32([0.1, 0.2]))
    np.testing.assert_array_equal(v.asnumpy(), np.float32([0.3, 0.4]))
    # a separate output gets the unchanged weight (MXNet left it unwritten)
    out = mx.nd.array([7.0, 7.0])
    mx.nd.contrib.adamw_update(w, mx.nd.array([1.0, 1.0]), m, v, mx.nd.array([scale]),
                               lr=0.1, eta=1.0, out=out)
    assert out.asnumpy().tolist() == [1.0, -2.0]


def test_large_arrays_run_the_parallel_path_with_the_same_values():
    n = (1 << 17) + 3                   # above PARALLEL_MIN, not a multiple of the chunk
    w = RNG.standard_normal(n)
    g = RNG.standard_normal(n)
    want, (mean, var) = ref_adam(w, g, np.zeros(n), np.zeros(n), lr=0.01, wd=0.1,
                                 clip_gradient=1.0)
    nw = mx.nd.array(w, dtype="float64")
    nm, nv = mx.nd.zeros((n,), dtype="float64"), mx.nd.zeros((n,), dtype="float64")
    mx.nd.adam_update(nw, mx.nd.array(g, dtype="float64"), nm, nv, lr=0.01, wd=0.1,
                      clip_gradient=1.0, out=nw)
    np.testing.assert_allclose(nw.asnumpy(), want, rtol=1e-12)
    np.testing.assert_allclose(nv.asnumpy(), var, rtol=1e-12)


def test_clip_gradient_zero_turns_clipping_off():
    # MXNet's kernels clipped for clip_gradient >= 0 (0 zeroed the gradient); its
    # documentation, which mxlite follows, says <= 0 turns clipping off
    w = mx.nd.array([1.0])
    mx.nd.sgd_update(w, mx.nd.array([3.0]), lr=0.1, clip_gradient=0.0, out=w)
    assert w.asnumpy()[0] == pytest.approx(0.7)


def test_nan_gradients_propagate_through_clipping():
    w = mx.nd.array([1.0, 1.0])
    mx.nd.sgd_update(w, mx.nd.array([float("nan"), 5.0]), lr=0.1, clip_gradient=1.0, out=w)
    got = w.asnumpy()
    assert math.isnan(got[0]) and got[1] == pytest.approx(0.9)


# ---- in-place semantics ----------------------------------------------------------------------
def test_out_weight_updates_in_place_and_bumps_versions():
    w = mx.nd.array([1.0, 2.0, 3.0])
    g = mx.nd.array([0.5, 0.5, 0.5])
    m, v = mx.nd.zeros((3,)), mx.nd.zeros((3,))
    ptr = w._data.ctypes.data
    before = [w._version[0], g._version[0], m._version[0], v._version[0]]
    r = mx.nd.adam_update(w, g, m, v, lr=0.1, out=w)
    assert r is w and w._data.ctypes.data == ptr
    after = [w._version[0], g._version[0], m._version[0], v._version[0]]
    assert after == [before[0] + 1, before[1], before[2] + 1, before[3] + 1]


def test_without_out_the_weight_is_kept_and_the_states_still_move():
    w = mx.nd.array([1.0, 2.0])
    mom = mx.nd.zeros((2,))
    new = mx.nd.sgd_mom_update(w, mx.nd.array([1.0, -1.0]), mom, lr=0.5, momentum=0.9)
    assert w.asnumpy().tolist() == [1.0, 2.0]
    assert new.asnumpy().tolist() == [0.5, 2.5]
    assert mom.asnumpy().tolist() == [-0.5, 0.5]
    assert mom._version[0] == 1


def test_backward_through_a_weight_updated_afterwards_raises():
    w = mx.nd.array([1.0, 2.0])
    w.attach_grad()
    with mx.autograd.record():
        y = (w * w).sum()           # saves w
    mx.nd.sgd_update(w, mx.nd.array([1.0, 1.0]), lr=0.1, out=w)
    with pytest.raises(MXNetError, match="mul|written|version|modified|in place"):
        y.backward()


def test_backward_through_a_state_mutated_afterwards_raises():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    mean = mx.nd.array([0.5, 0.5])
    with mx.autograd.record():
        y = (x * mean).sum()        # saves mean, an input the update then mutates
    mx.nd.adam_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mean, mx.nd.zeros((2,)), lr=0.1)
    with pytest.raises(MXNetError):
        y.backward()


def test_update_ops_are_not_differentiable():
    from mxlite.ops.registry import NON_DIFFERENTIABLE, REGISTRY
    for name in list(CASES) + ["_adamw_update"]:
        op = REGISTRY[name]
        assert op.gradient is NON_DIFFERENTIABLE
        assert set(op.mutate_inputs) == set(op.inputs[2:]) - {"rescale_grad"}


# ---- errors ----------------------------------------------------------------------------------
def test_shape_and_dtype_mismatches_name_the_op_and_input():
    w = mx.nd.ones((2, 3))
    with pytest.raises(MXNetError, match=r"adam_update.*'var'.*\(3, 2\)"):
        mx.nd.adam_update(w, w, mx.nd.zeros((2, 3)), mx.nd.zeros((3, 2)), lr=0.1)
    with pytest.raises(MXNetError, match=r"sgd_update.*'grad'.*float64"):
        mx.nd.sgd_update(w, mx.nd.ones((2, 3), dtype="float64"), lr=0.1)
    with pytest.raises(MXNetError, match="sgd_update.*float16.*multi_precision"):
        mx.nd.sgd_update(mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16"),
                         lr=0.1)
    with pytest.raises(MXNetError, match="sgd_update.*int32"):
        mx.nd.sgd_update(mx.nd.ones((2,), dtype="int32"), mx.nd.ones((2,), dtype="int32"),
                         lr=0.1)
    with pytest.raises(MXNetError, match="sgd_update.*out=.*shape"):
        mx.nd.sgd_update(w, w, lr=0.1, out=mx.nd.ones((3, 2)))
    with pytest.raises(MXNetError, match="adamw_update.*rescale_grad.*one element"):
        mx.nd.contrib.adamw_update(w, w, mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3)),
                                   mx.nd.ones((2,)), lr=0.1, eta=1.0)


def test_bad_parameters_raise():
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="sgd_update.*lr"):
        mx.nd.sgd_update(w, g)
    with pytest.raises(MXNetError, match="adam_update.*beta1.*\\[0, 1\\)"):
        mx.nd.adam_update(w, g, mx.nd.zeros((2,)), mx.nd.zeros((2,)), lr=0.1, beta1=1.5)
    with pytest.raises(MXNetError, match="sgd_mom_update.*momentum"):
        mx.nd.sgd_mom_update(w, g, mx.nd.zeros((2,)), lr=0.1, momentum=-0.1)
    with pytest.raises(MXNetError, match="sgd_update.*'lr'.*finite"):
        mx.nd.sgd_update(w, g, lr=float("nan"))
    with pytest.raises(MXNetError, match="ftrl_update.*'lr'.*> 0"):
        mx.nd.ftrl_update(w, g, mx.nd.zeros((2,)), mx.nd.zeros((2,)), lr=0.0)
    with pytest.raises(MXNetError, match="rmsprop_update.*epsilon"):
        mx.nd.rmsprop_update(w, g, mx.nd.zeros((2,)), lr=0.1, epsilon=-1.0)
    # a negative learning rate is allowed (MXNet allowed it: gradient ascent)
    w2 = mx.nd.array([1.0])
    mx.nd.sgd_update(w2, mx.nd.array([1.0]), lr=-0.5, out=w2)
    assert w2.asnumpy().tolist() == [1.5]


def test_a_state_sharing_memory_with_another_array_raises():
    w = mx.nd.ones((4,))
    state = mx.nd.zeros((4,))
    with pytest.raises(MXNetError, match="adam_update.*'mean' and 'var' share memory"):
        mx.nd.adam_update(w, mx.nd.ones((4,)), state, state, lr=0.1)
    with pytest.raises(MXNetError, match="sgd_mom_update.*'weight' and 'mom'"):
        mx.nd.sgd_mom_update(w, mx.nd.ones((4,)), w, lr=0.1, momentum=0.9)
    with pytest.raises(MXNetError, match="sgd_mom_update.*'out' and 'mom'"):
        mx.nd.sgd_mom_update(w, mx.nd.ones((4,)), state, lr=0.1, momentum=0.9, out=state)
    with pytest.raises(MXNetError, match="sgd_update.*'grad' and 'out'"):
        mx.nd.sgd_update(w, state, lr=0.1, out=state)
    # the weight may be its own output, and nothing was written by a refused call
    assert state.asnumpy().tolist() == [0.0] * 4 and w.asnumpy().tolist() == [1.0] * 4


# ---- mx.optimizer ----------------------------------------------------------------------------
def _run(opt, w0, grads, index=0):
    """Apply ``opt`` to a float64 copy of ``w0`` with each gradient; the final weight."""
    w = mx.nd.array(w0, dtype="float64")
    state = opt.create_state(index, w)
    for g in grads:
        opt.update(index, w, mx.nd.array(g, dtype="float64"), state)
    return w.asnumpy()


W0 = RNG.standard_normal((2, 3))
GRADS = [RNG.standard_normal((2, 3)) * s for s in (1.0, 0.5, 2.0, 1.5)]


def test_sgd_optimizer_with_momentum_wd_rescale_and_clip():
    lr, mom, wd, rs, clip = 0.1, 0.9, 0.01, 0.5, 0.4
    w, state = W0.copy(), np.zeros_like(W0)
    for g in GRADS:       # MXNet's doc form: state = momentum*state + lr*(clip(rs*g) + wd*w)
        state = mom * state + lr * (_clip(rs * g, clip) + wd * w)
        w = w - state
    got = _run(mx.optimizer.SGD(learning_rate=lr, momentum=mom, wd=wd, rescale_grad=rs,
                                clip_gradient=clip), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    # without momentum: no state, plain SGD
    opt = mx.optimizer.SGD(learning_rate=lr, wd=wd)
    assert opt.create_state(0, mx.nd.ones((2,))) is None
    w = W0.copy()
    for g in GRADS:
        w = w - lr * (g + wd * w)
    np.testing.assert_allclose(_run(opt, W0, GRADS), w, rtol=1e-12)


def test_nag_optimizer():
    lr, mom, wd = 0.1, 0.8, 0.05
    w, state = W0.copy(), np.zeros_like(W0)
    for g in GRADS:       # the NAG docstring: state = m*state + g + wd*w; w -= lr*(g' + m*state)
        g2 = g + wd * w
        state = mom * state + g2
        w = w - lr * (g2 + mom * state)
    got = _run(mx.optimizer.NAG(learning_rate=lr, momentum=mom, wd=wd), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adam_optimizer_applies_bias_correction():
    lr, b1, b2, wd = 0.01, 0.9, 0.999, 0.01
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for t, g in enumerate(GRADS, start=1):
        g2 = g + wd * w
        m = b1 * m + (1 - b1) * g2
        v = b2 * v + (1 - b2) * g2 ** 2
        w = w - lr * (m / (1 - b1 ** t)) / np.sqrt(v / (1 - b2 ** t))
    # (MXNet folds the correction into lr, so epsilon is not corrected: a negligible epsilon
    # here, MXNet's exact form below)
    got = _run(mx.optimizer.Adam(learning_rate=lr, wd=wd, epsilon=1e-300), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-9)
    # with epsilon, MXNet's exact form: lr_t = lr*sqrt(1-b2^t)/(1-b1^t), eps uncorrected
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for t, g in enumerate(GRADS, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        w = w - lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + 1e-3)
    got = _run(mx.optimizer.Adam(learning_rate=lr, epsilon=1e-3), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_adamw_optimizer_decouples_weight_decay():
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.99, 1e-6, 0.1
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for t, g in enumerate(GRADS, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * (m / (np.sqrt(v) + eps) + wd * w)
    got = _run(mx.optimizer.AdamW(learning_rate=lr, beta2=b2, wd=wd), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    # correct_bias=False and a loss scale given as an array
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for g in GRADS:
        g = 0.5 * g
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        w = w - lr * (m / (np.sqrt(v) + eps) + wd * w)
    opt = mx.optimizer.AdamW(learning_rate=lr, beta2=b2, wd=wd, correct_bias=False,
                             rescale_grad=mx.nd.array([0.5], dtype="float64"))
    np.testing.assert_allclose(_run(opt, W0, GRADS), w, rtol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_optimizer(centered):
    lr, g1, g2, eps, cw = 0.01, 0.9, 0.8, 1e-8, 1.0
    w = W0.copy()
    n, gs, delta = np.zeros_like(W0), np.zeros_like(W0), np.zeros_like(W0)
    for g in GRADS:
        n = (1 - g1) * g ** 2 + g1 * n
        if centered:
            gs = (1 - g1) * g + g1 * gs
            delta = g2 * delta - lr * g / np.sqrt(n - gs ** 2 + eps)
            w = np.clip(w + delta, -cw, cw)
        else:
            w = np.clip(w - lr * g / np.sqrt(n + eps), -cw, cw)
    opt = mx.optimizer.RMSProp(learning_rate=lr, gamma1=g1, gamma2=g2, centered=centered,
                               clip_weights=cw)
    assert len(opt.create_state(0, mx.nd.ones((2,)))) == (3 if centered else 1)
    np.testing.assert_allclose(_run(opt, W0, GRADS), w, rtol=1e-12)


def test_adagrad_adadelta_ftrl_signum_adamax():
    lr, wd = 0.1, 0.01
    # AdaGrad
    w, h = W0.copy(), np.zeros_like(W0)
    for g in GRADS:
        g = _clip(g, 1.0)
        h = h + g ** 2
        w = w - lr * (g / np.sqrt(h + 1e-7) + wd * w)
    got = _run(mx.optimizer.AdaGrad(learning_rate=lr, wd=wd, clip_gradient=1.0), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    # AdaDelta
    rho, eps = 0.9, 1e-5
    w, ag, ad = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for g in GRADS:
        ag = rho * ag + (1 - rho) * g * g
        d = np.sqrt(ad + eps) / np.sqrt(ag + eps) * g
        ad = rho * ad + (1 - rho) * d * d
        w = w - (d + wd * w)
    grads = [g.copy() for g in GRADS]
    got = _run(mx.optimizer.AdaDelta(wd=wd), W0, grads)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    # Ftrl
    w, z, n = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for g in GRADS:
        w, (z, n) = ref_ftrl(w, g, z, n, lr=lr, lamda1=0.01, beta=1.0, wd=wd)
    np.testing.assert_allclose(_run(mx.optimizer.Ftrl(learning_rate=lr, wd=wd), W0, GRADS), w,
                               rtol=1e-12)
    # Signum
    w, m = W0.copy(), np.zeros_like(W0)
    for g in GRADS:
        m = 0.9 * m - 0.1 * (g + wd * w)
        w = (1 - lr * 0.05) * w + lr * np.sign(m)
    got = _run(mx.optimizer.Signum(learning_rate=lr, wd=wd, wd_lh=0.05), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)
    # Adamax
    b1, b2 = 0.9, 0.999
    w, m, u = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for t, g in enumerate(GRADS, start=1):
        g = g + wd * w
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g))
        w = w - lr / (1 - b1 ** t) * m / u
    got = _run(mx.optimizer.Adamax(learning_rate=lr, wd=wd), W0, GRADS)
    np.testing.assert_allclose(got, w, rtol=1e-12)


def test_lr_and_wd_multipliers_by_index_and_name():
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=0.1,
                           param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"})
    assert opt._get_wd(0) == pytest.approx(0.1)
    assert opt._get_wd(1) == 0.0               # biases get no weight decay (MXNet)
    assert opt._get_wd(2) == pytest.approx(0.1)
    opt.set_lr_mult({"fc_weight": 0.5, 2: 0.25})
    assert opt._get_lr(0) == 0.5 and opt._get_lr(2) == 0.25 and opt._get_lr(1) == 1.0
    opt.set_wd_mult({"fc_bias": 2.0})
    assert opt._get_wd(1) == pytest.approx(0.2)
    # param_dict objects win
    class P:
        lr_mult, wd_mult = 3.0, 0.0
    opt2 = mx.optimizer.SGD(learning_rate=0.5, wd=0.1, param_dict={0: P()})
    assert opt2._get_lr(0) == 1.5 and opt2._get_wd(0) == 0.0
    # the multiplier reaches the update
    w = mx.nd.array([1.0])
    opt3 = mx.optimizer.SGD(learning_rate=0.1)
    opt3.set_lr_mult({7: 2.0})
    opt3.update(7, w, mx.nd.array([1.0]), None)
    assert w.asnumpy()[0] == pytest.approx(0.8)


def test_update_counts_and_lr_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched, begin_num_update=0)
    w = mx.nd.array([0.0], dtype="float64")
    lrs = []
    for _ in range(5):
        lrs.append(opt.learning_rate)
        before = w.asnumpy()[0]
        opt.update(0, w, mx.nd.array([-1.0], dtype="float64"), None)
        lrs[-1] = (lrs[-1], w.asnumpy()[0] - before)
    # the update at count n uses sched(n) after counting it: 1, 1, 0.5, 0.5, 0.25
    assert [step for _, step in lrs] == pytest.approx([1.0, 1.0, 0.5, 0.5, 0.25])
    assert opt.num_update == 5
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.1)
    # learning_rate replaces the scheduler's base_lr, with a warning (MXNet)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mx.optimizer.SGD(learning_rate=0.3, lr_scheduler=mx.lr_scheduler.FactorScheduler(5))
    assert caught
    opt = mx.optimizer.Adam(begin_num_update=10)
    opt.update(3, mx.nd.ones((1,)), mx.nd.ones((1,)), opt.create_state(3, mx.nd.ones((1,))))
    assert opt._index_update_count[3] == 11 and opt.num_update == 11
    opt.learning_rate = 0.5
    assert opt.learning_rate == 0.5


def test_create_is_case_insensitive_and_register_adds_names():
    for name, cls in [("sgd", mx.optimizer.SGD), ("SGD", mx.optimizer.SGD),
                      ("Adam", mx.optimizer.Adam), ("adamw", mx.optimizer.AdamW),
                      ("RmsProp", mx.optimizer.RMSProp), ("nag", mx.optimizer.NAG),
                      ("adagrad", mx.optimizer.AdaGrad), ("ccsgd", mx.optimizer.ccSGD)]:
        assert type(mx.optimizer.create(name)) is cls
    opt = mx.optimizer.Optimizer.create_optimizer("adam", learning_rate=0.2, beta1=0.5)
    assert opt.lr == 0.2 and opt.beta1 == 0.5
    with pytest.raises(MXNetError, match="Cannot find optimizer 'nope'"):
        mx.optimizer.create("nope")

    @mx.optimizer.register
    class HalfStep(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight -= 0.5 * grad
    try:
        opt = mx.optimizer.create("HALFSTEP")
        w = mx.nd.array([1.0])
        mx.optimizer.get_updater(opt)(0, mx.nd.array([1.0]), w)
        assert w.asnumpy().tolist() == [0.5]
    finally:
        del mx.optimizer.Optimizer.opt_registry["halfstep"]


def test_bad_optimizer_arguments_raise():
    with pytest.raises(MXNetError, match="SGD: momentum"):
        mx.optimizer.SGD(momentum=1.5)
    with pytest.raises(MXNetError, match="Adam: beta2"):
        mx.optimizer.Adam(beta2=1.0)
    with pytest.raises(MXNetError, match="clip_gradient"):
        mx.optimizer.SGD(clip_gradient="big")
    # a non-positive clip_gradient turns clipping off, for every optimizer
    assert mx.optimizer.AdaGrad(clip_gradient=-1.0).clip_gradient is None
    w = _run(mx.optimizer.AdaGrad(learning_rate=0.1, clip_gradient=-1), W0, GRADS[:1])
    np.testing.assert_allclose(w, W0 - 0.1 * GRADS[0] / np.sqrt(GRADS[0] ** 2 + 1e-7),
                               rtol=1e-12)
    with pytest.raises(MXNetError, match="param_idx2name"):
        mx.optimizer.SGD(param_idx2name=["a"])
    opt = mx.optimizer.SGD()        # float16 needs multi_precision=True
    w16 = mx.nd.ones((2,), dtype="float16")
    with pytest.raises(MXNetError, match="float16.*multi_precision"):
        opt.create_state_multi_precision(0, w16)
    with pytest.raises(MXNetError, match="float16.*multi_precision"):
        mx.optimizer.get_updater(mx.optimizer.Adam())(0, w16, w16)
    with pytest.raises(MXNetError, match="NDArrays"):
        mx.optimizer.SGD().update(0, np.ones(2), mx.nd.ones((2,)), None)


def test_updater_lists_states_and_round_trip():
    opt = mx.optimizer.Adam(learning_rate=0.01)
    updater = mx.optimizer.get_updater(opt)
    assert isinstance(updater, mx.optimizer.Updater)
    ws = [mx.nd.array(W0, dtype="float64"), mx.nd.array(W0[0], dtype="float64")]
    for g in GRADS[:2]:
        updater([0, 1], [mx.nd.array(g, dtype="float64"), mx.nd.array(g[0], dtype="float64")],
                ws)
    blob = updater.get_states(dump_optimizer=True)
    assert isinstance(blob, bytes)
    # a fresh updater restored from the bytes continues exactly as the original
    clone = mx.optimizer.get_updater(mx.optimizer.SGD())
    clone.set_states(blob)
    assert type(clone.optimizer) is mx.optimizer.Adam and clone.optimizer.num_update == 2
    ws2 = [w.copy() for w in ws]
    for g in GRADS[2:]:
        updater(0, mx.nd.array(g, dtype="float64"), ws[0])
        clone(0, mx.nd.array(g, dtype="float64"), ws2[0])
    np.testing.assert_array_equal(ws[0].asnumpy(), ws2[0].asnumpy())
    # states only: the optimizer stays
    only = mx.optimizer.get_updater(mx.optimizer.SGD())
    only.set_states(updater.get_states())
    assert set(only.states) == {0, 1} and len(only.states[0]) == 2
    assert type(only.optimizer) is mx.optimizer.SGD
    with pytest.raises(MXNetError, match="Updater"):
        updater([0, 1], [mx.nd.ones((1,))], ws)


def test_update_multi_precision_takes_lists():
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.5)
    ws = [mx.nd.array([1.0]), mx.nd.array([2.0, 3.0])]
    states = [opt.create_state(i, w) for i, w in enumerate(ws)]
    opt.update_multi_precision([0, 1], ws, [mx.nd.array([1.0]), mx.nd.array([2.0, -2.0])],
                               states)
    assert ws[0].asnumpy().tolist() == [0.5] and ws[1].asnumpy().tolist() == [1.0, 4.0]
    assert opt.num_update == 1
    with pytest.raises(MXNetError, match="2 indices, 1 weights"):
        opt.update_multi_precision([0, 1], ws[:1], ws[:1], states[:1])


def test_optimizer_pickles_without_param_dict():
    class P:
        lr_mult, wd_mult = 1.0, 1.0
    opt = mx.optimizer.SGD(learning_rate=0.2, momentum=0.5, param_dict={0: P()})
    back = pickle.loads(pickle.dumps(opt))
    assert back.param_dict == {} and back.lr == 0.2 and back.momentum == 0.5


# ---- the device seam -------------------------------------------------------------------------
from test_device import fake  # noqa: E402,F401,F811  (the fake-device fixture)


def test_updates_and_optimizers_run_through_the_namespace_of_their_device(fake):
    """The update ops and an optimizer step on the fake device give the CPU's values, with
    array data reached only through the device's namespace."""
    def steps():
        w = mx.nd.array(W0, dtype="float64")
        m, v = mx.nd.zeros((2, 3), dtype="float64"), mx.nd.zeros((2, 3), dtype="float64")
        for g in GRADS[:2]:
            mx.nd.adam_update(w, mx.nd.array(g, dtype="float64"), m, v, lr=0.1, wd=0.1,
                              out=w)
        w2 = mx.nd.array(W0)
        mx.nd.contrib.adamw_update(w2, mx.nd.array(GRADS[0]), mx.nd.zeros((2, 3)),
                                   mx.nd.zeros((2, 3)), mx.nd.array([float("nan")]), lr=1.0,
                                   eta=0.1, out=mx.nd.zeros((2, 3)))
        updater = mx.optimizer.get_updater(mx.optimizer.RMSProp(centered=True))
        w3 = mx.nd.array(W0)
        updater(0, mx.nd.array(GRADS[1]), w3)
        updater = mx.optimizer.get_updater(mx.optimizer.AdaGrad(learning_rate=0.1))
        w4 = mx.nd.array(W0)
        updater(0, mx.nd.array(GRADS[1]), w4)
        return [w, m, v, w3, w4]

    expected = steps()
    with fake.run():
        got = steps()
    assert all(x.context == fake.ctx for x in got)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    assert fake.calls["from_host"] and (fake.calls["zeros"] or fake.calls["empty"])


# ---- optimizer states files (mxlite/optimizer/states_io.py) ----------------------------------
STATES_CASES = [
    ("sgd", {"momentum": 0.9, "wd": 0.01}), ("sgd", {}), ("ccsgd", {"momentum": 0.5}),
    ("nag", {"momentum": 0.9}), ("signum", {"momentum": 0.9, "wd_lh": 0.01}),
    ("adam", {"wd": 0.01}), ("adamw", {"wd": 0.01}), ("adagrad", {}),
    ("rmsprop", {"centered": True}), ("rmsprop", {}), ("adadelta", {}), ("ftrl", {}),
    ("adamax", {}), ("nadam", {}), ("sgld", {}), ("test", {}),
    ("lamb", {"wd": 0.01, "lower_bound": 0.1}), ("ftml", {"wd": 0.01}),
    ("lars", {"momentum": 0.9}), ("dcasgd", {"momentum": 0.9}), ("dcasgd", {}),
    ("lbsgd", {"momentum": 0.9, "batch_scale": 3}),
    ("sgd", {"momentum": 0.9, "clip_gradient": 0.5, "rescale_grad": 0.5,
             "param_idx2name": {0: "fc_weight", 1: "fc_bias"},
             "lr_scheduler": mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.1)}),
]
STATE_WEIGHTS = [W0, W0[0]]


def _flat_states(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _flat_states(s)]
    return [state]


def _trained_updater(name, kwargs):
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
    updater.optimizer.set_lr_mult({1: 0.5})
    ws = [mx.nd.array(w) for w in STATE_WEIGHTS]
    mx.random.seed(7)
    for g in GRADS[:2]:
        updater([0, 1], [mx.nd.array(g), mx.nd.array(g[0])], ws)
    return updater, ws


def _continue(updater, ws):
    mx.random.seed(11)                          # SGLD's noise: the same draws for both runs
    for g in GRADS[2:]:
        updater([0, 1], [mx.nd.array(g), mx.nd.array(g[0])], ws)
    return [w.asnumpy() for w in ws]


@pytest.fixture
def no_pickle(monkeypatch):
    """Any use of pickle while loading fails the test."""
    from mxlite.optimizer import states_io

    def refuse(*args, **kwargs):
        raise AssertionError("pickle used to load a states file")

    for name in ("loads", "load", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    monkeypatch.setattr(states_io, "_from_pickle", refuse)


@pytest.mark.parametrize("name, kwargs", STATES_CASES, ids=lambda v: str(v)[:40])
def test_states_round_trip_every_optimizer(name, kwargs, no_pickle):
    updater, ws = _trained_updater(name, kwargs)
    blob = updater.get_states(dump_optimizer=True)
    assert blob[:1] != b"\x80" and blob[:8] == (0x112).to_bytes(8, "little")
    clone = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.7))
    clone.set_states(blob)
    opt, back = updater.optimizer, clone.optimizer
    assert type(back) is type(opt)
    plain = {k: v for k, v in vars(opt).items()
             if k not in ("lr_scheduler", "param_dict", "cumgrads")}
    assert {k: v for k, v in vars(back).items() if k in plain} == plain
    if hasattr(opt, "cumgrads"):        # LBSGD's accumulated gradients: arrays, compared apart
        assert set(back.cumgrads) == set(opt.cumgrads)
        for i, entry in opt.cumgrads.items():
            assert back.cumgrads[i]["num_cums"] == entry["num_cums"]
            total = back.cumgrads[i]["cum_grad"]
            assert (total is None) == (entry["cum_grad"] is None)
            if total is not None:
                np.testing.assert_array_equal(total.asnumpy(), entry["cum_grad"].asnumpy())
    assert back._index_update_count is back._all_index_update_counts[0]
    if opt.lr_scheduler is not None:
        assert vars(back.lr_scheduler) == vars(opt.lr_scheduler)
    assert set(clone.states) == {0, 1}
    for i in (0, 1):
        saved, loaded = _flat_states(updater.states[i]), _flat_states(clone.states[i])
        assert len(saved) == len(loaded)
        for a, b in zip(saved, loaded):
            assert b.dtype == a.dtype
            np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    ws2 = [w.copy() for w in ws]
    for a, b in zip(_continue(updater, ws), _continue(clone, ws2)):
        np.testing.assert_array_equal(a, b)


def test_states_without_the_optimizer_keep_the_updaters(no_pickle):
    updater, _ = _trained_updater("adam", {})
    clone = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.1))
    clone.set_states(updater.get_states())
    assert type(clone.optimizer) is mx.optimizer.SGD and set(clone.states) == {0, 1}


def test_trainer_states_round_trip(tmp_path, no_pickle):
    for kvstore, on_kv in ((None, False), ("local", True)):
        w = mx.gluon.Parameter("w", shape=(2, 3))
        w.initialize(mx.init.Constant(0.5))
        trainer = mx.gluon.Trainer([w], "adam", {"learning_rate": 0.1}, kvstore=kvstore,
                                   update_on_kvstore=on_kv)

        def step(g):
            with mx.autograd.record():
                loss = (w.data() * mx.nd.array(g)).sum()
            loss.backward()
            trainer.step(1)

        for g in GRADS[:2]:
            step(g)
        fname = str(tmp_path / f"trainer-{kvstore}.states")
        trainer.save_states(fname)
        with open(fname, "rb") as f:
            assert f.read(1) != b"\x80"
        saved = w.data().copy()
        step(GRADS[2])
        after = w.data().asnumpy()
        w.set_data(saved)
        trainer = mx.gluon.Trainer([w], "sgd", {"learning_rate": 0.7}, kvstore=kvstore,
                                   update_on_kvstore=on_kv)
        trainer.load_states(fname)
        assert type(trainer._optimizer) is mx.optimizer.Adam
        assert trainer.learning_rate == 0.1
        step(GRADS[2])
        np.testing.assert_array_equal(w.data().asnumpy(), after)


def test_kvstore_states_round_trip(tmp_path, no_pickle):
    def store(weight):
        kv = mx.kv.create("local")
        kv.init("w", weight)
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
        return kv

    kv = store(mx.nd.array(W0))
    for g in GRADS[:2]:
        kv.push("w", mx.nd.array(g))
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname, dump_optimizer=True)
    with open(fname, "rb") as f:
        assert f.read(1) != b"\x80"
    out = mx.nd.zeros(W0.shape)
    kv.pull("w", out=out)
    other = store(out)              # the weight travels apart from the states (a checkpoint)
    other.set_optimizer(mx.optimizer.SGD(learning_rate=0.7))
    other.load_optimizer_states(fname)
    assert type(other._updater.optimizer) is mx.optimizer.Adam
    assert other._updater.optimizer.num_update == 2
    for a, b in zip(other._updater.states["w"], kv._updater.states["w"]):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    results = []
    for store_ in (kv, other):
        store_.push("w", mx.nd.array(GRADS[2]))
        store_.pull("w", out=out)
        results.append(out.asnumpy())
    np.testing.assert_array_equal(results[0], results[1])


def _crafted_pickle(marker):
    class WritesMarker:
        def __reduce__(self):
            return exec, (f"open({str(marker)!r}, 'w').write('ran')",)
    return pickle.dumps({0: WritesMarker()})


def _loaders_of(tmp_path, fname):
    w = mx.gluon.Parameter("w", shape=(2, 3))
    w.initialize()
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD())
    return {"Updater.set_states": lambda **kw: mx.optimizer.get_updater(
                mx.optimizer.SGD()).set_states(Path(fname).read_bytes(), **kw),
            "kv.load_optimizer_states": lambda **kw: kv.load_optimizer_states(fname, **kw),
            "Trainer.load_states": lambda **kw: mx.gluon.Trainer(
                [w], "sgd", kvstore=None).load_states(fname, **kw)}


def test_a_crafted_pickle_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "marker"
    fname = tmp_path / "evil.states"
    fname.write_bytes(_crafted_pickle(marker))
    for who, load in _loaders_of(tmp_path, str(fname)).items():
        with pytest.raises(MXNetError, match=f"{who}: .* is a pickle .*allow_pickle=True"):
            load()
    assert not marker.exists()


@pytest.mark.parametrize("obj, fragment", [
    ([1, 2], "holds list, not optimizer states"), ("abc", "holds str"),
    ({0: {1, 2}}, "has a set in state 0"), ({(1, 2): None}, r"state index \(1, 2\)"),
])
def test_a_pickle_that_is_not_states_is_an_error(tmp_path, obj, fragment):
    fname = tmp_path / "other.states"
    fname.write_bytes(pickle.dumps(obj))
    for who, load in _loaders_of(tmp_path, str(fname)).items():
        with pytest.raises(MXNetError, match=f"{who}: .*{fragment}"):
            load(allow_pickle=True)
    fname.write_bytes(b"\x80\x04garbage")
    with pytest.raises(MXNetError, match="the pickle does not load"):
        mx.optimizer.get_updater(mx.optimizer.SGD()).set_states(
            fname.read_bytes(), allow_pickle=True)


def test_mxlite_pickled_states_load_with_allow_pickle():
    updater, _ = _trained_updater("adam", {})
    blob = pickle.dumps((updater.states, updater.optimizer))  # mxlite's former format
    clone = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match="allow_pickle=True"):
        clone.set_states(blob)
    clone.set_states(blob, allow_pickle=True)
    assert type(clone.optimizer) is mx.optimizer.Adam and set(clone.states) == {0, 1}


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def _mxnet_fixture(tag):
    io = mx.nd.load(os.path.join(FIXTURES, "mxnet_states-io.params"))
    return os.path.join(FIXTURES, f"mxnet_{tag}.states"), {
        k.split(":", 1)[1]: v for k, v in io.items() if k.startswith(tag + ":")}


def test_mxnet_updater_states_load_with_allow_pickle():
    fname, io = _mxnet_fixture("updater")
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match="is a pickle .*allow_pickle=True"):
        updater.set_states(Path(fname).read_bytes())
    updater.set_states(Path(fname).read_bytes(), allow_pickle=True)
    opt = updater.optimizer
    assert type(opt) is mx.optimizer.Adam and opt.num_update == 2 and opt.wd == 0.01
    assert opt.aggregate_num == 0 and opt.allow_np_array is False
    for i in (0, 1):
        for j, state in enumerate(_flat_states(updater.states[i])):
            np.testing.assert_array_equal(state.asnumpy(), io[f"state{i}_{j}"].asnumpy())
        w = io[f"weight{i}"].copy()
        updater(i, io[f"next_grad{i}"], w)
        np.testing.assert_allclose(w.asnumpy(), io[f"next{i}"].asnumpy(), rtol=1e-6, atol=1e-7)


def test_mxnet_kvstore_states_with_a_schedule_load_with_allow_pickle():
    fname, io = _mxnet_fixture("kvstore")
    kv = mx.kv.create("local")
    kv.init(3, io["weight0"])
    kv.set_optimizer(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match="allow_pickle=True"):
        kv.load_optimizer_states(fname)
    kv.load_optimizer_states(fname, allow_pickle=True)
    opt = kv._updater.optimizer
    # MXNet's FactorScheduler had halved its base_lr once; mxlite's restarts from 0.1
    assert opt.lr_scheduler.base_lr == 0.1 and opt.momentum == 0.9
    np.testing.assert_array_equal(kv._updater.states[3].asnumpy(), io["state0_0"].asnumpy())
    kv.push(3, io["next_grad0"])
    out = mx.nd.zeros((5,))
    kv.pull(3, out=out)
    np.testing.assert_allclose(out.asnumpy(), io["next0"].asnumpy(), rtol=1e-6, atol=1e-7)


def test_mxnet_trainer_states_load_with_allow_pickle():
    fname, io = _mxnet_fixture("trainer")
    p = mx.gluon.Parameter("w", shape=(2, 3))
    p.initialize()
    p.set_data(io["weight0"])
    trainer = mx.gluon.Trainer([p], "sgd", kvstore=None)
    with pytest.raises(MXNetError, match="Trainer.load_states: .*allow_pickle=True"):
        trainer.load_states(fname)
    trainer.load_states(fname, allow_pickle=True)
    assert type(trainer._optimizer) is mx.optimizer.RMSProp
    with mx.autograd.record():
        loss = (p.data() * io["next_grad0"]).sum()
    loss.backward()
    trainer.step(1)
    np.testing.assert_allclose(p.data().asnumpy(), io["next0"].asnumpy(), rtol=1e-6,
                               atol=1e-7)


def _states_file(header, arrays=None):
    """The bytes of a states container with this ``header`` (a dict, or raw text)."""
    from mxlite.ndarray import io
    from mxlite.optimizer import states_io
    text = header if isinstance(header, str) else json.dumps(header)
    data = {states_io.HEADER_KEY: mx.nd.array(list(text.encode()), dtype="uint8")}
    data.update(arrays or {})
    return io._dumps(data)


def _header(states=None, optimizer=None, **extra):
    return dict({"format": "mxlite-optimizer-states", "version": 1,
                 "states": {"dict": []} if states is None else states,
                 "optimizer": optimizer}, **extra)


def _opt_record(**attrs):
    base = {"_all_index_update_counts": {"dict": [[0, {"dict": []}]]}}
    base.update(attrs)
    return {"class": "sgd", "attrs": base, "update_counts_of": 0}


@pytest.mark.parametrize("blob, fragment", [
    (lambda: _states_file(_header(optimizer=_opt_record(update=1))),
     "sets 'update' of SGD .* not a data attribute"),
    (lambda: _states_file(_header(optimizer=_opt_record(__class__="x"))),
     "sets '__class__'"),
    (lambda: _states_file(_header(optimizer=_opt_record(
        lr_scheduler={"lr_scheduler": "os.system", "attrs": {}}))),
     "scheduler 'os.system' .* not an imported LRScheduler subclass"),
    (lambda: _states_file(_header(optimizer=_opt_record(lr="fast"))),
     "attribute 'lr' the value 'fast', not a number"),
    (lambda: _states_file(_header(optimizer=dict(_opt_record(), **{"class": "nosuch"}))),
     "optimizer 'nosuch', which is not registered"),
    (lambda: _states_file(_header(optimizer=dict(_opt_record(), update_counts_of=5))),
     "bad update counts"),
    (lambda: _states_file(_header(states={"dict": [[0, {"array": 3}]]})),
     "refers to array 3 .* which it does not hold"),
    (lambda: _states_file(_header(states={"dict": [[0, {"tuple": "ab"}]]})),
     "bad value at states"),
    (lambda: _states_file(_header(states={"list": []})), "holds list, not optimizer states"),
    (lambda: _states_file(_header(version=2)), "version 2; this mxlite reads version 1"),
    (lambda: _states_file("{" * 100000), "corrupt states header|nested too deeply"),
    (lambda: _states_file("[1,"), "corrupt states header"),
    (lambda: mx.ndarray.io._dumps({"w": mx.nd.ones((2,))}),
     "holds no optimizer states .*without mxlite's states header"),
    (lambda: b"not a states file", "holds no optimizer states"),
])
def test_hostile_states_files_are_errors(blob, fragment, no_pickle):
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    with pytest.raises(MXNetError, match=f"Updater.set_states: the data .*{fragment}"):
        updater.set_states(blob())


def test_saving_a_state_that_is_not_data_is_an_error():
    opt = mx.optimizer.SGD()
    opt.callback = print
    with pytest.raises(MXNetError, match=r"optimizer.callback is a builtin_function_or_method"):
        mx.optimizer.get_updater(opt).get_states(dump_optimizer=True)
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    updater.states[0] = object()
    with pytest.raises(MXNetError, match=r"states\[0\] is a object"):
        updater.get_states()
