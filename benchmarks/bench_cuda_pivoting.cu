// Partial pivoting on a CUDA device (Kernel::cuda_pivoting, docs/pivoting.md) in the same
// run as the non-pivoting kernels and cuSPARSE: gtsv2StridedBatch (pivoting, SPIKE with
// diagonal pivoting) and gtsv2_nopivot (its no-pivoting peer), as % of the copy bandwidth
// measured in this run (5 arrays counted: read a, b, c, d, write u).
//   1. a 256^3 box, fp32 and fp64, each axis: Thomas without a flag against automatic (the
//      Thomas kernels + the stability check, its flag read after one synchronisation) and
//      against ADI_PIVOTING_FALLBACK=device (the pivoting launch gated on the device flag),
//      check_pivots off and on: the check's cost; cuda_pivoting (n = 256: the xtile route on
//      X since stop 40 (the tile route before), the thread route on Y/Z; the staged, block and partition routes forced),
//      and for X (the layout cuSPARSE takes) gtsv2 / gtsv2_nopivot; the systems are
//      diagonally dominant, so automatic never falls back;
//   2. one system of 2^24 (and 2^20) unknowns: the large partition (automatic), cuda_pivoting (the
//      partition route: pivoting inside partitions of 17 rows, solvers/cuda/pivoting_partition.cuh),
//      gtsv2 and gtsv2_nopivot.
// The summary ends with the speed-ups of partial pivoting over cuSPARSE gtsv2 (target >= 3x).
// At 256^3 the other routes of cuda_pivoting are timed too, forced by ADI_PIVOTING_ROUTE
// (solvers/cuda/pivoting_thread.cuh; measurement only).
// The cost of the check itself: build with -DADI_THOMAS_CHECK=0 and compare the automatic
// rows (scripts/gpu_pivoting_check.sh --with-nocheck does both).
//   bench_cuda_pivoting [--reps=20] [--n=256] [--large=24] [--large2=20] [--cusparse=1] [--checkcost=1]
//                       [--routes=1] [--forms=1] [--profile=F] [--stop35=1] [--families=3] [--stop37=1]
//                       [--regpart=1] [--xtile=1] [--pair=1|2] [--fp32=0] [--fp64=0]
// --regpart=1 (stop 38, h-regpart): only the 256^3 rows of the register partition route
// (ADI_PIVOTING_ROUTE=regpart, solvers/cuda/pivoting_regpart.cuh; its 2x block width with
// ADI_PIVOTING_REGPART_LINES=narrow | wide: half / twice the lines a block) beside the thread route
// forced, alternating, per axis and precision.
// --xtile=1 (stop 39, h-pivx): only the 256^3 X rows of the X-tile route (ADI_PIVOTING_ROUTE=xtile,
// solvers/cuda/pivoting_xtile.cuh; ADI_PIVOTING_XTILE_BYTES=32: half the chunk;
// ADI_PIVOTING_XTILE_FORM=store | recompute: U stored / recomputed, not stored; recompute with
// 64-byte chunks is automatic's route on X since stop 40; the other three forms are compiled only
// with -DADI_CUDA_UNROLL_ALL=ON, other builds time the default in their rows and say so in the NOTE)
// beside the thread route forced and the tile route (automatic's on X to stop 39), alternating, per
// precision, dominant and Toeplitz 0.6 bands.
// --pair=1 (stop 53): only the --n^3 rows of the pair route (ADI_PIVOTING_ROUTE=pair,
// solvers/cuda/pivoting_pair.cuh; automatic's on Y/Z where it fits; ADI_PIVOTING_PAIR_FORM=shared |
// yu: U in shared memory / y' through u; ADI_PIVOTING_PAIR_ROWS=4 | 16: rows a chunk, compiled only
// with -DADI_CUDA_UNROLL_ALL=ON, else their rows time 8) beside the thread route forced, alternating,
// Y / Z / X dominant and Y Toeplitz 0.6, per precision; --pair=2 X lines only (and X Toeplitz 0.6);
// --fp32=0 / --fp64=0 leave a precision out.
// --forms=1 (default) times the partition route's forms 0 and 1 (ADI_PIVOTING_PARTITION_FORM, stop 33)
// and form 1 with the dominance test (ADI_PIVOTING_PARTITION_DOMINANCE=1; forms 0 and 1 with =0, the route alone)
// alternating on the one-system rows.
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "adi/executor.hpp"
#include "adi/layout.hpp"
#include "adi/large_tridiagonal.hpp"
#include "adi/tridiagonal.hpp"
#include "benchmarks/cuda_bench_util.cuh"
#include "solvers/cuda/backend.hpp"
#include "tests/scoped_env.hpp"

namespace {

#define CKS(call) CK_STATUS(call, CUSPARSE_STATUS_SUCCESS)

int g_reps = 20;
bool g_cusparse = true;  // --cusparse=0 leaves cuSPARSE out (the script's Nsight Compute run)
bool g_checkcost = true;  // --checkcost=0 leaves the automatic rows out (the Nsight Compute run:
                          // their gated pivoting launches return at once and would be profiled first)
bool g_routes = true;     // --routes=0 leaves partial pivoting and cuSPARSE out: the check's cost rows
                          // only (the script's extra passes against the -DADI_THOMAS_CHECK=0 build)
bool g_forms = true;      // --forms=0: the partition route's default form only (ADI_PIVOTING_PARTITION_FORM)
double g_copy_gbs = 0;

using adi::bench::Dev;

// Median of g_reps timed runs (one warm-up), in ms.
double time_ms(const std::function<void()>& f, int reps = 0) {
  return adi::bench::median_ms(f, reps > 0 ? reps : g_reps, {}, 1);
}

void measure_copy() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  g_copy_gbs = adi::bench::measure_copy(g_reps, 1, sms * 8, 512).best();
  std::printf("copy bandwidth (read+write, 1 GiB): %.0f GB/s = 100%%\n\n", g_copy_gbs);
}

// Random diagonally dominant bands (b in [4, 5], a, c in [-1, 1]), d in [-1, 1].
template <class T>
__global__ void fill_kernel(long long n, T* a, T* b, T* c, T* d) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
    unsigned long long x = (k + 1) * 0x9E3779B97F4A7C15ull;
    auto next = [&]() {
      x ^= x >> 31;
      x *= 0x94D049BB133111EBull;
      x ^= x >> 29;
      return double(x >> 11) * 0x1.0p-53;
    };
    a[k] = T(next() * 2 - 1);
    b[k] = T(4 + next());
    c[k] = T(next() * 2 - 1);
    d[k] = T(next() * 2 - 1);
  }
}

// Constant bands: Toeplitz b = 1, a = c = 0.6 (issue 23's indefinite family: not dominant-like,
// so since stop 34 the partition route sends it to the exact fall-back) and the heat operator
// b = 1 + 2r, a = c = -r, r = 1e4 (dominant, coefficients far from 1: stop 33's pivot test flagged
// it through the padding of a level's last partition, stop 34's does not).
template <class T>
__global__ void constant_bands_kernel(long long n, T* a, T* b, T* c, T va, T vb, T vc) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
    a[k] = va;
    b[k] = vb;
    c[k] = vc;
  }
}

struct Row {
  std::string what;
  double ms, pct;
};
std::vector<Row> g_rows;
std::vector<std::string> g_speedups;  // "partial pivoting vs gtsv2" lines for the summary
std::vector<std::string> g_costs;     // the check's cost per precision and axis

