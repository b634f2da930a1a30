// The partition method for tridiagonal lines split over the ranks of one axis.
//
// Local rows 0..m-1 of a line on one rank. Rows 1..m-2 are eliminated by the modified
// Thomas of the Thomas-PCR hybrid (paper section 2.3, algorithm 3), keeping the
// dependence on u_0 as a parameter:
//     u_i = delta_i - alpha_i u_0 - gamma_i u_{i+1},         i = 1..m-2
// (delta in u, alpha and gamma in the plan's workspace). The same forward pass also
// accumulates u_1 in terms of the two ends,
//     u_1 = P - Q u_0 - S u_{m-1},   P = sum pi_i delta_i, Q = sum pi_i alpha_i, S = -pi_{m-1},
//     pi_1 = 1, pi_{i+1} = -pi_i gamma_i,
// so no backward pass over the segment is needed before the exchange (the paper's
// algorithm 3 runs one; here it would cost three more reads of the segment). Rows 0 and
// m-1 with u_1 and u_{m-2} eliminated are the rank's two rows of the reduced system
//     [u_0^0, u_{m-1}^0, u_0^1, u_{m-1}^1, ...]   (2P unknowns per line, tridiagonal,
// cyclic for periodic lines). After the reduced solve every rank back-substitutes
// u_i = delta_i - alpha_i u_0 - gamma_i u_{i+1} from i = m-2 down to 1.
#include "adi/mpi/distributed_tridiagonal.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

#include "adi/field.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/partition_local_passes.hpp"
#include "solvers/common/partition_reduced.hpp"

namespace adi::mpi {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

constexpr int kGroup = 128;  // lines handled together when neighbouring lines are adjacent in memory (whole 4 KiB rows: fewer pages per row)

// Coefficient access: per-element bands (offset of the element) or shared bands (row).
template <class T>
struct FullBand {
  const T *a, *b, *c;
  T A(index_t o, index_t) const { return a[o]; }
  T B(index_t o, index_t) const { return b[o]; }
  T C(index_t o, index_t) const { return c[o]; }
};
template <class T>
struct SharedBand {
  const T *a, *b, *c;
  T A(index_t, index_t i) const { return a[i]; }
  T B(index_t, index_t i) const { return b[i]; }
  T C(index_t, index_t i) const { return c[i]; }
};

// One PCR elimination of row `r` with rows `m` (i - s) and `p` (i + s), each (a, b, c, d).
template <class T>
inline void pcr_combine(const T* r, const T* m, const T* p, T* out) {
  const T k1 = r[0] / m[1], k2 = r[2] / p[1];
  out[0] = -k1 * m[0];
  out[1] = r[1] - k1 * m[2] - k2 * p[0];
  out[2] = -k2 * p[2];
  out[3] = r[3] - k1 * m[3] - k2 * p[3];
}

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

// Host buffers of the values that cross between device and host (reduced rows and their
// solution): page-locked when the plan's executor is a device, ordinary otherwise.
template <class T>
struct StagingAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  bool pinned = false;
  StagingAllocator() = default;
  explicit StagingAllocator(bool p) : pinned(p) {}
  template <class U>
  StagingAllocator(const StagingAllocator<U>& o) : pinned(o.pinned) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(pinned ? cuda_backend::partition::pinned_alloc(n * sizeof(T)) : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept {
    if (pinned)
      cuda_backend::partition::pinned_free(p);
    else
      ::operator delete(p);
  }
  template <class U>
  bool operator==(const StagingAllocator<U>& o) const { return pinned == o.pinned; }
  template <class U>
  bool operator!=(const StagingAllocator<U>& o) const { return pinned != o.pinned; }
};
template <class T>
using StagingVector = std::vector<T, StagingAllocator<T>>;

}  // namespace

StrategyCosts model_costs(const NetworkModel& net, std::size_t value_size, index_t lines, int ranks, bool periodic) {
  // Bytes and messages of each strategy for `lines` lines, with the axis's measured
  // latency and bandwidth; reduced-system arithmetic at ~48 bytes of memory traffic per
  // row at the copy bandwidth.
  StrategyCosts c;
  const double w = double(value_size), L = double(lines), P = double(ranks);
  const double row_cost = 48.0 / net.copy_bandwidth;
  const double steps = std::ceil(std::log2(2.0 * P));
  c.allgather = net.latency * std::ceil(std::log2(P)) + (P - 1) * L * 8 * w / net.bandwidth + 2 * P * L * row_cost;
  c.alltoall = 2 * (P - 1) * net.p2p_latency + 2 * (P - 1) / P * L * 10 * w / net.bandwidth + 2 * L * row_cost;
  c.pcr = steps * (net.p2p_latency + 2 * L * 8 * w / net.bandwidth + 2 * L * row_cost);
  if (periodic && !power_of_two(ranks)) c.pcr = std::numeric_limits<double>::infinity();
  return c;
}

const char* strategy_name(ReducedStrategy s) {
  switch (s) {
    case ReducedStrategy::automatic: return "automatic";
    case ReducedStrategy::allgather: return "allgather";
    case ReducedStrategy::alltoall: return "alltoall";
    case ReducedStrategy::pcr: return "pcr";
  }
  return "unknown";
}

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::automatic: return "automatic";
    case Transport::host_staging: return "host_staging";
    case Transport::cuda_aware_mpi: return "cuda_aware_mpi";
    case Transport::nccl: return "nccl";
  }
  return "unknown";
}

Transport transport_from_name(const std::string& name) {
  for (auto t : {Transport::automatic, Transport::host_staging, Transport::cuda_aware_mpi, Transport::nccl})
    if (name == transport_name(t)) return t;
  throw InvalidArgument("unknown transport '" + name +
                        "'; expected one of: automatic, host_staging, cuda_aware_mpi, nccl");
}

ReducedStrategy strategy_from_name(const std::string& name) {
  for (auto s : {ReducedStrategy::automatic, ReducedStrategy::allgather, ReducedStrategy::alltoall,
                 ReducedStrategy::pcr})
    if (name == strategy_name(s)) return s;
  throw InvalidArgument("unknown reduced-system strategy '" + name +
                        "'; expected one of: automatic, allgather, alltoall, pcr");
}

