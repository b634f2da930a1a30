#pragma once
// Vocabulary of the batched tridiagonal solves (adi/tridiagonal.hpp): the band arrays and
// the kernel identifiers the plan, its dispatch table and the backends share.
// Header is C++17 so that CUDA translation units can include it.
#include <string>

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
  // Partial (row) pivoting, LAPACK ?gtsv's elimination, for systems that are not
  // diagonally dominant (docs/pivoting.md); the same layouts as their Thomas peers.
  cpu_pivoting,             // scalar, any strides, OpenMP across lines
  cpu_pivoting_transpose,   // stride-1 lines, SIMD lanes after an in-register transpose
  cpu_pivoting_vector,      // neighbouring lines adjacent in memory, SIMD lanes across lines
  cuda_pivoting,            // one thread per line, U's rows in a workspace laid out line-fastest
                            // (coalesced when neighbouring lines are adjacent: Y/Z sweeps)
  cuda_thomas_pcr_long,     // long lines adjacent in memory, few of them: a block per tile of
                            // lines, a thread per segment, the reduced systems by warps
  // One implicit ADI stage per kernel (TridiagonalPlan::solve_stage, adi::Operator's stages):
  // right-hand side, bands generated from the operator's shared line coefficients and the
  // Thomas-PCR solve fused (solvers/cuda/thomas_pcr_fused_stage.cuh). Chosen for stages only,
  // when a plan with TridiagonalOptions::stages is built; never for plain solves.
  cuda_thomas_pcr_fused_stage,
  // Non-periodic lines adjacent in memory (Y/Z), solved out of place by truncated sweeps: a
  // thread per (line, part), each part's Thomas sweeps started G rows early from a cut, the
  // truncations checked (solvers/cuda/thomas_truncated.cuh); where any line's check fails the
  // plan re-solves every line with the exact kernel the table picks (one flag read a solve).
  // Opt-in: by name, or automatic with ADI_LONG_TRUNCATED=1 (docs/design.md).
  cuda_thomas_truncated,
};

// Whether a plan pivots (TridiagonalOptions::pivoting and the large / variable plans):
//   automatic  Thomas with the stability check of solvers/common/thomas_check.hpp; lines
//              that fail it are solved again with partial pivoting (docs/pivoting.md)
//   none       Thomas only; with check_pivots a failing line throws UnstableSystem
//   partial    always partial pivoting (the cpu_pivoting* / cuda_pivoting kernels)
enum class Pivoting { automatic, none, partial };

const char* pivoting_name(Pivoting p);
// Parses "automatic", "none", "partial"; throws InvalidArgument on anything else.
Pivoting pivoting_from_name(const std::string& name);

namespace detail {
// The names kernel_name prints and kernel_from_name parses. Defined here, in the vocabulary,
// so that the backends' libraries (adi_cuda) name kernels without linking back to adi.
struct KernelName {
  Kernel kernel;
  const char* name;
};
inline constexpr KernelName kKernelNames[] = {
    {Kernel::automatic, "automatic"},
    {Kernel::reference, "reference"},
    {Kernel::cpu_thomas, "cpu_thomas"},
    {Kernel::cpu_thomas_transpose, "cpu_thomas_transpose"},
    {Kernel::cpu_thomas_vector, "cpu_thomas_vector"},
    {Kernel::cuda_thomas_naive, "cuda_thomas_naive"},
    {Kernel::cuda_thomas_shuffle_transpose, "cuda_thomas_shuffle_transpose"},
    {Kernel::cuda_thomas_shared_transpose, "cuda_thomas_shared_transpose"},
    {Kernel::cuda_thomas_pcr, "cuda_thomas_pcr"},
    {Kernel::cuda_thomas_strided, "cuda_thomas_strided"},
    {Kernel::cuda_thomas_pcr_strided, "cuda_thomas_pcr_strided"},
    {Kernel::large_partition, "large_partition"},
    {Kernel::cpu_pivoting, "cpu_pivoting"},
    {Kernel::cpu_pivoting_transpose, "cpu_pivoting_transpose"},
    {Kernel::cpu_pivoting_vector, "cpu_pivoting_vector"},
    {Kernel::cuda_pivoting, "cuda_pivoting"},
    {Kernel::cuda_thomas_pcr_long, "cuda_thomas_pcr_long"},
    {Kernel::cuda_thomas_pcr_fused_stage, "cuda_thomas_pcr_fused_stage"},
    {Kernel::cuda_thomas_truncated, "cuda_thomas_truncated"},
};
}  // namespace detail

inline const char* kernel_name(Kernel k) {
  for (const auto& e : detail::kKernelNames)
    if (e.kernel == k) return e.name;
  return "unknown";
}
// Parses the names printed by kernel_name; throws InvalidArgument on unknown names.
Kernel kernel_from_name(const std::string& name);

}  // namespace adi
