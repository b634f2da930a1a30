#pragma once
// Device-side pieces shared by the CUDA tridiagonal kernels: the line layout as the
// kernels see it, band access policies (per-line arrays or one shared set), pivot
// checks and the scratch layout. C++17, CUDA only.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "adi/base/layout.hpp"

namespace adi::cuda_backend::kernels {

// A request of one word's 32-byte sector into L2 (no register written; a warp's 32 words of a
// row of lines along Y/Z are one 256-byte run): the partition passes' and the truncated sweeps'
// look-ahead.
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
}


using i64 = std::int64_t;

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// The canonical LineSet by value: element i of line l at offset(l) + i*stride.
struct DeviceLines {
  i64 n, stride, count0, stride0, count1, stride1;
  __host__ __device__ i64 lines() const { return count0 * count1; }
  __host__ __device__ i64 offset(i64 line) const {
    // count0 == lines (one family of lines, e.g. an X sweep of a 2D slab, or any
    // StridedLines) avoids the 64-bit division.
    if (count1 == 1) return line * stride0;
    // 32-bit division when it fits: a 64-bit one is a long instruction sequence.
    const i64 l1 = line <= 0x7fffffff && count0 <= 0x7fffffff
                       ? static_cast<i64>(static_cast<unsigned>(line) / static_cast<unsigned>(count0))
                       : line / count0;
    return (line - l1 * count0) * stride0 + l1 * stride1;
  }
};

inline DeviceLines to_device(const LineSet& l) {
  return {l.n, l.stride, l.count0, l.stride0, l.count1, l.stride1};
}

// A zero, infinite or NaN pivot: the same test as the reference (solvers/reference/thomas.hpp).
__device__ __forceinline__ bool bad_pivot(float p) {
  const float m = fabsf(p);
  return !(m > 0.0f && m <= 3.402823466e38f);
}
__device__ __forceinline__ bool bad_pivot(double p) {
  const double m = fabs(p);
  return !(m > 0.0 && m <= 1.7976931348623157e308);
}

// 1/x correctly rounded, like T(1)/x but without the general division routine.
__device__ __forceinline__ float recip(float x) { return __frcp_rn(x); }
__device__ __forceinline__ double recip(double x) { return __drcp_rn(x); }

// Checking pivots costs one compare per row; the flag is written only on failure
// (no atomics, no read), so a healthy solve never touches it.
__device__ __forceinline__ void report(bool bad, int* flag) {
  if (bad && flag != nullptr) *flag = 1;
}

// Read-only loads through the non-coherent cache.
template <class T>
__device__ __forceinline__ T ldg(const T* p) {
  return __ldg(p);
}

// Scratch carved out of the plan's workspace: 256-byte aligned slices.
inline std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

struct ScratchCursor {
  char* base;
  std::size_t used = 0;
  template <class T>
  T* take(std::size_t count) {
    T* p = reinterpret_cast<T*>(base + used);
    used += align_up(count * sizeof(T));
    return p;
  }
};

// Bytes of a scratch slice of `count` values of `value_size` bytes.
inline std::size_t slice_bytes(std::size_t count, std::size_t value_size) {
  return align_up(count * value_size);
}

}  // namespace adi::cuda_backend::kernels
