// Explicit operator evaluation, one pass over the unknowns. Each (y, z) row of
// the box is built by a few short loops over x (init, x stencil, y stencil, ...)
// that stay in L1 and vectorise: the per-axis choices (shared or full weights,
// which neighbours) are made once per row, never per node.
#include "solvers/cpu/stencil_apply.hpp"

#include <omp.h>

#include <algorithm>

namespace adi::cpu {

namespace {

int team(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

// o[i] += w * (d[i] v[i] - a[i] v[i-1] - c[i] v[i+1]) for i in [i0, i1]; the end
// nodes 0 and n-1 (periodic or Neumann rows) go through prev/next.
template <class T>
void add_x(T* o, const T* v, const T* a, const T* d, const T* c, const index_t* prev, const index_t* next,
           index_t n, index_t i0, index_t i1, T w) {
  const index_t b0 = std::max<index_t>(i0, 1), b1 = std::min<index_t>(i1, n - 2);
#pragma omp simd
  for (index_t i = b0; i <= b1; ++i) o[i] += w * (d[i] * v[i] - a[i] * v[i - 1] - c[i] * v[i + 1]);
  auto end = [&](index_t i) { o[i] += w * (d[i] * v[i] - a[i] * v[prev[i]] - c[i] * v[next[i]]); };
  if (i0 == 0) end(0);
  if (i1 == n - 1) end(n - 1);
}

// Rows vm, v0, vp along y or z with weights that are the same for the whole row.
template <class T>
void add_rows_shared(T* o, const T* vm, const T* v0, const T* vp, T a, T d, T c, index_t i0, index_t i1) {
#pragma omp simd
  for (index_t i = i0; i <= i1; ++i) o[i] += d * v0[i] - a * vm[i] - c * vp[i];
}

// Same with per-node weights (a, d, c already offset to the row), scaled by w.
template <class T>
void add_rows_full(T* o, const T* vm, const T* v0, const T* vp, const T* a, const T* d, const T* c, T w,
                   index_t i0, index_t i1) {
#pragma omp simd
  for (index_t i = i0; i <= i1; ++i) o[i] += w * (d[i] * v0[i] - a[i] * vm[i] - c[i] * vp[i]);
}

// o[i] += s * m[i] * (u_x of row r at i) with the first-derivative weights of x.
template <class T>
void add_mixed_x(T* o, const T* r, const T* m, T s, const detail::AxisStencil<T>& X, index_t i0, index_t i1) {
  const T *fm = X.fm, *f0 = X.f0, *fp = X.fp;
  const index_t n = X.n;
  const index_t b0 = std::max<index_t>(i0, 1), b1 = std::min<index_t>(i1, n - 2);
#pragma omp simd
  for (index_t i = b0; i <= b1; ++i) o[i] += s * m[i] * (fm[i] * r[i - 1] + f0[i] * r[i] + fp[i] * r[i + 1]);
  auto end = [&](index_t i) {
    o[i] += s * m[i] * (fm[i] * r[X.prev[i]] + f0[i] * r[i] + fp[i] * r[X.next[i]]);
  };
  if (i0 == 0) end(0);
  if (i1 == n - 1) end(n - 1);
}

}  // namespace

template <class T>
void stencil_apply(const detail::StencilView<T>& s, const detail::ApplyArgs<T>& g, int threads) {
  const Box3& B = s.box;
  const index_t i0 = s.lo[0], i1 = s.hi[0];
  const index_t nj = s.hi[1] - s.lo[1] + 1, nk = s.hi[2] - s.lo[2] + 1;
  const index_t rows = nj * nk;
  const auto &X = s.axis[0], &Y = s.axis[1], &Z = s.axis[2];
  const bool use_x = X.active && g.w[1] != T(0);
  const bool use_y = Y.active && g.w[2] != T(0);
  const bool use_z = Z.active && g.w[3] != T(0);
  bool use_m = false;
  for (const auto& m : s.mixed) use_m = use_m || (m.active && g.w[0] != T(0));
  const index_t sy = B.sy, sz = B.sz;

  // Below ~32k nodes a parallel region costs more than it saves (and on a loaded
  // machine a descheduled thread stalls the barrier).
  const bool parallel = rows * (i1 - i0 + 1) > 32768;
#pragma omp parallel for schedule(static) num_threads(team(threads)) if (parallel)
  for (index_t r = 0; r < rows; ++r) {
    const index_t j = s.lo[1] + r % nj, k = s.lo[2] + r / nj;
    const index_t row = j * sy + k * sz;
    T* o = g.out + row;
    if (g.base) {
      const T* b = g.base + row;
      const T alpha = g.alpha;
#pragma omp simd
      for (index_t i = i0; i <= i1; ++i) o[i] = alpha * b[i];
    } else {
      for (index_t i = i0; i <= i1; ++i) o[i] = T(0);
    }
    for (int q = 0; q < 2; ++q) {
      if (!g.src[q]) continue;
      const T* f = g.src[q] + row;
      const T sc = g.src_scale[q];
#pragma omp simd
      for (index_t i = i0; i <= i1; ++i) o[i] += sc * f[i];
    }
    const T* v = g.v + row;
    if (use_x) {
      const index_t off = X.shared ? 0 : row;
      add_x(o, v, X.a + off, X.d + off, X.c + off, X.prev, X.next, X.n, i0, i1, g.w[1]);
    }
    if (use_y) {
      const T* vm = g.v + Y.prev[j] * sy + k * sz;
      const T* vp = g.v + Y.next[j] * sy + k * sz;
      const T w = g.w[2];
      if (Y.shared)
        add_rows_shared(o, vm, v, vp, w * Y.a[j], w * Y.d[j], w * Y.c[j], i0, i1);
      else
        add_rows_full(o, vm, v, vp, Y.a + row, Y.d + row, Y.c + row, w, i0, i1);
    }
    if (use_z) {
      const T* vm = g.v + j * sy + Z.prev[k] * sz;
      const T* vp = g.v + j * sy + Z.next[k] * sz;
      const T w = g.w[3];
      if (Z.shared)
        add_rows_shared(o, vm, v, vp, w * Z.a[k], w * Z.d[k], w * Z.c[k], i0, i1);
      else
        add_rows_full(o, vm, v, vp, Z.a + row, Z.d + row, Z.c + row, w, i0, i1);
    }
    if (use_m) {
      const T w0 = g.w[0];
      for (const auto& m : s.mixed) {
        if (!m.active) continue;
        const T* coef = m.coef + row;
        if (m.p == 0) {
          // x with y or z: three rows along the other axis, each differentiated in x.
          const auto& Q = s.axis[m.q];
          const index_t l = m.q == 1 ? j : k, sq = m.q == 1 ? sy : sz;
          const index_t other = m.q == 1 ? k * sz : j * sy;
          const index_t idx[3] = {Q.prev[l], l, Q.next[l]};
          const T wq[3] = {Q.fm[l], Q.f0[l], Q.fp[l]};
          for (int u = 0; u < 3; ++u)
            if (wq[u] != T(0)) add_mixed_x(o, g.v + idx[u] * sq + other, coef, w0 * wq[u], X, i0, i1);
        } else {
          // y with z: nine rows, no derivative along x.
          const index_t jy[3] = {Y.prev[j], j, Y.next[j]}, kz[3] = {Z.prev[k], k, Z.next[k]};
          const T wy[3] = {Y.fm[j], Y.f0[j], Y.fp[j]}, wz[3] = {Z.fm[k], Z.f0[k], Z.fp[k]};
          for (int u = 0; u < 3; ++u)
            for (int q = 0; q < 3; ++q) {
              const T c = w0 * wy[u] * wz[q];
              if (c == T(0)) continue;
              const T* rr = g.v + jy[u] * sy + kz[q] * sz;
#pragma omp simd
              for (index_t i = i0; i <= i1; ++i) o[i] += c * coef[i] * rr[i];
            }
        }
      }
    }
  }
}

template void stencil_apply<float>(const detail::StencilView<float>&, const detail::ApplyArgs<float>&, int);
template void stencil_apply<double>(const detail::StencilView<double>&, const detail::ApplyArgs<double>&, int);

}  // namespace adi::cpu
