// The one-asset theta-method with the Brennan-Schwartz exercise sweep (american.hpp).
#include "adi/finance/american.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "adi/error.hpp"
#include "adi/finance/pricer_detail.hpp"

namespace adi::finance {

namespace {

// Rows of the semi-discrete operator A (V_tau = A V) on one axis: lower, diagonal,
// upper, the same finite differences as adi::Operator (price or log space), with a
// linear-extrapolation ghost folded into the end rows, or Dirichlet identity rows.
struct Rows {
  std::vector<double> l, d, u;
  bool dir_lo = false, dir_hi = false;
};

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
    double lo = D * 2.0 / (hm * (hm + hp)) - V * hp / (hm * (hm + hp));
    double di = -D * 2.0 / (hm * hp) + V * (hp - hm) / (hm * hp) - r;
    double up = D * 2.0 / (hp * (hm + hp)) + V * hm / (hp * (hm + hp));
    if (i == 0) {
      di += 2.0 * lo;  // ghost 2 u_0 - u_1
      up -= lo;
      lo = 0.0;
    }
    if (i == n - 1) {
      di += 2.0 * up;
      lo -= up;
      up = 0.0;
    }
    R.l[i] = lo;
    R.d[i] = di;
    R.u[i] = up;
  }
  return R;
}

// The rows a_i u_{i-1} + b_i u_i + c_i u_{i+1} = f_i factored once per step size, in the
// elimination order Brennan-Schwartz needs. exercise_low: the region where u = g touches
// i = 0 (a put): eliminate downwards from the top, substitute upwards taking the max with
// g; otherwise the mirror image (plain Thomas with the max in the back substitution).
template <class T>
struct Sweep {
  std::vector<T> a, c, m, inv_w;
  bool low = true;

  void factor(const std::vector<T>& lo, const std::vector<T>& b, const std::vector<T>& up, bool exercise_low) {
    const std::size_t n = b.size();
    a = lo;
    c = up;
    low = exercise_low;
    m.assign(n, T(0));
    inv_w.assign(n, T(0));
    if (low) {
      T w = b[n - 1];
      inv_w[n - 1] = T(1) / w;
      for (std::size_t k = n - 1; k-- > 0;) {
        m[k] = c[k] * inv_w[k + 1];
        w = b[k] - m[k] * a[k + 1];
        inv_w[k] = T(1) / w;
      }
    } else {
      T w = b[0];
      inv_w[0] = T(1) / w;
      for (std::size_t k = 1; k < n; ++k) {
        m[k] = a[k] * inv_w[k - 1];
        w = b[k] - m[k] * c[k - 1];
        inv_w[k] = T(1) / w;
      }
    }
  }
  // Solves in place; with `project`, u_i = max(u_i, g_i) as each unknown is found.
  void solve(std::vector<T>& f, const std::vector<T>& g, bool project) const {
    const std::size_t n = f.size();
    if (low) {
      for (std::size_t k = n - 1; k-- > 0;) f[k] -= m[k] * f[k + 1];
      f[0] *= inv_w[0];
      if (project) f[0] = std::max(f[0], g[0]);
      for (std::size_t k = 1; k < n; ++k) {
        f[k] = (f[k] - a[k] * f[k - 1]) * inv_w[k];
        if (project) f[k] = std::max(f[k], g[k]);
      }
    } else {
      for (std::size_t k = 1; k < n; ++k) f[k] -= m[k] * f[k - 1];
      f[n - 1] *= inv_w[n - 1];
      if (project) f[n - 1] = std::max(f[n - 1], g[n - 1]);
      for (std::size_t k = n - 1; k-- > 0;) {
        f[k] = (f[k] - c[k] * f[k + 1]) * inv_w[k];
        if (project) f[k] = std::max(f[k], g[k]);
      }
    }
  }
};

}  // namespace

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
                           std::to_string(m.size()) + " assets");
  if (!method.executor.is_host())
    throw Unsupported("price_one_asset: the early-exercise sweep runs on the host; use Executor::host()");
  const Asset& a = m.assets[0];
  const index_t n = method.nodes > 0 ? method.nodes : detail::default_nodes(1);
  PriceResult res;
  res.space = method.space;
  res.steps = method.steps > 0 ? method.steps : detail::default_steps(1);
  const detail::AssetAxis ax = detail::asset_axis(a, c.strike > 0 ? c.strike : a.spot, c.maturity, n, method, 1);
  const AxisGrid& x = ax.axis;
  res.spot_index = {ax.spot, 0, 0};
  const Grid grid(x);
  const bool log = method.space == Space::log;
  const bool dir_lo = log, dir_hi = log || method.far_field == FarField::dirichlet;
  const Rows A = build_rows(x, a, m.rate, method.space, dir_lo, dir_hi);
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

  Sweep<T> sweep;
  T s_factored = T(0);
  // One theta step from tau0 to tau1: (I - th dt A) u1 = (I + (1 - th) dt A) u0.
  auto step = [&](double tau0, double tau1, double th) {
    const double dt = tau1 - tau0;
    if (dir_lo) u[0] = T(g_far(tau0, x[0], 0, 0));
    if (dir_hi) u[n - 1] = T(g_far(tau0, x[n - 1], 0, 0));
    const T e = T((1.0 - th) * dt), s = T(th * dt);
    if (s != s_factored) {  // the bands change with the step size only (damping, last step)
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
  const double dt = c.maturity / double(res.steps);
  for (long k = 0; k < res.steps; ++k) {
    const double t_a = dt * double(k), t_b = k + 1 == res.steps ? c.maturity : dt * double(k + 1);
    if (k < method.scheme.damping_steps) {
      const double tm = 0.5 * (t_a + t_b);
      step(t_a, tm, 1.0);
      step(tm, t_b, 1.0);
    } else {
      step(t_a, t_b, theta);
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
