/* The formulas of mxlite._core.activation, shared with the CUDA kernels (mxlite/cuda/ops):
 * exp for float32, the element-wise activations and their derivatives, and (host only) the
 * vectorizable loops of the float32 kernels and softmax rows.
 *
 * mx_expf (mx_expf2 with the argument in two parts): Cephes' expf (range reduction by n ln 2 in two parts, degree-6 polynomial on
 * [-ln2/2, ln2/2], 2^n built in the exponent bits): within 2 ulp of exp over the float32
 * range, 0 below -87.34, inf above 88.72, NaN kept. Written without calls or branches so
 * the compiler vectorizes the loops that use it (the bits go through a union, which GCC,
 * Clang and CUDA treat as defined type punning).
 *
 * Softmax sums and maxima keep 8 independent accumulators (sums in double), so the loops
 * pipeline without -ffast-math; the order of the additions is fixed (lane i takes the
 * elements i mod 8, the tail after the last full group of 8 goes to lane 0), so results
 * never depend on the SIMD width, and the CUDA kernels add in the same order.
 *
 * The element functions are MX_FN (host and device, mx_math.h) and call math through mx::,
 * so they compile under NVRTC; the loops (target_clones, malloc-free scratch) are host-only.
 */
#ifndef MX_ACT_H
#define MX_ACT_H

#include "mx_math.h"
#if !defined(__CUDACC__)
#include <stdint.h>
#include <math.h>
#endif

typedef union { float f; int32_t i; } mx_f32_bits;

/* The loops are compiled for AVX-512, AVX2 and baseline x86-64, picked at load time (the
 * same operations in the same order at every width: the results do not depend on it). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__)
#define MX_ACT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MX_ACT_CLONES
#endif

#define MX_ACT_INF_F mx_std::numeric_limits<float>::infinity()

/* exp(a + b), the sum carried in two parts: the range reduction subtracts n ln 2 from a
 * alone and adds b to the reduced argument, so an exact a of any size and a b of order 1
 * lose nothing to the rounding of a + b (the GELU tail's -x^2 / 2 is such an a). */
MX_FN float mx_expf2(float a, float b)
{
    const float hi = 88.7228391f, lo = -87.3365447f;
    float x = a + b;
    float c = x > hi ? hi : x;
    c = c < lo ? lo : c;
    /* n = round(c / ln 2) by the 1.5 * 2^23 trick: the sum's low mantissa bits hold n */
    mx_f32_bits k;
    k.f = c * 1.44269504088896341f + 12582912.0f;
    float fn = k.f - 12582912.0f;
    int32_t n = k.i - 0x4B400000;
    /* in range c == a + b; out of range r is garbage, and the selects below replace y */
    float r = a - fn * 0.693359375f;
    r = r - fn * -2.12194440e-4f;
    r = r + b;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * (r * r) + r + 1.0f;
    /* 2^n in two factors, so n = 128 (x near 88.7) does not overflow the exponent field */
    mx_f32_bits u, v;
    int32_t n1 = n >> 1;
    u.i = (n1 + 127) << 23;
    v.i = (n - n1 + 127) << 23;
    float y = e * u.f * v.f;
    y = x < lo ? 0.0f : y;
    y = x > hi ? MX_ACT_INF_F : y;
    return x != x ? x : y;
}

MX_FN float mx_expf(float x) { return mx_expf2(x, 0.0f); }

/* Activation kinds: the ids of activation.pyx's ACT_IDS. */
enum {
    MX_ACT_SOFTRELU = 0, MX_ACT_LEAKY = 1, MX_ACT_ELU = 2, MX_ACT_SELU = 3, MX_ACT_GELU = 4,
    MX_ACT_D_SOFTRELU = 5, MX_ACT_D_LEAKY = 6, MX_ACT_D_ELU = 7, MX_ACT_D_SELU = 8,
    MX_ACT_D_GELU = 9, MX_ACT_D2_GELU = 10
};

