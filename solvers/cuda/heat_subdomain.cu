// Device kernels of the distributed heat step and its halo exchange (see heat_subdomain.hpp).
// All of them are memory-bound and simple: the halo and face kernels touch O(faces)
// values; heat_combine is the one O(volume) pass, one thread per (i, j) column walking a
// chunk of z planes, so that the x neighbours come from the same warp's loads and the
// y / z neighbours from L2 (a pass reads u about once from memory).
#include <cuda_runtime.h>

#include <algorithm>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/heat_subdomain.hpp"

namespace adi::cuda_backend::heat_subdomain {

namespace {

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

struct SlabShape {
  index_t n, st, n1, n2, s1, s2, count;
  int g;
};

SlabShape slab_shape(const Box3& all, int axis, int g) {
  const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
  SlabShape s;
  s.n = all.extent(Axis(axis));
  s.st = all.stride(Axis(axis));
  s.n1 = all.extent(Axis(o1));
  s.n2 = all.extent(Axis(o2));
  s.s1 = all.stride(Axis(o1));
  s.s2 = all.stride(Axis(o2));
  s.g = g;
  s.count = index_t(g) * s.n1 * s.n2;
  return s;
}

__device__ __forceinline__ index_t slab_node(const SlabShape& s, index_t p, index_t r) {
  const index_t plane = s.n1 * s.n2;
  const index_t t = r / plane, rem = r - t * plane;
  const index_t k = rem / s.n1, j = rem - k * s.n1;
  return (p + t) * s.st + j * s.s1 + k * s.s2;
}

template <class T>
__global__ void pack_kernel(const T* __restrict__ f, SlabShape s, T* __restrict__ send) {
  const index_t q = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= 2 * s.count) return;
  const bool hi = q >= s.count;
  const index_t r = hi ? q - s.count : q;
  send[q] = f[slab_node(s, hi ? s.n - 2 * s.g : s.g, r)];
}

template <class T>
__global__ void unpack_kernel(T* __restrict__ f, SlabShape s, const T* __restrict__ from_lo,
                              const T* __restrict__ from_hi) {
  const index_t q = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= 2 * s.count) return;
  const bool hi = q >= s.count;
  const index_t r = hi ? q - s.count : q;
  const T* src = hi ? from_hi : from_lo;
  if (src == nullptr) return;
  f[slab_node(s, hi ? s.n - s.g : 0, r)] = src[r];
}

constexpr int kTileX = 32, kTileY = 8, kChunkZ = 32;

struct CombineArgs {
  index_t sy, sz, origin;
  index_t lo[3], hi[3];
};

template <class T>
__global__ void __launch_bounds__(kTileX* kTileY)
    combine_kernel(const T* __restrict__ u, T* __restrict__ w, CombineArgs g, T cx, T cy, T cz, bool acc) {
  const index_t i = g.lo[0] + index_t(blockIdx.x) * kTileX + threadIdx.x;
  const index_t j = g.lo[1] + index_t(blockIdx.y) * kTileY + threadIdx.y;
  if (i > g.hi[0] || j > g.hi[1]) return;
  const index_t k0 = g.lo[2] + index_t(blockIdx.z) * kChunkZ;
  const index_t k1 = min(g.hi[2], k0 + kChunkZ - 1);
  const index_t sy = g.sy, sz = g.sz;
  index_t q = g.origin + i + j * sy + k0 * sz;
  // The z neighbours rotate through registers: each plane of the column is loaded once.
  T below = cz != T(0) ? u[q - sz] : T(0), c = u[q];
  for (index_t k = k0; k <= k1; ++k, q += sz) {
    // The next plane's centre; past the chunk's end only when z is used (then a ghost or
    // Dirichlet plane exists there; a 2D field has no plane beyond).
    const T above = (k < k1 || cz != T(0)) ? u[q + sz] : T(0);
    T o = acc ? w[q] : c;
    if (cx != T(0)) o += cx * (u[q - 1] - T(2) * c + u[q + 1]);
    if (cy != T(0)) o += cy * (u[q - sy] - T(2) * c + u[q + sy]);
    if (cz != T(0)) o += cz * (below - T(2) * c + above);
    w[q] = o;
    below = c;
    c = above;
  }
}

struct FaceBatch {
  FaceWrite f[6];
  int count;
};

