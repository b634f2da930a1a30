#pragma once
// Market, model and contract descriptions for option pricing (docs/finance.md).
// Plain values; validate() throws adi::InvalidArgument with a message that names the
// parameter, its value and the accepted range.
//
//   adi::finance::BlackScholesModel m{{{100, 0.2, 0.0}, {100, 0.3, 0.0}}, {1, 0.5, 0.5, 1}, 0.05};
//   auto c = adi::finance::Contract::exchange(1.0);
#include <string>
#include <vector>

namespace adi::finance {

// A number for an error message: the shortest of %.15g / %.17g that reads back as `v`
// (rho = -1.0000001 prints so, not "-1"; 0.2 prints "0.2").
std::string format_number(double v);

enum class OptionType { call, put };
// bermudan: only through OneAssetOption (one_asset.hpp), which carries the dates.
enum class Exercise { european, american, bermudan };

// "call" / "put".
const char* option_type_name(OptionType t);

// One underlying: spot price, lognormal volatility (per year), continuous dividend yield.
struct Asset {
  double spot = 100.0;
  double volatility = 0.2;
  double dividend = 0.0;
};

// n = 1..3 correlated geometric Brownian motions under the risk-neutral measure:
// dS_i = (r - q_i) S_i dt + sigma_i S_i dW_i, dW_i dW_j = rho_ij dt.
struct BlackScholesModel {
  std::vector<Asset> assets;
  std::vector<double> correlation;  // n x n, row-major; empty: independent assets
  double rate = 0.0;                // continuously compounded risk-free rate

  int size() const { return static_cast<int>(assets.size()); }
  // rho_ij (1 on the diagonal, 0 when `correlation` is empty).
  double corr(int i, int j) const;
  // Throws InvalidArgument for n outside 1..3, spot <= 0, volatility < 0, a non-finite
  // rate or dividend, a correlation of the wrong size, not symmetric, without a unit
  // diagonal, with an entry outside [-1, 1], or not positive semi-definite.
  void validate() const;
};

// Heston stochastic volatility: dS = (r - q) S dt + sqrt(v) S dW1,
// dv = kappa (theta - v) dt + sigma sqrt(v) dW2, dW1 dW2 = rho dt.
struct HestonModel {
  double spot = 100.0;
  double v0 = 0.04;     // initial variance
  double kappa = 1.5;   // mean reversion speed
  double theta = 0.04;  // long-run variance
  double sigma = 0.3;   // volatility of variance
  double rho = -0.9;    // correlation of the two Brownian motions
  double rate = 0.025;
  double dividend = 0.0;

  // Throws InvalidArgument for spot <= 0, v0 < 0, kappa <= 0, theta < 0, sigma <= 0,
  // rho outside [-1, 1] or non-finite values.
  void validate() const;
};

// What the payoff is a function of: the "underlying" U(S_1..S_n) in max(+-(U - K), 0).
enum class Payoff {
  vanilla,           // U = S_1 (one asset)
  basket,            // U = sum_i w_i S_i
  geometric_basket,  // U = prod_i S_i^{w_i} (closed form: a Black-Scholes formula)
  spread,            // U = S_1 - S_2 (two assets)
  exchange,          // max(S_1 - S_2, 0) (two assets; Margrabe's closed form; strike ignored)
  best_of,           // U = max_i S_i
  worst_of           // U = min_i S_i
};
// "vanilla", "basket", "geometric", "spread", "exchange", "best-of", "worst-of".
const char* payoff_name(Payoff p);
// The inverse of payoff_name; throws InvalidArgument listing the names.
Payoff payoff_from_name(const std::string& name);

struct Contract {
  Payoff payoff = Payoff::vanilla;
  OptionType type = OptionType::call;
  double strike = 100.0;
  double maturity = 1.0;  // years
  Exercise exercise = Exercise::european;
  std::vector<double> weights;  // basket weights; empty: 1/n each

  static Contract vanilla(OptionType type, double strike, double maturity,
                          Exercise exercise = Exercise::european);
  static Contract basket(OptionType type, double strike, double maturity, std::vector<double> weights = {});
  static Contract geometric_basket(OptionType type, double strike, double maturity,
                                   std::vector<double> weights = {});
  static Contract spread(OptionType type, double strike, double maturity);
  static Contract exchange(double maturity);
  static Contract best_of(OptionType type, double strike, double maturity);
  static Contract worst_of(OptionType type, double strike, double maturity);

  // Number of assets the payoff needs (1 vanilla, 2 spread/exchange) or 0 (any n).
  int required_assets() const;
  // The basket weight of asset i among n (1/n when `weights` is empty).
  double weight(int i, int n) const;
  // U(s[0..n-1]) - K: the payoff is max(+-(this), 0); it kinks where it is 0.
  double moneyness(const double* s, int n) const;
  // The payoff at maturity for asset prices s[0..n-1].
  double value(const double* s, int n) const;
  // Throws InvalidArgument for maturity <= 0, strike < 0, a payoff that needs another
  // number of assets, wrong or negative weights, a one-asset American non-vanilla payoff.
  void validate(int assets) const;
  std::string describe() const;
};

}  // namespace adi::finance
