"""``_gelu_derivative``: the first or second derivative of GELU, ``x Phi(x)``, at ``data``,
as one element-wise op:

* order 1: ``Phi(x) + x phi(x)``,
* order 2: ``phi(x) (2 - x^2)``,

with Phi the standard normal CDF and phi its density. ``LeakyReLU(act_type='gelu')``
differentiates to ``g * _gelu_derivative(x)``: one kernel pass (the fused derivative kernel
of ``mxlite._core.activation``) and a product, where the composed graph made eight passes
(erf, exp, squares, products, sums). Order 1 differentiates to order 2, and order 2 to
``phi(x) (x^3 - 4 x)``, a graph of registered ops, so every order exists. float32 and
float64 (float16 and bfloat16 compute in float32); the same formulas on every device.
"""
import math

from .._core import activation as _act
from ..base import FLOAT_DTYPES, op_error
from .common import float16_in_blocks, in_work_dtype, write_back
from .registry import OpDef, Param, register

_RSQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
_KINDS = {1: "d_gelu", 2: "d2_gelu"}


def _shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error("_gelu_derivative", f"takes one input (data), got {len(shapes)}")
    if attrs.order not in _KINDS:
        raise op_error("_gelu_derivative", f"order must be 1 or 2, got {attrs.order}")
    return [tuple(shapes[0])]


def _type(dtypes, attrs):
    if dtypes[0] not in FLOAT_DTYPES:
        raise op_error("_gelu_derivative", f"data must have a float dtype, got {dtypes[0]}")
    return [dtypes[0]]


def _compute(rctx, ins, outs, attrs):
    out = outs[0]
    _, (x,), target = in_work_dtype(rctx.xp, ins, out)
    _act.activation(_act.ACT_IDS[_KINDS[attrs.order]], x.reshape(-1), target.reshape(-1))
    write_back(rctx.xp, target, out)


def _gradient(F, node, ograds):
    """order 1 -> order 2; order 2 -> phi(x) (x^3 - 4 x) (a graph of registered ops)."""
    g, x = ograds[0], node.inputs[0]
    if node.attrs.order == 1:
        return [g * F._internal._gelu_derivative(x, order=2)]
    phi = F.exp(F.square(x) * -0.5) * _RSQRT2PI
    return [g * (phi * (F.square(x) * x - x * 4.0))]


register(OpDef(
    "_gelu_derivative", inputs=("data",),
    params=(Param("order", "int", 1, "1: d gelu / dx = Phi(x) + x phi(x); 2: d2 gelu / dx2 "
                  "= phi(x) (2 - x^2)"),),
    infer_shape=_shape, infer_type=_type, backward_shape="same",
    compute={"cpu": float16_in_blocks(_compute)}, gradient=_gradient, elementwise=True,
    doc="""The first (``order=1``) or second (``order=2``) derivative of GELU ``x Phi(x)``
(the erf form of ``LeakyReLU(act_type='gelu')``) at each element: ``Phi(x) + x phi(x)`` or
``phi(x) (2 - x^2)``, Phi the standard normal CDF and phi its density. GELU's gradient is
this op; its own gradient is the next order.

>>> d = mx.nd._internal._gelu_derivative(mx.nd.array([0.0, 1.0], dtype='float64'))
>>> d.asnumpy().round(6).tolist()           # 1/2, Phi(1) + phi(1)
[0.5, 1.083315]
"""))
