#pragma once
// The scalar Thomas recurrence (paper algorithm 1) and the Sherman-Morrison split of a
// periodic line, written once for every backend and every family: host scalars, host SIMD
// lanes (GCC vectors: V) and CUDA threads. Each loop that eliminates a tridiagonal line
// (solvers/cpu/thomas_sweep.hpp, solvers/cuda/thomas_strided.cuh, thomas_transpose.cuh,
// pcr_warp_core.cuh, pcr_segment_registers.cuh, thomas_variable_core.hpp,
// partition_large_math.hpp, partition_reduced.hpp, the MPI partition passes) keeps only
// how its rows are loaded and stored (registers, shared memory, strided or transposed
// tiles) and calls these steps for the arithmetic, so the operations and their order are
// the same everywhere. The plain fp64 test oracle (solvers/reference/thomas.hpp) is the
// one loop that does not: it is written out on purpose, as the independent check. The
// partition method's extra recurrences (couplings to a segment's ends) build on these in
// solvers/common/partition_core.hpp.
//
//   forward   pivot_i = b_i - a_i c*_{i-1},  r_i = 1 / pivot_i,  c*_i = c_i r_i,
//             d*_i = (d_i - a_i d*_{i-1}) r_i          (thomas_pivot, thomas_eliminate)
//   shared    d*_i = r_i d_i - m_i d*_{i-1},  m_i = a_i r_i  (coefficients shared by all
//             lines: r, m, c* factorised once by factor_shared_bands)
//   backward  x_i = d*_i - c*_i x_{i+1}                  (thomas_substitute)
//   periodic  A = A' + v w^T, gamma = -b_0, v = (gamma, 0.., c_{n-1}),
//             w = (1, 0.., a_0/gamma): x = y - f z with A' y = d, A' z = v and
//             f = (y_0 + q y_{n-1}) / (1 + z_0 + q z_{n-1}), q = a_0/gamma (PeriodicSplit)
//
// The functions are force-inlined: after inlining the generated code is what the loops
// had when they spelled the arithmetic out (same loads, same operations in the same order,
// so the same contractions into FMA on the GPU).
#if defined(__CUDACC__)
#define ADI_THOMAS_HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define ADI_THOMAS_HD inline __attribute__((always_inline))
#else
#define ADI_THOMAS_HD inline
#endif

#include <type_traits>
#include <utility>

#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/thomas_check.hpp"

namespace adi::common {

// The scalar type of V: V itself, or the lane type of a GCC vector.
template <class V, class = void>
struct LaneType {
  using type = V;
};
template <class V>
struct LaneType<V, std::void_t<decltype(std::declval<V&>()[0])>> {
  using type = std::decay_t<decltype(std::declval<V&>()[0])>;
};
template <class V>
using lane_type = typename LaneType<V>::type;

// The pivot of row i: b_i - a_i c*_{i-1}.
template <class V>
ADI_THOMAS_HD V thomas_pivot(V a, V b, V cs_prev) {
  return b - a * cs_prev;
}

// The right-hand side of row i after elimination: (x_i - a_i x*_{i-1}) r_i, r_i = 1/pivot_i
// (d* for x = d; the periodic correction's z* for x = v).
template <class V, class R>
ADI_THOMAS_HD V thomas_eliminate(V x, V a, V xs_prev, R r) {
  return (x - a * xs_prev) * r;
}

// The same with the factors of shared coefficients: r_i x_i - m_i x*_{i-1}, m_i = a_i r_i.
template <class V, class S>
ADI_THOMAS_HD V thomas_eliminate_factored(V x, S r, S m, V xs_prev) {
  return r * x - m * xs_prev;
}

// Back substitution: x_i = x*_i - c*_i x_{i+1} (c* a lane vector or a shared scalar).
template <class V, class C>
ADI_THOMAS_HD V thomas_substitute(V xs, C cs, V x_next) {
  return xs - cs * x_next;
}

// The Sherman-Morrison split of a periodic line (as solvers/reference/thomas.hpp), n >= 2.
// T is the scalar type (constants), V the value type (T, or host SIMD lanes).
template <class T, class V = T>
struct PeriodicSplit {
  V gamma;  // -b_0
  V q;      // beta / gamma = a_0 / gamma
  V cn;     // alpha = c_{n-1}
  PeriodicSplit() = default;
  // Builds the split, handing gamma to check(gamma) (a zero gamma is a bad line) before q is
  // formed: the order the warp PCR's register allocation was measured with.
  template <class Check>
  ADI_THOMAS_HD static PeriodicSplit checked(V a0, V b0, V cn_, const Check& check) {
    PeriodicSplit s;
    s.gamma = -b0;
    check(s.gamma);
    s.q = a0 / s.gamma;
    s.cn = cn_;
    return s;
  }
  struct NoCheck {
    ADI_THOMAS_HD void operator()(const V&) const {}
  };
  ADI_THOMAS_HD PeriodicSplit(V a0, V b0, V cn_) : PeriodicSplit(checked(a0, b0, cn_, NoCheck{})) {}
  // The diagonal of A' in row 0 and row n-1.
  ADI_THOMAS_HD V b_first(V b0) const { return b0 - gamma; }
  ADI_THOMAS_HD V b_last(V bl) const { return bl - cn * q; }
  // The diagonal of A' at row i (n >= 2).
  template <class I>
  ADI_THOMAS_HD V b(I i, I n, V bi) const {
    if (i == 0) bi = b_first(bi);
    if (i == n - 1) bi = b_last(bi);
    return bi;
  }
  // The correction's right-hand side v at row i.
  template <class I>
  ADI_THOMAS_HD V v(I i, I n) const {
    return (i == 0 ? gamma : V{}) + (i == n - 1 ? cn : V{});
  }
  // q z_{n-1} and the denominator 1 + z_0 + q z_{n-1} (checked by cyclic_denominator.hpp).
  ADI_THOMAS_HD V qz(V zl) const { return q * zl; }
  ADI_THOMAS_HD V den(V z0, V zl) const { return T(1) + z0 + qz(zl); }
  // f = (y_0 + q y_{n-1}) / den, or times 1/den where that is at hand.
  ADI_THOMAS_HD V factor(V y0, V yl, V d) const { return (y0 + q * yl) / d; }
  ADI_THOMAS_HD V factor_inv(V y0, V yl, V inv_den) const { return (y0 + q * yl) * inv_den; }
  // The correction x_i = y_i - f z_i.
  template <class Z>
  ADI_THOMAS_HD static V correct(V y, V f, Z z) {
    return y - f * z;
  }
};

// A periodic line of two unknowns: each row's two couplings land on the other unknown,
// [b_0, a_0 + c_0; a_1 + c_1, b_1] x = d, solved by Cramer's rule with r = 1/det.
// (One unknown is the scalar (a + b + c) x = d.)
template <class T>
struct PeriodicPair {
  T m00, m01, m10, m11;
  ADI_THOMAS_HD PeriodicPair(T a0, T b0, T c0, T a1, T b1, T c1) : m00(b0), m01(a0 + c0), m10(a1 + c1), m11(b1) {}
  ADI_THOMAS_HD T det() const { return m00 * m11 - m01 * m10; }
  ADI_THOMAS_HD void solve(T d0, T d1, T r, T& x0, T& x1) const {
    x0 = (d0 * m11 - m01 * d1) * r;
    x1 = (m00 * d1 - m10 * d0) * r;
  }
};

// A reciprocal that is zero, infinite or NaN: the pivot it inverts is zero, not finite, or
// so small that 1/pivot overflows.
template <class T>
ADI_THOMAS_HD bool bad_reciprocal(T r) {
  return !(r - r == T(0)) || r == T(0);
}

// The factorisation of coefficients shared by every line, one thread or one host call:
// r_i = 1/pivot_i, m_i = a_i r_i, c*_i (c*_{n-1} = 0) and, periodic (n >= 2), the
// correction vector z = A'^{-1} v with q = a_0/gamma and inv_den = 1/(1 + z_0 + q z_{n-1}).
// a_0 and c_{n-1} are read only when periodic. Returns false on a zero or non-finite
// pivot, a row failing thomas_check.hpp (on the device: its multiplier test), or a singular
// periodic correction.
template <class T, class I>
ADI_THOMAS_HD bool factor_shared_bands(I n, const T* a, const T* b, const T* c, bool periodic, T* r, T* m,
                                       T* cs, T* z, T& q, T& inv_den) {
  bool ok = true;
  const PeriodicSplit<T> split(periodic ? a[0] : T(0), periodic ? b[0] : T(1), periodic ? c[n - 1] : T(0));
  T cp = T(0), zp = T(0);
  for (I i = 0; i < n; ++i) {
    const T ai = i == 0 ? T(0) : a[i];
    const T ci = i == n - 1 ? T(0) : c[i];
    const T bi = periodic ? split.b(i, n, b[i]) : b[i];
    const T ri = T(1) / thomas_pivot(ai, bi, cp);
    ok = ok && !bad_reciprocal(ri) && !thomas_unsafe<T>(ai * cp, ai, bi, ci);
    r[i] = ri;
    m[i] = ai * ri;
    cp = ci * ri;
    // The device's form of the check (|c*| > 4; thomas_check.hpp): thomas_unsafe above is
    // compiled out of device code, so without this the CUDA kernels that stream shared bands
    // through these factors (transposes, naive) would check zero pivots only. Once per solve.
    ok = ok && !thomas_unsafe_on_device(cp);
    cs[i] = cp;
    if (periodic) {
      zp = thomas_eliminate(split.v(i, n), ai, zp, ri);
      z[i] = zp;
    }
  }
  q = periodic ? split.q : T(0);
  inv_den = T(0);
  if (periodic) {
    T zn = z[n - 1];
    for (I i = n - 2; i >= 0; --i) {
      zn = thomas_substitute(z[i], cs[i], zn);
      z[i] = zn;
    }
    const T den = split.den(z[0], z[n - 1]);
    inv_den = T(1) / den;
    ok = ok && !bad_reciprocal(inv_den) && !singular_cyclic<T>(den, z[0], split.qz(z[n - 1]));
  }
  return ok;
}

}  // namespace adi::common
