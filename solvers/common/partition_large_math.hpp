#pragma once
// The row arithmetic of the two-pass partition solver for one large tridiagonal system
// (docs/large_tridiagonal.md), written once for every backend: the host kernels run it
// on scalars and on SIMD vectors (one chunk per lane, solvers/cpu/partition_large.cpp),
// the CUDA kernels on one chunk per thread (solvers/cuda/partition_large.cuh). C++17,
// no CUDA header; ADI_LARGE_HD makes a function host + device under nvcc.
//
// The method. Rows are split into chunks [s, e). Treating x_s as a parameter, a
// Thomas-like sweep down rows s+1 .. e-1 writes every row as
//     x_i + cp_i x_{i+1} + l_i x_s = dp_i,
// and accumulating the back substitution of rows s+1 .. e-2 forward in the same sweep
// (products P of -cp) turns row s into an equation in x_{s-1}, x_s, x_{e-1} only. Each
// chunk so yields two rows of a tridiagonal *reduced system* in (F_j = x_s, E_j = x_{e-1}):
//     F row:  a_s E_{j-1} + (b_s - c_s K) F_j + c_s P E_j     = d_s - c_s G
//     E row:  l_{e-1} F_j + E_j               + cp_{e-1} F_{j+1} = dp_{e-1}
// Once it is solved, each chunk is a Thomas solve with both ends known (pass 2). Row 0's
// a and row n-1's c end up as the reduced system's corner entries, so a periodic system
// gives a periodic reduced system and costs nothing extra. One read of a, b, c, d per
// pass: 9 arrays of traffic in all, the minimum for two passes.
#include <cmath>
#include <cstdint>

#include "solvers/common/thomas_check.hpp"
#include "solvers/common/partition_core.hpp"

#if defined(__CUDACC__)
#define ADI_LARGE_HD __host__ __device__ __forceinline__
#else
#define ADI_LARGE_HD inline
#endif

namespace adi::large {

using i64 = std::int64_t;

// Chunk j covers [begin(j), end(j)): chunks of m rows, the last one shorter. A last chunk
// of one row is avoided (the method needs two rows per chunk): then the last two chunks
// are m-1 and 2 rows long. Requires n >= 2 and m >= 3.
struct Chunks {
  i64 n = 0, m = 0, count = 0;
  ADI_LARGE_HD static Chunks make(i64 n, i64 m) {
    Chunks c;
    c.n = n;
    c.m = m;
    c.count = (n + m - 1) / m;
    return c;
  }
  ADI_LARGE_HD bool short_tail() const { return count >= 2 && n - (count - 1) * m == 1; }
  ADI_LARGE_HD i64 begin(i64 j) const { return short_tail() && j == count - 1 ? n - 2 : j * m; }
  ADI_LARGE_HD i64 end(i64 j) const {
    if (short_tail() && j == count - 2) return n - 2;
    const i64 e = (j + 1) * m;
    return e < n ? e : n;
  }
  // Chunks 0 .. full()-1 have exactly m rows.
  ADI_LARGE_HD i64 full() const {
    i64 f = n / m;
    if (short_tail() && f == count - 1) f -= 1;  // chunk count-2 lost a row
    return f;
  }
};

// The two reduced rows of one chunk (the E row's diagonal is 1).
template <class V>
struct ReducedRows {
  V aF, bF, cF, dF;
  V aE, cE, dE;
};

// A chunk's reduced rows as rows 2 k (F) and 2 k + 1 (E) of a reduced system's arrays (pointers or arrays,
// as the caller holds them): the host passes (one lane's values at a time) and the device tile's levels write
// them through this one function.
template <class A, class I, class T>
ADI_LARGE_HD void put_reduced_rows(A& a, A& b, A& c, A& d, I k, T aF, T bF, T cF, T dF, T aE, T cE, T dE) {
  a[2 * k] = aF;
  b[2 * k] = bF;
  c[2 * k] = cF;
  d[2 * k] = dF;
  a[2 * k + 1] = aE;
  b[2 * k + 1] = T(1);
  c[2 * k + 1] = cE;
  d[2 * k + 1] = dE;
}
template <class A, class I, class T>
ADI_LARGE_HD void put_reduced_rows(A& a, A& b, A& c, A& d, I k, const ReducedRows<T>& rr) {
  put_reduced_rows(a, b, c, d, k, rr.aF, rr.bF, rr.cF, rr.dF, rr.aE, rr.cE, rr.dE);
}

// Running state of pass 1 over one chunk.
template <class T, class V>
struct Pass1 {
  V a0, b0, c0, d0;  // row s, used at the end
  V cp, dp, l;       // the sweep
  V P, G, K;         // back substitution of rows s+1 .. e-2, accumulated forward

  ADI_LARGE_HD void first_row(V a, V b, V c, V d) {
    a0 = a;
    b0 = b;
    c0 = c;
    d0 = d;
    cp = V{} + T(0);
    dp = V{} + T(0);
    l = V{} - T(1);  // so that row s+1 gives l = a / b like the rest
    P = V{} + T(1);
    G = V{} + T(0);
    K = V{} + T(0);
  }
  // Row i in s+1 .. e-1; `inner` is false for the last row e-1. Returns the pivot
  // (b_i - a_i cp_{i-1}) and its reciprocal r for the caller's checks.
  ADI_LARGE_HD V row(V a, V b, V c, V d, bool inner, V& r) {
    const V piv = common::thomas_pivot(a, b, cp);
    r = T(1) / piv;
    common::partition_row(a, c, d, r, cp, dp, l);
    if (inner) common::partition_accumulate(cp, dp, l, G, K, P);
    return piv;
  }
  ADI_LARGE_HD ReducedRows<V> rows() const {
    ReducedRows<V> out{a0, b0, c0, d0, l, cp, dp};
    common::partition_first_row(b0, c0, d0, G, K, P, out.bF, out.cF, out.dF);
    return out;
  }
};

// Pass 2 over one chunk: rows s and e-1 are the known F and E, rows between a Thomas
// sweep whose first row's coupling to x_s = F is moved to the right-hand side.
template <class T, class V>
struct Pass2 {
  V cp, dp;
  ADI_LARGE_HD void first_row(V F) {
    cp = V{} + T(0);
    dp = F;
  }
  ADI_LARGE_HD void row(V a, V b, V c, V d) {
    const V r = T(1) / common::thomas_pivot(a, b, cp);
    cp = c * r;
    dp = common::thomas_eliminate(d, a, dp, r);
  }
};

// A zero, infinite or NaN pivot (or one so small that its reciprocal overflows), or, when
// tol > 0, a tiny one: |pivot| <= tol * scale, scale = max(|a_i|, |b_i|, |c_i|) of the row.
template <class T>
ADI_LARGE_HD bool bad_pivot(T piv, T r, T scale, T tol) {
  const bool bad = !(r - r == T(0)) || r == T(0);
  return bad || (tol > T(0) && !(std::fabs(piv) > tol * scale));
}
template <class T>
ADI_LARGE_HD T row_scale(T a, T b, T c) {
  return std::fmax(std::fabs(a), std::fmax(std::fabs(b), std::fabs(c)));
}
// The stability check of every Thomas loop (solvers/common/thomas_check.hpp) from what the
// partition's sweeps have at hand: the growth |a_i c*_{i-1}| = |b_i - pivot| against the
// row's scale max(|a_i|, |b_i|, |c_i|). On the device too (issue 23: compiled out there
// before, so the CUDA partition caught only zero and tiny pivots and a non-dominant system of
// 2^18 came back with an error of 2e-6 and no word); -DADI_THOMAS_CHECK=0 (the measurement
// build of scripts/gpu_pivoting_check.sh --with-nocheck) removes it.
template <class T>
ADI_LARGE_HD bool unsafe_growth(T piv, T b, T scale) {
  return ADI_THOMAS_CHECK && std::fabs(b - piv) > T(common::kThomasGrowth) * scale;
}

// A plain tridiagonal solve in one thread, in T: Thomas, or for periodic systems
// Sherman-Morrison with A = A' + v w^T (as solvers/reference/thomas.hpp). a[0] and
// c[n-1] are read only when periodic. x may alias d; cp (and z when periodic) hold n
// values. Returns the first row with a bad pivot, or -1.
template <class T>
ADI_LARGE_HD i64 solve_direct(i64 n, const T* a, const T* b, const T* c, const T* d, T* x, T* cp, T* z,
                              bool periodic, T tol) {
  if (n <= 0) return -1;
  if (periodic && n == 1) {
    const T s = a[0] + b[0] + c[0];
    const T r = T(1) / s;
    if (bad_pivot(s, r, row_scale(a[0], b[0], c[0]), tol)) return 0;
    x[0] = d[0] * r;
    return -1;
  }
  if (periodic && n == 2) {  // row 0: b0 x0 + (a0 + c0) x1; row 1: (a1 + c1) x0 + b1 x1
    const common::PeriodicPair<T> m(a[0], b[0], c[0], a[1], b[1], c[1]);
    const T det = m.det();
    const T r = T(1) / det;
    if (bad_pivot(det, r, m.m00 * m.m11, tol)) return 0;
    const T d0 = d[0], d1 = d[1];  // x may alias d
    m.solve(d0, d1, r, x[0], x[1]);
    return -1;
  }
  // Sherman-Morrison split (solvers/common/thomas_core.hpp); unused when not periodic.
  const common::PeriodicSplit<T> split(periodic ? a[0] : T(0), periodic ? b[0] : T(1),
                                       periodic ? c[n - 1] : T(0));
  T cpp = 0, dpp = 0, zp = 0;
  for (i64 i = 0; i < n; ++i) {
    const T ai = i == 0 && !periodic ? T(0) : a[i];
    const T ci = i == n - 1 && !periodic ? T(0) : c[i];
    const T scale = row_scale(ai, b[i], ci);
    const T bi = periodic ? split.b(i, n, b[i]) : b[i];
    const T am = i == 0 ? T(0) : ai;  // A' has no corner: row 0 has no sub-diagonal
    const T piv = common::thomas_pivot(am, bi, cpp);
    const T r = T(1) / piv;
    if (bad_pivot(piv, r, scale, tol) || unsafe_growth(piv, bi, scale)) return i;
    cpp = i + 1 < n ? ci * r : T(0);
    dpp = common::thomas_eliminate(d[i], am, dpp, r);
    cp[i] = cpp;
    x[i] = dpp;
    if (periodic) {
      zp = common::thomas_eliminate(split.v(i, n), am, zp, r);
      z[i] = zp;
    }
  }
  for (i64 i = n - 2; i >= 0; --i) x[i] = common::thomas_substitute(x[i], cp[i], x[i + 1]);
  if (periodic) {
    for (i64 i = n - 2; i >= 0; --i) z[i] = common::thomas_substitute(z[i], cp[i], z[i + 1]);
    const T den = split.den(z[0], z[n - 1]);
    const T r = T(1) / den;
    if (bad_pivot(den, r, T(1), T(0))) return n - 1;
    const T f = split.factor_inv(x[0], x[n - 1], r);
    for (i64 i = 0; i < n; ++i) x[i] = split.correct(x[i], f, z[i]);
  }
  return -1;
}

// The paper's analytic switch point (section III-A): the number k >= 1 of PCR levels
// minimising (12 n / cores) k + 8 (n / 2^k) ceil(2^k / cores), the operation count of k
// PCR levels on all cores plus Thomas on 2^k subsystems shared among them. n cancels
// out except for the bound 2^k <= n.
inline int analytic_switch_point(i64 n, int cores) {
  if (cores < 1) cores = 1;
  int best = 1;
  double best_cost = -1;
  for (int k = 1; k <= 30 && (i64(1) << k) <= (n > 2 ? n : 2); ++k) {
    const double systems = double(i64(1) << k);
    const double rounds = std::ceil(systems / cores);
    const double cost = 12.0 / cores * k + 8.0 / systems * rounds;
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = k;
    }
  }
  return best;
}

}  // namespace adi::large
