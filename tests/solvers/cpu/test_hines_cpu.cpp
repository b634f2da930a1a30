// Host Hines kernels (solvers/cpu/hines.cpp) against the dense Eigen solve: every tree shape
// (cable, star, heap-ordered binary, deep binary, random) at odd sizes, mono- and
// mixed-tree batches, the two real SWC cells, every layout and kernel, float and double,
// NaN in the padding and in offdiag[0].
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "adi/error.hpp"
#include "adi/hines.hpp"
#include "hines_test_common.hpp"

namespace {

using adi::HinesBatch;
using adi::HinesKernel;
using adi::HinesOptions;
using adi::HinesPlan;
using adi::HinesTopology;
using adi::index_t;

template <class T>
struct NamedPlan {
  std::string name;
  std::unique_ptr<HinesPlan<T>> plan;
};

HinesOptions with(HinesKernel k, int chunk = 32, int threads_unused = 0) {
  (void)threads_unused;
  HinesOptions o;
  o.kernel = k;
  o.chunk_width = chunk;
  return o;
}

// Every host (layout, kernel) pair, on `threads` threads.
template <class T>
std::vector<NamedPlan<T>> host_plans(const HinesBatch& b, int threads) {
  const adi::Executor ex = adi::Executor::host(threads);
  std::vector<NamedPlan<T>> v;
  auto add = [&](std::string name, auto layout, HinesOptions o) {
    v.push_back({name + "/" + adi::hines_kernel_name(o.kernel),
                 std::make_unique<HinesPlan<T>>(ex, b, layout, o)});
  };
  for (HinesKernel k : {HinesKernel::automatic, HinesKernel::reference, HinesKernel::cpu_scalar})
    add("flat", adi::CompactBatch{}, with(k));
  // Neurons stored in reverse order with gaps between them.
  static std::vector<index_t> offsets;
  offsets.assign(static_cast<std::size_t>(b.count()), 0);
  index_t at = 5;
  for (index_t s = b.count() - 1; s >= 0; --s) {
    offsets[static_cast<std::size_t>(s)] = at;
    at += b.topologies[static_cast<std::size_t>(b.topology_of[static_cast<std::size_t>(s)])].size() + 3;
  }
  add("flat-offsets", adi::CompactBatch{offsets.data()}, with(HinesKernel::cpu_scalar));
  int max_size = 0;
  for (const HinesTopology& t : b.topologies) max_size = std::max(max_size, t.size());
  for (HinesKernel k : {HinesKernel::automatic, HinesKernel::cpu_scalar})
    add("interleaved", adi::PaddedInterleaved{}, with(k));
  add("interleaved-padded", adi::PaddedInterleaved{b.count() + 3, max_size + 2}, with(HinesKernel::cpu_scalar));
  for (int chunk : {32, 16, 8, 3, 1})
    for (HinesKernel k : {HinesKernel::automatic, HinesKernel::cpu_scalar, HinesKernel::cpu_vector})
      add("sorted" + std::to_string(chunk), adi::SortedInterleaved{}, with(k, chunk));
  return v;
}

template <class T>
void run_all(const HinesBatch& b, const std::string& what, std::uint64_t seed, int threads = 0) {
  const std::vector<hines_test::System> sys = hines_test::random_systems<T>(b, seed);
  const std::vector<Eigen::VectorXd> ref = hines_test::dense_solutions(sys);
  for (NamedPlan<T>& np : host_plans<T>(b, threads)) {
    hines_test::Arrays<T> a = hines_test::place(*np.plan, sys);
    np.plan->solve(a.off.data(), a.diag.data(), a.rhs.data());
    hines_test::check(*np.plan, ref, a.rhs, hines_test::tolerance<T>(), what + " " + np.name);
  }
}

template <class T>
class HinesCpu : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(HinesCpu, Types);

TYPED_TEST(HinesCpu, EveryShapeOneTree) {
  for (const hines_test::Shape& s : hines_test::shapes())
    for (index_t count : {1, 3, 33}) {
      const HinesBatch b = HinesBatch::uniform(HinesTopology(s.parent), count);
      run_all<TypeParam>(b, s.name + " x" + std::to_string(count), 7 + static_cast<std::uint64_t>(count));
    }
}

TYPED_TEST(HinesCpu, MixedTrees) {
  HinesBatch b;
  for (const hines_test::Shape& s : hines_test::shapes()) b.topologies.emplace_back(s.parent);
  hines_test::Rng r{3};
  for (int s = 0; s < 101; ++s) b.topology_of.push_back(r.below(static_cast<int>(b.topologies.size())));
  run_all<TypeParam>(b, "mixed", 11);
  run_all<TypeParam>(b, "mixed (2 threads)", 12, 2);
}

TYPED_TEST(HinesCpu, RealCells) {
  HinesBatch b;
  for (const std::string& f : {hines_test::dense_cell(), hines_test::sparse_cell()})
    b.topologies.emplace_back(adi::discretise(adi::Morphology::read_swc(f), adi::CableParameters{}).parent);
  b.topology_of = {0, 1, 1, 0, 1};
  run_all<TypeParam>(b, "real cells", 13);
}

// 40 neurons of one tree in a chunk width of 32: the last chunk is partial (its whole SIMD
// groups in lanes, the rest lane by lane), the first runs in SIMD lanes; 16 and 24 neurons:
// one partial chunk (2 or 3 fp64 groups, 1 fp32 group + 8 single lanes); with many neurons
// the OpenMP loop is parallel.
TYPED_TEST(HinesCpu, PartialChunksAndThreads) {
  for (index_t count : {40, 16, 24, 7}) {
    const HinesBatch b = HinesBatch::uniform(HinesTopology(hines_test::deep_binary(201)), count);
    run_all<TypeParam>(b, "partial chunks x" + std::to_string(count), 17 + static_cast<std::uint64_t>(count), 2);
  }
  const HinesBatch big = HinesBatch::uniform(HinesTopology(hines_test::random_tree(101, 5)), 700);
  const std::vector<hines_test::System> sys = hines_test::random_systems<TypeParam>(big, 19);
  const std::vector<Eigen::VectorXd> ref = hines_test::dense_solutions(sys);
  for (int threads : {1, 2}) {
    HinesPlan<TypeParam> plan(adi::Executor::host(threads), big, adi::SortedInterleaved{});
    EXPECT_EQ(plan.kernel(), HinesKernel::cpu_vector);
    auto a = hines_test::place(plan, sys);
    plan.solve(a.off.data(), a.diag.data(), a.rhs.data());
    hines_test::check(plan, ref, a.rhs, hines_test::tolerance<TypeParam>(), "700 neurons");
  }
}

TYPED_TEST(HinesCpu, BadPivotNamesTheNeuron) {
  for (HinesKernel k : {HinesKernel::reference, HinesKernel::cpu_scalar, HinesKernel::cpu_vector}) {
    const HinesBatch b = HinesBatch::uniform(HinesTopology(hines_test::star(9)), 40);
    HinesPlan<TypeParam> plan(adi::Executor::host(), b, adi::SortedInterleaved{}, with(k, 8));
    auto a = hines_test::place(plan, hines_test::random_systems<TypeParam>(b, 1));
    a.diag[static_cast<std::size_t>(plan.index(37, 4))] = 0;  // a leaf: its pivot is its diagonal
    try {
      plan.solve(a.off.data(), a.diag.data(), a.rhs.data());
      ADD_FAILURE() << adi::hines_kernel_name(k) << ": no SingularSystem";
    } catch (const adi::SingularSystem& e) {
      EXPECT_NE(std::string(e.what()).find("neuron 37"), std::string::npos) << e.what();
    }
    HinesOptions off = with(k, 8);
    off.check_pivots = false;
    HinesPlan<TypeParam> quiet(adi::Executor::host(), b, adi::SortedInterleaved{}, off);
    auto q = hines_test::place(quiet, hines_test::random_systems<TypeParam>(b, 1));
    q.diag[static_cast<std::size_t>(quiet.index(37, 4))] = 0;
    EXPECT_NO_THROW(quiet.solve(q.off.data(), q.diag.data(), q.rhs.data()));
  }
}

TEST(HinesCpuPlan, RefusesKernelsThatCannotRunTheLayout) {
  const HinesBatch b = HinesBatch::uniform(HinesTopology(hines_test::cable(5)), 4);
  const adi::Executor h = adi::Executor::host();
  EXPECT_THROW(HinesPlan<double>(h, b, adi::CompactBatch{}, with(HinesKernel::cpu_vector)), adi::InvalidArgument);
  EXPECT_THROW(HinesPlan<double>(h, b, adi::SortedInterleaved{}, with(HinesKernel::cuda_stack)), adi::InvalidArgument);
  EXPECT_THROW(HinesPlan<double>(h, b, adi::CompactBatch{}, with(HinesKernel::cuda_branch)), adi::InvalidArgument);
  EXPECT_THROW(HinesPlan<double>(h, b, adi::SortedInterleaved{}, with(HinesKernel::cpu_vector, 0)), adi::InvalidArgument);
  EXPECT_THROW(HinesPlan<double>(h, b, adi::PaddedInterleaved{3, 0}), adi::InvalidArgument);   // stride < count
  EXPECT_THROW(HinesPlan<double>(h, b, adi::PaddedInterleaved{4, 4}), adi::InvalidArgument);   // rows < size
  HinesPlan<double> plan(h, b, adi::CompactBatch{});
  std::vector<double> x(static_cast<std::size_t>(plan.span()), 1.0);
  EXPECT_THROW(plan.solve(nullptr, x.data(), x.data()), adi::InvalidArgument);
  EXPECT_THROW(plan.index(4, 0), adi::InvalidArgument);
  EXPECT_THROW(plan.index(0, 5), adi::InvalidArgument);
  HinesBatch wrong = b;
  wrong.topology_of[2] = 1;
  EXPECT_THROW(HinesPlan<double>(h, wrong, adi::CompactBatch{}), adi::InvalidArgument);
}

}  // namespace
