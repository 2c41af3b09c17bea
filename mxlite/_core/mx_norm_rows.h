// Contiguous-row kernels of the normalisations on the CPU (norm.pyx): LayerNorm's rows (the
// statistics and the affine pass in one sweep while the row is in cache) and the row sums
// and output of _norm_project. A float32 row's sums are mx_norm.h's lane sums (16 float
// lanes per block of MX_NORM_BLOCK, blocks added in double), run here in four SSE
// registers: each lane adds the same values in the same order as mx_norm.h's scalar code,
// which the GPU runs, so both devices round alike. (Written with intrinsics: GCC keeps a
// 16-float array in scalar registers once the loop is inlined into a large unit.) float64
// rows use mx_norm.h's double sums unchanged.
#pragma once
#include "mx_norm.h"
#include "mx_simd.h"

#if defined(__SSE2__)
#include <emmintrin.h>
typedef __m128 mx_f4;
static inline mx_f4 mx_load4(const float* p) { return _mm_loadu_ps(p); }
static inline void mx_store4(float* p, mx_f4 v) { _mm_storeu_ps(p, v); }
static inline mx_f4 mx_set4(float v) { return _mm_set1_ps(v); }
static inline mx_f4 mx_add4(mx_f4 a, mx_f4 b) { return _mm_add_ps(a, b); }
static inline mx_f4 mx_sub4(mx_f4 a, mx_f4 b) { return _mm_sub_ps(a, b); }
static inline mx_f4 mx_mul4(mx_f4 a, mx_f4 b) { return _mm_mul_ps(a, b); }
#else
struct mx_f4 { float v[4]; };
static inline mx_f4 mx_load4(const float* p) {
    mx_f4 o;
    for (int j = 0; j < 4; j++) o.v[j] = p[j];
    return o;
}
static inline void mx_store4(float* p, mx_f4 v) {
    for (int j = 0; j < 4; j++) p[j] = v.v[j];
}
static inline mx_f4 mx_set4(float s) {
    mx_f4 o;
    for (int j = 0; j < 4; j++) o.v[j] = s;
    return o;
}
static inline mx_f4 mx_add4(mx_f4 a, mx_f4 b) {
    for (int j = 0; j < 4; j++) a.v[j] += b.v[j];
    return a;
}
static inline mx_f4 mx_sub4(mx_f4 a, mx_f4 b) {
    for (int j = 0; j < 4; j++) a.v[j] -= b.v[j];
    return a;
}
static inline mx_f4 mx_mul4(mx_f4 a, mx_f4 b) {
    for (int j = 0; j < 4; j++) a.v[j] *= b.v[j];
    return a;
}
#endif

// 16 float lanes: lane j of a block of 16 elements is register j / 4, element j % 4.
struct mx_lanes16 {
    mx_f4 r[4];
    mx_lanes16() { r[0] = r[1] = r[2] = r[3] = mx_set4(0.0f); }
    // the lanes (and the scalar tail) combined as mx_norm.h's mx_norm_lanes_total
    float total(float tail) const {
        float a[16];
        for (int k = 0; k < 4; k++) mx_store4(a + 4 * k, r[k]);
        return mx_norm_lanes_total(a, tail);
    }
};

// ---- AVX2: the same 16 lanes in two 8-wide registers (lane j in register j / 8), the same
// operations per element: bit for bit the SSE results, chosen at run time (mx_simd.h's
// level, MXLITE_SIMD=baseline keeps SSE). -ffp-contract=off: no FMA at either level.
#if MX_SIMD_X86 && defined(__SSE2__)
#include <immintrin.h>
#define MX_ROWS_AVX2 1
#define MX_AVX2 __attribute__((target("avx2")))

// 1 when the AVX2 bodies run (the module's SIMD level, read once).
static inline bool mx_rows_avx2(void) {
    static int level = -1;
    if (level < 0) level = mx_simd_default();
    return level >= 1;
}

// The 16 lanes' total (mx_norm_lanes_total) of two 8-wide registers and a scalar tail.
MX_AVX2 static inline float mx_total8(__m256 a0, __m256 a1, float tail) {
    float a[16];
    _mm256_storeu_ps(a, a0);
    _mm256_storeu_ps(a + 8, a1);
    return mx_norm_lanes_total(a, tail);
}

