#pragma once
// Batched tridiagonal solves on the host or a CUDA device: the public entry point.
//
// Row i of every line:  a[i]*u[i-1] + b[i]*u[i] + c[i]*u[i+1] = d[i].
// Non-periodic lines ignore a[0] and c[n-1] (never read into the result).
// Periodic (cyclic) lines couple u[0] and u[n-1]: a[0] multiplies u[n-1] in row 0
// and c[n-1] multiplies u[0] in row n-1 (solved by Sherman-Morrison).
//
//   adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::BoxLines{box, adi::Axis::y});
//   plan.solve(adi::Bands<double>{a, b, c}, d, u);    // u may alias d (in place)
//
// Pointers live in the executor's memory space (host arrays for a host executor,
// device arrays for a CUDA one). Thomas (no pivoting) is exact to rounding for diagonally
// dominant systems; every Thomas kernel checks each row's growth (docs/pivoting.md) and,
// with the default pivoting = automatic, solves lines that fail it again with partial
// pivoting (LAPACK gtsv's algorithm). A singular system throws SingularSystem; with
// pivoting = none an unsafe one throws UnstableSystem naming line and row.
#include <memory>
#include <vector>
#include <string>
#if __cplusplus >= 202002L
#include <span>  // the size-checked overloads (C++20; CUDA translation units of C++17 skip them)
#define ADI_HAVE_SPAN 1
#endif

#include "adi/executor.hpp"
#include "adi/base/pivot.hpp"
#include "adi/base/tridiagonal_types.hpp"
#include "adi/layout.hpp"

namespace adi {

namespace detail {
// One implicit ADI stage along a plan's lines (internal: adi/detail/tridiagonal_stage.hpp).
template <class T>
struct TridiagonalStage;
}  // namespace detail

struct TridiagonalOptions {
  bool periodic = false;
  Kernel kernel = Kernel::automatic;
  // Check pivots and throw SingularSystem on a zero or non-finite one (UnstableSystem,
  // a SingularSystem, where Thomas without pivoting fails its growth check and pivoting
  // is none), system() the line and row() the row. On a CUDA executor this synchronises
  // the stream at the end of solve(). The same switch in every family: adi/base/pivot.hpp.
  bool check_pivots = true;
  // automatic: Thomas with the growth check, lines that fail it re-solved with partial
  //            pivoting (host: per SIMD group, before anything is written; CUDA: the whole
  //            batch again, which needs u != d; in place it throws UnstableSystem);
  // none:      Thomas only (check_pivots decides whether a failing line throws);
  // partial:   always partial pivoting (kernels cpu_pivoting*, cuda_pivoting). On CUDA, few
  //            long lines take the partition route (pivoting inside partitions of 17 rows);
  //            out of place (lines filling lines x n elements from element 0: contiguous,
  //            interleaved) it tests each line for diagonal dominance and refines the lines
  //            that fail it once (residual in higher precision), behind a CUDA graph's
  //            conditional node: nothing runs, nothing is read back, where no line fails; in
  //            place (no copy of d to refine against) the route's answer, within eps cond(A, x)
  //            on all but a few lines, up to ~100x LAPACK's error (docs/pivoting.md, "Stop 35").
  // On CUDA, automatic falls back only where check_pivots is on: the kernels write the
  // check's flag into pinned host memory, read after one synchronisation of the stream (no
  // memset, no copy; ADI_PIVOTING_FALLBACK=device, for measurement, re-solves on the device
  // instead: docs/pivoting.md). The device kernels test each row's multiplier instead of
  // the host's growth bound (|c*_i| > 4, one compare per row: thomas_unsafe_on_device in
  // solvers/common/thomas_check.hpp; the Thomas-PCR hybrids' reduced PCR tests |a|, |c| > 4
  // at each level, shared-band factors are tested once per block or solve); only the ADI
  // fused stage (adi::Operator's internal stage) is not checked on the device.
  // docs/pivoting.md has the test, its cost and the measurements.
  Pivoting pivoting = Pivoting::automatic;
  // Measure instead of trusting the dispatch table (kernel automatic only): when the plan
  // is built, every kernel of this executor that can run the layout is timed on a
  // synthetic diagonally dominant system of this shape, for per-line and for shared bands
  // (one warm-up, then the median of 5), and the fastest of each is kept. The choice is
  // cached in the process per (device, layout, precision, periodic, pivoting), so later
  // plans of that shape pay nothing. While measuring it holds five scratch arrays of the
  // layout's span. measurement() reports the times and what measuring cost. For GPUs and
  // shapes the table was not tuned on (docs/design.md, "Measured dispatch").
  bool measure = false;
  // Also prepare the plan's ADI stage entry (solve_stage; adi::Operator sets it for its axes
  // with shared bands): the dispatch table chooses the stage kernel and its launch (shared-memory
  // fit, grid) once, here. Off: stage_kernel() is automatic and solve_stage throws.
  bool stages = false;
};

// What TridiagonalOptions::measure found: each candidate's median time per solve.
struct KernelTiming {
  Kernel kernel = Kernel::automatic;
  bool shared_bands = false;
  double ms = 0;
};
struct KernelMeasurement {
  bool measured = false;  // options.measure was on (and the kernel automatic)
  bool cached = false;    // taken from an earlier plan of the same shape in this process
  double cost_ms = 0;     // wall time the measuring added to this plan's construction
  std::vector<KernelTiming> timings;  // empty when cached
};

// The band arrays with their sizes, for the size-checked solve(): shaped like d (as Bands),
// or, with shared = true, three arrays of n values used by every line (as SharedBands).
#if defined(ADI_HAVE_SPAN)
template <class T>
struct BandSpans {
  std::span<const T> a, b, c;
  bool shared = false;
};
#endif

// Built once for a problem shape: validates the layout, chooses the kernel and
// owns the workspace, so solve() allocates nothing. Not thread-safe: one plan per
// concurrent caller.
template <class T>
class TridiagonalPlan {
 public:
  TridiagonalPlan(const Executor& exec, const LineSet& lines, TridiagonalOptions options = {});
  TridiagonalPlan(const Executor& exec, const StridedLines& l, TridiagonalOptions o = {})
      : TridiagonalPlan(exec, to_lines(l), o) {}
  TridiagonalPlan(const Executor& exec, const InterleavedBatch& l, TridiagonalOptions o = {})
      : TridiagonalPlan(exec, to_lines(l), o) {}
  TridiagonalPlan(const Executor& exec, const BoxLines& l, TridiagonalOptions o = {})
      : TridiagonalPlan(exec, to_lines(l), o) {}
  ~TridiagonalPlan();
  TridiagonalPlan(TridiagonalPlan&&) noexcept;
  TridiagonalPlan& operator=(TridiagonalPlan&&) noexcept;

