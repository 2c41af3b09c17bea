"""Every oneDNN path against the reference (Cython) kernel of the same op, within float32
tolerance, and the rules of the per-call choice (mxlite/ops/onednn.py)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.ops import onednn
from onednn_spy import Spy, small_problems_too  # noqa: F401  (a fixture, used below)

pytestmark = [pytest.mark.cpu_only, pytest.mark.usefixtures("small_problems_too"),
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]


def both_ways(fn, *arrays):
    """``fn(*arrays)`` (NDArrays) with oneDNN on and off: the two results as NumPy."""
    with onednn.enabled(True):
        fast = [o.asnumpy() for o in fn(*arrays)]
    with onednn.enabled(False):
        ref = [o.asnumpy() for o in fn(*arrays)]
    return fast, ref


def close(fast, ref):
    for f, r in zip(fast, ref):
        scale = max(1.0, float(np.abs(r).max()))
        np.testing.assert_allclose(f, r, rtol=1e-4, atol=1e-5 * scale)


# (spatial, channels, filters, kernel, stride, pad, dilate, groups)
GEOMETRIES = [
    ((9,), 3, 4, (3,), (1,), (1,), (1,), 1),
    ((11,), 4, 6, (3,), (2,), (0,), (2,), 2),
    ((8, 8), 3, 8, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((9, 7), 8, 8, (3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((10, 10), 6, 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),     # depthwise
    ((12, 12), 4, 5, (5, 3), (2, 1), (2, 0), (1, 2), 1),
    ((7, 7), 16, 32, (1, 1), (1, 1), (0, 0), (1, 1), 1),
    # the last rows read by no window (ResNet's strided 1x1 shortcut on an even size)
    ((8, 8), 16, 32, (1, 1), (2, 2), (0, 0), (1, 1), 1),
    ((10, 9), 4, 6, (3, 3), (3, 2), (0, 1), (1, 1), 1),
    ((5, 6, 7), 2, 4, (3, 3, 3), (1, 2, 1), (1, 1, 0), (1, 1, 2), 2),
]


def _case(geo, batch=3, dtype="float32", seed=0):
    sp, c, f, k, s, p, d, g = geo
    rng = np.random.default_rng(seed)
    x = mx.nd.array(rng.standard_normal((batch, c) + sp), dtype=dtype)
    w = mx.nd.array(rng.standard_normal((f, c // g) + k), dtype=dtype)
    b = mx.nd.array(rng.standard_normal(f), dtype=dtype)
    attrs = dict(kernel=k, stride=s, pad=p, dilate=d, num_group=g)
    return x, w, b, attrs


@pytest.mark.parametrize("geo", GEOMETRIES)
def test_convolution_forward_and_both_gradients(geo, monkeypatch):
    spy = Spy(monkeypatch, "conv_forward", "conv_backward_data", "conv_backward_weights")
    x, w, b, attrs = _case(geo)
    f = geo[2]

    def step(x, w, b):
        for a in (x, w, b):
            a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, b, num_filter=f, **attrs)
            loss = (y * y).sum()
        loss.backward()
        return y, x.grad, w.grad, b.grad

    close(*both_ways(step, x, w, b))
    assert min(spy.calls.values()) >= 1, spy.calls


@pytest.mark.parametrize("geo", GEOMETRIES)
@pytest.mark.parametrize("adj", [0, 1])
def test_deconvolution_forward_and_gradients(geo, adj, monkeypatch):
    spy = Spy(monkeypatch, "conv_backward_data")
    sp, c, f, k, s, p, d, g = geo
    if adj >= max(s):
        pytest.skip("adj needs a stride above it")
    rng = np.random.default_rng(1)
    y = mx.nd.array(rng.standard_normal((2, c) + sp))
    w = mx.nd.array(rng.standard_normal((c, f // g) + k))
    b = mx.nd.array(rng.standard_normal(f))
    attrs = dict(kernel=k, stride=s, pad=p, dilate=d, num_group=g, adj=(adj,) * len(k))

    def step(y, w, b):
        for a in (y, w, b):
            a.attach_grad()
        with mx.autograd.record():
            out = mx.nd.Deconvolution(y, w, b, num_filter=f, no_bias=False, **attrs)
            loss = (out * out).sum()
        loss.backward()
        return out, y.grad, w.grad, b.grad

    close(*both_ways(step, y, w, b))
    assert spy.calls["conv_backward_data"] >= 1


def test_second_order_gradient_through_a_convolution_runs_on_onednn(monkeypatch):
    """A gradient penalty: d/dW of |d conv/d x|^2 is again Convolution, Deconvolution and
    _conv_weight_grad, each on oneDNN, and equal to the reference."""
    spy = Spy(monkeypatch, "conv_forward", "conv_backward_data", "conv_backward_weights")
    x, w, _, attrs = _case(GEOMETRIES[3], batch=2)

    def penalty(x, w):
        x.attach_grad()
        w.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, num_filter=8, no_bias=True, **attrs)
            (gx,) = mx.autograd.grad((y * y).sum(), [x], create_graph=True)
            pen = (gx * gx).sum()
        pen.backward()
        return pen, w.grad

    close(*both_ways(penalty, x, w))
    assert min(spy.calls.values()) >= 1, spy.calls


def _last(a):
    """A channels-first NumPy array in channels-last order (data, or a weight (O, *k, I))."""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


@pytest.mark.parametrize("geo", GEOMETRIES)
def test_channels_last_runs_natively_on_onednn_without_copies(geo, monkeypatch):
    """A channels-last Convolution, its data gradient and its weight gradient: oneDNN reads
    and writes the channels-last memory through strided channels-first views (no
    transposed copies), and the results are the channels-first layer's, transposed."""
    strided = []
    module = onednn._load()
    for name in ("conv_forward", "conv_backward_data", "conv_backward_weights"):
        real = getattr(module, name)

        def spy(*args, real=real, name=name):
            strided.append((name, not args[0].flags.c_contiguous))
            return real(*args)
        monkeypatch.setattr(module, name, spy)
    x, w, b, attrs = _case(geo)
    nd, f = len(geo[0]), geo[2]
    layout = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[nd]
    rng = np.random.default_rng(3)

    def step(x, w, b, layout):
        for a in (x, w, b):
            a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, b, num_filter=f, layout=layout, **attrs)
            loss = (y * head[layout]).sum()
        loss.backward()
        return [a.asnumpy() for a in (y, x.grad, w.grad, b.grad)]

    with onednn.enabled(False):
        ref = mx.nd.Convolution(x, w, b, num_filter=f, **attrs)
    head = {None: mx.nd.array(rng.standard_normal(ref.shape))}
    head[layout] = mx.nd.array(_last(head[None].asnumpy()))
    with onednn.enabled(False):
        want = step(x, w, b, None)
    got = step(*(mx.nd.array(_last(a.asnumpy())) for a in (x, w)), b, layout)
    close([got[0], got[1], got[2], got[3]], [_last(want[0]), _last(want[1]), _last(want[2]),
                                             want[3]])
    assert {n for n, s in strided if s} == {"conv_forward", "conv_backward_data",
                                            "conv_backward_weights"}, strided


