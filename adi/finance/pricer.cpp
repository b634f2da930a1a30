// Black-Scholes (1-3 assets) and Heston pricing on the ADI framework: builds the
// grid, the PDE's coefficients and the boundary conditions, steps the payoff to
// maturity with AdiSolver, reads price and greeks at the spot node.
#include "adi/finance/pricer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <vector>

#include "adi/boundary.hpp"
#include "adi/detail/host_team.hpp"
#include "adi/error.hpp"
#include "adi/finance/american.hpp"
#include "adi/finance/pricer_detail.hpp"
#include "adi/operator.hpp"
#include "solvers/common/early_exercise_core.hpp"
#include "solvers/cuda/device_guard.hpp"
#include "solvers/cuda/early_exercise.hpp"

namespace adi::finance {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Steps `host` (the payoff) to maturity on method.executor; fills values, timings, greeks.
template <class T>
void solve(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, const Method& method, double maturity,
           const Field<double>& host, int axes, const std::array<bool, 3>& log_axis, Clock::time_point t_start,
           PriceResult& r) {
  const Executor& exec = method.executor;
  AdiSolver<T> solver(grid, pde, bc, method.scheme, exec);
  Field<T> init(grid);
  for (index_t k = 0; k < grid.nz(); ++k)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) init(i, j, k) = T(host(i, j, k));
  Field<T> u(grid, exec);
  u.copy_from(init);
  exec.synchronize();
  r.setup_seconds = since(t_start);
  const auto t0 = Clock::now();
  // advance() would first scan u for non-finite values (a copy to the host on a device):
  // start-up work that the payoff cannot need, so step directly. Uniform steps all pass the
  // same dt (detail::time_step), so the solver forms its bands once.
  for (long k = 0; k < r.steps; ++k) {
    const detail::TimeStep st = detail::time_step(maturity, k, r.steps, method.step_grading);
    solver.step(u, st.ta, st.tb, st.dt);
  }
  exec.synchronize();
  r.seconds = since(t0);
  r.timings = solver.timings();
  const Field<T> out = u.to_host();
  r.values = Field<double>(grid);
  for (index_t k = 0; k < grid.nz(); ++k)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) r.values(i, j, k) = double(out(i, j, k));
  r.grid = grid;
  detail::greeks_at_spot(r.values, grid, r.spot_index, axes, log_axis, r);
}

// The node-wise half of the splitting (solvers/common/early_exercise_core.hpp) over every
// node of the fields, on their executor: host rows under OpenMP on the team `tuner` picks
// (the executor's thread count, or with Executor::host() the team that times fastest,
// adi/detail/host_team.hpp; the result does not depend on the team), or one kernel launch on
// the device's stream (solvers/cuda/early_exercise.cu).
template <class F>
void each_node(adi::detail::TeamTuner& tuner, const Box3& b, F&& f) {
  adi::detail::TeamScope scope(tuner);
  const int team = scope.team();
#pragma omp parallel for collapse(2) schedule(static) num_threads(team) if (team > 1 && b.size() >= 16384)
  for (index_t k = 0; k < b.nz; ++k)
    for (index_t j = 0; j < b.ny; ++j) {
      const index_t o = j * b.sy + k * b.sz;
      for (index_t i = 0; i < b.nx; ++i) f(o + i);
    }
}

// W += dt lambda.
template <class T>
void exercise_predict(const Executor& exec, adi::detail::TeamTuner& tuner, Field<T>& W, const Field<T>& lam, T dt) {
  if (exec.is_cuda()) {
    cuda_backend::early_exercise_predict<T>(W.data(), lam.data(), dt, W.box(), exec.stream());
    return;
  }
  T* w = W.data();
  const T* l = lam.data();
  each_node(tuner, W.box(), [&](index_t o) { common::exercise_predict(w[o], l[o], dt); });
}

// U = max(bar - dt lambda, g), lambda = max(0, lambda + (g - bar) / dt).
template <class T>
void exercise_project(const Executor& exec, adi::detail::TeamTuner& tuner, const Field<T>& bar, const Field<T>& g, T dt,
                      Field<T>& U, Field<T>& lam) {
  if (exec.is_cuda()) {
    cuda_backend::early_exercise_project<T>(bar.data(), g.data(), dt, U.data(), lam.data(), U.box(), exec.stream());
    return;
  }
  const T* b = bar.data();
  const T* gv = g.data();
  T* u = U.data();
  T* l = lam.data();
  each_node(tuner, U.box(), [&](index_t o) { common::exercise_project(b[o], gv[o], dt, u[o], l[o]); });
}

