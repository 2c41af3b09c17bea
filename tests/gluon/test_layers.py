"""Every nn layer: against the operator it wraps and a NumPy reference, hybridized vs
imperative (outputs and gradients), and gradients to order 2 (grad of grad, as a gradient
penalty takes) by finite differences in float64."""
import math

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.gluon import nn
from mxlite.test_utils import check_grads

nd = mx.nd
_erf = np.vectorize(math.erf)


def _windows(x, k, s):
    """Sliding windows of the trailing len(k) axes: shape (..., out..., k...)."""
    v = np.lib.stride_tricks.sliding_window_view(x, k, axis=tuple(range(-len(k), 0)))
    return v[(Ellipsis,) + tuple(slice(None, None, st) for st in s) + (slice(None),) * len(k)]


def np_conv(x, w, b, stride, pad):
    n = w.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    win = _windows(x, w.shape[2:], stride)          # N, C, out..., k...
    axes_x = [1] + list(range(2 + n, 2 + 2 * n))
    out = np.tensordot(win, w, axes=(axes_x, [1] + list(range(2, 2 + n))))  # N, out..., F
    out = np.moveaxis(out, -1, 1)
    return out + b.reshape((1, -1) + (1,) * n)


def np_deconv(x, w, b, stride, pad, adj):
    n = w.ndim - 2
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + k[i] + adj[i] for i in range(n)]
    out = np.zeros((x.shape[0], w.shape[1]) + tuple(full))
    for idx in np.ndindex(*x.shape[2:]):
        contrib = np.tensordot(x[(slice(None), slice(None)) + idx], w, axes=([1], [0]))
        sl = tuple(slice(idx[i] * stride[i], idx[i] * stride[i] + k[i]) for i in range(n))
        out[(slice(None), slice(None)) + sl] += contrib
    sl = tuple(slice(pad[i], full[i] - pad[i]) for i in range(n))
    return out[(slice(None), slice(None)) + sl] + b.reshape((1, -1) + (1,) * n)


def np_pool(x, k, kind):
    win = _windows(x, k, k)
    axes = tuple(range(-len(k), 0))
    return win.max(axis=axes) if kind == "max" else win.mean(axis=axes)


