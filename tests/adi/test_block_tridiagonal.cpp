// The public block-tridiagonal entry point (adi/block_tridiagonal.hpp) on the host:
// layouts and their validation, the plan against a dense LU of every assembled system
// (every block size, both precisions, NaN-poisoned outputs), the grid entry point along
// x, y and z with array-of-structures and structure-of-arrays fields, and bad input.
// (The CUDA executor is exercised by tests/solvers/cuda/test_block_thomas_cuda.cpp.)
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "adi/block_tridiagonal.hpp"
#include "adi/field.hpp"
#include "gpu_skip.hpp"
#include "test_block_common.hpp"
#include "gpu_skip.hpp"

namespace {

using adi::Axis;
using adi::BlockKernel;
using adi::BlockLineSet;
using adi::Executor;
using adi::index_t;
using adi::InvalidArgument;
using namespace adi::test_block;

template <class T>
void solve_and_check(const Executor& exec, const BlockLineSet& l, BlockKernel kernel, bool in_place,
                     std::uint32_t seed, index_t base = 0, bool periodic = false) {
  SCOPED_TRACE(std::string(adi::block_kernel_name(kernel)) + (in_place ? " in-place" : ""));
  const auto p = make_block_problem<T>(l, seed, base, false, periodic);
  adi::BlockTridiagonalPlan<T> plan(exec, l, {kernel, 0, periodic});
  EXPECT_EQ(plan.kernel(), kernel == BlockKernel::automatic ? BlockKernel::cpu_block_thomas : kernel);
  std::vector<T> u = in_place ? p.d : std::vector<T>(p.d.size(), std::numeric_limits<T>::quiet_NaN());
  const std::vector<T> before = u;
  const adi::BlockBands<T> bands{p.a.data() + base, p.b.data() + base, p.c.data() + base};
  plan.solve(bands, in_place ? u.data() + base : p.d.data() + base, u.data() + base);
  expect_block_solution(p, u, before);
  // A plan solves again with the same answer (it allocates nothing in solve()).
  if (!in_place) {
    std::vector<T> again(p.d.size(), std::numeric_limits<T>::quiet_NaN());
    plan.solve(bands, p.d.data() + base, again.data() + base);
    for (std::size_t k = 0; k < u.size(); ++k)
      if (p.used[k]) ASSERT_TRUE(same_bits(u[k], again[k])) << "second solve differs at " << k;
  }
}

template <class T>
class BlockTridiagonalApi : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BlockTridiagonalApi, Types);

TYPED_TEST(BlockTridiagonalApi, BatchLayoutsEveryBlockSize) {
  std::uint32_t seed = 1;
  for (int m = 2; m <= 8; ++m)
    for (index_t n : {1, 2, 3, 17, 128}) {
      const index_t count = n == 128 ? 2 : 7;
      solve_and_check<TypeParam>(Executor::host(), adi::to_block_lines(adi::BlockContiguous{m, n, count}),
                                 BlockKernel::automatic, false, seed++);
      solve_and_check<TypeParam>(Executor::host(2), adi::to_block_lines(adi::BlockInterleaved{m, n, count}),
                                 BlockKernel::automatic, n == 17, seed++);
    }
}

TYPED_TEST(BlockTridiagonalApi, ReferenceKernelThroughThePlan) {
  for (int m : {2, 7})
    solve_and_check<TypeParam>(Executor::host(), adi::to_block_lines(padded_layout(m, 5, 4, 3)),
                               BlockKernel::reference, false, 50 + m, 2);
}

// The CFD entry point: every axis, AoS and SoA fields (padded too), odd extents.
TYPED_TEST(BlockTridiagonalApi, GridLinesEveryAxisAndFieldLayout) {
  std::uint32_t seed = 100;
  for (int m : {2, 3, 4, 5, 8})
    for (FieldLayout f : {FieldLayout::aos, FieldLayout::soa, FieldLayout::soa_padded})
      for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
        SCOPED_TRACE(std::string("grid ") + name(f) + " axis " + adi::axis_name(axis));
        const adi::BlockGridLines g = grid_lines(m, 7, 5, 3, axis, f);
        const BlockLineSet l = adi::to_block_lines(g);
        EXPECT_EQ(l.n, axis == Axis::x ? 7 : axis == Axis::y ? 5 : 3);
        EXPECT_EQ(l.systems(), 7 * 5 * 3 / l.n);
        solve_and_check<TypeParam>(Executor::host(), l, BlockKernel::automatic, seed % 2 == 0, seed);
        ++seed;
      }
}

