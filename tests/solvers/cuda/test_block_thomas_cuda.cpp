// The CUDA block Thomas kernels (solvers/cuda/block_thomas.cuh: warp-shuffle and
// shared-memory exchange) through adi::BlockTridiagonalPlan on device arrays, against a
// dense LU of every assembled system: every block size, lengths 1 to 10, 17, 128, several
// system counts (partial warps and thread blocks), both precisions, NaN-poisoned
// outputs, the interleaved, contiguous and strided layouts, the grid entry point along
// x, y, z with array-of-structures and structure-of-arrays fields, in place, pivoting
// inside blocks, and the singular-block report.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "scoped_env.hpp"
#include "adi/block_tridiagonal.hpp"
#include "adi/field.hpp"
#include "solvers/cuda/backend.hpp"
#include "test_block_common.hpp"


namespace {

using adi::Axis;
using adi::BlockKernel;
using adi::BlockLineSet;
using adi::Executor;
using adi::index_t;
using namespace adi::test_block;

// (cuda_block_thomas_shared is compiled only with -DADI_CUDA_UNROLL_ALL=ON: other builds run the
// shuffles for it and say so once on stderr, so there both entries test the shuffles.)
constexpr BlockKernel kKernels[] = {BlockKernel::cuda_block_thomas_shuffle, BlockKernel::cuda_block_thomas_shared};

template <class T>
adi::Array<T> to_device(const std::vector<T>& h, const Executor& exec) {
  adi::Array<T> a(static_cast<index_t>(h.size()), exec);
  a.copy_from_host(h.data());
  return a;
}

// Solves p on the device with `kernel`; returns the whole u allocation copied back.
template <class T>
std::vector<T> solve_on_device(const BlockProblem<T>& p, BlockKernel kernel, bool in_place,
                               const std::vector<T>& before) {
  const Executor exec = Executor::cuda();
  auto a = to_device(p.a, exec), b = to_device(p.b, exec), c = to_device(p.c, exec);
  auto d = to_device(p.d, exec), u = to_device(before, exec);
  adi::BlockTridiagonalPlan<T> plan(exec, p.l, {kernel, 0, p.periodic});
  EXPECT_EQ(plan.kernel(), kernel);
  const index_t o = p.base;
  plan.solve({a.data() + o, b.data() + o, c.data() + o}, in_place ? u.data() + o : d.data() + o, u.data() + o);
  std::vector<T> out(before.size());
  u.copy_to_host(out.data());
  return out;
}

template <class T>
void check(const BlockLineSet& l, BlockKernel kernel, bool in_place, std::uint32_t seed, index_t base = 0,
           bool permute = false, bool periodic = false) {
  SCOPED_TRACE(std::string(adi::block_kernel_name(kernel)) + (sizeof(T) == 4 ? " float" : " double") +
               (in_place ? " in-place" : "") + (permute ? " permuted rows" : ""));
  const auto p = make_block_problem<T>(l, seed, base, permute, periodic);
  const std::vector<T> before =
      in_place ? p.d : std::vector<T>(p.d.size(), std::numeric_limits<T>::quiet_NaN());
  expect_block_solution(p, solve_on_device(p, kernel, in_place, before), before);
}

template <class T>
class BlockThomasCuda : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BlockThomasCuda, Types);

TYPED_TEST(BlockThomasCuda, InterleavedEveryBlockSizeAndLength) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 1;
  for (BlockKernel k : kKernels)
    for (int m = 2; m <= 8; ++m)
      for (index_t n : {1, 2, 3, 17, 128})
        for (index_t count : {1, 5, 67}) {
          if (n == 128 && count == 67 && m > 4) continue;  // the dense oracle's cost
          check<TypeParam>(adi::to_block_lines(adi::BlockInterleaved{m, n, count}), k, false, seed++);
        }
}

// Many thread blocks, the last one partial.
TYPED_TEST(BlockThomasCuda, LargeBatch) {
  ADI_REQUIRE_CUDA();
  for (BlockKernel k : kKernels)
    for (int m : {2, 3, 4, 7, 8})
      check<TypeParam>(adi::to_block_lines(adi::BlockInterleaved{m, 31, 4099}), k, m % 2 == 1, 20 + m);
}