template <class T>
struct DistributedTridiagonalPlan<T>::Impl {
  Axis axis;
  Executor exec = Executor::host();
  Box3 box;
  DistributedOptions opt;
  LineSet ls;
  MPI_Comm comm = MPI_COMM_NULL;  // the axis communicator (owned by the ProcessGrid)
  int P = 1, r = 0;
  index_t m = 0, L = 0;
  ReducedStrategy strategy = ReducedStrategy::allgather;
  StrategyCosts costs;
  std::optional<TridiagonalPlan<T>> local;  // unsplit axis

  std::vector<T> alpha, gamma;  // per element of the segment (rows 1..m-2 used)
  StagingVector<T> red;         // 8 per line: rows 0 and m-1 of the reduced system
  StagingVector<T> sol;         // 2 per line: u_0 and u_{m-1}
  StagingVector<T> gather;      // allgather: P*L*8; alltoall: P*chunk*8; pcr: 2 * L*8 (left, right)
  StagingVector<T> back;        // alltoall: P*chunk*2 results; pcr: new rows L*8
  std::vector<T> ident;         // pcr: identity rows for a missing neighbour
  std::vector<T> sendbuf;       // pcr: packed single rows for the first step (2 * L*4)
  std::vector<T> scratch;       // per thread: 4 * 2P + 2P
  std::vector<int> cnt8, dsp8, cnt2, dsp2, rcnt8, rdsp8, rcnt2, rdsp2;
  index_t chunk_lo = 0, chunk_n = 0;
  // Device memory: the local passes run on the device (solvers/cuda/partition_local_passes.cu);
  // only the reduced rows and their solution travel through host memory.
  Array<T> d_alpha, d_gamma, d_red, d_sol, d_red1, d_w2, d_sol1;
  cuda_backend::partition::Workspace<T> dw;
  // Device plans: how the reduced rows travel and where they are solved. With the device
  // solve: d_gather (the gathered rows, the host layout), d_back (alltoall: the chunk's
  // solutions), d_scratch (3 * 2P per solved line); d_flag / h_flag carry the
  // back-substitution's "non-finite end value" verdict to the host.
  Transport transport = Transport::host_staging;
  bool device_solve = false;
  std::shared_ptr<nccl::Communicator> nccl_comm;
  Array<T> d_gather, d_back, d_scratch;
  Array<int> d_flag;
  StagingVector<int> h_flag;
  // Phase timing on the stream: event k closes a span of kind ev_kind[k] (kIdle: the stream
  // waited for the host, not counted).
  enum Span { kStart = -1, kLocal = 0, kStaging = 1, kExchange = 2, kIdle = 3 };
  std::vector<void*> ev;
  std::vector<int> ev_kind;
  int n_ev = 0;
  double t_local = 0, t_exchange = 0, t_staging = 0, t_wait = 0, bytes = 0;

  ~Impl() {
    for (void* e : ev) cuda_backend::partition::event_destroy(e);
  }
  void mark(int kind) {
    cuda_backend::partition::event_record(ev[std::size_t(n_ev)], exec.stream());
    ev_kind[std::size_t(n_ev++)] = kind;
  }
  double strategy_bytes() const {
    const double w = double(sizeof(T));
    return strategy == ReducedStrategy::alltoall ? double(2 * (P - 1) * (L / P + 1) * 10) * w : double(P * L * 8) * w;
  }
  void exchange_device();
  void finish_device();
  void timing_barrier() {
    if (!opt.timing_barrier) return;
    const double t0 = now();
    check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    t_wait = now() - t0;
  }
  void resolve_transport(const ProcessGrid& procs);
  // pcr runs on the host: only a host plan or host staging with the host solve can take it.
  bool pcr_allowed() const {
    return exec.is_host() || (transport == Transport::host_staging && opt.reduced_solve != ReducedSolveSite::device);
  }

  index_t line_offset(index_t l) const { return ls.offset(l); }
  int group_size() const { return ls.stride0 == 1 ? kGroup : 1; }

  template <class Band>
  bool reduce(const Band& bd, const T* d, T* u);
  bool back_substitute(T* u);
  bool exchange_and_solve();
  void solve_lines(index_t first, index_t count, int n_rows, const T* rows, index_t line_stride,
                   index_t rank_stride, T* out, index_t out_rank_stride, index_t out_line_stride, bool whole);
  template <class Band>
  void run(const Band& bd, const T* d, T* u);
  void run_device(const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
};

template <class T>
void DistributedTridiagonalPlan<T>::Impl::run_device(const T* a, const T* b, const T* c, bool shared, const T* d,
                                                     T* u) {
  namespace part = cuda_backend::partition;
  cuda_backend::set_device(exec.device());  // this rank's GPU (ranks of a node pick different ones)
  void* st = exec.stream();
  n_ev = 0;
  t_wait = 0;
  mark(kStart);
  part::clear_flag_async(d_flag.data(), st);
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  // A zero pivot writes NaN into the line's reduced rows; the reduced solve carries the NaN
  // to every rank of the line, whose back-substitution raises d_flag: all ranks throw
  // below, after the collectives they were in anyway.
  part::reduce<T>(ls, a, b, c, shared, d, u, dw, d_red.data(), first_open, last_open, st);
  mark(kLocal);
  exchange_device();  // d_red -> d_sol by the plan's transport
  part::back_substitute<T>(ls, dw, d_sol.data(), u, d_flag.data(), st);
  mark(kLocal);
  finish_device();
}

// The end of a device solve: the pivot verdict to the host, the phase times from the
// events, SingularSystem.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::finish_device() {
  namespace part = cuda_backend::partition;
  void* st = exec.stream();
  part::copy_async(h_flag.data(), d_flag.data(), sizeof(int), st);
  cuda_backend::synchronize(st);
  double t[4] = {0, 0, 0, 0};
  for (int k = 1; k < n_ev; ++k)
    t[ev_kind[std::size_t(k)]] += part::event_seconds(ev[std::size_t(k - 1)], ev[std::size_t(k)]);
  t_local = t[kLocal];
  t_staging = t[kStaging];
  t_exchange = t[kExchange];
  if (opt.check_pivots && h_flag[0] != 0)
    throw SingularSystem(std::string("DistributedTridiagonalPlan: a zero or non-finite pivot along ") +
                         axis_name(axis) +
                         " (on this or another rank of the axis; the partition method needs diagonally "
                         "dominant lines); u holds no solution");
}

