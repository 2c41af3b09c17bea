"""Random number kernels on the Philox4x32-10 counter-based generator (see philox.h).

Every element is a pure function of (seed, offset, element index): the output is split into
chunks of ``CHUNK_BLOCKS`` Philox blocks, the chunks run in parallel above ``PARALLEL_MIN``
elements, and the result is the same for any number of threads.

* ``fill_continuous``: uniform, normal and exponential from the direct word stream (one word
  per float32 element, two per float64 element);
* ``fill_stream``: gamma, Poisson, negative binomial and its generalisation, which need a
  variable number of draws, from a per-element stream;
* ``randint``: unbiased bounded integers (Lemire's multiply-shift with rejection), never
  through a float;
* ``multinomial``, ``permutation`` + ``take_rows`` (shuffle);
* ``distinct_rows``: the first distinct values of each row's draws, in draw order, by hash
  sets (``_sample_unique_zipfian``; no sort);
* ``affine_into``: ``min(a + b z, top)`` of standard samples ``z``, stored in float16,
  float32 or float64 (the ``_sample_*`` transforms, one pass instead of five).

A chunk's Philox blocks come from one of three implementations of ``mx_philox_lanes``:
portable C, AVX2 or AVX-512 (one block per 64-bit lane), the best the CPU runs being picked
at import (``use_simd`` switches, for tests). All three give the same words. The bounded
integer loop is also compiled for AVX2/AVX-512 with GCC's ``target_clones``. The kernels
need a compiler with ``unsigned __int128`` (GCC, Clang) and a little-endian machine.
"""
import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libc.math cimport INFINITY
from libc.string cimport memcpy

cimport numpy as cnp
from .common cimport idx_t, PARALLEL_MIN

cnp.import_array()

cdef extern from "philox.h" nogil:
    ctypedef struct mx_philox4x32:
        uint32_t v[4]
    mx_philox4x32 mx_philox4x32_10(mx_philox4x32 c, uint32_t k0, uint32_t k1)
    float mx_uniform32(uint32_t x, int bits, double a, double b, double c, float top)
    double mx_uniform64(uint64_t x, double a, double b, double c, double top)
    void mx_normal32_pair(uint32_t x0, uint32_t x1, double a, double b, float* z0, float* z1)
    void mx_normal64_pair(uint64_t x0, uint64_t x1, double a, double b, double* z0,
                          double* z1)
    float mx_exponential32(uint32_t x, double b)
    double mx_exponential64(uint64_t x, double b)
    uint64_t mx_draw64(uint64_t key, uint64_t offset, uint64_t j)
    uint64_t mx_bounded64(uint64_t key, uint64_t offset, uint64_t j, uint64_t range)
    double mx_stream_sample(int dist, uint64_t key, uint64_t offset, uint64_t i, double p0,
                            double p1)
    int mx_multinomial_cumsum(const double* p, double* cum, int64_t k)
    int64_t mx_multinomial_pick(const double* p, const double* cum, int64_t k, uint64_t x)
    int64_t mx_multinomial_draw(const double* p, const double* cum, int64_t k, uint64_t x,
                                double* logp)
    void mx_fisher_yates(int64_t* perm, const int64_t* d, int64_t n)
    enum:
        MX_DIST_GAMMA
        MX_DIST_POISSON
        MX_DIST_NEGATIVE_BINOMIAL
        MX_DIST_GENERALIZED_NEGATIVE_BINOMIAL
        MX_DIST_GAMMA_F32

