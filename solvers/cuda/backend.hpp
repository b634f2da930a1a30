#pragma once
// The CUDA backend seen from plain C++: no CUDA header here, streams are void*.
// The device kernel list: implemented in solvers/cuda/*.cu when adi is built with CUDA;
// without CUDA the same list (ADI_CUDA_KERNEL, solvers/cuda/kernel_list.hpp) reports "no
// device" or throws Unsupported.
#include <array>
#include <cstddef>

#include "adi/base/stencil.hpp"
#include "adi/base/hines_view.hpp"
#include "adi/base/block_layout.hpp"
#include "adi/base/layout.hpp"
#include "adi/base/tridiagonal_types.hpp"
#include "adi/base/variable_layout.hpp"
#include "solvers/cuda/device_guard.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN

// built with CUDA at all
ADI_CUDA_KERNEL_OR(return false;, bool compiled())
// the timing-only kernel forms compiled (CMake ADI_CUDA_UNROLL_ALL; issue 15 item 8): without
// them a Tuning or ADI_PCR_STRIDED_GROUPS asking for one runs the default (and says so), so
// the benchmarks skip the rows that time them
ADI_CUDA_KERNEL_OR(return false;, bool timing_forms_compiled())
// 0 on any CUDA error (no driver, no device)
ADI_CUDA_KERNEL_OR(return 0;, int device_count())
// set_device, current_device and the scoped DeviceGuard: solvers/cuda/device_guard.hpp
// throws DeviceError
ADI_CUDA_KERNEL(void* allocate(std::size_t bytes, int device))
ADI_CUDA_KERNEL_OR(, void deallocate(void* p) noexcept)
enum class Copy { host_to_device, device_to_host, device_to_device, host_to_host };
// synchronous
ADI_CUDA_KERNEL(void copy(void* dst, const void* src, std::size_t bytes, Copy kind))
ADI_CUDA_KERNEL(void memset_zero(void* p, std::size_t bytes))
// enqueued on `stream`
ADI_CUDA_KERNEL(void memset_zero_async(void* p, std::size_t bytes, void* stream))
// p[i] = base + step * (i % period), enqueued on `stream` (test and measuring data).
template <class T>
ADI_CUDA_KERNEL(void fill_pattern(T* p, std::size_t count, T base, T step, unsigned period, void* stream))
ADI_CUDA_KERNEL_OR(, void synchronize(void* stream))
ADI_CUDA_KERNEL_OR(return false;, bool is_device_pointer(const void* p))

struct DeviceInfo {
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t shared_per_block = 0;
  std::size_t shared_per_block_optin = 0;  // after cudaFuncSetAttribute (227 KB on an H100)
  std::size_t global_memory = 0;
  char name[256] = {};
};
ADI_CUDA_KERNEL(DeviceInfo device_info(int device))

// Tridiagonal kernels (solvers/cuda/*.cuh). Assume validated input.
template <class T>
struct BandView {
  const T* a;
  const T* b;
  const T* c;
  bool shared;
};
ADI_CUDA_KERNEL(std::size_t tridiagonal_workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic,
                                        std::size_t value_size))
// Enqueues the solve on `stream`. `pivot_flag` (an int the device can write: device or
// pinned host memory; may be null) is set non-zero by the kernel on a zero or non-finite
// pivot.
template <class T>
ADI_CUDA_KERNEL(void tridiagonal_solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u,
                       bool periodic, void* workspace, int* pivot_flag, void* stream))
// automatic's device-side fall-back: partial pivoting (Kernel::cuda_pivoting's route for the
// layout) enqueued after a checked Thomas solve whose flag is `gate`; its blocks return at
// once while *gate is zero, so nothing is read back. False, and nothing enqueued, where the
// layout's route cannot be gated (solvers/cuda/pivoting_thread.cuh, launch_pivoting_gated).
template <class T>
ADI_CUDA_KERNEL_OR(return false;, bool pivoting_fallback_solve(const LineSet& lines, BandView<T> bands, const T* d,
                       T* u, bool periodic, void* workspace, const int* gate, int* pivot_flag, void* stream))

// Shared memory one block of `kernel` needs at the least (0 for kernels that need
// little); the dispatch table compares it with DeviceInfo::shared_per_block_optin.
ADI_CUDA_KERNEL_OR(return 0;, std::size_t tridiagonal_min_shared_bytes(Kernel kernel, const LineSet& lines, bool shared_bands,
                                         std::size_t value_size))

// Launch-shape overrides of the hybrid kernels (cuda_thomas_pcr, _pcr_strided, _pcr_long),
// for the benchmark's tuning rows; 0 keeps the default policy.
struct Tuning {
  int lines_per_block = 0;  // pcr_strided, pcr_long: lines per tile (power of two <= 32)
  int warps_per_block = 0;  // both
  int rows_per_thread = 0;  // pcr_strided (registers): segment length, 8 or 16 (8 where the default is
                            // 16: only with -DADI_CUDA_UNROLL_ALL=ON); pcr_long: 16 or 32
  int prefetch = -1;        // pcr (lines up to 256): load the next line during a solve (0 off, 1 on)
  int cluster = 0;          // pcr_long: blocks per thread-block cluster sharing a tile (1 none, 2..8: sm_90)
};
template <class T>
ADI_CUDA_KERNEL(void tridiagonal_solve_tuned(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u,
                             bool periodic, void* workspace, int* pivot_flag, void* stream,
                             const Tuning& tuning))

// Variable-size batches (solvers/cuda/variable_batch_pack.cu). A user layout of one array:
// CompactBatch when offsets is set (element k of system s at offsets[s] + k, device
// array), PaddedInterleaved otherwise (k*stride + s).
struct VariableSource {
  const index_t* offsets;
  index_t stride;
};
// Copies between `src`'s user layout and SortedInterleaved (to_sorted) or back, on `stream`.
template <class T>
ADI_CUDA_KERNEL(void variable_pack(const VariableBatchView& v, VariableSource layout, const T* src, T* dst, bool to_sorted,
                   void* stream))

// Variable-size tridiagonal kernels (solvers/cuda/thomas_variable*.cu): one thread per
// system. Layout of the arrays: padded (k*stride + s, CP over `rows` rows or NCP),
// sorted (SortedInterleaved), compact (offsets[s] + k, device offsets) or pointers.
// sorted_truncated / padded_truncated / compact_truncated (stop 45): the sorted / padded / compact
// layout by truncated sweeps (non-periodic, u must not alias d), re-solved by the exact kernel
// (sorted / padded CP / compact) where they refuse, decided on the device.
enum class VariableKernel {
  padded,
  stop_at_size,
  sorted,
  compact,
  pointers,
  sorted_truncated,
  padded_truncated,
  compact_truncated
};
// The exact kernel of a kind: itself, or the one a truncated kind falls back to (and whose
// scratch it uses; the pivoting kernels take this one too).
constexpr VariableKernel exact_variable_kernel(VariableKernel k) {
  return k == VariableKernel::sorted_truncated    ? VariableKernel::sorted
         : k == VariableKernel::padded_truncated  ? VariableKernel::padded
         : k == VariableKernel::compact_truncated ? VariableKernel::compact
                                                  : k;
}
template <class T>
struct VariableDeviceArrays {
  const T* a = nullptr;
  const T* b = nullptr;
  const T* c = nullptr;
  const T* d = nullptr;
  T* u = nullptr;
  // PointerBatch: device arrays of count pointers.
  const T* const* pa = nullptr;
  const T* const* pb = nullptr;
  const T* const* pc = nullptr;
  const T* const* pd = nullptr;
  T* const* pu = nullptr;
  index_t stride = 0;               // padded
  int rows = 0;                     // padded
  const index_t* offsets = nullptr;  // compact
  // The truncated kinds: the lanes of a warp run the same rows (identity rows past their sizes; the
  // plan's choice for padded batches whose neighbouring sizes differ) instead of their own sizes.
  bool lanes_in_step = false;
};
ADI_CUDA_KERNEL(std::size_t variable_tridiagonal_workspace_bytes(VariableKernel kernel, const VariableBatchView& v,
                                                                 index_t stride, int rows, bool periodic,
                                                                 std::size_t value_size))
// Enqueues the solve; `bad_system` (device int) receives the smallest system index with a
// zero or non-finite pivot, or stays kNoBadSystem (the launch sets it so first).
inline constexpr int kNoBadSystem = 0x7f7f7f7f;
template <class T>
ADI_CUDA_KERNEL(void variable_tridiagonal_solve(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                                bool periodic, void* workspace, int* bad_system, void* stream))

// Variable-size batched Cholesky (solvers/cuda/cholesky_vbatched*.cu). A launch covers the
// range [first, first + count) of the batch plan's size order (max_size: its largest):
// fused = a matrix per warp in registers (max_size <= 32); blocked = a matrix per block,
// left-looking panels in shared memory, `variant` picking (panel width, threads).
enum class CholeskyGpuKernel { fused, blocked };
struct CholeskyRange {
  index_t first = 0, count = 0;
  int max_size = 0;
  CholeskyGpuKernel kernel = CholeskyGpuKernel::blocked;
  int variant = 0;
};
inline constexpr int kCholeskyBlockedVariants = 4;  // (NB, threads): (16, 64) (32, 128) (32, 256) (16, 256)
// A and ld: device arrays of count matrix pointers and leading dimensions; info: device.
template <class T>
ADI_CUDA_KERNEL(void cholesky_vbatched_factor(const VariableBatchView& v, const CholeskyRange& range, T* const* A, const int* ld,
                              int* info, void* stream))
template <class T>
ADI_CUDA_KERNEL(void cholesky_vbatched_solve(const VariableBatchView& v, const T* const* L, const int* ld, T* const* B,
                             const int* ldb, int nrhs, const int* info, void* stream))
// out[s] = base + offsets[s] (a CompactBatch seen as pointers).
template <class T>
ADI_CUDA_KERNEL(void cholesky_pointers(T* base, const index_t* offsets, index_t count, T** out, void* stream))
// Side streams and events, so that the launches of different size classes overlap (MAGMA
// runs its size classes concurrently too). Owned by a plan, created once.
// non-blocking
ADI_CUDA_KERNEL(void* side_stream_create(int device))
ADI_CUDA_KERNEL_OR(, void side_stream_destroy(void* stream) noexcept)
// timing disabled
ADI_CUDA_KERNEL(void* side_event_create(int device))
ADI_CUDA_KERNEL_OR(, void side_event_destroy(void* event) noexcept)
ADI_CUDA_KERNEL(void side_event_record(void* event, void* stream))
ADI_CUDA_KERNEL(void side_stream_wait(void* stream, void* event))

// Timing marks on a stream (cudaEvent_t as void*): the ADI solver times its parts with
// them instead of synchronising the device around every part.
ADI_CUDA_KERNEL(void* event_create())
ADI_CUDA_KERNEL_OR(, void event_destroy(void* event) noexcept)
ADI_CUDA_KERNEL(void event_record(void* event, void* stream))
// recorded work reached (non-blocking)
ADI_CUDA_KERNEL(bool event_done(void* event))
// waits for stop
ADI_CUDA_KERNEL(double event_elapsed_ms(void* start, void* stop))

// Waits until the recorded work is reached.
ADI_CUDA_KERNEL(void event_wait(void* event))
// Page-locked host memory, and an upload from it that returns at once (ordered on
// `stream`): data computed on the host reaches the device without a synchronisation.
ADI_CUDA_KERNEL(void* pinned_allocate(std::size_t bytes))
ADI_CUDA_KERNEL_OR(, void pinned_free(void* p) noexcept)
ADI_CUDA_KERNEL(void upload_async(void* dst, const void* pinned_src, std::size_t bytes, void* stream))

// Every allocate() so far (a test checks that repeated ADI steps allocate nothing).
ADI_CUDA_KERNEL_OR(return 0;, std::size_t allocation_count())
// Copies on `stream`, ordered with the work queued there, and waits for them.
ADI_CUDA_KERNEL(void copy_on_stream(void* dst, const void* src, std::size_t bytes, Copy kind, void* stream))

// Stencil kernels of the ADI operator (solvers/cuda/stencil_*.cu), the CUDA versions of
// solvers/cpu/stencil_* with the same arguments (adi/base/stencil.hpp), enqueued on
// `stream`. Assume validated input.
template <class T>
ADI_CUDA_KERNEL(void stencil_apply(const adi::detail::StencilView<T>& view, const adi::detail::ApplyArgs<T>& args, void* stream))
// Launches of stencil_apply's pair form so far (ADI_STENCIL_PAIRS=1 and a layout it fits): tests
// check that it ran.
ADI_CUDA_KERNEL_OR(return 0;, std::size_t stencil_pair_launches())
template <class T>
ADI_CUDA_KERNEL(void stencil_face(T* f, const Box3& box, const adi::detail::FaceRegion& region, const T* values, T scale, bool add,
                  void* stream))
template <class T>
ADI_CUDA_KERNEL(void stencil_diagonal(const T* d, T inv_s, T* b, index_t n, void* stream))

// Several face writes (f[node] = scale * values[...]) in one launch, in order: where two
// faces share an edge the later one's value stays, as if they ran one after the other.
template <class T>
struct FaceWrite {
  adi::detail::FaceRegion region;
  const T* values = nullptr;
  T scale = T(1);
};
constexpr int kMaxFaceWrites = 6;
template <class T>
ADI_CUDA_KERNEL(void stencil_faces(T* f, const Box3& box, const FaceWrite<T>* writes, int count, void* stream))

// The Dirichlet values of an intermediate ADI stage on one face, from boundary data alone:
// solvers/common/stencil_face_core.hpp (the host version is cpu::stage_face_values).
// Only the face's nodes in the region's ranges are written.
template <class T>
ADI_CUDA_KERNEL(void stage_face_values(const adi::detail::StencilView<T>& view, const adi::detail::FaceRegion& region,
                       const T* g_new, const T* g_old, const std::array<T, 3>& w,
                       const std::array<std::array<const T*, 2>, 3>& neumann_new,
                       const std::array<std::array<const T*, 2>, 3>& neumann_old, const T* src_new,
                       const T* src_old, T src_scale, T* out, void* stream))

// One implicit ADI stage along an axis with shared bands, in one kernel
// (solvers/cuda/thomas_pcr_fused_stage.cuh): per line the right-hand side
//   base*inv_s - (A v) + sources + Neumann terms        (Dirichlet end rows: `end`)
// is formed as the line is loaded, the bands of (I/s - A) are generated in the kernel
// from A's line coefficients (a, inv_s - d, c), the line is solved by the Thomas-PCR
// hybrid and u is written. A sweep moves base, v and u, nothing else field-shaped.
// Row i of A: (A v)_i = -a[i] v_{i-1} + d[i] v_i - c[i] v_{i+1} (wrapping when periodic).
// The explicit operator folded into a stage (Operator::solve_folded): the right-hand
// side's base is not read from FusedStage::base (null) but formed at each node from up to
// two fields P_q and their neighbours along every axis, as the explicit stencil pass would:
//   base = sum_q alpha[q] P_q + sum_q sum_b w[q][b] (A_b P_q + Neumann data of axis b),
// with (A_b P)_i = d[i] P_i - a[i] P_prev(i) - c[i] P_next(i) of view.axis[b] (shared bands
// only: no mixed terms). Sources go through FusedStage::src.
template <class T>
struct FusedExplicit {
  int count = 0;                         // terms; 0: a plain stage (base read from memory)
  std::array<const T*, 2> p{};           // P_q at the sweep's first node, like base
  std::array<T, 2> alpha{};
  std::array<std::array<T, 3>, 2> w{};   // per axis x, y, z; 0 where the axis is unused
  // Neumann face data of term q, axis b, side (0: lo, 1: hi), scaled like face values;
  // indexed c1 + c2 * n1 by the node's coordinates on b's other two axes.
  std::array<std::array<std::array<const T*, 2>, 3>, 2> neumann{};
  adi::detail::StencilView<T> view;      // the axes' line coefficients and neighbours, the field's strides
  std::array<index_t, 3> org{};          // field coordinates of the sweep's first node
  int axis = 0;                          // the stage's axis
};

