// The host block Thomas kernel (solvers/cpu/block_thomas.cpp) and the reference
// (solvers/reference/block_thomas.hpp) against a dense LU of every assembled system:
// every block size, odd lengths and counts, both precisions, the batch layouts and
// strided ones, in place, 1 and 2 threads, and the singular-block report.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "solvers/cpu/block_thomas.hpp"
#include "test_block_common.hpp"

namespace {

using adi::BlockLineSet;
using adi::index_t;
using namespace adi::test_block;

enum class Which { kernel, reference };

template <class T>
adi::cpu::BlockFailure run(Which w, const BlockProblem<T>& p, const T* d, T* u, int threads) {
  const index_t o = p.base;
  const double tol = 16 * std::numeric_limits<T>::epsilon();
  if (w == Which::reference)
    return adi::cpu::block_thomas_reference<T>(p.l, p.a.data() + o, p.b.data() + o, p.c.data() + o, d + o, u + o,
                                               tol, p.periodic);
  std::vector<T> ws(adi::cpu::block_thomas_workspace_bytes(p.l, p.periodic, threads, sizeof(T)) / sizeof(T) + 1);
  return adi::cpu::block_thomas<T>(p.l, p.a.data() + o, p.b.data() + o, p.c.data() + o, d + o, u + o, tol,
                                   p.periodic, ws.data(), threads);
}

template <class T>
void check(Which w, const BlockLineSet& l, bool in_place, int threads, index_t base, std::uint32_t seed,
           bool permute = false, bool periodic = false) {
  SCOPED_TRACE(std::string(w == Which::kernel ? "cpu_block_thomas" : "reference") +
               (in_place ? " in-place" : "") + " threads=" + std::to_string(threads));
  const auto p = make_block_problem<T>(l, seed, base, permute, periodic);
  std::vector<T> u = in_place ? p.d : std::vector<T>(p.d.size(), std::numeric_limits<T>::quiet_NaN());
  const std::vector<T> before = u;
  const auto key = run<T>(w, p, in_place ? u.data() : p.d.data(), u.data(), threads);
  ASSERT_EQ(key, -1) << "unexpected singular block";
  expect_block_solution(p, u, before);
}

template <class T>
class BlockThomasCpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BlockThomasCpu, Types);

TYPED_TEST(BlockThomasCpu, EveryBlockSizeAndLengthContiguous) {
  std::uint32_t seed = 1;
  for (int m = 2; m <= 8; ++m)
    for (index_t n : {1, 2, 3, 17, 128})
      for (index_t count : {1, 3, 37}) {
        if (n == 128 && count > 3 && m > 4) continue;  // the dense oracle's cost, not the kernel's
        const BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{m, n, count});
        check<TypeParam>(Which::kernel, l, false, 2, 0, seed++);
      }
}

TYPED_TEST(BlockThomasCpu, InterleavedAndStridedLayouts) {
  std::uint32_t seed = 100;
  for (int m = 2; m <= 8; ++m)
    for (index_t n : {1, 3, 17}) {
      check<TypeParam>(Which::kernel, adi::to_block_lines(adi::BlockInterleaved{m, n, 33}), false, 2, 0, seed++);
      // Component stride > 1 takes the gathering path; odd base offsets.
      check<TypeParam>(Which::kernel, adi::to_block_lines(padded_layout(m, n, 5, 3)), false, 2, 3, seed++);
    }
}

TYPED_TEST(BlockThomasCpu, InPlaceAndThreads) {
  std::uint32_t seed = 200;
  for (int m : {2, 5, 8})
    for (int threads : {1, 2, 0}) {
      check<TypeParam>(Which::kernel, adi::to_block_lines(adi::BlockContiguous{m, 17, 9}), true, threads, 1,
                       seed++);
      check<TypeParam>(Which::kernel, adi::to_block_lines(padded_layout(m, 3, 4, 2)), true, threads, 0, seed++);
    }
}

// Enough work (> 32k values) for the kernel to open a parallel region.
TYPED_TEST(BlockThomasCpu, ParallelBatch) {
  check<TypeParam>(Which::kernel, adi::to_block_lines(adi::BlockInterleaved{4, 64, 301}), false, 2, 0, 7);
  check<TypeParam>(Which::kernel, adi::to_block_lines(adi::BlockContiguous{3, 31, 257}), true, 0, 0, 8);
}

// Equations shuffled inside every block row: the diagonal blocks need row pivoting.
TYPED_TEST(BlockThomasCpu, PivotingInsideBlocks) {
  std::uint32_t seed = 300;
  for (int m = 2; m <= 8; ++m) {
    check<TypeParam>(Which::kernel, adi::to_block_lines(adi::BlockContiguous{m, 17, 5}), false, 1, 0, seed++, true);
    check<TypeParam>(Which::reference, adi::to_block_lines(adi::BlockContiguous{m, 17, 5}), false, 1, 0, seed++,
                     true);
  }
}

TYPED_TEST(BlockThomasCpu, ReferenceAgainstDenseLu) {
  std::uint32_t seed = 400;
  for (int m = 2; m <= 8; ++m)
    for (index_t n : {1, 2, 17}) {
      check<TypeParam>(Which::reference, adi::to_block_lines(adi::BlockContiguous{m, n, 3}), false, 1, 0, seed++);
      check<TypeParam>(Which::reference, adi::to_block_lines(padded_layout(m, n, 3, 2)), true, 1, 2, seed++);
    }
}

// Block-cyclic systems: every M, short lines (n = 1, 2 fold the corners onto the
// neighbours), strided layouts, in place, both the kernel and the reference.
TYPED_TEST(BlockThomasCpu, PeriodicSystems) {
  std::uint32_t seed = 500;
  for (Which w : {Which::kernel, Which::reference})
    for (int m = 2; m <= 8; ++m)
      for (index_t n : {1, 2, 3, 4, 17, 128}) {
        if (n == 128 && m > 5) continue;  // the dense oracle's cost
        check<TypeParam>(w, adi::to_block_lines(adi::BlockContiguous{m, n, 5}), n == 3, 2, 0, seed++, false, true);
        if (n == 17)
          check<TypeParam>(w, adi::to_block_lines(padded_layout(m, n, 3, 2)), false, 1, 2, seed++, m % 2 == 0, true);
      }
  // Enough work for the parallel region.
  check<TypeParam>(Which::kernel, adi::to_block_lines(adi::BlockInterleaved{3, 64, 200}), false, 2, 0, 9, false,
                   true);
}

// A singular final block of a periodic system reports row n-1.
TYPED_TEST(BlockThomasCpu, PeriodicSingularLastBlock) {
  using T = TypeParam;
  for (Which w : {Which::kernel, Which::reference}) {
    const BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{3, 6, 4});
    auto p = make_block_problem<T>(l, 21, 0, false, true);
    // Last block row: B_5 = 0, A_5 = 0, C_5 = 0 makes G = B_5 - (folded terms) = 0 exactly.
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) p.a[p.bi(2, 5, r, q)] = p.b[p.bi(2, 5, r, q)] = p.c[p.bi(2, 5, r, q)] = 0;
    std::vector<T> u(p.d.size());
    EXPECT_EQ(run<T>(w, p, p.d.data(), u.data(), 1), 2 * 6 + 5);
  }
}

// A singular pivot block reports the smallest (system, row); kernel and reference agree.
TYPED_TEST(BlockThomasCpu, SingularBlockReportsFirstSystemAndRow) {
  using T = TypeParam;
  for (int m : {2, 3, 8})
    for (Which w : {Which::kernel, Which::reference}) {
      const BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{m, 9, 40});
      auto p = make_block_problem<T>(l, 11);
      auto make_singular = [&](index_t sys, index_t row) {
        for (int q = 0; q < m; ++q) {
          if (row > 0)
            for (int r = 0; r < m; ++r) p.a[p.bi(sys, row, r, q)] = 0;  // S_row = B_row
          p.b[p.bi(sys, row, 1, q)] = p.b[p.bi(sys, row, 0, q)];      // two equal rows
        }
      };
      make_singular(31, 2);
      make_singular(17, 6);
      make_singular(17, 7);
      std::vector<T> u(p.d.size());
      EXPECT_EQ(run<T>(w, p, p.d.data(), u.data(), 2), 17 * 9 + 6) << "m=" << m;
    }
}

