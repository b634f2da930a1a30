#pragma once
// Internal: the dispatch table of the tridiagonal family (tridiagonal_dispatch.cpp).
#include <cstddef>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/executor.hpp"
#include "adi/layout.hpp"
#include "adi/tridiagonal.hpp"

namespace adi::detail {

// What the table looks at: layout, precision, periodicity, whether bands are shared,
// and (for CUDA) the device.
struct DispatchQuery {
  LineSet lines;
  std::size_t value_size = 8;
  bool periodic = false;
  bool shared_bands = false;
  Pivoting pivoting = Pivoting::none;  // partial: a pivoting kernel (automatic checks Thomas)
};

// Where a CUDA plan's automatic pivoting re-solves the systems that failed the check
// (TridiagonalPlan, LargeTridiagonalPlan; docs/pivoting.md): ADI_PIVOTING_FALLBACK = host (unset:
// the default; the host reads the flag and solves again) or device (re-solved on the device,
// nothing read back); read when the plan is made, any other value an InvalidArgument.
inline bool pivoting_fallback_on_device() {
  return env_choice("ADI_PIVOTING_FALLBACK", {"host", "device"}, 0) == 1;
}

// The kernel `automatic` resolves to.
Kernel choose_kernel(const Executor& exec, const DispatchQuery& q);
// The same without the truncated sweeps: never cuda_thomas_truncated (the kernel whose answer is
// exact, which the plan re-solves with where the truncated sweeps refuse a line).
Kernel choose_exact_kernel(const Executor& exec, const DispatchQuery& q);
// Neighbouring lines one element apart (a single inner line per row counts as the
// outer index, as solvers/cpu/tridiagonal_problem.hpp normalises it).
inline bool lines_adjacent(const LineSet& l) {
  return l.count0 == 1 ? (l.count1 <= 1 || l.stride1 == 1) : l.stride0 == 1;
}
// Where automatic takes cuda_thomas_truncated (stop 42: the default; solvers/cuda/README.md
// "Truncated sweeps", the measured rows). Automatic: non-periodic lines adjacent in memory,
// kCudaTruncatedMinN to kCudaTruncatedAutoMaxN rows, at least kCudaTruncatedMinLines lines, where the exact table takes
// one of the thread-per-line or hybrid kernels (cuda_thomas_pcr_long, _strided, _pcr_strided):
// the shapes measured on an H100 and an H200 (1,024 to 32,768 lines of 1024 to 4096 rows; the
// truncated plan 0.40-0.80x the table's kernel with the MPI benchmark's bands). Since stop 43 (the
// kernel without its per-row bookkeeping) also shorter lines, kCudaTruncatedShortMinN to
// kCudaTruncatedMinN - 1 rows, with per-line bands (shared bands: the table's kernels read 2
// arrays and stay faster in fp64) and at least kCudaTruncatedShortMinElements elements in all:
// the truncated plan 0.50-0.97x the table's on 256^3, 240x256x256, 512^3, 256x256x512 and
// 128x128x512 on both cards; 1.04-1.36x on 128x128x256 and 64x64x512 (fp32), left out. Forced
// (ADI_LONG_TRUNCATED=1): where the exact table takes cuda_thomas_pcr_long on non-periodic lines
// of at least kCudaTruncatedMinN rows, whatever the batch (the stop-41 opt-in). Off
// (ADI_LONG_TRUNCATED=0): never. The variable is read when a plan is made; any other value an
// InvalidArgument. TridiagonalPlan also keeps the exact kernel where the truncated sweeps would
// add a synchronisation (check_pivots off) unless forced, and after a solve that refused a line
// (adi/tridiagonal.cpp).
inline constexpr index_t kCudaTruncatedMinN = 1024;
inline constexpr index_t kCudaTruncatedAutoMaxN = 4096;
inline constexpr index_t kCudaTruncatedMinLines = 1024;
inline constexpr index_t kCudaTruncatedShortMinN = 256;
inline constexpr index_t kCudaTruncatedShortMinElements = index_t(1) << 23;
enum class LongTruncated { automatic, off, on };
inline LongTruncated long_truncated_mode() {
  const int v = env_choice("ADI_LONG_TRUNCATED", {"0", "1"}, -1);
  return v < 0 ? LongTruncated::automatic : v == 0 ? LongTruncated::off : LongTruncated::on;
}
// The rule on the exact table's pick (host-testable): cuda_thomas_truncated or exact.
inline Kernel with_long_truncated(Kernel exact, const DispatchQuery& q, LongTruncated mode) {
  const index_t n = q.lines.n, lines = q.lines.lines();
  if (q.periodic || mode == LongTruncated::off) return exact;
  if (mode == LongTruncated::on)
    return exact == Kernel::cuda_thomas_pcr_long && n >= kCudaTruncatedMinN ? Kernel::cuda_thomas_truncated : exact;
  const bool table = exact == Kernel::cuda_thomas_pcr_long || exact == Kernel::cuda_thomas_strided ||
                     exact == Kernel::cuda_thomas_pcr_strided;
  const bool longer = n >= kCudaTruncatedMinN && n <= kCudaTruncatedAutoMaxN && lines >= kCudaTruncatedMinLines;
  const bool shorter = !q.shared_bands && n >= kCudaTruncatedShortMinN && n < kCudaTruncatedMinN &&
                       n * lines >= kCudaTruncatedShortMinElements;
  return table && (longer || shorter) && lines_adjacent(q.lines) ? Kernel::cuda_thomas_truncated : exact;
}

// The device facts the CUDA rows of the table read: the executor's device
// (cuda_device_traits), or given, so that tests check the table's rows for an H100 and an
// H200 without a GPU (tests/adi/test_tridiagonal_dispatch_rows.cpp).
struct CudaDeviceTraits {
  int cc_major = 0;
  double peak_memory_gbs = 0;             // 2 x memory clock x bus width (H100 SXM 3352, H200 4915)
  std::size_t shared_per_block_optin = 0;  // 227 KB on both
};
CudaDeviceTraits cuda_device_traits(const Executor& exec);
// The CUDA rows (choose_kernel's device branch, layout and precision in q; pivoting partial
// -> cuda_pivoting). The hybrids' shared-memory fit needs the CUDA backend's sizes: without
// CUDA built every hybrid "fits".
Kernel choose_cuda_kernel(const CudaDeviceTraits& dev, const DispatchQuery& q);
// The kernel of an ADI stage (TridiagonalPlan::solve_stage, options.stages) along q's lines
// with shared bands: cuda_thomas_pcr_fused_stage where the fused kernel takes the lines (its
// shared-memory fit is checked by the plan, which prepares the launch), the shared-band
// kernel on the host, automatic where there is none.
Kernel choose_stage_kernel(const Executor& exec, const DispatchQuery& q);
// Whether `k` can run q on exec at all (forced kernels are checked with this).
bool kernel_supports(Kernel k, const Executor& exec, const DispatchQuery& q);

// Every kernel of exec's family that can run q (what TridiagonalOptions::measure times):
// the pivoting kernels where q.pivoting is partial, else the non-pivoting ones, without
// the fp64 oracle and the large-line partition (measure keeps the table's choice of it).
std::vector<Kernel> candidate_kernels(const Executor& exec, const DispatchQuery& q);

// TridiagonalOptions::measure (tridiagonal_measure.cpp): times the candidates for per-line
// and shared bands, sets the two choices, caches them per process.
template <class T>
KernelMeasurement measure_kernels(const Executor& exec, const LineSet& lines, const TridiagonalOptions& options,
                                  Kernel& per_line, Kernel& shared);

// Where a device solve failed, for the error's system() and row(): the device kernels report
// only that some line failed, so on that (rare) path the inputs are copied to the host and
// the checked host solve (partial pivoting when `pivoting` is partial, else the reference
// Thomas with its checks) names the first failing line and row. {-1, -1} when it finds
// none. d must still hold the right-hand side (not for in-place solves). Allocates: error
// path only.
struct FailedRow {
  index_t system = -1, row = -1;
};
template <class T>
FailedRow locate_failure(const Executor& exec, const LineSet& lines, const T* a, const T* b, const T* c,
                         bool shared, const T* d, bool periodic, Pivoting pivoting);

}  // namespace adi::detail
