// The one-asset engine (one_asset.hpp): a theta-method on one price-space axis with
// time-dependent coefficients, jump conditions, barriers as Dirichlet end nodes, and
// exercise inside the sweep.
#include "adi/finance/one_asset.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "adi/error.hpp"
#include "adi/finance/extrapolation_detail.hpp"
#include "adi/finance/pricer_detail.hpp"
#include "solvers/common/price_axis.hpp"

namespace adi::finance {

namespace {

using adi::detail::require;
using Clock = std::chrono::steady_clock;
std::string num(double v) { return format_number(v); }
constexpr double kInf = std::numeric_limits<double>::infinity();

// Cell average of the payoff over [a, b] around a kink: exact for vanilla and digital
// (Pooley, Vetzal & Forsyth), midpoint sampling with 1024 points for a user payoff.
double cell_average(const OneAssetOption& o, double a, double b) {
  const double K = o.strike, w = b - a;
  const bool call = o.type == OptionType::call;
  switch (o.payoff) {
    case PayoffKind::vanilla:
      if (K <= a || K >= b) return 0.5 * (o.value(a) + o.value(b));  // linear there
      return call ? 0.5 * (b - K) * (b - K) / w : 0.5 * (K - a) * (K - a) / w;
    case PayoffKind::digital:
      if (K <= a || K >= b) return o.value(0.5 * (a + b));
      return o.cash * (call ? (b - K) / w : (K - a) / w);
    case PayoffKind::custom: {
      constexpr int m = 1024;
      double s = 0.0;
      for (int k = 0; k < m; ++k) s += o.value(a + w * (k + 0.5) / m);
      return s / m;
    }
  }
  return 0.0;
}

// Where the payoff kinks or jumps (cell averaging; the grid's cluster centre is the first).
std::vector<double> payoff_kinks(const OneAssetOption& o) {
  if (o.payoff == PayoffKind::custom) return o.kinks;
  return {o.strike};
}

// A representative volatility for the domain width: sigma at the spot, averaged in t.
double typical_sd(const OneAssetModel& m, double T) {
  double v = 0.0;
  for (int k = 0; k < 5; ++k) v += m.sigma(m.spot, T * k / 4.0);
  return std::max(v / 5.0, 0.05) * std::sqrt(T);
}

struct Domain {
  double lo = 0.0, hi = 0.0;
  bool dir_lo = false, dir_hi = false;  // barrier end nodes: V = rebate there
};

// Moves the nodes so that the payoff's jump at k lies on a cell face (the midpoint of the
// two nodes around it) by a displacement of at most half a cell: 1 at those two nodes,
// falling quadratically to 0 at the spot (which stays exact) and at the end nodes.
std::vector<double> jump_on_face(std::vector<double> x, double spot, double k) {
  const std::size_t n = x.size();
  if (!(k > x.front() && k < x.back()) || k == spot) return x;
  const std::size_t j = std::upper_bound(x.begin(), x.end(), k) - x.begin() - 1;  // x[j] <= k < x[j+1]
  const std::size_t ia = std::find(x.begin(), x.end(), spot) - x.begin();
  if (ia >= n || j + 2 >= n || j == 0) return x;
  const std::size_t j0 = j, j1 = j + 1;
  const double delta = k - 0.5 * (x[j] + x[j + 1]);
  if (j0 == ia || j1 == ia) return x;  // the spot next to the jump: leave the grid
  std::vector<double> y = x;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    double w = 0.0;
    if (i >= j0 && i <= j1) w = 1.0;
    else if (ia < j0 && i > ia && i < j0) w = double(i - ia) / double(j0 - ia);
    else if (ia > j1 && i > j1 && i < ia) w = double(ia - i) / double(ia - j1);
    else if (i > j1 && i > ia) w = double(n - 1 - i) / double(n - 1 - j1);
    else if (i < j0 && i < ia) w = double(i) / double(j0);
    y[i] = x[i] + delta * w * w;
  }
  return y;
}

AxisGrid build_axis(const OneAssetModel& m, const OneAssetOption& o, const Method& me, const Domain& d) {
  const index_t n = me.nodes > 0 ? me.nodes : 201;
  const auto kinks = payoff_kinks(o);
  double center = !kinks.empty() && kinks[0] > 0 ? kinks[0] : m.spot;
  const double sd = typical_sd(m, o.maturity);
  // One asset: asset_axis's default (common::price_axis_cluster: 3 sd wide near the money,
  // down to 1 for far strikes and strong drifts; the drift (r - q) T averaged as typical_sd
  // averages sigma); a digital's jump: 1 sd (errors 2-5x smaller than with 3 from 100 nodes on).
  double drift = 0.0;
  for (int k = 0; k < 5; ++k) drift += m.r(o.maturity * k / 4.0) - m.q(o.maturity * k / 4.0);
  const double dflt = o.payoff == PayoffKind::digital
                          ? 1.0
                          : common::price_axis_cluster(m.spot, center, sd, drift / 5.0 * o.maturity);
  AxisGrid ax;
  if (sd >= common::kGeometricFromSd) {
    // A wide spread of ln S_T: the nodes spaced evenly in ln S, as asset_axis's, from S = 0 or
    // from a lower barrier (solvers/common/price_axis.hpp; the sinh map in S was 2-32% off at sd
    // 0.85-3.3, a down-and-out call at sigma 0.5, T = 10 2.6e-3 against 2.6e-5 now).
    ax = detail::axis_of(common::price_axis(m.spot, center, sd, me.width, d.hi, n, me.cluster > 0 ? me.cluster : dflt,
                                            me.intensity, 0, d.lo));
  } else {
    const double cluster = (me.cluster > 0 ? me.cluster : dflt) * center * sd;
    const double intensity = me.intensity > 0 ? me.intensity : (d.hi - d.lo) / std::min(cluster, d.hi - d.lo);
    ax = concentrated_axis(n, d.lo, d.hi, center, intensity, m.spot);
  }
  // A digital's jump on a cell face, not cut by a cell at a place that changes with the
  // grid: the errors then decrease regularly at order 2 (K 105, S 100, 1 sd: 140 .. 800
  // nodes -3.5e-5 .. -2.1e-6; at the sinh map's own nodes they changed sign irregularly,
  // 3.7e-4 at 140, -2.2e-5 at 400, 1.2e-5 at 560).
  if (o.payoff == PayoffKind::digital && !d.dir_hi) ax = AxisGrid::from_nodes(jump_on_face(ax.nodes(), m.spot, o.strike));
  if (!d.dir_hi) return ax;
  // concentrated_axis keeps lo and the spot exact and lets the top node move by under a
  // cell; an upper barrier must be a node. Stretch the nodes above the spot by a smooth
  // quadratic ramp (C1 where it starts, a relative spacing change of O(1/n)) so that the
  // last node lands on the barrier (with the top node up to a cell off the barrier the
  // up-and-out errors were first order, with sign changes).
  std::vector<double> x = ax.nodes();
  const index_t ia = std::find(x.begin(), x.end(), m.spot) - x.begin();
  const double delta = d.hi - x[n - 1];
  const index_t i0 = std::max<index_t>(ia, n - 1 - std::max<index_t>(n / 4, 2));
  for (index_t i = i0 + 1; i < n; ++i) {
    const double w = double(i - i0) / double(n - 1 - i0);
    x[i] += delta * w * w;
  }
  x[n - 1] = d.hi;
  return AxisGrid::from_nodes(std::move(x));
}

// The full grid of Richardson extrapolation from its half grid: every half-grid node kept
// (the spot, barriers and ends too), one node between each two by cubic interpolation in
// the node index (the midpoint of a smooth map to O(h^4); the end cells by the quadratic
// one), so that the half grid is nested in the full one and the spot a node of both.
AxisGrid refine_axis(const AxisGrid& half) {
  const std::vector<double>& x = half.nodes();
  const std::size_t m = x.size();
  std::vector<double> y(2 * m - 1);
  for (std::size_t i = 0; i < m; ++i) y[2 * i] = x[i];
  for (std::size_t i = 0; i + 1 < m; ++i) {
    double mid;
    if (m < 4) mid = 0.5 * (x[i] + x[i + 1]);
    else if (i == 0) mid = (3 * x[0] + 6 * x[1] - x[2]) / 8;
    else if (i + 2 == m) mid = (-x[m - 3] + 6 * x[m - 2] + 3 * x[m - 1]) / 8;
    else mid = (-x[i - 1] + 9 * x[i] + 9 * x[i + 1] - x[i + 2]) / 16;
    if (!(mid > x[i] && mid < x[i + 1])) mid = 0.5 * (x[i] + x[i + 1]);  // (a kink of the map)
    y[2 * i + 1] = mid;
  }
  return AxisGrid::from_nodes(std::move(y));
}

// The semi-discrete operator's rows at calendar time t (as american.cpp's build_rows, with
// sigma(S, t), r(t), q(t)); linear-extrapolation ghosts at free ends, identity rows at
// Dirichlet (barrier) ends.
void operator_rows(const OneAssetModel& m, const std::vector<double>& x, double t, const Domain& dom,
                   std::vector<double>& l, std::vector<double>& d, std::vector<double>& u) {
  const std::size_t n = x.size();
  const double r = m.r(t), b = r - m.q(t);
  for (std::size_t i = 0; i < n; ++i) {
    const double hm = i > 0 ? x[i] - x[i - 1] : x[1] - x[0];
    const double hp = i + 1 < n ? x[i + 1] - x[i] : x[n - 1] - x[n - 2];
    const double sg = m.sigma(x[i], t);
    const double D = 0.5 * sg * sg * x[i] * x[i], V = b * x[i];
    double lo, di, up;
    detail::three_point_row(hm, hp, D, V, r, i == 0, i == n - 1, lo, di, up);
    l[i] = lo;
    d[i] = di;
    u[i] = up;
  }
  if (dom.dir_lo) l[0] = d[0] = u[0] = 0.0;
  if (dom.dir_hi) l[n - 1] = d[n - 1] = u[n - 1] = 0.0;
}

// u at s by cubic Lagrange interpolation on the four nearest nodes (linear extrapolation
// beyond the top, the far field's own assumption; s below the first node: the first value).
double interpolate(const std::vector<double>& x, const std::vector<double>& u, double s) {
  const std::size_t n = x.size();
  if (s <= x[0]) return u[0];
  if (s >= x[n - 1]) return u[n - 1] + (u[n - 1] - u[n - 2]) / (x[n - 1] - x[n - 2]) * (s - x[n - 1]);
  const std::size_t k = std::upper_bound(x.begin(), x.end(), s) - x.begin();  // x[k-1] <= s < x[k]
  const std::size_t i0 = std::clamp<std::size_t>(k >= 2 ? k - 2 : 0, 0, n >= 4 ? n - 4 : 0);
  const std::size_t cnt = std::min<std::size_t>(4, n);
  double v = 0.0;
  for (std::size_t a = i0; a < i0 + cnt; ++a) {
    double w = 1.0;
    for (std::size_t b = i0; b < i0 + cnt; ++b)
      if (b != a) w *= (s - x[b]) / (x[a] - x[b]);
    v += w * u[a];
  }
  return v;
}

// u <- max(u, g) at an exercise date, cell-averaged where u - g changes sign inside a
// node's control volume [x_{i-1/2}, x_{i+1/2}] (d = u - g piecewise linear between nodes):
// the kink of max(u, g) then lies between nodes as a smooth cell average, not a point value
// (as the payoff's cell average at maturity; Pooley, Vetzal & Forsyth).
void project_averaged(const std::vector<double>& x, const std::vector<double>& g, std::vector<double>& u) {
  const std::size_t n = x.size();
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = u[i] - g[i];  // +inf at barrier ends (g = -inf)
  // integral of max(p, 0) over [0, w] for p linear from p0 to p1
  auto pos = [](double p0, double p1, double w) {
    if (p0 >= 0 && p1 >= 0) return 0.5 * (p0 + p1) * w;
    if (p0 <= 0 && p1 <= 0) return 0.0;
    const double z = w * std::max(p0, p1) / std::abs(p1 - p0);  // length where positive
    return 0.5 * std::max(p0, p1) * z;
  };
  std::vector<double> v(u);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = std::max(u[i], g[i]);
    if (i == 0 || i + 1 == n || !std::isfinite(d[i - 1] + d[i] + d[i + 1])) continue;
    const double dm = 0.5 * (d[i - 1] + d[i]), dp = 0.5 * (d[i] + d[i + 1]);
    if ((dm < 0) == (d[i] < 0) && (dp < 0) == (d[i] < 0)) continue;  // no crossing in the cell
    const double hm = 0.5 * (x[i] - x[i - 1]), hp = 0.5 * (x[i + 1] - x[i]);
    const double a = pos(dm, d[i], hm) + pos(d[i], dp, hp);
    v[i] = g[i] + a / (hm + hp);
  }
  u.swap(v);
}

