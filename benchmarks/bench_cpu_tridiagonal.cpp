// Host batched tridiagonal solves on a 3D grid, per direction (X, Y, Z) and precision:
// our automatic choice (Thomas with its stability check), each host kernel that can read
// the direction, partial pivoting (pivoting, cpu_pivoting, pivoting_shared), the fp64
// reference, and LAPACK's gtsv (which pivots) called line by line (the line copied to contiguous
// buffers first, as a user must: gtsv overwrites its inputs), next to the machine's
// copy bandwidth measured in the same program.
//
// Effective bandwidth counts the minimum traffic of a solve: 5 arrays (read a, b, c, d,
// write u); 2 for shared bands (read d, write u). "of_copy" is that over the bandwidth
// of a parallel memcpy (bytes read + bytes written). All rows use every OpenMP thread.
//
//   bench_cpu_tridiagonal [--nx=256 --ny=256 --nz=128] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adi/tridiagonal.hpp"
#ifdef ADI_HAVE_LAPACKE
#include <lapacke.h>
#endif

namespace {

using adi::Axis;
using adi::index_t;
using adi::Kernel;

index_t g_nx = 256, g_ny = 256, g_nz = 128;
double g_copy_gbs = 0.0;  // measured once in main, before the rows

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// 2 MiB aligned so that transparent huge pages can back the arrays (Z sweeps stride
// through a page per element otherwise).
template <class T>
std::unique_ptr<T[], FreeDeleter> allocate(std::size_t n) {
  const std::size_t align = std::size_t(2) << 20;
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

template <class T>
struct Grid {
  adi::Box3 box;
  std::size_t size;
  std::unique_ptr<T[], FreeDeleter> a, b, c, d, u;
  std::vector<T> sa, sb, sc;  // shared bands, long enough for any direction

  Grid() : box(adi::Box3::dense(g_nx, g_ny, g_nz)), size(static_cast<std::size_t>(box.size())) {
    a = allocate<T>(size);
    b = allocate<T>(size);
    c = allocate<T>(size);
    d = allocate<T>(size);
    u = allocate<T>(size);
    const index_t n = static_cast<index_t>(size);
#pragma omp parallel for schedule(static)  // first touch by the threads that sweep
    for (index_t i = 0; i < n; ++i) {
      a[i] = T(uniform(i, 1) * 2 - 1);
      b[i] = T(4 + uniform(i, 2));  // diagonally dominant
      c[i] = T(uniform(i, 3) * 2 - 1);
      d[i] = T(uniform(i, 4) * 2 - 1);
      u[i] = T(0);
    }
    const index_t m = std::max({g_nx, g_ny, g_nz});
    for (index_t i = 0; i < m; ++i) {
      sa.push_back(T(-1));
      sb.push_back(T(4));
      sc.push_back(T(-1));
    }
  }
  static Grid& get() {
    static Grid g;
    return g;
  }
};

// Parallel memcpy of `bytes` (read) into as many (written): 2*bytes of traffic.
struct CopyBuffers {
  std::size_t bytes;
  std::unique_ptr<char[], FreeDeleter> src, dst;
  explicit CopyBuffers(std::size_t b) : bytes(b), src(allocate<char>(b)), dst(allocate<char>(b)) {
    const index_t n = static_cast<index_t>(b);
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < n; ++i) src[i] = dst[i] = char(i);
  }
  void run() {
#pragma omp parallel
    {
      const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::size_t chunk = (bytes + nt - 1) / nt, lo = std::min(bytes, t * chunk),
                        hi = std::min(bytes, lo + chunk);
      std::memcpy(dst.get() + lo, src.get() + lo, hi - lo);
    }
  }
};

struct Result {
  double ms;
  double gbs;
};
// By row name, every timed run (Google Benchmark's calibration runs first, then the
// --benchmark_repetitions runs, 7 unless given): the summary quotes the median of the
// repetitions and the best run.
std::map<std::string, std::vector<Result>> g_results;
int g_repetitions = 7;

using Clock = std::chrono::steady_clock;

void finish(benchmark::State& st, const std::string& key, Clock::time_point t0, double bytes_per_iter) {
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double it = static_cast<double>(st.iterations());
  const double gbs = bytes_per_iter * it / s / 1e9;
  st.counters["GB/s"] = gbs;
  if (g_copy_gbs > 0) st.counters["of_copy"] = gbs / g_copy_gbs;
  g_results[key].push_back({s / it * 1e3, gbs});
}

void bm_copy(benchmark::State& st, std::size_t bytes, const std::string& key) {
  CopyBuffers buf(bytes / 2);
  const auto t0 = Clock::now();
  for (auto _ : st) {
    buf.run();
    benchmark::ClobberMemory();
  }
  finish(st, key, t0, double(bytes));
}

template <class T>
void bm_solve(benchmark::State& st, Axis axis, Kernel kernel, bool shared, const std::string& key,
              adi::Pivoting pivoting = adi::Pivoting::automatic) {
  Grid<T>& g = Grid<T>::get();
  adi::TridiagonalOptions opt;
  opt.kernel = kernel;
  opt.pivoting = pivoting;
  adi::TridiagonalPlan<T> plan(adi::Executor::host(), adi::BoxLines{g.box, axis}, opt);
  const auto t0 = Clock::now();
  for (auto _ : st) {
    if (shared)
      plan.solve(adi::SharedBands<T>{g.sa.data(), g.sb.data(), g.sc.data()}, g.d.get(), g.u.get());
    else
      plan.solve(adi::Bands<T>{g.a.get(), g.b.get(), g.c.get()}, g.d.get(), g.u.get());
    benchmark::ClobberMemory();
  }
  st.SetLabel(adi::kernel_name(shared ? Kernel::automatic : plan.kernel()));
  finish(st, key, t0, double(g.size * sizeof(T) * (shared ? 2 : 5)));
}

#ifdef ADI_HAVE_LAPACKE
lapack_int gtsv(lapack_int n, float* dl, float* d, float* du, float* b) {
  return LAPACKE_sgtsv_work(LAPACK_COL_MAJOR, n, 1, dl, d, du, b, n);
}
lapack_int gtsv(lapack_int n, double* dl, double* d, double* du, double* b) {
  return LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, n, 1, dl, d, du, b, n);
}

// What a LAPACK user writes: per line, copy the bands and d to contiguous buffers
// (gtsv overwrites them), solve, copy the solution out; OpenMP across lines.
template <class T>
void bm_lapack(benchmark::State& st, Axis axis, const std::string& key) {
  Grid<T>& g = Grid<T>::get();
  const adi::LineSet l = adi::to_lines(adi::BoxLines{g.box, axis});
  const index_t n = l.n, s = l.stride;
  const int nt = omp_get_max_threads();
  std::vector<std::vector<T>> bufs(nt, std::vector<T>(4 * n));
  int failures = 0;
  const auto t0 = Clock::now();
  for (auto _ : st) {
#pragma omp parallel reduction(+ : failures)
    {
      T* dl = bufs[omp_get_thread_num()].data();
      T* dd = dl + n;
      T* du = dd + n;
      T* x = du + n;
#pragma omp for schedule(static)
      for (index_t line = 0; line < l.lines(); ++line) {
        const index_t o = l.offset(line);
        for (index_t i = 0; i < n; ++i) {
          const index_t p = o + i * s;
          if (i > 0) dl[i - 1] = g.a[p];
          dd[i] = g.b[p];
          if (i + 1 < n) du[i] = g.c[p];
          x[i] = g.d[p];
        }
        failures += gtsv(static_cast<lapack_int>(n), dl, dd, du, x) != 0;
        for (index_t i = 0; i < n; ++i) g.u[o + i * s] = x[i];
      }
    }
    benchmark::ClobberMemory();
  }
  if (failures) st.SkipWithError("gtsv failed");
  finish(st, key, t0, double(g.size * sizeof(T) * 5));
}
#endif

const char* axis_label(Axis a) { return a == Axis::x ? "X" : a == Axis::y ? "Y" : "Z"; }

struct Row {
  std::string key, what;
};

template <class T>
std::vector<Row> register_precision(const char* prec) {
  std::vector<Row> rows;
  for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
    const std::string p = std::string(prec) + "/" + axis_label(axis) + "/";
    auto add_solve = [&](const std::string& what, Kernel k, bool shared,
                         adi::Pivoting piv = adi::Pivoting::automatic) {
      const std::string key = p + what;
      benchmark::RegisterBenchmark(key.c_str(),
                                   [=](benchmark::State& st) { bm_solve<T>(st, axis, k, shared, key, piv); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      rows.push_back({key, what});
    };
    add_solve("automatic", Kernel::automatic, false);
    add_solve("cpu_thomas", Kernel::cpu_thomas, false);
    if (axis == Axis::x)
      add_solve("cpu_thomas_transpose", Kernel::cpu_thomas_transpose, false);
    else
      add_solve("cpu_thomas_vector", Kernel::cpu_thomas_vector, false);
    add_solve("reference", Kernel::reference, false, adi::Pivoting::none);
    // Partial pivoting (docs/pivoting.md): the dispatch's pivoting kernel, and the scalar one.
    add_solve("pivoting", Kernel::automatic, false, adi::Pivoting::partial);
    add_solve("cpu_pivoting", Kernel::cpu_pivoting, false, adi::Pivoting::partial);
    add_solve("pivoting_shared", Kernel::automatic, true, adi::Pivoting::partial);
#ifdef ADI_HAVE_LAPACKE
    {
      const std::string key = p + "lapack_gtsv";
      benchmark::RegisterBenchmark(key.c_str(), [=](benchmark::State& st) { bm_lapack<T>(st, axis, key); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      rows.push_back({key, "lapack_gtsv"});
    }
#endif
    add_solve("shared_bands", Kernel::automatic, true);
  }
  return rows;
}

index_t flag(int& argc, char** argv, const char* name, index_t def) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      const index_t v = std::atoll(argv[i] + prefix.size());
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return v;
    }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  g_nx = flag(argc, argv, "nx", g_nx);
  g_ny = flag(argc, argv, "ny", g_ny);
  g_nz = flag(argc, argv, "nz", g_nz);
  const std::size_t points = static_cast<std::size_t>(g_nx * g_ny * g_nz);

  // Copy bandwidth first (best of 10), so every row can print its ratio.
  {
    CopyBuffers buf(points * 5 * sizeof(double) / 2);
    buf.run();
    for (int r = 0; r < 10; ++r) {
      const auto t0 = Clock::now();
      buf.run();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      g_copy_gbs = std::max(g_copy_gbs, 2.0 * double(buf.bytes) / s / 1e9);
    }
  }
  benchmark::RegisterBenchmark(
      "copy/5 float arrays",
      [=](benchmark::State& st) { bm_copy(st, points * 5 * sizeof(float), "copy/float"); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark(
      "copy/5 double arrays",
      [=](benchmark::State& st) { bm_copy(st, points * 5 * sizeof(double), "copy/double"); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  const std::vector<Row> rf = register_precision<float>("float");
  const std::vector<Row> rd = register_precision<double>("double");

  // Default to 7 repetitions (medians) unless the caller chose.
  std::vector<char*> args(argv, argv + argc);
  std::string reps_flag = "--benchmark_repetitions=" + std::to_string(g_repetitions);
  bool has_reps = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--benchmark_repetitions=", 0) == 0) {
      has_reps = true;
      g_repetitions = std::max(1, std::atoi(argv[i] + 24));
    }
  if (!has_reps) args.push_back(reps_flag.data());
  argc = static_cast<int>(args.size());
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext(
      "grid", std::to_string(g_nx) + " x " + std::to_string(g_ny) + " x " + std::to_string(g_nz));
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("copy_GB/s", std::to_string(g_copy_gbs));
#ifndef ADI_HAVE_LAPACKE
  benchmark::AddCustomContext("lapack", "LAPACKE not found at configure time: no LAPACK rows");
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // Summary: per direction, each row's median repetition against copy bandwidth and LAPACK.
  std::map<std::string, Result> median, best;
  for (auto& [key, runs] : g_results) {
    std::vector<double> ms;
    const std::size_t first = runs.size() > std::size_t(g_repetitions) ? runs.size() - g_repetitions : 0;
    for (std::size_t i = first; i < runs.size(); ++i) ms.push_back(runs[i].ms);
    std::sort(ms.begin(), ms.end());
    const double med = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    const Result& any = runs.back();
    const double bytes_ms = any.gbs * any.ms;  // GB/s * ms is fixed per row
    median[key] = {med, bytes_ms / med};
    best[key] = {ms.front(), bytes_ms / ms.front()};
  }
  std::printf(
      "\nSummary, median of %d repetitions per row [best in brackets] (%lld x %lld x %lld, %d threads, "
      "copy %.1f GB/s; 5 arrays counted, 2 for shared bands)\n",
      g_repetitions,
      static_cast<long long>(g_nx), static_cast<long long>(g_ny), static_cast<long long>(g_nz),
      omp_get_max_threads(), g_copy_gbs);
  std::printf("%-8s %-4s %-22s %10s %8s %8s %10s %10s\n", "prec", "dir", "kernel", "ms/sweep", "GB/s",
              "of_copy", "x_lapack", "[best ms]");
  for (const auto* rows : {&rf, &rd})
    for (const Row& r : *rows) {
      const auto it = median.find(r.key);
      if (it == median.end()) continue;
      const std::string dir = r.key.substr(0, r.key.rfind('/'));
      const auto lap = median.find(dir + "/lapack_gtsv");
      char speedup[32] = "-";
      if (lap != median.end())
        std::snprintf(speedup, sizeof speedup, "%.1f", lap->second.ms / it->second.ms);
      const std::string prec = dir.substr(0, dir.find('/')), axis = dir.substr(dir.find('/') + 1);
      std::printf("%-8s %-4s %-22s %10.2f %8.1f %7.0f%% %10s %10.2f\n", prec.c_str(), axis.c_str(),
                  r.what.c_str(), it->second.ms, it->second.gbs, 100.0 * it->second.gbs / g_copy_gbs, speedup,
                  best[r.key].ms);
    }
  return 0;
}