TYPED_TEST(BlockThomasCuda, ContiguousAndStridedLayouts) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 100;
  for (BlockKernel k : kKernels)
    for (int m = 2; m <= 8; ++m) {
      check<TypeParam>(adi::to_block_lines(adi::BlockContiguous{m, 17, 13}), k, false, seed++);
      check<TypeParam>(adi::to_block_lines(padded_layout(m, 3, 5, 3)), k, false, seed++, 3);
      check<TypeParam>(adi::to_block_lines(padded_layout(m, 17, 2, 2)), k, true, seed++, 1);
    }
}

TYPED_TEST(BlockThomasCuda, GridLinesEveryAxisAndFieldLayout) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 200;
  for (BlockKernel k : kKernels)
    for (int m : {2, 3, 4, 5, 8})
      for (FieldLayout f : {FieldLayout::aos, FieldLayout::soa, FieldLayout::soa_padded})
        for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
          SCOPED_TRACE(std::string("grid ") + name(f) + " axis " + adi::axis_name(axis));
          check<TypeParam>(adi::to_block_lines(grid_lines(m, 9, 6, 5, axis, f)), k, seed % 3 == 0, seed);
          ++seed;
        }
}

TYPED_TEST(BlockThomasCuda, PivotingInsideBlocks) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 300;
  for (BlockKernel k : kKernels)
    for (int m = 2; m <= 8; ++m)
      check<TypeParam>(adi::to_block_lines(adi::BlockInterleaved{m, 17, 37}), k, false, seed++, 0, true);
}

// The read-ahead of the staged forms (solvers/cuda/block_thomas.cuh, block_form: the backward
// sweep reads 2 or 4 rows ahead, d*_i through the workspace): lengths around whole and partial
// groups of 2 and 4 rows, for every M (each form of the table), plain and periodic, the
// interleaved and contiguous layouts (a system's rows of u adjacent), in place and out of place.
TYPED_TEST(BlockThomasCuda, ReadAheadLengths) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 500;
  for (int m = 2; m <= 8; ++m)
    for (index_t n : {4, 5, 6, 7, 8, 9, 10})
      for (bool periodic : {false, true}) {
        SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + (periodic ? " periodic" : ""));
        check<TypeParam>(adi::to_block_lines(adi::BlockInterleaved{m, n, 33}), BlockKernel::cuda_block_thomas_shuffle,
                         n % 2 == 1, seed++, 0, false, periodic);
        check<TypeParam>(adi::to_block_lines(adi::BlockContiguous{m, n, 9}), BlockKernel::cuda_block_thomas_shuffle,
                         n % 2 == 0, seed++, 0, false, periodic);
      }
}

