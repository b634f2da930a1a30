// Batched tridiagonal solves on one GPU: our CUDA kernels against cuSPARSE and the
// naive thread-per-line Thomas, as a fraction of the device's copy bandwidth.
//
//   bench_cuda_tridiagonal [--reps N] [--quick] [--no-sweep] [--no-tune] [--no-layouts] [--no-long]
//                          [--long-only] [--long-sweep] [--truncated] [--filter TEXT] [--boxes LIST]
//
// 1. Copy bandwidth: cudaMemcpy device-to-device and a 16-byte-vector copy kernel over
//    1 GiB, counting bytes read + written; the faster one is the 100% of the tables.
// 2. For 256^3 and 240x256x256 (--boxes: a comma-separated list of NXxNYxNZ, e.g.
//    256x256x256,512x512x512; empty for none), fp32 and fp64, each axis: every kernel that applies,
//    cuSPARSE gtsv2StridedBatch (X) and gtsvInterleavedBatch (Z = interleaved layout).
//    Median of N runs (CUDA events around each run, after warm-up). Bands rows count 5
//    arrays (read a, b, c, d; write u); SharedBands rows count 2 (read d, write u) and
//    are also quoted as the 5-array equivalent (same time, 5 arrays' bytes). `resid` is
//    max |A u - d| of the last run (fp64 arithmetic), so a fast wrong kernel shows.
//    '*' marks the kernel the dispatch table picks.
// 3. Unaligned starts and padded rows: the dispatch table's kernel on 256^3 and
//    240x256x256 laid out dense, with every array's start shifted by one element, and with
//    odd row and plane padding on top of that; time per value against the dense layout.
// 4. Summary of the dense boxes against the target (85% of copy, Bands: issue 16) and the peers.
// 5. Tuning rows for the hybrids' launch shapes, and a line-length sweep (the
//    crossovers recorded in adi/tridiagonal_dispatch.cpp).
// 6. Long lines, few of them (issue 18; --long-only runs just this after the copy
//    bandwidth): the public case 128x128x4096 along z in fp64 and fp32, every candidate
//    kernel, the long-line kernel's launch shapes and the measured plan, as ms and the ratio
//    to the traffic model (Bands: 5 arrays, shared: 2, at the copy bandwidth of this run);
//    then n = 4096 interleaved batches of 1,024 to 65,536 lines (where one thread per line
//    catches up).
// 7. --long-sweep: only the long-line crossover (lines of 1536 .. 4096 rows, 4,096 .. 32,768 of
//    them, fp64 and fp32, per-line and shared bands; long_sweep below).
// 8. --truncated: cuda_thomas_truncated against cuda_thomas_pcr_long (issue 18 part 1, stop 41):
//    the public case 128x128x4096 along z and its one-rank half 128x128x2048, fp64 and fp32, the
//    MPI benchmark's bands (b in [3, 4], a, c in [-1, 1]) and this benchmark's (margin 0.5: weaker);
//    per-line and shared bands (line 0's), the forms alternated solve by solve (median of --reps
//    rounds after 3 warm-ups each); then one contiguous line of 2^24 rows: the same kernel against
//    LargeTridiagonalPlan (a bench row only). With --boxes: those boxes along z instead. Each box
//    also has an "automatic (plan)" row: the default options (checked), what a user gets, and a
//    "form 3 + sync" row: the kernel with the flag read back, the plan without its host work.
// Pivot checks are off in the timed solves (cuSPARSE checks nothing either).
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/executor.hpp"
#include "adi/large_tridiagonal.hpp"
#include "adi/layout.hpp"
#include "adi/tridiagonal.hpp"
#include "benchmarks/cuda_bench_util.cuh"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/device_memory_rate.hpp"
#include "solvers/cuda/thomas_truncated.cuh"

namespace {

#define CKS(call) CK_STATUS(call, CUSPARSE_STATUS_SUCCESS)

int g_reps = 20;
double g_copy_gbs = 0;  // read + write
std::string g_filter;   // --filter: run only rows whose label contains this

// %copy of the dense-box Bands rows, for the summary: our dispatch pick, the naive
// kernel and cuSPARSE, per (grid, type, axis).
struct BoxResult {
  std::string grid, type, axis, pick;
  double ours = -1, naive = -1, cusparse = -1;
  std::string cusparse_name;
  // Per band kind (0 per-line, 1 shared): the dispatch's time, the fastest of our kernels,
  // and what TridiagonalOptions::measure chose (issue 16: no kernel the dispatch did not
  // choose more than 5% faster).
  double pick_ms[2] = {-1, -1}, best_ms[2] = {-1, -1}, measured_ms[2] = {-1, -1}, measure_cost[2] = {-1, -1};
  std::string pick_name[2], best[2], measured[2];
};
std::vector<BoxResult> g_box_results;

constexpr double kTargetPct = 85.0;  // issue 16: every direction >= 85% of copy

double pct_copy(double ms, double elems, std::size_t vsize, bool shared) {
  return 100.0 * (shared ? 2.0 : 5.0) * elems * vsize / ms / 1e6 / g_copy_gbs;
}

using adi::bench::Dev;

// Median milliseconds of `run` (after 3 warm-ups); `prepare` runs untimed before each.
double time_ms(const std::function<void()>& run, const std::function<void()>& prepare = {}) {
  return adi::bench::median_ms(run, g_reps, prepare, 3);
}

__device__ double uniform(unsigned long long i, unsigned long long seed) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z >> 11) * (2.0 / 9007199254740992.0) - 1.0;  // [-1, 1)
}

// Value number k (its random draws), row i of a line of n, stored at index `at`.
// Diagonally dominant rows; a = 0 on the first and c = 0 on the last row of each line
// (cuSPARSE requires it; our kernels ignore those entries anyway).
template <class T>
__device__ void fill_value(long long k, long long i, long long n, long long at, T* a, T* b, T* c, T* d,
                           unsigned long long seed) {
  const double av = uniform(4 * k, seed), cv = uniform(4 * k + 1, seed), s = uniform(4 * k + 2, seed);
  const double mag = fabs(av) + fabs(cv) + 0.5 + 0.5 * fabs(s);
  a[at] = static_cast<T>(i == 0 ? 0.0 : av);
  c[at] = static_cast<T>(i == n - 1 ? 0.0 : cv);
  b[at] = static_cast<T>(s < 0 ? -mag : mag);
  d[at] = static_cast<T>(uniform(4 * k + 3, seed));
}

template <class T>
__global__ void fill_kernel(long long total, long long n, long long stride, T* a, T* b, T* c, T* d,
                            unsigned long long seed) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;
       k += (long long)gridDim.x * blockDim.x)
    fill_value(k, (k / stride) % n, n, k, a, b, c, d, seed);  // (k / stride) % n: row along the line
}

// |(A u - d)_i| of row i of a line (n rows, element stride `stride`) stored at `at`, its
// coefficients at `ci`; NaN or inf come back as 1e300.
template <class T>
__device__ double row_residual(long long i, long long n, long long stride, long long at, long long ci,
                               const T* a, const T* b, const T* c, const T* d, const T* u) {
  double r = double(b[ci]) * double(u[at]) - double(d[at]);
  if (i > 0) r += double(a[ci]) * double(u[at - stride]);
  if (i < n - 1) r += double(c[ci]) * double(u[at + stride]);
  r = fabs(r);
  return r <= 1e300 ? r : 1e300;
}

// max |A u - d| over a dense box solved along the axis with element stride `stride`.
template <class T>
__global__ void residual_kernel(long long total, long long n, long long stride, const T* a, const T* b,
                                const T* c, bool shared, const T* d, const T* u, unsigned long long* out) {
  double worst = 0;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;
       k += (long long)gridDim.x * blockDim.x) {
    const long long i = (k / stride) % n;
    worst = fmax(worst, row_residual(i, n, stride, k, shared ? i : k, a, b, c, d, u));
  }
  unsigned long long bits;
  memcpy(&bits, &worst, sizeof bits);
  atomicMax(out, bits);
}

