#pragma once
// Kernel::cuda_pivoting: partial (row) pivoting, one thread per line, for every layout the
// tridiagonal plan takes (strided lines along x/y/z, LineSet, shared bands), periodic too.
// The elimination is the host's and the reference's (solvers/common/pivoting_core.hpp);
// consecutive threads take consecutive lines, so where neighbouring lines are adjacent in
// memory (Y/Z sweeps, interleaved batches) every load and store is one coalesced row, like
// thomas_strided.cuh. y' goes to u (its final place), U's two super-diagonals u1', u2'
// (and the periodic correction's z') to the workspace laid out [row][line], coalesced.
// Shared bands are read through the read-only cache by every thread (the pivots are the
// same for every line, but recomputing them costs no memory traffic).
#include "adi/base/error.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

template <class T, int Chunk, bool Shared>
__global__ void __launch_bounds__(128)
    pivoting_thread_per_line_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                                    const T* __restrict__ c, const T* d, T* u, T* __restrict__ w1,
                                    T* __restrict__ w2, T* __restrict__ wz, bool periodic, int* flag) {
  const i64 nl = L.lines();
  const i64 line = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= nl) return;
  const i64 n = L.n, st = L.stride, off = L.offset(line);
  auto at = [&](i64 i) { return off + i * st; };
  auto co = [&](const T* q, i64 i) { return Shared ? ldg(q + i) : q[at(i)]; };
  auto ws = [&](i64 i) { return i * nl + line; };
  bool bad = false;

  if (periodic && n <= 2) {  // as the reference: (a+b+c) u = d, or the 2x2 with both couplings
    if (n == 1) {
      const T p = co(a, 0) + co(b, 0) + co(c, 0);
      bad |= bad_pivot(p) || common::singular_self_coupled<T>(co(a, 0), co(b, 0), co(c, 0));
      u[at(0)] = d[at(0)] / p;
    } else {
      const T m00 = co(b, 0), m01 = co(a, 0) + co(c, 0), m10 = co(a, 1) + co(c, 1), m11 = co(b, 1);
      const T det = m00 * m11 - m01 * m10;
      bad |= bad_pivot(det);
      const T d0 = d[at(0)], d1 = d[at(1)];
      u[at(0)] = (d0 * m11 - m01 * d1) / det;
      u[at(1)] = (m00 * d1 - m10 * d0) / det;
    }
    report(bad, flag);
    return;
  }
  const T gamma = periodic ? common::pivot_gamma(co(a, 0), co(b, 0)) : T(0);
  const T bg = periodic ? co(a, 0) / gamma : T(0);
  common::PivotRow<T> cur{co(b, 0) - gamma, n > 1 ? co(c, 0) : T(0), d[at(0)], gamma};
  auto store = [&](i64 i, const common::PivotOut<T>& o) {
    bad |= bad_pivot(o.r);
    w1[ws(i)] = o.u1;
    w2[ws(i)] = o.u2;
    u[at(i)] = o.y;
    if (periodic) wz[ws(i)] = o.z;
  };
  // Forward elimination, rows loaded Chunk at a time (4*Chunk loads in flight).
  for (i64 i0 = 1; i0 < n; i0 += Chunk) {
    T va[Chunk], vb[Chunk], vc[Chunk], vd[Chunk];
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i0 + j;
      if (i < n) {
        va[j] = co(a, i);
        vb[j] = co(b, i);
        vc[j] = co(c, i);
        vd[j] = d[at(i)];
      }
    }
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i0 + j;
      if (i >= n) break;
      T bi = vb[j], ci = i == n - 1 ? T(0) : vc[j], v = T(0);
      if (periodic && i == n - 1) {
        bi -= vc[j] * bg;
        v = vc[j];
      }
      if (periodic)
        store(i - 1, common::pivot_step<T, true>(cur, va[j], bi, ci, vd[j], v));
      else
        store(i - 1, common::pivot_step<T, false>(cur, va[j], bi, ci, vd[j], v));
    }
  }
  store(n - 1, periodic ? common::pivot_last<T, true>(cur) : common::pivot_last<T, false>(cur));

  // Back substitution x_i = y'_i - u1'_i x_{i+1} - u2'_i x_{i+2}.
  T x1 = u[at(n - 1)], x2 = T(0);
  T z1 = periodic ? wz[ws(n - 1)] : T(0), z2 = T(0);
  const T yl = x1, zl = z1;
  for (i64 i = n - 2; i >= 0; --i) {
    const T p = w1[ws(i)], q = w2[ws(i)];
    const T x = u[at(i)] - p * x1 - q * x2;
    x2 = x1;
    x1 = x;
    u[at(i)] = x;
    if (periodic) {
      const T z = wz[ws(i)] - p * z1 - q * z2;
      z2 = z1;
      z1 = z;
      wz[ws(i)] = z;
    }
  }
  if (periodic) {  // u = y - f z, f = (y_0 + bg y_{n-1}) / (1 + z_0 + bg z_{n-1})
    const T den = T(1) + z1 + bg * zl;
    bad |= bad_pivot(den) || common::singular_cyclic<T>(den, z1, bg * zl);
    const T f = (x1 + bg * yl) / den;
    for (i64 i = 0; i < n; ++i) u[at(i)] -= f * wz[ws(i)];
  }
  report(bad, flag);
}

// Workspace: u1', u2' (and z') per row and line.
inline std::size_t pivoting_thread_per_line_workspace(const LineSet& l, bool periodic, std::size_t value_size) {
  const std::size_t count = static_cast<std::size_t>(l.n) * static_cast<std::size_t>(l.lines());
  return slice_bytes(count, value_size) * (periodic ? 3 : 2);
}

template <class T, int Chunk>
void launch_pivoting_thread_per_line(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                                     void* workspace, int* flag, cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  const i64 nl = L.lines();
  constexpr int threads = 128;
  const unsigned blocks = static_cast<unsigned>((nl + threads - 1) / threads);
  ScratchCursor cur{static_cast<char*>(workspace)};
  const std::size_t count = static_cast<std::size_t>(L.n) * static_cast<std::size_t>(nl);
  T* w1 = cur.take<T>(count);
  T* w2 = cur.take<T>(count);
  T* wz = periodic ? cur.take<T>(count) : nullptr;
  if (bands.shared)
    pivoting_thread_per_line_kernel<T, Chunk, true><<<blocks, threads, 0, stream>>>(
        L, bands.a, bands.b, bands.c, d, u, w1, w2, wz, periodic, flag);
  else
    pivoting_thread_per_line_kernel<T, Chunk, false><<<blocks, threads, 0, stream>>>(
        L, bands.a, bands.b, bands.c, d, u, w1, w2, wz, periodic, flag);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
