"""CTCLoss beside torch's ``F.ctc_loss`` (an optional benchmark dependency: torch applies
log_softmax outside, here inside the timed step), float32, on a few sizes (T steps, batch N,
alphabet A, labels of up to L classes, with data and label lengths): the loss alone, and
loss + gradient of the activations (imperative ``autograd.record``, and a bound ``mx.sym``
executor's forward + backward).

    pytest benchmarks/bench_ctc.py              # pytest-benchmark tables (the first size)
    python benchmarks/bench_ctc.py              # every size: medians, spread and ratios
    python benchmarks/bench_ctc.py --repeat 41 --json out.json

The script interleaves the backends (one call of each per repeat, in turn), so a load that
comes and goes on a shared machine falls on all of them alike, and reports per size and
step each backend's median time with its 10th-90th percentile range, and the median of the
per-repeat ratios mxlite / torch with their range. Both backends are checked against each
other before timing (losses and gradients, torch's in float64).
"""
import argparse
import json
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from timing import interleaved  # noqa: E402

try:
    import torch
except ImportError:          # pragma: no cover - optional
    torch = None

# (T, N, A, L): the first is the original benchmark's
SIZES = [(100, 32, 28, 30), (50, 16, 20, 10), (200, 64, 40, 50), (400, 8, 100, 80)]
CASES = ("forward", "forward+backward")


def _data(size, seed=0):
    t, n, a, L = size
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, n, a)).astype(np.float32)
    llen = rng.integers(max(1, L // 3), L + 1, size=n)
    tlen = rng.integers(max(2 * L + 1, t - t // 5), t + 1, size=n)
    label = np.zeros((n, L), np.float32)
    for i in range(n):
        label[i, :llen[i]] = rng.integers(1, a, size=llen[i])
    return x, label, tlen.astype(np.float32), llen.astype(np.float32)


_KW = dict(use_data_lengths=True, use_label_lengths=True)


def mxlite_steps(size):
    x, label, tlen, llen = (mx.nd.array(a) for a in _data(size))
    x.attach_grad()

    def forward():
        y = mx.nd.CTCLoss(x, label, tlen, llen, **_KW)
        y.wait_to_read()
        return y

    def forward_backward():
        with mx.autograd.record():
            y = mx.nd.CTCLoss(x, label, tlen, llen, **_KW)
        y.backward()
        x.grad.wait_to_read()
        return x.grad

    return {"forward": forward, "forward+backward": forward_backward}


def symbol_step(size):
    """forward(is_train=True) + backward of a bound executor (the symbolic path)."""
    arrays = _data(size)
    names = ("data", "label", "data_lengths", "label_lengths")
    loss = mx.sym.CTCLoss(*(mx.sym.var(k) for k in names), **_KW)
    ex = loss.simple_bind(mx.cpu(), grad_req={k: "write" if k == "data" else "null"
                                              for k in names},
                          **{k: a.shape for k, a in zip(names, arrays)})
    for k, a in zip(names, arrays):
        ex.arg_dict[k][:] = a
    head = mx.nd.ones((size[1],))

    def forward_backward():
        ex.forward(is_train=True)
        ex.backward(head)
        ex.grad_dict["data"].wait_to_read()
        return ex.grad_dict["data"]

    return forward_backward


def torch_steps(size):
    """The same steps with torch.nn.functional.ctc_loss (reduction 'none')."""
    if torch is None:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads())))
    x, label, tlen, llen = _data(size)
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


def torch_reference(size):
    """torch's loss and gradient in float64 (its float32 recursions run in float32: at
    T=200 their gradient is 4e-4 off, mxlite's float32 one 5e-8)."""
    x, label, tlen, llen = _data(size)
    x = torch.tensor(x.astype(np.float64), requires_grad=True)
    y = torch.nn.functional.ctc_loss(x.log_softmax(-1), *(torch.tensor(a).long() for a in
                                                         (label, tlen, llen)),
                                     reduction="none")
    y.backward(torch.ones_like(y))
    return {"forward": y.detach().numpy(), "forward+backward": x.grad.numpy()}


def check(size):
    """mxlite's loss / gradient (imperative and symbolic) agrees with torch's (float64)."""
    mine = mxlite_steps(size)
    grad = _as_numpy(mine["forward+backward"]())
    np.testing.assert_allclose(_as_numpy(symbol_step(size)()), grad, rtol=1e-5, atol=1e-6)
    if torch is not None:
        want = torch_reference(size)
        for case in CASES:
            np.testing.assert_allclose(_as_numpy(mine[case]()), want[case], rtol=1e-5,
                                       atol=1e-5)


@pytest.mark.parametrize("backend", ["mxlite", "torch"])
@pytest.mark.parametrize("case", CASES)
def test_ctc(benchmark, case, backend):
    size = SIZES[0]
    steps = mxlite_steps(size) if backend == "mxlite" else torch_steps(size)
    if steps is None:
        pytest.skip("torch is not installed")
    check(size)
    benchmark.group = f"CTCLoss T, N, A, L = {size}: {case}"
    benchmark(steps[case])


def _summary(values):
    v = np.asarray(values)
    return {"median": float(np.median(v)), "p10": float(np.percentile(v, 10)),
            "p90": float(np.percentile(v, 90))}


def measure(size, repeat):
    """Times and ratios of one size: {step: {backend: summary, 'ratio': summary}}."""
    check(size)
    mine, theirs = mxlite_steps(size), torch_steps(size)
    fns = {"mxlite forward": mine["forward"], "mxlite forward+backward":
           mine["forward+backward"], "mxlite sym forward+backward": symbol_step(size)}
    if theirs is not None:
        fns.update({"torch forward": theirs["forward"],
                    "torch forward+backward": theirs["forward+backward"]})
    rounds = interleaved(fns, repeat)
    out = {k: _summary(v) for k, v in rounds.items()}
    if theirs is not None:
        for mx_key, t_key in (("mxlite forward", "torch forward"),
                              ("mxlite forward+backward", "torch forward+backward"),
                              ("mxlite sym forward+backward", "torch forward+backward")):
            ratio = np.asarray(rounds[mx_key]) / np.asarray(rounds[t_key])
            out[f"{mx_key} / torch"] = _summary(ratio)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    results = {}
    for size in SIZES:
        res = measure(size, args.repeat)
        results[str(size)] = res
        print(f"CTCLoss float32, T={size[0]} N={size[1]} alphabet {size[2]} labels <= "
              f"{size[3]}:")
        for key, s in res.items():
            unit, scale = ("x", 1) if "/" in key else ("ms", 1e3)
            print(f"  {key:40s} median {s['median'] * scale:8.3f} {unit}  "
                  f"(p10 {s['p10'] * scale:.3f}, p90 {s['p90'] * scale:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
