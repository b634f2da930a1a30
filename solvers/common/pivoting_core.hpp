#pragma once
// Gaussian elimination with partial (row) pivoting of one tridiagonal line, LAPACK ?gtsv's
// algorithm, written once for host scalars, host SIMD lanes (GCC vectors, one line per
// lane: every choice is a lane-wise select, no branch) and CUDA threads.
//
// The elimination keeps one "current" row: after step i it holds row i+1 of the partly
// reduced matrix, with entries (cb, cc) in columns i+1, i+2 and right-hand side cd (and
// cz, a second right-hand side, for the periodic correction vector). Step i meets row
// i+1 = (a, b, c | d) of A, whose entries sit in columns i, i+1, i+2, while the current row
// has (cb, cc) in columns i, i+1. The larger of |cb| and |a| becomes the pivot; U row i
// gets up to three entries (pivot, u1, u2: the fill-in of the swap) and the other row,
// minus m times the pivot row, becomes the next current row. Stored per row: 1/pivot,
// u1/pivot, u2/pivot, y/pivot (the solution is then x_i = y'_i - u1'_i x_{i+1} -
// u2'_i x_{i+2}), so the backward pass multiplies only. The growth of this elimination is
// at most 2 per step (|m| <= 1): stable for every nonsingular tridiagonal matrix
// (Higham 9.5; Bueno & Dopico), unlike Thomas (solvers/common/thomas_check.hpp).
#if defined(__CUDACC__)
#define ADI_PIVOT_HD __host__ __device__ __forceinline__
#else
#define ADI_PIVOT_HD inline
#endif

#include "solvers/common/thomas_check.hpp"

namespace adi::common {

// The current row (see above); z is the periodic correction's right-hand side.
template <class V>
struct PivotRow {
  V b, c, d, z;
};

// U row i after scaling by 1/pivot: r = 1/pivot (tested by the caller), u1, u2, y, z.
template <class V>
struct PivotOut {
  V r, u1, u2, y, z, m;
};

// Step i: eliminates column i between the current row s and row i+1 = (a, b, c | d, v)
// of A (v: the second right-hand side, ignored unless Two). `c` is 0 for the last row.
template <class T, bool Two, class V>
ADI_PIVOT_HD PivotOut<V> pivot_step(PivotRow<V>& s, V a, V b, V c, V d, V v) {
  const auto swap = magnitude(a) > magnitude(s.b);
  const V zero = V{};
  const V piv = swap ? a : s.b;
  const V u1 = swap ? b : s.c;
  const V u2 = swap ? c : zero;
  const V y = swap ? d : s.d;
  const V oi = swap ? s.b : a;  // the other row: column i, i+1, i+2, right-hand side
  const V o1 = swap ? s.c : b;
  const V o2 = swap ? zero : c;
  const V od = swap ? s.d : d;
  const V r = T(1) / piv;
  const V m = oi * r;
  s.b = o1 - m * u1;
  s.c = o2 - m * u2;
  s.d = od - m * y;
  PivotOut<V> o{r, u1 * r, u2 * r, y * r, zero, m};
  if constexpr (Two) {
    const V yz = swap ? v : s.z;
    s.z = (swap ? s.z : v) - m * yz;
    o.z = yz * r;
  }
  return o;
}

// The last row: U row n-1 is the current row's pivot alone.
template <class T, bool Two, class V>
ADI_PIVOT_HD PivotOut<V> pivot_last(const PivotRow<V>& s) {
  const V r = T(1) / s.b;
  const V zero = V{};
  return {r, zero, zero, s.d * r, Two ? s.z * r : zero, zero};
}

// The same step for coefficients every line shares (SharedBands): the pivots, swaps and
// multipliers depend on a, b, c only, so they are computed once (pivot_step with the
// shared row, T scalars) and each line replays them on its right-hand side:
//   y = swap ? d : cd,  cd = (swap ? cd : d) - m y,  y' = y r.
template <class V, class T>
ADI_PIVOT_HD V replay_step(bool swap, T m, T r, V& cd, V d) {
  const V y = swap ? d : cd;
  cd = (swap ? cd : d) - m * y;
  return y * r;
}

// The periodic split A = A' + v w^T for the pivoting solve: v = (gamma, 0.., c_{n-1}),
// w = (1, 0.., a_0/gamma). gamma = -sign(b_0) max(|b_0|, |a_0|) keeps the modified corners
// b_0 - gamma (|b_0| + |gamma|, no cancellation) and b_{n-1} - c_{n-1} a_0/gamma
// (|a_0/gamma| <= 1) of the size of their rows, where Thomas's gamma = -b_0 divides by a
// tiny b_0. Only row 0 is needed, so a streaming sweep can choose it before row n-1.
template <class V>
ADI_PIVOT_HD V pivot_gamma(V a0, V b0) {
  const V m = larger(magnitude(b0), magnitude(a0));
  return b0 < V{} ? m : -m;
}

}  // namespace adi::common