/* The activation ``kind`` at x in double through the math library (float64 everywhere;
 * softrelu and leaky for float32 too), with parameters a (slope, alpha) and b (SELU's
 * scale). GELU is x / 2 (1 + erf(x / sqrt 2)). */
MX_FN double mx_act_f64(int kind, double x, double a, double b)
{
    const double rsqrt2 = 0.70710678118654752440, rsqrt2pi = 0.39894228040143267794;
    double e;
    switch (kind) {
    case MX_ACT_SOFTRELU:   /* log1p(exp(-|x|)) + max(x, 0): no overflow, exact for large |x| */
        return (x > 0 ? x : 0.0) + mx::log1p(mx::exp(-mx::fabs(x)));
    case MX_ACT_LEAKY: return x > 0 ? x : a * x;
    case MX_ACT_ELU: return x > 0 ? x : a * mx::expm1(x);
    case MX_ACT_SELU: return b * (x > 0 ? x : a * mx::expm1(x));
    case MX_ACT_GELU: return 0.5 * x * (1.0 + mx::erf(x * rsqrt2));
    case MX_ACT_D_SOFTRELU:
        if (x >= 0) return 1.0 / (1.0 + mx::exp(-x));
        e = mx::exp(x);
        return e / (1.0 + e);
    case MX_ACT_D_LEAKY: return x > 0 ? 1.0 : a;
    case MX_ACT_D_ELU: return x > 0 ? 1.0 : a * mx::exp(x);
    case MX_ACT_D_SELU: return b * (x > 0 ? 1.0 : a * mx::exp(x));
    case MX_ACT_D_GELU:
        return 0.5 * (1.0 + mx::erf(x * rsqrt2)) + x * rsqrt2pi * mx::exp(-0.5 * x * x);
    default:                /* MX_ACT_D2_GELU: phi(x) (2 - x^2) */
        return rsqrt2pi * mx::exp(-0.5 * x * x) * (2.0 - x * x);
    }
}

/* The float32 ELU / SELU and their derivatives: each element in double by the same formula
 * as the float64 path, with the vectorizable exp / expm1 of mx_math.h (no libm:
 * bit-identical on every compiler), rounded once to float by the caller. */
MX_VFN double mx_act_elu_v(double v, double a) { return v > 0 ? v : a * mx::expm1_f64(v); }
MX_VFN double mx_act_d_elu_v(double v, double a) { return v > 0 ? 1.0 : a * mx::exp_f64(v); }

/* float32 GELU and its derivatives, in float32 and without branches (so the loops vectorize):
 * Phi(-|x|) = erfc(|x| / sqrt 2) / 2, never 1 - Phi (which cancels in the left tail), with
 * erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), P the Chebyshev fit of Numerical
 * Recipes' erfcc (relative error below 1.2e-7 for every z >= 0). The exponent's -z^2 = -x^2 / 2
 * is carried exactly: x = h + l with h the upper 12 bits of |x| (h^2 exact in float), so
 * -x^2 / 2 = -h^2 / 2 (exact, mx_expf2's a) - l (|x| + h) / 2 (small, into b): rounding x^2
 * would cost 40 ulp at x = -9. |x| is clamped to 20, where every result is already 0 or x
 * (so inf never meets 0); NaN passes the clamps and stays NaN. Worst errors against float64
 * over a sweep of every 331st float32 (tests/ops/test_gelu_f32.py), where the result is a
 * normal float: gelu 7.6 ulp, d gelu 11 ulp (1.2e-7 absolute for x in [-1, -0.5), around
 * its zero at -0.75), d2 gelu 4 ulp (1.5e-7 absolute within 0.2 of its zeros +-sqrt 2);
 * below FLT_MIN 6e-44 absolute. The double-precision formulas they replace were within
 * 1 ulp at 3x to 4x the time. */
MX_VFN float mx_erfc_poly(float t)
{
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    return p * t - 1.26551223f;
}

