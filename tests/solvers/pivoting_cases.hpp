#pragma once
#include <cstdio>
// Shared by the host and CUDA pivoting tests: well-conditioned systems that are NOT
// diagonally dominant (Thomas without pivoting loses digits on them), the layouts the
// tridiagonal plan takes, and LAPACK as the yardstick: every solve must be within 10x of
// LAPACKE ?gtsv's error (?gesv on the dense matrix for periodic lines), both measured
// against a long double partial-pivoting solve of the same (rounded) system.
#if defined(ADI_TEST_HAVE_LAPACKE)
#include <lapacke.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adi/layout.hpp"

namespace adi::test_pivoting {

// heat (stop 34): the implicit heat operator b = 1 + 2r, a = c = -r with r = 1e4, dominant but
// with coefficients far from 1 (the partition route's pivot test once depended on the scale).
enum class Family { tiny_diagonal, random_signs, toeplitz, dominant, heat };

inline const char* family_name(Family f) {
  switch (f) {
    case Family::tiny_diagonal: return "tiny_diagonal";
    case Family::random_signs: return "random_signs";
    case Family::toeplitz: return "toeplitz";
    case Family::heat: return "heat";
    default: return "dominant";
  }
}

// Row i of one line: a, b, c.
template <class T>
void row_coefficients(Family f, std::mt19937_64& rng, T& a, T& b, T& c) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), mag(0.5, 1.0);
  auto sign = [&]() { return u(rng) < 0 ? -1.0 : 1.0; };
  switch (f) {
    case Family::tiny_diagonal:  // |b| ~ 1e-8, |a|, |c| in [0.5, 1]: pivoting is a must
      a = T(sign() * mag(rng));
      c = T(sign() * mag(rng));
      b = T(1e-8 * u(rng));
      break;
    case Family::random_signs:  // every entry uniform in [-1, 1]
      a = T(u(rng));
      b = T(u(rng));
      c = T(u(rng));
      break;
    case Family::toeplitz:  // b = 1, a = c = 0.6 (cond ~ 550 at n = 257): indefinite
      a = T(0.6);
      b = T(1);
      c = T(0.6);
      break;
    case Family::heat:  // b = 1 + 2r, a = c = -r, r = 1e4 (exact in fp32)
      a = T(-1e4);
      b = T(20001);
      c = T(-1e4);
      break;
    default:  // diagonally dominant, random signs
      a = T(u(rng));
      c = T(u(rng));
      b = T(sign() * (std::fabs(double(a)) + std::fabs(double(c)) + 0.5 + mag(rng)));
  }
}

// x = A^{-1} d in R by Gaussian elimination with partial pivoting on the dense matrix
// (periodic: ?gesv's algorithm) or gtsv's tridiagonal elimination (not periodic). Returns
// false when singular. In long double it is the oracle; in T the stand-in for LAPACK where
// LAPACKE is not installed (the same algorithms).
template <class R>
bool exact_solve(std::int64_t n, const std::vector<R>& a, const std::vector<R>& b, const std::vector<R>& c,
                 const std::vector<R>& d, bool periodic, std::vector<R>& x) {
  x.assign(n, 0);
  if (periodic) {
    std::vector<R> m(n * n, 0), r = d;
    for (std::int64_t i = 0; i < n; ++i) {
      m[i * n + (i + n - 1) % n] += a[i];
      m[i * n + i] += b[i];
      m[i * n + (i + 1) % n] += c[i];
    }
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t p = k;
      for (std::int64_t i = k + 1; i < n; ++i)
        if (std::fabs(m[i * n + k]) > std::fabs(m[p * n + k])) p = i;
      if (m[p * n + k] == 0) return false;
      if (p != k) {
        for (std::int64_t j = 0; j < n; ++j) std::swap(m[k * n + j], m[p * n + j]);
        std::swap(r[k], r[p]);
      }
      for (std::int64_t i = k + 1; i < n; ++i) {
        const R f = m[i * n + k] / m[k * n + k];
        if (f == 0) continue;
        for (std::int64_t j = k; j < n; ++j) m[i * n + j] -= f * m[k * n + j];
        r[i] -= f * r[k];
      }
    }
    for (std::int64_t i = n - 1; i >= 0; --i) {
      R s = r[i];
      for (std::int64_t j = i + 1; j < n; ++j) s -= m[i * n + j] * x[j];
      x[i] = s / m[i * n + i];
    }
    return true;
  }
  std::vector<R> dl(a.begin() + 1, a.end()), dd = b, du(c.begin(), c.end() - 1), du2(n, 0), r = d;
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    if (std::fabs(dd[i]) >= std::fabs(dl[i])) {
      if (dd[i] == 0) return false;
      const R f = dl[i] / dd[i];
      dd[i + 1] -= f * du[i];
      r[i + 1] -= f * r[i];
      if (i + 2 < n) du2[i] = 0;
    } else {
      const R f = dd[i] / dl[i];
      dd[i] = dl[i];
      const R t = dd[i + 1];
      dd[i + 1] = du[i] - f * t;
      du[i] = t;
      if (i + 2 < n) {
        du2[i] = du[i + 1];
        du[i + 1] = -f * du[i + 1];
      }
      std::swap(r[i], r[i + 1]);
      r[i + 1] -= f * r[i];
    }
  }
  if (dd[n - 1] == 0) return false;
  for (std::int64_t i = n - 1; i >= 0; --i) {
    R s = r[i];
    if (i + 1 < n) s -= du[i] * x[i + 1];
    if (i + 2 < n) s -= du2[i] * x[i + 2];
    x[i] = s / dd[i];
  }
  return true;
}