// The one-thread form (block_thomas.cuh, thread_form and block_thread_fits): M = 2, 3 (and 4 in
// fp32) on packed layouts (interleaved, row- or column-major blocks) run it; contiguous systems,
// fp64 M = 4, M = 5 and periodic systems do not. With every array aligned (block_thread_vec) fp32
// M = 4 moves whole blocks by vector accesses; arrays that start one value off (base 1) take the
// scalar accesses, M = 2 reads entry by entry and M = 3 has no vector size. The solutions are
// checked as everywhere (NaN-poisoned u against the dense LU).
TYPED_TEST(BlockThomasCuda, OneThreadFormOnPackedLayouts) {
  ADI_REQUIRE_CUDA();
  constexpr auto cm = adi::BlockOrder::column_major;
  constexpr bool fp32 = sizeof(TypeParam) == 4;
  struct Case {
    BlockLineSet l;
    bool periodic, thread, vec;
    index_t base;
  };
  const Case cases[] = {
      {adi::to_block_lines(adi::BlockInterleaved{2, 33, 77}), false, true, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{2, 5, 200, cm}), false, true, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{2, 1, 3}), false, true, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{2, 33, 77}), false, true, false, 4},
      {adi::to_block_lines(adi::BlockInterleaved{2, 33, 77}), false, true, false, 1},
      {adi::to_block_lines(adi::BlockInterleaved{2, 17, 31, cm}), false, true, false, 1},
      {adi::to_block_lines(adi::BlockInterleaved{2, 1, 3}), false, true, false, 1},
      {adi::to_block_lines(adi::BlockInterleaved{3, 33, 77}), false, true, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{3, 6, 130, cm}), false, true, false, 1},
      {adi::to_block_lines(adi::BlockInterleaved{3, 1, 5}), false, true, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{4, 33, 77}), false, fp32, fp32, 0},
      {adi::to_block_lines(adi::BlockInterleaved{4, 7, 129, cm}), false, fp32, fp32, 0},
      {adi::to_block_lines(adi::BlockInterleaved{4, 9, 40}), false, fp32, false, 1},
      {adi::to_block_lines(adi::BlockInterleaved{4, 9, 40}), false, fp32, fp32, 4},
      {adi::to_block_lines(adi::BlockInterleaved{5, 9, 40}), false, false, false, 0},
      {adi::to_block_lines(adi::BlockContiguous{2, 33, 77}), false, false, false, 0},
      {adi::to_block_lines(adi::BlockContiguous{3, 9, 40}), false, false, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{2, 33, 77}), true, false, false, 0},
      {adi::to_block_lines(adi::BlockInterleaved{3, 9, 40}), true, false, false, 0},
  };
  // Each case three times: the default, then the one-thread and the two-thread kernels (ADI_BT_PAIR=0 / 1).
  for (const char* pair : {"", "0", "1"}) {
    SCOPED_TRACE(std::string("ADI_BT_PAIR='") + pair + "'");
    adi::test::ScopedEnv env("ADI_BT_PAIR", pair);
    std::uint32_t seed = 600;
    for (const Case& c : cases) {
      const std::size_t before = adi::cuda_backend::block_thomas_thread_launches();
      const std::size_t before_vec = adi::cuda_backend::block_thomas_thread_vec_launches();
      const std::size_t before_pair = adi::cuda_backend::block_thomas_pair_launches();
      check<TypeParam>(c.l, BlockKernel::cuda_block_thomas_shuffle, seed % 2 == 1, seed, c.base, false, c.periodic);
      ++seed;
      EXPECT_EQ(adi::cuda_backend::block_thomas_thread_launches() - before, c.thread ? 1u : 0u)
          << "M " << c.l.m << " n " << c.l.n << " base " << c.base << (c.periodic ? " periodic" : "");
      EXPECT_EQ(adi::cuda_backend::block_thomas_thread_vec_launches() - before_vec, c.vec ? 1u : 0u)
          << "M " << c.l.m << " n " << c.l.n << " base " << c.base;
      // By default (thread_form's PairRule) fp64 M = 2 and fp32 M = 4 always take the two-thread form, fp32 M = 2
      // where its pairs fit one wave (every batch here), M = 3 never.
      const bool by_default = c.l.m == 2 || (fp32 && c.l.m == 4);
      EXPECT_EQ(adi::cuda_backend::block_thomas_pair_launches() - before_pair,
                c.thread && (*pair == '\0' ? by_default : *pair == '1') ? 1u : 0u)
          << "M " << c.l.m << " n " << c.l.n << " base " << c.base;
    }
  }
}

// The two-thread form (block_thomas_pair_kernel, ADI_BT_PAIR=1) on every length from 1 to 12 (the
// middle row at n / 2, sides of 0 .. 6 rows), 17, 31, 33 and 128, partial thread blocks and pairs,
// row- and column-major blocks, aligned and one value off, in place; against the dense LU.
TYPED_TEST(BlockThomasCuda, TwoThreadFormEveryLength) {
  ADI_REQUIRE_CUDA();
  adi::test::ScopedEnv env("ADI_BT_PAIR", "1");
  std::uint32_t seed = 900;
  for (int m = 2; m <= 4; ++m)
    for (index_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 17, 31, 33, 128})
      for (index_t p : {1, 63, 65}) {
        const auto order = n % 2 == 0 ? adi::BlockOrder::column_major : adi::BlockOrder::row_major;
        SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " p " + std::to_string(p));
        check<TypeParam>(adi::to_block_lines(adi::BlockInterleaved{m, n, p, order}),
                         BlockKernel::cuda_block_thomas_shuffle, seed % 3 == 0, seed, (seed % 4 == 1) ? 1 : 0);
        ++seed;
      }
}

