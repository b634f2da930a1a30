// CUDA tridiagonal kernels, single precision, plus the precision-independent queries
// (workspace and shared-memory sizes). Double precision: tridiagonal_cuda_fp64.cu.
#include "solvers/cuda/device_memory_rate.hpp"
#include "solvers/cuda/tridiagonal_launch.cuh"

namespace adi::cuda_backend {

double device_memory_gbs(int device) {
  int khz = 0, bits = 0;  // (cudaDeviceProp::memoryClockRate is gone in CUDA 13; the attribute stays)
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return 2.0 * khz * 1e3 * (bits / 8.0) / 1e9;
}

std::size_t tridiagonal_workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic,
                                        std::size_t value_size) {
  switch (kernel) {
    case Kernel::cuda_thomas_naive:
    case Kernel::cuda_thomas_strided:
      return kernels::thomas_thread_per_line_workspace(lines, periodic, value_size);
    case Kernel::cuda_thomas_shuffle_transpose:
    case Kernel::cuda_thomas_shared_transpose:
      return kernels::thomas_transpose_workspace(lines, periodic, value_size);
    case Kernel::cuda_pivoting:
      return kernels::pivoting_thread_per_line_workspace(lines, periodic, value_size);
    default:
      return 0;  // the hybrids keep everything in shared memory
  }
}

std::size_t tridiagonal_min_shared_bytes(Kernel kernel, const LineSet& lines, bool shared_bands,
                                         std::size_t value_size) {
  if (kernel == Kernel::cuda_thomas_pcr_long) return kernels::thomas_pcr_long_min_smem(lines.n, value_size);
  if (kernel != Kernel::cuda_thomas_pcr && kernel != Kernel::cuda_thomas_pcr_strided) return 0;
  if (lines.n > kernels::kPcrMaxN) return static_cast<std::size_t>(-1);
  const kernels::PcrShape sh = kernels::pcr_shape(lines.n);
  const bool fp32 = value_size == sizeof(float);
  if (kernel == Kernel::cuda_thomas_pcr)
    return fp32 ? kernels::thomas_pcr_smem<float>(sh, shared_bands, 1)
                : kernels::thomas_pcr_smem<double>(sh, shared_bands, 1);
  return fp32 ? kernels::thomas_pcr_strided_smem<float>(sh, shared_bands, 1)
              : kernels::thomas_pcr_strided_smem<double>(sh, shared_bands, 1);
}

}  // namespace adi::cuda_backend

ADI_CUDA_TRIDIAGONAL_INSTANTIATE(float)
