# Included by resample.pyx (the image kernels' extension): the per-pixel colour steps of the
# random colour operators of mxlite/ops/image.py (hue, saturation, the luma of contrast) and
# the saturating store of their float results into integer images.
#
# Each runs in place over a C-contiguous (..., 3) float32 or float64 image block, one pixel
# per iteration, the pixels shared among OpenMP threads (a pixel's result depends on that
# pixel alone, so any thread count gives the same bits). The arithmetic is the one of the
# NumPy path each replaces, operation for operation in the same dtype (Python-float constants
# rounded to the block's dtype first, as NumPy rounds a Python scalar), so results are
# bit-for-bit those of the NumPy path, which the GPU keeps: the NumPy path takes ~40 passes
# over the block for a hue rotation, the kernel one.

ctypedef fused colour_t:
    float
    double


cdef extern from "mx_colour.h" nogil:
    void mx_hue_span_f32(float* p, int64_t lo, int64_t hi, float shift, float eps)
    void mx_hue_span_f64(double* p, int64_t lo, int64_t hi, double shift, double eps)


cdef inline void _hue_span(colour_t* x, idx_t lo, idx_t hi, colour_t shift,
                           colour_t eps) noexcept nogil:
    """``_hue`` of mxlite/ops/image.py over pixels [lo, hi) (mx_colour.h has the arithmetic:
    plain C, so that it vectorizes)."""
    if colour_t is float:
        mx_hue_span_f32(x, lo, hi, shift, eps)
    else:
        mx_hue_span_f64(x, lo, hi, shift, eps)


cdef inline colour_t _luma(const colour_t* p) noexcept nogil:
    """0.299 R + 0.587 G + 0.114 B, summed left to right (``_gray``)."""
    return (p[0] * <colour_t>0.299 + p[1] * <colour_t>0.587) + p[2] * <colour_t>0.114


cdef inline void _saturation_pixel(colour_t* p, colour_t alpha, colour_t rest) noexcept nogil:
    """alpha x + gray (1 - alpha) per channel (``_saturation``; ``rest`` is 1 - alpha)."""
    cdef colour_t gray = _luma(p) * rest
    p[0] = p[0] * alpha + gray
    p[1] = p[1] * alpha + gray
    p[2] = p[2] * alpha + gray


cdef enum:
    COLOUR_CHUNK = 4096           # pixels per parallel work item


cdef void _colour_span(colour_t* x, colour_t* y, idx_t lo, idx_t hi, int kind, colour_t a,
                       colour_t b) noexcept nogil:
    """Step ``kind`` (0 hue, 1 saturation, 2 luma into ``y``) over pixels [lo, hi) of ``x``
    (one loop per kind, so that each vectorizes)."""
    cdef idx_t i
    if kind == 0:
        _hue_span(x, lo, hi, a, b)
    elif kind == 1:
        for i in range(lo, hi):
            _saturation_pixel(x + 3 * i, a, b)
    else:
        for i in range(lo, hi):
            y[i] = _luma(x + 3 * i)


cdef void _colour_drive(colour_t* x, colour_t* y, idx_t n, int kind, colour_t a,
                        colour_t b) noexcept nogil:
    """``_colour_span`` over ``n`` pixels, in chunks shared among threads when worth it."""
    cdef idx_t c, chunks = (n + COLOUR_CHUNK - 1) // COLOUR_CHUNK
    cdef mx_region reg
    if chunks > 1 and n * 3 >= PARALLEL_MIN and not mx_serial(n * 3):
        mx_region_begin(&reg)
        for c in prange(chunks, schedule="static"):
            mx_region_mark(&reg)
            _colour_span(x, y, c * COLOUR_CHUNK, min(n, (c + 1) * COLOUR_CHUNK), kind, a, b)
        mx_region_end(&reg)
    else:
        _colour_span(x, y, 0, n, kind, a, b)


def _colour_block(op, img):
    """Check that ``img`` is a C-contiguous, writeable (..., 3) float32/float64 array."""
    if not isinstance(img, np.ndarray) or img.ndim < 1 or img.shape[img.ndim - 1] != 3:
        raise MXNetError(f"{op}: img must be a (..., 3) numpy array, got "
                         f"{type(img).__name__} of shape {getattr(img, 'shape', None)}")
    if img.dtype not in (np.float32, np.float64) or not img.dtype.isnative \
            or not img.flags.c_contiguous or not img.flags.writeable:
        raise MXNetError(f"{op}: img must be a writeable C-contiguous float32 or float64 "
                         f"array, got {img.dtype} (contiguous: {img.flags.c_contiguous})")


