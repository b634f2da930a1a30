// The ADI solver on a CUDA executor: every scheme, 2D and 3D, float and double, on a
// non-cubic grid, matches the host solver to round-off (Dirichlet with time-dependent
// data, Neumann, periodic and stretched variants; mixed derivatives; per-node bands with
// a source; Rannacher damping); keeps its order of convergence; and repeated steps
// allocate no device memory. Skipped (loudly) without a device.
#include <gtest/gtest.h>

#include <ostream>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "adi/adi.hpp"
#include "solvers/cuda/backend.hpp"
#include "tests/adi/scheme_problems.hpp"
#include "tests/scoped_env.hpp"

using namespace adi;
using namespace adi::testing;


namespace {

enum class Variant { dirichlet, stretched, neumann, periodic };
const char* variant_name(Variant v) {
  switch (v) {
    case Variant::dirichlet: return "dirichlet";
    case Variant::stretched: return "stretched";
    case Variant::neumann: return "neumann";
    default: return "periodic";
  }
}

// n[d] nodes per axis (dims active axes); the periodic variant has x periodic.
Grid variant_grid(std::array<index_t, 3> n, int dims, Variant v) {
  auto axis = [&](int d) {
    if (d >= dims) return AxisGrid();
    if (v == Variant::stretched) return AxisGrid::stretched(n[d], 0.0, 1.0, d == 1 ? 0.6 : 0.4, 4.0);
    if (v == Variant::periodic && d == 0) return periodic_axis(n[d], 0.0, 1.0);
    return AxisGrid::uniform(n[d], 0.0, 1.0);
  };
  return Grid(axis(0), axis(1), axis(2));
}

HeatWave wave(int dims, Variant v) {
  HeatWave w;
  w.dims = dims;
  if (v == Variant::periodic) {
    w.a = 2.0 * M_PI;
    w.kx = 0.1;
  }
  return w;
}

BoundaryConditions wave_bc(const HeatWave& w, Variant v) {
  BoundaryConditions bc = BoundaryConditions::all(w.dirichlet());
  if (v == Variant::neumann) {
    for (Face f : {Face::x_lo, Face::x_hi, Face::y_hi}) bc.set(f, w.neumann(f));
    if (w.dims == 3) bc.set(Face::z_lo, w.neumann(Face::z_lo));
  }
  if (v == Variant::periodic) bc.set_periodic(Axis::x);
  return bc;
}

// fold: the GPU operator's ExplicitFold (0 stencil, CUDA's default; 1 separate; 2 kernel).
template <class T>
Field<T> run(const Executor& e, const Grid& g, const Pde& pde, const BoundaryConditions& bc, const Scheme& s,
             const Exact& init, double t_end, long steps,
             Operator<double>::ExplicitFold fold = Operator<double>::ExplicitFold::stencil) {
  AdiSolver<T> solver(Operator<T>(g, pde, bc, e), s);
  if (e.is_cuda()) solver.op().set_explicit_fold(static_cast<typename Operator<T>::ExplicitFold>(fold));
  Field<T> h(g);
  fill(h, g, init, 0.0);
  Field<T> u(g, e);
  u.copy_from(h);
  solver.advance(u, 0.0, t_end, steps);
  return u.to_host();
}

// max |gpu - host| relative to max |host| after the same steps on both.
template <class T>
void expect_gpu_matches_host(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const Scheme& s,
                             const Exact& init, double t_end, long steps, const std::string& what,
                             Operator<double>::ExplicitFold fold = Operator<double>::ExplicitFold::stencil) {
  const Field<T> cpu = run<T>(Executor::host(), g, pde, bc, s, init, t_end, steps);
  const Field<T> gpu = run<T>(Executor::cuda(), g, pde, bc, s, init, t_end, steps, fold);
  double diff = 0.0, scale = 0.0;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double d = std::abs(double(gpu(i, j, k)) - double(cpu(i, j, k)));
        diff = std::isfinite(d) ? std::max(diff, d) : HUGE_VAL;
        scale = std::max(scale, std::abs(double(cpu(i, j, k))));
      }
  const double rel = diff / std::max(scale, 1e-30);
  // Round-off of `steps` steps: a few ulps per step of the stage right-hand sides.
  const double tol = (sizeof(T) == 4 ? 1e-4 : 1e-12) * double(steps);
  std::printf("[gpu-vs-host] %-55s %s max rel diff %.2e (tol %.1e)\n", what.c_str(),
              sizeof(T) == 4 ? "float " : "double", rel, tol);
  EXPECT_LE(rel, tol) << what;
}

struct MatchCase {
  Scheme scheme;
  int dims;
  Variant variant;
};
// Read by GoogleTest (and CTest's test list) instead of a hex dump of the bytes.
inline void PrintTo(const MatchCase& c, std::ostream* os) {
  *os << c.scheme.name() << ", " << c.dims << "D, " << variant_name(c.variant);
}

std::vector<MatchCase> match_cases() {
  std::vector<MatchCase> c;
  const Scheme schemes[] = {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                            Scheme::hundsdorfer_verwer(), Scheme::peaceman_rachford()};
  for (int dims : {2, 3})
    for (const Scheme& s : schemes)
      for (Variant v : {Variant::dirichlet, Variant::stretched, Variant::neumann, Variant::periodic})
        if (!(dims == 3 && s.kind == SchemeKind::peaceman_rachford)) c.push_back({s, dims, v});
  return c;
}

std::string match_name(const ::testing::TestParamInfo<MatchCase>& info) {
  std::string n = std::string(info.param.scheme.name()) + "_" + std::to_string(info.param.dims) + "d_" +
                  variant_name(info.param.variant);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

class CudaSchemeMatchesHost : public ::testing::TestWithParam<MatchCase> {};

TEST_P(CudaSchemeMatchesHost, FloatAndDouble) {
  ADI_REQUIRE_CUDA();
  const MatchCase& c = GetParam();
  const HeatWave w = wave(c.dims, c.variant);
  // Non-cubic: 37 x 64 x 19 (the periodic x axis has 36 nodes: no duplicate end node).
  const std::array<index_t, 3> n{c.variant == Variant::periodic ? 36 : 37, 64, 19};
  const Grid g = variant_grid(n, c.dims, c.variant);
  const std::string what = std::string(c.scheme.name()) + " " + std::to_string(c.dims) + "D " +
                           variant_name(c.variant) + " " + g.describe();
  expect_gpu_matches_host<float>(g, w.pde(), wave_bc(w, c.variant), c.scheme, w.exact(), 0.02, 6, what);
  expect_gpu_matches_host<double>(g, w.pde(), wave_bc(w, c.variant), c.scheme, w.exact(), 0.02, 6, what);
}

INSTANTIATE_TEST_SUITE_P(CudaSchemes, CudaSchemeMatchesHost, ::testing::ValuesIn(match_cases()), match_name);

}  // namespace

// u_t = u_xx + u_yy + rho u_xy: the mixed term runs in the GPU explicit stencil.
TEST(CudaScheme, MixedDerivativeMatchesHost) {
  ADI_REQUIRE_CUDA();
  const MixedWave m;
  const BoundaryConditions bc = BoundaryConditions::all(
      Boundary::dirichlet([m](double t, double x, double y, double) { return m.u(t, x, y); }));
  const Grid g(AxisGrid::stretched(37, 0.0, 1.0, 0.4, 3.0), AxisGrid::uniform(64, 0.0, 1.0));
  for (const Scheme& s : {Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer(),
                          Scheme::douglas()}) {
    expect_gpu_matches_host<float>(g, m.pde(), bc, s, m.exact(), 0.02, 6, std::string(s.name()) + " mixed 2D");
    expect_gpu_matches_host<double>(g, m.pde(), bc, s, m.exact(), 0.02, 6, std::string(s.name()) + " mixed 2D");
  }
}

// Boundary data that disagree on the edges where two Dirichlet faces meet (y_lo g(t) next
// to z_hi = -0.3), beside periodic x, Neumann faces with data in time and a source: each
// stage's face values come from that face's own data on both backends (the host once read
// the edge from whichever face was written last, and differed from the fused GPU stage by
// 7.5e-2). Long enough lines for the fused kernels along every axis.
TEST(CudaScheme, InconsistentEdgeDataMatchHost) {
  ADI_REQUIRE_CUDA();
  Pde p;
  p.diffusion = {Coefficient(1.0), Coefficient(0.8), Coefficient(0.6)};
  p.convection = {Coefficient(0.3), Coefficient(-0.2), Coefficient(0.1)};
  p.reaction = Coefficient(-0.1);
  p.source = [](double t, double x, double y, double z) { return std::cos(t) * x * (1 - y) + z; };
  BoundaryConditions bc;
  bc.set_periodic(Axis::x);
  bc.set(Face::y_lo, Boundary::dirichlet([](double t, double x, double y, double z) {
       return std::exp(-t) * std::sin(x + 2 * y) * std::cos(z) + 0.5;
     })).set(Face::y_hi, Boundary::neumann(0.5));
  bc.set(Face::z_lo, Boundary::neumann([](double t, double x, double y, double) { return std::cos(t) * x * y; }));
  bc.set(Face::z_hi, Boundary::dirichlet(-0.3));
  const Grid g(AxisGrid::uniform(33, 0.0, 1.0), AxisGrid::stretched(31, 0.0, 1.0, 0.4, 3.0),
               AxisGrid::uniform(33, 0.0, 1.0));
  const Exact init = [](double, double x, double y, double z) { return std::sin(3 * x + 0.3) * std::cos(2 * y) * (1 + z * z); };
  for (const Scheme& s : {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                          Scheme::hundsdorfer_verwer()}) {
    expect_gpu_matches_host<float>(g, p, bc, s, init, 0.04, 4, std::string(s.name()) + " inconsistent edges 3D");
    expect_gpu_matches_host<double>(g, p, bc, s, init, 0.04, 4, std::string(s.name()) + " inconsistent edges 3D");
  }
}

// Per-node bands (D_x depends on y and z, V_y on x), a reaction, a source, a Neumann
// face, in 3D: the stencil + plan path of every axis but z, which stays fused.
TEST(CudaScheme, PerNodeBandsWithSourceMatchHost) {
  ADI_REQUIRE_CUDA();
  Pde p;
  p.diffusion[0] = [](double x, double y, double z) { return 1.0 + 0.3 * y * z + 0.1 * x; };
  p.diffusion[1] = Coefficient::along(Axis::y, [](double y) { return 0.6 + 0.2 * y; });
  p.diffusion[2] = 0.5;
  p.convection[1] = [](double x, double, double) { return 0.4 - x; };
  p.reaction = -0.3;
  p.source = [](double t, double x, double y, double z) { return std::cos(x + y) * z * (1.0 + t); };
  const auto g0 = [](double t, double x, double y, double z) { return std::sin(x + 2.0 * y) * std::exp(-t) + z; };
  BoundaryConditions bc = BoundaryConditions::all(Boundary::dirichlet(g0));
  bc.set(Face::y_hi, Boundary::neumann([](double t, double x, double, double) { return x * std::exp(-t); }));
  const Grid g(AxisGrid::stretched(37, 0.0, 1.0, 0.3, 3.0), AxisGrid::uniform(64, 0.0, 1.2),
               AxisGrid::uniform(19, 0.0, 0.5));
  const Exact init = [g0](double t, double x, double y, double z) { return g0(t, x, y, z); };
  {
    const Operator<double> op(g, p, bc, Executor::cuda());
    EXPECT_FALSE(op.shared_bands(Axis::x));
    EXPECT_FALSE(op.shared_bands(Axis::y));
    EXPECT_TRUE(op.shared_bands(Axis::z));
  }
  for (const Scheme& s : {Scheme::douglas(), Scheme::modified_craig_sneyd(), Scheme::hundsdorfer_verwer()}) {
    expect_gpu_matches_host<float>(g, p, bc, s, init, 0.02, 6, std::string(s.name()) + " per-node bands 3D");
    expect_gpu_matches_host<double>(g, p, bc, s, init, 0.02, 6, std::string(s.name()) + " per-node bands 3D");
  }
}