// A time level the stepping must stop at, and what happens there.
struct Event {
  double tau = 0.0;
  const Dividend* dividend = nullptr;
  bool exercise = false;
};

struct Run {
  std::vector<double> u;
  std::array<double, 3> spot_values{}, taus{};  // V at the spot at the last three levels
  long steps = 0;
};

// Steps `payoff` from tau = 0 to T on axis x. Dirichlet ends hold `boundary`.
Run solve(const OneAssetModel& m, const OneAssetOption& o, const Method& me, const std::vector<double>& x,
          index_t spot, const Domain& dom, std::vector<double> u, double boundary, bool early) {
  const std::size_t n = x.size();
  const double T = o.maturity;
  const long N = me.steps > 0 ? me.steps : 100;
  // Time levels: N uniform steps plus every event, merged.
  std::vector<Event> events;
  for (const Dividend& dv : m.dividends)
    if (dv.time > 0 && dv.time < T) events.push_back({T - dv.time, &dv, false});
  if (o.exercise == Exercise::bermudan)
    for (double te : o.exercise_dates)
      if (te > 0 && te < T) events.push_back({T - te, nullptr, true});
  std::vector<double> levels;
  // Graded levels restart at each event: a dividend or an exercise date leaves a kink, as
  // the payoff does at tau = 0 (Bermudan put: 10-40% smaller errors; the American put with
  // cash dividends 10-30% on coarse grids).
  if (me.step_grading != 1.0 && !events.empty()) {
    std::vector<double> cuts = {0.0};
    for (const Event& e : events) cuts.push_back(e.tau);
    cuts.push_back(T);
    std::sort(cuts.begin(), cuts.end());
    for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
      const double a = cuts[s], len = cuts[s + 1] - a;
      if (len <= 1e-13 * T) continue;
      const long Ns = std::max(2L, std::lround(double(N) * len / T));
      for (long k = 0; k <= Ns; ++k) levels.push_back(a + detail::time_level(len, k, Ns, me.step_grading));
    }
  } else {
    for (long k = 0; k <= N; ++k) levels.push_back(detail::time_level(T, k, N, me.step_grading));
  }
  for (const Event& e : events) levels.push_back(e.tau);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end(),
                           [T](double a, double b) { return std::abs(a - b) <= 1e-13 * T; }),
               levels.end());
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.tau < b.tau; });

  std::vector<double> obstacle(n);
  for (std::size_t i = 0; i < n; ++i) obstacle[i] = o.value(x[i]);
  if (dom.dir_lo) obstacle[0] = -kInf;
  if (dom.dir_hi) obstacle[n - 1] = -kInf;
  const bool low = o.payoff == PayoffKind::custom ? o.value(x.front()) >= o.value(x.back())
                                                   : o.type == OptionType::put;
  const bool constant = !m.rate_curve && !m.yield_curve && !m.local_volatility;
  const double theta = me.scheme.kind == SchemeKind::douglas ? me.scheme.theta : 0.5;

  std::vector<double> al(n), ad(n), au(n), lo(n), b(n), up(n), f(n);
  detail::Sweep<double> sweep;
  double s_factored = 0.0;
  bool rows_ready = false;
  // One theta step from tau0 to tau1, dt long (detail::step_length: the nominal T / N on every
  // uniform step, so the sweep is factored again only where the length really changes).
  auto step = [&](double tau0, double tau1, double dt, double th) {
    if (!constant || !rows_ready) {
      operator_rows(m, x, T - 0.5 * (tau0 + tau1), dom, al, ad, au);
      rows_ready = true;
      s_factored = 0.0;
    }
    const double e = (1.0 - th) * dt, s = th * dt;
    if (s != s_factored) {
      for (std::size_t i = 0; i < n; ++i) {
        lo[i] = -s * al[i];
        b[i] = 1.0 - s * ad[i];
        up[i] = -s * au[i];
      }
      sweep.factor(lo, b, up, low);
      s_factored = s;
    }
    f[0] = u[0] + e * (ad[0] * u[0] + au[0] * u[1]);
    for (std::size_t i = 1; i + 1 < n; ++i) f[i] = u[i] + e * (al[i] * u[i - 1] + ad[i] * u[i] + au[i] * u[i + 1]);
    f[n - 1] = u[n - 1] + e * (al[n - 1] * u[n - 2] + ad[n - 1] * u[n - 1]);
    if (dom.dir_lo) f[0] = boundary;
    if (dom.dir_hi) f[n - 1] = boundary;
    sweep.solve(f, obstacle, early);
    u.swap(f);
  };

  Run run;
  run.spot_values = {u[spot], u[spot], u[spot]};
  int damp_left = me.scheme.damping_steps;
  std::size_t next_event = 0;
  const double nominal = detail::nominal_step(T, N, me.step_grading);
  for (std::size_t k = 0; k + 1 < levels.size(); ++k) {
    const double ta = levels[k], tb = levels[k + 1];
    const detail::TimeStep st{ta, tb, detail::step_length(ta, tb, nominal)};
    if (damp_left > 0) {
      step(ta, st.middle(), st.half(), 1.0);
      step(st.middle(), tb, st.half(), 1.0);
      --damp_left;
    } else {
      step(ta, tb, st.dt, theta);
    }
    ++run.steps;
    // Events at tb (backwards in calendar time: the value just before the ex-date).
    while (next_event < events.size() && std::abs(events[next_event].tau - tb) <= 1e-13 * T) {
      const Event& e = events[next_event++];
      if (e.dividend) {
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i) {
          if ((dom.dir_lo && i == 0) || (dom.dir_hi && i == n - 1)) {
            v[i] = u[i];
            continue;
          }
          const double s = e.dividend->proportional ? x[i] * (1.0 - e.dividend->amount)
                                                    : std::max(x[i] - e.dividend->amount, 0.0);
          // Across a lower barrier the dividend knocks the option out.
          v[i] = dom.dir_lo && s <= x[0] ? boundary : interpolate(x, u, s);
        }
        u.swap(v);
        if (early)
          for (std::size_t i = 0; i < n; ++i) u[i] = std::max(u[i], obstacle[i]);
        damp_left = me.scheme.damping_steps;  // the jump leaves a kink off the grid: damp again
      }
      if (e.exercise) {
        // The exercise value cell-averaged where it cuts a cell (with point values the
        // kink between nodes made the Bermudan errors irregular, stalling at 4e-5 from
        // 400 nodes on; averaged: 8e-6 at 400, 1e-7 at 800). With graded levels (which
        // restart here) damping restarts too: its steps are then short (coarse Bermudan
        // errors 2-4x smaller); with uniform steps it was tried and doubled the errors.
        if (me.smoothing) project_averaged(x, obstacle, u);
        else
          for (std::size_t i = 0; i < n; ++i) u[i] = std::max(u[i], obstacle[i]);
        if (me.step_grading != 1.0) damp_left = me.scheme.damping_steps;
      }
    }
    run.spot_values = {run.spot_values[1], run.spot_values[2], u[spot]};
    run.taus = {run.taus[1], run.taus[2], tb};
  }
  if (early) {
    u[0] = std::max(u[0], obstacle[0]);
    u[n - 1] = std::max(u[n - 1], obstacle[n - 1]);
  }
  run.spot_values[2] = u[spot];
  run.u = std::move(u);
  return run;
}

// theta = dV/dt = -dV/dtau at tau = T: the three-point backward difference on the last
// (possibly unequal) levels.
double theta_from(const Run& r) {
  const double h1 = r.taus[1] - r.taus[0], h2 = r.taus[2] - r.taus[1];
  if (!(h1 > 0 && h2 > 0)) return std::nan("");
  const double d = r.spot_values[0] * h2 / (h1 * (h1 + h2)) - r.spot_values[1] * (h1 + h2) / (h1 * h2) +
                   r.spot_values[2] * (2 * h2 + h1) / (h2 * (h1 + h2));
  return -d;
}

Domain domain_of(const OneAssetModel& m, const OneAssetOption& o, const Method& me, bool with_barrier) {
  const auto kinks = payoff_kinks(o);
  const double center = !kinks.empty() && kinks[0] > 0 ? kinks[0] : m.spot;
  Domain d;
  const double sd = typical_sd(m, o.maturity);
  detail::require_finite_far_end(sd / std::sqrt(o.maturity), o.maturity, sd, std::max(m.spot, center), me.width, true);
  d.hi = std::max(m.spot, center) * std::exp(me.width * sd);
  if (with_barrier && o.barrier.has_lower()) {
    d.lo = o.barrier.lower;
    d.dir_lo = true;
  }
  if (with_barrier && o.barrier.has_upper()) {
    d.hi = o.barrier.upper;
    d.dir_hi = true;
  }
  return d;
}

