// bench_mpi_block: distributed block-tridiagonal line solves (adi::mpi::
// DistributedBlockTridiagonalPlan, the block partition method) on device memory: nx x ny
// x nz points with M unknowns each (AoS), the nx*ny block lines along z split over the
// ranks of MPI_COMM_WORLD.
//
//   mpirun -np 1 bench_mpi_block --n 64x64x2048 --m 5        # the single-device BlockTridiagonalPlan
//   mpirun -np 2 bench_mpi_block --n 64x64x2048 --m 5        # device passes (NCCL, host staging) vs host mirrors
//
// Own harness (a solve is collective: every rank repeats in lockstep): per repetition a
// barrier, the solve (it returns when the device is done), and the slowest rank's time;
// medians after one warm-up. A, B, C and d are only read (u != d), so nothing needs
// restoring. In the same run it measures the device copy bandwidth and prints per case:
// ms per solve, local passes / exchange (+ host reduced solve) / staging copies, and the
// ratio to the traffic model
//   unsplit: (5 M^2 + 4 M) values per point / copy bandwidth (A, B, C, d read, C* written
//            and read back, u written, read and written)
//   split:   (7 M^2 + 4 M) values per point / copy bandwidth (A, B, C, d read, alpha, gamma
//            written and read back, delta into u and back) + the measured exchange,
// plus plan creation + first solve. With P > 1 ranks: the NCCL communicator of the axis is
// made first and timed on its own row (once per axis and GPU; the plans after it reuse it),
// and rank 0 then solves the same global problem alone with the single-device plan on its GPU
// (the 1-GPU baseline of the same run) for the speed-up line.
#include <mpi.h>

#include <algorithm>
#include <optional>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "adi/block_tridiagonal.hpp"
#include "adi/field.hpp"
#include "benchmarks/mpi_bench_util.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_block_tridiagonal.hpp"
#include "solvers/cuda/backend.hpp"

namespace {

using namespace adi;

using bench::median;

struct Row {
  std::string path;
  double ms, local_ms, exchange_ms, staging_ms, model_ms, first_ms;
};

// A cheap reproducible value in [-0.5, 0.5) from an index (the arrays are GBs).
inline double hash01(std::uint64_t i) {
  i ^= i >> 33;
  i *= 0xff51afd7ed558ccdULL;
  i ^= i >> 33;
  return double(i >> 11) / 9007199254740992.0 - 0.5;
}

template <class T>
Array<T> device_array(index_t n, const Executor& exec, int kind, int M) {
  std::vector<T> h(static_cast<std::size_t>(n));
  const std::uint64_t salt = std::uint64_t(kind) << 56;
  for (index_t i = 0; i < n; ++i) {
    double v = hash01(salt + std::uint64_t(i));
    if (kind <= 2) v *= 2.0 / M;  // A, C and B's off-diagonal: row sums of |.| <= 1
    if (kind == 1 && (i % (M * M)) % (M + 1) == 0) v = 4.0 + v;  // B: diagonal in [3.9, 4.1]: block dominant
    h[std::size_t(i)] = T(v);
  }
  Array<T> a(n, exec);
  a.copy_from_host(h.data());
  return a;
}

// The single-device BlockTridiagonalPlan on the whole of n (rank 0 alone, the others wait):
// plan + first solve and the median solve, in ms.
template <class T>
Row single_gpu_baseline(std::array<index_t, 3> n, int M, int reps, const Executor& exec) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Row row{"1 GPU, the same global problem (rank 0 alone): single-device BlockTridiagonalPlan", 0, 0, 0, 0, 0, 0};
  if (rank == 0) {
    const index_t pts = n[0] * n[1] * n[2];
    Array<T> A = device_array<T>(pts * M * M, exec, 0, M), B = device_array<T>(pts * M * M, exec, 1, M),
             C = device_array<T>(pts * M * M, exec, 2, M), d = device_array<T>(pts * M, exec, 3, 0),
             u = device_array<T>(pts * M, exec, 4, 0);
    const BlockGridLines gl{M, n[0], n[1], n[2], Axis::z, PointArray::aos(M, n[0], n[1], n[2]),
                            PointArray::aos(index_t(M) * M, n[0], n[1], n[2])};
    const BlockBands<T> bands{A.data(), B.data(), C.data()};
    const double f0 = MPI_Wtime();
    BlockTridiagonalPlan<T> plan(exec, to_block_lines(gl));
    plan.solve(bands, d.data(), u.data());
    row.first_ms = 1e3 * (MPI_Wtime() - f0);
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
      const double t0 = MPI_Wtime();
      plan.solve(bands, d.data(), u.data());
      exec.synchronize();
      t.push_back(MPI_Wtime() - t0);
    }
    row.ms = 1e3 * median(t);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return row;
}

