// Models, contracts and methods: payoffs, and bad parameters rejected with messages
// that say what is wrong (adi::InvalidArgument), also through the pricer's entry points.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "adi/error.hpp"
#include "adi/finance/finance.hpp"
#include "tests/adi/finance/expect_invalid.hpp"

using namespace adi::finance;

namespace {

BlackScholesModel two() { return BlackScholesModel{{{100, 0.2, 0.0}, {100, 0.3, 0.0}}, {1, 0.5, 0.5, 1}, 0.05}; }

}  // namespace

TEST(Payoff, Values) {
  const double s2[2] = {110, 95};
  EXPECT_DOUBLE_EQ(Contract::vanilla(OptionType::call, 100, 1).value(s2, 1), 10);
  EXPECT_DOUBLE_EQ(Contract::vanilla(OptionType::put, 100, 1).value(s2, 1), 0);
  EXPECT_DOUBLE_EQ(Contract::basket(OptionType::call, 100, 1).value(s2, 2), 2.5);
  EXPECT_DOUBLE_EQ(Contract::basket(OptionType::put, 100, 1, {0.2, 0.8}).value(s2, 2), 100 - 22 - 76);
  EXPECT_NEAR(Contract::geometric_basket(OptionType::call, 100, 1).value(s2, 2), std::sqrt(110.0 * 95.0) - 100, 1e-12);
  EXPECT_DOUBLE_EQ(Contract::spread(OptionType::call, 5, 1).value(s2, 2), 10);
  EXPECT_DOUBLE_EQ(Contract::spread(OptionType::put, 20, 1).value(s2, 2), 5);
  EXPECT_DOUBLE_EQ(Contract::exchange(1).value(s2, 2), 15);
  EXPECT_DOUBLE_EQ(Contract::best_of(OptionType::call, 100, 1).value(s2, 2), 10);
  EXPECT_DOUBLE_EQ(Contract::worst_of(OptionType::put, 100, 1).value(s2, 2), 5);
  EXPECT_EQ(payoff_from_name("best-of"), Payoff::best_of);
  EXPECT_STREQ(payoff_name(Payoff::geometric_basket), "geometric");
  expect_invalid([] { payoff_from_name("rainbow"); }, {"rainbow", "basket", "exchange"});
}

TEST(BadParameters, BlackScholesModel) {
  BlackScholesModel m = two();
  m.assets[1].volatility = -0.2;
  expect_invalid([&] { m.validate(); }, {"asset 2", "volatility = -0.2", ">= 0"});
  m = two();
  m.assets[0].spot = 0;
  expect_invalid([&] { m.validate(); }, {"asset 1", "spot = 0", "> 0"});
  m = two();
  m.correlation = {1, 1.2, 1.2, 1};
  expect_invalid([&] { m.validate(); }, {"correlation(1, 2) = 1.2", "[-1, 1]"});
  m.correlation = {1, -1.5, -1.5, 1};
  expect_invalid([&] { m.validate(); }, {"-1.5", "[-1, 1]"});
  m.correlation = {1, 0.5, 0.4, 1};
  expect_invalid([&] { m.validate(); }, {"symmetric"});
  m.correlation = {1, 0.5, 0.5};
  expect_invalid([&] { m.validate(); }, {"3 entries", "2 x 2"});
  m.correlation = {0.9, 0.5, 0.5, 1};
  expect_invalid([&] { m.validate(); }, {"unit diagonal"});
  // Each pair is a valid correlation, the matrix is not: rho12 = rho13 = 0.9, rho23 = -0.9.
  BlackScholesModel three{{{100, 0.2, 0}, {100, 0.2, 0}, {100, 0.2, 0}}, {1, 0.9, 0.9, 0.9, 1, -0.9, 0.9, -0.9, 1}, 0.05};
  expect_invalid([&] { three.validate(); }, {"not positive semi-definite", "Cholesky"});
  three.correlation = {1, 0.9, 0.9, 0.9, 1, 0.9, 0.9, 0.9, 1};
  EXPECT_NO_THROW(three.validate());
  BlackScholesModel four = three;
  four.assets.push_back(Asset{});
  four.correlation.clear();
  expect_invalid([&] { four.validate(); }, {"4 assets", "1, 2 or 3"});
  // Through the pricer: nothing is computed for a bad model.
  BlackScholesModel bad = two();
  bad.assets[0].volatility = -0.1;
  expect_invalid([&] { price<double>(bad, Contract::exchange(1)); }, {"volatility = -0.1"});
}

TEST(BadParameters, HestonModel) {
  HestonModel h;
  h.rho = -1.2;
  expect_invalid([&] { h.validate(); }, {"rho = -1.2", "[-1, 1]"});
  h = HestonModel{};
  h.sigma = -0.3;
  expect_invalid([&] { h.validate(); }, {"sigma = -0.3"});
  h = HestonModel{};
  h.v0 = -0.01;
  expect_invalid([&] { h.validate(); }, {"v0 = -0.01"});
  h = HestonModel{};
  h.kappa = 0;
  expect_invalid([&] { heston(h, OptionType::call, 100, 1); }, {"kappa = 0"});
  h = HestonModel{};
  Contract berm = Contract::vanilla(OptionType::call, 100, 1);
  berm.exercise = Exercise::bermudan;
  expect_invalid([&] { price<double>(h, berm); }, {"Bermudan"});
}

TEST(BadParameters, ContractAndMethod) {
  BlackScholesModel m = two();
  expect_invalid([&] { Contract::vanilla(OptionType::call, 100, 1).validate(2); }, {"vanilla", "1 asset", "2"});
  expect_invalid([&] { Contract::exchange(-1).validate(2); }, {"maturity = -1"});
  expect_invalid([&] { Contract::basket(OptionType::call, 100, 1, {0.5}).validate(2); }, {"1 basket weights", "2 assets"});
  expect_invalid([&] { Contract::basket(OptionType::call, -5, 1).validate(2); }, {"strike = -5"});
  Contract am = Contract::basket(OptionType::put, 100, 1);
  am.exercise = Exercise::american;
  const BlackScholesModel one{{{100, 0.2, 0.0}}, {}, 0.05};
  expect_invalid([&] { price<double>(one, am); }, {"American", "one-asset", "basket"});
  Method me;
  me.nodes = 3;
  expect_invalid([&] { price<double>(m, Contract::exchange(1), me); }, {"nodes = 3", ">= 5"});
  me = Method{};
  me.space = Space::log;
  expect_invalid([&] { price<double>(m, Contract::exchange(1), me); }, {"log space", "FarField::dirichlet"});
  me = Method{};
  me.width = 0;
  expect_invalid([&] { me.validate(); }, {"width = 0"});
}

// Issue 20: the one-asset sweep and the American path never built an AdiSolver, so a bad
// scheme reached them unchecked (Douglas(0) crashed, theta = -1 priced -2.4e76).
TEST(BadParameters, SchemeOnEveryPricerPath) {
  const BlackScholesModel one{{{100, 0.2, 0.0}}, {}, 0.05};
  const Contract eu = Contract::vanilla(OptionType::put, 100, 1);
  const Contract am = Contract::vanilla(OptionType::put, 100, 1, Exercise::american);
  struct Bad {
    adi::Scheme scheme;
    const char* fragment;
  };
  const Bad bad[] = {{adi::Scheme::douglas(0.0), "theta = 0"},
                     {adi::Scheme::douglas(-1.0), "theta = -1"},
                     {adi::Scheme::douglas(std::nan("")), "theta = nan"},
                     {adi::Scheme::douglas(1.5), "theta = 1.5"},
                     {adi::Scheme::douglas().with_damping(-2), "damping_steps = -2"},
                     {adi::Scheme::hundsdorfer_verwer(0.0), "theta = 0"}};
  for (const Bad& b : bad) {
    Method me;
    me.scheme = b.scheme;
    me.nodes = 51;
    me.steps = 10;
    expect_invalid([&] { price<double>(one, eu, me); }, {b.fragment});
    expect_invalid([&] { price<double>(one, am, me); }, {b.fragment});
    expect_invalid([&] { price_one_asset<double>(one, eu, me, false); }, {b.fragment});
    expect_invalid([&] { price<double>(HestonModel{}, Contract::vanilla(OptionType::call, 100, 1), me); },
                   {b.fragment});
  }
  Method me;
  me.scheme = adi::Scheme::douglas(0.0);
  expect_invalid([&] { me.validate(); }, {"theta = 0", "(0, 1]"});
}

