// The distributed heat step against the single-domain AdiSolver on the same global
// problem (every process-grid factorisation, Dirichlet and periodic axes, Rannacher),
// its convergence order, and the halo exchange; the same on device memory (against the
// host DistributedHeat and AdiSolver; skipped loudly without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpu_skip.hpp"
#include "adi/adi.hpp"
#include "adi/mpi/heat.hpp"
#include "mpi_test_util.hpp"
#include "solvers/cuda/backend.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

// u = exp(-(kx a^2 + ky b^2 + kz c^2) t) sin(a x + p) sin(b y + q) sin(c z + r): non-zero,
// time-dependent Dirichlet data; with a = 2 pi / L along a periodic axis it is periodic.
struct Wave {
  std::array<double, 3> k{1.0, 0.7, 0.5}, w{2.1, 1.7, 1.3}, ph{0.3, 0.5, 0.7};
  double offset = 0;  // a constant solves the heat equation too
  double operator()(double t, double x, double y, double z) const {
    const double lam = k[0] * w[0] * w[0] + k[1] * w[1] * w[1] + k[2] * w[2] * w[2];
    return offset + std::exp(-lam * t) * std::sin(w[0] * x + ph[0]) * std::sin(w[1] * y + ph[1]) * std::sin(w[2] * z + ph[2]);
  }
};

// The single-domain AdiSolver's solution after `steps` steps.
template <class T>
Field<T> single_solution(const Grid& grid, const BoundaryConditions& bc, const Wave& wave, Scheme scheme, int steps,
                         double dt) {
  const std::array<double, 3> k = wave.k;
  AdiSolver<T> single(grid, Pde::heat(k[0], grid.ny() > 1 ? k[1] : 0.0, grid.nz() > 1 ? k[2] : 0.0), bc, scheme);
  Field<T> U(grid);
  for (index_t kk = 0; kk < grid.nz(); ++kk)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i)
        U(i, j, kk) = T(wave(0, grid.axis(Axis::x)[i], grid.axis(Axis::y)[j], grid.axis(Axis::z)[kk]));
  for (int s = 0; s < steps; ++s) single.step(U, s * dt, dt);
  return U;
}

// This rank's nodes of the distributed solution after `steps` steps, as a host field
// (exec: where DistributedHeat runs). poison: every value of u (ghosts included) is NaN
// before the initial values go into the interior, so reading a ghost or Dirichlet node
// nobody wrote shows up as NaN.
template <class T>
LocalField<T> distributed_solution(const ProcessGrid& procs, const Decomposition& dec, const Grid& grid,
                                   const BoundaryConditions& bc, const Wave& wave, Scheme scheme, int steps, double dt,
                                   ReducedStrategy strategy, const Executor& exec, bool poison) {
  DistributedHeat<T> heat(procs, dec, grid, wave.k, bc, scheme, strategy, exec);
  LocalField<T> init(dec, heat.u().ghosts());
  if (poison)
    for (index_t q = 0; q < init.allocated().size(); ++q) init.data()[q] = std::numeric_limits<T>::quiet_NaN();
  const auto lo = dec.lo();
  for (index_t kk = 0; kk < init.extent(Axis::z); ++kk)
    for (index_t j = 0; j < init.extent(Axis::y); ++j)
      for (index_t i = 0; i < init.extent(Axis::x); ++i)
        init(i, j, kk) = T(wave(0, grid.axis(Axis::x)[lo[0] + i], grid.axis(Axis::y)[lo[1] + j],
                                grid.axis(Axis::z)[lo[2] + kk]));
  heat.u().copy_from(init);
  for (int s = 0; s < steps; ++s) heat.step(s * dt, dt);
  return heat.u().to_host();
}

// max |u - ref| over this rank's nodes / max |single| (ref given as a global field or as
// another rank-local field); NaN counts as infinite.
template <class T, class R>
double local_error(const LocalField<T>& u, const Decomposition& dec, const Field<T>& single, const R& ref) {
  double err = 0, scale = 0;
  for (index_t kk = 0; kk < single.nz(); ++kk)
    for (index_t j = 0; j < single.ny(); ++j)
      for (index_t i = 0; i < single.nx(); ++i) scale = std::max(scale, std::abs(double(single(i, j, kk))));
  const auto lo = dec.lo();
  for (index_t kk = 0; kk < u.extent(Axis::z); ++kk)
    for (index_t j = 0; j < u.extent(Axis::y); ++j)
      for (index_t i = 0; i < u.extent(Axis::x); ++i) {
        const double e = std::abs(double(u(i, j, kk)) - double(ref(lo, i, j, kk)));
        err = std::isfinite(e) ? std::max(err, e) : 1e300;
      }
  return err / scale;
}

