// What a layout, a plan or a solve must refuse before any kernel runs, and what a solve
// must report instead of a wrong answer: sizes that overflow a 64-bit index, lines that
// overlap, outputs that overlap the coefficients, out-of-range enums and counts, and
// singular periodic systems (the Sherman-Morrison denominator), on every host kernel and,
// where a GPU is present, every CUDA kernel. Errors carry the failing system as a field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "gpu_skip.hpp"

namespace {

using adi::index_t;
using adi::Kernel;

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}

TEST(LayoutSafety, HugeBoxIsALayoutErrorNotACrash) {
  const index_t big = index_t(1) << 22;
  const std::string m = message_of<adi::InvalidArgument>([&] {
    adi::TridiagonalPlan<double>(adi::Executor::host(), adi::to_lines(adi::BoxLines{adi::Box3::dense(big, big, big)}));
  });
  EXPECT_NE(m.find("overflow a 64-bit index"), std::string::npos) << m;
  EXPECT_NE(m.find("Box3"), std::string::npos) << m;
}

TEST(LayoutSafety, HugeStridedLinesAndLineSet) {
  const index_t half = index_t(1) << 62;
  EXPECT_THROW(adi::to_lines(adi::StridedLines{4, 8, 1, half}), adi::InvalidArgument);
  EXPECT_THROW(adi::to_lines(adi::LineSet{1 << 20, half, 2, 1, 1, 0}), adi::InvalidArgument);
  EXPECT_THROW(adi::to_lines(adi::InterleavedBatch{half, 4}), adi::InvalidArgument);
}

TEST(LayoutSafety, OverlappingLinesAreRejected) {
  // Lines 1 element apart with 5 elements each share 4 elements: two threads would race.
  std::string m = message_of<adi::InvalidArgument>([] { adi::to_lines(adi::StridedLines{5, 3, 1, 1}); });
  EXPECT_NE(m.find("overlap"), std::string::npos) << m;
  m = message_of<adi::InvalidArgument>([] { adi::to_lines(adi::LineSet{4, 2, 3, 3, 1, 0}); });
  EXPECT_NE(m.find("stride0 = 3"), std::string::npos) << m;
  // Interleaved, strided, nested and interlaced-but-disjoint layouts stay valid.
  EXPECT_NO_THROW(adi::to_lines(adi::InterleavedBatch{7, 5}));
  EXPECT_NO_THROW(adi::to_lines(adi::StridedLines{5, 3, 3, 1}));   // {0,3,..}, {1,4,..}, {2,5,..}
  EXPECT_NO_THROW(adi::to_lines(adi::StridedLines{5, 3, 1, 5}));   // contiguous
  EXPECT_NO_THROW(adi::to_lines(adi::LineSet{2, 3, 3, 1, 2, 6}));  // two interlaced groups
  EXPECT_NO_THROW(adi::to_lines(adi::BoxLines{adi::Box3{3, 4, 5, 8, 40}, adi::Axis::y}));
}

TEST(LayoutSafety, EnumsAndCountsOutOfRange) {
  EXPECT_THROW(adi::to_lines(adi::BoxLines{adi::Box3::dense(3, 3, 3), static_cast<adi::Axis>(7)}),
               adi::InvalidArgument);
  const std::string m = message_of<adi::InvalidArgument>([] { adi::Executor::host(-2); });
  EXPECT_NE(m.find("threads = -2"), std::string::npos) << m;
  EXPECT_THROW(adi::LargeTridiagonalPlan<double>(adi::Executor::host(), INT64_MAX), adi::InvalidArgument);
  std::vector<int> sizes{3, 5};
  adi::VariableBatchPlan batch(adi::Executor::host(), adi::BatchSizes{sizes.data(), 2});
  adi::CholeskyOptions o;
  o.crossover = -1;
  EXPECT_THROW(adi::BatchedCholeskyPlan<double>(batch, adi::CompactBatch{}, o), adi::InvalidArgument);
}

TEST(LayoutSafety, OutputOverlappingACoefficientIsRejected) {
  const index_t n = 16, lines = 4;
  std::vector<double> a(n * lines, -1), b(n * lines, 4), c(n * lines + 8, -1), d(n * lines, 1);
  adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::StridedLines::contiguous(n, lines));
  // u starts 8 values into c: half of it is c.
  const std::string m = message_of<adi::InvalidArgument>(
      [&] { plan.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), c.data() + 8); });
  EXPECT_NE(m.find("overlaps the coefficient array c"), std::string::npos) << m;
  EXPECT_THROW(plan.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), b.data()),
               adi::InvalidArgument);
}

// Arrays one value short of the layout: the size-checked overloads say which one, instead of
// a fault past the end of the array.
TEST(LayoutSafety, SpansShorterThanTheLayoutAreRejected) {
  const index_t n = 64, lines = 5, span = n * lines;
  std::vector<double> a(span, -1), b(span, 4), c(span, -1), d(span, 1), u(span);
  adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::StridedLines::contiguous(n, lines));
  using S = std::span<const double>;
  plan.solve(adi::BandSpans<double>{S(a), S(b), S(c)}, S(d), std::span<double>(u));
  EXPECT_NEAR(u[0], 1.0 / 3.0, 0.2);
  std::string m = message_of<adi::InvalidArgument>([&] {
    plan.solve(adi::BandSpans<double>{S(a), S(b), S(c)}, S(d).first(span - 1), std::span<double>(u));
  });
  EXPECT_NE(m.find("array d holds 319 values but the layout reaches 320"), std::string::npos) << m;
  m = message_of<adi::InvalidArgument>([&] {
    plan.solve(adi::BandSpans<double>{S(a), S(b).first(n - 1), S(c), true}, S(d), std::span<double>(u));
  });
  EXPECT_NE(m.find("array b holds 63"), std::string::npos) << m;
  EXPECT_NO_THROW(plan.solve(adi::BandSpans<double>{S(a).first(n), S(b).first(n), S(c).first(n), true}, S(d),
                             std::span<double>(u)));
  // Block systems: A, B, C of M*M values per block row, d and u of M.
  const adi::BlockContiguous bl{2, 8, 3};
  std::vector<double> A(2 * 2 * 8 * 3, 0.1), B(A.size(), 0.0), C(A.size(), 0.1), bd(2 * 8 * 3, 1.0), bu(bd.size());
  for (std::size_t k = 0; k < B.size(); k += 4) B[k] = B[k + 3] = 4.0;
  adi::BlockTridiagonalPlan<double> bp(adi::Executor::host(), bl);
  EXPECT_NO_THROW(bp.solve(S(A), S(B), S(C), S(bd), std::span<double>(bu)));
  m = message_of<adi::InvalidArgument>([&] { bp.solve(S(A), S(B), S(C).first(C.size() - 1), S(bd), std::span<double>(bu)); });
  EXPECT_NE(m.find("array C holds"), std::string::npos) << m;
}

// check_pivots is switched the same way in the block family as in the scalar one.
TEST(LayoutSafety, BlockCheckPivotsSwitchesTheReport) {
  const adi::BlockContiguous bl{2, 3, 2};
  std::vector<double> A(2 * 2 * 3 * 2, 0.0), B(A.size(), 0.0), C(A.size(), 0.0), d(2 * 3 * 2, 1.0), u(d.size());
  adi::BlockTridiagonalPlan<double> checked(adi::Executor::host(), bl);
  EXPECT_THROW(checked.solve(adi::BlockBands<double>{A.data(), B.data(), C.data()}, d.data(), u.data()),
               adi::SingularBlock);
  adi::BlockTridiagonalOptions o;
  o.check_pivots = false;
  adi::BlockTridiagonalPlan<double> unchecked(adi::Executor::host(), bl, o);
  EXPECT_NO_THROW(unchecked.solve(adi::BlockBands<double>{A.data(), B.data(), C.data()}, d.data(), u.data()));
}

TEST(LayoutSafety, ImpossibleFieldIsALayoutError) {
  const index_t big = index_t(1) << 22;
  EXPECT_THROW(adi::Field<double>(big, big, big), adi::InvalidArgument);
  EXPECT_THROW(adi::Field<double>(big, big, 1 << 12), adi::InvalidArgument);  // 2^56 values: no memory holds them
  EXPECT_THROW(adi::Array<float>(-1), adi::InvalidArgument);
}

TEST(LayoutSafety, NumbersInMessagesKeepTheirValue) {
  EXPECT_EQ(adi::detail::number(-1.0000001), "-1.0000001");
  EXPECT_EQ(adi::detail::number(1e308), "1e+308");
  EXPECT_EQ(adi::detail::number(0.1), "0.1");
  EXPECT_EQ(adi::detail::number(index_t(42)), "42");
  const std::string m = message_of<adi::InvalidArgument>([] {
    adi::LargeTridiagonalOptions o;
    o.pivot_tolerance = 1.0000001;
    adi::LargeTridiagonalPlan<double>(adi::Executor::host(), 64, 1, 0, o);
  });
  EXPECT_NE(m.find("1.0000001"), std::string::npos) << m;
}

// The library's messages print numbers so that they read back as the same value (%g-style
// shortest round trip), never with std::to_string's six decimals.
TEST(LayoutSafety, LibraryMessagesKeepNumbers) {
  std::string m = message_of<adi::InvalidArgument>([] { adi::AxisGrid::uniform(9, 1.0000001, 1.0000001); });
  EXPECT_NE(m.find("1.0000001"), std::string::npos) << m;
  m = message_of<adi::InvalidArgument>([] { adi::periodic_axis(9, 0.0, -1.0000001); });
  EXPECT_NE(m.find("-1.0000001"), std::string::npos) << m;
  m = message_of<adi::InvalidArgument>([] {
    adi::BlockTridiagonalOptions o;
    o.pivot_tolerance = -1e-300;
    adi::BlockTridiagonalPlan<double>(adi::Executor::host(), adi::BlockContiguous{2, 4, 1}, o);
  });
  EXPECT_NE(m.find("-1e-300"), std::string::npos) << m;
  EXPECT_EQ(m.find("0.000000"), std::string::npos) << m;
}