def np_norm(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def bshape(v, ndim, axis=1):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


# name -> (factory, input shape, NumPy reference f(x, params), the op call f(x, params))
SPECS = {
    "Dense": (lambda: nn.Dense(3, in_units=4), (2, 4),
              lambda x, p: x @ p["weight"].T + p["bias"],
              lambda x, p: nd.FullyConnected(x, p["weight"], p["bias"], num_hidden=3)),
    "Dense(tanh, flatten=False)": (
        lambda: nn.Dense(3, activation="tanh", flatten=False, in_units=4), (2, 5, 4),
        lambda x, p: np.tanh(x @ p["weight"].T + p["bias"]),
        lambda x, p: nd.Activation(nd.FullyConnected(x, p["weight"], p["bias"], num_hidden=3,
                                                     flatten=False), act_type="tanh")),
    "Dense(no bias)": (lambda: nn.Dense(2, use_bias=False, in_units=6), (3, 2, 3),
                       lambda x, p: x.reshape(3, 6) @ p["weight"].T,
                       lambda x, p: nd.FullyConnected(x, p["weight"], num_hidden=2,
                                                      no_bias=True)),
    "Dropout(predict)": (lambda: nn.Dropout(0.5), (3, 4), lambda x, p: x,
                         lambda x, p: nd.Dropout(x, p=0.5)),
    "BatchNorm": (lambda: nn.BatchNorm(in_channels=3), (4, 3, 2, 2),
                  lambda x, p: bshape(p["gamma"], 4) * np_norm(x, (0, 2, 3), 1e-5)
                  + bshape(p["beta"], 4),
                  lambda x, p: nd.BatchNorm(x, p["gamma"], p["beta"], p["running_mean"],
                                            p["running_var"], eps=1e-5, fix_gamma=False)),
    "LayerNorm": (lambda: nn.LayerNorm(in_channels=5), (3, 5),
                  lambda x, p: p["gamma"] * np_norm(x, (-1,), 1e-5) + p["beta"],
                  lambda x, p: nd.LayerNorm(x, p["gamma"], p["beta"], eps=1e-5)),
    "InstanceNorm": (lambda: nn.InstanceNorm(in_channels=3, scale=True), (2, 3, 4),
                     lambda x, p: bshape(p["gamma"], 3) * np_norm(x, (2,), 1e-5)
                     + bshape(p["beta"], 3),
                     lambda x, p: nd.InstanceNorm(x, p["gamma"], p["beta"], eps=1e-5)),
    "Flatten": (lambda: nn.Flatten(), (2, 3, 4), lambda x, p: x.reshape(2, 12),
                lambda x, p: nd.flatten(x)),
    "Activation(relu)": (lambda: nn.Activation("relu"), (3, 4),
                         lambda x, p: np.maximum(x, 0),
                         lambda x, p: nd.Activation(x, act_type="relu")),
    "Activation(sigmoid)": (lambda: nn.Activation("sigmoid"), (3, 4),
                            lambda x, p: 1 / (1 + np.exp(-x)),
                            lambda x, p: nd.Activation(x, act_type="sigmoid")),
    "LeakyReLU": (lambda: nn.LeakyReLU(0.1), (3, 4), lambda x, p: np.where(x > 0, x, 0.1 * x),
                  lambda x, p: nd.LeakyReLU(x, act_type="leaky", slope=0.1)),
    "PReLU": (lambda: nn.PReLU(in_channels=3), (2, 3, 4),
              lambda x, p: np.where(x > 0, x, bshape(p["alpha"], 3) * x),
              lambda x, p: nd.LeakyReLU(x, p["alpha"], act_type="prelu")),
    "ELU": (lambda: nn.ELU(0.7), (3, 4), lambda x, p: np.where(x > 0, x, 0.7 * np.expm1(x)),
            lambda x, p: nd.LeakyReLU(x, act_type="elu", slope=0.7)),
    "SELU": (lambda: nn.SELU(), (3, 4),
             lambda x, p: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772
                                                        * np.expm1(x)),
             lambda x, p: nd.LeakyReLU(x, act_type="selu")),
    "GELU": (lambda: nn.GELU(), (3, 4), lambda x, p: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
             lambda x, p: nd.LeakyReLU(x, act_type="gelu")),
    "Swish": (lambda: nn.Swish(1.5), (3, 4), lambda x, p: x / (1 + np.exp(-1.5 * x)),
              lambda x, p: x * nd.sigmoid(1.5 * x)),
    "Conv1D": (lambda: nn.Conv1D(3, 3, in_channels=2), (2, 2, 7),
               lambda x, p: np_conv(x, p["weight"], p["bias"], (1,), (0,)),
               lambda x, p: nd.Convolution(x, p["weight"], p["bias"], kernel=(3,),
                                           num_filter=3)),
    "Conv2D": (lambda: nn.Conv2D(3, 3, strides=2, padding=1, in_channels=2), (2, 2, 5, 6),
               lambda x, p: np_conv(x, p["weight"], p["bias"], (2, 2), (1, 1)),
               lambda x, p: nd.Convolution(x, p["weight"], p["bias"], kernel=(3, 3),
                                           stride=(2, 2), pad=(1, 1), num_filter=3)),
    "Conv1DTranspose": (lambda: nn.Conv1DTranspose(3, 3, in_channels=2), (2, 2, 5),
                        lambda x, p: np_deconv(x, p["weight"], p["bias"], (1,), (0,), (0,)),
                        lambda x, p: nd.Deconvolution(x, p["weight"], p["bias"], kernel=(3,),
                                                      num_filter=3, no_bias=False)),
    "Conv2DTranspose": (
        lambda: nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1,
                                   in_channels=2), (2, 2, 3, 4),
        lambda x, p: np_deconv(x, p["weight"], p["bias"], (2, 2), (1, 1), (1, 1)),
        lambda x, p: nd.Deconvolution(x, p["weight"], p["bias"], kernel=(3, 3), stride=(2, 2),
                                      pad=(1, 1), adj=(1, 1), num_filter=3, no_bias=False)),
    "MaxPool1D": (lambda: nn.MaxPool1D(2), (2, 3, 6), lambda x, p: np_pool(x, (2,), "max"),
                  lambda x, p: nd.Pooling(x, kernel=(2,), stride=(2,), pool_type="max")),
    "MaxPool2D": (lambda: nn.MaxPool2D(), (2, 3, 4, 6), lambda x, p: np_pool(x, (2, 2), "max"),
                  lambda x, p: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")),
    "AvgPool1D": (lambda: nn.AvgPool1D(3), (2, 3, 6), lambda x, p: np_pool(x, (3,), "avg"),
                  lambda x, p: nd.Pooling(x, kernel=(3,), stride=(3,), pool_type="avg")),
    "AvgPool2D": (lambda: nn.AvgPool2D(), (2, 3, 4, 6), lambda x, p: np_pool(x, (2, 2), "avg"),
                  lambda x, p: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg")),
    "GlobalAvgPool2D": (lambda: nn.GlobalAvgPool2D(), (2, 3, 4, 5),
                        lambda x, p: x.mean(axis=(2, 3), keepdims=True),
                        lambda x, p: nd.Pooling(x, global_pool=True, pool_type="avg",
                                                kernel=(1, 1))),
    "GlobalMaxPool2D": (lambda: nn.GlobalMaxPool2D(), (2, 3, 4, 5),
                        lambda x, p: x.max(axis=(2, 3), keepdims=True),
                        lambda x, p: nd.Pooling(x, global_pool=True, pool_type="max",
                                                kernel=(1, 1))),
    "HybridLambda": (lambda: nn.HybridLambda(lambda F, x: F.sin(x) * 2), (3, 4),
                     lambda x, p: np.sin(x) * 2, lambda x, p: nd.sin(x) * 2),
    "HybridLambda(name)": (lambda: nn.HybridLambda("tanh"), (3, 4), lambda x, p: np.tanh(x),
                           lambda x, p: nd.tanh(x)),
}
TRAIN_MODE = {"BatchNorm"}         # the rows whose reference is the training forward


def _make(name, seed=0):
    mx.random.seed(seed)
    layer = SPECS[name][0]()
    layer.initialize(mx.init.Normal(0.5))
    rng = np.random.RandomState(seed)
    for p in layer.collect_params().values():     # non-trivial gammas, betas, alphas
        if p.name.endswith(("gamma", "beta", "alpha", "bias")):
            p.set_data(nd.array(rng.uniform(0.5, 1.5, p.shape)))
    x = rng.standard_normal(SPECS[name][1]).astype(np.float32)
    return layer, x


def _params(layer):
    return {k: v.data() for k, v in layer._reg_params.items()}


def _forward(layer, x, train):
    with autograd.record(train_mode=train):
        return layer(x)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_layer_matches_op_and_numpy(name):
    layer, x = _make(name)
    train = name in TRAIN_MODE
    xs = nd.array(x)
    params = _params(layer)
    np_params = {k: v.asnumpy().astype(np.float64) for k, v in params.items()}
    out = _forward(layer, xs, train).asnumpy()
    copies = {k: v.copy() for k, v in params.items()}     # the op mutates running stats
    with autograd.record(train_mode=train):
        op_out = SPECS[name][3](xs, copies).asnumpy()
    np.testing.assert_array_equal(out, op_out)
    ref = SPECS[name][2](x.astype(np.float64), np_params)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-5)


