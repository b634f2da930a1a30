#pragma once
// The CUDA launch of the CFD example's per-index operators (euler_cuda.cu: the single-device
// solver; euler_mpi_cuda.cu: the distributed step): op(i) for i in [0, count), one thread per
// index, 128 per block, on `stream`; a failed launch throws adi::DeviceError.
#include <cuda_runtime.h>

#include <string>

#include "adi/base/error.hpp"
#include "adi/layout.hpp"

namespace cfd {

template <class Op>
__global__ void each_index(Op op, adi::index_t count) {
  const adi::index_t i = adi::index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) op(i);
}

template <class Op>
void launch_each(const Op& op, adi::index_t count, cudaStream_t stream) {
  if (count <= 0) return;
  constexpr int threads = 128;
  each_index<<<unsigned((count + threads - 1) / threads), threads, 0, stream>>>(op, count);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw adi::DeviceError(std::string("CFD kernel launch failed: ") + cudaGetErrorString(e));
}

}  // namespace cfd