#if defined(ADI_TEST_HAVE_LAPACKE)
// LAPACK's own answer in T: ?gtsv (not periodic) or ?gesv on the dense matrix.
inline bool lapack_solve(std::int64_t n, std::vector<double> a, std::vector<double> b, std::vector<double> c,
                         std::vector<double> d, bool periodic, std::vector<double>& x) {
  if (periodic) {
    std::vector<double> m(n * n, 0);
    for (std::int64_t i = 0; i < n; ++i) {
      m[i * n + (i + n - 1) % n] += a[i];
      m[i * n + i] += b[i];
      m[i * n + (i + 1) % n] += c[i];
    }
    std::vector<lapack_int> piv(n);
    if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, 1, m.data(), n, piv.data(), d.data(), 1) != 0) return false;
  } else {
    std::vector<double> dl(a.begin() + 1, a.end()), du(c.begin(), c.end() - 1);
    if (LAPACKE_dgtsv(LAPACK_COL_MAJOR, n, 1, dl.data(), b.data(), du.data(), d.data(), n) != 0) return false;
  }
  x = d;
  return true;
}
inline bool lapack_solve(std::int64_t n, std::vector<float> a, std::vector<float> b, std::vector<float> c,
                         std::vector<float> d, bool periodic, std::vector<float>& x) {
  if (periodic) {
    std::vector<float> m(n * n, 0);
    for (std::int64_t i = 0; i < n; ++i) {
      m[i * n + (i + n - 1) % n] += a[i];
      m[i * n + i] += b[i];
      m[i * n + (i + 1) % n] += c[i];
    }
    std::vector<lapack_int> piv(n);
    if (LAPACKE_sgesv(LAPACK_ROW_MAJOR, n, 1, m.data(), n, piv.data(), d.data(), 1) != 0) return false;
  } else {
    std::vector<float> dl(a.begin() + 1, a.end()), du(c.begin(), c.end() - 1);
    if (LAPACKE_sgtsv(LAPACK_COL_MAJOR, n, 1, dl.data(), b.data(), du.data(), d.data(), n) != 0) return false;
  }
  x = d;
  return true;
}
#else
// Without LAPACKE: the same algorithms (gtsv, dense GEPP) written out, in T.
template <class T>
bool lapack_solve(std::int64_t n, const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& c,
                  const std::vector<T>& d, bool periodic, std::vector<T>& x) {
  return exact_solve<T>(n, a, b, c, d, periodic, x);
}
#endif

template <class X, class Y>
double relative_error(const std::vector<X>& x, const std::vector<Y>& ref) {
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const long double e = static_cast<long double>(x[i]) - static_cast<long double>(ref[i]);
    if (std::isnan(static_cast<double>(x[i]))) return std::numeric_limits<double>::infinity();
    num = std::max(num, std::fabs(e));
    den = std::max(den, std::fabs(static_cast<long double>(ref[i])));
  }
  return den > 0 ? static_cast<double>(num / den) : static_cast<double>(num);
}

// The host arrays of one case: coefficient, right-hand side and output arrays of `span`
// values (u poisoned with NaN), the lines of the layout filled from `family`.
template <class T>
struct Case {
  LineSet lines;
  bool periodic = false;
  bool shared = false;
  std::vector<T> a, b, c, d, u;
};

