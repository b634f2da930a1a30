// Device memory, copies and queries of the CUDA backend.
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

bool compiled() { return true; }

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

void* allocate(std::size_t bytes, int device) {
  ADI_CUDA_CHECK(cudaSetDevice(device));
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

void memset_zero(void* p, std::size_t bytes) { ADI_CUDA_CHECK(cudaMemset(p, 0, bytes)); }

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
