#pragma once
// Tridiagonal lines that cross ranks: the partition method.
//
// Along a split axis every rank holds a segment of m >= 2 rows of each line. It
// reduces its segment to an equation pair in the segment's first and last unknowns
// (the modified Thomas of the Thomas-PCR hybrid, paper "Manycore algorithms for batch
// scalar and block tridiagonal solvers", section 2.3, algorithm 3), the 2P-row reduced
// system of every line is solved by one of the strategies below, and every rank then
// back-substitutes its interior rows. Along an axis that is not split the plan is the
// single-device TridiagonalPlan, unchanged.
//
//   adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, {4, 1, 1});
//   adi::mpi::Decomposition dec(procs, {nx, ny, nz});
//   adi::mpi::DistributedTridiagonalPlan<double> plan(procs, adi::Axis::x, adi::Executor::host(),
//                                                     dec.local_box());
//   plan.solve(adi::Bands<double>{a, b, c}, d, u);   // this rank's pieces of a, b, c, d, u
//
// The arrays are this rank's box (any Box3 strides, host or device memory as the
// executor says); row i of the local segment is global row lo + i. Non-periodic
// lines ignore a[0] on the first rank and c[m-1] on the last, like TridiagonalPlan.
// SharedBands hold this rank's m rows of the shared coefficient arrays.
//
// Device memory: the local passes and (by default) the reduced solve run on the device
// (solvers/cuda/partition_local_passes.cu); the reduced rows (8 values per line) travel by the
// plan's Transport: through page-locked host buffers and MPI, as device buffers through a
// CUDA-aware MPI, or through NCCL on the executor's stream. A device solve of a split axis
// returns when the work is done (or, with defer_settle, once it is queued: settle() then ends it).
#include <cstdint>
#include <memory>
#include <string>

#include "adi/executor.hpp"
#include "adi/layout.hpp"
#include "adi/mpi/process_grid.hpp"
#include "adi/tridiagonal.hpp"

