#pragma once
// CUDA kernels of the two-pass partition solver for one large tridiagonal system. The
// work of a warp is in partition_large_tile.hpp (plain C++, run on the host by the
// tests); these kernels only place warps on tiles and synchronise the phases.
#include <cuda_runtime.h>

#include "solvers/common/partition_large_tile.hpp"

namespace adi::cuda_backend::kernels::large {

using adi::large::Chunks;
using adi::large::LaneCheck;
using adi::large::i64;
using adi::large::LaneRows;
using adi::large::Level;
using adi::large::TileShared;
using adi::large::TileStage;

constexpr unsigned kFull = 0xffffffffu;

// Warps (tiles) per block. Loads straight from global: 4 (18 KiB of shared memory in
// double precision; registers limit the warps per SM). Staged: 2, the stage of a, b, c, d
// adds ~9 KiB per warp and 48 KiB is the static limit.
template <bool Staged>
constexpr int kWarps = Staged ? 2 : 4;
// The last level before the direct one, when it has at most this many tiles, runs in one
// block together with the direct solve (one launch instead of three).
constexpr int kTailWarps = 8;

// Blocks an SM keeps of pass 1 with the fused check at the default chunks (stop 37): 5, as the
// runtime form's kernels reach with 95 (fp64, M = 8) and 93 (fp32, M = 16) registers; left
// alone, nvcc gives the fused form 108 / 100, i.e. 4 blocks (ptxas, sm_90). Capped: 96
// registers, fp64 spills 64 bytes, fp32 4. ADI_LARGE_CHECK_FORM=2 takes the uncapped kernels.
template <class T, int M>
constexpr int kFusedBlocks = sizeof(T) * M == 64 ? 5 : 0;

template <class T, int M, bool Staged>
struct StageFor {
  TileStage<T, M> st;
  __device__ TileStage<T, M>* get() { return &st; }
};
template <class T, int M>
struct StageFor<T, M, false> {
  __device__ TileStage<T, M>* get() { return nullptr; }
};

// C: how lane_reduce checks its rows (partition_large_tile.hpp, LaneCheck; stop 37): runtime
// (stop 32's kernels), or off / fused, chosen on the host from whether the solve is checked.
// MinBlocks: __launch_bounds__'s (0: nvcc's choice; kFusedBlocks).
template <class T, int M, bool Staged, LaneCheck C = LaneCheck::runtime, int MinBlocks = 0>
__global__ void __launch_bounds__(kWarps<Staged> * 32, MinBlocks)
    partition_pass1(Level<T> L0, Chunks ch, i64 tiles) {
  __shared__ TileShared<T> sh[kWarps<Staged>];
  __shared__ StageFor<T, M, Staged> stage[kWarps<Staged>];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const i64 tile = static_cast<i64>(blockIdx.x) * kWarps<Staged> + warp;
  if (tile >= tiles) return;  // the whole warp
  const Level<T> L = C == LaneCheck::off ? L0 : adi::large::checks(L0);
  TileStage<T, M>* st = stage[warp].get();
  if (Staged) {
    adi::large::stage_load<T, M>(L, ch, tile, lane, *st);
    __syncwarp();
  }
  const bool bad = adi::large::lane_reduce<T, M, C>(L, ch, tile, lane, sh[warp], nullptr, st);
  __syncwarp();  // the rows in shared memory are visible to the other lanes
  const bool lanes_bad = __any_sync(kFull, bad);
  bool sub_bad = false;
  if (lane < adi::large::kSubLanes)
    sub_bad = adi::large::sub_reduce<T, C == LaneCheck::fused>(L, ch, tile, lane, sh[warp], false, C != LaneCheck::off && !lanes_bad);
  __syncwarp();
  sub_bad = __any_sync(kFull, sub_bad);
  if (lane == 0) adi::large::tile_reduce<T, C == LaneCheck::fused>(L, ch, tile, sh[warp], C == LaneCheck::off || lanes_bad || sub_bad);
}

// Tiles in reverse order: the first blocks take the end of the system, which pass 1 read
// last and the L2 cache may still hold.
// C: runtime (stop 32's kernel) or off (pass 2 never checks: its flag is null).
template <class T, int M, bool Staged, LaneCheck C = LaneCheck::runtime>
__global__ void __launch_bounds__(kWarps<Staged> * 32) partition_pass2(Level<T> L, Chunks ch, i64 tiles) {
  __shared__ TileShared<T> sh[kWarps<Staged>];
  __shared__ StageFor<T, M, Staged> stage[kWarps<Staged>];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const i64 g = static_cast<i64>(blockIdx.x) * kWarps<Staged> + warp;
  if (g >= tiles) return;
  const i64 tile = tiles - 1 - g;
  TileStage<T, M>* st = stage[warp].get();
  if (Staged) {
    adi::large::stage_load<T, M>(L, ch, tile, lane, *st);
    __syncwarp();
  }
  LaneRows<T, M> keep;
  keep.len = 0;
  adi::large::lane_reduce<T, M, C>(L, ch, tile, lane, sh[warp], &keep, st);
  __syncwarp();
  if (lane < adi::large::kSubLanes) adi::large::sub_reduce<T>(L, ch, tile, lane, sh[warp], true, false);
  __syncwarp();
  if (lane == 0) adi::large::tile_solve<T>(L, ch, tile, sh[warp]);
  __syncwarp();
  if (lane < adi::large::kSubLanes) adi::large::sub_solve<T>(ch, tile, lane, sh[warp]);
  __syncwarp();
  adi::large::lane_solve<T, M>(L, ch, tile, lane, sh[warp], keep, st);
  if (Staged) {
    __syncwarp();
    adi::large::stage_store<T, M>(L, ch, tile, lane, *st);
  }
}

// After the direct solve, the last step of a solve that can raise the flag (pass 2 does not
// check): a raised flag is published to `report` (pinned host memory the plan reads after its
// one synchronisation; raised to the largest value, so the first failing system of a batch)
// and cleared for the next system and solve. The good path reads one device word: no memset
// before the solve and no copy after it (issue 23: they cost +10% of a 2^24 solve, +35% at 2^20).
__device__ inline void publish_flag(unsigned long long* flag, unsigned long long* report) {
  if (flag == nullptr || report == nullptr) return;
  const unsigned long long v = *const_cast<volatile unsigned long long*>(flag);
  if (v == 0) return;
  volatile unsigned long long* r = report;
  if (*r < v) *r = v;  // host memory read and written on the failure path only
  *flag = 0;
}

template <class T>
__global__ void partition_direct(Level<T> L, T* cp, T* z, unsigned long long* report) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    adi::large::direct_solve<T>(adi::large::checks(L), cp, z);
    publish_flag(L.flag, report);
  }
}

