// Device version of the partition method's local passes (see partition_local_passes.hpp and the
// derivation at the top of adi/mpi/distributed_tridiagonal.cpp). Threads of one block own
// neighbouring lines: along Y and Z neighbouring lines are adjacent in memory, so every
// row access is coalesced; the loads of a row do not depend on the recurrence, so the
// unrolled loop issues them ahead of it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/partition_local_passes.hpp"
#include "solvers/cuda/thomas_truncated.cuh"
#include "solvers/common/partition_core.hpp"
#include "solvers/common/partition_reduced.hpp"
#include "solvers/common/stage_rhs_core.hpp"

namespace adi::cuda_backend::partition {

namespace {

constexpr int kThreads = 128;

__device__ __forceinline__ index_t line_offset(const LineSet& ls, index_t l) {
  return (l % ls.count0) * ls.stride0 + (l / ls.count0) * ls.stride1;
}

// Rows fetched ahead of the recurrence by the strided kernels (reduce_kernel, back_kernel) when
// the workspace asks for it (Workspace::prefetch): each chunk of kPrefetch rows is loaded into
// registers before the first of them is eliminated and stored, so a thread has kPrefetch rows'
// loads in flight instead of one. The compiler cannot do this itself: u may be the input (d,
// or the stage's base / V_old), and even with __restrict__ a load of row i+1 may not move
// above the store of row i (stride 0 would make them the same word). Explicit register
// staging is right whenever rows are distinct words, which they are.
constexpr int kPrefetch = 4;
// ... and at least this many blocks of kThreads per SM (<= 128 registers a thread): 262,144
// lines (512^2, the weak and strong 512^3 cases) then take 4 waves on 132 SMs, not 6 at the
// 3 blocks the stage reduce's register count would allow.
constexpr int kPrefetchBlocks = 4;
// Workspace::l2_prefetch: rows requested into L2 this many rows ahead of their register loads
// (lines along Y and Z). 16 rows of base and v for the ~68K lines resident on an H100/H200 are
// ~17 MB of L2; with the register chunks the loads then wait for L2, not DRAM.
constexpr int kL2Ahead = 16;

using kernels::prefetch_l2;  // (solvers/cuda/tridiagonal_common.cuh)
// A request of bytes [p, p + bytes) into L2 (a line's next tile along X): sm_90's bulk prefetch
// in 16-byte granules, elsewhere one prefetch per 128-byte line. (Only the X forms kept for
// comparison use it: unused in the default build, by_variant.)
[[maybe_unused]] __device__ __forceinline__ void prefetch_l2_range(const void* p, std::size_t bytes) {
  const std::size_t a = __cvta_generic_to_global(p);
  const std::size_t lo = a & ~std::size_t(15), hi = (a + bytes + 15) & ~std::size_t(15);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(lo), "r"(unsigned(hi - lo)) : "memory");
#else
  for (std::size_t q = lo & ~std::size_t(127); q < hi; q += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(q));
#endif
}

// Reduces rows 0..n-1 (n >= 2) of one segment to its two interface rows (modified Thomas
// keeping u_0 as a parameter, u_1 accumulated in terms of both ends): fetch(i, raw) issues
// row i's memory loads into `raw` (a Raw), make(i, raw, a, b, c, d) forms row i from them
// (called in row order, after fetch(i)), store(i, delta, alpha, gamma) keeps row i's
// elimination (1 <= i <= n-2), out(k, v) receives the 8 values (a, b, c, d of row 0, then
// of row n-1). D > 1: rows 2..n-2 fetched in chunks of D ahead of their stores.
template <class T, int D, class Raw, class Fetch, class Make, class Store, class Out>
__device__ __forceinline__ void reduce_segment(index_t n, const Fetch& fetch, const Make& make, const Store& store,
                                               const Out& out, bool first_open, bool last_open) {
  auto load = [&](index_t i, T& ai, T& bi, T& ci, T& di) {
    Raw raw;
    fetch(i, raw);
    make(i, raw, ai, bi, ci, di);
  };
  T a0, b0, c0, d0;
  load(0, a0, b0, c0, d0);
  T res[8];
  if (n == 2) {
    T a1, b1, c1, d1;
    load(1, a1, b1, c1, d1);
    res[0] = first_open ? T(0) : a0;
    res[1] = b0;
    res[2] = c0;
    res[3] = d0;
    res[4] = a1;
    res[5] = b1;
    res[6] = last_open ? T(0) : c1;
    res[7] = d1;
  } else {
    bool bad = false;
    T a, b, c, d;
    load(1, a, b, c, d);
    T r = T(1) / b;
    bad |= !isfinite(r);
    // Row 1 starts the sweep (solvers/common/partition_core.hpp): ap = a r, gp = c r,
    // dp = d r, and row 1 substituted into row 0 (P = dp, Q = ap, pi = -gp).
    T ap = a * r, gp = c * r, dp = d * r;
    store(1, dp, ap, gp);
    T P = dp, Q = ap, pi = -gp;
    auto row = [&](index_t i) {
      r = T(1) / common::thomas_pivot(a, b, gp);
      bad |= !isfinite(r);
      common::partition_row(a, c, d, r, gp, dp, ap);
      store(i, dp, ap, gp);
      common::partition_accumulate(gp, dp, ap, P, Q, pi);
    };
    if constexpr (D <= 1) {
#pragma unroll 4
      for (index_t i = 2; i <= n - 2; ++i) {
        load(i, a, b, c, d);
        row(i);
      }
    } else {
      // Two register buffers of D rows: the next chunk's loads are issued before the rows
      // of the current one are made and stored (never a copy between the buffers: a move
      // would wait for its load).
      Raw x[D], y[D];
      auto chunk = [&](index_t i0, Raw (&use)[D], Raw (&next)[D]) {
#pragma unroll
        for (int k = 0; k < D; ++k)
          if (i0 + D + k <= n - 2) fetch(i0 + D + k, next[k]);
#pragma unroll
        for (int k = 0; k < D; ++k)
          if (i0 + k <= n - 2) {
            make(i0 + k, use[k], a, b, c, d);
            row(i0 + k);
          }
      };
#pragma unroll
      for (int k = 0; k < D; ++k)
        if (2 + k <= n - 2) fetch(2 + k, x[k]);
      for (index_t i0 = 2; i0 <= n - 2; i0 += 2 * D) {
        chunk(i0, x, y);
        if (i0 + D > n - 2) break;
        chunk(i0 + D, y, x);
      }
    }
    load(n - 1, a, b, c, d);
    res[0] = first_open ? T(0) : a0;
    common::partition_first_row(b0, c0, d0, P, Q, pi, res[1], res[2], res[3]);
    common::partition_last_row(a, b, d, gp, dp, ap, res[4], res[5], res[7]);
    res[6] = last_open ? T(0) : c;
    if (bad)
      for (int k = 0; k < 8; ++k) res[k] = T(NAN);
  }
  for (int k = 0; k < 8; ++k) out(k, res[k]);
}

// reduce_segment with a plain load(i, a, b, c, d) (no fetch ahead).
struct NoRaw {};
template <class T, class Load, class Store, class Out>
__device__ __forceinline__ void reduce_segment(index_t n, const Load& load, const Store& store, const Out& out,
                                               bool first_open, bool last_open) {
  reduce_segment<T, 1, NoRaw>(
      n, [](index_t, NoRaw&) {},
      [&](index_t i, const NoRaw&, T& ai, T& bi, T& ci, T& di) { load(i, ai, bi, ci, di); }, store, out,
      first_open, last_open);
}

// Level 1: thread (l, s) reduces sub-segment s of line l (rows m*s/S .. m*(s+1)/S - 1).
// S == 1: straight into red[l*8 + k]; else into red1[(s*8 + k)*L + l]. Stage (shared bands):
// row i's right-hand side formed from g (StageRhs) instead of read from d; v moves along the
// line in registers (one load per row), so u may be v (rows 0 and n-1 of a sub-segment,
// which its neighbours read, are not written here); the row's formula is the fused stage's
// (common::stage_rhs_inner / stage_rhs_end, solvers/common/stage_rhs_core.hpp). D > 1: rows
// fetched D at a time ahead of their stores (kPrefetch); every row is still read before it is
// written, so u may be d, base or v as with D = 1. L2: rows also requested into L2 kL2Ahead
// rows ahead of their fetch (Workspace::l2_prefetch).
template <class T, bool Shared, bool Stage = false, int D = 1, bool L2 = false>
__global__ void __launch_bounds__(kThreads, D > 1 ? kPrefetchBlocks : 1) reduce_kernel(LineSet ls, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                              const T* d, T* u, T* __restrict__ alpha, T* __restrict__ gamma, T* __restrict__ red,
                              T* __restrict__ red1, int S, bool first_open, bool last_open, StageRhs<T> g) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const int s = int(blockIdx.y);
  const index_t m = ls.n, st = ls.stride, r0 = m * s / S, r1 = m * (s + 1) / S;
  const index_t o0 = line_offset(ls, l) + r0 * st;
  // Stage: v at rows i-1, i, i+1 of the row being made; the line's global ends read no
  // neighbour beyond them (no ghost there). v at rows -1 and 0 are read here, before any
  // store; row i's fetch reads v at row i+1.
  const bool lo_end = first_open && s == 0, hi_end = last_open && s == S - 1;
  const index_t n_sub = r1 - r0, fi = g.face_base + l % ls.count0 + (l / ls.count0) * g.face_n1;
  T vm = T(0), vc = T(0), vp = T(0);
  if (Stage && g.v) {
    vc = g.v[o0];
    vm = lo_end ? T(0) : g.v[o0 - st];
  }
  // Row i's loads of per-line data (the shared bands a, b, c are a few cached rows: read in make).
  struct Raw {
    T a, b, c, d;  // Stage: d = base, c = v at row i+1; a, b unused (Shared)
  };
  auto fetch = [&](index_t i, Raw& q) {
    const index_t o = o0 + i * st;
    // (per-line bands: a, b, c and d, four fields: half the distance keeps ~17 MB of L2 too)
    constexpr int ahead = Shared ? kL2Ahead : kL2Ahead / 2;
    if constexpr (L2)
      if (i + ahead < n_sub) {
        const index_t p = o + ahead * st;
        if (!Shared) {
          prefetch_l2(a + p);
          prefetch_l2(b + p);
          prefetch_l2(c + p);
        }
        if constexpr (!Stage) {
          prefetch_l2(d + p);
        } else {
          prefetch_l2(g.base + p);
          if (g.v) prefetch_l2(g.v + p);
        }
      }
    if (!Shared) {
      q.a = a[o];
      q.b = b[o];
      q.c = c[o];
    }
    if constexpr (!Stage) {
      q.d = d[o];
    } else {
      q.d = g.base[o];
      if (g.v) q.c = (i == n_sub - 1 && hi_end) ? T(0) : g.v[o + st];
    }
  };
  auto make = [&](index_t i, const Raw& q, T& ai, T& bi, T& ci, T& di) {
    ai = Shared ? a[r0 + i] : q.a;
    bi = Shared ? b[r0 + i] : q.b;
    ci = Shared ? c[r0 + i] : q.c;
    if constexpr (!Stage) {
      di = q.d;
    } else {
      const index_t o = o0 + i * st;
      if (g.v) {
        if (i > 0) {
          vm = vc;
          vc = vp;
        }
        vp = q.c;
      }
      const index_t row = r0 + i;
      const T ga = g.a[row], gd = g.d[row], gc = g.c[row];
      const T base_r = q.d;
      if (lo_end && i == 0)
        di = common::stage_rhs_end(g, 0, ga, gd, gc, base_r, vm, vc, vp, fi, o);
      else if (hi_end && i == n_sub - 1)
        di = common::stage_rhs_end(g, 1, ga, gd, gc, base_r, vm, vc, vp, fi, o);
      else
        di = common::stage_rhs_inner(g, ga, gd, gc, base_r, vm, vc, vp, o);
    }
  };
  // Shared bands: alpha and gamma depend on the bands only, the same for every line: one
  // row of them (line 0's) instead of one per line, 4 arrays less traffic per solve.
  auto store = [&](index_t i, T dn, T an, T gn) {
    u[o0 + i * st] = dn;
    if (Shared) {
      if (l == 0) {
        alpha[r0 + i] = an;
        gamma[r0 + i] = gn;
      }
    } else {
      alpha[(r0 + i) * L + l] = an;
      gamma[(r0 + i) * L + l] = gn;
    }
  };
  auto out = [&](int k, T v) {
    if (S == 1)
      red[l * 8 + k] = v;
    else
      red1[(index_t(s) * 8 + k) * L + l] = v;
  };
  reduce_segment<T, D, Raw>(n_sub, fetch, make, store, out, first_open && s == 0, last_open && s == S - 1);
}

