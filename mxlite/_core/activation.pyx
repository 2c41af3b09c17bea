# cython: language_level=3
# distutils: language = c++
"""Kernels of the neural-network layers (``mxlite/ops/nn.py``): the parametric activations
of ``Activation``/``LeakyReLU`` and their fused derivatives, and the softmax family over one
axis of an ``(outer, n, inner)`` array.

Every loop is over float32 or float64 (one fused type), with ``int64`` sizes and indices;
float32 ELU/SELU/GELU/softrelu and their derivatives run the vectorized kernels of mx_act.h
(no libm calls; ELU/SELU in double inside, GELU and softrelu in float32 to a few ulps),
float64 goes through libm (``_act``);
loops over at least ``PARALLEL_MIN`` elements run under ``prange`` with the contention guard
of ``mx_parallel.h``. Inputs and outputs are C-contiguous and flattened by the caller.
"""
from cython.parallel cimport prange
from libc.math cimport exp, log, INFINITY
from libc.stdint cimport uint16_t
from libc.stdlib cimport malloc, free

from .common cimport idx_t, PARALLEL_MIN
from .parallel cimport mx_serial, mx_region, mx_region_begin, mx_region_mark, mx_region_end

ctypedef fused real:
    float
    double

cdef extern from "mx_act.h" nogil:
    float mx_expf(float x)
    int mx_act_f32(int kind, const float* x, float* y, idx_t n, double a, double b)
    double mx_act_f64(int kind, double x, double a, double b)
    void mx_expf_loop(const float* x, float* y, idx_t n)
    void mx_softmax_row_f32(const float* x, float* y, idx_t n, float scale, int log_mode)
    void mx_softmax_block_f32(const float* x, float* y, idx_t n, idx_t inner, float scale,
                              int log_mode, float* m, double* s)

# Element-wise activations: ids shared with ops/nn.py (ACT_IDS).
cdef enum:
    SOFTRELU = 0   # log(1 + exp(x)), stable for large |x|
    LEAKY = 1      # x > 0 ? x : a * x
    ELU = 2        # x > 0 ? x : a * expm1(x)
    SELU = 3       # b * (x > 0 ? x : a * expm1(x))
    GELU = 4       # x / 2 * (1 + erf(x / sqrt(2)))
    # derivatives d f / d x, evaluated at x
    D_SOFTRELU = 5  # sigmoid(x)
    D_LEAKY = 6     # x > 0 ? 1 : a
    D_ELU = 7       # x > 0 ? 1 : a * exp(x)
    D_SELU = 8      # b * (x > 0 ? 1 : a * exp(x))
    D_GELU = 9      # Phi(x) + x phi(x)
    D2_GELU = 10    # phi(x) (2 - x^2)

ACT_IDS = {"softrelu": SOFTRELU, "leaky": LEAKY, "elu": ELU, "selu": SELU, "gelu": GELU,
           "d_softrelu": D_SOFTRELU, "d_leaky": D_LEAKY, "d_elu": D_ELU, "d_selu": D_SELU,
           "d_gelu": D_GELU, "d2_gelu": D2_GELU}

cdef inline double _act(int kind, double x, double a, double b) noexcept nogil:
    # the formulas are in mx_act.h, shared with the CUDA kernels
    return mx_act_f64(kind, x, a, b)


cdef void _leaky_loop(int kind, const real* x, real* y, idx_t i0, idx_t i1,
                      double a) noexcept nogil:
    """LEAKY / D_LEAKY with the kind hoisted and no branch per element (a random sign
    pattern mispredicts half the branches), so the loop vectorizes."""
    cdef idx_t i
    cdef double v, hi = 1.0 if kind == D_LEAKY else 0.0, lo = a if kind == D_LEAKY else 0.0
    if kind == LEAKY:
        for i in range(i0, i1):
            v = x[i]
            y[i] = <real>(v if v > 0 else a * v)
    else:
        for i in range(i0, i1):
            y[i] = <real>(hi if x[i] > 0 else lo)


