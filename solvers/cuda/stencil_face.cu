// Face kernels of the ADI operator on the GPU (the CUDA versions of
// solvers/cpu/stencil_face.cpp): boundary data lives on O(n^2) nodes, so one thread per
// face node is all they need. Plus two that exist only here, to save launches in the
// stage loop: several face writes in one launch (set_boundary writes up to six faces),
// and the Dirichlet values of an intermediate stage computed from the face arrays alone.
#include <cuda_runtime.h>

#include <algorithm>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

namespace {

using adi::detail::AxisStencil;
using adi::detail::FaceRegion;
using adi::detail::StencilView;

constexpr int kFaceX = 32, kFaceY = 8;

// The region's two other axes (in order x, y, z) and their ranges.
struct FaceShape {
  int a, p, q;
  index_t lo1, hi1, lo2, hi2;
};
__host__ __device__ inline FaceShape face_shape(const FaceRegion& r) {
  FaceShape s;
  s.a = static_cast<int>(r.axis);
  s.p = s.a == 0 ? 1 : 0;
  s.q = s.a == 2 ? 1 : 2;
  s.lo1 = r.lo[s.p];
  s.hi1 = r.hi[s.p];
  s.lo2 = r.lo[s.q];
  s.hi2 = r.hi[s.q];
  return s;
}

inline dim3 face_grid(index_t n1, index_t n2, unsigned z = 1) {
  return dim3(static_cast<unsigned>((n1 + kFaceX - 1) / kFaceX),
              static_cast<unsigned>((n2 + kFaceY - 1) / kFaceY < 65535 ? (n2 + kFaceY - 1) / kFaceY : 65535), z);
}

__device__ __forceinline__ index_t stride_of(const Box3& b, int axis) {
  return axis == 0 ? 1 : axis == 1 ? b.sy : b.sz;
}
__device__ __forceinline__ index_t extent_of(const Box3& b, int axis) {
  return axis == 0 ? b.nx : axis == 1 ? b.ny : b.nz;
}

template <class T>
__global__ void face_kernel(T* f, Box3 box, FaceShape sh, index_t plane, const T* values, T scale, bool add) {
  const index_t n1 = extent_of(box, sh.p);
  const index_t c1 = sh.lo1 + static_cast<index_t>(blockIdx.x) * kFaceX + threadIdx.x;
  if (c1 > sh.hi1) return;
  for (index_t c2 = sh.lo2 + static_cast<index_t>(blockIdx.y) * kFaceY + threadIdx.y; c2 <= sh.hi2;
       c2 += static_cast<index_t>(gridDim.y) * kFaceY) {
    T& x = f[plane * stride_of(box, sh.a) + c1 * stride_of(box, sh.p) + c2 * stride_of(box, sh.q)];
    const T val = scale * values[c1 + c2 * n1];
    x = add ? x + val : val;
  }
}

template <class T>
struct FaceWrites {
  FaceWrite<T> w[kMaxFaceWrites];
  int count;
};

// blockIdx.z = which write. A node that a later write also covers is left to it.
template <class T>
__global__ void faces_kernel(T* f, Box3 box, FaceWrites<T> ws) {
  const int me = static_cast<int>(blockIdx.z);
  const FaceRegion& r = ws.w[me].region;
  const FaceShape sh = face_shape(r);
  const index_t n1 = extent_of(box, sh.p);
  const index_t c1 = sh.lo1 + static_cast<index_t>(blockIdx.x) * kFaceX + threadIdx.x;
  if (c1 > sh.hi1) return;
  for (index_t c2 = sh.lo2 + static_cast<index_t>(blockIdx.y) * kFaceY + threadIdx.y; c2 <= sh.hi2;
       c2 += static_cast<index_t>(gridDim.y) * kFaceY) {
    index_t idx[3];
    idx[sh.a] = r.plane;
    idx[sh.p] = c1;
    idx[sh.q] = c2;
    bool later = false;
    for (int o = me + 1; o < ws.count && !later; ++o) {
      const FaceRegion& ro = ws.w[o].region;
      const int ao = static_cast<int>(ro.axis);
      bool in = idx[ao] == ro.plane;
      for (int d = 0; d < 3; ++d)
        if (d != ao) in = in && idx[d] >= ro.lo[d] && idx[d] <= ro.hi[d];
      later = in;
    }
    if (later) continue;
    f[idx[0] + idx[1] * box.sy + idx[2] * box.sz] = ws.w[me].scale * ws.w[me].values[c1 + c2 * n1];
  }
}

// (A_i u) at a face node for axis i along the face, reading u through `at(step)` (the
// value `step` nodes away along axis i) - shared by the field and face-array versions.
template <class T>
struct AlongFace {
  const AxisStencil<T>& S;
  index_t l, o;  // index along axis i, band index (l or the node)
  template <class At>
  __device__ T apply(const At& at) const {
    return S.d[o] * at(0) - S.a[o] * at(S.prev[l] - l) - S.c[o] * at(S.next[l] - l);
  }
};

// Neumann data of axis i at a node on one of its end planes (0 elsewhere).
template <class T>
__device__ T neumann_term(const Box3& box, const AxisStencil<T>& S, int i, const index_t (&idx)[3],
                          const T* const (&nv)[2]) {
  if (S.periodic) return T(0);
  const int o1 = i == 0 ? 1 : 0, o2 = i == 2 ? 1 : 2;
  const index_t fi = idx[o1] + idx[o2] * extent_of(box, o1);
  const index_t l = idx[i];
  T t = T(0);
  if (l == 0 && nv[0]) t += nv[0][fi];
  if (l == S.n - 1 && nv[1]) t += nv[1][fi];
  return t;
}

template <class T>
struct FaceApplyArgs {
  const T* v;
  T w[3];
  const T* neumann[3][2];
  const T* src;
  T src_scale;
  T* vals;
  bool add;
};

template <class T>
__global__ void face_apply_kernel(StencilView<T> s, FaceShape sh, index_t plane, FaceApplyArgs<T> g) {
  const Box3& box = s.box;
  const index_t n1 = extent_of(box, sh.p);
  const index_t c1 = sh.lo1 + static_cast<index_t>(blockIdx.x) * kFaceX + threadIdx.x;
  if (c1 > sh.hi1) return;
  for (index_t c2 = sh.lo2 + static_cast<index_t>(blockIdx.y) * kFaceY + threadIdx.y; c2 <= sh.hi2;
       c2 += static_cast<index_t>(gridDim.y) * kFaceY) {
    index_t idx[3];
    idx[sh.a] = plane;
    idx[sh.p] = c1;
    idx[sh.q] = c2;
    const index_t node = idx[0] + idx[1] * box.sy + idx[2] * box.sz;
    T acc = g.src ? g.src_scale * g.src[node] : T(0);
    for (int i = 0; i < 3; ++i) {
      const AxisStencil<T>& S = s.axis[i];
      if (i == sh.a || !S.active || g.w[i] == T(0)) continue;
      const index_t l = idx[i], st = stride_of(box, i);
      const AlongFace<T> A{S, l, S.shared ? l : node};
      const T* v = g.v;
      T sum = A.apply([&](index_t k) { return v[node + k * st]; });
      sum += neumann_term<T>(box, S, i, idx, g.neumann[i]);
      acc += g.w[i] * sum;
    }
    T& out = g.vals[c1 + c2 * n1];
    out = g.add ? out + acc : acc;
  }
}

template <class T>
struct StageFaceArgs {
  const T* g_new;
  const T* g_old;
  T w[3];
  const T* nn[3][2];
  const T* no[3][2];
  const T* src_new;
  const T* src_old;
  T src_scale;
  T* out;
};

template <class T>
__global__ void stage_face_kernel(StencilView<T> s, FaceShape sh, index_t plane, StageFaceArgs<T> g) {
  const Box3& box = s.box;
  const index_t n1 = extent_of(box, sh.p);
  const index_t c1 = sh.lo1 + static_cast<index_t>(blockIdx.x) * kFaceX + threadIdx.x;
  if (c1 > sh.hi1) return;
  for (index_t c2 = sh.lo2 + static_cast<index_t>(blockIdx.y) * kFaceY + threadIdx.y; c2 <= sh.hi2;
       c2 += static_cast<index_t>(gridDim.y) * kFaceY) {
    index_t idx[3];
    idx[sh.a] = plane;
    idx[sh.p] = c1;
    idx[sh.q] = c2;
    const index_t node = idx[0] + idx[1] * box.sy + idx[2] * box.sz;
    const index_t fi = c1 + c2 * n1;
    T acc = T(0);
    for (int i = 0; i < 3; ++i) {
      const AxisStencil<T>& S = s.axis[i];
      if (i == sh.a || !S.active || g.w[i] == T(0)) continue;
      const index_t l = idx[i], step = i == sh.p ? 1 : n1;  // neighbours along i in face coordinates
      const AlongFace<T> A{S, l, S.shared ? l : node};
      const T* gn = g.g_new;
      const T* go = g.g_old;
      T diff = A.apply([&](index_t k) { return gn[fi + k * step]; }) -
               A.apply([&](index_t k) { return go[fi + k * step]; });
      diff += neumann_term<T>(box, S, i, idx, g.nn[i]) - neumann_term<T>(box, S, i, idx, g.no[i]);
      acc += g.w[i] * diff;
    }
    if (g.src_new) acc += g.src_scale * g.src_new[node];
    if (g.src_old) acc -= g.src_scale * g.src_old[node];
    g.out[fi] = g.g_new[fi] + acc;
  }
}

}  // namespace