// Lines whose rows are adjacent in memory (stride 1: lines along x) and shared bands: one
// thread per line would make every warp load touch 32 cache lines. Each warp stages 32 rows
// of its 32 lines through shared memory instead (loads and stores coalesced along the rows)
// and every thread works on its line's column of the tile. The same maths as reduce_kernel
// and back_kernel (Shared); rows are 32-aligned from the sub-segment's first row.
constexpr int kWarp = 32;
template <class T>
struct RowTiles {
  T v[kThreads / kWarp][kWarp][kWarp + 1];
};

// Warp-collective: rows R .. R+31 (0 <= row < n; R < 0 for the first tile of a tiling aligned
// to memory, tile_shift) of the warp's lines (first line wl0, L lines in all) between `src` /
// `dst` (sub-segment base r0 of each line) and the warp's tile; tile[k][t] is row R+t of line
// wl0+k.
// tile_fill: tile[k][t] = value(line, row in the segment, offset) of row R+t of line wl0+k.
// B = 1: one line at a time (each lane's load waits in its shared store before the next line's
// is issued, and every lane works out every line's offset: a 64-bit division each). B > 1
// (the prefetch kernels): each lane works out its own line's offset once, the others come by
// shuffle, and B lines' values are loaded into registers before they go to the tile.
constexpr int kTileBatch = 4;
template <int B, class T, class Value>
__device__ __forceinline__ void tile_fill(const LineSet& ls, index_t L, index_t wl0, index_t r0, index_t R, index_t n,
                                          const Value& value, T (*tile)[kWarp + 1]) {
  const int lane = int(threadIdx.x) & (kWarp - 1);
  __syncwarp();
  if constexpr (B <= 1) {
    if (R + lane >= 0 && R + lane < n)
      for (int k = 0; k < kWarp && wl0 + k < L; ++k)
        tile[k][lane] = value(wl0 + k, r0 + R + lane, line_offset(ls, wl0 + k) + r0 + R + lane);
  } else {
    const index_t own = line_offset(ls, wl0 + lane < L ? wl0 + lane : wl0);
    const bool row = R + lane >= 0 && R + lane < n;
    for (int k0 = 0; k0 < kWarp; k0 += B) {
      T v[B];
#pragma unroll
      for (int j = 0; j < B; ++j) {
        const index_t o = __shfl_sync(0xffffffffu, own, k0 + j);  // (every lane takes part)
        if (row && wl0 + k0 + j < L) v[j] = value(wl0 + k0 + j, r0 + R + lane, o + r0 + R + lane);
      }
#pragma unroll
      for (int j = 0; j < B; ++j)
        if (row && wl0 + k0 + j < L) tile[k0 + j][lane] = v[j];
    }
  }
  __syncwarp();
}
template <int B, class T>
__device__ __forceinline__ void tile_load(const LineSet& ls, index_t L, index_t wl0, index_t r0, index_t R, index_t n,
                                          const T* src, T (*tile)[kWarp + 1]) {
  tile_fill<B>(ls, L, wl0, r0, R, n, [&](index_t, index_t, index_t o) { return src[o]; }, tile);
}
template <int B, class T>
__device__ __forceinline__ void tile_store(const LineSet& ls, index_t L, index_t wl0, index_t r0, index_t R, index_t n,
                                           T* dst, T (*tile)[kWarp + 1]) {
  const int lane = int(threadIdx.x) & (kWarp - 1);
  __syncwarp();
  if constexpr (B <= 1) {
    if (R + lane >= 0 && R + lane < n)
      for (int k = 0; k < kWarp && wl0 + k < L; ++k) dst[line_offset(ls, wl0 + k) + r0 + R + lane] = tile[k][lane];
  } else {
    const index_t own = line_offset(ls, wl0 + lane < L ? wl0 + lane : wl0);
    const bool row = R + lane >= 0 && R + lane < n;
#pragma unroll 8
    for (int k = 0; k < kWarp; ++k) {
      const index_t o = __shfl_sync(0xffffffffu, own, k);
      if (row && wl0 + k < L) dst[o + r0 + R + lane] = tile[k][lane];
    }
  }
  __syncwarp();
}

// The tiles of a warp aligned to memory (Workspace::l2_prefetch): tile t holds rows
// 32t - shift .. 32t - shift + 31, shift = row 0's place in its 64 bytes (the same for every
// line of a field: rows are padded to a multiple of 64 bytes, 128 since stop 39), so that no sector is split between two tiles
// (its halves read, and written, a tile's time apart: a DRAM read again, or a partial write,
// once L2 has dropped it). Rank 1 of an x split has its rows one value off (the ghost plane
// before them). p: row 0 of the warp's first line.
template <class T>
__device__ __forceinline__ int tile_shift(const T* p) {
  return int((reinterpret_cast<std::uintptr_t>(p) / sizeof(T)) % (64 / sizeof(T)));
}

// tile_fill of an ADI stage's right-hand side with v read once per row (Workspace::l2_prefetch):
// lane j loads v and base at row R+j of line wl0+k; v at rows R+j-1 and R+j+1 come from the
// neighbouring lanes, at the tile's edges from `carry` (v at row R-1 of lane k's own line,
// kept from the previous tile; the first tile, R <= 0, loads it) and from one load of the row
// after the tile by its last lane (the next tile's first row, already requested into L2 by the caller). Loading
// v[o-1], v[o], v[o+1] instead (tile_fill with the row formula) touches the sectors across
// both tile edges once more per tile, a DRAM read again when L2 has dropped them (stop 31's
// x-split reduce read 3.44 fields where 2 are expected). own: lane's line offset (line_offset
// of its line, or of line wl0 past the last line). lo_open / hi_open: row -1 / row n of the
// sub-segment do not exist (the line's global ends). rhs(line, row, o, base_r, vm, vc, vp): the
// row's value.
template <int B, class T, class Rhs>
__device__ __forceinline__ void tile_fill_stage(index_t L, index_t wl0, index_t r0, index_t R, index_t n,
                                                index_t own, const T* v, const T* base, bool lo_open, bool hi_open,
                                                T& carry, const Rhs& rhs, T (*tile)[kWarp + 1]) {
  const int lane = int(threadIdx.x) & (kWarp - 1);
  const int first = R < 0 ? int(-R) : 0;                     // the tile's first row's lane
  const int last = int(n - R < kWarp ? n - R : kWarp) - 1;  // ... and its last row's
  const bool row = lane >= first && lane <= last;
  __syncwarp();
  for (int k0 = 0; k0 < kWarp; k0 += B) {
    // edge: v at the row before the tile (its first lane, first tile) or after it (its last
    // lane); never both: a first tile has >= 2 rows (n >= 2, 64 bytes >= 2 values)
    T vc[B], bs[B], edge[B];
#pragma unroll
    for (int j = 0; j < B; ++j) {
      vc[j] = bs[j] = edge[j] = T(0);
      const index_t o = __shfl_sync(0xffffffffu, own, k0 + j) + r0 + R + lane;  // (every lane takes part)
      if (row && wl0 + k0 + j < L) {
        bs[j] = base[o];
        if (v) {
          vc[j] = v[o];
          if (lane == first && R <= 0 && !lo_open) edge[j] = v[o - 1];
          if (lane == last && !(hi_open && R + lane == n - 1)) edge[j] = v[o + 1];
        }
      }
    }
#pragma unroll
    for (int j = 0; j < B; ++j) {
      const int k = k0 + j;
      if (wl0 + k >= L) continue;  // (the same k on every lane)
      const index_t o = __shfl_sync(0xffffffffu, own, k) + r0 + R + lane;
      T vm = __shfl_up_sync(0xffffffffu, vc[j], 1), vp = __shfl_down_sync(0xffffffffu, vc[j], 1);
      const T before = __shfl_sync(0xffffffffu, carry, k), next = __shfl_sync(0xffffffffu, vc[j], kWarp - 1);
      if (lane == k) carry = next;  // v at row R+31 of lane k's line: the next tile's row before
      if (lane == first) vm = R <= 0 ? edge[j] : before;
      if (lane == last) vp = edge[j];
      if (row) tile[k][lane] = rhs(wl0 + k, r0 + R + lane, o, bs[j], vm, vc[j], vp);
    }
  }
  __syncwarp();
}

