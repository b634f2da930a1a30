// bench_mpi_tridiagonal: distributed tridiagonal line solves (adi::mpi, the partition
// method) on the public case 128 x 128 x 4096 fp64: 16,384 lines of 4096 rows along z,
// split along z over the ranks of MPI_COMM_WORLD.
//
//   mpirun -np 2 bench_mpi_tridiagonal                 # host and (when present) device memory
//   mpirun -np 4 bench_mpi_tridiagonal --n 64x64x1024 --memory host --reps 5
//
// Its own harness rather than Google Benchmark: every rank must run the same repetitions
// in lockstep (a solve is collective). Per repetition: inputs restored (not timed),
// barrier, solve, device sync, then the slowest rank's time counts; medians after one
// warm-up. In the same run it measures the copy bandwidth of the memory the arrays live
// in and the axis communicator's latency/bandwidth, and prints for every strategy:
// ms per solve, the split between local passes, reduced-system exchange and (device)
// staging copies (device plans: per transport, --transport), and the ratio to the traffic model
//   model = 5 arrays * local nodes * sizeof(T) / copy bandwidth       (unsplit: read a, b, c, d, write u)
//   model = 11 arrays * local nodes * sizeof(T) / copy bandwidth      (split: the partition method's passes)
//         + allreduce latency + exchanged bytes / network bandwidth,
//   model = (5 + 8 R / m) arrays ... + the same exchange                 (split, the per-line SPIKE form of
//           stop 35, window R: y 5 arrays, the windows read a, b, c and write W, Z on 2R rows of m),
// each split case in both forms (--form all, the default; spike / partition: one of them; the SPIKE
// form for each window of --spike-window, e.g. 64,128, and y kernel of --spike-kernel, e.g.
// automatic,measure,cuda_thomas_pcr_long; host memory: the SPIKE form with host_spike),
// plus plan creation + first solve.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "adi/field.hpp"
#include "benchmarks/mpi_bench_util.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "solvers/cuda/backend.hpp"

