#pragma once
// The per-line work of the device block partition passes (block_partition_mpi.hpp), written
// once as host/device functions: the kernels run them one thread per line, and a host build
// can run the same code in a loop (how the maths was checked without a GPU). Follows the
// host passes of adi/mpi/distributed_block_tridiagonal.cpp operation for operation: LU with
// partial pivoting inside the M x M pivot block (rows swapped with compile-time indices, so
// every block stays in registers), alpha/gamma of the previous row read back from the
// workspace instead of held (fewer live registers for M = 6..8).
#include <cmath>
#include <type_traits>

#include "adi/block_tridiagonal.hpp"

#if defined(__CUDACC__)
#define ADI_BP_HD __host__ __device__ __forceinline__
#else
#define ADI_BP_HD inline
#endif

namespace adi::cuda_backend::block_partition {

template <class T>
struct Args {
  BlockLineSet ls;
  const T* a;
  const T* b;
  const T* c;
  const T* d;  // may equal u
  T* u;
  T* alpha;  // [(i*M*M + v)*L + l]
  T* gamma;
  T* red;        // reduce: [l*2R + j*R + ...]
  const T* sol;  // back-substitution: [l*2M + ...]
  T tol;
  bool first_open, last_open;
};

template <class T>
ADI_BP_HD T bp_abs(T x) {
  return x < T(0) ? -x : x;  // NaN stays NaN
}
template <class T>
ADI_BP_HD bool bp_finite(T x) {
  return x - x == T(0);  // false for NaN and +-inf
}

// out (M x N) += s * X (M x M) * Y (M x N), all row-major: the host's mul_add order.
// X and y are accessors (v -> value) of arrays or of the interleaved workspace.
template <class T, int M, int N, class X, class Y>
ADI_BP_HD void mul_add(T s, const X& x, const Y& y, T* out) {
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int k = 0; k < M; ++k) {
      const T f = s * x(i * M + k);
#pragma unroll
      for (int j = 0; j < N; ++j) out[i * N + j] += f * y(k * N + j);
    }
}

// Solves S [Xa | Xg | Xd] = [Xa | Xg | Xd] in place (Gaussian elimination with partial
// pivoting inside S, the host lu_factor + lu_solve). false when a pivot is at or below
// tol * max|S| or not finite (the host's test).
template <class T, int M>
ADI_BP_HD bool eliminate(T (&S)[M * M], T (&Xa)[M * M], T (&Xg)[M * M], T (&Xd)[M], T tol) {
  T mx = 0;
#pragma unroll
  for (int v = 0; v < M * M; ++v) mx = mx < bp_abs(S[v]) ? bp_abs(S[v]) : mx;
  if (!(mx > T(0)) || !bp_finite(mx)) return false;
  const T thr = tol * mx;
#pragma unroll
  for (int k = 0; k < M; ++k) {
    int p = k;
    T best = bp_abs(S[k * M + k]);
#pragma unroll
    for (int i = k + 1; i < M; ++i)
      if (bp_abs(S[i * M + k]) > best) best = bp_abs(S[i * M + k]), p = i;
    if (!(best > thr)) return false;
#pragma unroll
    for (int i = k + 1; i < M; ++i)
      if (i == p) {
#pragma unroll
        for (int j = 0; j < M; ++j) {
          T t = S[k * M + j];
          S[k * M + j] = S[i * M + j], S[i * M + j] = t;
          t = Xa[k * M + j];
          Xa[k * M + j] = Xa[i * M + j], Xa[i * M + j] = t;
          t = Xg[k * M + j];
          Xg[k * M + j] = Xg[i * M + j], Xg[i * M + j] = t;
        }
        const T t = Xd[k];
        Xd[k] = Xd[i], Xd[i] = t;
      }
    const T inv = T(1) / S[k * M + k];
#pragma unroll
    for (int i = k + 1; i < M; ++i) {
      const T f = S[i * M + k] *= inv;
#pragma unroll
      for (int j = k + 1; j < M; ++j) S[i * M + j] -= f * S[k * M + j];
#pragma unroll
      for (int j = 0; j < M; ++j) {
        Xa[i * M + j] -= f * Xa[k * M + j];
        Xg[i * M + j] -= f * Xg[k * M + j];
      }
      Xd[i] -= f * Xd[k];
    }
  }
#pragma unroll
  for (int i = M - 1; i >= 0; --i) {
#pragma unroll
    for (int k = i + 1; k < M; ++k) {
      const T f = S[i * M + k];
#pragma unroll
      for (int j = 0; j < M; ++j) {
        Xa[i * M + j] -= f * Xa[k * M + j];
        Xg[i * M + j] -= f * Xg[k * M + j];
      }
      Xd[i] -= f * Xd[k];
    }
    const T inv = T(1) / S[i * M + i];
#pragma unroll
    for (int j = 0; j < M; ++j) {
      Xa[i * M + j] *= inv;
      Xg[i * M + j] *= inv;
    }
    Xd[i] *= inv;
  }
  return true;
}

