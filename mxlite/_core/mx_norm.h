// The formulas of the normalisation kernels, shared by norm.pyx (host C++) and the CUDA
// kernels (mxlite/cuda/ops/norm.py): row sums in double with four accumulators (lane
// i mod 4 of the elements before the last full group of four, the rest to lane 0, combined
// (a0 + a1) + (a2 + a3): a fixed order, so both devices round alike), the statistics'
// finishing steps and the affine and projection formulas.
#pragma once
#include "mx_math.h"

// Sum of a contiguous row, in double.
template <typename T> MX_FN double mx_norm_row_sum(const T* row, int64_t n) {
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += row[i];
        a1 += row[i + 1];
        a2 += row[i + 2];
        a3 += row[i + 3];
    }
    for (; i < n; i++) a0 += row[i];
    return (a0 + a1) + (a2 + a3);
}

// Sum of squared deviations from m of a contiguous row, in double.
template <typename T> MX_FN double mx_norm_row_ssd(const T* row, int64_t n, double m) {
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, d0, d1, d2, d3;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        d0 = row[i] - m;
        d1 = row[i + 1] - m;
        d2 = row[i + 2] - m;
        d3 = row[i + 3] - m;
        a0 += d0 * d0;
        a1 += d1 * d1;
        a2 += d2 * d2;
        a3 += d3 * d3;
    }
    for (; i < n; i++) {
        d0 = row[i] - m;
        a0 += d0 * d0;
    }
    return (a0 + a1) + (a2 + a3);
}

// *sg += sum(g), *sgx += sum(g * xh) of contiguous rows, in double.
template <typename T>
MX_FN void mx_norm_row_sums2(const T* g, const T* xh, int64_t n, double* sg, double* sgx) {
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += g[i];
        a1 += g[i + 1];
        a2 += g[i + 2];
        a3 += g[i + 3];
        b0 += (double)g[i] * xh[i];
        b1 += (double)g[i + 1] * xh[i + 1];
        b2 += (double)g[i + 2] * xh[i + 2];
        b3 += (double)g[i + 3] * xh[i + 3];
    }
    for (; i < n; i++) {
        a0 += g[i];
        b0 += (double)g[i] * xh[i];
    }
    *sg += (a0 + a1) + (a2 + a3);
    *sgx += (b0 + b1) + (b2 + b3);
}

// A variance (or sum of squares) v made 1 / sqrt(v + eps) (inverse) or sqrt(v + eps).
MX_FN double mx_norm_finish(double v, double eps, int inverse) {
    return inverse ? 1.0 / mx::sqrt(v + eps) : mx::sqrt(v + eps);
}

// A moving statistic updated with a batch one.
MX_FN double mx_norm_ema(double moving, double batch, double momentum) {
    return momentum * moving + (1.0 - momentum) * batch;
}

// The normalised value (x - mean) * scale.
template <typename T> MX_FN T mx_norm_xhat(T x, T mean, T scale) { return (x - mean) * scale; }

// _norm_project's output r (g - t (mean(g) + xhat mean(g xhat))) + xhat a + b, in T for
// the contiguous-row and channel layouts (S = T) or with double statistics (S = double).
template <typename T, typename S>
MX_FN T mx_norm_project(T r, T g, S t, S mg, T xh, S mgx, T a, T b) {
    return (T)(r * (g - t * (mg + xh * mgx)) + xh * a + b);
}

// ---- float32 rows in lanes (LayerNorm's statistics, _norm_project's row sums) ----------------
// A float32 row is summed in 16 float lanes (element i of a block to lane i mod 16, the tail
// of fewer than 16 to a scalar added to lane 0, lanes combined in a fixed tree) over blocks
// of MX_NORM_BLOCK elements, each block's total added to a double: the CPU runs the lanes
// in SIMD registers (mx_norm_rows.h) and rounds exactly as this scalar code, which the GPU
// runs. A lane adds at most 16 float32 values before its block moves to double. float64
// rows keep the double sums above.
#define MX_NORM_BLOCK 256