cdef void _act_loop(int kind, const real* x, real* y, idx_t n, double a, double b) noexcept nogil:
    cdef idx_t i, c, nchunks = (n + 16383) // 16384
    cdef mx_region reg
    if kind == LEAKY or kind == D_LEAKY:
        if n >= PARALLEL_MIN and not mx_serial(n):
            mx_region_begin(&reg)
            for c in prange(nchunks, schedule="static"):
                mx_region_mark(&reg)
                _leaky_loop(kind, x, y, c * 16384, min(n, (c + 1) * 16384), a)
            mx_region_end(&reg)
        else:
            _leaky_loop(kind, x, y, 0, n, a)
        return
    if real is float:
        # mx_act_f32: every float32 kind but leaky, the kind hoisted, vectorized
        if n >= PARALLEL_MIN and not mx_serial(n):
            mx_region_begin(&reg)
            for c in prange(nchunks, schedule="static"):
                mx_region_mark(&reg)
                mx_act_f32(kind, x + c * 16384, y + c * 16384,
                           min(n, (c + 1) * 16384) - c * 16384, a, b)
            mx_region_end(&reg)
        else:
            mx_act_f32(kind, x, y, n, a, b)
        return
    if n >= PARALLEL_MIN and not mx_serial(n):
        mx_region_begin(&reg)
        for i in prange(n, schedule="static"):
            mx_region_mark(&reg)
            y[i] = <real>_act(kind, x[i], a, b)
        mx_region_end(&reg)
    else:
        for i in range(n):
            y[i] = <real>_act(kind, x[i], a, b)


def activation(int kind, const real[::1] x, real[::1] y, double a=0.0, double b=1.0):
    """``y = f(x)`` element-wise for activation ``kind`` (``ACT_IDS``) with parameters
    ``a`` (slope, alpha) and ``b`` (SELU's scale)."""
    if x.shape[0] != y.shape[0]:
        raise ValueError("activation: x and y differ in size")
    if kind < 0 or kind > D2_GELU:
        raise ValueError(f"activation: unknown kind {kind}")
    if x.shape[0] == 0:
        return
    with nogil:
        _act_loop(kind, &x[0], &y[0], x.shape[0], a, b)


# ---- relu on float16 bits --------------------------------------------------------------------
cdef void _relu_half_loop(const uint16_t* x, uint16_t* y, idx_t i0, idx_t i1) noexcept nogil:
    """y = x < 0 ? +0 : x on float16 bit patterns: x < 0 exactly for the bits 0x8001 (the
    least negative subnormal) to 0xfc00 (-inf); -0 and the NaNs (any sign) pass unchanged,
    as relu in float32 and the cast back give them. No branch: the loop vectorizes."""
    cdef idx_t i
    cdef uint16_t u
    cdef bint negatives = False
    if x == y:
        # in place, a chunk without negatives is left as it is: no write (its pages stay
        # clean, a lazily zeroed array stays unallocated)
        for i in range(i0, i1):
            negatives |= <uint16_t>(x[i] - 0x8001) <= 0x7bff
        if not negatives:
            return
    for i in range(i0, i1):
        u = x[i]
        y[i] = 0 if <uint16_t>(u - 0x8001) <= 0x7bff else u


def relu_half(const uint16_t[::1] x, uint16_t[::1] y):
    """``relu`` of float16 data viewed as uint16 (``y`` may be ``x``): the bits relu computed
    in float32 and rounded back would give (relu is exact), without the float32 round trip
    (two casts of the whole array)."""
    cdef idx_t n = x.shape[0], c, nchunks
    cdef mx_region reg
    if y.shape[0] != n:
        raise ValueError("relu_half: x and y differ in size")
    nchunks = (n + 16383) // 16384
    with nogil:
        if n >= PARALLEL_MIN and not mx_serial(n):
            mx_region_begin(&reg)
            for c in prange(nchunks, schedule="static"):
                mx_region_mark(&reg)
                _relu_half_loop(&x[0], &y[0], c * 16384, min(n, (c + 1) * 16384))
            mx_region_end(&reg)
        elif n:
            _relu_half_loop(&x[0], &y[0], 0, n)


