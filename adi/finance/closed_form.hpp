#pragma once
// Closed-form and semi-analytic prices: the references the ADI pricer is checked
// against (tests/adi/finance, benchmarks/bench_quantlib.cpp, examples/black_scholes).
#include <optional>

#include "adi/finance/model.hpp"

namespace adi::finance {

// Price and sensitivities (theta: d price / d calendar time, per year).
struct Greeks {
  double price = 0, delta = 0, gamma = 0, vega = 0, theta = 0, rho = 0;
};

// Black-Scholes-Merton price and greeks of a European call or put with continuous
// dividend yield. volatility = 0 gives the discounted forward intrinsic value.
Greeks black_scholes(OptionType type, double spot, double strike, double maturity, double rate, double dividend,
                     double volatility);

// Margrabe: the European option to exchange asset 2 for asset 1, max(S_1 - S_2, 0) at
// maturity, with dividend yields (needs a model of 2 assets).
double margrabe(const BlackScholesModel& model, double maturity);

// European option on the geometric average prod_i S_i^{w_i}: log-normal, so a
// Black-Scholes formula with an effective spot, volatility and dividend yield.
double geometric_basket(const BlackScholesModel& model, const Contract& contract);

// Heston (1993) semi-analytic European price: P1, P2 from the characteristic function
// in the "little trap" form of Albrecher et al. (2007), integrated by Gauss-Legendre
// panels until the integrand has decayed; put by put-call parity.
double heston(const HestonModel& model, OptionType type, double strike, double maturity);

// The closed form of a contract under a model, when there is one (vanilla, geometric
// basket, exchange; European exercise); nullopt otherwise. Validates both.
std::optional<double> closed_form(const BlackScholesModel& model, const Contract& contract);
std::optional<double> closed_form(const HestonModel& model, const Contract& contract);

// Standard normal cumulative distribution.
double normal_cdf(double x);

}  // namespace adi::finance
