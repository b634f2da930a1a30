// The partition method against the single-rank solve of the same global problem:
// every process-grid factorisation of the world (4x1x1, 1x4x1, 1x1x4, 2x2x1, ... at 4
// ranks; 3x1x1 with uneven extents at 3), every axis, every reduced-system strategy,
// periodic and not, per-element and shared bands, double and float, padded strides.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "gpu_skip.hpp"
#include "adi/detail/tridiagonal_stage.hpp"
#include "adi/field.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/common/partition_core.hpp"
#include "solvers/common/spike_y.hpp"
#include "solvers/common/partition_reduced.hpp"
#include "solvers/common/stage_rhs_core.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/partition_local_passes.hpp"
#include "mpi_test_util.hpp"
#include "scoped_env.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

// Odd extents: splits over 2, 3 and 4 ranks are uneven.
constexpr std::array<index_t, 3> kGlobal{13, 11, 9};

template <class T>
double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

// The executor of this rank: host, or the GPU of its node-local rank.
Executor rank_executor(bool device) {
  return device ? rank_gpu() : Executor::host();
}

// The per-line SPIKE form's cases (DistributedOptions::spike_lines, stop 35): the global extents,
// the form on (-1: the options' defaults), its window, the first `weak_rows` rows along the axis
// of every line weakly dominant (a = c = -1, b = 2.2: spikes decaying by ~0.64 a row); out: the
// form the solve ran on this rank and its fall-backs.
struct SpikeCase {
  std::array<index_t, 3> n = kGlobal;
  int lines = -1;
  int window = 128;
  index_t weak_rows = 0;
  int compact = -1;  // >= 0: the shared-band SPIKE form on (host plans too), its compact tail on (1) or off (0)
  // >= 0: DistributedOptions::spike_prepare_pcr; device shared bands: first a solve with other
  // bands (b x 1.25), then the measured solve and a second one with the same bands (the spikes
  // recomputed when the bands change, kept when they do not)
  int pcr = -1;
  int batched = -1;  // >= 0: DistributedOptions::spike_back_batched
  int spread = -1;   // >= 0: DistributedOptions::spike_back_spread
  int coarse = -1;   // >= 0: DistributedOptions::spike_reach_coarse
  int half = -1;     // >= 0: DistributedOptions::spike_half_exchange
  int ystream = -1;  // >= 0: DistributedOptions::spike_y_stream
  int side = -1;     // >= 0: DistributedOptions::spike_windows_side
  index_t rows = -1;  // >= 0: DistributedOptions::spike_lines_rows (lines 0 sets 0: the partition passes)
  index_t weak_from = 0;  // the weak rows are [weak_from, weak_rows)
  std::string form;
  long long fallbacks = 0;
  double bytes = 0;  // the first solve's exchanged_bytes() on this rank
};