MX_FN float mx_norm_lanes_total(const float* a, float tail) {
    float s[8];
    for (int j = 0; j < 8; j++) s[j] = (j == 0 ? a[0] + tail : a[j]) + a[j + 8];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

MX_FN int64_t mx_norm_block_end(int64_t i, int64_t n) {
    return n - i > MX_NORM_BLOCK ? i + MX_NORM_BLOCK : n;
}

// sum(x - shift) of a float32 row.
MX_FN double mx_norm_lanes_sum(const float* x, int64_t n, float shift) {
    double total = 0.0;
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        float a[16] = {0.0f}, t = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int j = 0; j < 16; j++) a[j] += x[i + j] - shift;
        for (; i < end; i++) t += x[i] - shift;
        total += (double)mx_norm_lanes_total(a, t);
    }
    return total;
}

// sum((x - m)^2) of a float32 row.
MX_FN double mx_norm_lanes_ssd(const float* x, int64_t n, float m) {
    double total = 0.0;
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        float a[16] = {0.0f}, t = 0.0f, d;
        for (; i + 16 <= end; i += 16)
            for (int j = 0; j < 16; j++) {
                d = x[i + j] - m;
                a[j] += d * d;
            }
        for (; i < end; i++) {
            d = x[i] - m;
            t += d * d;
        }
        total += (double)mx_norm_lanes_total(a, t);
    }
    return total;
}

// *sg += sum(g), *sgx += sum(g * xh): float32 rows in lanes, float64 rows as above.
MX_FN void mx_norm_lanes_sums2(const float* g, const float* xh, int64_t n, double* sg,
                               double* sgx) {
    double rg = 0.0, rgx = 0.0;         // the row's totals, added to *sg, *sgx once
    for (int64_t i = 0; i < n;) {
        int64_t end = mx_norm_block_end(i, n);
        float a[16] = {0.0f}, b[16] = {0.0f}, ta = 0.0f, tb = 0.0f;
        for (; i + 16 <= end; i += 16)
            for (int j = 0; j < 16; j++) {
                a[j] += g[i + j];
                b[j] += g[i + j] * xh[i + j];
            }
        for (; i < end; i++) {
            ta += g[i];
            tb += g[i] * xh[i];
        }
        rg += (double)mx_norm_lanes_total(a, ta);
        rgx += (double)mx_norm_lanes_total(b, tb);
    }
    *sg += rg;
    *sgx += rgx;
}
MX_FN void mx_norm_lanes_sums2(const double* g, const double* xh, int64_t n, double* sg,
                               double* sgx) {
    mx_norm_row_sums2(g, xh, n, sg, sgx);
}

// A LayerNorm row's statistics from its sums: the mean (in double) of a float32 row summed
// as deviations from its first element (a large common offset costs no float32 precision)
// and the variance from the squared deviations about the float32 mean mt, corrected by
// the distance of mt from the exact mean: sum((x - mt)^2) = sum((x - m)^2) + n (m - mt)^2.
MX_FN double mx_norm_lanes_mean(double sum_dev, float shift, int64_t n) {
    return n > 0 ? (double)shift + sum_dev / (double)n : 0.0;
}
MX_FN double mx_norm_lanes_var(double ssd, double m, float mt, int64_t n) {
    double v = n > 0 ? ssd / (double)n - (m - mt) * (m - mt) : 0.0;
    return v > 0.0 ? v : 0.0;
}

// mean, std = sqrt(var + eps) and 1 / std of one LayerNorm row of n elements.
MX_FN void mx_norm_row_stats(const float* x, int64_t n, double eps, float* mean, float* std,
                             float* rstd) {
    float shift = n > 0 ? x[0] : 0.0f;
    double m = mx_norm_lanes_mean(mx_norm_lanes_sum(x, n, shift), shift, n);
    float mt = (float)m;
    double v = mx_norm_lanes_var(mx_norm_lanes_ssd(x, n, mt), m, mt, n);
    *mean = mt;
    *std = (float)mx_norm_finish(v, eps, 0);
    *rstd = (float)mx_norm_finish(v, eps, 1);
}
MX_FN void mx_norm_row_stats(const double* x, int64_t n, double eps, double* mean,
                             double* std, double* rstd) {
    double m = n > 0 ? mx_norm_row_sum(x, n) / (double)n : 0.0;
    double v = n > 0 ? mx_norm_row_ssd(x, n, m) / (double)n : 0.0;
    *mean = m;
    *std = mx_norm_finish(v, eps, 0);
    *rstd = mx_norm_finish(v, eps, 1);
}
