#pragma once
// Partial pivoting, two threads per line from both ends, U kept on chip (the "pair" route of
// Kernel::cuda_pivoting, pivoting_thread.cuh; automatic's and partial's route since stop 53 for
// non-periodic lines adjacent in memory (Y/Z sweeps, interleaved batches) where the form below fits
// three or four warps an SM, and since stop 54 for X lines of 64 rows or more whose chunks align on
// 16-byte vectors (read and u stored as vectors: Vec) where its shared form fits two warps an SM;
// ADI_PIVOTING_ROUTE=pair forces it on any layout).
//
// The thread route (pivoting_thread_line.cuh) moves 11 values a row: U's three values per row
// (y', u1', u2') go to memory and come back. The staged route kept them on chip but held the
// whole line in shared memory and ran one chain per line, so an SM ran 24-48 chains. Here each
// line has two threads: one eliminates it top-down over rows 0 .. h (h = (n-2)/2), the other
// bottom-up over rows n-1 .. h+1 (the same step on the reversed rows: a and c exchanged), each
// with LAPACK gtsv's partial pivoting (common::pivot_step) and its U rows in shared memory,
// [slot][value][thread]. fp64 (the "half" layout): a warp takes 16 lines, lanes 0-15 the top
// halves, 16-31 the bottom halves (a half-warp's row of fp64 is one 128-byte segment); fp32
// ("split"): a block of two warps takes 32 lines, warp 0 the top halves, warp 1 the bottom ones
// (a warp's row of fp32 is one 128-byte segment). The rows are read straight from global memory,
// a chunk of 8 ahead of the chain, alternating between two register buffers. Then the bottom
// thread hands its current row (its entries in columns h+1, h and its right-hand side) to the top
// thread (a shuffle; split: shared memory and a barrier), which eliminates columns h and h+1
// against it (pivot_step with c = 0, pivot_last) and hands x_h, x_{h+1} back; both substitute
// outward. This is Gaussian elimination with partial pivoting of the matrix with its columns
// taken in the order 0 .. h-1, n-1 .. h+2, h, h+1 (the top and bottom sweeps touch disjoint
// rows), so its growth is bounded as the thread route's; rows 0 .. h pivot exactly as LAPACK's. DRAM traffic: a copy's 5 values per row; the "yu" form
// sends y' through u (7 values) for a third less shared memory, so three warps of it fit an SM
// where four of the other do not. An SM holds only 2-6 of these warps (shared memory), so the
// kernel is bound by its instructions' latency: every step runs without a test (odd lines start
// the top lane from an identity row), 32-bit element indices, one reciprocal a step, the pivots
// checked through a running minimum and a NaN sum instead of a test per row.
#include <mutex>

#include "adi/base/env_switch.hpp"
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pivoting_thread_line.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

// Two layouts of a block (ADI_PIVOTING_PAIR_LAYOUT): "half", one warp of 16 lines (lanes 0-15 the
// top halves, 16-31 the bottom halves: a half-warp's row of fp64 is one 128-byte segment) and
// "split", two warps on 32 lines (warp 0 the top halves, warp 1 the bottom halves: a warp's row of
// fp32 is one 128-byte segment; the middle exchanged through shared memory).
template <int WL>  // lines a block
struct PairLayout {
  static constexpr int threads = WL == 16 ? kWarp : 2 * kWarp;
  static constexpr int exchange = WL == 16 ? 0 : 5 * WL;    // values: the bottom row (3), x_h, x_{h+1}
};
constexpr int kPivotPairRows = 8;    // rows a chunk (ADI_PIVOTING_PAIR_ROWS = 4 | 16 for comparisons)

