// Kernel::cuda_pivoting and TridiagonalOptions::pivoting on a CUDA device: the same cases
// as tests/solvers/cpu/test_pivoting_cpu.cpp (non-dominant families, every layout of the
// plan, shared bands, periodic, sizes 1 .. 257 and one line of 10^6, fp32 and fp64), within
// 10x of LAPACKE ?gtsv / ?gesv (or eps cond(A, x) where LAPACK's own luck is better,
// tests/solvers/pivoting_cases.hpp); the issue-23 cases throw UnstableSystem with pivoting =
// none and are solved with automatic (out of place; in place it throws, documented).
// cuda_pivoting has seven routes, chosen by layout (solvers/cuda/pivoting_thread.cuh):
// contiguous lines the shared-memory tile kernel (layouts 0 and 3), few long lines the
// partition method (PartitionRoute*), the rest (Y/Z, interleaved, gathers, periodic lines)
// one thread per line; the staged, in-block partition and X-tile kernels are forced
// (ForcedRoutesWithinTenTimesLapack, StagedSmall; regpart and xtile have their own suites,
// test_pivoting_regpart_cuda.cpp, test_pivoting_xtile_cuda.cpp).
// Outputs are poisoned with NaN. Skips loudly without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "adi/error.hpp"
#include "adi/field.hpp"
#include "adi/large_tridiagonal.hpp"
#include "adi/tridiagonal.hpp"
#include "adi/variable_batch.hpp"
#include "adi/variable_tridiagonal.hpp"
#include "tests/comparison_forms_skip.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/scoped_env.hpp"
#include "tests/solvers/cuda/pivoting_device_solve.hpp"
#include "tests/solvers/pivoting_cases.hpp"

namespace {

using adi::Box3;
using adi::index_t;
using adi::Kernel;
using adi::LineSet;
using adi::Pivoting;
using adi::TridiagonalOptions;
using adi::TridiagonalPlan;
namespace tp = adi::test_pivoting;
using adi::test::ScopedEnv;

class PivotingCuda : public adi::test::CudaTest {};

// Stop 35: a refinement graph that cannot be built throws here instead of falling back to the
// gated launches with a line on stderr (solvers/cuda/pivoting_partition.cuh, pivoting_refine_graph).
const ScopedEnv kRefineGateStrict("ADI_PIVOTING_REFINE_GATE_STRICT", "1");

LineSet make_lines(int layout, index_t n, index_t count) {
  switch (layout) {
    case 0: return adi::to_lines(adi::StridedLines::contiguous(n, count));
    case 1: return adi::to_lines(adi::StridedLines{n, count, 3, 3 * n + 5});
    case 2: return adi::to_lines(adi::InterleavedBatch{n, count});
    case 3: return adi::to_lines(adi::BoxLines{Box3{n, 3, 5, n + 2, (n + 2) * 4}, adi::Axis::x});
    case 4: return adi::to_lines(adi::BoxLines{Box3{5, n, 3, 7, 7 * (n + 1)}, adi::Axis::y});
    default: return adi::to_lines(adi::BoxLines{Box3{6, 3, n, 7, 28}, adi::Axis::z});
  }
}

using tp::solve_on_device;
using tp::up;

// Solves out of place and expects no error and an answer within 10x of LAPACK's.
template <class T>
void expect_within_lapack(tp::Case<T>& k, const TridiagonalOptions& o, const std::string& where) {
  try {
    solve_on_device(k, o, false);
  } catch (const adi::Error& e) {
    ADD_FAILURE() << where << ": threw " << e.what();
    return;
  }
  std::string detail;
  EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << where << ": " << detail;
}

template <class T>
void run_all(Pivoting piv,
             std::initializer_list<tp::Family> families = {tp::Family::tiny_diagonal, tp::Family::random_signs,
                                                           tp::Family::toeplitz, tp::Family::dominant}) {
  for (int layout = 0; layout < 6; ++layout)
    for (tp::Family f : families)
      for (index_t n : {1, 2, 3, 31, 33, 255, 257})
        for (bool periodic : {false, true})
          for (bool shared : {false, true}) {
            const LineSet l = make_lines(layout, n, 19);
            TridiagonalOptions o;
            o.periodic = periodic;
            o.pivoting = piv;
            auto k = tp::make_case<T>(l, f, periodic, shared, 100 * n + layout);
            // automatic on a device re-solves out of place only
            solve_on_device(k, o, piv == Pivoting::partial && n % 2 == 1);
            std::string detail;
            EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
                << "layout " << layout << " " << tp::family_name(f) << " n " << n << (periodic ? " periodic" : "")
                << (shared ? " shared" : "") << ": " << detail;
          }
}

TEST_F(PivotingCuda, PartialWithinTenTimesLapack) {
  run_all<float>(Pivoting::partial);
  run_all<double>(Pivoting::partial);
}

// automatic on whole batches of the dominant family (Thomas is right there; the mixed
// batches of the issue's families are AutomaticFallBack's).
TEST_F(PivotingCuda, AutomaticWithinTenTimesLapackOnDominantLines) {
  run_all<float>(Pivoting::automatic, {tp::Family::dominant});
  run_all<double>(Pivoting::automatic, {tp::Family::dominant});
}

TEST_F(PivotingCuda, OneLineOfAMillion) {
  TridiagonalOptions o;
  o.pivoting = Pivoting::partial;
  auto k = tp::make_case<double>(adi::to_lines(adi::StridedLines::contiguous(1000000, 1)),
                                 tp::Family::tiny_diagonal, false, false, 3);
  solve_on_device(k, o, false);
  std::string detail;
  EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << detail;
}

// The partition route (few long lines, not periodic): one line of 2^20 + 3, three lines of
// 40000 and 4097 rows (the threshold), every family, fp32 and fp64, shared bands or not,
// in place or not. Blocks that are nearly singular (tiny diagonals: an odd last block;
// random signs: one in ~10^4 blocks) send the solve to the exact per-line kernel, so every
// case must be within the yardstick whichever way it went.
template <class T>
void run_partition(tp::Family f, index_t n, index_t count) {
  for (bool shared : {false, true})
    for (bool in_place : {false, true}) {
      const LineSet l = adi::to_lines(adi::StridedLines::contiguous(n, count));
      TridiagonalOptions o;
      o.pivoting = Pivoting::partial;
      auto k = tp::make_case<T>(l, f, false, shared, 7 * n + count + shared);
      solve_on_device(k, o, in_place);
      std::string detail;
      EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
          << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << tp::family_name(f) << " n " << n << " x " << count
          << (shared ? " shared" : "") << (in_place ? " in place" : "") << ": " << detail;
    }
}

TEST_F(PivotingCuda, PartitionRouteWithinTenTimesLapack) {
  for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz,
                       tp::Family::dominant, tp::Family::heat})
    for (auto [n, count] : {std::pair<index_t, index_t>{4097, 1}, {40000, 3}, {(1 << 20) + 3, 1}}) {
      run_partition<float>(f, n, count);
      run_partition<double>(f, n, count);
    }
}

// LargeTridiagonalPlan with pivoting = partial on one system of 2^20 + 1 (the partition route).
template <class T>
void large_plan_partial(tp::Family f, std::uint64_t seed) {
  const index_t n = (1 << 20) + 1;
  auto k = tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(n, 1)), f, false, false, seed);
  const adi::Executor dev = adi::Executor::cuda();
  adi::Array<T> a = up(k.a), b = up(k.b), c = up(k.c), d = up(k.d), u = up(k.u);
  adi::LargeTridiagonalOptions o;
  o.pivoting = Pivoting::partial;
  adi::LargeTridiagonalPlan<T> plan(dev, n, 1, 0, o);
  plan.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
  u.copy_to_host(k.u.data());
  std::string detail;
  EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
      << "large plan " << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << tp::family_name(f) << ": " << detail;
}

// The partition route's forms (ADI_PIVOTING_PARTITION_FORM = 0, 1; solvers/cuda/pivoting_partition.cuh;
// stop 33; form 1 the default) on the cases above and on lengths around the contiguous run of a warp (544 rows): a
// partial last warp, two lines, shared bands (which keep form 0's level-0 kernels), in place or
// not; and the large plan's route. Lines of 68 .. 1089 rows (the route forced): against LAPACK in
// PartitionRouteForcedWithinTenTimesLapack (stop 34), form 1 against form 0 bit for bit in
// PartitionFormsBitIdentical.
// (Form 0 with per-line bands is compiled only with -DADI_CUDA_UNROLL_ALL=ON: other builds check
// form 1 and then skip, naming form 0.)
const bool kPartitionForm0 = adi::cuda_backend::timing_forms_compiled();

TEST_F(PivotingCuda, PartitionFormsWithinTenTimesLapack) {
  for (const char* form : {"0", "1"}) {
    if (form[0] == '0' && !kPartitionForm0) continue;
    const ScopedEnv form_env("ADI_PIVOTING_PARTITION_FORM", form);
    SCOPED_TRACE(std::string("ADI_PIVOTING_PARTITION_FORM=") + form);
    for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz,
                         tp::Family::dominant})
      for (auto [n, count] : {std::pair<index_t, index_t>{4097, 1}, {40000, 3}, {(1 << 20) + 3, 1}, {17 * 544 + 33, 1},
                              {17 * 544, 2}}) {
        run_partition<float>(f, n, count);
        run_partition<double>(f, n, count);
      }
    for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::dominant}) large_plan_partial<float>(f, 13);
  }
  ADI_REQUIRE_COMPARISON_FORMS("ADI_PIVOTING_PARTITION_FORM=0 (form 1 checked)");
}

// Both forms on a few small cases, for compute-sanitizer (scripts/gpu_pivoting_check.sh): one
// line of 4097 (contiguous warps and a partial last one), 3 lines of 1089 (runs crossing lines:
// the general loads), one line of 70000 (two levels), tiny diagonals and random signs (weak:
// the fall-back), dominant lines, shared bands (form 0's kernels); form 1 also with the dominance
// test opted in (stop 34: the non-dominant lines then take the fall-back in place, and are refined
// out of place: h-refine's residual, second pass and update kernels under compute-sanitizer),
// under each gate of the refinement (stop 35, ADI_PIVOTING_REFINE_GATE: "1d" the default, the
// solve gate: the whole solve as one graph; "1l" the gated launches; stop 37 removed the graph
// gate and its "1g" pass, which memcheck flagged in runs s35/5, s36/2, s37/2 and s37/4).
TEST_F(PivotingCuda, PartitionFormsSmall) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "partition");
  for (const char* form : {"0", "1", "1d", "1l"}) {
    if (form[0] == '0' && !kPartitionForm0) continue;
    const ScopedEnv form_env("ADI_PIVOTING_PARTITION_FORM", std::string(form).substr(0, 1).c_str());
    const ScopedEnv dominance("ADI_PIVOTING_PARTITION_DOMINANCE", form[1] == '\0' ? "0" : "1");
    // Empty: the default gate (pivoting_refine_gate reads an empty value as unset).
    const ScopedEnv gate("ADI_PIVOTING_REFINE_GATE", form[1] == 'l' ? "launches" : "");
    for (auto [n, count] : {std::pair<index_t, index_t>{4097, 1}, {1089, 3}, {70000, 1}})
      for (tp::Family f : {tp::Family::random_signs, tp::Family::tiny_diagonal, tp::Family::dominant}) {
        run_partition<float>(f, n, count);
        run_partition<double>(f, n, count);
      }
  }
  ADI_REQUIRE_COMPARISON_FORMS("ADI_PIVOTING_PARTITION_FORM=0 (form 1 checked)");
}

// Stop 36: the narrowest case of the graph gate's memcheck reports (runs s35/5, s36/2, s37/2:
// invalid reads in the refinement's residual kernel in its IF node's body, on PartitionFormsSmall's
// "1d" pass: 3 lines of 1089 rows, random signs, fp32, shared bands, out of place), now under the
// default gate (the solve gate: stop 37 removed the graph gate; docs/pivoting.md "Stop 37"), for a
// quick memcheck: per-line and shared bands, in place or not (four solves; stop 36's variants on
// streams, kept arrays and scopes went with the graph gate).
TEST_F(PivotingCuda, PartitionRefineGraphMemcheck) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "partition");
  const ScopedEnv form("ADI_PIVOTING_PARTITION_FORM", "1");
  const ScopedEnv dominance("ADI_PIVOTING_PARTITION_DOMINANCE", "1");
  run_partition<float>(tp::Family::random_signs, 1089, 3);
}

// Issue 23 / stop 34: the route forced on lines of 68 .. 4097 rows (the lengths of
// PartitionFormsBitIdentical), every family, fp32 / fp64, one and three lines, per-line and shared
// bands, in place or not, against LAPACK. Stop 33 compared these with form 0 only: the route
// came out above 10x LAPACK on a few lines in a hundred (fp32 random signs, one shared line of
// 1089: 22.4x). With the dominance test forced on (ADI_PIVOTING_PARTITION_DOMINANCE=1) lines that
// are not dominant-like (common::partition_dominance_unsafe) are refined out of place and take the
// exact fall-back in place; dominant ones stay on the route. By default (stop 35) the test is on
// out of place only: in place the route keeps them (docs/pivoting.md, "Stop 35").
TEST_F(PivotingCuda, PartitionRouteForcedWithinTenTimesLapack) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "partition");
  const ScopedEnv dominance("ADI_PIVOTING_PARTITION_DOMINANCE", "1");
  for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz,
                       tp::Family::dominant, tp::Family::heat})
    for (index_t n : {68, 69, 255, 257, 543, 544, 545, 1089, 4097})
      for (index_t count : {1, 3}) {
        run_partition<float>(f, n, count);
        run_partition<double>(f, n, count);
      }
}

// Stop 34, refinement: with the dominance test on (forced here; the default out of place since
// stop 35, so PartitionRouteWithinTenTimesLapack and PartitionFormsWithinTenTimesLapack refine
// too), out of place, lines it flags are refined once on the device (residual in higher
// precision, the route again, x += e; launch_pivoting_partition) instead of the exact fall-back;
// in place they still take the fall-back. The route's lengths (4097, 40000 x 3: the issue families, per-line and
// shared bands, in place or not) and the large plan on 2^20 + 1 (Toeplitz, random signs).
// Under each gate of the refinement (stop 35, ADI_PIVOTING_REFINE_GATE = launches | solve).
TEST_F(PivotingCuda, PartitionRefinementWithinTenTimesLapack) {
  const ScopedEnv dominance("ADI_PIVOTING_PARTITION_DOMINANCE", "1");
  for (const char* gate : {"launches", "solve"}) {
    const ScopedEnv gate_env("ADI_PIVOTING_REFINE_GATE", gate);
    SCOPED_TRACE(std::string("ADI_PIVOTING_REFINE_GATE=") + gate);
    for (tp::Family f : {tp::Family::toeplitz, tp::Family::random_signs, tp::Family::tiny_diagonal, tp::Family::heat})
      for (auto [n, count] : {std::pair<index_t, index_t>{4097, 1}, {40000, 3}}) {
        run_partition<float>(f, n, count);
        run_partition<double>(f, n, count);
      }
    for (tp::Family f : {tp::Family::toeplitz, tp::Family::random_signs}) {
      large_plan_partial<float>(f, 21);
      large_plan_partial<double>(f, 22);
    }
  }
}

