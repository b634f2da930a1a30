#pragma once
// Test machinery for the block-tridiagonal solvers (every backend): a random, block
// diagonally dominant batch in any BlockLineSet (with an offset base pointer), poisoned
// with NaN everywhere the layout does not use and in A_0 and C_{n-1} (never read), and
// checks of a result against a dense LU (Eigen, partial pivoting) of each assembled
// system, plus the residual of every system and untouched values outside the layout.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "adi/block_tridiagonal.hpp"

namespace adi::test_block {

template <class T>
struct BlockProblem {
  BlockLineSet l;
  bool periodic = false;  // block-cyclic: A_0 couples row 0 to u_{n-1}, C_{n-1} row n-1 to u_0
  index_t base = 0;  // offset of the layout's first value in each allocation
  std::vector<T> a, b, c, d;
  std::vector<char> used;  // values of d/u that belong to the layout

  index_t vi(index_t sys, index_t i, int v) const {
    const BlockStrides& s = l.vectors;
    return base + (sys % l.count0) * s.system0 + (sys / l.count0) * s.system1 + i * s.row + v * s.component;
  }
  index_t bi(index_t sys, index_t i, int r, int q) const {
    const BlockStrides& s = l.blocks;
    return base + (sys % l.count0) * s.system0 + (sys / l.count0) * s.system1 + i * s.row +
           block_entry(l.order, l.m, r, q) * s.component;
  }
};

// The same problem with every block stored column-major (entry (r, q) moved to where the
// column-major layout keeps it; the NaN poison elsewhere stays as it was).
template <class T>
BlockProblem<T> to_column_major(const BlockProblem<T>& p) {
  BlockProblem<T> q = p;
  q.l.order = BlockOrder::column_major;
  for (index_t sys = 0; sys < p.l.systems(); ++sys)
    for (index_t i = 0; i < p.l.n; ++i)
      for (int r = 0; r < p.l.m; ++r)
        for (int c = 0; c < p.l.m; ++c) {
          q.a[q.bi(sys, i, r, c)] = p.a[p.bi(sys, i, r, c)];
          q.b[q.bi(sys, i, r, c)] = p.b[p.bi(sys, i, r, c)];
          q.c[q.bi(sys, i, r, c)] = p.c[p.bi(sys, i, r, c)];
        }
  return q;
}


inline std::string describe(const BlockLineSet& l) {
  auto st = [](const BlockStrides& s) {
    return "(" + std::to_string(s.row) + "," + std::to_string(s.system0) + "," + std::to_string(s.system1) + "," +
           std::to_string(s.component) + ")";
  };
  return "m=" + std::to_string(l.m) + " n=" + std::to_string(l.n) + " systems=" + std::to_string(l.count0) + "x" +
         std::to_string(l.count1) + " vec" + st(l.vectors) + " blk" + st(l.blocks) + " " +
         block_order_name(l.order);
}

// permute_rows: the M equations of every block row are shuffled (same solution, but
// the diagonal blocks lose their dominant diagonal: needs pivoting inside the block).
// periodic: A_0 and C_{n-1} are set (block-cyclic systems) instead of NaN.
template <class T>
BlockProblem<T> make_block_problem(const BlockLineSet& l, std::uint32_t seed, index_t base = 0,
                                   bool permute_rows = false, bool periodic = false) {
  BlockProblem<T> p;
  p.l = l;
  p.base = base;
  p.periodic = periodic;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::size_t vs = static_cast<std::size_t>(base + vector_span(l) + 3);
  const std::size_t bs = static_cast<std::size_t>(base + block_span(l) + 3);
  p.a.assign(bs, nan);
  p.b.assign(bs, nan);
  p.c.assign(bs, nan);
  p.d.assign(vs, nan);
  p.used.assign(vs, 0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  const int m = l.m;
  std::vector<int> perm(m);
  for (index_t sys = 0; sys < l.systems(); ++sys)
    for (index_t i = 0; i < l.n; ++i) {
      std::iota(perm.begin(), perm.end(), 0);
      if (permute_rows) std::shuffle(perm.begin(), perm.end(), rng);
      for (int r = 0; r < m; ++r) {
        const int pr = perm[r];  // equation r is stored as row pr
        double off = 0;
        for (int q = 0; q < m; ++q) {
          const double av = U(rng), cv = U(rng);
          if (i > 0 || periodic) p.a[p.bi(sys, i, pr, q)] = static_cast<T>(av), off += std::fabs(av);
          if (i + 1 < l.n || periodic) p.c[p.bi(sys, i, pr, q)] = static_cast<T>(cv), off += std::fabs(cv);
          if (q != r) {
            const double bv = U(rng);
            p.b[p.bi(sys, i, pr, q)] = static_cast<T>(bv);
            off += std::fabs(bv);
          }
        }
        const double diag = (off + 0.5 + 0.5 * (U(rng) + 1)) * (U(rng) < 0 ? -1 : 1);
        p.b[p.bi(sys, i, pr, r)] = static_cast<T>(diag);
        p.d[p.vi(sys, i, pr)] = static_cast<T>(U(rng) * 2);
        p.used[p.vi(sys, i, r)] = 1;
      }
    }
  return p;
}

// System sys assembled densely and solved by Eigen's LU with partial pivoting.
template <class T>
Eigen::VectorXd dense_solve(const BlockProblem<T>& p, index_t sys) {
  const int m = p.l.m;
  const index_t N = p.l.n * m;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(N, N);
  Eigen::VectorXd rhs(N);
  for (index_t i = 0; i < p.l.n; ++i)
    for (int r = 0; r < m; ++r) {
      rhs(i * m + r) = p.d[p.vi(sys, i, r)];
      const index_t n = p.l.n;
      for (int q = 0; q < m; ++q) {
        // Periodic: the neighbours wrap (and add up where they coincide, n <= 2).
        if (i > 0 || p.periodic) A(i * m + r, ((i + n - 1) % n) * m + q) += p.a[p.bi(sys, i, r, q)];
        A(i * m + r, i * m + q) += p.b[p.bi(sys, i, r, q)];
        if (i + 1 < n || p.periodic) A(i * m + r, ((i + 1) % n) * m + q) += p.c[p.bi(sys, i, r, q)];
      }
    }
  return A.partialPivLu().solve(rhs);
}

template <class T>
double tolerance() {
  return sizeof(T) == 4 ? 2e-4 : 1e-11;
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// u: the whole output allocation after the solve; before: its contents before (NaN
// poison, or d for an in-place solve). Checks every system's residual, a sample of
// systems (all when few) against the dense LU, and that nothing outside the layout moved.
template <class T>
void expect_block_solution(const BlockProblem<T>& p, const std::vector<T>& u, const std::vector<T>& before) {
  SCOPED_TRACE(describe(p.l) + " base=" + std::to_string(p.base) + (p.periodic ? " periodic" : ""));
  ASSERT_EQ(u.size(), before.size());
  const int m = p.l.m;
  const index_t systems = p.l.systems();
  // Residual of every system, relative to the size of its terms.
  double worst = 0;
  index_t worst_sys = -1;
  for (index_t sys = 0; sys < systems; ++sys)
    for (index_t i = 0; i < p.l.n; ++i)
      for (int r = 0; r < m; ++r) {
        double res = -static_cast<double>(p.d[p.vi(sys, i, r)]), scale = std::fabs(res);
        for (int q = 0; q < m; ++q) {
          auto add = [&](const std::vector<T>& blk, index_t row) {
            const double t = static_cast<double>(blk[p.bi(sys, i, r, q)]) * u[p.vi(sys, row, q)];
            res += t;
            scale += std::fabs(t);
          };
          const index_t n = p.l.n;
          if (i > 0 || p.periodic) add(p.a, (i + n - 1) % n);
          add(p.b, i);
          if (i + 1 < n || p.periodic) add(p.c, (i + 1) % n);
        }
        const double rel = std::isfinite(res) ? std::fabs(res) / scale : 1e300;
        if (!(rel <= worst)) worst = rel, worst_sys = sys;
      }
  EXPECT_LE(worst, tolerance<T>() / 10) << "worst residual in system " << worst_sys;
  // Against the dense LU.
  std::vector<index_t> sample;
  if (systems <= 6) {
    for (index_t s = 0; s < systems; ++s) sample.push_back(s);
  } else {
    sample = {0, 1, systems / 2, systems - 2, systems - 1};
  }
  if (p.l.n * m > 1024) sample.resize(std::min<std::size_t>(sample.size(), 2));
  for (index_t sys : sample) {
    const Eigen::VectorXd x = dense_solve(p, sys);
    double err = 0, size = 0;
    for (index_t i = 0; i < p.l.n; ++i)
      for (int v = 0; v < m; ++v) {
        const double uv = u[p.vi(sys, i, v)];
        err = std::isfinite(uv) ? std::max(err, std::fabs(uv - x(i * m + v))) : 1e300;
        size = std::max(size, std::fabs(x(i * m + v)));
      }
    EXPECT_LE(err / std::max(size, 1e-300), tolerance<T>()) << "system " << sys << " against the dense LU";
  }
  // Values outside the layout are untouched.
  index_t moved = 0;
  for (std::size_t k = 0; k < u.size(); ++k)
    if (!p.used[k] && !same_bits(u[k], before[k])) ++moved;
  EXPECT_EQ(moved, 0) << "values outside the layout were written";
}

// Layouts exercised by every backend: the two batch layouts, a strided one with padding
// and an offset base, and the grid lines (array-of-structures and structure-of-arrays).
inline BlockLineSet padded_layout(int m, index_t n, index_t c0, index_t c1) {
  // Vectors: structure of arrays with padded rows; blocks: array of structures with a gap.
  const index_t mm = static_cast<index_t>(m) * m;
  BlockStrides v{c0 + 3, 1, (c0 + 3) * n + 5, 0};
  v.component = v.system1 * std::max<index_t>(c1, 1) + 7;
  BlockStrides b{mm + 2, 0, 0, 1};
  b.system0 = (mm + 2) * n + 1;
  b.system1 = b.system0 * c0 + 4;
  return {m, n, c0, c1, v, b};
}

enum class FieldLayout { aos, soa, soa_padded };
inline const char* name(FieldLayout f) {
  return f == FieldLayout::aos ? "aos" : f == FieldLayout::soa ? "soa" : "soa_padded";
}

inline BlockGridLines grid_lines(int m, index_t nx, index_t ny, index_t nz, Axis axis, FieldLayout f) {
  const index_t mm = static_cast<index_t>(m) * m;
  BlockGridLines g{m, nx, ny, nz, axis, {}, {}};
  switch (f) {
    case FieldLayout::aos:
      g.vectors = PointArray::aos(m, nx, ny, nz);
      g.blocks = PointArray::aos(mm, nx, ny, nz);
      break;
    case FieldLayout::soa:
      g.vectors = PointArray::soa(nx, ny, nz);
      g.blocks = PointArray::soa(nx, ny, nz);
      break;
    case FieldLayout::soa_padded: {
      const Box3 box{nx, ny, nz, nx + 5, (nx + 5) * ny + 3};
      g.vectors = PointArray::soa(box, box.span() + 11);
      g.blocks = PointArray::soa(box, box.span() + 2);
      break;
    }
  }
  return g;
}

// Layouts every backend's column-major test runs: the two batch layouts (odd counts), the
// strided one with gathering loads (component > 1) and grid lines along y (aos and soa).
inline std::vector<BlockLineSet> column_major_layouts(int m, index_t n) {
  return {adi::to_block_lines(adi::BlockContiguous{m, n, 33}), adi::to_block_lines(adi::BlockInterleaved{m, n, 31}),
          adi::to_block_lines(padded_layout(m, n, 5, 3)),
          adi::to_block_lines(grid_lines(m, 3, n, 5, Axis::y, FieldLayout::aos)),
          adi::to_block_lines(grid_lines(m, 3, n, 5, Axis::y, FieldLayout::soa))};
}

// How far two solutions of the same problem (row- and column-major blocks) are apart: the
// largest |x - y| / max(1, |x|) over the values, 1e300 where one is NaN and the other not
// (positions outside the layout must stay NaN in both). Not bitwise: the compiler may fuse
// multiply-adds differently in the two instantiations.
template <class T>
double max_difference(const std::vector<T>& x, const std::vector<T>& y) {
  if (x.size() != y.size()) return 1e300;
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (std::isnan(x[i]) != std::isnan(y[i])) return 1e300;
      continue;
    }
    worst = std::max(worst, std::fabs(double(x[i]) - double(y[i])) / std::max(1.0, std::fabs(double(x[i]))));
  }
  return worst;
}

}  // namespace adi::test_block
