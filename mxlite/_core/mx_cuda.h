// The preamble of every generated CUDA kernel (mxlite/cuda): index type, grid-stride loop,
// the layout of strided/broadcast operands, and float16 storage. Compiled by NVRTC on a GPU,
// and by the host C++ compiler under mx_cuda_emu.h for the host emulator of the tests.
#pragma once
#include "mx_math.h"
#include "philox.h"

// Every size, index, stride and offset in a kernel: 64-bit, so arrays past 2^32 elements
// index correctly (MX_INDEX_T exists for the benchmark that measures the cost of it).
#ifndef MX_INDEX_T
#define MX_INDEX_T long long
#endif
typedef MX_INDEX_T mx_idx;

// A grid-stride loop: correct for any launch configuration (the emulator runs odd ones).
#define MX_GRID_LOOP(i, n) \
    for (mx_idx i = (mx_idx)blockIdx.x * (mx_idx)blockDim.x + (mx_idx)threadIdx.x; \
         i < (mx_idx)(n); i += (mx_idx)blockDim.x * (mx_idx)gridDim.x)

// Up to three operands of one iteration space: shape and per-operand strides in elements
// (0 on broadcast axes, negative for flipped views). Passed by value (mxlite/cuda/layout.py
// builds the matching NumPy record).
#define MX_MAX_DIMS 16
struct mx_layout {
    long long ndim;
    long long shape[MX_MAX_DIMS];
    long long stride[3][MX_MAX_DIMS];
};

// The offset in elements of operand k at flat (C-order) index i of the iteration space.
MX_FN mx_idx mx_offset(const mx_layout& l, int k, mx_idx i) {
    mx_idx off = 0;
    for (mx_idx d = (mx_idx)l.ndim - 1; d >= 0; --d) {
        mx_idx s = (mx_idx)l.shape[d];
        off += (i % s) * (mx_idx)l.stride[k][d];
        i /= s;
    }
    return off;
}

// The offsets of operands 0 and 1 at flat index i in one pass: one division per axis for
// both (binary ops and casts over broadcast or strided operands).
MX_FN void mx_offset2(const mx_layout& l, mx_idx i, mx_idx& off0, mx_idx& off1) {
    mx_idx a = 0, b = 0;
    for (mx_idx d = (mx_idx)l.ndim - 1; d >= 0; --d) {
        mx_idx s = (mx_idx)l.shape[d], q = i / s, r = i - q * s;
        a += r * (mx_idx)l.stride[0][d];
        b += r * (mx_idx)l.stride[1][d];
        i = q;
    }
    off0 = a;
    off1 = b;
}

// float16 is stored as its 16 bits and computed in float32 (as on the CPU): conversions
// written out so host and device round alike (to nearest, ties to even).
MX_FN float mx_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1fu) {
        bits = sign | 0x7f800000u | (man << 13);                   // inf, NaN
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);         // normal
    } else if (man == 0) {
        bits = sign;                                              // zero
    } else {                                                      // subnormal: normalise
        int e = -1;
        do { man <<= 1; ++e; } while ((man & 0x400u) == 0);
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    return mx::float_of(bits);
}

MX_FN uint16_t mx_float_to_half(float f) {
    uint32_t x = mx::bits_of(f);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u)                                        // inf, NaN (quiet, kept)
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);    // rounds to >= 65520: inf
    if (ax < 0x38800000u) {                                       // below 2^-14: subnormal
        if (ax < 0x33000000u) return (uint16_t)sign;              // below 2^-25: rounds to 0
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;                                // 14..24
        uint32_t r = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (r & 1u))) ++r;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ax - 0x38000000u;                                // rebias 127 -> 15
    uint32_t out = r >> 13, rest = r & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (out & 1u))) ++out;
    return (uint16_t)(sign | out);
}

// float64 to float16 in one rounding (to nearest, ties to even), as NumPy casts it: going
// through float32 would round twice (1 + 2^-11 + 2^-40 must give 1 + 2^-10, not 1).
MX_FN uint16_t mx_double_to_half(double d) {
    uint64_t x = (uint64_t)mx::bits_of(d);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t ax = x & 0x7fffffffffffffffull;
    if (ax >= 0x7ff0000000000000ull)                              // inf, NaN (quiet, kept)
        return (uint16_t)(sign | 0x7c00u |
                          (ax > 0x7ff0000000000000ull ? 0x200u | ((ax >> 42) & 0x3ffu) : 0));
    if (ax >= 0x40effe0000000000ull) return (uint16_t)(sign | 0x7c00u);   // >= 65520: inf
    uint64_t r, rest, half;
    if (ax < 0x3f10000000000000ull) {                             // below 2^-14: subnormal
        if (ax < 0x3e60000000000000ull) return sign;              // below 2^-25: rounds to 0
        uint64_t e = ax >> 52, m = (ax & 0xfffffffffffffull) | 0x10000000000000ull;
        uint64_t shift = 1051u - e;                               // 43..53
        r = m >> shift;
        rest = m & ((1ull << shift) - 1u);
        half = 1ull << (shift - 1u);
    } else {
        uint64_t b = ax - 0x3f00000000000000ull;                  // rebias 1023 -> 15
        r = b >> 42;
        rest = b & 0x3ffffffffffull;
        half = 1ull << 41;
    }
    if (rest > half || (rest == half && (r & 1u))) ++r;
    return (uint16_t)(sign | r);
}

// Float to integer as NumPy converts on x86-64 (cvttsd2si): toward zero; NaN and values
// outside the range give the "integer indefinite" INT_MIN; int8 and uint8 take the low bits
// of the 32-bit conversion. C leaves those cases undefined and CUDA saturates instead, so
// every kernel converts through these and both devices agree.
MX_FN int32_t mx_double_to_i32(double v) {
    return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : (int32_t)(-2147483647 - 1);
}

MX_FN int64_t mx_double_to_i64(double v) {
    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0)
        ? (int64_t)v : (int64_t)(-9223372036854775807LL - 1);
}
