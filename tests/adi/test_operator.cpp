// The ADI operator's pieces: the discrete A_j and A_0 against exact derivatives
// (round-off exact where second-order central differences must be), Neumann ghost
// elimination, periodic wrap, the implicit stage as a residual, boundary writes,
// shared-band detection and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "gpu_skip.hpp"

using namespace adi;

namespace {

// Strictly increasing, irregular nodes on [lo, hi].
AxisGrid irregular(index_t n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(0.6, 1.4);
  std::vector<double> w(static_cast<std::size_t>(n - 1));
  double sum = 0.0;
  for (double& x : w) sum += (x = d(rng));
  std::vector<double> x(static_cast<std::size_t>(n));
  x[0] = lo;
  for (index_t i = 1; i < n; ++i) x[i] = x[i - 1] + (hi - lo) * w[i - 1] / sum;
  x.back() = hi;
  return AxisGrid::from_nodes(x);
}

template <class T, class F>
void fill(Field<T>& u, const Grid& g, F f) {
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) u(i, j, k) = T(f(g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]));
}

// Max |out - expect| over the operator's unknown nodes, with the node coordinates.
template <class T, class F>
double max_diff_unknowns(const Operator<T>& op, const Field<T>& out, F expect) {
  const Grid& g = op.grid();
  const auto lo = op.unknown_lo(), hi = op.unknown_hi();
  double e = 0.0;
  for (index_t k = lo[2]; k <= hi[2]; ++k)
    for (index_t j = lo[1]; j <= hi[1]; ++j)
      for (index_t i = lo[0]; i <= hi[0]; ++i) {
        const double d = double(out(i, j, k)) - expect(g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]);
        e = std::isfinite(d) ? std::max(e, std::abs(d)) : INFINITY;
      }
  return e;
}

// q = 1 + 2x - 3y + z/2 + x^2 - 0.7y^2 + 0.4z^2 + 0.9xy - 0.6xz + 0.3yz and its derivatives.
double q(double x, double y, double z) {
  return 1 + 2 * x - 3 * y + 0.5 * z + x * x - 0.7 * y * y + 0.4 * z * z + 0.9 * x * y - 0.6 * x * z + 0.3 * y * z;
}
double qx(double x, double y, double z) { return 2 + 2 * x + 0.9 * y - 0.6 * z; }
double qy(double x, double y, double z) { return -3 - 1.4 * y + 0.9 * x + 0.3 * z; }
double qz(double x, double y, double z) { return 0.5 + 0.8 * z - 0.6 * x + 0.3 * y; }

double Dx(double x, double y, double) { return 1 + 0.5 * x * y; }
double Vy(double, double y, double) { return -0.2 * y; }
double Mxz(double x, double, double) { return x + 1; }

Pde quadratic_pde(bool mixed) {
  Pde p;
  p.diffusion = {Coefficient(Dx), Coefficient(0.8), Coefficient::along(Axis::z, [](double z) { return 1 + z; })};
  p.convection = {Coefficient(0.3), Coefficient(Vy), Coefficient(0.1)};
  p.reaction = 0.2;
  if (mixed) {
    p.mixed_xy = 0.4;
    p.mixed_xz = Mxz;
    p.mixed_yz = -0.3;
  }
  return p;
}

Grid irregular_grid() { return Grid(irregular(13, 0.0, 1.0, 1), irregular(11, -0.5, 0.7, 2), irregular(9, 0.2, 1.1, 3)); }

