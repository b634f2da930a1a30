#pragma once
// The reference block Thomas (paper, block part, algorithm 12) one system at a time,
// computed in double whatever T is. Each pivot block S_i = B_i - A_i C*_{i-1} is
// factorised by Gaussian elimination with partial pivoting; a pivot with
// |p| <= tol * max|S_i| (or non-finite) reports the block row as singular. Plain and
// obviously correct, not fast: the oracle the fast kernels are compared with.
#include <cmath>
#include <cstddef>
#include <vector>

#include "adi/layout.hpp"

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

}  // namespace adi::reference
