/* Batched small dense linear algebra on the CPU (sorting.pyx's la_small.pxi, for the
   _linalg_* operators of mxlite/ops/la.py): Cholesky factors, LU with partial pivoting,
   inverses, determinants, triangular inverses and solves of stacks of n x n matrices,
   n <= MX_LA_NMAX.

   LAPACK through numpy.linalg costs several microseconds of call overhead per small matrix
   (a 16x16 float32 inverse: ~9 us); these loops take about one. Each matrix is copied into
   a double work buffer (row-major), computed there and rounded once into the output, so a
   float32 result is at least as accurate as LAPACK's float32 one and a float64 result runs
   the same algorithm as LAPACK's (partial pivoting choosing the first largest |pivot|,
   divisions where LAPACK may multiply by a reciprocal). The inner loops are row updates
   (y -= s * x over contiguous rows), which the compiler vectorizes; the build's
   -ffp-contract=off keeps every operation separately rounded.

   Inputs and outputs are C-contiguous float (dbl == 0) or double (dbl == 1) stacks of
   `count` matrices; every matrix is read whole before its result is written, so an output
   may be its input (the operators' out=A). A kernel returns -1, or the index of the first
   matrix it could not compute (that matrix and the later ones are left unwritten); det and
   slogdet always return -1 (a singular matrix has determinant 0). */
#pragma once
#include <math.h>
#include <stdint.h>
#include "mx_simd.h"

/* Every helper is inlined into each entry point, which is compiled twice: for baseline
   x86-64 (SSE2) and for AVX2 (mx_simd.h's levels; MXLITE_SIMD=baseline keeps SSE2). The
   same operations in the same order at both: the same bits. */
#define MX_LA_INLINE static inline __attribute__((always_inline))

#define MX_LA_NMAX 64

MX_LA_INLINE double mx_la_ld(const void* p, int64_t dbl, int64_t i) {
    return dbl ? ((const double*)p)[i] : (double)((const float*)p)[i];
}

MX_LA_INLINE void mx_la_st(void* p, int64_t dbl, int64_t i, double v) {
    if (dbl)
        ((double*)p)[i] = v;
    else
        ((float*)p)[i] = (float)v;
}

/* y[0:n] -= s * x[0:n] */
MX_LA_INLINE void mx_la_axpy(double* y, const double* x, double s, int64_t n) {
    for (int64_t j = 0; j < n; j++) y[j] -= s * x[j];
}

/* y[0:n] += s * x[0:n] */
MX_LA_INLINE void mx_la_axpy_add(double* y, const double* x, double s, int64_t n) {
    for (int64_t j = 0; j < n; j++) y[j] += s * x[j];
}

/* sum x[k] y[k], k < n, in four interleaved partial sums added pairwise at the end (as
   BLAS dot kernels do): the rounding error grows as n / 4, not n. */
MX_LA_INLINE double mx_la_dot(const double* x, const double* y, int64_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += x[k] * y[k];
        s1 += x[k + 1] * y[k + 1];
        s2 += x[k + 2] * y[k + 2];
        s3 += x[k + 3] * y[k + 3];
    }
    for (; k < n; k++) s0 += x[k] * y[k];
    return (s0 + s1) + (s2 + s3);
}

/* Load matrix m of a stack into w: w[i][j] = A[i][j], or A[j][i] with trans. */
MX_LA_INLINE void mx_la_load(const void* a, int64_t dbl, int64_t m, int64_t n, int64_t trans,
                             double* w) {
    int64_t base = m * n * n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            w[i * n + j] = mx_la_ld(a, dbl, base + (trans ? (int64_t)j * n + i
                                                         : (int64_t)i * n + j));
}

MX_LA_INLINE void mx_la_store(void* o, int64_t dbl, int64_t m, int64_t n, int64_t trans,
                              const double* w) {
    int64_t base = m * n * n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            mx_la_st(o, dbl, base + (trans ? (int64_t)j * n + i : (int64_t)i * n + j),
                     w[i * n + j]);
}

/* LU with partial pivoting of the row-major w in place (PA = LU, unit L below the
   diagonal): piv[k] is the row exchanged with row k at step k, *sign the permutation's
   sign. Returns 0, or 1 when a pivot column is exactly zero (the matrix is singular;
   factoring stops there). A NaN never wins the pivot search, so a NaN column keeps its
   diagonal and the NaN spreads, as in LAPACK. */
