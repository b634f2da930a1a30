// adi::AdiSolver on a decomposed grid (adi::mpi::subdomain) against the single-domain
// AdiSolver on the same global problem: every scheme (Douglas, Craig-Sneyd, Modified
// Craig-Sneyd, Hundsdorfer-Verwer; Peaceman-Rachford in 2D) x every boundary set
// (Dirichlet constant and g(t, x, y, z), Neumann, periodic, mixed, linear extrapolation) on
// every process grid
// of the world (splits along each axis and along two), with variable coefficients
// (shared and per-node bands), convection, reaction, a source and mixed derivatives where
// the boundaries allow them. fp64 to 1e-12 (relative to max |u|), fp32 to 2e-5. The
// distributed fields are poisoned with NaN outside this rank's nodes, so a ghost read
// before the exchange filled it shows. The same on device memory when a GPU exists
// (skipped loudly otherwise).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "adi/adi.hpp"
#include "adi/mpi/mpi.hpp"
#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"
#include "scoped_env.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

double g_time(double t, double x, double y, double z) { return std::exp(-t) * std::sin(x + 2 * y) * std::cos(z) + 0.5; }
double initial(double x, double y, double z) { return std::sin(3 * x + 0.3) * std::cos(2 * y - 0.1) * (1 + z * z) + 0.2 * x; }

struct Problem {
  std::string name;
  BoundaryConditions bc;
  bool mixed = true;      // mixed derivative terms (not next to Neumann faces)
  bool stretched = true;  // a stretched y axis (not where y is periodic)
};

std::vector<Problem> setups() {
  std::vector<Problem> s;
  s.push_back({"dirichlet-constant", BoundaryConditions::all(Boundary::dirichlet(0.25)), true, true});
  s.push_back({"dirichlet-g(t)", BoundaryConditions::all(Boundary::dirichlet(g_time)), true, true});
  s.push_back({"neumann", BoundaryConditions::all(Boundary::neumann([](double t, double x, double y, double z) {
                 return t * x - 0.5 * y * z + 0.1;
               })),
               false, true});
  BoundaryConditions per;
  per.set_periodic(Axis::x).set_periodic(Axis::y).set_periodic(Axis::z);
  s.push_back({"periodic", per, true, false});
  BoundaryConditions mix;
  mix.set_periodic(Axis::x);
  mix.set(Face::y_lo, Boundary::dirichlet(g_time)).set(Face::y_hi, Boundary::neumann(0.5));
  mix.set(Face::z_lo, Boundary::neumann([](double t, double x, double y, double) { return std::cos(t) * x * y; }));
  mix.set(Face::z_hi, Boundary::dirichlet(-0.3));
  s.push_back({"mixed", mix, false, true});
  BoundaryConditions lin = BoundaryConditions::all(Boundary::dirichlet(g_time));
  lin.set(Axis::x, Boundary::linear(), Boundary::linear());
  s.push_back({"linear-x", lin, true, true});
  return s;
}

// StageInPasses: constant coefficients, so that the bands along x are shared too (the split x
// stage then takes the partition passes with the right-hand side inside).
bool g_constant_coefficients = false;

Pde pde(bool mixed) {
  Pde p;
  if (g_constant_coefficients) {
    p.diffusion = {Coefficient(1.1), Coefficient(0.8), Coefficient(0.6)};
    p.convection = {Coefficient(0.3), Coefficient(-0.2), Coefficient(0.1)};
    p.reaction = Coefficient(-0.1);
    if (mixed) p.mixed_xy = Coefficient(0.15);
    p.source = [](double t, double x, double y, double z) { return std::cos(t) * x * (1 - y) + z; };
    return p;
  }
  p.diffusion = {Coefficient([](double x, double y, double) { return 1.0 + 0.3 * x * y; }),
                 Coefficient::along(Axis::y, [](double y) { return 0.8 + 0.2 * y; }), Coefficient(0.6)};
  p.convection = {Coefficient(0.3), Coefficient(-0.2), Coefficient([](double, double, double z) { return 0.1 * z; })};
  p.reaction = Coefficient(-0.1);
  if (mixed) {
    p.mixed_xy = Coefficient(0.15);
    p.mixed_yz = Coefficient([](double x, double, double) { return 0.1 * (1 + x); });
  }
  p.source = [](double t, double x, double y, double z) { return std::cos(t) * x * (1 - y) + z; };
  return p;
}

