#pragma once
// The block-tridiagonal kernels of one precision and block size M, both exchange policies,
// periodic or not: included only by the generated units (instances/block_thomas_m.cu.in).
#include "solvers/cuda/block_thomas_launch.cuh"

namespace adi::cuda_backend::block {

template <class T, int M>
void launch_m(BlockKernel kernel, bool periodic, const Args<T>& args, cudaStream_t stream) {
  const bool shared = kernel == BlockKernel::cuda_block_thomas_shared;
  if (periodic)
    shared ? launch<T, M, SharedExchange, true>(args, stream) : launch<T, M, ShuffleExchange, true>(args, stream);
  else
    shared ? launch<T, M, SharedExchange, false>(args, stream) : launch<T, M, ShuffleExchange, false>(args, stream);
}

}  // namespace adi::cuda_backend::block
