#pragma once
// Host side of the block-tridiagonal CUDA kernels: picks the compiled kernel for the
// runtime block size M and exchange policy. Instantiated once per precision
// (block_thomas_cuda.cu: float, block_thomas_cuda_fp64.cu: double) so the two compile
// in parallel.
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/block_thomas.cuh"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend::block {

template <class T, int M>
void launch_m(BlockKernel kernel, bool periodic, const Args<T>& args, cudaStream_t stream) {
  const bool shared = kernel == BlockKernel::cuda_block_thomas_shared;
  if (periodic)
    shared ? launch<T, M, SharedExchange, true>(args, stream) : launch<T, M, ShuffleExchange, true>(args, stream);
  else
    shared ? launch<T, M, SharedExchange, false>(args, stream) : launch<T, M, ShuffleExchange, false>(args, stream);
}

template <class T>
void solve(BlockKernel kernel, const BlockLineSet& l, const T* a, const T* b, const T* c, const T* d, T* u,
           double tol, bool periodic, void* workspace, unsigned long long* singular, void* stream_ptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const Args<T> args{l, a, b, c, d, u, static_cast<T*>(workspace), static_cast<T>(tol), singular};
  switch (l.m) {
    case 2: launch_m<T, 2>(kernel, periodic, args, stream); break;
    case 3: launch_m<T, 3>(kernel, periodic, args, stream); break;
    case 4: launch_m<T, 4>(kernel, periodic, args, stream); break;
    case 5: launch_m<T, 5>(kernel, periodic, args, stream); break;
    case 6: launch_m<T, 6>(kernel, periodic, args, stream); break;
    case 7: launch_m<T, 7>(kernel, periodic, args, stream); break;
    default: launch_m<T, 8>(kernel, periodic, args, stream); break;
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::block