// Stop 35: the refinement's gates (ADI_PIVOTING_REFINE_GATE; stop 36: and the solve gate's graph
// without the IF node) run the same kernels on the same values, so their answers agree bit for
// bit, refined (Toeplitz: every line flagged) or not
// (dominant: nothing flagged, the route's answer); one plan solving into 9 output arrays in
// turn and the first again, twice (the solve gate caches a graph per pointer set, 8 at most:
// the ninth array evicts one, the second round rebuilds them; a cached graph must not hold
// stale pointers).
template <class T>
void refinement_gates_agree(tp::Family f, index_t n, index_t count) {
  const auto k = tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(n, count)), f, false, false, 9 * n);
  const adi::Executor dev = adi::Executor::cuda();
  adi::Array<T> a = up(k.a), b = up(k.b), c = up(k.c), d = up(k.d);
  std::vector<adi::Array<T>> outs;
  constexpr int kOuts = 9;
  for (int i = 0; i < kOuts; ++i) outs.push_back(up(k.u));  // NaN-poisoned
  TridiagonalOptions o;
  o.pivoting = Pivoting::partial;
  std::vector<T> ref, got(k.u.size());
  std::string detail;
  // Stop 36: also the solve gate's graph without the IF node (ADI_PIVOTING_REFINE_GRAPH_IF=0,
  // memcheck's diagnosis: the same kernels in the graph itself, gated on the device flag).
  for (const std::string gate : {"launches", "solve", "solve, no IF node"}) {
    const ScopedEnv gate_env("ADI_PIVOTING_REFINE_GATE", gate.substr(0, gate.find(',')).c_str());
    // Empty: the IF node (pivoting_refine_env reads only "0").
    const ScopedEnv if_node("ADI_PIVOTING_REFINE_GRAPH_IF", gate.find("no IF") != std::string::npos ? "0" : "");
    TridiagonalPlan<T> plan(dev, k.lines, o);
    for (int round = 0; round < 2; ++round)
      for (int i = 0; i <= kOuts; ++i) {
        adi::Array<T>& u = outs[static_cast<std::size_t>(i % kOuts)];
        u.copy_from_host(k.u.data());  // poisoned again
        plan.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
        u.copy_to_host(got.data());
        if (ref.empty()) {
          ref = got;
          auto kk = k;
          kk.u = got;
          EXPECT_LE(tp::worst_ratio(kk, kk.u, detail), 10.0) << tp::family_name(f) << ": " << detail;
          continue;
        }
        std::size_t differ = 0;
        for (std::size_t j = 0; j < ref.size(); ++j) differ += std::memcmp(&ref[j], &got[j], sizeof(T)) != 0;
        EXPECT_EQ(differ, 0u) << "gate " << gate << " round " << round << " output " << i << " against launches, "
                              << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << tp::family_name(f) << " n " << n << " x "
                              << count;
      }
  }
}
TEST_F(PivotingCuda, PartitionRefinementGatesAgree) {
  const ScopedEnv dominance("ADI_PIVOTING_PARTITION_DOMINANCE", "1");
  for (tp::Family f : {tp::Family::toeplitz, tp::Family::dominant}) {
    refinement_gates_agree<float>(f, 40000, 3);
    refinement_gates_agree<double>(f, 4097, 1);
  }
}

// The dominance test never fires on dominant lines (stop 34's sweep; here on the device, through
// the refinement): the answers with the test (ADI_PIVOTING_PARTITION_DOMINANCE unset: the
// default; 1: on, under each gate) are the route's without it (0) bit for bit, on dominant lines
// and the heat operator r = 1e4, the route's lengths, fp32 / fp64, per-line and shared bands, in
// place or not.
TEST_F(PivotingCuda, PartitionDominanceNeverFiresOnDominantLines) {
  auto run = [](auto zero, tp::Family f, index_t n, index_t count, bool shared, bool in_place) {
    using T = decltype(zero);
    const auto k0 =
        tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(n, count)), f, false, shared, 3 * n + shared);
    TridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    std::vector<T> ref;
    for (const char* mode : {"0", "unset", "1 launches", "1 solve"}) {
      // "unset": empty, the default (pivoting_partition_dominance and pivoting_refine_gate read
      // an empty value as unset), whatever the process was started with.
      const bool unset = std::string(mode) == "unset";
      const ScopedEnv dominance("ADI_PIVOTING_PARTITION_DOMINANCE", unset ? "" : std::string(mode).substr(0, 1).c_str());
      const ScopedEnv gate("ADI_PIVOTING_REFINE_GATE", mode[0] == '1' ? mode + 2 : "");
      auto k = k0;
      solve_on_device(k, o, in_place);
      if (ref.empty()) {
        ref = k.u;
        std::string detail;
        EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << tp::family_name(f) << ": " << detail;
        continue;
      }
      std::size_t differ = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) differ += std::memcmp(&ref[i], &k.u[i], sizeof(T)) != 0;
      EXPECT_EQ(differ, 0u) << "ADI_PIVOTING_PARTITION_DOMINANCE=" << mode << " against 0, "
                            << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << tp::family_name(f) << " n " << n << " x "
                            << count << (shared ? " shared" : "") << (in_place ? " in place" : "");
    }
  };
  for (tp::Family f : {tp::Family::dominant, tp::Family::heat})
    for (auto [n, count] : {std::pair<index_t, index_t>{4097, 1}, {40000, 3}, {(1 << 20) + 3, 1}})
      for (bool shared : {false, true})
        for (bool in_place : {false, true}) {
          run(0.0f, f, n, count, shared, in_place);
          run(0.0, f, n, count, shared, in_place);
        }
}

// Both forms run the same arithmetic on the same rows (partition_reduce_rows,
// partition_fill_solve): form 1's answers must be form 0's bit for bit, contiguous or not,
// with the fall-back (tiny diagonals: weak blocks) or without.
TEST_F(PivotingCuda, PartitionFormsBitIdentical) {
  ADI_REQUIRE_COMPARISON_FORMS("ADI_PIVOTING_PARTITION_FORM=0, form 1's reference here,");
  auto run = [](auto zero, tp::Family f, index_t n, index_t count, bool forced, bool shared = false) {
    using T = decltype(zero);
    // Empty: the layout's own route (pivoting_route reads an empty value as unset).
    const ScopedEnv route("ADI_PIVOTING_ROUTE", forced ? "partition" : "");
    const auto k0 =
        tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(n, count)), f, false, shared, 5 * n + shared);
    std::vector<T> ref;
    for (const char* form : {"0", "1"}) {
      const ScopedEnv form_env("ADI_PIVOTING_PARTITION_FORM", form);
      auto k = k0;
      TridiagonalOptions o;
      o.pivoting = Pivoting::partial;
      solve_on_device(k, o, false);
      if (ref.empty()) {
        ref = k.u;
        continue;
      }
      std::size_t differ = 0;
      for (std::size_t i = 0; i < ref.size(); ++i)
        differ += std::memcmp(&ref[i], &k.u[i], sizeof(T)) != 0;
      EXPECT_EQ(differ, 0u) << "form " << form << " against form 0, " << (sizeof(T) == 4 ? "fp32 " : "fp64 ")
                            << tp::family_name(f) << " n " << n << " x " << count << (shared ? " shared" : "");
    }
  };
  for (tp::Family f : {tp::Family::random_signs, tp::Family::tiny_diagonal, tp::Family::dominant}) {
    run(0.0f, f, (1 << 20) + 3, 1, false);
    run(0.0, f, (1 << 20) + 3, 1, false);
    run(0.0f, f, 40000, 3, false);
    run(0.0, f, 70001, 1, false);
    run(0.0f, f, 1089, 3, true);
  }
  // The route forced on lines around a warp's run of 544 rows (contiguous warps, a partial
  // last one, runs crossing lines), per-line and shared bands.
  for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz})
    for (index_t n : {68, 69, 255, 257, 543, 544, 545, 1089})
      for (index_t count : {1, 3})
        for (bool shared : {false, true}) {
          run(0.0f, f, n, count, true, shared);
          run(0.0, f, n, count, true, shared);
        }
}

// The large plan's pivoting route is cuda_pivoting on its systems: one system of 2^20 + 1.
TEST_F(PivotingCuda, LargePlanPartialPivoting) {
  for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::dominant}) large_plan_partial<double>(f, 11);
}

// One small case per route, for compute-sanitizer (scripts/gpu_pivoting_check.sh): the tile
// kernel (33 contiguous lines of 33 and 257 rows), one thread per line (Y lines, periodic
// lines), the partition route (one line of 4097 and 3 lines of 5000 with tiny diagonals,
// so its weak blocks take the fall-back too).
// StagedSmall: the staged kernel alone (racecheck in the script).
TEST_F(PivotingCuda, EveryRouteSmall) {
  auto check = [](auto zero, const LineSet& l, tp::Family f, bool periodic, bool shared) {
    using T = decltype(zero);
    TridiagonalOptions o;
    o.periodic = periodic;
    o.pivoting = Pivoting::partial;
    auto k = tp::make_case<T>(l, f, periodic, shared, 5 * l.n + periodic);
    solve_on_device(k, o, false);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << "n " << l.n << " x " << l.lines() << ": " << detail;
  };
  for (bool shared : {false, true}) {
    for (index_t n : {33, 257}) {
      check(0.0f, make_lines(0, n, 33), tp::Family::random_signs, false, shared);
      check(0.0, make_lines(0, n, 33), tp::Family::random_signs, false, shared);
    }
    check(0.0, make_lines(4, 255, 33), tp::Family::tiny_diagonal, false, shared);
    check(0.0, make_lines(4, 31, 19), tp::Family::random_signs, false, shared);
    check(0.0, make_lines(0, 31, 19), tp::Family::toeplitz, true, shared);
    check(0.0, adi::to_lines(adi::StridedLines::contiguous(4097, 1)), tp::Family::random_signs, false, shared);
    check(0.0f, adi::to_lines(adi::StridedLines::contiguous(5000, 3)), tp::Family::tiny_diagonal, false, shared);
  }
}

// The staged kernel on a few small cases: X and Y lines (coalesced along and across lines),
// a partial last block of lines, shared bands, fp32 / fp64, in place (odd n) or not.
TEST_F(PivotingCuda, StagedSmall) {
  ADI_REQUIRE_COMPARISON_FORMS("the staged route (ADI_PIVOTING_ROUTE=staged)");
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "staged");
  auto check = [](auto zero, int layout, index_t n, index_t count, bool shared) {
    using T = decltype(zero);
    TridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    auto k = tp::make_case<T>(make_lines(layout, n, count), tp::Family::random_signs, false, shared, 7 * n + layout);
    solve_on_device(k, o, n % 2 == 1);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
        << "layout " << layout << " n " << n << (shared ? " shared" : "") << ": " << detail;
  };
  for (bool shared : {false, true})
    for (index_t n : {2, 33, 256}) {
      check(0.0f, 0, n, 37, shared);
      check(0.0, 4, n, 11, shared);
      check(0.0, 0, n, 19, shared);
      check(0.0f, 5, n, 9, shared);
    }
}

// The pair route (ADI_PIVOTING_ROUTE=pair, solvers/cuda/pivoting_pair.cuh: two threads per line
// from both ends, U in shared memory; automatic's on Y/Z lines since stop 53) forced on every
// layout the plan takes, sizes 1 .. 257 (odd sizes: the top lane from an identity row; below 4 no
// full step at all; K % 8 = 0 .. 7), 37 lines (two full half-warps and a partial one), the four
// families, per-line and shared bands, in place on odd sizes, both forms (and, in builds with the
// comparison forms, chunks of 4 and 16 rows) on X and Y lines; within 10x of LAPACK.
TEST_F(PivotingCuda, PairRouteEveryLayoutAndSize) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "pair");
  const bool forms = adi::cuda_backend::timing_forms_compiled();
  // Both block layouts where the build has both (else each precision's own: fp32 split, fp64 half).
  const std::vector<const char*> layouts = forms ? std::vector<const char*>{"half", "split"}
                                                 : std::vector<const char*>{""};
  auto check = [](auto zero, int layout, tp::Family f, index_t n, bool shared, const char* form, const char* chunk) {
    using T = decltype(zero);
    const ScopedEnv form_env("ADI_PIVOTING_PAIR_FORM", form), chunk_env("ADI_PIVOTING_PAIR_ROWS", chunk);
    TridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    auto k = tp::make_case<T>(make_lines(layout, n, 37), f, false, shared, 11 * n + layout);
    solve_on_device(k, o, n % 2 == 1);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
        << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << "layout " << layout << " " << tp::family_name(f) << " n " << n
        << (shared ? " shared" : "") << " form " << form << " chunk " << chunk << ": " << detail;
  };
  for (int layout = 0; layout < 6; ++layout)
    for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz,
                         tp::Family::dominant})
      for (index_t n : {1, 2, 3, 4, 5, 6, 31, 33, 255, 256, 257})
        for (bool shared : {false, true})
          for (int v = 0; v < ((layout == 0 || layout == 4) ? (forms ? 6 : 2) : 1); ++v)
            for (const char* lay : layouts) {
            const ScopedEnv lay_env("ADI_PIVOTING_PAIR_LAYOUT", lay);
            const char* form = v & 1 ? "yu" : "shared";
            const char* chunk = v < 2 ? "8" : v < 4 ? "4" : "16";
            check(0.0f, layout, f, n, shared, form, chunk);
            check(0.0, layout, f, n, shared, form, chunk);
          }
}

// The pair route on X lines whose chunks are whole 16-byte vectors (stop 54, the Vec kernels:
// pivoting_pair_vec_fits; lines of 16 .. 512 rows, and 100 in fp64) and on lengths that are not
// (100 in fp32, 255, 257: a value a load), in place and out of place, both forms, every family.
TEST_F(PivotingCuda, PairRouteVectorRows) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "pair");
  auto check = [](auto zero, tp::Family f, index_t n, bool shared, const char* form, bool in_place) {
    using T = decltype(zero);
    const ScopedEnv form_env("ADI_PIVOTING_PAIR_FORM", form);
    TridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    auto k = tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(n, 37)), f, false, shared, 7 * n + 1);
    solve_on_device(k, o, in_place);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
        << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << tp::family_name(f) << " n " << n << (shared ? " shared" : "")
        << " form " << form << (in_place ? " in place" : "") << ": " << detail;
  };
  for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz,
                       tp::Family::dominant})
    for (index_t n : {16, 32, 64, 100, 128, 255, 256, 257, 512})
      for (bool shared : {false, true})
        for (const char* form : {"shared", "yu"}) {
          const bool in_place = n % 3 == 1;
          check(0.0f, f, n, shared, form, in_place);
          check(0.0, f, n, shared, form, in_place);
        }
}

// The pair route on two small cases (in place Y lines, Z lines with shared bands; both forms),
// for compute-sanitizer memcheck and racecheck.
TEST_F(PivotingCuda, PairRouteSmall) {
  const ScopedEnv route("ADI_PIVOTING_ROUTE", "pair");
  for (const char* form : {"shared", "yu"}) {  // (fp64 in the half layout, fp32 split: both exchanges)
    const ScopedEnv form_env("ADI_PIVOTING_PAIR_FORM", form);
    auto k = tp::make_case<double>(make_lines(4, 33, 19), tp::Family::random_signs, false, false, 5);
    TridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    solve_on_device(k, o, true);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << form << ": " << detail;
    auto g = tp::make_case<float>(make_lines(5, 256, 40), tp::Family::tiny_diagonal, false, true, 6);
    solve_on_device(g, o, false);
    EXPECT_LE(tp::worst_ratio(g, g.u, detail), 10.0) << form << ": " << detail;
    // X lines in 16-byte vectors (the Vec kernels), in place, both precisions
    auto x = tp::make_case<float>(make_lines(0, 64, 40), tp::Family::random_signs, false, false, 7);
    solve_on_device(x, o, true);
    EXPECT_LE(tp::worst_ratio(x, x.u, detail), 10.0) << form << ": " << detail;
    auto x2 = tp::make_case<double>(make_lines(0, 64, 20), tp::Family::toeplitz, false, true, 8);
    solve_on_device(x2, o, false);
    EXPECT_LE(tp::worst_ratio(x2, x2.u, detail), 10.0) << form << ": " << detail;
  }
}

