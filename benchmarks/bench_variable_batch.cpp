// Variable-size batches on the host, next to their peers in the same run:
//
// Tridiagonal (--systems, default 32,000 on the host): sizes U[256,512], U[1,512], fixed
//   384 and 512, fp32 and fp64: ours CP and NCP (padded interleaved), sorted, compact; the
//   project's fixed-size host solver on the padded InterleavedBatch; LAPACK gtsv one system
//   per thread (compact layout, copies made as gtsv overwrites its inputs). Useful bandwidth
//   counts 5 arrays of the real sizes; %copy is of a parallel memcpy (read + write).
// Cholesky: batches of 800 and 3000, sizes uniform and Gaussian in [1, Nmax], Nmax 32..512
//   (3000 only up to 128), fp32 and fp64: useful GFLOP/s (sum n^3/3) of ours against LAPACK
//   potrf one matrix per thread (dynamic schedule, the vbatched paper's best CPU peer); a
//   sweep of fixed sizes through the SIMD-group and per-thread kernels sets the crossover.
//
//   bench_variable_batch [--part=all|tri|chol|sweep] [--systems=32000] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "adi/batched_cholesky.hpp"
#include "adi/tridiagonal.hpp"
#include "adi/variable_tridiagonal.hpp"
#ifdef ADI_HAVE_LAPACKE
#include <lapacke.h>
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
#endif

namespace {

using adi::index_t;
using Clock = std::chrono::steady_clock;

double g_copy = 0;  // GB/s
int g_systems = 32000;

struct Row {
  std::string table, key;
  double work;  // bytes (tridiagonal) or flops (Cholesky) per run
};
std::vector<Row> g_rows;
std::map<std::string, std::vector<double>> g_ms;  // per key, each timed run

double hash01(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return double(x >> 11) * 0x1.0p-53;
}

// Runs `f` under Google Benchmark with manual time (prep excluded) and records each run.
void timed(benchmark::State& st, const std::string& key, const std::function<void()>& f,
           const std::function<void()>& prep = {}) {
  for (auto _ : st) {
    if (prep) prep();
    const auto t0 = Clock::now();
    f();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    st.SetIterationTime(s);
    g_ms[key].push_back(1e3 * s);
  }
}

// ---------------------------------------------------------------- tridiagonal

template <class T>
struct TriData {
  std::vector<int> sizes;
  adi::VariableBatchPlan batch;
  int rows;
  std::vector<T> a, b, c, d, u;        // padded interleaved (k*count + s), identity padding
  std::vector<T> sa, sb, sc, sd, su;   // SortedInterleaved
  std::vector<T> ca, cb, cc, cd, cu;   // compact
  TriData(std::vector<int> n)
      : sizes(std::move(n)),
        batch(adi::Executor::host(), adi::BatchSizes{sizes.data(), static_cast<index_t>(sizes.size())}),
        rows(batch.max_size()) {
    const index_t count = batch.count();
    const std::size_t span = static_cast<std::size_t>(rows) * count;
    for (auto* v : {&a, &b, &c, &d, &u}) v->assign(span, T(0));
#pragma omp parallel for schedule(static)
    for (index_t s = 0; s < count; ++s)
      for (int k = 0; k < rows; ++k) {
        const std::size_t i = static_cast<std::size_t>(k) * count + s;
        const int m = sizes[s];
        if (k >= m) {
          b[i] = T(1);
          continue;
        }
        const std::uint64_t h = static_cast<std::uint64_t>(s) * 1024 + k;
        a[i] = k == 0 ? T(0) : T(hash01(h, 1) * 2 - 1);
        c[i] = k == m - 1 ? T(0) : T(hash01(h, 2) * 2 - 1);
        b[i] = T(std::abs(double(a[i])) + std::abs(double(c[i])) + 1 + hash01(h, 3));
        d[i] = T(hash01(h, 4) * 2 - 1);
      }
    const std::size_t sspan = batch.span(adi::SortedInterleaved{});
    const std::size_t tot = batch.total_size();
    for (auto* v : {&sa, &sb, &sc, &sd, &su}) v->assign(sspan, T(0));
    for (auto* v : {&ca, &cb, &cc, &cd, &cu}) v->assign(tot, T(0));
    const adi::PaddedInterleaved pl{};
    batch.pack(a.data(), pl, sa.data());
    batch.pack(b.data(), pl, sb.data());
    batch.pack(c.data(), pl, sc.data());
    batch.pack(d.data(), pl, sd.data());
    batch.unpack(sa.data(), ca.data(), adi::CompactBatch{});
    batch.unpack(sb.data(), cb.data(), adi::CompactBatch{});
    batch.unpack(sc.data(), cc.data(), adi::CompactBatch{});
    batch.unpack(sd.data(), cd.data(), adi::CompactBatch{});
  }
};

#ifdef ADI_HAVE_LAPACKE
lapack_int gtsv(lapack_int n, float* dl, float* d, float* du, float* b) {
  return LAPACKE_sgtsv_work(LAPACK_COL_MAJOR, n, 1, dl, d, du, b, n);
}
lapack_int gtsv(lapack_int n, double* dl, double* d, double* du, double* b) {
  return LAPACKE_dgtsv_work(LAPACK_COL_MAJOR, n, 1, dl, d, du, b, n);
}
lapack_int potrf(int n, float* a, int ld) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', n, a, ld); }
lapack_int potrf(int n, double* a, int ld) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, ld); }
#endif