void speedup(const std::string& what, double ms_adi, double ms_gtsv2) {
  char text[200];
  std::snprintf(text, sizeof text, "  %-58s %6.2fx gtsv2 (%.3f vs %.3f ms)", what.c_str(), ms_gtsv2 / ms_adi, ms_adi,
                ms_gtsv2);
  g_speedups.push_back(text);
}

// arrays: values moved per element (5: a, b, c, d read, u written; 2 with shared bands).
void row(const std::string& what, double ms, double elems, std::size_t vs, int arrays = 5) {
  const double gbs = arrays * elems * vs / ms / 1e6;
  const double pct = 100.0 * gbs / g_copy_gbs;
  std::printf("%-58s %9.4f ms %8.0f GB/s %6.1f%% of copy\n", what.c_str(), ms, gbs, pct);
  g_rows.push_back({what, ms, pct});
}

cusparseStatus_t strided_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                                const float* x, int count, int stride, size_t* bytes) {
  return cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, count, stride, bytes);
}
cusparseStatus_t strided_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                                const double* x, int count, int stride, size_t* bytes) {
  return cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, count, stride, bytes);
}
cusparseStatus_t strided_run(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du, float* x,
                             int count, int stride, void* buf) {
  return cusparseSgtsv2StridedBatch(h, m, dl, d, du, x, count, stride, buf);
}
cusparseStatus_t strided_run(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                             double* x, int count, int stride, void* buf) {
  return cusparseDgtsv2StridedBatch(h, m, dl, d, du, x, count, stride, buf);
}
// gtsv2StridedBatch (no pivoting, batched) and gtsv2_nopivot (one matrix, `count` right-hand
// sides: the same matrix for every line, as cuSPARSE's nopivot takes it); pivoting gtsv2 is
// timed on a single system for the large case (gtsv2 with one right-hand side).
cusparseStatus_t gtsv2_run(cusparseHandle_t h, bool piv, int m, const float* dl, const float* d, const float* du,
                           float* x, int count, int stride, void* buf) {
  return piv ? cusparseSgtsv2(h, m, count, dl, d, du, x, m, buf)
             : cusparseSgtsv2_nopivot(h, m, count, dl, d, du, x, m, buf);
}
cusparseStatus_t gtsv2_run(cusparseHandle_t h, bool piv, int m, const double* dl, const double* d,
                           const double* du, double* x, int count, int stride, void* buf) {
  return piv ? cusparseDgtsv2(h, m, count, dl, d, du, x, m, buf)
             : cusparseDgtsv2_nopivot(h, m, count, dl, d, du, x, m, buf);
}
cusparseStatus_t gtsv2_size(cusparseHandle_t h, bool piv, int m, const float* dl, const float* d, const float* du,
                            const float* x, int count, size_t* bytes) {
  return piv ? cusparseSgtsv2_bufferSizeExt(h, m, count, dl, d, du, x, m, bytes)
             : cusparseSgtsv2_nopivot_bufferSizeExt(h, m, count, dl, d, du, x, m, bytes);
}
cusparseStatus_t gtsv2_size(cusparseHandle_t h, bool piv, int m, const double* dl, const double* d,
                            const double* du, const double* x, int count, size_t* bytes) {
  return piv ? cusparseDgtsv2_bufferSizeExt(h, m, count, dl, d, du, x, m, bytes)
             : cusparseDgtsv2_nopivot_bufferSizeExt(h, m, count, dl, d, du, x, m, bytes);
}

