// One large tridiagonal system on the host, fp64, 2^23 .. 2^26 unknowns (the paper's
// sizes, Valero-Lara et al. 2019, section VI): every variant of adi/large_tridiagonal.hpp
// and every switch point k = 1..6 of the PCR variants, the partition's chunk lengths and
// lane counts, against plain Thomas on one core and LAPACKE dgtsv, with the machine's
// copy bandwidth measured in the same run. As in the paper, the caches are flushed
// (a 512 MiB buffer written and read) before every repetition; the first repetition of
// each row is a warm-up and left out; the table reports the median of the rest.
//
// GB/s counts the minimum traffic of a solve, 5 arrays (read a, b, c, d, write u);
// "of copy" is that over a parallel memcpy's bandwidth (bytes read + bytes written).
//
//   bench_large_tridiagonal [--min=23] [--max=26] [--reps=5] [--quick] [google benchmark flags]
// --quick: defaults and the analytic k only (no sweeps).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adi/large_tridiagonal.hpp"
#include "adi/tridiagonal.hpp"
#ifdef ADI_HAVE_LAPACKE
#include <lapacke.h>
#endif

namespace {

using adi::index_t;
using adi::LargeKernel;
using Clock = std::chrono::steady_clock;

int g_min = 23, g_max = 26, g_reps = 5;
bool g_quick = false;
double g_copy_gbs = 0, g_copy1_gbs = 0;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
std::unique_ptr<T[], FreeDeleter> allocate(std::size_t n) {
  const std::size_t align = std::size_t(2) << 20;  // lets transparent huge pages back the arrays
  const std::size_t bytes = (n * sizeof(T) + align - 1) / align * align;
  return std::unique_ptr<T[], FreeDeleter>(static_cast<T*>(std::aligned_alloc(align, bytes)));
}

double uniform(std::uint64_t i, std::uint64_t salt) {  // a cheap hash in [0, 1)
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return double(x >> 11) * 0x1.0p-53;
}

// The largest system, allocated once; smaller sizes use its first n rows.
struct Data {
  std::size_t cap = 0;
  std::unique_ptr<double[], FreeDeleter> a, b, c, d, u, flush;
  std::unique_ptr<double[], FreeDeleter> dl, dd, du, rhs;  // dgtsv overwrites its inputs
  std::size_t flush_n = std::size_t(64) << 20;             // 512 MiB
  void init(std::size_t n) {
    cap = n;
    a = allocate<double>(n);
    b = allocate<double>(n);
    c = allocate<double>(n);
    d = allocate<double>(n);
    u = allocate<double>(n);
    flush = allocate<double>(flush_n);
    const index_t m = static_cast<index_t>(n);
#pragma omp parallel for schedule(static)  // first touch by the threads that solve
    for (index_t i = 0; i < m; ++i) {
      a[i] = uniform(i, 1) * 2 - 1;
      c[i] = uniform(i, 3) * 2 - 1;
      b[i] = (uniform(i, 5) < 0.5 ? -1 : 1) * (std::fabs(a[i]) + std::fabs(c[i]) + 0.25 + uniform(i, 2));
      d[i] = uniform(i, 4) * 2 - 1;
      u[i] = 0;
    }
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < index_t(flush_n); ++i) flush[i] = 0;
  }
  void flush_caches() {
    const index_t m = static_cast<index_t>(flush_n);
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (index_t i = 0; i < m; ++i) {
      flush[i] += 1.0;
      s += flush[i];
    }
    benchmark::DoNotOptimize(s);
  }
};
Data g;
// One workspace for every plan (the largest any needs), handed to solve(): plans keep
// none of their own, so dozens of rows fit in memory.
std::unique_ptr<char[], FreeDeleter> g_ws;
std::size_t g_ws_bytes = 0;

// max |A x - d| / max |d| over the system (a[0], c[n-1] not part of it).
double residual(index_t n, const double* u) {
  double r = 0, s = 0;
#pragma omp parallel for schedule(static) reduction(max : r, s)
  for (index_t i = 0; i < n; ++i) {
    double v = g.b[i] * u[i] - g.d[i];
    if (i > 0) v += g.a[i] * u[i - 1];
    if (i + 1 < n) v += g.c[i] * u[i + 1];
    r = std::max(r, std::fabs(v));
    s = std::max(s, std::fabs(g.d[i]));
  }
  return r / s;
}

