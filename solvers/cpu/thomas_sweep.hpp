#pragma once
// The Thomas sweeps of one group of lines solved together, one line per SIMD lane
// (paper section 2.1, algorithm 1; periodic lines by Sherman-Morrison). A group is K
// chunks of V (K*W lanes): row-outer, chunk-inner, so K independent dependency chains
// hide the latency of the division and each row reads K*W neighbouring values (wide
// groups are what makes strided Z sweeps stream, see thomas_vector.cpp).
//
// Every host kernel runs these; they differ only in how row i of the group is read and
// written (the Source and Sink types of each kernel file):
//
//   struct Source {                      // rows come in blocks of `block`
//     static constexpr int block;
//     template <bool Bands> void load(index_t i0, int cnt);  // rows i0 .. i0+cnt-1
//     V a(int k, int j), b(..), c(..), d(..);  // row i0+k, chunk j (lane = line)
//   };                                   // (a, b, c only read when Bands)
//   struct Sink {
//     static constexpr int block;
//     void begin(index_t i0, int cnt);  void put(int k, int j, const V& u);  void flush();
//   };
//
// Scratch holds c* and d* (and z* for periodic lines) of the group, row i chunk j at
// i*K + j: K*W*n values per array, sized by the kernels to stay in L1/L2 (paper section 5).
#include <algorithm>

#include "adi/base/layout.hpp"
#include "solvers/cpu/simd.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/pivoting_core.hpp"
#include "solvers/common/thomas_check.hpp"

namespace adi::cpu::detail {

template <class V>
struct Scratch {
  V* cs;
  V* ds;
  V* zs;            // periodic lines only
  V* us = nullptr;  // pivoting: the second super-diagonal of U (u2')
};

// How a group is solved (Problem::method): Thomas, Thomas with a fall-back to partial
// pivoting for a group whose check fires (the rows are re-read; nothing has been written
// yet), or partial pivoting (solvers/common/pivoting_core.hpp).
enum class Method { thomas, automatic, pivoting };

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
  // Pivoting (pivoting == true): cs holds u1', r 1/pivot, m the multipliers, u2 u2', sw
  // 1 where rows i and i+1 swapped (pivoting_core.hpp replay_step).
  bool pivoting = false;
  const T* u2 = nullptr;
  const T* sw = nullptr;
};

template <class T>
inline bool finite_nonzero(T x) {
  return x - x == T(0) && x != T(0);
}