// The global problem along `axis` (diagonally dominant, random), its single-rank fp64
// solution (reference kernel), and the distributed solve of this rank's box.
template <class T>
double distributed_error(const ProcessGrid& procs, const Decomposition& dec, Axis axis, ReducedStrategy strategy,
                         bool periodic, bool shared, unsigned seed, bool device = false, int subsegments = 0,
                         Transport transport = Transport::automatic,
                         ReducedSolveSite site = ReducedSolveSite::automatic, SpikeCase* sc = nullptr) {
  const auto n = sc ? sc->n : kGlobal;
  const index_t na = n[int(axis)];
  auto a = random_global<double>(n, seed, -1.0, 1.0);
  auto b = random_global<double>(n, seed + 1, 3.0, 4.0);
  auto c = random_global<double>(n, seed + 2, -1.0, 1.0);
  auto d = random_global<double>(n, seed + 3, -1.0, 1.0);
  if (sc && sc->weak_rows > 0)
    for (index_t k = 0; k < n[2]; ++k)
      for (index_t j = 0; j < n[1]; ++j)
        for (index_t i = 0; i < n[0]; ++i) {
          const index_t idx = i + j * n[0] + k * n[0] * n[1];
          const index_t row = axis == Axis::x ? i : axis == Axis::y ? j : k;
          if (row >= sc->weak_from && row < sc->weak_rows)
            a[std::size_t(idx)] = c[std::size_t(idx)] = -1.0, b[std::size_t(idx)] = 2.2;
        }
  // Shared bands: one coefficient per row along the axis, the same for every line.
  const std::vector<double> ra(a.begin(), a.begin() + na), rb(b.begin(), b.begin() + na),
      rc(c.begin(), c.begin() + na);
  if (shared) {
    for (index_t k = 0; k < n[2]; ++k)
      for (index_t j = 0; j < n[1]; ++j)
        for (index_t i = 0; i < n[0]; ++i) {
          const index_t idx = i + j * n[0] + k * n[0] * n[1];
          const index_t row = axis == Axis::x ? i : axis == Axis::y ? j : k;
          a[std::size_t(idx)] = ra[std::size_t(row)];
          b[std::size_t(idx)] = rb[std::size_t(row)];
          c[std::size_t(idx)] = rc[std::size_t(row)];
        }
  }
  // The values in T, then the fp64 reference of exactly those values.
  std::vector<T> aT(a.begin(), a.end()), bT(b.begin(), b.end()), cT(c.begin(), c.end()), dT(d.begin(), d.end());
  std::vector<double> ref(d.size());
  {
    std::vector<double> a2(aT.begin(), aT.end()), b2(bT.begin(), bT.end()), c2(cT.begin(), cT.end()),
        d2(dT.begin(), dT.end());
    TridiagonalPlan<double> plan(Executor::host(), BoxLines{Box3::dense(n[0], n[1], n[2]), axis},
                                 TridiagonalOptions{periodic, Kernel::reference});
    plan.solve(Bands<double>{a2.data(), b2.data(), c2.data()}, d2.data(), ref.data());
  }
  const Box3 box = padded_box(dec.extents());
  const auto lo = dec.lo();
  auto la = extract(aT, n, lo, box), lb = extract(bT, n, lo, box), lc = extract(cT, n, lo, box),
       ld = extract(dT, n, lo, box);
  std::vector<T> lu(ld.size(), std::numeric_limits<T>::quiet_NaN());
  const std::vector<T> a0 = la, b0 = lb, c0 = lc, d0 = ld;

  const Executor exec = rank_executor(device);
  DistributedOptions opts{periodic, strategy};
  opts.device_subsegments = subsegments;
  opts.transport = transport;
  opts.reduced_solve = site;
  opts.timing_barrier = (seed & 1) != 0;  // the benchmarks' barrier changes nothing but timing
  if (sc && sc->lines >= 0) {
    opts.spike_lines = sc->lines != 0;
    opts.host_spike = sc->lines != 0;
    opts.spike_window = sc->window;
    if (sc->lines == 0) opts.spike_lines_rows = 0;  // (device plans would take it by length)
  }
  if (sc && sc->rows >= 0) opts.spike_lines_rows = sc->rows;
  if (sc && sc->compact >= 0) {
    opts.device_spike = opts.host_spike = true;
    opts.spike_compact = sc->compact != 0;
  }
  if (sc && sc->pcr >= 0) opts.spike_prepare_pcr = sc->pcr != 0;
  if (sc && sc->batched >= 0) opts.spike_back_batched = sc->batched != 0;
  if (sc && sc->spread >= 0) opts.spike_back_spread = sc->spread != 0;
  if (sc && sc->coarse >= 0) opts.spike_reach_coarse = sc->coarse != 0;
  if (sc && sc->half >= 0) opts.spike_half_exchange = sc->half != 0;
  if (sc && sc->ystream >= 0) opts.spike_y_stream = sc->ystream;
  if (sc && sc->side >= 0) opts.spike_windows_side = sc->side != 0;
  DistributedTridiagonalPlan<T> plan(procs, axis, exec, box, opts);
  struct Report {  // the form of the first solve, for the caller
    SpikeCase* sc;
    const DistributedTridiagonalPlan<T>& plan;
    bool done = false;
    void operator()() {
      if (sc && !done) sc->form = plan.last_form(), sc->fallbacks = plan.spike_fallbacks(), sc->bytes = plan.exchanged_bytes();
      done = true;
    }
  } report{sc, plan};
  if (device && plan.split() && transport != Transport::automatic) EXPECT_EQ(plan.transport(), transport);
  if (device && plan.split() && site != ReducedSolveSite::automatic)
    EXPECT_EQ(plan.reduced_solve_on_device(), site == ReducedSolveSite::device);
  if (device && plan.split() && subsegments > 0)
    EXPECT_EQ(plan.device_subsegments(), std::max<index_t>(1, std::min<index_t>(subsegments, box.extent(axis) / 2)));
  EXPECT_EQ(plan.split(), procs.dims(axis) > 1);
  if (plan.split() && strategy != ReducedStrategy::automatic) EXPECT_EQ(plan.strategy(), strategy);
  if (shared) {
    SpikeCase* const spike = sc;  // (sc: the c band below)
    // This rank's rows of the shared arrays.
    std::vector<T> sa(std::size_t(box.extent(axis))), sb(sa.size()), sc(sa.size());
    const index_t l0 = dec.lo(axis);
    for (std::size_t i = 0; i < sa.size(); ++i) {
      sa[i] = T(ra[l0 + i]);
      sb[i] = T(rb[l0 + i]);
      sc[i] = T(rc[l0 + i]);
    }
    if (device) {
      auto on = [&](const std::vector<T>& v) { return to_device(v, exec); };
      Array<T> da = on(sa), db = on(sb), dc = on(sc), dd = on(ld), du = on(lu);
      const bool changes = spike && spike->pcr >= 0;
      if (changes) {  // other bands first: the spikes must follow the change
        std::vector<T> other = sb;
        for (T& v : other) v *= T(1.25);
        Array<T> dother = on(other);
        plan.solve(SharedBands<T>{da.data(), dother.data(), dc.data()}, dd.data(), du.data());
      }
      plan.solve(SharedBands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
      du.copy_to_host(lu.data());
      if (changes) {  // the same bands again (the kept spikes), into a poisoned u
        const double first = rel_error(lu, box, ref, n, lo);
        std::vector<T> again(lu.size(), std::numeric_limits<T>::quiet_NaN());
        Array<T> dagain = on(again);
        plan.solve(SharedBands<T>{da.data(), db.data(), dc.data()}, dd.data(), dagain.data());
        dagain.copy_to_host(again.data());
        report();
        return std::max(first, rel_error(again, box, ref, n, lo));
      }
    } else {
      plan.solve(SharedBands<T>{sa.data(), sb.data(), sc.data()}, ld.data(), lu.data());
    }
  } else if (device) {
    auto on = [&](const std::vector<T>& v) { return to_device(v, exec); };
    Array<T> da = on(la), db = on(lb), dc = on(lc), dd = on(ld), du = on(lu);
    plan.solve(Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
    report();
    du.copy_to_host(lu.data());
    std::vector<T> back(ld.size());
    dd.copy_to_host(back.data());
    EXPECT_EQ(0, std::memcmp(back.data(), d0.data(), back.size() * sizeof(T))) << "d changed on the device";
    const double err = rel_error(lu, box, ref, n, lo);
    if (!sc) return err;
    plan.solve(Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), dd.data());  // in place (u == d)
    dd.copy_to_host(back.data());
    return std::max(err, rel_error(back, box, ref, n, lo));
  } else {
    plan.solve(Bands<T>{la.data(), lb.data(), lc.data()}, ld.data(), lu.data());
  }
  report();
  if (device) return rel_error(lu, box, ref, n, lo);
  // Inputs intact (NaN padding compares unequal to itself: compare bytes).
  EXPECT_EQ(0, std::memcmp(la.data(), a0.data(), la.size() * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(lb.data(), b0.data(), lb.size() * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(lc.data(), c0.data(), lc.size() * sizeof(T)));
  EXPECT_EQ(0, std::memcmp(ld.data(), d0.data(), ld.size() * sizeof(T)));
  double err = rel_error(lu, box, ref, n, lo);
  // In place too (u == d).
  plan.solve(Bands<T>{la.data(), lb.data(), lc.data()}, ld.data(), ld.data());
  if (!shared) err = std::max(err, rel_error(ld, box, ref, n, lo));
  return err;
}

template <class T>
void sweep(const std::vector<ReducedStrategy>& strategies) {
  for (const auto& dims : factorisations(world_size()))
    for (bool periodic : {false, true}) {
      ProcessGrid procs(MPI_COMM_WORLD, dims, {periodic, periodic, periodic});
      Decomposition dec(procs, kGlobal);
      for (int ax = 0; ax < 3; ++ax)
        for (ReducedStrategy s : strategies)
          for (bool shared : {false, true}) {
            // PCR on cyclic lines needs a power-of-two rank count along the axis.
            const int p = dims[ax];
            if (periodic && s == ReducedStrategy::pcr && (p & (p - 1)) != 0) continue;
            const double err =
                distributed_error<T>(procs, dec, Axis(ax), s, periodic, shared, 100u + unsigned(ax) * 7);
            EXPECT_LE(err, tolerance<T>())
                << "procs " << procs.describe() << " axis " << axis_name(Axis(ax)) << " strategy "
                << strategy_name(s) << (periodic ? " periodic" : "") << (shared ? " shared bands" : "");
          }
    }
}

const std::vector<ReducedStrategy> kAll{ReducedStrategy::allgather, ReducedStrategy::alltoall, ReducedStrategy::pcr,
                                        ReducedStrategy::automatic};

TEST(DistributedTridiagonal, EveryGridAxisStrategyDouble) { sweep<double>(kAll); }
TEST(DistributedTridiagonal, EveryGridAxisStrategyFloat) { sweep<float>(kAll); }

// Weighted decomposition: rank 0 weighs 3, the others 1 (uneven boxes on purpose).
TEST(DistributedTridiagonal, WeightedRanks) {
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  Decomposition dec(procs, kGlobal, world_rank() == 0 ? 3.0 : 1.0);
  if (world_size() > 1) {
    EXPECT_GT(dec.extent_of(Axis::x, 0), dec.extent_of(Axis::x, 1));
  }
  index_t total = 0;
  for (int c = 0; c < procs.dims(Axis::x); ++c) total += dec.extent_of(Axis::x, c);
  EXPECT_EQ(total, kGlobal[0]);
  for (ReducedStrategy s : kAll)
    EXPECT_LE(distributed_error<double>(procs, dec, Axis::x, s, false, false, 7), 1e-12) << strategy_name(s);
}

// Segments of exactly 2 rows (no interior) and of 3 rows.
TEST(DistributedTridiagonal, ShortSegments) {
  const int p = world_size();
  for (index_t rows : {2, 3}) {
    ProcessGrid procs(MPI_COMM_WORLD, {1, 1, p});
    const std::array<index_t, 3> n{5, 3, rows * p};
    Decomposition dec(procs, n);
    auto a = random_global<double>(n, 1, -1, 1), b = random_global<double>(n, 2, 3, 4),
         c = random_global<double>(n, 3, -1, 1), d = random_global<double>(n, 4, -1, 1);
    std::vector<double> ref(d.size());
    solve_tridiagonal(Executor::host(), BoxLines{Box3::dense(n[0], n[1], n[2]), Axis::z},
                      Bands<double>{a.data(), b.data(), c.data()}, d.data(), ref.data(),
                      TridiagonalOptions{false, Kernel::reference});
    const Box3 box = padded_box(dec.extents());
    auto la = extract(a, n, dec.lo(), box), lb = extract(b, n, dec.lo(), box), lc = extract(c, n, dec.lo(), box),
         ld = extract(d, n, dec.lo(), box);
    for (ReducedStrategy s : kAll)
      for (bool spike : {false, true}) {  // the partition passes; the per-line SPIKE form (host_spike)
        std::vector<double> lu(ld.size(), std::numeric_limits<double>::quiet_NaN());
        DistributedOptions o{false, s};
        o.host_spike = o.spike_lines = spike;
        DistributedTridiagonalPlan<double> plan(procs, Axis::z, Executor::host(), box, o);
        plan.solve(Bands<double>{la.data(), lb.data(), lc.data()}, ld.data(), lu.data());
        EXPECT_LE(rel_error(lu, box, ref, n, dec.lo()), 1e-12)
            << rows << " rows, " << strategy_name(s) << (spike ? ", SPIKE" : "");
        if (p > 1 && !std::getenv("ADI_SPIKE_LINES"))  // (the variable overrides the option)
          EXPECT_STREQ(plan.last_form(), spike ? "spike" : "partition");
      }
  }
}

// Device memory: the local passes on the GPU, the reduced rows through the host.
TEST(DistributedTridiagonal, DeviceMemory) {
  ADI_REQUIRE_CUDA("device-memory distributed solves");
  for (const auto& dims : factorisations(world_size()))
    for (bool periodic : {false, true}) {
      ProcessGrid procs(MPI_COMM_WORLD, dims);
      Decomposition dec(procs, kGlobal);
      for (int ax = 0; ax < 3; ++ax)
        for (ReducedStrategy s : kAll)
          for (bool shared : {false, true})
            for (int sub : {1, 3, 0}) {  // one thread per line, 3 sub-segments (two levels), automatic
              const int p = dims[ax];
              if (periodic && s == ReducedStrategy::pcr && (p & (p - 1)) != 0) continue;
              EXPECT_LE(distributed_error<double>(procs, dec, Axis(ax), s, periodic, shared, 5u, true, sub), 1e-12)
                  << procs.describe() << " axis " << axis_name(Axis(ax)) << " " << strategy_name(s)
                  << (periodic ? " periodic" : "") << (shared ? " shared" : "") << " sub-segments " << sub;
              EXPECT_LE(distributed_error<float>(procs, dec, Axis(ax), s, periodic, shared, 6u, true, sub), 1e-5)
                  << procs.describe() << " float, sub-segments " << sub;
            }
    }
}

// The GPU every rank of the world runs on (as rank_executor picks it).
int rank_device() { return rank_executor(true).device(); }

// Whether NCCL can run here (mpi_test_util.hpp), on the GPU rank_executor picks.
std::string nccl_unavailable() { return adi::mpi::testing::nccl_unavailable(rank_device()); }

// Device plans through every transport that can work on this machine, against the
// single-rank fp64 reference: allgather / alltoall (and pcr through host staging),
// periodic and not, full and shared bands, odd extents (uneven splits), fp64 and fp32,
// outputs poisoned with NaN.
void transport_sweep(Transport t, const std::vector<ReducedSolveSite>& sites) {
  for (const auto& dims : factorisations(world_size()))
    for (bool periodic : {false, true}) {
      ProcessGrid procs(MPI_COMM_WORLD, dims);
      Decomposition dec(procs, kGlobal);
      for (int ax = 0; ax < 3; ++ax)
        for (ReducedStrategy s : kAll)
          for (ReducedSolveSite site : sites)
            for (bool shared : {false, true}) {
              const int p = dims[ax];
              const bool device_rows = t != Transport::host_staging || site == ReducedSolveSite::device;
              if (s == ReducedStrategy::pcr && (device_rows || (periodic && (p & (p - 1)) != 0))) continue;
              const std::string what = procs.describe() + " axis " + axis_name(Axis(ax)) + " " + strategy_name(s) +
                                       " " + transport_name(t) + " site " + std::to_string(int(site)) +
                                       (periodic ? " periodic" : "") + (shared ? " shared" : "");
              EXPECT_LE(distributed_error<double>(procs, dec, Axis(ax), s, periodic, shared, 11u, true, 0, t, site),
                        1e-12)
                  << what;
              if (!shared)  // fp32 once per case (the shared-band path is the same code in fp64)
                EXPECT_LE(distributed_error<float>(procs, dec, Axis(ax), s, periodic, shared, 12u, true, 3, t, site),
                          1e-5)
                    << what << " float";
            }
    }
}

// (Transport::automatic with the automatic site is DeviceMemory above.)
TEST(DistributedTridiagonal, DeviceHostStaging) {
  ADI_REQUIRE_CUDA("host-staging transport");
  transport_sweep(Transport::host_staging, {ReducedSolveSite::host, ReducedSolveSite::device});
}

TEST(DistributedTridiagonal, DeviceCudaAwareMpi) {
  ADI_REQUIRE_CUDA("CUDA-aware MPI transport");
  int aware = cuda_aware() ? 1 : 0, all = 0;
  MPI_Allreduce(&aware, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) GTEST_SKIP() << "this MPI is not CUDA-aware (" << cuda_aware_report() << "): cuda_aware_mpi NOT tested";
  transport_sweep(Transport::cuda_aware_mpi, {ReducedSolveSite::automatic});
}

TEST(DistributedTridiagonal, DeviceNccl) {
  ADI_REQUIRE_CUDA("NCCL transport");
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks with a GPU each: NCCL transport NOT tested";
  const std::string why = nccl_unavailable();
  if (!why.empty()) GTEST_SKIP() << "NCCL transport NOT tested: " << why;
  transport_sweep(Transport::nccl, {ReducedSolveSite::automatic});
}

// An explicit transport that cannot work throws the same Unsupported on every rank.
TEST(DistributedTridiagonal, UnsupportedTransports) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, world_size()});
  Decomposition dec(procs, kGlobal);
  const Box3 box = dec.local_box();
  auto make = [&](const Executor& e, Transport t, ReducedStrategy s = ReducedStrategy::allgather,
                  ReducedSolveSite site = ReducedSolveSite::automatic) {
    DistributedOptions o{false, s};
    o.transport = t;
    o.reduced_solve = site;
    DistributedTridiagonalPlan<double> plan(procs, Axis::z, e, box, o);
  };
  // Host memory: only plain MPI.
  expect_everywhere<Unsupported>([&] { make(Executor::host(), Transport::nccl); }, "needs device memory");
  expect_everywhere<Unsupported>([&] { make(Executor::host(), Transport::cuda_aware_mpi); }, "needs device memory");
  ADI_REQUIRE_CUDA("device transports' refusals");
  const Executor dev = rank_executor(true);
  const std::string why = nccl_unavailable();
  if (!why.empty())
    expect_everywhere<Unsupported>([&] { make(dev, Transport::nccl); },
                                        nccl::built() ? "NCCL needs a GPU of its own" : "built without NCCL");
  int aware = cuda_aware() ? 1 : 0, all = 0;
  MPI_Allreduce(&aware, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all)
    expect_everywhere<Unsupported>([&] { make(dev, Transport::cuda_aware_mpi); }, "does not take device pointers");
  if (why.empty() || all)  // a device transport exists: pcr and the host solve cannot use it
    expect_everywhere<Unsupported>(
        [&] { make(dev, why.empty() ? Transport::nccl : Transport::cuda_aware_mpi, ReducedStrategy::pcr); },
        "strategy pcr");
  expect_everywhere<Unsupported>(
      [&] { make(dev, Transport::host_staging, ReducedStrategy::pcr, ReducedSolveSite::device); },
      "does not apply to strategy pcr");
  // What automatic picks here, for the log.
  DistributedOptions o;
  DistributedTridiagonalPlan<double> plan(procs, Axis::z, dev, box, o);
  if (world_rank() == 0)
    std::printf("[ info ] automatic transport here: %s (%s; MPI %s; NCCL %s)\n", transport_name(plan.transport()),
                why.empty() ? "every rank has its own GPU" : why.c_str(), all ? "CUDA-aware" : "not CUDA-aware",
                nccl::version().c_str());
}

