#pragma once
// Partial pivoting, the register partition route (issue 23, stop 38, branch h-regpart; forced
// only: ADI_PIVOTING_ROUTE=regpart): lines of 1 .. 272 rows, not periodic, meant for Y/Z sweeps
// (adjacent lines, element stride = the line count), where a warp's lanes on neighbouring lines
// read one row of each array as one coalesced segment. The steps are
// solvers/common/pivoting_partition_regs.hpp's (the host test runs the same):
//   1. thread (line, k) loads partition k of its line (17 rows of a, b, c, d: 68 values) into
//      registers straight from global memory, no staging, and eliminates its block both ways
//      with partial pivoting inside it (three right-hand sides); its last-row values go to
//      shared memory;
//   2. after a barrier it forms its separator's reduced row and runs the detector (a weak pivot,
//      or the dominance test of docs/pivoting.md "Stop 34"): an unsafe partition marks its line;
//   3. one thread per line solves the line's P reduced rows by exact partial pivoting (shared
//      memory, common::pivot_line);
//   4. each thread solves its block again from its registers with its two separators known and
//      writes u.
// DRAM sees a copy's 5 values per row; shared memory holds only the reduced rows (10 values per
// partition and line). A marked line (any unsafe partition, or a zero pivot of its reduced
// system) is solved instead, before anything of it is written, by exact partial pivoting along
// the line (the thread route's loop, U's rows in the workspace): on the test families every
// non-dominant line is marked (host test: tests/solvers/cpu/test_pivoting_regpart.cpp), so the
// route is fast on dominant lines only.
// Lines a block: regpart_lines (fp32 16, fp64 8: 64-byte row segments; block 256 / 128 threads
// at n = 256); for measurement ADI_PIVOTING_REGPART_LINES=narrow (half) | wide (twice).
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "adi/base/env_switch.hpp"
#include "solvers/common/pivoting_partition_regs.hpp"
#include "solvers/cuda/pivoting_block.cuh"
#include "solvers/cuda/pivoting_thread_line.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kRegPartParts = 16;  // partitions per line at most: n <= 272

template <class T>
constexpr int regpart_lines() {
  return sizeof(T) == 4 ? 16 : 8;
}

inline bool pivoting_regpart_fits(const LineSet& l, bool periodic) {
  return !periodic && l.n >= 1 && l.n <= kRegPartParts * common::kRegPartitionRows;
}

