"""How many threads the BLAS behind NumPy may use for one product.

A multi-threaded GEMM ends with a barrier, so when another process holds a core a small
product waits for a scheduler slice (measured here: a 256x128x128 float32 product took
0.3-2.5 ms with OpenBLAS's two threads beside busy processes, 0.15 ms on one). Products
below ``SERIAL_BELOW`` multiply-adds therefore run on one thread, set through the
OpenBLAS that NumPy loaded and restored right after (so NumPy's own products keep their
setting); with another BLAS, or none found, nothing changes.
"""
import ctypes

__all__ = ["one_thread_if_small", "SERIAL_BELOW"]

SERIAL_BELOW = 1 << 23          # multiply-adds (~0.2 ms on one core)
_OWN_THRESHOLD = 1 << 18        # OpenBLAS itself runs GEMMs below this on one thread
_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
          ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
          ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
          ("openblas_set_num_threads", "openblas_get_num_threads"))


class _Control:
    setter, most = None, 1


def _find():
    """The loaded OpenBLAS's thread setter and its default thread count, once."""
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
                _Control.setter, _Control.most = setter, max(1, getter())
                return
    _Control.setter = False


class one_thread_if_small:
    """``with one_thread_if_small(macs):`` runs a product of ``macs`` multiply-adds below
    ``SERIAL_BELOW`` on one BLAS thread, and restores the BLAS's setting after it."""

    __slots__ = ("serial",)

    def __init__(self, macs):
        if _Control.setter is None:
            _find()
        self.serial = (_OWN_THRESHOLD <= macs < SERIAL_BELOW and bool(_Control.setter)
                       and _Control.most > 1)

    def __enter__(self):
        if self.serial:
            _Control.setter(1)

    def __exit__(self, *exc):
        if self.serial:
            _Control.setter(_Control.most)
