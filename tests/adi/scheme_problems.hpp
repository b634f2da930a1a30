#pragma once
// Exact solutions for the ADI convergence tests (tests/adi/test_scheme*.cpp) and
// a helper that runs a solver and returns the max-norm error against them.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "adi/adi.hpp"

namespace adi::testing {

using Exact = std::function<double(double t, double x, double y, double z)>;

// u = exp(-(kx a^2 + ky b^2 + kz c^2) t) sin(a x + p) sin(b y + q) sin(c z + r)
// solves u_t = kx u_xx + ky u_yy + kz u_zz; the phases keep every face non-zero.
struct HeatWave {
  double kx = 1.0, ky = 0.7, kz = 0.5;
  double a = 2.1, b = 1.7, c = 1.3;
  double p = 0.3, q = 0.5, r = 0.7;
  int dims = 2;

  double lambda() const { return kx * a * a + ky * b * b + (dims == 3 ? kz * c * c : 0.0); }
  double u(double t, double x, double y, double z) const {
    const double s = std::sin(a * x + p) * std::sin(b * y + q) * (dims == 3 ? std::sin(c * z + r) : 1.0);
    return std::exp(-lambda() * t) * s;
  }
  // Partial derivative along axis d.
  double du(int d, double t, double x, double y, double z) const {
    const double e = std::exp(-lambda() * t);
    const double sx = std::sin(a * x + p), sy = std::sin(b * y + q), sz = dims == 3 ? std::sin(c * z + r) : 1.0;
    if (d == 0) return e * a * std::cos(a * x + p) * sy * sz;
    if (d == 1) return e * sx * b * std::cos(b * y + q) * sz;
    return dims == 3 ? e * sx * sy * c * std::cos(c * z + r) : 0.0;
  }
  Pde pde() const { return Pde::heat(kx, ky, dims == 3 ? kz : 0.0); }
  Exact exact() const {
    return [w = *this](double t, double x, double y, double z) { return w.u(t, x, y, z); };
  }
  // Dirichlet data from the exact solution on face f.
  Boundary dirichlet() const {
    return Boundary::dirichlet([w = *this](double t, double x, double y, double z) { return w.u(t, x, y, z); });
  }
  // Outward normal derivative on face f.
  Boundary neumann(Face f) const {
    const int d = static_cast<int>(axis_of(f));
    const double sign = is_hi(f) ? 1.0 : -1.0;
    return Boundary::neumann(
        [w = *this, d, sign](double t, double x, double y, double z) { return sign * w.du(d, t, x, y, z); });
  }
};

// u_t = u_xx + u_yy + rho u_xy with
//   u = exp(-l1 t) sin(a x + b y + p) + exp(-l2 t) cos(c x - d y + q),
//   l1 = a^2 + b^2 + rho a b,  l2 = c^2 + d^2 - rho c d
// (for sin(a x + b y + p): u_xx = -a^2 u, u_yy = -b^2 u, u_xy = -a b u;
//  for cos(c x - d y + q): u_xx = -c^2 u, u_yy = -d^2 u, u_xy = +c d u).
struct MixedWave {
  double rho = 0.8;
  double a = 1.9, b = 1.2, c = 1.1, d = 2.3, p = 0.4, q = 0.9;
  double l1() const { return a * a + b * b + rho * a * b; }
  double l2() const { return c * c + d * d - rho * c * d; }
  double u(double t, double x, double y) const {
    return std::exp(-l1() * t) * std::sin(a * x + b * y + p) + std::exp(-l2() * t) * std::cos(c * x - d * y + q);
  }
  Pde pde() const {
    Pde e = Pde::heat(1.0, 1.0);
    e.mixed_xy = rho;
    return e;
  }
  Exact exact() const {
    return [w = *this](double t, double x, double y, double) { return w.u(t, x, y); };
  }
};

// Fills u with exact(t, nodes).
template <class T>
void fill(Field<T>& u, const Grid& g, const Exact& exact, double t) {
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        u(i, j, k) = T(exact(t, g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]));
}

// Max over all nodes of |u - exact(t)|.
template <class T>
double max_error(const Field<T>& u, const Grid& g, const Exact& exact, double t) {
  double e = 0.0;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double d = double(u(i, j, k)) - exact(t, g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]);
        e = std::isfinite(d) ? std::max(e, std::abs(d)) : std::numeric_limits<double>::infinity();
      }
  return e;
}

// Runs `steps` steps of `scheme` from the exact solution at 0 to t_end; returns the max error.
// A non-empty `order` sets the order of the implicit stages (AdiSolver::set_stage_order).
template <class T>
double run_error(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const Scheme& scheme,
                 const Exact& exact, double t_end, long steps, const std::vector<Axis>& order = {}) {
  AdiSolver<T> solver(Operator<T>(g, pde, bc), scheme);
  if (!order.empty()) solver.set_stage_order(order);
  Field<T> u(g);
  fill(u, g, exact, 0.0);
  solver.advance(u, 0.0, t_end, steps);
  return max_error(u, g, exact, t_end);
}

// Observed order from errors at h, h/2, h/4: the smaller of the two log2 ratios.
inline double observed_order(double e0, double e1, double e2) {
  return std::min(std::log2(e0 / e1), std::log2(e1 / e2));
}