// Periodic grid lines (a CFD code's periodic directions), host kernel and reference.
TYPED_TEST(BlockTridiagonalApi, PeriodicGridLines) {
  std::uint32_t seed = 150;
  for (BlockKernel k : {BlockKernel::automatic, BlockKernel::reference})
    for (FieldLayout f : {FieldLayout::aos, FieldLayout::soa_padded})
      for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
        SCOPED_TRACE(std::string("periodic grid ") + name(f) + " axis " + adi::axis_name(axis));
        solve_and_check<TypeParam>(Executor::host(), adi::to_block_lines(grid_lines(4, 6, 5, 2, axis, f)), k,
                                   seed % 2 == 1, seed, 0, true);
        ++seed;
      }
}

// BlockOrder::column_major through the public layouts (Fortran's 5x5 blocks as they are):
// the plan's answer equals the row-major plan's on the transposed blocks (to rounding).
TYPED_TEST(BlockTridiagonalApi, ColumnMajorLayouts) {
  using T = TypeParam;
  constexpr auto cm = adi::BlockOrder::column_major;
  std::uint32_t seed = 900;
  for (int m = adi::kMinBlockSize; m <= adi::kMaxBlockSize; ++m)
    for (index_t n : {1, 3, 33}) {
      adi::BlockGridLines g = grid_lines(m, 5, n, 3, Axis::y, FieldLayout::soa);
      g.order = cm;
      const BlockLineSet col_layouts[] = {adi::to_block_lines(adi::BlockContiguous{m, n, 7, cm}),
                                          adi::to_block_lines(adi::BlockInterleaved{m, n, 9, cm}),
                                          adi::to_block_lines(g)};
      for (const BlockLineSet& lc : col_layouts) {
        EXPECT_EQ(lc.order, cm);
        BlockLineSet lr = lc;
        lr.order = adi::BlockOrder::row_major;
        const auto row = make_block_problem<T>(lr, seed++);
        const auto col = to_column_major(row);
        SCOPED_TRACE(describe(lc));
        std::vector<T> ur(row.d.size(), std::numeric_limits<T>::quiet_NaN()), uc = ur;
        const std::vector<T> poison = ur;
        adi::BlockTridiagonalPlan<T>(Executor::host(), lr).solve({row.a.data(), row.b.data(), row.c.data()},
                                                                 row.d.data(), ur.data());
        adi::BlockTridiagonalPlan<T> plan(Executor::host(), lc);
        EXPECT_EQ(plan.lines().order, cm);
        plan.solve({col.a.data(), col.b.data(), col.c.data()}, col.d.data(), uc.data());
        EXPECT_LE(max_difference(ur, uc), tolerance<T>() / 10);
        expect_block_solution(col, uc, poison);
      }
    }
  BlockLineSet bad = adi::to_block_lines(adi::BlockContiguous{2, 3, 4});
  bad.order = static_cast<adi::BlockOrder>(7);
  EXPECT_THROW(adi::to_block_lines(bad), InvalidArgument);
}

// The grid conversion puts value v of point (x, y, z) where the caller said.
TEST(BlockTridiagonalLayout, GridStridesMapPoints) {
  const int m = 3;
  const adi::BlockGridLines g = grid_lines(m, 4, 5, 6, Axis::y, FieldLayout::aos);
  const BlockLineSet l = adi::to_block_lines(g);
  // System (l0 = x, l1 = z), row = y.
  EXPECT_EQ(l.count0, 4);
  EXPECT_EQ(l.count1, 6);
  EXPECT_EQ(l.vectors.row, m * 4);
  EXPECT_EQ(l.vectors.system0, m);
  EXPECT_EQ(l.vectors.system1, m * 4 * 5);
  EXPECT_EQ(l.blocks.row, m * m * 4);
  const BlockLineSet lz = adi::to_block_lines(grid_lines(m, 4, 5, 6, Axis::z, FieldLayout::soa));
  EXPECT_EQ(lz.vectors.row, 4 * 5);
  EXPECT_EQ(lz.vectors.system0, 1);
  EXPECT_EQ(lz.vectors.system1, 4);
  EXPECT_EQ(lz.vectors.component, 4 * 5 * 6);
  EXPECT_EQ(adi::vector_span(lz), 4 * 5 * 6 * 3);
  EXPECT_EQ(adi::block_span(lz), 4 * 5 * 6 * 9);
  const BlockLineSet c = adi::to_block_lines(adi::BlockContiguous{2, 3, 5});
  EXPECT_EQ(adi::vector_span(c), 2 * 3 * 5);
  EXPECT_EQ(adi::block_span(c), 4 * 3 * 5);
  const BlockLineSet i = adi::to_block_lines(adi::BlockInterleaved{2, 3, 5});
  EXPECT_EQ(i.vectors.row, 10);
  EXPECT_EQ(i.blocks.system0, 4);
}

