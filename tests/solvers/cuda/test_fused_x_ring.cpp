// The folded first stage's x ring kernel (solvers/cuda/thomas_pcr_fused_x_ring.cuh), reached
// through Operator<T>::solve_folded on a CUDA executor with ADI_FOLD_X_RING=1 (the stencil fold,
// CUDA's default, then takes the kernel fold; fused_stage_run the ring where it applies), against
// the fp64 CPU reference: the host Operator<double> with separate passes (apply, then the stage)
// on the same T-rounded field. Douglas' first stage (base = U + dt F(t0, U), V_old = U): line
// lengths 2, 3, 31, 33, 255, 256 (the ring), 257 and a grid of one node along x (not the ring:
// the folded kernel / the stencil fold, the same results), several y tiles and z chunks, 2D
// grids, periodic and Neumann x ends, sources; Neumann / periodic y or z faces (not the ring).
// ADI_FOLD_X_RING=2: the lean form for lines of 256 (LeanForm*), the ring kernel for other lengths.
// The output starts NaN-poisoned: the sweep box must be written, nothing else. The launch counter
// (cuda_backend::fused_x_ring_launches) says whether the ring ran. The scheme tests run under the
// switch too (scripts/gpu_heat_ab.sh --ring: test_scheme_cuda with ADI_FOLD_X_RING=2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "gpu_skip.hpp"
#include "scoped_env.hpp"
#include "adi/adi.hpp"
#include "solvers/cuda/backend.hpp"

using namespace adi;

