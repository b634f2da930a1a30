#pragma once
// Richardson extrapolation in the grid size, shared by the option chain (chain.hpp) and the
// one-asset engine (one_asset.hpp): price on the given grid (nodes n, steps N) and on the
// half grid ((n + 1) / 2 nodes, N / 2 steps) and return (4 V_h - V_2h) / 3 for the price
// and every greek. Right where the error is c h^2 + o(h^2) in both the node spacing and the
// step, i.e. with graded steps (Method::step_grading = 2) for American and Bermudan
// exercise and barriers (docs/finance.md).
#include <string>

#include "adi/error.hpp"
#include "adi/finance/pricer.hpp"

namespace adi::finance {

// none: one grid. richardson: the grid and its half, combined as above.
enum class Extrapolation { none, richardson };

namespace detail {

// (4 fine - coarse) / 3: the h^2 term of fine = V + c h^2, coarse = V + 4 c h^2 removed.
inline double richardson(double fine, double coarse) { return (4.0 * fine - coarse) / 3.0; }

// Throws InvalidArgument (naming `who`) for an extrapolation that is neither none nor
// richardson, and with Richardson for nodes < 9 or steps < 2 (n and N: the nodes and steps
// the call resolves, defaults included).
inline void check_extrapolation(Extrapolation e, index_t n, long N, const std::string& who) {
  ::adi::detail::require(e == Extrapolation::none || e == Extrapolation::richardson,
                         who + ": extrapolation = " + ::adi::detail::number(static_cast<int>(e)) +
                             " is not Extrapolation::none or Extrapolation::richardson");
  ::adi::detail::require(e != Extrapolation::richardson || (n >= 9 && N >= 2),
                         who + ": Richardson extrapolation needs nodes >= 9 and steps >= 2, got " +
                             ::adi::detail::number(n) + " and " + ::adi::detail::number(N));
}

// The half grid's method: (n + 1) / 2 nodes, N / 2 steps, everything else as `m`.
inline Method richardson_half(const Method& m, index_t n, long N) {
  Method half = m;
  half.nodes = (n + 1) / 2;
  half.steps = N / 2;
  return half;
}

}  // namespace detail
}  // namespace adi::finance
