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
#include <cuda_runtime.h>

#include <climits>

#include "solvers/common/thomas_variable_core.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

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
template <bool Periodic, bool StopAtSize, class T>
__global__ void __launch_bounds__(128) padded_kernel(VariableBatchView v, VariableDeviceArrays<T> x, T* cs, T* zs,
                                                     int* bad_system) {
  const index_t s = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (s >= v.count) return;
  const int n = v.sizes[s];
  ThreadIo<T, !StopAtSize> io{x.a + s, x.b + s, x.c + s, x.d + s, x.u + s, x.stride, cs + s, zs ? zs + s : nullptr,
                              x.stride};
  run<Periodic>(io, n, StopAtSize ? n : x.rows, s, bad_system);
}

// SortedInterleaved: sorted position p = c*W + j, element k at chunk_offset[c] + k*W + j.
template <bool Periodic, class T>
__global__ void __launch_bounds__(128) sorted_kernel(VariableBatchView v, VariableDeviceArrays<T> x, T* cs, T* zs,
                                                     int* bad_system) {
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (p >= v.count) return;
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
                                                         T* zs, int* bad_system) {
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (p >= v.count) return;
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

// Length of one scratch array (c*, and z when periodic): laid out like the data for the
// interleaved layouts, packed (the plan's offsets) for the contiguous ones.
template <class T>
index_t scratch_length(VariableKernel kernel, const VariableBatchView& v, index_t stride, int rows) {
  switch (kernel) {
    case VariableKernel::padded:
    case VariableKernel::stop_at_size: return v.count && rows ? (static_cast<index_t>(rows) - 1) * stride + v.count : 0;
    case VariableKernel::sorted: return v.sorted_span;
    default: return v.total;
  }
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
  T* cs = static_cast<T*>(workspace);
  T* zs = periodic ? cs + scratch_length<T>(kernel, v, x.stride, x.rows) : nullptr;
  const unsigned threads = 128;
  const unsigned blocks = static_cast<unsigned>((v.count + threads - 1) / threads);
  switch (kernel) {
    case VariableKernel::padded:
      if (periodic)
        padded_kernel<true, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      else
        padded_kernel<false, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      break;
    case VariableKernel::stop_at_size:
      if (periodic)
        padded_kernel<true, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      else
        padded_kernel<false, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      break;
    case VariableKernel::sorted:
      if (periodic)
        sorted_kernel<true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      else
        sorted_kernel<false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      break;
    case VariableKernel::compact:
      if (periodic)
        contiguous_kernel<true, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      else
        contiguous_kernel<false, false, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      break;
    case VariableKernel::pointers:
      if (periodic)
        contiguous_kernel<true, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      else
        contiguous_kernel<false, true, T><<<blocks, threads, 0, st>>>(v, x, cs, zs, bad_system);
      break;
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend
