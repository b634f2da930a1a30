#pragma once
#include <limits>
// Block Thomas on the GPU (paper, block part, sections 3-4, algorithm 12): M cooperating
// threads per system, 32/M systems per warp. Thread j of a system holds column j of
// the blocks it works on (S_i = B_i - A_i C*_{i-1}, C_i, then C*_i), so the pivot search
// of a Gauss-Jordan elimination on [S_i | C_i | d'_i] is local to one thread; the
// multipliers go to the other threads through the Exchange policy: warp shuffles
// (ShuffleExchange) or a warp-private shared-memory buffer (SharedExchange).
//
// Differences from the paper, and why:
// - column j per thread (the paper also holds columns) but partial pivoting inside the
//   pivot block: rows are never swapped, the pivot row of step k is remembered and the
//   answer is read back through a select, so register arrays keep compile-time indices;
// - d'_i and d*_i are kept whole in every thread of the system (M redundant FMAs per
//   update instead of a reduction through shuffles);
// - C*_i goes to a workspace interleaved by system (coalesced for any user layout) and
//   d*_i into u; the backward pass reads row j of C*_i per thread.
// Layout: any BlockLineSet (strides); Unit = both component strides are 1 (figure 14
// interleaved, figure 17 contiguous, array-of-structures grids), known at compile time.
// Blocks row- or column-major (BlockLineSet::order, a uniform runtime select in load_row:
// thread j reads column j, M consecutive values when column-major and Unit).
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "adi/base/block_layout.hpp"
#include "adi/base/env_switch.hpp"
#include "solvers/common/block_lu_core.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend::block {

constexpr int kWarps = 4;  // warps per thread block
constexpr unsigned kFull = 0xffffffffu;

template <class T>
struct Args {
  BlockLineSet l;
  const T* __restrict__ a;
  const T* __restrict__ b;
  const T* __restrict__ c;
  const T* d;  // may equal u
  T* u;
  T* __restrict__ ws;  // C*_i of system s at ws[(i * systems + s) * M * M], row-major; then Z*_i
  T tol;
  unsigned long long* singular;
  T* __restrict__ dws;  // d*_i of system s at dws[(i * systems + s) * M], i < n - 1 (after the C*_i, Z*_i)
};

template <class T>
__device__ __forceinline__ T absv(T x) {
  return x < T(0) ? -x : x;  // NaN stays NaN
}

template <int M, class T>
__device__ __forceinline__ T select(const T (&v)[M], int idx) {
  T x = v[0];
#pragma unroll
  for (int r = 1; r < M; ++r) x = idx == r ? v[r] : x;
  return x;
}

// Exchange through warp shuffles: every value travels in a register.
template <class T, int M>
struct ShuffleExchange {
  static constexpr int kSharedPerWarp = 0;
  int base;  // first lane of this system's group
  int j;
  T held[M];
  __device__ ShuffleExchange(T*, int base_, int j_) : base(base_), j(j_) {}
  // Makes column v of every thread readable by the group (get(k, r) = v[r] of thread k).
  __device__ __forceinline__ void publish(const T (&v)[M]) {
#pragma unroll
    for (int r = 0; r < M; ++r) held[r] = v[r];
  }
  __device__ __forceinline__ T get(int k, int r) const { return __shfl_sync(kFull, held[r], base + k); }
  // out = v of thread k (k the same in every thread).
  __device__ __forceinline__ void broadcast(const T (&v)[M], T extra0, T extra1, int k, T (&out)[M], T& e0,
                                            T& e1) const {
#pragma unroll
    for (int r = 0; r < M; ++r) out[r] = __shfl_sync(kFull, v[r], base + k);
    e0 = __shfl_sync(kFull, extra0, base + k);
    e1 = __shfl_sync(kFull, extra1, base + k);
  }
  // all[k] = mine of thread k.
  template <class V>
  __device__ __forceinline__ void gather(V mine, V (&all)[M]) const {
#pragma unroll
    for (int k = 0; k < M; ++k) all[k] = __shfl_sync(kFull, mine, base + k);
  }
};

// Exchange through a warp-private shared-memory buffer (M*M values per system),
// ordered by __syncwarp; reads of a whole column are broadcasts within the group.
template <class T, int M>
struct SharedExchange {
  // One M*M buffer per group, idle lanes (32 % M of them) included.
  static constexpr int kSharedPerWarp = (32 / M + 1) * M * M;
  T* buf;  // this system's M*M values
  int j;
  __device__ SharedExchange(T* warp_buf, int base, int j_) : buf(warp_buf + base * M), j(j_) {}
  __device__ __forceinline__ void publish(const T (&v)[M]) {
    __syncwarp(kFull);  // everyone finished reading the previous contents
#pragma unroll
    for (int r = 0; r < M; ++r) buf[j * M + r] = v[r];
    __syncwarp(kFull);
  }
  __device__ __forceinline__ T get(int k, int r) const { return buf[k * M + r]; }
  __device__ __forceinline__ void broadcast(const T (&v)[M], T extra0, T extra1, int k, T (&out)[M], T& e0,
                                            T& e1) const {
    __syncwarp(kFull);
    if (j == k) {
#pragma unroll
      for (int r = 0; r < M; ++r) buf[r] = v[r];
      buf[M] = extra0;
      buf[M + 1] = extra1;
    }
    __syncwarp(kFull);
#pragma unroll
    for (int r = 0; r < M; ++r) out[r] = buf[r];
    e0 = buf[M];
    e1 = buf[M + 1];
  }
  template <class V>
  __device__ __forceinline__ void gather(V mine, V (&all)[M]) const {
    __syncwarp(kFull);
    buf[j] = static_cast<T>(mine);
    __syncwarp(kFull);
#pragma unroll
    for (int k = 0; k < M; ++k) all[k] = static_cast<V>(buf[k]);
  }
};

// One block row's inputs as thread j sees them: column j of A_i, B_i, C_i and all of d_i.
template <class T, int M>
struct RowIn {
  T a[M], b[M], c[M], d[M];
};

template <class T, int M, bool Unit, bool Periodic>
__device__ __forceinline__ void load_row(const Args<T>& g, index_t ob, index_t ov, index_t i, int j, bool active,
                                         RowIn<T, M>& in) {
  const index_t bc = Unit ? 1 : g.l.blocks.component;
  const index_t vc = Unit ? 1 : g.l.vectors.component;
  const index_t pb = ob + i * g.l.blocks.row, pv = ov + i * g.l.vectors.row;
  const bool has_a = active && (Periodic || i > 0), has_c = active && (Periodic || i + 1 < g.l.n);
#pragma unroll
  for (int r = 0; r < M; ++r) {
    // Entry (r, j): value r*M + j (row-major) or j*M + r (column-major, read in place).
    const index_t e = block_entry(g.l.order, M, r, j) * bc;
    // Idle threads solve the identity: no spurious singular reports, no loads.
    in.b[r] = active ? g.b[pb + e] : T(r == j ? 1 : 0);
    in.a[r] = has_a ? g.a[pb + e] : T(0);
    in.c[r] = has_c ? g.c[pb + e] : T(0);
    in.d[r] = active ? g.d[pv + r * vc] : T(0);
  }
}

