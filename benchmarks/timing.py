"""The timers of the benchmark tables: a best-of-N time per backend, or backends called in
turn (interleaved, so a noisy machine slows them alike) and summarised by quartiles."""
import time

import numpy as np

__all__ = ["best_time", "interleaved", "quartiles"]


def best_time(fn, repeat=10):
    """The fastest of ``repeat`` calls of ``fn`` in seconds, after one warm-up call (page
    faults, thread pools, kernel compilation)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved(fns, repeat):
    """{name: per-round times} of ``fns`` ({name: callable}) called in turn, ``repeat``
    rounds after a warm-up call of each (per-round times give per-round ratios)."""
    for fn in fns.values():
        fn()
    rounds = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            start = time.perf_counter()
            fn()
            rounds[k].append(time.perf_counter() - start)
    return rounds


def quartiles(values):
    """{'median', 'q1', 'q3'} of ``values`` (times or ratios)."""
    q1, median, q3 = np.percentile(np.asarray(values), [25, 50, 75])
    return {"median": float(median), "q1": float(q1), "q3": float(q3)}