TEST(BlockTridiagonalLayout, EmptyBatchIsANoOp) {
  adi::BlockTridiagonalPlan<double> plan(Executor::host(), adi::BlockContiguous{3, 4, 0});
  double x = 0;
  EXPECT_NO_THROW(plan.solve({&x, &x, &x}, &x, &x));
}

TEST(BlockTridiagonalBadInput, BlockSizeOutOfRange) {
  for (int m : {1, 9, 0, -2}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    EXPECT_THROW(adi::to_block_lines(adi::BlockContiguous{m, 4, 2}), InvalidArgument);
    EXPECT_THROW(adi::to_block_lines(adi::BlockInterleaved{m, 4, 2}), InvalidArgument);
    EXPECT_THROW(adi::to_block_lines(adi::BlockGridLines{m, 3, 3, 3, Axis::x, adi::PointArray::soa(3, 3, 3),
                                                         adi::PointArray::soa(3, 3, 3)}),
                 InvalidArgument);
    EXPECT_THROW((adi::BlockTridiagonalPlan<float>(Executor::host(), adi::BlockContiguous{m, 4, 2})),
                 InvalidArgument);
  }
  try {
    adi::to_block_lines(adi::BlockContiguous{9, 4, 2});
    FAIL() << "no throw";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("2..8"), std::string::npos) << e.what();
  }
}

TEST(BlockTridiagonalBadInput, SizesAndStrides) {
  EXPECT_THROW(adi::to_block_lines(adi::BlockContiguous{3, 0, 2}), InvalidArgument);
  EXPECT_THROW(adi::to_block_lines(adi::BlockContiguous{3, 2, -1}), InvalidArgument);
  EXPECT_THROW(adi::to_block_lines(adi::BlockGridLines{3, 0, 3, 3, Axis::x, adi::PointArray::soa(3, 3, 3),
                                                       adi::PointArray::soa(3, 3, 3)}),
               InvalidArgument);
  // Blocks declared with M values per point instead of M*M: entries of neighbouring
  // points would collide.
  {
    adi::BlockGridLines g = grid_lines(3, 4, 4, 4, Axis::y, FieldLayout::aos);
    g.blocks = adi::PointArray::aos(3, 4, 4, 4);
    EXPECT_THROW(adi::to_block_lines(g), InvalidArgument);
  }
  // Structure of arrays whose value arrays overlap (component stride < points' span).
  {
    adi::BlockGridLines g = grid_lines(4, 4, 4, 4, Axis::z, FieldLayout::soa);
    g.vectors.component = 4 * 4 * 4 - 1;
    EXPECT_THROW(adi::to_block_lines(g), InvalidArgument);
  }
  // Component stride 0 or negative point strides.
  {
    adi::BlockGridLines g = grid_lines(2, 4, 4, 4, Axis::x, FieldLayout::aos);
    g.vectors.component = 0;
    EXPECT_THROW(adi::to_block_lines(g), InvalidArgument);
    g = grid_lines(2, 4, 4, 4, Axis::x, FieldLayout::aos);
    g.blocks.sy = -16;
    EXPECT_THROW(adi::to_block_lines(g), InvalidArgument);
  }
  // Canonical form: systems on top of each other, rows overlapping a block.
  {
    BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{2, 3, 4});
    BlockLineSet bad = l;
    bad.vectors.system0 = 0;
    EXPECT_THROW(adi::to_block_lines(bad), InvalidArgument);
    bad = l;
    bad.blocks.row = 3;
    EXPECT_THROW(adi::to_block_lines(bad), InvalidArgument);
    EXPECT_NO_THROW(adi::to_block_lines(l));
  }
}

