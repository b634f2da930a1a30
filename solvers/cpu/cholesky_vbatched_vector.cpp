// Host Cholesky of a SIMD group of small matrices, one matrix per lane (the vbatched
// paper's "vectorisation across matrices" for the CPU). The group's matrices come from
// neighbouring positions of the size order, so their sizes are close: each lane is padded
// to the group's largest size m with an identity block (Cholesky of diag(A, I) is
// diag(L, I)), the lower triangles are interleaved into packed scratch (element (i, j) of
// every lane in one vector), and a left-looking factorisation runs on whole vectors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "solvers/cpu/cholesky_vbatched.hpp"
#include "solvers/cpu/simd.hpp"

namespace adi::cpu::detail {

template <class T>
int vector_lanes() {
  return simd::kWidth<T>;
}

template <class T>
void cholesky_vector(const int* n, T* const* A, const int* ld, int* info, T* scratch) {
  constexpr int W = simd::kWidth<T>;
  using V = simd::Vec<T, W>;
  int m = 0;
  for (int l = 0; l < W; ++l) m = std::max(m, n[l]);
  // Column j of the packed lower triangle starts at col(j); (i, j) at col(j) + i - j.
  auto col = [m](int j) { return static_cast<long>(j) * m - static_cast<long>(j) * (j - 1) / 2; };
  V* S = reinterpret_cast<V*>(scratch);  // scratch is 64-byte aligned per thread slice
  for (int j = 0; j < m; ++j) {
    V* c = S + col(j) - j;
    for (int i = j; i < m; ++i) {
      V x{};
      for (int l = 0; l < W; ++l)
        x[l] = (i < n[l] && j < n[l]) ? A[l][i + static_cast<long>(j) * ld[l]] : (i == j ? T(1) : T(0));
      c[i] = x;
    }
  }
  int fail[W];
  for (int l = 0; l < W; ++l) fail[l] = std::numeric_limits<int>::max();
  for (int j = 0; j < m; ++j) {
    V* cj = S + col(j) - j;  // cj[i] = S(i, j)
    // cj[i] -= sum_{k<j} S(i,k) S(j,k), four rows per pass so that each S(j,k) feeds four FMAs.
    int i = j;
    for (; i + 4 <= m; i += 4) {
      V a0 = cj[i], a1 = cj[i + 1], a2 = cj[i + 2], a3 = cj[i + 3];
      for (int k = 0; k < j; ++k) {
        const V* ck = S + col(k) - k;
        const V ljk = ck[j];
        a0 -= ck[i] * ljk;
        a1 -= ck[i + 1] * ljk;
        a2 -= ck[i + 2] * ljk;
        a3 -= ck[i + 3] * ljk;
      }
      cj[i] = a0;
      cj[i + 1] = a1;
      cj[i + 2] = a2;
      cj[i + 3] = a3;
    }
    for (; i < m; ++i) {
      V a = cj[i];
      for (int k = 0; k < j; ++k) {
        const V* ck = S + col(k) - k;
        a -= ck[i] * ck[j];
      }
      cj[i] = a;
    }
    // Pivots: a lane that fails keeps going on a unit pivot (its later columns are never
    // written back), so one lane never stops the others.
    const V d = cj[j];
    V r;
    for (int l = 0; l < W; ++l) {
      const T x = d[l];
      const bool ok = x > T(0) && x <= std::numeric_limits<T>::max();
      if (!ok && j < n[l] && fail[l] > j) fail[l] = j;
      r[l] = ok ? T(1) / std::sqrt(x) : T(1);
    }
    cj[j] = d * r;
    for (int q = j + 1; q < m; ++q) cj[q] *= r;
  }
  for (int l = 0; l < W; ++l) {
    if (n[l] == 0) {
      info[l] = 0;
      continue;
    }
    const int good = std::min(n[l], fail[l]);
    for (int j = 0; j < good; ++j) {
      const V* cj = S + col(j) - j;
      T* a = A[l] + static_cast<long>(j) * ld[l];
      for (int i = j; i < n[l]; ++i) a[i] = cj[i][l];
    }
    info[l] = fail[l] < n[l] ? fail[l] + 1 : 0;
  }
}

template int vector_lanes<float>();
template int vector_lanes<double>();
template void cholesky_vector<float>(const int*, float* const*, const int*, int*, float*);
template void cholesky_vector<double>(const int*, double* const*, const int*, int*, double*);

}  // namespace adi::cpu::detail
