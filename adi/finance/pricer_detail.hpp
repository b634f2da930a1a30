#pragma once
// Internals shared by the ADI pricer (pricer.cpp) and the one-asset American solver
// (american.cpp): grids, payoff on the grid, greeks at the spot node.
#include <array>
#include <cmath>
#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "adi/field.hpp"
#include "adi/finance/model.hpp"
#include "adi/finance/pricer.hpp"
#include "adi/grid.hpp"
#include "solvers/common/price_axis.hpp"

namespace adi::finance::detail {

// One asset's axis and the index of its spot node.
struct AssetAxis {
  AxisGrid axis;
  index_t spot = 0;
};

// Time level k of N to maturity T: T k / N, or T (k / N)^p with graded steps (the last is
// exactly T). Written once for every stepping loop, so that they stay equal to round-off.
inline double time_level(double T, long k, long N, double p) {
  if (k >= N) return T;
  if (p == 1.0) return T / double(N) * double(k);
  return T * std::pow(double(k) / double(N), p);
}

// The length a scheme gets for the step [ta, tb] of a time grid whose uniform steps are
// `nominal` long (nominal_step; 0 for graded steps): `nominal` itself where tb - ta is it up to
// the rounding of the time levels (k h rounded: tb - ta differs from h in its last bits, and
// differently from step to step), else tb - ta. Every stepper forms its implicit bands from
// s = theta dt once and keeps them until s changes (AdiSolver / Operator, the Brennan-Schwartz
// sweeps), so a dt that wobbles in its last bit re-forms them (a factorisation; on a device the
// pivot checks, the diagonal rewrite and SPIKE's preparation) at every step. Uniform steps thus
// all get the bitwise-same dt while the times ta, tb stay the grid's; graded steps (and the
// uneven steps around the one-asset engine's events) keep tb - ta.
inline double step_length(double ta, double tb, double nominal) {
  const double dt = tb - ta;
  // |tb - ta - h| <= ulp(ta) / 2 + ulp(tb) / 2 on uniform levels (the last level is T itself,
  // within eps T / 2 of N h): 4 eps |tb| leaves room and lies far below any real unevenness
  // (the one-asset engine merges levels closer than 1e-13 T).
  return nominal > 0.0 && std::abs(dt - nominal) <= 4.0 * std::numeric_limits<double>::epsilon() * std::abs(tb)
             ? nominal
             : dt;
}

// The nominal step of N steps to T with grading p: T / N for uniform steps, 0 (none) for graded ones.
inline double nominal_step(double T, long N, double p) { return p == 1.0 ? T / double(N) : 0.0; }

// Step k of N to maturity T with grading p: the grid's times ta = time_level(k), tb =
// time_level(k + 1) and the length dt the scheme takes (step_length: T / N, the same every
// step, for uniform steps; tb - ta for graded ones).
struct TimeStep {
  double ta = 0.0, tb = 0.0, dt = 0.0;
  // Rannacher damping: the step as two implicit halves [ta, middle()], [middle(), tb], each
  // dt / 2 long (the same length for both halves and for every damped step).
  double middle() const { return ta + 0.5 * (tb - ta); }
  double half() const { return 0.5 * dt; }
};
inline TimeStep time_step(double T, long k, long N, double p) {
  TimeStep s;
  s.ta = time_level(T, k, N, p);
  s.tb = time_level(T, k + 1, N, p);
  s.dt = step_length(s.ta, s.tb, nominal_step(T, N, p));
  return s;
}

// Default nodes per asset axis for n assets.
index_t default_nodes(int assets);
// Default time steps for n assets.
long default_steps(int assets);

// The axis of asset `a` (spot, volatility) for a payoff whose kink along this axis sits
// near `center` (the strike for one asset), maturity T, in a model of `assets` assets.
// rate: r (with the asset's dividend yield, the drift of one asset's default cluster).
AssetAxis asset_axis(const Asset& a, double center, double T, index_t n, const Method& m, int assets, double rate);
// The nodes of one asset's price axis (solvers/common/price_axis.hpp) as an AxisGrid.
AxisGrid axis_of(const common::PriceAxis& g);
// Throws InvalidArgument, naming the volatility and maturity, where the grid's far end
// top e^{width sd} (sd the spread of ln S_T) is beyond the largest double, or (price space)
// the diffusion coefficient sigma^2 S^2 / 2 there.
void require_finite_far_end(double volatility, double T, double sd, double top, double width, bool price_space);

// Grid coordinate -> asset price.
inline double to_price(double x, Space s) { return s == Space::log ? std::exp(x) : x; }

// The payoff at the grid's nodes (host, double). With `smoothing`, nodes whose cell
// (between the midpoints to their neighbours) is cut by the kink get the cell average.
// `threads`: OpenMP threads for big grids (0: all).
Field<double> payoff_on_grid(const Grid& g, int assets, const Contract& c, Space s, bool smoothing, int threads);

// e^{-r tau} payoff(S_i e^{(r - q_i) tau}): the far-field Dirichlet data.
std::function<double(double, double, double, double)> forward_intrinsic(const BlackScholesModel& m,
                                                                        const Contract& c, Space s);

// Price, delta and gamma at the spot node from host values (3-point formulas on
// non-uniform axes; in log space converted to d/dS).
void greeks_at_spot(const Field<double>& v, const Grid& g, const std::array<index_t, 3>& spot, int axes,
                    const std::array<bool, 3>& log_axis, PriceResult& r);

// Rows of the semi-discrete operator A (V_tau = A V) on one axis: lower, diagonal,
// upper, the same finite differences as adi::Operator (price or log space), with a
// linear-extrapolation ghost folded into the end rows, or Dirichlet identity rows.
struct Rows {
  std::vector<double> l, d, u;
  bool dir_lo = false, dir_hi = false;
};

Rows build_rows(const AxisGrid& x, const Asset& a, double r, Space s, bool dir_lo, bool dir_hi);

// Row i of n of D V_xx + V V_x - r V on spacings hm (below) and hp (above), second order;
// the end rows fold in the linear-extrapolation ghost (V_xx = 0 there).
inline void three_point_row(double hm, double hp, double D, double V, double r, bool first, bool last, double& lo,
                            double& di, double& up) {
  lo = D * 2.0 / (hm * (hm + hp)) - V * hp / (hm * (hm + hp));
  di = -D * 2.0 / (hm * hp) + V * (hp - hm) / (hm * hp) - r;
  up = D * 2.0 / (hp * (hm + hp)) + V * hm / (hp * (hm + hp));
  if (first) {
    di += 2.0 * lo;  // ghost 2 u_0 - u_1
    up -= lo;
    lo = 0.0;
  }
  if (last) {
    di += 2.0 * up;
    lo -= up;
    up = 0.0;
  }
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


}  // namespace adi::finance::detail