def _imperative_and_hybridized(name, objective):
    """For the layer imperative, then hybridized: ``objective(output, input)`` under
    ``record()`` gives (loss, arrays); after ``loss.backward()``, those arrays, the input's
    gradient, the parameters' gradients and every parameter's value (running statistics
    included)."""
    train = name in TRAIN_MODE
    results = []
    for hybrid in (False, True):
        layer, x = _make(name)
        if hybrid:
            layer.hybridize()
        xs = nd.array(x)
        xs.attach_grad()
        with autograd.record(train_mode=train):
            loss, arrays = objective(layer(xs), xs)
        loss.backward()
        params = layer.collect_params().values()
        results.append([a.asnumpy() for a in arrays] + [xs.grad.asnumpy()]
                       + [p.grad().asnumpy() for p in params if p.grad_req != "null"]
                       + [p.data().asnumpy() for p in params])
    return results


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hybridized_equals_imperative(name):
    imperative, hybridized = _imperative_and_hybridized(
        name, lambda out, x: ((out * out).sum(), [out]))
    for a, b in zip(imperative, hybridized):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_hybridized_grad_of_grad_equals_imperative(name):
    """A gradient penalty through the hybridized layer (the cached graph replayed on the
    tape for the second order) equals the imperative one."""
    def penalty(out, x):
        (gx,) = autograd.grad((out * out).sum(), [x], create_graph=True)
        return (gx * gx).sum(), [gx]
    imperative, hybridized = _imperative_and_hybridized(name, penalty)
    for a, b in zip(imperative, hybridized):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_second_order_through_layer(name):
    """Gradients of order 1 and 2 of hybrid_forward with respect to the input and every
    trained parameter (what a gradient penalty differentiates), in float64."""
    layer, x = _make(name)
    layer.cast("float64")
    fixed = {k: v.data() for k, v in layer._reg_params.items() if v.grad_req == "null"}
    names = [k for k, v in layer._reg_params.items() if v.grad_req != "null"]
    args = [nd.array(x, dtype="float64")] + [layer._reg_params[k].data() for k in names]
    train = name in TRAIN_MODE

    def f(x, *ps):
        kw = dict(fixed, **dict(zip(names, ps)))
        kw = {k: (v.copy() if k in fixed else v) for k, v in kw.items()}
        with autograd.train_mode() if train else autograd.predict_mode():
            return layer.hybrid_forward(nd, x, **kw)
    check_grads(f, args, order=2, rtol=1e-4, atol=1e-6, name=name)


