# cython: language_level=3
# distutils: language = c++
"""Kernels of the normalisation family (``mxlite/ops/norm.py``): BatchNorm, LayerNorm,
InstanceNorm and L2Normalization statistics and their affine transform, Dropout's mask
(float16, float32, float64) and product.

Every array is seen as a C-contiguous ``(P, Q, R)`` block (``P`` outer, ``Q`` the axis the
statistics run over or the parameter axis, ``R`` inner). Statistics are accumulated in
double and use two passes over each group (mean, then the sum of squared deviations), the
numerically stable textbook method: a row of LayerNorm is read twice while it is in cache.
Float32 and float64 share one body through the fused type ``floating``. Every public
function checks dtypes and sizes before touching memory; indices are ``int64``. The
formulas (row sums and their order, the finishing steps, the affine and projection
formulas) are in ``mx_norm.h``, shared with the CUDA kernels.
"""
from cython.parallel cimport prange
from libc.stdlib cimport malloc, free

cimport cython
cimport numpy as cnp
import numpy as np
from cython cimport floating
from libc.stdint cimport uint16_t
from .common cimport idx_t, PARALLEL_MIN
from .parallel cimport mx_serial, mx_region, mx_region_begin, mx_region_mark, mx_region_end

cnp.import_array()

# float16 is stored as its bits; these conversions round as the GPU kernels' do
cdef extern from "mx_cuda.h" nogil:
    float mx_half_to_float(uint16_t h)
    uint16_t mx_float_to_half(float f)
    uint16_t mx_double_to_half(double d)

cdef extern from "mx_norm_rows.h" nogil:
    void mx_rows_project(const float* g, const float* xh, idx_t n, float r, float t, float a,
                         float b, float* out)
    void mx_rows_project_out(const float* g, const float* xh, idx_t n, float r, float t,
                             float mg, float mgx, float a, float b, float* out)
    void mx_rows_layer_norm_grad(const float* gy, const float* x, const float* gamma,
                                 idx_t n, float m, float rs, float a, float b, float* xh,
                                 float* G, float* dgp, float* dbp, float* dx)
    void mx_rows_layer_norm_grad(const double* gy, const double* x, const double* gamma,
                                 idx_t n, double m, double rs, double a, double b, double* xh,
                                 double* G, double* dgp, double* dbp, double* dx)
    void mx_rows_sums2(const float* g, const float* xh, idx_t n, double* sg, double* sgx)
    void mx_rows_sums2(const double* g, const double* xh, idx_t n, double* sg, double* sgx)
    void mx_rows_layer_norm(const float* x, idx_t n, const float* gamma, const float* beta,
                            double eps, float* y, float* mean, float* std)
    void mx_rows_layer_norm(const double* x, idx_t n, const double* gamma,
                            const double* beta, double eps, double* y, double* mean,
                            double* std)

cdef extern from "mx_norm.h" nogil:
    double mx_norm_row_sum(const float* row, idx_t n)
    double mx_norm_row_sum(const double* row, idx_t n)
    double mx_norm_row_ssd(const float* row, idx_t n, double m)
    double mx_norm_row_ssd(const double* row, idx_t n, double m)
    void mx_norm_row_sums2(const float* g, const float* xh, idx_t n, double* sg, double* sgx)
    void mx_norm_row_sums2(const double* g, const double* xh, idx_t n, double* sg,
                           double* sgx)
    double mx_norm_finish(double v, double eps, int inverse)
    double mx_norm_ema(double moving, double batch, double momentum)
    float mx_norm_xhat(float x, float mean, float scale)
    double mx_norm_xhat(double x, double mean, double scale)
    float mx_norm_project(float r, float g, float t, float mg, float xh, float mgx, float a,
                          float b)
    float mx_norm_project(float r, float g, double t, double mg, float xh, double mgx,
                          float a, float b)
    double mx_norm_project(double r, double g, double t, double mg, double xh, double mgx,
                           double a, double b)


def _check(name, arrays, sizes, chars="fd"):
    """Each array C-contiguous, of the first array's dtype (one of ``chars``: float32/float64
    unless the kernel also takes float16, ``"efd"``), of its size."""
    dt = arrays[0].dtype
    if dt.char not in chars:
        raise TypeError(f"norm.{name}: unsupported dtype {dt}")
    for a, n in zip(arrays, sizes):
        if a.dtype != dt or not a.flags.c_contiguous or a.size != n:
            raise ValueError(f"norm.{name}: array of dtype {a.dtype}, size {a.size}, "
                             f"contiguous {a.flags.c_contiguous}: expected {dt}, size {n}")


# ---- statistics -------------------------------------------------------------------------------
cdef inline double _row_sum(const floating* row, idx_t n) noexcept nogil:
    """Sum of a contiguous row in double, four accumulators (so the loop pipelines)."""
    return mx_norm_row_sum(row, n)


cdef inline double _row_ssd(const floating* row, idx_t n, double m) noexcept nogil:
    """Sum of squared deviations from ``m`` of a contiguous row, in double."""
    return mx_norm_row_ssd(row, n, m)


# A (P, Q, R) block with one group p and wide rows (a channels-last BatchNorm: Q = N*H*W
# rows of R = C channels) sums its columns over row chunks in parallel: each chunk's
# partial sums, then the chunks' added in order. The chunks depend on Q alone (at least
# CHUNK_ROWS rows, at most MAX_CHUNKS chunks), so the results do not depend on the thread
# count.
DEF CHUNK_ROWS = 256
DEF MAX_CHUNKS = 4096


