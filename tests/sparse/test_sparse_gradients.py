"""Gradients through sparse inputs that finite differences cannot check (tests/gradspecs/
sparse.py has the order-3 table): gradients defined rather than derived, and the backward
of a sparse head."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

MASK = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 1], [1, 0, 0]], dtype=np.float64)


def _sparse_of(x, stype):
    """``x`` (a recorded dense variable) on MASK's structure, as a ``stype`` array."""
    ones = mx.nd.array(MASK if stype == "csr" else (MASK.sum(1, keepdims=True) > 0) * 1.0
                       * np.ones_like(MASK), dtype="float64").tostype(stype)
    return mx.nd.elemwise_mul(x.tostype(stype), ones), ones.asnumpy()


# op -> (call, the gradient it defines given the head h and the structure's 0/1 mask)
DEFINED = {
    "BlockGrad": (lambda s: mx.nd.BlockGrad(s), lambda h, m: np.zeros_like(h)),
    "round_ste": (lambda s: mx.nd.contrib.round_ste(s), lambda h, m: h * m),
    "sign_ste": (lambda s: mx.nd.contrib.sign_ste(s), lambda h, m: h * m),
    "MakeLoss": (lambda s: mx.nd.MakeLoss(s, grad_scale=3.0), lambda h, m: 3.0 * m),
}


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
@pytest.mark.parametrize("name", sorted(DEFINED))
def test_defined_gradient_of_a_sparse_input(rng, name, stype):
    call, expected = DEFINED[name]
    x = mx.nd.array(rng.uniform(0.2, 1.0, MASK.shape), dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        s, mask = _sparse_of(x, stype)
        y = call(s)
    assert s.stype == stype
    h = rng.standard_normal(MASK.shape)
    y.backward(mx.nd.array(h, dtype="float64"))
    np.testing.assert_array_equal(x.grad.asnumpy(), expected(h, mask))


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_backward_of_a_sparse_head(rng, stype):
    """A sparse head's default head gradient is dense ones (it used to fail), and a head
    gradient of another shape is refused."""
    x = mx.nd.array(rng.uniform(0.2, 1.0, MASK.shape), dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        s, mask = _sparse_of(x, stype)
        y = mx.nd.square(s)
    assert y.stype == stype
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy() * mask, rtol=1e-15)
    h = rng.standard_normal(MASK.shape)
    mx.autograd.backward([y], [mx.nd.array(h, dtype="float64")], retain_graph=True)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy() * mask * h, rtol=1e-15)
    with pytest.raises(MXNetError, match="head_grads shape"):
        mx.autograd.backward([y], [mx.nd.ones((4, 2), dtype="float64")])
