"""mxlite/gluon/contrib/cnn: DeformableConvolution and ModulatedDeformableConvolution -- with
zero offsets a regular convolution, with whole-pixel offsets a convolution of the shifted
image (NumPy shift written here), MXNet 1.9.1's names, shapes, reprs and outputs (fixture),
deferred input channels in a hybridized stack, and the errors."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.gluon import nn
from mxlite.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution

FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                       "gluon_conv_rnn_mxnet.npz")
LAYERS = [DeformableConvolution, ModulatedDeformableConvolution]


def _regular_conv(layer, x):
    k = layer._kwargs_deformable_conv
    bias = layer.deformable_conv_bias
    return mx.nd.Convolution(x, layer.deformable_conv_weight.data(),
                             None if bias is None else bias.data(), no_bias=bias is None,
                             kernel=k["kernel"], stride=k["stride"], pad=k["pad"],
                             dilate=k["dilate"], num_filter=k["num_filter"],
                             num_group=k["num_group"])


@pytest.mark.parametrize("make", LAYERS)
@pytest.mark.parametrize("hybridize", [False, True])
def test_zero_offsets_make_a_regular_convolution(make, hybridize):
    """The offset convolution starts at zero: no move, and the modulated layer's mask is
    2 * sigmoid(0) = 1."""
    layer = make(6, kernel_size=(3, 2), strides=(1, 2), padding=1, groups=2,
                 bias_initializer="normal")
    layer.initialize()
    if hybridize:
        layer.hybridize()
    x = mx.nd.array(np.random.default_rng(0).normal(size=(2, 4, 7, 6)))
    np.testing.assert_allclose(layer(x).asnumpy(), _regular_conv(layer, x).asnumpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make", LAYERS)
def test_whole_pixel_offsets_shift_the_image(make):
    """Every tap moved one pixel right (offset x = 1, y = 0): the convolution of the image
    shifted left by one column, zero beyond the border."""
    layer = make(3, kernel_size=3, num_deformable_group=1)
    layer.initialize()
    x = np.random.default_rng(1).normal(size=(1, 2, 6, 7))
    layer(mx.nd.array(x))
    offset_bias = np.zeros(layer.offset_bias.shape)
    offset_bias[1:18:2] = 1.0                    # per tap (y, x): every x offset is 1
    layer.offset_bias.set_data(mx.nd.array(offset_bias))
    shifted = np.zeros_like(x)
    shifted[..., :-1] = x[..., 1:]
    np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(),
                               _regular_conv(layer, mx.nd.array(shifted)).asnumpy(),
                               rtol=1e-5, atol=1e-5)


FIXTURE_CASES = {
    "dconv": lambda: DeformableConvolution(4, kernel_size=3, num_deformable_group=2,
                                           prefix="dc_"),
    "mdconv": lambda: ModulatedDeformableConvolution(4, kernel_size=(3, 2), strides=(2, 1),
                                                     groups=2, prefix="md_"),
    "dconv_nobias": lambda: DeformableConvolution(2, kernel_size=(2, 3), use_bias=False,
                                                  offset_use_bias=False, activation="relu",
                                                  prefix="dn_"),
}


@pytest.mark.parametrize("case", sorted(FIXTURE_CASES))
def test_matches_mxnet(case):
    data = np.load(FIXTURE)
    ref = {k[len(case) + 1:]: data[k] for k in data.files if k.startswith(case + "/")}
    layer = FIXTURE_CASES[case]()
    layer.initialize()
    x = mx.nd.array(ref["x"])
    layer(x)
    params = layer.collect_params()
    assert sorted(params.keys()) == list(ref["names"])
    assert {n: p.shape for n, p in params.items()} == \
        {n: tuple(ref["shape:" + n]) for n in ref["names"]}
    if case != "mdconv":                # MXNet's modulated layer had no repr of its own
        assert repr(layer) == str(ref["repr"])
    for name in ref["names"]:
        params[name].set_data(mx.nd.array(ref["param:" + name]))
    np.testing.assert_allclose(layer(x).asnumpy(), ref["result0"], rtol=1e-5, atol=1e-5)


def test_hybridized_stack_infers_every_input_channel_count():
    net = nn.HybridSequential()
    net.add(DeformableConvolution(6, kernel_size=(3, 2)),
            DeformableConvolution(4, kernel_size=1, num_deformable_group=2, activation="relu"),
            ModulatedDeformableConvolution(4, kernel_size=(2, 3), use_bias=False,
                                           num_deformable_group=4))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.default_rng(2).uniform(size=(2, 3, 8, 9)))
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert y.shape == (2, 4, 5, 6)
    assert net[0].offset_weight.shape == (12, 3, 3, 2)
    assert net[2].offset_weight.shape == (72, 4, 2, 3)
    assert np.isfinite(x.grad.asnumpy()).all()


@pytest.mark.parametrize("kwargs,match", [
    ({"layout": "NHWC"}, "only the 'NCHW' layout"),
    ({"channels": 5, "groups": 2}, "channels must be divisible by groups=2"),
    ({"in_channels": 3, "groups": 2}, "in_channels must be divisible by groups=2"),
    ({"kernel_size": (3, 3, 3)}, "kernel_size must be"),
    ({"channels": 0}, "channels must be a positive integer"),
    ({"num_deformable_group": 0}, "num_deformable_group must be a positive integer"),
    ({"adj": (1, 1)}, "adj"),
])
@pytest.mark.parametrize("make", LAYERS)
def test_bad_settings_are_clear_errors(make, kwargs, match):
    args = {"channels": 4, "kernel_size": 3, **kwargs}
    with pytest.raises(MXNetError, match=make.__name__ + ": " + match):
        make(**args)
