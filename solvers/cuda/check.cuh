#pragma once
// Turns a failed CUDA call into adi::DeviceError naming the call and the location.
#include <cuda_runtime.h>

#include <string>

#include "adi/base/error.hpp"

#define ADI_CUDA_CHECK(call)                                                                    \
  do {                                                                                          \
    const cudaError_t adi_err_ = (call);                                                        \
    if (adi_err_ != cudaSuccess) {                                                              \
      cudaGetLastError();                                                                       \
      throw ::adi::DeviceError(std::string(#call) + " failed at " + __FILE__ + ":" +            \
                               std::to_string(__LINE__) + ": " + cudaGetErrorString(adi_err_)); \
    }                                                                                           \
  } while (0)
