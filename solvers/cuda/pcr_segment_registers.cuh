#pragma once
// The per-segment half of the Thomas-PCR hybrid (pcr_warp_core.cuh) with the loops over
// a segment's rows unrolled at compile time (up to MaxM rows, predicated on the
// run-time length), on rows held in registers or in shared memory. Same arithmetic as
// pcr_line; what changes is the schedule: pcr_line's run-time loops wait on one
// dependent shared-memory round trip after another, which measured as the limit of the
// first version (about 0.12 ms per 65536 lines of 256 on an H100 in either precision).
// Used by the X kernel (rows in the staged line) and the Y/Z kernel (rows loaded from
// global memory into registers, algorithm 11).
#include "solvers/cuda/pcr_warp_core.cuh"

namespace adi::cuda_backend::kernels {

// A segment of len <= MaxM rows sits right-aligned in its registers: row j of the
// segment in register MaxM - len + j, so the separator is always register MaxM-1 and
// every register index is a compile-time constant (a run-time index, even a predicated
// "j == len-1" select, makes the compiler move the arrays to local memory).

// Where a segment's rows live: registers (the Y/Z kernel loads them from global memory),
// or the staged line in shared memory addressed with compile-time offsets (the X
// kernel: the unrolled loops still let the compiler issue the loads early, without
// holding four arrays in registers). Row j of the right-aligned segment is a(j)...d(j).
template <class T, int MaxM>
struct RegisterRows {
  T ra[MaxM], rb[MaxM], rc[MaxM], rd[MaxM];
  __device__ __forceinline__ T& a(int j) { return ra[j]; }
  __device__ __forceinline__ T& b(int j) { return rb[j]; }
  __device__ __forceinline__ T& c(int j) { return rc[j]; }
  __device__ __forceinline__ T& d(int j) { return rd[j]; }
};
template <class T>
struct SharedRows {
  T *pa, *pb, *pc, *pd;  // already offset so that row j is p[j]
  __device__ __forceinline__ T& a(int j) { return pa[j]; }
  __device__ __forceinline__ T& b(int j) { return pb[j]; }
  __device__ __forceinline__ T& c(int j) { return pc[j]; }
  __device__ __forceinline__ T& d(int j) { return pd[j]; }
};

// What a segment contributes to the reduced system: its last interior row in terms of
// the separators (u = Ld - La x_{s-1} - Lg x_s), its first interior row (F*), and its
// separator row as loaded (ae, be, ce, dv).
template <class T>
struct SegmentEnds {
  T Ld = T(0), La = T(0), Lg = T(0), Fd = T(0), Fa = T(0), Fg = T(0);
  T ae = T(0), be = T(1), ce = T(0), dv = T(0);
};

// Modified Thomas (algorithm 3) on the interior rows (registers lo..MaxM-2, lo =
// MaxM - len); the separator is register MaxM-1. On return a, c, d hold a', c', d' of
// the interior rows.
template <class T, int MaxM, class Rows>
__device__ __forceinline__ SegmentEnds<T> segment_reduce(Rows& rows, int len, bool& bad) {
  const int lo = MaxM - len;
  SegmentEnds<T> e;
  T g = T(0), al = T(0), de = T(0);
#pragma unroll
  for (int j = 0; j < MaxM - 1; ++j) {
    if (j >= lo) {
      const bool first = j == lo;
      const T aj = rows.a(j);
      const T piv = first ? rows.b(j) : common::thomas_pivot(aj, rows.b(j), g);
      bad |= bad_pivot(piv) || (!first && common::thomas_unsafe<T>(aj * g, aj, rows.b(j), rows.c(j)));
      const T r = recip(piv);
      g = rows.c(j) * r;
      bad |= common::thomas_unsafe_on_device(g);
      al = first ? aj * r : common::partition_spike(aj, al, r);
      de = first ? rows.d(j) * r : common::thomas_eliminate(rows.d(j), aj, de, r);
      rows.a(j) = al;
      rows.c(j) = g;
      rows.d(j) = de;
    }
  }
  if (len >= 2) {
    e.Ld = de;
    e.La = al;
    e.Lg = g;
  }
#pragma unroll
  for (int j = MaxM - 3; j >= 0; --j) {
    if (j >= lo) {
      const T gj = rows.c(j);
      de = common::thomas_substitute(rows.d(j), gj, de);
      al = common::thomas_substitute(rows.a(j), gj, al);
      g = common::partition_carry(gj, g);
      rows.a(j) = al;
      rows.c(j) = g;
      rows.d(j) = de;
    }
  }
  if (len >= 2) {
    e.Fd = de;
    e.Fa = al;
    e.Fg = g;
  } else if (len == 1) {  // no interior: the neighbours of the separator are separators
    e.La = T(-1);
    e.Fg = T(-1);
  }
  if (len >= 1) {
    e.ae = rows.a(MaxM - 1);
    e.be = rows.b(MaxM - 1);
    e.ce = rows.c(MaxM - 1);
    e.dv = rows.d(MaxM - 1);
  }
  return e;
}

// Row s of the reduced system in two parts: what its own segment gives (the separator row
// with the segment's last interior row substituted) ...
template <class T>
__device__ __forceinline__ void reduced_row_own(const SegmentEnds<T>& e, T& A, T& B, T& D) {
  A = -e.ae * e.La;
  B = e.be - e.ae * e.Lg;
  D = e.dv - e.ae * e.Ld;
}
// ... and the coupling c of the separator through the next segment's first interior row
// (thomas_pcr_long.cuh adds it from the next segment's thread).
template <class T>
__device__ __forceinline__ void reduced_row_next(T ce, T nFd, T nFa, T nFg, T& B, T& C, T& D) {
  B = B - ce * nFa;
  C = -ce * nFg;
  D = D - ce * nFd;
}
// Row s of the reduced system, given the next segment's first interior row.
template <class T>
__device__ __forceinline__ void reduced_row(const SegmentEnds<T>& e, T nFd, T nFa, T nFg, int len, T& A, T& B,
                                            T& C, T& D) {
  if (len <= 0) {
    A = C = D = T(0);
    B = T(1);
    return;
  }
  reduced_row_own(e, A, B, D);
  reduced_row_next(e.ce, nFd, nFa, nFg, B, C, D);
}

// Algorithm 5: interior rows from the two separators, separator row = x.
template <class T, int MaxM, class Rows>
__device__ __forceinline__ void segment_fill(Rows& rows, int len, T xl, T x) {
  const int lo = MaxM - len;
#pragma unroll
  for (int j = 0; j < MaxM - 1; ++j)
    if (j >= lo) rows.d(j) = common::partition_fill(rows.d(j), rows.a(j), xl, rows.c(j), x);
  if (len >= 1) rows.d(MaxM - 1) = x;
}

// Shared bands: only d is per line. f0..f4 point at the factors (pcr_factorize_shared
// layout) of the segment's first row; register j uses factor j - lo.
template <class T, int MaxM>
__device__ __forceinline__ SegmentEnds<T> segment_reduce_shared(T (&d)[MaxM], int len, const T* f0,
                                                                const T* f1, const T* f2) {
  const int lo = MaxM - len;
  SegmentEnds<T> e;
  T de = T(0);
#pragma unroll
  for (int j = 0; j < MaxM - 1; ++j) {
    if (j >= lo) {
      de = j == lo ? f0[0] * d[j] : common::thomas_eliminate_factored(d[j], f0[j - lo], f1[j - lo], de);
      d[j] = de;
    }
  }
  if (len >= 2) e.Ld = de;
#pragma unroll
  for (int j = MaxM - 3; j >= 0; --j) {
    if (j >= lo) {
      de = common::thomas_substitute(d[j], f2[j - lo], de);
      d[j] = de;
    }
  }
  if (len >= 2) e.Fd = de;
  if (len >= 1) {  // the separator's a and c, as stored by pcr_factorize_shared
    e.dv = d[MaxM - 1];
    e.ae = f0[len - 1];
    e.ce = f1[len - 1];
  }
  return e;
}

template <class T>
__device__ __forceinline__ T reduced_rhs_shared(const SegmentEnds<T>& e, T nFd, int len) {
  return len >= 1 ? e.dv - e.ae * e.Ld - e.ce * nFd : T(0);
}

template <class T, int MaxM>
__device__ __forceinline__ void segment_fill_shared(T (&d)[MaxM], int len, const T* f3, const T* f4, T xl,
                                                    T x) {
  const int lo = MaxM - len;
#pragma unroll
  for (int j = 0; j < MaxM - 1; ++j)
    if (j >= lo) d[j] = common::partition_fill(d[j], f3[j - lo], xl, f4[j - lo], x);
  d[MaxM - 1] = x;
}

// pcr_line with the segment loops unrolled (m <= MaxM) on the staged line in shared
// memory: compile-time offsets let the compiler issue a row's loads ahead of the
// recurrence that needs them (the plain loops of pcr_line wait on each round trip).
// Full = true: the caller guarantees n == 32 * MaxM (m == MaxM, 32 segments of MaxM rows, no
// idle lane): the segment loops lose their run-time length and predicates, and the reduced PCR
// of a non-periodic line its run-time level count (thomas_pcr_lean_kernel).
template <class T, int MaxM, bool Full = false>
__device__ void pcr_line_unrolled(const PcrShape& sh, T* sa, T* sb, T* sc, T* sd, bool periodic, bool& bad) {
  const int lane = lane_id();
  const int len = Full ? MaxM : max(0, min(sh.m, sh.n - (lane << sh.log2m)));
  const int S = sh.segs;
  const int at = lane * (sh.m + 1) - (MaxM - len);  // slot of row j: at + j
  SharedRows<T> rows{sa + at, sb + at, sc + at, sd + at};
  const SegmentEnds<T> e = segment_reduce<T, MaxM>(rows, len, bad);
  const int nxt = lane + 1 < S ? lane + 1 : 0;
  const T nFd = __shfl_sync(kFullMask, e.Fd, nxt), nFa = __shfl_sync(kFullMask, e.Fa, nxt);
  const T nFg = __shfl_sync(kFullMask, e.Fg, nxt);
  T A, B, C, D;
  reduced_row(e, nFd, nFa, nFg, len, A, B, C, D);
  // Full, not periodic: S a compile-time 32, so the reduced PCR's levels unroll (the periodic
  // call keeps the run-time S: unrolling its two right-hand sides costs registers).
  const T x = Full && !periodic ? reduced_solve(A, B, C, D, kWarp, false, bad)
                                : reduced_solve(A, B, C, D, S, periodic, bad);
  const T xl = __shfl_sync(kFullMask, x, lane == 0 ? S - 1 : lane - 1);
  segment_fill<T, MaxM>(rows, len, xl, x);
}

// Stages a warp's line of 32 * M rows for pcr_line_unrolled<T, M, true>: lane l moves rows r = 32 j + l of
// the four arrays (k = 0 .. 3: d, a, b, c) into slot mine[k * P + J j] (mine = the warp's buffer + l + l / M,
// P = 32 (M + 1) slots an array, J = 32 + 32 / M: pos(r) = r + r / M), G rows of each array at a time:
// fill(g, v) loads rows j = g .. g + G - 1 into v[k][j - g] (all 4 G loads issued before the first store;
// thomas_pcr_lean_kernel's lines, thomas_pcr_window_kernel's windows).
template <class T, int M, int G, class Fill>
__device__ __forceinline__ void stage_line_rows(T* mine, const Fill& fill) {
  constexpr int P = kWarp * (M + 1), J = kWarp + kWarp / M;
#pragma unroll
  for (int g = 0; g < M; g += G) {
    T v[4][G];
    fill(g, v);
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int jj = 0; jj < G; ++jj) mine[k * P + (g + jj) * J] = v[k][jj];
  }
}

