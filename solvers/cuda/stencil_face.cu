// Face kernels of the ADI operator on the GPU (the CUDA versions of
// solvers/cpu/stencil_face.cpp): boundary data lives on O(n^2) nodes, so one thread per
// face node is all they need. Plus one that exists only here, to save launches in the
// stage loop: several face writes in one launch (set_boundary writes up to six faces).
// The intermediate stage's face values are solvers/common/stencil_face_core.hpp's formula.
#include <cuda_runtime.h>

#include <algorithm>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/common/stencil_face_core.hpp"

namespace adi::cuda_backend {

namespace {

using adi::detail::AxisStencil;
using adi::detail::FaceRegion;
using adi::detail::StencilView;

constexpr int kFaceX = 32, kFaceY = 8;

using common::FaceShape;
using common::face_shape;

inline dim3 face_grid(index_t n1, index_t n2, unsigned z = 1) {
  return dim3(static_cast<unsigned>((n1 + kFaceX - 1) / kFaceX),
              static_cast<unsigned>((n2 + kFaceY - 1) / kFaceY < 65535 ? (n2 + kFaceY - 1) / kFaceY : 65535), z);
}

__device__ __forceinline__ index_t stride_of(const Box3& b, int axis) { return common::box_stride(b, axis); }
__device__ __forceinline__ index_t extent_of(const Box3& b, int axis) { return common::box_extent(b, axis); }

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

// One thread per face node; the formula is solvers/common/stencil_face_core.hpp's.
template <class T>
__global__ void stage_face_kernel(StencilView<T> s, FaceShape sh, index_t plane, common::StageFaceArgs<T> g) {
  const index_t c1 = sh.lo1 + static_cast<index_t>(blockIdx.x) * kFaceX + threadIdx.x;
  if (c1 > sh.hi1) return;
  for (index_t c2 = sh.lo2 + static_cast<index_t>(blockIdx.y) * kFaceY + threadIdx.y; c2 <= sh.hi2;
       c2 += static_cast<index_t>(gridDim.y) * kFaceY)
    common::stage_face_node(s, sh, plane, c1, c2, g);
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
void stage_face_values(const StencilView<T>& s, const FaceRegion& r, const T* g_new, const T* g_old,
                       const std::array<T, 3>& w, const std::array<std::array<const T*, 2>, 3>& neumann_new,
                       const std::array<std::array<const T*, 2>, 3>& neumann_old, const T* src_new,
                       const T* src_old, T src_scale, T* out, void* stream) {
  const FaceShape sh = face_shape(r);
  if (sh.hi1 < sh.lo1 || sh.hi2 < sh.lo2) return;
  const auto g = common::stage_face_args(g_new, g_old, w, neumann_new, neumann_old, src_new, src_old, src_scale, out);
  stage_face_kernel<T><<<face_grid(sh.hi1 - sh.lo1 + 1, sh.hi2 - sh.lo2 + 1), dim3(kFaceX, kFaceY), 0,
                         static_cast<cudaStream_t>(stream)>>>(s, sh, r.plane, g);
  ADI_CUDA_CHECK(cudaGetLastError());
}

#define ADI_CUDA_STENCIL_FACE_INSTANTIATE(T)                                                                   \
  template void stencil_face<T>(T*, const Box3&, const FaceRegion&, const T*, T, bool, void*);                 \
  template void stencil_faces<T>(T*, const Box3&, const FaceWrite<T>*, int, void*);                            \
  template void stage_face_values<T>(const StencilView<T>&, const FaceRegion&, const T*, const T*,             \
                                     const std::array<T, 3>&, const std::array<std::array<const T*, 2>, 3>&,   \
                                     const std::array<std::array<const T*, 2>, 3>&, const T*, const T*, T, T*, \
                                     void*);
ADI_CUDA_STENCIL_FACE_INSTANTIATE(float)
ADI_CUDA_STENCIL_FACE_INSTANTIATE(double)

}  // namespace adi::cuda_backend