template <class T, int NL, bool Shared>
__global__ void __launch_bounds__(NL * kRegPartParts)
    pivoting_regpart_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                            const T* __restrict__ c, const T* d, T* u, T* __restrict__ w1, T* __restrict__ w2,
                            int* flag) {
  constexpr int M = common::kRegPartitionRows;
  __shared__ T s_yL[kRegPartParts][NL], s_vL[kRegPartParts][NL], s_wL[kRegPartParts][NL];
  __shared__ T s_A[kRegPartParts][NL], s_B[kRegPartParts][NL], s_C[kRegPartParts][NL], s_D[kRegPartParts][NL];
  __shared__ T s_X[kRegPartParts][NL], s_U1[kRegPartParts][NL], s_U2[kRegPartParts][NL];
  __shared__ int s_unsafe[NL];
  const int lane = static_cast<int>(threadIdx.x), k = static_cast<int>(threadIdx.y);
  const int P = static_cast<int>(blockDim.y);
  const i64 n = L.n, st = L.stride;
  const i64 line = static_cast<i64>(blockIdx.x) * NL + lane;
  const bool valid = line < L.lines();
  const i64 off = valid ? L.offset(line) : 0;
  if (k == 0) s_unsafe[lane] = 0;

  // 1. The partition into registers (rows past the line's end, and every row of a lane past
  // the last line, are the padding), eliminated both ways.
  common::RegPartition<T, M> p;
  auto fetch = [&](long long g) {
    const i64 e = off + g * st, be = Shared ? i64(g) : e;
    return common::PartitionRowValues<T>{a[be], b[be], c[be], d[e]};
  };
  common::regpart_load<T, M>(p, fetch, k, valid ? n : 0);
  const common::RegPartitionEnds<T> ends = common::regpart_eliminate<T, M>(p);
  s_yL[k][lane] = ends.yL;
  s_vL[k][lane] = ends.vL;
  s_wL[k][lane] = ends.wL;
  __syncthreads();
  // 2. The reduced row and the detector.
  const bool first = k == 0;
  const common::PartitionRowValues<T> r =
      common::regpart_reduced<T, M>(p, ends, first, first ? T(0) : s_yL[k - 1][lane],
                                    first ? T(0) : s_vL[k - 1][lane], first ? T(0) : s_wL[k - 1][lane]);
  s_A[k][lane] = r.a;
  s_B[k][lane] = r.b;
  s_C[k][lane] = r.c;
  s_D[k][lane] = r.d;
  if (valid && common::regpart_unsafe<T>(ends, r)) s_unsafe[lane] = 1;
  __syncthreads();
  // 3. The reduced system of this lane's line (P rows), unless the line is marked already.
  if (k == 0 && valid && !s_unsafe[lane]) {
    common::StridedReducedIo<T> io{&s_A[0][lane], &s_B[0][lane], &s_C[0][lane], &s_D[0][lane],
                                   &s_X[0][lane], &s_U1[0][lane], &s_U2[0][lane], NL};
    if (common::regpart_reduced_solve<T>(io, P)) s_unsafe[lane] = 1;
  }
  __syncthreads();
  if (!valid) return;
  if (s_unsafe[lane]) {
    // Only the fall-back's pivots count: an unsafe partition says nothing about the line.
    if (k == 0) report(pivoting_block_fallback<T, 4, Shared>(L, line, a, b, c, d, u, w1, w2), flag);
    return;
  }
  // 4. The block again from the registers, u written row by row (coalesced across the lanes).
  T x[M];
  bool bad = false;
  common::regpart_back<T, M>(p, s_X[k][lane], k + 1 < P ? s_X[k + 1][lane] : T(0), x, bad);
#pragma unroll
  for (int i = 0; i < M; ++i) {
    const i64 g = static_cast<i64>(k) * M + i;
    if (g < n) u[off + g * st] = x[i];
  }
  report(bad, flag);
}

// Workspace: the fall-back's U rows (u1', u2' per row and line, as the thread route).
inline std::size_t pivoting_regpart_workspace(const LineSet& l, std::size_t value_size) {
  return pivoting_thread_workspace(l, false, value_size);
}

// Lines a block, for measurement (ADI_PIVOTING_REGPART_LINES): "narrow" half the default (fp32 8,
// fp64 4: 32-byte row segments, several blocks an SM whose phases overlap), "wide" twice it;
// unset the default (regpart_lines), any other value an InvalidArgument. Read at each solve.
inline int pivoting_regpart_width() {
  constexpr int kHalves[] = {1, 4};  // in halves of the default
  const int w = ::adi::detail::env_choice("ADI_PIVOTING_REGPART_LINES", {"narrow", "wide"}, -1);
  return w < 0 ? 2 : kHalves[w];
}

template <class T>
void launch_pivoting_regpart(const LineSet& ls, BandView<T> bands, const T* d, T* u, void* workspace, int* flag,
                             cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  const i64 nl = L.lines();
  const unsigned P = static_cast<unsigned>((L.n + common::kRegPartitionRows - 1) / common::kRegPartitionRows);
  ScratchCursor cur{static_cast<char*>(workspace)};
  const std::size_t count = static_cast<std::size_t>(L.n) * static_cast<std::size_t>(nl);
  T* w1 = cur.take<T>(count);
  T* w2 = cur.take<T>(count);
  auto launch = [&](auto kernel, int NL) {
    const unsigned blocks = static_cast<unsigned>((nl + NL - 1) / NL);
    kernel<<<blocks, dim3(NL, P), 0, stream>>>(L, bands.a, bands.b, bands.c, d, u, w1, w2, flag);
  };
  constexpr int H = regpart_lines<T>() / 2;
  auto pick = [&](auto shared) {
    constexpr bool S = decltype(shared)::value;
    switch (pivoting_regpart_width()) {
      case 1: return launch(pivoting_regpart_kernel<T, H, S>, H);
      case 4: return launch(pivoting_regpart_kernel<T, 4 * H, S>, 4 * H);
      default: return launch(pivoting_regpart_kernel<T, 2 * H, S>, 2 * H);
    }
  };
  if (bands.shared)
    pick(std::true_type{});
  else
    pick(std::false_type{});
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