// U slots a lane keeps: the bottom lane's n - 2 - h steps (the top lane's as many, odd n included).
__host__ __device__ inline int pivot_pair_slots(i64 n) {
  return n >= 2 ? static_cast<int>(n - 2 - (n - 2) / 2) : 0;
}
template <int WL>
inline std::size_t pivoting_pair_smem(i64 n, bool y_in_u, std::size_t value_size) {
  using Lay = PairLayout<WL>;
  return (static_cast<std::size_t>(pivot_pair_slots(n)) * (y_in_u ? 2 : 3) * Lay::threads + Lay::exchange) *
         value_size;
}
// The layout a precision takes: fp32 split (its rows 128 bytes a warp; run s53/10, H200 256^3 Y:
// 0.1800 against 0.1862 ms), fp64 half (a half-warp's row is 128 bytes already; split lost with y'
// through u, 0.3828 against 0.3253). ADI_PIVOTING_PAIR_LAYOUT = half | split asks for the other,
// compiled only with -DADI_CUDA_UNROLL_ALL=ON (else a note and the precision's own).
inline int pivot_pair_default_lines(std::size_t value_size) { return value_size == 4 ? 32 : 16; }
inline int pivot_pair_block_lines(std::size_t value_size) {
  const int forced = ::adi::detail::env_choice("ADI_PIVOTING_PAIR_LAYOUT", {"half", "split"}, -1);
  const int own = pivot_pair_default_lines(value_size);
  if (forced < 0 || (forced == 0 ? 16 : 32) == own) return own;
#if defined(ADI_CUDA_UNROLL_ALL)
  return forced == 0 ? 16 : 32;
#else
  static std::once_flag once;
  note_form_not_compiled(once, "ADI_PIVOTING_PAIR_LAYOUT (the pair route's other block layout, for comparisons)",
                         "the precision's own layout");
  return own;
#endif
}
inline std::size_t pivoting_pair_block_smem(i64 n, bool y_in_u, std::size_t value_size) {
  return pivot_pair_block_lines(value_size) == 32 ? pivoting_pair_smem<32>(n, y_in_u, value_size)
                                                  : pivoting_pair_smem<16>(n, y_in_u, value_size);
}
// Every element the layout reaches below 2^31 (the kernel's 32-bit indices), not periodic, and
// the "yu" form's shared memory within a block's.
inline bool pivoting_pair_fits(const LineSet& l, bool periodic, std::size_t value_size) {
  auto reach = [](i64 count, i64 stride) { return count > 0 ? (count - 1) * (stride < 0 ? -stride : stride) : 0; };
  const i64 last = reach(l.n, l.stride) + reach(l.count0, l.stride0) + reach(l.count1, l.stride1);
  return !periodic && l.n >= 1 && last < 0x7fffffff &&
         pivoting_pair_block_smem(l.n, true, value_size) <= launch_limits().smem_optin;
}

// Whether the Vec kernels (below) take every full chunk of every line of this layout: rows adjacent
// (element stride 1), every line's first element on a 16-byte vector (given aligned arrays), and
// both lanes' chunks starting on a vector: the top lane's first full chunk at row 1 - lead + K % chunk,
// the bottom lane's lowest row n - 1 - chunk - K % chunk (every later chunk chunk rows on). With
// 8-row chunks: dense X lines of a multiple of 8 rows (fp32) / 4 rows (fp64).
template <class Lines>
bool pivoting_pair_vec_layout(const Lines& l, std::size_t value_size, int chunk) {
  const i64 E = 16 / static_cast<i64>(value_size);
  const i64 n = l.n;
  if (l.stride != 1 || n < 2) return false;
  if ((l.count0 > 1 && l.stride0 % E != 0) || (l.count1 > 1 && l.stride1 % E != 0)) return false;
  const i64 h = (n - 2) / 2, K = n - 2 - h, rem = K % chunk, lead = n & 1;
  return (1 - lead + rem) % E == 0 && (n - 1 - chunk - rem) % E == 0;
}

enum class PairForm { none, shared, yu };
// Automatic's form: U in shared memory where four of its warps fit an SM, else y' through u where
// three do, else none (the thread route). Measured on an H200 (runs s53/4-5, Y/Z lines, % of copy
// on 5 values, thread route -> pair route): n = 64 fp32 4.3 -> 6.3, fp64 7.4 -> 14.9; n = 128
// fp32 13.9 -> 38.4, fp64 18.7 -> 46.4; n = 256 fp32 29.9 -> 42.4 (shared), fp64 38.9 -> 48.7
// (yu); n = 512 fp32 29.5 -> 31.3 (yu), fp64 40.4 against 23.8 (yu, one warp an SM): none.
inline PairForm pivoting_pair_auto_form(const LineSet& l, bool periodic, std::size_t value_size) {
  if (!pivoting_pair_fits(l, periodic, value_size)) return PairForm::none;
  int dev = 0, per_sm = 0;
  ADI_CUDA_CHECK(cudaGetDevice(&dev));
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  auto warps = [&](bool yu) {  // warps of the blocks an SM holds (1 KB reserved a block)
    const std::size_t per_block = pivot_pair_block_lines(value_size) / 16;
    return per_block * (static_cast<std::size_t>(per_sm) / (pivoting_pair_block_smem(l.n, yu, value_size) + 1024));
  };
  if (l.stride == 1) {
    // X lines (rows adjacent: the Vec kernels where the chunks align). y' through u stores a value a
    // row to lines n apart (run s54/4, H200 256^3: fp32 0.5485 ms against the shared form's 0.2334,
    // fp64 0.5674 against 0.5029). The shared form with vector loads and stores against the xtile
    // route (runs s54/4-5, H200, n^3 X lines, ms): fp32 n = 64 0.0222 against 0.0411, 128 0.0404
    // against 0.0666 (8 warps an SM), 256 0.2334 against 0.3450 (4 warps), 512 2.182 against 2.560 (2
    // warps); fp64 n = 64 0.0232 against 0.0449, 128 0.0636 against 0.0955 (4 warps), 256 0.5029
    // against 0.6309 (2 warps), 512 6.305 against 5.026 (1 warp). So from 64 rows (shorter lines not
    // measured) where two of its warps fit an SM and the Vec kernels take the layout (the scalar kernel
    // ran 0.4868 ms fp32 at 256^3, run s53/10, against the xtile route's 0.3450); else none (xtile).
    if (l.n < 64 || !pivoting_pair_vec_layout(l, value_size, kPivotPairRows)) return PairForm::none;
    return warps(false) >= 2 ? PairForm::shared : PairForm::none;
  }
  if (warps(false) >= 4) return PairForm::shared;
  if (warps(true) >= 3) return PairForm::yu;
  return PairForm::none;
}
// Lines adjacent in memory (line l + 1 one element after line l), along which a half-warp's
// loads are coalesced; X lines (element stride 1) are the other layout the route takes.
inline bool pivoting_pair_layout(const LineSet& l) {
  const i64 next = l.count0 > 1 ? l.stride0 : l.stride1;
  return next == 1 && l.stride != 1;
}
// The lines automatic and partial give the pair route: adjacent lines (Y/Z sweeps, interleaved
// batches) and X lines, where pivoting_pair_auto_form finds a form (on X only the shared form, ahead
// of the xtile route: runs s54/2-5, H200).
inline bool pivoting_pair_takes(const LineSet& l, bool periodic, std::size_t value_size) {
  return (l.stride == 1 || pivoting_pair_layout(l)) && pivoting_pair_auto_form(l, periodic, value_size) != PairForm::none;
}

// The pivots' check without a test per row: min |1/p| (0 where a pivot is infinite) and a sum of
// 0 * (1/p) (NaN where a pivot is zero or NaN); bad_pivot's verdict over all of them.
template <class T>
struct PairCheck {
  T rmin = T(1), nan = T(0);
  __device__ __forceinline__ void add(T r) {
    rmin = fmin(rmin, fabs(r));
    nan = fma(r, T(0), nan);
  }
  __device__ __forceinline__ bool bad() const { return !(rmin > T(0)) || nan != nan; }
};

// Vec (lines whose rows are adjacent elements: X sweeps; pivoting_pair_vec_fits): a chunk's rows of
// each per-line array are Chunk adjacent elements of one line, read as 16-byte vectors in memory
// order (a lane's loads then take Chunk * sizeof(T) / 16 instructions an array instead of Chunk,
// each touching the same 32-byte sectors); the bottom lane's steps take them from the back.
template <class T, int N>
__device__ __forceinline__ void pair_load_vec(T (&dst)[N], const T* p) {
  constexpr int E = 16 / static_cast<int>(sizeof(T));  // values a vector
  static_assert(N % E == 0, "whole vectors a chunk");
#pragma unroll
  for (int i = 0; i < N / E; ++i) {
    if constexpr (sizeof(T) == 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + 4 * i);
      dst[4 * i] = v.x;
      dst[4 * i + 1] = v.y;
      dst[4 * i + 2] = v.z;
      dst[4 * i + 3] = v.w;
    } else {
      const double2 v = *reinterpret_cast<const double2*>(p + 2 * i);
      dst[2 * i] = v.x;
      dst[2 * i + 1] = v.y;
    }
  }
}