// Where line l's values live, and its loads and stores.
template <class T, int M>
struct LineAccess {
  const BlockLineSet& ls;
  index_t ob, ov;
  ADI_BP_HD LineAccess(const BlockLineSet& s, index_t l)
      : ls(s),
        ob((l % s.count0) * s.blocks.system0 + (l / s.count0) * s.blocks.system1),
        ov((l % s.count0) * s.vectors.system0 + (l / s.count0) * s.vectors.system1) {}
  ADI_BP_HD void block(const T* p, index_t i, T (&o)[M * M]) const {
    const index_t q = ob + i * ls.blocks.row, s = ls.blocks.component;
#pragma unroll
    for (int v = 0; v < M * M; ++v) o[v] = p[q + v * s];
  }
  ADI_BP_HD void vec(const T* p, index_t i, T (&o)[M]) const {
    const index_t q = ov + i * ls.vectors.row, s = ls.vectors.component;
#pragma unroll
    for (int v = 0; v < M; ++v) o[v] = p[q + v * s];
  }
  ADI_BP_HD void store(T* p, index_t i, const T (&x)[M]) const {
    const index_t q = ov + i * ls.vectors.row, s = ls.vectors.component;
#pragma unroll
    for (int v = 0; v < M; ++v) p[q + v * s] = x[v];
  }
};

// One reduced block row: A, B, C (zeroed where a non-periodic line ends) and d.
template <class T, int M>
ADI_BP_HD void put_row(T* row, const T (&a)[M * M], const T (&b)[M * M], const T (&c)[M * M], const T (&dv)[M],
                       bool zero_a, bool zero_c) {
  constexpr int MM = M * M;
#pragma unroll
  for (int v = 0; v < MM; ++v) {
    row[v] = zero_a ? T(0) : a[v];
    row[MM + v] = b[v];
    row[2 * MM + v] = zero_c ? T(0) : c[v];
  }
#pragma unroll
  for (int v = 0; v < M; ++v) row[3 * MM + v] = dv[v];
}

template <class T>
struct Ref {
  const T* p;
  ADI_BP_HD T operator()(int v) const { return p[v]; }
};
// Entry v of block row i of line l in an interleaved workspace.
template <class T, int MM>
struct Ws {
  const T* w;
  index_t i, L, l;
  ADI_BP_HD T operator()(int v) const { return w[(i * MM + v) * L + l]; }
};

// Phase 1 for line l (see the derivation at the top of distributed_block_tridiagonal.cpp).
template <class T, int M>
ADI_BP_HD void reduce_line(const Args<T>& g, index_t l) {
  constexpr int MM = M * M, R = 3 * MM + M;
  const index_t L = g.ls.count0 * g.ls.count1, m = g.ls.n;
  const LineAccess<T, M> io(g.ls, l);
  T* rr = g.red + l * 2 * R;
  T Ab[MM], Bb[MM], Cb[MM], dv[M];
  if (m == 2) {
    for (int k = 0; k < 2; ++k) {
      io.block(g.a, k, Ab);
      io.block(g.b, k, Bb);
      io.block(g.c, k, Cb);
      io.vec(g.d, k, dv);
      put_row<T, M>(rr + k * R, Ab, Bb, Cb, dv, k == 0 && g.first_open, k == 1 && g.last_open);
    }
    return;
  }
  auto ws = [&](const T* w, index_t i) { return Ws<T, MM>{w, i, L, l}; };
  auto A = [](const T* p) { return Ref<T>{p}; };
  T Pi[MM], Q[MM], Pv[M], dl[M];
#pragma unroll
  for (int v = 0; v < MM; ++v) Pi[v] = T(v % (M + 1) == 0 ? 1 : 0), Q[v] = T(0);
#pragma unroll
  for (int v = 0; v < M; ++v) Pv[v] = T(0), dl[v] = T(0);
  bool bad = false;
  for (index_t i = 1; i <= m - 2; ++i) {
    T S[MM], Xa[MM];
    io.block(g.a, i, Ab);
    io.block(g.b, i, S);
    io.block(g.c, i, Cb);  // becomes gamma_i
    io.vec(g.d, i, dv);    // becomes delta_i
    if (i == 1) {
#pragma unroll
      for (int v = 0; v < MM; ++v) Xa[v] = Ab[v];
    } else {
#pragma unroll
      for (int v = 0; v < MM; ++v) Xa[v] = T(0);
      mul_add<T, M, M>(T(-1), A(Ab), ws(g.gamma, i - 1), S);  // S = B_i - A_i gamma_{i-1}
      mul_add<T, M, M>(T(-1), A(Ab), ws(g.alpha, i - 1), Xa);  // -A_i alpha_{i-1}
      mul_add<T, M, 1>(T(-1), A(Ab), A(dl), dv);  // d_i - A_i delta_{i-1}
    }
    if (!eliminate<T, M>(S, Xa, Cb, dv, g.tol)) {
      bad = true;
      break;
    }
#pragma unroll
    for (int v = 0; v < MM; ++v) {
      g.alpha[(i * MM + v) * L + l] = Xa[v];
      g.gamma[(i * MM + v) * L + l] = Cb[v];
    }
#pragma unroll
    for (int v = 0; v < M; ++v) dl[v] = dv[v];
    io.store(g.u, i, dl);
    mul_add<T, M, 1>(T(1), A(Pi), A(dl), Pv);
    mul_add<T, M, M>(T(1), A(Pi), A(Xa), Q);
    T tmp[MM];
#pragma unroll
    for (int v = 0; v < MM; ++v) tmp[v] = T(0);
    mul_add<T, M, M>(T(-1), A(Pi), A(Cb), tmp);
#pragma unroll
    for (int v = 0; v < MM; ++v) Pi[v] = tmp[v];
  }
  if (bad) {  // every rank of the axis meets the NaN in the reduced solve
    for (int k = 0; k < 2 * R; ++k) rr[k] = T(NAN);
    return;
  }
  T tmp[MM];
  // Row 0: A_0 u_prev + (B_0 - C_0 Q) u_0 + C_0 Pi u_{m-1} = d_0 - C_0 Pv.
  io.block(g.a, 0, Ab);
  io.block(g.b, 0, Bb);
  io.block(g.c, 0, Cb);
  io.vec(g.d, 0, dv);
  mul_add<T, M, M>(T(-1), A(Cb), A(Q), Bb);
  mul_add<T, M, 1>(T(-1), A(Cb), A(Pv), dv);
#pragma unroll
  for (int v = 0; v < MM; ++v) tmp[v] = T(0);
  mul_add<T, M, M>(T(1), A(Cb), A(Pi), tmp);
  put_row<T, M>(rr, Ab, Bb, tmp, dv, g.first_open, false);
  // Row m-1: -A alpha_{m-2} u_0 + (B - A gamma_{m-2}) u_{m-1} + C u_next = d - A delta_{m-2}.
  io.block(g.a, m - 1, Ab);
  io.block(g.b, m - 1, Bb);
  io.block(g.c, m - 1, Cb);
  io.vec(g.d, m - 1, dv);
  mul_add<T, M, M>(T(-1), A(Ab), ws(g.gamma, m - 2), Bb);
  mul_add<T, M, 1>(T(-1), A(Ab), A(dl), dv);
#pragma unroll
  for (int v = 0; v < MM; ++v) tmp[v] = T(0);
  mul_add<T, M, M>(T(-1), A(Ab), ws(g.alpha, m - 2), tmp);
  put_row<T, M>(rr + R, tmp, Bb, Cb, dv, false, g.last_open);
}

// Phase 3 for line l.
template <class T, int M>
ADI_BP_HD void back_line(const Args<T>& g, index_t l) {
  constexpr int MM = M * M;
  const index_t L = g.ls.count0 * g.ls.count1, m = g.ls.n;
  const LineAccess<T, M> io(g.ls, l);
  T u0[M], next[M];
#pragma unroll
  for (int v = 0; v < M; ++v) u0[v] = g.sol[l * 2 * M + v], next[v] = g.sol[l * 2 * M + M + v];
  io.store(g.u, 0, u0);
  io.store(g.u, m - 1, next);
  for (index_t i = m - 2; i >= 1; --i) {
    T cur[M];
    io.vec(g.u, i, cur);
    mul_add<T, M, 1>(T(-1), Ws<T, MM>{g.alpha, i, L, l}, Ref<T>{u0}, cur);
    mul_add<T, M, 1>(T(-1), Ws<T, MM>{g.gamma, i, L, l}, Ref<T>{next}, cur);
    io.store(g.u, i, cur);
#pragma unroll
    for (int v = 0; v < M; ++v) next[v] = cur[v];
  }
}

// Runs f(std::integral_constant<int, M>{}) for the runtime block size (2..8).
template <class F>
inline void with_block_size(int M, F&& f) {
  switch (M) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 7: f(std::integral_constant<int, 7>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}

}  // namespace adi::cuda_backend::block_partition