struct Versus {
  double single = 0, host = 0;  // device runs: vs AdiSolver and vs the host DistributedHeat
};

// Runs the distributed step (on exec) and AdiSolver on the same problem; returns the
// relative differences (host: vs the host distributed run when exec is a device).
template <class T>
Versus versus(const std::array<int, 3>& dims, const Grid& grid, const BoundaryConditions& bc, const Wave& wave,
              Scheme scheme, int steps, ReducedStrategy strategy = ReducedStrategy::automatic,
              const Executor& exec = Executor::host()) {
  std::array<bool, 3> per{bc.periodic(Axis::x), bc.periodic(Axis::y), bc.periodic(Axis::z)};
  for (int a = 0; a < 3; ++a) per[a] = per[a] && grid.extent(Axis(a)) > 1;
  ProcessGrid procs(MPI_COMM_WORLD, dims, per);
  Decomposition dec(procs, {grid.nx(), grid.ny(), grid.nz()});
  const double dt = 0.004;
  const Field<T> U = single_solution<T>(grid, bc, wave, scheme, steps, dt);
  const LocalField<T> u =
      distributed_solution<T>(procs, dec, grid, bc, wave, scheme, steps, dt, strategy, exec, exec.is_cuda());
  Versus v;
  v.single = local_error(u, dec, U, [&](const std::array<index_t, 3>& lo, index_t i, index_t j, index_t kk) {
    return U(lo[0] + i, lo[1] + j, lo[2] + kk);
  });
  if (exec.is_cuda()) {
    const LocalField<T> h = distributed_solution<T>(procs, dec, grid, bc, wave, scheme, steps, dt, strategy,
                                                    Executor::host(), false);
    v.host = local_error(u, dec, U, [&](const std::array<index_t, 3>&, index_t i, index_t j, index_t kk) {
      return h(i, j, kk);
    });
  }
  return v;
}

template <class T>
double versus_single(const std::array<int, 3>& dims, const Grid& grid, const BoundaryConditions& bc, const Wave& wave,
                     Scheme scheme, int steps, ReducedStrategy strategy = ReducedStrategy::automatic) {
  return versus<T>(dims, grid, bc, wave, scheme, steps, strategy).single;
}

Grid box_grid(index_t nx, index_t ny, index_t nz) { return Grid::uniform({nx, ny, nz}, {0, 0, 0}, {1, 1, 1}); }

BoundaryConditions dirichlet_bc(const Wave& w) {
  return BoundaryConditions::all(Boundary::dirichlet([w](double t, double x, double y, double z) { return w(t, x, y, z); }));
}

TEST(DistributedHeat, DouglasMatchesSingleDomainEveryGrid) {
  const Wave w;
  for (const auto& dims : factorisations(world_size())) {
    EXPECT_LE(versus_single<double>(dims, box_grid(13, 11, 9), dirichlet_bc(w), w, Scheme::douglas(), 4), 1e-12)
        << dims[0] << "x" << dims[1] << "x" << dims[2];
    EXPECT_LE(versus_single<float>(dims, box_grid(13, 11, 9), dirichlet_bc(w), w, Scheme::douglas(), 4), 1e-5)
        << dims[0] << "x" << dims[1] << "x" << dims[2] << " float";
  }
}

TEST(DistributedHeat, EveryStrategyAndRannacher) {
  const Wave w;
  const std::array<int, 3> dims{world_size(), 1, 1};
  for (auto s : {ReducedStrategy::allgather, ReducedStrategy::alltoall, ReducedStrategy::pcr})
    EXPECT_LE(versus_single<double>(dims, box_grid(15, 7, 5), dirichlet_bc(w), w,
                                    Scheme::craig_sneyd().with_damping(2), 4, s),
              1e-12)
        << strategy_name(s);
}

