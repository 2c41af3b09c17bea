"""oneDNN under Pooling (and its gradient ops), BatchNorm and LayerNorm: every oneDNN path
against the reference (Cython) kernel of the same op, within float32 tolerance, with a spy
proving the oneDNN path ran."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.ops import onednn
from onednn_spy import Spy, small_problems_too  # noqa: F401  (a fixture, used below)

pytestmark = [pytest.mark.cpu_only, pytest.mark.usefixtures("small_problems_too"),
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]


def both_ways(fn):
    """``fn()`` (a list of NDArrays) with oneDNN on and off, as NumPy."""
    with onednn.enabled(True):
        fast = [o.asnumpy() for o in fn()]
    with onednn.enabled(False):
        ref = [o.asnumpy() for o in fn()]
    return fast, ref


def close(fast, ref, rtol=1e-4):
    for f, r in zip(fast, ref):
        scale = max(1.0, float(np.abs(r).max()))
        np.testing.assert_allclose(f, r, rtol=rtol, atol=rtol * 0.1 * scale)


def _array(shape, seed=0, dtype="float32"):
    return mx.nd.array(np.random.default_rng(seed).standard_normal(shape), dtype=dtype)


# ---- pooling ---------------------------------------------------------------------------------
# (data shape, Pooling params)
POOLS = [
    ((2, 3, 11), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="max")),
    ((2, 3, 11), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="avg")),
    ((2, 4, 9, 8), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),
    ((2, 4, 9, 8), dict(kernel=(3, 2), stride=(2, 1), pad=(1, 0), pool_type="avg")),
    ((2, 4, 9, 8), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((2, 4, 9, 8), dict(kernel=(2, 3), stride=(2, 2), pad=(0, 1), pool_type="max",
                        pooling_convention="full")),
    ((2, 4, 10, 7), dict(kernel=(3, 3), stride=(3, 2), pad=(1, 1), pool_type="avg",
                         count_include_pad=False, pooling_convention="full")),
    ((2, 4, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        pooling_convention="full")),     # windows reach no farther than pad
    ((2, 4, 9, 8), dict(kernel=(1, 1), global_pool=True, pool_type="max")),
    ((2, 4, 9, 8), dict(kernel=(1, 1), global_pool=True, pool_type="avg")),
    ((1, 2, 5, 6, 7), dict(kernel=(2, 3, 3), stride=(1, 2, 2), pad=(1, 1, 0),
                           pool_type="max")),
    ((1, 2, 5, 6, 7), dict(kernel=(2, 2, 3), stride=(2, 2, 2), pad=(0, 1, 1),
                           pool_type="avg", count_include_pad=False,
                           pooling_convention="full")),
]


def _pool_step(shape, params, seed=0):
    x = _array(shape, seed)
    x.attach_grad()

    def step():
        with mx.autograd.record():
            y = mx.nd.Pooling(x, **params)
        head = _array(y.shape, seed + 1)
        y.backward(head)
        return [y, x.grad]
    return step


@pytest.mark.parametrize("shape, params", POOLS)
def test_pooling_forward_and_gradient_match_the_reference(shape, params, monkeypatch):
    spy = Spy(monkeypatch, "pool_forward", "pool_max_backward", "pool_avg_backward")
    fast, ref = both_ways(_pool_step(shape, params))
    close(fast, ref)
    assert spy.ran["pool_forward"] == 1
    backward = "pool_max_backward" if params["pool_type"] == "max" else "pool_avg_backward"
    # global avg pooling's backward stays on the reference kernel (faster there, measured)
    want = 0 if params.get("global_pool") and params["pool_type"] == "avg" else 1
    assert spy.ran[backward] == want


def test_max_pooling_gradient_goes_to_the_first_maximum_of_each_window(monkeypatch):
    """Ties everywhere (small integers): oneDNN and the reference send each window's gradient
    to the same element, the first maximum in row-major window order, as a loop over the
    windows in NumPy does."""
    spy = Spy(monkeypatch, "pool_max_backward")
    rng = np.random.default_rng(3)
    data = rng.integers(0, 3, (2, 3, 7, 7)).astype(np.float32)
    gy = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    want = np.zeros_like(data)
    for i in range(3):
        for j in range(3):
            win = data[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].reshape(2, 3, 9)
            first = win.argmax(axis=2)              # NumPy's argmax: the first maximum
            for n in range(2):
                for c in range(3):
                    a, b = divmod(int(first[n, c]), 3)
                    want[n, c, 2 * i + a, 2 * j + b] += gy[n, c, i, j]
    fast, ref = both_ways(lambda: [mx.nd._internal._pool_max_scatter(
        mx.nd.array(data), mx.nd.array(gy), kernel=(3, 3), stride=(2, 2), pad=(0, 0))])
    np.testing.assert_array_equal(fast[0], want)
    np.testing.assert_array_equal(ref[0], want)
    assert spy.ran["pool_max_backward"] == 1


def test_max_scatter_may_write_over_its_data(monkeypatch):
    spy = Spy(monkeypatch, "pool_max_backward")
    params = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    x, gy = _array((2, 3, 8, 8)), _array((2, 3, 4, 4), 1)
    want = mx.nd._internal._pool_max_scatter(x, gy, **params).asnumpy()
    with onednn.enabled(True):
        mx.nd._internal._pool_max_scatter(x, gy, out=x, **params)
    np.testing.assert_array_equal(x.asnumpy(), want)
    assert spy.ran["pool_max_backward"] == 2


@pytest.mark.parametrize("shape, params", [
    # avg counting the padding whose last window runs past the padded input ('full'):
    # MXNet's divisor stops at the padded input's end, oneDNN's would count the whole kernel
    ((1, 2, 8, 8), dict(kernel=(3, 3), stride=(2, 2), pad=(0, 0), pool_type="avg",
                        pooling_convention="full")),
    # a window covering only padding (MXNet: 0)
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(1, 1), pad=(2, 2), pool_type="max")),
])
def test_problems_where_onednn_differs_from_mxnet_stay_on_the_reference(shape, params,
                                                                       monkeypatch):
    spy = Spy(monkeypatch, "pool_forward")
    x = _array(shape)
    with onednn.enabled(True):
        fast = mx.nd.Pooling(x, **params).asnumpy()
    with onednn.enabled(False):
        ref = mx.nd.Pooling(x, **params).asnumpy()
    np.testing.assert_array_equal(fast, ref)
    assert spy.calls["pool_forward"] == 1 and spy.ran["pool_forward"] == 0


def test_avg_pooling_counting_padding_divides_as_mxnet(monkeypatch):
    """A closed form: ones, kernel 3, pad 1 on 4x4: a corner window covers 4 ones of 9."""
    spy = Spy(monkeypatch, "pool_forward")
    with onednn.enabled(True):
        y = mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(3, 3), stride=(3, 3), pad=(1, 1),
                          pool_type="avg").asnumpy()
        z = mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(3, 3), stride=(3, 3), pad=(1, 1),
                          pool_type="avg", count_include_pad=False).asnumpy()
    np.testing.assert_allclose(y[0, 0], [[4 / 9, 4 / 9], [4 / 9, 4 / 9]], rtol=1e-6)
    np.testing.assert_allclose(z[0, 0], np.ones((2, 2)), rtol=1e-6)
    assert spy.ran["pool_forward"] == 2


@pytest.mark.parametrize("shape, params", [
    ((2, 3, 6, 6), dict(kernel=(2, 2), stride=(2, 2), pad=(0, 0))),
    # 'full': the last windows run past the padded input (oneDNN's avg counting padding
    # divides by the whole kernel there too, so times the kernel's size is still the sum)
    ((2, 3, 8, 7), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 0), pooling_convention="full")),
    ((2, 3, 9), dict(kernel=(4,), stride=(3,), pad=(2,))),
])
def test_sum_pooling_runs_on_onednn_and_its_backward_on_the_reference(shape, params,
                                                                       monkeypatch):
    spy = Spy(monkeypatch, "pool_forward", "pool_avg_backward")
    fast, ref = both_ways(_pool_step(shape, dict(params, pool_type="sum")))
    close(fast, ref)
    assert spy.ran["pool_forward"] == 1 and spy.calls["pool_avg_backward"] == 0


def test_sum_pooling_is_the_window_sum():
    """NumPy's window sums of a padded copy (padding adds nothing)."""
    x = np.random.default_rng(5).standard_normal((1, 2, 7, 7)).astype(np.float32)
    with onednn.enabled(True):
        y = mx.nd.Pooling(mx.nd.array(x), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                          pool_type="sum", pooling_convention="full").asnumpy()
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 2), (1, 2)))
    want = np.array([[[[padded[n, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum()
                        for j in range(4)] for i in range(4)] for c in range(2)]
                     for n in range(1)])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_nearest_upsampling_gradient_runs_on_onednn(monkeypatch):
    spy = Spy(monkeypatch, "pool_forward")
    x = _array((2, 3, 4, 5))
    x.attach_grad()

    def step():
        with mx.autograd.record():
            y = mx.nd.UpSampling(x, scale=2, sample_type="nearest")
        y.backward(_array(y.shape, 1))
        return [x.grad]
    fast, ref = both_ways(step)
    close(fast, ref)
    assert spy.ran["pool_forward"] == 1


def test_lp_pooling_and_the_max_gather_stay_on_the_reference(monkeypatch):
    spy = Spy(monkeypatch, "pool_forward", "pool_max_backward", "pool_avg_backward")
    x = _array((2, 3, 6, 6))
    params = dict(kernel=(2, 2), stride=(2, 2), pad=(0, 0))
    fast, ref = both_ways(lambda: [mx.nd.Pooling(x, pool_type="lp", p_value=2, **params)])
    close(fast, ref)
    fast, ref = both_ways(lambda: [mx.nd._internal._pool_max_gather(x, x, **params)])
    np.testing.assert_array_equal(fast[0], ref[0])
    assert sum(spy.calls.values()) == 0


def test_second_order_gradient_through_max_pooling(monkeypatch):
    spy = Spy(monkeypatch, "pool_forward", "pool_max_backward")
    params = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    w = _array((2, 3, 9, 9), 4)

    def step():
        x = _array((2, 3, 9, 9))
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(x * w, **params)
            (gx,) = mx.autograd.grad((y * y).sum(), [x], create_graph=True)
            penalty = (gx * gx).sum()
        penalty.backward()
        return [gx, x.grad]
    fast, ref = both_ways(step)
    close(fast, ref)
    assert spy.ran["pool_forward"] >= 1 and spy.ran["pool_max_backward"] >= 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_floats_pool_in_float32_on_onednn(dtype, monkeypatch):
    spy = Spy(monkeypatch, "pool_forward")
    x = _array((2, 3, 8, 8), dtype=dtype)
    fast, ref = both_ways(lambda: [mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2),
                                                 pool_type="avg").astype("float32")])
    np.testing.assert_array_equal(fast[0], ref[0])     # both round one float32 result
    assert spy.ran["pool_forward"] == 1