// A host field of `grid` holding `host` in T.
template <class T>
Field<T> host_field_of(const Grid& grid, const Field<double>& host) {
  Field<T> f(grid);
  for (index_t k = 0; k < grid.nz(); ++k)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) f(i, j, k) = T(host(i, j, k));
  return f;
}

// American exercise on an ADI grid (Heston, 2-3 assets): the Ikonen-Toivanen operator
// splitting inside each ADI step, as Haentjens & in 't Hout (2015) do for Heston. The step's
// explicit predictor carries the Lagrange multiplier, Y0 = U + dt (F(t0, U) + lambda); the
// scheme's stages follow unchanged and give U~; then, node by node,
//   U = max(U~ - dt lambda, g),   lambda = max(0, lambda + (g - U~) / dt),
// which makes U >= g, lambda >= 0 and (U - g) lambda = 0 hold after every step with no
// iteration or penalty parameter. Rannacher damping: the first steps as Douglas theta = 1
// half steps, each with its own splitting update. On the host or a CUDA executor: the
// Operator's apply / solve run there, and the two node-wise passes are the same formulas on
// both (solvers/common/early_exercise_core.hpp); the fields live in the executor's memory
// and only the result comes back.
template <class T>
void solve_american(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, const Method& method,
                    double maturity, const Field<double>& host, const Field<double>& exercise, int assets,
                    Clock::time_point t_start, PriceResult& r) {
  const Executor& exec = method.executor;
  cuda_backend::DeviceGuard guard(exec.device(), exec.is_cuda());
  Operator<T> op(grid, pde, bc, exec);
  adi::detail::TeamTuner predict_team(exec.threads()), project_team(exec.threads());  // host node passes
  using W4 = std::array<T, 4>;
  // lambda starts at 0 (fields are zero-filled).
  Field<T> U(grid, exec), W(grid, exec), Y(grid, exec), lam(grid, exec), g(grid, exec);
  U.copy_from(host_field_of<T>(grid, host));
  g.copy_from(host_field_of<T>(grid, exercise));
  exec.synchronize();
  r.setup_seconds = since(t_start);
  const auto t0 = Clock::now();
  std::vector<Axis> axes;
  for (Axis a : {Axis::x, Axis::y, Axis::z})
    if (op.active(a)) axes.push_back(a);
  auto all = [](T w) { return W4{w, w, w, w}; };
  // W = Y0 = U + dt (F(ta, U) + lambda); Y_j = Y_{j-1} + s (F_j(tb, Y_j) - F_j(ta, U)) into `out`.
  auto chain = [&](double ta, double tb, double h, T s, Field<T>& out) {
    const T dt = T(h);
    op.set_boundary(ta, U);
    op.apply(ta, U, all(dt), T(1), &U, W);
    exercise_predict(exec, predict_team, W, lam, dt);
    for (std::size_t a = 0; a < axes.size(); ++a) op.solve(axes[a], s, tb, a == 0 ? W : out, out, ta, &U);
  };
  // dt: the step's length (detail::time_step: the same every uniform step, so op forms its
  // bands once), ta and tb its place in time.
  auto step = [&](double ta, double tb, double dt, SchemeKind kind, double theta) {
    const T s = T(theta * dt);
    chain(ta, tb, dt, s, Y);  // Douglas: U~ = Y
    if (kind != SchemeKind::douglas && !(kind == SchemeKind::craig_sneyd && !op.has_mixed())) {
      W4 wn{}, wo{};
      if (kind == SchemeKind::hundsdorfer_verwer) {
        wn = all(T(0.5 * dt));
        wo = all(T(-0.5 * dt));
      } else if (kind == SchemeKind::craig_sneyd) {
        wn[0] = T(method.scheme.sigma * dt);
        wo[0] = T(-method.scheme.sigma * dt);
      } else {  // modified Craig-Sneyd
        const T c = T((0.5 - theta) * dt), c0 = T(0.5 * dt);
        wn = W4{c0, c, c, c};
        wo = W4{-c0, -c, -c, -c};
      }
      op.set_boundary(tb, Y);
      op.apply(tb, Y, wn, T(1), &W, W);
      op.apply(ta, U, wo, T(1), &W, W);
      const bool hv = kind == SchemeKind::hundsdorfer_verwer;
      for (Axis a : axes) op.solve(a, s, tb, W, W, hv ? tb : ta, hv ? &Y : &U);
      exercise_project(exec, project_team, W, g, T(dt), U, lam);
    } else {
      exercise_project(exec, project_team, Y, g, T(dt), U, lam);
    }
    op.settle();
  };
  for (long k = 0; k < r.steps; ++k) {
    const detail::TimeStep st = detail::time_step(maturity, k, r.steps, method.step_grading);
    if (k < method.scheme.damping_steps) {
      step(st.ta, st.middle(), st.half(), SchemeKind::douglas, 1.0);
      step(st.middle(), st.tb, st.half(), SchemeKind::douglas, 1.0);
    } else {
      step(st.ta, st.tb, st.dt, method.scheme.kind, method.scheme.theta);
    }
  }
  exec.synchronize();
  r.seconds = since(t0);
  const Field<T> out = U.to_host();
  r.values = Field<double>(grid);
  for (index_t k = 0; k < grid.nz(); ++k)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) r.values(i, j, k) = double(out(i, j, k));
  r.grid = grid;
  detail::greeks_at_spot(r.values, grid, r.spot_index, assets, {false, false, false}, r);
}

