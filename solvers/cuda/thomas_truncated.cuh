#pragma once
// Lines by truncated sweeps on the device: a thread per (line, part), common::spike_y_part
// (solvers/common/spike_y.hpp) on its part, the (c*, y*) ring in shared memory. One kernel, two
// users: the 2-GPU SPIKE form's y (partition::spike_lines_y, a segment of a line with its ends
// cut; stop 40, h-publocal) and the single-device kernel Kernel::cuda_thomas_truncated (whole
// non-periodic lines: a segment whose cut ends are the line's own ends, a_0 and c_{n-1} unread;
// stop 41, h-longy). Thread t = q L + l takes part q of line l: a warp is 32 neighbouring lines
// of one part, so with lines adjacent in memory each row's loads are one 256-byte run (fp64).
// The kernel sets *bad where a part fails its checks (spike_y_part: decay products below
// kSpikeTol, every value finite; with Growth every |c*| <= kThomasGrowth); the caller must then
// not use u (the single-device plan re-solves with the exact kernel, adi/tridiagonal.cpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <mutex>
#include <string>

#include "adi/base/env_switch.hpp"
#include "adi/base/error.hpp"
#include "solvers/common/spike_y.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kTruncThreads = 64;  // threads a block (4 blocks of 48 KB (fp64) per SM)
constexpr int kTruncAhead = 32;    // forms 2 / 4: rows requested into L2 ahead of their loads
constexpr int kTruncForms = 4;     // forms 1..4 (form_kernel below)

// A thread's ring of K (c*, y*) rows in shared memory: [slot][c*, y*][thread] (a warp's
// accesses conflict-free). NT: the block's threads, a constant so that a row's slot at a constant
// offset from a batch's base is a constant address offset (spike_y_part's unrolled bodies).
template <class T, int NT>
struct TruncRing {
  T* p;  // this thread's first slot value
  __device__ __forceinline__ void put(int s, T cs, T ys) const {  // (s < K)
    p[(2 * s) * NT] = cs;
    p[(2 * s + 1) * NT] = ys;
  }
  __device__ __forceinline__ void get(int s, T& cs, T& ys) const {
    cs = p[(2 * s) * NT];
    ys = p[(2 * s + 1) * NT];
  }
};

// Band access: per-line bands at the line's offset and row stride, shared bands (n values, one
// set for every line) at offset 0, stride 1. Growth: rows whose |c*| exceeds kThomasGrowth refused
// too (the single-device kernel; the SPIKE form's y runs without, as before).
template <class T, bool L2, bool Pipe, bool Growth>
__global__ void __launch_bounds__(kTruncThreads)
    thomas_truncated_kernel(DeviceLines ls, const T* __restrict__ a, const T* __restrict__ b,
                            const T* __restrict__ c, bool shared, const T* __restrict__ d, T* __restrict__ u,
                            i64 S, int* bad) {
  extern __shared__ __align__(16) unsigned char trunc_smem[];
  using Shape = common::SpikeYShape<T>;
  const i64 L = ls.lines();
  const i64 t = i64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= S * L) return;
  const i64 q = t / L, l = t - q * L;
  const i64 m = ls.n, st = ls.stride, o = ls.offset(l);
  const i64 bo = shared ? 0 : o, bs = shared ? 1 : st;
  using Band = common::Strided<const T, i64>;
  const TruncRing<T, kTruncThreads> ring{reinterpret_cast<T*>(trunc_smem) + threadIdx.x};  // (blockDim.x == kTruncThreads)
  auto hint = [&](i64 i) {
    if constexpr (L2)
      if (i + kTruncAhead < m) {
        const i64 k = (i + kTruncAhead) * bs + bo;
        prefetch_l2(a + k);
        prefetch_l2(b + k);
        prefetch_l2(c + k);
        prefetch_l2(d + o + (i + kTruncAhead) * st);
      }
  };
  const bool ok = common::spike_y_part<8, Pipe, Growth>(
      m, m * q / S, m * (q + 1) / S, i64(Shape::G), i64(Shape::C), i64(Shape::K), Band{a + bo, bs}, Band{b + bo, bs},
      Band{c + bo, bs}, Band{d + o, st}, common::Strided<T, i64>{u + o, st}, ring, hint);
  if (!ok && bad != nullptr) *bad = 1;
}

