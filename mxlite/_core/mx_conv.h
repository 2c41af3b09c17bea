// The geometry of the convolution-family CUDA kernels (mxlite/cuda/ops/conv.py, pooling.py):
// the CPU kernels' Geom of conv.pyx as a record passed by value. Every kernel works on 3
// spatial axes (D, H, W); 1-D and 2-D calls pass leading axes of size 1 (kernel 1, stride 1,
// pad 0, dilation 1), so one loop nest serves NCW, NCHW and NCDHW.
#pragma once
#include "mx_math.h"

struct mx_conv_geom {
    long long N, C;
    long long in[3], out[3], kernel[3], stride[3], pad[3], dilate[3];
};

// The volumes of the input plane, the output plane and the kernel window.
MX_FN long long mx_conv_vi(const mx_conv_geom& g) { return g.in[0] * g.in[1] * g.in[2]; }
MX_FN long long mx_conv_vo(const mx_conv_geom& g) { return g.out[0] * g.out[1] * g.out[2]; }
MX_FN long long mx_conv_vk(const mx_conv_geom& g) {
    return g.kernel[0] * g.kernel[1] * g.kernel[2];
}

// The outputs w of axis a whose window [w * stride - pad, + kernel) holds input position z:
// [*lo, *hi) (empty when none).
MX_FN void mx_conv_windows_of(const mx_conv_geom& g, int a, long long z, long long* lo,
                              long long* hi) {
    long long s = g.stride[a], first = z + g.pad[a] - g.kernel[a] + 1, last = z + g.pad[a];
    long long w0 = first <= 0 ? 0 : (first + s - 1) / s;
    long long w1 = last < 0 ? -1 : last / s;
    if (w1 > g.out[a] - 1) w1 = g.out[a] - 1;
    *lo = w0;
    *hi = w1 + 1 > w0 ? w1 + 1 : w0;
}

// ---- pooling (the rules of conv.pyx's pool kernels) --------------------------------------
// Window w of a plane covers [w * stride - pad, + kernel) on each axis, clipped to the input.
#define MX_POOL_MAX 0
#define MX_POOL_AVG 1
#define MX_POOL_SUM 2
#define MX_POOL_LP 3

// The window of output (od, oh, ow) clipped to the input: [lo[a], hi[a]) per axis.
MX_FN void mx_pool_window(const mx_conv_geom& g, const long long* o, long long* lo,
                          long long* hi) {
    for (int a = 0; a < 3; a++) {
        long long start = o[a] * g.stride[a] - g.pad[a], end = start + g.kernel[a];
        lo[a] = start > 0 ? start : 0;
        hi[a] = end < g.in[a] ? end : g.in[a];
    }
}

// Flat index in the plane of the window's first maximum; -1 for an empty window (NaN never
// replaces an earlier element, as on the CPU).
template <typename T>
MX_FN long long mx_pool_argmax(const T* x, const mx_conv_geom& g, const long long* o) {
    long long lo[3], hi[3], best = -1;
    mx_pool_window(g, o, lo, hi);
    T m = 0;
    for (long long z = lo[0]; z < hi[0]; z++)
        for (long long y = lo[1]; y < hi[1]; y++)
            for (long long xx = lo[2]; xx < hi[2]; xx++) {
                long long t = (z * g.in[1] + y) * g.in[2] + xx;
                T v = x[t];
                if (best < 0 || v > m || (v != v && m == m)) { best = t; m = v; }  // NaN wins
            }
    return best;
}

// 1 for sum and lp; 1 / (the window's element count) for avg, the window clipped to the
// padded input (count_include_pad) or to the input itself; 0 for an empty window.
MX_FN double mx_pool_scale(const mx_conv_geom& g, const long long* o, int mode,
                           int include_pad) {
    if (mode != MX_POOL_AVG) return 1;
    long long count = 1;
    for (int a = 0; a < 3; a++) {
        long long start = o[a] * g.stride[a] - g.pad[a], end = start + g.kernel[a];
        long long pend = g.in[a] + g.pad[a];
        end = end < pend ? end : pend;
        if (include_pad) {
            count *= end - start;
        } else {
            long long lo = start > 0 ? start : 0, hi = end < g.in[a] ? end : g.in[a];
            count *= hi - lo;
        }
    }
    return count > 0 ? 1.0 / count : 0.0;
}

// lp pooling: v ** p (p in 1, 2, 3; signed) and its inverse (cube root keeps the sign).
template <typename T> MX_FN T mx_pool_power(T v, int p) {
    return p == 1 ? v : (p == 2 ? v * v : v * v * v);
}
template <typename T> MX_FN T mx_pool_root(T v, int p) {
    return p == 1 ? v : (T)(p == 2 ? mx::sqrt((double)v) : mx::cbrt((double)v));
}

// The output position (od, oh, ow) of flat index w of an output plane.
MX_FN void mx_conv_out_pos(const mx_conv_geom& g, long long w, long long* o) {
    o[2] = w % g.out[2];
    o[1] = (w / g.out[2]) % g.out[1];
    o[0] = w / (g.out[2] * g.out[1]);
}
