// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw ("Parallel
// random numbers: as easy as 1, 2, 3", SC'11; the Random123 library), and the samplers built
// on it. Plain C99 callable from C, C++ and CUDA (MX_FN marks host/device functions): the CPU
// kernels (random.pyx) and the CUDA kernels (mxlite/cuda/ops/random.py) call the same
// functions, so they produce the same samples for a seed.
//
// The stream of one operator call. A call has a 64-bit key (the seed) and a 64-bit *offset*
// (how many random operator calls came before it on this device since the seed was set).
// Its word stream is
//     W[t] = Philox4x32-10(counter = (lo(t/4), hi(t/4), lo(offset), hi(offset)), key)[t % 4]
// so any word is computable on its own: a kernel may split the output among any number of
// threads and get the same numbers. Fixed-cost samplers read their words directly:
//     32-bit draw of element i:  W[i]
//     64-bit draw of element i:  W[2i] | W[2i+1] << 32
// Samplers with rejection (bounded integers, gamma, Poisson) take their first draw as above
// (randint) or read an *element stream* (mx_stream_*): the words of the blocks whose 64-bit
// counter index is  2^63 | (attempt << 48) | i , attempt = 0, 1, 2, ...  Bit 63 keeps these
// blocks apart from the direct ones; 48 bits of element index are more than any array has.
#pragma once
#ifdef __CUDACC_RTC__
#define INFINITY __int_as_float(0x7f800000)   /* NVRTC has no <math.h> */
#else
#include <math.h>
#endif
#include "mx_stdint.h"

#ifndef MX_FN
#ifdef __CUDACC__
#define MX_FN __host__ __device__ inline
#else
#define MX_FN static inline
#endif
#endif

// MX_FN that the host compiler must inline (the gamma sampler's pieces, so that the chunk
// loops of random.pyx vectorize).
#ifndef MX_FN_INLINE
#if defined(__CUDACC__) || !defined(__GNUC__)
#define MX_FN_INLINE MX_FN
#else
#define MX_FN_INLINE static inline __attribute__((always_inline))
#endif
#endif

#define MX_PHILOX_M0 0xD2511F53u
#define MX_PHILOX_M1 0xCD9E8D57u
#define MX_PHILOX_W0 0x9E3779B9u   /* golden ratio */
#define MX_PHILOX_W1 0xBB67AE85u   /* sqrt(3) - 1 */

#define MX_STREAM_FLAG (1ull << 63)
#define MX_STREAM_INDEX_BITS 48
#define MX_STREAM_INDEX_MASK ((1ull << MX_STREAM_INDEX_BITS) - 1)
#define MX_STREAM_ATTEMPT_MASK 0x7fffu

typedef struct { uint32_t v[4]; } mx_philox4x32;   // a counter, or a block of 4 output words

#ifndef __CUDA_ARCH__
__extension__ typedef unsigned __int128 mx_uint128;  // GCC/Clang: 64x64 -> 128-bit products
#endif

// One round: two 32x32 -> 64-bit products, the halves crossed and mixed with the key.
MX_FN mx_philox4x32 mx_philox_round(mx_philox4x32 c, uint32_t k0, uint32_t k1) {
    uint64_t p0 = (uint64_t)MX_PHILOX_M0 * c.v[0];
    uint64_t p1 = (uint64_t)MX_PHILOX_M1 * c.v[2];
    mx_philox4x32 r;
    r.v[0] = (uint32_t)(p1 >> 32) ^ c.v[1] ^ k0;
    r.v[1] = (uint32_t)p1;
    r.v[2] = (uint32_t)(p0 >> 32) ^ c.v[3] ^ k1;
    r.v[3] = (uint32_t)p0;
    return r;
}

// Philox4x32 with 10 rounds; the key is bumped by the Weyl constants between rounds.
MX_FN mx_philox4x32 mx_philox4x32_10(mx_philox4x32 c, uint32_t k0, uint32_t k1) {
#ifdef __CUDACC__
#pragma unroll
#endif
    for (int r = 0; r < 10; ++r) {
        c = mx_philox_round(c, k0, k1);
        k0 += MX_PHILOX_W0;
        k1 += MX_PHILOX_W1;
    }
    return c;
}

// The block with 64-bit counter index ``index`` in the stream of (key, offset).
MX_FN mx_philox4x32 mx_philox_block(uint64_t key, uint64_t offset, uint64_t index) {
    mx_philox4x32 c;
    c.v[0] = (uint32_t)index;
    c.v[1] = (uint32_t)(index >> 32);
    c.v[2] = (uint32_t)offset;
    c.v[3] = (uint32_t)(offset >> 32);
    return mx_philox4x32_10(c, (uint32_t)key, (uint32_t)(key >> 32));
}

// Word t of the direct stream.
MX_FN uint32_t mx_philox_word(uint64_t key, uint64_t offset, uint64_t t) {
    return mx_philox_block(key, offset, t >> 2).v[t & 3];
}

// ---- words to floats -----------------------------------------------------------------------
// [0, 1) with ``bits`` random bits (24: float32, and float16 rounds that float32 value): exact.
MX_FN float mx_unit_float(uint32_t x, int bits) {
    return (float)(x >> (32 - bits)) * (1.0f / (float)(1u << bits));
}
// [0, 1) with 53 random bits.
MX_FN double mx_unit_double(uint64_t x) {
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}
// (0, 1): never 0 (safe under log), never 1.
MX_FN double mx_open_unit32(uint32_t x) {
    return ((double)x + 0.5) * (1.0 / 4294967296.0);
}
MX_FN double mx_open_unit64(uint64_t x) {
    return ((double)(x >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

#define MX_TWO_PI 6.283185307179586476925286766559

// ---- uniform, normal, exponential: fixed-cost samplers of the direct stream ----------------
// float32 (and float16) element i reads word W[i]; float64 element i its 64-bit draw
// W[2i] | W[2i+1] << 32. Normal elements come in Box-Muller pairs (2p, 2p + 1) reading the
// words (draws) 2p and 2p + 1; the pair's second element is dropped past the end.

// Uniform on [a, c) with width b = c - a (a (1 - u) + c u when the width overflows), ``bits``
// random bits, never above ``top`` (the largest value below c in the output dtype).
MX_FN float mx_uniform32(uint32_t x, int bits, double a, double b, double c, float top) {
    double u = mx_unit_float(x, bits);
    float v = (float)(isfinite(b) ? a + b * u : a * (1.0 - u) + c * u);
    return v <= top ? v : top;
}
MX_FN double mx_uniform64(uint64_t x, double a, double b, double c, double top) {
    double u = mx_unit_double(x);
    double v = isfinite(b) ? a + b * u : a * (1.0 - u) + c * u;
    return v <= top ? v : top;
}

// Normal(mean a, standard deviation b), a Box-Muller pair; float32 in float (its results are
// float32, and it is 3x faster than double on the CPU).
MX_FN void mx_normal32_pair(uint32_t x0, uint32_t x1, double a, double b, float* z0,
                            float* z1) {
    float r = sqrtf((float)(-2.0 * logf((float)mx_open_unit32(x0))));
    float theta = (float)(MX_TWO_PI * (x1 * (1.0 / 4294967296.0)));
    *z0 = (float)(a + b * (r * cosf(theta)));
    *z1 = (float)(a + b * (r * sinf(theta)));
}
MX_FN void mx_normal64_pair(uint64_t x0, uint64_t x1, double a, double b, double* z0,
                            double* z1) {
    double r = sqrt(-2.0 * log(mx_open_unit64(x0)));
    double theta = MX_TWO_PI * mx_unit_double(x1);
    *z0 = a + b * r * cos(theta);
    *z1 = a + b * r * sin(theta);
}

// Exponential with scale b = 1 / lambda.
MX_FN float mx_exponential32(uint32_t x, double b) { return (float)(-log(mx_open_unit32(x)) * b); }
MX_FN double mx_exponential64(uint64_t x, double b) { return -log(mx_open_unit64(x)) * b; }

// ---- bounded integers: Lemire's multiply-shift with rejection ------------------------------
// A draw x maps to (x * range) >> width; it is rejected when the low half of the product
// is below threshold = 2^width mod range = (-range) % range, which leaves exactly
// floor(2^width / range) draws per value (Lemire, "Fast random integer generation in an
// interval", ACM TOMS 2019). Callers compute the threshold once per call, not per draw.
MX_FN uint32_t mx_lemire_threshold32(uint32_t range) { return (uint32_t)(0u - range) % range; }
MX_FN uint64_t mx_lemire_threshold64(uint64_t range) { return (0ull - range) % range; }

// 1 when x is accepted for ``range``; *r then holds the value in [0, range).
MX_FN int mx_lemire32(uint32_t x, uint32_t range, uint32_t threshold, uint32_t* r) {
    uint64_t m = (uint64_t)x * range;
    *r = (uint32_t)(m >> 32);
    return (uint32_t)m >= threshold;
}

MX_FN int mx_lemire64(uint64_t x, uint64_t range, uint64_t threshold, uint64_t* r) {
#ifdef __CUDA_ARCH__
    uint64_t lo = x * range;
    *r = __umul64hi(x, range);
#else
    mx_uint128 m = (mx_uint128)x * range;
    uint64_t lo = (uint64_t)m;
    *r = (uint64_t)(m >> 64);
#endif
    return lo >= threshold;
}

// ---- the element stream: words for samplers that need a variable number of draws ----------
typedef struct {
    uint64_t key, offset, index;   // index: 2^63 | element (attempt is added per block)
    uint32_t attempt;              // next block to generate
    int pos;                       // next word of buf; 4 = buf used up
    uint32_t buf[4];
    const uint32_t* ahead;         // block 1's words when computed beforehand (the CPU
                                   // computes blocks 0 and 1 of many elements in SIMD), or 0
} mx_stream;

MX_FN void mx_stream_init(mx_stream* s, uint64_t key, uint64_t offset, uint64_t element) {
    s->key = key;
    s->offset = offset;
    s->index = MX_STREAM_FLAG | (element & MX_STREAM_INDEX_MASK);
    s->attempt = 0;
    s->pos = 4;
    s->ahead = 0;
}

// The stream with its blocks 0 and 1 given (the words mx_stream_next32 would compute).
MX_FN void mx_stream_init_ahead(mx_stream* s, uint64_t key, uint64_t offset, uint64_t element,
                                const uint32_t* block0, const uint32_t* block1) {
    mx_stream_init(s, key, offset, element);
    for (int64_t w = 0; w < 4; ++w) s->buf[w] = block0[w];
    s->attempt = 1;
    s->pos = 0;
    s->ahead = block1;
}

MX_FN uint32_t mx_stream_next32(mx_stream* s) {
    if (s->pos == 4 && s->attempt == 1 && s->ahead) {
        for (int64_t w = 0; w < 4; ++w) s->buf[w] = s->ahead[w];
        s->attempt = 2;
        s->pos = 0;
    } else if (s->pos == 4) {
        // 2^15 blocks (2^17 words) per element; a sampler never gets near that (each
        // attempt of the rejection loops below succeeds with probability > 1/2).
        uint64_t index = s->index | ((uint64_t)(s->attempt & MX_STREAM_ATTEMPT_MASK)
                                     << MX_STREAM_INDEX_BITS);
        mx_philox4x32 b = mx_philox_block(s->key, s->offset, index);
        s->buf[0] = b.v[0];
        s->buf[1] = b.v[1];
        s->buf[2] = b.v[2];
        s->buf[3] = b.v[3];
        s->attempt++;
        s->pos = 0;
    }
    return s->buf[s->pos++];
}

// Two words, the first in the low half.
MX_FN uint64_t mx_stream_next64(mx_stream* s) {
    uint64_t lo = mx_stream_next32(s);
    uint64_t hi = mx_stream_next32(s);
    return lo | (hi << 32);
}

// ---- bounded integers on the element stream -------------------------------------------------
// Element ``element``'s value in [0, range) from its stream: the first accepted draw (after
// its direct draw was rejected). ``threshold`` as mx_lemire_threshold32/64.
MX_FN uint32_t mx_bounded32_retry(uint64_t key, uint64_t offset, uint64_t element,
                                  uint32_t range, uint32_t threshold) {
    mx_stream s;
    uint32_t r;
    mx_stream_init(&s, key, offset, element);
    while (!mx_lemire32(mx_stream_next32(&s), range, threshold, &r)) {}
    return r;
}
MX_FN uint64_t mx_bounded64_retry(uint64_t key, uint64_t offset, uint64_t element,
                                  uint64_t range, uint64_t threshold) {
    mx_stream s;
    uint64_t r;
    mx_stream_init(&s, key, offset, element);
    while (!mx_lemire64(mx_stream_next64(&s), range, threshold, &r)) {}
    return r;
}

// The 64-bit draw of element j, W[2j] | W[2j + 1] << 32 (one Philox block).
MX_FN uint64_t mx_draw64(uint64_t key, uint64_t offset, uint64_t j) {
    mx_philox4x32 b = mx_philox_block(key, offset, j >> 1);
    // selects, not b.v[2 * (j & 1)]: a run-time index would put b in a GPU's local memory
    uint32_t lo = (j & 1) ? b.v[2] : b.v[0], hi = (j & 1) ? b.v[3] : b.v[1];
    return (uint64_t)lo | ((uint64_t)hi << 32);
}

// Uniform on [0, range) for element j (range >= 1): its 64-bit draw, then its stream.
MX_FN uint64_t mx_bounded64(uint64_t key, uint64_t offset, uint64_t j, uint64_t range) {
    uint64_t r, threshold = mx_lemire_threshold64(range);
    if (mx_lemire64(mx_draw64(key, offset, j), range, threshold, &r)) return r;
    return mx_bounded64_retry(key, offset, j, range, threshold);
}

MX_FN double mx_stream_uniform(mx_stream* s) { return mx_unit_double(mx_stream_next64(s)); }
MX_FN double mx_stream_open(mx_stream* s) { return mx_open_unit64(mx_stream_next64(s)); }

// Standard normal by Box-Muller (the cosine half; the sine half is not kept).
MX_FN double mx_stream_normal(mx_stream* s) {
    double u1 = mx_stream_open(s), u2 = mx_stream_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(MX_TWO_PI * u2);
}

// ---- elementary functions of the gamma samplers --------------------------------------------
// log, exp, sin and cos written with +, -, *, / and bit operations only (Taylor series, exact
// range reductions), in float and in double: the CPU loop over a chunk vectorizes (no libm
// call), and the CPU, the GPU (--fmad=false) and the Python oracle of tests/largespecs get the
// same bits. Accurate to a few ulp on the ranges the samplers use.
MX_FN_INLINE uint32_t mx_bits_f(float x) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    union { float f; uint32_t u; } b;
    b.f = x;
    return b.u;
#endif
}
MX_FN_INLINE float mx_from_bits_f(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    union { float f; uint32_t u; } b;
    b.u = u;
    return b.f;
#endif
}
MX_FN_INLINE uint64_t mx_bits_d(double x) {
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    union { double f; uint64_t u; } b;
    b.f = x;
    return b.u;
#endif
}
MX_FN_INLINE double mx_from_bits_d(uint64_t u) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    union { double f; uint64_t u; } b;
    b.u = u;
    return b.f;
#endif
}

// c ? a : b without a branch (both sides are computed anyway: the loops stay vectorizable).
MX_FN_INLINE float mx_sel_f(int c, float a, float b) {
    uint32_t m = 0u - (uint32_t)(c != 0);
    return mx_from_bits_f((mx_bits_f(a) & m) | (mx_bits_f(b) & ~m));
}
MX_FN_INLINE double mx_sel_d(int c, double a, double b) {
    uint64_t m = 0ull - (uint64_t)(c != 0);
    return mx_from_bits_d((mx_bits_d(a) & m) | (mx_bits_d(b) & ~m));
}

// log(x) for a positive normal float: x = m 2^k with m in [sqrt(1/2), sqrt(2)) (integer
// arithmetic on the bits), log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its
// series to s^9 (the next term is below 1e-9 of the result).
MX_FN_INLINE float mx_log_f(float x) {
    uint32_t b = mx_bits_f(x) - 0x3f3504f3u;                 // bits of sqrt(1/2)
    int32_t k = (int32_t)b >> 23;                              // arithmetic shift: floor
    float m = mx_from_bits_f((b & 0x007fffffu) + 0x3f3504f3u);
    float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    float p = 0.22222222f;                                     // 2/9, 2/7, 2/5, 2/3
    p = 0.2857143f + s2 * p;
    p = 0.4f + s2 * p;
    p = 0.6666667f + s2 * p;
    return (float)k * 0.6931472f + (2.0f * s + s * (s2 * p));
}
// The same in double: the series to s^23.
MX_FN_INLINE double mx_log_d(double x) {
    uint64_t b = mx_bits_d(x) - 0x3fe6a09e667f3bcdull;
    int32_t k = ((int32_t)(uint32_t)(b >> 52) ^ 0x800) - 0x800;   // the top 12 bits, signed
    double m = mx_from_bits_d((b & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull);
    double s = (m - 1.0) / (m + 1.0), s2 = s * s;
    // 2/23, 2/21, ..., 2/3
    double p = 0.08695652173913043;
    p = 0.09523809523809523 + s2 * p;
    p = 0.10526315789473684 + s2 * p;
    p = 0.11764705882352941 + s2 * p;
    p = 0.13333333333333333 + s2 * p;
    p = 0.15384615384615385 + s2 * p;
    p = 0.18181818181818182 + s2 * p;
    p = 0.2222222222222222 + s2 * p;
    p = 0.2857142857142857 + s2 * p;
    p = 0.4 + s2 * p;
    p = 0.6666666666666666 + s2 * p;
    return (double)k * 0.69314718055994530942 + (2.0 * s + s * (s2 * p));
}

// exp(y) for y <= 0 (0 below the smallest subnormal, and for NaN): y = k ln2 + r,
// |r| <= ln2 / 2 (Cody and Waite's two-part ln2), exp(r) by its Taylor series (to r^7 in
// float, r^13 in double), times 2^k as two powers of two (k may be subnormal).
MX_FN_INLINE float mx_exp_neg_f(float y) {
    int ok = y >= -104.0f;
    y = mx_sel_f(ok, y, -104.0f);                              // NaN too
    int32_t k = (int32_t)(y * 1.442695f - 0.5f);               // round to nearest
    float r = (y - (float)k * 0.69311523f) - (float)k * 3.1946183e-05f;
    float p = 0.0001984127f;                                   // 1/7!, ..., 1/2!
    p = 0.0013888889f + r * p;
    p = 0.008333334f + r * p;
    p = 0.041666668f + r * p;
    p = 0.16666667f + r * p;
    p = 0.5f + r * p;
    p = 1.0f + r * (1.0f + r * p);
    int32_t k1 = k / 2, k2 = k - k1;                           // each >= -76
    float e = p * mx_from_bits_f((uint32_t)(k1 + 127) << 23)
              * mx_from_bits_f((uint32_t)(k2 + 127) << 23);
    return mx_from_bits_f(mx_bits_f(e) & (0u - (uint32_t)ok));   // 0 unless ok (no branch)
}
MX_FN_INLINE double mx_exp_neg_d(double y) {
    int ok = y >= -746.0;
    y = mx_sel_d(ok, y, -746.0);
    int32_t k = (int32_t)(y * 1.4426950408889634 - 0.5);
    double r = (y - (double)k * 0.6931467056274414) - (double)k * 4.7493250390316726e-07;
    // 1/13!, 1/12!, ..., 1/2!
    double p = 1.6059043836821613e-10;
    p = 2.08767569878681e-09 + r * p;
    p = 2.505210838544172e-08 + r * p;
    p = 2.755731922398589e-07 + r * p;
    p = 2.7557319223985893e-06 + r * p;
    p = 2.48015873015873e-05 + r * p;
    p = 0.0001984126984126984 + r * p;
    p = 0.001388888888888889 + r * p;
    p = 0.008333333333333333 + r * p;
    p = 0.041666666666666664 + r * p;
    p = 0.16666666666666666 + r * p;
    p = 0.5 + r * p;
    p = 1.0 + r * (1.0 + r * p);
    int32_t k1 = k / 2, k2 = k - k1;                           // each >= -539
    double e = p * mx_from_bits_d((uint64_t)(k1 + 1023) << 52)
               * mx_from_bits_d((uint64_t)(k2 + 1023) << 52);
    return mx_from_bits_d(mx_bits_d(e) & (0ull - (uint64_t)ok));
}

// ---- the standard normal of the gamma samplers: Box-Muller, angle by octant ----------------
// z = sqrt(-2 log u1) cos(theta), theta uniform on [0, 2 pi). |cos theta| has the law of
// cos phi or sin phi (equally likely) for phi uniform on [0, pi/4], and its sign is a fair
// coin: word ``wa`` gives the sign (bit 31), cos or sin (bit 30) and phi (bits 0-29), so the
// series of sin and cos on [0, pi/4] need no range reduction.
MX_FN_INLINE float mx_gamma_normal_f(uint32_t wr, uint32_t wa) {
    float u1 = ((float)(int32_t)(wr >> 1) + 0.5f) * 4.656612873077393e-10f;   // (0, 1], 2^-31
    float r = sqrtf(-2.0f * mx_log_f(u1));
    float phi = ((float)(int32_t)(wa & 0x3fffffffu) + 0.5f) * 7.3145906e-10f;  // pi/4 2^-30
    float p2 = phi * phi;
    float c = 1.0f + p2 * (-0.5f + p2 * (0.041666668f + p2 * (-0.0013888889f
              + p2 * 2.4801588e-05f)));
    float sn = phi * (1.0f + p2 * (-0.16666667f + p2 * (0.008333334f + p2 * (-0.0001984127f
              + p2 * 2.7557319e-06f))));
    float z = r * mx_sel_f(wa & 0x40000000u, c, sn);
    return mx_from_bits_f(mx_bits_f(z) ^ (wa & 0x80000000u));     // bit 31: the sign
}
// mx_open_unit64's value, ((x >> 11) + 1/2) 2^-53, with x >> 11 converted as 2^26 hi + lo:
// exact, and int32 conversions vectorize on every SIMD level (int64 ones need AVX-512DQ).
MX_FN_INLINE double mx_open53_d(uint64_t x) {
    double hi = (double)(int32_t)(x >> 37), lo = (double)(int32_t)((x >> 11) & 0x3ffffffu);
    return ((hi * 67108864.0 + lo) + 0.5) * (1.0 / 9007199254740992.0);
}

// The same in double, u1 from a 64-bit draw (53 bits), phi from 30 bits.
MX_FN_INLINE double mx_gamma_normal_d(uint64_t xr, uint32_t wa) {
    double u1 = mx_open53_d(xr);
    double r = sqrt(-2.0 * mx_log_d(u1));
    double phi = ((double)(int32_t)(wa & 0x3fffffffu) + 0.5) * 7.314590396335798e-10;
    double p2 = phi * phi;
    // cos: 1/16!, -1/14!, ..., 1; sin: 1/17!, -1/15!, ..., 1 (to phi^16 and phi^17)
    double c = 4.779477332387385e-14;
    c = -1.1470745597729725e-11 + p2 * c;
    c = 2.08767569878681e-09 + p2 * c;
    c = -2.755731922398589e-07 + p2 * c;
    c = 2.48015873015873e-05 + p2 * c;
    c = -0.001388888888888889 + p2 * c;
    c = 0.041666666666666664 + p2 * c;
    c = -0.5 + p2 * c;
    c = 1.0 + p2 * c;
    double sn = 2.8114572543455206e-15;
    sn = -7.647163731819816e-13 + p2 * sn;
    sn = 1.6059043836821613e-10 + p2 * sn;
    sn = -2.505210838544172e-08 + p2 * sn;
    sn = 2.7557319223985893e-06 + p2 * sn;
    sn = -0.0001984126984126984 + p2 * sn;
    sn = 0.008333333333333333 + p2 * sn;
    sn = -0.16666666666666666 + p2 * sn;
    sn = 1.0 + p2 * sn;
    sn *= phi;
    double z = r * mx_sel_d(wa & 0x40000000u, c, sn);
    return mx_from_bits_d(mx_bits_d(z) ^ ((uint64_t)(wa & 0x80000000u) << 32));
}

// ---- gamma: Marsaglia and Tsang, "A simple method for generating gamma variables" ----------
// (ACM TOMS 26(3), 2000). d = alpha - 1/3, c = 1 / sqrt(9 d); a try draws a normal x and a
// uniform u, and with y = c x, v = 1 + y accepts d v^3 when v > 0 and
//   u < 1 - 0.0331 x^4 (the squeeze)   or   log u < x^2 / 2 + d (1 - v^3 + log v^3).
// With x^2 = 9 d y^2 the right side is 3 d R(y), R(y) = log(1 + y) - y + y^2/2 - y^3/3, which
// the sampler evaluates by its series -y^4/4 + y^5/5 - ... for small |y| (the direct form
// cancels there, badly for a large d). alpha < 1 is boosted: Gamma(alpha) =
// Gamma(alpha + 1) U^(1/alpha).
//
// Words of element i's stream, consumed in order: float (float32 and float16 outputs,
// MX_DIST_GAMMA_F32): the boost's uniform (alpha < 1 only), then 3 words per try: the
// normal's radius and angle words and u; double: a 64-bit boost draw (alpha < 1), then 4 words
// per try: the 64-bit radius draw, the angle word, u. A try accepts with probability > 0.95,
// so a sample takes one Philox block (two for a boosted double).
typedef struct { float d, c, inv_alpha; int boosted; } mx_gamma_f;
typedef struct { double d, c, inv_alpha; int boosted; } mx_gamma_d;

MX_FN_INLINE mx_gamma_f mx_gamma_setup_f(double alpha) {
    mx_gamma_f g;
    g.boosted = alpha < 1.0;
    g.inv_alpha = (float)(1.0 / alpha);
    double d = (g.boosted ? alpha + 1.0 : alpha) - 1.0 / 3.0;
    g.d = (float)d;
    g.c = (float)(1.0 / sqrt(9.0 * d));
    return g;
}
MX_FN_INLINE mx_gamma_d mx_gamma_setup_d(double alpha) {
    mx_gamma_d g;
    g.boosted = alpha < 1.0;
    g.inv_alpha = 1.0 / alpha;
    g.d = (g.boosted ? alpha + 1.0 : alpha) - 1.0 / 3.0;
    g.c = 1.0 / sqrt(9.0 * g.d);
    return g;
}

// (0, 1) from a 32-bit word, in float (may round to 1: only u < 1 - 2^-25 matters) and double.
MX_FN_INLINE float mx_open_f(uint32_t w) {
    return ((float)(int32_t)(w >> 1) + 0.5f) * 4.656612873077393e-10f;
}

// One try: 1 when accepted, the sample d v^3 in *out either way. Branch-free but for the
// selects (the CPU runs it over a chunk in SIMD).
MX_FN_INLINE int mx_gamma_try_f(mx_gamma_f g, uint32_t wr, uint32_t wa, uint32_t wu,
                                float* out) {
    float x = mx_gamma_normal_f(wr, wa);
    float y = g.c * x, v = 1.0f + y, u = mx_open_f(wu), x2 = x * x;
    float y4 = (y * y) * (y * y);
    float series = 0.05882353f;                // R(y) / y^4 to y^13: 1/17, -1/16, ..., -1/4
    series = -0.0625f + y * series;
    series = 0.06666667f + y * series;
    series = -0.071428575f + y * series;
    series = 0.07692308f + y * series;
    series = -0.083333336f + y * series;
    series = 0.09090909f + y * series;
    series = -0.1f + y * series;
    series = 0.11111111f + y * series;
    series = -0.125f + y * series;
    series = 0.14285715f + y * series;
    series = -0.16666667f + y * series;
    series = 0.2f + y * series;
    series = -0.25f + y * series;
    float direct = ((mx_log_f(v) - y) + 0.5f * (y * y)) - (y * y) * y * 0.33333334f;
    float rem = mx_sel_f((y < 0.25f) & (y > -0.25f), y4 * series, direct);
    int squeeze = u < 1.0f - 0.0331f * (x2 * x2);
    int full = mx_log_f(u) < 3.0f * g.d * rem;
    *out = g.d * (v * v * v);
    return (v > 0.0f) & (squeeze | full);
}
MX_FN_INLINE int mx_gamma_try_d(mx_gamma_d g, uint64_t xr, uint32_t wa, uint32_t wu,
                                double* out) {
    double x = mx_gamma_normal_d(xr, wa);
    double y = g.c * x, v = 1.0 + y, x2 = x * x;
    double u = ((double)(int32_t)(wu >> 1) + 0.5) * (1.0 / 2147483648.0);   // (0, 1), 31 bits
    // R(y) / y^4 to y^16: -1/20, 1/19, ..., -1/4
    double series = -0.05;
    series = 0.05263157894736842 + y * series;
    series = -0.05555555555555555 + y * series;
    series = 0.058823529411764705 + y * series;
    series = -0.0625 + y * series;
    series = 0.06666666666666667 + y * series;
    series = -0.07142857142857142 + y * series;
    series = 0.07692307692307693 + y * series;
    series = -0.08333333333333333 + y * series;
    series = 0.09090909090909091 + y * series;
    series = -0.1 + y * series;
    series = 0.1111111111111111 + y * series;
    series = -0.125 + y * series;
    series = 0.14285714285714285 + y * series;
    series = -0.16666666666666666 + y * series;
    series = 0.2 + y * series;
    series = -0.25 + y * series;
    double direct = ((mx_log_d(v) - y) + 0.5 * (y * y)) - (y * y) * y * (1.0 / 3.0);
    double rem = mx_sel_d((y < 0.1) & (y > -0.1), ((y * y) * (y * y)) * series, direct);
    int squeeze = u < 1.0 - 0.0331 * (x2 * x2);
    int full = mx_log_d(u) < 3.0 * g.d * rem;
    *out = g.d * (v * v * v);
    return (v > 0.0) & (squeeze | full);
}

// The boost U^(1/alpha) of one word (float) or 64-bit draw (double).
MX_FN_INLINE float mx_gamma_boost_f(mx_gamma_f g, uint32_t w) {
    return mx_exp_neg_f(mx_log_f(mx_open_f(w)) * g.inv_alpha);
}
MX_FN_INLINE double mx_gamma_boost_d(mx_gamma_d g, uint64_t x) {
    return mx_exp_neg_d(mx_log_d(mx_open53_d(x)) * g.inv_alpha);
}

// Gamma(alpha, 1) from element stream s (alpha > 0).
MX_FN float mx_sample_gamma_f(mx_stream* s, double alpha) {
    mx_gamma_f g = mx_gamma_setup_f(alpha);
    float boost = g.boosted ? mx_gamma_boost_f(g, mx_stream_next32(s)) : 1.0f, out;
    for (;;) {
        uint32_t wr = mx_stream_next32(s), wa = mx_stream_next32(s), wu = mx_stream_next32(s);
        if (mx_gamma_try_f(g, wr, wa, wu, &out)) return g.boosted ? out * boost : out;
    }
}
MX_FN double mx_sample_gamma(mx_stream* s, double alpha) {
    mx_gamma_d g = mx_gamma_setup_d(alpha);
    double boost = g.boosted ? mx_gamma_boost_d(g, mx_stream_next64(s)) : 1.0, out;
    for (;;) {
        uint64_t xr = mx_stream_next64(s);
        uint32_t wa = mx_stream_next32(s), wu = mx_stream_next32(s);
        if (mx_gamma_try_d(g, xr, wa, wu, &out)) return g.boosted ? out * boost : out;
    }
}

// log(k!) for k < 10, exact to double precision.
MX_FN double mx_log_factorial_small(int k) {
    const double table[10] = {0.0, 0.0, 0.69314718055994530942, 1.79175946922805500081,
                              3.17805383034794561965, 4.78749174278204599425,
                              6.57925121201010099506, 8.52516136106541430017,
                              10.60460290274525022842, 12.80182748008146961121};
    return table[k];
}

// h(x) = (1 + x) log(1 + x) - x without cancellation near 0 (series for |x| < 0.01).
MX_FN double mx_poisson_h(double x) {
    if (fabs(x) < 0.01) {
        double term = x * x, sum = 0.0;
        for (int n = 2; n < 10; ++n) {        // sum_{n>=2} (-1)^n x^n / (n (n - 1))
            sum += term / (double)(n * (n - 1));
            term *= -x;
        }
        return sum;
    }
    return (1.0 + x) * log1p(x) - x;
}

// log P(K = k) for K ~ Poisson(lam), lam >= 10: -lam + k log(lam) - log(k!). For k >= 10 it is
// evaluated as -lam h((k - lam)/lam) - log(2 pi k)/2 - (Stirling's series of log k!), which
// stays accurate when lam is huge (the naive form cancels terms of size lam log lam).
MX_FN double mx_poisson_log_pmf(double k, double lam) {
    if (k < 10.0) return -lam + k * log(lam) - mx_log_factorial_small((int)k);
    const double half_log_2pi = 0.91893853320467274178;
    double inv = 1.0 / k, inv2 = inv * inv;
    double stirling = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0)));
    return -lam * mx_poisson_h((k - lam) / lam) - half_log_2pi - 0.5 * log(k) - stirling;
}

