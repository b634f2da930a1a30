#pragma once
// The tests' own Heston reference price, independent of adi/finance/closed_form.cpp:
// Lewis's single-integral formula (Lewis 2001) with Gatheral's form of the characteristic
// function, integrated by Simpson's rule (the library uses Heston's P1/P2 with the
// Albrecher et al. form and Gauss-Legendre panels).
#include <cmath>
#include <complex>
#include <functional>
#include <numbers>

#include "adi/finance/model.hpp"

namespace adi::finance::testing {

using cplx = std::complex<double>;

// Lewis (2001): C = S e^{-qT} - sqrt(S K) e^{-(r+q)T/2} / pi
//                   * int_0^inf Re[e^{i u k} phi(u - i/2)] / (u^2 + 1/4) du,
// k = ln(S/K) + (r - q) T, phi the characteristic function of ln(S_T/S_0) - (r - q) T.
inline double lewis_call(double S, double K, double T, double r, double q, const std::function<cplx(cplx)>& phi) {
  const double k = std::log(S / K) + (r - q) * T;
  auto f = [&](double u) {
    const cplx i(0, 1);
    return std::real(std::exp(i * u * k) * phi(cplx(u, -0.5))) / (u * u + 0.25);
  };
  // Composite Simpson on [0, 400] with h = 0.01: the integrands below decay much faster.
  const double h = 0.01;
  const int n = 40000;
  double s = f(0.0) + f(n * h);
  for (int j = 1; j < n; ++j) s += (j % 2 ? 4.0 : 2.0) * f(j * h);
  const double integral = s * h / 3.0;
  return S * std::exp(-q * T) - std::sqrt(S * K) * std::exp(-0.5 * (r + q) * T) / std::numbers::pi * integral;
}

// Gatheral, "The Volatility Surface" (2006), ch. 2: the Heston characteristic function of
// the de-drifted log price, written with r_- = (beta - d) / sigma^2.
inline cplx gatheral_cf(const HestonModel& h, double T, cplx u) {
  const cplx i(0, 1);
  const cplx alpha = -0.5 * u * u - 0.5 * i * u;
  const cplx beta = h.kappa - h.rho * h.sigma * i * u;
  const double gamma = 0.5 * h.sigma * h.sigma;
  const cplx d = std::sqrt(beta * beta - 4.0 * alpha * gamma);
  const cplx rm = (beta - d) / (h.sigma * h.sigma), rp = (beta + d) / (h.sigma * h.sigma);
  const cplx g = rm / rp;
  const cplx e = std::exp(-d * T);
  const cplx D = rm * (1.0 - e) / (1.0 - g * e);
  const cplx C = h.kappa * (rm * T - 2.0 / (h.sigma * h.sigma) * std::log((1.0 - g * e) / (1.0 - g)));
  return std::exp(C * h.theta + D * h.v0);
}

inline double test_heston_call(const HestonModel& h, double K, double T) {
  return lewis_call(h.spot, K, T, h.rate, h.dividend, [&](cplx u) { return gatheral_cf(h, T, u); });
}

// American puts under Heston: the reference prices of Ikonen & Toivanen, "Efficient numerical
// methods for pricing American options under stochastic volatility", report B12/2005,
// University of Jyvaskyla (as quoted in QuantLib's test-suite/fdheston.cpp,
// testFdmHestonIkonenToivanen; the benchmark of Clarke & Parrott): K = 10, T = 0.25, r = 0.1,
// q = 0, kappa = 5, theta = 0.16, sigma = 0.9, rho = 0.1, v0 = 0.0625, at S = 8 .. 12.
inline constexpr double kIkonenToivanenSpots[5] = {8, 9, 10, 11, 12};
inline constexpr double kIkonenToivanenPut[5] = {2.00000, 1.10763, 0.520038, 0.213681, 0.082046};
inline constexpr double kIkonenToivanenStrike = 10, kIkonenToivanenMaturity = 0.25;
inline HestonModel ikonen_toivanen_model(double spot) {
  HestonModel h;
  h.spot = spot;
  h.v0 = 0.0625;
  h.kappa = 5;
  h.theta = 0.16;
  h.sigma = 0.9;
  h.rho = 0.1;
  h.rate = 0.1;
  h.dividend = 0;
  return h;
}

}  // namespace adi::finance::testing