cdef extern from *:
    """
    #include "philox.h"

    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    #error "mxlite random kernels read 64-bit lanes as pairs of 32-bit words (little-endian)"
    #endif

    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    #define MX_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
    #else
    #define MX_SIMD_CLONES
    #endif

    #define MX_CHUNK_BLOCKS 256                      /* Philox blocks per chunk */
    #define MX_CHUNK_WORDS (4 * MX_CHUNK_BLOCKS)

    /* A chunk of the direct stream: blocks first_block .. first_block + MX_CHUNK_BLOCKS as
       64-bit lanes, lanes[2b] = W[4b] | W[4b+1] << 32 and lanes[2b+1] = W[4b+2] | W[4b+3] << 32
       (relative to the chunk), so on a little-endian machine (uint32_t*)lanes is W itself and
       lane j is the 64-bit draw of element j. Three implementations of the same function:
       portable scalar C, and AVX2 / AVX-512 with one block per 64-bit lane, where a round is
       p0 = lo(x) * M0, p1 = lo(y) * M1 (one _mul_epu32 each), x' = swap32(p1) ^ (x >> 32) ^ k0,
       y' = swap32(p0) ^ (y >> 32) ^ k1, for x = (c0, c1) and y = (c2, c3). */

    /* Scalar reference path: any compiler, any CPU. */
    static void mx_philox_lanes_scalar(uint64_t key, uint64_t offset, uint64_t first_block,
                                       uint64_t* lanes) {
        for (int b = 0; b < MX_CHUNK_BLOCKS; ++b) {
            mx_philox4x32 c = mx_philox_block(key, offset, first_block + (uint64_t)b);
            lanes[2 * b] = (uint64_t)c.v[0] | ((uint64_t)c.v[1] << 32);
            lanes[2 * b + 1] = (uint64_t)c.v[2] | ((uint64_t)c.v[3] << 32);
        }
    }

    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #define MX_HAVE_X86_SIMD 1
    #include <immintrin.h>

    __attribute__((target("avx2")))
    static void mx_philox_lanes_avx2(uint64_t key, uint64_t offset, uint64_t first_block,
                                     uint64_t* lanes) {
        const __m256i m0 = _mm256_set1_epi64x(MX_PHILOX_M0), m1 = _mm256_set1_epi64x(MX_PHILOX_M1);
        const __m256i step = _mm256_set1_epi64x(4);
        __m256i idx = _mm256_add_epi64(_mm256_set1_epi64x((long long)first_block),
                                       _mm256_setr_epi64x(0, 1, 2, 3));
        for (int b = 0; b < MX_CHUNK_BLOCKS; b += 16) {
            __m256i x[4], y[4];
            for (int v = 0; v < 4; ++v) {
                x[v] = idx;
                y[v] = _mm256_set1_epi64x((long long)offset);
                idx = _mm256_add_epi64(idx, step);
            }
            uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
            for (int r = 0; r < 10; ++r) {
                const __m256i kx = _mm256_set1_epi64x(k0), ky = _mm256_set1_epi64x(k1);
                for (int v = 0; v < 4; ++v) {
                    __m256i p0 = _mm256_mul_epu32(x[v], m0), p1 = _mm256_mul_epu32(y[v], m1);
                    x[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p1, 0xB1),
                                                             _mm256_srli_epi64(x[v], 32)), kx);
                    y[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p0, 0xB1),
                                                             _mm256_srli_epi64(y[v], 32)), ky);
                }
                k0 += MX_PHILOX_W0;
                k1 += MX_PHILOX_W1;
            }
            for (int v = 0; v < 4; ++v) {
                __m256i lo = _mm256_unpacklo_epi64(x[v], y[v]);
                __m256i hi = _mm256_unpackhi_epi64(x[v], y[v]);
                _mm256_storeu_si256((__m256i*)(lanes + 2 * (b + 4 * v)),
                                    _mm256_permute2x128_si256(lo, hi, 0x20));
                _mm256_storeu_si256((__m256i*)(lanes + 2 * (b + 4 * v) + 4),
                                    _mm256_permute2x128_si256(lo, hi, 0x31));
            }
        }
    }

    __attribute__((target("avx512f")))
    static void mx_philox_lanes_avx512(uint64_t key, uint64_t offset, uint64_t first_block,
                                       uint64_t* lanes) {
        const __m512i m0 = _mm512_set1_epi64(MX_PHILOX_M0), m1 = _mm512_set1_epi64(MX_PHILOX_M1);
        const __m512i step = _mm512_set1_epi64(8);
        const __m512i even = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
        const __m512i odd = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
        __m512i idx = _mm512_add_epi64(_mm512_set1_epi64((long long)first_block),
                                       _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
        for (int b = 0; b < MX_CHUNK_BLOCKS; b += 32) {
            __m512i x[4], y[4];
            for (int v = 0; v < 4; ++v) {
                x[v] = idx;
                y[v] = _mm512_set1_epi64((long long)offset);
                idx = _mm512_add_epi64(idx, step);
            }
            uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
            for (int r = 0; r < 10; ++r) {
                const __m512i kx = _mm512_set1_epi64(k0), ky = _mm512_set1_epi64(k1);
                for (int v = 0; v < 4; ++v) {
                    __m512i p0 = _mm512_mul_epu32(x[v], m0), p1 = _mm512_mul_epu32(y[v], m1);
                    x[v] = _mm512_ternarylogic_epi64(_mm512_ror_epi64(p1, 32),
                                                     _mm512_srli_epi64(x[v], 32), kx, 0x96);
                    y[v] = _mm512_ternarylogic_epi64(_mm512_ror_epi64(p0, 32),
                                                     _mm512_srli_epi64(y[v], 32), ky, 0x96);
                }
                k0 += MX_PHILOX_W0;
                k1 += MX_PHILOX_W1;
            }
            for (int v = 0; v < 4; ++v) {
                _mm512_storeu_si512((void*)(lanes + 2 * (b + 8 * v)),
                                    _mm512_permutex2var_epi64(x[v], even, y[v]));
                _mm512_storeu_si512((void*)(lanes + 2 * (b + 8 * v) + 8),
                                    _mm512_permutex2var_epi64(x[v], odd, y[v]));
            }
        }
    }
    #endif


    typedef void (*mx_lanes_fn)(uint64_t, uint64_t, uint64_t, uint64_t*);
    static mx_lanes_fn mx_philox_lanes_impl = mx_philox_lanes_scalar;

    /* The best Philox implementation this CPU runs: 0 scalar, 1 AVX2, 2 AVX-512. */
    static int mx_random_best(void) {
        int best = 0;
    #ifdef MX_HAVE_X86_SIMD
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) best = 1;
        if (__builtin_cpu_supports("avx512f")) best = 2;
    #endif
        return best;
    }

    /* Use implementation ``level`` (clipped to what the CPU runs); returns the level used. */
    static int mx_random_select(int level) {
        int best = mx_random_best();
        if (level < 0 || level > best) level = best;
    #ifdef MX_HAVE_X86_SIMD
        mx_philox_lanes_impl = level == 2 ? mx_philox_lanes_avx512
                             : level == 1 ? mx_philox_lanes_avx2 : mx_philox_lanes_scalar;
    #endif
        return level;
    }

    static inline void mx_philox_lanes(uint64_t key, uint64_t offset, uint64_t first_block,
                                       uint64_t* lanes) {
        mx_philox_lanes_impl(key, offset, first_block, lanes);
    }

    static inline void mx_store_int(void* out, int out64, int64_t i, uint64_t v) {
        if (out64) ((int64_t*)out)[i] = (int64_t)v;
        else ((int32_t*)out)[i] = (int32_t)(uint32_t)v;
    }

    /* randint with 32-bit draws (range <= 2^32; range 0 stands for 2^32): element i is
       low + lemire(W[i]) when W[i] is accepted, else low + lemire(x) for the first accepted
       word x of element i's stream. Elements [first, first + n), first a multiple of 4,
       n <= MX_CHUNK_WORDS. */
    MX_SIMD_CLONES
    static void mx_randint32_chunk(void* out, int out64, int64_t first, int64_t n,
                                   uint64_t key, uint64_t offset, uint32_t range,
                                   uint32_t threshold, uint64_t low) {
        uint64_t lanes[MX_CHUNK_WORDS / 2];
        const uint32_t* words = (const uint32_t*)lanes;
        mx_philox_lanes(key, offset, (uint64_t)first >> 2, lanes);
        if (range == 0) {
            for (int64_t t = 0; t < n; ++t) mx_store_int(out, out64, first + t, low + words[t]);
            return;
        }
        uint32_t rejected = 0;
        for (int64_t t = 0; t < n; ++t) {
            uint64_t m = (uint64_t)words[t] * range;
            rejected |= (uint32_t)m < threshold;
            mx_store_int(out, out64, first + t, low + (m >> 32));
        }
        if (!rejected) return;
        for (int64_t t = 0; t < n; ++t) {
            uint64_t m = (uint64_t)words[t] * range;
            if ((uint32_t)m >= threshold) continue;
            uint32_t r = mx_bounded32_retry(key, offset, (uint64_t)(first + t), range, threshold);
            mx_store_int(out, out64, first + t, low + r);
        }
    }

    /* randint with 64-bit draws (range > 2^32; range 0 stands for 2^64): element i reads
       W[2i] | W[2i+1] << 32, then its stream's 64-bit draws. first a multiple of 2,
       n <= MX_CHUNK_WORDS / 2. */
    static void mx_randint64_chunk(int64_t* out, int64_t first, int64_t n, uint64_t key,
                                   uint64_t offset, uint64_t range, uint64_t threshold,
                                   uint64_t low) {
        uint64_t lanes[MX_CHUNK_WORDS / 2];
        mx_philox_lanes(key, offset, (uint64_t)first >> 1, lanes);
        for (int64_t t = 0; t < n; ++t) {
            uint64_t x = lanes[t], r;
            if (range == 0) {
                out[first + t] = (int64_t)(low + x);
                continue;
            }
            if (!mx_lemire64(x, range, threshold, &r))
                r = mx_bounded64_retry(key, offset, (uint64_t)(first + t), range, threshold);
            out[first + t] = (int64_t)(low + r);
        }
    }

    /* Stream samples (philox.h's mx_stream_sample) of elements [first, first + n), n <=
       MX_CHUNK_BLOCKS: blocks 0 and 1 of every element's stream come from the SIMD lanes
       (element i's block a has counter 2^63 | a << 48 | i, consecutive over a chunk), the
       same words mx_stream_next32 computes one at a time; later blocks as usual. Writes
       element start + first + t of the stream to out[first + t] and returns how many
       samples are not <= top (in double). */
    #define MX_STREAM_CHUNK(NAME, REAL)                                                       \
    static int64_t NAME(int dist, REAL* out, int64_t first, int64_t n, uint64_t key,        \
                        uint64_t offset, double p0, double p1, double top,                   \
                        int64_t start) {                                                      \
        uint64_t lanes0[MX_CHUNK_WORDS / 2], lanes1[MX_CHUNK_WORDS / 2];                     \
        uint64_t block = MX_STREAM_FLAG | (uint64_t)(start + first);                         \
        mx_philox_lanes(key, offset, block, lanes0);                                          \
        mx_philox_lanes(key, offset, block | (1ull << MX_STREAM_INDEX_BITS), lanes1);        \
        const uint32_t* w0 = (const uint32_t*)lanes0;                                        \
        const uint32_t* w1 = (const uint32_t*)lanes1;                                        \
        int64_t over = 0;                                                                    \
        for (int64_t t = 0; t < n; ++t) {                                                    \
            mx_stream s;                                                                     \
            mx_stream_init_ahead(&s, key, offset, (uint64_t)(start + first + t), w0 + 4 * t,\
                                 w1 + 4 * t);                                                \
            double v = mx_stream_sample_from(&s, dist, p0, p1);                              \
            out[first + t] = (REAL)v;                                                        \
            if (!(v <= top)) ++over;                                                         \
        }                                                                                    \
        return over;                                                                         \
    }
    MX_STREAM_CHUNK(mx_stream_chunk_f32, float)
    MX_STREAM_CHUNK(mx_stream_chunk_f64, double)

    /* Gamma (MX_DIST_GAMMA_F32 into float, MX_DIST_GAMMA into double) of elements [first,
       first + n), n <= MX_CHUNK_BLOCKS: the first try of every element reads its stream's
       block 0 (and block 1 for a boosted double), computed in SIMD, and runs over the chunk
       without branches (mx_gamma_try_* are plain arithmetic and selects: the loop
       vectorizes); an element whose first try is rejected (< 5%) is drawn again by the scalar
       sampler, which repeats that try on the same words and goes on. Writes and counts as
       MX_STREAM_CHUNK. */
    MX_SIMD_CLONES
    static int64_t mx_gamma_chunk_f32(float* out, int64_t first, int64_t n, uint64_t key,
                                      uint64_t offset, double alpha, double scale, double top,
                                      int64_t start) {
        uint64_t lanes[MX_CHUNK_WORDS / 2];
        const uint32_t* w = (const uint32_t*)lanes;
        unsigned char ok[MX_CHUNK_BLOCKS];
        float* dst = out + first;
        mx_gamma_f g = mx_gamma_setup_f(alpha);
        int64_t over = 0;
        mx_philox_lanes(key, offset, MX_STREAM_FLAG | (uint64_t)(start + first), lanes);
        if (g.boosted) {                      /* word 0: the boost; words 1-3: the first try */
            for (int64_t t = 0; t < n; ++t) {
                float x;
                ok[t] = (unsigned char)mx_gamma_try_f(g, w[4 * t + 1], w[4 * t + 2],
                                                      w[4 * t + 3], &x);
                double v = (double)(x * mx_gamma_boost_f(g, w[4 * t])) * scale;
                dst[t] = (float)v;
                over += ok[t] & !(v <= top);  /* rejected ones: counted when drawn again */
            }
        } else {                              /* words 0-2: the first try */
            for (int64_t t = 0; t < n; ++t) {
                float x;
                ok[t] = (unsigned char)mx_gamma_try_f(g, w[4 * t], w[4 * t + 1], w[4 * t + 2],
                                                      &x);
                double v = (double)x * scale;
                dst[t] = (float)v;
                over += ok[t] & !(v <= top);  /* rejected ones: counted when drawn again */
            }
        }
        for (int64_t t = 0; t < n; ++t) {
            if (ok[t]) continue;
            double v = mx_stream_sample(MX_DIST_GAMMA_F32, key, offset,
                                        (uint64_t)(start + first + t), alpha, scale);
            dst[t] = (float)v;
            over += !(v <= top);
        }
        return over;
    }

    MX_SIMD_CLONES
    static int64_t mx_gamma_chunk_f64(double* out, int64_t first, int64_t n, uint64_t key,
                                      uint64_t offset, double alpha, double scale, double top,
                                      int64_t start) {
        uint64_t lanes0[MX_CHUNK_WORDS / 2], lanes1[MX_CHUNK_WORDS / 2];
        const uint32_t* w0 = (const uint32_t*)lanes0;
        const uint32_t* w1 = (const uint32_t*)lanes1;
        unsigned char ok[MX_CHUNK_BLOCKS];
        double* dst = out + first;
        mx_gamma_d g = mx_gamma_setup_d(alpha);
        int64_t over = 0;
        uint64_t block = MX_STREAM_FLAG | (uint64_t)(start + first);
        mx_philox_lanes(key, offset, block, lanes0);
        if (g.boosted) {          /* words 0-1: the boost; 2-3 and block 1's 0-1: the first try */
            mx_philox_lanes(key, offset, block | (1ull << MX_STREAM_INDEX_BITS), lanes1);
            for (int64_t t = 0; t < n; ++t) {
                double x;
                ok[t] = (unsigned char)mx_gamma_try_d(g, lanes0[2 * t + 1], w1[4 * t],
                                                      w1[4 * t + 1], &x);
                double v = x * mx_gamma_boost_d(g, lanes0[2 * t]) * scale;
                dst[t] = v;
                over += ok[t] & !(v <= top);
            }
        } else {                  /* words 0-3: the first try */
            for (int64_t t = 0; t < n; ++t) {
                double x;
                ok[t] = (unsigned char)mx_gamma_try_d(g, lanes0[2 * t], w0[4 * t + 2],
                                                      w0[4 * t + 3], &x);
                double v = x * scale;
                dst[t] = v;
                over += ok[t] & !(v <= top);
            }
        }
        for (int64_t t = 0; t < n; ++t) {
            if (ok[t]) continue;
            dst[t] = mx_stream_sample(MX_DIST_GAMMA, key, offset, (uint64_t)(start + first + t),
                                      alpha, scale);
            over += !(dst[t] <= top);
        }
        return over;
    }
    """
    enum:
        CHUNK_BLOCKS "MX_CHUNK_BLOCKS"
        CHUNK_WORDS "MX_CHUNK_WORDS"
        CHUNK_LANES "(MX_CHUNK_WORDS / 2)"
    int mx_random_best() noexcept nogil
    int mx_random_select(int level) noexcept nogil
    void mx_philox_lanes(uint64_t key, uint64_t offset, uint64_t first_block,
                         uint64_t* lanes) noexcept nogil
    void mx_randint32_chunk(void* out, int out64, int64_t first, int64_t n, uint64_t key,
                            uint64_t offset, uint32_t range, uint32_t threshold,
                            uint64_t low) noexcept nogil
    void mx_randint64_chunk(int64_t* out, int64_t first, int64_t n, uint64_t key,
                            uint64_t offset, uint64_t range, uint64_t threshold,
                            uint64_t low) noexcept nogil
    int64_t mx_stream_chunk_f32(int dist, float* out, int64_t first, int64_t n, uint64_t key,
                                uint64_t offset, double p0, double p1,
                                double top, int64_t start) noexcept nogil
    int64_t mx_stream_chunk_f64(int dist, double* out, int64_t first, int64_t n,
                                uint64_t key, uint64_t offset, double p0, double p1,
                                double top, int64_t start) noexcept nogil
    int64_t mx_gamma_chunk_f32(float* out, int64_t first, int64_t n, uint64_t key,
                               uint64_t offset, double alpha, double scale, double top,
                               int64_t start) noexcept nogil
    int64_t mx_gamma_chunk_f64(double* out, int64_t first, int64_t n, uint64_t key,
                               uint64_t offset, double alpha, double scale, double top,
                               int64_t start) noexcept nogil