namespace {

double g3(double t, double x, double y, double z) {
  return std::cos(1.3 * x + 0.4 * t) * std::sin(0.9 * y + 0.3) + 0.5 * z * z - 0.2 * t;
}

struct RingCase {
  std::array<index_t, 3> n{};
  bool periodic_x = false;
  bool neumann_x = false;   // x_lo Neumann g(t), x_hi Neumann constant
  bool source = false;
  bool neumann_y = false;   // y_hi Neumann: lines on the face, not the ring
  bool expect_ring = true;  // the ring kernel runs
  const char* what = "";
};

std::string describe(const RingCase& c) {
  return std::string(c.what) + " " + std::to_string(c.n[0]) + "x" + std::to_string(c.n[1]) + "x" +
         std::to_string(c.n[2]) + (c.periodic_x ? " periodic-x" : "") + (c.neumann_x ? " neumann-x" : "") +
         (c.source ? " source" : "") + (c.neumann_y ? " neumann-y" : "");
}

// mode: ADI_FOLD_X_RING ("1" the ring kernel, "2" its lean form for lines of 256, the ring kernel
// for other lengths).
template <class T>
void check_ring(const RingCase& c, std::uint32_t seed, const char* mode = "1") {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + describe(c) + " ADI_FOLD_X_RING=" + mode);
  const test::ScopedEnv ring("ADI_FOLD_X_RING", mode);
  auto axis = [&](int d) {
    if (c.n[d] == 1) return AxisGrid();
    if (d == 0 && c.periodic_x) return periodic_axis(c.n[d], 0.0, 1.0);
    return AxisGrid::uniform(c.n[d], 0.0, 1.0);
  };
  const Grid g(axis(0), axis(1), axis(2));
  Pde pde = Pde::heat(1.0, 0.7, 0.4);
  pde.convection = {Coefficient(0.9), Coefficient(-0.6), Coefficient(0.3)};
  pde.reaction = -0.8;
  if (c.source) pde.source = [](double t, double x, double y, double z) { return std::sin(x + 2 * y - z) * (1 + t); };
  BoundaryConditions bc = BoundaryConditions::all(Boundary::dirichlet(g3));
  if (c.periodic_x) bc.set_periodic(Axis::x);
  if (c.neumann_x || c.n[0] == 2) {
    bc.set(Face::x_lo, Boundary::neumann([](double t, double x, double y, double z) { return g3(t, x, y, z) + 1.0; }));
    bc.set(Face::x_hi, Boundary::neumann(-0.25));
  }
  if (c.neumann_y) bc.set(Face::y_hi, Boundary::neumann(0.7));
  Operator<double> host(g, pde, bc);
  Operator<T> dev(g, pde, bc, Executor::cuda());
  host.set_explicit_fold(Operator<double>::ExplicitFold::separate);
  const Axis a = c.n[0] > 1 ? Axis::x : c.n[1] > 1 ? Axis::y : Axis::z;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> D(-1.0, 1.0);
  Field<T> u(g);
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) u(i, j, k) = T(D(rng));
  Field<double> hu(g);
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) hu(i, j, k) = double(u(i, j, k));
  Field<T> du(g, Executor::cuda());
  du.copy_from(u);
  double hmin = 1.0;
  for (Axis ax : {Axis::x, Axis::y, Axis::z}) {
    const AxisGrid& ag = g.axis(ax);
    for (index_t i = 0; i + 1 < ag.size(); ++i) hmin = std::min(hmin, ag[i + 1] - ag[i]);
  }
  const double dt = std::min(4e-3, 8.0 * hmin * hmin), t0 = 0.25, t1 = t0 + dt;
  std::array<bool, 3> later{};
  for (int i = static_cast<int>(a) + 1; i < 3; ++i) later[i] = g.extent(static_cast<Axis>(i)) > 1;
  const typename Operator<double>::ExplicitTerm ht{t0, &hu, {dt, dt, dt, dt}};
  Field<double> want(g);
  want.fill(std::numeric_limits<double>::quiet_NaN());
  host.solve_folded(a, 0.5 * dt, t1, 1.0, {ht, {}}, want, t0, &hu, later);
  const T tdt = T(dt);
  const typename Operator<T>::ExplicitTerm dterm{t0, &du, {tdt, tdt, tdt, tdt}};
  Field<T> dY(g, Executor::cuda());
  const std::size_t before = cuda_backend::fused_x_ring_launches();
  const std::size_t before_lean = cuda_backend::fused_x_ring_lean_launches();
  for (int rep = 0; rep < 2; ++rep) {  // the second call reuses the formed bands (no pivot check)
    dY.fill(std::numeric_limits<T>::quiet_NaN());
    dev.solve_folded(a, T(0.5 * dt), t1, T(1), {dterm, {}}, dY, t0, &du, later);
  }
  EXPECT_EQ(cuda_backend::fused_x_ring_launches() - before, c.expect_ring ? 2u : 0u)
      << (c.expect_ring ? "the ring kernel did not run" : "the ring kernel ran where it does not apply");
  const bool lean = c.expect_ring && std::string(mode) == "2" && c.n[0] == 256;
  EXPECT_EQ(cuda_backend::fused_x_ring_lean_launches() - before_lean, lean ? 2u : 0u)
      << (lean ? "the lean form did not run" : "the lean form ran where it does not apply");
  const Field<T> got = dY.to_host();
  const auto lo = host.unknown_lo(), hi = host.unknown_hi();
  const int ai = static_cast<int>(a);
  auto in_box = [&](index_t i, index_t j, index_t k) {
    const index_t idx[3] = {i, j, k};
    for (int d = 0; d < 3; ++d)
      if (d != ai && (idx[d] < lo[d] || idx[d] > hi[d])) return false;
    return true;
  };
  double scale = 1.0;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        if (in_box(i, j, k)) scale = std::max(scale, std::abs(want(i, j, k)));
  const double tol = (sizeof(T) == 4 ? 2e-4 : 1e-11) * scale;
  long wrong = 0, compared = 0;
  double worst = 0;
  std::string first;
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i) {
        const double w = want(i, j, k), h = double(got(i, j, k));
        bool ok;
        if (in_box(i, j, k)) {
          ++compared;
          ok = std::isfinite(h) && std::abs(h - w) <= tol;
          if (std::isfinite(h)) worst = std::max(worst, std::abs(h - w));
        } else {
          ok = std::isnan(h);  // nothing outside the sweep box is written
        }
        if (!ok && wrong++ == 0)
          first = "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): gpu " +
                  std::to_string(h) + ", fp64 host " + std::to_string(w);
      }
  EXPECT_GT(compared, 0);
  EXPECT_EQ(wrong, 0) << "first bad node " << first << " (tol " << tol << ", worst " << worst << ")";
}

