#pragma once
// The warp copy stream of the Thomas-PCR register kernels (thomas_pcr_strided.cuh and the fused
// ADI stage's Y/Z form, thomas_pcr_fused_stage.cuh): a tile holds LB = 2^log2lb lines adjacent
// in memory, so each row of the tile is LB consecutive values, and a warp copies the rows its
// segments hold with 16-byte cp.async, one piece of a row per lane and instruction (2 lines in
// fp64, 4 in fp32): 2x (fp64) or 4x (fp32) fewer copy instructions than one value per thread and
// copy, no per-value address arithmetic, lanes on consecutive pieces (whole 128-byte rows per
// instruction at 128-byte tiles). Stop 31, batched 256^3 fp64 Y/Z on the H200: 59/57 -> 84/82%
// of copy (Nsight: long-scoreboard stall 3.29 -> 0.87 cycles per issue).
//
// A lane then reads rows that other lanes copied: every lane waits for its own copies
// (__pipeline_wait_prior), then __syncwarp; the warp refills its rows for the next tile after a
// __syncwarp that follows its last read of them. The caller commits.
#include <cuda_pipeline_primitives.h>

#include <cstdint>

#include "solvers/cuda/pcr_warp_core.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

// A row the caller's source map has no data for (warp_tile_rows skips it).
constexpr i64 kNoTileRow = -(i64(1) << 62);

// The rows [first, first + count) of a tile that warp `warp` holds: thread t is (line t % LB,
// segment t / LB), so the warp holds segments [s0, s0 + spw) of m rows each.
struct WarpTileRows {
  int first = 0, count = 0;
};
__device__ __forceinline__ WarpTileRows warp_tile_rows_of(int warp, int log2lb, int m, int n) {
  const int s0 = (warp * kWarp) >> log2lb;
  const int spw = log2lb >= 5 ? 1 : kWarp >> log2lb;
  WarpTileRows w;
  w.first = min(n, s0 * m);
  w.count = max(0, min(n, (s0 + spw) * m) - w.first);
  return w;
}

// The warp's 16-byte cp.async of `rows` tile rows: row i's LB values start at global element
// src(i) of each array p0 .. p3 (null: not copied; p0 only with Partial) and go to shared
// dst(i) + k * pitch for array k. Both ends 16-byte aligned (warp_tile_shift). Partial (tiles
// aligned in memory, not to the lines): rows with src(i) == kNoTileRow are skipped, and only the
// row's pieces [first, last) are copied (those holding lines of the tile); without it every piece
// of every row is copied, with no test per piece (the batched kernel's whole tiles).
template <bool Partial, class T, class Src, class Dst>
__device__ __forceinline__ void warp_tile_rows(int rows, int log2lb, Src src, Dst dst, i64 pitch, const T* p0,
                                               const T* p1, const T* p2, const T* p3, int first = 0,
                                               int last = kWarp) {
  constexpr int V = 16 / static_cast<int>(sizeof(T));  // values per piece
  int log2cpr = 0;                                      // pieces per row: LB / V, a power of two
  while ((V << log2cpr) < (1 << log2lb)) ++log2cpr;
  const int count = rows << log2cpr;
  for (int i = lane_id(); i < count; i += kWarp) {
    const int r = i >> log2cpr, piece = i & ((1 << log2cpr) - 1);
    const i64 row = src(r);
    if (Partial && (row == kNoTileRow || piece < first || piece >= last)) continue;
    const i64 g = row + piece * V;
    T* to = dst(r) + piece * V;
    if (!Partial || p0) __pipeline_memcpy_async(to, p0 + g, 16);
    if (p1) __pipeline_memcpy_async(to + pitch, p1 + g, 16);
    if (p2) __pipeline_memcpy_async(to + 2 * pitch, p2 + g, 16);
    if (p3) __pipeline_memcpy_async(to + 3 * pitch, p3 + g, 16);
  }
}

// Whether the warp stream can copy tiles of lb (<= 32) lines of L from `arrays` (null entries
// ignored): lines adjacent in memory, a row of lb values a multiple of 16 bytes, every row and
// plane of lines 16-byte aligned relative to line 0, and every array at the same place within
// 16 bytes. Returns that place in values (tiles aligned in memory start that many values before
// line 0 of each plane), or -1.
template <class T>
int warp_tile_shift(const DeviceLines& L, int lb, const T* const* arrays, int count) {
  const auto aligned = [](i64 values) { return values * static_cast<i64>(sizeof(T)) % 16 == 0; };
  if (lb > kWarp || L.stride0 != 1 || !aligned(lb) || !aligned(L.stride)) return -1;
  if (L.count1 > 1 && !aligned(L.stride1)) return -1;
  int shift = -1;
  for (int k = 0; k < count; ++k) {
    if (!arrays[k]) continue;
    const auto at = reinterpret_cast<std::uintptr_t>(arrays[k]);
    if (at % sizeof(T) != 0) return -1;
    const int s = static_cast<int>(at % 16 / sizeof(T));
    if (shift >= 0 && s != shift) return -1;
    shift = s;
  }
  return shift < 0 ? 0 : shift;
}

}  // namespace adi::cuda_backend::kernels
