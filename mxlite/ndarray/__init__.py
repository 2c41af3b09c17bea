"""``mx.nd``: every registered operator as a function that executes now, plus array creation.

The operator functions (and the ``random``, ``contrib``, ``_internal``... namespaces) are
generated from the registry by ``mxlite.ops.frontend``; nothing here restates an operator.
The machinery (the registry, the invoke strategy ``ndarray.invoke``) stays out of this
namespace: ``dir(mx.nd)`` shows MXNet's names and mxlite's documented extras
(tests/test_namespaces.py).
"""
import sys as _sys

from .. import ops as _ops  # noqa: F401  (registers every operator family)
from ..ops.frontend import make_function as _make_function, populate as _populate
from ..ops.registry import REGISTRY as _REGISTRY, namespace_of as _namespace_of
from .ndarray import BINARY_FUNCTIONS as _BINARY_FUNCTIONS, NDArray, array, empty, waitall
from .ndarray import concatenate, moveaxis
from .ndarray import invoke as _invoke

__all__ = ["NDArray", "array", "empty", "waitall", "concatenate", "moveaxis"]


def _install_namespaces():
    from ..ops.frontend import set_storage_strategy
    from ._sparse_invoke import front_invoke
    from . import sparse as real_sparse     # (before populate sets a namespace of that name)
    set_storage_strategy(_invoke, front_invoke)
    module = _sys.modules[__name__]
    for ns, sub in _populate(module, _invoke, __name__).items():
        if ns == "sparse":          # the operators join mxlite/ndarray/sparse.py's module
            for name, fn in vars(sub).items():      # (its own functions stay: zeros, ...)
                if not name.startswith("__") and name not in real_sparse.__all__:
                    setattr(real_sparse, name, fn)
            sub = real_sparse
            setattr(module, ns, real_sparse)
        _sys.modules[f"{__name__}.{ns}"] = sub


def _install_fluent_methods():
    """``x.sum(axis=1)`` etc.: each plain op whose first input is data becomes a method."""
    for name in sorted(_REGISTRY):
        op = _REGISTRY[name]
        ns, public = _namespace_of(name)
        if ns or not op.inputs or op.variadic or hasattr(NDArray, public):
            continue
        setattr(NDArray, public, _make_function(op, _invoke, public))


_install_namespaces()
from .. import _random_dispatch  # noqa: E402  (nd.random.uniform(array, ...) -> _sample_uniform)
_random_dispatch.install(random, _internal, NDArray)  # noqa: F821
_install_fluent_methods()

globals().update(_BINARY_FUNCTIONS)     # nd.add, nd.maximum, ... (scalar or array operands)
__all__ += sorted(_BINARY_FUNCTIONS)

from .io import load, load_frombuffer, save  # noqa: E402  (MXNet's binary NDArray format)
__all__ += ["save", "load", "load_frombuffer"]
from .dlpack import (from_dlpack, from_numpy, to_dlpack_for_read,  # noqa: E402
                     to_dlpack_for_write)
__all__ += ["from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write"]
from ._cached_op import CachedOp  # noqa: E402
__all__ += ["CachedOp"]
from ._extras import histogram, onehot_encode, split_v2, true_divide  # noqa: E402  (MXNet's front ends over registered ops)
__all__ += ["histogram", "split_v2", "onehot_encode", "true_divide"]
from . import _image_io  # noqa: E402  (decoders whose output shape comes from the bytes)
from ._image_io import imdecode  # noqa: E402
__all__ += ["imdecode"]
_internal._cvimdecode = _image_io.cvimdecode  # noqa: F821
from . import _contrib_math, _contrib_optim, _control_flow  # noqa: E402  (MXNet front ends in mx.nd.contrib)
for _module in (_contrib_math, _contrib_optim, _control_flow):
    for _name in _module.__all__:
        setattr(_sys.modules[__name__ + ".contrib"], _name, getattr(_module, _name))
del _module, _name
