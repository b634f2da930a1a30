#pragma once
// Richardson extrapolation's rule, written once for price_chain (chain.cpp) and the one-asset
// engine (one_asset.cpp): see extrapolation.hpp.
#include <string>

#include "adi/error.hpp"
#include "adi/finance/extrapolation.hpp"
#include "adi/finance/pricer.hpp"

namespace adi::finance {

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
