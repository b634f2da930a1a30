// ADI schemes: observed order of convergence against exact solutions with
// non-zero, time-dependent boundary data (Dirichlet, Neumann, periodic), on
// uniform and stretched grids, in 2D and 3D; mixed derivatives; variable
// coefficients with a source; damping; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "tests/adi/scheme_problems.hpp"
#include "tests/scoped_env.hpp"

using namespace adi;
using namespace adi::testing;

namespace {

// The observed order: least-squares slope of log(err) against log(h) over three
// resolutions (h, h/2, h/4), plus each pairwise ratio so a lucky end point cannot pass.
struct Orders {
  double fit, first, second;
};
Orders orders(const double e[3]) {
  return {std::log2(e[0] / e[2]) / 2.0, std::log2(e[0] / e[1]), std::log2(e[1] / e[2])};
}

std::string describe(const double e[3]) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "errors %.3e %.3e %.3e", e[0], e[1], e[2]);
  return buf;
}

void expect_order(const double e[3], double min_fit, double min_pair, const std::string& what) {
  const Orders o = orders(e);
  std::printf("[order] %-40s fit %.2f (pairs %.2f %.2f)  %s\n", what.c_str(), o.fit, o.first, o.second,
              describe(e).c_str());
  EXPECT_GE(o.fit, min_fit) << what << ": " << describe(e);
  EXPECT_GE(o.first, min_pair) << what << ": " << describe(e);
  EXPECT_GE(o.second, min_pair) << what << ": " << describe(e);
}

enum class Variant { dirichlet, stretched, neumann, periodic };
const char* variant_name(Variant v) {
  switch (v) {
    case Variant::dirichlet: return "dirichlet";
    case Variant::stretched: return "stretched";
    case Variant::neumann: return "neumann";
    default: return "periodic";
  }
}

// N intervals per axis (N nodes on a periodic axis).
Grid make_grid(int N, int dims, Variant v) {
  auto axis = [&](int d) {
    if (d >= dims) return AxisGrid();
    if (v == Variant::stretched) return AxisGrid::stretched(N + 1, 0.0, 1.0, d == 1 ? 0.6 : 0.4, 4.0);
    if (v == Variant::periodic && d == 0) return periodic_axis(N, 0.0, 1.0);
    return AxisGrid::uniform(N + 1, 0.0, 1.0);
  };
  return Grid(axis(0), axis(1), axis(2));
}

HeatWave heat_wave(int dims, Variant v) {
  HeatWave w;
  w.dims = dims;
  if (v == Variant::periodic) {
    w.a = 2.0 * M_PI;  // period 1 in x
    w.kx = 0.1;        // keep the solution O(1) at t_end
  }
  return w;
}

BoundaryConditions heat_bc(const HeatWave& w, Variant v) {
  BoundaryConditions bc = BoundaryConditions::all(w.dirichlet());
  if (v == Variant::neumann) {
    for (Face f : {Face::x_lo, Face::x_hi, Face::y_hi}) bc.set(f, w.neumann(f));
    if (w.dims == 3) bc.set(Face::z_lo, w.neumann(Face::z_lo));
  }
  if (v == Variant::periodic) bc.set_periodic(Axis::x);
  return bc;
}

// dt refined with h (steps = N/2, t_end = 0.2): space and time errors shrink together.
template <class T>
void heat_errors(const Scheme& s, int dims, Variant v, double e[3], const std::vector<Axis>& order = {}) {
  const HeatWave w = heat_wave(dims, v);
  const int base = dims == 2 ? 32 : 12;
  for (int r = 0; r < 3; ++r) {
    const int N = base << r;
    e[r] = run_error<T>(make_grid(N, dims, v), w.pde(), heat_bc(w, v), s, w.exact(), 0.2, N / 2, order);
  }
}

struct HeatCase {
  Scheme scheme;
  int dims;
  Variant variant;
};

void PrintTo(const HeatCase& c, std::ostream* os) {
  *os << c.scheme.name() << " theta " << c.scheme.theta << ", " << c.dims << "D, " << variant_name(c.variant);
}

