#pragma once
// The partition method's row arithmetic, written once: a segment (chunk) of a tridiagonal
// line is eliminated by Thomas with its end rows kept as unknowns, so every row is
// expressed through the segment's ends and the ends form a smaller (reduced) system.
// Every partition solver runs these steps: the large-system solver
// (solvers/common/partition_large_math.hpp: host SIMD lanes and CUDA threads), the MPI
// partition passes (adi/mpi/distributed_tridiagonal.cpp on the host,
// solvers/cuda/partition_local_passes.cu on the device) and the Thomas-PCR hybrid's
// segments (solvers/cuda/pcr_warp_core.cuh, pcr_segment_registers.cuh).
//
// Sweeping rows s+1 .. with x_s as a parameter writes row i as
//     x_i + cp_i x_{i+1} + l_i x_s = dp_i,   l_i = -(a_i l_{i-1}) r_i   (l_s = -1),
// cp, dp, r the Thomas recurrence of thomas_core.hpp (partition_row). Substituting rows
// s+1 .. into row s as the sweep goes (products P_i = -(cp_i P_{i-1}), sums G and K:
// partition_accumulate) leaves row s coupled to x_s and the segment's last row only. The
// backward sweep carries the coupling to the right end the same way (partition_carry),
// and the last pass fills x_i = d'_i - a'_i x_left - c'_i x_right (partition_fill).
#include <limits>
#include <type_traits>

#include "solvers/common/thomas_core.hpp"

namespace adi::common {

// The coupling of row i to the left end after the forward sweep, l_i = -(a_i l_{i-1}) r_i
// (the first row after the end starts from l = -1, giving a r) ...
template <class V, class R>
ADI_THOMAS_HD V partition_spike(V a, V l_prev, R r) {
  return -(a * l_prev) * r;
}
// ... and the product -(c*_i p) that carries a coupling to the right end through row i
// (backward: the right spike c''_i = -(c*_i c''_{i+1}); forward: the running product of
// the reduced row, p_i = -(c*_i p_{i-1})).
template <class V>
ADI_THOMAS_HD V partition_carry(V cs, V p) {
  return -(cs * p);
}

// The partition method's last pass: a row eliminated in terms of its segment's ends,
// x_i = d'_i - a'_i x_left - c'_i x_right.
template <class V, class C>
ADI_THOMAS_HD V partition_fill(V d, C a, V x_left, C c, V x_right) {
  return d - a * x_left - c * x_right;
}

// One row of the sweep: given r = 1/pivot (thomas_pivot(a, b, cp)), cp, dp and l move to
// row i.
template <class V, class R>
ADI_THOMAS_HD void partition_row(V a, V c, V d, R r, V& cp, V& dp, V& l) {
  cp = c * r;
  dp = thomas_eliminate(d, a, dp, r);
  l = partition_spike(a, l, r);
}

// Row i substituted into the segment's first row: G += P dp_i, K += P l_i, P = -(cp_i P).
template <class V>
ADI_THOMAS_HD void partition_accumulate(V cp, V dp, V l, V& G, V& K, V& P) {
  G = G + P * dp;
  K = K + P * l;
  P = partition_carry(cp, P);
}

// The segment's first row once rows s+1 .. e-2 are substituted into it (a keeps its
// coupling to the previous segment): (b - c K) x_s + (c P) x_{e-1} = d - c G.
template <class V>
ADI_THOMAS_HD void partition_first_row(V b, V c, V d, V G, V K, V P, V& bF, V& cF, V& dF) {
  bF = b - c * K;
  cF = c * P;
  dF = d - c * G;
}

// The segment's last row e-1 with row e-2 substituted, left unscaled (the MPI passes; the
// large-system solver divides it by its pivot, partition_row):
// -(a l) x_s + (b - a cp) x_{e-1} + c x_e = d - a dp.
template <class V>
ADI_THOMAS_HD void partition_last_row(V a, V b, V d, V cp, V dp, V l, V& aE, V& bE, V& dE) {
  aE = -(a * l);
  bE = thomas_pivot(a, b, cp);
  dE = d - a * dp;
}

// The SPIKE form of a segment with shared bands (adi/mpi: DistributedOptions::device_spike).
// The segment's rows 0..m-1 with its ends cut (A: a_0 = c_{m-1} = 0) give
//     x = y - (a_0 x_{-1}) W - (c_{m-1} x_m) Z,   A y = d, W = A^{-1} e_0, Z = A^{-1} e_{m-1}.
// spike_vector: W (left) or Z into x by Thomas, cs m values of scratch; a_0 and c_{m-1} are not
// read. a, b, c, x, cs: pointers or anything indexed like them (Strided: one line of a box).
// Rows are loaded K at a time ahead of their use (registers; both sweeps), so that a GPU thread
// has K rows' loads in flight instead of one (the stores between would otherwise keep every
// load behind the previous row's: the compiler cannot know that they do not alias).
#if defined(__CUDACC__)
#define ADI_SPIKE_UNROLL _Pragma("unroll")
#else
#define ADI_SPIKE_UNROLL
#endif
template <int K = 8, class I, class Band, class X, class Cs>
ADI_THOMAS_HD void spike_vector(I m, const Band& a, const Band& b, const Band& c, bool left, const X& x,
                                const Cs& cs) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(x[0])>>;
  T r = T(1) / b[0];
  T csp = m > 1 ? c[0] * r : T(0), xp = left ? r : T(0);  // row i-1's cs and x
  cs[0] = csp;
  x[0] = xp;
  for (I i0 = 1; i0 < m; i0 += K) {
    T ra[K] = {}, rb[K] = {}, rc[K] = {};
    ADI_SPIKE_UNROLL
    for (int k = 0; k < K; ++k)
      if (i0 + k < m) ra[k] = a[i0 + k], rb[k] = b[i0 + k], rc[k] = c[i0 + k];
    ADI_SPIKE_UNROLL
    for (int k = 0; k < K; ++k) {
      const I i = i0 + k;
      if (i < m) {
        r = T(1) / thomas_pivot(ra[k], rb[k], csp);
        csp = i < m - 1 ? rc[k] * r : T(0);
        xp = thomas_eliminate(!left && i == m - 1 ? T(1) : T(0), ra[k], xp, r);
        cs[i] = csp;
        x[i] = xp;
      }
    }
  }
  // backward: x_i = x_i - cs_i x_{i+1}, rows m-2 .. 0, K at a time
  for (I i0 = m - 2; i0 >= 0; i0 -= K) {
    T rx[K] = {}, rs[K] = {};
    ADI_SPIKE_UNROLL
    for (int k = 0; k < K; ++k)
      if (i0 - k >= 0) rx[k] = x[i0 - k], rs[k] = cs[i0 - k];
    ADI_SPIKE_UNROLL
    for (int k = 0; k < K; ++k)
      if (i0 - k >= 0) x[i0 - k] = xp = thomas_substitute(rx[k], rs[k], xp);
  }
}
#undef ADI_SPIKE_UNROLL

