"""contrib.BatchNormWithReLU is relu(BatchNorm(...)): values, moving statistics and gradients
against the two ops composed (MXNet 1.9.1 gives the same, bit for bit, on 4-d data)."""
import numpy as np
import pytest

import mxlite as mx


def _inputs(seed, shape=(2, 3, 4, 5)):
    rng = np.random.default_rng(seed)
    c = shape[1]
    return (mx.nd.array(rng.standard_normal(shape)), mx.nd.array(rng.uniform(0.5, 1.5, c)),
            mx.nd.array(rng.uniform(-1, 1, c)), mx.nd.zeros(c), mx.nd.ones(c))


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (6, 3)])
def test_values_gradients_and_moving_statistics_are_relu_of_batchnorm(train, shape):
    fused, composed = _inputs(0, shape), _inputs(0, shape)
    for args in (fused, composed):
        for a in args[:3]:
            a.attach_grad()
    head = mx.nd.array(np.random.default_rng(1).standard_normal(shape))
    with mx.autograd.record(train_mode=train):
        y = mx.nd.contrib.BatchNormWithReLU(*fused, fix_gamma=False)
        z = mx.nd.relu(mx.nd.BatchNorm(*composed, fix_gamma=False))
    y.backward(head)
    z.backward(head)
    assert (y.asnumpy() >= 0).all() and (y.asnumpy() == 0).any()
    np.testing.assert_array_equal(y.asnumpy(), z.asnumpy())
    for a, b in zip(fused, composed):       # gradients of data, gamma, beta; moving stats
        got = a.grad if a.grad is not None else a
        want = b.grad if b.grad is not None else b
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-7)


def test_bad_input_names_the_operator():
    x, g, b, m, v = _inputs(0)
    with pytest.raises(mx.base.MXNetError, match="BatchNorm"):
        mx.nd.contrib.BatchNormWithReLU(x, mx.nd.ones(4), b, m, v)
