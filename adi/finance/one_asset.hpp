#pragma once
// One asset beyond constant Black-Scholes (issue 20; docs/finance.md "One-asset engine"):
// term structures r(t), q(t), local volatility sigma(S, t) (a function or a grid), discrete
// cash and proportional dividends (jump conditions between steps), single and double
// barriers (knock-out with a rebate paid at the hit; knock-in by parity), digital and
// user-defined payoffs, European, Bermudan and American exercise, and greeks (delta,
// gamma, theta from the grid; vega, rho by bumping on the same grid).
//
//   OneAssetModel m;  m.spot = 100; m.rate = 0.05; m.volatility = 0.25;
//   m.dividends = {Dividend::cash(0.5, 2.0)};
//   OneAssetOption o = OneAssetOption::vanilla(OptionType::put, 100, 1.0, Exercise::american);
//   o.barrier = Barrier::down_out(80.0, 1.0);
//   PriceResult r = price(m, o);            // r.price, r.delta[0], r.gamma[0], r.theta
//   PriceResult g = price_with_greeks(m, o);  // + r.vega, r.rho
//   PriceResult x = price(m, o, {}, Extrapolation::richardson);  // (4 V_h - V_2h) / 3
#include <functional>
#include <vector>

#include "adi/finance/extrapolation.hpp"
#include "adi/finance/model.hpp"
#include "adi/finance/pricer.hpp"

namespace adi::finance {

// A function of calendar time t (years from today): an instantaneous rate or yield.
using TermStructure = std::function<double(double t)>;
// Local volatility sigma(S, t) (a term structure sigma(t) ignores S).
using LocalVolatility = std::function<double(double S, double t)>;

// A discrete dividend at `time` (years from today, inside (0, T)): cash (S -> max(S - D, 0)
// at the ex-date) or proportional (S -> S (1 - D), 0 <= D < 1).
struct Dividend {
  double time = 0.0;
  double amount = 0.0;
  bool proportional = false;
  static Dividend cash(double time, double amount) { return {time, amount, false}; }
  static Dividend fraction(double time, double fraction) { return {time, fraction, true}; }
};

// dS = (r(t) - q(t)) S dt + sigma(S, t) S dW, with discrete dividends. The constants are
// used where the functions are empty.
struct OneAssetModel {
  double spot = 100.0;
  double rate = 0.0;            // r when rate_curve is empty
  double dividend_yield = 0.0;  // q when yield_curve is empty
  double volatility = 0.2;      // sigma when local_volatility is empty
  TermStructure rate_curve, yield_curve;
  LocalVolatility local_volatility;
  std::vector<Dividend> dividends;

  double r(double t) const { return rate_curve ? rate_curve(t) : rate; }
  double q(double t) const { return yield_curve ? yield_curve(t) : dividend_yield; }
  double sigma(double S, double t) const { return local_volatility ? local_volatility(S, t) : volatility; }
  // Throws InvalidArgument for spot <= 0, non-finite constants, volatility < 0, a dividend
  // with a non-finite or negative amount (proportional: outside [0, 1)) or time <= 0.
  void validate() const;
};

// sigma(S, t) by bilinear interpolation of sigma[j * spots.size() + i] at (spots[i],
// times[j]) (both strictly increasing), flat beyond the ends. Throws InvalidArgument for
// sizes that do not match, unsorted nodes or a negative or non-finite sigma.
LocalVolatility local_volatility_grid(std::vector<double> spots, std::vector<double> times,
                                      std::vector<double> sigma);

// Continuously monitored barriers. Knock-out: worth `rebate` the moment S touches a
// barrier (paid at the hit, as QuantLib's AnalyticBarrierEngine). Knock-in (European only):
// the vanilla minus the knock-out, plus `rebate` paid at maturity if never knocked in.
enum class BarrierKind { none, down_out, up_out, double_out, down_in, up_in, double_in };
struct Barrier {
  BarrierKind kind = BarrierKind::none;
  double lower = 0.0, upper = 0.0;
  double rebate = 0.0;
  static Barrier down_out(double b, double rebate = 0) { return {BarrierKind::down_out, b, 0.0, rebate}; }
  static Barrier up_out(double b, double rebate = 0) { return {BarrierKind::up_out, 0.0, b, rebate}; }
  static Barrier double_out(double lo, double hi, double rebate = 0) { return {BarrierKind::double_out, lo, hi, rebate}; }
  static Barrier down_in(double b, double rebate = 0) { return {BarrierKind::down_in, b, 0.0, rebate}; }
  static Barrier up_in(double b, double rebate = 0) { return {BarrierKind::up_in, 0.0, b, rebate}; }
  static Barrier double_in(double lo, double hi, double rebate = 0) { return {BarrierKind::double_in, lo, hi, rebate}; }
  bool has_lower() const;
  bool has_upper() const;
  bool knock_in() const;
};

// vanilla: max(+-(S - K), 0); digital: cash-or-nothing, `cash` if S > K (call) / S < K
// (put); custom: payoff(S), with `kinks` the points where it kinks or jumps (cell
// averaging there; the grid clusters at the first).
enum class PayoffKind { vanilla, digital, custom };

struct OneAssetOption {
  PayoffKind payoff = PayoffKind::vanilla;
  OptionType type = OptionType::call;
  double strike = 100.0;
  double maturity = 1.0;
  double cash = 1.0;  // digital amount
  std::function<double(double S)> custom;
  std::vector<double> kinks;
  Exercise exercise = Exercise::european;
  std::vector<double> exercise_dates;  // Bermudan: times in (0, T); maturity always is one
  Barrier barrier;

  static OneAssetOption vanilla(OptionType type, double strike, double maturity,
                                Exercise exercise = Exercise::european);
  static OneAssetOption digital(OptionType type, double strike, double maturity, double cash = 1.0);
  static OneAssetOption bermudan(OptionType type, double strike, double maturity, std::vector<double> dates);
  static OneAssetOption user(std::function<double(double)> payoff, double maturity, std::vector<double> kinks = {});
  // The payoff at maturity (and the exercise value) at price S.
  double value(double S) const;
  // Throws InvalidArgument for maturity <= 0, strike < 0, a custom payoff that is empty,
  // exercise dates outside (0, T] or unsorted, knock-in with early exercise, barriers not
  // above 0 or not ordered (lower < upper), a non-finite rebate.
  void validate() const;
};

// Prices `option` under `model` on one price-space axis [0 or the lower barrier, S_max or
// the upper barrier] clustered at the strike (the spot on a node), by the theta-method
// (method.scheme: Douglas theta, otherwise Crank-Nicolson) with Rannacher damping at the
// start and after each dividend (and, with graded levels, which then restart at every
// dividend and exercise date, after each exercise date); coefficients at each step's
// midpoint; American exercise by Brennan-Schwartz inside the sweep, Bermudan by a
// projection at the dates, cell-averaged where the exercise value cuts a cell; a digital's
// jump on a cell face. Fills price, delta[0], gamma[0], theta. Host only. Throws InvalidArgument for bad input and for a
// spot on or outside a barrier (the option is already knocked in or out).
//
// extrapolation = richardson (extrapolation.hpp, as price_chain): the half grid
// ((nodes + 1) / 2 nodes, steps / 2) and a full grid nested in it (2 ((nodes + 1) / 2) - 1
// nodes: the half grid's nodes plus one between each two, so the spot is a node of both;
// steps), combined as (4 V_h - V_2h) / 3 for the price and every greek (values and grid:
// the full run's). About 1.3x the work; with graded steps (step_grading 2, cluster 1) the
// errors of the American put with cash dividends drop 6-30x from 25 to 201 nodes, barriers'
// 60x and more (docs/finance.md). Throws InvalidArgument with it for nodes < 9 or steps < 2.
PriceResult price(const OneAssetModel& model, const OneAssetOption& option, const Method& method = {},
                  Extrapolation extrapolation = Extrapolation::none);
// price() plus vega (a parallel shift of sigma(S, t)) and rho (of r(t)) by central
// differences of +-1e-4 on the unbumped run's grid.
PriceResult price_with_greeks(const OneAssetModel& model, const OneAssetOption& option, const Method& method = {},
                              Extrapolation extrapolation = Extrapolation::none);

}  // namespace adi::finance