// A zero pivot on one rank of a device plan: SingularSystem on every rank, whatever the
// transport (the NaN-poisoned reduced rows reach every rank's back-substitution flag).
TEST(DistributedTridiagonal, DeviceZeroPivotEveryTransport) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("device zero-pivot");
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, p});
  const std::array<index_t, 3> n{5, 4, 6 * p};
  Decomposition dec(procs, n);
  const Box3 box = Box3::dense(n[0], n[1], 6);
  const Executor dev = rank_executor(true);
  std::vector<double> a(std::size_t(box.size()), -1.0), b(a.size(), 4.0), c(a.size(), -1.0), d(a.size(), 1.0);
  if (world_rank() == p - 1) a[2 * 20] = b[2 * 20] = c[2 * 20] = 0.0;  // row 2 of line 0 on the last rank
  auto on = [&](const std::vector<double>& v) { return to_device(v, dev); };
  Array<double> da = on(a), db = on(b), dc = on(c), dd = on(d), du = on(d);
  std::vector<Transport> ts{Transport::host_staging, Transport::automatic};
  if (nccl_unavailable().empty()) ts.push_back(Transport::nccl);
  for (Transport t : ts)
    for (ReducedStrategy s : {ReducedStrategy::allgather, ReducedStrategy::alltoall})
      for (ReducedSolveSite site : {ReducedSolveSite::host, ReducedSolveSite::device}) {
        if (t != Transport::host_staging && site == ReducedSolveSite::host) continue;
        DistributedOptions o{false, s};
        o.transport = t;
        o.reduced_solve = site;
        o.device_subsegments = site == ReducedSolveSite::host ? 1 : 2;
        DistributedTridiagonalPlan<double> plan(procs, Axis::z, dev, box, o);
        expect_everywhere<SingularSystem>(
            [&] { plan.solve(Bands<double>{da.data(), db.data(), dc.data()}, dd.data(), du.data()); }, "pivot");
      }
}

// Deferred ends (DistributedTridiagonalPlan::defer_settle, stop 39 h-splitwait; the Operator's
// ADI_SPLIT_DEFER inside a step): a device solve returns once queued, settle() ends it. The same
// values as a solve that waits (shared bands, the SPIKE form with the compact tail, and per-line
// bands, the partition passes), unsettled() true until settle(); a zero pivot on the last rank:
// no throw from the solve, SingularSystem from settle() on every rank, and from the plan's next
// solve where settle() was not called (it settles the failed one first). And bands_key (below).
TEST(DistributedTridiagonal, DeviceDeferredSettle) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("deferred device solves");
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, p});
  const index_t m = 40;
  const std::array<index_t, 3> n{33, 4, m * p};
  Decomposition dec(procs, n);
  const Box3 box = Box3::dense(n[0], n[1], m);
  const Executor dev = rank_executor(true);
  std::mt19937 gen(77u + unsigned(world_rank()));
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::vector<double> d(std::size_t(box.size()));
  for (double& v : d) v = U(gen);
  std::vector<double> sa(std::size_t(m), -1.0), sb(std::size_t(m), 3.0), sc(std::size_t(m), -1.0);
  std::vector<double> a(d.size(), -1.0), b(d.size(), 4.0), c(d.size(), -1.0);
  auto on = [&](const std::vector<double>& v) { return to_device(v, dev); };
  auto back = [&](const Array<double>& x) {
    std::vector<double> h(std::size_t(x.size()));
    x.copy_to_host(h.data());
    return h;
  };
  Array<double> dsa = on(sa), dsb = on(sb), dsc = on(sc), da = on(a), db = on(b), dc = on(c), dd = on(d);
  for (int shared : {1, 0}) {
    DistributedTridiagonalPlan<double> plan(procs, Axis::z, dev, box);
    auto solve = [&](Array<double>& u) {
      if (shared)
        plan.solve(SharedBands<double>{dsa.data(), dsb.data(), dsc.data()}, dd.data(), u.data());
      else
        plan.solve(Bands<double>{da.data(), db.data(), dc.data()}, dd.data(), u.data());
    };
    const std::vector<double> poison(d.size(), std::numeric_limits<double>::quiet_NaN());
    Array<double> u0 = on(poison), u1 = on(poison), u2 = on(poison);
    solve(u0);  // waits (the default)
    const double x0 = plan.last_exchange_seconds();
    plan.defer_settle(true);
    solve(u1);
    EXPECT_TRUE(plan.unsettled()) << "shared " << shared;
    plan.settle();
    EXPECT_FALSE(plan.unsettled());
    solve(u2);  // left unsettled: the next solve (after defer off) settles it first
    plan.defer_settle(false);
    solve(u1);
    EXPECT_FALSE(plan.unsettled());
    const std::vector<double> h0 = back(u0), h1 = back(u1), h2 = back(u2);
    EXPECT_EQ(std::memcmp(h0.data(), h1.data(), h0.size() * sizeof(double)), 0) << "shared " << shared;
    EXPECT_EQ(std::memcmp(h0.data(), h2.data(), h0.size() * sizeof(double)), 0) << "shared " << shared;
    EXPECT_GE(x0, 0.0);
    EXPECT_GE(plan.last_exchange_seconds(), 0.0);
  }
  {  // bands_key (ADI_SPLIT_LEAN in the Operator): the spikes kept while the key stays (no device
     // check), recomputed when it changes (b rewritten in place), the flag's clearing skipped
     // while known clear: the same values as a plan without a key.
    DistributedTridiagonalPlan<double> keyed(procs, Axis::z, dev, box), plain(procs, Axis::z, dev, box);
    const std::vector<double> poison(d.size(), std::numeric_limits<double>::quiet_NaN());
    auto run = [&](DistributedTridiagonalPlan<double>& p, const Array<double>& bb) {
      Array<double> u = on(poison);
      p.solve(SharedBands<double>{dsa.data(), bb.data(), dsc.data()}, dd.data(), u.data());
      return back(u);
    };
    auto same = [](const std::vector<double>& x, const std::vector<double>& y) {
      return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
    };
    Array<double> kb = on(sb);
    keyed.bands_key(5);
    EXPECT_TRUE(same(run(keyed, kb), run(plain, dsb))) << "key 5";
    EXPECT_TRUE(same(run(keyed, kb), run(plain, dsb))) << "key 5 again";
    std::vector<double> sb2 = sb;
    for (double& v : sb2) v *= 1.25;
    kb.copy_from_host(sb2.data());
    Array<double> db2 = on(sb2);
    keyed.bands_key(6);
    EXPECT_TRUE(same(run(keyed, kb), run(plain, db2))) << "key 6 (b changed)";
    EXPECT_TRUE(same(run(keyed, kb), run(plain, db2))) << "key 6 again";
  }
  // A zero pivot on the last rank (per-line bands: the partition passes' flag, as
  // DeviceZeroPivotEveryTransport).
  if (world_rank() == p - 1) a[2 * 132] = b[2 * 132] = c[2 * 132] = 0.0;  // row 2 of line 0 on the last rank
  Array<double> za = on(a), zb = on(b), zc = on(c), zu = on(d);
  DistributedTridiagonalPlan<double> plan(procs, Axis::z, dev, box);
  plan.defer_settle(true);
  plan.solve(Bands<double>{za.data(), zb.data(), zc.data()}, dd.data(), zu.data());  // no throw: queued
  EXPECT_TRUE(plan.unsettled());
  expect_everywhere<SingularSystem>([&] { plan.settle(); }, "pivot");
  EXPECT_FALSE(plan.unsettled());
  plan.solve(Bands<double>{za.data(), zb.data(), zc.data()}, dd.data(), zu.data());
  expect_everywhere<SingularSystem>(
      [&] { plan.solve(Bands<double>{da.data(), db.data(), dc.data()}, dd.data(), zu.data()); }, "pivot");
  plan.defer_settle(false);
  expect_everywhere<SingularSystem>(
      [&] { plan.solve(Bands<double>{za.data(), zb.data(), zc.data()}, dd.data(), zu.data()); }, "pivot");
}

