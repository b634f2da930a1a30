// An option chain of American puts as one batch (adi::finance::price_chain) against
// QuantLib's FdBlackScholesVanillaEngine one contract at a time, per core, at equal
// accuracy, and on the GPU (one thread per contract) for the whole chain.
//
// The chain: listed-style expiries (1 week .. 2 years, 14 dates), strikes 50% .. 150% of
// the spot (101 per expiry), one underlying per 1414 contracts with its own volatility
// (15% .. 60%), rate (0 .. 5%) and dividend yield (0 .. 3%); spot 100. Accuracy: the
// largest absolute error over a sample of contracts spread through the chain, against the
// one-contract path on a 3201-node, 3200-step grid (price_one_asset; its own error there
// is below 1e-6, see the "reference check" line: 1601 x 1600 against 3201 x 3200).
//
//   bench_option_chain [--count 680000] [--nodes 201] [--steps 100] [--sample 32]
//                      [--host-count 20000] [--grading 2] [--cluster 1] [--width 5] [--richardson]
//                      [--gpu] [--kernel auto|warp|thread] [--gpu-configs 401x200r,201x100r:thread,...]
//                      [--reference-file F] [--no-quantlib]
//
// --gpu prices the whole chain on the GPU at the host's settings; --gpu-configs at each
// listed grid ("r": Richardson; ":warp" / ":thread": the kernel), one table row each.
// --reference-file keeps the sampled references (computed once, OpenMP over samples).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <omp.h>

#include "adi/executor.hpp"
#include "adi/finance/finance.hpp"

#ifdef ADI_HAVE_QUANTLIB
#include <ql/exercise.hpp>
#include <ql/instruments/vanillaoption.hpp>
#include <ql/pricingengines/vanilla/fdblackscholesvanillaengine.hpp>
#include <ql/processes/blackscholesprocess.hpp>
#include <ql/quotes/simplequote.hpp>
#include <ql/termstructures/volatility/equityfx/blackconstantvol.hpp>
#include <ql/termstructures/yield/flatforward.hpp>
#include <ql/time/calendars/nullcalendar.hpp>
#include <ql/time/daycounters/actual365fixed.hpp>
#endif

namespace fin = adi::finance;
using Clock = std::chrono::steady_clock;

namespace {

const int kDays[] = {7, 14, 21, 28, 35, 49, 63, 91, 119, 182, 273, 365, 547, 730};
constexpr int kStrikes = 101;

std::vector<fin::ChainOption> listed_chain(long count) {
  std::vector<fin::ChainOption> c;
  c.reserve(count);
  for (long u = 0; static_cast<long>(c.size()) < count; ++u) {
    const double f = std::fmod(u * 0.618033988749895, 1.0);
    for (int d : kDays)
      for (int j = 0; j < kStrikes && static_cast<long>(c.size()) < count; ++j) {
        fin::ChainOption o;
        o.type = fin::OptionType::put;
        o.exercise = fin::Exercise::american;
        o.spot = 100;
        o.strike = 50.0 + 100.0 * j / (kStrikes - 1);
        o.maturity = d / 365.0;
        o.volatility = 0.15 + 0.45 * f;
        o.rate = 0.05 * std::fmod(u * 0.414213562373095, 1.0);
        o.dividend = 0.03 * std::fmod(u * 0.732050807568877, 1.0);
        c.push_back(o);
      }
  }
  return c;
}

// Quadratic time levels and a 1 sd cluster by default: order 2 for American puts.
double g_grading = 2.0, g_cluster = 1.0, g_width = 5.0;
fin::Extrapolation g_extra = fin::Extrapolation::none;

fin::Method method(long nodes, long steps) {
  fin::Method m;
  m.nodes = nodes;
  m.steps = steps;
  m.scheme = adi::Scheme::douglas().with_damping(2);
  m.step_grading = g_grading;
  m.cluster = g_cluster;
  m.width = g_width;
  m.executor = adi::Executor::host(1);
  return m;
}

double reference(const fin::ChainOption& o, long nodes) {
  fin::Method m = method(nodes, nodes - 1);
  m.step_grading = 2;  // the reference always takes the order-2 settings
  m.cluster = 1;
  m.width = 5;
  return fin::price_one_asset<double>(fin::chain_model(o), fin::chain_contract(o), m, true).price;
}

#ifdef ADI_HAVE_QUANTLIB
// QuantLib's FD engine (Crank-Nicolson after 2 damping steps, as adi) on one contract.
double quantlib_put(const fin::ChainOption& o, long x, long t) {
  using namespace QuantLib;
  const Date today(1, January, 2026);
  Settings::instance().evaluationDate() = today;
  const DayCounter dc = Actual365Fixed();
  auto spot = ext::make_shared<SimpleQuote>(o.spot);
  auto proc = ext::make_shared<BlackScholesMertonProcess>(
      Handle<Quote>(spot), Handle<YieldTermStructure>(ext::make_shared<FlatForward>(today, o.dividend, dc)),
      Handle<YieldTermStructure>(ext::make_shared<FlatForward>(today, o.rate, dc)),
      Handle<BlackVolTermStructure>(ext::make_shared<BlackConstantVol>(today, NullCalendar(), o.volatility, dc)));
  const Date mat = today + static_cast<int>(std::lround(o.maturity * 365));
  VanillaOption opt(ext::make_shared<PlainVanillaPayoff>(Option::Put, o.strike),
                    ext::make_shared<AmericanExercise>(today, mat));
  opt.setPricingEngine(ext::make_shared<FdBlackScholesVanillaEngine>(proc, t, x, 2, FdmSchemeDesc::CrankNicolson()));
  return opt.NPV();
}
#endif

}  // namespace

