"""Whole models exported and run in onnxruntime, outputs equal to mxlite's (rtol 1e-5):
MXNet 1.9.1's own checkpoints (tests/fixtures), Gluon networks exported as blocks, a
dynamic batch axis at two batch sizes."""
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run, run_onnx

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures")
ROOT = os.path.dirname(os.path.dirname(FIXTURES))


@pytest.mark.parametrize("name", ["mlp", "convnet", "gluon_net"])
def test_mxnet_checkpoints_export_from_their_files(name, tmp_path):
    """MXNet 1.9.1's checkpoints, exported from the -symbol.json and .params paths (as MXNet's
    export_model takes them): the ONNX output is the output MXNet computed."""
    io = mx.nd.load(os.path.join(FIXTURES, f"{name}-io.params"))
    path = str(tmp_path / f"{name}.onnx")
    out = mx.onnx.export_model(os.path.join(FIXTURES, f"{name}-symbol.json"),
                               os.path.join(FIXTURES, f"{name}-0000.params"),
                               in_shapes=[io["data"].shape], in_types=[np.float32],
                               onnx_file_path=path)
    assert out == path
    got, = run_onnx(path, {"data": io["data"].asnumpy()})
    np.testing.assert_allclose(got, io["output"].asnumpy(), rtol=1e-5, atol=1e-6)


def _block_output_and_onnx(net, x, tmp_path, **kwargs):
    net.hybridize()
    expected = net(x).asnumpy()
    got, = export_and_run(net, None, {"data": x.asnumpy()}, tmp_path, **kwargs)
    return got, expected


def _examples_cnn():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import mnist_like
    finally:
        sys.path.pop(0)
    return mnist_like.build_net()


class ResidualBlock(mx.gluon.HybridBlock):
    def __init__(self, channels, stride, **kwargs):
        super().__init__(**kwargs)
        nn = mx.gluon.nn
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Conv2D(channels, 3, stride, 1, use_bias=False), nn.BatchNorm(),
                          nn.Activation("relu"), nn.Conv2D(channels, 3, 1, 1, use_bias=False),
                          nn.BatchNorm())
            self.down = nn.Conv2D(channels, 1, stride, use_bias=False) if stride > 1 else None

    def hybrid_forward(self, F, x):
        shortcut = self.down(x) if self.down is not None else x
        return F.relu(self.body(x) + shortcut)


def _resnet_style():
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(),
                nn.Activation("relu"), ResidualBlock(8, 1), ResidualBlock(16, 2),
                nn.GlobalAvgPool2D(), nn.Dense(10))
    return net


def _critic():
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2D(16, 4, 2, 1),
                nn.LeakyReLU(0.2), nn.Flatten(), nn.Dense(1))
    return net


class EncoderBlock(mx.gluon.HybridBlock):
    """Pre-LayerNorm self-attention (batch_dot, softmax) and a GELU MLP, both residual."""

    def __init__(self, d=16, heads=4, **kwargs):
        super().__init__(**kwargs)
        nn = mx.gluon.nn
        self.d, self.heads = d, heads
        with self.name_scope():
            self.ln1, self.ln2 = nn.LayerNorm(in_channels=d), nn.LayerNorm(in_channels=d)
            self.qkv = nn.Dense(3 * d, flatten=False, in_units=d)
            self.proj = nn.Dense(d, flatten=False, in_units=d)
            self.ffn1 = nn.Dense(2 * d, flatten=False, in_units=d)
            self.gelu = nn.GELU()
            self.ffn2 = nn.Dense(d, flatten=False, in_units=2 * d)

    def hybrid_forward(self, F, x):
        h = self.heads
        q, k, v = F.split(self.qkv(self.ln1(x)), num_outputs=3, axis=2)
        q, k, v = (F.reshape(F.transpose(F.reshape(t, shape=(0, 0, h, -1)), axes=(0, 2, 1, 3)),
                             shape=(-3, 0, 0)) for t in (q, k, v))
        scores = F.batch_dot(q, k, transpose_b=True) * (1.0 / np.sqrt(self.d // h))
        att = F.batch_dot(F.softmax(scores, axis=-1), v)
        att = F.reshape(F.transpose(F.reshape(att, shape=(-4, -1, h, 0, 0)), axes=(0, 2, 1, 3)),
                        shape=(0, 0, -1))
        x = x + self.proj(att)
        return x + self.ffn2(self.gelu(self.ffn1(self.ln2(x))))


MODELS = {
    "examples_cnn": (_examples_cnn, (3, 1, 16, 16)),
    "resnet_style": (_resnet_style, (2, 3, 16, 16)),
    "wgan_critic": (_critic, (2, 3, 16, 16)),
    "transformer_block": (EncoderBlock, (2, 6, 16)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_gluon_networks_export_as_blocks(name, tmp_path):
    build, shape = MODELS[name]
    mx.random.seed(1)
    net = build()
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.normal(shape=shape)
    net(x)                                   # deferred shapes
    for p in net.collect_params().values():  # BatchNorm statistics that are not 0 and 1
        if p.name.endswith(("running_mean", "running_var")):
            p.set_data(mx.nd.random.uniform(0.5, 1.5, shape=p.shape))
    got, expected = _block_output_and_onnx(net, x, tmp_path)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def hybridized(name, seed):
    """``(net, x)``: MODELS[name] initialised (Xavier, seeded), hybridized and called once
    on a random batch ``x`` of its shape."""
    build, shape = MODELS[name]
    mx.random.seed(seed)
    net = build()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.normal(shape=shape)
    net(x)
    return net, x


@pytest.mark.parametrize("name", ["examples_cnn", "transformer_block"])
def test_a_dynamic_batch_axis_runs_at_two_batch_sizes(name, tmp_path):
    net, x = hybridized(name, 2)
    shape = x.shape
    path = str(tmp_path / "dynamic.onnx")
    mx.onnx.export_model(net, None, in_shapes=[shape], onnx_file_path=path, dynamic=True)
    for batch in (1, 5):
        xb = mx.nd.random.normal(shape=(batch,) + shape[1:])
        got, = run_onnx(path, {"data": xb.asnumpy()})
        np.testing.assert_allclose(got, net(xb).asnumpy(), rtol=1e-5, atol=1e-5)
