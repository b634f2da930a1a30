#include "adi/finance/closed_form.hpp"

#include <array>
#include <cmath>
#include <complex>
#include <numbers>

#include "adi/error.hpp"

namespace adi::finance {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

namespace {
double normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }
}  // namespace

Greeks black_scholes(OptionType type, double S, double K, double T, double r, double q, double sigma) {
  detail::require(S > 0 && K >= 0 && T > 0 && sigma >= 0 && std::isfinite(r) && std::isfinite(q),
                  "black_scholes: need spot > 0, strike >= 0, maturity > 0, volatility >= 0, finite rates");
  const double dq = std::exp(-q * T), dr = std::exp(-r * T);
  const double sign = type == OptionType::call ? 1.0 : -1.0;
  Greeks g;
  if (sigma * std::sqrt(T) < 1e-14 || K == 0.0) {
    // Deterministic forward (or a zero strike): the discounted intrinsic value of the forward.
    const double m = sign * (S * dq - K * dr);
    if (m > 0) {
      g.price = m;
      g.delta = sign * dq;
      g.theta = sign * (q * S * dq - r * K * dr);
      g.rho = sign * K * T * dr;
    }
    return g;
  }
  const double sq = sigma * std::sqrt(T);
  const double d1 = (std::log(S / K) + (r - q + 0.5 * sigma * sigma) * T) / sq, d2 = d1 - sq;
  const double n1 = normal_cdf(sign * d1), n2 = normal_cdf(sign * d2);
  g.price = sign * (S * dq * n1 - K * dr * n2);
  g.delta = sign * dq * n1;
  g.gamma = dq * normal_pdf(d1) / (S * sq);
  g.vega = S * dq * normal_pdf(d1) * std::sqrt(T);
  g.theta = -S * dq * normal_pdf(d1) * sigma / (2.0 * std::sqrt(T)) + sign * (q * S * dq * n1 - r * K * dr * n2);
  g.rho = sign * K * T * dr * n2;
  return g;
}

double margrabe(const BlackScholesModel& m, double T) {
  m.validate();
  detail::require(m.size() == 2, "margrabe: the exchange option needs a model of 2 assets, got " +
                                     ::adi::detail::number(m.size()));
  detail::require(T > 0, "margrabe: maturity must be > 0");
  const Asset &a = m.assets[0], &b = m.assets[1];
  const double s2 = a.volatility * a.volatility + b.volatility * b.volatility -
                    2.0 * m.corr(0, 1) * a.volatility * b.volatility;
  // Asset 2 as numeraire: a Black-Scholes call on S1/S2 with strike 1, "rate" q2.
  const double f1 = a.spot * std::exp(-a.dividend * T), f2 = b.spot * std::exp(-b.dividend * T);
  if (s2 * T < 1e-28) return std::max(f1 - f2, 0.0);
  const double sq = std::sqrt(s2 * T);
  const double d1 = (std::log(f1 / f2) + 0.5 * s2 * T) / sq;
  return f1 * normal_cdf(d1) - f2 * normal_cdf(d1 - sq);
}

double geometric_basket(const BlackScholesModel& m, const Contract& c) {
  m.validate();
  c.validate(m.size());
  detail::require(c.payoff == Payoff::geometric_basket,
                  std::string("geometric_basket: the contract's payoff is ") + payoff_name(c.payoff));
  const int n = m.size();
  const double T = c.maturity;
  // ln G_T = sum w_i ln S_i(T) is normal with mean ln G_0 + mu T and variance s2 T.
  double lnG0 = 0, mu = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const Asset& a = m.assets[i];
    const double w = c.weight(i, n);
    lnG0 += w * std::log(a.spot);
    mu += w * (m.rate - a.dividend - 0.5 * a.volatility * a.volatility);
    for (int j = 0; j < n; ++j) s2 += w * c.weight(j, n) * m.corr(i, j) * a.volatility * m.assets[j].volatility;
  }
  // E[G_T] = G_0 exp((mu + s2/2) T) = G_0 exp((r - q_eff) T).
  const double q_eff = m.rate - mu - 0.5 * s2;
  return black_scholes(c.type, std::exp(lnG0), c.strike, T, m.rate, q_eff, std::sqrt(s2)).price;
}