// The last two levels in one block: pass 1 of level L (tiles <= kTailWarps, one per warp),
// the direct solve of the next level D, pass 2 of L with the rows kept from pass 1.
template <class T, int M, LaneCheck C = LaneCheck::runtime>
__global__ void __launch_bounds__(kTailWarps * 32)
    partition_tail(Level<T> L0, Chunks ch, i64 tiles, Level<T> D, T* cp, T* z, unsigned long long* report) {
  __shared__ TileShared<T> sh[kTailWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool active = warp < tiles;  // the same for the whole warp
  const Level<T> L = C == LaneCheck::off ? L0 : adi::large::checks(L0);
  LaneRows<T, M> keep;
  keep.len = 0;
  bool bad = false, sub_bad = false;
  if (active) bad = adi::large::lane_reduce<T, M, C>(L, ch, warp, lane, sh[warp], &keep);
  __syncwarp();
  const bool lanes_bad = __any_sync(kFull, bad);
  if (active && lane < adi::large::kSubLanes)
    sub_bad = adi::large::sub_reduce<T, C == LaneCheck::fused>(L, ch, warp, lane, sh[warp], true, C != LaneCheck::off && !lanes_bad);
  __syncwarp();
  sub_bad = __any_sync(kFull, sub_bad);
  if (active && lane == 0)
    adi::large::tile_reduce<T, C == LaneCheck::fused>(L, ch, warp, sh[warp], C == LaneCheck::off || lanes_bad || sub_bad);
  __syncthreads();  // D's rows (global) visible to thread 0
  if (threadIdx.x == 0) {
    adi::large::direct_solve<T>(adi::large::checks(D), cp, z);
    publish_flag(D.flag, report);
  }
  __syncthreads();  // D's solution visible to every warp
  if (active && lane == 0) adi::large::tile_solve<T>(L, ch, warp, sh[warp]);
  __syncwarp();
  if (active && lane < adi::large::kSubLanes) adi::large::sub_solve<T>(ch, warp, lane, sh[warp]);
  __syncwarp();
  if (active) adi::large::lane_solve<T, M>(L, ch, warp, lane, sh[warp], keep);
}

}  // namespace adi::cuda_backend::kernels::large
