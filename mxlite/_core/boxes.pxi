# Included by resample.pyx (the image kernels' extension): contrib.box_decode on the CPU
# (mxlite/ops/detection.py), one box per iteration, boxes across threads.
#
# The array path's arithmetic, operation for operation in its dtype (float32 for float16
# and float32 data, float64 for float64; float16 read exactly and stored to nearest even,
# as NumPy casts): anchor centres x = a0 + w * 0.5 with w = a2 - a0 (corner format), then
# ox = d0 s0 aw + ax, oy = d1 s1 ah + ay, the exponents d2 s2, d3 s3 capped at clip (NaN
# kept, as NumPy's minimum), ow = exp(.) aw * 0.5 (mx_math.h's exp_v for float32, libm's
# exp for float64: what the exp operator's kernels call), out = (ox - ow, oy - oh, ox + ow, oy + oh). The array path took ~20
# passes and temporaries per block, here one.
from libc.math cimport exp

cdef extern from "mx_math.h" namespace "mx":
    float exp_v(float x) noexcept nogil

ctypedef fused box_t:
    mx_half_px
    float
    double


cdef inline double _box_load(const box_t* p, idx_t k) noexcept nogil:
    if box_t is mx_half_px:
        return mx_rs_half_to_float(p[k].bits)
    else:
        return p[k]


cdef inline void _box_store(box_t* p, idx_t k, double v) noexcept nogil:
    """``v`` (a value of the work dtype) into p[k]: float16 rounded to nearest even."""
    if box_t is mx_half_px:
        p[k].bits = mx_float_to_half(<float>v)
    else:
        p[k] = <box_t>v


cdef inline void _decode_box(const box_t* d, const box_t* a, box_t* o, bint corner,
                             const double* s, bint capped, double clip) noexcept nogil:
    cdef bint wide = box_t is double
    cdef float ax, ay, aw, ah, ox, oy, dw, dh, ow, oh, c = <float>clip
    cdef double axd, ayd, awd, ahd, oxd, oyd, dwd, dhd, owd, ohd
    if not wide:
        if corner:
            aw = <float>_box_load(a, 2) - <float>_box_load(a, 0)
            ah = <float>_box_load(a, 3) - <float>_box_load(a, 1)
            ax = <float>_box_load(a, 0) + aw * <float>0.5
            ay = <float>_box_load(a, 1) + ah * <float>0.5
        else:
            ax, ay = <float>_box_load(a, 0), <float>_box_load(a, 1)
            aw, ah = <float>_box_load(a, 2), <float>_box_load(a, 3)
        ox = <float>_box_load(d, 0) * <float>s[0] * aw + ax
        oy = <float>_box_load(d, 1) * <float>s[1] * ah + ay
        dw = <float>_box_load(d, 2) * <float>s[2]
        dh = <float>_box_load(d, 3) * <float>s[3]
        if capped:
            dw = c if dw > c else dw
            dh = c if dh > c else dh
        ow = exp_v(dw) * aw * <float>0.5
        oh = exp_v(dh) * ah * <float>0.5
        _box_store(o, 0, ox - ow)
        _box_store(o, 1, oy - oh)
        _box_store(o, 2, ox + ow)
        _box_store(o, 3, oy + oh)
    else:
        if corner:
            awd = _box_load(a, 2) - _box_load(a, 0)
            ahd = _box_load(a, 3) - _box_load(a, 1)
            axd = _box_load(a, 0) + awd * 0.5
            ayd = _box_load(a, 1) + ahd * 0.5
        else:
            axd, ayd, awd, ahd = _box_load(a, 0), _box_load(a, 1), _box_load(a, 2), _box_load(a, 3)
        oxd = _box_load(d, 0) * s[0] * awd + axd
        oyd = _box_load(d, 1) * s[1] * ahd + ayd
        dwd = _box_load(d, 2) * s[2]
        dhd = _box_load(d, 3) * s[3]
        if capped:
            dwd = clip if dwd > clip else dwd
            dhd = clip if dhd > clip else dhd
        owd = exp(dwd) * awd * 0.5
        ohd = exp(dhd) * ahd * 0.5
        _box_store(o, 0, oxd - owd)
        _box_store(o, 1, oyd - ohd)
        _box_store(o, 2, oxd + owd)
        _box_store(o, 3, oyd + ohd)


cdef void _decode_drive(const box_t* d, const box_t* a, box_t* o, idx_t b, idx_t n,
                        bint corner, const double* s, bint capped, double clip) noexcept nogil:
    cdef idx_t i, total = b * n
    cdef mx_region reg
    if total * 4 >= PARALLEL_MIN and not mx_serial(total * 4):
        mx_region_begin(&reg)
        for i in prange(total, schedule="static"):
            mx_region_mark(&reg)
            _decode_box(d + 4 * i, a + 4 * (i % n), o + 4 * i, corner, s, capped, clip)
        mx_region_end(&reg)
    else:
        for i in range(total):
            _decode_box(d + 4 * i, a + 4 * (i % n), o + 4 * i, corner, s, capped, clip)


def box_decode(data, anchors, out, stds, clip, bint corner):
    """contrib.box_decode of ``data`` (B, N, 4) with ``anchors`` (1, N, 4) into ``out`` (B, N,
    4), one float16/float32/float64 dtype, C-contiguous: ``stds`` the four standard
    deviations and ``clip`` the exponents' cap (None: none), both already rounded to the
    work dtype (float32, float64 for float64 data); ``corner`` for corner-format anchors.
    Bad arguments raise MXNetError."""
    for name, a in (("data", data), ("anchors", anchors), ("out", out)):
        if not isinstance(a, np.ndarray) or a.ndim != 3 or a.shape[2] != 4 \
                or not a.flags.c_contiguous:
            raise MXNetError(f"box_decode: {name} must be a C-contiguous (., N, 4) numpy "
                             f"array, got {type(a).__name__} of shape {getattr(a, 'shape', None)}")
    if data.dtype.char not in "efd" or anchors.dtype != data.dtype \
            or out.dtype != data.dtype or not out.flags.writeable:
        raise MXNetError(f"box_decode: data, anchors and out must share float16, float32 or "
                         f"float64 (out writeable), got {data.dtype}, {anchors.dtype}, "
                         f"{out.dtype}")
    if anchors.shape != (1,) + data.shape[1:] or out.shape != data.shape or len(stds) != 4:
        raise MXNetError(f"box_decode: need anchors (1, N, 4), out of data's shape and 4 stds; "
                         f"got data {data.shape}, anchors {anchors.shape}, out {out.shape}, "
                         f"{len(stds)} stds")
    cdef double s[4]
    for k in range(4):
        s[k] = stds[k]
    cdef idx_t b = data.shape[0], n = data.shape[1]
    cdef void* pd = cnp.PyArray_DATA(data)
    cdef void* pa = cnp.PyArray_DATA(anchors)
    cdef void* po = cnp.PyArray_DATA(out)
    cdef char kind = ord(data.dtype.char)
    cdef bint capped = clip is not None
    cdef double c = clip if capped else 0.0
    with nogil:
        if kind == b'e':
            _decode_drive(<const mx_half_px*>pd, <const mx_half_px*>pa, <mx_half_px*>po, b, n,
                          corner, s, capped, c)
        elif kind == b'f':
            _decode_drive(<const float*>pd, <const float*>pa, <float*>po, b, n, corner, s,
                          capped, c)
        else:
            _decode_drive(<const double*>pd, <const double*>pa, <double*>po, b, n, corner, s,
                          capped, c)
