"""Launching kernels on a CUDA device through CuPy: each kernel is compiled on first use by
CuPy's RawModule (NVRTC; CuPy also caches the binary on disk) and kept per device.

A launch runs on CuPy's current device and current stream: the namespace of ``gpu(i)``
makes device i current around its calls when there are several GPUs
(``GpuNamespace.on_device``), so a kernel is compiled for, and runs on, the device of the
arrays it gets.
"""
from ..base import MXNetError
from . import compiler

__all__ = ["launch", "BLOCK"]

BLOCK = 256
_FUNCTIONS = {}     # (device id, kernel key) -> cupy RawKernel function
_GRID_LIMIT = {}    # device id -> the most blocks a grid-stride launch uses
_cupy = None        # the cupy module, imported on the first launch


def _function(kernel):
    dev = _cupy.cuda.runtime.getDevice()
    fn = _FUNCTIONS.get((dev, kernel.key))
    if fn is None:
        module = _cupy.RawModule(code=kernel.source, options=compiler.options())
        try:
            fn = module.get_function(kernel.name)       # compiles
        except Exception as e:      # CuPy's CompileException (NVRTC log) or a driver error
            raise MXNetError(f"CUDA kernel {kernel.family}/{kernel.name} (operator and dtype "
                             f"in its name) failed to compile for device {dev}: {e}") from None
        _FUNCTIONS[(dev, kernel.key)] = fn
        if dev not in _GRID_LIMIT:
            # 32 blocks of 256 threads per multiprocessor fill it; a grid-stride loop covers
            # the rest, so a launch never has more blocks than the device can keep busy
            sms = _cupy.cuda.runtime.getDeviceProperties(dev)["multiProcessorCount"]
            _GRID_LIMIT[dev] = sms * 32
    return fn, _GRID_LIMIT[dev]


def launch(kernel, n, args):
    """Run ``kernel`` over ``n`` work items on the current device and stream."""
    global _cupy
    if n <= 0:
        return
    if _cupy is None:
        import cupy
        _cupy = cupy
    fn, limit = _function(kernel)
    grid = min((n + BLOCK - 1) // BLOCK, limit)
    fn((grid,), (BLOCK,), tuple(args))
