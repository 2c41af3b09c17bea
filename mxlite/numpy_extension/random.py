"""``mx.npx.random``: MXNet's sampling extensions (the functions are in
``mxlite.numpy_extension._random``; this namespace shows the public ones)."""
from . import _random
from ._random import *  # noqa: F401,F403

__all__ = list(_random.__all__)
__doc__ += "\n\n" + _random.__doc__
del _random