// One system of n rows with stride 1 (LargeTridiagonalPlan's route for a system of at least
// kTruncSystemMinRows, stop 44): common::spike_y_part on the padded form of the system
// (spike_y.hpp, PaddedBand: every part P rows, the padding identity rows), a thread per part, part
// q on rows [q P, (q + 1) P) of the system. Threads of a warp take neighbouring parts, so a row's
// loads by the lanes are P apart; instead the warp loads each batch of 8 rows of its 32 parts
// together (WarpRows: 8 lanes read a part's 8 neighbouring values, 4 parts an instruction, all
// sectors used) and passes them through shared memory to their lanes; u's groups of 8 rows go back
// the same way (ADI_TRUNC_SYSTEM_STORES=0: row by row, for timing).
// Automatic's range (LargeTridiagonalPlan, fp64 only): H200, stop 44 run s44/4, bench_cuda_large_tridiagonal --quick, the
// kernel against the partition plan: fp64 2^20 0.078 / 0.089 ms, 2^21 0.096 / 0.112, 2^24 0.413 / 0.566, 2^26 1.512 /
// 2.130; fp32 level at 2^20 and 2^22, slower from 2^23 (2^24 0.292 / 0.259; docs/large_tridiagonal.md).
constexpr long long kTruncSystemMinRows = 1 << 21;
constexpr long long kTruncSystemMaxRows = 1 << 29;  // above: the partition passes (spike_y_part counts a part's rows in int)
constexpr int kTruncSystemStage = 32 * 9;           // a warp's stage: 32 parts x 8 rows, padded to 9 (no bank conflicts)

// A warp's exchange of batches of D = 8 rows through its stage in shared memory (kTruncSystemStage
// values): instruction k of a lane moves row lane % D of the part (or system) of lane source(k) =
// k PI + lane / D, through slot(k) (a lane's D rows padded to D + 1: no bank conflicts). one(v): the
// values a lane loaded (v[k]: instruction k's) to the lanes they belong to (v[k]: row k of its own);
// put(j, x): row j of this lane's group of u, which the owner's store then writes by instruction.
// The single-system kernel's WarpRows and the compact variable batches' CompactRows
// (thomas_variable.cuh) derive from it.
template <class T>
struct WarpStage {
  static constexpr int D = 8, PI = 32 / D;  // rows a batch; parts an instruction
  T* stage;
  int lane;
  __device__ __forceinline__ int source(int k) const { return k * PI + lane / D; }
  __device__ __forceinline__ int slot(int k) const { return source(k) * (D + 1) + lane % D; }
  __device__ __forceinline__ void put(int j, T x) const { stage[lane * (D + 1) + j] = x; }
  __device__ __forceinline__ void one(T (&v)[D]) const {
#pragma unroll
    for (int k = 0; k < D; ++k) stage[slot(k)] = v[k];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < D; ++k) v[k] = stage[lane * (D + 1) + k];
    __syncwarp();  // (the stage is taken again by the next array)
  }
  __device__ __forceinline__ void arrange(i64, T (&ra)[D], T (&rb)[D], T (&rc)[D], T (&rd)[D]) const {
    one(ra), one(rb), one(rc), one(rd);
  }
};

template <class T, bool Stores>
struct WarpRows : WarpStage<T> {
  static constexpr bool enabled = true;
  static constexpr bool stores = Stores;  // u's groups of D rows too (put, store)
  using WarpStage<T>::D;
  using WarpStage<T>::lane;
  using WarpStage<T>::stage;
  using WarpStage<T>::slot;
  using WarpStage<T>::source;
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  T* u;
  i64 n, pad;
  // Instruction k's value as the system's row (row: each lane's padded row, the lanes' parts P apart,
  // shuffled from the source lane).
  __device__ __forceinline__ i64 system_row(i64 row, int k) const {
    return __shfl_sync(0xffffffffu, row, source(k)) - pad + lane % D;
  }
  // Loads of the batch of rows [row, row + D) of every lane's part: r*[k] holds instruction k's value
  // until arrange() hands it to its lane.
  __device__ __forceinline__ void load(i64 row, T (&ra)[D], T (&rb)[D], T (&rc)[D], T (&rd)[D]) const {
    i64 o[D];
    bool inner = true;  // every row of the batch inside the system, away from its first and last row
#pragma unroll
    for (int k = 0; k < D; ++k) {
      o[k] = system_row(row, k);
      inner = inner && o[k] >= 1 && o[k] < n - 1;
    }
    if (__all_sync(0xffffffffu, inner)) {
#pragma unroll
      for (int k = 0; k < D; ++k) ra[k] = __ldg(a + o[k]), rb[k] = __ldg(b + o[k]), rc[k] = __ldg(c + o[k]), rd[k] = __ldg(d + o[k]);
    } else {
      const common::PaddedBand<T, 0, i64> pa{a, n, pad};
      const common::PaddedBand<T, 1, i64> pb{b, n, pad};
      const common::PaddedBand<T, 2, i64> pc{c, n, pad};
      const common::PaddedBand<T, 3, i64> pd{d, n, pad};
#pragma unroll
      for (int k = 0; k < D; ++k) ra[k] = pa[o[k] + pad], rb[k] = pb[o[k] + pad], rc[k] = pc[o[k] + pad], rd[k] = pd[o[k] + pad];
    }
  }
  // Every lane's group (row: its padded g0) to u, instruction k storing its value (the padding's dropped).
  __device__ __forceinline__ void store(i64 row) const {
    __syncwarp();
#pragma unroll
    for (int k = 0; k < D; ++k) {
      const i64 o = system_row(row, k);
      const T v = stage[slot(k)];
      if (o >= 0 && o < n) u[o] = v;
    }
    __syncwarp();
  }
};

