#pragma once
// Vocabulary of the one-large-system solvers (adi/large_tridiagonal.hpp): the kernel
// identifiers the plan and the backends share (LargeTridiagonalOptions::kernel).
#include <string>

namespace adi {

// How a large system is solved.
enum class LargeKernel {
  automatic,              // partition on the host; on a CUDA device truncated where it applies
                          // (docs/large_tridiagonal.md "GPU, truncated sweeps"), else partition
  thomas,                 // plain Thomas on one core (host; the baseline)
  pcr_thomas,             // P+T: k PCR levels make 2^k independent subsystems, gathered into
                          // contiguous buffers and solved by Thomas concurrently (paper III)
  pcr_thomas_overlapped,  // P+TO: the gather fused into the last PCR level (paper IV-A)
  shuffled_pcr_thomas,    // SP+T: each PCR level stores its two halves contiguously (IV-B)
  partition,              // two passes: chunks reduced to two interface unknowns each, the
                          // reduced system solved (recursively), then every chunk by Thomas;
                          // host: one chunk per SIMD lane; CUDA: one chunk per thread
  truncated,              // CUDA: one pass of truncated sweeps (windows of 512 rows overlapping by
                          // 80 (fp64) / 48 (fp32) rows, a warp each, where the coupling across
                          // each cut has decayed below 1e-3 epsilon), checked; a system it
                          // refuses (too slow a decay, growth, non-finite), a periodic one or one
                          // solved in place (u == d) goes to partition
};

const char* large_kernel_name(LargeKernel v);
// Parses the names printed by large_kernel_name; throws InvalidArgument on unknown names.
LargeKernel large_kernel_from_name(const std::string& name);

// The spellings before the options were unified (kept for one release).
using LargeVariant [[deprecated("use adi::LargeKernel")]] = LargeKernel;
[[deprecated("use adi::large_kernel_name")]] inline const char* large_variant_name(LargeKernel v) {
  return large_kernel_name(v);
}
[[deprecated("use adi::large_kernel_from_name")]] inline LargeKernel large_variant_from_name(const std::string& name) {
  return large_kernel_from_name(name);
}

}  // namespace adi
