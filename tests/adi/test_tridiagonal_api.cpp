// Every public entry point of the tridiagonal family rejects wrong input with
// adi::InvalidArgument (adi::Unsupported for a missing device) and a message that
// names what is wrong, before any kernel runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/tridiagonal.hpp"
#include "gpu_skip.hpp"

namespace {

using adi::index_t;
using adi::Kernel;

// Runs f, expects exception E whose message contains every one of `parts`.
template <class E>
void expect_error(const std::function<void()>& f, std::vector<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << parts.front() << "'";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

void expect_invalid(const std::function<void()>& f, std::vector<std::string> parts) {
  expect_error<adi::InvalidArgument>(f, std::move(parts));
}

struct Arrays {
  std::vector<double> a, b, c, d, u;
  explicit Arrays(std::size_t n) : a(n, 0.5), b(n, 4.0), c(n, 0.5), d(n, 1.0), u(n, 0.0) {}
  adi::Bands<double> bands() const { return {a.data(), b.data(), c.data()}; }
  adi::SharedBands<double> shared() const { return {a.data(), b.data(), c.data()}; }
};

const adi::Executor host = adi::Executor::host();

TEST(TridiagonalApi, ValidInputSolves) {  // the baseline the other tests break one piece of
  Arrays x(40);
  adi::TridiagonalPlan<double> plan(host, adi::StridedLines::contiguous(10, 4));
  EXPECT_NO_THROW(plan.solve(x.bands(), x.d.data(), x.u.data()));
  EXPECT_NO_THROW(plan.solve(x.shared(), x.d.data(), x.d.data()));
}

TEST(TridiagonalApi, NullPointers) {
  Arrays x(40);
  adi::TridiagonalPlan<double> plan(host, adi::StridedLines::contiguous(10, 4));
  const double *a = x.a.data(), *b = x.b.data(), *c = x.c.data(), *d = x.d.data();
  double* u = x.u.data();
  expect_invalid([&] { plan.solve(adi::Bands<double>{nullptr, b, c}, d, u); }, {"pointer a is null", "40"});
  expect_invalid([&] { plan.solve(adi::Bands<double>{a, nullptr, c}, d, u); }, {"pointer b is null"});
  expect_invalid([&] { plan.solve(adi::Bands<double>{a, b, nullptr}, d, u); }, {"pointer c is null"});
  expect_invalid([&] { plan.solve(x.bands(), nullptr, u); }, {"pointer d is null"});
  expect_invalid([&] { plan.solve(x.bands(), d, nullptr); }, {"pointer u is null"});
  expect_invalid([&] { plan.solve(adi::SharedBands<double>{a, nullptr, c}, d, u); }, {"pointer b is null"});
  expect_invalid(
      [&] {
        adi::solve_tridiagonal(host, adi::InterleavedBatch{10, 4}, x.bands(), d, (double*)nullptr);
      },
      {"pointer u is null"});
  expect_invalid(
      [&] {
        adi::solve_tridiagonal(host, adi::InterleavedBatch{10, 4}, adi::SharedBands<double>{}, d, u);
      },
      {"pointer a is null"});
}

TEST(TridiagonalApi, MisalignedPointers) {
  Arrays x(41);
  adi::TridiagonalPlan<double> plan(host, adi::StridedLines::contiguous(10, 4));
  auto shift = [](const double* p) {
    return reinterpret_cast<const double*>(reinterpret_cast<const char*>(p) + 1);
  };
  expect_invalid(
      [&] {
        plan.solve(adi::Bands<double>{x.a.data(), x.b.data(), shift(x.c.data())}, x.d.data(), x.u.data());
      },
      {"pointer c", "not aligned", "8 bytes"});
  expect_invalid([&] { plan.solve(x.bands(), shift(x.d.data()), x.u.data()); }, {"pointer d", "not aligned"});
  expect_invalid([&] { plan.solve(x.bands(), x.d.data(), const_cast<double*>(shift(x.u.data()))); },
                 {"pointer u", "not aligned"});
}

TEST(TridiagonalApi, ZeroLengthAndNegativeCounts) {
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::StridedLines{0, 5, 1, 1});
      },
      {"StridedLines", "n = 0", ">= 1"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::StridedLines{4, -1, 1, 4});
      },
      {"StridedLines", "count = -1", ">= 0"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<float>(host, adi::InterleavedBatch{0, 8});
      },
      {"InterleavedBatch", "n = 0"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<float>(host, adi::InterleavedBatch{8, -3});
      },
      {"InterleavedBatch", "batch = -3"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::BoxLines{adi::Box3{0, 4, 4, 0, 0}, adi::Axis::y});
      },
      {"Box3", "extents (0, 4, 4)", ">= 1"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::LineSet{0, 1, 3, 1, 1, 0});
      },
      {"LineSet", "n = 0"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::LineSet{4, 1, -2, 4, 1, 0});
      },
      {"LineSet", "counts >= 0"});
  Arrays x(8);
  expect_invalid(
      [&] {
        adi::solve_tridiagonal(host, adi::StridedLines{0, 1, 1, 1}, x.bands(), x.d.data(), x.u.data());
      },
      {"n = 0"});
  // No lines at all is valid and does nothing.
  adi::TridiagonalPlan<double> empty(host, adi::StridedLines::contiguous(4, 0));
  EXPECT_NO_THROW(empty.solve(x.bands(), x.d.data(), x.u.data()));
}

TEST(TridiagonalApi, BadStrides) {
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::StridedLines{4, 3, 0, 4});
      },
      {"element_stride = 0", ">= 1"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::StridedLines{4, 3, -2, 4});
      },
      {"element_stride = -2"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::StridedLines{4, 3, 1, 0});
      },
      {"line_stride = 0", "more than one line"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::LineSet{4, 0, 3, 4, 1, 0});
      },
      {"LineSet", "stride"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::LineSet{4, 1, 3, -4, 1, 0});
      },
      {"LineSet", "stride0 = -4"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::LineSet{4, 1, 3, 4, 2, 0});
      },
      {"LineSet", "stride1 = 0"});
}

TEST(TridiagonalApi, BoxStridesTooSmall) {
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::BoxLines{adi::Box3{8, 4, 2, 7, 64}, adi::Axis::x});
      },
      {"Box3", "row stride sy = 7", "nx = 8"});
  expect_invalid(
      [] {
        adi::TridiagonalPlan<double>(host, adi::BoxLines{adi::Box3{8, 4, 2, 9, 35}, adi::Axis::z});
      },
      {"Box3", "plane stride sz = 35", "sy*ny = 36"});
}

TEST(TridiagonalApi, OverlappingButNotEqualOutput) {
  Arrays x(80);
  adi::TridiagonalPlan<double> plan(host, adi::StridedLines::contiguous(10, 4));
  expect_invalid([&] { plan.solve(x.bands(), x.d.data(), x.d.data() + 1); }, {"u and d overlap", "u == d"});
  expect_invalid([&] { plan.solve(x.shared(), x.d.data() + 39, x.d.data()); }, {"overlap"});
  EXPECT_NO_THROW(plan.solve(x.bands(), x.d.data() + 40, x.d.data()));  // adjacent, not overlapping
}

TEST(TridiagonalApi, ForcedKernelThatCannotRunTheLayout) {
  adi::TridiagonalOptions o;
  o.kernel = Kernel::cpu_thomas_transpose;  // needs element stride 1
  expect_invalid(
      [&] {
        adi::TridiagonalPlan<double>(host, adi::StridedLines{8, 4, 2, 16}, o);
      },
      {"cpu_thomas_transpose", "cannot run", "element stride = 2"});
  expect_invalid(
      [&] {
        adi::TridiagonalPlan<double>(host, adi::BoxLines{adi::Box3::dense(5, 6, 7), adi::Axis::y}, o);
      },
      {"cpu_thomas_transpose"});
  o.kernel = Kernel::cpu_thomas_vector;  // needs neighbouring lines one element apart
  expect_invalid([&] { adi::TridiagonalPlan<double>(host, adi::StridedLines::contiguous(8, 4), o); },
                 {"cpu_thomas_vector", "cannot run", "line stride = 8"});
  expect_invalid(
      [&] {
        adi::TridiagonalPlan<double>(host, adi::BoxLines{adi::Box3::dense(5, 6, 7), adi::Axis::x}, o);
      },
      {"cpu_thomas_vector"});
  Arrays x(64);
  expect_invalid(
      [&] {
        adi::solve_tridiagonal(host, adi::StridedLines::contiguous(8, 4), x.bands(), x.d.data(), x.u.data(),
                               o);
      },
      {"cpu_thomas_vector"});
  // ... while the layouts they are made for are accepted.
  EXPECT_NO_THROW(adi::TridiagonalPlan<double>(host, adi::InterleavedBatch{8, 4}, o));
  o.kernel = Kernel::cpu_thomas_transpose;
  EXPECT_NO_THROW(adi::TridiagonalPlan<double>(host, adi::StridedLines{8, 4, 1, 11}, o));
}

TEST(TridiagonalApi, CudaKernelOnHostExecutor) {
  for (Kernel k : {Kernel::cuda_thomas_naive, Kernel::cuda_thomas_shuffle_transpose,
                   Kernel::cuda_thomas_strided, Kernel::cuda_thomas_pcr}) {
    adi::TridiagonalOptions o;
    o.kernel = k;
    expect_invalid([&] { adi::TridiagonalPlan<float>(host, adi::StridedLines::contiguous(8, 4), o); },
                   {adi::kernel_name(k), "executor host"});
  }
}

TEST(TridiagonalApi, KernelNames) {
  for (Kernel k : {Kernel::automatic, Kernel::reference, Kernel::cpu_thomas, Kernel::cpu_thomas_transpose,
                   Kernel::cpu_thomas_vector, Kernel::cuda_thomas_naive,
                   Kernel::cuda_thomas_shuffle_transpose, Kernel::cuda_thomas_shared_transpose,
                   Kernel::cuda_thomas_pcr, Kernel::cuda_thomas_strided, Kernel::cuda_thomas_pcr_strided})
    EXPECT_EQ(adi::kernel_from_name(adi::kernel_name(k)), k);
  expect_invalid([] { adi::kernel_from_name("cpu_thomas_simd"); },
                 {"unknown tridiagonal kernel 'cpu_thomas_simd'", "expected one of", "cpu_thomas_vector"});
  expect_invalid([] { adi::kernel_from_name(""); }, {"unknown tridiagonal kernel ''"});
  expect_invalid([] { adi::kernel_from_name("CPU_THOMAS"); }, {"'CPU_THOMAS'"});
}

// The plan solves lines whose outer index continues the inner one as one run (merged_line_indices):
// every line keeps its number and offset; plan.lines() stays the caller's; the answers are the
// reference's on every line of dense X, Y and Z boxes and of a padded one (not merged).
TEST(TridiagonalApi, MergedLineIndices) {
  const adi::Box3 dense = adi::Box3::dense(6, 5, 4), padded{6, 5, 4, 7, 40};
  const auto x = adi::to_lines(adi::BoxLines{dense, adi::Axis::x});
  const auto y = adi::to_lines(adi::BoxLines{dense, adi::Axis::y});
  const auto z = adi::to_lines(adi::BoxLines{dense, adi::Axis::z});
  const auto zp = adi::to_lines(adi::BoxLines{padded, adi::Axis::z});
  const adi::LineSet one_inner{5, 1, 1, 0, 7, 9}, none{5, 1, 3, 5, 0, 100};
  struct Want {
    adi::LineSet l;
    index_t count0, count1;
  };
  for (const Want& w : {Want{x, 20, 1}, Want{y, 6, 4}, Want{z, 30, 1}, Want{zp, 6, 5}, Want{one_inner, 7, 1},
                        Want{none, 3, 0}}) {
    const adi::LineSet m = adi::merged_line_indices(w.l);
    EXPECT_EQ(m.count0, w.count0);
    EXPECT_EQ(m.count1, w.count1);
    EXPECT_EQ(m.n, w.l.n);
    EXPECT_EQ(m.stride, w.l.stride);
    EXPECT_EQ(m.lines(), w.l.lines());
    EXPECT_EQ(m.span(), w.l.span());
    for (index_t line = 0; line < w.l.lines(); ++line) EXPECT_EQ(m.offset(line), w.l.offset(line)) << line;
  }
  for (const adi::LineSet& l : {x, y, z, zp}) {
    const std::size_t total = static_cast<std::size_t>(l.span());
    Arrays in(total), ref(total);
    for (std::size_t k = 0; k < total; ++k) in.d[k] = ref.d[k] = 1.0 + 0.01 * static_cast<double>(k % 97);
    adi::TridiagonalPlan<double> plan(host, l);
    EXPECT_EQ(plan.lines().count0, l.count0);
    EXPECT_EQ(plan.lines().count1, l.count1);
    plan.solve(in.bands(), in.d.data(), in.u.data());
    adi::TridiagonalOptions o;
    o.kernel = Kernel::reference;
    adi::TridiagonalPlan<double>(host, l, o).solve(ref.bands(), ref.d.data(), ref.u.data());
    for (std::size_t k = 0; k < total; ++k) EXPECT_NEAR(in.u[k], ref.u[k], 1e-14) << k;
  }
}

TEST(TridiagonalApi, CudaExecutorWithoutDevice) {
  ADI_REQUIRE_NO_CUDA("Executor::cuda() refused");
  expect_error<adi::Unsupported>([] { adi::Executor::cuda(); }, {"Executor::cuda", "Executor::host()"});
  expect_error<adi::Unsupported>([] { adi::Executor::cuda(1); }, {"Executor::cuda"});
}

}  // namespace