template <class T>
void bench_box(cusparseHandle_t handle, long long n) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long total = n * n * n;
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  fill_kernel<T><<<1024, 256>>>(total, a.p, b.p, c.p, d.p);
  CK(cudaDeviceSynchronize());
  const adi::Executor dev = adi::Executor::cuda();
  const adi::Box3 box = adi::Box3::dense(n, n, n);
  for (adi::Axis ax : {adi::Axis::x, adi::Axis::y, adi::Axis::z}) {
    const char* an = ax == adi::Axis::x ? "X" : ax == adi::Axis::y ? "Y" : "Z";
    auto run = [&](adi::Pivoting p, bool check, bool shared = false) {
      adi::TridiagonalOptions o;
      o.pivoting = p;
      o.check_pivots = check;
      adi::TridiagonalPlan<T> plan(dev, adi::BoxLines{box, ax}, o);
      const double ms = time_ms([&] {
        if (shared)  // the first n values of a, b, c: the band every line shares
          plan.solve(adi::SharedBands<T>{a.p, b.p, c.p}, d.p, u.p);
        else
          plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p);
      });
      return std::make_pair(ms, std::string(adi::kernel_name(shared ? plan.shared_bands_kernel() : plan.kernel())));
    };
    // The check's cost, against Thomas without a flag: automatic (the check's flag written
    // into pinned host memory, one synchronisation: the default), and automatic with the
    // device-side fall-back (ADI_PIVOTING_FALLBACK=device: a memset, the pivoting launch
    // gated on the device flag) with check_pivots off (nothing read back, no
    // synchronisation) and on. Taken twice, alternating, the smaller median of each kept.
    auto device_fallback = [&](bool check) {
      setenv("ADI_PIVOTING_FALLBACK", "device", 1);
      const double t = run(adi::Pivoting::automatic, check).first;
      unsetenv("ADI_PIVOTING_FALLBACK");
      return t;
    };
    double t_none = 1e30, t_auto = 1e30, t_dev = 1e30, t_dev_check = 1e30, t_none_s = 1e30, t_auto_s = 1e30;
    // Thomas with the options' default check_pivots (its zero-pivot flag read after one
    // synchronisation, as before issue 23): the non-pivoting solve a user gets by default.
    double t_none_c = 1e30, t_none_cs = 1e30;
    std::string k_none, k_none_s;
    for (int pass = 0; pass < (g_checkcost ? 2 : 0); ++pass) {
      auto r0 = run(adi::Pivoting::none, false);
      t_none = std::min(t_none, r0.first);
      k_none = r0.second;
      t_auto = std::min(t_auto, run(adi::Pivoting::automatic, true).first);
      t_dev = std::min(t_dev, device_fallback(false));
      t_dev_check = std::min(t_dev_check, device_fallback(true));
      // Shared bands (issue 23, stop 31: the Thomas-PCR hybrids check their shared factors once
      // per block): Thomas without a flag against automatic.
      auto r1 = run(adi::Pivoting::none, false, true);
      t_none_s = std::min(t_none_s, r1.first);
      k_none_s = r1.second;
      t_auto_s = std::min(t_auto_s, run(adi::Pivoting::automatic, true, true).first);
      t_none_c = std::min(t_none_c, run(adi::Pivoting::none, true).first);
      t_none_cs = std::min(t_none_cs, run(adi::Pivoting::none, true, true).first);
    }
    if (g_checkcost) {
      const std::string pa = std::string(prec) + " " + an;
      row(pa + " Thomas (" + k_none + ", pivoting none, no flag)", t_none, total, sizeof(T));
      row(pa + " Thomas with check_pivots (pivoting none, flag, synchronised)", t_none_c, total, sizeof(T));
      row(pa + " automatic (+ check, pinned flag, synchronised)", t_auto, total, sizeof(T));
      row(pa + " automatic, device fall-back, check_pivots off", t_dev, total, sizeof(T));
      row(pa + " automatic, device fall-back, check_pivots on", t_dev_check, total, sizeof(T));
      char text[240];
      std::snprintf(text, sizeof text,
                    "  %s %-24s %7.3f ms  automatic %+5.1f%%   device fall-back: %+5.1f%% (no check) %+5.1f%% (check)",
                    pa.c_str(), k_none.c_str(), t_none, 100.0 * (t_auto / t_none - 1), 100.0 * (t_dev / t_none - 1),
                    100.0 * (t_dev_check / t_none - 1));
      g_costs.push_back(text);
      row(pa + " shared bands, Thomas (" + k_none_s + ", pivoting none, no flag)", t_none_s, total, sizeof(T), 2);
      row(pa + " shared bands, Thomas with check_pivots (pivoting none, flag, synchronised)", t_none_cs, total,
          sizeof(T), 2);
      row(pa + " shared bands, automatic (+ check, pinned flag, synchronised)", t_auto_s, total, sizeof(T), 2);
      std::snprintf(text, sizeof text, "  %s %-24s %7.3f ms  automatic %+5.1f%%   (shared bands)", pa.c_str(),
                    k_none_s.c_str(), t_none_s, 100.0 * (t_auto_s / t_none_s - 1));
      g_costs.push_back(text);
    }
    if (!g_routes) continue;
    auto [t_piv, k_piv] = run(adi::Pivoting::partial, true);
    row(std::string(prec) + " " + an + " partial pivoting (" + k_piv + ", " +
            (ax == adi::Axis::x ? "pair where it fits, else xtile" : "pair where it fits, else thread") + " route)",
        t_piv, total, sizeof(T));
    // The other routes forced on the same layout (ADI_PIVOTING_ROUTE, measurement only).
    for (const char* route : {"staged", "thread", "tile", "block", "partition", "pair"}) {  // (xtile: --xtile=1)
      if (std::strcmp(route, "tile") == 0 && ax != adi::Axis::x) continue;  // contiguous lines only
      setenv("ADI_PIVOTING_ROUTE", route, 1);
      const double t = run(adi::Pivoting::partial, true).first;
      row(std::string(prec) + " " + an + " partial pivoting, " + route + " route forced", t, total, sizeof(T));
      unsetenv("ADI_PIVOTING_ROUTE");
    }
    if (ax == adi::Axis::x && g_cusparse) {
      // gtsv2StridedBatch does not pivot (cuSPARSE's batched layout); gtsv2 pivots but takes
      // one matrix for many right-hand sides: timed on one line of the box's matrix with all
      // n*n right-hand sides (the same bytes of d and u, fewer of a, b, c).
      std::size_t bytes = 0;
      CKS(cusparseSetStream(handle, 0));
      {
        CKS(strided_buffer(handle, (int)n, a.p, b.p, c.p, u.p, (int)(total / n), (int)n, &bytes));
        Dev<char> buf(bytes);
        const double ms =
            time_ms([&] { CKS(strided_run(handle, (int)n, a.p, b.p, c.p, u.p, (int)(total / n), (int)n, buf.p)); });
        row(std::string(prec) + " X cuSPARSE gtsv2StridedBatch (no pivoting)", ms, total, sizeof(T));
      }
      for (bool piv : {true, false}) {
        CKS(gtsv2_size(handle, piv, (int)n, a.p, b.p, c.p, u.p, (int)(total / n), &bytes));
        Dev<char> buf(bytes);
        // 0.2-0.5 s a call: 3 runs.
        const double ms =
            time_ms([&] { CKS(gtsv2_run(handle, piv, (int)n, a.p, b.p, c.p, u.p, (int)(total / n), 0, buf.p)); }, 3);
        row(std::string(prec) + " X cuSPARSE " + (piv ? "gtsv2 (pivoting" : "gtsv2_nopivot (") +
                ", one matrix, n*n rhs)",
            ms, total, sizeof(T));
        if (piv) speedup(std::string(prec) + " X partial pivoting (" + k_piv + ", automatic's route)", t_piv, ms);
      }
    }
  }
}

// A route of cuda_pivoting forced for the A/B modes: ADI_PIVOTING_ROUTE = route and the mode's
// knobs (environment variables) = value, value2 while the plan is made and timed.
struct RouteVariant {
  const char *name, *route, *value, *value2 = "";
};
// `passes` passes alternating the variants on the box's lines along ax (partial pivoting, per-line
// bands a, b, c); the smallest median of each variant, in ms.
template <class T>
std::vector<double> alternate_routes(const std::vector<RouteVariant>& variants, const char* knob, int passes,
                                     const adi::Box3& box, adi::Axis ax, const T* a, const T* b, const T* c,
                                     const T* d, T* u, const char* knob2 = "ADI_BENCH_UNUSED") {
  std::vector<double> best(variants.size(), 1e30);
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      setenv("ADI_PIVOTING_ROUTE", variants[v].route, 1);
      setenv(knob, variants[v].value, 1);
      setenv(knob2, variants[v].value2, 1);
      adi::TridiagonalOptions o;
      o.pivoting = adi::Pivoting::partial;
      adi::TridiagonalPlan<T> plan(adi::Executor::cuda(), adi::BoxLines{box, ax}, o);
      best[v] = std::min(best[v], time_ms([&] { plan.solve(adi::Bands<T>{a, b, c}, d, u); }));
      unsetenv("ADI_PIVOTING_ROUTE");
      unsetenv(knob);
      unsetenv(knob2);
    }
  return best;
}

// Stop 38 (--regpart=1): the register partition route against the thread route on the same 256^3
// box (dominant bands: no line falls back), per axis; three passes alternating the variants, the
// smallest median of each kept; % of copy counting 5 arrays.
template <class T>
void bench_regpart(long long n) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long total = n * n * n;
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  fill_kernel<T><<<1024, 256>>>(total, a.p, b.p, c.p, d.p);
  CK(cudaDeviceSynchronize());
  const adi::Box3 box = adi::Box3::dense(n, n, n);
  const char* knob = "ADI_PIVOTING_REGPART_LINES";
  const std::vector<RouteVariant> variants = {{"thread route forced", "thread", ""},
                                              {"regpart route forced", "regpart", ""},
                                              {"regpart forced, half the lines a block", "regpart", "narrow"},
                                              {"regpart forced, twice the lines a block", "regpart", "wide"}};
  for (adi::Axis ax : {adi::Axis::y, adi::Axis::z, adi::Axis::x}) {
    const char* an = ax == adi::Axis::x ? "X" : ax == adi::Axis::y ? "Y" : "Z";
    const std::vector<double> best = alternate_routes<T>(variants, knob, 3, box, ax, a.p, b.p, c.p, d.p, u.p);
    for (std::size_t v = 0; v < variants.size(); ++v)
      row(std::string(prec) + " " + an + " partial pivoting, " + variants[v].name, best[v], total, sizeof(T));
  }
  // Y, Toeplitz b = 1, a = c = 0.6 (not dominant-like: every line of the regpart route is marked
  // and re-solved by the thread route's loop): the fall-back's cost against the thread route.
  constant_bands_kernel<T><<<1024, 256>>>(total, a.p, b.p, c.p, T(0.6), T(1), T(0.6));
  CK(cudaDeviceSynchronize());
  const std::vector<RouteVariant> two(variants.begin(), variants.begin() + 2);
  const std::vector<double> best = alternate_routes<T>(two, knob, 2, box, adi::Axis::y, a.p, b.p, c.p, d.p, u.p);
  for (std::size_t v = 0; v < two.size(); ++v)
    row(std::string(prec) + " Y Toeplitz 0.6 (regpart: every line falls back), " + two[v].name, best[v], total,
        sizeof(T));
}

