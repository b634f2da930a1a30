#pragma once
// Thomas-PCR hybrid for lines adjacent in memory (Y/Z sweeps, interleaved batches;
// paper 6.3, algorithm 11), two forms.
//
// Registers + cp.async stage (segments of up to 16 rows, lines up to 512; 8 rows / 256
// in double precision with per-line bands, whose 16 rows would spill): a block takes
// tiles of LB neighbouring lines, 128 bytes of each row by default (32 lines in fp32, 16
// in fp64: the H100 measured 63% of copy bandwidth at 128-byte rows against 55% at 64
// and 48% at 32). Thread (l, s) owns rows [s*m, s*m + m) of line l. Its rows arrive in a
// shared-memory stage through cp.async; it moves them into registers and at once issues
// the copies of the same slots for the block's next tile, so the next tile streams in
// during the whole solve of this one, with no barrier (each thread reads only what it
// copied). It runs the modified Thomas on its segment (pcr_segment_registers.cuh); the
// segments' end rows go through shared memory, groups of lanes solve the reduced
// systems with shuffle PCR (32/width lines per warp), the separators come back for the
// interior rows, and u is stored straight from registers. Two block barriers per tile;
// only a, b, c, d in and u out touch global memory. The copy stream has three forms (one
// tile at a time, commit groups, the bulk copy engine; ADI_PCR_STRIDED_GROUPS, below).
//
// Shared-memory tile (longer lines, up to kPcrMaxN): a block takes a tile of LB
// neighbouring lines: each warp load instruction reads 32/LB consecutive rows of the LB
// lines into per-line shared-memory arrays; then each warp solves whole lines with
// pcr_warp_core.cuh and the tile is written back the same way. The per-line array
// stride is chosen so that the staging writes of a warp fall in distinct banks. Slower
// than the coalesced Thomas for such lines (bench sweep), so only a forced kernel uses it.
#include <cuda_pipeline_primitives.h>

#include <cstdlib>
#include <string>
#include <type_traits>

#include "adi/base/env_switch.hpp"
#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/bulk_copy.cuh"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_segment_registers.cuh"
#include "solvers/cuda/warp_tile_copy.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kPcrTileUnroll = 4;

struct PcrTile {
  int log2lb = 3;  // LB = 2^log2lb lines per tile (<= 32)
  int stride = 0;  // shared-memory values between two lines of one array
};

// Per-line stride: >= per_line, and congruent to the rows-per-wavefront so that a warp's
// staging store (LB lines x E/LB rows, E values per 128-byte wavefront) is conflict-free.
inline int pcr_tile_stride(const PcrShape& sh, int lb, std::size_t value_size) {
  const int e = static_cast<int>(128 / value_size);
  const int want = lb >= e ? 1 : e / lb;
  int s = sh.per_line;
  while (s % e != want % e) ++s;
  return s;
}

template <class T, bool Shared>
__global__ void __launch_bounds__(256)
    thomas_pcr_strided_kernel(DeviceLines L, PcrShape sh, PcrTile tile, const T* __restrict__ a,
                              const T* __restrict__ b, const T* __restrict__ c, const T* d, T* u,
                              bool periodic, int* flag) {
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  const int LB = 1 << tile.log2lb, LS = tile.stride;
  i64* soff = reinterpret_cast<i64*>(pcr_smem);  // offsets of the tile's lines (-1: none)
  T* smem = reinterpret_cast<T*>(pcr_smem + kWarp * sizeof(i64));
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  const int P = sh.per_line, n = sh.n;
  const i64 nl = L.lines(), st = L.stride;
  const i64 tiles = (nl + LB - 1) / LB;
  const int total = n << tile.log2lb;
  bool bad = false;
  PcrFactors<T> F{};
  T* arr = smem;  // Bands: a, b, c, d tiles; SharedBands: d tile after the factors
  if (Shared) {
    F = PcrFactors<T>::carve(smem, P);
    arr = smem + PcrFactors<T>::values(P);
    if (warp == 0) pcr_factorize_shared<T, true>(sh, a, b, c, periodic, F, bad);
  }
  const i64 tile_values = static_cast<i64>(LB) * LS;
  T* sd = Shared ? arr : arr + 3 * tile_values;
  T* sa = arr;
  T* sb = arr + tile_values;
  T* sc = arr + 2 * tile_values;
  for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    if (threadIdx.x < LB) {
      const i64 line = t * LB + threadIdx.x;
      soff[threadIdx.x] = line < nl ? L.offset(line) : i64(-1);
    }
    __syncthreads();
    for (int i0 = threadIdx.x; i0 < total; i0 += kPcrTileUnroll * blockDim.x) {
      T va[kPcrTileUnroll], vb[kPcrTileUnroll], vc[kPcrTileUnroll], vd[kPcrTileUnroll];
#pragma unroll
      for (int k = 0; k < kPcrTileUnroll; ++k) {
        const int idx = i0 + k * blockDim.x;
        const int l = idx & (LB - 1), r = idx >> tile.log2lb;
        if (idx < total && soff[l] >= 0) {
          const i64 o = soff[l] + r * st;
          vd[k] = d[o];
          if (!Shared) {
            va[k] = (r == 0 && !periodic) ? T(0) : a[o];
            vb[k] = b[o];
            vc[k] = (r == n - 1 && !periodic) ? T(0) : c[o];
          }
        }
      }
#pragma unroll
      for (int k = 0; k < kPcrTileUnroll; ++k) {
        const int idx = i0 + k * blockDim.x;
        const int l = idx & (LB - 1), r = idx >> tile.log2lb;
        if (idx < total && soff[l] >= 0) {
          const int p = l * LS + sh.pos(r);
          sd[p] = vd[k];
          if (!Shared) {
            sa[p] = va[k];
            sb[p] = vb[k];
            sc[p] = vc[k];
          }
        }
      }
    }
    __syncthreads();
    for (int l = warp; l < LB; l += W) {
      if (soff[l] < 0) continue;  // uniform per warp
      if (Shared)
        pcr_line_shared(sh, F, sd + l * LS);
      else
        pcr_line(sh, sa + l * LS, sb + l * LS, sc + l * LS, sd + l * LS, periodic, bad);
    }
    __syncthreads();
#pragma unroll 4
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
      const int l = idx & (LB - 1), r = idx >> tile.log2lb;
      if (soff[l] >= 0) u[soff[l] + r * st] = sd[l * LS + sh.pos(r)];
    }
    __syncthreads();
  }
  report(bad, flag);
}

