"""gluon.loss: every loss against MXNet 1.9.1's outputs on the same inputs
(tests/fixtures/gluon_losses.npz, made by make_gluon_loss_fixture.py), against NumPy
formulas, hybridized, and under a gradient of a gradient."""
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import loss as gloss

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from make_gluon_loss_fixture import CASES  # noqa: E402

FIXTURE = np.load(os.path.join(HERE, "..", "fixtures", "gluon_losses.npz"))


def _inputs(case):
    n = len(CASES[case][2])
    return [FIXTURE[f"{case}/in{k}"] for k in range(n)]


def _loss(case):
    cls, kwargs, _ = CASES[case]
    return getattr(gloss, cls)(**kwargs)


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_matches_mxnet(case):
    got = _loss(case)(*[mx.nd.array(a) for a in _inputs(case)])
    want = FIXTURE[f"{case}/out"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hybridized_loss_matches_imperative(case):
    inputs = [mx.nd.array(a) for a in _inputs(case)]
    imperative = _loss(case)(*inputs).asnumpy()
    net = _loss(case)
    net.hybridize()
    np.testing.assert_allclose(net(*inputs).asnumpy(), imperative, rtol=1e-6, atol=1e-7)


def test_formulas_against_numpy(rng):
    pred, label = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    w = rng.uniform(0.5, 2, size=(4, 1))
    p, l_, sw = (mx.nd.array(a, dtype="float64") for a in (pred, label, w))
    np.testing.assert_allclose(gloss.L2Loss()(p, l_).asnumpy(),
                               (0.5 * (label - pred) ** 2).mean(axis=1))
    np.testing.assert_allclose(gloss.L1Loss(weight=3.0)(p, l_, sw).asnumpy(),
                               (3 * w * np.abs(label - pred)).mean(axis=1))
    d = np.abs(label - pred)
    np.testing.assert_allclose(gloss.HuberLoss(rho=0.7)(p, l_).asnumpy(),
                               np.where(d > 0.7, d - 0.35, 0.5 / 0.7 * d ** 2).mean(axis=1))
    z = (label > 0).astype("float64")
    sig = 1 / (1 + np.exp(-pred))
    bce = -(z * np.log(sig) + (1 - z) * np.log(1 - sig))
    np.testing.assert_allclose(
        gloss.SigmoidBCELoss()(p, mx.nd.array(z, dtype="float64")).asnumpy(),
        bce.mean(axis=1), rtol=1e-12)
    pos = rng.uniform(0.5, 2, size=(1, 3))
    weighted = -(pos * z * np.log(sig) + (1 - z) * np.log(1 - sig))
    np.testing.assert_allclose(
        gloss.SigmoidBCELoss()(p, mx.nd.array(z, dtype="float64"), None,
                               mx.nd.array(pos, dtype="float64")).asnumpy(),
        weighted.mean(axis=1), rtol=1e-12)
    logp = pred - np.log(np.exp(pred).sum(axis=1, keepdims=True))
    cls = np.array([0, 2, 1, 2])
    np.testing.assert_allclose(
        gloss.SoftmaxCELoss()(p, mx.nd.array(cls, dtype="float64")).asnumpy(),
        -logp[np.arange(4), cls], rtol=1e-12)


def test_poisson_nll_full_is_finite_for_zero_targets():
    """MXNet multiplied Stirling's term by the mask target > 1, which gives NaN at 0."""
    pred = mx.nd.array([[0.1, 0.5, 1.0]], dtype="float64")
    target = mx.nd.array([[0.0, 1.0, 3.0]], dtype="float64")
    got = gloss.PoissonNLLLoss(compute_full=True)(pred, target).asscalar()
    t, x = np.array([0.0, 1.0, 3.0]), np.array([0.1, 0.5, 1.0])
    base = np.exp(x) - t * x
    stirling = np.where(t > 1, t * np.log(np.maximum(t, 1)) - t
                        + 0.5 * np.log(2 * np.pi * np.maximum(t, 1)), 0)
    assert np.isfinite(got) and got == pytest.approx((base + stirling).mean(), rel=1e-12)


@pytest.mark.parametrize("case", ["l2", "sigmoid_bce", "softmax_ce_sparse", "huber", "kl_logits",
                                  "logistic", "cosine_embedding"])
def test_second_order_gradient_through_the_loss(case):
    """d/dx of |d loss / d pred|^2 by autograd vs central differences (float64)."""
    inputs = [a.astype("float64") for a in _inputs(case)]
    net = _loss(case)

    def penalty(x0, create_graph):
        x = mx.nd.array(x0, dtype="float64")
        x.attach_grad()
        with mx.autograd.record():
            out = net(x, *[mx.nd.array(a, dtype="float64") for a in inputs[1:]])
            g, = mx.autograd.grad(mx.nd.sum(out), [x], create_graph=True)
            pen = mx.nd.sum(g * g)
        if create_graph:
            pen.backward()
            return x.grad.asnumpy()
        return pen.asscalar()
    got = penalty(inputs[0], True)
    eps, x0 = 1e-6, inputs[0]
    numeric = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        hi, lo = x0.copy(), x0.copy()
        hi[idx] += eps
        lo[idx] -= eps
        numeric[idx] = (penalty(hi, False) - penalty(lo, False)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-8)
