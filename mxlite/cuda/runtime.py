"""Which GPU backend runs ``mx.gpu()``: a CUDA device through CuPy, the host emulator of the
tests (``MXLITE_GPU_EMULATOR=1``), or none (with the reason, for the error message).

CuPy is detected at run time, whichever wheel provides it (``cupy-cuda12x``,
``cupy-cuda13x``, ...); nothing is imported until a GPU is first asked for.
"""
import functools
import os

from ..base import MXNetError

__all__ = ["backend", "unavailable_reason", "device_count", "install", "namespace",
           "namespace_of", "synchronize_all", "memory_info", "empty_cache"]


@functools.lru_cache(maxsize=None)
def _probe():
    """(backend name or None, reason, device count)."""
    try:
        import cupy
    except ImportError:
        cupy, reason = None, "CuPy is not installed (pip install 'mxlite[gpu]', or the " \
                             "cupy-cudaXXx wheel matching your CUDA driver)"
    else:
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:      # no driver, or no device
            count, reason = 0, f"CuPy is installed but finds no CUDA device ({e})"
        else:
            reason = "CuPy is installed but finds no CUDA device"
        if count:
            return "cupy", None, count
    if os.environ.get("MXLITE_GPU_EMULATOR") == "1":
        from . import emulator
        why = emulator.available()
        if why is None:
            return "emulator", None, 1
        reason += f"; {why}"
    return None, reason, 0


def backend():
    """``'cupy'``, ``'emulator'`` or None."""
    return _probe()[0]


def unavailable_reason():
    """Why no GPU backend is available (None when one is)."""
    return _probe()[1]


def device_count():
    """The number of GPUs ``mx.gpu(i)`` may name (1 under the emulator)."""
    return _probe()[2]


@functools.lru_cache(maxsize=None)
def namespace():
    """The GPU array namespace of the backend (made once; ``on_device(i)`` gives GPU i's)."""
    from .namespace import GpuNamespace
    kind = backend()
    if kind == "cupy":
        import cupy
        from .launch import launch
        return GpuNamespace(cupy, launch, "gpu",
                            synchronize=lambda: cupy.cuda.get_current_stream().synchronize(),
                            stream=lambda ctx: cupy.cuda.get_current_stream(),
                            devices=device_count())
    if kind == "emulator":
        import numpy
        from . import emulator
        return GpuNamespace(numpy, emulator.launch, "gpu-emulator")
    raise MXNetError(f"mx.gpu(): no GPU backend: {unavailable_reason()}")


def synchronize_all():
    """Wait for the kernels of every GPU mxlite has used (``mx.nd.waitall``); nothing when no
    GPU was used."""
    if namespace.cache_info().currsize:
        for ns in namespace().device_namespaces():
            ns.synchronize()


def memory_info(device_id):
    """``(free, total)`` bytes of GPU ``device_id`` (CUDA's ``cudaMemGetInfo``)."""
    if backend() != "cupy":
        why = ("the GPU emulator runs in host memory" if backend() == "emulator"
               else unavailable_reason())
        raise MXNetError(f"gpu_memory_info: no GPU memory to report: {why}")
    if not 0 <= device_id < device_count():
        raise MXNetError(f"gpu_memory_info: no GPU {device_id} ({device_count()} visible)")
    import cupy
    with cupy.cuda.Device(device_id):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


def empty_cache(device_id):
    """Free the blocks CuPy's memory pool keeps for GPU ``device_id`` (``ctx.empty_cache``);
    nothing without CuPy (no GPU memory was ever allocated)."""
    if backend() == "cupy" and 0 <= device_id < device_count():
        import cupy
        with cupy.cuda.Device(device_id):
            cupy.get_default_memory_pool().free_all_blocks()


def install():
    """Register the GPU namespace with ``mxlite.device`` (its operators run
    ``op.compute['gpu']``); raise MXNetError saying why when there is no GPU."""
    from .. import device
    device.register("gpu", namespace(), kernels="gpu")


def namespace_of(array):
    """The GPU namespace that allocates and launches on the device holding ``array``.

    The kernel functions registered in ``mxlite.ops.common.DEVICE_KERNELS`` take the CPU
    kernels' arguments, arrays but no namespace; with several GPUs CuPy's current device
    may be another one than the array's (a CuPy array names its device; under the emulator
    there is one)."""
    xp = namespace()
    device = getattr(array, "device", None)
    return xp.on_device(device.id) if hasattr(device, "id") else xp