template <class T>
Case<T> make_case(const LineSet& l, Family f, bool periodic, bool shared, std::uint64_t seed) {
  Case<T> k;
  k.lines = l;
  k.periodic = periodic;
  k.shared = shared;
  const std::size_t span = static_cast<std::size_t>(l.span());
  const std::size_t bspan = shared ? static_cast<std::size_t>(l.n) : span;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  k.a.assign(bspan, nan);
  k.b.assign(bspan, nan);
  k.c.assign(bspan, nan);
  k.d.assign(span, nan);
  k.u.assign(span, nan);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (index_t line = 0; line < l.lines(); ++line) {
    const index_t o = l.offset(line);
    for (index_t i = 0; i < l.n; ++i) {
      const std::size_t e = static_cast<std::size_t>(o + i * l.stride);
      k.d[e] = T(u(rng));
      if (shared && line > 0) continue;
      const std::size_t be = shared ? static_cast<std::size_t>(i) : e;
      row_coefficients(f, rng, k.a[be], k.b[be], k.c[be]);
      if (!periodic && i == 0) k.a[be] = nan;  // never read into the result
      if (!periodic && i == l.n - 1) k.c[be] = nan;
    }
  }
  return k;
}

// Skeel's condition number of A at x, || |A^-1| |A| |x| ||_inf / ||x||_inf, in long double
// (A^-1 by Gauss-Jordan with partial pivoting on the dense matrix: O(n^3), so n <= 600).
// eps * cond(A, x) is the first-order forward error of a solve whose backward error is one
// rounding per coefficient, |dA| <= eps |A| (Higham, "Accuracy and Stability", 7.2): the
// error a backward-stable solver such as LAPACK's gtsv is allowed up to a small constant.
inline double skeel_condition(std::int64_t n, const std::vector<long double>& a, const std::vector<long double>& b,
                              const std::vector<long double>& c, const std::vector<long double>& x, bool periodic) {
  std::vector<long double> m(n * n, 0), inv(n * n, 0);
  auto put = [&](std::int64_t i, std::int64_t j, long double v) { m[i * n + j] += v; };
  for (std::int64_t i = 0; i < n; ++i) {
    inv[i * n + i] = 1;
    put(i, i, b[i]);
    if (i > 0 || periodic) put(i, (i + n - 1) % n, a[i]);
    if (i + 1 < n || periodic) put(i, (i + 1) % n, c[i]);
  }
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t p = k;
    for (std::int64_t i = k + 1; i < n; ++i)
      if (std::fabs(m[i * n + k]) > std::fabs(m[p * n + k])) p = i;
    if (m[p * n + k] == 0) return std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < n; ++j) {
      std::swap(m[k * n + j], m[p * n + j]);
      std::swap(inv[k * n + j], inv[p * n + j]);
    }
    const long double r = 1 / m[k * n + k];
    for (std::int64_t j = 0; j < n; ++j) {
      m[k * n + j] *= r;
      inv[k * n + j] *= r;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const long double f = m[i * n + k];
      if (i == k || f == 0) continue;
      for (std::int64_t j = 0; j < n; ++j) {
        m[i * n + j] -= f * m[k * n + j];
        inv[i * n + j] -= f * inv[k * n + j];
      }
    }
  }
  std::vector<long double> y(n);  // |A| |x|
  for (std::int64_t i = 0; i < n; ++i) {
    y[i] = std::fabs(b[i] * x[i]);
    if (i > 0 || periodic) y[i] += std::fabs(a[i] * x[(i + n - 1) % n]);
    if (i + 1 < n || periodic) y[i] += std::fabs(c[i] * x[(i + 1) % n]);
  }
  long double zmax = 0, xmax = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    long double z = 0;
    for (std::int64_t j = 0; j < n; ++j) z += std::fabs(inv[i * n + j]) * y[j];
    zmax = std::max(zmax, z);
    xmax = std::max(xmax, std::fabs(x[i]));
  }
  return xmax > 0 ? static_cast<double>(zmax / xmax) : 0.0;
}

