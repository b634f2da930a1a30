// Closed forms (adi/finance/closed_form.hpp) against independent checks: greeks
// against finite differences of the price, put-call parity, limits that reduce one
// formula to another, and the Heston price against this file's own implementation
// (Lewis's single-integral formula with Gatheral's characteristic function, Simpson's
// rule) which shares no code or formula with the library's (Heston's P1/P2, Gauss-Legendre).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <numbers>

#include "adi/finance/closed_form.hpp"
#include "tests/adi/finance/heston_reference.hpp"

using namespace adi::finance;
using namespace adi::finance::testing;


TEST(BlackScholes, GreeksMatchFiniteDifferences) {
  for (OptionType type : {OptionType::call, OptionType::put})
    for (double K : {80.0, 100.0, 125.0}) {
      const double S = 100, T = 0.7, r = 0.04, q = 0.015, v = 0.27;
      auto p = [&](double s, double t, double rr, double vol) { return black_scholes(type, s, K, t, rr, q, vol).price; };
      const Greeks g = black_scholes(type, S, K, T, r, q, v);
      const double hs = 1e-2, hv = 1e-5, ht = 1e-6, hr = 1e-6;
      EXPECT_NEAR(g.delta, (p(S + hs, T, r, v) - p(S - hs, T, r, v)) / (2 * hs), 1e-7);
      EXPECT_NEAR(g.gamma, (p(S + hs, T, r, v) - 2 * g.price + p(S - hs, T, r, v)) / (hs * hs), 1e-5);
      EXPECT_NEAR(g.vega, (p(S, T, r, v + hv) - p(S, T, r, v - hv)) / (2 * hv), 1e-5);
      EXPECT_NEAR(g.theta, -(p(S, T + ht, r, v) - p(S, T - ht, r, v)) / (2 * ht), 1e-4);
      EXPECT_NEAR(g.rho, (p(S, T, r + hr, v) - p(S, T, r - hr, v)) / (2 * hr), 1e-4);
    }
}

TEST(BlackScholes, KnownValueAndParity) {
  // Hull's textbook example: S = 42, K = 40, r = 10%, sigma = 20%, T = 0.5: call 4.76, put 0.81.
  EXPECT_NEAR(black_scholes(OptionType::call, 42, 40, 0.5, 0.1, 0, 0.2).price, 4.7594, 1e-4);
  EXPECT_NEAR(black_scholes(OptionType::put, 42, 40, 0.5, 0.1, 0, 0.2).price, 0.8086, 1e-4);
  const double S = 97, K = 103, T = 1.3, r = 0.03, q = 0.02, v = 0.35;
  const double c = black_scholes(OptionType::call, S, K, T, r, q, v).price;
  const double p = black_scholes(OptionType::put, S, K, T, r, q, v).price;
  EXPECT_NEAR(c - p, S * std::exp(-q * T) - K * std::exp(-r * T), 1e-12);
  // Zero volatility: the discounted forward intrinsic value.
  EXPECT_NEAR(black_scholes(OptionType::call, S, K, T, r, q, 0.0).price,
              std::max(S * std::exp(-q * T) - K * std::exp(-r * T), 0.0), 1e-12);
}

TEST(Margrabe, ReducesToBlackScholesWhenTheSecondAssetIsRiskless) {
  // sigma_2 = 0 and q_2 = r: S_2 stays at 95, so the exchange is a call struck at 95.
  const double r = 0.05;
  BlackScholesModel m{{{100, 0.3, 0.01}, {95, 0.0, r}}, {}, r};
  const double bs = black_scholes(OptionType::call, 100, 95, 1.5, r, 0.01, 0.3).price;
  EXPECT_NEAR(margrabe(m, 1.5), bs, 1e-10);
  // Symmetry: exchange(1 for 2) - exchange(2 for 1) = F_1 - F_2 (parity).
  BlackScholesModel s{{{100, 0.3, 0.01}, {90, 0.2, 0.03}}, {1, 0.4, 0.4, 1}, r};
  BlackScholesModel t{{s.assets[1], s.assets[0]}, {1, 0.4, 0.4, 1}, r};
  EXPECT_NEAR(margrabe(s, 2.0) - margrabe(t, 2.0), 100 * std::exp(-0.02) - 90 * std::exp(-0.06), 1e-10);
}

