// adi::LargeTridiagonalPlan, the public entry point for one or a few very large systems:
// every variant through the API against a long-double oracle (sizes 1, 2, 3, 2^k-1,
// 2^k, 2^k+1), in place, shared bands, several systems, the caller's workspace, the
// analytic switch point, the TridiagonalPlan route for a few long lines, and bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/large_tridiagonal.hpp"
#include "adi/tridiagonal.hpp"
#include "tests/solvers/large_tridiagonal_check.hpp"

namespace {

namespace tl = adi::test_large;
using adi::LargeTridiagonalOptions;
using adi::LargeTridiagonalPlan;
using adi::LargeKernel;

const LargeKernel kVariants[] = {LargeKernel::automatic, LargeKernel::thomas, LargeKernel::pcr_thomas,
                                  LargeKernel::pcr_thomas_overlapped, LargeKernel::shuffled_pcr_thomas,
                                  LargeKernel::partition};

template <class T>
class LargeApi : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LargeApi, Types);

TYPED_TEST(LargeApi, EveryVariantEverySize) {
  using T = TypeParam;
  const adi::Executor host = adi::Executor::host();
  for (bool periodic : {false, true})
    for (std::int64_t n : tl::sizes_upto(18)) {
      auto p = tl::make<T>(n, periodic, 3 + unsigned(n));
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      for (LargeKernel v : kVariants) {
        LargeTridiagonalOptions o;
        o.kernel = v;
        o.periodic = periodic;
        LargeTridiagonalPlan<T> plan(host, n, 1, 0, o);
        EXPECT_NE(plan.kernel(), LargeKernel::automatic);
        std::vector<T> u(n, std::numeric_limits<T>::quiet_NaN());
        plan.solve(adi::Bands<T>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data());
        EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol)
            << adi::large_kernel_name(v) << " n=" << n << (periodic ? " periodic" : "");
      }
    }
}

TYPED_TEST(LargeApi, InPlaceSharedBandsSeveralSystemsCallerWorkspace) {
  using T = TypeParam;
  const std::int64_t n = 70001, count = 3;
  auto p = tl::make<T>(n, false, 21);
  p.x = tl::oracle(p, false);
  const double tol = tl::bound<T>(tl::thomas_error(p, false));
  for (LargeKernel v : {LargeKernel::partition, LargeKernel::pcr_thomas_overlapped}) {
    LargeTridiagonalOptions o;
    o.kernel = v;
    o.chunk = v == LargeKernel::partition ? 64 : 0;
    const std::int64_t stride = n + 5;  // systems need not be adjacent
    LargeTridiagonalPlan<T> plan(adi::Executor::host(), n, count, stride, o);
    std::vector<T> d(stride * count, std::numeric_limits<T>::quiet_NaN());
    for (std::int64_t s = 0; s < count; ++s) std::copy(p.d.begin(), p.d.end(), d.begin() + s * stride);
    EXPECT_GE(plan.cached_workspace_bytes(), plan.workspace_bytes());  // from construction
    plan.solve(adi::SharedBands<T>{p.a.data(), p.b.data(), p.c.data()}, d.data(), d.data());
    EXPECT_GE(plan.cached_workspace_bytes(), plan.workspace_bytes());
    for (std::int64_t s = 0; s < count; ++s)
      EXPECT_LE(tl::rel_error(p.x, d.data() + s * stride, n), tol) << adi::large_kernel_name(v) << " system " << s;
    // The caller's workspace, per-system bands.
    std::vector<T> a, b, c, dd, u(stride * count, std::numeric_limits<T>::quiet_NaN());
    for (std::int64_t s = 0; s < count; ++s) {
      a.insert(a.end(), p.a.begin(), p.a.end());
      b.insert(b.end(), p.b.begin(), p.b.end());
      c.insert(c.end(), p.c.begin(), p.c.end());
      dd.insert(dd.end(), p.d.begin(), p.d.end());
      a.resize((s + 1) * stride, T(1));
      b.resize((s + 1) * stride, T(1));
      c.resize((s + 1) * stride, T(1));
      dd.resize((s + 1) * stride, T(1));
    }
    void* ws = std::aligned_alloc(64, (plan.workspace_bytes() + 63) / 64 * 64 + 64);
    plan.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, dd.data(), u.data(), ws, plan.workspace_bytes());
    std::free(ws);
    for (std::int64_t s = 0; s < count; ++s)
      EXPECT_LE(tl::rel_error(p.x, u.data() + s * stride, n), tol) << adi::large_kernel_name(v) << " system " << s;
  }
}

