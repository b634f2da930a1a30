// The halo exchange of adi::mpi::LocalField (faces, edges, corners, periodic wraps, any
// ghost width), on host memory and bit for bit the same on device memory (skipped loudly
// without a GPU), and the LocalField copies between memories. (The exchange of an
// Operator's piece is tested through the distributed AdiSolver: test_distributed_adi.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "adi/adi.hpp"
#include "adi/mpi/mpi.hpp"
#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

// The halo of a field with global values: faces, edges, corners and periodic wraps (x
// and z periodic, y not). ghosts: widths; the field lives on exec. Returns the
// exchanged allocation (host copy) for comparisons between memory spaces.
std::vector<double> expect_halo(const ProcessGrid& procs, const std::array<index_t, 3>& n, std::array<int, 3> ghosts,
                                const Executor& exec, Transport transport = Transport::automatic,
                                Transport* used = nullptr) {
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
  HaloExchange<double> halo(procs, f, transport);
  if (used) *used = halo.transport();
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
                    << ghosts[2] << ", transport " << transport_name(halo.transport());
  std::vector<double> out(std::size_t(r.allocated().size()));
  r.copy_to_host(out.data());
  return out;
}

TEST(HaloExchange, HaloFillsFacesEdgesCornersAndWraps) {
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims, {true, false, true});
    expect_halo(procs, {9, 8, 8}, {1, 1, 1}, Executor::host());
    expect_halo(procs, {9, 8, 8}, {2, 1, 2}, Executor::host());
  }
}

// ---- device memory (skipped loudly without a GPU) ----------------------------------

TEST(HaloExchangeDevice, HaloMatchesHostBitForBit) {
  ADI_REQUIRE_CUDA("the device HaloExchange test");
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

// Every transport of the device slabs (host staging, NCCL where this build and machine
// have it: one GPU per rank) fills the same ghosts as the host exchange; an explicit NCCL
// that cannot run throws the same Unsupported on every rank.
TEST(HaloExchangeDevice, TransportsMatchHost) {
  ADI_REQUIRE_CUDA("the device HaloExchange transports");
  const Executor dev = rank_gpu();
  int nccl_runs = 0;
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims, {true, false, true});
    const std::array<int, 3> g{1, 1, 2};
    const auto h = expect_halo(procs, {9, 8, 8}, g, Executor::host());
    for (Transport t : {Transport::host_staging, Transport::automatic, Transport::nccl}) {
      Transport used = Transport::automatic;
      std::vector<double> d;
      try {
        d = expect_halo(procs, {9, 8, 8}, g, dev, t, &used);
      } catch (const Unsupported& e) {
        EXPECT_EQ(t, Transport::nccl) << e.what();
        continue;
      }
      if (used == Transport::nccl) ++nccl_runs;
      int differ = 0;
      for (std::size_t q = 0; q < h.size(); ++q) differ += !(h[q] == d[q] || (std::isnan(h[q]) && std::isnan(d[q])));
      EXPECT_EQ(differ, 0) << procs.describe() << " transport " << transport_name(t) << " -> "
                           << transport_name(used);
    }
  }
  if (world_rank() == 0)
    std::printf("HaloExchangeDevice.TransportsMatchHost: %d process grid(s) exchanged through NCCL%s\n", nccl_runs,
                nccl_runs ? "" : " (none: needs NCCL and a GPU per rank; NCCL halo NOT tested)");
}

TEST(HaloExchangeDevice, LocalFieldCopies) {
  ADI_REQUIRE_CUDA("the device HaloExchange test");
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
