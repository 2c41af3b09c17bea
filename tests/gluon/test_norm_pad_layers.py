"""mxlite/gluon/nn/norm_layers.py and padding_layers.py: GroupNorm against a NumPy group
normalization (values, finite-difference gradients, MXNet 1.9.1's fixture), BatchNormReLU
against NumPy batch normalization + ReLU, ReflectionPad2D against numpy.pad(mode='reflect'),
and the errors."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import nn
from mxlite.test_utils import check_grads

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "gluon_conv_rnn_mxnet.npz")


@pytest.fixture(scope="module")
def mxnet_ref():
    return np.load(FIXTURE)


def _group_norm(x, gamma, beta, groups, eps):
    """NumPy group normalization with one gamma/beta per group (MXNet 1.9.1)."""
    n, c = x.shape[:2]
    g = x.reshape((n, groups, -1)).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)) * gamma[None, :, None] + beta[None, :, None]
    return y.reshape(x.shape)


# ---- GroupNorm ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 1),
                                          ((2, 8, 3, 2, 2), 4), ((1, 5, 7), 5)])
@pytest.mark.parametrize("hybridize", [False, True])
def test_group_norm_matches_numpy(shape, groups, hybridize):
    rng = np.random.default_rng(sum(shape) + groups)
    x = rng.normal(2.0, 3.0, size=shape)
    layer = nn.GroupNorm(num_groups=groups, epsilon=1e-3)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    gamma, beta = rng.uniform(0.5, 2, groups), rng.uniform(-1, 1, groups)
    layer(mx.nd.array(x))                                     # finish deferred init
    layer.gamma.set_data(mx.nd.array(gamma))
    layer.beta.set_data(mx.nd.array(beta))
    got = layer(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(got, _group_norm(x, gamma, beta, groups, 1e-3), rtol=1e-4,
                               atol=1e-4)


def test_group_norm_gradients_by_finite_differences():
    """The layer's computation (its hybrid_forward with explicit gamma and beta) checked
    to second order in float64, for data, gamma and beta."""
    layer = nn.GroupNorm(num_groups=2)
    rng = np.random.default_rng(1)
    x = mx.nd.array(rng.normal(size=(2, 4, 3)), dtype="float64")
    gamma = mx.nd.array(rng.uniform(0.5, 2, 2), dtype="float64")
    beta = mx.nd.array(rng.uniform(-1, 1, 2), dtype="float64")
    check_grads(lambda data, g, b: layer.hybrid_forward(mx.nd, data, g, b), [x, gamma, beta],
                order=2, rtol=1e-4, atol=1e-6, name="GroupNorm layer")


def test_group_norm_center_scale_false_freeze_beta_gamma():
    layer = nn.GroupNorm(num_groups=2, center=False, scale=False)
    assert layer.gamma.grad_req == "null" and layer.beta.grad_req == "null"
    layer.initialize()
    x = np.random.default_rng(2).normal(size=(2, 4, 3))
    np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(),
                               _group_norm(x, np.ones(2), np.zeros(2), 2, 1e-5), rtol=1e-4,
                               atol=1e-5)


def test_group_norm_matches_mxnet(mxnet_ref):
    ref = {k[len("groupnorm/"):]: mxnet_ref[k] for k in mxnet_ref.files
           if k.startswith("groupnorm/")}
    layer = nn.GroupNorm(num_groups=3, prefix="gn_")
    assert sorted(layer.collect_params().keys()) == list(ref["names"])
    assert repr(layer) == str(ref["repr"])
    layer.initialize()
    layer.gamma.set_data(mx.nd.array(ref["gamma"]))
    layer.beta.set_data(mx.nd.array(ref["beta"]))
    np.testing.assert_allclose(layer(mx.nd.array(ref["x"])).asnumpy(), ref["result"],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("groups", [0, -1, 2.5, True, "2"])
def test_group_norm_rejects_bad_num_groups(groups):
    with pytest.raises(MXNetError, match="GroupNorm: num_groups must be a positive integer"):
        nn.GroupNorm(num_groups=groups)


def test_group_norm_groups_must_divide_channels():
    layer = nn.GroupNorm(num_groups=4)
    layer.initialize()
    with pytest.raises(MXNetError, match="num_groups=4.*6 channels"):
        layer(mx.nd.ones((2, 6, 3)))


# ---- BatchNormReLU --------------------------------------------------------------------------
def test_batch_norm_relu_is_batch_norm_then_relu(mxnet_ref):
    layer = nn.BatchNormReLU(in_channels=6)
    assert layer.name.startswith("batchnormrelu")
    assert repr(layer) == str(mxnet_ref["batchnormrelu/repr"])
    layer.initialize()
    x = np.random.default_rng(3).normal(1.0, 2.0, size=(4, 6, 3))
    with mx.autograd.record():                                  # training: batch statistics
        got = layer(mx.nd.array(x)).asnumpy()
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    want = np.maximum((x - mean) / np.sqrt(var + 1e-5), 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # the running statistics move as BatchNorm's: 0.9 * old + 0.1 * batch
    np.testing.assert_allclose(layer.running_mean.data().asnumpy(), 0.1 * mean.ravel(),
                               rtol=1e-4, atol=1e-6)


# ---- ReflectionPad2D ------------------------------------------------------------------------
@pytest.mark.parametrize("padding,np_width", [
    (2, ((0, 0), (0, 0), (2, 2), (2, 2))),
    ((0, 0, 0, 0, 1, 3, 0, 2), ((0, 0), (0, 0), (1, 3), (0, 2))),
    (0, ((0, 0),) * 4)])
@pytest.mark.parametrize("hybridize", [False, True])
def test_reflection_pad_matches_numpy(padding, np_width, hybridize):
    x = np.random.default_rng(4).normal(size=(2, 3, 5, 6)).astype(np.float32)
    layer = nn.ReflectionPad2D(padding)
    if hybridize:
        layer.hybridize()
    np.testing.assert_array_equal(layer(mx.nd.array(x)).asnumpy(),
                                  np.pad(x, np_width, mode="reflect"))


def test_reflection_pad_gradient_adds_back_the_reflected_entries():
    x = mx.nd.array(np.arange(12.0).reshape((1, 1, 3, 4)))
    x.attach_grad()
    with mx.autograd.record():
        y = nn.ReflectionPad2D(1)(x)
    y.backward(mx.nd.ones_like(y))
    # each input entry's gradient counts the output cells that copy it (numpy.pad of an
    # index map, counted)
    idx = np.pad(np.arange(12).reshape((3, 4)), 1, mode="reflect")
    np.testing.assert_array_equal(x.grad.asnumpy()[0, 0],
                                  np.bincount(idx.ravel(), minlength=12).reshape((3, 4)))


def test_reflection_pad_matches_mxnet(mxnet_ref):
    x = mx.nd.array(mxnet_ref["groupnorm/x"])
    layer = nn.ReflectionPad2D(2)
    assert layer.name.startswith("reflectionpad2d")
    np.testing.assert_array_equal(layer(x).asnumpy(), mxnet_ref["reflectionpad/result"])


@pytest.mark.parametrize("padding,match", [
    ((1, 2), "padding must be an int or a tuple of 8 ints"),
    ("3", "padding must be an int or a tuple of 8 ints"),
    (1.5, "padding must be an int or a tuple of 8 ints"),
    (-1, "padding must not be negative")])
def test_reflection_pad_rejects_bad_padding(padding, match):
    with pytest.raises(MXNetError, match="ReflectionPad2D: " + match):
        nn.ReflectionPad2D(padding)


def test_reflection_pad_wider_than_the_axis_is_an_error():
    with pytest.raises(MXNetError, match="reflect"):
        nn.ReflectionPad2D(3)(mx.nd.ones((1, 1, 3, 5)))


def test_gluon_nn_has_every_mxnet_1_9_1_layer():
    names = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
             "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda",
             "HybridLambda", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose",
             "Conv2DTranspose", "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D",
             "AvgPool1D", "AvgPool2D", "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D",
             "GlobalMaxPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D",
             "ReflectionPad2D", "Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "Swish",
             "GELU"]
    assert [n for n in names if not hasattr(nn, n)] == []
    assert set(names) <= set(nn.__all__)
