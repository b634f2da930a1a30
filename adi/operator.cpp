#include "adi/operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "adi/base/stencil.hpp"
#include "adi/error.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/cpu/stencil_apply.hpp"
#include "solvers/cpu/stencil_diagonal.hpp"
#include "solvers/cpu/stencil_face.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

Coefficient Coefficient::along(Axis a, std::function<double(double)> f) {
  detail::require(static_cast<bool>(f), "Coefficient::along: the function is empty");
  Coefficient c;
  c.fn1_ = std::move(f);
  c.axis_ = a;
  return c;
}

Pde Pde::heat(double kx, double ky, double kz) {
  for (double k : {kx, ky, kz})
    detail::require(std::isfinite(k) && k >= 0.0, "Pde::heat: diffusivity " + std::to_string(k) +
                                                       " must be finite and >= 0");
  Pde p;
  p.diffusion = {Coefficient(kx), Coefficient(ky), Coefficient(kz)};
  return p;
}

namespace {

std::string where(double x, double y, double z) {
  std::ostringstream s;
  s << "(" << x << ", " << y << ", " << z << ")";
  return s.str();
}

// Boundary data of one face at up to two times (a step needs t_n and t_{n+1};
// the next step reuses t_{n+1}). Constant data is evaluated once.
template <class T>
struct FaceCache {
  std::array<double, 2> t{};
  std::array<bool, 2> valid{};
  std::array<Array<T>, 2> vals;
  int last = 0;
};

template <class T>
struct SourceSlot {
  double t = 0.0;
  bool valid = false;
  Field<T> f;
};

// The stencil kernels of the executor's backend: the one place that picks them (host:
// solvers/cpu/stencil_*, CUDA: solvers/cuda/stencil_*.cu, same arguments; CUDA work is
// enqueued on the executor's stream).
template <class T>
struct Stencils {
  static void apply(const Executor& e, const detail::StencilView<T>& v, const detail::ApplyArgs<T>& a) {
    if (e.is_cuda())
      cuda_backend::stencil_apply<T>(v, a, e.stream());
    else
      cpu::stencil_apply<T>(v, a, e.threads());
  }
  static void face(const Executor& e, T* f, const Box3& box, const detail::FaceRegion& r, const T* vals, T scale,
                   bool add) {
    if (e.is_cuda())
      cuda_backend::stencil_face<T>(f, box, r, vals, scale, add, e.stream());
    else
      cpu::stencil_face<T>(f, box, r, vals, scale, add, e.threads());
  }
  static void face_apply(const Executor& e, const detail::StencilView<T>& v, const detail::FaceRegion& r,
                         const T* u, const std::array<T, 3>& w,
                         const std::array<std::array<const T*, 2>, 3>& neumann, const T* src, T src_scale,
                         T* vals, bool add) {
    if (e.is_cuda())
      cuda_backend::stencil_face_apply<T>(v, r, u, w, neumann, src, src_scale, vals, add, e.stream());
    else
      cpu::stencil_face_apply<T>(v, r, u, w, neumann, src, src_scale, vals, add, e.threads());
  }
  static void diagonal(const Executor& e, const T* d, T inv_s, T* b, index_t n) {
    if (e.is_cuda())
      cuda_backend::stencil_diagonal<T>(d, inv_s, b, n, e.stream());
    else
      cpu::stencil_diagonal<T>(d, inv_s, b, n, e.threads());
  }
};

// The other two axes of a face, in order x, y, z.
std::array<int, 2> others(int a) { return {a == 0 ? 1 : 0, a == 2 ? 1 : 2}; }

}  // namespace

template <class T>
struct Operator<T>::Impl {
  Grid grid;
  BoundaryConditions bc;
  Executor exec = Executor::host();
  SourceFunction source;
  int k = 0;
  std::array<bool, 3> active{};
  std::array<index_t, 3> lo{}, hi{};

  struct AxisData {
    bool shared = true;
    bool periodic = false;
    Array<T> a, d, c, b;      // shared bands, length n
    Field<T> fa, fd, fc, fb;  // per-node bands, shaped like the fields
    Array<index_t> prev, next;
    Array<T> fm, f0, fp;
    T s_formed = T(0);  // the s whose diagonal b currently holds (0: none yet)
    std::optional<TridiagonalPlan<T>> plan;
    index_t sweep_offset = 0;
  };
  std::array<AxisData, 3> ax;
  std::array<Field<T>, 3> mixed;
  bool any_mixed = false;
  detail::StencilView<T> view;
  std::array<std::vector<double>, 6> neumann_weight;  // per face node, c1 + c2*n1
  std::array<FaceCache<T>, 6> faces;
  std::array<SourceSlot<T>, 2> src;
  int src_last = 0;

  int threads() const { return exec.threads(); }
  double coord(int a, index_t i) const { return grid.axis(static_cast<Axis>(a))[i]; }
  const Boundary& face(int a, bool hi_side) const { return bc[face_of(static_cast<Axis>(a), hi_side)]; }
  bool dirichlet(int a, bool hi_side) const {
    return active[a] && face(a, hi_side).kind() == BoundaryKind::dirichlet;
  }

  void build_axis(int a, const Pde& pde);
  void build_mixed(const Pde& pde);
  const T* face_values(int f, double t);
  const T* source_at(double t);
  void face_write(Field<T>& F, int f, bool unknown_only, const T* vals, T scale, bool add);
  void set_boundary(double t, Field<T>& V);
  bool stage_correction(int a, const std::array<bool, 3>& later) const {
    for (int i = 0; i < 3; ++i)
      if (later[i] && i != a && active[i]) return true;
    return false;
  }
  void stage_face_correction(int f, T s, double t_new, Field<T>& Y, double t_old, Field<T>& V_old,
                             const std::array<bool, 3>& later);
  Array<T> face_scratch;

  // CUDA: stages along shared-band axes run as one fused kernel (right-hand side,
  // generated bands, solve); see solve_fused.
  bool fused(int a) const {
    return exec.is_cuda() && ax[a].shared && cuda_backend::fused_stage_supported(ax[a].plan->lines());
  }
  void solve_fused(int a, T s, double t_new, const Field<T>& base, Field<T>& Y, double t_old, Field<T>* V_old,
                   const std::array<bool, 3>& later, Field<T>* result);
  detail::FaceRegion region(int f, bool unknown_only) const;
  // All boundary data constant and no source: a stage's boundary correction is exactly 0.
  bool static_data = false;
  std::array<Array<T>, 2> end_scratch;  // CUDA: stage values on the two faces of an axis
  detail::Storage pivot_flag;           // CUDA: set by the fused kernel on a bad pivot
};

// Into face_scratch: - s sum_{i later} [F_i(t_new, g(t_new)) - F_i(t_old, g(t_old))]
// on face f (Y's face holds g(t_new), V_old's g(t_old)). The parts of the later
// axes act along the face, so the boundary data alone determines them.
template <class T>
void Operator<T>::Impl::stage_face_correction(int f, T s, double t_new, Field<T>& Y, double t_old, Field<T>& V_old,
                                           const std::array<bool, 3>& later) {
  const int a = f / 2;
  const auto oth = others(a);
  const index_t n1 = grid.extent(static_cast<Axis>(oth[0])), n2 = grid.extent(static_cast<Axis>(oth[1]));
  if (face_scratch.size() < n1 * n2) {
    index_t m = 0;
    for (int d = 0; d < 3; ++d) {
      const auto o = others(d);
      m = std::max(m, grid.extent(static_cast<Axis>(o[0])) * grid.extent(static_cast<Axis>(o[1])));
    }
    face_scratch = Array<T>(m, exec);
  }
  detail::FaceRegion r;
  r.axis = static_cast<Axis>(a);
  r.plane = f % 2 == 1 ? grid.extent(r.axis) - 1 : 0;
  r.lo = lo;
  r.hi = hi;
  std::array<T, 3> w_new{}, w_old{};
  int m = 0;
  for (int i = 0; i < 3; ++i)
    if (later[i] && i != a && active[i]) {
      w_new[i] = -s;
      w_old[i] = s;
      ++m;
    }
  auto neumann_at = [&](double t) {
    std::array<std::array<const T*, 2>, 3> nv{};
    for (int i = 0; i < 3; ++i)
      for (int side = 0; side < 2; ++side)
        if (w_new[i] != T(0) && face(i, side == 1).kind() == BoundaryKind::neumann)
          nv[i][side] = face_values(2 * i + side, t);
    return nv;
  };
  const T* src_new = source ? source_at(t_new) : nullptr;
  const T* src_old = source ? source_at(t_old) : nullptr;
  const T ks = T(m) / T(k);
  Stencils<T>::face_apply(exec, view, r, Y.data(), w_new, neumann_at(t_new), src_new, -s * ks,
                          face_scratch.data(), false);
  Stencils<T>::face_apply(exec, view, r, V_old.data(), w_old, neumann_at(t_old), src_old, s * ks,
                          face_scratch.data(), true);
}

// Node spacings (h_minus, h_plus) around node i of axis a. Periodic axes wrap with
// h_wrap = x_0 + period - x_{n-1}; Neumann ends mirror the first/last spacing (ghost node).
template <class T>
void Operator<T>::Impl::build_axis(int ai, const Pde& pde) {
  const Axis axis = static_cast<Axis>(ai);
  const AxisGrid& g = grid.axis(axis);
  const index_t n = g.size();
  AxisData& A = ax[ai];
  A.periodic = bc.periodic(axis);
  double hwrap = 0.0;
  if (A.periodic) {
    double period = face(ai, false).period() != 0.0 ? face(ai, false).period() : face(ai, true).period();
    if (period == 0.0) period = (g.hi() - g.lo()) * double(n) / double(n - 1);
    hwrap = g.lo() + period - g.hi();
  }
  const Boundary& blo = face(ai, false);
  const Boundary& bhi = face(ai, true);
  auto spacing = [&](index_t i, double& hm, double& hp) {
    if (A.periodic) {
      hm = i > 0 ? g[i] - g[i - 1] : hwrap;
      hp = i < n - 1 ? g[i + 1] - g[i] : hwrap;
    } else if (i == 0) {
      hm = hp = g[1] - g[0];
    } else if (i == n - 1) {
      hm = hp = g[n - 1] - g[n - 2];
    } else {
      hm = g[i] - g[i - 1];
      hp = g[i + 1] - g[i];
    }
  };

  // Geometry: neighbours and first-derivative weights (mixed terms).
  std::vector<index_t> prev(n), next(n);
  std::vector<T> fm(n), f0(n), fp(n);
  for (index_t i = 0; i < n; ++i) {
    double hm, hp;
    spacing(i, hm, hp);
    const bool end = !A.periodic && (i == 0 || i == n - 1);
    prev[i] = i > 0 ? i - 1 : (A.periodic ? n - 1 : i);
    next[i] = i < n - 1 ? i + 1 : (A.periodic ? 0 : i);
    fm[i] = end ? T(0) : T(-hp / (hm * (hm + hp)));
    f0[i] = end ? T(0) : T((hp - hm) / (hm * hp));
    fp[i] = end ? T(0) : T(hm / (hp * (hm + hp)));
  }
  A.prev = Array<index_t>(n, exec);
  A.next = Array<index_t>(n, exec);
  A.prev.copy_from_host(prev.data());
  A.next.copy_from_host(next.data());
  for (auto [arr, host] : {std::pair{&A.fm, &fm}, std::pair{&A.f0, &f0}, std::pair{&A.fp, &fp}}) {
    *arr = Array<T>(n, exec);
    arr->copy_from_host(host->data());
  }

  const Coefficient& D = pde.diffusion[ai];
  const Coefficient& V = pde.convection[ai];
  const Coefficient& R = pde.reaction;
  auto own = [&](const Coefficient& c) {
    return c.is_constant() || (c.is_function_of_one_axis() && c.axis() == axis);
  };
  const bool separable = own(D) && own(V) && own(R);
  const double rk = 1.0 / double(k);
  const auto oth = others(ai);
  const index_t n1 = grid.extent(static_cast<Axis>(oth[0])), n2 = grid.extent(static_cast<Axis>(oth[1]));
  const bool neu_lo = blo.kind() == BoundaryKind::neumann, neu_hi = bhi.kind() == BoundaryKind::neumann;
  const bool lin_lo = blo.kind() == BoundaryKind::linear, lin_hi = bhi.kind() == BoundaryKind::linear;
  if (neu_lo) neumann_weight[2 * ai].assign(static_cast<std::size_t>(n1 * n2), 0.0);
  if (neu_hi) neumann_weight[2 * ai + 1].assign(static_cast<std::size_t>(n1 * n2), 0.0);

  // Row i of A_a at node (x, y, z): writes a = -lower, d, c = -upper and, on a
  // Neumann end, the weight of g in the ghost elimination u_ghost = u_inner + 2h g.
  auto row = [&](index_t i, double x, double y, double z, T& a, T& d, T& c, double* nw) {
    const double Dv = D(x, y, z), Vv = V(x, y, z), Rv = R(x, y, z);
    if (!std::isfinite(Dv) || !std::isfinite(Vv) || !std::isfinite(Rv))
      throw InvalidArgument(std::string("Operator: a coefficient of axis ") + axis_name(axis) +
                            " (diffusion " + std::to_string(Dv) + ", convection " + std::to_string(Vv) +
                            ", reaction " + detail::number(Rv) + ") is not finite at " + where(x, y, z));
    double hm, hp;
    spacing(i, hm, hp);
    double lower = Dv * 2.0 / (hm * (hm + hp)) - Vv * hp / (hm * (hm + hp));
    double diag = -Dv * 2.0 / (hm * hp) + Vv * (hp - hm) / (hm * hp) + Rv * rk;
    double upper = Dv * 2.0 / (hp * (hm + hp)) + Vv * hm / (hp * (hm + hp));
    if (!A.periodic && i == 0) {
      if (neu_lo) {
        *nw = 2.0 * hm * lower;
        upper += lower;
        lower = 0.0;
      } else if (lin_lo) {  // ghost u_{-1} = 2 u_0 - u_1
        diag += 2.0 * lower;
        upper -= lower;
        lower = 0.0;
      } else {
        lower = diag = upper = 0.0;  // Dirichlet: identity row
      }
    }
    if (!A.periodic && i == n - 1) {
      if (neu_hi) {
        *nw = 2.0 * hp * upper;
        lower += upper;
        upper = 0.0;
      } else if (lin_hi) {  // ghost u_n = 2 u_{n-1} - u_{n-2}
        diag += 2.0 * upper;
        lower -= upper;
        upper = 0.0;
      } else {
        lower = diag = upper = 0.0;
      }
    }
    a = T(-lower);
    d = T(diag);
    c = T(-upper);
  };

  // Per-node pass (needed for general coefficients or Neumann weights that vary on
  // the face); the per-line pass suffices when everything is separable.
  const bool need_full = !separable;
  std::vector<T> la(n), ld(n), lc(n);
  if (!need_full) {
    const double y0 = coord(oth[0], 0), z0 = coord(oth[1], 0);
    for (index_t i = 0; i < n; ++i) {
      double c[3];
      c[ai] = g[i];
      c[oth[0]] = y0;
      c[oth[1]] = z0;
      double nw = 0.0;
      row(i, c[0], c[1], c[2], la[i], ld[i], lc[i], &nw);
      if (i == 0 && neu_lo) neumann_weight[2 * ai].assign(neumann_weight[2 * ai].size(), nw);
      if (i == n - 1 && neu_hi) neumann_weight[2 * ai + 1].assign(neumann_weight[2 * ai + 1].size(), nw);
    }
    A.shared = true;
  } else {
    Field<T> ha(grid.nx(), grid.ny(), grid.nz()), hd(grid.nx(), grid.ny(), grid.nz()),
        hc(grid.nx(), grid.ny(), grid.nz());
    for (index_t kk = 0; kk < grid.nz(); ++kk)
      for (index_t jj = 0; jj < grid.ny(); ++jj)
        for (index_t ii = 0; ii < grid.nx(); ++ii) {
          const index_t idx[3] = {ii, jj, kk};
          const index_t i = idx[ai];
          double nw = 0.0;
          row(i, coord(0, ii), coord(1, jj), coord(2, kk), ha(ii, jj, kk), hd(ii, jj, kk), hc(ii, jj, kk), &nw);
          const index_t fidx = idx[oth[0]] + idx[oth[1]] * n1;
          if (i == 0 && neu_lo) neumann_weight[2 * ai][fidx] = nw;
          if (i == n - 1 && neu_hi) neumann_weight[2 * ai + 1][fidx] = nw;
        }
    // Separable after all (e.g. a general function that ignores the other
    // coordinates): every line equals line (0, 0) bit for bit -> shared bands.
    for (index_t i = 0; i < n; ++i) {
      index_t idx[3] = {0, 0, 0};
      idx[ai] = i;
      la[i] = ha(idx[0], idx[1], idx[2]);
      ld[i] = hd(idx[0], idx[1], idx[2]);
      lc[i] = hc(idx[0], idx[1], idx[2]);
    }
    bool same = true;
    for (index_t kk = 0; kk < grid.nz() && same; ++kk)
      for (index_t jj = 0; jj < grid.ny() && same; ++jj)
        for (index_t ii = 0; ii < grid.nx() && same; ++ii) {
          const index_t idx[3] = {ii, jj, kk};
          const index_t i = idx[ai];
          same = ha(ii, jj, kk) == la[i] && hd(ii, jj, kk) == ld[i] && hc(ii, jj, kk) == lc[i];
        }
    A.shared = same;
    if (!same) {
      A.fa = Field<T>(grid, exec);
      A.fd = Field<T>(grid, exec);
      A.fc = Field<T>(grid, exec);
      A.fb = Field<T>(grid, exec);
      A.fa.copy_from(ha);
      A.fd.copy_from(hd);
      A.fc.copy_from(hc);
    }
  }
  if (A.shared) {
    A.a = Array<T>(n, exec);
    A.d = Array<T>(n, exec);
    A.c = Array<T>(n, exec);
    A.b = Array<T>(n, exec);
    A.a.copy_from_host(la.data());
    A.d.copy_from_host(ld.data());
    A.c.copy_from_host(lc.data());
  }

  // The sweep box: the whole axis (Dirichlet ends become identity rows) times the
  // unknown ranges of the other two axes.
  std::array<index_t, 3> org = lo, ext{};
  for (int d = 0; d < 3; ++d) ext[d] = hi[d] - lo[d] + 1;
  org[ai] = 0;
  ext[ai] = n;
  const Box3& fb = view.box;
  A.sweep_offset = org[0] + org[1] * fb.sy + org[2] * fb.sz;
  TridiagonalOptions opt;
  opt.periodic = A.periodic;
  A.plan.emplace(exec, BoxLines{Box3{ext[0], ext[1], ext[2], fb.sy, fb.sz}, axis}, opt);

  detail::AxisStencil<T>& S = view.axis[ai];
  S.active = true;
  S.shared = A.shared;
  S.periodic = A.periodic;
  S.n = n;
  S.a = A.shared ? A.a.data() : A.fa.data();
  S.d = A.shared ? A.d.data() : A.fd.data();
  S.c = A.shared ? A.c.data() : A.fc.data();
  S.prev = A.prev.data();
  S.next = A.next.data();
  S.fm = A.fm.data();
  S.f0 = A.f0.data();
  S.fp = A.fp.data();
}

template <class T>
void Operator<T>::Impl::build_mixed(const Pde& pde) {
  const Coefficient* M[3] = {&pde.mixed_xy, &pde.mixed_xz, &pde.mixed_yz};
  const int P[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  const char* names[3] = {"mixed_xy", "mixed_xz", "mixed_yz"};
  for (int m = 0; m < 3; ++m) {
    const int p = P[m][0], q = P[m][1];
    if (M[m]->is_zero() || !active[p] || !active[q]) continue;  // absent, or an axis of one node
    for (int a : {p, q})
      for (bool side : {false, true})
        if (face(a, side).kind() == BoundaryKind::neumann)
          throw Unsupported(std::string("Operator: the mixed term ") + names[m] + " next to the Neumann face " +
                            face_name(face_of(static_cast<Axis>(a), side)) +
                            " is not supported (it would need corner ghost nodes); use Dirichlet or periodic "
                            "conditions on the axes of a mixed derivative");
    Field<T> h(grid.nx(), grid.ny(), grid.nz());
    for (index_t kk = 0; kk < grid.nz(); ++kk)
      for (index_t jj = 0; jj < grid.ny(); ++jj)
        for (index_t ii = 0; ii < grid.nx(); ++ii) {
          const double x = coord(0, ii), y = coord(1, jj), z = coord(2, kk);
          const double v = (*M[m])(x, y, z);
          if (!std::isfinite(v))
            throw InvalidArgument(std::string("Operator: coefficient ") + names[m] + " = " + detail::number(v) +
                                  " is not finite at " + where(x, y, z));
          h(ii, jj, kk) = T(v);
        }
    mixed[m] = Field<T>(grid, exec);
    mixed[m].copy_from(h);
    view.mixed[m] = detail::MixedStencil<T>{true, p, q, mixed[m].data()};
    any_mixed = true;
  }
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
  const index_t n1 = grid.extent(static_cast<Axis>(oth[0])), n2 = grid.extent(static_cast<Axis>(oth[1]));
  const index_t plane = hs ? grid.extent(static_cast<Axis>(a)) - 1 : 0;
  const bool neumann = b.kind() == BoundaryKind::neumann;
  std::vector<T> h(static_cast<std::size_t>(n1 * n2));
  for (index_t c2 = 0; c2 < n2; ++c2)
    for (index_t c1 = 0; c1 < n1; ++c1) {
      index_t idx[3];
      idx[a] = plane;
      idx[oth[0]] = c1;
      idx[oth[1]] = c2;
      const double x = coord(0, idx[0]), y = coord(1, idx[1]), z = coord(2, idx[2]);
      const double v = b.value(t, x, y, z);
      if (!std::isfinite(v))
        throw InvalidArgument(std::string("boundary data on face ") + face_name(static_cast<Face>(f)) + " is " +
                              detail::number(v) + " at t = " + detail::number(t) + ", " + where(x, y, z) +
                              "; the boundary function must return finite values");
      h[c1 + c2 * n1] = T(neumann ? neumann_weight[f][c1 + c2 * n1] * v : v);
    }
  if (c.vals[slot].size() != n1 * n2) c.vals[slot] = Array<T>(n1 * n2, exec);
  c.vals[slot].copy_from_host(h.data());
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
  Field<T> h(grid.nx(), grid.ny(), grid.nz());
  // Every node: the boundary values of intermediate stages need f on Dirichlet faces too.
  for (index_t kk = 0; kk < grid.nz(); ++kk)
    for (index_t jj = 0; jj < grid.ny(); ++jj)
      for (index_t ii = 0; ii < grid.nx(); ++ii) {
        const double x = coord(0, ii), y = coord(1, jj), z = coord(2, kk);
        const double v = source(t, x, y, z);
        if (!std::isfinite(v))
          throw InvalidArgument("Operator: the source f(t, x, y, z) = " + detail::number(v) + " at t = " +
                                detail::number(t) + ", " + where(x, y, z) + " is not finite");
        h(ii, jj, kk) = T(v);
      }
  if (src[slot].f.empty()) src[slot].f = Field<T>(grid, exec);
  src[slot].f.copy_from(h);
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
  r.plane = f % 2 == 1 ? grid.extent(r.axis) - 1 : 0;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = unknown_only ? lo[d] : 0;
    r.hi[d] = unknown_only ? hi[d] : grid.extent(static_cast<Axis>(d)) - 1;
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

// The CUDA stage along a shared-band axis: one fused kernel (solvers/cuda/
// thomas_pcr_fused_stage.cuh) forms the same right-hand side as the general path below
// (base/s - A_a V_old + Neumann and source terms; Dirichlet ends from the face arrays,
// so V_old's boundary need not be written) and solves it. Pivots depend on s only: they
// are checked (one synchronisation) when s changes, not on every stage.
template <class T>
void Operator<T>::Impl::solve_fused(int a, T s, double t_new, const Field<T>& base, Field<T>& Y, double t_old,
                                    Field<T>* V_old, const std::array<bool, 3>& later, Field<T>* result) {
  AxisData& A = ax[a];
  const index_t o = A.sweep_offset;
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  cuda_backend::FusedStage<T> st;
  st.lines = A.plan->lines();
  st.periodic = A.periodic;
  st.base = base.data() + o;
  st.v = V_old ? V_old->data() + o : nullptr;
  st.inv_s = T(1) / s;
  st.a = A.a.data();
  st.d = A.d.data();
  st.c = A.c.data();
  const auto oth = others(a);
  st.face_n1 = grid.extent(static_cast<Axis>(oth[0]));
  st.face_base = lo[oth[0]] + lo[oth[1]] * st.face_n1;
  const bool correct = V_old && !cancel && !static_data && stage_correction(a, later);
  for (int side = 0; side < 2; ++side) {
    const int f = 2 * a + side;
    const BoundaryKind kind = face(a, side == 1).kind();
    if (kind == BoundaryKind::dirichlet) {
      const T* g_new = face_values(f, t_new);
      const T* g_old = V_old ? face_values(f, t_old) : nullptr;
      st.end[side] = g_new;
      st.v_end[side] = g_old;
      if (correct) {
        // The intermediate stage's boundary values (stage_face_correction), from face data.
        const index_t m = grid.extent(static_cast<Axis>(oth[0])) * grid.extent(static_cast<Axis>(oth[1]));
        if (end_scratch[side].size() < m) end_scratch[side] = Array<T>(m, exec);
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
            if (w[i] != T(0) && face(i, sd == 1).kind() == BoundaryKind::neumann) {
              nn[i][sd] = face_values(2 * i + sd, t_new);
              no[i][sd] = face_values(2 * i + sd, t_old);
            }
        const T* sn = source ? source_at(t_new) : nullptr;
        const T* so = source ? source_at(t_old) : nullptr;
        cuda_backend::stage_face_values<T>(view, region(f, true), g_new, g_old, w, nn, no, sn, so,
                                           -s * T(count) / T(k), end_scratch[side].data(), exec.stream());
        st.end[side] = end_scratch[side].data();
      }
    } else if (kind == BoundaryKind::neumann && !cancel) {
      st.neu_add[side] = face_values(f, t_new);
      if (V_old) st.neu_sub[side] = face_values(f, t_old);
    }
  }
  if (source && !cancel) {
    st.src[0] = source_at(t_new) + o;
    st.src_scale[0] = T(1) / T(k);
    if (V_old) {
      st.src[1] = source_at(t_old) + o;
      st.src_scale[1] = T(-1) / T(k);
      st.src[0] = source_at(t_new) + o;
    }
  }
  st.u = (result ? result->data() : Y.data()) + o;
  const bool check = A.s_formed != s;
  int* flag = check ? static_cast<int*>(pivot_flag.get()) : nullptr;
  if (check) {
    const int zero = 0;
    cuda_backend::copy_on_stream(flag, &zero, sizeof(int), cuda_backend::Copy::host_to_device, exec.stream());
  }
  cuda_backend::fused_stage_solve<T>(st, flag, exec.stream());
  if (check) {
    int bad = 0;
    cuda_backend::copy_on_stream(&bad, flag, sizeof(int), cuda_backend::Copy::device_to_host, exec.stream());
    if (bad != 0)
      throw SingularSystem(std::string("Operator::solve: the implicit stage along ") + axis_name(static_cast<Axis>(a)) +
                           " has a zero or non-finite pivot for s = " + detail::number(double(s)) +
                           "; I/s - A is not diagonally dominant enough (take a smaller time step)");
    A.s_formed = s;
  }
}

template <class T>
Operator<T>::Operator(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, const Executor& exec)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.grid = grid;
  p.bc = bc;
  p.exec = exec;
  p.source = pde.source;
  detail::require(grid.size() >= 2, "Operator: grid " + grid.describe() +
                                        " has a single node; give at least one axis n >= 2");
  bc.validate(grid);
  for (int a = 0; a < 3; ++a) {
    p.active[a] = grid.extent(static_cast<Axis>(a)) > 1;
    p.k += p.active[a];
  }
  for (int a = 0; a < 3; ++a) {
    const index_t n = grid.extent(static_cast<Axis>(a));
    p.lo[a] = p.dirichlet(a, false) ? 1 : 0;
    p.hi[a] = n - 1 - (p.dirichlet(a, true) ? 1 : 0);
  }
  p.static_data = !pde.source;
  for (int f = 0; f < 6; ++f) p.static_data = p.static_data && bc[static_cast<Face>(f)].is_constant();
  if (exec.is_cuda()) p.pivot_flag = detail::Storage(sizeof(int), exec);
  for (const Coefficient* c : {&pde.diffusion[0], &pde.diffusion[1], &pde.diffusion[2], &pde.convection[0],
                               &pde.convection[1], &pde.convection[2], &pde.reaction, &pde.mixed_xy,
                               &pde.mixed_xz, &pde.mixed_yz})
    detail::require(!c->is_constant() || std::isfinite(c->constant()),
                    "Operator: a constant PDE coefficient is " + detail::number(c->constant()) +
                        "; coefficients must be finite");
  const index_t sy = Field<T>::padded_row(grid.nx());
  p.view.box = Box3{grid.nx(), grid.ny(), grid.nz(), sy, sy * grid.ny()};
  p.view.lo = p.lo;
  p.view.hi = p.hi;
  for (int a = 0; a < 3; ++a)
    if (p.active[a]) p.build_axis(a, pde);
  p.build_mixed(pde);
}

template <class T>
Operator<T>::~Operator() = default;
template <class T>
Operator<T>::Operator(Operator&&) noexcept = default;
template <class T>
Operator<T>& Operator<T>::operator=(Operator&&) noexcept = default;

template <class T>
const Grid& Operator<T>::grid() const {
  return impl_->grid;
}
template <class T>
const BoundaryConditions& Operator<T>::boundary() const {
  return impl_->bc;
}
template <class T>
const Executor& Operator<T>::executor() const {
  return impl_->exec;
}
template <class T>
int Operator<T>::implicit_axes() const {
  return impl_->k;
}
template <class T>
bool Operator<T>::active(Axis a) const {
  return impl_->active[static_cast<int>(a)];
}
template <class T>
bool Operator<T>::has_mixed() const {
  return impl_->any_mixed;
}
template <class T>
bool Operator<T>::shared_bands(Axis a) const {
  return impl_->active[static_cast<int>(a)] && impl_->ax[static_cast<int>(a)].shared;
}
template <class T>
std::array<index_t, 3> Operator<T>::unknown_lo() const {
  return impl_->lo;
}
template <class T>
std::array<index_t, 3> Operator<T>::unknown_hi() const {
  return impl_->hi;
}

template <class T>
void Operator<T>::check_field(const Field<T>& f, const char* name) const {
  const Grid& g = impl_->grid;
  if (f.empty() || f.nx() != g.nx() || f.ny() != g.ny() || f.nz() != g.nz())
    throw InvalidArgument(std::string("Operator: field ") + name + " has extents " + std::to_string(f.nx()) +
                          " x " + std::to_string(f.ny()) + " x " + std::to_string(f.nz()) + " but the grid is " +
                          g.describe() + "; allocate it as Field<T>(grid, executor)");
  if (f.memory_space() != impl_->exec.memory_space())
    throw InvalidArgument(std::string("Operator: field ") + name + " lives in " +
                          (f.memory_space() == MemorySpace::host ? "host" : "device") +
                          " memory but the operator runs on " + impl_->exec.name() +
                          "; allocate it with the operator's executor");
}

template <class T>
void Operator<T>::set_boundary(double t, Field<T>& V) {
  detail::require(std::isfinite(t), "Operator::set_boundary: time t = " + detail::number(t) + " must be finite");
  check_field(V, "V");
  impl_->set_boundary(t, V);
}

template <class T>
void Operator<T>::apply(double t, Field<T>& V, const std::array<T, 4>& w, T alpha, const Field<T>* base,
                        Field<T>& out) {
  Impl& p = *impl_;
  detail::require(std::isfinite(t), "Operator::apply: time t = " + detail::number(t) + " must be finite");
  check_field(V, "V");
  check_field(out, "out");
  if (base) check_field(*base, "base");
  detail::require(&V != &out && V.data() != out.data(),
                  "Operator::apply: out must not be V (the stencil reads V's neighbours)");
  p.set_boundary(t, V);
  detail::ApplyArgs<T> args;
  args.v = V.data();
  args.base = base ? base->data() : nullptr;
  args.alpha = alpha;
  args.w = w;
  args.out = out.data();
  if (p.source) {
    T ws = 0;
    for (int a = 0; a < 3; ++a)
      if (p.active[a]) ws += w[a + 1];
    if (ws != T(0)) {
      args.src[0] = p.source_at(t);
      args.src_scale[0] = ws / T(p.k);
    }
  }
  Stencils<T>::apply(p.exec, p.view, args);
  for (int a = 0; a < 3; ++a) {
    if (!p.active[a] || w[a + 1] == T(0)) continue;
    for (bool side : {false, true})
      if (p.face(a, side).kind() == BoundaryKind::neumann) {
        const int f = 2 * a + (side ? 1 : 0);
        p.face_write(out, f, true, p.face_values(f, t), w[a + 1], true);
      }
  }
}

template <class T>
void Operator<T>::evaluate(int part, double t, Field<T>& V, Field<T>& out) {
  detail::require(part >= 0 && part <= 3, "Operator::evaluate: part = " + std::to_string(part) +
                                              " must be 0 (mixed) or 1..3 (x, y, z)");
  std::array<T, 4> w{};
  w[part] = T(1);
  apply(t, V, w, T(0), nullptr, out);
}

template <class T>
void Operator<T>::solve(Axis axis, T s, double t_new, const Field<T>& base, Field<T>& Y, double t_old,
                        Field<T>* V_old, std::array<bool, 3> later, Field<T>* result) {
  Impl& p = *impl_;
  const int a = static_cast<int>(axis);
  detail::require(p.active[a], std::string("Operator::solve: axis ") + axis_name(axis) +
                                   " has a single node; there is nothing to solve along it");
  detail::require(std::isfinite(double(s)) && s > T(0),
                  "Operator::solve: s = " + detail::number(double(s)) + " must be finite and > 0 (theta*dt)");
  detail::require(std::isfinite(t_new) && std::isfinite(t_old), "Operator::solve: times must be finite");
  check_field(base, "base");
  check_field(Y, "Y");
  if (result) check_field(*result, "result");
  if (V_old) {
    check_field(*V_old, "V_old");
    detail::require(V_old->data() != Y.data(), "Operator::solve: Y must not be V_old");
  }
  if (p.fused(a)) {
    p.solve_fused(a, s, t_new, base, Y, t_old, V_old, later, result);
    return;
  }
  if (V_old) p.set_boundary(t_old, *V_old);
  typename Impl::AxisData& A = p.ax[a];
  // Right-hand side divided by s (the bands are those of I/s - A_a):
  //   base/s - F_a(t_old, V_old) + g_a(t_new) = base/s - A_a V_old + g_a(t_new) - g_a(t_old).
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  detail::ApplyArgs<T> args;
  args.v = V_old ? V_old->data() : base.data();
  args.base = base.data();
  args.alpha = T(1) / s;
  if (V_old) args.w[a + 1] = T(-1);
  args.out = Y.data();
  if (p.source && !cancel) {
    args.src[0] = p.source_at(t_new);
    args.src_scale[0] = T(1) / T(p.k);
    if (V_old) {
      args.src[1] = p.source_at(t_old);
      args.src_scale[1] = T(-1) / T(p.k);
      args.src[0] = p.source_at(t_new);  // the second lookup may have refreshed the cache
    }
  }
  Stencils<T>::apply(p.exec, p.view, args);
  for (bool side : {false, true}) {
    const int f = 2 * a + (side ? 1 : 0);
    const BoundaryKind kind = p.face(a, side).kind();
    if (kind == BoundaryKind::neumann && !cancel) {
      p.face_write(Y, f, true, p.face_values(f, t_new), T(1), true);
      if (V_old) p.face_write(Y, f, true, p.face_values(f, t_old), T(-1), true);
    } else if (kind == BoundaryKind::dirichlet) {
      // Identity rows: the solve returns the boundary value of the stage there.
      const T* g_new = p.face_values(f, t_new);
      const bool correct = V_old && !cancel && p.stage_correction(a, later);
      if (correct) {
        p.face_write(Y, f, false, g_new, T(1), false);  // A_i reads g(t_new) along the face
        p.stage_face_correction(f, s, t_new, Y, t_old, *V_old, later);
      }
      p.face_write(Y, f, true, g_new, T(1) / s, false);
      if (correct) p.face_write(Y, f, true, p.face_scratch.data(), T(1) / s, true);
    }
  }
  if (A.s_formed != s) {
    if (A.shared)
      Stencils<T>::diagonal(p.exec, A.d.data(), T(1) / s, A.b.data(), A.d.size());
    else
      Stencils<T>::diagonal(p.exec, A.fd.data(), T(1) / s, A.fb.data(), A.fd.box().sz * A.fd.nz());
    A.s_formed = s;
  }
  T* y = Y.data() + A.sweep_offset;
  T* x = result ? result->data() + A.sweep_offset : y;
  if (A.shared) {
    A.plan->solve(SharedBands<T>{A.a.data(), A.b.data(), A.c.data()}, y, x);
  } else {
    const index_t o = A.sweep_offset;
    A.plan->solve(Bands<T>{A.fa.data() + o, A.fb.data() + o, A.fc.data() + o}, y, x);
  }
}

template class Operator<float>;
template class Operator<double>;

}  // namespace adi
