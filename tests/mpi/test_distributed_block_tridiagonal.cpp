// DistributedBlockTridiagonalPlan (the block partition method) against the single-rank
// reference block solve of the same global problem: block sizes 2..8, every process grid
// of the world size along every axis (uneven extents), periodic lines, both strategies,
// fp64 and fp32, AoS point arrays, u == d, inputs left intact; bad input on every rank.
// Device memory: the device passes (solvers/cuda/block_partition_local_passes.cu) for M = 2..8 and
// both precisions, the host-mirror fallback, and a singular block on one rank's GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "gpu_skip.hpp"
#include "adi/block_tridiagonal.hpp"
#include "adi/field.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_block_tridiagonal.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "mpi_test_util.hpp"
#include "solvers/cuda/backend.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

// Odd and uneven: 2, 3 and 4 ranks along any axis leave >= 2 rows each.
constexpr std::array<index_t, 3> kGlobal{9, 8, 10};
// The global extents of the problem being tested (kGlobal unless a test needs long lines).
std::array<index_t, 3> g_dims = kGlobal;

// The global problem (block diagonally dominant, the same on every rank): AoS arrays of
// M*M values per point for A, B, C and M per point for d.
struct Global {
  std::vector<double> a, b, c, d, u;
};

Global make_global(int M, unsigned seed) {
  const index_t N = g_dims[0] * g_dims[1] * g_dims[2];
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Global g;
  g.a.resize(std::size_t(N * M * M));
  g.b.resize(g.a.size());
  g.c.resize(g.a.size());
  g.d.resize(std::size_t(N * M));
  const double off = 1.0 / M;  // row sums of |A|, |C| and B's off-diagonal <= 1 each
  for (auto* v : {&g.a, &g.c})
    for (double& x : *v) x = off * u(rng);
  for (index_t p = 0; p < N; ++p)
    for (int r = 0; r < M; ++r)
      for (int q = 0; q < M; ++q) g.b[std::size_t((p * M + r) * M + q)] = r == q ? 4.0 + u(rng) : off * u(rng);
  for (double& x : g.d) x = u(rng);
  return g;
}

BlockGridLines grid_lines(int M, std::array<index_t, 3> e, Axis axis) {
  return BlockGridLines{M, e[0], e[1], e[2], axis, PointArray::aos(M, e[0], e[1], e[2]),
                        PointArray::aos(index_t(M) * M, e[0], e[1], e[2])};
}

// This rank's part of a global AoS array of `values` per point.
template <class T>
std::vector<T> piece(const std::vector<double>& g, int values, const Decomposition& dec) {
  const auto lo = dec.lo();
  const auto e = dec.extents();
  const auto n = g_dims;
  std::vector<T> out(std::size_t(e[0] * e[1] * e[2] * values));
  for (index_t k = 0; k < e[2]; ++k)
    for (index_t j = 0; j < e[1]; ++j)
      for (index_t i = 0; i < e[0]; ++i)
        for (int v = 0; v < values; ++v)
          out[std::size_t(((k * e[1] + j) * e[0] + i) * values + v)] =
              T(g[std::size_t((((lo[2] + k) * n[1] + lo[1] + j) * n[0] + lo[0] + i) * values + v)]);
  return out;
}

