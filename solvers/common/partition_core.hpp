#pragma once
// The partition method's row arithmetic, written once: a segment (chunk) of a tridiagonal
// line is eliminated by Thomas with its end rows kept as unknowns, so every row is
// expressed through the segment's ends and the ends form a smaller (reduced) system.
// Every partition solver runs these steps: the large-system solver
// (solvers/common/partition_large_math.hpp: host SIMD lanes and CUDA threads), the MPI
// partition passes (adi/mpi/distributed_tridiagonal.cpp on the host,
// solvers/cuda/partition_local_passes.cu on the device) and the Thomas-PCR hybrid's
// segments (solvers/cuda/pcr_warp_core.cuh, pcr_segment_registers.cuh).
//
// Sweeping rows s+1 .. with x_s as a parameter writes row i as
//     x_i + cp_i x_{i+1} + l_i x_s = dp_i,   l_i = -(a_i l_{i-1}) r_i   (l_s = -1),
// cp, dp, r the Thomas recurrence of thomas_core.hpp (partition_row). Substituting rows
// s+1 .. into row s as the sweep goes (products P_i = -(cp_i P_{i-1}), sums G and K:
// partition_accumulate) leaves row s coupled to x_s and the segment's last row only. The
// backward sweep carries the coupling to the right end the same way (partition_carry),
// and the last pass fills x_i = d'_i - a'_i x_left - c'_i x_right (partition_fill).
#include "solvers/common/thomas_core.hpp"

namespace adi::common {

// The coupling of row i to the left end after the forward sweep, l_i = -(a_i l_{i-1}) r_i
// (the first row after the end starts from l = -1, giving a r) ...
template <class V, class R>
ADI_THOMAS_HD V partition_spike(V a, V l_prev, R r) {
  return -(a * l_prev) * r;
}
// ... and the product -(c*_i p) that carries a coupling to the right end through row i
// (backward: the right spike c''_i = -(c*_i c''_{i+1}); forward: the running product of
// the reduced row, p_i = -(c*_i p_{i-1})).
template <class V>
ADI_THOMAS_HD V partition_carry(V cs, V p) {
  return -(cs * p);
}

// The partition method's last pass: a row eliminated in terms of its segment's ends,
// x_i = d'_i - a'_i x_left - c'_i x_right.
template <class V, class C>
ADI_THOMAS_HD V partition_fill(V d, C a, V x_left, C c, V x_right) {
  return d - a * x_left - c * x_right;
}

// One row of the sweep: given r = 1/pivot (thomas_pivot(a, b, cp)), cp, dp and l move to
// row i.
template <class V, class R>
ADI_THOMAS_HD void partition_row(V a, V c, V d, R r, V& cp, V& dp, V& l) {
  cp = c * r;
  dp = thomas_eliminate(d, a, dp, r);
  l = partition_spike(a, l, r);
}

// Row i substituted into the segment's first row: G += P dp_i, K += P l_i, P = -(cp_i P).
template <class V>
ADI_THOMAS_HD void partition_accumulate(V cp, V dp, V l, V& G, V& K, V& P) {
  G = G + P * dp;
  K = K + P * l;
  P = partition_carry(cp, P);
}

// The segment's first row once rows s+1 .. e-2 are substituted into it (a keeps its
// coupling to the previous segment): (b - c K) x_s + (c P) x_{e-1} = d - c G.
template <class V>
ADI_THOMAS_HD void partition_first_row(V b, V c, V d, V G, V K, V P, V& bF, V& cF, V& dF) {
  bF = b - c * K;
  cF = c * P;
  dF = d - c * G;
}

// The segment's last row e-1 with row e-2 substituted, left unscaled (the MPI passes; the
// large-system solver divides it by its pivot, partition_row):
// -(a l) x_s + (b - a cp) x_{e-1} + c x_e = d - a dp.
template <class V>
ADI_THOMAS_HD void partition_last_row(V a, V b, V d, V cp, V dp, V l, V& aE, V& bE, V& dE) {
  aE = -(a * l);
  bE = thomas_pivot(a, b, cp);
  dE = d - a * dp;
}

}  // namespace adi::common
