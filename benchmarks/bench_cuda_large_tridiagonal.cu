// One large tridiagonal system on the GPU, 2^20 .. 2^26 unknowns, fp32 and fp64: the
// two-pass partition solver of adi/large_tridiagonal.hpp (each chunk length) against
// cuSPARSE gtsv2 (partial pivoting) and gtsv2_nopivot, with the device's copy bandwidth
// measured in the same run. CUDA events, median of --reps runs after two warm-ups.
//
// GB/s counts 5 arrays (read a, b, c, d, write u); "%copy" is that over the copy
// bandwidth (bytes read + written). "ws" is the solver's workspace, also as % of the
// system's 5 arrays. resid = max |A u - d| / max |d| of the last run (on the device).
//
//   bench_cuda_large_tridiagonal [--min=20] [--max=26] [--reps=20] [--quick] [--prec=32|64]
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "adi/executor.hpp"
#include "adi/large_tridiagonal.hpp"
#include "benchmarks/cuda_bench_util.cuh"
#include "solvers/cuda/backend.hpp"
#ifndef ADI_BENCH_NO_DISPATCH
#include "adi/tridiagonal.hpp"
#endif

namespace {

#define CS(call) CK_STATUS(call, CUSPARSE_STATUS_SUCCESS)

int g_min = 20, g_max = 26, g_reps = 20, g_prec = 0;  // g_prec 32 / 64: one precision only
bool g_quick = false;
cudaStream_t g_stream;
double g_copy = 0;

template <class T>
using Buf = adi::bench::Dev<T>;

// Median milliseconds of body() over g_reps runs after 2 warm-ups on g_stream; prep() runs
// before each, outside the events.
double time_ms(const std::function<void()>& body, const std::function<void()>& prep = [] {}) {
  return adi::bench::median_ms(body, g_reps, prep, 2, g_stream);
}

template <class T>
__global__ void init_kernel(T* a, T* b, T* c, T* d, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull;
    auto next = [&x]() {
      x ^= x >> 31;
      x *= 0x94D049BB133111EBull;
      x ^= x >> 29;
      return double(x >> 11) * 0x1.0p-53;
    };
    const double av = i == 0 ? 0.0 : next() * 2 - 1;  // cuSPARSE wants dl[0] = du[n-1] = 0
    const double cv = i == n - 1 ? 0.0 : next() * 2 - 1;
    const double sg = next() < 0.5 ? -1.0 : 1.0;
    a[i] = T(av);
    c[i] = T(cv);
    b[i] = T(sg * (fabs(av) + fabs(cv) + 0.25 + next()));
    d[i] = T(next() * 2 - 1);
  }
}

// max |A u - d| and max |d| as float bit patterns (non-negative floats order like ints).
template <class T>
__global__ void residual_kernel(const T* a, const T* b, const T* c, const T* d, const T* u, long long n,
                                unsigned* out) {
  double r = 0, s = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    double v = double(b[i]) * u[i] - double(d[i]);
    if (i > 0) v += double(a[i]) * u[i - 1];
    if (i + 1 < n) v += double(c[i]) * u[i + 1];
    r = fmax(r, fabs(v));
    s = fmax(s, fabs(double(d[i])));
    if (!(v == v)) r = 1e30;
  }
  atomicMax(out, __float_as_uint(float(r)));
  atomicMax(out + 1, __float_as_uint(float(s)));
}

template <class T>
double residual(const Buf<T>& a, const Buf<T>& b, const Buf<T>& c, const Buf<T>& d, const T* u, long long n) {
  Buf<unsigned> out(2);
  CK(cudaMemsetAsync(out.p, 0, 2 * sizeof(unsigned), g_stream));
  residual_kernel<T><<<1024, 256, 0, g_stream>>>(a.p, b.p, c.p, d.p, u, n, out.p);
  unsigned h[2];
  CK(cudaMemcpyAsync(h, out.p, sizeof h, cudaMemcpyDeviceToHost, g_stream));
  CK(cudaStreamSynchronize(g_stream));
  float r, s;
  std::memcpy(&r, &h[0], 4);
  std::memcpy(&s, &h[1], 4);
  return double(r) / double(s);
}

cusparseStatus_t nopivot_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                                const float* x, size_t* bytes) {
  return cusparseSgtsv2_nopivot_bufferSizeExt(h, m, 1, dl, d, du, x, m, bytes);
}
cusparseStatus_t nopivot_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                                const double* x, size_t* bytes) {
  return cusparseDgtsv2_nopivot_bufferSizeExt(h, m, 1, dl, d, du, x, m, bytes);
}
cusparseStatus_t nopivot(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du, float* x,
                         void* buf) {
  return cusparseSgtsv2_nopivot(h, m, 1, dl, d, du, x, m, buf);
}
cusparseStatus_t nopivot(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du, double* x,
                         void* buf) {
  return cusparseDgtsv2_nopivot(h, m, 1, dl, d, du, x, m, buf);
}
cusparseStatus_t pivot_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                              const float* x, size_t* bytes) {
  return cusparseSgtsv2_bufferSizeExt(h, m, 1, dl, d, du, x, m, bytes);
}
cusparseStatus_t pivot_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                              const double* x, size_t* bytes) {
  return cusparseDgtsv2_bufferSizeExt(h, m, 1, dl, d, du, x, m, bytes);
}
cusparseStatus_t pivot(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du, float* x,
                       void* buf) {
  return cusparseSgtsv2(h, m, 1, dl, d, du, x, m, buf);
}
cusparseStatus_t pivot(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du, double* x,
                       void* buf) {
  return cusparseDgtsv2(h, m, 1, dl, d, du, x, m, buf);
}

struct Row {
  std::string prec, solver, setting;
  int log2n;
  double ms, resid;
  double ws_bytes;
};
std::vector<Row> g_rows;

template <class T>
void run_size(int l, cusparseHandle_t sp) {
  const long long n = 1LL << l;
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  Buf<T> a(n), b(n), c(n), d(n), u(n);
  init_kernel<T><<<1024, 256, 0, g_stream>>>(a.p, b.p, c.p, d.p, n);
  CK(cudaStreamSynchronize(g_stream));
  const adi::Executor ex = adi::Executor::cuda(0, g_stream);
  adi::LargeTridiagonalOptions po;
  po.kernel = adi::LargeKernel::partition;
  const int def = adi::LargeTridiagonalPlan<T>(ex, n, 1, 0, po).chunk();
  // Each chunk length and way of loading, through the backend (load 1: lanes straight from
  // global memory, 2: tiles staged in shared memory), then the public entry point.
  std::vector<int> chunks = g_quick ? std::vector<int>{def} : std::vector<int>{8, 16, 32};
  for (int chunk : chunks)
    for (int load : {1, 2}) {
      const std::size_t bytes = adi::cuda_backend::large_workspace_bytes(n, false, chunk, sizeof(T));
      Buf<char> ws(bytes);
      const double ms = time_ms([&] {
        adi::cuda_backend::large_solve<T>(n, a.p, b.p, c.p, d.p, u.p, false, chunk, 0.0, ws.p, nullptr, 0, g_stream,
                                          load);
      });
      g_rows.push_back({prec, load == 1 ? "partition global loads" : "partition staged loads",
                        "chunk=" + std::to_string(chunk), l, ms, residual(a, b, c, d, u.p, n), double(bytes)});
    }
  for (bool checks : {false, true}) {
    adi::LargeTridiagonalOptions o;
    o.check_pivots = checks;
    o.kernel = adi::LargeKernel::partition;
    adi::LargeTridiagonalPlan<T> plan(ex, n, 1, 0, o);
    const double ms = time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p); });
    g_rows.push_back({prec, "partition (plan)", "chunk=" + std::to_string(def) + (checks ? " +pivot check" : ""), l,
                      ms, residual(a, b, c, d, u.p, n), double(plan.workspace_bytes())});
  }
  {  // LargeKernel::truncated alone (its refusal flag in device memory, not read): the windows of the lean X
     // kernel's warp (the default since stop 51), then stop 44's single-system kernel (ADI_LARGE_WINDOWS=0:
     // a thread per part) with its timing variants; and through the plan (automatic's pick: the flag read
     // after one synchronisation)
    Buf<int> flag(1);
    auto truncated_row = [&](const char* name, const std::string& setting) {
      CK(cudaMemset(flag.p, 0, sizeof(int)));
      const double ms = time_ms([&] {
        adi::cuda_backend::large_truncated_solve<T>(n, a.p, b.p, c.p, d.p, u.p, flag.p, g_stream);
      });
      int refused = 0;
      CK(cudaMemcpy(&refused, flag.p, sizeof(int), cudaMemcpyDeviceToHost));
      g_rows.push_back({prec, std::string(name) + (refused ? " (REFUSED)" : ""), setting, l, ms,
                        residual(a, b, c, d, u.p, n), 0.0});
    };
    truncated_row("truncated windows", "");
    setenv("ADI_LARGE_WINDOWS", "0", 1);
    truncated_row("truncated parts", "");
    if (adi::cuda_backend::timing_forms_compiled()) {  // (the form kept for timing: -DADI_CUDA_UNROLL_ALL=ON)
      setenv("ADI_TRUNC_SYSTEM_STORES", "0", 1);  // u stored row by row (before stop 44's warp stores)
      truncated_row("truncated parts", "u row by row");
      unsetenv("ADI_TRUNC_SYSTEM_STORES");
    }
    for (const char* pct : {"50", "200"}) {  // parts per 100 resident threads (the default 100)
      setenv("ADI_TRUNC_SYSTEM_PARTS", pct, 1);
      truncated_row("truncated parts", std::string("parts ") + pct + "%");
      unsetenv("ADI_TRUNC_SYSTEM_PARTS");
    }
    unsetenv("ADI_LARGE_WINDOWS");
    adi::LargeTridiagonalPlan<T> plan(ex, n);
    const double pms = time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p); });
    g_rows.push_back({prec, std::string("automatic (plan) * ") + adi::large_kernel_name(plan.kernel()), "", l, pms,
                      residual(a, b, c, d, u.p, n), double(plan.workspace_bytes())});
  }
  {  // periodic, default chunk
    adi::LargeTridiagonalOptions o;
    o.periodic = true;
    o.check_pivots = false;
    adi::LargeTridiagonalPlan<T> plan(ex, n, 1, 0, o);
    const double ms = time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p); });
    g_rows.push_back({prec, "partition periodic", "chunk=" + std::to_string(def), l, ms, -1,
                      double(plan.workspace_bytes())});
  }
  CS(cusparseSetStream(sp, g_stream));
  size_t bytes = 0;
  CS(nopivot_buffer(sp, int(n), a.p, b.p, c.p, u.p, &bytes));
  {
    Buf<char> buf(bytes);
    const double ms = time_ms([&] { CS(nopivot(sp, int(n), a.p, b.p, c.p, u.p, buf.p)); },
                              [&] { CK(cudaMemcpyAsync(u.p, d.p, n * sizeof(T), cudaMemcpyDeviceToDevice, g_stream)); });
    g_rows.push_back({prec, "cuSPARSE gtsv2_nopivot", "", l, ms, residual(a, b, c, d, u.p, n), double(bytes)});
  }
  CS(pivot_buffer(sp, int(n), a.p, b.p, c.p, u.p, &bytes));
  {
    Buf<char> buf(bytes);
    const double ms = time_ms([&] { CS(pivot(sp, int(n), a.p, b.p, c.p, u.p, buf.p)); },
                              [&] { CK(cudaMemcpyAsync(u.p, d.p, n * sizeof(T), cudaMemcpyDeviceToDevice, g_stream)); });
    g_rows.push_back({prec, "cuSPARSE gtsv2", "", l, ms, residual(a, b, c, d, u.p, n), double(bytes)});
  }
}

