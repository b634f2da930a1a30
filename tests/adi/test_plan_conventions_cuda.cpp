// The plan conventions on a CUDA device (the host side: test_plan_conventions.cpp): the
// scoped device guard gives the caller's current device back after every plan's
// construction and solve, device errors carry system and row, and first solves allocate
// nothing. Every test skips loudly without a GPU.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "adi/detail/allocation_count.hpp"
#include "gpu_skip.hpp"
#include "solvers/cuda/backend.hpp"  // device_count, allocation_count, DeviceGuard
#include "tests/adi/plan_conventions_cases.hpp"

namespace {

using namespace adi;
using namespace adi::test_conventions;

Array<double> on(const Executor& exec, const std::vector<double>& h) {
  Array<double> a(index_t(h.size()), exec);
  if (!h.empty()) a.copy_from_host(h.data());
  return a;
}

// Builds and solves one plan of every family on exec (device arrays).
void every_family(const Executor& exec, const std::function<void(const char*)>& after) {
  {
    const Tridiagonal p = tridiagonal(129, 9);
    auto a = on(exec, p.a), b = on(exec, p.b), c = on(exec, p.c), d = on(exec, p.d), u = on(exec, p.d);
    TridiagonalPlan<double> plan(exec, StridedLines::contiguous(p.n, p.count));
    after("TridiagonalPlan built");
    plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
    after("TridiagonalPlan::solve");
    LargeTridiagonalPlan<double> large(exec, p.n, p.count, p.n);
    after("LargeTridiagonalPlan built");
    large.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
    after("LargeTridiagonalPlan::solve");
    LargeTridiagonalOptions lo;
    lo.pivoting = Pivoting::partial;
    LargeTridiagonalPlan<double> pivoting(exec, p.n, p.count, p.n, lo);
    after("LargeTridiagonalPlan built (partial pivoting)");
    pivoting.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
    after("LargeTridiagonalPlan::solve (partial pivoting)");
  }
  {
    const Variable v = variable({5, 70, 6, 0, 33});
    auto a = on(exec, v.a), b = on(exec, v.b), c = on(exec, v.c), d = on(exec, v.d), u = on(exec, v.d);
    VariableBatchPlan batch(exec, BatchSizes{v.sizes.data(), index_t(v.sizes.size())});
    after("VariableBatchPlan built");
    VariableTridiagonalPlan<double> plan(batch, CompactBatch{});
    after("VariableTridiagonalPlan built");
    plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
    after("VariableTridiagonalPlan::solve");
  }
  {
    const Block p = block(3, 17, 6);
    auto a = on(exec, p.a), b = on(exec, p.b), c = on(exec, p.c), d = on(exec, p.d), u = on(exec, p.d);
    BlockTridiagonalPlan<double> plan(exec, BlockContiguous{p.m, p.n, p.systems});
    after("BlockTridiagonalPlan built");
    plan.solve(BlockBands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
    after("BlockTridiagonalPlan::solve");
  }
  {
    // Sizes on both sides of the fused / blocked crossover: side streams and events.
    const Cholesky p = cholesky({4, 40, 0, 17, 100});
    auto a = on(exec, p.a), b = on(exec, p.rhs);
    VariableBatchPlan batch(exec, BatchSizes{p.sizes.data(), index_t(p.sizes.size())});
    CholeskyOptions o;
    o.check_pivots = true;
    BatchedCholeskyPlan<double> plan(batch, CompactBatch{}, o);
    after("BatchedCholeskyPlan built");
    plan.factor(a.data(), nullptr);
    after("BatchedCholeskyPlan::factor");
    plan.solve(a.data(), b.data(), 1, nullptr);
    after("BatchedCholeskyPlan::solve");
  }
}

TEST(DeviceGuard, PlansGiveTheCallersDeviceBack) {
  ADI_REQUIRE_CUDA("the device guard");
  const int devices = cuda_backend::device_count();
  if (devices < 2)
    std::cout << "note: one GPU: plans run on the caller's own device, so the guard's switch and "
                 "restore is exercised only with 2 or more GPUs (the restore itself is checked)\n";
  for (int caller = 0; caller < devices; ++caller)
    for (int dev = 0; dev < devices; ++dev) {
      cuda_backend::set_device(caller);
      every_family(Executor::cuda(dev), [&](const char* what) {
        EXPECT_EQ(cuda_backend::current_device(), caller) << what << " on cuda:" << dev << " left the caller on another device";
      });
    }
  cuda_backend::set_device(0);
}

TEST(DeviceGuard, RestoresOnScopeExitAndOnException) {
  ADI_REQUIRE_CUDA("the device guard");
  const int devices = cuda_backend::device_count();
  const int caller = devices - 1;
  cuda_backend::set_device(caller);
  {
    cuda_backend::DeviceGuard g(0);
    EXPECT_EQ(cuda_backend::current_device(), 0);
  }
  EXPECT_EQ(cuda_backend::current_device(), caller);
  try {
    cuda_backend::DeviceGuard g(0);
    throw std::runtime_error("leaves the scope");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(cuda_backend::current_device(), caller);
  {
    cuda_backend::DeviceGuard g(0, /*select=*/false);  // host paths: nothing
    EXPECT_EQ(cuda_backend::current_device(), caller);
  }
  // A plan whose solve throws also gives the device back.
  cuda_backend::set_device(caller);
  const Tridiagonal p = tridiagonal(33, 4, 1, 7);
  const Executor exec = Executor::cuda(0);
  auto a = on(exec, p.a), b = on(exec, p.b), c = on(exec, p.c), d = on(exec, p.d), u = on(exec, p.d);
  TridiagonalOptions o;
  o.pivoting = Pivoting::none;
  TridiagonalPlan<double> plan(exec, StridedLines::contiguous(p.n, p.count), o);
  EXPECT_THROW(plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data()), SingularSystem);
  EXPECT_EQ(cuda_backend::current_device(), caller);
  cuda_backend::set_device(0);
}

TEST(PlanConventionsCuda, ErrorsCarrySystemAndRow) {
  ADI_REQUIRE_CUDA("device error fields");
  const Executor exec = Executor::cuda();
  {
    const Tridiagonal p = tridiagonal(37, 5, 2, 3);
    auto a = on(exec, p.a), b = on(exec, p.b), c = on(exec, p.c), d = on(exec, p.d), u = on(exec, p.d);
    for (Pivoting pv : {Pivoting::none, Pivoting::automatic, Pivoting::partial}) {
      TridiagonalOptions o;
      o.pivoting = pv;
      TridiagonalPlan<double> plan(exec, StridedLines::contiguous(p.n, p.count), o);
      // Thomas names the zero pivot's row; after pivoting the line is exact, the row is
      // where partial pivoting stops.
      expect_fields<SingularSystem>(
          [&] { plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data()); }, 2,
          pv == Pivoting::none ? 3 : -1, std::string("tridiagonal, pivoting ") + pivoting_name(pv));
    }
  }
  {
    const Tridiagonal p = tridiagonal(100, 3, 1, 40);
    auto a = on(exec, p.a), b = on(exec, p.b), c = on(exec, p.c), d = on(exec, p.d), u = on(exec, p.d);
    for (Pivoting pv : {Pivoting::none, Pivoting::partial}) {
      LargeTridiagonalOptions o;
      o.pivoting = pv;
      LargeTridiagonalPlan<double> plan(exec, p.n, p.count, p.n, o);
      expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data()); },
                                    1, -1, std::string("large, pivoting ") + pivoting_name(pv));
    }
  }
  {
    const Variable v = variable({5, 7, 6, 4}, 2, 2);
    auto a = on(exec, v.a), b = on(exec, v.b), c = on(exec, v.c), d = on(exec, v.d), u = on(exec, v.d);
    VariableBatchPlan batch(exec, BatchSizes{v.sizes.data(), index_t(v.sizes.size())});
    VariableTridiagonalPlan<double> plan(batch, CompactBatch{});
    expect_fields<SingularSystem>([&] { plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data()); },
                                  2, 2, "variable");
  }
  {
    const Block p = block(3, 9, 4, 3, 5);
    auto a = on(exec, p.a), b = on(exec, p.b), c = on(exec, p.c), d = on(exec, p.d), u = on(exec, p.d);
    BlockTridiagonalPlan<double> plan(exec, BlockContiguous{p.m, p.n, p.systems});
    expect_fields<SingularBlock>([&] { plan.solve(BlockBands<double>{a.data(), b.data(), c.data()}, d.data(), u.data()); },
                                 3, 5, "block");
  }
  {
    const Cholesky p = cholesky({4, 6, 5}, 1, 2);
    auto a = on(exec, p.a);
    VariableBatchPlan batch(exec, BatchSizes{p.sizes.data(), index_t(p.sizes.size())});
    CholeskyOptions o;
    o.check_pivots = true;
    BatchedCholeskyPlan<double> plan(batch, CompactBatch{}, o);
    expect_fields<SingularSystem>([&] { plan.factor(a.data(), nullptr); }, 1, 2, "cholesky");
  }
}

TEST(PlanConventionsCuda, FirstSolvesAllocateNothing) {
  ADI_REQUIRE_CUDA("device allocation counts");
  const Executor exec = Executor::cuda();
  std::size_t before = 0, device_before = 0;
  // Every solve / factor message: nothing allocated since the message before it (the plan
  // was built, or the previous solve of the same plan ran).
  every_family(exec, [&](const char* what) {
    const std::string w = what;
    if (w.find("::") != std::string::npos) {
      EXPECT_EQ(detail::storage_allocation_count(), before) << w << " allocated";
      EXPECT_EQ(cuda_backend::allocation_count(), device_before) << w << " allocated device memory";
    }
    before = detail::storage_allocation_count();
    device_before = cuda_backend::allocation_count();
  });
}

}  // namespace
