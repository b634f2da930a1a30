// Face writes: boundary data lives on O(n^2) nodes, so a plain loop over the face
// (threads over its outer index) is all this needs.
#include "solvers/cpu/stencil_face.hpp"

#include "solvers/common/stencil_face_core.hpp"

#include <omp.h>

namespace adi::cpu {

template <class T>
void stencil_face(T* f, const Box3& box, const detail::FaceRegion& r, const T* values, T scale, bool add,
                  int threads) {
  const int a = static_cast<int>(r.axis);
  const int p = a == 0 ? 1 : 0, q = a == 2 ? 1 : 2;  // the other two axes, in order
  const Axis ap = static_cast<Axis>(p), aq = static_cast<Axis>(q);
  const index_t sp = box.stride(ap), sq = box.stride(aq), sa = box.stride(r.axis);
  const index_t n1 = box.extent(ap);
  const index_t c2lo = r.lo[q], c2hi = r.hi[q];
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt) if ((c2hi - c2lo) * (r.hi[p] - r.lo[p]) > 4096)
  for (index_t c2 = c2lo; c2 <= c2hi; ++c2)
    for (index_t c1 = r.lo[p]; c1 <= r.hi[p]; ++c1) {
      T& x = f[r.plane * sa + c1 * sp + c2 * sq];
      const T val = scale * values[c1 + c2 * n1];
      x = add ? x + val : val;
    }
}

template <class T>
void stage_face_values(const detail::StencilView<T>& s, const detail::FaceRegion& r, const T* g_new, const T* g_old,
                       const std::array<T, 3>& w, const std::array<std::array<const T*, 2>, 3>& neumann_new,
                       const std::array<std::array<const T*, 2>, 3>& neumann_old, const T* src_new,
                       const T* src_old, T src_scale, T* out, int threads) {
  const common::FaceShape sh = common::face_shape(r);
  const auto g = common::stage_face_args(g_new, g_old, w, neumann_new, neumann_old, src_new, src_old, src_scale, out);
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt) if ((sh.hi2 - sh.lo2) * (sh.hi1 - sh.lo1) > 4096)
  for (index_t c2 = sh.lo2; c2 <= sh.hi2; ++c2)
    for (index_t c1 = sh.lo1; c1 <= sh.hi1; ++c1) common::stage_face_node(s, sh, r.plane, c1, c2, g);
}

#define ADI_CPU_STAGE_FACE_INSTANTIATE(T)                                                                      \
  template void stage_face_values<T>(const detail::StencilView<T>&, const detail::FaceRegion&, const T*,      \
                                     const T*, const std::array<T, 3>&,                                        \
                                     const std::array<std::array<const T*, 2>, 3>&,                            \
                                     const std::array<std::array<const T*, 2>, 3>&, const T*, const T*, T, T*, \
                                     int);
ADI_CPU_STAGE_FACE_INSTANTIATE(float)
ADI_CPU_STAGE_FACE_INSTANTIATE(double)

template void stencil_face<float>(float*, const Box3&, const detail::FaceRegion&, const float*, float, bool, int);
template void stencil_face<double>(double*, const Box3&, const detail::FaceRegion&, const double*, double, bool,
                                   int);

}  // namespace adi::cpu