// The bulk form's shared memory: one mbarrier per warp (at most 16) first, and the stage
// rounded up to 16 bytes.
constexpr std::size_t kBulkBarrierBytes = 16 * sizeof(std::uint64_t);
template <class T>
__device__ __forceinline__ T* align_stage(T* p) {
  return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(p) + 15) & ~std::uintptr_t(15));
}

// Fields of a segment's ends exchanged through shared memory, [field][segment][line]
// with the line index padded to LB+1 (conflict-free for both the writers, lanes =
// lines x segments, and the reduced-system warps, lanes = segments).
constexpr int kEndFields = 11;  // Fd Fa Fg Ld La Lg ae be ce dv x

// The copy stream's forms (the kernel's Groups parameter): 0 the bulk copy engine, 1, 2 or 4
// cp.async commit groups of the thread's own rows, kWarpCopy 16-byte cp.async of the warp's rows
// (warp_tile_copy.cuh).
constexpr int kWarpCopy = 3;

// One block of up to Threads threads per SM: the tile's segments in registers, the next
// tile in shared memory. Threads = 512 (up to 128 registers a thread) everywhere but the
// 16-row segments of per-line bands in double precision (64 values: 128 registers of rows
// alone), which take blocks of 256 (up to 255 registers; kPcrWideThreads).
template <class T, bool Shared, int MaxM, int Groups, int Threads = 512>
__global__ void __launch_bounds__(Threads, 1)
    thomas_pcr_strided_registers_kernel(DeviceLines L, PcrShape sh, int log2lb, const T* __restrict__ a,
                                        const T* __restrict__ b, const T* __restrict__ c, const T* d, T* u,
                                        bool periodic, bool full_path, int* flag) {
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  constexpr bool Bulk = Groups == 0;  // the bulk copy engine instead of cp.async (below)
  constexpr bool Warp = Groups == kWarpCopy;  // 16-byte cp.async of the warp's rows
  constexpr int NG = Groups == 2 || Groups == 4 ? Groups : 1;  // commit groups per tile
  // Bulk: one mbarrier per warp ahead of everything else (kBulkBarrierBytes).
  T* smem = reinterpret_cast<T*>(pcr_smem + (Bulk ? kBulkBarrierBytes : 0));
  constexpr int NA = Shared ? 1 : 4;  // arrays streamed per line
  const int LB = 1 << log2lb;
  const int t = static_cast<int>(threadIdx.x);
  const int l = t & (LB - 1), s = t >> log2lb;
  const int spad = static_cast<int>(blockDim.x) >> log2lb;
  const int lane = lane_id(), warp = t / kWarp, W = static_cast<int>(blockDim.x) / kWarp;
  const int S = sh.segs, m = sh.m, n = sh.n;
  const int len = max(0, min(m, n - s * m));
  const int base = s * (m + 1);
  const i64 nl = L.lines(), st = L.stride;
  const i64 tiles = (nl + LB - 1) / LB;
  bool bad = false;
  PcrFactors<T> F{};
  T* ends = smem;
  if (Shared) {
    F = PcrFactors<T>::carve(smem, sh.per_line);
    ends = smem + PcrFactors<T>::values(sh.per_line);
    if (warp == 0) pcr_factorize_shared<T, true>(sh, a, b, c, periodic, F, bad);
  }
  T* stage = ends + kEndFields * spad * (LB + 1);  // [array][row][line]: the next tile
  if (Bulk || Warp) stage = align_stage(stage);
  auto at = [&](int field, int seg, int line) -> T& { return ends[(field * spad + seg) * (LB + 1) + line]; };
  const T* src[4] = {d, a, b, c};
  int width = 1;
  while (width < S) width <<= 1;
  const int lines_per_warp = kWarp / width;

  // cp.async copies of the thread's own rows of a tile into the stage (no registers held
  // while they are in flight). Each thread copies exactly the slots it later reads, so it
  // refills them for the next tile as soon as it has read them, without a barrier: the
  // next tile streams in during the whole solve of this one.
  //
  // The copies go in Groups commit groups of MaxM/Groups registers each (register j of the
  // right-aligned segment = row s*m + j - (MaxM - len)). With Groups = 1 a thread waits for
  // all its rows of a tile, then issues all of the next tile's: the SM's copies drain
  // before each tile's burst (one tile in flight, then none). With Groups > 1 it waits for
  // the oldest group only (cp.async.wait_group Groups-1), reads its rows and at once
  // reissues those slots for the next tile, so while the tile's last rows land the next
  // tile's first rows are already in flight: the copy stream never drains.
  //
  // Bulk (Groups = 0; only where every tile's LB lines are adjacent in memory and every row
  // of a tile is a 16-byte aligned piece of LB values: pcr_strided_bulk_fits): the LB
  // threads that read a row of a tile are lanes of one warp, so the warp refills its rows
  // for the next tile as soon as all its lanes have read them (__syncwarp), with one bulk
  // copy per row and array, spread over the lanes, completing on the warp's mbarrier.
  constexpr int GR = MaxM / NG;  // registers per group
  static_assert(MaxM % NG == 0, "groups of whole registers");
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(pcr_smem) + warp;
  auto bulk_issue = [&](i64 tile) {
    // The warp's segments [s0, s0 + spw) hold the rows [r0, r1) of its LB lines.
    const int spw = LB >= kWarp ? 1 : kWarp >> log2lb;
    const int s0 = (warp * kWarp) >> log2lb;
    const int r0 = min(n, s0 * m), r1 = min(n, (s0 + spw) * m);
    const int rows = max(0, min(r1, S * m) - r0);
    const unsigned piece = static_cast<unsigned>(LB * sizeof(T));
    if (lane == 0) mbarrier_arrive_expect(bar, piece * NA * rows);
    __syncwarp();
    const i64 o = L.offset(tile * LB) + static_cast<i64>(r0) * st;
    for (int i = lane; i < rows * NA; i += kWarp) {
      const int k = i / rows, r = i - k * rows;
      const T* from = k == 0 ? d : k == 1 ? a : k == 2 ? b : c;
      bulk_copy_to_shared(stage + (k * n + r0 + r) * LB, from + o + r * st, piece, bar);
    }
  };
  // Warp (same tiles as bulk: pcr_strided_bulk_fits): the warp copies its rows of the LB lines
  // in 16-byte cp.async pieces (warp_tile_copy.cuh, shared with the fused ADI stage).
  const WarpTileRows wr = warp_tile_rows_of(warp, log2lb, m, n);
  auto warp_issue = [&](i64 tile) {
    const i64 o = L.offset(tile * LB) + static_cast<i64>(wr.first) * st;
    warp_tile_rows<false, T>(
        wr.count, log2lb, [&](int r) { return o + r * st; }, [&](int r) { return stage + (wr.first + r) * LB; },
        static_cast<i64>(n) * LB, d, Shared ? nullptr : a, Shared ? nullptr : b, Shared ? nullptr : c);
    __pipeline_commit();
  };
  const int lo_len = MaxM - len;     // first register of a full line's segment
  auto issue = [&](i64 tile, int g) {
    const i64 line = tile * LB + l;
    if (Groups == 1) {  // the stream as before groups (same code: the A/B baseline)
      if (line < nl) {
        const i64 first = L.offset(line) + static_cast<i64>(s) * m * st;
        T* dst = stage + s * m * LB + l;
        const T* from[NA];
#pragma unroll
        for (int k = 0; k < NA; ++k) from[k] = src[k] + first;
        // A run-time loop: issued while the tile's rows are live in registers, an unrolled one
        // would hold its addresses there too (ptxas: spills).
        for (int j = 0; j < len; ++j, dst += LB) {
#pragma unroll
          for (int k = 0; k < NA; ++k) {
            __pipeline_memcpy_async(dst + k * n * LB, from[k], sizeof(T));
            from[k] += st;
          }
        }
      }
    } else {
      const int j0 = max(g * GR, lo_len) - lo_len, j1 = (g + 1) * GR - lo_len;  // rows [j0, j1)
      if (line < nl && j0 < j1) {
        // One element offset for the NA arrays (the bases stay kernel parameters): fewer
        // registers live across the reads than NA pointers.
        i64 o = L.offset(line) + (static_cast<i64>(s) * m + j0) * st;
        T* dst = stage + (s * m + j0) * LB + l;
        for (int j = j0; j < j1; ++j, dst += LB, o += st) {
          __pipeline_memcpy_async(dst, d + o, sizeof(T));
          if (!Shared) {
            __pipeline_memcpy_async(dst + n * LB, a + o, sizeof(T));
            __pipeline_memcpy_async(dst + 2 * n * LB, b + o, sizeof(T));
            __pipeline_memcpy_async(dst + 3 * n * LB, c + o, sizeof(T));
          }
        }
      }
    }
    __pipeline_commit();  // also when empty: every thread commits Groups groups a tile
  };

  if (Bulk) {
    if (lane == 0) {
      mbarrier_init(bar, 1);
      mbarrier_init_fence();
    }
    fence_proxy_async_shared();
    __syncthreads();  // the barriers (and the factors)
    if (static_cast<i64>(blockIdx.x) < tiles) bulk_issue(blockIdx.x);
  } else {
    if (Shared) __syncthreads();  // the factors
    if (Warp && static_cast<i64>(blockIdx.x) < tiles) warp_issue(blockIdx.x);
    if (!Warp && static_cast<i64>(blockIdx.x) < tiles)
      for (int g = 0; g < NG; ++g) issue(blockIdx.x, g);
  }
  unsigned parity = 0;
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x, parity ^= 1u) {
    if (Groups == 1) __pipeline_wait_prior(0);  // this thread's rows of this tile have landed
    if (Bulk) mbarrier_wait(bar, parity);       // the warp's rows of this tile have landed
    if (Warp) {                                 // the warp's rows of this tile have landed
      __pipeline_wait_prior(0);
      __syncwarp();
    }
    const i64 line = tile * LB + l;
    const int mylen = line < nl ? len : 0;
    RegisterRows<T, Shared ? 1 : MaxM> rows;  // per-line bands: a, b, c, d
    T rd[Shared ? MaxM : 1];                  // shared bands: d only
    // The segment's own work, instantiated twice: for a full segment (length the constant
    // MaxM: no row predicates in the arithmetic, the first row's selects resolved at compile
    // time; every segment of the 256- and 512-row boxes) and for any length; each called
    // once. The loads stay predicated on the run-time length in both: unpredicated, the
    // compiler hoists them all ahead of the cp.async issue and spills (ptxas, sm_90: 244
    // bytes fp32 m = 16 and 140 fp64 m = 8, against 0 and 12 this way; loads outside the
    // lambda: 4 and 28).
    auto own_rows = [&](auto seg_len) -> SegmentEnds<T> {
      const int lo = MaxM - mylen;  // right-aligned: row s*m + j - lo in register j
#pragma unroll
      for (int g = 0; g < NG; ++g) {
        if (NG > 1) __pipeline_wait_prior(NG > 1 ? NG - 1 : 0);  // group g has landed
#pragma unroll
        for (int j = g * GR; j < (g + 1) * GR; ++j) {
          if (j >= lo) {
            const int r = s * m + j - lo;
            const T* p = stage + r * LB + l;
            if constexpr (Shared) {
              rd[j] = p[0];
            } else {
              rows.d(j) = p[0];
              rows.a(j) = (r == 0 && !periodic) ? T(0) : p[n * LB];
              rows.b(j) = p[2 * n * LB];
              rows.c(j) = (r == n - 1 && !periodic) ? T(0) : p[3 * n * LB];
            }
          }
        }
        if (NG > 1) {
          if (tile + gridDim.x < tiles)
            issue(tile + gridDim.x, g);
          else
            __pipeline_commit();
        }
      }
      if (Groups == 1 && tile + gridDim.x < tiles) issue(tile + gridDim.x, 0);
      if (Bulk && tile + gridDim.x < tiles) {
        fence_proxy_async_shared();  // this thread's reads of the slots before their refill
        bulk_issue(tile + gridDim.x);
      }
      if (Warp && tile + gridDim.x < tiles) {
        __syncwarp();  // every lane's reads of the warp's slots before their refill
        warp_issue(tile + gridDim.x);
      }
      if constexpr (Shared)
        return segment_reduce_shared<T, MaxM>(rd, seg_len, F.f[0] + base, F.f[1] + base, F.f[2] + base);
      else
        return segment_reduce<T, MaxM>(rows, seg_len, bad);
    };
    // Bulk, Warp: one choice per warp (own_rows refills the warp's rows with __syncwarp inside).
    const bool full = full_path && (Bulk || Warp ? __all_sync(kFullMask, mylen == MaxM) : mylen == MaxM);
    const SegmentEnds<T> e = full ? own_rows(std::integral_constant<int, MaxM>{}) : own_rows(mylen);
    const T vals[10] = {e.Fd, e.Fa, e.Fg, e.Ld, e.La, e.Lg, e.ae, e.be, e.ce, e.dv};
#pragma unroll
    for (int k = 0; k < 10; ++k) at(k, s, l) = vals[k];
    __syncthreads();  // ends written

    // The reduced systems: groups of `width` lanes (a power of two >= S), one line per
    // group, lane q of the group = segment q; 32/width lines per warp at a time.
    for (int l0 = warp * lines_per_warp; l0 < LB; l0 += W * lines_per_warp) {
      const int ll = l0 + lane / width;
      const bool valid = ll < LB && tile * LB + ll < nl;
      const int q = lane & (width - 1);
      const int qlen = valid && q < S ? max(0, min(m, n - q * m)) : 0;
      SegmentEnds<T> eq;
      T nFd = T(0), nFa = T(0), nFg = T(0);
      if (qlen > 0) {
        eq.Ld = at(3, q, ll);
        eq.La = at(4, q, ll);
        eq.Lg = at(5, q, ll);
        eq.ae = at(6, q, ll);
        eq.be = at(7, q, ll);
        eq.ce = at(8, q, ll);
        eq.dv = at(9, q, ll);
        const int nxt = q + 1 < S ? q + 1 : 0;
        nFd = at(0, nxt, ll);
        nFa = at(1, nxt, ll);
        nFg = at(2, nxt, ll);
      }
      T x;
      if constexpr (Shared) {
        x = reduced_solve_shared(reduced_rhs_shared(eq, nFd, qlen), S, F, width);
      } else {
        T A, B, C, D;
        reduced_row(eq, nFd, nFa, nFg, qlen, A, B, C, D);
        bool bad_here = false;
        x = reduced_solve(A, B, C, D, S, periodic, bad_here, width);
        bad |= valid && bad_here;
      }
      if (qlen > 0) at(10, q, ll) = x;
    }
    __syncthreads();

    auto fill_rows = [&](auto seg_len) {
      const int lo = MaxM - seg_len;
      const i64 first = L.offset(line) + static_cast<i64>(s * m - lo) * st;  // register j -> first + j * st
      const T xl = at(10, s == 0 ? S - 1 : s - 1, l), x = at(10, s, l);
      if constexpr (Shared) {
        segment_fill_shared<T, MaxM>(rd, seg_len, F.f[3] + base, F.f[4] + base, xl, x);
#pragma unroll
        for (int j = 0; j < MaxM; ++j)
          if (j >= lo) u[first + j * st] = rd[j];
      } else {
        segment_fill<T, MaxM>(rows, seg_len, xl, x);
#pragma unroll
        for (int j = 0; j < MaxM; ++j)
          if (j >= lo) u[first + j * st] = rows.d(j);
      }
    };
    if (full)
      fill_rows(std::integral_constant<int, MaxM>{});
    else if (mylen > 0)
      fill_rows(mylen);
  }
  if (!Bulk) __pipeline_wait_prior(0);
  report(bad, flag);
}

