// The fused ADI stage (solvers/cuda/thomas_pcr_fused_stage.cuh), reached through
// Operator<T>::solve on a CUDA executor, against the host operator on the same data:
// every axis of non-cubic, stretched and periodic grids; Dirichlet (with intermediate
// stage corrections), Neumann and periodic ends; sources; no explicit part; t_old ==
// t_new; in place and into a separate result; line lengths on both sides of the fused
// kernels' limits (longer lines and per-node bands take the stencil + plan path).
// Results start NaN-poisoned: the sweep box must be written, nothing else. The same stages
// are also checked against the plain fp64 CPU reference of the stage (tests/adi/
// stage_reference.hpp: the stencil apply probed for its line matrices, solved by the
// oracle), which is first checked against the host solve (StageReference, runs anywhere).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "gpu_skip.hpp"
#include "adi/adi.hpp"
#include "tests/adi/stage_reference.hpp"
#include "solvers/cuda/backend.hpp"


using namespace adi;

namespace {

struct StageCase {
  Axis axis = Axis::x;
  double s = 2e-3;            // theta*dt
  bool with_v = true;         // V_old given (explicit part)
  bool same_time = false;     // t_old == t_new
  bool in_place = false;      // Y == base, no result field
  std::array<bool, 3> later{};
};

double g3(double t, double x, double y, double z) {
  return std::cos(1.3 * x + 0.4 * t) * std::sin(0.9 * y + 0.3) + 0.5 * z * z - 0.2 * t;
}

template <class T>
void random_fill(Field<T>& f, std::mt19937& rng) {
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (index_t k = 0; k < f.nz(); ++k)
    for (index_t j = 0; j < f.ny(); ++j)
      for (index_t i = 0; i < f.nx(); ++i) f(i, j, k) = T(U(rng));
}

template <class T>
void check_stage(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const StageCase& c,
                 std::uint32_t seed, const std::string& what) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + what + " grid " + g.describe() + " axis " +
               axis_name(c.axis) + (c.with_v ? "" : " no-V") + (c.same_time ? " same-time" : "") +
               (c.in_place ? " in-place" : ""));
  const Executor gpu = Executor::cuda();
  Operator<T> host(g, pde, bc), dev(g, pde, bc, gpu);
  std::mt19937 rng(seed);
  Field<T> base(g), V(g), R(g);
  random_fill(base, rng);
  random_fill(V, rng);
  R.fill(std::numeric_limits<T>::quiet_NaN());
  Field<T> dbase(g, gpu), dV(g, gpu), dR(g, gpu);
  dbase.copy_from(base);
  dV.copy_from(V);
  dR.copy_from(R);
  const T s = T(c.s);
  const double t_new = 0.3, t_old = c.same_time ? t_new : 0.25;
  for (int rep = 0; rep < 2; ++rep) {  // the second call reuses the formed bands (no pivot check)
    if (c.in_place) {
      Field<T> Y(g), dY(g, gpu);
      Y.copy_from(base);
      dY.copy_from(base);
      host.solve(c.axis, s, t_new, Y, Y, t_old, c.with_v ? &V : nullptr, c.later);
      dev.solve(c.axis, s, t_new, dY, dY, t_old, c.with_v ? &dV : nullptr, c.later);
      R.copy_from(Y);
      dR.copy_from(dY);
    } else {
      Field<T> Y(g), dY(g, gpu);
      host.solve(c.axis, s, t_new, base, Y, t_old, c.with_v ? &V : nullptr, c.later, &R);
      dev.solve(c.axis, s, t_new, dbase, dY, t_old, c.with_v ? &dV : nullptr, c.later, &dR);
    }
  }
  const Field<T> got = dR.to_host();
  // The sweep box: the whole axis times the unknown ranges of the other two.
  const auto lo = host.unknown_lo(), hi = host.unknown_hi();
  const int a = static_cast<int>(c.axis);
  double scale = 1.0;
  auto in_sweep = [&](index_t i, index_t j, index_t k) {
    const index_t idx[3] = {i, j, k};
    for (int d = 0; d < 3; ++d)
      if (d != a && (idx[d] < lo[d] || idx[d] > hi[d])) return false;
    return true;
  };
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        if (in_sweep(i, j, k)) scale = std::max(scale, std::abs(double(R(i, j, k))));
  const double tol = (sizeof(T) == 4 ? 3e-5 : 1e-12) * scale;
  long wrong = 0;
  std::string first;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double want = double(R(i, j, k)), have = double(got(i, j, k));
        bool ok;
        if (in_sweep(i, j, k))
          ok = std::isfinite(have) && std::abs(have - want) <= tol;
        else
          ok = c.in_place || std::isnan(have);  // in place: Y's other nodes are not compared
        if (!ok && wrong++ == 0)
          first = "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): gpu " +
                  std::to_string(have) + ", host " + std::to_string(want);
      }
  EXPECT_EQ(wrong, 0) << "first bad node " << first << " (tol " << tol << ")";
}

// Operator<T>::solve on `ex` (no later axes) against the fp64 reference of the stage, from
// the same T-rounded inputs: the sweep box within tol * max(1, |Y|), NaN outside it.
template <class T>
void check_reference(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const StageCase& c,
                     std::uint32_t seed, const std::string& what, const Executor& ex) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + what + " on " + ex.name() + " grid " +
               g.describe() + " axis " + axis_name(c.axis) + (c.with_v ? "" : " no-V") +
               (c.same_time ? " same-time" : ""));
  Operator<double> ref_op(g, pde, bc);
  Operator<T> op(g, pde, bc, ex);
  std::mt19937 rng(seed);
  Field<T> base(g), V(g);
  random_fill(base, rng);
  random_fill(V, rng);
  const double t_new = 0.3, t_old = c.same_time ? t_new : 0.25;
  const Field<double> want = adi::test::stage_reference<T>(ref_op, c.axis, double(T(c.s)), t_new, base, t_old,
                                                           c.with_v ? &V : nullptr);
  Field<T> dbase(g, ex), dV(g, ex), dY(g, ex);
  dbase.copy_from(base);
  dV.copy_from(V);
  dY.fill(std::numeric_limits<T>::quiet_NaN());
  op.solve(c.axis, T(c.s), t_new, dbase, dY, t_old, c.with_v ? &dV : nullptr);
  const Field<T> got = dY.to_host();
  double scale = 1.0;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        if (!std::isnan(want(i, j, k))) scale = std::max(scale, std::abs(want(i, j, k)));
  const double tol = (sizeof(T) == 4 ? 5e-5 : 1e-11) * scale;
  long wrong = 0, compared = 0;
  double worst = 0;
  std::string first;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double w = want(i, j, k), h = double(got(i, j, k));
        if (std::isnan(w)) continue;  // outside the sweep box: Y there is the caller's
        ++compared;
        const bool ok = std::isfinite(h) && std::abs(h - w) <= tol;
        if (std::isfinite(h)) worst = std::max(worst, std::abs(h - w));
        if (!ok && wrong++ == 0)
          first = "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): got " +
                  std::to_string(h) + ", reference " + std::to_string(w);
      }
  EXPECT_GT(compared, g.nx() * g.ny() * g.nz() / 2) << "the sweep box is most of the grid";
  EXPECT_EQ(wrong, 0) << "first bad node " << first << " (tol " << tol << ", worst " << worst << ")";
}

Grid stretched_grid(index_t nx, index_t ny, index_t nz) {
  auto ax = [](index_t n, double c) {
    return n == 1 ? AxisGrid() : n < 5 ? AxisGrid::uniform(n, 0.0, 1.0) : AxisGrid::stretched(n, 0.0, 1.0, c, 3.0);
  };
  return Grid(ax(nx, 0.4), ax(ny, 0.6), ax(nz, 0.5));
}

BoundaryConditions all_dirichlet() { return BoundaryConditions::all(Boundary::dirichlet(g3)); }

BoundaryConditions with_neumann() {
  BoundaryConditions bc = all_dirichlet();
  bc.set(Face::x_lo, Boundary::neumann([](double t, double x, double y, double z) { return g3(t, x, y, z) + 1.0; }));
  bc.set(Face::y_hi, Boundary::neumann(0.7));
  bc.set(Face::z_lo, Boundary::neumann([](double t, double, double y, double) { return y - t; }));
  return bc;
}

Pde heat_with_drift() {
  Pde p = Pde::heat(1.0, 0.7, 0.4);
  p.convection = {Coefficient(0.9), Coefficient(-0.6), Coefficient(0.3)};
  p.reaction = -0.8;
  return p;
}