// The A/B of a route's forms (--xtile, --pair): `variants` alternating, three passes, the smallest
// median of each kept, on the n^3 box's lines along each of `axes` with dominant bands, then along
// the first axis with Toeplitz b = 1, a = c = 0.6 (not dominant: rows swap); % of copy counting 5
// arrays; rows "<prec> <axis> <bands>, <variant>".
template <class T>
void alternate_forms(long long n, const std::vector<RouteVariant>& variants, const char* knob, const char* knob2,
                     std::initializer_list<adi::Axis> axes) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long total = n * n * n;
  Dev<T> a(total), b(total), c(total), d(total), u(total);
  const adi::Box3 box = adi::Box3::dense(n, n, n);
  for (int bands = 0; bands < 2; ++bands) {
    fill_kernel<T><<<1024, 256>>>(total, a.p, b.p, c.p, d.p);
    if (bands == 1) constant_bands_kernel<T><<<1024, 256>>>(total, a.p, b.p, c.p, T(0.6), T(1), T(0.6));
    CK(cudaDeviceSynchronize());
    for (adi::Axis ax : axes) {
      if (bands == 1 && ax != *axes.begin()) continue;
      const char* an = ax == adi::Axis::x ? "X" : ax == adi::Axis::y ? "Y" : "Z";
      const std::vector<double> best =
          alternate_routes<T>(variants, knob, 3, box, ax, a.p, b.p, c.p, d.p, u.p, knob2);
      for (std::size_t v = 0; v < variants.size(); ++v)
        row(std::string(prec) + " " + an + " " + (bands == 0 ? "dominant" : "Toeplitz 0.6") + ", " + variants[v].name,
            best[v], total, sizeof(T));
    }
  }
}

// Stop 39 (--xtile=1): the X-tile route against the thread route forced and the tile route (the
// default on X) on the same 256^3 X lines.
template <class T>
void bench_xtile(long long n) {
  const std::vector<RouteVariant> variants = {{"thread route forced", "thread", ""},
                                              {"tile route forced (automatic's on X to stop 39)", "tile", ""},
                                              {"xtile store form", "xtile", "", "store"},
                                              {"xtile store form, 32-byte chunks", "xtile", "32", "store"},
                                              {"xtile recompute form (the default on X)", "xtile", "", "recompute"},
                                              {"xtile recompute form, 32-byte chunks", "xtile", "32", "recompute"}};
  alternate_forms<T>(n, variants, "ADI_PIVOTING_XTILE_BYTES", "ADI_PIVOTING_XTILE_FORM", {adi::Axis::x});
}

// Stop 53 (--pair=1): the pair route (two threads per line from both ends, U in shared memory;
// automatic's on Y/Z where it fits) in its forms against the thread route forced, Y, Z and X lines.
template <class T>
void bench_pair(long long n, bool x_only) {
  const std::vector<RouteVariant> variants = {{"thread route forced", "thread", ""},
                                              {"xtile route forced (automatic's on X; Y/Z: automatic's)", "xtile", ""},
                                              {"pair route, automatic's form", "pair", ""},
                                              {"pair, U in shared memory", "pair", "shared"},
                                              {"pair, y' through u", "pair", "yu"},
                                              {"pair, U in shared memory, 16 lines a warp", "pair", "shared", "half"},
                                              {"pair, U in shared memory, two warps on 32 lines", "pair", "shared", "split"},
                                              {"pair, y' through u, 16 lines a warp", "pair", "yu", "half"},
                                              {"pair, y' through u, two warps on 32 lines", "pair", "yu", "split"}};
  if (x_only)
    alternate_forms<T>(n, variants, "ADI_PIVOTING_PAIR_FORM", "ADI_PIVOTING_PAIR_LAYOUT", {adi::Axis::x});
  else
    alternate_forms<T>(n, variants, "ADI_PIVOTING_PAIR_FORM", "ADI_PIVOTING_PAIR_LAYOUT",
                       {adi::Axis::y, adi::Axis::z, adi::Axis::x});
}

// TridiagonalPlan's route for few long lines (Kernel::large_partition) on one line of n: median ms.
template <class T>
double large_route_ms(long long n, const T* a, const T* b, const T* c, const T* d, T* u, adi::Pivoting p, bool check) {
  adi::TridiagonalOptions o;
  o.pivoting = p;
  o.check_pivots = check;
  o.kernel = adi::Kernel::large_partition;
  adi::TridiagonalPlan<T> plan(adi::Executor::cuda(), adi::StridedLines::contiguous(n, 1), o);
  return time_ms([&] { plan.solve(adi::Bands<T>{a, b, c}, d, u); });
}

