#include "adi/finance/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "adi/error.hpp"

namespace adi::finance {

std::string format_number(double v) { return ::adi::detail::number(v); }

namespace {

std::string num(double v) { return format_number(v); }

void require_finite(double v, const char* what) {
  if (!std::isfinite(v)) throw InvalidArgument(std::string(what) + " = " + num(v) + " must be finite");
}

struct PayoffName {
  Payoff payoff;
  const char* name;
};
constexpr PayoffName kPayoffNames[] = {
    {Payoff::vanilla, "vanilla"},   {Payoff::basket, "basket"},     {Payoff::geometric_basket, "geometric"},
    {Payoff::spread, "spread"},     {Payoff::exchange, "exchange"}, {Payoff::best_of, "best-of"},
    {Payoff::worst_of, "worst-of"},
};

}  // namespace

const char* option_type_name(OptionType t) { return t == OptionType::call ? "call" : "put"; }

const char* payoff_name(Payoff p) {
  for (const auto& e : kPayoffNames)
    if (e.payoff == p) return e.name;
  return "unknown";
}

Payoff payoff_from_name(const std::string& name) {
  std::string all;
  for (const auto& e : kPayoffNames) {
    if (name == e.name) return e.payoff;
    all += all.empty() ? "" : ", ";
    all += e.name;
  }
  throw InvalidArgument("unknown payoff '" + name + "'; expected one of: " + all);
}

double BlackScholesModel::corr(int i, int j) const {
  if (i == j) return 1.0;
  if (correlation.empty()) return 0.0;
  return correlation[static_cast<std::size_t>(i * size() + j)];
}

void BlackScholesModel::validate() const {
  const int n = size();
  detail::require(n >= 1 && n <= 3, "BlackScholesModel: " + ::adi::detail::number(n) +
                                        " assets; the ADI pricer handles 1, 2 or 3 (one grid axis each)");
  require_finite(rate, "BlackScholesModel: rate");
  for (int i = 0; i < n; ++i) {
    // The messages are built only for a failing check (a chain validates 10^5-10^6 models).
    const Asset& a = assets[static_cast<std::size_t>(i)];
    auto who = [&] { return "BlackScholesModel: asset " + ::adi::detail::number(i + 1) + " "; };
    if (!(std::isfinite(a.spot) && a.spot > 0.0)) throw InvalidArgument(who() + "spot = " + num(a.spot) + " must be > 0");
    if (!(std::isfinite(a.volatility) && a.volatility >= 0.0))
      throw InvalidArgument(who() + "volatility = " + num(a.volatility) + " must be finite and >= 0");
    if (!std::isfinite(a.dividend)) throw InvalidArgument(who() + "dividend = " + num(a.dividend) + " must be finite");
  }
  if (correlation.empty()) return;
  detail::require(correlation.size() == static_cast<std::size_t>(n * n),
                  "BlackScholesModel: correlation has " + ::adi::detail::number(correlation.size()) +
                      " entries; give a " + ::adi::detail::number(n) + " x " + ::adi::detail::number(n) +
                      " matrix (row-major) or none");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double r = correlation[static_cast<std::size_t>(i * n + j)];
      const std::string at = "BlackScholesModel: correlation(" + ::adi::detail::number(i + 1) + ", " +
                             ::adi::detail::number(j + 1) + ") = " + num(r);
      detail::require(std::isfinite(r) && r >= -1.0 && r <= 1.0, at + " must lie in [-1, 1]");
      if (i == j) detail::require(r == 1.0, at + " must be 1 (a unit diagonal)");
      if (j > i)
        detail::require(r == correlation[static_cast<std::size_t>(j * n + i)],
                        at + " differs from correlation(" + ::adi::detail::number(j + 1) + ", " + ::adi::detail::number(i + 1) +
                            ") = " + num(correlation[static_cast<std::size_t>(j * n + i)]) +
                            "; the matrix must be symmetric");
    }
  // Cholesky: a negative pivot means no Brownian motions have these correlations.
  std::vector<double> L(static_cast<std::size_t>(n * n), 0.0);
  for (int j = 0; j < n; ++j) {
    double d = 1.0;
    for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
    if (d < -1e-12) {
      std::string m = "BlackScholesModel: the correlation matrix [";
      for (int i = 0; i < n * n; ++i) m += (i ? (i % n ? ", " : "; ") : "") + num(correlation[i]);
      throw InvalidArgument(m + "] is not positive semi-definite (Cholesky pivot " + ::adi::detail::number(j + 1) +
                            " = " + num(d) + " < 0): no Brownian motions are correlated so; make the entries consistent");
    }
    d = std::sqrt(std::max(d, 0.0));
    L[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = corr(i, j);
      for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = d > 0.0 ? s / d : 0.0;
    }
  }
}