TEST(LargeApiOnce, TwoMillionRowsAutomatic) {
  const std::int64_t n = (std::int64_t(1) << 21) + 1;
  auto p = tl::make<double>(n, true, 99);
  p.x = tl::oracle(p, true);
  LargeTridiagonalOptions o;
  o.periodic = true;
  std::vector<double> u(n);
  adi::solve_large_tridiagonal<double>(adi::Executor::host(), n, {p.a.data(), p.b.data(), p.c.data()},
                                       p.d.data(), u.data(), o);
  EXPECT_LE(tl::rel_error(p.x, u.data(), n), tl::bound<double>(tl::thomas_error(p, true)));
}

TEST(LargeApiOnce, AnalyticSwitchPointAndNames) {
  const adi::Executor two = adi::Executor::host(2);
  LargeTridiagonalOptions o;
  o.kernel = LargeKernel::shuffled_pcr_thomas;
  EXPECT_EQ(LargeTridiagonalPlan<double>(two, 1 << 20, 1, 0, o).pcr_levels(), adi::large_switch_point(1 << 20, 2));
  EXPECT_EQ(adi::large_switch_point(1 << 26, 48), 4);
  o.pcr_levels = 5;
  EXPECT_EQ(LargeTridiagonalPlan<double>(two, 1 << 20, 1, 0, o).pcr_levels(), 5);
  EXPECT_EQ(LargeTridiagonalPlan<double>(two, 1000).kernel(), LargeKernel::partition);
  for (LargeKernel v : kVariants) EXPECT_EQ(adi::large_kernel_from_name(adi::large_kernel_name(v)), v);
  EXPECT_THROW(adi::large_kernel_from_name("spike"), adi::InvalidArgument);
}

// A few long lines through the batched entry point take the partition solver.
TYPED_TEST(LargeApi, TridiagonalPlanRoutesFewLongLines) {
  using T = TypeParam;
  const std::int64_t n = (std::int64_t(1) << 16) + 3, lines = 2;
  auto p = tl::make<T>(n, false, 41);
  p.x = tl::oracle(p, false);
  const double tol = tl::bound<T>(tl::thomas_error(p, false));
  const adi::StridedLines layout{n, lines, 1, n + 1};
  adi::TridiagonalPlan<T> plan(adi::Executor::host(), layout);
  EXPECT_EQ(plan.kernel(), adi::Kernel::large_partition);
  std::vector<T> d((n + 1) * lines, T(0)), u((n + 1) * lines, std::numeric_limits<T>::quiet_NaN());
  for (std::int64_t l = 0; l < lines; ++l) std::copy(p.d.begin(), p.d.end(), d.begin() + l * (n + 1));
  plan.solve(adi::SharedBands<T>{p.a.data(), p.b.data(), p.c.data()}, d.data(), u.data());
  for (std::int64_t l = 0; l < lines; ++l) EXPECT_LE(tl::rel_error(p.x, u.data() + l * (n + 1), n), tol) << "line " << l;
  // Many lines, or short ones, stay with the batched kernels.
  EXPECT_NE(adi::TridiagonalPlan<T>(adi::Executor::host(), adi::StridedLines::contiguous(n, 64)).kernel(),
            adi::Kernel::large_partition);
  EXPECT_NE(adi::TridiagonalPlan<T>(adi::Executor::host(), adi::StridedLines::contiguous(1000, 1)).kernel(),
            adi::Kernel::large_partition);
  // A zero pivot names the line and the row (without pivoting: the row is no longer singular
  // with it, and the default, automatic, solves the line with partial pivoting).
  p.a[777] = 0;
  p.b[777] = 0;
  adi::TridiagonalOptions no_pivoting;
  no_pivoting.pivoting = adi::Pivoting::none;
  adi::TridiagonalPlan<T> one(adi::Executor::host(), adi::StridedLines::contiguous(n, 1), no_pivoting);
  try {
    std::vector<T> v(n);
    one.solve(adi::SharedBands<T>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), v.data());
    ADD_FAILURE() << "no SingularSystem";
  } catch (const adi::SingularSystem& e) {
    EXPECT_NE(std::string(e.what()).find("row 777 of line 0"), std::string::npos) << e.what();
  }
}

