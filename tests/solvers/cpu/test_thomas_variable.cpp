// Host variable-size tridiagonal batches (solvers/cpu/thomas_variable.cpp) against the fp64
// reference: every layout and method, plain and periodic, both precisions, sizes uniform
// and Gaussian for N in {1, 2, 31, 32, 33, 512}, with sizes 0, 1 and past a warp / block.
#include <gtest/gtest.h>

#include <ostream>

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

class HostVariableThomas : public ::testing::TestWithParam<Param> {};

template <class T>
void run_all(const Param& p) {
  const int count = p.N >= 512 ? 150 : 301;
  const std::vector<int> extras = {0, 1, 0, std::min(p.N, 33), std::min(p.N, 129)};
  const auto n = make_sizes(p.dist, p.N, count, 17u + p.N, extras);
  const Executor host = Executor::host(2);
  for (bool periodic : {false, true}) {
    const auto sys = make_systems<T>(n, periodic, 3u + p.N);
    const Case cases[] = {
        {Layout::padded, VariableKernel::padded, periodic, false},
        {Layout::padded, VariableKernel::stop_at_size, periodic, false},
        {Layout::padded, VariableKernel::reference, periodic, false},
        {Layout::padded, VariableKernel::padded, periodic, true},
        {Layout::sorted, VariableKernel::sorted, periodic, false},
        {Layout::sorted, VariableKernel::sorted, periodic, true},
        {Layout::sorted, VariableKernel::reference, periodic, false},
        {Layout::compact, VariableKernel::stop_at_size, periodic, false},
        {Layout::compact_gaps, VariableKernel::automatic, periodic, false},
        {Layout::compact, VariableKernel::reference, periodic, true},
        {Layout::pointers, VariableKernel::stop_at_size, periodic, false},
        {Layout::pointers, VariableKernel::reference, periodic, true},
    };
    for (const Case& c : cases) run_case<T>(host, sys, c);
  }
}

TEST_P(HostVariableThomas, Float) { run_all<float>(GetParam()); }
TEST_P(HostVariableThomas, Double) { run_all<double>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Sizes, HostVariableThomas,
                         ::testing::Values(Param{1, Dist::uniform}, Param{2, Dist::uniform}, Param{31, Dist::uniform},
                                           Param{32, Dist::gaussian}, Param{33, Dist::uniform},
                                           Param{33, Dist::gaussian}, Param{512, Dist::uniform},
                                           Param{512, Dist::gaussian}),
                         [](const auto& info) {
                           return std::string(dist_name(info.param.dist)) + "_N" + std::to_string(info.param.N);
                         });

// More threads than groups, a single system, and an empty batch.
TEST(HostVariableThomasEdges, TinyBatches) {
  for (const std::vector<int>& n : {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{1}, std::vector<int>{7},
                                    std::vector<int>{0, 0, 3}}) {
    const auto sys = make_systems<double>(n, false, 9);
    for (Layout l : {Layout::padded, Layout::sorted, Layout::compact, Layout::pointers})
      run_case<double>(Executor::host(4), sys, Case{l, VariableKernel::automatic, false, false});
  }
}

// A singular system in the middle of the batch is named; the method does not matter.
TEST(HostVariableThomasErrors, SingularSystemNamed) {
  auto n = make_sizes(Dist::uniform, 40, 100, 1, {});
  auto sys = make_systems<double>(n, false, 2);
  const index_t bad = 57;
  const index_t count = static_cast<index_t>(n.size());
  VariableBatchPlan batch(Executor::host(), BatchSizes{n.data(), count});
  // Padded layout with system 57's first pivot zero.
  const index_t span = batch.span(PaddedInterleaved{});
  std::vector<double> a(span, 0.0), b(span, 1.0), c(span, 0.0), d(span, 1.0), u(span);
  for (index_t s = 0; s < count; ++s)
    for (int k = 0; k < n[s]; ++k) b[k * count + s] = sys.b[s][k];
  b[0 * count + bad] = 0.0;
  for (VariableKernel m : {VariableKernel::padded, VariableKernel::stop_at_size, VariableKernel::reference}) {
    VariableTridiagonalOptions o;
    o.kernel = m;
    VariableTridiagonalPlan<double> plan(batch, PaddedInterleaved{}, o);
    try {
      plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
      ADD_FAILURE() << "no SingularSystem for " << variable_kernel_name(m);
    } catch (const SingularSystem& e) {
      EXPECT_NE(std::string(e.what()).find("system 57"), std::string::npos) << e.what();
    }
  }
}

TEST(HostVariableThomasErrors, BadInput) {
  std::vector<int> n = {3, 0, 5, 2};
  const index_t count = 4;
  VariableBatchPlan batch(Executor::host(), BatchSizes{n.data(), count});
  VariableTridiagonalOptions sorted_on_padded;
  sorted_on_padded.kernel = VariableKernel::sorted;
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, PaddedInterleaved{}, sorted_on_padded), InvalidArgument);
  VariableTridiagonalOptions cp_on_compact;
  cp_on_compact.kernel = VariableKernel::padded;
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, CompactBatch{}, cp_on_compact), InvalidArgument);
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, PaddedInterleaved{3, 0}), InvalidArgument);  // stride < count
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, PaddedInterleaved{0, 4}), InvalidArgument);  // rows < max
  std::vector<int> ld = {3, 1, 5, 2};
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, PointerBatch{ld.data()}), InvalidArgument);
  std::vector<index_t> overlapping = {0, 20, 2, 10};
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, CompactBatch{overlapping.data()}), InvalidArgument);
  std::vector<index_t> negative = {0, 20, -2, 10};
  EXPECT_THROW(VariableTridiagonalPlan<double>(batch, CompactBatch{negative.data()}), InvalidArgument);

  std::vector<double> x(64, 1.0), y(64);
  VariableTridiagonalPlan<double> padded(batch, PaddedInterleaved{});
  EXPECT_THROW(padded.solve(Bands<double>{x.data(), nullptr, x.data()}, x.data(), y.data()), InvalidArgument);
  EXPECT_THROW(padded.solve(Bands<double>{x.data(), x.data(), x.data()}, x.data(), x.data() + 1), InvalidArgument);
  EXPECT_THROW(padded.solve(PointerBands<double>{}, nullptr, nullptr), InvalidArgument);  // wrong solve overload

  // A null pointer of a non-empty system in a pointer array; null is fine for size 0.
  VariableTridiagonalPlan<double> ptrs(batch, PointerBatch{});
  std::vector<double> three(64, 3.0);
  std::vector<const double*> p = {x.data(), nullptr, x.data() + 10, x.data() + 20};
  std::vector<const double*> pb = {three.data(), nullptr, three.data() + 10, three.data() + 20};
  std::vector<double*> q = {y.data(), nullptr, y.data() + 10, y.data() + 20};
  EXPECT_NO_THROW(ptrs.solve(PointerBands<double>{p.data(), pb.data(), p.data()}, p.data(), q.data()));
  p[2] = nullptr;
  try {
    ptrs.solve(PointerBands<double>{p.data(), p.data(), p.data()}, p.data(), q.data());
    ADD_FAILURE() << "null pointer accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("a[2] is null"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ptrs.solve(PointerBands<double>{p.data(), p.data(), nullptr}, p.data(), q.data()), InvalidArgument);
  EXPECT_THROW(ptrs.solve(Bands<double>{x.data(), x.data(), x.data()}, x.data(), y.data()), InvalidArgument);
}

}  // namespace
}  // namespace adi::test_variable
