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
#include "solvers/common/thomas_core.hpp"

namespace adi::cpu::detail {

template <class V>
struct Scratch {
  V* cs;
  V* ds;
  V* zs;            // periodic lines only (pivoting: U's column n-2)
  V* us = nullptr;  // pivoting: the second super-diagonal of U (u2')
  V* vs = nullptr;  // pivoting, periodic lines: U's column n-1
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
  // Pivoting (pivoting == true): the lines are solved with the bands broadcast to the lanes
  // (BroadcastBands), nothing is factorised once.
  bool pivoting = false;
  const T* sa = nullptr;
  const T* sb = nullptr;
  const T* sc = nullptr;
};

template <class T>
inline bool finite_nonzero(T x) {
  return x - x == T(0) && x != T(0);
}

// Factorises the shared bands into cs, r, m (and z for periodic lines; n >= 3 then),
// arrays of n values (solvers/common/thomas_core.hpp). Returns false on a zero or
// non-finite pivot.
template <class T>
bool factor_shared(index_t n, const T* a, const T* b, const T* c, bool periodic, T* cs, T* r, T* m, T* z,
                   SharedFactor<T>& f) {
  const bool ok = common::factor_shared_bands<T>(n, a, b, c, periodic, r, m, cs, z, f.bg, f.inv_den);
  f.cs = cs;
  f.r = r;
  f.m = m;
  if (periodic) f.z = z;
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

template <class T, class V, int K>
struct GroupState {
  common::PeriodicSplit<T, V> corner[K] = {};  // periodic lines: gamma, q = beta/gamma, alpha
  simd::Mask<V> bad[K] = {};  // lanes that met a zero or non-finite pivot
};

// Forward elimination with per-line bands (algorithm 1, lines 1-7). Periodic lines
// eliminate A' with the two right-hand sides d and v at once (same pivots).
template <bool Periodic, class T, class V, int K, class Src>
void forward_bands(index_t n, Src& src, const Scratch<V>& s, GroupState<T, V, K>& g) {
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
          g.corner[j] = common::PeriodicSplit<T, V>(src.a(0, j), b, V{});
          b = g.corner[j].b_first(b);
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
        const V a = src.a(k, j), b = src.b(k, j), c = src.c(k, j);
        const V r = T(1) / common::thomas_pivot(a, b, cs[j]);
        g.bad[j] |= simd::not_finite_or_zero(r) | common::thomas_unsafe<T>(a * cs[j], a, b, c);
        cs[j] = c * r;
        ds[j] = common::thomas_eliminate(src.d(k, j), a, ds[j], r);
        s.cs[row + j] = cs[j];
        s.ds[row + j] = ds[j];
        if constexpr (Periodic) {
          zs[j] = common::thomas_eliminate(V{}, a, zs[j], r);  // v_i = 0 inside
          s.zs[row + j] = zs[j];
        }
      }
    });
    if constexpr (Periodic) {
      if (last) {  // row n-1 of A': b - alpha*beta/gamma, right-hand side v = alpha
        const int k = cnt - 1;
        const index_t row = (n - 1) * K;
        for (int j = 0; j < K; ++j) {
          const V a = src.a(k, j);
          g.corner[j].cn = src.c(k, j);
          const V b = g.corner[j].b_last(src.b(k, j));
          const V r = T(1) / common::thomas_pivot(a, b, cs[j]);
          g.bad[j] |= simd::not_finite_or_zero(r) | common::thomas_unsafe<T>(a * cs[j], a, b, V{});
          s.cs[row + j] = V{};
          s.ds[row + j] = common::thomas_eliminate(src.d(k, j), a, ds[j], r);
          s.zs[row + j] = common::thomas_eliminate(g.corner[j].cn, a, zs[j], r);
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
        ds[j] = common::thomas_eliminate_factored(src.d(k, j), r, m, ds[j]);
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
        u[j] = common::thomas_substitute(ds[i * K + j], cs(i, j), u[j]);
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
      ds[i * K + j] = common::thomas_substitute(ds[i * K + j], c, ds[(i + 1) * K + j]);
      if (zs) zs[i * K + j] = common::thomas_substitute(zs[i * K + j], c, zs[(i + 1) * K + j]);
    }
}

// u_i = y_i - f z_i into the sink (Sherman-Morrison correction); z(i, j) a lane
// vector or a shared scalar.
template <class T, class V, int K, class Dst, class Z>
void correct_to(index_t n, Dst& dst, const V* y, const V (&f)[K], Z z) {
  constexpr int B = Dst::block;
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) dst.put(k, j, common::PeriodicSplit<T, V>::correct(y[i * K + j], f[j], z(i, j)));
    });
    dst.flush();
  }
}

