"""Gluon training steps, imperative and hybridized, beside torch (CPU).

Two models, one training step each (forward, softmax cross-entropy, backward,
``Trainer.step`` with SGD + momentum):

* ``small``: Dense 32-64-64-10 (relu, relu), batch 16 (a step made of overhead);
* ``mlp``: Dense 784-256-256-10 (relu, relu), batch 64;
* ``cnn``: Conv2D(8, 3, pad 1)+relu, MaxPool2D, Conv2D(16, 3, pad 1)+relu, MaxPool2D,
  Flatten, Dense(10), on batch 32 of 1x28x28.

Backends: ``imperative`` (``F = mx.nd``), ``hybrid`` (``hybridize()``: the cached graph
through the symbol executor), ``torch`` (torch.nn with the same weights, torch.optim.SGD).
The three start from the same weights and their first-step weights are compared before
timing.

    pytest benchmarks/bench_gluon.py          # pytest-benchmark, grouped for comparison
    python benchmarks/bench_gluon.py          # a table of times and ratios
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxlite as mx  # noqa: E402
from bench_symbol import interleaved_times  # noqa: E402
from mxlite import autograd, gluon  # noqa: E402
from mxlite.gluon import nn  # noqa: E402

try:
    import torch
except ImportError:       # the mxlite columns still run
    torch = None

LR, MOMENTUM = 0.05, 0.9


def mxlite_model(kind):
    net = nn.HybridSequential()
    with net.name_scope():
        if kind == "small":
            net.add(nn.Dense(64, activation="relu", in_units=32),
                    nn.Dense(64, activation="relu", in_units=64), nn.Dense(10, in_units=64))
        elif kind == "mlp":
            net.add(nn.Dense(256, activation="relu", in_units=784),
                    nn.Dense(256, activation="relu", in_units=256), nn.Dense(10, in_units=256))
        else:
            net.add(nn.Conv2D(8, 3, padding=1, activation="relu", in_channels=1),
                    nn.MaxPool2D(),
                    nn.Conv2D(16, 3, padding=1, activation="relu", in_channels=8),
                    nn.MaxPool2D(), nn.Flatten(), nn.Dense(10, in_units=16 * 7 * 7))
    net.initialize(mx.init.Xavier())
    return net


def problem(kind, seed=0):
    rng = np.random.default_rng(seed)
    shape = {"small": (16, 32), "mlp": (64, 784), "cnn": (32, 1, 28, 28)}[kind]
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, 10, shape[0])
    return x, y


def mxlite_step_fn(kind, hybrid):
    """One training step of the Gluon model; returns its parameters (NumPy, for checks)."""
    mx.random.seed(0)
    net = mxlite_model(kind)
    if hybrid:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": LR, "momentum": MOMENTUM})
    xn, yn = problem(kind)
    x, y = mx.nd.array(xn), mx.nd.array(yn)
    batch = xn.shape[0]

    def step():
        with autograd.record():
            out = net(x)
            loss = mx.nd.softmax_cross_entropy(out, y)
        loss.backward()
        trainer.step(batch)
        return net
    return step, net


def torch_step_fn(kind, net):
    """The same step in torch, from the mxlite net's initial weights."""
    params = [p.data().asnumpy() for p in net.collect_params().values()]
    if kind in ("small", "mlp"):
        n_in, n_hidden = (32, 64) if kind == "small" else (784, 256)
        model = torch.nn.Sequential(torch.nn.Linear(n_in, n_hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(n_hidden, n_hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(n_hidden, 10))
    else:
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(),
                                    torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, padding=1),
                                    torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                    torch.nn.Linear(16 * 7 * 7, 10))
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.tensor(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    xn, yn = problem(kind)
    x, y = torch.tensor(xn), torch.tensor(yn)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y, reduction="sum") / x.shape[0]
        loss.backward()
        opt.step()
        return model
    return step, model


_STEPS = {}


def steps(kind):
    """{backend: step function} for ``kind``, checked against each other first."""
    if kind not in _STEPS:
        imp, imp_net = mxlite_step_fn(kind, False)
        hyb, hyb_net = mxlite_step_fn(kind, True)
        fns = {"imperative": imp, "hybrid": hyb}
        imp()
        hyb()
        # equal up to the last bits a threaded BLAS product may change under load
        for a, b in zip(imp_net.collect_params().values(), hyb_net.collect_params().values()):
            np.testing.assert_allclose(a.data().asnumpy(), b.data().asnumpy(), rtol=1e-5,
                                       atol=1e-7)
        if torch is not None:
            _, fresh = mxlite_step_fn(kind, False)
            tstep, model = torch_step_fn(kind, fresh)
            tstep()
            for a, b in zip(imp_net.collect_params().values(), model.parameters()):
                np.testing.assert_allclose(a.data().asnumpy(), b.detach().numpy(), rtol=1e-3,
                                           atol=1e-5)
            fns["torch"] = tstep
        _STEPS[kind] = fns
    return _STEPS[kind]


@pytest.mark.parametrize("backend", ["imperative", "hybrid", "torch"])
@pytest.mark.parametrize("kind", ["small", "mlp", "cnn"])
def test_gluon_step(benchmark, kind, backend):
    fns = steps(kind)
    if backend not in fns:
        pytest.skip("torch is not installed")
    benchmark.group = f"gluon training step: {kind}"
    benchmark(fns[backend])


def main(calls=300):
    """Per-call times, the backends taking turns call by call (machine noise hits them
    alike); the minimum and the median of each, and their ratios."""
    if torch is not None:
        print(f"torch threads: {torch.get_num_threads()}")
    for kind in ("small", "mlp", "cnn"):
        fns = steps(kind)
        times = interleaved_times(fns, calls)
        for stat, pick in (("min", lambda v: v[0]), ("median", lambda v: v[len(v) // 2])):
            t = {name: pick(v) for name, v in times.items()}
            row = "  ".join(f"{name} {v * 1e3:7.3f} ms" for name, v in t.items())
            ratio = f"hybrid/imperative {t['hybrid'] / t['imperative']:.2f}x"
            if "torch" in t:
                ratio += (f"  hybrid/torch {t['hybrid'] / t['torch']:.2f}x"
                          f"  imperative/torch {t['imperative'] / t['torch']:.2f}x")
            print(f"{kind:5s} {stat:6s} {row}  |  {ratio}")


if __name__ == "__main__":
    main()
