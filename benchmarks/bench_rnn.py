"""The fused RNN operator beside torch's ``nn.LSTM`` / ``nn.GRU`` (an optional benchmark
dependency), float32, T=50 steps, batch 32, C = H = 256: a 2-layer LSTM, a 2-layer GRU and
a 1-layer bidirectional LSTM, the forward pass alone (inference) and forward + backward
(gradients of the data and of every weight), with the same weights (torch's gate orders,
LSTM i, f, g, o and GRU r, z, n, are MXNet's; its per-layer tensors are packed into
MXNet's parameter vector).

    pytest benchmarks/bench_rnn.py              # pytest-benchmark tables
    python benchmarks/bench_rnn.py [repeats]    # interleaved times and mxlite/torch ratios

torch runs in the same process: use an environment that has both, with mxlite's oneDNN
wheel installed there too (``mxlite.ops.onednn.status()``), or mxlite's times are its
reference kernels'.

The script times the two backends in alternation (mxlite then torch, then torch then
mxlite, ...), so a burst of load from other processes hits both alike, and reports the
median and spread of the per-pair ratios. Both backends are checked against each other
before timing.
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

T, N, C, H = 50, 32, 256, 256
# name: (mode, layers, bidirectional)
CONFIGS = {"lstm": ("lstm", 2, False), "gru": ("gru", 2, False), "lstm-bi": ("lstm", 1, True)}
_GATES = {"lstm": 4, "gru": 3}


def _data(mode, layers, bidirectional, seed=0):
    """Data, initial states and torch-style weights (U(-1/sqrt(H), 1/sqrt(H))): a list over
    layer and direction of [weight_ih, weight_hh, bias_ih, bias_hh]."""
    rng = np.random.default_rng(seed)
    d = 2 if bidirectional else 1
    k, g = 1 / np.sqrt(H), _GATES[mode]
    x = rng.standard_normal((T, N, C)).astype(np.float32)
    h0 = (rng.standard_normal((layers * d, N, H)) * 0.1).astype(np.float32)
    c0 = (rng.standard_normal((layers * d, N, H)) * 0.1).astype(np.float32)
    weights = []
    for layer in range(layers):
        inp = C if layer == 0 else d * H
        for _ in range(d):
            weights.append([rng.uniform(-k, k, s).astype(np.float32)
                            for s in ((g * H, inp), (g * H, H), (g * H,), (g * H,))])
    return x, h0, c0, weights


def _pack(weights):
    """MXNet's layout: every weight (i2h, h2h) layer by layer and direction by direction,
    then every bias."""
    return np.concatenate([w.ravel() for ws in weights for w in ws[:2]]
                          + [b for ws in weights for b in ws[2:]])


def mxlite_steps(config):
    """``{case: fn}`` for mxlite; each fn returns the output or the parameter gradient."""
    mode, layers, bi = CONFIGS[config]
    x, h0, c0, weights = _data(mode, layers, bi)
    x, h0, c0, w = (mx.nd.array(a) for a in (x, h0, c0, _pack(weights)))
    states = [h0, c0] if mode == "lstm" else [h0]
    kw = dict(state_size=H, num_layers=layers, mode=mode, bidirectional=bi)
    w.attach_grad()
    xg = x.copy()
    xg.attach_grad()

    def forward():
        y = mx.nd.RNN(x, w, *states, **kw)
        y.wait_to_read()
        return y

    def forward_backward():
        with mx.autograd.record():
            y = mx.nd.RNN(xg, w, *states, **kw)
        y.backward()
        w.grad.wait_to_read()
        xg.grad.wait_to_read()
        return w.grad

    return {"forward": forward, "forward+backward": forward_backward}


def torch_steps(config):
    """The same steps with torch's nn.LSTM / nn.GRU (None when torch is not installed)."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    mode, layers, bi = CONFIGS[config]
    x, h0, c0, weights = _data(mode, layers, bi)
    cls = torch.nn.LSTM if mode == "lstm" else torch.nn.GRU
    net = cls(C, H, num_layers=layers, bidirectional=bi)
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    suffixes = [f"_l{layer}{s}" for layer in range(layers)
                for s in (("", "_reverse") if bi else ("",))]
    with torch.no_grad():
        for suffix, ws in zip(suffixes, weights):
            for name, v in zip(names, ws):
                getattr(net, name + suffix).copy_(torch.tensor(v))
    x, h0, c0 = (torch.tensor(a) for a in (x, h0, c0))
    state = (h0, c0) if mode == "lstm" else h0
    xg = x.clone().requires_grad_(True)

    def forward():
        with torch.no_grad():
            return net(x, state)[0]

    def forward_backward():
        net.zero_grad()
        xg.grad = None
        y = net(xg, state)[0]
        y.backward(torch.ones_like(y))
        return torch.tensor(_pack([[getattr(net, n + s).grad.numpy() for n in names]
                                   for s in suffixes]))

    return {"forward": forward, "forward+backward": forward_backward}


