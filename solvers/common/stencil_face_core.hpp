#pragma once
// The per-node formulas of the ADI operator's face kernels, written once for the host
// (solvers/cpu/stencil_face.cpp) and the GPU (solvers/cuda/stencil_face.cu).
//
// The Dirichlet value of an intermediate ADI stage on a face node is
//   g_new + sum_i w[i] [(A_i g_new + N_i(t_new)) - (A_i g_old + N_i(t_old))]
//         + src_scale (src_new - src_old),
// with A_i acting along the face (the axes i other than the face's own with w[i] != 0),
// reading only the face's own data g (arrays indexed c1 + c2 * n1 like FaceRegion's
// values) and N_i the Neumann data of axis i at its end planes. Using the face's own data
// on its edges too (not a field where another face's data may have been written last)
// makes the value depend on the boundary condition of this face alone, the same on every
// backend and on every rank of a decomposition.
#include <array>

#include "adi/base/stencil.hpp"

#if defined(__CUDACC__)
#define ADI_FACE_HD __host__ __device__ __forceinline__
#else
#define ADI_FACE_HD inline
#endif

namespace adi::common {

// A face region's own axis a and its two other axes p < q (x, y, z order) with ranges.
struct FaceShape {
  int a, p, q;
  index_t lo1, hi1, lo2, hi2;
};
ADI_FACE_HD FaceShape face_shape(const detail::FaceRegion& r) {
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
ADI_FACE_HD index_t box_stride(const Box3& b, int axis) { return axis == 0 ? 1 : axis == 1 ? b.sy : b.sz; }
ADI_FACE_HD index_t box_extent(const Box3& b, int axis) { return axis == 0 ? b.nx : axis == 1 ? b.ny : b.nz; }

// (A_i u) at index l along axis i (band index o: l for shared bands, else the node),
// reading u through at(k), the value k nodes away along i.
template <class T, class At>
ADI_FACE_HD T along_axis(const detail::AxisStencil<T>& S, index_t l, index_t o, const At& at) {
  return S.d[o] * at(0) - S.a[o] * at(S.prev[l] - l) - S.c[o] * at(S.next[l] - l);
}

// Neumann data of axis i at a node on one of its end planes (0 elsewhere); nv[side] are
// the end planes' face arrays in their own face coordinates (null: none).
template <class T>
ADI_FACE_HD T neumann_term(const Box3& box, const detail::AxisStencil<T>& S, int i, const index_t (&idx)[3],
                           const T* const (&nv)[2]) {
  if (S.periodic) return T(0);
  const int o1 = i == 0 ? 1 : 0, o2 = i == 2 ? 1 : 2;
  const index_t fi = idx[o1] + idx[o2] * box_extent(box, o1);
  const index_t l = idx[i];
  T t = T(0);
  if (l == 0 && nv[0]) t += nv[0][fi];
  if (l == S.n - 1 && nv[1]) t += nv[1][fi];
  return t;
}

// The arguments of the intermediate-stage face values (see the top of this file).
template <class T>
struct StageFaceArgs {
  const T* g_new;
  const T* g_old;
  T w[3];
  const T* nn[3][2];  // Neumann data at t_new per axis and side (null: none)
  const T* no[3][2];  // ... at t_old
  const T* src_new;   // field-shaped (null: none)
  const T* src_old;
  T src_scale;
  T* out;
};

// Packs the arguments (host side of both backends).
template <class T>
inline StageFaceArgs<T> stage_face_args(const T* g_new, const T* g_old, const std::array<T, 3>& w,
                                        const std::array<std::array<const T*, 2>, 3>& neumann_new,
                                        const std::array<std::array<const T*, 2>, 3>& neumann_old,
                                        const T* src_new, const T* src_old, T src_scale, T* out) {
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
  return g;
}

// The stage value at face coordinates (c1, c2) of a face region with shape sh at `plane`.
template <class T>
ADI_FACE_HD void stage_face_node(const detail::StencilView<T>& s, const FaceShape& sh, index_t plane, index_t c1,
                                 index_t c2, const StageFaceArgs<T>& g) {
  const Box3& box = s.box;
  const index_t n1 = box_extent(box, sh.p);
  index_t idx[3];
  idx[sh.a] = plane;
  idx[sh.p] = c1;
  idx[sh.q] = c2;
  const index_t node = idx[0] + idx[1] * box.sy + idx[2] * box.sz;
  const index_t fi = c1 + c2 * n1;
  T acc = T(0);
  for (int i = 0; i < 3; ++i) {
    const detail::AxisStencil<T>& S = s.axis[i];
    if (i == sh.a || !S.active || g.w[i] == T(0)) continue;
    const index_t l = idx[i], step = i == sh.p ? 1 : n1;  // neighbours along i in face coordinates
    const index_t o = S.shared ? l : node;
    const T* gn = g.g_new;
    const T* go = g.g_old;
    T diff = along_axis(S, l, o, [&](index_t k) { return gn[fi + k * step]; }) -
             along_axis(S, l, o, [&](index_t k) { return go[fi + k * step]; });
    diff += neumann_term<T>(box, S, i, idx, g.nn[i]) - neumann_term<T>(box, S, i, idx, g.no[i]);
    acc += g.w[i] * diff;
  }
  if (g.src_new) acc += g.src_scale * g.src_new[node];
  if (g.src_old) acc -= g.src_scale * g.src_old[node];
  g.out[fi] = g.g_new[fi] + acc;
}

}  // namespace adi::common