namespace adi::mpi {

// How the reduced system (2 rows per rank per line) is solved.
enum class ReducedStrategy {
  automatic,  // the cheapest by the plan's latency/bandwidth model (network() of the axis)
  allgather,  // every rank gathers every rank's rows and solves all lines redundantly
  alltoall,   // rank j gathers the rows of a 1/P share of the lines, solves them, returns the results
  pcr,        // parallel cyclic reduction between neighbours: log2(2P) exchanges, no gathering
              // (periodic lines need P a power of two)
};
const char* strategy_name(ReducedStrategy s);
// Parses the names above; throws InvalidArgument listing them.
ReducedStrategy strategy_from_name(const std::string& name);

// How a device plan's reduced rows travel between the ranks of a split axis.
enum class Transport {
  automatic,       // nccl when built with NCCL and every rank of the axis has a GPU of its own,
                   // else cuda_aware_mpi when cuda_aware(), else host_staging
  host_staging,    // device -> page-locked host buffers -> MPI -> device (always works)
  cuda_aware_mpi,  // MPI collectives on the device buffers (needs adi::mpi::cuda_aware())
  nccl,            // NCCL collectives on the executor's stream, no host copies (ADI_WITH_NCCL,
                   // one GPU per rank; allgather / alltoall)
};
const char* transport_name(Transport t);
// Parses the names above; throws InvalidArgument listing them.
Transport transport_from_name(const std::string& name);

// Where a device plan with host staging solves the gathered reduced systems.
enum class ReducedSolveSite {
  automatic,  // allgather: the device; alltoall and pcr: the host (measured, docs/mpi.md)
  host,       // the host (OpenMP), only the 2 unknowns per line go back to the device
  device,     // the device (one thread per line): the gathered rows go to the device
};

struct DistributedOptions {
  bool periodic = false;  // the global lines are cyclic (the process grid axis need not be periodic)
  ReducedStrategy strategy = ReducedStrategy::automatic;
  Kernel kernel = Kernel::automatic;  // the single-device plan of an unsplit axis (formerly local_kernel)
  bool check_pivots = true;           // zero / non-finite pivots throw SingularSystem (on every rank)
  // Device plans of a split axis: sub-segments per line segment, one GPU thread each (see
  // solvers/cuda/partition_local_passes.hpp). 0: enough for ~256K threads; 1: one thread per line.
  // Capped at m/2 (>= 2 rows per sub-segment).
  int device_subsegments = 0;
  // Device plans of a split axis: how the reduced rows travel, and (host staging) where the
  // reduced systems are solved. Host plans exchange host memory with plain MPI. An explicit
  // transport that cannot work (no NCCL, ranks sharing a GPU, an MPI without CUDA support,
  // pcr with a device transport) throws the same Unsupported on every rank.
  Transport transport = Transport::automatic;
  ReducedSolveSite reduced_solve = ReducedSolveSite::automatic;
  // Benchmarks: a barrier over the axis before the exchange, timed apart
  // (last_wait_seconds), so that the exchange time leaves out waiting for slower ranks.
  bool timing_barrier = false;
  // Device plans of a split axis with shared bands, inside an adi::Operator: an ADI stage's
  // right-hand side formed in the reduce pass (solve_stage: 5 field arrays per stage instead
  // of 7). false: the operator forms it in a separate pass first (the path before stop 30,
  // kept for comparison).
  bool stage_in_passes = true;
  // Device plans of a split axis: each GPU thread loads its rows a chunk ahead of their stores
  // in the partition passes (lines along Y and Z), the row tiles of lines along X are filled a
  // batch of lines at a time (partition::Workspace::prefetch, stop 31). false: one row / line
  // at a time, the kernels before (kept for comparison: compiled only with
  // -DADI_CUDA_UNROLL_ALL=ON; other builds say so once on stderr and run the default).
  bool device_prefetch = true;
  // With device_prefetch: rows also requested into L2 well ahead of their loads (lines along Y
  // and Z: 16 rows ahead; along X: each line's next tile), the X tiles of an ADI stage read V
  // once per row instead of three times across tile edges, and the X tiles aligned to memory
  // (partition::Workspace::l2_prefetch, stop 32). Applied to lines along Y and Z with shared
  // bands (the ADI stages), where it measured faster on 2 x H200; along X and with per-line
  // bands only with device_l2_prefetch_everywhere (measured slower there: kept for comparison,
  // compiled only with -DADI_CUDA_UNROLL_ALL=ON, as device_prefetch = false).
  // false: the stop 31 passes (kept for comparison).
  bool device_l2_prefetch = true;
  bool device_l2_prefetch_everywhere = false;
  // Split axes with shared bands (stop 33): the SPIKE form instead of the partition passes:
  // each rank's segments solved by the single-device tridiagonal kernels with their ends cut
  // (TridiagonalPlan; an ADI stage by its fused stage kernel, right-hand side included: 3 field
  // arrays), the two spikes (line-independent) when the bands change, the reduced rows from the
  // local solution's end rows, and the back pass one read and one write per row the spikes
  // reach (a few dozen from each end for an ADI stage), without a recurrence: a split stage
  // then moves ~3.3 field arrays against the partition passes' 5 (2 x H200, 512^3 per GPU:
  // weak z 5.51 -> 4.91 ms, y 5.51 -> 4.93, x 6.75 -> 5.15; 1 GPU 4.47). false: the partition
  // passes (kept for comparison). Host plans: only with host_spike (the same steps as loops;
  // the tests). ADI_PARTITION_SPIKE=1 / 0 overrides both fields.
  bool device_spike = true;
  bool host_spike = false;
  // The SPIKE form with shared bands, its tail compact (stop 37; the default since stop 38: 2 x H200,
  // 512^3 strong scaling, the step 2.8-5.2% faster, the exchange 0.10 -> 0.05 ms; false: stop 36's
  // tail, for a same-run A/B): with shared bands the reduced rows of all lines share their
  // coefficients, so each rank sends y's two end values per line and 8 line-independent scalars
  // (2L + 8 values, not 8L) through one allgather of the plan's transport (whatever its
  // strategy), then one launch per line forms every rank's reduced rows, solves them, and corrects the rows the spikes reach
  // (loaded 8 rows at a time per thread): 2 kernels and one collective in place of spike_reduce,
  // the strategy's collectives, the reduced solve, spike_back's 2 kernels. The same functions in
  // the same order: the same values as stop 36's tail. Split axes of 2 to 8 ranks (more: stop 36's
  // tail). ADI_SPIKE_COMPACT=1 / 0 overrides.
  bool spike_compact = true;
  // The SPIKE form's spikes (shared bands, device plans), computed whenever the bands differ
  // from the last solve's: off, two sequential Thomas sweeps on one GPU thread each and their
  // reach scanned by one thread (~85 us on an H200 for 256 rows per rank, the whole GPU idle
  // meanwhile); on (stop 38, h-splitstage), for segments of up to 512 rows: parallel cyclic
  // reduction, a thread per row, and the reach by block-wide reductions (a few us; W, Z equal
  // to rounding, not bitwise). It matters because the bands do change every step in practice:
  // AdiSolver's s = theta (t1 - t0) with t1 = t0 + dt differs from theta dt in its last bits
  // for most t (before 259c67d, stop 38: bench_mpi_heat's strong 512^3 step, every step;
  // ADI_SPIKE_PREPARE_PCR=1 / 0 overrides). On by default since stop 39 (tests/mpi/gpu_splitstage_ab.sh
  // with the two below, 2 x H200: split steps -1.6..-3.1%; docs/mpi.md "Stop 39").
  bool spike_prepare_pcr = true;
  // The compact tail's correction (spike_compact_back, lines of stride > 1): rows loaded 8 at a
  // time per thread before their stores, and the rows after the last full 8 one at a time (off)
  // or as one more predicated batch (on, stop 38, h-splitstage): a heat stage's ~45 reached rows
  // end with 5 round trips of one load in flight per thread otherwise. The same values.
  // ADI_SPIKE_BACK_BATCHED=1 / 0 overrides. On by default since stop 39 (measured with the others).
  bool spike_back_batched = true;
  // The compact tail's correction spread (stop 39, h-splitwait; lines of stride > 1; on by
  // default since stop 40, measured with the other split switches): the lines' reduced solves in one launch, then the reached rows'
  // correction over (line, batch of 8 rows) items in a second launch of about one wave of blocks
  // (grid-stride) instead of a thread per line (512^2 lines: ~1.7 waves, ~45 rows in 6 round trips
  // a thread; 87 us under ncu at 2.2 TB/s, stop 39). The same values. ADI_SPIKE_BACK_SPREAD=1 / 0
  // overrides.
  bool spike_back_spread = true;
  // The reach of the shared-band SPIKE form's spikes (device plans; stop 39, h-splitwait; on by
  // default since stop 40): rows whose spike entries stay below tol x the spike's largest are not
  // corrected. Off: tol = 1e-3 epsilon (common::kSpikeTol; a heat stage's spikes, decaying by
  // 0.38 a row at 512^3, reach 45 rows); on: epsilon / 8 (40 rows, ~11% less correction traffic;
  // a dropped term stays below an eighth of the row's own rounding). ADI_SPIKE_REACH_COARSE=1 / 0
  // overrides.
  bool spike_reach_coarse = true;
  // The compact tail on a 2-rank non-periodic line (stop 38, h-splitstage): each rank needs only
  // one of the other's two end values per line (rank 0 rank 1's y_0, rank 1 rank 0's y_{m-1}: the
  // far end's value enters the other rank's reduced rows with an exact 0 coefficient), so on,
  // the ranks swap the 8 scalars + L values (one send/receive of the transport) instead of
  // allgathering 8 + 2L; the missing value is a finite placeholder (0), the same values up to the
  // sign of a zero. Lines of at least 8 per rank (kSpikeHeader; fewer: the allgather).
  // ADI_SPIKE_HALF=1 / 0 overrides. On by default since stop 39 (measured with the others).
  bool spike_half_exchange = true;
  // Split axes with per-line bands (Bands: the public case, stop 35): the SPIKE form, truncated.
  // y = each rank's segments solved as lines of their own by the single-device kernels (5 arrays:
  // read a, b, c, d, write u), each line's spikes only on spike_window rows at each end (computed
  // from those rows alone), the reduced rows, the exchange and the reduced solve as above, and the
  // correction of the rows the spikes reach: ~5 arrays + 8 * spike_window / m against the
  // partition passes' 11. Every line checks its spikes: where one has not decayed below
  // 1e-3 x epsilon an eighth of the window before the window's end (weakly dominant or
  // non-dominant bands), that rank runs the partition passes for the solve (device plans: the
  // host reads the verdict while y is solved, or before y when u == d; a y solved ahead is then
  // wasted). With y by the single-device kernel it measured level with the partition passes
  // (stop 35, 2 x H200: 0.861 / 0.875 ms against 0.850 / 0.886); with y by truncated sweeps
  // (spike_y_stream 3, below) 0.757 ms against 1.165 on the public case (stop 41, 2 x H100;
  // docs/mpi.md). So device plans of lines along y or z (as measured) take it by themselves where
  // this rank's segment has at least spike_lines_rows rows (the public case: 2048); spike_lines =
  // true takes it at every length and along x too (host plans: with host_spike too).
  // ADI_SPIKE_LINES=1 / 0 overrides both (forced / never).
  bool spike_lines = false;
  // Device plans, lines along y or z: the SPIKE form of per-line bands from this many rows a
  // segment (0: only with spike_lines).
  index_t spike_lines_rows = 1024;
  int spike_window = 64;  // rows at each end (capped at m; m: the exact spikes, no check)
  // The single-device kernel of y: the fastest measured on this layout when the plan is made
  // (spike_measure; TridiagonalOptions::measure, cached per shape and process: the dispatch
  // table's pick for the public case, cuda_thomas_strided, took 0.971 ms against
  // cuda_thomas_pcr_long's 0.675), or spike_kernel by name, or (neither) the dispatch table's.
  Kernel spike_kernel = Kernel::automatic;
  bool spike_measure = true;
  // spike_lines' y by truncated sweeps instead of the single-device kernel (stop 40, h-publocal;
  // common::spike_y_part): each line cut into parts, a GPU thread per (line, part), its forward
  // sweep started G rows early from a cut and its backward sweep run in chunks from G rows past
  // each chunk (c*, y* in a ring on chip): a, b, c, d read on (1 + 2G parts / m) of the rows and u
  // written once (5.16 arrays for the public case's 2 parts of 2048 rows), a thread per line and
  // part streaming like the partition passes. Checked per line as the windows are (the
  // truncations' products below 1e-3 x epsilon, values finite), the verdict read after y (the
  // host waits for it: a failed line makes the rank run the partition passes). Not in place
  // (u == d: the single-device kernel). 0 off, 1 on, 2 on with rows requested into L2 ahead, 3
  // on with the loads double-buffered (the next 8 rows' loads in flight while 8 rows are made), 4
  // both; -1 (the default since stop 41) automatic: 3 on lines along y and z (a warp's 32
  // neighbouring lines read as one run a row; measured on the public case, 2 x H100, 2048-row
  // segments: y 0.755 ms by cuda_thomas_pcr_long (0), 0.640 (1), 0.852 (2), 0.568 (3), 1.002
  // (4); the solve 0.957 -> 0.757 ms; docs/mpi.md, stop 41), 0 along x (not measured there: each
  // line's rows are its own run). ADI_SPIKE_Y_STREAM=0 .. 4 overrides. (A fifth form, the loads
  // triple-buffered, was measured at stop 43 and removed: 17% slower than 3 on an H200.)
  int spike_y_stream = -1;
  // Device plans, spike_lines: the windows (spike_lines_prepare, ~0.045 ms on the public case: a
  // thread per line end, two dependent 64-row sweeps each) on a side stream of the plan, beside y
  // (y by truncated sweeps leaves room on every SM, and cuda_thomas_pcr_long at 2048 rows a line:
  // one block of ~115 KB a SM), joined before the reduced rows; the windows' verdict then read from the side
  // stream. Off by default (not measured yet). ADI_SPIKE_WINDOWS_SIDE=1 / 0 overrides.
  bool spike_windows_side = false;
};

// The model's predicted seconds of each strategy for a plan (what `automatic` compared).
struct StrategyCosts {
  double allgather = 0, alltoall = 0, pcr = 0;
};

// The model's predicted seconds per solve of each strategy for `lines` lines of
// `value_size`-byte values split over `ranks` ranks (what `automatic` compares).
StrategyCosts model_costs(const NetworkModel& net, std::size_t value_size, index_t lines, int ranks, bool periodic);

template <class T>
class DistributedTridiagonalPlan;
}  // namespace adi::mpi
namespace adi::cuda_backend::partition {
template <class T>
struct StageRhs;  // solvers/cuda/partition_local_passes.hpp
}  // namespace adi::cuda_backend::partition
namespace adi::detail {
template <class T>
struct TridiagonalStage;  // adi/detail/tridiagonal_stage.hpp
}  // namespace adi::detail
namespace adi::mpi {

template <class T>
class DistributedTridiagonalPlan {
 public:
  // Collective over procs.axis_comm(axis). `local` is this rank's box; every rank of the
  // axis must have the same extents across the axis (the same lines) and >= 2 rows along
  // it when it is split: otherwise every rank throws the same InvalidArgument. Builds
  // buffers, measures the network (once per ProcessGrid axis) and picks the strategy.
  DistributedTridiagonalPlan(const ProcessGrid& procs, Axis axis, const Executor& exec, const Box3& local,
                             DistributedOptions options = {});
  ~DistributedTridiagonalPlan();
  DistributedTridiagonalPlan(DistributedTridiagonalPlan&&) noexcept;
  DistributedTridiagonalPlan& operator=(DistributedTridiagonalPlan&&) noexcept;

  // Collective over the axis. Solves every line; u may equal d. Allocates nothing.
  void solve(const Bands<T>& bands, const T* d, T* u);
  void solve(const SharedBands<T>& bands, const T* d, T* u);
  // An ADI stage with shared bands: the same solve with the right-hand side formed inside the
  // reduce pass from `rhs` (the stage's base, V_old and boundary terms: see StageRhs) instead
  // of read from d, which a separate pass would write (5 field arrays per stage instead of 7).
  // Returns false, having done nothing, where the plan cannot: not a device plan of a split
  // axis, or u == rhs.v on lines along x (stride 1). Collective.
  bool solve_stage(const SharedBands<T>& bands, const cuda_backend::partition::StageRhs<T>& rhs, T* u);
  // Whether solve_stage takes this plan's stages (u_is_v: u == rhs.v).
  bool takes_stage(bool u_is_v) const;
  // The SPIKE form's ADI stage (DistributedOptions::device_spike): the cut segments solved by
  // the single-device fused stage kernel, which forms the right-hand side from `stage` (A's line
  // coefficients, base, v with its ghost planes exchanged, the global ends' face data; its
  // lines and u are the plan's and `u`), then the spikes' correction. Returns false, having
  // done nothing, where the plan has no SPIKE stage (not SPIKE, no fused stage kernel for these
  // lines on some rank of the axis, or stage.fold in use). Collective.
  bool solve_stage(const SharedBands<T>& bands, const adi::detail::TridiagonalStage<T>& stage, T* u);