template <class T>
void stencil_face(T* f, const Box3& box, const FaceRegion& r, const T* values, T scale, bool add, void* stream) {
  const FaceShape sh = face_shape(r);
  if (sh.hi1 < sh.lo1 || sh.hi2 < sh.lo2) return;
  face_kernel<T><<<face_grid(sh.hi1 - sh.lo1 + 1, sh.hi2 - sh.lo2 + 1), dim3(kFaceX, kFaceY), 0,
                   static_cast<cudaStream_t>(stream)>>>(f, box, sh, r.plane, values, scale, add);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void stencil_faces(T* f, const Box3& box, const FaceWrite<T>* writes, int count, void* stream) {
  if (count <= 0) return;
  if (count > kMaxFaceWrites) throw InvalidArgument("stencil_faces: at most 6 faces per launch");
  FaceWrites<T> ws{};
  ws.count = count;
  index_t n1 = 1, n2 = 1;
  for (int k = 0; k < count; ++k) {
    ws.w[k] = writes[k];
    const FaceShape sh = face_shape(writes[k].region);
    n1 = std::max<index_t>(n1, sh.hi1 - sh.lo1 + 1);
    n2 = std::max<index_t>(n2, sh.hi2 - sh.lo2 + 1);
  }
  faces_kernel<T><<<face_grid(n1, n2, static_cast<unsigned>(count)), dim3(kFaceX, kFaceY), 0,
                    static_cast<cudaStream_t>(stream)>>>(f, box, ws);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void stencil_face_apply(const StencilView<T>& s, const FaceRegion& r, const T* v, const std::array<T, 3>& w,
                        const std::array<std::array<const T*, 2>, 3>& neumann, const T* src, T src_scale, T* vals,
                        bool add, void* stream) {
  const FaceShape sh = face_shape(r);
  if (sh.hi1 < sh.lo1 || sh.hi2 < sh.lo2) return;
  FaceApplyArgs<T> g{};
  g.v = v;
  for (int i = 0; i < 3; ++i) {
    g.w[i] = w[i];
    g.neumann[i][0] = neumann[i][0];
    g.neumann[i][1] = neumann[i][1];
  }
  g.src = src;
  g.src_scale = src_scale;
  g.vals = vals;
  g.add = add;
  face_apply_kernel<T><<<face_grid(sh.hi1 - sh.lo1 + 1, sh.hi2 - sh.lo2 + 1), dim3(kFaceX, kFaceY), 0,
                         static_cast<cudaStream_t>(stream)>>>(s, sh, r.plane, g);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void stage_face_values(const StencilView<T>& s, const FaceRegion& r, const T* g_new, const T* g_old,
                       const std::array<T, 3>& w, const std::array<std::array<const T*, 2>, 3>& neumann_new,
                       const std::array<std::array<const T*, 2>, 3>& neumann_old, const T* src_new,
                       const T* src_old, T src_scale, T* out, void* stream) {
  const FaceShape sh = face_shape(r);
  if (sh.hi1 < sh.lo1 || sh.hi2 < sh.lo2) return;
  StageFaceArgs<T> g{};
  g.g_new = g_new;
  g.g_old = g_old;
  for (int i = 0; i < 3; ++i) {
    g.w[i] = w[i];
    for (int side = 0; side < 2; ++side) {
      g.nn[i][side] = neumann_new[i][side];
      g.no[i][side] = neumann_old[i][side];
    }
  }
  g.src_new = src_new;
  g.src_old = src_old;
  g.src_scale = src_scale;
  g.out = out;
  stage_face_kernel<T><<<face_grid(sh.hi1 - sh.lo1 + 1, sh.hi2 - sh.lo2 + 1), dim3(kFaceX, kFaceY), 0,
                         static_cast<cudaStream_t>(stream)>>>(s, sh, r.plane, g);
  ADI_CUDA_CHECK(cudaGetLastError());
}

#define ADI_CUDA_STENCIL_FACE_INSTANTIATE(T)                                                                   \
  template void stencil_face<T>(T*, const Box3&, const FaceRegion&, const T*, T, bool, void*);                 \
  template void stencil_faces<T>(T*, const Box3&, const FaceWrite<T>*, int, void*);                            \
  template void stencil_face_apply<T>(const StencilView<T>&, const FaceRegion&, const T*,                      \
                                      const std::array<T, 3>&, const std::array<std::array<const T*, 2>, 3>&,  \
                                      const T*, T, T*, bool, void*);                                           \
  template void stage_face_values<T>(const StencilView<T>&, const FaceRegion&, const T*, const T*,             \
                                     const std::array<T, 3>&, const std::array<std::array<const T*, 2>, 3>&,   \
                                     const std::array<std::array<const T*, 2>, 3>&, const T*, const T*, T, T*, \
                                     void*);
ADI_CUDA_STENCIL_FACE_INSTANTIATE(float)
ADI_CUDA_STENCIL_FACE_INSTANTIATE(double)

}  // namespace adi::cuda_backend
