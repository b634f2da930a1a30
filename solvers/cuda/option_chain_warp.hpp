#pragma once
// The option-chain kernels' arithmetic, written once for the device and the host
// (solvers/cuda/option_chain.cu compiles it for the GPU; tests compile the same text as
// host code). Two parts:
//
// 1. The contract's grid, rows and payoff (chain_math::Grid = solvers/common/price_axis.hpp,
//    node_row, smoothed_payoff): adi/finance's asset_axis (the same axis), build_rows and
//    payoff_on_grid for one price-space axis, used by both kernels (thread per contract and
//    warp per contract).
//
// 2. The warp-per-contract step (warp_price): 32 lanes price one contract, lane L holding
//    the M consecutive "positions" L M .. L M + M - 1 of the line in registers (the
//    solution u and two per-step arrays); the operator's rows and the exercise values sit
//    in the warp's shared memory, [j * 32 + lane], conflict-free. Nothing touches global
//    memory while the contract steps. Positions run in the direction of the
//    Brennan-Schwartz elimination: a put's node i is position i, a call's is P - 1 - i
//    (P = 32 M), so the elimination always runs from the top position down and the
//    substitution with the exercise constraint from position 0 up; positions beyond the
//    n nodes are decoupled identity rows. One step of the theta-method is the host sweep's
//    (adi/finance/american.cpp) recurrences, each split into a sequential part inside a
//    lane's M positions and a 5-level scan across the 32 lanes (shuffles):
//      - pivots w_p = b_p - c_p a_{p+1} / w_{p+1}: a Moebius map, i.e. 2 x 2 matrices
//        [[b_p, -c_p a_{p+1}], [1, 0]] acting on (w, 1) projectively (normalised);
//      - eliminated right side f_p = r_p - (c_p / w_{p+1}) f_{p+1}: affine maps;
//      - substitution u_p = max(F_p + B_p u_{p-1}, g_p), F = f / w, B = -a / w: maps
//        x -> clamp(A + B x, lo, hi), closed under composition for either sign of B (B
//        is negative where convection beats diffusion next to S = 0).
//    Every scan combines in a fixed order, so the host emulation (HostWarp, one loop per
//    lane) and the GPU compute the same sums in the same order.
#include <math.h>
#include <string.h>

#include "solvers/common/price_axis.hpp"
#include "solvers/cuda/option_chain.hpp"

#if defined(__CUDACC__)
#define ADI_CHAIN_HD __host__ __device__ __forceinline__
#else
#define ADI_CHAIN_HD inline
#endif
// A loop kept rolled on the device (code run once per contract).
#if defined(__CUDA_ARCH__)
#define ADI_CHAIN_ROLLED _Pragma("unroll 1")
#else
#define ADI_CHAIN_ROLLED
#endif

namespace adi::cuda_backend::chain_math {

struct Rows3 {
  double l, d, u;
};

// Row i of A (price space, linear-extrapolation ghosts at both ends), as build_rows; the
// caller passes mirrored neighbours at the ends.
ADI_CHAIN_HD Rows3 row(long i, long n, double xm, double x0, double xp, double h2, double b, double r) {
  const double hm = x0 - xm, hp = xp - x0;
  const double D = h2 * x0 * x0, V = b * x0;
  // build_rows' three-point weights over one division (FP64 division is the costly
  // instruction): 1/(hm (hm + hp)) = hp q, 1/(hp (hm + hp)) = hm q, 1/(hm hp) = (hm + hp) q.
  const double q = 1.0 / (hm * hp * (hm + hp));
  double lo = hp * (2.0 * D - V * hp) * q;
  double di = (V * (hp - hm) - 2.0 * D) * (hm + hp) * q - r;
  double up = hm * (2.0 * D + V * hm) * q;
  if (i == 0) {
    di += 2.0 * lo;
    up -= lo;
    lo = 0.0;
  }
  if (i == n - 1) {
    di += 2.0 * up;
    lo -= up;
    up = 0.0;
  }
  return {lo, di, up};
}

ADI_CHAIN_HD double payoff(double S, double K, int put) { return fmax(put ? K - S : S - K, 0.0); }

// The contract's grid: one asset's price axis (solvers/common/price_axis.hpp, the host's too).
using Grid = ::adi::common::PriceAxis;
ADI_CHAIN_HD Grid make_grid(const ChainContract& k, const ChainSettings& s) {
  namespace c = ::adi::common;
  const double center = k.strike > 0 ? k.strike : k.spot, sd = c::price_axis_sd(k.volatility, k.maturity);
  const double cluster =
      s.cluster > 0 ? s.cluster : c::price_axis_cluster(k.spot, center, sd, (k.rate - k.dividend) * k.maturity);
  return c::price_axis(k.spot, center, sd, s.width, c::price_axis_far(k.spot, center, sd, s.width), s.nodes, cluster,
                       s.intensity, s.even_spot);
}

// Row i with the spacing mirrored at the ends.
ADI_CHAIN_HD Rows3 node_row(const Grid& g, long i, double h2, double b, double r) {
  const long n = g.n;
  const double x0 = g.node(i);
  const double xm = i > 0 ? g.node(i - 1) : 0.0, xp = i < n - 1 ? g.node(i + 1) : 0.0;
  const double xl = i > 0 ? xm : x0 - (xp - x0);
  const double xr = i < n - 1 ? xp : x0 + (x0 - xm);
  return row(i, n, xl, x0, xr, h2, b, r);
}

// The payoff at node i, the cell average (128 midpoint samples) where the strike cuts the
// cell between the midpoints to the neighbours (payoff_on_grid's smoothing).
ADI_CHAIN_HD double smoothed_payoff(const Grid& g, const ChainContract& k, int smoothing, long i) {
  const double xi = g.node(i);
  double v = payoff(xi, k.strike, k.put);
  if (smoothing && i > 0 && i < g.n - 1) {
    const double a = 0.5 * (g.node(i - 1) + xi), b = 0.5 * (xi + g.node(i + 1));
    const double ma = a - k.strike, mb = b - k.strike;
    if ((ma > 0 || mb > 0) && (ma < 0 || mb < 0)) {
      constexpr int m = 128;
      double sum = 0.0;
      for (int q = 0; q < m; ++q) sum += payoff(a + (b - a) * (q + 0.5) / m, k.strike, k.put);
      v = sum / double(m);
    }
  }
  return v;
}

// Time level q of N (adi::finance::detail::time_level): T (q / N)^p.
ADI_CHAIN_HD double time_level(double T, long N, double grading, long q) {
  if (q >= N) return T;
  if (grading == 1.0) return T / double(N) * double(q);
  return T * pow(double(q) / double(N), grading);
}

// Price, delta, gamma at the spot node (3-point formulas on the non-uniform grid) and
// theta = -dV/dtau from the last three time levels.
struct Greeks {
  double price, delta, gamma, theta;
};
ADI_CHAIN_HD Greeks greeks(double um, double u0, double up, double hm, double hp, const double* hist,
                           const double* t, long N) {
  Greeks o;
  o.price = u0;
  o.delta = (-hp / (hm * (hm + hp))) * um + ((hp - hm) / (hm * hp)) * u0 + (hm / (hp * (hm + hp))) * up;
  o.gamma = 2.0 * (um / (hm * (hm + hp)) - u0 / (hm * hp) + up / (hp * (hm + hp)));
  const double a1 = t[1] - t[0], a2 = t[2] - t[1];
  o.theta = N >= 2 ? -(hist[0] * a2 / (a1 * (a1 + a2)) - hist[1] * (a1 + a2) / (a1 * a2) +
                       hist[2] * (2 * a2 + a1) / (a2 * (a1 + a2)))
                   : NAN;
  return o;
}

// ---- warp per contract -------------------------------------------------------------

constexpr int kLanes = 32;

struct Moebius {  // [[a, b], [c, d]]
  double a, b, c, d;
};
struct Affine {  // x -> a + b x
  double a, b;
};
struct Clamp {  // x -> min(max(a + b x, lo), hi)
  double a, b, lo, hi;
};

// p q, scaled by a power of two (the map is projective).
ADI_CHAIN_HD Moebius times(const Moebius& p, const Moebius& q) {
  Moebius r{p.a * q.a + p.b * q.c, p.a * q.b + p.b * q.d, p.c * q.a + p.d * q.c, p.c * q.b + p.d * q.d};
  const double big = fmax(fmax(fabs(r.a), fabs(r.b)), fmax(fabs(r.c), fabs(r.d)));
  if (big > 0 && big < INFINITY) {
    int e = 0;
    frexp(big, &e);
    const double s = ldexp(1.0, -e);
    r = {r.a * s, r.b * s, r.c * s, r.d * s};
  }
  return r;
}
// p after q: x -> p(q(x)).
ADI_CHAIN_HD Affine after(const Affine& p, const Affine& q) { return {p.a + p.b * q.a, p.b * q.b}; }
ADI_CHAIN_HD double clamp_to(double x, double lo, double hi) { return fmin(fmax(x, lo), hi); }
ADI_CHAIN_HD Clamp after(const Clamp& p, const Clamp& q) {
  // p.a + p.b clamp(y, q.lo, q.hi) = clamp(p.a + p.b y, L, H), then clamp(clamp(., L, H), p.lo, p.hi)
  // = clamp(., clamp(L, p.lo, p.hi), clamp(H, p.lo, p.hi)) (intervals).
  double L = p.a, H = p.a;
  if (p.b > 0) {
    L = p.a + p.b * q.lo;
    H = p.a + p.b * q.hi;
  } else if (p.b < 0) {
    L = p.a + p.b * q.hi;
    H = p.a + p.b * q.lo;
  }
  return {p.a + p.b * q.a, p.b * q.b, clamp_to(L, p.lo, p.hi), clamp_to(H, p.lo, p.hi)};
}

// Per lane: the solution at its M positions, the per-step arrays, the scan values.
template <int M>
struct LaneState {
  double u[M], F[M], B[M];
  double left, right;  // u just below / above the lane's positions
  double ratio_in;     // 1 / w of the position above the lane's top one (0 at the top)
  Moebius mob;
  Affine aff;
  Clamp clp;
  double hist[3], t[3];  // the spot's value at the last three time levels (theta)
};

// The warp's constants in shared memory: rows in position order and the exercise values
// (-inf: European, or a padding position), [j * 32 + lane].
struct WarpConsts {
  double *sub, *dia, *sup, *g;
};

ADI_CHAIN_HD int at(int lane, int j) { return j * kLanes + lane; }

// One theta-method step of size dt (implicit weight th) with the exercise constraint.
template <int M, class W>
ADI_CHAIN_HD void warp_step(W& w, const WarpConsts& K, double dt, double th) {
  using S = LaneState<M>;
  const double e = (1.0 - th) * dt, sc = th * dt;
  w.neighbours();
  // Explicit part into F; this lane's product of pivot maps, top position first applied.
  w.each([&](int lane, S& s) {
    double prev = s.left;
#pragma unroll
    for (int j = 0; j < M; ++j) {
      const int q = at(lane, j);
      const double next = j + 1 < M ? s.u[j + 1] : s.right;
      s.F[j] = s.u[j] + e * (K.sub[q] * prev + K.dia[q] * s.u[j] + K.sup[q] * next);
      prev = s.u[j];
    }
    double a_up = lane + 1 < kLanes ? -sc * K.sub[at(lane + 1, 0)] : 0.0;
    Moebius R{1.0, 0.0, 0.0, 1.0};
#pragma unroll
    for (int j = M - 1; j >= 0; --j) {
      const int q = at(lane, j);
      const double b = 1.0 - sc * K.dia[q], ca = -sc * K.sup[q] * a_up;
      R = {b * R.a - ca * R.c, b * R.b - ca * R.d, R.a, R.b};
      a_up = -sc * K.sub[q];
    }
    s.mob = times(R, Moebius{1.0, 0.0, 0.0, 1.0});  // normalised
  });
  w.scan_down(&S::mob, [](const Moebius& lo, const Moebius& hi) { return times(lo, hi); },
              Moebius{1.0, 0.0, 0.0, 1.0});
  // Pivots (1/w kept in B) and this lane's affine map f_in -> f at its lowest position.
  w.each([&](int lane, S& s) {
    double ratio = s.mob.c / s.mob.a;  // 1 / w above the lane (its first column is (w, 1))
    s.ratio_in = ratio;
    double a_up = lane + 1 < kLanes ? -sc * K.sub[at(lane + 1, 0)] : 0.0;
    Affine A{0.0, 1.0};
#pragma unroll
    for (int j = M - 1; j >= 0; --j) {
      const int q = at(lane, j);
      const double b = 1.0 - sc * K.dia[q], m = -sc * K.sup[q] * ratio;
      const double iw = 1.0 / (b - m * a_up);
      A = {s.F[j] - m * A.a, -m * A.b};
      s.B[j] = iw;
      ratio = iw;
      a_up = -sc * K.sub[q];
    }
    s.aff = A;
  });
  w.scan_down(&S::aff, [](const Affine& lo, const Affine& hi) { return after(lo, hi); }, Affine{0.0, 1.0});
  // Eliminated right side, F = f / w, B = -a / w; this lane's substitution map.
  w.each([&](int lane, S& s) {
    double f = s.aff.a, ratio = s.ratio_in;
#pragma unroll
    for (int j = M - 1; j >= 0; --j) {
      const int q = at(lane, j);
      const double m = -sc * K.sup[q] * ratio;
      f = s.F[j] - m * f;
      const double iw = s.B[j];
      s.F[j] = f * iw;
      s.B[j] = sc * K.sub[q] * iw;
      ratio = iw;
    }
    Clamp C{0.0, 1.0, -INFINITY, INFINITY};
#pragma unroll
    for (int j = 0; j < M; ++j) C = after(Clamp{s.F[j], s.B[j], K.g[at(lane, j)], INFINITY}, C);
    s.clp = C;
  });
  w.scan_up(&S::clp, [](const Clamp& hi, const Clamp& lo) { return after(hi, lo); },
            Clamp{0.0, 1.0, -INFINITY, INFINITY});
  // Substitution with the exercise constraint (Brennan-Schwartz).
  w.each([&](int lane, S& s) {
    double v = clamp_to(s.clp.a, s.clp.lo, s.clp.hi);
#pragma unroll
    for (int j = 0; j < M; ++j) {
      v = fmax(s.F[j] + s.B[j] * v, K.g[at(lane, j)]);
      s.u[j] = v;
    }
  });
}

// Prices contract k with one warp: grid, rows and payoff into K, the time loop, greeks.
template <int M, class W>
ADI_CHAIN_HD void warp_price(W& w, const WarpConsts& K, const ChainContract& k, const ChainSettings& st, Greeks* out) {
  using S = LaneState<M>;
  constexpr int P = kLanes * M;
  const Grid g = make_grid(k, st);
  const long n = st.nodes;
  const double h2 = 0.5 * k.volatility * k.volatility, b = k.rate - k.dividend, r = k.rate;
  auto node_of = [&](int p) { return k.put ? long(p) : long(P - 1 - p); };
  auto pos_of = [&](long i) { return k.put ? int(i) : int(P - 1 - i); };
  // Position q's row and exercise value for node i; positions past the n nodes are
  // decoupled identity rows.
  auto put_node = [&](int q, long i) {
    if (i >= 0 && i < n) {
      const Rows3 R = node_row(g, i, h2, b, r);
      K.sub[q] = k.put ? R.l : R.u;
      K.dia[q] = R.d;
      K.sup[q] = k.put ? R.u : R.l;
      K.g[q] = k.american ? payoff(g.node(i), k.strike, k.put) : -INFINITY;
    } else {
      K.sub[q] = K.dia[q] = K.sup[q] = 0.0;
      K.g[q] = -INFINITY;
    }
  };
  auto payoff_at = [&](long i) { return i >= 0 && i < n ? smoothed_payoff(g, k, st.smoothing, i) : 0.0; };
#if defined(ADI_CUDA_UNROLL_ALL)
  w.each([&](int lane, S& s) {
#pragma unroll
    for (int j = 0; j < M; ++j) {
      const long i = node_of(lane * M + j);
      put_node(at(lane, j), i);
      s.u[j] = payoff_at(i);
    }
  });
#else
  // The set-up runs once per contract: its loops over the lane's positions stay rolled (one
  // copy of the grid maths, ~7 sinh a position, instead of M; issue 15 item 8), the payoff
  // passing through K.g (this lane's own slots) into the registers; the same values as the
  // unrolled form ADI_CUDA_UNROLL_ALL keeps.
  w.each([&](int lane, S& s) {
    ADI_CHAIN_ROLLED
    for (int j = 0; j < M; ++j) K.g[at(lane, j)] = payoff_at(node_of(lane * M + j));
#pragma unroll
    for (int j = 0; j < M; ++j) s.u[j] = K.g[at(lane, j)];
    ADI_CHAIN_ROLLED
    for (int j = 0; j < M; ++j) put_node(at(lane, j), node_of(lane * M + j));
  });
#endif
  w.sync();
  const int ps = pos_of(g.spot_node()), lane_s = ps / M, j_s = ps % M;
  w.each([&](int lane, S& s) {
    if (lane != lane_s) return;
#pragma unroll
    for (int j = 0; j < M; ++j)
      if (j == j_s) s.hist[0] = s.hist[1] = s.hist[2] = s.u[j];
    s.t[0] = s.t[1] = s.t[2] = 0.0;
  });
  const long N = st.steps;
  for (long q = 0; q < N; ++q) {
    const double ta = time_level(k.maturity, N, st.step_grading, q);
    const double tb = time_level(k.maturity, N, st.step_grading, q + 1);
    // Damping steps: two implicit half steps; then one theta step. One call site, so the
    // step is inlined once (it is ~94% of the kernel's code: three copies tripled the compile,
    // issue 15 item 8); the same operations in the same order as three calls (the form
    // ADI_CUDA_UNROLL_ALL keeps for comparison).
    const bool damp = q < st.damping_steps;
    const double tm = 0.5 * (ta + tb);
#if defined(ADI_CUDA_UNROLL_ALL)
    if (damp) {
      warp_step<M>(w, K, tm - ta, 1.0);
      warp_step<M>(w, K, tb - tm, 1.0);
    } else {
      warp_step<M>(w, K, tb - ta, st.theta);
    }
#else
    ADI_CHAIN_ROLLED
    for (int h = 0; h < (damp ? 2 : 1); ++h)
      warp_step<M>(w, K, damp ? (h == 0 ? tm - ta : tb - tm) : tb - ta, damp ? 1.0 : st.theta);
#endif
    w.each([&](int lane, S& s) {
      if (lane != lane_s) return;
      s.hist[0] = s.hist[1];
      s.t[0] = s.t[1];
      s.hist[1] = s.hist[2];
      s.t[1] = s.t[2];
#pragma unroll
      for (int j = 0; j < M; ++j)
        if (j == j_s) s.hist[2] = s.u[j];
      s.t[2] = tb;
    });
  }
  // The solution into shared memory (over g), then the spot's lane reads its neighbours.
  w.sync();
  w.each([&](int lane, S& s) {
#pragma unroll
    for (int j = 0; j < M; ++j) K.g[at(lane, j)] = s.u[j];
  });
  w.sync();
  w.each([&](int lane, S& s) {
    if (lane != lane_s) return;
    auto U = [&](long i) {
      const int p = pos_of(i);
      return K.g[at(p / M, p % M)];
    };
    const long ia = g.spot_node();
    const double hm = g.node(ia) - g.node(ia - 1), hp = g.node(ia + 1) - g.node(ia);
    *out = greeks(U(ia - 1), U(ia), U(ia + 1), hm, hp, s.hist, s.t, N);
  });
}

// Positions per lane for n nodes: the smallest offered M with 32 M >= n (0: too many).
ADI_CHAIN_HD int warp_positions(long n) {
  constexpr int offered[] = {2, 4, 7, 10, 13, 16};
  for (int m : offered)
    if (kLanes * m >= n) return m;
  return 0;
}
static_assert(kChainWarpMaxNodes == kLanes * 16, "warp_positions offers up to 16 per lane");

#if !defined(__CUDACC__)
// The warp kernel's lanes emulated on the host: each phase runs lane after lane, each scan
// combines in the device's Kogge-Stone order.
template <int M>
struct HostWarp {
  LaneState<M> s[kLanes];
  template <class F>
  void each(F&& f) {
    for (int l = 0; l < kLanes; ++l) f(l, s[l]);
  }
  void sync() {}
  void neighbours() {
    for (int l = 0; l < kLanes; ++l) {
      s[l].left = l > 0 ? s[l - 1].u[M - 1] : 0.0;
      s[l].right = l + 1 < kLanes ? s[l + 1].u[0] : 0.0;
    }
  }
  // Exclusive scan from the top lane down: lane L gets op(C_{L+1}, op(..., C_31)).
  template <class T, class Op>
  void scan_down(T LaneState<M>::*m, Op op, T id) {
    T v[kLanes], old[kLanes];
    for (int l = 0; l < kLanes; ++l) v[l] = s[l].*m;
    for (int o = 1; o < kLanes; o <<= 1) {
      for (int l = 0; l < kLanes; ++l) old[l] = v[l];
      for (int l = 0; l + o < kLanes; ++l) v[l] = op(old[l], old[l + o]);
    }
    for (int l = 0; l < kLanes; ++l) s[l].*m = l + 1 < kLanes ? v[l + 1] : id;
  }
  // Exclusive scan from lane 0 up: lane L gets op(C_{L-1}, op(..., C_0)).
  template <class T, class Op>
  void scan_up(T LaneState<M>::*m, Op op, T id) {
    T v[kLanes], old[kLanes];
    for (int l = 0; l < kLanes; ++l) v[l] = s[l].*m;
    for (int o = 1; o < kLanes; o <<= 1) {
      for (int l = 0; l < kLanes; ++l) old[l] = v[l];
      for (int l = o; l < kLanes; ++l) v[l] = op(old[l], old[l - o]);
    }
    for (int l = 0; l < kLanes; ++l) s[l].*m = l > 0 ? v[l - 1] : id;
  }
};

template <int M>
inline Greeks emulate_one(const ChainContract& k, const ChainSettings& st) {
  HostWarp<M> w;
  static thread_local double mem[4 * kLanes * 16];
  const WarpConsts K{mem, mem + kLanes * M, mem + 2 * kLanes * M, mem + 3 * kLanes * M};
  Greeks out{NAN, NAN, NAN, NAN};
  warp_price<M>(w, K, k, st, &out);
  return out;
}

// The warp kernel run on the host, one contract after another (tests: the same arithmetic
// as the GPU's, checked against adi::finance's host chain without a device).
inline void option_chain_warp_emulate(const ChainContract* cs, long count, const ChainSettings& st, double* price,
                                      double* delta, double* gamma, double* theta) {
  for (long c = 0; c < count; ++c) {
    Greeks o{NAN, NAN, NAN, NAN};
    switch (warp_positions(st.nodes)) {
      case 2: o = emulate_one<2>(cs[c], st); break;
      case 4: o = emulate_one<4>(cs[c], st); break;
      case 7: o = emulate_one<7>(cs[c], st); break;
      case 10: o = emulate_one<10>(cs[c], st); break;
      case 13: o = emulate_one<13>(cs[c], st); break;
      case 16: o = emulate_one<16>(cs[c], st); break;
      default: break;
    }
    price[c] = o.price;
    delta[c] = o.delta;
    gamma[c] = o.gamma;
    theta[c] = o.theta;
  }
}

#endif  // !__CUDACC__

}  // namespace adi::cuda_backend::chain_math
