// bench_mpi_heat: weak scaling of the FULL distributed heat ADI step (adi::AdiSolver on
// adi::mpi::subdomain, Douglas, Dirichlet faces): N^3 nodes per rank (default 512^3), the global grid growing with
// the ranks along the split axes.
//
//   mpirun -np 2 bench_mpi_heat                          # device memory, 512^3 per rank, splits z, y, x
//   mpirun -np 4 bench_mpi_heat --n 256 --splits z,zy    # one and two split axes
//   mpirun -np 1 bench_mpi_heat --memory host --n 128
//   mpirun -np 2 bench_mpi_heat --strong --splits z,y,x  # strong scaling: 512^3 in all
//
// Its own harness rather than Google Benchmark: a step is collective, so every rank repeats
// in lockstep. Rows: the 1-rank reference (rank 0 alone on its own communicator, N^3; the
// others wait), then every requested split over all ranks. Per repetition: barrier, one
// step, then the slowest rank's time counts, and so does the slowest rank's time of every
// part (StepTimings: explicit part less the halo exchange in it, halo, boundary, implicit
// per axis and the reduced-system exchange inside it); medians over --reps after one warm-up step (plan
// creation + first step reported apart). In the same run it measures the copy bandwidth
// of the memory u lives in (a device-to-device or host memcpy) and, per split axis, the
// network model of ProcessGrid (allreduce and neighbour latency, bandwidth). Model per
// step (bytes per rank / copy bandwidth + exchange latencies):
//   explicit part W = U + dt F(U): read U, write W                     2 arrays
//   stage along an unsplit axis: right-hand side + sweep (device: one fused kernel,
//     read W, U, write W; host: the right-hand side pass, then read d, write u)
//                                                              device 3, host 5 arrays
//   stage along a split axis: right-hand side (read W, U, write W)      3 arrays
//     + partition method, shared bands (reduce: read d, write u;
//       back-substitution: read u, write u)                             4 arrays
//     + allreduce latency + exchanged bytes / network bandwidth
//   halo along a split axis: 2 neighbour latencies + 2 faces / network bandwidth
// Weak-scaling efficiency = t(1 rank) / t(P ranks); the model's own ratio m(1) / m(P) says how
// much of the loss the partition method's extra passes explain (splitting a line adds memory
// passes, so the fair target is the model, not 100%).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "adi/boundary.hpp"
#include "adi/field.hpp"
#include "benchmarks/mpi_bench_util.hpp"
#include "adi/grid.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "adi/mpi/subdomain.hpp"
#include "adi/scheme.hpp"
#include "solvers/cuda/backend.hpp"

#if defined(ADI_HAVE_CUDA)
// --profile: the CUDA runtime's profiler range (linked through adi_cuda's cudart_static),
// declared here so that this host TU needs no CUDA headers; cudaError_t is an int-sized enum.
extern "C" int cudaProfilerStart(void);
extern "C" int cudaProfilerStop(void);
#endif