# fill_continuous distributions
cdef enum:
    UNIFORM = 0
    NORMAL = 1
    EXPONENTIAL = 2

CONTINUOUS = {"uniform": UNIFORM, "normal": NORMAL, "exponential": EXPONENTIAL}
# fill_stream distributions (philox.h's MX_DIST_*)
STREAM = {"gamma": MX_DIST_GAMMA, "poisson": MX_DIST_POISSON,
          "negative_binomial": MX_DIST_NEGATIVE_BINOMIAL,
          "generalized_negative_binomial": MX_DIST_GENERALIZED_NEGATIVE_BINOMIAL,
          "gamma_f32": MX_DIST_GAMMA_F32}     # gamma drawn in float: float32/float16 outputs

cdef object TWO32 = 2 ** 32      # Python ints: range arithmetic must not overflow
cdef object TWO64 = 2 ** 64


cdef int _check_out(cnp.ndarray out, str what) except -1:
    if not cnp.PyArray_IS_C_CONTIGUOUS(out):
        raise ValueError(f"random kernel {what}: the output must be C-contiguous")
    if cnp.PyArray_SIZE(out) >= (<idx_t>1 << 48):
        raise ValueError(f"random kernel {what}: more than 2^48 elements")
    return 0


# The Philox implementation in use: the best this CPU supports.
_SIMD_NAMES = ("scalar", "avx2", "avx512")
_simd_level = mx_random_select(-1)


def use_simd(name=None):
    """Select the Philox implementation ('scalar', 'avx2', 'avx512'; None: the best
    available) and return the name of the one now in use. All give the same numbers; this
    hook lets the tests check each path."""
    global _simd_level
    _simd_level = mx_random_select(-1 if name is None else _SIMD_NAMES.index(name))
    return _SIMD_NAMES[_simd_level]


def available_simd():
    """The Philox implementations this CPU can run, slowest first."""
    return _SIMD_NAMES[:mx_random_best() + 1]


# ---- the generator itself (for tests and for other kernels) ----------------------------------
def philox4x32_10(counter, key):
    """Philox4x32-10 of ``counter`` (4 uint32) under ``key`` (2 uint32): a tuple of 4 uint32."""
    cdef mx_philox4x32 c
    cdef idx_t k
    for k in range(4):
        c.v[k] = <uint32_t>(int(counter[k]) & 0xFFFFFFFF)
    c = mx_philox4x32_10(c, <uint32_t>(int(key[0]) & 0xFFFFFFFF),
                         <uint32_t>(int(key[1]) & 0xFFFFFFFF))
    return (c.v[0], c.v[1], c.v[2], c.v[3])


def stream_words(cnp.ndarray out, uint64_t key, uint64_t offset):
    """Words W[0 .. out.size) of the direct stream of (key, offset) into uint32 ``out``."""
    if out.dtype != "uint32":
        raise TypeError("stream_words: out must be uint32")
    _check_out(out, "stream_words")
    cdef idx_t n = cnp.PyArray_SIZE(out), c, nchunks = (n + CHUNK_WORDS - 1) // CHUNK_WORDS
    cdef uint32_t* o = <uint32_t*>cnp.PyArray_DATA(out)
    with nogil:
        for c in range(nchunks):
            _words_chunk(o, c * CHUNK_WORDS, min(<idx_t>CHUNK_WORDS, n - c * CHUNK_WORDS),
                         key, offset)


def stream_sample(str dist, uint64_t key, uint64_t offset, uint64_t i, double p0,
                  double p1=0.0):
    """Element ``i`` of a fill_stream draw, from its stream alone, one scalar block at a
    time (the reference of fill_stream's SIMD chunks)."""
    return mx_stream_sample(STREAM[dist], key, offset, i, p0, p1)


cdef void _words_chunk(uint32_t* out, idx_t first, idx_t n, uint64_t key,
                       uint64_t offset) noexcept nogil:
    cdef uint64_t lanes[CHUNK_LANES]
    mx_philox_lanes(key, offset, <uint64_t>first >> 2, lanes)
    memcpy(out + first, lanes, n * sizeof(uint32_t))


# ---- uniform, normal, exponential ------------------------------------------------------------
CHUNK = CHUNK_WORDS     # fill_continuous's blocks start at multiples of this

cdef void _continuous32(int dist, float* out, idx_t first, idx_t n, uint64_t key,
                        uint64_t offset, double a, double b, double c, float top,
                        int bits, idx_t start) noexcept nogil:
    """Elements [first, first + n) of a float32 output holding the stream's elements from
    ``start`` on: one word each."""
    cdef uint64_t lanes[CHUNK_LANES]
    cdef const uint32_t* words = <const uint32_t*>lanes
    cdef idx_t t
    cdef float z1
    mx_philox_lanes(key, offset, <uint64_t>(start + first) >> 2, lanes)
    out += first
    if dist == UNIFORM:      # a = low, b = high - low, c = high
        for t in range(n):
            out[t] = mx_uniform32(words[t], bits, a, b, c, top)
    elif dist == NORMAL:     # Box-Muller on words (2p, 2p + 1) -> elements 2p, 2p + 1
        for t in range(0, n, 2):
            mx_normal32_pair(words[t], words[t + 1], a, b, &out[t], &z1)
            if t + 1 < n:
                out[t + 1] = z1
    else:                    # exponential: b = 1 / lam
        for t in range(n):
            out[t] = mx_exponential32(words[t], b)


cdef void _continuous64(int dist, double* out, idx_t first, idx_t n, uint64_t key,
                        uint64_t offset, double a, double b, double c, double top,
                        int bits, idx_t start) noexcept nogil:
    """Elements [first, first + n) of a float64 output holding the stream's elements from
    ``start`` on: two words each."""
    cdef uint64_t lanes[CHUNK_LANES]
    cdef idx_t t
    cdef double z1
    mx_philox_lanes(key, offset, <uint64_t>(start + first) >> 1, lanes)
    out += first
    if dist == UNIFORM:      # a = low, b = high - low, c = high
        for t in range(n):
            out[t] = mx_uniform64(lanes[t], a, b, c, top)
    elif dist == NORMAL:
        for t in range(0, n, 2):
            mx_normal64_pair(lanes[t], lanes[t + 1], a, b, &out[t], &z1)
            if t + 1 < n:
                out[t + 1] = z1
    else:
        for t in range(n):
            out[t] = mx_exponential64(lanes[t], b)


def fill_continuous(str dist, cnp.ndarray out, uint64_t key, uint64_t offset, double a,
                    double b, double c=0.0, double top=0.0, int bits=24, idx_t start=0):
    """Fill float32/float64 ``out`` with ``dist`` samples from the stream of (key, offset):
    its elements ``start, start + 1, ...`` (``start`` a multiple of ``CHUNK``, so that a
    large output can be drawn in blocks equal to the draw of the whole).

    uniform: low a, width b, high c, values clamped to ``top`` (the largest value below high
    in the output dtype), ``bits`` random bits for float32 (11 when the result goes to
    float16); normal: mean a, standard deviation b; exponential: scale b = 1 / lam.
    """
    cdef int d = CONTINUOUS[dist]
    cdef int is64
    _check_out(out, dist)
    if out.dtype == "float32":
        is64 = 0
    elif out.dtype == "float64":
        is64 = 1
    else:
        raise TypeError(f"fill_continuous: unsupported output dtype {out.dtype}")
    if not 1 <= bits <= 24:
        raise ValueError("fill_continuous: bits must be in [1, 24]")
    if start < 0 or start % CHUNK_WORDS:
        raise ValueError(f"fill_continuous: start must be a non-negative multiple of {CHUNK}")
    cdef idx_t n = cnp.PyArray_SIZE(out), per = CHUNK_WORDS >> is64, ch
    cdef idx_t nchunks = (n + per - 1) // per
    cdef char* o = <char*>cnp.PyArray_DATA(out)
    cdef float top32 = <float>top
    if n >= PARALLEL_MIN and nchunks > 1:
        for ch in prange(nchunks, nogil=True, schedule="dynamic", chunksize=4):
            if is64:
                _continuous64(d, <double*>o, ch * per, min(per, n - ch * per), key, offset,
                              a, b, c, top, bits, start)
            else:
                _continuous32(d, <float*>o, ch * per, min(per, n - ch * per), key, offset,
                              a, b, c, top32, bits, start)
    else:
        with nogil:
            for ch in range(nchunks):
                if is64:
                    _continuous64(d, <double*>o, ch * per, min(per, n - ch * per), key,
                                  offset, a, b, c, top, bits, start)
                else:
                    _continuous32(d, <float*>o, ch * per, min(per, n - ch * per), key,
                                  offset, a, b, c, top32, bits, start)


