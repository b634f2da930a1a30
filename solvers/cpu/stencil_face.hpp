#pragma once
// Host kernel: writes (or adds) per-node face values into one face of a field:
// Dirichlet data g(t), Neumann ghost-elimination terms.
#include "adi/base/stencil.hpp"

namespace adi::cpu {

// f[node] = (add ? f[node] : 0) + scale * values[c1 + c2*n1] over the region's face.
template <class T>
void stencil_face(T* f, const Box3& box, const detail::FaceRegion& region, const T* values, T scale,
                  bool add, int threads);

}  // namespace adi::cpu

namespace adi::cpu {

// The Dirichlet values of an intermediate ADI stage on the region's face nodes, from
// boundary data alone (solvers/common/stencil_face_core.hpp has the formula and the
// arguments; cuda_backend::stage_face_values is the GPU version).
template <class T>
void stage_face_values(const detail::StencilView<T>& view, const detail::FaceRegion& region, const T* g_new,
                       const T* g_old, const std::array<T, 3>& w,
                       const std::array<std::array<const T*, 2>, 3>& neumann_new,
                       const std::array<std::array<const T*, 2>, 3>& neumann_old, const T* src_new,
                       const T* src_old, T src_scale, T* out, int threads);

}  // namespace adi::cpu
