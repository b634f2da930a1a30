#pragma once
// The per-line work of the device block partition passes (block_partition_local_passes.hpp), written
// once as host/device functions: the kernels run them one thread per line, and a host build
// can run the same code in a loop (how the maths was checked without a GPU). Follows the
// host passes of adi/mpi/distributed_block_tridiagonal.cpp operation for operation: LU with
// partial pivoting inside the M x M pivot block (rows swapped with compile-time indices, so
// every block stays in registers), alpha/gamma of the previous row read back from the
// workspace instead of held (fewer live registers for M = 6..8).
//
// Block size: every function takes a template M and reads the block size as m = bm<M>(..):
// M = 2..8 is a compile-time size (m folds to M after inlining, every loop unrolled, the
// blocks in registers); M = 0 (kRolled) is the rolled form for any runtime m <= kRolledCap:
// arrays of kRolledCap^2, every loop a loop (`#pragma unroll` unrolls constant trip counts
// only), the blocks in local memory. By default fp64 M = 7, 8 run rolled (issue 15 item 8:
// their unrolled units were ~75 s of the serial CUDA compile with MPI, and they spill to
// local memory anyway; see kRollLarge below); -DADI_CUDA_UNROLL_ALL=ON compiles them
// unrolled again.
#include <cmath>
#include <type_traits>

#include "adi/base/block_layout.hpp"
#include "solvers/common/block_lu_core.hpp"

#if defined(__CUDACC__)
#define ADI_BP_HD __host__ __device__ __forceinline__
#else
#define ADI_BP_HD inline
#endif

namespace adi::cuda_backend::block_partition {

constexpr int kRolled = 0;      // M of the rolled form
constexpr int kRolledCap = 8;   // the largest runtime m it takes
// Array extent for block size M (the rolled form: the cap).
template <int M>
constexpr int kCap = M > 0 ? M : kRolledCap;
// The block size of a pass: M, or the runtime m of the rolled form.
template <int M>
ADI_BP_HD int bm(int runtime_m) {
  return M > 0 ? M : runtime_m;
}

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
  T* red;        // reduce: reduced row j of line l at red[l*red_line + j*red_row + ...]
  const T* sol;  // back-substitution: u_0 / u_{m-1} of line l at sol[l*sol_line + {0, sol_row} + v]
  index_t red_line, red_row, sol_line, sol_row;
  T tol;
  bool first_open, last_open;
  // Sub-segments (S > 1): level-1 reduced rows red1[(s*2R + k)*L + l], the level-2
  // workspace alpha2 / gamma2 [(j*M*M + v)*L + l] (j < 2S) and the chain's delta / end
  // values x2[(j*M + v)*L + l].
  int S;
  T* red1;
  T* alpha2;
  T* gamma2;
  T* x2;
};

template <class T>
ADI_BP_HD T bp_abs(T x) {
  return x < T(0) ? -x : x;  // NaN stays NaN
}
template <class T>
ADI_BP_HD bool bp_finite(T x) {
  return x - x == T(0);  // false for NaN and +-inf
}

// out (m x n) += s * X (m x m) * Y (m x n), all row-major: the host's mul_add order.
// X and y are accessors (v -> value) of arrays or of the interleaved workspace.
template <class T, class X, class Y>
ADI_BP_HD void mul_add(int m, int n, T s, const X& x, const Y& y, T* out) {
#pragma unroll
  for (int i = 0; i < m; ++i)
#pragma unroll
    for (int k = 0; k < m; ++k) {
      const T f = s * x(i * m + k);
#pragma unroll
      for (int j = 0; j < n; ++j) out[i * n + j] += f * y(k * n + j);
    }
}

// A row-major m x m block in registers, as common::block_lu_solve reads it.
template <class T, int M>
struct RegisterBlock {
  T (&v)[kCap<M> * kCap<M>];
  int m;
  ADI_BP_HD T& operator()(int i, int j) const { return v[i * m + j]; }
};

