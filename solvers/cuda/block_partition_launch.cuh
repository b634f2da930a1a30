#pragma once
// Kernels and launchers of the device block partition passes (block_partition_local_passes.hpp);
// instantiated once per precision (block_partition_local_passes.cu: float,
// block_partition_local_passes_fp64.cu: double) so that the two compile in parallel.
#include <cuda_runtime.h>

#include "solvers/cuda/block_partition_local_passes.cuh"
#include "solvers/cuda/block_partition_local_passes.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend::block_partition {

constexpr int kThreads = 64;  // few lines per rank are common: small blocks spread them over more SMs

template <class T, int M>
__global__ void __launch_bounds__(kThreads) reduce_kernel(Args<T> g) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l < g.ls.count0 * g.ls.count1) reduce_line<T, M>(g, l, int(blockIdx.y));
}
template <class T, int M>
__global__ void __launch_bounds__(kThreads) chain_kernel(Args<T> g) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l < g.ls.count0 * g.ls.count1) reduce_chain<T, M>(g, l);
}
template <class T, int M>
__global__ void __launch_bounds__(kThreads) back_chain_kernel(Args<T> g) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l < g.ls.count0 * g.ls.count1) back_chain<T, M>(g, l);
}
template <class T, int M>
__global__ void __launch_bounds__(kThreads) back_kernel(Args<T> g) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l < g.ls.count0 * g.ls.count1) back_line<T, M>(g, l, int(blockIdx.y));
}

template <class T>
Args<T> make_args(const BlockLineSet& lines, const T* a, const T* b, const T* c, const T* d, T* u,
                  const Workspace<T>& w, T* red, const T* sol, T tol, bool first_open, bool last_open) {
  return Args<T>{lines, a,      b,           c,           d,        u,   w.alpha, w.gamma, red,
                 sol,   tol,    first_open,  last_open,   w.S,      w.red1, w.alpha2, w.gamma2, w.x2};
}

template <class T>
void reduce(const BlockLineSet& lines, const T* a, const T* b, const T* c, const T* d, T* u, const Workspace<T>& w,
            T* red, T tol, bool first_open, bool last_open, void* stream) {
  const index_t L = lines.systems();
  if (L == 0) return;
  const Args<T> g = make_args<T>(lines, a, b, c, d, u, w, red, nullptr, tol, first_open, last_open);
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = unsigned((L + kThreads - 1) / kThreads);
  with_block_size(lines.m, [&](auto mc) {
    constexpr int M = decltype(mc)::value;
    reduce_kernel<T, M><<<dim3(blocks, unsigned(w.S)), kThreads, 0, s>>>(g);
    if (w.S > 1) chain_kernel<T, M><<<blocks, kThreads, 0, s>>>(g);
  });
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void back_substitute(const BlockLineSet& lines, const Workspace<T>& w, const T* sol, T* u, void* stream) {
  const index_t L = lines.systems();
  if (L == 0) return;
  const Args<T> g = make_args<T>(lines, nullptr, nullptr, nullptr, nullptr, u, w, nullptr, sol, T(0), false, false);
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = unsigned((L + kThreads - 1) / kThreads);
  with_block_size(lines.m, [&](auto mc) {
    constexpr int M = decltype(mc)::value;
    if (w.S > 1) back_chain_kernel<T, M><<<blocks, kThreads, 0, s>>>(g);
    back_kernel<T, M><<<dim3(blocks, unsigned(w.S)), kThreads, 0, s>>>(g);
  });
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::block_partition
