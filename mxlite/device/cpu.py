"""The CPU namespace: every function mxlite's operators and NDArray call on array data.

Arrays on a CPU device (``cpu``, ``cpu_pinned``, ``cpu_shared``) are C-contiguous NumPy
arrays; these are thin functions over NumPy and the ``mxlite._core`` copy kernel. A device
backend provides a namespace with the same names (see ``mxlite.device``); operators reach it
through their run context (``rctx.xp``), so nothing above this layer calls NumPy on array data.

Array *methods* that NumPy and CuPy arrays share (``reshape``, ``transpose``, ``swapaxes``,
basic slicing, ``view``, ``astype``, ``copy``, ``fill``, ``strides``, ``flags``, ``max``) are
device-generic and are called directly.
"""
import mmap

import numpy as np
from numpy.lib.stride_tricks import as_strided as _as_strided

from .._core.copy import cast_half, strided_copy
from ..base import bfloat16_source, is_bfloat16
from . import blas, memory

memory.configure()

__all__ = ["name", "ndarray", "empty", "zeros", "untouched_zeros", "ones", "scalar", "arange", "copyto",
           "cast_into", "converted", "strided_copy", "fill_zero", "ascontiguousarray", "broadcast_to",
           "as_strided", "may_share_memory", "data_ptr", "add_at", "matmul", "argmax",
           "to_host", "asnumpy", "from_host", "receive", "stream", "synchronize",
           "eigh_distinct"]

name = "cpu"
ndarray = np.ndarray        # the array type this device stores


# ---- allocation --------------------------------------------------------------------------------
def empty(shape, dtype):
    """An uninitialised C-contiguous array."""
    return np.empty(shape, dtype)


def zeros(shape, dtype):
    """A C-contiguous array of zeros."""
    return np.zeros(shape, dtype)


# the smallest buffer untouched_zeros maps on its own (smaller ones come from the heap)
UNTOUCHED_MIN_BYTES = 1 << 16


def untouched_zeros(shape, dtype):
    """A C-contiguous array of zeros in a fresh anonymous mapping, whose pages the system
    provides on first write: a buffer that is never written takes no memory. For gradient
    buffers, which an inference-only model never writes (freed heap memory, which ``zeros``
    reuses, is set to zero page by page, so it would be resident)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < UNTOUCHED_MIN_BYTES:
        return np.zeros(shape, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype).reshape(shape)


def ones(shape, dtype):
    """A C-contiguous array of ones."""
    return np.ones(shape, dtype)


# scalar(value, dtype): ``value`` as a 0-d array of ``dtype``, the scalar operand the kernels
# take. NumPy's own function (no Python frame: every ``x + 2`` calls it).
scalar = np.array


def arange(n, dtype):
    """``0, 1, ..., n - 1`` in ``dtype``."""
    return np.arange(n, dtype=dtype)


# ---- data movement -----------------------------------------------------------------------------
def copyto(dst, src):
    """``dst[...] = src`` for arrays of one dtype (``src`` may broadcast to ``dst``)."""
    np.copyto(dst, src)


def cast_into(dst, src):
    """``dst[...] = src`` converted to ``dst``'s dtype, as a cast: float to integer truncates,
    and a value the dtype cannot hold overflows (float16 to inf) without a warning. Every
    float result is rounded once, to nearest even (see ``bfloat16_source``)."""
    if dst.dtype == src.dtype:
        np.copyto(dst, src)             # nothing to convert (the common case: no errstate)
        return
    if half_pair(src, dst.dtype) and src.shape == dst.shape and dst.flags.c_contiguous:
        cast_half(src, dst)             # NumPy's bits, compiled (NumPy's loop: ~10 ns each)
        return
    if is_bfloat16(dst.dtype) and src.dtype.itemsize == 8 and src.dtype.kind in "fiu":
        _cast_wide_to_bfloat16(dst, src)
        return
    with np.errstate(over="ignore", invalid="ignore"):
        np.copyto(dst, src, casting="unsafe")


_F16, _F32, _F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")


def half_pair(src, dtype):
    """Whether ``src`` converts to ``dtype`` by the compiled ``cast_half``: a C-contiguous
    NumPy array, float32 to float16 or back, or float64 to float16 (several times NumPy's
    cast; float16 to float64, which NumPy converts about as fast, keeps NumPy's)."""
    return (type(src) is np.ndarray and src.flags.c_contiguous
            and ((dtype == _F16 and (src.dtype == _F32 or src.dtype == _F64))
                 or (src.dtype == _F16 and dtype == _F32)))


def converted(src, dtype):
    """``src.astype(dtype)`` (a new array), through ``cast_half`` where it applies."""
    if not half_pair(src, dtype):
        return src.astype(dtype)
    out = np.empty(src.shape, dtype)
    cast_half(src, out)
    return out


_BFLOAT16_BLOCK = 1 << 20      # elements of a float64/int64 -> bfloat16 cast done at a time


def _cast_wide_to_bfloat16(dst, src):
    """float64/int64 ``src`` into bfloat16 ``dst``, rounded once (``bfloat16_source``), a
    block at a time when both are C-contiguous and of one shape: the float32 rounded to odd
    and its temporaries then hold one block, not five times the array."""
    if src.shape != dst.shape or not (src.flags.c_contiguous and dst.flags.c_contiguous):
        np.copyto(dst, bfloat16_source(src), casting="unsafe")
        return
    flat_src, flat_dst = src.reshape(-1), dst.reshape(-1)
    for lo in range(0, flat_src.size, _BFLOAT16_BLOCK):
        part = slice(lo, lo + _BFLOAT16_BLOCK)
        np.copyto(flat_dst[part], bfloat16_source(flat_src[part]), casting="unsafe")


def fill_zero(out):
    """Zero ``out``: a C-contiguous array with NumPy's fill (a memset: 6-20x faster than the
    copy kernel reading a stride-0 source), any other through the copy kernel."""
    if out.flags.c_contiguous:
        out.fill(0)
    else:
        strided_copy(np.broadcast_to(np.zeros((), out.dtype), out.shape), out)


def ascontiguousarray(a, dtype=None):
    """``a`` (converted to ``dtype``) as a C-contiguous array; ``a`` itself when it is one."""
    return np.ascontiguousarray(a, dtype=dtype)


# ---- views (metadata only) ---------------------------------------------------------------------
def broadcast_to(a, shape):
    """A read-only view of ``a`` broadcast to ``shape`` (stride 0 on repeated axes)."""
    return np.broadcast_to(a, shape)


def as_strided(a, shape, strides, writeable=False):
    """A view of ``a``'s buffer with ``shape`` and byte ``strides``."""
    return _as_strided(a, shape=shape, strides=strides, writeable=writeable)


def may_share_memory(a, b):
    """True when the buffers of ``a`` and ``b`` may overlap (bounds check, no false negative)."""
    return np.may_share_memory(a, b)


def data_ptr(a):
    """The address of ``a``'s first element."""
    return a.ctypes.data


# ---- computation the kernels of mxlite._core do not cover ----------------------------------------
def add_at(a, key, values):
    """``a[key] += values`` without buffering: repeated indices accumulate."""
    np.add.at(a, key, values)


def matmul(a, b, out):
    """``out = a @ b`` through the BLAS NumPy links (2-D or batched 3-D); small products,
    and every product while the machine looks contended, on one BLAS thread
    (``mxlite.device.blas``)."""
    blas.product(lambda: np.matmul(a, b, out=out), out.size * a.shape[-1])


def argmax(a):
    """The flat index of the first maximum of ``a``."""
    return int(np.argmax(a))


# ---- host transfers ------------------------------------------------------------------------------
def eigh_distinct(w, tie):
    """LAPACK's eigendecomposition of the symmetric matrices ``w`` (batch, n, n):
    ``(eigenvalues ascending, eigenvector columns, tied)``, ``tied`` marking the matrices
    with two eigenvalues within ``tie`` times the largest magnitude (whose eigenvectors are
    not unique: the caller decomposes those its own way). A CPU-only speed-up: other
    devices have no such function and use their own algorithm."""
    lam, v = np.linalg.eigh(w)
    scale = np.maximum(np.abs(lam).max(axis=1, initial=0.0), np.finfo(np.float64).tiny)
    tied = (np.diff(lam, axis=1) <= tie * scale[:, None]).any(axis=1)
    return lam, v, tied


def to_host(a):
    """``a``'s values as a NumPy array (``a`` itself on CPU: no copy; do not write to it)."""
    return a


def asnumpy(a):
    """A NumPy copy of ``a``."""
    return a.copy()


def from_host(a):
    """A NumPy array (C-contiguous) as an array of this device (itself on CPU: no copy)."""
    return a


def receive(dst, src):
    """``dst[...] = src`` where ``src`` (same shape and dtype) is an array of any device: a
    NumPy array is copied; a GPU array (CuPy) comes over in one device-to-host copy."""
    if isinstance(src, np.ndarray):
        np.copyto(dst, src)
    else:
        src.get(out=dst)


# ---- execution ---------------------------------------------------------------------------------
def stream(ctx):
    """The stream operators on ``ctx`` run on: None, CPU kernels run synchronously."""
    return None


def synchronize():
    """Wait for pending kernels: nothing to wait for (CPU kernels are synchronous)."""