TEST(CudaScheme, RannacherAnd1DMatchHost) {
  ADI_REQUIRE_CUDA();
  const HeatWave w = wave(3, Variant::dirichlet);
  const Grid g = variant_grid({37, 64, 19}, 3, Variant::dirichlet);
  const Scheme damped = Scheme::douglas().with_damping(2);
  expect_gpu_matches_host<double>(g, w.pde(), wave_bc(w, Variant::dirichlet), damped, w.exact(), 0.02, 6,
                                  "douglas + Rannacher 3D");
  HeatWave w1 = wave(2, Variant::dirichlet);
  w1.ky = 0.0;
  const Grid g1(AxisGrid::uniform(257, 0.0, 1.0));
  expect_gpu_matches_host<double>(g1, Pde::heat(1.0), BoundaryConditions::all(w1.dirichlet()),
                                  Scheme::hundsdorfer_verwer(), w1.exact(), 0.02, 6, "hundsdorfer-verwer 1D");
}

// The order survives the move to the GPU: least-squares slope over three resolutions
// (dt refined with h, as tests/adi/test_scheme.cpp) >= 1.9, each pairwise ratio >= 1.8.
TEST(CudaScheme, SecondOrderOnTheGpu) {
  ADI_REQUIRE_CUDA();
  struct OrderCase {
    Scheme s;
    int dims;
    Variant v;
  };
  const OrderCase cases[] = {
      {Scheme::douglas(), 3, Variant::dirichlet},           {Scheme::craig_sneyd(), 3, Variant::neumann},
      {Scheme::modified_craig_sneyd(), 3, Variant::stretched}, {Scheme::hundsdorfer_verwer(), 3, Variant::periodic},
      {Scheme::peaceman_rachford(), 2, Variant::dirichlet},  {Scheme::hundsdorfer_verwer(), 2, Variant::neumann}};
  for (const OrderCase& c : cases) {
    const HeatWave w = wave(c.dims, c.v);
    double e[3];
    for (int r = 0; r < 3; ++r) {
      const index_t N = (c.dims == 2 ? 32 : 12) << r;
      const index_t nodes = c.v == Variant::periodic ? N : N + 1;
      const Grid g = variant_grid({nodes, nodes, nodes}, c.dims, c.v);
      const Field<double> u = run<double>(Executor::cuda(), g, w.pde(), wave_bc(w, c.v), c.s, w.exact(), 0.2, N / 2);
      e[r] = max_error(u, g, w.exact(), 0.2);
    }
    const double fit = std::log2(e[0] / e[2]) / 2.0, p1 = std::log2(e[0] / e[1]), p2 = std::log2(e[1] / e[2]);
    std::printf("[order gpu] %-22s %dD %-10s fit %.2f (pairs %.2f %.2f) errors %.3e %.3e %.3e\n", c.s.name(), c.dims,
                variant_name(c.v), fit, p1, p2, e[0], e[1], e[2]);
    EXPECT_GE(fit, 1.9) << c.s.name();
    EXPECT_GE(p1, 1.8) << c.s.name();
    EXPECT_GE(p2, 1.8) << c.s.name();
    EXPECT_LT(e[2], 1e-3) << c.s.name();
  }
}

