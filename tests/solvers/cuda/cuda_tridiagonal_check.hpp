#pragma once
// Test machinery for the CUDA tridiagonal kernels: builds a random, diagonally
// dominant batch in a padded layout with an offset base pointer, solves it on the
// device with one forced kernel, and compares every element with the fp64 reference
// (solvers/reference/thomas.hpp). Elements that belong to no line must come back
// untouched (u is NaN-poisoned; in place, d's values), and non-periodic lines carry NaN
// in a[0] and c[n-1], which the kernels must never read into the result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/layout.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/reference/thomas.hpp"


namespace adi::test_cuda {

struct Case {
  LineSet lines;
  bool shared = false;  // SharedBands
  bool periodic = false;
  bool in_place = false;
  index_t base = 0;  // offset of the first element from the allocation (unaligned starts)
  std::uint32_t seed = 1;
  // Non-default launch shape: solved through the backend entry point (no plan, no pivot flag).
  const cuda_backend::Tuning* tuning = nullptr;
};

inline std::string describe(const Case& c) {
  const LineSet& l = c.lines;
  const std::string tune = c.tuning ? " tuning(lines=" + std::to_string(c.tuning->lines_per_block) +
                                          " warps=" + std::to_string(c.tuning->warps_per_block) +
                                          " rows=" + std::to_string(c.tuning->rows_per_thread) +
                                          " prefetch=" + std::to_string(c.tuning->prefetch) +
                                          " cluster=" + std::to_string(c.tuning->cluster) + ")"
                                    : "";
  return tune + " n=" + std::to_string(l.n) + " stride=" + std::to_string(l.stride) +
         " count0=" + std::to_string(l.count0) + " stride0=" + std::to_string(l.stride0) +
         " count1=" + std::to_string(l.count1) + " stride1=" + std::to_string(l.stride1) +
         " base=" + std::to_string(c.base) + (c.shared ? " shared" : " bands") +
         (c.periodic ? " periodic" : "") + (c.in_place ? " in-place" : "");
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// Solves `c` with `kernel` (or the dispatch table's choice) on device 0 and checks it
// against the reference.
template <class T>
void check(Kernel kernel, const Case& c) {
  SCOPED_TRACE(std::string(kernel_name(kernel)) + " " + (sizeof(T) == 4 ? "float " : "double ") +
               describe(c));
  const LineSet& l = c.lines;
  const index_t total = c.base + l.span() + 5;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);

  std::vector<char> on_line(static_cast<std::size_t>(total), 0);
  for (index_t line = 0; line < l.lines(); ++line)
    for (index_t i = 0; i < l.n; ++i) on_line[c.base + l.offset(line) + i * l.stride] = 1;

  const index_t coef_size = c.shared ? l.n : total;
  std::vector<T> a(coef_size, nan), b(coef_size, nan), cc(coef_size, nan), d(total);
  auto fill_row = [&](index_t k, index_t i) {
    a[k] = static_cast<T>(U(rng));
    cc[k] = static_cast<T>(U(rng));
    const double mag = std::abs(double(a[k])) + std::abs(double(cc[k])) + 0.5 + 0.5 * std::abs(U(rng));
    b[k] = static_cast<T>(U(rng) < 0 ? -mag : mag);
    if (!c.periodic && i == 0) a[k] = nan;         // never read
    if (!c.periodic && i == l.n - 1) cc[k] = nan;  // never read
  };
  if (c.shared) {
    for (index_t i = 0; i < l.n; ++i) fill_row(i, i);
  } else {
    for (index_t line = 0; line < l.lines(); ++line)
      for (index_t i = 0; i < l.n; ++i) fill_row(c.base + l.offset(line) + i * l.stride, i);
  }
  for (index_t k = 0; k < total; ++k) d[k] = on_line[k] ? static_cast<T>(U(rng)) : static_cast<T>(1234.5 + k);

  // Reference in fp64 arithmetic on the host.
  std::vector<T> ref(total, nan);
  const T* pa = c.shared ? a.data() : a.data() + c.base;
  const T* pb = c.shared ? b.data() : b.data() + c.base;
  const T* pc = c.shared ? cc.data() : cc.data() + c.base;
  ASSERT_EQ(reference::thomas<T>(l, pa, pb, pc, c.shared, d.data() + c.base, ref.data() + c.base, c.periodic),
            -1)
      << "the generated system should be solvable";

  const Executor gpu = Executor::cuda();
  Array<T> da(coef_size, gpu), db(coef_size, gpu), dc(coef_size, gpu), dd(total, gpu), du(total, gpu);
  da.copy_from_host(a.data());
  db.copy_from_host(b.data());
  dc.copy_from_host(cc.data());
  dd.copy_from_host(d.data());
  std::vector<T> poison(total, nan);
  du.copy_from_host(poison.data());

  const index_t coef_base = c.shared ? 0 : c.base;
  T* out = c.in_place ? dd.data() + c.base : du.data() + c.base;
  if (c.tuning) {
    const std::size_t bytes = cuda_backend::tridiagonal_workspace_bytes(kernel, l, c.periodic, sizeof(T));
    Array<char> ws(static_cast<index_t>(bytes) + 1, gpu);
    cuda_backend::tridiagonal_solve_tuned<T>(
        kernel, l,
        cuda_backend::BandView<T>{da.data() + coef_base, db.data() + coef_base, dc.data() + coef_base,
                                  c.shared},
        dd.data() + c.base, out, c.periodic, ws.data(), nullptr, nullptr, *c.tuning);
    gpu.synchronize();
  } else {
    TridiagonalOptions opt;
    opt.periodic = c.periodic;
    opt.kernel = kernel;
    TridiagonalPlan<T> plan(gpu, l, opt);
    if (kernel != Kernel::automatic) ASSERT_EQ(plan.kernel(), kernel);
    if (c.shared)
      plan.solve(SharedBands<T>{da.data(), db.data(), dc.data()}, dd.data() + c.base, out);
    else
      plan.solve(Bands<T>{da.data() + coef_base, db.data() + coef_base, dc.data() + coef_base},
                 dd.data() + c.base, out);
  }
  std::vector<T> u(total);
  (c.in_place ? dd : du).copy_to_host(u.data());

  double scale = 0.0;
  for (index_t k = 0; k < total; ++k)
    if (on_line[k]) scale = std::max(scale, std::abs(double(ref[k])));
  const double tol = (sizeof(T) == 4 ? 2e-5 : 1e-12) * std::max(scale, 1.0);
  index_t wrong = 0, first = -1;
  for (index_t k = 0; k < total; ++k) {
    bool ok;
    if (on_line[k])
      ok = std::isfinite(double(u[k])) && std::abs(double(u[k]) - double(ref[k])) <= tol;
    else
      ok = same_bits(u[k], c.in_place ? d[k] : nan);
    if (!ok && wrong++ == 0) first = k;
  }
  EXPECT_EQ(wrong, 0) << "first bad element " << first
                      << (first >= 0 && on_line[first] ? " (on a line)" : " (padding)") << ": got "
                      << (first >= 0 ? double(u[first]) : 0.0) << ", want "
                      << (first >= 0 ? (on_line[first] ? double(ref[first]) : double(d[first])) : 0.0);
}

// Layout families.
// Contiguous lines (X sweeps, gtsv2StridedBatch): rows padded by 3 elements, and the
// lines split into count1 groups when there are several (two strides to walk).
// Counts divisible by 3 become 3 groups (count1 = 3), so both line strides are walked.
inline LineSet contiguous(index_t n, index_t count) {
  const index_t count1 = count % 3 == 0 ? 3 : 1;
  const index_t count0 = count / count1;
  return {n, 1, count0, n + 3, count1, count0 * (n + 3) + 11};
}
// Lines adjacent in memory (Y/Z sweeps, interleaved batches), rows of the batch padded.
inline LineSet adjacent(index_t n, index_t count) {
  const index_t count1 = count % 3 == 0 ? 3 : 1;
  const index_t count0 = count / count1;
  return {n, count0 + 5, count0, 1, count1, n * (count0 + 5) + 2};
}

enum class Family { contiguous, adjacent };

inline LineSet make(Family f, index_t n, index_t count) {
  return f == Family::contiguous ? contiguous(n, count) : adjacent(n, count);
}

// The size sweep of the issue: n in {1..1000} x counts {1, 7, 33, 1032}, Bands and
// SharedBands, periodic or not.
template <class T>
void sweep(Kernel kernel, Family family) {
  const index_t sizes[] = {1, 2, 3, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000};
  const index_t counts[] = {1, 7, 33, 1032};
  std::uint32_t seed = 11;
  for (index_t n : sizes)
    for (index_t count : counts) {
      for (int shared = 0; shared < 2; ++shared)
        for (int periodic = 0; periodic < 2; ++periodic) {
          Case c;
          c.lines = make(family, n, count);
          c.shared = shared;
          c.periodic = periodic;
          c.base = 1 + (seed % 3);
          c.seed = seed++;
          check<T>(kernel, c);
          if (::testing::Test::HasFailure()) return;  // one failure explains the rest
        }
    }
}

// Every launch shape the benchmark's tuning rows try, on lines short and long enough to
// reach each code path, against the reference.
template <class T>
void launch_shapes(Kernel kernel, Family family, const std::vector<cuda_backend::Tuning>& shapes) {
  std::uint32_t seed = 700;
  for (const cuda_backend::Tuning& t : shapes)
    for (index_t n : {5, 100, 256})
      for (int shared = 0; shared < 2; ++shared)
        for (int periodic = 0; periodic < 2; ++periodic) {
          Case c;
          c.lines = make(family, n, 75);
          c.shared = shared;
          c.periodic = periodic;
          c.base = 1;
          c.seed = seed++;
          c.tuning = &t;
          check<T>(kernel, c);
          if (::testing::Test::HasFailure()) return;
        }
}

// All axes of a non-cubic box with padded rows and planes and an offset base pointer.
inline Box3 padded_box() {
  Box3 b;
  b.nx = 37;
  b.ny = 64;
  b.nz = 19;
  b.sy = 40;
  b.sz = 40 * 64 + 24;
  return b;
}

template <class T>
void box_axes(Kernel kernel, std::initializer_list<Axis> axes) {
  std::uint32_t seed = 101;
  for (Axis ax : axes)
    for (int shared = 0; shared < 2; ++shared)
      for (int periodic = 0; periodic < 2; ++periodic) {
        Case c;
        c.lines = to_lines(BoxLines{padded_box(), ax});
        c.shared = shared;
        c.periodic = periodic;
        c.base = 3;
        c.seed = seed++;
        check<T>(kernel, c);
      }
}

template <class T>
void in_place(Kernel kernel, Family family) {
  for (index_t n : {5, 256, 1000})
    for (int shared = 0; shared < 2; ++shared)
      for (int periodic = 0; periodic < 2; ++periodic) {
        Case c;
        c.lines = make(family, n, 40);
        c.shared = shared;
        c.periodic = periodic;
        c.in_place = true;
        c.base = 2;
        c.seed = static_cast<std::uint32_t>(n * 4 + shared * 2 + periodic);
        check<T>(kernel, c);
      }
}

// A zero pivot in one line must surface as SingularSystem.
template <class T>
void singular(Kernel kernel, Family family, bool shared) {
  const LineSet l = make(family, 64, 40);
  const index_t total = l.span();
  const index_t coef = shared ? l.n : total;
  std::vector<T> a(coef, T(0.25)), b(coef, T(2)), c(coef, T(0.25)), d(total, T(1));
  if (shared)
    b[0] = T(0);
  else
    b[l.offset(17)] = T(0);  // first pivot of line 17
  const Executor gpu = Executor::cuda();
  Array<T> da(coef, gpu), db(coef, gpu), dc(coef, gpu), dd(total, gpu), du(total, gpu);
  da.copy_from_host(a.data());
  db.copy_from_host(b.data());
  dc.copy_from_host(c.data());
  dd.copy_from_host(d.data());
  TridiagonalOptions opt;
  opt.kernel = kernel;
  opt.pivoting = Pivoting::none;  // automatic would solve it by pivoting (docs/pivoting.md)
  TridiagonalPlan<T> plan(gpu, l, opt);
  if (shared)
    EXPECT_THROW(plan.solve(SharedBands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data()),
                 SingularSystem);
  else
    EXPECT_THROW(plan.solve(Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data()), SingularSystem);
  // The same plan then solves a healthy system (the flag is reset per solve).
  b.assign(coef, T(2));
  db.copy_from_host(b.data());
  if (shared)
    EXPECT_NO_THROW(plan.solve(SharedBands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data()));
  else
    EXPECT_NO_THROW(plan.solve(Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), du.data()));
}

}  // namespace adi::test_cuda

// One suite per kernel: the same checks, instantiated by each test file.
#define ADI_CUDA_TRIDIAGONAL_SUITE(Suite, kernel, family, ...)        \
  TEST(Suite, SizesAndCountsFloat) {                                  \
    ADI_REQUIRE_CUDA();                                               \
    adi::test_cuda::sweep<float>(kernel, family);                     \
  }                                                                   \
  TEST(Suite, SizesAndCountsDouble) {                                 \
    ADI_REQUIRE_CUDA();                                               \
    adi::test_cuda::sweep<double>(kernel, family);                    \
  }                                                                   \
  TEST(Suite, PaddedBoxAxes) {                                        \
    ADI_REQUIRE_CUDA();                                               \
    adi::test_cuda::box_axes<float>(kernel, {__VA_ARGS__});           \
    adi::test_cuda::box_axes<double>(kernel, {__VA_ARGS__});          \
  }                                                                   \
  TEST(Suite, InPlace) {                                              \
    ADI_REQUIRE_CUDA();                                               \
    adi::test_cuda::in_place<float>(kernel, family);                  \
    adi::test_cuda::in_place<double>(kernel, family);                 \
  }                                                                   \
  TEST(Suite, ZeroPivotThrows) {                                      \
    ADI_REQUIRE_CUDA();                                               \
    adi::test_cuda::singular<float>(kernel, family, false);           \
    adi::test_cuda::singular<double>(kernel, family, true);           \
  }                                                                   \
  TEST(Suite, Small) { /* the sanitizer's case: a few small solves */ \
    ADI_REQUIRE_CUDA();                                               \
    for (adi::index_t n : {3, 33, 65}) {                              \
      adi::test_cuda::Case c;                                         \
      c.lines = adi::test_cuda::make(family, n, 9);                   \
      c.base = 1;                                                     \
      for (int s = 0; s < 2; ++s)                                     \
        for (int p = 0; p < 2; ++p) {                                 \
          c.shared = s;                                               \
          c.periodic = p;                                             \
          adi::test_cuda::check<float>(kernel, c);                    \
          adi::test_cuda::check<double>(kernel, c);                   \
        }                                                             \
    }                                                                 \
  }
