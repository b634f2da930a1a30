// One-asset American options by Brennan-Schwartz (adi/finance/american.hpp): against a
// fine binomial tree and a literature value, American >= European, no early exercise
// for a call without dividends, and the solver without exercise equal to the ADI
// framework's Douglas solve (the same scheme written out) to round-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "adi/finance/finance.hpp"
#include "tests/adi/finance/binomial_tree.hpp"
#include "gpu_skip.hpp"

using namespace adi::finance;

namespace {

Method cn(adi::index_t nodes, long steps) {
  Method m;
  m.nodes = nodes;
  m.steps = steps;
  m.scheme = adi::Scheme::douglas().with_damping(2);
  return m;
}

}  // namespace

TEST(American, PutAgainstBinomialTreeAndLiterature) {
  const BlackScholesModel m{{{100, 0.2, 0.0}}, {}, 0.05};
  const Contract c = Contract::vanilla(OptionType::put, 100, 1.0, Exercise::american);
  const double tree = crr_american(OptionType::put, 100, 100, 1.0, 0.05, 0.0, 0.2, 4000);
  // Literature (e.g. Hull; binomial with 10^4 steps): 6.0904.
  EXPECT_NEAR(tree, 6.0904, 5e-4);
  const PriceResult r = price<double>(m, c, cn(801, 400));
  EXPECT_NEAR(r.price, tree, 5e-4);
  // The default method is within 1e-4 relative of the tree's value... at 201 nodes, 100 steps.
  const PriceResult d = price<double>(m, c);
  EXPECT_NEAR(d.price, tree, 1e-3 * tree);
  // Deep in the money the value is the payoff (exercise now), delta -1.
  const BlackScholesModel deep{{{70, 0.2, 0.0}}, {}, 0.05};
  const PriceResult e = price<double>(deep, c, cn(401, 200));
  EXPECT_NEAR(e.price, 30.0, 1e-9);
  EXPECT_NEAR(e.delta[0], -1.0, 1e-6);
}

TEST(American, PutWithDividendsAndCallWithDividendsAgainstTree) {
  for (OptionType type : {OptionType::put, OptionType::call})
    for (double K : {90.0, 110.0}) {
      const BlackScholesModel m{{{100, 0.3, 0.04}}, {}, 0.06};
      const double tree = crr_american(type, 100, K, 0.75, 0.06, 0.04, 0.3, 4000);
      const PriceResult r = price<double>(m, Contract::vanilla(type, K, 0.75, Exercise::american), cn(801, 400));
      EXPECT_NEAR(r.price, tree, 1e-4 * tree + 3e-4) << option_type_name(type) << " K " << K;
    }
}

// Long maturities and high volatilities on the default method (201 nodes, 100 steps): the axis
// spaced evenly in ln S (asset_axis). Before it the first put was 26% off (63.91 against the
// tree's 50.68), the second 2.5%.
TEST(American, LongMaturitiesAndHighVolatilitiesAgainstTree) {
  struct Case {
    double vol, T, r, K;
  };
  for (const Case& k : {Case{0.6, 30, 0.05, 100}, Case{1.0, 5, 0.03, 100}}) {
    const BlackScholesModel m{{{100, k.vol, 0.0}}, {}, k.r};
    const double tree = crr_american(OptionType::put, 100, k.K, k.T, k.r, 0.0, k.vol, 4000);
    const PriceResult d = price<double>(m, Contract::vanilla(OptionType::put, k.K, k.T, Exercise::american));
    EXPECT_NEAR(d.price, tree, 5e-3 * tree) << "sigma " << k.vol << " T " << k.T;
  }
}

TEST(American, AtLeastEuropeanAndEqualForCallsWithoutDividends) {
  const BlackScholesModel m{{{100, 0.25, 0.0}}, {}, 0.05};
  for (double K : {80.0, 100.0, 120.0}) {
    const double am_put = price<double>(m, Contract::vanilla(OptionType::put, K, 1.0, Exercise::american)).price;
    const double eu_put = price<double>(m, Contract::vanilla(OptionType::put, K, 1.0)).price;
    EXPECT_GT(am_put, eu_put + 1e-3) << K;  // strictly: r > 0 makes early exercise worth something
    const double am_call = price<double>(m, Contract::vanilla(OptionType::call, K, 1.0, Exercise::american)).price;
    const double eu_call = black_scholes(OptionType::call, 100, K, 1.0, 0.05, 0.0, 0.25).price;
    EXPECT_NEAR(am_call, eu_call, 1e-4 * eu_call) << K;
  }
}

TEST(American, WithoutExerciseTheSweepIsTheFrameworksDouglasStep) {
  const BlackScholesModel m{{{100, 0.2, 0.01}}, {}, 0.05};
  for (Space s : {Space::price, Space::log})
    for (double theta : {0.5, 1.0}) {
      Method me = cn(101, 37);
      me.scheme = adi::Scheme::douglas(theta).with_damping(3);
      me.space = s;
      me.far_field = s == Space::log ? FarField::dirichlet : FarField::linear;
      const Contract c = Contract::vanilla(OptionType::put, 95, 0.8);
      me.one_asset_sweep = false;  // through AdiSolver
      const PriceResult adi_run = price<double>(m, c, me);
      const PriceResult sweep = price_one_asset<double>(m, c, me, false);
      double diff = 0;
      for (adi::index_t i = 0; i < adi_run.grid.nx(); ++i)
        diff = std::max(diff, std::abs(adi_run.values(i, 0, 0) - sweep.values(i, 0, 0)));
      EXPECT_LT(diff, 1e-11) << space_name(s) << " theta " << theta;
    }
}

TEST(American, RefusesTheGpu) {
  ADI_REQUIRE_CUDA("the device executor's refusal");
  const BlackScholesModel m{{{100, 0.2, 0.0}}, {}, 0.05};
  Method me;
  me.executor = adi::Executor::cuda();
  EXPECT_THROW(price<double>(m, Contract::vanilla(OptionType::put, 100, 1, Exercise::american), me), adi::Unsupported);
}