// How far the spikes reach (the truncated SPIKE form, exact to rounding): rows i >= lo have
// |W_i| <= tol max|W| and rows i < hi have |Z_i| <= tol max|Z|, so rows lo <= i < hi keep y_i
// (their correction is below tol relative to the couplings'; tol well below the precision's
// epsilon). With diagonally dominant bands the spikes decay geometrically: an ADI stage's
// reach a few dozen rows from each end, the back pass then touches only those.
// The tolerance every caller of spike_reach passes: a thousandth of the precision's epsilon.
template <class T>
constexpr T kSpikeTol = T(1e-3) * std::numeric_limits<T>::epsilon();
template <class T, class I, class VW, class VZ>
ADI_THOMAS_HD void spike_reach(I m, const VW& W, const VZ& Z, T tol, I& lo, I& hi) {
  auto mag = [](T v) { return v < T(0) ? -v : v; };
  T wmax = T(0), zmax = T(0);
  for (I i = 0; i < m; ++i) {
    wmax = mag(W[i]) > wmax ? mag(W[i]) : wmax;
    zmax = mag(Z[i]) > zmax ? mag(Z[i]) : zmax;
  }
  // (whole passes, no early exit: a GPU thread's loads do not wait for each other's compares)
  lo = 0;
  hi = m;
  for (I i = m - 1; i >= 0; --i) {
    if (lo == 0 && mag(W[i]) > tol * wmax) lo = i + 1;  // W above tol in rows < lo
    if (mag(Z[i]) > tol * zmax) hi = i;                  // Z above tol in rows >= hi
  }
}

// The rows the back pass corrects, [0, top) and [bottom, m): W reaches rows [0, lo) from a cut
// first end, Z rows [hi, m) from a cut last end (spike_reach). An end that is the line's own
// (open: its coupling A or C is 0, spike_couplings) corrects nothing, so a rank at the end of
// its lines reads and writes one end's rows, not two.
template <class I>
ADI_THOMAS_HD void spike_corrected_rows(I m, I lo, I hi, bool first_open, bool last_open, I& top, I& bottom) {
  top = first_open ? I(0) : lo;
  bottom = last_open ? m : (hi > top ? hi : top);
}

