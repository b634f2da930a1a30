// The early-exercise kernels of the Ikonen-Toivanen splitting (early_exercise.hpp): one
// thread per node, grid-stride; the per-node formulas are solvers/common/early_exercise_core.hpp's,
// the same the host loops call, so the GPU's American prices equal the host's to round-off.
#include <cuda_runtime.h>

#include "solvers/common/early_exercise_core.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/early_exercise.hpp"

namespace adi::cuda_backend {

namespace {

// Node number t (x fastest over the box's nx * ny * nz nodes) to its offset in the padded field.
__device__ __forceinline__ index_t node_offset(const Box3& b, index_t t) {
  const index_t row = t / b.nx, i = t - row * b.nx;
  const index_t k = row / b.ny, j = row - k * b.ny;
  return i + j * b.sy + k * b.sz;
}

template <class T>
__global__ void predict_kernel(T* __restrict__ w, const T* __restrict__ lambda, T dt, Box3 box, index_t n) {
  for (index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
       t += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t o = node_offset(box, t);
    common::exercise_predict(w[o], lambda[o], dt);
  }
}

template <class T>
__global__ void project_kernel(const T* __restrict__ u_bar, const T* __restrict__ g, T dt, T* __restrict__ u,
                               T* __restrict__ lambda, Box3 box, index_t n) {
  for (index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
       t += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t o = node_offset(box, t);
    T l = lambda[o], v;
    common::exercise_project(u_bar[o], g[o], dt, v, l);
    u[o] = v;
    lambda[o] = l;
  }
}

unsigned blocks_for(index_t n) {
  const index_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 8192 ? b : 8192);
}

}  // namespace

template <class T>
void early_exercise_predict(T* w, const T* lambda, T dt, const Box3& box, void* stream) {
  const index_t n = box.size();
  if (n <= 0) return;
  predict_kernel<T><<<blocks_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(w, lambda, dt, box, n);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void early_exercise_project(const T* u_bar, const T* g, T dt, T* u, T* lambda, const Box3& box, void* stream) {
  const index_t n = box.size();
  if (n <= 0) return;
  project_kernel<T><<<blocks_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(u_bar, g, dt, u, lambda, box, n);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template void early_exercise_predict<float>(float*, const float*, float, const Box3&, void*);
template void early_exercise_predict<double>(double*, const double*, double, const Box3&, void*);
template void early_exercise_project<float>(const float*, const float*, float, float*, float*, const Box3&, void*);
template void early_exercise_project<double>(const double*, const double*, double, double*, double*, const Box3&,
                                             void*);

}  // namespace adi::cuda_backend
