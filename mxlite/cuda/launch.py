"""Launching kernels on a CUDA device through CuPy: each kernel is compiled on first use to
PTX by NVRTC with mxlite's options (``compiler.compile_ptx``, cached on disk), loaded as a
driver module and kept per device. CuPy's RawModule is not used for mxlite's kernels: it
appends -ftz=true to the caller's options, flushing float32 subnormals to zero.

A launch runs on CuPy's current device and current stream: the namespace of ``gpu(i)``
makes device i current around its calls when there are several GPUs
(``GpuNamespace.on_device``), so a kernel is compiled for, and runs on, the device of the
arrays it gets. A block has at most the threads the compiled kernel can run in one block
(its registers decide), so a register-heavy kernel never fails with "too many resources".
"""
from ..base import MXNetError
from . import compiler

__all__ = ["launch", "BLOCK"]

BLOCK = 256
_FUNCTIONS = {}     # (device id, kernel key) -> (module, function, most threads a block)
_GRID_LIMIT = {}    # device id -> the most blocks a grid-stride launch uses
_cupy = None        # the cupy module, imported on the first launch


def _function(kernel):
    dev = _cupy.cuda.runtime.getDevice()
    entry = _FUNCTIONS.get((dev, kernel.key))
    if entry is None:
        props = _cupy.cuda.runtime.getDeviceProperties(dev)
        try:
            ptx = compiler.compile_ptx(kernel.source, f"{kernel.family}.cu",
                                       compiler.target_arch(props["major"] * 10
                                                            + props["minor"]))
            module = _cupy.cuda.function.Module()
            module.load(ptx.encode())
            fn = module.get_function(kernel.name)
        except Exception as e:      # CompileError (NVRTC log) or a driver error
            raise MXNetError(f"CUDA kernel {kernel.family}/{kernel.name} (operator and dtype "
                             f"in its name) failed to compile for device {dev}: {e}") from None
        threads = _max_threads(fn)
        entry = _FUNCTIONS[(dev, kernel.key)] = (module, fn, threads)
        if dev not in _GRID_LIMIT:
            # 32 blocks of 256 threads per multiprocessor fill it; a grid-stride loop covers
            # the rest, so a launch never has more blocks than the device can keep busy
            _GRID_LIMIT[dev] = props["multiProcessorCount"] * 32
    return entry[1], entry[2], _GRID_LIMIT[dev]


def _max_threads(fn):
    """The most threads one block of ``fn`` can have (a multiple of the warp size)."""
    from cupy_backends.cuda.api import driver
    most = driver.funcGetAttribute(driver.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn.ptr)
    return max(32, most // 32 * 32)


def launch(kernel, n, args):
    """Run ``kernel`` over ``n`` work items on the current device and stream."""
    global _cupy
    if n <= 0:
        return
    if _cupy is None:
        import cupy
        _cupy = cupy
    fn, threads, limit = _function(kernel)
    block = min(BLOCK, threads)
    grid = min((n + block - 1) // block, limit)
    fn((grid,), (block,), tuple(args))