template <class T>
struct FusedStage {
  LineSet lines;  // the sweep: every pointer below (field-shaped ones) is at its first node
  bool periodic = false;
  const T* base = nullptr;
  const T* v = nullptr;  // null: no explicit part
  T inv_s = T(1);
  const T* a = nullptr;  // A's line coefficients, length lines.n
  const T* d = nullptr;
  const T* c = nullptr;
  // Per end of a line (0: row 0, 1: row n-1), face arrays read at
  // face_base + l0 + l1*face_n1 for line l0 + l1*lines.count0 (null: not that kind):
  std::array<const T*, 2> end{};      // Dirichlet: the stage's value at the end row
  std::array<const T*, 2> v_end{};    // Dirichlet: v's value at the end row (read instead of v)
  std::array<const T*, 2> neu_add{};  // Neumann: added to the end row's right-hand side
  std::array<const T*, 2> neu_sub{};  // Neumann: subtracted from it
  index_t face_base = 0;
  index_t face_n1 = 0;
  std::array<const T*, 2> src{};  // field-shaped sources, times src_scale
  std::array<T, 2> src_scale{};
  T* u = nullptr;  // may equal base or v (with fold: a P_q only when no other axis is read)
  FusedExplicit<T> fold;  // fold.count > 0: the explicit operator folded in (base unused)
};
// Whether the fused stage takes these lines: stride-1 lines (X) or neighbouring lines
// adjacent in memory (Y, Z), n <= 4096.
ADI_CUDA_KERNEL_OR(return false;, bool fused_stage_supported(const LineSet& lines))
// Launch-shape overrides of the fused stage, for the benchmark's tuning rows (0: default).
struct FusedTuning {
  int warps = 0;       // X: warps per block
  int min_blocks = 0;  // X: 2, 3 or 4 blocks per SM (register cap); Y/Z: 1 or 2 (X 3, 4 and Y/Z 2:
                       // only with -DADI_CUDA_UNROLL_ALL=ON, else the default and a note on stderr)
  int rows = 0;        // Y/Z: rows per thread, 8 or 16 (8: only with -DADI_CUDA_UNROLL_ALL=ON, as above)
  int lines = 0;       // Y/Z: lines per tile
  // X with the explicit operator folded in: the shared-memory carveout its resident blocks
  // need, the rest L1 for the neighbouring lines it reads (false), or all shared (true).
  bool fold_max_shared = false;
};
// A launch decided once for the lines and the current device (kernel instance, shared
// memory fit, occupancy-sized grid): fused_stage_prepare does it when an operator is
// built, fused_stage_run only packs a stage's arguments and launches. Throws Unsupported
// for lines fused_stage_supported refuses or that do not fit the device's shared memory.
struct FusedLaunch {
  int variant = -1;  // kernel instance (-1: nothing to launch)
  unsigned grid = 0;
  int threads = 0;
  std::size_t smem = 0;
  int rows = 0;  // Y/Z: rows per segment
  int log2lb = 0;
  unsigned fold_grid = 0;  // the grid of the same launch with the explicit operator folded in
  unsigned warp_grid = 0;  // Y/Z: the grid of the warp copy stream's instance (0: none)
  bool lean = false;       // Y/Z: the warp stream's lean form (the default; ADI_FUSED_YZ_LEAN=0 off; same grid)
};
template <class T>
ADI_CUDA_KERNEL(FusedLaunch fused_stage_prepare(const LineSet& lines, const FusedTuning& tuning))
template <class T>
ADI_CUDA_KERNEL(void fused_stage_run(const FusedStage<T>& stage, const FusedLaunch& launch, int* pivot_flag, void* stream))
// Launches of the folded first stage's x ring kernel so far (thomas_pcr_fused_x_ring.cuh; fused_stage_run
// takes it for the stages it applies to while ADI_FOLD_X_RING=1 or 2): tests check that it ran; _lean:
// those of its lean form (ADI_FOLD_X_RING=2, lines of 256).
ADI_CUDA_KERNEL_OR(return 0;, std::size_t fused_x_ring_launches())
ADI_CUDA_KERNEL_OR(return 0;, std::size_t fused_x_ring_lean_launches())
// The explicit operator folded into a Y/Z stage (thomas_pcr_fused_strided_fold.cuh; issue 16, the
// z-first order): whether it runs now (built with ADI_FOLD_STRIDED_KERNELS and ADI_FOLD_STRIDED=1, an
// A/B switch), whether a fused stage over these lines (Y/Z) can launch it (the warp copy stream's
// layout), and its launches so far (tests check that it ran).
ADI_CUDA_KERNEL_OR(return false;, bool fused_strided_fold_available())
ADI_CUDA_KERNEL_OR(return false;, bool fused_strided_fold_applies(const LineSet& lines, int value_bytes))
ADI_CUDA_KERNEL_OR(return 0;, std::size_t fused_strided_fold_launches())
// ADI_FOLD_X_RING as fused_stage_run reads it (0 off, 1 the ring kernel, 2 its lean form; no CUDA:
// 0): the Operator asks it before taking the kernel fold for the ring, so the switch is read once.
ADI_CUDA_KERNEL_OR(return 0;, int fold_x_ring_mode())