def test_channels_last_pooling_goes_through_onednn(monkeypatch):
    spy = Spy(monkeypatch, "pool_forward", "pool_max_backward")
    fast, ref = both_ways(_pool_step((2, 8, 8, 3), dict(kernel=(3, 3), stride=(2, 2),
                                                         pad=(1, 1), layout="NHWC")))
    close(fast, ref)
    assert spy.ran["pool_forward"] == 1 and spy.ran["pool_max_backward"] == 1


@pytest.mark.parametrize("shape, out, kernel, stride, pad, kind", [
    ((1, 2, 6, 6), (1, 2, 3, 3), (2, 2), (0, 2), (0, 0), 0),      # a zero stride
    ((1, 2, 6, 6), (1, 2, 3, 3), (0, 2), (2, 2), (0, 0), 0),      # a zero kernel
    ((1, 2, 6, 6), (1, 2, 3, 3), (2, 2), (2, 2), (-1, 0), 0),     # a negative pad
    ((1, 2, 6, 6), (1, 2, 1, 1), (2, 2), (2, 2), (0, 0), 1),      # too few windows
    ((1, 2, 6, 6), (1, 2, 9, 9), (2, 2), (2, 2), (0, 0), 1),      # too many
    ((1, 2, 6, 6), (1, 3, 3, 3), (2, 2), (2, 2), (0, 0), 1),      # other channels
    ((1, 2, 6, 6), (1, 2, 3, 3), (2, 2, 2), (2, 2), (0, 0), 1),   # ranks
    ((1, 2, 6, 6), (1, 2, 3, 3), (2, 2), (2, 2), (0, 0), 7),      # no such kind
])
def test_the_pooling_wrapper_refuses_inconsistent_problems(shape, out, kernel, stride, pad,
                                                           kind):
    dnnl = onednn._load()
    with pytest.raises(dnnl.Refused):
        dnnl.pool_forward(np.ones(shape, np.float32), np.empty(out, np.float32), kernel,
                          stride, pad, kind)


