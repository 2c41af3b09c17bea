/* The hue rotation of the random colour operators (mxlite/ops/image.py's _hue) over a span
   of interleaved RGB pixels, for colour.pxi. Plain C so that the compiler vectorizes it:
   every data-dependent choice is a select of two computed values (no short-circuit
   operator, no branch), and NaN is handled by a final select, as NumPy's NaN-propagating
   maximum would have spread it.

   The arithmetic is the NumPy path's, operation for operation in T (built with
   -ffp-contract=off: no fused multiply-add), so the results are its bits:
     vmax, vmin    the largest and smallest channel (NumPy's maximum/minimum: the first of
                   equal values; a pixel holding NaN is all NaN, see below)
     diff          vmax - vmin; chroma = diff > eps (else grey, no hue)
     hue           (g - b) [r largest], (b - r) + 2 diff [g largest, r not], (r - g) + 4 diff
                   [b], each times its 0/1 flag and summed in that order, / (diff + grey),
                   + shift (6 * turns - 2)
     channel c     d = hue + 2 - 2c wrapped to [-3, 3] (d - 6 rint(d / 6)), then
                   vmin' + diff' * clip(2 - |d|, 0, 1) with vmin' = vmin + diff * 0.5 * grey,
                   diff' = diff * chroma
   rint is the branch-free round to nearest even of resample.pyx (adding and subtracting
   2**23, 2**52 for double, with the value's sign); a zero it returns may have the other
   sign, which |d| removes. A pixel with a NaN channel: NumPy's maximum makes every
   intermediate NaN, so its three outputs are NaN (here r + g + b, a NaN). */
#ifndef MX_COLOUR_H
#define MX_COLOUR_H
#include <math.h>
#include <stdint.h>

#define MX_COLOUR_TILE 256      /* pixels deinterleaved at a time (3 KiB of float32) */

/* The pixels of one tile, as three planes: a loop over planes vectorizes, one over
   interleaved RGB triples of this many operations does not (GCC 12). */
#define MX_HUE_TILE(NAME, T, BIG, ABS, COPYSIGN)                                             \
static inline void NAME(T* __restrict R, T* __restrict G, T* __restrict B, int64_t m, T shift,     \
                        T eps) {                                                             \
    const T sixth = (T)(1.0 / 6.0);                                                          \
    for (int64_t i = 0; i < m; i++) {                                                        \
        T r = R[i], g = G[i], b = B[i];                                                      \
        T mx = r >= g ? r : g, vmax = mx >= b ? mx : b;                                      \
        T mn = r <= g ? r : g, vmin = mn <= b ? mn : b;                                      \
        T diff = vmax - vmin;                                                                \
        T chroma = diff > eps ? (T)1 : (T)0, grey = (T)1 - chroma;                           \
        T rt = vmax == r ? (T)1 : (T)0;                                                      \
        T gt = (vmax == g) & (vmax != r) ? (T)1 : (T)0;                                      \
        T bt = (T)1 - (rt + gt);                                                             \
        T hue = (g - b) * rt;                                                                \
        hue = hue + ((b - r) + (T)2 * diff) * gt;                                            \
        hue = hue + ((r - g) + (T)4 * diff) * bt;                                            \
        hue = hue / (diff + grey);                                                           \
        hue = hue + shift;                                                                   \
        vmin = vmin + diff * (T)0.5 * grey;                                                  \
        diff = diff * chroma;                                                                \
        T nan = r + g + b, out[3];                                                           \
        for (int c = 0; c < 3; c++) {                                                        \
            T d = hue + (T)(2 - 2 * c);                                                      \
            T q = d * sixth, s = COPYSIGN(BIG, q);                                           \
            T rq = ABS(q) >= BIG ? q : (q + s) - s;                                          \
            d = d - rq * (T)6;                                                               \
            T t = (T)2 - ABS(d);                                                             \
            t = t < (T)0 ? (T)0 : t;        /* NumPy's clip: NaN stays NaN */                \
            t = t > (T)1 ? (T)1 : t;                                                         \
            T v = t * diff + vmin;                                                           \
            out[c] = nan != nan ? nan : v;                                                   \
        }                                                                                    \
        R[i] = out[0];                                                                       \
        G[i] = out[1];                                                                       \
        B[i] = out[2];                                                                       \
    }                                                                                        \
}

#define MX_HUE_SPAN(NAME, TILE, T)                                                           \
static void NAME(T* p, int64_t lo, int64_t hi, T shift, T eps) {                             \
    T R[MX_COLOUR_TILE], G[MX_COLOUR_TILE], B[MX_COLOUR_TILE];                               \
    for (int64_t t0 = lo; t0 < hi; t0 += MX_COLOUR_TILE) {                                   \
        int64_t m = hi - t0 < MX_COLOUR_TILE ? hi - t0 : MX_COLOUR_TILE;                     \
        T* q = p + 3 * t0;                                                                   \
        for (int64_t i = 0; i < m; i++) {                                                    \
            R[i] = q[3 * i];                                                                 \
            G[i] = q[3 * i + 1];                                                             \
            B[i] = q[3 * i + 2];                                                             \
        }                                                                                    \
        TILE(R, G, B, m, shift, eps);                                                        \
        for (int64_t i = 0; i < m; i++) {                                                    \
            q[3 * i] = R[i];                                                                 \
            q[3 * i + 1] = G[i];                                                             \
            q[3 * i + 2] = B[i];                                                             \
        }                                                                                    \
    }                                                                                        \
}

MX_HUE_TILE(mx_hue_tile_f32, float, 8388608.0f, fabsf, copysignf)
MX_HUE_TILE(mx_hue_tile_f64, double, 4503599627370496.0, fabs, copysign)
MX_HUE_SPAN(mx_hue_span_f32, mx_hue_tile_f32, float)
MX_HUE_SPAN(mx_hue_span_f64, mx_hue_tile_f64, double)

#endif