// Block-tridiagonal kernels (solvers/cuda/block_thomas*.cuh). Assume validated input.
// Workspace: the factors C*_i and d*_i of every system (interleaved by system, so coalesced).
ADI_CUDA_KERNEL(std::size_t block_tridiagonal_workspace_bytes(BlockKernel kernel, const BlockLineSet& lines, bool periodic,
                                              std::size_t value_size))
// Launches of block Thomas's one-thread form so far (M <= 3, fp32 M = 4, packed layouts): tests check that it ran.
ADI_CUDA_KERNEL_OR(return 0;, std::size_t block_thomas_thread_launches())
// ... of those, the launches with vector accesses (every block and vector aligned: block_thread_vec).
ADI_CUDA_KERNEL_OR(return 0;, std::size_t block_thomas_thread_vec_launches())
// ... of those, the launches of the two-thread form (block_thomas_pair_kernel: the default where thread_form says,
// or ADI_BT_PAIR=1).
ADI_CUDA_KERNEL_OR(return 0;, std::size_t block_thomas_pair_launches())
// Enqueues the solve on `stream`. `singular` (device, zeroed by the caller) receives the
// maximum of ~0ull - (system * n + row) over the singular pivot blocks met, so it stays 0
// when there are none and otherwise names the first system and row.
template <class T>
ADI_CUDA_KERNEL(void block_tridiagonal_solve(BlockKernel kernel, const BlockLineSet& lines, const T* a, const T* b, const T* c,
                             const T* d, T* u, double tol, bool periodic, void* workspace,
                             unsigned long long* singular, void* stream))

