// The dispatch table of the tridiagonal family: (executor, layout, precision) -> kernel.
// Each threshold carries the measurement that set it.
#include "adi/detail/tridiagonal_dispatch.hpp"

#include "solvers/cuda/backend.hpp"

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

// --- CUDA (solvers/cuda/) -------------------------------------------------------
// Measured on an H100 (benchmarks/bench_cuda_tridiagonal.cu; numbers in its output
// and in solvers/cuda/README.md). PROVISIONAL until the first H100 run.
namespace {
// Longest line for which the Thomas-PCR hybrids beat the chunked Thomas kernels
// (X: the transpose kernels; Y/Z: the coalesced strided Thomas).
constexpr index_t kCudaPcrMaxX = 2048;
constexpr index_t kCudaPcrMaxStrided = 2048;

// The hybrids keep a line (or a tile of lines) in shared memory: it must fit.
bool cuda_hybrid_fits(Kernel k, const Executor& exec, const DispatchQuery& q) {
  const std::size_t need =
      cuda_backend::tridiagonal_min_shared_bytes(k, q.lines, q.shared_bands, q.value_size);
  return need <= cuda_backend::device_info(exec.device()).shared_per_block_optin;
}

bool cuda_kernel_supports(Kernel k, const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  switch (k) {
    case Kernel::cuda_thomas_naive: return true;
    case Kernel::cuda_thomas_shuffle_transpose:
    case Kernel::cuda_thomas_shared_transpose: return l.stride == 1;
    case Kernel::cuda_thomas_pcr: return l.stride == 1 && cuda_hybrid_fits(k, exec, q);
    case Kernel::cuda_thomas_strided: return lines_adjacent(l);
    case Kernel::cuda_thomas_pcr_strided: return lines_adjacent(l) && cuda_hybrid_fits(k, exec, q);
    default: return false;
  }
}

Kernel choose_cuda_kernel(const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  // Contiguous lines (X sweeps, gtsv2StridedBatch layout): the warp-per-line hybrid reads
  // each value once and writes u once; the transposed Thomas also moves c*, y*.
  if (l.stride == 1) {
    if (l.n <= kCudaPcrMaxX && cuda_hybrid_fits(Kernel::cuda_thomas_pcr, exec, q)) return Kernel::cuda_thomas_pcr;
    return Kernel::cuda_thomas_shuffle_transpose;
  }
  // Neighbouring lines adjacent in memory (Y/Z sweeps, interleaved batches).
  if (lines_adjacent(l)) {
    if (l.n <= kCudaPcrMaxStrided && cuda_hybrid_fits(Kernel::cuda_thomas_pcr_strided, exec, q))
      return Kernel::cuda_thomas_pcr_strided;
    return Kernel::cuda_thomas_strided;
  }
  return Kernel::cuda_thomas_naive;
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
  return cuda_kernel_supports(k, exec, q);
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
  return choose_cuda_kernel(exec, q);
}

}  // namespace adi::detail
