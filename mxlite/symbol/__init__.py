"""``mx.sym`` / ``mx.symbol``: symbolic graphs over the operator registry (MXNet 1.x API).

Every registered operator is ``mx.sym.<op>`` (the same generator and signatures as
``mx.nd``), building a graph node instead of running; ``Variable``/``var``, ``Group``, ``grad`` (gradient Symbols, differentiable again),
MXNet's automatic names (``NameManager``, ``Prefix``), ``AttrScope``.
"""
import sys as _sys

from ..ops.frontend import populate as _populate
from ..ops.routing import BINARY_FUNCTIONS as _BINARY_FUNCTIONS, binary_function as _binfn
from .grad import grad
from .naming import AttrScope, NameManager, Prefix
from .symbol import Group, Symbol, Variable, invoke, load, load_json, var

__all__ = ["Symbol", "Variable", "var", "Group", "NameManager", "Prefix", "AttrScope", "load",
           "load_json", "grad"]


def _fill():
    module = _sys.modules[__name__]
    for ns, sub in _populate(module, invoke, __name__).items():
        _sys.modules[f"{__name__}.{ns}"] = sub
    # each op outside the namespaces is also a Symbol method with the symbol as first input
    for key, fn in list(vars(module).items()):
        if hasattr(fn, "op") and not key.startswith("_") and not hasattr(Symbol, key):
            setattr(Symbol, key, fn)
    for key in _BINARY_FUNCTIONS:       # sym.maximum(a, 2), sym.power(a, b), ...
        if key not in vars(module) or not hasattr(vars(module)[key], "op"):
            setattr(module, key, _binfn(key, Symbol, TypeError))
    module.pow = module.power


_fill()
