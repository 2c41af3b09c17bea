"""The multi-precision (``mp_``), FTML and LAMB update operators of
mxlite/ops/optimizer_ops.py, against NumPy references written from MXNet's operator
documentation (tests/test_optimizer.py covers the other update operators)."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError

RNG = np.random.default_rng(2024)
SHAPE = (4, 5)


def _clip(g, c):
    return np.clip(g, -c, c) if c > 0 else g


def _arr(x, dtype):
    return mx.nd.array(x, dtype=dtype)


# ---- NumPy references ------------------------------------------------------------------------
def ref_ftml(w, g, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0,
             rescale_grad=1.0, clip_grad=-1.0):
    grad = _clip(rescale_grad * g + wd * w, clip_grad)
    v = beta2 * v + (1 - beta2) * grad ** 2
    d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * grad - (d_t - beta1 * d) * w
    return -z / d_t, [d_t, v, z]


def ref_lamb1(w, g, mean, var, t, wd, beta1=0.9, beta2=0.999, epsilon=1e-6,
              bias_correction=True, rescale_grad=1.0, clip_gradient=-1.0):
    grad = _clip(rescale_grad * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * grad
    var = beta2 * var + (1 - beta2) * grad ** 2
    m, v = (mean / (1 - beta1 ** t), var / (1 - beta2 ** t)) if bias_correction else (mean, var)
    return m / (np.sqrt(v) + epsilon) + wd * w, [mean, var]


def ref_lamb2(w, g, lr, lower_bound=-1.0, upper_bound=-1.0):
    r1, r2 = np.linalg.norm(w), np.linalg.norm(g)
    if lower_bound > 0:
        r1 = max(r1, lower_bound)
    if upper_bound > 0:
        r1 = min(r1, upper_bound)
    ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
    return w - lr * ratio * g


# ---- FTML -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("params", [dict(lr=0.1),
                                    dict(lr=0.05, beta1=0.5, beta2=0.9, epsilon=1e-6, wd=0.1,
                                         rescale_grad=0.5, clip_grad=0.3)])
def test_ftml_update_matches_numpy_over_steps(params, dtype):
    w = RNG.standard_normal(SHAPE)
    states = [np.zeros(SHAPE) for _ in range(3)]
    nw, nstates = _arr(w, dtype), [_arr(s, dtype) for s in states]
    for t in range(1, 5):
        g = RNG.standard_normal(SHAPE) * t
        w, states = ref_ftml(w, g, *states, t=t, **params)
        out = mx.nd.ftml_update(nw, _arr(g, dtype), *nstates, out=nw, t=t, **params)
        assert out is nw
    tol = dict(rtol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(nw.asnumpy(), w, **tol)
    for got, want in zip(nstates, states):
        np.testing.assert_allclose(got.asnumpy(), want, **tol)


def test_ftml_update_refuses_what_it_would_divide_by():
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    states = [mx.nd.zeros((2,)) for _ in range(3)]
    with pytest.raises(MXNetError, match="ftml_update.*'t'.*>= 1"):
        mx.nd.ftml_update(w, g, *states, lr=0.1, t=0)
    with pytest.raises(MXNetError, match="ftml_update.*'lr'.*> 0"):
        mx.nd.ftml_update(w, g, *states, lr=0.0, t=1)
    with pytest.raises(MXNetError, match="ftml_update.*'t'"):
        mx.nd.ftml_update(w, g, *states, lr=0.1)       # t is required


# ---- LAMB -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("params", [dict(wd=0.0),
                                    dict(wd=0.05, beta1=0.8, beta2=0.99, epsilon=1e-4,
                                         rescale_grad=0.5, clip_gradient=0.3),
                                    dict(wd=0.01, bias_correction=False)])
def test_lamb_phases_match_numpy_over_steps(params, dtype):
    w = RNG.standard_normal(SHAPE)
    mean, var = np.zeros(SHAPE), np.zeros(SHAPE)
    nw, nmean, nvar = _arr(w, dtype), _arr(mean, dtype), _arr(var, dtype)
    for t in range(1, 4):
        g = RNG.standard_normal(SHAPE)
        step, (mean, var) = ref_lamb1(w, g, mean, var, t=t, **params)
        got = mx.nd.lamb_update_phase1(nw, _arr(g, dtype), nmean, nvar, t=t, **params)
        assert got.dtype == np.dtype(dtype) and got.shape == SHAPE
        w = ref_lamb2(w, step, lr=0.01)
        mx.nd.lamb_update_phase2(nw, got, mx.nd.norm(nw), mx.nd.norm(got), lr=0.01, out=nw)
    tol = dict(rtol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(nw.asnumpy(), w, **tol)
    np.testing.assert_allclose(nmean.asnumpy(), mean, **tol)
    np.testing.assert_allclose(nvar.asnumpy(), var, **tol)


@pytest.mark.parametrize("bounds", [dict(), dict(lower_bound=50.0), dict(upper_bound=0.5),
                                    dict(lower_bound=0.0, upper_bound=0.0)])
def test_lamb_phase2_bounds_the_weight_norm(bounds):
    w, g = RNG.standard_normal(SHAPE), RNG.standard_normal(SHAPE)
    nw = _arr(w, "float64")
    got = mx.nd.lamb_update_phase2(nw, _arr(g, "float64"), _arr([np.linalg.norm(w)], "float64"),
                                   _arr([np.linalg.norm(g)], "float64"), lr=0.1, **bounds)
    np.testing.assert_allclose(got.asnumpy(), ref_lamb2(w, g, 0.1, **bounds), rtol=1e-12)


def test_lamb_phase2_zero_norm_keeps_the_learning_rate():
    w, g = mx.nd.zeros((3,)), mx.nd.array([1.0, -2.0, 0.5])
    got = mx.nd.lamb_update_phase2(w, g, mx.nd.zeros((1,)), mx.nd.norm(g), lr=0.5)
    np.testing.assert_array_equal(got.asnumpy(), [-0.5, 1.0, -0.25])


def test_lamb_phase2_checks_the_norms():
    w = mx.nd.ones((3,))
    with pytest.raises(MXNetError, match="lamb_update_phase2.*'r1'.*one element"):
        mx.nd.lamb_update_phase2(w, w, mx.nd.ones((2,)), mx.nd.ones((1,)), lr=0.1)
    with pytest.raises(MXNetError, match="lamb_update_phase2.*'g'.*shape"):
        mx.nd.lamb_update_phase2(w, mx.nd.ones((4,)), mx.nd.ones((1,)), mx.nd.ones((1,)),
                                 lr=0.1)


# ---- multi-precision updates ----------------------------------------------------------------
def _sgd(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    return (1 - lr * wd) * w - lr * _clip(rescale_grad * g, clip_gradient), []


def _sgd_mom(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    mom = momentum * mom - lr * wd * w - lr * _clip(rescale_grad * g, clip_gradient)
    return w + mom, [mom]


def _nag_mom(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    # the NAG optimizer's documented update with state = -mom / lr
    grad = _clip(rescale_grad * g, clip_gradient) + wd * w
    state = momentum * (-mom / lr) + grad
    return w - lr * (grad + momentum * state), [-lr * state]


MP_CASES = {
    "mp_sgd_update": (_sgd, 0, dict(lr=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=0.4)),
    "mp_sgd_mom_update": (_sgd_mom, 1, dict(lr=0.1, momentum=0.9, wd=0.05, clip_gradient=0.4)),
    "mp_nag_mom_update": (_nag_mom, 1, dict(lr=0.1, momentum=0.9, wd=0.05, rescale_grad=2.0)),
}


@pytest.mark.parametrize("name", sorted(MP_CASES))
def test_mp_updates_run_on_the_float32_master_copy(name):
    ref, n_states, params = MP_CASES[name]
    w32 = RNG.standard_normal(SHAPE).astype(np.float32)
    states = [np.zeros(SHAPE, np.float32) for _ in range(n_states)]
    w16 = mx.nd.array(w32, dtype="float16")
    master = mx.nd.array(w32)       # the float32 copy (more precise than w16)
    nstates = [mx.nd.array(s) for s in states]
    for _ in range(3):
        g16 = RNG.standard_normal(SHAPE).astype(np.float16)
        # the reference computes in float64 from the float32 master weight
        w64, states64 = ref(w32.astype(np.float64), g16.astype(np.float64),
                            *[s.astype(np.float64) for s in states], **params)
        w32, states = w64.astype(np.float32), [s.astype(np.float32) for s in states64]
        out = getattr(mx.nd, name)(w16, mx.nd.array(g16, dtype="float16"), *nstates, master,
                                   out=w16, **params)
        assert out is w16 and w16.dtype == np.float16 and master.dtype == np.float32
        np.testing.assert_array_equal(w16.asnumpy(), master.asnumpy().astype(np.float16))
    np.testing.assert_allclose(master.asnumpy(), w32, rtol=1e-5, atol=1e-6)
    for got, want in zip(nstates, states):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_mp_lamb_phases_use_the_master_copy():
    w = RNG.standard_normal(SHAPE)
    g = RNG.standard_normal(SHAPE)
    w16 = mx.nd.array(w, dtype="float16")
    master = w16.astype("float32")
    mean, var = mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)
    step = mx.nd.mp_lamb_update_phase1(w16, mx.nd.array(g, dtype="float16"), mean, var, master,
                                       t=1, wd=0.1)
    assert step.dtype == np.float32
    w0 = master.asnumpy().astype(np.float64)
    want_step, _ = ref_lamb1(w0, g.astype(np.float16).astype(np.float64), np.zeros(SHAPE),
                             np.zeros(SHAPE), t=1, wd=0.1)
    np.testing.assert_allclose(step.asnumpy(), want_step, rtol=1e-4, atol=1e-5)
    mx.nd.mp_lamb_update_phase2(w16, step, mx.nd.norm(master), mx.nd.norm(step), master,
                                lr=0.01, out=w16)
    np.testing.assert_allclose(master.asnumpy(), ref_lamb2(w0, step.asnumpy(), 0.01),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w16.asnumpy(), master.asnumpy().astype(np.float16))


def test_mp_updates_check_dtypes():
    w16, g16 = mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16")
    with pytest.raises(MXNetError, match="mp_sgd_update.*'weight32'.*float16.*float32"):
        mx.nd.mp_sgd_update(w16, g16, w16, lr=0.1)
    with pytest.raises(MXNetError, match="mp_sgd_mom_update.*'grad'.*float32"):
        mx.nd.mp_sgd_mom_update(w16, mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.ones((2,)),
                                lr=0.1)
    with pytest.raises(MXNetError, match="mp_sgd_update.*weight.*float64"):
        mx.nd.mp_sgd_update(mx.nd.ones((2,), dtype="float64"),
                            mx.nd.ones((2,), dtype="float64"), mx.nd.ones((2,)), lr=0.1)
    with pytest.raises(MXNetError, match="mp_sgd_update.*'weight32'.*shape"):
        mx.nd.mp_sgd_update(w16, g16, mx.nd.ones((3,)), lr=0.1)


def test_mp_updates_refuse_a_state_that_is_the_master_copy():
    w16, g16 = mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16")
    master = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="mp_sgd_mom_update.*share memory"):
        mx.nd.mp_sgd_mom_update(w16, g16, master, master, lr=0.1, momentum=0.9)
    np.testing.assert_array_equal(master.asnumpy(), [1.0, 1.0])     # nothing written


def test_new_update_ops_are_not_differentiable_and_declare_their_writes():
    from mxlite.ops.registry import NON_DIFFERENTIABLE, REGISTRY
    writes = {"mp_sgd_update": {"weight32"}, "mp_sgd_mom_update": {"mom", "weight32"},
              "mp_nag_mom_update": {"mom", "weight32"}, "ftml_update": {"d", "v", "z"},
              "lamb_update_phase1": {"mean", "var"},
              "mp_lamb_update_phase1": {"mean", "var", "weight32"},
              "lamb_update_phase2": set(), "mp_lamb_update_phase2": {"weight32"}}
    for name, mutated in writes.items():
        op = REGISTRY[name]
        assert op.gradient is NON_DIFFERENTIABLE
        assert set(op.mutate_inputs) == mutated, name


# ---- multi-tensor updates --------------------------------------------------------------------
MULTI = {   # name: (the single-weight reference, states per weight, master copy, momentum)
    "multi_sgd_update": (_sgd, 0, False, None),
    "multi_sgd_mom_update": (_sgd_mom, 1, False, 0.9),
    "multi_mp_sgd_update": (_sgd, 0, True, None),
    "multi_mp_sgd_mom_update": (_sgd_mom, 1, True, 0.9),
}
MULTI_SHAPES = [(3, 4), (5,), (2, 2, 2)]


@pytest.mark.parametrize("preloaded", [False, True])
@pytest.mark.parametrize("name", sorted(MULTI))
def test_multi_updates_equal_each_weight_updated_alone(name, preloaded):
    ref, n_states, mp, momentum = MULTI[name]
    lrs, wds = (0.1, 0.05, 0.2), (0.01, 0.0, 0.1)
    extra = dict(rescale_grad=0.5, clip_gradient=0.6)
    if momentum is not None:
        extra["momentum"] = momentum
    wdtype = "float16" if mp else "float64"
    inputs, weights, masters, states, want = [], [], [], [], []
    for shape, lr, wd in zip(MULTI_SHAPES, lrs, wds):
        w, g = RNG.standard_normal(shape), RNG.standard_normal(shape)
        st = [np.zeros(shape) for _ in range(n_states)]
        weight = mx.nd.array(w, dtype=wdtype)
        nstates = [mx.nd.array(s, dtype="float32" if mp else "float64") for s in st]
        group = [weight, mx.nd.array(g, dtype=wdtype)] + nstates
        base = weight.asnumpy().astype(np.float64)
        if mp:
            masters.append(weight.astype("float32"))
            group.append(masters[-1])
            g = g.astype(np.float16).astype(np.float64)
        if preloaded:       # the rates come as float32 arrays
            lr, wd = float(np.float32(lr)), float(np.float32(wd))
        new_w, new_states = ref(base, g, *st, lr=lr, wd=wd, **extra)
        inputs += group
        weights.append(weight)
        states.append(nstates)
        want.append((new_w, new_states))
    op = getattr(mx.nd, ("preloaded_" if preloaded else "") + name)
    rates = ([mx.nd.array(lrs), mx.nd.array(wds)], {}) if preloaded else \
        ([], dict(lrs=lrs, wds=wds))
    out = op(*inputs, *rates[0], out=weights, num_weights=3, **rates[1], **extra)
    assert len(out) == 3 and all(o is w for o, w in zip(out, weights))
    tol = dict(rtol=1e-5, atol=1e-6) if mp else dict(rtol=1e-12)
    for i, (new_w, new_states) in enumerate(want):
        got = masters[i] if mp else weights[i]
        np.testing.assert_allclose(got.asnumpy(), new_w, **tol)
        for a, b in zip(states[i], new_states):
            np.testing.assert_allclose(a.asnumpy(), b, **tol)
        if mp:
            np.testing.assert_array_equal(weights[i].asnumpy(),
                                          masters[i].asnumpy().astype(np.float16))


def test_multi_updates_check_counts_rates_and_groups():
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="multi_sgd_update: num_weights=2 takes 4 inputs"):
        mx.nd.multi_sgd_update(w, g, lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(MXNetError, match="multi_sgd_update: parameter 'lrs' has 1 values"):
        mx.nd.multi_sgd_update(w, g, w.copy(), g, lrs=(0.1,), wds=(0, 0), num_weights=2)
    with pytest.raises(MXNetError, match="multi_sgd_mom_update: input 'mom_0' has shape"):
        mx.nd.multi_sgd_mom_update(w, g, mx.nd.zeros((3,)), lrs=(0.1,), wds=(0,))
    with pytest.raises(MXNetError, match="preloaded_multi_sgd_update: input 'lrs' has shape"):
        mx.nd.preloaded_multi_sgd_update(w, g, mx.nd.ones((2,)), mx.nd.ones((1,)))
    with pytest.raises(MXNetError, match="multi_mp_sgd_update: weight 0:.*weight32"):
        mx.nd.multi_mp_sgd_update(w.astype("float16"), g.astype("float16"),
                                  w.astype("float16"), lrs=(0.1,), wds=(0,))
