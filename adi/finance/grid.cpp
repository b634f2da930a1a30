// Grids for option pricing, the payoff on them, greeks at the spot node.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/finance/pricer.hpp"
#include "adi/finance/pricer_detail.hpp"
#include "solvers/common/price_axis.hpp"

namespace adi::finance {

AxisGrid concentrated_axis(index_t n, double lo, double hi, double center, double intensity, double anchor) {
  adi::detail::require(n >= 3, "concentrated_axis: n = " + ::adi::detail::number(n) + " must be >= 3");
  adi::detail::require(std::isfinite(lo) && std::isfinite(hi) && hi > lo,
                       "concentrated_axis: need finite lo < hi, got lo = " + format_number(lo) +
                           ", hi = " + format_number(hi));
  adi::detail::require(intensity > 0 && std::isfinite(intensity),
                       "concentrated_axis: intensity = " + format_number(intensity) + " must be finite and > 0");
  adi::detail::require(anchor > lo && anchor < hi, "concentrated_axis: the anchor (spot) " + format_number(anchor) +
                                                       " must lie inside (" + format_number(lo) + ", " +
                                                       format_number(hi) + ")");
  const common::SinhMap map = common::sinh_map(lo, hi, center, intensity, anchor, n, 0);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) x[i] = map.at(i);
  x[0] = lo;
  x[map.ia] = anchor;
  return AxisGrid::from_nodes(std::move(x));
}

const char* space_name(Space s) { return s == Space::price ? "price" : "log"; }
const char* far_field_name(FarField f) { return f == FarField::linear ? "linear" : "dirichlet"; }

namespace detail {

index_t default_nodes(int assets) { return assets == 1 ? 201 : assets == 2 ? 101 : 49; }
long default_steps(int assets) { return assets == 1 ? 100 : 50; }

void require_finite_far_end(double volatility, double T, double sd, double top, double width, bool price_space) {
  const double far = top * std::exp(width * sd), v = std::max(volatility, 0.05);
  const bool finite = std::isfinite(far), diffusion = !price_space || std::isfinite(0.5 * v * v * far * far);
  if (finite && diffusion) return;
  auto g = [](double x) {  // a derived number: %g
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return std::string(b);
  };
  throw InvalidArgument("price: volatility " + format_number(volatility) + " over maturity " + format_number(T) +
                        " spreads ln S_T by sd = " + g(sd) + ", which puts the grid's far end, " + format_number(top) +
                        " e^(" + format_number(width) + " sd)" +
                        (finite ? " = " + g(far) + ", where sigma^2 S^2 / 2 is" : ",") +
                        " beyond the largest double; lower Method::width or the volatility, or price a shorter "
                        "maturity");
}

AxisGrid axis_of(const common::PriceAxis& g) {
  std::vector<double> x(static_cast<std::size_t>(g.n));
  for (index_t i = 0; i < g.n; ++i) x[static_cast<std::size_t>(i)] = g.node(i);
  return AxisGrid::from_nodes(std::move(x));
}

AssetAxis asset_axis(const Asset& a, double center, double T, index_t n, const Method& m, int assets, double rate) {
  const double sd = common::price_axis_sd(a.volatility, T);
  const double top = std::max(a.spot, center);
  AssetAxis r;
  require_finite_far_end(a.volatility, T, sd, top, m.width, m.space == Space::price);
  if (m.space == Space::price && assets == 1) {
    // One asset's axis, written once for the host and the option chain's GPU kernels (a sinh
    // map in S, or spaced evenly in ln S for wide spreads: solvers/common/price_axis.hpp).
    const double cluster =
        m.cluster > 0 ? m.cluster : common::price_axis_cluster(a.spot, center, sd, (rate - a.dividend) * T);
    r.axis = axis_of(common::price_axis(a.spot, center, sd, m.width, common::price_axis_far(a.spot, center, sd, m.width),
                                        n, cluster, m.intensity, 0));
  } else if (m.space == Space::price) {
    const double hi = top * std::exp(m.width * sd);
    // Several assets. Cluster width: the price at the spot depends on the whole +-2 sd region,
    // so one asset wants mild grading (3 sd, price_axis: at 201 nodes the error is 1.5e-4; 1 sd:
    // 4.2e-4; uniform: 1.3e-4), while the kink (hyper)surface of several assets wants it tighter
    // (1 sd: exchange at 81^2 nodes -1.8e-3, 3 sd: 6.4e-3; 3-asset geometric at 65^3: 4.4e-4
    // against 1.9e-3). Evenly in ln S for wide spreads as for one asset was tried and not taken:
    // Margrabe (sigma 0.2 / 0.3, T = 5 or 20) 2.8-2.9x less accurate, (0.5 / 0.6, T = 20) 2x more.
    const double cluster = (m.cluster > 0 ? m.cluster : 1.0) * center * sd;
    const double intensity = m.intensity > 0 ? m.intensity : hi / cluster;
    r.axis = concentrated_axis(n, 0.0, hi, center, intensity, a.spot);
  } else {
    const double lo = std::log(std::min(a.spot, center)) - m.width * sd;
    const double hi = std::log(top) + m.width * sd;
    const double intensity =
        m.intensity > 0 ? m.intensity : (hi - lo) / ((m.cluster > 0 ? m.cluster : assets == 1 ? 3.0 : 1.0) * sd);
    r.axis = concentrated_axis(n, lo, hi, std::log(center), intensity, std::log(a.spot));
  }
  const auto& x = r.axis.nodes();
  const double target = m.space == Space::price ? a.spot : std::log(a.spot);
  r.spot = std::find(x.begin(), x.end(), target) - x.begin();
  return r;
}

Field<double> payoff_on_grid(const Grid& g, int assets, const Contract& c, Space s, bool smoothing, int threads) {
  Field<double> f(g);
  const std::array<index_t, 3> n{g.nx(), g.ny(), g.nz()};
  // Cell of node i: between the midpoints to its neighbours (end nodes: no averaging).
  auto cell = [&](int d, index_t i, double& a, double& b) {
    const AxisGrid& ax = g.axis(static_cast<Axis>(d));
    a = 0.5 * (ax[i - 1] + ax[i]);
    b = 0.5 * (ax[i] + ax[i + 1]);
  };
  // Samples per axis for a cut cell: ~100-500 payoff evaluations per cell.
  const int m = assets == 1 ? 128 : assets == 2 ? 20 : 8;
  // Threads only for big grids: on a busy machine waking a team costs more than a small grid.
  const bool parallel = g.size() >= 32768;
  const int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for collapse(2) schedule(dynamic, 4) if (parallel) num_threads(team)
  for (index_t k = 0; k < n[2]; ++k)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t i = 0; i < n[0]; ++i) {
        const index_t idx[3] = {i, j, k};
        double x[3], S[3];
        for (int d = 0; d < assets; ++d) {
          x[d] = g.axis(static_cast<Axis>(d))[idx[d]];
          S[d] = to_price(x[d], s);
        }
        double v = c.value(S, assets);
        bool interior = true;
        for (int d = 0; d < assets; ++d) interior = interior && idx[d] > 0 && idx[d] < n[d] - 1;
        if (smoothing && interior) {
          double lo[3], hi[3];
          for (int d = 0; d < assets; ++d) cell(d, idx[d], lo[d], hi[d]);
          // Is the kink inside the cell? Look at the moneyness on the 2^n corners.
          bool pos = false, neg = false;
          for (int corner = 0; corner < (1 << assets); ++corner) {
            double Sc[3];
            for (int d = 0; d < assets; ++d) Sc[d] = to_price((corner >> d) & 1 ? hi[d] : lo[d], s);
            const double mo = c.moneyness(Sc, assets);
            pos = pos || mo > 0;
            neg = neg || mo < 0;
          }
          if (pos && neg) {
            double sum = 0;
            long count = 0;
            int t[3] = {0, 0, 0};
            const int total = assets == 1 ? m : assets == 2 ? m * m : m * m * m;
            for (int q = 0; q < total; ++q) {
              t[0] = q % m;
              t[1] = (q / m) % m;
              t[2] = q / (m * m);
              double Sq[3];
              for (int d = 0; d < assets; ++d)
                Sq[d] = to_price(lo[d] + (hi[d] - lo[d]) * (t[d] + 0.5) / m, s);
              sum += c.value(Sq, assets);
              ++count;
            }
            v = sum / double(count);
          }
        }
        f(i, j, k) = v;
      }
  return f;
}