template <class T, int N>
__device__ __forceinline__ void pair_store_vec(T* p, const T (&src)[N]) {
#pragma unroll
  for (int i = 0; i < N * static_cast<int>(sizeof(T)) / 16; ++i) {
    if constexpr (sizeof(T) == 4)
      *reinterpret_cast<float4*>(p + 4 * i) = make_float4(src[4 * i], src[4 * i + 1], src[4 * i + 2], src[4 * i + 3]);
    else
      *reinterpret_cast<double2*>(p + 2 * i) = make_double2(src[2 * i], src[2 * i + 1]);
  }
}

template <class T, bool Shared, int Chunk, bool YInU, int WL, bool Vec = false>
__global__ void __launch_bounds__(PairLayout<WL>::threads)
    pivoting_pair_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                         const T* d, T* u, int* flag, const int* gate) {
  extern __shared__ __align__(16) unsigned char pivot_pair_smem[];
  constexpr int V = YInU ? 2 : 3;  // values a slot keeps: u1', u2' (and y')
  constexpr int TPB = PairLayout<WL>::threads;
  const int lane = static_cast<int>(threadIdx.x);  // (the block's thread)
  const bool top = lane < TPB / 2;
  const int li = lane & (WL - 1);  // the block's line
  T* const sw = reinterpret_cast<T*>(pivot_pair_smem) + lane;  // slot k, value q: sw[(k * V + q) * TPB]
  const i64 nl = L.lines();
  const i64 mine = static_cast<i64>(blockIdx.x) * WL + li;
  const bool valid = mine < nl;  // lanes past the last line repeat it and store nothing
  if (pivot_gate_closed(gate)) return;  // (uniform)
  // 32-bit element indices (pivoting_pair_fits: every element of the layout below 2^31).
  const int n = static_cast<int>(L.n), st = static_cast<int>(L.stride);
  const int off = static_cast<int>(L.offset(valid ? mine : nl - 1));
  PairCheck<T> check;

  if (n == 1) {
    if (top && valid) {
      const common::PivotOut<T> o =
          common::pivot_last<T>(common::PivotRow<T>{Shared ? ldg(b) : b[off], T(0), d[off]});
      check.add(o.r);
      u[off] = o.y;
    }
    report(check.bad() && top && valid, flag);
    return;
  }
  // Both lanes take K steps: the bottom lane meets rows n-2 .. h+1, the top lane rows 1 .. h;
  // on odd n the top lane has one row fewer and starts from the identity row (1, 0 | 0) meeting
  // row 0 with a = 0 (exact: the multiplier is 0, the current row becomes row 0), its first U
  // row virtual (never stored), so the steps need no test per row.
  const int h = (n - 2) / 2, K = n - 2 - h;
  const int lead = top && (n & 1) ? 1 : 0;
  const T* const pa = top ? a : c;  // the coupling behind the sweep (bottom-up: c)
  const T* const pc = top ? c : a;  // and ahead of it
  const int rstep = top ? 1 : -1;
  const int met0 = top ? 1 - lead : n - 2;  // the row step 0 meets; U's row of step k: met - rstep
  const int e0 = off + met0 * st, edir = rstep * st;  // its element; per step
  const int b0 = Shared ? met0 : e0, bdir = Shared ? rstep : edir;  // the bands' index
  common::PivotRow<T> cur{T(1), T(0), T(0)};
  if (!lead) {
    const int r0 = top ? 0 : n - 1, br0 = Shared ? r0 : off + r0 * st;
    cur = common::PivotRow<T>{Shared ? ldg(b + br0) : b[br0], Shared ? ldg(pc + br0) : pc[br0], d[off + r0 * st]};
  }
  auto band = [&](const T* q, int i) { return Shared ? ldg(q + i) : q[i]; };
  auto step = [&](int k, T ca, T cb, T cc, T cd) {
    const common::PivotOut<T> o = common::pivot_step<T>(cur, ca, cb, cc, cd);
    check.add(o.r);
    sw[(k * V + 0) * TPB] = o.u1;
    sw[(k * V + 1) * TPB] = o.u2;
    if constexpr (YInU) {
      if (valid && (k > 0 || !lead)) u[e0 + (k - 1) * edir] = o.y;
    } else {
      sw[(k * V + 2) * TPB] = o.y;
    }
  };

  // Forward: the first K % Chunk steps, then full chunks, each chunk's rows loaded while the chunk
  // before it is eliminated, alternating between two register buffers (no copies between them);
  // the first steps' rows load together with the first full chunk's.
  const int rem = K % Chunk;
  struct Rows {
    T a[Chunk], b[Chunk], c[Chunk], d[Chunk];
  } A, B;
  auto load_row = [&](Rows& r, int j, int k) {
    const int bi = b0 + k * bdir;
    r.a[j] = band(pa, bi);
    r.b[j] = band(b, bi);
    r.c[j] = band(pc, bi);
    r.d[j] = d[e0 + k * edir];
  };
  auto load = [&](Rows& r, int k0) {
    if constexpr (Vec) {  // memory order: the chunk's lowest element first
      const int lo = top ? e0 + k0 : e0 - k0 - (Chunk - 1);
      pair_load_vec(r.d, d + lo);
      if constexpr (Shared) {
        const int rlo = top ? met0 + k0 : met0 - k0 - (Chunk - 1);
#pragma unroll
        for (int j = 0; j < Chunk; ++j) {
          r.a[j] = band(pa, rlo + j);
          r.b[j] = band(b, rlo + j);
          r.c[j] = band(pc, rlo + j);
        }
      } else {
        pair_load_vec(r.a, pa + lo);
        pair_load_vec(r.b, b + lo);
        pair_load_vec(r.c, pc + lo);
      }
    } else {
#pragma unroll
      for (int j = 0; j < Chunk; ++j) load_row(r, j, k0 + j);
    }
  };
  auto steps = [&](const Rows& r, int k0) {
    if constexpr (Vec && WL == 32) {  // the warp's lanes all top or all bottom: a uniform branch
      if (top) {
#pragma unroll
        for (int j = 0; j < Chunk; ++j) step(k0 + j, r.a[j], r.b[j], r.c[j], r.d[j]);
      } else {
#pragma unroll
        for (int j = 0; j < Chunk; ++j) {
          constexpr int last = Chunk - 1;
          step(k0 + j, r.a[last - j], r.b[last - j], r.c[last - j], r.d[last - j]);
        }
      }
    } else if constexpr (Vec) {  // half layout: top and bottom lanes in one warp, selects
#pragma unroll
      for (int j = 0; j < Chunk; ++j)
        step(k0 + j, top ? r.a[j] : r.a[Chunk - 1 - j], top ? r.b[j] : r.b[Chunk - 1 - j],
             top ? r.c[j] : r.c[Chunk - 1 - j], top ? r.d[j] : r.d[Chunk - 1 - j]);
    } else {
#pragma unroll
      for (int j = 0; j < Chunk; ++j) step(k0 + j, r.a[j], r.b[j], r.c[j], r.d[j]);
    }
  };
#pragma unroll
  for (int j = 0; j < Chunk; ++j)
    if (j < rem) load_row(B, j, j);
  if (rem < K) load(A, rem);
  if (lead) {
    if (rem > 0)
      B.a[0] = T(0);
    else
      A.a[0] = T(0);
  }
#pragma unroll
  for (int j = 0; j < Chunk; ++j)
    if (j < rem) step(j, B.a[j], B.b[j], B.c[j], B.d[j]);
  for (int k0 = rem; k0 < K; k0 += 2 * Chunk) {
    if (k0 + Chunk < K) load(B, k0 + Chunk);
    steps(A, k0);
    if (k0 + Chunk >= K) break;
    if (k0 + 2 * Chunk < K) load(A, k0 + 2 * Chunk);
    steps(B, k0 + Chunk);
  }

  // The middle: the bottom lane's current row (columns h+1: b, h: c) meets the top lane's.
  T mb, mc, md;
  T* const xs = reinterpret_cast<T*>(pivot_pair_smem) + static_cast<std::size_t>(K) * V * TPB + li;  // (split)
  if constexpr (WL == 16) {
    const int other = lane ^ 16;
    mb = __shfl_sync(kFullMask, cur.b, other);
    mc = __shfl_sync(kFullMask, cur.c, other);
    md = __shfl_sync(kFullMask, cur.d, other);
  } else {
    if (!top) {
      xs[0] = cur.b;
      xs[WL] = cur.c;
      xs[2 * WL] = cur.d;
    }
    __syncthreads();
    mb = xs[0];
    mc = xs[WL];
    md = xs[2 * WL];
  }
  T xh = T(0), xh1 = T(0);
  if (top) {
    const common::PivotOut<T> o = common::pivot_step<T>(cur, mc, mb, T(0), md);  // U row h
    const common::PivotOut<T> l = common::pivot_last<T>(cur);                     // U row h+1
    check.add(o.r);
    check.add(l.r);
    xh1 = l.y;
    xh = o.y - o.u1 * xh1;
    if (valid) {
      u[off + h * st] = xh;
      u[off + (h + 1) * st] = xh1;
    }
  }
  T sh, sh1;
  if constexpr (WL == 16) {
    sh = __shfl_sync(kFullMask, xh, li);
    sh1 = __shfl_sync(kFullMask, xh1, li);
  } else {
    if (top) {
      xs[3 * WL] = xh;
      xs[4 * WL] = xh1;
    }
    __syncthreads();
    sh = xs[3 * WL];
    sh1 = xs[4 * WL];
  }
  // x of the two rows beyond the next one out: top (x_{k+1}, x_{k+2}), bottom (x_{k-1}, x_{k-2}).
  T x1 = top ? sh : sh1, x2 = top ? sh1 : sh;

  // Backward, outward from the middle: slots K-1 .. 0, full chunks a chunk ahead, then the rest.
  auto next_x = [&](T y, T u1, T u2) {  // x of the next row out
    const T x = y - u1 * x1 - u2 * x2;
    x2 = x1;
    x1 = x;
    return x;
  };
  auto back = [&](int k, T y, T u1, T u2) {
    const T x = next_x(y, u1, u2);
    if (valid && (k > 0 || !lead)) u[e0 + (k - 1) * edir] = x;
  };
  // (YInU: the virtual slot's y' reads row 0's element instead, whatever it holds: its x is not stored)
  auto slot_y = [&](int k) { return YInU ? u[e0 + (k > 0 || !lead ? k - 1 : 0) * edir] : sw[(k * V + 2) * TPB]; };
  // Slots K-1 .. rem in full chunks, each loaded while the one before is substituted (two
  // buffers), then the first rem slots (loaded with the last full chunk).
  struct Slots {
    T y[Chunk], u1[Chunk], u2[Chunk];
  } P, Q;
  auto load_slot = [&](Slots& r, int j, int k) {
    r.u1[j] = sw[(k * V + 0) * TPB];
    r.u2[j] = sw[(k * V + 1) * TPB];
    r.y[j] = slot_y(k);
  };
  auto load_back = [&](Slots& r, int k0) {  // slots K-1-k0 .. K-Chunk-k0
#pragma unroll
    for (int j = 0; j < Chunk; ++j) load_slot(r, j, K - 1 - k0 - j);
  };
  auto load_rest = [&](Slots& r) {  // slots rem-1 .. 0
#pragma unroll
    for (int j = 0; j < Chunk; ++j)
      if (j < rem) load_slot(r, j, rem - 1 - j);
  };
  auto backs = [&](const Slots& r, int k0) {
#pragma unroll
    for (int j = 0; j < Chunk; ++j) back(K - 1 - k0 - j, r.y[j], r.u1[j], r.u2[j]);
  };
  auto backs_rest = [&](const Slots& r) {
#pragma unroll
    for (int j = 0; j < Chunk; ++j)
      if (j < rem) back(rem - 1 - j, r.y[j], r.u1[j], r.u2[j]);
  };
  const int full = K - rem;
  if constexpr (Vec) {
    // Vec: u stored as 16-byte vectors too. The U row of slot k is row met0 + (k - 1) * rstep, one
    // row behind the forward chunks, so the aligned chunks here are the slots [rem + 1 + Chunk * c,
    // rem + 1 + Chunk * (c + 1)) for c = full / Chunk - 2 .. 0 (their lowest elements start on a
    // vector exactly when the forward chunks do: pivoting_pair_vec_fits), after a head of the top
    // Chunk - 1 slots and before a tail of the slots rem .. 0, both stored a value a row.
    const int m = full / Chunk;
    auto load_chunk = [&](Slots& r, int c) {  // slots rem + Chunk * (c + 1) .. rem + 1 + Chunk * c
#pragma unroll
      for (int j = 0; j < Chunk; ++j) load_slot(r, j, rem + Chunk * (c + 1) - j);
    };
    auto load_tail = [&](Slots& r) {  // slots rem .. 0
#pragma unroll
      for (int j = 0; j < Chunk; ++j)
        if (j <= rem) load_slot(r, j, rem - j);
    };
    auto backs_tail = [&](const Slots& r) {
#pragma unroll
      for (int j = 0; j < Chunk; ++j)
        if (j <= rem) back(rem - j, r.y[j], r.u1[j], r.u2[j]);
    };
    auto backs_vec = [&](const Slots& r, int c) {
      T xp[Chunk], mem[Chunk];
#pragma unroll
      for (int j = 0; j < Chunk; ++j) xp[j] = next_x(r.y[j], r.u1[j], r.u2[j]);
      // memory order: top lanes' slots ascend with their rows, bottom lanes' descend
      if constexpr (WL == 32) {
        if (top) {
#pragma unroll
          for (int q = 0; q < Chunk; ++q) mem[q] = xp[Chunk - 1 - q];
        } else {
#pragma unroll
          for (int q = 0; q < Chunk; ++q) mem[q] = xp[q];
        }
      } else {
#pragma unroll
        for (int q = 0; q < Chunk; ++q) mem[q] = top ? xp[Chunk - 1 - q] : xp[q];
      }
      const int lo = top ? e0 + rem + Chunk * c : e0 - rem - Chunk * (c + 1) + 1;
      if (valid) pair_store_vec(u + lo, mem);
    };
    if (m == 0) {
      load_rest(P);
      backs_rest(P);
    } else {
#pragma unroll
      for (int j = 0; j < Chunk - 1; ++j) load_slot(P, j, K - 1 - j);  // the head
      if (m >= 2)
        load_chunk(Q, m - 2);
      else
        load_tail(Q);
#pragma unroll
      for (int j = 0; j < Chunk - 1; ++j) back(K - 1 - j, P.y[j], P.u1[j], P.u2[j]);
      if (m == 1) {
        backs_tail(Q);
      } else {
        for (int c = m - 2;; c -= 2) {  // Q holds chunk c
          if (c >= 1)
            load_chunk(P, c - 1);
          else
            load_tail(P);
          backs_vec(Q, c);
          if (c == 0) {
            backs_tail(P);
            break;
          }
          if (c >= 2)  // P holds chunk c - 1
            load_chunk(Q, c - 2);
          else
            load_tail(Q);
          backs_vec(P, c - 1);
          if (c == 1) {
            backs_tail(Q);
            break;
          }
        }
      }
    }
  } else if (full == 0) {
    load_rest(P);
    backs_rest(P);
  } else {
    load_back(P, 0);
    for (int k0 = 0;; k0 += 2 * Chunk) {
      if (k0 + Chunk < full)
        load_back(Q, k0 + Chunk);
      else
        load_rest(Q);
      backs(P, k0);
      if (k0 + Chunk >= full) {
        backs_rest(Q);
        break;
      }
      if (k0 + 2 * Chunk < full)
        load_back(P, k0 + 2 * Chunk);
      else
        load_rest(P);
      backs(Q, k0 + Chunk);
      if (k0 + 2 * Chunk >= full) {
        backs_rest(P);
        break;
      }
    }
  }
  report(check.bad() && valid, flag);
}