// max |distributed - reference| / max |reference| over this rank's part (device: the
// arrays in this rank's GPU memory).
template <class T>
double block_error(const ProcessGrid& procs, const Decomposition& dec, Axis axis, int M, bool periodic,
                   ReducedStrategy strategy, bool in_place, unsigned seed, bool device = false,
                   bool device_passes = true, int subsegments = 0, Transport transport = Transport::automatic) {
  Global g = make_global(M, seed);
  g.u.assign(g.d.size(), std::numeric_limits<double>::quiet_NaN());
  BlockTridiagonalOptions ro;
  ro.kernel = BlockKernel::reference;
  ro.periodic = periodic;
  BlockTridiagonalPlan<double>(Executor::host(), grid_lines(M, g_dims, axis), ro)
      .solve(BlockBands<double>{g.a.data(), g.b.data(), g.c.data()}, g.d.data(), g.u.data());

  auto la = piece<T>(g.a, M * M, dec), lb = piece<T>(g.b, M * M, dec), lc = piece<T>(g.c, M * M, dec);
  auto ld = piece<T>(g.d, M, dec);
  const auto a0 = la, b0 = lb, c0 = lc, d0 = ld;
  std::vector<T> lu(ld.size(), std::numeric_limits<T>::quiet_NaN());
  DistributedBlockOptions o;
  o.periodic = periodic;
  o.strategy = strategy;
  o.device_passes = device_passes;
  o.device_subsegments = subsegments;
  o.transport = transport;
  const Executor exec = device ? rank_gpu() : Executor::host();
  DistributedBlockTridiagonalPlan<T> plan(procs, axis, exec, to_block_lines(grid_lines(M, dec.extents(), axis)), o);
  EXPECT_EQ(plan.split(), procs.dims(axis) > 1);
  if (plan.split() && transport != Transport::automatic) EXPECT_EQ(plan.transport(), transport);
  if (subsegments == 1) EXPECT_EQ(plan.device_subsegments(), 1);
  if (plan.split() && strategy != ReducedStrategy::automatic) EXPECT_EQ(plan.strategy(), strategy);
  T* out = in_place ? ld.data() : lu.data();
  if (device) {
    auto on = [&](const std::vector<T>& v) { return to_device(v, exec); };
    Array<T> da = on(la), db = on(lb), dc = on(lc), dd = on(ld), du = on(lu);
    plan.solve(BlockBands<T>{da.data(), db.data(), dc.data()}, dd.data(), in_place ? dd.data() : du.data());
    (in_place ? dd : du).copy_to_host(out);
    auto same = [&](const Array<T>& x, const std::vector<T>& ref, const char* what) {
      std::vector<T> back(ref.size());
      x.copy_to_host(back.data());
      EXPECT_EQ(0, std::memcmp(back.data(), ref.data(), back.size() * sizeof(T))) << what << " changed on the device";
    };
    same(da, a0, "A");
    same(db, b0, "B");
    same(dc, c0, "C");
    if (!in_place) {
      same(dd, d0, "d");
      // A second solve into NaN gives the same bits (no state left behind).
      Array<T> du2 = on(std::vector<T>(lu.size(), std::numeric_limits<T>::quiet_NaN()));
      plan.solve(BlockBands<T>{da.data(), db.data(), dc.data()}, dd.data(), du2.data());
      same(du2, lu, "second solve: u");
    }
  } else {
    plan.solve(BlockBands<T>{la.data(), lb.data(), lc.data()}, ld.data(), out);
  }
  // A second solve gives the same (no state left behind).
  if (!in_place && !device) {
    std::vector<T> again(lu.size(), std::numeric_limits<T>::quiet_NaN());
    plan.solve(BlockBands<T>{la.data(), lb.data(), lc.data()}, ld.data(), again.data());
    EXPECT_EQ(0, std::memcmp(again.data(), lu.data(), lu.size() * sizeof(T))) << "second solve differs";
    EXPECT_EQ(0, std::memcmp(ld.data(), d0.data(), ld.size() * sizeof(T))) << "d changed";
  }
  EXPECT_EQ(0, std::memcmp(la.data(), a0.data(), la.size() * sizeof(T))) << "A changed";
  EXPECT_EQ(0, std::memcmp(lb.data(), b0.data(), lb.size() * sizeof(T))) << "B changed";
  EXPECT_EQ(0, std::memcmp(lc.data(), c0.data(), lc.size() * sizeof(T))) << "C changed";
  const auto ref = piece<double>(g.u, M, dec);
  double err = 0, scale = 0;
  for (double v : g.u) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double e = std::abs(double(out[i]) - ref[i]);
    err = std::isfinite(e) ? std::max(err, e) : std::numeric_limits<double>::infinity();
  }
  return err / scale;
}