def test_pooling_primitives_stay_bounded_over_many_shapes():
    """80 distinct problems, one table of at most 64 primitives (oneDNN's own cache off)."""
    dnnl = onednn._load()
    dnnl.clear()
    with onednn.enabled(True):
        for size in range(4, 84):
            mx.nd.Pooling(mx.nd.ones((1, 2, size, 3)), kernel=(2, 2)).wait_to_read()
    assert 1 <= dnnl.cache_size() <= 64
    dnnl.clear()
    assert dnnl.cache_size() == 0


def test_float64_pooling_stays_on_the_reference(monkeypatch):
    spy = Spy(monkeypatch, "pool_forward")
    mx.nd.Pooling(_array((1, 2, 6, 6), dtype="float64"), kernel=(2, 2)).asnumpy()
    assert spy.calls["pool_forward"] == 0


# ---- normalisation -----------------------------------------------------------------------------
# oneDNN's batch and layer normalisation are switched off (measured slower, see
# mxlite/ops/norm.py); these tests switch them on to prove they compute the same ops.
@pytest.fixture
def norm_on(monkeypatch):
    from mxlite.ops import norm
    monkeypatch.setattr(norm, "ONEDNN_NORM", True)
    return Spy(monkeypatch, "bnorm_forward", "lnorm_forward")


