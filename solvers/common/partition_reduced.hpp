#pragma once
// The reduced system of the partition method (adi/mpi/distributed_tridiagonal.cpp): the
// 2P rows of one line, tridiagonal, cyclic for periodic lines, solved by Thomas (with
// Sherman-Morrison when cyclic). One template for the host reduced solve and the device
// one (solvers/cuda/partition_local_passes.cu), so both run the same arithmetic in the same order.
#include "solvers/common/thomas_core.hpp"

#if defined(__CUDACC__)
#define ADI_PARTITION_HD __host__ __device__ __forceinline__
#else
#define ADI_PARTITION_HD inline
#endif

namespace adi::cuda_backend::partition {

// n >= 2 rows; row(k) points at (a, b, c, d) of row k; s(j, k) is a T& to scratch slot j
// (0, 1, 2) of row k. On return s(1, k) holds the solution x_k. Non-periodic systems
// have a_0 = c_{n-1} = 0 (ignored). Cyclic: Sherman-Morrison with gamma = -b_0 (the
// usual choice keeps the modified system diagonally dominant when the original is).
template <class T, class Row, class Scratch>
ADI_PARTITION_HD void solve_reduced_rows(int n, bool periodic, const Row& row, const Scratch& s) {
  if (!periodic) {
    const T* r0 = row(0);
    s(0, 0) = r0[2] / r0[1];
    s(1, 0) = r0[3] / r0[1];
    for (int k = 1; k < n; ++k) {
      const T* r = row(k);
      const T den = T(1) / common::thomas_pivot(r[0], r[1], s(0, k - 1));
      s(0, k) = r[2] * den;
      s(1, k) = common::thomas_eliminate(r[3], r[0], s(1, k - 1), den);
    }
    for (int k = n - 2; k >= 0; --k) s(1, k) = common::thomas_substitute(s(1, k), s(0, k), s(1, k + 1));
    return;
  }
  // Slots: 0 = c', 1 = d' then x, 2 = z' then z (the Sherman-Morrison correction vector).
  const T* r0 = row(0);
  const T* rl = row(n - 1);
  const common::PeriodicSplit<T> split(r0[0], r0[1], rl[2]);
  {
    const T bb = split.b_first(r0[1]);
    s(0, 0) = r0[2] / bb;
    s(1, 0) = r0[3] / bb;
    s(2, 0) = split.gamma / bb;
  }
  for (int k = 1; k < n; ++k) {
    const T* r = row(k);
    const T ak = r[0];
    const T bk = k == n - 1 ? split.b_last(r[1]) : r[1];
    const T den = T(1) / common::thomas_pivot(ak, bk, s(0, k - 1));
    s(0, k) = (k == n - 1 ? T(0) : r[2]) * den;
    s(1, k) = common::thomas_eliminate(r[3], ak, s(1, k - 1), den);
    s(2, k) = common::thomas_eliminate(k == n - 1 ? split.cn : T(0), ak, s(2, k - 1), den);
  }
  for (int k = n - 2; k >= 0; --k) {
    s(1, k) = common::thomas_substitute(s(1, k), s(0, k), s(1, k + 1));
    s(2, k) = common::thomas_substitute(s(2, k), s(0, k), s(2, k + 1));
  }
  const T fact = split.factor(s(1, 0), s(1, n - 1), split.den(s(2, 0), s(2, n - 1)));
  for (int k = 0; k < n; ++k) s(1, k) = split.correct(s(1, k), fact, s(2, k));
}

}  // namespace adi::cuda_backend::partition
