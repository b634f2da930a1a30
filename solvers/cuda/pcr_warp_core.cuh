#pragma once
// The Thomas-PCR hybrid for one line, solved by one warp out of shared memory (paper
// section 2.3, algorithms 3-5; the warp form of algorithm 10). Used by the X kernel
// (thomas_pcr_hybrid.cuh) and the Y/Z kernel (thomas_pcr_strided.cuh), which differ
// only in how the line reaches shared memory.
//
// Lane s owns the rows [s*m, s*m + len) of the line, m = 2^k the smallest power of two
// with 32*m >= n (so S = ceil(n/m) <= 32 lanes are busy). The last row of each segment
// is a separator; the len-1 rows before it are interior. A modified Thomas sweep
// (forward then backward, algorithm 3) writes every interior row as
//     u_i = d'_i - a'_i x_{s-1} - c'_i x_s,
// x_s being the separator of segment s. Substituting the neighbouring interior rows
// into each separator row leaves one tridiagonal row per lane: the reduced system of
// S unknowns, solved by PCR with warp shuffles (log2 S steps, algorithm 4). A last
// pass fills the interior rows (algorithm 5). Compared with the paper's two boundary
// rows per segment this reduced system has half the rows, so PCR needs one step less.
//
// Everything stays in shared memory (a, b, c, d overwritten in place by a', c', d'),
// so a line is read from global memory once and written once, for any n up to the
// shared-memory limit, with no compile-time line length. Row r lives at r + r/m: each
// segment gets m+1 slots, an odd stride for even m, so the 32 lanes walking their
// segments hit 32 different banks.
//
// Periodic lines: segment 0's first row couples to the last separator and the last
// separator to segment 0's first interior row, so the reduced system is cyclic; it is
// solved by Sherman-Morrison with a second right-hand side inside the same PCR.
//
// SharedBands: everything that depends only on a, b, c (pivots, a', c', the reduced
// matrix and its PCR factors, the periodic correction vector) is computed once per
// block by pcr_factorize_shared; a line then streams only d.
#include "solvers/cuda/tridiagonal_common.cuh"
#include "solvers/common/thomas_check.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/partition_core.hpp"
#include "solvers/common/pcr_core.hpp"

namespace adi::cuda_backend::kernels {

struct PcrShape {
  int n = 0;
  int log2m = 0;
  int m = 1;
  int segs = 1;      // busy lanes, S
  int per_line = 0;  // shared-memory slots of one line array: segs*(m+1)
  __host__ __device__ int pos(int r) const { return r + (r >> log2m); }
};

// min_m: segments of at least this many rows (fewer segments per line).
inline PcrShape pcr_shape(i64 n, int min_m = 1) {
  PcrShape s;
  s.n = static_cast<int>(n);
  while ((static_cast<i64>(kWarp) << s.log2m) < n || (1 << s.log2m) < min_m) ++s.log2m;
  s.m = 1 << s.log2m;
  s.segs = static_cast<int>((n + s.m - 1) / s.m);
  s.per_line = s.segs * (s.m + 1);
  return s;
}

// Longest line the hybrid kernels take: 32 lanes x 128 rows. Beyond this the per-line
// shared memory (4 arrays) no longer leaves room for more than one warp per SM.
constexpr i64 kPcrMaxN = 4096;

// PCR factors of the reduced system: reciprocal diagonal, then (r, a, c) for each of at
// most 5 steps, then the periodic correction z; one value per lane each.
constexpr int kPcrReducedRows = 1 + 3 * 5 + 1;
constexpr int kPcrReducedValues = kPcrReducedRows * kWarp + 2;  // + q, 1/den

// Per-row factors of the shared bands, same layout as a line (PcrShape::pos).
//   interior row: f0 = 1/pivot, f1 = a/pivot, f2 = forward c', f3 = a'', f4 = c''
//   separator:    f0 = a, f1 = c (to form the reduced right-hand side)
template <class T>
struct PcrFactors {
  T* f[5];
  T* red;  // kPcrReducedValues
  __device__ static PcrFactors carve(T* base, int per_line) {
    PcrFactors F;
    for (int k = 0; k < 5; ++k) F.f[k] = base + k * per_line;
    F.red = base + 5 * per_line;
    return F;
  }
  __host__ __device__ static int values(int per_line) { return 5 * per_line + kPcrReducedValues; }
};

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarp; }

// PCR on a system held one row per lane (lanes >= S hold identity rows) with R
// right-hand sides; leaves the solutions in D. With Record, stores the factors that
// pcr_reduced_shared replays.
// `width` (a power of two >= S) lets one warp solve 32/width systems at once, one per
// group of width lanes.
// Check (issue 23, the device's stability check of PCR): the unit-diagonal rows' couplings
// a, c are PCR's multipliers (each level subtracts a times row s-h and c times row s+h), so
// every level tests |a|, |c| <= kThomasGrowth (common::thomas_unsafe_on_device, one compare
// each with an absolute-value operand), as the Thomas loops test c*. Row diagonally dominant
// systems keep |a| + |c| < 1 at every level (PCR preserves row dominance: |den| >
// 1 - |a||c_{-h}| - |c||a_{+h}| exceeds |a||a_{-h}| + |c||c_{+h}|), so it never fires there;
// on the issue's cases it fires at once (b = 1e-8, a = c = 1: |a| = 1e8; Toeplitz b = 1,
// a = c = 0.6: the couplings reach 18-160 by the third level). Measured on the host with
// the same recurrence (scripts in docs/pivoting.md): every line of the pivoting tests'
// families (tiny diagonal, random signs, Toeplitz, n = 1 .. 257, periodic or not, fp32 and
// fp64) that the hybrid solves worse than 10x LAPACK is caught by it or the segment sweeps'
// test, but for random-sign lines of 2 and 3 rows (10-21x LAPACK's error, within eps cond).
// Check = false: the fused ADI stage's factors (thomas_pcr_fused_stage.cuh), unchanged.
template <class T, int R, bool Record, bool Check = true>
__device__ void pcr_reduced(T A, T B, T C, T (&D)[R], int S, bool& bad, T* rec = nullptr, int width = kWarp) {
  const int lane = lane_id() & (width - 1);
  bad |= lane < S && bad_pivot(B);
  const T rb = recip(B);
  T a = A * rb, c = C * rb;
  // Check: OR-ed over the levels and masked to the busy lanes once after them, with bitwise
  // operators: `bad |= lane < S && (.. || ..)` per level made nvcc branch around the tests (two
  // divergent branch regions per instance, stop 32; the same fire condition).
  bool unsafe = false;
  if (Check) unsafe = common::thomas_unsafe_on_device(a) | common::thomas_unsafe_on_device(c);
#pragma unroll
  for (int k = 0; k < R; ++k) D[k] *= rb;
  if (Record) rec[lane] = rb;
  int step = 0;
  for (int h = 1; h < S; h <<= 1, ++step) {
    T am = __shfl_up_sync(kFullMask, a, h, width), cm = __shfl_up_sync(kFullMask, c, h, width);
    T ap = __shfl_down_sync(kFullMask, a, h, width), cp = __shfl_down_sync(kFullMask, c, h, width);
    T dm[R], dp[R];
#pragma unroll
    for (int k = 0; k < R; ++k) {
      dm[k] = __shfl_up_sync(kFullMask, D[k], h, width);
      dp[k] = __shfl_down_sync(kFullMask, D[k], h, width);
    }
    if (lane < h) {
      am = cm = T(0);
#pragma unroll
      for (int k = 0; k < R; ++k) dm[k] = T(0);
    }
    if (lane + h >= width) {
      ap = cp = T(0);
#pragma unroll
      for (int k = 0; k < R; ++k) dp[k] = T(0);
    }
    // Unit-diagonal rows: k_lo = -a, k_hi = -c (solvers/common/pcr_core.hpp).
    const T den = common::pcr_combine_unit(T(1), a, cm, c, ap);
    // PCR's row combination grows like Thomas's elimination (thomas_check.hpp): the rows are
    // scaled to a unit diagonal, the growth is |a c_{-h}| + |c a_{+h}|.
    bad |= lane < S && (bad_pivot(den) || common::thomas_unsafe<T>(common::magnitude(a * cm) +
                                                                        common::magnitude(c * ap),
                                                                    a, T(1), c));
    const T r = recip(den);
    if (Record) {
      rec[(1 + 3 * step) * kWarp + lane] = r;
      rec[(2 + 3 * step) * kWarp + lane] = a;
      rec[(3 + 3 * step) * kWarp + lane] = c;
    }
#pragma unroll
    for (int k = 0; k < R; ++k) D[k] = common::pcr_combine_unit(D[k], a, dm[k], c, dp[k]) * r;
    const T an = -a * am * r, cn = -c * cp * r;
    a = an;
    c = cn;
    if (Check) unsafe |= common::thomas_unsafe_on_device(a) | common::thomas_unsafe_on_device(c);
  }
  if (Check) bad |= (lane < S) & unsafe;
}

