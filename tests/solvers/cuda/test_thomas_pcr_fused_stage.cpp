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

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "scoped_env.hpp"
#include "adi/adi.hpp"
#include "tests/adi/stage_reference.hpp"
#include "adi/detail/tridiagonal_stage.hpp"
#include "solvers/cuda/backend.hpp"
#include "tests/comparison_forms_skip.hpp"


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

// A device stage's result against its fp64 reference, node by node over the sweep box (the
// reference's non-NaN nodes; Y elsewhere is the caller's): finite and within
// rel_tol * max(1, max |reference|). The first bad node is named.
struct ReferenceMatch {
  long compared = 0, wrong = 0;
  double tol = 0, worst = 0;
  std::string first;
};
template <class T>
ReferenceMatch match_reference(const Field<double>& want, const Field<T>& got, double rel_tol) {
  const Field<double>& g = want;  // the extents
  double scale = 1.0;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        if (!std::isnan(want(i, j, k))) scale = std::max(scale, std::abs(want(i, j, k)));
  ReferenceMatch m;
  m.tol = rel_tol * scale;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double w = want(i, j, k), h = double(got(i, j, k));
        if (std::isnan(w)) continue;
        ++m.compared;
        const bool ok = std::isfinite(h) && std::abs(h - w) <= m.tol;
        if (std::isfinite(h)) m.worst = std::max(m.worst, std::abs(h - w));
        if (!ok && m.wrong++ == 0)
          m.first = "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): got " +
                    std::to_string(h) + ", reference " + std::to_string(w);
      }
  return m;
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
  const ReferenceMatch m = match_reference(want, dY.to_host(), sizeof(T) == 4 ? 5e-5 : 1e-11);
  EXPECT_GT(m.compared, g.nx() * g.ny() * g.nz() / 2) << "the sweep box is most of the grid";
  EXPECT_EQ(m.wrong, 0) << "first bad node " << m.first << " (tol " << m.tol << ", worst " << m.worst << ")";
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

// ---- The folded stage (Operator::solve_folded) ----------------------------------------
// The explicit operator inside the first stage's kernel: the device (folded, when
// dev.folds(axis)) against the host (the explicit pass into Y, then the stage) on the same
// data, and against the fp64 reference of apply + stage. Three forms, as the schemes use it:
//   douglas: base = U + dt F(t0, U), V_old = U at t0 (the first stage of every chain)
//   mcs:     base = U + (dt + w_old) F(t0, U) + w_new F(t1, Y_k), V_old = U at t0
//   hv:      base = U + h F(t0, U) + h F(t1, Y_k), V_old = Y_k at t1 (t_old = t_new)
enum class FoldForm { douglas, mcs, hv };
const char* fold_form_name(FoldForm f) {
  return f == FoldForm::douglas ? "douglas" : f == FoldForm::mcs ? "mcs" : "hv";
}

struct FoldCase {
  Axis axis = Axis::x;
  FoldForm form = FoldForm::douglas;
  bool result = false;     // the solution into a separate field
  bool result_u = false;   // into U itself (1D: the chain's only stage)
  bool later = true;       // the axes after `axis` follow (intermediate Dirichlet values)
};

template <class T>
struct FoldInputs {
  Field<T> U, Yk;
  std::array<typename Operator<T>::ExplicitTerm, 2> terms{};
  Field<T>* V_old = nullptr;
  double t_old = 0, t_new = 0;
  T s = T(0);
  // The terms of form f on fields U and Yk.
  FoldInputs(const Grid& g, const Executor& e, FoldForm f, const Field<T>& u, const Field<T>& yk)
      : U(g, e), Yk(g, e) {
    U.copy_from(u);
    Yk.copy_from(yk);
    // dt ~ h_min^2 on fine grids keeps the stage as well conditioned as on the coarse ones
    // (the comparison is with the host's float arithmetic).
    double hmin = 1.0;
    for (Axis ax : {Axis::x, Axis::y, Axis::z}) {
      const AxisGrid& ag = g.axis(ax);
      for (index_t i = 0; i + 1 < ag.size(); ++i) hmin = std::min(hmin, ag[i + 1] - ag[i]);
    }
    const double dt = std::min(4e-3, 8.0 * hmin * hmin);
    const double t0 = 0.25, t1 = t0 + dt, theta = f == FoldForm::mcs ? 1.0 / 3.0 : 0.5;
    s = T(theta * dt);
    t_new = t1;
    using W4 = std::array<T, 4>;
    if (f == FoldForm::douglas) {
      terms[0] = {t0, &U, W4{T(dt), T(dt), T(dt), T(dt)}};
      V_old = &U;
      t_old = t0;
    } else if (f == FoldForm::mcs) {
      const T c = T((0.5 - theta) * dt), c0 = T(0.5 * dt);
      terms[0] = {t0, &U, W4{T(dt) - c0, T(dt) - c, T(dt) - c, T(dt) - c}};
      terms[1] = {t1, &Yk, W4{c0, c, c, c}};
      V_old = &U;
      t_old = t0;
    } else {
      const T h = T(0.5 * dt);
      terms[0] = {t0, &U, W4{h, h, h, h}};
      terms[1] = {t1, &Yk, W4{h, h, h, h}};
      V_old = &Yk;
      t_old = t1;
    }
  }
};

// The sweep box of axis a: the whole axis times the unknown ranges of the other two.
template <class T>
bool in_sweep_box(const Operator<T>& op, int a, index_t i, index_t j, index_t k) {
  const auto lo = op.unknown_lo(), hi = op.unknown_hi();
  const index_t idx[3] = {i, j, k};
  for (int d = 0; d < 3; ++d)
    if (d != a && (idx[d] < lo[d] || idx[d] > hi[d])) return false;
  return true;
}

using ExplicitFold = Operator<double>::ExplicitFold;

