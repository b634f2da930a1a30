#pragma once
// Exact solutions for the ADI convergence tests (tests/adi/test_scheme*.cpp) and
// a helper that runs a solver and returns the max-norm error against them.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

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
template <class T>
double run_error(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const Scheme& scheme,
                 const Exact& exact, double t_end, long steps) {
  AdiSolver<T> solver(Operator<T>(g, pde, bc), scheme);
  Field<T> u(g);
  fill(u, g, exact, 0.0);
  solver.advance(u, 0.0, t_end, steps);
  return max_error(u, g, exact, t_end);
}

// Observed order from errors at h, h/2, h/4: the smaller of the two log2 ratios.
inline double observed_order(double e0, double e1, double e2) {
  return std::min(std::log2(e0 / e1), std::log2(e1 / e2));
}

}  // namespace adi::testing