// Poisson(lam): inversion by sequential search below 10, else Hormann's PTRS ("The transformed
// rejection method for generating Poisson random variables", 1993), as NumPy does.
MX_FN double mx_sample_poisson(mx_stream* s, double lam) {
    if (lam <= 0.0) return 0.0;
    if (!(lam < INFINITY)) return lam;       // inf (a gamma overflow in negative_binomial)
    if (lam < 10.0) {
        double u = mx_stream_uniform(s), p = exp(-lam), cdf = p, k = 0.0;
        while (u > cdf) {
            k += 1.0;
            p *= lam / k;
            if (p == 0.0) break;            // rounding left cdf a hair below u: the tail ends
            cdf += p;
        }
        return k;
    }
    const double slam = sqrt(lam);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double log_invalpha = log(1.1239 + 1.1328 / (b - 3.4));
    const double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        double u = mx_stream_uniform(s) - 0.5;
        double v = mx_stream_uniform(s);
        double us = 0.5 - fabs(u);
        double k = floor((2.0 * a / us + b) * u + lam + 0.43);
        if (us >= 0.07 && v <= vr) return k;
        if (k < 0.0 || (us < 0.013 && v > us)) continue;
        if (log(v) + log_invalpha - log(a / (us * us) + b) <= mx_poisson_log_pmf(k, lam))
            return k;
    }
}

