#pragma once
// One large system by overlapping windows (stop 51, issue 16: one large system at >= 50% of copy).
// LargeKernel::truncated's default form since stop 51 (ADI_LARGE_WINDOWS=0 runs stop 44's; large_truncated_solve
// in partition_large.cu; docs/large_tridiagonal.md "GPU, the window form"): the same truncation as the
// single-system kernel of thomas_truncated.cuh (a cut's error dies with the decay of the rows next to it,
// refused unless that decay is below kSpikeTol), solved by the lean X kernel's warp instead of a thread
// per part (H200 run s51/7, 2^24: fp64 0.417 -> 0.297 ms, fp32 0.287 -> 0.139 ms).
//
// The system is cut into windows of kWindowRows = 512 rows (32 segments of 16: thomas_pcr_lean_kernel's
// shape) that overlap by 2G rows (G = SpikeYShape<T>::G, 40 in fp64, 24 in fp32): window w holds the
// system's rows [w K - G, w K - G + 512) with K = 512 - 2G, rows outside [0, n) identity rows (b = 1,
// a = c = d = 0, as common::PaddedBand), and keeps its middle K rows [w K, w K + K). A warp stages its
// window's a, b, c, d with coalesced loads (lane l rows 32 j + l), cuts it (a of its first row and c
// of its last read as 0: pcr_line_unrolled's system is the window's), solves it by the Thomas-PCR
// hybrid in shared memory (pcr_line_unrolled<T, 16, true>) and writes its K rows of u. Traffic: a, b,
// c, d read 512 / K times (fp64 1.19, fp32 1.10), u written once: no factor round trip and no
// hand-over of rows through shared memory per thread.
//
// Checked where a window is cut (a neighbour's row beyond it): lane 0 runs Thomas's elimination
// from the window's first row over the G + 1 rows up to the first kept row, as spike_y_part's forward
// cut (the product of |a_i / pivot_i|), lane 1 the mirror from its last row (bottom-up elimination,
// the product of |c_i / pivot_i|, the decay of a perturbation at the cut towards the kept rows), in
// step and in float (a threshold test); each product must be at or below kSpikeTol. With the hybrid's
// own checks (zero pivots, a segment multiplier past the growth bound: pcr_segment_registers.cuh) and
// a non-finite u, a failed check sets *flag (then u is not the solution; the plan re-solves by the
// partition).
#include "solvers/common/partition_core.hpp"
#include "solvers/common/spike_y.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_segment_registers.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kWindowRows = 512;  // 32 segments of 16 rows
template <class T>
constexpr int window_keep_rows() {
  return kWindowRows - 2 * common::SpikeYShape<T>::G;
}

