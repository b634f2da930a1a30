// The register partition route of Kernel::cuda_pivoting (issue 23, stop 38, branch h-regpart;
// solvers/cuda/pivoting_regpart.cuh), forced with ADI_PIVOTING_ROUTE=regpart, against LAPACKE
// ?gtsv (tests/solvers/pivoting_cases.hpp: within 10x of LAPACK's error, beyond it
// eps cond(A, x)): every layout (the route is meant for Y/Z sweeps but takes any), the test
// families (non-dominant lines go to the exact fall-back, dominant ones and the heat operator
// stay on the partitions), sizes 1 .. 272, per-line and shared bands, fp32 and fp64, outputs
// NaN-poisoned, odd sizes in place; every block width (ADI_PIVOTING_REGPART_LINES); a batch of
// dominant lines with one bad line (the fall-back is per line); a singular line still throws.
// The host test of the same steps: tests/solvers/cpu/test_pivoting_regpart.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/tridiagonal.hpp"
#include "tests/comparison_forms_skip.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/scoped_env.hpp"
#include "tests/solvers/cuda/pivoting_device_solve.hpp"
#include "tests/solvers/pivoting_cases.hpp"

namespace {

using adi::index_t;
using adi::LineSet;
namespace tp = adi::test_pivoting;
using adi::test::ScopedEnv;

// The route is compiled only with -DADI_CUDA_UNROLL_ALL=ON (issue 15 item 8: forced only, for
// measurement): other builds skip the suite, naming it.
class PivotingRegPartCuda : public adi::test::CudaTest {
 protected:
  void SetUp() override {
    adi::test::CudaTest::SetUp();
    if (IsSkipped()) return;
    ADI_REQUIRE_COMPARISON_FORMS("the regpart route (ADI_PIVOTING_ROUTE=regpart)");
  }
};

LineSet regpart_lines(int layout, index_t n, index_t count) {
  switch (layout) {
    case 0: return adi::to_lines(adi::StridedLines::contiguous(n, count));
    case 1: return adi::to_lines(adi::InterleavedBatch{n, count});
    case 2: return adi::to_lines(adi::BoxLines{adi::Box3{5, n, 7, 7, 7 * (n + 1)}, adi::Axis::y});
    default: return adi::to_lines(adi::BoxLines{adi::Box3{6, 7, n, 7, 56}, adi::Axis::z});
  }
}

// Solves k on the device with pivoting = partial (the route forced from the environment).
template <class T>
void regpart_solve(tp::Case<T>& k, bool in_place) {
  adi::TridiagonalOptions o;
  o.pivoting = adi::Pivoting::partial;
  tp::solve_on_device(k, o, in_place);
}

const tp::Family kFamilies[] = {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz,
                                tp::Family::dominant, tp::Family::heat};

template <class T>
void regpart_sweep(const std::vector<index_t>& sizes, const char* tag) {
  for (int layout = 0; layout < 4; ++layout)
    for (tp::Family f : kFamilies)
      for (index_t n : sizes)
        for (bool shared : {false, true}) {
          auto k = tp::make_case<T>(regpart_lines(layout, n, 37), f, false, shared, 1000 * n + 10 * layout + shared);
          regpart_solve(k, n % 2 == 1);
          std::string detail;
          EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
              << tag << (sizeof(T) == 4 ? " fp32" : " fp64") << " layout " << layout << " " << tp::family_name(f)
              << " n " << n << (shared ? " shared" : "") << ": " << detail;
        }
}

TEST_F(PivotingRegPartCuda, WithinTenTimesLapack) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "regpart");
  const std::vector<index_t> sizes{1, 2, 3, 16, 17, 18, 31, 33, 34, 255, 256, 257, 272};
  regpart_sweep<float>(sizes, "regpart");
  regpart_sweep<double>(sizes, "regpart");
  for (const char* width : {"narrow", "wide"}) {
    const ScopedEnv lines("ADI_PIVOTING_REGPART_LINES", width);
    regpart_sweep<float>({33, 256, 257}, width);
    regpart_sweep<double>({33, 256, 257}, width);
  }
}

// A Y sweep of dominant lines with one random-sign line among them: the fall-back is per line.
TEST_F(PivotingRegPartCuda, OneBadLineAmongDominantOnes) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "regpart");
  auto run = [](auto zero) {
    using T = decltype(zero);
    const LineSet l = regpart_lines(2, 256, 0);
    auto k = tp::make_case<T>(l, tp::Family::dominant, false, false, 77);
    auto bad = tp::make_case<T>(l, tp::Family::random_signs, false, false, 78);
    const index_t o = l.offset(17);
    for (index_t i = 1; i < l.n - 1; ++i) {
      const std::size_t e = static_cast<std::size_t>(o + i * l.stride);
      k.a[e] = bad.a[e];
      k.b[e] = bad.b[e];
      k.c[e] = bad.c[e];
    }
    regpart_solve(k, false);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << (sizeof(T) == 4 ? "fp32: " : "fp64: ") << detail;
  };
  run(0.0f);
  run(0.0);
}

// Small, for compute-sanitizer memcheck (scripts/gpu_pivoting_check.sh --regpart).
TEST_F(PivotingRegPartCuda, Small) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "regpart");
  for (index_t n : {5, 40})
    for (tp::Family f : {tp::Family::random_signs, tp::Family::dominant}) {
      auto k = tp::make_case<float>(regpart_lines(3, n, 0), f, false, false, 5 + n);
      regpart_solve(k, false);
      std::string detail;
      EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << tp::family_name(f) << " n " << n << ": " << detail;
    }
}

TEST_F(PivotingRegPartCuda, SingularLineThrows) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "regpart");
  auto k = tp::make_case<double>(regpart_lines(2, 256, 0), tp::Family::dominant, false, false, 9);
  const std::size_t e = static_cast<std::size_t>(k.lines.offset(3) + 100 * k.lines.stride);
  k.a[e] = k.b[e] = k.c[e] = 0;
  EXPECT_THROW(regpart_solve(k, false), adi::SingularSystem);
}

}  // namespace
