"""MakeLoss / make_loss (identity forward; gradient grad_scale / normaliser whatever the head
gradient) and BlockGrad / stop_gradient (identity forward; zero gradient), through mx.nd,
autograd, mx.sym and the executor. Expected values are closed forms in NumPy."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError

X = np.array([[0.5, -2.0, 3.0], [0.1, 0.0, -0.7]], dtype=np.float32)


def _expected_grad(x, grad_scale=1.0, normalization="null", valid_thresh=0.0):
    """MXNet's MakeLoss gradient: grad_scale / normaliser in every element."""
    if normalization == "batch":
        norm = x.shape[0]
    elif normalization == "valid":
        norm = max(int(np.sum(x > valid_thresh)), 1)
    else:
        norm = 1
    return np.full(x.shape, grad_scale / norm, dtype=x.dtype)


def _nd_grad(x_np, head=None, **kw):
    x = mx.nd.array(x_np, dtype=x_np.dtype)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.MakeLoss(x, **kw)
    y.backward(None if head is None else mx.nd.array(head))
    return y.asnumpy(), x.grad.asnumpy()


@pytest.mark.parametrize("kw", [
    {}, {"grad_scale": 2.5}, {"normalization": "batch"},
    {"normalization": "batch", "grad_scale": 0.5},
    {"normalization": "valid"}, {"normalization": "valid", "valid_thresh": 0.3,
                                 "grad_scale": 3.0},
    {"normalization": "valid", "valid_thresh": 10.0},      # no valid element: divide by 1
])
def test_forward_is_identity_and_gradient_is_scale_over_normaliser(kw):
    head = np.random.RandomState(0).uniform(-5, 5, X.shape)   # ignored
    y, g = _nd_grad(X, head=head, **kw)
    np.testing.assert_array_equal(y, X)
    np.testing.assert_allclose(g, _expected_grad(X, **kw), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_valid_count_is_exact_in_narrow_dtypes(dtype):
    # 3000 valid elements: a float16 count would stop at 2048 + rounding
    x = np.ones((3000,), dtype=dtype)
    _, g = _nd_grad(x, normalization="valid")
    np.testing.assert_allclose(g.astype(np.float64), 1.0 / 3000, rtol=1e-3)
    assert g.dtype == np.dtype(dtype)


def test_make_loss_is_makeloss_with_defaults():
    x = mx.nd.array(X)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.make_loss(x * x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * X, rtol=1e-6)
    assert mx.nd.make_loss.op is mx.nd.MakeLoss.op


def test_gradient_differentiates_again_to_zero():
    """The chain rule through MakeLoss: d/dx MakeLoss(x^2) = 2x * s / n; its derivative 2s/n;
    the gradient of MakeLoss's own gradient is zero, to every order."""
    x = mx.nd.array(X)
    x.attach_grad()
    s, n = 3.0, int(np.sum(X * X > 0.2))
    with autograd.record():
        y = mx.nd.MakeLoss(x * x, normalization="valid", valid_thresh=0.2, grad_scale=s)
        (d1,) = autograd.grad(y, x, create_graph=True)
        (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    np.testing.assert_allclose(d1.asnumpy(), 2 * X * s / n, rtol=1e-6)
    np.testing.assert_allclose(d2.asnumpy(), np.full(X.shape, 2 * s / n), rtol=1e-6)
    np.testing.assert_array_equal(d3.asnumpy(), 0.0)
    with autograd.record():
        y = mx.nd.MakeLoss(x, normalization="batch")
        (g,) = autograd.grad(y, x, create_graph=True)
    (gg,) = autograd.grad(g, x)
    np.testing.assert_array_equal(gg.asnumpy(), 0.0)


def test_symbol_executor_needs_no_head_gradient_and_json_round_trips():
    data = mx.sym.var("data")
    loss = mx.sym.MakeLoss(mx.sym.square(data), normalization="batch", grad_scale=4.0)
    loss = mx.sym.load_json(loss.tojson())
    ex = loss.bind(mx.current_context(), args={"data": mx.nd.array(X)},
                   args_grad={"data": mx.nd.zeros(X.shape)})
    (out,) = ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(out.asnumpy(), X * X, rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), 2 * X * 4.0 / X.shape[0],
                               rtol=1e-6)


@pytest.mark.parametrize("call, message", [
    (lambda: mx.nd.MakeLoss(mx.nd.array(1.0).reshape(()), normalization="batch"),
     "first (batch) axis"),
    (lambda: mx.nd.MakeLoss(mx.nd.array(X), normalization="mean"), "normalization"),
    (lambda: mx.nd.MakeLoss(mx.nd.array(X), grad_scale="big"), "grad_scale"),
])
def test_bad_arguments_name_the_op(call, message):
    """Bad parameters, and 'batch' normalization of a 0-d loss, raise naming MakeLoss."""
    with pytest.raises(MXNetError, match="MakeLoss") as err:
        call()
    assert message in str(err.value)


def test_block_grad_parity_nd_sym():
    """BlockGrad / stop_gradient: identity forward, zero gradient, in nd and sym alike."""
    assert mx.nd.stop_gradient.op is mx.nd.BlockGrad.op
    x = mx.nd.array(X)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.stop_gradient(x) * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), X, rtol=1e-6)
    data = mx.sym.var("data")
    sym = mx.sym.stop_gradient(data) * data
    ex = sym.bind(mx.current_context(), args={"data": mx.nd.array(X)},
                  args_grad={"data": mx.nd.zeros(X.shape)})
    (out,) = ex.forward(is_train=True)
    ex.backward(mx.nd.ones(X.shape))
    np.testing.assert_allclose(out.asnumpy(), X * X, rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), X, rtol=1e-6)


def test_a_scalar_loss_gets_grad_scale():
    """A 0-d loss (a summed loss) is accepted unless normalized by batch: its gradient is
    grad_scale whatever the head gradient."""
    x = mx.nd.array([1.5, -2.0])
    x.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.MakeLoss((x * x).sum().reshape(()), grad_scale=3.0)
    loss.backward(mx.nd.array(7.0).reshape(()))
    assert loss.shape == ()
    np.testing.assert_allclose(x.grad.asnumpy(), 3.0 * 2 * x.asnumpy())
