// Host kernels for one large system (solvers/cpu/pcr_thomas_large.cpp, partition_large.cpp)
// against a long-double Thomas oracle: every variant, switch points 0 .. log2 n + 1, the
// partition's chunk lengths and lane counts (groups, scalar tails, recursion), periodic
// systems, both precisions; outputs NaN-poisoned; errors within 10x of plain Thomas.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "adi/large_tridiagonal.hpp"
#include "solvers/cpu/large_tridiagonal_cpu.hpp"
#include "tests/solvers/large_tridiagonal_check.hpp"

namespace {

using adi::LargeKernel;
using adi::cpu::large::Failure;
using adi::cpu::large::Settings;
using adi::cpu::large::System;
namespace tl = adi::test_large;

struct Buffer {
  std::unique_ptr<char, void (*)(void*)> p{nullptr, std::free};
  explicit Buffer(std::size_t bytes)
      : p(static_cast<char*>(std::aligned_alloc(64, (std::max<std::size_t>(bytes, 64) + 63) / 64 * 64)), std::free) {}
  void* get() const { return p.get(); }
};

template <class T>
Failure run(const Settings& s, const tl::Problem<T>& p, std::vector<T>& u, bool in_place = false) {
  u.assign(p.n, std::numeric_limits<T>::quiet_NaN());
  if (in_place) u = p.d;
  Buffer ws(adi::cpu::large::workspace_bytes(s, p.n, sizeof(T)));
  const System<T> sys{p.a.data(), p.b.data(), p.c.data(), in_place ? u.data() : p.d.data(), u.data(), p.n};
  return adi::cpu::large::solve<T>(s, sys, ws.get());
}

std::string describe(const Settings& s, std::int64_t n, bool periodic) {
  return std::string(adi::large_kernel_name(s.variant)) + " n=" + std::to_string(n) + " k=" + std::to_string(s.k) +
         " chunk=" + std::to_string(s.chunk) + " lanes=" + std::to_string(s.lanes) + (periodic ? " periodic" : "");
}

template <class T>
class LargeHost : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LargeHost, Types);

TYPED_TEST(LargeHost, PaperVariantsEverySwitchPoint) {
  using T = TypeParam;
  std::vector<T> u;
  for (bool periodic : {false, true})
    for (std::int64_t n : tl::sizes_upto(12)) {
      auto p = tl::make<T>(n, periodic, 17 + unsigned(n));
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      int log2n = 0;
      while ((std::int64_t(1) << (log2n + 1)) <= n) ++log2n;
      for (LargeKernel v : {LargeKernel::thomas, LargeKernel::pcr_thomas, LargeKernel::pcr_thomas_overlapped,
                             LargeKernel::shuffled_pcr_thomas})
        for (int k : {0, 1, 2, 3, 5, log2n + 1}) {
          if (v == LargeKernel::thomas && k > 0) continue;
          Settings s;
          s.variant = v;
          s.k = k;
          s.periodic = periodic;
          const Failure f = run(s, p, u, k == 2);
          ASSERT_FALSE(f.failed()) << describe(s, n, periodic) << ": pivot failure at row " << f.row;
          EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol) << describe(s, n, periodic);
        }
    }
}

TYPED_TEST(LargeHost, PartitionChunksLanesTailsRecursion) {
  using T = TypeParam;
  const int w = adi::cpu::large::simd_width(sizeof(T));
  std::vector<T> u;
  std::vector<std::int64_t> sizes = tl::sizes_upto(15);
  for (std::int64_t n : {31, 33, 255, 257, 20001}) sizes.push_back(n);
  for (bool periodic : {false, true})
    for (std::int64_t n : sizes) {
      auto p = tl::make<T>(n, periodic, 101 + unsigned(n));
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      for (int chunk : {w, 2 * w, 8 * w})
        for (int lanes : {1, w, 2 * w, 4 * w}) {
          if (chunk < 8) continue;
          Settings s;
          s.variant = LargeKernel::partition;
          s.chunk = chunk;
          s.lanes = lanes;
          s.periodic = periodic;
          const Failure f = run(s, p, u, lanes == 2 * w);
          ASSERT_FALSE(f.failed()) << describe(s, n, periodic) << ": pivot failure at row " << f.row;
          EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol) << describe(s, n, periodic);
        }
    }
}

TYPED_TEST(LargeHost, DefaultsOnAMillionRows) {
  using T = TypeParam;
  const std::int64_t n = (std::int64_t(1) << 20) + 3;
  std::vector<T> u;
  for (bool periodic : {false, true}) {
    auto p = tl::make<T>(n, periodic, 7);
    p.x = tl::oracle(p, periodic);
    const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
    Settings s;
    s.variant = LargeKernel::partition;
    s.chunk = adi::cpu::large::default_chunk(sizeof(T));
    s.lanes = adi::cpu::large::default_lanes(sizeof(T));
    s.periodic = periodic;
    ASSERT_FALSE(run(s, p, u).failed());
    EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol) << describe(s, n, periodic);
  }
}

// The biggest size once (CI time): 2^22 doubles, partition with its defaults and P+TO at
// the analytic switch point.
TEST(LargeHostBig, FourMillionRowsDouble) {
  const std::int64_t n = std::int64_t(1) << 22;
  auto p = tl::make<double>(n, false, 3);
  p.x = tl::oracle(p, false);
  const double tol = tl::bound<double>(tl::thomas_error(p, false));
  std::vector<double> u;
  Settings s;
  s.variant = LargeKernel::partition;
  s.chunk = adi::cpu::large::default_chunk(8);
  s.lanes = adi::cpu::large::default_lanes(8);
  ASSERT_FALSE(run(s, p, u).failed());
  EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol);
  s.variant = LargeKernel::pcr_thomas_overlapped;
  s.k = adi::large::analytic_switch_point(n, 2);
  ASSERT_FALSE(run(s, p, u).failed());
  EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol);
}

// A zero pivot planted at row r (a_r = b_r = 0 makes the pivot of row r exactly zero in
// every sweep that eliminates downwards) is reported at r.
TYPED_TEST(LargeHost, ZeroPivotReportedAtItsRow) {
  using T = TypeParam;
  const int w = adi::cpu::large::simd_width(sizeof(T));
  const std::int64_t n = 5000;
  std::vector<T> u;
  for (std::int64_t r : {std::int64_t(37), std::int64_t(2501), n - 2}) {
    auto p = tl::make<T>(n, false, 5);
    p.a[r] = 0;
    p.b[r] = 0;
    for (int lanes : {1, w}) {
      Settings s;
      s.variant = LargeKernel::partition;
      s.chunk = 4 * w;
      s.lanes = lanes;
      const Failure f = run(s, p, u);
      // Row r is the first row of its chunk only if r % chunk == 0; 37, 2501, 4998 are not.
      EXPECT_EQ(f.row, r) << "partition lanes=" << lanes << " stage " << f.stage;
    }
    for (LargeKernel v : {LargeKernel::thomas, LargeKernel::pcr_thomas, LargeKernel::pcr_thomas_overlapped,
                           LargeKernel::shuffled_pcr_thomas}) {
      Settings s;
      s.variant = v;
      s.k = 2;
      const Failure f = run(s, p, u);
      EXPECT_EQ(f.row, r) << adi::large_kernel_name(v) << " stage " << f.stage;
    }
  }
}

// A pivot at a chunk's first row only enters the reduced system; it is still reported.
TYPED_TEST(LargeHost, ZeroPivotAtChunkStartFails) {
  using T = TypeParam;
  const int w = adi::cpu::large::simd_width(sizeof(T));
  const std::int64_t n = 5000, r = 8 * w * 3;
  auto p = tl::make<T>(n, false, 9);
  p.a[r] = 0;
  p.b[r] = 0;
  p.c[r] = 0;  // row r is all zero: singular
  std::vector<T> u;
  Settings s;
  s.variant = LargeKernel::partition;
  s.chunk = 8 * w;
  s.lanes = w;
  const Failure f = run(s, p, u);
  ASSERT_TRUE(f.failed());
  EXPECT_NEAR(double(f.row), double(r), 8.0 * w) << f.stage;
}

TYPED_TEST(LargeHost, TinyPivotOnlyWithTolerance) {
  using T = TypeParam;
  const int w = adi::cpu::large::simd_width(sizeof(T));
  const std::int64_t n = 3000, r = 1234;
  auto p = tl::make<T>(n, false, 11);
  p.a[r] = 0;
  p.b[r] = T(1e-6);
  p.c[r] = T(0.5);
  std::vector<T> u;
  for (LargeKernel v : {LargeKernel::thomas, LargeKernel::partition}) {
    Settings s;
    s.variant = v;
    s.chunk = 4 * w;
    s.lanes = w;
    // Without a tolerance the pivot itself passes, but the next row's growth |a c*| (the
    // stability check of solvers/common/thomas_check.hpp) gives it away.
    const Failure f = run(s, p, u);
    EXPECT_TRUE(f.failed()) << adi::large_kernel_name(v);
    EXPECT_NEAR(double(f.row), double(r + 1), 1.0) << adi::large_kernel_name(v);
    s.tolerance = 1e-3;
    EXPECT_EQ(run(s, p, u).row, r) << adi::large_kernel_name(v);
  }
}

TEST(LargeHostSwitchPoint, PaperFormula) {
  // 48 cores (the paper's machine): 4.25, 2.5, 1.75, 1.5, 1.5, 1.75 x n for k = 1..6.
  EXPECT_EQ(adi::large::analytic_switch_point(std::int64_t(1) << 26, 48), 4);
  // 16 cores: k = 3 (1.75 + 1) ties k = 2 (1.5 + 2 = 3.5)? 12/16 k + 8/2^k ceil(2^k/16):
  // k=1 4.75, k=2 3.5, k=3 3.25, k=4 3.5 -> 3.
  EXPECT_EQ(adi::large::analytic_switch_point(std::int64_t(1) << 26, 16), 3);
  // 2 cores: k = 1 (10 n) against k = 2 (16 n).
  EXPECT_EQ(adi::large::analytic_switch_point(std::int64_t(1) << 23, 2), 1);
  EXPECT_EQ(adi::large::analytic_switch_point(5, 64), 2);  // bounded by 2^k <= n
}

}  // namespace
