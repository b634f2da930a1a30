// GPU block-tridiagonal benchmark: adi::BlockTridiagonalPlan on Executor::cuda() per
// block size M = 2..8, precision, kernel (warp shuffles / shared memory) and layout
// (interleaved, figures 14-15; system-contiguous, figure 17; each also with column-major
// blocks, "-colmaj", read in place as a Fortran code stores them), the CFD grid entry point
// (lines along x, y, z of an array-of-structures or structure-of-arrays 3D field), with
// the device's copy bandwidth and fp64/fp32 FMA rate measured in the same run.
//
// Sizes: the paper's table III/IV for the GPU (N = 128 block rows, 96 for M = 7, 8;
// P = 65536 systems, 32768 for M = 7, 8). Median of --reps (20) CUDA-event timings after
// 3 warm-ups, through the public plan (pivot check and its stream sync included).
// Per row: time per block row; effective GB/s = the minimum traffic (A, B, C, d read, u
// written: 3M^2 + 2M values per block row) and its % of copy; "moved" GB/s also counts
// the factor round trips the algorithm needs (C*_i written and read: 2M^2, d*_i via u:
// 2M), whose ratio to the minimum caps effective bandwidth at (3M^2+2M)/(5M^2+4M) of
// copy (57% for M = 2, 58% for M = 4); GFLOP/s of (14/3)M^3 + 6M^2 per block row and its
// % of the measured FMA peak; "roof" = the bandwidth-bound GFLOP/s at copy speed on the
// minimum traffic (the best any block Thomas could do); resid = max relative residual
// |A u_{i-1} + B u_i + C u_{i+1} - d| / (sum of |terms|) over every system.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adi/block_tridiagonal.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "benchmarks/cuda_bench_util.cuh"