TEST(GeometricBasket, OneAssetIsBlackScholesAndPerfectCorrelationCollapses) {
  BlackScholesModel one{{{100, 0.25, 0.02}}, {}, 0.04};
  for (OptionType type : {OptionType::call, OptionType::put})
    EXPECT_NEAR(geometric_basket(one, Contract::geometric_basket(type, 95, 1.2)),
                black_scholes(type, 100, 95, 1.2, 0.04, 0.02, 0.25).price, 1e-12);
  // Two identical, perfectly correlated assets: the geometric average is the asset.
  BlackScholesModel two{{{100, 0.25, 0.02}, {100, 0.25, 0.02}}, {1, 1, 1, 1}, 0.04};
  EXPECT_NEAR(geometric_basket(two, Contract::geometric_basket(OptionType::call, 95, 1.2)),
              black_scholes(OptionType::call, 100, 95, 1.2, 0.04, 0.02, 0.25).price, 1e-10);
  // Independent assets: variance of the average is sum w_i^2 sigma_i^2.
  BlackScholesModel ind{{{100, 0.2, 0.0}, {100, 0.2, 0.0}}, {}, 0.05};
  const double s = 0.2 / std::sqrt(2.0);
  // E[G_T] = 100 exp((r - sigma^2/2 + s^2/2) T): effective dividend sigma^2/2 - s^2/2.
  EXPECT_NEAR(geometric_basket(ind, Contract::geometric_basket(OptionType::call, 100, 1.0)),
              black_scholes(OptionType::call, 100, 100, 1.0, 0.05, 0.5 * (0.04 - s * s), s).price, 1e-12);
}

TEST(Heston, TheTestsLewisFormulaReproducesBlackScholes) {
  // The test's own integrator, first on the Black-Scholes characteristic function.
  const double S = 100, K = 110, T = 0.8, r = 0.03, q = 0.01, v = 0.25;
  const double c = lewis_call(S, K, T, r, q, [&](cplx u) {
    const cplx i(0, 1);
    return std::exp(-0.5 * v * v * T * (u * u + i * u));
  });
  EXPECT_NEAR(c, black_scholes(OptionType::call, S, K, T, r, q, v).price, 1e-9);
}

TEST(Heston, SemiAnalyticMatchesIndependentImplementation) {
  HestonModel cases[3];
  cases[0] = HestonModel{};  // in 't Hout & Foulon case 1: 8.8948 at S = K = 100, T = 1
  cases[1] = HestonModel{100, 0.09, 2.0, 0.06, 0.5, -0.3, 0.03, 0.01};
  cases[2] = HestonModel{80, 0.02, 0.8, 0.05, 0.9, 0.2, 0.01, 0.0};
  EXPECT_NEAR(heston(cases[0], OptionType::call, 100, 1.0), 8.8948, 1e-4);
  for (const HestonModel& h : cases)
    for (double K : {70.0, 100.0, 130.0})
      for (double T : {0.25, 1.0, 3.0}) {
        const double mine = test_heston_call(h, K, T);
        EXPECT_NEAR(heston(h, OptionType::call, K, T), mine, 1e-8 * std::max(1.0, mine)) << "K " << K << " T " << T;
        // Put by parity.
        EXPECT_NEAR(heston(h, OptionType::put, K, T),
                    mine - h.spot * std::exp(-h.dividend * T) + K * std::exp(-h.rate * T), 1e-8 * std::max(1.0, mine));
      }
}

TEST(Heston, SmallVolOfVolApproachesBlackScholes) {
  // v0 = theta and sigma -> 0: the variance stays at theta.
  HestonModel h{100, 0.0625, 2.0, 0.0625, 1e-4, 0.0, 0.03, 0.0};
  EXPECT_NEAR(heston(h, OptionType::call, 105, 1.0), black_scholes(OptionType::call, 100, 105, 1.0, 0.03, 0.0, 0.25).price,
              1e-5);
}

TEST(ClosedForm, DispatchesByContract) {
  BlackScholesModel one{{{100, 0.2, 0.0}}, {}, 0.05};
  EXPECT_NEAR(*closed_form(one, Contract::vanilla(OptionType::put, 100, 1)),
              black_scholes(OptionType::put, 100, 100, 1, 0.05, 0, 0.2).price, 1e-14);
  EXPECT_FALSE(closed_form(one, Contract::vanilla(OptionType::put, 100, 1, Exercise::american)).has_value());
  BlackScholesModel two{{{100, 0.2, 0.0}, {100, 0.3, 0.0}}, {1, 0.5, 0.5, 1}, 0.05};
  EXPECT_NEAR(*closed_form(two, Contract::exchange(1)), margrabe(two, 1), 1e-14);
  EXPECT_NEAR(*closed_form(two, Contract::spread(OptionType::call, 0, 1)), margrabe(two, 1), 1e-14);
  EXPECT_FALSE(closed_form(two, Contract::basket(OptionType::call, 100, 1)).has_value());
  EXPECT_FALSE(closed_form(two, Contract::best_of(OptionType::call, 100, 1)).has_value());
}
