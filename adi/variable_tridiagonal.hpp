#pragma once
// Batched tridiagonal solves whose systems have different sizes (cuThomasVBatch), on the
// host or a CUDA device, fp32 or fp64, plain or periodic.
//
//   adi::VariableBatchPlan batch(exec, adi::BatchSizes{sizes, count});
//   adi::VariableTridiagonalPlan<double> plan(batch, adi::SortedInterleaved{});
//   plan.solve(adi::Bands<double>{a, b, c}, d, u);        // arrays of batch.span(SortedInterleaved{})
//
// Rows as in adi/tridiagonal.hpp: a[k] u[k-1] + b[k] u[k] + c[k] u[k+1] = d[k] for
// k < n_s; a[0] and c[n_s-1] of non-periodic systems are never read into the result,
// periodic systems couple u[0] and u[n_s-1] through them (Sherman-Morrison). Size-0
// systems are skipped, size-1 periodic systems solve (a+b+c) u = d.
//
// Kernels (VariableTridiagonalOptions::kernel; paper section 3.1 / 4.4), by layout:
//   PaddedInterleaved: padded (CP: every thread or SIMD lane runs all `rows` rows, the
//     padding replaced by identity rows on load) or stop_at_size (NCP: a thread stops at
//     its own size; on the host a SIMD group stops at its largest size).
//   SortedInterleaved: sorted (a warp / SIMD group takes systems of similar size, runs to
//     its chunk's largest size: time follows the total work).
//   CompactBatch, PointerBatch: stop_at_size, one system per thread, threads taking
//     systems in size order (largest first, for load balance).
// Pointers live in the executor's memory space. Pivoting: VariableTridiagonalOptions::pivoting;
// a zero or non-finite pivot throws SingularSystem naming the first such system.
#include <memory>

#include "adi/tridiagonal.hpp"
#include "adi/variable_batch.hpp"

namespace adi {

enum class VariableKernel {
  automatic,     // the layout's fastest (padded for PaddedInterleaved)
  reference,     // plain Thomas per system in double, one thread (the test oracle)
  padded,        // CP
  stop_at_size,  // NCP
  sorted,        // SortedInterleaved only
  // CUDA, PaddedInterleaved, SortedInterleaved or CompactBatch, not periodic (stop 45): a thread per
  // system as padded / sorted / stop_at_size (compact: the warp loads and stores its 32 systems' rows
  // together), by truncated sweeps ((c*, y*) in shared memory: the batch's bands read once
  // and u written once); where a system does not decay fast enough (or fails the stability check,
  // or meets a non-finite value) the batch is solved again by the exact kernel (sorted / padded /
  // stop_at_size), decided on the device. In place: the exact kernel. Automatic's pick on CUDA for
  // those layouts (ADI_VARIABLE_TRUNCATED=0: never; docs/variable_batch.md).
  truncated,
};
// "automatic", "reference", "padded (CP)", "stop_at_size (NCP)", "sorted", "truncated".
const char* variable_kernel_name(VariableKernel k);

// The spellings before the options were unified (kept for one release).
using VariableMethod [[deprecated("use adi::VariableKernel")]] = VariableKernel;
[[deprecated("use adi::variable_kernel_name")]] inline const char* method_name(VariableKernel k) {
  return variable_kernel_name(k);
}

// Per-system arrays of a PointerBatch: bands and right-hand sides reached through
// arrays of `count` pointers (each to n_s contiguous values). Pointer arrays live in the
// executor's memory space.
template <class T>
struct PointerBands {
  const T* const* a = nullptr;
  const T* const* b = nullptr;
  const T* const* c = nullptr;
};

struct VariableTridiagonalOptions {
  bool periodic = false;
  VariableKernel kernel = VariableKernel::automatic;
  // As everywhere (adi/base/pivot.hpp): throw SingularSystem on a zero or non-finite pivot,
  // system() the system (the batch's numbering), row() the row (on CUDA: synchronises at
  // the end).
  bool check_pivots = true;
  // PointerBatch: copy the pointer arrays to the host on each solve and reject null
  // pointers of non-empty systems (one device-to-host copy on CUDA).
  bool check_pointers = true;
  // As TridiagonalOptions::pivoting (docs/pivoting.md). Host: partial solves each system
  // with partial pivoting in double; automatic runs the checked Thomas kernels and, when a
  // system fails the check, solves the batch again with pivoting (out of place only: in
  // place it throws UnstableSystem). CUDA (stop 37): partial solves each system with partial
  // pivoting in T, one thread per system (solvers/cuda/pivoting_variable.cuh); automatic runs
  // the checked Thomas kernel and, where a system fails, the batch again with partial pivoting
  // (out of place only, as the host); periodic systems too. A singular system throws
  // SingularSystem naming it (check_pivots).
  Pivoting pivoting = Pivoting::automatic;
};

// Built once per batch shape and layout: validates the layout against the batch, picks
// the kernel, owns the workspace (solve() allocates nothing). Not thread-safe.
template <class T>
class VariableTridiagonalPlan {
 public:
  VariableTridiagonalPlan(const VariableBatchPlan& batch, const PaddedInterleaved& layout,
                          VariableTridiagonalOptions options = {});
  VariableTridiagonalPlan(const VariableBatchPlan& batch, const SortedInterleaved& layout,
                          VariableTridiagonalOptions options = {});
  VariableTridiagonalPlan(const VariableBatchPlan& batch, const CompactBatch& layout,
                          VariableTridiagonalOptions options = {});
  VariableTridiagonalPlan(const VariableBatchPlan& batch, const PointerBatch& layout,
                          VariableTridiagonalOptions options = {});
  ~VariableTridiagonalPlan();
  VariableTridiagonalPlan(VariableTridiagonalPlan&&) noexcept;
  VariableTridiagonalPlan& operator=(VariableTridiagonalPlan&&) noexcept;

  // Padded, sorted and compact layouts: arrays of span() values. u may equal d.
  void solve(const Bands<T>& bands, const T* d, T* u);
  // PointerBatch: u[s] may equal d[s].
  void solve(const PointerBands<T>& bands, const T* const* d, T* const* u);

  VariableKernel kernel() const;
  [[deprecated("use kernel()")]] VariableKernel method() const { return kernel(); }
  index_t span() const;  // values each array must hold (0 for PointerBatch)
  const VariableBatchPlan& batch() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class VariableTridiagonalPlan<float>;
extern template class VariableTridiagonalPlan<double>;

}  // namespace adi
