"""The channels-last rewrite of hybridized CPU graphs (mxlite/symbol/_channels_last.py): where
it applies, what it builds, and that a hybridized network computes the same outputs,
gradients (first and second order) and running statistics with it as without."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn
from mxlite.ops import onednn
from mxlite.symbol import _channels_last as channels_last
from mxlite.symbol.graph import topo_order
from onednn_spy import small_problems_too  # noqa: F401  (a fixture, used below)

pytestmark = [pytest.mark.cpu_only,
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]


def _chain():
    x = mx.sym.var("data")
    h = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=8, name="c1")
    h = mx.sym.Activation(mx.sym.BatchNorm(h, name="bn1"), act_type="relu")
    h = mx.sym.Convolution(h, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True, name="c2")
    return mx.sym.sum(h, axis=(2, 3))


def _ops(symbol):
    return [(n.op.name, n.attrs) for n in topo_order(symbol._outputs) if n.op is not None]


def test_a_conv_bn_relu_conv_chain_runs_channels_last_between_its_edges():
    rewritten = channels_last.rewrite(_chain())
    ops = _ops(rewritten)
    convs = [a for name, a in ops if name == "Convolution"]
    assert [a.layout for a in convs] == ["NHWC", "NHWC"]
    assert [a.axis for name, a in ops if name == "BatchNorm"] == [3]
    axes = sorted(tuple(a.axes) for name, a in ops if name == "transpose")
    # the data in, two weights, and the chain's result out before the spatial sum
    assert axes == [(0, 2, 3, 1)] * 3 + [(0, 3, 1, 2)]
    assert rewritten.list_arguments() == _chain().list_arguments()
    assert rewritten.list_auxiliary_states() == _chain().list_auxiliary_states()


def test_it_applies_only_where_it_pays(monkeypatch):
    f32 = {n: np.float32 for n in _chain().list_arguments()}
    big = {"data": (4, 3, 256, 256), "c1_weight": (8, 3, 3, 3), "c2_weight": (8, 8, 3, 3)}
    assert channels_last.wanted(_chain(), mx.cpu(), f32, big)
    assert not channels_last.wanted(_chain(), mx.cpu(), dict(f32, data=np.float64), big)
    small = dict(big, data=(1, 3, 256, 256))        # below MIN_PIXELS
    assert not channels_last.wanted(_chain(), mx.cpu(), f32, small)
    one = mx.sym.Convolution(mx.sym.var("data"), kernel=(3, 3), num_filter=4)
    assert not channels_last.wanted(one, mx.cpu(), f32, big)
    monkeypatch.setenv("MXLITE_CHANNELS_LAST", "0")
    assert not channels_last.wanted(_chain(), mx.cpu(), f32, big)


class _Net(gluon.HybridBlock):
    """Two residual stages (conv-BN-relu-conv-BN, add, relu), max and global pooling, a
    dense head: every kind of edge the rewrite makes."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(8, 3, padding=1, in_channels=3)
        self.pool = nn.MaxPool2D(2)
        self.a = nn.HybridSequential()
        self.a.add(nn.Conv2D(8, 3, padding=1, in_channels=8, use_bias=False),
                   nn.BatchNorm(in_channels=8), nn.Activation("relu"),
                   nn.Conv2D(8, 3, padding=1, in_channels=8), nn.BatchNorm(in_channels=8))
        self.head = nn.Dense(5, in_units=8)

    def hybrid_forward(self, F, x):
        h = self.pool(F.relu(self.stem(x)))
        h = F.relu(h + self.a(h))
        return self.head(F.mean(h, axis=(2, 3)))


def _twins():
    """Two hybridized copies of one network, with the same parameters."""
    nets = [_Net(), _Net()]
    for net in nets:
        net.initialize(mx.init.Xavier())
        net.hybridize()
    for p, q in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        q.set_data(p.data().copy())
    return nets


def _step(net, x, second_order):
    params = list(net.collect_params().values())
    x.attach_grad()
    with autograd.record():
        y = net(x)
        loss = (y * y).sum()
        if second_order:
            (gx,) = autograd.grad(loss, [x], create_graph=True)
            loss = loss + (gx * gx).sum()
    loss.backward()
    grads = [p.grad().asnumpy() for p in params if p.grad_req != "null"]
    stats = [p.data().asnumpy() for p in params if p.grad_req == "null"]
    return [y.asnumpy(), x.grad.asnumpy()] + grads + stats


@pytest.mark.usefixtures("small_problems_too")     # oneDNN takes the small layers too
@pytest.mark.parametrize("second_order", [False, True])
def test_a_hybridized_network_gives_the_same_results_either_way(second_order, monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 12, 12)).astype(np.float32)
    monkeypatch.setattr(channels_last, "MIN_PIXELS", 1)     # the test's small images too
    rewritten, plain = _twins()
    calls = []
    real = channels_last.rewrite
    monkeypatch.setattr(channels_last, "rewrite", lambda s: calls.append(1) or real(s))
    got = _step(rewritten, mx.nd.array(x), second_order)
    assert calls, "the rewrite did not run"
    monkeypatch.setenv("MXLITE_CHANNELS_LAST", "0")
    want = _step(plain, mx.nd.array(x), second_order)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * scale)