// `dev` runs on `gpu` (the device, or the host for the stencil mode's host check) with the
// given ExplicitFold; the reference is the host with separate passes.
template <class T>
void check_folded(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const FoldCase& c,
                  std::uint32_t seed, const std::string& what, bool expect_fold,
                  ExplicitFold mode = ExplicitFold::kernel, const Executor& gpu = Executor::cuda()) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + what + " grid " + g.describe() + " axis " +
               axis_name(c.axis) + " form " + fold_form_name(c.form) + (c.result ? " result" : "") +
               (c.result_u ? " into-U" : "") + (mode == ExplicitFold::kernel ? " kernel" : " stencil") + " on " +
               gpu.name());
  Operator<T> host(g, pde, bc), dev(g, pde, bc, gpu);
  dev.set_explicit_fold(static_cast<typename Operator<T>::ExplicitFold>(mode));
  host.set_explicit_fold(Operator<T>::ExplicitFold::separate);
  if (mode != ExplicitFold::kernel) expect_fold = false;
  EXPECT_EQ(dev.folds(c.axis), expect_fold) << "the device stage " << (expect_fold ? "does not fold" : "folds");
  EXPECT_FALSE(host.folds(c.axis)) << "the host path is the unfolded one";
  std::mt19937 rng(seed);
  Field<T> u(g), yk(g);
  random_fill(u, rng);
  random_fill(yk, rng);
  FoldInputs<T> hi(g, Executor::host(), c.form, u, yk), di(g, gpu, c.form, u, yk);
  const int a = static_cast<int>(c.axis);
  std::array<bool, 3> later{};
  if (c.later)
    for (int i = a + 1; i < 3; ++i) later[i] = g.extent(static_cast<Axis>(i)) > 1;
  Field<T> nan(g);
  nan.fill(std::numeric_limits<T>::quiet_NaN());
  Field<T> Y(g), R(g), dY(g, gpu), dR(g, gpu);
  for (int rep = 0; rep < 2; ++rep) {  // the second call reuses the formed bands
    Y.copy_from(nan);
    R.copy_from(nan);
    dY.copy_from(nan);
    dR.copy_from(nan);
    Field<T>* hr = c.result_u ? &hi.U : c.result ? &R : nullptr;
    Field<T>* dr = c.result_u ? &di.U : c.result ? &dR : nullptr;
    if (c.result_u) {  // U is an input too: fresh for each repetition
      hi.U.copy_from(u);
      di.U.copy_from(u);
    }
    host.solve_folded(c.axis, hi.s, hi.t_new, T(1), hi.terms, Y, hi.t_old, hi.V_old, later, hr);
    dev.solve_folded(c.axis, di.s, di.t_new, T(1), di.terms, dY, di.t_old, di.V_old, later, dr);
  }
  const Field<T> want = c.result_u ? hi.U.to_host() : c.result ? R.to_host() : Y.to_host();
  const Field<T> got = c.result_u ? di.U.to_host() : c.result ? dR.to_host() : dY.to_host();
  double scale = 1.0;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        if (in_sweep_box(host, a, i, j, k)) scale = std::max(scale, std::abs(double(want(i, j, k))));
  const double tol = (sizeof(T) == 4 ? 1e-4 : 1e-12) * scale;
  long wrong = 0;
  double worst = 0;
  std::string first;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double w = double(want(i, j, k)), h = double(got(i, j, k));
        bool ok;
        if (in_sweep_box(host, a, i, j, k)) {
          ok = std::isfinite(h) && std::abs(h - w) <= tol;
          if (std::isfinite(h)) worst = std::max(worst, std::abs(h - w));
        } else {
          ok = c.result_u ? h == w : std::isnan(h);  // nothing outside the sweep box is written
        }
        if (!ok && wrong++ == 0)
          first = "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): gpu " +
                  std::to_string(h) + ", host " + std::to_string(w);
      }
  EXPECT_EQ(wrong, 0) << "first bad node " << first << " (tol " << tol << ", worst " << worst << ")";
  if (c.result) {  // Y is not written by the folded stage (no Y_0 is stored)
    const Field<T> y = dY.to_host();
    long written = 0;
    for (index_t k = 0; k < g.nz(); ++k)
      for (index_t j = 0; j < g.ny(); ++j)
        for (index_t i = 0; i < g.nx(); ++i) written += !std::isnan(double(y(i, j, k)));
    if (expect_fold) EXPECT_EQ(written, 0) << "the folded stage wrote Y";
  }
}

// solve_folded on `ex` (no later axes) against the fp64 reference: base by the host
// Operator<double>'s apply from the same T-rounded fields, then the stage's reference.
template <class T>
void check_folded_reference(const Grid& g, const Pde& pde, const BoundaryConditions& bc, FoldForm form, Axis axis,
                            std::uint32_t seed, const std::string& what, const Executor& ex, ExplicitFold mode) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + what + " on " + ex.name() + " grid " +
               g.describe() + " axis " + axis_name(axis) + " form " + fold_form_name(form));
  Operator<double> ref_op(g, pde, bc);
  Operator<T> op(g, pde, bc, ex);
  op.set_explicit_fold(static_cast<typename Operator<T>::ExplicitFold>(mode));
  std::mt19937 rng(seed);
  Field<T> u(g), yk(g);
  random_fill(u, rng);
  random_fill(yk, rng);
  FoldInputs<T> in(g, ex, form, u, yk);
  // The reference: base = alpha U + sum_q w_q F(t_q, P_q) in double.
  Field<double> U = adi::test::to_double(g, u), Yk = adi::test::to_double(g, yk), base(g);
  base.fill(0.0);
  std::array<Field<double>*, 2> P{&U, &Yk};
  for (int q = 0; q < 2; ++q) {
    const auto& term = in.terms[q];
    if (!term.field) continue;
    std::array<double, 4> w{};
    for (int p = 0; p < 4; ++p) w[p] = double(term.w[p]);
    ref_op.apply(term.t, *P[q], w, q == 0 ? 1.0 : 1.0, q == 0 ? P[q] : &base, base);
  }
  const Field<double>* V_ref = in.V_old == &in.U ? &U : &Yk;
  const Field<double> want =
      adi::test::stage_reference<double>(ref_op, axis, double(in.s), in.t_new, base, in.t_old, V_ref);
  Field<T> dY(g, ex);
  dY.fill(std::numeric_limits<T>::quiet_NaN());
  op.solve_folded(axis, in.s, in.t_new, T(1), in.terms, dY, in.t_old, in.V_old);
  const ReferenceMatch m = match_reference(want, dY.to_host(), sizeof(T) == 4 ? 2e-4 : 1e-11);
  EXPECT_EQ(m.wrong, 0) << "first bad node " << m.first << " (tol " << m.tol << ", worst " << m.worst << ")";
}

// The boundary sets of the folded-stage tests.
struct FoldProblem {
  const char* what;
  Pde pde;
  BoundaryConditions bc;
  std::array<bool, 3> periodic{};  // the grid's periodic axes
  bool folds = true;               // the device stage folds (no mixed terms, shared bands)
};