Grid grid_for(std::array<index_t, 3> n, bool stretched) {
  const AxisGrid y = stretched && n[1] > 1 ? AxisGrid::stretched(n[1], 0.0, 1.0, 0.4, 3.0)
                                           : AxisGrid::uniform(n[1], 0.0, n[1] > 1 ? 1.0 : 0.0);
  return Grid(AxisGrid::uniform(n[0], 0.0, 1.0), y, AxisGrid::uniform(n[2], 0.0, n[2] > 1 ? 1.0 : 0.0));
}

constexpr int kSteps = 4;
constexpr double kDt = 0.01;

template <class T>
Field<T> single_solution(const Grid& g, const Problem& s, Scheme scheme, const Executor& exec) {
  AdiSolver<T> solver(g, pde(s.mixed), s.bc, scheme, exec);
  Field<T> h(g);
  for (index_t k = 0; k < g.nz(); ++k)
    for (index_t j = 0; j < g.ny(); ++j)
      for (index_t i = 0; i < g.nx(); ++i)
        h(i, j, k) = T(initial(g.axis(Axis::x)[i], g.axis(Axis::y)[j], g.axis(Axis::z)[k]));
  Field<T> u(g, exec);
  u.copy_from(h);
  solver.advance(u, 0.0, kSteps * kDt, kSteps);
  return u.to_host();
}

// max |distributed - single| over this rank's nodes, relative to max |single|, the
// maximum over all ranks (NaN counts as 1).
// Process grids by (dims, periodic flags), built once per test: a grid measures its
// network model once, on its first split plan.
class Grids {
 public:
  const ProcessGrid& get(const std::array<int, 3>& dims, const std::array<bool, 3>& per) {
    for (const auto& [d, p, g] : grids_)
      if (d == dims && p == per) return *g;
    grids_.emplace_back(dims, per, std::make_unique<ProcessGrid>(MPI_COMM_WORLD, dims, per));
    return *std::get<2>(grids_.back());
  }

 private:
  std::vector<std::tuple<std::array<int, 3>, std::array<bool, 3>, std::unique_ptr<ProcessGrid>>> grids_;
};

