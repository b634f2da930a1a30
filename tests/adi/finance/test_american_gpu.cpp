// American exercise under Heston and on 2-3 assets on a CUDA executor (issue 20): the
// Ikonen-Toivanen splitting of adi/finance/pricer.cpp (solve_american) with the Operator's
// apply / solve on the device and the node-wise passes as kernels
// (solvers/cuda/early_exercise.cu, formulas in solvers/common/early_exercise_core.hpp)
// against the same path on the host, fp64 and fp32, every scheme the host takes (Douglas,
// Craig-Sneyd, modified Craig-Sneyd, Hundsdorfer-Verwer; Rannacher damping on), odd and even
// grids. The bounds (price: relative to the price; field: the largest |difference| over the
// nodes relative to the field's largest value):
//   fp64, GPU vs host fp64: price and field 1e-12 (round-off: the device's tridiagonal
//     solvers and stencils against the host's; measured on an H100: <= 1.1e-15 / 2.0e-15);
//   fp32, GPU vs host fp32: price 2e-5, field 1e-5; GPU fp32 vs host fp64: price 5e-5, field
//     2e-5 (fp32's own error on these grids; measured on an H100: GPU vs host fp32 <= 5.6e-7 /
//     8.1e-7, GPU fp32 vs host fp64 <= 1.6e-6 / 1.4e-6, host fp32 vs fp64 <= 1.9e-6 / 1.2e-6;
//     the host fp32 path is held to the same bound).
// Each case prints the measured differences. Every GPU test skips loudly without a device
// (tests/gpu_skip.hpp). The host-only parts (the node formulas, bad input) run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "adi/finance/finance.hpp"
#include "gpu_skip.hpp"
#include "solvers/common/early_exercise_core.hpp"
#include "tests/adi/finance/expect_invalid.hpp"
#include "tests/adi/finance/heston_reference.hpp"

using namespace adi::finance;

namespace {

class AmericanGpu : public adi::test::CudaTest {};

// The Ikonen-Toivanen / Clarke-Parrott case (heston_reference.hpp), S = 10 unless given.
HestonModel ikonen_toivanen(double spot = 10) { return adi::finance::testing::ikonen_toivanen_model(spot); }

Method heston_grid(adi::index_t ns, adi::index_t nv, long steps, adi::Scheme s) {
  Method me;
  me.nodes = ns;
  me.variance_nodes = nv;
  me.steps = steps;
  me.scheme = s;
  me.step_grading = 2;
  return me;
}

Method bs_grid(adi::index_t nodes, long steps, adi::Scheme s) {
  Method me;
  me.nodes = nodes;
  me.steps = steps;
  me.scheme = s;
  me.step_grading = 2;
  return me;
}

// Largest |a - b| over the value fields, and the largest |a|.
struct FieldDiff {
  double max_diff = 0, scale = 0;
};
FieldDiff field_diff(const PriceResult& a, const PriceResult& b) {
  FieldDiff d;
  EXPECT_EQ(a.values.nx(), b.values.nx());
  EXPECT_EQ(a.values.ny(), b.values.ny());
  EXPECT_EQ(a.values.nz(), b.values.nz());
  for (adi::index_t k = 0; k < a.values.nz(); ++k)
    for (adi::index_t j = 0; j < a.values.ny(); ++j)
      for (adi::index_t i = 0; i < a.values.nx(); ++i) {
        const double x = a.values(i, j, k), y = b.values(i, j, k);
        // A NaN anywhere fails (the difference would compare false).
        d.max_diff = std::max(d.max_diff, std::isfinite(x) && std::isfinite(y) ? std::abs(x - y)
                                                                              : std::numeric_limits<double>::infinity());
        d.scale = std::max(d.scale, std::abs(y));
      }
  return d;
}

// Prices `c` on the host and on the device, fp64 and fp32, and checks the bounds above.
template <class Model>
void gpu_equals_host(const Model& m, const Contract& c, Method me, const std::string& what) {
  me.executor = adi::Executor::host();
  const PriceResult h64 = price<double>(m, c, me);
  const PriceResult h32 = price<float>(m, c, me);
  me.executor = adi::Executor::cuda();
  const PriceResult d64 = price<double>(m, c, me);
  const PriceResult d32 = price<float>(m, c, me);
  const FieldDiff f64 = field_diff(d64, h64), f32 = field_diff(d32, h32), f32_64 = field_diff(d32, h64),
                  h32_64 = field_diff(h32, h64);
  const double scale = f64.scale, p = std::abs(h64.price);
  ASSERT_GT(scale, 0) << what;
  ASSERT_GT(p, 0) << what;
  std::printf("%-56s %.10f | fp64 GPU-host: price %+.1e, field %.1e | fp32 GPU-host fp32: price %+.1e, field %.1e | "
              "fp32 GPU-host fp64: price %+.1e, field %.1e (host fp32: %+.1e, %.1e)\n",
              what.c_str(), h64.price, (d64.price - h64.price) / p, f64.max_diff / scale, (d32.price - h32.price) / p,
              f32.max_diff / scale, (d32.price - h64.price) / p, f32_64.max_diff / scale, (h32.price - h64.price) / p,
              h32_64.max_diff / scale);
  EXPECT_NEAR(d64.price, h64.price, 1e-12 * p) << what;
  EXPECT_LE(f64.max_diff, 1e-12 * scale) << what;
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(d64.delta[a], h64.delta[a], 1e-9 * (1 + std::abs(h64.delta[a]))) << what << " delta " << a;
    EXPECT_NEAR(d64.gamma[a], h64.gamma[a], 1e-7 * (1 + std::abs(h64.gamma[a]))) << what << " gamma " << a;
  }
  EXPECT_NEAR(d32.price, h32.price, 2e-5 * p) << what;
  EXPECT_LE(f32.max_diff, 1e-5 * scale) << what;
  EXPECT_NEAR(d32.price, h64.price, 5e-5 * p) << what;
  EXPECT_LE(f32_64.max_diff, 2e-5 * scale) << what;
  EXPECT_NEAR(h32.price, h64.price, 5e-5 * p) << what;
  EXPECT_LE(h32_64.max_diff, 2e-5 * scale) << what;
}

