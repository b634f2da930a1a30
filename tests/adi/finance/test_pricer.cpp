// The ADI pricer (adi/finance/pricer.hpp) against closed forms: accuracy on a moderate
// grid, observed order in space and in time (least-squares fit over three resolutions
// plus each pairwise ratio), greeks, parities, 2 and 3 correlated assets, Heston against
// the tests' own semi-analytic price, float against double, the GPU against the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "adi/finance/finance.hpp"
#include "tests/adi/finance/heston_reference.hpp"
#include "tests/adi/finance/long_dated_cases.hpp"
#include "gpu_skip.hpp"

using namespace adi::finance;

namespace {

struct Orders {
  double fit, first, second;
};
// Errors at resolutions h, h/2, h/4.
Orders orders(const double e[3]) {
  return {std::log2(std::abs(e[0] / e[2])) / 2.0, std::log2(std::abs(e[0] / e[1])), std::log2(std::abs(e[1] / e[2]))};
}
void expect_order(const double e[3], double lo, double hi, double pair, const std::string& what) {
  const Orders o = orders(e);
  std::printf("[order] %-44s fit %.2f (pairs %.2f %.2f)  errors %.3e %.3e %.3e\n", what.c_str(), o.fit, o.first,
              o.second, e[0], e[1], e[2]);
  EXPECT_GE(o.fit, lo) << what;
  EXPECT_LE(o.fit, hi) << what;
  EXPECT_GE(o.first, pair) << what;
  EXPECT_GE(o.second, pair) << what;
}

const BlackScholesModel kOne{{{100, 0.2, 0.01}}, {}, 0.05};

Method one_asset(adi::index_t nodes, long steps) {
  Method m;
  m.nodes = nodes;
  m.steps = steps;
  m.scheme = adi::Scheme::douglas().with_damping(2);  // Crank-Nicolson after Rannacher
  return m;
}

}  // namespace

TEST(OneAsset, WithinOneE4OfBlackScholesOnAModerateGrid) {
  // Default method: 201 nodes (price space, linear far field), 100 steps, damping 2.
  for (OptionType type : {OptionType::call, OptionType::put})
    for (double K : {90.0, 100.0, 115.0}) {
      const Greeks g = black_scholes(type, 100, K, 1.0, 0.05, 0.01, 0.2);
      const PriceResult r = price<double>(kOne, Contract::vanilla(type, K, 1.0));
      const std::string what = std::string(option_type_name(type)) + " K " + std::to_string(int(K));
      EXPECT_LT(std::abs(r.price - g.price), 1e-4 * g.price) << what << ": " << r.price << " vs " << g.price;
      EXPECT_NEAR(r.delta[0], g.delta, 2e-4) << what;
      EXPECT_NEAR(r.gamma[0], g.gamma, 2e-5 * 100 * g.gamma) << what;
    }
}

// Long maturities and high volatilities (tests/adi/finance/long_dated_cases.hpp), the default method.
TEST(OneAsset, LongMaturitiesAndHighVolatilities) {
  for (const LongDatedCase& k : kLongDated) {
    const BlackScholesModel m{{{100, k.vol, k.q}}, {}, k.r};
    const double exact = black_scholes(k.type, 100, k.K, k.T, k.r, k.q, k.vol).price;
    const PriceResult r = price<double>(m, Contract::vanilla(k.type, k.K, k.T));
    EXPECT_LT(std::abs(r.price - exact), k.tol * exact)
        << option_type_name(k.type) << " sigma " << k.vol << " T " << k.T << " r " << k.r << " q " << k.q << " K "
        << k.K << ": " << r.price << " vs " << exact;
  }
}

