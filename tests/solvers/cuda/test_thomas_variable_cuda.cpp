// CUDA variable-size tridiagonal batches (solvers/cuda/thomas_variable.cuh) against the fp64
// reference: CP, NCP, sorted, compact and pointer layouts, plain and periodic, both
// precisions, sizes uniform and Gaussian for N in {1, 2, 31, 32, 33, 512} with 0, 1 and
// sizes past a warp / block, NaN-poisoned outputs and padding. The truncated kernel (stop 45)
// on the padded, sorted and compact layouts, its refusals re-solved exactly, its rule and its bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>

#include "gpu_skip.hpp"
#include "tests/solvers/variable_tridiagonal_cases.hpp"

namespace adi::test_variable {
namespace {


struct Param {
  int N;
  Dist dist;
};
// Read by GoogleTest (and CTest's test list) instead of a hex dump of the bytes.
inline void PrintTo(const Param& p, std::ostream* os) {
  *os << "N " << p.N << ", " << (p.dist == Dist::uniform ? "uniform" : "gaussian");
}
class CudaVariableThomas : public ::testing::TestWithParam<Param> {};

template <class T>
void run_all(const Param& p) {
  // More systems than a block of 128 threads; a few chunks of 32.
  const int count = p.N >= 512 ? 200 : 301;
  const std::vector<int> extras = {0, 1, 0, std::min(p.N, 33), std::min(p.N, 129)};
  const auto n = make_sizes(p.dist, p.N, count, 21u + p.N, extras);
  const Executor gpu = Executor::cuda();
  for (bool periodic : {false, true}) {
    const auto sys = make_systems<T>(n, periodic, 4u + p.N);
    const Case cases[] = {
        {Layout::padded, VariableKernel::padded, periodic, false},
        {Layout::padded, VariableKernel::stop_at_size, periodic, false},
        {Layout::padded, VariableKernel::padded, periodic, true},
        {Layout::sorted, VariableKernel::sorted, periodic, false},
        {Layout::sorted, VariableKernel::sorted, periodic, true},
        {Layout::compact, VariableKernel::stop_at_size, periodic, false},
        {Layout::compact_gaps, VariableKernel::automatic, periodic, true},
        {Layout::pointers, VariableKernel::stop_at_size, periodic, false},
    };
    for (const Case& c : cases) run_case<T>(gpu, sys, c);
    if (!periodic) {  // stop 45: the truncated sweeps (in place: the exact kernel; partial: the pivoting kernel)
      const Case truncated[] = {
          {Layout::padded, VariableKernel::truncated, false, false},
          {Layout::sorted, VariableKernel::truncated, false, false},
          {Layout::padded, VariableKernel::truncated, false, true},
          {Layout::sorted, VariableKernel::truncated, false, true},
          {Layout::sorted, VariableKernel::truncated, false, false, Pivoting::none},
          {Layout::sorted, VariableKernel::truncated, false, false, Pivoting::partial},
          {Layout::compact, VariableKernel::truncated, false, false},
          {Layout::compact_gaps, VariableKernel::truncated, false, false},
          {Layout::compact, VariableKernel::truncated, false, true},
      };
      for (const Case& c : truncated) run_case<T>(gpu, sys, c);
    }
    // Stop 37: partial pivoting on the device (one thread per system, pivoting_variable.cuh), every
    // layout's index math, in place too, plain and periodic.
    for (Case c : cases) {
      c.pivoting = Pivoting::partial;
      run_case<T>(gpu, sys, c);
    }
  }
}

TEST_P(CudaVariableThomas, Float) {
  ADI_REQUIRE_CUDA();
  run_all<float>(GetParam());
}
TEST_P(CudaVariableThomas, Double) {
  ADI_REQUIRE_CUDA();
  run_all<double>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Sizes, CudaVariableThomas,
                         ::testing::Values(Param{1, Dist::uniform}, Param{2, Dist::uniform}, Param{31, Dist::uniform},
                                           Param{32, Dist::gaussian}, Param{33, Dist::uniform},
                                           Param{512, Dist::uniform}, Param{512, Dist::gaussian}),
                         [](const auto& info) {
                           return std::string(dist_name(info.param.dist)) + "_N" + std::to_string(info.param.N);
                         });

TEST(CudaVariableThomasEdges, TinyBatches) {
  ADI_REQUIRE_CUDA();
  for (const std::vector<int>& n : {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{1}, std::vector<int>{7},
                                    std::vector<int>{0, 0, 3}})
    for (Layout l : {Layout::padded, Layout::sorted, Layout::compact, Layout::pointers})
      run_case<double>(Executor::cuda(), make_systems<double>(n, true, 9), Case{l, VariableKernel::automatic, true});
}

TEST(CudaVariableThomasErrors, SingularSystemNamedAndHostArraysRejected) {
  ADI_REQUIRE_CUDA();
  const Executor gpu = Executor::cuda();
  auto n = make_sizes(Dist::uniform, 40, 100, 1, {});
  const index_t count = 100, bad = 63;
  VariableBatchPlan batch(gpu, BatchSizes{n.data(), count});
  const index_t span = batch.span(PaddedInterleaved{});
  std::vector<double> a(span, 0.1), b(span, 1.0), c(span, 0.1), d(span, 1.0);
  b[bad] = c[bad] = 0.0;  // row 0 of system 63: zero (singular with pivoting too: automatic's re-solve names it)
  Array<double> da(span, gpu), db(span, gpu), dc(span, gpu), dd(span, gpu), du(span, gpu);
  da.copy_from_host(a.data());
  db.copy_from_host(b.data());
  dc.copy_from_host(c.data());
  dd.copy_from_host(d.data());
  for (VariableKernel m : {VariableKernel::padded, VariableKernel::stop_at_size, VariableKernel::truncated}) {
    VariableTridiagonalOptions o;
    o.kernel = m;
    VariableTridiagonalPlan<double> plan(batch, PaddedInterleaved{}, o);
    try {
      plan.solve(Bands<double>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
      ADD_FAILURE() << "no SingularSystem for " << variable_kernel_name(m);
    } catch (const SingularSystem& e) {
      EXPECT_NE(std::string(e.what()).find("system 63"), std::string::npos) << e.what();
    }
    EXPECT_THROW(plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), d.data()), InvalidArgument);
  }
  for (Pivoting piv : {Pivoting::partial, Pivoting::none}) {  // stop 37: every choice names the system
    VariableTridiagonalOptions o;
    o.pivoting = piv;
    VariableTridiagonalPlan<double> plan(batch, PaddedInterleaved{}, o);
    try {
      plan.solve(Bands<double>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
      ADD_FAILURE() << "no SingularSystem for pivoting " << int(piv);
    } catch (const SingularSystem& e) {
      EXPECT_EQ(e.system(), bad) << e.what();
    }
  }
  {  // periodic + partial on a device: row 0 of system 63 couples to its last row through a[0]
    VariableTridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    o.periodic = true;
    VariableTridiagonalPlan<double> plan(batch, PaddedInterleaved{}, o);
    EXPECT_NO_THROW(plan.solve(Bands<double>{da.data(), db.data(), dc.data()}, dd.data(), du.data()));
  }
  VariableTridiagonalOptions ref;
  ref.kernel = VariableKernel::reference;  // host only
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, PaddedInterleaved{}, ref), InvalidArgument);
}

