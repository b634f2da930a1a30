#pragma once
// Partial pivoting for lines of 34 .. 272 rows (the 256^3 sweeps, every direction), not
// periodic: the partition method of solvers/common/pivoting_core.hpp inside one thread
// block, so nothing but u leaves the chip. A block takes 32 lines in fp32, 16 in fp64
// (threadIdx.x: the line) and P = ceil(n / 17) <= 16 partitions per line (threadIdx.y):
//   1. thread (line, k) eliminates its partition's block top-down and bottom-up with
//      partial pivoting (common::partition_first / partition_last) and leaves its ends in
//      shared memory; after a barrier it forms its separator's reduced row;
//   2. one thread per line solves the line's reduced system (P rows, shared memory) by
//      partial pivoting;
//   3. thread (line, k) solves its block again with its two separators known
//      (common::partition_solve) and writes u.
// The block first copies its lines' a, b, c, d into shared memory (dynamic, 4 x lines x
// (17 P + 1) values: 137 KB at n = 272), all its threads on consecutive addresses: along
// the line for stride-1 lines (X sweeps), across lines otherwise (Y/Z sweeps, interleaved
// batches); steps 1 and 3 read the rows from there, and u goes out through the same tile in
// the same order. So every global access is coalesced and DRAM sees a copy's 5 values per
// row. (One block per SM either way: the registers of 512 fp32 / 256 fp64 threads fill it.)
// A weak partition (common::partition_weak_pivot) anywhere in the block sends the block's
// lines, before anything is written, to exact partial pivoting along each line
// (pivoting_line, the thread route's loop, U's rows in the workspace).
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/pivoting_thread_line.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kPivotBlockRows = 17;   // rows per partition, as the partition route
constexpr int kPivotBlockParts = 16;  // partitions per line at most: n <= 272
// Lines per block: 32 (fp32: 118 registers, no spills, at the 128 that 512 threads allow) or
// 16 (fp64: with 32 lines the 128-register cap spilled ~0.6 KB per thread; 256 threads
// allow 255).
template <class T>
constexpr int pivot_block_lines() {
  return sizeof(T) == 4 ? 32 : 16;
}

inline bool pivoting_block_fits(const LineSet& l, bool periodic) {
  return !periodic && l.n >= 2 * kPivotBlockRows && l.n <= kPivotBlockParts * kPivotBlockRows;
}

// The fall-back out of line, so its registers do not add to the partition path's.
template <class T, int Chunk, bool Shared>
__device__ __noinline__ bool pivoting_block_fallback(const DeviceLines& L, i64 line, const T* a, const T* b,
                                                     const T* c, const T* d, T* u, T* w1, T* w2) {
  return pivoting_line<T, Chunk, Shared>(L, line, a, b, c, d, u, w1, w2, nullptr, nullptr, false);
}