@pytest.mark.parametrize("pool_type,grad_fn", [("max", "pool_max_backward"),
                                               ("avg", "pool_avg_backward")])
def test_channels_last_pooling_runs_natively_on_onednn_without_copies(pool_type, grad_fn,
                                                                      monkeypatch):
    """NHWC Pooling and its gradient: oneDNN pools the channels-last memory through strided
    channels-first views, and the results are the NCHW layer's, transposed."""
    strided = []
    module = onednn._load()
    for name in ("pool_forward", grad_fn):
        real = getattr(module, name)

        def spy(*args, real=real, name=name):
            strided.append((name, not args[0].flags.c_contiguous))
            return real(*args)
        monkeypatch.setattr(module, name, spy)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 9, 8))
    head = rng.standard_normal((2, 6, 5, 4))
    attrs = dict(kernel=(3, 2), stride=(2, 2), pad=(1, 0), pool_type=pool_type)

    def step(x, head, layout):
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(x, layout=layout, **attrs)
            loss = (y * head).sum()
        loss.backward()
        return [y.asnumpy(), x.grad.asnumpy()]

    with onednn.enabled(False):
        want = step(mx.nd.array(x), mx.nd.array(head), None)
    got = step(mx.nd.array(_last(x)), mx.nd.array(_last(head)), "NHWC")
    close(got, [_last(w) for w in want])
    assert {n for n, s in strided if s} == {"pool_forward", grad_fn}, strided


def test_float16_computes_in_float32_on_onednn(monkeypatch):
    spy = Spy(monkeypatch, "conv_forward")
    x, w, b, attrs = _case(GEOMETRIES[2], dtype="float16")
    fn = lambda x, w, b: [mx.nd.Convolution(x, w, b, num_filter=8, **attrs)]
    fast, ref = both_ways(fn, x, w, b)
    assert fast[0].dtype == np.float16
    np.testing.assert_allclose(fast[0].astype(np.float32), ref[0].astype(np.float32),
                               rtol=2e-3, atol=2e-2)
    assert spy.calls["conv_forward"] >= 1


def test_float64_and_integer_inputs_stay_on_the_reference_kernels(monkeypatch):
    spy = Spy(monkeypatch, "conv_forward")
    x, w, b, attrs = _case(GEOMETRIES[2], dtype="float64")
    y = mx.nd.Convolution(x, w, b, num_filter=8, **attrs)
    assert y.dtype == np.float64 and spy.calls["conv_forward"] == 0


def test_a_large_batch_runs_in_chunks_with_the_same_results(monkeypatch):
    """A batch whose activations pass 32 MiB (input and output: 6.4 MB per image here) runs
    through oneDNN in chunks of images (smaller blocked copies): 7 images as 5 + 2, two
    primitives. The forward, the data gradient (a deconvolution) and the weight gradient
    equal the reference's."""
    spy = Spy(monkeypatch, "conv_forward", "conv_backward_data")
    dnnl = onednn._load()
    rng = np.random.default_rng(5)
    x = mx.nd.array(rng.standard_normal((7, 16, 224, 224)).astype(np.float32))
    w = mx.nd.array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.1)
    attrs = dict(kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True)
    dnnl.clear()
    with onednn.enabled(True):
        mx.nd.Convolution(x, w, **attrs).wait_to_read()
    assert dnnl.cache_size() == 2

    def fn(x, w):
        x.attach_grad()
        w.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, **attrs)
        y.backward(mx.nd.ones_like(y))
        return [y, x.grad, w.grad]
    fast, ref = both_ways(fn, x, w)
    close(fast, ref)
    assert spy.ran["conv_forward"] >= 1 and spy.ran["conv_backward_data"] >= 1, spy.ran


def test_windows_stopping_short_of_the_data_run_on_onednn(monkeypatch):
    """A deconvolution whose adj exceeds its pad leaves rows that no window of the matching
    convolution reads (a negative right padding): oneDNN computes it with none, as its
    output size rounds down, and the result matches the reference."""
    spy = Spy(monkeypatch, "conv_backward_data")
    rng = np.random.default_rng(3)
    y = mx.nd.array(rng.standard_normal((1, 2, 4, 4)))
    w = mx.nd.array(rng.standard_normal((2, 3, 3, 3)))
    attrs = dict(kernel=(3, 3), stride=(3, 3), pad=(0, 0), adj=(2, 2), num_filter=3)
    fn = lambda y, w: [mx.nd.Deconvolution(y, w, **attrs)]
    fast, ref = both_ways(fn, y, w)
    close(fast, ref)
    assert spy.ran["conv_backward_data"] >= 1, spy.ran
    # the adjoint identity <conv(x, W), y> == <x, deconv(y, W)> pins the reference itself
    x = mx.nd.array(rng.standard_normal(fast[0].shape))
    conv = mx.nd.Convolution(x, w.transpose((1, 0, 2, 3)).transpose((1, 0, 2, 3)),
                             kernel=(3, 3), stride=(3, 3), num_filter=2, no_bias=True)
    lhs = float((conv.asnumpy() * y.asnumpy()).sum())
    rhs = float((x.asnumpy() * fast[0]).sum())
    assert abs(lhs - rhs) <= 1e-3 * max(1.0, abs(lhs))


