// Fixed-width integer types for every compiler of the kernels: <stdint.h> on the host and
// under nvcc, libcu++'s <cuda/std/cstdint> under NVRTC (which has no C library headers).
#pragma once
#if defined(__CUDACC_RTC__)
#include <cuda/std/cstdint>
typedef cuda::std::int8_t int8_t;
typedef cuda::std::int16_t int16_t;
typedef cuda::std::int32_t int32_t;
typedef cuda::std::int64_t int64_t;
typedef cuda::std::uint8_t uint8_t;
typedef cuda::std::uint16_t uint16_t;
typedef cuda::std::uint32_t uint32_t;
typedef cuda::std::uint64_t uint64_t;
#else
#include <stdint.h>
#endif