std::vector<FoldProblem> fold_problems() {
  std::vector<FoldProblem> v;
  Pde src = heat_with_drift();
  src.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  v.push_back({"dirichlet constant", Pde::heat(1.0, 0.7, 0.4), BoundaryConditions::all(Boundary::dirichlet(0.3))});
  v.push_back({"dirichlet g(t)", heat_with_drift(), all_dirichlet()});
  v.push_back({"neumann + source", src, with_neumann()});
  BoundaryConditions bp = all_dirichlet();
  bp.set_periodic(Axis::x);
  bp.set_periodic(Axis::z);
  v.push_back({"periodic x z + source", src, bp, {true, false, true}});
  // The "mixed" set: periodic x, Dirichlet g(t) y_lo, Neumann y_hi, Neumann g(t) z_lo, Dirichlet constant z_hi.
  BoundaryConditions bm;
  bm.set_periodic(Axis::x);
  bm.set(Face::y_lo, Boundary::dirichlet(g3)).set(Face::y_hi, Boundary::neumann(0.5));
  bm.set(Face::z_lo, Boundary::neumann([](double t, double x, double y, double) { return std::cos(t) * x * y; }));
  bm.set(Face::z_hi, Boundary::dirichlet(-0.3));
  v.push_back({"mixed set + source", src, bm, {true, false, false}});
  // Mixed derivative terms: the explicit pass stays a pass of its own (no fold), same results.
  Pde mixed = heat_with_drift();
  mixed.mixed_xy = 0.3;
  mixed.mixed_yz = -0.2;
  v.push_back({"mixed terms (not folded)", mixed, all_dirichlet(), {}, false});
  return v;
}

Grid fold_grid(std::array<index_t, 3> n, const std::array<bool, 3>& periodic) {
  auto ax = [&](int d) {
    if (n[d] == 1) return AxisGrid();
    if (periodic[d]) return periodic_axis(n[d], 0.0, 1.0);
    return n[d] < 5 ? AxisGrid::uniform(n[d], 0.0, 1.0) : AxisGrid::stretched(n[d], 0.0, 1.0, 0.45, 3.0);
  };
  return Grid(ax(0), ax(1), ax(2));
}

// Every boundary set, every form, every axis of a 3D grid and odd line lengths along each
// axis (3, 31, 33, 255, 257, and 2: no unknowns along it), 2D and 1D grids (1: the minimum).
template <class T>
void folded_cases(ExplicitFold mode = ExplicitFold::kernel, const Executor& ex = Executor::cuda()) {
  std::uint32_t seed = 3000;
  for (const FoldProblem& p : fold_problems()) {
    std::vector<std::array<index_t, 3>> sizes = {{37, 33, 19}, {33, 31, 1}, {1, 33, 31}, {257, 1, 1}, {1, 31, 1}};
    for (index_t n : {3, 31, 33, 255, 257})
      for (int a = 0; a < 3; ++a) {
        std::array<index_t, 3> e{7, 5, 3};
        e[a] = n;
        sizes.push_back(e);
      }
    sizes.push_back({2, 5, 4});
    for (const auto& e : sizes) {
      bool ok = true;
      for (int d = 0; d < 3; ++d) ok = ok && !(p.periodic[d] && e[d] < 3);
      if (!ok) continue;
      std::array<bool, 3> per{};
      for (int d = 0; d < 3; ++d) per[d] = p.periodic[d] && e[d] > 1;
      const Grid g = fold_grid(e, per);
      BoundaryConditions bc = p.bc;
      bool two = false;
      for (int d = 0; d < 3; ++d) {
        if (p.periodic[d] && e[d] == 1) bc.set(static_cast<Axis>(d), Boundary::dirichlet(0.1), Boundary::dirichlet(0.1));
        if (e[d] == 2) {  // no room for Dirichlet ends at both sides: Neumann
          bc.set(static_cast<Axis>(d), Boundary::neumann(0.5), Boundary::neumann(-0.25));
          two = true;
        }
      }
      // Mixed terms: both x and y present and no Neumann face next to them.
      if (p.pde.has_mixed() && (two || e[0] == 1 || e[1] == 1)) continue;
      const bool is3d = e[0] > 1 && e[1] > 1 && e[2] > 1;
      for (int a = 0; a < 3; ++a) {
        if (e[a] == 1) continue;
        // Folded along x (the first stage of every chain on a grid with nx > 1); along y
        // and z solve_folded runs the explicit pass and the stage (the same results).
        const bool fold = p.folds && a == 0 && e[a] <= 1024;
        for (FoldForm f : {FoldForm::douglas, FoldForm::mcs, FoldForm::hv}) {
          FoldCase c;
          c.axis = static_cast<Axis>(a);
          c.form = f;
          check_folded<T>(g, p.pde, bc, c, seed++, p.what, fold, mode, ex);
          if (is3d && f == FoldForm::douglas) {
            c.result = true;
            check_folded<T>(g, p.pde, bc, c, seed++, p.what, fold, mode, ex);
            c.result = false;
            c.later = false;
            check_folded<T>(g, p.pde, bc, c, seed++, p.what, fold, mode, ex);
          }
          if (::testing::Test::HasFailure()) return;
        }
        // One active axis: the stage may write U itself (the only stage of the chain).
        int active = 0;
        for (int d = 0; d < 3; ++d) active += e[d] > 1;
        if (active == 1) {
          FoldCase c;
          c.axis = static_cast<Axis>(a);
          c.result_u = true;
          check_folded<T>(g, p.pde, bc, c, seed++, p.what, fold, mode, ex);
          c.form = FoldForm::hv;
          check_folded<T>(g, p.pde, bc, c, seed++, p.what, fold, mode, ex);
        }
      }
    }
  }
}