TEST(BlockTridiagonalBadInput, PointersAndOptions) {
  const auto p = make_block_problem<double>(adi::to_block_lines(adi::BlockContiguous{2, 4, 3}), 5);
  adi::BlockTridiagonalPlan<double> plan(Executor::host(), adi::BlockContiguous{2, 4, 3});
  std::vector<double> u(p.d.size());
  const adi::BlockBands<double> bands{p.a.data(), p.b.data(), p.c.data()};
  EXPECT_THROW(plan.solve({nullptr, p.b.data(), p.c.data()}, p.d.data(), u.data()), InvalidArgument);
  EXPECT_THROW(plan.solve(bands, nullptr, u.data()), InvalidArgument);
  EXPECT_THROW(plan.solve(bands, p.d.data(), nullptr), InvalidArgument);
  // Misaligned pointer.
  EXPECT_THROW(plan.solve(bands, p.d.data(), reinterpret_cast<double*>(reinterpret_cast<char*>(u.data()) + 1)),
               InvalidArgument);
  // u overlapping d without being equal.
  std::vector<double> both(p.d.size() + 1);
  EXPECT_THROW(plan.solve(bands, both.data(), both.data() + 1), InvalidArgument);
  // Kernels for another executor, tolerance out of range.
  EXPECT_THROW((adi::BlockTridiagonalPlan<double>(Executor::host(), adi::BlockContiguous{2, 4, 3},
                                                  {BlockKernel::cuda_block_thomas_shuffle})),
               InvalidArgument);
  EXPECT_THROW((adi::BlockTridiagonalPlan<double>(Executor::host(), adi::BlockContiguous{2, 4, 3},
                                                  {BlockKernel::automatic, 1.5})),
               InvalidArgument);
  EXPECT_THROW((adi::BlockTridiagonalPlan<double>(Executor::host(), adi::BlockContiguous{2, 4, 3},
                                                  {BlockKernel::automatic, -1e-3})),
               InvalidArgument);
}

TEST(BlockTridiagonalBadInput, KernelNames) {
  for (BlockKernel k : {BlockKernel::automatic, BlockKernel::reference, BlockKernel::cpu_block_thomas,
                        BlockKernel::cuda_block_thomas_shuffle, BlockKernel::cuda_block_thomas_shared})
    EXPECT_EQ(adi::block_kernel_from_name(adi::block_kernel_name(k)), k);
  EXPECT_THROW(adi::block_kernel_from_name("block_pcr"), InvalidArgument);
}