// reduce_kernel<T, true> for stride-1 lines. Rows 0 and n-1 of the sub-segment go to u with
// d's values (the back-substitution overwrites them); u may be d. Stage: the tiles filled with
// the stage's right-hand side from g (the neighbours along the line are adjacent words of the
// same cache lines); u may be g.base, not g.v (a tile's first row reads the row before it,
// already stored). L2 (Workspace::l2_prefetch): each lane requests its line's next tile into L2
// as a tile is filled, the stage's v is read once per row (tile_fill_stage), and the tiles are
// aligned to memory (tile_shift).
template <class T, bool Stage = false, int B = 1, bool L2 = false>
__global__ void __launch_bounds__(kThreads, B > 1 ? kPrefetchBlocks : 1)
    reduce_rows_kernel(LineSet ls, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                       const T* d, T* u, T* __restrict__ alpha, T* __restrict__ gamma, T* __restrict__ red,
                       T* __restrict__ red1, int S, bool first_open, bool last_open, StageRhs<T> g) {
  __shared__ RowTiles<T> tiles;
  const index_t L = ls.count0 * ls.count1;
  const int lane = int(threadIdx.x) & (kWarp - 1), warp = int(threadIdx.x) / kWarp;
  const index_t wl0 = index_t(blockIdx.x) * blockDim.x + index_t(warp) * kWarp;
  if (wl0 >= L) return;  // the whole warp
  T(*tile)[kWarp + 1] = tiles.v[warp];
  const index_t l = wl0 + lane;
  const int s = int(blockIdx.y);
  const index_t m = ls.n, r0 = m * s / S, r1 = m * (s + 1) / S, n = r1 - r0;
  // L2: tiles aligned to memory (tile_shift); R: first row of the tile held (R + 32 <= 0: none yet)
  const int sh = L2 ? tile_shift(u + line_offset(ls, wl0) + r0) : 0;
  index_t R = -kWarp - sh;
  // Stage: row `row` of this rank's segment of line `line`, at offset o, from base and v there.
  auto rhs_row = [&](index_t line, index_t row, index_t o, T base_r, T vm, T vc, T vp) -> T {
    const bool lo_end = first_open && row == 0, hi_end = last_open && row == m - 1;
    if (lo_end || hi_end) {  // (the face index only there: a 64-bit division)
      const index_t fi = g.face_base + line % ls.count0 + (line / ls.count0) * g.face_n1;
      return common::stage_rhs_end(g, lo_end ? 0 : 1, g.a[row], g.d[row], g.c[row], base_r, vm, vc, vp, fi, o);
    }
    return common::stage_rhs_inner(g, g.a[row], g.d[row], g.c[row], base_r, vm, vc, vp, o);
  };
  // ... loading v at the row and its two neighbours (stop 31; the ends' missing neighbour unread)
  auto rhs_at = [&](index_t line, index_t row, index_t o) -> T {
    const bool lo_end = first_open && row == 0, hi_end = last_open && row == m - 1;
    const T vm = g.v && !lo_end ? g.v[o - 1] : T(0);
    const T vc = g.v ? g.v[o] : T(0);
    const T vp = g.v && !hi_end ? g.v[o + 1] : T(0);
    return rhs_row(line, row, o, g.base[o], vm, vc, vp);
  };
  // L2: the lane's own line (line wl0 past the last), its next tile requested into L2 as a tile
  // is filled; carry: v at the row before the tile (tile_fill_stage).
  const index_t own = L2 ? line_offset(ls, l < L ? l : wl0) : 0;
  T carry = T(0);
  auto load = [&](index_t i, T& ai, T& bi, T& ci, T& di) {
    if (i >= R + kWarp) {  // the same i on every lane: the warp moves on together
      if (R + kWarp > 0) tile_store<B>(ls, L, wl0, r0, R, n, u, tile);
      R = i - (i + sh) % kWarp;
      if constexpr (L2)
        if (R + kWarp < n && l < L) {
          const index_t o = own + r0 + R + kWarp;
          const std::size_t bytes = std::size_t(n - R - kWarp < kWarp ? n - R - kWarp : kWarp) * sizeof(T);
          if constexpr (Stage) {
            prefetch_l2_range(g.base + o, bytes);
            if (g.v) prefetch_l2_range(g.v + o, bytes);
          } else {
            prefetch_l2_range(d + o, bytes);
          }
        }
      if constexpr (Stage && L2)
        tile_fill_stage<B>(L, wl0, r0, R, n, own, g.v, g.base, first_open && s == 0, last_open && s == S - 1, carry,
                           rhs_row, tile);
      else if constexpr (Stage)
        tile_fill<B>(ls, L, wl0, r0, R, n, rhs_at, tile);
      else
        tile_load<B>(ls, L, wl0, r0, R, n, d, tile);
    }
    ai = a[r0 + i];
    bi = b[r0 + i];
    ci = c[r0 + i];
    di = tile[lane][i - R];
  };
  auto store = [&](index_t i, T dn, T an, T gn) {
    tile[lane][i - R] = dn;
    if (l == 0) {
      alpha[r0 + i] = an;
      gamma[r0 + i] = gn;
    }
  };
  auto out = [&](int k, T v) {
    if (l >= L) return;
    if (S == 1)
      red[l * 8 + k] = v;
    else
      red1[(index_t(s) * 8 + k) * L + l] = v;
  };
  reduce_segment<T>(n, load, store, out, first_open && s == 0, last_open && s == S - 1);
  tile_store<B>(ls, L, wl0, r0, R, n, u, tile);
}

// back_kernel<T, true> for stride-1 lines: tiles of 32 rows from the sub-segment's top. L2:
// each lane requests its line's next tile (the one below) into L2 as a tile is loaded, and the
// tiles are aligned to memory (tile_shift).
template <class T, int B = 1, bool L2 = false>
__global__ void __launch_bounds__(kThreads, B > 1 ? kPrefetchBlocks : 1)
    back_rows_kernel(LineSet ls, const T* __restrict__ alpha, const T* __restrict__ gamma,
                     const T* __restrict__ sol, const T* __restrict__ sol1, int S, T* u, int* bad) {
  __shared__ RowTiles<T> tiles;
  const index_t L = ls.count0 * ls.count1;
  const int lane = int(threadIdx.x) & (kWarp - 1), warp = int(threadIdx.x) / kWarp;
  const index_t wl0 = index_t(blockIdx.x) * blockDim.x + index_t(warp) * kWarp;
  if (wl0 >= L) return;
  T(*tile)[kWarp + 1] = tiles.v[warp];
  const index_t l = wl0 + lane;
  const bool live = l < L;
  const int s = int(blockIdx.y);
  const index_t m = ls.n, r0 = m * s / S, r1 = m * (s + 1) / S, n = r1 - r0;
  const T u0 = !live ? T(0) : S == 1 ? sol[2 * l] : sol1[(2 * index_t(s)) * L + l];
  T nx = !live ? T(0) : S == 1 ? sol[2 * l + 1] : sol1[(2 * index_t(s) + 1) * L + l];
  if (S == 1 && bad && live && !(isfinite(u0) && isfinite(nx))) *bad = 1;  // S > 1: back_chain_kernel checked
  const index_t own = L2 ? line_offset(ls, live ? l : wl0) : 0;
  const int sh = L2 ? tile_shift(u + line_offset(ls, wl0) + r0) : 0;  // (tiles aligned to memory)
  for (index_t R = ((n - 1 + sh) / kWarp) * kWarp - sh; R + kWarp > 0; R -= kWarp) {
    if constexpr (L2)
      if (R > 0 && live) {
        const index_t below = R - kWarp > 0 ? R - kWarp : 0;
        prefetch_l2_range(u + own + r0 + below, std::size_t(R - below) * sizeof(T));
      }
    tile_load<B>(ls, L, wl0, r0, R, n, u, tile);
    const index_t top = R + kWarp - 1 < n - 1 ? R + kWarp - 1 : n - 1;
    for (index_t i = top; i >= R && i >= 0; --i) {
      T v = nx;  // row n-1: the segment's last unknown
      if (i == 0)
        v = u0;
      else if (i < n - 1)
        v = nx = common::partition_fill(tile[lane][i - R], alpha[r0 + i], u0, gamma[r0 + i], nx);
      tile[lane][i - R] = v;
    }
    tile_store<B>(ls, L, wl0, r0, R, n, u, tile);
  }
}