// ---- one element of the stream samplers (random.pyx fill_stream, the CUDA kernels) ---------
#define MX_DIST_GAMMA 0                          /* shape p0, scale p1 */
#define MX_DIST_POISSON 1                        /* rate p0 */
#define MX_DIST_NEGATIVE_BINOMIAL 2              /* k = p0 successes, success probability p1 */
#define MX_DIST_GENERALIZED_NEGATIVE_BINOMIAL 3  /* mean p0, dispersion p1 (0: Poisson) */
#define MX_DIST_GAMMA_F32 4                      /* gamma drawn in float: float32/16 outputs */

MX_FN double mx_stream_sample_from(mx_stream* s, int dist, double p0, double p1) {
    if (dist == MX_DIST_GAMMA) return mx_sample_gamma(s, p0) * p1;
    if (dist == MX_DIST_GAMMA_F32) return (double)mx_sample_gamma_f(s, p0) * p1;
    if (dist == MX_DIST_POISSON) return mx_sample_poisson(s, p0);
    if (dist == MX_DIST_NEGATIVE_BINOMIAL) {
        if (p1 == 1.0) return 0.0;
        return mx_sample_poisson(s, mx_sample_gamma(s, p0) * ((1.0 - p1) / p1));
    }
    if (p1 == 0.0) return mx_sample_poisson(s, p0);
    if (p0 == 0.0) return 0.0;                   /* Poisson(gamma * 0): no draw needed */
    return mx_sample_poisson(s, mx_sample_gamma(s, 1.0 / p1) * (p0 * p1));
}

