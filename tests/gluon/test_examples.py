"""The Gluon examples: examples/mnist_like.py trains, exports and re-imports;
examples/wgan_gp_gluon.py trains both networks through a gradient penalty taken through
the (hybridized) Gluon critic, whose weight gradients match the imperative critic's."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, nd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(name):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples",
                                                                     name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def values(text):
    out = {}
    for line in text.splitlines():
        label, sep, rest = line.rpartition(" = ")
        if sep:
            out[label] = rest
    return out


def test_mnist_like_trains_exports_and_reimports(capsys, tmp_path):
    mnist = load("mnist_like")
    mnist.main(["--epochs", "4", "--train-size", "3000", "--export-dir", str(tmp_path)])
    got = values(capsys.readouterr().out)
    assert got["re-imported predictions match"] == "True"
    assert float(got["test accuracy"]) > 0.6                 # chance is 0.1
    assert got["re-imported accuracy"] == got["test accuracy"]
    assert sorted(os.listdir(tmp_path)) == ["mnist_like-0000.params",
                                            "mnist_like-symbol.json"]


def test_mnist_like_digits():
    mnist = load("mnist_like")
    images, labels = mnist.make_dataset(20, seed=3)
    assert images.shape == (20, 1, 16, 16) and set(labels) <= set(range(10))
    eight = mnist.draw_digit(8, np.random.default_rng(0))
    one = mnist.draw_digit(1, np.random.default_rng(0))
    assert (eight > 0.5).sum() > 2 * (one > 0.5).sum()      # 8 lights every segment


@pytest.mark.parametrize("conv", [False, True], ids=["mlp", "conv"])
def test_wgan_gp_gluon_steps_update_both_networks(conv):
    wgan = load("wgan_gp_gluon")
    history = wgan.train(2, conv=conv, critic_iters=2, batch=16, hidden=16,
                         lam=10.0 if conv else 1.0, out=None)
    assert np.all(np.isfinite(history["wasserstein"] + history["penalty"]))
    assert history["fake"].shape == history["real"].shape
    mx.random.seed(0)           # train() seeds and builds the same way: these are its start
    _, _, generator, critic = wgan.build(conv, 16)
    for net in (generator, critic):
        net.initialize(mx.init.Xavier())
    for start, trained in zip((generator, critic), history["nets"]):
        for a, b in zip(start.collect_params().values(), trained.collect_params().values()):
            if a.name.endswith("weight") and a.shape == b.shape:
                assert not np.array_equal(a.data().asnumpy(), b.data().asnumpy()), a.name


@pytest.mark.parametrize("conv", [False, True], ids=["mlp", "conv"])
def test_penalty_through_hybridized_critic_equals_imperative(conv):
    wgan = load("wgan_gp_gluon")
    grads = []
    for hybrid in (False, True):
        mx.random.seed(5)
        critic = wgan.conv_critic() if conv else wgan.mlp([2, 8, 8, 1])
        critic.initialize(mx.init.Xavier())
        if hybrid:
            critic.hybridize()
        real = wgan.bar_images(4) if conv else wgan.eight_gaussians(4)
        fake = nd.random.normal(shape=real.shape)
        with autograd.record():
            penalty = wgan.gradient_penalty(critic, real, fake)
        penalty.backward()
        grads.append([p.grad().asnumpy() for p in critic.collect_params().values()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert any(np.abs(g).max() > 0 for g in grads[0])


def test_wgan_gp_gluon_command_line():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "wgan_gp_gluon.py"),
                           "--steps", "3", "--critic-iters", "1", "--batch", "16"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = values(proc.stdout)
    assert np.isfinite(float(got["wasserstein estimate"]))
    assert np.isfinite(float(got["gradient penalty"]))