template <class T, int Chunk, bool Shared>
__global__ void __launch_bounds__(pivot_block_lines<T>() * kPivotBlockParts)
    pivoting_block_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                          const T* __restrict__ c, const T* d, T* u, T* __restrict__ w1, T* __restrict__ w2,
                          int* flag) {
  constexpr int M = kPivotBlockRows;
  constexpr int NL = pivot_block_lines<T>();
  // Per (partition, line): the block's last-row values, the reduced row, its solution and
  // the reduced elimination's U rows.
  __shared__ T s_yL[kPivotBlockParts][NL], s_vL[kPivotBlockParts][NL], s_wL[kPivotBlockParts][NL];
  __shared__ T s_A[kPivotBlockParts][NL], s_B[kPivotBlockParts][NL], s_C[kPivotBlockParts][NL],
      s_D[kPivotBlockParts][NL];
  __shared__ T s_X[kPivotBlockParts][NL], s_U1[kPivotBlockParts][NL], s_U2[kPivotBlockParts][NL];
  __shared__ int s_weak;
  __shared__ i64 s_off[NL];
  extern __shared__ unsigned char pivot_block_rows[];
  const int lane = static_cast<int>(threadIdx.x), k = static_cast<int>(threadIdx.y);
  const int P = static_cast<int>(blockDim.y);
  const i64 nl = L.lines(), n = L.n, st = L.stride;
  const i64 line = static_cast<i64>(blockIdx.x) * NL + lane;
  const bool valid = line < nl;
  // The rows: [line][row] with a pad (an odd stride spreads a column over the banks);
  // shared bands keep one line's a, b, c.
  const int rows = P * M, pad = rows + 1;
  T* const sa = reinterpret_cast<T*>(pivot_block_rows);
  T* const sb = sa + NL * pad;
  T* const sc = sb + NL * pad;
  T* const sd = sc + NL * pad;
  if (k == 0) s_off[lane] = valid ? L.offset(line) : i64(-1);
  if (lane == 0 && k == 0) s_weak = 0;
  __syncthreads();
  const int tid = k * NL + lane, nthreads = NL * P;
  // Element idx of the block's lines x rows in the order that keeps global accesses coalesced.
  auto place = [&](int idx, int& li, int& g) {
    if (st == 1) {
      li = idx / rows;
      g = idx - li * rows;
    } else {
      g = idx / NL;
      li = idx - g * NL;
    }
  };
  for (int idx = tid; idx < NL * rows; idx += nthreads) {
    int li, g;
    place(idx, li, g);
    const i64 o = s_off[li];
    const bool in = o >= 0 && g < n;
    const i64 e = o + g * st;
    const int si = li * pad + g;
    if (Shared) {
      if (li == 0) {
        sa[g] = g < n && g > 0 ? a[g] : T(0);
        sb[g] = g < n ? b[g] : T(1);
        sc[g] = g < n - 1 ? c[g] : T(0);
      }
    } else {
      sa[si] = in && g > 0 ? a[e] : T(0);
      sb[si] = in ? b[e] : T(1);
      sc[si] = in && g < n - 1 ? c[e] : T(0);
    }
    sd[si] = in ? d[e] : T(0);
  }
  __syncthreads();
  auto row = [&](int i) {
    const int g = k * M + i, si = lane * pad + g, ci = Shared ? g : si;
    return common::PartitionRowValues<T>{sa[ci], sb[ci], sc[ci], sd[si]};
  };

  bool bad = false, weak = false;
  T yF, vF, wF, yL, vL, wL;
  common::partition_first<T, M>(row, yF, vF, wF, bad, weak);
  common::partition_last<T, M>(row, yL, vL, wL, bad, weak);
  s_yL[k][lane] = yL;
  s_vL[k][lane] = vL;
  s_wL[k][lane] = wL;
  if (weak && valid) s_weak = 1;
  __syncthreads();
  const bool first = k == 0;
  const common::PartitionRowValues<T> r =
      common::partition_reduced_row<T>(row(0), first ? T(0) : s_yL[k - 1][lane], first ? T(0) : s_vL[k - 1][lane],
                                       first ? T(0) : s_wL[k - 1][lane], yF, vF, wF);
  s_A[k][lane] = r.a;
  s_B[k][lane] = r.b;
  s_C[k][lane] = r.c;
  s_D[k][lane] = r.d;
  __syncthreads();

  if (s_weak) {  // uniform over the block: nothing written yet
    // Only the fall-back's pivots count: a singular partition block (a non-finite 1/pivot
    // above, always also weak) says nothing about the line.
    const bool fb = k == 0 && valid && pivoting_block_fallback<T, Chunk, Shared>(L, line, a, b, c, d, u, w1, w2);
    report(fb, flag);
    return;
  }
  if (k == 0) {  // the reduced system of this lane's line: P rows
    common::PivotRow<T> cur{s_B[0][lane], s_C[0][lane], s_D[0][lane]};
    for (int i = 1; i < P; ++i) {
      const common::PivotOut<T> o =
          common::pivot_step<T>(cur, s_A[i][lane], s_B[i][lane], i == P - 1 ? T(0) : s_C[i][lane], s_D[i][lane]);
      bad |= valid && bad_pivot(o.r);
      s_U1[i - 1][lane] = o.u1;
      s_U2[i - 1][lane] = o.u2;
      s_X[i - 1][lane] = o.y;
    }
    const common::PivotOut<T> o = common::pivot_last<T>(cur);
    bad |= valid && bad_pivot(o.r);
    T x1 = o.y, x2 = T(0);
    s_X[P - 1][lane] = x1;
    for (int i = P - 2; i >= 0; --i) {
      const T x = s_X[i][lane] - s_U1[i][lane] * x1 - s_U2[i][lane] * x2;
      x2 = x1;
      x1 = x;
      s_X[i][lane] = x;
    }
  }
  __syncthreads();
  T x[M];
  common::partition_solve<T, M>(row, s_X[k][lane], k + 1 < P ? s_X[k + 1][lane] : T(0), x, bad);
  // x over this thread's own rows of d (no other thread reads them), then out in the
  // coalesced order.
#pragma unroll
  for (int i = 0; i < M; ++i) sd[lane * pad + k * M + i] = x[i];
  __syncthreads();
  for (int idx = tid; idx < NL * rows; idx += nthreads) {
    int li, g;
    place(idx, li, g);
    const i64 o = s_off[li];
    if (o >= 0 && g < n) u[o + g * st] = sd[li * pad + g];
  }
  report(bad && valid, flag);
}

// Dynamic shared memory of a block: a, b, c, d of its lines.
template <class T>
std::size_t pivoting_block_smem(i64 n) {
  const std::size_t P = static_cast<std::size_t>((n + kPivotBlockRows - 1) / kPivotBlockRows);
  return 4 * static_cast<std::size_t>(pivot_block_lines<T>()) * (P * kPivotBlockRows + 1) * sizeof(T);
}

// Workspace: the fall-back's U rows (u1', u2' per row and line, as the thread route).
inline std::size_t pivoting_block_workspace(const LineSet& l, std::size_t value_size) {
  return pivoting_thread_workspace(l, false, value_size);
}

template <class T, int Chunk>
void launch_pivoting_block(const LineSet& ls, BandView<T> bands, const T* d, T* u, void* workspace, int* flag,
                           cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  const i64 nl = L.lines();
  const unsigned P = static_cast<unsigned>((L.n + kPivotBlockRows - 1) / kPivotBlockRows);
  constexpr int NL = pivot_block_lines<T>();
  const dim3 threads(NL, P);
  const unsigned blocks = static_cast<unsigned>((nl + NL - 1) / NL);
  ScratchCursor cur{static_cast<char*>(workspace)};
  const std::size_t count = static_cast<std::size_t>(L.n) * static_cast<std::size_t>(nl);
  T* w1 = cur.take<T>(count);
  T* w2 = cur.take<T>(count);
  const std::size_t smem = pivoting_block_smem<T>(L.n);
  auto launch = [&](auto kernel) {
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<blocks, threads, smem, stream>>>(L, bands.a, bands.b, bands.c, d, u, w1, w2, flag);
  };
  if (bands.shared)
    launch(pivoting_block_kernel<T, Chunk, true>);
  else
    launch(pivoting_block_kernel<T, Chunk, false>);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
