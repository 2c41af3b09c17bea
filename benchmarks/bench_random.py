"""randint of 1e7 values: mxlite against NumPy's ``default_rng().integers`` (same dtype).

Run ``pytest benchmarks/bench_random.py`` (pytest-benchmark timings, one group per case, and
a printed table of ratios), or ``python benchmarks/bench_random.py`` for the table alone.
Goal: mxlite at least 1.5x NumPy on every case. Both sides allocate their output.
"""
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:            # run from a checkout without installing
    sys.path.insert(0, ROOT)

import mxlite as mx  # noqa: E402
from timing import best_time  # noqa: E402

N = 10 ** 7
GOAL = 1.5
# (dtype, low, high)
CASES = [
    ("int32", 0, 1000),
    ("int32", -(2 ** 31), 2 ** 31),
    ("int64", 0, 1000),
    ("int64", -(2 ** 31), 2 ** 31),
    ("int64", 0, 2 ** 40),
]


def case_id(case):
    dtype, low, high = case
    names = {0: "0", 1000: "1000", -(2 ** 31): "-2^31", 2 ** 31: "2^31", 2 ** 40: "2^40"}
    return f"{dtype}[{names[low]},{names[high]})"


def backends(case, n=N):
    dtype, low, high = case
    rng = np.random.default_rng(0)
    return {
        "mxlite": lambda: mx.nd.random.randint(low, high, shape=(n,), dtype=dtype),
        "numpy": lambda: rng.integers(low, high, size=n, dtype=dtype),
    }


def ratio_table(n=N, repeat=7):
    """Rows (case, mxlite seconds, numpy seconds, numpy / mxlite)."""
    rows = []
    for case in CASES:
        fns = backends(case, n)
        t_mx, t_np = best_time(fns["mxlite"], repeat), best_time(fns["numpy"], repeat)
        rows.append((case_id(case), t_mx, t_np, t_np / t_mx))
    return rows


def print_table(rows):
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    print(f"\nrandint, {N:.0e} values, best of 7 (OMP threads: {threads}); goal >= {GOAL}x")
    print(f"{'case':<22}{'mxlite ms':>11}{'numpy ms':>11}{'speed-up':>10}")
    for name, t_mx, t_np, ratio in rows:
        flag = "" if ratio >= GOAL else "  below goal"
        print(f"{name:<22}{t_mx * 1e3:>11.1f}{t_np * 1e3:>11.1f}{ratio:>9.2f}x{flag}")


@pytest.mark.parametrize("backend", ["mxlite", "numpy"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_randint(benchmark, case, backend):
    fn = backends(case)[backend]
    benchmark.group = f"randint {case_id(case)} 1e7"
    result = benchmark(fn)
    values = np.asarray(result.asnumpy() if backend == "mxlite" else result)
    assert values.dtype == np.dtype(case[0]) and values.shape == (N,)
    assert values.min() >= case[1] and values.max() < case[2]


def test_randint_speedup_table(capsys):
    """Print numpy / mxlite for every case (the table the goal refers to)."""
    rows = ratio_table()
    with capsys.disabled():
        print_table(rows)


if __name__ == "__main__":
    print_table(ratio_table())