// The payoff on the axis, cell-averaged where a kink cuts a cell (end nodes: point values).
std::vector<double> terminal_values(const OneAssetOption& o, const std::vector<double>& x, bool smoothing,
                                    double shift) {
  const std::size_t n = x.size();
  const auto kinks = payoff_kinks(o);
  std::vector<double> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = o.value(x[i]) - shift;
    if (!smoothing || i == 0 || i + 1 == n) continue;
    const double a = 0.5 * (x[i - 1] + x[i]), b = 0.5 * (x[i] + x[i + 1]);
    for (double k : kinks)
      if (k > a && k < b) {
        g[i] = cell_average(o, a, b) - shift;
        break;
      }
  }
  return g;
}

void check_method(const Method& me) {
  me.validate();
  require(me.space == Space::price, "price(OneAssetModel): the one-asset engine works in price space; use "
                                    "Space::price");
  require(me.far_field == FarField::linear, "price(OneAssetModel): the far field is linear extrapolation "
                                            "(V_SS = 0); use FarField::linear");
  if (!me.executor.is_host())
    throw Unsupported("price(OneAssetModel): the one-asset engine runs on the host; use Executor::host() (a "
                      "chain of contracts runs on the GPU: price_chain)");
}

// One run on a given axis (grid sharing for the bumped greeks).
PriceResult price_on(const OneAssetModel& m, const OneAssetOption& o, const Method& me, const AxisGrid* ko_axis,
                     const AxisGrid* full_axis, AxisGrid* ko_out, AxisGrid* full_out) {
  const auto t_start = Clock::now();
  const Barrier& B = o.barrier;
  const bool barrier = B.kind != BarrierKind::none;
  const bool in = B.knock_in();
  const bool early = o.exercise == Exercise::american;
  PriceResult res;
  res.space = Space::price;
  auto finish = [&](const AxisGrid& ax, const Run& run, index_t spot, double sign, bool first) {
    Field<double> v{Grid(ax)};
    for (index_t i = 0; i < ax.size(); ++i) v(i, 0, 0) = run.u[i];
    PriceResult part;
    detail::greeks_at_spot(v, Grid(ax), {spot, 0, 0}, 1, {false, false, false}, part);
    res.price += sign * part.price;
    res.delta[0] += sign * part.delta[0];
    res.gamma[0] += sign * part.gamma[0];
    res.theta = (first ? 0.0 : res.theta) + sign * theta_from(run);
    res.steps = run.steps;
    if (first) {
      res.grid = Grid(ax);
      res.values = std::move(v);
      res.spot_index = {spot, 0, 0};
    }
  };
  res.theta = 0.0;
  // Knock-out part (or the plain option): barrier ends hold the rebate (out) or 0 (in).
  const Domain dko = domain_of(m, o, me, barrier);
  const AxisGrid ax = ko_axis ? *ko_axis : build_axis(m, o, me, dko);
  if (ko_out) *ko_out = ax;
  const auto& x = ax.nodes();
  const index_t spot = std::find(x.begin(), x.end(), m.spot) - x.begin();
  require(spot > 0 && spot < ax.size() - 1, "price(OneAssetModel): the spot " + num(m.spot) +
                                                " is not an interior node of the given axis");
  res.setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  const auto t0 = Clock::now();
  if (!in) {
    const Run run = solve(m, o, me, x, spot, dko, terminal_values(o, x, me.smoothing, 0.0), B.rebate, early);
    finish(ax, run, spot, 1.0, true);
  } else {
    // Knock-in = vanilla - knock-out[payoff - rebate] (both European): the rebate is then
    // paid at maturity when the barrier was never touched.
    const Domain dfull = domain_of(m, o, me, false);
    const AxisGrid fax = full_axis ? *full_axis : build_axis(m, o, me, dfull);
    if (full_out) *full_out = fax;
    const auto& xf = fax.nodes();
    const index_t sf = std::find(xf.begin(), xf.end(), m.spot) - xf.begin();
    const Run full = solve(m, o, me, xf, sf, dfull, terminal_values(o, xf, me.smoothing, 0.0), 0.0, false);
    finish(fax, full, sf, 1.0, true);
    const Run ko = solve(m, o, me, x, spot, dko, terminal_values(o, x, me.smoothing, B.rebate), 0.0, false);
    finish(ax, ko, spot, -1.0, false);
    // values on the vanilla grid: minus the knock-out part where it lives (linear interpolation).
    for (index_t i = 0; i < fax.size(); ++i)
      if (xf[i] > x.front() && xf[i] < x.back()) res.values(i, 0, 0) -= interpolate(x, ko.u, xf[i]);
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  res.timings.steps = res.steps;
  return res;
}

}  // namespace