// The reduced system (A x_{s-1} + B x_s + C x_{s+1} = D on lane s), cyclic when periodic.
template <class T>
__device__ T reduced_solve(T A, T B, T C, T D, int S, bool periodic, bool& bad, int width = kWarp) {
  const int lane = lane_id() & (width - 1);
  if (!periodic || S == 1) {
    if (periodic) {  // one unknown that couples to itself on both sides
      bad |= common::singular_self_coupled<T>(A, B, C);
      B = A + B + C;
      A = C = T(0);
    }
    T dd[1] = {D};
    pcr_reduced<T, 1, false>(A, B, C, dd, S, bad, nullptr, width);
    return dd[0];
  }
  // Sherman-Morrison (as in solvers/reference/thomas.hpp) on the cyclic reduced system.
  const T A0 = __shfl_sync(kFullMask, A, 0, width), B0 = __shfl_sync(kFullMask, B, 0, width);
  const T CS = __shfl_sync(kFullMask, C, S - 1, width);
  const auto split = common::PeriodicSplit<T>::checked(A0, B0, CS, [&](T gamma) { bad |= bad_pivot(gamma); });
  T v = T(0);
  if (lane == 0) {
    B = split.b_first(B);
    A = T(0);
    v = split.gamma;
  }
  if (lane == S - 1) {
    B = split.b_last(B);
    C = T(0);
    v = CS;
  }
  T dd[2] = {D, v};
  pcr_reduced<T, 2, false>(A, B, C, dd, S, bad, nullptr, width);
  const T y0 = __shfl_sync(kFullMask, dd[0], 0, width), yl = __shfl_sync(kFullMask, dd[0], S - 1, width);
  const T z0 = __shfl_sync(kFullMask, dd[1], 0, width), zl = __shfl_sync(kFullMask, dd[1], S - 1, width);
  const T den = split.den(z0, zl);
  bad |= bad_pivot(den) || common::singular_cyclic<T>(den, z0, split.qz(zl));
  return split.correct(dd[0], split.factor(y0, yl, den), dd[1]);
}

// Solves one line whose a, b, c, d sit in shared memory at PcrShape::pos; leaves u in
// sd. Non-periodic lines must have a_0 = c_{n-1} = 0 already. Called by a whole warp.
template <class T>
__device__ void pcr_line(const PcrShape& sh, T* sa, const T* sb, T* sc, T* sd, bool periodic, bool& bad) {
  const int lane = lane_id();
  const int st = lane << sh.log2m;
  const int len = max(0, min(sh.m, sh.n - st));
  const int base = lane * (sh.m + 1);
  const int S = sh.segs;
  // Last interior row (u = Ld - La x_{s-1} - Lg x_s) and first interior row (F*) of
  // the segment; an empty interior makes them x_{s-1} and x_s themselves.
  T Ld = T(0), La = T(0), Lg = T(0), Fd = T(0), Fa = T(0), Fg = T(0);
  if (len >= 2) {
    T piv = sb[base];
    bad |= bad_pivot(piv);
    T r = recip(piv);
    T g = sc[base] * r, al = sa[base] * r, de = sd[base] * r;
    bad |= common::thomas_unsafe_on_device(g);  // the segment's first multiplier too
    sa[base] = al;
    sc[base] = g;
    sd[base] = de;
    for (int j = 1; j < len - 1; ++j) {
      const T aj = sa[base + j];
      piv = common::thomas_pivot(aj, sb[base + j], g);
      bad |= bad_pivot(piv) || common::thomas_unsafe<T>(aj * g, aj, sb[base + j], sc[base + j]);
      r = recip(piv);
      g = sc[base + j] * r;
      bad |= common::thomas_unsafe_on_device(g);
      al = common::partition_spike(aj, al, r);
      de = common::thomas_eliminate(sd[base + j], aj, de, r);
      sa[base + j] = al;
      sc[base + j] = g;
      sd[base + j] = de;
    }
    Ld = de;
    La = al;
    Lg = g;
    for (int j = len - 3; j >= 0; --j) {
      const T gj = sc[base + j];
      de = common::thomas_substitute(sd[base + j], gj, de);
      al = common::thomas_substitute(sa[base + j], gj, al);
      g = common::partition_carry(gj, g);
      sa[base + j] = al;
      sc[base + j] = g;
      sd[base + j] = de;
    }
    Fd = de;
    Fa = al;
    Fg = g;
  } else if (len == 1) {
    La = T(-1);
    Fg = T(-1);
  }
  const int e = base + len - 1;
  T ae = T(0), be = T(1), ce = T(0), dv = T(0);
  if (len >= 1) {
    ae = sa[e];
    be = sb[e];
    ce = sc[e];
    dv = sd[e];
  }
  const int nxt = lane + 1 < S ? lane + 1 : 0;
  const T nFd = __shfl_sync(kFullMask, Fd, nxt), nFa = __shfl_sync(kFullMask, Fa, nxt);
  const T nFg = __shfl_sync(kFullMask, Fg, nxt);
  T A = -ae * La, B = be - ae * Lg - ce * nFa, C = -ce * nFg, D = dv - ae * Ld - ce * nFd;
  if (len == 0) {
    A = C = D = T(0);
    B = T(1);
  }
  const T x = reduced_solve(A, B, C, D, S, periodic, bad);
  const T xl = __shfl_sync(kFullMask, x, lane == 0 ? S - 1 : lane - 1);
  if (len >= 1) {
    for (int j = 0; j < len - 1; ++j) sd[base + j] = common::partition_fill(sd[base + j], sa[base + j], xl, sc[base + j], x);
    sd[e] = x;
  }
}

// Factorises shared bands a, b, c (global, length n) for pcr_line_shared. One warp.
// Check: the device's stability check on the factors (issue 23): every multiplier c* of the
// segment sweeps and the reduced system's PCR couplings (pcr_reduced), once per block, so
// the shared-band lines of the Thomas-PCR hybrids are checked like per-line ones at no cost
// per line. The hybrids pass true; the fused ADI stage (thomas_pcr_fused_stage.cuh) keeps
// the default, false: its machine code stays as measured (docs/pivoting.md, the audit).
// Tail (stop 47, the lean X kernels' tail; not periodic): the bands hold rows rows < sh.n; rows
// rows .. sh.n - 1 are identity rows (a = c = 0, b = 1) and c of row rows - 1 is zero, so the sh.n-row
// system splits into the line's and a block that solves to zero.
template <class T, bool Check = false, bool Tail = false>
__device__ void pcr_factorize_shared(const PcrShape& sh, const T* a, const T* b, const T* c, bool periodic,
                                     const PcrFactors<T>& F, bool& bad, int rows = 0) {
  const int lane = lane_id();
  const int n = sh.n;
  const int st = lane << sh.log2m;
  const int len = max(0, min(sh.m, n - st));
  const int base = lane * (sh.m + 1);
  const int S = sh.segs;
  auto A_ = [&](int r) { return (r == 0 && !periodic) || (Tail && r >= rows) ? T(0) : a[r]; };
  auto B_ = [&](int r) { return Tail && r >= rows ? T(1) : b[r]; };
  auto C_ = [&](int r) { return (r == (Tail ? rows : n) - 1 && !periodic) || (Tail && r >= rows) ? T(0) : c[r]; };
  T *f0 = F.f[0], *f1 = F.f[1], *f2 = F.f[2], *f3 = F.f[3], *f4 = F.f[4];
  T La = T(0), Lg = T(0), Fa = T(0), Fg = T(0);
  if (len >= 2) {
    T piv = B_(st);
    bad |= bad_pivot(piv);
    T r = recip(piv);
    T g = C_(st) * r, al = A_(st) * r;
    if (Check) bad |= common::thomas_unsafe_on_device(g);
    f0[base] = r;
    f1[base] = T(0);
    f2[base] = g;
    f3[base] = al;
    for (int j = 1; j < len - 1; ++j) {
      const T aj = A_(st + j);
      piv = common::thomas_pivot(aj, B_(st + j), g);
      bad |= bad_pivot(piv) || common::thomas_unsafe<T>(aj * g, aj, B_(st + j), C_(st + j));
      r = recip(piv);
      g = C_(st + j) * r;
      if (Check) bad |= common::thomas_unsafe_on_device(g);
      al = common::partition_spike(aj, al, r);
      f0[base + j] = r;
      f1[base + j] = aj * r;
      f2[base + j] = g;
      f3[base + j] = al;
    }
    La = al;
    Lg = g;
    f4[base + len - 2] = g;
    for (int j = len - 3; j >= 0; --j) {
      const T gj = f2[base + j];
      al = common::thomas_substitute(f3[base + j], gj, al);
      g = common::partition_carry(gj, g);
      f3[base + j] = al;
      f4[base + j] = g;
    }
    Fa = al;
    Fg = g;
  } else if (len == 1) {
    La = T(-1);
    Fg = T(-1);
  }
  T ae = T(0), be = T(1), ce = T(0);
  if (len >= 1) {
    const int er = st + len - 1, e = base + len - 1;
    ae = A_(er);
    be = B_(er);
    ce = C_(er);
    f0[e] = ae;
    f1[e] = ce;
  }
  const int nxt = lane + 1 < S ? lane + 1 : 0;
  const T nFa = __shfl_sync(kFullMask, Fa, nxt), nFg = __shfl_sync(kFullMask, Fg, nxt);
  T A = -ae * La, B = be - ae * Lg - ce * nFa, C = -ce * nFg;
  if (len == 0) {
    A = C = T(0);
    B = T(1);
  }
  T q = T(0), inv_den = T(0);
  T v[1] = {T(0)};
  const bool split = periodic && S > 1;
  // No relative singular test here (shared bands, one segment): in this setup, which every
  // block of the fused ADI stage runs, it cost that kernel 11% in fp32 on an H100; a zero
  // or non-finite B is still caught by the pivot checks of the reduced system.
  if (periodic && S == 1) {
    B = A + B + C;
    A = C = T(0);
  }
  if (split) {
    const T A0 = __shfl_sync(kFullMask, A, 0), B0 = __shfl_sync(kFullMask, B, 0);
    const T CS = __shfl_sync(kFullMask, C, S - 1);
    const common::PeriodicSplit<T> ps(A0, B0, CS);
    bad |= bad_pivot(ps.gamma);
    q = ps.q;
    if (lane == 0) {
      B = ps.b_first(B);
      A = T(0);
      v[0] = ps.gamma;
    }
    if (lane == S - 1) {
      B = ps.b_last(B);
      C = T(0);
      v[0] = CS;
    }
  }
  pcr_reduced<T, 1, true, Check>(A, B, C, v, S, bad, F.red);
  if (split) {
    const T z0 = __shfl_sync(kFullMask, v[0], 0), zl = __shfl_sync(kFullMask, v[0], S - 1);
    common::PeriodicSplit<T> ps{};
    ps.q = q;
    const T den = ps.den(z0, zl);
    bad |= bad_pivot(den) || common::singular_cyclic<T>(den, z0, ps.qz(zl));
    inv_den = recip(den);
  } else {
    v[0] = T(0);
  }
  F.red[(kPcrReducedRows - 1) * kWarp + lane] = v[0];
  if (lane == 0) {
    F.red[kPcrReducedRows * kWarp] = q;
    F.red[kPcrReducedRows * kWarp + 1] = inv_den;
  }
}

// The reduced system of shared bands: replays the PCR factors recorded by
// pcr_factorize_shared on the right-hand side D (one row per lane), then the periodic
// correction. Returns x on lanes < S.
template <class T>
__device__ T reduced_solve_shared(T D, int S, const PcrFactors<T>& F, int width = kWarp) {
  const int lane = lane_id() & (width - 1);
  T d = D * F.red[lane];
  int step = 0;
  for (int h = 1; h < S; h <<= 1, ++step) {
    T dm = __shfl_up_sync(kFullMask, d, h, width), dp = __shfl_down_sync(kFullMask, d, h, width);
    if (lane < h) dm = T(0);
    if (lane + h >= width) dp = T(0);
    const T* rs = F.red + (1 + 3 * step) * kWarp + lane;
    d = rs[0] * common::pcr_combine_unit(d, rs[kWarp], dm, rs[2 * kWarp], dp);
  }
  const T y0 = __shfl_sync(kFullMask, d, 0, width), yl = __shfl_sync(kFullMask, d, S - 1, width);
  const T q = F.red[kPcrReducedRows * kWarp], inv_den = F.red[kPcrReducedRows * kWarp + 1];
  common::PeriodicSplit<T> ps{};
  ps.q = q;
  return ps.correct(d, ps.factor_inv(y0, yl, inv_den), F.red[(kPcrReducedRows - 1) * kWarp + lane]);
}

// pcr_line for shared bands: only d (in shared memory, replaced by u) is per line.
template <class T>
__device__ void pcr_line_shared(const PcrShape& sh, const PcrFactors<T>& F, T* sd) {
  const int lane = lane_id();
  const int st = lane << sh.log2m;
  const int len = max(0, min(sh.m, sh.n - st));
  const int base = lane * (sh.m + 1);
  const int S = sh.segs;
  const T *f0 = F.f[0], *f1 = F.f[1], *f2 = F.f[2], *f3 = F.f[3], *f4 = F.f[4];
  T Ld = T(0), Fd = T(0);
  if (len >= 2) {
    T de = f0[base] * sd[base];
    sd[base] = de;
    for (int j = 1; j < len - 1; ++j) {
      de = common::thomas_eliminate_factored(sd[base + j], f0[base + j], f1[base + j], de);
      sd[base + j] = de;
    }
    Ld = de;
    for (int j = len - 3; j >= 0; --j) {
      de = common::thomas_substitute(sd[base + j], f2[base + j], de);
      sd[base + j] = de;
    }
    Fd = de;
  }
  const int e = base + len - 1;
  const int nxt = lane + 1 < S ? lane + 1 : 0;
  const T nFd = __shfl_sync(kFullMask, Fd, nxt);
  const T D = len >= 1 ? sd[e] - f0[e] * Ld - f1[e] * nFd : T(0);
  const T x = reduced_solve_shared(D, S, F);
  const T xl = __shfl_sync(kFullMask, x, lane == 0 ? S - 1 : lane - 1);
  if (len >= 1) {
    for (int j = 0; j < len - 1; ++j) sd[base + j] = common::partition_fill(sd[base + j], f3[base + j], xl, f4[base + j], x);
    sd[e] = x;
  }
}

}  // namespace adi::cuda_backend::kernels