// Level 2: thread l reduces the 2S-row chain of its sub-segments' interface rows (row
// 2s + j: red1[(s*8 + 4j + q)*L + l], q = a, b, c, d) to the line's two rows.
template <class T>
__global__ void reduce_chain_kernel(index_t L, int S, const T* __restrict__ red1, T* __restrict__ w2,
                                    T* __restrict__ red) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  auto load = [&](index_t k, T& ai, T& bi, T& ci, T& di) {
    const index_t base = ((k >> 1) * 8 + (k & 1) * 4) * L + l;
    ai = red1[base];
    bi = red1[base + L];
    ci = red1[base + 2 * L];
    di = red1[base + 3 * L];
  };
  auto store = [&](index_t k, T dn, T an, T gn) {
    w2[(k * 3) * L + l] = dn;
    w2[(k * 3 + 1) * L + l] = an;
    w2[(k * 3 + 2) * L + l] = gn;
  };
  auto out = [&](int k, T v) { red[l * 8 + k] = v; };
  // The open ends were already zeroed by level 1.
  reduce_segment<T>(2 * index_t(S), load, store, out, false, false);
}

// Level 2 reversed: the chain's unknowns from the line's two (sol) into sol1[k*L + l].
template <class T>
__global__ void back_chain_kernel(index_t L, int S, const T* __restrict__ w2, const T* __restrict__ sol,
                                  T* __restrict__ sol1, int* bad) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t n = 2 * index_t(S);
  const T v0 = sol[2 * l];
  T nx = sol[2 * l + 1];
  if (bad && !(isfinite(v0) && isfinite(nx))) *bad = 1;
  sol1[l] = v0;
  sol1[(n - 1) * L + l] = nx;
  for (index_t k = n - 2; k >= 1; --k) {
    nx = common::partition_fill(w2[(k * 3) * L + l], w2[(k * 3 + 1) * L + l], v0, w2[(k * 3 + 2) * L + l], nx);
    sol1[k * L + l] = nx;
  }
}

// Level 1 reversed: thread (l, s) back-substitutes sub-segment s from its two ends
// (Shared: alpha and gamma one row for every line, as reduce_kernel kept them). D > 1: rows
// read D at a time (kPrefetch) ahead of their stores; L2: also requested into L2 kL2Ahead rows
// ahead of that.
template <class T, bool Shared, int D = 1, bool L2 = false>
__global__ void __launch_bounds__(kThreads, D > 1 ? kPrefetchBlocks : 1) back_kernel(LineSet ls, const T* __restrict__ alpha, const T* __restrict__ gamma,
                            const T* __restrict__ sol, const T* __restrict__ sol1, int S, T* __restrict__ u,
                            int* bad) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const int s = int(blockIdx.y);
  const index_t m = ls.n, st = ls.stride, r0 = m * s / S, r1 = m * (s + 1) / S;
  const index_t o0 = line_offset(ls, l) + r0 * st, n = r1 - r0;
  const T u0 = S == 1 ? sol[2 * l] : sol1[(2 * index_t(s)) * L + l];
  T nx = S == 1 ? sol[2 * l + 1] : sol1[(2 * index_t(s) + 1) * L + l];
  if (S == 1 && bad && !(isfinite(u0) && isfinite(nx))) *bad = 1;  // S > 1: back_chain_kernel checked
  u[o0] = u0;
  u[o0 + (n - 1) * st] = nx;
  if constexpr (D <= 1) {
#pragma unroll 4
    for (index_t i = n - 2; i >= 1; --i) {
      const index_t o = o0 + i * st;
      const index_t w = Shared ? r0 + i : (r0 + i) * L + l;
      nx = common::partition_fill(u[o], alpha[w], u0, gamma[w], nx);
      u[o] = nx;
    }
  } else {
    // As reduce_segment's D > 1: two register buffers of D rows (u, and alpha, gamma when
    // not shared), the next chunk's loads issued before the current chunk's stores.
    struct Raw {
      T u, a, g;
    };
    // (L2 with per-line bands: u only; alpha and gamma too spilled 92 bytes at the 128-register
    // cap, sm_90 fp64, u alone 20)
    const index_t ahead = kL2Ahead * st;
    auto fetch = [&](index_t i, Raw& q) {
      const T* pu = u + o0 + i * st;
      q.u = *pu;
      if constexpr (L2)
        if (i - kL2Ahead >= 1) prefetch_l2(pu - ahead);
      if (!Shared) {
        q.a = alpha[(r0 + i) * L + l];
        q.g = gamma[(r0 + i) * L + l];
      }
    };
    auto chunk = [&](index_t i0, Raw (&use)[D], Raw (&next)[D]) {
#pragma unroll
      for (int k = 0; k < D; ++k)
        if (i0 - D - k >= 1) fetch(i0 - D - k, next[k]);
#pragma unroll
      for (int k = 0; k < D; ++k)
        if (i0 - k >= 1) {
          const index_t i = i0 - k;
          nx = common::partition_fill(use[k].u, Shared ? alpha[r0 + i] : use[k].a, u0,
                                      Shared ? gamma[r0 + i] : use[k].g, nx);
          u[o0 + i * st] = nx;
        }
    };
    Raw x[D], y[D];
#pragma unroll
    for (int k = 0; k < D; ++k)
      if (n - 2 - k >= 1) fetch(n - 2 - k, x[k]);
    for (index_t i0 = n - 2; i0 >= 1; i0 -= 2 * D) {
      chunk(i0, x, y);
      if (i0 - D < 1) break;
      chunk(i0 - D, y, x);
    }
  }
}

// Phase 2: thread l solves the reduced system of line l (see solve_reduced in the header);
// scratch slot j of row k at scratch[(j*n + k)*count + l] (neighbouring lines adjacent).
template <class T>
__global__ void reduced_kernel(index_t count, int n, bool periodic, const T* __restrict__ rows, index_t line_stride,
                               index_t rank_stride, T* __restrict__ scratch, int pair, T* __restrict__ out,
                               index_t out_rank_stride, index_t out_line_stride) {
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= count) return;
  const T* base = rows + l * line_stride;
  auto row = [&](int k) { return base + index_t(k >> 1) * rank_stride + (k & 1) * 4; };
  auto s = [&](int j, int k) -> T& { return scratch[(index_t(j) * n + k) * count + l]; };
  solve_reduced_rows<T>(n, periodic, row, s);
  if (pair >= 0) {
    out[l * 2] = s(1, 2 * pair);
    out[l * 2 + 1] = s(1, 2 * pair + 1);
  } else {
    for (int p = 0; p < n / 2; ++p) {
      out[p * out_rank_stride + l * out_line_stride] = s(1, 2 * p);
      out[p * out_rank_stride + l * out_line_stride + 1] = s(1, 2 * p + 1);
    }
  }
}

unsigned blocks_for(index_t L) { return unsigned((L + kThreads - 1) / kThreads); }

// spike_prepare (one block): nothing when the bands equal the last ones (kept: 3m values, valid
// once reach[2] != 0; the ADI stages solve with the same bands every step); else the cut bands
// and the kept copy written by every thread, thread 0 the spike W, thread 1 Z
// (common::spike_vector: two sequential sweeps of the bands, ~m x the latency of a division),
// then thread 0 their reach (common::spike_reach) into reach[0..1].
template <class T>
__global__ void spike_prepare_kernel(index_t m, const T* __restrict__ a, const T* __restrict__ b,
                                     const T* __restrict__ c, T* __restrict__ a_cut, T* __restrict__ c_cut,
                                     T* __restrict__ W, T* __restrict__ Z, T* __restrict__ cp, T* __restrict__ kept,
                                     index_t* __restrict__ reach, T tol) {
  bool changed = reach[2] == 0;
  for (index_t i = threadIdx.x; i < m && !changed; i += blockDim.x)
    changed = !(a[i] == kept[i] && b[i] == kept[m + i] && c[i] == kept[2 * m + i]);  // (NaN: changed)
  if (!__syncthreads_or(changed)) return;
  for (index_t i = threadIdx.x; i < m; i += blockDim.x) {
    kept[i] = a[i];
    kept[m + i] = b[i];
    kept[2 * m + i] = c[i];
    a_cut[i] = i == 0 ? T(0) : a[i];
    c_cut[i] = i == m - 1 ? T(0) : c[i];
  }
  if (threadIdx.x < 2) common::spike_vector(m, a, b, c, threadIdx.x == 0, threadIdx.x == 0 ? W : Z, cp + threadIdx.x * m);
  __syncthreads();
  if (threadIdx.x == 0) {
    common::spike_reach(m, W, Z, tol, reach[0], reach[1]);
    reach[2] = 1;
  }
}