// Far strikes and strong drifts (the forward z = 1.6-2.3 sd from the strike): the default
// cluster tightens towards 1 sd there (price_axis_cluster), 1.5-2.3x more accurate than the
// at-the-money 3 sd (Method::cluster = 3: the errors in the comments).
TEST(OneAsset, FarStrikesAndStrongDrifts) {
  struct Case {
    double vol, T, r, q, K;
    OptionType type;
    double tol;  // relative; ~2x the error measured
  };
  const Case cases[] = {
      {0.2, 2, 0.1, 0.0, 200, OptionType::call, 1e-2},    // 4.8e-3 (3 sd: 7.2e-3)
      {0.6, 0.25, 0.1, 0.0, 200, OptionType::call, 6e-3},  // 2.8e-3 (5.7e-3)
      {0.05, 0.25, 0.1, 0.0, 100, OptionType::put, 2.5e-3},  // -1.2e-3 (-1.9e-3)
      {0.05, 2, 0.0, 0.08, 100, OptionType::call, 1.3e-2},   // -6.4e-3 (-1.5e-2)
  };
  for (const Case& k : cases) {
    const BlackScholesModel m{{{100, k.vol, k.q}}, {}, k.r};
    const double exact = black_scholes(k.type, 100, k.K, k.T, k.r, k.q, k.vol).price;
    const double p = price<double>(m, Contract::vanilla(k.type, k.K, k.T)).price;
    Method three;
    three.cluster = 3;
    const double p3 = price<double>(m, Contract::vanilla(k.type, k.K, k.T), three).price;
    EXPECT_LT(std::abs(p - exact), k.tol * exact) << option_type_name(k.type) << " sigma " << k.vol << " K " << k.K;
    EXPECT_LT(std::abs(p - exact), std::abs(p3 - exact)) << option_type_name(k.type) << " sigma " << k.vol;
  }
}

TEST(OneAsset, LogSpaceWithDirichletFarField) {
  Method m;
  m.space = Space::log;
  m.far_field = FarField::dirichlet;
  for (OptionType type : {OptionType::call, OptionType::put}) {
    const Greeks g = black_scholes(type, 100, 105, 1.0, 0.05, 0.01, 0.2);
    const PriceResult r = price<double>(kOne, Contract::vanilla(type, 105, 1.0), m);
    EXPECT_LT(std::abs(r.price - g.price), 1e-4 * g.price) << option_type_name(type);
    EXPECT_NEAR(r.delta[0], g.delta, 2e-4);
    EXPECT_NEAR(r.gamma[0], g.gamma, 2e-5);
  }
}

TEST(OneAsset, SecondOrderInSpace) {
  // Time error negligible (1000 steps); nodes 51, 101, 201.
  const Contract c = Contract::vanilla(OptionType::call, 100, 1.0);
  const Greeks g = black_scholes(OptionType::call, 100, 100, 1.0, 0.05, 0.01, 0.2);
  for (Space s : {Space::price, Space::log}) {
    double ep[3], ed[3], eg[3];
    for (int k = 0; k < 3; ++k) {
      Method m = one_asset(51 * (1 << k) - (1 << k) + 1, 1000);  // 51, 101, 201: h halves
      if (s == Space::log) {
        m.space = Space::log;
        m.far_field = FarField::dirichlet;
        m.intensity = 2.0;  // away from the default's near-cancellation, so the order shows
      }
      const PriceResult r = price<double>(kOne, c, m);
      ep[k] = r.price - g.price;
      ed[k] = r.delta[0] - g.delta;
      eg[k] = r.gamma[0] - g.gamma;
    }
    const std::string sp = space_name(s);
    expect_order(ep, 1.8, 2.3, 1.7, "1 asset price, space, " + sp);
    expect_order(ed, 1.8, 2.3, 1.7, "1 asset delta, space, " + sp);
    if (s == Space::price)
      expect_order(eg, 1.8, 2.3, 1.7, "1 asset gamma, space, " + sp);
    else  // log space: the gamma error nearly cancels (|e| ~ 1e-7), its ratios mean nothing
      EXPECT_LT(std::abs(eg[2]), 1e-6);
  }
}

