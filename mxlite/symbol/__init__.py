"""``mx.sym`` / ``mx.symbol``: symbolic graphs over the operator registry (MXNet 1.x API).

Every registered operator is ``mx.sym.<op>`` (the same generator and signatures as
``mx.nd``), building a graph node instead of running; ``Variable``/``var``, ``Group``, ``grad`` (gradient Symbols, differentiable again),
MXNet's automatic names (``NameManager``, ``Prefix``), ``AttrScope``.

>>> data = mx.sym.var("data")
>>> fc = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
>>> net = mx.sym.BatchNorm(mx.sym.tanh(fc), name="bn1")
>>> net.list_arguments()
['data', 'fc1_weight', 'fc1_bias', 'bn1_gamma', 'bn1_beta']
>>> net.list_auxiliary_states()
['bn1_moving_mean', 'bn1_moving_var']
>>> arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=(8, 4))
>>> arg_shapes[1], out_shapes
((16, 4), [(8, 16)])
>>> mx.sym.load_json(net.tojson()).list_outputs()
['bn1_output']

Gradients are Symbols too, and differentiate again (the third derivative of sin):

>>> x = mx.sym.var("x", shape=(3,), dtype="float64")
>>> d1 = mx.sym.grad(mx.sym.sin(x), "x")[0]
>>> d3 = mx.sym.grad(mx.sym.grad(d1, "x")[0], "x")[0]
>>> v = mx.nd.array([0.0, 1.0, 2.0], dtype="float64")
>>> np.allclose(d3.eval(x=v)[0].asnumpy(), -np.cos(v.asnumpy()))
True
"""
import sys as _sys

from ..ops.frontend import populate as _populate
from ..ops.routing import BINARY_FUNCTIONS as _BINARY_FUNCTIONS, binary_function as _binfn
from .grad import grad
from .naming import AttrScope, NameManager, Prefix
from .symbol import Group, Symbol, Variable, load, load_json, var
from .symbol import invoke as _invoke, without_inplace as _without_inplace

__all__ = ["Symbol", "Variable", "var", "Group", "NameManager", "Prefix", "AttrScope", "load",
           "load_json", "grad"]


def _fill():
    module = _sys.modules[__name__]
    for ns, sub in _populate(module, _invoke, __name__).items():
        _sys.modules[f"{__name__}.{ns}"] = sub
    # each op outside the namespaces is also a Symbol method with the symbol as first input
    for key, fn in list(vars(module).items()):
        if hasattr(fn, "op") and not key.startswith("_") and not hasattr(Symbol, key):
            setattr(Symbol, key, fn)
    for key in ("flatten", "squeeze", "expand_dims"):      # MXNet's inplace= (no effect)
        setattr(Symbol, key, _without_inplace(vars(module)[key]))
    for key in _BINARY_FUNCTIONS:       # sym.maximum(a, 2), sym.power(a, b), ...
        if key not in vars(module) or not hasattr(vars(module)[key], "op"):
            setattr(module, key, _binfn(key, Symbol, TypeError))
    module.pow = module.power


_fill()
from .. import _random_dispatch  # noqa: E402  (sym.random.uniform(Symbol, ...) -> _sample_uniform)
_random_dispatch.install(random, _internal, Symbol)  # noqa: F821

from ._extras import histogram, split_v2  # noqa: E402  (MXNet's front ends over registered ops)
__all__ += ["histogram", "split_v2"]
from . import _contrib_math, _control_flow  # noqa: E402  (MXNet's front ends in mx.sym.contrib)
for _module in (_contrib_math, _control_flow):
    for _name in _module.__all__:
        setattr(_sys.modules[__name__ + ".contrib"], _name, getattr(_module, _name))
del _module, _name