template <class T>
double residual(long long total, long long n, long long stride, const T* a, const T* b, const T* c,
                bool shared, const T* d, const T* u) {
  Dev<unsigned long long> out(1);
  CK(cudaMemset(out.p, 0, sizeof(unsigned long long)));
  residual_kernel<T><<<1024, 256>>>(total, n, stride, a, b, c, shared, d, u, out.p);
  CK(cudaGetLastError());
  unsigned long long bits = 0;
  CK(cudaMemcpy(&bits, out.p, sizeof bits, cudaMemcpyDeviceToHost));
  double r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

void measure_copy() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const adi::bench::CopyBandwidth bw = adi::bench::measure_copy(g_reps, 3, sms * 8, 512);
  g_copy_gbs = bw.best();
  std::printf(
      "copy bandwidth (read+write, 1 GiB): cudaMemcpyDtoD %.0f GB/s, copy kernel %.0f GB/s -> 100%% = %.0f "
      "GB/s\n\n",
      bw.memcpy_gbs, bw.kernel_gbs, g_copy_gbs);
}

const char* short_name(adi::Kernel k) {
  switch (k) {
    case adi::Kernel::cuda_thomas_naive:
      return "naive (thread/line)";
    case adi::Kernel::cuda_thomas_strided:
      return "thomas_strided";
    case adi::Kernel::cuda_thomas_shuffle_transpose:
      return "thomas_shuffle_transpose";
    case adi::Kernel::cuda_thomas_shared_transpose:
      return "thomas_shared_transpose";
    case adi::Kernel::cuda_thomas_pcr:
      return "thomas_pcr (hybrid)";
    case adi::Kernel::cuda_thomas_pcr_strided:
      return "thomas_pcr_strided (hybrid)";
    case adi::Kernel::cuda_thomas_pcr_long:
      return "thomas_pcr_long (block/line)";
    case adi::Kernel::cuda_thomas_truncated:
      return "thomas_truncated (line parts)";
    default:
      return adi::kernel_name(k);
  }
}

// Whether a row (grid type axis kernel bands) passes --filter.
bool wanted(const char* grid, const char* type, const char* axis, const std::string& kernel, bool shared) {
  if (g_filter.empty()) return true;
  const std::string label =
      std::string(grid) + " " + type + " " + axis + " " + kernel + " " + (shared ? "shared" : "full");
  return label.find(g_filter) != std::string::npos;
}

void header() {
  std::printf("%-12s %-4s %-4s %-30s %-6s %9s %8s %6s | %8s %6s %8s\n", "grid", "type", "axis", "kernel",
              "bands", "ms", "GB/s", "%copy", "GB/s-5eq", "%5eq", "resid");
}

void row(const char* grid, const char* type, const char* axis, const std::string& kernel, bool shared,
         double ms, double elems, std::size_t vsize, double resid) {
  const double bytes5 = 5.0 * elems * vsize, bytes2 = 2.0 * elems * vsize;
  const double g = (shared ? bytes2 : bytes5) / ms / 1e6;
  if (shared)
    std::printf("%-12s %-4s %-4s %-30s %-6s %9.4f %8.0f %6.1f | %8.0f %6.1f %8.1e\n", grid, type, axis,
                kernel.c_str(), "shared", ms, g, 100 * g / g_copy_gbs, bytes5 / ms / 1e6,
                100 * bytes5 / ms / 1e6 / g_copy_gbs, resid);
  else
    std::printf("%-12s %-4s %-4s %-30s %-6s %9.4f %8.0f %6.1f | %8s %6s %8.1e\n", grid, type, axis,
                kernel.c_str(), "full", ms, g, 100 * g / g_copy_gbs, "", "", resid);
  std::fflush(stdout);
}

// Our kernel through the public plan (pivot checks off), or with a tuning override.
template <class T>
double run_ours(adi::Kernel k, const adi::LineSet& l, const T* a, const T* b, const T* c, bool shared,
                const T* d, T* u, const adi::cuda_backend::Tuning* tuning = nullptr) {
  adi::TridiagonalOptions o;
  o.kernel = k;
  o.check_pivots = false;
  if (!tuning) {
    adi::TridiagonalPlan<T> plan(adi::Executor::cuda(), l, o);
    return time_ms([&] {
      if (shared)
        plan.solve(adi::SharedBands<T>{a, b, c}, d, u);
      else
        plan.solve(adi::Bands<T>{a, b, c}, d, u);
    });
  }
  const std::size_t ws_bytes = adi::cuda_backend::tridiagonal_workspace_bytes(k, l, false, sizeof(T));
  Dev<char> ws(ws_bytes);
  return time_ms([&] {
    adi::cuda_backend::tridiagonal_solve_tuned<T>(k, l, adi::cuda_backend::BandView<T>{a, b, c, shared}, d, u,
                                                  false, ws.p, nullptr, nullptr, *tuning);
  });
}

// The plan option that times the candidates when the plan is built (the first plan of a
// shape pays): the kernel it keeps, its time through the measured plan, and the cost.
struct MeasuredPlan {
  adi::Kernel kernel;
  double ms, cost_ms;
};
template <class T>
MeasuredPlan measured_plan(const adi::LineSet& l, const T* a, const T* b, const T* c, bool shared, const T* d,
                           T* u) {
  adi::TridiagonalOptions o;
  o.measure = true;
  o.check_pivots = false;
  adi::TridiagonalPlan<T> plan(adi::Executor::cuda(), l, o);
  MeasuredPlan m;
  m.kernel = shared ? plan.shared_bands_kernel() : plan.kernel();
  m.ms = time_ms([&] {
    if (shared)
      plan.solve(adi::SharedBands<T>{a, b, c}, d, u);
    else
      plan.solve(adi::Bands<T>{a, b, c}, d, u);
  });
  m.cost_ms = plan.measurement().cost_ms;
  return m;
}

// The kernel an automatic plan with the bench's options (check_pivots off) runs, asked of the plan:
// the dispatch table's, where automatic's truncated sweeps give way to the exact kernel in unchecked
// plans (stop 45: the table's own answer, cuda_thomas_truncated for Y/Z boxes of >= 2^23 values,
// is not among the rows timed, so the summary had dropped those rows since stop 43).
adi::Kernel dispatch_choice(const adi::LineSet& l, std::size_t vsize, bool shared) {
  adi::TridiagonalOptions o;
  o.check_pivots = false;
  auto pick = [&](auto zero) {
    adi::TridiagonalPlan<decltype(zero)> plan(adi::Executor::cuda(), l, o);
    return shared ? plan.shared_bands_kernel() : plan.kernel();
  };
  return vsize == 4 ? pick(0.0f) : pick(0.0);
}

// cuSPARSE wrappers, one per precision.
cusparseStatus_t gtsv2_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                              const float* x, int count, int stride, size_t* bytes) {
  return cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, count, stride, bytes);
}
cusparseStatus_t gtsv2_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                              const double* x, int count, int stride, size_t* bytes) {
  return cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, count, stride, bytes);
}
cusparseStatus_t gtsv2(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du, float* x,
                       int count, int stride, void* buf) {
  return cusparseSgtsv2StridedBatch(h, m, dl, d, du, x, count, stride, buf);
}
cusparseStatus_t gtsv2(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                       double* x, int count, int stride, void* buf) {
  return cusparseDgtsv2StridedBatch(h, m, dl, d, du, x, count, stride, buf);
}
cusparseStatus_t gtsvi_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                              const float* x, int batch, size_t* bytes) {
  return cusparseSgtsvInterleavedBatch_bufferSizeExt(h, 0, m, dl, d, du, x, batch, bytes);
}
cusparseStatus_t gtsvi_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                              const double* x, int batch, size_t* bytes) {
  return cusparseDgtsvInterleavedBatch_bufferSizeExt(h, 0, m, dl, d, du, x, batch, bytes);
}
cusparseStatus_t gtsvi(cusparseHandle_t h, int m, float* dl, float* d, float* du, float* x, int batch,
                       void* buf) {
  return cusparseSgtsvInterleavedBatch(h, 0, m, dl, d, du, x, batch, buf);
}
cusparseStatus_t gtsvi(cusparseHandle_t h, int m, double* dl, double* d, double* du, double* x, int batch,
                       void* buf) {
  return cusparseDgtsvInterleavedBatch(h, 0, m, dl, d, du, x, batch, buf);
}