// Phase 2 of a device plan: d_red (this rank's rows) -> d_sol (this rank's two unknowns
// per line), enqueued on the stream or, around MPI calls, waited for.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::exchange_device() {
  namespace part = cuda_backend::partition;
  void* st = exec.stream();
  const std::size_t w = sizeof(T);
  const MPI_Datatype type = mpi_type<T>();
  const int n = int(2 * P);
  const bool gather_all = strategy == ReducedStrategy::allgather;
  // The device solve of the gathered rows (the same layouts as the host's solve_lines).
  auto solve_gathered = [&] {
    if (gather_all)
      part::solve_reduced<T>(L, n, opt.periodic, d_gather.data(), 8, L * 8, d_scratch.data(), r, d_sol.data(), 0, 0,
                             st);
    else
      part::solve_reduced<T>(chunk_n, n, opt.periodic, d_gather.data(), 8, chunk_n * 8, d_scratch.data(), -1,
                             d_back.data(), chunk_n * 2, 2, st);
  };
  bytes = strategy_bytes();
  if (opt.timing_barrier) {  // benchmarks: waiting for slower ranks timed apart
    cuda_backend::synchronize(st);
    timing_barrier();
    mark(kIdle);
  }
  switch (transport) {
    case Transport::nccl: {
      if (gather_all) {
        nccl::all_gather(*nccl_comm, d_red.data(), d_gather.data(), std::size_t(L * 8) * w, st);
        solve_gathered();
      } else {
        nccl::all_to_all_v(*nccl_comm, d_red.data(), cnt8.data(), dsp8.data(), d_gather.data(), rcnt8.data(),
                           rdsp8.data(), w, st);
        solve_gathered();
        nccl::all_to_all_v(*nccl_comm, d_back.data(), rcnt2.data(), rdsp2.data(), d_sol.data(), cnt2.data(),
                           dsp2.data(), w, st);
      }
      mark(kExchange);
      return;
    }
    case Transport::cuda_aware_mpi: {
      cuda_backend::synchronize(st);  // MPI reads d_red
      if (gather_all) {
        check_mpi(MPI_Allgather(d_red.data(), int(L * 8), type, d_gather.data(), int(L * 8), type, comm),
                  "MPI_Allgather");
        solve_gathered();
      } else {
        check_mpi(MPI_Alltoallv(d_red.data(), cnt8.data(), dsp8.data(), type, d_gather.data(), rcnt8.data(),
                                rdsp8.data(), type, comm),
                  "MPI_Alltoallv");
        solve_gathered();
        cuda_backend::synchronize(st);
        check_mpi(MPI_Alltoallv(d_back.data(), rcnt2.data(), rdsp2.data(), type, d_sol.data(), cnt2.data(),
                                dsp2.data(), type, comm),
                  "MPI_Alltoallv");
      }
      mark(kExchange);
      return;
    }
    case Transport::host_staging:
    case Transport::automatic: break;
  }
  part::copy_async(red.data(), d_red.data(), red.size() * w, st);
  mark(kStaging);
  cuda_backend::synchronize(st);  // MPI reads red
  if (!device_solve) {
    exchange_and_solve();  // MPI and the reduced solve on the host (pcr: its exchanges and eliminations)
    mark(kExchange);
    part::copy_async(d_sol.data(), sol.data(), sol.size() * w, st);
    mark(kStaging);
    return;
  }
  if (gather_all) {
    check_mpi(MPI_Allgather(red.data(), int(L * 8), type, gather.data(), int(L * 8), type, comm), "MPI_Allgather");
    mark(kExchange);
    part::copy_async(d_gather.data(), gather.data(), gather.size() * w, st);
    mark(kStaging);
    solve_gathered();
    mark(kExchange);
    return;
  }
  check_mpi(MPI_Alltoallv(red.data(), cnt8.data(), dsp8.data(), type, gather.data(), rcnt8.data(), rdsp8.data(), type,
                          comm),
            "MPI_Alltoallv");
  mark(kExchange);
  part::copy_async(d_gather.data(), gather.data(), gather.size() * w, st);
  mark(kStaging);
  solve_gathered();
  mark(kExchange);
  part::copy_async(back.data(), d_back.data(), back.size() * w, st);
  mark(kStaging);
  cuda_backend::synchronize(st);  // MPI reads back
  check_mpi(MPI_Alltoallv(back.data(), rcnt2.data(), rdsp2.data(), type, sol.data(), cnt2.data(), dsp2.data(), type,
                          comm),
            "MPI_Alltoallv");
  mark(kExchange);
  part::copy_async(d_sol.data(), sol.data(), sol.size() * w, st);
  mark(kStaging);
}

// Picks the transport of a split axis (collective over the axis; the options already
// agree): every rank takes the same branch, and an explicit choice this build or machine
// cannot run throws the same Unsupported on every rank, naming what is missing.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::resolve_transport(const ProcessGrid& procs) {
  const Transport want = opt.transport;
  const std::string pre = std::string("DistributedTridiagonalPlan: transport ") + transport_name(want) + ": ";
  std::string err;
  if (exec.is_host()) {
    // Host memory goes to MPI as it is.
    if (want == Transport::cuda_aware_mpi || want == Transport::nccl)
      err = pre + "needs device memory (Executor::cuda); host plans exchange host memory with plain MPI";
    transport = Transport::host_staging;
    agree_supported(comm, err.empty(), err);
    return;
  }
  const bool pcr = opt.strategy == ReducedStrategy::pcr;
  const bool device_transport_ok = !pcr && opt.reduced_solve != ReducedSolveSite::host;
  std::string shared;
  if (nccl::built() && (want == Transport::nccl || (want == Transport::automatic && device_transport_ok)))
    shared = nccl::shared_gpu_report(comm, exec.device());  // collective: every rank or none
  const int aware_here = cuda_aware() ? 1 : 0;
  int aware = 0;
  check_mpi(MPI_Allreduce(&aware_here, &aware, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  switch (want) {
    case Transport::automatic:
      transport = !device_transport_ok                 ? Transport::host_staging
                  : nccl::built() && shared.empty()    ? Transport::nccl
                  : aware                              ? Transport::cuda_aware_mpi
                                                       : Transport::host_staging;
      break;
    case Transport::host_staging: transport = want; break;
    case Transport::cuda_aware_mpi:
      transport = want;
      if (!aware_here)
        err = pre + "this MPI library does not take device pointers (" + cuda_aware_report() +
              "); use host_staging, nccl or automatic";
      break;
    case Transport::nccl:
      transport = want;
      if (!nccl::built())
        err = pre + "adi::mpi was built without NCCL (configure with -DADI_WITH_NCCL=ON where nccl.h and libnccl are "
                    "found); use host_staging or automatic";
      else if (!shared.empty())
        err = pre + shared;
      break;
  }
  if (err.empty() && transport != Transport::host_staging && pcr)
    err = pre + "strategy pcr exchanges and eliminates on the host; use allgather or alltoall, or host_staging";
  if (err.empty() && transport != Transport::host_staging && opt.reduced_solve == ReducedSolveSite::host)
    err = pre + "reduced_solve = host needs host_staging (the rows never reach the host otherwise)";
  if (err.empty() && pcr && opt.reduced_solve == ReducedSolveSite::device)
    err = "DistributedTridiagonalPlan: reduced_solve = device does not apply to strategy pcr (solved between "
          "neighbours on the host); use allgather or alltoall";
  agree_supported(comm, err.empty(), err);
  if (transport == Transport::nccl) nccl_comm = nccl::axis_communicator(procs, axis, exec.device());
}

// Phase 1: every line's two reduced rows into red; delta into u, alpha/gamma into the
// workspace. Returns false when a pivot was zero or non-finite.
template <class T>
template <class Band>
bool DistributedTridiagonalPlan<T>::Impl::reduce(const Band& bd, const T* d, T* u) {
  const index_t st = ls.stride, so = ls.stride0;
  const int G = group_size();
  const index_t groups0 = (ls.count0 + G - 1) / G;
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (L * m > 32768)
  for (index_t gi = 0; gi < groups0 * ls.count1; ++gi) {
    const index_t l1 = gi / groups0, l0b = (gi % groups0) * G;
    const int g = int(std::min<index_t>(G, ls.count0 - l0b));
    const index_t lfirst = l1 * ls.count0 + l0b;
    const index_t base = l1 * ls.stride1 + l0b * so;
    T* al = alpha.data() + lfirst * m;
    T* ga = gamma.data() + lfirst * m;
    T pP[kGroup], pQ[kGroup], pi[kGroup], ap[kGroup], gp[kGroup], dp[kGroup];
    if (m == 2) {
      for (int j = 0; j < g; ++j) {
        const index_t o = base + j * so;
        T* rr = red.data() + (lfirst + j) * 8;
        rr[0] = first_open ? T(0) : bd.A(o, 0);
        rr[1] = bd.B(o, 0);
        rr[2] = bd.C(o, 0);
        rr[3] = d[o];
        rr[4] = bd.A(o + st, 1);
        rr[5] = bd.B(o + st, 1);
        rr[6] = last_open ? T(0) : bd.C(o + st, 1);
        rr[7] = d[o + st];
      }
      continue;
    }
    for (int j = 0; j < g; ++j) {  // row 1
      const index_t o = base + j * so + st;
      const T rinv = T(1) / bd.B(o, 1);
      bad |= !std::isfinite(double(rinv));
      ap[j] = bd.A(o, 1) * rinv;
      gp[j] = bd.C(o, 1) * rinv;
      dp[j] = d[o] * rinv;
      al[1 * g + j] = ap[j];
      ga[1 * g + j] = gp[j];
      u[o] = dp[j];
      pP[j] = dp[j];
      pQ[j] = ap[j];
      pi[j] = -gp[j];
    }
    int gbad = 0;
    for (index_t i = 2; i <= m - 2; ++i) {
#pragma omp simd reduction(| : gbad)
      for (int j = 0; j < g; ++j) {
        const index_t o = base + j * so + i * st;
        const T a = bd.A(o, i);
        const T rinv = T(1) / (bd.B(o, i) - a * gp[j]);
        gbad |= !std::isfinite(double(rinv));
        const T an = -a * ap[j] * rinv, gn = bd.C(o, i) * rinv, dn = (d[o] - a * dp[j]) * rinv;
        al[i * g + j] = an;
        ga[i * g + j] = gn;
        u[o] = dn;
        pP[j] += pi[j] * dn;
        pQ[j] += pi[j] * an;
        pi[j] = -pi[j] * gn;
        ap[j] = an;
        gp[j] = gn;
        dp[j] = dn;
      }
    }
    bad |= gbad;
    for (int j = 0; j < g; ++j) {
      const index_t o0 = base + j * so, ol = o0 + (m - 1) * st;
      T* rr = red.data() + (lfirst + j) * 8;
      const T c0 = bd.C(o0, 0), al_ = bd.A(ol, m - 1);
      rr[0] = first_open ? T(0) : bd.A(o0, 0);
      rr[1] = bd.B(o0, 0) - c0 * pQ[j];
      rr[2] = c0 * pi[j];  // -c0 * S, S = -pi_{m-1}
      rr[3] = d[o0] - c0 * pP[j];
      rr[4] = -al_ * ap[j];
      rr[5] = bd.B(ol, m - 1) - al_ * gp[j];
      rr[6] = last_open ? T(0) : bd.C(ol, m - 1);
      rr[7] = d[ol] - al_ * dp[j];
    }
  }
  return bad == 0;
}

// Phase 3: u_0, u_{m-1} from sol, then the interior. False on a non-finite end value.
template <class T>
bool DistributedTridiagonalPlan<T>::Impl::back_substitute(T* u) {
  const index_t st = ls.stride, so = ls.stride0;
  const int G = group_size();
  const index_t groups0 = (ls.count0 + G - 1) / G;
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (L * m > 32768)
  for (index_t gi = 0; gi < groups0 * ls.count1; ++gi) {
    const index_t l1 = gi / groups0, l0b = (gi % groups0) * G;
    const int g = int(std::min<index_t>(G, ls.count0 - l0b));
    const index_t lfirst = l1 * ls.count0 + l0b;
    const index_t base = l1 * ls.stride1 + l0b * so;
    const T* al = alpha.data() + lfirst * m;
    const T* ga = gamma.data() + lfirst * m;
    T u0[kGroup], nx[kGroup];
    for (int j = 0; j < g; ++j) {
      const index_t o0 = base + j * so;
      u0[j] = sol[std::size_t(lfirst + j) * 2];
      nx[j] = sol[std::size_t(lfirst + j) * 2 + 1];
      bad |= !std::isfinite(double(u0[j])) || !std::isfinite(double(nx[j]));
      u[o0] = u0[j];
      u[o0 + (m - 1) * st] = nx[j];
    }
    for (index_t i = m - 2; i >= 1; --i) {
#pragma omp simd
      for (int j = 0; j < g; ++j) {
        const index_t o = base + j * so + i * st;
        const T v = u[o] - al[i * g + j] * u0[j] - ga[i * g + j] * nx[j];
        u[o] = v;
        nx[j] = v;
      }
    }
  }
  return bad == 0;
}

// Solves reduced systems of lines [first, first+count): row k of a line at
// rows + (k/2)*rank_stride + line*line_stride + (k%2)*4; writes either the whole
// solution (out + p*out_rank_stride + line*out_line_stride + {0,1}) or only this
// rank's pair (whole == false: out + line*2).
template <class T>
void DistributedTridiagonalPlan<T>::Impl::solve_lines(index_t first, index_t count, int n_rows, const T* rows,
                                                      index_t line_stride, index_t rank_stride, T* out,
                                                      index_t out_rank_stride, index_t out_line_stride,
                                                      bool whole) {
  const bool periodic = opt.periodic;
#pragma omp parallel if (count * n_rows > 65536)
  {
    T* s = scratch.data() + std::size_t(omp_get_thread_num()) * std::size_t(5 * n_rows);
    const T* x = s + n_rows;  // slot 1: the solution
#pragma omp for schedule(static)
    for (index_t l = 0; l < count; ++l) {
      const T* base = rows + l * line_stride;
      auto row = [&](int k) { return base + (k / 2) * rank_stride + (k % 2) * 4; };
      cuda_backend::partition::solve_reduced_rows<T>(n_rows, periodic, row,
                                                     [&](int j, int k) -> T& { return s[j * n_rows + k]; });
      if (whole) {
        for (int p = 0; p < n_rows / 2; ++p) {
          out[p * out_rank_stride + l * out_line_stride] = x[2 * p];
          out[p * out_rank_stride + l * out_line_stride + 1] = x[2 * p + 1];
        }
      } else {
        out[(first + l) * 2] = x[2 * r];
        out[(first + l) * 2 + 1] = x[2 * r + 1];
      }
    }
  }
}

template <class T>
bool DistributedTridiagonalPlan<T>::Impl::exchange_and_solve() {
  const MPI_Datatype type = mpi_type<T>();
  const index_t w = index_t(sizeof(T));
  switch (strategy) {
    case ReducedStrategy::allgather: {
      check_mpi(MPI_Allgather(red.data(), int(L * 8), type, gather.data(), int(L * 8), type, comm), "MPI_Allgather");
      bytes = double((P - 1) * L * 8 * w + L * 8 * w);
      solve_lines(0, L, 2 * P, gather.data(), 8, L * 8, sol.data(), 0, 0, false);
      break;
    }
    case ReducedStrategy::alltoall: {
      check_mpi(MPI_Alltoallv(red.data(), cnt8.data(), dsp8.data(), type, gather.data(), rcnt8.data(),
                              rdsp8.data(), type, comm),
                "MPI_Alltoallv");
      // gather holds, per source rank p, my chunk's lines: rows of rank p at p*chunk_n*8.
      solve_lines(chunk_lo, chunk_n, 2 * P, gather.data(), 8, chunk_n * 8, back.data(), chunk_n * 2, 2, true);
      check_mpi(MPI_Alltoallv(back.data(), rcnt2.data(), rdsp2.data(), type, sol.data(), cnt2.data(), dsp2.data(),
                              type, comm),
                "MPI_Alltoallv");
      bytes = double(2 * (P - 1) * (L / P + 1) * 10 * w);
      break;
    }
    case ReducedStrategy::pcr: {
      // Rows 2r and 2r+1 live here. Step s = 1 needs row 2r-1 (left) and 2r+2 (right);
      // step s = 2t needs both rows of ranks r-t and r+t.
      T* rows = red.data();
      T* nrows = back.data();
      T* left = gather.data();
      T* right = gather.data() + L * 8;
      bytes = 0;
      for (index_t s = 1;; s *= 2) {
        const index_t t = s == 1 ? 1 : s / 2;
        int lp = int(r - t), rp = int(r + t);
        if (opt.periodic) {
          lp = int(((r - t) % P + P) % P);
          rp = int((r + t) % P);
        } else {
          if (lp < 0) lp = MPI_PROC_NULL;
          if (rp >= P) rp = MPI_PROC_NULL;
        }
        MPI_Request req[4];
        if (s == 1) {
          T* s0 = sendbuf.data();
          T* s1 = sendbuf.data() + L * 4;
          for (index_t l = 0; l < L; ++l)
            for (int k = 0; k < 4; ++k) {
              s0[l * 4 + k] = rows[l * 8 + k];
              s1[l * 4 + k] = rows[l * 8 + 4 + k];
            }
          check_mpi(MPI_Irecv(left, int(L * 4), type, lp, 1, comm, &req[0]), "MPI_Irecv");
          check_mpi(MPI_Irecv(right, int(L * 4), type, rp, 0, comm, &req[1]), "MPI_Irecv");
          check_mpi(MPI_Isend(s0, int(L * 4), type, lp, 0, comm, &req[2]), "MPI_Isend");
          check_mpi(MPI_Isend(s1, int(L * 4), type, rp, 1, comm, &req[3]), "MPI_Isend");
          check_mpi(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
          bytes += double(((lp != MPI_PROC_NULL) + (rp != MPI_PROC_NULL)) * 2 * L * 4 * w);
          const T* lrow = lp == MPI_PROC_NULL ? ident.data() : left;
          const T* rrow = rp == MPI_PROC_NULL ? ident.data() : right;
          for (index_t l = 0; l < L; ++l) {
            const T* r0 = rows + l * 8;
            pcr_combine(r0, lrow + l * 4, r0 + 4, nrows + l * 8);
            pcr_combine(r0 + 4, r0, rrow + l * 4, nrows + l * 8 + 4);
          }
        } else {
          check_mpi(MPI_Irecv(left, int(L * 8), type, lp, 1, comm, &req[0]), "MPI_Irecv");
          check_mpi(MPI_Irecv(right, int(L * 8), type, rp, 0, comm, &req[1]), "MPI_Irecv");
          check_mpi(MPI_Isend(rows, int(L * 8), type, lp, 0, comm, &req[2]), "MPI_Isend");
          check_mpi(MPI_Isend(rows, int(L * 8), type, rp, 1, comm, &req[3]), "MPI_Isend");
          check_mpi(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
          bytes += double(((lp != MPI_PROC_NULL) + (rp != MPI_PROC_NULL)) * 2 * L * 8 * w);
          const T* lrow = lp == MPI_PROC_NULL ? ident.data() : left;
          const T* rrow = rp == MPI_PROC_NULL ? ident.data() : right;
          for (index_t l = 0; l < L; ++l) {
            const T* r0 = rows + l * 8;
            pcr_combine(r0, lrow + l * 8, rrow + l * 8, nrows + l * 8);
            pcr_combine(r0 + 4, lrow + l * 8 + 4, rrow + l * 8 + 4, nrows + l * 8 + 4);
          }
        }
        std::swap(rows, nrows);
        if (s >= P) break;
      }
      // Every row now couples to itself only (periodic: a and c wrapped onto it).
      for (index_t l = 0; l < L; ++l)
        for (int k = 0; k < 2; ++k) {
          const T* q = rows + l * 8 + 4 * k;
          sol[std::size_t(l * 2 + k)] = opt.periodic ? q[3] / (q[0] + q[1] + q[2]) : q[3] / q[1];
        }
      break;
    }
    case ReducedStrategy::automatic: break;
  }
  return true;
}

template <class T>
template <class Band>
void DistributedTridiagonalPlan<T>::Impl::run(const Band& bd, const T* d, T* u) {
  const double t0 = now();
  const bool ok_reduce = reduce(bd, d, u);
  // A failed pivot poisons this rank's reduced rows, so the reduced solve of every line
  // it touches returns NaN on every rank of the axis: all of them throw below without
  // another collective.
  if (!ok_reduce && opt.check_pivots)
    for (T& v : red) v = std::numeric_limits<T>::quiet_NaN();
  t_wait = 0;
  timing_barrier();
  const double t1 = now();
  exchange_and_solve();
  const double t2 = now();
  bool ok = true;
  if (opt.check_pivots)
    for (T v : sol) ok = ok && std::isfinite(double(v));
  if (!ok)
    throw SingularSystem(std::string("DistributedTridiagonalPlan: a zero or non-finite pivot along ") +
                         axis_name(axis) +
                         " (on this or another rank of the axis; the partition method needs diagonally "
                         "dominant lines); u holds no solution");
  back_substitute(u);
  const double t3 = now();
  t_local = (t1 - t0) + (t3 - t2);
  t_exchange = t2 - t1;
}

template <class T>
DistributedTridiagonalPlan<T>::DistributedTridiagonalPlan(const ProcessGrid& procs, Axis axis, const Executor& exec,
                                                          const Box3& local, DistributedOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.axis = axis;
  p.exec = exec;
  p.box = local;
  p.opt = options;
  p.comm = procs.axis_comm(axis);
  MPI_Comm_size(p.comm, &p.P);
  MPI_Comm_rank(p.comm, &p.r);

  // Validate locally, then agree over the axis before any exchange.
  std::string err;
  try {
    p.ls = to_lines(BoxLines{local, axis});
  } catch (const Error& e) {
    err = std::string("DistributedTridiagonalPlan: ") + e.what();
  }
  p.m = err.empty() ? p.ls.n : 0;
  p.L = err.empty() ? p.ls.lines() : 0;
  long long ext[6] = {0, 0, 0, 0, 0, 0};
  {
    int k = 0;
    for (int a = 0; a < 3; ++a)
      if (a != int(axis)) ext[k++] = local.extent(Axis(a));
    ext[2] = options.periodic;
    ext[3] = int(options.strategy);
    ext[4] = int(options.transport);
    ext[5] = int(options.reduced_solve);
  }
  long long mn[6], mx[6];
  check_mpi(MPI_Allreduce(ext, mn, 6, MPI_LONG_LONG, MPI_MIN, p.comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(ext, mx, 6, MPI_LONG_LONG, MPI_MAX, p.comm), "MPI_Allreduce");
  const std::string an = axis_name(axis);
  if (err.empty() && (mn[0] != mx[0] || mn[1] != mx[1]))
    err = "DistributedTridiagonalPlan: mismatched extents across the ranks along " + an +
          ": the two other extents range over " + std::to_string(mn[0]) + ".." + std::to_string(mx[0]) + " and " +
          std::to_string(mn[1]) + ".." + std::to_string(mx[1]) +
          " (every rank along the axis must hold the same lines)";
  if (err.empty() && (mn[2] != mx[2] || mn[3] != mx[3] || mn[4] != mx[4] || mn[5] != mx[5]))
    err = "DistributedTridiagonalPlan: the options (periodic, strategy, transport, reduced_solve) differ between the "
          "ranks along " + an;
  if (err.empty() && options.device_subsegments < 0)
    err = "DistributedTridiagonalPlan: device_subsegments = " + std::to_string(options.device_subsegments) +
          " must be >= 0 (0: automatic)";
  if (err.empty() && p.P > 1 && p.m < 2)
    err = "DistributedTridiagonalPlan: " + std::to_string(p.m) + " row(s) along " + an + " on this rank; a split axis (" +
          std::to_string(p.P) + " ranks) needs >= 2 rows per rank: use fewer ranks along " + an;
  if (err.empty() && p.P > 1 && options.periodic && options.strategy == ReducedStrategy::pcr && !power_of_two(p.P))
    err = "DistributedTridiagonalPlan: strategy pcr on periodic lines needs a power-of-two number of ranks along " +
          an + " (here " + std::to_string(p.P) + "); use allgather or alltoall";
  if (err.empty() && p.P > 1 && p.L * 8 * std::max(1, p.P) > index_t(2147483647))
    err = "DistributedTridiagonalPlan: " + std::to_string(p.L) + " lines are too many for one exchange; split the box";
  agree(p.comm, err.empty(), err);

  if (p.P == 1) {
    try {
      p.local.emplace(exec, BoxLines{local, axis},
                      TridiagonalOptions{options.periodic, options.local_kernel, options.check_pivots});
    } catch (const Error& e) {
      err = e.what();
    }
    agree(p.comm, err.empty(), err);
    return;
  }

  // The model: bytes and messages of each strategy for L lines, with the axis's
  // measured latency and bandwidth; reduced-system arithmetic at ~48 bytes of memory
  // traffic per row at the copy bandwidth.
  // The transport (device plans): what this build and machine offer, agreed over the axis.
  p.resolve_transport(procs);
  if (options.strategy == ReducedStrategy::automatic) {
    const NetworkModel& net = procs.network(axis);  // measured once per grid axis, only when needed
    p.costs = model_costs(net, sizeof(T), p.L, p.P, options.periodic);
  }
  if (options.strategy == ReducedStrategy::automatic) {
    p.strategy = ReducedStrategy::allgather;
    double best = p.costs.allgather;
    if (p.costs.alltoall < best) best = p.costs.alltoall, p.strategy = ReducedStrategy::alltoall;
    // pcr's exchanges and eliminations run on the host: not with a device transport.
    if (p.costs.pcr < best && p.pcr_allowed())
      best = p.costs.pcr, p.strategy = ReducedStrategy::pcr;
    // Measurements agree on every rank (network() takes maxima), but make sure.
    int s = int(p.strategy);
    check_mpi(MPI_Bcast(&s, 1, MPI_INT, 0, p.comm), "MPI_Bcast");
    p.strategy = ReducedStrategy(s);
  } else {
    p.strategy = options.strategy;
  }

  const std::size_t seg = std::size_t(p.L * p.m);
  if (!exec.is_host()) cuda_backend::set_device(exec.device());
  p.red = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  p.sol = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  p.gather = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  p.back = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  // Host solve or pcr with a device plan; host staging of the device solve's rows.
  const bool host_buffers = exec.is_host() || p.transport == Transport::host_staging;
  // With host staging, automatic solves allgather's rows on the device (one copy of the
  // gathered rows beats the host solve of every line: 3.53 vs 3.76 ms on the public case)
  // and alltoall's on the host (the device solve would add a second round trip between
  // device and host: 3.45-3.67 vs 3.68-3.72 ms); see docs/mpi.md, "Transport".
  const bool site_device = options.reduced_solve == ReducedSolveSite::device ||
                           (options.reduced_solve == ReducedSolveSite::automatic &&
                            p.strategy == ReducedStrategy::allgather);
  p.device_solve = !exec.is_host() && (p.transport != Transport::host_staging ||
                                       (p.strategy != ReducedStrategy::pcr && site_device));
  if (exec.is_host()) {  // a device plan keeps them on the device (below)
    p.alpha.assign(seg, T(0));
    p.gamma.assign(seg, T(0));
  }
  p.red.assign(std::size_t(p.L * 8), T(0));
  p.sol.assign(std::size_t(p.L * 2), T(0));
  const int threads = std::max(1, omp_get_max_threads());
  p.scratch.assign(std::size_t(threads) * std::size_t(10 * p.P), T(0));
  switch (p.strategy) {
    case ReducedStrategy::allgather:
      if (host_buffers) p.gather.assign(std::size_t(p.P * p.L * 8), T(0));
      break;
    case ReducedStrategy::alltoall: {
      auto lo = [&](int j) { return p.L * j / p.P; };
      p.chunk_lo = lo(p.r);
      p.chunk_n = lo(p.r + 1) - lo(p.r);
      for (int j = 0; j < p.P; ++j) {
        const index_t cn = lo(j + 1) - lo(j);
        p.cnt8.push_back(int(cn * 8));
        p.dsp8.push_back(int(lo(j) * 8));
        p.cnt2.push_back(int(cn * 2));
        p.dsp2.push_back(int(lo(j) * 2));
        p.rcnt8.push_back(int(p.chunk_n * 8));
        p.rdsp8.push_back(int(j * p.chunk_n * 8));
        p.rcnt2.push_back(int(p.chunk_n * 2));
        p.rdsp2.push_back(int(j * p.chunk_n * 2));
      }
      if (host_buffers) {
        p.gather.assign(std::size_t(p.P * p.chunk_n * 8), T(0));
        p.back.assign(std::size_t(p.P * p.chunk_n * 2), T(0));
      }
      break;
    }
    case ReducedStrategy::pcr: {
      p.gather.assign(std::size_t(2 * p.L * 8), T(0));
      p.back.assign(std::size_t(p.L * 8), T(0));
      p.sendbuf.assign(std::size_t(p.L * 8), T(0));
      p.ident.assign(std::size_t(p.L * 8), T(0));
      for (index_t l = 0; l < 2 * p.L; ++l) p.ident[std::size_t(l * 4 + 1)] = T(1);
      break;
    }
    case ReducedStrategy::automatic: break;
  }
  if (!exec.is_host()) {
    cuda_backend::set_device(exec.device());  // the pinned buffers belong to this GPU's context
    p.d_alpha = Array<T>(p.L * p.m, exec);
    p.d_gamma = Array<T>(p.L * p.m, exec);
    p.d_red = Array<T>(p.L * 8, exec);
    p.d_sol = Array<T>(p.L * 2, exec);
    p.d_flag = Array<int>(1, exec);
    p.h_flag = StagingVector<int>(StagingAllocator<int>(true));
    p.h_flag.assign(1, 0);
    p.ev.assign(16, nullptr);  // a solve records at most 12
    p.ev_kind.assign(p.ev.size(), 0);
    for (void*& e : p.ev) e = cuda_backend::partition::event_create();
    if (p.device_solve) {
      const bool all = p.strategy == ReducedStrategy::allgather;
      const index_t solved = all ? p.L : p.chunk_n;  // lines this rank solves
      p.d_gather = Array<T>(p.P * solved * 8, exec);
      p.d_scratch = Array<T>(3 * 2 * p.P * solved, exec);
      if (!all) p.d_back = Array<T>(p.P * solved * 2, exec);
    }
    // Sub-segments: enough threads to fill a GPU (~256K: an H100/H200 holds 2048 per SM)
    // when the lines alone do not.
    int S = options.device_subsegments > 0 ? options.device_subsegments
                                           : int(std::min<index_t>(64, (262144 + p.L - 1) / std::max<index_t>(p.L, 1)));
    S = int(std::max<index_t>(1, std::min<index_t>(S, p.m / 2)));
    p.dw.alpha = p.d_alpha.data();
    p.dw.gamma = p.d_gamma.data();
    p.dw.S = S;
    if (S > 1) {
      p.d_red1 = Array<T>(p.L * 8 * S, exec);
      p.d_w2 = Array<T>(p.L * 6 * S, exec);
      p.d_sol1 = Array<T>(p.L * 2 * S, exec);
      p.dw.red1 = p.d_red1.data();
      p.dw.w2 = p.d_w2.data();
      p.dw.sol1 = p.d_sol1.data();
    }
  }
}

template <class T>
DistributedTridiagonalPlan<T>::~DistributedTridiagonalPlan() = default;
template <class T>
DistributedTridiagonalPlan<T>::DistributedTridiagonalPlan(DistributedTridiagonalPlan&&) noexcept = default;
template <class T>
DistributedTridiagonalPlan<T>& DistributedTridiagonalPlan<T>::operator=(DistributedTridiagonalPlan&&) noexcept =
    default;

template <class T>
void DistributedTridiagonalPlan<T>::solve(const Bands<T>& bands, const T* d, T* u) {
  Impl& p = *impl_;
  detail::require(bands.a && bands.b && bands.c && d && u, "DistributedTridiagonalPlan::solve: null pointer");
  if (p.local) {
    p.local->solve(bands, d, u);
    return;
  }
  if (p.exec.is_host()) {
    p.run(FullBand<T>{bands.a, bands.b, bands.c}, d, u);
    return;
  }
  p.run_device(bands.a, bands.b, bands.c, false, d, u);
}

template <class T>
void DistributedTridiagonalPlan<T>::solve(const SharedBands<T>& bands, const T* d, T* u) {
  Impl& p = *impl_;
  detail::require(bands.a && bands.b && bands.c && d && u, "DistributedTridiagonalPlan::solve: null pointer");
  if (p.local) {
    p.local->solve(bands, d, u);
    return;
  }
  if (p.exec.is_host()) {
    p.run(SharedBand<T>{bands.a, bands.b, bands.c}, d, u);
    return;
  }
  p.run_device(bands.a, bands.b, bands.c, true, d, u);
}

template <class T>
bool DistributedTridiagonalPlan<T>::split() const { return !impl_->local.has_value(); }
template <class T>
ReducedStrategy DistributedTridiagonalPlan<T>::strategy() const { return impl_->strategy; }
template <class T>
const StrategyCosts& DistributedTridiagonalPlan<T>::predicted() const { return impl_->costs; }
template <class T>
Transport DistributedTridiagonalPlan<T>::transport() const { return impl_->transport; }
template <class T>
bool DistributedTridiagonalPlan<T>::reduced_solve_on_device() const { return impl_->device_solve; }
template <class T>
Axis DistributedTridiagonalPlan<T>::axis() const { return impl_->axis; }
template <class T>
const Box3& DistributedTridiagonalPlan<T>::box() const { return impl_->box; }
template <class T>
double DistributedTridiagonalPlan<T>::last_local_seconds() const { return impl_->t_local; }
template <class T>
double DistributedTridiagonalPlan<T>::last_exchange_seconds() const { return impl_->t_exchange; }
template <class T>
double DistributedTridiagonalPlan<T>::last_staging_seconds() const { return impl_->t_staging; }
template <class T>
double DistributedTridiagonalPlan<T>::last_wait_seconds() const { return impl_->t_wait; }
template <class T>
double DistributedTridiagonalPlan<T>::exchanged_bytes() const { return impl_->bytes; }
template <class T>
int DistributedTridiagonalPlan<T>::device_subsegments() const { return impl_->dw.S; }

template class DistributedTridiagonalPlan<float>;
template class DistributedTridiagonalPlan<double>;

}  // namespace adi::mpi
