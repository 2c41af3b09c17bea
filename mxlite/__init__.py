"""mxlite: a small, fast, MXNet-compatible NDArray framework.

``import mxlite as mx`` then use ``mx.nd``, ``mx.cpu()``, ``mx.gpu()`` as with MXNet 1.x.
"""
from . import autograd, base, context, ndarray, operator
from .base import MXNetError
from .context import Context, cpu, current_context, gpu, num_gpus
from . import initializer
from . import random  # noqa: F401

nd = ndarray
init = initializer

__version__ = "0.1.0"
__all__ = ["nd", "ndarray", "MXNetError", "Context", "cpu", "gpu", "current_context", "num_gpus"]