bool Barrier::has_lower() const {
  return kind == BarrierKind::down_out || kind == BarrierKind::down_in || kind == BarrierKind::double_out ||
         kind == BarrierKind::double_in;
}
bool Barrier::has_upper() const {
  return kind == BarrierKind::up_out || kind == BarrierKind::up_in || kind == BarrierKind::double_out ||
         kind == BarrierKind::double_in;
}
bool Barrier::knock_in() const {
  return kind == BarrierKind::down_in || kind == BarrierKind::up_in || kind == BarrierKind::double_in;
}

void OneAssetModel::validate() const {
  require(std::isfinite(spot) && spot > 0, "OneAssetModel: spot = " + num(spot) + " must be > 0");
  require(std::isfinite(rate), "OneAssetModel: rate = " + num(rate) + " must be finite");
  require(std::isfinite(dividend_yield), "OneAssetModel: dividend_yield = " + num(dividend_yield) + " must be finite");
  require(std::isfinite(volatility) && volatility >= 0,
          "OneAssetModel: volatility = " + num(volatility) + " must be finite and >= 0");
  for (std::size_t k = 0; k < dividends.size(); ++k) {
    const Dividend& d = dividends[k];
    const std::string who = "OneAssetModel: dividends[" + ::adi::detail::number(k) + "] ";
    require(std::isfinite(d.time) && d.time > 0, who + "time = " + num(d.time) + " must be > 0 (years from today)");
    if (d.proportional)
      require(std::isfinite(d.amount) && d.amount >= 0 && d.amount < 1,
              who + "fraction = " + num(d.amount) + " must lie in [0, 1)");
    else
      require(std::isfinite(d.amount) && d.amount >= 0, who + "cash amount = " + num(d.amount) + " must be >= 0");
  }
}