// The SPIKE form of per-line bands (DistributedOptions::spike_lines, stop 35) against the
// one-domain solve: each axis split over the world (uneven; odd extents across), windows that
// truncate the spikes (40 rows of segments of ~53: the dominant bands' spikes fit; 8: they do
// not, the ranks fall back) and the whole segment (1000: the exact spikes), lines weakly dominant
// on their first 40 rows (the ranks holding those rows fall back to the partition passes, the
// others keep the SPIKE form: the reduced rows of both are rows of the same system), periodic and
// not, in place (u == d) too. Host memory (host_spike: the device's steps as loops) or device.
template <class T>
void spike_lines_sweep(bool device) {
  const int P = world_size();
  int spike_truncated = 0, fell_back = 0;
  for (int ax = 0; ax < 3; ++ax)
    for (bool periodic : {false, true}) {
      std::array<int, 3> dims{1, 1, 1};
      dims[std::size_t(ax)] = P;
      std::array<index_t, 3> n{5, 3, 7};
      n[std::size_t(ax)] = 53 * P + 2;
      ProcessGrid procs(MPI_COMM_WORLD, dims, {periodic, periodic, periodic});
      Decomposition dec(procs, n);
      const index_t m = dec.extents()[std::size_t(ax)], first = dec.lo(Axis(ax));
      for (int window : {40, 8, 1000})
        for (index_t weak : {index_t(0), index_t(40)}) {
          SpikeCase sc;
          sc.n = n;
          sc.lines = 1;
          sc.window = window;
          sc.weak_rows = weak;
          const double err = distributed_error<T>(procs, dec, Axis(ax), ReducedStrategy::allgather, periodic, false,
                                                  300u + unsigned(ax), device, 0, Transport::automatic,
                                                  ReducedSolveSite::automatic, &sc);
          const std::string what = std::string("axis ") + axis_name(Axis(ax)) + (periodic ? " periodic" : "") +
                                   " window " + std::to_string(window) + " weak rows " + std::to_string(weak) +
                                   " rank " + std::to_string(world_rank()) + " form " + sc.form;
          EXPECT_LE(err, tolerance<T>()) << what;
          const bool truncated = window < m;
          // (y by truncated sweeps, spike_y_stream's default or ADI_SPIKE_Y_STREAM: the weak rows'
          // sweeps are refused too)
          const char* ys = std::getenv("ADI_SPIKE_Y_STREAM");
          const int y_option = DistributedOptions{}.spike_y_stream;  // (-1: automatic, 3 along y and z)
          const bool y_streams = ys && *ys ? std::strcmp(ys, "0") != 0 : y_option < 0 ? ax != 0 : y_option != 0;
          const bool y_refuses = y_streams && weak > first;
          if (!truncated && !y_refuses) EXPECT_EQ(sc.form, "spike") << what << ": the exact spikes";
          if (truncated && weak > first) {
            EXPECT_EQ(sc.form, "partition") << what << ": weak rows' spikes reach beyond the window";
            EXPECT_GT(sc.fallbacks, 0) << what;
          }
          spike_truncated += truncated && sc.form == "spike" ? 1 : 0;
          fell_back += sc.form == "partition" ? 1 : 0;
        }
    }
  EXPECT_GT(spike_truncated, 0) << "no truncated window held the dominant bands' spikes";
  if (world_rank() == 0)
    std::printf("SpikeLines (%s, %s): rank 0 ran the truncated SPIKE form %d times, fell back %d times\n",
                device ? "device" : "host", std::is_same_v<T, double> ? "double" : "float", spike_truncated, fell_back);
}

TEST(DistributedTridiagonal, SpikeLinesHost) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  spike_lines_sweep<double>(false);
  spike_lines_sweep<float>(false);
}

TEST(DistributedTridiagonal, SpikeLinesDevice) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("the per-line SPIKE form on device memory");
  spike_lines_sweep<double>(true);
  spike_lines_sweep<float>(true);
}

// Device plans take the per-line SPIKE form by themselves from DistributedOptions::spike_lines_rows
// rows a segment (stop 41; default 1024), with y by truncated sweeps (spike_y_stream 3, the default):
// z split over the world, segments of 1030 rows (taken by default, not with spike_lines_rows 0 or
// 2000), 700 rows (not taken by default; taken with spike_lines_rows 512) and two lines of 20011
// rows a segment (taken unless 0; y by truncated sweeps in many parts a line), against the one-domain
// solve. Host plans never take it by length (only spike_lines with host_spike). Environment cleared.
void spike_lines_by_length(bool device) {
  const adi::test::ScopedEnv y_decide("ADI_SPIKE_Y_STREAM", "");
  const adi::test::ScopedEnv lines_decide("ADI_SPIKE_LINES", "");
  const adi::test::ScopedEnv side_decide("ADI_SPIKE_WINDOWS_SIDE", "");
  const int P = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, P}, {false, false, false});
  for (index_t seg : {1030, 700, 20011}) {  // (20011: two lines, y in ~125 parts a line on a GPU)
    const std::array<index_t, 3> n{seg > 2000 ? 1 : 3, 2, seg * P};
    Decomposition dec(procs, n);
    for (index_t rows : {index_t(-1), index_t(0), index_t(512), index_t(2000)}) {
      SpikeCase sc;
      sc.n = n;
      sc.rows = rows;
      const double err = distributed_error<double>(procs, dec, Axis::z, ReducedStrategy::allgather, false, false,
                                                   950u + unsigned(seg), device, 0, Transport::automatic,
                                                   ReducedSolveSite::automatic, &sc);
      const index_t limit = rows < 0 ? 1024 : rows;
      const bool taken = device && limit > 0 && seg >= limit;
      const std::string what = std::string(device ? "device" : "host") + ", segments of " + std::to_string(seg) +
                               " rows, spike_lines_rows " + (rows < 0 ? "default" : std::to_string(rows)) +
                               ", rank " + std::to_string(world_rank());
      EXPECT_LE(err, tolerance<double>()) << what;
      EXPECT_EQ(sc.form, taken ? "spike" : "partition") << what;
    }
  }
  {  // lines along x: never by length (measured along z only); spike_lines still takes it
    ProcessGrid px(MPI_COMM_WORLD, {P, 1, 1}, {false, false, false});
    const std::array<index_t, 3> n{1030 * index_t(P), 3, 2};
    Decomposition dec(px, n);
    for (int lines : {-1, 1}) {
      SpikeCase sc;
      sc.n = n;
      sc.lines = lines;
      sc.window = 64;
      const double err = distributed_error<double>(px, dec, Axis::x, ReducedStrategy::allgather, false, false, 990u,
                                                   device, 0, Transport::automatic, ReducedSolveSite::automatic, &sc);
      const std::string what = std::string(device ? "device" : "host") + ", lines along x of 1030 rows a segment, " +
                               (lines < 0 ? "defaults" : "spike_lines") + ", rank " + std::to_string(world_rank());
      EXPECT_LE(err, tolerance<double>()) << what;
      EXPECT_EQ(sc.form, lines > 0 ? "spike" : "partition") << what;
    }
  }
  const Decomposition dec(procs, {3, 2, 8 * index_t(P)});
  for (int which : {0, 1}) {  // out-of-range options
    DistributedOptions bad;
    if (which == 0)
      bad.spike_lines_rows = -3;
    else
      bad.spike_y_stream = 5;
    const std::string want = which == 0 ? "spike_lines_rows = -3" : "spike_y_stream = 5";
    try {
      DistributedTridiagonalPlan<double> plan(procs, Axis::z, rank_executor(device), padded_box(dec.extents()), bad);
      ADD_FAILURE() << want << " accepted";
    } catch (const adi::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(DistributedTridiagonal, SpikeLinesByLengthHost) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  spike_lines_by_length(false);
}

TEST(DistributedTridiagonal, SpikeLinesByLengthDevice) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("the per-line SPIKE form taken by segment length on device memory");
  spike_lines_by_length(true);
}

