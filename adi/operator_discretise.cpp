// adi::Operator: the bands of each axis and the mixed-term stencils (docs/design.md, "The discretisation").
#include "adi/detail/operator_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace adi {


// Node spacings (h_minus, h_plus) around node i of axis a. Periodic axes wrap with
// h_wrap = x_0 + period - x_{n-1}; Neumann ends mirror the first/last spacing (ghost node).
template <class T>
void Operator<T>::Impl::build_axis(int ai, const Pde& pde) {
  const Axis axis = static_cast<Axis>(ai);
  const AxisGrid& g = grid.axis(axis);
  const index_t n = g.size();  // global
  const index_t nl = N[ai];    // this piece's nodes along the axis (ghosts included)
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

  // Geometry: neighbours and first-derivative weights (mixed terms), per node i of the
  // piece (global node gi). A ghost node has no row of its own: it points at itself.
  std::vector<index_t> prev(nl), next(nl);
  std::vector<T> fm(nl), f0(nl), fp(nl);
  auto ghost_row = [&](index_t i) { return i < ghost[ai][0] || i >= nl - ghost[ai][1]; };
  for (index_t i = 0; i < nl; ++i) {
    const index_t gi = global_index(ai, i);
    double hm, hp;
    spacing(gi, hm, hp);
    const bool end = !A.periodic && (gi == 0 || gi == n - 1);
    const bool gr = ghost_row(i);
    prev[i] = gr ? i : i > 0 ? i - 1 : (A.periodic ? nl - 1 : i);
    next[i] = gr ? i : i < nl - 1 ? i + 1 : (A.periodic ? 0 : i);
    fm[i] = end ? T(0) : T(-hp / (hm * (hm + hp)));
    f0[i] = end ? T(0) : T((hp - hm) / (hm * hp));
    fp[i] = end ? T(0) : T(hm / (hp * (hm + hp)));
  }
  A.prev = Array<index_t>(nl, exec);
  A.next = Array<index_t>(nl, exec);
  A.prev.copy_from_host(prev.data());
  A.next.copy_from_host(next.data());
  for (auto [arr, host] : {std::pair{&A.fm, &fm}, std::pair{&A.f0, &f0}, std::pair{&A.fp, &fp}}) {
    *arr = Array<T>(nl, exec);
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
  const index_t n1 = N[oth[0]], n2 = N[oth[1]];
  const bool neu_lo = blo.kind() == BoundaryKind::neumann, neu_hi = bhi.kind() == BoundaryKind::neumann;
  const bool lin_lo = blo.kind() == BoundaryKind::linear, lin_hi = bhi.kind() == BoundaryKind::linear;
  if (neu_lo) neumann_weight[2 * ai].assign(static_cast<std::size_t>(n1 * n2), 0.0);
  if (neu_hi) neumann_weight[2 * ai + 1].assign(static_cast<std::size_t>(n1 * n2), 0.0);

  // Row of global node i of A_a at node (x, y, z): writes a = -lower, d, c = -upper and, on a
  // Neumann end, the weight of g in the ghost elimination u_ghost = u_inner + 2h g.
  auto row = [&](index_t i, double x, double y, double z, T& a, T& d, T& c, double* nw) {
    const double Dv = D(x, y, z), Vv = V(x, y, z), Rv = R(x, y, z);
    if (!std::isfinite(Dv) || !std::isfinite(Vv) || !std::isfinite(Rv))
      throw InvalidArgument(std::string("Operator: a coefficient of axis ") + axis_name(axis) +
                            " (diffusion " + detail::number(Dv) + ", convection " + detail::number(Vv) +
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
  std::vector<T> la(nl), ld(nl), lc(nl);
  if (!need_full) {
    const double y0 = coord(oth[0], 0), z0 = coord(oth[1], 0);
    for (index_t i = 0; i < nl; ++i) {
      const index_t gi = global_index(ai, i);
      double c[3];
      c[ai] = g[gi];
      c[oth[0]] = y0;
      c[oth[1]] = z0;
      double nw = 0.0;
      row(gi, c[0], c[1], c[2], la[i], ld[i], lc[i], &nw);
      if (gi == 0 && neu_lo) neumann_weight[2 * ai].assign(neumann_weight[2 * ai].size(), nw);
      if (gi == n - 1 && neu_hi) neumann_weight[2 * ai + 1].assign(neumann_weight[2 * ai + 1].size(), nw);
    }
    A.shared = true;
  } else {
    Field<T> ha(N[0], N[1], N[2]), hd(N[0], N[1], N[2]), hc(N[0], N[1], N[2]);
    for (index_t kk = 0; kk < N[2]; ++kk)
      for (index_t jj = 0; jj < N[1]; ++jj)
        for (index_t ii = 0; ii < N[0]; ++ii) {
          const index_t idx[3] = {ii, jj, kk};
          const index_t i = global_index(ai, idx[ai]);
          double nw = 0.0;
          row(i, coord(0, ii), coord(1, jj), coord(2, kk), ha(ii, jj, kk), hd(ii, jj, kk), hc(ii, jj, kk), &nw);
          const index_t fidx = idx[oth[0]] + idx[oth[1]] * n1;
          if (i == 0 && neu_lo) neumann_weight[2 * ai][fidx] = nw;
          if (i == n - 1 && neu_hi) neumann_weight[2 * ai + 1][fidx] = nw;
        }
    // Separable after all (e.g. a general function that ignores the other
    // coordinates): every line equals line (0, 0) bit for bit -> shared bands.
    for (index_t i = 0; i < nl; ++i) {
      index_t idx[3] = {0, 0, 0};
      idx[ai] = i;
      la[i] = ha(idx[0], idx[1], idx[2]);
      ld[i] = hd(idx[0], idx[1], idx[2]);
      lc[i] = hc(idx[0], idx[1], idx[2]);
    }
    bool same = true;
    for (index_t kk = 0; kk < N[2] && same; ++kk)
      for (index_t jj = 0; jj < N[1] && same; ++jj)
        for (index_t ii = 0; ii < N[0] && same; ++ii) {
          const index_t idx[3] = {ii, jj, kk};
          const index_t i = idx[ai];
          same = ha(ii, jj, kk) == la[i] && hd(ii, jj, kk) == ld[i] && hc(ii, jj, kk) == lc[i];
        }
    A.shared = same;
    if (!same) {
      A.fa = Field<T>(N[0], N[1], N[2], exec);
      A.fd = Field<T>(N[0], N[1], N[2], exec);
      A.fc = Field<T>(N[0], N[1], N[2], exec);
      A.fb = Field<T>(N[0], N[1], N[2], exec);
      A.fa.copy_from(ha);
      A.fd.copy_from(hd);
      A.fc.copy_from(hc);
    }
  }
  if (A.shared) {
    A.a = Array<T>(nl, exec);
    A.d = Array<T>(nl, exec);
    A.c = Array<T>(nl, exec);
    A.b = Array<T>(nl, exec);
    A.a.copy_from_host(la.data());
    A.d.copy_from_host(ld.data());
    A.c.copy_from_host(lc.data());
  }

  // The line solver over the sweep box comes later (build_plan): with a subdomain it is
  // collective, after every rank's discretisation succeeded.
  detail::AxisStencil<T>& S = view.axis[ai];
  S.active = true;
  S.shared = A.shared;
  S.periodic = A.periodic;
  S.n = nl;
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
    Field<T> h(N[0], N[1], N[2]);
    for (index_t kk = 0; kk < N[2]; ++kk)
      for (index_t jj = 0; jj < N[1]; ++jj)
        for (index_t ii = 0; ii < N[0]; ++ii) {
          const double x = coord(0, ii), y = coord(1, jj), z = coord(2, kk);
          const double v = (*M[m])(x, y, z);
          if (!std::isfinite(v))
            throw InvalidArgument(std::string("Operator: coefficient ") + names[m] + " = " + detail::number(v) +
                                  " is not finite at " + where(x, y, z));
          h(ii, jj, kk) = T(v);
        }
    mixed[m] = Field<T>(N[0], N[1], N[2], exec);
    mixed[m].copy_from(h);
    view.mixed[m] = detail::MixedStencil<T>{true, p, q, mixed[m].data()};
    any_mixed = true;
  }
}

template struct Operator<float>::Impl;
template struct Operator<double>::Impl;

}  // namespace adi
