// Option pricing by ADI against QuantLib's finite-difference engines, in one run, on the
// same node counts, time steps, scheme and damping steps:
//   1 asset   European call      adi::finance::price (Douglas = Crank-Nicolson)  vs FdBlackScholesVanillaEngine (Douglas)
//   2 assets  exchange (Margrabe) adi::finance::price (Hundsdorfer-Verwer)       vs Fd2dBlackScholesVanillaEngine (HV)
//   Heston    European call      adi::finance::price (Hundsdorfer-Verwer)        vs FdHestonVanillaEngine (HV)
// Errors against the closed forms (Black-Scholes, Margrabe, Heston's semi-analytic price,
// the latter also checked against QuantLib's AnalyticHestonEngine). Times are whole
// pricing calls (grid, operators, payoff, stepping), medians of the iterations after
// Google Benchmark's warm-up; adi on 1 thread (QuantLib's engines are single-threaded)
// and on all threads; for one asset "adi 1t" is the pricer's default one-axis sweep and
// "adi AS 1t" the same scheme through AdiSolver (Method::one_asset_sweep = false). The summary pairs each QuantLib row with the fastest adi row
// (1 thread) whose error is at most QuantLib's: the speedup at equal accuracy (adi also
// runs a few coarser grids of its own for this pairing).
// The copy bandwidth is measured in the same run; "GB/s" is the minimum traffic of the
// time stepping (the solution read and written once per step) over adi's stepping time:
// small grids live in cache, so it shows how far from streaming the big ones are.
//
//   bench_quantlib [google benchmark flags]
// Without QuantLib (ADI_HAVE_QUANTLIB undefined) only the adi rows run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "adi/finance/finance.hpp"

#ifdef ADI_HAVE_QUANTLIB
#include <ql/instruments/basketoption.hpp>
#include <ql/instruments/vanillaoption.hpp>
#include <ql/models/equity/hestonmodel.hpp>
#include <ql/pricingengines/basket/fd2dblackscholesvanillaengine.hpp>
#include <ql/pricingengines/vanilla/analytichestonengine.hpp>
#include <ql/pricingengines/vanilla/fdblackscholesvanillaengine.hpp>
#include <ql/pricingengines/vanilla/fdhestonvanillaengine.hpp>
#include <ql/processes/blackscholesprocess.hpp>
#include <ql/processes/hestonprocess.hpp>
#include <ql/quotes/simplequote.hpp>
#include <ql/termstructures/volatility/equityfx/blackconstantvol.hpp>
#include <ql/termstructures/yield/flatforward.hpp>
#include <ql/time/calendars/nullcalendar.hpp>
#include <ql/time/daycounters/actual365fixed.hpp>
#endif