std::string case_name(const ::testing::TestParamInfo<HeatCase>& info) {
  std::string n = std::string(info.param.scheme.name()) + "_" + std::to_string(info.param.dims) + "d_" +
                  variant_name(info.param.variant);
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

std::vector<HeatCase> heat_cases() {
  std::vector<HeatCase> cases;
  const Scheme schemes[] = {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                            Scheme::hundsdorfer_verwer(), Scheme::peaceman_rachford()};
  for (int dims : {2, 3})
    for (const Scheme& s : schemes)
      for (Variant v : {Variant::dirichlet, Variant::stretched, Variant::neumann, Variant::periodic})
        if (!(dims == 3 && s.kind == SchemeKind::peaceman_rachford)) cases.push_back({s, dims, v});
  return cases;
}

class HeatOrder : public ::testing::TestWithParam<HeatCase> {};

TEST_P(HeatOrder, SecondOrderWithTimeDependentBoundaries) {
  const HeatCase& c = GetParam();
  double e[3];
  heat_errors<double>(c.scheme, c.dims, c.variant, e);
  expect_order(e, 1.9, 1.8,
               std::string(c.scheme.name()) + " " + std::to_string(c.dims) + "D " + variant_name(c.variant));
  EXPECT_LT(e[2], 1e-3);  // and the errors are small, not just shrinking
}

INSTANTIATE_TEST_SUITE_P(Schemes, HeatOrder, ::testing::ValuesIn(heat_cases()), case_name);

// The exact solutions really solve their PDEs: fourth-order finite differences of
// the closed forms (h = 1e-3) leave residuals at the 1e-8 level.
TEST(ExactSolutions, SatisfyTheirPdes) {
  const double h = 1e-3;
  auto d1 = [h](auto f, double x) { return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h); };
  auto d2 = [h](auto f, double x) {
    return (-f(x + 2 * h) + 16 * f(x + h) - 30 * f(x) + 16 * f(x - h) - f(x - 2 * h)) / (12 * h * h);
  };
  const MixedWave m;
  const HeatWave w = heat_wave(3, Variant::dirichlet);
  for (double t : {0.0, 0.13})
    for (double x : {0.1, 0.55})
      for (double y : {0.2, 0.9}) {
        const double z = 0.37;
        const double ut = d1([&](double s) { return m.u(s, x, y); }, t);
        const double uxx = d2([&](double s) { return m.u(t, s, y); }, x);
        const double uyy = d2([&](double s) { return m.u(t, x, s); }, y);
        const double uxy = d1([&](double s) { return d1([&](double r) { return m.u(t, r, s); }, x); }, y);
        EXPECT_NEAR(ut, uxx + uyy + m.rho * uxy, 1e-7) << "mixed wave at " << t << " " << x << " " << y;
        const double vt = d1([&](double s) { return w.u(s, x, y, z); }, t);
        const double vxx = d2([&](double s) { return w.u(t, s, y, z); }, x);
        const double vyy = d2([&](double s) { return w.u(t, x, s, z); }, y);
        const double vzz = d2([&](double s) { return w.u(t, x, y, s); }, z);
        EXPECT_NEAR(vt, w.kx * vxx + w.ky * vyy + w.kz * vzz, 1e-7);
        EXPECT_NEAR(w.du(0, t, x, y, z), d1([&](double s) { return w.u(t, s, y, z); }, x), 1e-9);
        EXPECT_NEAR(w.du(2, t, x, y, z), d1([&](double s) { return w.u(t, x, y, s); }, z), 1e-9);
      }
}

// u_t = u_xx + u_yy + rho u_xy: CS, MCS, HV are second order; Douglas (A0 explicit)
// only first.
TEST(MixedDerivative, SecondOrderForCorrectedSchemes) {
  const MixedWave m;
  const BoundaryConditions bc = BoundaryConditions::all(
      Boundary::dirichlet([m](double t, double x, double y, double) { return m.u(t, x, y); }));
  for (const Scheme& s : {Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer(),
                          Scheme::douglas()}) {
    double e[3];
    for (int r = 0; r < 3; ++r) {
      const int N = 32 << r;
      e[r] = run_error<double>(make_grid(N, 2, Variant::stretched), m.pde(), bc, s, m.exact(), 0.2, N / 2);
    }
    if (s.kind == SchemeKind::douglas) {
      EXPECT_LT(orders(e).fit, 1.6) << "Douglas treats A0 explicitly: " << describe(e);
    } else {
      expect_order(e, 1.9, 1.8, s.name());
    }
  }
}

// A manufactured solution u = exp(-t) sin(a x + p) cos(b y + q) for a PDE with
// every term: non-separable diffusion (full band arrays), convection, a mixed
// term, reaction and a source f = u_t - L u; stretched x axis.
struct Manufactured {
  double a = 1.7, b = 1.3, p = 0.3, q = 0.4;
  bool mixed = true;
  double u(double t, double x, double y) const { return std::exp(-t) * std::sin(a * x + p) * std::cos(b * y + q); }
  double ux(double t, double x, double y) const {
    return std::exp(-t) * a * std::cos(a * x + p) * std::cos(b * y + q);
  }
  double uy(double t, double x, double y) const {
    return -std::exp(-t) * std::sin(a * x + p) * b * std::sin(b * y + q);
  }
  double uxy(double t, double x, double y) const {
    return -std::exp(-t) * a * std::cos(a * x + p) * b * std::sin(b * y + q);
  }
  static double Dx(double x, double y) { return 1.0 + 0.5 * x * y; }
  static double Dy(double x) { return 0.8 + 0.2 * std::sin(x); }
  static double Vx(double y) { return 0.3 * y; }
  static double M(double x) { return 0.3 * (1.0 + x); }
  static double R(double x) { return -0.5 * x; }
  Pde pde() const {
    Pde e;
    e.diffusion[0] = [](double x, double y, double) { return Dx(x, y); };
    e.diffusion[1] = [](double x, double, double) { return Dy(x); };
    e.convection[0] = [](double, double y, double) { return Vx(y); };
    e.convection[1] = -0.2;
    if (mixed) e.mixed_xy = [](double x, double, double) { return M(x); };
    e.reaction = Coefficient::along(Axis::x, R);
    e.source = [m = *this](double t, double x, double y, double) {
      const double uu = m.u(t, x, y);
      const double L = Dx(x, y) * (-m.a * m.a * uu) + Dy(x) * (-m.b * m.b * uu) + Vx(y) * m.ux(t, x, y) -
                       0.2 * m.uy(t, x, y) + (m.mixed ? M(x) * m.uxy(t, x, y) : 0.0) + R(x) * uu;
      return -uu - L;
    };
    return e;
  }
  Exact exact() const {
    return [m = *this](double t, double x, double y, double) { return m.u(t, x, y); };
  }
  BoundaryConditions bc() const {
    const Manufactured m = *this;
    BoundaryConditions c =
        BoundaryConditions::all(Boundary::dirichlet([m](double t, double x, double y, double) { return m.u(t, x, y); }));
    if (!mixed) {
      c.set(Face::x_hi, Boundary::neumann([m](double t, double x, double y, double) { return m.ux(t, x, y); }));
      c.set(Face::y_lo, Boundary::neumann([m](double t, double x, double y, double) { return -m.uy(t, x, y); }));
    }
    return c;
  }
};