template <class T>
void bench_large(cusparseHandle_t handle, int log2n) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long n = 1ll << log2n;
  Dev<T> a(n), b(n), c(n), d(n), u(n);
  fill_kernel<T><<<1024, 256>>>(n, a.p, b.p, c.p, d.p);
  CK(cudaDeviceSynchronize());
  const adi::Executor dev = adi::Executor::cuda();
  const std::string tag = std::string(prec) + " one system of 2^" + std::to_string(log2n);
  auto solve_ms = [&](adi::Pivoting p, bool check = true) {
    adi::LargeTridiagonalOptions o;
    o.pivoting = p;
    o.check_pivots = check;
    adi::LargeTridiagonalPlan<T> plan(dev, n, 1, 0, o);
    return time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p); });
  };
  // The large plan's check (its growth test, and its flag published into pinned host memory
  // by the direct kernel, read after one synchronisation; stop 32: a memset and a copy back
  // before) against no check: taken twice, alternating, the smaller median of each kept.
  double t_none = 1e30, t_auto = 1e30, t_none_c = 1e30;
  for (int pass = 0; pass < 2; ++pass) {
    t_none = std::min(t_none, solve_ms(adi::Pivoting::none, false));
    t_auto = std::min(t_auto, solve_ms(adi::Pivoting::automatic));
    t_none_c = std::min(t_none_c, solve_ms(adi::Pivoting::none));
  }
  row(tag + " large plan, pivoting none (partition)", t_none, n, sizeof(T));
  row(tag + " large plan, pivoting automatic (partition)", t_auto, n, sizeof(T));
  row(tag + " large plan, Thomas with check_pivots (pivoting none, flag)", t_none_c, n, sizeof(T));
  char text[240];
  std::snprintf(text, sizeof text, "  %s large plan (partition) %7.3f ms  automatic %+5.1f%%", tag.c_str(), t_none,
                100.0 * (t_auto / t_none - 1));
  g_costs.push_back(text);
  // TridiagonalPlan's route for few long lines (Kernel::large_partition; stop 33: its check
  // published into pinned memory as the large plan's, no memset and no copy back).
  auto route_ms = [&](adi::Pivoting p, bool check) { return large_route_ms<T>(n, a.p, b.p, c.p, d.p, u.p, p, check); };
  double r_none = 1e30, r_auto = 1e30;
  for (int pass = 0; pass < 2; ++pass) {
    r_none = std::min(r_none, route_ms(adi::Pivoting::none, false));
    r_auto = std::min(r_auto, route_ms(adi::Pivoting::automatic, true));
  }
  row(tag + " TridiagonalPlan large route, pivoting none", r_none, n, sizeof(T));
  row(tag + " TridiagonalPlan large route, pivoting automatic", r_auto, n, sizeof(T));
  std::snprintf(text, sizeof text, "  %s TridiagonalPlan large route %7.3f ms  automatic %+5.1f%%", tag.c_str(),
                r_none, 100.0 * (r_auto / r_none - 1));
  g_costs.push_back(text);
  if (!g_routes) return;
  // The partition route's forms (ADI_PIVOTING_PARTITION_FORM, solvers/cuda/pivoting_partition.cuh;
  // stop 33): 0 stop 32's kernels, 1 (the default) contiguous loads / stores and the fill in
  // reverse order (both without the dominance test, =0: the route alone); and (stop 34) form 1
  // with the test forced on (ADI_PIVOTING_PARTITION_DOMINANCE=1, the A/B of its cost; since stop 37
  // the default out of place). Taken three times, alternating, the
  // smaller median of each kept; --forms=0 times the default only.
  constexpr int kForms = 3;
  const char* form_env[kForms] = {"0", "1", "1"};
  const char* form_name[kForms] = {"form 0", "form 1", "form 1 + dominance test (=1)"};
  double t_form[kForms] = {1e30, 1e30, 1e30};
  for (int pass = 0; pass < (g_forms ? 3 : 1); ++pass)
    for (int f = 0; f < (g_forms ? kForms : 1); ++f) {
      if (g_forms) setenv("ADI_PIVOTING_PARTITION_FORM", form_env[f], 1);
      // Forms 0 and 1 without the dominance test (stop 35 made it the default out of place).
      if (g_forms) setenv("ADI_PIVOTING_PARTITION_DOMINANCE", f == 2 ? "1" : "0", 1);
      t_form[f] = std::min(t_form[f], solve_ms(adi::Pivoting::partial));
      unsetenv("ADI_PIVOTING_PARTITION_FORM");
      unsetenv("ADI_PIVOTING_PARTITION_DOMINANCE");
    }
  const double t_partial = t_form[0];
  row(tag + " large plan, pivoting partial (cuda_pivoting, partition route" + (g_forms ? ", form 0)" : ")"),
      t_partial, n, sizeof(T));
  for (int f = 1; f < (g_forms ? kForms : 1); ++f)
    row(tag + " large plan, pivoting partial (partition route, " + form_name[f] + ")", t_form[f], n, sizeof(T));
  if (g_forms) {
    std::snprintf(text, sizeof text, "  %s partition route form 1 %7.3f ms  dominance test (=1) %+5.1f%% (%.3f ms)",
                  tag.c_str(), t_form[1], 100.0 * (t_form[2] / t_form[1] - 1), t_form[2]);
    g_costs.push_back(text);
  }
  // Stop 34 on two constant-band systems, the default (since stop 37 the dominance test +
  // refinement out of place) against the test forced on (ADI_PIVOTING_PARTITION_DOMINANCE=1: out
  // of place the same as the default; in place the exact fall-back, one thread per line; the
  // route alone: up to 18-97x LAPACK's error in fp64): Toeplitz 0.6 (not dominant-like) and
  // the heat operator r = 1e4 (the route either way since the scale-neutral padding; stop 33's
  // pivot test sent it to the fall-back: 228 / 320 ms on the H100). One-system rows of 2^20 and
  // below, 3 runs each.
  if (g_forms && log2n <= 20) {
    Dev<T> ta(n), tb(n), tc(n);
    for (int fam = 0; fam < 2; ++fam) {
      const char* name = fam == 0 ? "Toeplitz 0.6" : "heat r = 1e4";
      if (fam == 0)
        constant_bands_kernel<T><<<1024, 256>>>(n, ta.p, tb.p, tc.p, T(0.6), T(1), T(0.6));
      else
        constant_bands_kernel<T><<<1024, 256>>>(n, ta.p, tb.p, tc.p, T(-1e4), T(20001), T(-1e4));
      CK(cudaDeviceSynchronize());
      // Stop 34, h-refine: with the test, out of place, flagged lines are refined (one refinement step,
      // the route twice); in place (u == d) they still take the exact fall-back (here: u is both).
      double t34[3] = {0, 0, 0};
      for (int on = 0; on < 3; ++on) {
        if (on >= 1) setenv("ADI_PIVOTING_PARTITION_DOMINANCE", "1", 1);
        adi::LargeTridiagonalOptions o;
        o.pivoting = adi::Pivoting::partial;
        adi::LargeTridiagonalPlan<T> plan(dev, n, 1, 0, o);
        t34[on] = time_ms([&] { plan.solve(adi::Bands<T>{ta.p, tb.p, tc.p}, on == 2 ? u.p : d.p, u.p); }, 3);
        unsetenv("ADI_PIVOTING_PARTITION_DOMINANCE");
      }
      row(tag + " " + name + ", partial (default: test + refinement out of place)", t34[0], n, sizeof(T));
      row(tag + " " + name + ", partial, dominance test + refinement (=1)", t34[1], n, sizeof(T));
      row(tag + " " + name + ", partial, dominance test in place: fall-back (=1)", t34[2], n, sizeof(T));
      std::snprintf(text, sizeof text,
                    "  %s %s, partial: default %.3f ms, dominance test + refinement (=1) %.3f ms (%.2fx), in "
                    "place (=1: fall-back) %.3f ms (%.2fx)",
                    tag.c_str(), name, t34[0], t34[1], t34[1] / t34[0], t34[2], t34[2] / t34[0]);
      g_costs.push_back(text);
    }
  }
  for (bool piv : {true, false}) {
    if (!g_cusparse) break;
    std::size_t bytes = 0;
    CKS(gtsv2_size(handle, piv, (int)n, a.p, b.p, c.p, u.p, 1, &bytes));
    Dev<char> buf(bytes);
    const double ms = time_ms([&] { CKS(gtsv2_run(handle, piv, (int)n, a.p, b.p, c.p, u.p, 1, 0, buf.p)); });
    row(tag + " cuSPARSE " + (piv ? "gtsv2 (pivoting)" : "gtsv2_nopivot"), ms, n, sizeof(T));
    if (!piv) continue;
    speedup(tag + " partial pivoting (partition route" + (g_forms ? ", form 0)" : ")"), t_partial, ms);
    for (int f = 1; f < (g_forms ? kForms : 1); ++f)
      speedup(tag + " partial pivoting (partition route, " + form_name[f] + ")", t_form[f], ms);
  }
}

// --stop35=1 (scripts/gpu_pivoting_check.sh --stop35): the refinement's gate (stop 35,
// ADI_PIVOTING_REFINE_GATE, solvers/cuda/pivoting_partition.cuh) on one system of 2^--large and
// 2^--large2, LargeTridiagonalPlan, pivoting partial, out of place. Variants, alternating, best of 3
// medians of --reps: the route without the test (ADI_PIVOTING_PARTITION_DOMINANCE=0), the default
// (unset), and the test + refinement (=1) under each gate: launches (stop 34's gated launches),
// solve (the whole solve as one graph, the refinement behind an IF node; stop 37 removed the
// graph gate and its rows); on random dominant bands (nothing flagged: what the gate costs), on the
// Toeplitz 0.6 line (every line flagged: the refinement runs) and the heat operator r = 1e4
// (never flagged); cuSPARSE gtsv2. At 2^20 also the solve gate's cost of new pointers: u
// rotating over 9 arrays (the cache holds 8 graphs: every solve captures and instantiates one)
// against 2 (every solve finds its graph). Stop 36: also the solve gate's graph without its IF
// node (ADI_PIVOTING_REFINE_GRAPH_IF=0: the refinement's kernels in the graph, gated on the
// device flag: what the memcheck-checkable form would cost); --families=1: the dominant rows only
// (nothing flagged: the gates' cost), without the rotating rows.
const char* const kStop35Env[] = {"0", nullptr, "1", "1", "1"};
const char* const kStop35Gate[] = {nullptr, nullptr, "launches", "solve", "solve"};
const char* const kStop35Name[] = {"route, no test (DOMINANCE=0)", "default (DOMINANCE unset)",
                                   "test + refinement, gate launches", "test + refinement, gate solve",
                                   "test + refinement, gate solve, no IF node"};
constexpr int kStop35Variants = 5;
constexpr int kStop35Solve = 3, kStop35SolveNoIf = 4;  // the variants of the solve gate
struct Stop35Env {
  explicit Stop35Env(int v) {
    if (kStop35Env[v] != nullptr) setenv("ADI_PIVOTING_PARTITION_DOMINANCE", kStop35Env[v], 1);
    if (kStop35Gate[v] != nullptr) setenv("ADI_PIVOTING_REFINE_GATE", kStop35Gate[v], 1);
    if (v == kStop35SolveNoIf) setenv("ADI_PIVOTING_REFINE_GRAPH_IF", "0", 1);
  }
  ~Stop35Env() {
    unsetenv("ADI_PIVOTING_PARTITION_DOMINANCE");
    unsetenv("ADI_PIVOTING_REFINE_GATE");
    unsetenv("ADI_PIVOTING_REFINE_GRAPH_IF");
  }
};
int g_families = 3;  // --families (stop 36: 1 = the dominant rows only)

template <class T>
void bench_stop35(cusparseHandle_t handle, int log2n) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long n = 1ll << log2n;
  const std::string tag = std::string(prec) + " 2^" + std::to_string(log2n);
  Dev<T> a(n), b(n), c(n), d(n), u(n), ta(n), tb(n), tc(n), ha(n), hb(n), hc(n);
  fill_kernel<T><<<1024, 256>>>(n, a.p, b.p, c.p, d.p);
  constant_bands_kernel<T><<<1024, 256>>>(n, ta.p, tb.p, tc.p, T(0.6), T(1), T(0.6));
  constant_bands_kernel<T><<<1024, 256>>>(n, ha.p, hb.p, hc.p, T(-1e4), T(20001), T(-1e4));
  CK(cudaDeviceSynchronize());
  const adi::Executor dev = adi::Executor::cuda();
  adi::LargeTridiagonalOptions o;
  o.pivoting = adi::Pivoting::partial;
  auto solve = [&](int v, const T* pa, const T* pb, const T* pc) {
    Stop35Env env(v);
    adi::LargeTridiagonalPlan<T> plan(dev, n, 1, 0, o);
    return time_ms([&] { plan.solve(adi::Bands<T>{pa, pb, pc}, d.p, u.p); });
  };
  const T* bands[3][3] = {{a.p, b.p, c.p}, {ta.p, tb.p, tc.p}, {ha.p, hb.p, hc.p}};
  const char* fam[3] = {"dominant (nothing flagged)", "Toeplitz 0.6 (flagged: refined)", "heat r = 1e4 (never flagged)"};
  double t[3][kStop35Variants];
  for (auto& f : t)
    for (double& x : f) x = 1e30;
  const int families = std::max(1, std::min(3, g_families));
  for (int pass = 0; pass < 3; ++pass)
    for (int f = 0; f < families; ++f)
      for (int v = 0; v < kStop35Variants; ++v) t[f][v] = std::min(t[f][v], solve(v, bands[f][0], bands[f][1], bands[f][2]));
  for (int f = 0; f < families; ++f)
    for (int v = 0; v < kStop35Variants; ++v)
      row(tag + " " + fam[f] + ", " + kStop35Name[v], t[f][v], n, sizeof(T));
  double gt = 0;
  if (g_cusparse) {
    std::size_t bytes = 0;
    CKS(gtsv2_size(handle, true, (int)n, a.p, b.p, c.p, u.p, 1, &bytes));
    Dev<char> buf(bytes);
    gt = time_ms([&] { CKS(gtsv2_run(handle, true, (int)n, a.p, b.p, c.p, u.p, 1, 0, buf.p)); });
    row(tag + " cuSPARSE gtsv2 (pivoting)", gt, n, sizeof(T));
  }
  char text[300];
  for (int f = 0; f < families; ++f) {
    std::snprintf(text, sizeof text,
                  "  %s %-32s no test %7.3f ms | default %+6.1f%% | launches %+6.1f%% | solve %+6.1f%% | "
                  "solve, no IF %+6.1f%%",
                  tag.c_str(), fam[f], t[f][0], 100 * (t[f][1] / t[f][0] - 1), 100 * (t[f][2] / t[f][0] - 1),
                  100 * (t[f][3] / t[f][0] - 1), 100 * (t[f][4] / t[f][0] - 1));
    g_costs.push_back(text);
  }
  if (gt > 0)
    for (int v : {0, 1, kStop35Solve}) speedup(tag + " dominant, " + kStop35Name[v], t[0][v], gt);
  if (log2n > 20 || families < 3) return;
  // The solve gate with new pointers: u rotating over 9 arrays (every solve builds a graph) or 2.
  std::vector<std::unique_ptr<Dev<T>>> outs;
  for (int i = 0; i < 9; ++i) outs.push_back(std::make_unique<Dev<T>>(n));
  for (int sets : {2, 9}) {
    Stop35Env env(kStop35Solve);
    adi::LargeTridiagonalPlan<T> plan(dev, n, 1, 0, o);
    int k = 0;
    const double ms = time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, outs[static_cast<std::size_t>((k++) % sets)]->p); });
    row(tag + " dominant, gate solve, u over " + std::to_string(sets) + " arrays" + (sets > 8 ? " (new graph each)" : ""), ms, n, sizeof(T));
    std::snprintf(text, sizeof text, "  %s dominant, gate solve, u rotating over %d arrays: %7.3f ms (%+.1f%% against no test)",
                  tag.c_str(), sets, ms, 100 * (ms / t[0][0] - 1));
    g_costs.push_back(text);
  }
}