// Block shape of the register kernel: LB lines x spad segment slots (spad = S rounded
// up to whole warps), at most max_threads threads (512, or kPcrWideThreads).
struct PcrRegisterShape {
  int lb = 8, spad = 32;
};
inline PcrRegisterShape pcr_register_shape(const PcrShape& sh, int lb, int max_threads = 512) {
  PcrRegisterShape r;
  r.lb = lb;
  auto spad = [&](int b) { return (sh.segs * b + kWarp - 1) / kWarp * kWarp / b; };
  while (r.lb > 1 && r.lb * spad(r.lb) > max_threads) r.lb /= 2;
  r.spad = spad(r.lb);
  return r;
}

// Blocks of the register kernel's 16-row segments with per-line bands in double precision
// (lines of 257 .. 512 rows): 64 values a thread in registers need more than the 128 a
// 512-thread block allows.
constexpr int kPcrWideThreads = 256;
template <class T>
std::size_t thomas_pcr_strided_registers_smem(const PcrShape& sh, bool shared, const PcrRegisterShape& r) {
  const std::size_t ends = static_cast<std::size_t>(kEndFields) * r.spad * (r.lb + 1);
  const std::size_t stage = static_cast<std::size_t>(shared ? 1 : 4) * sh.n * r.lb;
  return sizeof(T) * ((shared ? PcrFactors<T>::values(sh.per_line) : 0) + ends + stage);
}

template <class T>
std::size_t thomas_pcr_strided_smem(const PcrShape& sh, bool shared, int lb) {
  const std::size_t tile = static_cast<std::size_t>(lb) * pcr_tile_stride(sh, lb, sizeof(T));
  return kWarp * sizeof(i64) + sizeof(T) * (shared ? PcrFactors<T>::values(sh.per_line) + tile : 4 * tile);
}

// The register kernel's unrolled path for full segments, on unless the environment sets
// ADI_PCR_STRIDED_FULL_PATH=0: a switch for same-run A/B timings (scripts/gpu_yz_check.sh),
// not an option; both paths compute the same function (tests: FullSegments, the suite). Read
// once per process, 1 / 0 / unset (adi/base/env_switch.hpp: else InvalidArgument).
inline bool pcr_strided_full_path() {
  static const bool on = ::adi::detail::env_switch("ADI_PCR_STRIDED_FULL_PATH", true);
  return on;
}

// Whether the bulk form can copy every tile: lb lines adjacent in memory in every tile, and
// each row of a tile (lb <= 32 values: one warp's lanes) a 16-byte aligned multiple of 16
// bytes in every array.
// (The warp form's test, warp_tile_shift, with whole tiles starting at line 0 of each plane.)
template <class T>
bool pcr_strided_bulk_fits(const DeviceLines& L, int lb, const T* const* arrays, int count) {
  return L.count0 % lb == 0 && warp_tile_shift<T>(L, lb, arrays, count) == 0;
}