// Whether the Vec form reads (and stores) every full chunk of every line: the layout's part
// (pivoting_pair_vec_layout) and the arrays' bases 16-byte aligned; other lines read a value a load.
template <class T>
bool pivoting_pair_vec_fits(const DeviceLines& L, BandView<T> bands, const T* d, const T* u, int chunk) {
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (!aligned(d) || !aligned(u)) return false;
  if (!bands.shared && !(aligned(bands.a) && aligned(bands.b) && aligned(bands.c))) return false;
  return pivoting_pair_vec_layout(L, sizeof(T), chunk);
}

template <class T, bool Shared, bool YInU, int Rows, int WL>
void launch_pivoting_pair_block(const DeviceLines& L, BandView<T> bands, const T* d, T* u, int* flag,
                                cudaStream_t stream, const int* gate) {
  const std::size_t smem = pivoting_pair_smem<WL>(L.n, YInU, sizeof(T));
  const unsigned blocks = static_cast<unsigned>((L.lines() + WL - 1) / WL);
  auto go = [&](auto kernel) {
    allow_dynamic_smem(kernel, smem);
    kernel<<<blocks, PairLayout<WL>::threads, smem, stream>>>(L, bands.a, bands.b, bands.c, d, u, flag, gate);
  };
  // The Vec kernels of the y'-through-u form (X lines take it only when forced: a timing switch) and
  // of the comparison-only chunks are compiled only with -DADI_CUDA_UNROLL_ALL=ON (issue 15 item 8);
  // other builds run the scalar kernel there.
#if defined(ADI_CUDA_UNROLL_ALL)
  constexpr bool kVec = true;
#else
  constexpr bool kVec = !YInU && Rows == kPivotPairRows;
#endif
  if constexpr (kVec) {
    if (pivoting_pair_vec_fits<T>(L, bands, d, u, Rows)) return go(pivoting_pair_kernel<T, Shared, Rows, YInU, WL, true>);
  }
  go(pivoting_pair_kernel<T, Shared, Rows, YInU, WL, false>);
}
template <class T, bool Shared, bool YInU, int Rows>
void launch_pivoting_pair_rows(const DeviceLines& L, BandView<T> bands, const T* d, T* u, int* flag,
                               cudaStream_t stream, const int* gate) {
  constexpr int own = sizeof(T) == 4 ? 32 : 16;
#if defined(ADI_CUDA_UNROLL_ALL)
  if (pivot_pair_block_lines(sizeof(T)) != own)
    return launch_pivoting_pair_block<T, Shared, YInU, Rows, 48 - own>(L, bands, d, u, flag, stream, gate);
#endif
  launch_pivoting_pair_block<T, Shared, YInU, Rows, own>(L, bands, d, u, flag, stream, gate);
}