// --stop37=1 (scripts/gpu_pivoting_check.sh --stop37; docs/pivoting.md "Stop 37"): the large plan's
// check on one system of 2^--large and 2^--large2 (random dominant bands: never flagged), each
// form of ADI_LARGE_CHECK_FORM (0: stop 32's kernels, 1: the fused check, the default, 2: fused
// without pass 1's register hold), alternating, best of 3 medians of --reps:
//   none       LargeTridiagonalPlan, pivoting none, check_pivots off (no flag, no synchronisation)
//   automatic  the default options (the check, its flag published into pinned memory, one
//              synchronisation), i.e. what issue 23's "whole" column compares with none
//   kernels    the backend's partition with the plan's device flag and pinned report but no
//              synchronisation (cuda_backend::large_solve): automatic's kernels without the wait,
//              so automatic - kernels is the synchronisation and kernels - none the check's arithmetic
//   device     automatic with ADI_PIVOTING_FALLBACK=device (the fall-back decided on the device, one
//              graph launch a solve; opt-in), check_pivots off (nothing waited for) and on, forms 0, 1
// and TridiagonalPlan's large route (Kernel::large_partition), none and automatic, forms 0 and 1.
template <class T>
void bench_stop37(int log2n) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const long long n = 1ll << log2n;
  const std::string tag = std::string(prec) + " 2^" + std::to_string(log2n);
  Dev<T> a(n), b(n), c(n), d(n), u(n);
  fill_kernel<T><<<1024, 256>>>(n, a.p, b.p, c.p, d.p);
  CK(cudaDeviceSynchronize());
  const adi::Executor dev = adi::Executor::cuda();
  constexpr int kForms = 3;
  const char* env[kForms] = {"0", "1", "2"};
  auto plan_ms = [&](adi::Pivoting p, bool check) {
    adi::LargeTridiagonalOptions o;
    o.pivoting = p;
    o.check_pivots = check;
    adi::LargeTridiagonalPlan<T> plan(dev, n, 1, 0, o);
    return time_ms([&] { plan.solve(adi::Bands<T>{a.p, b.p, c.p}, d.p, u.p); });
  };
  // The backend with a device flag and a pinned report, nothing waited for (the plan's kernels).
  const int chunk = adi::LargeTridiagonalPlan<T>(dev, n).chunk();
  Dev<char> ws(adi::cuda_backend::large_workspace_bytes(n, false, chunk, sizeof(T)));
  Dev<unsigned long long> flag(1);
  CK(cudaMemset(flag.p, 0, sizeof(unsigned long long)));
  unsigned long long* report = nullptr;
  CK(cudaMallocHost(&report, sizeof(unsigned long long)));
  *report = 0;
  auto kernels_ms = [&] {
    return time_ms([&] {
      adi::cuda_backend::large_solve<T>(n, a.p, b.p, c.p, d.p, u.p, false, chunk, 0.0, ws.p, flag.p,
                                        static_cast<unsigned long long>(n), nullptr, 0, report);
    });
  };
  auto route_ms = [&](adi::Pivoting p, bool check) { return large_route_ms<T>(n, a.p, b.p, c.p, d.p, u.p, p, check); };
  // The fall-back decided on the device (ADI_PIVOTING_FALLBACK=device when the plan is made; stop
  // 37, opt-in): one graph launch a solve, check_pivots off (nothing waited for) and on.
  auto device_ms = [&](bool check) {
    const adi::test::ScopedEnv fb("ADI_PIVOTING_FALLBACK", "device");  // restored after, also if a solve throws
    return plan_ms(adi::Pivoting::automatic, check);
  };
  double none[kForms], autom[kForms], kern[kForms], rnone[2], rauto[2], dev_off[2], dev_on[2];
  for (int f = 0; f < kForms; ++f) none[f] = autom[f] = kern[f] = 1e30;
  rnone[0] = rnone[1] = rauto[0] = rauto[1] = dev_off[0] = dev_off[1] = dev_on[0] = dev_on[1] = 1e30;
  for (int pass = 0; pass < 3; ++pass)
    for (int f = 0; f < kForms; ++f) {
      const adi::test::ScopedEnv e("ADI_LARGE_CHECK_FORM", env[f]);  // the caller's value restored after
      none[f] = std::min(none[f], plan_ms(adi::Pivoting::none, false));
      autom[f] = std::min(autom[f], plan_ms(adi::Pivoting::automatic, true));
      kern[f] = std::min(kern[f], kernels_ms());
      if (f < 2) {
        rnone[f] = std::min(rnone[f], route_ms(adi::Pivoting::none, false));
        rauto[f] = std::min(rauto[f], route_ms(adi::Pivoting::automatic, true));
        dev_off[f] = std::min(dev_off[f], device_ms(false));
        dev_on[f] = std::min(dev_on[f], device_ms(true));
      }
    }
  const bool clean = *report == 0;
  CK(cudaFreeHost(report));
  const char* fname[kForms] = {"form 0 (stop 32)", "form 1 (fused, default)", "form 2 (fused, no hold)"};
  for (int f = 0; f < kForms; ++f) {
    row(tag + " large plan " + fname[f] + ", none", none[f], n, sizeof(T));
    row(tag + " large plan " + fname[f] + ", automatic", autom[f], n, sizeof(T));
    row(tag + " large plan " + fname[f] + ", kernels, no sync", kern[f], n, sizeof(T));
  }
  for (int f = 0; f < 2; ++f) {
    row(tag + " large plan " + fname[f] + ", automatic, device fall-back, check_pivots off", dev_off[f], n,
        sizeof(T));
    row(tag + " large plan " + fname[f] + ", automatic, device fall-back, check_pivots on", dev_on[f], n, sizeof(T));
  }
  for (int f = 0; f < 2; ++f) {
    row(tag + " TridiagonalPlan large route " + fname[f] + ", none", rnone[f], n, sizeof(T));
    row(tag + " TridiagonalPlan large route " + fname[f] + ", automatic", rauto[f], n, sizeof(T));
  }
  char text[400];
  for (int f = 0; f < kForms; ++f) {
    std::snprintf(text, sizeof text,
                  "  %s %-24s none %7.4f ms | automatic %+5.1f%% (whole) = kernels %+5.1f%% + sync %+5.1f%% | "
                  "automatic vs form 0's none %+5.1f%%%s",
                  tag.c_str(), fname[f], none[f], 100 * (autom[f] / none[f] - 1), 100 * (kern[f] / none[f] - 1),
                  100 * (autom[f] - kern[f]) / none[f], 100 * (autom[f] / none[0] - 1),
                  clean ? "" : "  (FLAG RAISED on dominant bands)");
    g_costs.push_back(text);
  }
  for (int f = 0; f < 2; ++f) {
    std::snprintf(text, sizeof text,
                  "  %s %-24s automatic, device fall-back (ADI_PIVOTING_FALLBACK=device): check_pivots off %+5.1f%%, "
                  "on %+5.1f%% (against none)",
                  tag.c_str(), fname[f], 100 * (dev_off[f] / none[f] - 1), 100 * (dev_on[f] / none[f] - 1));
    g_costs.push_back(text);
  }
  for (int f = 0; f < 2; ++f) {
    std::snprintf(text, sizeof text, "  %s TridiagonalPlan large route %-24s none %7.4f ms | automatic %+5.1f%%",
                  tag.c_str(), fname[f], rnone[f], 100 * (rauto[f] / rnone[f] - 1));
    g_costs.push_back(text);
  }
}