// spike_prepare, parallel (spike_prepare's `parallel`, m <= kSpikePcrRows; stop 38, h-splitstage):
// the same check and the same cut bands, then thread i holds row i of A (a_0 = c_{m-1} = 0) with
// the right-hand sides e_0 (W) and e_{m-1} (Z) and parallel cyclic reduction decouples the rows
// in ceil(log2 m) steps (one row per thread, the neighbours' rows read from shared memory before
// a barrier, written after it); the reach then by block-wide max / min (atomics on the order-
// preserving bit patterns of non-negative values): the same lo, hi as common::spike_reach from
// the same W, Z. PCR rounds differently from Thomas (W, Z equal to rounding, not bitwise); the
// serial kernel above takes ~85 us on an H200 for m = 256 (two dependent sweeps of divisions,
// then one thread's scans), this one a few.
constexpr int kSpikePcrRows = 512;
template <class T>
struct PcrBits;
template <>
struct PcrBits<float> {
  using U = unsigned int;
  static __device__ U bits(float v) { return __float_as_uint(v); }
  static __device__ float value(U u) { return __uint_as_float(u); }
};
template <>
struct PcrBits<double> {
  using U = unsigned long long;
  static __device__ U bits(double v) { return static_cast<U>(__double_as_longlong(v)); }
  static __device__ double value(U u) { return __longlong_as_double(static_cast<long long>(u)); }
};
template <class T>
__global__ void __launch_bounds__(kSpikePcrRows)
    spike_prepare_pcr_kernel(index_t m, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                             T* __restrict__ a_cut, T* __restrict__ c_cut, T* __restrict__ W, T* __restrict__ Z,
                             T* __restrict__ kept, index_t* __restrict__ reach, T tol) {
  using U = typename PcrBits<T>::U;
  __shared__ T sa[kSpikePcrRows], sb[kSpikePcrRows], sc[kSpikePcrRows], sw[kSpikePcrRows], sz[kSpikePcrRows];
  __shared__ U wmax_bits, zmax_bits;
  __shared__ int lo_s, hi_s;
  const int i = int(threadIdx.x);
  const bool row = i < m;
  bool changed = reach[2] == 0;
  if (row && !changed) changed = !(a[i] == kept[i] && b[i] == kept[m + i] && c[i] == kept[2 * m + i]);  // (NaN: changed)
  if (!__syncthreads_or(changed)) return;
  T ai = T(0), bi = T(1), ci = T(0), wi = T(0), zi = T(0);
  if (row) {
    const T av = a[i], bv = b[i], cv = c[i];
    kept[i] = av;
    kept[m + i] = bv;
    kept[2 * m + i] = cv;
    ai = i == 0 ? T(0) : av;
    ci = i == m - 1 ? T(0) : cv;
    a_cut[i] = ai;
    c_cut[i] = ci;
    bi = bv;
    wi = i == 0 ? T(1) : T(0);
    zi = i == m - 1 ? T(1) : T(0);
  }
  if (i == 0) {
    wmax_bits = zmax_bits = U(0);
    lo_s = 0;
    hi_s = int(m);
  }
  __syncthreads();  // (m = 1: no reduction step's barrier before the atomics)
  for (int s = 1; s < m; s <<= 1) {
    if (row) {
      sa[i] = ai;
      sb[i] = bi;
      sc[i] = ci;
      sw[i] = wi;
      sz[i] = zi;
    }
    __syncthreads();
    if (row) {
      // row i - s and row i + s eliminate x_{i-s}, x_{i+s} (outside the rows: no coupling)
      const bool up = i - s >= 0, down = i + s < m;
      const T k1 = up ? -ai / sb[i - s] : T(0), k2 = down ? -ci / sb[i + s] : T(0);
      const T na = up ? k1 * sa[i - s] : T(0), nc = down ? k2 * sc[i + s] : T(0);
      bi = bi + (up ? k1 * sc[i - s] : T(0)) + (down ? k2 * sa[i + s] : T(0));
      wi = wi + (up ? k1 * sw[i - s] : T(0)) + (down ? k2 * sw[i + s] : T(0));
      zi = zi + (up ? k1 * sz[i - s] : T(0)) + (down ? k2 * sz[i + s] : T(0));
      ai = na;
      ci = nc;
    }
    __syncthreads();
  }
  auto mag = [](T v) { return v < T(0) ? -v : v; };
  T w = T(0), z = T(0);
  if (row) {
    w = wi / bi;
    z = zi / bi;
    W[i] = w;
    Z[i] = z;
    // (NaN and +-0 leave the maxima alone, as in common::spike_reach's compares)
    if (mag(w) > T(0)) atomicMax(&wmax_bits, PcrBits<T>::bits(mag(w)));
    if (mag(z) > T(0)) atomicMax(&zmax_bits, PcrBits<T>::bits(mag(z)));
  }
  __syncthreads();
  const T wmax = PcrBits<T>::value(wmax_bits), zmax = PcrBits<T>::value(zmax_bits);
  if (row && mag(w) > tol * wmax) atomicMax(&lo_s, i + 1);  // W above tol in rows < lo
  if (row && mag(z) > tol * zmax) atomicMin(&hi_s, i);      // Z above tol in rows >= hi
  __syncthreads();
  if (i == 0) {
    reach[0] = lo_s;
    reach[1] = hi_s;
    reach[2] = 1;
  }
}

// spike_ghost_terms: thread l writes line l's cut-end terms.
template <class T>
__global__ void spike_ghost_kernel(LineSet ls, const T* __restrict__ v, const T* __restrict__ ga,
                                   const T* __restrict__ gc, index_t face_base, index_t face_n1, T* __restrict__ nadd0,
                                   T* __restrict__ nadd1) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, st = ls.stride, o = line_offset(ls, l);
  const index_t fi = face_base + l % ls.count0 + (l / ls.count0) * face_n1;
  if (nadd0) nadd0[fi] = ga[0] * v[o - st];
  if (nadd1) nadd1[fi] = gc[m - 1] * v[o + m * st];
}

// The spikes the reduced rows and the back pass read, one access policy per form:
// SharedSpikes: the same for every line (shared bands: W, Z, a, c of m rows, reach[0..1]);
// LineSpikes: each line's own (full bands, stop 35: common::spike_window's windows of R rows,
// row-major over lines, W[i*L + l]; a, c the line's bands; reach[2l], reach[2l+1]).
template <class T>
struct SharedSpikes {
  const T *a, *c, *W, *Z;
  const index_t* reach;
  index_t lastrow;  // m - 1
  __device__ T a0(index_t, index_t, index_t) const { return a[0]; }
  __device__ T c1(index_t, index_t, index_t) const { return c[lastrow]; }
  __device__ void at(index_t, index_t i, T& w, T& z) const {
    w = W[i];
    z = Z[i];
  }
  __device__ void reach_of(index_t, index_t& lo, index_t& hi) const {
    lo = reach[0];
    hi = reach[1];
  }
};
template <class T>
struct LineSpikes {
  const T *a, *c, *W, *Z;
  const index_t* reach;
  index_t m, R, L, stride;
  __device__ T a0(index_t, index_t o, index_t) const { return a[o]; }
  __device__ T c1(index_t, index_t o, index_t) const { return c[o + (m - 1) * stride]; }
  __device__ void at(index_t l, index_t i, T& w, T& z) const {
    common::spike_at(m, R, common::Strided<const T, index_t>{W + l, L}, common::Strided<const T, index_t>{Z + l, L},
                     i, w, z);
  }
  __device__ void reach_of(index_t l, index_t& lo, index_t& hi) const {
    lo = reach[2 * l];
    hi = reach[2 * l + 1];
  }
};

// spike_reduce: thread l forms line l's two reduced rows (common::spike_rows).
template <class T, class Spikes>
__global__ void spike_reduce_kernel(LineSet ls, Spikes sp, const T* __restrict__ y, T* __restrict__ red,
                                    bool first_open, bool last_open) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, o = line_offset(ls, l);
  T W0, W1, Z0, Z1;
  sp.at(l, 0, W0, Z0);
  sp.at(l, m - 1, W1, Z1);
  common::spike_rows(W0, W1, Z0, Z1, sp.a0(l, o, m), sp.c1(l, o, m), y[o], y[o + (m - 1) * ls.stride], first_open,
                     last_open, red + l * 8);
}

// spike_back, first: thread l's couplings (common::spike_couplings) into ends[2l], ends[2l+1].
template <class T, class Spikes>
__global__ void spike_ends_kernel(LineSet ls, Spikes sp, const T* __restrict__ sol, const T* __restrict__ y,
                                  T* __restrict__ ends, int* bad, bool first_open, bool last_open) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, o = line_offset(ls, l);
  const T x0 = sol[2 * l], x1 = sol[2 * l + 1];
  if (bad && !(isfinite(x0) && isfinite(x1))) *bad = 1;
  T W0, W1, Z0, Z1;
  sp.at(l, 0, W0, Z0);
  sp.at(l, m - 1, W1, Z1);
  common::spike_couplings(W0, W1, Z0, Z1, y[o] - x0, y[o + (m - 1) * ls.stride] - x1, first_open, last_open,
                          ends[2 * l], ends[2 * l + 1]);
}

// spike_back, then: warp w of the grid corrects line w's rows the spikes reach (lanes along
// the line: adjacent words along x), x_i = y_i - W_i A - Z_i C: rows 0 .. top-1 and
// bottom .. m-1 (common::spike_corrected_rows from the reach: the rows between keep y_i, and
// an open end's rows too).
template <class T, class Spikes>
__global__ void spike_correct_kernel(LineSet ls, Spikes sp, const T* __restrict__ ends, T* __restrict__ u,
                                     bool first_open, bool last_open) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = (index_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  if (l >= L) return;
  const index_t m = ls.n, st = ls.stride, o = line_offset(ls, l);
  index_t lo = 0, hi = m, rlo = 0, rhi = 0;
  sp.reach_of(l, rlo, rhi);
  common::spike_corrected_rows(m, rlo, rhi, first_open, last_open, lo, hi);
  const T A = ends[2 * l], C = ends[2 * l + 1];
  for (index_t k = threadIdx.x % kWarp; k < lo + (m - hi); k += kWarp) {
    const index_t i = k < lo ? k : hi + (k - lo);
    T w, z;
    sp.at(l, i, w, z);
    T& x = u[o + i * st];
    x = common::partition_fill(x, w, A, z, C);
  }
}
// ... lines of stride > 1 (along y and z): thread l corrects line l's rows the spikes reach
// (a warp's row is one run of adjacent words).
template <class T, class Spikes>
__global__ void spike_correct_lines_kernel(LineSet ls, Spikes sp, const T* __restrict__ ends, T* __restrict__ u,
                                           bool first_open, bool last_open) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, st = ls.stride, o = line_offset(ls, l);
  index_t lo = 0, hi = m, rlo = 0, rhi = 0;
  sp.reach_of(l, rlo, rhi);
  common::spike_corrected_rows(m, rlo, rhi, first_open, last_open, lo, hi);
  const T A = ends[2 * l], C = ends[2 * l + 1];