# ---- the softmax family over one axis --------------------------------------------------------

def expf(const float[::1] x, float[::1] y):
    """``y = exp(x)`` for float32 through the vectorized ``mx_expf`` of mx_act.h (tests)."""
    if x.shape[0] != y.shape[0]:
        raise ValueError("expf: sizes differ")
    if x.shape[0]:
        with nogil:
            mx_expf_loop(&x[0], &y[0], x.shape[0])


cdef int _softmax_f32(const float* px, float* py, idx_t outer, idx_t n, idx_t inner,
                      float scale, int mode) noexcept nogil:
    """The float32 softmax without a mask: contiguous rows (inner == 1) or (n, inner)
    blocks, in parallel over rows/blocks when large. Returns -1 when scratch memory ran out."""
    cdef idx_t o
    cdef float* m
    cdef double* s
    cdef int failed = 0
    cdef mx_region reg
    cdef bint par = outer > 1 and outer * n * inner >= PARALLEL_MIN and \
        not mx_serial(outer * n * inner)
    if inner == 1:
        if par:
            mx_region_begin(&reg)
            for o in prange(outer, schedule="static"):
                mx_region_mark(&reg)
                mx_softmax_row_f32(px + o * n, py + o * n, n, scale, mode)
            mx_region_end(&reg)
        else:
            for o in range(outer):
                mx_softmax_row_f32(px + o * n, py + o * n, n, scale, mode)
        return 0
    if par:
        mx_region_begin(&reg)
        for o in prange(outer, schedule="static"):
            mx_region_mark(&reg)
            m = <float*>malloc(inner * sizeof(float))
            s = <double*>malloc(inner * sizeof(double))
            if m == NULL or s == NULL:
                failed = 1
            else:
                mx_softmax_block_f32(px + o * n * inner, py + o * n * inner, n, inner, scale,
                                     mode, m, s)
            free(m)
            free(s)
        mx_region_end(&reg)
    else:
        m = <float*>malloc(inner * sizeof(float))
        s = <double*>malloc(inner * sizeof(double))
        if m == NULL or s == NULL:
            failed = 1
        else:
            for o in range(outer):
                mx_softmax_block_f32(px + o * n * inner, py + o * n * inner, n, inner, scale,
                                     mode, m, s)
        free(m)
        free(s)
    return -1 if failed else 0

cdef enum:
    SOFTMAX = 0
    LOG_SOFTMAX = 1


cdef void _softmax_row(int mode, const real* x, real* y, idx_t n, idx_t stride, double scale,
                       idx_t length) noexcept nogil:
    """One row of n elements at ``x[k * stride]``: softmax (or log-softmax) of
    ``scale * x`` over its first ``length`` elements; the rest of the row is written 0."""
    cdef idx_t k
    cdef double m = -INFINITY, s = 0.0, v, lse
    for k in range(length):
        v = scale * x[k * stride]
        if v > m:
            m = v
    if m == -INFINITY or m != m:           # every element -inf, or a NaN: no finite shift
        m = 0.0 if m == -INFINITY else m
    if mode == SOFTMAX:
        for k in range(length):
            v = exp(scale * x[k * stride] - m)
            y[k * stride] = <real>v
            s += v
        s = 1.0 / s
        for k in range(length):
            y[k * stride] = <real>(y[k * stride] * s)
    else:
        for k in range(length):
            s += exp(scale * x[k * stride] - m)
        lse = m + log(s)
        for k in range(length):
            y[k * stride] = <real>(scale * x[k * stride] - lse)
    for k in range(length, n):
        y[k * stride] = 0