template <class T>
void sweep(double tol, std::initializer_list<int> sizes) {
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims);
    Decomposition dec(procs, kGlobal);
    for (int ax = 0; ax < 3; ++ax)
      for (int M : sizes)
        for (bool periodic : {false, true})
          for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall, ReducedStrategy::automatic})
            EXPECT_LE(block_error<T>(procs, dec, Axis(ax), M, periodic, s, M == 3, 11u + unsigned(M)), tol)
                << procs.describe() << " axis " << axis_name(Axis(ax)) << " M " << M << " " << strategy_name(s)
                << (periodic ? " periodic" : "");
  }
}

TEST(DistributedBlockTridiagonal, EveryGridAxisBlockSizeStrategyDouble) {
  sweep<double>(1e-12, {2, 3, 4, 5, 6, 7, 8});
}
TEST(DistributedBlockTridiagonal, EveryGridAxisBlockSizeStrategyFloat) { sweep<float>(1e-5, {2, 5, 8}); }

// Device memory: split axes run the device passes (reduction and back-substitution on the
// GPU, only the reduced rows staged), unsplit ones the device block kernels. M = 2..8 in
// fp64, 2, 5, 8 in fp32, each strategy, in place and not, u poisoned with NaN; odd M in
// fp64 with one thread per line, the rest with automatic sub-segments (2 per segment of
// >= 4 rows here: both levels).
TEST(DistributedBlockTridiagonal, DeviceMemory) {
  ADI_REQUIRE_CUDA("device-memory block solves");
  const ReducedStrategy strategies[3] = {ReducedStrategy::allgather, ReducedStrategy::alltoall,
                                         ReducedStrategy::automatic};
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims);
    Decomposition dec(procs, kGlobal);
    for (int ax = 0; ax < 3; ++ax)
      for (bool periodic : {false, true}) {
        for (int M = 2; M <= 8; ++M)
          EXPECT_LE(block_error<double>(procs, dec, Axis(ax), M, periodic, strategies[M % 3], M == 5, 21u + unsigned(M),
                                        true, true, M % 2 == 1 ? 1 : 0),
                    1e-12)
              << procs.describe() << " axis " << axis_name(Axis(ax)) << " M " << M << (periodic ? " periodic" : "");
        for (int M : {2, 5, 8})
          EXPECT_LE(block_error<float>(procs, dec, Axis(ax), M, periodic, strategies[(M + 1) % 3], M == 2, 22u, true),
                    1e-5)
              << procs.describe() << " axis " << axis_name(Axis(ax)) << " float M " << M
              << (periodic ? " periodic" : "");
      }
  }
}

// Device passes with sub-segments on long segments: S = 1 (one thread per line) up to
// the cap of m/2, uneven sub-segments, both levels.
TEST(DistributedBlockTridiagonal, DeviceSubsegments) {
  ADI_REQUIRE_CUDA("device sub-segments");
  g_dims = {5, 3, 61};
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, world_size()});
  Decomposition dec(procs, g_dims);
  for (int S : {1, 2, 3, 5, 7, 64})
    for (bool periodic : {false, true}) {
      EXPECT_LE(block_error<double>(procs, dec, Axis::z, 3, periodic, ReducedStrategy::alltoall, S == 3, 31u, true, true,
                                    S),
                1e-12)
          << "S " << S << (periodic ? " periodic" : "");
      EXPECT_LE(block_error<double>(procs, dec, Axis::z, 8, periodic, ReducedStrategy::allgather, false, 32u, true, true,
                                    S),
                1e-12)
          << "M 8, S " << S << (periodic ? " periodic" : "");
      EXPECT_LE(block_error<float>(procs, dec, Axis::z, 5, periodic, ReducedStrategy::automatic, false, 33u, true, true,
                                   S),
                1e-5)
          << "float M 5, S " << S << (periodic ? " periodic" : "");
    }
  g_dims = kGlobal;
}

// The NCCL transport (reduced rows exchanged and solved on the devices, nothing through the
// host) and host staging, each against the reference (so NCCL = host staging = the host
// plan to round-off): every grid, axis, both strategies, periodic and not, M = 2, 5, 8 in
// fp64 and 5 in fp32, one thread per line and sub-segments, in place and not.
void transport_sweep(Transport t) {
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims);
    Decomposition dec(procs, kGlobal);
    for (int ax = 0; ax < 3; ++ax)
      for (bool periodic : {false, true})
        for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall}) {
          for (int M : {2, 5, 8})
            EXPECT_LE(block_error<double>(procs, dec, Axis(ax), M, periodic, s, M == 5, 41u + unsigned(M), true, true,
                                          M == 2 ? 1 : 0, t),
                      1e-12)
                << transport_name(t) << " " << procs.describe() << " axis " << axis_name(Axis(ax)) << " M " << M << " "
                << strategy_name(s) << (periodic ? " periodic" : "");
          EXPECT_LE(block_error<float>(procs, dec, Axis(ax), 5, periodic, s, false, 42u, true, true, 0, t), 1e-5)
              << transport_name(t) << " " << procs.describe() << " axis " << axis_name(Axis(ax)) << " float "
              << strategy_name(s) << (periodic ? " periodic" : "");
        }
  }
}

TEST(DistributedBlockTridiagonal, DeviceNccl) {
  ADI_REQUIRE_CUDA("block NCCL transport");
  if (world_size() < 2)
    GTEST_SKIP() << "needs 2 ranks with a GPU each (this run: 1 rank): block NCCL transport NOT tested";
  const std::string why = nccl_unavailable(rank_gpu().device());
  if (!why.empty()) GTEST_SKIP() << "block NCCL transport NOT tested: " << why;
  transport_sweep(Transport::nccl);
}

TEST(DistributedBlockTridiagonal, DeviceHostStaging) {
  ADI_REQUIRE_CUDA("block host-staging transport");
  transport_sweep(Transport::host_staging);
}

// The NCCL communicator of an axis is made once, by the first plan that needs it, and its
// one-time cost is recorded on its own (nccl::creation_cost); the next plan reuses it.
TEST(DistributedBlockTridiagonal, NcclCommunicatorMadeOnceAndCosted) {
  ADI_REQUIRE_CUDA("block NCCL transport");
  if (world_size() < 2)
    GTEST_SKIP() << "needs 2 ranks with a GPU each (this run: 1 rank): NCCL creation cost NOT tested";
  const std::string why = nccl_unavailable(rank_gpu().device());
  if (!why.empty()) GTEST_SKIP() << "NCCL creation cost NOT tested: " << why;
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  Decomposition dec(procs, kGlobal);
  EXPECT_EQ(nccl::creation_cost(procs, Axis::x).communicators, 0);
  DistributedBlockOptions o;
  o.transport = Transport::nccl;
  o.device_passes = true;  // NCCL carries the device passes' reduced rows
  const BlockLineSet lines = to_block_lines(grid_lines(3, dec.extents(), Axis::x));
  DistributedBlockTridiagonalPlan<double> first(procs, Axis::x, rank_gpu(), lines, o);
  const nccl::CreationCost c1 = nccl::creation_cost(procs, Axis::x);
  EXPECT_EQ(c1.communicators, 1);
  EXPECT_GT(c1.init_seconds, 0.0);
  EXPECT_GT(c1.warm_up_seconds, 0.0);
  EXPECT_NEAR(c1.seconds(), c1.init_seconds + c1.warm_up_seconds, 1e-15);
  DistributedBlockTridiagonalPlan<float> second(procs, Axis::x, rank_gpu(), lines, o);
  const nccl::CreationCost c2 = nccl::creation_cost(procs, Axis::x);
  EXPECT_EQ(c2.communicators, 1) << "a second communicator was made for the same axis and GPU";
  EXPECT_EQ(c2.seconds(), c1.seconds());
  EXPECT_EQ(nccl::creation_cost(procs, Axis::y).communicators, 0);
  if (world_rank() == 0)
    std::printf("NCCL communicator of the axis: ncclCommInitRank %.1f ms + warm-up %.1f ms (rank 0, made once)\n",
                1e3 * c1.init_seconds, 1e3 * c1.warm_up_seconds);
}

