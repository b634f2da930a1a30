#pragma once
// Turns a failed CUDA call into adi::DeviceError naming the call and the location.
#include <cuda_runtime.h>

#include <string>

#include "adi/base/error.hpp"

namespace adi::cuda_backend {
// The error path of ADI_CUDA_CHECK, out of line: the message's string concatenations were
// expanded at every check (4 a kernel instance in persistent_grid alone), a quarter of
// tridiagonal_cuda.cu's host code and of its host compile time (issue 15 item 8). Same message.
[[noreturn, gnu::cold, gnu::noinline]] inline void cuda_check_failed(cudaError_t err, const char* call,
                                                                     const char* file, int line) {
  cudaGetLastError();
  throw ::adi::DeviceError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorString(err));
}
}  // namespace adi::cuda_backend

#define ADI_CUDA_CHECK(call)                                                                    \
  do {                                                                                          \
    const cudaError_t adi_err_ = (call);                                                        \
    if (adi_err_ != cudaSuccess)                                                                \
      ::adi::cuda_backend::cuda_check_failed(adi_err_, #call, __FILE__, __LINE__);              \
  } while (0)
