#pragma once
// Internal: the state of adi::mpi::DistributedTridiagonalPlan<T> shared by the files that
// implement it, one concern each:
//   distributed_tridiagonal.cpp           the method (see there), strategy names and cost
//                                         model, construction, host passes, public members
//   distributed_tridiagonal_exchange.cpp  the reduced system between ranks on the host:
//                                         allgather / alltoall / PCR strategies, its solve
//   distributed_tridiagonal_device.cpp    device plans: passes on the GPU, transports
//                                         (host staging, CUDA-aware MPI, NCCL), their choice
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

namespace partition_detail {

inline double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

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

inline bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

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

}  // namespace partition_detail

using partition_detail::FullBand;
using partition_detail::kGroup;
using partition_detail::now;
using partition_detail::pcr_combine;
using partition_detail::power_of_two;
using partition_detail::SharedBand;
using partition_detail::StagingAllocator;
using partition_detail::StagingVector;

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
  index_t row0 = 0;  // this rank's first row along the axis (rows of the ranks before it)
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
  // The SPIKE form of shared-band solves along x (DistributedOptions::device_spike): the
  // single-device plan of this rank's segments (cut ends, no pivot check: a bad pivot shows as
  // non-finite interface values), d_spike = a_cut, c_cut, W, Z (m each), cp (2m), the bands of
  // the last solve (3m), ends (2L) and d_reach the spikes' reach and whether they are valid (3).
  std::optional<TridiagonalPlan<T>> spike_local;
  Array<T> d_spike;
  Array<index_t> d_reach;
  // Its stages (solve_stage with a TridiagonalStage): spike_local's fused stage kernel takes the
  // lines on every rank of the axis (host: its stage entry); d_ghost the cut ends' terms (two
  // face-shaped arrays). Host plans: h_spike = W, Z, cp (2m), a_cut, c_cut, h_ghost.
  bool spike_stages = false;
  // DistributedOptions::spike_compact (shared-band SPIKE form, 2 <= P <= kSpikeCompactMaxRanks):
  // cpt_k = kSpikeHeader + 2L values per rank; device: d_cpt = this rank's block, then the
  // gathered P blocks (host staging: h_cpt the same in page-locked memory); host plans: h_cpt.
  bool spike_compact = false;
  bool spike_pcr = false;  // DistributedOptions::spike_prepare_pcr (ADI_SPIKE_PREPARE_PCR)
  bool spike_back_batched = false;  // DistributedOptions::spike_back_batched (ADI_SPIKE_BACK_BATCHED)
  bool spike_back_spread = false;   // DistributedOptions::spike_back_spread (ADI_SPIKE_BACK_SPREAD)
  T spike_tol = T(0);               // the spikes' reach tolerance (spike_reach_coarse, ADI_SPIKE_REACH_COARSE)
  // DistributedOptions::spike_half_exchange (ADI_SPIKE_HALF; P = 2, not periodic, L >= 8): this
  // rank's block packed straight into its slot of the gathered blocks, the other rank's half
  // (scalars + the L end values this rank needs) swapped through the cpt buffer's first
  // kSpikeHeader + L values and received into the other's slot at half_offset(): its scalars
  // then copied to the slot's start where that is not where they land (rank 1: the slot of
  // rank 0, whose y_{m-1} sits L + 8 values in).
  bool spike_half = false;
  index_t half_offset() const {
    const index_t q = 1 - r;
    return q * cpt_k + (q == 0 ? L : 0);
  }
  index_t cpt_k = 0;
  Array<T> d_cpt;
  StagingVector<T> h_cpt;
  void exchange_compact_device();
  Array<T> d_ghost;
  std::vector<T> h_spike, h_ghost;
  // The SPIKE form of per-line bands (DistributedOptions::spike_lines, stop 35): lines_local
  // solves y (spike_local, or lines_plan where that is off), lines_R the window of each line's
  // spikes at each end (min(m, spike_window)), d_lines / h_lines: W, Z (R*L each, row-major over
  // lines), cs (2*R*L scratch), ends (2L); lines_reach 2L (W's reach, Z's); d_lines_bad /
  // h_lines_bad the windows' verdict (a line not decayed: this rank runs the partition passes).
  // form: what the last solve ran here ("spike" / "partition" / "local"); fallbacks: solves
  // that fell back. lines_on: the form is on. With y by truncated sweeps (lines_y) lines_plan is
  // made (lines_opts; a measuring plan times its kernels) at the first solve in place, the only
  // one that needs it: lines_solver().
  bool lines_on = false;
  std::optional<TridiagonalPlan<T>> lines_plan;
  TridiagonalPlan<T>* lines_local = nullptr;
  TridiagonalOptions lines_opts;
  TridiagonalPlan<T>& lines_solver() {
    if (!lines_local) lines_local = &lines_plan.emplace(exec, ls, lines_opts);
    return *lines_local;
  }
  index_t lines_R = 0;
  int lines_y = 0;  // DistributedOptions::spike_y_stream (ADI_SPIKE_Y_STREAM): y by truncated sweeps, 1-4
  // DistributedOptions::spike_windows_side (ADI_SPIKE_WINDOWS_SIDE): the windows on side_st,
  // forked from the plan's stream by side_fork, joined by side_join (made at the first solve).
  bool lines_side = false;
  void *side_st = nullptr, *side_fork = nullptr, *side_join = nullptr;
  Array<T> d_lines;
  Array<index_t> d_lines_reach;
  Array<int> d_lines_bad;
  StagingVector<int> h_lines_bad;
  std::vector<T> h_lines;
  std::vector<index_t> h_lines_reach;
  const char* form = "partition";
  long long fallbacks = 0;
  void setup_spike_lines(const DistributedOptions& options);
  // One solve in this form; false where the windows' check failed on this rank (d intact; a
  // device plan may have written y to u): the caller runs the partition passes (the reduced rows
  // of both forms are rows of the same system, so the ranks need not agree).
  bool run_spike_lines_device(const T* a, const T* b, const T* c, const T* d, T* u);
  bool run_spike_lines_host(const T* a, const T* b, const T* c, const T* d, T* u);
  // (y by lines_local; verdict: the event after the windows' verdict's copy)
  bool run_spike_lines_y_device(const T* a, const T* b, const T* c, const T* d, T* u, void* verdict);
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
  // kLocalY: the per-line SPIKE form's y (local, also timed apart: t_y).
  enum Span { kStart = -1, kLocal = 0, kStaging = 1, kExchange = 2, kIdle = 3, kLocalY = 4 };
  std::vector<void*> ev;
  std::vector<int> ev_kind;
  int n_ev = 0;
  double t_local = 0, t_exchange = 0, t_staging = 0, t_wait = 0, bytes = 0, t_y = 0;

  ~Impl() {
    for (void* e : ev) cuda_backend::partition::event_destroy(e);
    cuda_backend::side_event_destroy(side_fork);
    cuda_backend::side_event_destroy(side_join);
    cuda_backend::side_stream_destroy(side_st);
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
  // A device solve's end (the pivot verdict read, the phase times from the events, the
  // SingularSystem of a failed solve): right after its work (finish_device), or, with `defer`
  // (DistributedTridiagonalPlan::defer_settle: inside an adi::AdiSolver step, ADI_SPLIT_DEFER),
  // later, in settle(): the solve then returns once its work is queued, the host does not wait
  // for the GPU, and `unsettled` marks the solve whose end is due; ev.back() closes it (after the
  // flag's copy to h_flag). A solve that starts with one unsettled settles it first.
  bool defer = false, unsettled = false;
  // bands_key (the caller's promise; 0: none) and the key and bands of the last spike_prepare;
  // flag_clear: d_flag known 0 (the last verdict read 0, nothing written since), its memset skipped.
  std::uint64_t key = 0, prepared_key = 0;
  const T* prepared[3] = {nullptr, nullptr, nullptr};
  bool flag_clear = false;
  void conclude_device();
  void settle_device();
  void diagnose_device() const;  // throws the SingularSystem of a failed device solve
  struct {
    const T *a = nullptr, *b = nullptr, *c = nullptr;
    bool shared = false;
  } last_bands;  // the bands of the device solve in flight (diagnose_device)
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
  template <class Band>
  void exchange_host(const Band& bd, bool ok_reduce, double& t1, double& t2);
  // Where a failed solve failed (SingularSystem's fields): the first local line with a zero
  // or non-finite pivot of this rank's forward pass and its row along the whole axis, or
  // {-1, -1}. Host bands; only called once a solve has failed.
  template <class Band>
  std::pair<index_t, index_t> first_bad_pivot(const Band& bd) const;
  // The SingularSystem of a failed solve, the same on every rank of the axis (collective):
  // `bad` from first_bad_pivot, `ends` this rank's two interface values per line (host).
  // System: the first line with a bad pivot on any rank, else the first line whose interface
  // values are not finite (row -1: the reduced system itself failed).
  [[noreturn]] void throw_singular(std::pair<index_t, index_t> bad, const T* ends) const;
  // rhs (shared bands): the stage's right-hand side formed in the reduce pass, d unused.
  void run_device(const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
                  const cuda_backend::partition::StageRhs<T>* rhs = nullptr,
                  const adi::detail::TridiagonalStage<T>* fused = nullptr);

  // The solve path, chosen once in the constructor: the single-device plan of an unsplit
  // axis, the host passes or the device passes; one per band kind.
  void (*solve_full)(Impl&, const Bands<T>&, const T*, T*) = nullptr;
  void (*solve_shared)(Impl&, const SharedBands<T>&, const T*, T*) = nullptr;
  template <class B>
  static void solve_local(Impl& p, const B& bands, const T* d, T* u) { p.local->solve(bands, d, u); }
  static void solve_host(Impl& p, const Bands<T>& bd, const T* d, T* u) {
    if (p.lines_on && p.run_spike_lines_host(bd.a, bd.b, bd.c, d, u)) return;
    p.form = "partition";
    p.run(FullBand<T>{bd.a, bd.b, bd.c}, d, u);
  }
  static void solve_host_shared(Impl& p, const SharedBands<T>& bd, const T* d, T* u) {
    if (p.spike_local)
      p.run_spike_host(bd.a, bd.b, bd.c, d, u, nullptr);
    else
      p.run(SharedBand<T>{bd.a, bd.b, bd.c}, d, u);
  }
  // The SPIKE form on host memory (the device's steps as loops over the same functions).
  void run_spike_host(const T* a, const T* b, const T* c, const T* d, T* u,
                      const adi::detail::TridiagonalStage<T>* fused);
  // The SPIKE form's stage on this rank's cut segments (host and device plans): fused's stage
  // over ls, not periodic, into u; at a cut end (one inside the global line) no face data, and
  // v's neighbour beyond it enters as a Neumann term read from ghost[k] (face-shaped,
  // ghost_size(fused) values; the caller writes a_0 v[-1] / c_{m-1} v[m] there).
  adi::detail::TridiagonalStage<T> cut_stage(const adi::detail::TridiagonalStage<T>& fused, T* u,
                                             T* const ghost[2]) const;
  index_t ghost_size(const adi::detail::TridiagonalStage<T>& fused) const;
  static void solve_device(Impl& p, const Bands<T>& bd, const T* d, T* u) {
    if (p.lines_on && p.run_spike_lines_device(bd.a, bd.b, bd.c, d, u)) return;
    p.form = "partition";
    p.run_device(bd.a, bd.b, bd.c, false, d, u);
  }
  static void solve_device_shared(Impl& p, const SharedBands<T>& bd, const T* d, T* u) {
    p.run_device(bd.a, bd.b, bd.c, true, d, u);
  }
};

}  // namespace adi::mpi
