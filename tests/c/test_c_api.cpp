// The C API (bindings/c/adi/adi_c.h) called as a C program would call it: every plan family
// (tridiagonal along each axis of a box, periodic, shared bands; block row- and column-major;
// variable-size; Cholesky; large; Hines; the heat solver), fp32 and fp64, results against
// plain fp64 references on random input with NaN-poisoned outputs, and every error path:
// bad sizes, NULL handles and arrays, singular systems with their system/row, the wrong
// precision, the wrong executor, thread-local error state. Device runs (adi_buffer) where a
// GPU is present; they skip loudly elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adi/adi_c.h"
// The one GPU skip (tests/gpu_skip.hpp), asking the C API whether there is a device.
#define ADI_TEST_CUDA_AVAILABLE() (adi_cuda_available() != 0)
#include "../gpu_skip.hpp"

namespace {

#define ASSERT_OK(call) ASSERT_EQ((call), ADI_SUCCESS) << adi_last_error_message()
#define EXPECT_OK(call) EXPECT_EQ((call), ADI_SUCCESS) << adi_last_error_message()

// Owns a handle and destroys it with its function.
template <class H, adi_status (*Destroy)(H*)>
struct Owned {
  H* h = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Destroy(h); }
  H** out() { return &h; }
  operator H*() const { return h; }
};
using Exec = Owned<adi_executor, adi_executor_destroy>;
using TriPlan = Owned<adi_tridiagonal_plan, adi_tridiagonal_plan_destroy>;
using BlockPlan = Owned<adi_block_plan, adi_block_plan_destroy>;
using VarPlan = Owned<adi_variable_plan, adi_variable_plan_destroy>;
using CholPlan = Owned<adi_cholesky_plan, adi_cholesky_plan_destroy>;
using LargePlan = Owned<adi_large_plan, adi_large_plan_destroy>;
using HinesPlan = Owned<adi_hines_plan, adi_hines_plan_destroy>;
using Heat = Owned<adi_heat_solver, adi_heat_solver_destroy>;
using Buffer = Owned<adi_buffer, adi_buffer_destroy>;

template <class T>
constexpr int32_t precision() {
  return sizeof(T) == 4 ? ADI_FLOAT32 : ADI_FLOAT64;
}
template <class T>
double tol() {
  return sizeof(T) == 4 ? 2e-4 : 1e-11;
}
template <class T>
T nan() {
  return std::numeric_limits<T>::quiet_NaN();
}

// The typed entry points of one precision.
template <class T>
struct Api;
template <>
struct Api<float> {
  static constexpr auto tri = adi_tridiagonal_solve_f32;
  static constexpr auto tri_shared = adi_tridiagonal_solve_shared_f32;
  static constexpr auto block = adi_block_solve_f32;
  static constexpr auto variable = adi_variable_solve_f32;
  static constexpr auto factor = adi_cholesky_factor_f32;
  static constexpr auto chol_solve = adi_cholesky_solve_f32;
  static constexpr auto large = adi_large_solve_f32;
  static constexpr auto hines = adi_hines_solve_f32;
  static constexpr auto heat_read = adi_heat_read_f32;
  static constexpr auto heat_write = adi_heat_write_f32;
};
template <>
struct Api<double> {
  static constexpr auto tri = adi_tridiagonal_solve_f64;
  static constexpr auto tri_shared = adi_tridiagonal_solve_shared_f64;
  static constexpr auto block = adi_block_solve_f64;
  static constexpr auto variable = adi_variable_solve_f64;
  static constexpr auto factor = adi_cholesky_factor_f64;
  static constexpr auto chol_solve = adi_cholesky_solve_f64;
  static constexpr auto large = adi_large_solve_f64;
  static constexpr auto hines = adi_hines_solve_f64;
  static constexpr auto heat_read = adi_heat_read_f64;
  static constexpr auto heat_write = adi_heat_write_f64;
};

// Plain fp64 Thomas (with Sherman-Morrison for periodic lines) of one line: the oracle.
std::vector<double> thomas(std::vector<double> a, std::vector<double> b, std::vector<double> c,
                           std::vector<double> d, bool periodic) {
  const std::size_t n = b.size();
  auto plain = [n](const std::vector<double>& A, const std::vector<double>& B, const std::vector<double>& C,
                   std::vector<double> D) {
    std::vector<double> cp(n), x(n);
    double den = B[0];
    cp[0] = n > 1 ? C[0] / den : 0;
    D[0] /= den;
    for (std::size_t i = 1; i < n; ++i) {
      den = B[i] - A[i] * cp[i - 1];
      cp[i] = i + 1 < n ? C[i] / den : 0;
      D[i] = (D[i] - A[i] * D[i - 1]) / den;
    }
    x[n - 1] = D[n - 1];
    for (std::size_t i = n - 1; i-- > 0;) x[i] = D[i] - cp[i] * x[i + 1];
    return x;
  };
  if (!periodic) return plain(a, b, c, d);
  if (n == 1) return {d[0] / (a[0] + b[0] + c[0])};
  const double gamma = -b[0], alpha = c[n - 1], beta = a[0];
  std::vector<double> bb = b, u(n, 0.0);
  bb[0] -= gamma;
  bb[n - 1] -= alpha * beta / gamma;
  u[0] = gamma;
  u[n - 1] = alpha;
  const auto y = plain(a, bb, c, d), z = plain(a, bb, c, u);
  const double f = (y[0] + beta * y[n - 1] / gamma) / (1 + z[0] + beta * z[n - 1] / gamma);
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = y[i] - f * z[i];
  return x;
}

// ---------------------------------------------------------------------------------------
// status codes, executors, error state
// ---------------------------------------------------------------------------------------

TEST(CApiStatus, EveryCodeHasItsOwnName) {
  std::set<std::string> names;
  for (int32_t s = ADI_SUCCESS; s <= ADI_ERROR_INTERNAL; ++s) names.insert(adi_status_string(s));
  EXPECT_EQ(names.size(), std::size_t(ADI_ERROR_INTERNAL + 1));
  EXPECT_STREQ(adi_status_string(ADI_ERROR_SINGULAR_SYSTEM), "ADI_ERROR_SINGULAR_SYSTEM");
  EXPECT_STREQ(adi_status_string(99), "unknown adi_status");
  EXPECT_STREQ(adi_status_string(-1), "unknown adi_status");
  EXPECT_STRNE(adi_version(), "unknown");
}