def test_the_primitive_cache_is_bounded_and_can_be_cleared():
    dnnl = onednn._load()
    x, w, b, attrs = _case(GEOMETRIES[2])
    mx.nd.Convolution(x, w, b, num_filter=8, **attrs).wait_to_read()
    assert dnnl.cache_size() >= 1
    dnnl.clear()
    assert dnnl.cache_size() == 0
    for size in range(6, 14):           # a new problem per size
        x = mx.nd.ones((1, 3, size, size))
        mx.nd.Convolution(x, w, b, num_filter=8, **attrs).wait_to_read()
    assert 8 <= dnnl.cache_size() <= 4 * 64


def _choice_in_subprocess(env):
    code = ("import numpy as np; from mxlite.ops import onednn; "
            "a = np.ones(4, np.float32); "
            "print(onednn.primitives(type('X', (), {'name': 'cpu'})(), a) is not None)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize("env, expected", [({}, "True"), ({"MXLITE_ONEDNN": "0"}, "False"),
                                           ({"MXLITE_DETERMINISTIC": "1"}, "False"),
                                           ({"MXNET_ENFORCE_DETERMINISM": "1"}, "False")])
def test_switches(env, expected):
    base = {"MXLITE_ONEDNN": "1", "MXLITE_DETERMINISTIC": "0", "MXNET_ENFORCE_DETERMINISM": "0"}
    assert _choice_in_subprocess({**base, **env}) == expected


def test_deterministic_mode_gives_the_same_bits_for_any_thread_count():
    code = ("import numpy as np, mxlite as mx; rng = np.random.default_rng(0); "
            "x = mx.nd.array(rng.standard_normal((8, 16, 12, 12))); "
            "w = mx.nd.array(rng.standard_normal((16, 16, 3, 3))); x.attach_grad(); w.attach_grad()\n"
            "with mx.autograd.record():\n"
            "    y = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True)\n"
            "    z = (y * y).sum()\n"
            "z.backward()\n"
            "import sys; sys.stdout.buffer.write(y.asnumpy().tobytes() + x.grad.asnumpy().tobytes()"
            " + w.grad.asnumpy().tobytes())")
    outs = []
    for threads in ("1", "2"):
        env = {**os.environ, "MXLITE_DETERMINISTIC": "1", "OMP_NUM_THREADS": threads}
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   check=True).stdout)
    assert outs[0] == outs[1]


def test_arrays_past_the_int32_limit_are_not_handed_to_onednn():
    class Big:
        dtype = np.dtype(np.float32)
        size = 1 << 31
        flags = type("F", (), {"c_contiguous": True})()
    cpu = type("X", (), {"name": "cpu"})()
    with onednn.enabled(True):
        assert onednn.primitives(cpu, np.ones(3, np.float32)) is not None
        assert onednn.primitives(cpu, np.ones(3, np.float32), Big()) is None


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_dot_and_batch_dot_with_transposes(ta, tb, monkeypatch):
    spy = Spy(monkeypatch, "matmul")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((7, 5)).astype(np.float32)
    b = rng.standard_normal((5, 6)).astype(np.float32)
    A = mx.nd.array(a.T if ta else a)
    B = mx.nd.array(b.T if tb else b)
    fn = lambda A, B: [mx.nd.dot(A, B, transpose_a=ta, transpose_b=tb)]
    fast, ref = both_ways(fn, A, B)
    close(fast, ref)
    np.testing.assert_allclose(fast[0], a @ b, rtol=1e-5, atol=1e-5)
    a3 = rng.standard_normal((3, 4, 5)).astype(np.float32)
    b3 = rng.standard_normal((3, 5, 2)).astype(np.float32)
    A3 = mx.nd.array(a3.transpose(0, 2, 1) if ta else a3)
    B3 = mx.nd.array(b3.transpose(0, 2, 1) if tb else b3)
    fn = lambda A, B: [mx.nd.batch_dot(A, B, transpose_a=ta, transpose_b=tb)]
    fast, ref = both_ways(fn, A3, B3)
    close(fast, ref)
    np.testing.assert_allclose(fast[0], a3 @ b3, rtol=1e-5, atol=1e-5)
    assert spy.calls["matmul"] >= 2


