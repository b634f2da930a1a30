// Every host kernel (reference, cpu_thomas, cpu_thomas_transpose, cpu_thomas_vector)
// against the fp64 reference on fresh random diagonally dominant systems, over every
// layout it can read, odd sizes and line counts (vector tails), both precisions,
// per-line and shared bands, periodic or not, in place or not. The reference itself
// is checked against an Eigen dense LU first.
#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "adi/error.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/cpu/tridiagonal_kernels.hpp"
#include "solvers/reference/thomas.hpp"

namespace {

using adi::Box3;
using adi::index_t;
using adi::Kernel;
using adi::LineSet;

enum class Layout { contiguous, padded_rows, strided, adjacent, interleaved, box_x, box_y, box_z };

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous: return "contiguous";
    case Layout::padded_rows: return "padded_rows";
    case Layout::strided: return "strided";
    case Layout::adjacent: return "adjacent";
    case Layout::interleaved: return "interleaved";
    case Layout::box_x: return "box_x";
    case Layout::box_y: return "box_y";
    default: return "box_z";
  }
}

bool is_box(Layout l) { return l == Layout::box_x || l == Layout::box_y || l == Layout::box_z; }

using AnyLayout = std::variant<adi::StridedLines, adi::InterleavedBatch, adi::BoxLines>;

// The public layout of a case; n and count are ignored for boxes.
AnyLayout make_layout(Layout l, index_t n, index_t count, const Box3& box) {
  switch (l) {
    case Layout::contiguous: return adi::StridedLines::contiguous(n, count);
    case Layout::padded_rows: return adi::StridedLines{n, count, 1, n + 3};   // X-like, padded lines
    case Layout::strided: return adi::StridedLines{n, count, 3, 3 * n + 5};   // gather: stride 3
    case Layout::adjacent: return adi::StridedLines{n, count, count + 2, 1};  // lines side by side
    case Layout::interleaved: return adi::InterleavedBatch{n, count};
    case Layout::box_x: return adi::BoxLines{box, adi::Axis::x};
    case Layout::box_y: return adi::BoxLines{box, adi::Axis::y};
    default: return adi::BoxLines{box, adi::Axis::z};
  }
}

LineSet lines_of(const AnyLayout& v) {
  return std::visit([](const auto& x) { return adi::to_lines(x); }, v);
}

// Padded, non-cubic sub-box shapes: rows padded (sy > nx), planes padded (sz > sy*ny).
Box3 padded(index_t nx, index_t ny, index_t nz) {
  const index_t sy = nx + 3;
  return {nx, ny, nz, sy, sy * ny + 5};
}

const index_t kSizes[] = {1, 2, 3, 4, 7, 31, 32, 33, 255, 257, 1000};
const index_t kCounts[] = {1, 3, 17, 33};
// The dense box: Z lines of consecutive x-rows are one row of adjacent lines there
// (cpu_thomas_vector's groups then span x-rows).
const Box3 kBoxes[] = {padded(37, 12, 9), padded(33, 4, 17), padded(5, 257, 3), padded(3, 2, 1000),
                       Box3::dense(13, 6, 31)};

constexpr index_t kBefore = 7, kAfter = 11;  // guard elements around the span (sub-box offset)

template <class T>
T sentinel() {
  return T(-777.25);
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// One generated problem: buffers of kBefore + span + kAfter values, lines at kBefore.
template <class T>
struct Data {
  LineSet lines;
  bool shared = false, periodic = false;
  std::vector<T> a, b, c, d;
  std::vector<char> on_line;  // buffer positions that belong to a line

  Data(const LineSet& l, bool shared_, bool periodic_, std::mt19937_64& rng)
      : lines(l), shared(shared_), periodic(periodic_) {
    const std::size_t size = static_cast<std::size_t>(kBefore + l.span() + kAfter);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    on_line.assign(size, 0);
    d.assign(size, sentinel<T>());
    for_each([&](index_t, index_t, index_t pos) {
      on_line[pos] = 1;
      d[pos] = T(u(rng));
    });
    const std::size_t csize = shared ? static_cast<std::size_t>(l.n) : size;
    a.assign(csize, sentinel<T>());
    b = c = a;
    auto fill = [&](index_t i, index_t pos) {
      // |b| >= 2.5 > |a| + |c|: diagonally dominant, random signs.
      b[pos] = T((2.5 + 0.5 * (u(rng) + 1.0)) * (u(rng) < 0 ? -1.0 : 1.0));
      a[pos] = T(u(rng));
      c[pos] = T(u(rng));
      // Non-periodic lines never read a[0] and c[n-1]: poison them.
      if (!periodic && i == 0) a[pos] = std::numeric_limits<T>::quiet_NaN();
      if (!periodic && i == l.n - 1) c[pos] = std::numeric_limits<T>::quiet_NaN();
    };
    if (shared) {
      for (index_t i = 0; i < l.n; ++i) fill(i, i);
    } else {
      for_each([&](index_t, index_t i, index_t pos) { fill(i, pos); });
    }
  }
  // f(line, i, buffer position) for every element of every line.
  template <class F>
  void for_each(F&& f) const {
    for (index_t line = 0; line < lines.lines(); ++line)
      for (index_t i = 0; i < lines.n; ++i) f(line, i, kBefore + lines.offset(line) + i * lines.stride);
  }
  adi::Bands<T> bands() const { return {a.data() + kBefore, b.data() + kBefore, c.data() + kBefore}; }
  adi::SharedBands<T> shared_bands() const { return {a.data(), b.data(), c.data()}; }

  // The fp64 oracle on these exact inputs.
  std::vector<double> expected() const {
    auto wide = [](const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); };
    const std::vector<double> ad = wide(a), bd = wide(b), cd = wide(c), dd = wide(d);
    std::vector<double> x(d.size(), 0.0);
    const index_t o = shared ? 0 : kBefore;
    const index_t bad = adi::reference::thomas(lines, ad.data() + o, bd.data() + o, cd.data() + o, shared,
                                               dd.data() + kBefore, x.data() + kBefore, periodic);
    EXPECT_EQ(bad, -1) << "the generated system should be regular";
    return x;
  }
};

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-12;
}

struct Case {
  Kernel kernel;
  Layout layout;
  bool is_float;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << adi::kernel_name(c.kernel) << " on " << layout_name(c.layout)
      << (c.is_float ? " in float" : " in double");
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::string(adi::kernel_name(info.param.kernel)) + "_" + layout_name(info.param.layout) + "_" +
         (info.param.is_float ? "float" : "double");
}

class HostKernel : public testing::TestWithParam<Case> {
 protected:
  template <class T>
  void run_one(const AnyLayout& layout, bool shared, bool periodic, bool in_place, std::mt19937_64& rng,
               const adi::Executor& exec = adi::Executor::host()) {
    const Kernel k = GetParam().kernel;
    const LineSet l = lines_of(layout);
    SCOPED_TRACE(testing::Message() << "n = " << l.n << ", lines = " << l.lines() << " (count0 = " << l.count0
                                    << ", count1 = " << l.count1 << "), stride = " << l.stride
                                    << ", shared = " << shared << ", periodic = " << periodic
                                    << ", in place = " << in_place);
    const Data<T> data(l, shared, periodic, rng);
    const std::vector<double> x = data.expected();

    adi::TridiagonalOptions opt;
    opt.periodic = periodic;
    opt.kernel = k;
    adi::TridiagonalPlan<T> plan =
        std::visit([&](const auto& lay) { return adi::TridiagonalPlan<T>(exec, lay, opt); }, layout);
    ASSERT_EQ(plan.kernel(), k);

    const std::vector<T> d_before = data.d;
    // Output poisoned with NaN on the lines, sentinels in the padding.
    std::vector<T> out = data.d;
    if (!in_place)
      data.for_each([&](index_t, index_t, index_t pos) { out[pos] = std::numeric_limits<T>::quiet_NaN(); });
    const T* d = in_place ? out.data() + kBefore : data.d.data() + kBefore;
    if (shared)
      plan.solve(data.shared_bands(), d, out.data() + kBefore);
    else
      plan.solve(data.bands(), d, out.data() + kBefore);

    double worst = 0.0;
    index_t bad_pos = -1;
    for (index_t line = 0; line < l.lines(); ++line) {
      double scale = 0.0, err = 0.0;
      index_t pos_max = -1;
      for (index_t i = 0; i < l.n; ++i) {
        const index_t pos = kBefore + l.offset(line) + i * l.stride;
        scale = std::max(scale, std::abs(x[pos]));
        const double e = std::abs(double(out[pos]) - x[pos]);
        if (!(e <= err)) {  // NaN counts as the worst
          err = std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
          pos_max = pos;
        }
      }
      const double rel = err / std::max(scale, 1e-300);
      if (!(rel <= worst)) {
        worst = rel;
        bad_pos = pos_max;
      }
    }
    EXPECT_LE(worst, tolerance<T>()) << "worst line error at buffer position " << bad_pos;
    std::size_t padding_changed = 0;
    for (std::size_t pos = 0; pos < out.size(); ++pos)
      if (!data.on_line[pos] && !same_bits(out[pos], sentinel<T>())) ++padding_changed;
    EXPECT_EQ(padding_changed, 0u) << "elements outside the lines were written";
    if (!in_place) {  // d is input only
      std::size_t d_changed = 0;
      for (std::size_t pos = 0; pos < out.size(); ++pos) d_changed += !same_bits(data.d[pos], d_before[pos]);
      EXPECT_EQ(d_changed, 0u) << "d was written";
    }
  }

  template <class T>
  void run_all() {
    const Case c = GetParam();
    std::mt19937_64 rng(0x5eed + static_cast<unsigned>(c.kernel) * 131 + static_cast<unsigned>(c.layout) * 7 +
                        c.is_float);
    const bool flags[] = {false, true};
    if (is_box(c.layout)) {
      for (const Box3& box : kBoxes)
        for (bool shared : flags)
          for (bool periodic : flags)
            for (bool in_place : flags)
              run_one<T>(make_layout(c.layout, 0, 0, box), shared, periodic, in_place, rng);
      return;
    }
    int combo = 0;
    for (index_t n : kSizes)
      for (index_t count : kCounts)
        for (bool shared : flags)
          for (bool periodic : flags) {
            // In place on every other combination: each (n, count, shared, periodic)
            // runs once, and both in-place and out-of-place meet every size.
            const bool in_place = (combo++ + n) % 2 == 1;
            run_one<T>(make_layout(c.layout, n, count, Box3{}), shared, periodic, in_place, rng);
          }
  }
};

TEST_P(HostKernel, MatchesReference) {
  if (GetParam().is_float)
    run_all<float>();
  else
    run_all<double>();
}

std::vector<Case> all_cases() {
  const Layout every[] = {Layout::contiguous,  Layout::padded_rows, Layout::strided, Layout::adjacent,
                          Layout::interleaved, Layout::box_x,       Layout::box_y,   Layout::box_z};
  const Layout stride_one[] = {Layout::contiguous, Layout::padded_rows, Layout::box_x};
  const Layout adjacent[] = {Layout::adjacent, Layout::interleaved, Layout::box_y, Layout::box_z};
  std::vector<Case> v;
  for (bool f : {false, true}) {
    for (Layout l : every) v.push_back({Kernel::cpu_thomas, l, f});
    for (Layout l : stride_one) v.push_back({Kernel::cpu_thomas_transpose, l, f});
    for (Layout l : adjacent) v.push_back({Kernel::cpu_thomas_vector, l, f});
    for (Layout l : {Layout::contiguous, Layout::strided, Layout::box_y})
      v.push_back({Kernel::reference, l, f});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Host, HostKernel, testing::ValuesIn(all_cases()), case_name);

// The automatic choice on every layout also matches (whatever kernel it picks).
TEST(HostAutomatic, EveryLayoutMatchesReference) {
  std::mt19937_64 rng(42);
  for (Layout l : {Layout::contiguous, Layout::padded_rows, Layout::strided, Layout::adjacent,
                   Layout::interleaved, Layout::box_x, Layout::box_y, Layout::box_z}) {
    SCOPED_TRACE(layout_name(l));
    const AnyLayout lay = make_layout(l, 45, 21, kBoxes[0]);
    const LineSet ls = lines_of(lay);
    for (bool periodic : {false, true}) {
      Data<double> data(ls, false, periodic, rng);
      const std::vector<double> x = data.expected();
      adi::TridiagonalOptions opt;
      opt.periodic = periodic;
      auto plan = std::visit(
          [&](const auto& y) { return adi::TridiagonalPlan<double>(adi::Executor::host(), y, opt); }, lay);
      EXPECT_NE(plan.kernel(), Kernel::automatic);
      std::vector<double> out(data.d.size(), std::numeric_limits<double>::quiet_NaN());
      plan.solve(data.bands(), data.d.data() + kBefore, out.data() + kBefore);
      data.for_each([&](index_t, index_t, index_t pos) { ASSERT_NEAR(out[pos], x[pos], 1e-12); });
    }
  }
}

// The oracle against an Eigen dense LU (with the periodic corners in the matrix).
TEST(ReferenceOracle, MatchesEigenDenseSolve) {
  std::mt19937_64 rng(7);
  for (index_t n : {1, 2, 3, 4, 7, 33, 257})
    for (bool periodic : {false, true})
      for (bool shared : {false, true}) {
        SCOPED_TRACE(testing::Message()
                     << "n = " << n << ", periodic = " << periodic << ", shared = " << shared);
        const LineSet l = adi::to_lines(adi::StridedLines{n, 3, 2, 2 * n + 1});
        Data<double> data(l, shared, periodic, rng);
        const std::vector<double> x = data.expected();
        for (index_t line = 0; line < l.lines(); ++line) {
          const index_t o = kBefore + l.offset(line);
          auto pos = [&](index_t i) { return o + i * l.stride; };
          auto coef = [&](const std::vector<double>& v, index_t i) { return shared ? v[i] : v[pos(i)]; };
          Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
          Eigen::VectorXd rhs(n);
          for (index_t i = 0; i < n; ++i) {
            m(i, i) += coef(data.b, i);
            if (i > 0) m(i, i - 1) += coef(data.a, i);
            if (i + 1 < n) m(i, i + 1) += coef(data.c, i);
            rhs(i) = data.d[pos(i)];
          }
          if (periodic) {  // a[0] multiplies u[n-1] in row 0, c[n-1] multiplies u[0] in row n-1
            m(0, n - 1) += coef(data.a, 0);
            m(n - 1, 0) += coef(data.c, n - 1);
          }
          const Eigen::VectorXd want = m.partialPivLu().solve(rhs);
          for (index_t i = 0; i < n; ++i) EXPECT_NEAR(x[pos(i)], want(i), 1e-12 * (1.0 + std::abs(want(i))));
        }
      }
}

// More threads than processors, and OpenMP's thread count raised after the plan was
// built: the per-thread scratch must still cover every thread that runs.
// The box is large enough (200k elements) for the kernels to use several threads.
TEST(HostThreads, ThreadCountsAndLateOmpChanges) {
  std::mt19937_64 rng(3);
  const Box3 box = padded(83, 50, 49);
  for (int threads : {1, 3, 0})
    for (Kernel k : {Kernel::automatic, Kernel::cpu_thomas})
      for (adi::Axis axis : {adi::Axis::x, adi::Axis::y, adi::Axis::z})
        for (bool shared : {false, true}) {
          SCOPED_TRACE(testing::Message() << "threads = " << threads << ", " << adi::kernel_name(k)
                                          << ", axis " << adi::axis_name(axis) << ", shared = " << shared);
          const adi::BoxLines lay{box, axis};
          Data<double> data(adi::to_lines(lay), shared, true, rng);
          const std::vector<double> x = data.expected();
          adi::TridiagonalOptions opt;
          opt.periodic = true;
          opt.kernel = k;
          adi::TridiagonalPlan<double> plan(adi::Executor::host(threads), lay, opt);
          const int before = omp_get_max_threads();
          omp_set_num_threads(8);
          std::vector<double> out(data.d.size(), sentinel<double>());
          data.for_each(
              [&](index_t, index_t, index_t pos) { out[pos] = std::numeric_limits<double>::quiet_NaN(); });
          if (shared)
            plan.solve(data.shared_bands(), data.d.data() + kBefore, out.data() + kBefore);
          else
            plan.solve(data.bands(), data.d.data() + kBefore, out.data() + kBefore);
          omp_set_num_threads(before);
          data.for_each([&](index_t, index_t, index_t pos) { ASSERT_NEAR(out[pos], x[pos], 1e-12); });
          for (std::size_t pos = 0; pos < out.size(); ++pos)
            if (!data.on_line[pos]) ASSERT_TRUE(same_bits(out[pos], sentinel<double>())) << pos;
        }
}

// A singular line throws SingularSystem naming that line and the kernel; unchecked
// solves do not throw and leave non-finite values in it.
TEST(HostPivots, SingularSystemThrows) {
  std::mt19937_64 rng(11);
  const Kernel kernels[] = {Kernel::reference, Kernel::cpu_thomas, Kernel::cpu_thomas_transpose,
                            Kernel::cpu_thomas_vector};
  for (Kernel k : kernels)
    for (bool periodic : {false, true})
      for (index_t n : {1, 2, 5, 40}) {
        SCOPED_TRACE(testing::Message()
                     << adi::kernel_name(k) << ", periodic = " << periodic << ", n = " << n);
        // 19 lines, adjacent for the vector kernel and contiguous otherwise.
        const adi::StridedLines lay = k == Kernel::cpu_thomas_vector ? adi::StridedLines{n, 19, 19, 1}
                                                                     : adi::StridedLines::contiguous(n, 19);
        const LineSet l = adi::to_lines(lay);
        Data<double> data(l, false, periodic, rng);
        // Line 13 singular: a zero row (and zero corners) makes every method's pivot 0.
        const index_t row = n / 2;
        const index_t pos = kBefore + l.offset(13) + row * l.stride;
        data.a[pos] = data.b[pos] = data.c[pos] = 0.0;
        if (periodic) data.b[kBefore + l.offset(13)] = 0.0;  // gamma = -b0 = 0: no Sherman-Morrison
        adi::TridiagonalOptions opt;
        opt.periodic = periodic;
        opt.kernel = k;
        adi::TridiagonalPlan<double> plan(adi::Executor::host(), lay, opt);
        std::vector<double> out(data.d.size(), 0.0);
        try {
          plan.solve(data.bands(), data.d.data() + kBefore, out.data() + kBefore);
          ADD_FAILURE() << "no SingularSystem thrown";
        } catch (const adi::SingularSystem& e) {
          const std::string msg = e.what();
          EXPECT_NE(msg.find("line 13 "), std::string::npos) << msg;
          EXPECT_NE(msg.find(adi::kernel_name(k)), std::string::npos) << msg;
        }
        opt.check_pivots = false;
        adi::TridiagonalPlan<double> unchecked(adi::Executor::host(), lay, opt);
        std::fill(out.begin(), out.end(), 0.0);
        EXPECT_NO_THROW(unchecked.solve(data.bands(), data.d.data() + kBefore, out.data() + kBefore));
        bool any_non_finite = false;
        for (index_t i = 0; i < n; ++i)
          any_non_finite |= !std::isfinite(out[kBefore + l.offset(13) + i * l.stride]);
        EXPECT_TRUE(any_non_finite) << "an unchecked singular line should not look like a solution";
      }
}

// Shared bands: a singular factorisation is every line's, reported as line 0; a NaN
// in one line's d is not a pivot problem.
TEST(HostPivots, SharedBandsAndNonFiniteRightHandSide) {
  std::mt19937_64 rng(5);
  for (Kernel k : {Kernel::cpu_thomas, Kernel::cpu_thomas_transpose, Kernel::cpu_thomas_vector}) {
    SCOPED_TRACE(adi::kernel_name(k));
    const adi::InterleavedBatch inter{30, 9};
    const adi::StridedLines contiguous = adi::StridedLines::contiguous(30, 9);
    const LineSet l = k == Kernel::cpu_thomas_vector ? adi::to_lines(inter) : adi::to_lines(contiguous);
    Data<float> data(l, true, false, rng);
    adi::TridiagonalOptions opt;
    opt.kernel = k;
    auto make = [&] {
      return k == Kernel::cpu_thomas_vector
                 ? adi::TridiagonalPlan<float>(adi::Executor::host(), inter, opt)
                 : adi::TridiagonalPlan<float>(adi::Executor::host(), contiguous, opt);
    };
    adi::TridiagonalPlan<float> plan = make();
    std::vector<float> out(data.d.size(), 0.0f);
    data.d[kBefore + l.offset(4)] = std::numeric_limits<float>::infinity();
    EXPECT_NO_THROW(plan.solve(data.shared_bands(), data.d.data() + kBefore, out.data() + kBefore));
    data.b[7] = data.a[7] = data.c[7] = 0.0f;
    try {
      plan.solve(data.shared_bands(), data.d.data() + kBefore, out.data() + kBefore);
      ADD_FAILURE() << "no SingularSystem thrown";
    } catch (const adi::SingularSystem& e) {
      EXPECT_NE(std::string(e.what()).find("line 0 "), std::string::npos) << e.what();
    }
  }
}

// cpu_thomas_vector writes u with non-temporal stores where u is large and every vector
// aligned. Forced here (threshold 0) on 64-byte aligned dense boxes whose rows and planes
// keep that alignment, with line counts that leave narrower tail groups (normal stores)
// beside the full ones: Y and Z sweeps, odd n, both precisions, shared bands, periodic,
// in place, against the fp64 reference, u poisoned with NaN and guarded on both sides.
template <class T>
void stream_case(adi::Axis axis, const Box3& box, bool shared, bool periodic, bool in_place, std::mt19937_64& rng) {
  const adi::BoxLines lay{box, axis};
  const LineSet l = adi::to_lines(lay);
  SCOPED_TRACE(testing::Message() << "axis " << adi::axis_name(axis) << ", box " << box.nx << " x " << box.ny
                                  << " x " << box.nz << ", shared = " << shared << ", periodic = " << periodic
                                  << ", in place = " << in_place);
  const std::size_t size = static_cast<std::size_t>(box.size()), guard = 64;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t csize = shared ? static_cast<std::size_t>(l.n) : size;
  std::vector<double> a(csize), b(csize), c(csize), d(size), x(size);
  for (std::size_t i = 0; i < csize; ++i) {
    b[i] = (2.5 + 0.5 * (u(rng) + 1.0)) * (u(rng) < 0 ? -1.0 : 1.0);
    a[i] = u(rng);
    c[i] = u(rng);
  }
  for (double& v : d) v = u(rng);
  ASSERT_EQ(adi::reference::thomas(l, a.data(), b.data(), c.data(), shared, d.data(), x.data(), periodic), -1);
  // 64-byte aligned arrays of T inside guarded buffers.
  auto aligned = [&](std::vector<T>& buf) {
    buf.assign(size + 2 * guard + 64, sentinel<T>());
    T* p = buf.data() + guard;
    while (reinterpret_cast<std::uintptr_t>(p) % 64) ++p;
    return p;
  };
  std::vector<T> ab, bb, cb, db, ub;
  T* pa = aligned(ab);
  T* pb = aligned(bb);
  T* pc = aligned(cb);
  T* pd = aligned(db);
  T* pu = aligned(ub);
  for (std::size_t i = 0; i < csize; ++i) {
    pa[i] = T(a[i]);
    pb[i] = T(b[i]);
    pc[i] = T(c[i]);
  }
  for (std::size_t i = 0; i < size; ++i) {
    pd[i] = T(d[i]);
    pu[i] = in_place ? pd[i] : std::numeric_limits<T>::quiet_NaN();
  }
  std::vector<double> expect = x;
  if (!std::is_same_v<T, double>) {  // the reference on the rounded inputs
    std::vector<double> ra(csize), rb(csize), rc(csize), rd(size);
    for (std::size_t i = 0; i < csize; ++i) {
      ra[i] = double(pa[i]);
      rb[i] = double(pb[i]);
      rc[i] = double(pc[i]);
    }
    for (std::size_t i = 0; i < size; ++i) rd[i] = double(pd[i]);
    adi::reference::thomas(l, ra.data(), rb.data(), rc.data(), shared, rd.data(), expect.data(), periodic);
  }
  adi::TridiagonalOptions opt;
  opt.periodic = periodic;
  opt.kernel = Kernel::cpu_thomas_vector;
  adi::TridiagonalPlan<T> plan(adi::Executor::host(), lay, opt);
  T* out = in_place ? pd : pu;
  if (shared)
    plan.solve(adi::SharedBands<T>{pa, pb, pc}, pd, out);
  else
    plan.solve(adi::Bands<T>{pa, pb, pc}, pd, out);
  double worst = 0.0;
  for (index_t line = 0; line < l.lines(); ++line) {
    double scale = 0.0, err = 0.0;
    for (index_t i = 0; i < l.n; ++i) {
      const index_t pos = l.offset(line) + i * l.stride;
      scale = std::max(scale, std::abs(expect[pos]));
      const double e = std::abs(double(out[pos]) - expect[pos]);
      err = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(err, e);
    }
    worst = std::max(worst, err / std::max(scale, 1e-300));
  }
  EXPECT_LE(worst, tolerance<T>());
  std::vector<T>& written = in_place ? db : ub;
  const T* first = in_place ? pd : pu;
  std::size_t guards_changed = 0;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const T* q = written.data() + i;
    if ((q < first || q >= first + size) && !same_bits(*q, sentinel<T>())) ++guards_changed;
  }
  EXPECT_EQ(guards_changed, 0u) << "elements outside u were written";
}

TEST(HostVectorStream, AlignedSweepsMatchReference) {
  struct Threshold {  // non-temporal stores for every size in this test
    std::size_t saved = adi::cpu::detail::set_thomas_vector_stream_bytes_for_testing(0);
    ~Threshold() { adi::cpu::detail::set_thomas_vector_stream_bytes_for_testing(saved); }
  } threshold;
  std::mt19937_64 rng(29);
  const bool flags[] = {false, true};
  for (index_t n : {1, 2, 3, 31, 33, 255, 257}) {
    // x-rows of 48 and 56 values (56 = 3 x 16 + 8: a narrower tail group): rows and
    // planes stay 64-byte aligned for both precisions.
    const Box3 boxes[] = {Box3::dense(48, n, 3), Box3::dense(56, n, 2), Box3::dense(48, 3, n),
                          Box3::dense(56, 2, n)};
    for (int k = 0; k < 4; ++k) {
      const adi::Axis axis = k < 2 ? adi::Axis::y : adi::Axis::z;
      for (bool shared : flags)
        for (bool periodic : flags)
          for (bool in_place : flags) {
            stream_case<float>(axis, boxes[k], shared, periodic, in_place, rng);
            stream_case<double>(axis, boxes[k], shared, periodic, in_place, rng);
          }
    }
  }
}

// The one-shot entry point is the plan's solve.
TEST(HostOneShot, SolveTridiagonal) {
  std::mt19937_64 rng(9);
  const adi::BoxLines lay{kBoxes[1], adi::Axis::z};
  Data<double> data(adi::to_lines(lay), false, false, rng);
  const std::vector<double> x = data.expected();
  std::vector<double> out = data.d;
  adi::solve_tridiagonal(adi::Executor::host(2), lay, data.bands(), out.data() + kBefore,
                         out.data() + kBefore);
  data.for_each([&](index_t, index_t, index_t pos) { ASSERT_NEAR(out[pos], x[pos], 1e-12); });
}

}  // namespace