TEST(DistributedHeat, PeriodicAxes) {
  Wave w;
  const double L = 1.0;
  w.w[0] = 2 * M_PI / L;  // periodic in x
  w.w[1] = 4 * M_PI / L;  // and in y
  for (const auto& dims : factorisations(world_size())) {
    const Grid g(periodic_axis(12, 0.0, L), periodic_axis(10, 0.0, L), AxisGrid::uniform(9, 0, 1));
    BoundaryConditions bc = dirichlet_bc(w);
    bc.set_periodic(Axis::x).set_periodic(Axis::y);
    // PCR needs a power-of-two rank count along a periodic axis; automatic avoids it otherwise.
    EXPECT_LE(versus_single<double>(dims, g, bc, w, Scheme::douglas(), 4), 1e-12)
        << dims[0] << "x" << dims[1] << "x" << dims[2];
  }
}

TEST(DistributedHeat, TwoDimensional) {
  const Wave w;
  for (const auto& dims : factorisations(world_size())) {
    if (dims[2] != 1) continue;
    EXPECT_LE(versus_single<double>(dims, box_grid(17, 13, 1), dirichlet_bc(w), w, Scheme::douglas(), 5), 1e-12);
  }
}

// Second order in space and time (dt ~ h): the max error drops ~4x per refinement.
void expect_second_order(const Executor& exec) {
  Wave w;
  w.k[2] = 0;  // the 2D problem on z = 0: no decay from the z factor
  const int p = world_size();
  std::vector<double> errs;
  for (index_t n : {9, 17, 33}) {
    const Grid g = box_grid(n, n, 1);
    ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
    Decomposition dec(procs, {n, n, 1});
    const int steps = int(n - 1);
    const double t_end = 0.1, dt = t_end / steps;
    const LocalField<double> u = distributed_solution<double>(procs, dec, g, dirichlet_bc(w), w, Scheme::douglas(),
                                                              steps, dt, ReducedStrategy::automatic, exec, false);
    const auto lo = dec.lo();
    auto x = [&](int a, index_t i) { return g.axis(Axis(a))[lo[a] + i]; };
    double e = 0;
    for (index_t j = 0; j < u.extent(Axis::y); ++j)
      for (index_t i = 0; i < u.extent(Axis::x); ++i)
        e = std::max(e, std::abs(u(i, j, 0) - w(t_end, x(0, i), x(1, j), 0)));
    double eg = 0;
    MPI_Allreduce(&e, &eg, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    errs.push_back(eg);
  }
  for (std::size_t i = 1; i < errs.size(); ++i) {
    const double order = std::log2(errs[i - 1] / errs[i]);
    EXPECT_GT(order, 1.8) << "errors " << errs[i - 1] << " -> " << errs[i];
    if (world_rank() == 0)
      std::printf("distributed heat (%s): error %.3e -> %.3e, order %.2f\n", exec.name().c_str(), errs[i - 1],
                  errs[i], order);
  }
}

TEST(DistributedHeat, ConvergenceOrder) { expect_second_order(Executor::host()); }

// The halo of a field with global values: faces, edges, corners and periodic wraps (x
// and z periodic, y not). ghosts: widths; the field lives on exec. Returns the
// exchanged allocation (host copy) for comparisons between memory spaces.
std::vector<double> expect_halo(const ProcessGrid& procs, const std::array<index_t, 3>& n, std::array<int, 3> ghosts,
                                const Executor& exec) {
  Decomposition dec(procs, n);
  LocalField<double> h(dec, ghosts);
  // Ghosts poisoned: at the non-periodic ends of y nothing arrives, the rest must be written.
  for (index_t q = 0; q < h.allocated().size(); ++q) h.data()[q] = std::numeric_limits<double>::quiet_NaN();
  const auto lo = dec.lo();
  auto value = [&](index_t gi, index_t gj, index_t gk) { return double(gi + 100 * gj + 10000 * gk); };
  for (index_t k = 0; k < h.extent(Axis::z); ++k)
    for (index_t j = 0; j < h.extent(Axis::y); ++j)
      for (index_t i = 0; i < h.extent(Axis::x); ++i) h(i, j, k) = value(lo[0] + i, lo[1] + j, lo[2] + k);
  LocalField<double> f(dec, ghosts, exec);
  f.copy_from(h);
  HaloExchange<double> halo(procs, f);
  halo.exchange(f);
  const LocalField<double> r = f.to_host();
  int bad = 0;
  for (index_t k = -ghosts[2]; k < r.extent(Axis::z) + ghosts[2]; ++k)
    for (index_t j = -ghosts[1]; j < r.extent(Axis::y) + ghosts[1]; ++j)
      for (index_t i = -ghosts[0]; i < r.extent(Axis::x) + ghosts[0]; ++i) {
        index_t g[3] = {lo[0] + i, lo[1] + j, lo[2] + k};
        if (g[1] < 0 || g[1] >= n[1]) {  // y is not periodic: nothing arrives there
          bad += !std::isnan(r(i, j, k));
          continue;
        }
        g[0] = (g[0] + n[0]) % n[0];
        g[2] = (g[2] + n[2]) % n[2];
        bad += r(i, j, k) != value(g[0], g[1], g[2]);
      }
  EXPECT_EQ(bad, 0) << procs.describe() << " on " << exec.name() << ", ghosts " << ghosts[0] << ghosts[1]
                    << ghosts[2];
  std::vector<double> out(std::size_t(r.allocated().size()));
  r.copy_to_host(out.data());
  return out;
}

TEST(DistributedHeat, HaloFillsFacesEdgesCornersAndWraps) {
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims, {true, false, true});
    expect_halo(procs, {9, 8, 8}, {1, 1, 1}, Executor::host());
    expect_halo(procs, {9, 8, 8}, {2, 1, 2}, Executor::host());
  }
}

