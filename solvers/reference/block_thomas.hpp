#pragma once
// The reference block Thomas (paper, block part, algorithm 12) one system at a time,
// computed in double whatever T is. Each pivot block S_i = B_i - A_i C*_{i-1} is
// factorised by Gaussian elimination with partial pivoting; a pivot with
// |p| <= tol * max|S_i| (or non-finite) reports the block row as singular. Plain and
// obviously correct, not fast: the oracle the fast kernels are compared with.
// block_thomas_cyclic_system does the same for block-cyclic (periodic) systems.
#include <cmath>
#include <cstddef>
#include <vector>

#include "adi/base/layout.hpp"

namespace adi::reference {

// Solves S X = R in place (S m x m, R m x nrhs, both row-major). Returns false when a
// pivot is at most tol * max|S| or not finite.
inline bool solve_pivot_block(int m, double* s, double* r, int nrhs, double tol) {
  double smax = 0;
  for (int e = 0; e < m * m; ++e) smax = std::fmax(smax, std::fabs(s[e]));
  for (int e = 0; e < m * m; ++e)
    if (!std::isfinite(s[e])) return false;
  for (int k = 0; k < m; ++k) {
    int p = k;
    for (int q = k + 1; q < m; ++q)
      if (std::fabs(s[q * m + k]) > std::fabs(s[p * m + k])) p = q;
    if (!(std::fabs(s[p * m + k]) > tol * smax)) return false;
    if (p != k) {
      for (int j = 0; j < m; ++j) std::swap(s[k * m + j], s[p * m + j]);
      for (int j = 0; j < nrhs; ++j) std::swap(r[k * nrhs + j], r[p * nrhs + j]);
    }
    for (int q = k + 1; q < m; ++q) {
      const double f = s[q * m + k] / s[k * m + k];
      for (int j = k; j < m; ++j) s[q * m + j] -= f * s[k * m + j];
      for (int j = 0; j < nrhs; ++j) r[q * nrhs + j] -= f * r[k * nrhs + j];
    }
  }
  for (int k = m - 1; k >= 0; --k)
    for (int j = 0; j < nrhs; ++j) {
      double v = r[k * nrhs + j];
      for (int q = k + 1; q < m; ++q) v -= s[k * m + q] * r[q * nrhs + j];
      r[k * nrhs + j] = v / s[k * m + k];
    }
  return true;
}

// One system of n block rows. a(i, r, c), b(i, r, c), c(i, r, c), d(i, v) read the
// inputs; x receives u (n*m values, row i at i*m). Returns -1, or the first block row
// whose pivot block is singular.
template <class GA, class GB, class GC, class GD>
index_t block_thomas_system(int m, index_t n, GA a, GB b, GC c, GD d, double tol, std::vector<double>& x) {
  const std::size_t mm = static_cast<std::size_t>(m) * m;
  std::vector<double> cs(static_cast<std::size_t>(n) * mm, 0.0);  // C*_i
  x.assign(static_cast<std::size_t>(n) * m, 0.0);                  // d*_i, then u_i
  std::vector<double> s(mm), r(static_cast<std::size_t>(m) * (m + 1));
  const int nrhs = m + 1;  // columns: C_i, then d_i
  for (index_t i = 0; i < n; ++i) {
    for (int p = 0; p < m; ++p) {
      for (int q = 0; q < m; ++q) {
        double v = b(i, p, q);
        if (i > 0)
          for (int k = 0; k < m; ++k) v -= a(i, p, k) * cs[(i - 1) * mm + k * m + q];
        s[p * m + q] = v;
        r[p * nrhs + q] = i + 1 < n ? c(i, p, q) : 0.0;
      }
      double v = d(i, p);
      if (i > 0)
        for (int k = 0; k < m; ++k) v -= a(i, p, k) * x[(i - 1) * m + k];
      r[p * nrhs + m] = v;
    }
    if (!solve_pivot_block(m, s.data(), r.data(), nrhs, tol)) return i;
    for (int p = 0; p < m; ++p) {
      for (int q = 0; q < m; ++q) cs[i * mm + p * m + q] = r[p * nrhs + q];
      x[i * m + p] = r[p * nrhs + m];
    }
  }
  for (index_t i = n - 2; i >= 0; --i)
    for (int p = 0; p < m; ++p) {
      double v = x[i * m + p];
      for (int q = 0; q < m; ++q) v -= cs[i * mm + p * m + q] * x[(i + 1) * m + q];
      x[i * m + p] = v;
    }
  return -1;
}

// A block-cyclic system: a(0) couples row 0 to u_{n-1}, c(n-1) couples row n-1 to u_0.
// Rows 0..n-2 are eliminated by block Thomas carrying a second right-hand-side block
// Z*_i (the coupling to x = u_{n-1}: E_0 = A_0, E_{n-2} += C_{n-2}); as each row is
// eliminated it is folded into the last row (F_i: that row's coefficient of u_i), which
// leaves G x = g for the last block; then u_i = d*_i - Z*_i x - C*_i u_{i+1}.
template <class GA, class GB, class GC, class GD>
index_t block_thomas_cyclic_system(int m, index_t n, GA a, GB b, GC c, GD d, double tol,
                                   std::vector<double>& x) {
  const std::size_t mm = static_cast<std::size_t>(m) * m;
  x.assign(static_cast<std::size_t>(n) * m, 0.0);
  if (n == 1) {  // (A_0 + B_0 + C_0) u_0 = d_0
    std::vector<double> s(mm), r(static_cast<std::size_t>(m));
    for (int p = 0; p < m; ++p) {
      for (int q = 0; q < m; ++q) s[p * m + q] = a(0, p, q) + b(0, p, q) + c(0, p, q);
      r[p] = d(0, p);
    }
    if (!solve_pivot_block(m, s.data(), r.data(), 1, tol)) return 0;
    for (int p = 0; p < m; ++p) x[p] = r[p];
    return -1;
  }
  const index_t last = n - 1;
  std::vector<double> cs(static_cast<std::size_t>(n) * mm, 0.0), zs(cs.size(), 0.0);
  std::vector<double> F(mm), G(mm), g(static_cast<std::size_t>(m)), Fn(mm);
  for (int p = 0; p < m; ++p) {
    for (int q = 0; q < m; ++q) {
      F[p * m + q] = c(last, p, q) + (n == 2 ? a(last, p, q) : 0.0);
      G[p * m + q] = b(last, p, q);
    }
    g[p] = d(last, p);
  }
  const int nrhs = 2 * m + 1;  // columns: C_i, E_i, d_i
  std::vector<double> s(mm), r(static_cast<std::size_t>(m) * nrhs);
  for (index_t i = 0; i < last; ++i) {
    for (int p = 0; p < m; ++p) {
      for (int q = 0; q < m; ++q) {
        double sv = b(i, p, q), ev = (i == 0 ? a(0, p, q) : 0.0) + (i == n - 2 ? c(i, p, q) : 0.0);
        if (i > 0)
          for (int k = 0; k < m; ++k) {
            sv -= a(i, p, k) * cs[(i - 1) * mm + k * m + q];
            ev -= a(i, p, k) * zs[(i - 1) * mm + k * m + q];
          }
        s[p * m + q] = sv;
        r[p * nrhs + q] = i + 1 < last ? c(i, p, q) : 0.0;
        r[p * nrhs + m + q] = ev;
      }
      double v = d(i, p);
      if (i > 0)
        for (int k = 0; k < m; ++k) v -= a(i, p, k) * x[(i - 1) * m + k];
      r[p * nrhs + 2 * m] = v;
    }
    if (!solve_pivot_block(m, s.data(), r.data(), nrhs, tol)) return i;
    for (int p = 0; p < m; ++p) {
      for (int q = 0; q < m; ++q) {
        cs[i * mm + p * m + q] = r[p * nrhs + q];
        zs[i * mm + p * m + q] = r[p * nrhs + m + q];
      }
      x[i * m + p] = r[p * nrhs + 2 * m];
    }
    // Fold row i (u_i = d*_i - C*_i u_{i+1} - Z*_i x) into the last row.
    for (int p = 0; p < m; ++p) {
      for (int k = 0; k < m; ++k) {
        g[p] -= F[p * m + k] * x[i * m + k];
        for (int q = 0; q < m; ++q) G[p * m + q] -= F[p * m + k] * zs[i * mm + k * m + q];
      }
      for (int q = 0; q < m; ++q) {
        double v = i + 1 == n - 2 ? a(last, p, q) : 0.0;
        for (int k = 0; k < m; ++k) v -= F[p * m + k] * cs[i * mm + k * m + q];
        Fn[p * m + q] = v;
      }
    }
    F.swap(Fn);
  }
  if (!solve_pivot_block(m, G.data(), g.data(), 1, tol)) return last;
  for (int p = 0; p < m; ++p) x[last * m + p] = g[p];
  for (index_t i = n - 2; i >= 0; --i)
    for (int p = 0; p < m; ++p) {
      double v = x[i * m + p];
      for (int q = 0; q < m; ++q)
        v -= cs[i * mm + p * m + q] * x[(i + 1) * m + q] + zs[i * mm + p * m + q] * g[q];
      x[i * m + p] = v;
    }
  return -1;
}

}  // namespace adi::reference