// Numbers in messages keep their digits: rho = -1.0000001 must not read "-1".
TEST(BadParameters, MessagesPrintFullPrecision) {
  HestonModel h;
  h.rho = -1.0000001;
  expect_invalid([&] { h.validate(); }, {"rho = -1.0000001", "[-1, 1]"});
  EXPECT_EQ(format_number(0.2), "0.2");
  EXPECT_EQ(format_number(-1.0000001), "-1.0000001");
  EXPECT_EQ(format_number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_number(1e-300), "1e-300");
}

// A strike-0 Heston call is the stock itself (S e^{-qT}) and the put is worthless: priced,
// not refused from inside the grid builder.
TEST(HestonStrikeZero, PricesTheStock) {
  HestonModel h;
  h.dividend = 0.03;
  Method me;
  me.nodes = 41;
  me.variance_nodes = 21;
  me.steps = 20;
  const PriceResult c = price<double>(h, Contract::vanilla(OptionType::call, 0, 1), me);
  // V = S e^{-q tau} is linear in S, so space is exact; the 2 Rannacher steps' implicit
  // Euler halves leave O((q dt)^2) = 1e-6 relative in time.
  EXPECT_NEAR(c.price, h.spot * std::exp(-h.dividend), 1e-5 * h.spot);
  EXPECT_NEAR(c.delta[0], std::exp(-h.dividend), 1e-5);
  const PriceResult p = price<double>(h, Contract::vanilla(OptionType::put, 0, 1), me);
  EXPECT_NEAR(p.price, 0.0, 1e-12);
}

// A spread of ln S_T so wide that the grid's far end, max(spot, strike) e^{width sd}, is
// beyond the largest double: a message naming the volatility, the maturity and what to change,
// on every one-asset path (before: concentrated_axis's "need finite lo < hi, got lo = 0, hi = inf",
// and std::terminate from the host chain's OpenMP loop).
TEST(BadParameters, FarEndBeyondTheLargestDouble) {
  const BlackScholesModel m{{{100, 5.0, 0.0}}, {}, 0.05};
  for (Exercise ex : {Exercise::european, Exercise::american})
    expect_invalid([&] { price<double>(m, Contract::vanilla(OptionType::put, 100, 1e4, ex)); },
                   {"volatility 5", "maturity 10000", "sd = 500", "beyond the largest double", "Method::width"});
  // Finite far end, 1.4e219, but sigma^2 S^2 / 2 overflows there (the American sweep, which
  // builds its own rows, returned NaN).
  const BlackScholesModel wild{{{100, 100.0, 0.0}}, {}, 0.05};
  for (Exercise ex : {Exercise::european, Exercise::american})
    expect_invalid([&] { price<double>(wild, Contract::vanilla(OptionType::put, 100, 1.0, ex)); },
                   {"volatility 100", "= 1.40359e+219", "sigma^2 S^2 / 2 is beyond the largest double"});
  ChainOption o;
  o.volatility = 5.0;
  o.maturity = 1e4;
  expect_invalid([&] { price_chain({o}); }, {"volatility 5", "maturity 10000", "beyond the largest double"});
  OneAssetModel one;
  one.volatility = 5.0;
  expect_invalid([&] { price(one, OneAssetOption::vanilla(OptionType::put, 100, 1e4)); },
                 {"volatility 5", "maturity 10000", "beyond the largest double"});
}