TEST(OneAsset, SecondOrderInTimeWithDamping) {
  // Same grid (801 nodes), 10, 20, 40 steps against 2560 steps: the time error alone.
  const Contract c = Contract::vanilla(OptionType::put, 100, 1.0);
  for (const char* scheme : {"douglas", "hundsdorfer-verwer"}) {
    Method m = one_asset(801, 2560);
    m.scheme = adi::Scheme::from_name(scheme).with_damping(2);
    const PriceResult ref = price<double>(kOne, c, m);
    double ep[3], ed[3], eg[3];
    for (int k = 0; k < 3; ++k) {
      m.steps = 10 << k;
      const PriceResult r = price<double>(kOne, c, m);
      ep[k] = r.price - ref.price;
      ed[k] = r.delta[0] - ref.delta[0];
      eg[k] = r.gamma[0] - ref.gamma[0];
    }
    expect_order(ep, 1.9, 2.2, 1.8, std::string("1 asset price, time, ") + scheme);
    expect_order(ed, 1.8, 2.3, 1.7, std::string("1 asset delta, time, ") + scheme);
    expect_order(eg, 1.8, 2.4, 1.6, std::string("1 asset gamma, time, ") + scheme);
  }
  // Without damping Crank-Nicolson keeps the kink's oscillations: gamma is far off.
  Method plain = one_asset(801, 20);
  plain.scheme = adi::Scheme::douglas();
  const Greeks g = black_scholes(OptionType::put, 100, 100, 1.0, 0.05, 0.01, 0.2);
  EXPECT_GT(std::abs(price<double>(kOne, c, plain).gamma[0] - g.gamma), 10 * g.gamma);
}

TEST(OneAsset, PutCallParity) {
  // Price space represents C - P = S e^{-qT} - K e^{-rT} (linear in S) exactly in space, up
  // to the cell averaging of the payoff on the kink's cells; log space up to O(h^2). In
  // time, the damping's implicit Euler halves leave ~ 4 (r dt/2)^2 K / 2 ~ 1e-5.
  for (Space s : {Space::price, Space::log})
    for (bool smoothing : {false, true}) {
      Method m;
      m.space = s;
      m.far_field = s == Space::log ? FarField::dirichlet : FarField::linear;
      m.smoothing = smoothing;
      const double tol = s == Space::price && !smoothing ? 2e-5 : 1e-4;
      for (double K : {80.0, 100.0, 120.0}) {
        const PriceResult c = price<double>(kOne, Contract::vanilla(OptionType::call, K, 1.0), m);
        const PriceResult p = price<double>(kOne, Contract::vanilla(OptionType::put, K, 1.0), m);
        EXPECT_NEAR(c.price - p.price, 100 * std::exp(-0.01) - K * std::exp(-0.05), tol)
            << space_name(s) << " K " << K << " smoothing " << smoothing;
        EXPECT_NEAR(c.delta[0] - p.delta[0], std::exp(-0.01), tol);
      }
    }
}

TEST(OneAsset, FloatAgreesWithDouble) {
  const Contract c = Contract::vanilla(OptionType::call, 100, 1.0);
  const PriceResult d = price<double>(kOne, c), f = price<float>(kOne, c);
  EXPECT_NEAR(f.price, d.price, 2e-5 * d.price);
  EXPECT_NEAR(f.delta[0], d.delta[0], 1e-4);
}

TEST(TwoAssets, MargrabeExchangeOption) {
  const BlackScholesModel m{{{100, 0.2, 0.01}, {95, 0.3, 0.02}}, {1, 0.4, 0.4, 1}, 0.05};
  const double exact = margrabe(m, 1.0);
  double e[3];
  for (int k = 0; k < 3; ++k) {
    Method me;
    me.nodes = 40 * (1 << k) + 1;  // 41, 81, 161
    me.steps = 20 << k;
    e[k] = price<double>(m, Contract::exchange(1.0), me).price - exact;
  }
  expect_order(e, 1.8, 2.5, 1.7, "Margrabe exchange, 2 assets");
  EXPECT_LT(std::abs(e[2]), 1e-4 * exact);
  // Default method (101 x 101, 50 steps), and the spread with K = 0 is the same option.
  const PriceResult r = price<double>(m, Contract::exchange(1.0));
  EXPECT_LT(std::abs(r.price - exact), 2e-4 * exact);
  EXPECT_NEAR(price<double>(m, Contract::spread(OptionType::call, 0.0, 1.0)).price, r.price, 1e-12);
  // Delta wrt S_1 of max(S1 - S2, 0) is e^{-q1 T} N(d1).
  const double s2 = 0.04 + 0.09 - 2 * 0.4 * 0.2 * 0.3;
  const double d1 = (std::log(100 * std::exp(-0.01) / (95 * std::exp(-0.02))) + 0.5 * s2) / std::sqrt(s2);
  EXPECT_NEAR(r.delta[0], std::exp(-0.01) * normal_cdf(d1), 2e-4);
  EXPECT_NEAR(r.delta[1], -std::exp(-0.02) * normal_cdf(d1 - std::sqrt(s2)), 2e-4);
}

