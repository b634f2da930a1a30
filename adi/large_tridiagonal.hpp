#pragma once
// One (or a few) very large tridiagonal systems, solved with every core of the host or
// with a CUDA device: the entry points beside the batched ones of adi/tridiagonal.hpp.
//
// Row i of a system:  a[i]*u[i-1] + b[i]*u[i] + c[i]*u[i+1] = d[i]   (i = 0 .. n-1).
// Non-periodic systems ignore a[0] and c[n-1]; periodic ones couple u[0] and u[n-1]
// through them. a, b, c are never written; u may equal d (in place).
//
//   adi::LargeTridiagonalPlan<double> plan(adi::Executor::host(), n);
//   plan.solve(adi::Bands<double>{a, b, c}, d, u);       // allocates its workspace once
//
// A batch of lines that the framework solves through TridiagonalPlan takes this path by
// itself when its lines are very long and few (adi/tridiagonal_dispatch.cpp).
// The partition does not pivot: meant for diagonally dominant systems; a row failing the
// growth check of docs/pivoting.md is re-solved with partial pivoting (options.pivoting), a
// zero, non-finite (or, on request, tiny) pivot throws SingularSystem naming the row. docs/large_tridiagonal.md has the
// algorithms, the measurements and the choice of defaults.
#include <cstddef>
#include <memory>
#include <string>

#include "adi/executor.hpp"
#include "adi/base/large_types.hpp"
#include "adi/base/pivot.hpp"
#include "adi/layout.hpp"
#include "adi/tridiagonal.hpp"

namespace adi {

struct LargeTridiagonalOptions {
  LargeKernel kernel = LargeKernel::automatic;
  // PCR levels k of the pcr_* kernels; -1: the paper's analytic switch point for n and
  // the executor's cores (large_switch_point). 0 .. 30 forces k.
  int pcr_levels = -1;
  bool periodic = false;
  // As everywhere (adi/base/pivot.hpp): throw SingularSystem with system() and row() of the
  // first bad pivot; on a CUDA executor this synchronises the stream at the end of solve().
  bool check_pivots = true;
  // Relative pivot tolerance, adi/base/pivot.hpp: also reject |pivot| <= pivot_tolerance *
  // max(|a_i|, |b_i|, |c_i|) (thomas and partition kernels; 0: only zero and non-finite pivots).
  double pivot_tolerance = 0;
  // partition: rows per chunk (0: the measured default; host: a multiple of the SIMD
  // width, >= 8; CUDA: 4 .. 32).
  int chunk = 0;
  // partition on the host: chunks advanced side by side per core, 1 (scalar: one
  // dependency chain at a time), or 1, 2 or 4 SIMD vectors of chunks (0: the default).
  int lanes = 0;
  // As TridiagonalOptions::pivoting (docs/pivoting.md). The partition's sweeps check each
  // row's growth (solvers/common/thomas_check.hpp; the pcr_* kernels check zero pivots
  // only); automatic solves a failing system again with partial pivoting (a sequential
  // elimination: host cpu_pivoting, CUDA cuda_pivoting), out of place only; partial always
  // does; none throws UnstableSystem where the check fails.
  Pivoting pivoting = Pivoting::automatic;
  // The plan allocates workspace_bytes() (and, with pivoting = partial, the pivoting kernel's
  // scratch) when it is built, so that no solve allocates. false: every solve brings its
  // own workspace (the overloads with `workspace, bytes`); one without throws InvalidArgument.
  bool allocate_workspace = true;
};

// The paper's analytic switch point (section III-A): the k >= 1 minimising
// (12 n / cores) k + 8 (n / 2^k) ceil(2^k / cores). 1 for 2 cores, 4 for 48.
int large_switch_point(index_t n, int cores);

// Built once for count systems of n unknowns, system s starting at s * system_stride
// (elements contiguous within a system): validates, resolves the kernel and k, and
// allocates the workspace (unless options.allocate_workspace is false: then every solve
// passes the caller's), so solve() allocates nothing. The one exception: with pivoting =
// automatic, the first system that fails the stability check allocates the pivoting
// kernel's scratch (kept for later solves). Not thread-safe: one plan per concurrent caller.
template <class T>
class LargeTridiagonalPlan {
 public:
  LargeTridiagonalPlan(const Executor& exec, index_t n, index_t count = 1, index_t system_stride = 0,
                       LargeTridiagonalOptions options = {});
  // Lines with element_stride 1 (StridedLines::contiguous(n, count) for a few systems).
  LargeTridiagonalPlan(const Executor& exec, const StridedLines& lines, LargeTridiagonalOptions options = {});
  ~LargeTridiagonalPlan();
  LargeTridiagonalPlan(LargeTridiagonalPlan&&) noexcept;
  LargeTridiagonalPlan& operator=(LargeTridiagonalPlan&&) noexcept;