// A pivot below 16 eps relative to the block counts as singular; a NaN in a block too.
TYPED_TEST(BlockThomasCpu, NearSingularAndNonFiniteBlocks) {
  using T = TypeParam;
  const BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{2, 4, 3});
  for (Which w : {Which::kernel, Which::reference}) {
    auto p = make_block_problem<T>(l, 12);
    const T eps = std::numeric_limits<T>::epsilon();
    p.b[p.bi(1, 0, 0, 0)] = 1, p.b[p.bi(1, 0, 0, 1)] = 1;
    p.b[p.bi(1, 0, 1, 0)] = 1, p.b[p.bi(1, 0, 1, 1)] = 1 + 4 * eps;
    std::vector<T> u(p.d.size());
    EXPECT_EQ(run<T>(w, p, p.d.data(), u.data(), 1), 1 * 4 + 0);
    auto q = make_block_problem<T>(l, 13);
    q.a[q.bi(2, 3, 1, 1)] = std::numeric_limits<T>::quiet_NaN();
    EXPECT_EQ(run<T>(w, q, q.d.data(), u.data(), 1), 2 * 4 + 3);
  }
}

// Column-major blocks (BlockOrder::column_major, Fortran's order) against the row-major
// result of the same problem: every block size, odd lengths, every layout family, plain and
// periodic, kernel and reference, NaN-poisoned outputs. Equal to rounding (NaN exactly where
// the row-major result has NaN), and the column-major result checked against the dense LU.
TYPED_TEST(BlockThomasCpu, ColumnMajorBlocksMatchRowMajor) {
  using T = TypeParam;
  std::uint32_t seed = 600;
  for (Which w : {Which::kernel, Which::reference})
    for (int m = adi::kMinBlockSize; m <= adi::kMaxBlockSize; ++m)
      for (index_t n : {1, 2, 3, 31})
        for (bool periodic : {false, true})
          for (const BlockLineSet& l : column_major_layouts(m, n)) {
            if (w == Which::reference && l.count0 * l.count1 > 40) continue;  // the oracle is slow
            const auto row = make_block_problem<T>(l, seed++, 1, m % 3 == 0, periodic);
            const auto col = to_column_major(row);
            SCOPED_TRACE(std::string(w == Which::kernel ? "cpu_block_thomas " : "reference ") + describe(col.l) +
                         (periodic ? " periodic" : ""));
            const std::vector<T> poison(row.d.size(), std::numeric_limits<T>::quiet_NaN());
            std::vector<T> ur = poison, uc = poison;
            ASSERT_EQ(run<T>(w, row, row.d.data(), ur.data(), 2), -1);
            ASSERT_EQ(run<T>(w, col, col.d.data(), uc.data(), 2), -1);
            EXPECT_LE(max_difference(ur, uc), tolerance<T>() / 10) << "column-major result differs from row-major";
            if (n == 31 && m % 2 == 1) expect_block_solution(col, uc, poison);
          }
}

// A singular block in column-major storage names the same system and row.
TYPED_TEST(BlockThomasCpu, ColumnMajorSingularBlock) {
  using T = TypeParam;
  for (Which w : {Which::kernel, Which::reference}) {
    auto p = to_column_major(make_block_problem<T>(adi::to_block_lines(adi::BlockContiguous{5, 7, 9}), 31));
    for (int q = 0; q < 5; ++q) {
      for (int r = 0; r < 5; ++r) p.a[p.bi(4, 3, r, q)] = 0;
      p.b[p.bi(4, 3, 2, q)] = p.b[p.bi(4, 3, 0, q)];  // rows 0 and 2 equal
    }
    std::vector<T> u(p.d.size());
    EXPECT_EQ(run<T>(w, p, p.d.data(), u.data(), 1), 4 * 7 + 3);
  }
}

}  // namespace