// The right-hand sides [Xa | Xg | Xd] of a pivot-block solve (block_lu_core.hpp's policy).
template <class T, int M>
struct PartitionRhs {
  static constexpr int C = kCap<M>;
  T (&Xa)[C * C];
  T (&Xg)[C * C];
  T (&Xd)[C];
  int m;
  ADI_BP_HD void swap(int k, int i) const {
#pragma unroll
    for (int j = 0; j < m; ++j) {
      T t = Xa[k * m + j];
      Xa[k * m + j] = Xa[i * m + j], Xa[i * m + j] = t;
      t = Xg[k * m + j];
      Xg[k * m + j] = Xg[i * m + j], Xg[i * m + j] = t;
    }
    const T t = Xd[k];
    Xd[k] = Xd[i], Xd[i] = t;
  }
  ADI_BP_HD void axpy(int i, T f, int k) const {
#pragma unroll
    for (int j = 0; j < m; ++j) {
      Xa[i * m + j] -= f * Xa[k * m + j];
      Xg[i * m + j] -= f * Xg[k * m + j];
    }
    Xd[i] -= f * Xd[k];
  }
  ADI_BP_HD void scale(int i, T inv) const {
#pragma unroll
    for (int j = 0; j < m; ++j) {
      Xa[i * m + j] *= inv;
      Xg[i * m + j] *= inv;
    }
    Xd[i] *= inv;
  }
};

// Solves S [Xa | Xg | Xd] = [Xa | Xg | Xd] in place (common::block_lu_solve: partial
// pivoting inside S, as the host passes). false when a pivot is at or below tol * max|S|
// or not finite.
template <class T, int M>
ADI_BP_HD bool eliminate(int m, T (&S)[kCap<M> * kCap<M>], T (&Xa)[kCap<M> * kCap<M>], T (&Xg)[kCap<M> * kCap<M>],
                         T (&Xd)[kCap<M>], T tol) {
  RegisterBlock<T, M> s{S, m};
  PartitionRhs<T, M> r{Xa, Xg, Xd, m};
  return common::block_lu_solve<T, kCap<M>>(s, r, tol, m);
}

// Where line l's values live, and its loads and stores.
template <class T, int M>
struct LineAccess {
  static constexpr int C = kCap<M>;
  const BlockLineSet& ls;
  index_t ob, ov;
  int m;
  ADI_BP_HD LineAccess(const BlockLineSet& s, index_t l)
      : ls(s),
        ob((l % s.count0) * s.blocks.system0 + (l / s.count0) * s.blocks.system1),
        ov((l % s.count0) * s.vectors.system0 + (l / s.count0) * s.vectors.system1),
        m(bm<M>(s.m)) {}
  ADI_BP_HD void block(const T* p, index_t i, T (&o)[C * C]) const {
    const index_t q = ob + i * ls.blocks.row, s = ls.blocks.component;
#pragma unroll
    for (int v = 0; v < m * m; ++v) o[v] = p[q + v * s];
  }
  ADI_BP_HD void vec(const T* p, index_t i, T (&o)[C]) const {
    const index_t q = ov + i * ls.vectors.row, s = ls.vectors.component;
#pragma unroll
    for (int v = 0; v < m; ++v) o[v] = p[q + v * s];
  }
  ADI_BP_HD void store(T* p, index_t i, const T (&x)[C]) const {
    const index_t q = ov + i * ls.vectors.row, s = ls.vectors.component;
#pragma unroll
    for (int v = 0; v < m; ++v) p[q + v * s] = x[v];
  }
};

template <class T>
struct Ref {
  const T* p;
  ADI_BP_HD T operator()(int v) const { return p[v]; }
};
// Entry v of block row i of line l in an interleaved workspace (mm = m * m values a row).
template <class T>
struct Ws {
  const T* w;
  index_t i, L, l;
  int mm;
  ADI_BP_HD T operator()(int v) const { return w[(i * mm + v) * L + l]; }
};

