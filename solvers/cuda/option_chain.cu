// Option chains on the GPU (option_chain.hpp): one thread per contract, every array
// interleaved contract-fastest ([node * count + contract]) so a warp's loads coalesce.
// Per step two passes over the nodes, each reading and writing little more than the
// minimum: towards the exercise end the explicit part, the band factorisation and the
// elimination fused (read x, u; write f, 1/w), back the Brennan-Schwartz substitution
// u_i = max(.., payoff_i) (read x, f, 1/w; write u). The operator's rows are recomputed
// from x (adi/finance's build_rows formulas) instead of stored, and the whole time loop
// runs in one launch. The arithmetic is the host sweep's (american.cpp), so prices equal
// price_one_asset to round-off.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/option_chain.hpp"

namespace adi::cuda_backend {

namespace {

struct Rows3 {
  double l, d, u;
};

// Row i of A (price space, linear-extrapolation ghosts at both ends), as build_rows.
__device__ __forceinline__ Rows3 row(int i, int n, double xm, double x0, double xp, double h2, double b, double r) {
  const double hm = x0 - xm, hp = xp - x0;  // the caller passes mirrored neighbours at the ends
  const double D = h2 * x0 * x0, V = b * x0;
  // build_rows' three-point weights over one division (FP64 division is the costly
  // instruction here): 1/(hm (hm + hp)) = hp q, 1/(hp (hm + hp)) = hm q, 1/(hm hp) = (hm + hp) q.
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

__device__ __forceinline__ double payoff(double S, double K, int put) { return fmax(put ? K - S : S - K, 0.0); }

// Grid (asset_axis + concentrated_axis of adi/finance/grid.cpp) and smoothed payoff.
__global__ void chain_setup(const ChainContract* __restrict__ cs, long count, ChainSettings s, double* __restrict__ x,
                            double* __restrict__ u, int* __restrict__ spot_index) {
  const long c = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (c >= count) return;
  const ChainContract k = cs[c];
  const int n = s.nodes;
  const double center0 = k.strike > 0 ? k.strike : k.spot;
  const double sd = fmax(k.volatility, 0.05) * sqrt(k.maturity);
  const double top = fmax(k.spot, center0);
  const double hi = top * exp(s.width * sd);
  const double cluster = s.cluster * center0 * sd;
  const double intensity = s.intensity > 0 ? s.intensity : hi / cluster;
  const double center = fmin(fmax(center0, 0.0), hi);
  const double cw = hi / intensity;
  const double x0 = asinh((0.0 - center) / cw), x1 = asinh((hi - center) / cw);
  const double xa = asinh((k.spot - center) / cw);
  long ia = llround((xa - x0) / (x1 - x0) * double(n - 1));
  ia = ia < 1 ? 1 : (ia > n - 2 ? n - 2 : ia);
  const double dxi = (xa - x0) / double(ia);
  auto node = [&](long i) {
    if (i == 0) return 0.0;
    if (i == ia) return k.spot;
    return center + cw * sinh(x0 + dxi * double(i));
  };
  spot_index[c] = static_cast<int>(ia);
  for (long i = 0; i < n; ++i) {
    const double xi = node(i);
    x[i * count + c] = xi;
    double v = payoff(xi, k.strike, k.put);
    if (s.smoothing && i > 0 && i < n - 1) {
      const double a = 0.5 * (node(i - 1) + xi), b = 0.5 * (xi + node(i + 1));
      const double ma = a - k.strike, mb = b - k.strike;
      if ((ma > 0 || mb > 0) && (ma < 0 || mb < 0)) {  // the strike cuts the cell
        constexpr int m = 128;
        double sum = 0.0;
        for (int q = 0; q < m; ++q) sum += payoff(a + (b - a) * (q + 0.5) / m, k.strike, k.put);
        v = sum / double(m);
      }
    }
    u[i * count + c] = v;
  }
}

// The whole time loop for one contract per thread.
__global__ void chain_step(const ChainContract* __restrict__ cs, long count, ChainSettings s,
                           const double* __restrict__ x, double* __restrict__ u, double* __restrict__ f,
                           double* __restrict__ iw, const int* __restrict__ spot_index, double* __restrict__ price,
                           double* __restrict__ delta, double* __restrict__ gamma, double* __restrict__ theta_out) {
  const long c = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (c >= count) return;
  const ChainContract k = cs[c];
  const int n = s.nodes;
  const long N = s.steps;
  const double h2 = 0.5 * k.volatility * k.volatility, b = k.rate - k.dividend, r = k.rate;
  const bool low = k.put != 0;
  const double K = k.strike;
  const double lowest = -INFINITY;
  auto X = [&](long i) { return x[i * count + c]; };
  auto G = [&](double S) { return k.american ? payoff(S, K, k.put) : lowest; };
  const int sp = spot_index[c];

  auto step = [&](double tau0, double tau1, double th) {
    const double dt = tau1 - tau0;
    const double e = (1.0 - th) * dt, sc = th * dt;
    if (low) {
      // Downwards: explicit part, factorisation, elimination.
      double xp = X(n - 1), x0 = X(n - 2 >= 0 ? n - 1 : 0), xm = X(n - 2);
      double up_u = 0.0, u0 = u[(n - 1) * count + c], um = u[(n - 2) * count + c];
      double f_next = 0.0, iw_next = 0.0, a_next = 0.0;
      for (long i = n - 1; i >= 0; --i) {
        // Neighbours: at the ends the spacing is mirrored (build_rows' hm/hp there).
        const double xl = i > 0 ? xm : x0 - (xp - x0);
        const double xr = i < n - 1 ? xp : x0 + (x0 - xm);
        const Rows3 R = row(static_cast<int>(i), n, xl, x0, xr, h2, b, r);
        double fi = u0 + e * ((i > 0 ? R.l * um : 0.0) + R.d * u0 + (i < n - 1 ? R.u * up_u : 0.0));
        const double ai = -sc * R.l, bi = 1.0 - sc * R.d, ci = -sc * R.u;
        double iwi;
        if (i == n - 1) {
          iwi = 1.0 / bi;
        } else {
          const double mi = ci * iw_next;
          iwi = 1.0 / (bi - mi * a_next);
          fi -= mi * f_next;
        }
        f[i * count + c] = fi;
        iw[i * count + c] = iwi;
        f_next = fi;
        iw_next = iwi;
        a_next = ai;
        // Slide the window down.
        if (i > 0) {
          up_u = u0;
          u0 = um;
          xp = x0;
          x0 = xm;
          if (i >= 2) {
            um = u[(i - 2) * count + c];
            xm = X(i - 2);
          }
        }
      }
      // Upwards: substitution with the exercise constraint.
      double prev = 0.0;
      double xl = 0.0, xc = X(0), xr = X(1);
      for (long i = 0; i < n; ++i) {
        const double xL = i > 0 ? xl : xc - (xr - xc);
        const double xR = i < n - 1 ? xr : xc + (xc - xl);
        const Rows3 R = row(static_cast<int>(i), n, xL, xc, xR, h2, b, r);
        const double fi = f[i * count + c], iwi = iw[i * count + c];
        const double v = i == 0 ? fi * iwi : (fi - (-sc * R.l) * prev) * iwi;
        prev = fmax(v, G(xc));
        u[i * count + c] = prev;
        xl = xc;
        xc = xr;
        if (i + 2 < n) xr = X(i + 2);
      }
    } else {
      // Upwards: explicit part, factorisation, elimination (the mirror image).
      double xl = X(0), xc = X(0), xr = X(1);
      double um_u = 0.0, u0 = u[c], up_u = u[count + c];
      double f_prev = 0.0, iw_prev = 0.0, c_prev = 0.0;
      for (long i = 0; i < n; ++i) {
        const double xL = i > 0 ? xl : xc - (xr - xc);
        const double xR = i < n - 1 ? xr : xc + (xc - xl);
        const Rows3 R = row(static_cast<int>(i), n, xL, xc, xR, h2, b, r);
        double fi = u0 + e * ((i > 0 ? R.l * um_u : 0.0) + R.d * u0 + (i < n - 1 ? R.u * up_u : 0.0));
        const double ai = -sc * R.l, bi = 1.0 - sc * R.d, ci = -sc * R.u;
        double iwi;
        if (i == 0) {
          iwi = 1.0 / bi;
        } else {
          const double mi = ai * iw_prev;
          iwi = 1.0 / (bi - mi * c_prev);
          fi -= mi * f_prev;
        }
        f[i * count + c] = fi;
        iw[i * count + c] = iwi;
        f_prev = fi;
        iw_prev = iwi;
        c_prev = ci;
        if (i + 1 < n) {
          um_u = u0;
          u0 = up_u;
          xl = xc;
          xc = xr;
          if (i + 2 < n) {
            up_u = u[(i + 2) * count + c];
            xr = X(i + 2);
          }
        }
      }
      double next = 0.0;
      double xr2 = 0.0, xc2 = X(n - 1), xl2 = X(n - 2);
      for (long i = n - 1; i >= 0; --i) {
        const double xL = i > 0 ? xl2 : xc2 - (xr2 - xc2);
        const double xR = i < n - 1 ? xr2 : xc2 + (xc2 - xl2);
        const Rows3 R = row(static_cast<int>(i), n, xL, xc2, xR, h2, b, r);
        const double fi = f[i * count + c], iwi = iw[i * count + c];
        const double v = i == n - 1 ? fi * iwi : (fi - (-sc * R.u) * next) * iwi;
        next = fmax(v, G(xc2));
        u[i * count + c] = next;
        xr2 = xc2;
        xc2 = xl2;
        if (i >= 2) xl2 = X(i - 2);
      }
    }
  };

  const double T = k.maturity;
  double hist0 = u[sp * count + c], hist1 = hist0, hist2 = hist0, t0 = 0.0, t1 = 0.0, t2 = 0.0;
  // Time levels as adi::finance::detail::time_level.
  auto level = [&](long q) {
    if (q >= N) return T;
    if (s.step_grading == 1.0) return T / double(N) * double(q);
    return T * pow(double(q) / double(N), s.step_grading);
  };
  for (long q = 0; q < N; ++q) {
    const double ta = level(q), tb = level(q + 1);
    if (q < s.damping_steps) {
      const double tm = 0.5 * (ta + tb);
      step(ta, tm, 1.0);
      step(tm, tb, 1.0);
    } else {
      step(ta, tb, s.theta);
    }
    hist0 = hist1;
    hist1 = hist2;
    hist2 = u[sp * count + c];
    t0 = t1;
    t1 = t2;
    t2 = tb;
  }
  const double u0 = u[sp * count + c], um = u[(sp - 1) * count + c], up = u[(sp + 1) * count + c];
  const double hm = X(sp) - X(sp - 1), hp = X(sp + 1) - X(sp);
  price[c] = u0;
  delta[c] = (-hp / (hm * (hm + hp))) * um + ((hp - hm) / (hm * hp)) * u0 + (hm / (hp * (hm + hp))) * up;
  gamma[c] = 2.0 * (um / (hm * (hm + hp)) - u0 / (hm * hp) + up / (hp * (hm + hp)));
  const double a1 = t1 - t0, a2 = t2 - t1;
  theta_out[c] = N >= 2 ? -(hist0 * a2 / (a1 * (a1 + a2)) - hist1 * (a1 + a2) / (a1 * a2) +
                            hist2 * (2 * a2 + a1) / (a2 * (a1 + a2)))
                        : NAN;
}

// Selects the plan's device, restores the caller's.
struct DeviceGuard {
  int previous = 0;
  explicit DeviceGuard(int device) {
    ADI_CUDA_CHECK(cudaGetDevice(&previous));
    ADI_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous); }
};

}  // namespace

void option_chain_price(const ChainContract* contracts, long count, const ChainSettings& s, double* price,
                        double* delta, double* gamma, double* theta, double* seconds, double* setup_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  DeviceGuard guard(s.device);
  const std::size_t cells = static_cast<std::size_t>(count) * static_cast<std::size_t>(s.nodes);
  ChainContract* dc = nullptr;
  double *x = nullptr, *u = nullptr, *f = nullptr, *iw = nullptr, *out = nullptr;
  int* spot = nullptr;
  auto release = [&] {
    cudaFree(dc);
    cudaFree(x);
    cudaFree(u);
    cudaFree(f);
    cudaFree(iw);
    cudaFree(out);
    cudaFree(spot);
  };
  try {
    ADI_CUDA_CHECK(cudaMalloc(&dc, sizeof(ChainContract) * count));
    ADI_CUDA_CHECK(cudaMalloc(&x, sizeof(double) * cells));
    ADI_CUDA_CHECK(cudaMalloc(&u, sizeof(double) * cells));
    ADI_CUDA_CHECK(cudaMalloc(&f, sizeof(double) * cells));
    ADI_CUDA_CHECK(cudaMalloc(&iw, sizeof(double) * cells));
    ADI_CUDA_CHECK(cudaMalloc(&out, sizeof(double) * 4 * count));
    ADI_CUDA_CHECK(cudaMalloc(&spot, sizeof(int) * count));
    ADI_CUDA_CHECK(cudaMemcpy(dc, contracts, sizeof(ChainContract) * count, cudaMemcpyHostToDevice));
    // NaN-poison the outputs: a contract the kernel skipped reads NaN, not stale memory.
    ADI_CUDA_CHECK(cudaMemset(out, 0xff, sizeof(double) * 4 * count));
    const int threads = 128;
    const unsigned blocks = static_cast<unsigned>((count + threads - 1) / threads);
    chain_setup<<<blocks, threads>>>(dc, count, s, x, u, spot);
    ADI_CUDA_CHECK(cudaGetLastError());
    ADI_CUDA_CHECK(cudaDeviceSynchronize());
    *setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    cudaEvent_t e0, e1;
    ADI_CUDA_CHECK(cudaEventCreate(&e0));
    ADI_CUDA_CHECK(cudaEventCreate(&e1));
    ADI_CUDA_CHECK(cudaEventRecord(e0));
    chain_step<<<blocks, threads>>>(dc, count, s, x, u, f, iw, spot, out, out + count, out + 2 * count,
                                    out + 3 * count);
    ADI_CUDA_CHECK(cudaGetLastError());
    ADI_CUDA_CHECK(cudaEventRecord(e1));
    ADI_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    ADI_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *seconds = 1e-3 * ms;
    ADI_CUDA_CHECK(cudaMemcpy(price, out, sizeof(double) * count, cudaMemcpyDeviceToHost));
    ADI_CUDA_CHECK(cudaMemcpy(delta, out + count, sizeof(double) * count, cudaMemcpyDeviceToHost));
    ADI_CUDA_CHECK(cudaMemcpy(gamma, out + 2 * count, sizeof(double) * count, cudaMemcpyDeviceToHost));
    ADI_CUDA_CHECK(cudaMemcpy(theta, out + 3 * count, sizeof(double) * count, cudaMemcpyDeviceToHost));
  } catch (...) {
    release();
    throw;
  }
  release();
}

}  // namespace adi::cuda_backend