// Block-cyclic systems: every M, n = 1, 2, 3 (corners folded onto the neighbours), longer
// lines, strided and grid layouts, in place, pivoting inside blocks.
TYPED_TEST(BlockThomasCuda, PeriodicSystems) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 400;
  for (BlockKernel k : kKernels)
    for (int m = 2; m <= 8; ++m) {
      for (index_t n : {1, 2, 3, 4, 17, 128}) {
        if (n == 128 && m > 5) continue;
        check<TypeParam>(adi::to_block_lines(adi::BlockInterleaved{m, n, 37}), k, n == 17, seed++, 0, m == 3,
                         true);
      }
      check<TypeParam>(adi::to_block_lines(padded_layout(m, 17, 3, 2)), k, false, seed++, 1, false, true);
    }
  for (BlockKernel k : kKernels)
    for (FieldLayout f : {FieldLayout::aos, FieldLayout::soa})
      for (Axis axis : {Axis::x, Axis::y, Axis::z})
        check<TypeParam>(adi::to_block_lines(grid_lines(5, 8, 6, 4, axis, f)), k, true, seed++, 0, false, true);
}

// The first singular pivot block (smallest system, then row) is reported, as on the host.
TYPED_TEST(BlockThomasCuda, SingularBlockNamesSystemAndRow) {
  ADI_REQUIRE_CUDA();
  using T = TypeParam;
  for (const char* pair : {"0", "1"}) {  // the one-thread and two-thread forms for m = 2, 3
    adi::test::ScopedEnv env("ADI_BT_PAIR", pair);
    for (BlockKernel k : kKernels)
      for (int m : {2, 3, 5, 8}) {
        SCOPED_TRACE(std::string(adi::block_kernel_name(k)) + " m=" + std::to_string(m));
        const BlockLineSet l = adi::to_block_lines(adi::BlockInterleaved{m, 9, 300});
        auto p = make_block_problem<T>(l, 11);
        auto make_singular = [&](index_t sys, index_t row) {
          for (int q = 0; q < m; ++q) {
            if (row > 0)
              for (int r = 0; r < m; ++r) p.a[p.bi(sys, row, r, q)] = 0;
            p.b[p.bi(sys, row, m - 1, q)] = p.b[p.bi(sys, row, 0, q)];
          }
        };
        make_singular(250, 1);
        make_singular(171, 6);
        make_singular(171, 8);
        const std::vector<T> before(p.d.size(), std::numeric_limits<T>::quiet_NaN());
        // The two-thread form eliminates rows 8 .. 5 bottom-up: it meets system 171's singular row 8
        // (A_8 = 0 and B_8 singular: the matrix is singular) first; every other form meets row 6.
        const std::size_t pairs = adi::cuda_backend::block_thomas_pair_launches();
        try {
          solve_on_device(p, k, false, before);
          ADD_FAILURE() << "no SingularBlock thrown";
        } catch (const adi::SingularBlock& e) {
          EXPECT_EQ(e.system(), 171);
          EXPECT_EQ(e.row(), adi::cuda_backend::block_thomas_pair_launches() > pairs ? 8 : 6);
        }
        // Periodic: a singular final block reports row n-1.
        {
          auto z = make_block_problem<T>(l, 13, 0, false, true);
          for (int r = 0; r < m; ++r)
            for (int q = 0; q < m; ++q) z.a[z.bi(42, 8, r, q)] = z.b[z.bi(42, 8, r, q)] = z.c[z.bi(42, 8, r, q)] = 0;
          try {
            solve_on_device(z, k, false, before);
            ADD_FAILURE() << "no SingularBlock thrown for the periodic last block";
          } catch (const adi::SingularBlock& e) {
            EXPECT_EQ(e.system(), 42);
            EXPECT_EQ(e.row(), 8);
          }
        }
        // A NaN inside a block is reported too, never returned as a result.
        auto q = make_block_problem<T>(l, 12);
        q.b[q.bi(5, 0, 0, m - 1)] = std::numeric_limits<T>::quiet_NaN();
        try {
          solve_on_device(q, k, false, before);
          ADD_FAILURE() << "no SingularBlock thrown for a NaN block";
        } catch (const adi::SingularBlock& e) {
          EXPECT_EQ(e.system(), 5);
          EXPECT_EQ(e.row(), 0);
        }
      }
  }
}

