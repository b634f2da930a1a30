#pragma once
// Thread-per-line Thomas (paper section 6.2). Consecutive threads take consecutive
// lines, so where neighbouring lines are adjacent in memory (Y/Z sweeps, interleaved
// batches: stride0 == 1) each warp-wide load or store is one coalesced row.
// `Chunk` rows of every array are loaded before they are used, putting 4*Chunk loads
// per thread in flight; Chunk = 1 is the naive baseline (thomas_naive.cuh).
// Intermediates: y* is written to u (its final place; the backward pass re-reads it),
// c* (and z* for periodic lines) to the workspace laid out [row][line], coalesced.
// SharedBands stream only d and u (factors from thomas_factors.cuh).
#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/thomas_factors.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"
#include "solvers/common/thomas_check.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/thomas_core.hpp"

namespace adi::cuda_backend::kernels {

template <class T, int Chunk, bool Shared>
__global__ void __launch_bounds__(128)
    thomas_thread_per_line_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                                  const T* __restrict__ c, const T* d, T* u, T* __restrict__ wc,
                                  T* __restrict__ wz, ThomasFactors<T> f, bool periodic, int* flag) {
  const i64 nl = L.lines();
  const i64 line = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= nl) return;
  const i64 n = L.n, st = L.stride, off = L.offset(line);
  auto at = [&](i64 i) { return off + i * st; };
  auto ws = [&](i64 i) { return i * nl + line; };
  bool bad = false;

  if (!Shared && periodic && n == 1) {  // (a + b + c) u = d
    const T p = a[off] + b[off] + c[off];
    bad |= bad_pivot(p);
    u[off] = d[off] / p;
    report(bad, flag);
    return;
  }
  T a0 = T(0), b0 = T(1), cn = T(0);
  if (!Shared && periodic) {
    a0 = a[off];
    b0 = b[off];
    cn = c[at(n - 1)];
  }
  const PeriodicSplit<T> split(a0, b0, cn);
  if (!Shared && periodic) bad |= bad_pivot(split.gamma);

  // Forward elimination.
  T cp = T(0), yp = T(0), zp = T(0);
  for (i64 i0 = 0; i0 < n; i0 += Chunk) {
    T va[Chunk], vb[Chunk], vc[Chunk], vd[Chunk];
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i0 + j;
      if (i < n) {
        vd[j] = d[at(i)];
        if (!Shared) {
          va[j] = a[at(i)];
          vb[j] = b[at(i)];
          vc[j] = c[at(i)];
        }
      }
    }
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i0 + j;
      if (i >= n) break;
      if (Shared) {
        yp = common::thomas_eliminate_factored(vd[j], ldg(f.r + i), ldg(f.ra + i), yp);
      } else {
        const T ai = i == 0 ? T(0) : va[j];
        const T ci = i == n - 1 ? T(0) : vc[j];
        const T bi = periodic ? split.b(i, n, vb[j]) : vb[j];
        const T piv = common::thomas_pivot(ai, bi, cp);
        bad |= bad_pivot(piv) || common::thomas_unsafe<T>(ai * cp, ai, bi, ci);
        const T r = T(1) / piv;
        cp = ci * r;
        bad |= common::thomas_unsafe_on_device(cp);
        yp = common::thomas_eliminate(vd[j], ai, yp, r);
        wc[ws(i)] = cp;
        if (periodic) {
          zp = common::thomas_eliminate(split.v(i, n), ai, zp, r);
          wz[ws(i)] = zp;
        }
      }
      u[at(i)] = yp;
    }
  }

  // Back substitution; u_{n-1} = y*_{n-1} is already in place.
  const T yl = yp, zl = zp;
  T un = yp, zn = zp;
  for (i64 i1 = n - 2; i1 >= 0; i1 -= Chunk) {
    T vy[Chunk], vcs[Chunk], vz[Chunk];
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i1 - j;
      if (i >= 0) {
        vy[j] = u[at(i)];
        vcs[j] = Shared ? ldg(f.cs + i) : wc[ws(i)];
        if (!Shared && periodic) vz[j] = wz[ws(i)];
      }
    }
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i1 - j;
      if (i < 0) break;
      un = common::thomas_substitute(vy[j], vcs[j], un);
      if (Shared) bad |= common::thomas_unsafe_on_device(vcs[j]);  // the shared multipliers, as read
      u[at(i)] = un;
      if (!Shared && periodic) {
        zn = common::thomas_substitute(vz[j], vcs[j], zn);
        wz[ws(i)] = zn;
      }
    }
  }

  // Periodic: u = y - f z.
  if (periodic) {
    T fc;
    if (Shared) {
      PeriodicSplit<T> sh{};
      sh.q = ldg(f.s);
      fc = sh.factor_inv(un, yl, ldg(f.s + 1));
    } else {
      const T den = split.den(zn, zl);
      bad |= bad_pivot(den) || common::singular_cyclic<T>(den, zn, split.qz(zl));
      fc = split.factor(un, yl, den);
    }
    for (i64 i0 = 0; i0 < n; i0 += Chunk) {
      T vy[Chunk], vz[Chunk];
#pragma unroll
      for (int j = 0; j < Chunk; ++j) {
        const i64 i = i0 + j;
        if (i < n) {
          vy[j] = u[at(i)];
          vz[j] = Shared ? ldg(f.z + i) : wz[ws(i)];
        }
      }
#pragma unroll
      for (int j = 0; j < Chunk; ++j) {
        const i64 i = i0 + j;
        if (i < n) u[at(i)] = PeriodicSplit<T>::correct(vy[j], fc, vz[j]);
      }
    }
  }
  report(bad, flag);
}

// Workspace: shared bands need the factors; per-line bands need c* (and z*).
inline std::size_t thomas_thread_per_line_workspace(const LineSet& l, bool periodic, std::size_t value_size) {
  const std::size_t shared = 4 * slice_bytes(l.n, value_size) + slice_bytes(2, value_size);
  const std::size_t count = static_cast<std::size_t>(l.n) * static_cast<std::size_t>(l.lines());
  const std::size_t bands = slice_bytes(count, value_size) * (periodic ? 2 : 1);
  return shared > bands ? shared : bands;
}

template <class T, int Chunk>
void launch_thomas_thread_per_line(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                                   void* workspace, int* flag, cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  const i64 nl = L.lines();
  constexpr int threads = 128;
  const unsigned blocks = static_cast<unsigned>((nl + threads - 1) / threads);
  ScratchCursor cur{static_cast<char*>(workspace)};
  if (bands.shared) {
    ThomasFactorStorage<T> fs(cur, L.n);
    launch_thomas_shared_factors<T>(L.n, bands.a, bands.b, bands.c, periodic, fs, flag, stream);
    thomas_thread_per_line_kernel<T, Chunk, true><<<blocks, threads, 0, stream>>>(
        L, nullptr, nullptr, nullptr, d, u, nullptr, nullptr, fs.view(), periodic, flag);
  } else {
    const std::size_t count = static_cast<std::size_t>(L.n) * static_cast<std::size_t>(nl);
    T* wc = cur.take<T>(count);
    T* wz = periodic ? cur.take<T>(count) : nullptr;
    thomas_thread_per_line_kernel<T, Chunk, false><<<blocks, threads, 0, stream>>>(
        L, bands.a, bands.b, bands.c, d, u, wc, wz, ThomasFactors<T>{}, periodic, flag);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
