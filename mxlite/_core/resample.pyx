# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""The image kernels of ``mxlite/ops/image.py``: the separable tap filter of the resize
operators (``_image_resize``, ``_cvimresize``, ``_backward_image_resize``), below, and the
per-pixel colour steps of the random colour operators (``colour_hue``,
``colour_saturation``, ``colour_luma``, ``colour_store``: colour.pxi, included at the end),
the gather of the bilinear sampler of ``mxlite/ops/spatial.py`` (``bilinear_gather``:
sampler.pxi), and contrib.box_decode of ``mxlite/ops/detection.py`` (``box_decode``:
boxes.pxi).

``resample(src, dst, index_h, weight_h, index_w, weight_w)`` writes, for an (N, H, W, C)
block ``src`` of any strides into an (N, OH, OW, C) block ``dst``::

    dst[n, i, j, c] = sum_b weight_w[j, b] * sum_a weight_h[i, a]
                                               * src[n, index_h[i, a], index_w[j, b], c]

the H taps first (one source-width row per output row, in a per-thread scratch), then the W
taps into a second scratch row, stored last; one output row per loop iteration, the rows
shared among OpenMP threads. The
arithmetic is the one of the NumPy path it replaces, operation for operation, so results are
bit-for-bit the same: float64 data computes in float64; every other dtype in float32, except
that the H taps of int32/int64 data accumulate in float64 (NumPy promotes int32 * float32 to
float64) before the row is rounded to float32. Sums run in tap order starting from -0.0
(``-0.0 + x == x`` for every x, so the first term is kept as it is, signed zeros
included); ``-ffp-contract=off`` keeps each product rounded. float16 is read and written as
its bits, converted to float32 per element (exactly, by a branch-free conversion that
vectorizes: a bicubic (32, 224, 224, 3) float16 resize took 21 ms with the branchy one of
mx_cuda.h, 11 ms with it, float32 4 ms), and stored back to nearest-even.

Integer results are rounded half-to-even and saturated to the dtype's range. Saturation is
done right where the NumPy path was not: it clipped in float32, where int32's maximum
2147483647 rounds up to 2**31, and the cast then wrapped to the minimum; here anything at or
above 2**31 is 2147483647 (int64 likewise at 2**63).