std::vector<RingCase> ring_cases() {
  std::vector<RingCase> v;
  for (index_t n : {3, 31, 33, 255, 256}) v.push_back({{n, 7, 5}, false, false, false, false, true, "dirichlet"});
  v.push_back({{257, 7, 5}, false, false, false, false, false, "longer than 256 (the default path)"});
  v.push_back({{2, 7, 5}, false, true, false, false, true, "two nodes, neumann x"});
  v.push_back({{1, 9, 6}, false, false, false, false, false, "one node along x (stage y)"});
  v.push_back({{256, 37, 70}, false, false, false, false, true, "several y tiles and z chunks"});
  v.push_back({{64, 19, 1}, false, false, false, false, true, "2D"});
  v.push_back({{33, 1, 12}, false, false, false, false, true, "2D x-z"});
  for (index_t n : {3, 31, 256}) v.push_back({{n, 7, 5}, true, false, false, false, true, "periodic x"});
  v.push_back({{33, 10, 9}, false, true, false, false, true, "neumann x"});
  v.push_back({{33, 10, 9}, false, false, true, false, true, "source"});
  v.push_back({{255, 11, 17}, true, false, true, false, true, "periodic x with source"});
  v.push_back({{33, 10, 9}, false, false, false, true, false, "neumann y (the default path)"});
  return v;
}

class FusedXRing : public test::CudaTest {};

TEST_F(FusedXRing, DouglasFirstStageFloat) {
  std::uint32_t seed = 7100;
  for (const RingCase& c : ring_cases()) {
    check_ring<float>(c, seed++);
    if (HasFailure()) return;
  }
}

TEST_F(FusedXRing, DouglasFirstStageDouble) {
  std::uint32_t seed = 7200;
  for (const RingCase& c : ring_cases()) {
    check_ring<double>(c, seed++);
    if (HasFailure()) return;
  }
}

// Each ring depth the benchmark's A/B may set (ADI_FOLD_X_RING_SLOTS), on the multi-chunk case; then
// shorter chunks (ADI_FOLD_X_RING_WAVES).
TEST_F(FusedXRing, RingDepths) {
  for (const char* slots : {"3", "4", "5"}) {
    const test::ScopedEnv depth("ADI_FOLD_X_RING_SLOTS", slots);
    SCOPED_TRACE(std::string("ADI_FOLD_X_RING_SLOTS=") + slots);
    const RingCase c{{256, 37, 70}, false, false, false, false, true, "several y tiles and z chunks"};
    check_ring<float>(c, 7300);
    check_ring<double>(c, 7301);
    if (HasFailure()) return;
  }
  const test::ScopedEnv waves("ADI_FOLD_X_RING_WAVES", "3");  // shorter z chunks
  const RingCase c{{256, 37, 70}, false, false, false, false, true, "3 waves"};
  check_ring<double>(c, 7302);
}

