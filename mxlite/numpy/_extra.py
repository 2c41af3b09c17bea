"""Element-wise NumPy functions that run on the host, as one ``Custom`` operator.

No registered operator computes ``gcd``, ``lcm``, the bit-wise functions, ``signbit``,
``spacing`` or ``frexp``'s exponent, and none of them has a gradient worth the name
(integers, booleans, step functions). ``host_ufunc(name, inputs)`` runs NumPy's ufunc
``name`` on the inputs' host copies inside the ``Custom`` operator ``_np_host_ufunc``
(registered here with ``mx.operator.register``, as MXNet registered its fallback custom
operators), so the same call works on arrays, on the autograd tape (zero gradients) and on
Symbols inside hybridized blocks. The inputs broadcast; the output dtype is NumPy's for the
inputs' dtypes. On a GPU each call copies its inputs to the host and back.
"""
import numpy as _onp

from .. import operator as _operator
from ..base import op_error
from ..ndarray import array as _nd_array
from . import _front

__all__ = []

OP_TYPE = "_np_host_ufunc"

# name -> the ufunc (or function of arrays) and the output it gives
_FUNCTIONS = {
    "gcd": (_onp.gcd, 0), "lcm": (_onp.lcm, 0),
    "bitwise_and": (_onp.bitwise_and, 0), "bitwise_or": (_onp.bitwise_or, 0),
    "bitwise_xor": (_onp.bitwise_xor, 0),
    "signbit": (_onp.signbit, 0), "spacing": (_onp.spacing, 0),
    "frexp_exponent": (_onp.frexp, 1),
}


def _evaluate(name, arrays):
    fn, index = _FUNCTIONS[name]
    with _onp.errstate(all="ignore"):
        result = fn(*arrays)
    return _onp.asarray(result[index] if isinstance(result, tuple) else result)


class _HostUfunc(_operator.CustomOp):
    """Runs ``_FUNCTIONS[name]`` on the host copies of the inputs; gradients are zero."""

    def __init__(self, name):
        super().__init__()
        self._name = name

    def forward(self, is_train, req, in_data, out_data, aux):
        result = _evaluate(self._name, [x.asnumpy() for x in in_data])
        out = out_data[0]
        _nd_array(result.astype(out.dtype, copy=False).reshape(out.shape),
                  ctx=out.context, dtype=out.dtype).copyto(out)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        pass        # the input gradients stay the zeros they start as


@_operator.register(OP_TYPE)
class _HostUfuncProp(_operator.CustomOpProp):
    """Shapes broadcast; the dtype is NumPy's for one element of each input dtype."""

    def __init__(self, func, num_inputs="2"):
        super().__init__(need_top_grad=False)
        if func not in _FUNCTIONS:
            raise op_error(OP_TYPE, f"func={func!r} is not one of {sorted(_FUNCTIONS)}")
        self._func, self._n = func, int(num_inputs)

    def list_arguments(self):
        return [f"x{i}" for i in range(self._n)]

    def infer_shape(self, in_shape):
        try:
            shape = _onp.broadcast_shapes(*[tuple(s) for s in in_shape])
        except ValueError:
            raise op_error(self._func, "operands could not be broadcast together with "
                           f"shapes {' '.join(str(tuple(s)) for s in in_shape)}") from None
        return in_shape, [list(shape)], []

    def infer_type(self, in_type):
        return in_type, [result_dtype(self._func, in_type).type], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _HostUfunc(self._func)


def result_dtype(name, dtypes):
    """NumPy's output dtype of host function ``name`` for inputs of ``dtypes``, or
    MXNetError naming the function and the dtypes when NumPy has no loop for them."""
    try:
        return _evaluate(name, [_onp.ones((), dtype=d) for d in dtypes]).dtype
    except TypeError:
        shown = ", ".join(str(_onp.dtype(d)) for d in dtypes)
        raise op_error(name.replace("_exponent", ""),
                       f"not supported for input dtypes ({shown})") from None


def host_ufunc(name, inputs, out=None):
    """NumPy's ``name`` (a key of the table above) on the arrays or Symbols ``inputs``,
    through the ``_np_host_ufunc`` Custom operator."""
    if not _front.is_symbolic(inputs):
        result_dtype(name, [x.dtype for x in inputs])     # the dtype error, named, up front
    y = _front.call("Custom", list(inputs), op_type=OP_TYPE, func=name,
                    num_inputs=len(inputs))
    if out is not None:
        return _front.call("_copy", [y], out=out)
    return y
