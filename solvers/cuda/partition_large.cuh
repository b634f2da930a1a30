#pragma once
// CUDA kernels of the two-pass partition solver for one large tridiagonal system. The
// work of a warp is in partition_large_tile.hpp (plain C++, run on the host by the
// tests); these kernels only place warps on tiles and synchronise the phases.
#include <cuda_runtime.h>

#include "solvers/cuda/partition_large_tile.hpp"

namespace adi::cuda_backend::kernels::large {

using adi::large::Chunks;
using adi::large::i64;
using adi::large::LaneRows;
using adi::large::Level;
using adi::large::TileShared;

// 4 warps (tiles) per block: 14 KiB of shared memory in double precision, so the
// register file, not shared memory, limits the warps per SM.
constexpr int kWarpsPerBlock = 4;
constexpr int kBlockThreads = kWarpsPerBlock * 32;

template <class T, int M>
__global__ void __launch_bounds__(kBlockThreads) partition_pass1(Level<T> L0, Chunks ch, i64 tiles) {
  __shared__ TileShared<T> sh[kWarpsPerBlock];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const i64 tile = static_cast<i64>(blockIdx.x) * kWarpsPerBlock + warp;
  if (tile >= tiles) return;  // the whole warp
  const Level<T> L = adi::large::checks(L0);
  const bool bad = adi::large::lane_reduce<T, M>(L, ch, tile, lane, sh[warp], nullptr);
  __syncwarp();  // the rows in shared memory are visible to the other lanes
  const bool lanes_bad = __any_sync(0xffffffffu, bad);
  bool sub_bad = false;
  if (lane < adi::large::kSubLanes)
    sub_bad = adi::large::sub_reduce<T>(L, ch, tile, lane, sh[warp], false, !lanes_bad);
  __syncwarp();
  sub_bad = __any_sync(0xffffffffu, sub_bad);
  if (lane == 0) adi::large::tile_reduce<T>(L, ch, tile, sh[warp], lanes_bad || sub_bad);
}

template <class T, int M>
__global__ void __launch_bounds__(kBlockThreads) partition_pass2(Level<T> L, Chunks ch, i64 tiles) {
  __shared__ TileShared<T> sh[kWarpsPerBlock];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const i64 tile = static_cast<i64>(blockIdx.x) * kWarpsPerBlock + warp;
  if (tile >= tiles) return;
  LaneRows<T, M> keep;
  keep.len = 0;
  adi::large::lane_reduce<T, M>(L, ch, tile, lane, sh[warp], &keep);
  __syncwarp();
  if (lane < adi::large::kSubLanes) adi::large::sub_reduce<T>(L, ch, tile, lane, sh[warp], true, false);
  __syncwarp();
  if (lane == 0) adi::large::tile_solve<T>(L, ch, tile, sh[warp]);
  __syncwarp();
  if (lane < adi::large::kSubLanes) adi::large::sub_solve<T>(ch, tile, lane, sh[warp]);
  __syncwarp();
  adi::large::lane_solve<T, M>(L, ch, tile, lane, sh[warp], keep);
}

template <class T>
__global__ void partition_direct(Level<T> L, T* cp, T* z) {
  if (threadIdx.x == 0 && blockIdx.x == 0) adi::large::direct_solve<T>(adi::large::checks(L), cp, z);
}

}  // namespace adi::cuda_backend::kernels::large
