// adi's one-asset engine (adi/finance/one_asset.hpp) against QuantLib 1.29's FD engines,
// feature by feature, in one run on one core: barriers (FdBlackScholesBarrierEngine),
// digitals, discrete cash dividends (European and American), Bermudan exercise and a
// flat local-volatility surface (FdBlackScholesVanillaEngine). Errors against independent
// references: QuantLib's analytic engines (Reiner-Rubinstein barriers, AnalyticEuropean-
// Engine for the digital), Black-Scholes (flat local vol), and QuantLib's own FD engine on
// a 4000 x 4000 grid for dividends and Bermudan (no closed form; the values are in
// tests/adi/finance/test_one_asset.cpp too). Both sides: Crank-Nicolson after 2 damping
// steps, nodes x steps = N x N/2 (adi; American: quadratic time levels and a 1 sd cluster,
// Method::step_grading = 2, cluster = 1; Bermudan and digital: quadratic levels, which
// restart at each exercise date; the digital's jump, like an exercise date's kink, needs
// short steps after it) and N x N (QuantLib's usual square grids), times are
// whole pricing calls, medians. The summary pairs each QuantLib row with the fastest adi
// row whose error, and that of every finer adi row, is at most QuantLib's: the speedup at
// equal accuracy. Barriers and the dividend puts also run adi with Richardson
// extrapolation (Extrapolation::richardson, odd N: N x N/2 and its nested half grid),
// paired separately ("(adi Richardson)" lines).
//
//   bench_quantlib_features [--references | --only TEXT]   (--references: print the
//   reference values; --only: the features whose name contains TEXT)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "adi/finance/finance.hpp"
#include "tests/adi/finance/heston_reference.hpp"

#ifdef ADI_HAVE_QUANTLIB
// Individual headers: ql/quantlib.hpp pulls in boost::ublas, which does not compile as C++20.
#include <ql/exercise.hpp>
#include <ql/instruments/barrieroption.hpp>
#include <ql/instruments/dividendvanillaoption.hpp>
#include <ql/instruments/payoffs.hpp>
#include <ql/instruments/vanillaoption.hpp>
#include <ql/pricingengines/barrier/fdblackscholesbarrierengine.hpp>
#include <ql/instruments/basketoption.hpp>
#include <ql/models/equity/hestonmodel.hpp>
#include <ql/pricingengines/basket/fd2dblackscholesvanillaengine.hpp>
#include <ql/pricingengines/vanilla/fdblackscholesvanillaengine.hpp>
#include <ql/pricingengines/vanilla/fdhestonvanillaengine.hpp>
#include <ql/processes/hestonprocess.hpp>
#include <ql/time/daycounters/actual360.hpp>
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

