#pragma once
// The scaffold the CUDA benchmarks share (benchmarks/bench_cuda_*.cu): error checks, device
// buffers, event timing (median of repeated runs after warm-ups, an untimed preparation
// before each) and the device-to-device copy bandwidth every "% of copy" column is quoted
// against (1 GiB read + written by cudaMemcpy and, where asked, by a grid-stride copy kernel
// of 16-byte elements).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

// A CUDA runtime call that must succeed; otherwise the call, place and error, and exit 1.
#define CK(call)                                                                                           \
  do {                                                                                                     \
    cudaError_t e_ = (call);                                                                               \
    if (e_ != cudaSuccess) {                                                                               \
      std::fprintf(stderr, "%s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                        \
    }                                                                                                      \
  } while (0)
// A library call returning a status (cuSPARSE, cuSOLVER) that must equal `ok`.
#define CK_STATUS(call, ok)                                                                   \
  do {                                                                                        \
    const auto s_ = (call);                                                                   \
    if (s_ != (ok)) {                                                                         \
      std::fprintf(stderr, "%s failed at %s:%d: status %d\n", #call, __FILE__, __LINE__, int(s_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

namespace adi::bench {

// `count` elements of device memory (at least one), freed with the buffer.
template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) { CK(cudaMalloc(&p, std::max<std::size_t>(count, 1) * sizeof(T))); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

// The same, owned by the caller (cudaFree).
template <class T>
T* dalloc(std::size_t n) {
  T* p = nullptr;
  CK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  return p;
}

// Median milliseconds of `reps` runs of body() after `warm` untimed ones, timed by events on
// `stream`; prep() (if any) runs before each run, outside the events (restoring inputs a
// solver overwrites).
inline double median_ms(const std::function<void()>& body, int reps, const std::function<void()>& prep = {},
                        int warm = 2, cudaStream_t stream = nullptr) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < warm + reps; ++r) {
    if (prep) prep();
    CK(cudaEventRecord(e0, stream));
    body();
    CK(cudaEventRecord(e1, stream));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= warm) ms.push_back(t);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

template <class T>
__global__ void copy_kernel(const T* __restrict__ s, T* __restrict__ d, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    d[i] = s[i];
}

// GB/s (read + write) of copying 1 GiB on the device.
struct CopyBandwidth {
  double memcpy_gbs = 0;  // cudaMemcpyAsync device to device
  double kernel_gbs = 0;  // copy_kernel of double2 (0: not measured)
  double best() const { return std::max(memcpy_gbs, kernel_gbs); }
};

// The copy timed with median_ms(reps, warm); the kernel too when kernel_blocks > 0.
inline CopyBandwidth measure_copy(int reps, int warm = 2, int kernel_blocks = 0, int kernel_threads = 256,
                                  cudaStream_t stream = nullptr) {
  const std::size_t bytes = std::size_t(1) << 30;
  Dev<char> s(bytes), d(bytes);
  CK(cudaMemsetAsync(s.p, 1, bytes, stream));
  CopyBandwidth out;
  const double t1 = median_ms([&] { CK(cudaMemcpyAsync(d.p, s.p, bytes, cudaMemcpyDeviceToDevice, stream)); }, reps,
                              {}, warm, stream);
  out.memcpy_gbs = 2.0 * bytes / (t1 * 1e6);
  if (kernel_blocks > 0) {
    const long long n = static_cast<long long>(bytes / sizeof(double2));
    const double t2 = median_ms(
        [&] {
          copy_kernel<double2><<<kernel_blocks, kernel_threads, 0, stream>>>(reinterpret_cast<const double2*>(s.p),
                                                                           reinterpret_cast<double2*>(d.p), n);
        },
        reps, {}, warm, stream);
    out.kernel_gbs = 2.0 * bytes / (t2 * 1e6);
  }
  return out;
}

}  // namespace adi::bench
