#pragma once
// The option-chain kernels (solvers/cuda/option_chain.cu) seen from plain C++: N one-asset
// Black-Scholes contracts, one GPU warp (or thread) each, stepped by the theta-method with the
// Brennan-Schwartz exercise step inside the sweep (adi/finance/chain.hpp is the entry point
// and validates; this assumes valid input). A kernel list entry (solvers/cuda/kernel_list.hpp):
// without CUDA it throws Unsupported.
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN

struct ChainContract {
  double spot, strike, maturity, volatility, rate, dividend;
  int put;       // 1: put (exercise region at S = 0), 0: call
  int american;  // 1: Brennan-Schwartz projection, 0: European
};

// The warp-per-contract kernel holds up to 16 nodes per lane.
constexpr long kChainWarpMaxNodes = 512;

struct ChainSettings {
  int nodes = 201;
  long steps = 100;
  double theta = 0.5;      // implicit weight after the damping steps
  int damping_steps = 2;   // Rannacher: each as two implicit Euler halves
  double width = 5.0;      // far field: standard deviations of ln S_T beyond spot and strike
  double intensity = 0.0;  // sinh-map intensity (0: from `cluster`, as adi::finance's asset_axis)
  double cluster = 0.0;    // cluster width in standard deviations of ln S_T (0: price_axis_cluster)
  double step_grading = 1.0;  // time levels T (k/N)^p
  int smoothing = 1;       // cell-average the payoff at the strike (128 midpoint samples)
  int device = 0;
  int kernel = 0;
  int even_spot = 0;       // the spot on an even node (the fine grid of a nested Richardson pair)          // 0: warp per contract up to 512 nodes, else thread; 1: thread; 2: warp
};

// Prices `count` contracts on settings.device; price, delta, gamma, theta: host arrays of
// `count` doubles. Every copy, fill and launch goes on `stream` (the executor's; null: the
// legacy default stream), which the call waits for before it returns.
// seconds: the stepping kernel (events); setup_seconds: allocation, copies, grid kernel.
ADI_CUDA_KERNEL(void option_chain_price(const ChainContract* contracts, long count, const ChainSettings& settings,
                                        double* price, double* delta, double* gamma, double* theta, double* seconds,
                                        double* setup_seconds, void* stream))
ADI_CUDA_KERNELS_END

}  // namespace adi::cuda_backend
