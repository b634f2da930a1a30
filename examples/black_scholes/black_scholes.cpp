// black_scholes: prices an option by ADI and prints price, delta and gamma at the spot,
// beside the closed form where one exists; writes the price surface (2 assets, Heston)
// or volume (3 assets) as VTK.
//
//   black_scholes                                         # 1-asset European call, K = S = 100
//   black_scholes --assets 2 --payoff exchange --corr 0.5
//   black_scholes --assets 3 --payoff geometric --nodes 65 --backend cuda
//   black_scholes --model heston --type put
//   black_scholes --exercise american --type put
//   black_scholes --exercise american --assets 2 --payoff best-of --div 0.1,0.08   (Heston too)
//   black_scholes --exercise american --model heston --type put --backend cuda   (2-3 assets too)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "adi/finance/finance.hpp"
#include "common/cli.hpp"

namespace {

using namespace adi::finance;

struct Options {
  std::string model = "bs";
  std::string payoff = "";  // default: vanilla for 1 asset, basket otherwise
  std::string type = "call";
  std::string exercise = "european";
  int assets = 1;
  std::vector<double> spot{100}, vol{0.2}, div{0.0}, corr, weights;
  double rate = 0.05, strike = 100, maturity = 1.0;
  double v0 = 0.04, kappa = 1.5, theta_v = 0.04, xi = 0.3, rho = -0.9;
  long nodes = 0, variance_nodes = 0, steps = 0;
  std::string space = "price";
  std::string far_field = "";  // default: linear in price space, dirichlet in log space
  double width = 5.0, intensity = 0.0;
  bool no_smoothing = false;
  std::string scheme = "hundsdorfer-verwer";
  double theta = -1;
  int damping = 2;
  std::string backend = "cpu";
  int threads = 0;
  std::string precision = "double";
  std::string output = "black_scholes_out";
  bool no_output = false;
  double max_error = 0;  // > 0: exit 1 when |price - closed form| / closed form exceeds it
  int repeat = 1;        // price this many times; times are reported per run (the first pays lazy start-up)
  double step_grading = 1;  // time levels T (k/N)^p
  int digits = 10;          // decimals of the printed price
};

// Per-asset values: one value broadcasts to every asset.
std::vector<double> per_asset(const std::vector<double>& v, int n, const char* name) {
  if (v.size() == 1) return std::vector<double>(static_cast<std::size_t>(n), v[0]);
  if (static_cast<int>(v.size()) != n)
    throw example::UsageError(std::string("--") + name + " has " + std::to_string(v.size()) + " values for " +
                              std::to_string(n) + " assets; give one (for all) or one per asset");
  return v;
}

// --corr: rho_12 (2 assets) or rho_12 rho_13 rho_23 (3 assets); one value: all pairs.
std::vector<double> correlation(const std::vector<double>& c, int n) {
  if (n == 1 || c.empty()) return {};
  const int pairs = n * (n - 1) / 2;
  std::vector<double> r = c.size() == 1 ? std::vector<double>(static_cast<std::size_t>(pairs), c[0]) : c;
  if (static_cast<int>(r.size()) != pairs)
    throw example::UsageError("--corr has " + std::to_string(c.size()) + " values; give rho12 (2 assets) or rho12 "
                              "rho13 rho23 (3 assets), or one value for all pairs");
  std::vector<double> m(static_cast<std::size_t>(n * n), 1.0);
  int p = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) m[i * n + j] = m[j * n + i] = r[p++];
  return m;
}

// The grid in asset prices (log-space axes mapped back) for output.
adi::Grid price_grid(const PriceResult& r, int axes) {
  std::array<adi::AxisGrid, 3> a{};
  for (int d = 0; d < axes; ++d) {
    std::vector<double> x = r.grid.axis(adi::Axis(d)).nodes();
    if (r.space == Space::log)
      for (double& v : x) v = std::exp(v);
    a[d] = adi::AxisGrid::from_nodes(std::move(x));
  }
  return adi::Grid(a[0], a[1], a[2]);
}