// A few systems at once: 4 systems of n/4 in one plan against one system of n.
template <class T>
void run_few(int l) {
  const long long n = 1LL << l, m = n / 4;
  Buf<T> a(n), b(n), c(n), d(n), u(n);
  init_kernel<T><<<1024, 256, 0, g_stream>>>(a.p, b.p, c.p, d.p, n);
  const adi::Executor ex = adi::Executor::cuda(0, g_stream);
  adi::LargeTridiagonalOptions o;
  o.check_pivots = false;
  adi::LargeTridiagonalPlan<T> plan(ex, m, 4, m, o);
  const double ms = time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p); });
  g_rows.push_back({sizeof(T) == 4 ? "fp32" : "fp64", std::string(adi::large_kernel_name(plan.kernel())) + " 4 systems", "n/4 each", l, ms, -1,
                    double(plan.workspace_bytes())});
}

// The dispatch rule for a few long lines (adi/tridiagonal_dispatch.cpp): TridiagonalPlan
// with the batched kernel that long X lines get otherwise, against Kernel::large_partition.
struct DispatchRow {
  int log2n, lines;
  double batched_ms, large_ms;
};
std::vector<DispatchRow> g_dispatch;

void run_dispatch(int l, int lines) {
#ifndef ADI_BENCH_NO_DISPATCH
  const long long n = 1LL << l, total = n * lines;
  Buf<double> a(total), b(total), c(total), d(total), u(total);
  init_kernel<double><<<1024, 256, 0, g_stream>>>(a.p, b.p, c.p, d.p, total);
  const adi::Executor ex = adi::Executor::cuda(0, g_stream);
  auto time_kernel = [&](adi::Kernel k) {
    adi::TridiagonalOptions o;
    o.kernel = k;
    o.check_pivots = false;
    adi::TridiagonalPlan<double> plan(ex, adi::StridedLines::contiguous(n, lines), o);
    const int keep = g_reps;
    g_reps = 3;  // the batched kernel on one line is slow
    const double ms = time_ms([&] { plan.solve(adi::Bands<double>{a.p, b.p, c.p}, d.p, u.p); });
    g_reps = keep;
    return ms;
  };
  g_dispatch.push_back(
      {l, lines, time_kernel(adi::Kernel::cuda_thomas_shared_transpose), time_kernel(adi::Kernel::large_partition)});
#else
  (void)l;
  (void)lines;
#endif
}