/* |x| clamped to 20 (NaN kept), t = 1 / (1 + |x| / (2 sqrt 2)), and -x^2 / 2 as
 * hi + lo - 24 ln 2 (log of *scale) for |x| > 8.9, where exp(-x^2 / 2) nears the float range's
 * end while the results it multiplies (by up to 20) are still normal: the exponential is taken
 * 2^24 larger and the product scaled back once, so it rounds once into the subnormals.
 * hi + 24 ln2 is exact there (hi <= -40 is a multiple of its ulp, as 16.6355 is not: the
 * offset is 24 ln 2 split as 16 + 0.6355...; 16 is exact, the rest goes into lo). */
MX_VFN float mx_gelu_split(float x, float* t, float* hi, float* lo, float* scale)
{
    float ax = x < 0 ? -x : x;
    ax = ax > 20.0f ? 20.0f : ax;
    *t = 1.0f / (1.0f + 0.353553390593273762f * ax);
    mx_f32_bits h;
    h.f = ax;
    h.i &= (int32_t)0xFFFFF000;
    float a = -0.5f * (h.f * h.f);
    float l = -0.5f * ((ax - h.f) * (ax + h.f));
    bool far = a < -40.0f;
    *hi = far ? a + 16.0f : a;
    *lo = far ? l + 0.635532333438687426f : l;
    *scale = far ? 5.9604644775390625e-8f : 1.0f;
    return ax;
}

MX_VFN float mx_gelu_f32(float x)          /* x Phi(x) */
{
    float t, hi, lo, sc;
    float ax = mx_gelu_split(x, &t, &hi, &lo, &sc);
    float e = mx_expf2(hi, lo + mx_erfc_poly(t));     /* erfc(|x| / sqrt 2) / (t sc) */
    /* x < 0: the product in this order, so no subnormal Phi is rounded before it is scaled */
    float neg = ((-ax * 0.5f * t) * e) * sc;
    float pos = x * (1.0f - (0.5f * t * e) * sc);
    return x < 0 ? neg : pos;
}

MX_VFN float mx_d_gelu_f32(float x)        /* Phi(x) + x phi(x) */
{
    float t, hi, lo, sc;
    float ax = mx_gelu_split(x, &t, &hi, &lo, &sc);
    float g = mx_expf2(hi, lo);                       /* exp(-x^2 / 2) / sc */
    float q = 0.5f * t * mx_expf(mx_erfc_poly(t));    /* Phi(-|x|) / exp(-x^2 / 2) */
    float neg = (g * (q - ax * 0.398942280401432678f)) * sc;
    float pos = (1.0f - (q * g) * sc) + ax * ((0.398942280401432678f * g) * sc);
    return x < 0 ? neg : pos;
}

MX_VFN float mx_d2_gelu_f32(float x)       /* phi(x) (2 - x^2) */
{
    float t, hi, lo, sc;
    float ax = mx_gelu_split(x, &t, &hi, &lo, &sc);
    /* 2 - x^2 = (2 - h^2) - (|x| - h)(|x| + h), h the upper bits of |x|: the first difference
     * is exact where it cancels (Sterbenz) */
    mx_f32_bits h;
    h.f = ax;
    h.i &= (int32_t)0xFFFFF000;
    float two_minus = (2.0f - h.f * h.f) - (ax - h.f) * (ax + h.f);
    return ((0.398942280401432678f * mx_expf2(hi, lo)) * two_minus) * sc;
}

/* float32 softrelu log(1 + e^x) = max(x, 0) + log1p(e), e = exp(-|x|) in (0, 1], and its
 * derivative sigmoid(x), in float32 without branches or libm. log1p(e) = 2 atanh(s) with
 * s = e / (2 + e) in [0, 1/3]: the odd series to s^15 (the next term is below 2^-27 of the
 * sum), every term positive, so it keeps relative accuracy for the tiny e of the left tail.
 * e flushes to 0 below x = -87.3 (the results there are below FLT_MIN). */