namespace {

using cplx = std::complex<double>;

// E[exp(i u ln S_T)] under Heston, in the form that stays on the principal branch
// of the logarithm (Albrecher, Mayer, Schoutens, Tistaert 2007).
cplx heston_cf(const HestonModel& h, double T, cplx u) {
  const cplx i(0.0, 1.0);
  const double s2 = h.sigma * h.sigma;
  const cplx b = h.kappa - h.rho * h.sigma * i * u;
  const cplx d = std::sqrt(b * b + s2 * (i * u + u * u));
  const cplx g = (b - d) / (b + d);
  const cplx e = std::exp(-d * T);
  const cplx C = i * u * (std::log(h.spot) + (h.rate - h.dividend) * T) +
                 h.kappa * h.theta / s2 * ((b - d) * T - 2.0 * std::log((1.0 - g * e) / (1.0 - g)));
  const cplx D = (b - d) / s2 * (1.0 - e) / (1.0 - g * e);
  return std::exp(C + D * h.v0);
}

// 16-point Gauss-Legendre nodes and weights on [-1, 1] (positive half).
constexpr std::array<double, 8> kGlX = {0.0950125098376374, 0.2816035507792589, 0.4580167776572274,
                                        0.6178762444026438, 0.7554044083550030, 0.8656312023878318,
                                        0.9445750230732326, 0.9894009349916499};
constexpr std::array<double, 8> kGlW = {0.1894506104550685, 0.1826034150449236, 0.1691565193950025,
                                        0.1495959888165767, 0.1246289712555339, 0.0951585116824928,
                                        0.0622535239386479, 0.0271524594117541};

}  // namespace

double heston(const HestonModel& h, OptionType type, double K, double T) {
  h.validate();
  detail::require(K > 0 && T > 0, "heston: strike and maturity must be > 0");
  const cplx i(0.0, 1.0);
  const double lnK = std::log(K);
  // E[S_T] = S e^{(r - q) T} (S is a martingale after discounting). Not phi(-i): with
  // kappa < rho sigma (e.g. kappa 0.3, rho 0.6, sigma 1.5) b + d = 0 there and the "little
  // trap" form divides by zero (issue 20: NaN for every rho > kappa / sigma).
  const cplx fwd = h.spot * std::exp((h.rate - h.dividend) * T);
  // P1 and P2 integrands at u > 0; at u -> 0 they tend to finite limits (u = 0 is not a node).
  auto integrands = [&](double u) {
    const cplx k = std::exp(-i * u * lnK) / (i * u);
    return std::array<double, 2>{std::real(k * heston_cf(h, T, cplx(u, -1.0)) / fwd),
                                 std::real(k * heston_cf(h, T, cplx(u, 0.0)))};
  };
  // Panels of width `w` until a whole panel contributes below 1e-14 (the integrands decay
  // like exp(-c u) with c ~ v0 T / 2 + ...; the cap keeps pathological inputs finite).
  const double w = 2.0;
  double p1 = 0, p2 = 0;
  for (int panel = 0; panel < 2000; ++panel) {
    const double a = panel * w, mid = a + 0.5 * w;
    double s1 = 0, s2 = 0;
    for (std::size_t k = 0; k < kGlX.size(); ++k)
      for (double sgn : {-1.0, 1.0}) {
        const auto f = integrands(mid + sgn * 0.5 * w * kGlX[k]);
        s1 += kGlW[k] * f[0];
        s2 += kGlW[k] * f[1];
      }
    s1 *= 0.5 * w;
    s2 *= 0.5 * w;
    p1 += s1;
    p2 += s2;
    if (panel > 4 && std::abs(s1) + std::abs(s2) < 1e-14) break;
  }
  p1 = 0.5 + p1 / std::numbers::pi;
  p2 = 0.5 + p2 / std::numbers::pi;
  const double call = h.spot * std::exp(-h.dividend * T) * p1 - K * std::exp(-h.rate * T) * p2;
  if (type == OptionType::call) return call;
  return call - h.spot * std::exp(-h.dividend * T) + K * std::exp(-h.rate * T);
}

std::optional<double> closed_form(const BlackScholesModel& m, const Contract& c) {
  m.validate();
  c.validate(m.size());
  if (c.exercise != Exercise::european) return std::nullopt;
  const int n = m.size();
  switch (c.payoff) {
    case Payoff::vanilla: {
      const Asset& a = m.assets[0];
      return black_scholes(c.type, a.spot, c.strike, c.maturity, m.rate, a.dividend, a.volatility).price;
    }
    case Payoff::basket:
    case Payoff::best_of:
    case Payoff::worst_of:
      if (n == 1) {
        const Asset& a = m.assets[0];
        const double w = c.payoff == Payoff::basket ? c.weight(0, 1) : 1.0;
        return w * black_scholes(c.type, a.spot, w > 0 ? c.strike / w : c.strike, c.maturity, m.rate, a.dividend,
                                 a.volatility).price;
      }
      return std::nullopt;
    case Payoff::geometric_basket: return geometric_basket(m, c);
    case Payoff::exchange: return margrabe(m, c.maturity);
    case Payoff::spread:
      if (c.strike == 0.0) {
        const double e = margrabe(m, c.maturity);  // max(S1 - S2, 0); the put by parity
        if (c.type == OptionType::call) return e;
        return e - m.assets[0].spot * std::exp(-m.assets[0].dividend * c.maturity) +
               m.assets[1].spot * std::exp(-m.assets[1].dividend * c.maturity);
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> closed_form(const HestonModel& h, const Contract& c) {
  h.validate();
  c.validate(1);
  if (c.exercise != Exercise::european || c.payoff != Payoff::vanilla) return std::nullopt;
  return heston(h, c.type, c.strike, c.maturity);
}

}  // namespace adi::finance
