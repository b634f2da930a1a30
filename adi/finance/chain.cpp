// Option chains as one batched solve (chain.hpp): the one-asset theta-method of
// american.cpp, W contracts per block interleaved lane-innermost so that every loop over
// lanes is one SIMD instruction stream; OpenMP threads over blocks. CUDA: one thread per
// contract (solvers/cuda/option_chain.cu).
#include "adi/finance/chain.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <cmath>
#include <limits>
#include <string>

#include "adi/error.hpp"
#include "adi/finance/chain_detail.hpp"
#include "adi/finance/extrapolation_detail.hpp"
#include "adi/finance/pricer_detail.hpp"
#include "solvers/cuda/option_chain.hpp"

namespace adi::finance {

namespace {

using Clock = std::chrono::steady_clock;
// Lanes per block: 8 doubles fill one AVX-512 register (two AVX2 ones); a block of 201
// nodes then holds ~13 arrays x 13 KB, inside L2.
constexpr int W = 8;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Block {
  int count = 0;        // real contracts (the rest repeat the last one)
  int index[W] = {};    // positions in the chain
};

// Steps one block; writes price, delta, gamma, theta of its contracts.
void run_block(const std::vector<ChainOption>& chain, const Block& blk, bool low, const Method& me, index_t n,
               long N, ChainResult& out) {
  const std::size_t sz = static_cast<std::size_t>(n) * W;
  std::vector<double> x(sz), al(sz), ad(sz), au(sz), a(sz), c(sz), m(sz), iw(sz), u(sz), f(sz), g(sz), b(sz);
  double T[W], s_fact[W], theta[W];
  index_t spot[W];
  for (int l = 0; l < W; ++l) {
    const ChainOption& o = chain[static_cast<std::size_t>(blk.index[std::min(l, blk.count - 1)])];
    const BlackScholesModel md = chain_model(o);
    const Contract ct = chain_contract(o);
    const detail::AssetAxis ax = detail::asset_axis(md.assets[0], o.strike > 0 ? o.strike : o.spot, o.maturity, n,
                                                    me, 1, o.rate);
    const detail::Rows R = detail::build_rows(ax.axis, md.assets[0], o.rate, Space::price, false, false);
    const Field<double> init = detail::payoff_on_grid(Grid(ax.axis), 1, ct, Space::price, me.smoothing, 1);
    const bool early = o.exercise == Exercise::american;
    for (index_t i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(i) * W + l;
      x[k] = ax.axis[i];
      al[k] = R.l[i];
      ad[k] = R.d[i];
      au[k] = R.u[i];
      u[k] = init(i, 0, 0);
      const double S = x[k];
      g[k] = early ? ct.value(&S, 1) : kNegInf;  // -inf: max() leaves a European lane alone
    }
    T[l] = o.maturity;
    s_fact[l] = 0.0;
    spot[l] = ax.spot;
    theta[l] = me.scheme.kind == SchemeKind::douglas ? me.scheme.theta : 0.5;
  }
  double hist[3][W];
  for (int l = 0; l < W; ++l) hist[0][l] = hist[1][l] = hist[2][l] = u[static_cast<std::size_t>(spot[l]) * W + l];
  double taus[3][W] = {};

  // One step of each lane's length dt[l] (detail::time_step: the same every uniform step, so the
  // factorisation below runs for the first step, the damped halves and graded steps only).
  auto step = [&](const double* dt, bool damped) {
    double e[W], s[W];
    bool refactor = false;
    for (int l = 0; l < W; ++l) {
      const double th = damped ? 1.0 : theta[l];
      e[l] = (1.0 - th) * dt[l];
      s[l] = th * dt[l];
      refactor = refactor || s[l] != s_fact[l];
    }
    if (refactor) {
      for (std::size_t k = 0; k < sz; ++k) {
        const int l = static_cast<int>(k % W);
        a[k] = -s[l] * al[k];
        b[k] = 1.0 - s[l] * ad[k];
        c[k] = -s[l] * au[k];
      }
      if (low) {
        for (int l = 0; l < W; ++l) iw[(n - 1) * W + l] = 1.0 / b[(n - 1) * W + l];
        for (index_t k = n - 1; k-- > 0;) {
          double* mk = &m[k * W];
          const double *ck = &c[k * W], *iw1 = &iw[(k + 1) * W], *bk = &b[k * W], *a1 = &a[(k + 1) * W];
          double* iwk = &iw[k * W];
#pragma omp simd
          for (int l = 0; l < W; ++l) {
            mk[l] = ck[l] * iw1[l];
            iwk[l] = 1.0 / (bk[l] - mk[l] * a1[l]);
          }
        }
      } else {
        for (int l = 0; l < W; ++l) iw[l] = 1.0 / b[l];
        for (index_t k = 1; k < n; ++k) {
          double* mk = &m[k * W];
          const double *ak = &a[k * W], *iw0 = &iw[(k - 1) * W], *bk = &b[k * W], *c0 = &c[(k - 1) * W];
          double* iwk = &iw[k * W];
#pragma omp simd
          for (int l = 0; l < W; ++l) {
            mk[l] = ak[l] * iw0[l];
            iwk[l] = 1.0 / (bk[l] - mk[l] * c0[l]);
          }
        }
      }
      for (int l = 0; l < W; ++l) s_fact[l] = s[l];
    }
    // Explicit part: f = u + e A u.
#pragma omp simd
    for (int l = 0; l < W; ++l) f[l] = u[l] + e[l] * (ad[l] * u[l] + au[l] * u[W + l]);
    for (index_t i = 1; i < n - 1; ++i) {
      const std::size_t k = static_cast<std::size_t>(i) * W;
#pragma omp simd
      for (int l = 0; l < W; ++l)
        f[k + l] = u[k + l] + e[l] * (al[k + l] * u[k - W + l] + ad[k + l] * u[k + l] + au[k + l] * u[k + W + l]);
    }
    {
      const std::size_t k = static_cast<std::size_t>(n - 1) * W;
#pragma omp simd
      for (int l = 0; l < W; ++l) f[k + l] = u[k + l] + e[l] * (al[k + l] * u[k - W + l] + ad[k + l] * u[k + l]);
    }
    // Brennan-Schwartz: eliminate towards the exercise end, substitute back with the max.
    if (low) {
      for (index_t k = n - 1; k-- > 0;) {
        const std::size_t q = static_cast<std::size_t>(k) * W;
#pragma omp simd
        for (int l = 0; l < W; ++l) f[q + l] -= m[q + l] * f[q + W + l];
      }
#pragma omp simd
      for (int l = 0; l < W; ++l) f[l] = std::max(f[l] * iw[l], g[l]);
      for (index_t k = 1; k < n; ++k) {
        const std::size_t q = static_cast<std::size_t>(k) * W;
#pragma omp simd
        for (int l = 0; l < W; ++l) f[q + l] = std::max((f[q + l] - a[q + l] * f[q - W + l]) * iw[q + l], g[q + l]);
      }
    } else {
      for (index_t k = 1; k < n; ++k) {
        const std::size_t q = static_cast<std::size_t>(k) * W;
#pragma omp simd
        for (int l = 0; l < W; ++l) f[q + l] -= m[q + l] * f[q - W + l];
      }
      const std::size_t t = static_cast<std::size_t>(n - 1) * W;
#pragma omp simd
      for (int l = 0; l < W; ++l) f[t + l] = std::max(f[t + l] * iw[t + l], g[t + l]);
      for (index_t k = n - 1; k-- > 0;) {
        const std::size_t q = static_cast<std::size_t>(k) * W;
#pragma omp simd
        for (int l = 0; l < W; ++l) f[q + l] = std::max((f[q + l] - c[q + l] * f[q + W + l]) * iw[q + l], g[q + l]);
      }
    }
    u.swap(f);
  };

  double tb[W], dt[W], half[W];
  for (long k = 0; k < N; ++k) {
    for (int l = 0; l < W; ++l) {
      const detail::TimeStep st = detail::time_step(T[l], k, N, me.step_grading);
      tb[l] = st.tb;
      dt[l] = st.dt;
      half[l] = st.half();
    }
    if (k < me.scheme.damping_steps) {
      step(half, true);
      step(half, true);
    } else {
      step(dt, false);
    }
    for (int l = 0; l < W; ++l) {
      hist[0][l] = hist[1][l];
      hist[1][l] = hist[2][l];
      hist[2][l] = u[static_cast<std::size_t>(spot[l]) * W + l];
      taus[0][l] = taus[1][l];
      taus[1][l] = taus[2][l];
      taus[2][l] = tb[l];
    }
  }
  for (int l = 0; l < blk.count; ++l) {
    const std::size_t j = static_cast<std::size_t>(blk.index[l]);
    const index_t i = spot[l];
    auto at = [&](index_t q) { return static_cast<std::size_t>(q) * W + l; };
    u[at(0)] = std::max(u[at(0)], g[at(0)]);
    u[at(n - 1)] = std::max(u[at(n - 1)], g[at(n - 1)]);
    const double hm = x[at(i)] - x[at(i - 1)], hp = x[at(i + 1)] - x[at(i)];
    const double um = u[at(i - 1)], u0 = u[at(i)], up = u[at(i + 1)];
    out.price[j] = u0;
    out.delta[j] = (-hp / (hm * (hm + hp))) * um + ((hp - hm) / (hm * hp)) * u0 + (hm / (hp * (hm + hp))) * up;
    out.gamma[j] = 2.0 * (um / (hm * (hm + hp)) - u0 / (hm * hp) + up / (hp * (hm + hp)));
    const double h1 = taus[1][l] - taus[0][l], h2 = taus[2][l] - taus[1][l];
    out.theta[j] = N >= 2 ? -(hist[0][l] * h2 / (h1 * (h1 + h2)) - hist[1][l] * (h1 + h2) / (h1 * h2) +
                              hist[2][l] * (2 * h2 + h1) / (h2 * (h1 + h2)))
                          : std::nan("");
  }
}

}  // namespace

BlackScholesModel chain_model(const ChainOption& o) {
  return BlackScholesModel{{{o.spot, o.volatility, o.dividend}}, {}, o.rate};
}

Contract chain_contract(const ChainOption& o) { return Contract::vanilla(o.type, o.strike, o.maturity, o.exercise); }

namespace {

void validate_chain(const std::vector<ChainOption>& chain, const Method& method) {
  method.validate();
  adi::detail::require(method.space == Space::price && method.far_field == FarField::linear,
                       "price_chain: the chain is priced in price space with the linear far field; use "
                       "Space::price and FarField::linear");
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const ChainOption& o = chain[k];
    try {
      if (o.exercise == Exercise::bermudan) throw InvalidArgument("Bermudan exercise is not offered in a chain");
      chain_model(o).validate();
      chain_contract(o).validate(1);
      const double center = o.strike > 0 ? o.strike : o.spot;  // (asset_axis's, the kernels' grid)
      detail::require_finite_far_end(o.volatility, o.maturity, common::price_axis_sd(o.volatility, o.maturity),
                                     std::max(o.spot, center), method.width, true);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("price_chain: contract " + ::adi::detail::number(k) + ": " + e.what());
    }
  }
}

ChainResult price_validated(const std::vector<ChainOption>& chain, const Method& method, ChainKernel kernel,
                            Clock::time_point t_start);

}  // namespace