MX_VFN float mx_softrelu_f32(float x)
{
    float ax = x < 0 ? -x : x;
    float e = mx_expf(-ax);
    float l = mx::detail::atanh2_series(e / (2.0f + e));
    return (x > 0 ? x : 0.0f) + l;       /* NaN: ax, e, s, l are NaN */
}

MX_VFN float mx_d_softrelu_f32(float x)      /* 1 / (1 + e^-x), e^-|x| never overflows */
{
    float ax = x < 0 ? -x : x;
    float e = mx_expf(-ax);
    float r = 1.0f / (1.0f + e);
    return x < 0 ? e * r : r;
}

/* The activation ``kind`` of one float32 element, as the float32 kernels compute it. */
MX_FN float mx_act_f32_one(int kind, float x, double a, double b)
{
    double v = x;
    switch (kind) {
    case MX_ACT_ELU: return (float)mx_act_elu_v(v, a);
    case MX_ACT_SELU: return (float)(b * mx_act_elu_v(v, a));
    case MX_ACT_GELU: return mx_gelu_f32(x);
    case MX_ACT_D_ELU: return (float)mx_act_d_elu_v(v, a);
    case MX_ACT_D_SELU: return (float)(b * mx_act_d_elu_v(v, a));
    case MX_ACT_D_GELU: return mx_d_gelu_f32(x);
    case MX_ACT_D2_GELU: return mx_d2_gelu_f32(x);
    case MX_ACT_SOFTRELU: return mx_softrelu_f32(x);
    case MX_ACT_D_SOFTRELU: return mx_d_softrelu_f32(x);
    default: return (float)mx_act_f64(kind, v, a, b);
    }
}

#if !defined(__CUDACC__)
/* ---- host loops ------------------------------------------------------------------------ */
MX_ACT_CLONES static void mx_expf_loop(const float* x, float* y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = mx_expf(x[i]);
}

/* The float32 ELU / SELU / GELU and their derivatives over n elements, the kind hoisted
 * out of the loop (so each loop vectorizes). Returns 0, or -1 for another kind. */
MX_ACT_CLONES static int mx_act_f32(int kind, const float* x, float* y, int64_t n, double a,
                                    double b)
{
    int64_t i;
    switch (kind) {
    case MX_ACT_ELU:
        for (i = 0; i < n; i++) y[i] = (float)mx_act_elu_v(x[i], a);
        return 0;
    case MX_ACT_SELU:
        for (i = 0; i < n; i++) y[i] = (float)(b * mx_act_elu_v(x[i], a));
        return 0;
    case MX_ACT_GELU:
        for (i = 0; i < n; i++) y[i] = mx_gelu_f32(x[i]);
        return 0;
    case MX_ACT_D_ELU:
        for (i = 0; i < n; i++) y[i] = (float)mx_act_d_elu_v(x[i], a);
        return 0;
    case MX_ACT_D_SELU:
        for (i = 0; i < n; i++) y[i] = (float)(b * mx_act_d_elu_v(x[i], a));
        return 0;
    case MX_ACT_D_GELU:
        for (i = 0; i < n; i++) y[i] = mx_d_gelu_f32(x[i]);
        return 0;
    case MX_ACT_D2_GELU:
        for (i = 0; i < n; i++) y[i] = mx_d2_gelu_f32(x[i]);
        return 0;
    case MX_ACT_SOFTRELU:
        for (i = 0; i < n; i++) y[i] = mx_softrelu_f32(x[i]);
        return 0;
    case MX_ACT_D_SOFTRELU:
        for (i = 0; i < n; i++) y[i] = mx_d_softrelu_f32(x[i]);
        return 0;
    }
    return -1;
}

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
        if (log_mode) {                      /* y untouched until x is read for the last time: */
            for (j = 0; j < inner; j++)      /* in place (y == x) is safe */
                s[j] += mx_expf(scale * xr[j] - m[j]);
            continue;
        }
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

#endif  /* !__CUDACC__ */

#endif