// Rows of a reduction, seen through a source: the caller's arrays (a line's segment or
// one sub-segment of it, level 1) or the chain of the sub-segments' reduced rows (level 2).
// A source provides block(which, i, out) (which: 0 A, 1 B, 2 C), rhs(i, out), the
// elimination's stores and loads (delta / the solution in place, alpha and gamma in an
// interleaved workspace) and out(k, value) for the 2R values of the two reduced rows.
template <class T, int M>
struct GridSource {
  static constexpr int C = kCap<M>;
  const Args<T>& g;
  LineAccess<T, M> io;
  int m, MM, R;
  index_t r0, L, l;
  T* outp;       // the reduced rows: red (S == 1) or this sub-segment's in red1
  index_t outs;  // and their value stride
  index_t outj;  // the offset of the second row
  ADI_BP_HD GridSource(const Args<T>& g_, index_t l_, index_t r0_, int s)
      : g(g_), io(g_.ls, l_), m(bm<M>(g_.ls.m)), MM(m * m), R(3 * MM + m), r0(r0_),
        L(g_.ls.count0 * g_.ls.count1), l(l_),
        outp(g_.S == 1 ? g_.red + l_ * g_.red_line : g_.red1 + index_t(s) * 2 * R * L + l_),
        outs(g_.S == 1 ? 1 : L), outj(g_.S == 1 ? g_.red_row : index_t(R) * L) {}
  ADI_BP_HD void block(int which, index_t i, T (&o)[C * C]) const {
    io.block(which == 0 ? g.a : which == 1 ? g.b : g.c, r0 + i, o);
  }
  ADI_BP_HD void rhs(index_t i, T (&o)[C]) const { io.vec(g.d, r0 + i, o); }
  ADI_BP_HD void load_x(index_t i, T (&o)[C]) const { io.vec(g.u, r0 + i, o); }
  ADI_BP_HD void store_x(index_t i, const T (&x)[C]) const { io.store(g.u, r0 + i, x); }
  ADI_BP_HD Ws<T> alpha(index_t i) const { return {g.alpha, r0 + i, L, l, MM}; }
  ADI_BP_HD Ws<T> gamma(index_t i) const { return {g.gamma, r0 + i, L, l, MM}; }
  ADI_BP_HD void store_ag(index_t i, const T (&a)[C * C], const T (&c)[C * C]) const {
#pragma unroll
    for (int v = 0; v < MM; ++v) {
      g.alpha[((r0 + i) * MM + v) * L + l] = a[v];
      g.gamma[((r0 + i) * MM + v) * L + l] = c[v];
    }
  }
  ADI_BP_HD void out(int k, T v) const { outp[k < R ? k * outs : (k - R) * outs + outj] = v; }
};

// Level 2: row j (0..2S-1) of line l's chain is reduced row j % 2 of sub-segment j / 2.
template <class T, int M>
struct ChainSource {
  static constexpr int C = kCap<M>;
  const Args<T>& g;
  int m, MM, R;
  index_t L, l;
  ADI_BP_HD ChainSource(const Args<T>& g_, index_t l_)
      : g(g_), m(bm<M>(g_.ls.m)), MM(m * m), R(3 * MM + m), L(g_.ls.count0 * g_.ls.count1), l(l_) {}
  ADI_BP_HD index_t row(index_t j) const { return (j / 2) * 2 * R + (j % 2) * R; }
  ADI_BP_HD void block(int which, index_t j, T (&o)[C * C]) const {
    const index_t q = row(j) + which * MM;
#pragma unroll
    for (int v = 0; v < MM; ++v) o[v] = g.red1[(q + v) * L + l];
  }
  ADI_BP_HD void rhs(index_t j, T (&o)[C]) const {
    const index_t q = row(j) + 3 * MM;
#pragma unroll
    for (int v = 0; v < m; ++v) o[v] = g.red1[(q + v) * L + l];
  }
  ADI_BP_HD void load_x(index_t j, T (&o)[C]) const {
#pragma unroll
    for (int v = 0; v < m; ++v) o[v] = g.x2[(j * m + v) * L + l];
  }
  ADI_BP_HD void store_x(index_t j, const T (&x)[C]) const {
#pragma unroll
    for (int v = 0; v < m; ++v) g.x2[(j * m + v) * L + l] = x[v];
  }
  ADI_BP_HD Ws<T> alpha(index_t j) const { return {g.alpha2, j, L, l, MM}; }
  ADI_BP_HD Ws<T> gamma(index_t j) const { return {g.gamma2, j, L, l, MM}; }
  ADI_BP_HD void store_ag(index_t j, const T (&a)[C * C], const T (&c)[C * C]) const {
#pragma unroll
    for (int v = 0; v < MM; ++v) {
      g.alpha2[(j * MM + v) * L + l] = a[v];
      g.gamma2[(j * MM + v) * L + l] = c[v];
    }
  }
  ADI_BP_HD void out(int k, T v) const { g.red[l * g.red_line + (k < R ? k : g.red_row + (k - R))] = v; }
};