ChainResult price_chain(const std::vector<ChainOption>& chain, const Method& method, Extrapolation extrapolation,
                        ChainKernel kernel) {
  const auto t_start = Clock::now();
  validate_chain(chain, method);  // once, also for both grids of Richardson
  const index_t n = method.nodes > 0 ? method.nodes : detail::default_nodes(1);
  const long N = method.steps > 0 ? method.steps : detail::default_steps(1);
  detail::check_extrapolation(extrapolation, n, N, "price_chain");
  if (extrapolation == Extrapolation::richardson) {
    ChainResult fine = price_validated(chain, method, kernel, t_start);
    const ChainResult coarse = price_validated(chain, detail::richardson_half(method, n, N), kernel, Clock::now());
    auto combine = [](std::vector<double>& f, const std::vector<double>& c) {
      for (std::size_t k = 0; k < f.size(); ++k) f[k] = detail::richardson(f[k], c[k]);
    };
    combine(fine.price, coarse.price);
    combine(fine.delta, coarse.delta);
    combine(fine.gamma, coarse.gamma);
    combine(fine.theta, coarse.theta);
    fine.seconds += coarse.seconds;
    fine.setup_seconds += coarse.setup_seconds;
    fine.backend += ", Richardson";
    return fine;
  }
  return price_validated(chain, method, kernel, t_start);
}

namespace {

ChainResult price_validated(const std::vector<ChainOption>& chain, const Method& method, ChainKernel kernel,
                            Clock::time_point t_start) {
  const index_t n = method.nodes > 0 ? method.nodes : detail::default_nodes(1);
  const long N = method.steps > 0 ? method.steps : detail::default_steps(1);
  ChainResult r;
  const std::size_t count = chain.size();
  r.price.assign(count, std::nan(""));
  r.delta = r.gamma = r.theta = r.price;
  if (count == 0) return r;
  if (!method.executor.is_host()) {  // (a build without CUDA has no device executor)
    adi::detail::require(kernel != ChainKernel::warp || n <= cuda_backend::kChainWarpMaxNodes,
                         "price_chain: ChainKernel::warp holds at most " +
                             ::adi::detail::number(cuda_backend::kChainWarpMaxNodes) + " nodes, got nodes = " +
                             ::adi::detail::number(n) + "; use fewer nodes or ChainKernel::thread");
    std::vector<cuda_backend::ChainContract> cc(count);
    for (std::size_t k = 0; k < count; ++k) cc[k] = detail::chain_kernel_contract(chain[k]);
    const cuda_backend::ChainSettings s = detail::chain_kernel_settings(method, kernel);
    cuda_backend::option_chain_price(cc.data(), static_cast<long>(count), s, r.price.data(), r.delta.data(),
                                     r.gamma.data(), r.theta.data(), &r.seconds, &r.setup_seconds,
                                     method.executor.stream());
    r.backend = s.kernel == 1 || (s.kernel == 0 && n > cuda_backend::kChainWarpMaxNodes) ? "cuda (thread per contract)"
                                                                                       : "cuda (warp per contract)";
    return r;
  }
  // Blocks of one exercise direction each (puts: the region touches S = 0).
  std::vector<Block> blocks;
  std::vector<bool> low;
  for (int pass = 0; pass < 2; ++pass) {
    Block b;
    for (std::size_t k = 0; k < count; ++k) {
      if ((chain[k].type == OptionType::put) != (pass == 0)) continue;
      b.index[b.count++] = static_cast<int>(k);
      if (b.count == W) {
        blocks.push_back(b);
        low.push_back(pass == 0);
        b = Block{};
      }
    }
    if (b.count > 0) {
      blocks.push_back(b);
      low.push_back(pass == 0);
    }
  }
  const int threads = method.executor.threads() > 0 ? method.executor.threads() : omp_get_max_threads();
  r.setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  const auto t0 = Clock::now();
  const long nb = static_cast<long>(blocks.size());
  // An exception must not leave an OpenMP region (std::terminate): the first is kept and
  // rethrown after it.
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (nb > 1 && threads > 1)
  for (long q = 0; q < nb; ++q) {
    try {
      run_block(chain, blocks[q], low[q], method, n, N, r);
    } catch (...) {
#pragma omp critical(adi_chain_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.backend = "host (" + ::adi::detail::number(threads) + " threads, " + ::adi::detail::number(W) + " lanes)";
  return r;
}

}  // namespace

}  // namespace adi::finance
