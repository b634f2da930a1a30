#pragma once
// Long maturities and high volatilities (sd = sigma sqrt(T) from 0.63 to 3.3, strong drifts, far
// strikes; spot 100), for every one-asset pricer on its default grid (201 nodes, 100 steps): the
// axis spaced evenly in ln S (solvers/common/price_axis.hpp). Each tolerance is 3-6x the error
// measured; the errors before it (the price-space sinh map) in the comments. QuantLib's
// FdBlackScholesVanillaEngine on 201 nodes and 100 Douglas steps: 1.4e-5 to 1.6e-2
// (docs/finance.md, "Long maturities and high volatilities").
#include "adi/finance/model.hpp"

namespace {

struct LongDatedCase {
  double vol, T, r, q, K;
  adi::finance::OptionType type;
  double tol;  // relative
};

constexpr adi::finance::OptionType kLongCall = adi::finance::OptionType::call;
constexpr adi::finance::OptionType kLongPut = adi::finance::OptionType::put;
const LongDatedCase kLongDated[] = {
    {0.6, 30, -0.05, 0.08, 100, kLongCall, 1.5e-3},  // was +3.2e-1
    {0.6, 30, 0.1, 0.0, 100, kLongPut, 1.2e-2},      // was +2.1e-1
    {0.2, 30, 0.1, 0.0, 200, kLongPut, 5e-2},        // was -9.8e-2 (price 0.195: far out of the money)
    {0.6, 30, -0.05, 0.0, 200, kLongCall, 4e-3},     // was +1.1e-1
    {1.5, 2, 0.05, 0.0, 100, kLongPut, 1.5e-3},      // was +1.7e-2
    {0.2, 10, 0.05, 0.02, 100, kLongCall, 5e-4},     // was -6.2e-5
    {1.0, 5, 0.03, 0.0, 120, kLongPut, 1.5e-3},      // was +2.8e-2
};

}  // namespace
