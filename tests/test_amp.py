"""mxlite.contrib.amp.DynamicLossScaler: skipped steps on overflow, scale schedule, and
training loops where the loss is scaled and the gradients unscaled."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.contrib import amp


class Counter:
    """An ``update`` callback that records how often it ran."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1


def test_defaults_are_mxnets():
    s = amp.DynamicLossScaler()
    assert (s.loss_scale, s.scale_factor, s.scale_window) == (2.0 ** 16, 2.0, 2000)
    assert s.tolerance == 0.0
    assert s.max_scale == 2.0 ** 24


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_overflow_skips_the_step_and_halves_the_scale(special, dtype):
    s = amp.DynamicLossScaler(init_scale=1024.0)
    g1 = mx.nd.array(np.full((3, 4), 8.0), dtype=dtype)
    g2 = mx.nd.array(np.full(100, 2.0), dtype=dtype)
    g2[57] = special                                     # one overflowing element
    before = [g1.asnumpy(), g2.asnumpy()]
    update = Counter()
    assert s.step([g1, g2], update) is False
    assert update.calls == 0
    assert s.loss_scale == 512.0 and s.num_skipped == 1 and s.num_steps == 1
    # a skipped step leaves the gradients alone (they are about to be recomputed)
    np.testing.assert_array_equal(g1.asnumpy(), before[0])
    np.testing.assert_array_equal(g2.asnumpy(), before[1])
    # the next finite step is taken, with gradients divided by the (new) scale
    g2[57] = 2.0
    assert s.step([g1, g2], update) is True
    assert update.calls == 1 and s.loss_scale == 512.0
    np.testing.assert_array_equal(g1.asnumpy(), np.full((3, 4), 8.0 / 512))
    np.testing.assert_array_equal(g2.asnumpy(), np.full(100, 2.0 / 512))


def test_growth_after_scale_window_good_steps():
    s = amp.DynamicLossScaler(init_scale=8.0, scale_window=3)
    assert [s.update_scale(False) for _ in range(7)] == [8, 8, 16, 16, 16, 32, 32]
    # an overflow restarts the count of good steps in a row
    assert s.update_scale(True) == 16
    assert [s.update_scale(False) for _ in range(3)] == [16, 16, 32]
    assert [s.update_scale(False), s.update_scale(True), s.update_scale(False),
            s.update_scale(False), s.update_scale(False)] == [32, 16, 16, 16, 32]
    assert s.num_steps == 16 and s.num_skipped == 2


def test_growth_with_step():
    s = amp.DynamicLossScaler(init_scale=4.0, scale_window=5)
    update = Counter()
    for i in range(5):
        assert s.loss_scale == 4.0
        g = mx.nd.array([4.0, 8.0])
        assert s.step([g], update)
        np.testing.assert_array_equal(g.asnumpy(), [1.0, 2.0])   # unscaled by 4
    assert update.calls == 5 and s.loss_scale == 8.0


def test_tolerance_counts_overflows_since_the_last_rescale():
    s = amp.DynamicLossScaler(init_scale=2.0 ** 10, tolerance=0.5, scale_window=100)
    # overflow on the first step after a rescale: 1 of 1 >= 0.5 -> shrink
    assert s.update_scale(True) == 2.0 ** 9
    # 1 overflow in 2 steps: 0.5 -> shrink
    assert [s.update_scale(False), s.update_scale(True)] == [2.0 ** 9, 2.0 ** 8]
    # 1 in 3: tolerated; then 2 in 4: shrink
    assert [s.update_scale(False), s.update_scale(False), s.update_scale(True)] == [2.0 ** 8] * 3
    assert s.update_scale(True) == 2.0 ** 7


def test_scale_is_clamped():
    s = amp.DynamicLossScaler(init_scale=4.0, min_scale=2.0, max_scale=8.0, scale_window=1)
    assert [s.update_scale(True) for _ in range(3)] == [2.0, 2.0, 2.0]
    assert [s.update_scale(False) for _ in range(4)] == [4.0, 8.0, 8.0, 8.0]


def test_has_overflow_and_unscale():
    s = amp.DynamicLossScaler(init_scale=4.0)
    assert s.has_overflow([]) is False
    assert s.has_overflow([None, mx.nd.ones((2,))]) is False
    assert s.has_overflow([mx.nd.ones((2,)), mx.nd.array([0.0, np.nan], dtype="float16")])
    g = mx.nd.array([4.0, -8.0], dtype="float16")
    s.unscale([g, None])
    a, b = s.scale([mx.nd.array([1.0]), mx.nd.array([-3.0])])
    assert (a.asscalar(), b.asscalar()) == (4.0, -12.0)
    np.testing.assert_array_equal(g.asnumpy(), np.array([1.0, -2.0], np.float16))


