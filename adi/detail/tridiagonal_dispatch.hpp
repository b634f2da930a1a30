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
// The same without ADI_LONG_TRUNCATED: never cuda_thomas_truncated (the kernel whose answer is
// exact, which the plan re-solves with where the truncated sweeps refuse a line).
Kernel choose_exact_kernel(const Executor& exec, const DispatchQuery& q);
// ADI_LONG_TRUNCATED = 1: automatic takes cuda_thomas_truncated where choose_exact_kernel takes
// cuda_thomas_pcr_long on non-periodic lines of at least kCudaTruncatedMinN rows; 0 or unset:
// off (the default); read when a plan is made, any other value an InvalidArgument.
inline constexpr index_t kCudaTruncatedMinN = 1024;
inline bool long_truncated_on() { return env_switch("ADI_LONG_TRUNCATED", false); }
// The switch's rule on the exact table's pick (host-testable): cuda_thomas_truncated where `on`
// and exact is cuda_thomas_pcr_long on non-periodic lines of >= kCudaTruncatedMinN rows, else exact.
inline Kernel with_long_truncated(Kernel exact, const DispatchQuery& q, bool on) {
  return on && exact == Kernel::cuda_thomas_pcr_long && !q.periodic && q.lines.n >= kCudaTruncatedMinN
             ? Kernel::cuda_thomas_truncated
             : exact;
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