// Median wall time of f over enough repetitions (>= 3, >= 30 ms in all).
double time_of(const std::function<double()>& f, double& value) {
  std::vector<double> t;
  double total = 0;
  while (t.size() < 3 || (total < 0.03 && t.size() < 200)) {
    const auto t0 = Clock::now();
    value = f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    total += t.back();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

fin::OneAssetModel market() {
  fin::OneAssetModel m;
  m.spot = 100;
  m.rate = 0.05;
  m.dividend_yield = 0.02;
  m.volatility = 0.25;
  return m;
}

enum class Style { european, american, bermudan, digital };

fin::Method method(long n, Style ex = Style::european) {
  fin::Method me;
  me.nodes = n;
  me.steps = std::max(2L, n / 2);
  me.scheme = adi::Scheme::douglas().with_damping(2);
  if (ex != Style::european) me.step_grading = 2;  // early exercise, a jump: order 2 (docs/finance.md)
  if (ex == Style::american) me.cluster = 1;       // (Bermudan: the default 3 sd measured better)
  return me;
}

struct Feature {
  const char* name;
  double reference;
  std::function<double(long)> adi;           // nodes -> price
  std::function<double(long)> quantlib;      // grid -> price (empty without QuantLib)
  long max_adi = 800, max_ql = 800;          // largest grids run (2D features: smaller)
  const char* adi_grid = "N x N/2";          // how N reads for adi and QuantLib
  const char* ql_grid = "N x N";
  std::function<double(long)> adi_rich;      // nodes -> price with Extrapolation::richardson (or empty)
};

#ifdef ADI_HAVE_QUANTLIB
using namespace QuantLib;
struct QlMarket {
  Date today{1, January, 2026};
  DayCounter dc = Actual365Fixed();
  ext::shared_ptr<GeneralizedBlackScholesProcess> proc;
  QlMarket() {
    Settings::instance().evaluationDate() = today;
    auto vol = ext::make_shared<BlackConstantVol>(today, NullCalendar(), 0.25, dc);
    proc = ext::make_shared<BlackScholesMertonProcess>(
        Handle<Quote>(ext::make_shared<SimpleQuote>(100.0)),
        Handle<YieldTermStructure>(ext::make_shared<FlatForward>(today, 0.02, dc)),
        Handle<YieldTermStructure>(ext::make_shared<FlatForward>(today, 0.05, dc)), Handle<BlackVolTermStructure>(vol));
  }
  Date maturity() const { return today + 365; }
};
#endif

}  // namespace

int main(int argc, char** argv) {
  const bool print_refs = argc > 1 && std::strcmp(argv[1], "--references") == 0;
  // --only TEXT: the features whose name contains TEXT
  const char* only = argc > 2 && std::strcmp(argv[1], "--only") == 0 ? argv[2] : nullptr;
  const fin::OneAssetModel m = market();
  fin::OneAssetModel divs = m;
  divs.dividends = {fin::Dividend::cash(91.0 / 365, 3.0), fin::Dividend::cash(273.0 / 365, 3.0)};
  fin::OneAssetModel lv = m;
  lv.local_volatility = [](double, double) { return 0.25; };
  auto barrier = [](fin::OptionType t, fin::Barrier b) {
    fin::OneAssetOption o = fin::OneAssetOption::vanilla(t, 100, 1.0);
    o.barrier = b;
    return o;
  };
  const std::vector<double> bdates = {91.0 / 365, 182.0 / 365, 273.0 / 365, 1.0};
  // American put under Heston: Ikonen & Toivanen's case at S = 10, reference 0.520038 (the
  // model and prices: tests/adi/finance/heston_reference.hpp). adi: N x N/2 nodes (S, v),
  // N graded HV steps; QuantLib's FdHestonVanillaEngine: N x N/2 nodes, N steps, HV (its
  // default), 2 damping steps.
  namespace itv = adi::finance::testing;
  const fin::HestonModel it = itv::ikonen_toivanen_model(itv::kIkonenToivanenSpots[2]);
  // American best-of (max) call on 2 assets: sigma 20/30%, q 10/8%, rho 0.3, r 3%, K 100,
  // T 1 (early exercise pays through the dividends). adi: N^2 nodes, N graded HV steps
  // (Ikonen-Toivanen splitting); QuantLib: Fd2dBlackScholesVanillaEngine with a
  // MaxBasketPayoff and AmericanExercise, N x N nodes, N steps, HV, 2 damping steps. No
  // closed form: the reference is adi's Richardson value over 321^2 / 641^2 (computed below;
  // its last two grids differ by 1e-4 and the order is 2, so it is good to ~3e-5).
  const fin::BlackScholesModel two{{{100, 0.2, 0.1}, {100, 0.3, 0.08}}, {1, 0.3, 0.3, 1}, 0.03};
  fin::Contract best = fin::Contract::best_of(fin::OptionType::call, 100, 1.0);
  best.exercise = fin::Exercise::american;
  auto two_method = [](long n) {
    fin::Method me;
    me.nodes = n;
    me.steps = n;
    me.scheme = adi::Scheme::hundsdorfer_verwer().with_damping(2);
    me.step_grading = 2;
    return me;
  };
  auto heston_method = [](long n) {
    fin::Method me;
    me.nodes = n;
    me.variance_nodes = std::max(5L, n / 2);
    me.steps = n;
    me.scheme = adi::Scheme::hundsdorfer_verwer().with_damping(2);
    me.step_grading = 2;
    return me;
  };
  std::vector<Feature> features = {
      {"down-and-out call B 90 R 3", 10.135431190562,
       [&](long n) { return fin::price(m, barrier(fin::OptionType::call, fin::Barrier::down_out(90, 3)), method(n)).price; },
       {}},
      {"up-and-out call B 130", 2.133507432703,
       [&](long n) { return fin::price(m, barrier(fin::OptionType::call, fin::Barrier::up_out(130)), method(n)).price; },
       {}},
      {"digital call K 105 cash 10", 4.001607857389,
       [&](long n) { return fin::price(m, fin::OneAssetOption::digital(fin::OptionType::call, 105, 1, 10), method(n, Style::digital)).price; },
       {}},
      {"cash dividends, European put", 11.125807595642,
       [&](long n) { return fin::price(divs, fin::OneAssetOption::vanilla(fin::OptionType::put, 100, 1), method(n)).price; },
       {}},
      {"cash dividends, American put", 11.424319431669,
       [&](long n) {
         return fin::price(divs, fin::OneAssetOption::vanilla(fin::OptionType::put, 100, 1, fin::Exercise::american),
                           method(n, Style::american)).price;
       },
       {}},
      {"Bermudan put, quarterly", 8.465740481933,
       [&](long n) {
         return fin::price(m, fin::OneAssetOption::bermudan(fin::OptionType::put, 100, 1, bdates),
                           method(n, Style::bermudan)).price;
       },
       {}},
      {"flat local vol, call", fin::black_scholes(fin::OptionType::call, 100, 100, 1, 0.05, 0.02, 0.25).price,
       [&](long n) { return fin::price(lv, fin::OneAssetOption::vanilla(fin::OptionType::call, 100, 1), method(n)).price; },
       {}},
      {"American put, Heston (Ikonen-Toivanen S 10)", itv::kIkonenToivanenPut[2],
       [&](long n) {
         return fin::price<double>(it,
                                   fin::Contract::vanilla(fin::OptionType::put, itv::kIkonenToivanenStrike,
                                                          itv::kIkonenToivanenMaturity, fin::Exercise::american),
                                   heston_method(n)).price;
       },
       {}, 320, 320, "N x N/2 x N steps", "N x N/2 x N steps"},
      {"American best-of call, 2 assets", 0.0,
       [&](long n) { return fin::price<double>(two, best, two_method(n)).price; }, {}, 280, 200, "N^2 x N steps",
       "N^2 x N steps"},
  };
  // adi with Richardson extrapolation (one_asset.hpp): the same method, the half grid
  // ((N + 1) / 2 x N / 4) and a nested full grid (N odd: N x N/2 nodes x steps).
  features[0].adi_rich = [&](long n) {
    return fin::price(m, barrier(fin::OptionType::call, fin::Barrier::down_out(90, 3)), method(n),
                      fin::Extrapolation::richardson).price;
  };
  features[1].adi_rich = [&](long n) {
    return fin::price(m, barrier(fin::OptionType::call, fin::Barrier::up_out(130)), method(n),
                      fin::Extrapolation::richardson).price;
  };
  features[3].adi_rich = [&](long n) {
    return fin::price(divs, fin::OneAssetOption::vanilla(fin::OptionType::put, 100, 1), method(n),
                      fin::Extrapolation::richardson).price;
  };
  features[4].adi_rich = [&](long n) {
    return fin::price(divs, fin::OneAssetOption::vanilla(fin::OptionType::put, 100, 1, fin::Exercise::american),
                      method(n, Style::american), fin::Extrapolation::richardson).price;
  };
  {  // the 2-asset reference: Richardson over 321^2 and 641^2 (only when that feature runs)
    Feature& f = features.back();
    if (!print_refs && (!only || std::strstr(f.name, only))) {
      const double a = f.adi(321), b = f.adi(641);
      f.reference = (4 * b - a) / 3;
      std::printf("reference for %s: 321^2 %.6f, 641^2 %.6f, Richardson %.6f\n", f.name, a, b, f.reference);
    }
  }
#ifdef ADI_HAVE_QUANTLIB
  QlMarket q;
  const auto ex = ext::make_shared<EuropeanExercise>(q.maturity());
  const auto am = ext::make_shared<AmericanExercise>(q.today, q.maturity());
  const auto scheme = FdmSchemeDesc::CrankNicolson();
  auto ql_barrier = [&](Barrier::Type t, double B, double R, Option::Type ty) {
    return [=, &q](long n) {
      BarrierOption o(t, B, R, ext::make_shared<PlainVanillaPayoff>(ty, 100.0), ex);
      o.setPricingEngine(ext::make_shared<FdBlackScholesBarrierEngine>(q.proc, n, n, 2, scheme));
      return o.NPV();
    };
  };
  features[0].quantlib = ql_barrier(Barrier::DownOut, 90, 3, Option::Call);
  features[1].quantlib = ql_barrier(Barrier::UpOut, 130, 0, Option::Call);
  features[2].quantlib = [&](long n) {
    VanillaOption o(ext::make_shared<CashOrNothingPayoff>(Option::Call, 105, 10.0), ex);
    o.setPricingEngine(ext::make_shared<FdBlackScholesVanillaEngine>(q.proc, n, n, 2, scheme));
    return o.NPV();
  };
  const std::vector<Date> dd = {q.today + 91, q.today + 273};
  const std::vector<Real> da = {3.0, 3.0};
  auto ql_div = [&](ext::shared_ptr<Exercise> e) {
    return [=, &q](long n) {
      DividendVanillaOption o(ext::make_shared<PlainVanillaPayoff>(Option::Put, 100.0), e, dd, da);
      o.setPricingEngine(ext::make_shared<FdBlackScholesVanillaEngine>(q.proc, n, n, 2, scheme));
      return o.NPV();
    };
  };
  features[3].quantlib = ql_div(ex);
  features[4].quantlib = ql_div(am);
  features[5].quantlib = [&](long n) {
    const std::vector<Date> bd = {q.today + 91, q.today + 182, q.today + 273, q.maturity()};
    VanillaOption o(ext::make_shared<PlainVanillaPayoff>(Option::Put, 100.0), ext::make_shared<BermudanExercise>(bd));
    o.setPricingEngine(ext::make_shared<FdBlackScholesVanillaEngine>(q.proc, n, n, 2, scheme));
    return o.NPV();
  };
  features[6].quantlib = [&](long n) {
    VanillaOption o(ext::make_shared<PlainVanillaPayoff>(Option::Call, 100.0), ex);
    o.setPricingEngine(ext::make_shared<FdBlackScholesVanillaEngine>(q.proc, n, n, 2, scheme, true));
    return o.NPV();
  };
  features[7].quantlib = [&](long n) {
    const Date t0(28, March, 2004);
    Settings::instance().evaluationDate() = t0;
    const DayCounter d360 = Actual360();
    auto r = Handle<YieldTermStructure>(ext::make_shared<FlatForward>(t0, it.rate, d360));
    auto qz = Handle<YieldTermStructure>(ext::make_shared<FlatForward>(t0, it.dividend, d360));
    auto proc = ext::make_shared<HestonProcess>(r, qz, Handle<Quote>(ext::make_shared<SimpleQuote>(it.spot)), it.v0,
                                                it.kappa, it.theta, it.sigma, it.rho);
    VanillaOption o(ext::make_shared<PlainVanillaPayoff>(Option::Put, itv::kIkonenToivanenStrike),
                    ext::make_shared<AmericanExercise>(t0, t0 + 90));  // 90 / 360 = kIkonenToivanenMaturity
    o.setPricingEngine(ext::make_shared<FdHestonVanillaEngine>(ext::make_shared<HestonModel>(proc), n, n,
                                                               std::max(5L, n / 2), 2));
    const double v = o.NPV();
    Settings::instance().evaluationDate() = q.today;
    return v;
  };
  features[8].quantlib = [&](long n) {
    auto proc = [&](double vol, double div) {
      return ext::make_shared<BlackScholesMertonProcess>(
          Handle<Quote>(ext::make_shared<SimpleQuote>(100.0)),
          Handle<YieldTermStructure>(ext::make_shared<FlatForward>(q.today, div, q.dc)),
          Handle<YieldTermStructure>(ext::make_shared<FlatForward>(q.today, 0.03, q.dc)),
          Handle<BlackVolTermStructure>(ext::make_shared<BlackConstantVol>(q.today, NullCalendar(), vol, q.dc)));
    };
    BasketOption o(ext::make_shared<MaxBasketPayoff>(ext::make_shared<PlainVanillaPayoff>(Option::Call, 100.0)), am);
    o.setPricingEngine(ext::make_shared<Fd2dBlackScholesVanillaEngine>(proc(0.2, 0.1), proc(0.3, 0.08), 0.3, n, n, n, 2,
                                                                      FdmSchemeDesc::Hundsdorfer()));
    return o.NPV();
  };
  if (print_refs) {
    for (auto& f : features) std::printf("%-32s reference %.12f\n", f.name, f.reference);
    std::printf("QuantLib FD at 4000 x 4000 (the dividend and Bermudan references):\n");
    for (int k : {3, 4, 5}) std::printf("%-32s %.12f\n", features[k].name, features[k].quantlib(4000));
    return 0;
  }
#else
  if (print_refs) {
    std::printf("built without QuantLib: no references to print\n");
    return 0;
  }
#endif
  struct Row {
    std::string who;
    long n;
    double err, sec;
  };
  std::printf("one core; grids per feature as printed (one-asset: adi N nodes x N/2 steps, QuantLib N x N); times are "
              "whole pricing calls (median)\n\n");
  std::printf("| feature | who | grid | error | ms |\n|---|---|---|---|---|\n");
  std::vector<std::string> summary;
  for (const Feature& f : features) {
    if (only && !std::strstr(f.name, only)) continue;
    std::vector<Row> adi_rows, rich_rows, ql_rows;
    for (long n : {25L, 35L, 50L, 70L, 100L, 140L, 200L, 280L, 400L, 560L, 800L}) {
      if (n > f.max_adi) break;
      double v = 0;
      const double s = time_of([&] { return f.adi(n); }, v);
      adi_rows.push_back({"adi", n, v - f.reference, s});
      std::printf("| %s | adi | %ld (%s) | %.2e | %.3f |\n", f.name, n, f.adi_grid, v - f.reference, 1e3 * s);
    }
    if (f.adi_rich)
      for (long n : {25L, 35L, 51L, 71L, 101L, 141L, 201L, 281L, 401L, 561L, 801L}) {  // odd: N nodes on both runs
        if (n > f.max_adi + 1) break;
        double v = 0;
        const double s = time_of([&] { return f.adi_rich(n); }, v);
        rich_rows.push_back({"adi Richardson", n, v - f.reference, s});
        std::printf("| %s | adi Richardson | %ld (%s, and half) | %.2e | %.3f |\n", f.name, n, f.adi_grid,
                    v - f.reference, 1e3 * s);
      }
    if (f.quantlib)
      for (long n : {50L, 100L, 200L, 400L, 800L}) {
        if (n > f.max_ql) break;
        double v = 0;
        const double s = time_of([&] { return f.quantlib(n); }, v);
        ql_rows.push_back({"QuantLib", n, v - f.reference, s});
        std::printf("| %s | QuantLib | %ld (%s) | %.2e | %.3f |\n", f.name, n, f.ql_grid, v - f.reference, 1e3 * s);
      }
    std::fflush(stdout);
    auto pair_with = [&](const std::vector<Row>& rows, const Row& qr, const std::string& name) {
      // An adi row counts when it and every finer adi row are at least as accurate (a lucky
      // cancellation on one coarse grid does not count).
      const Row* best = nullptr;
      for (std::size_t a = 0; a < rows.size(); ++a) {
        bool holds = true;
        for (std::size_t b = a; b < rows.size(); ++b) holds = holds && std::abs(rows[b].err) <= std::abs(qr.err);
        if (holds && (!best || rows[a].sec < best->sec)) best = &rows[a];
      }
      char line[320];
      if (best)
        std::snprintf(line, sizeof line, "| %s | N = %ld, %.1e, %.3f ms | N = %ld, %.1e, %.3f ms | %.1fx |",
                      name.c_str(), qr.n, std::abs(qr.err), 1e3 * qr.sec, best->n, std::abs(best->err),
                      1e3 * best->sec, qr.sec / best->sec);
      else
        std::snprintf(line, sizeof line, "| %s | N = %ld, %.1e, %.3f ms | none as accurate | - |", name.c_str(), qr.n,
                      std::abs(qr.err), 1e3 * qr.sec);
      summary.push_back(line);
    };
    for (const Row& qr : ql_rows) {
      pair_with(adi_rows, qr, f.name);
      if (!rich_rows.empty()) pair_with(rich_rows, qr, std::string(f.name) + " (adi Richardson)");
    }
  }
  if (!summary.empty()) {
    std::printf("\nAt equal accuracy (fastest adi row with |error| <= QuantLib's):\n\n");
    std::printf("| feature | QuantLib grid, error, time | adi grid, error, time | speedup |\n|---|---|---|---|\n");
    for (const auto& s : summary) std::printf("%s\n", s.c_str());
  }
  return 0;
}
