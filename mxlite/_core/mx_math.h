// Scalar helpers used by the element-wise expression table (kernel_table.py), shared by the
// Cython (host C++) and CUDA kernels. MX_FN marks functions callable on both.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#ifdef __CUDACC__
#define MX_FN __host__ __device__ inline
#else
#define MX_FN static inline
#endif

namespace mx {

// tanh for float32 that vectorizes (glibc's tanhf is a scalar call of ~9 ns): computed in
// double as expm1(2|x|) / (expm1(2|x|) + 2), with expm1 from a Cody-Waite reduction and a
// degree-9 Taylor polynomial (relative error < 1e-11, so the float result is the correctly
// rounded one but for rare near-ties). |x| >= 9.1 gives +-1 (the float32 rounding of
// tanh there); the sign is copied back, so tanh(-0) = -0; NaN stays NaN.
MX_FN float tanh_f32(float xf) {
    double x = (double)xf;
    double a = std::fabs(x);
    if (!(a <= 9.1)) a = 9.1;                       // also NaN: fixed up at the end
    double u = 2.0 * a;
    double k = std::floor(u * 1.4426950408889634 + 0.5);
    double r = (u - k * 0.693147180369123816490) - k * 1.90821492927058770002e-10;
    double p = r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120
               + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880)))))))));
    // 2^k, k in [0, 27], from the bits of k + 1.5 * 2^52 (no float-to-int conversion, which
    // would not vectorize on AVX2)
    double kk = k + 6755399441055744.0;
    int64_t bits;
    std::memcpy(&bits, &kk, sizeof bits);
    bits = (bits - 0x4338000000000000LL + 1023) << 52;
    double s;
    std::memcpy(&s, &bits, sizeof s);
    double em1 = s * p + (s - 1.0);
    double t = std::copysign(em1 / (em1 + 2.0), x);
    return xf != xf ? xf : (float)t;
}

MX_FN float tanh(float x) { return tanh_f32(x); }
MX_FN double tanh(double x) { return std::tanh(x); }

// Integer division that never traps: x / 0 -> 0 (as NumPy), MIN / -1 wraps instead of SIGFPE.
template <typename T> MX_FN T int_div(T a, T b) {
    if (b == 0) return 0;
    if (std::is_signed<T>::value && b == (T)-1) return (T)(0 - (typename std::make_unsigned<T>::type)a);
    return (T)(a / b);
}

// Python/NumPy modulo: the result takes the sign of the divisor; x % 0 -> 0.
template <typename T> MX_FN T int_mod(T a, T b) {
    if (b == 0) return 0;
    if (std::is_signed<T>::value && b == (T)-1) return 0;
    T r = (T)(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
    return r;
}

template <typename T> MX_FN T float_mod(T a, T b) {
    T r = std::fmod(a, b);
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
    typename std::make_unsigned<T>::type base = a, e = b, r = 1;
    while (e) {
        if (e & 1) r *= base;
        base *= base;
        e >>= 1;
    }
    result = (T)r;
    return result;
}

// Inverse error function: Giles' single-precision approximation refined by two Newton
// steps on erf, which brings it to double precision.
template <typename T> MX_FN T erfinv(T y) {
    double x = (double)y;
    if (x <= -1.0) return x == -1.0 ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
    if (x >= 1.0) return x == 1.0 ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
    if (x != x) return (T)x;
    double w = -std::log((1.0 - x) * (1.0 + x)), p;
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
        w = std::sqrt(w) - 3.0;
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
        double err = std::erf(r) - x;
        r -= err / (two_over_sqrt_pi * std::exp(-r * r));
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
    if (x <= 0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    if (n == 0 && x < -1e4) return polygamma(0, 1 - x) - pi / std::tan(pi * x);
    if (x < -1e4) return std::numeric_limits<double>::quiet_NaN();
    double factorial = 1;
    for (int k = 2; k <= n; ++k) factorial *= k;
    const double sign = (n % 2 == 0) ? -1.0 : 1.0;   // (-1)^(n+1)
    double shifted = 0;   // sum of the (-1)^(n+1) n! / (x+k)^(n+1) terms removed by shifting
    while (x < 20) {
        shifted += sign * factorial * (n == 0 ? 1 / x : std::pow(x, -(double)(n + 1)));
        x += 1;
    }
    // Bernoulli numbers B_2 .. B_14
    static const double B[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                               -691.0 / 2730, 7.0 / 6};
    if (n == 0) {
        double r = std::log(x) - 0.5 / x, x2 = 1 / (x * x), p = x2;
        for (int j = 1; j <= 7; ++j) {
            r -= B[j - 1] / (2 * j) * p;
            p *= x2;
        }
        return r + shifted;
    }
    // zeta(s, x) with s = n + 1
    double s = n + 1;
    double zeta = std::pow(x, 1 - s) / (s - 1) + 0.5 * std::pow(x, -s);
    double term = s * std::pow(x, -s - 1), fact2j = 2;   // s (s+1)...(s+2j-2) x^(-s-2j+1) / (2j)!
    for (int j = 1; j <= 7; ++j) {
        zeta += B[j - 1] * term / fact2j;
        term *= (s + 2 * j - 1) * (s + 2 * j) / (x * x);
        fact2j *= (2 * j + 1) * (2 * j + 2);
    }
    return sign * factorial * zeta + shifted;
}

}  // namespace mx
