#pragma once
// The Thomas sweep of a variable-size batch, written once for every level of
// parallelism: V is a scalar T (one CUDA thread, one host system) or a host SIMD vector
// (lanes on neighbouring systems), N the matching per-lane sizes (int, or an integer
// vector of the same lane count and lane width). Lanes run `rows` rows in lock step;
// rows k >= n of a lane are identity rows (CP: loaded then replaced, so the padding's
// contents never matter), row n-1 drops its c (or, periodic, turns it into the
// Sherman-Morrison corner). Included by solvers/cuda/thomas_variable*.cu too, so it
// compiles as C++17 host-device code with no library header.
//
// The Io policy (per level) provides, for row k of every lane:
//   V a(k, live), b(k, live), c(k, live), d(k, live)
//                                              loads; the value of dead lanes is ignored,
//                                              so an Io may load them (CP: the padding is
//                                              read, paper 3.1) or skip them (predicated)
//   void put(k, cs, ds, zs, live)              forward-sweep scratch (zs only if periodic)
//   void get(k, cs&, ds&, zs&, live)           the same values back (anything for dead lanes)
//   void store(k, x, live)                     the solution (non-periodic), or y (periodic)
//   void store_z(k, z, live)                   periodic: the second solution z
//   void fix(k, f, live)                       periodic: u[k] = y[k] - f z[k]
#if defined(__CUDACC__)
#define ADI_VT_HD __host__ __device__ __forceinline__
#else
#define ADI_VT_HD inline
#endif
// Unrolling the row loops on the GPU lets the loads of the next rows issue before the
// recurrence of this one finishes (a thread has no other memory-level parallelism).
#if defined(__CUDA_ARCH__)
#define ADI_VT_UNROLL _Pragma("unroll 4")
#else
#define ADI_VT_UNROLL
#endif

#include "solvers/common/thomas_check.hpp"
#include "solvers/common/thomas_core.hpp"

namespace adi::variable_thomas {

// Lanes whose value is zero, infinite or NaN (r - r is 0 only for finite r). Applied to
// 1/pivot it also flags pivots so small that their reciprocal overflows.
template <class V>
ADI_VT_HD auto not_finite_or_zero(const V& r) {
  return (r - r != V{}) | (r == V{});
}

// Solves every lane; returns the lanes that met a zero or non-finite pivot (a mask, or
// a bool for scalars).
template <bool Periodic, class V, class N, class Io>
ADI_VT_HD auto solve(Io& io, const N& n, int rows) {
  const V zero{};
  const V one = zero + 1;
  const N n1 = n - 1;
  auto bad = n < 0;  // all clear, of the mask type
  if (rows <= 0) return bad;
  V cs = zero, ds = zero, zs = zero;
  V gamma = zero, beta = zero;
  common::PeriodicSplit<common::lane_type<V>, V> split{};  // gamma, q = beta / gamma: set in row 0

  // Row 0: no a; periodic lanes keep a[0] as the corner beta and take gamma = -b[0].
  {
    const auto live = 0 < n;
    const auto last = n1 == 0;
    const V bl = io.b(0, live), cl = io.c(0, live), dl = io.d(0, live);
    V b = live ? bl : one;
    const V c0 = live ? cl : zero;
    V c = last ? zero : c0;
    const V d = live ? dl : zero;
    V v = zero;
    if constexpr (Periodic) {
      const auto wide = n >= 2;
      const V al = io.a(0, live);
      const V a0 = live ? al : zero;
      gamma = -b;
      beta = wide ? a0 : zero;
      v = wide ? gamma : zero;
      // n >= 2: b - gamma;  n == 1: the 1x1 periodic row (a + b + c) u = d.
      b = wide ? b - gamma : (last ? a0 + b + c0 : b);
    }
    const V r = one / b;
    bad = bad | (live & not_finite_or_zero(r));
    cs = c * r;
    // The device's form of the check (thomas_check.hpp: |c*| > 4), which CUDA runs in place
    // of thomas_unsafe_lanes (compiled out of device code); nothing on the host.
    bad = bad | (live & common::thomas_unsafe_on_device(cs));
    ds = d * r;
    if constexpr (Periodic) {
      zs = v * r;
      split.gamma = gamma;
      split.q = beta / gamma;
    }
    io.put(0, cs, ds, zs, live);
  }
  ADI_VT_UNROLL
  for (int k = 1; k < rows; ++k) {
    const auto live = k < n;
    const auto last = n1 == k;
    const V al = io.a(k, live), bl = io.b(k, live), cl = io.c(k, live), dl = io.d(k, live);
    const V a = live ? al : zero;
    V b = live ? bl : one;
    const V craw = live ? cl : zero;
    const V c = last ? zero : craw;
    const V d = live ? dl : zero;
    V v = zero;
    if constexpr (Periodic) {
      split.cn = craw;
      b = last ? split.b_last(b) : b;
      v = last ? craw : zero;
    }
    const V r = one / common::thomas_pivot(a, b, cs);
    // The stability check every Thomas loop applies (thomas_check.hpp): tau = 4.
    bad = bad | (live & (not_finite_or_zero(r) |
                         common::thomas_unsafe_lanes(a * cs, a, b, c, (one + one) * (one + one))));
    cs = c * r;
    bad = bad | (live & common::thomas_unsafe_on_device(cs));
    ds = common::thomas_eliminate(d, a, ds, r);
    if constexpr (Periodic) zs = common::thomas_eliminate(v, a, zs, r);
    io.put(k, cs, ds, zs, live);
  }

  V x = zero, xz = zero, yl = zero, zl = zero;
  ADI_VT_UNROLL
  for (int k = rows - 1; k >= 0; --k) {
    const auto live = k < n;
    V c_k = zero, d_k = zero, z_k = zero;
    io.get(k, c_k, d_k, z_k, live);
    // The substitution is formed before the select, not inside `live ? ... : zero`: with
    // the core's call in the arm, nvcc keeps a branch per row that it does not turn back
    // into a select, and the one-thread-per-contiguous-system kernel (compact layout) ran
    // 1.11-1.12x slower on an H200. Written this way every non-periodic variable kernel's
    // machine code is byte-identical to a517daf's (scripts/compare_cubin.py).
    const V xk = common::thomas_substitute(d_k, c_k, x);
    x = live ? xk : zero;
    io.store(k, x, live);
    if constexpr (Periodic) {
      const V zk = common::thomas_substitute(z_k, c_k, xz);
      xz = live ? zk : zero;
      io.store_z(k, xz, live);
      yl = (n1 == k) ? x : yl;
      zl = (n1 == k) ? xz : zl;
    }
  }
  if constexpr (Periodic) {
    // u = y - f z with f = (y0 + beta/gamma y[n-1]) / (1 + z0 + beta/gamma z[n-1]);
    // z is 0 for lanes of size < 2, so they keep u = y.
    const V den = split.den(xz, zl);
    const V rden = one / den;
    bad = bad | ((n >= 2) & not_finite_or_zero(rden));
    const V f = (n >= 2) ? split.factor_inv(x, yl, rden) : zero;
    for (int k = 0; k < rows; ++k) io.fix(k, f, k < n);
  }
  return bad;
}

}  // namespace adi::variable_thomas
