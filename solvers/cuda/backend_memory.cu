// Device memory, copies and queries of the CUDA backend.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

bool compiled() { return true; }
bool timing_forms_compiled() {
#if defined(ADI_CUDA_UNROLL_ALL)
  return true;
#else
  return false;
#endif
}

int device_count() {
  int n = 0;
  // Without a GPU this returns an error (e.g. insufficient driver), not 0: any error means none.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

void set_device(int device) { ADI_CUDA_CHECK(cudaSetDevice(device)); }
int current_device() {
  int d = 0;
  ADI_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

namespace {
// A diagnostic count, not state anything depends on.
std::atomic<std::size_t> g_allocations{0};
}  // namespace

std::size_t allocation_count() { return g_allocations.load(); }

void* allocate(std::size_t bytes, int device) {
  DeviceGuard guard(device);  // on `device`, the caller's current device left as it was
  ++g_allocations;
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError("cudaMalloc of " + std::to_string(bytes) + " bytes failed: " + cudaGetErrorString(e));
  }
  return p;
}

void deallocate(void* p) noexcept {
  if (p) cudaFree(p);
}

void copy(void* dst, const void* src, std::size_t bytes, Copy kind) {
  const cudaMemcpyKind k = kind == Copy::host_to_device     ? cudaMemcpyHostToDevice
                           : kind == Copy::device_to_host   ? cudaMemcpyDeviceToHost
                           : kind == Copy::device_to_device ? cudaMemcpyDeviceToDevice
                                                            : cudaMemcpyHostToHost;
  ADI_CUDA_CHECK(cudaMemcpy(dst, src, bytes, k));
}

void copy_on_stream(void* dst, const void* src, std::size_t bytes, Copy kind, void* stream) {
  const cudaMemcpyKind k = kind == Copy::host_to_device     ? cudaMemcpyHostToDevice
                           : kind == Copy::device_to_host   ? cudaMemcpyDeviceToHost
                           : kind == Copy::device_to_device ? cudaMemcpyDeviceToDevice
                                                            : cudaMemcpyHostToHost;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  ADI_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, k, st));
  ADI_CUDA_CHECK(cudaStreamSynchronize(st));
}

void* event_create() {
  cudaEvent_t e = nullptr;
  ADI_CUDA_CHECK(cudaEventCreate(&e));
  return static_cast<void*>(e);
}
void event_destroy(void* event) noexcept {
  if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
void event_record(void* event, void* stream) {
  ADI_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}
bool event_done(void* event) {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  ADI_CUDA_CHECK(e);
  return true;
}
double event_elapsed_ms(void* start, void* stop) {
  ADI_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stop)));
  float ms = 0.0f;
  ADI_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)));
  return ms;
}

void event_wait(void* event) { ADI_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }

void* pinned_allocate(std::size_t bytes) {
  void* p = nullptr;
  ADI_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}
void pinned_free(void* p) noexcept {
  if (p) cudaFreeHost(p);
}
void upload_async(void* dst, const void* pinned_src, std::size_t bytes, void* stream) {
  ADI_CUDA_CHECK(cudaMemcpyAsync(dst, pinned_src, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)));
}

void memset_zero(void* p, std::size_t bytes) { ADI_CUDA_CHECK(cudaMemset(p, 0, bytes)); }
void memset_zero_async(void* p, std::size_t bytes, void* stream) {
  ADI_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, static_cast<cudaStream_t>(stream)));
}

namespace {
template <class T>
__global__ void fill_pattern_kernel(T* p, std::size_t count, T base, T step, unsigned period) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = base + step * static_cast<T>(i % period);
}
}  // namespace

template <class T>
void fill_pattern(T* p, std::size_t count, T base, T step, unsigned period, void* stream) {
  if (count == 0) return;
  const std::size_t blocks = std::min<std::size_t>((count + 255) / 256, 4096);
  fill_pattern_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      p, count, base, step, period == 0 ? 1u : period);
  ADI_CUDA_CHECK(cudaGetLastError());
}
template void fill_pattern<float>(float*, std::size_t, float, float, unsigned, void*);
template void fill_pattern<double>(double*, std::size_t, double, double, unsigned, void*);

void synchronize(void* stream) { ADI_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream))); }

bool is_device_pointer(const void* p) {
  if (device_count() == 0) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

DeviceInfo device_info(int device) {
  cudaDeviceProp prop{};
  ADI_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.shared_per_block = prop.sharedMemPerBlock;
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.global_memory = prop.totalGlobalMem;
  std::strncpy(info.name, prop.name, sizeof(info.name) - 1);
  return info;
}

}  // namespace adi::cuda_backend
