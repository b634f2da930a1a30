#pragma once
// Partial (row) pivoting of a variable-size batch on a CUDA device (issue 23, stop 37): one
// thread per system (systems are short and many: the batched thread route's choice,
// pivoting_thread_line.cuh), every layout VariableTridiagonalPlan takes (padded, sorted,
// compact, pointers; plain and periodic). The elimination is every pivoting route's
// (solvers/common/pivoting_core.hpp, through pivot_line / pivot_line_periodic of
// pivoting_line.hpp); this file only says where row k of system s lives, as thomas_variable.cuh
// does. y' goes to u (its final place), U's two super-diagonals u1', u2' (periodic: and its
// columns n-2, n-1) to the workspace, packed by the plan's offsets (row k of system s at
// offsets[s] + k: 2 * total values, 4 * total periodic; allocated with the plan). Threads take systems in the
// layout's order (padded: system s; sorted: sorted position p, so a warp's loads are one row of
// a chunk; compact, pointers: the size order, largest first).
#include <cuda_runtime.h>

#include "solvers/common/pivoting_line.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/pivoting_variable.hpp"

namespace adi::cuda_backend {

namespace variable_pivoting_detail {

// Row k of one system: data at base[k * rs], U's scaled rows at w1/w2[k].
template <class T>
struct PivotIo {
  const T* __restrict__ pa;
  const T* __restrict__ pb;
  const T* __restrict__ pc;
  const T* pd;  // may alias pu (in place)
  T* pu;
  index_t rs;
  T* __restrict__ w1;
  T* __restrict__ w2;
  T* __restrict__ w3;  // periodic only
  T* __restrict__ w4;

  __device__ T a(long long k) const { return pa[k * rs]; }
  __device__ T b(long long k) const { return pb[k * rs]; }
  __device__ T c(long long k) const { return pc[k * rs]; }
  __device__ T d(long long k) const { return pd[k * rs]; }
  __device__ void put(long long k, T u1, T u2, T y) const {
    w1[k] = u1;
    w2[k] = u2;
    pu[k * rs] = y;
  }
  __device__ void get(long long k, T& u1, T& u2, T& y) const {
    u1 = w1[k];
    u2 = w2[k];
    y = pu[k * rs];
  }
  __device__ void store(long long k, T x) const { pu[k * rs] = x; }
  __device__ void put_cyclic(long long k, T us, T ul) const {
    w3[k] = us;
    w4[k] = ul;
  }
  __device__ void get_cyclic(long long k, T& us, T& ul) const {
    us = w3[k];
    ul = w4[k];
  }
};

template <class T, bool Periodic>
__global__ void __launch_bounds__(128) pivoting_variable_kernel(VariableKernel kernel, VariableBatchView v,
                                                                VariableDeviceArrays<T> x, T* w1, T* w2, T* w3,
                                                                T* w4, int* bad_system) {
  const index_t p = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (p >= v.count) return;
  const bool padded = kernel == VariableKernel::padded || kernel == VariableKernel::stop_at_size;
  const index_t s = padded ? p : v.order[p];
  const int n = v.sizes[s];
  if (n <= 0) return;
  const index_t so = v.offsets[s];  // workspace: packed
  T* const c3 = Periodic ? w3 + so : nullptr;
  T* const c4 = Periodic ? w4 + so : nullptr;
  PivotIo<T> io{};
  if (kernel == VariableKernel::pointers) {
    io = PivotIo<T>{x.pa[s], x.pb[s], x.pc[s], x.pd[s], x.pu[s], 1, w1 + so, w2 + so, c3, c4};
  } else {
    index_t at = 0, rs = 1;
    if (padded) {
      at = s;
      rs = x.stride;
    } else if (kernel == VariableKernel::sorted) {
      const int W = v.chunk_width;
      at = v.chunk_offsets[p / W] + p % W;
      rs = W;
    } else {
      at = x.offsets[s];
    }
    io = PivotIo<T>{x.a + at, x.b + at, x.c + at, x.d + at, x.u + at, rs, w1 + so, w2 + so, c3, c4};
  }
  const bool bad = Periodic ? common::pivot_line_periodic<T>(io, n) : common::pivot_line<T>(io, n);
  if (bad && bad_system) atomicMin(bad_system, static_cast<int>(s));
}

}  // namespace variable_pivoting_detail

template <class T>
void variable_pivoting_launch(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                              bool periodic, void* workspace, int* bad_system, void* stream) {
  auto st = static_cast<cudaStream_t>(stream);
  // Bytes of 0x7f make kNoBadSystem.
  if (bad_system) ADI_CUDA_CHECK(cudaMemsetAsync(bad_system, 0x7f, sizeof(int), st));
  if (v.count == 0 || v.total == 0) return;
  T* w1 = static_cast<T*>(workspace);
  T* w2 = w1 + v.total;
  T* w3 = periodic ? w2 + v.total : nullptr;
  T* w4 = periodic ? w3 + v.total : nullptr;
  const unsigned threads = 128;
  const unsigned blocks = static_cast<unsigned>((v.count + threads - 1) / threads);
  using namespace variable_pivoting_detail;
  if (periodic)
    pivoting_variable_kernel<T, true><<<blocks, threads, 0, st>>>(kernel, v, x, w1, w2, w3, w4, bad_system);
  else
    pivoting_variable_kernel<T, false><<<blocks, threads, 0, st>>>(kernel, v, x, w1, w2, w3, w4, bad_system);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend
