#pragma once
// Tests of kernel forms kept only for comparisons (compiled only with -DADI_CUDA_UNROLL_ALL=ON,
// solvers/cuda/comparison_forms.hpp; issue 15 item 8): in other builds asking for such a form
// runs the default, so its test skips loudly, naming the form, instead of testing the default
// twice (tests/gpu_skip.hpp's rule: never pass vacuously).
//
//   TEST_F(Suite, Name) { ADI_REQUIRE_COMPARISON_FORMS("the staged route"); ... }
// A test that also covers a default form checks it first and ends with the macro (a skip after
// failures still reports the failures).
#include <gtest/gtest.h>

#include "solvers/cuda/backend.hpp"

#define ADI_REQUIRE_COMPARISON_FORMS(what)                                                      \
  do {                                                                                          \
    if (!::adi::cuda_backend::timing_forms_compiled())                                          \
      GTEST_SKIP() << "SKIPPED: " << (what)                                                     \
                   << " is compiled only with -DADI_CUDA_UNROLL_ALL=ON: not run in this build"; \
  } while (0)