namespace {

using namespace adi;

using bench::median;


struct Args {
  index_t n = 512;
  int reps = 5;
  std::string memory = "device";
  std::string precision = "double";
  std::string splits = "z,y,x,zy";
  std::string strategy = "automatic";
  std::string transport = "automatic";  // of the split axes' reduced rows and of the halo
  bool function_bc = false;
  bool strong = false;
  std::string rhs = "passes";  // --rhs passes|separate|both: the split stage's right-hand side in
                               // the partition passes (stop 30), in a separate pass (before), or both rows
  bool separate_rhs = false;   // this case's (set per row from rhs)
  std::string prefetch = "on";  // --prefetch on|off|both: the partition passes' rows loaded a chunk ahead
                                // of their stores (stop 31), one at a time (before), or both rows
  bool no_prefetch = false;     // this case's (set per row from prefetch)
  std::string l2 = "on";  // --l2 on|off|both: with prefetch, rows also requested into L2 ahead and the x
                          // stage's V read once per row (stop 32), or not (stop 31's passes), or both rows
  bool no_l2 = false;     // this case's (set per row from l2)
  std::string spike = "on";  // --spike on|off|both: the split passes with shared bands in the SPIKE form (stop 33,
                             // DistributedOptions::device_spike, the default), or not, or both rows
  bool use_spike = false;     // this case's (set per row from spike)
  std::string compact = "on";  // --compact on|off|both: the SPIKE form's compact tail (stop 37,
                               // DistributedOptions::spike_compact, the default since stop 38), or not
                               // (the tail of stop 36), or both rows
  bool use_compact = false;     // this case's (set per row from compact; SPIKE rows only)
  std::string fold = "default";  // --fold default|separate|both: the operator's explicit fold as built (CUDA:
                                 // stencil), or ExplicitFold::separate (apply() then the stage), or both rows
  bool separate_fold = false;    // this case's (set per row from fold)
  bool profile = false;  // --profile: no 1-rank reference; the second timed step of each split inside
                         // cudaProfilerStart/Stop (nsys --capture-range=cudaProfilerApi, ncu --profile-from-start off)
  bool pair_bandwidth = true;  // --no-nccl-bandwidth: skip the NCCL pair bandwidth (e.g. under memcheck)  // --strong: the global grid is N^3 whatever the ranks (strong scaling)
};

struct Row {
  int ranks = 1;
  std::string split, grid;
  double ms = 0, explicit_ms = 0, halo_ms = 0, boundary_ms = 0, axis_ms[3]{}, exchange_ms = 0;
  double model_ms = 0, first_ms = 0, copy_gbs = 0;
  int per_gpu = 1;  // ranks sharing one GPU (device runs with fewer GPUs than ranks)
  std::string strategies;
};

// Timings of one step (the difference of the accumulated StepTimings; the halo exchange
// happens inside the explicit part and is reported apart).
struct Parts {
  double expl, halo, boundary, axis[3], exchange;
};
Parts parts_of(const StepTimings& t) {
  return {t.explicit_part - t.halo, t.halo, t.boundary, {t.implicit[0], t.implicit[1], t.implicit[2]},
          t.line_exchange[0] + t.line_exchange[1] + t.line_exchange[2]};
}

Executor rank_executor(const Args& args) {
  if (args.memory != "device") return Executor::host();
  return adi::mpi::rank_gpu();  // fewer GPUs than ranks: they share
}

// One row, collective over `comm` (ranks dims[0]*dims[1]*dims[2]).
template <class T>
Row run_case(const Args& args, MPI_Comm comm, std::array<int, 3> dims, const Executor& exec) {
  const index_t f = args.strong ? 1 : 0;  // strong scaling: N^3 in all; weak: N^3 per rank
  const std::array<index_t, 3> n{f ? args.n : args.n * dims[0], f ? args.n : args.n * dims[1],
                                 f ? args.n : args.n * dims[2]};
  const Grid grid = Grid::uniform({n[0], n[1], n[2]}, {0, 0, 0}, {1, 1, 1});
  mpi::ProcessGrid procs(comm, dims);
  mpi::Decomposition dec(procs, n);
  // Dirichlet 0 (constant: evaluated once) or the exact decaying mode (evaluated on the
  // host every step: --bc function shows that cost in the boundary column).
  const double pi = std::acos(-1.0);
  auto mode = [pi](double t, double x, double y, double z) {
    return std::exp(-3 * pi * pi * t) * std::sin(pi * x) * std::sin(pi * y) * std::sin(pi * z);
  };
  const BoundaryConditions bc =
      BoundaryConditions::all(args.function_bc ? Boundary::dirichlet(mode) : Boundary::dirichlet(0.0));
  const double h = 1.0 / double(std::max(n[0], std::max(n[1], n[2])) - 1);
  const double dt = 2.0 * h * h;  // max k dt / h^2 ~ 2-8: a typical ADI step
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // Copy bandwidth of u's memory, in the same run (read + write counted).
  const index_t N = dec.local_box().size();
  const std::size_t bytes = std::size_t(N) * sizeof(T);
  double copy_bw = 0;
  {
    Array<T> a(N, exec), b(N, exec);
    std::vector<double> tc;
    for (int i = 0; i < 5; ++i) {
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      detail::copy_bytes(b.data(), exec.memory_space(), a.data(), exec.memory_space(), bytes);
      exec.synchronize();
      tc.push_back(MPI_Wtime() - t0);
    }
    tc.erase(tc.begin());
    copy_bw = 2.0 * double(bytes) / bench::max_over(median(tc), comm);
  }

  MPI_Barrier(comm);
  const double tf = MPI_Wtime();
  mpi::DistributedOptions lines;
  lines.strategy = mpi::strategy_from_name(args.strategy);
  lines.transport = mpi::transport_from_name(args.transport);
  lines.stage_in_passes = !args.separate_rhs;
  lines.device_prefetch = !args.no_prefetch;
  lines.device_l2_prefetch = !args.no_l2;
  lines.device_spike = lines.host_spike = args.use_spike;  // (host memory: the SPIKE form's host loops)
  lines.spike_compact = args.use_compact;
  AdiSolver<T> heat(grid, Pde::heat(1, 1, 1), bc, Scheme::douglas(), exec, mpi::subdomain(procs, dec, lines));
  if (args.separate_fold) heat.op().set_explicit_fold(Operator<T>::ExplicitFold::separate);
  const Operator<T>& op = heat.op();
  Field<T> u = op.make_field();
  const double fill0 = MPI_Wtime();  // the initial field is not part of "plan + first step"
  {
    // mode(0) is a product of sines: set up per axis, then multiply (fast for 512^3).
    const auto e = op.extents(), org = op.origin();
    Field<T> u0(e[0], e[1], e[2]);
    std::array<std::vector<double>, 3> s;
    for (int a = 0; a < 3; ++a)
      for (index_t i = 0; i < e[a]; ++i) s[a].push_back(std::sin(pi * grid.axis(Axis(a))[org[a] + i]));
    for (index_t k = 0; k < e[2]; ++k)
      for (index_t j = 0; j < e[1]; ++j)
        for (index_t i = 0; i < e[0]; ++i)
          u0(i, j, k) = T(s[0][std::size_t(i)] * s[1][std::size_t(j)] * s[2][std::size_t(k)]);
    u.copy_from(u0);
  }
  const double fill = MPI_Wtime() - fill0;
  heat.step(u, 0.0, dt);  // warm-up: plans' first solves, boundary data
  exec.synchronize();
  const double first = bench::max_over(MPI_Wtime() - tf - fill, comm);

  std::vector<double> t, te, th, tb, tx, ty, tz, tex;
  for (int r = 0; r < args.reps; ++r) {
    const Parts before = parts_of(heat.timings());
    const bool capture = args.profile && r == std::min(1, args.reps - 1) && exec.is_cuda();
    MPI_Barrier(comm);
#if defined(ADI_HAVE_CUDA)
    if (capture) cudaProfilerStart();
#endif
    const double t0 = MPI_Wtime();
    heat.step(u, double(r + 1) * dt, dt);
    exec.synchronize();
#if defined(ADI_HAVE_CUDA)
    if (capture) cudaProfilerStop();
#endif
    t.push_back(bench::max_over(MPI_Wtime() - t0, comm));
    const Parts after = parts_of(heat.timings());
    te.push_back(bench::max_over(after.expl - before.expl, comm));
    th.push_back(bench::max_over(after.halo - before.halo, comm));
    tb.push_back(bench::max_over(after.boundary - before.boundary, comm));
    tx.push_back(bench::max_over(after.axis[0] - before.axis[0], comm));
    ty.push_back(bench::max_over(after.axis[1] - before.axis[1], comm));
    tz.push_back(bench::max_over(after.axis[2] - before.axis[2], comm));
    tex.push_back(bench::max_over(after.exchange - before.exchange, comm));
  }
  // A NaN anywhere would mean a broken step, not a timing: say so.
  {
    const Field<T> uh = u.to_host();
    const auto lo = op.owned_lo(), hi = op.owned_hi();
    int bad = 0;
    for (index_t k = lo[2]; k <= hi[2]; k += 7)
      for (index_t j = lo[1]; j <= hi[1]; j += 5)
        for (index_t i = lo[0]; i <= hi[0]; i += 3) bad += !std::isfinite(double(uh(i, j, k)));
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any && rank == 0) std::printf("WARNING: non-finite values in u after the run\n");
  }

  // The traffic model.
  double model = 0;
  double arrays = 2.0;  // explicit part
  for (int a = 0; a < 3; ++a) {
    arrays += 3.0;  // the stage's right-hand side (device: fused with the sweep of an unsplit axis)
    if (dims[a] > 1) {
      // The partition method with shared bands (alpha, gamma one row for all lines): reduce
      // reads d, writes u; back-substitution reads u, writes u. Device lines with the
      // right-hand side formed in the reduce (the default): base and V_old read, u written,
      // then back-substitution: 5 arrays for the stage instead of 3 + 4.
      arrays += exec.is_cuda() && !args.separate_rhs ? 2.0 : 4.0;
      const mpi::NetworkModel& net = procs.network(Axis(a));
      // Reduced rows: 8 values per line out, 2 back (allgather-like volume per rank).
      const double lines = double(N) / double(dec.extents()[std::size_t(a)]);
      model += net.latency + 10.0 * lines * sizeof(T) * (dims[a] - 1) / dims[a] / net.bandwidth;
      const double face = lines * sizeof(T);
      model += 2.0 * net.p2p_latency + 2.0 * face / net.bandwidth;
    } else if (!exec.is_cuda()) {
      arrays += 2.0;
    }
  }
  model += arrays * double(bytes) / copy_bw;

  Row row;
  row.ranks = size;
  char g[64];
  std::snprintf(g, sizeof g, "%lldx%lldx%lld", (long long)n[0], (long long)n[1], (long long)n[2]);
  row.grid = g;
  row.ms = 1e3 * median(t);
  row.explicit_ms = 1e3 * median(te);
  row.halo_ms = 1e3 * median(th);
  row.boundary_ms = 1e3 * median(tb);
  row.axis_ms[0] = 1e3 * median(tx);
  row.axis_ms[1] = 1e3 * median(ty);
  row.axis_ms[2] = 1e3 * median(tz);
  row.exchange_ms = 1e3 * median(tex);
  row.model_ms = 1e3 * model;
  row.first_ms = 1e3 * first;
  row.copy_gbs = copy_bw / 1e9;
  row.strategies =
      std::string(op.line_strategy(Axis::x)) + "/" + op.line_strategy(Axis::y) + "/" + op.line_strategy(Axis::z);
  return row;
}

// NCCL bandwidth between GPU pairs (ranks 0 <-> 1, 2 <-> 3, ...; NVLink on one host), measured
// in this run: each rank sends 256 MiB to its pair and receives as much (both directions at
// once); GB/s each way, the slowest pair's median of 5. 0 when not measurable (host memory,
// one rank, no NCCL, ranks sharing a GPU). Collective over MPI_COMM_WORLD.
double nccl_pair_gbs(const Executor& exec) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!exec.is_cuda() || size < 2 || !mpi::nccl::built()) return 0;
  if (!mpi::nccl::shared_gpu_report(MPI_COMM_WORLD, exec.device()).empty()) return 0;
  mpi::ProcessGrid procs(MPI_COMM_WORLD, {1, 1, size});
  std::shared_ptr<mpi::nccl::Communicator> comm = mpi::nccl::axis_communicator(procs, Axis::z, exec.device());
  const index_t count = index_t(32) << 20;  // 256 MiB of doubles
  Array<double> send(count, exec), recv(count, exec);
  const int me = procs.coord(Axis::z), peer = (me ^ 1) < size ? (me ^ 1) : -1;
  const std::size_t bytes = std::size_t(count) * sizeof(double);
  std::vector<double> t;
  for (int i = 0; i < 6; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    mpi::nccl::send_recv(*comm, send.data(), peer, recv.data(), peer, bytes, exec.stream());
    exec.synchronize();
    t.push_back(MPI_Wtime() - t0);
  }
  t.erase(t.begin());
  return double(bytes) / bench::max_over(median(t), MPI_COMM_WORLD) / 1e9;
}

// dims for a split spec over `size` ranks: "z" -> 1x1xP, "zy" -> two factors, as square as possible.
bool dims_for(const std::string& spec, int size, std::array<int, 3>& dims) {
  dims = {1, 1, 1};
  auto axis = [](char c) { return c == 'x' ? 0 : c == 'y' ? 1 : c == 'z' ? 2 : -1; };
  if (spec.size() == 1 && axis(spec[0]) >= 0) {
    dims[axis(spec[0])] = size;
    return size > 1;
  }
  if (spec.size() == 2 && axis(spec[0]) >= 0 && axis(spec[1]) >= 0 && spec[0] != spec[1]) {
    int a = int(std::sqrt(double(size)));
    while (a > 1 && size % a != 0) --a;
    if (a < 2) return false;
    dims[axis(spec[0])] = size / a;
    dims[axis(spec[1])] = a;
    return true;
  }
  return false;
}

template <class T>
void run(const Args& args, int rank, int size) {
  const Executor exec = rank_executor(args);
  std::vector<Row> rows;
  // The 1-rank reference: rank 0 alone.
  {
    MPI_Comm solo;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
    Row r;
    if (rank == 0 && !args.profile) {
      r = run_case<T>(args, solo, {1, 1, 1}, exec);
      r.split = "-";
    }
    if (solo != MPI_COMM_NULL) MPI_Comm_free(&solo);
    MPI_Barrier(MPI_COMM_WORLD);
    rows.push_back(r);
  }
  std::string spec;
  for (std::size_t i = 0; i <= args.splits.size(); ++i) {
    if (i < args.splits.size() && args.splits[i] != ',') {
      spec += args.splits[i];
      continue;
    }
    std::array<int, 3> dims{};
    if (!spec.empty() && dims_for(spec, size, dims)) {
      auto wanted = [](const std::string& choice, const char* off, int v) {
        return v == 0 ? choice != off : choice == off || choice == "both";
      };
      // v & 1: separate right-hand side, 2: no prefetch, 4: no L2, 8: separate fold, 16: spike
      auto choice = [](const std::string& c, bool on) { return c == "both" || (c == "on") == on; };
      for (int v = 0; v < 64; ++v) {
        if (!choice(args.spike, (v & 16) != 0)) continue;
        // v & 32: the compact tail (SPIKE rows only; --compact both: against the SPIKE row without it)
        if ((v & 32) && (!(v & 16) || (v & 15))) continue;
        if ((v & 16) && !choice(args.compact, (v & 32) != 0)) continue;
        if ((v & 16) && (v & 15) && args.spike == "both") continue;  // (SPIKE: against the default row only)
        if (!wanted(args.rhs, "separate", v & 1) || !wanted(args.prefetch, "off", (v >> 1) & 1) ||
            !wanted(args.l2, "off", (v >> 2) & 1) || !wanted(args.fold, "separate", (v >> 3) & 1))
          continue;
        if ((v & 8) && (v & 7)) continue;  // (the separate fold: against the default row only)
        if ((v & 2) && (v & 4) && args.l2 == "both") continue;  // (no prefetch: no L2 either; one row)
        Args case_args = args;
        case_args.separate_rhs = (v & 1) != 0;
        case_args.no_prefetch = (v & 2) != 0;
        case_args.no_l2 = (v & 4) != 0;
        case_args.separate_fold = (v & 8) != 0;
        case_args.use_spike = (v & 16) != 0;
        case_args.use_compact = (v & 32) != 0;
        Row r = run_case<T>(case_args, MPI_COMM_WORLD, dims, exec);
        r.split = spec + (v & 1 ? " sep.rhs" : "") + (v & 2 ? " no-pf" : "") + (v & 4 ? " no-l2" : "") +
                  (v & 8 ? " sep.fold" : "") + (v & 16 && args.spike == "both" ? " spike" : "") +
                  (v & 32 && args.compact == "both" ? " cpt" : "");
        if (exec.is_cuda()) r.per_gpu = (size + cuda_backend::device_count() - 1) / cuda_backend::device_count();
        rows.push_back(r);
      }
    } else if (!spec.empty() && rank == 0 && size > 1) {
      std::printf("split %s: not possible with %d ranks, skipped\n", spec.c_str(), size);
    }
    spec.clear();
  }
  const double pair_gbs = args.pair_bandwidth ? nccl_pair_gbs(exec) : 0.0;
  if (rank != 0) return;
  std::printf("\nbench_mpi_heat: full Douglas heat step, %lld^3 nodes %s, %s, %s memory, %s Dirichlet faces, "
              "%d rank(s)%s; CUDA-aware MPI: %s\n",
              (long long)args.n, args.strong ? "in all (strong scaling)" : "per rank", args.precision.c_str(), args.memory.c_str(),
              args.function_bc ? "function" : "constant", size,
              exec.is_cuda() && size > cuda_backend::device_count() ? " (ranks share GPUs)" : "",
              mpi::cuda_aware() ? "yes" : "no");
  std::printf("| ranks | split | global grid | ms/step | explicit | halo | boundary | x | y | z | of which exchange | "
              "model ms | ratio | weak eff. | per-GPU eff. | model eff. | plan+first ms | copy GB/s | lines x/y/z |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const Row& ref = rows.front();
  for (const Row& r : rows) {
    if (r.ms <= 0) continue;  // --profile: no reference row
    std::printf("| %d | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.0f%% | "
                "%.0f%% | %.0f%% | %.1f | %.0f | %s |\n",
                r.ranks, r.split.c_str(), r.grid.c_str(), r.ms, r.explicit_ms, r.halo_ms, r.boundary_ms, r.axis_ms[0],
                r.axis_ms[1], r.axis_ms[2], r.exchange_ms, r.model_ms, r.ms / r.model_ms, 100.0 * ref.ms / r.ms,
                100.0 * r.per_gpu * ref.ms / r.ms, 100.0 * ref.model_ms / r.model_ms, r.first_ms, r.copy_gbs,
                r.strategies.c_str());
  }
  std::printf("(parts: the slowest rank's median each; explicit without the halo exchange in it; x/y/z: "
              "right-hand side, Dirichlet rows and the line solve of that stage; per-GPU eff. = weak eff. x ranks "
              "per GPU, the figure that means something when ranks share a GPU; plan+first: construction + first "
              "step, the initial field excluded)\n");
  if (pair_gbs > 0)
    std::printf("NCCL bandwidth between GPU pairs (NVLink on one host), measured in this run: %.1f GB/s each way "
                "(256 MiB both directions at once)\n", pair_gbs);
  std::printf("transport of the split axes (reduced rows and halo): %s\n", args.transport.c_str());
  if (args.strong)
    for (const Row& r : rows)
      if (r.ranks > 1)
        std::printf("strong scaling %s, %s split over %d rank(s): speed-up %.2fx over 1 rank (%.3f -> %.3f ms/step)\n",
                    r.grid.c_str(), r.split.c_str(), r.ranks, ref.ms / r.ms, ref.ms, r.ms);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args args;
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        rc = 2;
        return "";
      }
      return argv[++i];
    };
    if (a == "--n") args.n = std::atoll(value().c_str());
    else if (a == "--reps") args.reps = std::atoi(value().c_str());
    else if (a == "--memory") args.memory = value();
    else if (a == "--precision") args.precision = value();
    else if (a == "--splits") args.splits = value();
    else if (a == "--strategy") args.strategy = value();
    else if (a == "--bc") args.function_bc = value() == "function";
    else if (a == "--strong") args.strong = true;
    else if (a == "--profile") args.profile = true;
    else if (a == "--rhs") args.rhs = value();
    else if (a == "--prefetch") args.prefetch = value();
    else if (a == "--l2") args.l2 = value();
    else if (a == "--fold") args.fold = value();
    else if (a == "--spike") args.spike = value();
    else if (a == "--compact") args.compact = value();
    else if (a == "--no-nccl-bandwidth") args.pair_bandwidth = false;
    else if (a == "--transport") args.transport = value();
    else if (a == "--help" || a == "-h") {
      if (rank == 0)
        std::printf("bench_mpi_heat [--n N (per rank, 512)] [--reps R (5)] [--memory device|host] "
                    "[--precision double|float] [--splits z,y,x,zy] [--strategy automatic|allgather|alltoall|pcr] "
                    "[--bc constant|function] [--strong (N^3 in all, not per rank)] [--no-nccl-bandwidth] "
                    "[--profile (no 1-rank reference; the 2nd timed step in a cudaProfilerStart/Stop range)] "
                    "[--rhs passes|separate|both (split stage's right-hand side in the partition passes or apart)] "
                    "[--prefetch on|off|both (partition passes: rows loaded a chunk ahead, or one at a time)] "
                    "[--l2 on|off|both (with prefetch: rows also requested into L2 ahead, x stage's V read once)] "
                    "[--fold default|separate|both (the operator's explicit fold as built, or apply() then the stage)] "
                    "[--spike on|off|both (split passes: the SPIKE form, the local solve by the single-GPU kernels)] "
                    "[--compact on|off|both (SPIKE rows: the compact tail, spike_compact)] "
                    "[--transport automatic|host_staging|nccl|cuda_aware_mpi]\n");
      rc = -1;
    } else {
      rc = 2;
    }
  }
  if (rc == 0 && (args.n < 4 || args.reps < 1 || (args.memory != "device" && args.memory != "host") ||
                  (args.precision != "double" && args.precision != "float") ||
                  (args.rhs != "passes" && args.rhs != "separate" && args.rhs != "both") ||
                  (args.prefetch != "on" && args.prefetch != "off" && args.prefetch != "both") ||
                  (args.l2 != "on" && args.l2 != "off" && args.l2 != "both") ||
                  (args.fold != "default" && args.fold != "separate" && args.fold != "both") ||
                  (args.spike != "on" && args.spike != "off" && args.spike != "both") ||
                  (args.compact != "on" && args.compact != "off" && args.compact != "both")))
    rc = 2;
  if (rc == 0 && args.memory == "device" && !Executor::cuda_available()) {
    if (rank == 0) std::fprintf(stderr, "bench_mpi_heat: no CUDA device; use --memory host\n");
    rc = 2;
  }
  if (rc == 2 && rank == 0) std::fprintf(stderr, "bench_mpi_heat: bad arguments (see --help)\n");
  if (rc == 0) {
    try {
      if (args.precision == "float")
        run<float>(args, rank, size);
      else
        run<double>(args, rank, size);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_mpi_heat: rank %d: %s\n", rank, e.what());
      rc = 1;
    }
  }
  MPI_Finalize();
  return rc < 0 ? 0 : rc;
}
