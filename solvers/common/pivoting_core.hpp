#pragma once
// Gaussian elimination with partial (row) pivoting of one tridiagonal line, LAPACK ?gtsv's
// algorithm, written once for host scalars, host SIMD lanes (GCC vectors, one line per
// lane: every choice is a lane-wise select, no branch) and CUDA threads.
//
// The elimination keeps one "current" row: after step i it holds row i+1 of the partly
// reduced matrix, with entries (cb, cc) in columns i+1, i+2 and right-hand side cd. Step i
// meets row i+1 = (a, b, c | d) of A, whose entries sit in columns i, i+1, i+2, while the current row
// has (cb, cc) in columns i, i+1. The larger of |cb| and |a| becomes the pivot; U row i
// gets up to three entries (pivot, u1, u2: the fill-in of the swap) and the other row,
// minus m times the pivot row, becomes the next current row. Stored per row: 1/pivot,
// u1/pivot, u2/pivot, y/pivot (the solution is then x_i = y'_i - u1'_i x_{i+1} -
// u2'_i x_{i+2}), so the backward pass multiplies only. The growth of this elimination is
// at most 2 per step (|m| <= 1): stable for every nonsingular tridiagonal matrix
// (Higham 9.5; Bueno & Dopico), unlike Thomas (solvers/common/thomas_check.hpp).
#if defined(__CUDACC__)
#define ADI_PIVOT_HD __host__ __device__ __forceinline__
#define ADI_PIVOT_UNROLL _Pragma("unroll")
#else
#define ADI_PIVOT_HD inline
#define ADI_PIVOT_UNROLL
#endif

#include <cmath>

#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/thomas_check.hpp"

namespace adi::common {

// 1 / x, correctly rounded: on a CUDA device the reciprocal instruction sequence
// (__frcp_rn / __drcp_rn, the same value as T(1) / x without the general division routine),
// elsewhere the division (V may be a GCC vector there).
template <class T, class V>
ADI_PIVOT_HD V pivot_reciprocal(V x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return __frcp_rn(x);
  else
    return __drcp_rn(x);
#else
  return T(1) / x;
#endif
}

// The current row (see above).
template <class V>
struct PivotRow {
  V b, c, d;
};

// U row i after scaling by 1/pivot: r = 1/pivot (tested by the caller), u1, u2, y.
template <class V>
struct PivotOut {
  V r, u1, u2, y;
};

// The pivot choice of step i between the current row s and row i+1 = (a, b, c | .) of A
// (the larger of |s.b| and |a| becomes the pivot), applied to the matrix part of s; its
// right-hand sides follow with pivot_rhs, as many as the caller carries.
template <class V, class M>
struct PivotChoice {
  M swap;     // row i+1 becomes the pivot row
  V piv, r, m;  // the pivot, 1/pivot, the multiplier of the other row
  V u1, u2;   // the pivot row's entries in columns i+1, i+2 (unscaled)
};
// Early (for latency-bound callers: the staged route runs few lines per SM): both
// reciprocals are taken, 1/a off the chain that carries s.b from step to step, so that chain
// waits for 1/s.b alone, not for the compare and select before it; r is the same value.
template <class T, class V, bool Early = false>
ADI_PIVOT_HD auto pivot_choose(PivotRow<V>& s, V a, V b, V c) {
  const auto swap = magnitude(a) > magnitude(s.b);
  const V zero = V{};
  const V piv = swap ? a : s.b;
  const V u1 = swap ? b : s.c;
  const V u2 = swap ? c : zero;
  const V oi = swap ? s.b : a;  // the other row: column i, i+1, i+2
  const V o1 = swap ? s.c : b;
  const V o2 = swap ? zero : c;
  V r;
  if constexpr (Early) {
    const V ra = pivot_reciprocal<T>(a), rb = pivot_reciprocal<T>(s.b);
    r = swap ? ra : rb;
  } else {
    r = pivot_reciprocal<T>(piv);
  }
  const V m = oi * r;
  s.b = o1 - m * u1;
  s.c = o2 - m * u2;
  return PivotChoice<V, decltype(swap)>{swap, piv, r, m, u1, u2};
}
// One right-hand side through the step: sd is the current row's, d row i+1's. Returns
// y / pivot (U row i's) and leaves the other row's in sd.
template <class V, class M>
ADI_PIVOT_HD V pivot_rhs(const PivotChoice<V, M>& p, V& sd, V d) {
  const V y = p.swap ? d : sd;
  const V od = p.swap ? sd : d;
  sd = od - p.m * y;
  return y * p.r;
}

// Step i: eliminates column i between the current row s and row i+1 = (a, b, c | d) of A.
// `c` is 0 for the last row.
template <class T, class V, bool Early = false>
ADI_PIVOT_HD PivotOut<V> pivot_step(PivotRow<V>& s, V a, V b, V c, V d) {
  const auto p = pivot_choose<T, V, Early>(s, a, b, c);
  const V y = pivot_rhs(p, s.d, d);
  return {p.r, p.u1 * p.r, p.u2 * p.r, y};
}

// The last row: U row n-1 is the current row's pivot alone.
template <class T, class V>
ADI_PIVOT_HD PivotOut<V> pivot_last(const PivotRow<V>& s) {
  const V r = pivot_reciprocal<T>(s.b);
  const V zero = V{};
  return {r, zero, zero, s.d * r};
}

// --- periodic lines: Gaussian elimination with partial pivoting on the cyclic matrix ---
//
// Sherman-Morrison over a pivoting solve is not enough: its modified matrix A' (the corners
// taken out) may be nearly singular where A is not, and the correction then cancels digits
// (measured: 10-40x LAPACK dgesv's error on random-sign fp32 lines). Instead the cyclic
// matrix is eliminated directly, pivoting as dense GEPP would: column i has nonzeros in
// three rows only, the current row C, row i+1 of A (N) and the last row L (the one whose
// c_{n-1} sits in column 0), so the largest of the three becomes the pivot. Every row in
// play has the shape "front (columns i, i+1, and i+2 for N), column n-2, column n-1", so U
// row i has at most four entries past the diagonal: u1, u2 (columns i+1, i+2), us (column
// n-2: L's a_{n-1} while it is in play) and ul (column n-1: the fill of the wrap-around).
// The last two columns are a final 2x2 step; back substitution is
//   x_i = y_i - u1_i x_{i+1} - u2_i x_{i+2} - us_i x_{n-2} - ul_i x_{n-1}.
// Growth is bounded as for dense GEPP (|m| <= 1). n >= 3.
template <class V>
struct CyclicRow {
  V f0, f1, f2, s, l, d;  // columns i, i+1, i+2, n-2, n-1; right-hand side
};
template <class V>
struct CyclicOut {
  V r, u1, u2, us, ul, y;  // 1/pivot and the scaled U row (y' = y / pivot)
};

// Rows 0 and n-1 as the elimination starts (front columns 0, 1).
template <class V>
ADI_PIVOT_HD void cyclic_start(long long n, V a0, V b0, V c0, V d0, V an, V bn, V cn, V dn, CyclicRow<V>& C,
                               CyclicRow<V>& L) {
  const V zero = V{};
  C = {b0, c0, zero, zero, a0, d0};
  L = {cn, zero, zero, an, bn, dn};
  if (n == 3) {  // column n-2 = 1 is already in the front
    L.f1 = L.f1 + L.s;
    L.s = zero;
  }
}

// Row i+1 = (a, b, c | d) of A for step i: c sits in column n-1 when i+2 == n-1.
template <class V>
ADI_PIVOT_HD CyclicRow<V> cyclic_row(bool c_is_last, V a, V b, V c, V d) {
  const V zero = V{};
  return c_is_last ? CyclicRow<V>{a, b, zero, zero, c, d} : CyclicRow<V>{a, b, c, zero, zero, d};
}

// Step i (0 <= i <= n-3): pivots column i among C, N, L; the two others, eliminated,
// become the next C and L (front columns i+1, i+2). fold: i+2 == n-2 (column n-2 joins
// the front).
template <class T, class V>
ADI_PIVOT_HD CyclicOut<V> cyclic_step(CyclicRow<V>& C, CyclicRow<V>& L, const CyclicRow<V>& N, bool fold) {
  const V mc = magnitude(C.f0), mn = magnitude(N.f0), ml = magnitude(L.f0);
  const auto pn = (mn > mc) & (mn >= ml);
  const auto pl = (ml > mc) & (ml > mn);
  const auto keep_c = pn | pl;  // C survives unless it is the pivot
  auto pick = [&](V c, V nn, V l) { return pn ? nn : (pl ? l : c); };
  const CyclicRow<V> P{pick(C.f0, N.f0, L.f0), pick(C.f1, N.f1, L.f1), pick(C.f2, N.f2, L.f2),
                       pick(C.s, N.s, L.s),    pick(C.l, N.l, L.l),    pick(C.d, N.d, L.d)};
  auto first = [&](V c, V nn) { return keep_c ? c : nn; };
  auto second = [&](V nn, V l) { return pl ? nn : l; };
  const CyclicRow<V> R1{first(C.f0, N.f0), first(C.f1, N.f1), first(C.f2, N.f2),
                        first(C.s, N.s),   first(C.l, N.l),   first(C.d, N.d)};
  const CyclicRow<V> R2{second(N.f0, L.f0), second(N.f1, L.f1), second(N.f2, L.f2),
                        second(N.s, L.s),   second(N.l, L.l),   second(N.d, L.d)};
  const V r = pivot_reciprocal<T>(P.f0);
  const V zero = V{};
  auto eliminate = [&](const CyclicRow<V>& R) {
    const V m = R.f0 * r;
    CyclicRow<V> o{R.f1 - m * P.f1, R.f2 - m * P.f2, zero, R.s - m * P.s, R.l - m * P.l, R.d - m * P.d};
    if (fold) {
      o.f1 = o.f1 + o.s;
      o.s = zero;
    }
    return o;
  };
  C = eliminate(R1);
  L = eliminate(R2);
  return {r, P.f1 * r, P.f2 * r, P.s * r, P.l * r, P.d * r};
}

// The last two columns (n-2, n-1) of the two remaining rows: U rows n-2 and n-1.
template <class T, class V>
ADI_PIVOT_HD void cyclic_finish(const CyclicRow<V>& X, const CyclicRow<V>& Y, CyclicOut<V>& row2,
                                CyclicOut<V>& row1) {
  const V zero = V{};
  const V xl = X.l + X.f1, yl = Y.l + Y.f1;  // column n-1 (f1 is 0 here; kept for safety)
  const auto sw = magnitude(Y.f0) > magnitude(X.f0);
  const V p0 = sw ? Y.f0 : X.f0, pl = sw ? yl : xl, pd = sw ? Y.d : X.d;
  const V q0 = sw ? X.f0 : Y.f0, ql = sw ? xl : yl, qd = sw ? X.d : Y.d;
  const V r = pivot_reciprocal<T>(p0);
  const V m = q0 * r;
  // The last pivot of a singular cyclic matrix (the periodic Laplacian b = 2, a = c = -1)
  // comes out as rounding noise, not 0: cancelled to noise counts as zero, the test of
  // cyclic_denominator.hpp (it never fires on a line with correct digits left).
  const V mp = m * pl, last = ql - mp;
  const V r1 = pivot_reciprocal<T>(cancelled<T>(last, magnitude(ql) + magnitude(mp)) ? zero : last);
  row2 = {r, zero, zero, zero, pl * r, pd * r};
  row1 = {r1, zero, zero, zero, zero, (qd - m * pd) * r1};
}

// --- the partition method with partial pivoting inside each partition ---
//
// A line is cut into partitions of M rows; row 0 of partition k is its separator s_k, rows
// 1 .. M-1 its interior block I_k, which couples to the outside only through a_1 (to x_{s_k})
// and c_{M-1} (to x_{s_{k+1}}). The block is solved with partial pivoting for three right-
// hand sides, d, a_1 e_1 and c_{M-1} e_{M-1}: x_i = y_i - v_i x_{s_k} - w_i x_{s_{k+1}}.
// Only the block's first and last rows are needed for the reduced system: the last by a
// top-down elimination, the first by a bottom-up one (the same elimination on the reversed
// rows, a and c trading places), so nothing is stored per row. Separator row k, with
// x_{s_k - 1} and x_{s_k + 1} substituted, couples x_{s_{k-1}}, x_{s_k}, x_{s_{k+1}}: the
// reduced system is tridiagonal again, solved by the same method or line by line
// (partition_reduced_row). With the separators known, each block is solved once more with
// its ends moved to the right-hand side (partition_solve). Like SPIKE (cuSPARSE gtsv2, with
// diagonal pivoting) it assumes the interior blocks are not nearly singular: a block with a
// tiny last pivot loses digits that elimination over the whole line keeps (docs/pivoting.md).
// row(i) returns partition row i (0 .. M-1) as PartitionRowValues; rows past the line's end
// are (0, 1, 0 | 0), a(row 0 of the line) and c(its last row) are 0.
template <class V>
struct PartitionRowValues {
  V a, b, c, d;
};
template <class V>
struct PartitionEnds {
  V yF, vF, wF;  // block row 1 (the first): y, v, w
  V yL, vL, wL;  // block row M-1 (the last)
};

// x is finite: 1/pivot of a singular block is not.
template <class V>
ADI_PIVOT_HD bool finite_value(V x) {
  return x - x == V(0);
}

// A block with a pivot below kPartitionWeakPivot times its largest coefficient (so far) is
// nearly singular, or nearly splits into two parts of which one is: its y, v, w carry that
// factor into the reduced system, and the solve would lose digits that elimination over the
// whole line keeps. The partition solvers then re-solve the line by plain partial pivoting
// (the thread-per-line kernel). Every pivot is tested, in both directions: the last block
// of a line is padded with identity rows, so the pivot that shows a near-singular real
// part is not always the last one.
// kPartitionWeakPivot: 2^-8 (fp32), 2^-12 (fp64).
template <class T>
ADI_PIVOT_HD bool partition_weak_pivot(T pivot, T scale) {
  return !(magnitude(pivot) >= scale * T(sizeof(T) == 4 ? 1.0 / 256 : 1.0 / 4096));
}

// Where the partition method is known to be accurate (issue 23, docs/pivoting.md "Stop 34"):
// on lines that behave like row diagonally dominant ones. For those, (1) every spike entry
// is at most 1 in magnitude (the block's rows with x at its separators set to 1 and 0: a
// maximum principle), so the tips v, w the reduce computes are; and (2) the reduced system
// (a Schur complement) is row diagonally dominant again: |A| + |C| <= |B| in every reduced
// row. Elsewhere the reduced rows, computed in T by two eliminations of 16 steps, carry a few
// times the rounding of one coefficient into a reduced system that may amplify it: the host
// prototype's sweep (stop 33/34) found lines of 545 .. 4097 rows at up to 100x LAPACK's error
// (random signs, tiny diagonals, Toeplitz b = 1, a = c = 0.6), none of them weak. Every such
// line failed (1) or (2), and no diagonally dominant line did; so a line that fails either can be
// sent where a weak one goes (the exact fall-back: partition_dominance_unsafe). The test costs a
// few instructions a partition, in registers. It is opt-in on the device (the fall-back is one
// thread per line: ~3300x slower than the route on one Toeplitz system of 2^20, docs/pivoting.md).
// kPartitionDominanceSlack: the rounding allowed above 1 (weakly dominant lines, e.g.
// b = 1 + 2r, a = c = -r with r = 1e8, stay at 1 - 1e-6 after five levels).
inline constexpr double kPartitionDominanceSlack = 1.0 / 1024;

// (1): a spike tip above 1.
template <class T>
ADI_PIVOT_HD bool partition_spike_unsafe(T v, T w) {
  const T bound = T(1 + kPartitionDominanceSlack);
  return !(magnitude(v) <= bound && magnitude(w) <= bound);
}

// The last partition of a line is padded with rows (0, 1, 0 | 0) past the line's end. They are
// decoupled from the block's real rows (a zero coupling: every multiplier against them is 0, so
// the real rows' y, v, w and the reduced row do not depend on their b), but their pivots meet the
// weak test: with b = 1 a line whose coefficients are above 2^8 (fp32; 2^12 fp64) or below
// 2^-8 was weak wherever a level's last partition was partial (stop 34: the heat operator b = 1 + 2r,
// a = c = -r with r >= 1e4, and the Laplacian's reduced rows, which shrink by ~17 a level, took the
// exact fall-back). Scale-neutral padding: b of rows real .. M-1 (real = the partition's rows
// inside the line) set to the largest coefficient of its real interior rows, so the weak test sees
// what it would see on a full block (the pivot test is then invariant under scaling the line).
// Only the partitions that hold a line's end call it (one a line and level).
template <class T, int M>
ADI_PIVOT_HD void partition_pad_rows(const T (&a)[M], T (&b)[M], const T (&c)[M], int real) {
  T scale = T(0);
ADI_PIVOT_UNROLL
  for (int i = 1; i < M; ++i)
    if (i < real) scale = larger(scale, larger(magnitude(a[i]), larger(magnitude(b[i]), magnitude(c[i]))));
  if (!(scale > T(0) && finite_value(scale))) scale = T(1);
ADI_PIVOT_UNROLL
  for (int i = 1; i < M; ++i)
    if (i >= real) b[i] = scale;
}

// One end of block I_k (y, v, w) without storing a row: Down, the last row by the top-down
// elimination; otherwise the first row by the bottom-up one, the same elimination on the
// block's rows reversed (a and c trading places, and v and w). weak |= a pivot was weak
// (partition_weak_pivot).
template <class T, int M, bool Down, class Row>
ADI_PIVOT_HD void partition_end(Row row, T& y, T& v, T& w, bool& bad, bool& weak) {
  static_assert(M >= 3, "a partition needs a separator and two interior rows");
  // Row j of the elimination's order (1 .. M-1): its coupling `a` points to the end it
  // started from.
  auto get = [&](int j) {
    const PartitionRowValues<T> r = row(Down ? j : M - j);
    return Down ? r : PartitionRowValues<T>{r.c, r.b, r.a, r.d};
  };
  const PartitionRowValues<T> r1 = get(1);
  PivotRow<T> s{r1.b, r1.c, r1.d};
  T near = r1.a, far = T(0);  // the right-hand sides of the start side's and far side's separators
  T scale = larger(magnitude(r1.b), magnitude(r1.c));
ADI_PIVOT_UNROLL
  for (int j = 2; j < M; ++j) {
    const PartitionRowValues<T> rj = get(j);
    const bool last = j == M - 1;
    scale = larger(scale, larger(magnitude(rj.a), magnitude(rj.b)));
    const auto p = pivot_choose<T>(s, rj.a, rj.b, last ? T(0) : rj.c);
    bad |= !finite_value(p.r);
    weak |= partition_weak_pivot<T>(p.piv, scale);
    pivot_rhs(p, s.d, rj.d);
    pivot_rhs(p, near, T(0));
    pivot_rhs(p, far, last ? rj.c : T(0));
  }
  const T r = pivot_reciprocal<T>(s.b);
  bad |= !finite_value(r);
  weak |= partition_weak_pivot<T>(s.b, scale);
  y = s.d * r;
  (Down ? v : w) = near * r;
  (Down ? w : v) = far * r;
}

// The last row of block I_k (y, v, w) by the top-down elimination.
template <class T, int M, class Row>
ADI_PIVOT_HD void partition_last(Row row, T& yL, T& vL, T& wL, bool& bad, bool& weak) {
  partition_end<T, M, true>(row, yL, vL, wL, bad, weak);
}

// The first row of block I_k (y, v, w) by the bottom-up elimination.
template <class T, int M, class Row>
ADI_PIVOT_HD void partition_first(Row row, T& yF, T& vF, T& wF, bool& bad, bool& weak) {
  partition_end<T, M, false>(row, yF, vF, wF, bad, weak);
}

// Reduced row k from separator row (a, b, c | d) of partition k, the last-row values of
// partition k-1 (zero for k = 0, where a is 0 too) and the first-row values of partition k:
// A x_{s_{k-1}} + B x_{s_k} + C x_{s_{k+1}} = D.
template <class T>
ADI_PIVOT_HD PartitionRowValues<T> partition_reduced_row(const PartitionRowValues<T>& sep, T yL, T vL, T wL, T yF,
                                                         T vF, T wF) {
  return {-(sep.a * vL), sep.b - sep.a * wL - sep.c * vF, -(sep.c * wF), sep.d - sep.a * yL - sep.c * yF};
}

// (2): a reduced row that is not diagonally dominant (see partition_spike_unsafe).
template <class T>
ADI_PIVOT_HD bool partition_reduced_unsafe(const PartitionRowValues<T>& r) {
  return !(magnitude(r.a) + magnitude(r.c) <= T(1 + kPartitionDominanceSlack) * magnitude(r.b));
}

// The dominance test of partition k: its block's spike tips at both ends (partition_first's vF,
// wF, partition_last's vL, wL) and its separator's reduced row r.
template <class T>
ADI_PIVOT_HD bool partition_dominance_unsafe(T vF, T wF, T vL, T wL, const PartitionRowValues<T>& r) {
  return partition_spike_unsafe<T>(vF, wF) || partition_spike_unsafe<T>(vL, wL) || partition_reduced_unsafe<T>(r);
}

// With x_{s_k} = x0 and x_{s_{k+1}} = x1 known, the block solved again (one right-hand
// side, its ends moved over): x[0] = x0, x[1 .. M-1] the block's solution.
template <class T, int M, class Row>
ADI_PIVOT_HD void partition_solve(Row row, T x0, T x1, T (&x)[M], bool& bad) {
  T u1[M], u2[M];
  const PartitionRowValues<T> r1 = row(1);
  PivotRow<T> s{r1.b, r1.c, r1.d - r1.a * x0};
ADI_PIVOT_UNROLL
  for (int i = 2; i < M; ++i) {
    const PartitionRowValues<T> ri = row(i);
    const bool last = i == M - 1;
    const PivotOut<T> o = pivot_step<T>(s, ri.a, ri.b, last ? T(0) : ri.c, last ? ri.d - ri.c * x1 : ri.d);
    bad |= !finite_value(o.r);
    u1[i - 1] = o.u1;
    u2[i - 1] = o.u2;
    x[i - 1] = o.y;
  }
  const PivotOut<T> o = pivot_last<T>(s);
  bad |= !finite_value(o.r);
  x[M - 1] = o.y;
  T xa = o.y, xb = T(0);
ADI_PIVOT_UNROLL
  for (int i = M - 2; i >= 1; --i) {
    const T xi = x[i] - u1[i] * xa - u2[i] * xb;
    xb = xa;
    xa = xi;
    x[i] = xi;
  }
  x[0] = x0;
}

// Iterative refinement of flagged lines (stop 34, branch h-refine): one row's residual
// d - (a xm + b x + c xp) (xm, xp: the neighbours' values, 0 past the line's ends, where a or c
// is 0 anyway), carried beyond T's precision and rounded to T once. One refinement step with a
// residual in T does not help the partition route (up to 147x LAPACK, docs/pivoting.md "Stop 34");
// in higher precision it brings every line to 0.001-0.3x LAPACK's error.
//   fp32: in fp64 (the products are exact there, three roundings of 2^-53 in the sums);
//   fp64: the compensated dot product (Ogita, Rump & Oishi's Dot2): every product split
//   exactly into h + l by an fma, every sum by Knuth's two-sum, the errors summed: as accurate
//   as the residual in twice the working precision, then rounded.
// The product h must be rounded on its own (never contracted into the sum that follows):
// __dmul_rn on the device, a volatile on the host (tests and host prototypes only).
ADI_PIVOT_HD double refine_product_rn(double p, double q) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(p, q);
#else
  volatile double h = p * q;
  return h;
#endif
}

ADI_PIVOT_HD double refine_fma(double p, double q, double r) {
#if defined(__CUDA_ARCH__)
  return ::fma(p, q, r);
#else
  return std::fma(p, q, r);
#endif
}

// s - p q, with the rounding errors of the product and of the difference added to e.
ADI_PIVOT_HD void refine_subtract_product(double& s, double& e, double p, double q) {
  const double h = refine_product_rn(p, q);
  const double l = refine_fma(p, q, -h);  // p q = h + l exactly
  const double t = s - h;
  const double z = t - s;
  e += ((s - (t - z)) - (h + z)) - l;  // two-sum: s - h = t + that, exactly
  s = t;
}

// The elements the refinement's residual (solvers/cuda/pivoting_partition.cuh,
// pivoting_partition_residual_kernel) reads and writes for element i = line * n + row of a dense
// layout's rows: e (d[e], x[e], r[e]; x[e - stride] unless first, x[e + stride] unless last) and
// ce (a[ce] unless first, b[ce], c[ce] unless last: the row itself for shared bands).
// PivotingPartition.RefineResidualIndicesInBounds checks them on the host (stop 35).
struct RefineRowIndex {
  long long e, ce;
  bool first, last;
};
template <class Lines>
ADI_PIVOT_HD RefineRowIndex refine_row_index(const Lines& L, long long i, bool shared) {
  const long long line = i / L.n, row = i - line * L.n;
  const long long e = L.offset(line) + row * L.stride;
  return {e, shared ? row : e, row == 0, row == L.n - 1};
}

template <class T>
ADI_PIVOT_HD T refine_residual(T a, T b, T c, T d, T xm, T x, T xp) {
  if constexpr (sizeof(T) < sizeof(double)) {
    const double r = ((static_cast<double>(d) - static_cast<double>(a) * static_cast<double>(xm)) -
                      static_cast<double>(b) * static_cast<double>(x)) -
                     static_cast<double>(c) * static_cast<double>(xp);
    return static_cast<T>(r);
  } else {
    double s = d, e = 0;
    refine_subtract_product(s, e, a, xm);
    refine_subtract_product(s, e, b, x);
    refine_subtract_product(s, e, c, xp);
    return static_cast<T>(s + e);
  }
}

}  // namespace adi::common
