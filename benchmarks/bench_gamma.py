"""Gamma sampler cost: ns per sample of 10^7 float32/float64 samples, alpha 0.5, 1, 3, 20.

``python benchmarks/bench_gamma.py [BASELINE_CHECKOUT]``: with a second checkout (built), the
two run in turn, one subprocess call per round (interleaved, so machine noise hits both
alike), and the table gives the median and quartiles of each and of the per-round ratio.
"""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 10 ** 7
CASES = [(dt, a) for dt in ("float32", "float64") for a in (0.5, 1.0, 3.0, 20.0)]
ONE = """
import sys, time, numpy as np
sys.path.insert(0, sys.argv[1])
from mxlite._core import random as K
out = np.empty({n}, sys.argv[2])
K.fill_stream("gamma", out, 1, 2, float(sys.argv[3]), 1.0)
t = time.perf_counter()
K.fill_stream("gamma", out, 1, 3, float(sys.argv[3]), 1.0)
print((time.perf_counter() - t) / out.size * 1e9)
"""


def ns_per_sample(checkout, dtype, alpha):
    """One timed fill of N samples in a fresh process (the checkout's compiled kernels)."""
    run = subprocess.run([sys.executable, "-c", ONE.format(n=N), checkout, dtype, str(alpha)],
                         capture_output=True, text=True, check=True)
    return float(run.stdout)


def table(checkouts, rounds=5):
    print(f"gamma, {N:.0e} samples, ns/sample, median [q1, q3] of {rounds} interleaved "
          f"rounds (OMP threads: {os.environ.get('OMP_NUM_THREADS', os.cpu_count())})")
    for dtype, alpha in CASES:
        times = {c: [] for c in checkouts}
        for _ in range(rounds):
            for c in checkouts:
                times[c].append(ns_per_sample(c, dtype, alpha))
        cells = [f"{np.median(t):6.1f} [{np.percentile(t, 25):.1f}, {np.percentile(t, 75):.1f}]"
                 for t in times.values()]
        if len(checkouts) == 2:
            ratio = np.array(times[checkouts[0]]) / np.array(times[checkouts[1]])
            cells.append(f"x{np.median(ratio):.2f} [{np.percentile(ratio, 25):.2f}, "
                         f"{np.percentile(ratio, 75):.2f}]")
        print(f"{dtype} alpha={alpha:<5}", "  ".join(cells))


if __name__ == "__main__":
    base = sys.argv[1:2]
    table(base + [ROOT])