// Thread blocks per SM the register budget is cut for (ptxas -v: without a bound fp64
// M = 4 took 168 registers, 12 warps per SM; these keep every variant spill-free).
// Periodic kernels carry 5 more columns per thread: one block fewer. fp32 M = 4 (not periodic):
// 6 since stop 49, its staged form fits the 80 registers (H200 run s49/7: -2.1% interleaved,
// -4.5% contiguous; fp32 M = 3 at 8 blocks and fp64 M = 2, 3 at 6 / 5 were slower or spilled).
template <class T, int M, bool Periodic>
constexpr int min_blocks() {
  constexpr int f32[9] = {0, 0, 8, 6, 5, 4, 3, 3, 2};
  constexpr int f64[9] = {0, 0, 5, 4, 3, 3, 2, 2, 2};
  const int b = sizeof(T) == 4 ? f32[M] : f64[M];
  if (Periodic) return b > 1 ? b - 1 : b;
  return sizeof(T) == 4 && M == 4 ? 6 : b;
}

// max|S| over the group's block (columns held one per thread), for the relative pivot
// threshold. (fmaxf drops NaN; a NaN entry still ends in a NaN pivot, which is caught.)
// The largest of the group's M values v (one per thread).
template <int M, class Ex, class V>
__device__ __forceinline__ V group_max(const Ex& ex, V v) {
  V all[M];
  ex.gather(v, all);
  V m = V(0);
#pragma unroll
  for (int k = 0; k < M; ++k) m = fmax(m, all[k]);
  return m;
}

template <class T, int M, class Ex>
__device__ __forceinline__ T pivot_threshold(const Ex& ex, const T (&s)[M], T tol) {
  float colmax = 0.f;
#pragma unroll
  for (int r = 0; r < M; ++r) colmax = fmaxf(colmax, static_cast<float>(absv(s[r])));
  return tol * static_cast<T>(group_max<M>(ex, colmax));
}

// Gauss-Jordan with partial pivoting on [S | C | E | d], rows never moved: thread j holds
// column j of S, C and (Periodic) E, and all of d. Step k: thread k finds the pivot row
// in its column among the unused rows and broadcasts the multipliers. On return row
// prow[k] holds unknown k, scaled by pinv[k]; `bad` is set in the thread whose pivot
// failed the threshold.
//
// The M steps stay fully unrolled for every M: a rolled loop for M >= 6 (tried in stop 28 to
// halve the compile, issue 15 item 8) made the M = 6, 7 kernels 3-22% slower on an H100
// (docs/design.md, Layers: "Serial CUDA compile time").
template <class T, int M, class Ex, bool WithC, bool WithE>
__device__ __forceinline__ void gauss_jordan(const Ex& ex, int j, T threshold, T (&s)[M], T (&c)[M], T (&e)[M],
                                             T (&dp)[M], int (&prow)[M], T (&pinv)[M], bool& bad) {
  unsigned used = 0;
#pragma unroll
  for (int k = 0; k < M; ++k) {
    T f[M];
#pragma unroll
    for (int r = 0; r < M; ++r) f[r] = T(0);
    T pk_t = T(0), inv = T(0);
    if (j == k) {
      // Like the host kernel: start from the first unused row, take a strictly larger
      // one (a NaN first candidate stays, and is reported).
      int pk = -1;
      T best = T(0);
#pragma unroll
      for (int r = 0; r < M; ++r) {
        const T v = absv(s[r]);
        if (!((used >> r) & 1u) && (pk < 0 || v > best)) best = v, pk = r;
      }
      const T pv = select<M>(s, pk);
      if (!(absv(pv) > threshold)) bad = true;
      inv = T(1) / pv;
#pragma unroll
      for (int r = 0; r < M; ++r) f[r] = r == pk ? T(0) : s[r] * inv;
      pk_t = static_cast<T>(pk);
    }
    T fb[M];
    ex.broadcast(f, pk_t, inv, k, fb, pk_t, inv);
    const int pk = static_cast<int>(pk_t);
    prow[k] = pk;
    pinv[k] = inv;
    used |= 1u << pk;
    const T sp = select<M>(s, pk), dpp = select<M>(dp, pk);
    const T cp = WithC ? select<M>(c, pk) : T(0), ep = WithE ? select<M>(e, pk) : T(0);
#pragma unroll
    for (int r = 0; r < M; ++r) {
      s[r] -= fb[r] * sp;
      dp[r] -= fb[r] * dpp;
      if (WithC) c[r] -= fb[r] * cp;
      if (WithE) e[r] -= fb[r] * ep;
    }
  }
}

template <class T>
__device__ __forceinline__ void report(const Args<T>& g, index_t sys, index_t row, bool& reported) {
  if (reported) return;
  reported = true;
  atomicMax(g.singular, ~0ull - static_cast<unsigned long long>(sys * g.l.n + row));
}

// The backward sweep's read-ahead (the staged forms with back > 0 and the one-thread form): rows
// n - 2 down to 0, row i's reads (load(i, row)) issued `Back` rows before row i is substituted
// (step(i, row)), through a ring of registers, the loop unrolled by Back.
template <int Back, class Row, class Load, class Step>
__device__ __forceinline__ void backward_rows_ahead(index_t n, Load&& load, Step&& step) {
  Row ring[Back];
#pragma unroll
  for (int k = 0; k < Back; ++k)
    if (n - 2 - k >= 0) load(n - 2 - k, ring[k]);
  for (index_t i0 = n - 2; i0 >= 0; i0 -= Back) {
#pragma unroll
    for (int k = 0; k < Back; ++k) {
      const index_t i = i0 - k;
      if (i < 0) break;
      const Row cur = ring[k];
      if (i - Back >= 0) load(i - Back, ring[k]);
      step(i, cur);
    }
  }
}

// The forward sweep's read-ahead (the one-thread form): rows 0 to n - 1, row i's reads issued `Ahead`
// rows before row i is eliminated, through a ring of registers, the loop unrolled by Ahead.
template <int Ahead, class Row, class Load, class Step>
__device__ __forceinline__ void forward_rows_ahead(index_t n, Load&& load, Step&& step) {
  Row ring[Ahead];
#pragma unroll
  for (int k = 0; k < Ahead; ++k)
    if (k < n) load(index_t(k), ring[k]);
  for (index_t i0 = 0; i0 < n; i0 += Ahead) {
#pragma unroll
    for (int k = 0; k < Ahead; ++k) {
      const index_t i = i0 + k;
      if (i >= n) break;
      const Row cur = ring[k];
      if (i + Ahead < n) load(i + Ahead, ring[k]);
      step(i, cur);
    }
  }
}

// How a kernel moves its rows (issue 16, stop 49; docs/block_tridiagonal.md "GPU on an H200"). The
// base form is the kernel as it was before stop 49. The other ("staged") forms:
// - the forward sweep's next block row (where the rows are prefetched at all: kPrefetch) is read
//   through a one-row slot, `cur = slot; slot = row i + 1; eliminate(cur)`, instead of into a `next`
//   copied over the current row after the step (the same values; fewer live registers: fp64 M = 4
//   168 -> 128, 4 blocks per SM instead of 3, -17% on an H200 with this change alone);
// - d*_i goes to the workspace (interleaved by system like C*_i, so coalesced whatever the user's
//   layout) instead of u, and the backward sweep reads it there: it only writes u. (With d*_i in u,
//   a backward read-ahead was up to 3.6x slower where a system's rows of u are adjacent, the
//   contiguous layouts: rows are read while rows of the same lines are being stored.)
// - back > 0: the backward sweep's reads of row i - back (row j of C*_i, d*_i[j]) are issued before
//   row i is substituted (a ring of registers, the loop unrolled by `back`).
struct BlockForm {
  bool staged;
  int back;
};

