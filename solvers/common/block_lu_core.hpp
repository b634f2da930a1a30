#pragma once
// The pivot-block solve of block Thomas and the block partition method, written once:
// S X = R for an M x M block S by LU with partial pivoting (rows of S and R swapped as the
// pivots are chosen, the multipliers applied to R as S is factorised, then back
// substitution), for any number of right-hand-side columns. S is read and written through
// s(i, j) (an Eigen matrix, a register array, a row-major buffer); R through a policy that
// owns its rows:
//     r.swap(k, p)        swap rows k and p
//     r.axpy(i, f, k)     row i -= f * row k
//     r.scale(i, inv)     row i *= inv
// Row swaps use compile-time row indices (a select over the rows below k), so register
// arrays keep constant indices on the GPU. A block is singular when a pivot is at or below
// tol * max|S| or S holds a non-finite value (the block families' SingularSystem test).
// Callers: solvers/cpu/block_thomas.cpp (host block Thomas, Eigen rows), the block
// partition passes on the device (solvers/cuda/block_partition_local_passes.cuh) and on
// the host (adi/mpi/distributed_block_tridiagonal.cpp), and the GPU block Thomas's one-thread
// form for M = 2, 3 and fp32 M = 4 (block_thomas_thread_kernel) and two-thread form (block_thomas_pair_kernel,
// both through thread_eliminate_row). Its other forms (solvers/cuda/block_thomas.cuh)
// spread the block over M threads, one column each, and run Gauss-Jordan instead (gauss_jordan
// there); the fp64 oracle is solvers/reference/block_thomas.hpp.
#if defined(__CUDACC__)
#define ADI_BLOCK_LU_HD __host__ __device__ __forceinline__
#else
#define ADI_BLOCK_LU_HD inline
#endif
#if defined(__CUDA_ARCH__)
#define ADI_BLOCK_LU_UNROLL _Pragma("unroll")
#else
#define ADI_BLOCK_LU_UNROLL
#endif

namespace adi::common {

template <class T>
ADI_BLOCK_LU_HD T block_abs(T x) {
  return x < T(0) ? -x : x;  // NaN stays NaN
}

// Solves S X = R in place (R becomes X; S is overwritten by its factors). False when a
// pivot is at or below tol * max|S|, or max|S| is zero or not finite. n: the block size,
// M unless a caller passes a runtime one (the rolled device block partition passes, where
// every loop below stays a loop: `#pragma unroll` unrolls only constant trip counts).
template <class T, int M, class S, class R>
ADI_BLOCK_LU_HD bool block_lu_solve(S& s, R& r, T tol, int n = M) {
  T mx = 0;
  ADI_BLOCK_LU_UNROLL
  for (int i = 0; i < n; ++i) {
    ADI_BLOCK_LU_UNROLL
    for (int j = 0; j < n; ++j) mx = mx < block_abs(s(i, j)) ? block_abs(s(i, j)) : mx;
  }
  if (!(mx > T(0)) || !(mx - mx == T(0))) return false;
  const T thr = tol * mx;
  ADI_BLOCK_LU_UNROLL
  for (int k = 0; k < n; ++k) {
    int p = k;
    T best = block_abs(s(k, k));
    ADI_BLOCK_LU_UNROLL
    for (int i = k + 1; i < n; ++i)
      if (block_abs(s(i, k)) > best) best = block_abs(s(i, k)), p = i;
    if (!(best > thr)) return false;
    ADI_BLOCK_LU_UNROLL
    for (int i = k + 1; i < n; ++i)
      if (i == p) {
        ADI_BLOCK_LU_UNROLL
        for (int j = 0; j < n; ++j) {
          const T t = s(k, j);
          s(k, j) = s(i, j);
          s(i, j) = t;
        }
        r.swap(k, i);
      }
    const T inv = T(1) / s(k, k);
    ADI_BLOCK_LU_UNROLL
    for (int i = k + 1; i < n; ++i) {
      const T f = s(i, k) *= inv;
      ADI_BLOCK_LU_UNROLL
      for (int j = k + 1; j < n; ++j) s(i, j) -= f * s(k, j);
      r.axpy(i, f, k);
    }
  }
  ADI_BLOCK_LU_UNROLL
  for (int i = n - 1; i >= 0; --i) {
    ADI_BLOCK_LU_UNROLL
    for (int k = i + 1; k < n; ++k) r.axpy(i, s(i, k), k);
    r.scale(i, T(1) / s(i, i));
  }
  return true;
}

}  // namespace adi::common
