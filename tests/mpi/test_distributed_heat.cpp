// The distributed heat step against the single-domain AdiSolver on the same global
// problem (every process-grid factorisation, Dirichlet and periodic axes, Rannacher),
// its convergence order, and the halo exchange.
#include <gtest/gtest.h>

#include <cmath>

#include "adi/adi.hpp"
#include "adi/mpi/heat.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

// u = exp(-(kx a^2 + ky b^2 + kz c^2) t) sin(a x + p) sin(b y + q) sin(c z + r): non-zero,
// time-dependent Dirichlet data; with a = 2 pi / L along a periodic axis it is periodic.
struct Wave {
  std::array<double, 3> k{1.0, 0.7, 0.5}, w{2.1, 1.7, 1.3}, ph{0.3, 0.5, 0.7};
  double operator()(double t, double x, double y, double z) const {
    const double lam = k[0] * w[0] * w[0] + k[1] * w[1] * w[1] + k[2] * w[2] * w[2];
    return std::exp(-lam * t) * std::sin(w[0] * x + ph[0]) * std::sin(w[1] * y + ph[1]) * std::sin(w[2] * z + ph[2]);
  }
};

// Runs `steps` steps of both solvers and returns max |distributed - single| / max |single|.
template <class T>
double versus_single(const std::array<int, 3>& dims, const Grid& grid, const BoundaryConditions& bc, const Wave& wave,
                     Scheme scheme, int steps, ReducedStrategy strategy = ReducedStrategy::automatic) {
  std::array<bool, 3> per{bc.periodic(Axis::x), bc.periodic(Axis::y), bc.periodic(Axis::z)};
  for (int a = 0; a < 3; ++a) per[a] = per[a] && grid.extent(Axis(a)) > 1;
  ProcessGrid procs(MPI_COMM_WORLD, dims, per);
  Decomposition dec(procs, {grid.nx(), grid.ny(), grid.nz()});
  std::array<double, 3> k = wave.k;
  DistributedHeat<T> heat(procs, dec, grid, k, bc, scheme, strategy);
  AdiSolver<T> single(grid, Pde::heat(k[0], grid.ny() > 1 ? k[1] : 0.0, grid.nz() > 1 ? k[2] : 0.0), bc, scheme);
  Field<T> U(grid);
  for (index_t kk = 0; kk < grid.nz(); ++kk)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i)
        U(i, j, kk) = T(wave(0, grid.axis(Axis::x)[i], grid.axis(Axis::y)[j], grid.axis(Axis::z)[kk]));
  const auto lo = dec.lo();
  auto& u = heat.u();
  for (index_t kk = 0; kk < u.extent(Axis::z); ++kk)
    for (index_t j = 0; j < u.extent(Axis::y); ++j)
      for (index_t i = 0; i < u.extent(Axis::x); ++i) u(i, j, kk) = U(lo[0] + i, lo[1] + j, lo[2] + kk);
  const double dt = 0.004;
  for (int s = 0; s < steps; ++s) {
    heat.step(s * dt, dt);
    single.step(U, s * dt, dt);
  }
  double err = 0, scale = 0;
  for (index_t kk = 0; kk < grid.nz(); ++kk)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) scale = std::max(scale, std::abs(double(U(i, j, kk))));
  for (index_t kk = 0; kk < u.extent(Axis::z); ++kk)
    for (index_t j = 0; j < u.extent(Axis::y); ++j)
      for (index_t i = 0; i < u.extent(Axis::x); ++i) {
        const double e = std::abs(double(u(i, j, kk)) - double(U(lo[0] + i, lo[1] + j, lo[2] + kk)));
        err = std::isfinite(e) ? std::max(err, e) : 1e300;
      }
  return err / scale;
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
TEST(DistributedHeat, ConvergenceOrder) {
  Wave w;
  w.k[2] = 0;  // the 2D problem on z = 0: no decay from the z factor
  const int p = world_size();
  std::vector<double> errs;
  for (index_t n : {9, 17, 33}) {
    const Grid g = box_grid(n, n, 1);
    ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
    Decomposition dec(procs, {n, n, 1});
    DistributedHeat<double> heat(procs, dec, g, w.k, dirichlet_bc(w), Scheme::douglas());
    auto& u = heat.u();
    const auto lo = dec.lo();
    auto x = [&](int a, index_t i) { return g.axis(Axis(a))[lo[a] + i]; };
    for (index_t j = 0; j < u.extent(Axis::y); ++j)
      for (index_t i = 0; i < u.extent(Axis::x); ++i) u(i, j, 0) = w(0, x(0, i), x(1, j), 0);
    const int steps = int(n - 1);
    const double t_end = 0.1, dt = t_end / steps;
    for (int s = 0; s < steps; ++s) heat.step(s * dt, dt);
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
    if (world_rank() == 0) std::printf("distributed heat: error %.3e -> %.3e, order %.2f\n", errs[i - 1], errs[i], order);
  }
}

TEST(DistributedHeat, HaloFillsFacesEdgesCornersAndWraps) {
  const int p = world_size();
  for (const auto& dims : factorisations(p)) {
    ProcessGrid procs(MPI_COMM_WORLD, dims, {true, false, true});
    const std::array<index_t, 3> n{9, 8, 8};
    Decomposition dec(procs, n);
    LocalField<double> f(dec, {1, 1, 1});
    const auto lo = dec.lo();
    auto value = [&](index_t gi, index_t gj, index_t gk) { return double(gi + 100 * gj + 10000 * gk); };
    for (index_t k = 0; k < f.extent(Axis::z); ++k)
      for (index_t j = 0; j < f.extent(Axis::y); ++j)
        for (index_t i = 0; i < f.extent(Axis::x); ++i) f(i, j, k) = value(lo[0] + i, lo[1] + j, lo[2] + k);
    HaloExchange<double> halo(procs, f);
    halo.exchange(f);
    int bad = 0;
    for (index_t k = -1; k <= f.extent(Axis::z); ++k)
      for (index_t j = -1; j <= f.extent(Axis::y); ++j)
        for (index_t i = -1; i <= f.extent(Axis::x); ++i) {
          index_t g[3] = {lo[0] + i, lo[1] + j, lo[2] + k};
          if (g[1] < 0 || g[1] >= n[1]) continue;  // y is not periodic: nothing arrives there
          g[0] = (g[0] + n[0]) % n[0];
          g[2] = (g[2] + n[2]) % n[2];
          bad += f(i, j, k) != value(g[0], g[1], g[2]);
        }
    EXPECT_EQ(bad, 0) << procs.describe();
  }
}

}  // namespace