  // Solves every system. u may equal d; otherwise u must overlap none of a, b, c, d.
  void solve(const Bands<T>& bands, const T* d, T* u);
  // The same coefficients for every system (arrays of n values).
  void solve(const SharedBands<T>& bands, const T* d, T* u);
  // With the caller's workspace: `bytes` >= workspace_bytes(), in the executor's memory.
  void solve(const Bands<T>& bands, const T* d, T* u, void* workspace, std::size_t bytes);
  void solve(const SharedBands<T>& bands, const T* d, T* u, void* workspace, std::size_t bytes);

  // Scratch one solve needs, in bytes (the same for every call of this plan).
  std::size_t workspace_bytes() const;
  // Bytes of the workspace the plan holds (workspace_bytes() from construction; 0 with
  // options.allocate_workspace = false).
  std::size_t cached_workspace_bytes() const;

  LargeKernel kernel() const;  // never automatic
  [[deprecated("use kernel()")]] LargeKernel variant() const { return kernel(); }
  int pcr_levels() const;      // k of the pcr_* kernels, 0 otherwise
  int chunk() const;             // rows per chunk of partition, 0 otherwise
  int lanes() const;             // host partition: chunks per core side by side
  index_t n() const;
  index_t count() const;
  const Executor& executor() const;
  const LargeTridiagonalOptions& options() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// One-shot convenience: builds a plan and solves (allocates workspace each call).
template <class T>
void solve_large_tridiagonal(const Executor& exec, index_t n, const Bands<T>& bands, const T* d, T* u,
                             LargeTridiagonalOptions options = {}) {
  LargeTridiagonalPlan<T>(exec, n, 1, 0, options).solve(bands, d, u);
}

extern template class LargeTridiagonalPlan<float>;
extern template class LargeTridiagonalPlan<double>;

namespace detail {
// The route TridiagonalPlan takes for a few very long lines (element stride 1): the
// workspace they need and the solve, line by line, through a LargeTridiagonalPlan's
// machinery with the automatic kernel. Kernels assume a validated LineSet.
std::size_t large_lines_workspace_bytes(const Executor& exec, const LineSet& lines, bool periodic,
                                        std::size_t value_size);
// report: on CUDA, with check_pivots, two pinned host words: [0] the check's result is published
// into (the plan's; adi/large_tridiagonal.cpp, cuda_partition_systems), [1] the truncated sweeps'
// refusal; unused on the host. truncated (may be null): the caller's state of the truncated sweeps
// (LargeKernel::truncated's rule: CUDA, fp64 (and fp32 in the window form, the default), checked,
// non-periodic, out of place, 2^21 .. 2^29 rows): tried first while *truncated, which a refused batch
// clears (the partition then solves it, and every later one).
template <class T>
void large_lines_solve(const Executor& exec, const LineSet& lines, const T* a, const T* b, const T* c,
                       bool shared, const T* d, T* u, bool periodic, bool check_pivots, void* workspace,
                       unsigned long long* report, bool* truncated = nullptr);
// Whether automatic's rule would give lines of n rows the truncated sweeps (ADI_LARGE_TRUNCATED read).
bool large_truncated_applies(const Executor& exec, index_t n, std::size_t value_size, bool periodic);
}  // namespace detail

}  // namespace adi