struct Row {
  int log2n = 0;
  std::string what, setting;
  bool analytic = false, is_default = false;
  std::vector<double> seconds;
  double resid = 0;
  std::size_t workspace = 0;
  index_t unknowns = 0;  // lines x n for the dispatch rows
};
std::vector<Row> g_rows;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
// The repetitions after the warm-up.
std::vector<double> timed(const std::vector<double>& v) {
  return v.size() < 2 ? v : std::vector<double>(v.begin() + 1, v.end());
}

// Registers one row: setup() runs untimed before each repetition (after it, the caches
// are flushed), solve() is timed.
template <class Setup, class Solve>
void add(int log2n, const std::string& what, const std::string& setting, bool analytic, bool is_default,
         std::size_t workspace, const double* out, Setup setup, Solve solve) {
  g_ws_bytes = std::max(g_ws_bytes, workspace);
  const std::size_t id = g_rows.size();
  g_rows.push_back({log2n, what, setting, analytic, is_default, {}, 0, workspace, index_t(1) << log2n});
  const std::string name = "n=2^" + std::to_string(log2n) + "/" + what + (setting.empty() ? "" : "/" + setting);
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& st) {
                                 const index_t n = index_t(1) << log2n;
                                 for (auto _ : st) {
                                   setup(n);
                                   g.flush_caches();
                                   const auto t0 = Clock::now();
                                   solve(n);
                                   const double s = std::chrono::duration<double>(Clock::now() - t0).count();
                                   st.SetIterationTime(s);
                                   g_rows[id].seconds.push_back(s);
                                 }
                                 g_rows[id].resid = residual(n, out);
                                 st.counters["ns_per_unknown"] = median(timed(g_rows[id].seconds)) * 1e9 / double(n);
                               })
      ->UseManualTime()
      ->Iterations(1)
      ->Repetitions(g_reps + 1)
      ->ReportAggregatesOnly(true)
      ->Unit(benchmark::kMillisecond);
}

void no_setup(index_t) {}

void add_plan(int log2n, LargeKernel v, int k, int chunk, int lanes, int threads, bool analytic, bool is_default,
              const std::string& what) {
  adi::LargeTridiagonalOptions o;
  o.kernel = v;
  o.pcr_levels = k;
  o.chunk = chunk;
  o.lanes = lanes;
  o.check_pivots = true;
  const index_t n = index_t(1) << log2n;
  auto plan = std::make_shared<adi::LargeTridiagonalPlan<double>>(adi::Executor::host(threads), n, 1, 0, o);
  std::string setting;
  if (plan->pcr_levels() > 0 || v == LargeKernel::pcr_thomas || v == LargeKernel::pcr_thomas_overlapped ||
      v == LargeKernel::shuffled_pcr_thomas)
    setting = "k=" + std::to_string(plan->pcr_levels());
  if (v == LargeKernel::partition)
    setting = "chunk=" + std::to_string(plan->chunk()) + " lanes=" + std::to_string(plan->lanes());
  if (threads == 1) setting += setting.empty() ? "1 core" : " 1 core";
  const std::size_t ws = plan->workspace_bytes();
  add(log2n, what, setting, analytic, is_default, ws, g.u.get(), no_setup, [plan, ws](index_t) {
    plan->solve(adi::Bands<double>{g.a.get(), g.b.get(), g.c.get()}, g.d.get(), g.u.get(), g_ws.get(), ws);
  });
}