// Full = true: n == 32 * MaxM (as pcr_line_unrolled's): compile-time segment lengths and
// reduced-PCR levels (fused_x_ring_lean_kernel).
template <class T, int MaxM, bool Full = false>
__device__ void pcr_line_shared_registers(const PcrShape& sh, const PcrFactors<T>& F, T* sd) {
  const int lane = lane_id();
  const int len = Full ? MaxM : max(0, min(sh.m, sh.n - (lane << sh.log2m)));
  const int base = lane * (Full ? MaxM + 1 : sh.m + 1);
  const int S = Full ? kWarp : sh.segs;
  const int at = base - (MaxM - len);
  T d[MaxM];
#pragma unroll
  for (int j = 0; j < MaxM; ++j)
    if (j >= MaxM - len) d[j] = sd[at + j];
  const SegmentEnds<T> e =
      segment_reduce_shared<T, MaxM>(d, len, F.f[0] + base, F.f[1] + base, F.f[2] + base);
  const int nxt = lane + 1 < S ? lane + 1 : 0;
  const T nFd = __shfl_sync(kFullMask, e.Fd, nxt);
  const T x = reduced_solve_shared(reduced_rhs_shared(e, nFd, len), S, F);
  const T xl = __shfl_sync(kFullMask, x, lane == 0 ? S - 1 : lane - 1);
  segment_fill_shared<T, MaxM>(d, len, F.f[3] + base, F.f[4] + base, xl, x);
#pragma unroll
  for (int j = 0; j < MaxM; ++j)
    if (j >= MaxM - len) sd[at + j] = d[j];
}

}  // namespace adi::cuda_backend::kernels
