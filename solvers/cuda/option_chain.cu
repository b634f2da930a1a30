// Option chains on the GPU (option_chain.hpp). Two kernels:
//
// warp per contract (the default up to 512 nodes; option_chain_warp.hpp holds its
// arithmetic, shared with the host emulation the tests run): 32 lanes per contract, the line
// in registers and shared memory, every recurrence of the Brennan-Schwartz step a scan
// across the warp; no global memory is touched while stepping.
//
// thread per contract (any node count): every array
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
#include <cstring>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/device_guard.hpp"
#include "solvers/cuda/option_chain.hpp"
#include "solvers/cuda/option_chain_warp.hpp"

namespace adi::cuda_backend {

namespace {

using chain_math::payoff;
using chain_math::row;
using chain_math::Rows3;

// Grid (solvers/common/price_axis.hpp, as adi/finance's asset_axis) and smoothed payoff.
__global__ void chain_setup(const ChainContract* __restrict__ cs, long count, ChainSettings s, double* __restrict__ x,
                            double* __restrict__ u, int* __restrict__ spot_index) {
  const long c = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (c >= count) return;
  const ChainContract k = cs[c];
  const int n = s.nodes;
  const chain_math::Grid g = chain_math::make_grid(k, s);
  const long ia = g.spot_node();
  spot_index[c] = static_cast<int>(ia);
  for (long i = 0; i < n; ++i) {
    x[i * count + c] = g.node(i);
    u[i * count + c] = chain_math::smoothed_payoff(g, k, s.smoothing, i);
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

  double hist[3] = {u[sp * count + c], u[sp * count + c], u[sp * count + c]}, t[3] = {0.0, 0.0, 0.0};
  for (long q = 0; q < N; ++q) {
    const double ta = chain_math::time_level(k.maturity, N, s.step_grading, q);
    const double tb = chain_math::time_level(k.maturity, N, s.step_grading, q + 1);
    if (q < s.damping_steps) {
      const double tm = 0.5 * (ta + tb);
      step(ta, tm, 1.0);
      step(tm, tb, 1.0);
    } else {
      step(ta, tb, s.theta);
    }
    hist[0] = hist[1];
    hist[1] = hist[2];
    hist[2] = u[sp * count + c];
    t[0] = t[1];
    t[1] = t[2];
    t[2] = tb;
  }
  const chain_math::Greeks o = chain_math::greeks(u[(sp - 1) * count + c], u[sp * count + c], u[(sp + 1) * count + c],
                                                  X(sp) - X(sp - 1), X(sp + 1) - X(sp), hist, t, N);
  price[c] = o.price;
  delta[c] = o.delta;
  gamma[c] = o.gamma;
  theta_out[c] = o.theta;
}

// ---- warp per contract ----

constexpr unsigned kFull = 0xffffffffu;

// A struct of doubles through the warp's shuffles, down (from lane + d) or up (from lane - d).
template <bool Down, class T>
__device__ __forceinline__ T shfl_t(const T& v, int d) {
  constexpr int k = sizeof(T) / sizeof(double);
  double a[k];
  memcpy(a, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < k; ++i) a[i] = Down ? __shfl_down_sync(kFull, a[i], d) : __shfl_up_sync(kFull, a[i], d);
  T r;
  memcpy(&r, a, sizeof(T));
  return r;
}

// One lane of the warp (chain_math::HostWarp is its host emulation; same scans, same order).
template <int M>
struct DeviceWarp {
  int lane;
  chain_math::LaneState<M> s;
  template <class F>
  __device__ __forceinline__ void each(F&& f) {
    f(lane, s);
  }
  __device__ __forceinline__ void sync() { __syncwarp(); }
  __device__ __forceinline__ void neighbours() {
    const double l = __shfl_up_sync(kFull, s.u[M - 1], 1), r = __shfl_down_sync(kFull, s.u[0], 1);
    s.left = lane > 0 ? l : 0.0;
    s.right = lane + 1 < chain_math::kLanes ? r : 0.0;
  }
  template <class T, class Op>
  __device__ __forceinline__ void scan_down(T chain_math::LaneState<M>::*m, Op op, T id) {
    T v = s.*m;
#pragma unroll
    for (int o = 1; o < chain_math::kLanes; o <<= 1) {
      const T other = shfl_t<true>(v, o);
      if (lane + o < chain_math::kLanes) v = op(v, other);
    }
    const T e = shfl_t<true>(v, 1);
    s.*m = lane + 1 < chain_math::kLanes ? e : id;
  }
  template <class T, class Op>
  __device__ __forceinline__ void scan_up(T chain_math::LaneState<M>::*m, Op op, T id) {
    T v = s.*m;
#pragma unroll
    for (int o = 1; o < chain_math::kLanes; o <<= 1) {
      const T other = shfl_t<false>(v, o);
      if (lane >= o) v = op(v, other);
    }
    const T e = shfl_t<false>(v, 1);
    s.*m = lane > 0 ? e : id;
  }
};

constexpr int kWarpsPerBlock = 2;

template <int M>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    chain_warp(const ChainContract* __restrict__ cs, long count, ChainSettings st, double* __restrict__ out) {
  extern __shared__ double shared[];
  const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
  const long c = blockIdx.x * static_cast<long>(kWarpsPerBlock) + wi;
  if (c >= count) return;  // the whole warp leaves together
  double* base = shared + wi * 4 * chain_math::kLanes * M;
  constexpr int P = chain_math::kLanes * M;
  const chain_math::WarpConsts K{base, base + P, base + 2 * P, base + 3 * P};
  DeviceWarp<M> w{lane, {}};
  chain_math::Greeks o{NAN, NAN, NAN, NAN};
  const ChainContract k = cs[c];
  chain_math::warp_price<M>(w, K, k, st, &o);
  const long ia = chain_math::make_grid(k, st).spot_node();
  if (lane == (k.put ? ia : P - 1 - ia) / M) {  // the spot's lane holds the results
    out[c] = o.price;
    out[count + c] = o.delta;
    out[2 * count + c] = o.gamma;
    out[3 * count + c] = o.theta;
  }
}

template <int M>
void launch_warp(const ChainContract* dc, long count, const ChainSettings& s, double* out, cudaStream_t st) {
  const std::size_t shared = sizeof(double) * 4 * chain_math::kLanes * M * kWarpsPerBlock;
  ADI_CUDA_CHECK(cudaFuncSetAttribute(chain_warp<M>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(shared)));
  const unsigned blocks = static_cast<unsigned>((count + kWarpsPerBlock - 1) / kWarpsPerBlock);
  chain_warp<M><<<blocks, kWarpsPerBlock * 32, shared, st>>>(dc, count, s, out);
}

void launch_warp_kernel(const ChainContract* dc, long count, const ChainSettings& s, double* out, cudaStream_t st) {
  switch (chain_math::warp_positions(s.nodes)) {
    case 2: launch_warp<2>(dc, count, s, out, st); break;
    case 4: launch_warp<4>(dc, count, s, out, st); break;
    case 7: launch_warp<7>(dc, count, s, out, st); break;
    case 10: launch_warp<10>(dc, count, s, out, st); break;
    case 13: launch_warp<13>(dc, count, s, out, st); break;
    case 16: launch_warp<16>(dc, count, s, out, st); break;
    default: throw InvalidArgument("option_chain_price: the warp kernel holds at most 512 nodes");
  }
}

}  // namespace

void option_chain_price(const ChainContract* contracts, long count, const ChainSettings& s, double* price,
                        double* delta, double* gamma, double* theta, double* seconds, double* setup_seconds,
                        void* stream) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  const DeviceGuard guard(s.device);  // the contracts' device; the caller's back on return
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
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
  const bool warp = s.kernel == 2 || (s.kernel == 0 && s.nodes <= kChainWarpMaxNodes);
  try {
    ADI_CUDA_CHECK(cudaMalloc(&dc, sizeof(ChainContract) * count));
    ADI_CUDA_CHECK(cudaMalloc(&out, sizeof(double) * 4 * count));
    if (!warp) {  // the warp kernel keeps the line on chip
      ADI_CUDA_CHECK(cudaMalloc(&x, sizeof(double) * cells));
      ADI_CUDA_CHECK(cudaMalloc(&u, sizeof(double) * cells));
      ADI_CUDA_CHECK(cudaMalloc(&f, sizeof(double) * cells));
      ADI_CUDA_CHECK(cudaMalloc(&iw, sizeof(double) * cells));
      ADI_CUDA_CHECK(cudaMalloc(&spot, sizeof(int) * count));
    }
    ADI_CUDA_CHECK(cudaMemcpyAsync(dc, contracts, sizeof(ChainContract) * count, cudaMemcpyHostToDevice, st));
    // NaN-poison the outputs: a contract the kernel skipped reads NaN, not stale memory.
    ADI_CUDA_CHECK(cudaMemsetAsync(out, 0xff, sizeof(double) * 4 * count, st));
    const int threads = 128;
    const unsigned blocks = static_cast<unsigned>((count + threads - 1) / threads);
    if (!warp) {
      chain_setup<<<blocks, threads, 0, st>>>(dc, count, s, x, u, spot);
      ADI_CUDA_CHECK(cudaGetLastError());
    }
    ADI_CUDA_CHECK(cudaStreamSynchronize(st));
    *setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    cudaEvent_t e0, e1;
    ADI_CUDA_CHECK(cudaEventCreate(&e0));
    ADI_CUDA_CHECK(cudaEventCreate(&e1));
    ADI_CUDA_CHECK(cudaEventRecord(e0, st));
    if (warp) {
      launch_warp_kernel(dc, count, s, out, st);  // (grids and payoffs built inside: counted here)
    } else {
      chain_step<<<blocks, threads, 0, st>>>(dc, count, s, x, u, f, iw, spot, out, out + count, out + 2 * count,
                                      out + 3 * count);
    }
    ADI_CUDA_CHECK(cudaGetLastError());
    ADI_CUDA_CHECK(cudaEventRecord(e1, st));
    ADI_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    ADI_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *seconds = 1e-3 * ms;
    double* const results[4] = {price, delta, gamma, theta};
    for (int k = 0; k < 4; ++k)
      ADI_CUDA_CHECK(cudaMemcpyAsync(results[k], out + k * count, sizeof(double) * count, cudaMemcpyDeviceToHost, st));
    ADI_CUDA_CHECK(cudaStreamSynchronize(st));
  } catch (...) {
    release();
    throw;
  }
  release();
}

}  // namespace adi::cuda_backend
