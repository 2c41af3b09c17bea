"""Devices: the array namespace of each compute device, and the run context of a call.

All array data goes through a per-device *namespace* (``mxlite/device/cpu.py`` is the CPU
one): allocation (``empty``, ``zeros``), copies (``copyto``, ``cast_into``,
``strided_copy``), views (``broadcast_to``, ``as_strided``), ``may_share_memory`` and host
transfers. Operators, NDArray and autograd call no NumPy function on array data; they call
the namespace of the array's device, so a GPU backend adds a namespace (``register``) and
kernels, nothing else.

A compute function is called as ``compute(rctx, ins, outs, attrs)``; ``rctx`` is the
``RunContext`` of the device the call runs on (one per device, cached on the Context):

* ``rctx.ctx``: the device Context;
* ``rctx.xp``: its namespace (``rctx.xp.empty(shape, dtype)``);
* ``rctx.stream``: the stream its kernels run on (None on CPU);
* ``rctx.rng``: its random stream (``seed, offset = rctx.rng.next()``; ``mxlite/device/rng.py``);
* ``rctx.is_train``: this thread's train mode (``autograd.train_mode()``), read when asked.
"""
from .._core import dispatch as _dispatch
from .._core.dispatch import RunContext
from ..base import MXNetError
from . import cpu
from .rng import RandomStream, device_key

__all__ = ["RunContext", "register", "unregister", "namespace_for", "run_context", "cpu"]

_NAMESPACES = {}    # compute device -> namespace
_KERNELS = {}       # compute device -> the key of the compute functions its operators run
_RUN = {}           # (device_type, device_id) -> RunContext


def register(compute_device, namespace, kernels=None):
    """Make ``namespace`` the array namespace of ``compute_device`` (a Context's
    ``compute_device``); its operators run the compute functions registered under ``kernels``
    (``op.compute[kernels]``; default: ``compute_device``). Register a device before its
    first operator call: a Context keeps the run context it was given."""
    _NAMESPACES[compute_device] = namespace
    _KERNELS[compute_device] = kernels or compute_device
    _forget(compute_device)


def unregister(compute_device):
    """Remove the namespace of ``compute_device`` (and the run contexts made with it)."""
    _NAMESPACES.pop(compute_device, None)
    _KERNELS.pop(compute_device, None)
    _forget(compute_device)


def _forget(compute_device):
    for key, r in list(_RUN.items()):
        if r.ctx.compute_device == compute_device:
            del _RUN[key]


def namespace_for(ctx):
    """The array namespace of Context ``ctx``'s device (the GPU backend registers itself on
    the first use of a GPU context, or raises MXNetError saying why there is none)."""
    xp = _NAMESPACES.get(ctx.compute_device)
    if ctx.compute_device == "gpu":
        from ..cuda import runtime
        if xp is None:
            runtime.install()
            xp = _NAMESPACES["gpu"]
        if ctx.device_id >= runtime.device_count():
            raise MXNetError(f"{ctx}: no such GPU ({runtime.device_count()} visible)")
        return xp.on_device(ctx.device_id)      # GPU i's functions run on device i
    if xp is None:
        raise MXNetError(f"{ctx}: no array backend is installed for {ctx.compute_device!r} "
                         "devices")
    return xp


def run_context(ctx):
    """The RunContext of ``ctx``'s device (made once per device, then cached on ``ctx``)."""
    key = (ctx.device_type, ctx.device_id)
    r = _RUN.get(key)
    if r is None or r.xp is not namespace_for(ctx):
        xp = namespace_for(ctx)
        r = _RUN[key] = RunContext(ctx, xp, _KERNELS[ctx.compute_device], xp.stream(ctx),
                                   RandomStream(device_key(ctx)), xp is cpu)
    ctx._run = r
    return r


register("cpu", cpu)
_dispatch.set_run_context(run_context)