def test_embedding():
    layer = nn.Embedding(10, 4)
    layer.initialize()
    idx = nd.array([[1, 3], [9, 1]])
    w = layer.weight.data()
    out = layer(idx)
    np.testing.assert_array_equal(out.asnumpy(), w.asnumpy()[[[1, 3], [9, 1]]])
    np.testing.assert_array_equal(out.asnumpy(),
                                  nd.Embedding(idx, w, input_dim=10, output_dim=4).asnumpy())
    with autograd.record():
        (layer(idx) * 2).sum().backward()
    expect = np.zeros((10, 4))
    for i in (1, 3, 9, 1):
        expect[i] += 2
    np.testing.assert_array_equal(layer.weight.grad().asnumpy(), expect)
    layer.hybridize()
    np.testing.assert_array_equal(layer(idx).asnumpy(), out.asnumpy())


def test_dropout_training_mask_and_hybrid_gradient():
    layer = nn.Dropout(0.5)
    x = nd.ones((200, 10))
    x.attach_grad()
    with autograd.record():
        y = layer(x)
    y.backward()
    kept = y.asnumpy() != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_array_equal(y.asnumpy()[kept], 2.0)
    np.testing.assert_array_equal(x.grad.asnumpy(), kept * 2.0)     # the same mask
    layer.hybridize()
    with autograd.record():
        y = layer(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), (y.asnumpy() != 0) * 2.0)
    np.testing.assert_array_equal(layer(x).asnumpy(), 1.0)          # predict: identity