TEST(CApiExecutor, HostAndBadArguments) {
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  EXPECT_EQ(adi_executor_is_cuda(ex), 0);
  EXPECT_OK(adi_executor_synchronize(ex));
  EXPECT_STREQ(adi_last_error_message(), "");
  adi_executor* bad = reinterpret_cast<adi_executor*>(0x1);
  EXPECT_EQ(adi_executor_create_host(-1, &bad), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(bad, nullptr) << "a failed create hands out NULL";
  EXPECT_NE(std::string(adi_last_error_message()).find("threads"), std::string::npos) << adi_last_error_message();
  EXPECT_EQ(adi_last_error_status(), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_executor_create_host(0, nullptr), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_executor_synchronize(nullptr), ADI_ERROR_NULL_POINTER);
  EXPECT_OK(adi_executor_destroy(nullptr));
  EXPECT_EQ(adi_executor_is_cuda(nullptr), 0);
}

TEST(CApiExecutor, CudaRefusedWithoutDevice) {
  ADI_REQUIRE_NO_CUDA("adi_executor_create_cuda refused");
  Exec cu;
  EXPECT_EQ(adi_executor_create_cuda(0, nullptr, cu.out()), ADI_ERROR_UNSUPPORTED);
  EXPECT_EQ(cu.h, nullptr);
  EXPECT_GT(std::strlen(adi_last_error_message()), 10u);
}

TEST(CApiExecutor, CudaCreate) {
  ADI_REQUIRE_CUDA("adi_executor_create_cuda");
  Exec cu;
  EXPECT_OK(adi_executor_create_cuda(0, nullptr, cu.out()));
  EXPECT_EQ(adi_executor_is_cuda(cu), 1);
  Exec bad_device;
  EXPECT_NE(adi_executor_create_cuda(999, nullptr, bad_device.out()), ADI_SUCCESS);
}

// The message copy for callers that cannot keep a pointer: truncated, NUL-terminated.
TEST(CApiStatus, MessageCopyTruncates) {
  adi_lines l;
  ASSERT_EQ(adi_lines_strided(0, 3, 1, 3, &l), ADI_ERROR_INVALID_ARGUMENT);
  const std::string full = adi_last_error_message();
  char buf[8];
  std::memset(buf, 'x', sizeof buf);
  EXPECT_EQ(adi_last_error_message_copy(buf, sizeof buf), int64_t(full.size()));
  EXPECT_EQ(std::string(buf), full.substr(0, 7));
  EXPECT_EQ(adi_last_error_message_copy(nullptr, 0), int64_t(full.size()));
  EXPECT_EQ(adi_last_error_system(), -1);
  EXPECT_EQ(adi_last_error_row(), -1);
}

// Errors are per thread: a failure on one thread is not seen (nor cleared) by another.
TEST(CApiStatus, ErrorStateIsThreadLocal) {
  adi_lines l;
  ASSERT_EQ(adi_lines_strided(-4, 3, 1, 3, &l), ADI_ERROR_INVALID_ARGUMENT);
  const std::string mine = adi_last_error_message();
  std::string theirs = "unset";
  std::thread t([&] {
    theirs = adi_last_error_message();
    adi_lines k;
    adi_lines_strided(4, 3, 1, 4, &k);
  });
  t.join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(std::string(adi_last_error_message()), mine);
}

// ---------------------------------------------------------------------------------------
// tridiagonal
// ---------------------------------------------------------------------------------------

TEST(CApiTridiagonal, LayoutsAndTheirErrors) {
  adi_lines l;
  ASSERT_OK(adi_lines_strided(5, 3, 1, 5, &l));
  EXPECT_EQ(l.n, 5);
  EXPECT_EQ(l.count0, 3);
  EXPECT_EQ(l.stride0, 5);
  ASSERT_OK(adi_lines_box(4, 5, 6, 0, 0, ADI_AXIS_Y, &l));
  EXPECT_EQ(l.n, 5);
  EXPECT_EQ(l.stride, 4);
  EXPECT_EQ(l.count0 * l.count1, 24);
  ASSERT_OK(adi_lines_interleaved(7, 9, &l));
  EXPECT_EQ(l.stride, 9);
  EXPECT_EQ(adi_lines_box(4, 5, 6, 0, 0, 3, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_lines_box(4, 5, 6, 3, 0, 0, &l), ADI_ERROR_INVALID_ARGUMENT);  // sy < nx
  EXPECT_EQ(adi_lines_box(0, 5, 6, 0, 0, 0, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_lines_strided(5, 3, 1, 2, &l), ADI_ERROR_INVALID_ARGUMENT);  // overlapping lines
  EXPECT_EQ(adi_lines_strided(5, 3, 1, 5, nullptr), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_lines_interleaved(0, 3, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_lines_strided(INT64_MAX / 2, 4, 1, INT64_MAX / 2, &l), ADI_ERROR_INVALID_ARGUMENT);  // overflow
}

template <class T>
class CApiTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CApiTyped, Types);

// Every axis of an odd box, plain and periodic, bands per element and shared.
TYPED_TEST(CApiTyped, TridiagonalEveryAxisAgainstThomas) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  const int64_t nx = 33, ny = 3, nz = 31, sy = 35, sz = 35 * 3 + 2;  // padded rows and planes
  const int64_t span = (nx - 1) + (ny - 1) * sy + (nz - 1) * sz + 1;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-1, 1);
  for (int axis = 0; axis < 3; ++axis)
    for (bool periodic : {false, true})
      for (bool shared : {false, true}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + (periodic ? " periodic" : "") + (shared ? " shared" : ""));
        adi_lines l;
        ASSERT_OK(adi_lines_box(nx, ny, nz, sy, sz, axis, &l));
        adi_tridiagonal_options opt;
        adi_tridiagonal_options_init(&opt);
        opt.periodic = periodic;
        TriPlan plan;
        ASSERT_OK(adi_tridiagonal_plan_create(ex, precision<T>(), &l, &opt, plan.out()));
        ASSERT_NE(adi_tridiagonal_plan_kernel(plan), nullptr);
        const int64_t bn = shared ? l.n : span;
        std::vector<T> a(bn, nan<T>()), b(bn, nan<T>()), c(bn, nan<T>()), d(span, nan<T>()), u(span, nan<T>());
        auto at = [&](int64_t line, int64_t i) {
          return (line % l.count0) * l.stride0 + (line / l.count0) * l.stride1 + i * l.stride;
        };
        const int64_t lines = l.count0 * l.count1;
        for (int64_t line = 0; line < lines; ++line)
          for (int64_t i = 0; i < l.n; ++i) {
            const int64_t k = shared ? i : at(line, i);
            if (!shared || line == 0) {
              a[k] = T(U(rng)), c[k] = T(U(rng));
              b[k] = T(3 + U(rng));
            }
            d[at(line, i)] = T(U(rng));
          }
        ASSERT_OK((shared ? Api<T>::tri_shared : Api<T>::tri)(plan, a.data(), b.data(), c.data(), d.data(), u.data()));
        double worst = 0;
        for (int64_t line = 0; line < lines; ++line) {
          std::vector<double> la(l.n), lb(l.n), lc(l.n), ld(l.n);
          for (int64_t i = 0; i < l.n; ++i) {
            const int64_t k = shared ? i : at(line, i);
            la[i] = a[k], lb[i] = b[k], lc[i] = c[k], ld[i] = d[at(line, i)];
          }
          const auto x = thomas(la, lb, lc, ld, periodic);
          for (int64_t i = 0; i < l.n; ++i) {
            const double e = std::fabs(u[at(line, i)] - x[i]);
            worst = std::isfinite(e) ? std::max(worst, e) : 1e300;
          }
        }
        EXPECT_LE(worst, 10 * tol<T>());
        // Padding untouched (still NaN).
        int64_t written = 0;
        for (int64_t k = 0; k < span; ++k) written += !std::isnan(u[k]);
        EXPECT_EQ(written, nx * ny * nz);
      }
}

