"""Weights kept in oneDNN's layout (``onednn.keep_weights``): a convolution's weight is
reordered once per version of its parameter, and every way of changing a parameter is
seen -- a kept copy of an old version would be a silently wrong result."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.ops import onednn
from onednn_spy import small_problems_too  # noqa: F401  (a fixture, used below)

pytestmark = [pytest.mark.cpu_only, pytest.mark.usefixtures("small_problems_too"),
              pytest.mark.skipif(not onednn.available(), reason=onednn.status() or "")]


@pytest.fixture
def kept():
    """A weight budget for the test, none after it."""
    onednn.keep_weights(64 << 20)
    yield onednn._load()
    onednn.keep_weights(0)
    onednn._load().clear()


def _net(hybrid):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=3), gluon.nn.Activation("relu"),
            gluon.nn.Conv2D(4, 3, padding=1, in_channels=8))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize(static_alloc=True)
    return net


def _reference(net, x):
    """The output by the reference kernels (which leave the kept copies as they are)."""
    with onednn.enabled(False):
        return net(x).asnumpy()


X = mx.nd.array(np.random.default_rng(0).standard_normal((2, 3, 8, 8)), dtype="float32")


@pytest.mark.parametrize("hybrid", [True, False])
def test_kept_weights_follow_every_kind_of_write(kept, hybrid):
    net = _net(hybrid)
    first = net(X).asnumpy()
    assert kept.weight_cache_info()[0] >= 2          # both weights kept
    np.testing.assert_allclose(first, _reference(net, X), rtol=1e-5, atol=1e-5)
    w = net[0].weight
    writes = [
        lambda: w.set_data(w.data() * 0.5),
        lambda: w.data().__setitem__(slice(0, 1), 0.25),
        lambda: mx.nd.elemwise_mul(w.data(), w.data(), out=w.data()),
        lambda: w.data().__setitem__(slice(None), mx.nd.ones(w.shape)),
    ]
    seen = first
    for write in writes:
        write()
        out = net(X).asnumpy()
        np.testing.assert_allclose(out, _reference(net, X), rtol=1e-5, atol=1e-5)
        assert not np.array_equal(out, seen)
        seen = out


def test_kept_weights_follow_trainer_steps(kept):
    net = _net(True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    for _ in range(3):
        with autograd.record():
            loss = (net(X) ** 2).mean()
        loss.backward()
        trainer.step(1)
        np.testing.assert_allclose(net(X).asnumpy(), _reference(net, X), rtol=1e-5, atol=1e-5)


def test_a_buffer_handed_out_for_writes_is_never_kept(kept):
    """np.asarray and DLPack give the buffer itself: their writes move no version, so
    the weight is reordered on every call from then on."""
    for hand_out in (np.asarray, np.from_dlpack):
        net = _net(True)
        net(X)
        view = hand_out(net[0].weight.data())
        view[...] = 0.5                                   # unseen by mxlite's versions
        np.testing.assert_allclose(net(X).asnumpy(), _reference(net, X), rtol=1e-5,
                                   atol=1e-5)
        assert onednn.weight_stamp(net[0].weight.data()._data) is None


def test_kept_weights_stay_within_the_budget(kept):
    net = _net(True)
    net(X)
    whole = kept.weight_cache_info()[1]
    assert whole > 0
    onednn.keep_weights(whole - 1)                        # room for one of the two
    net(X)
    count, size = kept.weight_cache_info()
    assert count == 1 and 0 < size < whole
    np.testing.assert_allclose(net(X).asnumpy(), _reference(net, X), rtol=1e-5, atol=1e-5)


def test_no_budget_keeps_nothing():
    assert not onednn.keeping_weights()
    _net(True)(X)
    assert onednn._load().weight_cache_info() == (0, 0)


@pytest.mark.parametrize("value,expected", [
    ("48", "keeping 50331648"),
    ("lots", "MXLITE_ONEDNN_WEIGHT_CACHE_MB must be a number")])
def test_the_budget_from_the_environment(value, expected):
    code = ("from mxlite.ops import onednn\n"
            "try:\n    onednn.available()\nexcept Exception as e:\n    print(e)\n"
            "else:\n    print('keeping', onednn._kept['bytes'])\n")
    env = dict(os.environ, MXLITE_ONEDNN_WEIGHT_CACHE_MB=value)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert expected in out.stdout, out.stdout + out.stderr