MX_FN double mx_stream_sample(int dist, uint64_t key, uint64_t offset, uint64_t i, double p0,
                              double p1) {
    mx_stream s;
    mx_stream_init(&s, key, offset, i);
    return mx_stream_sample_from(&s, dist, p0, p1);
}

// ---- multinomial -------------------------------------------------------------------------------
// Running sums of one probability row of k entries into cum; 1 when an entry is negative or
// not finite, or the total is not positive and finite.
MX_FN int mx_multinomial_cumsum(const double* p, double* cum, int64_t k) {
    double s = 0.0;
    int bad = 0;
    for (int64_t j = 0; j < k; ++j) {
        if (!(p[j] >= 0.0 && isfinite(p[j]))) bad = 1;
        s += p[j];
        cum[j] = s;
    }
    return bad || !(s > 0.0 && isfinite(s));
}

// The category of one row that 64-bit draw x picks: the smallest j with u total < cum[j]
// (when rounding put u total at the total, the last j with p[j] > 0).
MX_FN int64_t mx_multinomial_pick(const double* p, const double* cum, int64_t k, uint64_t x) {
    double total = cum[k - 1], target = mx_unit_double(x) * total;
    int64_t lo = 0, hi = k, mid;
    while (lo < hi) {
        mid = (lo + hi) >> 1;
        if (target < cum[mid]) hi = mid;
        else lo = mid + 1;
    }
    if (lo == k) {
        lo = k - 1;
        while (lo > 0 && p[lo] == 0.0) lo -= 1;
    }
    return lo;
}

// The same, with *logp = log(p_j / total).
MX_FN int64_t mx_multinomial_draw(const double* p, const double* cum, int64_t k, uint64_t x,
                                  double* logp) {
    int64_t j = mx_multinomial_pick(p, cum, k, x);
    *logp = log(p[j] / cum[k - 1]);
    return j;
}

// ---- shuffle: Fisher-Yates ---------------------------------------------------------------------
// perm = a permutation of 0 .. n-1: step j swaps positions j and j + d[j], d[j] uniform on
// [0, n - j) (mx_bounded64 of element j). The draws are independent and computed in
// parallel; the swaps depend on each other and run in order.
MX_FN void mx_fisher_yates(int64_t* perm, const int64_t* d, int64_t n) {
    for (int64_t j = 0; j < n; ++j) perm[j] = j;
    for (int64_t j = 0; j + 1 < n; ++j) {
        int64_t r = j + d[j], tmp = perm[j];
        perm[j] = perm[r];
        perm[r] = tmp;
    }
}