// The segment's two rows of the reduced system (a, b, c, d of row 0, then of row m-1, as the
// partition passes write them, equal to theirs up to scaling) from the ends of y, W, Z: with
// rho = Z_0 / Z_{m-1} (0 at the line's last end) and sigma = W_{m-1} / W_0 (0 at its first),
//   row 0:   a_0 (W_0 - rho W_{m-1}) x_{-1} + x_0 - rho x_{m-1} = y_0 - rho y_{m-1}
//   row m-1: -sigma x_0 + x_{m-1} + c_{m-1} (Z_{m-1} - sigma Z_0) x_m = y_{m-1} - sigma y_0
// (x_0 + W_0 A + Z_0 C = y_0 with C eliminated by row m-1's equation, and the reverse;
// A = a_0 x_{-1}, C = c_{m-1} x_m).
template <class T>
ADI_THOMAS_HD void spike_rows(T W0, T W1, T Z0, T Z1, T a0, T c1, T y0, T y1, bool first_open, bool last_open,
                              T* r) {
  const T rho = last_open ? T(0) : Z0 / Z1, sigma = first_open ? T(0) : W1 / W0;
  r[0] = first_open ? T(0) : a0 * (W0 - rho * W1);
  r[1] = T(1);
  r[2] = -rho;
  r[3] = y0 - rho * y1;
  r[4] = -sigma;
  r[5] = T(1);
  r[6] = last_open ? T(0) : c1 * (Z1 - sigma * Z0);
  r[7] = y1 - sigma * y0;
}

// The couplings A = a_0 x_{-1}, C = c_{m-1} x_m from the segment's solved ends:
// W_0 A + Z_0 C = e0 = y_0 - x_0, W_{m-1} A + Z_{m-1} C = e1 = y_{m-1} - x_{m-1} (no A at the
// line's first end, no C at its last). Then every row is partition_fill(y_i, W_i, A, Z_i, C).
template <class T>
ADI_THOMAS_HD void spike_couplings(T W0, T W1, T Z0, T Z1, T e0, T e1, bool first_open, bool last_open, T& A,
                                   T& C) {
  A = C = T(0);
  if (first_open && last_open) return;
  if (first_open) {
    C = e1 / Z1;
  } else if (last_open) {
    A = e0 / W0;
  } else {
    const T det = W0 * Z1 - Z0 * W1;
    A = (e0 * Z1 - Z0 * e1) / det;
    C = (W0 * e1 - W1 * e0) / det;
  }
}

// One line of a box seen as an array: p[i * s] (rows of a line along y or z; a per-line window
// of W or Z stored row-major over lines, s = the number of lines).
template <class T, class I>
struct Strided {
  T* p;
  I s;
  ADI_THOMAS_HD T& operator[](I i) const { return p[i * s]; }
  ADI_THOMAS_HD Strided from(I k) const { return {p + k * s, s}; }  // rows k, k+1, ...
};

// The SPIKE form of a segment whose bands are its own (per line: Bands, the public case), truncated
// (stop 35): of the segment's m rows (A its matrix with the ends cut) W = A^{-1} e_0 is wanted on
// the rows it reaches from the first end, Z = A^{-1} e_{m-1} on those from the last. With R < m
// rows, W (left) is computed on the window of the first R rows alone (A's leading R x R block: row
// R-1's coupling c_{R-1} W_R dropped), Z on the last R rows alone, each by spike_vector: a sweep of
// R rows each way instead of m; v[0..R) = W's rows 0..R-1, or Z's rows m-R .. m-1. The dropped
// coupling changes the window's row i by (prod over rows i..R-1 of -cs) W_R: below the tolerance
// where W has decayed below it before the window ends (diagonally dominant rows: |cs| < 1, |W|
// decreasing). Checked per line and end: valid when the spike's reach (spike_reach) stops `guard`
// rows before the window's far end and every value is finite; otherwise the caller must not use
// the truncated spikes (DistributedTridiagonalPlan falls back to the partition passes). R == m:
// the exact spike (nothing dropped; valid when finite). reach: W above tol in rows < reach, or Z
// in rows >= reach (the segment's rows). Outside the windows the spikes are 0 (spike_at).
template <class I, class Band, class X>
ADI_THOMAS_HD bool spike_window(I m, I R, I guard, bool left, const Band& a, const Band& b, const Band& c,
                                const X& v, const X& cs, I& reach) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(v[0])>>;
  const I s = left ? I(0) : m - R;
  spike_vector(R, a.from(s), b.from(s), c.from(s), left, v, cs);
  I lo = 0, hi = 0;
  spike_reach(R, v, v, kSpikeTol<T>, lo, hi);
  T sum = T(0);
  for (I i = 0; i < R; ++i) sum = sum + v[i];
  reach = left ? lo : m - R + hi;
  const bool finite = sum - sum == T(0);
  return finite && (R == m || (left ? lo + guard <= R : hi >= guard));
}
// The guard rows of a window of R rows (spike_window): an eighth of it.
template <class I>
ADI_THOMAS_HD I spike_guard(I R) {
  return R / 8 > 0 ? R / 8 : I(1);
}
// The spikes of a segment at row i from spike_window's windows (0 outside them).
template <class T, class I, class X>
ADI_THOMAS_HD void spike_at(I m, I R, const X& W, const X& Z, I i, T& w, T& z) {
  w = i < R ? W[i] : T(0);
  z = i >= m - R ? Z[i - (m - R)] : T(0);
}

}  // namespace adi::common
