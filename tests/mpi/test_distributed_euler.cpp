// The CFD example's Euler step on a decomposed periodic box (examples/cfd/euler_mpi.hpp:
// ghost layers + the block partition method along split axes) against the single-domain
// EulerSolver of the same problem: every process grid of the world size, 2D (M = 4) and
// 3D (M = 5), both reduced-system strategies; the totals of Q conserved. Device memory
// (one GPU per rank: every operator on the GPU, ghost layers and block lines through NCCL
// where each rank has a GPU of its own, else host staging) against the same host reference.
#include <gtest/gtest.h>

#include <string>

#include "euler_mpi.hpp"
#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"

namespace {

using adi::index_t;
using namespace adi::mpi;
using namespace adi::mpi::testing;

template <class T, int D>
double euler_difference(const std::array<int, 3>& dims, ReducedStrategy strategy, int steps, bool device = false) {
  cfd::EulerSetup s;
  s.dims = D;
  if (D == 2) {
    s.n[0] = 12, s.n[1] = 10, s.n[2] = 1;
  } else {
    s.n[0] = 9, s.n[1] = 8, s.n[2] = 10;
  }
  s.dt = 0.05;
  s.threads = 1;
  cfd::Vortex v;
  v.gamma = s.gamma;
  for (int a = 0; a < 3; ++a) v.length[a] = s.length[a];
  if (D == 3) v.u_inf[2] = 0.5;

  cfd::EulerSolver<T, D, cfd::HostLaunch> serial(s, adi::Executor::host(), cfd::HostLaunch{1});
  serial.set_state(cfd::vortex_state<T>(s, v, 0.0));
  for (int k = 0; k < steps; ++k) serial.step();
  const std::vector<T> ref = serial.state();

  ProcessGrid procs(MPI_COMM_WORLD, dims);
  Decomposition dec(procs, {s.n[0], s.n[1], s.n[2]});
  cfd::DistributedEuler<T, D> dist(procs, dec, s, strategy, device ? rank_gpu() : adi::Executor::host());
  dist.set_vortex(v, 0.0);
  const auto before = dist.totals();
  for (int k = 0; k < steps; ++k) dist.step();
  const auto after = dist.totals();
  for (int c = 0; c < D + 2; ++c)
    EXPECT_NEAR(after[std::size_t(c)], before[std::size_t(c)],
                (sizeof(T) == 8 ? 1e-10 : 2e-5) * (1 + std::abs(before[std::size_t(c)])))
        << "total of Q_" << c << " drifted";

  double diff = 0, scale = 0;
  for (T x : ref) scale = std::max(scale, std::abs(double(x)));
  const auto e = dist.extents();
  const auto lo = dist.lo();
  for (index_t k = 0; k < e[2]; ++k)
    for (index_t j = 0; j < e[1]; ++j)
      for (index_t i = 0; i < e[0]; ++i) {
        const index_t p = (lo[0] + i) + s.n[0] * ((lo[1] + j) + s.n[1] * (lo[2] + k));
        for (int c = 0; c < D + 2; ++c) {
          const double d = std::abs(double(dist.at(i, j, k)[c]) - double(ref[std::size_t(p * (D + 2) + c)]));
          diff = std::isfinite(d) ? std::max(diff, d) : std::numeric_limits<double>::infinity();
        }
      }
  double all = 0;
  MPI_Allreduce(&diff, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all / scale;
}

TEST(DistributedEuler, TwoDimensionalMatchesSingleDomainOnEveryGrid) {
  for (const auto& dims : factorisations(world_size())) {
    if (dims[2] != 1) continue;
    for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall})
      EXPECT_LE((euler_difference<double, 2>(dims, s, 4)), 1e-11)
          << dims[0] << "x" << dims[1] << "x" << dims[2] << " " << strategy_name(s);
  }
}

TEST(DistributedEuler, ThreeDimensionalMatchesSingleDomainOnEveryGrid) {
  for (const auto& dims : factorisations(world_size()))
    EXPECT_LE((euler_difference<double, 3>(dims, ReducedStrategy::automatic, 3)), 1e-11)
        << dims[0] << "x" << dims[1] << "x" << dims[2];
}

TEST(DistributedEuler, FloatMatchesSingleDomain) {
  EXPECT_LE((euler_difference<float, 2>({world_size(), 1, 1}, ReducedStrategy::automatic, 3)), 1e-4);
}

TEST(DistributedEuler, DeviceMatchesSingleDomainOnEveryGrid) {
  ADI_REQUIRE_CUDA("the distributed CFD step on GPUs");
  for (const auto& dims : factorisations(world_size())) {
    if (dims[2] == 1)
      for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall})
        EXPECT_LE((euler_difference<double, 2>(dims, s, 4, true)), 1e-11)
            << "device " << dims[0] << "x" << dims[1] << "x" << dims[2] << " " << strategy_name(s);
    EXPECT_LE((euler_difference<double, 3>(dims, ReducedStrategy::automatic, 3, true)), 1e-11)
        << "device 3D " << dims[0] << "x" << dims[1] << "x" << dims[2];
  }
  EXPECT_LE((euler_difference<float, 2>({world_size(), 1, 1}, ReducedStrategy::automatic, 3, true)), 1e-4)
      << "device float";
}

TEST(DistributedEuler, BadSetupOnEveryRank) {
  cfd::EulerSetup s;
  s.n[0] = 3;  // the dissipation stencil needs 5 points
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, world_size()});
  Decomposition dec(procs, {3, 64, 2 * world_size()});
  EXPECT_THROW((cfd::DistributedEuler<double, 2>(procs, dec, s)), adi::InvalidArgument);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

}  // namespace
