"""Gradients of ``mx.np`` code to the third order, against finite differences in float64
(``mxlite.test_utils.check_grads``): the np functions compose registered operators, so their
derivatives of every order come from the operators' FGradients, through promotion casts,
0-d reductions, indexing and shape functions."""
import numpy as onp
import pytest

from mxlite import np
from mxlite.test_utils import check_grads

RNG = onp.random.default_rng(0)


def _x(*shape, low=0.5, high=1.5):
    return np.array(RNG.uniform(low, high, shape), dtype="float64")


CASES = {
    "ufuncs": (lambda x: np.sin(x) * x ** 2 + np.exp(-x) / (1 + x), [_x(3, 4)]),
    "log-sqrt-tanh": (lambda x: np.log1p(x) * np.sqrt(x) - np.tanh(x) ** 3, [_x(5)]),
    "broadcast": (lambda x, y: np.maximum(x * y, 0.9) + x / y, [_x(3, 1), _x(4)]),
    "reductions": (lambda x: np.sum(x ** 3) + np.mean(x, axis=0) * np.prod(x, axis=1)[0],
                   [_x(3, 3)]),
    "var-std": (lambda x: np.var(x, axis=1) + np.std(x), [_x(3, 5)]),
    "max-min": (lambda x: np.max(x, axis=1) * np.min(x), [_x(4, 3)]),
    "indexing": (lambda x: x[1:, ::2] * x[0, 1] + x[x > 1.0].sum(), [_x(3, 4)]),
    "shape": (lambda x: np.concatenate([x.T, x.reshape(4, 3) ** 2], axis=1).sum(axis=0)
              * np.flip(np.squeeze(np.expand_dims(x, 0)), 1)[0, 0], [_x(3, 4)]),
    "products": (lambda a, b: np.tensordot(np.matmul(a, b), b, axes=([1], [1])).sum()
                 + np.dot(a[0], b[:, 0]) ** 2, [_x(2, 3), _x(3, 3)]),
    "where-clip": (lambda x: np.where(x > 1, x ** 2, np.clip(x, 0.7, 0.9) * x), [_x(6)]),
    "outer-kron": (lambda a, b: np.outer(a, b).sum(axis=0) * np.kron(a, b)[:3], [_x(3), _x(3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_np_gradients_to_third_order(name):
    f, args = CASES[name]
    check_grads(f, args, order=3, name=name, rtol=1e-4, atol=1e-6)


def test_promotion_cast_carries_gradients_to_each_dtype():
    """A float32 operand meeting a float64 one is cast up; its gradient comes back in
    float32 and equals the float64 derivative rounded."""
    from mxlite import autograd
    a = np.array([0.5, 1.5], dtype="float32")
    b = np.array([2.0, 3.0], dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = (a * b + np.sin(a)).sum()
    y.backward()
    assert y.dtype == onp.float64 and a.grad.dtype == onp.float32
    onp.testing.assert_allclose(a.grad.asnumpy(), b.asnumpy() + onp.cos([0.5, 1.5]),
                                rtol=1e-6)
    onp.testing.assert_allclose(b.grad.asnumpy(), [0.5, 1.5])
