"""mxlite: a small, fast, MXNet-compatible NDArray framework.

``import mxlite as mx`` then use ``mx.nd``, ``mx.autograd``, ``mx.random``, ``mx.init``,
``mx.contrib``, ``mx.sym`` and ``mx.cpu()`` as with MXNet 1.x.
"""
from . import autograd, base, context, contrib, initializer, ndarray, operator, random
from . import lr_scheduler, optimizer, symbol
from . import model
from . import kvstore
from . import gluon
from . import cuda      # GPU compute functions (needs no CuPy to import)
from . import executor   # Symbol.bind / simple_bind
from .base import MXNetError
from .context import Context, cpu, current_context, gpu, num_gpus

nd = ndarray
sym = symbol
name = symbol.naming            # mx.name.NameManager, mx.name.Prefix (MXNet's module)
AttrScope = symbol.AttrScope
init = initializer
kv = kvstore

__version__ = "0.1.0"
__all__ = ["nd", "ndarray", "sym", "symbol", "autograd", "random", "init", "initializer", "contrib",
           "operator", "optimizer", "kv", "kvstore", "gluon", "lr_scheduler", "model", "name", "AttrScope", "MXNetError", "Context", "cpu", "gpu", "current_context", "num_gpus"]