// A transport that cannot run throws the same Unsupported on every rank.
TEST(DistributedBlockTridiagonal, UnsupportedTransports) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  Decomposition dec(procs, kGlobal);
  auto make = [&](const Executor& e, Transport t, bool device_passes) {
    DistributedBlockOptions o;
    o.transport = t;
    o.device_passes = device_passes;
    DistributedBlockTridiagonalPlan<double> plan(procs, Axis::x, e, to_block_lines(grid_lines(3, dec.extents(), Axis::x)),
                                                 o);
  };
  expect_everywhere<Unsupported>([&] { make(Executor::host(), Transport::nccl, true); }, "needs device memory");
  expect_everywhere<Unsupported>([&] { make(Executor::host(), Transport::cuda_aware_mpi, true); },
                                 "not offered for block lines");
  ADI_REQUIRE_CUDA("device block transports' refusals");
  const Executor dev = rank_gpu();
  expect_everywhere<Unsupported>([&] { make(dev, Transport::nccl, false); }, "needs DistributedBlockOptions::device_passes");
  const std::string why = nccl_unavailable(dev.device());
  if (!why.empty())
    expect_everywhere<Unsupported>([&] { make(dev, Transport::nccl, true); },
                                   nccl::built() ? "NCCL needs a GPU of its own" : "built without NCCL");
}

// Device memory through the host mirrors (device_passes = false, the fallback).
TEST(DistributedBlockTridiagonal, DeviceMemoryHostMirrors) {
  ADI_REQUIRE_CUDA("device-memory block solves");
  for (const auto& dims : factorisations(world_size())) {
    ProcessGrid procs(MPI_COMM_WORLD, dims);
    Decomposition dec(procs, kGlobal);
    for (int ax = 0; ax < 3; ++ax)
      EXPECT_LE(block_error<double>(procs, dec, Axis(ax), 4, ax == 1, ReducedStrategy::automatic, false, 23u, true,
                                    false),
                1e-12)
          << procs.describe() << " axis " << axis_name(Axis(ax));
  }
}

// Weighted split: the slower rank owns fewer block rows (2 of them at the extreme).
TEST(DistributedBlockTridiagonal, WeightedRanks) {
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  // Rank 0 weighs less (9 rows: 3 of 9 on 2 ranks, 2 on 3 and 4 ranks).
  Decomposition dec(procs, kGlobal, world_rank() == 0 ? (world_size() == 4 ? 0.9 : 0.5) : 1.0);
  if (world_size() > 1 && world_rank() == 0) EXPECT_LT(dec.extent(Axis::x), kGlobal[0] / world_size() + 1);
  EXPECT_LE(block_error<double>(procs, dec, Axis::x, 4, false, ReducedStrategy::automatic, false, 3u), 1e-12);
  EXPECT_LE(block_error<double>(procs, dec, Axis::x, 4, true, ReducedStrategy::alltoall, false, 4u), 1e-12);
}

