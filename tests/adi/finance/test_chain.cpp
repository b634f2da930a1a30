// Option chains as one batch (adi/finance/chain.hpp): every price and greek equals the
// one-contract path (price_one_asset, the independent single-line sweep) to round-off, on
// the host (SIMD lanes, blocks, a count that is not a multiple of the lane width) and on
// the GPU (skipped without a device); American puts against a fine binomial tree; theta
// against Black-Scholes; bad contracts named by their index.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/finance/finance.hpp"
#include "adi/finance/chain_detail.hpp"
#include "solvers/cuda/option_chain_warp.hpp"
#include "tests/adi/finance/binomial_tree.hpp"
#include "gpu_skip.hpp"

using namespace adi::finance;

namespace {

// 23 contracts: puts and calls, European and American, strikes 70..130, maturities from a
// week to two years, volatilities 10%..60%, rates and dividends.
std::vector<ChainOption> mixed_chain() {
  std::vector<ChainOption> c;
  for (int k = 0; k < 23; ++k) {
    ChainOption o;
    o.type = k % 3 == 0 ? OptionType::call : OptionType::put;
    o.exercise = k % 4 == 1 ? Exercise::european : Exercise::american;
    o.spot = 100;
    o.strike = 70 + 60.0 * k / 22;
    o.maturity = 1.0 / 52 + 2.0 * ((k * 7) % 23) / 22;
    o.volatility = 0.1 + 0.5 * ((k * 5) % 23) / 22;
    o.rate = 0.01 + 0.04 * (k % 5) / 4;
    o.dividend = 0.03 * (k % 3) / 2;
    c.push_back(o);
  }
  return c;
}

Method method(adi::index_t nodes, long steps) {
  Method m;
  m.nodes = nodes;
  m.steps = steps;
  m.scheme = adi::Scheme::douglas().with_damping(2);
  return m;
}

void expect_equal_to_one_contract(const std::vector<ChainOption>& chain, const ChainResult& r, const Method& me,
                                  double tol) {
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const ChainOption& o = chain[k];
    const PriceResult one = price_one_asset<double>(chain_model(o), chain_contract(o), me,
                                                    o.exercise == Exercise::american);
    EXPECT_NEAR(r.price[k], one.price, tol * std::max(1.0, one.price)) << "contract " << k;
    EXPECT_NEAR(r.delta[k], one.delta[0], tol) << "contract " << k;
    EXPECT_NEAR(r.gamma[k], one.gamma[0], tol * std::max(1.0, std::abs(one.gamma[0]) * 1e3)) << "contract " << k;
  }
}

}  // namespace

TEST(Chain, HostBatchEqualsTheOneContractPath) {
  const auto chain = mixed_chain();
  Method me = method(151, 60);
  me.step_grading = 2;  // the graded levels and the cluster width travel too
  me.cluster = 1.5;
  const ChainResult r = price_chain(chain, me);
  ASSERT_EQ(r.price.size(), chain.size());
  expect_equal_to_one_contract(chain, r, me, 1e-12);
  // Threads over blocks change nothing.
  Method two = me;
  two.executor = adi::Executor::host(2);
  const ChainResult r2 = price_chain(chain, two);
  for (std::size_t k = 0; k < chain.size(); ++k) EXPECT_EQ(r2.price[k], r.price[k]);
}

TEST(Chain, AmericanPutsAgainstATreeAndThetaAgainstBlackScholes) {
  // American put, S = K = 100, T = 1, r = 5%, sigma = 20%: 6.0904 (4000-step CRR tree,
  // tests/adi/finance/test_american.cpp), and a European call's theta.
  ChainOption put;
  put.type = OptionType::put;
  put.rate = 0.05;
  ChainOption call = put;
  call.type = OptionType::call;
  call.exercise = Exercise::european;
  call.dividend = 0.02;
  // Quadratic time levels and a 1 sd cluster: order 2 for the American put (uniform steps:
  // -6.9e-4 here, order 1.6; docs/finance.md).
  Method me = method(401, 200);
  me.step_grading = 2;
  me.cluster = 1;
  const ChainResult r = price_chain({put, call}, me);
  EXPECT_NEAR(r.price[0], 6.0904, 3e-4);
  const Greeks ex = black_scholes(OptionType::call, 100, 100, 1, 0.05, 0.02, 0.2);
  EXPECT_NEAR(r.price[1], ex.price, 2e-4);
  EXPECT_NEAR(r.theta[1], ex.theta, 2e-3);
}

