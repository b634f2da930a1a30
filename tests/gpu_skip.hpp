#pragma once
// The one way a test that needs a GPU skips where there is none: loudly, naming what was
// not run, so that a CI machine without a GPU never passes a GPU test vacuously (CTest
// reports it as skipped: GoogleTest's "[  SKIPPED ]" is its skip expression).
//
//   TEST(Suite, Name) { ADI_REQUIRE_CUDA(); ... }                  // "GPU test not run"
//   TEST(Suite, Name) { ADI_REQUIRE_CUDA("the device halo"); ... } // names what was not run
//   class MySuite : public adi::test::CudaTest {};                  // every test of a suite
//   TEST(Suite, NoDevice) { ADI_REQUIRE_NO_CUDA("the refusal"); } // the no-device path only
//
// A test of a mixed host + GPU check puts the GPU part in a test of its own with the macro,
// rather than an `if (cuda_available())` that passes without it. Tests that reach the
// library only through the C API define ADI_TEST_CUDA_AVAILABLE() (e.g. as
// adi_cuda_available() != 0) before including this header.
#include <gtest/gtest.h>

#ifndef ADI_TEST_CUDA_AVAILABLE
#include "adi/executor.hpp"
#define ADI_TEST_CUDA_AVAILABLE() (::adi::Executor::cuda_available())
#endif

namespace adi::test {
inline const char* skipped_what() { return "GPU test"; }
inline const char* skipped_what(const char* what) { return what; }

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ADI_TEST_CUDA_AVAILABLE())
      GTEST_SKIP() << "SKIPPED: no CUDA device (or adi built without CUDA): GPU test not run";
  }
};
}  // namespace adi::test

#define ADI_REQUIRE_CUDA(...)                                                                   \
  do {                                                                                          \
    if (!(ADI_TEST_CUDA_AVAILABLE()))                                                           \
      GTEST_SKIP() << "SKIPPED: no CUDA device (or adi built without CUDA): "                   \
                   << ::adi::test::skipped_what(__VA_ARGS__) << " not run";                     \
  } while (0)

#define ADI_REQUIRE_NO_CUDA(...)                                                                \
  do {                                                                                          \
    if (ADI_TEST_CUDA_AVAILABLE())                                                              \
      GTEST_SKIP() << "SKIPPED: a CUDA device is present: the no-device path ("                 \
                   << ::adi::test::skipped_what(__VA_ARGS__) << ") not run";                    \
  } while (0)