template <class T>
void all_axes(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const std::string& what,
              std::uint32_t& seed) {
  for (Axis ax : {Axis::x, Axis::y, Axis::z}) {
    if (g.extent(ax) == 1) continue;
    StageCase c;
    c.axis = ax;
    for (int i = static_cast<int>(ax) + 1; i < 3; ++i) c.later[i] = g.extent(static_cast<Axis>(i)) > 1;
    check_stage<T>(g, pde, bc, c, seed++, what);
    c.in_place = true;
    check_stage<T>(g, pde, bc, c, seed++, what);
    c.in_place = false;
    c.with_v = false;
    c.later = {};
    check_stage<T>(g, pde, bc, c, seed++, what);
    c.with_v = true;
    c.same_time = true;
    check_stage<T>(g, pde, bc, c, seed++, what);
    if (::testing::Test::HasFailure()) return;
  }
}

template <class T>
void boundary_kinds() {
  std::uint32_t seed = 1;
  const Grid g = stretched_grid(37, 64, 19);
  all_axes<T>(g, Pde::heat(1.0, 0.7, 0.4), all_dirichlet(), "heat dirichlet", seed);
  all_axes<T>(g, heat_with_drift(), with_neumann(), "drift neumann", seed);
  Pde src = heat_with_drift();
  src.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  all_axes<T>(g, src, all_dirichlet(), "source dirichlet", seed);
  all_axes<T>(g, src, with_neumann(), "source neumann", seed);
  const Grid gp(periodic_axis(36, 0.0, 1.0), AxisGrid::uniform(21, 0.0, 1.0), periodic_axis(19, 0.0, 2.0));
  BoundaryConditions bp = all_dirichlet();
  bp.set_periodic(Axis::x);
  bp.set_periodic(Axis::z);
  all_axes<T>(gp, heat_with_drift(), bp, "periodic x z", seed);
  all_axes<T>(gp, src, bp, "periodic with source", seed);
  // Per-node bands (D_x depends on y): x and y take the stencil + plan path.
  Pde var = heat_with_drift();
  var.diffusion[0] = [](double x, double y, double) { return 1.0 + 0.5 * x * y; };
  all_axes<T>(g, var, with_neumann(), "per-node bands", seed);
}

// Lines of every length class along each axis (the fused kernels stop at n = 1024 along
// X and 512 along Y/Z; past that the stencil + plan path runs).
template <class T>
void line_lengths() {
  std::uint32_t seed = 500;
  for (index_t n : {2, 3, 31, 33, 64, 255, 257, 512, 513, 1024, 1025})
    for (int a = 0; a < 3; ++a) {
      index_t e[3] = {5, 4, 3};
      e[a] = n;
      const Grid g = stretched_grid(e[0], e[1], e[2]);
      BoundaryConditions bc = with_neumann();
      if (n == 2) bc.set(static_cast<Axis>(a), Boundary::neumann(0.5), Boundary::neumann(-0.25));
      StageCase c;
      c.axis = static_cast<Axis>(a);
      c.later = {a < 1, a < 2, false};
      // s ~ h_min^2 keeps I/s - A as well conditioned as for the short lines (the
      // comparison is with the host's float arithmetic, not a reference).
      const AxisGrid& ag = g.axis(c.axis);
      double hmin = 1.0;
      for (index_t i = 0; i + 1 < ag.size(); ++i) hmin = std::min(hmin, ag[i + 1] - ag[i]);
      c.s = std::min(2e-3, 4.0 * hmin * hmin);
      check_stage<T>(g, heat_with_drift(), bc, c, seed++, "n=" + std::to_string(n));
      if (::testing::Test::HasFailure()) return;
    }
}

