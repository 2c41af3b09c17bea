"""Shared pieces of the GPU benchmarks: mxlite against torch and CuPy on one CUDA device,
timed to completion (stream synchronized), best of ``repeat`` calls after a warm-up."""
import time

import pytest

from mxlite.cuda import runtime

__all__ = ["has_cuda", "needs_cuda", "best_time", "timings", "print_ratios"]


def has_cuda():
    """True when mxlite runs on a CUDA device (the host emulator of the tests is not timed)."""
    return runtime.backend() == "cupy"


needs_cuda = pytest.mark.skipif(not has_cuda(), reason="no CUDA device (CuPy with a GPU)")


def best_time(fn, repeat=10):
    """The fastest of ``repeat`` calls of ``fn`` (after one warm-up call), in seconds."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def timings(names, backends):
    """Rows (name, {backend: seconds}) for ``backends(name)`` -> {backend: call}."""
    return [(name, {b: best_time(fn) for b, fn in backends(name).items()}) for name in names]


def print_ratios(title, rows):
    """A table of the rows of ``timings`` with the faster other / mxlite ratio (> 1: mxlite
    faster)."""
    print(f"\n{title}; ratio = faster other / mxlite (> 1: mxlite faster)")
    print(f"{'case':<26}{'mxlite ms':>11}{'torch ms':>10}{'cupy ms':>10}{'vs best':>9}")
    for name, times in rows:
        others = [times[b] for b in ("torch", "cupy") if b in times]
        cols = "".join(f"{times[b] * 1e3:>10.3f}" if b in times else f"{'-':>10}"
                       for b in ("torch", "cupy"))
        print(f"{name:<26}{times['mxlite'] * 1e3:>11.3f}{cols}"
              f"{min(others) / times['mxlite']:>8.2f}x")
