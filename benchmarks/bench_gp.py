"""The WGAN-GP gradient-penalty step on an MLP critic, mxlite against torch (CPU).

Critic: 784-256-256-1, tanh, batch 64, float32. One step: the forward pass at ``x_hat``,
``g = grad(critic(x_hat), x_hat, create_graph=True)``, the penalty
``mean((||g||_2 - 1)^2)``, and its backward pass to the weights -- a gradient of a gradient
through FullyConnected and Activation (every layer's FGradient differentiated again).

    pytest benchmarks/bench_gp.py                 # pytest-benchmark, grouped for comparison
    python benchmarks/bench_gp.py                 # a quick table with the torch / mxlite ratio

Both backends start from the same weights and inputs, and their weight gradients are
compared before timing.
"""
import os
import sys
import time

import numpy as np
import pytest

import mxlite as mx

try:
    import torch
except ImportError:       # the mxlite column still runs
    torch = None

SIZES = (784, 256, 256, 1)
BATCH = 64


def make_problem(seed=0, dtype=np.float32):
    """Weights (W, b per layer, W as (out, in)) and the interpolates x_hat, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    layers = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        layers.append((rng.normal(0, (1.0 / n_in) ** 0.5, (n_out, n_in)).astype(dtype),
                       rng.normal(0, 0.1, (n_out,)).astype(dtype)))
    x_hat = rng.uniform(-1, 1, (BATCH, SIZES[0])).astype(dtype)
    return layers, x_hat


def mxlite_step_fn(layers, x_hat, dtype="float32"):
    """A function running one penalty step in mxlite; returns the weight gradients."""
    nd, autograd = mx.nd, mx.autograd
    params = []
    for w, b in layers:
        pw, pb = nd.array(w, dtype=dtype), nd.array(b, dtype=dtype)
        pw.attach_grad()
        pb.attach_grad()
        params.append((pw, pb, w.shape[0]))
    x = nd.array(x_hat, dtype=dtype)
    last = len(params) - 1

    def critic(h):
        for i, (w, b, n) in enumerate(params):
            h = nd.FullyConnected(h, w, b, num_hidden=n)
            if i < last:
                h = nd.Activation(h, act_type="tanh")
        return h

    def step():
        x.attach_grad()
        with autograd.record():
            score = critic(x)
            (g,) = autograd.grad(score, [x], head_grads=nd.ones_like(score),
                                 create_graph=True)
            norm = nd.sqrt(nd.sum(nd.square(g), axis=1))
            penalty = nd.mean(nd.square(norm - 1))
        penalty.backward()
        return [p.grad for w, b, _ in params for p in (w, b)]
    return step


def torch_step_fn(layers, x_hat):
    """The same step in torch (CPU); returns the weight gradients."""
    params = []
    for w, b in layers:
        params.append((torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)))
    x0 = torch.tensor(x_hat)
    last = len(params) - 1

    def critic(h):
        for i, (w, b) in enumerate(params):
            h = torch.nn.functional.linear(h, w, b)
            if i < last:
                h = torch.tanh(h)
        return h

    def step():
        for w, b in params:
            w.grad = b.grad = None
        x = x0.clone().requires_grad_()
        score = critic(x)
        (g,) = torch.autograd.grad(score, x, torch.ones_like(score), create_graph=True)
        penalty = ((g.norm(dim=1) - 1) ** 2).mean()
        penalty.backward()
        return [p.grad for w, b in params for p in (w, b)]
    return step


def as_numpy(grads, like):
    """NumPy copies; torch leaves None where the penalty does not depend on a weight (the
    last bias), mxlite writes zeros."""
    return [np.zeros_like(ref) if g is None else
            g.asnumpy() if isinstance(g, mx.nd.NDArray) else g.detach().numpy()
            for g, ref in zip(grads, like)]


def check_agreement(mx_step, torch_step, rtol=2e-3):
    """Both backends' weight gradients agree (float32 sums in different orders)."""
    mine = [g.asnumpy() for g in mx_step()]
    for a, b in zip(mine, as_numpy(torch_step(), mine)):
        scale = float(np.abs(b).max()) or 1.0
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


_STEPS = {}


def _steps():
    if not _STEPS:
        layers, x_hat = make_problem()
        _STEPS["mxlite"] = mxlite_step_fn(layers, x_hat)
        if torch is not None:
            _STEPS["torch"] = torch_step_fn(layers, x_hat)
            check_agreement(_STEPS["mxlite"], _STEPS["torch"])
    return _STEPS


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
def test_gp_step(benchmark, backend):
    steps = _steps()
    if backend not in steps:
        pytest.skip("torch is not installed")
    benchmark.group = "gradient penalty, MLP 784-256-256-1 tanh, batch 64"
    benchmark(steps[backend])


def _best_of(fn, repeat=7, number=30):
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def main():
    steps = _steps()
    times = {}
    for _ in range(2):          # alternate, so machine noise hits both alike
        for name, fn in steps.items():
            times[name] = min(times.get(name, float("inf")), _best_of(fn))
    for name, t in times.items():
        print(f"{name:7s} {t * 1e3:8.3f} ms per step")
    if "torch" in times:
        print(f"mxlite / torch = {times['mxlite'] / times['torch']:.2f}x "
              f"(torch threads: {torch.get_num_threads()})")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
