"""How many threads the BLAS behind NumPy may use for one product.

Two costs of a multi-threaded OpenBLAS product fall on the work around it:

- its threads keep spinning after it returns (OpenBLAS's thread timeout, about 0.1 s),
  holding cores that the OpenMP kernels running next (oneDNN's and mxlite's own) need:
  measured here, ResNet-50 inference at batch 1 took 134 ms with its few 2**24-MAC
  products on OpenBLAS's two threads, and 53 ms with every product on one;
- it ends with a barrier, so when another process holds a core it waits for a scheduler
  slice: a 64x784x256 float32 product took 15-30 ms on two threads beside busy
  processes, against 0.3 ms on one.

Float32 products large enough to gain from threads run on oneDNN (``mxlite.ops.onednn``),
whose threads are the OpenMP pool every other kernel uses. ``product`` runs a BLAS product
on one thread (set through the OpenBLAS NumPy loaded, restored right after, so NumPy's own
products keep their setting) when

- it is below ``SERIAL_BELOW`` multiply-adds (2**30: over about 50 ms on one core, where
  the threads' gain outweighs their spinning; below 2**18 OpenBLAS uses one thread by
  itself, and nothing is changed), or
- no product has run on one thread yet: the first large one measures the one-thread rate
  the next rule compares with, or
- the machine looks contended: a multi-threaded product ran slower than the best rate seen
  on one thread. Then products run on one thread for the next ``HOLD_S`` seconds, and the
  next large one probes again (the policy of the kernels' contention guard, mx_parallel.h).

With another BLAS, or none found, products run as NumPy runs them.

OpenBLAS splits a product differently on one and on two threads, so the last bits of a
large product can differ between runs when contention switched its thread count. Set
``MXLITE_BLAS_THREADS=fixed`` for results that depend on sizes only (the small-product rule
stays; there is no contention switch).
"""
import ctypes
import os
import time

__all__ = ["product", "SERIAL_BELOW", "HOLD_S"]

SERIAL_BELOW = 1 << 30          # multiply-adds (~50 ms on one core)
HOLD_S = 0.1
_OWN_THRESHOLD = 1 << 18        # OpenBLAS itself runs GEMMs below this on one thread
_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
          ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
          ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
          ("openblas_set_num_threads", "openblas_get_num_threads"))


class _State:
    setter = None               # None: not looked up yet; False: no OpenBLAS found
    adaptive = True             # the contention switch (MXLITE_BLAS_THREADS != 'fixed')
    most = 1                    # the BLAS's own thread count
    serial_rate = 0.0           # best multiply-adds per second seen on one thread
    contended_until = 0.0


def _find():
    """The loaded OpenBLAS's thread setter and its default thread count, once."""
    _State.setter = False
    _State.adaptive = os.environ.get("MXLITE_BLAS_THREADS", "adaptive") != "fixed"
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower()
                            and line.split()[-1].startswith("/")})
    except OSError:
        paths = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _NAMES:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                _State.setter, _State.most = setter, max(1, getter())
                return


def product(run, macs):
    """Call ``run()`` (one BLAS product of ``macs`` multiply-adds) with the thread count
    chosen as the module docstring says."""
    if _State.setter is None:
        _find()
    if macs < _OWN_THRESHOLD or not _State.setter or _State.most == 1:
        run()
        return
    start = time.perf_counter()
    # the first large product runs on one thread too: it measures the rate that tells a
    # contended multi-threaded product from a normal one (an assumed rate can be far off)
    serial = (macs <= SERIAL_BELOW or start < _State.contended_until
              or (_State.adaptive and not _State.serial_rate))
    if serial:
        _State.setter(1)
        try:
            run()
        finally:
            _State.setter(_State.most)
    else:
        run()
    rate = macs / max(time.perf_counter() - start, 1e-9)
    if not _State.adaptive:
        return
    if serial:
        _State.serial_rate = max(_State.serial_rate, rate)
    elif rate < 0.8 * _State.serial_rate:
        _State.contended_until = time.perf_counter() + HOLD_S
