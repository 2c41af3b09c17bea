// Scalar rules of the index and sorting operators, shared by the Cython kernels
// (index.pyx.in, sorting.pyx: compiled as C) and the CUDA kernels (mxlite/cuda/ops): how an
// index of any dtype becomes a position on an axis under a mode, and smooth_l1's formula.
// Plain C, so that C and C++ extensions, nvcc and NVRTC all compile it.
#pragma once
#include "mx_stdint.h"
#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

#ifdef __CUDACC__
#define MX_INDEX_FN __host__ __device__ inline
#else
#define MX_INDEX_FN static inline
#endif

// The out-of-range rules (MODES of index.pyx.in): clip to [0, n-1], wrap modulo n, raise
// (out of range is invalid) and drop (invalid, meant to be skipped: one_hot's all-off row).
#define MX_MODE_CLIP 0
#define MX_MODE_WRAP 1
#define MX_MODE_RAISE 2
#define MX_MODE_DROP 3
#define MX_INDEX_MAX ((int64_t)0x7fffffffffffffffLL)

// Position of integer index j on an axis of size n under mode; -1 when invalid.
MX_INDEX_FN int64_t mx_index_position(int64_t j, int64_t n, int mode) {
    if (j >= 0 && j < n) return j;
    if (n == 0 || mode == MX_MODE_RAISE || mode == MX_MODE_DROP) return -1;
    if (mode == MX_MODE_CLIP) return j < 0 ? 0 : n - 1;
    int64_t r = j % n;                  // C remainder: the sign of j
    return r < 0 ? r + n : r;
}

// A float index: truncated toward zero (MXNet's cast), saturated to int64; NaN is invalid.
MX_INDEX_FN int64_t mx_float_index_position(double v, int64_t n, int mode) {
    if (v != v) return -1;
    if (v >= 9.223372036854775808e18) return mx_index_position(MX_INDEX_MAX, n, mode);
    if (v < -9.223372036854775808e18) return mx_index_position(-MX_INDEX_MAX - 1, n, mode);
    return mx_index_position((int64_t)v, n, mode);
}

// smooth_l1 with sigma2 = sigma^2, in double: 0.5 sigma2 x^2 where sigma2 |x| < 1, else
// |x| - 0.5 / sigma2.
MX_INDEX_FN double mx_smooth_l1(double v, double sigma2) {
    double a = fabs(v);
    return a * sigma2 < 1.0 ? 0.5 * sigma2 * v * v : a - 0.5 / sigma2;
}