// Each part applied to a quadratic on irregular axes is the exact derivative term
// (3-point formulas and the tensor-product cross stencil are exact for quadratics).
TEST(Operator, PartsExactForQuadraticsOnIrregularAxes) {
  const Grid g = irregular_grid();
  const auto bc = BoundaryConditions::all(Boundary::dirichlet([](double, double x, double y, double z) { return q(x, y, z); }));
  Operator<double> op(g, quadratic_pde(true), bc);
  EXPECT_TRUE(op.has_mixed());
  Field<double> u(g), out(g);
  fill(u, g, q);
  const double r = 0.2 / 3.0;
  const double tol = 1e-10;
  op.evaluate(1, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return Dx(x, y, z) * 2.0 + 0.3 * qx(x, y, z) + r * q(x, y, z);
            }), tol);
  op.evaluate(2, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return 0.8 * -1.4 + Vy(x, y, z) * qy(x, y, z) + r * q(x, y, z);
            }), tol);
  op.evaluate(3, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return (1 + z) * 0.8 + 0.1 * qz(x, y, z) + r * q(x, y, z);
            }), tol);
  op.evaluate(0, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return 0.4 * 0.9 + Mxz(x, y, z) * -0.6 + -0.3 * 0.3;
            }), tol);
  // apply() combines parts with weights and a base: out = 2u + 0.5 F_0 - F_2.
  op.apply(0.0, u, {0.5, 0.0, -1.0, 0.0}, 2.0, &u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return 2 * q(x, y, z) + 0.5 * (0.36 - 0.6 * Mxz(x, y, z) - 0.09) -
                     (0.8 * -1.4 + Vy(x, y, z) * qy(x, y, z) + r * q(x, y, z));
            }), tol);
}

// Cubics: u_xx by the 3-point formula is exact on uniform axes (the error term is h^2 u''''/12).
TEST(Operator, SecondDerivativeExactForCubicsOnUniformAxes) {
  const Grid g = Grid::uniform({12, 9, 7}, {0.0, -1.0, 0.5}, {1.3, 0.4, 1.0});
  auto c = [](double x, double y, double z) { return x * x * x - 2 * y * y * y + 0.5 * z * z * z + x * x * y - y * z * z; };
  const auto bc = BoundaryConditions::all(Boundary::dirichlet([&](double, double x, double y, double z) { return c(x, y, z); }));
  Operator<double> op(g, Pde::heat(1.5, 0.7, 2.0), bc);
  Field<double> u(g), out(g);
  fill(u, g, c);
  op.evaluate(1, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [](double x, double y, double) { return 1.5 * (6 * x + 2 * y); }), 1e-10);
  op.evaluate(2, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [](double, double y, double z) { return 0.7 * (-12 * y) + 0 * z; }), 1e-10);
  op.evaluate(3, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [](double, double y, double z) { return 2.0 * (3 * z - 2 * y); }), 1e-10);
}

// Neumann faces (outward normal derivative): the ghost node u_g = u_inner + 2h g
// reproduces a quadratic, so every part is still exact, at the Neumann nodes too.
TEST(Operator, NeumannGhostEliminationExactForQuadratics) {
  const Grid g = irregular_grid();
  BoundaryConditions bc = BoundaryConditions::all(Boundary::dirichlet([](double, double x, double y, double z) { return q(x, y, z); }));
  bc.set(Face::x_lo, Boundary::neumann([](double, double x, double y, double z) { return -qx(x, y, z); }));
  bc.set(Face::x_hi, Boundary::neumann([](double, double x, double y, double z) { return qx(x, y, z); }));
  bc.set(Face::y_hi, Boundary::neumann([](double, double x, double y, double z) { return qy(x, y, z); }));
  bc.set(Face::z_lo, Boundary::neumann([](double, double x, double y, double z) { return -qz(x, y, z); }));
  Operator<double> op(g, quadratic_pde(false), bc);
  EXPECT_EQ(op.unknown_lo(), (std::array<index_t, 3>{0, 1, 0}));
  EXPECT_EQ(op.unknown_hi(), (std::array<index_t, 3>{12, 10, 7}));
  Field<double> u(g), out(g);
  fill(u, g, q);
  const double r = 0.2 / 3.0;
  op.evaluate(1, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return Dx(x, y, z) * 2.0 + 0.3 * qx(x, y, z) + r * q(x, y, z);
            }), 1e-10);
  op.evaluate(2, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return 0.8 * -1.4 + Vy(x, y, z) * qy(x, y, z) + r * q(x, y, z);
            }), 1e-10);
  op.evaluate(3, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double z) {
              return (1 + z) * 0.8 + 0.1 * qz(x, y, z) + r * q(x, y, z);
            }), 1e-10);
  // Constant Neumann data: u = 3x on [0,1] has du/dn = -3 at x-, +3 at x+.
  const Grid g1(irregular(10, 0.0, 1.0, 4));
  BoundaryConditions b1;
  b1.set(Axis::x, Boundary::neumann(-3.0), Boundary::neumann(3.0));
  Operator<double> op1(g1, Pde::heat(2.0), b1);
  Field<double> v(g1), o(g1);
  fill(v, g1, [](double x, double, double) { return 3 * x; });
  op1.evaluate(1, 0.0, v, o);
  EXPECT_LT(max_diff_unknowns(op1, o, [](double, double, double) { return 0.0; }), 1e-11);
}

