#pragma once
// Small problems for the conventions every plan family shares (adi/base/pivot.hpp,
// docs/design.md "One plan idea, spelled one way"): a failing pivot at a known system and
// row, and well-posed batches to count allocations around a first solve. Host vectors; the
// CUDA tests copy them to the device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adi/adi.hpp"

namespace adi::test_conventions {

// Runs f, expects E with system() and row() as given (row -1: not checked).
template <class E, class F>
void expect_fields(F&& f, std::int64_t system, std::int64_t row, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const E& e) {
    EXPECT_EQ(e.system(), system) << what << ": " << e.what();
    if (row >= 0) EXPECT_EQ(e.row(), row) << what << ": " << e.what();
  }
}

// `count` lines of n rows, stride 1, row i of every line: -x[i-1] + 4 x[i] - x[i+1] = 1 + i.
// With bad_line >= 0, row bad_row of that line is all zeros (a zero pivot there, singular).
struct Tridiagonal {
  index_t n = 0, count = 0;
  std::vector<double> a, b, c, d;
};
inline Tridiagonal tridiagonal(index_t n, index_t count, index_t bad_line = -1, index_t bad_row = -1) {
  Tridiagonal t;
  t.n = n;
  t.count = count;
  const std::size_t all = static_cast<std::size_t>(n * count);
  t.a.assign(all, -1.0);
  t.b.assign(all, 4.0);
  t.c.assign(all, -1.0);
  t.d.resize(all);
  for (std::size_t k = 0; k < all; ++k) t.d[k] = 1.0 + double(k % static_cast<std::size_t>(n));
  if (bad_line >= 0) {
    const std::size_t k = static_cast<std::size_t>(bad_line * n + bad_row);
    t.a[k] = t.b[k] = t.c[k] = 0.0;
  }
  return t;
}

// Block-tridiagonal systems (BlockContiguous, row-major): B_i = 4 I + 0.5 (off-diagonal),
// A_i = C_i = -I. With bad_system >= 0, block row bad_row of that system has B = A = C = 0.
struct Block {
  int m = 2;
  index_t n = 0, systems = 0;
  std::vector<double> a, b, c, d;
};
inline Block block(int m, index_t n, index_t systems, index_t bad_system = -1, index_t bad_row = -1) {
  Block p;
  p.m = m;
  p.n = n;
  p.systems = systems;
  const std::size_t mm = static_cast<std::size_t>(m) * m, rows = static_cast<std::size_t>(n * systems);
  p.a.assign(rows * mm, 0.0);
  p.b.assign(rows * mm, 0.0);
  p.c.assign(rows * mm, 0.0);
  p.d.assign(rows * static_cast<std::size_t>(m), 1.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) {
        const std::size_t k = r * mm + static_cast<std::size_t>(i * m + j);
        p.b[k] = i == j ? 4.0 : 0.5;
        p.a[k] = p.c[k] = i == j ? -1.0 : 0.0;
      }
  if (bad_system >= 0) {
    const std::size_t r = static_cast<std::size_t>(bad_system * n + bad_row);
    for (std::size_t k = r * mm; k < (r + 1) * mm; ++k) p.a[k] = p.b[k] = p.c[k] = 0.0;
  }
  return p;
}

// Variable-size systems back to back (CompactBatch): sizes, then the bands like tridiagonal().
struct Variable {
  std::vector<int> sizes;
  std::vector<double> a, b, c, d;
};
inline Variable variable(std::vector<int> sizes, int bad_system = -1, int bad_row = -1) {
  Variable v;
  v.sizes = std::move(sizes);
  std::size_t at = 0, bad = 0;
  for (std::size_t s = 0; s < v.sizes.size(); ++s) {
    if (int(s) == bad_system) bad = at + static_cast<std::size_t>(bad_row);
    at += static_cast<std::size_t>(v.sizes[s]);
  }
  v.a.assign(at, -1.0);
  v.b.assign(at, 4.0);
  v.c.assign(at, -1.0);
  v.d.assign(at, 1.0);
  if (bad_system >= 0) v.a[bad] = v.b[bad] = v.c[bad] = 0.0;
  return v;
}

// SPD matrices back to back, column-major (CompactBatch): 4 I - (neighbours). With
// bad_matrix >= 0, entry (col, col) of that matrix is -1: not positive definite at column col.
struct Cholesky {
  std::vector<int> sizes;
  std::vector<double> a, rhs;
};
inline Cholesky cholesky(std::vector<int> sizes, int bad_matrix = -1, int bad_col = -1) {
  Cholesky p;
  p.sizes = std::move(sizes);
  std::size_t at = 0, rows = 0;
  for (std::size_t s = 0; s < p.sizes.size(); ++s) {
    const int n = p.sizes[s];
    p.a.resize(at + static_cast<std::size_t>(n * n), 0.0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        p.a[at + static_cast<std::size_t>(j * n + i)] = i == j ? 4.0 : (i == j + 1 || j == i + 1 ? -1.0 : 0.0);
    if (int(s) == bad_matrix) p.a[at + static_cast<std::size_t>(bad_col * n + bad_col)] = -1.0;
    at += static_cast<std::size_t>(n * n);
    rows += static_cast<std::size_t>(n);
  }
  p.rhs.assign(rows, 1.0);
  return p;
}

}  // namespace adi::test_conventions