// y of the per-line SPIKE form by truncated sweeps (DistributedOptions::spike_y_stream, stop 40):
// against the one-domain solve, beside the form with y by the single-device kernel (0), each axis
// split over the world (segments of ~403 rows: 2 parts a line, each sweep truncated), periodic and
// not, dominant lines (every rank keeps the SPIKE form), and lines weakly dominant on 80 rows in the
// middle of rank 0's segment, outside its spike windows (64 rows): y's truncations there do not
// decay, so rank 0 falls back to the partition passes, where the single-device y keeps the SPIKE
// form. Device: also with the windows on a side stream (spike_windows_side). ADI_SPIKE_Y_STREAM,
// ADI_SPIKE_LINES, ADI_SPIKE_WINDOWS_SIDE cleared: the options decide.
template <class T>
void spike_y_stream_sweep(bool device) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_Y_STREAM", "");
  const adi::test::ScopedEnv lines_decide("ADI_SPIKE_LINES", "");
  const adi::test::ScopedEnv side_decide("ADI_SPIKE_WINDOWS_SIDE", "");
  const int P = world_size();
  double worst = 0;
  int streamed = 0, refused = 0;
  for (int ax = 0; ax < 3; ++ax)
    for (bool periodic : {false, true}) {
      std::array<int, 3> dims{1, 1, 1};
      dims[std::size_t(ax)] = P;
      std::array<index_t, 3> n{5, 3, 4};
      n[std::size_t(ax)] = 403 * P + 2;
      ProcessGrid procs(MPI_COMM_WORLD, dims, {periodic, periodic, periodic});
      Decomposition dec(procs, n);
      const index_t first = dec.lo(Axis(ax)), m = dec.extents()[std::size_t(ax)];
      for (bool weak : {false, true})
        for (int y : {0, 1, 2, 3, 4})
          for (int side : {0, 1}) {
            if ((y == 2 || y == 4 || side == 1) && !device) continue;  // (2, 4: L2 requests; side: a side stream)
            SpikeCase sc;
            sc.n = n;
            sc.lines = 1;
            sc.window = 64;
            sc.ystream = y;
            sc.side = side;
            if (weak) sc.weak_from = 160, sc.weak_rows = 240;  // rank 0's rows, outside its windows
            const double err = distributed_error<T>(procs, dec, Axis(ax), ReducedStrategy::allgather, periodic, false,
                                                    900u + unsigned(ax), device, 0, Transport::automatic,
                                                    ReducedSolveSite::automatic, &sc);
            const std::string what = std::string("axis ") + axis_name(Axis(ax)) + (periodic ? " periodic" : "") +
                                     (weak ? " weak rows 160-239" : "") + " y stream " + std::to_string(y) +
                                     (side ? " windows on a side stream" : "") + " rank " +
                                     std::to_string(world_rank()) + " form " + sc.form;
            EXPECT_LE(err, tolerance<T>()) << what;
            const bool weak_here = weak && first < 240 && first + m > 160;
            EXPECT_EQ(sc.form, weak_here && y > 0 ? "partition" : "spike") << what;
            worst = std::max(worst, err);
            streamed += y > 0 && sc.form == "spike" ? 1 : 0;
            refused += y > 0 && sc.form == "partition" ? 1 : 0;
          }
    }
  EXPECT_GT(streamed, 0);
  if (world_rank() == 0)
    std::printf("SpikeYStream (%s, %s): rank 0 ran y by truncated sweeps %d times, refused %d times; largest relative "
                "difference from one domain %.3g\n",
                device ? "device" : "host", std::is_same_v<T, double> ? "double" : "float", streamed, refused, worst);
}

TEST(DistributedTridiagonal, SpikeYStreamHost) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  spike_y_stream_sweep<double>(false);
  spike_y_stream_sweep<float>(false);
}

TEST(DistributedTridiagonal, SpikeYStreamDevice) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("y of the per-line SPIKE form by truncated sweeps on device memory");
  spike_y_stream_sweep<double>(true);
  spike_y_stream_sweep<float>(true);
}

// common::spike_y_part alone (one rank): a segment with its ends cut, split into 1, 2, 3 or 5
// parts, odd lengths 1-2048, the precision's shape and a short one (G = C = 8), against an fp64
// Thomas solve of the same values; u NaN-poisoned (every row must be written once). Dominant lines
// with the precision's G are accepted; weakly dominant lines (a = c = -1, b = 2.001) are refused
// wherever a sweep is truncated; an accepted solve is within the tolerance.
template <class T>
void spike_y_part_sweep() {
  using Shape = common::SpikeYShape<T>;
  struct Ring {
    T* p;
    void put(index_t s, T cs, T ys) const { p[2 * s] = cs, p[2 * s + 1] = ys; }
    void get(index_t s, T& cs, T& ys) const { cs = p[2 * s], ys = p[2 * s + 1]; }
  };
  using Band = common::Strided<const T, index_t>;
  using Out = common::Strided<T, index_t>;
  int accepted = 0, refused = 0;
  // (S = 0: as many parts as spike_y_parts gives one line with threads to spare: parts of 4G rows,
  // the shortest the device kernel runs, e.g. a few very long lines)
  for (index_t m : {1, 2, 3, 31, 33, 255, 257, 1031, 2048, 20011})
    for (index_t S0 : {1, 2, 3, 5, 0})
      for (bool short_shape : {false, true})
        for (bool weak : {false, true}) {
          const index_t G = short_shape ? 8 : Shape::G, C = short_shape ? 8 : Shape::C;
          const index_t S = S0 > 0 ? S0 : common::spike_y_parts<index_t>(m, 1, index_t(1) << 30, G);
          if (S > m || (S0 == 0 && S <= 5)) continue;
          std::mt19937 rng(unsigned(m * 7 + S));
          std::uniform_real_distribution<double> u01(-1, 1);
          const std::size_t sz = static_cast<std::size_t>(m);
          std::vector<T> a(sz), b(sz), c(sz), d(sz), x(sz, std::numeric_limits<T>::quiet_NaN());
          for (std::size_t i = 0; i < a.size(); ++i) {
            a[i] = T(u01(rng)), c[i] = T(u01(rng)), b[i] = T(3.5 + 0.5 * u01(rng)), d[i] = T(u01(rng));
            if (weak) a[i] = c[i] = T(-1), b[i] = T(2.001);
          }
          a[0] = c[std::size_t(m - 1)] = std::numeric_limits<T>::quiet_NaN();  // the cut ends: never read
          std::vector<double> cp(a.size()), dp(a.size()), ref(a.size());
          for (std::size_t i = 0; i < a.size(); ++i) {
            const double ai = i > 0 ? double(a[i]) : 0.0, ci = i + 1 < a.size() ? double(c[i]) : 0.0;
            const double piv = double(b[i]) - (i > 0 ? ai * cp[i - 1] : 0.0);
            cp[i] = ci / piv;
            dp[i] = (double(d[i]) - (i > 0 ? ai * dp[i - 1] : 0.0)) / piv;
          }
          for (std::size_t i = a.size(); i-- > 0;) ref[i] = dp[i] - (i + 1 < a.size() ? cp[i] * ref[i + 1] : 0.0);
          std::vector<T> ring(std::size_t(2 * (G + C))), xp = x;
          bool ok = true, okp = true;
          for (index_t q = 0; q < S; ++q) {
            ok = common::spike_y_part(m, m * q / S, m * (q + 1) / S, G, C, G + C, Band{a.data(), 1}, Band{b.data(), 1},
                                      Band{c.data(), 1}, Band{d.data(), 1}, Out{x.data(), 1}, Ring{ring.data()},
                                      [](index_t) {}) &&
                 ok;
            okp = common::spike_y_part<8, true>(m, m * q / S, m * (q + 1) / S, G, C, G + C, Band{a.data(), 1},
                                                Band{b.data(), 1}, Band{c.data(), 1}, Band{d.data(), 1},
                                                Out{xp.data(), 1}, Ring{ring.data()}, [](index_t) {}) &&
                  okp;
          }
          // the double-buffered form (Pipe): the same rows in the same order, the same values
          EXPECT_EQ(okp, ok) << "m " << m << " parts " << S;
          EXPECT_EQ(0, std::memcmp(x.data(), xp.data(), sz * sizeof(T))) << "m " << m << " parts " << S << ": Pipe";
          double err = 0, scale = 0;
          for (std::size_t i = 0; i < a.size(); ++i) {
            scale = std::max(scale, std::abs(ref[i]));
            const double e = std::abs(double(x[i]) - ref[i]);
            err = std::max(err, e == e ? e : std::numeric_limits<double>::infinity());
          }
          bool truncated = false;  // a forward sweep started after row 0, or a backward one before row m-1
          for (index_t q = 0; q < S; ++q) {
            const index_t r0 = m * q / S, r1 = m * (q + 1) / S;
            truncated = truncated || r0 > G || (r1 > r0 && std::min(r0 + C, r1) + G < m);
          }
          const std::string what = "m " + std::to_string(m) + " parts " + std::to_string(S) + " G " +
                                   std::to_string(G) + (weak ? " weak" : "");
          if (!truncated) EXPECT_TRUE(ok) << what << ": nothing truncated, exact";
          if (!weak && !short_shape) EXPECT_TRUE(ok) << what << ": dominant lines, the precision's shape";
          if (weak && truncated) EXPECT_FALSE(ok) << what << ": weak lines' truncations do not decay";
          if (ok) EXPECT_LE(err / scale, tolerance<T>()) << what;
          accepted += ok ? 1 : 0;
          refused += ok ? 0 : 1;
        }
  if (world_rank() == 0)
    std::printf("SpikeYPart (%s): %d solves accepted, %d refused\n", std::is_same_v<T, double> ? "double" : "float",
              accepted, refused);
}