void HestonModel::validate() const {
  detail::require(std::isfinite(spot) && spot > 0.0, "HestonModel: spot = " + num(spot) + " must be > 0");
  detail::require(std::isfinite(v0) && v0 >= 0.0, "HestonModel: v0 = " + num(v0) + " (initial variance) must be >= 0");
  detail::require(std::isfinite(kappa) && kappa > 0.0, "HestonModel: kappa = " + num(kappa) + " must be > 0");
  detail::require(std::isfinite(theta) && theta >= 0.0,
                  "HestonModel: theta = " + num(theta) + " (long-run variance) must be >= 0");
  detail::require(std::isfinite(sigma) && sigma > 0.0,
                  "HestonModel: sigma = " + num(sigma) + " (volatility of variance) must be > 0");
  detail::require(std::isfinite(rho) && rho >= -1.0 && rho <= 1.0,
                  "HestonModel: rho = " + num(rho) + " must lie in [-1, 1]");
  require_finite(rate, "HestonModel: rate");
  require_finite(dividend, "HestonModel: dividend");
}

Contract Contract::vanilla(OptionType type, double strike, double maturity, Exercise exercise) {
  return Contract{Payoff::vanilla, type, strike, maturity, exercise, {}};
}
Contract Contract::basket(OptionType type, double strike, double maturity, std::vector<double> weights) {
  return Contract{Payoff::basket, type, strike, maturity, Exercise::european, std::move(weights)};
}
Contract Contract::geometric_basket(OptionType type, double strike, double maturity, std::vector<double> weights) {
  return Contract{Payoff::geometric_basket, type, strike, maturity, Exercise::european, std::move(weights)};
}
Contract Contract::spread(OptionType type, double strike, double maturity) {
  return Contract{Payoff::spread, type, strike, maturity, Exercise::european, {}};
}
Contract Contract::exchange(double maturity) {
  return Contract{Payoff::exchange, OptionType::call, 0.0, maturity, Exercise::european, {}};
}
Contract Contract::best_of(OptionType type, double strike, double maturity) {
  return Contract{Payoff::best_of, type, strike, maturity, Exercise::european, {}};
}
Contract Contract::worst_of(OptionType type, double strike, double maturity) {
  return Contract{Payoff::worst_of, type, strike, maturity, Exercise::european, {}};
}

int Contract::required_assets() const {
  switch (payoff) {
    case Payoff::vanilla: return 1;
    case Payoff::spread:
    case Payoff::exchange: return 2;
    default: return 0;
  }
}

double Contract::weight(int i, int n) const {
  return weights.empty() ? 1.0 / double(n) : weights[static_cast<std::size_t>(i)];
}

double Contract::moneyness(const double* s, int n) const {
  double u = 0.0;
  switch (payoff) {
    case Payoff::vanilla: u = s[0]; break;
    case Payoff::basket:
      for (int i = 0; i < n; ++i) u += weight(i, n) * s[i];
      break;
    case Payoff::geometric_basket: {
      double l = 0.0;
      for (int i = 0; i < n; ++i) l += weight(i, n) * std::log(s[i]);
      u = std::exp(l);
      break;
    }
    case Payoff::spread: u = s[0] - s[1]; break;
    case Payoff::exchange: return s[0] - s[1];
    case Payoff::best_of: u = *std::max_element(s, s + n); break;
    case Payoff::worst_of: u = *std::min_element(s, s + n); break;
  }
  return u - strike;
}

double Contract::value(const double* s, int n) const {
  const double m = moneyness(s, n);
  return std::max(type == OptionType::call || payoff == Payoff::exchange ? m : -m, 0.0);
}

void Contract::validate(int assets) const {
  if (!(std::isfinite(maturity) && maturity > 0.0))
    throw InvalidArgument("Contract: maturity = " + num(maturity) + " must be > 0 (years)");
  if (!(std::isfinite(strike) && strike >= 0.0)) throw InvalidArgument("Contract: strike = " + num(strike) + " must be >= 0");
  const int need = required_assets();
  if (need != 0 && need != assets)
    throw InvalidArgument(std::string("Contract: the ") + payoff_name(payoff) + " payoff needs " +
                          ::adi::detail::number(need) + " asset(s), the model has " + ::adi::detail::number(assets));
  if (!weights.empty()) {
    detail::require(payoff == Payoff::basket || payoff == Payoff::geometric_basket,
                    std::string("Contract: weights are for basket payoffs, not ") + payoff_name(payoff));
    detail::require(weights.size() == static_cast<std::size_t>(assets),
                    "Contract: " + ::adi::detail::number(weights.size()) + " basket weights for " + ::adi::detail::number(assets) +
                        " assets; give one per asset");
    for (double w : weights)
      detail::require(std::isfinite(w) && w >= 0.0, "Contract: basket weight " + num(w) + " must be >= 0");
  }
  if (exercise == Exercise::bermudan)
    throw InvalidArgument("Contract: Bermudan exercise needs its dates; use OneAssetOption::exercise_dates with "
                          "price(OneAssetModel, OneAssetOption, Method) (adi/finance/one_asset.hpp)");
  if (exercise == Exercise::american && assets == 1 && payoff != Payoff::vanilla)
    throw InvalidArgument(std::string("Contract: American exercise of a one-asset option is supported for vanilla "
                                      "payoffs only, not ") + payoff_name(payoff));
}

std::string Contract::describe() const {
  std::ostringstream s;
  s << (exercise == Exercise::american ? "American " : exercise == Exercise::bermudan ? "Bermudan " : "European ")
    << payoff_name(payoff);
  if (payoff != Payoff::exchange) s << " " << option_type_name(type) << ", K = " << num(strike);
  s << ", T = " << num(maturity);
  return s.str();
}

}  // namespace adi::finance