def _as_numpy(v):
    return v.asnumpy() if isinstance(v, mx.nd.NDArray) else v.detach().numpy()


def check(config, case, mine=None, theirs=None):
    """mxlite's output / parameter gradient agrees with torch's (float32 tolerances)."""
    mine = mine or mxlite_steps(config)
    theirs = theirs or torch_steps(config)
    if theirs is not None:
        got, want = _as_numpy(mine[case]()), _as_numpy(theirs[case]())
        scale = float(np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale)


CASES = ("forward", "forward+backward")


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_rnn(benchmark, config, case, backend):
    steps = mxlite_steps(config) if backend == "mxlite" else torch_steps(config)
    if steps is None:
        pytest.skip("torch is not installed")
    check(config, case)
    mode, layers, bi = CONFIGS[config]
    benchmark.group = (f"{mode} {layers} layer(s){' bidirectional' if bi else ''}, T={T}, "
                       f"N={N}, C=H={H}: {case}")
    benchmark(steps[case])


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(mine, theirs, repeat):
    """Times of ``repeat`` rounds, each running both once, in alternating order:
    (mxlite times, torch times), sorted, and the per-round ratios mxlite / torch, sorted."""
    mine(), theirs()
    ms, ts = [], []
    for r in range(repeat):
        if r % 2:
            t, m = _timed(theirs), _timed(mine)
        else:
            m, t = _timed(mine), _timed(theirs)
        ms.append(m)
        ts.append(t)
    ratios = sorted(m / t for m, t in zip(ms, ts))
    return sorted(ms), sorted(ts), ratios


def _quartiles(v):
    return np.percentile(v, 25), np.median(v), np.percentile(v, 75)


def main(argv):
    repeat = int(argv[1]) if len(argv) > 1 else 21
    threads = torch.get_num_threads() if torch is not None else None
    print(f"T={T}, N={N}, C=H={H}, float32, {repeat} interleaved rounds; torch threads "
          f"{threads}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    for config, (mode, layers, bi) in CONFIGS.items():
        mine = mxlite_steps(config)
        theirs = torch_steps(config)
        print(f"{mode}, {layers} layer(s){', bidirectional' if bi else ''}")
        for case in CASES:
            check(config, case, mine, theirs)
            if theirs is None:
                m = sorted(_timed(mine[case]) for _ in range(repeat))
                print(f"  {case:17s} mxlite median {np.median(m) * 1e3:8.2f} ms")
                continue
            m, t, r = interleaved(mine[case], theirs[case], repeat)
            q = _quartiles(r)
            print(f"  {case:17s} mxlite median {np.median(m) * 1e3:7.2f} ms (min "
                  f"{m[0] * 1e3:.2f})  torch median {np.median(t) * 1e3:7.2f} ms (min "
                  f"{t[0] * 1e3:.2f})  mxlite/torch median {q[1]:.2f}x (quartiles "
                  f"{q[0]:.2f}-{q[2]:.2f}, range {r[0]:.2f}-{r[-1]:.2f})")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
