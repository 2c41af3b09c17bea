"""The GPU array namespace: the functions of ``mxlite/device/cpu.py`` for GPU arrays.

One class serves two array libraries: CuPy on a CUDA device, and NumPy for the host
emulator of the tests (``mxlite/cuda/emulator.py``). Array data moves through mxlite's own
kernels (``strided_copy``, casts) so the emulator checks them; the few things a library
does well (cuBLAS products, sorting, LAPACK-style solvers) go through ``lib``, the array
module itself (``cupy`` or ``numpy``).
"""
import numpy as np

from ..base import MXNetError
from . import casts as _casts, kernels as _kernels
from .layout import element_strides, layout

__all__ = ["GpuNamespace"]

_COPY = {size: _kernels.kernel("copy", f"copy_{size}", f"""
extern "C" __global__ void copy_{size}(const uint{8 * size}_t* src, uint{8 * size}_t* dst,
                                        const mx_layout l, mx_idx n) {{
    MX_GRID_LOOP(i, n) dst[mx_offset(l, 1, i)] = src[mx_offset(l, 0, i)];
}}
""") for size in (1, 2, 4, 8)}


class GpuNamespace:
    """Array functions for one GPU array library ``lib`` (``cupy`` or ``numpy``), launching
    kernels with ``launcher(kernel, n, args)``; ``name`` is ``'gpu'`` or ``'gpu-emulator'``.
    """

    def __init__(self, lib, launcher, name, synchronize=None, stream=None):
        self.lib, self.name, self._launch = lib, name, launcher
        self.ndarray = lib.ndarray
        self._synchronize = synchronize
        self._stream = stream

    # ---- kernels ------------------------------------------------------------------------
    def launch(self, kernel, n, *args):
        """Run ``kernel`` (a ``mxlite.cuda.kernels.Kernel``) over ``n`` work items with
        ``args``: device arrays (by pointer), NumPy scalars of the parameter types, layouts."""
        self._launch(kernel, int(n), args)

    def synchronize(self):
        """Wait for every kernel launched so far (``waitall``/``wait_to_read``)."""
        if self._synchronize is not None:
            self._synchronize()

    # ---- allocation ---------------------------------------------------------------------
    def empty(self, shape, dtype):
        """An uninitialised C-contiguous array."""
        return self.lib.empty(shape, dtype)

    def zeros(self, shape, dtype):
        """A C-contiguous array of zeros."""
        return self.lib.zeros(shape, dtype)

    def ones(self, shape, dtype):
        """A C-contiguous array of ones."""
        return self.lib.ones(shape, dtype)

    @staticmethod
    def scalar(value, dtype):
        """``value`` as a host 0-d NumPy array of ``dtype``: scalar operands stay on the host
        and reach kernels by value."""
        return np.array(value, dtype)

    def arange(self, n, dtype):
        """``0, 1, ..., n - 1`` in ``dtype``."""
        return self.lib.arange(n, dtype=dtype)

    # ---- data movement ------------------------------------------------------------------
    def strided_copy(self, src, dst):
        """``dst[...] = src`` for arrays of one dtype, any strides (``src`` may broadcast to
        ``dst``'s shape), by mxlite's copy kernel."""
        if src.dtype != dst.dtype:
            raise MXNetError(f"strided_copy: dtypes differ ({src.dtype} and {dst.dtype})")
        if src.shape != dst.shape:
            src = self.lib.broadcast_to(src, dst.shape)
        if dst.size == 0:
            return
        lay = layout(dst.shape, element_strides(src), element_strides(dst))
        self.launch(_COPY[dst.dtype.itemsize], dst.size, src, dst, lay, np.int64(dst.size))

    def copyto(self, dst, src):
        """``dst[...] = src`` for arrays of one dtype (``src`` may broadcast to ``dst``)."""
        self.strided_copy(src, dst)

    def cast_into(self, dst, src):
        """``dst[...] = src`` converted to ``dst``'s dtype as the CPU casts (float to integer
        truncates; ``mxlite.cuda.casts``), by mxlite's cast kernels; ``src`` may broadcast."""
        if dst.dtype == src.dtype:
            self.strided_copy(src, dst)
        else:
            _casts.cast_into(self, dst, src)

    def fill_zero(self, out):
        """Zero ``out`` (any strides) by mxlite's fill kernel."""
        _casts.fill(self, out, 0)

    def ascontiguousarray(self, a, dtype=None):
        """``a`` (converted to ``dtype``) as a C-contiguous array; ``a`` itself when it is
        one already."""
        dtype = a.dtype if dtype is None else np.dtype(dtype)
        if a.flags.c_contiguous and a.dtype == dtype:
            return a
        out = self.lib.empty(a.shape, dtype)
        self.cast_into(out, a)
        return out

    # ---- views --------------------------------------------------------------------------
    def broadcast_to(self, a, shape):
        """A view of ``a`` broadcast to ``shape`` (stride 0 on repeated axes)."""
        return self.lib.broadcast_to(a, shape)

    def as_strided(self, a, shape, strides, writeable=False):
        """A view of ``a``'s buffer with ``shape`` and byte ``strides``."""
        return self.lib.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)

    def may_share_memory(self, a, b):
        """True when the buffers of ``a`` and ``b`` may overlap."""
        return bool(self.lib.may_share_memory(a, b))

    def data_ptr(self, a):
        """The address of ``a``'s first element."""
        return a.data.ptr if self.lib is not np else a.ctypes.data

    # ---- library computation ------------------------------------------------------------
    def add_at(self, a, key, values):
        """``a[key] += values`` with repeated indices accumulating."""
        if self.lib is np:
            np.add.at(a, key, values)
        else:
            import cupyx
            cupyx.scatter_add(a, key, values)

    def matmul(self, a, b, out):
        """``out = a @ b`` (2-D or batched 3-D; cuBLAS on a GPU)."""
        self.lib.matmul(a, b, out=out)

    def argmax(self, a):
        """The flat index of the first maximum of ``a``."""
        return int(self.lib.argmax(a))

    # ---- host transfers -----------------------------------------------------------------
    def to_host(self, a):
        """``a``'s values as a NumPy array (one device-to-host copy; do not write to it)."""
        return a if self.lib is np else self.lib.asnumpy(a)

    def asnumpy(self, a):
        """A NumPy copy of ``a``."""
        return a.copy() if self.lib is np else self.lib.asnumpy(a)

    def from_host(self, a):
        """A NumPy array as a C-contiguous array of this device (one host-to-device copy)."""
        return self.lib.array(a, copy=True, order="C")

    def stream(self, ctx):
        """The stream operators on ``ctx`` run on."""
        return self._stream(ctx) if self._stream is not None else None