MX_LA_INLINE int64_t mx_la_lu(double* w, int64_t n, int64_t* piv, int64_t* sign) {
    *sign = 1;
    for (int64_t k = 0; k < n; k++) {
        int64_t p = k;
        double best = fabs(w[k * n + k]);
        for (int64_t i = k + 1; i < n; i++) {
            double v = fabs(w[i * n + k]);
            if (v > best) {
                best = v;
                p = i;
            }
        }
        piv[k] = p;
        if (p != k) {
            *sign = -*sign;
            for (int64_t j = 0; j < n; j++) {
                double t = w[k * n + j];
                w[k * n + j] = w[p * n + j];
                w[p * n + j] = t;
            }
        }
        double d = w[k * n + k];
        if (d == 0.0)
            return 1;
        for (int64_t i = k + 1; i < n; i++) {
            double l = w[i * n + k] / d;
            w[i * n + k] = l;
            mx_la_axpy(w + i * n + k + 1, w + k * n + k + 1, l, n - k - 1);
        }
    }
    return 0;
}

/* inverse: out[m] = A[m]^-1 (LU, then the n right-hand sides of the identity). */
MX_LA_INLINE int64_t mx_la_inverse_body(const void* a, void* out, int64_t dbl, int64_t count,
                                        int64_t n) {
    double w[MX_LA_NMAX * MX_LA_NMAX], x[MX_LA_NMAX * MX_LA_NMAX];
    int64_t piv[MX_LA_NMAX], sign;
    for (int64_t m = 0; m < count; m++) {
        mx_la_load(a, dbl, m, n, 0, w);
        if (mx_la_lu(w, n, piv, &sign))
            return m;
        for (int64_t i = 0; i < n * n; i++) x[i] = 0.0;
        for (int64_t i = 0; i < n; i++) x[i * n + i] = 1.0;
        for (int64_t k = 0; k < n; k++)              /* x = P I: the same row exchanges */
            if (piv[k] != k)
                for (int64_t j = 0; j < n; j++) {
                    double t = x[k * n + j];
                    x[k * n + j] = x[piv[k] * n + j];
                    x[piv[k] * n + j] = t;
                }
        for (int64_t k = 0; k < n; k++)              /* L y = P I */
            for (int64_t i = k + 1; i < n; i++)
                mx_la_axpy(x + i * n, x + k * n, w[i * n + k], n);
        for (int64_t k = n - 1; k >= 0; k--) {       /* U x = y */
            double d = w[k * n + k];
            for (int64_t j = 0; j < n; j++) x[k * n + j] /= d;
            for (int64_t i = 0; i < k; i++)
                mx_la_axpy(x + i * n, x + k * n, w[i * n + k], n);
        }
        mx_la_store(out, dbl, m, n, 0, x);
    }
    return -1;
}

/* The product of the LU pivots (with the permutation's sign) as mantissa and exponent:
   sign * |det| = *mant * 2***expo, *mant in [0.5, 1) (or 0, inf, NaN), so no
   intermediate product overflows or underflows. *sign is -1, 1 (0 when singular). Signs
   are taken with `< 0` as numpy.linalg.slogdet does (a NaN pivot keeps the sign). */
MX_LA_INLINE void mx_la_det_parts(double* w, int64_t n, int64_t* piv, double* mant, int64_t* expo,
                            int64_t* sign) {
    int64_t s;
    *expo = 0;
    if (mx_la_lu(w, n, piv, &s)) {
        *sign = 0;
        *mant = 0.0;
        return;
    }
    double p = 1.0;
    for (int64_t k = 0; k < n; k++) {
        double d = w[k * n + k];
        if (d < 0) {
            s = -s;
            d = -d;
        }
        int e, ed;                         /* frexp's exponents (the C library's int) */
        d = frexp(d, &ed);                 /* p * d in [0.25, 1): never under/overflows */
        p = frexp(p * d, &e);
        *expo += e + ed;
    }
    *sign = s;
    *mant = p;
}

/* det: out[m] = det(A[m]), rounded once from the exact-range product of the pivots. */
MX_LA_INLINE int64_t mx_la_det_body(const void* a, void* out, int64_t dbl, int64_t count,
                                    int64_t n) {
    double w[MX_LA_NMAX * MX_LA_NMAX], mant;
    int64_t piv[MX_LA_NMAX], expo, sign;
    for (int64_t m = 0; m < count; m++) {
        mx_la_load(a, dbl, m, n, 0, w);
        mx_la_det_parts(w, n, piv, &mant, &expo, &sign);
        double v = ldexp(mant, expo);
        mx_la_st(out, dbl, m, sign < 0 ? -v : v);
    }
    return -1;
}