// Richardson extrapolation over 201 x 100 and 101 x 50 (graded steps, 1 sd cluster): within
// 1e-4 of the tree, for puts at and out of the money. The tree converges at order 1 (ATM,
// sigma 30%: 2000 / 4000 / 8000 / 16000 steps 10.16513 / 10.16497 / 10.16489 / 10.16485),
// so it is extrapolated too: 2 T(4000) - T(2000) (10.16481 here; adi's 3201-node graded
// grid: 10.16480).
TEST(Chain, RichardsonReachesOneE4) {
  Method me = method(201, 100);
  me.step_grading = 2;
  me.cluster = 1;
  std::vector<ChainOption> c;
  // (In the money, K = 115, the tree is erratic at these sizes: 2000 / 4000 / 8000 steps
  // 19.34341 / 19.34330 / 19.34312, while adi's graded grids converge at order 2 to
  // 19.34297 and the Richardson value is 19.34291.)
  for (double K : {90.0, 100.0}) {
    ChainOption o;
    o.strike = K;
    o.rate = 0.05;
    o.volatility = 0.3;
    o.dividend = 0.01;
    c.push_back(o);
  }
  const ChainResult r = price_chain(c, me, Extrapolation::richardson);
  const ChainResult plain = price_chain(c, me);
  for (std::size_t k = 0; k < c.size(); ++k) {
    const double tree = 2 * crr_american(OptionType::put, 100, c[k].strike, 1, 0.05, 0.01, 0.3, 4000) -
                        crr_american(OptionType::put, 100, c[k].strike, 1, 0.05, 0.01, 0.3, 2000);
    std::printf("K %.0f: tree %.6f, 201 x 100 error %.2e, with Richardson %.2e\n", c[k].strike, tree,
                plain.price[k] - tree, r.price[k] - tree);
    EXPECT_NEAR(r.price[k], tree, 1e-4);
  }
}

TEST(Chain, BadContractsAreNamedByIndex) {
  auto chain = mixed_chain();
  chain[7].volatility = -0.2;
  try {
    price_chain(chain);
    ADD_FAILURE() << "no exception";
  } catch (const adi::InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("contract 7"), std::string::npos) << m;
    EXPECT_NE(m.find("volatility = -0.2"), std::string::npos) << m;
  }
  Method me;
  me.far_field = FarField::dirichlet;
  EXPECT_THROW(price_chain(mixed_chain(), me), adi::InvalidArgument);
  me = Method{};
  me.scheme = adi::Scheme::douglas(0.0);
  EXPECT_THROW(price_chain(mixed_chain(), me), adi::InvalidArgument);
  EXPECT_TRUE(price_chain({}).price.empty());
}

TEST(Chain, CudaEqualsTheOneContractPath) {
  ADI_REQUIRE_CUDA("the GPU chain check");
  const auto chain = mixed_chain();
  Method me = method(151, 60);
  me.step_grading = 2;
  me.cluster = 1.5;
  me.executor = adi::Executor::cuda();
  const ChainResult r = price_chain(chain, me);
  me.executor = adi::Executor::host();
  // Round-off: the device's sinh/asinh/exp and fused multiply-adds against the host's.
  expect_equal_to_one_contract(chain, r, me, 1e-9);
  const ChainResult h = price_chain(chain, me);
  for (std::size_t k = 0; k < chain.size(); ++k) EXPECT_NEAR(r.theta[k], h.theta[k], 1e-7) << "contract " << k;
}

