#pragma once
// price_chain's translation to the option-chain kernels' plain structs
// (solvers/cuda/option_chain.hpp): used by chain.cpp and by the tests that run the
// kernels' arithmetic as host code.
#include "adi/finance/chain.hpp"
#include "adi/finance/pricer_detail.hpp"
#include "solvers/cuda/option_chain.hpp"

namespace adi::finance::detail {

inline cuda_backend::ChainContract chain_kernel_contract(const ChainOption& o) {
  return {o.spot,
          o.strike,
          o.maturity,
          o.volatility,
          o.rate,
          o.dividend,
          o.type == OptionType::put ? 1 : 0,
          o.exercise == Exercise::american ? 1 : 0};
}

inline cuda_backend::ChainSettings chain_kernel_settings(const Method& method, ChainKernel kernel) {
  cuda_backend::ChainSettings s;
  s.nodes = static_cast<int>(method.nodes > 0 ? method.nodes : default_nodes(1));
  s.steps = method.steps > 0 ? method.steps : default_steps(1);
  s.theta = method.scheme.kind == SchemeKind::douglas ? method.scheme.theta : 0.5;
  s.damping_steps = method.scheme.damping_steps;
  s.width = method.width;
  s.intensity = method.intensity;
  s.cluster = method.cluster;  // (0: each contract's default, solvers/common/price_axis.hpp)
  s.step_grading = method.step_grading;
  s.smoothing = method.smoothing ? 1 : 0;
  s.device = method.executor.device();
  s.kernel = kernel == ChainKernel::thread ? 1 : (kernel == ChainKernel::warp ? 2 : 0);
  return s;
}

}  // namespace adi::finance::detail
