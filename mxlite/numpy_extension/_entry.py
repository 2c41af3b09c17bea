"""``mx.npx``'s entry points onto registered operators.

``entry_point(public_name, op_name, summary)`` is the front-end generator of ``mx.nd``
(``mxlite.ops.frontend.make_function``: a real signature from the record, the same binding
of inputs and parameters) with the ``np`` invoke strategy: the registered operator runs
through ``mxlite.numpy._front.call``, so results are ``mx.np.ndarray`` objects recorded by
autograd, and Symbol inputs (a hybridized Gluon block tracing with ``mx.sym``) build a graph
node. Inputs that are neither arrays nor Symbols (NumPy arrays, lists, Python numbers) are
converted with ``mx.np.array`` on the device of the array inputs (the NumPy convention of
``array_like`` arguments).
"""
import textwrap

from ..ndarray.ndarray import NDArray
from ..numpy import _front
from ..numpy.multiarray import array
from ..ops.frontend import make_function
from ..ops.registry import REGISTRY

__all__ = ["entry_point", "np_invoke"]


def _converted(inputs):
    """``inputs`` with every array_like (not an NDArray, not None) made an np array on the
    device of the first NDArray input (the current device when there is none)."""
    ctx = next((x.context for x in inputs if isinstance(x, NDArray)), None)
    return [x if x is None or isinstance(x, NDArray) else array(x, ctx=ctx) for x in inputs]


def np_invoke(op, inputs, kwargs, out):
    """The ``np`` invoke strategy: run registered ``op`` on ``inputs`` with parameters
    ``kwargs`` (into np array ``out`` when given); np arrays or an np Symbol back."""
    if not _front.is_symbolic(inputs) and not all(x is None or isinstance(x, NDArray)
                                                  for x in inputs):
        inputs = _converted(inputs)
    return _front.call(op.name, inputs, out=out, **kwargs)


def entry_point(public_name, op_name, summary, module):
    """``mx.npx.<public_name>``: registered operator ``op_name`` with np arrays in and out,
    documented by ``summary`` followed by the operator's own documentation."""
    op = REGISTRY[op_name]
    fn = make_function(op, np_invoke, public_name, op_name)
    intro = (f"{summary}\n\n``mx.npx.{public_name}`` runs the registered operator "
             f"``{op.name}`` on np arrays and returns np arrays (inside a hybridized block, "
             "on Symbols, it builds the graph node). The operator:")
    fn.__doc__ = "\n\n".join(textwrap.fill(p, 88) for p in intro.split("\n\n")) \
        + "\n\n" + fn.__doc__
    fn.__module__ = module
    fn.meta_free = True     # the operator's own rules: nothing waits for the inputs' meta
    return fn