LocalVolatility local_volatility_grid(std::vector<double> spots, std::vector<double> times,
                                      std::vector<double> sigma) {
  require(!spots.empty() && !times.empty(), "local_volatility_grid: spots and times must not be empty");
  require(sigma.size() == spots.size() * times.size(),
          "local_volatility_grid: sigma has " + ::adi::detail::number(sigma.size()) + " values; give spots.size() * "
          "times.size() = " + ::adi::detail::number(spots.size() * times.size()) + " (row j: time j)");
  for (std::size_t i = 1; i < spots.size(); ++i)
    require(spots[i] > spots[i - 1], "local_volatility_grid: spots must increase strictly, spots[" +
                                         ::adi::detail::number(i) + "] = " + num(spots[i]) + " <= " + num(spots[i - 1]));
  for (std::size_t j = 1; j < times.size(); ++j)
    require(times[j] > times[j - 1], "local_volatility_grid: times must increase strictly, times[" +
                                         ::adi::detail::number(j) + "] = " + num(times[j]) + " <= " + num(times[j - 1]));
  for (std::size_t k = 0; k < sigma.size(); ++k)
    require(std::isfinite(sigma[k]) && sigma[k] >= 0,
            "local_volatility_grid: sigma[" + ::adi::detail::number(k) + "] = " + num(sigma[k]) + " must be finite and >= 0");
  return [S = std::move(spots), t = std::move(times), v = std::move(sigma)](double s, double tt) {
    auto locate = [](const std::vector<double>& a, double z, std::size_t& i, double& w) {
      if (a.size() == 1 || z <= a.front()) {
        i = 0;
        w = 0.0;
        return;
      }
      if (z >= a.back()) {
        i = a.size() - 2;
        w = 1.0;
        return;
      }
      i = std::upper_bound(a.begin(), a.end(), z) - a.begin() - 1;
      w = (z - a[i]) / (a[i + 1] - a[i]);
    };
    std::size_t i, j;
    double wi, wj;
    locate(S, s, i, wi);
    locate(t, tt, j, wj);
    const std::size_t ns = S.size();
    auto at = [&](std::size_t jj, std::size_t ii) { return v[jj * ns + std::min(ii, ns - 1)]; };
    const std::size_t j1 = std::min(j + 1, t.size() - 1), i1 = i + 1;
    const double a = (1 - wi) * at(j, i) + wi * at(j, i1), b = (1 - wi) * at(j1, i) + wi * at(j1, i1);
    return (1 - wj) * a + wj * b;
  };
}