/* slogdet: sign[m] and logabs[m] = log|det A[m]| (sign 0 and -inf when singular). The
   logarithm is log(mantissa) + expo * ln 2 with ln 2 split in two (the high part times
   expo is exact), so it is not a sum of n rounded logarithms. */
MX_LA_INLINE int64_t mx_la_slogdet_body(const void* a, void* sign_out, void* log_out, int64_t dbl,
                          int64_t count, int64_t n) {
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    double w[MX_LA_NMAX * MX_LA_NMAX], mant;
    int64_t piv[MX_LA_NMAX], expo, sign;
    for (int64_t m = 0; m < count; m++) {
        mx_la_load(a, dbl, m, n, 0, w);
        mx_la_det_parts(w, n, piv, &mant, &expo, &sign);
        mx_la_st(sign_out, dbl, m, (double)sign);
        mx_la_st(log_out, dbl, m, sign == 0 ? -INFINITY
                 : expo * ln2_hi + (log(mant) + expo * ln2_lo));
    }
    return -1;
}

/* Cholesky of the symmetric matrix in w's lower triangle, in place: w = L (zeros above).
   Returns 1 when a pivot a_jj - sum L_jk^2 is not > 0 (or NaN): not positive definite, as
   LAPACK's potrf decides. */
MX_LA_INLINE int64_t mx_la_chol(double* w, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        const double* lj = w + j * n;
        for (int64_t i = j; i < n; i++) {
            double* li = w + i * n;
            double s = li[j] - mx_la_dot(li, lj, j);
            if (i == j) {
                if (!(s > 0.0))
                    return 1;
                li[j] = sqrt(s);
            } else {
                li[j] = s / lj[j];
            }
        }
        for (int64_t k = j + 1; k < n; k++) w[j * n + k] = 0.0;
    }
    return 0;
}

/* potrf: L of A = L L^T from A's lower triangle (lower), or U = L^T of A = U^T U from
   A's upper triangle. */
MX_LA_INLINE int64_t mx_la_potrf_body(const void* a, void* out, int64_t dbl, int64_t count,
                                      int64_t n,
                           int64_t lower) {
    double w[MX_LA_NMAX * MX_LA_NMAX];
    for (int64_t m = 0; m < count; m++) {
        mx_la_load(a, dbl, m, n, !lower, w);
        if (mx_la_chol(w, n))
            return m;
        mx_la_store(out, dbl, m, n, !lower, w);
    }
    return -1;
}

/* x = L^-1 for the lower triangle of w (zeros above), row by row: row i of x is
   (e_i - sum_{k<i} L_ik x_k) / L_ii. Returns 1 when a diagonal element is zero. */
MX_LA_INLINE int64_t mx_la_tri_inverse(const double* w, int64_t n, double* x) {
    for (int64_t i = 0; i < n; i++)
        if (w[i * n + i] == 0.0)
            return 1;
    for (int64_t i = 0; i < n * n; i++) x[i] = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double* xi = x + i * n;
        xi[i] = 1.0;
        for (int64_t k = 0; k < i; k++)
            mx_la_axpy(xi, x + k * n, w[i * n + k], k + 1);
        double d = w[i * n + i];
        for (int64_t j = 0; j <= i; j++) xi[j] /= d;
    }
    return 0;
}

/* potri: (L L^T)^-1 = X^T X with X = L^-1, L the lower triangle of A (lower), or the
   transpose of its upper triangle U ((U^T U)^-1 is the same expression). The sum for
   (i, j) and for (j, i) adds the same products in the same order: the result is exactly
   symmetric. */
MX_LA_INLINE int64_t mx_la_potri_body(const void* a, void* out, int64_t dbl, int64_t count,
                                      int64_t n,
                           int64_t lower) {
    double w[MX_LA_NMAX * MX_LA_NMAX], x[MX_LA_NMAX * MX_LA_NMAX];
    for (int64_t m = 0; m < count; m++) {
        mx_la_load(a, dbl, m, n, !lower, w);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++) w[i * n + j] = 0.0;
        if (mx_la_tri_inverse(w, n, x))
            return m;
        for (int64_t i = 0; i < n * n; i++) w[i] = 0.0;         /* w = X^T X */
        for (int64_t k = 0; k < n; k++) {
            const double* xk = x + k * n;
            for (int64_t i = 0; i <= k; i++)
                mx_la_axpy_add(w + i * n, xk, xk[i], k + 1);
        }
        mx_la_store(out, dbl, m, n, 0, w);
    }
    return -1;
}

