"""The WGAN-GP demo (examples/wgan_gp.py): a few steps of both critics run, and the gradient
penalty's weight gradients -- a gradient of a gradient -- match finite differences."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, nd
from mxlite.test_utils import check_grads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("wgan_gp", os.path.join(ROOT, "examples",
                                                                       "wgan_gp.py"))
wgan = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wgan)


def _penalty_of(critic, real, fake, seed=3):
    """The penalty as a function of the critic's weights (same interpolates every call)."""
    names = list(critic.params)

    def penalty(*weights):
        critic.params.update(zip(names, weights))
        mx.random.seed(seed)
        return wgan.gradient_penalty(critic, real, fake)
    return penalty, [critic.params[n] for n in names]


def _batches(conv, n=6):
    mx.random.seed(1)
    if conv:
        real = wgan.bar_images(n, size=8).astype("float64")
        fake = nd.random.normal(shape=real.shape, dtype="float64")
    else:
        real = wgan.eight_gaussians(n).astype("float64")
        fake = nd.random.normal(shape=(n, 2), dtype="float64")
    return real, fake


@pytest.mark.parametrize("conv", [False, True], ids=["mlp", "conv"])
def test_penalty_weight_gradients_match_finite_differences(conv):
    mx.random.seed(0)
    critic = (wgan.ConvCritic(size=8, channels=(3, 4), dtype="float64") if conv
              else wgan.MLP([2, 8, 8, 1], act="tanh", dtype="float64"))
    real, fake = _batches(conv)
    penalty, weights = _penalty_of(critic, real, fake)
    check_grads(penalty, weights, order=1, rtol=1e-4, atol=1e-8, name="gradient penalty")
    # and not the all-zero weight gradients MXNet returned for the penalty of an MLP
    for w in weights:
        w.attach_grad()
    with autograd.record():
        value = penalty(*weights)
    value.backward()
    for name, w in critic.params.items():
        if name.endswith("weight"):
            assert np.abs(w.grad.asnumpy()).max() > 0, name


@pytest.mark.parametrize("conv", [False, True], ids=["mlp", "conv"])
def test_a_few_training_steps_run_and_update_both_networks(conv):
    mx.random.seed(0)         # train() seeds and builds the same way: these are its start
    _, _, generator, critic = wgan.build(conv, hidden=16)
    history = wgan.train(3, conv=conv, critic_iters=2, batch=16, hidden=16,
                         lam=10.0 if conv else 0.1, out=None)
    assert len(history["wasserstein"]) == 3
    assert np.all(np.isfinite(history["wasserstein"] + history["penalty"]))
    assert history["fake"].shape == history["real"].shape
    for start, trained in zip((generator, critic), history["nets"]):
        for name, p in start.params.items():    # (the critic's last bias gets no gradient)
            if name.endswith("weight"):
                assert not np.array_equal(p.asnumpy(), trained.params[name].asnumpy()), name


@pytest.mark.parametrize("flag", [[], ["--conv"]], ids=["mlp", "conv"])
def test_demo_command_line(flag, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    png = tmp_path / "out.png"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "wgan_gp.py"),
                           "--steps", "4", "--batch", "16", "--hidden", "16",
                           "--critic-iters", "2", "--png", str(png)] + flag,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("step     4/4") for line in lines), proc.stdout
    values = dict(line.split(" = ") for line in lines if " = " in line)
    assert np.isfinite(float(values["wasserstein estimate"]))
    assert float(values["gradient penalty"]) >= 0
    try:
        import matplotlib  # noqa: F401
        assert png.exists()
    except ImportError:
        assert "no picture saved" in proc.stdout
