"""``mx.np.linalg``: NumPy's linear algebra on mxlite arrays (the functions are in
``mxlite.numpy._linalg`` and the modules it names; this namespace shows the public ones)."""
from . import _linalg
from ._linalg import *  # noqa: F401,F403
from . import fallback_linalg  # noqa: F401  (MXNet's list of host-run linalg functions)

__all__ = list(_linalg.__all__)
__doc__ += "\n\n" + _linalg.__doc__
del _linalg
