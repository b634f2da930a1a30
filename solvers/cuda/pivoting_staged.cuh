#pragma once
// Partial pivoting, one thread per line, with the line staged in shared memory (the
// "staged" route of Kernel::cuda_pivoting, pivoting_thread.cuh; forced only, since it ran at
// 24-26% of copy on an H100 at 256^3: docs/pivoting.md): lines of 2 .. 575 rows (fp32;
// fp64 2 .. 287), not periodic, any layout.
//   1. a block of 128 threads copies the a, b, c, d of its NL lines (NL = 16 fp32, 8 fp64
//      at n = 256: about 64 KB, three blocks per SM) into shared memory with cp.async:
//      along the line for stride-1 lines (X sweeps), across lines otherwise (Y/Z sweeps,
//      interleaved batches), so every global access is coalesced, and every copy of the
//      block is in flight at once (no register holds it);
//   2. thread li < NL eliminates line li with LAPACK gtsv's partial pivoting
//      (common::pivot_step, the thread route's elimination, so the same result bit for bit;
//      both reciprocals taken early, the chain from row to row is latency-bound),
//      U row i-1 going into the slots of row i-1 that step i-1 has consumed (a: u1', b: u2',
//      d: y'; shared bands: two per-line arrays instead), then substitutes back into d;
//   3. the block writes u from d in the order of step 1.
// DRAM sees a copy's 5 values per row; the fill-in never leaves the chip. The other blocks
// of the SM load while one computes (the elimination along a line is sequential).
#include <cuda_pipeline.h>

#include <cstdlib>

#include "adi/base/env_switch.hpp"
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kPivotStagedThreads = 128;
constexpr int kPivotStagedMaxLines = 32;
// Shared memory of one block at most (three blocks per SM on Hopper's 227 KB).
constexpr std::size_t kPivotStagedBytes = 72 * 1024;

// Shared memory of a block of `lines` lines of n rows: per line a, b, c, d (shared bands:
// the line's a, b, c once, per line d and the two U arrays).
inline std::size_t pivoting_staged_smem(i64 n, int lines, bool shared, std::size_t value_size) {
  const std::size_t pad = static_cast<std::size_t>(n) + 1;
  return (shared ? 3 + 3 * static_cast<std::size_t>(lines) : 4 * static_cast<std::size_t>(lines)) * pad * value_size;
}
// Lines per block: the largest power of two <= 32 whose block fits kPivotStagedBytes.
// ADI_PIVOTING_STAGED_KB = 8 .. 220 sets the block's budget in KB instead (measurement only:
// bench_cuda_pivoting times 34 and 140, half and twice the default's lines at n = 256; any other
// value an InvalidArgument).
inline int pivoting_staged_lines(i64 n, bool shared, std::size_t value_size) {
  const std::size_t budget = static_cast<std::size_t>(::adi::detail::env_int(
      "ADI_PIVOTING_STAGED_KB", 8, 220, static_cast<int>(kPivotStagedBytes / 1024))) * 1024;
  int lines = kPivotStagedMaxLines;
  while (lines > 1 && pivoting_staged_smem(n, lines, shared, value_size) > budget) lines /= 2;
  return lines;
}
// At least 8 lines per block (fp32: n <= 575, fp64: n <= 287): fewer lines per SM than
// that leave the sequential eliminations too little company.
constexpr int kPivotStagedMinLines = 8;
inline bool pivoting_staged_fits(const LineSet& l, bool periodic, std::size_t value_size) {
  return !periodic && l.n >= 2 && pivoting_staged_smem(l.n, kPivotStagedMinLines, false, value_size) <= kPivotStagedBytes;
}

// Element (li, g) of the block's lines x rows for thread-order index idx: g fastest for
// stride-1 lines, li fastest otherwise (NL a power of two). One division per thread; the
// loops step by the block size.
struct StagedPlace {
  int li, g;
  __device__ StagedPlace(int idx, bool along, int n, int log_nl) {
    if (along) {
      li = idx / n;
      g = idx - li * n;
    } else {
      li = idx & ((1 << log_nl) - 1);
      g = idx >> log_nl;
    }
  }
  __device__ void next(bool along, int n, int log_nl) {
    if (along) {
      g += kPivotStagedThreads;
      while (g >= n) {
        g -= n;
        ++li;
      }
    } else {
      g += kPivotStagedThreads >> log_nl;
    }
  }
};