// Factorises the shared bands into cs, r, m (and z for periodic lines; n >= 3 then),
// arrays of n values. Returns false on a zero or non-finite pivot.
template <class T>
bool factor_shared(index_t n, const T* a, const T* b, const T* c, bool periodic, T* cs, T* r, T* m, T* z,
                   SharedFactor<T>& f) {
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
    ok = ok && finite_nonzero(ri) && !common::thomas_unsafe<T>(ai * csp, ai, bi, i + 1 < n ? c[i] : T(0));
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
    const T den = T(1) + z[0] + bg * z[n - 1];
    f.inv_den = T(1) / den;
    ok = ok && finite_nonzero(f.inv_den) && !common::singular_cyclic<T>(den, z[0], bg * z[n - 1]);
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

template <class V, int K>
struct GroupState {
  Corner<V> corner[K];
  simd::Mask<V> bad[K] = {};  // lanes that met a zero or non-finite pivot
};

// Forward elimination with per-line bands (algorithm 1, lines 1-7). Periodic lines
// eliminate A' with the two right-hand sides d and v at once (same pivots).
template <bool Periodic, class T, class V, int K, class Src>
void forward_bands(index_t n, Src& src, const Scratch<V>& s, GroupState<V, K>& g) {
  constexpr int B = Src::block;
  V cs[K] = {}, ds[K] = {}, zs[K] = {};  // the previous row: registers when K is small
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    const bool last = i0 + cnt == n;
    src.template load<true>(i0, cnt);
    int k0 = 0;
    if (i0 == 0) {  // row 0 has no a: a_0 is ignored (or is the corner beta)
      for (int j = 0; j < K; ++j) {
        V b = src.b(0, j);
        if constexpr (Periodic) {
          g.corner[j].gamma = -b;
          g.corner[j].bg = src.a(0, j) / g.corner[j].gamma;
          b = b - g.corner[j].gamma;
        }
        const V r = T(1) / b;
        g.bad[j] |= simd::not_finite_or_zero(r);
        cs[j] = src.c(0, j) * r;
        ds[j] = src.d(0, j) * r;
        s.cs[j] = cs[j];
        s.ds[j] = ds[j];
        if constexpr (Periodic) {
          zs[j] = g.corner[j].gamma * r;
          s.zs[j] = zs[j];
        }
      }
      k0 = 1;
    }
    const int k1 = Periodic && last ? cnt - 1 : cnt;
    for_rows<B>(k0, k1, [&](int k) {
      const index_t row = (i0 + k) * K;
      for (int j = 0; j < K; ++j) {
        const V a = src.a(k, j), b = src.b(k, j), c = src.c(k, j), acs = a * cs[j];
        const V r = T(1) / (b - acs);
        g.bad[j] |= simd::not_finite_or_zero(r) | common::thomas_unsafe<T>(acs, a, b, c);
        cs[j] = c * r;
        ds[j] = (src.d(k, j) - a * ds[j]) * r;
        s.cs[row + j] = cs[j];
        s.ds[row + j] = ds[j];
        if constexpr (Periodic) {
          zs[j] = -(a * zs[j]) * r;
          s.zs[row + j] = zs[j];
        }
      }
    });
    if constexpr (Periodic) {
      if (last) {  // row n-1 of A': b - alpha*beta/gamma, right-hand side v = alpha
        const int k = cnt - 1;
        const index_t row = (n - 1) * K;
        for (int j = 0; j < K; ++j) {
          const V a = src.a(k, j), alpha = src.c(k, j), acs = a * cs[j];
          const V b = src.b(k, j) - alpha * g.corner[j].bg;
          const V r = T(1) / (b - acs);
          g.bad[j] |= simd::not_finite_or_zero(r) | common::thomas_unsafe<T>(acs, a, b, V{});
          s.cs[row + j] = V{};
          s.ds[row + j] = (src.d(k, j) - a * ds[j]) * r;
          s.zs[row + j] = (alpha - a * zs[j]) * r;
        }
      }
    }
  }
}

// Forward elimination with shared bands: d*_i = d_i r_i - m_i d*_{i-1}; only d is read.
template <class T, class V, int K, class Src>
void forward_shared(index_t n, Src& src, const Scratch<V>& s, const SharedFactor<T>& f) {
  constexpr int B = Src::block;
  V ds[K] = {};
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    src.template load<false>(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) {
      const index_t i = i0 + k;
      const T r = f.r[i], m = f.m[i];
      for (int j = 0; j < K; ++j) {
        ds[j] = src.d(k, j) * r - m * ds[j];
        s.ds[i * K + j] = ds[j];
      }
    });
  }
}

// Back substitution u_{n-1} = d*_{n-1}, u_i = d*_i - c*_i u_{i+1} (algorithm 1, lines
// 8-10), straight into the sink. cs(i, j) gives c*_i (a lane vector or a shared scalar).
template <class V, int K, class Dst, class CS>
void backward_to(index_t n, Dst& dst, const V* ds, CS cs) {
  constexpr int B = Dst::block;
  const index_t last0 = (n - 1) / B * B;
  V u[K] = {};
  for (index_t i0 = last0; i0 >= 0; i0 -= B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    int k1 = cnt;
    if (i0 == last0) {
      for (int j = 0; j < K; ++j) {
        u[j] = ds[(n - 1) * K + j];
        dst.put(cnt - 1, j, u[j]);
      }
      k1 = cnt - 1;
    }
    auto row = [&](int k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) {
        u[j] = ds[i * K + j] - cs(i, j) * u[j];
        dst.put(k, j, u[j]);
      }
    };
    if (k1 == B) {
      for (int k = B - 1; k >= 0; --k) row(k);
    } else {
      for (int k = k1 - 1; k >= 0; --k) row(k);
    }
    dst.flush();
  }
}

// Back substitution in place in the scratch: ds becomes y = A'^{-1} d (and, when
// zs is given, zs becomes z = A'^{-1} v).
template <class V, int K, class CS>
void backward_in_place(index_t n, V* ds, V* zs, CS cs) {
  for (index_t i = n - 2; i >= 0; --i)
    for (int j = 0; j < K; ++j) {
      const auto c = cs(i, j);  // a lane vector or a shared scalar
      ds[i * K + j] -= c * ds[(i + 1) * K + j];
      if (zs) zs[i * K + j] -= c * zs[(i + 1) * K + j];
    }
}

// u_i = y_i - f z_i into the sink (Sherman-Morrison correction); z(i, j) a lane
// vector or a shared scalar.
template <class V, int K, class Dst, class Z>
void correct_to(index_t n, Dst& dst, const V* y, const V (&f)[K], Z z) {
  constexpr int B = Dst::block;
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) dst.put(k, j, y[i * K + j] - f[j] * z(i, j));
    });
    dst.flush();
  }
}

// --- partial pivoting (solvers/common/pivoting_core.hpp) ------------------------------

// Forward elimination with row interchanges, per-line bands: U row i (scaled by 1/pivot)
// goes to cs (u1'), us (u2'), ds (y') and, for periodic lines, zs (the correction
// vector's y'). Periodic lines eliminate A' (gamma of pivot_gamma) with d and v at once.
template <bool Periodic, class T, class V, int K, class Src>
void pivot_forward_bands(index_t n, Src& src, const Scratch<V>& s, GroupState<V, K>& g) {
  constexpr int B = Src::block;
  common::PivotRow<V> cur[K] = {};
  auto store = [&](index_t i, int j, const common::PivotOut<V>& o) {
    g.bad[j] |= simd::not_finite_or_zero(o.r);
    s.cs[i * K + j] = o.u1;
    s.us[i * K + j] = o.u2;
    s.ds[i * K + j] = o.y;
    if constexpr (Periodic) s.zs[i * K + j] = o.z;
  };
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    src.template load<true>(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) {
        const V a = src.a(k, j), d = src.d(k, j);
        V b = src.b(k, j), c = i == n - 1 ? V{} : src.c(k, j), v{};
        if (i == 0) {
          if constexpr (Periodic) {
            const V gamma = common::pivot_gamma(a, b);
            g.corner[j].gamma = gamma;
            g.corner[j].bg = a / gamma;
            b = b - gamma;
            v = gamma;
          }
          cur[j] = {b, c, d, v};
          continue;
        }
        if constexpr (Periodic) {
          if (i == n - 1) {  // row n-1 of A': b - alpha*beta/gamma, right-hand side v = alpha
            const V alpha = src.c(k, j);
            b = b - alpha * g.corner[j].bg;
            v = alpha;
          }
        }
        store(i - 1, j, common::pivot_step<T, Periodic>(cur[j], a, b, c, d, v));
      }
    });
  }
  for (int j = 0; j < K; ++j) store(n - 1, j, common::pivot_last<T, Periodic>(cur[j]));
}

// Forward replay of a shared pivoting factorisation on the right-hand sides only.
template <class T, class V, int K, class Src>
void pivot_forward_shared(index_t n, Src& src, const Scratch<V>& s, const SharedFactor<T>& f) {
  constexpr int B = Src::block;
  V cd[K] = {};
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    src.template load<false>(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) {
      const index_t i = i0 + k;
      if (i == 0) {
        for (int j = 0; j < K; ++j) cd[j] = src.d(0, j);
        return;
      }
      const bool sw = f.sw[i - 1] != T(0);
      const T m = f.m[i - 1], r = f.r[i - 1];
      for (int j = 0; j < K; ++j) s.ds[(i - 1) * K + j] = common::replay_step(sw, m, r, cd[j], src.d(k, j));
    });
  }
  for (int j = 0; j < K; ++j) s.ds[(n - 1) * K + j] = cd[j] * f.r[n - 1];
}

