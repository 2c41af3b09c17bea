"""Convolution 3x3, 16 filters, pad 1 on a (32, 3, 32, 32) float32 batch: forward + backward
(weight and bias gradients), and the same critic with a gradient penalty (the input gradient
with ``create_graph=True``, the penalty's backward to the weights), beside torch (an
optional benchmark dependency) in the same run.

    pytest benchmarks/bench_conv.py              # pytest-benchmark tables
    python benchmarks/bench_conv.py              # times and ratios (torch time / mxlite time)

Both backends are checked against each other before timing.
"""
import os
import sys
import time

import numpy as np
import pytest

import mxlite as mx

try:
    import torch
except ImportError:          # pragma: no cover - optional
    torch = None

SHAPE, FILTERS, KERNEL = (32, 3, 32, 32), 16, (3, 3)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    w = (rng.standard_normal((FILTERS, SHAPE[1]) + KERNEL) * 0.2).astype(np.float32)
    b = (rng.standard_normal(FILTERS) * 0.1).astype(np.float32)
    return x, w, b


def mxlite_steps():
    """``{case: fn}`` for mxlite; each fn returns the weight gradient (NumPy)."""
    x, w, b = (mx.nd.array(a) for a in _data())
    w.attach_grad()
    b.attach_grad()
    xg = x.copy()
    xg.attach_grad()

    def forward_backward():
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, b, kernel=KERNEL, pad=(1, 1), num_filter=FILTERS)
        y.backward()
        return w.grad

    def gradient_penalty():
        with mx.autograd.record():
            y = mx.nd.Convolution(xg, w, b, kernel=KERNEL, pad=(1, 1), num_filter=FILTERS)
            critic = mx.nd.tanh(y).sum()
            (gx,) = mx.autograd.grad(critic, [xg], create_graph=True)
            penalty = (gx * gx).sum()
        penalty.backward()
        return w.grad

    return {"forward+backward": forward_backward, "gradient penalty": gradient_penalty}


def torch_steps():
    """The same two steps in torch (None when torch is not installed)."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    x, w, b = (torch.tensor(a) for a in _data())
    w.requires_grad_(True)
    b.requires_grad_(True)
    xg = x.clone().requires_grad_(True)
    F = torch.nn.functional

    def forward_backward():
        w.grad = b.grad = None
        y = F.conv2d(x, w, b, padding=1)
        y.backward(torch.ones_like(y))
        return w.grad

    def gradient_penalty():
        w.grad = b.grad = None
        y = F.conv2d(xg, w, b, padding=1)
        critic = torch.tanh(y).sum()
        (gx,) = torch.autograd.grad(critic, [xg], create_graph=True)
        penalty = (gx * gx).sum()
        penalty.backward()
        return w.grad

    return {"forward+backward": forward_backward, "gradient penalty": gradient_penalty}


def _as_numpy(v):
    return v.asnumpy() if isinstance(v, mx.nd.NDArray) else v.detach().numpy()


def check(case):
    """mxlite's weight gradient agrees with torch's (float32 tolerances)."""
    mine = _as_numpy(mxlite_steps()[case]())
    theirs = torch_steps()
    if theirs is not None:
        other = _as_numpy(theirs[case]())
        scale = float(np.abs(other).max())
        np.testing.assert_allclose(mine, other, rtol=1e-3, atol=1e-4 * scale)


CASES = ("forward+backward", "gradient penalty")


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_conv(benchmark, case, backend):
    steps = mxlite_steps() if backend == "mxlite" else torch_steps()
    if steps is None:
        pytest.skip("torch is not installed")
    check(case)
    benchmark.group = f"conv 3x3x16 on {SHAPE}: {case}"
    benchmark(steps[case])


def _best(fn, repeat=15, number=5):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times), sorted(times)[len(times) // 2]


def main():
    mine, theirs = mxlite_steps(), torch_steps()
    print(f"Convolution {KERNEL} x {FILTERS} filters, pad 1, data {SHAPE} float32")
    for case in CASES:
        check(case)
        m = _best(mine[case])
        line = f"  {case:18s} mxlite {m[0] * 1e3:7.2f} ms (median {m[1] * 1e3:.2f})"
        if theirs is not None:
            t = _best(theirs[case])
            line += (f"   torch {t[0] * 1e3:7.2f} ms (median {t[1] * 1e3:.2f})"
                     f"   mxlite/torch time {m[0] / t[0]:.2f}x")
        print(line)


if __name__ == "__main__":
    sys.exit(main())