def _bn_step(shape, axis, fix_gamma, seed=0):
    c = shape[axis]
    x = mx.nd.array(3.0 + 2.0 * np.random.default_rng(seed).standard_normal(shape),
                    dtype="float32")
    gamma, beta = _array((c,), seed + 1), _array((c,), seed + 2)
    for a in (x, gamma, beta):
        a.attach_grad()

    def step():
        mm, mv = mx.nd.zeros(c), mx.nd.ones(c)
        with mx.autograd.record():
            y, mean, rstd = mx.nd.BatchNorm(x, gamma, beta, mm, mv, axis=axis, eps=1e-3,
                                            fix_gamma=fix_gamma, output_mean_var=True)
            loss = (y * _array(shape, seed + 3)).sum() + (mean * rstd).sum()
        loss.backward()
        return [y, mean, rstd, mm, mv, x.grad, gamma.grad, beta.grad]
    return step


@pytest.mark.parametrize("shape, axis, fix_gamma", [
    ((4, 32, 5, 6), 1, False),        # channels in blocks of 16
    ((4, 6, 5, 6), 1, True),          # plain NCHW
    ((16, 48), 1, False),             # (batch, channels): channels-last memory
    ((3, 5, 32), -1, False),
    ((2, 3, 4, 5, 6), 2, False),
])
def test_training_batchnorm_on_onednn_matches_the_reference(shape, axis, fix_gamma, norm_on):
    fast, ref = both_ways(_bn_step(shape, axis, fix_gamma))
    close(fast, ref)
    assert norm_on.ran["bnorm_forward"] == 1


def test_inference_batchnorm_and_the_default_stay_on_the_reference(monkeypatch):
    spy = Spy(monkeypatch, "bnorm_forward", "lnorm_forward")
    x = _array((4, 32, 3, 3))
    c = mx.nd.ones(32)
    with onednn.enabled(True):
        with mx.autograd.train_mode():          # ONEDNN_NORM is off by default (measured)
            mx.nd.BatchNorm(x, c, c, c, c).asnumpy()
        mx.nd.LayerNorm(x, mx.nd.ones(3), mx.nd.zeros(3)).asnumpy()
        from mxlite.ops import norm
        monkeypatch.setattr(norm, "ONEDNN_NORM", True)
        mx.nd.BatchNorm(x, c, c, c, c).asnumpy()            # inference: moving statistics
        mx.nd.BatchNorm(x, c, c, c, c, use_global_stats=True).asnumpy()
    assert sum(spy.calls.values()) == 0


