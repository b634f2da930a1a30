#pragma once
// Variable-size tridiagonal batches on the GPU (cuThomasVBatch, paper section 3.1): one
// thread per system running the shared sweep of solvers/common/thomas_variable_core.hpp.
//   padded (CP)       every thread runs the batch's `rows` rows and loads the padding;
//   stop_at_size (NCP) a thread stops at its own size (a warp at its largest);
//   sorted            thread j of warp c takes the system at sorted position 32c + j of
//                     SortedInterleaved: coalesced, and the warp runs to its chunk's largest
//                     size, so time follows the total work;
//   compact, pointers threads take systems in size order (largest first), each walking its
//                     contiguous system (uncoalesced: a baseline for user layouts).
// Forward-sweep scratch: c* in the workspace (laid out like the data, so coalesced where
// the data is), d* in u; periodic systems keep z in a second workspace array.
//   sorted_truncated, padded_truncated, compact_truncated (stop 45, issue 16): the same
//                     thread per system runs common::spike_y_part's truncated sweeps, (c*, y*) in
//                     a shared-memory ring instead of memory: a, b, c, d read once, u written once
//                     (5 arrays against 9; compact: the warp's rows loaded and stored together);
//                     a refusal re-solves the batch with the exact kernel, gated on the device
//                     (no host round trip).
#include <cuda_runtime.h>

#include <climits>

#include "adi/base/env_switch.hpp"
#include "solvers/common/spike_y.hpp"
#include "solvers/common/thomas_variable_core.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/thomas_truncated.cuh"

namespace adi::cuda_backend {

namespace variable_detail {

// Element k of one system at data[k*rs] (+ base), its scratch at scratch[k*ss].
template <class T, bool LoadPadding>
struct ThreadIo {
  const T* __restrict__ pa;
  const T* __restrict__ pb;
  const T* __restrict__ pc;
  const T* pd;  // may alias pu (in place)
  T* pu;
  index_t rs;
  T* cs;
  T* zs;
  index_t ss;

  __device__ T load(const T* p, int k, bool live) const {
    if (LoadPadding) return p[k * rs];
    return live ? p[k * rs] : T(0);
  }
  __device__ T a(int k, bool live) const { return load(pa, k, live); }
  __device__ T b(int k, bool live) const { return load(pb, k, live); }
  __device__ T c(int k, bool live) const { return load(pc, k, live); }
  __device__ T d(int k, bool live) const { return load(pd, k, live); }
  __device__ void put(int k, T c_, T d_, T z_, bool live) const {
    if (!live) return;
    cs[k * ss] = c_;
    pu[k * rs] = d_;
    if (zs) zs[k * ss] = z_;
  }
  __device__ void get(int k, T& c_, T& d_, T& z_, bool live) const {
    if (!LoadPadding && !live) return;  // unconditional loads pipeline better (the memory exists)
    c_ = cs[k * ss];
    d_ = pu[k * rs];
    if (zs) z_ = zs[k * ss];
  }
  __device__ void store(int k, T x, bool live) const {
    if (live) pu[k * rs] = x;
  }
  __device__ void store_z(int k, T z, bool live) const {
    if (live) zs[k * ss] = z;
  }
  __device__ void fix(int k, T f, bool live) const {
    if (live) pu[k * rs] = common::PeriodicSplit<T>::correct(pu[k * rs], f, zs[k * ss]);
  }
};

template <bool Periodic, class T, bool LoadPadding>
__device__ void run(ThreadIo<T, LoadPadding> io, int n, int rows, index_t system, int* bad_system) {
  const bool bad = variable_thomas::solve<Periodic, T>(io, n, rows);
  if (bad && bad_system) atomicMin(bad_system, static_cast<int>(system));
}

// PaddedInterleaved: thread s, element k at k*stride + s.
// gate (the truncated kinds' re-solve): run only where *gate is set; null: always.
template <bool Periodic, bool StopAtSize, class T>
__global__ void __launch_bounds__(128) padded_kernel(VariableBatchView v, VariableDeviceArrays<T> x, T* cs, T* zs,
                                                     int* bad_system, const int* gate) {
  const index_t s = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (s >= v.count || (gate != nullptr && *gate == 0)) return;
  const int n = v.sizes[s];
  ThreadIo<T, !StopAtSize> io{x.a + s, x.b + s, x.c + s, x.d + s, x.u + s, x.stride, cs + s, zs ? zs + s : nullptr,
                              x.stride};
  run<Periodic>(io, n, StopAtSize ? n : x.rows, s, bad_system);
}

// SortedInterleaved: sorted position p = c*W + j, element k at chunk_offset[c] + k*W + j.
template <bool Periodic, class T>
__global__ void __launch_bounds__(128) sorted_kernel(VariableBatchView v, VariableDeviceArrays<T> x, T* cs, T* zs,
                                                     int* bad_system, const int* gate) {
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (p >= v.count || (gate != nullptr && *gate == 0)) return;
  const int W = v.chunk_width;
  const index_t c = p / W;
  const index_t at = v.chunk_offsets[c] + p % W;
  const index_t s = v.order[p];
  const int n = v.sizes[s];
  // Loads need no predicate: every slot of a chunk exists (padding included), so the
  // unrolled loop issues the next rows' loads early; dead lanes are few after sorting.
  ThreadIo<T, true> io{x.a + at, x.b + at, x.c + at, x.d + at, x.u + at, W, cs + at, zs ? zs + at : nullptr, W};
  // Every thread of a chunk runs to the chunk's largest size (warp-uniform trip count).
  run<Periodic>(io, n, v.chunk_rows[c], s, bad_system);
}

// CompactBatch / PointerBatch: thread p takes system order[p], elements contiguous.
template <bool Periodic, bool Pointers, class T>
__global__ void __launch_bounds__(128) contiguous_kernel(VariableBatchView v, VariableDeviceArrays<T> x, T* cs,
                                                         T* zs, int* bad_system, const int* gate) {
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (p >= v.count || (gate != nullptr && *gate == 0)) return;
  const index_t s = v.order[p];
  const int n = v.sizes[s];
  if (n == 0) return;
  const index_t so = v.offsets[s];  // scratch: packed
  ThreadIo<T, false> io;
  if (Pointers) {
    io = ThreadIo<T, false>{x.pa[s], x.pb[s], x.pc[s], x.pd[s], x.pu[s], 1, cs + so, zs ? zs + so : nullptr, 1};
  } else {
    const index_t o = x.offsets[s];
    io = ThreadIo<T, false>{x.a + o, x.b + o, x.c + o, x.d + o, x.u + o, 1, cs + so, zs ? zs + so : nullptr, 1};
  }
  run<Periodic>(io, n, n, s, bad_system);
}

// The truncated kernel's lanes in step (Uniform): a lane's row r of the interleaved layout is loaded
// whether or not r < n (every slot of the layout exists: no predicate on the loads, as the exact
// sorted kernel) and rows past the system are identity rows; u is written on the system's rows only
// (the layout's padding never written: past n into `sink`, the thread's own scratch value). The
// identity is chosen where the values are used: LaneRows for spike_y_part's full batches (loaded at
// fetch, chosen at arrange, so the loads stay in flight: a select at load time made the kernel wait
// on every load, 2.5x slower, call s45/2), LaneBand for the rows of a part's last batch.
template <class T, int Which>  // 0 a, 1 b, 2 c, 3 d
struct LaneBand {
  const T* p;
  kernels::i64 s, n;
  static __device__ __forceinline__ T pick(kernels::i64 r, kernels::i64 n, T v) {
    const bool in = Which == 0 ? r >= 1 && r < n : Which == 2 ? r < n - 1 : r < n;
    return in ? v : (Which == 1 ? T(1) : T(0));
  }
  __device__ __forceinline__ T operator[](kernels::i64 r) const { return pick(r, n, p[r * s]); }
};
template <class T>
struct LaneRows {
  static constexpr bool enabled = true;
  static constexpr bool stores = false;
  static constexpr int D = 8;
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  kernels::i64 s, n;
  __device__ __forceinline__ void load(kernels::i64 row, T (&ra)[D], T (&rb)[D], T (&rc)[D], T (&rd)[D]) const {
#pragma unroll
    for (int k = 0; k < D; ++k) {
      const kernels::i64 o = (row + k) * s;
      ra[k] = a[o], rb[k] = b[o], rc[k] = c[o], rd[k] = d[o];
    }
  }
  __device__ __forceinline__ void arrange(kernels::i64 row, T (&ra)[D], T (&rb)[D], T (&rc)[D], T (&rd)[D]) const {
#pragma unroll
    for (int k = 0; k < D; ++k) {
      ra[k] = LaneBand<T, 0>::pick(row + k, n, ra[k]), rb[k] = LaneBand<T, 1>::pick(row + k, n, rb[k]);
      rc[k] = LaneBand<T, 2>::pick(row + k, n, rc[k]), rd[k] = LaneBand<T, 3>::pick(row + k, n, rd[k]);
    }
  }
};
template <class T>
struct LaneOut {
  T* p;
  kernels::i64 s, n;
  T* sink;
  __device__ __forceinline__ T& operator[](kernels::i64 r) const { return r < n ? p[r * s] : *sink; }
};

// Truncated sweeps (sorted_truncated, padded_truncated; non-periodic, u != d): thread p takes the
// system the exact kernel's thread p takes (Sorted: position p of SortedInterleaved; else system p
// of PaddedInterleaved) and runs common::spike_y_part on it as one part: the forward sweep exact
// from row 0, the backward in chunks of C rows each started G rows past the chunk's end, (c*, y*)
// in the shared-memory ring, so a, b, c, d are read once and u written once, a warp's rows loaded
// together (coalesced as the exact kernels' loads). A lane runs its own n rows (the warp's loads
// predicated where sizes differ, as NCP's); Uniform: every lane runs the same rows (the chunk's
// largest size, or the padded layout's rows: CP), its rows past n identity rows (LaneRows,
// LaneBand). Checked as the exact kernel checks (Growth: every |c*| <= kThomasGrowth; a non-finite
// value) and a truncation whose decay product is not below kSpikeTol refuses too: then *refused is
// set and the exact kernel gated on it solves the whole batch again (and names a failing system as
// it always does).
template <class T, bool Sorted, bool Uniform>
__global__ void __launch_bounds__(kernels::kTruncThreads)
    truncated_kernel(VariableBatchView v, VariableDeviceArrays<T> x, int* refused) {
  extern __shared__ __align__(16) unsigned char variable_trunc_smem[];
  using kernels::i64;
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (p >= v.count) return;
  i64 at = p, st = x.stride, s = p, m = x.rows;
  if constexpr (Sorted) {
    const int W = v.chunk_width;
    at = v.chunk_offsets[p / W] + p % W, st = W, s = v.order[p], m = v.chunk_rows[p / W];
  }
  const i64 n = v.sizes[s];
  if (n <= 0) return;
  if constexpr (!Uniform) m = n;
  using Shape = common::SpikeYShape<T>;
  const kernels::TruncRing<T, kernels::kTruncThreads> ring{reinterpret_cast<T*>(variable_trunc_smem) + threadIdx.x};
  auto run = [&](const auto& a, const auto& b, const auto& c, const auto& d, const auto& u, const auto& batch) {
    return common::spike_y_part<8, true, true>(m, i64(0), m, i64(Shape::G), i64(Shape::C), i64(Shape::K), a, b, c, d, u,
                                               ring, [](i64) {}, batch);
  };
  bool ok;
  if constexpr (Uniform) {
    T sink;
    ok = run(LaneBand<T, 0>{x.a + at, st, n}, LaneBand<T, 1>{x.b + at, st, n}, LaneBand<T, 2>{x.c + at, st, n},
             LaneBand<T, 3>{x.d + at, st, n}, LaneOut<T>{x.u + at, st, n, &sink},
             LaneRows<T>{x.a + at, x.b + at, x.c + at, x.d + at, st, n});
  } else {
    using Band = common::Strided<const T, i64>;
    ok = run(Band{x.a + at, st}, Band{x.b + at, st}, Band{x.c + at, st}, Band{x.d + at, st},
             common::Strided<T, i64>{x.u + at, st}, common::RowLoads{});
  }
  if (!ok) *refused = 1;
}

// The compact layout's truncated sweeps (compact_truncated; stop 45): systems back to back, a thread
// per system in the plan's size order (largest first), so the 32 systems of a warp have close sizes.
// One thread's rows are contiguous, so its own loads would touch a sector per value; instead the warp
// loads each batch of 8 rows of its 32 systems together (8 lanes read one system's 8 neighbouring
// values, 4 systems an instruction) and hands the values to their lanes through shared memory, and
// stores u's groups of 8 rows the same way (kernels::WarpStage, as the single-system kernel's
// WarpRows in thomas_truncated.cuh, with a base offset and a size per lane instead of a part's row). The lanes run in step over the warp's largest size (rows
// past a system identity rows; a lane past the batch runs identity rows only), as the warp's
// shuffles need.
template <class T>
struct CompactRows : kernels::WarpStage<T> {
  static constexpr bool enabled = true;
  static constexpr bool stores = true;
  using Stage = kernels::WarpStage<T>;
  using Stage::D;
  using Stage::lane;
  using Stage::slot;
  using Stage::source;
  using Stage::stage;
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  T* u;
  kernels::i64 off, n;  // this lane's system: its first value and its size
  // (row: the batch's first row, the same on every lane; instruction k: the source lane's system)
  __device__ __forceinline__ void load(kernels::i64 row, T (&ra)[D], T (&rb)[D], T (&rc)[D], T (&rd)[D]) const {
    const kernels::i64 r = row + lane % D;
    kernels::i64 o[D], sn[D];
    bool inner = true;  // every value inside its system, away from its first and last row
#pragma unroll
    for (int k = 0; k < D; ++k) {
      o[k] = __shfl_sync(0xffffffffu, off, source(k)) + r;
      sn[k] = __shfl_sync(0xffffffffu, n, source(k));
      inner = inner && r >= 1 && r < sn[k] - 1;
    }
    if (__all_sync(0xffffffffu, inner)) {
#pragma unroll
      for (int k = 0; k < D; ++k) ra[k] = __ldg(a + o[k]), rb[k] = __ldg(b + o[k]), rc[k] = __ldg(c + o[k]), rd[k] = __ldg(d + o[k]);
    } else {
#pragma unroll
      for (int k = 0; k < D; ++k) {
        const bool in = r < sn[k];
        ra[k] = in && r >= 1 ? a[o[k]] : T(0);
        rb[k] = in ? b[o[k]] : T(1);
        rc[k] = r < sn[k] - 1 ? c[o[k]] : T(0);
        rd[k] = in ? d[o[k]] : T(0);
      }
    }
  }
  __device__ __forceinline__ void store(kernels::i64 row) const {
    __syncwarp();
    const kernels::i64 r = row + lane % D;
#pragma unroll
    for (int k = 0; k < D; ++k) {
      const kernels::i64 o = __shfl_sync(0xffffffffu, off, source(k)) + r;
      const kernels::i64 sn = __shfl_sync(0xffffffffu, n, source(k));
      const T v = stage[slot(k)];
      if (r < sn) u[o] = v;
    }
    __syncwarp();
  }
};

template <class T>
__global__ void __launch_bounds__(kernels::kTruncThreads)
    compact_truncated_kernel(VariableBatchView v, VariableDeviceArrays<T> x, int* refused) {
  extern __shared__ __align__(16) unsigned char variable_trunc_smem[];
  using kernels::i64;
  using Shape = common::SpikeYShape<T>;
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const bool live = p < v.count;  // (lanes past the batch stay: the warp's shuffles need all 32)
  const index_t s = live ? v.order[p] : 0;
  const i64 n = live ? v.sizes[s] : 0, off = live ? x.offsets[s] : 0;
  const i64 m = __reduce_max_sync(0xffffffffu, unsigned(n));  // the warp's rows
  if (m == 0) return;  // (the whole warp)
  T* smem = reinterpret_cast<T*>(variable_trunc_smem);
  const kernels::TruncRing<T, kernels::kTruncThreads> ring{smem + threadIdx.x};
  T* stage = smem + 2 * Shape::K * kernels::kTruncThreads + (threadIdx.x / 32) * kernels::kTruncSystemStage;
  T sink;
  const bool ok = common::spike_y_part<8, true, true>(
      m, i64(0), m, i64(Shape::G), i64(Shape::C), i64(Shape::K), common::PaddedBand<T, 0, i64>{x.a + off, n, 0},
      common::PaddedBand<T, 1, i64>{x.b + off, n, 0}, common::PaddedBand<T, 2, i64>{x.c + off, n, 0},
      common::PaddedBand<T, 3, i64>{x.d + off, n, 0}, common::PaddedOut<T, i64>{x.u + off, n, 0, &sink}, ring,
      [](i64) {}, CompactRows<T>{{stage, int(threadIdx.x % 32)}, x.a, x.b, x.c, x.d, x.u, off, n});
  if (!ok) *refused = 1;
}

// Where the truncated kinds keep their refusal flag: one int past the exact kernel's scratch.
inline std::size_t truncated_flag_offset(std::size_t scratch_bytes) { return (scratch_bytes + 15) / 16 * 16; }

// Length of one scratch array (c*, and z when periodic): laid out like the data for the
// interleaved layouts, packed (the plan's offsets) for the contiguous ones.
// (variable_tridiagonal_workspace_bytes allocates it: one definition for both.)
inline index_t scratch_length(VariableKernel kernel, const VariableBatchView& v, index_t stride, int rows) {
  switch (exact_variable_kernel(kernel)) {
    case VariableKernel::padded:
    case VariableKernel::stop_at_size: return v.count && rows ? (static_cast<index_t>(rows) - 1) * stride + v.count : 0;
    case VariableKernel::sorted: return v.sorted_span;
    default: return v.total;
  }
}

// The truncated kernel's launch over the batch (*refused cleared first): a lane runs its own size,
// or the warp's lanes run in step where x.lanes_in_step (the plan's choice);
// ADI_VARIABLE_TRUNCATED_LANES=own / uniform overrides it (timing).
template <class T, bool Sorted>
void launch_truncated(const VariableBatchView& v, const VariableDeviceArrays<T>& x, int* refused, cudaStream_t st) {
  ADI_CUDA_CHECK(cudaMemsetAsync(refused, 0, sizeof(int), st));
  constexpr int threads = kernels::kTruncThreads;
  auto kernel = truncated_kernel<T, Sorted, false>;
  if (::adi::detail::env_choice("ADI_VARIABLE_TRUNCATED_LANES", {"own", "uniform"}, x.lanes_in_step ? 1 : 0) == 1)
    kernel = truncated_kernel<T, Sorted, true>;
  kernel<<<unsigned((v.count + threads - 1) / threads), threads, kernels::thomas_truncated_smem<T>(), st>>>(v, x,
                                                                                                            refused);
}

// The compact layout's truncated kernel (*refused cleared first): the ring and two warps' stages.
template <class T>
void launch_compact_truncated(const VariableBatchView& v, const VariableDeviceArrays<T>& x, int* refused,
                              cudaStream_t st) {
  ADI_CUDA_CHECK(cudaMemsetAsync(refused, 0, sizeof(int), st));
  constexpr int threads = kernels::kTruncThreads;
  constexpr std::size_t smem = kernels::thomas_truncated_system_smem<T>();  // (the same ring and stages)
  if (smem > 48 * 1024)  // (per launch: the attribute is the current device's)
    ADI_CUDA_CHECK(cudaFuncSetAttribute(compact_truncated_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  compact_truncated_kernel<T><<<unsigned((v.count + threads - 1) / threads), threads, smem, st>>>(v, x, refused);
}

}  // namespace variable_detail

template <class T>
void variable_tridiagonal_launch(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                                 bool periodic, void* workspace, int* bad_system, void* stream) {
  using namespace variable_detail;
  auto st = static_cast<cudaStream_t>(stream);
  // Bytes of 0x7f make kNoBadSystem.
  if (bad_system) ADI_CUDA_CHECK(cudaMemsetAsync(bad_system, 0x7f, sizeof(int), st));
  if (v.count == 0) return;
  const index_t len = scratch_length(kernel, v, x.stride, x.rows);
  T* cs = static_cast<T*>(workspace);
  T* zs = periodic ? cs + len : nullptr;
  const unsigned threads = 128;
  const unsigned blocks = static_cast<unsigned>((v.count + threads - 1) / threads);
  // The truncated kinds: the truncated pass, then the exact kernel gated on its refusal flag.
  const int* gate = nullptr;
  if (exact_variable_kernel(kernel) != kernel) {
    if (periodic) throw InvalidArgument("variable_tridiagonal_solve: the truncated kernels solve non-periodic systems only");
    auto* refused = reinterpret_cast<int*>(static_cast<unsigned char*>(workspace) +
                                           truncated_flag_offset(std::size_t(len) * sizeof(T)));
    if (kernel == VariableKernel::sorted_truncated)
      launch_truncated<T, true>(v, x, refused, st);
    else if (kernel == VariableKernel::padded_truncated)
      launch_truncated<T, false>(v, x, refused, st);
    else
      launch_compact_truncated<T>(v, x, refused, st);
    gate = refused;
  }
  switch (exact_variable_kernel(kernel)) {
    case VariableKernel::padded:
      if (periodic)
        padded_kernel<true, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      else
        padded_kernel<false, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      break;
    case VariableKernel::stop_at_size:
      if (periodic)
        padded_kernel<true, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      else
        padded_kernel<false, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      break;
    case VariableKernel::sorted:
      if (periodic)
        sorted_kernel<true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      else
        sorted_kernel<false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      break;
    case VariableKernel::compact:
      if (periodic)
        contiguous_kernel<true, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      else
        contiguous_kernel<false, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      break;
    case VariableKernel::pointers:
      if (periodic)
        contiguous_kernel<true, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      else
        contiguous_kernel<false, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system, gate);
      break;
    default: break;
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend
