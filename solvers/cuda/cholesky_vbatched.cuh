#pragma once
// Variable-size batched Cholesky on the GPU, after MAGMA's vbatched potrf (Abdelfattah et
// al., section III):
// - implicit sorting: a launch covers a range of the batch plan's size order (largest
//   first), so blocks scheduled together have similar sizes and the long ones start first;
// - early termination: a warp or block whose matrix is empty stops at once (ETM-classic),
//   threads past the rows of the current panel skip the work but keep the barriers
//   (ETM-aggressive);
// - a fused kernel for small sizes (a matrix per warp, held in registers, right-looking,
//   one shuffle per update) and a blocked left-looking kernel for the rest (a matrix per
//   block; each panel of NB columns is brought to shared memory, updated by all finished
//   columns with a register-tiled product, factored and solved in shared memory, written
//   back), the crossover set by a measurement (adi/batched_cholesky.cpp).
// Failures: the first column whose pivot is not positive and finite ends the matrix;
// columns before it are written, the others keep their input, info = column + 1.
#include <cuda_runtime.h>

#include <cfloat>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

namespace cholesky_detail {

template <class T>
__device__ __forceinline__ bool good_pivot(T d) {
  return d > T(0) && d <= (sizeof(T) == 8 ? DBL_MAX : FLT_MAX);
}
__device__ __forceinline__ float rsqrt_of(float x) { return rsqrtf(x); }
__device__ __forceinline__ double rsqrt_of(double x) { return rsqrt(x); }

// A matrix per warp, NMAX >= its size: lane i holds row i (a[k] = A(i, k)) in registers.
// Column j: the pivot comes from lane j, lane i scales its a[j], then every later column k
// is updated with L(k, j) taken from lane k by a shuffle.
template <class T, int NMAX, int WARPS>
__global__ void __launch_bounds__(32 * WARPS) fused_warp_kernel(VariableBatchView v, index_t first, index_t count,
                                                                T* const* A, const int* ld, int* info) {
  const int lane = threadIdx.x & 31;
  const index_t p = first + blockIdx.x * static_cast<index_t>(WARPS) + threadIdx.x / 32;
  if (p >= first + count) return;
  const index_t s = v.order[p];
  const int n = v.sizes[s];
  if (n == 0) {  // ETM: nothing to do
    if (lane == 0) info[s] = 0;
    return;
  }
  T* a_s = A[s];
  const long lds = ld[s];
  T a[NMAX];
#pragma unroll
  for (int k = 0; k < NMAX; ++k)
    a[k] = (lane < n && k < n && k <= lane) ? a_s[lane + k * lds] : (lane == k ? T(1) : T(0));
  int good = n;
#pragma unroll
  for (int j = 0; j < NMAX; ++j) {
    if (j >= n) break;
    const T piv = __shfl_sync(0xffffffffu, a[j], j);
    if (!good_pivot(piv)) {
      good = j;
      break;
    }
    const T r = rsqrt_of(piv);
    a[j] = lane == j ? piv * r : a[j] * r;
#pragma unroll
    for (int k = j + 1; k < NMAX; ++k) {
      const T lkj = __shfl_sync(0xffffffffu, a[j], k);
      a[k] -= a[j] * lkj;
    }
  }
  if (lane < n) {
#pragma unroll
    for (int k = 0; k < NMAX; ++k)
      if (k < good && k <= lane) a_s[lane + k * lds] = a[k];
  }
  if (lane == 0) info[s] = good < n ? good + 1 : 0;
}

// Launch shape of the blocked kernel: panel width NB, THREADS threads as TY x TX with
// TX = NB/4 column groups of 4 and TY row groups of 4 (RM = 4 TY rows per update pass).
template <int NB_, int THREADS_, int KT_ = 16>
struct Blocked {
  static constexpr int NB = NB_;
  static constexpr int THREADS = THREADS_;
  static constexpr int TX = NB / 4;
  static constexpr int TY = THREADS / TX;
  static constexpr int RM = 4 * TY;
  static constexpr int KT = KT_;  // k-depth of a staged tile
  // Registers capped at 128 per thread (512 / THREADS blocks per SM): the prefetched tile
  // must not cost the occupancy that hides the barriers.
  static_assert(NB % 4 == 0 && THREADS % TX == 0, "bad blocked shape");
};

// Dynamic shared memory of the blocked kernel for matrices up to `rows` rows.
template <class T, class P>
constexpr std::size_t blocked_shared_bytes(int rows) {
  return (static_cast<std::size_t>(rows) * (P::NB + 1) + P::KT * (P::RM + 4) + P::KT * (P::NB + 4)) * sizeof(T);
}

template <class T, class P>
__global__ void __launch_bounds__(P::THREADS, 512 / P::THREADS) blocked_kernel(VariableBatchView v, index_t first, int max_rows,
                                                             T* const* A, const int* ld, int* info) {
  constexpr int NB = P::NB, TX = P::TX, RM = P::RM, KT = P::KT, THREADS = P::THREADS;
  constexpr int PS = NB + 1;  // panel row stride (odd: rows land on different banks)
  // Staged values per thread (the B tile may have fewer values than threads).
  constexpr int LA = RM * KT / THREADS, LB = (NB * KT + THREADS - 1) / THREADS;
  static_assert(LA * THREADS == RM * KT, "the A tile must split evenly over the threads");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* Ps = reinterpret_cast<T*>(smem_raw);
  T* sA = Ps + static_cast<std::size_t>(max_rows) * PS;  // [KT][RM + 4]
  T* sB = sA + KT * (RM + 4);                            // [KT][NB + 4]
  const int tid = threadIdx.x;
  const int tx = tid % TX, ty = tid / TX;

  const index_t p = first + blockIdx.x;
  const index_t s = v.order[p];
  const int n = v.sizes[s];
  if (n == 0) {  // ETM-classic
    if (tid == 0) info[s] = 0;
    return;
  }
  T* a_s = A[s];
  const long lds = ld[s];
  auto at = [&](int i, int j) -> T& { return a_s[i + j * lds]; };
  int fail = n;

  for (int j0 = 0; j0 < n; j0 += NB) {
    const int m = n - j0, w = min(NB, m);
    // The panel A(j0:n, j0:j0+w) into shared memory (coalesced along the rows).
    for (int idx = tid; idx < m * NB; idx += THREADS) {
      const int r = idx % m, c = idx / m;
      Ps[r * PS + c] = c < w ? at(j0 + r, j0 + c) : T(0);
    }
    __syncthreads();
    // Left-looking update: Ps -= L(j0:n, 0:j0) * L(j0:j0+w, 0:j0)^T, RM rows per pass, each
    // thread a 4 x 4 tile in registers, KT columns of L staged at a time.
    if (j0 > 0) {
      for (int r0 = 0; r0 < m; r0 += RM) {
        T acc[4][4] = {};
        // The next k-tile of L is loaded into registers while the current one is multiplied
        // (one shared buffer, the global latency hidden behind the product).
        T pa[LA], pb[LB];
        auto fetch = [&](int k0) {
#pragma unroll
          for (int e = 0; e < LA; ++e) {
            const int idx = tid + e * THREADS, rr = idx % RM, kk = idx / RM;
            const int row = r0 + rr, k = k0 + kk;
            pa[e] = (row < m && k < j0) ? at(j0 + row, k) : T(0);
          }
#pragma unroll
          for (int e = 0; e < LB; ++e) {
            const int idx = tid + e * THREADS, cc = idx % NB, kk = idx / NB;
            const int k = k0 + kk;
            pb[e] = (idx < NB * KT && cc < w && k < j0) ? at(j0 + cc, k) : T(0);
          }
        };
        fetch(0);
        for (int k0 = 0; k0 < j0; k0 += KT) {
#pragma unroll
          for (int e = 0; e < LA; ++e) {
            const int idx = tid + e * THREADS;
            sA[(idx / RM) * (RM + 4) + idx % RM] = pa[e];
          }
#pragma unroll
          for (int e = 0; e < LB; ++e) {
            const int idx = tid + e * THREADS;
            if (idx < NB * KT) sB[(idx / NB) * (NB + 4) + idx % NB] = pb[e];
          }
          __syncthreads();
          if (k0 + KT < j0) fetch(k0 + KT);
          if (r0 + 4 * ty < m) {  // ETM-aggressive: row groups past the panel skip the product
#pragma unroll
            for (int kk = 0; kk < KT; ++kk) {
              T ra[4], rb[4];
#pragma unroll
              for (int i = 0; i < 4; ++i) ra[i] = sA[kk * (RM + 4) + 4 * ty + i];
#pragma unroll
              for (int j = 0; j < 4; ++j) rb[j] = sB[kk * (NB + 4) + 4 * tx + j];
#pragma unroll
              for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
            }
          }
          __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = r0 + 4 * ty + i;
          if (r < m) {
#pragma unroll
            for (int j = 0; j < 4; ++j)
              if (4 * tx + j < w) Ps[r * PS + 4 * tx + j] -= acc[i][j];
          }
        }
      }
      __syncthreads();
    }
    // Factor the panel in shared memory: column c's pivot, scale, update the panel's later
    // columns (rows below the diagonal block are the trsm of Algorithm 1, done in passing).
    int good = w;
    for (int c = 0; c < w; ++c) {
      const T piv = Ps[c * PS + c];
      if (!good_pivot(piv)) {  // every thread read the same value: a uniform branch
        good = c;
        break;
      }
      const T r = rsqrt_of(piv);
      __syncthreads();  // everyone has the pivot before it is overwritten
      for (int row = c + tid; row < m; row += THREADS) Ps[row * PS + c] = row == c ? piv * r : Ps[row * PS + c] * r;
      __syncthreads();
      for (int row = c + 1 + tid; row < m; row += THREADS) {
        const T lrc = Ps[row * PS + c];
        const int qmax = min(w - 1, row);
        for (int q = c + 1; q <= qmax; ++q) Ps[row * PS + q] -= lrc * Ps[q * PS + c];
      }
      __syncthreads();
    }
    // Write back the factored columns (lower part only; the strict upper triangle of the
    // diagonal block is never written).
    for (int idx = tid; idx < m * good; idx += THREADS) {
      const int r = idx % m, c = idx / m;
      if (r >= c) at(j0 + r, j0 + c) = Ps[r * PS + c];
    }
    if (good < w) {
      fail = j0 + good;
      break;
    }
    __syncthreads();  // the next panel reads these columns from global memory
  }
  if (tid == 0) info[s] = fail < n ? fail + 1 : 0;
}

// potrs: a block per matrix, the right-hand side in shared memory; forward and backward
// substitution column by column (the column of L read coalesced forward; its row, backward).
template <class T>
__global__ void __launch_bounds__(128) solve_kernel(VariableBatchView v, const T* const* L, const int* ld,
                                                    T* const* B, const int* ldb, int nrhs, const int* info) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* x = reinterpret_cast<T*>(smem_raw);
  const index_t s = v.order[blockIdx.x];
  const int n = v.sizes[s];
  if (n == 0 || (info && info[s] != 0)) return;
  const T* l = L[s];
  const long lds = ld[s];
  for (int r = 0; r < nrhs; ++r) {
    T* b = B[s] + static_cast<long>(r) * ldb[s];
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = b[i];
    for (int j = 0; j < n; ++j) {
      __syncthreads();
      const T xj = x[j] / l[j + j * lds];
      __syncthreads();
      if (threadIdx.x == 0) x[j] = xj;
      for (int i = j + 1 + threadIdx.x; i < n; i += blockDim.x) x[i] -= l[i + j * lds] * xj;
    }
    for (int j = n - 1; j >= 0; --j) {
      __syncthreads();
      const T xj = x[j] / l[j + j * lds];
      __syncthreads();
      if (threadIdx.x == 0) x[j] = xj;
      for (int i = threadIdx.x; i < j; i += blockDim.x) x[i] -= l[j + i * lds] * xj;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) b[i] = x[i];
    __syncthreads();
  }
}

template <class T>
__global__ void pointers_kernel(T* base, const index_t* offsets, index_t count, T** out) {
  const index_t s = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (s < count) out[s] = base + offsets[s];
}

template <class T, class P>
void launch_blocked(const VariableBatchView& v, const CholeskyRange& range, T* const* A, const int* ld, int* info,
                    cudaStream_t st) {
  const std::size_t bytes = blocked_shared_bytes<T, P>(range.max_size);
  ADI_CUDA_CHECK(cudaFuncSetAttribute(blocked_kernel<T, P>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(bytes)));
  blocked_kernel<T, P><<<static_cast<unsigned>(range.count), P::THREADS, bytes, st>>>(v, range.first, range.max_size,
                                                                                      A, ld, info);
}

template <class T, int NMAX>
void launch_fused(const VariableBatchView& v, const CholeskyRange& range, T* const* A, const int* ld, int* info,
                  cudaStream_t st) {
  constexpr int WARPS = 4;
  const unsigned blocks = static_cast<unsigned>((range.count + WARPS - 1) / WARPS);
  fused_warp_kernel<T, NMAX, WARPS><<<blocks, 32 * WARPS, 0, st>>>(v, range.first, range.count, A, ld, info);
}

// The blocked variants the dispatch table and the benchmark choose from.
using BlockedV0 = Blocked<16, 64, 8>;
using BlockedV1 = Blocked<32, 128>;
using BlockedV2 = Blocked<32, 256>;
using BlockedV3 = Blocked<16, 256, 8>;

}  // namespace cholesky_detail

template <class T>
void cholesky_launch(const VariableBatchView& v, const CholeskyRange& range, T* const* A, const int* ld, int* info,
                     void* stream) {
  using namespace cholesky_detail;
  if (range.count == 0) return;
  auto st = static_cast<cudaStream_t>(stream);
  if (range.kernel == CholeskyGpuKernel::fused) {
    if (range.max_size <= 8)
      launch_fused<T, 8>(v, range, A, ld, info, st);
    else if (range.max_size <= 16)
      launch_fused<T, 16>(v, range, A, ld, info, st);
    else
      launch_fused<T, 32>(v, range, A, ld, info, st);
  } else {
    switch (range.variant) {
      case 0: launch_blocked<T, BlockedV0>(v, range, A, ld, info, st); break;
      case 1: launch_blocked<T, BlockedV1>(v, range, A, ld, info, st); break;
      case 2: launch_blocked<T, BlockedV2>(v, range, A, ld, info, st); break;
      default: launch_blocked<T, BlockedV3>(v, range, A, ld, info, st); break;
    }
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void cholesky_solve_launch(const VariableBatchView& v, const T* const* L, const int* ld, T* const* B, const int* ldb,
                           int nrhs, const int* info, void* stream) {
  if (v.count == 0 || nrhs == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(std::max(v.max_size, 1)) * sizeof(T);
  cholesky_detail::solve_kernel<T><<<static_cast<unsigned>(v.count), 128, bytes, static_cast<cudaStream_t>(stream)>>>(
      v, L, ld, B, ldb, nrhs, info);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void cholesky_pointers_launch(T* base, const index_t* offsets, index_t count, T** out, void* stream) {
  if (count == 0) return;
  cholesky_detail::pointers_kernel<T><<<static_cast<unsigned>((count + 255) / 256), 256, 0,
                                        static_cast<cudaStream_t>(stream)>>>(base, offsets, count, out);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend
