#pragma once
// Periodic block-tridiagonal systems along the grid lines of a periodic box,
//     A_i u_{i-1} + B_i u_i + C_i u_{i+1} = d_i,   i = 0..n-1, indices taken modulo n,
// solved exactly with adi::BlockTridiagonalPlan (which solves non-periodic systems) by
// bordering, the block form of Sherman-Morrison-Woodbury:
//   1. rows 0..n-2 form a non-periodic system T' in u_0..u_{n-2}, coupled to u_{n-1}
//      through E = [A_0; 0; ...; 0; C_{n-2}] (M columns).  T' X = d' and T' Y = E are
//      M + 1 solves with the same blocks (one plan call each);
//   2. then u' = X - Y u_{n-1}, and row n-1 leaves the M x M Schur system
//      (B_{n-1} - A_{n-1} Y_{n-2} - C_{n-1} Y_0) u_{n-1} = d_{n-1} - A_{n-1} X_{n-2} - C_{n-1} X_0,
//      solved per line with partial pivoting;
//   3. u_i = X_i - Y_i u_{n-1} for i < n-1.
// The per-point and per-line steps are functors run by a launch policy (OpenMP loop on
// the host, a CUDA kernel in euler_cuda.cu), so one code serves both backends.
// Header is C++17 (nvcc compiles it in euler_cuda.cu).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "adi/block_tridiagonal.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"

#if defined(__CUDACC__)
#define CFD_HD __host__ __device__
#else
#define CFD_HD
#endif

namespace cfd {

using adi::index_t;

// A periodic box of n[0] x n[1] x n[2] points (no duplicated end point), x fastest:
// point p = i + n0*(j + n1*k). A 2D box has n[2] = 1.
struct Mesh {
  index_t n[3] = {1, 1, 1};

  CFD_HD index_t points() const { return n[0] * n[1] * n[2]; }
  CFD_HD index_t stride(int a) const { return a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1]; }
  CFD_HD index_t coord(index_t p, int a) const { return (p / stride(a)) % n[a]; }
  // The point `off` steps from p along axis a, wrapped around (|off| <= n[a]); i is
  // coord(p, a), passed in so that a stencil divides once per point, not per neighbour.
  CFD_HD index_t shift(index_t p, int a, int off, index_t i) const {
    index_t j = i + off;
    if (j < 0) j += n[a];
    if (j >= n[a]) j -= n[a];
    return p + (j - i) * stride(a);
  }
  // Lines along axis a, numbered over the other two axes (the lower one fastest).
  CFD_HD index_t lines(int a) const { return points() / n[a]; }
  CFD_HD index_t line_start(int a, index_t l) const {
    const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    return (l % n[b]) * stride(b) + (l / n[b]) * stride(c);
  }
};

// How the values of every point sit in one array: array of structures (the values of
// a point together) or structure of arrays (one array of all points per value).
enum class Layout { aos, soa };
inline const char* layout_name(Layout l) { return l == Layout::aos ? "aos" : "soa"; }

// Value v of point p at data[p*ps + v*vs].
template <class T>
struct Points {
  T* data = nullptr;
  index_t ps = 0, vs = 0;
  CFD_HD T& operator()(index_t p, int v) const { return data[p * ps + v * vs]; }
};

template <class T>
Points<T> points_view(T* data, Layout layout, index_t values, index_t points) {
  return layout == Layout::aos ? Points<T>{data, values, 1} : Points<T>{data, 1, points};
}

// The same strides for the solver's PointArray.
inline adi::PointArray point_array(Layout layout, index_t values, const Mesh& m) {
  return layout == Layout::aos ? adi::PointArray::aos(values, m.n[0], m.n[1], m.n[2])
                               : adi::PointArray::soa(m.n[0], m.n[1], m.n[2]);
}

// Small math that compiles for host and device alike.
CFD_HD inline float magnitude(float x) { return x < 0 ? -x : x; }
CFD_HD inline double magnitude(double x) { return x < 0 ? -x : x; }
// False for NaN and +-inf (x - x is NaN for both).
template <class T>
CFD_HD inline bool finite(T x) {
  return x - x == T(0);
}

// Solves S x = r (M x M, row-major; both overwritten, x in r) by Gaussian elimination
// with partial pivoting; false when a pivot is <= tol * max|S| or a value is not finite.
template <class T, int M>
CFD_HD inline bool small_solve(T (&s)[M][M], T (&r)[M], T tol) {
  T scale = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < M; ++j) {
      if (!finite(s[i][j])) return false;
      scale = magnitude(s[i][j]) > scale ? magnitude(s[i][j]) : scale;
    }
  for (int k = 0; k < M; ++k) {
    int piv = k;
    for (int i = k + 1; i < M; ++i)
      if (magnitude(s[i][k]) > magnitude(s[piv][k])) piv = i;
    if (!(magnitude(s[piv][k]) > tol * scale)) return false;
    if (piv != k) {
      for (int j = 0; j < M; ++j) {
        const T t = s[k][j];
        s[k][j] = s[piv][j];
        s[piv][j] = t;
      }
      const T t = r[k];
      r[k] = r[piv];
      r[piv] = t;
    }
    const T inv = T(1) / s[k][k];
    for (int i = k + 1; i < M; ++i) {
      const T f = s[i][k] * inv;
      for (int j = k + 1; j < M; ++j) s[i][j] -= f * s[k][j];
      r[i] -= f * r[k];
    }
  }
  bool ok = true;
  for (int i = M - 1; i >= 0; --i) {
    T x = r[i];
    for (int j = i + 1; j < M; ++j) x -= s[i][j] * r[j];
    r[i] = x / s[i][i];
    ok = ok && finite(r[i]);
  }
  return ok;
}

namespace detail {

// Right-hand sides of T' Y = E: column `col` of E holds column col of A_0 in block row 0
// and of C_{n-2} in block row n-2 (both, added, when n = 2), zero elsewhere.
template <class T, int M>
struct BorderColumnsOp {
  Mesh mesh;
  int axis;
  Points<const T> a, c;
  Points<T> y;      // column 0; column j at y.data + j*ycol
  index_t ycol;
  CFD_HD void operator()(index_t p) const {
    const index_t i = mesh.coord(p, axis), n = mesh.n[axis];
    for (int col = 0; col < M; ++col) {
      Points<T> yc{y.data + col * ycol, y.ps, y.vs};
      for (int r = 0; r < M; ++r) {
        T v = 0;
        if (i == 0) v += a(p, r * M + col);
        if (i == n - 2) v += c(p, r * M + col);
        yc(p, r) = v;
      }
    }
  }
};

// Per line: the M x M Schur system of row n-1; writes u_{n-1} into d and a status.
template <class T, int M>
struct BorderCloseOp {
  Mesh mesh;
  int axis;
  Points<const T> a, b, c, y;
  index_t ycol;
  Points<T> d;
  int* status;  // per line: 0 fine, 1 singular Schur block
  T tol;
  CFD_HD void operator()(index_t l) const {
    const index_t n = mesh.n[axis], s = mesh.stride(axis);
    const index_t first = mesh.line_start(axis, l), pen = first + (n - 2) * s, last = first + (n - 1) * s;
    T sm[M][M], r[M];
    for (int i = 0; i < M; ++i) {
      r[i] = d(last, i);
      for (int j = 0; j < M; ++j) sm[i][j] = b(last, i * M + j);
    }
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < M; ++k) {
        const T aik = a(last, i * M + k), cik = c(last, i * M + k);
        r[i] -= aik * d(pen, k) + cik * d(first, k);
        for (int j = 0; j < M; ++j)
          sm[i][j] -= aik * y.data[j * ycol + pen * y.ps + k * y.vs] +
                      cik * y.data[j * ycol + first * y.ps + k * y.vs];
      }
    const bool ok = small_solve<T, M>(sm, r, tol);
    status[l] = ok ? 0 : 1;
    for (int i = 0; i < M; ++i) d(last, i) = r[i];
  }
};

// Per point of rows 0..n-2: u_i = X_i - Y_i u_{n-1}.
template <class T, int M>
struct BorderBackOp {
  Mesh mesh;
  int axis;
  Points<const T> y;
  index_t ycol;
  Points<T> d;
  CFD_HD void operator()(index_t p) const {
    const index_t i = mesh.coord(p, axis), n = mesh.n[axis];
    if (i == n - 1) return;
    const index_t last = p + (n - 1 - i) * mesh.stride(axis);
    T un[M];
    for (int j = 0; j < M; ++j) un[j] = d(last, j);
    for (int r = 0; r < M; ++r) {
      T x = d(p, r);
      for (int j = 0; j < M; ++j) x -= y.data[j * ycol + p * y.ps + r * y.vs] * un[j];
      d(p, r) = x;
    }
  }
};

}  // namespace detail

// Every periodic line along `axis` of a mesh, block size M, blocks and vectors in the
// given layout (M*M row-major values per point for A, B, C; M per point for d).
// `Launch` runs a functor over an index range: launch(count, op) calls op(i) for
// i in [0, count) in the executor's memory space.
template <class T, int M, class Launch>
class PeriodicBlockLines {
 public:
  PeriodicBlockLines(const Mesh& mesh, int axis, Layout layout, const adi::Executor& exec, Launch launch,
                     adi::BlockTridiagonalOptions options = {})
      : mesh_(checked(mesh, axis)),
        axis_(axis),
        layout_(layout),
        exec_(exec),
        launch_(launch),
        plan_(exec, reduced_lines(mesh, axis, layout), options),
        y_(index_t(M) * M * mesh.points(), exec),
        status_(mesh.lines(axis), exec),
        host_status_(std::size_t(mesh.lines(axis))) {}

  // Solves every line in place: a, b, c are the blocks, d the right-hand sides, which
  // are overwritten by the solution. Throws adi::SingularSystem naming the line when the
  // plan or the closing M x M system meets a singular pivot.
  void solve(const T* a, const T* b, const T* c, T* d) {
    const index_t np = mesh_.points(), ycol = index_t(M) * np;
    const auto blk = [&](const T* p) { return points_view(p, layout_, index_t(M) * M, np); };
    const Points<T> dv = points_view(d, layout_, M, np), yv = points_view(y_.data(), layout_, M, np);
    const Points<const T> yc{yv.data, yv.ps, yv.vs};
    launch_(np, detail::BorderColumnsOp<T, M>{mesh_, axis_, blk(a), blk(c), yv, ycol});
    const adi::BlockBands<T> bands{a, b, c};
    // M + 1 solves with one set of blocks: X (in d) and the M columns of Y.
    plan_.solve(bands, d, d);
    for (int col = 0; col < M; ++col) plan_.solve(bands, y_.data() + col * ycol, y_.data() + col * ycol);
    const T tol = T(16) * std::numeric_limits<T>::epsilon();
    launch_(mesh_.lines(axis_),
            detail::BorderCloseOp<T, M>{mesh_, axis_, blk(a), blk(b), blk(c), yc, ycol, dv, status_.data(), tol});
    status_.copy_to_host(host_status_.data());
    for (std::size_t l = 0; l < host_status_.size(); ++l)
      if (host_status_[l] != 0)
        throw adi::SingularSystem("periodic block solve along " + std::string(adi::axis_name(adi::Axis(axis_))) +
                                  ": the closing " + std::to_string(M) + "x" + std::to_string(M) +
                                  " Schur block of line " + std::to_string(l) +
                                  " is singular or nearly so; reduce the time step (CFL)");
    launch_(np, detail::BorderBackOp<T, M>{mesh_, axis_, yc, ycol, dv});
  }

  const adi::BlockTridiagonalPlan<T>& plan() const { return plan_; }
  const Mesh& mesh() const { return mesh_; }
  int axis() const { return axis_; }

  // The non-periodic systems of rows 0..n-2 that the plan solves.
  static adi::BlockLineSet reduced_lines(const Mesh& m, int axis, Layout layout) {
    adi::BlockLineSet l = adi::to_block_lines(adi::BlockGridLines{
        M, m.n[0], m.n[1], m.n[2], adi::Axis(axis), point_array(layout, M, m), point_array(layout, index_t(M) * M, m)});
    l.n -= 1;
    return adi::to_block_lines(l);
  }

 private:
  static const Mesh& checked(const Mesh& m, int axis) {
    adi::detail::require(axis >= 0 && axis < 3, "PeriodicBlockLines: axis " + std::to_string(axis) +
                                                    " must be 0, 1 or 2");
    adi::detail::require(m.n[axis] >= 3, "PeriodicBlockLines: a periodic line needs n >= 3 points, got n = " +
                                             std::to_string(m.n[axis]) + " along axis " + std::to_string(axis));
    for (int d = 0; d < 3; ++d)
      adi::detail::require(m.n[d] >= 1, "PeriodicBlockLines: mesh extent " + std::to_string(m.n[d]) +
                                            " along axis " + std::to_string(d) + " must be >= 1");
    return m;
  }

  Mesh mesh_;
  int axis_;
  Layout layout_;
  adi::Executor exec_;
  Launch launch_;
  adi::BlockTridiagonalPlan<T> plan_;
  adi::Array<T> y_;      // the M columns of Y, each M values per point in `layout`
  adi::Array<int> status_;
  std::vector<int> host_status_;
};

}  // namespace cfd
