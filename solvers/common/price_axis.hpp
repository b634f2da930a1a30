#pragma once
// One asset's price axis for the option pricers, written once for the host (adi/finance's
// asset_axis, every one-asset price-space grid) and the option chain's GPU kernels
// (solvers/cuda/option_chain_warp.hpp, which build each contract's grid on the device).
#include <math.h>

#if defined(__CUDACC__)
#define ADI_PRICE_AXIS_HD __host__ __device__ __forceinline__
#else
#define ADI_PRICE_AXIS_HD inline
#endif

namespace adi::common {

// The axis: n nodes on [0, far], far = max(spot, center) e^{width sd} (or an upper barrier),
// sd the spread of ln S_T (sigma sqrt(T), floored), the spot on node ia. Below
// kGeometricFromSd a sinh map in S clustered at `center` (the strike), cluster sd wide in units
// of center (concentrated_axis of adi/finance/grid.cpp with lo = 0); from it on the nodes are
// spaced evenly in ln(S + e0): S = e^y - e0, y the same sinh map on [y0, ln(far + e0)],
// y0 = ln(min(spot, center)) - width sd, e0 = e^y0 (geometric above e0, the value's own scale
// there; S = 0 the first node, the cells growing smoothly from it). The S map widens its
// cluster with sd: at sd = 3.3 (sigma 0.6, T = 30) the cells at the spot were 74 wide and
// prices 20-32% off, against 0.01-1.7% for QuantLib's FdBlackScholesVanillaEngine on the same
// 201 nodes and 100 steps. Below the switch the S map is up to 2x more accurate (sd 0.4-0.6,
// strikes 80-125: max errors 1.5-4.7e-4 against 3-8e-4), above it the log spacing (sd
// 0.63-0.85 with strong drifts: 3.7e-3 against 1.4e-2; sd 1.1-3.3: 0.5-1.1e-2 against
// 6-31e-2): docs/finance.md, "Long maturities and high volatilities".
constexpr double kGeometricFromSd = 0.6;

// The spread of ln S_T, sigma sqrt(T); a floor of 0.05 on sigma keeps a zero-volatility
// asset's axis non-degenerate.
ADI_PRICE_AXIS_HD double price_axis_sd(double volatility, double T) { return fmax(volatility, 0.05) * sqrt(T); }

// The sinh map of in 't Hout & Foulon: n nodes x_i = center + cw sinh(x0 + dxi i) on [lo, hi]
// (center clamped into it, cw = (hi - lo) / intensity), the xi step set so that the anchor is node
// ia exactly (its nearest; even_spot: an even node, for nested Richardson grids). Node 0 is lo and
// node ia the anchor itself (at(i) gives the map's value there). adi/finance's
// concentrated_axis is this map on the host; price_axis below builds on it.
struct SinhMap {
  double center, cw, x0, dxi;
  long ia;
  ADI_PRICE_AXIS_HD double at(long i) const { return center + cw * sinh(x0 + dxi * double(i)); }
};
ADI_PRICE_AXIS_HD SinhMap sinh_map(double lo, double hi, double center, double intensity, double anchor, long n,
                                   int even_spot) {
  center = fmin(fmax(center, lo), hi);
  const double cw = (hi - lo) / intensity;
  const double x0 = asinh((lo - center) / cw), x1 = asinh((hi - center) / cw);
  const double xa = asinh((anchor - center) / cw);
  const double z = (xa - x0) / (x1 - x0) * double(n - 1);
  long ia = even_spot ? 2 * llround(0.5 * z) : llround(z);
  if (even_spot) ia = ia < 2 ? 2 : (ia > n - 3 ? ((n - 3) / 2) * 2 : ia);
  ia = ia < 1 ? 1 : (ia > n - 2 ? n - 2 : ia);
  return {center, cw, x0, (xa - x0) / double(ia), ia};
}

struct PriceAxis {
  SinhMap map;     // in S, or in y = ln(S + e0)
  double spot;
  double e0;       // the shift of the nodes e^y - e0 (0 above a lower barrier)
  double lo;       // the first node: 0, or a lower barrier
  int geometric;   // 1: nodes e^y - e0 (from kGeometricFromSd on); 0: the sinh map in S
  long n;
  ADI_PRICE_AXIS_HD long spot_node() const { return map.ia; }
  ADI_PRICE_AXIS_HD double node(long i) const {
    if (i == 0) return lo;
    if (i == map.ia) return spot;
    const double v = map.at(i);
    return geometric ? exp(v) - e0 : v;
  }
};

// The default cluster width in sd (Method::cluster = 0): 3 where the forward spot e^{drift}
// (drift = (r - q) T) is near the strike, tightening to 1 as z = |ln(forward / center)| / sd
// grows, smoothly (1 + 2 / (1 + z^2); a step would make the grid, and so the price, jump
// along a strike ladder). 3 sd is best at the money (201 nodes, sigma 0.2, T = 1: 1.5e-4
// against 4.2e-4 for 1 sd); far strikes and strong drifts want the nodes at the strike: over
// sigma 0.05-1.5, T 0.01-30, r -5/0/10%, q 0/8%, K 50/100/200 the worst cells went 2.1e-3 ->
// 1.2e-3 (sigma 0.05, T 0.25), 3.7e-3 -> 1.8e-3 (0.6, 0.25), 1.1e-2 -> 5.3e-3 (0.2, 30), against
// QuantLib's 0.4-6e-3 there (docs/finance.md, "Long maturities and high volatilities").
ADI_PRICE_AXIS_HD double price_axis_cluster(double spot, double center0, double sd, double drift) {
  const double z = fabs(log(spot / center0) + drift) / sd;
  return 1.0 + 2.0 / (1.0 + z * z);
}

// The far end without an upper barrier: max(spot, center) e^{width sd}.
ADI_PRICE_AXIS_HD double price_axis_far(double spot, double center0, double sd, double width) {
  return fmax(spot, center0) * exp(width * sd);
}
// far: the far end (an upper barrier, else price_axis_far); cluster: the cluster's width in sd;
// intensity > 0 overrides it (the map's range over the cluster width, as Method::intensity);
// even_spot: the spot on an even node (nested Richardson grids); barrier: a lower barrier (the
// first node; 0: none), taken in the ln S form only (the S map above a barrier: concentrated_axis).
ADI_PRICE_AXIS_HD PriceAxis price_axis(double spot, double center0, double sd, double width, double far, long n,
                                       double cluster, double intensity, int even_spot, double barrier = 0.0) {
  const bool geometric = sd >= kGeometricFromSd;
  // Above a barrier L the nodes are L e^y', evenly in ln S from ln L (e0 = 0); from S = 0 they
  // are e^y - e0, e0 = e^{ln min(spot, center) - width sd}.
  const double e0 = geometric && barrier <= 0 ? exp(log(fmin(spot, center0)) - width * sd) : 0.0;
  const double lo = geometric ? (barrier > 0 ? log(barrier) : log(e0)) : 0.0;
  const double hi = geometric ? log(far + e0) : far;
  const double cwidth = geometric ? cluster * sd : cluster * center0 * sd;
  const double in = intensity > 0 ? intensity : (hi - lo) / cwidth;
  const SinhMap map = sinh_map(lo, hi, geometric ? log(center0 + e0) : center0, in, geometric ? log(spot + e0) : spot,
                               n, even_spot);
  return {map, spot, e0, geometric ? fmax(barrier, 0.0) : 0.0, geometric ? 1 : 0, n};
}

}  // namespace adi::common