adi::Scheme with_damping(adi::Scheme s, int d) { return s.with_damping(d); }

}  // namespace

// Heston: every scheme the host takes, with Rannacher damping, on even and odd grids (both
// axes odd, S even / v odd), and HV without damping.
TEST_F(AmericanGpu, HestonEverySchemeEqualsHost) {
  const Contract put = Contract::vanilla(OptionType::put, 10, 0.25, Exercise::american);
  const struct {
    adi::index_t ns, nv;
    long steps;
  } grids[] = {{40, 20, 20}, {33, 17, 15}, {64, 31, 21}};
  for (const auto& gr : grids)
    for (adi::Scheme s : {adi::Scheme::douglas(), adi::Scheme::craig_sneyd(), adi::Scheme::modified_craig_sneyd(),
                          adi::Scheme::hundsdorfer_verwer()}) {
      const std::string what = "Heston put " + std::to_string(gr.ns) + " x " + std::to_string(gr.nv) + ", " +
                               std::to_string(gr.steps) + " steps, " + s.name() + " + 2 damping";
      gpu_equals_host(ikonen_toivanen(), put, heston_grid(gr.ns, gr.nv, gr.steps, with_damping(s, 2)), what);
    }
  gpu_equals_host(ikonen_toivanen(9), put, heston_grid(41, 21, 16, adi::Scheme::hundsdorfer_verwer()),
                  "Heston put S = 9, 41 x 21, 16 steps, HV, no damping");
  // A call with dividends (early exercise of a call pays) and the Dirichlet far field.
  HestonModel q = ikonen_toivanen(11);
  q.dividend = 0.08;
  Method me = heston_grid(48, 25, 20, with_damping(adi::Scheme::hundsdorfer_verwer(), 2));
  me.far_field = FarField::dirichlet;
  gpu_equals_host(q, Contract::vanilla(OptionType::call, 10, 0.25, Exercise::american), me,
                  "Heston call q 8%, 48 x 25, 20 steps, HV, Dirichlet far field");
}

// Ikonen & Toivanen's reference prices (test_heston.cpp) reached on the device as on the host.
TEST_F(AmericanGpu, HestonIkonenToivanenReferenceOnTheDevice) {
  double worst = 0;
  for (int k = 0; k < 5; ++k) {
    Method me = heston_grid(160, 80, 160, with_damping(adi::Scheme::hundsdorfer_verwer(), 2));
    me.executor = adi::Executor::cuda();
    const PriceResult r =
        price<double>(ikonen_toivanen(adi::finance::testing::kIkonenToivanenSpots[k]),
                      Contract::vanilla(OptionType::put, 10, 0.25, Exercise::american), me);
    worst = std::max(worst, std::abs(r.price - adi::finance::testing::kIkonenToivanenPut[k]));
  }
  std::printf("American Heston on the GPU, 160 x 80 x 160: max error %.2e against Ikonen & Toivanen\n", worst);
  EXPECT_LT(worst, 1.5e-4);  // the host measures 1.1e-4 at this grid (test_heston.cpp)
}

// Two assets: the basket put and the best-of call of test_multi_asset_american.cpp.
TEST_F(AmericanGpu, TwoAssetsEqualsHost) {
  const BlackScholesModel basket_m{{{100, 0.2, 0.0}, {100, 0.3, 0.0}}, {1, 0.3, 0.3, 1}, 0.08};
  const BlackScholesModel best_m{{{100, 0.2, 0.1}, {100, 0.3, 0.08}}, {1, 0.3, 0.3, 1}, 0.03};
  Contract basket = Contract::basket(OptionType::put, 100, 1.0);
  basket.exercise = Exercise::american;
  Contract best = Contract::best_of(OptionType::call, 100, 1.0);
  best.exercise = Exercise::american;
  for (adi::Scheme s : {adi::Scheme::hundsdorfer_verwer(), adi::Scheme::douglas(), adi::Scheme::modified_craig_sneyd(),
                        adi::Scheme::craig_sneyd()})
    gpu_equals_host(basket_m, basket, bs_grid(41, 20, with_damping(s, 2)),
                    std::string("2-asset basket put 41^2, 20 steps, ") + s.name() + " + 2 damping");
  gpu_equals_host(best_m, best, bs_grid(33, 17, with_damping(adi::Scheme::hundsdorfer_verwer(), 2)),
                  "2-asset best-of call 33^2, 17 steps, HV + 2 damping");
  gpu_equals_host(best_m, best, bs_grid(64, 30, with_damping(adi::Scheme::hundsdorfer_verwer(), 2)),
                  "2-asset best-of call 64^2, 30 steps, HV + 2 damping");
}

// Three assets: best-of call and basket put, odd grids.
TEST_F(AmericanGpu, ThreeAssetsEqualsHost) {
  const BlackScholesModel m{{{100, 0.2, 0.1}, {100, 0.25, 0.08}, {100, 0.3, 0.05}}, {1, 0.3, 0.2, 0.3, 1, 0.4, 0.2, 0.4, 1},
                            0.05};
  Contract best = Contract::best_of(OptionType::call, 100, 0.5);
  best.exercise = Exercise::american;
  Contract basket = Contract::basket(OptionType::put, 100, 0.5);
  basket.exercise = Exercise::american;
  gpu_equals_host(m, best, bs_grid(17, 10, with_damping(adi::Scheme::hundsdorfer_verwer(), 2)),
                  "3-asset best-of call 17^3, 10 steps, HV + 2 damping");
  gpu_equals_host(m, best, bs_grid(25, 12, with_damping(adi::Scheme::douglas(), 2)),
                  "3-asset best-of call 25^3, 12 steps, Douglas + 2 damping");
  gpu_equals_host(m, basket, bs_grid(19, 10, with_damping(adi::Scheme::modified_craig_sneyd(), 2)),
                  "3-asset basket put 19^3, 10 steps, MCS + 2 damping");
  gpu_equals_host(m, basket, bs_grid(32, 12, with_damping(adi::Scheme::craig_sneyd(), 1)),
                  "3-asset basket put 32^3, 12 steps, CS + 1 damping");
}

// Bad input on the device path: the same clear errors as on the host, before any device work.
TEST_F(AmericanGpu, BadInputIsRefusedOnTheDevice) {
  const Contract put = Contract::vanilla(OptionType::put, 10, 0.25, Exercise::american);
  Method me = heston_grid(33, 17, 10, adi::Scheme::hundsdorfer_verwer());
  me.executor = adi::Executor::cuda();
  HestonModel h = ikonen_toivanen();
  h.rho = std::nan("");
  expect_invalid([&] { price<double>(h, put, me); }, {"rho"});
  h = ikonen_toivanen();
  h.v0 = std::numeric_limits<double>::infinity();
  expect_invalid([&] { price<float>(h, put, me); }, {"v0"});
  Method bad = me;
  bad.scheme.theta = std::nan("");
  expect_invalid([&] { price<double>(ikonen_toivanen(), put, bad); }, {"theta"});
  bad = me;
  bad.scheme = adi::Scheme::peaceman_rachford();
  expect_invalid([&] { price<double>(ikonen_toivanen(), put, bad); }, {"American", "peaceman-rachford"});
  BlackScholesModel m{{{100, 0.2, 0.0}, {std::nan(""), 0.3, 0.0}}, {1, 0.3, 0.3, 1}, 0.05};
  Contract basket = Contract::basket(OptionType::put, 100, 1.0);
  basket.exercise = Exercise::american;
  Method mb = bs_grid(33, 10, adi::Scheme::hundsdorfer_verwer());
  mb.executor = adi::Executor::cuda();
  expect_invalid([&] { price<double>(m, basket, mb); }, {"spot"});
  m.assets[1].spot = 100;
  mb.space = Space::log;
  mb.far_field = FarField::dirichlet;
  expect_invalid([&] { price<double>(m, basket, mb); }, {"American", "Space::price"});
}

// The node formulas both backends call: U >= g, lambda >= 0, (U - g) lambda = 0 after the
// update, and a NaN stage value stays NaN (max as std::max spells it, not fmax).
TEST(EarlyExerciseCore, ProjectionKeepsTheComplementarityAndPropagatesNaN) {
  const double dt = 0.01;
  for (double bar : {-1.0, 0.0, 0.4, 0.5, 0.6, 2.0})
    for (double lam : {0.0, 3.0, 50.0}) {
      const double g = 0.5;
      double u = -7, l = lam;
      adi::common::exercise_project(bar, g, dt, u, l);
      EXPECT_EQ(u, std::max(bar - dt * lam, g));
      EXPECT_EQ(l, std::max(0.0, lam + (g - bar) / dt));
      EXPECT_GE(u, g);
      EXPECT_GE(l, 0.0);
    }
  double u = 0, l = 1;
  adi::common::exercise_project(std::nan(""), 0.5, dt, u, l);
  EXPECT_TRUE(std::isnan(u));
  double w = 1.0;
  adi::common::exercise_predict(w, 2.0, 0.25);
  EXPECT_EQ(w, 1.5);
  float wf = 1.0f;
  adi::common::exercise_predict(wf, 2.0f, 0.25f);
  EXPECT_EQ(wf, 1.5f);
}

// The host path's node loops run on the executor's threads: 1 thread and all give the same
// prices (every node on one thread, whatever the team).
TEST(AmericanHost, OneThreadEqualsAllThreads) {
  Method me = heston_grid(160, 80, 20, with_damping(adi::Scheme::hundsdorfer_verwer(), 2));
  me.executor = adi::Executor::host(1);
  const Contract put = Contract::vanilla(OptionType::put, 10, 0.25, Exercise::american);
  const PriceResult one = price<double>(ikonen_toivanen(), put, me);
  me.executor = adi::Executor::host();
  const PriceResult all = price<double>(ikonen_toivanen(), put, me);
  const FieldDiff d = field_diff(all, one);
  EXPECT_LE(d.max_diff, 1e-13 * d.scale);
  EXPECT_NEAR(all.price, one.price, 1e-13 * d.scale);
}
