/* Vectorizable float32 kernels of mxlite._core.activation: exp, the softmax rows and (C++)
 * the ELU/SELU/GELU family.
 *
 * mx_expf: Cephes' expf (range reduction by n ln 2 in two parts, degree-6 polynomial on
 * [-ln2/2, ln2/2], 2^n built in the exponent bits): within 2 ulp of exp over the float32
 * range, 0 below -87.34, inf above 88.72, NaN kept. Written without calls or branches so
 * the compiler vectorizes the loops that use it (the bits go through a union, which GCC and
 * Clang treat as defined type punning).
 *
 * Softmax sums and maxima keep 8 independent accumulators (sums in double), so the loops
 * pipeline without -ffast-math; the order of the additions is fixed (lane i takes the
 * elements i mod 8), so results never depend on the SIMD width.
 */
#ifndef MX_ACT_H
#define MX_ACT_H

#include <stdint.h>
#include <math.h>

typedef union { float f; int32_t i; } mx_f32_bits;

/* The loops are compiled for AVX-512, AVX2 and baseline x86-64, picked at load time (the
 * same operations in the same order at every width: the results do not depend on it). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__)
#define MX_ACT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MX_ACT_CLONES
#endif

static inline float mx_expf(float x)
{
    const float hi = 88.7228391f, lo = -87.3365447f;
    float c = x > hi ? hi : x;
    c = c < lo ? lo : c;
    /* n = round(c / ln 2) by the 1.5 * 2^23 trick: the sum's low mantissa bits hold n */
    mx_f32_bits k;
    k.f = c * 1.44269504088896341f + 12582912.0f;
    float fn = k.f - 12582912.0f;
    int32_t n = k.i - 0x4B400000;
    float r = c - fn * 0.693359375f;
    r = r - fn * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * (r * r) + r + 1.0f;
    /* 2^n in two factors, so n = 128 (x near 88.7) does not overflow the exponent field */
    mx_f32_bits a, b;
    int32_t n1 = n >> 1;
    a.i = (n1 + 127) << 23;
    b.i = (n - n1 + 127) << 23;
    float y = e * a.f * b.f;
    y = x < lo ? 0.0f : y;
    y = x > hi ? INFINITY : y;
    return x != x ? x : y;
}

MX_ACT_CLONES static void mx_expf_loop(const float* x, float* y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = mx_expf(x[i]);
}

#ifdef __cplusplus
#include "mx_math.h"

/* The float32 ELU / SELU / GELU and their derivatives (kind ids of activation.pyx), the
 * kind hoisted out of the loop: each element computed in double by the same formula as the
 * float64 (libm) path, with the vectorizable exp / expm1 / normal CDF of mx_math.h, then
 * rounded once to float. GELU uses x Phi(x) with Phi = erfc(-x / sqrt 2) / 2, accurate for
 * x < 0 too (1 + erf(x / sqrt 2) cancels there). Returns 0, or -1 for another kind. */
MX_ACT_CLONES static int mx_act_f32(int kind, const float* x, float* y, int64_t n, double a,
                                    double b)
{
    const double rsqrt2pi = 0.39894228040143267794;
    int64_t i;
    switch (kind) {
    case 2:     /* ELU */
        for (i = 0; i < n; i++) {
            double v = x[i], e = a * mx::expm1_f64(v);
            y[i] = (float)(v > 0 ? v : e);
        }
        return 0;
    case 3:     /* SELU */
        for (i = 0; i < n; i++) {
            double v = x[i], e = a * mx::expm1_f64(v);
            y[i] = (float)(b * (v > 0 ? v : e));
        }
        return 0;
    case 4:     /* GELU */
        for (i = 0; i < n; i++) {
            double v = x[i];
            y[i] = (float)(v * mx::ndtr_with_exp(v, mx::exp_f64(-0.5 * v * v)));
        }
        return 0;
    case 7:     /* D_ELU */
        for (i = 0; i < n; i++) {
            double v = x[i], e = a * mx::exp_f64(v);
            y[i] = (float)(v > 0 ? 1.0 : e);
        }
        return 0;
    case 8:     /* D_SELU */
        for (i = 0; i < n; i++) {
            double v = x[i], e = a * mx::exp_f64(v);
            y[i] = (float)(b * (v > 0 ? 1.0 : e));
        }
        return 0;
    case 9:     /* D_GELU: Phi(x) + x phi(x) */
        for (i = 0; i < n; i++) {
            double v = x[i], e = mx::exp_f64(-0.5 * v * v);
            y[i] = (float)(mx::ndtr_with_exp(v, e) + v * rsqrt2pi * e);
        }
        return 0;
    case 10:    /* D2_GELU: phi(x) (2 - x^2) */
        for (i = 0; i < n; i++) {
            double v = x[i];
            y[i] = (float)(rsqrt2pi * mx::exp_f64(-0.5 * v * v) * (2.0 - v * v));
        }
        return 0;
    }
    return -1;
}
#endif

