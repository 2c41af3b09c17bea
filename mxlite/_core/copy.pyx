"""Strided N-d copy of any dtype: the one kernel behind transpose, flip, slicing,
broadcast_to, tile, swapaxes, diag, concat and ``__setitem__``.

A shape op builds a NumPy *view* (metadata only, O(1)) and this kernel moves the bytes.
Dimensions that are contiguous in both arrays are merged first, so the inner loop runs
as long as possible; rows run in parallel above ``PARALLEL_MIN`` elements.
"""
from cython.parallel cimport prange
from libc.stdint cimport uint16_t
from libc.string cimport memcpy

cimport numpy as cnp
import numpy as np
from .common cimport idx_t, PARALLEL_MIN

cnp.import_array()

cdef extern from "mx_fork.h" nogil:
    bint mx_omp_release()
    void mx_omp_single_thread()
    idx_t mx_omp_max_threads()

cdef enum:
    MAX_DIMS = 64
    ROW_RUN = 1 << 14          # elements of one run of rows a thread copies


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
    # runs of rows of about ROW_RUN elements: a short inner row (depth_to_space's 2) costs a
    # run's bookkeeping, not a division per dimension per row
    cdef idx_t per = max(1, ROW_RUN // inner), runs = (rows + per - 1) // per
    if size >= PARALLEL_MIN and runs > 1:
        for row in prange(runs, nogil=True, schedule="static"):
            _copy_rows(d, s, row * per, min(rows, (row + 1) * per), nd, shape, ss, ds,
                       itemsize)
    else:
        with nogil:
            _copy_rows(d, s, 0, rows, nd, shape, ss, ds, itemsize)


cdef void _copy_rows(char* d, const char* s, idx_t first, idx_t stop, idx_t nd, idx_t* shape,
                     idx_t* ss, idx_t* ds, idx_t itemsize) noexcept nogil:
    """Rows [first, stop) (row-major over the outer nd - 1 dimensions): the first row's
    position by division, each next one by a step of the position's digits (an odometer)."""
    cdef idx_t pos[MAX_DIMS]
    cdef idx_t k, r = first, soff = 0, doff = 0, row
    for k in range(nd - 2, -1, -1):
        pos[k] = r % shape[k]
        r = r // shape[k]
        soff += pos[k] * ss[k]
        doff += pos[k] * ds[k]
    for row in range(first, stop):
        _copy_row(d + doff, s + soff, shape[nd - 1], ds[nd - 1], ss[nd - 1], itemsize)
        k = nd - 2
        while k >= 0:
            pos[k] += 1
            soff += ss[k]
            doff += ds[k]
            if pos[k] < shape[k]:
                break
            soff -= ss[k] * shape[k]
            doff -= ds[k] * shape[k]
            pos[k] = 0
            k -= 1


# ---- float32 <-> float16 casts ----------------------------------------------------------------
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include "mx_simd.h"
    #define MX_CAST_INLINE static inline __attribute__((always_inline))
    /* float32 to float16 bits exactly as NumPy's cast (npy_floatbits_to_halfbits): rounded
       to nearest even, overflow to inf, a NaN keeps its sign and top payload bits (at least
       one set: a signaling NaN is not quieted). Both the normal and the subnormal result are
       computed and one selected, so the loop vectorizes; the subnormal one by a float
       addition of 0.5, which rounds the value to a multiple of 2**-24 in its low bits
       (F. Giesen's method; values below 2**-25 give zero, as NumPy's). No branch (a NaN's
       payload is made nonzero by adding payload == 0): the loops vectorize. */
    #include <math.h>
    MX_CAST_INLINE uint16_t mx_cast_f32_f16(float v) {
        uint32_t u, x, sign, odd, normal, sub, tb, payload;
        float xf, t;
        memcpy(&u, &v, 4);
        sign = (u >> 16) & 0x8000u;
        x = u & 0x7fffffffu;
        odd = (x >> 13) & 1u;
        normal = (x + 0xc8000fffu + odd) >> 13;          /* rebias 127 -> 15, round */
        memcpy(&xf, &x, 4);
        t = xf + 0.5f;
        memcpy(&tb, &t, 4);
        sub = tb - 0x3f000000u;
        payload = (x >> 13) & 0x3ffu;
        normal = x < 0x38800000u ? sub : normal;         /* below 2**-14: subnormal */
        normal = x >= 0x47800000u ? 0x7c00u : normal;    /* 2**16 and up: inf */
        normal = x > 0x7f800000u ? 0x7c00u | (payload + (payload == 0u)) : normal; /* NaN */
        return (uint16_t)(sign | normal);
    }
    /* float16 bits to float32, exact, as NumPy's cast (npy_halfbits_to_floatbits): a NaN keeps
       its payload (shifted up), a subnormal m 2**-24 is computed as a float product (exact). */
    MX_CAST_INLINE float mx_cast_f16_f32(uint16_t h) {
        uint32_t sign = (uint32_t)(h & 0x8000u) << 16, x = h & 0x7fffu, bits;
        float sub = (float)(x & 0x3ffu) * 5.9604644775390625e-08f, out;
        bits = x >= 0x7c00u ? 0x7f800000u | ((x & 0x3ffu) << 13) : (x + 0x1c000u) << 13;
        memcpy(&out, &bits, 4);
        out = x < 0x400u ? sub : out;
        memcpy(&bits, &out, 4);
        bits |= sign;
        memcpy(&out, &bits, 4);
        return out;
    }
    /* float64 to float16 bits as NumPy's cast (npy_doublebits_to_halfbits), rounded once: the
       double is cut to a float32 rounded to odd (its top 23 mantissa bits, the last one set
       when any bit below was: 24 bits are 2 more than float16's 11, so rounding that to
       nearest even rounds once; Boldo and Melquiond, "When double rounding is odd", 2005),
       then mx_cast_f32_f16. The cut is integer work on the two 32-bit halves of the double
       (rebias 1023 -> 127): below 2**-25 (float16 zero) gives 0, from 2**16 (float16 inf)
       gives 2**16, and a NaN keeps its sign and top 10 payload bits (at least one set), as
       NumPy's. No branch: the loop vectorizes. */
    MX_CAST_INLINE uint16_t mx_cast_f64_f16(double d) {
        uint64_t b;
        uint32_t lo, hi, ax, f, p, nan;
        float v;
        memcpy(&b, &d, 8);
        lo = (uint32_t)b;
        hi = (uint32_t)(b >> 32);
        ax = hi & 0x7fffffffu;
        f = (((ax << 3) | (lo >> 29)) - (896u << 23)) | ((lo & 0x1fffffffu) != 0u);
        p = (ax >> 10) & 0x3ffu;
        nan = (ax > 0x7ff00000u) | ((ax == 0x7ff00000u) & (lo != 0u));
        f = ax < 0x3e600000u ? 0u : f;
        f = ax >= 0x40f00000u ? 0x47800000u : f;
        f = nan ? 0x7f800000u | ((p + (p == 0u)) << 13) : f;
        f |= hi & 0x80000000u;
        memcpy(&v, &f, 4);
        return mx_cast_f32_f16(v);
    }
    /* float16 bits to float64, exact, as NumPy's cast (a NaN keeps its payload: no float32
       step, whose conversion to double would quiet a signaling NaN). */
    MX_CAST_INLINE double mx_cast_f16_f64(uint16_t h) {
        uint64_t sign = (uint64_t)(h & 0x8000u) << 48, x = h & 0x7fffu, bits;
        double sub = (double)(x & 0x3ffu) * 5.9604644775390625e-08, out;
        bits = x >= 0x7c00u ? 0x7ff0000000000000ull | ((x & 0x3ffu) << 42)
                            : (x << 42) + (1008ull << 52);
        memcpy(&out, &bits, 8);
        out = x < 0x400u ? sub : out;
        memcpy(&bits, &out, 8);
        bits |= sign;
        memcpy(&out, &bits, 8);
        return out;
    }
    /* Elements [lo, hi) of one conversion (kind: 0 float32 -> float16, 1 float16 -> float32,
       2 float64 -> float16, 3 float16 -> float64), each loop vectorized; compiled for
       baseline x86-64 and for AVX2 (mx_simd.h's levels: the same operations, the same
       bits; MXLITE_SIMD=baseline keeps SSE2). */
    #define MX_CAST_SPAN(name, target)                                                        \
        target static void name(int kind, const void* x, void* y, int64_t lo, int64_t hi) {  \
            int64_t i;                                                                         \
            if (kind == 0)                                                                     \
                for (i = lo; i < hi; i++)                                                      \
                    ((uint16_t*)y)[i] = mx_cast_f32_f16(((const float*)x)[i]);                 \
            else if (kind == 1)                                                                \
                for (i = lo; i < hi; i++)                                                      \
                    ((float*)y)[i] = mx_cast_f16_f32(((const uint16_t*)x)[i]);                 \
            else if (kind == 2)                                                                \
                for (i = lo; i < hi; i++)                                                      \
                    ((uint16_t*)y)[i] = mx_cast_f64_f16(((const double*)x)[i]);                \
            else                                                                               \
                for (i = lo; i < hi; i++)                                                      \
                    ((double*)y)[i] = mx_cast_f16_f64(((const uint16_t*)x)[i]);                \
        }
    MX_CAST_SPAN(mx_cast_span_l0, MX_TARGET_0)
    MX_CAST_SPAN(mx_cast_span_l1, MX_TARGET_1)
    static void mx_cast_span(int kind, const void* x, void* y, int64_t lo, int64_t hi) {
        static int level = -1;
        if (level < 0) level = mx_simd_default();
        if (level >= 1)
            mx_cast_span_l1(kind, x, y, lo, hi);
        else
            mx_cast_span_l0(kind, x, y, lo, hi);
    }
    """
    uint16_t mx_cast_f32_f16(float v) noexcept nogil
    float mx_cast_f16_f32(uint16_t h) noexcept nogil
    uint16_t mx_cast_f64_f16(double v) noexcept nogil
    double mx_cast_f16_f64(uint16_t h) noexcept nogil
    void mx_cast_span(int kind, const void* x, void* y, idx_t lo, idx_t hi) noexcept nogil


cdef enum:
    # the conversions cast_half runs: source to destination (mx_cast_span's kinds)
    F32_F16 = 0
    F16_F32 = 1
    F64_F16 = 2
    F16_F64 = 3


_KINDS = {("float32", "float16"): F32_F16, ("float16", "float32"): F16_F32,
          ("float64", "float16"): F64_F16, ("float16", "float64"): F16_F64}


def cast_half(cnp.ndarray src, cnp.ndarray dst):
    """``dst[...] = src`` from float32 or float64 to float16, or from float16 to float32 or
    float64, both C-contiguous of one size, bit for bit NumPy's cast (see mx_cast_f32_f16,
    mx_cast_f64_f16) at a fraction of its time (NumPy converts element by element through a
    branchy routine); chunks run in parallel above ``PARALLEL_MIN`` elements. Bad arguments
    raise ValueError."""
    key = (src.dtype.name, dst.dtype.name)
    if key not in _KINDS:
        raise ValueError(f"cast_half: float32/float64 <-> float16 only, got {src.dtype} -> "
                         f"{dst.dtype}")
    if not (cnp.PyArray_IS_C_CONTIGUOUS(src) and cnp.PyArray_IS_C_CONTIGUOUS(dst)
            and dst.flags.writeable and src.size == dst.size):
        raise ValueError("cast_half: src and dst must be C-contiguous, of one size, dst "
                         "writeable")
    cdef int kind = _KINDS[key]
    cdef idx_t n = src.size, c, chunk = 1 << 16, chunks = (n + chunk - 1) // chunk
    cdef const void* s = cnp.PyArray_DATA(src)
    cdef void* d = cnp.PyArray_DATA(dst)
    if n >= PARALLEL_MIN and chunks > 1:
        for c in prange(chunks, nogil=True, schedule="static"):
            mx_cast_span(kind, s, d, c * chunk, min(n, (c + 1) * chunk))
    else:
        with nogil:
            mx_cast_span(kind, s, d, 0, n)


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