template <class T>
int run(const Options& o) {
  Method me;
  me.nodes = o.nodes;
  me.variance_nodes = o.variance_nodes;
  me.steps = o.steps;
  me.scheme = adi::Scheme::from_name(o.scheme);
  if (o.theta > 0) me.scheme.with_theta(o.theta);
  me.scheme.with_damping(o.damping);
  me.space = o.space == "log" ? Space::log : Space::price;
  const std::string ff = o.far_field.empty() ? (o.space == "log" ? "dirichlet" : "linear") : o.far_field;
  me.far_field = ff == "dirichlet" ? FarField::dirichlet : FarField::linear;
  me.width = o.width;
  me.intensity = o.intensity;
  me.smoothing = !o.no_smoothing;
  me.step_grading = o.step_grading;
  me.executor = o.backend == "cuda" ? example::cuda_executor("--backend cpu") : adi::Executor::host(o.threads);
  const bool write = !o.no_output && adi::io::vtk_available();
  if (!o.no_output && !write)
    std::fprintf(stderr, "black_scholes: note: adi was built without VTK, writing no files (as with --no-output)\n");
  if (write) example::prepare_output(o.output);

  const OptionType type = o.type == "put" ? OptionType::put : OptionType::call;
  const Exercise ex = o.exercise == "american" ? Exercise::american : Exercise::european;
  PriceResult r;
  std::vector<PriceResult> runs;
  std::optional<double> exact;
  std::string model_text;
  int axes = 0;
  Contract c;
  if (o.model == "heston") {
    HestonModel h{o.spot.at(0), o.v0, o.kappa, o.theta_v, o.xi, o.rho, o.rate, o.div.at(0)};
    c = Contract::vanilla(type, o.strike, o.maturity, ex);
    exact = closed_form(h, c);
    example::require(o.max_error <= 0 || exact.has_value(), "--max-error needs a contract with a closed form");
    for (int k = 0; k < o.repeat; ++k) runs.push_back(r = price<T>(h, c, me));
    axes = 2;
    char buf[200];
    std::snprintf(buf, sizeof buf, "Heston: S = %g, v0 = %g, kappa = %g, theta = %g, sigma = %g, rho = %g, r = %g, q = %g",
                  h.spot, h.v0, h.kappa, h.theta, h.sigma, h.rho, h.rate, h.dividend);
    model_text = buf;
  } else {
    const int n = o.assets;
    BlackScholesModel m;
    const auto S = per_asset(o.spot, n, "spot"), V = per_asset(o.vol, n, "vol"), Q = per_asset(o.div, n, "div");
    for (int i = 0; i < n; ++i) m.assets.push_back(Asset{S[i], V[i], Q[i]});
    m.correlation = correlation(o.corr, n);
    m.rate = o.rate;
    const Payoff p = o.payoff.empty() ? (n == 1 ? Payoff::vanilla : Payoff::basket) : payoff_from_name(o.payoff);
    c = Contract{p, type, o.strike, o.maturity, ex, o.weights};
    exact = closed_form(m, c);
    example::require(o.max_error <= 0 || exact.has_value(), "--max-error needs a contract with a closed form");
    for (int k = 0; k < o.repeat; ++k) runs.push_back(r = price<T>(m, c, me));
    axes = n;
    model_text = "Black-Scholes, " + std::to_string(n) + " asset(s):";
    for (int i = 0; i < n; ++i) {
      char buf[120];
      std::snprintf(buf, sizeof buf, " [S = %g, sigma = %g, q = %g]", S[i], V[i], Q[i]);
      model_text += buf;
    }
    if (n > 1) {
      model_text += ", rho =";
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) model_text += " " + example::num(m.corr(i, j));
    }
    model_text += ", r = " + example::num(o.rate);
  }

  std::printf("model      %s\n", model_text.c_str());
  std::printf("contract   %s\n", c.describe().c_str());
  std::printf("grid       %s nodes, %s space, %s far field, %s, %s, %s\n", r.grid.describe().c_str(),
              space_name(me.space), far_field_name(me.far_field), o.precision.c_str(), me.executor.name().c_str(),
              me.smoothing ? "payoff cell-averaged at the kink" : "payoff at the nodes");
  if (ex == Exercise::american && axes == 1)
    std::printf("scheme     Crank-Nicolson with Brennan-Schwartz early exercise, %ld steps, Rannacher %d\n", r.steps,
                o.damping);
  else if (ex == Exercise::american)
    std::printf("scheme     %s (theta %.4g) with the Ikonen-Toivanen early-exercise splitting, %ld steps, Rannacher %d\n",
                me.scheme.name(), me.scheme.theta, r.steps, o.damping);
  else
    std::printf("scheme     %s (theta %.4g), %ld steps, Rannacher damping %d steps\n", me.scheme.name(),
                me.scheme.theta, r.steps, o.damping);
  std::printf("price      %.*f\n", o.digits, r.price);
  const char* names[3] = {"S", o.model == "heston" ? "v" : "S2", "S3"};
  const auto axis_name = [&](int d) { return d == 0 && axes > 1 && o.model != "heston" ? "S1" : names[d]; };
  for (int d = 0; d < axes; ++d)
    std::printf("delta_%-4s %.8f   gamma_%-4s %.8f\n", axis_name(d), r.delta[d], axis_name(d), r.gamma[d]);
  // A NaN or Inf in a result is an error (exit 1), after the report that shows it.
  const std::string after = "after " + std::to_string(r.steps) + " steps";
  example::require_finite(r.price, "the price", after);
  for (int d = 0; d < axes; ++d) {
    example::require_finite(r.delta[d], std::string("delta_") + axis_name(d), after);
    example::require_finite(r.gamma[d], std::string("gamma_") + axis_name(d), after);
  }
  double rel = 0;
  if (exact) {
    // Relative to the closed form, or absolute where that is ~0 (a worthless option).
    const bool absolute = std::abs(*exact) < 1e-12;
    rel = std::abs(r.price - *exact) / (absolute ? 1.0 : std::abs(*exact));
    std::printf("closed     %.10f   error %.3e (%s %.3e)\n", *exact, r.price - *exact,
                absolute ? "absolute: the closed form is ~0;" : "relative", rel);
    if (o.model != "heston" && o.assets == 1 && c.payoff == Payoff::vanilla) {
      const Greeks g = black_scholes(type, o.spot[0], o.strike, o.maturity, o.rate, o.div[0], o.vol[0]);
      std::printf("closed     delta %.8f (error %.2e), gamma %.8f (error %.2e)\n", g.delta, r.delta[0] - g.delta,
                  g.gamma, r.gamma[0] - g.gamma);
    }
  } else {
    std::printf("closed     none for this contract\n");
  }
  std::printf("time       stepping %.4f s (%.3f ms/step), setup %.4f s\n", r.seconds, 1e3 * r.seconds / double(r.steps),
              r.setup_seconds);
  if (runs.size() > 1) {
    std::vector<double> t;
    std::printf("runs       stepping s:");
    for (const PriceResult& x : runs) {
      std::printf(" %.6f", x.seconds);
      t.push_back(x.seconds);
    }
    std::sort(t.begin() + 1, t.end());  // the first run pays lazy module loading and first-touch
    std::printf("; median after the first %.6f s\n", t[1 + (t.size() - 1) / 2]);
  }

  if (write) {
    const adi::Grid g = price_grid(r, axes);
    const std::string path = adi::io::write_vtk(o.output + "/price", g, {{"price", r.values}}, 0.0);
    std::printf("output     %s (axes in asset prices%s)\n", path.c_str(), o.model == "heston" ? " and variance" : "");
  }
  long bad = 0;
  for (adi::index_t k = 0; k < r.values.nz(); ++k)
    for (adi::index_t j = 0; j < r.values.ny(); ++j)
      for (adi::index_t i = 0; i < r.values.nx(); ++i) bad += std::isfinite(r.values(i, j, k)) ? 0 : 1;
  if (bad > 0)
    throw example::RunFailure("the price grid has " + std::to_string(bad) + " NaN/Inf values " + after);
  if (o.max_error > 0 && example::exceeds(rel, o.max_error))
    throw example::RunFailure("error " + example::num(rel) + " exceeds --max-error " +
                              example::num(o.max_error));
  return example::exit_ok;
}

