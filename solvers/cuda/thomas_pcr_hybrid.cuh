#pragma once
// Thomas-PCR hybrid along contiguous lines (paper 6.3, algorithm 10): one warp per
// line. The warp reads the line with coalesced loads (32 consecutive values per
// instruction, any alignment, no vector-width assumption) straight into the padded
// shared-memory layout of pcr_warp_core.cuh, so the "transpose" of algorithm 10 is
// free, solves it there and writes u back coalesced: one read of a, b, c, d and one
// write of u, nothing else in global memory.
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_warp_core.cuh"

namespace adi::cuda_backend::kernels {

// Rows a lane loads before its first shared-memory store: 4 arrays x 8 rows = 32 loads
// in flight per lane, a whole 256-row line per warp.
constexpr int kPcrStageUnroll = 8;

template <class T, bool Shared>
__global__ void __launch_bounds__(256)
    thomas_pcr_kernel(DeviceLines L, PcrShape sh, const T* __restrict__ a, const T* __restrict__ b,
                      const T* __restrict__ c, const T* d, T* u, bool periodic, int* flag) {
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  T* smem = reinterpret_cast<T*>(pcr_smem);
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  const int P = sh.per_line, n = sh.n;
  const i64 nl = L.lines(), st = L.stride;
  bool bad = false;
  PcrFactors<T> F{};
  T *sa = nullptr, *sb = nullptr, *sc = nullptr, *sd = nullptr;
  if (Shared) {
    F = PcrFactors<T>::carve(smem, P);
    sd = smem + PcrFactors<T>::values(P) + warp * P;
    if (warp == 0) pcr_factorize_shared(sh, a, b, c, periodic, F, bad);
    __syncthreads();
  } else {
    sa = smem + warp * 4 * P;
    sb = sa + P;
    sc = sb + P;
    sd = sc + P;
  }
  for (i64 line = static_cast<i64>(blockIdx.x) * W + warp; line < nl; line += static_cast<i64>(gridDim.x) * W) {
    const i64 off = L.offset(line);
    for (int r0 = 0; r0 < n; r0 += kPcrStageUnroll * kWarp) {
      T va[kPcrStageUnroll], vb[kPcrStageUnroll], vc[kPcrStageUnroll], vd[kPcrStageUnroll];
#pragma unroll
      for (int k = 0; k < kPcrStageUnroll; ++k) {
        const int r = r0 + k * kWarp + lane;
        if (r < n) {
          const i64 o = off + r * st;
          vd[k] = d[o];
          if (!Shared) {
            va[k] = (r == 0 && !periodic) ? T(0) : a[o];
            vb[k] = b[o];
            vc[k] = (r == n - 1 && !periodic) ? T(0) : c[o];
          }
        }
      }
#pragma unroll
      for (int k = 0; k < kPcrStageUnroll; ++k) {
        const int r = r0 + k * kWarp + lane;
        if (r < n) {
          const int p = sh.pos(r);
          sd[p] = vd[k];
          if (!Shared) {
            sa[p] = va[k];
            sb[p] = vb[k];
            sc[p] = vc[k];
          }
        }
      }
    }
    __syncwarp();
    if (Shared)
      pcr_line_shared(sh, F, sd);
    else
      pcr_line(sh, sa, sb, sc, sd, periodic, bad);
    __syncwarp();
#pragma unroll 4
    for (int r = lane; r < n; r += kWarp) u[off + r * st] = sd[sh.pos(r)];
    __syncwarp();
  }
  report(bad, flag);
}

// Shared memory of one block of W warps.
template <class T>
std::size_t thomas_pcr_smem(const PcrShape& sh, bool shared, int warps) {
  const std::size_t per = static_cast<std::size_t>(sh.per_line);
  return sizeof(T) * (shared ? PcrFactors<T>::values(sh.per_line) + warps * per : warps * 4 * per);
}

template <class T>
void launch_thomas_pcr(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic, int* flag,
                       cudaStream_t stream, const Tuning& tuning) {
  const DeviceLines L = to_device(ls);
  const PcrShape sh = pcr_shape(L.n);
  const LaunchLimits lim = launch_limits();
  // Default: 4 warps (Bands: 4 line arrays each) or 8 warps (SharedBands: d only, the
  // factors shared by the block). Fewer when the lines are long.
  int warps = tuning.warps_per_block > 0 ? tuning.warps_per_block : (bands.shared ? 8 : 4);
  while (warps > 1 && thomas_pcr_smem<T>(sh, bands.shared, warps) > lim.smem_optin) warps /= 2;
  const std::size_t smem = thomas_pcr_smem<T>(sh, bands.shared, warps);
  if (smem > lim.smem_optin)
    throw Unsupported("cuda_thomas_pcr: a line of n = " + std::to_string(L.n) + " needs " +
                      std::to_string(smem) + " bytes of shared memory, the device allows " +
                      std::to_string(lim.smem_optin));
  const i64 work = (L.lines() + warps - 1) / warps;
  const int threads = warps * kWarp;
  if (bands.shared) {
    auto k = thomas_pcr_kernel<T, true>;
    const unsigned grid = persistent_grid(k, threads, smem, work, lim);
    k<<<grid, threads, smem, stream>>>(L, sh, bands.a, bands.b, bands.c, d, u, periodic, flag);
  } else {
    auto k = thomas_pcr_kernel<T, false>;
    const unsigned grid = persistent_grid(k, threads, smem, work, lim);
    k<<<grid, threads, smem, stream>>>(L, sh, bands.a, bands.b, bands.c, d, u, periodic, flag);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