def test_bad_arguments_name_the_argument():
    for kwargs, arg in [({"init_scale": 0}, "init_scale"), ({"init_scale": "x"}, "init_scale"),
                        ({"scale_factor": 1.0}, "scale_factor"),
                        ({"scale_window": 0}, "scale_window"),
                        ({"scale_window": 2.5}, "scale_window"),
                        ({"tolerance": -0.1}, "tolerance"), ({"tolerance": 1.5}, "tolerance"),
                        ({"min_scale": 0.0}, "min_scale"),
                        ({"init_scale": 2.0 ** 30}, "init_scale"),
                        ({"init_scale": float("nan")}, "init_scale")]:
        with pytest.raises(MXNetError, match=f"DynamicLossScaler.*{arg}"):
            amp.DynamicLossScaler(**kwargs)


# ---- end to end: a tiny model trained with autograd ------------------------------------------
def _problem(dtype, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((32, 4)) * scale).astype(dtype)
    w_true = np.array([[1.5], [-2.0], [0.5], [3.0]], dtype)
    return mx.nd.array(x, dtype=dtype), mx.nd.array(x @ w_true, dtype=dtype), w_true


def _loss(x, y, w):
    """Sum of squared residuals, from differentiable ops: ones(1, N) . (xw - y)^2."""
    r = mx.nd.dot(x, w) - y
    return mx.nd.dot(mx.nd.ones((1, r.shape[0]), dtype=r.dtype), mx.nd.square(r))


def _train(dtype, steps, lr, scaler=None, scale=1.0):
    x, y, w_true = _problem(dtype, scale)
    w = mx.nd.zeros((4, 1), dtype=dtype)
    w.attach_grad()
    losses, taken = [], []

    def sgd():
        w[:] = w - lr * w.grad

    for _ in range(steps):
        with mx.autograd.record():
            loss = _loss(x, y, w)
            if scaler is not None:
                with amp.scale_loss(loss, scaler) as scaled:
                    scaled.backward()
            else:
                loss.backward()
        losses.append(float(loss.asscalar()))
        if scaler is None:
            sgd()
            taken.append(True)
        else:
            taken.append(scaler.step([w.grad], sgd))
    return w.asnumpy(), w_true, losses, taken


def test_training_with_a_power_of_two_scale_matches_unscaled_training():
    """Scaling by 2**k and unscaling is exact in float32 when nothing overflows, so the
    whole trajectory equals plain training."""
    w_plain, w_true, losses_plain, _ = _train("float32", 40, 0.005)
    scaler = amp.DynamicLossScaler(init_scale=2.0 ** 16, scale_window=10)
    w_amp, _, losses_amp, taken = _train("float32", 40, 0.005, scaler)
    assert all(taken) and scaler.loss_scale == 2.0 ** 20      # grew 4 times, never skipped
    np.testing.assert_array_equal(w_amp, w_plain)
    np.testing.assert_array_equal(losses_amp, losses_plain)
    assert losses_plain[-1] < 1e-3 * losses_plain[0]
    np.testing.assert_allclose(w_plain, w_true, atol=1e-2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # NumPy notes the overflow too
def test_float16_training_skips_overflowing_steps_until_the_scale_fits():
    """Gradients of ~1e3 times 2**16 overflow float16 (max 65504): the first steps are
    skipped with the weights untouched and the scale halves each time; once it fits,
    training proceeds and converges."""
    scaler = amp.DynamicLossScaler(init_scale=2.0 ** 16, scale_window=1000)
    x, y, w_true = _problem("float16")
    w = mx.nd.zeros((4, 1), dtype="float16")
    w.attach_grad()
    with mx.autograd.record():
        loss = _loss(x, y, w)
    loss.backward()
    g_max = float(np.abs(w.grad.asnumpy()).max())
    assert 1.0 < g_max < 65504 / 2 ** 4       # finite unscaled; times 2**16 it overflows
    w_end, _, losses, taken = _train("float16", 60, 0.01, scaler)
    skipped = taken.index(True)
    # at least as many halvings as bring g_max * scale under float16's maximum (the
    # intermediate values of the backward pass may need one or two more)
    assert skipped >= int(np.ceil(np.log2(g_max * 2.0 ** 16 / 65504)))
    assert all(taken[skipped:])
    assert scaler.num_skipped == skipped
    assert scaler.loss_scale == 2.0 ** 16 / 2 ** skipped
    assert g_max * scaler.loss_scale < 65504             # the scale that fits
    assert losses[:skipped + 1] == [losses[0]] * (skipped + 1)   # skipped: weights unchanged
    assert losses[-1] < 1e-2 * losses[0]
    np.testing.assert_allclose(w_end, w_true, atol=0.05)
