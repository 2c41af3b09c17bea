"""Hessian-vector product of a small MLP loss, checked against finite differences.

H v = d/dw <grad_w L(w), v>: one gradient with create_graph=True, then a second gradient of
its inner product with v. Nothing here is specific to the MLP: every op is differentiable
to any order.
"""
import numpy as np

import mxlite as mx
from mxlite import autograd


def mlp_loss(w1, w2, x, y):
    """Mean squared error of a 1-hidden-layer tanh network."""
    hidden = mx.nd.tanh(mx.nd.dot(x, w1))
    pred = mx.nd.dot(hidden, w2)
    return mx.nd.mean(mx.nd.square(pred - y))


def loss_grad(w1, w2, x, y, create_graph=False):
    """Gradients of the loss with respect to (w1, w2)."""
    w1, w2 = w1.detach(), w2.detach()
    w1.attach_grad()
    w2.attach_grad()
    with autograd.record():
        loss = mlp_loss(w1, w2, x, y)
    return autograd.grad(loss, [w1, w2], create_graph=create_graph), (w1, w2)


def hessian_vector_product(w1, w2, x, y, v1, v2):
    """(H v) for the stacked parameters (w1, w2) and direction (v1, v2)."""
    w1, w2 = w1.detach(), w2.detach()
    w1.attach_grad()
    w2.attach_grad()
    with autograd.record():
        loss = mlp_loss(w1, w2, x, y)
        g1, g2 = autograd.grad(loss, [w1, w2], create_graph=True)
        inner = mx.nd.sum(g1 * v1) + mx.nd.sum(g2 * v2)
    return autograd.grad(inner, [w1, w2])


def finite_difference_hvp(w1, w2, x, y, v1, v2, eps=1e-5):
    """(grad(w + eps v) - grad(w - eps v)) / 2 eps."""
    (p1, p2), _ = loss_grad(w1 + eps * v1, w2 + eps * v2, x, y)
    (m1, m2), _ = loss_grad(w1 - eps * v1, w2 - eps * v2, x, y)
    return (p1 - m1) / (2 * eps), (p2 - m2) / (2 * eps)


def main(seed=0):
    rng = np.random.default_rng(seed)

    def arr(*shape):
        return mx.nd.array(rng.standard_normal(shape), dtype="float64")

    x, y = arr(8, 5), arr(8, 1)
    w1, w2, v1, v2 = arr(5, 4), arr(4, 1), arr(5, 4), arr(4, 1)
    hv = hessian_vector_product(w1, w2, x, y, v1, v2)
    fd = finite_difference_hvp(w1, w2, x, y, v1, v2)
    err = max(float(np.abs(a.asnumpy() - b.asnumpy()).max()) for a, b in zip(hv, fd))
    return hv, fd, err


if __name__ == "__main__":
    hv, fd, err = main()
    print("H v (w1 block):\n", hv[0].asnumpy())
    print("max |H v - finite differences| =", err)