// The dispatch rule for a few long lines (adi/tridiagonal_dispatch.cpp): TridiagonalPlan
// with the batched kernel such lines got before (cpu_thomas for one line, the transpose
// kernel for more) against Kernel::large_partition, n = 2^20 per line.
void add_dispatch(int lines) {
  const index_t n = index_t(1) << 20;
  if (index_t(lines) * n > index_t(g.cap)) return;
  for (adi::Kernel k : {lines == 1 ? adi::Kernel::cpu_thomas : adi::Kernel::cpu_thomas_transpose,
                        adi::Kernel::large_partition}) {
    adi::TridiagonalOptions o;
    o.kernel = k;
    auto plan = std::make_shared<adi::TridiagonalPlan<double>>(adi::Executor::host(),
                                                               adi::StridedLines::contiguous(n, lines), o);
    add(20, "dispatch " + std::to_string(lines) + " line" + (lines > 1 ? "s" : ""), adi::kernel_name(k), false,
        false, 0, g.u.get(), no_setup,
        [plan](index_t) { plan->solve(adi::Bands<double>{g.a.get(), g.b.get(), g.c.get()}, g.d.get(), g.u.get()); });
    g_rows.back().unknowns = index_t(lines) * n;
  }
}

void measure_copy() {
  const std::size_t n = std::size_t(64) << 20;  // 512 MiB each way
  auto src = allocate<double>(n), dst = allocate<double>(n);
  const index_t m = static_cast<index_t>(n);
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < m; ++i) src[i] = dst[i] = double(i);
  auto run = [&](int threads) {
    std::vector<double> t;
    for (int r = 0; r < 6; ++r) {
      const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads)
      {
        const int id = omp_get_thread_num(), nt = omp_get_num_threads();
        const std::size_t lo = n * id / nt, hi = n * (id + 1) / nt;
        std::memcpy(dst.get() + lo, src.get() + lo, (hi - lo) * sizeof(double));
      }
      t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    t.erase(t.begin());
    return 2.0 * double(n * sizeof(double)) / median(t) / 1e9;
  };
  g_copy_gbs = run(omp_get_max_threads());
  g_copy1_gbs = run(1);
}

