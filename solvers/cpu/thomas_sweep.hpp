#pragma once
// The Thomas sweeps of one group of W lines solved together, one line per SIMD lane
// (paper section 2.1, algorithm 1; periodic lines by Sherman-Morrison). Every host
// kernel runs these; they differ only in how a row of the W lines is read and
// written (the Source and Sink types of each kernel file):
//
//   struct Source {                      // rows come in blocks of `block`
//     static constexpr int block;
//     template <bool Bands> void load(index_t i0, int cnt);  // rows i0 .. i0+cnt-1
//     V a(int k), b(int k), c(int k), d(int k);              // row i0+k, lane j = line j
//   };                                   // (a, b, c only read when Bands)
//   struct Sink {
//     static constexpr int block;
//     void begin(index_t i0, int cnt);  void put(int k, const V& u);  void flush();
//   };
//
// Scratch holds c* and d* (and z* for periodic lines) of the W lines, n vectors each:
// W*n values per array, small enough for L1/L2 (paper section 5).
#include <algorithm>

#include "adi/layout.hpp"
#include "solvers/cpu/simd.hpp"

namespace adi::cpu::detail {

template <class T, int W>
struct Scratch {
  simd::Vec<T, W>* cs;
  simd::Vec<T, W>* ds;
  simd::Vec<T, W>* zs;  // periodic lines only
};

// The factorisation of coefficients that every line shares (SharedBands): computed
// once per solve so that the sweep of a line reads only d and writes u.
template <class T>
struct SharedFactor {
  const T* cs = nullptr;  // c*_i of A (of A' when periodic)
  const T* r = nullptr;   // 1 / pivot_i
  const T* m = nullptr;   // a_i / pivot_i, 0 in row 0
  const T* z = nullptr;   // periodic: the correction vector A'^{-1} v
  T bg = 0;               // periodic: beta / gamma = a_0 / (-b_0)
  T inv_den = 0;          // periodic: 1 / (1 + z_0 + bg z_{n-1})
};

template <class T>
inline bool finite_nonzero(T x) {
  return x - x == T(0) && x != T(0);
}

// Factorises the shared bands into cs, r, m (and z for periodic lines; n >= 3 then),
// arrays of n values. Returns false on a zero or non-finite pivot.
template <class T>
bool factor_shared(index_t n, const T* a, const T* b, const T* c, bool periodic, T* cs, T* r, T* m,
                   T* z, SharedFactor<T>& f) {
  bool ok = true;
  // Sherman-Morrison (as the reference): A = A' + v w^T, v = (gamma, 0.., alpha),
  // w = (1, 0.., beta/gamma), gamma = -b_0, alpha = c_{n-1}, beta = a_0.
  const T gamma = periodic ? -b[0] : T(0);
  const T alpha = periodic ? c[n - 1] : T(0);
  const T bg = periodic ? a[0] / gamma : T(0);
  T csp = 0, zp = 0;
  for (index_t i = 0; i < n; ++i) {
    const T ai = i == 0 ? T(0) : a[i];
    T bi = b[i];
    if (periodic && i == 0) bi -= gamma;
    if (periodic && i == n - 1) bi -= alpha * bg;
    const T ri = T(1) / (bi - ai * csp);
    ok = ok && finite_nonzero(ri);
    csp = i + 1 < n ? c[i] * ri : T(0);  // c[n-1] is not part of A (nor of A')
    r[i] = ri;
    m[i] = ai * ri;
    cs[i] = csp;
    if (periodic) {
      const T vi = i == 0 ? gamma : i == n - 1 ? alpha : T(0);
      zp = (vi - ai * zp) * ri;
      z[i] = zp;
    }
  }
  f.cs = cs;
  f.r = r;
  f.m = m;
  if (periodic) {
    for (index_t i = n - 2; i >= 0; --i) z[i] -= cs[i] * z[i + 1];
    f.z = z;
    f.bg = bg;
    f.inv_den = T(1) / (T(1) + z[0] + bg * z[n - 1]);
    ok = ok && finite_nonzero(f.inv_den);
  }
  return ok;
}

// Runs body(k) for k in [k0, k1); with a full block the trip count is a constant,
// so the compiler unrolls it and keeps a transposed tile in registers.
template <int B, class F>
inline void for_rows(int k0, int k1, F&& body) {
  if (k0 == 0 && k1 == B) {
    for (int k = 0; k < B; ++k) body(k);
  } else {
    for (int k = k0; k < k1; ++k) body(k);
  }
}

// Per-lane corner terms of periodic lines.
template <class V>
struct Corner {
  V gamma{};
  V bg{};
};

// Forward elimination with per-line bands (algorithm 1, lines 1-7). Periodic lines
// eliminate A' with the two right-hand sides d and v at once (same pivots).
template <bool Periodic, class T, int W, class Src>
simd::Mask<simd::Vec<T, W>> forward_bands(index_t n, Src& src, const Scratch<T, W>& s,
                                          Corner<simd::Vec<T, W>>& cn) {
  using V = simd::Vec<T, W>;
  constexpr int B = Src::block;
  simd::Mask<V> bad{};
  V cs{}, ds{}, zs{};
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    const bool last = i0 + cnt == n;
    src.template load<true>(i0, cnt);
    int k0 = 0;
    if (i0 == 0) {  // row 0 has no a: a_0 is ignored (or is the corner beta)
      V b = src.b(0);
      if constexpr (Periodic) {
        cn.gamma = -b;
        cn.bg = src.a(0) / cn.gamma;
        b = b - cn.gamma;
      }
      const V r = T(1) / b;
      bad |= simd::not_finite_or_zero(r);
      cs = src.c(0) * r;
      ds = src.d(0) * r;
      s.cs[0] = cs;
      s.ds[0] = ds;
      if constexpr (Periodic) {
        zs = cn.gamma * r;
        s.zs[0] = zs;
      }
      k0 = 1;
    }
    const int k1 = Periodic && last ? cnt - 1 : cnt;
    for_rows<B>(k0, k1, [&](int k) {
      const V a = src.a(k);
      const V r = T(1) / (src.b(k) - a * cs);
      bad |= simd::not_finite_or_zero(r);
      cs = src.c(k) * r;
      ds = (src.d(k) - a * ds) * r;
      s.cs[i0 + k] = cs;
      s.ds[i0 + k] = ds;
      if constexpr (Periodic) {
        zs = -(a * zs) * r;
        s.zs[i0 + k] = zs;
      }
    });
    if constexpr (Periodic) {
      if (last) {  // row n-1 of A': b - alpha*beta/gamma, right-hand side v = alpha
        const int k = cnt - 1;
        const V a = src.a(k), alpha = src.c(k);
        const V r = T(1) / (src.b(k) - alpha * cn.bg - a * cs);
        bad |= simd::not_finite_or_zero(r);
        s.cs[n - 1] = V{};
        s.ds[n - 1] = (src.d(k) - a * ds) * r;
        s.zs[n - 1] = (alpha - a * zs) * r;
      }
    }
  }
  return bad;
}

// Forward elimination with shared bands: d*_i = d_i r_i - m_i d*_{i-1}; only d is read.
template <class T, int W, class Src>
void forward_shared(index_t n, Src& src, const Scratch<T, W>& s, const SharedFactor<T>& f) {
  using V = simd::Vec<T, W>;
  constexpr int B = Src::block;
  V ds{};
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    src.template load<false>(i0, cnt);
    const T* r = f.r + i0;
    const T* m = f.m + i0;
    for_rows<B>(0, cnt, [&](int k) {
      ds = src.d(k) * r[k] - m[k] * ds;
      s.ds[i0 + k] = ds;
    });
  }
}

// Back substitution u_{n-1} = d*_{n-1}, u_i = d*_i - c*_i u_{i+1} (algorithm 1, lines
// 8-10), straight into the sink. cs(i) gives c*_i (a lane vector or a shared scalar).
template <class T, int W, class Dst, class CS>
void backward_to(index_t n, Dst& dst, const simd::Vec<T, W>* ds, CS cs) {
  using V = simd::Vec<T, W>;
  constexpr int B = Dst::block;
  const index_t last0 = (n - 1) / B * B;
  V u{};
  for (index_t i0 = last0; i0 >= 0; i0 -= B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    int k1 = cnt;
    if (i0 == last0) {
      u = ds[n - 1];
      dst.put(cnt - 1, u);
      k1 = cnt - 1;
    }
    if (k1 == B) {
      for (int k = B - 1; k >= 0; --k) {
        u = ds[i0 + k] - cs(i0 + k) * u;
        dst.put(k, u);
      }
    } else {
      for (int k = k1 - 1; k >= 0; --k) {
        u = ds[i0 + k] - cs(i0 + k) * u;
        dst.put(k, u);
      }
    }
    dst.flush();
  }
}

// Back substitution in place in the scratch: ds becomes y = A'^{-1} d (and, when
// zs is given, zs becomes z = A'^{-1} v).
template <class T, int W, class CS>
void backward_in_place(index_t n, simd::Vec<T, W>* ds, simd::Vec<T, W>* zs, CS cs) {
  using V = simd::Vec<T, W>;
  V y = ds[n - 1], z{};
  if (zs) z = zs[n - 1];
  for (index_t i = n - 2; i >= 0; --i) {
    const auto c = cs(i);  // a lane vector or a shared scalar
    y = ds[i] - c * y;
    ds[i] = y;
    if (zs) {
      z = zs[i] - c * z;
      zs[i] = z;
    }
  }
}

// u_i = y_i - f z_i into the sink (Sherman-Morrison correction), z a lane vector or shared.
template <class T, int W, class Dst, class Z>
void correct_to(index_t n, Dst& dst, const simd::Vec<T, W>* y, const simd::Vec<T, W>& f, Z z) {
  constexpr int B = Dst::block;
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) { dst.put(k, y[i0 + k] - f * z(i0 + k)); });
    dst.flush();
  }
}

// Solves the W lines of one group. shared: the shared factorisation, or null for
// per-line bands. Periodic lines need n >= 3 here. Returns the lanes with a zero or
// non-finite pivot.
template <class T, int W, class Src, class Dst>
simd::Mask<simd::Vec<T, W>> solve_group(index_t n, bool periodic, const SharedFactor<T>* shared,
                                        Src& src, Dst& dst, const Scratch<T, W>& s) {
  using V = simd::Vec<T, W>;
  simd::Mask<V> bad{};
  if (shared) {
    const SharedFactor<T>& f = *shared;
    forward_shared<T, W>(n, src, s, f);
    auto cs = [&](index_t i) { return f.cs[i]; };
    if (!periodic) {
      backward_to<T, W>(n, dst, s.ds, cs);
      return bad;
    }
    backward_in_place<T, W>(n, s.ds, nullptr, cs);
    const V fac = (s.ds[0] + f.bg * s.ds[n - 1]) * f.inv_den;
    correct_to<T, W>(n, dst, s.ds, fac, [&](index_t i) { return f.z[i]; });
    return bad;
  }
  auto cs = [&](index_t i) { return s.cs[i]; };
  Corner<V> cn;
  if (!periodic) {
    bad = forward_bands<false, T, W>(n, src, s, cn);
    backward_to<T, W>(n, dst, s.ds, cs);
    return bad;
  }
  bad = forward_bands<true, T, W>(n, src, s, cn);
  backward_in_place<T, W>(n, s.ds, s.zs, cs);
  const V den = T(1) + s.zs[0] + cn.bg * s.zs[n - 1];
  const V inv = T(1) / den;
  bad |= simd::not_finite_or_zero(inv);
  const V fac = (s.ds[0] + cn.bg * s.ds[n - 1]) * inv;
  correct_to<T, W>(n, dst, s.ds, fac, [&](index_t i) { return s.zs[i]; });
  return bad;
}

}  // namespace adi::cpu::detail