// Measured per precision, M and periodic (H200, runs s49/2-3, checked in s49/4 and s49/6: every
// batch layout, the periodic and the CFD grid rows of bench_cuda_block_tridiagonal): the base form
// where no staged one was faster beyond the spread (fp32 M = 7; periodic fp32 M = 6..8, periodic
// fp64 M = 2 and 5).
template <class T, int M, bool Periodic>
constexpr BlockForm block_form() {
  constexpr BlockForm base{false, 0}, s0{true, 0}, s2{true, 2}, s4{true, 4};
  //                         M = 0     1     2   3   4   5   6     7   8
  constexpr BlockForm f32[9] = {base, base, s4, s4, s4, s4, s0, base, s0};
  constexpr BlockForm f64[9] = {base, base, s4, s4, s4, s4, s2, s2, s2};
  constexpr BlockForm p32[9] = {base, base, s4, s0, s0, s4, base, base, base};
  constexpr BlockForm p64[9] = {base, base, base, s4, s2, base, s4, s0, s0};
  return Periodic ? (sizeof(T) == 4 ? p32[M] : p64[M]) : (sizeof(T) == 4 ? f32[M] : f64[M]);
}

template <class T, int M, template <class, int> class Exchange, bool Unit, bool Periodic>
__global__ void __launch_bounds__(kWarps * 32, min_blocks<T, M, Periodic>()) block_thomas_kernel(Args<T> g) {
  constexpr int G = 32 / M;  // systems per warp; lanes G*M..31 idle (paper section 4)
  using Ex = Exchange<T, M>;
  __shared__ T scratch[kWarps][Ex::kSharedPerWarp > 0 ? Ex::kSharedPerWarp : 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = lane / M;
  const int j = lane - grp * M;
  const index_t sys = (static_cast<index_t>(blockIdx.x) * kWarps + warp) * G + grp;
  const index_t systems = g.l.count0 * g.l.count1;
  const bool active = grp < G && sys < systems;
  const int base = grp * M;  // idle lanes form a group of their own (shuffles from them wrap, unused)
  Ex ex(&scratch[warp][0], base, j);
  const index_t n = g.l.n;
  const index_t l0 = active ? sys % g.l.count0 : 0, l1 = active ? sys / g.l.count0 : 0;
  const index_t ob = l0 * g.l.blocks.system0 + l1 * g.l.blocks.system1;
  const index_t ov = l0 * g.l.vectors.system0 + l1 * g.l.vectors.system1;
  const index_t vc = Unit ? 1 : g.l.vectors.component;
  constexpr int MM = M * M;
  // Prefetching the next block row doubles the input registers: worth it while they are few.
  constexpr bool kPrefetch = !Periodic && M * sizeof(T) <= 32;
  constexpr BlockForm kForm = block_form<T, M, Periodic>();
  constexpr bool kBase = !kForm.staged;
  constexpr int kBack = kForm.back;
  // Periodic: rows 0..n-2 are swept, the last one is folded in as they go.
  const index_t rows = Periodic ? n - 1 : n;
  T* const zws = g.ws + systems * (n - 1) * MM;  // Z*_i (periodic), after the C*_i
  bool reported = false, bad = false;
  int prow[M];
  T pinv[M];

  RowIn<T, M> in;  // a periodic n = 1 system's row; the forward sweep's current row (base form, no prefetch)
  if (Periodic && n == 1) {  // (A_0 + B_0 + C_0) u_0 = d_0
    load_row<T, M, Unit, true>(g, ob, ov, 0, j, active, in);
    T s[M], dp[M];
#pragma unroll
    for (int r = 0; r < M; ++r) s[r] = in.a[r] + in.b[r] + in.c[r], dp[r] = in.d[r];
    const T threshold = pivot_threshold<T, M>(ex, s, g.tol);
    gauss_jordan<T, M, Ex, false, false>(ex, j, threshold, s, s, s, dp, prow, pinv, bad);
    if (bad && active) report(g, sys, 0, reported);
    T x[M];
#pragma unroll
    for (int k = 0; k < M; ++k) x[k] = select<M>(dp, prow[k]) * pinv[k];
    if (active) g.u[ov + j * vc] = select<M>(x, j);
    return;
  }

  T cs[M];  // column j of C*_{i-1}
  T zs[M];  // column j of Z*_{i-1} (periodic)
  T ds[M];  // d*_{i-1}, whole
  T F[M], Gc[M], gv[M];  // periodic: column j of F_i and G, all of g (the last row)
  // Periodic: the size of column j of B_last, against which G = B_last - sum F_i Z*_i is
  // tested: G cancels to rounding noise when the block-circulant matrix is singular, and its
  // pivots must then be reported, not divided by. The host (solvers/cpu/block_thomas.cpp)
  // also adds the size of every F_i Z*_i term; tracking that per row cost the periodic
  // kernels 4-26% on an H100 / H200 (fp32 M = 6, 7 most), so the device tests against
  // B_last alone: the same rule where the terms are no larger than B_last (the periodic
  // block Laplacian), a weaker one where they are.
  T b_last_size = T(0);  // max |B_last[:, j]|
#pragma unroll
  for (int r = 0; r < M; ++r) cs[r] = zs[r] = ds[r] = F[r] = Gc[r] = gv[r] = T(0);
  if (Periodic) {
    load_row<T, M, Unit, true>(g, ob, ov, n - 1, j, active, in);
#pragma unroll
    for (int r = 0; r < M; ++r) {
      F[r] = in.c[r] + (n == 2 ? in.a[r] : T(0)), Gc[r] = in.b[r], gv[r] = in.d[r];
      b_last_size = fmax(b_last_size, absv(Gc[r]));
    }
  }

  // One block row of the forward sweep (row i, its inputs `in`).
  auto forward_row = [&](index_t i, const RowIn<T, M>& in) {
    T s[M], c[M], e[M], dp[M];
#pragma unroll
    for (int r = 0; r < M; ++r) {
      s[r] = in.b[r], dp[r] = in.d[r];
      c[r] = (!Periodic || i + 1 < rows) ? in.c[r] : T(0);
      // E_i: the coupling to u_{n-1} (A_0 in row 0, C_{n-2} in row n-2).
      e[r] = Periodic ? (i == 0 ? in.a[r] : T(0)) + (i == n - 2 ? in.c[r] : T(0)) : T(0);
    }
    if (i > 0) {
      // S[:, j] -= A_i C*_{i-1}[:, j], d' -= A_i d*_{i-1} (and E[:, j] -= A_i Z*_{i-1}[:, j]):
      // A's column k comes from thread k.
      ex.publish(in.a);
#pragma unroll
      for (int k = 0; k < M; ++k)
#pragma unroll
        for (int r = 0; r < M; ++r) {
          const T akr = ex.get(k, r);
          s[r] -= akr * cs[k];
          dp[r] -= akr * ds[k];
          if (Periodic) e[r] -= akr * zs[k];
        }
    }
    const T threshold = pivot_threshold<T, M>(ex, s, g.tol);
    gauss_jordan<T, M, Ex, true, Periodic>(ex, j, threshold, s, c, e, dp, prow, pinv, bad);
    if (bad && active) report(g, sys, i, reported);
    // X[k][:] = (row prow[k]) / pivot_k: column j of C*_i (Z*_i) and all of d*_i.
#pragma unroll
    for (int k = 0; k < M; ++k) {
      cs[k] = select<M>(c, prow[k]) * pinv[k];
      ds[k] = select<M>(dp, prow[k]) * pinv[k];
      if (Periodic) zs[k] = select<M>(e, prow[k]) * pinv[k];
    }
    if (active) {
      if (i + 1 < rows) {
        T* w = g.ws + (i * systems + sys) * MM + j;
#pragma unroll
        for (int r = 0; r < M; ++r) w[r * M] = cs[r];
      }
      if (Periodic) {
        T* w = zws + (i * systems + sys) * MM + j;
#pragma unroll
        for (int r = 0; r < M; ++r) w[r * M] = zs[r];
      }
      // d*_i to u, or (kForm.staged) to the workspace but the last row's, which is u_{n-1} (not periodic).
      if (kForm.staged && i + 1 < n)
        g.dws[(i * systems + sys) * M + j] = select<M>(ds, j);
      else
        g.u[ov + i * g.l.vectors.row + j * vc] = select<M>(ds, j);
    }
    if (Periodic) {
      // Fold row i (u_i = d*_i - C*_i u_{i+1} - Z*_i x) into the last row:
      // g -= F d*_i, G -= F Z*_i, F <- -F C*_i (+ A_{n-1} when row n-2 comes next).
      ex.publish(F);
      T Fn[M];
#pragma unroll
      for (int r = 0; r < M; ++r) Fn[r] = T(0);
#pragma unroll
      for (int k = 0; k < M; ++k)
#pragma unroll
        for (int r = 0; r < M; ++r) {
          const T fkr = ex.get(k, r);
          gv[r] -= fkr * ds[k];
          Gc[r] -= fkr * zs[k];
          Fn[r] -= fkr * cs[k];
        }
      if (i + 1 == n - 2) {
        RowIn<T, M> lastrow;
        load_row<T, M, Unit, true>(g, ob, ov, n - 1, j, active, lastrow);
#pragma unroll
        for (int r = 0; r < M; ++r) Fn[r] += lastrow.a[r];
      }
#pragma unroll
      for (int r = 0; r < M; ++r) F[r] = Fn[r];
    }
  };
  if constexpr (kBase) {  // the loop of the kernel before stop 49
    load_row<T, M, Unit, Periodic>(g, ob, ov, 0, j, active, in);
    for (index_t i = 0; i < rows; ++i) {
      RowIn<T, M> next;
      if (kPrefetch && i + 1 < rows) load_row<T, M, Unit, Periodic>(g, ob, ov, i + 1, j, active, next);
      forward_row(i, in);
      if (i + 1 < rows) {
        if (kPrefetch)
          in = next;
        else
          load_row<T, M, Unit, Periodic>(g, ob, ov, i + 1, j, active, in);
      }
    }
  } else if constexpr (!kPrefetch) {
    for (index_t i = 0; i < rows; ++i) {
      load_row<T, M, Unit, Periodic>(g, ob, ov, i, j, active, in);
      forward_row(i, in);
    }
  } else {
    RowIn<T, M> slot;  // row i + 1, read while row i is eliminated
    if (rows > 0) load_row<T, M, Unit, Periodic>(g, ob, ov, 0, j, active, slot);
    for (index_t i = 0; i < rows; ++i) {
      const RowIn<T, M> cur = slot;
      if (i + 1 < rows) load_row<T, M, Unit, Periodic>(g, ob, ov, i + 1, j, active, slot);
      forward_row(i, cur);
    }
  }

  // The last unknown: u_{n-1} = d*_{n-1} (non-periodic) or the solution of G x = g.
  T x[M];
#pragma unroll
  for (int r = 0; r < M; ++r) x[r] = ds[r];
  if (Periodic) {
    // A pivot at or below 64 eps times max |B_last| is noise (as on the host).
    const T noise = T(64) * std::numeric_limits<T>::epsilon() * group_max<M>(ex, b_last_size);
    const T threshold = fmax(pivot_threshold<T, M>(ex, Gc, g.tol), noise);
    gauss_jordan<T, M, Ex, false, false>(ex, j, threshold, Gc, Gc, Gc, gv, prow, pinv, bad);
    if (bad && active) report(g, sys, n - 1, reported);
#pragma unroll
    for (int k = 0; k < M; ++k) x[k] = select<M>(gv, prow[k]) * pinv[k];
    if (active) g.u[ov + (n - 1) * g.l.vectors.row + j * vc] = select<M>(x, j);
  }

  // Backward: u_i = d*_i - C*_i u_{i+1} (- Z*_i x); thread j computes u_i[j] from row j of
  // C*_i, which the group's other threads wrote: order their global writes before the reads.
  __syncwarp(kFull);
  T un[M];
#pragma unroll
  for (int r = 0; r < M; ++r) un[r] = x[r];
  // Row j of C*_i (Z*_i) and d*_i[j]: what row i of the backward sweep reads.
  struct BackRow {
    T crow[M], zrow[M];
    T dj;
  };
  auto load_back = [&](index_t i, BackRow& r) {
#pragma unroll
    for (int q = 0; q < M; ++q) r.crow[q] = r.zrow[q] = T(0);
    r.dj = T(0);
    if (active) {
      if (!Periodic || i + 1 < rows) {
        const T* w = g.ws + (i * systems + sys) * MM + j * M;
#pragma unroll
        for (int q = 0; q < M; ++q) r.crow[q] = w[q];
      }
      if (Periodic) {
        const T* w = zws + (i * systems + sys) * MM + j * M;
#pragma unroll
        for (int q = 0; q < M; ++q) r.zrow[q] = w[q];
      }
      r.dj = kForm.staged ? g.dws[(i * systems + sys) * M + j] : g.u[ov + i * g.l.vectors.row + j * vc];
    }
  };
  auto back_row = [&](index_t i, const BackRow& r) {
    T uj = r.dj;
#pragma unroll
    for (int q = 0; q < M; ++q) {
      uj -= r.crow[q] * un[q];
      if (Periodic) uj -= r.zrow[q] * x[q];
    }
    if (active) g.u[ov + i * g.l.vectors.row + j * vc] = uj;
    ex.gather(uj, un);
  };
  if constexpr (kBack == 0) {
    for (index_t i = n - 2; i >= 0; --i) {
      BackRow r;
      load_back(i, r);
      back_row(i, r);
    }
  } else {
    backward_rows_ahead<kBack, BackRow>(n, load_back, back_row);  // kBack rows' reads in flight
  }
}

// ---- One thread per system (stops 49-50): M = 2, 3 (and 4 in fp32), not periodic, systems packed ----
// The host block Thomas's algorithm on the device: a thread holds whole blocks in registers and
// solves each pivot block with common::block_lu_solve (LU with partial pivoting, the core the host
// block Thomas and the block partition passes share), so no value crosses lanes: no shuffles, no
// selects over lanes. C*_i and d*_i go to the workspace as in the staged forms (each thread its M*M
// + M consecutive values). It pays where a warp's 32 systems are adjacent in memory (the interleaved
// layouts: a warp's loads of one entry cover 32 adjacent blocks). Stop 49 (H200 run s49/8) took it
// for M = 2 (interleaved fp32 -19%, fp64 -12%); its M = 3, 4 kernels then ran under the register cap
// of M = 2's 8 / 5 blocks per SM and spilled (1.0-2.2x slower than the staged kernels). With their
// own caps (thread_form) and whole blocks read under a branch, by vector accesses where their size
// allows (a fp32 4 x 4 block's 64 bytes; block_thread_vec), run s50/2: fp32 M = 3 -23%, M = 4 -26%,
// fp64 M = 3 -10% against the staged kernels; fp64 M = 4 1.3x slower (staged kept), the contiguous
// layouts not taken (a warp's loads there touch 32 systems' separate rows).

// d alone as common::block_lu_solve's right-hand-side policy (the pair kernel's middle row, which has no
// C block to carry), and [C | d] (every other row: C*_i beside d*_i).
template <class T, int M>
struct ThreadVecRhs {
  T (&d)[M];
  __device__ __forceinline__ void swap(int k, int i) const {
    const T t = d[k];
    d[k] = d[i], d[i] = t;
  }
  __device__ __forceinline__ void axpy(int i, T f, int k) const { d[i] -= f * d[k]; }
  __device__ __forceinline__ void scale(int i, T inv) const { d[i] *= inv; }
};

template <class T, int M>
struct ThreadRhs {
  T (&c)[M * M];
  T (&d)[M];
  __device__ __forceinline__ void swap(int k, int i) const {
#pragma unroll
    for (int j = 0; j < M; ++j) {
      const T t = c[k * M + j];
      c[k * M + j] = c[i * M + j], c[i * M + j] = t;
    }
    ThreadVecRhs<T, M>{d}.swap(k, i);
  }
  __device__ __forceinline__ void axpy(int i, T f, int k) const {
#pragma unroll
    for (int j = 0; j < M; ++j) c[i * M + j] -= f * c[k * M + j];
    ThreadVecRhs<T, M>{d}.axpy(i, f, k);
  }
  __device__ __forceinline__ void scale(int i, T inv) const {
#pragma unroll
    for (int j = 0; j < M; ++j) c[i * M + j] *= inv;
    ThreadVecRhs<T, M>{d}.scale(i, inv);
  }
};

template <class T, int M>
struct ThreadBlock {
  T (&v)[M * M];
  __device__ __forceinline__ T& operator()(int i, int j) const { return v[i * M + j]; }
};

// One block row of a system, whole: A, B, C row-major and d.
template <class T, int M>
struct ThreadRow {
  T a[M * M], b[M * M], c[M * M], d[M];
};

// The vector width K values of T take: 16 bytes where K * sizeof(T) is a multiple of 16, 8 where
// it is 8, otherwise none (one value at a time).
template <class T>
constexpr int thread_vec_bytes(int k) {
  const int bytes = k * static_cast<int>(sizeof(T));
  return bytes % 16 == 0 ? 16 : bytes == 8 ? 8 : 0;
}

// K consecutive values through vector accesses (Vec0 and a vector width for K values: a fp32 4 x 4
// block is 4 accesses of 16 bytes; the caller has checked the alignment, block_thread_vec) or one
// value at a time; thread_put the same for stores.
template <bool Vec0, class T, int K>
__device__ __forceinline__ void thread_get(const T* p, T (&v)[K]) {
  constexpr int bytes = K * static_cast<int>(sizeof(T));
  constexpr bool Vec = Vec0 && thread_vec_bytes<T>(K) > 0;
  if constexpr (Vec && bytes % 16 == 0) {
#pragma unroll
    for (int q = 0; q < bytes / 16; ++q) {
      const uint4 w = reinterpret_cast<const uint4*>(p)[q];
      __builtin_memcpy(&v[q * (16 / sizeof(T))], &w, 16);
    }
  } else if constexpr (Vec && bytes == 8) {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    __builtin_memcpy(&v[0], &w, 8);
  } else {
    static_assert(!Vec, "a vector access of 8 or a multiple of 16 bytes");
#pragma unroll
    for (int e = 0; e < K; ++e) v[e] = p[e];
  }
}

template <bool Vec0, class T, int K>
__device__ __forceinline__ void thread_put(T* p, const T (&v)[K]) {
  constexpr int bytes = K * static_cast<int>(sizeof(T));
  constexpr bool Vec = Vec0 && thread_vec_bytes<T>(K) > 0;
  if constexpr (Vec && bytes % 16 == 0) {
#pragma unroll
    for (int q = 0; q < bytes / 16; ++q) {
      uint4 w;
      __builtin_memcpy(&w, &v[q * (16 / sizeof(T))], 16);
      reinterpret_cast<uint4*>(p)[q] = w;
    }
  } else if constexpr (Vec && bytes == 8) {
    uint2 w;
    __builtin_memcpy(&w, &v[0], 8);
    *reinterpret_cast<uint2*>(p) = w;
  } else {
    static_assert(!Vec, "a vector access of 8 or a multiple of 16 bytes");
#pragma unroll
    for (int e = 0; e < K; ++e) p[e] = v[e];
  }
}

// A block in the user's order (a runtime select for column-major) to row-major. block_entry's
// formula written as a select of values: raw[block_entry(order, M, r, q)] indexes the register
// array at run time, which ptxas puts in local memory (40-80 bytes of stack for M = 3, 4; tried).
template <class T, int M>
__device__ __forceinline__ void thread_block_rows(BlockOrder order, const T (&raw)[M * M], T (&out)[M * M]) {
#pragma unroll
  for (int r = 0; r < M; ++r)
#pragma unroll
    for (int q = 0; q < M; ++q)
      out[r * M + q] = order == BlockOrder::column_major ? raw[q * M + r] : raw[r * M + q];
}

// Row i of the system whose blocks start at ob and vectors at ov (unit component strides: the
// layouts block_thread_fits takes), with `pa` / `pc` the couplings read into in.a / in.c where has_a /
// has_c (else zero blocks): A_i and C_i for the top-down sweeps, C_i and A_i for the bottom-up one
// (block_thomas_pair_kernel). Entries: each value read from its own address, the couplings by
// predicated loads (M = 2: the fastest there, run s50/4; for M = 3, 4 it was 1.2x / 2.2x slower than
// whole blocks read under a branch, Vec where aligned).
template <class T, int M, bool Vec, bool Entries>
__device__ __forceinline__ void thread_load_blocks(const Args<T>& g, const T* pa, const T* pc, bool has_a, bool has_c,
                                                   index_t ob, index_t ov, index_t i, ThreadRow<T, M>& in) {
  constexpr int MM = M * M;
  const index_t pb = ob + i * g.l.blocks.row, pv = ov + i * g.l.vectors.row;
  if constexpr (Entries) {
#pragma unroll
    for (int r = 0; r < M; ++r) {
#pragma unroll
      for (int q = 0; q < M; ++q) {
        const index_t e = block_entry(g.l.order, M, r, q);
        in.b[r * M + q] = g.b[pb + e];
        in.a[r * M + q] = has_a ? pa[pb + e] : T(0);
        in.c[r * M + q] = has_c ? pc[pb + e] : T(0);
      }
      in.d[r] = g.d[pv + r];
    }
    return;
  }
  T raw[MM];
  thread_get<Vec>(g.b + pb, raw);
  thread_block_rows<T, M>(g.l.order, raw, in.b);
  if (has_a) {
    thread_get<Vec>(pa + pb, raw);
    thread_block_rows<T, M>(g.l.order, raw, in.a);
  } else {
#pragma unroll
    for (int e = 0; e < MM; ++e) in.a[e] = T(0);
  }
  if (has_c) {
    thread_get<Vec>(pc + pb, raw);
    thread_block_rows<T, M>(g.l.order, raw, in.c);
  } else {
#pragma unroll
    for (int e = 0; e < MM; ++e) in.c[e] = T(0);
  }
  thread_get<Vec>(g.d + pv, in.d);
}

// One block row of the top-down sweep: A_i and C_i, none above row 0 or below row n - 1.
template <class T, int M, bool Vec, bool Entries>
__device__ __forceinline__ void thread_load_row(const Args<T>& g, index_t ob, index_t ov, index_t i,
                                                ThreadRow<T, M>& in) {
  thread_load_blocks<T, M, Vec, Entries>(g, g.a, g.c, i > 0, i + 1 < g.l.n, ob, ov, i, in);
}

// One step of a one-thread sweep: S = B_i - A_i C*_prev, d' = d_i - A_i d*_prev, then S [C* | d*] =
// [C_i | d'] by common::block_lu_solve; cs, ds become row i's. failed() is called where S is singular.
template <class T, int M, class Failed>
__device__ __forceinline__ void thread_eliminate_row(const ThreadRow<T, M>& in, T (&cs)[M * M], T (&ds)[M], T tol,
                                                     Failed&& failed) {
  constexpr int MM = M * M;
  T sb[MM], c[MM], d[M];
#pragma unroll
  for (int r = 0; r < M; ++r) {
    T dr = in.d[r];
#pragma unroll
    for (int q = 0; q < M; ++q) {
      T v = in.b[r * M + q];
#pragma unroll
      for (int k = 0; k < M; ++k) v -= in.a[r * M + k] * cs[k * M + q];
      sb[r * M + q] = v;
      c[r * M + q] = in.c[r * M + q];
    }
#pragma unroll
    for (int k = 0; k < M; ++k) dr -= in.a[r * M + k] * ds[k];
    d[r] = dr;
  }
  ThreadBlock<T, M> sacc{sb};
  ThreadRhs<T, M> rhs{c, d};
  if (!common::block_lu_solve<T, M>(sacc, rhs, tol)) failed();
#pragma unroll
  for (int e = 0; e < MM; ++e) cs[e] = c[e];
#pragma unroll
  for (int r = 0; r < M; ++r) ds[r] = d[r];
}

// One step of a one-thread back substitution: x = d* - C* un (the neighbour's unknowns), then un = x.
template <class T, int M>
__device__ __forceinline__ void thread_substitute_row(const T (&c)[M * M], const T (&d)[M], T (&un)[M], T (&x)[M]) {
#pragma unroll
  for (int r = 0; r < M; ++r) {
    T v = d[r];
#pragma unroll
    for (int q = 0; q < M; ++q) v -= c[r * M + q] * un[q];
    x[r] = v;
  }
#pragma unroll
  for (int r = 0; r < M; ++r) un[r] = x[r];
}

// The one-thread forms' back substitution: rows row_of(k) for k = count - 1 down to 0, each reading
// [C* | d*] from workspace slot slot_of(k) `Back` rows ahead (backward_rows_ahead) and writing its
// unknowns to u; un holds the unknowns next to the first row substituted.
template <class T, int M, bool Vec, int Back, class Slot, class Row>
__device__ __forceinline__ void thread_back_substitute(const Args<T>& g, index_t systems, index_t sys, index_t ov,
                                                       index_t count, T (&un)[M], Slot&& slot_of, Row&& row_of) {
  constexpr int MM = M * M;
  struct Rows {
    T c[MM], d[M];
  };
  backward_rows_ahead<Back, Rows>(
      count + 1,
      [&](index_t k, Rows& b) {
        thread_get<Vec>(g.ws + (slot_of(k) * systems + sys) * MM, b.c);
        thread_get<Vec>(g.dws + (slot_of(k) * systems + sys) * M, b.d);
      },
      [&](index_t k, const Rows& cur) {
        T x[M];
        thread_substitute_row<T, M>(cur.c, cur.d, un, x);
        thread_put<Vec>(g.u + ov + row_of(k) * g.l.vectors.row, x);
      });
}

// Where the one-thread form is taken (per precision and M, not periodic) and how: rows read ahead
// in the forward sweep (`ahead`) and in the backward sweep (`back`), blocks of 128 threads per SM
// (the register cap), rows read entry by entry (`entries`, no vector accesses) or as whole blocks.
// Measured on an H200 (runs s50/1-4, interleaved N = 128, P = 65536): M = 2 is the same at every
// depth (1..3 forward, 2 or 4 backward, within 1%) and 2-3% slower with whole blocks (vector or
// not); M = 3 gains 3-5% from 2 / 4; fp32 M = 4 at 2 / 4 spills at any cap that holds all its
// systems (-36%), at 4 blocks per SM (128 registers, 200 bytes of spills) it is 5% slower; fp64 M = 3
// at 3 blocks (168 registers) spills, 1.8x slower.
// `pair`: where the two-thread form (block_thomas_pair_kernel) runs instead: never, where its grid fits
// one wave (2 P threads no more than its blocks per SM x SMs x 128), or always; ADI_BT_PAIR=0 / 1
// overrides it at each launch (timing and tests). Measured on an H200 (runs s51/1-2, N = 128,
// interleaved, one-thread -> two-thread ms; docs/block_tridiagonal.md "Two threads per system"): fp32 M = 2 wins up to
// one wave of pairs (P = 16384 0.176 -> 0.121, 65536 0.274 -> 0.255) and loses past it (98304 0.359 ->
// 0.402, 262144 0.931 -> 0.976); fp64 M = 2 wins at every P but 65536 (+2-3%: 16384 0.216 -> 0.156,
// 98304 0.827 -> 0.751, 196608 1.456 -> 1.364); fp32 M = 4's pair kernel fits 128 registers, 4 blocks
// per SM instead of 3 (65536 0.936 -> 0.800; elsewhere -3 .. +2.5%); fp32 M = 3 loses (0.523-0.533 ->
// 0.589-0.597: 128 registers and 16 bytes of spills at its cap of 4 blocks), fp64 M = 3 is level.
enum class PairRule { never, one_wave, always };
struct ThreadForm {
  bool take;
  int ahead, back, min_blocks;
  bool entries;
  PairRule pair;
};
template <class T, int M>
constexpr ThreadForm thread_form() {
  constexpr bool f32 = sizeof(T) == 4;
  if (M == 2) return {true, 1, 2, f32 ? 8 : 5, true, f32 ? PairRule::one_wave : PairRule::always};  // fp32 53, fp64 86 registers
  if (M == 3) return {true, 2, 4, f32 ? 4 : 2, false, PairRule::never};  // fp32 111, fp64 236 registers
  if (M == 4 && f32) return {true, 1, 2, 3, false, PairRule::always};    // fp32 141 registers
  return {false, 1, 2, 1, false, PairRule::never};
}

// Vec: every access a vector one where its size allows (block_thread_vec holds); otherwise one
// value at a time.
template <class T, int M, bool Vec>
__global__ void __launch_bounds__(128, thread_form<T, M>().min_blocks) block_thomas_thread_kernel(Args<T> g) {
  constexpr ThreadForm kForm = thread_form<T, M>();
  constexpr int MM = M * M;
  const index_t systems = g.l.count0 * g.l.count1;
  const index_t sys = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (sys >= systems) return;  // nothing below is collective
  const index_t n = g.l.n;
  const index_t l0 = sys % g.l.count0, l1 = sys / g.l.count0;
  const index_t ob = l0 * g.l.blocks.system0 + l1 * g.l.blocks.system1;
  const index_t ov = l0 * g.l.vectors.system0 + l1 * g.l.vectors.system1;
  bool reported = false;
  T cs[MM], ds[M];  // C*_{i-1}, d*_{i-1}
#pragma unroll
  for (int e = 0; e < MM; ++e) cs[e] = T(0);
#pragma unroll
  for (int r = 0; r < M; ++r) ds[r] = T(0);
  auto load_row = [&](index_t i, ThreadRow<T, M>& r) { thread_load_row<T, M, Vec, kForm.entries>(g, ob, ov, i, r); };
  forward_rows_ahead<kForm.ahead, ThreadRow<T, M>>(n, load_row, [&](index_t i, const ThreadRow<T, M>& in) {
    thread_eliminate_row<T, M>(in, cs, ds, g.tol, [&] { report(g, sys, i, reported); });
    if (i + 1 < n) {
      thread_put<Vec>(g.ws + (i * systems + sys) * MM, cs);
      thread_put<Vec>(g.dws + (i * systems + sys) * M, ds);
    } else {
      thread_put<Vec>(g.u + ov + i * g.l.vectors.row, ds);
    }
  });
  // Backward: u_i = d*_i - C*_i u_{i+1}, kForm.back rows' reads ahead.
  T un[M];
#pragma unroll
  for (int r = 0; r < M; ++r) un[r] = ds[r];
  thread_back_substitute<T, M, Vec, kForm.back>(g, systems, sys, ov, n - 1, un, [](index_t i) { return i; },
                                                [](index_t i) { return i; });
}

// ---- Two threads per system, from both ends (stop 51) ----
// The one-thread form's chain is a system's n block rows one after the other, and a thread per system
// leaves the GPU's threads idle where P is a few times its SM count x the threads one SM holds (P =
// 65536 systems of M = 2 fill half of an H200 at fp32 M = 2's 8 blocks of 128 an SM). Here thread 2s
// of the grid (`up` false) runs block Thomas top-down over rows 0 .. h - 1 (h = n / 2), thread 2s + 1
// bottom-up over rows n - 1 .. h + 1 (A**_i = S_i^-1 A_i, d**_i = S_i^-1 (d_i - C_i d**_{i+1}),
// S_i = B_i - C_i A**_{i+1}: the same step with A and C exchanged, thread_eliminate_row), both solve
// the middle row
//     (B_h - A_h C*_{h-1} - C_h A**_{h+1}) u_h = d_h - A_h d*_{h-1} - C_h d**_{h+1}
// (each computes its own coupling's share, the pair exchanges them by shuffles and both add them in
// the same order, so both hold the same u_h), then each substitutes back outward: u_i = d*_i - C*_i
// u_{i+1} above, u_i = d**_i - A**_i u_{i-1} below. Chains half as long, twice the threads, the same
// traffic; C*_i / A**_i and d*_i / d**_i go to workspace slot i (top) or i - 1 (bottom), n - 1 slots.
// Pivot blocks below the middle are those of the bottom-up elimination, so a singular block is named
// where that sweep meets it (a row the top-down sweep would reach later, or one it would not have
// found singular); the middle row is named only where neither side failed before it.
template <class T, int M, bool Vec>
__global__ void __launch_bounds__(128, thread_form<T, M>().min_blocks) block_thomas_pair_kernel(Args<T> g) {
  constexpr ThreadForm kForm = thread_form<T, M>();
  constexpr int MM = M * M;
  const index_t systems = g.l.count0 * g.l.count1;
  const index_t sys = (static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 1;
  if (sys >= systems) return;  // both threads of a pair (blockDim.x is even)
  const bool up = (threadIdx.x & 1u) != 0;
  const unsigned pair = 3u << (threadIdx.x & 30u);
  const index_t n = g.l.n, h = n / 2;
  const index_t steps = up ? n - 1 - h : h;
  const index_t l0 = sys % g.l.count0, l1 = sys / g.l.count0;
  const index_t ob = l0 * g.l.blocks.system0 + l1 * g.l.blocks.system1;
  const index_t ov = l0 * g.l.vectors.system0 + l1 * g.l.vectors.system1;
  const T* const lo = up ? g.c : g.a;  // the coupling to the unknown this side's sweep came from
  const T* const hi = up ? g.a : g.c;  // ... and to the one it goes to
  auto row_of = [&](index_t k) { return up ? n - 1 - k : k; };   // step k's row
  auto slot_of = [&](index_t k) { return up ? n - 2 - k : k; };  // its workspace slot
  bool reported = false;
  T cs[MM], ds[M];  // X*, x* of the previous step
#pragma unroll
  for (int e = 0; e < MM; ++e) cs[e] = T(0);
#pragma unroll
  for (int r = 0; r < M; ++r) ds[r] = T(0);
  forward_rows_ahead<kForm.ahead, ThreadRow<T, M>>(
      steps,
      [&](index_t k, ThreadRow<T, M>& r) {
        thread_load_blocks<T, M, Vec, kForm.entries>(g, lo, hi, k > 0, true, ob, ov, row_of(k), r);
      },
      [&](index_t k, const ThreadRow<T, M>& in) {
        thread_eliminate_row<T, M>(in, cs, ds, g.tol, [&] { report(g, sys, row_of(k), reported); });
        thread_put<Vec>(g.ws + (slot_of(k) * systems + sys) * MM, cs);
        thread_put<Vec>(g.dws + (slot_of(k) * systems + sys) * M, ds);
      });

  // The middle row: this side's share, lo_h [X* | x*], then the pair's sum in one order (top first).
  T x[M];
  {
    ThreadRow<T, M> mid;
    thread_load_blocks<T, M, Vec, kForm.entries>(g, lo, hi, steps > 0, false, ob, ov, h, mid);
    T share[MM + M];
#pragma unroll
    for (int r = 0; r < M; ++r) {
#pragma unroll
      for (int q = 0; q < M; ++q) {
        T v = T(0);
#pragma unroll
        for (int k = 0; k < M; ++k) v += mid.a[r * M + k] * cs[k * M + q];
        share[r * M + q] = v;
      }
      T w = T(0);
#pragma unroll
      for (int k = 0; k < M; ++k) w += mid.a[r * M + k] * ds[k];
      share[MM + r] = w;
    }
    T sb[MM];
#pragma unroll
    for (int e = 0; e < MM + M; ++e) {
      const T other = __shfl_xor_sync(pair, share[e], 1);
      const T top = up ? other : share[e], bottom = up ? share[e] : other;
      if (e < MM)
        sb[e] = mid.b[e] - top - bottom;
      else
        x[e - MM] = mid.d[e - MM] - top - bottom;
    }
    const bool partner_failed = __shfl_xor_sync(pair, static_cast<int>(reported), 1) != 0;
    ThreadBlock<T, M> sacc{sb};
    ThreadVecRhs<T, M> rhs{x};
    if (!common::block_lu_solve<T, M>(sacc, rhs, g.tol) && !reported && !partner_failed)
      report(g, sys, h, reported);
    if (!up) thread_put<Vec>(g.u + ov + h * g.l.vectors.row, x);
  }

  // Back substitution outward from the middle: step k's row last (next to the middle) first.
  T un[M];
#pragma unroll
  for (int r = 0; r < M; ++r) un[r] = x[r];
  thread_back_substitute<T, M, Vec, kForm.back>(g, systems, sys, ov, steps, un, slot_of, row_of);
}

// The one-thread form's layouts: not periodic, unit component strides and systems packed (system
// s + 1's block and vector right after system s's: BlockInterleaved, row- or column-major).
inline bool block_thread_fits(const BlockLineSet& l, bool periodic) {
  const index_t m = l.m;
  return !periodic && l.blocks.component == 1 && l.vectors.component == 1 && l.blocks.system0 == m * m &&
         l.vectors.system0 == m;
}

// ... and whether every block and vector it reads or writes is aligned for the vector accesses their
// sizes allow (thread_vec_bytes: every offset and every array a multiple of 16 or 8 bytes), so that
// the kernel moves a fp32 4 x 4 block in 4 accesses instead of 16.
template <class T>
bool block_thread_vec(const Args<T>& g) {
  const index_t m = g.l.m, mm = m * m;
  const auto vb = static_cast<index_t>(thread_vec_bytes<T>(static_cast<int>(mm)));
  const auto vv = static_cast<index_t>(thread_vec_bytes<T>(static_cast<int>(m)));
  const auto sz = static_cast<index_t>(sizeof(T));
  auto at = [](const void* p, index_t need) { return need == 0 || reinterpret_cast<std::uintptr_t>(p) % need == 0; };
  auto off = [&](index_t values, index_t need) { return need == 0 || (values * sz) % need == 0; };
  return off(g.l.blocks.row, vb) && off(g.l.blocks.system0, vb) && off(g.l.blocks.system1, vb) &&
         off(g.l.vectors.row, vv) && off(g.l.vectors.system0, vv) && off(g.l.vectors.system1, vv) &&
         at(g.a, vb) && at(g.b, vb) && at(g.c, vb) && at(g.ws, vb) &&
         at(g.d, vv) && at(g.u, vv) && at(g.dws, vv);
}

// Threads `Kernel` (a pair kernel, blocks of 128) keeps resident on the current device: its blocks per SM x
// SMs x 128, looked up once per device (PairRule::one_wave asks at every launch).
template <auto Kernel>
index_t pair_resident_threads() {
  constexpr int kDevices = 64;  // devices past this are looked up at each call
  static std::atomic<index_t> cached[kDevices];  // (0: not yet)
  int dev = 0;
  ADI_CUDA_CHECK(cudaGetDevice(&dev));
  const bool cache = dev >= 0 && dev < kDevices;
  if (cache)
    if (const index_t t = cached[dev].load(std::memory_order_relaxed); t > 0) return t;
  int sms = 0, per_sm = 0;
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  ADI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, 128, 0));
  const index_t t = static_cast<index_t>(per_sm) * sms * 128;
  if (cache) cached[dev].store(t, std::memory_order_relaxed);
  return t;
}

// Launches of the one-thread form, and of those with vector accesses (tests read them;
// block_thomas_cuda.cu).
std::atomic<std::size_t>& thread_form_count();
std::atomic<std::size_t>& thread_vec_count();
std::atomic<std::size_t>& thread_pair_count();

// Unit-stride layouts get their own kernel (strides known at compile time) for every M:
// without it for M = 6..8 (stop 32, to cut the compile; issue 15 item 8) 68 rows of
// bench_cuda_block_tridiagonal were more than 3% slower on an H200, up to 1.32x (fp32,
// periodic, interleaved, M = 7), so that change was reverted (docs/design.md, "Serial CUDA
// compile time").
template <class T, int M, template <class, int> class Exchange, bool Periodic>
void launch(Args<T> args, cudaStream_t stream) {
  constexpr int G = 32 / M;
  const index_t systems = args.l.count0 * args.l.count1;
  const index_t per_block = static_cast<index_t>(kWarps) * G;
  const auto blocks = static_cast<unsigned>((systems + per_block - 1) / per_block);
  const index_t rows = args.l.n > 1 ? args.l.n - 1 : 0;
  args.dws = args.ws + systems * rows * M * M * (Periodic ? 2 : 1);  // after the C*_i (and Z*_i)
  const bool unit = args.l.blocks.component == 1 && args.l.vectors.component == 1;
  if constexpr (!Periodic && thread_form<T, M>().take) {
    if (block_thread_fits(args.l, Periodic)) {
      ++thread_form_count();
      const auto tblocks = static_cast<unsigned>((systems + 127) / 128);
      // Where the rows are read entry by entry (M = 2) or no size allows a vector access (M = 3) one
      // kernel serves every alignment.
      constexpr bool kAnyVec =
          !thread_form<T, M>().entries && (thread_vec_bytes<T>(M * M) > 0 || thread_vec_bytes<T>(M) > 0);
      const bool vec = kAnyVec && block_thread_vec(args);
      if (vec) ++thread_vec_count();
      constexpr PairRule kRule = thread_form<T, M>().pair;
      bool pair = kRule == PairRule::always;
      if constexpr (kRule == PairRule::one_wave)
        pair = 2 * systems <= (vec ? pair_resident_threads<block_thomas_pair_kernel<T, M, kAnyVec>>()
                                   : pair_resident_threads<block_thomas_pair_kernel<T, M, false>>());
      if (::adi::detail::env_switch("ADI_BT_PAIR", pair)) {
        ++thread_pair_count();
        const auto pblocks = static_cast<unsigned>((2 * systems + 127) / 128);
        if (vec)
          block_thomas_pair_kernel<T, M, kAnyVec><<<pblocks, 128, 0, stream>>>(args);
        else
          block_thomas_pair_kernel<T, M, false><<<pblocks, 128, 0, stream>>>(args);
      } else if (vec) {
        block_thomas_thread_kernel<T, M, kAnyVec><<<tblocks, 128, 0, stream>>>(args);
      } else {
        block_thomas_thread_kernel<T, M, false><<<tblocks, 128, 0, stream>>>(args);
      }
      return;
    }
  }
  if (unit)
    block_thomas_kernel<T, M, Exchange, true, Periodic><<<blocks, kWarps * 32, 0, stream>>>(args);
  else
    block_thomas_kernel<T, M, Exchange, false, Periodic><<<blocks, kWarps * 32, 0, stream>>>(args);
}

}  // namespace adi::cuda_backend::block
