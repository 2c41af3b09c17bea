"""Launching kernels on a CUDA device through CuPy: each kernel is compiled on first use by
CuPy's RawModule (NVRTC; CuPy also caches the binary on disk) and kept per device."""
from . import compiler

__all__ = ["launch"]

BLOCK = 256
_FUNCTIONS = {}     # (device id, kernel key) -> cupy RawKernel function
_GRID_LIMIT = {}    # device id -> the most blocks a grid-stride launch uses


def _function(cupy, kernel):
    dev = cupy.cuda.runtime.getDevice()
    fn = _FUNCTIONS.get((dev, kernel.key))
    if fn is None:
        module = cupy.RawModule(code=kernel.source, options=compiler.options())
        fn = _FUNCTIONS[(dev, kernel.key)] = module.get_function(kernel.name)
        if dev not in _GRID_LIMIT:
            sms = cupy.cuda.runtime.getDeviceProperties(dev)["multiProcessorCount"]
            _GRID_LIMIT[dev] = sms * 32
    return fn, _GRID_LIMIT[dev]


def launch(kernel, n, args):
    """Run ``kernel`` over ``n`` work items on the current device and stream."""
    if n <= 0:
        return
    import cupy
    fn, limit = _function(cupy, kernel)
    grid = min((n + BLOCK - 1) // BLOCK, limit)
    fn((grid,), (BLOCK,), tuple(args))