template <class T, bool Stores>
__global__ void __launch_bounds__(kTruncThreads)
    thomas_truncated_system_kernel(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                                   const T* __restrict__ d, T* __restrict__ u, i64 n, i64 P, int* bad) {
  extern __shared__ __align__(16) unsigned char trunc_smem[];
  using Shape = common::SpikeYShape<T>;
  constexpr i64 G = Shape::G;
  const i64 q = i64(blockIdx.x) * kTruncThreads + threadIdx.x;  // part (the grid: whole blocks of parts)
  const i64 S = i64(gridDim.x) * kTruncThreads;
  T* smem = reinterpret_cast<T*>(trunc_smem);
  const TruncRing<T, kTruncThreads> ring{smem + threadIdx.x};
  T* stage = smem + 2 * Shape::K * kTruncThreads + (threadIdx.x / 32) * kTruncSystemStage;
  T sink;
  auto nohint = [](i64) {};
  const bool ok = common::spike_y_part<8, true, true>(
      2 * G + S * P, G + q * P, G + (q + 1) * P, G, i64(Shape::C), i64(Shape::K), common::PaddedBand<T, 0, i64>{a, n, G},
      common::PaddedBand<T, 1, i64>{b, n, G}, common::PaddedBand<T, 2, i64>{c, n, G},
      common::PaddedBand<T, 3, i64>{d, n, G}, common::PaddedOut<T, i64>{u, n, G, &sink}, ring, nohint,
      WarpRows<T, Stores>{{stage, int(threadIdx.x % 32)}, a, b, c, d, u, n, G});
  if (!ok && bad != nullptr) *bad = 1;
}

template <class T>
constexpr std::size_t thomas_truncated_system_smem() {
  return (std::size_t(2 * common::SpikeYShape<T>::K) * kTruncThreads + std::size_t(kTruncThreads / 32) * kTruncSystemStage) *
         sizeof(T);
}

// Rows a part of the single-system kernel takes for n rows (about one part per resident thread,
// at least 4G, a multiple of 8).
template <class T>
i64 thomas_truncated_system_rows(i64 n) {
  static i64 resident = 0;
  if (resident == 0)
    resident = i64(persistent_grid(thomas_truncated_system_kernel<T, true>, kTruncThreads, thomas_truncated_system_smem<T>(),
                                   std::numeric_limits<i64>::max(), launch_limits())) *
               kTruncThreads;
  // ADI_TRUNC_SYSTEM_PARTS: parts per 100 resident threads (timing; 25 .. 400, default 100)
  const i64 pct = ::adi::detail::env_int("ADI_TRUNC_SYSTEM_PARTS", 25, 400, 100);
  return common::spike_padded_rows<i64>(n, std::max<i64>(1, resident * pct / 100), i64(common::SpikeYShape<T>::G), 8);
}