// A singular pivot block is reported with its system and row, for both kernels and
// both precisions, through the grid entry point too.
template <class T>
void expect_singular(BlockKernel kernel) {
  const adi::BlockGridLines g = grid_lines(3, 5, 4, 6, Axis::y, FieldLayout::soa);
  const BlockLineSet l = adi::to_block_lines(g);
  auto p = make_block_problem<T>(l, 9);
  const index_t sys = 2 + 5 * 3, row = 2;  // the line x = 2, z = 3; y = 2
  for (int q = 0; q < 3; ++q) {
    for (int r = 0; r < 3; ++r) p.a[p.bi(sys, row, r, q)] = 0;
    p.b[p.bi(sys, row, 2, q)] = 0;  // a zero row
  }
  adi::BlockTridiagonalPlan<T> plan(Executor::host(), g, {kernel});
  std::vector<T> u(p.d.size());
  try {
    plan.solve({p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data());
    FAIL() << "no SingularBlock thrown";
  } catch (const adi::SingularBlock& e) {
    EXPECT_EQ(e.system(), sys);
    EXPECT_EQ(e.row(), row);
    const std::string what = e.what();
    EXPECT_NE(what.find("system 17"), std::string::npos) << what;
    EXPECT_NE(what.find("block row i = 2"), std::string::npos) << what;
  }
  // SingularBlock is a SingularSystem, so generic handlers catch it.
  EXPECT_THROW(plan.solve({p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()), adi::SingularSystem);
}

TEST(BlockTridiagonalBadInput, SingularBlockNamesSystemAndRow) {
  for (BlockKernel k : {BlockKernel::automatic, BlockKernel::reference}) {
    expect_singular<float>(k);
    expect_singular<double>(k);
  }
}

// A looser tolerance turns an ill-conditioned (but invertible) pivot block into an error.
TEST(BlockTridiagonalBadInput, PivotTolerance) {
  const BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{2, 3, 2});
  auto p = make_block_problem<double>(l, 4);
  p.b[p.bi(1, 0, 0, 0)] = 1, p.b[p.bi(1, 0, 0, 1)] = 1;
  p.b[p.bi(1, 0, 1, 0)] = 1, p.b[p.bi(1, 0, 1, 1)] = 1 + 1e-9;
  std::vector<double> u(p.d.size());
  const adi::BlockBands<double> bands{p.a.data(), p.b.data(), p.c.data()};
  adi::BlockTridiagonalPlan<double> strict(Executor::host(), l);
  EXPECT_NO_THROW(strict.solve(bands, p.d.data(), u.data()));
  adi::BlockTridiagonalPlan<double> loose(Executor::host(), l, {BlockKernel::automatic, 1e-6});
  EXPECT_THROW(loose.solve(bands, p.d.data(), u.data()), adi::SingularBlock);
}

// A singular block-circulant system (K kron the periodic Laplacian: b = 2K, a = c = -K, K
// symmetric positive definite) is reported like a singular pivot block on the host, instead
// of values of 1e12..1e15 from a Schur complement that is rounding noise; the same system
// with b = 2.5K (dominant, nonsingular) solves. Issue 22.
template <class T>
void singular_block_circulant(int m, index_t n, const Executor& exec = Executor::host(),
                              BlockKernel kernel = BlockKernel::automatic) {
  SCOPED_TRACE("M = " + std::to_string(m) + ", n = " + std::to_string(n) + (sizeof(T) == 4 ? " float" : " double") +
               " on " + exec.name() + ", kernel " + adi::block_kernel_name(kernel));
  const BlockLineSet l = adi::to_block_lines(adi::BlockContiguous{m, n, 3});
  for (const double diag : {2.0, 2.5}) {
    auto p = make_block_problem<T>(l, 11, 0, false, true);
    for (index_t sys = 0; sys < 3; ++sys)
      for (index_t i = 0; i < n; ++i)
        for (int r = 0; r < m; ++r)
          for (int q = 0; q < m; ++q) {
            const double k = (r == q ? 1.0 : 0.0) + 0.2 / (1.0 + std::abs(r - q)) * (sys + 1);
            p.a[p.bi(sys, i, r, q)] = T(-k);
            p.c[p.bi(sys, i, r, q)] = T(-k);
            p.b[p.bi(sys, i, r, q)] = T(diag * k);
          }
    std::vector<T> u(p.d.size(), std::numeric_limits<T>::quiet_NaN());
    adi::BlockTridiagonalPlan<T> plan(exec, l, {kernel, 0, true});
    const auto len = [](const std::vector<T>& v) { return static_cast<index_t>(v.size()); };
    adi::Array<T> da(len(p.a), exec), db(len(p.b), exec), dc(len(p.c), exec), dd(len(p.d), exec), du(len(u), exec);
    da.copy_from_host(p.a.data());
    db.copy_from_host(p.b.data());
    dc.copy_from_host(p.c.data());
    dd.copy_from_host(p.d.data());
    du.copy_from_host(u.data());
    const adi::BlockBands<T> bands{da.data(), db.data(), dc.data()};
    if (diag == 2.0) {
      EXPECT_THROW(plan.solve(bands, dd.data(), du.data()), adi::SingularBlock);
    } else {
      EXPECT_NO_THROW(plan.solve(bands, dd.data(), du.data()));
      du.copy_to_host(u.data());
      for (index_t i = 0; i < vector_span(l); ++i) EXPECT_TRUE(std::isfinite(double(u[i]))) << "u[" << i << "]";
    }
  }
}

TEST(BlockTridiagonalBadInput, SingularBlockCirculantIsReported) {
  for (int m : {2, 3, 5})
    for (index_t n : {3, 4, 16, 33, 257}) {
      singular_block_circulant<float>(m, n);
      singular_block_circulant<double>(m, n);
    }
}

TEST(BlockTridiagonalBadInputCuda, SingularBlockCirculantIsReported) {
  ADI_REQUIRE_CUDA("the device block-circulant singularity check");
  for (BlockKernel k : {BlockKernel::cuda_block_thomas_shuffle, BlockKernel::cuda_block_thomas_shared})
    for (int m : {2, 3, 5})
      for (index_t n : {3, 4, 16, 33, 257}) {
        singular_block_circulant<float>(m, n, Executor::cuda(), k);
        singular_block_circulant<double>(m, n, Executor::cuda(), k);
      }
}

TEST(BlockTridiagonalBadInput, NoCudaExecutorWithoutDevice) {
  ADI_REQUIRE_NO_CUDA("Executor::cuda() refused");
  EXPECT_THROW(Executor::cuda(), adi::Unsupported);
}

}  // namespace
