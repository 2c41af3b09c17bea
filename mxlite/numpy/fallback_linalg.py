"""``mx.np.fallback_linalg``: the names of ``mx.np.linalg`` functions that MXNet 1.9.1 ran
by NumPy on the host (its ``mxnet.numpy.fallback_linalg`` module); each is the ordinary
``mx.np.linalg`` function (see ``mx.np.fallback``).
"""
from .fallback import resolver

_NAMES = ("cond", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "qr")
__all__ = list(_NAMES)

__getattr__, __dir__ = resolver(__name__, _NAMES, "mxlite.numpy.linalg")