TEST(DistributedTridiagonal, SpikeYPart) {
  spike_y_part_sweep<double>();
  spike_y_part_sweep<float>();
}

// The compact tail of the shared-band SPIKE form (DistributedOptions::spike_compact, stop 37: y's
// end values and the ranks' scalars gathered, each line's reduced system formed where it is solved)
// against the one-domain solve and against the default tail: each axis split over the world
// (uneven, segments of ~23 rows), periodic and not, strategies allgather and alltoall (the
// default tail's rows solved by either; the compact tail ignores the strategy), every transport
// a device plan can take here. The two tails run the same functions in the same order, so their
// errors must be equal, not only small (device: within a few ulps, the default tail's reduced solve
// may run on the host). Host memory (host_spike: the same steps as loops) or device.
template <class T>
void spike_compact_sweep(bool device) {
  // Each tail as the options ask, whatever the process was started with (an empty
  // ADI_SPIKE_COMPACT: the option decides).
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");
  const adi::test::ScopedEnv options_decide_half("ADI_SPIKE_HALF", "");
  const int P = world_size();
  double worst = 0;
  int cases = 0, equal = 0;
  std::vector<Transport> transports{Transport::automatic};
  if (device) {
    transports.push_back(Transport::host_staging);
    if (nccl::built()) transports.push_back(Transport::nccl);
  }
  for (int ax = 0; ax < 3; ++ax)
    for (bool periodic : {false, true}) {
      std::array<int, 3> dims{1, 1, 1};
      dims[std::size_t(ax)] = P;
      std::array<index_t, 3> n{5, 4, 3};
      n[std::size_t(ax)] = 23 * P + 2;
      ProcessGrid procs(MPI_COMM_WORLD, dims, {periodic, periodic, periodic});
      Decomposition dec(procs, n);
      for (ReducedStrategy strategy : {ReducedStrategy::allgather, ReducedStrategy::alltoall})
        for (Transport transport : transports) {
          if (device && transport == Transport::nccl && !nccl::shared_gpu_report(MPI_COMM_WORLD, rank_gpu().device()).empty())
            continue;  // (ranks sharing a GPU: no NCCL)
          double err[3] = {0, 0, 0};
          for (int v : {0, 1, 2}) {  // the default tail, the compact one, the compact one with halves swapped
            const int compact = v > 0 ? 1 : 0;
            SpikeCase sc;
            sc.n = n;
            sc.compact = compact;
            sc.half = v == 2 ? 1 : 0;
            err[v] = distributed_error<T>(procs, dec, Axis(ax), strategy, periodic, true, 700u + unsigned(ax), device,
                                          0, transport, ReducedSolveSite::automatic, &sc);
            // (more ranks on the axis than the compact tail takes: the default tail)
            const bool takes = compact && P <= cuda_backend::partition::kSpikeCompactMaxRanks;
            EXPECT_EQ(sc.form, takes ? "spike compact" : "spike");
          }
          const std::string what = std::string("axis ") + axis_name(Axis(ax)) + (periodic ? " periodic" : "") +
                                   " strategy " + strategy_name(strategy) + " transport " + transport_name(transport);
          EXPECT_LE(err[1], tolerance<T>()) << what << ": compact tail against one domain";
          // Host: the same loops, so the same values. Device: the default tail may solve the reduced rows on the
          // host (host staging with alltoall), where FMA contraction differs from the device's: a few ulps.
          if (device)
            EXPECT_LE(std::abs(err[1] - err[0]), 10 * std::numeric_limits<T>::epsilon())
                << what << ": compact tail against the default tail";
          else
            EXPECT_EQ(err[1], err[0]) << what << ": compact tail against the default tail";
          // The halves swapped (2 ranks, not periodic; otherwise the allgather): the same values as the compact
          // tail's (up to the sign of a zero).
          EXPECT_EQ(err[2], err[1]) << what << ": halves swapped against the compact tail's allgather";
          worst = std::max(worst, err[1]);
          equal += err[1] == err[0] ? 1 : 0;
          ++cases;
        }
    }
  if (world_rank() == 0)
    std::printf("SpikeCompact (%s, %s): largest relative difference from one domain %.3g over %d cases; the same "
                "error as the default tail in %d\n",
                device ? "device" : "host", std::is_same_v<T, double> ? "double" : "float", worst, cases, equal);
}

TEST(DistributedTridiagonal, SpikeCompactHost) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  spike_compact_sweep<double>(false);
  spike_compact_sweep<float>(false);
}

TEST(DistributedTridiagonal, SpikeCompactDevice) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("the compact SPIKE tail on device memory");
  spike_compact_sweep<double>(true);
  spike_compact_sweep<float>(true);
}

// The compact tail's half exchange (DistributedOptions::spike_half_exchange, ADI_SPIKE_HALF; review
// L7) taken where its guards allow and declined where they do not, told apart by the bytes the
// solve exchanged: the halves swapped send and receive kSpikeHeader + L values each, the allgather
// P (kSpikeHeader + 2L). Taken: 2 ranks on the axis, not periodic, L >= kSpikeHeader lines, the
// option on or ADI_SPIKE_HALF=1 over it off; declined: more ranks, periodic, fewer lines, the
// option off or ADI_SPIKE_HALF=0 over it on, or ADI_SPIKE_HALF=0 on one rank only (every rank of
// the axis then takes the allgather: the ranks agree). The values within the one-domain tolerance.
template <class T>
void spike_half_guards(bool device) {
  namespace part = cuda_backend::partition;
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_COMPACT", "");
  const int P = world_size();
  if (P > part::kSpikeCompactMaxRanks) return;  // (the compact tail itself declined: SpikeCompact*)
  struct GuardCase {
    const char* what;
    bool periodic;
    index_t ny, nz;  // lines per rank L = ny x nz (x split over the world)
    int option;     // DistributedOptions::spike_half_exchange
    const char* env;        // ADI_SPIKE_HALF on every rank ("": the option decides)
    const char* env_rank0;  // on rank 0 only (nullptr: as env)
    bool allowed;   // the guards allow it (with P = 2)
  };
  const GuardCase cases[] = {
      {"option on, not periodic, L = 12", false, 4, 3, 1, "", nullptr, true},
      {"L = 8 (kSpikeHeader)", false, 4, 2, 1, "", nullptr, true},
      {"option off", false, 4, 3, 0, "", nullptr, false},
      {"periodic", true, 4, 3, 1, "", nullptr, false},
      {"L = 7 < kSpikeHeader", false, 7, 1, 1, "", nullptr, false},
      {"ADI_SPIKE_HALF=0 over the option on", false, 4, 3, 1, "0", nullptr, false},
      {"ADI_SPIKE_HALF=1 over the option off", false, 4, 3, 0, "1", nullptr, true},
      {"ADI_SPIKE_HALF=0 on rank 0 only", false, 4, 3, 1, "", "0", false},
  };
  for (const GuardCase& g : cases) {
    const char* env = g.env_rank0 != nullptr && world_rank() == 0 ? g.env_rank0 : g.env;
    const adi::test::ScopedEnv half_env("ADI_SPIKE_HALF", env);
    const std::array<index_t, 3> n{23 * index_t(P) + 2, g.ny, g.nz};
    ProcessGrid procs(MPI_COMM_WORLD, {P, 1, 1}, {g.periodic, g.periodic, g.periodic});
    Decomposition dec(procs, n);
    SpikeCase sc;
    sc.n = n;
    sc.compact = 1;
    sc.half = g.option;
    const double err = distributed_error<T>(procs, dec, Axis::x, ReducedStrategy::allgather, g.periodic, true, 900u,
                                            device, 0, Transport::automatic, ReducedSolveSite::automatic, &sc);
    const index_t L = g.ny * g.nz;
    const bool taken = g.allowed && P == 2;
    const double half_bytes = 2.0 * double(part::kSpikeHeader + L) * double(sizeof(T));
    const double gather_bytes = double(P) * double(part::kSpikeHeader + 2 * L) * double(sizeof(T));
    const std::string what = std::string(g.what) + ", " + std::to_string(P) + " ranks, rank " +
                             std::to_string(world_rank()) + (device ? ", device" : ", host");
    EXPECT_EQ(sc.form, "spike compact") << what;
    EXPECT_EQ(sc.bytes, taken ? half_bytes : gather_bytes)
        << what << ": expected the " << (taken ? "half exchange" : "allgather");
    EXPECT_LE(err, tolerance<T>()) << what;
  }
}

TEST(DistributedTridiagonal, SpikeHalfExchangeGuardsHost) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  spike_half_guards<double>(false);
  spike_half_guards<float>(false);
}

TEST(DistributedTridiagonal, SpikeHalfExchangeGuardsDevice) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("the compact SPIKE tail's half exchange on device memory");
  spike_half_guards<double>(true);
  spike_half_guards<float>(true);
}

