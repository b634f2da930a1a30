#pragma once
// Line-independent Thomas factors for SharedBands (the Thomas-family kernels: naive,
// strided, shuffle/shared transpose). With a, b, c the same for every line, the
// factorisation r_i = 1/(b_i - a_i c*_{i-1}), c*_i = c_i r_i does not depend on the
// line, so it is computed once per solve and each line streams only d and u:
//   forward   y_i = r_i d_i - (a_i r_i) y_{i-1}
//   backward  u_i = y_i - c*_i u_{i+1}
// Periodic lines (Sherman-Morrison, as in solvers/reference/thomas.hpp): the modified
// matrix A' and the correction vector z = A'^{-1} v are line-independent too, so only
// f = (y_0 + q y_{n-1}) / (1 + z_0 + q z_{n-1}) is per line.
#include "solvers/cuda/tridiagonal_common.cuh"
#include "solvers/common/thomas_check.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/thomas_core.hpp"

namespace adi::cuda_backend::kernels {

// Pointers into the workspace (all length n, except s: {q, 1/den}).
template <class T>
struct ThomasFactors {
  const T* r = nullptr;   // 1 / pivot
  const T* ra = nullptr;  // a_i / pivot
  const T* cs = nullptr;  // c*_i
  const T* z = nullptr;   // periodic: A'^{-1} v
  const T* s = nullptr;   // periodic: q = a_0/gamma, 1/(1 + z_0 + q z_{n-1})
};

// The periodic rank-one split of one line (common::PeriodicSplit, gamma = -b_0).
template <class T>
using PeriodicSplit = common::PeriodicSplit<T>;

// One thread factorises the shared bands (O(n), serial; common::factor_shared_bands).
// Out-of-line rows: a_0 and c_{n-1} are ignored unless periodic.
template <class T>
__global__ void thomas_shared_factors_kernel(int64_t n, const T* __restrict__ a, const T* __restrict__ b,
                                             const T* __restrict__ c, bool periodic, T* r, T* ra, T* cs, T* z,
                                             T* s, int* flag) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  bool bad = false;
  if (periodic && n == 1) {
    const T p = a[0] + b[0] + c[0];
    bad |= bad_pivot(p);
    r[0] = T(1) / p;
    ra[0] = T(0);
    cs[0] = T(0);
    z[0] = T(0);
    s[0] = T(0);
    s[1] = T(0);
    report(bad, flag);
    return;
  }
  bad = !common::factor_shared_bands<T>(n, a, b, c, periodic, r, ra, cs, z, s[0], s[1]);
  report(bad, flag);
}

// Workspace layout of the shared factors: five slices (r, ra, cs, z, s).
template <class T>
struct ThomasFactorStorage {
  T *r, *ra, *cs, *z, *s;
  static std::size_t bytes(int64_t n) { return 4 * slice_bytes(n, sizeof(T)) + slice_bytes(2, sizeof(T)); }
  explicit ThomasFactorStorage(ScratchCursor& cur, int64_t n)
      : r(cur.take<T>(n)), ra(cur.take<T>(n)), cs(cur.take<T>(n)), z(cur.take<T>(n)), s(cur.take<T>(2)) {}
  ThomasFactors<T> view() const { return {r, ra, cs, z, s}; }
};

template <class T>
void launch_thomas_shared_factors(int64_t n, const T* a, const T* b, const T* c, bool periodic,
                                  const ThomasFactorStorage<T>& f, int* flag, cudaStream_t stream) {
  thomas_shared_factors_kernel<T>
      <<<1, 32, 0, stream>>>(n, a, b, c, periodic, f.r, f.ra, f.cs, f.z, f.s, flag);
}

}  // namespace adi::cuda_backend::kernels