// The register kernel's copy stream: 1 (before stop 31's default), 2 or 4 cp.async commit
// groups, 0 = the bulk copy engine, kWarpCopy = 16-byte cp.async of the warp's rows (the default;
// these two where pcr_strided_bulk_fits; else 1), from the environment: ADI_PCR_STRIDED_GROUPS=1,
// 2, 4, bulk or warp, for same-run A/B timings
// (scripts/gpu_yz_check.sh), a timing switch, not an option (read once per process; unset: the
// default, any other value an InvalidArgument); every setting computes the same
// function (tests: the suite at each). ptxas (sm_90): 2 and 4 groups spill with per-line bands
// (fp32 m = 16: 136 / 276 bytes, fp64 m = 8: 188 / 288), not with shared bands (<= 20).
// Issue 15 item 8: the default build compiles only the warp form and its fallback 1; bulk, 2 and 4
// (timing-only) with ADI_CUDA_UNROLL_ALL. Asked for one this build lacks, the switch says so on
// stderr (once) and runs the default.
#if defined(ADI_CUDA_UNROLL_ALL)
constexpr bool kPcrStridedTimingForms = true;
#else
constexpr bool kPcrStridedTimingForms = false;
#endif
inline int pcr_strided_copy_groups(bool shared, std::size_t value_size) {
  static const int env = [] {
    constexpr int kForms[] = {1, 2, 4, 0, kWarpCopy};
    const int pick = ::adi::detail::env_choice("ADI_PCR_STRIDED_GROUPS", {"1", "2", "4", "bulk", "warp"}, -1);
    const int form = pick < 0 ? -1 : kForms[pick];
    if (!kPcrStridedTimingForms && (form == 0 || form == 2 || form == 4)) {
      const std::string g = form == 0 ? "bulk" : std::to_string(form);
      static std::once_flag once;  // (this initialiser runs once anyway; scripts/gpu_yz_check.sh greps the line)
      note_form_not_compiled(once, ("ADI_PCR_STRIDED_GROUPS=" + g).c_str(),
                             "the default, warp (1 where the tiles are not whole and 16-byte aligned)");
      return -1;
    }
    return form;
  }();
  // Defaults by bands (per-line, shared) and precision (fp32, fp64): the warp's 16-byte pieces
  // everywhere (where the tiles are whole and aligned; else 1). H200, stop 31 r1, same-run A/B,
  // 1 -> warp: 256^3 per-line fp32 Y/Z 59.4 -> 78.8 / 58.0 -> 76.5% of copy, fp64 59.4 -> 84.2 /
  // 56.7 -> 81.6%; shared bands fp64 Y 64.3 -> 71.1%; 512^3 fp32 Y 47.3 -> 83.7%, fp64 shared Y
  // 66.9 -> 86.1%; no row slower (solvers/cuda/README.md).
  constexpr int kDefault[2][2] = {{kWarpCopy, kWarpCopy}, {kWarpCopy, kWarpCopy}};
  return env >= 0 ? env : kDefault[shared ? 1 : 0][value_size == 8 ? 1 : 0];
}