// The spikes by parallel cyclic reduction (DistributedOptions::spike_prepare_pcr, stop 38) against
// the sequential sweeps, device plans: each axis split over the world, periodic and not,
// segments of 2, 3, 33, 256, 257, 512 rows and one of 600 (above the parallel kernel's 512: the
// sweeps) on each rank (float: 33 and 257), the default and the compact tail in turn; every case
// first solved with other bands (b x 1.25), then measured on two solves with the true bands (the
// spikes recomputed on the change, kept after it). Both within the tolerance of the one-domain
// solve, and within a few ulps of each other (W, Z equal to rounding; the same reach); with the
// compact tail's batched last rows (spike_back_batched) and its correction spread over a wave of
// blocks (spike_back_spread, stop 39 h-splitwait) too: the same error exactly; with the coarser
// reach (spike_reach_coarse: epsilon / 8) within tolerance and within a few ulps of the default.
template <class T>
void spike_pcr_sweep(const std::vector<index_t>& lengths) {
  const adi::test::ScopedEnv options_decide("ADI_SPIKE_PREPARE_PCR", "");
  const adi::test::ScopedEnv options_decide_tail("ADI_SPIKE_BACK_BATCHED", "");
  const adi::test::ScopedEnv options_decide_spread("ADI_SPIKE_BACK_SPREAD", "");
  const adi::test::ScopedEnv options_decide_reach("ADI_SPIKE_REACH_COARSE", "");
  const int P = world_size();
  double worst = 0, apart = 0;
  int cases = 0;
  for (int ax = 0; ax < 3; ++ax)
    for (bool periodic : {false, true})
      for (std::size_t k = 0; k < lengths.size(); ++k) {
        const index_t rows = lengths[k];
        const int compact = int((k + std::size_t(ax)) % 2);
        std::array<int, 3> dims{1, 1, 1};
        dims[std::size_t(ax)] = P;
        std::array<index_t, 3> n{3, 2, 2};
        n[std::size_t(ax)] = rows * P;
        ProcessGrid procs(MPI_COMM_WORLD, dims, {periodic, periodic, periodic});
        Decomposition dec(procs, n);
        double err[5] = {0, 0, 0, 0, 0};
        for (int v : {0, 1, 2, 3, 4}) {  // sequential spikes, parallel, + the batched tail, + spread, + coarse reach
          SpikeCase sc;
          sc.n = n;
          sc.compact = compact;
          sc.pcr = v > 0 ? 1 : 0;
          sc.batched = v >= 2 ? 1 : 0;
          sc.spread = v >= 3 ? 1 : 0;
          sc.coarse = v == 4 ? 1 : 0;
          err[v] = distributed_error<T>(procs, dec, Axis(ax), ReducedStrategy::allgather, periodic, true,
                                        900u + unsigned(rows), true, 0, Transport::automatic,
                                        ReducedSolveSite::automatic, &sc);
          EXPECT_NE(sc.form, "partition");
        }
        const std::string what = std::string("axis ") + axis_name(Axis(ax)) + (periodic ? " periodic" : "") +
                                 " rows " + std::to_string(rows) + (compact ? " compact" : "");
        EXPECT_LE(err[0], tolerance<T>()) << what << ": sequential spikes";
        EXPECT_LE(err[1], tolerance<T>()) << what << ": parallel spikes";
        EXPECT_LE(std::abs(err[1] - err[0]), 64 * std::numeric_limits<T>::epsilon()) << what;
        EXPECT_EQ(err[2], err[1]) << what << ": the batched tail (the same values)";
        EXPECT_EQ(err[3], err[1]) << what << ": the correction spread (ADI_SPIKE_BACK_SPREAD; the same values)";
        EXPECT_LE(err[4], tolerance<T>()) << what << ": the coarse reach (ADI_SPIKE_REACH_COARSE)";
        EXPECT_LE(std::abs(err[4] - err[1]), 64 * std::numeric_limits<T>::epsilon()) << what << ": the coarse reach";
        worst = std::max(worst, err[1]);
        apart = std::max(apart, std::abs(err[1] - err[0]));
        ++cases;
      }
  if (world_rank() == 0)
    std::printf("SpikePreparePcr (%s): largest relative difference from one domain %.3g, from the sequential "
                "spikes' %.3g, over %d cases\n",
                std::is_same_v<T, double> ? "double" : "float", worst, apart, cases);
}

TEST(DistributedTridiagonal, SpikePreparePcrDevice) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  ADI_REQUIRE_CUDA("the SPIKE form's parallel spikes on device memory");
  spike_pcr_sweep<double>({2, 3, 33, 256, 257, 512, 600});
  spike_pcr_sweep<float>({33, 257});
}

// The SPIKE form's arithmetic (DistributedOptions::device_spike and spike_lines; their device
// kernels call the same functions), on the host: P segments of one line solved with their ends
// cut, the spikes (common::spike_window: on the whole segment, or truncated to windows of R rows
// at each end as the per-line form computes them), the reduced rows (solved by the device's
// reduced solve, solve_reduced_rows), the couplings and the correction where the spikes reach
// (the other rows keep y), against Gaussian elimination of the whole line (cyclic too); odd
// lengths, segments of 2 rows, bands whose spikes die out within a few rows, bands strongly
// dominant (a window of 48 rows must hold their spikes) and bands barely diagonally dominant
// (they reach across: a window shorter than the segment must be refused).
TEST(DistributedTridiagonal, SpikeArithmetic) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  double worst = 0, reached = 0;
  int segments = 0, refused = 0, truncated = 0;
  enum Kind { dominant, weak, strong };
  for (index_t N : {4, 7, 40, 257})
    for (int P : {2, 3, 4})
      for (bool periodic : {false, true})
        for (Kind kind : {dominant, weak, strong})
          for (index_t window : {0, 8, 48}) {  // 0: the whole segment
        if (N < 2 * P) continue;
        const std::size_t sz = std::size_t(N);
        std::vector<double> a(sz), b(sz), c(sz), d(sz);
        for (std::size_t i = 0; i < a.size(); ++i) {
          a[i] = u(rng), c[i] = u(rng), b[i] = 3 + u(rng), d[i] = u(rng);
          if (kind == weak) a[i] = c[i] = -1, b[i] = 2.001 + 0.001 * u(rng);
          if (kind == strong) b[i] = 4 + 0.5 * u(rng);
        }
        // reference: dense Gaussian elimination with partial pivoting
        std::vector<double> M(std::size_t(N * N), 0.0), ref = d;
        for (index_t i = 0; i < N; ++i) {
          M[std::size_t(i * N + i)] = b[std::size_t(i)];
          if (i > 0 || periodic) M[std::size_t(i * N + (i + N - 1) % N)] += a[std::size_t(i)];
          if (i < N - 1 || periodic) M[std::size_t(i * N + (i + 1) % N)] += c[std::size_t(i)];
        }
        for (index_t k = 0; k < N; ++k) {
          index_t piv = k;
          for (index_t i = k + 1; i < N; ++i)
            if (std::abs(M[std::size_t(i * N + k)]) > std::abs(M[std::size_t(piv * N + k)])) piv = i;
          for (index_t j = 0; j < N; ++j) std::swap(M[std::size_t(k * N + j)], M[std::size_t(piv * N + j)]);
          std::swap(ref[std::size_t(k)], ref[std::size_t(piv)]);
          for (index_t i = k + 1; i < N; ++i) {
            const double f = M[std::size_t(i * N + k)] / M[std::size_t(k * N + k)];
            for (index_t j = k; j < N; ++j) M[std::size_t(i * N + j)] -= f * M[std::size_t(k * N + j)];
            ref[std::size_t(i)] -= f * ref[std::size_t(k)];
          }
        }
        for (index_t k = N - 1; k >= 0; --k) {
          for (index_t j = k + 1; j < N; ++j) ref[std::size_t(k)] -= M[std::size_t(k * N + j)] * ref[std::size_t(j)];
          ref[std::size_t(k)] /= M[std::size_t(k * N + k)];
        }
        double scale = 0;  // (differences relative to the largest value: the weak bands' solution is large)
        for (double v : ref) scale = std::max(scale, std::abs(v));
        // the SPIKE form, segment by segment: W, Z on windows of R rows (R = m: the whole segment)
        const int n = 2 * P;
        using Band = common::Strided<const double, index_t>;
        using Out = common::Strided<double, index_t>;
        std::vector<double> rows(std::size_t(8 * P)), y(a.size()), cs(a.size());
        std::vector<std::vector<double>> Ws(static_cast<std::size_t>(P)), Zs(static_cast<std::size_t>(P));
        std::vector<index_t> Rs(static_cast<std::size_t>(P)), reach(static_cast<std::size_t>(2 * P));
        auto cut = [&](int p) { return N * p / P; };
        bool valid = true;
        for (int p = 0; p < P; ++p) {
          const index_t r0 = cut(p), m = cut(p + 1) - r0;
          const index_t R = window == 0 ? m : std::min(m, window);
          Rs[std::size_t(p)] = R;
          Ws[std::size_t(p)].assign(std::size_t(R), 0.0);
          Zs[std::size_t(p)].assign(std::size_t(R), 0.0);
          const Band A{a.data() + r0, 1}, B{b.data() + r0, 1}, C{c.data() + r0, 1};
          const bool ok = common::spike_window(m, R, common::spike_guard(R), true, A, B, C,
                                               Out{Ws[std::size_t(p)].data(), 1}, Out{cs.data(), 1},
                                               reach[std::size_t(2 * p)]) &&
                          common::spike_window(m, R, common::spike_guard(R), false, A, B, C,
                                               Out{Zs[std::size_t(p)].data(), 1}, Out{cs.data(), 1},
                                               reach[std::size_t(2 * p + 1)]);
          if (R == m) EXPECT_TRUE(ok) << "the whole segment's spikes are exact";
          if (R < m && kind == weak) EXPECT_FALSE(ok) << "weak bands' spikes reach beyond a window of " << R;
          if (R < m && kind == strong && R >= 48) EXPECT_TRUE(ok) << "strong bands' spikes within " << R << " rows";
          truncated += R < m ? 1 : 0;
          valid = valid && ok;
        }
        if (!valid) {  // (the plan runs the partition passes on such a rank)
          ++refused;
          continue;
        }
        auto spikes = [&](int p, index_t i, double& w, double& z) {
          const index_t m = cut(p + 1) - cut(p);
          common::spike_at(m, Rs[std::size_t(p)], Ws[std::size_t(p)].data(), Zs[std::size_t(p)].data(), i, w, z);
        };
        for (int p = 0; p < P; ++p) {
          const index_t r0 = cut(p), m = cut(p + 1) - r0;
          const bool fo = p == 0 && !periodic, lo = p == P - 1 && !periodic;
          double* A = a.data() + r0;
          double *B = b.data() + r0, *C = c.data() + r0;
          // y: Thomas of the cut segment (a_0, c_{m-1} unread)
          double* yy = y.data() + r0;
          double r = 1.0 / B[0];
          cs[std::size_t(r0)] = C[0] * r;
          yy[0] = d[std::size_t(r0)] * r;
          for (index_t i = 1; i < m; ++i) {
            r = 1.0 / common::thomas_pivot(A[i], B[i], cs[std::size_t(r0 + i - 1)]);
            cs[std::size_t(r0 + i)] = C[i] * r;
            yy[i] = common::thomas_eliminate(d[std::size_t(r0 + i)], A[i], yy[i - 1], r);
          }
          for (index_t i = m - 2; i >= 0; --i) yy[i] = common::thomas_substitute(yy[i], cs[std::size_t(r0 + i)], yy[i + 1]);
          double W0, W1, Z0, Z1;
          spikes(p, 0, W0, Z0);
          spikes(p, m - 1, W1, Z1);
          common::spike_rows(W0, W1, Z0, Z1, A[0], C[m - 1], yy[0], yy[m - 1], fo, lo, rows.data() + 8 * p);
        }
        std::vector<double> scratch(std::size_t(3 * n));
        cuda_backend::partition::solve_reduced_rows<double>(
            n, periodic, [&](int k) { return rows.data() + (k / 2) * 8 + (k % 2) * 4; },
            [&](int j, int k) -> double& { return scratch[std::size_t(j * n + k)]; });
        for (int p = 0; p < P; ++p) {
          const index_t r0 = cut(p), m = cut(p + 1) - r0;
          const bool fo = p == 0 && !periodic, lo = p == P - 1 && !periodic;
          const double x0 = scratch[std::size_t(n + 2 * p)], x1 = scratch[std::size_t(n + 2 * p + 1)];
          double Aa = 0, Cc = 0, W0, W1, Z0, Z1;
          spikes(p, 0, W0, Z0);
          spikes(p, m - 1, W1, Z1);
          index_t top = 0, bottom = m;
          common::spike_corrected_rows(m, reach[std::size_t(2 * p)], reach[std::size_t(2 * p + 1)], fo, lo, top,
                                       bottom);
          reached += double(top + (m - bottom)) / double(m);
          ++segments;
          common::spike_couplings(W0, W1, Z0, Z1, y[std::size_t(r0)] - x0, y[std::size_t(r0 + m - 1)] - x1, fo, lo,
                                  Aa, Cc);
          for (index_t i = 0; i < m; ++i) {
            const std::size_t k = std::size_t(r0 + i);
            double w, z;
            spikes(p, i, w, z);
            const double x = i < top || i >= bottom ? common::partition_fill(y[k], w, Aa, z, Cc) : y[k];
            worst = std::max(worst, std::abs(x - ref[k]) / scale);
          }
        }
      }
  EXPECT_LE(worst, 1e-12);
  EXPECT_GT(truncated, 0);
  if (world_rank() == 0)
    std::printf("SpikeArithmetic: largest relative difference from Gaussian elimination %.3g (rows corrected: %.0f%% "
                "on average; %d segments in truncated windows, %d lines refused)\n",
                worst, 100.0 * reached / std::max(1, segments), truncated, refused);
}

