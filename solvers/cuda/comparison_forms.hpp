#pragma once
// Kernel forms kept only for comparisons (tuning rows, before/after timings) are compiled only
// with -DADI_CUDA_UNROLL_ALL=ON (issue 15 item 8). Where a caller asks for one the build lacks,
// it says so once per call site on stderr and runs the default form instead (same result):
//
//   static std::once_flag once;
//   note_form_not_compiled(once, "large_solve load = 2 (tiles staged in shared memory)",
//                          "the default (global loads)");
#include <cstdio>
#include <mutex>

namespace adi::cuda_backend {
inline void note_form_not_compiled(std::once_flag& once, const char* form, const char* instead) {
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "adi: %s: this build does not compile it (configure with -DADI_CUDA_UNROLL_ALL=ON to "
                 "time it); running %s\n",
                 form, instead);
  });
}
}  // namespace adi::cuda_backend