namespace {

namespace fin = adi::finance;
using Clock = std::chrono::steady_clock;

// The three problems (T = 1 year).
const fin::BlackScholesModel kOne{{{100, 0.2, 0.01}}, {}, 0.05};
const fin::Contract kCall = fin::Contract::vanilla(fin::OptionType::call, 100, 1.0);
const fin::BlackScholesModel kTwo{{{100, 0.2, 0.0}, {100, 0.3, 0.0}}, {1, 0.5, 0.5, 1}, 0.05};
const fin::Contract kExchange = fin::Contract::exchange(1.0);
const fin::HestonModel kHeston{};  // in 't Hout & Foulon case 1
constexpr int kDamping = 2;

struct Size {
  long x, y, t;       // nodes along S (and S2 or v), time steps
  bool peer = true;   // false: an adi-only row (coarser grids, for the equal-accuracy pairing)
};
const std::vector<Size> kOneSizes{{25, 1, 12, false}, {35, 1, 18, false}, {50, 1, 25},  {70, 1, 35, false},
                                  {100, 1, 50},       {140, 1, 70, false}, {200, 1, 100}, {280, 1, 140, false},
                                  {400, 1, 200},      {800, 1, 400}};
const std::vector<Size> kTwoSizes{{25, 25, 12}, {50, 50, 25}, {100, 100, 50}, {200, 200, 100}};
const std::vector<Size> kHestonSizes{{35, 18, 18, false}, {50, 25, 25}, {70, 35, 35, false}, {100, 50, 50},
                                     {140, 70, 70, false}, {200, 100, 100}};

enum class Problem { one, two, heston };
const char* problem_name(Problem p) { return p == Problem::one ? "1 asset" : p == Problem::two ? "2 assets" : "Heston"; }

struct Row {
  Problem problem;
  Size size;
  std::string who;  // "adi 1t", "adi", "QuantLib"
  double price = 0, error = 0;
  std::vector<double> seconds;       // per iteration, whole pricing call
  std::vector<double> step_seconds;  // adi: the time stepping alone
  double median() const {
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0 : s[s.size() / 2];
  }
  double median_step() const {
    std::vector<double> s = step_seconds;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0 : s[s.size() / 2];
  }
};
std::vector<Row> g_rows;  // filled by the benchmarks, printed at the end
double g_copy_gbs = 0;

double exact(Problem p) {
  switch (p) {
    case Problem::one: return *fin::closed_form(kOne, kCall);
    case Problem::two: return fin::margrabe(kTwo, 1.0);
    default: return fin::heston(kHeston, fin::OptionType::call, 100, 1.0);
  }
}

fin::PriceResult adi_price(Problem p, const Size& s, int threads, bool sweep) {
  fin::Method m;
  m.nodes = s.x;
  m.steps = s.t;
  m.executor = adi::Executor::host(threads);
  m.one_asset_sweep = sweep;
  if (p == Problem::one) {
    m.scheme = adi::Scheme::douglas().with_damping(kDamping);
    return fin::price<double>(kOne, kCall, m);
  }
  m.scheme = adi::Scheme::hundsdorfer_verwer().with_damping(kDamping);
  if (p == Problem::two) return fin::price<double>(kTwo, kExchange, m);
  m.variance_nodes = s.y;
  return fin::price<double>(kHeston, fin::Contract::vanilla(fin::OptionType::call, 100, 1.0), m);
}

void bm_adi(benchmark::State& st, Problem p, Size s, int threads, bool sweep, std::size_t row) {
  Row& r = g_rows[row];
  for (auto _ : st) {
    const auto t0 = Clock::now();
    const fin::PriceResult res = adi_price(p, s, threads, sweep);
    r.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    r.step_seconds.push_back(res.seconds);
    r.price = res.price;
  }
  r.error = r.price - exact(p);
  st.counters["price"] = r.price;
  st.counters["error"] = r.error;
}

#ifdef ADI_HAVE_QUANTLIB
namespace ql = QuantLib;

struct QlMarket {
  ql::Date today{1, ql::January, 2024};
  ql::DayCounter dc = ql::Actual365Fixed();
  ql::Date maturity = today + 365;  // T = 1 with Actual/365
  QlMarket() { ql::Settings::instance().evaluationDate() = today; }
  ql::Handle<ql::YieldTermStructure> curve(double r) const {
    return ql::Handle<ql::YieldTermStructure>(ql::ext::make_shared<ql::FlatForward>(today, r, dc));
  }
  ql::ext::shared_ptr<ql::GeneralizedBlackScholesProcess> process(const fin::Asset& a, double r) const {
    return ql::ext::make_shared<ql::BlackScholesMertonProcess>(
        ql::Handle<ql::Quote>(ql::ext::make_shared<ql::SimpleQuote>(a.spot)), curve(a.dividend), curve(r),
        ql::Handle<ql::BlackVolTermStructure>(
            ql::ext::make_shared<ql::BlackConstantVol>(today, ql::NullCalendar(), a.volatility, dc)));
  }
  ql::ext::shared_ptr<ql::HestonModel> heston() const {
    const fin::HestonModel& h = kHeston;
    auto proc = ql::ext::make_shared<ql::HestonProcess>(
        curve(h.rate), curve(h.dividend), ql::Handle<ql::Quote>(ql::ext::make_shared<ql::SimpleQuote>(h.spot)), h.v0,
        h.kappa, h.theta, h.sigma, h.rho);
    return ql::ext::make_shared<ql::HestonModel>(proc);
  }
};

double ql_price(Problem p, const Size& s) {
  const QlMarket mk;
  auto exercise = ql::ext::make_shared<ql::EuropeanExercise>(mk.maturity);
  if (p == Problem::one) {
    ql::VanillaOption opt(ql::ext::make_shared<ql::PlainVanillaPayoff>(ql::Option::Call, 100), exercise);
    opt.setPricingEngine(ql::ext::make_shared<ql::FdBlackScholesVanillaEngine>(
        mk.process(kOne.assets[0], kOne.rate), s.t, s.x, kDamping, ql::FdmSchemeDesc::Douglas()));
    return opt.NPV();
  }
  if (p == Problem::two) {
    ql::BasketOption opt(ql::ext::make_shared<ql::SpreadBasketPayoff>(
                             ql::ext::make_shared<ql::PlainVanillaPayoff>(ql::Option::Call, 0.0)),
                         exercise);
    opt.setPricingEngine(ql::ext::make_shared<ql::Fd2dBlackScholesVanillaEngine>(
        mk.process(kTwo.assets[0], kTwo.rate), mk.process(kTwo.assets[1], kTwo.rate), kTwo.corr(0, 1), s.x, s.y, s.t,
        kDamping, ql::FdmSchemeDesc::Hundsdorfer()));
    return opt.NPV();
  }
  ql::VanillaOption opt(ql::ext::make_shared<ql::PlainVanillaPayoff>(ql::Option::Call, 100), exercise);
  opt.setPricingEngine(ql::ext::make_shared<ql::FdHestonVanillaEngine>(mk.heston(), s.t, s.x, s.y, kDamping,
                                                                        ql::FdmSchemeDesc::Hundsdorfer()));
  return opt.NPV();
}

double ql_analytic_heston() {
  const QlMarket mk;
  ql::VanillaOption opt(ql::ext::make_shared<ql::PlainVanillaPayoff>(ql::Option::Call, 100),
                        ql::ext::make_shared<ql::EuropeanExercise>(mk.maturity));
  opt.setPricingEngine(ql::ext::make_shared<ql::AnalyticHestonEngine>(mk.heston()));
  return opt.NPV();
}

void bm_quantlib(benchmark::State& st, Problem p, Size s, std::size_t row) {
  Row& r = g_rows[row];
  for (auto _ : st) {
    const auto t0 = Clock::now();
    r.price = ql_price(p, s);  // a fresh instrument and engine: nothing cached
    r.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  r.error = r.price - exact(p);
  st.counters["price"] = r.price;
  st.counters["error"] = r.error;
}
#endif

void bm_copy(benchmark::State& st) {
  const std::size_t n = std::size_t(64) << 20;
  std::vector<char> a(n, 1), b(n, 0);
  std::vector<double> t;
  for (auto _ : st) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), n);
    benchmark::DoNotOptimize(b.data());
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  g_copy_gbs = 2.0 * double(n) / t[t.size() / 2] / 1e9;
  st.counters["GB/s"] = g_copy_gbs;
}

