#pragma once
// The plain fp64 CPU reference of one implicit ADI stage (Operator<T>::solve along axis a,
// no `later` axes): Y - s F_a(t_new, Y) = base - s F_a(t_old, V_old), Y = g(t_new) on the
// Dirichlet nodes along a. Built from the definition, not from the solver: F_a is what the
// host Operator<double>::evaluate returns (the stencil apply), its line matrices are read
// off by probing it with unit vectors along a (one evaluate per position, all lines at
// once), and each line is solved by the test oracle (solvers/reference/thomas.hpp, periodic
// lines by Sherman-Morrison). The fused GPU stage and the host solve are both checked
// against it (tests/solvers/cuda/test_thomas_pcr_fused_stage.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "adi/adi.hpp"
#include "solvers/reference/thomas.hpp"

namespace adi::test {

template <class T>
Field<double> to_double(const Grid& g, const Field<T>& f) {
  const Field<T> h = f.to_host();
  Field<double> out(g);
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) out(i, j, k) = double(h(i, j, k));
  return out;
}

// op: a host Operator<double> on the grid, PDE and boundaries of the stage. base and V_old
// (may be null) in any precision and memory space; V_old's Dirichlet nodes are taken as
// g(t_old), as solve() sets them. Returns Y on the host; nodes outside the sweep box (the
// whole axis a times the unknown ranges of the other axes) are NaN.
template <class T>
Field<double> stage_reference(Operator<double>& op, Axis axis, double s, double t_new, const Field<T>& base,
                              double t_old = 0.0, const Field<T>* V_old = nullptr) {
  const Grid& g = op.grid();
  const int ax = static_cast<int>(axis);
  const int part = ax + 1;
  const auto lo = op.unknown_lo(), hi = op.unknown_hi();
  const index_t n = g.extent(axis);
  const bool periodic = op.boundary().periodic(axis);
  EXPECT_TRUE(!periodic || n >= 3) << "stage_reference: periodic lines of n >= 3 only";
  const index_t ext[3] = {g.nx(), g.ny(), g.nz()};

  // The right-hand side base - s F_a(t_old, V_old) at the unknown nodes.
  Field<double> rhs = to_double(g, base);
  if (V_old) {
    Field<double> V = to_double(g, *V_old), F(g);
    op.set_boundary(t_old, V);
    F.fill(0.0);
    op.evaluate(part, t_old, V, F);
    for (index_t k = 0; k < g.nz(); ++k)
      for (index_t j = 0; j < g.ny(); ++j)
        for (index_t i = 0; i < g.nx(); ++i) rhs(i, j, k) -= s * F(i, j, k);
  }
  // G: g(t_new) on the Dirichlet nodes, 0 elsewhere; F0 = F_a(t_new, G); column p of each
  // line's matrix: F_a(t_new, G + e_p) - F0 with e_p = 1 at position p along a.
  Field<double> G(g), F0(g), P(g), Fp(g);
  G.fill(0.0);
  op.set_boundary(t_new, G);
  F0.fill(0.0);
  op.evaluate(part, t_new, G, F0);
  const index_t m = hi[ax] - lo[ax] + 1;  // unknowns along a
  // coef[(line node) * 3 + {0: lower, 1: diagonal, 2: upper}] of F_a's matrix.
  auto at = [&](index_t i, index_t j, index_t k) { return (k * ext[1] + j) * ext[0] + i; };
  std::vector<std::array<double, 3>> coef(static_cast<std::size_t>(g.nx() * g.ny() * g.nz()), {0.0, 0.0, 0.0});
  double off_band = 0.0;
  for (index_t p = lo[ax]; p <= hi[ax]; ++p) {
    P.copy_from(G);
    for (index_t k = 0; k < g.nz(); ++k)
      for (index_t j = 0; j < g.ny(); ++j)
        for (index_t i = 0; i < g.nx(); ++i) {
          const index_t idx[3] = {i, j, k};
          if (idx[ax] == p) P(i, j, k) += 1.0;
        }
    Fp.fill(0.0);
    op.evaluate(part, t_new, P, Fp);
    for (index_t k = lo[2]; k <= hi[2]; ++k)
      for (index_t j = lo[1]; j <= hi[1]; ++j)
        for (index_t i = lo[0]; i <= hi[0]; ++i) {
          const index_t idx[3] = {i, j, k};
          const index_t r = idx[ax];  // the row; p the column
          const double v = Fp(i, j, k) - F0(i, j, k);
          index_t d = p - r;
          if (periodic && d == n - 1) d = -1;
          if (periodic && d == 1 - n) d = 1;
          if (d >= -1 && d <= 1)
            coef[static_cast<std::size_t>(at(i, j, k))][static_cast<std::size_t>(d + 1)] = v;
          else
            off_band = std::max(off_band, std::abs(v));
        }
  }
  EXPECT_EQ(off_band, 0.0) << "stage_reference: F_a couples nodes further apart than neighbours along the axis";

  // Solve (I - s A) Y = rhs + s F0 per line, in double, by the oracle.
  Field<double> Y(g);
  Y.fill(std::numeric_limits<double>::quiet_NaN());
  std::vector<double> x, cs, la(m), lb(m), lc(m), ld(m);
  const int o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;  // the other two axes
  for (index_t q2 = lo[o2]; q2 <= hi[o2]; ++q2)
    for (index_t q1 = lo[o1]; q1 <= hi[o1]; ++q1) {
      auto node = [&](index_t r) {
        index_t idx[3];
        idx[ax] = r;
        idx[o1] = q1;
        idx[o2] = q2;
        return std::array<index_t, 3>{idx[0], idx[1], idx[2]};
      };
      for (index_t r = 0; r < m; ++r) {
        const auto c = node(lo[ax] + r);
        const auto& e = coef[static_cast<std::size_t>(at(c[0], c[1], c[2]))];
        la[r] = -s * e[0];
        lb[r] = 1.0 - s * e[1];
        lc[r] = -s * e[2];
        ld[r] = rhs(c[0], c[1], c[2]) + s * F0(c[0], c[1], c[2]);
      }
      auto A = [&](index_t i) { return la[i]; };
      auto B = [&](index_t i) { return lb[i]; };
      auto C = [&](index_t i) { return lc[i]; };
      auto D = [&](index_t i) { return ld[i]; };
      const bool ok = periodic ? reference::cyclic_line(m, A, B, C, D, x) : reference::thomas_line(m, A, B, C, D, x, cs);
      EXPECT_TRUE(ok) << "stage_reference: zero pivot in the reference";
      for (index_t r = 0; r < n; ++r) {
        const auto c = node(r);
        Y(c[0], c[1], c[2]) = r >= lo[ax] && r <= hi[ax] ? x[static_cast<std::size_t>(r - lo[ax])] : G(c[0], c[1], c[2]);
      }
    }
  return Y;
}

}  // namespace adi::test
