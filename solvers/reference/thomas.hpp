#pragma once
// The reference: plain Thomas (paper algorithm 1) one line at a time, computed in
// double whatever T is, and Sherman-Morrison for periodic lines. Obviously correct,
// not fast: every fast kernel is tested against it. It is the test oracle, so it stays a
// separate plain fp64 implementation on purpose (divisions, no shared code with the
// kernels' core solvers/common/thomas_core.hpp): a mistake in the core cannot hide in the
// oracle too. Its partial pivoting does use solvers/common/pivoting_core.hpp (there is no
// other written-out form of it; tests/solvers/pivoting_cases.hpp checks that against LAPACK).
#include <cmath>
#include <vector>

#include "adi/base/layout.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/pivoting_core.hpp"

namespace adi::reference {

// Solves one line in double. a, b, c, d are read through get(i) callbacks so that
// shared and per-line coefficient arrays use the same code. Returns false on a zero
// or non-finite pivot.
template <class A, class B, class C, class D>
bool thomas_line(index_t n, A a, B b, C c, D d, std::vector<double>& x, std::vector<double>& cs) {
  x.assign(static_cast<std::size_t>(n), 0.0);
  cs.assign(static_cast<std::size_t>(n), 0.0);
  double piv = b(0);
  if (piv == 0.0 || !std::isfinite(piv)) return false;
  cs[0] = n > 1 ? c(0) / piv : 0.0;
  x[0] = d(0) / piv;
  for (index_t i = 1; i < n; ++i) {
    piv = b(i) - a(i) * cs[i - 1];
    if (piv == 0.0 || !std::isfinite(piv)) return false;
    cs[i] = i + 1 < n ? c(i) / piv : 0.0;
    x[i] = (d(i) - a(i) * x[i - 1]) / piv;
  }
  for (index_t i = n - 2; i >= 0; --i) x[i] -= cs[i] * x[i + 1];
  return true;
}

// Periodic line: a(0) couples row 0 to u[n-1], c(n-1) couples row n-1 to u[0].
// Sherman-Morrison with A = A' + v w^T, v = (gamma, 0.., c(n-1)), w = (1, 0.., a(0)/gamma).
template <class A, class B, class C, class D>
bool cyclic_line(index_t n, A a, B b, C c, D d, std::vector<double>& x) {
  std::vector<double> cs;
  if (n == 1) {
    const double s = a(0) + b(0) + c(0);
    if (s == 0.0 || !std::isfinite(s) || common::singular_self_coupled<double>(a(0), b(0), c(0))) return false;
    x.assign(1, d(0) / s);
    return true;
  }
  if (n == 2) {  // row 0: b0 u0 + (a0 + c0) u1; row 1: (a1 + c1) u0 + b1 u1
    const double m00 = b(0), m01 = a(0) + c(0), m10 = a(1) + c(1), m11 = b(1);
    const double det = m00 * m11 - m01 * m10;
    if (det == 0.0 || !std::isfinite(det)) return false;
    x = {(d(0) * m11 - m01 * d(1)) / det, (m00 * d(1) - m10 * d(0)) / det};
    return true;
  }
  const double gamma = -b(0);
  const double alpha = c(n - 1), beta = a(0);  // corner entries
  auto bm = [&](index_t i) {
    return i == 0 ? b(0) - gamma : i == n - 1 ? b(n - 1) - alpha * beta / gamma : b(i);
  };
  std::vector<double> y, z;
  if (!thomas_line(n, a, bm, c, d, y, cs)) return false;
  auto v = [&](index_t i) { return i == 0 ? gamma : i == n - 1 ? alpha : 0.0; };
  if (!thomas_line(n, a, bm, c, v, z, cs)) return false;
  const double wy = y[0] + beta / gamma * y[n - 1];
  const double wz = z[0] + beta / gamma * z[n - 1];
  const double den = 1.0 + wz;
  if (den == 0.0 || !std::isfinite(den) || common::singular_cyclic<double>(den, z[0], beta / gamma * z[n - 1]))
    return false;
  const double f = wy / den;
  x.resize(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) x[i] = y[i] - f * z[i];
  return true;
}

// Gaussian elimination with partial pivoting in double, with the cores of
// solvers/common/pivoting_core.hpp: LAPACK gtsv's elimination, and for periodic lines
// (n >= 3) the cyclic elimination that pivots like dense GEPP; n <= 2 periodic lines as
// cyclic_line. Returns false on a zero or non-finite pivot.
template <class A, class B, class C, class D>
bool pivoting_line(index_t n, A a, B b, C c, D d, bool periodic, std::vector<double>& x) {
  if (periodic && n <= 2) return cyclic_line(n, a, b, c, d, x);
  std::vector<double> u1(n), u2(n), us(n, 0.0), ul(n, 0.0), y(n);
  bool ok = true;
  auto check = [&](double r) { ok = ok && r != 0.0 && std::isfinite(r); };
  if (!periodic) {
    common::PivotRow<double> cur{b(0), n > 1 ? c(0) : 0.0, d(0)};
    auto store = [&](index_t i, const common::PivotOut<double>& o) {
      check(o.r);
      u1[i] = o.u1;
      u2[i] = o.u2;
      y[i] = o.y;
    };
    for (index_t i = 1; i < n; ++i) store(i - 1, common::pivot_step<double>(cur, a(i), b(i), i == n - 1 ? 0.0 : c(i), d(i)));
    store(n - 1, common::pivot_last<double>(cur));
  } else {
    common::CyclicRow<double> rc, rl;  // the current and the last row
    common::cyclic_start(n, a(0), b(0), c(0), d(0), a(n - 1), b(n - 1), c(n - 1), d(n - 1), rc, rl);
    auto store = [&](index_t i, const common::CyclicOut<double>& o) {
      check(o.r);
      u1[i] = o.u1;
      u2[i] = o.u2;
      us[i] = o.us;
      ul[i] = o.ul;
      y[i] = o.y;
    };
    for (index_t i = 0; i + 2 < n; ++i)
      store(i, common::cyclic_step<double>(rc, rl, common::cyclic_row(i + 2 == n - 1, a(i + 1), b(i + 1), c(i + 1),
                                                                    d(i + 1)),
                                           i + 2 == n - 2));
    common::CyclicOut<double> r2, r1;
    common::cyclic_finish<double>(rc, rl, r2, r1);
    store(n - 2, r2);
    store(n - 1, r1);
  }
  if (!ok) return false;
  x.assign(static_cast<std::size_t>(n), 0.0);
  double xs = 0, xl = 0;
  for (index_t i = n - 1; i >= 0; --i) {
    const double x1 = i + 1 < n ? x[i + 1] : 0.0, x2 = i + 2 < n ? x[i + 2] : 0.0;
    x[i] = y[i] - u1[i] * x1 - u2[i] * x2 - us[i] * xs - ul[i] * xl;
    if (i == n - 1) xl = x[i];
    if (i == n - 2) xs = x[i];
  }
  return true;
}

// Solves every line of `lines` (with pivoting: by pivoting_line). a, b, c are shaped like
// d, or length-n arrays when shared is true. u may alias d. Returns the index of the first line with a zero
// pivot, or -1 when all lines were solved.
template <class T>
index_t thomas(const LineSet& lines, const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
               bool periodic, bool pivoting = false) {
  std::vector<double> x, cs;
  for (index_t l = 0; l < lines.lines(); ++l) {
    const index_t o = lines.offset(l);
    auto coef = [&](const T* p) {
      return [=, &lines](index_t i) { return double(shared ? p[i] : p[o + i * lines.stride]); };
    };
    auto rhs = [&](index_t i) { return double(d[o + i * lines.stride]); };
    const bool ok = pivoting   ? pivoting_line(lines.n, coef(a), coef(b), coef(c), rhs, periodic, x)
                    : periodic ? cyclic_line(lines.n, coef(a), coef(b), coef(c), rhs, x)
                               : thomas_line(lines.n, coef(a), coef(b), coef(c), rhs, x, cs);
    if (!ok) return l;
    for (index_t i = 0; i < lines.n; ++i) u[o + i * lines.stride] = static_cast<T>(x[i]);
  }
  return -1;
}

}  // namespace adi::reference