// One large tridiagonal system (solvers/cuda/partition_large.cu; adi/large_tridiagonal.hpp).
// Rows per thread chunk the kernels are built for, and the default per precision.
ADI_CUDA_KERNEL(int large_chunk_min())
ADI_CUDA_KERNEL(int large_chunk_max())
ADI_CUDA_KERNEL(int large_default_chunk(std::size_t value_size))
ADI_CUDA_KERNEL(std::size_t large_workspace_bytes(index_t n, bool periodic, int chunk, std::size_t value_size))
// Enqueues the two-pass partition solve of one system on `stream`. On a bad pivot at row r
// the kernels raise `pivot_flag` (may be null) to at least flag_bias - r. load: 0 the
// default, 1 lanes load straight from global memory, 2 tiles staged in shared memory (kept for
// comparison: only with -DADI_CUDA_UNROLL_ALL=ON, else 1 and a note on stderr).
// `report` (pinned host memory, may be null): the solve's last checking kernel raises it to
// the flag's value and zeroes the flag (which the caller zeroes once, not per solve).
template <class T>
ADI_CUDA_KERNEL(void large_solve(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, int chunk,
                 double tolerance, void* workspace, unsigned long long* pivot_flag, unsigned long long flag_bias,
                 void* stream, int load = 0, unsigned long long* report = nullptr))

// One system by truncated sweeps (one pass over a, b, c, d; stop 44): LargeKernel::truncated, up to
// large_truncated_max_rows() rows, non-periodic, out of place (u must not alias d); automatic's pick
// from large_truncated_min_rows() (fp64; fp32 too where large_truncated_windows()). Since stop 51 by
// windows of 512 rows, each solved by a warp (thomas_pcr_window.cuh); ADI_LARGE_WINDOWS=0 (read at
// each solve, large_truncated_windows()) runs stop 44's single-system kernel (thomas_truncated.cuh, a
// thread per part). Sets *bad (device or pinned host memory, zeroed by the caller) where a window or
// part refuses (a cut's decay too slow, a multiplier above the growth bound of docs/pivoting.md, a
// value not finite): u is then not the solution and the caller solves again (the partition).
ADI_CUDA_KERNEL_OR(return false;, bool large_truncated_windows())
ADI_CUDA_KERNEL_OR(return 0;, index_t large_truncated_min_rows())
ADI_CUDA_KERNEL_OR(return 0;, index_t large_truncated_max_rows())
template <class T>
ADI_CUDA_KERNEL(void large_truncated_solve(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, int* bad,
                                           void* stream))

// Batched Hines kernels (solvers/cuda/hines*.cu; adi/hines.hpp). Assume validated input.
// Threads per block the stack kernel (HinesKernel::cuda_stack) can run for neurons of up to
// `max_size` compartments of `value_size` bytes on `device` (0: not even one fits).
ADI_CUDA_KERNEL(int hines_stack_threads(int max_size, std::size_t value_size, int device))
// Launch shape: a thread count override and, for the sorted layout, ranges of thread slots
// of similar size (host arrays) so that shared memory is sized per range, not by the largest.
struct HinesLaunch {
  int threads_per_block = 0;            // 0: the kernel's default
  const index_t* range_first = nullptr;  // ranges + 1 slot boundaries (host), or null: one range
  const int* range_rows = nullptr;       // largest neuron of each range (host)
  int ranges = 0;
};
// Enqueues `kernel` on `stream`: every neuron's A x = rhs, rhs <- x, diag as scratch.
// `bad_neuron` (device int, may be null) receives the smallest neuron index with a zero or
// non-finite pivot, or stays kNoBadNeuron (the launch sets it so first).
inline constexpr int kNoBadNeuron = 0x7f7f7f7f;
template <class T>
ADI_CUDA_KERNEL(void hines_solve(HinesKernel kernel, const adi::detail::HinesView& view, const T* offdiag, T* diag, T* rhs,
                 const HinesLaunch& launch, int* bad_neuron, void* stream))
// Implicit Euler assembly over `span` values: diag = d0; v = cdt * v + ge; v[stim_pos[k]] += stim_amp[k].
template <class T>
ADI_CUDA_KERNEL(void hines_assemble(index_t span, const T* d0, const T* cdt, const T* ge, T* diag, T* v, const index_t* stim_pos,
                    const T* stim_amp, int nstim, void* stream))

ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend
