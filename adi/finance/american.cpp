// The one-asset theta-method with the Brennan-Schwartz exercise sweep (american.hpp).
#include "adi/finance/american.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "adi/error.hpp"
#include "adi/finance/pricer_detail.hpp"

namespace adi::finance {

namespace detail {

Rows build_rows(const AxisGrid& x, const Asset& a, double r, Space s, bool dir_lo, bool dir_hi) {
  const index_t n = x.size();
  Rows R;
  R.l.assign(n, 0.0);
  R.d.assign(n, 0.0);
  R.u.assign(n, 0.0);
  R.dir_lo = dir_lo;
  R.dir_hi = dir_hi;
  const double h2 = 0.5 * a.volatility * a.volatility, b = r - a.dividend;
  for (index_t i = 0; i < n; ++i) {
    const double hm = i > 0 ? x[i] - x[i - 1] : x[1] - x[0];
    const double hp = i < n - 1 ? x[i + 1] - x[i] : x[n - 1] - x[n - 2];
    const double D = s == Space::log ? h2 : h2 * x[i] * x[i];
    const double V = s == Space::log ? b - h2 : b * x[i];
    double lo, di, up;
    three_point_row(hm, hp, D, V, r, i == 0, i == n - 1, lo, di, up);
    R.l[i] = lo;
    R.d[i] = di;
    R.u[i] = up;
  }
  return R;
}


}  // namespace detail

template <class T>
PriceResult price_one_asset(const BlackScholesModel& m, const Contract& c, const Method& method,
                            bool early_exercise) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  m.validate();
  c.validate(m.size());
  method.validate();
  adi::detail::require(m.size() == 1 && c.payoff == Payoff::vanilla,
                       "price_one_asset: one-asset vanilla options only, got " + c.describe() + " on " +
                           ::adi::detail::number(m.size()) + " assets");
  if (!method.executor.is_host())
    throw Unsupported("price_one_asset: the early-exercise sweep runs on the host; use Executor::host()");
  const Asset& a = m.assets[0];
  const index_t n = method.nodes > 0 ? method.nodes : detail::default_nodes(1);
  PriceResult res;
  res.space = method.space;
  res.steps = method.steps > 0 ? method.steps : detail::default_steps(1);
  const detail::AssetAxis ax = detail::asset_axis(a, c.strike > 0 ? c.strike : a.spot, c.maturity, n, method, 1, m.rate);
  const AxisGrid& x = ax.axis;
  res.spot_index = {ax.spot, 0, 0};
  const Grid grid(x);
  const bool log = method.space == Space::log;
  const bool dir_lo = log, dir_hi = log || method.far_field == FarField::dirichlet;
  const detail::Rows A = detail::build_rows(x, a, m.rate, method.space, dir_lo, dir_hi);
  const auto g_far = detail::forward_intrinsic(m, c, method.space);

  std::vector<T> u(n), obstacle(n), al(n), ad(n), aup(n), lo(n), b(n), up(n), f(n);
  for (index_t i = 0; i < n; ++i) {
    al[i] = T(A.l[i]);
    ad[i] = T(A.d[i]);
    aup[i] = T(A.u[i]);
  }
  const Field<double> init = detail::payoff_on_grid(grid, 1, c, method.space, method.smoothing, method.executor.threads());
  for (index_t i = 0; i < n; ++i) {
    u[i] = T(init(i, 0, 0));
    const double S = detail::to_price(x[i], method.space);
    obstacle[i] = T(c.value(&S, 1));
  }
  const bool exercise_low = c.type == OptionType::put;
  const double theta = method.scheme.kind == SchemeKind::douglas ? method.scheme.theta : 0.5;
  res.setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  const auto t0 = Clock::now();

  detail::Sweep<T> sweep;
  T s_factored = T(0);
  // One theta step from tau0 to tau1, dt long (detail::time_step: the same every uniform step):
  // (I - th dt A) u1 = (I + (1 - th) dt A) u0.
  auto step = [&](double tau0, double tau1, double dt, double th) {
    if (dir_lo) u[0] = T(g_far(tau0, x[0], 0, 0));
    if (dir_hi) u[n - 1] = T(g_far(tau0, x[n - 1], 0, 0));
    const T e = T((1.0 - th) * dt), s = T(th * dt);
    if (s != s_factored) {  // the bands change with the step size only (damping, graded steps)
      for (index_t i = 0; i < n; ++i) {
        lo[i] = -s * al[i];
        b[i] = T(1) - s * ad[i];
        up[i] = -s * aup[i];
      }
      if (dir_lo) {
        lo[0] = up[0] = T(0);
        b[0] = T(1);
      }
      if (dir_hi) {
        lo[n - 1] = up[n - 1] = T(0);
        b[n - 1] = T(1);
      }
      sweep.factor(lo, b, up, exercise_low);
      s_factored = s;
    }
    f[0] = u[0] + e * (ad[0] * u[0] + aup[0] * u[1]);
    for (index_t i = 1; i < n - 1; ++i) f[i] = u[i] + e * (al[i] * u[i - 1] + ad[i] * u[i] + aup[i] * u[i + 1]);
    f[n - 1] = u[n - 1] + e * (al[n - 1] * u[n - 2] + ad[n - 1] * u[n - 1]);
    if (dir_lo) f[0] = T(g_far(tau1, x[0], 0, 0));
    if (dir_hi) f[n - 1] = T(g_far(tau1, x[n - 1], 0, 0));
    sweep.solve(f, obstacle, early_exercise);
    u.swap(f);
  };
  for (long k = 0; k < res.steps; ++k) {
    const detail::TimeStep st = detail::time_step(c.maturity, k, res.steps, method.step_grading);
    if (k < method.scheme.damping_steps) {
      step(st.ta, st.middle(), st.half(), 1.0);
      step(st.middle(), st.tb, st.half(), 1.0);
    } else {
      step(st.ta, st.tb, st.dt, theta);
    }
  }
  if (dir_lo) u[0] = T(g_far(c.maturity, x[0], 0, 0));
  if (dir_hi) u[n - 1] = T(g_far(c.maturity, x[n - 1], 0, 0));
  if (early_exercise) {
    u[0] = std::max(u[0], obstacle[0]);
    u[n - 1] = std::max(u[n - 1], obstacle[n - 1]);
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  res.timings.steps = res.steps;
  res.values = Field<double>(grid);
  for (index_t i = 0; i < n; ++i) res.values(i, 0, 0) = double(u[i]);
  res.grid = grid;
  detail::greeks_at_spot(res.values, grid, res.spot_index, 1, {log, false, false}, res);
  return res;
}

template PriceResult price_one_asset<float>(const BlackScholesModel&, const Contract&, const Method&, bool);
template PriceResult price_one_asset<double>(const BlackScholesModel&, const Contract&, const Method&, bool);

}  // namespace adi::finance
