/* Runtime CPU dispatch for the element-wise and reduction kernels.

   The build targets baseline x86-64 (SSE2). The kernel templates emit every loop that
   vectorizes once per level below, each copy compiled for its instruction set with a
   target attribute, and fill one function table per level; a module picks the best level
   the CPU runs when it is imported (the MXLITE_SIMD environment variable can lower it) and
   `use_simd(name)` switches levels for tests. Every level runs the same C code in the same
   order, so the results are bit-identical: only the register width differs. (The build
   passes -ffp-contract=off, so no level fuses a multiply and an add into an FMA.) The one
   thing left open is which NaN comes out when two NaNs meet in an addition (IEEE 754 does
   not say; x86 keeps the first operand's and the compiler may swap the operands).

     level 0  "baseline"  x86-64 (SSE2), and any other CPU architecture
     level 1  "avx2"      AVX2
     level 2  "avx512"    AVX-512 F, BW, DQ and VL (x86-64-v4)

   Elsewhere than GCC or Clang on x86-64 the attributes are empty and only level 0 is
   offered. */
#ifndef MX_SIMD_H
#define MX_SIMD_H

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MX_SIMD_X86 1
#define MX_TARGET_0
#define MX_TARGET_1 __attribute__((target("avx2")))
#define MX_TARGET_2 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#else
#define MX_SIMD_X86 0
#define MX_TARGET_0
#define MX_TARGET_1
#define MX_TARGET_2
#endif

#define MX_SIMD_LEVELS 3

/* The best level this CPU (and its operating system's register saving) supports. */
static int mx_simd_best(void) {
    int best = 0;
#if MX_SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) best = 1;
    if (best == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        best = 2;
#endif
    return best;
}

/* The level a module starts with: the best one, lowered by MXLITE_SIMD=baseline|avx2|avx512
   (a level the CPU lacks is never chosen). */
static int mx_simd_default(void) {
    int best = mx_simd_best();
    const char* want = getenv("MXLITE_SIMD");
    int level = best;
    if (want != NULL) {
        if (strcmp(want, "baseline") == 0) level = 0;
        else if (strcmp(want, "avx2") == 0) level = 1;
        else if (strcmp(want, "avx512") == 0) level = 2;
    }
    return level < best ? level : best;
}

#endif