// x_i = y'_i - u1'_i x_{i+1} - u2'_i x_{i+2} (u1', u2' vanish past the end), into the
// sink, or in place when Dst is null (ys, and zs when given).
template <class V, int K, class Dst, class U1, class U2>
void pivot_backward_to(index_t n, Dst& dst, const V* ys, U1 u1, U2 u2) {
  constexpr int B = Dst::block;
  const index_t last0 = (n - 1) / B * B;
  V x1[K] = {}, x2[K] = {};
  for (index_t i0 = last0; i0 >= 0; i0 -= B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    for (int k = cnt - 1; k >= 0; --k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) {
        const V x = ys[i * K + j] - u1(i, j) * x1[j] - u2(i, j) * x2[j];
        x2[j] = x1[j];
        x1[j] = x;
        dst.put(k, j, x);
      }
    }
    dst.flush();
  }
}
template <class V, int K, class U1, class U2>
void pivot_backward_in_place(index_t n, V* ys, V* zs, U1 u1, U2 u2) {
  for (index_t i = n - 2; i >= 0; --i)
    for (int j = 0; j < K; ++j) {
      const auto p = u1(i, j), q = u2(i, j);
      const V x2 = i + 2 < n ? ys[(i + 2) * K + j] : V{};
      ys[i * K + j] -= p * ys[(i + 1) * K + j] + q * x2;
      if (zs) {
        const V z2 = i + 2 < n ? zs[(i + 2) * K + j] : V{};
        zs[i * K + j] -= p * zs[(i + 1) * K + j] + q * z2;
      }
    }
}

// Factorises shared bands with partial pivoting into the workspace arrays (n values each:
// u1', r, m, z, u2', sw). Returns false on a zero or non-finite pivot (or a singular
// periodic correction).
template <class T>
bool factor_shared_pivoting(index_t n, const T* a, const T* b, const T* c, bool periodic, T* u1, T* r, T* m,
                            T* z, T* u2, T* sw, SharedFactor<T>& f) {
  bool ok = true;
  const T gamma = periodic ? common::pivot_gamma(a[0], b[0]) : T(0);
  const T bg = periodic ? a[0] / gamma : T(0);
  common::PivotRow<T> cur{b[0] - gamma, n > 1 ? c[0] : T(0), T(0), gamma};
  auto store = [&](index_t i, const common::PivotOut<T>& o) {
    ok = ok && finite_nonzero(o.r);
    u1[i] = o.u1;
    u2[i] = o.u2;
    r[i] = o.r;
    m[i] = o.m;
    z[i] = o.z;
  };
  for (index_t i = 1; i < n; ++i) {
    T bi = b[i], ci = i == n - 1 ? T(0) : c[i], v = 0;
    if (periodic && i == n - 1) {
      bi -= c[n - 1] * bg;
      v = c[n - 1];
    }
    sw[i - 1] = common::magnitude(a[i]) > common::magnitude(cur.b) ? T(1) : T(0);
    store(i - 1, common::pivot_step<T, true>(cur, a[i], bi, ci, T(0), v));
  }
  store(n - 1, common::pivot_last<T, true>(cur));
  sw[n - 1] = 0;
  f = SharedFactor<T>{};
  f.pivoting = true;
  f.cs = u1;
  f.r = r;
  f.m = m;
  f.u2 = u2;
  f.sw = sw;
  if (periodic) {
    for (index_t i = n - 2; i >= 0; --i) z[i] -= u1[i] * z[i + 1] + u2[i] * (i + 2 < n ? z[i + 2] : T(0));
    f.z = z;
    f.bg = bg;
    const T den = T(1) + z[0] + bg * z[n - 1];
    f.inv_den = T(1) / den;
    ok = ok && finite_nonzero(f.inv_den) && !common::singular_cyclic<T>(den, z[0], bg * z[n - 1]);
  }
  return ok;
}

// Solves a group with partial pivoting (per-line bands, or the shared pivoting factors).
template <class T, class V, int K, class Src, class Dst>
void pivot_group(index_t n, bool periodic, const SharedFactor<T>* shared, Src& src, Dst& dst,
                 const Scratch<V>& s, GroupState<V, K>& g) {
  V fac[K];
  if (shared) {
    const SharedFactor<T>& f = *shared;
    pivot_forward_shared<T, V, K>(n, src, s, f);
    auto u1 = [&](index_t i, int) { return f.cs[i]; };
    auto u2 = [&](index_t i, int) { return f.u2[i]; };
    if (!periodic) {
      pivot_backward_to<V, K>(n, dst, s.ds, u1, u2);
      return;
    }
    pivot_backward_in_place<V, K>(n, s.ds, nullptr, u1, u2);
    for (int j = 0; j < K; ++j) fac[j] = (s.ds[j] + f.bg * s.ds[(n - 1) * K + j]) * f.inv_den;
    correct_to<V, K>(n, dst, s.ds, fac, [&](index_t i, int) { return f.z[i]; });
    return;
  }
  auto u1 = [&](index_t i, int j) { return s.cs[i * K + j]; };
  auto u2 = [&](index_t i, int j) { return s.us[i * K + j]; };
  if (!periodic) {
    pivot_forward_bands<false, T, V, K>(n, src, s, g);
    pivot_backward_to<V, K>(n, dst, s.ds, u1, u2);
    return;
  }
  pivot_forward_bands<true, T, V, K>(n, src, s, g);
  pivot_backward_in_place<V, K>(n, s.ds, s.zs, u1, u2);
  for (int j = 0; j < K; ++j) {
    const V bg = g.corner[j].bg;
    const V qz = bg * s.zs[(n - 1) * K + j];
    const V den = T(1) + s.zs[j] + qz;
    const V inv = T(1) / den;
    g.bad[j] |= simd::not_finite_or_zero(inv) | common::singular_cyclic<T>(den, s.zs[j], qz);
    fac[j] = (s.ds[j] + bg * s.ds[(n - 1) * K + j]) * inv;
  }
  correct_to<V, K>(n, dst, s.ds, fac, [&](index_t i, int j) { return s.zs[i * K + j]; });
}

