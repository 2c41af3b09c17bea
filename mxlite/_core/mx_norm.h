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