std::string lapack_name() {
  using Fn = char* (*)();
  if (auto f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
    return std::string("OpenBLAS (") + f() + ")";
  return "reference LAPACK (no OpenBLAS symbols found)";
}

void print_table() {
  std::printf("\n== one large tridiagonal system, fp64, host: %d threads; copy %.1f GB/s (%d threads), %.1f GB/s "
              "(1 thread); caches flushed before each repetition; median of %d ==\n",
              omp_get_max_threads(), g_copy_gbs, omp_get_max_threads(), g_copy1_gbs, g_reps);
#ifdef ADI_HAVE_LAPACKE
  std::printf("LAPACK: LAPACKE_dgtsv (partial pivoting, one core) from %s\n", lapack_name().c_str());
#endif
  std::printf("%-6s %-24s %-22s %10s %10s %8s %7s %7s %9s %9s %9s %10s\n", "n", "solver", "setting", "ms", "min ms",
              "ns/unk", "GB/s", "%copy", "x Thomas", "x dgtsv", "ws MiB", "resid");
  for (int l = g_min; l <= g_max; ++l) {
    double thomas = 0, lapack = 0;
    for (const Row& r : g_rows)
      if (r.log2n == l && r.what == "thomas")
        thomas = median(timed(r.seconds));
      else if (r.log2n == l && r.what == "LAPACKE dgtsv")
        lapack = median(timed(r.seconds));
    for (const Row& r : g_rows) {
      if (r.log2n != l || r.seconds.size() < 2 || r.what.rfind("dispatch", 0) == 0) continue;
      const std::vector<double> s = timed(r.seconds);
      const double t = median(s), tmin = *std::min_element(s.begin(), s.end());
      const double n = double(index_t(1) << l);
      const double gbs = 5.0 * 8.0 * n / t / 1e9;
      std::string setting = r.setting + (r.analytic ? " (analytic)" : "") + (r.is_default ? " *" : "");
      std::printf("2^%-4d %-24s %-22s %10.2f %10.2f %8.2f %7.1f %6.0f%% %9.2f %9.2f %9.0f %10.1e\n", l, r.what.c_str(),
                  setting.c_str(), t * 1e3, tmin * 1e3, t * 1e9 / n, gbs, 100.0 * gbs / g_copy_gbs,
                  thomas > 0 ? thomas / t : 0.0, lapack > 0 ? lapack / t : 0.0, double(r.workspace) / (1 << 20),
                  r.resid);
    }
  }
  std::printf("(* the automatic choice; x Thomas / x dgtsv: speed-up over plain Thomas on one core / dgtsv)\n");
  std::printf("\ndispatch: lines of 2^20 through TridiagonalPlan, the batched kernel against large_partition\n");
  std::printf("%-22s %-22s %10s %8s\n", "lines", "kernel", "ms", "ns/unk");
  for (const Row& r : g_rows)
    if (r.what.rfind("dispatch", 0) == 0 && r.seconds.size() >= 2) {
      const double t = median(timed(r.seconds));
      std::printf("%-22s %-22s %10.2f %8.2f\n", r.what.c_str() + 9, r.setting.c_str(), t * 1e3,
                  t * 1e9 / double(r.unknowns));
    }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--min=", 0) == 0)
      g_min = std::atoi(s.c_str() + 6);
    else if (s.rfind("--max=", 0) == 0)
      g_max = std::atoi(s.c_str() + 6);
    else if (s.rfind("--reps=", 0) == 0)
      g_reps = std::max(1, std::atoi(s.c_str() + 7));
    else if (s == "--quick")
      g_quick = true;
    else if (s == "--help" || s == "-h") {
      std::printf("bench_large_tridiagonal [--min=23] [--max=26] [--reps=5] [--quick] [google benchmark flags]\n");
      return 0;
    } else
      rest.push_back(argv[i]);
  }
  if (g_min < 3 || g_max > 28 || g_min > g_max) {
    std::fprintf(stderr, "bench_large_tridiagonal: need 3 <= --min <= --max <= 28\n");
    return 1;
  }
  int rc = static_cast<int>(rest.size());
  benchmark::Initialize(&rc, rest.data());
  g.init(std::size_t(1) << g_max);
  measure_copy();
  const int cores = omp_get_max_threads();
#ifdef ADI_HAVE_LAPACKE
  g.dl = allocate<double>(g.cap);
  g.dd = allocate<double>(g.cap);
  g.du = allocate<double>(g.cap);
  g.rhs = allocate<double>(g.cap);
#endif
  for (int l = g_min; l <= g_max; ++l) {
    const index_t n = index_t(1) << l;
    add_plan(l, LargeKernel::thomas, -1, 0, 0, 1, false, false, "thomas");
#ifdef ADI_HAVE_LAPACKE
    add(
        l, "LAPACKE dgtsv", "", false, false, 0, g.rhs.get(),
        [](index_t m) {
          std::memcpy(g.dl.get(), g.a.get() + 1, (m - 1) * sizeof(double));
          std::memcpy(g.dd.get(), g.b.get(), m * sizeof(double));
          std::memcpy(g.du.get(), g.c.get(), (m - 1) * sizeof(double));
          std::memcpy(g.rhs.get(), g.d.get(), m * sizeof(double));
        },
        [](index_t m) {
          const lapack_int info =
              LAPACKE_dgtsv(LAPACK_COL_MAJOR, lapack_int(m), 1, g.dl.get(), g.dd.get(), g.du.get(), g.rhs.get(),
                            lapack_int(m));
          if (info != 0) std::fprintf(stderr, "dgtsv info = %d\n", int(info));
        });
#endif
    add_plan(l, LargeKernel::automatic, -1, 0, 0, 0, false, true, "automatic");
    const int ka = adi::large_switch_point(n, cores);
    for (LargeKernel v :
         {LargeKernel::pcr_thomas, LargeKernel::pcr_thomas_overlapped, LargeKernel::shuffled_pcr_thomas})
      for (int k = 1; k <= 6; ++k)
        if (!g_quick || k == ka) add_plan(l, v, k, 0, 0, 0, k == ka, false, adi::large_kernel_name(v));
    if (!g_quick) {
      for (int chunk : {256, 512, 1024, 2048})
        for (int lanes : {1, 8, 16, 32}) add_plan(l, LargeKernel::partition, -1, chunk, lanes, 0, false, false, "partition");
      add_plan(l, LargeKernel::partition, -1, 0, 0, 1, false, false, "partition");
    }
  }
  if (!g_quick)
    for (int lines : {1, 2, 4, 8, 16}) add_dispatch(lines);
  g_ws = allocate<char>(std::max<std::size_t>(g_ws_bytes, 64));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_table();
  return 0;
}
