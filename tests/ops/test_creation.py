"""Conversions in mxlite/ops/creation.py: the gradient of ``cast`` (and of ``cumsum``'s
``dtype``) stops where float values become integers, at every order, in both front ends."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd

INTEGRAL = ["int8", "uint8", "int32", "int64", "bool"]


def _grad_of(fn, x):
    x = mx.nd.array(x, dtype="float32")
    x.attach_grad()
    with autograd.record():
        y = fn(x)
    y.backward()
    return x.grad.asnumpy()


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_cast_to_integral_has_zero_gradient(dtype):
    # floor-like maps are piecewise constant: d/dx (3 * int(x)) = 0 wherever it exists
    x = [3.7, 5.2, -2.5, 0.25]
    for fn in (lambda a: mx.nd.cast(a, dtype=dtype).astype("float32") * 3,
               lambda a: mx.nd.Cast(a, dtype=dtype).astype("float32") * 3,
               lambda a: a.astype(dtype).astype("float32") * 3):
        np.testing.assert_array_equal(_grad_of(fn, x), np.zeros(4, np.float32))


def test_integer_mod_of_cast_floats_has_zero_gradient():
    a = mx.nd.array([3.7, 5.2, -2.5])
    b = mx.nd.array([2.0, 3.0, 2.0])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        c = mx.nd.cast(a, dtype="int32") % mx.nd.cast(b, dtype="int32")
    c.backward()
    np.testing.assert_array_equal(c.asnumpy(), np.mod([3, 5, -2], [2, 3, 2]))
    np.testing.assert_array_equal(a.grad.asnumpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(b.grad.asnumpy(), np.zeros(3, np.float32))


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_cast_between_floats_passes_the_gradient(dtype):
    got = _grad_of(lambda a: a.astype(dtype) * 3, [3.7, -2.5])
    np.testing.assert_array_equal(got, np.full(2, 3, np.float32))


def test_cast_from_integers_keeps_identity_gradient():
    # an integer leaf: the cast is the identity on its values, so the gradient is 1
    x = mx.nd.array([1, 2, 3], dtype="int32")
    x.attach_grad()
    with autograd.record():
        y = x.astype("float32") * 2
    y.backward()
    assert x.grad.dtype == np.int32
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 2])


def test_cast_to_integer_second_order_is_zero():
    x = mx.nd.array([0.5, 1.5, -1.25])
    x.attach_grad()
    with autograd.record():
        y = x * x + x.astype("int64").astype("float32") * x
        (d1,) = autograd.grad(y, [x], create_graph=True)    # 2x + int(x)
    d1.backward()
    np.testing.assert_array_equal(d1.asnumpy(), 2 * np.array([0.5, 1.5, -1.25], np.float32)
                                  + np.trunc([0.5, 1.5, -1.25]).astype(np.float32))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(3, 2, np.float32))


def test_cumsum_to_integer_has_zero_gradient():
    got = _grad_of(lambda a: mx.nd.cumsum(a, dtype="int32").astype("float32"), [1.5, 2.5, 3.5])
    np.testing.assert_array_equal(got, np.zeros(3, np.float32))
    got = _grad_of(lambda a: mx.nd.cumsum(a, dtype="float64"), [1.5, 2.5, 3.5])
    np.testing.assert_array_equal(got, np.array([3, 2, 1], np.float32))


def test_symbolic_cast_to_integer_has_zero_gradient():
    x = mx.sym.var("x")
    y = mx.sym.cast(mx.sym.cast(x, dtype="int32"), dtype="float32") * 3 + x
    ex = y.simple_bind(mx.cpu(), x=(3,))
    ex.forward(is_train=True, x=mx.nd.array([1.5, -0.5, 2.0]))
    ex.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), np.ones(3, np.float32))


# the same class across families: every integer-valued op has derivative 0, at every order
_INTEGER_VALUED = {
    "floor": mx.nd.floor, "ceil": mx.nd.ceil, "round": mx.nd.round, "rint": mx.nd.rint,
    "fix": mx.nd.fix, "trunc": mx.nd.trunc, "sign": mx.nd.sign,
    "greater_scalar": lambda a: a > 0.5,
    "broadcast_equal": lambda a: mx.nd.broadcast_equal(a, mx.nd.full(a.shape, 2.5, dtype=a.dtype)),
    "cast_int32": lambda a: a.astype("int32").astype("float64"),
    "argmax": lambda a: mx.nd.argmax(a.reshape((2, 2)), axis=1).repeat(2),
}


@pytest.mark.parametrize("name", sorted(_INTEGER_VALUED))
def test_integer_valued_ops_have_zero_derivative_at_orders_1_and_2(name):
    f = _INTEGER_VALUED[name]
    xs = np.array([0.3, 1.7, -2.5, 2.5])
    fx = f(mx.nd.array(xs, dtype="float64")).asnumpy()
    x = mx.nd.array(xs, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = f(x) * x * x                     # d/dx = 2 f(x) x, d2/dx2 = 2 f(x) when f' = 0
        (d1,) = autograd.grad(y, [x], create_graph=True)
    d1.backward()
    np.testing.assert_array_equal(d1.asnumpy(), 2 * fx * xs)
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * fx)