// Periodic axes: sin(a x + p) is an eigenfunction of the wrapped stencils.
TEST(Operator, PeriodicWrapMatchesDiscreteSymbols) {
  const index_t nx = 12, ny = 10;
  const double L = 2.0;
  const Grid g(periodic_axis(nx, -1.0, L), periodic_axis(ny, 0.0, 1.0));
  BoundaryConditions bc;
  bc.set_periodic(Axis::x).set_periodic(Axis::y, 1.0);
  Pde pde = Pde::heat(0.7, 1.3);
  pde.convection[0] = 0.4;
  pde.mixed_xy = 0.25;
  Operator<double> op(g, pde, bc);
  EXPECT_EQ(op.unknown_lo(), (std::array<index_t, 3>{0, 0, 0}));
  EXPECT_EQ(op.unknown_hi(), (std::array<index_t, 3>{nx - 1, ny - 1, 0}));
  const double a = 2 * M_PI * 3 / L, b = 2 * M_PI * 2, p = 0.3, qq = 1.1;
  const double hx = L / nx, hy = 1.0 / ny;
  Field<double> u(g), out(g);
  fill(u, g, [&](double x, double y, double) { return std::sin(a * x + p) * std::sin(b * y + qq); });
  op.evaluate(1, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double) {
              const double d2 = -4 / (hx * hx) * std::pow(std::sin(a * hx / 2), 2) * std::sin(a * x + p);
              const double d1 = std::sin(a * hx) / hx * std::cos(a * x + p);
              return (0.7 * d2 + 0.4 * d1) * std::sin(b * y + qq);
            }), 1e-11);
  op.evaluate(0, 0.0, u, out);
  EXPECT_LT(max_diff_unknowns(op, out, [&](double x, double y, double) {
              return 0.25 * std::sin(a * hx) / hx * std::cos(a * x + p) * std::sin(b * hy) / hy * std::cos(b * y + qq);
            }), 1e-11);
}

// A 3D configuration with every kind of face, per-node bands and a source.
struct StageSetup {
  Grid grid{AxisGrid::stretched(9, 0.0, 1.0, 0.3, 3.0), periodic_axis(8, 0.0, 1.0), irregular(7, -0.3, 0.6, 5)};
  static double g(double t, double x, double y, double z) { return std::cos(x + 2 * y - z) * (1 + t * t); }
  BoundaryConditions bc() const {
    BoundaryConditions b;
    b.set(Face::x_lo, Boundary::dirichlet(g));
    b.set(Face::x_hi, Boundary::neumann([](double t, double x, double, double) { return t + x; }));
    b.set_periodic(Axis::y);
    b.set(Face::z_lo, Boundary::neumann(0.25));
    b.set(Face::z_hi, Boundary::dirichlet(g));
    return b;
  }
  Pde pde() const {
    Pde p;
    p.diffusion = {Coefficient([](double x, double y, double) { return 1 + 0.3 * std::sin(x + y); }), Coefficient(0.5),
                   Coefficient([](double, double y, double z) { return 0.7 + y * z * z; })};
    p.convection = {Coefficient(0.8), Coefficient([](double x, double, double) { return x - 0.5; }), Coefficient(-0.4)};
    p.reaction = Coefficient([](double x, double, double z) { return -0.3 - x * z; });
    p.source = [](double t, double x, double y, double z) { return std::exp(-t) * (x + y * z); };
    return p;
  }
};

template <class T>
void random_fill(Field<T>& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (index_t k = 0; k < f.nz(); ++k)
    for (index_t j = 0; j < f.ny(); ++j)
      for (index_t i = 0; i < f.nx(); ++i) f(i, j, k) = T(d(rng));
}

