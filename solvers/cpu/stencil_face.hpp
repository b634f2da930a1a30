#pragma once
// Host kernel: writes (or adds) per-node face values into one face of a field:
// Dirichlet data g(t), Neumann ghost-elimination terms.
#include "adi/detail/stencil.hpp"

namespace adi::cpu {

// f[node] = (add ? f[node] : 0) + scale * values[c1 + c2*n1] over the region's face.
template <class T>
void stencil_face(T* f, const Box3& box, const detail::FaceRegion& region, const T* values, T scale,
                  bool add, int threads);

}  // namespace adi::cpu
