#pragma once
// The reference Cholesky: plain left-looking potrf and potrs of one column-major matrix,
// computed in double whatever T is. Obviously correct, not fast: the batched kernels are
// tested against it.
#include <cmath>
#include <vector>

namespace adi::reference {

// Factors A (n x n, leading dimension ld) in place: lower triangle <- L. Returns 0, or
// j + 1 when column j's pivot is not positive and finite; then columns < j hold L and
// columns >= j are unchanged. The strict upper triangle is neither read nor written.
template <class T>
int cholesky_factor(int n, T* A, int ld) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) {
      double s = double(A[i + static_cast<long>(j) * ld]);
      for (int k = 0; k < j; ++k) s -= double(A[i + static_cast<long>(k) * ld]) * double(A[j + static_cast<long>(k) * ld]);
      v[i] = s;
    }
    if (!(v[j] > 0.0) || !std::isfinite(v[j])) return j + 1;
    const double l = std::sqrt(v[j]);
    A[j + static_cast<long>(j) * ld] = static_cast<T>(l);
    for (int i = j + 1; i < n; ++i) A[i + static_cast<long>(j) * ld] = static_cast<T>(v[i] / l);
  }
  return 0;
}

// Solves L L^T X = B for nrhs columns of B (leading dimension ldb), L from cholesky_factor.
template <class T>
void cholesky_solve(int n, const T* L, int ld, int nrhs, T* B, int ldb) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int r = 0; r < nrhs; ++r) {
    T* b = B + static_cast<long>(r) * ldb;
    for (int i = 0; i < n; ++i) {
      double s = double(b[i]);
      for (int k = 0; k < i; ++k) s -= double(L[i + static_cast<long>(k) * ld]) * x[k];
      x[i] = s / double(L[i + static_cast<long>(i) * ld]);
    }
    for (int i = n - 1; i >= 0; --i) {
      double s = x[i];
      for (int k = i + 1; k < n; ++k) s -= double(L[k + static_cast<long>(i) * ld]) * x[k];
      x[i] = s / double(L[i + static_cast<long>(i) * ld]);
    }
    for (int i = 0; i < n; ++i) b[i] = static_cast<T>(x[i]);
  }
}

}  // namespace adi::reference