/* The largest of scale * x[0..n) (scale may be negative: softmin). */
static inline float mx_row_max_f32(const float* x, int64_t n, float scale)
{
    float m[8];
    int64_t i, k;
    for (k = 0; k < 8; k++) m[k] = -INFINITY;
    for (i = 0; i + 8 <= n; i += 8)
        for (k = 0; k < 8; k++) {
            float v = scale * x[i + k];
            m[k] = v > m[k] ? v : m[k];
        }
    for (; i < n; i++) {
        float v = scale * x[i];
        m[0] = v > m[0] ? v : m[0];
    }
    float r = m[0];
    for (k = 1; k < 8; k++) r = m[k] > r ? m[k] : r;
    return r;
}

/* One contiguous row: softmax (log_mode 0) or log-softmax (1) of scale * x into y. */
MX_ACT_CLONES static void mx_softmax_row_f32(const float* x, float* y, int64_t n, float scale,
                                             int log_mode)
{
    int64_t i, k;
    float m = mx_row_max_f32(x, n, scale);
    if (m == -INFINITY) m = 0.0f;            /* a row of -inf: exp gives 0/0 = NaN, as NumPy */
    if (m != m) {                            /* a NaN in the row: every output NaN */
        for (i = 0; i < n; i++) y[i] = m;
        return;
    }
    for (i = 0; i < n; i++)
        y[i] = scale * x[i] - m;
    if (log_mode) {
        /* exp into nothing but the sum: a second pass over y (which holds x - m) */
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        float buf[256];
        for (int64_t start = 0; start < n; start += 256) {
            int64_t len = n - start < 256 ? n - start : 256;
            mx_expf_loop(y + start, buf, len);
            for (i = 0; i + 8 <= len; i += 8)
                for (k = 0; k < 8; k++) s[k] += buf[i + k];
            for (; i < len; i++) s[0] += buf[i];
        }
        double tot = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
        float lse = (float)log(tot);
        for (i = 0; i < n; i++)
            y[i] = y[i] - lse;
        return;
    }
    mx_expf_loop(y, y, n);
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (i = 0; i + 8 <= n; i += 8)
        for (k = 0; k < 8; k++) s[k] += y[i + k];
    for (; i < n; i++) s[0] += y[i];
    double tot = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
    float inv = (float)(1.0 / tot);
    for (i = 0; i < n; i++)
        y[i] = y[i] * inv;
}

/* A block (n, inner) of a softmax along a middle axis: every column j is a row of n
 * elements at stride inner. Works across the columns, so every loop is contiguous;
 * m and s are scratch of inner floats / doubles. */
MX_ACT_CLONES static void mx_softmax_block_f32(const float* x, float* y, int64_t n, int64_t inner,
                                 float scale, int log_mode, float* m, double* s)
{
    int64_t j, k;
    for (j = 0; j < inner; j++) { m[j] = -INFINITY; s[j] = 0.0; }
    for (k = 0; k < n; k++) {
        const float* xr = x + k * inner;
        for (j = 0; j < inner; j++) {
            float v = scale * xr[j];
            m[j] = v > m[j] ? v : m[j];
        }
    }
    for (j = 0; j < inner; j++)
        m[j] = m[j] == -INFINITY ? 0.0f : m[j];
    for (k = 0; k < n; k++) {
        const float* xr = x + k * inner;
        float* yr = y + k * inner;
        for (j = 0; j < inner; j++)
            yr[j] = mx_expf(scale * xr[j] - m[j]);
        for (j = 0; j < inner; j++)
            s[j] += yr[j];
    }
    if (log_mode) {
        for (j = 0; j < inner; j++)
            m[j] = m[j] + (float)log(s[j]);
        for (k = 0; k < n; k++) {
            const float* xr = x + k * inner;
            float* yr = y + k * inner;
            for (j = 0; j < inner; j++)
                yr[j] = scale * xr[j] - m[j];
        }
        return;
    }
    for (j = 0; j < inner; j++)
        m[j] = (float)(1.0 / s[j]);
    for (k = 0; k < n; k++) {
        float* yr = y + k * inner;
        for (j = 0; j < inner; j++)
            yr[j] = yr[j] * m[j];
    }
}

#endif
