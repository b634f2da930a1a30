// The X-tile route of Kernel::cuda_pivoting (issue 23, stop 39, branch h-pivx;
// solvers/cuda/pivoting_xtile.cuh), forced with ADI_PIVOTING_ROUTE=xtile: X lines (contiguous
// and a padded box's), sizes 1 .. 257 and line counts that are not multiples of a warp's 32 or a
// block's 128, per-line and shared bands, fp32 and fp64, both chunk widths
// (ADI_PIVOTING_XTILE_BYTES=32 | 64) and both forms (ADI_PIVOTING_XTILE_FORM=recompute: U
// recomputed from checkpoints, not stored), outputs NaN-poisoned, odd sizes in place:
//   - bit for bit against the thread route forced (ADI_PIVOTING_ROUTE=thread: the same
//     pivot_step / pivot_last and back substitution in the same order), the whole output array
//     (nothing outside the lines written);
//   - within 10x of LAPACKE ?gtsv (tests/solvers/pivoting_cases.hpp), as the thread route;
//   - a singular line throws SingularSystem naming the line, as the thread route.
// The host emulation of the same warp program: tests/solvers/cpu/test_pivoting_xtile.cpp.
// The forms other than the default (recompute, 64-byte chunks: automatic's on X since stop 40)
// are kept for measurement and compiled only with -DADI_CUDA_UNROLL_ALL=ON (issue 15 item 8):
// other builds check the default and then skip, naming them (tests/comparison_forms_skip.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/tridiagonal.hpp"
#include "tests/comparison_forms_skip.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/scoped_env.hpp"
#include "tests/solvers/cuda/pivoting_device_solve.hpp"
#include "tests/solvers/pivoting_cases.hpp"

namespace {

using adi::index_t;
namespace tp = adi::test_pivoting;
using adi::test::ScopedEnv;

class PivotingXtileCuda : public adi::test::CudaTest {};

template <class T>
std::vector<T> solve_route(const tp::Case<T>& k0, const char* route, bool in_place) {
  const ScopedEnv env("ADI_PIVOTING_ROUTE", route);
  auto k = k0;
  adi::TridiagonalOptions o;
  o.pivoting = adi::Pivoting::partial;
  tp::solve_on_device(k, o, in_place);
  return k.u;
}

template <class T>
void xtile_case(int layout, tp::Family f, index_t n, index_t count, bool shared, const char* bytes,
                const char* form) {
  const ScopedEnv width("ADI_PIVOTING_XTILE_BYTES", bytes);
  const ScopedEnv form_env("ADI_PIVOTING_XTILE_FORM", form);
  const bool in_place = n % 2 == 1;
  const auto k = tp::make_case<T>(tp::x_lines(layout, n, count), f, false, shared, 1000 * n + 10 * count + layout);
  const std::string what = std::string(sizeof(T) == 4 ? "fp32" : "fp64") + " bytes " + bytes + " " + form + " layout " +
                           std::to_string(layout) + " " + tp::family_name(f) + " n " + std::to_string(n) + " x " +
                           std::to_string(k.lines.lines()) + (shared ? " shared" : "") + (in_place ? " in place" : "");
  const std::vector<T> got = solve_route(k, "xtile", in_place);
  const std::vector<T> ref = solve_route(k, "thread", in_place);
  std::size_t differ = 0;
  for (std::size_t e = 0; e < ref.size(); ++e) differ += std::memcmp(&ref[e], &got[e], sizeof(T)) != 0;
  EXPECT_EQ(differ, 0u) << what << ": against the thread route, bit for bit (whole array)";
  std::string detail;
  EXPECT_LE(tp::worst_ratio(k, got, detail), 10.0) << what << ": " << detail;
}

// (form, bytes): the default first, then the forms compiled only with ADI_CUDA_UNROLL_ALL.
struct XtileForm {
  const char* form;
  const char* bytes;
};
std::vector<XtileForm> compiled_forms() {
  if (!adi::cuda_backend::timing_forms_compiled()) return {{"recompute", "64"}};
  return {{"recompute", "64"}, {"recompute", "32"}, {"store", "64"}, {"store", "32"}};
}
constexpr const char* kGatedForms =
    "the X-tile forms kept for measurement (ADI_PIVOTING_XTILE_FORM=store with 64- and 32-byte chunks, "
    "recompute with ADI_PIVOTING_XTILE_BYTES=32; the default recompute form with 64-byte chunks checked)";

template <class T>
void xtile_sweep(const char* bytes, const char* form) {
  for (index_t n : {1, 2, 3, 8, 9, 16, 17, 31, 33, 255, 256, 257})
    for (bool shared : {false, true}) {
      for (index_t count : {1, 33, 131}) xtile_case<T>(0, tp::Family::random_signs, n, count, shared, bytes, form);
      xtile_case<T>(1, tp::Family::tiny_diagonal, n, 40, shared, bytes, form);
      xtile_case<T>(0, tp::Family::toeplitz, n, 70, shared, bytes, form);
      xtile_case<T>(1, tp::Family::dominant, n, 15, shared, bytes, form);
    }
}

TEST_F(PivotingXtileCuda, BitIdenticalToThreadRoute) {
  for (const XtileForm& f : compiled_forms()) {
    xtile_sweep<float>(f.bytes, f.form);
    xtile_sweep<double>(f.bytes, f.form);
  }
  ADI_REQUIRE_COMPARISON_FORMS(kGatedForms);
}

// Small, for compute-sanitizer memcheck and racecheck (scripts/gpu_pivoting_check.sh --xtile):
// a partial warp and a partial block, a chunk edge, shared bands, in place.
TEST_F(PivotingXtileCuda, Small) {
  for (const XtileForm& f : compiled_forms()) {
    xtile_case<float>(0, tp::Family::random_signs, 33, 37, false, f.bytes, f.form);
    xtile_case<double>(1, tp::Family::tiny_diagonal, 17, 40, true, f.bytes, f.form);
    xtile_case<double>(0, tp::Family::random_signs, 2, 5, false, f.bytes, f.form);
  }
  ADI_REQUIRE_COMPARISON_FORMS(kGatedForms);
}

// A singular line (a zero row) throws SingularSystem naming it, as the thread route does.
TEST_F(PivotingXtileCuda, SingularLineNamed) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "xtile");
  for (const XtileForm& f : compiled_forms()) {
    if (std::string(f.bytes) != "64") continue;  // (the forms; the chunk width: the tests above)
    const char* form = f.form;
    const ScopedEnv form_env("ADI_PIVOTING_XTILE_FORM", form);
    for (index_t n : {1, 33, 257}) {
      auto k = tp::make_case<double>(tp::x_lines(0, n, 40), tp::Family::dominant, false, false, 9 + n);
      const std::size_t e = static_cast<std::size_t>(k.lines.offset(35) + n / 2);
      k.a[e] = k.b[e] = k.c[e] = 0;
      adi::TridiagonalOptions o;
      o.pivoting = adi::Pivoting::partial;
      try {
        tp::solve_on_device(k, o, false);
        ADD_FAILURE() << form << " n " << n << ": no SingularSystem";
      } catch (const adi::SingularSystem& err) {
        EXPECT_EQ(err.system(), 35) << form << " n " << n << ": " << err.what();  // the line (located on the host)
      }
    }
  }
  ADI_REQUIRE_COMPARISON_FORMS("the X-tile store form (ADI_PIVOTING_XTILE_FORM=store; the recompute form checked)");
}

}  // namespace