#pragma unroll 4
  for (index_t k = 0; k < lo + (m - hi); ++k) {
    const index_t i = k < lo ? k : hi + (k - lo);
    T w, z;
    sp.at(l, i, w, z);
    T& x = u[o + i * st];
    x = common::partition_fill(x, w, A, z, C);
  }
}

// The compact SPIKE tail (spike_compact_pack / spike_compact_back in the header).
template <class T>
__global__ void spike_compact_pack_kernel(LineSet ls, const T* __restrict__ a, const T* __restrict__ c,
                                          const T* __restrict__ W, const T* __restrict__ Z, const T* __restrict__ y,
                                          T* __restrict__ send, T* __restrict__ half, int half_end) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, o = line_offset(ls, l);
  if (l == 0) {
    spike_compact_header<T>(m, a, c, W, Z, send);
    if (half)
      for (int k = 0; k < kSpikeHeader; ++k) half[k] = send[k];
  }
  const T y0 = y[o], y1 = y[o + (m - 1) * ls.stride];
  send[kSpikeHeader + l] = y0;
  send[kSpikeHeader + L + l] = y1;
  if (half) half[kSpikeHeader + l] = half_end ? y1 : y0;
}

// Thread l: line l's reduced system from the gathered blocks (spike_compact_couplings; rows and
// scratch in local memory, P <= kSpikeCompactMaxRanks), this rank's unknowns into sol, the
// couplings into ends; Fix: then its rows the spikes reach corrected (lines of stride > 1),
// kSpikeCorrectBatch rows loaded before their stores (spike_correct_lines_kernel's one row at a
// time keeps one load in flight per thread: u is read and written through the same pointer).
// FixedP > 0: P known at compile time (2: the 2-GPU case), the reduced system's loops unrolled
// and its rows in registers; 0: any P up to kSpikeCompactMaxRanks, rows in local memory.
// batched_tail (DistributedOptions::spike_back_batched): the rows after the last full batch as
// one more batch, predicated (a heat stage's ~45 reached rows: 5 batches + 5 rows one load at a
// time otherwise, the last 5 round trips with one load in flight per thread); the same values.
constexpr int kSpikeCorrectBatch = 8;
// Rows row(k) .. row(k + left - 1) (left <= kSpikeCorrectBatch) of a line at o (stride st)
// corrected, every load before the first store (predicated).
template <class T, class Row>
__device__ __forceinline__ void spike_correct_batch(T* __restrict__ u, index_t o, index_t st, const Row& row, index_t k,
                                                    index_t left, const T* __restrict__ W, const T* __restrict__ Z,
                                                    T A, T C) {
  T x[kSpikeCorrectBatch];
#pragma unroll
  for (int j = 0; j < kSpikeCorrectBatch; ++j)
    if (j < left) x[j] = u[o + row(k + j) * st];
#pragma unroll
  for (int j = 0; j < kSpikeCorrectBatch; ++j)
    if (j < left) {
      const index_t i = row(k + j);
      u[o + i * st] = common::partition_fill(x[j], W[i], A, Z[i], C);
    }
}
template <class T, bool Fix, int FixedP>
__global__ void spike_compact_back_kernel(LineSet ls, int P, int r, bool periodic, const T* __restrict__ g,
                                          const T* __restrict__ W, const T* __restrict__ Z,
                                          const index_t* __restrict__ reach, T* __restrict__ sol,
                                          T* __restrict__ ends, T* __restrict__ u, int* bad, bool batched_tail) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  constexpr int MaxP = FixedP > 0 ? FixedP : kSpikeCompactMaxRanks;
  T rows[8 * MaxP], scr[6 * MaxP];
  T x0, x1, A, C;
  const bool ok = spike_compact_couplings<T>(FixedP > 0 ? FixedP : P, r, periodic, g, kSpikeHeader + 2 * L, L, l,
                                             rows, scr, x0, x1, A, C);
  if (bad && !ok) *bad = 1;
  sol[2 * l] = x0;
  sol[2 * l + 1] = x1;
  ends[2 * l] = A;
  ends[2 * l + 1] = C;
  if constexpr (Fix) {
    const bool first_open = r == 0 && !periodic, last_open = r == P - 1 && !periodic;
    const index_t m = ls.n, st = ls.stride, o = line_offset(ls, l);
    index_t lo = 0, hi = m;
    common::spike_corrected_rows(m, reach[0], reach[1], first_open, last_open, lo, hi);
    const index_t count = lo + (m - hi);
    auto row = [&](index_t k) { return k < lo ? k : hi + (k - lo); };
    index_t k = 0;
    for (; k + kSpikeCorrectBatch <= count; k += kSpikeCorrectBatch) {
      T x[kSpikeCorrectBatch];
#pragma unroll
      for (int j = 0; j < kSpikeCorrectBatch; ++j) x[j] = u[o + row(k + j) * st];
#pragma unroll
      for (int j = 0; j < kSpikeCorrectBatch; ++j) {
        const index_t i = row(k + j);
        u[o + i * st] = common::partition_fill(x[j], W[i], A, Z[i], C);
      }
    }
    if (batched_tail && k < count) {
      spike_correct_batch(u, o, st, row, k, count - k, W, Z, A, C);  // (count - k < kSpikeCorrectBatch)
      return;
    }
    for (; k < count; ++k) {
      const index_t i = row(k);
      T& x = u[o + i * st];
      x = common::partition_fill(x, W[i], A, Z[i], C);
    }
  }
}

// spike_compact_back's correction spread (tail 2, DistributedOptions::spike_back_spread; stop 39,
// h-splitwait; lines of stride > 1): after the launch that solved the lines' reduced systems into
// ends (Fix = false), work items (line l, batch b of kSpikeCorrectBatch reached rows), consecutive
// items consecutive lines of one batch (coalesced), over a grid of about one wave (grid-stride): a
// thread per line left ~1.7 waves of blocks at 512^2 lines (the second ~70% full) and ~45 rows in
// 6 round trips per thread; here every thread takes ~6 items of one round trip each. The same
// partition_fill of the same values (A, C read back from ends): the same results.
template <class T>
__global__ void spike_correct_spread_kernel(LineSet ls, const T* __restrict__ W, const T* __restrict__ Z,
                                            const index_t* __restrict__ reach, const T* __restrict__ ends,
                                            T* __restrict__ u, bool first_open, bool last_open) {
  const index_t L = ls.count0 * ls.count1, m = ls.n, st = ls.stride;
  index_t lo = 0, hi = m;
  common::spike_corrected_rows(m, reach[0], reach[1], first_open, last_open, lo, hi);
  const index_t count = lo + (m - hi);
  const index_t items = L * ((count + kSpikeCorrectBatch - 1) / kSpikeCorrectBatch);
  auto row = [&](index_t k) { return k < lo ? k : hi + (k - lo); };
  for (index_t it = index_t(blockIdx.x) * blockDim.x + threadIdx.x; it < items;
       it += index_t(gridDim.x) * blockDim.x) {
    const index_t b = it / L, l = it - b * L, o = line_offset(ls, l), k = b * kSpikeCorrectBatch;
    const index_t left = count - k < kSpikeCorrectBatch ? count - k : index_t(kSpikeCorrectBatch);
    spike_correct_batch(u, o, st, row, k, left, W, Z, ends[2 * l], ends[2 * l + 1]);
  }
}

// spike_lines_prepare: thread t < L line t's W window, thread L + t its Z window
// (common::spike_window); a line whose spikes have not decayed within the window sets *bad.
template <class T>
__global__ void spike_window_kernel(LineSet ls, const T* __restrict__ a, const T* __restrict__ b,
                                    const T* __restrict__ c, index_t R, T* __restrict__ W, T* __restrict__ Z,
                                    T* __restrict__ cs, index_t* __restrict__ reach, int* bad) {
  const index_t L = ls.count0 * ls.count1;
  const index_t t = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= 2 * L) return;
  const bool left = t < L;
  const index_t l = left ? t : t - L, m = ls.n, st = ls.stride, o = line_offset(ls, l);
  using Band = common::Strided<const T, index_t>;
  using Out = common::Strided<T, index_t>;
  index_t rch = 0;
  const bool ok = common::spike_window(m, R, common::spike_guard(R), left, Band{a + o, st}, Band{b + o, st},
                                       Band{c + o, st}, Out{(left ? W : Z) + l, L}, Out{cs + (left ? 0 : R * L) + l, L},
                                       rch);
  reach[2 * l + (left ? 0 : 1)] = rch;
  if (!ok) *bad = 1;
}

