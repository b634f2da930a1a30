#pragma once
// An option chain as one batched solve (issue 20; docs/finance.md "Option chains"): N
// independent one-asset Black-Scholes contracts (each its own strike, maturity, volatility,
// rates and exercise style), each on its own 1D grid, stepped together as one interleaved
// batch: on the host SIMD across contracts (lanes of one block) and threads across blocks;
// on a CUDA executor one GPU warp (or thread) per contract, with the Brennan-Schwartz exercise step
// inside the sweep. Each price equals price_one_asset() of the same contract and method to
// round-off.
//
//   std::vector<ChainOption> chain = {{OptionType::put, Exercise::american, 100, 95, 0.5, 0.25, 0.04, 0.01}, ...};
//   ChainResult r = price_chain(chain);   // r.price[k], r.delta[k], r.gamma[k], r.theta[k]
#include <vector>

#include "adi/finance/extrapolation.hpp"
#include "adi/finance/model.hpp"
#include "adi/finance/pricer.hpp"

namespace adi::finance {

// One contract of a chain: a vanilla call or put, European or American.
struct ChainOption {
  OptionType type = OptionType::put;
  Exercise exercise = Exercise::american;
  double spot = 100.0;
  double strike = 100.0;
  double maturity = 1.0;
  double volatility = 0.2;
  double rate = 0.0;
  double dividend = 0.0;  // continuous yield
};

// Prices and greeks per contract, in the chain's order; NaN where not computed.
struct ChainResult {
  std::vector<double> price, delta, gamma, theta;  // theta: dV/dt per year (last time levels)
  double seconds = 0.0;        // stepping (device synchronised)
  double setup_seconds = 0.0;  // grids, rows, payoffs, transfers
  std::string backend;         // "host (N threads, W lanes)" or "cuda (device name)"
};

// Extrapolation (extrapolation.hpp): none, one grid; richardson, also price on the half grid
// ((nodes + 1) / 2 nodes, steps / 2 steps) and return (4 V_h - V_2h) / 3 for price, delta,
// gamma, theta. With graded steps
// and a 1 sd cluster (Method::step_grading = 2, cluster = 1) American puts converge at a
// clean order 2, and this removes most of it: an ATM put at 201 x 100 goes from -6.9e-4 to
// -3e-5 for 1.25x the work (docs/finance.md). The 1e-4 configuration for a listed chain:
// nodes 401, steps 200, step_grading 2, cluster 1.5, Richardson (max 6.4e-5 over 384
// sampled contracts of 680,000 American puts).

// The GPU algorithm (a host executor ignores it). warp: one warp of 32 threads per contract,
// the line in registers and shared memory, the recurrences as scans across the warp (no
// global-memory traffic while stepping; up to 512 nodes). thread: one thread per contract,
// the line in global memory (any node count). automatic: warp up to 512 nodes, else thread.
enum class ChainKernel { automatic, warp, thread };

// Prices every contract with `method` (nodes, steps, scheme: Douglas theta or else Crank-
// Nicolson, damping, width, intensity, smoothing; price space, linear far field) as
// price_one_asset(model, contract, method, american) would, in one batch on
// method.executor. Throws InvalidArgument naming the contract index for bad input, and for
// log space or a Dirichlet far field.
ChainResult price_chain(const std::vector<ChainOption>& chain, const Method& method = {},
                        Extrapolation extrapolation = Extrapolation::none,
                        ChainKernel kernel = ChainKernel::automatic);

// The same contract as a one-asset model and contract (for price_one_asset and checks).
BlackScholesModel chain_model(const ChainOption& o);
Contract chain_contract(const ChainOption& o);

}  // namespace adi::finance
