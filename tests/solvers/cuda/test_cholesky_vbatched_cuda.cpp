// CUDA variable-size batched Cholesky (solvers/cuda/cholesky_vbatched.cuh) against the fp64
// reference: fused warp kernel, blocked kernel (every launch shape), pointer and compact
// layouts, sizes uniform and Gaussian for N in {1, 2, 31, 32, 33, 512}, NaN in every element
// that must be neither read nor written, non-SPD matrices in the middle, potrs.
#include <gtest/gtest.h>

#include <ostream>

#include "gpu_skip.hpp"
#include "solvers/cuda/backend.hpp"
#include "tests/solvers/cholesky_vbatched_cases.hpp"

namespace adi::test_cholesky {
namespace {


struct Param {
  int N;
  Dist dist;
};
// Read by GoogleTest (and CTest's test list) instead of a hex dump of the bytes.
inline void PrintTo(const Param& p, std::ostream* os) {
  *os << "N " << p.N << ", " << (p.dist == Dist::uniform ? "uniform" : "gaussian");
}
class CudaCholesky : public ::testing::TestWithParam<Param> {};

template <class T>
void run_all(const Param& p) {
  const int count = p.N >= 512 ? 24 : 200;  // > a block of warps; few large ones (O(n^3) reference)
  const auto n = case_sizes(p.dist, p.N, count, 13u + p.N);
  const auto b = make_batch<T>(n, 7u + p.N, {{count / 2, n[count / 2] / 2}, {count / 2 + 3, 0}});
  const Executor gpu = Executor::cuda();
  run_case<T>(gpu, b, Layout::pointers, CholeskyOptions{});
  run_case<T>(gpu, b, Layout::compact, CholeskyOptions{});
  CholeskyOptions blocked;
  blocked.kernel = CholeskyKernel::cuda_blocked;
  for (int variant = 0; variant < cuda_backend::kCholeskyBlockedVariants; ++variant) {
    blocked.blocked_shape = variant;
    run_case<T>(gpu, b, Layout::pointers, blocked, variant == 0);
  }
  if (p.N <= 32) {
    CholeskyOptions fused;
    fused.kernel = CholeskyKernel::cuda_fused;
    run_case<T>(gpu, b, Layout::pointers, fused);
  }
}

TEST_P(CudaCholesky, Float) {
  ADI_REQUIRE_CUDA();
  run_all<float>(GetParam());
}
TEST_P(CudaCholesky, Double) {
  ADI_REQUIRE_CUDA();
  run_all<double>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Sizes, CudaCholesky,
                         ::testing::Values(Param{1, Dist::uniform}, Param{2, Dist::uniform}, Param{31, Dist::uniform},
                                           Param{32, Dist::gaussian}, Param{33, Dist::uniform},
                                           Param{512, Dist::uniform}, Param{512, Dist::gaussian}),
                         [](const auto& info) {
                           return std::string(test_variable::dist_name(info.param.dist)) + "_N" +
                                  std::to_string(info.param.N);
                         });

TEST(CudaCholeskyEdges, EmptyAndTinyAndNaN) {
  ADI_REQUIRE_CUDA();
  for (const std::vector<int>& n : {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{1},
                                    std::vector<int>{0, 0}, std::vector<int>{5, 0, 1}})
    for (Layout l : {Layout::pointers, Layout::compact}) run_case<double>(Executor::cuda(), make_batch<double>(n, 2), l, {});
  // NaN in the lower triangle reaches a pivot and is reported (fused and blocked sizes).
  for (int m : {24, 100}) {
    std::vector<int> n(40, m);
    auto b = make_batch<float>(n, 3);
    b.A[17][20 + 3 * b.ld[17]] = std::numeric_limits<float>::quiet_NaN();
    b.L[17] = b.A[17];
    b.info[17] = reference::cholesky_factor(m, b.L[17].data(), b.ld[17]);
    ASSERT_EQ(b.info[17], 21);
    b.X[17] = b.B[17];
    run_case<float>(Executor::cuda(), b, Layout::pointers, {});
  }
}

TEST(CudaCholeskyErrors, ThrowOnFailureAndBadInput) {
  ADI_REQUIRE_CUDA();
  const Executor gpu = Executor::cuda();
  const auto n = make_sizes(Dist::uniform, 80, 60, 4, {});
  VariableBatchPlan batch(gpu, BatchSizes{n.data(), index_t(n.size())});
  CholeskyOptions o;
  o.check_pivots = true;
  auto b = make_batch<double>(n, 6, {{31, 2}});
  index_t total = 0;
  for (int m : n) total += static_cast<index_t>(m) * m;
  std::vector<double> host;
  for (std::size_t s = 0; s < n.size(); ++s)
    for (int j = 0; j < n[s]; ++j)
      for (int i = 0; i < n[s]; ++i) host.push_back(b.A[s][i + static_cast<long>(j) * b.ld[s]]);
  Array<double> a(total, gpu);
  a.copy_from_host(host.data());
  BatchedCholeskyPlan<double> plan(batch, CompactBatch{}, o);
  try {
    plan.factor(a.data(), nullptr);
    ADD_FAILURE() << "no SingularSystem";
  } catch (const SingularSystem& e) {
    EXPECT_NE(std::string(e.what()).find("matrix 31"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("column 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan.factor(host.data(), nullptr), InvalidArgument);  // host array, device executor
  CholeskyOptions host_kernel;
  host_kernel.kernel = CholeskyKernel::cpu_vector;
  EXPECT_THROW(BatchedCholeskyPlan<double>(batch, CompactBatch{}, host_kernel), InvalidArgument);
  CholeskyOptions fused;
  fused.kernel = CholeskyKernel::cuda_fused;  // sizes up to 80 do not fit a warp
  EXPECT_THROW(BatchedCholeskyPlan<double>(batch, CompactBatch{}, fused), InvalidArgument);
  // A null matrix pointer in a device pointer array.
  BatchedCholeskyPlan<double> ptr_plan(batch, PointerBatch{});
  std::vector<double*> p(n.size(), a.data());
  p[7] = nullptr;
  Array<double*> dp(index_t(n.size()), gpu);
  dp.copy_from_host(p.data());
  Array<int> info(index_t(n.size()), gpu);
  EXPECT_THROW(ptr_plan.factor(dp.data(), info.data()), InvalidArgument);
}

}  // namespace
}  // namespace adi::test_cholesky
