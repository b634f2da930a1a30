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
// device arrays for a CUDA one). No pivoting: meant for diagonally dominant systems;
// a zero or non-finite pivot throws SingularSystem.
#include <memory>
#include <string>

#include "adi/executor.hpp"
#include "adi/layout.hpp"

namespace adi {

// Coefficients stored like d: one a, b, c per element of every line.
template <class T>
struct Bands {
  const T* a = nullptr;
  const T* b = nullptr;
  const T* c = nullptr;
};

// Coefficients that are the same for every line: three arrays of length n
// (contiguous). Lets a kernel read little more than d and u (constant-coefficient
// or separable operators, e.g. the heat equation).
template <class T>
struct SharedBands {
  const T* a = nullptr;
  const T* b = nullptr;
  const T* c = nullptr;
};

// The kernels a plan may run. `automatic` lets the dispatch table choose
// (adi/tridiagonal_dispatch.cpp documents each threshold); any other value forces
// that kernel and throws InvalidArgument if it cannot run the layout/executor.
enum class Kernel {
  automatic,
  reference,                // plain Thomas, one line at a time (the test oracle)
  cpu_thomas,               // scalar Thomas per line, OpenMP across lines
  cpu_thomas_transpose,     // lines with stride 1: SIMD lanes on neighbouring lines
                            // after an in-register transpose (paper section 5)
  cpu_thomas_vector,        // neighbouring lines adjacent in memory (Y/Z, interleaved):
                            // SIMD lanes across lines, no transpose
  cuda_thomas_naive,        // one thread per line, direct global loads
  cuda_thomas_shuffle_transpose,  // stride-1 lines: warp shuffle transpose (paper 6.1.2)
  cuda_thomas_shared_transpose,   // stride-1 lines: shared-memory transpose (paper 6.1.1)
  cuda_thomas_pcr,          // stride-1 lines that fit in a warp's registers (paper 2.3, alg. 10)
  cuda_thomas_strided,      // lines adjacent in memory: coalesced Thomas (paper 6.2)
  cuda_thomas_pcr_strided,  // lines adjacent in memory, Thomas-PCR hybrid (alg. 11)
  large_partition,          // a few very long lines with stride 1, host or CUDA: each line by the
                            // large-system partition solver (adi/large_tridiagonal.hpp)
};

const char* kernel_name(Kernel k);
// Parses the names printed by kernel_name; throws InvalidArgument on unknown names.
Kernel kernel_from_name(const std::string& name);

struct TridiagonalOptions {
  bool periodic = false;
  Kernel kernel = Kernel::automatic;
  // Check pivots and throw SingularSystem on a zero or non-finite one. On a CUDA
  // executor this synchronises the stream at the end of solve().
  bool check_pivots = true;
};

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

  Kernel kernel() const;
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
