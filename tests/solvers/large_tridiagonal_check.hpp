#pragma once
// Shared by the large-system tests (host kernels, CUDA kernels, public API): random
// diagonally dominant systems, a long-double Thomas / Sherman-Morrison oracle, and the
// error criterion "within 10x of plain Thomas in the same precision".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "solvers/common/partition_large_math.hpp"
#include "tests/solvers/pivoting_cases.hpp"

namespace adi::test_large {

template <class T>
struct Problem {
  std::int64_t n = 0;
  std::vector<T> a, b, c, d;
  std::vector<long double> x;  // the oracle's solution
};

// a, c uniform in (-1, 1); |b| = |a| + |c| + margin, margin in [lo, lo + 1), random sign.
// Non-periodic systems get NaN in a[0] and c[n-1]: they are not part of the system.
template <class T>
Problem<T> make(std::int64_t n, bool periodic, unsigned seed, double margin_lo = 0.25) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), m(margin_lo, margin_lo + 1.0);
  Problem<T> p;
  p.n = n;
  p.a.resize(n);
  p.b.resize(n);
  p.c.resize(n);
  p.d.resize(n);
  for (std::int64_t i = 0; i < n; ++i) {
    p.a[i] = static_cast<T>(u(g));
    p.c[i] = static_cast<T>(u(g));
    const double s = u(g) < 0 ? -1.0 : 1.0;
    p.b[i] = static_cast<T>(s * (std::fabs(double(p.a[i])) + std::fabs(double(p.c[i])) + m(g)));
    p.d[i] = static_cast<T>(u(g) * 4.0);
  }
  if (!periodic) {
    p.a[0] = std::numeric_limits<T>::quiet_NaN();
    p.c[n - 1] = std::numeric_limits<T>::quiet_NaN();
  }
  return p;
}

// The oracle: Thomas (Sherman-Morrison when periodic) in long double on the T values.
template <class T>
std::vector<long double> oracle(const Problem<T>& p, bool periodic) {
  using L = long double;
  const std::int64_t n = p.n;
  std::vector<L> a(n), b(n), c(n), d(n), x(n), cp(n), z(n);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = (i == 0 && !periodic) ? 0 : L(p.a[i]);
    b[i] = p.b[i];
    c[i] = (i == n - 1 && !periodic) ? 0 : L(p.c[i]);
    d[i] = p.d[i];
  }
  const std::int64_t bad = adi::large::solve_direct<L>(n, a.data(), b.data(), c.data(), d.data(), x.data(), cp.data(),
                                                       z.data(), periodic, L(0));
  EXPECT_LT(bad, 0) << "the oracle met a bad pivot; the test's system is not usable";
  return x;
}

// The oracle of a system Thomas cannot take (a tiny pivot: the unsafe cases of the large plan's
// check): the pivoting tests' long-double partial-pivoting solve (gtsv's elimination,
// test_pivoting::exact_solve) on the T values. Not periodic.
template <class T>
std::vector<long double> pivoting_oracle(const Problem<T>& p) {
  using L = long double;
  const std::int64_t n = p.n;
  const std::size_t rows = static_cast<std::size_t>(n);
  std::vector<L> a(rows), b(rows), c(rows), d(rows), x;
  for (std::int64_t i = 0; i < n; ++i) {
    a[std::size_t(i)] = i == 0 ? L(0) : L(p.a[std::size_t(i)]);
    b[std::size_t(i)] = p.b[std::size_t(i)];
    c[std::size_t(i)] = i == n - 1 ? L(0) : L(p.c[std::size_t(i)]);
    d[std::size_t(i)] = p.d[std::size_t(i)];
  }
  EXPECT_TRUE(adi::test_pivoting::exact_solve<L>(n, a, b, c, d, false, x)) << "the pivoting oracle met a zero pivot";
  return x;
}

// max |u - x| / max |x|.
template <class T>
double rel_error(const std::vector<long double>& x, const T* u, std::int64_t n) {
  long double e = 0, s = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const long double v = u[i];
    if (!(v == v)) return std::numeric_limits<double>::infinity();
    e = std::max(e, std::fabs(v - x[i]));
    s = std::max(s, std::fabs(x[i]));
  }
  return double(e / std::max(s, (long double)1e-300));
}

// What plain Thomas in T achieves on the same system (the yardstick of "within 10x").
template <class T>
double thomas_error(const Problem<T>& p, bool periodic) {
  const std::int64_t n = p.n;
  std::vector<T> x(n), cp(n), z(n);
  adi::large::solve_direct<T>(n, p.a.data(), p.b.data(), p.c.data(), p.d.data(), x.data(), cp.data(), z.data(),
                              periodic, T(0));
  if (p.x.empty()) return rel_error(oracle(p, periodic), x.data(), n);
  return rel_error(p.x, x.data(), n);
}

// The bound a fast solver must meet: 10x Thomas's error, with a floor of a few ulps
// (Thomas is sometimes exact to the last bit on small systems).
template <class T>
double bound(double thomas_err) {
  return 10.0 * std::max(thomas_err, 8.0 * double(std::numeric_limits<T>::epsilon()));
}

inline std::vector<std::int64_t> sizes_upto(int kmax) {
  std::vector<std::int64_t> s = {1, 2, 3};
  for (int k = 3; k <= kmax; k += 3) {
    const std::int64_t p = std::int64_t(1) << k;
    s.push_back(p - 1);
    s.push_back(p);
    s.push_back(p + 1);
  }
  return s;
}

}  // namespace adi::test_large
