// adi::Operator: boundary and source data in time, face writes, and the boundary values of intermediate stages.
#include "adi/detail/operator_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace adi {


// Face f's stage values g(t_new) - s sum_{i later} [F_i(t_new, g(t_new)) - F_i(t_old, g(t_old))]:
// the parts of the later axes act along the face, so the boundary data alone determines them.
template <class T>
const T* Operator<T>::Impl::stage_face_values(int f, T s, double t_new, double t_old, bool has_old,
                                              const std::array<bool, 3>& later) {
  const int a = f / 2;
  // No explicit part, or t_old = t_new (g_a(t_new) - g_a(t_old) = 0): the data themselves.
  if (!has_old || t_old == t_new || !stage_correction(a, later)) return face_values(f, t_new);
  std::array<T, 3> w{};
  int count = 0;
  for (int i = 0; i < 3; ++i)
    if (later[i] && i != a && active[i]) {
      w[i] = -s;
      ++count;
    }
  std::array<std::array<const T*, 2>, 3> nn{}, no{};
  for (int i = 0; i < 3; ++i)
    for (int sd = 0; sd < 2; ++sd)
      if (w[i] != T(0) && neumann(i, sd == 1)) {
        nn[i][sd] = face_values(2 * i + sd, t_new);
        no[i][sd] = face_values(2 * i + sd, t_old);
      }
  const T* g_new = face_values(f, t_new);
  const T* g_old = face_values(f, t_old);
  const T* sn = source ? source_at(t_new) : nullptr;
  const T* so = source ? source_at(t_old) : nullptr;
  T* out = end_scratch[f % 2].data();
  Stencils<T>::stage_values(exec, view, region(f, true), g_new, g_old, w, nn, no, sn, so, -s * T(count) / T(k), out);
  return out;
}

// Face values at time t in the executor's memory: g(t) on a Dirichlet face,
// (Neumann weight) * g(t) on a Neumann face.
template <class T>
const T* Operator<T>::Impl::face_values(int f, double t) {
  FaceCache<T>& c = faces[f];
  const Boundary& b = bc[static_cast<Face>(f)];
  int slot;
  if (b.is_constant()) {
    if (c.valid[0]) return c.vals[0].data();
    slot = 0;
  } else {
    for (int s = 0; s < 2; ++s)
      if (c.valid[s] && c.t[s] == t) {
        c.last = s;
        return c.vals[s].data();
      }
    slot = c.valid[0] ? (c.valid[1] ? 1 - c.last : 1) : 0;
  }
  const int a = f / 2;
  const bool hs = f % 2 == 1;
  const auto oth = others(a);
  const index_t n1 = N[oth[0]], n2 = N[oth[1]];
  const index_t plane = hs ? N[a] - 1 : 0;
  const bool neumann = b.kind() == BoundaryKind::neumann;
  if (c.vals[slot].size() != n1 * n2) c.vals[slot] = Array<T>(n1 * n2, exec);
  const bool device = exec.is_cuda();
  c.valid[slot] = false;  // until filled (the host executor's values are written in place)
  T* h = device ? c.upload[slot].buffer(n1 * n2) : c.vals[slot].data();
  for (index_t c2 = 0; c2 < n2; ++c2)
    for (index_t c1 = 0; c1 < n1; ++c1) {
      index_t idx[3];
      idx[a] = plane;
      idx[oth[0]] = c1;
      idx[oth[1]] = c2;
      const double x = coord(0, idx[0]), y = coord(1, idx[1]), z = coord(2, idx[2]);
      const double v = b.value(t, x, y, z);
      if (!std::isfinite(v)) {
        const std::string m = std::string("boundary data on face ") + face_name(static_cast<Face>(f)) + " is " +
                              detail::number(v) + " at t = " + detail::number(t) + ", " + where(x, y, z) +
                              "; the boundary function must return finite values";
        if (!sub) throw InvalidArgument(m);
        fail_later('I', m);
      }
      h[c1 + c2 * n1] = T(neumann ? neumann_weight[f][c1 + c2 * n1] * v : v);
    }
  if (device) c.upload[slot].send(c.vals[slot].data(), n1 * n2, exec.stream());
  c.valid[slot] = true;
  c.t[slot] = t;
  c.last = slot;
  return c.vals[slot].data();
}

