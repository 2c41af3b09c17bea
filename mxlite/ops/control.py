"""Graph-control operators: identity copy and BlockGrad (stop_gradient)."""
from .common import same_shape, same_type
from .registry import OpDef, register


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
