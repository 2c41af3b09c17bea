"""mxlite/gluon/loss.py's SDMLLoss: against a NumPy SDML loss (pairwise distances, smoothed
labels, KL divergence) written here and MXNet 1.9.1's fixture; hybridized; gradients by
finite differences; weight; errors."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon.loss import SDMLLoss
from mxlite.test_utils import check_grads

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "gluon_conv_rnn_mxnet.npz")


def _np_sdml(x1, x2, s):
    n = x1.shape[0]
    d = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=2)
    z = -d - (-d).max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    labels = np.where(np.eye(n) > 0, 1 - s, s / (n - 1))
    return (labels * (np.log(labels + 1e-12) - log_p)).sum(axis=1)


@pytest.mark.parametrize("smoothing", [0.3, 0.0, 0.9])
@pytest.mark.parametrize("hybridize", [False, True])
def test_sdml_matches_numpy(smoothing, hybridize):
    rng = np.random.default_rng(int(smoothing * 10))
    x1 = rng.normal(size=(6, 4))
    x2 = x1 + rng.normal(scale=0.5, size=(6, 4))
    loss = SDMLLoss(smoothing_parameter=smoothing)
    if hybridize:
        loss.hybridize()
    got = loss(mx.nd.array(x1, dtype="float64"), mx.nd.array(x2, dtype="float64"))
    np.testing.assert_allclose(got.asnumpy(), _np_sdml(x1, x2, smoothing), rtol=1e-6,
                               atol=1e-9)


def test_sdml_matches_mxnet():
    ref = np.load(FIXTURE)
    for s in (0.3, 0.0):
        got = SDMLLoss(smoothing_parameter=s)(mx.nd.array(ref["sdml/x1"]),
                                              mx.nd.array(ref["sdml/x2"]))
        np.testing.assert_allclose(got.asnumpy(), ref[f"sdml/result_{s}"], rtol=1e-5,
                                   atol=1e-6)


def test_sdml_gradients_by_finite_differences():
    rng = np.random.default_rng(1)
    x1 = mx.nd.array(rng.normal(size=(4, 3)), dtype="float64")
    x2 = mx.nd.array(rng.normal(size=(4, 3)), dtype="float64")
    loss = SDMLLoss()
    check_grads(lambda a, b: loss(a, b), [x1, x2], order=2, rtol=1e-4, atol=1e-6,
                name="SDMLLoss")


def test_sdml_weight_scales_the_loss():
    """MXNet 1.9.1 ignored weight; here it scales the loss."""
    rng = np.random.default_rng(2)
    x1, x2 = mx.nd.array(rng.normal(size=(3, 2))), mx.nd.array(rng.normal(size=(3, 2)))
    np.testing.assert_allclose(SDMLLoss(weight=2.5)(x1, x2).asnumpy(),
                               2.5 * SDMLLoss()(x1, x2).asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("shapes,match", [
    (((4, 3), (4, 2)), r"x1 and x2 must be \(batch, dim\) arrays of one shape"),
    (((4, 3, 1), (4, 3, 1)), r"x1 and x2 must be \(batch, dim\) arrays of one shape"),
    (((1, 3), (1, 3)), "needs a batch of at least 2 pairs"),
])
def test_sdml_bad_inputs_are_clear_errors(shapes, match):
    with pytest.raises(MXNetError, match="SDMLLoss: " + match):
        SDMLLoss()(mx.nd.ones(shapes[0]), mx.nd.ones(shapes[1]))


@pytest.mark.parametrize("kwargs,match", [({"smoothing_parameter": 1.0}, "smoothing_parameter"),
                                          ({"batch_axis": 1}, "batch_axis must be 0")])
def test_sdml_bad_settings_are_clear_errors(kwargs, match):
    with pytest.raises(MXNetError, match="SDMLLoss: " + match):
        SDMLLoss(**kwargs)