def test_fully_connected_and_its_gradients(monkeypatch):
    spy = Spy(monkeypatch, "matmul")
    rng = np.random.default_rng(5)
    x = mx.nd.array(rng.standard_normal((6, 3, 4)))
    w = mx.nd.array(rng.standard_normal((8, 12)))
    b = mx.nd.array(rng.standard_normal(8))

    def step(x, w, b):
        for a in (x, w, b):
            a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.FullyConnected(x, w, b, num_hidden=8)
            loss = (y * y).sum()
        loss.backward()
        return y, x.grad, w.grad, b.grad

    close(*both_ways(step, x, w, b))
    assert spy.calls["matmul"] >= 3


def test_empty_products_fall_back_and_give_zeros():
    a = mx.nd.ones((3, 0))
    b = mx.nd.ones((0, 4))
    np.testing.assert_array_equal(mx.nd.dot(a, b).asnumpy(), np.zeros((3, 4), np.float32))


def test_fused_lstm_products_run_on_onednn(monkeypatch):
    """The RNN op's input projection and per-step recurrence are oneDNN matmuls (no BLAS
    call left in a float32 step: BLAS's spinning threads would slow the OpenMP ones)."""
    spy = Spy(monkeypatch, "matmul")
    rng = np.random.default_rng(6)
    layer = mx.gluon.rnn.LSTM(8, num_layers=2, input_size=5)
    layer.initialize(mx.init.Uniform(0.3))
    x = mx.nd.array(rng.standard_normal((7, 3, 5)))

    def step(x):
        x.attach_grad()
        with mx.autograd.record():
            y = layer(x)
            loss = (y * y).sum()
        loss.backward()
        return y, x.grad

    close(*both_ways(step, x))
    assert spy.calls["matmul"] >= 2 * 7


needs_bf16 = pytest.mark.skipif(mx.base.BFLOAT16 is None, reason="ml_dtypes is not installed")


def _rounded(a):
    """float32 values rounded to bfloat16, as float32."""
    return np.asarray(a, np.float32).astype(mx.base.BFLOAT16).astype(np.float32)


@needs_bf16
def test_bfloat16_convolution_runs_natively_with_float32_accumulation(monkeypatch):
    """bfloat16 operands go to oneDNN as they are (no float32 copy): the result is the
    float32 convolution of the bfloat16 values, rounded once (so within a bfloat16 ulp),
    and the gradients likewise."""
    spy = Spy(monkeypatch, "conv_forward", "conv_backward_data", "conv_backward_weights")
    seen = []
    real = onednn._load().conv_forward
    monkeypatch.setattr(onednn._load(), "conv_forward",
                        lambda *a: (seen.append(a[0].dtype), real(*a))[1])
    x, w, _, attrs = _case(GEOMETRIES[3], batch=2)
    xb, wb = x.astype("bfloat16"), w.astype("bfloat16")
    for a in (xb, wb):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(xb, wb, num_filter=8, no_bias=True, **attrs)
        loss = (y.astype("float32") ** 2).sum()
    loss.backward()
    assert y.dtype == mx.base.BFLOAT16 and seen[0] == mx.base.BFLOAT16
    # the float64 reference on the bfloat16 values
    x64, w64 = (mx.nd.array(_rounded(a.asnumpy()), dtype="float64") for a in (xb, wb))
    for a in (x64, w64):
        a.attach_grad()
    with mx.autograd.record():
        y64 = mx.nd.Convolution(x64, w64, num_filter=8, no_bias=True, **attrs)
        l64 = (y64 ** 2).sum()
    l64.backward()
    tol = dict(rtol=2 ** -7, atol=2 ** -7 * np.abs(y64.asnumpy()).max())
    np.testing.assert_allclose(y.astype("float32").asnumpy(), y64.asnumpy(), **tol)
    for got, want in ((xb.grad, x64.grad), (wb.grad, w64.grad)):
        scale = np.abs(want.asnumpy()).max()
        np.testing.assert_allclose(got.astype("float32").asnumpy(), want.asnumpy(),
                                   rtol=2 ** -6, atol=2 ** -6 * scale)
    assert min(spy.calls.values()) >= 1, spy.calls


