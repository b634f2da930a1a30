#pragma once
// The block-tridiagonal kernels of one precision and block size M, both exchange policies,
// periodic or not: included only by the generated units (instances/block_thomas_m.cu.in).
#include "solvers/cuda/block_thomas_launch.cuh"

namespace adi::cuda_backend::block {

// SharedExchange (BlockKernel::cuda_block_thomas_shared, kept for comparison: the plan picks
// shuffles for every M) only with ADI_CUDA_UNROLL_ALL (issue 15 item 8): without it the shuffles run
// instead (block_thomas_cuda.cu says so once on stderr), and only they are compiled.
template <class T, int M>
void launch_m(BlockKernel kernel, bool periodic, const Args<T>& args, cudaStream_t stream) {
#if defined(ADI_CUDA_UNROLL_ALL)
  if (kernel == BlockKernel::cuda_block_thomas_shared) {
    periodic ? launch<T, M, SharedExchange, true>(args, stream) : launch<T, M, SharedExchange, false>(args, stream);
    return;
  }
#else
  (void)kernel;
#endif
  periodic ? launch<T, M, ShuffleExchange, true>(args, stream) : launch<T, M, ShuffleExchange, false>(args, stream);
}

}  // namespace adi::cuda_backend::block
