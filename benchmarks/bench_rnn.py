"""The fused RNN operator: a 2-layer LSTM, T=50 steps, batch 32, C = H = 256, float32 — the
forward pass alone (inference) and forward + backward (gradients of the data and of every
weight), beside torch's ``nn.LSTM`` (an optional benchmark dependency) in the same run, with
the same weights (torch's gate order i, f, g, o is MXNet's; its per-layer tensors are packed
into MXNet's parameter vector).

    pytest benchmarks/bench_rnn.py              # pytest-benchmark tables
    python benchmarks/bench_rnn.py              # times, spread and ratios (mxlite / torch)

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

T, N, C, H, LAYERS = 50, 32, 256, 256, 2


def _data(seed=0):
    """Data, initial states and torch-style per-layer weights (U(-1/sqrt(H), 1/sqrt(H)))."""
    rng = np.random.default_rng(seed)
    k = 1 / np.sqrt(H)
    x = rng.standard_normal((T, N, C)).astype(np.float32)
    h0 = (rng.standard_normal((LAYERS, N, H)) * 0.1).astype(np.float32)
    c0 = (rng.standard_normal((LAYERS, N, H)) * 0.1).astype(np.float32)
    layers = []
    for layer in range(LAYERS):
        inp = C if layer == 0 else H
        layers.append([rng.uniform(-k, k, s).astype(np.float32)
                       for s in ((4 * H, inp), (4 * H, H), (4 * H,), (4 * H,))])
    return x, h0, c0, layers


def _pack(layers):
    """MXNet's layout: every weight (i2h, h2h) layer by layer, then every bias."""
    return np.concatenate([w.ravel() for lay in layers for w in lay[:2]]
                          + [b for lay in layers for b in lay[2:]])


def mxlite_steps():
    """``{case: fn}`` for mxlite; each fn returns the output or the parameter gradient."""
    x, h0, c0, layers = _data()
    x, h0, c0, w = (mx.nd.array(a) for a in (x, h0, c0, _pack(layers)))
    kw = dict(state_size=H, num_layers=LAYERS, mode="lstm")
    w.attach_grad()
    xg = x.copy()
    xg.attach_grad()

    def forward():
        y = mx.nd.RNN(x, w, h0, c0, **kw)
        y.wait_to_read()
        return y

    def forward_backward():
        with mx.autograd.record():
            y = mx.nd.RNN(xg, w, h0, c0, **kw)
        y.backward()
        w.grad.wait_to_read()
        return w.grad

    return {"forward": forward, "forward+backward": forward_backward}


def torch_steps():
    """The same steps with torch's nn.LSTM (None when torch is not installed)."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    x, h0, c0, layers = _data()
    lstm = torch.nn.LSTM(C, H, num_layers=LAYERS)
    with torch.no_grad():
        for layer, ws in enumerate(layers):
            for name, v in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), ws):
                getattr(lstm, f"{name}_l{layer}").copy_(torch.tensor(v))
    x, h0, c0 = (torch.tensor(a) for a in (x, h0, c0))
    xg = x.clone().requires_grad_(True)

    def forward():
        with torch.no_grad():
            return lstm(x, (h0, c0))[0]

    def forward_backward():
        lstm.zero_grad()
        xg.grad = None
        y = lstm(xg, (h0, c0))[0]
        y.backward(torch.ones_like(y))
        return torch.tensor(_pack([[getattr(lstm, f"{n}_l{k}").grad.numpy() for n in (
            "weight_ih", "weight_hh", "bias_ih", "bias_hh")] for k in range(LAYERS)]))

    return {"forward": forward, "forward+backward": forward_backward}


def _as_numpy(v):
    return v.asnumpy() if isinstance(v, mx.nd.NDArray) else v.detach().numpy()


def check(case):
    """mxlite's output / parameter gradient agrees with torch's (float32 tolerances)."""
    mine = _as_numpy(mxlite_steps()[case]())
    theirs = torch_steps()
    if theirs is not None:
        other = _as_numpy(theirs[case]())
        scale = float(np.abs(other).max())
        np.testing.assert_allclose(mine, other, rtol=1e-3, atol=1e-4 * scale)


CASES = ("forward", "forward+backward")


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_rnn(benchmark, case, backend):
    steps = mxlite_steps() if backend == "mxlite" else torch_steps()
    if steps is None:
        pytest.skip("torch is not installed")
    check(case)
    benchmark.group = f"LSTM {LAYERS} layers, T={T}, N={N}, C=H={H}: {case}"
    benchmark(steps[case])


def _times(fn, repeat=11):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)


def main():
    mine, theirs = mxlite_steps(), torch_steps()
    print(f"LSTM, {LAYERS} layers, T={T}, N={N}, C=H={H}, float32")
    for case in CASES:
        check(case)
        m = _times(mine[case])
        line = (f"  {case:17s} mxlite {m[0] * 1e3:8.2f} ms (median {m[len(m) // 2] * 1e3:.2f}, "
                f"max {m[-1] * 1e3:.2f})")
        if theirs is not None:
            t = _times(theirs[case])
            line += (f"   torch {t[0] * 1e3:8.2f} ms (median {t[len(t) // 2] * 1e3:.2f}, "
                     f"max {t[-1] * 1e3:.2f})   mxlite/torch best {m[0] / t[0]:.2f}x, "
                     f"median {m[len(m) // 2] / t[len(t) // 2]:.2f}x")
        print(line)


if __name__ == "__main__":
    sys.exit(main())
