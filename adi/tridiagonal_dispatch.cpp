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

// --- host (solvers/cpu/) ----------------------------------------------------------
// Measured on an AMD EPYC (Zen 4, AVX-512) with 2 threads, float, 8M values, min of 10
// (benchmarks/bench_cpu_tridiagonal.cpp for the 3D grid; copy bandwidth 27-30 GB/s).
// The same choice holds for shared bands, periodic lines and double (the SIMD kernels
// win by more there: fewer bytes per flop).
namespace {
Kernel choose_host_kernel(const DispatchQuery& q) {
  const LineSet& l = q.lines;
  // Neighbouring lines one element apart (Y/Z sweeps, interleaved batches): SIMD lanes
  // across lines with plain vector loads. Interleaved n = 4: 22.7 GB/s against 3.6 for
  // the scalar kernel, n = 64: 21 vs 1.6; from 2 lines on (2 lines of 4M: 28 vs 46 ms).
  if (lines_adjacent(l) && l.lines() >= 2 && l.stride > 1) return Kernel::cpu_thomas_vector;
  // Lines with element stride 1 (X sweeps, the gtsv2StridedBatch layout): in-register
  // transpose. Contiguous n = 4: 6.5 GB/s against 3.4 scalar, n = 64: 13.9 vs 3.4,
  // n = 256: 14.8 vs 3.6; from 2 lines on (2 lines of 4M: 34 vs 45 ms), but a single
  // line is faster scalar (89 vs 125 ms: a one-lane "tile" per element).
  if (l.stride == 1 && l.lines() >= 2) return Kernel::cpu_thomas_transpose;
  // Anything else (gathers: neither elements nor lines adjacent; a single line).
  return Kernel::cpu_thomas;
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
  if (exec.is_host()) return choose_host_kernel(q);
  return choose_cuda_kernel(exec, q);
}

}  // namespace adi::detail
