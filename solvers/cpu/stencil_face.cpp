// Face writes: boundary data lives on O(n^2) nodes, so a plain loop over the face
// (threads over its outer index) is all this needs.
#include "solvers/cpu/stencil_face.hpp"

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
void stencil_face_apply(const detail::StencilView<T>& s, const detail::FaceRegion& r, const T* v,
                        const std::array<T, 3>& w, const std::array<std::array<const T*, 2>, 3>& neumann,
                        const T* src, T src_scale, T* vals, bool add, int threads) {
  const Box3& box = s.box;
  const int a = static_cast<int>(r.axis);
  const int p = a == 0 ? 1 : 0, q = a == 2 ? 1 : 2;
  const index_t n1 = box.extent(static_cast<Axis>(p));
  const index_t st[3] = {1, box.sy, box.sz};
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt) if ((r.hi[q] - r.lo[q]) * (r.hi[p] - r.lo[p]) > 4096)
  for (index_t c2 = r.lo[q]; c2 <= r.hi[q]; ++c2)
    for (index_t c1 = r.lo[p]; c1 <= r.hi[p]; ++c1) {
      index_t idx[3];
      idx[a] = r.plane;
      idx[p] = c1;
      idx[q] = c2;
      const index_t node = idx[0] + idx[1] * box.sy + idx[2] * box.sz;
      T acc = src ? src_scale * src[node] : T(0);
      for (int i = 0; i < 3; ++i) {
        const detail::AxisStencil<T>& S = s.axis[i];
        if (i == a || !S.active || w[i] == T(0)) continue;
        const index_t l = idx[i];
        const index_t o = S.shared ? l : node;
        T sum = S.d[o] * v[node] - S.a[o] * v[node + (S.prev[l] - l) * st[i]] -
                S.c[o] * v[node + (S.next[l] - l) * st[i]];
        // Neumann ghost term of axis i at the ends of its lines.
        const int oi[2] = {i == 0 ? 1 : 0, i == 2 ? 1 : 2};
        const index_t fi = idx[oi[0]] + idx[oi[1]] * box.extent(static_cast<Axis>(oi[0]));
        if (!S.periodic && l == 0 && neumann[i][0]) sum += neumann[i][0][fi];
        if (!S.periodic && l == S.n - 1 && neumann[i][1]) sum += neumann[i][1][fi];
        acc += w[i] * sum;
      }
      T& out = vals[c1 + c2 * n1];
      out = add ? out + acc : acc;
    }
}

template void stencil_face_apply<float>(const detail::StencilView<float>&, const detail::FaceRegion&, const float*,
                                        const std::array<float, 3>&,
                                        const std::array<std::array<const float*, 2>, 3>&, const float*, float,
                                        float*, bool, int);
template void stencil_face_apply<double>(const detail::StencilView<double>&, const detail::FaceRegion&,
                                         const double*, const std::array<double, 3>&,
                                         const std::array<std::array<const double*, 2>, 3>&, const double*, double,
                                         double*, bool, int);

template void stencil_face<float>(float*, const Box3&, const detail::FaceRegion&, const float*, float, bool, int);
template void stencil_face<double>(double*, const Box3&, const detail::FaceRegion&, const double*, double, bool,
                                   int);

}  // namespace adi::cpu