// solve() returns Y with Y - s F_a(t_new, Y) = base - s F_a(t_old, V) at every unknown
// (checked by evaluating both sides with apply) and g(t_new) on a's Dirichlet faces.
template <class T>
void check_stage_residual(double tol) {
  const StageSetup S;
  const Grid& g = S.grid;
  Operator<T> op(g, S.pde(), S.bc());
  EXPECT_FALSE(op.shared_bands(Axis::x));
  EXPECT_TRUE(op.shared_bands(Axis::y) == false);  // the reaction depends on x and z
  Field<T> base(g), V(g), Y(g), lhs(g), rhs(g), Yin(g);
  const T s = T(0.0123);
  const double t_old = 0.4, t_new = 0.45;
  for (Axis a : {Axis::x, Axis::y, Axis::z}) {
    for (bool with_old : {true, false}) {
      random_fill(base, 1);
      random_fill(V, 2);
      Y.fill(T(NAN));  // poison: every node the solve owns must be written
      op.solve(a, s, t_new, base, Y, t_old, with_old ? &V : nullptr);
      // Both sides of the stage equation, evaluated independently by apply().
      std::array<T, 4> w{};
      w[static_cast<int>(a) + 1] = -s;
      Field<T> Ycopy(g);
      Ycopy.copy_from(Y);
      op.apply(t_new, Ycopy, w, T(1), &Y, lhs);
      if (with_old)
        op.apply(t_old, V, w, T(1), &base, rhs);
      else
        rhs.copy_from(base);
      const auto lo = op.unknown_lo(), hi = op.unknown_hi();
      double err = 0.0, scale = 0.0;
      for (index_t k = lo[2]; k <= hi[2]; ++k)
        for (index_t j = lo[1]; j <= hi[1]; ++j)
          for (index_t i = lo[0]; i <= hi[0]; ++i) {
            const double d = double(lhs(i, j, k)) - double(rhs(i, j, k));
            err = std::isfinite(d) ? std::max(err, std::abs(d)) : INFINITY;
            scale = std::max(scale, std::abs(double(rhs(i, j, k))));
          }
      EXPECT_LT(err, tol * scale) << "axis " << axis_name(a) << (with_old ? " with" : " without") << " V_old";
      // a's Dirichlet faces carry g(t_new) (x-: i = 0, z+: k = nz-1).
      if (a == Axis::x)
        for (index_t k = lo[2]; k <= hi[2]; ++k)
          for (index_t j = lo[1]; j <= hi[1]; ++j)
            EXPECT_NEAR(double(Y(0, j, k)), S.g(t_new, g.axis(Axis::x)[0], g.axis(Axis::y)[j], g.axis(Axis::z)[k]),
                        tol * 10);
      if (a == Axis::z)
        for (index_t j = lo[1]; j <= hi[1]; ++j)
          for (index_t i = lo[0]; i <= hi[0]; ++i)
            EXPECT_NEAR(double(Y(i, j, g.nz() - 1)),
                        S.g(t_new, g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z).hi()), tol * 10);
      // In place (Y aliasing base) gives the same answer.
      Yin.copy_from(base);
      op.solve(a, s, t_new, Yin, Yin, t_old, with_old ? &V : nullptr);
      for (index_t k = lo[2]; k <= hi[2]; ++k)
        for (index_t j = lo[1]; j <= hi[1]; ++j)
          for (index_t i = lo[0]; i <= hi[0]; ++i) ASSERT_EQ(Yin(i, j, k), Y(i, j, k));
      // The solution written to another field, here V_old itself (read before written).
      if (with_old) {
        Field<T> Vr(g), scratch(g);
        Vr.copy_from(V);
        op.solve(a, s, t_new, base, scratch, t_old, &Vr, {}, &Vr);
        for (index_t k = lo[2]; k <= hi[2]; ++k)
          for (index_t j = lo[1]; j <= hi[1]; ++j)
            for (index_t i = lo[0]; i <= hi[0]; ++i) ASSERT_EQ(Vr(i, j, k), Y(i, j, k));
      }
    }
  }
}

TEST(Operator, ImplicitStageSolvesItsEquationDouble) { check_stage_residual<double>(1e-12); }
TEST(Operator, ImplicitStageSolvesItsEquationFloat) { check_stage_residual<float>(2e-5); }

