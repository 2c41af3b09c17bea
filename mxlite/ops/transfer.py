"""Copies between devices: ``_copyto``, the operator behind ``NDArray.copyto`` and
``as_in_context``.

It is the one operator whose input may live on another device than its output: ``invoke``
runs it on the device its ``ctx`` parameter names (``mxlite/_core/dispatch.pyx``,
``set_transfer_op``), and the destination namespace's ``receive`` moves the bytes (a copy on
one device, one host-device transfer, or a peer copy between GPUs). Its gradient is the copy
back, so under ``autograd.record()`` a gradient flowing through ``x.as_in_context(ctx)``
arrives on ``x``'s device, to any order.
"""
from .common import same_shape, same_type
from .registry import OpDef, Param, register


def _copyto_compute(rctx, ins, outs, attrs):
    rctx.xp.receive(outs[0], ins[0])


def _source_device(node):
    """The device of the copied input: the context of the tape entry that made it (a
    symbolic graph runs on one device: its own)."""
    parents = getattr(node, "parents", None)
    if parents and parents[0] is not None:
        return parents[0][0].context
    return node.context


def _copyto_grad(F, node, ograds):
    """y = x on device ``ctx``;  dx = dy copied back to x's device."""
    return [F._internal._copyto(ograds[0], ctx=_source_device(node))]


COPYTO = register(OpDef(
    "_copyto", inputs=("data",), infer_shape=same_shape, backward_shape="same",
    infer_type=same_type, gradient=_copyto_grad, grad_needs=(),
    # device-generic: the destination namespace's ``receive`` moves the bytes
    compute={"cpu": _copyto_compute, "gpu": _copyto_compute},
    params=(Param("ctx", "ctx", None, "the device of the copy (default: the current "
                                      "context)"),),
    doc="A copy of ``data`` on device ``ctx``; ``data`` may be on any device (this is the "
        "one operator whose input and output devices differ). ``NDArray.copyto(ctx)`` and "
        "``as_in_context`` call it, so cross-device copies are recorded by autograd: the "
        "gradient is copied back to ``data``'s device.\n\n"
        "MXNet's ``_copyto`` took its destination from ``out=``; here ``ctx`` names it "
        "(``out=`` must then be an array on ``ctx``).\n\n"
        ">>> import mxlite as mx\n"
        ">>> mx.nd._internal._copyto(mx.nd.array([1, 2]), ctx=mx.cpu(1)).context\n"
        "cpu(1)\n"))