TEST(VariableCoefficients, SecondOrderWithSourceAndFullBands) {
  for (bool mixed : {true, false}) {
    Manufactured m;
    m.mixed = mixed;
    const Scheme with_mixed[] = {Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer()};
    const Scheme without[] = {Scheme::douglas(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer(),
                              Scheme::peaceman_rachford()};
    const std::vector<Scheme> schemes = mixed ? std::vector<Scheme>(std::begin(with_mixed), std::end(with_mixed))
                                              : std::vector<Scheme>(std::begin(without), std::end(without));
    for (const Scheme& s : schemes) {
      double e[3];
      for (int r = 0; r < 3; ++r) {
        const int N = 24 << r;
        const Grid g(AxisGrid::stretched(N + 1, 0.0, 1.0, 0.3, 3.0), AxisGrid::uniform(N + 1, 0.0, 1.2));
        if (r == 0) {
          const Operator<double> op(g, m.pde(), m.bc());
          EXPECT_FALSE(op.shared_bands(Axis::x));  // D_x(x, y): per-node bands
          EXPECT_FALSE(op.shared_bands(Axis::y));  // D_y(x), R(x): per-node bands along y
        }
        // dt = t_end / 2N: the space error dominates; TimeOrder below isolates the time error.
        e[r] = run_error<double>(g, m.pde(), m.bc(), s, m.exact(), 0.5, 2 * N);
      }
      expect_order(e, 1.9, 1.8, std::string(s.name()) + (mixed ? " with mixed term" : " with Neumann faces"));
    }
  }
}

// The time error alone: a fixed stretched grid, 16/32/64 steps against 1024 steps,
// for the problem with Neumann faces, a source and per-node bands.
TEST(VariableCoefficients, TimeOrderWithNeumannAndSource) {
  Manufactured m;
  m.mixed = false;
  const int N = 32;
  const Grid g(AxisGrid::stretched(N + 1, 0.0, 1.0, 0.3, 3.0), AxisGrid::uniform(N + 1, 0.0, 1.2));
  for (const Scheme& s : {Scheme::douglas(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer(),
                          Scheme::peaceman_rachford()}) {
    AdiSolver<double> solver(g, m.pde(), m.bc(), s);
    auto run = [&](long steps) {
      Field<double> u(g);
      fill(u, g, m.exact(), 0.0);
      solver.advance(u, 0.0, 0.5, steps);
      return u;
    };
    const Field<double> ref = run(1024);
    double e[3];
    for (int r = 0; r < 3; ++r) {
      const Field<double> u = run(16L << r);
      e[r] = 0.0;
      for (index_t j = 0; j < g.ny(); ++j)
        for (index_t i = 0; i < g.nx(); ++i) e[r] = std::max(e[r], std::abs(u(i, j, 0) - ref(i, j, 0)));
    }
    expect_order(e, 1.9, 1.8, std::string(s.name()) + " in time");
  }
}

// 1D problems and a 2D problem in the (y, z) plane (x has a single node) use the
// same code paths with fewer implicit axes.
TEST(Dimensions, OneDimensionalAndFlatXPlanes) {
  for (const Scheme& s : {Scheme::douglas(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer(),
                          Scheme::peaceman_rachford()}) {
    double e1[3], eyz[3];
    for (int r = 0; r < 3; ++r) {
      const int N = 32 << r;
      HeatWave w;
      w.dims = 2;
      w.ky = 0.0;  // u = exp(-kx a^2 t) sin(a x + p) sin(q): a 1D solution
      const Grid g1(AxisGrid::uniform(N + 1, 0.0, 1.0), AxisGrid::uniform(1, 0.0, 0.0));
      BoundaryConditions b1 = BoundaryConditions::all(w.dirichlet());
      b1.set(Face::x_hi, w.neumann(Face::x_hi));
      e1[r] = run_error<double>(g1, Pde::heat(w.kx), b1, s, w.exact(), 0.2, N / 2);
      // The same wave on y and z: u(t, x, y, z) = v(t, y, z).
      const HeatWave v = heat_wave(2, Variant::dirichlet);
      const Exact ex = [v](double t, double, double y, double z) { return v.u(t, y, z, 0.0); };
      const Grid gyz(AxisGrid::uniform(1, 0.5, 0.5), AxisGrid::uniform(N + 1, 0.0, 1.0),
                     AxisGrid::stretched(N + 1, 0.0, 1.0, 0.4, 4.0));
      const BoundaryConditions byz =
          BoundaryConditions::all(Boundary::dirichlet([ex](double t, double x, double y, double z) { return ex(t, x, y, z); }));
      eyz[r] = run_error<double>(gyz, Pde::heat(0.0, v.kx, v.ky), byz, s, ex, 0.2, N / 2);
    }
    expect_order(e1, 1.9, 1.8, std::string(s.name()) + " 1D");
    expect_order(eyz, 1.9, 1.8, std::string(s.name()) + " (y, z)");
  }
}

TEST(Douglas, ThetaOneIsFirstOrder) {
  for (int dims : {2, 3}) {
    double e[3];
    heat_errors<double>(Scheme::douglas(1.0), dims, Variant::dirichlet, e);
    const Orders o = orders(e);
    EXPECT_GT(o.fit, 0.85) << describe(e);
    EXPECT_LT(o.fit, 1.3) << describe(e);
  }
}

// Rannacher damping with a fixed number of steps keeps the scheme second order
// on smooth data (its theta = 1 half steps are first order, but only k of them).
TEST(Rannacher, KeepsSecondOrderOnSmoothData) {
  for (const Scheme& s : {Scheme::douglas().with_damping(2), Scheme::hundsdorfer_verwer().with_damping(1)}) {
    double e[3];
    heat_errors<double>(s, 2, Variant::dirichlet, e);
    expect_order(e, 1.9, 1.8, std::string(s.name()) + " damped");
  }
}

// Semi-discrete solution of v' = v_xx (zero Dirichlet, uniform) by the discrete
// sine transform: the reference that isolates the time-stepping error.
std::vector<double> semi_discrete_heat(const std::vector<double>& v0, double t) {
  const int N = static_cast<int>(v0.size()) - 1;
  const double h = 1.0 / N;
  std::vector<double> v(v0.size(), 0.0);
  for (int m = 1; m < N; ++m) {
    double c = 0.0;
    for (int i = 1; i < N; ++i) c += v0[i] * std::sin(m * M_PI * i * h);
    c *= 2.0 / N;
    const double lam = 4.0 / (h * h) * std::pow(std::sin(m * M_PI * h / 2.0), 2);
    for (int i = 1; i < N; ++i) v[i] += c * std::exp(-lam * t) * std::sin(m * M_PI * i * h);
  }
  return v;
}

// Step initial data, dt/h^2 = 10: the theta = 1/2 scheme passes the stiff
// components of the jump on barely damped (amplification near -1); two damped
// steps remove them. The solution stays in [0, 1] and near the reference.
TEST(Rannacher, DampsNonSmoothInitialData) {
  const int N = 64;
  const double t_end = 0.01;
  const Grid g = Grid::uniform({N + 1, N + 1, 1}, {0, 0, 0}, {1, 1, 0});
  std::vector<double> v0(N + 1);
  for (int i = 0; i <= N; ++i) {
    const double x = double(i) / N;
    v0[i] = (x > 0.25 && x < 0.75) ? 1.0 : (x == 0.25 || x == 0.75) ? 0.5 : 0.0;
  }
  const std::vector<double> ref = semi_discrete_heat(v0, t_end);
  auto run = [&](int damping, double& lo, double& hi) {
    AdiSolver<double> solver(g, Pde::heat(1.0, 1.0), BoundaryConditions{}, Scheme::douglas().with_damping(damping));
    Field<double> u(g);
    for (int j = 0; j <= N; ++j)
      for (int i = 0; i <= N; ++i) u(i, j, 0) = v0[i] * v0[j];
    solver.advance(u, 0.0, t_end, 4);
    double err = 0.0;
    lo = 1e300;
    hi = -1e300;
    for (int j = 0; j <= N; ++j)
      for (int i = 0; i <= N; ++i) {
        err = std::max(err, std::abs(u(i, j, 0) - ref[i] * ref[j]));
        lo = std::min(lo, u(i, j, 0));
        hi = std::max(hi, u(i, j, 0));
      }
    return err;
  };
  double lo0, hi0, lo2, hi2;
  const double undamped = run(0, lo0, hi0);
  const double damped = run(2, lo2, hi2);
  EXPECT_LT(damped, 0.02);
  EXPECT_GT(undamped, 5.0 * damped) << "damping should remove the stiff components of the jump";
  EXPECT_GE(lo2, -1e-12);
  EXPECT_LE(hi2, 1.0);
}

// Float runs track the double ones to within float resolution.
TEST(Precision, FloatMatchesDouble) {
  for (const Scheme& s : {Scheme::douglas(), Scheme::hundsdorfer_verwer()}) {
    const HeatWave w = heat_wave(2, Variant::neumann);
    const Grid g = make_grid(48, 2, Variant::neumann);
    const double ed = run_error<double>(g, w.pde(), heat_bc(w, Variant::neumann), s, w.exact(), 0.2, 24);
    const double ef = run_error<float>(g, w.pde(), heat_bc(w, Variant::neumann), s, w.exact(), 0.2, 24);
    EXPECT_LT(std::abs(ef - ed), 2e-5) << s.name() << ": double " << ed << ", float " << ef;
  }
  const MixedWave m;
  const BoundaryConditions bc = BoundaryConditions::all(
      Boundary::dirichlet([m](double t, double x, double y, double) { return m.u(t, x, y); }));
  const Grid g = make_grid(48, 2, Variant::stretched);
  const double ed = run_error<double>(g, m.pde(), bc, Scheme::modified_craig_sneyd(), m.exact(), 0.2, 24);
  const double ef = run_error<float>(g, m.pde(), bc, Scheme::modified_craig_sneyd(), m.exact(), 0.2, 24);
  EXPECT_LT(std::abs(ef - ed), 2e-5) << "double " << ed << ", float " << ef;
}

// After a step, every Dirichlet node holds g(t + dt) exactly; callbacks see each step.
TEST(Solver, BoundaryValuesCallbackAndTimings) {
  const HeatWave w = heat_wave(3, Variant::dirichlet);
  const Grid g = make_grid(10, 3, Variant::dirichlet);
  AdiSolver<double> solver(g, w.pde(), heat_bc(w, Variant::dirichlet), Scheme::hundsdorfer_verwer());
  Field<double> u(g);
  fill(u, g, w.exact(), 0.0);
  std::vector<double> times;
  solver.advance(u, 0.0, 0.1, 5, [&](long step, double t, const Field<double>& f) {
    EXPECT_EQ(step, static_cast<long>(times.size()) + 1);
    EXPECT_EQ(&f, &u);
    times.push_back(t);
  });
  ASSERT_EQ(times.size(), 5u);
  EXPECT_DOUBLE_EQ(times.back(), 0.1);
  for (std::size_t s = 1; s < times.size(); ++s) EXPECT_GT(times[s], times[s - 1]);
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i : {index_t(0), g.nx() - 1})
        EXPECT_EQ(u(i, j, k), w.u(0.1, g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]));
  const StepTimings& tm = solver.timings();
  EXPECT_EQ(tm.steps, 5);
  for (int a = 0; a < 3; ++a) EXPECT_GT(tm.implicit[a], 0.0);
  EXPECT_GT(tm.explicit_part, 0.0);
  solver.reset_timings();
  EXPECT_EQ(solver.timings().steps, 0);
}

// step() and advance() agree; restart() re-arms the damping.
TEST(Solver, StepMatchesAdvanceAndRestartRearmsDamping) {
  const HeatWave w = heat_wave(2, Variant::dirichlet);
  const Grid g = make_grid(16, 2, Variant::dirichlet);
  const Scheme s = Scheme::craig_sneyd().with_damping(1);
  AdiSolver<double> a(g, w.pde(), heat_bc(w, Variant::dirichlet), s);
  AdiSolver<double> b(g, w.pde(), heat_bc(w, Variant::dirichlet), s);
  Field<double> ua(g), ub(g);
  fill(ua, g, w.exact(), 0.0);
  fill(ub, g, w.exact(), 0.0);
  a.advance(ua, 0.0, 0.1, 4);
  for (int n = 0; n < 4; ++n) b.step(ub, 0.025 * n, 0.025);
  for (index_t j = 0; j < g.ny(); ++j)
    for (index_t i = 0; i < g.nx(); ++i) EXPECT_NEAR(ua(i, j, 0), ub(i, j, 0), 1e-14);
  // A second run after restart() repeats the first exactly (damped first step again).
  fill(ua, g, w.exact(), 0.0);
  fill(ub, g, w.exact(), 0.0);
  a.restart();
  a.advance(ua, 0.0, 0.1, 4);
  b.advance(ub, 0.0, 0.1, 4);  // not restarted: no damping this time
  double same = 0.0, differ = 0.0;
  Field<double> uc(g);
  fill(uc, g, w.exact(), 0.0);
  AdiSolver<double> c(g, w.pde(), heat_bc(w, Variant::dirichlet), s);
  c.advance(uc, 0.0, 0.1, 4);
  for (index_t j = 0; j < g.ny(); ++j)
    for (index_t i = 0; i < g.nx(); ++i) {
      same = std::max(same, std::abs(ua(i, j, 0) - uc(i, j, 0)));
      differ = std::max(differ, std::abs(ub(i, j, 0) - uc(i, j, 0)));
    }
  EXPECT_EQ(same, 0.0);
  EXPECT_GT(differ, 1e-8);
}

// step(u, t0, t1, dt): the grid's own levels with one nominal length. With t1 = t0 + dt it is
// step(u, t0, dt) to rounding (its end time is t0 + dt); on advance()'s levels k h (the last T)
// with dt = h = T / N every step it matches advance() bit for bit.
TEST(Solver, StepOnGridLevelsWithNominalLength) {
  const HeatWave w = heat_wave(2, Variant::dirichlet);
  const Grid g = make_grid(16, 2, Variant::dirichlet);
  const Scheme s = Scheme::hundsdorfer_verwer().with_damping(2);
  AdiSolver<double> a(g, w.pde(), heat_bc(w, Variant::dirichlet), s);
  AdiSolver<double> b(g, w.pde(), heat_bc(w, Variant::dirichlet), s);
  AdiSolver<double> c(g, w.pde(), heat_bc(w, Variant::dirichlet), s);
  Field<double> ua(g), ub(g), uc(g);
  for (Field<double>* u : {&ua, &ub, &uc}) fill(*u, g, w.exact(), 0.0);
  const double T = 0.3;
  const long N = 7;
  const double h = T / double(N);
  a.advance(ua, 0.0, T, N);
  for (long k = 0; k < N; ++k) b.step(ub, h * double(k), k + 1 == N ? T : h * double(k + 1), h);
  for (long k = 0; k < N; ++k) c.step(uc, h * double(k), h);
  double ab = 0.0, bc = 0.0;
  for (index_t j = 0; j < g.ny(); ++j)
    for (index_t i = 0; i < g.nx(); ++i) {
      ab = std::max(ab, std::abs(ua(i, j, 0) - ub(i, j, 0)));
      bc = std::max(bc, std::abs(ub(i, j, 0) - uc(i, j, 0)));
    }
  EXPECT_EQ(ab, 0.0);
  EXPECT_LT(bc, 1e-12);  // (the boundary data at slightly different times)
  // Bad arguments name what to change.
  EXPECT_THROW(b.step(ub, 0.1, 0.1, h), InvalidArgument);
  EXPECT_THROW(b.step(ub, 0.0, std::nan(""), h), InvalidArgument);
  EXPECT_THROW(b.step(ub, 0.0, 0.1, 0.0), InvalidArgument);
  try {
    b.step(ub, 0.0, 0.1, 0.05);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("t1 - t0"), std::string::npos) << e.what();
  }
}