Every size, index and stride is int64: a block past 2**31 elements works.
"""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport parallel, prange
from libc.math cimport copysignf, fabsf, rint
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, INT32_MIN,
                          INT32_MAX, INT64_MIN, INT64_MAX)
from libc.stdlib cimport free, malloc

from .common cimport idx_t, PARALLEL_MIN
from .parallel cimport mx_serial, mx_region, mx_region_begin, mx_region_mark, mx_region_end

from ..base import MXNetError

cnp.import_array()

cdef extern from *:
    """
    /* float16 as its bits, a type of its own so the fused type below tells it from uint16 */
    #include <string.h>
    typedef struct { uint16_t bits; } mx_half_px;

    /* float16 bits to float32, exactly, without a branch (so that loops over it vectorize):
       the 15 bits of exponent and mantissa shifted into place are the value times 2**-112
       (a float32 subnormal for a float16 subnormal), so one multiplication by 2**112 scales
       every finite value; inf and NaN (exponent all ones) are selected apart. */
    static inline float mx_rs_half_to_float(uint16_t h) {
        uint32_t sign = (uint32_t)(h & 0x8000u) << 16, rest = (uint32_t)(h & 0x7fffu) << 13;
        uint32_t bits;
        float f;
        memcpy(&f, &rest, 4);
        f *= 5.192296858534827628530496329220096e33f;
        memcpy(&bits, &f, 4);
        bits = (h & 0x7c00u) == 0x7c00u ? (sign | 0x7f800000u | rest) : (sign | bits);
        memcpy(&f, &bits, 4);
        return f;
    }
    """
    ctypedef struct mx_half_px:
        uint16_t bits
    float mx_rs_half_to_float(uint16_t h) nogil

cdef extern from "mx_cuda.h" nogil:
    uint16_t mx_float_to_half(float f)

ctypedef fused pix_t:
    uint8_t
    int8_t
    uint16_t
    int16_t
    int32_t
    int64_t
    mx_half_px
    float
    double

ctypedef fused work_t:
    float
    double

ctypedef struct Geom:
    idx_t N, H, W, C, OH, OW, KH, KW
    idx_t xs0, xs1, xs2, xs3        # src element strides
    idx_t ys0, ys1, ys2, ys3        # dst element strides
    idx_t J, CC, sj, sc             # one src row as J runs of CC elements (merged if it can)

# the dtypes the kernel computes (NumPy's char codes); others go the NumPy way
DTYPES = frozenset("bBhHilqefd")


# ---- the per-element steps ------------------------------------------------------------------
cdef inline double _as_double(pix_t v) noexcept nogil:
    if pix_t is mx_half_px:
        return mx_rs_half_to_float(v.bits)
    else:
        return <double>v


cdef inline float _as_float(pix_t v) noexcept nogil:
    if pix_t is mx_half_px:
        return mx_rs_half_to_float(v.bits)
    else:
        return <float>v


cdef inline float _rint_f(float s) noexcept nogil:
    """rintf (to nearest, ties to even; NumPy's round) without a branch, so that the store
    loop vectorizes: below 2**23, adding and subtracting 2**23 (with the sign of s) rounds to
    an integer in the nearest-even mode; at or above it every float is an integer already."""
    cdef float b = copysignf(8388608.0, s)
    cdef float r = (s + b) - b
    return s if fabsf(s) >= 8388608.0 else r


cdef inline work_t _clamp(work_t s, work_t lo, work_t hi) noexcept nogil:
    """s within [lo, hi] (NaN, which finite taps never give, to 0), as selects."""
    s = 0 if s != s else s
    s = lo if s < lo else s
    return hi if s > hi else s


cdef inline void _put(pix_t* p, work_t s) noexcept nogil:
    """Store ``s``: floats as they are (float16 to nearest even), integers rounded half to
    even and saturated to the dtype's range."""
    if pix_t is float or pix_t is double:
        p[0] = <pix_t>s
    elif pix_t is mx_half_px:
        p[0].bits = mx_float_to_half(<float>s)
    else:
        if work_t is float:
            s = _rint_f(s)
        else:
            s = rint(s)
        if pix_t is uint8_t:
            p[0] = <uint8_t>_clamp(s, 0, 255)
        elif pix_t is int8_t:
            p[0] = <int8_t>_clamp(s, -128, 127)
        elif pix_t is uint16_t:
            p[0] = <uint16_t>_clamp(s, 0, 65535)
        elif pix_t is int16_t:
            p[0] = <int16_t>_clamp(s, -32768, 32767)
        elif pix_t is int32_t:
            # 2**31 is exact in float32 and float64; below it every rounded value fits
            s = _clamp(s, -2147483648.0, 2147483648.0)
            p[0] = INT32_MAX if s == 2147483648.0 else <int32_t>s
        else:
            s = _clamp(s, -9223372036854775808.0, 9223372036854775808.0)
            p[0] = INT64_MAX if s == 9223372036854775808.0 else <int64_t>s


# ---- one output row: the H taps into scratch, then the W taps -------------------------------
cdef inline void _mac(work_t* acc, const pix_t* r, work_t w, idx_t n,
                      idx_t step) noexcept nogil:
    """acc[c] += w * r[c * step] for c < n, in ``work_t`` (a loop of locals only, so that
    the compiler vectorizes the unit-step case)."""
    cdef idx_t c
    if step == 1:
        for c in range(n):
            if work_t is float:
                acc[c] = acc[c] + w * _as_float(r[c])
            else:
                acc[c] = acc[c] + w * _as_double(r[c])
    else:
        for c in range(n):
            if work_t is float:
                acc[c] = acc[c] + w * _as_float(r[c * step])
            else:
                acc[c] = acc[c] + w * _as_double(r[c * step])


cdef void _hpass(const pix_t* xn, const Geom* g, const int64_t* idx, const work_t* wt,
                 work_t* row, double* acc) noexcept nogil:
    """row[j * C + c] = sum_a wt[a] * xn[idx[a], j, c], accumulated in float64 for int32/int64
    data (in ``acc``, then rounded to the float32 row), else in ``work_t`` in ``row``."""
    cdef idx_t a, j, c, n = g.W * g.C, runs = g.J, run = g.CC, sj = g.sj, sc = g.sc
    cdef const pix_t* r
    cdef bint wide = (pix_t is int32_t or pix_t is int64_t) and work_t is float
    if wide:
        for c in range(n):
            acc[c] = -0.0
    else:
        for c in range(n):
            row[c] = -0.0
    for a in range(g.KH):
        r = xn + idx[a] * g.xs1
        for j in range(runs):
            if wide:
                _mac(acc + j * run, r + j * sj, <double>wt[a], run, sc)
            else:
                _mac(row + j * run, r + j * sj, wt[a], run, sc)
    if wide:
        for c in range(n):
            row[c] = <work_t>acc[c]


cdef void _wpass(const work_t* row, const Geom* g, const int64_t* idx, const work_t* wt,
                 work_t* orow, pix_t* yi) noexcept nogil:
    """orow[j, c] = sum_b wt[j, b] * row[idx[j, b] * C + c], then stored into yi as ``_put``
    does (two loops: a uint8 store may alias anything, so the sums run in scratch first)."""
    cdef idx_t j, c, b, K = g.KW, C = g.C, OW = g.OW
    cdef const work_t* src
    cdef work_t* o
    cdef work_t w, s0, s1, s2
    if C == 3 or C == 1:      # the common channel counts, in registers (no inner loop)
        for j in range(OW):
            s0 = s1 = s2 = -0.0
            for b in range(K):
                w = wt[j * K + b]
                src = row + idx[j * K + b] * C
                s0 = s0 + w * src[0]
                if C == 3:
                    s1 = s1 + w * src[1]
                    s2 = s2 + w * src[2]
            orow[j * C] = s0
            if C == 3:
                orow[j * C + 1] = s1
                orow[j * C + 2] = s2
    else:
        for j in range(OW):
            o = orow + j * C
            for c in range(C):
                o[c] = -0.0
            for b in range(K):
                w = wt[j * K + b]
                src = row + idx[j * K + b] * C
                for c in range(C):
                    o[c] = o[c] + w * src[c]
    if g.ys3 == 1 and g.ys2 == C:
        for c in range(g.OW * C):
            _put(yi + c, orow[c])
    else:
        for j in range(g.OW):
            for c in range(C):
                _put(yi + j * g.ys2 + c * g.ys3, orow[j * C + c])


cdef inline void _unit(const pix_t* x, pix_t* y, const Geom* g, const int64_t* ih,
                       const work_t* wh, const int64_t* iw, const work_t* ww, idx_t u,
                       char* buf) noexcept nogil:
    """Output row u = n * OH + i with one thread's scratch ``buf``."""
    cdef idx_t n = u // g.OH, i = u % g.OH
    cdef double* acc = <double*>buf          # first: the doubles stay 8-byte aligned
    cdef work_t* row = <work_t*>(buf + g.W * g.C * sizeof(double))
    cdef work_t* orow = row + g.W * g.C
    _hpass(x + n * g.xs0, g, ih + i * g.KH, wh + i * g.KH, row, acc)
    _wpass(row, g, iw, ww, orow, y + n * g.ys0 + i * g.ys1)


cdef int _drive(const pix_t* x, pix_t* y, const Geom* g, const int64_t* ih, const work_t* wh,
                const int64_t* iw, const work_t* ww) noexcept nogil:
    """Every output row, in parallel when the work is worth it; -1 when scratch failed."""
    cdef idx_t u, units = g.N * g.OH
    cdef size_t per = g.W * g.C * (sizeof(work_t) + sizeof(double)) + g.OW * g.C * sizeof(work_t)
    cdef char* buf = NULL
    cdef int failed = 0
    cdef int* fail = &failed
    cdef mx_region reg
    cdef idx_t work = units * (g.W * g.C * g.KH + g.OW * g.C * g.KW)
    if units > 1 and work >= PARALLEL_MIN and not mx_serial(work):
        mx_region_begin(&reg)
        with parallel():
            buf = <char*>malloc(per)
            for u in prange(units, schedule="static"):
                mx_region_mark(&reg)
                if buf == NULL:
                    fail[0] = 1
                else:
                    _unit(x, y, g, ih, wh, iw, ww, u, buf)
            free(buf)
        mx_region_end(&reg)
    else:
        buf = <char*>malloc(per)
        if buf == NULL:
            return -1
        for u in range(units):
            _unit(x, y, g, ih, wh, iw, ww, u, buf)
        free(buf)
    return -1 if failed else 0


# ---- the Python entry point -----------------------------------------------------------------
def _fail(what):
    raise MXNetError(f"resample: {what}")


def _element_strides(name, a):
    """``a``'s strides in elements (a byte stride that is no multiple of the item is bad)."""
    size = a.dtype.itemsize
    if any(s % size for s in a.strides):
        _fail(f"{name} strides {a.strides} are not multiples of its item size {size}")
    return [s // size for s in a.strides]


def _check_taps(axis, index, weight, n_out, n_in, work):
    """index (n_out, K) int64 in [0, n_in), weight (n_out, K) of the work dtype, finite."""
    for name, a, dt in ((f"index_{axis}", index, np.int64), (f"weight_{axis}", weight, work)):
        if not isinstance(a, np.ndarray) or a.dtype != dt or a.ndim != 2 \
                or not a.flags.c_contiguous:
            _fail(f"{name} must be a C-contiguous 2-D {np.dtype(dt)} array, got "
                  f"{getattr(a, 'dtype', type(a).__name__)} of shape {getattr(a, 'shape', None)}")
    if index.shape != weight.shape or index.shape[0] != n_out or index.shape[1] < 1:
        _fail(f"index_{axis} {index.shape} and weight_{axis} {weight.shape} must both be "
              f"({n_out}, K) with K >= 1")
    if index.size and (int(index.min()) < 0 or int(index.max()) >= n_in):
        _fail(f"index_{axis} must lie in [0, {n_in}), got [{int(index.min())}, "
              f"{int(index.max())}]")
    if not np.isfinite(weight).all():
        _fail(f"weight_{axis} must be finite")


def _byte_span(a):
    """[first, last + 1) of the bytes ``a`` spans (its strides may be negative)."""
    cdef Py_ssize_t lo = <Py_ssize_t>cnp.PyArray_DATA(a), hi = lo + a.dtype.itemsize
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi


def _overlap(a, b):
    """Whether the byte spans of two non-empty arrays meet (the bounds test, no NumPy call:
    the kernel also runs for devices whose namespace must do every array operation)."""
    a_lo, a_hi = _byte_span(a)
    b_lo, b_hi = _byte_span(b)
    return a_lo < b_hi and b_lo < a_hi


def _geometry(src, dst, index_h, index_w):
    """The Geom fields of a checked call, as a dict."""
    n, h, w, c = src.shape
    xs, ys = _element_strides("src", src), _element_strides("dst", dst)
    # a row of W pixels of C elements is one run of W * C when the pixels are back to back
    merged = xs[2] == c * xs[3] or w == 1
    return dict(N=n, H=h, W=w, C=c, OH=dst.shape[1], OW=dst.shape[2], KH=index_h.shape[1],
                KW=index_w.shape[1], xs0=xs[0], xs1=xs[1], xs2=xs[2], xs3=xs[3],
                ys0=ys[0], ys1=ys[1], ys2=ys[2], ys3=ys[3],
                J=1 if merged else w, CC=w * c if merged else c, sj=0 if merged else xs[2],
                sc=xs[3] if merged or c > 1 else 1)


def resample(src, dst, index_h, weight_h, index_w, weight_w):
    """Write the separable interpolation of ``src`` (N, H, W, C) into ``dst`` (N, OH, OW, C)
    (the module docstring has the formula and the arithmetic): ``index_h``/``weight_h``
    (OH, KH) and ``index_w``/``weight_w`` (OW, KW) are the taps, the indices int64, the
    weights float64 for float64 data and float32 for every other dtype. ``src`` and ``dst``
    may have any strides but must not overlap. Bad arguments raise MXNetError."""
    for name, a in (("src", src), ("dst", dst)):
        if not isinstance(a, np.ndarray) or a.ndim != 4:
            _fail(f"{name} must be a 4-D (N, H, W, C) numpy array, got "
                  f"{type(a).__name__} of shape {getattr(a, 'shape', None)}")
    if src.dtype != dst.dtype or src.dtype.char not in DTYPES or not src.dtype.isnative:
        _fail(f"src and dst must share one dtype of uint8, int8, uint16, int16, int32, int64, "
              f"float16, float32, float64; got {src.dtype} and {dst.dtype}")
    if not dst.flags.writeable:
        _fail("dst is read-only")
    n, h, w, c = src.shape
    if dst.shape[0] != n or dst.shape[3] != c:
        _fail(f"dst {dst.shape} must have src {src.shape}'s batch and channels")
    work = np.dtype(np.float64 if src.dtype == np.float64 else np.float32)
    _check_taps("h", index_h, weight_h, dst.shape[1], h, work)
    _check_taps("w", index_w, weight_w, dst.shape[2], w, work)
    if dst.size == 0 or src.size == 0:
        return
    if _overlap(src, dst):
        _fail("src and dst overlap")
    _run(src, dst, index_h, weight_h, index_w, weight_w, _geometry(src, dst, index_h, index_w))


def _run(src, dst, index_h, weight_h, index_w, weight_w, dict fields):
    cdef Geom g = fields
    cdef void* x = cnp.PyArray_DATA(src)
    cdef void* y = cnp.PyArray_DATA(dst)
    cdef const int64_t* ih = <const int64_t*>cnp.PyArray_DATA(index_h)
    cdef const int64_t* iw = <const int64_t*>cnp.PyArray_DATA(index_w)
    cdef void* wh = cnp.PyArray_DATA(weight_h)
    cdef void* ww = cnp.PyArray_DATA(weight_w)
    cdef char kind = ord(src.dtype.char)
    cdef int rc = 0
    with nogil:
        if kind == b'B':
            rc = _drive(<const uint8_t*>x, <uint8_t*>y, &g, ih, <float*>wh, iw, <float*>ww)
        elif kind == b'b':
            rc = _drive(<const int8_t*>x, <int8_t*>y, &g, ih, <float*>wh, iw, <float*>ww)
        elif kind == b'H':
            rc = _drive(<const uint16_t*>x, <uint16_t*>y, &g, ih, <float*>wh, iw, <float*>ww)
        elif kind == b'h':
            rc = _drive(<const int16_t*>x, <int16_t*>y, &g, ih, <float*>wh, iw, <float*>ww)
        elif kind == b'i':
            rc = _drive(<const int32_t*>x, <int32_t*>y, &g, ih, <float*>wh, iw, <float*>ww)
        elif kind == b'l' or kind == b'q':
            rc = _drive(<const int64_t*>x, <int64_t*>y, &g, ih, <float*>wh, iw, <float*>ww)
        elif kind == b'e':
            rc = _drive(<const mx_half_px*>x, <mx_half_px*>y, &g, ih, <float*>wh, iw,
                        <float*>ww)
        elif kind == b'f':
            rc = _drive(<const float*>x, <float*>y, &g, ih, <float*>wh, iw, <float*>ww)
        else:
            rc = _drive(<const double*>x, <double*>y, &g, ih, <double*>wh, iw, <double*>ww)
    if rc:
        raise MemoryError(f"resample: no scratch of {(g.W + g.OW) * g.C * 16} bytes per thread")


# ---- the colour steps of the random colour operators ------------------------------------------
include "colour.pxi"


# ---- the bilinear sampler's gather ------------------------------------------------------------
include "sampler.pxi"


# ---- contrib.box_decode -----------------------------------------------------------------------
include "boxes.pxi"