template <class T, bool Shared>
__global__ void __launch_bounds__(kPivotStagedThreads)
    pivoting_staged_kernel(DeviceLines L, int log_nl, const T* __restrict__ a, const T* __restrict__ b,
                           const T* __restrict__ c, const T* d, T* u, int* flag) {
  extern __shared__ __align__(16) unsigned char pivot_staged_smem[];
  __shared__ i64 s_off[kPivotStagedMaxLines];
  const int NL = 1 << log_nl;
  const int tid = static_cast<int>(threadIdx.x);
  const int n = static_cast<int>(L.n), pad = n + 1;
  const i64 nl = L.lines(), st = L.stride;
  const i64 line0 = static_cast<i64>(blockIdx.x) * NL;
  const bool along = st == 1;
  // Per line [li][row]: sd (d, then y', then x), sa and sb (a, b, then U's u1', u2'), sc;
  // shared bands: sa, sb, sc one line, and sw1, sw2 per line for U.
  T* const sd = reinterpret_cast<T*>(pivot_staged_smem);
  T* const sa = sd + NL * pad;
  T* const sb = sa + (Shared ? pad : NL * pad);
  T* const sc = sb + (Shared ? pad : NL * pad);
  T* const sw1 = Shared ? sc + pad : sa;
  T* const sw2 = Shared ? sw1 + NL * pad : sb;
  if (tid < NL) s_off[tid] = line0 + tid < nl ? L.offset(line0 + tid) : i64(-1);
  __syncthreads();

  // 1. In: every copy of the block issued before any is waited for.
  const int total = NL * n;
  {
    StagedPlace p(tid, along, n, log_nl);
    for (int idx = tid; idx < total; idx += kPivotStagedThreads, p.next(along, n, log_nl)) {
      const i64 o = s_off[p.li];
      if (o < 0) continue;
      const i64 e = o + p.g * st;
      const int si = p.li * pad + p.g;
      __pipeline_memcpy_async(sd + si, d + e, sizeof(T));
      if (!Shared) {
        __pipeline_memcpy_async(sa + si, a + e, sizeof(T));
        __pipeline_memcpy_async(sb + si, b + e, sizeof(T));
        __pipeline_memcpy_async(sc + si, c + e, sizeof(T));
      }
    }
    if (Shared)
      for (int g = tid; g < n; g += kPivotStagedThreads) {
        __pipeline_memcpy_async(sa + g, a + g, sizeof(T));
        __pipeline_memcpy_async(sb + g, b + g, sizeof(T));
        __pipeline_memcpy_async(sc + g, c + g, sizeof(T));
      }
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
  __syncthreads();

  // 2. One thread per line: partial pivoting (the thread route's elimination).
  bool bad = false;
  if (tid < NL && s_off[tid] >= 0) {
    const int li = tid;
    const int base = li * pad, band = Shared ? 0 : base;
    T* const ld = sd + base;
    T* const w1 = sw1 + base;
    T* const w2 = sw2 + base;
    const T* const la = sa + band;
    const T* const lb = sb + band;
    const T* const lc = sc + band;
    // n >= 2 (pivoting_staged_fits). Each row is loaded one step ahead, before the step's
    // stores (which the compiler may not move loads across: U row i-1 goes over row i-1's
    // slots), so the loads wait for nothing on the chain from row to row.
    common::PivotRow<T> cur{lb[0], lc[0], ld[0]};
    T an = la[1], bn = lb[1], cn = lc[1], dn = ld[1];
    for (int i = 1; i < n; ++i) {
      const T ai = an, bi = bn, ci = i == n - 1 ? T(0) : cn, di = dn;
      if (i + 1 < n) {
        an = la[i + 1];
        bn = lb[i + 1];
        cn = lc[i + 1];
        dn = ld[i + 1];
      }
      const common::PivotOut<T> o = common::pivot_step<T, T, true>(cur, ai, bi, ci, di);
      bad |= bad_pivot(o.r);
      w1[i - 1] = o.u1;
      w2[i - 1] = o.u2;
      ld[i - 1] = o.y;
    }
    const common::PivotOut<T> o = common::pivot_last<T>(cur);
    bad |= bad_pivot(o.r);
    T x1 = o.y, x2 = T(0);
    ld[n - 1] = x1;
    T yn = ld[n - 2], u1n = w1[n - 2], u2n = w2[n - 2];
    for (int i = n - 2; i >= 0; --i) {
      const T yi = yn, u1 = u1n, u2 = u2n;
      if (i > 0) {
        yn = ld[i - 1];
        u1n = w1[i - 1];
        u2n = w2[i - 1];
      }
      const T x = yi - u1 * x1 - u2 * x2;
      x2 = x1;
      x1 = x;
      ld[i] = x;
    }
  }
  __syncthreads();

  // 3. Out, in the order of step 1.
  {
    StagedPlace p(tid, along, n, log_nl);
    for (int idx = tid; idx < total; idx += kPivotStagedThreads, p.next(along, n, log_nl)) {
      const i64 o = s_off[p.li];
      if (o >= 0) u[o + p.g * st] = sd[p.li * pad + p.g];
    }
  }
  report(bad, flag);
}

template <class T>
void launch_pivoting_staged(const LineSet& ls, BandView<T> bands, const T* d, T* u, int* flag,
                            cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  const int NL = pivoting_staged_lines(L.n, bands.shared, sizeof(T));
  int log_nl = 0;
  while ((1 << log_nl) < NL) ++log_nl;
  const std::size_t smem = pivoting_staged_smem(L.n, NL, bands.shared, sizeof(T));
  const unsigned blocks = static_cast<unsigned>((L.lines() + NL - 1) / NL);
  auto launch = [&](auto kernel) {
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<blocks, kPivotStagedThreads, smem, stream>>>(L, log_nl, bands.a, bands.b, bands.c, d, u, flag);
  };
  if (bands.shared)
    launch(pivoting_staged_kernel<T, true>);
  else
    launch(pivoting_staged_kernel<T, false>);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
