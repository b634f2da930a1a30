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

// On the nodes of a Dirichlet face (region), the parts of the other axes applied
// along the face: vals[c1 + c2*n1] (+)= sum_i w[i] ((A_i v) + neumann_i) + src_scale*src,
// where neumann[i][side] (face values of axis i's Neumann faces, in their own face
// coordinates, may be null) enter at nodes on those faces. Used for the boundary
// values of intermediate ADI stages.
template <class T>
void stencil_face_apply(const detail::StencilView<T>& view, const detail::FaceRegion& region, const T* v,
                        const std::array<T, 3>& w, const std::array<std::array<const T*, 2>, 3>& neumann,
                        const T* src, T src_scale, T* vals, bool add, int threads);

}  // namespace adi::cpu