def _ln_step(shape, axis, seed=0):
    c = shape[axis]
    x = mx.nd.array(1.0 + np.random.default_rng(seed).standard_normal(shape), dtype="float32")
    gamma, beta = _array((c,), seed + 1), _array((c,), seed + 2)
    for a in (x, gamma, beta):
        a.attach_grad()

    def step():
        with mx.autograd.record():
            y, mean, std = mx.nd.LayerNorm(x, gamma, beta, axis=axis, eps=1e-5,
                                           output_mean_var=True)
            (gx,) = mx.autograd.grad((y * y * _array(shape, seed + 3)).sum(), [x],
                                     create_graph=True)
            loss = (gx * gx).sum() + (mean * std).sum()
        loss.backward()
        return [y, mean, std, gx, x.grad, gamma.grad, beta.grad]
    return step


@pytest.mark.parametrize("shape, axis", [((16, 64), -1), ((2, 5, 24), 2), ((3, 7), 1)])
def test_layernorm_on_onednn_matches_the_reference_to_second_order(shape, axis, norm_on):
    fast, ref = both_ways(_ln_step(shape, axis))
    close(fast, ref)
    assert norm_on.ran["lnorm_forward"] >= 1


def test_layernorm_over_an_inner_axis_stays_on_the_reference(norm_on):
    x = _array((3, 8, 5))
    fast, ref = both_ways(lambda: [mx.nd.LayerNorm(x, mx.nd.ones(8), mx.nd.zeros(8), axis=1)])
    close(fast, ref)
    assert norm_on.calls["lnorm_forward"] == 0


def test_norm_wrappers_refuse_mismatched_arrays():
    dnnl = onednn._load()
    x = np.ones((4, 3, 2), np.float32)
    vec = np.zeros(3, np.float32)
    with pytest.raises(dnnl.Refused):          # y of another size
        dnnl.bnorm_forward(x, None, None, vec, vec, np.empty(5, np.float32), 4, 3, 2,
                           1e-3, True)
    with pytest.raises(dnnl.Refused):          # a statistics vector too short
        dnnl.bnorm_forward(x, None, None, vec[:2], vec, np.empty_like(x), 4, 3, 2, 1e-3, True)
    with pytest.raises(dnnl.Refused):          # float64
        dnnl.lnorm_forward(x.astype(np.float64), None, None, vec, vec,
                           np.empty(x.shape), 12, 2, 1e-5)


# ---- a model -----------------------------------------------------------------------------------
@pytest.mark.parametrize("hybridize", [False, True])
def test_a_small_cnn_trains_alike_with_onednn_on_and_off(hybridize, monkeypatch):
    """Convolution, BatchNorm, ReLU, max pooling, global avg pooling and a dense head: the
    loss and every parameter gradient of one step agree with oneDNN on and off."""
    spy = Spy(monkeypatch, "pool_forward", "pool_max_backward")
    nn = mx.gluon.nn

    def grads():
        net = nn.HybridSequential()
        net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(3, 2, 1), nn.Conv2D(8, 3, padding=1), nn.GlobalAvgPool2D(),
                nn.Dense(4))
        net.initialize(mx.init.Xavier(rnd_type="gaussian"))
        net(_array((2, 3, 12, 12)))
        rng = np.random.default_rng(7)
        for p in net.collect_params().values():
            p.set_data(mx.nd.array(rng.standard_normal(p.shape) * 0.3, dtype="float32"))
        if hybridize:
            net.hybridize()
        x = _array((4, 3, 12, 12), 8)
        with mx.autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        params = sorted(net.collect_params().items())
        return [loss] + [p.grad() for _, p in params if p.grad_req != "null"]
    fast, ref = both_ways(grads)
    close(fast, ref)
    assert spy.ran["pool_forward"] >= 1 and spy.ran["pool_max_backward"] >= 1