def _colour_run(img, y, int kind, double a, double b):
    cdef idx_t n = img.size // 3
    cdef void* x = cnp.PyArray_DATA(img)
    cdef void* out = cnp.PyArray_DATA(y) if y is not None else NULL
    if img.dtype == np.float32:
        with nogil:
            _colour_drive(<float*>x, <float*>out, n, kind, <float>a, <float>b)
    else:
        with nogil:
            _colour_drive(<double*>x, <double*>out, n, kind, a, b)


def colour_hue(img, double shift, double eps):
    """Rotate the hue of every pixel of ``img`` in place, as ``_hue`` of mxlite/ops/image.py
    does: ``shift`` is ``6 (turns mod 1) - 2``, ``eps`` the chroma below which a pixel is grey
    (both rounded to ``img``'s dtype). Bad arguments raise MXNetError."""
    _colour_block("colour_hue", img)
    _colour_run(img, None, 0, shift, eps)


def colour_saturation(img, double alpha):
    """``alpha x + (1 - alpha) luma(x)`` for every pixel of ``img``, in place (``alpha`` and
    ``1 - alpha`` rounded to ``img``'s dtype). Bad arguments raise MXNetError."""
    _colour_block("colour_saturation", img)
    _colour_run(img, None, 1, alpha, 1.0 - alpha)


def colour_luma(img):
    """The luma 0.299 R + 0.587 G + 0.114 B of every pixel of ``img``, a new array of
    ``img.shape[:-1]`` in ``img``'s dtype. Bad arguments raise MXNetError."""
    _colour_block("colour_luma", img)
    out = np.empty(img.shape[:img.ndim - 1], img.dtype)
    _colour_run(img, out, 2, 0.0, 0.0)
    return out


# ---- the saturating store ----------------------------------------------------------------------
ctypedef fused small_int_t:
    uint8_t
    int8_t
    uint16_t
    int16_t


cdef void _store_span(const float* x, small_int_t* y, idx_t lo, idx_t hi, float lo_v,
                      float hi_v) noexcept nogil:
    """y = (T) clip(x, lo_v, hi_v), truncated toward zero (NumPy's clip, then its cast)."""
    cdef idx_t i
    cdef float v
    for i in range(lo, hi):
        v = x[i]
        v = lo_v if v < lo_v else v         # NumPy's clip, as selects (it vectorizes)
        v = hi_v if v > hi_v else v
        y[i] = <small_int_t>v


cdef void _store_drive(const float* x, small_int_t* y, idx_t n, float lo_v,
                       float hi_v) noexcept nogil:
    cdef idx_t c, per = 3 * COLOUR_CHUNK, chunks = (n + per - 1) // per
    cdef mx_region reg
    if chunks > 1 and n >= PARALLEL_MIN and not mx_serial(n):
        mx_region_begin(&reg)
        for c in prange(chunks, schedule="static"):
            mx_region_mark(&reg)
            _store_span(x, y, c * per, min(n, (c + 1) * per), lo_v, hi_v)
        mx_region_end(&reg)
    else:
        _store_span(x, y, 0, n, lo_v, hi_v)


# the integer dtypes colour_store writes (NumPy's char codes): their ranges are float32 values
STORE_DTYPES = frozenset("BbHh")


def colour_store(value, out):
    """Write the float32 ``value`` into the integer array ``out`` (uint8, int8, uint16 or
    int16, C-contiguous, of ``value``'s size), clipped to ``out``'s range and truncated: the
    NumPy path's ``clip`` then cast. NaN, which the colour steps of integer images never
    give, is undefined. Bad arguments raise MXNetError."""
    if not isinstance(value, np.ndarray) or value.dtype != np.float32 \
            or not value.flags.c_contiguous:
        raise MXNetError(f"colour_store: value must be a C-contiguous float32 numpy array, "
                         f"got {getattr(value, 'dtype', type(value).__name__)}")
    if not isinstance(out, np.ndarray) or out.dtype.char not in STORE_DTYPES \
            or not out.flags.c_contiguous or not out.flags.writeable \
            or out.size != value.size:
        raise MXNetError(f"colour_store: out must be a writeable C-contiguous uint8, int8, "
                         f"uint16 or int16 array of {value.size} elements, got "
                         f"{getattr(out, 'dtype', type(out).__name__)} of shape "
                         f"{getattr(out, 'shape', None)}")
    info = np.iinfo(out.dtype)
    cdef float lo = info.min, hi = info.max
    cdef idx_t n = value.size
    cdef const float* x = <const float*>cnp.PyArray_DATA(value)
    cdef void* y = cnp.PyArray_DATA(out)
    cdef char kind = ord(out.dtype.char)
    with nogil:
        if kind == b'B':
            _store_drive(x, <uint8_t*>y, n, lo, hi)
        elif kind == b'b':
            _store_drive(x, <int8_t*>y, n, lo, hi)
        elif kind == b'H':
            _store_drive(x, <uint16_t*>y, n, lo, hi)
        else:
            _store_drive(x, <int16_t*>y, n, lo, hi)
