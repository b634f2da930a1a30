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
  auto at = [&](int i, int j) -> V& { return S[col(j) + i - j]; };  // (i, j), i >= j
  // Left-looking, four columns per step. The update of a 4 x 4 block of rows x columns
  // by every finished column k loads 4 + 4 vectors and does 16 FMAs (registers hold the
  // 16 accumulators), instead of 5 loads per 4 FMAs column by column.
  for (int j0 = 0; j0 < m; j0 += 4) {
    const int w = std::min(4, m - j0);
    for (int i0 = j0; i0 < m; i0 += 4) {
      const int h = std::min(4, m - i0);
      if (w == 4 && h == 4) {
        V acc[4][4];
        const bool diag = i0 == j0;  // only r >= c exists in the diagonal block
        for (int r = 0; r < 4; ++r)
          for (int c = 0; c < 4; ++c) acc[r][c] = (!diag || r >= c) ? at(i0 + r, j0 + c) : V{};
        for (int k = 0; k < j0; ++k) {
          const V* ck = S + col(k) - k;
          const V a0 = ck[i0], a1 = ck[i0 + 1], a2 = ck[i0 + 2], a3 = ck[i0 + 3];
          const V b0 = ck[j0], b1 = ck[j0 + 1], b2 = ck[j0 + 2], b3 = ck[j0 + 3];
          acc[0][0] -= a0 * b0, acc[0][1] -= a0 * b1, acc[0][2] -= a0 * b2, acc[0][3] -= a0 * b3;
          acc[1][0] -= a1 * b0, acc[1][1] -= a1 * b1, acc[1][2] -= a1 * b2, acc[1][3] -= a1 * b3;
          acc[2][0] -= a2 * b0, acc[2][1] -= a2 * b1, acc[2][2] -= a2 * b2, acc[2][3] -= a2 * b3;
          acc[3][0] -= a3 * b0, acc[3][1] -= a3 * b1, acc[3][2] -= a3 * b2, acc[3][3] -= a3 * b3;
        }
        for (int r = 0; r < 4; ++r)
          for (int c = 0; c < 4; ++c)
            if (!diag || r >= c) at(i0 + r, j0 + c) = acc[r][c];
        continue;
      }
      // Partial blocks (the last rows or columns): element by element.
      for (int r = 0; r < h; ++r)
        for (int c = 0; c < w && j0 + c <= i0 + r; ++c) {
          V a = at(i0 + r, j0 + c);
          for (int k = 0; k < j0; ++k) a -= at(i0 + r, k) * at(j0 + c, k);
          at(i0 + r, j0 + c) = a;
        }
    }
    // Factor the step's w columns among themselves. Pivots: a lane that fails keeps going
    // on a unit pivot (its later columns are never written back), so one lane never
    // stops the others.
    for (int c = 0; c < w; ++c) {
      const int j = j0 + c;
      const V d = at(j, j);
      V r;
      for (int l = 0; l < W; ++l) {
        const T x = d[l];
        const bool ok = x > T(0) && x <= std::numeric_limits<T>::max();
        if (!ok && j < n[l] && fail[l] > j) fail[l] = j;
        r[l] = ok ? T(1) / std::sqrt(x) : T(1);
      }
      V* cj = S + col(j) - j;
      cj[j] = d * r;
      for (int q = j + 1; q < m; ++q) cj[q] *= r;
      for (int c2 = c + 1; c2 < w; ++c2) {
        V* cq = S + col(j0 + c2) - (j0 + c2);
        const V f = cj[j0 + c2];
        for (int q = j0 + c2; q < m; ++q) cq[q] -= cj[q] * f;
      }
    }
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