template <class T>
double distributed_error(Grids& grids, const std::array<int, 3>& dims, const Grid& g, const Problem& s, Scheme scheme,
                         const Executor& exec, const Field<T>& single, std::string* strategies = nullptr,
                         const DistributedOptions& options = {}) {
  std::array<bool, 3> per{};
  for (int a = 0; a < 3; ++a) per[a] = s.bc.periodic(Axis(a)) && g.extent(Axis(a)) > 1;
  const ProcessGrid& procs = grids.get(dims, per);
  Decomposition dec(procs, {g.nx(), g.ny(), g.nz()});
  AdiSolver<T> solver(g, pde(s.mixed), s.bc, scheme, exec, subdomain(procs, dec, options));
  const Operator<T>& op = solver.op();
  const auto e = op.extents(), org = op.origin(), lo = op.owned_lo(), hi = op.owned_hi();
  Field<T> h(e[0], e[1], e[2]);
  for (index_t k = 0; k < e[2]; ++k)
    for (index_t j = 0; j < e[1]; ++j)
      for (index_t i = 0; i < e[0]; ++i) {
        const bool own = i >= lo[0] && i <= hi[0] && j >= lo[1] && j <= hi[1] && k >= lo[2] && k <= hi[2];
        h(i, j, k) = own ? T(initial(g.axis(Axis::x)[org[0] + i], g.axis(Axis::y)[org[1] + j],
                                     g.axis(Axis::z)[org[2] + k]))
                         : std::numeric_limits<T>::quiet_NaN();
      }
  Field<T> u = op.make_field();
  u.copy_from(h);
  solver.advance(u, 0.0, kSteps * kDt, kSteps);
  const Field<T> r = u.to_host();
  double err = 0, scale = 0;
  for (index_t k = 0; k < single.nz(); ++k)
    for (index_t j = 0; j < single.ny(); ++j)
      for (index_t i = 0; i < single.nx(); ++i) scale = std::max(scale, std::abs(double(single(i, j, k))));
  for (index_t k = lo[2]; k <= hi[2]; ++k)
    for (index_t j = lo[1]; j <= hi[1]; ++j)
      for (index_t i = lo[0]; i <= hi[0]; ++i) {
        const double d = std::abs(double(r(i, j, k)) - double(single(org[0] + i, org[1] + j, org[2] + k)));
        err = std::isfinite(d) ? std::max(err, d / scale) : 1.0;
      }
  double all = 0;
  MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (strategies)
    *strategies = std::string(op.line_strategy(Axis::x)) + "/" + op.line_strategy(Axis::y) + "/" +
                  op.line_strategy(Axis::z);
  return all;
}

std::vector<Scheme> schemes(bool two_d) {
  std::vector<Scheme> s{Scheme::douglas(), Scheme::craig_sneyd(), Scheme::modified_craig_sneyd(),
                        Scheme::hundsdorfer_verwer(), Scheme::douglas().with_damping(1)};
  if (two_d) s.push_back(Scheme::peaceman_rachford());
  return s;
}

std::string describe(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// Every scheme x setup on every process grid of the world.
template <class T>
void expect_all(std::array<index_t, 3> n, const Executor& exec, double tol) {
  const bool two_d = n[2] == 1;
  Grids grids;
  double worst = 0;
  int cases = 0;
  for (const Problem& s : setups())
    for (const Scheme& scheme : schemes(two_d)) {
      if (scheme.kind == SchemeKind::peaceman_rachford && s.mixed) continue;  // PR has no mixed stage
      const Grid g = grid_for(n, s.stretched);
      const Field<T> single = single_solution<T>(g, s, scheme, exec);
      for (const auto& dims : factorisations(world_size())) {
        if (two_d && dims[2] > 1) continue;
        std::string lines;
        const double err = distributed_error<T>(grids, dims, g, s, scheme, exec, single, &lines);
        worst = std::max(worst, err);
        ++cases;
        EXPECT_LE(err, tol) << s.name << ", " << scheme.name() << (scheme.damping_steps ? " (Rannacher)" : "")
                            << ", " << describe(dims) << " ranks, " << g.describe() << ", lines " << lines << ", "
                            << exec.name();
      }
    }
  if (world_rank() == 0)
    std::printf("largest relative difference from one domain: %.3g over %d cases (%s, %s)\n", worst, cases,
                sizeof(T) == 8 ? "fp64" : "fp32", exec.name().c_str());
}

TEST(DistributedAdi, EverySchemeEveryBoundaryEveryGrid3D) { expect_all<double>({13, 11, 9}, Executor::host(), 1e-12); }
TEST(DistributedAdi, EverySchemeEveryBoundaryEveryGrid2D) { expect_all<double>({17, 13, 1}, Executor::host(), 1e-12); }
TEST(DistributedAdi, Float) { expect_all<float>({13, 11, 9}, Executor::host(), 2e-5); }

// Every reduced-system strategy of the split axes gives the same answer.
TEST(DistributedAdi, EveryStrategy) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Problem s = setups()[1];
  const Grid g = grid_for({13, 11, 9}, true);
  const Field<double> single = single_solution<double>(g, s, Scheme::craig_sneyd(), Executor::host());
  for (ReducedStrategy st : {ReducedStrategy::allgather, ReducedStrategy::alltoall, ReducedStrategy::pcr}) {
    for (const auto& dims : factorisations(world_size())) {
      ProcessGrid procs(MPI_COMM_WORLD, dims);
      Decomposition dec(procs, {g.nx(), g.ny(), g.nz()});
      DistributedOptions o;
      o.strategy = st;
      AdiSolver<double> solver(g, pde(true), s.bc, Scheme::craig_sneyd(), Executor::host(), subdomain(procs, dec, o));
      Operator<double>& op = solver.op();
      const auto e = op.extents(), org = op.origin(), lo = op.owned_lo(), hi = op.owned_hi();
      Field<double> u = op.make_field();
      for (index_t k = 0; k < e[2]; ++k)
        for (index_t j = 0; j < e[1]; ++j)
          for (index_t i = 0; i < e[0]; ++i)
            u(i, j, k) = initial(g.axis(Axis::x)[org[0] + i], g.axis(Axis::y)[org[1] + j], g.axis(Axis::z)[org[2] + k]);
      solver.advance(u, 0.0, kSteps * kDt, kSteps);
      double err = 0;
      for (index_t k = lo[2]; k <= hi[2]; ++k)
        for (index_t j = lo[1]; j <= hi[1]; ++j)
          for (index_t i = lo[0]; i <= hi[0]; ++i)
            err = std::max(err, std::abs(u(i, j, k) - single(org[0] + i, org[1] + j, org[2] + k)));
      EXPECT_LE(err, 1e-12) << strategy_name(st) << " " << describe(dims);
    }
  }
}

// The piece's shape: owned nodes and ghost planes where a neighbouring rank is.
TEST(DistributedAdi, LocalShape) {
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
  const Grid g = Grid::uniform({4 * p + 1, 5, 3}, {0, 0, 0}, {1, 1, 1});
  Decomposition dec(procs, {g.nx(), g.ny(), g.nz()});
  Operator<double> op(g, Pde::heat(1, 1, 1), BoundaryConditions{}, Executor::host(), subdomain(procs, dec));
  const int r = procs.coord(Axis::x);
  const index_t glo = r > 0 ? 1 : 0, ghi = r < p - 1 ? 1 : 0;
  EXPECT_EQ(op.extents()[0], dec.extent(Axis::x) + glo + ghi);
  EXPECT_EQ(op.extents()[1], 5);
  EXPECT_EQ(op.origin()[0], dec.lo(Axis::x) - glo);
  EXPECT_EQ(op.owned_lo()[0], glo);
  EXPECT_EQ(op.owned_hi()[0], op.extents()[0] - 1 - ghi);
  EXPECT_STREQ(op.line_strategy(Axis::y), "local");
  if (p > 1) EXPECT_STRNE(op.line_strategy(Axis::x), "local");
  EXPECT_NE(op.subdomain(), nullptr);
  // Rows padded to 128 bytes, or 64 under ADI_FIELD_ROW_ALIGN=64 (ctest
  // mpi_test_distributed_adi_np2_row64): the piece's fields and the operator agree.
  const Field<double> u = op.make_field();
  const index_t align = static_cast<index_t>(adi::detail::row_align_bytes());
  const char* env = std::getenv("ADI_FIELD_ROW_ALIGN");
  EXPECT_EQ(align, env && std::string(env) == "64" ? 64 : 128);
  // (rows of at most 64 bytes: 64-byte padding either way)
  const index_t row_align = op.extents()[0] * static_cast<index_t>(sizeof(double)) <= 64 ? 64 : align;
  EXPECT_EQ(u.box().sy * static_cast<index_t>(sizeof(double)) % row_align, 0);
  EXPECT_LT(u.box().sy - op.extents()[0], row_align / static_cast<index_t>(sizeof(double)));
  op.check_field(u, "u");
  Field<double> wrong(g);
  if (p > 1) EXPECT_THROW(op.check_field(wrong, "u"), InvalidArgument);
}

