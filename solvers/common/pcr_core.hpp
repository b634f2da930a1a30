#pragma once
// The PCR row combination (cyclic reduction, paper section II), written once: row i of a
// tridiagonal system takes k_lo times row i-s and k_hi times row i+s, which removes its
// couplings to x_{i-s} and x_{i+s} and leaves couplings at distance 2s:
//     k_lo = -a_i / b_{i-s},  k_hi = -c_i / b_{i+s}             (pcr_factor)
//     a'_i = k_lo a_{i-s},  c'_i = k_hi c_{i+s},
//     b'_i = b_i + k_lo c_{i-s} + k_hi a_{i+s},  d'_i = d_i + k_lo d_{i-s} + k_hi d_{i+s}
// (pcr_add for one neighbour, pcr_combine for both). Rows kept at a unit diagonal (the
// warp PCR of solvers/cuda/pcr_warp_core.cuh) have k_lo = -a_i, k_hi = -c_i
// (pcr_combine_unit) and rescale the combined row by 1/b'_i. Callers:
// solvers/cpu/pcr_thomas_large.cpp (the large-system PCR levels, host),
// solvers/cuda/pcr_warp_core.cuh (the reduced system of the Thomas-PCR kernels and its
// replay for shared bands).
#include "solvers/common/thomas_core.hpp"

namespace adi::common {

// The factor of a neighbour row: -(coupling) / (its diagonal), r = 1 / its diagonal.
template <class V, class R>
ADI_THOMAS_HD V pcr_factor(V coupling, R r) {
  return -coupling * r;
}

// x + k x_neighbour: one neighbour's contribution to b'_i or d'_i.
template <class V>
ADI_THOMAS_HD V pcr_add(V x, V k, V x_neighbour) {
  return x + k * x_neighbour;
}

// Both neighbours: x + k_lo x_lo + k_hi x_hi (in that order).
template <class V>
ADI_THOMAS_HD V pcr_combine(V x, V k_lo, V x_lo, V k_hi, V x_hi) {
  return pcr_add(pcr_add(x, k_lo, x_lo), k_hi, x_hi);
}

// Rows kept at a unit diagonal (k_lo = -a_i, k_hi = -c_i): x - a_i x_lo - c_i x_hi, the
// same combination with the factors' signs folded in (the form the warp PCR compiles best).
template <class V>
ADI_THOMAS_HD V pcr_combine_unit(V x, V a, V x_lo, V c, V x_hi) {
  return x - a * x_lo - c * x_hi;
}

}  // namespace adi::common
