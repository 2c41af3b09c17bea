"""mx.autograd.Function (Python functions with their own backward, differentiable again),
mx.autograd.get_symbol (the tape as a Symbol), NDArray._fresh_grad and the names
``from mxnet.autograd import *`` gives. Expected values are NumPy closed forms."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError

X = np.array([0.5, -1.5, 2.0, 1.25])
Y = np.array([1.5, 0.5, -2.0, 4.0])


def _var(a, device=None):
    x = mx.nd.array(a, dtype="float64", ctx=device)
    x.attach_grad()
    return x


class DivMul(autograd.Function):
    """(x / y, x * y) with its hand-written gradient."""

    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x / y, x * y

    def backward(self, dm, dn):
        x, y = self.saved_tensors
        return dm / y + dn * y, dn * x - dm * x / y / y


class Cube(autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, dy):
        (x,) = self.saved_tensors
        return 3 * x * x * dy


def test_function_gradients_equal_the_closed_form(device):
    x, y = _var(X, device), _var(Y, device)
    with autograd.record():
        m, n = DivMul()(x, y)
    autograd.backward([m, n])
    np.testing.assert_allclose(m.asnumpy(), X / Y)
    np.testing.assert_allclose(x.grad.asnumpy(), 1 / Y + Y)
    np.testing.assert_allclose(y.grad.asnumpy(), X - X / Y ** 2)


def test_function_differentiates_to_third_order():
    x = _var(X)
    with autograd.record():
        y = Cube()(x)
        (d1,) = autograd.grad(y, x, create_graph=True)
        (d2,) = autograd.grad(d1, x, create_graph=True)
    (d3,) = autograd.grad(d2, x)
    np.testing.assert_allclose(d1.asnumpy(), 3 * X ** 2)
    np.testing.assert_allclose(d2.asnumpy(), 6 * X)
    np.testing.assert_allclose(d3.asnumpy(), np.full(X.shape, 6.0))


def test_function_outside_record_and_on_constants():
    y = Cube()(mx.nd.array(X, dtype="float64"))           # no tape: just the forward
    np.testing.assert_allclose(y.asnumpy(), X ** 3)
    with autograd.record():
        z = mx.nd.zeros((3, 4))                           # on no variable's path
        for _ in range(3):
            z = Cube()(z + 1)
    assert z.asnumpy()[0, 0] == ((1 + 1) ** 3 + 1) ** 3


def test_function_is_called_once_and_checks_its_backward():
    f = Cube()
    f(mx.nd.ones(2))
    with pytest.raises(MXNetError, match="Cube.*once"):
        f(mx.nd.ones(2))

    class TooMany(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy, dy

    class WrongShape(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return mx.nd.ones((7,))

    for cls, message in ((TooMany, "returned 2 gradient"), (WrongShape, r"shape \(7,\)")):
        x = _var(X)
        with autograd.record():
            y = cls()(x)
        with pytest.raises(MXNetError, match=f"{cls.__name__}.*{message}"):
            y.backward()


def test_function_returning_its_input_keeps_the_input_on_the_tape():
    class Identity(autograd.Function):
        def forward(self, x):
            return x

        def backward(self, dy):
            return dy * 5

    x = _var(X)
    with autograd.record():
        h = x * 1
        y = Identity()(h)
    assert y is not h
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full(X.shape, 5.0))


def test_get_symbol_has_the_recorded_ops_and_variables():
    x, z = _var(X), _var(Y)
    with autograd.record():
        y = x * x + 2 * z - 1
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ["var0", "var1"]
    (out,) = sym.eval(var0=mx.nd.array(X, dtype="float64"), var1=mx.nd.array(Y, dtype="float64"))
    np.testing.assert_allclose(out.asnumpy(), X * X + 2 * Y - 1)
    with autograd.record():
        w = mx.nd.sin(x) * mx.nd.array(Y, dtype="float64")     # a constant input
    assert sorted(autograd.get_symbol(w).list_arguments()) == ["const0", "var0"]


def test_get_symbol_refuses_what_has_no_symbol_form():
    with pytest.raises(MXNetError, match="no recorded history"):
        autograd.get_symbol(mx.nd.ones(2))
    x = _var(X)
    with autograd.record():
        y = Cube()(x)
    with pytest.raises(MXNetError, match="_CustomFunction"):
        autograd.get_symbol(y)
    with autograd.record():
        y = x * x
    y.backward()
    with pytest.raises(MXNetError, match="freed"):
        autograd.get_symbol(y)


def test_fresh_grad_follows_backward_writes():
    x, y = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    autograd.mark_variables([x, y], [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))])
    assert not x._fresh_grad and not y._fresh_grad
    with autograd.record():
        (x.detach() + y).backward()                     # only y's gradient is written
    assert y._fresh_grad and not x._fresh_grad
    y._fresh_grad = False
    assert not y._fresh_grad
    x._fresh_grad = True
    assert x._fresh_grad
    with pytest.raises(MXNetError, match="attach_grad"):
        mx.nd.ones(2)._fresh_grad = True


def test_star_import_gives_mxnets_names():
    names = {}
    exec("from mxlite.autograd import *", names)      # noqa: S102 - a fixed import statement
    for name in ("NDArray", "Symbol", "Function", "get_symbol", "record", "backward",
                 "mark_variables", "set_recording", "train_mode", "predict_mode"):
        assert name in names, name
    assert names["NDArray"] is mx.nd.NDArray


def test_set_recording_and_training_return_the_previous_state():
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True
    assert autograd.set_training(True) is False
    assert autograd.set_training(False) is True
