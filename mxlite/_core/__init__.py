"""Compiled kernels (Cython extensions generated from ``kernel_table.py`` and the ``.pyx.in`` templates).

**OpenMP wait policy.** After a parallel region GCC's OpenMP runtime (libgomp) lets its
worker threads spin for ~300,000 pause instructions (milliseconds) before they sleep. When
another process holds a core, a spinning worker uses up its share of that core, so the next
parallel region waits for the scheduler to hand the worker a slice back: a 1e6-element add
took 6-24 ms instead of 0.1 ms. Sleeping workers are woken promptly instead. So, unless
the user set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``, the runtime is started with a short
spin (``SPINCOUNT`` pauses, about 0.1 ms on a current x86 core: back-to-back operators find
their workers awake) and the variable is removed again, so child processes and other
libraries' OpenMP runtimes see the user's environment unchanged. libgomp reads its
environment once, when it is loaded: if another module loaded it first, that module's
setting stays (``openmp_configured`` says whether this one applied). The variable has no
effect on other OpenMP runtimes (LLVM's libomp).
"""
import os

SPINCOUNT = "4000"
_OWN = "GOMP_SPINCOUNT"


def _libgomp_loaded():
    try:
        with open("/proc/self/maps") as f:
            return any("/libgomp.so" in line for line in f)
    except OSError:             # not Linux: GOMP_SPINCOUNT only matters to libgomp anyway
        return False


openmp_configured = ("OMP_WAIT_POLICY" not in os.environ and _OWN not in os.environ
                     and not _libgomp_loaded())
if openmp_configured:
    os.environ[_OWN] = SPINCOUNT
    try:
        from . import copy  # noqa: F401,E402  (loads libgomp, which reads the variable now)
    finally:
        del os.environ[_OWN]