namespace {

using adi::index_t;

int g_reps = 20;
std::string g_ms;       // --m=2,3,4: only these block sizes (empty: all)
std::string g_layouts;  // --layout=interleaved,contiguous: only these batch layouts (empty: all)
std::string g_kernels;  // --kernel=shuffle: only these kernels (shuffle, shared; empty: both)
index_t g_systems = 0;  // --systems=P: P systems in the batch and periodic rows (0: the paper's sizes)

// Systems in a batch or periodic row of block size m: --systems, else the paper's P (65536, 32768 for M = 7, 8;
// a sixteenth with --quick).
index_t batch_systems(int m, bool quick) {
  return g_systems > 0 ? g_systems : (m <= 6 ? 65536 : 32768) / (quick ? 16 : 1);
}

bool listed(const std::string& list, const std::string& item) {
  if (list.empty()) return true;
  return ("," + list + ",").find("," + item + ",") != std::string::npos;
}

__device__ __forceinline__ double hash01(unsigned long long k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return double(k >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;  // [-1, 1)
}

// Value of block entry (r, q) in the layout's storage order (adi::block_entry, which is a host
// constexpr function: this file is compiled without --expt-relaxed-constexpr).
__host__ __device__ inline index_t entry(const adi::BlockLineSet& l, index_t r, index_t q) {
  return l.order == adi::BlockOrder::column_major ? q * l.m + r : r * l.m + q;
}

// One thread per (system, block row, r): row r of A_i, B_i, C_i and d_i[r], block
// diagonally dominant, at the layout's offsets.
template <class T>
__global__ void fill(adi::BlockLineSet l, bool periodic, T* a, T* b, T* c, T* d) {
  const index_t m = l.m, total = l.count0 * l.count1 * l.n * m;
  for (index_t t = blockIdx.x * index_t(blockDim.x) + threadIdx.x; t < total; t += index_t(gridDim.x) * blockDim.x) {
    const index_t r = t % m, i = (t / m) % l.n, sys = t / (m * l.n);
    const index_t l0 = sys % l.count0, l1 = sys / l.count0;
    const index_t ob = l0 * l.blocks.system0 + l1 * l.blocks.system1 + i * l.blocks.row;
    const index_t ov = l0 * l.vectors.system0 + l1 * l.vectors.system1 + i * l.vectors.row;
    double off = 0;
    for (index_t q = 0; q < m; ++q) {
      const index_t e = ob + entry(l, r, q) * l.blocks.component;
      const unsigned long long key = (unsigned long long)(t * m + q) * 4;
      const double av = hash01(key), bv = q == r ? 0.0 : hash01(key + 1), cv = hash01(key + 2);
      a[e] = T(av), b[e] = T(bv), c[e] = T(cv);
      off += fabs(av) * (periodic || i > 0) + fabs(bv) + fabs(cv) * (periodic || i + 1 < l.n);
    }
    b[ob + entry(l, r, r) * l.blocks.component] = T(off + 1.0);
    d[ov + r * l.vectors.component] = T(hash01((unsigned long long)t * 4 + 3));
  }
}

// One thread per system: the largest relative residual, as float bits (non-negative
// floats order like their bit patterns).
template <class T>
__global__ void residual(adi::BlockLineSet l, bool periodic, const T* a, const T* b, const T* c, const T* d,
                         const T* u, unsigned* worst) {
  const index_t sys = blockIdx.x * index_t(blockDim.x) + threadIdx.x;
  if (sys >= l.count0 * l.count1) return;
  const index_t m = l.m, l0 = sys % l.count0, l1 = sys / l.count0;
  const index_t ob0 = l0 * l.blocks.system0 + l1 * l.blocks.system1;
  const index_t ov0 = l0 * l.vectors.system0 + l1 * l.vectors.system1;
  float w = 0;
  for (index_t i = 0; i < l.n; ++i)
    for (index_t r = 0; r < m; ++r) {
      double res = -double(d[ov0 + i * l.vectors.row + r * l.vectors.component]), scale = fabs(res);
      for (index_t q = 0; q < m; ++q) {
        const index_t e = ob0 + i * l.blocks.row + entry(l, r, q) * l.blocks.component;
        auto add = [&](const T* blk, index_t row) {
          const double t = double(blk[e]) * double(u[ov0 + row * l.vectors.row + q * l.vectors.component]);
          res += t, scale += fabs(t);
        };
        if (i > 0 || periodic) add(a, (i + l.n - 1) % l.n);
        add(b, i);
        if (i + 1 < l.n || periodic) add(c, (i + 1) % l.n);
      }
      const float rel = isfinite(res) ? float(fabs(res) / scale) : 1e30f;
      w = fmaxf(w, rel);
    }
  atomicMax(worst, __float_as_uint(w));
}

// Dependent FMA chains, 8 independent per thread: the arithmetic peak we quote.
template <class T>
__global__ void fma_kernel(T* out, int iters) {
  T x[8];
  for (int k = 0; k < 8; ++k) x[k] = T(threadIdx.x + k) * T(1e-3);
  const T y = T(0.999999), z = T(1e-7);
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = fma(x[k], y, z);
  T s = 0;
  for (int k = 0; k < 8; ++k) s += x[k];
  if (s == T(12345.678)) out[0] = s;
}

// Median of `reps` timed runs after 3 warm-ups (no preparation).
template <class F>
double median_ms(F&& f, int reps) {
  return adi::bench::median_ms(f, reps, {}, 3);
}

double g_copy = 0;                       // GB/s, read + write
double g_peak64 = 0, g_peak32 = 0;       // GFLOP/s, measured

void measure_device() {
  const adi::bench::CopyBandwidth bw = adi::bench::measure_copy(10, 3, 132 * 16, 256);
  const double gbs_memcpy = bw.memcpy_gbs, gbs_kernel = bw.kernel_gbs;
  g_copy = bw.best();
  adi::bench::Dev<double> d(1);  // the FMA chains write out[0] only if their sum hits a chosen value
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const int iters = 1 << 14, blocks = p.multiProcessorCount * 8, threads = 256;
  const double flops = 2.0 * 8 * double(iters) * blocks * threads;
  const double t64 = median_ms([&] { fma_kernel<double><<<blocks, threads>>>(d.p, iters); }, 5);
  const double t32 = median_ms([&] { fma_kernel<float><<<blocks, threads>>>(reinterpret_cast<float*>(d.p), iters); }, 5);
  g_peak64 = flops / t64 / 1e6;
  g_peak32 = flops / t32 / 1e6;
  std::printf("device: %s, %d SMs, %.0f MHz (cudaDevAttrClockRate)\n", p.name, p.multiProcessorCount,
              clock_khz / 1e3);
  std::printf("copy bandwidth (read+write, 1 GiB): cudaMemcpy D2D %.0f GB/s, copy kernel %.0f GB/s -> 100%% = %.0f GB/s\n",
              gbs_memcpy, gbs_kernel, g_copy);
  std::printf("FMA peak measured (8 chains/thread): fp64 %.1f TFLOP/s, fp32 %.1f TFLOP/s; nominal fp64 at this "
              "clock: %d SMs x 64 FMA x 2 x %.2f GHz = %.1f TFLOP/s\n\n",
              g_peak64 / 1e3, g_peak32 / 1e3, p.multiProcessorCount, clock_khz / 1e6,
              p.multiProcessorCount * 128.0 * clock_khz / 1e9);
}

double flops_per_row(int m) { return 14.0 / 3.0 * m * m * m + 6.0 * m * m; }

struct Config {
  std::string layout;
  adi::BlockLineSet l;
  bool periodic = false;
};

template <class T>
void run_config(const Config& cfg, adi::BlockKernel kernel) {
  if (!listed(g_kernels, kernel == adi::BlockKernel::cuda_block_thomas_shared ? "shared" : "shuffle")) return;
  const adi::BlockLineSet& l = cfg.l;
  const int m = l.m;
  const adi::Executor exec = adi::Executor::cuda();
  adi::Array<T> a(adi::block_span(l), exec), b(adi::block_span(l), exec), c(adi::block_span(l), exec);
  adi::Array<T> d(adi::vector_span(l), exec), u(adi::vector_span(l), exec);
  fill<T><<<4096, 256>>>(l, cfg.periodic, a.data(), b.data(), c.data(), d.data());
  CK(cudaGetLastError());
  adi::BlockTridiagonalPlan<T> plan(exec, l, {kernel, 0, cfg.periodic});
  const double ms = median_ms([&] { plan.solve({a.data(), b.data(), c.data()}, d.data(), u.data()); }, g_reps);
  unsigned* worst;
  CK(cudaMalloc(&worst, sizeof(unsigned)));
  CK(cudaMemset(worst, 0, sizeof(unsigned)));
  const index_t systems = l.count0 * l.count1;
  residual<T><<<unsigned((systems + 127) / 128), 128>>>(l, cfg.periodic, a.data(), b.data(), c.data(), d.data(),
                                                        u.data(), worst);
  unsigned h = 0;
  CK(cudaMemcpy(&h, worst, sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaFree(worst));
  float resid;
  std::memcpy(&resid, &h, sizeof(float));
  const double rows = double(l.n) * double(systems), s = ms * 1e-3;
  const double eff = (3.0 * m * m + 2.0 * m) * sizeof(T) * rows / s / 1e9;
  const double moved = (5.0 * m * m + 4.0 * m) * sizeof(T) * rows / s / 1e9;
  const double gf = flops_per_row(m) * rows / s / 1e9;
  const double peak = sizeof(T) == 8 ? g_peak64 : g_peak32;
  const double roof = flops_per_row(m) / ((3.0 * m * m + 2.0 * m) * sizeof(T)) * g_copy;
  std::printf("%-6s %-13s %d %4lld %7lld %-8s %9.3f %8.3f %7.0f %6.1f %7.0f %6.1f %8.0f %6.2f %8.0f %8.1e\n",
              sizeof(T) == 4 ? "fp32" : "fp64", cfg.layout.c_str(), m, (long long)l.n, (long long)systems,
              kernel == adi::BlockKernel::cuda_block_thomas_shared ? "shared" : "shuffle", ms, ms * 1e6 / rows, eff,
              100 * eff / g_copy, moved, 100 * moved / g_copy, gf, 100 * gf / peak, std::min(roof, peak), resid);
  std::fflush(stdout);
}

void header() {
  std::printf("%-6s %-13s %s %4s %7s %-8s %9s %8s %7s %6s %7s %6s %8s %6s %8s %8s\n", "prec", "layout", "M", "N",
              "P", "kernel", "ms", "ns/row", "GB/s", "%copy", "moved", "%copy", "GFLOP/s", "%peak", "roof",
              "resid");
}

template <class T>
void batch_rows(bool quick) {
  for (int m = 2; m <= 8; ++m) {
    if (!listed(g_ms, std::to_string(m))) continue;
    const index_t n = m <= 6 ? 128 : 96, p = batch_systems(m, quick);
    constexpr auto cm = adi::BlockOrder::column_major;  // Fortran's blocks, read in place
    for (const Config& cfg : {Config{"interleaved", adi::to_block_lines(adi::BlockInterleaved{m, n, p})},
                              Config{"interl-colmaj", adi::to_block_lines(adi::BlockInterleaved{m, n, p, cm})},
                              Config{"contiguous", adi::to_block_lines(adi::BlockContiguous{m, n, p})},
                              Config{"contig-colmaj", adi::to_block_lines(adi::BlockContiguous{m, n, p, cm})}})
      if (listed(g_layouts, cfg.layout))
        for (adi::BlockKernel k : {adi::BlockKernel::cuda_block_thomas_shuffle, adi::BlockKernel::cuda_block_thomas_shared})
        run_config<T>(cfg, k);
  }
}

// Block-cyclic (periodic) systems, interleaved, shuffle kernel: the cost of the bordering.
template <class T>
void periodic_rows(bool quick) {
  for (int m = 2; m <= 8; ++m) {
    if (!listed(g_ms, std::to_string(m))) continue;
    const index_t n = m <= 6 ? 128 : 96, p = batch_systems(m, quick);
    run_config<T>({"periodic-il", adi::to_block_lines(adi::BlockInterleaved{m, n, p}), true},
                  adi::BlockKernel::cuda_block_thomas_shuffle);
  }
}

// The CFD entry point: M = 5 (3D Euler) on a 3D grid, lines along each axis.
template <class T>
void grid_rows(index_t nn) {
  const int m = 5;
  for (int layout = 0; layout < 2; ++layout)
    for (adi::Axis axis : {adi::Axis::x, adi::Axis::y, adi::Axis::z}) {
      adi::BlockGridLines g{m, nn, nn, nn, axis, {}, {}};
      g.vectors = layout == 0 ? adi::PointArray::aos(m, nn, nn, nn) : adi::PointArray::soa(nn, nn, nn);
      g.blocks = layout == 0 ? adi::PointArray::aos(m * m, nn, nn, nn) : adi::PointArray::soa(nn, nn, nn);
      const std::string name = std::string(layout == 0 ? "aos-" : "soa-") + adi::axis_name(axis);
      for (adi::BlockKernel k : {adi::BlockKernel::cuda_block_thomas_shuffle, adi::BlockKernel::cuda_block_thomas_shared})
        run_config<T>({name, adi::to_block_lines(g)}, k);
    }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, batch_only = false;
  index_t grid_n = 128;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: %s [--quick] [--reps=N] [--grid=N] [--m=2,3,4] [--layout=interleaved,contiguous,...] "
                  "[--kernel=shuffle|shared] [--batch-only] [--systems=P]\n"
                  "  --m, --layout: only these block sizes / batch layouts (interleaved, interl-colmaj, contiguous,\n"
                  "  contig-colmaj); --batch-only: no periodic and no CFD grid rows; --systems: P systems in the\n"
                  "  batch and periodic rows instead of 65536 (32768 for M = 7, 8)\n",
                  argv[0]);
      return 0;
    }
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strncmp(argv[i], "--reps=", 7)) g_reps = std::max(1, std::atoi(argv[i] + 7));
    if (!std::strncmp(argv[i], "--grid=", 7)) grid_n = std::atoi(argv[i] + 7);
    if (!std::strncmp(argv[i], "--m=", 4)) g_ms = argv[i] + 4;
    if (!std::strncmp(argv[i], "--layout=", 9)) g_layouts = argv[i] + 9;
    if (!std::strncmp(argv[i], "--kernel=", 9)) g_kernels = argv[i] + 9;
    if (!std::strcmp(argv[i], "--batch-only")) batch_only = true;
    if (!std::strncmp(argv[i], "--systems=", 10)) {
      char* rest = nullptr;
      const long long p = std::strtoll(argv[i] + 10, &rest, 10);
      if (rest == argv[i] + 10 || *rest != '\0' || p < 1) {
        std::fprintf(stderr, "%s: --systems=%s is not a positive count of systems (e.g. --systems=262144)\n", argv[0],
                     argv[i] + 10);
        return 2;
      }
      g_systems = static_cast<index_t>(p);
    }
  }
  if (!adi::Executor::cuda_available()) {
    std::fprintf(stderr, "no CUDA device: nothing to measure\n");
    return 1;
  }
  measure_device();
  header();
  batch_rows<float>(quick);
  batch_rows<double>(quick);
  if (batch_only) return 0;
  std::printf("\nPeriodic (block-cyclic) systems, same sizes (GB/s and GFLOP/s counted as for the non-periodic "
              "solve):\n");
  header();
  periodic_rows<float>(quick);
  periodic_rows<double>(quick);
  std::printf("\nCFD grid entry point, M = 5, %lld^3 points, lines along x / y / z:\n", (long long)grid_n);
  header();
  grid_rows<float>(grid_n);
  grid_rows<double>(grid_n);
  return 0;
}