// Enqueues the single-system kernel on one system of n rows (n <= kTruncSystemMaxRows; u must not
// alias d); *bad set where a part refuses (then u is not the solution).
template <class T>
void launch_thomas_truncated_system(i64 n, const T* a, const T* b, const T* c, const T* d, T* u, int* bad,
                                    cudaStream_t stream) {
  if (n <= 0) return;
  if (n > kTruncSystemMaxRows)
    throw InvalidArgument("thomas_truncated_system: " + std::to_string(n) + " rows; at most " +
                          std::to_string(kTruncSystemMaxRows));
  const i64 P = thomas_truncated_system_rows<T>(n);
  constexpr std::size_t smem = thomas_truncated_system_smem<T>();
  // u's stores: by the warp through the stage (default), or row by row (ADI_TRUNC_SYSTEM_STORES=0, kept for
  // timing: compiled only with ADI_CUDA_UNROLL_ALL, issue 15 item 8; other builds say so once and run the default)
  auto kernel = thomas_truncated_system_kernel<T, true>;
  if (::adi::detail::env_int("ADI_TRUNC_SYSTEM_STORES", 0, 1, 1) == 0) {
#if defined(ADI_CUDA_UNROLL_ALL)
    kernel = thomas_truncated_system_kernel<T, false>;
#else
    static std::once_flag gated;
    note_form_not_compiled(gated, "ADI_TRUNC_SYSTEM_STORES=0 (u stored row by row)", "the warp's stores");
#endif
  }
  if (smem > 48 * 1024)  // (per launch: the attribute is the current device's)
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const i64 blocks = ((n + P - 1) / P + kTruncThreads - 1) / kTruncThreads;
  kernel<<<unsigned(blocks), kTruncThreads, smem, stream>>>(
      a, b, c, d, u, n, P, bad);
  ADI_CUDA_CHECK(cudaGetLastError());
}

// Shared memory of a block: the rings of its threads.
template <class T>
constexpr std::size_t thomas_truncated_smem() {
  return std::size_t(2 * common::SpikeYShape<T>::K) * kTruncThreads * sizeof(T);
}

// Parts per line the launch uses (spike_y_parts: as many as the threads resident at once give
// every line, at most one per 4G rows, at least 1) and the launch over every line of ls (*bad set
// where a part refuses; u must not alias d; any layout, coalesced where neighbouring lines are
// adjacent). form 1..4: 1 plain (8-row load batches), 2 + L2 requests kTruncAhead rows ahead, 3
// loads double-buffered, 4 = 2 + 3 (a fifth, the loads triple-buffered, 16 rows ahead, ran 17%
// slower than 3 on an H200 at stop 43 and was removed); another form: InvalidArgument. Growth: spike_y_part's growth
// test on (the single-device kernel: true; the SPIKE form's y: false).
namespace truncated_detail {
template <class T, bool Growth>
auto form_kernel(int form) {
  if (form < 1 || form > kTruncForms)
    throw InvalidArgument("thomas_truncated: form " + std::to_string(form) + "; use 1, 2, 3 or 4");
  return form == 1   ? thomas_truncated_kernel<T, false, false, Growth>
         : form == 2 ? thomas_truncated_kernel<T, true, false, Growth>
         : form == 3 ? thomas_truncated_kernel<T, false, true, Growth>
                     : thomas_truncated_kernel<T, true, true, Growth>;
}
// Threads resident at once on the current device, per form: measured once (pcr_launch.cuh's
// occupancy-sized grid, which sets the kernel's shared-memory attributes on the way).
template <class T, bool Growth>
i64 resident(int form) {
  static i64 cached[kTruncForms] = {};
  i64& here = cached[form - 1];
  if (here == 0)
    here = i64(persistent_grid(form_kernel<T, Growth>(form), kTruncThreads, thomas_truncated_smem<T>(),
                               std::numeric_limits<i64>::max(), launch_limits())) *
           kTruncThreads;
  return here;
}
}  // namespace truncated_detail

template <class T, bool Growth = false>
i64 thomas_truncated_parts(const LineSet& ls, int form) {
  (void)truncated_detail::form_kernel<T, Growth>(form);
  return common::spike_y_parts<i64>(ls.n, ls.lines(), truncated_detail::resident<T, Growth>(form),
                                    i64(common::SpikeYShape<T>::G));
}

template <class T, bool Growth = false>
void launch_thomas_truncated(const LineSet& ls, const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
                             int form, int* bad, cudaStream_t stream) {
  const i64 L = ls.lines();
  if (L == 0 || ls.n == 0) return;
  auto kernel = truncated_detail::form_kernel<T, Growth>(form);
  const i64 S = thomas_truncated_parts<T, Growth>(ls, form);
  kernel<<<unsigned((S * L + kTruncThreads - 1) / kTruncThreads), kTruncThreads, thomas_truncated_smem<T>(),
           stream>>>(to_device(ls), a, b, c, shared, d, u, S, bad);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