def softmax(int mode, const real[::1] x, real[::1] y, idx_t outer, idx_t n, idx_t inner,
            double scale, const long long[::1] length=None):
    """Softmax (mode 0) or log-softmax (mode 1) of ``scale * x`` along the middle axis of
    ``x`` read as ``(outer, n, inner)``, into ``y`` of the same layout, subtracting each
    row's maximum first. ``length`` (``outer * inner`` counts, or None for ``n``) masks each
    row after its first ``length`` elements: they are written 0."""
    cdef idx_t rows = outer * inner, r, o, j, ln
    cdef mx_region reg
    cdef bint masked = length is not None
    if x.shape[0] != outer * n * inner or y.shape[0] != x.shape[0]:
        raise ValueError("softmax: sizes do not match (outer, n, inner)")
    if masked and length.shape[0] != rows:
        raise ValueError("softmax: length has the wrong size")
    if x.shape[0] == 0:
        return
    if mode != SOFTMAX and mode != LOG_SOFTMAX:
        raise ValueError(f"softmax: unknown mode {mode}")
    if masked:
        for r in range(rows):
            if length[r] < 0 or length[r] > n:
                raise ValueError(f"softmax: length {length[r]} is outside [0, {n}]")
    cdef const real* px = &x[0]
    cdef real* py = &y[0]
    cdef const long long* pl = &length[0] if masked else NULL
    cdef int status
    if real is float:
        if not masked and n > 0:
            with nogil:
                status = _softmax_f32(px, py, outer, n, inner, <float>scale, mode)
            if status != 0:
                raise MemoryError("softmax: no memory for the column scratch")
            return
    with nogil:
        if x.shape[0] >= PARALLEL_MIN and rows > 1 and not mx_serial(x.shape[0]):
            mx_region_begin(&reg)
            for r in prange(rows, schedule="static"):
                mx_region_mark(&reg)
                o = r // inner
                j = r - o * inner
                _softmax_row(mode, px + o * n * inner + j, py + o * n * inner + j, n, inner,
                             scale, pl[r] if masked else n)
            mx_region_end(&reg)
        else:
            for r in range(rows):
                o = r // inner
                j = r - o * inner
                ln = pl[r] if masked else n
                _softmax_row(mode, px + o * n * inner + j, py + o * n * inner + j, n, inner,
                             scale, ln)


# ---- PReLU: a learned slope per channel ------------------------------------------------------
def prelu(const real[::1] x, const real[::1] gamma, real[::1] y, idx_t outer, idx_t c,
          idx_t inner):
    """``y = x > 0 ? x : gamma[j] * x`` for ``x`` read as ``(outer, c, inner)``, channel j."""
    cdef idx_t o, j, i, base
    cdef real g, v
    if x.shape[0] != outer * c * inner or y.shape[0] != x.shape[0] or gamma.shape[0] != c:
        raise ValueError("prelu: sizes do not match (outer, c, inner)")
    with nogil:
        for o in range(outer):
            for j in range(c):
                g = gamma[j]
                base = (o * c + j) * inner
                for i in range(base, base + inner):
                    v = x[i]
                    y[i] = v if v > 0 else g * v


def rrelu_slope(const real[::1] x, const real[::1] y, real[::1] out):
    """``out = x < 0 ? y / x : 1``: the slope a leaky rectifier used, from its input and
    output."""
    cdef idx_t i, n = x.shape[0]
    if y.shape[0] != n or out.shape[0] != n:
        raise ValueError("rrelu_slope: sizes differ")
    with nogil:
        for i in range(n):
            out[i] = y[i] / x[i] if x[i] < 0 else 1


def nll_sum(const real[:, ::1] logp, const long long[::1] label, double start=0.0):
    """``start - sum_i logp[i, label[i]]`` (labels already checked to lie in
    ``[0, logp.shape[1])``), accumulated in double in row order: a sum over blocks of rows,
    each block's call starting from the previous one's result, has the bits of one call."""
    cdef idx_t i, n = logp.shape[0]
    cdef double s = start
    if label.shape[0] != n:
        raise ValueError("nll_sum: one label per row is needed")
    with nogil:
        for i in range(n):
            s -= logp[i, label[i]]
    return s