cdef inline idx_t _chunk_rows(idx_t Q) noexcept nogil:
    return max(<idx_t>CHUNK_ROWS, (Q + MAX_CHUNKS - 1) // MAX_CHUNKS)


cdef void _chunk_sums(const floating* x, const floating* y, const double* m, idx_t R,
                      idx_t q0, idx_t q1, double* s) noexcept nogil:
    """Per column k of rows q0..q1 (R columns): s[k] = sum (x - m[k])^2 where ``m`` is
    given; else s[k] = sum x and, where ``y`` is given, s[R + k] = sum x * y."""
    cdef idx_t q, k
    cdef const floating* row
    cdef double d
    for k in range(2 * R if y != NULL else R):
        s[k] = 0.0
    for q in range(q0, q1):
        row = x + q * R
        if m != NULL:
            for k in range(R):
                d = row[k] - m[k]
                s[k] += d * d
        elif y != NULL:
            for k in range(R):
                s[k] += row[k]
                s[R + k] += <double>row[k] * y[q * R + k]
        else:
            for k in range(R):
                s[k] += row[k]


cdef bint _column_sums(const floating* x, const floating* y, const double* m, idx_t Q,
                       idx_t R, double* out) noexcept nogil:
    """``_chunk_sums`` over all Q rows into ``out`` (R doubles, 2R with ``y``): the row
    chunks' sums (in parallel), added in chunk order. Returns False when out of memory."""
    cdef idx_t rows = _chunk_rows(Q), n = (Q + rows - 1) // rows
    cdef idx_t w = 2 * R if y != NULL else R
    cdef idx_t c, k
    cdef double* parts
    cdef mx_region reg
    cdef bint par = n > 1 and Q * R >= PARALLEL_MIN and not mx_serial(Q * R)
    parts = <double*>malloc((n if par else 1) * w * sizeof(double))
    if parts == NULL:
        return False
    for k in range(w):
        out[k] = 0.0
    if par:
        mx_region_begin(&reg)
        for c in prange(n, schedule="static"):
            mx_region_mark(&reg)
            _chunk_sums(x, y, m, R, c * rows, min(Q, (c + 1) * rows), parts + c * w)
        mx_region_end(&reg)
        for c in range(n):
            for k in range(w):
                out[k] += parts[c * w + k]
    else:
        for c in range(n):
            _chunk_sums(x, y, m, R, c * rows, min(Q, (c + 1) * rows), parts)
            for k in range(w):
                out[k] += parts[k]
    free(parts)
    return True


cdef void _moments_wide(const floating* x, idx_t Q, idx_t R, floating* mean,
                        floating* var) noexcept nogil:
    """Mean and biased variance over the Q rows of a (Q, R) block, per column, by
    ``_column_sums`` (two passes: the sums, then the squared deviations)."""
    cdef idx_t k
    cdef double* acc = <double*>malloc(2 * R * sizeof(double))
    if acc == NULL:
        return
    if _column_sums(x, <const floating*>NULL, <const double*>NULL, Q, R, acc):
        for k in range(R):
            acc[k] = acc[k] / Q if Q > 0 else 0.0
        if _column_sums(x, <const floating*>NULL, acc, Q, R, acc + R):
            for k in range(R):
                mean[k] = <floating>acc[k]
                var[k] = <floating>(acc[R + k] / Q if Q > 0 else 0.0)
    free(acc)


cdef void _moments_p(const floating* x, idx_t p, idx_t Q, idx_t R, floating* mean,
                     floating* var, double* acc) noexcept nogil:
    """Mean and biased variance over q of block p, for each r (``acc``: 2R doubles)."""
    cdef idx_t q, r
    cdef const floating* row
    cdef double d, m
    if R == 1:                          # a contiguous row (LayerNorm's last axis, InstanceNorm)
        m = _row_sum(x + p * Q, Q) / Q if Q > 0 else 0.0
        mean[p] = <floating>m
        var[p] = <floating>(_row_ssd(x + p * Q, Q, m) / Q if Q > 0 else 0.0)
        return
    for r in range(2 * R):
        acc[r] = 0.0
    for q in range(Q):
        row = x + (p * Q + q) * R
        for r in range(R):
            acc[r] += row[r]
    for r in range(R):
        acc[r] = acc[r] / Q if Q > 0 else 0.0
    for q in range(Q):
        row = x + (p * Q + q) * R
        for r in range(R):
            d = row[r] - acc[r]
            acc[R + r] += d * d
    for r in range(R):
        mean[p * R + r] = <floating>acc[r]
        var[p * R + r] = <floating>(acc[R + r] / Q if Q > 0 else 0.0)


cdef void _moments(const floating* x, idx_t P, idx_t Q, idx_t R, floating* mean,
                   floating* var) noexcept nogil:
    cdef idx_t p
    cdef double* acc
    cdef mx_region reg
    if P == 1 and R > 1:                # one group of wide rows: row chunks in parallel
        _moments_wide(x, Q, R, mean, var)
    elif P > 1 and P * Q * R >= PARALLEL_MIN and not mx_serial(P * Q * R):
        mx_region_begin(&reg)
        for p in prange(P, schedule="static"):
            mx_region_mark(&reg)
            acc = <double*>malloc(2 * R * sizeof(double))
            if acc != NULL:
                _moments_p(x, p, Q, R, mean, var, acc)
                free(acc)
        mx_region_end(&reg)
    else:
        acc = <double*>malloc(2 * R * sizeof(double))
        if acc != NULL:
            for p in range(P):
                _moments_p(x, p, Q, R, mean, var, acc)
            free(acc)


def moments(cnp.ndarray x, idx_t P, idx_t Q, idx_t R, cnp.ndarray mean, cnp.ndarray var):
    """``mean[p, r]``, ``var[p, r]`` (biased) of ``x[p, :, r]`` for the (P, Q, R) block x."""
    _check("moments", [x, mean, var], [P * Q * R, P * R, P * R])
    if R <= 0 or P <= 0:
        return
    if x.dtype.char == "f":
        _moments(<const float*>cnp.PyArray_DATA(x), P, Q, R, <float*>cnp.PyArray_DATA(mean),
                 <float*>cnp.PyArray_DATA(var))
    else:
        _moments(<const double*>cnp.PyArray_DATA(x), P, Q, R, <double*>cnp.PyArray_DATA(mean),
                 <double*>cnp.PyArray_DATA(var))


cdef void _channel_c(const floating* x, idx_t c, idx_t A, idx_t C, idx_t B, floating* mean,
                     floating* var) noexcept nogil:
    cdef idx_t a
    cdef double s = 0.0, ss = 0.0, m
    cdef idx_t n = A * B
    for a in range(A):
        s += _row_sum(x + (a * C + c) * B, B)
    m = s / n if n > 0 else 0.0
    for a in range(A):
        ss += _row_ssd(x + (a * C + c) * B, B, m)
    mean[c] = <floating>m
    var[c] = <floating>(ss / n if n > 0 else 0.0)


cdef void _channel_moments(const floating* x, idx_t A, idx_t C, idx_t B, floating* mean,
                           floating* var) noexcept nogil:
    cdef idx_t c
    cdef mx_region reg
    if C > 1 and A * B * C >= PARALLEL_MIN and not mx_serial(A * B * C):
        mx_region_begin(&reg)
        for c in prange(C, schedule="dynamic"):
            mx_region_mark(&reg)
            _channel_c(x, c, A, C, B, mean, var)
        mx_region_end(&reg)
    else:
        for c in range(C):
            _channel_c(x, c, A, C, B, mean, var)


def channel_moments(cnp.ndarray x, idx_t A, idx_t C, idx_t B, cnp.ndarray mean,
                    cnp.ndarray var):
    """``mean[c]``, ``var[c]`` (biased) of ``x[:, c, :]`` for the (A, C, B) block x."""
    _check("channel_moments", [x, mean, var], [A * C * B, C, C])
    if x.dtype.char == "f":
        _channel_moments(<const float*>cnp.PyArray_DATA(x), A, C, B,
                         <float*>cnp.PyArray_DATA(mean), <float*>cnp.PyArray_DATA(var))
    else:
        _channel_moments(<const double*>cnp.PyArray_DATA(x), A, C, B,
                         <double*>cnp.PyArray_DATA(mean), <double*>cnp.PyArray_DATA(var))


cdef void _sumsq_p(const floating* x, idx_t p, idx_t Q, idx_t R, double eps, floating* out,
                   double* acc) noexcept nogil:
    cdef idx_t q, r
    cdef const floating* row
    for r in range(R):
        acc[r] = 0.0
    for q in range(Q):
        row = x + (p * Q + q) * R
        for r in range(R):
            acc[r] += <double>row[r] * row[r]
    for r in range(R):
        out[p * R + r] = <floating>mx_norm_finish(acc[r], eps, 1)


cdef void _rnorm(const floating* x, idx_t P, idx_t Q, idx_t R, double eps,
                 floating* out) noexcept nogil:
    cdef idx_t p
    cdef double* acc
    cdef mx_region reg
    if P > 1 and P * Q * R >= PARALLEL_MIN and not mx_serial(P * Q * R):
        mx_region_begin(&reg)
        for p in prange(P, schedule="static"):
            mx_region_mark(&reg)
            acc = <double*>malloc(R * sizeof(double))
            if acc != NULL:
                _sumsq_p(x, p, Q, R, eps, out, acc)
                free(acc)
        mx_region_end(&reg)
    else:
        acc = <double*>malloc(R * sizeof(double))
        if acc != NULL:
            for p in range(P):
                _sumsq_p(x, p, Q, R, eps, out, acc)
            free(acc)


def rnorm(cnp.ndarray x, idx_t P, idx_t Q, idx_t R, double eps, cnp.ndarray out):
    """``out[p, r] = 1 / sqrt(sum_q x[p, q, r]**2 + eps)`` (L2Normalization)."""
    _check("rnorm", [x, out], [P * Q * R, P * R])
    if R <= 0 or P <= 0:
        return
    if x.dtype.char == "f":
        _rnorm(<const float*>cnp.PyArray_DATA(x), P, Q, R, eps,
               <float*>cnp.PyArray_DATA(out))
    else:
        _rnorm(<const double*>cnp.PyArray_DATA(x), P, Q, R, eps,
               <double*>cnp.PyArray_DATA(out))


cdef void _finish(floating* v, idx_t n, double eps, int inverse) noexcept nogil:
    cdef idx_t i
    for i in range(n):
        v[i] = <floating>mx_norm_finish(v[i], eps, inverse)


def finish(cnp.ndarray var, double eps, bint inverse):
    """In place: ``var`` becomes ``1/sqrt(var + eps)`` (inverse) or ``sqrt(var + eps)``."""
    _check("finish", [var], [var.size])
    if var.dtype.char == "f":
        _finish(<float*>cnp.PyArray_DATA(var), var.size, eps, inverse)
    else:
        _finish(<double*>cnp.PyArray_DATA(var), var.size, eps, inverse)


cdef void _ema(floating* moving, const floating* batch, idx_t n, double momentum) noexcept nogil:
    cdef idx_t i
    for i in range(n):
        moving[i] = <floating>mx_norm_ema(moving[i], batch[i], momentum)


def ema(cnp.ndarray moving, cnp.ndarray batch, double momentum):
    """In place: ``moving = momentum * moving + (1 - momentum) * batch``."""
    _check("ema", [moving, batch], [moving.size, moving.size])
    if moving.dtype.char == "f":
        _ema(<float*>cnp.PyArray_DATA(moving), <const float*>cnp.PyArray_DATA(batch),
             moving.size, momentum)
    else:
        _ema(<double*>cnp.PyArray_DATA(moving), <const double*>cnp.PyArray_DATA(batch),
             moving.size, momentum)


# ---- the affine transform ---------------------------------------------------------------------
cdef void _apply_pq(const floating* x, idx_t p, idx_t q, idx_t Q, idx_t R,
                    const floating* mean, const floating* scale, idx_t sp, idx_t sq, idx_t sr,
                    const floating* gamma, const floating* beta, idx_t gp, idx_t gq, idx_t gr,
                    floating* y, floating* xhat) noexcept nogil:
    cdef idx_t r, base = (p * Q + q) * R, s0 = p * sp + q * sq, g0 = p * gp + q * gq
    cdef floating h, m, sc, g, b
    cdef const floating* xr = x + base
    cdef floating* yr = y + base
    if sr == 0 and gr == 0:             # one channel / instance: constants over the row
        m, sc, g, b = mean[s0], scale[s0], gamma[g0], beta[g0]
        if xhat != NULL:
            for r in range(R):
                h = mx_norm_xhat(xr[r], m, sc)
                xhat[base + r] = h
                yr[r] = h * g + b
        else:
            for r in range(R):
                yr[r] = mx_norm_xhat(xr[r], m, sc) * g + b
    elif sr == 0 and gr == 1 and xhat == NULL:     # a LayerNorm row: gamma along it
        m, sc = mean[s0], scale[s0]
        for r in range(R):
            yr[r] = mx_norm_xhat(xr[r], m, sc) * gamma[g0 + r] + beta[g0 + r]
    else:
        for r in range(R):
            h = mx_norm_xhat(xr[r], mean[s0 + r * sr], scale[s0 + r * sr])
            if xhat != NULL:
                xhat[base + r] = h
            yr[r] = h * gamma[g0 + r * gr] + beta[g0 + r * gr]


cdef void _apply(const floating* x, idx_t P, idx_t Q, idx_t R,
                 const floating* mean, const floating* scale, idx_t sp, idx_t sq, idx_t sr,
                 const floating* gamma, const floating* beta, idx_t gp, idx_t gq, idx_t gr,
                 floating* y, floating* xhat) noexcept nogil:
    cdef idx_t k
    cdef mx_region reg
    if P * Q > 1 and P * Q * R >= PARALLEL_MIN and not mx_serial(P * Q * R):
        mx_region_begin(&reg)
        for k in prange(P * Q, schedule="static"):
            mx_region_mark(&reg)
            _apply_pq(x, k // Q, k % Q, Q, R, mean, scale, sp, sq, sr, gamma, beta,
                      gp, gq, gr, y, xhat)
        mx_region_end(&reg)
    else:
        for k in range(P * Q):
            _apply_pq(x, k // Q, k % Q, Q, R, mean, scale, sp, sq, sr, gamma, beta,
                      gp, gq, gr, y, xhat)


def _extent(strides, P, Q, R):
    """The largest flat index a (P, Q, R) walk with these strides reads, plus one."""
    return (P - 1) * strides[0] + (Q - 1) * strides[1] + (R - 1) * strides[2] + 1


def apply(cnp.ndarray x, idx_t P, idx_t Q, idx_t R, cnp.ndarray mean, cnp.ndarray scale,
          tuple stat_strides, cnp.ndarray gamma, cnp.ndarray beta, tuple param_strides,
          cnp.ndarray y, cnp.ndarray xhat=None):
    """``y[p,q,r] = (x - mean[s]) * scale[s] * gamma[g] + beta[g]`` over the (P, Q, R) block,
    with ``s = p*sp + q*sq + r*sr`` (``stat_strides``) and ``g`` likewise
    (``param_strides``); ``xhat`` (optional) receives ``(x - mean[s]) * scale[s]``."""
    n = P * Q * R
    if n == 0:
        return
    if min(stat_strides) < 0 or min(param_strides) < 0:
        raise ValueError("norm.apply: negative stride")
    ns = _extent(stat_strides, P, Q, R)
    ng = _extent(param_strides, P, Q, R)
    arrays = [x, y] + ([xhat] if xhat is not None else [])
    _check("apply", arrays, [n] * len(arrays))
    for a, need in ((mean, ns), (scale, ns), (gamma, ng), (beta, ng)):
        if a.dtype != x.dtype or not a.flags.c_contiguous or a.size < need:
            raise ValueError(f"norm.apply: parameter array of dtype {a.dtype}, size {a.size}: "
                             f"expected {x.dtype}, at least {need} elements")
    cdef idx_t sp = stat_strides[0], sq = stat_strides[1], sr = stat_strides[2]
    cdef idx_t gp = param_strides[0], gq = param_strides[1], gr = param_strides[2]
    if R == 1:          # walk (P, 1, Q): the inner loop runs along the contiguous axis
        Q, R, sq, sr, gq, gr = 1, Q, 0, sq, 0, gq
    if x.dtype.char == "f":
        _apply(<const float*>cnp.PyArray_DATA(x), P, Q, R,
               <const float*>cnp.PyArray_DATA(mean), <const float*>cnp.PyArray_DATA(scale),
               sp, sq, sr, <const float*>cnp.PyArray_DATA(gamma),
               <const float*>cnp.PyArray_DATA(beta), gp, gq, gr, <float*>cnp.PyArray_DATA(y),
               <float*>cnp.PyArray_DATA(xhat) if xhat is not None else NULL)
    else:
        _apply(<const double*>cnp.PyArray_DATA(x), P, Q, R,
               <const double*>cnp.PyArray_DATA(mean), <const double*>cnp.PyArray_DATA(scale),
               sp, sq, sr, <const double*>cnp.PyArray_DATA(gamma),
               <const double*>cnp.PyArray_DATA(beta), gp, gq, gr, <double*>cnp.PyArray_DATA(y),
               <double*>cnp.PyArray_DATA(xhat) if xhat is not None else NULL)


# ---- LayerNorm rows: statistics and affine pass in one sweep ---------------------------------
cdef void _layer_norm_rows(const floating* x, idx_t P, idx_t Q, const floating* gamma,
                           const floating* beta, double eps, floating* y, floating* mean,
                           floating* std) noexcept nogil:
    cdef idx_t p
    cdef mx_region reg
    if P > 1 and P * Q >= PARALLEL_MIN and not mx_serial(P * Q):
        mx_region_begin(&reg)
        for p in prange(P, schedule="static"):
            mx_region_mark(&reg)
            mx_rows_layer_norm(x + p * Q, Q, gamma, beta, eps, y + p * Q, mean + p, std + p)
        mx_region_end(&reg)
    else:
        for p in range(P):
            mx_rows_layer_norm(x + p * Q, Q, gamma, beta, eps, y + p * Q, mean + p, std + p)


def layer_norm_rows(cnp.ndarray x, idx_t P, idx_t Q, cnp.ndarray gamma, cnp.ndarray beta,
                    double eps, cnp.ndarray y, cnp.ndarray mean, cnp.ndarray std):
    """LayerNorm over the contiguous rows of the (P, Q) block ``x``: ``mean[p]``,
    ``std[p] = sqrt(var + eps)`` (biased, in double) and
    ``y = (x - mean) * (1 / std) * gamma + beta``, one sweep per row while it is in cache."""
    _check("layer_norm_rows", [x, y, gamma, beta, mean, std], [P * Q, P * Q, Q, Q, P, P])
    if P <= 0:
        return
    if x.dtype.char == "f":
        _layer_norm_rows(<const float*>cnp.PyArray_DATA(x), P, Q,
                         <const float*>cnp.PyArray_DATA(gamma),
                         <const float*>cnp.PyArray_DATA(beta), eps, <float*>cnp.PyArray_DATA(y),
                         <float*>cnp.PyArray_DATA(mean), <float*>cnp.PyArray_DATA(std))
    else:
        _layer_norm_rows(<const double*>cnp.PyArray_DATA(x), P, Q,
                         <const double*>cnp.PyArray_DATA(gamma),
                         <const double*>cnp.PyArray_DATA(beta), eps,
                         <double*>cnp.PyArray_DATA(y), <double*>cnp.PyArray_DATA(mean),
                         <double*>cnp.PyArray_DATA(std))


# ---- LayerNorm rows: the fused backward -----------------------------------------------------
DEF _GRAD_CHUNK = 64        # rows per partial column sum: in T, then added in double in order


cdef void _ln_grad_chunk(const floating* gy, const floating* x, const floating* gamma,
                         const floating* mean, const floating* std, const floating* gmean,
                         const floating* gstd, idx_t c, idx_t P, idx_t Q, floating* part,
                         floating* dx) noexcept nogil:
    """Rows [c * 64, (c + 1) * 64) of the (P, Q) block; ``part``: this chunk's 4Q scratch
    (the column partials of gamma and beta, then two scratch rows)."""
    cdef idx_t p, j, end = min(P, (c + 1) * _GRAD_CHUNK)
    cdef floating rs, n = <floating>Q
    for j in range(2 * Q):
        part[j] = 0
    for p in range(c * _GRAD_CHUNK, end):
        rs = <floating>(1.0 / std[p])
        mx_rows_layer_norm_grad(gy + p * Q, x + p * Q, gamma, Q, mean[p], rs, gstd[p] / n,
                                gmean[p] / n, part + 2 * Q, part + 3 * Q, part, part + Q,
                                dx + p * Q)


GRAD_CHUNK = _GRAD_CHUNK


def layer_norm_grad_rows(cnp.ndarray gy, cnp.ndarray x, cnp.ndarray gamma, cnp.ndarray mean,
                         cnp.ndarray std, cnp.ndarray gmean, cnp.ndarray gstd, idx_t P,
                         idx_t Q, cnp.ndarray dx, cnp.ndarray dgamma, cnp.ndarray dbeta,
                         cnp.ndarray part):
    """LayerNorm's backward over the contiguous rows of (P, Q) blocks, one sweep per row:
    with xhat = (x - mean) / std, G = gy * gamma and n = Q,
    ``dx = (G - mean(G) - xhat * mean(G * xhat)) / std + gmean / n + gstd * xhat / n``,
    ``dgamma = sum_p gy * xhat``, ``dbeta = sum_p gy`` (partials of 64 rows in the data's
    type, then added in double: the same result on any number of threads). ``part`` is
    the caller's scratch: ``(ceil(P / GRAD_CHUNK), 4 * Q)`` of the data's dtype."""
    _check("layer_norm_grad_rows", [gy, x, dx, gamma, dgamma, dbeta, mean, std, gmean, gstd],
           [P * Q] * 3 + [Q] * 3 + [P] * 4)
    if P <= 0 or Q <= 0:
        dgamma.fill(0)
        dbeta.fill(0)
        return
    chunks = (P + _GRAD_CHUNK - 1) // _GRAD_CHUNK
    if (<object>part).shape != (chunks, 4 * Q) or part.dtype != x.dtype \
            or not cnp.PyArray_IS_C_CONTIGUOUS(part):
        raise ValueError(f"layer_norm_grad_rows: part must be a C-contiguous "
                         f"{(chunks, 4 * Q)} {x.dtype} array, got {part.dtype} of shape "
                         f"{(<object>part).shape}")
    if x.dtype.char == "f":
        _ln_grad_run(<const float*>cnp.PyArray_DATA(gy), <const float*>cnp.PyArray_DATA(x),
                     <const float*>cnp.PyArray_DATA(gamma), <const float*>cnp.PyArray_DATA(mean),
                     <const float*>cnp.PyArray_DATA(std), <const float*>cnp.PyArray_DATA(gmean),
                     <const float*>cnp.PyArray_DATA(gstd), P, Q, chunks,
                     <float*>cnp.PyArray_DATA(part), <float*>cnp.PyArray_DATA(dx))
    else:
        _ln_grad_run(<const double*>cnp.PyArray_DATA(gy), <const double*>cnp.PyArray_DATA(x),
                     <const double*>cnp.PyArray_DATA(gamma),
                     <const double*>cnp.PyArray_DATA(mean), <const double*>cnp.PyArray_DATA(std),
                     <const double*>cnp.PyArray_DATA(gmean),
                     <const double*>cnp.PyArray_DATA(gstd), P, Q, chunks,
                     <double*>cnp.PyArray_DATA(part), <double*>cnp.PyArray_DATA(dx))
    sums = part[:, :2 * Q].sum(axis=0, dtype=np.float64) if chunks > 1 else part[0, :2 * Q]
    dgamma.reshape(-1)[...] = sums[:Q]
    dbeta.reshape(-1)[...] = sums[Q:]


cdef void _ln_grad_run(const floating* gy, const floating* x, const floating* gamma,
                       const floating* mean, const floating* std, const floating* gmean,
                       const floating* gstd, idx_t P, idx_t Q, idx_t chunks, floating* part,
                       floating* dx) noexcept nogil:
    cdef idx_t c
    cdef mx_region reg
    if chunks > 1 and P * Q >= PARALLEL_MIN and not mx_serial(P * Q):
        mx_region_begin(&reg)
        for c in prange(chunks, schedule="static"):
            mx_region_mark(&reg)
            _ln_grad_chunk(gy, x, gamma, mean, std, gmean, gstd, c, P, Q, part + c * 4 * Q, dx)
        mx_region_end(&reg)
    else:
        for c in range(chunks):
            _ln_grad_chunk(gy, x, gamma, mean, std, gmean, gstd, c, P, Q, part + c * 4 * Q, dx)


# ---- Dropout ----------------------------------------------------------------------------------
ctypedef fused dropout_t:
    float
    double
    uint16_t            # float16 bits


cdef void _mask(const float* u, dropout_t* mask, idx_t n, float p, dropout_t kept) noexcept nogil:
    cdef idx_t i
    for i in range(n):
        mask[i] = kept if u[i] >= p else 0      # +0.0 has all bits clear in every dtype


def dropout_mask(cnp.ndarray u, double p, cnp.ndarray mask):
    """``mask = (u >= p) / (1 - p)`` for float32 uniforms ``u`` in [0, 1): each element is
    kept with probability ``1 - p`` and scaled so the mean is unchanged. ``mask`` is
    float16, float32 or float64; the kept value is ``1 / (1 - p)`` rounded once to it."""
    if u.dtype.char != "f" or not u.flags.c_contiguous:
        raise TypeError("norm.dropout_mask: u must be C-contiguous float32")
    _check("dropout_mask", [mask], [u.size], "efd")
    cdef double scale = 1.0 / (1.0 - p)
    cdef const float* up = <const float*>cnp.PyArray_DATA(u)
    if mask.dtype.char == "e":
        _mask(up, <uint16_t*>cnp.PyArray_DATA(mask), u.size, <float>p, mx_double_to_half(scale))
    elif mask.dtype.char == "f":
        _mask(up, <float*>cnp.PyArray_DATA(mask), u.size, <float>p, <float>scale)
    else:
        _mask(up, <double*>cnp.PyArray_DATA(mask), u.size, <float>p, scale)


cdef inline uint16_t _mul_half(uint16_t a, uint16_t b) noexcept nogil:
    """The float16 product, rounded once: the float32 product of two float16 is exact."""
    return mx_float_to_half(mx_half_to_float(a) * mx_half_to_float(b))


cdef void _mul(const dropout_t* a, const dropout_t* b, dropout_t* out, idx_t n) noexcept nogil:
    cdef idx_t i
    cdef mx_region reg
    if n >= PARALLEL_MIN and not mx_serial(n):
        mx_region_begin(&reg)
        for i in prange(n, schedule="static"):
            mx_region_mark(&reg)
            if dropout_t is uint16_t:
                out[i] = _mul_half(a[i], b[i])
            else:
                out[i] = a[i] * b[i]
        mx_region_end(&reg)
    else:
        for i in range(n):
            if dropout_t is uint16_t:
                out[i] = _mul_half(a[i], b[i])
            else:
                out[i] = a[i] * b[i]


def mul(cnp.ndarray a, cnp.ndarray b, cnp.ndarray out):
    """``out = a * b`` for C-contiguous arrays of one float dtype and size (float16 is
    multiplied element by element in float32 and rounded once: no float32 copy)."""
    _check("mul", [a, b, out], [a.size] * 3, "efd")
    if a.dtype.char == "e":
        _mul(<const uint16_t*>cnp.PyArray_DATA(a), <const uint16_t*>cnp.PyArray_DATA(b),
             <uint16_t*>cnp.PyArray_DATA(out), a.size)
    elif a.dtype.char == "f":
        _mul(<const float*>cnp.PyArray_DATA(a), <const float*>cnp.PyArray_DATA(b),
             <float*>cnp.PyArray_DATA(out), a.size)
    else:
        _mul(<const double*>cnp.PyArray_DATA(a), <const double*>cnp.PyArray_DATA(b),
             <double*>cnp.PyArray_DATA(out), a.size)


# ---- the normalisation backward: _norm_project --------------------------------------------------
cdef void _proj_group_rows(const floating* g, const floating* xh, idx_t p, idx_t Q, idx_t R,
                           const floating* r, const floating* a, const floating* b, double t,
                           floating* out, double* acc) noexcept nogil:
    """Groups (p, r) of the (P, Q, R) layout, statistics over q (``acc``: 2R doubles)."""
    cdef idx_t q, k, base
    cdef double n = <double>Q, sg = 0.0, sgx = 0.0
    cdef floating mg, mgx, rc, ac, bc, tf = <floating>t
    if R == 1 and floating is float:    # a float32 row: one vectorised routine
        mx_rows_project(<const float*>(g + p * Q), <const float*>(xh + p * Q), Q, <float>r[p],
                        <float>t, <float>a[p], <float>b[p], <float*>(out + p * Q))
        return
    if R == 1:                          # a contiguous row per group
        _row_sums2(g + p * Q, xh + p * Q, Q, &sg, &sgx)
        mg = <floating>(sg / n if n > 0 else 0.0)
        mgx = <floating>(sgx / n if n > 0 else 0.0)
        rc, ac, bc = r[p], a[p], b[p]
        base = p * Q
        for q in range(Q):
            out[base + q] = mx_norm_project(rc, g[base + q], tf, mg, xh[base + q], mgx, ac, bc)
        return
    for k in range(2 * R):
        acc[k] = 0.0
    for q in range(Q):
        base = (p * Q + q) * R
        for k in range(R):
            acc[k] += g[base + k]
            acc[R + k] += <double>g[base + k] * xh[base + k]
    for k in range(2 * R):
        acc[k] = acc[k] / n if n > 0 else 0.0
    for q in range(Q):
        base = (p * Q + q) * R
        for k in range(R):
            out[base + k] = mx_norm_project(r[p * R + k], g[base + k], t, acc[k],
                                            xh[base + k], acc[R + k], a[p * R + k],
                                            b[p * R + k])


cdef void _project_rows_out(const floating* g, const floating* xh, idx_t R, idx_t q0,
                            idx_t q1, const floating* r, const floating* a, const floating* b,
                            floating t, const floating* mg, const floating* mgx,
                            floating* out) noexcept nogil:
    """Rows q0..q1 of ``_project_wide``'s output, from the columns' means ``mg`` (of g)
    and ``mgx`` (of g * xhat), in the data's type as the channel layout computes."""
    cdef idx_t q, k, base
    for q in range(q0, q1):
        base = q * R
        for k in range(R):
            out[base + k] = mx_norm_project(r[k], g[base + k], t, mg[k], xh[base + k], mgx[k],
                                            a[k], b[k])


cdef void _project_wide(const floating* g, const floating* xh, idx_t Q, idx_t R,
                        const floating* r, const floating* a, const floating* b, double t,
                        floating* out) noexcept nogil:
    """One group of wide rows (P = 1, R > 1: a channels-last BatchNorm's gradient): the
    columns' means of g and g * xhat by ``_column_sums``, then the rows in parallel."""
    cdef idx_t k, c, rows = _chunk_rows(Q), n = (Q + rows - 1) // rows
    cdef mx_region reg
    cdef double* acc = <double*>malloc(2 * R * sizeof(double))
    cdef floating* means = <floating*>malloc(2 * R * sizeof(floating))
    if acc != NULL and means != NULL and _column_sums(g, xh, <const double*>NULL, Q, R,
                                                      acc):
        for k in range(2 * R):
            means[k] = <floating>(acc[k] / Q if Q > 0 else 0.0)
        if n > 1 and Q * R >= PARALLEL_MIN and not mx_serial(Q * R):
            mx_region_begin(&reg)
            for c in prange(n, schedule="static"):
                mx_region_mark(&reg)
                _project_rows_out(g, xh, R, c * rows, min(Q, (c + 1) * rows), r, a, b,
                                  <floating>t, means, means + R, out)
            mx_region_end(&reg)
        else:
            _project_rows_out(g, xh, R, 0, Q, r, a, b, <floating>t, means, means + R, out)
    free(acc)
    free(means)


cdef inline void _row_sums2(const floating* g, const floating* xh, idx_t n, double* sg,
                            double* sgx) noexcept nogil:
    """sum(g) and sum(g * xh) of contiguous rows: float32 in SIMD lanes per block, float64
    in double (mx_norm.h's lane sums, as on the GPU)."""
    mx_rows_sums2(g, xh, n, sg, sgx)


cdef void _proj_group_channel(const floating* g, const floating* xh, idx_t c, idx_t A,
                              idx_t C, idx_t B, const floating* r, const floating* a,
                              const floating* b, double t, floating* out) noexcept nogil:
    """Group c of the (A, C, B) layout, statistics over a and b."""
    cdef idx_t i, j, base
    cdef double sg = 0.0, sgx = 0.0, n = <double>(A * B)
    cdef floating mg, mgx, rc, ac, bc, tf = <floating>t
    for i in range(A):
        base = (i * C + c) * B
        _row_sums2(g + base, xh + base, B, &sg, &sgx)
    mg = <floating>(sg / n if n > 0 else 0.0)
    mgx = <floating>(sgx / n if n > 0 else 0.0)
    rc, ac, bc = r[c], a[c], b[c]
    for i in range(A):
        base = (i * C + c) * B
        if floating is float:           # four at a time, the same arithmetic
            mx_rows_project_out(<const float*>(g + base), <const float*>(xh + base), B,
                                <float>rc, <float>tf, <float>mg, <float>mgx, <float>ac,
                                <float>bc, <float*>(out + base))
        else:
            for j in range(B):
                out[base + j] = mx_norm_project(rc, g[base + j], tf, mg, xh[base + j], mgx,
                                                ac, bc)


cdef void _project(int layout, const floating* g, const floating* xh, idx_t P, idx_t Q,
                   idx_t R, const floating* r, const floating* a, const floating* b, double t,
                   floating* out) noexcept nogil:
    cdef idx_t k, groups = P if layout == 0 else Q
    cdef double* acc
    cdef mx_region reg
    cdef bint par = groups > 1 and P * Q * R >= PARALLEL_MIN and not mx_serial(P * Q * R)
    if layout == 1:
        if par:
            mx_region_begin(&reg)
            for k in prange(Q, schedule="dynamic"):
                mx_region_mark(&reg)
                _proj_group_channel(g, xh, k, P, Q, R, r, a, b, t, out)
            mx_region_end(&reg)
        else:
            for k in range(Q):
                _proj_group_channel(g, xh, k, P, Q, R, r, a, b, t, out)
        return
    if P == 1 and R > 1:                # one group of wide rows: row chunks in parallel
        _project_wide(g, xh, Q, R, r, a, b, t, out)
    elif par:
        mx_region_begin(&reg)
        for k in prange(P, schedule="static"):
            mx_region_mark(&reg)
            acc = <double*>malloc(2 * R * sizeof(double))
            if acc != NULL:
                _proj_group_rows(g, xh, k, Q, R, r, a, b, t, out, acc)
                free(acc)
        mx_region_end(&reg)
    else:
        acc = <double*>malloc(2 * R * sizeof(double))
        if acc != NULL:
            for k in range(P):
                _proj_group_rows(g, xh, k, Q, R, r, a, b, t, out, acc)
            free(acc)


def project(int layout, cnp.ndarray g, cnp.ndarray xhat, idx_t P, idx_t Q, idx_t R,
            cnp.ndarray r, cnp.ndarray a, cnp.ndarray b, double t, cnp.ndarray out):
    """``out = r * (g - t * (mean(g) + xhat * mean(g * xhat))) + xhat * a + b`` per group:
    layout 0 groups (p, r) of a (P, Q, R) block over q (``r``, ``a``, ``b`` of P*R);
    layout 1 groups c of an (A=P, C=Q, B=R) block over a and b (``r``, ``a``, ``b`` of C)."""
    if layout not in (0, 1):
        raise ValueError("norm.project: layout must be 0 or 1")
    n = P * Q * R
    ng = P * R if layout == 0 else Q
    _check("project", [g, xhat, out, r, a, b], [n, n, n, ng, ng, ng])
    if n == 0:
        return
    if g.dtype.char == "f":
        _project(layout, <const float*>cnp.PyArray_DATA(g), <const float*>cnp.PyArray_DATA(xhat),
                 P, Q, R, <const float*>cnp.PyArray_DATA(r), <const float*>cnp.PyArray_DATA(a),
                 <const float*>cnp.PyArray_DATA(b), t, <float*>cnp.PyArray_DATA(out))
    else:
        _project(layout, <const double*>cnp.PyArray_DATA(g),
                 <const double*>cnp.PyArray_DATA(xhat), P, Q, R,
                 <const double*>cnp.PyArray_DATA(r), <const double*>cnp.PyArray_DATA(a),
                 <const double*>cnp.PyArray_DATA(b), t, <double*>cnp.PyArray_DATA(out))
