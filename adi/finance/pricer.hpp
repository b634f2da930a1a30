#pragma once
// Option pricing by ADI: the Black-Scholes PDE for 1-3 correlated assets and the
// Heston PDE, solved forward in time to maturity tau = T - t,
//
//   V_tau = sum_i 1/2 sigma_i^2 S_i^2 V_ii + sum_{i<j} rho_ij sigma_i sigma_j S_i S_j V_ij
//           + sum_i (r - q_i) S_i V_i - r V,                           V(0, S) = payoff(S)
//
// (or in x_i = ln S_i), on grids concentrated around the strike (and around v = 0 for
// Heston) with the spot on a node, Rannacher damping for the payoff's kink, and the far
// field as linear extrapolation (V_SS = 0) or discounted-forward Dirichlet data.
// American exercise (one asset) by Brennan-Schwartz inside the implicit sweep.
//
//   adi::finance::BlackScholesModel m{{{100, 0.2, 0.0}}, {}, 0.05};
//   auto r = adi::finance::price<double>(m, adi::finance::Contract::vanilla(OptionType::call, 100, 1));
//   // r.price, r.delta[0], r.gamma[0]
#include <array>
#include <cmath>
#include <string>

#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/finance/model.hpp"
#include "adi/grid.hpp"
#include "adi/scheme.hpp"

namespace adi::finance {

// The coordinates of the grid: asset prices S_i (the degenerate S = 0 face exact) or
// x_i = ln S_i (constant coefficients: cheaper operators, shared bands everywhere).
enum class Space { price, log };
// The far-field condition: linear extrapolation (V_SS = 0, no data; in log space
// V_xx = V_x is not available, so log space uses Dirichlet) or Dirichlet data
// e^{-r tau} payoff(forwards).
enum class FarField { linear, dirichlet };

const char* space_name(Space s);
const char* far_field_name(FarField f);

// The numerical method. Zero means "the default for this problem" (see docs/finance.md).
struct Method {
  index_t nodes = 0;           // per asset axis (default 201 / 101 / 49 for 1 / 2 / 3 assets; Heston S: 101)
  index_t variance_nodes = 0;  // Heston v axis (default nodes / 2 + 1)
  long steps = 0;              // time steps to maturity (default 100 for 1 asset, else 50)
  Scheme scheme = Scheme::hundsdorfer_verwer().with_damping(2);  // Rannacher: 2 steps as 4 implicit Euler halves
  Space space = Space::price;
  FarField far_field = FarField::linear;
  double width = 5.0;      // far field: this many standard deviations of ln S_T beyond spot and strike
  double intensity = 0.0;  // grid concentration (domain / cluster width of the sinh map; 0: default;
                           // one asset in price space from sd = sigma sqrt(T) = 0.6 on: of the map in
                           // ln S, solvers/common/price_axis.hpp)
  // The cluster width of the sinh map in standard deviations of ln S_T (0: for one asset 3
  // near the money, down to 1 for far strikes and strong drifts, price_axis_cluster in
  // solvers/common/price_axis.hpp; 1 for several); ignored when `intensity` is set. American
  // puts: 1 halves the error of 3 (docs/finance.md).
  double cluster = 0.0;
  // Time levels tau_k = T (k/N)^p: 1 uniform; 2 quadratic, small steps near maturity where
  // an American free boundary moves like sqrt(tau) (order 2 instead of ~1.6 for American
  // puts, docs/finance.md).
  double step_grading = 1.0;
  // Heston's variance axis [0, variance_max] (0: max(5, 10 max(v0, theta), 6 sigma^2 /
  // (2 kappa))), clustered at v = 0 with width variance_cluster (0: 0.01, in 't Hout &
  // Foulon's 5/500).
  double variance_max = 0.0;
  double variance_cluster = 0.0;
  bool smoothing = true;   // cell-average the payoff on cells cut by its kink
  // One vanilla asset on the host with a Douglas scheme (Crank-Nicolson for theta = 1/2):
  // step with price_one_asset's sweep, the same scheme as AdiSolver to round-off
  // (tests/adi/finance/test_american.cpp) at 3-8x less cost on one line of 50-800 nodes,
  // where AdiSolver's per-step overhead (several kernel calls and checks) dominates.
  bool one_asset_sweep = true;
  Executor executor = Executor::host();

  // Throws InvalidArgument for nodes < 5, steps < 0, width <= 0, intensity < 0, cluster < 0,
  // step_grading outside [1, 4], log space
  // with the linear far field, or a scheme AdiSolver would refuse (theta outside (0, 1] or
  // NaN, sigma < 0, damping_steps < 0): every pricer path calls it, the sweeps included.
  void validate() const;
};

// What a pricing run returns. Greeks are per asset axis (Heston: index 0 is S;
// delta[1], gamma[1] are dV/dv and d2V/dv2).
struct PriceResult {
  double price = 0.0;
  std::array<double, 3> delta{}, gamma{};
  // One-asset engine (one_asset.hpp) only, NaN elsewhere: theta = dV/dt (calendar time,
  // per year) from the last time levels at the spot; vega, rho by bumping on the same grid.
  double theta = std::nan(""), vega = std::nan(""), rho = std::nan("");
  Grid grid;               // the solve's grid (in log space: the axes hold ln S)
  Field<double> values;    // V at the valuation date on `grid` (host memory)
  std::array<index_t, 3> spot_index{};  // the spot's node on each axis
  Space space = Space::price;
  long steps = 0;
  double seconds = 0.0;        // time stepping only (device synchronised), excludes setup
  double setup_seconds = 0.0;  // grid, coefficients, payoff, plans
  StepTimings timings;
  std::string describe() const;  // "grid 201 (log), 50 steps of hundsdorfer-verwer, ..."
};

// Prices `contract` under the Black-Scholes model (1-3 assets) with ADI in precision T
// (float or double) on method.executor. Validates everything first (InvalidArgument).
template <class T>
PriceResult price(const BlackScholesModel& model, const Contract& contract, const Method& method = {});
// Prices a one-asset vanilla under Heston on the (S, v) grid (price space only).
template <class T>
PriceResult price(const HestonModel& model, const Contract& contract, const Method& method = {});

extern template PriceResult price<float>(const BlackScholesModel&, const Contract&, const Method&);
extern template PriceResult price<double>(const BlackScholesModel&, const Contract&, const Method&);
extern template PriceResult price<float>(const HestonModel&, const Contract&, const Method&);
extern template PriceResult price<double>(const HestonModel&, const Contract&, const Method&);

// The grid builders the pricer uses (public for tests and for custom grids).
//
// n nodes on [lo, hi] by the sinh map x = center + (hi - lo)/intensity * sinh(xi), xi
// uniform (in 't Hout & Foulon), nudged so that `anchor` (the spot) is exactly a node:
// the step in xi is set from the anchor, which moves `hi` by O(1/n) (lo stays). The map itself
// is common::sinh_map (solvers/common/price_axis.hpp), which the GPU option chain shares.
AxisGrid concentrated_axis(index_t n, double lo, double hi, double center, double intensity, double anchor);

}  // namespace adi::finance