// For measurement (read at each solve): ADI_PIVOTING_PAIR_FORM = shared | yu overrides automatic's
// form; ADI_PIVOTING_PAIR_ROWS = 4 | 8 | 16 the rows a chunk (8 the default; 4 and 16 compiled only
// with -DADI_CUDA_UNROLL_ALL=ON, else a note and 8).
template <class T, bool Shared, bool YInU>
void launch_pivoting_pair_form(const DeviceLines& L, BandView<T> bands, const T* d, T* u, int* flag,
                               cudaStream_t stream, const int* gate) {
  const int rows = ::adi::detail::env_choice("ADI_PIVOTING_PAIR_ROWS", {"4", "8", "16"}, 1);
#if defined(ADI_CUDA_UNROLL_ALL)
  if (rows == 0) return launch_pivoting_pair_rows<T, Shared, YInU, 4>(L, bands, d, u, flag, stream, gate);
  if (rows == 2) return launch_pivoting_pair_rows<T, Shared, YInU, 16>(L, bands, d, u, flag, stream, gate);
#else
  if (rows != 1) {
    static std::once_flag once;
    note_form_not_compiled(once, "ADI_PIVOTING_PAIR_ROWS=4|16 (the pair route's chunk, for comparisons)",
                           "8 rows a chunk");
  }
#endif
  launch_pivoting_pair_rows<T, Shared, YInU, kPivotPairRows>(L, bands, d, u, flag, stream, gate);
}

template <class T>
void launch_pivoting_pair(const LineSet& ls, BandView<T> bands, const T* d, T* u, int* flag, cudaStream_t stream,
                          const int* gate = nullptr) {
  const DeviceLines L = to_device(ls);
  if (L.lines() == 0) return;
  const int forced = ::adi::detail::env_choice("ADI_PIVOTING_PAIR_FORM", {"shared", "yu"}, -1);
  bool yu = forced >= 0 ? forced == 1 : pivoting_pair_auto_form(ls, false, sizeof(T)) == PairForm::yu;
  // (forced on lines automatic would not take: the form that fits a block)
  if (!yu && pivoting_pair_block_smem(L.n, false, sizeof(T)) > launch_limits().smem_optin) yu = true;
  if (bands.shared) {
    if (yu)
      launch_pivoting_pair_form<T, true, true>(L, bands, d, u, flag, stream, gate);
    else
      launch_pivoting_pair_form<T, true, false>(L, bands, d, u, flag, stream, gate);
  } else {
    if (yu)
      launch_pivoting_pair_form<T, false, true>(L, bands, d, u, flag, stream, gate);
    else
      launch_pivoting_pair_form<T, false, false>(L, bands, d, u, flag, stream, gate);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
