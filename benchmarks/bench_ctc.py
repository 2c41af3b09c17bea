"""CTCLoss: T=100 steps, batch 32, alphabet 28 (blank first), labels of 10 to 30 classes
with data and label lengths, float32 — the loss alone and loss + gradient of the
activations, beside torch's ``F.ctc_loss`` (an optional benchmark dependency: torch applies
log_softmax outside, here inside the timed step) in the same run.

    pytest benchmarks/bench_ctc.py              # pytest-benchmark tables
    python benchmarks/bench_ctc.py              # times, spread and ratios (mxlite / torch)

Both backends are checked against each other before timing (losses and gradients).
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

T, N, A, L = 100, 32, 28, 30


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, N, A)).astype(np.float32)
    llen = rng.integers(10, L + 1, size=N)
    tlen = rng.integers(T - 20, T + 1, size=N)
    label = np.zeros((N, L), np.float32)
    for n in range(N):
        label[n, :llen[n]] = rng.integers(1, A, size=llen[n])
    return x, label, tlen.astype(np.float32), llen.astype(np.float32)


def mxlite_steps():
    x, label, tlen, llen = (mx.nd.array(a) for a in _data())
    kw = dict(use_data_lengths=True, use_label_lengths=True)
    x.attach_grad()

    def forward():
        y = mx.nd.CTCLoss(x, label, tlen, llen, **kw)
        y.wait_to_read()
        return y

    def forward_backward():
        with mx.autograd.record():
            y = mx.nd.CTCLoss(x, label, tlen, llen, **kw)
        y.backward()
        x.grad.wait_to_read()
        return x.grad

    return {"forward": forward, "forward+backward": forward_backward}


def torch_steps():
    """The same steps with torch.nn.functional.ctc_loss (reduction 'none')."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    x, label, tlen, llen = _data()
    x = torch.tensor(x, requires_grad=True)
    label, tlen, llen = (torch.tensor(a).long() for a in (label, tlen, llen))
    ctc = torch.nn.functional.ctc_loss

    def forward():
        with torch.no_grad():
            return ctc(x.log_softmax(-1), label, tlen, llen, reduction="none")

    def forward_backward():
        x.grad = None
        y = ctc(x.log_softmax(-1), label, tlen, llen, reduction="none")
        y.backward(torch.ones_like(y))
        return x.grad

    return {"forward": forward, "forward+backward": forward_backward}


def _as_numpy(v):
    return v.asnumpy() if isinstance(v, mx.nd.NDArray) else v.detach().numpy()


def check(case):
    """mxlite's loss / gradient agrees with torch's (float32 tolerances)."""
    mine = _as_numpy(mxlite_steps()[case]())
    theirs = torch_steps()
    if theirs is not None:
        np.testing.assert_allclose(mine, _as_numpy(theirs[case]()), rtol=1e-4, atol=1e-4)


CASES = ("forward", "forward+backward")


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_ctc(benchmark, case, backend):
    steps = mxlite_steps() if backend == "mxlite" else torch_steps()
    if steps is None:
        pytest.skip("torch is not installed")
    check(case)
    benchmark.group = f"CTCLoss T={T}, N={N}, alphabet {A}, labels <= {L}: {case}"
    benchmark(steps[case])


def _times(fn, repeat=21):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)


def main():
    mine, theirs = mxlite_steps(), torch_steps()
    print(f"CTCLoss, T={T}, N={N}, alphabet {A}, labels <= {L}, float32")
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