OneAssetOption OneAssetOption::vanilla(OptionType type, double strike, double maturity, Exercise exercise) {
  OneAssetOption o;
  o.type = type;
  o.strike = strike;
  o.maturity = maturity;
  o.exercise = exercise;
  return o;
}
OneAssetOption OneAssetOption::digital(OptionType type, double strike, double maturity, double cash) {
  OneAssetOption o = vanilla(type, strike, maturity);
  o.payoff = PayoffKind::digital;
  o.cash = cash;
  return o;
}
OneAssetOption OneAssetOption::bermudan(OptionType type, double strike, double maturity, std::vector<double> dates) {
  OneAssetOption o = vanilla(type, strike, maturity, Exercise::bermudan);
  o.exercise_dates = std::move(dates);
  return o;
}
OneAssetOption OneAssetOption::user(std::function<double(double)> payoff, double maturity, std::vector<double> kinks) {
  OneAssetOption o;
  o.payoff = PayoffKind::custom;
  o.custom = std::move(payoff);
  o.maturity = maturity;
  o.kinks = std::move(kinks);
  return o;
}

double OneAssetOption::value(double S) const {
  const bool call = type == OptionType::call;
  switch (payoff) {
    case PayoffKind::vanilla: return std::max(call ? S - strike : strike - S, 0.0);
    case PayoffKind::digital: return (call ? S > strike : S < strike) ? cash : 0.0;
    case PayoffKind::custom: return custom(S);
  }
  return 0.0;
}

void OneAssetOption::validate() const {
  require(std::isfinite(maturity) && maturity > 0, "OneAssetOption: maturity = " + num(maturity) + " must be > 0");
  require(std::isfinite(strike) && strike >= 0, "OneAssetOption: strike = " + num(strike) + " must be >= 0");
  require(std::isfinite(cash), "OneAssetOption: cash = " + num(cash) + " must be finite");
  require(payoff != PayoffKind::custom || static_cast<bool>(custom),
          "OneAssetOption: a custom payoff needs the function `custom`");
  if (exercise == Exercise::bermudan) {
    for (std::size_t k = 0; k < exercise_dates.size(); ++k) {
      const double t = exercise_dates[k];
      require(std::isfinite(t) && t > 0 && t <= maturity, "OneAssetOption: exercise_dates[" + ::adi::detail::number(k) +
                                                              "] = " + num(t) + " must lie in (0, maturity = " +
                                                              num(maturity) + "]");
      require(k == 0 || t > exercise_dates[k - 1], "OneAssetOption: exercise_dates must increase strictly");
    }
  }
  const Barrier& b = barrier;
  if (b.kind == BarrierKind::none) return;
  require(std::isfinite(b.rebate) && b.rebate >= 0, "OneAssetOption: barrier rebate = " + num(b.rebate) +
                                                        " must be finite and >= 0");
  if (b.has_lower())
    require(std::isfinite(b.lower) && b.lower > 0, "OneAssetOption: lower barrier = " + num(b.lower) + " must be > 0");
  if (b.has_upper())
    require(std::isfinite(b.upper) && b.upper > 0, "OneAssetOption: upper barrier = " + num(b.upper) + " must be > 0");
  if (b.has_lower() && b.has_upper())
    require(b.lower < b.upper, "OneAssetOption: lower barrier = " + num(b.lower) + " must be below the upper = " +
                                   num(b.upper));
  require(!b.knock_in() || exercise == Exercise::european,
          "OneAssetOption: knock-in barriers are priced by parity (vanilla - knock-out) and need European exercise");
}

namespace {
void check_all(const OneAssetModel& m, const OneAssetOption& o, const Method& me) {
  m.validate();
  o.validate();
  check_method(me);
  const Barrier& B = o.barrier;
  require(!B.has_lower() || m.spot > B.lower, "price(OneAssetModel): spot = " + num(m.spot) +
                                                  " is on or below the lower barrier " + num(B.lower) +
                                                  ": the option is already knocked " + (B.knock_in() ? "in" : "out"));
  require(!B.has_upper() || m.spot < B.upper, "price(OneAssetModel): spot = " + num(m.spot) +
                                                  " is on or above the upper barrier " + num(B.upper) +
                                                  ": the option is already knocked " + (B.knock_in() ? "in" : "out"));
}
}  // namespace

