#pragma once
// NEURON's membrane formulas, written once for the host (adi/hines_active.cpp) and the CUDA
// kernels (solvers/cuda/hines_active.cu): hh.mod's rate functions and its rates table
// (TABLE minf, mtau, hinf, htau, ninf, ntau FROM -100 TO 100 WITH 200, usetable_hh = 1, linear
// interpolation clamped to the ends), the cnexp update of a gate and hh's conductances.
// C++17 host-device code with no library header beyond <cmath>.
#include <cmath>

#if defined(__CUDACC__)
#define ADI_HH_HD __host__ __device__ __forceinline__
#else
#define ADI_HH_HD inline
#endif

namespace adi::membrane {

// The table: kHHPoints voltages -100, -99, ..., 100 mV; six columns of kHHPoints values each.
inline constexpr int kHHPoints = 201;
inline constexpr int kHHColumns = 6;  // minf, mtau, hinf, htau, ninf, ntau
inline constexpr int kHHTableSize = kHHPoints * kHHColumns;

// hh.mod's vtrap: x / (exp(x / y) - 1), with its limit near x = 0.
ADI_HH_HD double hh_vtrap(double x, double y) {
  return std::fabs(x / y) < 1e-6 ? y * (1 - x / y / 2) : x / (std::exp(x / y) - 1);
}

// hh.mod's rates(v) in double: out = {minf, mtau, hinf, htau, ninf, ntau}; q10 = 3^((celsius - 6.3) / 10).
ADI_HH_HD void hh_rates(double v, double q10, double out[kHHColumns]) {
  double alpha = .1 * hh_vtrap(-(v + 40), 10), beta = 4 * std::exp(-(v + 65) / 18), sum = alpha + beta;
  out[1] = 1 / (q10 * sum);
  out[0] = alpha / sum;
  alpha = .07 * std::exp(-(v + 65) / 20);
  beta = 1 / (std::exp(-(v + 35) / 10) + 1);
  sum = alpha + beta;
  out[3] = 1 / (q10 * sum);
  out[2] = alpha / sum;
  alpha = .01 * hh_vtrap(-(v + 55), 10);
  beta = .125 * std::exp(-(v + 65) / 80);
  sum = alpha + beta;
  out[5] = 1 / (q10 * sum);
  out[4] = alpha / sum;
}

// Fills table[column * kHHPoints + i] with the rates at v = -100 + i mV (in T).
template <class T>
inline void hh_fill_table(double celsius, T* table) {
  const double q10 = std::pow(3.0, (celsius - 6.3) / 10);
  double v = -100;
  for (int i = 0; i < kHHPoints; ++i, v += 1.0) {
    double r[kHHColumns];
    hh_rates(v, q10, r);
    for (int c = 0; c < kHHColumns; ++c) table[c * kHHPoints + i] = static_cast<T>(r[c]);
  }
}

// The interpolated rates at v (clamped to the table's ends, as NEURON does).
template <class T>
ADI_HH_HD void hh_table_rates(const T* table, T v, T out[kHHColumns]) {
  const T xi = v + T(100);
  int i = 0;
  T theta = 0;
  if (xi >= T(200)) {
    i = kHHPoints - 1;
  } else if (xi > T(0)) {
    i = static_cast<int>(xi);
    theta = xi - static_cast<T>(i);
  }
  const int j = i + 1 < kHHPoints ? i + 1 : kHHPoints - 1;
  for (int k = 0; k < kHHColumns; ++k) {
    const T* col = table + k * kHHPoints;
    out[k] = col[i] + theta * (col[j] - col[i]);
  }
}

// cnexp: state += (1 - exp(-dt / tau)) (inf - state).
template <class T>
ADI_HH_HD T cnexp(T state, T inf, T tau, T dt) {
  return state + (T(1) - std::exp(-dt / tau)) * (inf - state);
}

// hh's contribution at one compartment: diag += g_na + g_k + gl, rhs += g_na ena + g_k ek + gl el
// (gna, gk, gl in uS for the compartment's area, gel = gl * el).
template <class T>
ADI_HH_HD void hh_current(T gna, T gk, T gl, T gel, T ena, T ek, T m, T h, T n, T& diag, T& rhs) {
  const T g_na = gna * m * m * m * h;
  const T n2 = n * n;
  const T g_k = gk * n2 * n2;
  diag += g_na + g_k + gl;
  rhs += g_na * ena + g_k * ek + gel;
}

// Gates m, h, n advanced by cnexp with the rates at v.
template <class T>
ADI_HH_HD void hh_gates(const T* table, T v, T dt, T& m, T& h, T& n) {
  T r[kHHColumns];
  hh_table_rates(table, v, r);
  m = cnexp(m, r[0], r[1], dt);
  h = cnexp(h, r[2], r[3], dt);
  n = cnexp(n, r[4], r[5], dt);
}

}  // namespace adi::membrane