// The warp-per-contract GPU kernel's arithmetic (solvers/cuda/option_chain_warp.hpp: the
// recurrences as scans across 32 lanes), run on the host lane by lane in the device's
// combining order, against the host chain: every node count class (2 .. 16 positions per
// lane, padding positions), puts and calls, European and American, uniform and graded steps.
TEST(Chain, WarpKernelArithmeticEqualsTheHostChain) {
  const auto chain = mixed_chain();
  std::vector<adi::cuda_backend::ChainContract> cc;
  for (const auto& o : chain) cc.push_back(detail::chain_kernel_contract(o));
  for (int nodes : {33, 64, 101, 201, 301, 401, 512}) {
    for (double grading : {1.0, 2.0}) {
      Method me = method(nodes, nodes == 512 ? 12 : 30);
      me.step_grading = grading;
      me.cluster = grading == 2.0 ? 1.5 : 0.0;  // (0: each contract's default, computed on the device)
      const ChainResult h = price_chain(chain, me);
      const auto s = detail::chain_kernel_settings(me, ChainKernel::warp);
      std::vector<double> p(chain.size()), d(p), g(p), t(p);
      adi::cuda_backend::chain_math::option_chain_warp_emulate(cc.data(), static_cast<long>(cc.size()), s, p.data(),
                                                               d.data(), g.data(), t.data());
      for (std::size_t k = 0; k < chain.size(); ++k) {
        SCOPED_TRACE("nodes " + std::to_string(nodes) + ", grading " + std::to_string(grading) + ", contract " +
                     std::to_string(k));
        EXPECT_NEAR(p[k], h.price[k], 1e-11 * std::max(1.0, h.price[k]));
        EXPECT_NEAR(d[k], h.delta[k], 1e-10);
        EXPECT_NEAR(g[k], h.gamma[k], 1e-9 * std::max(1.0, std::abs(h.gamma[k])));
        EXPECT_NEAR(t[k], h.theta[k], 1e-8 * std::max(1.0, std::abs(h.theta[k])));
      }
    }
  }
}

// Both GPU kernels (warp per contract, thread per contract) against the host chain, over the
// node-count classes of the warp kernel and beyond its 512 nodes (auto: the thread kernel);
// a count that is not a multiple of the warps per block. Skipped without a device.
TEST(Chain, CudaKernelsEqualTheHostChain) {
  ADI_REQUIRE_CUDA("the GPU chain kernels' check");
  auto chain = mixed_chain();
  chain.pop_back();  // 22 contracts
  for (int nodes : {33, 151, 201, 401, 512, 601}) {
    Method me = method(nodes, 40);
    me.step_grading = 2;
    me.cluster = nodes == 201 || nodes == 512 ? 0.0 : 1.5;  // (0: each contract's default, on the device)
    const ChainResult h = price_chain(chain, me);
    me.executor = adi::Executor::cuda();
    for (ChainKernel kern : {ChainKernel::automatic, ChainKernel::warp, ChainKernel::thread}) {
      if (kern == ChainKernel::warp && nodes > 512) {
        EXPECT_THROW(price_chain(chain, me, Extrapolation::none, kern), adi::InvalidArgument);
        continue;
      }
      const ChainResult r = price_chain(chain, me, Extrapolation::none, kern);
      SCOPED_TRACE("nodes " + std::to_string(nodes) + ", " + r.backend);
      for (std::size_t k = 0; k < chain.size(); ++k) {
        EXPECT_NEAR(r.price[k], h.price[k], 1e-9 * std::max(1.0, h.price[k])) << "contract " << k;
        EXPECT_NEAR(r.delta[k], h.delta[k], 1e-8) << "contract " << k;
        EXPECT_NEAR(r.gamma[k], h.gamma[k], 1e-7 * std::max(1.0, std::abs(h.gamma[k]))) << "contract " << k;
        EXPECT_NEAR(r.theta[k], h.theta[k], 1e-6 * std::max(1.0, std::abs(h.theta[k]))) << "contract " << k;
      }
    }
  }
  // Richardson on the device = Richardson on the host (the default cluster).
  Method me = method(201, 100);
  me.step_grading = 2;
  const ChainResult h = price_chain(chain, me, Extrapolation::richardson);
  me.executor = adi::Executor::cuda();
  const ChainResult r = price_chain(chain, me, Extrapolation::richardson);
  for (std::size_t k = 0; k < chain.size(); ++k) EXPECT_NEAR(r.price[k], h.price[k], 1e-9) << "contract " << k;
}
