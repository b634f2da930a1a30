#pragma once
// Richardson extrapolation in the grid size, shared by the option chain (chain.hpp) and the
// one-asset engine (one_asset.hpp): price on the given grid (nodes n, steps N) and on the
// half grid ((n + 1) / 2 nodes, N / 2 steps) and return (4 V_h - V_2h) / 3 for the price
// and every greek. Right where the error is c h^2 + o(h^2) in both the node spacing and the
// step: e.g. American exercise and barriers with graded steps (Method::step_grading = 2);
// a Bermudan with uniform steps and a 1 sd cluster (docs/finance.md). The rule itself: extrapolation_detail.hpp.
namespace adi::finance {

// none: one grid. richardson: the grid and its half, combined as above.
enum class Extrapolation { none, richardson };

}  // namespace adi::finance