// Combinations the options cannot express, refused before any work (exit 2).
void validate(const Options& o, const CLI::App& app) {
  const auto given = [&](const char* name) { return app.count(name) > 0; };
  const auto only_for = [&](std::initializer_list<const char*> names, bool ok, const char* what) {
    for (const char* n : names) example::require(ok || !given(n), std::string(n) + " applies to " + what + " only");
  };
  const bool heston = o.model == "heston", american = o.exercise == "american";
  only_for({"--v0", "--kappa", "--theta-v", "--xi", "--rho", "--variance-nodes"}, heston, "--model heston");
  only_for({"--assets", "--vol", "--corr", "--weights"}, !heston, "--model bs");
  example::require(!heston || (o.spot.size() == 1 && o.div.size() == 1),
                   "--model heston has one asset: give one --spot and one --div");
  example::require(!heston || o.payoff.empty() || o.payoff == "vanilla", "--model heston prices --payoff vanilla only");
  only_for({"--scheme", "--theta"}, !american || heston || o.assets > 1,
           "--exercise european, --model heston or --assets 2, 3 (one-asset american uses Crank-Nicolson)");
  example::require(o.assets > 1 || !given("--corr"), "--corr needs --assets 2 or 3");
  example::require(o.weights.empty() || o.payoff.empty() || o.payoff == "basket",
                   "--weights applies to --payoff basket");
  example::require(!(o.scheme == "peaceman-rachford" && given("--theta")),
                   "--theta does not apply to --scheme peaceman-rachford");
  // Values, payoff, stage fields and coefficients: a few tens of doubles per node.
  const double n = double(o.nodes > 0 ? o.nodes : heston ? 101 : o.assets == 1 ? 201 : o.assets == 2 ? 101 : 49);
  const double nodes = heston ? n * double(o.variance_nodes > 0 ? o.variance_nodes : long(n) / 2 + 1)
                              : std::pow(n, double(o.assets));
  example::require_memory(30.0 * 8 * nodes, "a grid of " + example::num(nodes) + " nodes (--nodes)");
  // The far field sits --width standard deviations of ln S_T out: keep e^that a number.
  const double sd = heston ? std::sqrt(std::max(o.v0, o.theta_v) * o.maturity)
                           : *std::max_element(o.vol.begin(), o.vol.end()) * std::sqrt(o.maturity);
  example::require(o.width * sd <= 40,
                   "--width " + example::num(o.width) + " standard deviations of ln S_T (" + example::num(sd) +
                       ") puts the far field at e^" + example::num(o.width * sd) + " times the spot: lower --width, " +
                       (heston ? "--v0, --theta-v" : "--vol") + " or --maturity (at most e^40)");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  using example::finite;
  using example::positive;
  CLI::App app{"black_scholes: option prices and greeks by ADI (Black-Scholes 1-3 assets, Heston, American)"};
  app.add_option("--model", o.model, "Model")->check(CLI::IsMember({"bs", "heston"}))->capture_default_str();
  app.add_option("--payoff", o.payoff, "Payoff (default: vanilla for 1 asset, basket for more)")
      ->check(CLI::IsMember({"vanilla", "basket", "geometric", "spread", "exchange", "best-of", "worst-of"}));
  app.add_option("--type", o.type, "Call or put")->check(CLI::IsMember({"call", "put"}))->capture_default_str();
  app.add_option("--exercise", o.exercise, "Exercise (american: 1 asset on the CPU; 2-3 assets and Heston on the CPU or GPU)")
      ->check(CLI::IsMember({"european", "american"}))
      ->capture_default_str();
  app.add_option("--assets", o.assets, "Number of assets (Black-Scholes)")
      ->check(example::integer(1, 3))
      ->capture_default_str();
  app.add_option("--spot", o.spot, "Spot price(s), one or one per asset")
      ->delimiter(',')
      ->check(example::range(0, 1e12, true))
      ->capture_default_str();
  app.add_option("--vol", o.vol, "Volatility(ies)")
      ->delimiter(',')
      ->check(example::range(0, 10))
      ->capture_default_str();
  app.add_option("--div", o.div, "Dividend yield(s)")
      ->delimiter(',')
      ->check(example::range(-1, 1))
      ->capture_default_str();
  app.add_option("--corr", o.corr, "Correlations rho12[,rho13,rho23] (one value: all pairs)")
      ->delimiter(',')
      ->check(example::range(-1, 1));
  app.add_option("--weights", o.weights, "Basket weights (default 1/n each)")->delimiter(',')->check(finite());
  app.add_option("--rate", o.rate, "Risk-free rate")->check(example::range(-1, 1))->capture_default_str();
  app.add_option("--strike", o.strike, "Strike")->check(example::range(0, 1e12, true))->capture_default_str();
  app.add_option("--maturity", o.maturity, "Maturity in years")
      ->check(example::range(0, 100, true))
      ->capture_default_str();
  app.add_option("--v0", o.v0, "Heston initial variance")->check(example::range(0, 10))->capture_default_str();
  app.add_option("--kappa", o.kappa, "Heston mean reversion")->check(example::range(0, 100))->capture_default_str();
  app.add_option("--theta-v", o.theta_v, "Heston long-run variance")
      ->check(example::range(0, 10))
      ->capture_default_str();
  app.add_option("--xi", o.xi, "Heston volatility of variance")->check(example::range(0, 10))->capture_default_str();
  app.add_option("--rho", o.rho, "Heston correlation")->check(example::range(-1, 1))->capture_default_str();
  app.add_option("--nodes", o.nodes, "Nodes per asset axis (default 201/101/49 for 1/2/3 assets, Heston 101)")
      ->check(example::integer(5, 1L << 24));
  app.add_option("--variance-nodes", o.variance_nodes, "Heston nodes along v (default nodes/2+1)")
      ->check(example::integer(5, 1L << 24));
  app.add_option("--steps", o.steps, "Time steps (default 100 for 1 asset, else 50)")
      ->check(example::integer(1, 1L << 30));
  app.add_option("--space", o.space, "Grid coordinates: price S or log S")
      ->check(CLI::IsMember({"price", "log"}))
      ->capture_default_str();
  app.add_option("--far-field", o.far_field, "Far-field condition (default: linear in price space, dirichlet in log)")
      ->check(CLI::IsMember({"linear", "dirichlet"}));
  app.add_option("--width", o.width, "Far field at this many standard deviations of ln S_T")
      ->check(example::range(0, 40, true))
      ->capture_default_str();
  app.add_option("--intensity", o.intensity, "Grid concentration around the strike (0: default)")
      ->check(example::range(0, 1e6));
  app.add_flag("--no-smoothing", o.no_smoothing, "Do not cell-average the payoff at its kink");
  app.add_option("--scheme", o.scheme, "ADI scheme")
      ->check(CLI::IsMember(
          {"douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer", "peaceman-rachford"}))
      ->capture_default_str();
  app.add_option("--theta", o.theta, "Scheme theta in (0, 1] (default: the scheme's)")
      ->check(example::range(0, 1, true));
  app.add_option("--damping", o.damping, "Rannacher damping steps (each two implicit Euler halves)")
      ->check(example::integer(0, 1000))
      ->capture_default_str();
  app.add_option("--step-grading", o.step_grading, "Time levels T (k/N)^p: 1 uniform, 2 quadratic (finer near expiry)")
      ->check(example::range(1, 4))
      ->capture_default_str();
  app.add_option("--digits", o.digits, "Decimals of the printed price")->check(example::integer(1, 17))->capture_default_str();
  app.add_option("--backend", o.backend, "Where to run")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads (0: all)")->check(example::integer(0, 4096));
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  auto* oout =
      app.add_option("--output", o.output, "Output directory (VTK price surface/volume)")->capture_default_str();
  app.add_flag("--no-output", o.no_output, "Write no files")->excludes(oout);
  app.add_option("--repeat", o.repeat, "Price this many times and print each run's stepping time")
      ->check(example::integer(1, 1000));
  app.add_option("--max-error", o.max_error,
                 "Exit 1 when the error against the closed form exceeds this (relative; absolute where the closed "
                 "form is ~0)")
      ->check(positive());
  if (const auto rc = example::parse(app, "black_scholes", argc, argv)) return *rc;
  return example::guarded("black_scholes", [&] {
    validate(o, app);
    return o.precision == "float" ? run<float>(o) : run<double>(o);
  });
}
