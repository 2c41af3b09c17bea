"""``mx.np.random``: NumPy's random sampling on mxlite arrays (the functions are in
``mxlite.numpy._random`` and the modules it names; this namespace shows the public ones)."""
from . import _random
from ._random import *  # noqa: F401,F403

__all__ = list(_random.__all__)
__doc__ += "\n\n" + _random.__doc__
del _random