template <class T>
void bench_box(cusparseHandle_t handle, long long nx, long long ny, long long nz) {
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  char grid[32];
  std::snprintf(grid, sizeof grid, "%lldx%lldx%lld", nx, ny, nz);
  const long long total = nx * ny * nz;
  const adi::Box3 box = adi::Box3::dense(nx, ny, nz);
  Dev<T> a(total), b(total), c(total), d(total), u(total), wa(total), wb(total), wc(total);
  for (adi::Axis ax : {adi::Axis::x, adi::Axis::y, adi::Axis::z}) {
    const adi::LineSet l = adi::to_lines(adi::BoxLines{box, ax});
    const long long n = l.n, stride = l.stride;
    fill_kernel<T><<<2048, 256>>>(total, n, stride, a.p, b.p, c.p, d.p, 1234 + (int)ax);
    CK(cudaGetLastError());
    // Shared bands: the first line's coefficients, contiguous.
    Dev<T> sa(n), sb(n), sc(n);
    CK(cudaMemcpy2D(sa.p, sizeof(T), a.p, stride * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy2D(sb.p, sizeof(T), b.p, stride * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy2D(sc.p, sizeof(T), c.p, stride * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToDevice));
    const char* axis = adi::axis_name(ax);
    std::vector<adi::Kernel> ks;
    if (ax == adi::Axis::x)
      ks = {adi::Kernel::cuda_thomas_pcr, adi::Kernel::cuda_thomas_shuffle_transpose,
            adi::Kernel::cuda_thomas_shared_transpose, adi::Kernel::cuda_thomas_naive};
    else
      ks = {adi::Kernel::cuda_thomas_pcr_strided, adi::Kernel::cuda_thomas_strided,
            adi::Kernel::cuda_thomas_pcr_long, adi::Kernel::cuda_thomas_naive};
    BoxResult& res = g_box_results.emplace_back();
    res.grid = grid;
    res.type = type;
    res.axis = axis;
    res.pick = short_name(dispatch_choice(l, sizeof(T), false));
    for (int shared = 0; shared < 2; ++shared) {
      const adi::Kernel pick = dispatch_choice(l, sizeof(T), shared);
      for (adi::Kernel k : ks) {
        if (!wanted(grid, type, axis, short_name(k), shared)) continue;
        if (!adi::detail::kernel_supports(k, adi::Executor::cuda(), adi::detail::DispatchQuery{l, sizeof(T), false, shared != 0}))
          continue;
        const double ms = shared ? run_ours<T>(k, l, sa.p, sb.p, sc.p, true, d.p, u.p)
                                 : run_ours<T>(k, l, a.p, b.p, c.p, false, d.p, u.p);
        const double r = shared ? residual<T>(total, n, stride, sa.p, sb.p, sc.p, true, d.p, u.p)
                                : residual<T>(total, n, stride, a.p, b.p, c.p, false, d.p, u.p);
        row(grid, type, axis, std::string(short_name(k)) + (k == pick ? " *" : ""), shared, ms, (double)total,
            sizeof(T), r);
        if (!shared && k == pick) res.ours = pct_copy(ms, (double)total, sizeof(T), false);
        if (k == pick) {
          res.pick_ms[shared] = ms;
          res.pick_name[shared] = short_name(k);
        }
        if (res.best_ms[shared] < 0 || ms < res.best_ms[shared]) {
          res.best_ms[shared] = ms;
          res.best[shared] = short_name(k);
        }
        if (!shared && k == adi::Kernel::cuda_thomas_naive)
          res.naive = pct_copy(ms, (double)total, sizeof(T), false);
      }
    }
    // The measured plan (the row's time is the chosen kernel's, through that plan).
    for (int shared = 0; shared < 2; ++shared) {
      if (!wanted(grid, type, axis, "measured", shared)) continue;
      const MeasuredPlan mp = shared ? measured_plan<T>(l, sa.p, sb.p, sc.p, true, d.p, u.p)
                                     : measured_plan<T>(l, a.p, b.p, c.p, false, d.p, u.p);
      const adi::Kernel k = mp.kernel;
      const double ms = mp.ms;
      const double r = shared ? residual<T>(total, n, stride, sa.p, sb.p, sc.p, true, d.p, u.p)
                              : residual<T>(total, n, stride, a.p, b.p, c.p, false, d.p, u.p);
      row(grid, type, axis, std::string("measured: ") + short_name(k), shared, ms, (double)total, sizeof(T), r);
      res.measured_ms[shared] = ms;
      res.measured[shared] = short_name(k);
      res.measure_cost[shared] = mp.cost_ms;
    }
    // cuSPARSE: X lines are its gtsv2StridedBatch layout; Z lines its interleaved layout.
    if (ax == adi::Axis::x && wanted(grid, type, axis, "cuSPARSE gtsv2StridedBatch", false)) {
      size_t bytes = 0;
      CKS(gtsv2_buffer(handle, (int)n, a.p, b.p, c.p, u.p, (int)(total / n), (int)n, &bytes));
      Dev<char> buf(bytes);
      const double ms =
          time_ms([&] { CKS(gtsv2(handle, (int)n, a.p, b.p, c.p, u.p, (int)(total / n), (int)n, buf.p)); },
                  [&] { CK(cudaMemcpyAsync(u.p, d.p, total * sizeof(T), cudaMemcpyDeviceToDevice)); });
      row(grid, type, axis, "cuSPARSE gtsv2StridedBatch", false, ms, (double)total, sizeof(T),
          residual<T>(total, n, stride, a.p, b.p, c.p, false, d.p, u.p));
      res.cusparse = pct_copy(ms, (double)total, sizeof(T), false);
      res.cusparse_name = "gtsv2StridedBatch";
    }
    // The interleaved-batch public entry point (InterleavedBatch{n, nx*ny}: the same
    // memory as the Z lines of a dense box) with the dispatch table's kernel, beside cuSPARSE.
    if (ax == adi::Axis::z)
      for (int shared = 0; shared < 2; ++shared) {
        const adi::LineSet li = adi::to_lines(adi::InterleavedBatch{n, nx * ny});
        const adi::Kernel pick = dispatch_choice(li, sizeof(T), shared);
        const std::string name = "InterleavedBatch entry (auto)";
        if (!wanted(grid, type, axis, name, shared)) continue;
        const double ms = shared ? run_ours<T>(pick, li, sa.p, sb.p, sc.p, true, d.p, u.p)
                                 : run_ours<T>(pick, li, a.p, b.p, c.p, false, d.p, u.p);
        const double r = shared ? residual<T>(total, n, stride, sa.p, sb.p, sc.p, true, d.p, u.p)
                                : residual<T>(total, n, stride, a.p, b.p, c.p, false, d.p, u.p);
        row(grid, type, axis, name, shared, ms, (double)total, sizeof(T), r);
      }
    if (ax == adi::Axis::z && wanted(grid, type, axis, "cuSPARSE gtsvInterleavedBatch", false)) {
      size_t bytes = 0;
      const int batch = (int)(nx * ny);
      CKS(gtsvi_buffer(handle, (int)n, a.p, b.p, c.p, u.p, batch, &bytes));
      Dev<char> buf(bytes);
      const std::size_t sz = total * sizeof(T);
      const double ms = time_ms([&] { CKS(gtsvi(handle, (int)n, wa.p, wb.p, wc.p, u.p, batch, buf.p)); },
                                [&] {  // it overwrites the bands and the right-hand side
                                  CK(cudaMemcpyAsync(wa.p, a.p, sz, cudaMemcpyDeviceToDevice));
                                  CK(cudaMemcpyAsync(wb.p, b.p, sz, cudaMemcpyDeviceToDevice));
                                  CK(cudaMemcpyAsync(wc.p, c.p, sz, cudaMemcpyDeviceToDevice));
                                  CK(cudaMemcpyAsync(u.p, d.p, sz, cudaMemcpyDeviceToDevice));
                                });
      row(grid, type, axis, "cuSPARSE gtsvInterleavedBatch", false, ms, (double)total, sizeof(T),
          residual<T>(total, n, stride, a.p, b.p, c.p, false, d.p, u.p));
      res.cusparse = pct_copy(ms, (double)total, sizeof(T), false);
      res.cusparse_name = "gtsvInterleavedBatch";
    }
  }
}

// --- Unaligned starts and padded rows -------------------------------------------------
// Element `line`'s first value relative to the base pointer (LineSet::offset, on the device).
__device__ long long line_start(const adi::LineSet& l, long long line) {
  return (line % l.count0) * l.stride0 + (line / l.count0) * l.stride1;
}

// fill_kernel for any line set: only the values on lines are written (padding stays as
// cudaMemset left it); value k = line * n + i.
template <class T>
__global__ void fill_lines_kernel(adi::LineSet l, T* a, T* b, T* c, T* d, unsigned long long seed) {
  const long long total = l.n * l.count0 * l.count1;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;
       k += (long long)gridDim.x * blockDim.x) {
    const long long i = k % l.n;
    fill_value(k, i, l.n, line_start(l, k / l.n) + i * l.stride, a, b, c, d, seed);
  }
}

// residual_kernel for any line set (Bands).
template <class T>
__global__ void residual_lines_kernel(adi::LineSet l, const T* a, const T* b, const T* c, const T* d,
                                      const T* u, unsigned long long* out) {
  const long long total = l.n * l.count0 * l.count1;
  double worst = 0;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;
       k += (long long)gridDim.x * blockDim.x) {
    const long long i = k % l.n, at = line_start(l, k / l.n) + i * l.stride;
    worst = fmax(worst, row_residual(i, l.n, l.stride, at, at, a, b, c, d, u));
  }
  unsigned long long bits;
  memcpy(&bits, &worst, sizeof bits);
  atomicMax(out, bits);
}

