// Scalar helpers used by the element-wise expression table (kernel_table.py), shared by the
// Cython (host C++) and CUDA kernels (nvcc and NVRTC). MX_FN marks functions callable on both.
// Expressions call math through mx:: (mx::sin, mx::pow, ...): std:: on the host, the CUDA
// math library on the device (NVRTC has no <cmath> and no std::sin).
#pragma once
#include "mx_stdint.h"
#if defined(__CUDACC_RTC__)
#include <cuda/std/limits>
#include <cuda/std/type_traits>
namespace mx_std = cuda::std;
#else
#include <cmath>
#include <cstdint>
#include <string.h>
#include <limits>
#include <type_traits>
namespace mx_std = std;
#endif

#ifdef __CUDACC__
#define MX_FN __host__ __device__ inline
#else
#define MX_FN static inline
#endif
// The helpers written to vectorize: always inlined, so the loops calling them vectorize even
// where GCC's inlining budget for the unit is spent
#ifdef __CUDACC__
#define MX_VFN __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define MX_VFN static inline __attribute__((always_inline))
#else
#define MX_VFN static inline
#endif

namespace mx {

// ---- math functions, one name on every compiler -----------------------------------------
#ifdef __CUDACC__
#define MX_MATH1(fn) \
    MX_FN float fn(float x) { return ::fn##f(x); } \
    MX_FN double fn(double x) { return ::fn(x); }
#define MX_MATH2(fn) \
    MX_FN float fn(float a, float b) { return ::fn##f(a, b); } \
    MX_FN double fn(double a, double b) { return ::fn(a, b); }
#else
#define MX_MATH1(f) using std::f;
#define MX_MATH2(f) using std::f;
#endif
// bit casts: the device intrinsics on the device (no memcpy under NVRTC), memcpy elsewhere
#ifdef __CUDA_ARCH__
MX_VFN int64_t bits_of(double x) { return __double_as_longlong(x); }
MX_VFN double double_of(int64_t b) { return __longlong_as_double(b); }
MX_VFN uint32_t bits_of(float x) { return __float_as_uint(x); }
MX_VFN float float_of(uint32_t b) { return __uint_as_float(b); }
#else
MX_VFN int64_t bits_of(double x) { int64_t b; memcpy(&b, &x, sizeof b); return b; }
MX_VFN double double_of(int64_t b) { double x; memcpy(&x, &b, sizeof x); return x; }
MX_VFN uint32_t bits_of(float x) { uint32_t b; memcpy(&b, &x, sizeof b); return b; }
MX_VFN float float_of(uint32_t b) { float x; memcpy(&x, &b, sizeof x); return x; }
#endif
MX_MATH1(fabs) MX_MATH1(sqrt) MX_MATH1(cbrt) MX_MATH1(exp) MX_MATH1(expm1) MX_MATH1(log)
MX_MATH1(log2) MX_MATH1(log10) MX_MATH1(log1p) MX_MATH1(sin) MX_MATH1(cos) MX_MATH1(tan)
MX_MATH1(asin) MX_MATH1(acos) MX_MATH1(atan) MX_MATH1(sinh) MX_MATH1(cosh) MX_MATH1(asinh)
MX_MATH1(acosh) MX_MATH1(atanh) MX_MATH1(erf) MX_MATH1(tgamma) MX_MATH1(lgamma)
MX_MATH1(floor) MX_MATH1(ceil) MX_MATH1(round) MX_MATH1(trunc)
MX_MATH2(pow) MX_MATH2(fmod) MX_MATH2(copysign)
#ifdef __CUDACC__
MX_MATH2(hypot)
#else
// float32 hypot as glibc computes it (sqrt of the sum of the squares in double, which cannot
// overflow or lose the small operand; an infinite operand gives infinity, NaN included), so
// the loop vectorizes instead of calling hypotf per element; bit-identical to glibc's hypotf.
MX_VFN float hypot(float a, float b) {
    double h = std::sqrt((double)a * (double)a + (double)b * (double)b);
    return (std::fabs(a) == INFINITY || std::fabs(b) == INFINITY) ? INFINITY : (float)h;
}
MX_FN double hypot(double a, double b) { return std::hypot(a, b); }
#endif
#undef MX_MATH1
#undef MX_MATH2
}  // namespace mx

namespace mx {

// ---- exp, expm1 and the normal CDF in double precision, written to vectorize -----------
// No libm calls and no data-dependent branches (selects only), so GCC vectorizes loops over
// them (-O3 -fno-math-errno -fno-trapping-math); the float32 activations of mx_act.h and
// tanh_f32 below use them.
namespace detail {
// e^r - 1 for |r| <= ln2/2 (plus the rounding of the reduction): the Taylor series to
// degree N by Horner, r (1 + r (1/2! + r (1/3! + ... r / N!))). N = 13: truncation error
// below 4e-18 relative, so within ~1 ulp (double); N = 9: below 2e-11 (tanh_f32).
MX_FN constexpr double factorial(int n) { return n <= 1 ? 1.0 : n * factorial(n - 1); }
template <int N, int K = 1> MX_VFN double taylor_tail(double r) {
    if constexpr (K == N) return 1.0 / factorial(N);
    else return 1.0 / factorial(K) + r * taylor_tail<N, K + 1>(r);
}
template <int N> MX_VFN double expm1_taylor(double r) { return r * taylor_tail<N>(r); }
// Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, for |x| <= 2^20: returns e^r - 1 (to
// degree N) and sets k. k = round(x / ln2) from the bits of x / ln2 + 1.5 * 2^52 (no
// float-to-int conversion, which would not vectorize on AVX2); ln2 in two parts (fdlibm's
// ln2_hi has 21 trailing zero bits, so k * ln2_hi is exact).
template <int N = 13> MX_VFN double exp_reduce(double x, int64_t& k) {
    double kk = x * 1.4426950408889634 + 6755399441055744.0;
    double kd = kk - 6755399441055744.0;
    k = bits_of(kk) - 0x4338000000000000LL;
    double r = (x - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
    return expm1_taylor<N>(r);
}
// 2^k for -1022 <= k <= 1023, built in the exponent field
MX_VFN double pow2i(int64_t k) {
    int64_t bits = (k + 1023) << 52;
    return double_of(bits);
}
}  // namespace detail

// e^x for every double x: within ~1 ulp of the correctly rounded value (subnormal results
// included: 2^k is applied in two factors, the second rounding once), 0 below -745.13,
// inf above 709.78, NaN kept.
MX_VFN double exp_f64(double x) {
    double c = x < -746.0 ? -746.0 : x;
    c = c > 710.0 ? 710.0 : c;
    int64_t k;
    double p = detail::exp_reduce(c, k);
    int64_t k1 = (int64_t)((uint64_t)(k + 2048) >> 1) - 1024;   // floor(k / 2), k >= -1077
    double s1 = detail::pow2i(k1), s2 = detail::pow2i(k - k1);
    double y = (s1 + s1 * p) * s2;
    return x != x ? x : y;
}

// e^x - 1 for every double x, within ~1 ulp: 2^k (e^r - 1) + (2^k - 1), exact for small k;
// -1 below -40 (as libm: the rounding of -1 + e^x), inf above 709.78, expm1(-0) = -0,
// NaN kept.
MX_VFN double expm1_f64(double x) {
    double c = x < -40.0 ? -40.0 : x;
    c = c > 710.0 ? 710.0 : c;
    int64_t k;
    double p = detail::exp_reduce(c, k);
    int64_t k1 = (int64_t)((uint64_t)(k + 2048) >> 1) - 1024;
    double s1 = detail::pow2i(k1), s2 = detail::pow2i(k - k1), s = s1 * s2;
    double em1 = s * p + (s - 1.0);
    double big = (s1 + s1 * p) * s2;                 // k > 60: e^x (the -1 is below an ulp)
    em1 = k > 60 ? big : em1;
    em1 = x == 0.0 ? x : em1;                        // keeps the sign of zero
    return x != x ? x : em1;
}

// W. J. Cody's rational approximations of erf and erfc (below): erf(y) = y P1(y^2) /
// Q1(y^2) for y <= 0.46875, erfc(y) = e^(-y^2) P2(y) / Q2(y) for y <= 4.
namespace detail {
MX_VFN double cody_p1(double t) {
    return (((1.85777706184603153e-1 * t + 3.16112374387056560e0) * t
             + 1.13864154151050156e2) * t + 3.77485237685302021e2) * t
           + 3.20937758913846947e3;
}
MX_VFN double cody_q1(double t) {
    return (((t + 2.36012909523441209e1) * t + 2.44024637934444173e2) * t
            + 1.28261652607737228e3) * t + 2.84423683343917062e3;
}
MX_VFN double cody_p2(double y) {
    return (((((((2.15311535474403846e-8 * y + 5.64188496988670089e-1) * y
                 + 8.88314979438837594e0) * y + 6.61191906371416295e1) * y
               + 2.98635138197400131e2) * y + 8.81952221241769090e2) * y
             + 1.71204761263407058e3) * y + 2.05107837782607147e3) * y
           + 1.23033935479799725e3;
}
MX_VFN double cody_q2(double y) {
    return (((((((y + 1.57449261107098347e1) * y + 1.17693950891312499e2) * y
                + 5.37181101862009858e2) * y + 1.62138957456669019e3) * y
              + 3.29079923573345963e3) * y + 4.36261909014324716e3) * y
            + 3.43936767414372164e3) * y + 1.23033935480374942e3;
}
// 2 atanh(s) = log((1 + s) / (1 - s)) by its odd series to s^15, in T: below 2^-27 of the
// sum for |s| <= 1/3 (float32 softrelu's log1p) and 2e-12 relative for |s| <= 0.1716 (log).
template <typename T> MX_VFN T atanh2_series(T s) {
    T s2 = s * s;
    T p = (T)1 / (T)15;
    p = p * s2 + (T)1 / (T)13;
    p = p * s2 + (T)1 / (T)11;
    p = p * s2 + (T)1 / (T)9;
    p = p * s2 + (T)1 / (T)7;
    p = p * s2 + (T)1 / (T)5;
    p = p * s2 + (T)1 / (T)3;
    return ((T)2 * s) * (p * s2 + (T)1);
}
}  // namespace detail

// The standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2 with relative accuracy over the
// whole line (no 1 + erf cancellation for x < 0), given e = exp(-x * x / 2) (gelu's
// derivative needs it too; x * x is exact when x is a float). erf / erfc from
// W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
// (1969) 631-637, with the coefficients of his SPECFUN routine CALERF
// (https://www.netlib.org/specfun/erf): erf(y) = y P1(y^2) / Q1(y^2) for y <= 0.46875,
// erfc(y) = e^(-y^2) P2(y) / Q2(y) for y <= 4, and
// erfc(y) = e^(-y^2) / y (1/sqrt(pi) - P3(1/y^2) / (y^2 Q3(1/y^2))) beyond, the last
// rewritten over y^2 (numerator and denominator times y^10) so all three end in one
// division. All three are computed and the right one selected (no branches).
MX_VFN double ndtr_with_exp(double x, double e) {
    double z = x * 0.70710678118654752440, y = mx::fabs(z), t = y * y;
    // erf(z) = z n1 / d1
    double n1 = detail::cody_p1(t), d1 = detail::cody_q1(t);
    // erfc(y) e^(y^2) = n2 / d2
    double n2 = detail::cody_p2(y), d2 = detail::cody_q2(y);
    // erfc(y) e^(y^2) = (t D3 / sqrt(pi) - N3) / (t y D3) with N3, D3 polynomials in t = y^2
    // (y clamped to 100: e^(-y^2) is 0 there, and t^5 stays finite)
    double yc = y < 100.0 ? y : 100.0, tc = yc * yc;
    double n3 = ((((6.58749161529837803e-4 * tc + 1.60837851487422766e-2) * tc
                   + 1.25781726111229246e-1) * tc + 3.60344899949804439e-1) * tc
                 + 3.05326634961232344e-1) * tc + 1.63153871373020978e-2;
    double d3 = ((((2.33520497626869185e-3 * tc + 6.05183413124413191e-2) * tc
                   + 5.27905102951428412e-1) * tc + 1.87295284992346047e0) * tc
                 + 2.56852019228982242e0) * tc + 1.0;
    double num3 = 5.6418958354775628695e-1 * tc * d3 - n3, den3 = tc * yc * d3;
    bool small = y <= 0.46875, mid = y <= 4.0;
    double num = small ? z * n1 : (mid ? n2 : num3);
    double den = small ? d1 : (mid ? d2 : den3);
    double q = num / den;
    double half_erfc = 0.5 * (e * q);                // erfc(|z|) / 2
    double tail = x < 0 ? half_erfc : 1.0 - half_erfc;
    return small ? 0.5 * (1.0 + q) : tail;
}

MX_VFN double ndtr_f64(double x) { return ndtr_with_exp(x, exp_f64(-0.5 * x * x)); }

// tanh for float32 that vectorizes (glibc's tanhf is a scalar call of ~9 ns): computed in
// double as expm1(2|x|) / (expm1(2|x|) + 2), with expm1 from the reduction of expm1_f64
// above and its polynomial to degree 9 (relative error < 1e-11, so the float result is the
// correctly rounded one but for rare near-ties). |x| >= 9.1 gives +-1 (the float32
// rounding of tanh there); the sign is copied back, so tanh(-0) = -0; NaN stays NaN.
MX_VFN float tanh_f32(float xf) {
    double x = (double)xf;
    double a = mx::fabs(x);
    if (!(a <= 9.1)) a = 9.1;                       // also NaN: fixed up at the end
    int64_t k;                                      // k in [0, 27]: one factor 2^k
    double p = detail::exp_reduce<9>(2.0 * a, k);
    double s = detail::pow2i(k);
    double em1 = s * p + (s - 1.0);
    double t = mx::copysign(em1 / (em1 + 2.0), x);
    return xf != xf ? xf : (float)t;
}

MX_FN float tanh(float x) { return tanh_f32(x); }
#ifdef __CUDACC__
MX_FN double tanh(double x) { return ::tanh(x); }
#else
MX_FN double tanh(double x) { return std::tanh(x); }
#endif

// ---- float32 exp, expm1, log, log2, log10, log1p, sigmoid and erf that vectorize ----------
// glibc's float functions are scalar calls (3 to 13 ns an element here); these compute in
// double with the branch-free helpers above and round once to float, so each is the
// correctly rounded float32 value but for rare near-ties (relative error of the double
// result below 1e-11), and the element-wise loops over them vectorize. Special values as
// C99: NaN stays NaN, log(0) = -inf, log(x < 0) = NaN, log1p(-1) = -inf, erf(+-inf) = +-1.
// The double overloads (the `_v` names in kernel_table.py's expressions) are libm's.
namespace detail {
// log(x) for x > 0 finite (others give garbage, fixed by the callers' selects): x = 2^e m
// with m in [sqrt(1/2), sqrt 2) from the bits, log m = 2 atanh(s), s = (m - 1) / (m + 1),
// |s| <= 0.1716, by its odd series to s^15 (truncation below 2e-12 relative). e converts
// through the 1.5 * 2^52 trick (no int64 -> double instruction before AVX-512DQ). Returns
// log x as e ln2 + the series, or log2 x as e + series / ln 2 (exact at powers of two).
template <bool BASE2> MX_VFN double log_pos(double x) {
    bool sub = x < 2.2250738585072014e-308;                 // double subnormals: scale 2^54
    double xs = sub ? x * 18014398509481984.0 : x;
    int64_t b = bits_of(xs);
    int64_t e = ((b >> 52) & 0x7ff) - 1023 - (sub ? 54 : 0);
    double m = double_of((b & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);
    bool big = m > 1.4142135623730951;
    m = big ? 0.5 * m : m;
    e = big ? e + 1 : e;
    double ed = double_of(e + 0x4338000000000000LL) - 6755399441055744.0;
    double series = atanh2_series((m - 1.0) / (m + 1.0));
    if constexpr (BASE2) return ed + series * 1.4426950408889634;
    else return ed * 0.6931471805599453 + series;
}
// log or log2 of a double with the special values: NaN kept, 0 -> -inf, < 0 -> NaN, inf.
template <bool BASE2> MX_VFN double log_any(double x) {
    double r = log_pos<BASE2>(x);
    r = x == 0.0 ? -mx_std::numeric_limits<double>::infinity() : r;
    r = x < 0.0 ? mx_std::numeric_limits<double>::quiet_NaN() : r;
    r = x == mx_std::numeric_limits<double>::infinity() ? x : r;
    return x != x ? x : r;
}

// e^r - 1 and 2^k with e^x = 2^k e^r for x clamped to [-110, 110] (beyond, e^x, e^x - 1,
// 1 / (1 + e^-x) in float32 are 0, -1, inf or 1 already): the reduction of exp_f64 with the
// Taylor polynomial to degree 10 (truncation below 3e-13 relative) and one factor 2^k,
// |k| <= 159.
MX_VFN double exp_reduce_f32(double x, double& scale) {
    double c = x < -110.0 ? -110.0 : x;
    c = c > 110.0 ? 110.0 : c;
    int64_t k;
    double p = exp_reduce<10>(c, k);
    scale = pow2i(k);
    return p;
}
}  // namespace detail

MX_VFN float exp_v(float x) {
    double s, p = detail::exp_reduce_f32(x, s);
    return x != x ? x : (float)(s + s * p);
}
MX_VFN float expm1_v(float x) {
    double s, p = detail::exp_reduce_f32(x, s);
    double r = s * p + (s - 1.0);
    r = x == 0.0f ? (double)x : r;                   // keeps the sign of zero
    return x != x ? x : (float)r;
}
MX_VFN float log_v(float x) { return (float)detail::log_any<false>(x); }
MX_VFN float log2_v(float x) { return (float)detail::log_any<true>(x); }
MX_VFN float log10_v(float x) { return (float)(detail::log_any<false>(x) * 0.43429448190325182); }
// log(1 + x) = log(u) x / (u - 1), u = 1 + x rounded (Goldberg): exact to double rounding
// for every x > -1, u == 1 giving x itself (and so keeping -0).
MX_VFN float log1p_v(float xf) {
    double x = xf, u = 1.0 + x;
    double r = detail::log_pos<false>(u) * (x / (u - 1.0));
    r = u == 1.0 ? x : r;
    r = u == 0.0 ? -mx_std::numeric_limits<double>::infinity() : r;
    r = u < 0.0 ? mx_std::numeric_limits<double>::quiet_NaN() : r;
    r = x == mx_std::numeric_limits<double>::infinity() ? x : r;
    return xf != xf ? xf : (float)r;
}
MX_VFN float sigmoid_v(float x) {
    double s, p = detail::exp_reduce_f32(-(double)x, s);
    return x != x ? x : (float)(1.0 / (1.0 + (s + s * p)));
}
// erf by Cody's rational approximations (the coefficients of ndtr_with_exp above):
// x P1(x^2) / Q1(x^2) for |x| <= 0.46875, else sign(x) (1 - e^(-x^2) P2(|x|) / Q2(|x|)),
// |x| clamped to 4 (erf(4) rounds to 1 in float32; the clamp also takes inf).
MX_VFN float erf_v(float xf) {
    double x = xf, y = mx::fabs(x), t = y * y;
    double n1 = detail::cody_p1(t), d1 = detail::cody_q1(t);
    double yc = y < 4.0 ? y : 4.0;
    double n2 = detail::cody_p2(yc), d2 = detail::cody_q2(yc);
    bool small = y <= 0.46875;
    double q = (small ? x * n1 : n2) / (small ? d1 : d2);
    double s, p = detail::exp_reduce_f32(-(yc * yc), s);    // yc * yc is exact
    double tail = mx::copysign(1.0 - (s + s * p) * q, x);
    return xf != xf ? xf : (float)(small ? q : tail);
}
MX_FN double exp_v(double x) { return mx::exp(x); }
MX_FN double expm1_v(double x) { return mx::expm1(x); }
MX_FN double log_v(double x) { return mx::log(x); }
MX_FN double log2_v(double x) { return mx::log2(x); }
MX_FN double log10_v(double x) { return mx::log10(x); }
MX_FN double log1p_v(double x) { return mx::log1p(x); }
MX_FN double sigmoid_v(double x) { return 1.0 / (1.0 + mx::exp(-x)); }
MX_FN double erf_v(double x) { return mx::erf(x); }

// Integer division that never traps: x / 0 -> 0 (as NumPy), MIN / -1 wraps instead of SIGFPE.
template <typename T> MX_FN T int_div(T a, T b) {
    if (b == 0) return 0;
    if (mx_std::is_signed<T>::value && b == (T)-1) return (T)(0 - (typename mx_std::make_unsigned<T>::type)a);
    return (T)(a / b);
}

// Python/NumPy modulo: the result takes the sign of the divisor; x % 0 -> 0.
template <typename T> MX_FN T int_mod(T a, T b) {
    if (b == 0) return 0;
    if (mx_std::is_signed<T>::value && b == (T)-1) return 0;
    T r = (T)(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
    return r;
}

template <typename T> MX_FN T float_mod(T a, T b) {
    T r = mx::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

// Integer power by squaring; a negative exponent gives 0 unless the base is 1 or -1.
template <typename T> MX_FN T int_pow(T a, T b) {
    if (b < 0) {
        if (a == 1) return 1;
        if (a == (T)-1) return (b & 1) ? (T)-1 : (T)1;
        return 0;
    }
    T result = 1;
    typename mx_std::make_unsigned<T>::type base = a, e = b, r = 1;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    result = (T)r;
    return result;
}

// The 8-bit types without branches, so loops over them vectorize (the generic versions above
// divide or loop per element): the quotient through float32 is exact (|a|, |b| <= 255, so a
// quotient that is not an integer lies at least 1/255 from one, far above float32's rounding;
// MIN / -1 gives 128, which wraps as above), and the power takes 8 rounds of squaring, one
// per bit of the exponent. Same results as the generic versions for every pair of operands.
namespace detail {
template <typename T> MX_FN int16_t quotient8(T a, T b) {
    return (int16_t)((float)a / (float)(b == 0 ? (int16_t)1 : (int16_t)b));
}
template <typename T> MX_FN T int_div8(T a, T b) {
    return b == 0 ? (T)0 : (T)quotient8(a, b);
}
template <typename T> MX_FN T int_mod8(T a, T b) {
    int16_t r = (int16_t)(a - quotient8(a, b) * b);
    r = (r != 0 && ((r < 0) != (b < 0))) ? (int16_t)(r + b) : r;
    return b == 0 ? (T)0 : (T)r;
}
template <typename T> MX_FN T int_pow8(T a, T b) {
    uint8_t base = (uint8_t)a, e = (uint8_t)b, r = 1;
    for (int64_t k = 0; k < 8; k++) {
        r = (e & 1) ? (uint8_t)(r * base) : r;
        base = (uint8_t)(base * base);
        e = (uint8_t)(e >> 1);
    }
    T negative = a == 1 ? (T)1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0);
    return (mx_std::is_signed<T>::value && b < 0) ? negative : (T)r;
}
}  // namespace detail
MX_FN int8_t int_div(int8_t a, int8_t b) { return detail::int_div8(a, b); }
MX_FN uint8_t int_div(uint8_t a, uint8_t b) { return detail::int_div8(a, b); }
MX_FN int8_t int_mod(int8_t a, int8_t b) { return detail::int_mod8(a, b); }
MX_FN uint8_t int_mod(uint8_t a, uint8_t b) { return detail::int_mod8(a, b); }
MX_FN int8_t int_pow(int8_t a, int8_t b) { return detail::int_pow8(a, b); }
MX_FN uint8_t int_pow(uint8_t a, uint8_t b) { return detail::int_pow8(a, b); }

// Inverse error function: Giles' single-precision approximation refined by two Newton
// steps on erf, which brings it to double precision.
template <typename T> MX_FN T erfinv(T y) {
    double x = (double)y;
    if (x <= -1.0) return x == -1.0 ? -mx_std::numeric_limits<T>::infinity() : mx_std::numeric_limits<T>::quiet_NaN();
    if (x >= 1.0) return x == 1.0 ? mx_std::numeric_limits<T>::infinity() : mx_std::numeric_limits<T>::quiet_NaN();
    if (x != x) return (T)x;
    double w = -mx::log((1.0 - x) * (1.0 + x)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = mx::sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    double r = p * x;
    const double two_over_sqrt_pi = 1.1283791670955126;
    for (int i = 0; i < 2; ++i) {
        double err = mx::erf(r) - x;
        r -= err / (two_over_sqrt_pi * mx::exp(-r * r));
    }
    return (T)r;
}

// Polygamma psi^(n)(x), the n-th derivative of digamma (n = 0 is digamma). Shifts x up with
// psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1) until x >= 20, then uses the asymptotic
// (Euler-Maclaurin) series of the Hurwitz zeta function. Poles (x a non-positive integer)
// give NaN; for n >= 1, x below -1e4 gives NaN too (digamma reflects instead).
MX_FN double polygamma(int n, double x) {
    const double pi = 3.14159265358979323846;
    if (x != x) return x;
    if (x <= 0 && x == mx::floor(x)) return mx_std::numeric_limits<double>::quiet_NaN();
    if (n == 0 && x < -1e4) return polygamma(0, 1 - x) - pi / mx::tan(pi * x);
    if (x < -1e4) return mx_std::numeric_limits<double>::quiet_NaN();
    double factorial = 1;
    for (int k = 2; k <= n; ++k) factorial *= k;
    const double sign = (n % 2 == 0) ? -1.0 : 1.0;   // (-1)^(n+1)
    double shifted = 0;   // sum of the (-1)^(n+1) n! / (x+k)^(n+1) terms removed by shifting
    while (x < 20) {
        shifted += sign * factorial * (n == 0 ? 1 / x : mx::pow(x, -(double)(n + 1)));
        x += 1;
    }
    // Bernoulli numbers B_2 .. B_14
    static const double B[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                               -691.0 / 2730, 7.0 / 6};
    if (n == 0) {
        double r = mx::log(x) - 0.5 / x, x2 = 1 / (x * x), p = x2;
        for (int j = 1; j <= 7; ++j) {
            r -= B[j - 1] / (2 * j) * p;
            p *= x2;
        }
        return r + shifted;
    }
    // zeta(s, x) with s = n + 1
    double s = n + 1;
    double zeta = mx::pow(x, 1 - s) / (s - 1) + 0.5 * mx::pow(x, -s);
    double term = s * mx::pow(x, -s - 1), fact2j = 2;   // s (s+1)...(s+2j-2) x^(-s-2j+1) / (2j)!
    for (int j = 1; j <= 7; ++j) {
        zeta += B[j - 1] * term / fact2j;
        term *= (s + 2 * j - 1) * (s + 2 * j) / (x * x);
        fact2j *= (2 * j + 1) * (2 * j + 2);
    }
    return sign * factorial * zeta + shifted;
}

}  // namespace mx
