#pragma once
// The kernels of the device block partition passes for one precision and block size M,
// included only by the generated units (solvers/cuda/instances/block_partition_m.cu.in).
#include "solvers/cuda/block_partition_launch.cuh"

namespace adi::cuda_backend::block_partition {

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

template <class T, int M>
void reduce_m(const Args<T>& g, unsigned blocks, int segments, cudaStream_t s) {
  reduce_kernel<T, M><<<dim3(blocks, unsigned(segments)), kThreads, 0, s>>>(g);
  if (segments > 1) chain_kernel<T, M><<<blocks, kThreads, 0, s>>>(g);
}

template <class T, int M>
void back_m(const Args<T>& g, unsigned blocks, int segments, cudaStream_t s) {
  if (segments > 1) back_chain_kernel<T, M><<<blocks, kThreads, 0, s>>>(g);
  back_kernel<T, M><<<dim3(blocks, unsigned(segments)), kThreads, 0, s>>>(g);
}

}  // namespace adi::cuda_backend::block_partition