// The dispatch table's kernel (Bands, pivot checks off) per axis of an nx x ny x nz box in
// three layouts: dense; every array's start one element past an aligned address; and rows
// padded by 3 elements, planes by 5 more, on top of the shifted start (no row or plane
// starts on a 16-byte boundary). %copy counts the 5 arrays' values on lines only, so the
// layouts compare directly; "x dense" is the time per value against the dense layout.
template <class T>
void bench_layouts(long long nx, long long ny, long long nz) {
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  char grid[32];
  std::snprintf(grid, sizeof grid, "%lldx%lldx%lld", nx, ny, nz);
  struct Layout {
    const char* name;
    adi::Box3 box;
    long long base;
  };
  const Layout layouts[] = {
      {"dense", adi::Box3::dense(nx, ny, nz), 0},
      {"start +1 element", adi::Box3::dense(nx, ny, nz), 1},
      {"rows +3, planes +5, start +1", adi::Box3{nx, ny, nz, nx + 3, (nx + 3) * ny + 5}, 1},
  };
  const double values = double(nx) * double(ny) * double(nz);
  for (adi::Axis ax : {adi::Axis::x, adi::Axis::y, adi::Axis::z}) {
    const char* axis = adi::axis_name(ax);
    double dense_ms = 0;
    for (const Layout& lay : layouts) {
      if (!wanted(grid, type, axis, std::string("layout ") + lay.name, false)) continue;
      const adi::LineSet l = adi::to_lines(adi::BoxLines{lay.box, ax});
      const std::size_t count = (std::size_t)(lay.base + lay.box.span());
      Dev<T> a(count), b(count), c(count), d(count), u(count);
      for (Dev<T>* p : {&a, &b, &c, &d, &u}) CK(cudaMemset(p->p, 0, count * sizeof(T)));
      fill_lines_kernel<T>
          <<<2048, 256>>>(l, a.p + lay.base, b.p + lay.base, c.p + lay.base, d.p + lay.base, 4321 + (int)ax);
      CK(cudaGetLastError());
      const adi::Kernel pick = dispatch_choice(l, sizeof(T), false);
      const double ms = run_ours<T>(pick, l, a.p + lay.base, b.p + lay.base, c.p + lay.base, false,
                                    d.p + lay.base, u.p + lay.base);
      Dev<unsigned long long> out(1);
      CK(cudaMemset(out.p, 0, sizeof(unsigned long long)));
      residual_lines_kernel<T><<<1024, 256>>>(l, a.p + lay.base, b.p + lay.base, c.p + lay.base,
                                              d.p + lay.base, u.p + lay.base, out.p);
      CK(cudaGetLastError());
      unsigned long long bits = 0;
      CK(cudaMemcpy(&bits, out.p, sizeof bits, cudaMemcpyDeviceToHost));
      double r;
      std::memcpy(&r, &bits, sizeof r);
      if (lay.base == 0 && lay.box.sy == nx) dense_ms = ms;
      const double g = 5.0 * values * sizeof(T) / ms / 1e6;
      char ratio[16] = "-";
      if (dense_ms > 0) std::snprintf(ratio, sizeof ratio, "%.2f", ms / dense_ms);
      std::printf("%-12s %-4s %-4s %-28s %-28s %9.4f %8.0f %6.1f %8s %8.1e\n", grid, type, axis, lay.name,
                  short_name(pick), ms, g, 100 * g / g_copy_gbs, ratio, r);
      std::fflush(stdout);
    }
  }
}

// The dense-box Bands rows against the target and the peers.
void print_summary() {
  std::printf("%-12s %-4s %-4s %-28s %7s %7s %7s %-21s %8s %10s  %s\n", "grid", "type", "axis",
              "dispatch's kernel", "%copy", "naive", "cuSPARSE", "(cuSPARSE routine)", "x naive",
              "x cuSPARSE", "target 85% of copy");
  for (const BoxResult& r : g_box_results) {
    if (r.ours < 0) continue;  // filtered out
    char nv[16] = "-", cs[16] = "-", xn[16] = "-", xc[16] = "-", target[64];
    if (r.naive > 0) {
      std::snprintf(nv, sizeof nv, "%.1f", r.naive);
      std::snprintf(xn, sizeof xn, "%.1f", r.ours / r.naive);
    }
    if (r.cusparse > 0) {
      std::snprintf(cs, sizeof cs, "%.1f", r.cusparse);
      std::snprintf(xc, sizeof xc, "%.1f", r.ours / r.cusparse);
    }
    if (r.ours >= kTargetPct)
      std::snprintf(target, sizeof target, "met");
    else
      std::snprintf(target, sizeof target, "missed by %.1f points (%.2fx short)", kTargetPct - r.ours,
                    kTargetPct / r.ours);
    std::printf("%-12s %-4s %-4s %-28s %7.1f %7s %7s %-21s %8s %10s  %s\n", r.grid.c_str(), r.type.c_str(),
                r.axis.c_str(), r.pick.c_str(), r.ours, nv, cs,
                r.cusparse_name.empty() ? "(none for Y)" : r.cusparse_name.c_str(), xn, xc, target);
  }
  std::printf("\n== Dispatch against the fastest of our kernels in this run (target: none > 5%% faster), "
              "and the measured plan (TridiagonalOptions::measure)\n");
  std::printf("%-12s %-4s %-4s %-6s %-28s %9s %-28s %9s %7s | %-28s %9s %9s\n", "grid", "type", "axis", "bands",
              "dispatch's kernel", "ms", "fastest", "ms", "gap", "measured plan's kernel", "ms", "cost ms");
  for (const BoxResult& r : g_box_results)
    for (int sh = 0; sh < 2; ++sh) {
      if (r.pick_ms[sh] < 0 || r.best_ms[sh] < 0) continue;
      const double gap = r.pick_ms[sh] / r.best_ms[sh];
      std::printf("%-12s %-4s %-4s %-6s %-28s %9.4f %-28s %9.4f %6.1f%% | %-28s %9.4f %9.1f%s\n", r.grid.c_str(),
                  r.type.c_str(), r.axis.c_str(), sh ? "shared" : "full", r.pick_name[sh].c_str(), r.pick_ms[sh],
                  r.best[sh].c_str(), r.best_ms[sh], 100.0 * (gap - 1.0),
                  r.measured[sh].empty() ? "-" : r.measured[sh].c_str(), r.measured_ms[sh], r.measure_cost[sh],
                  gap > 1.05 ? "  <- dispatch > 5% slower" : "");
    }
}

// Launch shapes of the hybrids on 256^3 (the defaults are in thomas_pcr_*.cuh).
template <class T>
void tune(long long N) {
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long total = N * N * N;
  const adi::Box3 box = adi::Box3::dense(N, N, N);
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  char grid[32];
  std::snprintf(grid, sizeof grid, "%lld^3", N);
  for (adi::Axis ax : {adi::Axis::x, adi::Axis::y}) {
    const adi::LineSet l = adi::to_lines(adi::BoxLines{box, ax});
    fill_kernel<T><<<2048, 256>>>(total, l.n, l.stride, a.p, b.p, c.p, d.p, 99);
    for (int shared = 0; shared < 2; ++shared) {
      if (ax == adi::Axis::x) {
        for (int pf : {0, 1})
          for (int w : {2, 4, 8}) {
            const std::string name =
                "tune pcr warps=" + std::to_string(w) + " prefetch=" + std::to_string(pf);
            if (!wanted(grid, type, "x", name, shared)) continue;
            if (N <= 256 && pf != shared && !adi::cuda_backend::timing_forms_compiled()) {
              // Lines up to 256: the form other than the default (cp.async with shared bands,
              // registers with per-line ones) is compiled only with ADI_CUDA_UNROLL_ALL.
              std::printf("(skipped: %s %s %s \"%s\" %s: a timing-only form, configure with "
                          "-DADI_CUDA_UNROLL_ALL=ON)\n",
                          grid, type, "x", name.c_str(), shared ? "shared" : "full");
              continue;
            }
            adi::cuda_backend::Tuning t;
            t.warps_per_block = w;
            t.prefetch = pf;
            const double ms =
                run_ours<T>(adi::Kernel::cuda_thomas_pcr, l, a.p, b.p, c.p, shared, d.p, u.p, &t);
            row(grid, type, "x", name, shared, ms, (double)total, sizeof(T),
                residual<T>(total, l.n, l.stride, a.p, b.p, c.p, shared, d.p, u.p));
          }
      } else {
        for (int rows : {8, 16})
          for (int lb : {8, 16, 32}) {
            adi::cuda_backend::Tuning t;
            t.lines_per_block = lb;
            t.rows_per_thread = rows;
            const std::string name =
                "tune pcr_strided lb=" + std::to_string(lb) + " m=" + std::to_string(rows);
            if (!wanted(grid, type, "y", name, shared)) continue;
            const double ms =
                run_ours<T>(adi::Kernel::cuda_thomas_pcr_strided, l, a.p, b.p, c.p, shared, d.p, u.p, &t);
            row(grid, type, "y", name, shared, ms, (double)total, sizeof(T),
                residual<T>(total, l.n, l.stride, a.p, b.p, c.p, shared, d.p, u.p));
          }
      }
    }
  }
}

// Line-length sweep at a fixed number of values: where the hybrids stop winning.
template <class T>
void sweep() {
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long total = 1ll << 24;
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  for (long long n : {64, 128, 256, 512, 1024, 2048, 4096}) {
    const long long lines = total / n;
    char grid[32];
    std::snprintf(grid, sizeof grid, "n=%lld", n);
    // X: lines of n contiguous values. Y: a (lines x n) row-major batch, lines adjacent.
    const adi::LineSet lx = adi::to_lines(adi::StridedLines::contiguous(n, lines));
    const adi::LineSet ly = adi::to_lines(adi::InterleavedBatch{n, lines});
    for (int axis = 0; axis < 2; ++axis) {
      const adi::LineSet& l = axis == 0 ? lx : ly;
      fill_kernel<T><<<2048, 256>>>(total, n, l.stride, a.p, b.p, c.p, d.p, 7);
      const adi::Kernel pick = dispatch_choice(l, sizeof(T), false);
      std::vector<adi::Kernel> ks = axis == 0
                                        ? std::vector<adi::Kernel>{adi::Kernel::cuda_thomas_pcr,
                                                                   adi::Kernel::cuda_thomas_shuffle_transpose,
                                                                   adi::Kernel::cuda_thomas_shared_transpose}
                                        : std::vector<adi::Kernel>{adi::Kernel::cuda_thomas_pcr_strided,
                                                                   adi::Kernel::cuda_thomas_strided,
                                                                   adi::Kernel::cuda_thomas_pcr_long};
      for (adi::Kernel k : ks) {
        const double ms = run_ours<T>(k, l, a.p, b.p, c.p, false, d.p, u.p);
        row(grid, type, axis == 0 ? "x" : "y", std::string(short_name(k)) + (k == pick ? " *" : ""), false,
            ms, (double)total, sizeof(T), residual<T>(total, n, l.stride, a.p, b.p, c.p, false, d.p, u.p));
      }
    }
  }
}

// --- Long lines, few of them (issue 18) ------------------------------------------------
void long_header() {
  std::printf("%-14s %-4s %-4s %-36s %-6s %9s %9s %7s %6s %8s\n", "grid", "type", "axis", "kernel", "bands", "ms",
              "model ms", "ratio", "%copy", "resid");
}

// One row: ms against the traffic model (Bands: read a, b, c, d, write u; shared: d, u).
void long_row(const char* grid, const char* type, const char* axis, const std::string& kernel, bool shared,
              double ms, double elems, std::size_t vsize, double resid) {
  const double model = (shared ? 2.0 : 5.0) * elems * vsize / (g_copy_gbs * 1e6);
  std::printf("%-14s %-4s %-4s %-36s %-6s %9.4f %9.4f %7.2f %6.1f %8.1e\n", grid, type, axis, kernel.c_str(),
              shared ? "shared" : "full", ms, model, ms / model, 100.0 * model / ms, resid);
  std::fflush(stdout);
}