// ---- device memory (skipped loudly without a GPU) ----------------------------------


TEST(DistributedHeatDevice, HaloMatchesHostBitForBit) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  const Executor dev = rank_gpu();
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims, {true, false, true});
    for (std::array<int, 3> g : {std::array<int, 3>{1, 1, 1}, std::array<int, 3>{2, 1, 2}, std::array<int, 3>{0, 1, 1}}) {
      const auto h = expect_halo(procs, {9, 8, 8}, g, Executor::host());
      const auto d = expect_halo(procs, {9, 8, 8}, g, dev);
      int differ = 0;
      for (std::size_t q = 0; q < h.size(); ++q)
        differ += !(h[q] == d[q] || (std::isnan(h[q]) && std::isnan(d[q])));
      EXPECT_EQ(differ, 0) << procs.describe() << " ghosts " << g[0] << g[1] << g[2];
    }
  }
}

TEST(DistributedHeatDevice, DouglasMatchesHostAndSingleEveryGrid) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  const Executor dev = rank_gpu();
  const Wave w;
  for (const auto& dims : factorisations(world_size())) {
    const Versus d = versus<double>(dims, box_grid(13, 11, 9), dirichlet_bc(w), w, Scheme::douglas(), 4,
                                    ReducedStrategy::automatic, dev);
    EXPECT_LE(d.single, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
    EXPECT_LE(d.host, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
    const Versus f = versus<float>(dims, box_grid(13, 11, 9), dirichlet_bc(w), w, Scheme::douglas(), 4,
                                   ReducedStrategy::automatic, dev);
    EXPECT_LE(f.single, 1e-5) << dims[0] << "x" << dims[1] << "x" << dims[2] << " float";
    EXPECT_LE(f.host, 1e-5) << dims[0] << "x" << dims[1] << "x" << dims[2] << " float";
    if (dims[2] == 1) {  // 2D: z has one node
      const Versus t = versus<double>(dims, box_grid(17, 13, 1), dirichlet_bc(w), w, Scheme::douglas(), 5,
                                      ReducedStrategy::automatic, dev);
      EXPECT_LE(t.single, 1e-12) << "2D " << dims[0] << "x" << dims[1];
      EXPECT_LE(t.host, 1e-12) << "2D " << dims[0] << "x" << dims[1];
    }
  }
}

TEST(DistributedHeatDevice, CraigSneydRannacherEveryStrategy) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  const Executor dev = rank_gpu();
  const Wave w;
  for (const auto& dims : factorisations(world_size()))
    for (auto s : {ReducedStrategy::allgather, ReducedStrategy::alltoall, ReducedStrategy::pcr}) {
      const Versus v = versus<double>(dims, box_grid(15, 13, 9), dirichlet_bc(w), w,
                                      Scheme::craig_sneyd().with_damping(2), 4, s, dev);
      EXPECT_LE(v.single, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2] << " " << strategy_name(s);
      EXPECT_LE(v.host, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2] << " " << strategy_name(s);
    }
}