  // Solves every line. u may equal d (in place); otherwise they must not overlap.
  void solve(const Bands<T>& bands, const T* d, T* u);
  void solve(const SharedBands<T>& bands, const T* d, T* u);
  // The same with sizes: d and u (and a, b, c unless shared) must hold lines().span()
  // values, shared bands n; a shorter array throws InvalidArgument naming it, before any
  // kernel runs (a raw pointer cannot say how much it holds).
#if defined(ADI_HAVE_SPAN)
  void solve(const BandSpans<T>& bands, std::span<const T> d, std::span<T> u);
#endif

  // One implicit ADI stage along the lines (internal, for adi::Operator: the description is
  // adi/detail/tridiagonal_stage.hpp): right-hand side formed from the stage's fields,
  // bands of I/s - A generated from A's shared line coefficients, solve. Needs
  // options.stages. CUDA: stage_kernel() (cuda_thomas_pcr_fused_stage) on the executor's
  // stream, nothing else; pivot_flag (a device int, or null: unchecked) is cleared on the
  // stream and set by the kernel on a zero or non-finite pivot, for the caller to read
  // when it next synchronises. Host: the right-hand side, then the shared-band kernel
  // (throws SingularSystem itself where options.check_pivots; pivot_flag unused).
  void solve_stage(const detail::TridiagonalStage<T>& stage, int* pivot_flag = nullptr);

  // The kernel for per-line bands / shared bands (may differ). CUDA, automatic on long lines
  // adjacent in memory (1024 to 4096 rows, at least 1,024 lines, not periodic; check_pivots on):
  // cuda_thomas_truncated, whose answer is kept where every line's truncations pass their
  // check, else the batch is solved again by the exact table's kernel; after such a solve the
  // plan stays on that kernel and these report it. In place (u == d) the exact kernel alone.
  Kernel kernel() const;
  Kernel shared_bands_kernel() const;
  // The ADI stage's kernel (solve_stage): cuda_thomas_pcr_fused_stage on a CUDA executor
  // whose lines it takes and whose shared memory fits them, the shared-band kernel on the
  // host; automatic where the plan has no stage entry (options.stages off, or lines the
  // fused kernel does not take: the caller forms the right-hand side and calls solve()).
  Kernel stage_kernel() const;
  const KernelMeasurement& measurement() const;
  const LineSet& lines() const;
  const Executor& executor() const;
  const TridiagonalOptions& options() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// One-shot convenience: builds a plan and solves (allocates workspace each call).
template <class T, class Layout>
void solve_tridiagonal(const Executor& exec, const Layout& layout, const Bands<T>& bands, const T* d,
                       T* u, TridiagonalOptions options = {}) {
  TridiagonalPlan<T>(exec, to_lines(layout), options).solve(bands, d, u);
}
template <class T, class Layout>
void solve_tridiagonal(const Executor& exec, const Layout& layout, const SharedBands<T>& bands,
                       const T* d, T* u, TridiagonalOptions options = {}) {
  TridiagonalPlan<T>(exec, to_lines(layout), options).solve(bands, d, u);
}

extern template class TridiagonalPlan<float>;
extern template class TridiagonalPlan<double>;

}  // namespace adi