MX_AVX2 static double mx_rows_sum_avx2(const float* x, int64_t n, float shift) {
    double total = 0.0;
    const __m256 sh = _mm256_set1_ps(shift);
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float t = 0.0f;
        for (; i + 16 <= end; i += 16) {
            a0 = _mm256_add_ps(a0, _mm256_sub_ps(_mm256_loadu_ps(x + i), sh));
            a1 = _mm256_add_ps(a1, _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), sh));
        }
        for (; i < end; i++) t += x[i] - shift;
        total += (double)mx_total8(a0, a1, t);
    }
    return total;
}

MX_AVX2 static double mx_rows_ssd_avx2(const float* x, int64_t n, float m) {
    double total = 0.0;
    const __m256 mv = _mm256_set1_ps(m);
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        float t = 0.0f, d;
        for (; i + 16 <= end; i += 16) {
            __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv);
            __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mv);
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(d0, d0));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(d1, d1));
        }
        for (; i < end; i++) {
            d = x[i] - m;
            t += d * d;
        }
        total += (double)mx_total8(a0, a1, t);
    }
    return total;
}

// y = mx_norm_xhat(x, m, rs) * gamma + beta over a row.
MX_AVX2 static void mx_rows_affine_avx2(const float* x, int64_t n, float m, float rs,
                                        const float* gamma, const float* beta, float* y) {
    const __m256 mv = _mm256_set1_ps(m), rv = _mm256_set1_ps(rs);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 h = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv), rv);
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_mul_ps(h, _mm256_loadu_ps(gamma + i)),
                                              _mm256_loadu_ps(beta + i)));
    }
    for (; i < n; i++) y[i] = mx_norm_xhat(x[i], m, rs) * gamma[i] + beta[i];
}

// mx_rows_layer_norm_grad's float32 row (below), 8 at a time.
MX_AVX2 static void mx_rows_layer_norm_grad_avx2(const float* gy, const float* x,
                                                 const float* gamma, int64_t n, float m,
                                                 float rs, float a, float b, float* dgp,
                                                 float* dbp, float* dx) {
    const __m256 mv = _mm256_set1_ps(m), rv = _mm256_set1_ps(rs);
    double sg = 0.0, sgx = 0.0;
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        __m256 lg[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        __m256 lgx[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        float tg = 0.0f, tgx = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int k = 0; k < 2; k++) {
                int64_t j = i + 8 * k;
                __m256 g = _mm256_loadu_ps(gy + j);
                __m256 h = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), mv), rv);
                __m256 gg = _mm256_mul_ps(g, _mm256_loadu_ps(gamma + j));
                lg[k] = _mm256_add_ps(lg[k], gg);
                lgx[k] = _mm256_add_ps(lgx[k], _mm256_mul_ps(gg, h));
                _mm256_storeu_ps(dgp + j, _mm256_add_ps(_mm256_loadu_ps(dgp + j),
                                                        _mm256_mul_ps(g, h)));
                _mm256_storeu_ps(dbp + j, _mm256_add_ps(_mm256_loadu_ps(dbp + j), g));
            }
        for (; i < end; i++) {
            float h = mx_norm_xhat(x[i], m, rs), gg = gy[i] * gamma[i];
            tg += gg;
            tgx += gg * h;
            dgp[i] += gy[i] * h;
            dbp[i] += gy[i];
        }
        sg += (double)mx_total8(lg[0], lg[1], tg);
        sgx += (double)mx_total8(lgx[0], lgx[1], tgx);
    }
    float mg = (float)(n > 0 ? sg / (double)n : 0.0);
    float mgx = (float)(n > 0 ? sgx / (double)n : 0.0);
    const __m256 av = _mm256_set1_ps(a), bv = _mm256_set1_ps(b);
    const __m256 mgv = _mm256_set1_ps(mg), mgxv = _mm256_set1_ps(mgx);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 h = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv), rv);
        __m256 gg = _mm256_mul_ps(_mm256_loadu_ps(gy + i), _mm256_loadu_ps(gamma + i));
        __m256 inner = _mm256_add_ps(mgv, _mm256_mul_ps(h, mgxv));
        __m256 o = _mm256_add_ps(_mm256_mul_ps(rv, _mm256_sub_ps(gg, inner)),
                                 _mm256_mul_ps(h, av));
        _mm256_storeu_ps(dx + i, _mm256_add_ps(o, bv));
    }
    for (; i < n; i++) {
        float h = mx_norm_xhat(x[i], m, rs);
        dx[i] = mx_norm_project(rs, gy[i] * gamma[i], 1.0f, mg, h, mgx, a, b);
    }
}

// mx_rows_sums2's float32 row (below), 8 at a time.
MX_AVX2 static void mx_rows_sums2_avx2(const float* g, const float* xh, int64_t n,
                                       double* sg, double* sgx) {
    double rg = 0.0, rgx = 0.0;
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        __m256 a[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        __m256 b[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        float ta = 0.0f, tb = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int k = 0; k < 2; k++) {
                __m256 gv = _mm256_loadu_ps(g + i + 8 * k);
                a[k] = _mm256_add_ps(a[k], gv);
                b[k] = _mm256_add_ps(b[k], _mm256_mul_ps(gv, _mm256_loadu_ps(xh + i + 8 * k)));
            }
        for (; i < end; i++) {
            ta += g[i];
            tb += g[i] * xh[i];
        }
        rg += (double)mx_total8(a[0], a[1], ta);
        rgx += (double)mx_total8(b[0], b[1], tb);
    }
    *sg += rg;
    *sgx += rgx;
}

// mx_rows_project_out (below), 8 at a time.
MX_AVX2 static void mx_rows_project_out_avx2(const float* g, const float* xh, int64_t n,
                                             float r, float t, float mg, float mgx, float a,
                                             float b, float* out) {
    const __m256 rv = _mm256_set1_ps(r), tv = _mm256_set1_ps(t), av = _mm256_set1_ps(a);
    const __m256 bv = _mm256_set1_ps(b), mgv = _mm256_set1_ps(mg), mgxv = _mm256_set1_ps(mgx);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 gv = _mm256_loadu_ps(g + i), xv = _mm256_loadu_ps(xh + i);
        __m256 inner = _mm256_mul_ps(tv, _mm256_add_ps(mgv, _mm256_mul_ps(xv, mgxv)));
        __m256 o = _mm256_add_ps(_mm256_mul_ps(rv, _mm256_sub_ps(gv, inner)),
                                 _mm256_mul_ps(xv, av));
        _mm256_storeu_ps(out + i, _mm256_add_ps(o, bv));
    }
    for (; i < n; i++) out[i] = mx_norm_project(r, g[i], t, mg, xh[i], mgx, a, b);
}
#else
#define MX_ROWS_AVX2 0
static inline bool mx_rows_avx2(void) { return 0; }
#endif

// mx_norm_lanes_sum: sum(x - shift) of a float32 row.
static inline double mx_rows_sum(const float* x, int64_t n, float shift) {
    double total = 0.0;
    const mx_f4 sh = mx_set4(shift);
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        mx_lanes16 l;
        float t = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int k = 0; k < 4; k++)
                l.r[k] = mx_add4(l.r[k], mx_sub4(mx_load4(x + i + 4 * k), sh));
        for (; i < end; i++) t += x[i] - shift;
        total += (double)l.total(t);
    }
    return total;
}

// mx_norm_lanes_ssd: sum((x - m)^2) of a float32 row.
static inline double mx_rows_ssd(const float* x, int64_t n, float m) {
    double total = 0.0;
    const mx_f4 mv = mx_set4(m);
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        mx_lanes16 l;
        float t = 0.0f, d;
        for (; i + 16 <= end; i += 16)
            for (int k = 0; k < 4; k++) {
                mx_f4 dv = mx_sub4(mx_load4(x + i + 4 * k), mv);
                l.r[k] = mx_add4(l.r[k], mx_mul4(dv, dv));
            }
        for (; i < end; i++) {
            d = x[i] - m;
            t += d * d;
        }
        total += (double)l.total(t);
    }
    return total;
}

// mx_norm_lanes_sums2: *sg += sum(g), *sgx += sum(g * xh) of a row.
static void mx_rows_sums2(const float* g, const float* xh, int64_t n, double* sg,
                          double* sgx) {
#if MX_ROWS_AVX2
    if (mx_rows_avx2()) {
        mx_rows_sums2_avx2(g, xh, n, sg, sgx);
        return;
    }
#endif
    double rg = 0.0, rgx = 0.0;
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        mx_lanes16 a, b;
        float ta = 0.0f, tb = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int k = 0; k < 4; k++) {
                mx_f4 gv = mx_load4(g + i + 4 * k);
                a.r[k] = mx_add4(a.r[k], gv);
                b.r[k] = mx_add4(b.r[k], mx_mul4(gv, mx_load4(xh + i + 4 * k)));
            }
        for (; i < end; i++) {
            ta += g[i];
            tb += g[i] * xh[i];
        }
        rg += (double)a.total(ta);
        rgx += (double)b.total(tb);
    }
    *sg += rg;
    *sgx += rgx;
}
static void mx_rows_sums2(const double* g, const double* xh, int64_t n, double* sg,
                          double* sgx) {
    mx_norm_row_sums2(g, xh, n, sg, sgx);
}

// mx_norm_row_stats of a row: mean, std = sqrt(var + eps), rstd = 1 / std.
static inline void mx_rows_stats(const float* x, int64_t n, double eps, float* mean,
                                 float* std, float* rstd) {
    float shift = n > 0 ? x[0] : 0.0f;
#if MX_ROWS_AVX2
    const bool wide = mx_rows_avx2();
    double m = mx_norm_lanes_mean(wide ? mx_rows_sum_avx2(x, n, shift) : mx_rows_sum(x, n, shift),
                                  shift, n);
    float mt = (float)m;
    double v = mx_norm_lanes_var(wide ? mx_rows_ssd_avx2(x, n, mt) : mx_rows_ssd(x, n, mt), m,
                                 mt, n);
#else
    double m = mx_norm_lanes_mean(mx_rows_sum(x, n, shift), shift, n);
    float mt = (float)m;
    double v = mx_norm_lanes_var(mx_rows_ssd(x, n, mt), m, mt, n);
#endif
    *mean = mt;
    *std = (float)mx_norm_finish(v, eps, 0);
    *rstd = (float)mx_norm_finish(v, eps, 1);
}
static inline void mx_rows_stats(const double* x, int64_t n, double eps, double* mean,
                                 double* std, double* rstd) {
    mx_norm_row_stats(x, n, eps, mean, std, rstd);
}

// One LayerNorm row: its statistics, then y = mx_norm_xhat(x, mean, rstd) * gamma + beta.
template <typename T>
static void mx_rows_layer_norm(const T* x, int64_t n, const T* gamma, const T* beta,
                               double eps, T* y, T* mean, T* std) {
    T rs;
    mx_rows_stats(x, n, eps, mean, std, &rs);
    const T m = *mean;
#if MX_ROWS_AVX2
    if (sizeof(T) == sizeof(float) && mx_rows_avx2()) {
        mx_rows_affine_avx2((const float*)x, n, (float)m, (float)rs, (const float*)gamma,
                            (const float*)beta, (float*)y);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) y[i] = mx_norm_xhat(x[i], m, rs) * gamma[i] + beta[i];
}

// _norm_project's output over n float32 elements given the group's means mg = mean(g),
// mgx = mean(g * xh) (mx_norm.h's mx_norm_project, four elements at a time in the same
// order of operations): out = r * (g - t * (mg + xh * mgx)) + xh * a + b.
static void mx_rows_project_out(const float* g, const float* xh, int64_t n, float r, float t,
                                float mg, float mgx, float a, float b, float* out) {
#if MX_ROWS_AVX2
    if (mx_rows_avx2()) {
        mx_rows_project_out_avx2(g, xh, n, r, t, mg, mgx, a, b, out);
        return;
    }
#endif
    const mx_f4 rv = mx_set4(r), tv = mx_set4(t), av = mx_set4(a), bv = mx_set4(b);
    const mx_f4 mgv = mx_set4(mg), mgxv = mx_set4(mgx);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        mx_f4 gv = mx_load4(g + i), xv = mx_load4(xh + i);
        mx_f4 inner = mx_mul4(tv, mx_add4(mgv, mx_mul4(xv, mgxv)));
        mx_store4(out + i,
                  mx_add4(mx_add4(mx_mul4(rv, mx_sub4(gv, inner)), mx_mul4(xv, av)), bv));
    }
    for (; i < n; i++) out[i] = mx_norm_project(r, g[i], t, mg, xh[i], mgx, a, b);
}

// _norm_project over one float32 row: its two means, then its output.
static void mx_rows_project(const float* g, const float* xh, int64_t n, float r, float t,
                            float a, float b, float* out) {
    double sg = 0.0, sgx = 0.0;
    mx_rows_sums2(g, xh, n, &sg, &sgx);
    float mg = (float)(n > 0 ? sg / (double)n : 0.0);
    float mgx = (float)(n > 0 ? sgx / (double)n : 0.0);
    mx_rows_project_out(g, xh, n, r, t, mg, mgx, a, b, out);
}

static void mx_rows_project(const double* g, const double* xh, int64_t n, double r, double t,
                            double a, double b, double* out) {
    double sg = 0.0, sgx = 0.0;
    mx_rows_sums2(g, xh, n, &sg, &sgx);
    double mg = n > 0 ? sg / (double)n : 0.0, mgx = n > 0 ? sgx / (double)n : 0.0;
    for (int64_t i = 0; i < n; i++) out[i] = mx_norm_project(r, g[i], t, mg, xh[i], mgx, a, b);
}

// One row of LayerNorm's fused backward (_layer_norm_grad), with xh = (x - m) * rs and
// G = gy * gamma: gy * xh and gy added to the partial column sums dgp and dbp, then
// dx = rs * (G - mean(G) - xh * mean(G * xh)) + xh * a + b (_norm_project's row, flag 1).
// A float32 row takes two sweeps and no scratch (xh and G unused): the first adds G and
// G * xh in 16 lanes per block (blocks in double) and the column partials, the second
// recomputes xh and G and writes dx.
static void mx_rows_layer_norm_grad(const float* gy, const float* x, const float* gamma,
                                    int64_t n, float m, float rs, float a, float b, float* xh,
                                    float* G, float* dgp, float* dbp, float* dx) {
    (void)xh;
    (void)G;
#if MX_ROWS_AVX2
    if (mx_rows_avx2()) {
        mx_rows_layer_norm_grad_avx2(gy, x, gamma, n, m, rs, a, b, dgp, dbp, dx);
        return;
    }
#endif
    const mx_f4 mv = mx_set4(m), rv = mx_set4(rs);
    double sg = 0.0, sgx = 0.0;
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        mx_lanes16 lg, lgx;
        float tg = 0.0f, tgx = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int k = 0; k < 4; k++) {
                int64_t j = i + 4 * k;
                mx_f4 g = mx_load4(gy + j), h = mx_mul4(mx_sub4(mx_load4(x + j), mv), rv);
                mx_f4 gg = mx_mul4(g, mx_load4(gamma + j));
                lg.r[k] = mx_add4(lg.r[k], gg);
                lgx.r[k] = mx_add4(lgx.r[k], mx_mul4(gg, h));
                mx_store4(dgp + j, mx_add4(mx_load4(dgp + j), mx_mul4(g, h)));
                mx_store4(dbp + j, mx_add4(mx_load4(dbp + j), g));
            }
        for (; i < end; i++) {
            float h = mx_norm_xhat(x[i], m, rs), gg = gy[i] * gamma[i];
            tg += gg;
            tgx += gg * h;
            dgp[i] += gy[i] * h;
            dbp[i] += gy[i];
        }
        sg += (double)lg.total(tg);
        sgx += (double)lgx.total(tgx);
    }
    float mg = (float)(n > 0 ? sg / (double)n : 0.0);
    float mgx = (float)(n > 0 ? sgx / (double)n : 0.0);
    const mx_f4 av = mx_set4(a), bv = mx_set4(b), mgv = mx_set4(mg), mgxv = mx_set4(mgx);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        mx_f4 h = mx_mul4(mx_sub4(mx_load4(x + i), mv), rv);
        mx_f4 gg = mx_mul4(mx_load4(gy + i), mx_load4(gamma + i));
        mx_f4 inner = mx_add4(mgv, mx_mul4(h, mgxv));
        mx_store4(dx + i, mx_add4(mx_add4(mx_mul4(rv, mx_sub4(gg, inner)), mx_mul4(h, av)), bv));
    }
    for (; i < n; i++) {
        float h = mx_norm_xhat(x[i], m, rs);
        dx[i] = mx_norm_project(rs, gy[i] * gamma[i], 1.0f, mg, h, mgx, a, b);
    }
}
// A float64 row: xh and G into the scratch rows, then _norm_project's row.
template <typename T>
static void mx_rows_layer_norm_grad(const T* gy, const T* x, const T* gamma, int64_t n, T m,
                                    T rs, T a, T b, T* xh, T* G, T* dgp, T* dbp, T* dx) {
    for (int64_t i = 0; i < n; i++) {
        T h = mx_norm_xhat(x[i], m, rs);
        xh[i] = h;
        G[i] = gy[i] * gamma[i];
        dgp[i] += gy[i] * h;
        dbp[i] += gy[i];
    }
    mx_rows_project(G, xh, n, rs, (T)1, a, b, dx);
}