template <class T>
void run(std::array<index_t, 3> n, int M, int reps, bool mirrors_too, std::vector<Row>& rows, double& copy_gbs,
         std::string& creation, bool baseline, const std::vector<int>& subsegments) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Executor exec = mpi::rank_gpu();  // fewer GPUs than ranks: they share
  mpi::ProcessGrid procs(MPI_COMM_WORLD, {1, 1, size});
  mpi::Decomposition dec(procs, n);
  const auto e = dec.extents();
  const index_t pts = e[0] * e[1] * e[2];
  Array<T> A = device_array<T>(pts * M * M, exec, 0, M), B = device_array<T>(pts * M * M, exec, 1, M),
           C = device_array<T>(pts * M * M, exec, 2, M), d = device_array<T>(pts * M, exec, 3, 0),
           u = device_array<T>(pts * M, exec, 4, 0);
  // Device copy bandwidth: the first pts*M values of A onto a scratch array (read + write).
  {
    Array<T> s(pts * M, exec);
    const std::size_t sb = std::size_t(s.size()) * sizeof(T);
    detail::copy_bytes(s.data(), MemorySpace::device, A.data(), MemorySpace::device, sb, exec.stream());
    exec.synchronize();
    std::vector<double> t;
    for (int k = 0; k < 5; ++k) {
      const double t0 = MPI_Wtime();
      detail::copy_bytes(s.data(), MemorySpace::device, A.data(), MemorySpace::device, sb, exec.stream());
      exec.synchronize();
      t.push_back(MPI_Wtime() - t0);
    }
    copy_gbs = 2.0 * double(sb) / median(t) / 1e9;
  }
  const BlockGridLines gl{M, e[0], e[1], e[2], Axis::z, PointArray::aos(M, e[0], e[1], e[2]),
                          PointArray::aos(index_t(M) * M, e[0], e[1], e[2])};
  const double w = sizeof(T), bw = copy_gbs * 1e9;
  // The axis's NCCL communicator, made once and timed on its own (the plans after it reuse it).
  if (size > 1) creation = bench::nccl_creation(procs, Axis::z, exec.device());
  // Passes: device passes with each transport that can run (automatic first), then the host mirrors.
  struct Pass {
    bool device;
    mpi::Transport tr;
    mpi::ReducedStrategy s;
    int S = 0;  // sub-segments (0: automatic)
  };
  std::vector<Pass> passes{{true, mpi::Transport::automatic, mpi::ReducedStrategy::automatic}};
  if (size > 1) {
    for (int S : subsegments)  // the automatic transport with other sub-segment counts (tuning)
      passes.push_back({true, mpi::Transport::automatic, mpi::ReducedStrategy::automatic, S});
    if (mpi::nccl::built()) passes.push_back({true, mpi::Transport::nccl, mpi::ReducedStrategy::alltoall});
    passes.push_back({true, mpi::Transport::host_staging, mpi::ReducedStrategy::automatic});
    if (mirrors_too) passes.push_back({false, mpi::Transport::automatic, mpi::ReducedStrategy::automatic});
  }
  for (std::size_t pass = 0; pass < passes.size(); ++pass) {
    mpi::DistributedBlockOptions o;
    o.device_passes = passes[pass].device;
    o.transport = passes[pass].tr;
    o.strategy = passes[pass].s;
    o.device_subsegments = passes[pass].S;
    MPI_Barrier(MPI_COMM_WORLD);
    const double f0 = MPI_Wtime();
    std::optional<mpi::DistributedBlockTridiagonalPlan<T>> made;
    try {
      made.emplace(procs, Axis::z, exec, to_block_lines(gl), o);
    } catch (const Unsupported& e) {  // the same on every rank
      if (rank == 0) std::printf("not run: transport %s: %s\n", mpi::transport_name(o.transport), e.what());
      continue;
    }
    auto& plan = *made;
    const BlockBands<T> bands{A.data(), B.data(), C.data()};
    plan.solve(bands, d.data(), u.data());
    const double first = bench::max_over(MPI_Wtime() - f0);
    const int nrep = passes[pass].device ? reps : std::max(2, reps / 3);
    std::vector<double> t, tl, te, ts;
    for (int k = 0; k < nrep; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      plan.solve(bands, d.data(), u.data());
      t.push_back(bench::max_over(MPI_Wtime() - t0));
      tl.push_back(bench::max_over(plan.last_local_seconds()));
      te.push_back(bench::max_over(plan.last_exchange_seconds()));
      ts.push_back(bench::max_over(plan.last_staging_seconds()));
    }
    const double MM = double(M) * M;
    const double model = plan.split() ? double(pts) * (7 * MM + 4 * M) * w / bw + median(te)
                                      : double(pts) * (5 * MM + 4 * M) * w / bw;
    const std::string tr = std::string(o.transport == mpi::Transport::automatic ? "automatic->" : "") +
                           mpi::transport_name(plan.transport());
    rows.push_back({!plan.split() ? "single-device BlockTridiagonalPlan"
                    : passes[pass].device
                        ? "device passes, S=" + std::to_string(plan.device_subsegments()) + ", " +
                              mpi::strategy_name(plan.strategy()) + ", " + tr
                        : std::string("host mirrors (old), ") + mpi::strategy_name(plan.strategy()),
                    1e3 * median(t), 1e3 * median(tl), 1e3 * median(te), 1e3 * median(ts), 1e3 * model,
                    1e3 * first});
  }
  if (size > 1 && baseline) rows.push_back(single_gpu_baseline<T>(n, M, reps, exec));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::array<index_t, 3> n{64, 64, 2048};
  int M = 5, reps = 10;
  bool fp32 = false, mirrors = true, baseline = true;
  std::vector<int> subsegments;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--n" && has) {
      const auto d = mpi::parse_procs(argv[++i]);  // the same "AxBxC" syntax
      n = {d[0], d[1], d[2]};
    } else if (a == "--m" && has) {
      M = std::stoi(argv[++i]);
    } else if (a == "--reps" && has) {
      reps = std::max(1, std::stoi(argv[++i]));
    } else if (a == "--float") {
      fp32 = true;
    } else if (a == "--no-mirrors") {
      mirrors = false;
    } else if (a == "--no-baseline") {
      baseline = false;
    } else if (a == "--subsegments" && has) {  // e.g. 4,32: extra rows with those sub-segment counts
      std::string list = argv[++i];
      for (std::size_t p = 0; p < list.size();) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        subsegments.push_back(std::max(1, std::stoi(list.substr(p, q - p))));
        p = q + 1;
      }
    } else {
      if (rank == 0)
        std::printf("usage: mpirun -np P bench_mpi_block [--n 64x64x2048] [--m 5] [--reps 10] [--float] "
                    "[--no-mirrors] [--no-baseline] [--subsegments S1,S2,..]\n  block lines along z split over P ranks, device memory; with P > 1 "
                    "every transport, the host-mirror path unless --no-mirrors, and the same global problem on "
                    "rank 0's GPU alone unless --no-baseline\n");
      MPI_Finalize();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  int rc = 0;
  std::vector<Row> rows;
  double copy_gbs = 0;
  std::string creation;
  try {
    if (!Executor::cuda_available()) throw Unsupported("bench_mpi_block needs a CUDA device");
    if (fp32)
      run<float>(n, M, reps, mirrors, rows, copy_gbs, creation, baseline, subsegments);
    else
      run<double>(n, M, reps, mirrors, rows, copy_gbs, creation, baseline, subsegments);
  } catch (const Error& e) {
    if (rank == 0) std::fprintf(stderr, "bench_mpi_block: error: %s\n", e.what());
    rc = 1;
  }
  if (rank == 0 && rc == 0) {
    std::printf("bench_mpi_block: %lldx%lldx%lld points, M = %d, %s, lines along z over %d rank(s), device memory; "
                "device copy %.0f GB/s (rank 0)\n",
                (long long)n[0], (long long)n[1], (long long)n[2], M, fp32 ? "float" : "double", size, copy_gbs);
    std::printf("| ranks | path | ms/solve | local | exchange | staging | model ms | ratio | plan+first ms |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    if (!creation.empty())
      std::printf("| %d | NCCL communicator of the axis, made once (creation + warm-up) | - | - | - | - | - | - | "
                  "%s |\n",
                  size, creation.c_str());
    double best = 0, one = 0;
    for (const Row& r : rows) {
      if (r.model_ms > 0)
        std::printf("| %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f |\n", size, r.path.c_str(), r.ms,
                    r.local_ms, r.exchange_ms, r.staging_ms, r.model_ms, r.ms / r.model_ms, r.first_ms);
      else
        std::printf("| 1 | %s | %.3f | - | - | - | - | - | %.1f |\n", r.path.c_str(), r.ms, r.first_ms);
      if (r.model_ms > 0 && (best == 0 || r.ms < best)) best = r.ms;
      if (r.model_ms == 0) one = r.ms;
    }
    if (one > 0 && best > 0)
      std::printf("block lines M = %d %lldx%lldx%lld: 1 GPU %.3f ms, %d GPUs %.3f ms (fastest path above): speed-up "
                  "%.2fx (target >= 1.7x)\n",
                  M, (long long)n[0], (long long)n[1], (long long)n[2], one, size, best, one / best);
  }
  MPI_Finalize();
  return rc;
}