// The exercise value (the payoff, unsmoothed) at every node.
Field<double> exercise_values(const Grid& grid, const Contract& c, int assets) {
  Field<double> g(grid);
  for (index_t k = 0; k < grid.nz(); ++k)
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) {
        const double s[3] = {grid.axis(Axis::x).nodes()[i], grid.ny() > 1 ? grid.axis(Axis::y).nodes()[j] : 0.0,
                             grid.nz() > 1 ? grid.axis(Axis::z).nodes()[k] : 0.0};
        g(i, j, k) = c.value(s, assets);
      }
  return g;
}

// The kink of the payoff along asset i's axis: the strike for one asset, else the spot.
double kink_center(const BlackScholesModel& m, const Contract& c, int i) {
  if (m.size() == 1 && c.strike > 0) {
    const double w = c.payoff == Payoff::basket ? c.weight(0, 1) : 1.0;
    return w > 0 ? c.strike / w : m.assets[0].spot;
  }
  return m.assets[i].spot;
}

}  // namespace

void Method::validate() const {
  adi::detail::require(nodes == 0 || nodes >= 5, "Method: nodes = " + ::adi::detail::number(nodes) +
                                                     " per axis must be >= 5 (0: the default)");
  adi::detail::require(variance_nodes == 0 || variance_nodes >= 5,
                       "Method: variance_nodes = " + ::adi::detail::number(variance_nodes) + " must be >= 5 (0: the default)");
  adi::detail::require(steps >= 0, "Method: steps = " + ::adi::detail::number(steps) + " must be >= 1 (0: the default)");
  adi::detail::require(std::isfinite(width) && width > 0,
                       "Method: width = " + format_number(width) + " standard deviations must be > 0");
  adi::detail::require(std::isfinite(intensity) && intensity >= 0,
                       "Method: intensity = " + format_number(intensity) + " must be >= 0 (0: the default)");
  adi::detail::require(std::isfinite(cluster) && cluster >= 0,
                       "Method: cluster = " + format_number(cluster) + " standard deviations must be >= 0 (0: the default)");
  adi::detail::require(std::isfinite(step_grading) && step_grading >= 1 && step_grading <= 4,
                       "Method: step_grading = " + format_number(step_grading) +
                           " must lie in [1, 4] (1: uniform steps, 2: quadratic)");
  adi::detail::require(std::isfinite(variance_max) && variance_max >= 0,
                       "Method: variance_max = " + format_number(variance_max) + " must be >= 0 (0: the default)");
  adi::detail::require(std::isfinite(variance_cluster) && variance_cluster >= 0,
                       "Method: variance_cluster = " + format_number(variance_cluster) +
                           " must be >= 0 (0: the default)");
  // The scheme is validated here because the one-asset sweep (and the chain) never build
  // an AdiSolver: the same ranges as AdiSolver's constructor.
  adi::detail::require(std::isfinite(scheme.theta) && scheme.theta > 0.0 && scheme.theta <= 1.0,
                       std::string("Method: scheme ") + scheme.name() + " theta = " + format_number(scheme.theta) +
                           " must lie in (0, 1] (0 is explicit Euler: unstable on these grids)");
  adi::detail::require(std::isfinite(scheme.sigma) && scheme.sigma >= 0.0,
                       std::string("Method: scheme ") + scheme.name() + " sigma = " + format_number(scheme.sigma) +
                           " must be finite and >= 0");
  adi::detail::require(scheme.damping_steps >= 0, "Method: scheme damping_steps = " +
                                                      ::adi::detail::number(scheme.damping_steps) +
                                                      " must be >= 0 (0: no Rannacher damping)");
  adi::detail::require(!(space == Space::log && far_field == FarField::linear),
                       "Method: log space has no linear far field (V_SS = 0 is V_xx = V_x in x = ln S); use "
                       "FarField::dirichlet with Space::log, or Space::price");
}