std::function<double(double, double, double, double)> forward_intrinsic(const BlackScholesModel& m,
                                                                        const Contract& c, Space s) {
  const int n = m.size();
  std::array<double, 3> carry{};
  for (int i = 0; i < n; ++i) carry[i] = m.rate - m.assets[i].dividend;
  return [c, s, n, carry, r = m.rate](double tau, double x, double y, double z) {
    const double xs[3] = {x, y, z};
    double F[3];
    for (int i = 0; i < n; ++i) F[i] = to_price(xs[i], s) * std::exp(carry[i] * tau);
    return std::exp(-r * tau) * c.value(F, n);
  };
}

void greeks_at_spot(const Field<double>& v, const Grid& g, const std::array<index_t, 3>& spot, int axes,
                    const std::array<bool, 3>& log_axis, PriceResult& r) {
  r.price = v(spot[0], spot[1], spot[2]);
  for (int d = 0; d < axes; ++d) {
    const AxisGrid& ax = g.axis(static_cast<Axis>(d));
    const index_t i = spot[d];
    if (i == 0 || i == ax.size() - 1) {  // on a face (Heston v0 = 0): no centred stencil
      r.delta[d] = r.gamma[d] = std::nan("");
      continue;
    }
    std::array<index_t, 3> lo = spot, hi = spot;
    lo[d] = i - 1;
    hi[d] = i + 1;
    const double hm = ax[i] - ax[i - 1], hp = ax[i + 1] - ax[i];
    const double um = v(lo[0], lo[1], lo[2]), u0 = r.price, up = v(hi[0], hi[1], hi[2]);
    // Second-order first and second derivatives on non-uniform spacing.
    const double d1 = (-hp / (hm * (hm + hp))) * um + ((hp - hm) / (hm * hp)) * u0 + (hm / (hp * (hm + hp))) * up;
    const double d2 = 2.0 * (um / (hm * (hm + hp)) - u0 / (hm * hp) + up / (hp * (hm + hp)));
    if (log_axis[d]) {
      const double S = std::exp(ax[i]);
      r.delta[d] = d1 / S;
      r.gamma[d] = (d2 - d1) / (S * S);
    } else {
      r.delta[d] = d1;
      r.gamma[d] = d2;
    }
  }
}

}  // namespace detail
}  // namespace adi::finance