def test_batchnorm_running_stats():
    layer = nn.BatchNorm(in_channels=2, momentum=0.8)
    layer.initialize()
    x = np.random.RandomState(1).standard_normal((5, 2, 3)).astype(np.float32)
    with autograd.record():
        layer(nd.array(x))
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(layer.running_mean.data().asnumpy(), 0.2 * mean, rtol=1e-5)
    np.testing.assert_allclose(layer.running_var.data().asnumpy(), 0.8 + 0.2 * var,
                               rtol=1e-5)
    out = layer(nd.array(x)).asnumpy()          # inference: the running statistics
    rm, rv = 0.2 * mean, 0.8 + 0.2 * var
    np.testing.assert_allclose(out, (x - rm[None, :, None]) / np.sqrt(rv[None, :, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)


def test_lambda():
    layer = nn.Lambda(lambda x: x * 3)
    np.testing.assert_array_equal(layer(nd.ones((2,))).asnumpy(), [3, 3])
    assert nn.Lambda("exp")(nd.zeros((1,))).asnumpy().tolist() == [1.0]
    with pytest.raises(mx.MXNetError, match="not found"):
        nn.Lambda("no_such_function")
    with pytest.raises(mx.MXNetError, match="not found"):
        nn.HybridLambda("no_such_function")


def test_deferred_shapes():
    for layer, x, shapes in [
            (nn.Dense(3), (2, 5), [(3, 5), (3,)]),
            (nn.Conv2D(4, 3), (1, 2, 5, 5), [(4, 2, 3, 3), (4,)]),
            (nn.Conv2DTranspose(4, 3), (1, 2, 5, 5), [(2, 4, 3, 3), (4,)]),
            (nn.BatchNorm(), (2, 3, 4), [(3,)] * 4),
            (nn.LayerNorm(), (2, 6), [(6,), (6,)])]:
        layer.initialize()
        layer(nd.ones(x))
        assert [p.shape for p in layer.collect_params().values()] == shapes


def test_layer_errors():
    with pytest.raises(mx.MXNetError, match="layout"):
        nn.Conv2D(3, 3, layout="NCW")
    with pytest.raises(mx.MXNetError, match="kernel_size"):
        nn.Conv2D(3, (3, 3, 3))
    with pytest.raises(mx.MXNetError, match="alpha"):
        nn.LeakyReLU(-1)
    layer = nn.Dense(3, in_units=4)
    layer.initialize()
    with pytest.raises(mx.MXNetError, match="FullyConnected"):
        layer(nd.ones((2, 5)))



@pytest.mark.parametrize("layer, layout, shape", [
    ("Conv2D", "NHWC", (2, 7, 6, 3)),
    ("Conv3D", "NDHWC", (2, 5, 4, 6, 3)), ("Conv2DTranspose", "NHWC", (2, 7, 6, 3))])
def test_channels_last_conv_layers_infer_their_input_channels(layer, layout, shape):
    """A channels-last layer without in_channels finds the input channels on the data's
    last axis at the first call, and computes what the channels-first layer does on the
    transposed data with the transposed weight."""
    net = getattr(mx.gluon.nn, layer)(4, kernel_size=3, layout=layout)
    net.initialize()
    x = mx.nd.array(np.random.default_rng(0).normal(size=shape))
    y = net(x)
    w = net.weight.data()
    first = getattr(mx.gluon.nn, layer)(4, kernel_size=3, in_channels=3)
    first.initialize()
    last = x.ndim - 1
    to_first = (0, last) + tuple(range(1, last))
    to_last = (0,) + tuple(range(2, x.ndim)) + (1,)
    first.weight.set_data(w.transpose(to_first))    # (O, k.., C) -> (O, C, k..); deconv alike
    first.bias.set_data(net.bias.data())
    want = first(x.transpose(to_first)).transpose(to_last)
    np.testing.assert_allclose(y.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-5)