// A singular pivot block on one rank: SingularSystem on every rank, nobody hangs (host
// memory, and device memory through the device passes and through the host mirrors).
void singular_block_on_one_rank(bool device, bool device_passes = false, Transport t = Transport::automatic) {
  for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall}) {
    ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
    Decomposition dec(procs, kGlobal);
    const int M = 3;
    Global g = make_global(M, 9u);
    auto la = piece<double>(g.a, M * M, dec), lb = piece<double>(g.b, M * M, dec), lc = piece<double>(g.c, M * M, dec);
    auto ld = piece<double>(g.d, M, dec);
    if (world_rank() == world_size() - 1)  // an interior block row of the last rank: all zero
      std::fill(lb.begin() + M * M, lb.begin() + 2 * M * M, 0.0), std::fill(la.begin() + M * M, la.begin() + 2 * M * M, 0.0),
          std::fill(lc.begin() + M * M, lc.begin() + 2 * M * M, 0.0);
    DistributedBlockOptions o;
    o.strategy = s;
    o.device_passes = device_passes;
    o.transport = t;
    const Executor exec = device ? rank_gpu() : Executor::host();
    DistributedBlockTridiagonalPlan<double> plan(procs, Axis::x, exec,
                                                 to_block_lines(grid_lines(M, dec.extents(), Axis::x)), o);
    std::vector<double> lu(ld.size());
    if (device) {
      auto on = [&](const std::vector<double>& v) { return to_device(v, exec); };
      Array<double> da = on(la), db = on(lb), dc = on(lc), dd = on(ld), du = on(lu);
      try {
        plan.solve(BlockBands<double>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
        ADD_FAILURE() << "no SingularSystem, device, " << strategy_name(s)
                      << (device_passes ? ", device passes, " : ", host mirrors, ") << transport_name(plan.transport());
      } catch (const SingularSystem& e) {
        EXPECT_EQ(e.system(), 0) << strategy_name(s) << ", " << transport_name(plan.transport()) << ": " << e.what();
      }
    } else {
      try {
        plan.solve(BlockBands<double>{la.data(), lb.data(), lc.data()}, ld.data(), lu.data());
        ADD_FAILURE() << "no SingularSystem, " << strategy_name(s);
      } catch (const SingularSystem& e) {
        EXPECT_EQ(e.system(), 0) << strategy_name(s) << ": " << e.what();  // the line (point 1 of line 0)
      }
    }
    EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  }
}

TEST(DistributedBlockTridiagonal, SingularBlockOnOneRankThrowsOnEveryRank) { singular_block_on_one_rank(false); }

TEST(DistributedBlockTridiagonal, SingularBlockOnOneGpuThrowsOnEveryRank) {
  ADI_REQUIRE_CUDA("device singular block");
  singular_block_on_one_rank(true, true);  // NCCL where it can run (one GPU per rank), else host staging
  singular_block_on_one_rank(true, true, Transport::host_staging);
  singular_block_on_one_rank(true, false);
}