// Skeel's condition number of a non-periodic line of any length, estimated in O(n): || |A^-1| g ||
// with g = |A| |x| is || A^-1 diag(g) ||_inf = || diag(g) A^-T ||_1, which Hager's 1-norm estimator
// with Higham's refinements (LAPACK's dlacn2: at most 5 steps, and the alternating-sign test
// vector) estimates from a few solves with A and A^T (gtsv in long double). The estimate is a
// lower bound, so a yardstick built on it is stricter than the exact one. Stop 34: for lines
// longer than 600 rows, where the O(n^3) skeel_condition is out of reach (fp32 Toeplitz b = 1,
// a = c = 0.6 of 4097 .. 2^20 rows: the exact partial-pivoting elimination, LAPACK's pivot
// sequence in the core's arithmetic, comes out at 9-16x LAPACK's error, 0.75 eps cond(A, x)).
inline double skeel_condition_estimate(std::int64_t n, const std::vector<long double>& a,
                                       const std::vector<long double>& b, const std::vector<long double>& c,
                                       const std::vector<long double>& x) {
  std::vector<long double> g(n), at(n, 0), ct(n, 0), y, w;
  long double xmax = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    g[i] = std::fabs(b[i] * x[i]) + (i > 0 ? std::fabs(a[i] * x[i - 1]) : 0) +
           (i + 1 < n ? std::fabs(c[i] * x[i + 1]) : 0);
    xmax = std::max(xmax, std::fabs(x[i]));
    if (i > 0) at[i] = c[i - 1];      // A^T: row i is (c_{i-1}, b_i, a_{i+1})
    if (i + 1 < n) ct[i] = a[i + 1];
  }
  // C v = diag(g) A^-T v, C^T v = A^-1 (g v).
  auto apply = [&](const std::vector<long double>& v, bool transposed, std::vector<long double>& out) {
    if (!transposed) {
      if (!exact_solve(n, at, b, ct, v, false, out)) return false;
      for (std::int64_t i = 0; i < n; ++i) out[i] *= g[i];
      return true;
    }
    std::vector<long double> gv(n);
    for (std::int64_t i = 0; i < n; ++i) gv[i] = g[i] * v[i];
    return exact_solve(n, a, b, c, gv, false, out);
  };
  auto norm1 = [](const std::vector<long double>& v) {
    long double s = 0;
    for (long double e : v) s += std::fabs(e);
    return s;
  };
  std::vector<long double> v(n, 1.0L / n);
  long double est = 0;
  std::int64_t last_j = -1;
  for (int step = 0; step < 5; ++step) {
    if (!apply(v, false, y)) return std::numeric_limits<double>::infinity();
    const long double e = norm1(y);
    if (step > 0 && e <= est) break;
    est = e;
    std::vector<long double> sg(n);
    for (std::int64_t i = 0; i < n; ++i) sg[i] = y[i] < 0 ? -1 : 1;
    if (!apply(sg, true, w)) return std::numeric_limits<double>::infinity();
    std::int64_t j = 0;
    long double ztx = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      if (std::fabs(w[i]) > std::fabs(w[j])) j = i;
      ztx += w[i] * v[i];
    }
    if (std::fabs(w[j]) <= ztx || j == last_j) break;
    last_j = j;
    std::fill(v.begin(), v.end(), 0.0L);
    v[j] = 1;
  }
  for (std::int64_t i = 0; i < n; ++i)  // Higham's alternating-sign test vector
    v[i] = (i % 2 ? -1 : 1) * (1 + static_cast<long double>(i) / std::max<std::int64_t>(n - 1, 1));
  if (apply(v, false, y)) est = std::max(est, 2 * norm1(y) / (3 * static_cast<long double>(n)));
  return xmax > 0 ? static_cast<double>(est / xmax) : 0.0;
}

