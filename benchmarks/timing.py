"""The timer of the benchmark tables that print a best-of-N time per backend."""
import time

__all__ = ["best_time"]


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
