// The conventions every plan family shares (docs/design.md "One plan idea, spelled one way";
// adi/base/pivot.hpp), on the host: the option names, one pivot_tolerance validation, errors
// that carry the failing system and row as fields, and no allocation in a first solve
// (counted with detail::storage_allocation_count). The device side:
// test_plan_conventions_cuda.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "adi/detail/allocation_count.hpp"
#include "tests/adi/plan_conventions_cases.hpp"

namespace {

using namespace adi;
using namespace adi::test_conventions;

// --- 1. one spelling ----------------------------------------------------------------

TEST(PlanConventions, TheAlgorithmIsCalledKernelInEveryFamily) {
  // Compiles only while every options struct spells the choice `kernel` and pivot checks
  // `check_pivots`.
  TridiagonalOptions t;
  LargeTridiagonalOptions l;
  VariableTridiagonalOptions v;
  BlockTridiagonalOptions b;
  CholeskyOptions c;
  HinesOptions h;
  EXPECT_EQ(t.kernel, Kernel::automatic);
  EXPECT_EQ(l.kernel, LargeKernel::automatic);
  EXPECT_EQ(v.kernel, VariableKernel::automatic);
  EXPECT_EQ(b.kernel, BlockKernel::automatic);
  EXPECT_EQ(c.kernel, CholeskyKernel::automatic);
  EXPECT_EQ(h.kernel, HinesKernel::automatic);
  EXPECT_TRUE(t.check_pivots && l.check_pivots && v.check_pivots && b.check_pivots && h.check_pivots);
  EXPECT_FALSE(c.check_pivots);  // Cholesky: info reports by default (LAPACK's convention)
  // The printed names did not change with the type names (benchmark rows still compare).
  EXPECT_STREQ(large_kernel_name(LargeKernel::shuffled_pcr_thomas), "shuffled_pcr_thomas");
  EXPECT_EQ(large_kernel_from_name("partition"), LargeKernel::partition);
  EXPECT_STREQ(variable_kernel_name(VariableKernel::stop_at_size), "stop_at_size (NCP)");
  // The plans report the kernel they run under the same name.
  LargeTridiagonalPlan<double> large(Executor::host(), 50, 2);
  EXPECT_EQ(large.kernel(), LargeKernel::partition);
  const std::vector<int> sizes{3, 5};
  VariableBatchPlan batch(Executor::host(), BatchSizes{sizes.data(), 2});
  VariableTridiagonalPlan<double> var(batch, CompactBatch{});
  EXPECT_EQ(var.kernel(), VariableKernel::stop_at_size);
}

// --- 2. one pivot_tolerance -----------------------------------------------------------

TEST(PlanConventions, PivotToleranceIsValidatedTheSameWayEverywhere) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double bad : {-1e-3, 1.0, 2.0, nan, inf, -inf}) {
    LargeTridiagonalOptions lo;
    lo.pivot_tolerance = bad;
    BlockTridiagonalOptions bo;
    bo.pivot_tolerance = bad;
    for (int family = 0; family < 2; ++family) {
      try {
        if (family == 0) LargeTridiagonalPlan<double>(Executor::host(), 100, 1, 0, lo);
        else BlockTridiagonalPlan<double>(Executor::host(), BlockContiguous{2, 10, 1}, bo);
        ADD_FAILURE() << "pivot_tolerance = " << bad << " accepted by family " << family;
      } catch (const InvalidArgument& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(family == 0 ? "LargeTridiagonalOptions" : "BlockTridiagonalOptions"), std::string::npos) << m;
        EXPECT_NE(m.find("pivot_tolerance = " + detail::number(bad)), std::string::npos) << m;
        EXPECT_NE(m.find("[0, 1)"), std::string::npos) << m;
      }
    }
  }
  for (double ok : {0.0, 1e-12, 0.5}) {
    LargeTridiagonalOptions lo;
    lo.pivot_tolerance = ok;
    BlockTridiagonalOptions bo;
    bo.pivot_tolerance = ok;
    EXPECT_NO_THROW(LargeTridiagonalPlan<double>(Executor::host(), 100, 1, 0, lo));
    EXPECT_NO_THROW(BlockTridiagonalPlan<double>(Executor::host(), BlockContiguous{2, 10, 1}, bo));
  }
}