std::string PriceResult::describe() const {
  std::ostringstream s;
  s << "grid " << grid.describe() << " (" << space_name(space) << " space), " << steps << " steps";
  return s.str();
}

template <class T>
PriceResult price(const BlackScholesModel& m, const Contract& c, const Method& method) {
  const auto t_start = Clock::now();
  m.validate();
  c.validate(m.size());
  method.validate();
  if (c.exercise == Exercise::american && m.size() == 1) return price_one_asset<T>(m, c, method, true);
  adi::detail::require(c.exercise != Exercise::american || method.scheme.kind != SchemeKind::peaceman_rachford,
                       "price: American exercise takes the douglas, craig-sneyd, modified-craig-sneyd or "
                       "hundsdorfer-verwer scheme, not peaceman-rachford");
  if (m.size() == 1 && c.payoff == Payoff::vanilla && method.one_asset_sweep && method.executor.is_host() &&
      method.scheme.kind == SchemeKind::douglas)
    return price_one_asset<T>(m, c, method, false);
  const int n = m.size();
  const index_t nodes = method.nodes > 0 ? method.nodes : detail::default_nodes(n);
  PriceResult r;
  r.space = method.space;
  r.steps = method.steps > 0 ? method.steps : detail::default_steps(n);
  std::array<AxisGrid, 3> axes{};
  for (int i = 0; i < n; ++i) {
    const detail::AssetAxis a = detail::asset_axis(m.assets[i], kink_center(m, c, i), c.maturity, nodes, method, n, m.rate);
    axes[i] = a.axis;
    r.spot_index[i] = a.spot;
  }
  const Grid grid(axes[0], axes[1], axes[2]);

  // The PDE in time to maturity.
  Pde pde;
  const bool log = method.space == Space::log;
  for (int i = 0; i < n; ++i) {
    const Asset& a = m.assets[i];
    const double h = 0.5 * a.volatility * a.volatility, b = m.rate - a.dividend;
    const Axis ax = static_cast<Axis>(i);
    if (log) {
      pde.diffusion[i] = h;
      pde.convection[i] = b - h;
    } else {
      pde.diffusion[i] = Coefficient::along(ax, [h](double s) { return h * s * s; });
      pde.convection[i] = Coefficient::along(ax, [b](double s) { return b * s; });
    }
  }
  Coefficient* mixed[3] = {&pde.mixed_xy, &pde.mixed_xz, &pde.mixed_yz};
  const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int p = 0; p < 3; ++p) {
    const int i = pairs[p][0], j = pairs[p][1];
    if (j >= n) continue;
    const double rs = m.corr(i, j) * m.assets[i].volatility * m.assets[j].volatility;
    if (rs == 0.0) continue;
    if (log) {
      *mixed[p] = rs;
    } else {
      *mixed[p] = Coefficient([rs, i, j](double x, double y, double z) {
        const double s[3] = {x, y, z};
        return rs * s[i] * s[j];
      });
    }
  }
  pde.reaction = -m.rate;

  // Far field: price space S = 0 is exact with "linear" (the coefficients vanish there);
  // the far end linear or Dirichlet; log space Dirichlet on every face.
  BoundaryConditions bc;
  const Boundary data = Boundary::dirichlet(detail::forward_intrinsic(m, c, method.space));
  for (int i = 0; i < n; ++i) {
    const Axis ax = static_cast<Axis>(i);
    if (log)
      bc.set(ax, data, data);
    else
      bc.set(ax, Boundary::linear(), method.far_field == FarField::linear ? Boundary::linear() : data);
  }
  const Field<double> payoff = detail::payoff_on_grid(grid, n, c, method.space, method.smoothing, method.executor.threads());
  if (c.exercise == Exercise::american) {
    adi::detail::require(!log, "price: American exercise on several assets is priced in price space; use Space::price");
    solve_american<T>(grid, pde, bc, method, c.maturity, payoff, exercise_values(grid, c, n), n, t_start, r);
    return r;
  }
  solve<T>(grid, pde, bc, method, c.maturity, payoff, n, {log, log, log}, t_start, r);
  return r;
}