TEST(Scheme, NamesRoundTripAndUnknownNamesListTheValidOnes) {
  for (const char* n : {"douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer", "peaceman-rachford"})
    EXPECT_EQ(std::string(Scheme::from_name(n).name()), n);
  EXPECT_DOUBLE_EQ(Scheme::from_name("modified-craig-sneyd").theta, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(Scheme::from_name("hundsdorfer-verwer").theta, 0.5 + std::sqrt(3.0) / 6.0);
  EXPECT_DOUBLE_EQ(Scheme::from_name("craig-sneyd").sigma, 0.5);
  try {
    Scheme::from_name("crank-nicolson");
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("crank-nicolson"), std::string::npos) << m;
    for (const char* n : {"douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer", "peaceman-rachford"})
      EXPECT_NE(m.find(n), std::string::npos) << m;
  }
}

TEST(Solver, RejectsBadInput) {
  const HeatWave w = heat_wave(2, Variant::dirichlet);
  const Grid g = make_grid(8, 2, Variant::dirichlet);
  const Grid g3 = make_grid(6, 3, Variant::dirichlet);
  const BoundaryConditions bc = heat_bc(w, Variant::dirichlet);
  AdiSolver<double> solver(g, w.pde(), bc, Scheme::douglas());
  Field<double> u(g), wrong(9, 8, 1);
  EXPECT_THROW(solver.step(u, 0.0, 0.0), InvalidArgument);
  EXPECT_THROW(solver.step(u, 0.0, -0.1), InvalidArgument);
  EXPECT_THROW(solver.step(u, 0.0, std::nan("")), InvalidArgument);
  EXPECT_THROW(solver.step(u, std::nan(""), 0.1), InvalidArgument);
  EXPECT_THROW(solver.step(wrong, 0.0, 0.1), InvalidArgument);
  EXPECT_THROW(solver.advance(u, 0.0, 1.0, 0), InvalidArgument);
  EXPECT_THROW(solver.advance(u, 1.0, 0.5, 4), InvalidArgument);
  u(3, 4, 0) = std::nan("");
  try {
    solver.advance(u, 0.0, 1.0, 4);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("u(3, 4, 0)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(AdiSolver<double>(g3, Pde::heat(1, 1, 1), BoundaryConditions{}, Scheme::peaceman_rachford()),
               InvalidArgument);
  Pde mixed = Pde::heat(1, 1);
  mixed.mixed_xy = 0.5;
  EXPECT_THROW(AdiSolver<double>(g, mixed, BoundaryConditions{}, Scheme::peaceman_rachford()), Unsupported);
  EXPECT_THROW(AdiSolver<double>(g, w.pde(), bc, Scheme::douglas(0.0)), InvalidArgument);
  EXPECT_THROW(AdiSolver<double>(g, w.pde(), bc, Scheme::douglas(1.5)), InvalidArgument);
  EXPECT_THROW(AdiSolver<double>(g, w.pde(), bc, Scheme::douglas().with_damping(-1)), InvalidArgument);
  // Boundary data that turns non-finite is reported with the face and the time.
  BoundaryConditions bad = bc;
  bad.set(Face::y_hi, Boundary::dirichlet([](double t, double, double, double) { return t > 0.05 ? 1.0 / 0.0 : 0.0; }));
  AdiSolver<double> s2(g, w.pde(), bad, Scheme::douglas());
  Field<double> v(g);
  try {
    s2.advance(v, 0.0, 0.1, 2);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("y+"), std::string::npos) << e.what();
  }
}