// --- 3. errors carry system and row ---------------------------------------------------

TEST(PlanConventions, TridiagonalErrorsNameLineAndRow) {
  const Tridiagonal p = tridiagonal(37, 5, 2, 3);
  std::vector<double> u(p.d.size());
  for (Kernel k : {Kernel::reference, Kernel::cpu_thomas, Kernel::cpu_thomas_transpose}) {
    TridiagonalOptions o;
    o.kernel = k;
    o.pivoting = Pivoting::none;
    TridiagonalPlan<double> plan(Executor::host(), StridedLines::contiguous(p.n, p.count), o);
    expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); },
                                  2, 3, kernel_name(k));
  }
  // With pivoting the all-zero row is still singular: the line is named.
  TridiagonalOptions o;
  o.pivoting = Pivoting::partial;
  TridiagonalPlan<double> plan(Executor::host(), StridedLines::contiguous(p.n, p.count), o);
  expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); },
                                2, -1, "partial pivoting");
}

TEST(PlanConventions, LargeSystemErrorsNameSystemAndRow) {
  const Tridiagonal p = tridiagonal(100, 3, 1, 40);
  std::vector<double> u(p.d.size());
  for (LargeKernel k : {LargeKernel::thomas, LargeKernel::partition}) {
    LargeTridiagonalOptions o;
    o.kernel = k;
    o.pivoting = Pivoting::none;
    LargeTridiagonalPlan<double> plan(Executor::host(), p.n, p.count, p.n, o);
    // thomas meets the zero pivot at its row; the partition at it or, in the interface
    // system, near it (the message says so): the system is exact either way.
    expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); },
                                  1, k == LargeKernel::thomas ? 40 : -1, large_kernel_name(k));
  }
  LargeTridiagonalOptions o;
  o.pivoting = Pivoting::partial;
  LargeTridiagonalPlan<double> plan(Executor::host(), p.n, p.count, p.n, o);
  expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); },
                                1, -1, "large, partial pivoting");
}

TEST(PlanConventions, VariableErrorsNameSystemAndRow) {
  const Variable v = variable({5, 7, 6, 4}, 2, 2);
  VariableBatchPlan batch(Executor::host(), BatchSizes{v.sizes.data(), index_t(v.sizes.size())});
  std::vector<double> u(v.d.size());
  for (Pivoting pv : {Pivoting::none, Pivoting::automatic, Pivoting::partial}) {
    VariableTridiagonalOptions o;
    o.pivoting = pv;
    VariableTridiagonalPlan<double> plan(batch, CompactBatch{}, o);
    expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{v.a.data(), v.b.data(), v.c.data()}, v.d.data(), u.data()); },
                                  2, 2, std::string("variable, pivoting ") + pivoting_name(pv));
  }
}

TEST(PlanConventions, BlockErrorsNameSystemAndBlockRow) {
  const Block p = block(3, 9, 4, 3, 5);
  std::vector<double> u(p.d.size());
  BlockTridiagonalPlan<double> plan(Executor::host(), BlockContiguous{p.m, p.n, p.systems});
  expect_fields<SingularBlock>([&] { plan.solve(BlockBands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); },
                               3, 5, "block");
}

TEST(PlanConventions, CholeskyErrorsNameMatrixAndColumn) {
  const Cholesky p = cholesky({4, 6, 5}, 1, 2);
  VariableBatchPlan batch(Executor::host(), BatchSizes{p.sizes.data(), index_t(p.sizes.size())});
  CholeskyOptions o;
  o.check_pivots = true;
  BatchedCholeskyPlan<double> plan(batch, CompactBatch{}, o);
  std::vector<double> a = p.a;
  expect_fields<SingularSystem>([&] { plan.factor(a.data(), nullptr); }, 1, 2, "cholesky");
  // Without check_pivots only info reports it (LAPACK's convention).
  BatchedCholeskyPlan<double> quiet(batch, CompactBatch{});
  a = p.a;
  std::vector<int> info(3, -7);
  EXPECT_NO_THROW(quiet.factor(a.data(), info.data()));
  EXPECT_EQ(info, (std::vector<int>{0, 3, 0}));
}