template <class T>
void launch_thomas_pcr_strided(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                               int* flag, cudaStream_t stream, const Tuning& tuning) {
  const DeviceLines L = to_device(ls);
  const LaunchLimits lim = launch_limits();
  const PcrShape sh0 = pcr_shape(L.n);
  // Registers + cp.async stage for segments of up to 16 rows; in double precision with
  // per-line bands 8-row segments in blocks of 512 threads for lines of up to 256 rows (16 rows
  // of a, b, c, d would spill at 128 registers), 16-row segments in blocks of kPcrWideThreads
  // for lines of 257 .. 512 (stop 54); the shared-memory tile beyond.
  const bool wide = !bands.shared && sizeof(T) == 8 && L.n > 256;
  const int rows_max = !bands.shared && sizeof(T) == 8 && !wide ? 8 : 16;
  const int max_threads = wide ? kPcrWideThreads : 512;
  if (sh0.m <= rows_max) {
    // Default segments: 16 rows (fewer, longer segments keep the block within 512 threads
    // at 128-byte rows; H100 256^3: fp32 66% vs 50% with 8, shared fp64 72% vs 68%).
    const int rows_default = 16;
    int rows = std::min(tuning.rows_per_thread > 0 ? tuning.rows_per_thread : rows_default, rows_max);
    // Issue 15 item 8 (stop 40, h-reach): the default is rows_max, and pcr_shape(n, rows_max).m ==
    // rows_max for every n here, so only the 16-row kernels (8-row with per-line fp64 bands) are
    // reached; 8-row segments elsewhere (Tuning::rows_per_thread = 8, the benchmark's tuning
    // rows) are compiled only with ADI_CUDA_UNROLL_ALL: asked for in a build without them, said
    // once on stderr, and the default runs.
    if (!kPcrStridedTimingForms && rows != rows_max) {
      static std::once_flag once;
      note_form_not_compiled(once, "cuda_thomas_pcr_strided Tuning::rows_per_thread = 8 (16 is the default here)",
                             "the default (16-row segments)");
      rows = rows_max;
    }
    const PcrShape sh = pcr_shape(L.n, rows);
    // Default tile: 128 bytes of each row (32 lines in fp32, 16 in fp64), fewer when the
    // block would pass 512 threads.
    const int lb_default = 128 / static_cast<int>(sizeof(T));
    PcrRegisterShape rs =
        pcr_register_shape(sh, tuning.lines_per_block > 0 ? tuning.lines_per_block : lb_default, max_threads);
    while (rs.lb > 1 && thomas_pcr_strided_registers_smem<T>(sh, bands.shared, rs) > lim.smem_optin)
      rs = pcr_register_shape(sh, rs.lb / 2, max_threads);
    int groups = pcr_strided_copy_groups(bands.shared, sizeof(T));
    const T* streamed[4] = {d, bands.a, bands.b, bands.c};
    const bool tiled = groups == 0 || groups == kWarpCopy;  // whole aligned tiles
    const int narrays = bands.shared ? 1 : 4;
    if (tiled && !pcr_strided_bulk_fits<T>(L, rs.lb, streamed, narrays)) {
      // Rows of lines that end in part of a tile (240 lines a row: 7.5 tiles of 32 in fp32) keep
      // the tiled stream with narrower tiles (16 lines, 64-byte rows) where those fit whole, down
      // to a sector (32 bytes) of each row, unless the caller set the width (Tuning); else one
      // value a copy (groups 1). H200, 240x256x256 fp32 Y: solvers/cuda/README.md "Stop 46".
      PcrRegisterShape narrow = rs;
      while (tuning.lines_per_block <= 0 && narrow.lb * static_cast<int>(sizeof(T)) > 32 &&
             !pcr_strided_bulk_fits<T>(L, narrow.lb, streamed, narrays))
        narrow = pcr_register_shape(sh, narrow.lb / 2, max_threads);
      if (pcr_strided_bulk_fits<T>(L, narrow.lb, streamed, narrays))
        rs = narrow;
      else
        groups = 1;
    }
    const std::size_t base_smem = thomas_pcr_strided_registers_smem<T>(sh, bands.shared, rs);
    // The stage aligned to 16 bytes (bulk, warp), after the bulk form's barriers.
    auto smem_for = [&](int g) {
      return base_smem + (g == 0 ? kBulkBarrierBytes + 16 : g == kWarpCopy ? 16 : 0);
    };
    if (smem_for(groups) > lim.smem_optin) groups = 1;
    const std::size_t smem = smem_for(groups);
    int log2lb = 0;
    while ((1 << log2lb) < rs.lb) ++log2lb;
    const int threads = rs.lb * rs.spad;
    const i64 tiles = (L.lines() + rs.lb - 1) / rs.lb;
    auto go = [&](auto kernel) {
      const unsigned grid = persistent_grid(kernel, threads, smem, tiles, lim);
      kernel<<<grid, threads, smem, stream>>>(L, sh, log2lb, bands.a, bands.b, bands.c, d, u, periodic,
                                              pcr_strided_full_path(), flag);
    };
    auto go_groups = [&](auto shared, auto max_m) {
      constexpr bool S = decltype(shared)::value;
      constexpr int M = decltype(max_m)::value;
      if constexpr (sizeof(T) == 8 && !S && M == 16) {  // lines of 257 .. 512, blocks of 256
        // (the warp's 16-byte stream or one value a copy; no timing-only forms here)
        if (groups == 1) return go(thomas_pcr_strided_registers_kernel<T, S, M, 1, kPcrWideThreads>);
        return go(thomas_pcr_strided_registers_kernel<T, S, M, kWarpCopy, kPcrWideThreads>);
      } else {
        switch (groups) {  // bulk, 2, 4: only ADI_CUDA_UNROLL_ALL (pcr_strided_copy_groups)
#if defined(ADI_CUDA_UNROLL_ALL)
          case 0: return go(thomas_pcr_strided_registers_kernel<T, S, M, 0>);
          case 2: return go(thomas_pcr_strided_registers_kernel<T, S, M, 2>);
          case 4: return go(thomas_pcr_strided_registers_kernel<T, S, M, 4>);
#endif
          case 1: return go(thomas_pcr_strided_registers_kernel<T, S, M, 1>);
          default: return go(thomas_pcr_strided_registers_kernel<T, S, M, kWarpCopy>);
        }
      }
    };
    using yes = std::true_type;
    using no = std::false_type;
    using m8 = std::integral_constant<int, 8>;
    using m16 = std::integral_constant<int, 16>;
    // (Without ADI_CUDA_UNROLL_ALL sh.m is rows_max: 16, or 8 with per-line fp64 bands on lines
    // of up to 256 rows.)
    if constexpr (kPcrStridedTimingForms) {
      if (bands.shared) {
        if (sh.m <= 8)
          go_groups(yes{}, m8{});
        else
          go_groups(yes{}, m16{});
      } else if (sh.m > 8) {  // fp32, or fp64 lines of 257 .. 512 (blocks of 256)
        go_groups(no{}, m16{});
      } else {
        go_groups(no{}, m8{});
      }
    } else if (bands.shared) {
      go_groups(yes{}, m16{});
    } else if constexpr (sizeof(T) == 4) {
      go_groups(no{}, m16{});
    } else if (wide) {
      go_groups(no{}, m16{});
    } else {
      go_groups(no{}, m8{});
    }
    ADI_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const PcrShape sh = sh0;
  // Default tile: as many lines (up to 32) as fit in ~48 KB of shared memory, so that
  // several blocks share an SM and one block's loads overlap another's solve; never
  // fewer than 32 bytes (one sector) of each row when the line is short enough.
  int lb = tuning.lines_per_block;
  if (lb <= 0) {
    lb = 32;
    const int min_lb = std::max(1, static_cast<int>(32 / sizeof(T)));
    while (lb > min_lb && thomas_pcr_strided_smem<T>(sh, bands.shared, lb) > 48 * 1024) lb /= 2;
  }
  while (lb > 1 && thomas_pcr_strided_smem<T>(sh, bands.shared, lb) > lim.smem_optin) lb /= 2;
  const std::size_t smem = thomas_pcr_strided_smem<T>(sh, bands.shared, lb);
  if (smem > lim.smem_optin)
    throw Unsupported("cuda_thomas_pcr_strided: a line of n = " + std::to_string(L.n) + " needs " +
                      std::to_string(smem) + " bytes of shared memory, the device allows " +
                      std::to_string(lim.smem_optin));
  PcrTile tile;
  tile.log2lb = 0;
  while ((1 << tile.log2lb) < lb) ++tile.log2lb;
  tile.stride = pcr_tile_stride(sh, lb, sizeof(T));
  int warps = tuning.warps_per_block > 0 ? tuning.warps_per_block : std::min(lb, 8);
  warps = std::max(1, std::min(warps, 8));
  const int threads = warps * kWarp;
  const i64 tiles = (L.lines() + lb - 1) / lb;
  if (bands.shared) {
    auto k = thomas_pcr_strided_kernel<T, true>;
    const unsigned grid = persistent_grid(k, threads, smem, tiles, lim);
    k<<<grid, threads, smem, stream>>>(L, sh, tile, bands.a, bands.b, bands.c, d, u, periodic, flag);
  } else {
    auto k = thomas_pcr_strided_kernel<T, false>;
    const unsigned grid = persistent_grid(k, threads, smem, tiles, lim);
    k<<<grid, threads, smem, stream>>>(L, sh, tile, bands.a, bands.b, bands.c, d, u, periodic, flag);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