// A singular line (one row of zeros) throws SingularSystem on every route: the block and
// partition routes see a weak partition, fall back to exact pivoting, and that reports it.
TEST_F(PivotingCuda, SingularLineThrowsOnEveryRoute) {
  for (auto [n, count] : {std::pair<index_t, index_t>{33, 40}, {257, 40}, {5000, 2}}) {
    auto k = tp::make_case<double>(adi::to_lines(adi::StridedLines::contiguous(n, count)), tp::Family::dominant,
                                   false, false, 3);
    const std::size_t row = static_cast<std::size_t>(n + n / 2);  // line 1, a middle row
    k.a[row] = k.b[row] = k.c[row] = 0;
    TridiagonalOptions o;
    o.pivoting = Pivoting::partial;
    EXPECT_THROW(solve_on_device(k, o, false), adi::SingularSystem) << "n " << n;
    if (n < 1000) {  // the pair route (forced): a zero pivot in either half, or where they meet
      const ScopedEnv route("ADI_PIVOTING_ROUTE", "pair");
      EXPECT_THROW(solve_on_device(k, o, false), adi::SingularSystem) << "pair route, n " << n;
    }
  }
}

// Every route forced (ADI_PIVOTING_ROUTE, solvers/cuda/pivoting_thread.cuh) on the same
// contiguous lines of 255 and 257 rows: the thread and partition routes then run on lengths
// they would not get by default. (block and staged, forced for measurement only, are compiled
// only with -DADI_CUDA_UNROLL_ALL=ON: other builds check the others and then skip, naming them.)
TEST_F(PivotingCuda, ForcedRoutesWithinTenTimesLapack) {
  for (const char* route : {"thread", "tile", "block", "partition", "staged", "xtile", "pair"}) {
    const std::string r(route);
    if ((r == "block" || r == "staged") && !adi::cuda_backend::timing_forms_compiled()) continue;
    const ScopedEnv route_env("ADI_PIVOTING_ROUTE", route);
    for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz})
      for (index_t n : {255, 257})
        for (bool shared : {false, true}) {
          auto run = [&](auto zero) {
            using T = decltype(zero);
            TridiagonalOptions o;
            o.pivoting = Pivoting::partial;
            auto k = tp::make_case<T>(make_lines(0, n, 40), f, false, shared, 3 * n + shared);
            solve_on_device(k, o, n % 2 == 1);
            std::string detail;
            EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
                << route << " route, " << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << tp::family_name(f) << " n " << n
                << (shared ? " shared" : "") << ": " << detail;
          };
          run(0.0f);
          run(0.0);
        }
  }
  ADI_REQUIRE_COMPARISON_FORMS("the block and staged routes (thread, tile, partition, xtile checked)");
}

// automatic's fall-back on CUDA (adi/tridiagonal.cpp, run_cuda), both ways: the default
// (the kernels write the check's flag into pinned host memory, the host reads it after one
// synchronisation and re-solves with pivoting where it is set) and, for measurement,
// ADI_PIVOTING_FALLBACK=device (the pivoting kernel enqueued behind the Thomas kernel and
// gated on its device flag: the pivoted answer with check_pivots off too). A batch of
// dominant lines, none or one of them (line `bad`; with shared bands the shared band itself)
// replaced by an unsafe line of one of the issue's families: every line within 10x of
// LAPACK, fp32 and fp64, every size, layout (so every kernel the dispatch picks: the
// Thomas-PCR hybrids, PCR alone below 32 rows, the strided and transposed Thomas), per-line
// and shared bands, periodic or not; outputs poisoned with NaN.
enum class Unsafe { tiny_diagonal, issue, toeplitz };
const char* unsafe_name(Unsafe f) {
  return f == Unsafe::tiny_diagonal ? "tiny_diagonal" : f == Unsafe::issue ? "b = 1e-8, a = c = 1" : "toeplitz 0.6";
}

template <class T>
tp::Case<T> mixed_case(const LineSet& l, bool periodic, bool shared, index_t bad, std::uint64_t seed,
                       Unsafe fam = Unsafe::tiny_diagonal) {
  auto k = tp::make_case<T>(l, tp::Family::dominant, periodic, shared, seed);
  if (bad < 0) return k;
  if (bad >= l.lines()) throw std::logic_error("mixed_case: line " + std::to_string(bad) + " of " +
                                               std::to_string(l.lines()));
  std::mt19937_64 rng(seed + 1);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const index_t o = shared ? 0 : l.offset(bad);
  const index_t st = shared ? 1 : l.stride;
  for (index_t i = 0; i < l.n; ++i) {
    const auto e = static_cast<std::size_t>(o + i * st);
    if (fam == Unsafe::issue) {  // issue 23's table: cond_1 64 at n = 64
      k.a[e] = k.c[e] = T(1);
      k.b[e] = T(1e-8);
    } else {
      tp::row_coefficients(fam == Unsafe::toeplitz ? tp::Family::toeplitz : tp::Family::tiny_diagonal, rng, k.a[e],
                           k.b[e], k.c[e]);
    }
    if (!periodic && i == 0) k.a[e] = nan;
    if (!periodic && i == l.n - 1) k.c[e] = nan;
  }
  return k;
}

// Sets ADI_PIVOTING_FALLBACK for one scope (read when a plan is made): "device" or empty (the
// host's fall-back: the plans read anything but "device" so), whatever the process was started with.
struct FallbackMode : ScopedEnv {
  explicit FallbackMode(bool device) : ScopedEnv("ADI_PIVOTING_FALLBACK", device ? "device" : "") {}
};

TEST_F(PivotingCuda, AutomaticFallBack) {
  int cases = 0;
  auto run = [&](auto zero, int layout, index_t n, bool periodic, bool shared, bool check, index_t bad, Unsafe fam,
                 bool device) {
    using T = decltype(zero);
    // Periodic lines are measured against dense LAPACK / long double solves (O(n^3) a line):
    // 9 lines instead of 19 past 64 rows keep the test near a minute.
    const LineSet l = make_lines(layout, n, periodic && n > 64 ? 9 : 19);
    auto k = mixed_case<T>(l, periodic, shared, bad, 11 * n + layout + 100 * (bad + 1), fam);
    TridiagonalOptions o;
    o.periodic = periodic;
    o.pivoting = Pivoting::automatic;
    o.check_pivots = check;
    const std::string where = std::string(device ? "device" : "host") + " fall-back, " +
                              (sizeof(T) == 4 ? "fp32" : "fp64") + " layout " + std::to_string(layout) + " n " +
                              std::to_string(n) + (periodic ? " periodic" : "") + (shared ? " shared" : "") +
                              (check ? " check" : " no check") + " unsafe line " + std::to_string(bad) + " (" +
                              unsafe_name(fam) + ")";
    ++cases;
    expect_within_lapack(k, o, where);
  };
  for (bool device : {false, true}) {
    FallbackMode mode(device);
    for (int layout = 0; layout < 6; ++layout)
      for (index_t n : {1, 2, 3, 31, 33, 255, 257})
        for (bool periodic : {false, true})
          for (bool check : {false, true})
            for (bool shared : {false, true})
              for (index_t bad : {index_t{-1}, index_t{0}, index_t{7}}) {
                if (!check && !device && bad >= 0) continue;  // no flag, no fall-back (documented)
                if (shared && bad > 0) continue;              // one shared band: bad = 0 replaces it
                for (Unsafe fam : {Unsafe::tiny_diagonal, Unsafe::issue, Unsafe::toeplitz}) {
                  // All dominant: once; a later line (7): one family is enough.
                  if (bad != 0 && fam != Unsafe::tiny_diagonal) continue;
                  run(0.0f, layout, n, periodic, shared, check, bad, fam, device);
                  run(0.0, layout, n, periodic, shared, check, bad, fam, device);
                }
              }
  }
  std::printf("AutomaticFallBack: %d cases\n", cases);
}