void measure_copy() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const adi::bench::CopyBandwidth bw = adi::bench::measure_copy(g_reps, 2, sms * 8, 512, g_stream);
  g_copy = bw.best();
  std::printf("copy bandwidth (read+write, 1 GiB): cudaMemcpyDtoD %.0f GB/s, copy kernel %.0f GB/s -> 100%% = %.0f GB/s\n",
              bw.memcpy_gbs, bw.kernel_gbs, g_copy);
}

void print_table() {
  std::printf("\n%-5s %-6s %-24s %-22s %10s %8s %7s %9s %9s %11s %8s %9s\n", "prec", "n", "solver", "setting", "ms",
              "GB/s", "%copy", "x nopiv", "x gtsv2", "ws MB", "ws %sys", "resid");
  for (const Row& r : g_rows) {
    double nopiv = 0, piv = 0;
    for (const Row& q : g_rows)
      if (q.prec == r.prec && q.log2n == r.log2n) {
        if (q.solver == "cuSPARSE gtsv2_nopivot") nopiv = q.ms;
        if (q.solver == "cuSPARSE gtsv2") piv = q.ms;
      }
    const double vs = r.prec == "fp32" ? 4 : 8;
    const double n = double(1LL << r.log2n);
    const double gbs = 5.0 * vs * n / r.ms / 1e6;
    char resid[32] = "-";
    if (r.resid >= 0) std::snprintf(resid, sizeof resid, "%.1e", r.resid);
    std::printf("%-5s 2^%-4d %-24s %-22s %10.4f %8.0f %6.1f%% %9.2f %9.2f %11.1f %7.2f%% %9s\n", r.prec.c_str(),
                r.log2n, r.solver.c_str(), r.setting.c_str(), r.ms, gbs, 100.0 * gbs / g_copy, nopiv / r.ms,
                piv / r.ms, r.ws_bytes / 1e6, 100.0 * r.ws_bytes / (5.0 * vs * n), resid);
  }
  std::printf("(* the default through LargeTridiagonalPlan, its kernel named; GB/s on 5 arrays; x nopiv / x gtsv2: speed-up over "
              "cuSPARSE)\n");
  std::printf("\ndispatch, fp64 lines through TridiagonalPlan: cuda_thomas_shared_transpose vs large_partition\n");
  std::printf("%-6s %6s %14s %14s %8s\n", "n", "lines", "batched ms", "partition ms", "ratio");
  for (const DispatchRow& r : g_dispatch)
    std::printf("2^%-4d %6d %14.4f %14.4f %8.2f\n", r.log2n, r.lines, r.batched_ms, r.large_ms,
                r.batched_ms / r.large_ms);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--min=", 0) == 0)
      g_min = std::atoi(s.c_str() + 6);
    else if (s.rfind("--max=", 0) == 0)
      g_max = std::atoi(s.c_str() + 6);
    else if (s.rfind("--reps=", 0) == 0)
      g_reps = std::max(1, std::atoi(s.c_str() + 7));
    else if (s == "--quick")
      g_quick = true;
    else if (s.rfind("--prec=", 0) == 0)
      g_prec = std::atoi(s.c_str() + 7);
    else {
      std::printf("bench_cuda_large_tridiagonal [--min=20] [--max=26] [--reps=20] [--quick] [--prec=32|64]\n");
      return s == "--help" || s == "-h" ? 0 : 1;
    }
  }
  if (!adi::Executor::cuda_available()) {
    std::fprintf(stderr, "bench_cuda_large_tridiagonal: no CUDA device\n");
    return 1;
  }
  CK(cudaStreamCreate(&g_stream));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  int rt = 0;
  CK(cudaRuntimeGetVersion(&rt));
  std::printf("device: %s, CUDA runtime %d\n", prop.name, rt);
  measure_copy();
  cusparseHandle_t sp;
  CS(cusparseCreate(&sp));
  if (g_prec != 64)
    for (int l = g_min; l <= g_max; ++l) run_size<float>(l, sp);
  if (g_prec != 32)
    for (int l = g_min; l <= g_max; ++l) run_size<double>(l, sp);
  if (!g_quick) run_few<double>(std::min(g_max, 24));
  if (!g_quick) {
    for (int lines : {1, 8, 64, 512}) run_dispatch(16, lines);
    for (int lines : {1, 8, 64}) run_dispatch(20, lines);
  }
  print_table();
  CS(cusparseDestroy(sp));
  CK(cudaStreamDestroy(g_stream));
  return 0;
}
