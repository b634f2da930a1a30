// CUDA variable-size tridiagonal batches (solvers/cuda/thomas_variable.cuh) against the fp64
// reference: CP, NCP, sorted, compact and pointer layouts, plain and periodic, both
// precisions, sizes uniform and Gaussian for N in {1, 2, 31, 32, 33, 512} with 0, 1 and
// sizes past a warp / block, NaN-poisoned outputs and padding.
#include <gtest/gtest.h>

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
  for (VariableKernel m : {VariableKernel::padded, VariableKernel::stop_at_size}) {
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

}  // namespace
}  // namespace adi::test_variable
