#pragma once
// The one way a test that needs a GPU skips where there is none: loudly, naming what was
// not run, so that a CI machine without a GPU never passes a GPU test vacuously.
//
//   TEST(Suite, Name) { ADI_REQUIRE_CUDA(); ... }                  // "GPU test not run"
//   TEST(Suite, Name) { ADI_REQUIRE_CUDA("the device halo"); ... } // names what was not run
//   class MySuite : public adi::test::CudaTest {};                  // every test of a suite
#include <gtest/gtest.h>

#include "adi/executor.hpp"

namespace adi::test {
inline const char* skipped_what() { return "GPU test"; }
inline const char* skipped_what(const char* what) { return what; }

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Executor::cuda_available())
      GTEST_SKIP() << "SKIPPED: no CUDA device (or adi built without CUDA): GPU test not run";
  }
};
}  // namespace adi::test

#define ADI_REQUIRE_CUDA(...)                                                                   \
  do {                                                                                          \
    if (!::adi::Executor::cuda_available())                                                     \
      GTEST_SKIP() << "SKIPPED: no CUDA device (or adi built without CUDA): "                   \
                   << ::adi::test::skipped_what(__VA_ARGS__) << " not run";                     \
  } while (0)