TYPED_TEST(CApiTyped, TridiagonalErrors) {
  using T = TypeParam;
  using Other = std::conditional_t<sizeof(T) == 4, double, float>;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(1, ex.out()));
  adi_lines l;
  ASSERT_OK(adi_lines_strided(6, 4, 1, 6, &l));
  TriPlan plan;
  EXPECT_EQ(adi_tridiagonal_plan_create(nullptr, precision<T>(), &l, nullptr, plan.out()), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_tridiagonal_plan_create(ex, precision<T>(), nullptr, nullptr, plan.out()), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_tridiagonal_plan_create(ex, 5, &l, nullptr, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  adi_tridiagonal_options opt;
  adi_tridiagonal_options_init(&opt);
  opt.kernel = "no_such_kernel";
  EXPECT_EQ(adi_tridiagonal_plan_create(ex, precision<T>(), &l, &opt, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(adi_last_error_message()).find("no_such_kernel"), std::string::npos);
  opt.kernel = "cuda_thomas_naive";  // a device kernel on a host executor: the wrong executor
  EXPECT_EQ(adi_tridiagonal_plan_create(ex, precision<T>(), &l, &opt, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  opt.kernel = "reference";
  ASSERT_OK(adi_tridiagonal_plan_create(ex, precision<T>(), &l, &opt, plan.out()));
  EXPECT_STREQ(adi_tridiagonal_plan_kernel(plan), "reference");
  std::vector<T> a(24, T(-1)), b(24, T(4)), c(24, T(-1)), d(24, T(1)), u(24, nan<T>());
  std::vector<Other> wrong(24);
  EXPECT_EQ(Api<Other>::tri(reinterpret_cast<adi_tridiagonal_plan*>(plan.h), wrong.data(), wrong.data(),
                            wrong.data(), wrong.data(), wrong.data()),
            ADI_ERROR_WRONG_PRECISION);
  EXPECT_EQ(Api<T>::tri(nullptr, a.data(), b.data(), c.data(), d.data(), u.data()), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(Api<T>::tri(plan, a.data(), nullptr, c.data(), d.data(), u.data()), ADI_ERROR_INVALID_ARGUMENT);
  std::vector<T> w(25, T(1));
  EXPECT_EQ(Api<T>::tri(plan, a.data(), b.data(), c.data(), w.data(), w.data() + 1), ADI_ERROR_INVALID_ARGUMENT)
      << "u overlapping d without being d";
  // A zero pivot in line 2, row 3: singular, with the line and row reported.
  b[2 * 6 + 3] = T(0);
  a[2 * 6 + 3] = c[2 * 6 + 3] = T(0);
  TriPlan automatic;
  ASSERT_OK(adi_tridiagonal_plan_create(ex, precision<T>(), &l, nullptr, automatic.out()));
  for (adi_tridiagonal_plan* q : {plan.h, automatic.h}) {
    SCOPED_TRACE(adi_tridiagonal_plan_kernel(q));
    EXPECT_EQ(Api<T>::tri(q, a.data(), b.data(), c.data(), d.data(), u.data()), ADI_ERROR_SINGULAR_SYSTEM);
    EXPECT_EQ(adi_last_error_system(), 2) << adi_last_error_message();
    // The scalar tridiagonal kernels name the line; the row where the kernel knows it.
    EXPECT_TRUE(adi_last_error_row() == -1 || adi_last_error_row() == 3) << adi_last_error_row();
  }
  // A call that succeeds clears the error.
  b[2 * 6 + 3] = T(4);
  EXPECT_OK(Api<T>::tri(plan, a.data(), b.data(), c.data(), d.data(), u.data()));
  EXPECT_EQ(adi_last_error_system(), -1);
  EXPECT_STREQ(adi_last_error_message(), "");
}

// Device arrays through adi_buffer; host arrays on a CUDA executor are refused.
TYPED_TEST(CApiTyped, TridiagonalOnTheDevice) {
  ADI_REQUIRE_CUDA("C API tridiagonal solve on the device");
  using T = TypeParam;
  Exec ex, host;
  ASSERT_OK(adi_executor_create_cuda(0, nullptr, ex.out()));
  ASSERT_OK(adi_executor_create_host(0, host.out()));
  const int64_t n = 31, count = 257, N = n * count;
  adi_lines l;
  ASSERT_OK(adi_lines_strided(n, count, 1, n, &l));
  std::vector<T> a(N, T(-1)), b(N, T(4)), c(N, T(-1)), d(N), u(N, nan<T>()), ref(N, nan<T>());
  for (int64_t k = 0; k < N; ++k) d[k] = T(std::sin(0.1 * double(k)));
  TriPlan plan, hplan;
  ASSERT_OK(adi_tridiagonal_plan_create(ex, precision<T>(), &l, nullptr, plan.out()));
  ASSERT_OK(adi_tridiagonal_plan_create(host, precision<T>(), &l, nullptr, hplan.out()));
  ASSERT_OK(Api<T>::tri(hplan, a.data(), b.data(), c.data(), d.data(), ref.data()));
  EXPECT_EQ(Api<T>::tri(plan, a.data(), b.data(), c.data(), d.data(), u.data()), ADI_ERROR_INVALID_ARGUMENT)
      << "host arrays on a CUDA executor";
  Buffer da, db, dc, dd, du;
  const int64_t bytes = N * int64_t(sizeof(T));
  for (Buffer* buf : {&da, &db, &dc, &dd, &du}) ASSERT_OK(adi_buffer_create(ex, bytes, buf->out()));
  ASSERT_OK(adi_buffer_copy_from_host(da, a.data(), bytes));
  ASSERT_OK(adi_buffer_copy_from_host(db, b.data(), bytes));
  ASSERT_OK(adi_buffer_copy_from_host(dc, c.data(), bytes));
  ASSERT_OK(adi_buffer_copy_from_host(dd, d.data(), bytes));
  ASSERT_OK(adi_buffer_copy_from_host(du, u.data(), bytes));
  auto p = [](const Buffer& x) { return static_cast<T*>(adi_buffer_data(x)); };
  ASSERT_OK(Api<T>::tri(plan, p(da), p(db), p(dc), p(dd), p(du)));
  ASSERT_OK(adi_buffer_copy_to_host(du, u.data(), bytes));
  for (int64_t k = 0; k < N; ++k) ASSERT_NEAR(u[k], ref[k], 10 * tol<T>()) << k;
  EXPECT_EQ(Api<T>::tri(hplan, p(da), p(db), p(dc), p(dd), p(du)), ADI_ERROR_INVALID_ARGUMENT)
      << "device arrays on a host executor";
}

TEST(CApiBuffer, HostRoundTripAndErrors) {
  Exec ex;
  ASSERT_OK(adi_executor_create_host(0, ex.out()));
  Buffer buf;
  ASSERT_OK(adi_buffer_create(ex, 40, buf.out()));
  EXPECT_EQ(adi_buffer_bytes(buf), 40);
  const double in[5] = {1, 2, 3, 4, 5};
  double out[5] = {0, 0, 0, 0, 0};
  ASSERT_OK(adi_buffer_copy_from_host(buf, in, 40));
  ASSERT_OK(adi_buffer_copy_to_host(buf, out, 40));
  for (int k = 0; k < 5; ++k) EXPECT_EQ(out[k], in[k]);
  EXPECT_EQ(adi_buffer_copy_to_host(buf, out, 48), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_buffer_copy_to_host(buf, nullptr, 8), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_buffer_copy_from_host(buf, nullptr, 8), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_buffer_copy_to_host(nullptr, out, 8), ADI_ERROR_NULL_POINTER);
  Buffer bad;
  EXPECT_EQ(adi_buffer_create(ex, -1, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_buffer_create(ex, int64_t(1) << 55, bad.out()), ADI_ERROR_OUT_OF_MEMORY)  // past the address space
      << adi_last_error_message();
  EXPECT_EQ(bad.h, nullptr);
  EXPECT_EQ(adi_buffer_data(nullptr), nullptr);
}

// ---------------------------------------------------------------------------------------
// block
// ---------------------------------------------------------------------------------------

// A block diagonally dominant batch in the contiguous layout of `order`; returns the worst
// relative residual of u.
template <class T>
struct BlockBatch {
  int m;
  int64_t n, systems;
  int32_t order;
  std::vector<T> a, b, c, d;
  int64_t bi(int64_t s, int64_t i, int r, int q) const {
    return (s * n + i) * m * m + (order == ADI_COLUMN_MAJOR ? q * m + r : r * m + q);
  }
  int64_t vi(int64_t s, int64_t i, int r) const { return (s * n + i) * m + r; }
  BlockBatch(int m_, int64_t n_, int64_t s_, int32_t o, uint32_t seed) : m(m_), n(n_), systems(s_), order(o) {
    const int64_t nb = systems * n * m * m, nv = systems * n * m;
    a.assign(nb, nan<T>()), b.assign(nb, nan<T>()), c.assign(nb, nan<T>()), d.assign(nv, nan<T>());
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> U(-1, 1);
    for (int64_t s = 0; s < systems; ++s)
      for (int64_t i = 0; i < n; ++i)
        for (int r = 0; r < m; ++r) {
          for (int q = 0; q < m; ++q) {
            if (i > 0) a[bi(s, i, r, q)] = T(U(rng) / m);
            if (i + 1 < n) c[bi(s, i, r, q)] = T(U(rng) / m);
            b[bi(s, i, r, q)] = T(U(rng) / m + (r == q ? 4 : 0));
          }
          d[vi(s, i, r)] = T(U(rng));
        }
  }
  double residual(const std::vector<T>& u) const {
    double worst = 0;
    for (int64_t s = 0; s < systems; ++s)
      for (int64_t i = 0; i < n; ++i)
        for (int r = 0; r < m; ++r) {
          double res = -double(d[vi(s, i, r)]);
          for (int q = 0; q < m; ++q) {
            if (i > 0) res += double(a[bi(s, i, r, q)]) * u[vi(s, i - 1, q)];
            res += double(b[bi(s, i, r, q)]) * u[vi(s, i, q)];
            if (i + 1 < n) res += double(c[bi(s, i, r, q)]) * u[vi(s, i + 1, q)];
          }
          worst = std::isfinite(res) ? std::max(worst, std::fabs(res)) : 1e300;
        }
    return worst;
  }
};

// Row- and column-major blocks, every block size, odd sizes: residuals, and the two orders
// give the same answer (to rounding) on the same (transposed) blocks.
TYPED_TEST(CApiTyped, BlockRowAndColumnMajor) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  for (int m = 2; m <= 8; ++m)
    for (int64_t n : {1, 3, 33}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
      const BlockBatch<T> row(m, n, 7, ADI_ROW_MAJOR, 100 + m);
      BlockBatch<T> col = row;
      col.order = ADI_COLUMN_MAJOR;
      for (int64_t s = 0; s < row.systems; ++s)
        for (int64_t i = 0; i < n; ++i)
          for (int r = 0; r < m; ++r)
            for (int q = 0; q < m; ++q) {
              col.a[col.bi(s, i, r, q)] = row.a[row.bi(s, i, r, q)];
              col.b[col.bi(s, i, r, q)] = row.b[row.bi(s, i, r, q)];
              col.c[col.bi(s, i, r, q)] = row.c[row.bi(s, i, r, q)];
            }
      std::vector<T> ur(row.d.size(), nan<T>()), uc = ur;
      for (const BlockBatch<T>* bb : {&row, static_cast<const BlockBatch<T>*>(&col)}) {
        adi_block_lines l;
        ASSERT_OK(adi_block_lines_contiguous(m, n, bb->systems, bb->order, &l));
        EXPECT_EQ(l.order, bb->order);
        BlockPlan plan;
        ASSERT_OK(adi_block_plan_create(ex, precision<T>(), &l, nullptr, plan.out()));
        int64_t nb = 0, nv = 0;
        ASSERT_OK(adi_block_plan_spans(plan, &nb, &nv));
        EXPECT_EQ(nb, int64_t(bb->a.size()));
        EXPECT_EQ(nv, int64_t(bb->d.size()));
        std::vector<T>& u = bb == &row ? ur : uc;
        ASSERT_OK(Api<T>::block(plan, bb->a.data(), bb->b.data(), bb->c.data(), bb->d.data(), u.data()));
        EXPECT_LE(bb->residual(u), 10 * tol<T>());
      }
      for (std::size_t k = 0; k < ur.size(); ++k)
        ASSERT_NEAR(ur[k], uc[k], tol<T>() * std::max(1.0, std::fabs(double(ur[k])))) << "orders differ at " << k;
    }
}

// The grid entry point (a block per point of an (nx, ny, nz) grid) along every axis.
TYPED_TEST(CApiTyped, BlockGridLinesColumnMajor) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(0, ex.out()));
  const int m = 5;
  const int64_t nx = 7, ny = 3, nz = 5, pts = nx * ny * nz;
  const int64_t vs[4] = {m, m * nx, m * nx * ny, 1}, bs[4] = {m * m, m * m * nx, m * m * nx * ny, 1};
  for (int axis = 0; axis < 3; ++axis) {
    adi_block_lines l;
    ASSERT_OK(adi_block_lines_grid(m, nx, ny, nz, axis, vs, bs, ADI_COLUMN_MAJOR, &l));
    const int64_t n = axis == 0 ? nx : axis == 1 ? ny : nz;
    EXPECT_EQ(l.n, n);
    EXPECT_EQ(l.count0 * l.count1, pts / n);
    // The same numbers as a contiguous batch would hold are not needed: check the residual
    // through the canonical strides.
    std::mt19937 rng(axis);
    std::uniform_real_distribution<double> U(-1, 1);
    std::vector<T> a(pts * m * m), b(pts * m * m), c(pts * m * m), d(pts * m), u(pts * m, nan<T>());
    for (int64_t p = 0; p < pts; ++p)
      for (int r = 0; r < m; ++r) {
        for (int q = 0; q < m; ++q) {
          a[p * m * m + q * m + r] = T(U(rng) / m), c[p * m * m + q * m + r] = T(U(rng) / m);
          b[p * m * m + q * m + r] = T(U(rng) / m + (r == q ? 4 : 0));
        }
        d[p * m + r] = T(U(rng));
      }
    BlockPlan plan;
    ASSERT_OK(adi_block_plan_create(ex, precision<T>(), &l, nullptr, plan.out()));
    ASSERT_OK(Api<T>::block(plan, a.data(), b.data(), c.data(), d.data(), u.data()));
    double worst = 0;
    for (int64_t s = 0; s < l.count0 * l.count1; ++s) {
      const int64_t ob = (s % l.count0) * l.blocks.system0 + (s / l.count0) * l.blocks.system1;
      const int64_t ov = (s % l.count0) * l.vectors.system0 + (s / l.count0) * l.vectors.system1;
      for (int64_t i = 0; i < n; ++i)
        for (int r = 0; r < m; ++r) {
          double res = -double(d[ov + i * l.vectors.row + r]);
          for (int q = 0; q < m; ++q) {
            const int64_t e = ob + i * l.blocks.row + q * m + r;  // column-major entry (r, q)
            if (i > 0) res += double(a[e]) * u[ov + (i - 1) * l.vectors.row + q];
            res += double(b[e]) * u[ov + i * l.vectors.row + q];
            if (i + 1 < n) res += double(c[e]) * u[ov + (i + 1) * l.vectors.row + q];
          }
          worst = std::max(worst, std::isfinite(res) ? std::fabs(res) : 1e300);
        }
    }
    EXPECT_LE(worst, 10 * tol<T>()) << "axis " << axis;
  }
}

TYPED_TEST(CApiTyped, BlockErrors) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(1, ex.out()));
  adi_block_lines l;
  EXPECT_EQ(adi_block_lines_contiguous(9, 4, 3, ADI_ROW_MAJOR, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(adi_last_error_message()).find("block size"), std::string::npos);
  EXPECT_EQ(adi_block_lines_contiguous(1, 4, 3, ADI_ROW_MAJOR, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_block_lines_contiguous(3, 4, 3, 2, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_block_lines_interleaved(3, 0, 3, ADI_ROW_MAJOR, &l), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_block_lines_grid(3, 4, 4, 4, 0, nullptr, nullptr, ADI_ROW_MAJOR, &l), ADI_ERROR_NULL_POINTER);
  ASSERT_OK(adi_block_lines_contiguous(3, 4, 5, ADI_COLUMN_MAJOR, &l));
  adi_block_lines bad = l;
  bad.order = 5;
  BlockPlan plan;
  EXPECT_EQ(adi_block_plan_create(ex, precision<T>(), &bad, nullptr, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  bad = l;
  bad.blocks.row = 1;  // overlapping blocks
  EXPECT_EQ(adi_block_plan_create(ex, precision<T>(), &bad, nullptr, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  adi_block_options opt;
  adi_block_options_init(&opt);
  opt.pivot_tolerance = 2;
  EXPECT_EQ(adi_block_plan_create(ex, precision<T>(), &l, &opt, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  opt.pivot_tolerance = 0;
  opt.kernel = "cuda_block_thomas_shuffle";
  EXPECT_EQ(adi_block_plan_create(ex, precision<T>(), &l, &opt, plan.out()), ADI_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(adi_block_plan_create(ex, precision<T>(), &l, nullptr, plan.out()));
  EXPECT_STREQ(adi_block_plan_kernel(plan), "cpu_block_thomas");
  BlockBatch<T> bb(3, 4, 5, ADI_COLUMN_MAJOR, 3);
  std::vector<T> u(bb.d.size(), nan<T>());
  EXPECT_EQ(Api<T>::block(plan, bb.a.data(), bb.b.data(), nullptr, bb.d.data(), u.data()), ADI_ERROR_INVALID_ARGUMENT);
  // System 3, block row 2 singular: rows 0 and 1 of B equal, A zero.
  for (int q = 0; q < 3; ++q) {
    for (int r = 0; r < 3; ++r) bb.a[bb.bi(3, 2, r, q)] = 0;
    bb.b[bb.bi(3, 2, 1, q)] = bb.b[bb.bi(3, 2, 0, q)];
  }
  EXPECT_EQ(Api<T>::block(plan, bb.a.data(), bb.b.data(), bb.c.data(), bb.d.data(), u.data()),
            ADI_ERROR_SINGULAR_SYSTEM);
  EXPECT_EQ(adi_last_error_system(), 3) << adi_last_error_message();
  EXPECT_EQ(adi_last_error_row(), 2);
}

TYPED_TEST(CApiTyped, BlockOnTheDeviceColumnMajor) {
  ADI_REQUIRE_CUDA("C API column-major block solve on the device");
  using T = TypeParam;
  Exec ex, host;
  ASSERT_OK(adi_executor_create_cuda(0, nullptr, ex.out()));
  ASSERT_OK(adi_executor_create_host(0, host.out()));
  for (int m : {2, 5, 8}) {
    const BlockBatch<T> bb(m, 33, 101, ADI_COLUMN_MAJOR, 40 + m);
    adi_block_lines l;
    ASSERT_OK(adi_block_lines_contiguous(m, 33, 101, ADI_COLUMN_MAJOR, &l));
    BlockPlan dplan, hplan;
    ASSERT_OK(adi_block_plan_create(ex, precision<T>(), &l, nullptr, dplan.out()));
    ASSERT_OK(adi_block_plan_create(host, precision<T>(), &l, nullptr, hplan.out()));
    std::vector<T> ref(bb.d.size(), nan<T>()), u = ref;
    ASSERT_OK(Api<T>::block(hplan, bb.a.data(), bb.b.data(), bb.c.data(), bb.d.data(), ref.data()));
    const int64_t nb = int64_t(bb.a.size() * sizeof(T)), nv = int64_t(bb.d.size() * sizeof(T));
    Buffer da, db, dc, dd, du;
    for (Buffer* x : {&da, &db, &dc}) ASSERT_OK(adi_buffer_create(ex, nb, x->out()));
    for (Buffer* x : {&dd, &du}) ASSERT_OK(adi_buffer_create(ex, nv, x->out()));
    ASSERT_OK(adi_buffer_copy_from_host(da, bb.a.data(), nb));
    ASSERT_OK(adi_buffer_copy_from_host(db, bb.b.data(), nb));
    ASSERT_OK(adi_buffer_copy_from_host(dc, bb.c.data(), nb));
    ASSERT_OK(adi_buffer_copy_from_host(dd, bb.d.data(), nv));
    ASSERT_OK(adi_buffer_copy_from_host(du, u.data(), nv));
    auto p = [](const Buffer& x) { return static_cast<T*>(adi_buffer_data(x)); };
    ASSERT_OK(Api<T>::block(dplan, p(da), p(db), p(dc), p(dd), p(du)));
    ASSERT_OK(adi_buffer_copy_to_host(du, u.data(), nv));
    EXPECT_LE(bb.residual(u), 10 * tol<T>()) << "m=" << m;
  }
}

// ---------------------------------------------------------------------------------------
// variable-size, Cholesky, large, Hines
// ---------------------------------------------------------------------------------------

TYPED_TEST(CApiTyped, VariableSizeCompactAndPadded) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  const std::vector<int32_t> sizes = {3, 0, 1, 31, 2, 33, 17};
  const int64_t count = int64_t(sizes.size());
  for (int32_t kind : {ADI_VARIABLE_COMPACT, ADI_VARIABLE_PADDED})
    for (bool periodic : {false, true}) {
      SCOPED_TRACE(std::string(kind == ADI_VARIABLE_COMPACT ? "compact" : "padded") + (periodic ? " periodic" : ""));
      adi_variable_layout layout{kind, 0, 0, nullptr};
      VarPlan plan;
      ASSERT_OK(adi_variable_plan_create(ex, precision<T>(), sizes.data(), count, &layout, periodic, plan.out()));
      int64_t span = 0;
      ASSERT_OK(adi_variable_plan_span(plan, &span));
      std::vector<T> a(span, nan<T>()), b(span, nan<T>()), c(span, nan<T>()), d(span, nan<T>()), u(span, nan<T>());
      std::vector<int64_t> off(count, 0);
      for (int64_t s = 1; s < count; ++s) off[s] = off[s - 1] + sizes[s - 1];
      auto at = [&](int64_t s, int64_t k) { return kind == ADI_VARIABLE_COMPACT ? off[s] + k : k * count + s; };
      std::mt19937 rng(3);
      std::uniform_real_distribution<double> U(-1, 1);
      for (int64_t s = 0; s < count; ++s)
        for (int64_t k = 0; k < sizes[s]; ++k)
          a[at(s, k)] = T(U(rng)), b[at(s, k)] = T(4 + U(rng)), c[at(s, k)] = T(U(rng)), d[at(s, k)] = T(U(rng));
      ASSERT_OK(Api<T>::variable(plan, a.data(), b.data(), c.data(), d.data(), u.data()));
      for (int64_t s = 0; s < count; ++s) {
        const int64_t n = sizes[s];
        if (n == 0) continue;
        std::vector<double> la(n), lb(n), lc(n), ld(n);
        for (int64_t k = 0; k < n; ++k)
          la[k] = a[at(s, k)], lb[k] = b[at(s, k)], lc[k] = c[at(s, k)], ld[k] = d[at(s, k)];
        const auto x = thomas(la, lb, lc, ld, periodic);
        for (int64_t k = 0; k < n; ++k) EXPECT_NEAR(u[at(s, k)], x[k], 10 * tol<T>()) << "system " << s;
      }
    }
  std::vector<int32_t> bad = {3, -1};
  adi_variable_layout layout{ADI_VARIABLE_COMPACT, 0, 0, nullptr};
  VarPlan plan;
  EXPECT_EQ(adi_variable_plan_create(ex, precision<T>(), bad.data(), 2, &layout, 0, plan.out()),
            ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_variable_plan_create(ex, precision<T>(), nullptr, 2, &layout, 0, plan.out()), ADI_ERROR_NULL_POINTER);
  layout.kind = 7;
  EXPECT_EQ(adi_variable_plan_create(ex, precision<T>(), sizes.data(), count, &layout, 0, plan.out()),
            ADI_ERROR_INVALID_ARGUMENT);
}

TYPED_TEST(CApiTyped, CholeskyFactorSolveAndFailure) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  const std::vector<int32_t> sizes = {0, 1, 3, 17, 33};
  const int64_t count = int64_t(sizes.size());
  std::vector<int64_t> off(count + 1, 0), roff(count + 1, 0);
  for (int64_t s = 0; s < count; ++s)
    off[s + 1] = off[s] + int64_t(sizes[s]) * sizes[s], roff[s + 1] = roff[s] + sizes[s];
  std::vector<T> A(off[count]), B(roff[count]);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> U(-1, 1);
  for (int64_t s = 0; s < count; ++s) {
    const int n = sizes[s];
    for (int j = 0; j < n; ++j) {
      for (int i = j; i < n; ++i) {
        const double v = i == j ? n + 2.0 : U(rng) * 0.5;
        A[off[s] + i + j * n] = A[off[s] + j + i * n] = T(v);
      }
      B[roff[s] + j] = T(U(rng));
    }
  }
  const std::vector<T> A0 = A, B0 = B;
  CholPlan plan;
  ASSERT_OK(adi_cholesky_plan_create(ex, precision<T>(), sizes.data(), count, nullptr, 0, plan.out()));
  std::vector<int32_t> info(count, -7);
  ASSERT_OK(Api<T>::factor(plan, A.data(), info.data()));
  for (int32_t i : info) EXPECT_EQ(i, 0);
  ASSERT_OK(Api<T>::chol_solve(plan, A.data(), B.data(), 1, info.data()));
  for (int64_t s = 0; s < count; ++s) {
    const int n = sizes[s];
    for (int i = 0; i < n; ++i) {
      double r = -double(B0[roff[s] + i]);
      for (int j = 0; j < n; ++j) r += double(A0[off[s] + i + j * n]) * B[roff[s] + j];
      EXPECT_NEAR(r, 0, 100 * tol<T>()) << "matrix " << s << " row " << i;
    }
  }
  // Matrix 3 not positive definite at column 4: info, and with check_pivots the status.
  std::vector<T> C = A0;
  C[off[3] + 4 + 4 * 17] = T(-50);
  std::vector<T> C2 = C;
  ASSERT_OK(Api<T>::factor(plan, C.data(), info.data()));
  EXPECT_EQ(info[3], 5);
  CholPlan strict;
  ASSERT_OK(adi_cholesky_plan_create(ex, precision<T>(), sizes.data(), count, nullptr, 1, strict.out()));
  EXPECT_EQ(Api<T>::factor(strict, C2.data(), nullptr), ADI_ERROR_SINGULAR_SYSTEM);
  EXPECT_EQ(adi_last_error_system(), 3) << adi_last_error_message();
  EXPECT_EQ(adi_last_error_row(), 4);
  std::vector<int32_t> too_big = {513};
  CholPlan big;
  EXPECT_EQ(adi_cholesky_plan_create(ex, precision<T>(), too_big.data(), 1, nullptr, 0, big.out()),
            ADI_ERROR_INVALID_ARGUMENT);
}

TYPED_TEST(CApiTyped, LargeSystem) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  for (bool periodic : {false, true}) {
    const int64_t n = 100003;
    LargePlan plan;
    ASSERT_OK(adi_large_plan_create(ex, precision<T>(), n, 2, n + 5, periodic, plan.out()));
    EXPECT_NE(adi_large_plan_kernel(plan), nullptr);
    const int64_t span = n + 5 + n;
    std::vector<T> a(span, T(-1)), b(span, T(3)), c(span, T(-1)), d(span), u(span, nan<T>());
    for (int64_t k = 0; k < span; ++k) d[k] = T(std::cos(0.001 * double(k)));
    ASSERT_OK(Api<T>::large(plan, a.data(), b.data(), c.data(), d.data(), u.data()));
    double worst = 0;
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t o = s * (n + 5);
        const double left = i > 0 ? u[o + i - 1] : periodic ? u[o + n - 1] : 0.0;
        const double right = i + 1 < n ? u[o + i + 1] : periodic ? u[o] : 0.0;
        const double r = -left + 3 * double(u[o + i]) - right - d[o + i];
        worst = std::max(worst, std::isfinite(r) ? std::fabs(r) : 1e300);
      }
    EXPECT_LE(worst, 10 * tol<T>()) << (periodic ? "periodic" : "");
    EXPECT_TRUE(std::isnan(u[n + 2])) << "the gap between systems is not written";
  }
  LargePlan bad;
  EXPECT_EQ(adi_large_plan_create(ex, precision<T>(), 0, 1, 0, 0, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_large_plan_create(ex, precision<T>(), 10, 3, 5, 0, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
}

TYPED_TEST(CApiTyped, HinesTwoTrees) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(2, ex.out()));
  // Tree 0: a Y (0 - 1 - {2, 3}); tree 1: a chain of 5.
  const std::vector<int32_t> tree_sizes = {4, 5};
  const std::vector<int32_t> parents = {-1, 0, 1, 1, -1, 0, 1, 2, 3};
  const std::vector<int32_t> tree_of = {0, 1, 1, 0, 1};
  HinesPlan plan;
  ASSERT_OK(adi_hines_plan_create(ex, precision<T>(), 2, tree_sizes.data(), parents.data(), 5, tree_of.data(),
                                  plan.out()));
  int64_t span = 0;
  ASSERT_OK(adi_hines_plan_span(plan, &span));
  EXPECT_EQ(span, 4 + 5 + 5 + 4 + 5);
  std::vector<T> off(span), diag(span), rhs(span);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> U(0.1, 1);
  for (int64_t k = 0; k < span; ++k) off[k] = T(-U(rng)), diag[k] = T(4 + U(rng)), rhs[k] = T(U(rng));
  const std::vector<T> diag0 = diag, rhs0 = rhs;
  ASSERT_OK(Api<T>::hines(plan, off.data(), diag.data(), rhs.data()));
  int64_t o = 0;
  for (int64_t s = 0; s < 5; ++s) {
    const int t = tree_of[s], n = tree_sizes[t];
    const int32_t* par = parents.data() + (t == 0 ? 0 : 4);
    std::vector<double> r(n);
    for (int i = 0; i < n; ++i) r[i] = double(diag0[o + i]) * rhs[o + i] - rhs0[o + i];
    for (int i = 1; i < n; ++i) {
      r[i] += double(off[o + i]) * rhs[o + par[i]];
      r[par[i]] += double(off[o + i]) * rhs[o + i];
    }
    for (int i = 0; i < n; ++i) EXPECT_NEAR(r[i], 0, 10 * tol<T>()) << "neuron " << s << " node " << i;
    o += n;
  }
  const std::vector<int32_t> bad_parents = {-1, 2, 0};
  const int32_t bad_size = 3;
  HinesPlan bad;
  EXPECT_EQ(adi_hines_plan_create(ex, precision<T>(), 1, &bad_size, bad_parents.data(), 2, nullptr, bad.out()),
            ADI_ERROR_INVALID_ARGUMENT);
  const int32_t bad_tree = 4;
  EXPECT_EQ(adi_hines_plan_create(ex, precision<T>(), 2, tree_sizes.data(), parents.data(), 1, &bad_tree, bad.out()),
            ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_hines_plan_create(ex, precision<T>(), 1, nullptr, parents.data(), 1, nullptr, bad.out()),
            ADI_ERROR_NULL_POINTER);
}

// ---------------------------------------------------------------------------------------
// the heat solver
// ---------------------------------------------------------------------------------------

// u = sin(pi x) sin(pi y) decays as exp(-2 pi^2 k t) on the unit square with u = 0 on the faces.
TYPED_TEST(CApiTyped, HeatSolverDecayingMode) {
  using T = TypeParam;
  Exec ex;
  ASSERT_OK(adi_executor_create_host(0, ex.out()));
  adi_heat_problem p;
  adi_heat_problem_init(&p);
  p.n[0] = 33, p.n[1] = 33;
  p.diffusivity[2] = 0;
  p.scheme = ADI_CRAIG_SNEYD;
  Heat heat;
  ASSERT_OK(adi_heat_solver_create(ex, precision<T>(), &p, heat.out()));
  const double pi = 3.14159265358979323846;
  const int64_t nx = 33, ny = 33;
  std::vector<T> u(nx * ny);
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i) u[i + nx * j] = T(std::sin(pi * i / 32.0) * std::sin(pi * j / 32.0));
  ASSERT_OK(Api<T>::heat_write(heat, u.data()));
  ASSERT_OK(adi_heat_step(heat, 0.0, 0.001));
  ASSERT_OK(adi_heat_advance(heat, 0.001, 0.05, 49));
  ASSERT_OK(Api<T>::heat_read(heat, u.data()));
  const double decay = std::exp(-2 * pi * pi * 0.05);
  double worst = 0;
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i)
      worst = std::max(worst, std::fabs(u[i + nx * j] - decay * std::sin(pi * i / 32.0) * std::sin(pi * j / 32.0)));
  EXPECT_LE(worst, 2e-3);
  void* data = nullptr;
  int64_t sy = 0, sz = 0;
  ASSERT_OK(adi_heat_data(heat, &data, &sy, &sz));
  EXPECT_GE(sy, nx);
  EXPECT_EQ(static_cast<T*>(data)[16 + 16 * sy], u[16 + nx * 16]);
  using Other = std::conditional_t<sizeof(T) == 4, double, float>;
  std::vector<Other> w(nx * ny);
  EXPECT_EQ(Api<Other>::heat_read(heat, w.data()), ADI_ERROR_WRONG_PRECISION);
}

TEST(CApiHeat, PeriodicAndNeumannAndErrors) {
  Exec ex;
  ASSERT_OK(adi_executor_create_host(0, ex.out()));
  adi_heat_problem p;
  adi_heat_problem_init(&p);
  p.n[0] = 64;
  p.boundary[0] = p.boundary[1] = ADI_PERIODIC;
  Heat heat;
  ASSERT_OK(adi_heat_solver_create(ex, ADI_FLOAT64, &p, heat.out()));
  std::vector<double> u(64);
  const double pi = 3.14159265358979323846;
  for (int i = 0; i < 64; ++i) u[i] = 1 + std::cos(2 * pi * i / 64.0);
  ASSERT_OK(adi_heat_write_f64(heat, u.data()));
  ASSERT_OK(adi_heat_advance(heat, 0, 0.01, 20));
  ASSERT_OK(adi_heat_read_f64(heat, u.data()));
  for (int i = 0; i < 64; ++i)
    EXPECT_NEAR(u[i], 1 + std::exp(-4 * pi * pi * 0.01) * std::cos(2 * pi * i / 64.0), 2e-3);
  // Neumann on both faces conserves the mean.
  p.boundary[0] = p.boundary[1] = ADI_NEUMANN;
  Heat neumann;
  ASSERT_OK(adi_heat_solver_create(ex, ADI_FLOAT64, &p, neumann.out()));
  adi_heat_problem q = p;
  q.boundary[1] = ADI_PERIODIC;  // periodic on one face only
  Heat bad;
  EXPECT_EQ(adi_heat_solver_create(ex, ADI_FLOAT64, &q, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  q = p;
  q.boundary[0] = 9;
  EXPECT_EQ(adi_heat_solver_create(ex, ADI_FLOAT64, &q, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  q = p;
  q.scheme = 11;
  EXPECT_EQ(adi_heat_solver_create(ex, ADI_FLOAT64, &q, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  q = p;
  q.theta = 3;
  EXPECT_EQ(adi_heat_solver_create(ex, ADI_FLOAT64, &q, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  q = p;
  q.n[0] = 0;
  EXPECT_EQ(adi_heat_solver_create(ex, ADI_FLOAT64, &q, bad.out()), ADI_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(adi_heat_solver_create(ex, ADI_FLOAT64, nullptr, bad.out()), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_heat_step(nullptr, 0, 0.1), ADI_ERROR_NULL_POINTER);
  EXPECT_EQ(adi_heat_step(heat, 0, -0.1), ADI_ERROR_INVALID_ARGUMENT) << adi_last_error_message();
  EXPECT_EQ(adi_heat_read_f64(heat, nullptr), ADI_ERROR_NULL_POINTER);
  // A non-finite initial value is refused by advance.
  u[3] = std::numeric_limits<double>::infinity();
  ASSERT_OK(adi_heat_write_f64(heat, u.data()));
  EXPECT_NE(adi_heat_advance(heat, 0, 0.01, 2), ADI_SUCCESS);
}

}  // namespace
