"""``mx.np`` on every device (the ``device`` fixture: the CPU, and the GPU or its host
emulator with the CPU kernels refused): arrays stay on their device, and ufuncs,
promotion, reductions, indexing, products, autograd and a hybridized Gluon block give
NumPy's values there."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import autograd, gluon, np, npx


def _host(a):
    return a.asnumpy()


def test_np_arrays_stay_on_the_device(device):
    a = np.array([[1, 2, 3], [4, 5, 6]])
    assert a.ctx == device
    assert np.zeros((2, 2)).ctx == device
    b = np.ones((2, 3), ctx=device, dtype="int32")
    for y in (a + b, a * 2, np.sin(a), a.sum(axis=0), a[:, 1], a.T, a > 2, np.dot(a, a.T),
              np.concatenate([a, a]), a.reshape(-1)):
        assert isinstance(y, np.ndarray) and y.ctx == device


def test_np_values_on_the_device(device):
    rng = onp.random.default_rng(0)
    xh = rng.uniform(0.5, 2, (3, 4)).astype(onp.float32)
    ih = rng.integers(0, 5, (4,)).astype(onp.int32)
    x, i = np.array(xh), np.array(ih, dtype="int32")
    cases = [
        (x + i, xh + ih.astype(onp.float32)),
        (x / 2 - 1, xh / 2 - 1),
        (np.exp(x) * np.log(x), onp.exp(xh) * onp.log(xh)),
        (np.sum(x), xh.sum()),
        (np.mean(x, axis=1, keepdims=True), xh.mean(axis=1, keepdims=True)),
        (np.max(x, axis=0), xh.max(axis=0)),
        (np.argmax(x, axis=1), xh.argmax(axis=1)),
        (x[1:, ::2], xh[1:, ::2]),
        (x[x > 1], xh[xh > 1]),
        (np.matmul(x, x.T), xh @ xh.T),
        (np.where(x > 1, x, 0), onp.where(xh > 1, xh, 0)),
        (np.maximum(x, 1.5), onp.maximum(xh, 1.5)),
    ]
    for got, want in cases:
        assert got.dtype == onp.asarray(want).dtype or \
            (onp.asarray(want).dtype == onp.float64 and got.dtype == onp.float32)
        onp.testing.assert_allclose(_host(got), want, rtol=1e-5, atol=1e-6)


def test_np_autograd_on_the_device(device):
    x = np.array([0.5, 1.0, 2.0], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = (np.sin(x) * x).sum()
    y.backward()
    xh = x.asnumpy()
    onp.testing.assert_allclose(_host(x.grad), onp.sin(xh) + xh * onp.cos(xh), rtol=1e-12)


@pytest.mark.parametrize("hybridize", [False, True])
def test_np_gluon_on_the_device(device, hybridize):
    npx.set_np()
    try:
        net = gluon.nn.Dense(2, in_units=3)
        net.initialize(mx.init.Constant(0.25), ctx=device)   # (no CPU sampler on the GPU run)
        if hybridize:
            net.hybridize()
        x = np.ones((4, 3))
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        w = net.weight.data().asnumpy()
        b = net.bias.data().asnumpy()
        out = onp.ones((4, 3)) @ w.T + b
        assert isinstance(loss, np.ndarray) and loss.ctx == device
        onp.testing.assert_allclose(loss.item(), (out ** 2).sum(), rtol=1e-5)
        onp.testing.assert_allclose(_host(net.weight.grad()), (2 * out).T @ onp.ones((4, 3)),
                                    rtol=1e-5)
    finally:
        npx.reset_np()