namespace {

// price_on plus vega (a parallel shift of sigma(S, t)) and rho (of r(t)) on its grid.
PriceResult greeks_on(const OneAssetModel& m, const OneAssetOption& o, const Method& me, const AxisGrid* ko_axis,
                      const AxisGrid* full_axis) {
  AxisGrid ko, full;
  PriceResult res = price_on(m, o, me, ko_axis, full_axis, &ko, &full);
  const bool in = o.barrier.knock_in();
  constexpr double h = 1e-4;
  auto run = [&](const OneAssetModel& b) { return price_on(b, o, me, &ko, in ? &full : nullptr, nullptr, nullptr).price; };
  OneAssetModel up = m, dn = m;
  if (m.local_volatility) {
    up.local_volatility = [f = m.local_volatility](double s, double t) { return f(s, t) + h; };
    dn.local_volatility = [f = m.local_volatility](double s, double t) { return f(s, t) - h; };
  } else {
    up.volatility += h;
    dn.volatility -= h;
  }
  res.vega = (run(up) - run(dn)) / (2 * h);
  up = m;
  dn = m;
  if (m.rate_curve) {
    up.rate_curve = [f = m.rate_curve](double t) { return f(t) + h; };
    dn.rate_curve = [f = m.rate_curve](double t) { return f(t) - h; };
  } else {
    up.rate += h;
    dn.rate -= h;
  }
  res.rho = (run(up) - run(dn)) / (2 * h);
  return res;
}

// Richardson: the half grid ((n + 1) / 2 nodes from build_axis, N / 2 steps) and the full
// grid refined from it (2 ((n + 1) / 2) - 1 nodes, N steps); (4 V_h - V_2h) / 3 for the
// price and every greek; grid, values, spot_index and steps of the full run.
PriceResult extrapolated(const OneAssetModel& m, const OneAssetOption& o, const Method& me, bool greeks) {
  const index_t n = me.nodes > 0 ? me.nodes : 201;
  const long N = me.steps > 0 ? me.steps : 100;
  const Method half = detail::richardson_half(me, n, N);
  const auto t_start = Clock::now();
  const bool barrier = o.barrier.kind != BarrierKind::none, in = o.barrier.knock_in();
  const AxisGrid ko_h = build_axis(m, o, half, domain_of(m, o, half, barrier)), ko_f = refine_axis(ko_h);
  AxisGrid full_h, full_f;
  if (in) {
    full_h = build_axis(m, o, half, domain_of(m, o, half, false));
    full_f = refine_axis(full_h);
  }
  const double setup = std::chrono::duration<double>(Clock::now() - t_start).count();
  auto run = [&](const Method& mm, const AxisGrid& ko, const AxisGrid& full) {
    return greeks ? greeks_on(m, o, mm, &ko, in ? &full : nullptr)
                  : price_on(m, o, mm, &ko, in ? &full : nullptr, nullptr, nullptr);
  };
  PriceResult fine = run(me, ko_f, full_f);
  const PriceResult coarse = run(half, ko_h, full_h);
  fine.price = detail::richardson(fine.price, coarse.price);
  fine.delta[0] = detail::richardson(fine.delta[0], coarse.delta[0]);
  fine.gamma[0] = detail::richardson(fine.gamma[0], coarse.gamma[0]);
  fine.theta = detail::richardson(fine.theta, coarse.theta);
  if (greeks) {
    fine.vega = detail::richardson(fine.vega, coarse.vega);
    fine.rho = detail::richardson(fine.rho, coarse.rho);
  }
  fine.seconds += coarse.seconds;
  fine.setup_seconds += coarse.setup_seconds + setup;
  return fine;
}

void check_extrapolation(const Method& me, Extrapolation e) {
  detail::check_extrapolation(e, me.nodes > 0 ? me.nodes : 201, me.steps > 0 ? me.steps : 100, "price(OneAssetModel)");
}

}  // namespace

PriceResult price(const OneAssetModel& m, const OneAssetOption& o, const Method& me, Extrapolation extrapolation) {
  check_all(m, o, me);
  check_extrapolation(me, extrapolation);
  if (extrapolation == Extrapolation::richardson) return extrapolated(m, o, me, false);
  return price_on(m, o, me, nullptr, nullptr, nullptr, nullptr);
}

PriceResult price_with_greeks(const OneAssetModel& m, const OneAssetOption& o, const Method& me,
                              Extrapolation extrapolation) {
  check_all(m, o, me);
  check_extrapolation(me, extrapolation);
  if (extrapolation == Extrapolation::richardson) return extrapolated(m, o, me, true);
  return greeks_on(m, o, me, nullptr, nullptr);
}

}  // namespace adi::finance
