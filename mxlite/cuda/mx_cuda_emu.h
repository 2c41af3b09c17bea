// The host emulator of mxlite's CUDA kernels (mxlite/cuda/emulator.py): the CUDA built-ins
// the generated kernels use, for the host C++ compiler. Threads run one after another, so a
// kernel must not depend on threads running together (mxlite kernels use no shared memory
// and no __syncthreads; atomics become plain read-modify-writes).
#pragma once
#define __CUDACC__ 1
#define __CUDA_ARCH__ 800
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#include <math.h>
#include <stdint.h>
#include <string.h>

struct mx_emu_dim3 { unsigned int x, y, z; };
static mx_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

extern "C" void mx_emu_set_thread(unsigned int block, unsigned int thread, unsigned int grid_size,
                                  unsigned int block_size) {
    blockIdx = {block, 0, 0};
    threadIdx = {thread, 0, 0};
    gridDim = {grid_size, 1, 1};
    blockDim = {block_size, 1, 1};
}

static inline long long __double_as_longlong(double x) { long long b; memcpy(&b, &x, 8); return b; }
static inline double __longlong_as_double(long long b) { double x; memcpy(&x, &b, 8); return x; }
static inline float __uint_as_float(unsigned int b) { float x; memcpy(&x, &b, 4); return x; }
static inline unsigned int __float_as_uint(float x) { unsigned int b; memcpy(&b, &x, 4); return b; }
static inline float __int_as_float(int b) { float x; memcpy(&x, &b, 4); return x; }
static inline int __float_as_int(float x) { int b; memcpy(&b, &x, 4); return b; }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
template <typename T> static inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> static inline T atomicMax(T* p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <typename T> static inline T atomicMin(T* p, T v) { T old = *p; if (v < old) *p = v; return old; }
template <typename T> static inline T atomicCAS(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
template <typename T> static inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
#define __syncthreads() static_assert(false, "mxlite kernels do not use __syncthreads")