// ---- device memory (skipped loudly without a GPU) ----------------------------------

TEST(DistributedAdiDevice, EverySchemeEveryBoundaryEveryGrid3D) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  expect_all<double>({13, 11, 9}, rank_gpu(), 1e-12);
}
TEST(DistributedAdiDevice, EverySchemeEveryBoundaryEveryGrid2D) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  expect_all<double>({17, 13, 1}, rank_gpu(), 1e-12);
}
TEST(DistributedAdiDevice, Float) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  expect_all<float>({13, 11, 9}, rank_gpu(), 2e-5);
}
// Device against host: the same distributed problem on both memories.
TEST(DistributedAdiDevice, MatchesHost) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  const Executor dev = rank_gpu();
  Grids grids;
  for (const Problem& s : setups()) {
    const Grid g = grid_for({33, 31, 9}, s.stretched);  // long enough lines for the fused kernels
    const Field<double> host = single_solution<double>(g, s, Scheme::craig_sneyd(), Executor::host());
    for (const auto& dims : factorisations(world_size()))
      EXPECT_LE(distributed_error<double>(grids, dims, g, s, Scheme::craig_sneyd(), dev, host), 1e-11)
          << s.name << " " << describe(dims);
  }
}

// Every (coefficients, size, problem, scheme, process grid of the world, options variant) of
// the split-stage tests below against one domain to 1e-12: variable and constant coefficients
// (constant: the x bands are shared too, so the split x stage takes the partition passes).
// Prints "NAME: largest relative difference ..." on rank 0.
struct Variant {
  DistributedOptions options;
  std::string label;
};
void expect_split_cases(const char* name, const std::vector<std::array<index_t, 3>>& sizes,
                        const std::vector<Problem>& problems, const std::vector<Scheme>& schemes,
                        const std::vector<Variant>& variants, bool host = false) {
  const Executor dev = host ? Executor::host() : rank_gpu();
  Grids grids;
  double worst = 0;
  int cases = 0;
  for (const bool constant : {false, true})
    for (const std::array<index_t, 3>& n : sizes)
      for (const Problem& s : problems)
        for (const Scheme& scheme : schemes) {
          g_constant_coefficients = constant;
          const Grid g = grid_for(n, s.stretched && !constant);
          const Field<double> single = single_solution<double>(g, s, scheme, dev);
          for (const auto& dims : factorisations(world_size())) {
            if (n[2] == 1 && dims[2] > 1) continue;
            for (const Variant& v : variants) {
              const double err = distributed_error<double>(grids, dims, g, s, scheme, dev, single, nullptr, v.options);
              worst = std::max(worst, err);
              ++cases;
              EXPECT_LE(err, 1e-12) << s.name << (constant ? " (constant coefficients)" : "") << ", " << scheme.name()
                                    << ", " << describe(dims) << " ranks, " << g.describe() << ", " << v.label;
            }
          }
        }
  g_constant_coefficients = false;
  if (world_rank() == 0)
    std::printf("%s: largest relative difference from one domain %.3g over %d cases\n", name, worst, cases);
}

// The split stage's right-hand side formed inside the partition passes (stop 30, the
// default: every split stage with shared bands: y and z here, and x with constant coefficients)
// against one domain, with one thread per line and with sub-segments (the last Douglas stage
// writes into V_old: in the passes along y and z, the separate pass along x), and the
// separate pass itself; odd sizes.
TEST(DistributedAdiDevice, StageInPasses) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  std::vector<Variant> variants(3);
  for (int v = 0; v < 3; ++v) {
    variants[std::size_t(v)].options.stage_in_passes = v < 2;
    variants[std::size_t(v)].options.device_spike = false;  // (the partition passes)
    variants[std::size_t(v)].options.device_subsegments = v == 1 ? 0 : 1;
    variants[std::size_t(v)].label = std::string(v == 2 ? "separate right-hand side" : "in the passes") +
                                     (v == 1 ? ", automatic sub-segments" : ", one thread per line");
  }
  expect_split_cases("StageInPasses", {{31, 33, 35}, {33, 31, 1}}, setups(),
                     {Scheme::douglas(), Scheme::hundsdorfer_verwer()}, variants);
}