// --- 6. no allocation in a first solve ------------------------------------------------

TEST(PlanConventions, FirstSolvesAllocateNothing) {
  const Executor host = Executor::host(2);
  auto check = [](const char* what, auto&& solve) {
    const std::size_t before = detail::storage_allocation_count();
    solve();
    EXPECT_EQ(detail::storage_allocation_count(), before) << what << ": the first solve allocated";
  };
  {
    const Tridiagonal p = tridiagonal(301, 7);
    std::vector<double> u(p.d.size());
    for (Pivoting pv : {Pivoting::automatic, Pivoting::none, Pivoting::partial}) {
      TridiagonalOptions o;
      o.pivoting = pv;
      TridiagonalPlan<double> plan(host, StridedLines::contiguous(p.n, p.count), o);
      check("tridiagonal", [&] { plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); });
    }
    // Few very long lines: the plan's large-system route.
    const Tridiagonal q = tridiagonal(1 << 17, 1);
    std::vector<double> w(q.d.size());
    TridiagonalPlan<double> route(host, StridedLines::contiguous(q.n, q.count));
    check("tridiagonal (large route)",
          [&] { route.solve(Bands<double>{q.a.data(), q.b.data(), q.c.data()}, q.d.data(), w.data()); });
  }
  {
    const Tridiagonal p = tridiagonal(5000, 3);
    std::vector<double> u(p.d.size());
    for (LargeKernel k : {LargeKernel::partition, LargeKernel::pcr_thomas, LargeKernel::thomas}) {
      for (Pivoting pv : {Pivoting::automatic, Pivoting::partial}) {
        LargeTridiagonalOptions o;
        o.kernel = k;
        o.pivoting = pv;
        LargeTridiagonalPlan<double> plan(host, p.n, p.count, p.n, o);
        EXPECT_GE(plan.cached_workspace_bytes(), plan.workspace_bytes());
        check(large_kernel_name(k),
              [&] { plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); });
      }
    }
    // The caller's workspace instead: the plan holds none.
    LargeTridiagonalOptions o;
    o.allocate_workspace = false;
    LargeTridiagonalPlan<double> plan(host, p.n, p.count, p.n, o);
    EXPECT_EQ(plan.cached_workspace_bytes(), 0u);
    EXPECT_THROW(plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()), InvalidArgument);
    detail::Storage ws(plan.workspace_bytes(), host);
    check("large, caller's workspace", [&] {
      plan.solve(Bands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data(), ws.get(), ws.bytes());
    });
  }
  {
    const Variable v = variable({5, 70, 6, 0, 33});
    VariableBatchPlan batch(host, BatchSizes{v.sizes.data(), index_t(v.sizes.size())});
    std::vector<double> u(v.d.size());
    VariableTridiagonalPlan<double> plan(batch, CompactBatch{});
    check("variable", [&] { plan.solve(Bands<double>{v.a.data(), v.b.data(), v.c.data()}, v.d.data(), u.data()); });
  }
  {
    const Block p = block(4, 33, 5);
    std::vector<double> u(p.d.size());
    BlockTridiagonalPlan<double> plan(host, BlockContiguous{p.m, p.n, p.systems});
    check("block", [&] { plan.solve(BlockBands<double>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data()); });
  }
  {
    const Cholesky p = cholesky({4, 40, 0, 17});
    VariableBatchPlan batch(host, BatchSizes{p.sizes.data(), index_t(p.sizes.size())});
    CholeskyOptions o;
    o.check_pivots = true;
    BatchedCholeskyPlan<double> plan(batch, CompactBatch{}, o);
    std::vector<double> a = p.a, b = p.rhs;
    check("cholesky factor", [&] { plan.factor(a.data(), nullptr); });
    check("cholesky solve", [&] { plan.solve(a.data(), b.data(), 1, nullptr); });
  }
}

}  // namespace