// The device check never fires on dominant systems: pivoting = none with check_pivots on (an
// unsafe row throws UnstableSystem) over the dominant family of the tests, every layout, size,
// band kind, periodic or not, fp32 and fp64; and on the heat operator's bands (1 + 2r, -r),
// r = 0.1 .. 1e4, and one line of 2^17 (the large-system partition).
TEST_F(PivotingCuda, CheckNeverFiresOnDominantSystems) {
  auto none = [](auto& k, const std::string& where) {
    TridiagonalOptions o;
    o.periodic = k.periodic;
    o.pivoting = Pivoting::none;
    expect_within_lapack(k, o, where);
  };
  for (int layout = 0; layout < 6; ++layout)
    for (index_t n : {1, 2, 3, 31, 33, 255, 257, 1025})
      for (bool periodic : {false, true})
        for (bool shared : {false, true}) {
          if (periodic && n > 257) continue;  // dense O(n^3) yardstick
          const std::string where = "layout " + std::to_string(layout) + " n " + std::to_string(n) +
                                    (periodic ? " periodic" : "") + (shared ? " shared" : "");
          const LineSet l = make_lines(layout, n, 19);
          auto kf = tp::make_case<float>(l, tp::Family::dominant, periodic, shared, 31 * n + layout);
          none(kf, "fp32 " + where);
          auto kd = tp::make_case<double>(l, tp::Family::dominant, periodic, shared, 37 * n + layout);
          none(kd, "fp64 " + where);
          for (double r : {0.1, 1.0, 100.0, 1e4}) {
            for (auto* v : {&kf.a, &kf.c}) std::fill(v->begin(), v->end(), float(-r));
            std::fill(kf.b.begin(), kf.b.end(), float(1 + 2 * r));
            none(kf, "fp32 heat r = " + std::to_string(r) + " " + where);
          }
        }
  auto big = tp::make_case<double>(adi::to_lines(adi::StridedLines::contiguous(1 << 17, 1)), tp::Family::dominant,
                                   false, false, 5);
  none(big, "fp64 one line of 2^17");
}

// One plan, solves alternating between an unsafe and a safe batch: the flags are cleared
// before each solve, so a fall-back never leaks into the next solve, nor a stale flag into
// the errors.
TEST_F(PivotingCuda, AutomaticFallBackReusedPlan) {
  for (bool device : {false, true})
    for (bool check : {false, true}) {
      if (!check && !device) continue;
      FallbackMode mode(device);
      const LineSet l = make_lines(4, 33, 19);
      TridiagonalOptions o;
      o.pivoting = Pivoting::automatic;
      o.check_pivots = check;
      TridiagonalPlan<float> plan(adi::Executor::cuda(), l, o);
      // The layout holds 15 lines (a 5 x 33 x 3 box along y): line 18 (until stop 31) lay
      // past the arrays, so mixed_case wrote out of bounds of the host vectors.
      for (index_t bad : {index_t{5}, index_t{-1}, index_t{13}, index_t{-1}}) {
        auto k = mixed_case<float>(l, false, false, bad, 3 + bad);
        adi::Array<float> a = up(k.a), b = up(k.b), c = up(k.c), d = up(k.d), u = up(k.u);
        plan.solve(adi::Bands<float>{a.data(), b.data(), c.data()}, d.data(), u.data());
        u.copy_to_host(k.u.data());
        std::string detail;
        EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
            << (device ? "device" : "host") << " fall-back, unsafe line " << bad << ": " << detail;
      }
    }
}

// The large plan's check (LargeTridiagonalPlan, 3 systems of 5000 rows: the partition's
// device flag is published into pinned host memory by its direct kernel, which clears it;
// the host neither clears nor copies it, stop 32). One plan per option, reused over unsafe
// and safe batches: a flag lost would return Thomas's answer (automatic) or no error (none),
// a stale one would throw on the safe batch after an unsafe one. With two unsafe systems the
// first is named; in place automatic refuses; a dirty caller workspace is harmless.
TEST_F(PivotingCuda, LargePlanAutomaticFlag) {
  const index_t n = 5000, count = 3;
  const LineSet l = adi::to_lines(adi::StridedLines::contiguous(n, count));
  const adi::Executor dev = adi::Executor::cuda();
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const std::string prec = sizeof(T) == 4 ? "fp32" : "fp64";
    adi::LargeTridiagonalOptions o;  // automatic, check_pivots
    adi::LargeTridiagonalPlan<T> automatic(dev, n, count, n, o);
    o.pivoting = Pivoting::none;
    adi::LargeTridiagonalPlan<T> none(dev, n, count, n, o);
    adi::Array<char> dirty(static_cast<index_t>(automatic.workspace_bytes()), dev);
    dirty.copy_from_host(std::vector<char>(automatic.workspace_bytes(), char(0xff)).data());
    // bad: the unsafe systems (issue 23's b = 1e-8, a = c = 1), -1 none.
    for (std::pair<index_t, index_t> bad : {std::pair<index_t, index_t>{1, -1}, {-1, -1}, {2, -1}, {-1, -1},
                                            {1, 2}, {0, -1}, {-1, -1}}) {
      auto k = mixed_case<T>(l, false, false, bad.second, 17, Unsafe::issue);
      if (bad.first >= 0) {
        const auto first = mixed_case<T>(l, false, false, bad.first, 19, Unsafe::issue);
        const std::size_t o0 = static_cast<std::size_t>(l.offset(bad.first)), o1 = o0 + static_cast<std::size_t>(n);
        for (auto [to, from] : {std::pair{&k.a, &first.a}, {&k.b, &first.b}, {&k.c, &first.c}, {&k.d, &first.d}})
          std::copy(from->begin() + o0, from->begin() + o1, to->begin() + o0);
      }
      const std::string where = prec + " unsafe systems " + std::to_string(bad.first) + ", " +
                                std::to_string(bad.second);
      adi::Array<T> a = up(k.a), b = up(k.b), c = up(k.c), d = up(k.d), u = up(k.u);
      const adi::Bands<T> bands{a.data(), b.data(), c.data()};
      try {
        none.solve(bands, d.data(), u.data());
        if (bad.first >= 0) ADD_FAILURE() << "none: no UnstableSystem, " << where;
      } catch (const adi::UnstableSystem& e) {
        EXPECT_EQ(e.system(), bad.first) << "none, " << where << ": " << e.what();
      }
      for (bool user_ws : {false, true}) {
        u = up(k.u);
        if (user_ws)
          automatic.solve(bands, d.data(), u.data(), dirty.data(), automatic.workspace_bytes());
        else
          automatic.solve(bands, d.data(), u.data());
        u.copy_to_host(k.u.data());
        std::string detail;
        EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
            << "automatic, " << where << (user_ws ? ", dirty workspace" : "") << ": " << detail;
      }
      if (bad.first < 0) continue;
      try {
        automatic.solve(bands, d.data(), d.data());
        ADD_FAILURE() << "automatic in place: no UnstableSystem, " << where;
      } catch (const adi::UnstableSystem& e) {
        EXPECT_EQ(e.system(), bad.first) << "automatic in place, " << where << ": " << e.what();
      }
    }
  };
  run(0.0f);
  run(0.0);
}

// TridiagonalPlan's route for few long lines (Kernel::large_partition, 3 lines of 2^16 + 5):
// its check is published into the plan's pinned word (stop 33: it cleared and copied back a
// device word before), so a plan reused over unsafe and safe batches must name each unsafe
// batch's first unsafe line and never report a batch after it: none throws UnstableSystem
// naming the line, automatic re-solves out of place (within 10x LAPACK) and throws in place.
TEST_F(PivotingCuda, LargeRouteFlagReusedPlan) {
  const index_t n = (index_t(1) << 16) + 5, count = 3;
  const LineSet l = adi::to_lines(adi::StridedLines::contiguous(n, count));
  const adi::Executor dev = adi::Executor::cuda();
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const std::string prec = sizeof(T) == 4 ? "fp32" : "fp64";
    TridiagonalOptions o;  // automatic, check_pivots
    o.kernel = Kernel::large_partition;
    TridiagonalPlan<T> automatic(dev, l, o);
    o.pivoting = Pivoting::none;
    TridiagonalPlan<T> none(dev, l, o);
    for (index_t bad : {1, -1, 2, -1, 0, -1}) {
      auto k = mixed_case<T>(l, false, false, bad, 23, Unsafe::issue);
      const std::string where = prec + " unsafe line " + std::to_string(bad);
      adi::Array<T> a = up(k.a), b = up(k.b), c = up(k.c), d = up(k.d), u = up(k.u);
      const adi::Bands<T> bands{a.data(), b.data(), c.data()};
      try {
        none.solve(bands, d.data(), u.data());
        if (bad >= 0) ADD_FAILURE() << "none: no UnstableSystem, " << where;
      } catch (const adi::UnstableSystem& e) {
        EXPECT_EQ(e.system(), bad) << "none, " << where << ": " << e.what();
      }
      u = up(k.u);
      automatic.solve(bands, d.data(), u.data());
      u.copy_to_host(k.u.data());
      std::string detail;
      EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << "automatic, " << where << ": " << detail;
      if (bad < 0) continue;
      try {
        automatic.solve(bands, d.data(), d.data());
        ADD_FAILURE() << "automatic in place: no UnstableSystem, " << where;
      } catch (const adi::UnstableSystem& e) {
        EXPECT_EQ(e.system(), bad) << "automatic in place, " << where << ": " << e.what();
      }
    }
  };
  run(0.0f);
  run(0.0);
}

// A singular line under automatic: Thomas flags it, the fall-back meets the zero pivot, and
// check_pivots turns that into SingularSystem naming the line (without check_pivots no
// error: the documented trade). Also two lines of 5000 (the partition route, which cannot
// be gated, so it decides on the host in both modes).
TEST_F(PivotingCuda, AutomaticFallBackErrors) {
  for (bool device : {false, true}) {
    FallbackMode mode(device);
    for (int layout = 0; layout < 6; ++layout)
      for (index_t n : {2, 3, 31, 33, 255, 257}) {
        auto run = [&](auto zero) {
          using T = decltype(zero);
          const LineSet l = make_lines(layout, n, 19);
          auto k = mixed_case<T>(l, false, false, 3, 5 * n);
          const auto row = static_cast<std::size_t>(l.offset(3) + (n / 2) * l.stride);
          k.a[row] = k.b[row] = k.c[row] = 0;
          TridiagonalOptions o;
          o.pivoting = Pivoting::automatic;
          const std::string where = std::string(device ? "device" : "host") + " fall-back, layout " +
                                    std::to_string(layout) + " n " + std::to_string(n);
          try {
            solve_on_device(k, o, false);
            ADD_FAILURE() << "no SingularSystem, " << where;
          } catch (const adi::UnstableSystem& e) {
            ADD_FAILURE() << "UnstableSystem instead of SingularSystem, " << where << ": " << e.what();
          } catch (const adi::SingularSystem& e) {
            // The line; the row is -1 after pivoting on a device (as PlanConventionsCuda expects).
            EXPECT_EQ(e.system(), 3) << where << ": " << e.what();
          }
          o.check_pivots = false;
          EXPECT_NO_THROW(solve_on_device(k, o, false)) << where;
        };
        run(0.0f);
        run(0.0);
      }
    auto k = tp::make_case<double>(adi::to_lines(adi::StridedLines::contiguous(5000, 2)),
                                   tp::Family::tiny_diagonal, false, false, 9);
    TridiagonalOptions o;
    o.pivoting = Pivoting::automatic;
    solve_on_device(k, o, false);
    std::string detail;
    EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0)
        << (device ? "device" : "host") << " fall-back, two lines of 5000: " << detail;
  }
}

TEST_F(PivotingCuda, IssueTableCasesThrowWithoutPivoting) {
  // The device check (common::thomas_unsafe_on_device: |c*_i| > 4 in the CUDA Thomas loops and
  // the shared-band factors, |a|, |c| > 4 of each PCR level, the partition's growth test) must
  // fire on each of the issue's cases, per-line and shared bands, at every length the
  // dispatch treats differently (PCR alone below 32 rows, the hybrids, one long line).
  struct C {
    index_t n;
    double b, ac;
    bool periodic, fp32;
  };
  for (const C& c : {C{64, 1e-8, 1, false, false}, C{64, 1e-8, 1, false, true}, C{257, 1, 0.6, true, true},
                     C{2, 1e-8, 1, false, true}, C{3, 1e-8, 1, true, false}, C{31, 1e-8, 1, false, true},
                     C{31, 1, 0.6, true, true}, C{33, 1, 0.6, true, false}, C{255, 1e-8, 1, true, true},
                     C{index_t(1) << 18, 1e-8, 1, false, false}})
    for (bool shared : {false, true}) {
      const bool large = c.n > 4096;  // one line: the large-system partition
      if (large && shared) continue;
      auto run = [&](auto zero) {
        using T = decltype(zero);
        const std::string where = std::string(sizeof(T) == 4 ? "fp32" : "fp64") + " n " + std::to_string(c.n) +
                                  " b " + std::to_string(c.b) + " a = c = " + std::to_string(c.ac) +
                                  (c.periodic ? " periodic" : "") + (shared ? " shared" : "");
        auto k = tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(c.n, large ? 1 : 40)),
                                  tp::Family::dominant, c.periodic, shared, 1);
        for (std::size_t i = 0; i < k.b.size(); ++i) {
          k.a[i] = T(c.ac);
          k.b[i] = T(c.b);
          k.c[i] = T(c.ac);
        }
        TridiagonalOptions o;
        o.periodic = c.periodic;
        o.pivoting = Pivoting::none;
        EXPECT_THROW(solve_on_device(k, o, false), adi::UnstableSystem) << where;
        o.pivoting = Pivoting::automatic;
        EXPECT_THROW(solve_on_device(k, o, true), adi::UnstableSystem) << "in place, " << where;
        solve_on_device(k, o, false);
        std::string detail;
        EXPECT_LE(tp::worst_ratio(k, k.u, detail), 10.0) << where << ": " << detail;
      };
      if (c.fp32)
        run(0.0f);
      else
        run(0.0);
    }
}

// Variable-size batches on a device with pivoting = none (the check only: it reports the system): one system of the issue's family among dominant ones is
// named by its index (SingularSystem::system()), at lengths around a warp; an all-dominant
// batch passes without a word.
TEST_F(PivotingCuda, VariableBatchCheckNamesTheSystem) {
  const adi::Executor gpu = adi::Executor::cuda();
  for (int n : {2, 3, 31, 64, 257})
    for (index_t bad : {index_t{-1}, index_t{17}}) {
      const index_t count = 40;
      std::vector<int> sizes(static_cast<std::size_t>(count), n);
      adi::VariableBatchPlan batch(gpu, adi::BatchSizes{sizes.data(), count});
      const index_t span = batch.span(adi::CompactBatch{});
      std::vector<float> a(span, 0.3f), b(span, 1.0f), c(span, 0.3f), d(span, 1.0f);
      if (bad >= 0)
        for (index_t i = bad * n; i < (bad + 1) * n; ++i) {
          a[i] = c[i] = 1.0f;
          b[i] = 1e-8f;
        }
      adi::Array<float> da = up(a), db = up(b), dc = up(c), dd = up(d), du = up(d);
      adi::VariableTridiagonalOptions none;  // the check alone (automatic re-solves since stop 37)
      none.pivoting = Pivoting::none;
      adi::VariableTridiagonalPlan<float> plan(batch, adi::CompactBatch{}, none);
      const std::string where = "n " + std::to_string(n) + " unsafe system " + std::to_string(bad);
      try {
        plan.solve(adi::Bands<float>{da.data(), db.data(), dc.data()}, dd.data(), du.data());
        EXPECT_LT(bad, 0) << "no error, " << where;
      } catch (const adi::SingularSystem& e) {
        EXPECT_EQ(e.system(), bad) << where << ": " << e.what();
      }
    }
}

// Stop 37 (issue 23): partial pivoting of variable-size batches on a device (one thread per
// system, solvers/cuda/pivoting_variable.cuh, the core's pivot_line): non-dominant families,
// sizes 1, 2, 3, 31, 33, 255, 257 mixed in one batch (5 systems of each, interleaved), sorted and
// compact layouts, NaN-poisoned outputs, within 10x of LAPACK per size (tp::worst_ratio over the
// systems of that size; periodic: ?gesv on the dense matrix). automatic re-solves the batch after
// the Thomas check flags a system (out of place); partial runs in place too; plain and periodic.
template <class T>
void variable_within_lapack(tp::Family f, Pivoting piv, bool sorted, bool in_place, std::uint64_t seed,
                            bool periodic = false) {
  const std::vector<index_t> kinds = {1, 2, 3, 31, 33, 255, 257};
  const index_t reps = 5;
  std::vector<int> sizes;
  for (index_t r = 0; r < reps; ++r)
    for (index_t n : kinds) sizes.push_back(static_cast<int>(n));
  const index_t count = static_cast<index_t>(sizes.size());
  const adi::Executor gpu = adi::Executor::cuda();
  adi::VariableBatchPlan batch(gpu, adi::BatchSizes{sizes.data(), count});
  const adi::VariableBatchView& v = batch.host_view();
  auto at = [&](index_t s, index_t k) -> std::size_t {  // element k of system s
    if (!sorted) return static_cast<std::size_t>(v.offsets[s] + k);
    const index_t p = v.position[s];
    return static_cast<std::size_t>(v.chunk_offsets[p / v.chunk_width] + p % v.chunk_width + k * v.chunk_width);
  };
  const index_t span = sorted ? batch.span(adi::SortedInterleaved{}) : batch.span(adi::CompactBatch{});
  // One case per size: its line r is system r * kinds.size() + j.
  std::vector<tp::Case<T>> cases;
  for (std::size_t j = 0; j < kinds.size(); ++j)
    cases.push_back(tp::make_case<T>(adi::to_lines(adi::StridedLines::contiguous(kinds[j], reps)), f, periodic, false,
                                     seed + j));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(span, nan), b(span, nan), c(span, nan), d(span, nan), u(span, nan);
  auto each = [&](auto&& fn) {
    for (index_t r = 0; r < reps; ++r)
      for (std::size_t j = 0; j < kinds.size(); ++j) {
        const index_t s = r * static_cast<index_t>(kinds.size()) + static_cast<index_t>(j);
        for (index_t k = 0; k < kinds[j]; ++k) fn(cases[j], static_cast<std::size_t>(r * kinds[j] + k), at(s, k));
      }
  };
  each([&](tp::Case<T>& k, std::size_t e, std::size_t i) {
    a[i] = k.a[e];
    b[i] = k.b[e];
    c[i] = k.c[e];
    d[i] = k.d[e];
  });
  adi::Array<T> da = up(a), db = up(b), dc = up(c), dd = up(d), du = up(u);
  adi::VariableTridiagonalOptions o;
  o.pivoting = piv;
  o.periodic = periodic;
  const std::string where = std::string(periodic ? "periodic " : "") + tp::family_name(f) + (piv == Pivoting::partial ? " partial" : " automatic") +
                            (sorted ? " sorted" : " compact") + (in_place ? " in place" : "") +
                            (sizeof(T) == 4 ? " fp32" : " fp64");
  adi::Array<T>& out = in_place ? dd : du;
  try {
    auto solve = [&](auto layout) {
      adi::VariableTridiagonalPlan<T> plan(batch, layout, o);
      plan.solve(adi::Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), out.data());
    };
    if (sorted)
      solve(adi::SortedInterleaved{});
    else
      solve(adi::CompactBatch{});
  } catch (const adi::Error& e) {
    ADD_FAILURE() << where << ": threw " << e.what();
    return;
  }
  out.copy_to_host(u.data());
  each([&](tp::Case<T>& k, std::size_t e, std::size_t i) { k.u[e] = u[i]; });
  for (std::size_t j = 0; j < kinds.size(); ++j) {
    std::string detail;
    EXPECT_LE(tp::worst_ratio(cases[j], cases[j].u, detail), 10.0)
        << where << " n " << kinds[j] << ": " << detail;
  }
}

TEST_F(PivotingCuda, VariableBatchPartialWithinTenTimesLapack) {
  std::uint64_t seed = 3700;
  for (tp::Family f : {tp::Family::tiny_diagonal, tp::Family::random_signs, tp::Family::toeplitz})
    for (bool sorted : {false, true}) {
      variable_within_lapack<float>(f, Pivoting::partial, sorted, false, seed += 10);
      variable_within_lapack<double>(f, Pivoting::partial, sorted, false, seed += 10);
      variable_within_lapack<float>(f, Pivoting::partial, sorted, true, seed += 10);
      variable_within_lapack<double>(f, Pivoting::automatic, sorted, false, seed += 10);
      variable_within_lapack<float>(f, Pivoting::automatic, sorted, false, seed += 10);
      variable_within_lapack<float>(f, Pivoting::partial, sorted, false, seed += 10, true);
      variable_within_lapack<double>(f, Pivoting::partial, sorted, true, seed += 10, true);
      variable_within_lapack<double>(f, Pivoting::automatic, sorted, false, seed += 10, true);
    }
}

// Stop 37: a singular system (a zero row) is named by partial pivoting and by automatic's
// re-solve; automatic in place still throws UnstableSystem for an unsafe (nonsingular) one.
TEST_F(PivotingCuda, VariableBatchPivotingNamesTheSingularSystem) {
  const adi::Executor gpu = adi::Executor::cuda();
  const std::vector<int> sizes = {3, 257, 1, 32, 2, 31, 255, 3, 33, 1};
  const index_t count = static_cast<index_t>(sizes.size());
  adi::VariableBatchPlan batch(gpu, adi::BatchSizes{sizes.data(), count});
  const index_t span = batch.span(adi::CompactBatch{});
  const index_t bad = 6, unsafe = 3;  // system 6: 255 rows, system 3: 32 rows (even: nonsingular)
  const adi::VariableBatchView& v = batch.host_view();
  for (bool singular : {true, false}) {
    std::vector<double> a(span, 0.3), b(span, 1.0), c(span, 0.3), d(span, 1.0);
    const index_t s = singular ? bad : unsafe;
    const index_t row = v.offsets[s] + 7;
    if (singular) {
      a[row] = b[row] = c[row] = 0.0;  // a zero row
    } else {
      for (index_t i = v.offsets[s]; i < v.offsets[s + 1]; ++i) {
        a[i] = c[i] = 1.0;
        b[i] = 1e-12;
      }
    }
    adi::Array<double> da = up(a), db = up(b), dc = up(c), dd = up(d), du = up(d);
    for (Pivoting piv : {Pivoting::partial, Pivoting::automatic})
      for (bool in_place : {false, true}) {
        adi::VariableTridiagonalOptions o;
        o.pivoting = piv;
        adi::VariableTridiagonalPlan<double> plan(batch, adi::CompactBatch{}, o);
        dd.copy_from_host(d.data());
        const std::string where = std::string(singular ? "singular" : "unsafe") + " system " + std::to_string(s) +
                                  (piv == Pivoting::partial ? " partial" : " automatic") +
                                  (in_place ? " in place" : "");
        const bool expect_error = singular || (piv == Pivoting::automatic && in_place);
        try {
          plan.solve(adi::Bands<double>{da.data(), db.data(), dc.data()}, dd.data(),
                     in_place ? dd.data() : du.data());
          EXPECT_FALSE(expect_error) << "no error, " << where;
        } catch (const adi::UnstableSystem& e) {
          EXPECT_TRUE(piv == Pivoting::automatic && in_place) << where << ": " << e.what();
          EXPECT_EQ(e.system(), s) << where << ": " << e.what();
        } catch (const adi::SingularSystem& e) {
          EXPECT_TRUE(singular) << where << ": " << e.what();
          EXPECT_EQ(e.system(), s) << where << ": " << e.what();
        }
      }
  }
}

}  // namespace