int main(int argc, char** argv) {
  long count = 680000, nodes = 201, steps = 100, sample = 32, host_count = 20000;
  bool gpu = false, ql = true;
  std::string kernel_name = "auto", gpu_configs, reference_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atol(argv[++i]) : 0L; };
    if (a == "--count") count = next();
    else if (a == "--nodes") nodes = next();
    else if (a == "--steps") steps = next();
    else if (a == "--sample") sample = next();
    else if (a == "--host-count") host_count = next();
    else if (a == "--gpu") gpu = true;
    else if (a == "--richardson") g_extra = fin::Extrapolation::richardson;
    else if (a == "--grading") g_grading = std::atof(i + 1 < argc ? argv[++i] : "2");
    else if (a == "--cluster") g_cluster = std::atof(i + 1 < argc ? argv[++i] : "1");
    else if (a == "--no-quantlib") ql = false;
    else if (a == "--width") g_width = std::atof(i + 1 < argc ? argv[++i] : "5");
    else if (a == "--kernel" && i + 1 < argc) kernel_name = argv[++i];
    else if (a == "--gpu-configs" && i + 1 < argc) gpu_configs = argv[++i];
    else if (a == "--reference-file" && i + 1 < argc) reference_file = argv[++i];
    else {
      std::fprintf(stderr, "usage: bench_option_chain [--count N] [--nodes n] [--steps N] [--sample k] "
                           "[--host-count m] [--grading p] [--cluster sd] [--width sd] [--richardson] [--gpu] "
                           "[--kernel auto|warp|thread] [--gpu-configs LIST] [--reference-file F] [--no-quantlib]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (count < 1 || nodes < 5 || steps < 1 || sample < 1 || host_count < 1) {
    std::fprintf(stderr, "bench_option_chain: --count, --sample, --host-count, --steps must be >= 1, --nodes >= 5\n");
    return 2;
  }
  const auto chain = listed_chain(count);
  std::vector<long> picks;
  for (long k = 0; k < sample; ++k) picks.push_back((k * 7919 + 13) % count);
  std::vector<fin::ChainOption> sub;
  for (long k : picks) sub.push_back(chain[k]);
  std::printf("chain: %ld American puts (%zu expiries x %d strikes per underlying), grid %ld nodes x %ld steps, "
              "step grading %g, cluster %g sd\n",
              count, std::size(kDays), kStrikes, nodes, steps, g_grading, g_cluster);
  // References, and how good they are.
  std::vector<double> ref(sub.size());
  bool loaded = false;
  if (!reference_file.empty()) {
    if (std::FILE* f = std::fopen(reference_file.c_str(), "r")) {
      std::size_t k = 0;
      long fc = -1, fs = -1;  // the file's chain size and sample count: another chain recomputes
      if (std::fscanf(f, "# %ld %ld", &fc, &fs) == 2 && fc == count && fs == sample)
        while (k < ref.size() && std::fscanf(f, "%lf", &ref[k]) == 1) ++k;
      std::fclose(f);
      loaded = k == ref.size();
      if (loaded) std::printf("references: %zu read from %s\n", k, reference_file.c_str());
    }
  }
  if (!loaded) {
    const auto r0 = Clock::now();
#pragma omp parallel for schedule(dynamic, 1)
    for (long k = 0; k < static_cast<long>(sub.size()); ++k) ref[k] = reference(sub[k], 3201);
    double ref_check = 0;
    for (std::size_t k = 0; k < std::min<std::size_t>(6, sub.size()); ++k)
      ref_check = std::max(ref_check, std::abs(reference(sub[k], 1601) - ref[k]));
    std::printf("reference check: 1601 x 1600 vs 3201 x 3200, max |diff| over 6 contracts %.2e (%.1f s, %d threads)\n",
                ref_check, std::chrono::duration<double>(Clock::now() - r0).count(), omp_get_max_threads());
    if (!reference_file.empty())
      if (std::FILE* f = std::fopen(reference_file.c_str(), "w")) {
        std::fprintf(f, "# %ld %ld\n", count, sample);
        for (double v : ref) std::fprintf(f, "%.17g\n", v);
        std::fclose(f);
      }
  }
  auto max_err = [&](const std::vector<double>& p) {
    double e = 0;
    for (std::size_t k = 0; k < p.size(); ++k) e = std::max(e, std::abs(p[k] - ref[k]));
    return e;
  };
  auto rms_err = [&](const std::vector<double>& p) {
    double e = 0;
    for (std::size_t k = 0; k < p.size(); ++k) e += (p[k] - ref[k]) * (p[k] - ref[k]);
    return std::sqrt(e / double(p.size()));
  };
  auto kernel_of = [](const std::string& k) {
    return k == "warp" ? fin::ChainKernel::warp : (k == "thread" ? fin::ChainKernel::thread : fin::ChainKernel::automatic);
  };
  // Host, one thread.
  const fin::Method me = method(nodes, steps);
  const std::vector<double> sub_prices = fin::price_chain(sub, me, g_extra).price;
  const double err_host = max_err(sub_prices);
  {  // where the worst error sits (strike, maturity, volatility)
    std::size_t w = 0;
    for (std::size_t k = 0; k < sub.size(); ++k)
      if (std::abs(sub_prices[k] - ref[k]) > std::abs(sub_prices[w] - ref[w])) w = k;
    std::printf("worst sample: K %.1f, T %.4f, sigma %.3f, r %.4f, q %.4f: price %.6f, error %.2e\n", sub[w].strike,
                sub[w].maturity, sub[w].volatility, sub[w].rate, sub[w].dividend, ref[w], sub_prices[w] - ref[w]);
  }
  std::vector<fin::ChainOption> slice(chain.begin(), chain.begin() + std::min(count, host_count));
  const auto t0 = Clock::now();
  const fin::ChainResult hr = fin::price_chain(slice, me, g_extra);
  const double host_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double host_per = host_s / double(slice.size());
  std::printf("\n| who | grid | max abs error (%ld samples) | RMS error | time per option, 1 core | options per second |\n",
              sample);
  std::printf("|---|---|---|---|---|---|\n");
  std::printf("| adi price_chain, host 1 thread%s | %ld x %ld | %.2e | %.2e | %.2f us | %.0f |\n",
              g_extra == fin::Extrapolation::richardson ? ", Richardson" : "", nodes, steps, err_host,
              rms_err(sub_prices), 1e6 * host_per, 1.0 / host_per);
  (void)hr;
#ifdef ADI_HAVE_QUANTLIB
  if (ql) {
    // QuantLib at growing grids until its error is at most adi's.
    double ql_per = 0, ql_err = 0;
    long qx = 0;
    for (long x : {100L, 200L, 400L, 800L, 1600L}) {
      std::vector<double> p(sub.size());
      const auto q0 = Clock::now();
      for (std::size_t k = 0; k < sub.size(); ++k) p[k] = quantlib_put(sub[k], x, x);
      const double per = std::chrono::duration<double>(Clock::now() - q0).count() / double(sub.size());
      const double e = max_err(p);
      std::printf("| QuantLib FdBlackScholesVanillaEngine (CN, 2 damping) | %ld x %ld | %.2e | %.2e | %.2f us | %.0f |\n",
                  x, x, e, rms_err(p), 1e6 * per, 1.0 / per);
      std::fflush(stdout);
      qx = x;
      ql_per = per;
      ql_err = e;
      if (e <= err_host) break;
    }
    std::printf("\nper core at equal accuracy: QuantLib %ld x %ld (error %.2e) %.2f us, adi %ld x %ld (error %.2e) "
                "%.2f us: %.1fx%s\n",
                qx, qx, ql_err, 1e6 * ql_per, nodes, steps, err_host, 1e6 * host_per, ql_per / host_per,
                ql_err <= err_host ? "" : " (QuantLib still less accurate at its finest grid)");
  }
#else
  (void)ql;
  std::printf("(built without QuantLib: no QuantLib rows)\n");
#endif
  // GPU rows: the host's settings (--gpu) and/or each of --gpu-configs.
  struct GpuRun {
    long nodes, steps;
    bool richardson;
    std::string kernel;
  };
  std::vector<GpuRun> runs;
  if (gpu) runs.push_back({nodes, steps, g_extra == fin::Extrapolation::richardson, kernel_name});
  for (std::size_t at = 0; at < gpu_configs.size();) {
    std::size_t end = gpu_configs.find(',', at);
    if (end == std::string::npos) end = gpu_configs.size();
    std::string item = gpu_configs.substr(at, end - at), kern = "auto";
    at = end + 1;
    if (const auto colon = item.find(':'); colon != std::string::npos) {
      kern = item.substr(colon + 1);
      item = item.substr(0, colon);
    }
    const bool rich = !item.empty() && item.back() == 'r';
    if (rich) item.pop_back();
    const auto x = item.find('x');
    if (x == std::string::npos) {
      std::fprintf(stderr, "bench_option_chain: --gpu-configs item '%s' is not NODESxSTEPS[r][:warp|:thread]\n",
                   item.c_str());
      return 2;
    }
    runs.push_back({std::atol(item.substr(0, x).c_str()), std::atol(item.substr(x + 1).c_str()), rich, kern});
  }
  if (!runs.empty()) {
    if (!adi::Executor::cuda_available()) {
      std::printf("\nGPU: no CUDA device (or built without CUDA): GPU rows skipped\n");
      return 0;
    }
    std::printf("\n| GPU kernel | contracts | grid | stepping kernel s | device setup s | whole call s | contracts/s | "
                "max abs error (%ld samples) | RMS error | worst sample (K, T, sigma) | GPU vs host chain | NaN |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                sample);
    for (const GpuRun& run : runs) {
      const auto ex = run.richardson ? fin::Extrapolation::richardson : fin::Extrapolation::none;
      fin::Method mg = method(run.nodes, run.steps);
      mg.executor = adi::Executor::cuda();
      const fin::ChainKernel kern = kernel_of(run.kernel);
      fin::price_chain(sub, mg, ex, kern);  // warm-up (context, module load)
      const auto g0 = Clock::now();
      const fin::ChainResult gr = fin::price_chain(chain, mg, ex, kern);
      const double total = std::chrono::duration<double>(Clock::now() - g0).count();
      std::vector<double> p;
      for (long k : picks) p.push_back(gr.price[k]);
      fin::Method mh = method(run.nodes, run.steps);
      mh.executor = adi::Executor::host();
      const auto hs = fin::price_chain(sub, mh, ex).price;  // the GPU against the host chain: round-off
      double worst_host = 0;
      std::size_t w = 0;
      for (std::size_t k = 0; k < p.size(); ++k) {
        worst_host = std::max(worst_host, std::abs(p[k] - hs[k]));
        if (!(std::abs(p[k] - ref[k]) <= std::abs(p[w] - ref[w]))) w = k;
      }
      long nan = 0;
      for (double v : gr.price) nan += std::isnan(v) ? 1 : 0;
      std::printf("| %s | %ld | %ld x %ld%s | %.4f | %.4f | %.4f | %.3g | %.2e | %.2e | %.0f, %.3f, %.2f | %.1e | %ld |\n",
                  gr.backend.c_str(), count, run.nodes, run.steps, run.richardson ? " Richardson" : "", gr.seconds,
                  gr.setup_seconds, total, double(count) / total, max_err(p), rms_err(p), sub[w].strike,
                  sub[w].maturity, sub[w].volatility, worst_host, nan);
      std::fflush(stdout);
    }
  }
  return 0;
}