// Temporary buffers are cached: after the first step (which may allocate the second
// stage field and the boundary caches), steps allocate no device memory; in either stage order.
TEST(CudaScheme, StepsAllocateNoDeviceMemory) {
  ADI_REQUIRE_CUDA();
  const HeatWave w = wave(3, Variant::neumann);
  Pde p = w.pde();
  p.source = [](double t, double x, double, double) { return x * t; };
  const Grid g = variant_grid({37, 64, 19}, 3, Variant::neumann);
  for (const char* order : {"xyz", "zyx"})  // zyx: the first (folded) stage's plan is made at its first step
  for (const Scheme& s : {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                          Scheme::hundsdorfer_verwer()}) {
    adi::test::ScopedEnv env("ADI_STAGE_ORDER", order);
    AdiSolver<float> solver(g, p, wave_bc(w, Variant::neumann), s, Executor::cuda());
    Field<float> h(g), u(g, Executor::cuda());
    fill(h, g, w.exact(), 0.0);
    u.copy_from(h);
    solver.step(u, 0.0, 1e-3);
    solver.step(u, 1e-3, 1e-3);
    const std::size_t before = cuda_backend::allocation_count();
    for (int n = 2; n < 10; ++n) solver.step(u, n * 1e-3, 1e-3);
    EXPECT_EQ(cuda_backend::allocation_count(), before)
        << s.name() << " " << order << ": device allocations in the step loop";
    const StepTimings& t = solver.timings();
    EXPECT_EQ(t.steps, 10);
    for (int a = 0; a < 3; ++a) EXPECT_GT(t.implicit[a], 0.0);
  }
}

// The explicit operator folded into the first stage of each chain (Operator::ExplicitFold):
// every scheme, every boundary set (Dirichlet constant and g(t), Neumann, periodic, the
// "mixed" set of all three, mixed derivative terms, per-node bands; tests/adi/
// scheme_problems.hpp), odd sizes along each axis (3, 31, 33, 255, 257), 2D and 1D grids,
// float and double, both folds (the stencil pass: CUDA's default; the fused kernel) against
// the host solver with separate explicit passes. Folded steps time no explicit pass.
TEST(CudaScheme, FoldedStepsMatchHostAtOddSizes) {
  ADI_REQUIRE_CUDA();
  using Fold = Operator<double>::ExplicitFold;
  const std::vector<Scheme> schemes = {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                                       Scheme::hundsdorfer_verwer()};
  for_each_fold_case(schemes, [&](const FoldSet& set, const std::array<index_t, 3>& e, const Grid& g, double dt,
                                  const Scheme& s) {
    for (Fold mode : {Fold::stencil, Fold::kernel}) {
      const std::string what = std::string(s.name()) + " " + set.what + " " + g.describe() +
                               (mode == Fold::kernel ? " kernel fold" : " stencil fold");
      {
        AdiSolver<double> solver(g, set.pde, set.bc, s, Executor::cuda());
        EXPECT_EQ(solver.op().explicit_fold(), Fold::stencil) << "CUDA's default";
        solver.op().set_explicit_fold(mode);
        // x lines only; a single x line (1D grid) has shared bands even where the PDE's
        // coefficients vary per node, so the per-node set folds there too.
        const bool one_line = e[1] == 1 && e[2] == 1 && !set.pde.has_mixed();
        const bool folds = mode == Fold::kernel && (set.folds || one_line) && e[0] > 1 && e[0] <= 1024;
        EXPECT_EQ(solver.op().folds(Axis::x), folds) << what;
        Field<double> h(g), u(g, Executor::cuda());
        fill(h, g, fold_init, 0.0);
        u.copy_from(h);
        solver.advance(u, 0.0, 2 * dt, 2);
        EXPECT_EQ(solver.timings().explicit_part, 0.0) << what << ": an explicit pass of its own ran";
      }
      expect_gpu_matches_host<float>(g, set.pde, set.bc, s, fold_init, 3 * dt, 3, what, mode);
      expect_gpu_matches_host<double>(g, set.pde, set.bc, s, fold_init, 3 * dt, 3, what, mode);
    }
  });
}

// Every scheme (Rannacher included), boundary set and odd size of the fold tests, float and
// double, stepped on the GPU and on the host in the order of the environment (ADI_STAGE_ORDER).
namespace {
void fold_cases_match_host(const std::string& tag) {
  const std::vector<Scheme> schemes = {Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                                       Scheme::hundsdorfer_verwer(), Scheme::douglas().with_damping(1)};
  for_each_fold_case(schemes, [&](const FoldSet& set, const std::array<index_t, 3>&, const Grid& g, double dt,
                                  const Scheme& s) {
    const std::string what = std::string(s.name()) + " " + set.what + " " + g.describe() + " " + tag;
    expect_gpu_matches_host<float>(g, set.pde, set.bc, s, fold_init, 3 * dt, 3, what);
    expect_gpu_matches_host<double>(g, set.pde, set.bc, s, fold_init, 3 * dt, 3, what);
  });
}
}  // namespace

// The stages in reverse order (ADI_STAGE_ORDER=zyx: z, y, x in 3D, y, x in 2D; the fold then
// rides on the z stage, or y's), on both sides (and StepsAllocateNoDeviceMemory in this order).
TEST(CudaScheme, ReversedStageOrderMatchesHost) {
  ADI_REQUIRE_CUDA();
  adi::test::ScopedEnv order("ADI_STAGE_ORDER", "zyx");
  fold_cases_match_host("zyx");
}

// Issue 16's z-first step: ADI_STAGE_ORDER=zyx with ADI_FOLD_STRIDED=1, the explicit operator riding
// on the first stage along z (y on a 2D grid) inside the fused Y/Z kernel
// (solvers/cuda/thomas_pcr_fused_strided_fold.cuh) instead of the stencil pass, for a test's life.
namespace {
// form: "1" the general rows, "2" the lean rows, "3" the lean rows with the other rows' bases staged
// in shared memory first (the spill-free fp64 form).
struct StridedFold {
  explicit StridedFold(const char* form) : strided("ADI_FOLD_STRIDED", form) {}
  adi::test::ScopedEnv order{"ADI_STAGE_ORDER", "zyx"};
  adi::test::ScopedEnv strided;
  static constexpr const char* kNotBuilt =
      "built without ADI_FOLD_STRIDED_KERNELS (-DCMAKE_CUDA_FLAGS=-DADI_FOLD_STRIDED_KERNELS)";
  bool on() const { return cuda_backend::fused_strided_fold_available(); }
};
}  // namespace

// Every fold case in the z-first order with the strided fold, every form (the corrected
// schemes' two-term stages keep the stencil fold), against the host in the same order; the kernel ran.
TEST(CudaScheme, StridedFoldMatchesHost) {
  ADI_REQUIRE_CUDA();
  for (const char* form : {"1", "2", "3"}) {
    const StridedFold on(form);
    if (!on.on()) GTEST_SKIP() << StridedFold::kNotBuilt;
    const std::size_t before = cuda_backend::fused_strided_fold_launches();
    fold_cases_match_host(std::string("zyx strided fold ") + form);
    EXPECT_GT(cuda_backend::fused_strided_fold_launches(), before) << "the folded Y/Z kernel never ran";
  }
}

// The same on one small grid (Douglas, Dirichlet g(t) + source, 37 x 33 x 19), for compute-sanitizer.
TEST(CudaScheme, StridedFoldSmall) {
  ADI_REQUIRE_CUDA();
  for (const char* form : {"1", "2", "3"}) {
    const StridedFold on(form);
    if (!on.on()) GTEST_SKIP() << StridedFold::kNotBuilt;
    const std::size_t before = cuda_backend::fused_strided_fold_launches();
    const FoldSet set = fold_sets()[1];
    const Grid g = fold_grid({37, 33, 19}, false);
    expect_gpu_matches_host<double>(g, set.pde, set.bc, Scheme::douglas(), fold_init, 2 * fold_dt(g), 2,
                                    std::string(set.what) + " zyx strided fold " + form);
    EXPECT_EQ(cuda_backend::fused_strided_fold_launches(), before + 2) << "one folded Z stage per step";
  }
}