const std::vector<Size>& sizes(Problem p) {
  return p == Problem::one ? kOneSizes : p == Problem::two ? kTwoSizes : kHestonSizes;
}
std::string size_text(Problem p, const Size& s) {
  char buf[64];
  if (p == Problem::one)
    std::snprintf(buf, sizeof buf, "%ld x %ld", s.x, s.t);
  else
    std::snprintf(buf, sizeof buf, "%ld x %ld x %ld", s.x, s.y, s.t);
  return buf;
}
double nodes(Problem p, const Size& s) { return p == Problem::one ? double(s.x) : double(s.x) * double(s.y); }

void print_summary() {
  std::printf("\ncopy bandwidth (memcpy, read + write): %.1f GB/s\n", g_copy_gbs);
  for (Problem p : {Problem::one, Problem::two, Problem::heston}) {
    const double ex = exact(p);
    std::printf("\n%s (closed form %.8f)\n", problem_name(p), ex);
    std::printf("%-15s %-9s %14s %11s %11s %12s %9s\n", "grid x steps", "who", "price", "error", "time ms",
                "stepping ms", "GB/s");
    for (const Size& s : sizes(p))
      for (const Row& r : g_rows) {
        if (r.problem != p || r.size.x != s.x || r.size.t != s.t) continue;
        const double step = r.median_step();
        const double gbs = step > 0 ? 2.0 * 8.0 * nodes(p, s) * double(s.t) / step / 1e9 : 0.0;
        char stepbuf[32] = "-", gbuf[32] = "-";
        if (step > 0) {
          std::snprintf(stepbuf, sizeof stepbuf, "%.3f", 1e3 * step);
          std::snprintf(gbuf, sizeof gbuf, "%.1f", gbs);
        }
        std::printf("%-15s %-9s %14.8f %11.2e %11.3f %12s %9s\n", size_text(p, s).c_str(), r.who.c_str(), r.price,
                    r.error, 1e3 * r.median(), stepbuf, gbuf);
      }
#ifdef ADI_HAVE_QUANTLIB
    std::printf("equal accuracy: each QuantLib row against the fastest adi (1 thread) row with |error| <= QuantLib's\n");
    for (const Row& q : g_rows) {
      if (q.problem != p || q.who != "QuantLib") continue;
      const Row* best = nullptr;
      for (const Row& a : g_rows)
        if (a.problem == p && a.who == "adi 1t" && std::abs(a.error) <= std::abs(q.error) &&
            (!best || a.median() < best->median()))
          best = &a;
      if (best)
        std::printf("  QuantLib %-15s |error| %.2e %9.3f ms  <->  adi %-15s |error| %.2e %9.3f ms  speedup %.1fx\n",
                    size_text(p, q.size).c_str(), std::abs(q.error), 1e3 * q.median(), size_text(p, best->size).c_str(),
                    std::abs(best->error), 1e3 * best->median(), q.median() / best->median());
      else
        std::printf("  QuantLib %-15s |error| %.2e %9.3f ms  <->  no adi row this accurate\n",
                    size_text(p, q.size).c_str(), std::abs(q.error), 1e3 * q.median());
    }
#endif
  }
#ifdef ADI_HAVE_QUANTLIB
  std::printf("\nHeston semi-analytic: adi::finance::heston %.10f, QuantLib AnalyticHestonEngine %.10f\n",
              fin::heston(kHeston, fin::OptionType::call, 100, 1.0), ql_analytic_heston());
#else
  std::printf("\nQuantLib not found at build time (Debian: libquantlib0-dev): adi rows only\n");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("copy/64MiB", bm_copy)->Unit(benchmark::kMillisecond)->Iterations(20);
  // Rows are created first so that the references the benchmarks keep stay valid.
  for (Problem p : {Problem::one, Problem::two, Problem::heston})
    for (const Size& s : sizes(p)) {
      g_rows.push_back(Row{p, s, "adi 1t", 0, 0, {}, {}});
      // One asset: the same scheme through AdiSolver instead of the one-axis sweep; more
      // assets: all threads.
      g_rows.push_back(Row{p, s, p == Problem::one ? "adi AS 1t" : "adi", 0, 0, {}, {}});
#ifdef ADI_HAVE_QUANTLIB
      if (s.peer) g_rows.push_back(Row{p, s, "QuantLib", 0, 0, {}, {}});
#endif
    }
  for (std::size_t i = 0; i < g_rows.size(); ++i) {
    const Row& r = g_rows[i];
    const std::string name = std::string(problem_name(r.problem)) + "/" + size_text(r.problem, r.size) + "/" + r.who;
    benchmark::internal::Benchmark* b;
    if (r.who == "QuantLib") {
#ifdef ADI_HAVE_QUANTLIB
      b = benchmark::RegisterBenchmark(name.c_str(), bm_quantlib, r.problem, r.size, i);
#else
      continue;
#endif
    } else {
      b = benchmark::RegisterBenchmark(name.c_str(), bm_adi, r.problem, r.size, r.who == "adi" ? 0 : 1,
                                       r.who != "adi AS 1t", i);
    }
    b->Unit(benchmark::kMillisecond)->MinTime(0.2);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  print_summary();
  return 0;
}