// A zero pivot in one line: the error names it and carries it as a field.
TEST(LayoutSafety, SingularSystemCarriesTheLine) {
  const index_t n = 8, lines = 5;
  std::vector<double> a(n * lines, -1), b(n * lines, 4), c(n * lines, -1), d(n * lines, 1), u(n * lines);
  b[3 * n] = 0;  // line 3, row 0 (singular for Thomas; partial pivoting would solve it)
  for (Kernel k : {Kernel::reference, Kernel::cpu_thomas}) {
    adi::TridiagonalOptions o;
    o.kernel = k;
    o.pivoting = adi::Pivoting::none;
    adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::StridedLines::contiguous(n, lines), o);
    try {
      plan.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
      ADD_FAILURE() << "no SingularSystem from " << adi::kernel_name(k);
    } catch (const adi::SingularSystem& e) {
      EXPECT_EQ(e.system(), 3) << adi::kernel_name(k) << ": " << e.what();
    }
  }
}

// The periodic Laplacian (b = 2, a = c = -1) is singular: every kernel must say so instead
// of returning values of 1e12..1e15. A dominant periodic system next to it still solves.
template <class T>
void periodic_singular_on(const adi::Executor& ex, Kernel k, const adi::LineSet& lines, bool on_device) {
  const index_t span = lines.span();
  std::vector<T> a(span, T(-1)), b(span, T(2)), c(span, T(-1)), d(span), u(span, T(0));
  for (index_t i = 0; i < span; ++i) d[i] = T(std::sin(0.37 * double(i)));
  adi::TridiagonalOptions o;
  o.kernel = k;
  o.periodic = true;
  adi::TridiagonalPlan<T> plan(ex, lines, o);
  auto run = [&](const std::vector<T>& bb) {
    if (!on_device) {
      plan.solve(adi::Bands<T>{a.data(), bb.data(), c.data()}, d.data(), u.data());
      return;
    }
    adi::Array<T> da(span, ex), db(span, ex), dc(span, ex), dd(span, ex), du(span, ex);
    da.copy_from_host(a.data());
    db.copy_from_host(bb.data());
    dc.copy_from_host(c.data());
    dd.copy_from_host(d.data());
    plan.solve(adi::Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
  };
  EXPECT_THROW(run(b), adi::SingularSystem) << adi::kernel_name(k) << " n = " << lines.n;
  std::vector<T> dominant(span, T(2.5));
  EXPECT_NO_THROW(run(dominant)) << adi::kernel_name(k) << " n = " << lines.n;
}

TEST(LayoutSafety, SingularPeriodicSystemsAreReportedOnTheHost) {
  for (index_t n : {3, 4, 31, 64, 257})
    for (Kernel k : {Kernel::reference, Kernel::cpu_thomas, Kernel::cpu_thomas_transpose, Kernel::cpu_thomas_vector}) {
      const adi::LineSet lines = k == Kernel::cpu_thomas_vector ? adi::to_lines(adi::InterleavedBatch{n, 16})
                                                                : adi::to_lines(adi::StridedLines::contiguous(n, 16));
      periodic_singular_on<double>(adi::Executor::host(), k, lines, false);
      periodic_singular_on<float>(adi::Executor::host(), k, lines, false);
    }
}

TEST(LayoutSafety, SingularPeriodicSystemsAreReportedOnTheDevice) {
  ADI_REQUIRE_CUDA("the singular periodic check of the CUDA kernels");
  const adi::Executor ex = adi::Executor::cuda();
  for (index_t n : {4, 31, 64, 257}) {
    for (Kernel k : {Kernel::cuda_thomas_naive, Kernel::cuda_thomas_shuffle_transpose, Kernel::cuda_thomas_pcr,
                     Kernel::automatic}) {
      if (k == Kernel::cuda_thomas_pcr && n > 256) continue;
      periodic_singular_on<double>(ex, k, adi::to_lines(adi::StridedLines::contiguous(n, 64)), true);
      periodic_singular_on<float>(ex, k, adi::to_lines(adi::StridedLines::contiguous(n, 64)), true);
    }
    for (Kernel k : {Kernel::cuda_thomas_strided, Kernel::cuda_thomas_pcr_strided, Kernel::cuda_thomas_pcr_long}) {
      periodic_singular_on<double>(ex, k, adi::to_lines(adi::InterleavedBatch{n, 256}), true);
      periodic_singular_on<float>(ex, k, adi::to_lines(adi::InterleavedBatch{n, 256}), true);
    }
  }
}

}  // namespace
