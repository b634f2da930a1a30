// Block Thomas on the host (paper, block part, section 5): each OpenMP thread solves
// whole systems, one at a time, with Eigen fixed-size M x M blocks (M a template
// parameter, so every block operation is unrolled and vectorised), keeping C*_i in a
// per-thread scratch of n*M*M values that stays in L1/L2 and d*_i in u.
#include "solvers/cpu/block_thomas.hpp"

#include <omp.h>

// GCC 12 reports Eigen's AVX-512 intrinsics wrappers as reading an uninitialised
// register (a known false positive of avx512fintrin.h); keep the build log readable.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "solvers/common/block_lu_core.hpp"
#include "solvers/reference/block_thomas.hpp"

namespace adi::cpu {
namespace {

constexpr index_t kNoFailure = std::numeric_limits<index_t>::max();

inline int thread_capacity(int threads) { return threads > 0 ? threads : std::max(1, omp_get_num_procs()); }

// Loads and stores of one block or vector; Unit: component stride 1 (figure 17/14
// layouts, array-of-structures grids), so a block is M*M consecutive values; Col: blocks
// stored column-major (BlockOrder::column_major), loaded straight into the row-major
// register block (Eigen maps the caller's order; no transposed copy of the arrays).
template <class T, int M, bool Unit, bool Col>
struct BlockIo {
  using Mat = Eigen::Matrix<T, M, M, Eigen::RowMajor>;
  using Stored = Eigen::Matrix<T, M, M, Col ? Eigen::ColMajor : Eigen::RowMajor>;
  using Vec = Eigen::Matrix<T, M, 1>;
  static Mat block(const T* p, index_t comp) {
    if constexpr (Unit) {
      (void)comp;
      return Eigen::Map<const Stored>(p);
    } else {
      Mat x;
      for (int r = 0; r < M; ++r)
        for (int c = 0; c < M; ++c) x(r, c) = p[(Col ? c * M + r : r * M + c) * comp];
      return x;
    }
  }
  static Vec vec(const T* p, index_t comp) {
    if constexpr (Unit) {
      (void)comp;
      return Eigen::Map<const Vec>(p);
    } else {
      Vec x;
      for (int r = 0; r < M; ++r) x(r) = p[r * comp];
      return x;
    }
  }
  static void store(T* p, index_t comp, const Vec& v) {
    if constexpr (Unit) {
      (void)comp;
      Eigen::Map<Vec> out(p);
      out = v;
    } else {
      for (int r = 0; r < M; ++r) p[r * comp] = v(r);
    }
  }
};

// Solves S X = R in place by LU with partial pivoting (S is overwritten;
// solvers/common/block_lu_core.hpp on Eigen rows). False when a pivot is at most
// tol * max|S| or the block holds a non-finite value.
template <class T, int M, class R>
bool lu_solve(Eigen::Matrix<T, M, M, Eigen::RowMajor>& s, R& r, T tol) {
  struct Rows {
    R& x;
    void swap(int k, int p) const { x.row(k).swap(x.row(p)); }
    void axpy(int i, T f, int k) const { x.row(i) -= f * x.row(k); }
    void scale(int i, T inv) const { x.row(i) *= inv; }
  } rows{r};
  return common::block_lu_solve<T, M>(s, rows, tol);
}

// One system: returns -1 or the first singular block row.
template <class T, int M, bool Unit, bool Col>
index_t solve_system(const BlockLineSet& l, index_t sys, const T* a, const T* b, const T* c, const T* d,
                     T* u, T tol, T* cs) {
  using Io = BlockIo<T, M, Unit, Col>;
  using Mat = typename Io::Mat;
  using Vec = typename Io::Vec;
  using Ext = Eigen::Matrix<T, M, M + 1, Eigen::RowMajor>;
  const BlockStrides& sb = l.blocks;
  const BlockStrides& sv = l.vectors;
  const index_t ob = (sys % l.count0) * sb.system0 + (sys / l.count0) * sb.system1;
  const index_t ov = (sys % l.count0) * sv.system0 + (sys / l.count0) * sv.system1;
  Vec ds = Vec::Zero();
  for (index_t i = 0; i < l.n; ++i) {
    const index_t pb = ob + i * sb.row, pv = ov + i * sv.row;
    Mat s = Io::block(b + pb, sb.component);
    Vec r = Io::vec(d + pv, sv.component);
    if (i > 0) {
      const Mat ai = Io::block(a + pb, sb.component);
      s.noalias() -= ai * Eigen::Map<const Mat>(cs + (i - 1) * M * M);
      r.noalias() -= ai * ds;
    }
    Ext x;
    if (i + 1 < l.n)
      x.template leftCols<M>() = Io::block(c + pb, sb.component);
    else
      x.template leftCols<M>().setZero();
    x.col(M) = r;
    if (!lu_solve<T, M>(s, x, tol)) return i;
    Eigen::Map<Mat>(cs + i * M * M) = x.template leftCols<M>();
    ds = x.col(M);
    Io::store(u + pv, sv.component, ds);
  }
  Vec next = ds;  // u_{n-1} = d*_{n-1}
  for (index_t i = l.n - 2; i >= 0; --i) {
    T* pu = u + ov + i * sv.row;
    const Vec ui = Io::vec(pu, sv.component) - Eigen::Map<const Mat>(cs + i * M * M) * next;
    Io::store(pu, sv.component, ui);
    next = ui;
  }
  return -1;
}

// One block-cyclic system (see reference::block_thomas_cyclic_system): rows 0..n-2 with
// a second right-hand-side block Z*_i, each folded into the last row as it is eliminated.
template <class T, int M, bool Unit, bool Col>
index_t solve_cyclic_system(const BlockLineSet& l, index_t sys, const T* a, const T* b, const T* c,
                            const T* d, T* u, T tol, T* cs, T* zs) {
  using Io = BlockIo<T, M, Unit, Col>;
  using Mat = typename Io::Mat;
  using Vec = typename Io::Vec;
  using Ext = Eigen::Matrix<T, M, 2 * M + 1, Eigen::RowMajor>;
  const BlockStrides& sb = l.blocks;
  const BlockStrides& sv = l.vectors;
  const index_t ob = (sys % l.count0) * sb.system0 + (sys / l.count0) * sb.system1;
  const index_t ov = (sys % l.count0) * sv.system0 + (sys / l.count0) * sv.system1;
  const index_t n = l.n, last = n - 1;
  auto blk = [&](const T* p, index_t i) { return Io::block(p + ob + i * sb.row, sb.component); };
  auto vec = [&](index_t i) { return Io::vec(d + ov + i * sv.row, sv.component); };
  if (n == 1) {
    Mat s = blk(a, 0) + blk(b, 0) + blk(c, 0);
    Eigen::Matrix<T, M, 1> x = vec(0);
    if (!lu_solve<T, M>(s, x, tol)) return 0;
    Io::store(u + ov, sv.component, x);
    return -1;
  }
  Mat F = blk(c, last);
  if (n == 2) F += blk(a, last);
  Mat G = blk(b, last);
  Vec g = vec(last);
  Vec ds = Vec::Zero();
  // G, the last block row's Schur complement B_last - sum F_i Z_i, cancels to rounding noise
  // when the block-circulant matrix is singular (a periodic block Laplacian, b = 2I,
  // a = c = -I): its pivots then come out as noise instead of 0 and the solve returns values
  // of 1e12..1e15. A pivot of G at or below 64 eps times the size of the terms that
  // cancelled is reported like a zero pivot, as the scalar lines' Sherman-Morrison
  // denominator is (solvers/common/cyclic_denominator.hpp): only where no correct digit is
  // left (cond beyond ~1/(64 eps)), never on the dominant blocks of the ADI sweeps.
  T cancelled = G.cwiseAbs().maxCoeff();
  for (index_t i = 0; i < last; ++i) {
    Mat s = blk(b, i);
    Vec r = vec(i);
    Mat e = Mat::Zero();
    if (i == 0) e += blk(a, 0);
    if (i == n - 2) e += blk(c, i);
    if (i > 0) {
      const Mat ai = blk(a, i);
      s.noalias() -= ai * Eigen::Map<const Mat>(cs + (i - 1) * M * M);
      e.noalias() -= ai * Eigen::Map<const Mat>(zs + (i - 1) * M * M);
      r.noalias() -= ai * ds;
    }
    Ext x;
    if (i + 1 < last)
      x.template leftCols<M>() = blk(c, i);
    else
      x.template leftCols<M>().setZero();
    x.template middleCols<M>(M) = e;
    x.col(2 * M) = r;
    if (!lu_solve<T, M>(s, x, tol)) return i;
    const Mat ci = x.template leftCols<M>(), zi = x.template middleCols<M>(M);
    Eigen::Map<Mat>(cs + i * M * M) = ci;
    Eigen::Map<Mat>(zs + i * M * M) = zi;
    ds = x.col(2 * M);
    Io::store(u + ov + i * sv.row, sv.component, ds);
    g.noalias() -= F * ds;
    cancelled += T(M) * F.cwiseAbs().maxCoeff() * zi.cwiseAbs().maxCoeff();
    G.noalias() -= F * zi;
    Mat fn = -F * ci;
    if (i + 1 == n - 2) fn += blk(a, last);
    F = fn;
  }
  const T gmax = G.cwiseAbs().maxCoeff();
  const T noise = T(64) * std::numeric_limits<T>::epsilon() * cancelled;
  if (!(gmax > noise) || !lu_solve<T, M>(G, g, std::max(tol, noise / gmax))) return last;
  Io::store(u + ov + last * sv.row, sv.component, g);
  Vec next = g;
  for (index_t i = n - 2; i >= 0; --i) {
    T* pu = u + ov + i * sv.row;
    const Vec ui = Io::vec(pu, sv.component) - Eigen::Map<const Mat>(cs + i * M * M) * next -
                   Eigen::Map<const Mat>(zs + i * M * M) * g;
    Io::store(pu, sv.component, ui);
    next = ui;
  }
  return -1;
}

template <class T, int M, bool Unit, bool Col>
BlockFailure run(const BlockLineSet& l, const T* a, const T* b, const T* c, const T* d, T* u, T tol,
                 bool periodic, void* workspace, int threads) {
  const index_t systems = l.systems();
  // Below ~32k values a parallel region costs more than it saves (as in batch.hpp).
  const index_t values = systems * l.n * M * M;
  const int cap = thread_capacity(threads);
  const int nt = values < 32768 ? 1 : static_cast<int>(std::clamp<index_t>(systems, 1, cap));
  index_t first = kNoFailure;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(min : first)
  {
    const std::size_t per = static_cast<std::size_t>(l.n) * M * M;
    T* cs = static_cast<T*>(workspace) + static_cast<std::size_t>(omp_get_thread_num()) * per * (periodic ? 2 : 1);
#pragma omp for schedule(static)
    for (index_t sys = 0; sys < systems; ++sys) {
      const index_t row = periodic ? solve_cyclic_system<T, M, Unit, Col>(l, sys, a, b, c, d, u, tol, cs, cs + per)
                                   : solve_system<T, M, Unit, Col>(l, sys, a, b, c, d, u, tol, cs);
      if (row >= 0) first = std::min(first, sys * l.n + row);
    }
  }
  return first == kNoFailure ? -1 : first;
}

template <class T, int M>
BlockFailure run_m(const BlockLineSet& l, const T* a, const T* b, const T* c, const T* d, T* u, T tol,
                   bool periodic, void* ws, int threads) {
  const bool unit = l.blocks.component == 1 && l.vectors.component == 1;
  if (l.order == BlockOrder::column_major)
    return unit ? run<T, M, true, true>(l, a, b, c, d, u, tol, periodic, ws, threads)
                : run<T, M, false, true>(l, a, b, c, d, u, tol, periodic, ws, threads);
  return unit ? run<T, M, true, false>(l, a, b, c, d, u, tol, periodic, ws, threads)
              : run<T, M, false, false>(l, a, b, c, d, u, tol, periodic, ws, threads);
}

}  // namespace

std::size_t block_thomas_workspace_bytes(const BlockLineSet& l, bool periodic, int threads,
                                         std::size_t value_size) {
  return static_cast<std::size_t>(thread_capacity(threads)) * static_cast<std::size_t>(l.n) * l.m * l.m *
         value_size * (periodic ? 2 : 1);
}

template <class T>
BlockFailure block_thomas(const BlockLineSet& l, const T* a, const T* b, const T* c, const T* d, T* u,
                          double tol, bool periodic, void* ws, int threads) {
  const T t = static_cast<T>(tol);
  switch (l.m) {
    case 2: return run_m<T, 2>(l, a, b, c, d, u, t, periodic, ws, threads);
    case 3: return run_m<T, 3>(l, a, b, c, d, u, t, periodic, ws, threads);
    case 4: return run_m<T, 4>(l, a, b, c, d, u, t, periodic, ws, threads);
    case 5: return run_m<T, 5>(l, a, b, c, d, u, t, periodic, ws, threads);
    case 6: return run_m<T, 6>(l, a, b, c, d, u, t, periodic, ws, threads);
    case 7: return run_m<T, 7>(l, a, b, c, d, u, t, periodic, ws, threads);
    default: return run_m<T, 8>(l, a, b, c, d, u, t, periodic, ws, threads);
  }
}

template <class T>
BlockFailure block_thomas_reference(const BlockLineSet& l, const T* a, const T* b, const T* c, const T* d,
                                    T* u, double tol, bool periodic) {
  const int m = l.m;
  const BlockStrides& sb = l.blocks;
  const BlockStrides& sv = l.vectors;
  std::vector<double> x;
  for (index_t sys = 0; sys < l.systems(); ++sys) {
    const index_t ob = (sys % l.count0) * sb.system0 + (sys / l.count0) * sb.system1;
    const index_t ov = (sys % l.count0) * sv.system0 + (sys / l.count0) * sv.system1;
    auto block = [&](const T* p) {
      return [=](index_t i, int r, int q) -> double {
        return p[ob + i * sb.row + block_entry(l.order, m, r, q) * sb.component];
      };
    };
    auto dv = [&](index_t i, int v) -> double { return d[ov + i * sv.row + v * sv.component]; };
    const index_t row = periodic
                            ? reference::block_thomas_cyclic_system(m, l.n, block(a), block(b), block(c), dv, tol, x)
                            : reference::block_thomas_system(m, l.n, block(a), block(b), block(c), dv, tol, x);
    if (row >= 0) return sys * l.n + row;  // systems run in order: the first is the smallest key
    for (index_t i = 0; i < l.n; ++i)
      for (int v = 0; v < m; ++v) u[ov + i * sv.row + v * sv.component] = static_cast<T>(x[i * m + v]);
  }
  return -1;
}

template BlockFailure block_thomas<float>(const BlockLineSet&, const float*, const float*, const float*,
                                          const float*, float*, double, bool, void*, int);
template BlockFailure block_thomas<double>(const BlockLineSet&, const double*, const double*, const double*,
                                           const double*, double*, double, bool, void*, int);
template BlockFailure block_thomas_reference<float>(const BlockLineSet&, const float*, const float*,
                                                    const float*, const float*, float*, double, bool);
template BlockFailure block_thomas_reference<double>(const BlockLineSet&, const double*, const double*,
                                                     const double*, const double*, double*, double, bool);

}  // namespace adi::cpu