template <class T>
const T* Operator<T>::Impl::source_at(double t) {
  for (int s = 0; s < 2; ++s)
    if (src[s].valid && src[s].t == t) {
      src_last = s;
      return src[s].f.data();
    }
  const int slot = src[0].valid ? (src[1].valid ? 1 - src_last : 1) : 0;
  // Evaluated on the host straight into the field (host executor) or into a page-locked
  // buffer uploaded on the stream (CUDA): no host synchronisation, as the face values.
  if (src[slot].f.empty()) src[slot].f = Field<T>(N[0], N[1], N[2], exec);
  src[slot].valid = false;  // until filled
  const Box3& bx = src[slot].f.box();
  const bool device = exec.is_cuda();
  T* h = device ? src[slot].upload.buffer(bx.span()) : src[slot].f.data();
  if (device) std::fill(h, h + bx.span(), T(0));  // the rows' padding too
  // Every node: the boundary values of intermediate stages need f on Dirichlet faces too.
  for (index_t kk = 0; kk < N[2]; ++kk)
    for (index_t jj = 0; jj < N[1]; ++jj)
      for (index_t ii = 0; ii < N[0]; ++ii) {
        const double x = coord(0, ii), y = coord(1, jj), z = coord(2, kk);
        const double v = source(t, x, y, z);
        if (!std::isfinite(v)) {
          const std::string m = "Operator: the source f(t, x, y, z) = " + detail::number(v) + " at t = " +
                                detail::number(t) + ", " + where(x, y, z) + " is not finite";
          if (!sub) throw InvalidArgument(m);
          fail_later('I', m);
        }
        h[ii + jj * bx.sy + kk * bx.sz] = T(v);
      }
  if (device) src[slot].upload.send(src[slot].f.data(), bx.span(), exec.stream());
  src[slot].valid = true;
  src[slot].t = t;
  src_last = slot;
  return src[slot].f.data();
}

// Face f of the grid: the whole face, or only the unknown ranges of the other two axes.
template <class T>
detail::FaceRegion Operator<T>::Impl::region(int f, bool unknown_only) const {
  detail::FaceRegion r;
  r.axis = static_cast<Axis>(f / 2);
  r.plane = f % 2 == 1 ? N[f / 2] - 1 : 0;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = unknown_only ? lo[d] : 0;
    r.hi[d] = unknown_only ? hi[d] : N[d] - 1;
  }
  return r;
}

// Writes/adds face f's values into F: over the whole face, or only over the unknown
// ranges of the other two axes.
template <class T>
void Operator<T>::Impl::face_write(Field<T>& F, int f, bool unknown_only, const T* vals, T scale, bool add) {
  Stencils<T>::face(exec, F.data(), F.box(), region(f, unknown_only), vals, scale, add);
}

template <class T>
void Operator<T>::Impl::set_boundary(double t, Field<T>& V) {
  if (boundary_reuse && reuse_ghosts && bounded == V.data() && bounded_t == t) return;  // (written, unchanged)
  bounded = nullptr;
  write_boundary(t, V);
  if (reuse_ghosts) {
    bounded = V.data();
    bounded_t = t;
  }
}

template <class T>
void Operator<T>::Impl::write_boundary(double t, Field<T>& V) {
  if (exec.is_cuda()) {  // one launch for all faces (the later face wins on shared edges, as below)
    std::array<cuda_backend::FaceWrite<T>, 6> w{};
    int count = 0;
    for (int a = 0; a < 3; ++a)
      for (bool side : {false, true})
        if (dirichlet(a, side)) {
          const int f = 2 * a + (side ? 1 : 0);
          w[count++] = {region(f, false), face_values(f, t), T(1)};
        }
    cuda_backend::stencil_faces<T>(V.data(), V.box(), w.data(), count, exec.stream());
    return;
  }
  for (int a = 0; a < 3; ++a)
    for (bool side : {false, true})
      if (dirichlet(a, side)) {
        const int f = 2 * a + (side ? 1 : 0);
        face_write(V, f, false, face_values(f, t), T(1), false);
      }
}

template struct Operator<float>::Impl;
template struct Operator<double>::Impl;

}  // namespace adi
