"""mxlite: a small, fast, MXNet-compatible NDArray framework.

``import mxlite as mx`` then use ``mx.nd``, ``mx.autograd``, ``mx.random``, ``mx.init``,
``mx.contrib``, ``mx.sym`` and ``mx.cpu()`` as with MXNet 1.x.
"""
from . import autograd, base, context, contrib, initializer, ndarray, operator, random
from . import attribute, name, runtime, util
from . import lr_scheduler, optimizer, symbol
from . import model
from . import kvstore
from . import gluon
from . import cuda      # the GPU backend; registers itself with mxlite.device (no CuPy needed)
from . import executor   # Symbol.bind / simple_bind
from . import io, recordio   # mx.io data iterators, mx.recordio files
from . import rnn   # mx.rnn: the legacy symbolic RNN cells
from . import profiler, visualization   # mx.profiler, mx.viz (graphviz imported on use)
from . import metric   # mx.metric evaluation metrics
from . import callback, monitor   # mx.callback, mx.monitor (mx.mon)
from . import module   # mx.mod / mx.module: Module, BucketingModule, the fit loop
from . import image   # mx.image (mx.img): image functions, augmenters, ImageIter
from . import numpy, numpy_extension   # mx.np, mx.npx: NumPy's interface over the registry
from .symbol import numpy as _sym_numpy   # mx.sym.np (np functions building graph nodes)
ndarray.np = ndarray.numpy = numpy
ndarray.npx = ndarray.numpy_extension = numpy_extension
symbol.np = symbol.numpy = _sym_numpy
symbol.npx = symbol.numpy_extension = _sym_numpy.symbolic_namespace(numpy_extension,
                                                                    "mxlite.symbol.numpy_extension")
from .base import MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape, use_np,
                   use_np_array, use_np_shape)

nd = ndarray
sym = symbol
AttrScope = attribute.AttrScope
init = initializer
kv = kvstore
viz = visualization
mon = monitor
mod = module
img = image
np = numpy
npx = numpy_extension

# imported on first use (``mx.test_utils.assert_almost_equal``, ``mx.onnx.export_model``), to
# keep ``import mxlite`` light
_LAZY_MODULES = ("test_utils", "tools", "onnx")


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'mxlite' has no attribute {name!r}")


__version__ = "0.1.0"
__all__ = ["nd", "ndarray", "sym", "symbol", "autograd", "random", "init", "initializer", "contrib",
           "operator", "optimizer", "kv", "kvstore", "gluon", "lr_scheduler", "model", "name",
           "attribute", "runtime", "util", "AttrScope", "MXNetError", "Context", "cpu",
           "cpu_pinned", "gpu", "current_context", "num_gpus", "is_np_array", "is_np_shape",
           "np_array", "np_shape", "set_np_shape", "use_np", "use_np_array", "use_np_shape", "np", "npx", "numpy", "numpy_extension"]