template <class T>
void folded_reference_cases(const Executor& ex, ExplicitFold mode = ExplicitFold::kernel) {
  std::uint32_t seed = 4000;
  for (const FoldProblem& p : fold_problems()) {
    const Grid g = fold_grid({37, 33, 19}, p.periodic);
    for (Axis ax : {Axis::x, Axis::y, Axis::z}) {
      if (p.periodic[static_cast<int>(ax)] && g.extent(ax) < 3) continue;
      for (FoldForm f : {FoldForm::douglas, FoldForm::mcs, FoldForm::hv})
        check_folded_reference<T>(g, p.pde, p.bc, f, ax, seed++, p.what, ex, mode);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace

TEST(CudaFoldedStage, MatchesTheHostFloat) {
  ADI_REQUIRE_CUDA();
  folded_cases<float>(ExplicitFold::kernel);
  folded_cases<float>(ExplicitFold::stencil);
}

TEST(CudaFoldedStage, MatchesTheHostDouble) {
  ADI_REQUIRE_CUDA();
  folded_cases<double>(ExplicitFold::kernel);
  folded_cases<double>(ExplicitFold::stencil);
}

// The stencil fold on the host against the host's separate passes (runs anywhere).
TEST(FoldedStage, StencilFoldMatchesSeparatePassesOnTheHost) {
  folded_cases<float>(ExplicitFold::stencil, Executor::host());
  folded_cases<double>(ExplicitFold::stencil, Executor::host());
}

TEST(CudaFusedStage, MatchesTheFp64ReferenceFoldedFloat) {
  ADI_REQUIRE_CUDA();
  folded_reference_cases<float>(Executor::cuda(), ExplicitFold::kernel);
  folded_reference_cases<float>(Executor::cuda(), ExplicitFold::stencil);
}

TEST(CudaFusedStage, MatchesTheFp64ReferenceFoldedDouble) {
  ADI_REQUIRE_CUDA();
  folded_reference_cases<double>(Executor::cuda(), ExplicitFold::kernel);
  folded_reference_cases<double>(Executor::cuda(), ExplicitFold::stencil);
}

// The X stage, plain and folded, on larger grids (stop 33): rows a multiple of 16 bytes and odd,
// more lines than the grid's warps (each warp takes several lines), every boundary kind along
// the cross axes too (Dirichlet, Neumann + source, periodic x z, periodic y z, the mixed set),
// 2200 planes; plain, in place, without v; folded douglas (one term, v's), mcs (two, the first
// v's), hv (two, the second, Y_k, v's), into a result, against the host Operator and the fp64
// reference. (Written for stop 33's staged X form, which lost to these kernels and was removed:
// docs/design.md, "The fused stage".)
template <class T>
void x_stage_cases() {
  std::uint32_t seed = 5000;
  Pde src = heat_with_drift();
  src.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  BoundaryConditions bp = all_dirichlet();
  bp.set_periodic(Axis::x);
  bp.set_periodic(Axis::z);
  BoundaryConditions bm;
  bm.set_periodic(Axis::x);
  bm.set(Face::y_lo, Boundary::dirichlet(g3)).set(Face::y_hi, Boundary::neumann(0.5));
  bm.set(Face::z_lo, Boundary::neumann([](double t, double x, double y, double) { return std::cos(t) * x * y; }));
  bm.set(Face::z_hi, Boundary::dirichlet(-0.3));
  BoundaryConditions byz = with_neumann();
  byz.set_periodic(Axis::y);
  byz.set_periodic(Axis::z);
  for (index_t nx : {64, 37}) {
    const Grid g = fold_grid({nx, 97, 67}, {});
    const Grid gp = fold_grid({nx, 33, 67}, {true, false, true});
    const Grid gm = fold_grid({nx, 33, 67}, {true, false, false});
    const Grid gyz = fold_grid({nx, 33, 35}, {false, true, true});
    const Grid gdeep = fold_grid({nx, 5, 2200}, {});
    struct Case {
      const Grid* g;
      const Pde* pde;
      BoundaryConditions bc;
      const char* what;
    };
    const Pde heat = Pde::heat(1.0, 0.7, 0.4);
    const Case cases[] = {{&g, &heat, all_dirichlet(), "x dirichlet"},
                          {&g, &src, with_neumann(), "x neumann + source"},
                          {&gp, &src, bp, "x periodic x z + source"},
                          {&gm, &src, bm, "x mixed set + source"},
                          {&gyz, &src, byz, "x periodic y z + source"},
                          {&gdeep, &heat, with_neumann(), "x 2200 planes"}};
    for (const Case& k : cases) {
      StageCase c;
      c.axis = Axis::x;
      c.later = {false, true, true};
      check_stage<T>(*k.g, *k.pde, k.bc, c, seed++, k.what);
      c.in_place = true;
      check_stage<T>(*k.g, *k.pde, k.bc, c, seed++, k.what);
      c.in_place = false;
      c.with_v = false;
      check_stage<T>(*k.g, *k.pde, k.bc, c, seed++, k.what);
      for (FoldForm f : {FoldForm::douglas, FoldForm::mcs, FoldForm::hv}) {
        FoldCase fc;
        fc.form = f;
        check_folded<T>(*k.g, *k.pde, k.bc, fc, seed++, k.what, true, ExplicitFold::kernel);
        if (f == FoldForm::douglas) {
          fc.result = true;
          check_folded<T>(*k.g, *k.pde, k.bc, fc, seed++, k.what, true, ExplicitFold::kernel);
        }
      }
      check_folded_reference<T>(*k.g, *k.pde, k.bc, FoldForm::douglas, Axis::x, seed++, k.what, Executor::cuda(),
                                ExplicitFold::kernel);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(CudaFusedStage, XStageLargerGridsFloat) {
  ADI_REQUIRE_CUDA();
  x_stage_cases<float>();
}

TEST(CudaFusedStage, XStageLargerGridsDouble) {
  ADI_REQUIRE_CUDA();
  x_stage_cases<double>();
}

// The folded stage's fp64 reference against the host's solve_folded, separate passes and
// stencil fold: runs anywhere.
TEST(StageReference, MatchesTheHostFoldedSolve) {
  folded_reference_cases<double>(Executor::host(), ExplicitFold::separate);
  folded_reference_cases<double>(Executor::host(), ExplicitFold::stencil);
  folded_reference_cases<float>(Executor::host(), ExplicitFold::stencil);
}

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

// A zero pivot (b = 1/s - d = 0) surfaces as SingularSystem (an UnstableSystem since the stage
// runs the stability check, issue 23); the same operator then solves with a healthy s.
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

namespace {

// The Y/Z form's warp copy stream (thomas_pcr_fused_stage.cuh, warp_tile_copy.cuh; the default
// unless ADI_FUSED_STAGE_STREAM=thread, scripts/gpu_stage_check.sh runs this binary at both) takes
// the stage where a row of the field is a multiple of 16 bytes: nx a multiple of 4. The other
// tests' odd nx take the per-thread stream. Here: nx 32, 36, 40 and 64; tiles aligned in memory
// that start one node before line 0 (Dirichlet x_lo: line 0 is node 1) or at it (Neumann x_lo);
// planes of 31 to 64 lines (tiles with idle slots at both ends); lines of 3 to 512 rows along y
// and z (segments of every length, halo rows); more tiles than blocks (each block refills its
// stage), periodic lines (halo rows wrapping around).
template <class T>
void warp_stream_cases() {
  std::uint32_t seed = 5000;
  const std::array<index_t, 3> sizes[] = {{32, 33, 19}, {36, 257, 5}, {64, 3, 255}, {64, 31, 200}, {40, 512, 3}};
  for (const auto& e : sizes) {
    const Grid g = stretched_grid(e[0], e[1], e[2]);
    for (int b = 0; b < 2; ++b) {
      const BoundaryConditions bc = b == 0 ? all_dirichlet() : with_neumann();
      const Pde pde = b == 0 ? Pde::heat(1.0, 0.7, 0.4) : heat_with_drift();
      for (Axis ax : {Axis::y, Axis::z}) {
        StageCase c;
        c.axis = ax;
        c.later = {false, ax == Axis::y, false};
        check_stage<T>(g, pde, bc, c, seed++, b == 0 ? "warp stream dirichlet" : "warp stream neumann");
        c.with_v = false;
        c.later = {};
        check_stage<T>(g, pde, bc, c, seed++, "warp stream no-V");
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  const Grid gp(AxisGrid::uniform(36, 0.0, 1.0), periodic_axis(33, 0.0, 1.0), periodic_axis(19, 0.0, 2.0));
  BoundaryConditions bp = all_dirichlet();
  bp.set_periodic(Axis::y);
  bp.set_periodic(Axis::z);
  all_axes<T>(gp, heat_with_drift(), bp, "warp stream periodic y z", seed);
}

// The smallest spacing of an axis, squared.
double min_spacing(const AxisGrid& ag) {
  double h = 1.0;
  for (index_t i = 0; i + 1 < ag.size(); ++i) h = std::min(h, ag[i + 1] - ag[i]);
  return h * h;
}

// The Y/Z kernel's lean form (the default since stop 37; ADI_FUSED_YZ_LEAN, read when an Operator
// prepares its launches, set by each case for its life, the process's own setting restored after:
// "1" the lean form, LeanForm*, "0" the general form, GeneralForm*, whatever the process was
// started with). The lean path runs in the threads of a stage with v and no sources whose segment
// holds 16 rows or is the short last one of a line; the rest of the same launch (idle tile slots,
// lines of fewer than 16 rows) and stages with sources or without v run the general code.
//
// Against the fp64 reference (outputs NaN-poisoned), the chosen form on: lines of 1, 2, 3, 16, 31,
// 32, 33, 255, 256 and 257 unknowns along y and z (one short segment; full segments, row n-1 in a
// full segment (16, 32, 256) or in the short one; 17 segments: 16-line tiles), rows of 36 values
// (16-byte rows: the warp stream, tiles starting before line 0), Dirichlet (the stage's end
// values), Neumann with drift (end rows' face terms), periodic (halo rows wrap), with and without
// v, sources (the general path inside the lean kernel), t_old == t_new.
template <class T>
void lean_cases(const Executor& ex, const char* lean = "1") {
  const adi::test::ScopedEnv form("ADI_FUSED_YZ_LEAN", lean);
  const std::string form_name = lean[0] == '0' ? "general" : "lean";
  std::uint32_t seed = 6100;
  Pde src = heat_with_drift();
  src.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  for (index_t n : {1, 2, 3, 16, 31, 32, 33, 255, 256, 257})
    for (int a = 1; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        // Dirichlet: n + 2 nodes for n unknowns; Neumann (both ends along the axis): n nodes.
        if (b > 0 && n < 2) continue;
        index_t e[3] = {36, 5, 6};  // the sweep box most of the grid (check_reference)
        e[a] = b == 0 ? n + 2 : n;
        const Grid g = stretched_grid(e[0], e[1], e[2]);
        BoundaryConditions bc = b == 0 ? all_dirichlet() : with_neumann();
        if (b > 0) bc.set(static_cast<Axis>(a), Boundary::neumann(0.5), Boundary::neumann(-0.25));
        const Pde pde = b == 0 ? Pde::heat(1.0, 0.7, 0.4) : b == 1 ? heat_with_drift() : src;
        StageCase c;
        c.axis = static_cast<Axis>(a);
        c.s = std::min(2e-3, 4.0 * min_spacing(g.axis(c.axis)));  // cond(I/s - A) ~ 17, as line_lengths
        const std::string what = form_name + " n=" + std::to_string(n) +
                                 (b == 0 ? " dirichlet" : b == 1 ? " neumann" : " source");
        check_reference<T>(g, pde, bc, c, seed++, what, ex);
        c.with_v = false;
        check_reference<T>(g, pde, bc, c, seed++, what, ex);
        c.with_v = true;
        c.same_time = true;
        check_reference<T>(g, pde, bc, c, seed++, what, ex);
        if (::testing::Test::HasFailure()) return;
      }
  for (index_t n : {3, 31, 33, 255, 257}) {  // z: 17 or 32 (full segments, the wrap in registers' halo)
    const Grid gp(AxisGrid::uniform(36, 0.0, 1.0), periodic_axis(n, 0.0, 1.0),
                  periodic_axis(n == 255 ? 17 : 32, 0.0, 2.0));
    BoundaryConditions bp = all_dirichlet();
    bp.set_periodic(Axis::y);
    bp.set_periodic(Axis::z);
    for (Axis ax : {Axis::y, Axis::z}) {
      StageCase c;
      c.axis = ax;
      c.s = std::min(2e-3, 4.0 * min_spacing(gp.axis(ax)));
      check_reference<T>(gp, heat_with_drift(), bp, c, seed++, form_name + " periodic n=" + std::to_string(n), ex);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Operator<T> on the GPU, a stage along `axis` at s: whether it throws UnstableSystem (the
// message then names the axis and s), and the result's nodes all finite when it does not.
template <class T>
bool stage_unstable(const Grid& g, const Pde& p, const BoundaryConditions& bc, Axis axis, double s) {
  Operator<T> op(g, p, bc, Executor::cuda());
  Field<T> base(g, Executor::cuda()), Y(g, Executor::cuda());
  base.fill(T(1));
  Y.fill(std::numeric_limits<T>::quiet_NaN());
  try {
    op.solve(axis, T(s), 0.1, base, Y);
  } catch (const UnstableSystem& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(std::string("along ") + axis_name(axis)), std::string::npos) << m;
    EXPECT_NE(m.find("s = "), std::string::npos) << m;
    EXPECT_NE(m.find("smaller time step"), std::string::npos) << m;
    return true;
  }
  const Field<T> y = Y.to_host();
  const auto lo = op.unknown_lo(), hi = op.unknown_hi();
  for (index_t k = lo[2]; k <= hi[2]; ++k)
    for (index_t j = lo[1]; j <= hi[1]; ++j)
      for (index_t i = lo[0]; i <= hi[0]; ++i)
        if (!std::isfinite(double(y(i, j, k)))) {
          ADD_FAILURE() << "non-finite result at (" << i << ", " << j << ", " << k << ")";
          return false;
        }
  return false;
}

}  // namespace

// Issue 23, the fused stage's stability check (pcr_factorize_shared<T, true> once per block): bands
// that are not diagonally dominant (b = 1/s - d small against a, c: Thomas's multipliers reach
// 1000 >> kThomasGrowth) throw UnstableSystem naming the axis, s and what to change, along x (one
// warp per line) and y, z (the tile form), with Neumann or periodic ends; with a smaller s, where
// b = 1/s + 2q - R/3 is dominant again, the same bands solve.
TEST(CudaFusedStage, NonDominantBandsThrowUnstable) {
  ADI_REQUIRE_CUDA();
  const index_t N[3] = {40, 36, 33};
  const Grid g(AxisGrid::uniform(N[0], 0.0, 1.0), AxisGrid::uniform(N[1], 0.0, 1.0),
               AxisGrid::uniform(N[2], 0.0, 1.0));
  const Grid gp(periodic_axis(N[0], 0.0, 1.0), periodic_axis(N[1], 0.0, 1.0), periodic_axis(N[2], 0.0, 1.0));
  BoundaryConditions bp = BoundaryConditions::all(Boundary::neumann(0.0));
  for (Axis ax : {Axis::x, Axis::y, Axis::z}) bp.set_periodic(ax);
  const double s = 1e-3;
  for (int per = 0; per < 2; ++per)
    for (int a = 0; a < 3; ++a) {
      const Axis axis = static_cast<Axis>(a);
      SCOPED_TRACE(std::string("axis ") + axis_name(axis) + (per ? " periodic" : " neumann"));
      const AxisGrid& ag = (per ? gp : g).axis(axis);
      const double h = ag[1] - ag[0], q = 1.0 / (h * h);
      // Diffusion along `axis` only; A's diagonal -2q + R/3 (the reaction split over 3 axes):
      // b = 1/s + 2q - R/3 = 1e-3 q against |a| = |c| = q. The other axes' rows hold R/3 only.
      Pde p;
      p.diffusion[a] = 1.0;
      p.reaction = 3.0 * (1.0 / s + 2.0 * q - 1e-3 * q);
      const BoundaryConditions bc = per ? bp : BoundaryConditions::all(Boundary::neumann(0.0));
      const Grid& gg = per ? gp : g;
      EXPECT_TRUE(stage_unstable<float>(gg, p, bc, axis, s));
      EXPECT_TRUE(stage_unstable<double>(gg, p, bc, axis, s));
      const double s2 = 1.0 / (p.reaction.constant() / 3.0 + 1.0 / s);  // b = 1/s + 2q: dominant by 1/s
      EXPECT_FALSE(stage_unstable<float>(gg, p, bc, axis, s2));
      EXPECT_FALSE(stage_unstable<double>(gg, p, bc, axis, s2));
    }
}

// The check never fires on the heat operator's bands (I/s - A row diagonally dominant by 1/s)
// for mesh ratios r = s D / h^2 from 0.1 to 1e4, every axis, both precisions, Dirichlet and
// periodic lines (the stage then solves: finite everywhere). Periodic fp32 stops at r = 1e3: at
// 1e4 cond(I/s - A) ~ 4r = 4e4 nears the Sherman-Morrison split's own singular test (fires past
// ~1/(64 eps) = 1.3e5, solvers/common/cyclic_denominator.hpp), which is not this check.
TEST(CudaFusedStage, HeatBandsNeverFireTheCheck) {
  ADI_REQUIRE_CUDA();
  const Grid g(AxisGrid::uniform(64, 0.0, 1.0), AxisGrid::uniform(33, 0.0, 1.0), AxisGrid::uniform(257, 0.0, 1.0));
  const Grid gp(periodic_axis(36, 0.0, 1.0), periodic_axis(31, 0.0, 1.0), periodic_axis(255, 0.0, 1.0));
  BoundaryConditions bp = all_dirichlet();
  for (Axis ax : {Axis::x, Axis::y, Axis::z}) bp.set_periodic(ax);
  const Pde heat = Pde::heat(1.0, 1.0, 1.0);
  for (int per = 0; per < 2; ++per)
    for (double r : {0.1, 1.0, 10.0, 100.0, 1e3, 1e4})
      for (int a = 0; a < 3; ++a) {
        const Axis axis = static_cast<Axis>(a);
        const Grid& gg = per ? gp : g;
        const AxisGrid& ag = gg.axis(axis);
        const double h = ag[1] - ag[0], s = r * h * h;
        SCOPED_TRACE(std::string("axis ") + axis_name(axis) + " r = " + std::to_string(r) +
                     (per ? " periodic" : " dirichlet"));
        if (!(per && r > 1e3)) EXPECT_FALSE(stage_unstable<float>(gg, heat, per ? bp : all_dirichlet(), axis, s));
        EXPECT_FALSE(stage_unstable<double>(gg, heat, per ? bp : all_dirichlet(), axis, s));
      }
}

// The warp stream on small grids (two tiles per plane, a tile starting before line 0, periodic
// halo rows): the sanitizer's case (scripts/gpu_stage_check.sh: memcheck, racecheck).
TEST(CudaFusedStage, WarpStreamSmall) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 950;
  all_axes<float>(stretched_grid(36, 9, 5), heat_with_drift(), with_neumann(), "small warp", seed);
  all_axes<double>(stretched_grid(34, 5, 9), Pde::heat(1.0, 0.7, 0.4), all_dirichlet(), "small warp", seed);
  const Grid gp(AxisGrid::uniform(40, 0.0, 1.0), periodic_axis(7, 0.0, 1.0), periodic_axis(6, 0.0, 2.0));
  BoundaryConditions bp = all_dirichlet();
  bp.set_periodic(Axis::y);
  bp.set_periodic(Axis::z);
  all_axes<double>(gp, heat_with_drift(), bp, "small warp periodic", seed);
}

TEST(CudaFusedStage, LeanFormMatchesTheFp64ReferenceFloat) {
  ADI_REQUIRE_CUDA();
  lean_cases<float>(Executor::cuda());
}

TEST(CudaFusedStage, LeanFormMatchesTheFp64ReferenceDouble) {
  ADI_REQUIRE_CUDA();
  lean_cases<double>(Executor::cuda());
}

// The general Y/Z form (ADI_FUSED_YZ_LEAN=0: the warp stream's general instance where the lean
// form would run) on the same cases. (Compiled only with -DADI_CUDA_UNROLL_ALL=ON since stop 40:
// other builds would run the lean form again, so these skip, naming it.)
constexpr const char* kGeneralForm = "the fused Y/Z stage's general 16-row warp form (ADI_FUSED_YZ_LEAN=0)";
TEST(CudaFusedStage, GeneralFormMatchesTheFp64ReferenceFloat) {
  ADI_REQUIRE_CUDA();
  ADI_REQUIRE_COMPARISON_FORMS(kGeneralForm);
  lean_cases<float>(Executor::cuda(), "0");
}

TEST(CudaFusedStage, GeneralFormMatchesTheFp64ReferenceDouble) {
  ADI_REQUIRE_CUDA();
  ADI_REQUIRE_COMPARISON_FORMS(kGeneralForm);
  lean_cases<double>(Executor::cuda(), "0");
}

// The same cases on the host (runs anywhere): the sizes, s and tolerances of the GPU cases hold
// for the host's float and double stage.
TEST(StageReference, LeanCasesOnTheHost) {
  lean_cases<float>(Executor::host());
  lean_cases<double>(Executor::host());
}

// The sanitizer's case of each form (scripts/gpu_heat_ab.sh: memcheck), every axis: rows of 36
// values; Dirichlet: 33 unknowns along y (row n-1 alone in a short third segment), 32 along z (row
// n-1 ends a full segment); Neumann at y_hi, z_lo: 34 and 33. Both precisions.
namespace {
void small_form_cases(const char* lean) {
  const adi::test::ScopedEnv form("ADI_FUSED_YZ_LEAN", lean);
  std::uint32_t seed = 960;
  const std::string what = std::string("small ") + (lean[0] == '0' ? "general" : "lean");
  all_axes<float>(stretched_grid(36, 35, 34), heat_with_drift(), with_neumann(), what, seed);
  all_axes<double>(stretched_grid(36, 35, 34), Pde::heat(1.0, 0.7, 0.4), all_dirichlet(), what, seed);
}
}  // namespace

TEST(CudaFusedStage, LeanFormSmall) {
  ADI_REQUIRE_CUDA();
  small_form_cases("1");
}

TEST(CudaFusedStage, GeneralFormSmall) {
  ADI_REQUIRE_CUDA();
  ADI_REQUIRE_COMPARISON_FORMS(kGeneralForm);
  small_form_cases("0");
}

TEST(CudaFusedStage, WarpStreamFloat) {
  ADI_REQUIRE_CUDA();
  warp_stream_cases<float>();
}

TEST(CudaFusedStage, WarpStreamDouble) {
  ADI_REQUIRE_CUDA();
  warp_stream_cases<double>();
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

// ---- The plan's stage entry (TridiagonalPlan::solve_stage, options.stages) -------------------

namespace {

// One stage of the heat operator (D = 1, uniform h, Dirichlet data g3 on every face) along
// `axis`, its description built by hand (as adi::Operator builds it) and run by a plan on ex;
// checked against the fp64 reference of the stage and against the host Operator's solve.
template <class T>
void plan_stage_case(const Executor& ex, const Grid& g, Axis axis, std::uint32_t seed) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + ex.name() + " grid " + g.describe() +
               " axis " + axis_name(axis));
  const int a = static_cast<int>(axis);
  const BoundaryConditions bc = all_dirichlet();
  const Pde pde = Pde::heat(1.0, 1.0, 1.0);
  const double s = 2e-3, t_new = 0.3, t_old = 0.25;
  const std::array<index_t, 3> N{g.nx(), g.ny(), g.nz()};
  // The sweep box: all of axis a, the unknowns 1..N-2 of the other two.
  std::array<index_t, 3> org{1, 1, 1}, ext{N[0] - 2, N[1] - 2, N[2] - 2};
  org[a] = 0;
  ext[a] = N[a];
  const index_t sy = Field<T>::padded_row(N[0]), sz = sy * N[1];
  const index_t off = org[0] + org[1] * sy + org[2] * sz;
  const LineSet lines = to_lines(BoxLines{Box3{ext[0], ext[1], ext[2], sy, sz}, axis});
  TridiagonalOptions opt;
  opt.stages = true;
  TridiagonalPlan<T> plan(ex, lines, opt);
  ASSERT_EQ(plan.stage_kernel(), ex.is_cuda() ? Kernel::cuda_thomas_pcr_fused_stage : plan.shared_bands_kernel());

  // A's line coefficients along a (identity rows at the Dirichlet ends), the face data.
  const index_t n = N[a];
  const double h = g.axis(axis).spacing(0);
  std::vector<T> ha(n, T(-1 / (h * h))), hd(n, T(-2 / (h * h))), hc(n, T(-1 / (h * h)));
  ha[0] = hd[0] = hc[0] = ha[n - 1] = hd[n - 1] = hc[n - 1] = T(0);
  Array<T> da(n, ex), dd(n, ex), dc(n, ex);
  da.copy_from_host(ha.data());
  dd.copy_from_host(hd.data());
  dc.copy_from_host(hc.data());
  const int o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
  const index_t n1 = N[o1], n2 = N[o2];
  std::array<Array<T>, 2> g_new, g_old;
  for (int side = 0; side < 2; ++side) {
    std::vector<T> hn(n1 * n2), ho(n1 * n2);
    for (index_t c2 = 0; c2 < n2; ++c2)
      for (index_t c1 = 0; c1 < n1; ++c1) {
        index_t idx[3];
        idx[a] = side == 0 ? 0 : n - 1;
        idx[o1] = c1;
        idx[o2] = c2;
        const double x = g.axis(Axis::x)[idx[0]], y = g.axis(Axis::y)[idx[1]], z = g.axis(Axis::z)[idx[2]];
        hn[c1 + c2 * n1] = T(g3(t_new, x, y, z));
        ho[c1 + c2 * n1] = T(g3(t_old, x, y, z));
      }
    g_new[side] = Array<T>(n1 * n2, ex);
    g_old[side] = Array<T>(n1 * n2, ex);
    g_new[side].copy_from_host(hn.data());
    g_old[side].copy_from_host(ho.data());
  }
  std::mt19937 rng(seed);
  Field<T> base(g), V(g);
  random_fill(base, rng);
  random_fill(V, rng);
  Field<T> dbase(g, ex), dV(g, ex), dU(g, ex);
  dbase.copy_from(base);
  dV.copy_from(V);
  Field<T> poison(g);
  poison.fill(std::numeric_limits<T>::quiet_NaN());
  dU.copy_from(poison);

  detail::TridiagonalStage<T> st;
  st.lines = lines;
  st.base = dbase.data() + off;
  st.v = dV.data() + off;
  st.inv_s = T(1) / T(s);
  st.a = da.data();
  st.d = dd.data();
  st.c = dc.data();
  st.end = {g_new[0].data(), g_new[1].data()};
  st.v_end = {g_old[0].data(), g_old[1].data()};
  st.face_base = org[o1] + org[o2] * n1;
  st.face_n1 = n1;
  st.u = dU.data() + off;
  Array<int> flag(1, ex);
  const int zero = 0;
  flag.copy_from_host(&zero);
  plan.solve_stage(st, ex.is_cuda() ? flag.data() : nullptr);
  const Field<T> U = dU.to_host();
  if (ex.is_cuda()) {
    int bad = 1;
    flag.copy_to_host(&bad);
    EXPECT_EQ(bad, 0) << "pivot flag set for a diagonally dominant stage";
  }

  // The references: the fp64 stage and the host Operator's solve in T.
  Operator<double> op64(g, pde, bc);
  const Field<double> ref = test::stage_reference(op64, axis, s, t_new, base, t_old, &V);
  Operator<T> host(g, pde, bc);
  Field<T> Y(g), R(g);
  R.fill(std::numeric_limits<T>::quiet_NaN());
  host.solve(axis, T(s), t_new, base, Y, t_old, &V, {}, &R);
  double scale = 0, err_ref = 0, err_host = 0;
  for (index_t k = 0; k < N[2]; ++k)
    for (index_t j = 0; j < N[1]; ++j)
      for (index_t i = 0; i < N[0]; ++i) {
        const index_t idx[3] = {i, j, k};
        bool inside = true;
        for (int d = 0; d < 3; ++d) inside = inside && idx[d] >= org[d] && idx[d] < org[d] + ext[d];
        if (!inside) {
          EXPECT_TRUE(std::isnan(double(U(i, j, k)))) << "written outside the sweep box at " << i << " " << j << " " << k;
          continue;
        }
        scale = std::max(scale, std::abs(ref(i, j, k)));
        err_ref = std::max(err_ref, std::abs(double(U(i, j, k)) - ref(i, j, k)));
        err_host = std::max(err_host, std::abs(double(U(i, j, k)) - double(R(i, j, k))));
      }
  const double tol = sizeof(T) == 4 ? 5e-5 : 1e-12;
  EXPECT_LE(err_ref, tol * scale) << "against the fp64 reference";
  EXPECT_LE(err_host, tol * scale) << "against the host Operator";
}

template <class T>
void plan_stage_cases(const Executor& ex) {
  std::uint32_t seed = 7000;
  for (const auto& e : {std::array<index_t, 3>{33, 31, 3}, std::array<index_t, 3>{5, 3, 3},
                        std::array<index_t, 3>{37, 19, 21}})
    for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
      const Grid g(AxisGrid::uniform(e[0], 0.0, 1.0), AxisGrid::uniform(e[1], 0.0, 0.8),
                   AxisGrid::uniform(e[2], -0.5, 0.5));
      if (g.extent(axis) < 3) continue;
      plan_stage_case<T>(ex, g, axis, seed++);
    }
}

}  // namespace

// The host path of the plan's stage entry (runs anywhere).
TEST(PlanStage, HostMatchesTheReference) {
  plan_stage_cases<double>(Executor::host());
  plan_stage_cases<float>(Executor::host());
}

// The fused kernel through the plan's stage entry.
TEST(CudaPlanStage, MatchesTheReference) {
  ADI_REQUIRE_CUDA();
  plan_stage_cases<double>(Executor::cuda());
  plan_stage_cases<float>(Executor::cuda());
}

// Without options.stages the plan has no stage entry, and says so.
TEST(PlanStage, OffByDefault) {
  const LineSet l = to_lines(StridedLines{8, 1, 4, 8});
  TridiagonalPlan<double> plan(Executor::host(), l);
  EXPECT_EQ(plan.stage_kernel(), Kernel::automatic);
  detail::TridiagonalStage<double> st;
  st.lines = l;
  EXPECT_THROW(plan.solve_stage(st), InvalidArgument);
  EXPECT_STREQ(kernel_name(Kernel::cuda_thomas_pcr_fused_stage), "cuda_thomas_pcr_fused_stage");
}

// The asynchronous pivot check: inside an AdiSolver step the fused stage's flag is read at
// the end of the step (Operator::settle), which still throws SingularSystem naming the axis;
// a step with a healthy time step then works (the bad s is checked again, not kept).
TEST(CudaFusedStage, ZeroPivotInAStepThrowsAtTheEndOfTheStep) {
  ADI_REQUIRE_CUDA();
  // x has one node: y is the first axis (the stencil fold's, checked by the plan), z the
  // fused stage whose check is asynchronous.
  const Grid g(AxisGrid::uniform(1, 0.0, 1.0), AxisGrid::uniform(12, 0.0, 1.0), AxisGrid::uniform(40, 0.0, 1.0));
  Pde p = Pde::heat(0.0);
  p.reaction = 8.0;  // d = R/2 = 4 per axis: b = 1/s - 4 = 0 for s = theta*dt = 1/4
  const BoundaryConditions bc = BoundaryConditions::all(Boundary::neumann(0.0));
  Operator<double> op(g, p, bc, Executor::cuda());
  op.set_explicit_fold(Operator<double>::ExplicitFold::separate);  // both stages fused
  AdiSolver<double> solver(std::move(op), Scheme::douglas(0.5));
  Field<double> U(g, Executor::cuda());
  U.fill(1.0);
  EXPECT_NO_THROW(solver.step(U, 0.0, 0.1));
  try {
    solver.step(U, 0.1, 0.5);  // s = 0.25
    ADD_FAILURE() << "no SingularSystem for a zero pivot";
  } catch (const SingularSystem& e) {
    EXPECT_NE(std::string(e.what()).find("along y"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("s = 0.25"), std::string::npos) << e.what();
  }
  U.fill(1.0);
  EXPECT_NO_THROW(solver.step(U, 0.0, 0.1));
  EXPECT_NO_THROW(solver.step(U, 0.1, 0.2));
  const Field<double> u = U.to_host();
  EXPECT_TRUE(std::isfinite(u(0, 5, 7))) << u(0, 5, 7);
}