// (worst adi error over the lines) / max(worst LAPACK error over the lines, 4 eps): two
// backward-stable solvers differ line by line by the luck of rounding (both ~ cond * eps),
// so the case's worst lines are compared. k.u holds adi's solution. Lines that LAPACK itself
// cannot solve to 1% in T (nearly singular in this precision) are left out, and counted in
// `skipped`.
//
// Shared bands: every line has the same matrix, so every line has the same LU factors and
// the same factorisation rounding; the lines differ only in d, and the worst of them is one
// draw of the rounding luck, not the worst of many. Measured (issue 23, fp64 random signs,
// n = 257, 1000 shared-band matrices): adi's error / LAPACK dgtsv's ranges 0.06 .. 26.6
// (geometric mean 0.96); an elimination with LAPACK's own arithmetic (divisions, unscaled
// U) ranges 0.04 .. 22; both stay within 0.5 / 0.85 eps cond(A, x). The device case
// that failed (seed 25700): adi 8.2e-14 = 0.18 eps cond(A, x), LAPACK 3.1e-15 = 0.007 eps
// cond (cond(A, x) = 2.0e3), the same pivot sequence. So where the ratio exceeds 10, the
// yardstick becomes what LAPACK's error analysis allows: eps * cond(A, x) of the worst line
// (Skeel's condition number, a backward error of one rounding per coefficient); the ratio
// is then worst / (eps cond(A, x) / 10), so "<= 10" still reads "within the yardstick".
// For n <= 600 the exact condition number (O(n^3)); beyond, non-periodic lines, its estimate
// (skeel_condition_estimate, a lower bound: stricter); the detail string says which yardstick.
template <class T>
double worst_ratio(const Case<T>& k, const std::vector<T>& u, std::string& detail, int* skipped = nullptr) {
  const LineSet& l = k.lines;
  double worst_adi = 0, worst_lapack = 0;
  index_t worst_line = -1;
  for (index_t line = 0; line < l.lines(); ++line) {
    const index_t o = l.offset(line);
    const std::int64_t n = l.n;
    std::vector<long double> la(n), lb(n), lc(n), ld(n), x;
    std::vector<T> ta(n), tb(n), tc(n), td(n), tx, ux(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t e = static_cast<std::size_t>(o + i * l.stride);
      const std::size_t be = k.shared ? static_cast<std::size_t>(i) : e;
      ta[i] = (!k.periodic && i == 0) ? T(0) : k.a[be];
      tb[i] = k.b[be];
      tc[i] = (!k.periodic && i == n - 1) ? T(0) : k.c[be];
      td[i] = k.d[e];
      la[i] = ta[i];
      lb[i] = tb[i];
      lc[i] = tc[i];
      ld[i] = td[i];
      ux[i] = u[e];
    }
    const bool solvable = exact_solve(n, la, lb, lc, ld, k.periodic, x) &&
                          lapack_solve(n, ta, tb, tc, td, k.periodic, tx);
    const double el = solvable ? relative_error(tx, x) : 1.0;
    if (!(el < 1e-2)) {
      if (skipped) ++*skipped;
      continue;
    }
    const double ea = relative_error(ux, x);
    worst_lapack = std::max(worst_lapack, el);
    if (!(ea <= worst_adi)) {
      worst_adi = std::isnan(ea) ? std::numeric_limits<double>::infinity() : ea;
      worst_line = line;
    }
  }
  const double eps = std::numeric_limits<T>::epsilon();
  char text[240];
  std::snprintf(text, sizeof text, "worst line %lld: adi error %.3g, LAPACK's worst %.3g", (long long)worst_line,
                worst_adi, worst_lapack);
  detail = text;
  const double ratio = worst_adi / std::max(worst_lapack, 4 * eps);
  const bool estimate = l.n > 600;
  if (!(ratio > 10.0) || worst_line < 0 || (estimate && k.periodic)) return ratio;
  // Beyond 10x LAPACK: measure against eps * cond(A, x) of the worst line (see above).
  const index_t o = l.offset(worst_line);
  const std::int64_t n = l.n;
  std::vector<long double> la(n), lb(n), lc(n), ld(n), x;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t e = static_cast<std::size_t>(o + i * l.stride);
    const std::size_t be = k.shared ? static_cast<std::size_t>(i) : e;
    la[i] = (!k.periodic && i == 0) ? 0 : k.a[be];
    lb[i] = k.b[be];
    lc[i] = (!k.periodic && i == n - 1) ? 0 : k.c[be];
    ld[i] = k.d[e];
  }
  if (!exact_solve(n, la, lb, lc, ld, k.periodic, x)) return ratio;
  const double cond =
      estimate ? skeel_condition_estimate(n, la, lb, lc, x) : skeel_condition(n, la, lb, lc, x, k.periodic);
  const double bound = eps * cond;
  std::snprintf(text, sizeof text,
                "worst line %lld: adi error %.3g, LAPACK's worst %.3g (%.3gx); beyond 10x, so against eps "
                "cond(A, x) = %.3g (cond %.3g%s): %.3g of it",
                (long long)worst_line, worst_adi, worst_lapack, ratio, bound, cond, estimate ? ", estimated" : "",
                worst_adi / bound);
  detail = text;
  return std::min(ratio, 10.0 * worst_adi / bound);
}

// X lines for the X-tile route's tests (tests/solvers/cpu/test_pivoting_xtile.cpp,
// tests/solvers/cuda/test_pivoting_xtile_cuda.cpp): layout 0, `count` contiguous lines; 1, about
// `count` X lines of a padded box (gaps between lines, offsets not n apart).
inline LineSet x_lines(int layout, index_t n, index_t count) {
  if (layout == 0) return to_lines(StridedLines::contiguous(n, count));
  const index_t ny = count < 3 ? count : 3, nz = (count + ny - 1) / ny;
  return to_lines(BoxLines{Box3{n, ny, nz, n + 3, (n + 3) * ny + 5}, Axis::x});
}

}  // namespace adi::test_pivoting