namespace {

using namespace adi;
using adi::mpi::ReducedSolveSite;
using adi::mpi::ReducedStrategy;
using adi::mpi::Transport;

double now() { return MPI_Wtime(); }

using bench::median;


struct Row {
  int ranks;
  std::string memory, strategy, transport;
  double ms, local_ms, exchange_ms, staging_ms, model_ms, first_ms;
  double exch_kib;
  double wait_ms = 0;
  double diff = -1;  // largest |u - u of the memory's first row| / largest |u| over the ranks (-1: the first)
  double y_ms = 0;   // the per-line SPIKE form's y (part of local ms)
};

struct Args {
  std::array<index_t, 3> n{128, 128, 4096};
  std::string memory = "both";
  int reps = 10;
  std::string strategy = "all";
  index_t weak = 0;            // > 0: the heat-sweep weak-scaling series, weak^3 nodes per rank
  std::string split = "z";     // its split axis (or axes, e.g. "zy")
  int subsegments = 0;         // device plans: sub-segments per line segment (0: automatic)
  std::string transport = "all";    // device plans of a split axis: all, or one transport's name
  std::string reduced_solve = "automatic";  // with one transport: automatic, host, device
  bool nccl_probe = false;     // try ncclCommInitRank without the one-GPU-per-rank check
  bool prefetch = true;        // --no-prefetch: the partition passes one row at a time (before stop 31)
  bool l2 = true;              // --no-l2: rows not requested into L2 ahead (stop 31's passes)
  std::string form = "all";    // split cases: all (partition passes and SPIKE), spike, partition
  std::vector<int> windows{64};  // --spike-window: the per-line SPIKE form's windows (rows at each end)
  std::vector<std::string> spike_kernels{"measure"};  // --spike-kernel: y's kernels (a name, automatic, measure)
};

// The (transport, reduced-solve site) pairs a device run compares.
std::vector<std::pair<Transport, ReducedSolveSite>> transport_list(const Args& args) {
  if (args.transport == "all")
    return {{Transport::host_staging, ReducedSolveSite::host},
            {Transport::host_staging, ReducedSolveSite::device},
            {Transport::cuda_aware_mpi, ReducedSolveSite::automatic},
            {Transport::nccl, ReducedSolveSite::automatic}};
  const ReducedSolveSite site = args.reduced_solve == "host"     ? ReducedSolveSite::host
                                : args.reduced_solve == "device" ? ReducedSolveSite::device
                                                                 : ReducedSolveSite::automatic;
  return {{adi::mpi::transport_from_name(args.transport), site}};
}

// One row of the weak-scaling series.
struct WeakRow {
  int ranks;
  std::string memory, split, grid;
  double ms, axis_ms[3], local_ms, exchange_ms, staging_ms, model_ms, first_ms;
};

// Arrays of one rank in one memory space: a, b, c, d, the saved d, u.
template <class T>
struct Arrays {
  Array<T> a, b, c, d, d0, u;
};

// The NCCL creation row of the table (device plans of a split axis), printed before the plans' rows.
std::string creation_row;

template <class T>
void run_case(const Args& args, bool device, int rank, int size, std::vector<Row>& rows) {
  const Executor exec = device ? adi::mpi::rank_gpu() : Executor::host();  // fewer GPUs than ranks: they share
  adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, {1, 1, size});
  adi::mpi::Decomposition dec(procs, args.n);
  const Box3 box = dec.local_box();
  const index_t N = box.size();
  // Diagonally dominant random bands, d; the same on host and device.
  std::vector<T> h(static_cast<std::size_t>(N));
  Arrays<T> A{Array<T>(N, exec), Array<T>(N, exec), Array<T>(N, exec), Array<T>(N, exec), Array<T>(N, exec),
              Array<T>(N, exec)};
  std::mt19937_64 rng(1234 + unsigned(rank));
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto fill = [&](Array<T>& arr, double lo, double hi) {
    for (T& x : h) x = T(lo + (hi - lo) * u01(rng));
    arr.copy_from_host(h.data());
  };
  fill(A.a, -1, 1);
  fill(A.b, 3, 4);
  fill(A.c, -1, 1);
  fill(A.d, -1, 1);
  A.d0.copy_from_host(h.data());
  const std::size_t bytes = std::size_t(N) * sizeof(T);
  auto restore = [&] {
    detail::copy_bytes(A.d.data(), exec.memory_space(), A.d0.data(), exec.memory_space(), bytes);
  };
  // Copy bandwidth of this memory, in the same run (read + write counted).
  std::vector<double> tc;
  for (int i = 0; i < 4; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    restore();
    exec.synchronize();
    tc.push_back(now() - t0);
  }
  const double copy_bw = 2.0 * double(bytes) / bench::max_over(median(tc));
  const auto& net = procs.network(Axis::z);
  // Every row's solution against the first row's (the forms and strategies solve the same system).
  std::vector<T> u_first, u_here(static_cast<std::size_t>(N));
  auto difference = [&]() -> double {
    A.u.copy_to_host(u_here.data());
    if (u_first.empty()) {
      u_first = u_here;
      return -1;
    }
    double dm = 0, um = 0;
    for (std::size_t i = 0; i < u_here.size(); ++i) {
      dm = std::max(dm, std::abs(double(u_here[i]) - double(u_first[i])));
      um = std::max(um, std::abs(double(u_first[i])));
    }
    double g[2] = {dm, um}, w[2] = {0, 0};
    MPI_Allreduce(g, w, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return w[1] > 0 ? w[0] / w[1] : w[0];
  };

  std::vector<ReducedStrategy> strategies;
  if (size == 1) {
    strategies = {ReducedStrategy::automatic};  // the single-device plan, nothing to exchange
  } else if (args.strategy == "all") {
    strategies = {ReducedStrategy::automatic, ReducedStrategy::allgather, ReducedStrategy::alltoall,
                  ReducedStrategy::pcr};
  } else {
    strategies = {adi::mpi::strategy_from_name(args.strategy)};
  }
  std::vector<std::pair<Transport, ReducedSolveSite>> transports{{Transport::automatic, ReducedSolveSite::automatic}};
  if (device && size > 1) transports = transport_list(args);
  // The rows: strategy x transport.
  struct Case {
    ReducedStrategy s;
    Transport tr;
    ReducedSolveSite site;
    int window;  // > 0: the per-line SPIKE form with this window; 0: the partition passes
    std::string kernel;  // its y kernel (DistributedOptions::spike_kernel / spike_measure)
  };
  std::vector<int> forms;  // (split cases) the partition passes (0) and / or the SPIKE form's windows
  if (args.form != "spike") forms.push_back(0);
  if (args.form != "partition") forms.insert(forms.end(), args.windows.begin(), args.windows.end());
  if (size == 1) forms = {0};
  std::vector<Case> cases;
  for (ReducedStrategy s : strategies)
    for (const auto& [tr, site] : transports)
      for (int w : forms)
        for (const std::string& k : w > 0 ? args.spike_kernels : std::vector<std::string>{"-"}) {
          // pcr exchanges and eliminates on the host: only host staging with the host solve.
          if (device && s == ReducedStrategy::pcr &&
              (tr != Transport::host_staging || site == ReducedSolveSite::device) && args.transport == "all")
            continue;
          cases.push_back({s, tr, site, w, k});
        }
  // The axis's NCCL communicator, made once and timed on its own row; the plans below reuse it.
  if (device && size > 1) {
    const std::string made = bench::nccl_creation(procs, Axis::z, exec.device());
    if (!made.empty())
      creation_row = "| " + std::to_string(size) +
                     " | device | NCCL communicator of the axis, made once (creation + warm-up) | nccl | - | - | - | "
                     "- | - | - | - | - | " + made + " |\n";
  }
  for (const Case& cs : cases) {
    const ReducedStrategy s = cs.s;
    const Transport tr = cs.tr;
    const ReducedSolveSite site = cs.site;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    adi::mpi::DistributedOptions opts{false, s};
    opts.device_subsegments = args.subsegments;
    opts.device_prefetch = args.prefetch;
    opts.device_l2_prefetch = args.l2;
    opts.transport = tr;
    opts.reduced_solve = site;
    opts.timing_barrier = true;  // waiting for the slower rank timed apart from the exchange
    opts.spike_lines = opts.host_spike = cs.window > 0;
    if (cs.window == 0) opts.spike_lines_rows = 0;  // the partition row: not the SPIKE form by length
    opts.spike_window = std::max(1, cs.window);
    opts.spike_measure = cs.kernel == "measure";
    std::optional<adi::mpi::DistributedTridiagonalPlan<T>> made;
    try {
      if (cs.window > 0 && cs.kernel != "measure") opts.spike_kernel = adi::kernel_from_name(cs.kernel);
      made.emplace(procs, Axis::z, exec, box, opts);
    } catch (const adi::Error& e) {  // the same on every rank (bad kernel names, layouts a kernel cannot run)
      if (rank == 0)
        std::printf("not run: %s, transport %s: %s\n", adi::mpi::strategy_name(s), adi::mpi::transport_name(tr),
                    e.what());
      continue;
    }
    auto& plan = *made;
    plan.solve(Bands<T>{A.a.data(), A.b.data(), A.c.data()}, A.d.data(), A.u.data());
    exec.synchronize();
    const double first = bench::max_over(now() - t0);
    std::vector<double> t, tl, te, ts, tw, ty;
    for (int r = 0; r < args.reps; ++r) {
      restore();
      exec.synchronize();
      MPI_Barrier(MPI_COMM_WORLD);
      const double a0 = now();
      plan.solve(Bands<T>{A.a.data(), A.b.data(), A.c.data()}, A.d.data(), A.u.data());
      exec.synchronize();
      t.push_back(bench::max_over(now() - a0));
      tl.push_back(bench::max_over(plan.split() ? plan.last_local_seconds() : 0.0));
      te.push_back(bench::max_over(plan.split() ? plan.last_exchange_seconds() : 0.0));
      ts.push_back(bench::max_over(plan.split() ? plan.last_staging_seconds() : 0.0));
      tw.push_back(bench::max_over(plan.split() ? plan.last_wait_seconds() : 0.0));
      ty.push_back(bench::max_over(plan.split() ? plan.last_spike_y_seconds() : 0.0));
    }
    const double exch = bench::max_over(plan.split() ? plan.exchanged_bytes() : 0.0);
    // Unsplit: the minimum (read a, b, c, d, write u). Split: the passes the partition method
    // makes (reduce: read a, b, c, d, write u, alpha, gamma; back-substitution: read u,
    // alpha, gamma, write u) + the exchange.
    const bool spiked = plan.split() && std::string(plan.last_form()) == "spike";
    const double m_rows = double(box.extent(Axis::z));
    const double arrays = !plan.split() ? 5.0 : spiked ? 5.0 + 8.0 * double(plan.spike_window()) / m_rows : 11.0;
    const double model = arrays * double(bytes) / copy_bw + (plan.split() ? net.latency + exch / net.bandwidth : 0.0);
    std::string name = !plan.split() ? "single-device"
                       : s == ReducedStrategy::automatic
                           ? std::string("automatic->") + adi::mpi::strategy_name(plan.strategy())
                           : adi::mpi::strategy_name(s);
    if (device && plan.split() && !spiked) name += " S=" + std::to_string(plan.device_subsegments());
    if (plan.split() && cs.window > 0)  // the per-line SPIKE form (stop 35), or its fall-back
      name += (spiked ? " SPIKE R=" + std::to_string(plan.spike_window())
                      : " SPIKE R=" + std::to_string(plan.spike_window()) + " fell back: partition (" +
                            std::to_string(plan.spike_fallbacks()) + "x)") +
              (plan.spike_y_stream() > 0  // y by truncated sweeps (stop 41's default; not in place here)
                   ? " y:truncated sweeps " + std::to_string(plan.spike_y_stream())
                   : " y:" + (cs.kernel == "measure" ? std::string("measured->") : std::string()) +
                         adi::kernel_name(plan.spike_kernel()));
    else if (plan.split())
      name += " partition";
    std::string tname = !plan.split() ? "-" : !device ? "host MPI" : adi::mpi::transport_name(plan.transport());
    if (device && plan.split() && plan.transport() == Transport::host_staging)
      tname += plan.reduced_solve_on_device() ? " / device solve" : " / host solve";
    if (device && plan.split() && tr == Transport::automatic) tname = "automatic->" + tname;
    rows.push_back({size, device ? "device" : "host", name, tname, 1e3 * median(t), 1e3 * median(tl), 1e3 * median(te),
                    1e3 * median(ts), 1e3 * model, 1e3 * first, exch / 1024.0, 1e3 * median(tw), difference(),
                    1e3 * median(ty)});
    if (rank == 0)
      std::fprintf(stderr, "  %s %s %s: %.3f ms\n", device ? "device" : "host", name.c_str(), tname.c_str(),
                   rows.back().ms);
  }
  if (rank == 0) {
    std::printf("%s memory, %d rank(s): local box %lldx%lldx%lld, copy bandwidth %.1f GB/s; axis allreduce %.1f us, "
                "p2p %.1f us, %.2f GB/s (measured in %.1f ms)\n",
                device ? "device" : "host", size, (long long)box.nx, (long long)box.ny, (long long)box.nz,
                copy_bw / 1e9, net.latency * 1e6, net.p2p_latency * 1e6, net.bandwidth / 1e9,
                net.measure_seconds * 1e3);
  }
}

// The implicit part of a heat ADI step on a decomposed grid: solves along x, y and z
// (shared constant bands, as the heat step's (I - theta dt k D2) rows are) of weak^3
// nodes per rank, the global grid extended along the split axis. Per repetition the
// right-hand side is restored (not timed); the three solves are timed apart (a device
// sync after each), the slowest rank counting. Model per axis: unsplit 2 arrays (read d,
// write u) / copy bandwidth; split 8 arrays (reduce: read d, write u, alpha, gamma;
// back-substitution: read u, alpha, gamma, write u) / copy bandwidth + allreduce latency
// + exchanged bytes / network bandwidth.
template <class T>
void run_weak(const Args& args, bool device, char split, int rank, int size, std::vector<WeakRow>& rows) {
  const Executor exec = device ? adi::mpi::rank_gpu() : Executor::host();
  const int sa = split == 'x' ? 0 : split == 'y' ? 1 : 2;
  std::array<int, 3> dims{1, 1, 1};
  dims[sa] = size;
  std::array<index_t, 3> n{args.weak, args.weak, args.weak};
  n[sa] *= size;
  adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, dims);
  adi::mpi::Decomposition dec(procs, n);
  const Box3 box = dec.local_box();
  const index_t N = box.size();
  const std::size_t bytes = std::size_t(N) * sizeof(T);
  Array<T> d(N, exec), d0(N, exec), u(N, exec);
  {
    std::vector<T> h(static_cast<std::size_t>(N));
    std::mt19937_64 rng(99 + unsigned(rank));
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    for (T& x : h) x = T(u01(rng));
    d0.copy_from_host(h.data());
  }
  // Shared bands per axis (this rank's rows): r = 1, b = 1 + 2r.
  std::array<Array<T>, 3> ba, bb, bc;
  for (int a = 0; a < 3; ++a) {
    const index_t m = box.extent(Axis(a));
    std::vector<T> va(std::size_t(m), T(-1)), vb(std::size_t(m), T(3));
    ba[a] = Array<T>(m, exec);
    bb[a] = Array<T>(m, exec);
    bc[a] = Array<T>(m, exec);
    ba[a].copy_from_host(va.data());
    bb[a].copy_from_host(vb.data());
    bc[a].copy_from_host(va.data());
  }
  auto restore = [&] { detail::copy_bytes(d.data(), exec.memory_space(), d0.data(), exec.memory_space(), bytes); };
  std::vector<double> tc;
  for (int i = 0; i < 4; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now();
    restore();
    exec.synchronize();
    tc.push_back(now() - t0);
  }
  const double copy_bw = 2.0 * double(bytes) / bench::max_over(median(tc));
  const adi::mpi::NetworkModel* net = size > 1 ? &procs.network(Axis(sa)) : nullptr;
  MPI_Barrier(MPI_COMM_WORLD);
  const double tf = now();
  std::vector<adi::mpi::DistributedTridiagonalPlan<T>> plans;
  adi::mpi::DistributedOptions wopts;
  wopts.device_subsegments = args.subsegments;
  for (int a = 0; a < 3; ++a) plans.emplace_back(procs, Axis(a), exec, box, wopts);
  auto sweep = [&](std::array<double, 3>& ta, double& tl, double& te, double& ts) {
    tl = te = ts = 0;
    for (int a = 0; a < 3; ++a) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double a0 = now();
      plans[std::size_t(a)].solve(SharedBands<T>{ba[a].data(), bb[a].data(), bc[a].data()}, a == 0 ? d.data() : u.data(),
                                  u.data());
      exec.synchronize();
      ta[std::size_t(a)] = bench::max_over(now() - a0);
      const bool sp = plans[std::size_t(a)].split();
      tl += bench::max_over(sp ? plans[std::size_t(a)].last_local_seconds() : ta[std::size_t(a)]);
      te += bench::max_over(sp ? plans[std::size_t(a)].last_exchange_seconds() : 0.0);
      ts += bench::max_over(sp ? plans[std::size_t(a)].last_staging_seconds() : 0.0);
    }
  };
  restore();
  std::array<double, 3> ta{};
  double tl = 0, te = 0, ts = 0;
  sweep(ta, tl, te, ts);
  const double first = bench::max_over(now() - tf);
  std::vector<double> t, tx, ty, tz, vl, ve, vs;
  for (int r = 0; r < args.reps; ++r) {
    restore();
    exec.synchronize();
    sweep(ta, tl, te, ts);
    t.push_back(ta[0] + ta[1] + ta[2]);
    tx.push_back(ta[0]);
    ty.push_back(ta[1]);
    tz.push_back(ta[2]);
    vl.push_back(tl);
    ve.push_back(te);
    vs.push_back(ts);
  }
  double model = 0;
  for (int a = 0; a < 3; ++a) {
    if (plans[std::size_t(a)].split())
      model += 8.0 * double(bytes) / copy_bw + net->latency +
               bench::max_over(plans[std::size_t(a)].exchanged_bytes()) / net->bandwidth;
    else
      model += 2.0 * double(bytes) / copy_bw;
  }
  char grid[96];
  std::snprintf(grid, sizeof grid, "%lldx%lldx%lld", (long long)n[0], (long long)n[1], (long long)n[2]);
  rows.push_back({size, device ? "device" : "host", size > 1 ? std::string(1, split) : "-", grid, 1e3 * median(t),
                  {1e3 * median(tx), 1e3 * median(ty), 1e3 * median(tz)}, 1e3 * median(vl), 1e3 * median(ve),
                  1e3 * median(vs), 1e3 * model, 1e3 * first});
  if (rank == 0)
    std::printf("weak %s memory, %d rank(s), split %c: local box %lldx%lldx%lld, copy bandwidth %.1f GB/s%s\n",
                device ? "device" : "host", size, split, (long long)box.nx, (long long)box.ny, (long long)box.nz,
                copy_bw / 1e9, size > 1 ? "" : " (no exchange)");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        if (rank == 0) std::fprintf(stderr, "bench_mpi_tridiagonal: %s needs a value\n", a.c_str());
        MPI_Finalize();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--n") {
      const auto d = adi::mpi::parse_procs(next());  // the same "AxBxC" syntax
      args.n = {d[0], d[1], d[2]};
    } else if (a == "--memory") {
      args.memory = next();
    } else if (a == "--reps") {
      args.reps = std::max(1, std::stoi(next()));
    } else if (a == "--strategy") {
      args.strategy = next();
    } else if (a == "--weak") {
      args.weak = std::stoll(next());
    } else if (a == "--split") {
      args.split = next();
    } else if (a == "--subsegments") {
      args.subsegments = std::max(0, std::stoi(next()));
    } else if (a == "--transport") {
      args.transport = next();
    } else if (a == "--reduced-solve") {
      args.reduced_solve = next();
    } else if (a == "--nccl-probe") {
      args.nccl_probe = true;
    } else if (a == "--no-prefetch") {
      args.prefetch = false;
    } else if (a == "--no-l2") {
      args.l2 = false;
    } else if (a == "--form") {
      args.form = next();
    } else if (a == "--spike-kernel") {
      args.spike_kernels.clear();
      std::string list = next();
      for (std::size_t p = 0; p <= list.size();) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        if (q > p) args.spike_kernels.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    } else if (a == "--spike-window") {
      args.windows.clear();
      std::string list = next();
      for (std::size_t p = 0; p <= list.size();) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        if (q > p) args.windows.push_back(std::max(1, std::stoi(list.substr(p, q - p))));
        p = q + 1;
      }
    } else {
      if (rank == 0)
        std::printf("usage: mpirun -np P bench_mpi_tridiagonal [--n 128x128x4096] [--memory host|device|both] "
                    "[--reps 10] [--strategy all|automatic|allgather|alltoall|pcr] [--subsegments S]\n"
                    "       [--transport all|automatic|host_staging|cuda_aware_mpi|nccl] "
                    "[--reduced-solve automatic|host|device] [--nccl-probe] [--no-prefetch] [--no-l2]\n"
                    "       [--form all|spike|partition] [--spike-window 64,128] "
                    "[--spike-kernel automatic,measure,cuda_thomas_pcr_long]\n"
                    "       mpirun -np P bench_mpi_tridiagonal --weak 512 [--split z|y|x|zy] [--memory ...]   "
                    "# heat-sweep weak scaling, 512^3 nodes per rank\n");
      MPI_Finalize();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  std::vector<Row> rows;
  std::vector<WeakRow> weak;
  int rc = 0;
  if (args.transport != "all") {
    try {
      (void)transport_list(args);
    } catch (const adi::Error& e) {
      if (rank == 0) std::fprintf(stderr, "bench_mpi_tridiagonal: error: %s\n", e.what());
      MPI_Finalize();
      return 2;
    }
  }
  if (args.nccl_probe) {
    // What NCCL itself says to this set of ranks (e.g. two ranks on one GPU), without the
    // plan's one-GPU-per-rank check.
    int dev = 0;
    if (Executor::cuda_available()) dev = adi::mpi::node_local_rank() % std::max(1, cuda_backend::device_count());
    const std::string shared = adi::mpi::nccl::shared_gpu_report(MPI_COMM_WORLD, dev);
    const std::string answer = adi::mpi::nccl::probe_init(MPI_COMM_WORLD, dev);
    std::printf("nccl probe rank %d: NCCL %s, GPU check: %s; ncclCommInitRank: %s\n", rank,
                adi::mpi::nccl::version().c_str(), shared.empty() ? "every rank has its own GPU" : shared.c_str(),
                answer.c_str());
    MPI_Finalize();
    return 0;
  }
  if (args.weak > 0) {
    try {
      for (char sp : args.split) {
        if (sp != 'x' && sp != 'y' && sp != 'z') throw InvalidArgument("--split takes axes x, y, z (e.g. zy)");
        if (args.memory == "host" || args.memory == "both") run_weak<double>(args, false, sp, rank, size, weak);
        if ((args.memory == "device" || args.memory == "both") && Executor::cuda_available())
          run_weak<double>(args, true, sp, rank, size, weak);
      }
    } catch (const adi::Error& e) {
      if (rank == 0) std::fprintf(stderr, "bench_mpi_tridiagonal: error: %s\n", e.what());
      rc = 2;
    }
    if (rank == 0 && !weak.empty()) {
      std::printf("\n| ranks | memory | split | global grid | ms per 3 sweeps | x ms | y ms | z ms | local ms | "
                  "exchange ms | staging ms | model ms | ratio | plan+first ms |\n"
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (const WeakRow& r : weak)
        std::printf("| %d | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f |\n",
                    r.ranks, r.memory.c_str(), r.split.c_str(), r.grid.c_str(), r.ms, r.axis_ms[0], r.axis_ms[1],
                    r.axis_ms[2], r.local_ms, r.exchange_ms, r.staging_ms, r.model_ms, r.ms / r.model_ms, r.first_ms);
    }
    MPI_Finalize();
    return rc;
  }
  try {
    if (rank == 0) {
      std::printf("bench_mpi_tridiagonal: %lldx%lldx%lld %s, lines along z split over %d rank(s); MPI CUDA-aware: %s "
                  "(%s); NCCL: %s\n",
                  (long long)args.n[0], (long long)args.n[1], (long long)args.n[2], "fp64", size,
                  adi::mpi::cuda_aware() ? "yes" : "no", adi::mpi::cuda_aware_report().c_str(),
                  adi::mpi::nccl::version().c_str());
    }
    if (args.memory == "host" || args.memory == "both") run_case<double>(args, false, rank, size, rows);
    if ((args.memory == "device" || args.memory == "both")) {
      if (Executor::cuda_available())
        run_case<double>(args, true, rank, size, rows);
      else if (rank == 0)
        std::printf("device memory: no CUDA device (or adi built without CUDA): rows skipped\n");
    }
  } catch (const adi::Error& e) {
    if (rank == 0) std::fprintf(stderr, "bench_mpi_tridiagonal: error: %s\n", e.what());
    rc = 2;
  }
  if (rank == 0 && !rows.empty()) {
    std::printf("\n| ranks | memory | strategy | transport | ms/solve | local ms | exchange ms | staging ms | "
                "wait ms | exchanged KiB/rank | model ms | ratio | plan+first ms | diff vs first row | y ms |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::printf("%s", creation_row.c_str());
    for (const Row& r : rows) {
      char diff[32] = "(first)";
      if (r.diff >= 0) std::snprintf(diff, sizeof diff, "%.2g", r.diff);
      std::printf("| %d | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f | %.3f | %.2f | %.1f | %s | %.3f |\n",
                  r.ranks, r.memory.c_str(), r.strategy.c_str(), r.transport.c_str(), r.ms, r.local_ms, r.exchange_ms,
                  r.staging_ms, r.wait_ms, r.exch_kib, r.model_ms, r.ms / r.model_ms, r.first_ms, diff, r.y_ms);
    }
    std::printf("(local, exchange, staging: the slowest rank's medians, timed with events on the stream; wait: time "
                "in a barrier before the exchange, i.e. waiting for the slower rank, not counted in exchange; diff: "
                "largest |u - u of the memory's first row| / largest |u|; y: the per-line SPIKE form's local solve of the cut "
                "segments (single-device plan), part of local)\n");
  }
  MPI_Finalize();
  return rc;
}
