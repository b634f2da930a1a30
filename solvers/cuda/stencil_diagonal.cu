// The diagonal band of (I/s - A_j) on the GPU, b[i] = inv_s - d[i] (the CUDA version of
// solvers/cpu/stencil_diagonal.cpp). Used for per-node bands; the fused stage kernel
// generates b itself.
#include <cuda_runtime.h>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

namespace {
template <class T>
__global__ void diagonal_kernel(const T* d, T inv_s, T* b, index_t n) {
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x)
    b[i] = inv_s - d[i];
}
}  // namespace

template <class T>
void stencil_diagonal(const T* d, T inv_s, T* b, index_t n, void* stream) {
  if (n <= 0) return;
  const index_t blocks = (n + 255) / 256;
  diagonal_kernel<T><<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0,
                       static_cast<cudaStream_t>(stream)>>>(d, inv_s, b, n);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template void stencil_diagonal<float>(const float*, float, float*, index_t, void*);
template void stencil_diagonal<double>(const double*, double, double*, index_t, void*);

}  // namespace adi::cuda_backend