// With later axes, an intermediate stage's Dirichlet values are
// g(t_new) - s sum_{i later} (F_i(t_new, g) - F_i(t_old, g)), F_i along the face.
TEST(Operator, IntermediateStageBoundaryValues) {
  const index_t n = 9;
  const Grid g = Grid::uniform({n, n, 1}, {0, 0, 0}, {1, 1, 0});
  const double h = 1.0 / (n - 1), ky = 0.6;
  auto gf = [](double t, double x, double y, double) { return (1 + t) * (x + 1) * y * y * y + t * x; };
  Operator<double> op(g, Pde::heat(1.0, ky), BoundaryConditions::all(Boundary::dirichlet(gf)));
  Field<double> base(g), V(g), Y(g);
  random_fill(base, 3);
  random_fill(V, 4);
  const double s = 0.01, t0 = 0.2, t1 = 0.3;
  op.solve(Axis::x, s, t1, base, Y, t0, &V, {false, true, false});
  for (index_t j = 1; j < n - 1; ++j)
    for (index_t i : {index_t(0), n - 1}) {
      const double x = i * h, y = j * h;
      auto Ay = [&](double t) { return ky * (gf(t, x, y - h, 0) - 2 * gf(t, x, y, 0) + gf(t, x, y + h, 0)) / (h * h); };
      EXPECT_NEAR(Y(i, j, 0), gf(t1, x, y, 0) - s * (Ay(t1) - Ay(t0)), 1e-12) << i << " " << j;
    }
  // The last stage of a chain (no later axes) ends on g(t_new).
  op.solve(Axis::y, s, t1, base, Y, t0, &V);
  for (index_t i = 1; i < n - 1; ++i) EXPECT_NEAR(Y(i, n - 1, 0), gf(t1, i * h, 1.0, 0), 1e-13);
}

TEST(Operator, SetBoundaryWritesOnlyDirichletNodes) {
  const StageSetup S;
  const Grid& g = S.grid;
  Operator<double> op(g, S.pde(), S.bc());
  Field<double> u(g);
  u.fill(7.0);
  op.set_boundary(0.5, u);
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const bool dir = i == 0 || k == g.nz() - 1;
        const double want = dir ? S.g(0.5, g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]) : 7.0;
        EXPECT_EQ(u(i, j, k), want) << i << " " << j << " " << k;
      }
}

TEST(Operator, SharedBandsWhenCoefficientsAreSeparable) {
  const Grid g = Grid::uniform({8, 7, 6}, {0, 0, 0}, {1, 1, 1});
  Operator<double> heat(g, Pde::heat(1, 2, 3), BoundaryConditions{});
  for (Axis a : {Axis::x, Axis::y, Axis::z}) EXPECT_TRUE(heat.shared_bands(a));
  Pde p = Pde::heat(1, 1, 1);
  p.diffusion[0] = [](double x, double, double) { return 1 + x; };  // general form, own axis only
  p.convection[1] = Coefficient::along(Axis::y, [](double y) { return y; });
  p.diffusion[2] = [](double x, double, double z) { return 1 + x * z; };
  Operator<double> op(g, p, BoundaryConditions{});
  EXPECT_TRUE(op.shared_bands(Axis::x));
  EXPECT_TRUE(op.shared_bands(Axis::y));
  EXPECT_FALSE(op.shared_bands(Axis::z));
  // A 2D grid: z has one node, two implicit parts, R split in halves.
  const Grid g2 = Grid::uniform({6, 5, 1}, {0, 0, 0}, {1, 1, 0});
  Pde r = Pde::heat(0, 0);
  r.reaction = -2.0;
  Operator<double> op2(g2, r, BoundaryConditions{});
  EXPECT_EQ(op2.implicit_axes(), 2);
  EXPECT_FALSE(op2.active(Axis::z));
  Field<double> u(g2), out(g2);
  u.fill(1.0);
  op2.evaluate(1, 0.0, u, out);
  EXPECT_DOUBLE_EQ(out(2, 2, 0), -1.0);
}