// Truncated sweeps that refuse (stop 45): a dominant system whose c* decays slowly (|c*| ~ 0.8,
// so 0.8^G is far above the truncation's tolerance) and a non-dominant, well-conditioned one
// (Toeplitz b = 1, a = c = 0.6: |c*| grows past the check's 4) among dominant systems: the exact
// kernel gated on the refusal solves the batch again, and automatic pivots the second.
template <class T>
void refusals() {
  auto n = make_sizes(Dist::uniform, 300, 301, 77u, {0, 1, 2, 3, 31, 33, 255, 257});
  auto sys = make_systems<T>(n, false, 78u);
  auto remake = [&](std::size_t s, int m, double b, double off) {
    sys.n[s] = m;
    sys.a[s].assign(m, T(off));
    sys.c[s].assign(m, T(off));
    sys.b[s].assign(m, T(b));
    sys.d[s].resize(m);
    for (int k = 0; k < m; ++k) sys.d[s][k] = T(std::sin(0.1 * k + double(s)));
    std::vector<double> cs;
    auto at = [](const std::vector<T>& v) { return [&v](index_t k) { return double(v[k]); }; };
    ASSERT_TRUE(reference::thomas_line(m, at(sys.a[s]), at(sys.b[s]), at(sys.c[s]), at(sys.d[s]), sys.x[s], cs));
  };
  remake(40, 300, 2.05, -1.0);  // slow decay: refused, solved exactly
  const Executor gpu = Executor::cuda();
  for (Layout l : {Layout::padded, Layout::sorted, Layout::compact})
    run_case<T>(gpu, sys, Case{l, VariableKernel::truncated});
  remake(41, 64, 1.0, 0.6);  // growth: refused, flagged by the exact kernel, pivoted (automatic)
  for (Layout l : {Layout::padded, Layout::sorted, Layout::compact})
    run_case<T>(gpu, sys, Case{l, VariableKernel::truncated});
}
TEST(CudaVariableTruncated, RefusalsSolvedExactly) {
  ADI_REQUIRE_CUDA();
  refusals<float>();
  refusals<double>();
}

// Automatic's rule: CUDA, interleaved layouts, not periodic, any batch; ADI_VARIABLE_TRUNCATED=0
// never; ADI_VARIABLE_TRUNCATED_LANES=uniform (timing) the lanes of a warp in step (identity rows
// past a system). Large and mixed batches solved against the reference both ways.
TEST(CudaVariableTruncated, AutomaticRule) {
  ADI_REQUIRE_CUDA();
  const Executor gpu = Executor::cuda();
  const auto big = make_sizes(Dist::uniform, 9, 200000, 5u, {0, 1, 2});
  const auto small = make_sizes(Dist::uniform, 9, 1000, 6u, {});
  VariableBatchPlan bb(gpu, BatchSizes{big.data(), index_t(big.size())});
  VariableBatchPlan sb(gpu, BatchSizes{small.data(), index_t(small.size())});
  VariableTridiagonalOptions o, per;
  per.periodic = true;
  EXPECT_EQ(VariableTridiagonalPlan<double>(bb, SortedInterleaved{}, o).kernel(), VariableKernel::truncated);
  EXPECT_EQ(VariableTridiagonalPlan<float>(bb, PaddedInterleaved{}, o).kernel(), VariableKernel::truncated);
  EXPECT_EQ(VariableTridiagonalPlan<double>(bb, SortedInterleaved{}, per).kernel(), VariableKernel::sorted);
  EXPECT_EQ(VariableTridiagonalPlan<double>(bb, CompactBatch{}, o).kernel(), VariableKernel::truncated);
  EXPECT_EQ(VariableTridiagonalPlan<double>(bb, PointerBatch{}, o).kernel(), VariableKernel::stop_at_size);
  EXPECT_EQ(VariableTridiagonalPlan<double>(sb, SortedInterleaved{}, o).kernel(), VariableKernel::truncated);
  ::setenv("ADI_VARIABLE_TRUNCATED", "0", 1);
  EXPECT_EQ(VariableTridiagonalPlan<double>(bb, SortedInterleaved{}, o).kernel(), VariableKernel::sorted);
  ::unsetenv("ADI_VARIABLE_TRUNCATED");
  const auto sys = make_systems<double>(big, false, 7u);
  run_case<double>(gpu, sys, Case{Layout::sorted, VariableKernel::automatic});
  run_case<double>(gpu, sys, Case{Layout::padded, VariableKernel::automatic});
  run_case<double>(gpu, sys, Case{Layout::compact, VariableKernel::automatic});
  ::setenv("ADI_VARIABLE_TRUNCATED_LANES", "uniform", 1);
  run_case<double>(gpu, sys, Case{Layout::sorted, VariableKernel::automatic});
  run_case<double>(gpu, sys, Case{Layout::padded, VariableKernel::automatic});
  const auto sizes = make_sizes(Dist::uniform, 300, 301, 8u, {0, 1, 2, 3, 31, 33, 255, 257});
  for (Layout l : {Layout::padded, Layout::sorted}) {
    run_case<float>(gpu, make_systems<float>(sizes, false, 9u), Case{l, VariableKernel::truncated});
    run_case<double>(gpu, make_systems<double>(sizes, false, 10u), Case{l, VariableKernel::truncated});
  }
  ::unsetenv("ADI_VARIABLE_TRUNCATED_LANES");
}

TEST(CudaVariableTruncated, BadInput) {
  const auto n = make_sizes(Dist::uniform, 40, 100, 1, {});
  VariableTridiagonalOptions o;
  o.kernel = VariableKernel::truncated;
  VariableBatchPlan host(Executor::host(), BatchSizes{n.data(), index_t(n.size())});
  EXPECT_THROW(VariableTridiagonalPlan<double>(host, SortedInterleaved{}, o), InvalidArgument);  // CUDA only
  ADI_REQUIRE_CUDA();
  VariableBatchPlan gpu(Executor::cuda(), BatchSizes{n.data(), index_t(n.size())});
  EXPECT_THROW(VariableTridiagonalPlan<double>(gpu, PointerBatch{}, o), InvalidArgument);
  o.periodic = true;
  try {
    VariableTridiagonalPlan<double>(gpu, SortedInterleaved{}, o);
    ADD_FAILURE() << "no InvalidArgument for a periodic truncated plan";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("not periodic"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace adi::test_variable
