#pragma once
// Launch helpers for the shared-memory-heavy hybrid kernels: the opt-in shared-memory
// limit, and a persistent grid sized by occupancy (blocks loop over lines, so the
// SharedBands factorisation done at block start is paid once per block, not per line).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

struct LaunchLimits {
  int sms = 1;
  std::size_t smem_optin = 48 * 1024;
};

inline LaunchLimits launch_limits() {
  int dev = 0;
  ADI_CUDA_CHECK(cudaGetDevice(&dev));
  LaunchLimits l;
  int v = 0;
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
  l.sms = v;
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  l.smem_optin = static_cast<std::size_t>(v);
  return l;
}

// Lets `kernel` take `smem` bytes of dynamic shared memory. The limit is the kernel's, not the
// plan's: only ever raised, or a plan of the same kernel with shorter lines, prepared later, would
// make an earlier plan's launches fail ("invalid argument": the SPIKE form's cut segments of 255
// rows after the operator's 510).
template <class Kernel>
void allow_dynamic_smem(Kernel kernel, std::size_t smem) {
  if (smem <= 48 * 1024) return;
  cudaFuncAttributes fa{};
  ADI_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  if (static_cast<std::size_t>(fa.maxDynamicSharedSizeBytes) < smem)
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
}

// Grid for `kernel` with `threads` threads and `smem` bytes: enough blocks to fill the
// device once (occupancy x SMs), no more than `work` blocks.
template <class Kernel>
unsigned persistent_grid(Kernel kernel, int threads, std::size_t smem, i64 work, const LaunchLimits& lim) {
  allow_dynamic_smem(kernel, smem);
  // These kernels use no L1-resident data worth keeping: give shared memory the carveout.
  ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
  int per_sm = 0;
  ADI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const i64 fill = static_cast<i64>(std::max(per_sm, 1)) * lim.sms;
  return static_cast<unsigned>(std::max<i64>(1, std::min(work, fill)));
}

}  // namespace adi::cuda_backend::kernels