// Level 2 of a reduce with sub-segments (nothing when S == 1).
template <class T>
void reduce_chain(index_t L, const Workspace<T>& w, T* red, cudaStream_t s) {
  if (w.S <= 1) return;
  reduce_chain_kernel<T><<<blocks_for(L), kThreads, 0, s>>>(L, w.S, w.red1, w.w2, red);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

// The passes' variant a workspace asks for, as the kernels' template arguments: f(V) with V = 0
// one row (along X one line) at a time (before stop 31), 1 rows fetched ahead into registers
// (Workspace::prefetch, stop 31), 2 and into L2 (Workspace::l2_prefetch, stop 32).
// l2_here: the passes where L2 requests measured faster (lines of stride > 1, shared bands).
// Issue 15 item 8: the default build compiles only the forms the default options reach: 1
// (wherever l2_here is false, and with device_l2_prefetch = false) and 2 where l2_here. The
// forms kept for comparison, 0 (Workspace::prefetch = false) and 2 where l2_here is false
// (Workspace::l2_everywhere), only with ADI_CUDA_UNROLL_ALL: asked for in a build without them,
// says so once on stderr and runs the default. kAllForms: the kernels' L2 argument in the
// branches l2_here does not cover (in the default build f(2) never runs them: the L2 = false
// instance they name is variant 1's, compiled anyway).
#if defined(ADI_CUDA_UNROLL_ALL)
constexpr bool kAllForms = true;
#else
constexpr bool kAllForms = false;
#endif
template <class T, class F>
void by_variant(const Workspace<T>& w, bool l2_here, const F& f) {
  if constexpr (kAllForms) {
    if (w.prefetch && w.l2_prefetch && (l2_here || w.l2_everywhere))
      f(std::integral_constant<int, 2>{});
    else if (w.prefetch)
      f(std::integral_constant<int, 1>{});
    else
      f(std::integral_constant<int, 0>{});
  } else {
    if (!w.prefetch || (w.l2_prefetch && w.l2_everywhere && !l2_here)) {
      static std::once_flag once;
      note_form_not_compiled(once,
                             "partition passes, the forms kept for comparison (DistributedOptions::device_prefetch "
                             "= false, device_l2_prefetch_everywhere)",
                             "the default");
    }
    if (w.l2_prefetch && l2_here)
      f(std::integral_constant<int, 2>{});
    else
      f(std::integral_constant<int, 1>{});
  }
}

template <class T>
void reduce(const LineSet& ls, const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
            const Workspace<T>& w, T* red, bool first_open, bool last_open, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(blocks_for(L), unsigned(w.S));
  by_variant(w, shared && ls.stride != 1, [&](auto variant) {
    constexpr int V = decltype(variant)::value, D = V > 0 ? kPrefetch : 1, B = V > 0 ? kTileBatch : 1;
    constexpr bool L2 = V == 2, L2x = L2 && kAllForms;  // L2x: where l2_here is false
    if (shared && ls.stride == 1)
      reduce_rows_kernel<T, false, B, L2x><<<grid, kThreads, 0, s>>>(ls, a, b, c, d, u, w.alpha, w.gamma, red, w.red1,
                                                                     w.S, first_open, last_open, StageRhs<T>{});
    else if (shared)
      reduce_kernel<T, true, false, D, L2><<<grid, kThreads, 0, s>>>(ls, a, b, c, d, u, w.alpha, w.gamma, red, w.red1,
                                                                     w.S, first_open, last_open, StageRhs<T>{});
    else
      reduce_kernel<T, false, false, D, L2x><<<grid, kThreads, 0, s>>>(ls, a, b, c, d, u, w.alpha, w.gamma, red,
                                                                       w.red1, w.S, first_open, last_open,
                                                                       StageRhs<T>{});
  });
  ADI_CUDA_CHECK(cudaGetLastError());
  reduce_chain(L, w, red, s);
}

// u = v: the strided reduce never writes a sub-segment's first and last rows (the rows its
// neighbours read), so any S; the x tiles store every row of a tile (a sub-segment's end rows
// with their right-hand side) before the neighbouring sub-segment's tile reads them: not there.
bool stage_supported(const LineSet& ls, int /*S*/, bool u_is_v) { return !u_is_v || ls.stride != 1; }

template <class T>
void reduce_stage(const LineSet& ls, const T* a, const T* b, const T* c, const StageRhs<T>& rhs, T* u,
                  const Workspace<T>& w, T* red, bool first_open, bool last_open, void* stream) {
  if (!stage_supported(ls, w.S, u == rhs.v))
    throw Unsupported("partition::reduce_stage: u = v needs lines of stride > 1 (not along x)");
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(blocks_for(L), unsigned(w.S));
  by_variant(w, ls.stride != 1, [&](auto variant) {
    constexpr int V = decltype(variant)::value, D = V > 0 ? kPrefetch : 1, B = V > 0 ? kTileBatch : 1;
    constexpr bool L2 = V == 2, L2x = L2 && kAllForms;
    if (ls.stride == 1)
      reduce_rows_kernel<T, true, B, L2x><<<grid, kThreads, 0, s>>>(ls, a, b, c, nullptr, u, w.alpha, w.gamma, red,
                                                                    w.red1, w.S, first_open, last_open, rhs);
    else
      reduce_kernel<T, true, true, D, L2><<<grid, kThreads, 0, s>>>(ls, a, b, c, nullptr, u, w.alpha, w.gamma, red,
                                                                    w.red1, w.S, first_open, last_open, rhs);
  });
  ADI_CUDA_CHECK(cudaGetLastError());
  reduce_chain(L, w, red, s);
}

template <class T>
void back_substitute(const LineSet& ls, const Workspace<T>& w, bool shared, const T* sol, T* u, int* bad,
                     void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  if (w.S > 1) {
    back_chain_kernel<T><<<blocks_for(L), kThreads, 0, s>>>(L, w.S, w.w2, sol, w.sol1, bad);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
  const dim3 grid(blocks_for(L), unsigned(w.S));
  by_variant(w, shared && ls.stride != 1, [&](auto variant) {
    constexpr int V = decltype(variant)::value, D = V > 0 ? kPrefetch : 1, B = V > 0 ? kTileBatch : 1;
    constexpr bool L2 = V == 2, L2x = L2 && kAllForms;
    if (shared && ls.stride == 1)
      back_rows_kernel<T, B, L2x><<<grid, kThreads, 0, s>>>(ls, w.alpha, w.gamma, sol, w.sol1, w.S, u, bad);
    else if (shared)
      back_kernel<T, true, D, L2><<<grid, kThreads, 0, s>>>(ls, w.alpha, w.gamma, sol, w.sol1, w.S, u, bad);
    else
      back_kernel<T, false, D, L2x><<<grid, kThreads, 0, s>>>(ls, w.alpha, w.gamma, sol, w.sol1, w.S, u, bad);
  });
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void solve_reduced(index_t count, int n, bool periodic, const T* rows, index_t line_stride, index_t rank_stride,
                   T* scratch, int pair, T* out, index_t out_rank_stride, index_t out_line_stride, void* stream) {
  if (count == 0) return;
  reduced_kernel<T><<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      count, n, periodic, rows, line_stride, rank_stride, scratch, pair, out, out_rank_stride, out_line_stride);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void spike_prepare(index_t m, const T* a, const T* b, const T* c, T* a_cut, T* c_cut, T* W, T* Z, T* cp, T* kept,
                   index_t* reach, bool parallel, T tol, void* stream) {
  if (m < 1) return;
  if (parallel && m <= kSpikePcrRows) {
    spike_prepare_pcr_kernel<T><<<1, kSpikePcrRows, 0, static_cast<cudaStream_t>(stream)>>>(m, a, b, c, a_cut, c_cut,
                                                                                            W, Z, kept, reach, tol);
    ADI_CUDA_CHECK(cudaGetLastError());
    return;
  }
  spike_prepare_kernel<T><<<1, 256, 0, static_cast<cudaStream_t>(stream)>>>(m, a, b, c, a_cut, c_cut, W, Z, cp, kept,
                                                                           reach, tol);
  ADI_CUDA_CHECK(cudaGetLastError());
}

// The reduced rows and the back pass of either SPIKE form (SharedSpikes / LineSpikes).
template <class T, class Spikes>
void launch_spike_reduce(const LineSet& ls, const Spikes& sp, const T* y, T* red, bool first_open, bool last_open,
                         void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  spike_reduce_kernel<T, Spikes><<<blocks_for(L), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      ls, sp, y, red, first_open, last_open);
  ADI_CUDA_CHECK(cudaGetLastError());
}
template <class T, class Spikes>
void launch_spike_back(const LineSet& ls, const Spikes& sp, const T* sol, T* ends, T* u, int* bad, bool first_open,
                       bool last_open, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  spike_ends_kernel<T, Spikes><<<blocks_for(L), kThreads, 0, s>>>(ls, sp, sol, u, ends, bad, first_open, last_open);
  ADI_CUDA_CHECK(cudaGetLastError());
  if (ls.stride != 1)  // neighbouring lines adjacent: a thread per line
    spike_correct_lines_kernel<T, Spikes><<<blocks_for(L), kThreads, 0, s>>>(ls, sp, ends, u, first_open, last_open);
  else
    spike_correct_kernel<T, Spikes><<<blocks_for(L * kWarp), kThreads, 0, s>>>(ls, sp, ends, u, first_open,
                                                                               last_open);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void spike_reduce(const LineSet& ls, const T* a, const T* c, const T* W, const T* Z, const T* y, T* red,
                  bool first_open, bool last_open, void* stream) {
  launch_spike_reduce<T>(ls, SharedSpikes<T>{a, c, W, Z, nullptr, ls.n - 1}, y, red, first_open, last_open, stream);
}

template <class T>
void spike_back(const LineSet& ls, const T* W, const T* Z, const index_t* reach, const T* sol, T* ends, T* u,
                int* bad, bool first_open, bool last_open, void* stream) {
  launch_spike_back<T>(ls, SharedSpikes<T>{nullptr, nullptr, W, Z, reach, ls.n - 1}, sol, ends, u, bad, first_open,
                       last_open, stream);
}

template <class T>
void spike_compact_pack(const LineSet& ls, const T* a, const T* c, const T* W, const T* Z, const T* y, T* send,
                        T* half, int half_end, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  spike_compact_pack_kernel<T><<<blocks_for(L), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      ls, a, c, W, Z, y, send, half, half_end);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void spike_compact_back(const LineSet& ls, int P, int r, bool periodic, const T* gathered, const T* W, const T* Z,
                        const index_t* reach, T* sol, T* ends, T* u, int* bad, int tail, void* stream) {
  const bool batched_tail = tail >= 1;
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  if (P < 2 || P > kSpikeCompactMaxRanks)
    throw Unsupported("partition::spike_compact_back: " + std::to_string(P) + " ranks on the axis; the compact "
                          "SPIKE tail takes 2 to " + std::to_string(kSpikeCompactMaxRanks));
  auto s = static_cast<cudaStream_t>(stream);
  auto launch = [&](auto fix, auto fixed_p) {
    spike_compact_back_kernel<T, decltype(fix)::value, decltype(fixed_p)::value>
        <<<blocks_for(L), kThreads, 0, s>>>(ls, P, r, periodic, gathered, W, Z, reach, sol, ends, u, bad,
                                            batched_tail);
    ADI_CUDA_CHECK(cudaGetLastError());
  };
  auto by_ranks = [&](auto fix) {
    if (P == 2)
      launch(fix, std::integral_constant<int, 2>{});
    else
      launch(fix, std::integral_constant<int, 0>{});
  };
  if (ls.stride != 1 && tail == 2) {  // the reduced solves, then the correction spread (one wave of blocks)
    by_ranks(std::false_type{});
    static int blocks = [] {
      int per_sm = 0, device = 0, sms = 0;
      ADI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spike_correct_spread_kernel<T>, kThreads, 0));
      ADI_CUDA_CHECK(cudaGetDevice(&device));
      ADI_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      return std::max(1, per_sm * sms);
    }();
    spike_correct_spread_kernel<T><<<unsigned(blocks), kThreads, 0, s>>>(ls, W, Z, reach, ends, u, r == 0 && !periodic,
                                                                       r == P - 1 && !periodic);
  } else if (ls.stride != 1) {  // the correction in the same launch, a thread per line
    by_ranks(std::true_type{});
  } else {  // along x: spike_back's warp per line corrects, from ends
    by_ranks(std::false_type{});
    spike_correct_kernel<T, SharedSpikes<T>><<<blocks_for(L * kWarp), kThreads, 0, s>>>(
        ls, SharedSpikes<T>{nullptr, nullptr, W, Z, reach, ls.n - 1}, ends, u, r == 0 && !periodic,
        r == P - 1 && !periodic);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void spike_lines_prepare(const LineSet& ls, const T* a, const T* b, const T* c, index_t R, T* W, T* Z, T* cs,
                         index_t* reach, int* bad, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  constexpr int kWindowThreads = 64;  // 2L threads over more SMs: each runs two sequential sweeps of R rows
  spike_window_kernel<T><<<unsigned((2 * L + kWindowThreads - 1) / kWindowThreads), kWindowThreads, 0,
                           static_cast<cudaStream_t>(stream)>>>(ls, a, b, c, R, W, Z, cs, reach, bad);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void spike_lines_reduce(const LineSet& ls, const T* a, const T* c, index_t R, const T* W, const T* Z, const T* y,
                        T* red, bool first_open, bool last_open, void* stream) {
  launch_spike_reduce<T>(ls, LineSpikes<T>{a, c, W, Z, nullptr, ls.n, R, ls.count0 * ls.count1, ls.stride}, y, red,
                         first_open, last_open, stream);
}

template <class T>
void spike_lines_back(const LineSet& ls, index_t R, const T* W, const T* Z, const index_t* reach, const T* sol,
                      T* ends, T* u, int* bad, bool first_open, bool last_open, void* stream) {
  launch_spike_back<T>(ls, LineSpikes<T>{nullptr, nullptr, W, Z, reach, ls.n, R, ls.count0 * ls.count1, ls.stride},
                       sol, ends, u, bad, first_open, last_open, stream);
}

template <class T>
void spike_lines_y(const LineSet& ls, const T* a, const T* b, const T* c, const T* d, T* u, int form, int* bad,
                   void* stream) {
  // The kernel is solvers/cuda/thomas_truncated.cuh's (the single-device cuda_thomas_truncated's
  // too; a form outside 1..4 an InvalidArgument there).
  kernels::launch_thomas_truncated<T>(ls, a, b, c, false, d, u, form, bad, static_cast<cudaStream_t>(stream));
}

template <class T>
void spike_ghost_terms(const LineSet& ls, const T* v, const T* ga, const T* gc, index_t face_base, index_t face_n1,
                       T* nadd0, T* nadd1, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0 || !v || (!nadd0 && !nadd1)) return;
  spike_ghost_kernel<T><<<blocks_for(L), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(ls, v, ga, gc, face_base,
                                                                                            face_n1, nadd0, nadd1);
  ADI_CUDA_CHECK(cudaGetLastError());
}

void copy_async(void* dst, const void* src, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  ADI_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
}

void clear_flag_async(int* flag, void* stream) {
  ADI_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), static_cast<cudaStream_t>(stream)));
}