  // Device plans of a split axis (stop 39, h-splitwait): with `on`, a solve returns once its
  // work is queued on the executor's stream, without waiting for the GPU; its end (the pivot
  // verdict, the phase times, the SingularSystem of a failed solve) waits for settle(), which
  // must follow before the solution is used on the host or the times are read (an
  // adi::Operator defers inside an AdiSolver step unless ADI_SPLIT_DEFER=0, and settles at the step's
  // end). Off (the default): every solve waits for its end. The plan's next solve settles a
  // deferred one first. Host plans and unsplit axes: no effect.
  void defer_settle(bool on);
  bool unsettled() const;  // a deferred solve's end is due
  // A caller's promise about the shared bands of the next solves (stop 39, h-splitwait;
  // in an adi::Operator unless ADI_SPLIT_LEAN=0): while `key` stays the same non-zero value, bands at the
  // same addresses hold the same values, so the SPIKE form's spikes need no check (the
  // spike_prepare launch that compares the bands with the kept ones is skipped). 0: no promise
  // (the default: the device compares). With a key the pivot flag's clearing launch is skipped
  // too where the last verdict read 0 (nothing writes the flag between). Device plans of a split axis.
  void bands_key(std::uint64_t key);
  // Completes a deferred solve (no-op without one): waits for its work, reads its verdict and
  // times, and throws its SingularSystem on every rank of the axis (collective then, like solve).
  void settle();

