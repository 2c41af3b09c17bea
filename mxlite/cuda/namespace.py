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
from .layout import MAX_DIMS, element_strides, layout, merge

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
    ``synchronize()`` waits for the current stream, ``stream(ctx)`` names it; ``devices`` is
    the number of GPUs (see ``on_device``).
    """

    def __init__(self, lib, launcher, name, synchronize=None, stream=None, devices=1):
        self.lib, self.name, self._launch = lib, name, launcher
        self.ndarray = lib.ndarray
        self._synchronize = synchronize
        self._stream = stream
        self._device_count = devices
        self._devices = {}      # device id -> the namespace of that GPU (on_device)

    def on_device(self, device_id):
        """This namespace for GPU ``device_id`` (made once): itself when there is one GPU
        (or the emulator); with several, a copy whose every function runs with CuPy's
        current device set to ``device_id``, so allocations, launches, streams and
        synchronizations of ``gpu(i)`` happen on device i."""
        ns = self._devices.get(device_id)
        if ns is None:
            ns = self if self._device_count <= 1 else _bound_to_device(self, device_id)
            self._devices[device_id] = ns
        return ns

    def device_namespaces(self):
        """The per-device namespaces made so far (``waitall`` synchronizes each)."""
        return list(self._devices.values()) or [self]

    # ---- kernels ------------------------------------------------------------------------
    def launch(self, kernel, n, *args):
        """Run ``kernel`` (a ``mxlite.cuda.kernels.Kernel``) over ``n`` work items with
        ``args``: device arrays (by pointer), NumPy scalars of the parameter types, layouts."""
        self._launch(kernel, int(n), args)

    def synchronize(self):
        """Wait for every kernel launched so far on this device's current stream
        (``waitall``/``wait_to_read``)."""
        if self._synchronize is not None:
            self._synchronize()

    # ---- allocation ---------------------------------------------------------------------
    def empty(self, shape, dtype):
        """An uninitialised C-contiguous array."""
        return self.lib.empty(shape, dtype)

    def zeros(self, shape, dtype):
        """A C-contiguous array of zeros."""
        return self.lib.zeros(shape, dtype)

    def untouched_zeros(self, shape, dtype):
        """A C-contiguous array of zeros (the memory pool's: no lazily mapped pages)."""
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
        src_strides, dst_strides = element_strides(src), element_strides(dst)
        if len(merge(dst.shape, (src_strides, dst_strides))[0]) > MAX_DIMS:
            for i in range(dst.shape[0]):       # more axes than a layout holds: one at a time
                self.strided_copy(src[i], dst[i])
            return
        lay = layout(dst.shape, src_strides, dst_strides)
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

    def converted(self, src, dtype):
        """``src.astype(dtype)``: a new array (the CPU namespace's compiled float16 casts have
        CuPy's cast here)."""
        return src.astype(dtype)

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
        """``a[key] += values`` with repeated indices accumulating, in NumPy's order
        (deterministic, bit-identical to ``numpy.add.at``; ``key`` as ``_getitem``'s)."""
        from .ops.indexing import add_at
        add_at(self, a, key, values)

    # CuPy multiplies integer matrices with a kernel of its own whose launch grid has a block
    # per tile of rows and of columns; past 65535 tiles in the grid's y dimension the launch
    # fails. Integer products therefore go through in slabs of at most this many rows/columns.
    _INT_MATMUL_SLAB = 2 ** 20

    def matmul(self, a, b, out):
        """``out = a @ b`` (2-D or batched 3-D; cuBLAS on a GPU)."""
        slab = self._INT_MATMUL_SLAB
        if out.dtype.kind not in "biu" or (a.shape[-2] <= slab and b.shape[-1] <= slab):
            self.lib.matmul(a, b, out=out)
            return
        for r in range(0, a.shape[-2], slab):
            for c in range(0, b.shape[-1], slab):
                out[..., r:r + slab, c:c + slab] = self.lib.matmul(a[..., r:r + slab, :],
                                                                   b[..., :, c:c + slab])

    def argmax(self, a):
        """The flat index of the first maximum of ``a``."""
        return int(self.lib.argmax(a))

    # ---- host transfers -----------------------------------------------------------------
    # CuPy's ``get`` copies on the current stream and waits for it, so the kernels writing
    # the array have finished: a transfer never reads a buffer still being written.
    def to_host(self, a):
        """``a``'s values as a NumPy array (one device-to-host copy; do not write to it)."""
        return a if self.lib is np else a.get()

    def asnumpy(self, a):
        """A NumPy copy of ``a`` (one device-to-host copy)."""
        return a.copy() if self.lib is np else a.get()

    def from_host(self, a):
        """A NumPy array as a C-contiguous array of this device (one host-to-device copy)."""
        return self.lib.array(a, copy=True, order="C")

    def receive(self, dst, src):
        """``dst[...] = src``: ``dst`` an array of this device, ``src`` (same shape and
        dtype, C-contiguous) an array of any device: host memory comes in one
        host-to-device copy, an array of this GPU by the copy kernel, one of another GPU by
        one peer copy after the kernels writing it there have finished."""
        if not isinstance(src, self.ndarray):
            dst.set(src)
        elif self.lib is np or src.device.id == dst.device.id:
            self.strided_copy(src, dst)
        else:
            with src.device:
                self.lib.cuda.get_current_stream().synchronize()
            dst.data.copy_from_device_async(src.data, src.nbytes,
                                            self.lib.cuda.get_current_stream())

    # ---- execution ----------------------------------------------------------------------
    def stream(self, ctx):
        """The stream operators on ``ctx`` run on (CuPy's current stream of the device;
        None under the emulator, which runs kernels synchronously)."""
        return self._stream(ctx) if self._stream is not None else None


def _bound_to_device(base, device_id):
    """A copy of namespace ``base`` whose public functions run with CuPy's current device set
    to ``device_id`` (restored after each call)."""
    import copy
    Device = base.lib.cuda.Device
    ns = copy.copy(base)
    for name in dir(GpuNamespace):
        fn = getattr(base, name)
        if name.startswith("_") or name in ("on_device", "device_namespaces") \
                or not callable(fn):
            continue

        def call(*args, _fn=fn, **kwargs):
            with Device(device_id):
                return _fn(*args, **kwargs)
        call.__name__, call.__doc__ = name, fn.__doc__
        setattr(ns, name, call)
    return ns
