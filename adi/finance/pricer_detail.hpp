#pragma once
// Internals shared by the ADI pricer (pricer.cpp) and the one-asset American solver
// (american.cpp): grids, payoff on the grid, greeks at the spot node.
#include <array>
#include <cmath>
#include <functional>

#include "adi/field.hpp"
#include "adi/finance/model.hpp"
#include "adi/finance/pricer.hpp"
#include "adi/grid.hpp"

namespace adi::finance::detail {

// One asset's axis and the index of its spot node.
struct AssetAxis {
  AxisGrid axis;
  index_t spot = 0;
};

// Default nodes per asset axis for n assets.
index_t default_nodes(int assets);
// Default time steps for n assets.
long default_steps(int assets);

// The axis of asset `a` (spot, volatility) for a payoff whose kink along this axis sits
// near `center` (the strike for one asset), maturity T, in a model of `assets` assets.
AssetAxis asset_axis(const Asset& a, double center, double T, index_t n, const Method& m, int assets);

// Grid coordinate -> asset price.
inline double to_price(double x, Space s) { return s == Space::log ? std::exp(x) : x; }

// The payoff at the grid's nodes (host, double). With `smoothing`, nodes whose cell
// (between the midpoints to their neighbours) is cut by the kink get the cell average.
// `threads`: OpenMP threads for big grids (0: all).
Field<double> payoff_on_grid(const Grid& g, int assets, const Contract& c, Space s, bool smoothing, int threads);

// e^{-r tau} payoff(S_i e^{(r - q_i) tau}): the far-field Dirichlet data.
std::function<double(double, double, double, double)> forward_intrinsic(const BlackScholesModel& m,
                                                                        const Contract& c, Space s);

// Price, delta and gamma at the spot node from host values (3-point formulas on
// non-uniform axes; in log space converted to d/dS).
void greeks_at_spot(const Field<double>& v, const Grid& g, const std::array<index_t, 3>& spot, int axes,
                    const std::array<bool, 3>& log_axis, PriceResult& r);

}  // namespace adi::finance::detail