TEST(DistributedHeatDevice, PeriodicAxes) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  const Executor dev = rank_gpu();
  Wave w;
  const double L = 1.0;
  w.w[0] = 2 * M_PI / L;
  w.w[1] = 4 * M_PI / L;
  for (const auto& dims : factorisations(world_size())) {
    const Grid g(periodic_axis(12, 0.0, L), periodic_axis(10, 0.0, L), AxisGrid::uniform(9, 0, 1));
    BoundaryConditions bc = dirichlet_bc(w);
    bc.set_periodic(Axis::x).set_periodic(Axis::y);
    const Versus d = versus<double>(dims, g, bc, w, Scheme::douglas(), 4, ReducedStrategy::automatic, dev);
    EXPECT_LE(d.single, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
    EXPECT_LE(d.host, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
    const Versus f = versus<float>(dims, g, bc, w, Scheme::douglas().with_damping(1), 4, ReducedStrategy::automatic,
                                   dev);
    EXPECT_LE(f.single, 1e-5) << dims[0] << "x" << dims[1] << "x" << dims[2] << " float";
    EXPECT_LE(f.host, 1e-5) << dims[0] << "x" << dims[1] << "x" << dims[2] << " float";
  }
}

// Constant Dirichlet faces (evaluated once) and a z-periodic box: the other paths of the
// device boundary cache. The wave vanishes on the x and y faces, so u = 0.25 + wave is
// the solution with the constant data 0.25 there.
TEST(DistributedHeatDevice, ConstantFacesAndPeriodicZ) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  const Executor dev = rank_gpu();
  Wave w;
  w.w = {M_PI, 2 * M_PI, 2 * M_PI};
  w.ph = {0.0, 0.0, 0.3};
  w.offset = 0.25;
  for (const auto& dims : factorisations(world_size())) {
    const Grid g(AxisGrid::uniform(11, 0, 1), AxisGrid::uniform(10, 0, 1), periodic_axis(8, 0.0, 1.0));
    BoundaryConditions bc = BoundaryConditions::all(Boundary::dirichlet(0.25));
    bc.set_periodic(Axis::z);
    const Versus d = versus<double>(dims, g, bc, w, Scheme::douglas(), 3, ReducedStrategy::automatic, dev);
    EXPECT_LE(d.single, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
    EXPECT_LE(d.host, 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
  }
}

TEST(DistributedHeatDevice, ConvergenceOrder) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  expect_second_order(rank_gpu());
}

TEST(DistributedHeatDevice, LocalFieldCopies) {
  ADI_REQUIRE_CUDA("the device DistributedHeat / HaloExchange test");
  const Executor dev = rank_gpu();
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  Decomposition dec(procs, {4 * world_size() + 1, 3, 5});
  LocalField<float> d(dec, {1, 0, 2}, dev);
  EXPECT_TRUE(d.on_device());
  const index_t ni = d.extent(Axis::x) * d.extent(Axis::y) * d.extent(Axis::z);
  std::vector<float> in(static_cast<std::size_t>(ni)), out(static_cast<std::size_t>(ni), -1.0f);
  for (index_t q = 0; q < ni; ++q) in[std::size_t(q)] = float(q) + 0.5f;
  d.copy_interior_from_host(in.data());
  d.copy_interior_to_host(out.data());
  EXPECT_EQ(in, out);
  const LocalField<float> h = d.to_host();
  EXPECT_FALSE(h.on_device());
  EXPECT_EQ(h(0, 0, 0), 0.5f);
  EXPECT_EQ(h(-1, 0, -2), 0.0f);  // zero-filled ghosts
  LocalField<float> c = d;  // deep copy
  LocalField<float> z(dec, {1, 0, 2}, dev);
  d.copy_from(z);
  c.copy_interior_to_host(out.data());
  EXPECT_EQ(in, out);
  LocalField<float> other(dec, {1, 1, 2}, dev);
  EXPECT_THROW(d.copy_from(other), InvalidArgument);
}

}  // namespace
