// adi::LargeTridiagonalPlan on inputs that are NOT diagonally dominant, against a
// partial-pivoting reference (the algorithm of LAPACK's gtsv: row interchange when the
// sub-diagonal entry is larger than the pivot; the tests do not link LAPACK, so it is
// written out here in long double as the oracle and in T as the yardstick).
//  - Symmetric positive definite but non-dominant systems (A = L L^T, L bidiagonal):
//    elimination without pivoting is stable for them, so every variant (host and CUDA)
//    must be within 10x of the pivoting solver's own error in the same precision.
//  - Systems that need a row interchange (a zero pivot in the first row, a tiny one
//    inside): the no-pivoting solvers refuse with SingularSystem naming the row (with
//    pivot_tolerance for the tiny one), where the pivoting reference solves them.
// The dominance the solvers need is stated in adi/large_tridiagonal.hpp and
// docs/large_tridiagonal.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/large_tridiagonal.hpp"
#include "gpu_skip.hpp"
#include "tests/solvers/large_tridiagonal_check.hpp"

namespace {

namespace tl = adi::test_large;
using adi::LargeTridiagonalOptions;
using adi::LargeTridiagonalPlan;
using adi::LargeKernel;

// Gaussian elimination with partial pivoting on a tridiagonal system (gtsv): returns
// false on an exactly singular matrix. Rows as in adi: a[i] u[i-1] + b[i] u[i] + c[i] u[i+1].
template <class R, class T>
bool gtsv(std::int64_t n, const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& c,
          const std::vector<T>& d, std::vector<R>& x) {
  std::vector<R> dl(n), dg(n), du(n), du2(n, R(0)), r(n);
  for (std::int64_t i = 0; i < n; ++i) {
    dl[i] = i == 0 ? R(0) : R(a[i]);
    dg[i] = R(b[i]);
    du[i] = i == n - 1 ? R(0) : R(c[i]);
    r[i] = R(d[i]);
  }
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    const R sub = dl[i + 1];
    if (std::fabs(dg[i]) >= std::fabs(sub)) {  // no interchange
      if (dg[i] == R(0)) return false;
      const R m = sub / dg[i];
      dg[i + 1] -= m * du[i];
      r[i + 1] -= m * r[i];
    } else {  // interchange rows i and i+1
      const R m = dg[i] / sub;
      dg[i] = sub;
      const R t = dg[i + 1];
      dg[i + 1] = du[i] - m * t;
      if (i + 2 < n) {
        du2[i] = du[i + 1];
        du[i + 1] = -m * du[i + 1];
      }
      du[i] = t;
      const R ri = r[i];
      r[i] = r[i + 1];
      r[i + 1] = ri - m * r[i + 1];
    }
  }
  if (dg[n - 1] == R(0)) return false;
  x.assign(n, R(0));
  for (std::int64_t i = n - 1; i >= 0; --i) {
    R s = r[i];
    if (i + 1 < n) s -= du[i] * x[i + 1];
    if (i + 2 < n) s -= du2[i] * x[i + 2];
    x[i] = s / dg[i];
  }
  return true;
}

// A = L L^T with L lower bidiagonal, diagonal in [1, 2], sub-diagonal in [-1.2, 1.2]:
// SPD, well conditioned (|l_{i+1,i} / l_ii| < 1.2, mostly far less), and about one row in
// eight is not diagonally dominant (|a| + |c| up to 4.8 against b down to 1).
template <class T>
tl::Problem<T> spd_nondominant(std::int64_t n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> diag(1.0, 2.0), sub(-1.2, 1.2), rhs(-4.0, 4.0);
  std::vector<double> l(n), m(n, 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    l[i] = diag(g);
    if (i > 0) m[i] = sub(g);
  }
  tl::Problem<T> p;
  p.n = n;
  p.a.assign(n, std::numeric_limits<T>::quiet_NaN());
  p.c.assign(n, std::numeric_limits<T>::quiet_NaN());
  p.b.resize(n);
  p.d.resize(n);
  for (std::int64_t i = 0; i < n; ++i) {
    p.b[i] = static_cast<T>(l[i] * l[i] + m[i] * m[i]);
    if (i > 0) p.a[i] = static_cast<T>(m[i] * l[i - 1]);
    if (i + 1 < n) p.c[i] = static_cast<T>(m[i + 1] * l[i]);
    p.d[i] = static_cast<T>(rhs(g));
  }
  return p;
}

template <class T>
std::int64_t non_dominant_rows(const tl::Problem<T>& p) {
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < p.n; ++i) {
    const double off = (i > 0 ? std::fabs(double(p.a[i])) : 0.0) + (i + 1 < p.n ? std::fabs(double(p.c[i])) : 0.0);
    k += std::fabs(double(p.b[i])) < off;
  }
  return k;
}

// The oracle (pivoting, long double) and the yardstick: the pivoting solver's error in T.
template <class T>
double pivoting_yardstick(tl::Problem<T>& p) {
  std::vector<long double> x;
  EXPECT_TRUE(gtsv<long double>(p.n, p.a, p.b, p.c, p.d, x));
  p.x = x;
  std::vector<T> xt;
  EXPECT_TRUE(gtsv<T>(p.n, p.a, p.b, p.c, p.d, xt));
  return tl::bound<T>(tl::rel_error(p.x, xt.data(), p.n));
}

template <class T>
class LargeNonDominant : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LargeNonDominant, Types);

TYPED_TEST(LargeNonDominant, SpdSystemsMatchThePivotingSolver) {
  using T = TypeParam;
  const adi::Executor host = adi::Executor::host(2);
  for (std::int64_t n : {std::int64_t(1), std::int64_t(2), std::int64_t(3), std::int64_t(1023), std::int64_t(4097),
                         (std::int64_t(1) << 17) + 1}) {
    auto p = spd_nondominant<T>(n, 17u + unsigned(n));
    if (n >= 1000) EXPECT_GT(non_dominant_rows(p), n / 10) << "the test system should be far from dominant";
    const double tol = pivoting_yardstick(p);
    struct Run {
      LargeKernel v;
      int k;
    };
    for (const Run r : {Run{LargeKernel::automatic, -1}, Run{LargeKernel::thomas, -1},
                        Run{LargeKernel::partition, -1}, Run{LargeKernel::pcr_thomas, 1},
                        Run{LargeKernel::pcr_thomas, 3}, Run{LargeKernel::pcr_thomas_overlapped, 2},
                        Run{LargeKernel::shuffled_pcr_thomas, 3}}) {
      LargeTridiagonalOptions o;
      o.kernel = r.v;
      o.pcr_levels = r.k;
      std::vector<T> u(n, std::numeric_limits<T>::quiet_NaN());
      LargeTridiagonalPlan<T>(host, n, 1, 0, o).solve(adi::Bands<T>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(),
                                                      u.data());
      EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol) << adi::large_kernel_name(r.v) << " k=" << r.k << " n=" << n;
    }
  }
}

// The same systems on the device (the partition kernel).
TYPED_TEST(LargeNonDominant, SpdSystemsMatchThePivotingSolverCuda) {
  using T = TypeParam;
  ADI_REQUIRE_CUDA();
  const adi::Executor dev = adi::Executor::cuda();
  for (std::int64_t n : {std::int64_t(1), std::int64_t(2), std::int64_t(3), std::int64_t(1023), std::int64_t(4097),
                         (std::int64_t(1) << 17) + 1}) {
    auto p = spd_nondominant<T>(n, 17u + unsigned(n));
    const double tol = pivoting_yardstick(p);
    adi::Array<T> a(n, dev), b(n, dev), c(n, dev), d(n, dev), u(n, dev);
    a.copy_from_host(p.a.data());
    b.copy_from_host(p.b.data());
    c.copy_from_host(p.c.data());
    d.copy_from_host(p.d.data());
    std::vector<T> h(n, std::numeric_limits<T>::quiet_NaN());
    u.copy_from_host(h.data());
    LargeTridiagonalPlan<T>(dev, n).solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
    u.copy_to_host(h.data());
    EXPECT_LE(tl::rel_error(p.x, h.data(), n), tol) << "CUDA partition n=" << n;
  }
}

// Rows that need an interchange: the pivoting reference solves the system, the solvers
// without pivoting report the row instead of returning garbage (on the host every variant,
// on the device the partition kernel). With the default pivoting (automatic) the host solves
// both systems.
template <class T>
void interchange_needed(const adi::Executor& ex) {
  const std::int64_t n = 5000;
  std::vector<long double> x;
  double yard = 0;
  auto expect_row = [&](const tl::Problem<T>& p, std::int64_t row, double tolerance, const adi::Executor& ex,
                        LargeKernel v) {
    LargeTridiagonalOptions o;
    o.kernel = v;
    o.pcr_levels = 2;
    o.pivot_tolerance = tolerance;
    o.pivoting = adi::Pivoting::none;  // the non-pivoting solvers' report (automatic would pivot)
    std::vector<T> hu(n);
    try {
      adi::Array<T> u(ex.is_host() ? 0 : n, ex);
      if (ex.is_host()) {
        LargeTridiagonalPlan<T>(ex, n, 1, 0, o).solve(adi::Bands<T>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(),
                                                      hu.data());
      } else {
        adi::Array<T> a(n, ex), b(n, ex), c(n, ex), d(n, ex);
        a.copy_from_host(p.a.data());
        b.copy_from_host(p.b.data());
        c.copy_from_host(p.c.data());
        d.copy_from_host(p.d.data());
        LargeTridiagonalPlan<T>(ex, n, 1, 0, o).solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
      }
      // The partition eliminates towards each chunk's first and last rows, which become
      // the interface unknowns: a zero there is no pivot of its, and the answer must be
      // right. Every other variant eliminates row by row and must refuse.
      if (v == LargeKernel::partition) {
        if (!ex.is_host()) u.copy_to_host(hu.data());
        EXPECT_LE(tl::rel_error(x, hu.data(), n), yard) << "partition on " << ex.name() << " without SingularSystem";
      } else {
        ADD_FAILURE() << adi::large_kernel_name(v) << " on " << ex.name() << ": no SingularSystem for row " << row;
      }
    } catch (const adi::SingularSystem& e) {
      // The host names the row; the device names it, or a row of the same chunk when the
      // pivot belongs to the reduced interface system (chunks are at most 32 rows).
      const std::string w = e.what();
      const auto at = w.find("row ");
      ASSERT_NE(at, std::string::npos) << w;
      const long long got = std::stoll(w.substr(at + 4));
      if (ex.is_host())
        EXPECT_EQ(got, row) << adi::large_kernel_name(v) << ": " << w;
      else
        EXPECT_LE(std::llabs(got - row), 32) << w;
    }
  };

  // b[0] = 0: gtsv swaps rows 0 and 1; without pivoting the first pivot is zero.
  auto p = tl::make<T>(n, false, 31);
  p.b[0] = 0;
  yard = pivoting_yardstick(p);
  x = p.x;
  for (LargeKernel v : {LargeKernel::thomas, LargeKernel::partition, LargeKernel::pcr_thomas,
                         LargeKernel::pcr_thomas_overlapped, LargeKernel::shuffled_pcr_thomas})
    if (ex.is_host() || v == LargeKernel::partition) expect_row(p, 0, 0.0, ex, v);

  // A tiny pivot inside (row r: |b| = 1e-6 of its row, no coupling to the row above, so
  // the pivot is b[r] in every downward sweep): gtsv interchanges rows r and r+1; the
  // solvers report it when asked for a pivot tolerance.
  const std::int64_t r = 1234;
  auto q = tl::make<T>(n, false, 37);
  q.a[r] = 0;
  q.b[r] = T(1e-6);
  q.c[r] = T(0.5);
  q.a[r + 1] = T(1);
  yard = pivoting_yardstick(q);
  x = q.x;
  for (LargeKernel v : {LargeKernel::thomas, LargeKernel::partition})
    if (ex.is_host() || v == LargeKernel::partition) expect_row(q, r, 1e-3, ex, v);
  if (!ex.is_host()) return;

  // With the default pivoting (automatic) both systems are solved, to the pivoting
  // solver's accuracy (docs/pivoting.md), on the host by the variants that check growth.
  for (tl::Problem<T>* s : {&p, &q}) {
    const double y = pivoting_yardstick(*s);
    for (LargeKernel v : {LargeKernel::thomas, LargeKernel::partition}) {  // pcr_*: zero pivots only
      LargeTridiagonalOptions o;
      o.kernel = v;
      o.pcr_levels = 2;
      std::vector<T> hu(n);
      LargeTridiagonalPlan<T>(adi::Executor::host(2), n, 1, 0, o)
          .solve(adi::Bands<T>{s->a.data(), s->b.data(), s->c.data()}, s->d.data(), hu.data());
      EXPECT_LE(tl::rel_error(s->x, hu.data(), n), y) << adi::large_kernel_name(v) << " with pivoting automatic";
    }
  }
}

TYPED_TEST(LargeNonDominant, InterchangeNeededIsReported) { interchange_needed<TypeParam>(adi::Executor::host(2)); }

TYPED_TEST(LargeNonDominant, InterchangeNeededIsReportedCuda) {
  ADI_REQUIRE_CUDA();
  interchange_needed<TypeParam>(adi::Executor::cuda());
}

}  // namespace
