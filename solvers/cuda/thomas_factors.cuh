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

// The periodic rank-one split of one line (reference/thomas.hpp: gamma = -b_0):
// A = A' + v w^T with b'_0 = b_0 - gamma, b'_{n-1} = b_{n-1} - c_{n-1} a_0 / gamma,
// v = (gamma, 0, ..., c_{n-1}), w = (1, 0, ..., a_0/gamma). n == 1 is the scalar
// (a+b+c) u = d and needs no correction.
template <class T>
struct PeriodicSplit {
  T gamma, q, cn;
  __device__ PeriodicSplit(T a0, T b0, T cn_) : gamma(-b0), q(a0 / -b0), cn(cn_) {}
  // Diagonal of A' at row i (n >= 2).
  __device__ T b(long long i, long long n, T bi) const {
    if (i == 0) bi -= gamma;
    if (i == n - 1) bi -= cn * q;
    return bi;
  }
  // Right-hand side v at row i.
  __device__ T v(long long i, long long n) const {
    return (i == 0 ? gamma : T(0)) + (i == n - 1 ? cn : T(0));
  }
};

// One thread factorises the shared bands (O(n), serial). Out-of-line rows: a_0 and
// c_{n-1} are ignored unless periodic.
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
  const PeriodicSplit<T> split(a[0], b[0], c[n - 1]);
  if (periodic) bad |= bad_pivot(split.gamma);
  T cp = T(0), zp = T(0);
  for (int64_t i = 0; i < n; ++i) {
    const T ai = i == 0 ? T(0) : a[i];
    const T ci = i == n - 1 ? T(0) : c[i];
    const T bi = periodic ? split.b(i, n, b[i]) : b[i];
    const T piv = bi - ai * cp;
    bad |= bad_pivot(piv) || common::thomas_unsafe<T>(ai * cp, ai, bi, ci);
    const T ri = T(1) / piv;
    r[i] = ri;
    ra[i] = ai * ri;
    cp = ci * ri;
    cs[i] = cp;
    if (periodic) {
      zp = (split.v(i, n) - ai * zp) * ri;
      z[i] = zp;
    }
  }
  if (periodic) {
    T zn = z[n - 1];
    for (int64_t i = n - 2; i >= 0; --i) {
      zn = z[i] - cs[i] * zn;
      z[i] = zn;
    }
    const T den = T(1) + z[0] + split.q * z[n - 1];
    bad |= bad_pivot(den) || common::singular_cyclic<T>(den, z[0], split.q * z[n - 1]);
    s[0] = split.q;
    s[1] = T(1) / den;
  }
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