// --- partial pivoting (solvers/common/pivoting_core.hpp) ------------------------------

// Shared bands seen as per-line bands (every lane the same coefficient): the pivoting
// sweeps take them this way, so the right-hand side stays the only stream.
template <class T, class V, class Src>
struct BroadcastBands {
  static constexpr int block = Src::block;
  Src& src;
  const T* pa;
  const T* pb;
  const T* pc;
  index_t i0 = 0;
  template <bool Bands>
  void load(index_t i, int cnt) {
    i0 = i;
    src.template load<false>(i, cnt);
  }
  V a(int k, int) const { return V{} + pa[i0 + k]; }
  V b(int k, int) const { return V{} + pb[i0 + k]; }
  V c(int k, int) const { return V{} + pc[i0 + k]; }
  V d(int k, int j) const { return src.d(k, j); }
};

// Forward elimination with row interchanges: U row i (scaled by 1/pivot) goes to cs (u1'),
// us (u2') and ds (y').
template <class T, class V, int K, class Src>
void pivot_forward(index_t n, Src& src, const Scratch<V>& s, GroupState<T, V, K>& g) {
  constexpr int B = Src::block;
  common::PivotRow<V> cur[K] = {};
  auto store = [&](index_t i, int j, const common::PivotOut<V>& o) {
    g.bad[j] |= simd::not_finite_or_zero(o.r);
    s.cs[i * K + j] = o.u1;
    s.us[i * K + j] = o.u2;
    s.ds[i * K + j] = o.y;
  };
  for (index_t i0 = 0; i0 < n; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    src.template load<true>(i0, cnt);
    for_rows<B>(0, cnt, [&](int k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) {
        const V c = i == n - 1 ? V{} : src.c(k, j);  // c[n-1] is not part of the line
        if (i == 0)
          cur[j] = {src.b(k, j), c, src.d(k, j)};
        else
          store(i - 1, j, common::pivot_step<T>(cur[j], src.a(k, j), src.b(k, j), c, src.d(k, j)));
      }
    });
  }
  for (int j = 0; j < K; ++j) store(n - 1, j, common::pivot_last<T>(cur[j]));
}

// x_i = y'_i - u1'_i x_{i+1} - u2'_i x_{i+2} (u1', u2' vanish past the end), into the sink.
template <class V, int K, class Dst>
void pivot_backward(index_t n, Dst& dst, const Scratch<V>& s) {
  constexpr int B = Dst::block;
  const index_t last0 = (n - 1) / B * B;
  V x1[K] = {}, x2[K] = {};
  for (index_t i0 = last0; i0 >= 0; i0 -= B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    for (int k = cnt - 1; k >= 0; --k) {
      const index_t e = (i0 + k) * K;
      for (int j = 0; j < K; ++j) {
        const V x = s.ds[e + j] - s.cs[e + j] * x1[j] - s.us[e + j] * x2[j];
        x2[j] = x1[j];
        x1[j] = x;
        dst.put(k, j, x);
      }
    }
    dst.flush();
  }
}

// Periodic lines (n >= 3): the cyclic elimination of pivoting_core.hpp. Rows 0 and n-1 are
// read first (the sweep needs the last row from the start); U row i goes to cs (u1'), us
// (u2'), zs (us': column n-2), vs (ul': column n-1) and ds (y').
template <class T, class V, int K, class Src>
void cyclic_forward(index_t n, Src& src, const Scratch<V>& s, GroupState<T, V, K>& g) {
  constexpr int B = Src::block;
  common::CyclicRow<V> C[K], L[K];
  {
    V a0[K], b0[K], c0[K], d0[K];
    src.template load<true>(0, 1);
    for (int j = 0; j < K; ++j) {
      a0[j] = src.a(0, j);
      b0[j] = src.b(0, j);
      c0[j] = src.c(0, j);
      d0[j] = src.d(0, j);
    }
    src.template load<true>(n - 1, 1);
    for (int j = 0; j < K; ++j)
      common::cyclic_start(static_cast<long long>(n), a0[j], b0[j], c0[j], d0[j], src.a(0, j), src.b(0, j),
                           src.c(0, j), src.d(0, j), C[j], L[j]);
  }
  auto store = [&](index_t i, int j, const common::CyclicOut<V>& o) {
    g.bad[j] |= simd::not_finite_or_zero(o.r);
    const index_t e = i * K + j;
    s.cs[e] = o.u1;
    s.us[e] = o.u2;
    s.zs[e] = o.us;
    s.vs[e] = o.ul;
    s.ds[e] = o.y;
  };
  // Steps i = 0 .. n-3 meet rows 1 .. n-2.
  for (index_t i0 = 1; i0 <= n - 2; i0 += B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - 1 - i0));
    src.template load<true>(i0, cnt);
    for (int k = 0; k < cnt; ++k) {
      const index_t row = i0 + k, i = row - 1;
      for (int j = 0; j < K; ++j) {
        const common::CyclicRow<V> N =
            common::cyclic_row(i + 2 == n - 1, src.a(k, j), src.b(k, j), src.c(k, j), src.d(k, j));
        store(i, j, common::cyclic_step<T>(C[j], L[j], N, i + 2 == n - 2));
      }
    }
  }
  for (int j = 0; j < K; ++j) {
    common::CyclicOut<V> r2, r1;
    common::cyclic_finish<T>(C[j], L[j], r2, r1);
    store(n - 2, j, r2);
    store(n - 1, j, r1);
  }
}

// x_{n-1}, x_{n-2} first, then x_i = y' - u1' x_{i+1} - u2' x_{i+2} - us' x_{n-2} - ul' x_{n-1}.
template <class V, int K, class Dst>
void cyclic_backward(index_t n, Dst& dst, const Scratch<V>& s) {
  constexpr int B = Dst::block;
  const index_t last0 = (n - 1) / B * B;
  V x1[K] = {}, x2[K] = {}, xs[K] = {}, xl[K] = {};
  for (index_t i0 = last0; i0 >= 0; i0 -= B) {
    const int cnt = static_cast<int>(std::min<index_t>(B, n - i0));
    dst.begin(i0, cnt);
    for (int k = cnt - 1; k >= 0; --k) {
      const index_t i = i0 + k, e = i * K;
      for (int j = 0; j < K; ++j) {
        const V x = s.ds[e + j] - s.cs[e + j] * x1[j] - s.us[e + j] * x2[j] - s.zs[e + j] * xs[j] -
                    s.vs[e + j] * xl[j];
        x2[j] = x1[j];
        x1[j] = x;
        if (i == n - 1) xl[j] = x;
        if (i == n - 2) xs[j] = x;
        dst.put(k, j, x);
      }
    }
    dst.flush();
  }
}

// Solves a group with partial pivoting (per-line bands, or shared ones broadcast to lanes).
template <class T, class V, int K, class Src, class Dst>
void pivot_group(index_t n, bool periodic, const SharedFactor<T>* shared, Src& src, Dst& dst,
                 const Scratch<V>& s, GroupState<T, V, K>& g) {
  auto run = [&](auto& in) {
    if (periodic) {
      cyclic_forward<T, V, K>(n, in, s, g);
      cyclic_backward<V, K>(n, dst, s);
    } else {
      pivot_forward<T, V, K>(n, in, s, g);
      pivot_backward<V, K>(n, dst, s);
    }
  };
  if (shared) {
    BroadcastBands<T, V, Src> in{src, shared->sa, shared->sb, shared->sc};
    run(in);
  } else {
    run(src);
  }
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
  GroupState<T, V, K> g;
  auto first_bad_lane = [&]() {
    for (int j = 0; j < K; ++j) {
      const int lane = simd::first_set<W>(g.bad[j]);
      if (lane >= 0) return j * W + lane;
    }
    return -1;
  };
  auto pivot = [&]() {
    GroupState<T, V, K> fresh;
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
      common::PeriodicSplit<T, V> split{};
      split.q = V{} + f.bg;
      for (int j = 0; j < K; ++j) fac[j] = split.factor_inv(s.ds[j], s.ds[(n - 1) * K + j], V{} + f.inv_den);
      correct_to<T, V, K>(n, dst, s.ds, fac, [&](index_t i, int) { return f.z[i]; });
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
      const common::PeriodicSplit<T, V>& split = g.corner[j];
      const V den = split.den(s.zs[j], s.zs[(n - 1) * K + j]);
      const V inv = T(1) / den;
      g.bad[j] |= simd::not_finite_or_zero(inv) | common::singular_cyclic<T>(den, s.zs[j], split.qz(s.zs[(n - 1) * K + j]));
      fac[j] = split.factor_inv(s.ds[j], s.ds[(n - 1) * K + j], inv);
    }
    if (method == Method::automatic && first_bad_lane() >= 0) return pivot();
    correct_to<T, V, K>(n, dst, s.ds, fac, [&](index_t i, int j) { return s.zs[i * K + j]; });
  }
  return first_bad_lane();
}

}  // namespace adi::cpu::detail
