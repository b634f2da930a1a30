#pragma once
// Partial pivoting, two threads per line from both ends, U kept on chip (the "pair" route of
// Kernel::cuda_pivoting, pivoting_thread.cuh; forced only, ADI_PIVOTING_ROUTE=pair, until
// measured): not periodic, lines whose U fits a warp's shared memory, meant for Y/Z sweeps
// (lines adjacent in memory; elsewhere it runs, uncoalesced).
//
// The thread route (pivoting_thread_line.cuh) moves 11 values a row: U's three values per row
// (y', u1', u2') go to memory and come back. The staged route kept them on chip but held the
// whole line in shared memory and ran one chain per line, so an SM ran 24-48 chains. Here a
// warp takes 16 lines: lane l < 16 eliminates line l top-down over rows 0 .. h (h = (n-2)/2),
// lane l + 16 the same line bottom-up over rows n-1 .. h+1 (the same step on the reversed
// rows: a and c exchanged), each with LAPACK gtsv's partial pivoting (common::pivot_step) and
// its U rows in shared memory, [slot][value][lane]. The rows are read straight from global
// memory, Chunk rows a step ahead of the chain (the lanes of a half-warp on neighbouring lines:
// one coalesced segment per row and array). Then the bottom lane hands its current row (its
// entries in columns h+1, h and its right-hand side) to the top lane, which eliminates column
// h and h+1 against it (pivot_step with c = 0, pivot_last), and hands x_h, x_{h+1} back; both
// substitute outward. This is Gaussian elimination with partial pivoting of the matrix with
// its columns taken in the order 0 .. h-1, n-1 .. h+2, h, h+1 (the top and bottom sweeps touch
// disjoint rows), so its growth is bounded as the thread route's; rows 0 .. h pivot exactly as
// LAPACK's. DRAM traffic: a copy's 5 values per row (YInU: y' goes to u and comes back, 7,
// and a third less shared memory).
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kPivotPairLines = 16;  // lines per warp (one warp per block)
// Shared memory a block may take: Hopper grants 227 KB; lines that need more take another route.
constexpr std::size_t kPivotPairMaxBytes = 200 * 1024;

// U slots a lane keeps: the bottom lane's n - 2 - h steps (the top lane's h are at most as many).
__host__ __device__ inline int pivot_pair_slots(i64 n) {
  return n >= 2 ? static_cast<int>(n - 2 - (n - 2) / 2) : 0;
}
inline std::size_t pivoting_pair_smem(i64 n, bool y_in_u, std::size_t value_size) {
  return static_cast<std::size_t>(pivot_pair_slots(n)) * (y_in_u ? 2 : 3) * kWarp * value_size;
}
inline bool pivoting_pair_fits(const LineSet& l, bool periodic, std::size_t value_size) {
  return !periodic && l.n >= 1 && l.n <= 0x7fffffff && pivoting_pair_smem(l.n, false, value_size) <= kPivotPairMaxBytes;
}