// Solves the K*W lines of one group. shared: the shared factorisation (Thomas or
// pivoting, f.pivoting), or null for per-line bands. Periodic lines need n >= 3 here.
// Returns the index of the first lane with a zero or non-finite pivot, a singular periodic
// correction, or (Method::thomas) a row that fails the check of thomas_check.hpp; -1 if none.
// Method::automatic re-solves a group whose Thomas elimination fails the check with
// partial pivoting before anything is written.
template <class T, class V, int K, class Src, class Dst>
int solve_group(index_t n, bool periodic, const SharedFactor<T>* shared, Src& src, Dst& dst,
                const Scratch<V>& s, Method method = Method::thomas) {
  constexpr int W = static_cast<int>(sizeof(V) / sizeof(T));
  GroupState<V, K> g;
  auto first_bad_lane = [&]() {
    for (int j = 0; j < K; ++j) {
      const int lane = simd::first_set<W>(g.bad[j]);
      if (lane >= 0) return j * W + lane;
    }
    return -1;
  };
  auto pivot = [&]() {
    GroupState<V, K> fresh;
    g = fresh;
    pivot_group<T, V, K>(n, periodic, shared, src, dst, s, g);
    return first_bad_lane();
  };
  if (method == Method::pivoting || (shared && shared->pivoting)) return pivot();
  V fac[K];
  if (shared) {
    const SharedFactor<T>& f = *shared;
    forward_shared<T, V, K>(n, src, s, f);
    auto cs = [&](index_t i, int) { return f.cs[i]; };
    if (!periodic) {
      backward_to<V, K>(n, dst, s.ds, cs);
    } else {
      backward_in_place<V, K>(n, s.ds, nullptr, cs);
      for (int j = 0; j < K; ++j) fac[j] = (s.ds[j] + f.bg * s.ds[(n - 1) * K + j]) * f.inv_den;
      correct_to<V, K>(n, dst, s.ds, fac, [&](index_t i, int) { return f.z[i]; });
    }
    return -1;  // the shared factorisation was checked once (prepare_shared)
  }
  auto cs = [&](index_t i, int j) { return s.cs[i * K + j]; };
  if (!periodic) {
    forward_bands<false, T, V, K>(n, src, s, g);
    if (method == Method::automatic && first_bad_lane() >= 0) return pivot();
    backward_to<V, K>(n, dst, s.ds, cs);
  } else {
    forward_bands<true, T, V, K>(n, src, s, g);
    backward_in_place<V, K>(n, s.ds, s.zs, cs);
    for (int j = 0; j < K; ++j) {
      const V bg = g.corner[j].bg;
      const V qz = bg * s.zs[(n - 1) * K + j];
      const V den = T(1) + s.zs[j] + qz;
      const V inv = T(1) / den;
      g.bad[j] |= simd::not_finite_or_zero(inv) | common::singular_cyclic<T>(den, s.zs[j], qz);
      fac[j] = (s.ds[j] + bg * s.ds[(n - 1) * K + j]) * inv;
    }
    if (method == Method::automatic && first_bad_lane() >= 0) return pivot();
    correct_to<V, K>(n, dst, s.ds, fac, [&](index_t i, int j) { return s.zs[i * K + j]; });
  }
  return first_bad_lane();
}

}  // namespace adi::cpu::detail