void* event_create() {
  cudaEvent_t e = nullptr;
  ADI_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

void event_destroy(void* e) noexcept {
  if (e) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}

void event_record(void* e, void* stream) {
  ADI_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(stream)));
}

void event_synchronize(void* e) { ADI_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(e))); }

double event_seconds(void* from, void* to) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(from), static_cast<cudaEvent_t>(to)) != cudaSuccess) {
    (void)cudaGetLastError();  // not recorded: no time, and no sticky error for the next call
    return 0.0;
  }
  return 1e-3 * double(ms);
}

std::string pci_bus_id(int device) {
  char id[64] = {};
  if (cudaDeviceGetPCIBusId(id, int(sizeof id), device) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  return id;
}

void* pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  ADI_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

void pinned_free(void* p) noexcept {
  if (p) cudaFreeHost(p);
}

template void reduce<float>(const LineSet&, const float*, const float*, const float*, bool, const float*, float*,
                            const Workspace<float>&, float*, bool, bool, void*);
template void reduce<double>(const LineSet&, const double*, const double*, const double*, bool, const double*,
                             double*, const Workspace<double>&, double*, bool, bool, void*);
template void reduce_stage<float>(const LineSet&, const float*, const float*, const float*, const StageRhs<float>&,
                                  float*, const Workspace<float>&, float*, bool, bool, void*);
template void reduce_stage<double>(const LineSet&, const double*, const double*, const double*,
                                   const StageRhs<double>&, double*, const Workspace<double>&, double*, bool, bool,
                                   void*);
template void back_substitute<float>(const LineSet&, const Workspace<float>&, bool, const float*, float*, int*,
                                     void*);
template void back_substitute<double>(const LineSet&, const Workspace<double>&, bool, const double*, double*, int*,
                                      void*);
#define ADI_SPIKE_INSTANCES(T)                                                                                  \
  template void spike_prepare<T>(index_t, const T*, const T*, const T*, T*, T*, T*, T*, T*, T*, index_t*, bool, T,  \
                                 void*);                                                                             \
  template void spike_reduce<T>(const LineSet&, const T*, const T*, const T*, const T*, const T*, T*, bool, bool,    \
                                void*);                                                                              \
  template void spike_back<T>(const LineSet&, const T*, const T*, const index_t*, const T*, T*, T*, int*, bool, bool, \
                              void*);
ADI_SPIKE_INSTANCES(float)
ADI_SPIKE_INSTANCES(double)
#undef ADI_SPIKE_INSTANCES
#define ADI_SPIKE_INSTANCES(T)                                                                                   \
  template void spike_lines_prepare<T>(const LineSet&, const T*, const T*, const T*, index_t, T*, T*, T*,       \
                                       index_t*, int*, void*);                                                 \
  template void spike_lines_reduce<T>(const LineSet&, const T*, const T*, index_t, const T*, const T*, const T*, T*, \
                                      bool, bool, void*);                                                      \
  template void spike_lines_back<T>(const LineSet&, index_t, const T*, const T*, const index_t*, const T*, T*, T*,   \
                                    int*, bool, bool, void*);                                                  \
  template void spike_ghost_terms<T>(const LineSet&, const T*, const T*, const T*, index_t, index_t, T*, T*, void*); \
  template void spike_lines_y<T>(const LineSet&, const T*, const T*, const T*, const T*, T*, int, int*, void*);
ADI_SPIKE_INSTANCES(float)
ADI_SPIKE_INSTANCES(double)
#undef ADI_SPIKE_INSTANCES
#define ADI_SPIKE_INSTANCES(T)                                                                               \
  template void spike_compact_pack<T>(const LineSet&, const T*, const T*, const T*, const T*, const T*, T*, T*, int, \
                                      void*);                                                                       \
  template void spike_compact_back<T>(const LineSet&, int, int, bool, const T*, const T*, const T*, const index_t*,  \
                                      T*, T*, T*, int*, int, void*);
ADI_SPIKE_INSTANCES(float)
ADI_SPIKE_INSTANCES(double)
#undef ADI_SPIKE_INSTANCES
template void solve_reduced<float>(index_t, int, bool, const float*, index_t, index_t, float*, int, float*, index_t,
                                   index_t, void*);
template void solve_reduced<double>(index_t, int, bool, const double*, index_t, index_t, double*, int, double*,
                                    index_t, index_t, void*);

}  // namespace adi::cuda_backend::partition