// Every candidate kernel on the lines `l` of `total` values (the dispatch's choice marked
// '*'), the long-line kernel's launch shapes, and the measured plan.
template <class T>
void bench_long_lines(const char* grid, const adi::LineSet& l, long long total, bool shapes) {
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  const char* axis = l.stride == 1 ? "x" : "z";
  const long long n = l.n, stride = l.stride;
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  fill_kernel<T><<<2048, 256>>>(total, n, stride, a.p, b.p, c.p, d.p, 4242);
  CK(cudaGetLastError());
  Dev<T> sa(n), sb(n), sc(n);
  CK(cudaMemcpy2D(sa.p, sizeof(T), a.p, stride * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy2D(sb.p, sizeof(T), b.p, stride * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy2D(sc.p, sizeof(T), c.p, stride * sizeof(T), sizeof(T), n, cudaMemcpyDeviceToDevice));
  auto resid = [&](bool shared) {
    return shared ? residual<T>(total, n, stride, sa.p, sb.p, sc.p, true, d.p, u.p)
                  : residual<T>(total, n, stride, a.p, b.p, c.p, false, d.p, u.p);
  };
  const adi::Kernel ks[] = {adi::Kernel::cuda_thomas_pcr_long, adi::Kernel::cuda_thomas_strided,
                            adi::Kernel::cuda_thomas_pcr_strided, adi::Kernel::cuda_thomas_naive};
  for (int shared = 0; shared < 2; ++shared) {
    const adi::Kernel pick = dispatch_choice(l, sizeof(T), shared);
    adi::detail::DispatchQuery q{l, sizeof(T), false, static_cast<bool>(shared)};
    for (adi::Kernel k : ks) {
      const std::string name = std::string(short_name(k)) + (k == pick ? " *" : "");
      if (!wanted(grid, type, axis, name, shared)) continue;
      if (!adi::detail::kernel_supports(k, adi::Executor::cuda(), q)) {
        std::printf("%-14s %-4s %-4s %-36s %-6s (does not take this shape)\n", grid, type, axis, name.c_str(),
                    shared ? "shared" : "full");
        continue;
      }
      const T* pa = shared ? sa.p : a.p;
      const T* pb = shared ? sb.p : b.p;
      const T* pc = shared ? sc.p : c.p;
      const double ms = run_ours<T>(k, l, pa, pb, pc, shared, d.p, u.p);
      long_row(grid, type, axis, name, shared, ms, (double)total, sizeof(T), resid(shared));
    }
    // One tuning row of the long kernel (a shape it refuses prints why).
    auto tune_row = [&](const std::string& name, const adi::cuda_backend::Tuning& t) {
      if (!wanted(grid, type, axis, name, shared)) return;
      try {
        const double ms =
            shared ? run_ours<T>(adi::Kernel::cuda_thomas_pcr_long, l, sa.p, sb.p, sc.p, true, d.p, u.p, &t)
                   : run_ours<T>(adi::Kernel::cuda_thomas_pcr_long, l, a.p, b.p, c.p, false, d.p, u.p, &t);
        long_row(grid, type, axis, name, shared, ms, (double)total, sizeof(T), resid(shared));
      } catch (const std::exception& e) {
        std::printf("%-14s %-4s %-4s %-36s %-6s (refused: %s)\n", grid, type, axis, name.c_str(),
                    shared ? "shared" : "full", e.what());
      }
    };
    if (shapes) {
      for (int rows : {16, 32})
        for (int lb : {1, 2, 4, 8}) {
          adi::cuda_backend::Tuning t;
          t.lines_per_block = lb;
          t.rows_per_thread = rows;
          t.cluster = 1;
          tune_row("tune pcr_long lb=" + std::to_string(lb) + " m=" + std::to_string(rows), t);
        }
      // Thread-block clusters sharing a tile of 128-byte rows (lb = 0: 16 fp64 / 32 fp32 lines).
      for (int cl : {2, 4, 8})
        for (int lb : {0, 8}) {
          adi::cuda_backend::Tuning t;
          t.cluster = cl;
          t.lines_per_block = lb;
          tune_row("tune pcr_long cluster=" + std::to_string(cl) + " lb=" + std::to_string(lb), t);
        }
      for (int lb : {0, 4}) {  // clusters of 8 with 32-row segments, and with 4 lines per tile
        adi::cuda_backend::Tuning t;
        t.cluster = 8;
        t.lines_per_block = lb;
        t.rows_per_thread = lb == 0 ? 32 : 16;
        tune_row("tune pcr_long cluster=8 lb=" + std::to_string(lb) + " m=" + std::to_string(t.rows_per_thread), t);
      }
    }
    if (wanted(grid, type, axis, "measured", shared)) {
      const MeasuredPlan mp = shared ? measured_plan<T>(l, sa.p, sb.p, sc.p, true, d.p, u.p)
                                     : measured_plan<T>(l, a.p, b.p, c.p, false, d.p, u.p);
      long_row(grid, type, axis, std::string("measured: ") + short_name(mp.kernel), shared, mp.ms, (double)total,
               sizeof(T), resid(shared));
    }
  }
}

void long_lines() {
  std::printf("\n== Long lines, few of them (issue 18): ms against the traffic model (Bands 5 arrays, shared 2, "
              "at %.0f GB/s); target: the dispatch's kernel within 1.3x on the public case\n",
              g_copy_gbs);
  long_header();
  const adi::LineSet pub = adi::to_lines(adi::BoxLines{adi::Box3::dense(128, 128, 4096), adi::Axis::z});
  bench_long_lines<double>("128x128x4096", pub, 128ll * 128 * 4096, true);
  bench_long_lines<float>("128x128x4096", pub, 128ll * 128 * 4096, true);
  std::printf("\n== n = 4096, interleaved batches of 1,024 to 65,536 lines (fp64, then fp32)\n");
  long_header();
  for (long long lines : {1024ll, 4096ll, 16384ll, 65536ll}) {
    char grid[32];
    std::snprintf(grid, sizeof grid, "4096 x %lld", lines);
    const adi::LineSet l = adi::to_lines(adi::InterleavedBatch{4096, lines});
    bench_long_lines<double>(grid, l, 4096 * lines, false);
  }
  for (long long lines : {4096ll, 65536ll}) {
    char grid[32];
    std::snprintf(grid, sizeof grid, "4096 x %lld", lines);
    const adi::LineSet l = adi::to_lines(adi::InterleavedBatch{4096, lines});
    bench_long_lines<float>(grid, l, 4096 * lines, false);
  }
}

// --long-sweep (stop 36, issue 18): the crossover of the long-line kernel against the coalesced
// Thomas between the rows the dispatch has measured (n = 4096 with up to 16,384 lines takes the
// cluster form; n <= 1024 its own rows): lines of 1536 .. 4096 rows, 4,096 .. 32,768 of them,
// interleaved (lines adjacent: a Z sweep, the public case's one-rank box 128x128x2048 is
// 2048 x 16,384), fp64 then fp32, per-line and shared bands; every candidate, '*' the dispatch's.
void long_sweep() {
  std::printf("\n== Long-line crossover (issue 18, stop 36): ms against the traffic model (Bands 5 arrays, "
              "shared 2, at %.0f GB/s)\n",
              g_copy_gbs);
  long_header();
  for (int precision = 0; precision < 2; ++precision)
    for (long long n : {1536ll, 2048ll, 3072ll, 4096ll})
      for (long long lines : {4096ll, 8192ll, 16384ll, 32768ll}) {
        char grid[32];
        std::snprintf(grid, sizeof grid, "%lld x %lld", n, lines);
        const adi::LineSet l = adi::to_lines(adi::InterleavedBatch{n, lines});
        if (precision == 0)
          bench_long_lines<double>(grid, l, n * lines, false);
        else
          bench_long_lines<float>(grid, l, n * lines, false);
      }
}

// The public case's bands as bench_mpi_tridiagonal fills them: b in [3, 4], a and c in [-1, 1]
// (|c*| <= 1/2: the truncations decay within G rows), d in [-1, 1].
template <class T>
__global__ void fill_mpi_bands(long long total, T* a, T* b, T* c, T* d, unsigned long long seed) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;
       k += (long long)gridDim.x * blockDim.x) {
    a[k] = static_cast<T>(uniform(4 * k, seed));
    b[k] = static_cast<T>(3.5 + 0.5 * uniform(4 * k + 1, seed));
    c[k] = static_cast<T>(uniform(4 * k + 2, seed));
    d[k] = static_cast<T>(uniform(4 * k + 3, seed));
  }
}

// --truncated: one box along z (nx x ny lines of nz rows, lines adjacent), per-line bands of one
// kind; every variant timed solve by solve in turn (events around each, 3 warm-up rounds, median
// of g_reps rounds): cuda_thomas_pcr_long's plan, cuda_thomas_truncated's plan (the kernel, one
// flag read and, where a line is refused, the re-solve), the truncated kernel alone in forms 1 and
// 3 (no flag read). "taken": the kernel's flag after the last solve (no = refused: the plan re-solves).
// nx = ny = 0: one contiguous line of nz rows (the large-system shape, issue 16): the large plan
// (LargeTridiagonalPlan, its default route) instead of pcr_long, the kernel alone (a thread per
// part of the one line: loads not coalesced across the warp), no truncated plan row.
template <class T>
void truncated_ab(long long nx, long long ny, long long nz, bool mpi_bands) {
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  const bool large = nx == 0;
  char grid[48];
  if (large)
    std::snprintf(grid, sizeof grid, "1 x %lld", nz);
  else
    std::snprintf(grid, sizeof grid, "%lldx%lldx%lld", nx, ny, nz);
  const long long total = large ? nz : nx * ny * nz;
  const adi::LineSet l = large ? adi::LineSet{nz, 1, 1, nz, 1, nz}
                               : adi::to_lines(adi::BoxLines{adi::Box3::dense(nx, ny, nz), adi::Axis::z});
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  if (mpi_bands)
    fill_mpi_bands<T><<<2048, 256>>>(total, a.p, b.p, c.p, d.p, 4242);
  else
    fill_kernel<T><<<2048, 256>>>(total, nz, large ? 1 : l.stride, a.p, b.p, c.p, d.p, 4242);
  CK(cudaGetLastError());
  Dev<int> flag(1);
  CK(cudaMemset(flag.p, 0, sizeof(int)));
  adi::TridiagonalOptions o;
  o.check_pivots = false;
  const adi::Bands<T> bands{a.p, b.p, c.p};
  struct Variant {
    std::string name;
    bool shared;
    std::function<void()> run;
    std::vector<float> ms;
  };
  std::vector<Variant> vs;
  std::unique_ptr<adi::TridiagonalPlan<T>> long_plan, trunc_plan, auto_plan;
  std::unique_ptr<adi::LargeTridiagonalPlan<T>> large_plan, part_plan;
  // Shared bands (the box's rows: line 0's bands for every line; not for the large line).
  const long long ns = large ? 1 : nz;
  Dev<T> sa(ns), sb(ns), sc(ns);
  Dev<int> sflag(1);
  CK(cudaMemset(sflag.p, 0, sizeof(int)));
  const adi::SharedBands<T> sbands{sa.p, sb.p, sc.p};
  if (large) {
    adi::LargeTridiagonalOptions lo;
    lo.check_pivots = false;  // (as the other rows: no read-back)
    large_plan = std::make_unique<adi::LargeTridiagonalPlan<T>>(adi::Executor::cuda(), nz, 1, 0, lo);
    vs.push_back({"LargeTridiagonalPlan (default)", false, [&] { large_plan->solve(bands, d.p, u.p); }, {}});
    lo.kernel = adi::LargeKernel::partition;  // (the default before stop 44, when the default is truncated)
    part_plan = std::make_unique<adi::LargeTridiagonalPlan<T>>(adi::Executor::cuda(), nz, 1, 0, lo);
    vs.push_back({"LargeTridiagonalPlan (partition)", false, [&] { part_plan->solve(bands, d.p, u.p); }, {}});
  } else {
    auto line0 = [&](T* dst, const T* src) {  // line 0's rows (element stride l.stride) packed
      CK(cudaMemcpy2D(dst, sizeof(T), src, l.stride * sizeof(T), sizeof(T), nz, cudaMemcpyDeviceToDevice));
    };
    line0(sa.p, a.p), line0(sb.p, b.p), line0(sc.p, c.p);
    o.kernel = adi::Kernel::cuda_thomas_pcr_long;
    long_plan = std::make_unique<adi::TridiagonalPlan<T>>(adi::Executor::cuda(), l, o);
    o.kernel = adi::Kernel::cuda_thomas_truncated;
    trunc_plan = std::make_unique<adi::TridiagonalPlan<T>>(adi::Executor::cuda(), l, o);
    // What a user gets: automatic with the default options (checked; since stop 42 the truncated
    // sweeps on long lines of large batches, staying on the exact kernel once a line is refused).
    auto_plan = std::make_unique<adi::TridiagonalPlan<T>>(adi::Executor::cuda(), l, adi::TridiagonalOptions{});
    vs.push_back({"cuda_thomas_pcr_long (plan)", false, [&] { long_plan->solve(bands, d.p, u.p); }, {}});
    vs.push_back({"cuda_thomas_truncated (plan)", false, [&] { trunc_plan->solve(bands, d.p, u.p); }, {}});
    vs.push_back({"automatic (plan)", false, [&] { auto_plan->solve(bands, d.p, u.p); }, {}});
  }
  namespace k = adi::cuda_backend::kernels;
  for (int form : {1, 3})
    vs.push_back({"truncated kernel form " + std::to_string(form), false,
                  [&, form] {
                    k::launch_thomas_truncated<T, true>(l, a.p, b.p, c.p, false, d.p, u.p, form, flag.p, nullptr);
                  },
                  {}});
  // The plan's synchronisation alone (stop 43: the plan rows took 0.06-0.08 ms more than the
  // kernel's): form 3, then the stream synchronised and the flag read as the plan does; the plan
  // row minus this one is the plan's host work (pointer checks, dispatch).
  vs.push_back({"truncated kernel form 3 + sync", false,
                [&] {
                  k::launch_thomas_truncated<T, true>(l, a.p, b.p, c.p, false, d.p, u.p, 3, flag.p, nullptr);
                  int refused_now = 0;
                  CK(cudaMemcpy(&refused_now, flag.p, sizeof(int), cudaMemcpyDeviceToHost));
                },
                {}});
  if (!large) {
    vs.push_back({"cuda_thomas_pcr_long (plan)", true, [&] { long_plan->solve(sbands, d.p, u.p); }, {}});
    vs.push_back({"cuda_thomas_truncated (plan)", true, [&] { trunc_plan->solve(sbands, d.p, u.p); }, {}});
    vs.push_back({"automatic (plan)", true, [&] { auto_plan->solve(sbands, d.p, u.p); }, {}});
    vs.push_back({"truncated kernel form 3", true,
                  [&] {
                    k::launch_thomas_truncated<T, true>(l, sa.p, sb.p, sc.p, true, d.p, u.p, 3, sflag.p, nullptr);
                  },
                  {}});
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int r = 0; r < 3 + g_reps; ++r)
    for (Variant& v : vs) {
      CK(cudaEventRecord(e0));
      v.run();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float t = 0;
      CK(cudaEventElapsedTime(&t, e0, e1));
      if (r >= 3) v.ms.push_back(t);
    }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  int refused[2] = {0, 0};
  CK(cudaMemcpy(&refused[0], flag.p, sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&refused[1], sflag.p, sizeof(int), cudaMemcpyDeviceToHost));
  auto median = [](std::vector<float> m) {
    std::nth_element(m.begin(), m.begin() + m.size() / 2, m.end());
    return double(m[m.size() / 2]);
  };
  double base[2] = {0, 0};  // pcr_long's (or the large plan's) ms, per band kind: the first of each
  for (const Variant& v : vs)
    if (base[v.shared] == 0) base[v.shared] = median(v.ms);
  for (Variant& v : vs) {
    const double ms = median(v.ms);
    const double model = (v.shared ? 2.0 : 5.0) * double(total) * sizeof(T) / (g_copy_gbs * 1e6);
    v.run();  // the residual of this variant's answer
    CK(cudaDeviceSynchronize());
    const double r = v.shared ? residual<T>(total, nz, l.stride, sa.p, sb.p, sc.p, true, d.p, u.p)
                              : residual<T>(total, nz, large ? 1 : l.stride, a.p, b.p, c.p, false, d.p, u.p);
    std::printf("%-14s %-4s %-6s %-30s %9.4f %9.4f %7.2f %6.1f %7.3f %-5s %8.1e\n", grid, type,
                v.shared ? (mpi_bands ? "mpi-s" : "ben-s") : (mpi_bands ? "mpi" : "bench"), v.name.c_str(), ms, model,
                ms / model, 100.0 * model / ms, ms / base[v.shared], refused[v.shared] ? "no" : "yes", r);
  }
  if (auto_plan)
    std::printf("%-14s %-4s (automatic's kernel after these solves: %s, shared bands %s)\n", grid, type,
                adi::kernel_name(auto_plan->kernel()), adi::kernel_name(auto_plan->shared_bands_kernel()));
  std::fflush(stdout);
}

