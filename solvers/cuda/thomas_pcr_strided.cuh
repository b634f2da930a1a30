#pragma once
// Thomas-PCR hybrid for lines adjacent in memory (Y/Z sweeps, interleaved batches;
// paper 6.3, algorithm 11). A block takes a tile of LB neighbouring lines: each warp
// load instruction reads 32/LB consecutive rows of the LB lines, LB*sizeof(T) bytes
// contiguous per row (whole 32-byte sectors from LB*sizeof(T) >= 32), into per-line
// shared-memory arrays; then each warp solves whole lines with pcr_warp_core.cuh and
// the tile is written back the same way. One read of a, b, c, d, one write of u.
// The per-line array stride is chosen so that the staging writes of a warp (LB lines x
// 32/LB rows) fall in distinct banks.
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_warp_core.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kPcrTileUnroll = 4;

struct PcrTile {
  int log2lb = 3;    // LB = 2^log2lb lines per tile (<= 32)
  int stride = 0;    // shared-memory values between two lines of one array
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
                              const T* __restrict__ b, const T* __restrict__ c, const T* d, T* u, bool periodic,
                              int* flag) {
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
    if (warp == 0) pcr_factorize_shared(sh, a, b, c, periodic, F, bad);
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

template <class T>
std::size_t thomas_pcr_strided_smem(const PcrShape& sh, bool shared, int lb) {
  const std::size_t tile = static_cast<std::size_t>(lb) * pcr_tile_stride(sh, lb, sizeof(T));
  return kWarp * sizeof(i64) + sizeof(T) * (shared ? PcrFactors<T>::values(sh.per_line) + tile : 4 * tile);
}

template <class T>
void launch_thomas_pcr_strided(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic, int* flag,
                               cudaStream_t stream, const Tuning& tuning) {
  const DeviceLines L = to_device(ls);
  const PcrShape sh = pcr_shape(L.n);
  const LaunchLimits lim = launch_limits();
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