// --profile=F (scripts/gpu_pivoting_check.sh --ab, under Nsight Compute): two partial-pivoting
// solves of one fp32 system of 2^--large with the partition route's form F and nothing else,
// so the second solve's pivoting kernels are launches 13 .. 24 of them (2^24: five reduce
// levels, the last reduced line, five fill levels, the gated thread route).
void profile_large(int log2n, int form) {
  const long long n = 1ll << log2n;
  Dev<float> a(n), b(n), c(n), d(n), u(n);
  fill_kernel<float><<<1024, 256>>>(n, a.p, b.p, c.p, d.p);
  CK(cudaDeviceSynchronize());
  setenv("ADI_PIVOTING_PARTITION_FORM", std::to_string(form).c_str(), 1);
  setenv("ADI_PIVOTING_PARTITION_DOMINANCE", "0", 1);  // the route's kernels only (launches 13 .. 24)
  adi::LargeTridiagonalOptions o;
  o.pivoting = adi::Pivoting::partial;
  adi::LargeTridiagonalPlan<float> plan(adi::Executor::cuda(), n, 1, 0, o);
  for (int k = 0; k < 2; ++k) plan.solve(adi::Bands<float>{a.p, b.p, c.p}, d.p, u.p);
  CK(cudaDeviceSynchronize());
  unsetenv("ADI_PIVOTING_PARTITION_FORM");
  unsetenv("ADI_PIVOTING_PARTITION_DOMINANCE");
  std::printf("profiled: fp32 one system of 2^%d, partition route form %d, two solves\n", log2n, form);
}

// Every argument must be --NAME=INTEGER with a NAME below (or --help): a misspelt option is a usage
// error (exit 2), not a silently ignored one.
constexpr const char* kFlags[] = {"reps",    "cusparse", "checkcost", "routes", "forms",  "families",
                                  "n",       "large",    "large2",    "profile", "stop35", "stop37",
                                  "regpart", "xtile",    "pair",      "fp32",   "fp64"};
int check_args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf(
          "Usage: bench_cuda_pivoting [--reps=20] [--n=256] [--large=24] [--large2=20] [--cusparse=1] [--checkcost=1]\n"
          "         [--routes=1] [--forms=1] [--profile=F] [--stop35=1] [--families=3] [--stop37=1] [--regpart=1]\n"
          "         [--xtile=1] [--pair=1|2] [--fp32=0] [--fp64=0]\n"
          "Partial pivoting and the check on the GPU against cuSPARSE gtsv2 (benchmarks/bench_cuda_pivoting.cu's\n"
          "header says what each option times). Exit 0, 2 on a usage error, 77 without a CUDA device.\n");
      return 0;
    }
    const std::size_t eq = a.find('=');
    const std::string name = a.rfind("--", 0) == 0 && eq != std::string::npos ? a.substr(2, eq - 2) : "";
    bool known = false;
    for (const char* f : kFlags) known |= name == f;
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    char* end = nullptr;
    const long v = value.empty() ? 0 : std::strtol(value.c_str(), &end, 10);
    if (!known || value.empty() || *end != '\0' || v < -1000000 || v > 1000000) {
      std::fprintf(stderr, "bench_cuda_pivoting: '%s' is not --NAME=INTEGER with a known NAME (see --help)\n",
                   a.c_str());
      return 2;
    }
  }
  return -1;
}

int flag(int argc, char** argv, const char* name, int def) {
  const std::string p = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], p.c_str(), p.size()) == 0) return std::atoi(argv[i] + p.size());
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  if (const int rc = check_args(argc, argv); rc >= 0) return rc;
  if (!adi::Executor::cuda_available()) {
    std::printf("SKIPPED: no CUDA device: bench_cuda_pivoting not run\n");
    return 77;
  }
  if (!adi::cuda_backend::timing_forms_compiled())
    std::printf("NOTE: the forms kept for comparison (ADI_PIVOTING_ROUTE=staged|block|regpart, "
                "ADI_PIVOTING_PARTITION_FORM=0, ADI_LARGE_CHECK_FORM=0|2, ADI_PIVOTING_XTILE_FORM=store, "
                "ADI_PIVOTING_XTILE_BYTES=32, ADI_PIVOTING_PAIR_ROWS=4|16) are compiled only with -DADI_CUDA_UNROLL_ALL=ON: their rows "
                "time the default here\n");
  g_reps = flag(argc, argv, "reps", 20);
  g_cusparse = flag(argc, argv, "cusparse", 1) != 0;
  g_checkcost = flag(argc, argv, "checkcost", 1) != 0;
  g_routes = flag(argc, argv, "routes", 1) != 0;
  g_forms = flag(argc, argv, "forms", 1) != 0;
  g_families = flag(argc, argv, "families", 3);
  const int n = flag(argc, argv, "n", 256), large = flag(argc, argv, "large", 24),
            large2 = flag(argc, argv, "large2", 20);
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  #if defined(ADI_THOMAS_CHECK)
  const int check = ADI_THOMAS_CHECK;
#else
  const int check = 1;
#endif
  if (const int form = flag(argc, argv, "profile", -1); form >= 0) {
    profile_large(large, form);
    return 0;
  }
  std::printf("device: %s; median of %d runs; ADI_THOMAS_CHECK=%d\n", prop.name, g_reps, check);
  measure_copy();
  cusparseHandle_t handle;
  CKS(cusparseCreate(&handle));
  const bool stop35 = flag(argc, argv, "stop35", 0) != 0;
  const bool stop37 = flag(argc, argv, "stop37", 0) != 0;
  if (const int pair = flag(argc, argv, "pair", 0); pair != 0) {  // 2: X lines only
    if (flag(argc, argv, "fp32", 1) != 0) bench_pair<float>(n, pair == 2);
    if (flag(argc, argv, "fp64", 1) != 0) bench_pair<double>(n, pair == 2);
  } else if (flag(argc, argv, "xtile", 0) != 0) {
    bench_xtile<float>(n);
    bench_xtile<double>(n);
  } else if (flag(argc, argv, "regpart", 0) != 0) {
    bench_regpart<float>(n);
    bench_regpart<double>(n);
  } else if (stop37) {  // the large plan's check only
    for (int lg : {large, large2}) {
      if (lg <= 0) continue;
      bench_stop37<float>(lg);
      bench_stop37<double>(lg);
    }
  } else if (stop35) {  // the one-system rows of the refinement's gate only
    for (int lg : {large, large2}) {
      if (lg <= 0) continue;
      bench_stop35<float>(handle, lg);
      bench_stop35<double>(handle, lg);
    }
  } else {
    if (n > 0) {  // --n=0 / --large=0: leave the box / the large system out
      bench_box<float>(handle, n);
      bench_box<double>(handle, n);
    }
    for (int lg : {large, large2}) {
      if (lg <= 0) continue;
      bench_large<float>(handle, lg);
      bench_large<double>(handle, lg);
    }
  }
  CKS(cusparseDestroy(handle));
  std::printf("\nSummary (%% of copy, %s)\n", prop.name);
  for (const Row& r : g_rows)
    std::printf("  %-*s %6.1f%%  %9.4f ms\n", stop35 || stop37 ? 80 : 58, r.what.c_str(), r.pct, r.ms);
  if (stop37)
    std::printf("\nStop 37: the large plan's check, automatic against none per form (%s; target <= 5%% at 2^24)\n",
                prop.name);
  else if (stop35)
    std::printf("\nStop 35: the refinement's gate against the route without the test (%s; the default, the solve "
                "gate, aims at <= 0%% on the dominant rows)\n", prop.name);
  else
    std::printf("\nThe check's cost against Thomas without a flag (%s; target <= 5%%): automatic (check_pivots\n"
                "on, the default), and with ADI_PIVOTING_FALLBACK=device (pivoting launch gated on the device flag)\n",
                prop.name);
  for (const std::string& s : g_costs) std::printf("%s\n", s.c_str());
  std::printf("\nPartial pivoting against cuSPARSE gtsv2 (%s; target >= 3x)\n", prop.name);
  for (const std::string& s : g_speedups) std::printf("%s\n", s.c_str());
  return 0;
}
