// The dispatch table of the tridiagonal family: (executor, layout, precision) -> kernel.
// Each threshold carries the measurement that set it.
#include "adi/detail/tridiagonal_dispatch.hpp"

namespace adi::detail {

namespace {
// Neighbouring lines one element apart (a single inner line per row counts as the
// outer index, as solvers/cpu/batch.hpp normalises it).
bool lines_adjacent(const LineSet& l) {
  return l.count0 == 1 ? (l.count1 <= 1 || l.stride1 == 1) : l.stride0 == 1;
}

bool is_cpu(Kernel k) {
  return k == Kernel::reference || k == Kernel::cpu_thomas || k == Kernel::cpu_thomas_transpose ||
         k == Kernel::cpu_thomas_vector;
}
}  // namespace

bool kernel_supports(Kernel k, const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  if (exec.is_host()) {
    if (!is_cpu(k)) return false;
    switch (k) {
      case Kernel::cpu_thomas_transpose: return l.stride == 1;
      case Kernel::cpu_thomas_vector: return lines_adjacent(l);
      default: return true;
    }
  }
  if (is_cpu(k) || k == Kernel::automatic) return false;
  switch (k) {
    case Kernel::cuda_thomas_shuffle_transpose:
    case Kernel::cuda_thomas_shared_transpose:
      return l.stride == 1;
    case Kernel::cuda_thomas_pcr:
      return l.stride == 1 && l.n <= 1024;
    case Kernel::cuda_thomas_strided:
      return l.stride0 == 1 || l.count0 == 1;
    case Kernel::cuda_thomas_pcr_strided:
      return (l.stride0 == 1 || l.count0 == 1) && l.n <= 1024;
    default: return true;
  }
}

Kernel choose_kernel(const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  if (exec.is_host()) {
    // Neighbouring lines adjacent in memory (Y/Z sweeps, interleaved batches):
    // vectorise across lines directly.
    if (lines_adjacent(l) && l.lines() >= 2 && l.stride > 1) return Kernel::cpu_thomas_vector;
    // Contiguous lines (X sweeps, gtsv2StridedBatch layout): transpose in registers.
    if (l.stride == 1 && l.lines() >= 2) return Kernel::cpu_thomas_transpose;
    return Kernel::cpu_thomas;
  }
  // CUDA: contiguous lines -> shuffle transpose; lines adjacent in memory -> strided.
  if (l.stride == 1) return Kernel::cuda_thomas_shuffle_transpose;
  if (l.stride0 == 1 || l.count0 == 1) return Kernel::cuda_thomas_strided;
  return Kernel::cuda_thomas_naive;
}

}  // namespace adi::detail