// The explicit operator folded into the first stage of each chain (Operator::ExplicitFold):
// the boundary sets, sizes and time steps every fold test of the schemes runs (host:
// tests/adi/test_scheme.cpp, GPU: test_scheme_cuda.cpp).
struct FoldSet {
  const char* what;
  Pde pde;
  BoundaryConditions bc;
  bool periodic_x = false;
  bool folds = true;  // the fused kernel can fold (no mixed terms)
};

inline std::vector<FoldSet> fold_sets() {
  Pde drift = Pde::heat(1.0, 0.7, 0.4);
  drift.convection = {Coefficient(0.9), Coefficient(-0.6), Coefficient(0.3)};
  drift.reaction = -0.8;
  Pde src = drift;
  src.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  const auto g3 = [](double t, double x, double y, double z) {
    return std::cos(1.3 * x + 0.4 * t) * std::sin(0.9 * y + 0.3) + 0.5 * z * z - 0.2 * t;
  };
  BoundaryConditions neu = BoundaryConditions::all(Boundary::dirichlet(g3));
  neu.set(Face::x_lo, Boundary::neumann([g3](double t, double x, double y, double z) { return g3(t, x, y, z) + 1; }));
  neu.set(Face::y_hi, Boundary::neumann(0.7));
  neu.set(Face::z_lo, Boundary::neumann([](double t, double, double y, double) { return y - t; }));
  BoundaryConditions per = BoundaryConditions::all(Boundary::dirichlet(g3));
  per.set_periodic(Axis::x);
  BoundaryConditions mix;  // the "mixed" set: periodic, Dirichlet g(t) and constant, Neumann constant and g(t)
  mix.set_periodic(Axis::x);
  mix.set(Face::y_lo, Boundary::dirichlet(g3)).set(Face::y_hi, Boundary::neumann(0.5));
  mix.set(Face::z_lo, Boundary::neumann([](double t, double x, double y, double) { return std::cos(t) * x * y; }));
  mix.set(Face::z_hi, Boundary::dirichlet(-0.3));
  Pde mixed_terms = src;
  mixed_terms.mixed_xy = 0.3;
  Pde per_node = src;  // per-node bands along x
  per_node.diffusion[0] = [](double x, double y, double) { return 1.0 + 0.5 * x * y; };
  return {{"dirichlet constant", drift, BoundaryConditions::all(Boundary::dirichlet(0.3))},
          {"dirichlet g(t) + source", src, BoundaryConditions::all(Boundary::dirichlet(g3))},
          {"neumann + source", src, neu},
          {"periodic x", drift, per, true},
          {"mixed set + source", src, mix, true},
          {"mixed terms + source", mixed_terms, BoundaryConditions::all(Boundary::dirichlet(g3)), false, false},
          {"per-node bands + source", per_node, neu, false, false}};
}

// 3D, 2D, 1D and odd sizes along each axis (3, 31, 33, 255, 257).
inline std::vector<std::array<index_t, 3>> fold_sizes() {
  std::vector<std::array<index_t, 3>> sizes = {{37, 33, 19}, {33, 31, 1}, {257, 1, 1}};
  for (index_t n : {3, 31, 33, 255, 257})
    for (int a = 0; a < 3; ++a) {
      std::array<index_t, 3> e{7, 5, 3};
      e[a] = n;
      sizes.push_back(e);
    }
  return sizes;
}

inline Grid fold_grid(const std::array<index_t, 3>& e, bool periodic_x) {
  auto axis = [&](int d) {
    if (e[d] == 1) return AxisGrid();
    if (d == 0 && periodic_x) return periodic_axis(e[d], 0.0, 1.0);
    return e[d] < 5 ? AxisGrid::uniform(e[d], 0.0, 1.0) : AxisGrid::stretched(e[d], 0.0, 1.0, 0.45, 3.0);
  };
  return Grid(axis(0), axis(1), axis(2));
}

// dt ~ 8 h_min^2 (at most 2e-3): the stages as well conditioned on the long lines as on the
// short ones (float is compared with float).
inline double fold_dt(const Grid& g) {
  double hmin = 1.0;
  for (Axis ax : {Axis::x, Axis::y, Axis::z})
    for (index_t i = 0; i + 1 < g.extent(ax); ++i) hmin = std::min(hmin, g.axis(ax)[i + 1] - g.axis(ax)[i]);
  return std::min(2e-3, 8.0 * hmin * hmin);
}

// f(set, extents, grid, dt, scheme) for every fold set, size and scheme (mixed terms only
// where x and y are both present); stops at the first failure.
template <class F>
void for_each_fold_case(const std::vector<Scheme>& schemes, F&& f) {
  for (const FoldSet& set : fold_sets())
    for (const auto& e : fold_sizes()) {
      if (set.pde.has_mixed() && (e[0] == 1 || e[1] == 1)) continue;
      const Grid g = fold_grid(e, set.periodic_x);
      const double dt = fold_dt(g);
      for (const Scheme& s : schemes) {
        f(set, e, g, dt, s);
        if (::testing::Test::HasFailure()) return;
      }
    }
}

inline double fold_init(double, double x, double y, double z) {
  return std::sin(3 * x + 0.3) * std::cos(2 * y) * (1 + z * z);
}

}  // namespace adi::testing
