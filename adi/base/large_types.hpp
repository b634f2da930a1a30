#pragma once
// Vocabulary of the one-large-system solvers (adi/large_tridiagonal.hpp): the variant
// identifiers the plan and the backends share.
#include <string>

namespace adi {

// How a large system is solved.
enum class LargeVariant {
  automatic,              // partition on either backend (the measured best)
  thomas,                 // plain Thomas on one core (host; the baseline)
  pcr_thomas,             // P+T: k PCR levels make 2^k independent subsystems, gathered into
                          // contiguous buffers and solved by Thomas concurrently (paper III)
  pcr_thomas_overlapped,  // P+TO: the gather fused into the last PCR level (paper IV-A)
  shuffled_pcr_thomas,    // SP+T: each PCR level stores its two halves contiguously (IV-B)
  partition,              // two passes: chunks reduced to two interface unknowns each, the
                          // reduced system solved (recursively), then every chunk by Thomas;
                          // host: one chunk per SIMD lane; CUDA: one chunk per thread
};

const char* large_variant_name(LargeVariant v);
// Parses the names printed by large_variant_name; throws InvalidArgument on unknown names.
LargeVariant large_variant_from_name(const std::string& name);

}  // namespace adi
