"""Element-wise adds while another process holds a core: do parallel regions stall?

    python benchmarks/bench_contention.py [--quick]     # a table: idle vs busy, 3 backends
    pytest benchmarks/bench_contention.py               # pytest-benchmark, grouped by case

A *competitor* is a second Python process spinning in ``while True: pass``, pinned to the
last CPU this process may use. ``c = a + b`` on float32 vectors of 1e6 and 1e7 elements
(``out=`` preallocated) is timed call by call with and without it, for mxlite, NumPy
(single-threaded: the reference for "degrades gracefully") and PyTorch when installed.
The table gives the median, 90th percentile and worst call, the busy/idle slowdown of each
backend and mxlite's speed relative to NumPy and torch in each state (above 1: mxlite is
faster). A parallel region that waits for a worker the scheduler does not run shows up as
a 90th percentile or worst call of milliseconds.

mxlite starts OpenMP with a short spin (``mxlite._core``): set ``GOMP_SPINCOUNT`` or
``OMP_WAIT_POLICY`` before running this file to compare other policies; the header line
says which one is in effect.
"""
import argparse
import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import BACKENDS, add_case, check_against_numpy  # noqa: E402
import mxlite._core  # noqa: E402  (the wait policy; cases imports mxlite first)

SIZES = {"1e6": 10 ** 6, "1e7": 10 ** 7}
CALLS = {10 ** 6: 400, 10 ** 7: 60}         # calls timed per backend, state and size
COMPETITOR = "import os\nos.sched_setaffinity(0, {%d})\nwhile True:\n    pass\n"


@contextlib.contextmanager
def busy_core():
    """Run a spinning Python process pinned to the last usable CPU while the block runs."""
    cpu = max(os.sched_getaffinity(0))
    proc = subprocess.Popen([sys.executable, "-c", COMPETITOR % cpu])
    try:
        time.sleep(0.3)                     # let it start and take the core
        yield cpu
    finally:
        proc.kill()
        proc.wait()
        time.sleep(0.3)     # past mxlite's contention hold (100 ms): "idle" starts fresh


def call_times(fn, calls):
    """Seconds of each of ``calls`` calls (after one warm-up call)."""
    fn()
    out = np.empty(calls)
    for i in range(calls):
        start = time.perf_counter()
        fn()
        out[i] = time.perf_counter() - start
    return out


def measure(sizes, rounds=3):
    """{(state, size, backend): per-call seconds}, the backends sampled in turn and each
    state visited ``rounds`` times, so noise from other processes hits them alike."""
    fns = {}
    for size, n in sizes.items():
        fns[size] = add_case(n)
        check_against_numpy(fns[size], 1e-6)
    got = {}
    for _ in range(rounds):
        for state in ("idle", "busy"):
            with (busy_core() if state == "busy" else contextlib.nullcontext()):
                for size, n in sizes.items():
                    for backend, fn in fns[size].items():
                        t = call_times(fn, CALLS[n] // rounds)
                        got.setdefault((state, size, backend), []).append(t)
    return {k: np.concatenate(v) for k, v in got.items()}


def policy():
    names = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")
    user = ", ".join(f"{k}={os.environ[k]}" for k in names if k in os.environ)
    if mxlite._core.openmp_configured:
        return f"mxlite default (GOMP_SPINCOUNT={mxlite._core.SPINCOUNT})" + (
            f", {user}" if user else "")
    return user or "libgomp default (set before mxlite)"


def table(times, sizes):
    ms = lambda t: f"{t * 1e3:.3f}"      # noqa: E731
    print(f"cpus {sorted(os.sched_getaffinity(0))}, competitor on cpu "
          f"{max(os.sched_getaffinity(0))}; OpenMP: {policy()}")
    head = (f"{'case':<10} {'backend':<7} {'idle med/p90/max ms':>24} "
            f"{'busy med/p90/max ms':>24} {'busy/idle':>9}")
    print(head)
    print("-" * len(head))
    for size in sizes:
        for backend in BACKENDS:
            if ("idle", size, backend) not in times:
                continue
            i, b = times[("idle", size, backend)], times[("busy", size, backend)]
            stats = lambda t: "/".join(ms(v) for v in (np.median(t), np.percentile(t, 90), t.max()))  # noqa: E731,E501
            print(f"add {size:<6} {backend:<7} {stats(i):>24} {stats(b):>24} "
                  f"{np.median(b) / np.median(i):>8.2f}x")
    print("\nspeed ratios (median time of the other backend / mxlite's; above 1: mxlite faster)")
    for size in sizes:
        for state in ("idle", "busy"):
            mx_t = np.median(times[(state, size, "mxlite")])
            parts = [f"{other} {np.median(times[(state, size, other)]) / mx_t:.2f}x"
                     for other in ("numpy", "torch") if (state, size, other) in times]
            print(f"  add {size:<5} {state}: mxlite vs " + ", ".join(parts))


# ---- pytest-benchmark ------------------------------------------------------------------------
@pytest.fixture(params=["idle", "busy"])
def state(request):
    with (busy_core() if request.param == "busy" else contextlib.nullcontext()):
        yield request.param


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("size", list(SIZES))
def test_add_under_contention(benchmark, state, size, backend):
    fns = add_case(SIZES[size])
    if backend not in fns:
        pytest.skip(f"{backend} is not installed")
    benchmark.group = f"add {size} float32, {state}"
    benchmark(fns[backend])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1e6 elements only")
    args = parser.parse_args(argv)
    sizes = {"1e6": SIZES["1e6"]} if args.quick else SIZES
    table(measure(sizes), sizes)


if __name__ == "__main__":
    main()