# ---- gamma, Poisson, negative binomial: one stream per element -------------------------------
ctypedef fused real:
    float
    double


cdef idx_t _fill_stream(int dist, real* out, idx_t n, uint64_t key, uint64_t offset,
                        double p0, double p1, double top, idx_t start) noexcept nogil:
    """Fill ``out``; return how many samples are not <= ``top`` (compared in double, before
    rounding to ``real``). Chunks of CHUNK_BLOCKS elements, their first Philox blocks in
    SIMD."""
    cdef idx_t c, over = 0, chunks = (n + CHUNK_BLOCKS - 1) // CHUNK_BLOCKS
    if n >= PARALLEL_MIN // 16:          # each element costs a few Philox blocks
        for c in prange(chunks, schedule="static"):
            over += _stream_chunk(dist, out, c * CHUNK_BLOCKS,
                                  min(<idx_t>CHUNK_BLOCKS, n - c * CHUNK_BLOCKS),
                                  key, offset, p0, p1, top, start)
    else:
        for c in range(chunks):
            over += _stream_chunk(dist, out, c * CHUNK_BLOCKS,
                                  min(<idx_t>CHUNK_BLOCKS, n - c * CHUNK_BLOCKS),
                                  key, offset, p0, p1, top, start)
    return over


cdef inline idx_t _stream_chunk(int dist, real* out, idx_t first, idx_t n, uint64_t key,
                                uint64_t offset, double p0, double p1,
                                double top, idx_t start) noexcept nogil:
    if real is float:
        if dist == MX_DIST_GAMMA_F32:
            return mx_gamma_chunk_f32(out, first, n, key, offset, p0, p1, top, start)
        return mx_stream_chunk_f32(dist, out, first, n, key, offset, p0, p1, top, start)
    else:
        if dist == MX_DIST_GAMMA:
            return mx_gamma_chunk_f64(out, first, n, key, offset, p0, p1, top, start)
        return mx_stream_chunk_f64(dist, out, first, n, key, offset, p0, p1, top, start)


cdef double _worst_sample(int dist, idx_t n, uint64_t key, uint64_t offset, double p0,
                          double p1, double top, idx_t start) noexcept nogil:
    """The largest sample above ``top`` (NaN when one is NaN), drawn again in double."""
    cdef idx_t i
    cdef double v, worst = top
    for i in range(n):
        v = mx_stream_sample(dist, key, offset, <uint64_t>(start + i), p0, p1)
        if v != v:
            return v
        if v > worst:
            worst = v
    return worst


def fill_stream(str dist, cnp.ndarray out, uint64_t key, uint64_t offset, double p0,
                double p1=0.0, double top=INFINITY, idx_t start=0):
    """Fill float32/float64 ``out`` with gamma(p0 shape, p1 scale), poisson(p0),
    negative_binomial(p0 = k, p1 = p) or generalized_negative_binomial(p0 = mu, p1 = alpha)
    samples; parameters must already be validated (finite, in range).

    Returns None when every sample is <= ``top``, else the largest one above it (NaN when
    one is NaN), in double: a count sampler passes the largest integer its output dtype
    holds exactly, and checks the samples before rounding without a float64 copy of the
    output (``out`` is written either way). ``out`` receives the stream's elements
    ``start, start + 1, ...`` (any ``start >= 0``): a block of a larger draw, or the samples of
    one parameter of a per-element sampler.

    Gamma into float32 is drawn in float (``gamma_f32``, philox.h's MX_DIST_GAMMA_F32, the
    GPU's sampler for float16 and float32), into float64 in double."""
    if start < 0:
        raise ValueError("fill_stream: start must be >= 0")
    cdef int d = STREAM[dist]
    _check_out(out, dist)
    cdef idx_t n = cnp.PyArray_SIZE(out), over
    if out.dtype == "float32":
        if d == MX_DIST_GAMMA:             # float32 (and float16) gamma is drawn in float
            d = MX_DIST_GAMMA_F32
        with nogil:
            over = _fill_stream(d, <float*>cnp.PyArray_DATA(out), n, key, offset, p0, p1, top,
                                start)
    elif out.dtype == "float64":
        with nogil:
            over = _fill_stream(d, <double*>cnp.PyArray_DATA(out), n, key, offset, p0, p1, top,
                                start)
    else:
        raise TypeError(f"fill_stream: unsupported output dtype {out.dtype}")
    if over == 0:
        return None
    return _worst_sample(d, n, key, offset, p0, p1, top, start)


# ---- bounded integers ------------------------------------------------------------------------
def randint(cnp.ndarray out, uint64_t key, uint64_t offset, object low, object high):
    """Fill int32/int64 ``out`` with integers uniform on [low, high) (Python ints; the caller
    checks low < high and that both fit the dtype)."""
    _check_out(out, "randint")
    cdef int out64
    if out.dtype == "int64":
        out64 = 1
    elif out.dtype == "int32":
        out64 = 0
    else:
        raise TypeError(f"randint: unsupported output dtype {out.dtype}")
    span = high - low
    if not 1 <= span <= (TWO64 if out64 else TWO32):
        raise ValueError(f"randint: bad range [{low}, {high}) for {out.dtype}")
    cdef uint64_t low_u = low % TWO64
    cdef uint64_t range64 = span % TWO64            # 0 stands for 2^64
    cdef uint32_t range32 = span % TWO32            # 0 stands for 2^32
    # 2^w mod span: Lemire's rejection threshold for w-bit draws (Python ints, no overflow)
    cdef uint64_t threshold64 = TWO64 % span
    cdef uint32_t threshold32 = TWO32 % span if span <= TWO32 else 0
    cdef int wide = span > TWO32
    cdef idx_t n = cnp.PyArray_SIZE(out), per = CHUNK_WORDS >> wide, ch
    cdef idx_t nchunks = (n + per - 1) // per
    cdef void* o = cnp.PyArray_DATA(out)
    if n >= PARALLEL_MIN and nchunks > 1:
        for ch in prange(nchunks, nogil=True, schedule="dynamic", chunksize=4):
            if wide:
                mx_randint64_chunk(<int64_t*>o, ch * per, min(per, n - ch * per), key, offset,
                                   range64, threshold64, low_u)
            else:
                mx_randint32_chunk(o, out64, ch * per, min(per, n - ch * per), key, offset,
                                   range32, threshold32, low_u)
    else:
        with nogil:
            for ch in range(nchunks):
                if wide:
                    mx_randint64_chunk(<int64_t*>o, ch * per, min(per, n - ch * per), key,
                                       offset, range64, threshold64, low_u)
                else:
                    mx_randint32_chunk(o, out64, ch * per, min(per, n - ch * per), key,
                                       offset, range32, threshold32, low_u)


# ---- multinomial -----------------------------------------------------------------------------
cdef int _check_probs(cnp.ndarray probs, cnp.ndarray cum) except -1:
    for a, name in ((probs, "probs"), (cum, "cum")):
        if a.dtype != "float64" or not cnp.PyArray_IS_C_CONTIGUOUS(a) or a.ndim != 2:
            raise TypeError(f"multinomial: {name} must be C-contiguous 2-d float64")
    if (<object>cum).shape != (<object>probs).shape:
        raise ValueError("multinomial: cum must have the shape of probs")
    return 0


def multinomial_cumsum(cnp.ndarray probs, cnp.ndarray cum):
    """Running sums of each row of float64 ``probs`` (rows, k) into ``cum``. Returns the
    first invalid row (negative, NaN or infinite entry, or zero total), or -1."""
    _check_probs(probs, cum)
    cdef idx_t rows = probs.shape[0], k = probs.shape[1], r, bad = -1
    cdef const double* p = <const double*>cnp.PyArray_DATA(probs)
    cdef double* c = <double*>cnp.PyArray_DATA(cum)
    if k == 0:
        return -1 if rows == 0 else 0
    with nogil:
        for r in range(rows):
            if mx_multinomial_cumsum(p + r * k, c + r * k, k):
                bad = r
                break
    return bad


def multinomial_draw(cnp.ndarray probs, cnp.ndarray cum, cnp.ndarray index, cnp.ndarray logp,
                     uint64_t key, uint64_t offset, idx_t first, idx_t per_row):
    """Samples ``first .. first + index.size`` of a call drawing ``per_row`` categories from
    each row of ``probs`` (``cum`` from multinomial_cumsum): sample s is drawn from row
    s // per_row by the 64-bit draw s (words W[2s], W[2s + 1]) into int64 ``index``, with
    log(p / row total) into float64 ``logp`` (same size; None: not computed). A call may draw
    its samples in any number of pieces."""
    _check_probs(probs, cum)
    _check_out(index, "multinomial")
    if index.dtype != "int64":
        raise TypeError("multinomial: index must be int64")
    if logp is not None:
        _check_out(logp, "multinomial")
        if logp.dtype != "float64" or index.size != logp.size:
            raise TypeError("multinomial: logp must be float64 of index's size")
    cdef idx_t rows = probs.shape[0], k = probs.shape[1], n = cnp.PyArray_SIZE(index), ch
    if n == 0:
        return
    if k == 0 or per_row <= 0 or first < 0 or first + n > rows * per_row:
        raise ValueError("multinomial: bad shapes")
    cdef const double* p = <const double*>cnp.PyArray_DATA(probs)
    cdef const double* c = <const double*>cnp.PyArray_DATA(cum)
    cdef int64_t* idx = <int64_t*>cnp.PyArray_DATA(index)
    cdef double* lp = <double*>cnp.PyArray_DATA(logp) if logp is not None else NULL
    # chunks of CHUNK_LANES samples aligned on the call's sample numbers: one mx_philox_lanes
    # call gives each chunk's draws
    cdef idx_t c0 = first // CHUNK_LANES, c1 = (first + n - 1) // CHUNK_LANES + 1
    if n >= PARALLEL_MIN // 4 and c1 - c0 > 1:
        for ch in prange(c0, c1, nogil=True, schedule="static"):
            _multinomial_chunk(p, c, idx, lp, ch, first, n, per_row, k, key, offset)
    else:
        with nogil:
            for ch in range(c0, c1):
                _multinomial_chunk(p, c, idx, lp, ch, first, n, per_row, k, key, offset)


def multinomial(cnp.ndarray probs, cnp.ndarray cum, cnp.ndarray index, cnp.ndarray logp,
                uint64_t key, uint64_t offset):
    """Draw ``index.size // rows`` categories from each row of float64 ``probs`` (rows, k).

    ``cum``: float64 scratch of probs' shape; ``index``: int64 (rows * samples); ``logp``:
    float64, same size, gets log(p / row total). Sample s reads words W[2s], W[2s + 1].
    Returns the first invalid row (negative, NaN or infinite entry, or zero total), or -1.
    """
    _check_probs(probs, cum)
    cdef idx_t rows = probs.shape[0], total = cnp.PyArray_SIZE(index)
    if rows == 0 or total == 0:
        return -1
    if probs.shape[1] == 0 or total % rows:
        raise ValueError("multinomial: bad shapes")
    bad = multinomial_cumsum(probs, cum)
    if bad >= 0:
        return bad
    multinomial_draw(probs, cum, index, logp, key, offset, 0, total // rows)
    return -1


cdef void _multinomial_chunk(const double* p, const double* c, int64_t* idx, double* lp,
                             idx_t ch, idx_t first, idx_t n, idx_t per_row, idx_t k,
                             uint64_t key, uint64_t offset) noexcept nogil:
    """The samples of chunk ``ch`` (call samples ch * CHUNK_LANES ..) that the piece
    [first, first + n) holds; lane j of the chunk is the 64-bit draw of its sample j."""
    cdef uint64_t lanes[CHUNK_LANES]
    cdef idx_t g0 = ch * CHUNK_LANES
    cdef idx_t g = g0 if g0 > first else first
    cdef idx_t end = g0 + CHUNK_LANES if g0 + CHUNK_LANES < first + n else first + n
    cdef idx_t r = g // per_row, left = (r + 1) * per_row - g    # samples left in row r
    mx_philox_lanes(key, offset, <uint64_t>g0 >> 1, lanes)
    while g < end:
        if left == 0:
            r += 1
            left = per_row
        if lp != NULL:
            idx[g - first] = mx_multinomial_draw(p + r * k, c + r * k, k, lanes[g - g0],
                                                 &lp[g - first])
        else:
            idx[g - first] = mx_multinomial_pick(p + r * k, c + r * k, k, lanes[g - g0])
        g += 1
        left -= 1


# ---- shuffle ---------------------------------------------------------------------------------
def permutation(cnp.ndarray perm, uint64_t key, uint64_t offset):
    """A uniformly random permutation of 0 .. n-1 into int64 ``perm`` (Fisher-Yates).

    Step j swaps position j with j + d_j, d_j uniform on [0, n - j) drawn by element j; the
    draws are independent, so they are computed in parallel, then the swaps run in order.
    """
    if perm.dtype != "int64":
        raise TypeError("permutation: perm must be int64")
    _check_out(perm, "permutation")
    cdef idx_t n = cnp.PyArray_SIZE(perm), j
    cdef cnp.ndarray draws = cnp.PyArray_EMPTY(1, &n, cnp.NPY_INT64, 0)
    cdef int64_t* d = <int64_t*>cnp.PyArray_DATA(draws)
    cdef int64_t* p = <int64_t*>cnp.PyArray_DATA(perm)
    if n >= PARALLEL_MIN // 4:
        for j in prange(n, nogil=True, schedule="static"):
            d[j] = <int64_t>mx_bounded64(key, offset, <uint64_t>j, <uint64_t>(n - j))
    else:
        with nogil:
            for j in range(n):
                d[j] = <int64_t>mx_bounded64(key, offset, <uint64_t>j, <uint64_t>(n - j))
    with nogil:
        mx_fisher_yates(p, d, n)


def take_rows(cnp.ndarray src, cnp.ndarray dst, cnp.ndarray perm):
    """dst[i] = src[perm[i]] along the first axis (C-contiguous, same shape and dtype)."""
    if src.dtype != dst.dtype or (<object>src).shape != (<object>dst).shape:
        raise ValueError("take_rows: src and dst must have the same shape and dtype")
    if not (cnp.PyArray_IS_C_CONTIGUOUS(src) and cnp.PyArray_IS_C_CONTIGUOUS(dst)):
        raise ValueError("take_rows: arrays must be C-contiguous")
    cdef idx_t n = src.shape[0] if src.ndim else 1, i
    if perm.dtype != "int64" or cnp.PyArray_SIZE(perm) != n:
        raise ValueError("take_rows: perm must be int64 with one entry per row")
    cdef const int64_t* p = <const int64_t*>cnp.PyArray_DATA(perm)
    for i in range(n):
        if not 0 <= p[i] < n:
            raise ValueError("take_rows: perm entry out of range")
    cdef idx_t row = (cnp.PyArray_NBYTES(src) // n) if n else 0
    cdef const char* s = <const char*>cnp.PyArray_DATA(src)
    cdef char* d = <char*>cnp.PyArray_DATA(dst)
    if n * row >= PARALLEL_MIN * 4 and n > 1:
        for i in prange(n, nogil=True, schedule="static"):
            memcpy(d + i * row, s + p[i] * row, row)
    else:
        with nogil:
            for i in range(n):
                memcpy(d + i * row, s + p[i] * row, row)


# ---- distinct draws in draw order (_sample_unique_zipfian) -----------------------------------
cdef enum:
    DISTINCT_EMPTY = -1           # a free slot of a hash table (the draws are >= 0)


cdef inline bint _distinct_row(int64_t* table, int bits, int64_t* order, int64_t need,
                               int64_t* held, int64_t* tries, const int64_t* d,
                               idx_t width) noexcept nogil:
    """Take draws ``d[0:width]`` in order into one row: each value not yet in ``table``
    (open addressing, linear probing, 2**bits slots, more than ``need``) is inserted and
    appended to ``order``, until ``need`` are held. ``tries`` counts the draws taken.
    Returns True on a negative draw (the row is left as it was up to it)."""
    cdef idx_t i
    cdef uint64_t mask = (<uint64_t>1 << bits) - 1, slot
    cdef int64_t v, h = held[0]
    cdef bint rc = False
    for i in range(width):
        if h >= need:
            break
        v = d[i]
        if v < 0:
            rc = True
            break
        # Fibonacci hashing: the top bits of v times 2**64 / golden ratio, so that the many
        # small classes of a Zipfian draw spread over the whole table
        slot = (<uint64_t>v * <uint64_t>0x9E3779B97F4A7C15ULL) >> (64 - bits)
        while table[slot] != DISTINCT_EMPTY and table[slot] != v:
            slot = (slot + 1) & mask
        tries[0] += 1
        if table[slot] == DISTINCT_EMPTY:
            table[slot] = v
            order[h] = v
            h += 1
    held[0] = h
    return rc


def distinct_table_bits(int64_t need):
    """log2 of the hash-table size ``distinct_rows`` wants for rows of ``need`` values: the
    least power of two above 1.5 * need (the table is at most 2/3 full)."""
    if need < 0:
        raise ValueError(f"distinct_table_bits: need must be >= 0, got {need}")
    cdef int bits = 1
    while (<int64_t>1 << bits) <= need + need // 2:
        bits += 1
    return bits


def distinct_rows(cnp.ndarray tables, cnp.ndarray order, cnp.ndarray held,
                  cnp.ndarray tries, cnp.ndarray rows, cnp.ndarray draws):
    """One round of distinct draws: row ``rows[k]`` of the int64 arrays ``tables`` (G, 2**b:
    hash sets, -1 where free, ``distinct_table_bits``), ``order`` (G, need: its distinct
    values in draw order), ``held`` and ``tries`` (G,: how many it holds, how many draws it
    took) takes the draws ``draws[k]`` (P, width; int64 >= 0) in order until it holds
    ``need``. The rows (distinct) run in parallel: each is a pure function of its draws, so
    the result is the same for any thread count. Bad arguments raise ValueError."""
    for name, a in (("tables", tables), ("order", order), ("held", held), ("tries", tries),
                    ("rows", rows), ("draws", draws)):
        if a.dtype != "int64" or not cnp.PyArray_IS_C_CONTIGUOUS(a):
            raise ValueError(f"distinct_rows: {name} must be a C-contiguous int64 array, "
                             f"got {a.dtype}")
    if tables.ndim != 2 or order.ndim != 2 or draws.ndim != 2 or rows.ndim != 1:
        raise ValueError(f"distinct_rows: tables, order, draws must be 2-D and rows 1-D, got "
                         f"{tables.ndim}, {order.ndim}, {draws.ndim}, {rows.ndim}")
    cdef idx_t g = order.shape[0], need = order.shape[1], p = rows.shape[0]
    cdef idx_t size = tables.shape[1], width = draws.shape[1], k
    cdef int bits = distinct_table_bits(need)
    if tables.shape[0] != g or size != (<idx_t>1 << bits) or held.size != g \
            or tries.size != g or draws.shape[0] != p:
        raise ValueError(f"distinct_rows: need tables ({g}, {1 << bits}), held and tries "
                         f"({g},), draws ({p}, width) for order {(g, need)} and {p} rows; got "
                         f"tables {(tables.shape[0], size)}, held {held.size}, tries "
                         f"{tries.size}, draws {(draws.shape[0], width)}")
    cdef int64_t* r = <int64_t*>cnp.PyArray_DATA(rows)
    seen = np.zeros(g, np.uint8)
    cdef unsigned char[::1] mark = seen
    for k in range(p):
        if not 0 <= r[k] < g or mark[r[k]]:
            raise ValueError(f"distinct_rows: rows must be distinct indices in [0, {g}), got "
                             f"{r[k]} at {k}")
        mark[r[k]] = 1
    cdef int64_t* t = <int64_t*>cnp.PyArray_DATA(tables)
    cdef int64_t* o = <int64_t*>cnp.PyArray_DATA(order)
    cdef int64_t* h = <int64_t*>cnp.PyArray_DATA(held)
    cdef int64_t* n = <int64_t*>cnp.PyArray_DATA(tries)
    cdef const int64_t* d = <const int64_t*>cnp.PyArray_DATA(draws)
    cdef int bad = 0
    if p > 1 and p * width >= PARALLEL_MIN:
        for k in prange(p, nogil=True, schedule="dynamic"):
            if _distinct_row(t + r[k] * size, bits, o + r[k] * need, need, h + r[k],
                             n + r[k], d + k * width, width):
                bad += 1                  # a reduction: a plain assignment is lastprivate
    else:
        with nogil:
            for k in range(p):
                if _distinct_row(t + r[k] * size, bits, o + r[k] * need, need, h + r[k],
                                 n + r[k], d + k * width, width):
                    bad += 1
    if bad:
        raise ValueError("distinct_rows: draws must be >= 0")


# ---- the affine transform of standard samples (_sample_uniform/normal/exponential) -------------
cdef extern from * nogil:
    """
    #include <string.h>

    /* float64 to float16 bits in one rounding to nearest even, as NumPy casts, without a
       branch (so that the store loop vectorizes; mx_cuda.h's exact conversion branches and
       took 7 ns an element). First to float32 rounded to odd (the nearest-even float, moved
       one step toward zero when that rounded away, then its last bit set when inexact): 24
       bits are 2 more than float16's 11, so rounding that to nearest even rounds once
       (Boldo and Melquiond, "When double rounding is odd", 2005). Then float32 to float16
       to nearest even, the normal and subnormal results both computed and one selected
       (the subnormal one by a float addition of 2**-1, which rounds the value to a multiple
       of 2**-24 in the low bits: F. Giesen's method). Selects, not ``&&`` or branches: GCC
       vectorizes that. NaN keeps its sign and top payload bits, quiet, as
       mx_double_to_half does. */
    static inline uint16_t mx_double_to_half_fast(double d) {
        float f = (float)d, xf, t;
        uint32_t u, sign, x, odd, normal, sub, tb;
        uint64_t db;
        double back = (double)f;
        memcpy(&u, &f, 4);
        u = fabs(back) > fabs(d) ? u - 1u : u;           /* one step toward zero */
        u = back != d ? u | 1u : u;                      /* inexact: round to odd */
        sign = (u >> 16) & 0x8000u;
        x = u & 0x7fffffffu;
        odd = (x >> 13) & 1u;
        normal = (x + 0xc8000fffu + odd) >> 13;          /* rebias 127 -> 15, round */
        memcpy(&xf, &x, 4);
        t = xf + 0.5f;                                   /* 2**-1: m 2**-24 in its low bits */
        memcpy(&tb, &t, 4);
        sub = tb - 0x3f000000u;
        normal = x < 0x38800000u ? sub : normal;         /* below 2**-14: subnormal */
        normal = x >= 0x47800000u ? 0x7c00u : normal;    /* 2**16 and up: inf */
        memcpy(&db, &d, 8);
        normal = d != d ? 0x7e00u | (uint32_t)((db >> 42) & 0x3ffu) : normal;
        return (uint16_t)(sign | normal);
    }
    """
    uint16_t mx_double_to_half_fast(double d)


ctypedef fused standard_t:
    float
    double


cdef inline double _affine(standard_t z, double a, double b, double top) noexcept nogil:
    """min(z b + a, top) in double: NumPy's ``t *= b; t += a; minimum(t, top)`` on the
    float64 copy of z (a NaN stays NaN, as np.minimum keeps it)."""
    cdef double v = <double>z * b + a
    return top if v > top else v


cdef void _affine_span(const standard_t* z, void* out, int kind, idx_t lo, idx_t hi,
                       double a, double b, double top) noexcept nogil:
    """Elements [lo, hi): ``kind`` 0 stores float16 (rounded once from double, as NumPy's
    cast), 1 float32, 2 float64."""
    cdef idx_t i
    if kind == 0:
        for i in range(lo, hi):
            (<uint16_t*>out)[i] = mx_double_to_half_fast(_affine(z[i], a, b, top))
    elif kind == 1:
        for i in range(lo, hi):
            (<float*>out)[i] = <float>_affine(z[i], a, b, top)
    else:
        for i in range(lo, hi):
            (<double*>out)[i] = _affine(z[i], a, b, top)


cdef void _affine_drive(const standard_t* z, void* out, int kind, idx_t n, double a, double b,
                        double top) noexcept nogil:
    cdef idx_t c, chunks = (n + CHUNK_WORDS - 1) // CHUNK_WORDS
    if n >= PARALLEL_MIN and chunks > 1:
        for c in prange(chunks, schedule="static"):
            _affine_span(z, out, kind, c * CHUNK_WORDS, min(n, (c + 1) * CHUNK_WORDS), a, b, top)
    else:
        _affine_span(z, out, kind, 0, n, a, b, top)


def affine_into(cnp.ndarray z, cnp.ndarray out, double a, double b, double top):
    """``out[i] = min(z[i] b + a, top)``, computed in double from the float32/float64 standard
    samples ``z`` and rounded once to ``out``'s dtype (float16, float32 or float64; both
    C-contiguous, of one size): ``_sample_uniform``/``normal``/``exponential``'s transform,
    bit for bit the NumPy passes it replaces. Elements in parallel chunks (each is a function
    of its own sample: any thread count gives the same bits). Bad arguments raise
    ValueError."""
    if z.dtype not in (np.float32, np.float64) or not cnp.PyArray_IS_C_CONTIGUOUS(z):
        raise ValueError(f"affine_into: z must be a C-contiguous float32 or float64 array, "
                         f"got {z.dtype}")
    kinds = {"float16": 0, "float32": 1, "float64": 2}
    if out.dtype.name not in kinds or not cnp.PyArray_IS_C_CONTIGUOUS(out) \
            or not out.flags.writeable or out.size != z.size:
        raise ValueError(f"affine_into: out must be a writeable C-contiguous float16, float32 "
                         f"or float64 array of z's {z.size} elements, got {out.dtype} of "
                         f"{out.size}")
    cdef int kind = kinds[out.dtype.name]
    cdef idx_t n = z.size
    cdef void* o = cnp.PyArray_DATA(out)
    if z.dtype == np.float32:
        with nogil:
            _affine_drive(<const float*>cnp.PyArray_DATA(z), o, kind, n, a, b, top)
    else:
        with nogil:
            _affine_drive(<const double*>cnp.PyArray_DATA(z), o, kind, n, a, b, top)


cdef void _half_span(const standard_t* x, uint16_t* out, idx_t lo, idx_t hi) noexcept nogil:
    cdef idx_t i
    for i in range(lo, hi):
        out[i] = mx_double_to_half_fast(<double>x[i])


def to_half(cnp.ndarray src, cnp.ndarray dst):
    """``dst[...] = src`` for float32/float64 ``src`` and float16 ``dst`` (C-contiguous, of one
    size), rounded once to nearest even as NumPy casts (a float32 is exact in double), in
    parallel chunks: the float16 outputs of the samplers, drawn in float32. Bad arguments
    raise ValueError."""
    if src.dtype not in (np.float32, np.float64) or not cnp.PyArray_IS_C_CONTIGUOUS(src):
        raise ValueError(f"to_half: src must be a C-contiguous float32 or float64 array, got "
                         f"{src.dtype}")
    if dst.dtype != np.float16 or not cnp.PyArray_IS_C_CONTIGUOUS(dst) \
            or not dst.flags.writeable or dst.size != src.size:
        raise ValueError(f"to_half: dst must be a writeable C-contiguous float16 array of "
                         f"src's {src.size} elements, got {dst.dtype} of {dst.size}")
    cdef idx_t n = src.size, c, chunks = (n + CHUNK_WORDS - 1) // CHUNK_WORDS
    cdef uint16_t* o = <uint16_t*>cnp.PyArray_DATA(dst)
    cdef const float* x32 = <const float*>cnp.PyArray_DATA(src)
    cdef const double* x64 = <const double*>cnp.PyArray_DATA(src)
    cdef bint wide = src.dtype == np.float64
    if n >= PARALLEL_MIN and chunks > 1:
        for c in prange(chunks, nogil=True, schedule="static"):
            if wide:
                _half_span(x64, o, c * CHUNK_WORDS, min(n, (c + 1) * CHUNK_WORDS))
            else:
                _half_span(x32, o, c * CHUNK_WORDS, min(n, (c + 1) * CHUNK_WORDS))
    else:
        with nogil:
            if wide:
                _half_span(x64, o, 0, n)
            else:
                _half_span(x32, o, 0, n)