// The SPIKE form's ADI stage (DistributedTridiagonalPlan::solve_stage with a TridiagonalStage:
// the cut segments through the single-device stage, v's neighbour beyond a cut end added from
// its ghost plane) on host memory, lines along z split over the world (uneven), periodic and
// not, against the stage's right-hand side formed here and solved by a plan without SPIKE.
TEST(DistributedTridiagonal, SpikeStage) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks (a split axis)";
  const int P = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, P});
  const index_t nx = 5, ny = 4, N = 9 * P + 3;
  Decomposition dec(procs, {nx, ny, N});
  const index_t m = dec.extents()[2], k0 = dec.lo()[2], plane = nx * ny;
  const Box3 box = Box3::dense(nx, ny, m);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u01(-1, 1);
  const std::size_t nn = std::size_t(N);
  std::vector<double> ga(nn), gd(nn), gc(nn);
  for (std::size_t k = 0; k < ga.size(); ++k) ga[k] = u01(rng), gc[k] = u01(rng), gd[k] = -2.5 + 0.5 * u01(rng);
  const double inv_s = 1.3;
  auto f = [&](index_t i, index_t j, index_t k) { return std::sin(0.7 * double(i) + 1.3 * double(j) + 0.37 * double(k)); };
  for (bool periodic : {false, true}) {
    // v, base with one ghost plane on each side along z (v's ghosts: the neighbours' planes)
    std::vector<double> v(std::size_t(plane * (m + 2))), base(v.size()), u(v.size(), 0.0), ref(v.size(), 0.0),
        rhs(v.size(), 0.0);
    for (index_t k = -1; k <= m; ++k)
      for (index_t j = 0; j < ny; ++j)
        for (index_t i = 0; i < nx; ++i) {
          const index_t kg = ((k0 + k) % N + N) % N, o = (k + 1) * plane + j * nx + i;
          v[std::size_t(o)] = f(i, j, kg);
          base[std::size_t(o)] = f(j, i, kg + 3);
        }
    const bool first_open = dec.lo()[2] == 0 && !periodic, last_open = k0 + m == N && !periodic;
    std::vector<double> la(ga.begin() + k0, ga.begin() + k0 + m), ld(gd.begin() + k0, gd.begin() + k0 + m),
        lc(gc.begin() + k0, gc.begin() + k0 + m);
    std::vector<double> lb = ld;
    for (index_t k = 0; k < m; ++k) lb[std::size_t(k)] = inv_s - ld[std::size_t(k)];
    for (index_t k = 0; k < m; ++k)
      for (index_t l = 0; l < plane; ++l) {
        const index_t o = (k + 1) * plane + l;
        const double vm = k == 0 && first_open ? 0.0 : v[std::size_t(o - plane)];
        const double vp = k == m - 1 && last_open ? 0.0 : v[std::size_t(o + plane)];
        rhs[std::size_t(o)] = common::stage_rhs_inner(
            common::StageRhsArgs<double>{inv_s, {nullptr, nullptr}, {0.0, 0.0}, v.data(), {nullptr, nullptr},
                                         {nullptr, nullptr}, {nullptr, nullptr}},
            la[std::size_t(k)], ld[std::size_t(k)], lc[std::size_t(k)], base[std::size_t(o)], vm, v[std::size_t(o)], vp,
            index_t(0));
      }
    DistributedOptions o;
    o.periodic = periodic;
    DistributedTridiagonalPlan<double> plain(procs, Axis::z, Executor::host(), box, o);  // (host: no SPIKE)
    const SharedBands<double> bands{la.data(), lb.data(), lc.data()};
    plain.solve(bands, rhs.data() + plane, ref.data() + plane);
    o.host_spike = true;
    DistributedTridiagonalPlan<double> spike(procs, Axis::z, Executor::host(), box, o);
    detail::TridiagonalStage<double> st{};
    st.base = base.data() + plane;
    st.v = v.data() + plane;
    st.inv_s = inv_s;
    st.a = la.data();
    st.d = ld.data();
    st.c = lc.data();
    st.face_base = 0;
    st.face_n1 = nx;
    ASSERT_TRUE(spike.solve_stage(bands, st, u.data() + plane)) << "the SPIKE plan takes stages";
    double err = 0, scale = 0;
    for (index_t q = plane; q < plane * (m + 1); ++q) {
      err = std::max(err, std::abs(u[std::size_t(q)] - ref[std::size_t(q)]));
      scale = std::max(scale, std::abs(ref[std::size_t(q)]));
    }
    double all = 0;
    MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_LE(all, 1e-12 * scale) << (periodic ? "periodic" : "not periodic");
    if (world_rank() == 0)
      std::printf("SpikeStage: %s, largest difference from the stage formed apart %.3g (scale %.3g)\n",
                  periodic ? "periodic" : "not periodic", all, scale);
  }
}

TEST(DistributedTridiagonal, TransportNames) {
  for (Transport t : {Transport::automatic, Transport::host_staging, Transport::cuda_aware_mpi, Transport::nccl})
    EXPECT_EQ(transport_from_name(transport_name(t)), t);
  EXPECT_THROW(transport_from_name("carrier_pigeon"), InvalidArgument);
  EXPECT_THROW(transport_from_name(""), InvalidArgument);
  try {
    transport_from_name("mpi");
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("host_staging, cuda_aware_mpi, nccl"), std::string::npos) << e.what();
  }
}

TEST(DistributedTridiagonal, StrategyNames) {
  for (ReducedStrategy s : kAll) EXPECT_EQ(strategy_from_name(strategy_name(s)), s);
  EXPECT_THROW(strategy_from_name("gossip"), InvalidArgument);
}

}  // namespace
