// Host variable-size batched Cholesky (solvers/cpu/cholesky_vbatched*.cpp) against the fp64
// reference: SIMD-group and one-per-thread paths, pointer (ld > n) and compact layouts,
// sizes uniform and Gaussian for N in {1, 2, 31, 32, 33, 512}, 0 and 1 included, NaN in
// every element that must not be read or written, non-SPD matrices in the middle; the
// reference itself against Eigen's LLT (the LAPACK-or-Eigen per-matrix check).
#include <gtest/gtest.h>

#include <ostream>

#include <Eigen/Cholesky>
#include <Eigen/Core>

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
class HostCholesky : public ::testing::TestWithParam<Param> {};

template <class T>
void run_all(const Param& p) {
  const int count = p.N >= 512 ? 20 : 150;  // the reference is O(n^3) in double: few large ones
  const auto n = case_sizes(p.dist, p.N, count, 11u + p.N);
  // Two non-SPD matrices in the middle (their first column or a later one).
  const auto b = make_batch<T>(n, 5u + p.N, {{count / 2, n[count / 2] / 2}, {count / 2 + 3, 0}});
  const Executor host = Executor::host(2);
  for (CholeskyKernel k : {CholeskyKernel::automatic, CholeskyKernel::cpu_scalar, CholeskyKernel::cpu_vector,
                           CholeskyKernel::reference}) {
    CholeskyOptions o;
    o.kernel = k;
    run_case<T>(host, b, Layout::pointers, o);
  }
  CholeskyOptions small_crossover;
  small_crossover.crossover = 16;  // both paths in one batch
  run_case<T>(host, b, Layout::compact, small_crossover);
  run_case<T>(host, b, Layout::compact, CholeskyOptions{});
}

TEST_P(HostCholesky, Float) { run_all<float>(GetParam()); }
TEST_P(HostCholesky, Double) { run_all<double>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Sizes, HostCholesky,
                         ::testing::Values(Param{1, Dist::uniform}, Param{2, Dist::uniform}, Param{31, Dist::uniform},
                                           Param{32, Dist::gaussian}, Param{33, Dist::uniform},
                                           Param{33, Dist::gaussian}, Param{512, Dist::uniform},
                                           Param{512, Dist::gaussian}),
                         [](const auto& info) {
                           return std::string(test_variable::dist_name(info.param.dist)) + "_N" +
                                  std::to_string(info.param.N);
                         });

// The fp64 reference the kernels are compared with agrees with Eigen's LLT (factor and
// solve, and which matrices fail); the kernels then run on the same batch.
TEST(HostCholeskyEigen, ReferenceMatchesEigenLLT) {
  const std::vector<int> n = {1, 2, 7, 31, 32, 33, 100, 0, 257, 512, 5, 64};
  const auto b = make_batch<double>(n, 77, {{6, 40}, {11, 0}});  // matrices 6 and 11 are not SPD
  for (std::size_t s = 0; s < n.size(); ++s) {
    const int m = n[s], ld = b.ld[s];
    if (m == 0) continue;
    Eigen::MatrixXd A(m, m);
    for (int j = 0; j < m; ++j)
      for (int i = j; i < m; ++i) A(i, j) = A(j, i) = b.A[s][i + static_cast<long>(j) * ld];
    const Eigen::LLT<Eigen::MatrixXd> llt(A);
    ASSERT_EQ(llt.info() == Eigen::Success, b.info[s] == 0) << "matrix " << s << " (n " << m << ")";
    if (b.info[s] != 0) continue;
    const Eigen::MatrixXd L = llt.matrixL();
    double worst = 0;
    for (int j = 0; j < m; ++j)
      for (int i = j; i < m; ++i) worst = std::max(worst, std::abs(L(i, j) - b.L[s][i + static_cast<long>(j) * ld]));
    EXPECT_LE(worst, 1e-12 * L.cwiseAbs().maxCoeff()) << "matrix " << s << " (n " << m << ")";
    Eigen::MatrixXd B(m, b.nrhs);
    for (int r = 0; r < b.nrhs; ++r)
      for (int i = 0; i < m; ++i) B(i, r) = b.B[s][i + static_cast<long>(r) * ld];
    const Eigen::MatrixXd X = llt.solve(B);
    for (int r = 0; r < b.nrhs; ++r)
      for (int i = 0; i < m; ++i)
        EXPECT_NEAR(X(i, r), b.X[s][i + static_cast<long>(r) * ld], 1e-11 * (1 + X.cwiseAbs().maxCoeff()))
            << "matrix " << s << " rhs " << r << " row " << i;
  }
  for (Layout l : {Layout::pointers, Layout::compact}) run_case<double>(Executor::host(2), b, l, {});
}

TEST(HostCholeskyEdges, EmptyAndTiny) {
  for (const std::vector<int>& n : {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{1},
                                    std::vector<int>{0, 0}, std::vector<int>{5, 0, 1}})
    for (Layout l : {Layout::pointers, Layout::compact}) run_case<double>(Executor::host(3), make_batch<double>(n, 2), l, {});
}

// NaN in the lower triangle reaches a pivot and is reported, never left unreported.
TEST(HostCholeskyErrors, NaNInputIsReported) {
  std::vector<int> n(40, 24);
  auto b = make_batch<double>(n, 3);
  b.A[17][20 + 3 * b.ld[17]] = std::numeric_limits<double>::quiet_NaN();  // L(20, 3) becomes NaN: pivot 20 fails
  b.L[17] = b.A[17];
  b.info[17] = reference::cholesky_factor(24, b.L[17].data(), b.ld[17]);
  ASSERT_EQ(b.info[17], 21);
  b.X[17] = b.B[17];
  for (CholeskyKernel k : {CholeskyKernel::cpu_scalar, CholeskyKernel::cpu_vector}) {
    CholeskyOptions o;
    o.kernel = k;
    run_case<double>(Executor::host(), b, Layout::pointers, o);
  }
}

TEST(HostCholeskyErrors, ThrowOnFailureNamesMatrixAndColumn) {
  const auto n = make_sizes(Dist::uniform, 40, 60, 4, {});
  auto b = make_batch<double>(n, 6, {{31, 2}});
  ASSERT_EQ(b.info[31], 3);
  VariableBatchPlan batch(Executor::host(), BatchSizes{n.data(), index_t(n.size())});
  CholeskyOptions o;
  o.check_pivots = true;
  BatchedCholeskyPlan<double> plan(batch, PointerBatch{b.ld.data()}, o);
  std::vector<double*> ptr;
  for (auto& a : b.A) ptr.push_back(a.data());
  try {
    plan.factor(ptr.data(), nullptr);
    ADD_FAILURE() << "no SingularSystem";
  } catch (const SingularSystem& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("matrix 31"), std::string::npos) << w;
    EXPECT_NE(w.find("column 2"), std::string::npos) << w;
  }
  // The rest of the batch was factored before the throw.
  for (std::size_t s = 0; s < n.size(); ++s)
    if (s != 31) expect_factor(b, s, b.A[s]);
}

TEST(HostCholeskyErrors, BadInput) {
  std::vector<int> n = {3, 513};
  VariableBatchPlan big(Executor::host(), BatchSizes{n.data(), 2});
  try {
    BatchedCholeskyPlan<double>(big, PointerBatch{});
    ADD_FAILURE() << "size 513 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("513"), std::string::npos) << e.what();
  }
  n = {3, 0, 4};
  VariableBatchPlan batch(Executor::host(), BatchSizes{n.data(), 3});
  std::vector<int> ld = {3, 1, 3};  // ld[2] < n[2]
  EXPECT_THROW(BatchedCholeskyPlan<double>(batch, PointerBatch{ld.data()}), InvalidArgument);
  CholeskyOptions gpu_kernel;
  gpu_kernel.kernel = CholeskyKernel::cuda_blocked;
  EXPECT_THROW(BatchedCholeskyPlan<double>(batch, PointerBatch{}, gpu_kernel), InvalidArgument);
  std::vector<index_t> overlap = {0, 0, 5};  // matrix 0 (9 values) overlaps matrix 2
  EXPECT_THROW(BatchedCholeskyPlan<double>(batch, CompactBatch{overlap.data()}), InvalidArgument);

  BatchedCholeskyPlan<double> plan(batch, PointerBatch{});
  std::vector<double> a(16, 0.0);
  a[0] = a[4] = a[8] = 1.0;
  std::vector<int> info(3);
  std::vector<double*> p = {a.data(), nullptr, nullptr};  // matrix 2 (size 4) has no pointer
  try {
    plan.factor(p.data(), info.data());
    ADD_FAILURE() << "null matrix pointer accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("A[2] is null"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan.factor(static_cast<double* const*>(nullptr), info.data()), InvalidArgument);
  p[2] = a.data();
  EXPECT_THROW(plan.factor(p.data(), nullptr), InvalidArgument);  // info null without check_pivots
  EXPECT_THROW(plan.factor(a.data(), info.data()), InvalidArgument);  // compact call on a pointer plan
  std::vector<int> ldb = {3, 1, 2};  // ldb[2] < n[2]
  EXPECT_THROW(plan.solve(p.data(), p.data(), 1, ldb.data(), nullptr), InvalidArgument);
  EXPECT_THROW(plan.solve(p.data(), p.data(), -1, nullptr, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace adi::test_cholesky
