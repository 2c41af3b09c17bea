"""Strided N-d copy of any dtype: the one kernel behind transpose, flip, slicing,
broadcast_to, tile, swapaxes, diag, concat and ``__setitem__``.

A shape op builds a NumPy *view* (metadata only, O(1)) and this kernel moves the bytes.
Dimensions that are contiguous in both arrays are merged first, so the inner loop runs
as long as possible; rows run in parallel above ``PARALLEL_MIN`` elements.
"""
from cython.parallel cimport prange
from libc.string cimport memcpy

cimport numpy as cnp
from .common cimport idx_t, PARALLEL_MIN

cnp.import_array()

cdef extern from "mx_fork.h" nogil:
    bint mx_omp_release()
    void mx_omp_single_thread()
    idx_t mx_omp_max_threads()

cdef enum:
    MAX_DIMS = 64


cdef inline void _copy_row(char* d, const char* s, idx_t n, idx_t ds, idx_t ss,
                           idx_t itemsize) noexcept nogil:
    cdef idx_t i
    if ds == itemsize and ss == itemsize:
        memcpy(d, s, n * itemsize)
    elif itemsize == 1:
        for i in range(n):
            d[i * ds] = s[i * ss]
    elif itemsize == 2:
        for i in range(n):
            (<unsigned short*>(d + i * ds))[0] = (<const unsigned short*>(s + i * ss))[0]
    elif itemsize == 4:
        for i in range(n):
            (<unsigned int*>(d + i * ds))[0] = (<const unsigned int*>(s + i * ss))[0]
    elif itemsize == 8:
        for i in range(n):
            (<unsigned long long*>(d + i * ds))[0] = (<const unsigned long long*>(s + i * ss))[0]
    else:
        for i in range(n):
            memcpy(d + i * ds, s + i * ss, itemsize)


cdef idx_t _coalesce(cnp.ndarray src, cnp.ndarray dst, idx_t* shape, idx_t* ss,
                     idx_t* ds) except -1:
    """Give src a stride per dst dimension (0 where src broadcasts), drop unit dimensions and
    merge dimensions contiguous in both arrays; return the new ndim."""
    cdef idx_t k, nd = cnp.PyArray_NDIM(dst), lead = nd - cnp.PyArray_NDIM(src)
    cdef idx_t n = 0, dk, sk, sstride
    if lead < 0:
        raise ValueError(f"strided_copy: source has more dimensions than the target "
                         f"({(<object>src).shape} vs {(<object>dst).shape})")
    for k in range(nd):
        dk = dst.shape[k]
        sk = src.shape[k - lead] if k >= lead else 1
        if sk != dk and sk != 1:
            raise ValueError(f"strided_copy: shape {(<object>src).shape} does not broadcast "
                             f"to {(<object>dst).shape}")
        if dk == 1:
            continue
        sstride = src.strides[k - lead] if sk == dk else 0
        if n > 0 and ss[n - 1] == sstride * dk and ds[n - 1] == dst.strides[k] * dk:
            shape[n - 1] *= dk
            ss[n - 1] = sstride
            ds[n - 1] = dst.strides[k]
            continue
        shape[n] = dk
        ss[n] = sstride
        ds[n] = dst.strides[k]
        n += 1
    return n


def strided_copy(cnp.ndarray src, cnp.ndarray dst):
    """Copy ``src`` into ``dst`` element-wise: same dtype, any strides, and src's shape
    broadcasts to dst's (NumPy rules: missing leading or size-1 dimensions repeat).

    ``dst`` must not overlap ``src`` unless they are the same memory with the same strides.
    """
    if src.dtype != dst.dtype:
        raise TypeError(f"strided_copy: dtypes differ ({src.dtype} vs {dst.dtype})")
    if cnp.PyArray_NDIM(dst) > MAX_DIMS:
        raise ValueError(f"strided_copy: more than {MAX_DIMS} dimensions")
    cdef idx_t size = cnp.PyArray_SIZE(dst)
    if size == 0:
        return
    cdef idx_t shape[MAX_DIMS]
    cdef idx_t ss[MAX_DIMS]
    cdef idx_t ds[MAX_DIMS]
    cdef idx_t nd = _coalesce(src, dst, shape, ss, ds)
    cdef idx_t itemsize = dst.itemsize
    cdef char* d = <char*>cnp.PyArray_DATA(dst)
    cdef const char* s = <const char*>cnp.PyArray_DATA(src)
    if nd == 0:                 # a single element
        memcpy(d, s, itemsize)
        return
    cdef idx_t inner = shape[nd - 1], rows = size // inner
    cdef idx_t row, chunk, nchunks
    if rows == 1 and ds[0] == itemsize and ss[0] == itemsize and size >= PARALLEL_MIN:
        # one contiguous block: split it so both threads copy
        chunk = 1 << 16
        nchunks = (size + chunk - 1) // chunk
        for row in prange(nchunks, nogil=True, schedule="static"):
            memcpy(d + row * chunk * itemsize, s + row * chunk * itemsize,
                   min(chunk, size - row * chunk) * itemsize)
        return
    if size >= PARALLEL_MIN and rows > 1:
        for row in prange(rows, nogil=True, schedule="static"):
            _copy_one_row(d, s, row, nd, shape, ss, ds, itemsize)
    else:
        with nogil:
            for row in range(rows):
                _copy_one_row(d, s, row, nd, shape, ss, ds, itemsize)


cdef inline void _copy_one_row(char* d, const char* s, idx_t row, idx_t nd, idx_t* shape,
                               idx_t* ss, idx_t* ds, idx_t itemsize) noexcept nogil:
    cdef idx_t k, r = row, i, soff = 0, doff = 0
    for k in range(nd - 2, -1, -1):
        i = r % shape[k]
        r = r // shape[k]
        soff += i * ss[k]
        doff += i * ds[k]
    _copy_row(d + doff, s + soff, shape[nd - 1], ds[nd - 1], ss[nd - 1], itemsize)


# ---- the OpenMP runtime around fork() (the rule: mxlite/_core/__init__.py) -----------------
# Here because ``_core/__init__`` imports this module first, to start the runtime; every
# extension shares that one runtime, so these calls act for all of them.
def openmp_release():
    """Shut down the calling thread's OpenMP worker threads (its next parallel region starts
    new ones). True when done (or there is no OpenMP), False when the runtime cannot."""
    return mx_omp_release()


def openmp_single_thread():
    """Run the calling thread's parallel regions on that thread alone from now on."""
    mx_omp_single_thread()


def openmp_max_threads():
    """How many threads the calling thread's next parallel region may use."""
    return mx_omp_max_threads()