@needs_bf16
def test_bfloat16_products_run_natively(monkeypatch):
    spy = Spy(monkeypatch, "matmul")
    rng = np.random.default_rng(7)
    a = _rounded(rng.standard_normal((9, 16)))
    b = _rounded(rng.standard_normal((16, 5)))
    got = mx.nd.dot(mx.nd.array(a, dtype="bfloat16"), mx.nd.array(b, dtype="bfloat16"))
    assert got.dtype == mx.base.BFLOAT16
    want = a.astype(np.float64) @ b
    np.testing.assert_allclose(got.astype("float32").asnumpy(), want, rtol=2 ** -7,
                               atol=2 ** -7 * np.abs(want).max())
    assert spy.calls["matmul"] == 1


@needs_bf16
@pytest.mark.parametrize("on", [True, False])
def test_bfloat16_problems_onednn_refuses_or_does_not_run_compute_in_float32(on):
    """A bfloat16 deconvolution with a negative right padding (refused by oneDNN), and any
    bfloat16 layer with oneDNN off: float32 kernels on the bfloat16 values, rounded once."""
    rng = np.random.default_rng(8)
    y = _rounded(rng.standard_normal((1, 2, 4, 4)))
    w = _rounded(rng.standard_normal((2, 3, 3, 3)))
    attrs = dict(kernel=(3, 3), stride=(3, 3), pad=(0, 0), adj=(2, 2), num_filter=3)
    with onednn.enabled(on):
        got = mx.nd.Deconvolution(mx.nd.array(y, dtype="bfloat16"),
                                  mx.nd.array(w, dtype="bfloat16"), **attrs)
        conv = mx.nd.Convolution(mx.nd.array(y, dtype="bfloat16"),
                                 mx.nd.array(w[:, :2], dtype="bfloat16"), kernel=(3, 3),
                                 pad=(1, 1), num_filter=2, no_bias=True)
    want = mx.nd.Deconvolution(mx.nd.array(y, dtype="float64"), mx.nd.array(w, dtype="float64"),
                               **attrs).asnumpy()
    want_conv = mx.nd.Convolution(mx.nd.array(y, dtype="float64"),
                                  mx.nd.array(w[:, :2], dtype="float64"), kernel=(3, 3),
                                  pad=(1, 1), num_filter=2, no_bias=True).asnumpy()
    for g, ref in ((got, want), (conv, want_conv)):
        assert g.dtype == mx.base.BFLOAT16
        np.testing.assert_allclose(g.astype("float32").asnumpy(), ref, rtol=2 ** -8,
                                   atol=2 ** -8 * np.abs(ref).max())


def test_a_problem_whose_blocked_copies_would_multiply_memory_runs_on_the_reference():
    """A 1-channel image padded to 16 channels in oneDNN's blocked layout would take 16x its
    memory: such a problem is refused (the reference kernel runs, same values)."""
    dnnl = onednn._load()
    x = np.ones((1, 1, 2048, 2048), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    y = np.empty_like(x)
    with pytest.raises(dnnl.Refused, match="blocked copies and scratchpad"):
        dnnl.conv_forward(x, w, None, y, (1, 1), (1, 1), (1, 1), 1)
    got = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(3, 3), pad=(1, 1),
                            num_filter=1, no_bias=True).asnumpy()
    assert got[0, 0, 0, 0] == 4 and got[0, 0, 5, 5] == 9 and got[0, 0, -1, 7] == 6


def test_small_problems_run_on_the_reference_kernels(monkeypatch):
    """A primitive call has a fixed cost (reorders, OpenMP regions): below the measured
    crossover the reference kernel runs."""
    monkeypatch.setitem(onednn._state, "any_size", False)
    spy = Spy(monkeypatch, "conv_forward", "matmul")
    x, w, b, attrs = _case(GEOMETRIES[2])
    mx.nd.Convolution(x, w, b, num_filter=8, **attrs).wait_to_read()
    mx.nd.dot(mx.nd.ones((8, 8)), mx.nd.ones((8, 8))).wait_to_read()
    assert spy.calls == {"conv_forward": 0, "matmul": 0}
    mx.nd.dot(mx.nd.ones((256, 256)), mx.nd.ones((256, 256))).wait_to_read()   # 2**24
    big = mx.nd.ones((16, 32, 32, 32))
    mx.nd.Convolution(big, mx.nd.ones((32, 32, 3, 3)), kernel=(3, 3), num_filter=32,
                      no_bias=True).wait_to_read()                              # ~2**27
    assert spy.calls == {"conv_forward": 1, "matmul": 1}


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax_family_gradients_run_as_one_onednn_pass(name, axis, monkeypatch):
    """The FGradient of the softmax family is _softmax_grad / _log_softmax_grad: one oneDNN
    softmax-backward pass on the CPU along the last axis (along an outer axis oneDNN is many
    times slower, so the composed kernels run: softmax_grad._innermost), equal to the
    composed kernels and to NumPy's closed form."""
    spy = Spy(monkeypatch, "softmax_backward")
    rng = np.random.default_rng(9)
    x = mx.nd.array(rng.standard_normal((3, 5, 4)))
    g = rng.standard_normal((3, 5, 4)).astype(np.float32)

    def step(x):
        x.attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd, name)(x, axis=axis)
        y.backward(mx.nd.array(g))
        return y, x.grad

    fast, ref = both_ways(step, x)
    close(fast, ref)
    y = fast[0].astype(np.float64)
    g64 = g.astype(np.float64)
    if name == "log_softmax":
        want = g64 - np.exp(y) * g64.sum(axis=axis, keepdims=True)
    else:
        want = y * (g64 - (g64 * y).sum(axis=axis, keepdims=True))
        want = -want if name == "softmin" else want
    np.testing.assert_allclose(fast[1], want, rtol=1e-5, atol=1e-6)
    assert (spy.calls["softmax_backward"] >= 1) == (axis == -1)


@pytest.mark.parametrize("nsize", [1, 4, 5, 7])
def test_lrn_runs_on_onednn_with_mxnets_window_and_alpha(nsize, monkeypatch):
    """oneDNN divides alpha by its window's width; MXNet by nsize, whose window is
    ``2 * ((nsize - 1) // 2) + 1`` channels (one fewer for an even nsize): the forward
    matches the reference kernel for odd and even nsize, and the gradient (a graph of
    registered ops) is unchanged."""
    spy = Spy(monkeypatch, "lrn_forward")
    rng = np.random.default_rng(nsize)
    x = mx.nd.array(rng.standard_normal((2, 9, 5, 6)))
    kw = dict(nsize=nsize, alpha=0.3, beta=0.75, knorm=1.5)

    def step(x):
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.LRN(x, **kw)
            loss = (y * y).sum()
        loss.backward()
        return y, x.grad

    close(*both_ways(step, x))
    assert spy.ran["lrn_forward"] >= 1, spy.ran


def test_lrn_in_place_stays_on_the_reference_kernel(monkeypatch):
    spy = Spy(monkeypatch, "lrn_forward")
    x = mx.nd.array(np.random.default_rng(0).standard_normal((1, 6, 4, 4)))
    expected = mx.nd.LRN(x, nsize=3).asnumpy()
    mx.nd.LRN(x, nsize=3, out=x)
    np.testing.assert_allclose(x.asnumpy(), expected, rtol=1e-6)
    assert spy.calls["lrn_forward"] == 1, spy.calls      # the first call only


def test_scratch_is_not_kept_per_thread_when_freed_memory_stays_in_the_process():
    """With mxlite's malloc settings a freed scratch buffer is reused from the heap, so
    oneDNN's per-thread scratch keeps nothing between calls (a second copy otherwise);
    without them (MXLITE_MALLOC=system) it keeps up to 64 MiB per buffer."""
    from mxlite.device import memory
    module = onednn._load()
    keep = module.set_scratch_keep(123)
    module.set_scratch_keep(keep)
    assert keep == (0 if memory.configured else 64 << 20)
