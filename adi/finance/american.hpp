#pragma once
// One-asset pricing by the theta-method with early exercise (Brennan & Schwartz 1977).
#include "adi/finance/model.hpp"
#include "adi/finance/pricer.hpp"

namespace adi::finance {

// One asset on price()'s grid, coefficients and far field, stepped by the theta-method:
// theta = method.scheme.theta for a Douglas scheme, else 1/2 (Crank-Nicolson), after
// method.scheme.damping_steps Rannacher steps (two implicit Euler halves each). This is
// the one-axis Douglas scheme of AdiSolver written out, so that each implicit solve can
// carry the exercise constraint inside its sweep:
//   early_exercise: Brennan-Schwartz. A put's exercise region is S <= S*: eliminate from
//   the far end down to S = 0, then substitute upwards taking u_i = max(u_i, payoff_i),
//   which solves the discrete linear complementarity problem exactly for a region of that
//   shape (a call with dividends: the mirror image). No iteration, O(n) per step, and the
//   time discretisation keeps Crank-Nicolson's order away from the free boundary.
//   !early_exercise: plain Thomas; equals price() with Scheme::douglas() to round-off
//   (tests/adi/finance checks it).
// Host only (Unsupported for a CUDA executor).
template <class T>
PriceResult price_one_asset(const BlackScholesModel& model, const Contract& contract, const Method& method,
                            bool early_exercise);

extern template PriceResult price_one_asset<float>(const BlackScholesModel&, const Contract&, const Method&, bool);
extern template PriceResult price_one_asset<double>(const BlackScholesModel&, const Contract&, const Method&, bool);

}  // namespace adi::finance