// The partition passes with rows loaded a chunk ahead of their stores (stop 31, the default:
// DistributedOptions::device_prefetch) along every split direction, against one domain: odd
// line lengths (pieces of 15..19 rows, not multiples of the chunk), one thread per line,
// sub-segments of 2 rows (automatic: fewer rows than a chunk) and 3 uneven sub-segments, the
// stage's right-hand side in the passes (writing into V_old along y and z) and apart, variable
// and constant coefficients (x split: shared bands only with constant ones); and prefetch off.
// The default (stop 32) also requests rows into L2 ahead and reads the X stage's V once per row
// (DistributedOptions::device_l2_prefetch; odd v < 6 also along X and with per-line bands,
// device_l2_prefetch_everywhere); v = 7, 8: register prefetch without it (stop 31).
TEST(DistributedAdiDevice, Prefetch) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  std::vector<Variant> variants(9);
  for (int v = 0; v < 9; ++v) {  // v < 6: prefetch; S = 1, automatic, 3; in the passes, apart
    DistributedOptions& o = variants[std::size_t(v)].options;
    o.device_prefetch = v != 6;
    o.device_spike = false;  // (the partition passes)
    o.device_l2_prefetch = v < 7;
    o.device_l2_prefetch_everywhere = v < 6 && v % 2 == 1;  // the X / per-line L2 forms too
    o.device_subsegments = v == 6 ? 1 : v == 7 ? 1 : v == 8 ? 3 : std::array<int, 3>{1, 0, 3}[std::size_t(v % 3)];
    o.stage_in_passes = v < 3 || v >= 6;
    variants[std::size_t(v)].label = std::string(o.device_prefetch ? "prefetch" : "no prefetch") +
                                     (o.device_prefetch && !o.device_l2_prefetch ? " without L2" : "") +
                                     (o.device_l2_prefetch_everywhere ? ", L2 everywhere" : "") +
                                     ", sub-segments " + std::to_string(o.device_subsegments) +
                                     (o.stage_in_passes ? ", in the passes" : ", separate right-hand side");
  }
  const std::vector<Problem> all = setups();
  expect_split_cases("Prefetch", {{31, 33, 35}, {37, 29, 1}}, {all[1], all[3], all[4]},  // g(t), periodic, mixed
                     {Scheme::douglas()}, variants);
}

// The SPIKE form of the split stages with shared bands (stop 33: DistributedOptions::device_spike;
// along x with constant coefficients: x has shared bands only then) against one domain: every
// split direction, odd sizes, segments of 10-48 rows, S = 1, automatic and 3 (the SPIKE form
// ignores S), in the passes asked for (solve_stage declines: formed apart) and apart.
std::vector<Variant> spike_variants() {
  std::vector<Variant> variants(3);
  for (int v = 0; v < 3; ++v) {
    DistributedOptions& o = variants[std::size_t(v)].options;
    o.device_spike = o.host_spike = true;
    o.spike_compact = false;  // the stop 36 tail (the compact one, the default since stop 38: below)
    o.device_subsegments = std::array<int, 3>{1, 0, 3}[std::size_t(v)];
    o.stage_in_passes = v != 1;
    variants[std::size_t(v)].label = std::string("spike") + ", sub-segments " +
                                     std::to_string(o.device_subsegments) +
                                     (o.stage_in_passes ? ", in the passes" : ", separate right-hand side");
  }
  return variants;
}
TEST(DistributedAdiDevice, Spike) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");  // the options pick the tail
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<Problem> all = setups();
  expect_split_cases("Spike", {{21, 33, 97}, {97, 29, 1}}, {all[1], all[3], all[4]},  // g(t), periodic, mixed
                     {Scheme::douglas(), Scheme::hundsdorfer_verwer()}, spike_variants());
}
// ... on host memory (the same steps as loops: DistributedTridiagonalPlan::Impl::run_spike_host;
// the host operator forms every right-hand side apart), every scheme.
TEST(DistributedAdi, Spike) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");  // the options pick the tail
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<Problem> all = setups();
  expect_split_cases("Spike (host)", {{13, 11, 29}, {17, 13, 1}}, all, schemes(false), {spike_variants()[0]}, true);
}

