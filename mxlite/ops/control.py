"""Graph-control operators: identity copy, BlockGrad (stop_gradient) and MakeLoss
(make_loss): identity forward passes whose gradients are defined, not derived."""
import numpy as np

from ..base import op_error
from .common import same_shape, same_type
from .registry import OpDef, Param, register


def _copy_compute(rctx, ins, outs, attrs):
    rctx.xp.copyto(outs[0], ins[0])


def _identity_grad(F, node, ograds):
    """f(x) = x;  f' = 1."""
    return [ograds[0]]


def _block_grad(F, node, ograds):
    """Forward identity whose gradient is zero: the input is treated as a constant."""
    return [F.zeros_like(ograds[0])]


register(OpDef(
    "_copy", inputs=("data",), aliases=("identity",), infer_shape=same_shape,
    backward_shape="same",
    infer_type=same_type, compute={"cpu": _copy_compute}, gradient=_identity_grad,
    grad_needs=(), elementwise=True, float_rule="same", doc="A copy of ``data``."))

register(OpDef(
    "BlockGrad", inputs=("data",), aliases=("stop_gradient",), infer_shape=same_shape,
    backward_shape="same",
    infer_type=same_type, compute={"cpu": _copy_compute}, gradient=_block_grad, grad_needs=(),
    elementwise=True, float_rule="same",
    doc="Pass ``data`` through unchanged in the forward pass and block its gradient "
        "(the gradient with respect to ``data`` is zero, to every order)."))


def _like_rhs_shape(shapes, attrs):
    """``lhs`` and ``rhs`` must have one shape, which the output takes."""
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise op_error("_identity_with_attr_like_rhs", f"lhs has shape {tuple(shapes[0])}, "
                       f"rhs {tuple(shapes[1])}: they must be equal")
    return [tuple(shapes[0])]


def _like_rhs_grad(F, node, ograds):
    """lhs passes the head gradient through; rhs only lends its shape (zero gradient)."""
    return [ograds[0], F.zeros_like(ograds[0])]


# MXNet's shape constraint: the value of lhs with the shape of rhs, so that inference
# carries a shape from rhs to lhs (and back) through a graph.
register(OpDef(
    "_identity_with_attr_like_rhs", inputs=("lhs", "rhs"), infer_shape=_like_rhs_shape,
    backward_shape="same", infer_type=same_type, compute={"cpu": _copy_compute},
    gradient=_like_rhs_grad, grad_needs=(),
    doc="``lhs`` unchanged; ``rhs`` (whose value is not read) must have its shape, so shape "
        "inference fills either from the other."))


def _make_loss_shape(shapes, attrs):
    """Identity; 'batch' normalization divides by the first axis, which a 0-d input lacks."""
    if len(shapes[0]) == 0 and attrs.normalization == "batch":
        raise op_error("MakeLoss", "normalization='batch' needs data with a first (batch) "
                                   "axis, got shape ()")
    return [shapes[0]]


def _make_loss_grad(F, node, ograds):
    """grad_scale / normaliser for every element of data, whatever the head gradient:
    the normaliser is 1 ('null'), data.shape[0] ('batch'), or the number of elements of
    data above valid_thresh, at least 1 ('valid'). Built from registered ops (ones_like of
    the head gradient, a comparison, a sum), each with a zero or defined gradient, so the
    gradient differentiates again, to zero."""
    attrs = node.attrs
    shape, dtype = node.input_shapes[0], node.input_dtypes[0]
    ones = F.ones_like(ograds[0])
    if attrs.normalization != "valid":
        scale = attrs.grad_scale
        if attrs.normalization == "batch":
            scale /= max(shape[0], 1)     # an empty batch has no gradient to scale
        return [ones * scale if scale != 1.0 else ones]
    # counted in float32 at least: a float16 (or integer) count is not exact
    wide = "float64" if np.dtype(dtype) == np.float64 else "float32"
    valid = F.cast(F._internal._greater_scalar(node.inputs[0], scalar=attrs.valid_thresh),
                   dtype=wide)
    count = F._internal._maximum_scalar(F.sum(valid), scalar=1.0)
    factor = F.cast(F._internal._rdiv_scalar(count, scalar=attrs.grad_scale), dtype=dtype)
    return [F.broadcast_mul(ones, F.reshape(factor, shape=(1,) * len(shape)))]


register(OpDef(
    "MakeLoss", inputs=("data",), aliases=("make_loss",),
    params=(Param("grad_scale", "float", 1.0, "scale of the gradient"),
            Param("valid_thresh", "float", 0.0, "with normalization 'valid', the elements of "
                  "data above this value are the valid ones"),
            Param("normalization", "str", "null", "divide the gradient by: nothing (null), "
                  "data.shape[0] (batch), the number of valid elements (valid)",
                  choices=("null", "batch", "valid"))),
    infer_shape=_make_loss_shape, backward_shape="same", infer_type=same_type,
    compute={"cpu": _copy_compute}, gradient=_make_loss_grad, grad_needs=("inputs",),
    elementwise=True,
    doc="""Make ``data`` a loss: the forward pass is the identity, and the gradient with
respect to ``data`` is ``grad_scale / normaliser`` everywhere, whatever the head gradient
(``backward()`` on the output needs none). The normaliser is 1 for ``normalization``
'null', ``data.shape[0]`` for 'batch', and for 'valid' the number of elements of ``data``
greater than ``valid_thresh`` (at least 1), as MXNet 1.9.1's ``MakeLoss``.

``make_loss`` is the same operator (MXNet's ``make_loss`` is a parameterless copy of
``MakeLoss``'s defaults: gradient ones). The gradient is built from registered ops that
do not depend on ``data``'s values except through a comparison, so every higher-order
derivative is zero.

>>> x = mx.nd.array([[1, -2], [3, 4]]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.MakeLoss(x, normalization="valid")
>>> y.backward()
>>> x.grad.asnumpy().tolist()
[[0.3333333432674408, 0.3333333432674408], [0.3333333432674408, 0.3333333432674408]]
"""))