// Finite u in, NaN or Inf out: dt = 1e307 (fp32: 1e37) overflows the explicit part dt A u, which no pivot check
// sees (each implicit stage is I/s - A, well conditioned). advance() reads u after its last step
// and throws UnstableSystem naming the node and the steps (before: u returned NaN without a word);
// step() does not check. Every scheme, both precisions.
TEST(Solver, NonFiniteResultOfAdvanceIsAnError) {
  const HeatWave w = heat_wave(2, Variant::dirichlet);
  const Grid g = make_grid(8, 2, Variant::dirichlet);
  const BoundaryConditions bc = heat_bc(w, Variant::dirichlet);
  for (const Scheme& s : {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                          Scheme::hundsdorfer_verwer(), Scheme::peaceman_rachford()}) {
    auto run = [&](auto zero, double dt, const char* text) {  // dt finite in T, dt A u beyond T's largest
      using T = decltype(zero);
      AdiSolver<T> solver(g, w.pde(), bc, s);
      Field<T> u(g);
      u.fill(T(1));
      try {
        solver.advance(u, 0.0, dt, 1);
        ADD_FAILURE() << s.name() << ": no exception";
      } catch (const UnstableSystem& e) {
        const std::string m = e.what();
        for (const char* frag : {"AdiSolver::advance: after the steps from t = 0 to ", text, "is not finite",
                                 "take a smaller time step"})
          EXPECT_NE(m.find(frag), std::string::npos) << s.name() << ": " << m;
      }
      // A sane step on the same solver still runs.
      u.fill(T(1));
      solver.advance(u, 0.0, 1e-3, 2);
      EXPECT_TRUE(std::isfinite(double(u(3, 3, 0)))) << s.name();
    };
    run(0.0, 1e307, "(1 of dt = 1e+307)");
    run(0.0f, 1e37, "(1 of dt = 1e+37)");
  }
}