// A singular periodic system (the block-circulant Laplacian A = C = -K, B = 2K per row, K
// symmetric positive definite) is reported like the single-device plans report it
// (BlockTridiagonalBadInput.SingularBlockCirculantIsReported): SingularBlock on every rank,
// the same system; with B = 2.5K (regular) the solve is finite and right. Lines along x
// split over every rank, both strategies, M = 2, 3, 5, both precisions.
template <class T>
void singular_block_circulant(const Executor& exec, Transport t) {
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});  // one grid: its NCCL communicator made once
  for (index_t nx : {8, 17, 64, 257})
    for (int M : {2, 3, 5, 8})
      for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall})
        for (double diag : {2.0, 2.5}) {
          g_dims = {nx, 3, 1};
          Decomposition dec(procs, g_dims);
          Global g = make_global(M, 5u);
          for (index_t p = 0; p < nx * 3; ++p) {
            const index_t sys = p / nx;  // lines along x: one per y
            for (int r = 0; r < M; ++r)
              for (int q = 0; q < M; ++q) {
                const double k = (r == q ? 1.0 : 0.0) + 0.2 / (1.0 + std::abs(r - q)) * double(sys + 1);
                const std::size_t i = std::size_t((p * M + r) * M + q);
                g.a[i] = -k;
                g.c[i] = -k;
                g.b[i] = diag * k;
              }
          }
          auto la = piece<T>(g.a, M * M, dec), lb = piece<T>(g.b, M * M, dec), lc = piece<T>(g.c, M * M, dec);
          auto ld = piece<T>(g.d, M, dec);
          std::vector<T> lu(ld.size(), std::numeric_limits<T>::quiet_NaN());
          DistributedBlockOptions o;
          o.periodic = true;
          o.strategy = s;
          o.device_passes = true;
          o.transport = t;
          DistributedBlockTridiagonalPlan<T> plan(procs, Axis::x, exec,
                                                  to_block_lines(grid_lines(M, dec.extents(), Axis::x)), o);
          const std::string what = std::string(exec.name()) + " " + transport_name(plan.transport()) + " nx " +
                                   std::to_string(nx) + " M " + std::to_string(M) + " " + strategy_name(s) +
                                   (sizeof(T) == 4 ? " float" : " double");
          std::string caught;
          long long sys = -1;
          try {
            if (exec.is_host()) {
              plan.solve(BlockBands<T>{la.data(), lb.data(), lc.data()}, ld.data(), lu.data());
            } else {
              auto on = [&](const std::vector<T>& v) { return to_device(v, exec); };
              Array<T> da = on(la), db = on(lb), dc = on(lc), dd = on(ld), du = on(lu);
              plan.solve(BlockBands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
              du.copy_to_host(lu.data());
            }
          } catch (const SingularBlock& e) {
            caught = e.what();
            sys = e.system();
          }
          if (diag == 2.0) {
            EXPECT_FALSE(caught.empty()) << "singular block-circulant system not reported: " << what;
            EXPECT_EQ(sys, 0) << what << ": " << caught;  // system 0 is the first singular one
          } else {
            EXPECT_TRUE(caught.empty()) << what << ": " << caught;
            for (std::size_t i = 0; i < lu.size(); ++i)
              ASSERT_TRUE(std::isfinite(double(lu[i]))) << what << " u[" << i << "]";
          }
          // Every rank agrees.
          long long mine[2] = {sys, caught.empty() ? 0 : 1}, lo[2], hi[2];
          MPI_Allreduce(mine, lo, 2, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
          MPI_Allreduce(mine, hi, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
          EXPECT_TRUE(lo[0] == hi[0] && lo[1] == hi[1]) << "ranks disagree: " << what;
        }
  g_dims = kGlobal;
}

TEST(DistributedBlockTridiagonal, SingularBlockCirculantIsReported) {
  singular_block_circulant<double>(Executor::host(), Transport::automatic);
  singular_block_circulant<float>(Executor::host(), Transport::automatic);
}

TEST(DistributedBlockTridiagonal, SingularBlockCirculantIsReportedOnGpus) {
  ADI_REQUIRE_CUDA("device singular block-circulant check");
  for (Transport t : {Transport::automatic, Transport::host_staging}) {  // automatic: NCCL where it can run
    singular_block_circulant<double>(rank_gpu(), t);
    singular_block_circulant<float>(rank_gpu(), t);
  }
}

// Bad input: every rank throws, with the same kind of error, and all stay in step.
TEST(DistributedBlockTridiagonal, BadInputOnEveryRank) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs 2 ranks";
  ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
  auto lines = [](int M, index_t n) { return to_block_lines(BlockContiguous{M, n, 6}); };
  // One block row on one rank.
  EXPECT_THROW(DistributedBlockTridiagonalPlan<double>(procs, Axis::x, Executor::host(),
                                                       lines(3, world_rank() == 1 ? 1 : 4)),
               InvalidArgument);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  // Mismatched block sizes.
  EXPECT_THROW(
      DistributedBlockTridiagonalPlan<double>(procs, Axis::x, Executor::host(), lines(world_rank() == 0 ? 2 : 3, 4)),
      InvalidArgument);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  // pcr is not offered for blocks.
  DistributedBlockOptions o;
  o.strategy = ReducedStrategy::pcr;
  EXPECT_THROW(DistributedBlockTridiagonalPlan<double>(procs, Axis::x, Executor::host(), lines(3, 4), o), Unsupported);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  // Column-major blocks are refused, not misread.
  BlockContiguous cm{3, 4, 6};
  cm.order = BlockOrder::column_major;
  EXPECT_THROW(DistributedBlockTridiagonalPlan<double>(procs, Axis::x, Executor::host(), to_block_lines(cm)),
               Unsupported);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  // pivot_tolerance: validated as in every family (adi/base/pivot.hpp), on every rank.
  for (double bad : {-0.5, 1.0, std::numeric_limits<double>::quiet_NaN()}) {
    DistributedBlockOptions t;
    t.pivot_tolerance = bad;
    try {
      DistributedBlockTridiagonalPlan<double>(procs, Axis::x, Executor::host(), lines(3, 4), t);
      ADD_FAILURE() << "pivot_tolerance = " << bad << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("DistributedBlockOptions: pivot_tolerance"), std::string::npos) << e.what();
    }
    EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  }
}

}  // namespace