// Reduced block row j (0: the first, 1: the last) of a source: A, B, C (zeroed where a
// non-periodic line ends) and d.
template <class T, int M, class Src>
ADI_BP_HD void put_row(const Src& src, int j, const T (&a)[kCap<M> * kCap<M>], const T (&b)[kCap<M> * kCap<M>],
                       const T (&c)[kCap<M> * kCap<M>], const T (&d)[kCap<M>], bool zero_a, bool zero_c) {
  const int MM = src.MM, R = src.R;
#pragma unroll
  for (int v = 0; v < MM; ++v) {
    src.out(j * R + v, zero_a ? T(0) : a[v]);
    src.out(j * R + MM + v, b[v]);
    src.out(j * R + 2 * MM + v, zero_c ? T(0) : c[v]);
  }
#pragma unroll
  for (int v = 0; v < src.m; ++v) src.out(j * R + 3 * MM + v, d[v]);
}

// Phase 1 on rows 0..n-1 (n >= 2) of a source (see the derivation at the top of
// distributed_block_tridiagonal.cpp).
template <class T, int M, class Src>
ADI_BP_HD void reduce_rows(const Src& src, index_t n, T tol, bool first_open, bool last_open) {
  constexpr int C = kCap<M>;
  const int m = src.m, MM = src.MM, R = src.R;
  T Ab[C * C], Bb[C * C], Cb[C * C], dv[C];
  if (n == 2) {
    for (int k = 0; k < 2; ++k) {
      src.block(0, k, Ab);
      src.block(1, k, Bb);
      src.block(2, k, Cb);
      src.rhs(k, dv);
      put_row<T, M>(src, k, Ab, Bb, Cb, dv, k == 0 && first_open, k == 1 && last_open);
    }
    return;
  }
  auto A = [](const T* p) { return Ref<T>{p}; };
  T Pi[C * C], Q[C * C], Pv[C], dl[C];
#pragma unroll
  for (int v = 0; v < MM; ++v) Pi[v] = T(v % (m + 1) == 0 ? 1 : 0), Q[v] = T(0);
#pragma unroll
  for (int v = 0; v < m; ++v) Pv[v] = T(0), dl[v] = T(0);
  bool bad = false;
  for (index_t i = 1; i <= n - 2; ++i) {
    T S[C * C], Xa[C * C];
    src.block(0, i, Ab);
    src.block(1, i, S);
    src.block(2, i, Cb);  // becomes gamma_i
    src.rhs(i, dv);       // becomes delta_i
    if (i == 1) {
#pragma unroll
      for (int v = 0; v < MM; ++v) Xa[v] = Ab[v];
    } else {
#pragma unroll
      for (int v = 0; v < MM; ++v) Xa[v] = T(0);
      mul_add<T>(m, m, T(-1), A(Ab), src.gamma(i - 1), S);  // S = B_i - A_i gamma_{i-1}
      mul_add<T>(m, m, T(-1), A(Ab), src.alpha(i - 1), Xa);  // -A_i alpha_{i-1}
      mul_add<T>(m, 1, T(-1), A(Ab), A(dl), dv);             // d_i - A_i delta_{i-1}
    }
    if (!eliminate<T, M>(m, S, Xa, Cb, dv, tol)) {
      bad = true;
      break;
    }
    src.store_ag(i, Xa, Cb);
#pragma unroll
    for (int v = 0; v < m; ++v) dl[v] = dv[v];
    src.store_x(i, dl);
    mul_add<T>(m, 1, T(1), A(Pi), A(dl), Pv);
    mul_add<T>(m, m, T(1), A(Pi), A(Xa), Q);
    // Pi = -Pi gamma_i, row by row (row r of the product needs only row r of Pi).
#pragma unroll
    for (int r = 0; r < m; ++r) {
      T row[C];
#pragma unroll
      for (int j = 0; j < m; ++j) row[j] = T(0);
#pragma unroll
      for (int k = 0; k < m; ++k) {
        const T f = -Pi[r * m + k];
#pragma unroll
        for (int j = 0; j < m; ++j) row[j] += f * Cb[k * m + j];
      }
#pragma unroll
      for (int j = 0; j < m; ++j) Pi[r * m + j] = row[j];
    }
  }
  if (bad) {  // every rank of the axis meets the NaN in the reduced solve
    for (int k = 0; k < 2 * R; ++k) src.out(k, T(NAN));
    return;
  }
  T tmp[C * C];
  // Row 0: A_0 u_prev + (B_0 - C_0 Q) u_0 + C_0 Pi u_{n-1} = d_0 - C_0 Pv.
  src.block(0, 0, Ab);
  src.block(1, 0, Bb);
  src.block(2, 0, Cb);
  src.rhs(0, dv);
  mul_add<T>(m, m, T(-1), A(Cb), A(Q), Bb);
  mul_add<T>(m, 1, T(-1), A(Cb), A(Pv), dv);
#pragma unroll
  for (int v = 0; v < MM; ++v) tmp[v] = T(0);
  mul_add<T>(m, m, T(1), A(Cb), A(Pi), tmp);
  put_row<T, M>(src, 0, Ab, Bb, tmp, dv, first_open, false);
  // Row n-1: -A alpha_{n-2} u_0 + (B - A gamma_{n-2}) u_{n-1} + C u_next = d - A delta_{n-2}.
  src.block(0, n - 1, Ab);
  src.block(1, n - 1, Bb);
  src.block(2, n - 1, Cb);
  src.rhs(n - 1, dv);
  mul_add<T>(m, m, T(-1), A(Ab), src.gamma(n - 2), Bb);
  mul_add<T>(m, 1, T(-1), A(Ab), A(dl), dv);
#pragma unroll
  for (int v = 0; v < MM; ++v) tmp[v] = T(0);
  mul_add<T>(m, m, T(-1), A(Ab), src.alpha(n - 2), tmp);
  put_row<T, M>(src, 1, tmp, Bb, Cb, dv, false, last_open);
}

// Phase 3 on rows 0..n-1 of a source, given its end values u_0 and u_{n-1}.
template <class T, int M, class Src>
ADI_BP_HD void back_rows(const Src& src, index_t n, const T (&u0)[kCap<M>], const T (&ul)[kCap<M>]) {
  const int m = src.m;
  T next[kCap<M>];
#pragma unroll
  for (int v = 0; v < m; ++v) next[v] = ul[v];
  src.store_x(0, u0);
  src.store_x(n - 1, ul);
  for (index_t i = n - 2; i >= 1; --i) {
    T cur[kCap<M>];
    src.load_x(i, cur);
    mul_add<T>(m, 1, T(-1), src.alpha(i), Ref<T>{u0}, cur);
    mul_add<T>(m, 1, T(-1), src.gamma(i), Ref<T>{next}, cur);
    src.store_x(i, cur);
#pragma unroll
    for (int v = 0; v < m; ++v) next[v] = cur[v];
  }
}

// Sub-segment s of S of an m-row segment: rows m*s/S .. m*(s+1)/S - 1 (>= 2 when S <= m/2).
ADI_BP_HD index_t sub_lo(index_t m, int S, int s) { return m * s / S; }

// Level 1 (S == 1: the whole segment straight into red) for thread (l, s).
template <class T, int M>
ADI_BP_HD void reduce_line(const Args<T>& g, index_t l, int s) {
  const index_t m = g.ls.n, r0 = sub_lo(m, g.S, s), r1 = sub_lo(m, g.S, s + 1);
  reduce_rows<T, M>(GridSource<T, M>(g, l, r0, s), r1 - r0, g.tol, g.first_open && s == 0,
                    g.last_open && s == g.S - 1);
}
// Level 2 (S > 1): line l's chain of 2S rows into red.
template <class T, int M>
ADI_BP_HD void reduce_chain(const Args<T>& g, index_t l) {
  reduce_rows<T, M>(ChainSource<T, M>(g, l), 2 * index_t(g.S), g.tol, false, false);
}
// Back-substitution of level 2: the 2S sub-segment end values into x2.
template <class T, int M>
ADI_BP_HD void back_chain(const Args<T>& g, index_t l) {
  const int bs = bm<M>(g.ls.m);
  T u0[kCap<M>], ul[kCap<M>];
#pragma unroll
  for (int v = 0; v < bs; ++v) u0[v] = g.sol[l * g.sol_line + v], ul[v] = g.sol[l * g.sol_line + g.sol_row + v];
  back_rows<T, M>(ChainSource<T, M>(g, l), 2 * index_t(g.S), u0, ul);
}
// Back-substitution of level 1 for thread (l, s): its ends from sol (S == 1) or x2.
template <class T, int M>
ADI_BP_HD void back_line(const Args<T>& g, index_t l, int s) {
  const index_t m = g.ls.n, r0 = sub_lo(m, g.S, s), r1 = sub_lo(m, g.S, s + 1);
  const index_t L = g.ls.count0 * g.ls.count1;
  const int bs = bm<M>(g.ls.m);
  T u0[kCap<M>], ul[kCap<M>];
#pragma unroll
  for (int v = 0; v < bs; ++v) {
    u0[v] = g.S == 1 ? g.sol[l * g.sol_line + v] : g.x2[(index_t(2 * s) * bs + v) * L + l];
    ul[v] = g.S == 1 ? g.sol[l * g.sol_line + g.sol_row + v] : g.x2[(index_t(2 * s + 1) * bs + v) * L + l];
  }
  back_rows<T, M>(GridSource<T, M>(g, l, r0, s), r1 - r0, u0, ul);
}

// The block sizes of precision T compiled in the rolled form: fp64 M = 7, 8, where the
// unrolled blocks spill (ptxas: ~23 KB of stack a thread for M = 8) and the rolled form
// measured 18-33% faster (H200, stop 31, bench_cuda_block_partition); none for fp32 and fp64
// M <= 6, where it measured 3-6x slower (their blocks stay in registers). With
// ADI_CUDA_UNROLL_ALL (CMake option of the same name) none: the form before issue 15 item 8.
template <class T>
constexpr bool kRollLarge =
#if defined(ADI_CUDA_UNROLL_ALL)
    false;
#else
    sizeof(T) == 8;
#endif

// Runs f(std::integral_constant<int, M>{}) for the runtime block size (2..8) of precision T:
// M = 2..8 unrolled, except kRolled for M = 7, 8 where kRollLarge<T>.
template <class T, class F>
inline void with_block_size(int M, F&& f) {
  switch (M) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    default:
      if constexpr (kRollLarge<T>) {
        f(std::integral_constant<int, kRolled>{});
      } else {
        if (M == 7)
          f(std::integral_constant<int, 7>{});
        else
          f(std::integral_constant<int, 8>{});
      }
      break;
  }
}

}  // namespace adi::cuda_backend::block_partition