template <class T>
PriceResult price(const HestonModel& h, const Contract& c, const Method& method) {
  const auto t_start = Clock::now();
  h.validate();
  c.validate(1);
  method.validate();
  adi::detail::require(c.payoff == Payoff::vanilla && c.exercise != Exercise::bermudan,
                       "price(HestonModel): European or American vanilla calls and puts only, got " + c.describe());
  const bool american = c.exercise == Exercise::american;
  adi::detail::require(!american || method.scheme.kind != SchemeKind::peaceman_rachford,
                       "price(HestonModel): American exercise takes the douglas, craig-sneyd, modified-craig-sneyd "
                       "or hundsdorfer-verwer scheme, not peaceman-rachford");
  adi::detail::require(method.space == Space::price,
                       "price(HestonModel): the (S, v) grid is in price space; use Space::price");
  PriceResult r;
  r.space = Space::price;
  r.steps = method.steps > 0 ? method.steps : 50;
  const index_t ns = method.nodes > 0 ? method.nodes : 101;
  // Strike 0: the call is the stock (S e^{-q tau}), the put worthless; nothing kinks, so
  // cluster at the spot instead of at K.
  const double center = c.strike > 0 ? c.strike : h.spot;
  const index_t nv = method.variance_nodes > 0 ? method.variance_nodes : ns / 2 + 1;
  // In 't Hout & Foulon (2010): S in [0, 8K] clustered around K (width K/5), v in [0, 5]
  // clustered at v = 0 (width 5/500); both widened for long maturities or high variance.
  const double top = std::max(h.spot, c.strike);
  const double vbar = std::max(h.v0, h.theta);
  // With rho > 0 and a large vol of vol S_T's right tail is fat (moments of order just
  // above 1 explode before T) and a call feels S far beyond 5 log-normal sd: widen by
  // 1 + rho+ sigma sqrt(T). Kappa 0.3, theta 0.09, sigma 1.5, rho 0.6, T 5 stalled 0.12
  // below the price with S_max = 2900; with S_max = 2.4e6 the error falls -2.4e-2 ->
  // -8.0e-3 from 100 x 50 x 50 to 200 x 100 x 100 (docs/finance.md). rho <= 0: unchanged.
  const double tail = 1.0 + std::max(h.rho, 0.0) * h.sigma * std::sqrt(c.maturity);
  const double smax = top * std::max(8.0, std::exp(method.width * tail * std::sqrt(vbar * c.maturity)));
  // v's far end: in 't Hout & Foulon's 5 (or 10 long-run variances), and 6 e-folds of the
  // CIR density's exponential tail (scale sigma^2 / (2 kappa)) where that is wider: with
  // kappa 0.3, theta 0.09, sigma 1.5 (Feller 2 kappa theta / sigma^2 = 0.024) the tail scale
  // is 3.75, and v_max = 5 cut it off: the price stalled at +3.7e-3 (T = 5) as the grid
  // was refined; at 22.5 it converges (docs/finance.md).
  const double vmax = method.variance_max > 0 ? method.variance_max
                                              : std::max({5.0, 10.0 * vbar, 6.0 * h.sigma * h.sigma / (2.0 * h.kappa)});
  adi::detail::require(h.v0 < vmax, "price(HestonModel): Method::variance_max = " + format_number(vmax) +
                                        " must exceed v0 = " + format_number(h.v0));
  // Cluster width at v = 0: 0.01 (5/500 in in 't Hout & Foulon) whatever v_max is: near a
  // Feller-violating v = 0 the price behaves like v^{2 kappa theta / sigma^2}.
  const double v_int = vmax / (method.variance_cluster > 0 ? method.variance_cluster : 0.01);
  const double s_int = method.intensity > 0 ? method.intensity : smax / (0.2 * center);
  const AxisGrid sx = concentrated_axis(ns, 0.0, smax, center, s_int, h.spot);
  // v0 on a node (v0 = 0: the boundary node itself).
  AxisGrid vy;
  if (h.v0 > 0) {
    vy = concentrated_axis(nv, 0.0, vmax, 0.0, v_int, h.v0);
  } else {
    vy = AxisGrid::stretched(nv, 0.0, vmax, 0.0, v_int);
  }
  r.spot_index = {std::find(sx.nodes().begin(), sx.nodes().end(), h.spot) - sx.nodes().begin(),
                  h.v0 > 0 ? std::find(vy.nodes().begin(), vy.nodes().end(), h.v0) - vy.nodes().begin() : 0, 0};
  const Grid grid(sx, vy);

  Pde pde;
  const double b = h.rate - h.dividend, hs2 = 0.5 * h.sigma * h.sigma;
  pde.diffusion[0] = Coefficient([](double s, double v, double) { return 0.5 * v * s * s; });
  pde.diffusion[1] = Coefficient::along(Axis::y, [hs2](double v) { return hs2 * v; });
  pde.convection[0] = Coefficient::along(Axis::x, [b](double s) { return b * s; });
  pde.convection[1] = Coefficient::along(Axis::y, [k = h.kappa, th = h.theta](double v) { return k * (th - v); });
  pde.mixed_xy = Coefficient([rs = h.rho * h.sigma](double s, double v, double) { return rs * s * v; });
  pde.reaction = -h.rate;

  // S = 0 and v = 0: the PDE degenerates there and holds on the face ("linear": the
  // ghost drops out where the diffusion vanishes, v's convection becomes one-sided).
  BoundaryConditions bc;
  const bool call = c.type == OptionType::call;
  if (method.far_field == FarField::linear) {
    bc.set(Axis::x, Boundary::linear(), Boundary::linear());
    bc.set(Axis::y, Boundary::linear(), Boundary::linear());
  } else {
    const double K = c.strike, r0 = h.rate, q = h.dividend;
    bc.set(Axis::x, Boundary::linear(), Boundary::dirichlet([=](double tau, double s, double, double) {
             return std::max(call ? s * std::exp(-q * tau) - K * std::exp(-r0 * tau)
                                  : K * std::exp(-r0 * tau) - s * std::exp(-q * tau),
                             0.0);
           }));
    // v -> infinity: a call is worth the (dividend-discounted) stock, a put the discounted strike.
    bc.set(Axis::y, Boundary::linear(), Boundary::dirichlet([=](double tau, double s, double, double) {
             return call ? s * std::exp(-q * tau) : K * std::exp(-r0 * tau);
           }));
  }
  // The payoff depends on S only: smooth along x, copy along v.
  const Field<double> line = detail::payoff_on_grid(Grid(sx), 1, c, Space::price, method.smoothing, method.executor.threads());
  Field<double> payoff(grid);
  for (index_t j = 0; j < grid.ny(); ++j)
    for (index_t i = 0; i < grid.nx(); ++i) payoff(i, j, 0) = line(i, 0, 0);
  if (american) {
    Field<double> exercise = exercise_values(Grid(sx), c, 1);  // along S, copied along v
    Field<double> ex2(grid);
    for (index_t j = 0; j < grid.ny(); ++j)
      for (index_t i = 0; i < grid.nx(); ++i) ex2(i, j, 0) = exercise(i, 0, 0);
    solve_american<T>(grid, pde, bc, method, c.maturity, payoff, ex2, 2, t_start, r);
    return r;
  }
  solve<T>(grid, pde, bc, method, c.maturity, payoff, 2, {false, false, false}, t_start, r);
  return r;
}

template PriceResult price<float>(const BlackScholesModel&, const Contract&, const Method&);
template PriceResult price<double>(const BlackScholesModel&, const Contract&, const Method&);
template PriceResult price<float>(const HestonModel&, const Contract&, const Method&);
template PriceResult price<double>(const HestonModel&, const Contract&, const Method&);

}  // namespace adi::finance