using BoxList = std::vector<std::array<long long, 3>>;

// --boxes' list (comma-separated NXxNYxNZ), or false where an entry is not one (named in `bad`).
bool parse_boxes(const std::string& list, BoxList& out, std::string& bad) {
  out.clear();
  for (std::size_t at = 0; at < list.size();) {
    std::size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string spec = list.substr(at, end - at);
    at = end + 1;
    long long nx = 0, ny = 0, nz = 0;
    if (std::sscanf(spec.c_str(), "%lldx%lldx%lld", &nx, &ny, &nz) != 3 || nx < 1 || ny < 1 || nz < 1) {
      bad = spec;
      return false;
    }
    out.push_back({nx, ny, nz});
  }
  return true;
}

// boxes: --boxes' list (lines along z), or empty for the default shapes below.
void truncated_lines(const BoxList& boxes) {
  std::printf("\n== Truncated sweeps A/B (issue 18 part 1): ms against the traffic model (per-line bands 5 "
              "arrays, shared (-s) 2) at %.0f GB/s (the copy of this run); vs = ms / cuda_thomas_pcr_long's (same "
              "band kind)\n",
              g_copy_gbs);
  std::printf("%-14s %-4s %-6s %-30s %9s %9s %7s %6s %7s %-5s %8s\n", "grid", "type", "bands", "variant", "ms",
              "model ms", "ratio", "%copy", "vs", "taken", "resid");
  if (!boxes.empty()) {  // --boxes: those boxes along z, both precisions, both kinds of bands
    for (const auto& [nx, ny, nz] : boxes)
      for (int mpi = 1; mpi >= 0; --mpi) {
        truncated_ab<double>(nx, ny, nz, mpi);
        truncated_ab<float>(nx, ny, nz, mpi);
      }
    return;
  }
  for (int mpi = 1; mpi >= 0; --mpi) {
    truncated_ab<double>(128, 128, 4096, mpi);
    truncated_ab<float>(128, 128, 4096, mpi);
    truncated_ab<double>(128, 128, 2048, mpi);
    truncated_ab<float>(128, 128, 2048, mpi);
  }
  // One large system (issue 16's "one large system >= 50% of copy"; the lead's stop-41 note): the
  // same kernel on one contiguous line of 2^24 rows, against the large plan. A bench row only.
  truncated_ab<double>(0, 0, 1ll << 24, true);
  truncated_ab<float>(0, 0, 1ll << 24, true);
}

}  // namespace

int main(int argc, char** argv) {
  bool do_sweep = true, do_tune = true, do_layouts = true, do_long = true, long_only = false, long_sweep_only = false;
  bool truncated_only = false;
  std::string boxes = "256x256x256,240x256x256";
  bool boxes_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--reps" && i + 1 < argc)
      g_reps = std::max(1, std::atoi(argv[++i]));
    else if (s == "--quick")
      g_reps = 5;
    else if (s == "--no-sweep")
      do_sweep = false;
    else if (s == "--no-tune")
      do_tune = false;
    else if (s == "--no-layouts")
      do_layouts = false;
    else if (s == "--no-long")
      do_long = false;
    else if (s == "--long-only")
      long_only = true;
    else if (s == "--long-sweep")
      long_sweep_only = true;
    else if (s == "--truncated")
      truncated_only = true;
    else if (s == "--filter" && i + 1 < argc)
      g_filter = argv[++i];
    else if (s == "--boxes" && i + 1 < argc)
      boxes = argv[++i], boxes_given = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--reps N] [--quick] [--no-sweep] [--no-tune] [--no-layouts] [--no-long] "
                   "[--long-only] [--long-sweep] [--truncated] [--filter TEXT] [--boxes NXxNYxNZ,...]\n",
                   argv[0]);
      return 2;
    }
  }
  BoxList box_list;
  if (std::string bad; !parse_boxes(boxes, box_list, bad)) {
    std::fprintf(stderr, "--boxes: '%s' is not NXxNYxNZ (e.g. 256x256x256)\n", bad.c_str());
    return 2;
  }
  if (!adi::Executor::cuda_available()) {
    std::printf("bench_cuda_tridiagonal: no CUDA device, nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, %.0f MB L2, peak memory %.0f GB/s (the dispatch's device figure); median of %d "
              "runs after 3 warm-ups\n",
              prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
              adi::cuda_backend::device_memory_gbs(0), g_reps);
  measure_copy();
  if (long_only) {
    long_lines();
    return 0;
  }
  if (long_sweep_only) {
    long_sweep();
    return 0;
  }
  if (truncated_only) {
    truncated_lines(boxes_given ? box_list : BoxList{});
    return 0;
  }
  cusparseHandle_t handle;
  CKS(cusparseCreate(&handle));
  std::printf("== Solves on dense boxes (Bands: 5 arrays moved; shared: 2 arrays, and 5-array equivalent)\n");
  header();
  for (const auto& [nx, ny, nz] : box_list) {
    bench_box<float>(handle, nx, ny, nz);
    bench_box<double>(handle, nx, ny, nz);
  }
  if (do_layouts) {
    std::printf(
        "\n== Unaligned starts and padded rows (dispatch's kernel, Bands; %%copy of the values on lines)\n");
    std::printf("%-12s %-4s %-4s %-28s %-28s %9s %8s %6s %8s %8s\n", "grid", "type", "axis", "layout",
                "kernel", "ms", "GB/s", "%copy", "x dense", "resid");
    bench_layouts<float>(256, 256, 256);
    bench_layouts<double>(256, 256, 256);
    bench_layouts<float>(240, 256, 256);
    bench_layouts<double>(240, 256, 256);
  }
  if (do_tune) {
    std::printf("\n== Tuning: launch shapes of the hybrids\n");
    header();
    tune<float>(256);
    tune<double>(256);
  }
  if (do_sweep) {
    std::printf("\n== Line-length sweep, 2^24 values (X: contiguous lines; Y: interleaved batch)\n");
    header();
    sweep<float>();
    sweep<double>();
  }
  if (do_long) long_lines();
  // Last, so that it ends the output (scripts/gpu_check.sh prints this log's tail).
  std::printf(
      "\n== Summary: dense boxes, Bands (5 arrays), %%copy of %.0f GB/s; target >= 85%% in every direction "
      "(issue 16)\n",
      g_copy_gbs);
  print_summary();
  cusparseDestroy(handle);
  return 0;
}
