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

The GPU backend (``mxlite.cuda``) registers itself here when it is imported
(``register_gpu_backend``); the core asks this registry about GPUs and never imports the
backend, so the backend depends on the core and not the other way round.
"""
from .._core import dispatch as _dispatch
from .._core.dispatch import RunContext
from ..base import MXNetError
from . import cpu
from .rng import RandomStream, device_key

__all__ = ["RunContext", "register", "unregister", "namespace_for", "run_context", "cpu",
           "register_gpu_backend", "gpu_backend", "gpu_count", "gpu_unavailable_reason",
           "synchronize_gpus"]

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


# ---- the GPU backend ------------------------------------------------------------------------
_GPU_BACKEND = []       # [the backend] once mxlite.cuda registered itself; [] before
_GPU_METHODS = ("device_count", "unavailable_reason", "install", "synchronize_all",
                "memory_info", "empty_cache")


def register_gpu_backend(backend):
    """Make ``backend`` the GPU backend (``mxlite.cuda.runtime`` registers itself when
    ``mxlite.cuda`` is imported). ``backend`` has ``device_count()``,
    ``unavailable_reason()`` (None when usable), ``install()`` (registers the GPU namespace
    here on the first GPU array), ``synchronize_all()``, ``memory_info(i)`` and
    ``empty_cache(i)``."""
    missing = [m for m in _GPU_METHODS if not callable(getattr(backend, m, None))]
    if missing:
        raise MXNetError(f"register_gpu_backend: {backend!r} lacks {missing}")
    _GPU_BACKEND[:] = [backend]


def gpu_backend():
    """The registered GPU backend, or None when no GPU backend was imported."""
    return _GPU_BACKEND[0] if _GPU_BACKEND else None


def gpu_count():
    """The number of GPUs ``mx.gpu(i)`` may name (0 without a usable GPU backend)."""
    backend = gpu_backend()
    return backend.device_count() if backend is not None else 0


def gpu_unavailable_reason():
    """Why ``mx.gpu()`` cannot run (None when a GPU backend is usable)."""
    backend = gpu_backend()
    if backend is None:
        return "no GPU backend is registered (importing mxlite.cuda registers it)"
    return backend.unavailable_reason()


def synchronize_gpus():
    """Wait for the kernels of every GPU in use (nothing without a GPU backend)."""
    backend = gpu_backend()
    if backend is not None:
        backend.synchronize_all()


def _require_gpu_backend(what):
    backend = gpu_backend()
    if backend is None:
        raise MXNetError(f"{what}: {gpu_unavailable_reason()}")
    return backend


def namespace_for(ctx):
    """The array namespace of Context ``ctx``'s device (the GPU backend installs its namespace
    on the first use of a GPU context, or raises MXNetError saying why there is none)."""
    xp = _NAMESPACES.get(ctx.compute_device)
    if ctx.compute_device == "gpu":
        backend = _require_gpu_backend(str(ctx))
        if xp is None:
            backend.install()
            xp = _NAMESPACES["gpu"]
        if ctx.device_id >= backend.device_count():
            raise MXNetError(f"{ctx}: no such GPU ({backend.device_count()} visible)")
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