TEST(TwoAssets, LogSpaceMargrabe) {
  const BlackScholesModel m{{{100, 0.2, 0.0}, {100, 0.3, 0.0}}, {1, -0.5, -0.5, 1}, 0.03};
  Method me;
  me.space = Space::log;
  me.far_field = FarField::dirichlet;
  const double exact = margrabe(m, 1.0);
  EXPECT_LT(std::abs(price<double>(m, Contract::exchange(1.0), me).price - exact), 2e-4 * exact);
}

TEST(TwoAssets, ParitiesOfSpreadBasketAndBestWorstOf) {
  const BlackScholesModel m{{{100, 0.25, 0.0}, {90, 0.35, 0.01}}, {1, 0.3, 0.3, 1}, 0.04};
  const double F1 = 100, F2 = 90 * std::exp(-0.01), df = std::exp(-0.04);
  Method me;
  me.nodes = 81;
  me.steps = 40;
  me.smoothing = false;  // the identities below then hold on the grid, up to round-off and O(dt^2 r^2):
                         // the damping's 4 implicit Euler halves leave ~ 4 (r dt/2)^2 K / 2 ~ 5e-5
  auto p = [&](const Contract& c) { return price<double>(m, c, me).price; };
  EXPECT_NEAR(p(Contract::spread(OptionType::call, 5, 1)) - p(Contract::spread(OptionType::put, 5, 1)),
              F1 - F2 - 5 * df, 1e-4);
  EXPECT_NEAR(p(Contract::basket(OptionType::call, 95, 1)) - p(Contract::basket(OptionType::put, 95, 1)),
              0.5 * (F1 + F2) - 95 * df, 1e-4);
  // max(a, b) + min(a, b) = a + b: best-of + worst-of = the two one-asset calls, each
  // priced on the same grid as a basket with weights (1, 0) and (0, 1)...
  const double best = p(Contract::best_of(OptionType::call, 95, 1)), worst = p(Contract::worst_of(OptionType::call, 95, 1));
  const double a1 = p(Contract::basket(OptionType::call, 95, 1, {1, 0})), a2 = p(Contract::basket(OptionType::call, 95, 1, {0, 1}));
  EXPECT_NEAR(best + worst, a1 + a2, 1e-9);
  // ... which are Black-Scholes prices up to the grid's error.
  const double c1 = black_scholes(OptionType::call, 100, 95, 1, 0.04, 0.0, 0.25).price;
  const double c2 = black_scholes(OptionType::call, 90, 95, 1, 0.04, 0.01, 0.35).price;
  EXPECT_NEAR(a1, c1, 2e-3 * c1);
  EXPECT_NEAR(a2, c2, 2e-3 * c2);
  EXPECT_GT(best, std::max(c1, c2));
  // Arithmetic basket >= geometric basket (AM-GM), both calls.
  EXPECT_GT(p(Contract::basket(OptionType::call, 95, 1)), geometric_basket(m, Contract::geometric_basket(OptionType::call, 95, 1)));
}

TEST(GeometricBasket, TwoAndThreeAssetsConvergeAtOrderTwo) {
  const BlackScholesModel three{{{100, 0.2, 0.0}, {100, 0.3, 0.01}, {100, 0.25, 0.0}},
                                {1, 0.5, 0.3, 0.5, 1, 0.2, 0.3, 0.2, 1},
                                0.05};
  BlackScholesModel two = three;
  two.assets.resize(2);
  two.correlation = {1, 0.5, 0.5, 1};
  for (const BlackScholesModel* m : {static_cast<const BlackScholesModel*>(&two), &three}) {
    const Contract c = Contract::geometric_basket(OptionType::call, 100, 1.0);
    const double exact = geometric_basket(*m, c);
    double e[3];
    for (int k = 0; k < 3; ++k) {
      Method me;
      me.nodes = 16 * (1 << k) + 1;  // 17, 33, 65
      me.steps = 8 << k;
      e[k] = price<double>(*m, c, me).price - exact;
    }
    expect_order(e, 1.8, 3.0, 1.6, "geometric basket, " + std::to_string(m->size()) + " assets");
    EXPECT_LT(std::abs(e[2]), 1e-4 * exact + 5e-4) << m->size() << " assets";
  }
}

