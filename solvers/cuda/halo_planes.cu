// Device halo slabs (see halo_planes.hpp): one thread per value, O(faces) work.
#include <cuda_runtime.h>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/halo_planes.hpp"

namespace adi::cuda_backend::halo {

namespace {

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
int blocks_for(index_t n, int threads) { return int((n + threads - 1) / threads); }

struct Slab {
  index_t st, n1, n2, s1, s2, count, p;
};

Slab slab(const Box3& all, int axis, index_t p, int g) {
  const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
  Slab s;
  s.st = all.stride(Axis(axis));
  s.n1 = all.extent(Axis(o1));
  s.n2 = all.extent(Axis(o2));
  s.s1 = all.stride(Axis(o1));
  s.s2 = all.stride(Axis(o2));
  s.count = slab_count(all, axis, g);
  s.p = p;
  return s;
}

__device__ __forceinline__ index_t slab_node(const Slab& s, index_t r) {
  const index_t plane = s.n1 * s.n2;
  const index_t t = r / plane, rem = r - t * plane;
  const index_t k = rem / s.n1, j = rem - k * s.n1;
  return (s.p + t) * s.st + j * s.s1 + k * s.s2;
}

template <class T>
__global__ void pack_kernel(const T* __restrict__ f, Slab s, T* __restrict__ buf) {
  const index_t q = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q < s.count) buf[q] = f[slab_node(s, q)];
}

template <class T>
__global__ void unpack_kernel(T* __restrict__ f, Slab s, const T* __restrict__ buf) {
  const index_t q = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q < s.count) f[slab_node(s, q)] = buf[q];
}

}  // namespace

template <class T>
void pack_slab(const T* f, const Box3& all, int axis, index_t p, int g, T* buf, void* stream) {
  const Slab s = slab(all, axis, p, g);
  if (s.count == 0) return;
  pack_kernel<T><<<blocks_for(s.count, 256), 256, 0, as_stream(stream)>>>(f, s, buf);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void unpack_slab(T* f, const Box3& all, int axis, index_t p, int g, const T* buf, void* stream) {
  const Slab s = slab(all, axis, p, g);
  if (s.count == 0) return;
  unpack_kernel<T><<<blocks_for(s.count, 256), 256, 0, as_stream(stream)>>>(f, s, buf);
  ADI_CUDA_CHECK(cudaGetLastError());
}

void* pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  if (bytes == 0) return nullptr;
  ADI_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

void pinned_free(void* p) noexcept {
  if (p != nullptr) cudaFreeHost(p);
}

template void pack_slab<float>(const float*, const Box3&, int, index_t, int, float*, void*);
template void pack_slab<double>(const double*, const Box3&, int, index_t, int, double*, void*);
template void unpack_slab<float>(float*, const Box3&, int, index_t, int, const float*, void*);
template void unpack_slab<double>(double*, const Box3&, int, index_t, int, const double*, void*);

}  // namespace adi::cuda_backend::halo