// The lean form (ADI_FOLD_X_RING=2): lines of 256 with odd y / z extents, several y tiles (the
// last one partial) and z chunks, 2D grids, periodic and Neumann x, sources, each depth; other
// lengths take the ring kernel, lines longer than 256 the default path.
std::vector<RingCase> lean_cases() {
  std::vector<RingCase> v;
  v.push_back({{256, 7, 5}, false, false, false, false, true, "dirichlet"});
  v.push_back({{256, 33, 31}, false, false, false, false, true, "odd y, z"});
  v.push_back({{256, 37, 70}, false, false, false, false, true, "several y tiles and z chunks"});
  v.push_back({{256, 3, 3}, false, false, false, false, true, "one interior line"});
  v.push_back({{256, 19, 1}, false, false, false, false, true, "2D"});
  v.push_back({{256, 1, 12}, false, false, false, false, true, "2D x-z"});
  v.push_back({{256, 7, 5}, true, false, false, false, true, "periodic x"});
  v.push_back({{256, 10, 9}, false, true, false, false, true, "neumann x"});
  v.push_back({{256, 10, 9}, false, false, true, false, true, "source"});
  v.push_back({{256, 11, 17}, true, false, true, false, true, "periodic x with source"});
  v.push_back({{255, 11, 17}, false, false, false, false, true, "255: the ring kernel"});
  v.push_back({{257, 7, 5}, false, false, false, false, false, "257: the default path"});
  v.push_back({{256, 10, 9}, false, false, false, true, false, "neumann y: the default path"});
  return v;
}

TEST_F(FusedXRing, LeanFormFloat) {
  std::uint32_t seed = 7500;
  for (const RingCase& c : lean_cases()) {
    check_ring<float>(c, seed++, "2");
    if (HasFailure()) return;
  }
}

TEST_F(FusedXRing, LeanFormDouble) {
  std::uint32_t seed = 7600;
  for (const RingCase& c : lean_cases()) {
    check_ring<double>(c, seed++, "2");
    if (HasFailure()) return;
  }
}

TEST_F(FusedXRing, LeanFormDepths) {
  for (const char* slots : {"3", "4", "5"}) {
    const test::ScopedEnv depth("ADI_FOLD_X_RING_SLOTS", slots);
    SCOPED_TRACE(std::string("ADI_FOLD_X_RING_SLOTS=") + slots);
    const RingCase c{{256, 37, 70}, false, false, false, false, true, "several y tiles and z chunks"};
    check_ring<float>(c, 7700, "2");
    check_ring<double>(c, 7701, "2");
    if (HasFailure()) return;
  }
  const test::ScopedEnv waves("ADI_FOLD_X_RING_WAVES", "3");  // shorter z chunks
  const RingCase c{{256, 37, 70}, false, false, false, false, true, "3 waves"};
  check_ring<double>(c, 7702, "2");
}

// A few small cases (compute-sanitizer memcheck in scripts/gpu_heat_ab.sh --ring): several tiles
// and chunks, the ring's halo rows and planes at the field's faces, periodic x, both precisions.
TEST_F(FusedXRing, Small) {
  const RingCase a{{33, 19, 12}, false, false, false, false, true, "small"};
  const RingCase b{{31, 7, 5}, true, false, false, false, true, "small periodic x"};
  check_ring<float>(a, 7400);
  check_ring<double>(a, 7401);
  check_ring<double>(b, 7402);
  const RingCase l{{256, 19, 12}, false, false, false, false, true, "small lean"};
  check_ring<float>(l, 7403, "2");
  check_ring<double>(l, 7404, "2");
}

// Off (unset or 0): the stencil fold, the ring never runs.
TEST_F(FusedXRing, OffByDefault) {
  const test::ScopedEnv off("ADI_FOLD_X_RING", "0");
  const Grid g = Grid::uniform({33, 7, 5}, {0, 0, 0}, {1, 1, 1});
  Operator<double> dev(g, Pde::heat(1.0, 1.0, 1.0), BoundaryConditions::all(Boundary::dirichlet(0.0)), Executor::cuda());
  Field<double> U(g, Executor::cuda()), Y(g, Executor::cuda());
  U.fill(1.0);
  const std::size_t before = cuda_backend::fused_x_ring_launches();
  dev.solve_folded(Axis::x, 1e-3, 2e-3, 1.0, {{{1e-3, &U, {2e-3, 2e-3, 2e-3, 2e-3}}, {}}}, Y, 1e-3, &U,
                   {false, true, true});
  EXPECT_EQ(cuda_backend::fused_x_ring_launches(), before);
}

}  // namespace