template <class T>
void register_tri(const std::string& dist, int lo, int hi, unsigned seed) {
  const std::string prec = sizeof(T) == 4 ? "fp32" : "fp64";
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<int> n(g_systems);
  for (int& x : n) x = u(rng);
  auto data = std::make_shared<TriData<T>>(n);
  std::printf("tridiagonal %s %s: plan build %.2f ms\n", prec.c_str(), dist.c_str(), 1e3 * data->batch.build_seconds());
  const double bytes = 5.0 * double(data->batch.total_size()) * sizeof(T);
  const std::string base = "tri/" + prec + "/" + dist + "/";
  auto add = [&](const std::string& what, std::function<void(benchmark::State&, const std::string&)> fn) {
    const std::string key = base + what;
    g_rows.push_back({"tri", key, bytes});
    benchmark::RegisterBenchmark(key.c_str(), [fn, key](benchmark::State& st) { fn(st, key); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
  };
  for (auto m : {adi::VariableKernel::padded, adi::VariableKernel::stop_at_size}) {
    add(std::string("ours ") + adi::variable_kernel_name(m), [data, m](benchmark::State& st, const std::string& key) {
      adi::VariableTridiagonalOptions o;
      o.kernel = m;
      o.check_pivots = false;
      adi::VariableTridiagonalPlan<T> plan(data->batch, adi::PaddedInterleaved{}, o);
      timed(st, key, [&] { plan.solve(adi::Bands<T>{data->a.data(), data->b.data(), data->c.data()}, data->d.data(),
                                      data->u.data()); });
    });
  }
  add("ours sorted", [data](benchmark::State& st, const std::string& key) {
    adi::VariableTridiagonalOptions o;
    o.check_pivots = false;
    adi::VariableTridiagonalPlan<T> plan(data->batch, adi::SortedInterleaved{}, o);
    timed(st, key, [&] { plan.solve(adi::Bands<T>{data->sa.data(), data->sb.data(), data->sc.data()}, data->sd.data(),
                                    data->su.data()); });
  });
  add("ours compact (system per thread)", [data](benchmark::State& st, const std::string& key) {
    adi::VariableTridiagonalOptions o;
    o.check_pivots = false;
    adi::VariableTridiagonalPlan<T> plan(data->batch, adi::CompactBatch{}, o);
    timed(st, key, [&] { plan.solve(adi::Bands<T>{data->ca.data(), data->cb.data(), data->cc.data()}, data->cd.data(),
                                    data->cu.data()); });
  });
  add("fixed-size TridiagonalPlan (padded)", [data](benchmark::State& st, const std::string& key) {
    adi::TridiagonalOptions o;
    o.check_pivots = false;
    adi::TridiagonalPlan<T> plan(adi::Executor::host(), adi::InterleavedBatch{data->rows, data->batch.count()}, o);
    timed(st, key, [&] { plan.solve(adi::Bands<T>{data->a.data(), data->b.data(), data->c.data()}, data->d.data(),
                                    data->u.data()); });
  });
#ifdef ADI_HAVE_LAPACKE
  add("LAPACK gtsv (system per thread)", [data](benchmark::State& st, const std::string& key) {
    const adi::VariableBatchView& v = data->batch.host_view();
    timed(st, key, [&] {
#pragma omp parallel
      {
        std::vector<T> dl(data->rows), dd(data->rows), du(data->rows);
#pragma omp for schedule(dynamic, 16)
        for (index_t s = 0; s < v.count; ++s) {
          const int m = v.sizes[s];
          const index_t o = v.offsets[s];
          if (m < 2) continue;  // the distributions here have no smaller systems
          std::copy(data->ca.begin() + o + 1, data->ca.begin() + o + m, dl.begin());
          std::copy(data->cb.begin() + o, data->cb.begin() + o + m, dd.begin());
          std::copy(data->cc.begin() + o, data->cc.begin() + o + m - 1, du.begin());
          std::copy(data->cd.begin() + o, data->cd.begin() + o + m, data->cu.begin() + o);
          gtsv(m, dl.data(), dd.data(), du.data(), data->cu.data() + o);
        }
      }
    });
  });
#endif
}

// ---------------------------------------------------------------- Cholesky

template <class T>
struct CholData {
  std::vector<int> sizes, ld;
  adi::VariableBatchPlan batch;
  std::vector<index_t> off;
  std::vector<T> A0, A;
  std::vector<T*> ptr;
  std::vector<int> info;
  explicit CholData(std::vector<int> n)
      : sizes(std::move(n)), batch(adi::Executor::host(), adi::BatchSizes{sizes.data(), index_t(sizes.size())}) {
    const index_t count = batch.count();
    off.assign(count + 1, 0);
    for (index_t s = 0; s < count; ++s) off[s + 1] = off[s] + static_cast<index_t>(sizes[s]) * sizes[s];
    A0.assign(off[count], T(0));
    for (index_t s = 0; s < count; ++s) {
      const int m = sizes[s];
      T* a = A0.data() + off[s];
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
          const int lo = std::min(i, j), hi = std::max(i, j);
          a[i + j * m] = i == j ? T(2 + hash01(s * 1031 + i, 7))
                                : T((hash01((s * 1031 + lo) * 1031 + hi, 8) * 2 - 1) / m);
        }
    }
    A = A0;
    for (index_t s = 0; s < count; ++s) {
      ptr.push_back(A.data() + off[s]);
      ld.push_back(std::max(1, sizes[s]));
    }
    info.assign(count, 0);
  }
  void restore() { std::copy(A0.begin(), A0.end(), A.begin()); }
};

std::vector<int> chol_sizes(bool gaussian, int nmax, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(1, nmax);
  std::normal_distribution<double> g(nmax / 2.0, nmax / 6.0);
  std::vector<int> n(count);
  for (int& x : n) x = gaussian ? std::clamp(static_cast<int>(std::lround(g(rng))), 1, nmax) : u(rng);
  return n;
}

template <class T>
void register_chol_case(const std::string& key_base, std::vector<int> sizes, bool with_lapack,
                        std::vector<std::pair<std::string, adi::CholeskyOptions>> ours) {
  auto data = std::make_shared<CholData<T>>(std::move(sizes));
  const double flops = adi::cholesky_flops(data->batch);
  for (auto& [name, opt] : ours) {
    const std::string key = key_base + name;
    g_rows.push_back({"chol", key, flops});
    adi::CholeskyOptions o = opt;
    benchmark::RegisterBenchmark(key.c_str(),
                                 [data, o, key](benchmark::State& st) {
                                   adi::BatchedCholeskyPlan<T> plan(data->batch, adi::PointerBatch{data->ld.data()}, o);
                                   timed(st, key, [&] { plan.factor(data->ptr.data(), data->info.data()); },
                                         [&] { data->restore(); });
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
  }
#ifdef ADI_HAVE_LAPACKE
  if (with_lapack) {
    const std::string key = key_base + "LAPACK potrf (matrix per thread)";
    g_rows.push_back({"chol", key, flops});
    benchmark::RegisterBenchmark(key.c_str(),
                                 [data, key](benchmark::State& st) {
                                   const index_t count = data->batch.count();
                                   timed(
                                       st, key,
                                       [&] {
#pragma omp parallel for schedule(dynamic, 1)
                                         for (index_t s = 0; s < count; ++s)
                                           if (data->sizes[s] > 0)
                                             data->info[s] = potrf(data->sizes[s], data->ptr[s], data->ld[s]);
                                       },
                                       [&] { data->restore(); });
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
  }
#else
  (void)with_lapack;
#endif
}

template <class T>
void register_chol() {
  const std::string prec = sizeof(T) == 4 ? "fp32" : "fp64";
  for (int count : {800, 3000})
    for (bool gaussian : {false, true})
      for (int nmax : {32, 64, 128, 256, 512}) {
        if (count == 3000 && nmax > 128) continue;  // the host targets stop at 128
        const std::string base = "chol/" + prec + "/" + (gaussian ? "gaussian" : "uniform") + "/" +
                                 std::to_string(count) + "/" + std::to_string(nmax) + "/";
        register_chol_case<T>(base, chol_sizes(gaussian, nmax, count, 100u + nmax + count), true,
                              {{"ours", adi::CholeskyOptions{}}});
      }
}

template <class T>
void register_sweep() {
  const std::string prec = sizeof(T) == 4 ? "fp32" : "fp64";
  adi::CholeskyOptions scalar, vector;
  scalar.kernel = adi::CholeskyKernel::cpu_scalar;
  vector.kernel = adi::CholeskyKernel::cpu_vector;
  for (int n : {8, 16, 32, 48, 64, 96, 128, 192, 256}) {
    const int count = std::max(64, static_cast<int>(2e8 / (double(n) * n * n)));  // ~0.07 GFLOP per run
    register_chol_case<T>("sweep/" + prec + "/" + std::to_string(n) + "/", std::vector<int>(count, n), true,
                          {{"cpu_scalar", scalar}, {"cpu_vector", vector}});
  }
}

std::string flag(int argc, char** argv, const char* name, const char* def) {
  const std::string key = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind(key, 0) == 0) return argv[i] + key.size();
  return def;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help")) {
      std::printf("bench_variable_batch [--part=all|tri|chol|sweep] [--systems=32000] [google benchmark flags]\n");
      return 0;
    }
  const std::string part = flag(argc, argv, "part", "all");
  g_systems = std::atoi(flag(argc, argv, "systems", "32000").c_str());
#ifdef ADI_HAVE_LAPACKE
  if (openblas_set_num_threads) openblas_set_num_threads(1);  // one matrix per thread: no nested BLAS threads
#endif
  {
    const std::size_t bytes = std::size_t(256) << 20;
    std::vector<char> x(bytes, 1), y(bytes, 0);
    for (int r = 0; r < 6; ++r) {
      const auto t0 = Clock::now();
#pragma omp parallel
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const std::size_t lo = bytes * t / nt, hi = bytes * (t + 1) / nt;
        std::memcpy(y.data() + lo, x.data() + lo, hi - lo);
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r > 0) g_copy = std::max(g_copy, 2.0 * bytes / s / 1e9);
    }
  }
  if (part == "all" || part == "tri")
    for (auto [name, lo, hi] : {std::tuple{"U[256,512]", 256, 512}, std::tuple{"U[1,512]", 1, 512},
                                std::tuple{"fixed 384", 384, 384}, std::tuple{"fixed 512", 512, 512}}) {
      register_tri<float>(name, lo, hi, 7);
      register_tri<double>(name, lo, hi, 7);
    }
  if (part == "all" || part == "sweep") {
    register_sweep<float>();
    register_sweep<double>();
  }
  if (part == "all" || part == "chol") {
    register_chol<float>();
    register_chol<double>();
  }
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i)
    if (std::string(argv[i]).rfind("--part=", 0) != 0 && std::string(argv[i]).rfind("--systems=", 0) != 0)
      args.push_back(argv[i]);
  int ac = static_cast<int>(args.size());
  benchmark::Initialize(&ac, args.data());
  if (benchmark::ReportUnrecognizedArguments(ac, args.data())) return 1;
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("copy_GB/s", std::to_string(g_copy));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf("\nSummary (median of the timed runs; %d threads; copy %.1f GB/s)\n", omp_get_max_threads(), g_copy);
  for (const char* table : {"tri", "sweep", "chol"}) {
    std::string group;
    double peer = 0;
    for (const Row& r : g_rows) {
      const bool sweep = r.key.rfind("sweep/", 0) == 0;
      if ((std::string(table) == "sweep") != sweep || r.table != (sweep ? "chol" : table)) continue;
      const double ms = median(g_ms[r.key]);
      if (ms <= 0) continue;
      const std::string g = r.key.substr(0, r.key.rfind('/') + 1);
      if (g != group) {
        group = g;
        peer = 0;
        for (const Row& q : g_rows)
          if (q.key.rfind(g, 0) == 0 && q.key.find("LAPACK") != std::string::npos) peer = median(g_ms[q.key]);
      }
      const std::string what = r.key.substr(g.size());
      if (r.table == "tri") {
        const double gbs = r.work / (ms * 1e-3) / 1e9;
        std::printf("%-30s %-38s %9.2f ms %7.1f GB/s %5.0f%% copy  x_lapack %5.1f\n", g.c_str(), what.c_str(), ms, gbs,
                    100 * gbs / g_copy, peer > 0 ? peer / ms : 0.0);
      } else {
        std::printf("%-30s %-38s %9.2f ms %7.1f GFLOP/s  x_lapack %5.2f\n", g.c_str(), what.c_str(), ms,
                    r.work / (ms * 1e-3) / 1e9, peer > 0 ? peer / ms : 0.0);
      }
    }
  }
  return 0;
}