  bool split() const;                  // the axis is split over more than one rank
  ReducedStrategy strategy() const;    // the strategy in use (meaningful when split())
  // The transport in use: host_staging for host plans and unsplit axes (nothing to stage).
  Transport transport() const;
  // Whether the reduced systems are solved on the device (device plans of a split axis).
  bool reduced_solve_on_device() const;
  const StrategyCosts& predicted() const;  // zero unless the strategy was automatic
  Axis axis() const;
  const Box3& box() const;
  // Seconds of the last solve: local passes (reduction + back-substitution), the
  // reduced-system exchange and solve, and (device plans) the copies between device and
  // host buffers. Device plans time the phases with events on the stream.
  double last_local_seconds() const;
  double last_exchange_seconds() const;
  double last_staging_seconds() const;
  // With DistributedOptions::timing_barrier: seconds this rank waited in it (0 otherwise).
  double last_wait_seconds() const;
  // Device plans, the per-line SPIKE form (spike_lines): seconds of the last solve's y (the cut
  // segments by the single-device plan), part of last_local_seconds(); 0 otherwise.
  double last_spike_y_seconds() const;
  // Bytes this rank sent + received in the last solve's reduced-system exchange.
  double exchanged_bytes() const;
  // Device plans of a split axis: the sub-segments per line segment in use (1 otherwise).
  int device_subsegments() const;
  // The form the last solve ran on this rank: "local" (unsplit axis), "spike" (the SPIKE form;
  // "spike compact" with shared bands and DistributedOptions::spike_compact),
  // "partition" (the partition passes; with spike_lines on: a fall-back); solves that fell back
  // from the per-line SPIKE form (DistributedOptions::spike_lines) so far; its window (0: off).
  const char* last_form() const;
  long long spike_fallbacks() const;
  index_t spike_window() const;
  // y's single-device kernel in that form (automatic: off, or with y by truncated sweeps before
  // a solve in place made it).
  Kernel spike_kernel() const;
  // y by truncated sweeps in that form (DistributedOptions::spike_y_stream as the plan took it,
  // 1-4; 0: y by spike_kernel(), or the form off); in place (u == d) y is spike_kernel()'s.
  int spike_y_stream() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class DistributedTridiagonalPlan<float>;
extern template class DistributedTridiagonalPlan<double>;

}  // namespace adi::mpi