TEST(Operator, RejectsBadInput) {
  const Grid g = Grid::uniform({8, 7, 1}, {0, 0, 0}, {1, 1, 0});
  const Pde heat = Pde::heat(1, 1);
  BoundaryConditions one_periodic;
  one_periodic.set(Face::x_lo, Boundary::periodic());
  EXPECT_THROW(Operator<double>(g, heat, one_periodic), InvalidArgument);
  BoundaryConditions stretched_periodic;
  stretched_periodic.set_periodic(Axis::x);
  EXPECT_THROW(Operator<double>(Grid(irregular(8, 0, 1, 9), AxisGrid::uniform(7, 0, 1)), heat, stretched_periodic),
               InvalidArgument);
  BoundaryConditions short_period;
  short_period.set_periodic(Axis::x, 0.5);  // shorter than the node span 1
  EXPECT_THROW(Operator<double>(g, heat, short_period), InvalidArgument);
  EXPECT_THROW(Operator<double>(Grid::uniform({2, 7, 1}, {0, 0, 0}, {1, 1, 0}), heat, BoundaryConditions{}),
               InvalidArgument);
  Pde mixed = heat;
  mixed.mixed_xy = 0.3;
  BoundaryConditions neumann;
  neumann.set(Face::y_hi, Boundary::neumann(0.0));
  EXPECT_THROW(Operator<double>(g, mixed, neumann), Unsupported);
  Pde nan_coef = heat;
  nan_coef.convection[1] = [](double x, double, double) { return x > 0.5 ? NAN : 1.0; };
  EXPECT_THROW(Operator<double>(g, nan_coef, BoundaryConditions{}), InvalidArgument);
  Pde nan_const = heat;
  nan_const.reaction = INFINITY;
  EXPECT_THROW(Operator<double>(g, nan_const, BoundaryConditions{}), InvalidArgument);
  EXPECT_THROW(Boundary::dirichlet(NAN), InvalidArgument);
  EXPECT_THROW(Boundary::neumann(BoundaryFunction{}), InvalidArgument);
  EXPECT_THROW(Pde::heat(-1.0), InvalidArgument);

  Operator<double> op(g, heat, BoundaryConditions{});
  Field<double> u(g), wrong(8, 8, 1), out(g);
  EXPECT_THROW(op.evaluate(1, 0.0, wrong, out), InvalidArgument);
  EXPECT_THROW(op.evaluate(4, 0.0, u, out), InvalidArgument);
  EXPECT_THROW(op.apply(0.0, u, {0, 1, 0, 0}, 1.0, nullptr, u), InvalidArgument);  // out aliases V
  EXPECT_THROW(op.solve(Axis::x, 0.0, 0.1, u, out), InvalidArgument);
  EXPECT_THROW(op.solve(Axis::z, 0.1, 0.1, u, out), InvalidArgument);  // a single node along z
  EXPECT_THROW(op.solve(Axis::x, 0.1, 0.1, u, out, 0.0, &out), InvalidArgument);  // Y aliases V_old
  Pde bad_source = heat;
  bad_source.source = [](double t, double, double, double) { return t > 1 ? NAN : 0.0; };
  Operator<double> ops(g, bad_source, BoundaryConditions{});
  EXPECT_NO_THROW(ops.evaluate(1, 0.5, u, out));
  EXPECT_THROW(ops.evaluate(1, 1.5, u, out), InvalidArgument);
}

// A CUDA operator needs a device: without one (or without the CUDA backend), a clear
// Unsupported; with one it builds (the GPU tests check what it computes).
TEST(Operator, CudaWithoutDeviceIsUnsupported) {
  ADI_REQUIRE_NO_CUDA("Operator on Executor::cuda() refused");
  const Grid g = Grid::uniform({8, 7, 1}, {0, 0, 0}, {1, 1, 0});
  EXPECT_THROW(Operator<double>(g, Pde::heat(1, 1), BoundaryConditions{}, Executor::cuda()), Unsupported);
}

TEST(Operator, CudaBuilds) {
  ADI_REQUIRE_CUDA("Operator on Executor::cuda()");
  const Grid g = Grid::uniform({8, 7, 1}, {0, 0, 0}, {1, 1, 0});
  EXPECT_NO_THROW(Operator<double>(g, Pde::heat(1, 1), BoundaryConditions{}, Executor::cuda()));
}

}  // namespace