template <class T, bool Shared, int Chunk, bool YInU>
__global__ void __launch_bounds__(kWarp)
    pivoting_pair_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                         const T* d, T* u, int* flag) {
  extern __shared__ __align__(16) unsigned char pivot_pair_smem[];
  constexpr int V = YInU ? 2 : 3;  // values a slot keeps: u1', u2' (and y')
  T* const sw = reinterpret_cast<T*>(pivot_pair_smem);
  const int lane = static_cast<int>(threadIdx.x);
  const bool top = lane < kPivotPairLines;
  const i64 nl = L.lines();
  const i64 mine = static_cast<i64>(blockIdx.x) * kPivotPairLines + (lane & (kPivotPairLines - 1));
  const bool valid = mine < nl;  // lanes past the last line repeat it and store nothing
  const i64 line = valid ? mine : nl - 1;
  const int n = static_cast<int>(L.n);
  const i64 st = L.stride, off = L.offset(line);
  auto at = [&](int i) { return off + static_cast<i64>(i) * st; };
  auto co = [&](const T* q, int i) { return Shared ? ldg(q + i) : q[at(i)]; };
  auto slot = [&](int k, int q) -> T& { return sw[(k * V + q) * kWarp + lane]; };
  bool bad = false;

  if (n == 1) {
    if (top && valid) {
      const common::PivotOut<T> o = common::pivot_last<T>(common::PivotRow<T>{co(b, 0), T(0), d[at(0)]});
      bad = bad_pivot(o.r);
      u[at(0)] = o.y;
    }
    report(bad, flag);
    return;
  }
  const int h = (n - 2) / 2;
  const int K = n - 2 - h;              // the loop's steps: the bottom lane's (the top lane's h <= K)
  const int steps = top ? h : K;
  const T* const pa = top ? a : c;      // the coupling behind the sweep (bottom-up: c)
  const T* const pc = top ? c : a;      // and ahead of it
  auto row_met = [&](int k) { return top ? k + 1 : n - 2 - k; };  // the row step k meets
  auto row_u = [&](int k) { return top ? k : n - 1 - k; };        // U's row of step k
  const int r0 = top ? 0 : n - 1;
  common::PivotRow<T> cur{co(b, r0), co(pc, r0), d[at(r0)]};

  // Forward: Chunk rows in registers a chunk ahead of the chain.
  T na[Chunk], nb[Chunk], nc[Chunk], nd[Chunk];
  auto load = [&](int k0) {
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const int k = k0 + j;
      if (k < steps) {
        const int r = row_met(k);
        na[j] = co(pa, r);
        nb[j] = co(b, r);
        nc[j] = co(pc, r);
        nd[j] = d[at(r)];
      }
    }
  };
  load(0);
  for (int k0 = 0; k0 < K; k0 += Chunk) {
    T ca[Chunk], cb[Chunk], cc[Chunk], cd[Chunk];
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      ca[j] = na[j];
      cb[j] = nb[j];
      cc[j] = nc[j];
      cd[j] = nd[j];
    }
    load(k0 + Chunk);
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const int k = k0 + j;
      if (k < steps) {
        const common::PivotOut<T> o = common::pivot_step<T, T, true>(cur, ca[j], cb[j], cc[j], cd[j]);
        bad |= bad_pivot(o.r);
        slot(k, 0) = o.u1;
        slot(k, 1) = o.u2;
        if constexpr (YInU) {
          if (valid) u[at(row_u(k))] = o.y;
        } else {
          slot(k, 2) = o.y;
        }
      }
    }
  }

  // The middle: the bottom lane's current row (columns h+1: b, h: c) meets the top lane's.
  const int other = lane ^ kPivotPairLines;
  const T mb = __shfl_sync(kFullMask, cur.b, other), mc = __shfl_sync(kFullMask, cur.c, other),
          md = __shfl_sync(kFullMask, cur.d, other);
  T xh = T(0), xh1 = T(0);
  if (top) {
    const common::PivotOut<T> o = common::pivot_step<T, T, true>(cur, mc, mb, T(0), md);  // U row h
    const common::PivotOut<T> l = common::pivot_last<T>(cur);                              // U row h+1
    bad |= bad_pivot(o.r) || bad_pivot(l.r);
    xh1 = l.y;
    xh = o.y - o.u1 * xh1;
    if (valid) {
      u[at(h)] = xh;
      u[at(h + 1)] = xh1;
    }
  }
  const T sh = __shfl_sync(kFullMask, xh, lane & (kPivotPairLines - 1)),
          sh1 = __shfl_sync(kFullMask, xh1, lane & (kPivotPairLines - 1));
  // x of the two rows beyond the next one out: top (x_{k+1}, x_{k+2}), bottom (x_{k-1}, x_{k-2}).
  T x1 = top ? sh : sh1, x2 = top ? sh1 : sh;

  // Backward, outward from the middle, Chunk slots a chunk ahead.
  T py[Chunk], p1[Chunk], p2[Chunk];
  auto load_back = [&](int k0) {  // slots K-1-k0 .. K-1-k0-Chunk+1
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const int k = K - 1 - k0 - j;
      if (k >= 0 && k < steps) {
        p1[j] = slot(k, 0);
        p2[j] = slot(k, 1);
        if constexpr (YInU)
          py[j] = u[at(row_u(k))];
        else
          py[j] = slot(k, 2);
      }
    }
  };
  load_back(0);
  for (int k0 = 0; k0 < K; k0 += Chunk) {
    T cy[Chunk], c1[Chunk], c2[Chunk];
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      cy[j] = py[j];
      c1[j] = p1[j];
      c2[j] = p2[j];
    }
    load_back(k0 + Chunk);
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const int k = K - 1 - k0 - j;
      if (k >= 0 && k < steps) {
        const T x = cy[j] - c1[j] * x1 - c2[j] * x2;
        x2 = x1;
        x1 = x;
        if (valid) u[at(row_u(k))] = x;
      }
    }
  }
  report(bad && valid, flag);
}

// Forms, for measurement (ADI_PIVOTING_PAIR_FORM, read at each solve): "shared" (default: U's
// three values in shared memory) or "yu" (y' through u); ADI_PIVOTING_PAIR_CHUNK: "small"
// (default: 8 rows fp32, 4 fp64 a chunk) or "large" (twice).
template <class T, bool Shared, bool YInU>
void launch_pivoting_pair_form(const DeviceLines& L, BandView<T> bands, const T* d, T* u, int* flag,
                               cudaStream_t stream, bool large_chunk) {
  constexpr int small = sizeof(T) == 4 ? 8 : 4;
  const std::size_t smem = pivoting_pair_smem(L.n, YInU, sizeof(T));
  const unsigned blocks = static_cast<unsigned>((L.lines() + kPivotPairLines - 1) / kPivotPairLines);
  auto launch = [&](auto kernel) {
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<blocks, kWarp, smem, stream>>>(L, bands.a, bands.b, bands.c, d, u, flag);
  };
  if (large_chunk)
    launch(pivoting_pair_kernel<T, Shared, 2 * small, YInU>);
  else
    launch(pivoting_pair_kernel<T, Shared, small, YInU>);
}

template <class T>
void launch_pivoting_pair(const LineSet& ls, BandView<T> bands, const T* d, T* u, int* flag, cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  if (L.lines() == 0) return;
  const bool yu = ::adi::detail::env_choice("ADI_PIVOTING_PAIR_FORM", {"shared", "yu"}, 0) == 1;
  const bool large = ::adi::detail::env_choice("ADI_PIVOTING_PAIR_CHUNK", {"small", "large"}, 0) == 1;
  if (bands.shared) {
    if (yu)
      launch_pivoting_pair_form<T, true, true>(L, bands, d, u, flag, stream, large);
    else
      launch_pivoting_pair_form<T, true, false>(L, bands, d, u, flag, stream, large);
  } else {
    if (yu)
      launch_pivoting_pair_form<T, false, true>(L, bands, d, u, flag, stream, large);
    else
      launch_pivoting_pair_form<T, false, false>(L, bands, d, u, flag, stream, large);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