template <class T>
__global__ void __launch_bounds__(256, 2)
    thomas_pcr_window_kernel(PcrShape sh, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                             const T* __restrict__ d, T* __restrict__ u, i64 n, i64 windows, int* flag) {
  constexpr int M = 16, P = kWarp * (M + 1), J = kWarp + kWarp / M;  // slots a window array; slot step of j
  constexpr int SG = 8;                                               // rows of each array staged at a time
  constexpr int G = common::SpikeYShape<T>::G, K = window_keep_rows<T>();
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  T* buf = reinterpret_cast<T*>(pcr_smem) + warp * 4 * P;  // d, a, b, c at +0, P, 2P, 3P
  T* mine = buf + lane + lane / M;                          // this lane's slot of row j: mine[J j]
  T *sd = buf, *sa = buf + P, *sb = buf + 2 * P, *sc = buf + 3 * P;
  auto pos = [](int r) { return r + r / M; };
  bool bad = false;
  T sum = T(0);
  const i64 step = static_cast<i64>(gridDim.x) * W;
  const T* src[4] = {d, a, b, c};
  for (i64 w = static_cast<i64>(blockIdx.x) * W + warp; w < windows; w += step) {
    const i64 base = w * K - G;  // the window's row 0 in the system
    // Inner windows (rows 1 .. n - 2 only): one base pointer and immediate offsets, no test per value.
    const bool inner = base >= 1 && base + kWindowRows <= n - 1;
    stage_line_rows<T, M, SG>(mine, [&](int g, T(&v)[4][SG]) {
      if (inner) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const T* p = src[k] + base + lane;
#pragma unroll
          for (int jj = 0; jj < SG; ++jj) v[k][jj] = p[(g + jj) * kWarp];
        }
      } else {
#pragma unroll
        for (int jj = 0; jj < SG; ++jj) {
          const i64 o = base + (g + jj) * kWarp + lane;
          const bool in = o >= 0 && o < n;
          v[0][jj] = in ? d[o] : T(0);
          v[1][jj] = in && o >= 1 ? a[o] : T(0);
          v[2][jj] = in ? b[o] : T(1);
          v[3][jj] = in && o < n - 1 ? c[o] : T(0);
        }
      }
    });
    __syncwarp();
    // The cuts' decay, lanes 0 and 1 in step (one loop): lane 0 Thomas's forward elimination from the
    // cut before row 0 over rows 0 .. G (the product of |a_r / pivot_r|), lane 1 the mirror from the cut
    // after row 511 over rows 511 .. 511 - G (|c_r / pivot_r|, bottom-up). In float, the reciprocals
    // rounded: a threshold test (kSpikeTol, 1e-3 epsilon of T, is a normal float).
    if (lane < 2 && (lane == 0 ? base > 0 : base + kWindowRows < n)) {
      const T* near = lane == 0 ? sa : sc;  // the coupling towards the cut
      const T* far = lane == 0 ? sc : sa;   // ... and away from it
      float cs = 0.f, prod = 1.f;
      for (int k = 0; k <= G; ++k) {
        const int r = lane == 0 ? k : kWindowRows - 1 - k;
        const float nr = static_cast<float>(near[pos(r)]);
        const float inv = __frcp_rn(common::thomas_pivot(k == 0 ? 0.f : nr, static_cast<float>(sb[pos(r)]), cs));
        prod = prod * fabsf(nr * inv);
        cs = static_cast<float>(far[pos(r)]) * inv;
      }
      if (!(prod <= static_cast<float>(common::kSpikeTol<T>))) bad = true;
    }
    __syncwarp();
    if (lane == 0) {  // the window's system: its first row's a and its last row's c cut
      sa[0] = T(0);
      sc[pos(kWindowRows - 1)] = T(0);
    }
    __syncwarp();
    pcr_line_unrolled<T, M, true>(sh, sa, sb, sc, sd, false, bad);
    __syncwarp();
    // The kept rows G .. G + K - 1 (those below n); out indexed from the window's row 0 (base >= -G).
    T* out = u + (base + lane);
    const bool tail = base + kWindowRows > n;
#pragma unroll
    for (int jr = 0; jr < M; ++jr) {
      const int r = jr * kWarp + lane;
      if (r >= G && r < G + K && (!tail || base + r < n)) {
        const T x = mine[jr * J];
        out[jr * kWarp] = x;
        sum = sum + x;
      }
    }
    __syncwarp();
  }
  if (!(sum - sum == T(0))) bad = true;
  report(bad, flag);
}

// Enqueues the window kernel on one system of n rows (u must not alias d: a window reads G rows past
// its kept ones, which its neighbours write); *flag set where a window refuses.
template <class T>
void launch_thomas_pcr_window_system(i64 n, const T* a, const T* b, const T* c, const T* d, T* u, int* flag,
                                     cudaStream_t stream) {
  if (n <= 0) return;
  constexpr int warps = 4;
  const i64 windows = (n + window_keep_rows<T>() - 1) / window_keep_rows<T>();
  const PcrShape sh = pcr_shape(kWindowRows);
  const std::size_t smem = sizeof(T) * 4 * warps * static_cast<std::size_t>(sh.per_line);
  const unsigned grid =
      persistent_grid(thomas_pcr_window_kernel<T>, warps * kWarp, smem, (windows + warps - 1) / warps, launch_limits());
  thomas_pcr_window_kernel<T><<<grid, warps * kWarp, smem, stream>>>(sh, a, b, c, d, u, n, windows, flag);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
