#pragma once
// A Cox-Ross-Rubinstein tree for American options: the independent reference of the
// American tests (test_american.cpp, test_chain.cpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "adi/finance/model.hpp"

namespace {

// Cox-Ross-Rubinstein tree with early exercise; the average of n and n + 1 steps
// cancels most of the tree's odd-even oscillation.
double crr_american(adi::finance::OptionType type, double S, double K, double T, double r, double q, double v, int n) {
  auto one = [&](int steps) {
    const double dt = T / steps, u = std::exp(v * std::sqrt(dt)), d = 1 / u;
    const double p = (std::exp((r - q) * dt) - d) / (u - d), disc = std::exp(-r * dt);
    std::vector<double> V(steps + 1);
    auto payoff = [&](double s) { return std::max(type == adi::finance::OptionType::call ? s - K : K - s, 0.0); };
    for (int j = 0; j <= steps; ++j) V[j] = payoff(S * std::pow(u, 2 * j - steps));
    for (int i = steps - 1; i >= 0; --i)
      for (int j = 0; j <= i; ++j)
        V[j] = std::max(disc * (p * V[j + 1] + (1 - p) * V[j]), payoff(S * std::pow(u, 2 * j - i)));
    return V[0];
  };
  return 0.5 * (one(n) + one(n + 1));
}

}  // namespace
