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

**Fork safety.** GCC's OpenMP runtime keeps each thread's worker threads in a pool that its
next parallel region reuses; ``fork()`` copies the pool into the child but not its threads,
so a forked child's first parallel kernel used to wait forever for them (a
``multiprocessing`` pool or ``os.fork()`` after the parent had run kernels on several
threads). The rule: just before ``os.fork()`` (``multiprocessing``'s ``fork`` and
``forkserver`` contexts, ``os.fork``, ``subprocess`` with ``preexec_fn``) the forking
thread's pool is shut down; the parent starts a new one at its next parallel kernel (about
0.1 ms with two threads, where the fork itself takes 2 ms), and the child starts its own,
so it runs on as many threads as the parent (``OMP_NUM_THREADS``) with no switch to set.
Where the runtime cannot shut a pool down (libgomp before GCC 9), the child's forking
thread runs its kernels serially instead (``serial_after_fork`` is then True in the
child); threads the child starts itself have their own pools and stay parallel. ``spawn``
children are fresh processes and unaffected. A ``fork()`` made by C code, bypassing
Python's fork handlers, is not covered.

**oneDNN.** The ``dnnl`` extension links against no library: its oneDNN symbols come from
``libdnnl.so.3`` (the ``onednn-cpu-gomp`` wheel), which ``load_onednn`` loads with global
symbols at import, after the OpenMP setting above (it runs on the same libgomp). So
``mxlite._core.dnnl`` imports wherever the library is installed, and ``import mxlite``
works without it (``mxlite.ops.onednn`` then runs the reference kernels and says why).
"""
import ctypes
import os
import sys

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


from .copy import openmp_release as _release, openmp_single_thread  # noqa: E402

serial_after_fork = False   # True in a forked child whose inherited pool was not released
_released = True            # whether the last fork's before-handler released the pool


def _before_fork():
    global _released
    _released = _release()


def _after_fork_in_child():
    global serial_after_fork
    if not _released:
        openmp_single_thread()
        serial_after_fork = True


if hasattr(os, "register_at_fork"):     # POSIX; Windows has no fork
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


onednn_library = None       # the path of the loaded libdnnl, or None
onednn_missing = None       # why it is not loaded


def _onednn_path():
    """``$MXLITE_ONEDNN_LIBRARY``, else the ``onednn-cpu-gomp`` wheel's library: under this
    environment's prefix (where pip puts a wheel's data files), or wherever its installed
    file list says (a user or target install)."""
    given = os.environ.get("MXLITE_ONEDNN_LIBRARY")
    if given:
        return given
    prefixed = os.path.join(sys.prefix, "lib", "libdnnl.so.3")
    if os.path.exists(prefixed):
        return prefixed
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        dist = distribution("onednn-cpu-gomp")
        for f in dist.files or ():
            if str(f).endswith("libdnnl.so.3"):
                return str(dist.locate_file(f))
    except PackageNotFoundError:
        pass
    return prefixed


def load_onednn():
    """Load libdnnl with global symbols (once); True when it is loaded."""
    global onednn_library, onednn_missing
    if onednn_library is None and onednn_missing is None:
        path = _onednn_path()
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            onednn_library = path
        except OSError as e:
            onednn_missing = f"oneDNN not loaded ({path}): {e}"
    return onednn_library is not None


if os.environ.get("MXLITE_ONEDNN", "1") != "0":
    load_onednn()