// The compact SPIKE tail (stop 37: DistributedOptions::spike_compact; y's end values and the
// ranks' scalars gathered, each line's reduced system formed where it is solved) in the same
// cases as the SPIKE form above, against one domain.
std::vector<Variant> spike_compact_variants() {
  std::vector<Variant> variants = spike_variants();
  for (Variant& v : variants) {
    v.options.spike_compact = true;
    v.label += ", compact tail";
  }
  return variants;
}
TEST(DistributedAdiDevice, SpikeCompact) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");  // the options pick the tail
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<Problem> all = setups();
  expect_split_cases("SpikeCompact", {{21, 33, 97}, {97, 29, 1}}, {all[0], all[1], all[3], all[4]},
                     {Scheme::douglas(), Scheme::hundsdorfer_verwer()}, spike_compact_variants());
}
// The split stage's forms before stop 39 made the faster ones the default (every other device
// test runs those): the spikes by two sequential Thomas sweeps (DistributedOptions::spike_prepare_pcr
// off), the compact tail's last rows one at a time (spike_back_batched off), its halves allgathered
// on 2 ranks (spike_half_exchange off), and the split stage's boundary written again
// (ADI_BOUNDARY_REUSE=0), in the same cases, both tails.
TEST(DistributedAdiDevice, SpikeFormsBeforeStop39) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_PREPARE_PCR", "");
  const adi::test::ScopedEnv options_decide_tail("ADI_SPIKE_BACK_BATCHED", "");
  const adi::test::ScopedEnv options_decide_half("ADI_SPIKE_HALF", "");
  const adi::test::ScopedEnv boundary_again("ADI_BOUNDARY_REUSE", "0");
  std::vector<Variant> variants = spike_compact_variants();
  variants.push_back(spike_variants()[0]);  // (the default tail)
  for (Variant& v : variants) {
    v.options.spike_prepare_pcr = false;
    v.options.spike_back_batched = false;
    v.options.spike_half_exchange = false;
    v.label += ", sequential spikes, one-at-a-time tail, halves allgathered, boundary again";
  }
  const std::vector<Problem> all = setups();
  expect_split_cases("SpikeFormsBeforeStop39", {{21, 33, 97}, {97, 29, 1}}, {all[0], all[1], all[3], all[4]},
                     {Scheme::douglas(), Scheme::hundsdorfer_verwer()}, variants);
}
// The split stage's forms before stop 40 made h-splitwait's five switches the default (every
// other device test runs those): every split solve waits for its end (ADI_SPLIT_DEFER=0), the
// halo's two NCCL pairs in two groups (ADI_HALO_ONE_GROUP=0), the spikes and flag checked on the
// device at every solve (ADI_SPLIT_LEAN=0), the compact tail's correction a thread a line
// (spike_back_spread off) and the spikes' finer reach (spike_reach_coarse off), both tails.
TEST(DistributedAdiDevice, SplitFormsBeforeStop40) {
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");
  const adi::test::ScopedEnv defer("ADI_SPLIT_DEFER", "0");
  const adi::test::ScopedEnv one_group("ADI_HALO_ONE_GROUP", "0");
  const adi::test::ScopedEnv options_decide_spread("ADI_SPIKE_BACK_SPREAD", "");
  const adi::test::ScopedEnv options_decide_reach("ADI_SPIKE_REACH_COARSE", "");
  const adi::test::ScopedEnv lean("ADI_SPLIT_LEAN", "0");
  std::vector<Variant> variants = spike_compact_variants();
  variants.push_back(spike_variants()[0]);  // (the default tail)
  for (Variant& v : variants) {
    v.options.spike_back_spread = false;
    v.options.spike_reach_coarse = false;
    v.label += ", waited ends, two halo groups, spikes checked, a thread a line, finer reach";
  }
  const std::vector<Problem> all = setups();
  expect_split_cases("SplitFormsBeforeStop40", {{21, 33, 97}, {97, 29, 1}}, {all[0], all[1], all[3], all[4]},
                     {Scheme::douglas(), Scheme::hundsdorfer_verwer()}, variants);
}
// The split stage's deferred end (ADI_SPLIT_DEFER=1, the default since stop 40; stop 39 h-splitwait: the split solve returns
// once queued, its pivot verdict and exchange time read at the step's end; Hundsdorfer-Verwer
// solves each split axis twice a step: the second solve settles the first) and the halo's two
// NCCL send/receive pairs as one group (ADI_HALO_ONE_GROUP=1), in the compact tail's cases, and
// the compact tail's correction spread and coarser reach (DistributedOptions::spike_back_spread,
// spike_reach_coarse), and the Operator's bands key (ADI_SPLIT_LEAN=1: spikes and flag unchecked
// while the bands are unchanged; HV and Rannacher steps change s).
TEST(DistributedAdiDevice, SplitDeferred) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");
  const adi::test::ScopedEnv defer("ADI_SPLIT_DEFER", "1");
  const adi::test::ScopedEnv one_group("ADI_HALO_ONE_GROUP", "1");
  const adi::test::ScopedEnv options_decide_spread("ADI_SPIKE_BACK_SPREAD", "");
  const adi::test::ScopedEnv options_decide_reach("ADI_SPIKE_REACH_COARSE", "");
  const adi::test::ScopedEnv lean("ADI_SPLIT_LEAN", "1");
  ADI_REQUIRE_CUDA("the distributed AdiSolver on device memory");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<Problem> all = setups();
  std::vector<Variant> variants = spike_compact_variants();
  variants.push_back(spike_variants()[0]);  // (the default tail)
  Variant spread = spike_compact_variants()[0];  // the compact tail's correction spread, the coarse reach
  spread.options.spike_back_spread = true;
  spread.options.spike_reach_coarse = true;
  spread.label += ", correction spread, coarse reach";
  variants.push_back(spread);
  Variant partition;  // the partition passes (no SPIKE form): their end deferred too
  partition.options.device_spike = false;
  partition.label = "partition passes";
  variants.push_back(partition);
  expect_split_cases("SplitDeferred", {{21, 33, 97}, {97, 29, 1}}, {all[0], all[1], all[3], all[4]},
                     {Scheme::douglas(), Scheme::hundsdorfer_verwer()}, variants);
}
TEST(DistributedAdi, SpikeCompact) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");  // the options pick the tail
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const std::vector<Problem> all = setups();
  expect_split_cases("SpikeCompact (host)", {{13, 11, 29}, {17, 13, 1}}, all, schemes(false),
                     {spike_compact_variants()[0]}, true);
}
// A split stage's boundary written again at the stage's start (ADI_BOUNDARY_REUSE=0; the default
// since stop 39 skips it where the step's first stage already wrote it at that time): host memory.
TEST(DistributedAdi, BoundaryWrittenAgain) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const adi::test::ScopedEnv boundary_again("ADI_BOUNDARY_REUSE", "0");
  const std::vector<Problem> all = setups();
  expect_split_cases("BoundaryWrittenAgain (host)", {{13, 11, 29}}, all, schemes(false), {spike_compact_variants()[0]},
                     true);
}

}  // namespace