// Host arrays on a CUDA executor (and the reverse) are refused with a clear message.
TEST(BlockThomasCudaBadInput, MemorySpaces) {
  ADI_REQUIRE_CUDA();
  const auto p = make_block_problem<double>(adi::to_block_lines(adi::BlockInterleaved{3, 4, 5}), 3);
  adi::BlockTridiagonalPlan<double> plan(Executor::cuda(), p.l);
  EXPECT_EQ(plan.kernel(), BlockKernel::cuda_block_thomas_shuffle);
  std::vector<double> u(p.d.size());
  EXPECT_THROW(plan.solve({p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()), adi::InvalidArgument);
  EXPECT_THROW((adi::BlockTridiagonalPlan<double>(Executor::cuda(), p.l, {BlockKernel::cpu_block_thomas})),
               adi::InvalidArgument);
}

// Column-major blocks (BlockOrder::column_major) against the row-major result of the same
// problem on the device: both kernels, every block size, odd lengths, every layout family,
// plain and periodic, NaN-poisoned outputs; equal to rounding, and checked against the dense LU on their own; a singular block names the
// same system and row.
TYPED_TEST(BlockThomasCuda, ColumnMajorBlocksMatchRowMajor) {
  ADI_REQUIRE_CUDA("column-major CUDA block kernels");
  using T = TypeParam;
  std::uint32_t seed = 700;
  for (BlockKernel k : kKernels)
    for (int m = adi::kMinBlockSize; m <= adi::kMaxBlockSize; ++m)
      for (index_t n : {1, 2, 3, 31})
        for (bool periodic : {false, true})
          for (const BlockLineSet& l : column_major_layouts(m, n)) {
            const auto row = make_block_problem<T>(l, seed++, 1, m % 3 == 0, periodic);
            const auto col = to_column_major(row);
            SCOPED_TRACE(std::string(adi::block_kernel_name(k)) + " " + describe(col.l) +
                         (periodic ? " periodic" : ""));
            const std::vector<T> poison(row.d.size(), std::numeric_limits<T>::quiet_NaN());
            const std::vector<T> ur = solve_on_device(row, k, false, poison);
            const std::vector<T> uc = solve_on_device(col, k, false, poison);
            EXPECT_LE(max_difference(ur, uc), tolerance<T>() / 10) << "column-major result differs from row-major";
            if (n == 31 && m % 2 == 1) expect_block_solution(col, uc, poison);
          }
  for (BlockKernel k : kKernels) {
    auto p = to_column_major(make_block_problem<T>(adi::to_block_lines(adi::BlockInterleaved{5, 7, 40}), 31));
    for (int q = 0; q < 5; ++q) {
      for (int r = 0; r < 5; ++r) p.a[p.bi(33, 3, r, q)] = 0;
      p.b[p.bi(33, 3, 2, q)] = p.b[p.bi(33, 3, 0, q)];
    }
    const std::vector<T> poison(p.d.size(), std::numeric_limits<T>::quiet_NaN());
    try {
      solve_on_device(p, k, false, poison);
      ADD_FAILURE() << "no SingularBlock from " << adi::block_kernel_name(k);
    } catch (const adi::SingularBlock& e) {
      EXPECT_EQ(e.system(), 33);
      EXPECT_EQ(e.row(), 3);
    }
  }
}

}  // namespace