TEST(Heston, AgreesWithTheTestsSemiAnalyticPrice) {
  const HestonModel h;  // in 't Hout & Foulon's case 1
  for (OptionType type : {OptionType::call, OptionType::put}) {
    const double call = adi::finance::testing::test_heston_call(h, 100, 1.0);
    const double exact = type == OptionType::call ? call : call - 100 + 100 * std::exp(-h.rate);
    double e[3];
    for (int k = 0; k < 3; ++k) {
      Method me;
      me.nodes = 40 * (1 << k) + 1;  // 41, 81, 161
      me.variance_nodes = 20 * (1 << k) + 1;
      me.steps = 20 << k;
      e[k] = price<double>(h, Contract::vanilla(type, 100, 1.0), me).price - exact;
    }
    expect_order(e, 1.8, 2.4, 1.7, std::string("Heston ") + option_type_name(type));
    EXPECT_LT(std::abs(e[2]), 2e-4 * call) << option_type_name(type);
  }
  // In 't Hout & Foulon's far field (Dirichlet at S_max and v_max) gives the same price.
  Method me;
  const double linear = price<double>(h, Contract::vanilla(OptionType::call, 100, 1.0), me).price;
  me.far_field = FarField::dirichlet;
  EXPECT_NEAR(price<double>(h, Contract::vanilla(OptionType::call, 100, 1.0), me).price, linear, 1e-4);
}

TEST(Executor, CudaAgreesWithHost) {
  ADI_REQUIRE_CUDA("the GPU pricing check");
  const BlackScholesModel m{{{100, 0.2, 0.0}, {100, 0.3, 0.0}, {100, 0.25, 0.0}},
                            {1, 0.5, 0.3, 0.5, 1, 0.2, 0.3, 0.2, 1},
                            0.05};
  const Contract c = Contract::geometric_basket(OptionType::call, 100, 1.0);
  Method me;
  me.nodes = 33;
  me.steps = 16;
  const PriceResult host = price<double>(m, c, me);
  me.executor = adi::Executor::cuda();
  const PriceResult dev = price<double>(m, c, me);
  EXPECT_NEAR(dev.price, host.price, 1e-10 * host.price);
  const PriceResult devf = price<float>(m, c, me);
  EXPECT_NEAR(devf.price, host.price, 1e-4 * host.price);
}

// The other models on the GPU: one asset (AdiSolver's Douglas on the device; the host
// takes the one-line sweep, the same scheme), the exchange option (two correlated assets,
// HV) and Heston (per-node bands along S, mixed term, v = 0 face) agree with the host.
TEST(Executor, CudaAgreesWithHostOneTwoAssetsAndHeston) {
  ADI_REQUIRE_CUDA("the GPU pricing check");
  const auto both = [](const auto& model, const Contract& c, Method me, const char* what) {
    const PriceResult host = price<double>(model, c, me);
    me.executor = adi::Executor::cuda();
    const PriceResult dev = price<double>(model, c, me);
    EXPECT_NEAR(dev.price, host.price, 1e-9 * host.price) << what;
    EXPECT_NEAR(dev.delta[0], host.delta[0], 1e-8) << what;
    const PriceResult devf = price<float>(model, c, me);
    EXPECT_NEAR(devf.price, host.price, 2e-4 * host.price) << what;
  };
  both(kOne, Contract::vanilla(OptionType::put, 100, 1.0), one_asset(101, 20), "one asset");
  const BlackScholesModel two{{{100, 0.2, 0.0}, {95, 0.3, 0.01}}, {1, 0.4, 0.4, 1}, 0.05};
  Method me2;
  me2.nodes = 41;
  me2.steps = 12;
  both(two, Contract::exchange(1.0), me2, "exchange");
  Method meh;
  meh.nodes = 41;
  meh.variance_nodes = 21;
  meh.steps = 10;
  both(HestonModel{}, Contract::vanilla(OptionType::call, 100, 1.0), meh, "heston");
}