TEST(LargeApiBadInput, ConstructionAndSolveErrors) {
  const adi::Executor host = adi::Executor::host();
  auto plan_with = [&](auto f) {
    LargeTridiagonalOptions o;
    f(o);
    return LargeTridiagonalPlan<double>(host, 1000, 1, 0, o);
  };
  EXPECT_THROW(LargeTridiagonalPlan<double>(host, 0), adi::InvalidArgument);
  EXPECT_THROW(LargeTridiagonalPlan<double>(host, 10, -1), adi::InvalidArgument);
  EXPECT_THROW(LargeTridiagonalPlan<double>(host, 10, 2, 5), adi::InvalidArgument);  // overlapping systems
  EXPECT_THROW(LargeTridiagonalPlan<double>(host, adi::StridedLines{10, 2, 2, 40}), adi::InvalidArgument);
  EXPECT_THROW(plan_with([](auto& o) { o.pcr_levels = 31; }), adi::InvalidArgument);
  EXPECT_THROW(plan_with([](auto& o) { o.pcr_levels = -2; }), adi::InvalidArgument);
  EXPECT_THROW(plan_with([](auto& o) { o.pivot_tolerance = -1; }), adi::InvalidArgument);
  EXPECT_THROW(plan_with([](auto& o) { o.chunk = 9; }), adi::InvalidArgument);  // odd: no SIMD width (AVX2 or AVX-512) divides it
  EXPECT_THROW(plan_with([](auto& o) { o.lanes = 3; }), adi::InvalidArgument);
  EXPECT_THROW(plan_with([](auto& o) {
                 o.kernel = LargeKernel::pcr_thomas;
                 o.chunk = 64;
               }),
               adi::InvalidArgument);

  const std::int64_t n = 1000;
  auto p = tl::make<double>(n, false, 1);
  std::vector<double> u(n);
  LargeTridiagonalPlan<double> plan(host, n);
  const adi::Bands<double> ok{p.a.data(), p.b.data(), p.c.data()};
  EXPECT_THROW(plan.solve(adi::Bands<double>{nullptr, p.b.data(), p.c.data()}, p.d.data(), u.data()), adi::InvalidArgument);
  EXPECT_THROW(plan.solve(adi::Bands<double>{p.a.data(), nullptr, p.c.data()}, p.d.data(), u.data()), adi::InvalidArgument);
  EXPECT_THROW(plan.solve(adi::Bands<double>{p.a.data(), p.b.data(), nullptr}, p.d.data(), u.data()), adi::InvalidArgument);
  EXPECT_THROW(plan.solve(ok, nullptr, u.data()), adi::InvalidArgument);
  EXPECT_THROW(plan.solve(ok, p.d.data(), nullptr), adi::InvalidArgument);
  std::vector<double> big(2 * n);
  EXPECT_THROW(plan.solve(ok, big.data(), big.data() + 3), adi::InvalidArgument);  // u overlaps d
  EXPECT_THROW(plan.solve(ok, p.d.data(), const_cast<double*>(p.b.data())), adi::InvalidArgument);  // u is b
  EXPECT_THROW(plan.solve(ok, p.d.data(), reinterpret_cast<double*>(reinterpret_cast<char*>(u.data()) + 1)),
               adi::InvalidArgument);  // misaligned
  std::vector<char> small(16);
  EXPECT_THROW(plan.solve(ok, p.d.data(), u.data(), small.data(), small.size()), adi::InvalidArgument);
  EXPECT_THROW(plan.solve(ok, p.d.data(), u.data(), nullptr, 0), adi::InvalidArgument);

  // A zero pivot: SingularSystem naming the row, for every host variant (without pivoting:
  // the automatic default solves this nonsingular system with partial pivoting).
  p.a[500] = 0;
  p.b[500] = 0;
  for (LargeKernel v : kVariants) {
    LargeTridiagonalOptions o;
    o.pivoting = adi::Pivoting::none;
    o.kernel = v;
    o.pcr_levels = 2;
    try {
      LargeTridiagonalPlan<double>(host, n, 1, 0, o).solve(adi::Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data());
      ADD_FAILURE() << adi::large_kernel_name(v) << ": no SingularSystem";
    } catch (const adi::SingularSystem& e) {
      EXPECT_NE(std::string(e.what()).find("row 500 "), std::string::npos) << e.what();
    }
    // Without checks the solve returns (with non-finite values) instead of throwing.
    o.check_pivots = false;
    EXPECT_NO_THROW(
        LargeTridiagonalPlan<double>(host, n, 1, 0, o).solve(adi::Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()));
  }
}

}  // namespace