// The stage of every boundary kind, source, per-node bands and periodic axes, every axis,
// with and without the explicit part and at t_old == t_new, against the fp64 reference.
template <class T>
void reference_cases(const Executor& ex) {
  std::uint32_t seed = 700;
  const Grid g = stretched_grid(37, 33, 19);
  Pde src = heat_with_drift();
  src.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  Pde var = heat_with_drift();
  var.diffusion[0] = [](double x, double y, double) { return 1.0 + 0.5 * x * y; };
  const Grid gp(periodic_axis(36, 0.0, 1.0), AxisGrid::uniform(21, 0.0, 1.0), periodic_axis(19, 0.0, 2.0));
  BoundaryConditions bp = all_dirichlet();
  bp.set_periodic(Axis::x);
  bp.set_periodic(Axis::z);
  struct Problem {
    const Grid* g;
    Pde pde;
    BoundaryConditions bc;
    const char* what;
  };
  const Problem problems[] = {{&g, Pde::heat(1.0, 0.7, 0.4), all_dirichlet(), "heat dirichlet"},
                              {&g, heat_with_drift(), with_neumann(), "drift neumann"},
                              {&g, src, with_neumann(), "source neumann"},
                              {&g, var, with_neumann(), "per-node bands"},
                              {&gp, src, bp, "periodic x z with source"}};
  for (const Problem& p : problems)
    for (Axis ax : {Axis::x, Axis::y, Axis::z}) {
      StageCase c;
      c.axis = ax;
      check_reference<T>(*p.g, p.pde, p.bc, c, seed++, p.what, ex);
      c.with_v = false;
      check_reference<T>(*p.g, p.pde, p.bc, c, seed++, p.what, ex);
      c.with_v = true;
      c.same_time = true;
      check_reference<T>(*p.g, p.pde, p.bc, c, seed++, p.what, ex);
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace

TEST(CudaFusedStage, BoundaryKindsFloat) {
  ADI_REQUIRE_CUDA();
  boundary_kinds<float>();
}

TEST(CudaFusedStage, BoundaryKindsDouble) {
  ADI_REQUIRE_CUDA();
  boundary_kinds<double>();
}

TEST(CudaFusedStage, LineLengths) {
  ADI_REQUIRE_CUDA();
  line_lengths<float>();
  line_lengths<double>();
}

// A zero pivot (b = 1/s - d = 0) surfaces as SingularSystem; the same operator then
// solves with a healthy s.
TEST(CudaFusedStage, ZeroPivotThrows) {
  ADI_REQUIRE_CUDA();
  const Grid g(AxisGrid::uniform(40, 0.0, 1.0));
  Pde p = Pde::heat(0.0);
  p.reaction = 4.0;  // d = R = 4: b = 1/s - 4 = 0 for s = 1/4 (rows of A hold only R)
  const BoundaryConditions bc = BoundaryConditions::all(Boundary::neumann(0.0));
  Operator<double> op(g, p, bc, Executor::cuda());
  Field<double> base(g, Executor::cuda()), Y(g, Executor::cuda());
  base.fill(1.0);
  EXPECT_THROW(op.solve(Axis::x, 0.25, 0.1, base, Y), SingularSystem);
  EXPECT_NO_THROW(op.solve(Axis::x, 0.125, 0.1, base, Y));
  const Field<double> y = Y.to_host();
  EXPECT_NEAR(y(7, 0, 0), 1.0 / (8.0 - 4.0) * 8.0, 1e-12);  // (8 - 4) u = 8 * 1
}

// The sanitizer's case.
TEST(CudaFusedStage, Small) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 900;
  const Grid g = stretched_grid(9, 7, 5);
  all_axes<float>(g, heat_with_drift(), with_neumann(), "small", seed);
  all_axes<double>(g, Pde::heat(1.0, 0.7, 0.4), all_dirichlet(), "small", seed);
}

// The reference itself, against the host solve (no GPU needed): what the GPU is held to.
TEST(StageReference, MatchesTheHostSolve) { reference_cases<double>(Executor::host()); }

// The fused GPU stage (and, for per-node bands, the stencil + plan path) against the fp64
// CPU reference of the stage, not only against the host Operator.
TEST(CudaFusedStage, MatchesTheFp64ReferenceFloat) {
  ADI_REQUIRE_CUDA();
  reference_cases<float>(Executor::cuda());
}

TEST(CudaFusedStage, MatchesTheFp64ReferenceDouble) {
  ADI_REQUIRE_CUDA();
  reference_cases<double>(Executor::cuda());
}

// The host stage in float against the same reference and tolerance the GPU float stage is held
// to (measured here: at most 4.2e-7 of max |Y| over the 45 cases, against 5e-5; fp64 1e-15).
TEST(StageReference, HostFloatWithinTolerance) { reference_cases<float>(Executor::host()); }