/* trsm: solve op(T) X = alpha B (B r x c, op(T) r x r), or X op(T) = alpha B with
   rightside (op(T) c x c), T the lower (upper) triangle of A, op = transpose or not.
   Both are M Y = alpha Z with M = op(T) (op(T)^T on the right side) and Z = B (B^T):
   the columns of Z are solved a panel of up to MX_LA_NMAX at a time by row updates.
   Returns the first matrix whose triangle has a zero on its diagonal. */
MX_LA_INLINE int64_t mx_la_trsm_body(const void* a, const void* b, void* out, int64_t dbl,
                                     int64_t count,
                          int64_t r, int64_t c, int64_t transpose, int64_t rightside, int64_t lower,
                          double alpha) {
    double w[MX_LA_NMAX * MX_LA_NMAX], z[MX_LA_NMAX * MX_LA_NMAX];
    int64_t n = (int64_t)(rightside ? c : r);               /* the order of the triangle */
    int64_t nz = rightside ? r : c;                 /* columns of Z */
    int64_t trans = transpose ^ rightside;              /* M = T^T */
    int64_t mlower = lower ^ trans;                     /* M is lower triangular */
    for (int64_t m = 0; m < count; m++) {
        mx_la_load(a, dbl, m, n, trans, w);
        for (int64_t i = 0; i < n; i++)
            if (w[i * n + i] == 0.0)
                return m;
        int64_t base = m * r * c;
        for (int64_t c0 = 0; c0 < nz; c0 += MX_LA_NMAX) {
            int64_t pw = (int64_t)(nz - c0 < MX_LA_NMAX ? nz - c0 : MX_LA_NMAX);
            for (int64_t i = 0; i < n; i++)                 /* z[i][j] = alpha Z[i][c0 + j] */
                for (int64_t j = 0; j < pw; j++)
                    z[i * pw + j] = alpha * mx_la_ld(b, dbl, base + (rightside
                                    ? (c0 + j) * c + i : i * c + c0 + j));
            for (int64_t t = 0; t < n; t++) {
                int64_t i = mlower ? t : n - 1 - t;         /* rows in substitution order */
                double* zi = z + i * pw;
                if (mlower)
                    for (int64_t k = 0; k < i; k++) mx_la_axpy(zi, z + k * pw, w[i * n + k], pw);
                else
                    for (int64_t k = n - 1; k > i; k--)
                        mx_la_axpy(zi, z + k * pw, w[i * n + k], pw);
                double d = w[i * n + i];
                for (int64_t j = 0; j < pw; j++) zi[j] /= d;
            }
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < pw; j++)
                    mx_la_st(out, dbl, base + (rightside ? (c0 + j) * c + i : i * c + c0 + j),
                             z[i * pw + j]);
        }
    }
    return -1;
}


/* ---- entry points: the bodies at the module's SIMD level -------------------------------- */
/* 1 when the AVX2 copies run (mx_simd.h's level for this module, read once). */
static int64_t mx_la_avx2(void) {
    static int64_t level = -1;
    if (level < 0) level = mx_simd_default();
    return level >= 1;
}

#define MX_LA_ENTRY(name, params, args)                                                    \
    MX_TARGET_1 static int64_t name##_l1 params { return name##_body args; }               \
    static int64_t name##_l0 params { return name##_body args; }                           \
    static int64_t name params { return mx_la_avx2() ? name##_l1 args : name##_l0 args; }

MX_LA_ENTRY(mx_la_inverse, (const void* a, void* out, int64_t dbl, int64_t count, int64_t n),
            (a, out, dbl, count, n))
MX_LA_ENTRY(mx_la_det, (const void* a, void* out, int64_t dbl, int64_t count, int64_t n),
            (a, out, dbl, count, n))
MX_LA_ENTRY(mx_la_slogdet, (const void* a, void* sign_out, void* log_out, int64_t dbl,
                            int64_t count, int64_t n),
            (a, sign_out, log_out, dbl, count, n))
MX_LA_ENTRY(mx_la_potrf, (const void* a, void* out, int64_t dbl, int64_t count, int64_t n,
            int64_t lower),
            (a, out, dbl, count, n, lower))
MX_LA_ENTRY(mx_la_potri, (const void* a, void* out, int64_t dbl, int64_t count, int64_t n,
            int64_t lower),
            (a, out, dbl, count, n, lower))
MX_LA_ENTRY(mx_la_trsm, (const void* a, const void* b, void* out, int64_t dbl, int64_t count,
                         int64_t r, int64_t c, int64_t transpose, int64_t rightside, int64_t lower,
                         double alpha),
            (a, b, out, dbl, count, r, c, transpose, rightside, lower, alpha))
