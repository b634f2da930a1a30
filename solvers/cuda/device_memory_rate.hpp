#pragma once
// The device's peak memory bandwidth as it reports it, for dispatch rules that depend on
// the card rather than its name (adi/tridiagonal_dispatch.cpp): 2 x memory clock x bus
// width, in GB/s (H100 SXM 3352, H200 4915; 0 where the device does not say). Defined in
// tridiagonal_cuda.cu.
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN
ADI_CUDA_KERNEL_OR(return 0.0;, double device_memory_gbs(int device))
ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend
