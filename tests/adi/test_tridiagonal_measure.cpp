// TridiagonalOptions::measure: the plan times its candidate kernels once per shape, keeps the
// fastest (a kernel that can run the layout), caches the choice in the process, and solves
// like any other plan (checked against the fp64 reference kernel on the host).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/tridiagonal.hpp"
#include "gpu_skip.hpp"

namespace {

using adi::index_t;
using adi::Kernel;

template <class T>
struct Problem {
  std::vector<T> a, b, c, d;
  explicit Problem(std::size_t n, unsigned seed) : a(n), b(n), c(n), d(n) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> r(-1, 1);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = T(r(g));
      c[i] = T(r(g));
      b[i] = T(2.5 + std::abs(r(g)));
      d[i] = T(r(g));
    }
  }
};

// The fp64 reference solution of the same lines (host).
template <class T>
std::vector<double> reference(const adi::LineSet& l, const Problem<T>& p, bool shared, bool periodic) {
  const std::size_t n = p.d.size();
  std::vector<double> a(p.a.begin(), p.a.end()), b(p.b.begin(), p.b.end()), c(p.c.begin(), p.c.end());
  std::vector<double> d(p.d.begin(), p.d.end()), u(n, NAN);
  adi::TridiagonalOptions o;
  o.kernel = Kernel::reference;
  o.periodic = periodic;
  adi::TridiagonalPlan<double> plan(adi::Executor::host(), l, o);
  if (shared)
    plan.solve(adi::SharedBands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
  else
    plan.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
  return u;
}

template <class T>
double max_rel_error(const std::vector<T>& u, const std::vector<double>& ref) {
  double e = 0, s = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (!std::isfinite(static_cast<double>(u[i]))) return INFINITY;
    e = std::max(e, std::abs(static_cast<double>(u[i]) - ref[i]));
    s = std::max(s, std::abs(ref[i]));
  }
  return e / s;
}

// Builds a measured plan on exec for the box's axis, checks the choice and the solution.
template <class T>
void check_measured(const adi::Executor& exec, index_t nx, index_t ny, index_t nz, adi::Axis axis, bool periodic) {
  const adi::LineSet l = adi::to_lines(adi::BoxLines{adi::Box3::dense(nx, ny, nz), axis});
  adi::TridiagonalOptions o;
  o.measure = true;
  o.periodic = periodic;
  adi::TridiagonalPlan<T> plan(exec, l, o);
  const adi::KernelMeasurement& m = plan.measurement();
  EXPECT_TRUE(m.measured);
  if (!m.cached) {
    EXPECT_FALSE(m.timings.empty());
    EXPECT_GT(m.cost_ms, 0.0);
    // The kept kernel is the fastest of those timed, for each band kind.
    for (int sh = 0; sh < 2; ++sh) {
      const Kernel kept = sh ? plan.shared_bands_kernel() : plan.kernel();
      double kept_ms = -1, best = 1e300;
      for (const auto& t : m.timings) {
        if (t.shared_bands != (sh == 1)) continue;
        EXPECT_GE(t.ms, 0.0);
        best = std::min(best, t.ms);
        if (t.kernel == kept) kept_ms = t.ms;
      }
      EXPECT_EQ(kept_ms, best) << "kept " << adi::kernel_name(kept);
    }
  }
  const std::size_t n = static_cast<std::size_t>(l.span());
  const Problem<T> p(n, 7u + static_cast<unsigned>(nx * 31 + ny * 7 + nz));
  for (int sh = 0; sh < 2; ++sh) {
    std::vector<T> u(n, T(NAN));
    if (exec.is_host()) {
      if (sh)
        plan.solve(adi::SharedBands<T>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data());
      else
        plan.solve(adi::Bands<T>{p.a.data(), p.b.data(), p.c.data()}, p.d.data(), u.data());
    } else {
      const auto len = static_cast<index_t>(n);
      adi::Array<T> a(len, exec), b(len, exec), c(len, exec), d(len, exec), x(len, exec);
      a.copy_from_host(p.a.data());
      b.copy_from_host(p.b.data());
      c.copy_from_host(p.c.data());
      d.copy_from_host(p.d.data());
      x.copy_from_host(u.data());  // NaN-poisoned
      if (sh)
        plan.solve(adi::SharedBands<T>{a.data(), b.data(), c.data()}, d.data(), x.data());
      else
        plan.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), x.data());
      x.copy_to_host(u.data());
    }
    const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
    EXPECT_LT(max_rel_error(u, reference(l, p, sh == 1, periodic)), tol)
        << (sh ? "shared" : "per-line") << " bands, kernel "
        << adi::kernel_name(sh ? plan.shared_bands_kernel() : plan.kernel());
  }
  // A second plan of the same shape takes the cached choice.
  adi::TridiagonalPlan<T> again(exec, l, o);
  EXPECT_TRUE(again.measurement().cached);
  EXPECT_EQ(again.kernel(), plan.kernel());
  EXPECT_EQ(again.shared_bands_kernel(), plan.shared_bands_kernel());
  EXPECT_TRUE(again.measurement().timings.empty());
}

TEST(TridiagonalMeasure, HostEveryAxis) {
  const adi::Executor host = adi::Executor::host();
  for (adi::Axis ax : {adi::Axis::x, adi::Axis::y, adi::Axis::z}) {
    check_measured<double>(host, 33, 31, 9, ax, false);
    check_measured<float>(host, 33, 31, 9, ax, true);
  }
}

TEST(TridiagonalMeasure, OffWithoutOption) {
  adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::StridedLines::contiguous(5, 3));
  EXPECT_FALSE(plan.measurement().measured);
  EXPECT_TRUE(plan.measurement().timings.empty());
}

TEST(TridiagonalMeasure, ForcedKernelIsNotMeasured) {
  adi::TridiagonalOptions o;
  o.measure = true;
  o.kernel = Kernel::cpu_thomas;
  adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::StridedLines::contiguous(5, 3), o);
  EXPECT_FALSE(plan.measurement().measured);
  EXPECT_EQ(plan.kernel(), Kernel::cpu_thomas);
}

TEST(TridiagonalMeasureCuda, EveryAxisBothPrecisions) {
  ADI_REQUIRE_CUDA("the measured device dispatch");
  const adi::Executor gpu = adi::Executor::cuda();
  for (adi::Axis ax : {adi::Axis::x, adi::Axis::y, adi::Axis::z}) {
    check_measured<double>(gpu, 65, 33, 31, ax, false);
    check_measured<float>(gpu, 65, 33, 31, ax, false);
    check_measured<double>(gpu, 31, 257, 3, ax, true);
  }
}

}  // namespace