template <class T>
__global__ void faces_kernel(T* __restrict__ f, index_t sy, index_t sz, index_t origin, FaceBatch b,
                             const double* __restrict__ g_new, const double* __restrict__ g_old, bool stage) {
  const FaceWrite& w = b.f[blockIdx.z];
  const int a = w.p.axis, o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
  const index_t c1 = w.from[o1] + index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const index_t c2 = w.from[o2] + index_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (c1 > w.to[o1] || c2 > w.to[o2]) return;
  if ((w.skip_lo[o1] && c1 == w.from[o1]) || (w.skip_hi[o1] && c1 == w.to[o1]) ||
      (w.skip_lo[o2] && c2 == w.from[o2]) || (w.skip_hi[o2] && c2 == w.to[o2]))
    return;
  const index_t n1 = w.p.pn[o1];
  const index_t pq = w.p.offset + (c1 - w.p.plo[o1]) + (c2 - w.p.plo[o2]) * n1;
  double v = g_new[pq];
  if (stage) {
    // In-plane neighbours on the plane: along o1 one value away, along o2 one row (n1).
    const index_t d1 = 1, d2 = n1;
    const double w1 = w.weight[o1], w2 = w.weight[o2];
    if (w1 != 0.0)
      v -= w1 * ((g_new[pq - d1] - 2.0 * g_new[pq] + g_new[pq + d1]) -
                 (g_old[pq - d1] - 2.0 * g_old[pq] + g_old[pq + d1]));
    if (w2 != 0.0)
      v -= w2 * ((g_new[pq - d2] - 2.0 * g_new[pq] + g_new[pq + d2]) -
                 (g_old[pq - d2] - 2.0 * g_old[pq] + g_old[pq + d2]));
  }
  index_t node[3];
  node[a] = w.p.plane;
  node[o1] = c1;
  node[o2] = c2;
  f[origin + node[0] + node[1] * sy + node[2] * sz] = T(v);
}

int blocks_for(index_t n, int threads) { return int((n + threads - 1) / threads); }

}  // namespace

index_t halo_count(const Box3& all, int axis, int g) { return slab_shape(all, axis, g).count; }

template <class T>
void pack_halo(const T* f, const Box3& all, int axis, int g, T* send, void* stream) {
  const SlabShape s = slab_shape(all, axis, g);
  if (s.count == 0) return;
  pack_kernel<T><<<blocks_for(2 * s.count, 256), 256, 0, as_stream(stream)>>>(f, s, send);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void unpack_halo(T* f, const Box3& all, int axis, int g, const T* from_lo, const T* from_hi, void* stream) {
  const SlabShape s = slab_shape(all, axis, g);
  if (s.count == 0 || (from_lo == nullptr && from_hi == nullptr)) return;
  unpack_kernel<T><<<blocks_for(2 * s.count, 256), 256, 0, as_stream(stream)>>>(f, s, from_lo, from_hi);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void heat_combine(const T* u, T* w, const Box3& all, index_t origin, const index_t lo[3], const index_t hi[3],
                  const T coef[3], bool accumulate, void* stream) {
  CombineArgs g{all.sy, all.sz, origin, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
  for (int a = 0; a < 3; ++a)
    if (hi[a] < lo[a]) return;
  const dim3 block(kTileX, kTileY, 1);
  const dim3 grid(blocks_for(hi[0] - lo[0] + 1, kTileX), blocks_for(hi[1] - lo[1] + 1, kTileY),
                  blocks_for(hi[2] - lo[2] + 1, kChunkZ));
  combine_kernel<T><<<grid, block, 0, as_stream(stream)>>>(u, w, g, coef[0], coef[1], coef[2], accumulate);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void write_faces(T* f, const Box3& all, index_t origin, const FaceWrite* faces, int count, const double* g_new,
                 const double* g_old, bool stage, void* stream) {
  if (count <= 0) return;
  FaceBatch b{};
  b.count = std::min(count, 6);
  index_t m1 = 1, m2 = 1;
  for (int i = 0; i < b.count; ++i) {
    b.f[i] = faces[i];
    const int a = faces[i].p.axis, o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
    m1 = std::max(m1, faces[i].to[o1] - faces[i].from[o1] + 1);
    m2 = std::max(m2, faces[i].to[o2] - faces[i].from[o2] + 1);
  }
  const dim3 block(32, 8, 1);
  const dim3 grid(blocks_for(m1, 32), blocks_for(m2, 8), unsigned(b.count));
  faces_kernel<T><<<grid, block, 0, as_stream(stream)>>>(f, all.sy, all.sz, origin, b, g_new, g_old, stage);
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

#define ADI_HEAT_MPI_INSTANTIATE(T)                                                                              \
  template void pack_halo<T>(const T*, const Box3&, int, int, T*, void*);                                        \
  template void unpack_halo<T>(T*, const Box3&, int, int, const T*, const T*, void*);                            \
  template void heat_combine<T>(const T*, T*, const Box3&, index_t, const index_t[3], const index_t[3],          \
                                const T[3], bool, void*);                                                        \
  template void write_faces<T>(T*, const Box3&, index_t, const FaceWrite*, int, const double*, const double*, \
                               bool, void*);
ADI_HEAT_MPI_INSTANTIATE(float)
ADI_HEAT_MPI_INSTANTIATE(double)
#undef ADI_HEAT_MPI_INSTANTIATE

}  // namespace adi::cuda_backend::heat_subdomain
