"""contrib.hawkesll and _hawkesll_scan on the CPU: the compiled kernels
(mxlite/_core/hawkes.pyx, one pass per sample, threads over the batch) beside the vectorised
NumPy path they replaced (mxlite/ops/hawkes.py, still the path of other devices), float32,
on a long-sequence batch and a many-short-sequences batch (N samples, T points, K marks).

    pytest benchmarks/bench_hawkes.py           # pytest-benchmark tables (the first size)
    python benchmarks/bench_hawkes.py           # every size: medians, quartiles and ratios
    python benchmarks/bench_hawkes.py --repeat 11 --json out.json

The script interleaves the two paths (one call of each per round, in turn), so a load that
comes and goes on a shared machine falls on both alike, and reports per size and op each
path's median time with its quartiles, and the median of the per-round ratios NumPy path /
kernel with their quartiles. Both paths are checked against each other before timing.
"""
import argparse
import json
import sys

import numpy as np
import pytest

import mxlite as mx
from timing import interleaved, quartiles  # noqa: E402
import mxlite.ops.hawkes as hawkes

SIZES = [(64, 10 ** 4, 3), (10 ** 5, 32, 3)]
OPS = ("hawkesll", "_hawkesll_scan")
PATHS = ("kernel", "numpy")


def _inputs(size, seed=0):
    """float32 arrays of a random case: every sample counts all but a few of its points."""
    n, t, k = size
    rng = np.random.default_rng(seed)
    f = dict(dtype="float32")
    length = rng.integers(t - t // 8, t + 1, n)
    return {"lda": mx.nd.array(rng.uniform(0.2, 1.5, (n, k)), **f),
            "alpha": mx.nd.array(rng.uniform(0.1, 0.8, k), **f),
            "beta": mx.nd.array(rng.uniform(0.5, 3.0, k), **f),
            "state": mx.nd.array(rng.uniform(0.0, 2.0, (n, k)), **f),
            "lags": mx.nd.array(rng.exponential(0.7, (n, t)), **f),
            "marks": mx.nd.array(rng.integers(0, k, (n, t)), dtype="int32"),
            "length": mx.nd.array(length, **f),
            "max_time": mx.nd.array(np.full(n, 0.7 * t), **f),
            "b": mx.nd.array(rng.normal(size=(n, t)), **f)}


def _steps(x):
    """{op: a call that computes it and waits}."""
    def forward():
        out = mx.nd.contrib.hawkesll(x["lda"], x["alpha"], x["beta"], x["state"], x["lags"],
                                     x["marks"], x["length"], x["max_time"])
        return [o.asnumpy() for o in out]

    def scan():
        out = mx.nd._internal._hawkesll_scan(x["lags"], x["b"], x["state"], x["marks"],
                                             x["length"], reverse=True)
        return [o.asnumpy() for o in out]

    return {"hawkesll": forward, "_hawkesll_scan": scan}


def _on_path(path, fn):
    """fn as run by ``path``: the compiled kernels or the NumPy path."""
    def run():
        saved = hawkes._on_host
        if path == "numpy":
            hawkes._on_host = lambda rctx: False
        try:
            return fn()
        finally:
            hawkes._on_host = saved
    return run


def check(steps):
    """The two paths agree (float32 outputs of the same float64 arithmetic)."""
    for op, fn in steps.items():
        for got, want in zip(_on_path("kernel", fn)(), _on_path("numpy", fn)()):
            np.testing.assert_allclose(got, want, rtol=2e-7, atol=1e-6, err_msg=op)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("op", OPS)
def test_hawkes(benchmark, op, path):
    steps = _steps(_inputs(SIZES[0]))
    check(steps)
    benchmark.group = f"{op} (N, T, K) = {SIZES[0]} float32"
    benchmark(_on_path(path, steps[op]))


def measure(size, repeat):
    """{op: {path: summary, 'numpy / kernel': summary}} of one size."""
    steps = _steps(_inputs(size))
    check(steps)
    out = {}
    for op, fn in steps.items():
        rounds = interleaved({p: _on_path(p, fn) for p in PATHS}, repeat)
        res = {p: quartiles(rounds[p]) for p in PATHS}
        res["numpy / kernel"] = quartiles(np.asarray(rounds["numpy"]) /
                                         np.asarray(rounds["kernel"]))
        out[op] = res
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    results = {}
    for size in SIZES:
        res = measure(size, args.repeat)
        results[str(size)] = res
        print(f"(N, T, K) = {size} float32:")
        for op, by_path in res.items():
            for key, s in by_path.items():
                unit, scale = ("x", 1) if "/" in key else ("ms", 1e3)
                print(f"  {op:15s} {key:15s} median {s['median'] * scale:9.3f} {unit}  "
                      f"(q1 {s['q1'] * scale:.3f}, q3 {s['q3'] * scale:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
