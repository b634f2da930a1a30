#pragma once
// Thomas along contiguous lines with a local transpose (paper section 6.1, algorithms
// 8 and 9): a warp owns 32 neighbouring lines. For each chunk of K rows (64 bytes of
// each line: 16 floats or 8 doubles) groups of K lanes load K consecutive values of one
// line (whole sectors, any alignment), a transpose policy hands every lane the K rows
// of its own line, and the lane runs K Thomas steps in registers. c*, y* (and z* for
// periodic lines) go to the workspace laid out [tile][row][lane], so those accesses are
// coalesced too; the backward pass transposes u back and stores whole sectors.
// The transpose is a policy: registers and shuffles (thomas_shuffle_transpose.cuh) or
// shared memory (thomas_shared_transpose.cuh).
#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/thomas_factors.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"
#include "solvers/common/thomas_check.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/thomas_core.hpp"

namespace adi::cuda_backend::kernels {

// Rows per chunk: 64 bytes of a line (paper 6.1.2: 16 single / 8 double values).
template <class T>
constexpr int transpose_chunk() {
  return 64 / static_cast<int>(sizeof(T));
}

constexpr int kTransposeWarps = 4;  // warps per block

template <class T, class Transpose, bool Shared>
__global__ void __launch_bounds__(kTransposeWarps* kWarp)
    thomas_transpose_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                            const T* __restrict__ c, const T* d, T* u, T* __restrict__ wc, T* __restrict__ wy,
                            T* __restrict__ wz, ThomasFactors<T> f, bool periodic, int* flag) {
  constexpr int K = transpose_chunk<T>();
  constexpr int G = kWarp / K;  // lane groups; group g loads lines j*G + g
  extern __shared__ unsigned char transpose_smem[];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const i64 nl = L.lines();
  const i64 tile = static_cast<i64>(blockIdx.x) * kTransposeWarps + warp;
  if (tile * kWarp >= nl) return;  // uniform per warp
  const Transpose tr(reinterpret_cast<T*>(transpose_smem) + warp * Transpose::values_per_warp);
  const int g = lane / K, p = lane % K;
  const i64 n = L.n, st = L.stride;
  const i64 chunks = (n + K - 1) / K;

  i64 loff[K];  // offsets of the lines this lane loads and stores
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const i64 line = tile * kWarp + j * G + g;
    loff[j] = line < nl ? L.offset(line) : i64(-1);
  }
  const bool own_valid = tile * kWarp + Transpose::own(lane) < nl;
  auto wsi = [&](i64 ch, int j) { return ((tile * chunks + ch) * K + j) * kWarp + lane; };
  auto load = [&](const T* src, T(&v)[K], i64 row, T fill) {
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = (loff[j] >= 0 && row < n) ? src[loff[j] + row * st] : fill;
  };
  bool bad = false;

  // Forward elimination, chunk by chunk.
  T cp = T(0), yp = T(0), zp = T(0);
  T a0 = T(0), b0 = T(1), cn = T(0);
  for (i64 ch = 0; ch < chunks; ++ch) {
    const i64 i0 = ch * K;
    T va[K], vb[K], vc[K], vd[K];
    load(d, vd, i0 + p, T(0));
    if (!Shared) {
      load(a, va, i0 + p, T(0));
      load(b, vb, i0 + p, T(1));
      load(c, vc, i0 + p, T(0));
    }
    tr.to_lines(vd);
    if (!Shared) {
      tr.to_lines(va);
      tr.to_lines(vb);
      tr.to_lines(vc);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const i64 i = i0 + j;
      if (i >= n) break;
      if (Shared) {
        yp = common::thomas_eliminate_factored(vd[j], ldg(f.r + i), ldg(f.ra + i), yp);
      } else {
        T ai = va[j], bi = vb[j], ci = vc[j];
        if (i == 0) {
          a0 = ai;
          b0 = bi;
          ai = T(0);
        }
        if (i == n - 1) {
          cn = ci;
          ci = T(0);
        }
        T vi = T(0);
        if (periodic) {
          if (n == 1) {
            bi = a0 + b0 + cn;
          } else {
            const PeriodicSplit<T> split(a0, b0, cn);
            if (i == 0) bad |= own_valid && bad_pivot(split.gamma);
            bi = split.b(i, n, bi);
            vi = split.v(i, n);
          }
        }
        const T piv = common::thomas_pivot(ai, bi, cp);
        bad |= own_valid && (bad_pivot(piv) || common::thomas_unsafe<T>(ai * cp, ai, bi, ci));
        const T r = T(1) / piv;
        cp = ci * r;
        bad |= own_valid && common::thomas_unsafe_on_device(cp);
        yp = common::thomas_eliminate(vd[j], ai, yp, r);
        wc[wsi(ch, j)] = cp;
        if (periodic) {
          zp = common::thomas_eliminate(vi, ai, zp, r);
          wz[wsi(ch, j)] = zp;
        }
      }
      wy[wsi(ch, j)] = yp;
    }
  }

  auto store = [&](T(&v)[K], i64 row) {
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (loff[j] >= 0 && row < n) u[loff[j] + row * st] = v[j];
  };

  // Back substitution, last chunk first. Non-periodic lines store u as they go.
  T un = T(0), zn = T(0), yl = T(0), zl = T(0);
  for (i64 ch = chunks - 1; ch >= 0; --ch) {
    const i64 i0 = ch * K;
    T vcs[K], vy[K], vz[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const i64 i = i0 + j;
      if (i < n) {
        vcs[j] = Shared ? ldg(f.cs + i) : wc[wsi(ch, j)];
        vy[j] = wy[wsi(ch, j)];
        if (!Shared && periodic) vz[j] = wz[wsi(ch, j)];
      }
    }
#pragma unroll
    for (int j = K - 1; j >= 0; --j) {
      const i64 i = i0 + j;
      if (i >= n) {
        vy[j] = T(0);
        continue;
      }
      un = common::thomas_substitute(vy[j], vcs[j], un);  // c*_{n-1} = 0, so row n-1 gives y*_{n-1}
      vy[j] = un;
      if (!Shared && periodic) {
        zn = common::thomas_substitute(vz[j], vcs[j], zn);
        vz[j] = zn;
      }
      if (i == n - 1) {
        yl = un;
        zl = zn;
      }
    }
    if (!periodic) {
      tr.from_lines(vy);
      store(vy, i0 + p);
    } else {
#pragma unroll
      for (int j = 0; j < K; ++j) {
        if (i0 + j < n) {
          wy[wsi(ch, j)] = vy[j];
          if (!Shared) wz[wsi(ch, j)] = vz[j];
        }
      }
    }
  }

  // Periodic: u = y - f z (Sherman-Morrison), a third pass over the chunks.
  if (periodic) {
    T fc = T(0);
    if (Shared) {
      PeriodicSplit<T> sh{};
      sh.q = ldg(f.s);
      fc = sh.factor_inv(un, yl, ldg(f.s + 1));
    } else if (n > 1) {
      const PeriodicSplit<T> split(a0, b0, cn);
      const T den = split.den(zn, zl);
      bad |= own_valid && (bad_pivot(den) || common::singular_cyclic<T>(den, zn, split.qz(zl)));
      fc = split.factor(un, yl, den);
    }
    for (i64 ch = 0; ch < chunks; ++ch) {
      const i64 i0 = ch * K;
      T vy[K];
#pragma unroll
      for (int j = 0; j < K; ++j) {
        const i64 i = i0 + j;
        vy[j] = i < n ? PeriodicSplit<T>::correct(wy[wsi(ch, j)], fc, Shared ? ldg(f.z + i) : wz[wsi(ch, j)]) : T(0);
      }
      tr.from_lines(vy);
      store(vy, i0 + p);
    }
  }
  report(bad, flag);
}

inline std::size_t thomas_transpose_workspace(const LineSet& l, bool periodic, std::size_t value_size) {
  const std::size_t k = 64 / value_size;
  const std::size_t tiles = static_cast<std::size_t>((l.lines() + kWarp - 1) / kWarp);
  const std::size_t rows = (static_cast<std::size_t>(l.n) + k - 1) / k * k;
  const std::size_t per = slice_bytes(tiles * rows * kWarp, value_size);
  const std::size_t shared = 4 * slice_bytes(l.n, value_size) + slice_bytes(2, value_size);
  // Bands: c*, y* (+ z*). Shared: y* (+ nothing: z is in the factors) and the factors.
  const std::size_t bands = per * (periodic ? 3 : 2);
  const std::size_t sh = per + shared;
  return bands > sh ? bands : sh;
}

template <class T, class Transpose>
void launch_thomas_transpose(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                             void* workspace, int* flag, cudaStream_t stream) {
  const DeviceLines L = to_device(ls);
  const i64 tiles = (L.lines() + kWarp - 1) / kWarp;
  const unsigned blocks = static_cast<unsigned>((tiles + kTransposeWarps - 1) / kTransposeWarps);
  const std::size_t smem = sizeof(T) * Transpose::values_per_warp * kTransposeWarps;
  constexpr int K = transpose_chunk<T>();
  const std::size_t per = static_cast<std::size_t>(tiles) * ((L.n + K - 1) / K * K) * kWarp;
  ScratchCursor cur{static_cast<char*>(workspace)};
  if (bands.shared) {
    T* wy = cur.take<T>(per);
    ThomasFactorStorage<T> fs(cur, L.n);
    launch_thomas_shared_factors<T>(L.n, bands.a, bands.b, bands.c, periodic, fs, flag, stream);
    thomas_transpose_kernel<T, Transpose, true><<<blocks, kTransposeWarps * kWarp, smem, stream>>>(
        L, nullptr, nullptr, nullptr, d, u, nullptr, wy, nullptr, fs.view(), periodic, flag);
  } else {
    T* wc = cur.take<T>(per);
    T* wy = cur.take<T>(per);
    T* wz = periodic ? cur.take<T>(per) : nullptr;
    thomas_transpose_kernel<T, Transpose, false><<<blocks, kTransposeWarps * kWarp, smem, stream>>>(
        L, bands.a, bands.b, bands.c, d, u, wc, wy, wz, ThomasFactors<T>{}, periodic, flag);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