// The order of the implicit stages (AdiSolver::set_stage_order): every order gives a scheme of
// the same order. z, y, x (y, x in 2D) on the heat waves (time-dependent Dirichlet and Neumann
// data, stretched axes), the mixed-derivative wave and the manufactured problem with per-node
// bands and a source.
TEST(StageOrder, ReversedOrderConvergesAtTheSchemesOrder) {
  const std::vector<Axis> zyx = {Axis::z, Axis::y, Axis::x}, yx = {Axis::y, Axis::x};
  for (const Scheme& s : {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                          Scheme::hundsdorfer_verwer(), Scheme::peaceman_rachford()}) {
    for (int dims : {2, 3}) {
      if (dims == 3 && s.kind == SchemeKind::peaceman_rachford) continue;
      for (Variant v : {Variant::stretched, Variant::neumann}) {
        double e[3];
        heat_errors<double>(s, dims, v, e, dims == 3 ? zyx : yx);
        expect_order(e, 1.9, 1.8,
                     std::string(s.name()) + " " + std::to_string(dims) + "D " + variant_name(v) + (dims == 3 ? " z, y, x" : " y, x"));
        EXPECT_LT(e[2], 1e-3);
      }
    }
  }
  const MixedWave m;
  const BoundaryConditions bc = BoundaryConditions::all(
      Boundary::dirichlet([m](double t, double x, double y, double) { return m.u(t, x, y); }));
  for (const Scheme& s : {Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer()}) {
    double e[3];
    for (int r = 0; r < 3; ++r) {
      const int N = 32 << r;
      e[r] = run_error<double>(make_grid(N, 2, Variant::stretched), m.pde(), bc, s, m.exact(), 0.2, N / 2, yx);
    }
    expect_order(e, 1.9, 1.8, std::string(s.name()) + " mixed term, y first");
  }
  for (bool mixed : {true, false}) {
    Manufactured mf;
    mf.mixed = mixed;
    for (const Scheme& s : {Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer(),
                            Scheme::douglas(), Scheme::peaceman_rachford()}) {
      if (mixed == (s.kind == SchemeKind::douglas || s.kind == SchemeKind::peaceman_rachford)) continue;
      double e[3];
      for (int r = 0; r < 3; ++r) {
        const int N = 24 << r;
        const Grid g(AxisGrid::stretched(N + 1, 0.0, 1.0, 0.3, 3.0), AxisGrid::uniform(N + 1, 0.0, 1.2));
        e[r] = run_error<double>(g, mf.pde(), mf.bc(), s, mf.exact(), 0.5, 2 * N, yx);
      }
      expect_order(e, 1.9, 1.8, std::string(s.name()) + (mixed ? " mixed term" : " per-node bands") + ", y first");
    }
  }
}

// Different orders give different results (the axes' operators do not commute with per-node
// bands), but only at the splitting-error level: on a fixed grid the difference between two
// orders falls at the scheme's order in dt (2D: x, y against y, x; 3D: x, y, z against z, y, x
// and y, z, x; per-node bands, Neumann faces and a source; mixed terms for the corrected schemes).
TEST(StageOrder, OrdersAgreeToTheSplittingError) {
  const std::vector<FoldSet> sets = fold_sets();
  const FoldSet& per_node = sets[6];
  FoldSet mixed = per_node;  // per-node bands and a mixed term (Dirichlet faces: the mixed set's)
  mixed.what = "per-node bands + mixed term + source";
  mixed.pde.mixed_xy = 0.3;
  mixed.bc = sets[5].bc;
  for (int dims : {2, 3}) {
    const index_t n = dims == 2 ? 33 : 17;
    const Grid g(AxisGrid::stretched(n, 0.0, 1.0, 0.45, 3.0), AxisGrid::uniform(n, 0.0, 1.0),
                 dims == 3 ? AxisGrid::uniform(n, 0.0, 1.0) : AxisGrid());
    std::vector<std::vector<Axis>> orders = {{Axis::y, Axis::x}};
    if (dims == 3) orders = {{Axis::z, Axis::y, Axis::x}, {Axis::y, Axis::z, Axis::x}};
    for (const Scheme& s : {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                            Scheme::hundsdorfer_verwer(), Scheme::peaceman_rachford()}) {
      if (dims == 3 && s.kind == SchemeKind::peaceman_rachford) continue;
      const bool with_mixed = s.kind == SchemeKind::craig_sneyd || s.kind == SchemeKind::hundsdorfer_verwer;
      const FoldSet& set = with_mixed ? mixed : per_node;
      auto run = [&](long steps, const std::vector<Axis>& order) {
        AdiSolver<double> solver(Operator<double>(g, set.pde, set.bc), s);
        if (!order.empty()) solver.set_stage_order(order);
        Field<double> u(g);
        fill(u, g, fold_init, 0.0);
        solver.advance(u, 0.0, 0.1, steps);
        return u;
      };
      for (const auto& order : orders) {
        double d[3];
        for (int r = 0; r < 3; ++r) {
          const Field<double> a = run(8L << r, {}), b = run(8L << r, order);
          d[r] = 0.0;
          for (index_t k = 0; k < g.nz(); ++k)
            for (index_t j = 0; j < g.ny(); ++j)
              for (index_t i = 0; i < g.nx(); ++i) {
                const double e = std::abs(a(i, j, k) - b(i, j, k));
                d[r] = std::isfinite(e) ? std::max(d[r], e) : HUGE_VAL;
              }
        }
        std::string what = std::string(s.name()) + " " + set.what + " x.. vs ";
        for (Axis a : order) what += axis_name(a);
        EXPECT_GT(d[2], 1e-12) << what << ": the order changes the result";
        EXPECT_LT(d[0], 1e-2) << what;
        expect_order(d, 1.9, 1.8, what);
      }
    }
  }
}

TEST(StageOrder, DefaultEnvironmentAndBadOrders) {
  const Grid g3 = make_grid(6, 3, Variant::dirichlet), g2 = make_grid(6, 2, Variant::dirichlet);
  const HeatWave w = heat_wave(3, Variant::dirichlet);
  const BoundaryConditions bc = heat_bc(w, Variant::dirichlet);
  auto expect_invalid = [](auto&& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no exception for " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  {
    adi::test::ScopedEnv unset("ADI_STAGE_ORDER", "");
    AdiSolver<double> s3(g3, w.pde(), bc, Scheme::douglas());
    EXPECT_EQ(s3.stage_order(), (std::vector<Axis>{Axis::x, Axis::y, Axis::z}));
    AdiSolver<double> s2(g2, w.pde(), bc, Scheme::douglas());
    EXPECT_EQ(s2.stage_order(), (std::vector<Axis>{Axis::x, Axis::y}));
    s3.set_stage_order({Axis::y, Axis::z, Axis::x});
    EXPECT_EQ(s3.stage_order(), (std::vector<Axis>{Axis::y, Axis::z, Axis::x}));
    const std::vector<std::vector<Axis>> bad3 = {
        {Axis::x, Axis::x, Axis::y}, {Axis::z, Axis::y}, {Axis::x, Axis::y, Axis::z, Axis::x},
        {Axis::x, Axis::y, static_cast<Axis>(7)}};
    for (const auto& o : bad3)
      expect_invalid([&] { s3.set_stage_order(o); }, "AdiSolver::set_stage_order: order = (");
    expect_invalid([&] { s3.set_stage_order({Axis::x, Axis::x, Axis::y}); }, "(x, x, y)");
    expect_invalid([&] { s2.set_stage_order({Axis::x, Axis::y, Axis::z}); }, "active axes (x, y)");
    EXPECT_EQ(s3.stage_order(), (std::vector<Axis>{Axis::y, Axis::z, Axis::x})) << "a bad order changes nothing";
  }
  {
    adi::test::ScopedEnv zyx("ADI_STAGE_ORDER", "zyx");
    EXPECT_EQ(AdiSolver<double>(g3, w.pde(), bc, Scheme::douglas()).stage_order(),
              (std::vector<Axis>{Axis::z, Axis::y, Axis::x}));
    EXPECT_EQ(AdiSolver<double>(g2, w.pde(), bc, Scheme::douglas()).stage_order(),
              (std::vector<Axis>{Axis::y, Axis::x}))
        << "the letters of inactive axes are skipped";
  }
  for (const char* bad : {"zyq", "zy", "xyzx", "xxz"}) {
    adi::test::ScopedEnv env("ADI_STAGE_ORDER", bad);
    expect_invalid([&] { AdiSolver<double>(g3, w.pde(), bc, Scheme::douglas()); }, "ADI_STAGE_ORDER");
  }
}
}  // namespace

// The stencil fold (Operator::ExplicitFold::stencil, CUDA's default) on the host against the
// host's separate explicit passes: every scheme, every boundary set of the fold tests
// (mixed terms and per-node bands included), odd sizes, float and double, 3 steps; in the
// default stage order and reversed (the fold on the z stage, or y's on a 2D grid).
TEST(Fold, StencilFoldMatchesSeparatePassesOnTheHost) {
  using Fold = Operator<double>::ExplicitFold;
  const std::vector<Scheme> schemes = {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                                       Scheme::hundsdorfer_verwer(), Scheme::douglas().with_damping(1)};
  bool reversed = false;
  for_each_fold_case(schemes, [&](const FoldSet& set, const std::array<index_t, 3>&, const Grid& g, double dt,
                                  const Scheme& s) {
    auto steps = [&](auto zero, Fold mode) {
      using T = decltype(zero);
      AdiSolver<T> solver(Operator<T>(g, set.pde, set.bc), s);
      if (reversed) {  // the fold on the last active axis's stage (z, or y on a 2D grid)
        std::vector<Axis> order = solver.stage_order();
        std::reverse(order.begin(), order.end());
        solver.set_stage_order(order);
      }
      EXPECT_EQ(solver.op().explicit_fold(), Operator<T>::ExplicitFold::separate) << "the host's default";
      solver.op().set_explicit_fold(static_cast<typename Operator<T>::ExplicitFold>(mode));
      Field<T> u(g);
      fill(u, g, fold_init, 0.0);
      solver.advance(u, 0.0, 3 * dt, 3);
      if (mode != Fold::separate) EXPECT_EQ(solver.timings().explicit_part, 0.0);
      return u;
    };
    auto compare = [&](auto zero, double tol) {
      const auto a = steps(zero, Fold::separate), b = steps(zero, Fold::stencil);
      double diff = 0, scale = 0;
      for (index_t k = 0; k < g.nz(); ++k)
        for (index_t j = 0; j < g.ny(); ++j)
          for (index_t i = 0; i < g.nx(); ++i) {
            const double d = std::abs(double(a(i, j, k)) - double(b(i, j, k)));
            diff = std::isfinite(d) ? std::max(diff, d) : HUGE_VAL;
            scale = std::max(scale, std::abs(double(a(i, j, k))));
          }
      EXPECT_LE(diff, tol * std::max(scale, 1e-30))
          << s.name() << " " << set.what << " " << g.describe() << (sizeof(zero) == 4 ? " float" : " double")
          << (reversed ? " reversed order" : "");
    };
    for (bool r : {false, true}) {
      reversed = r;
      compare(0.0f, 3e-4);
      compare(0.0, 3e-12);
    }
  });
}
