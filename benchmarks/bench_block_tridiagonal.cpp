// Host block-tridiagonal benchmark: adi::BlockTridiagonalPlan (cpu_block_thomas, Eigen
// fixed-size blocks, OpenMP across systems) per block size M = 2..8 and precision,
// against LAPACKE ?gbsv on the equivalent banded matrix (kl = ku = 2M - 1) in the same
// run, with the copy bandwidth measured in the same program.
//
// Sizes follow the paper's table III (N = 128 block rows, 96 for M = 7, 8); the number of
// systems P is chosen so that A, B, C take about --mb MB (default 96).
// Per row: time per block row, effective GB/s (the minimum traffic: A, B, C, d read and
// u written, (3 M^2 + 2 M) values per block row), % of copy bandwidth, and GFLOP/s of
// the nominal count (14/3) M^3 + 6 M^2 per block row (A C*: 2M^3, A d*: 2M^2, LU of the
// pivot block: 2/3 M^3, its solves for M + 1 right-hand sides: 2M^2 (M+1), C* u: 2M^2).
// LAPACK's row includes copying each system into the band storage gbsv overwrites (what
// a caller has to do), OpenMP across systems, one thread each.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "adi/block_tridiagonal.hpp"

#ifdef ADI_HAVE_LAPACKE
#include <lapacke.h>
#endif

namespace {

using adi::index_t;
using Clock = std::chrono::steady_clock;

double g_copy_gbs = 0;
double g_mb = 96;
int g_repetitions = 5;

struct Run {
  double ms;
};
std::map<std::string, std::vector<double>> g_ms;  // every timed run per row key
std::map<std::string, double> g_check;            // max |u_lapack - u_ours| per precision/M

index_t rows_for(int m) { return m <= 6 ? 128 : 96; }
template <class T>
index_t systems_for(int m) {
  const double per_system = 3.0 * rows_for(m) * m * m * sizeof(T);
  return std::max<index_t>(64, static_cast<index_t>(g_mb * 1e6 / per_system));
}
double flops_per_row(int m) { return 14.0 / 3.0 * m * m * m + 6.0 * m * m; }
double bytes_per_row(int m, std::size_t value) { return (3.0 * m * m + 2.0 * m) * value; }

// One batch in the figure-17 layout, block diagonally dominant.
template <class T>
struct Batch {
  int m;
  index_t n, p;
  std::vector<T> a, b, c, d, u;
  Batch(int m_, index_t n_, index_t p_) : m(m_), n(n_), p(p_) {
    const std::size_t blocks = static_cast<std::size_t>(p * n * m * m), vecs = static_cast<std::size_t>(p * n * m);
    a.resize(blocks), b.resize(blocks), c.resize(blocks), d.resize(vecs), u.resize(vecs);
#pragma omp parallel
    {
      std::mt19937 rng(17 + omp_get_thread_num());
      std::uniform_real_distribution<double> U(-1, 1);
#pragma omp for schedule(static)
      for (index_t row = 0; row < p * n; ++row)
        for (int r = 0; r < m; ++r) {
          double off = 0;
          for (int q = 0; q < m; ++q) {
            const std::size_t e = static_cast<std::size_t>((row * m + r) * m + q);
            a[e] = static_cast<T>(U(rng)), c[e] = static_cast<T>(U(rng));
            b[e] = q == r ? T(0) : static_cast<T>(U(rng));
            off += std::fabs(double(a[e])) + std::fabs(double(c[e])) + std::fabs(double(b[e]));
          }
          b[static_cast<std::size_t>((row * m + r) * m + r)] = static_cast<T>(off + 1);
          d[static_cast<std::size_t>(row * m + r)] = static_cast<T>(U(rng));
        }
    }
  }
};

template <class T>
Batch<T>& batch(int m) {
  static std::map<int, std::unique_ptr<Batch<T>>> cache;  // benchmark program, not library state
  auto& p = cache[m];
  if (!p) p = std::make_unique<Batch<T>>(m, rows_for(m), systems_for<T>(m));
  return *p;
}

void record(benchmark::State& st, const std::string& key, Clock::time_point t0, double rows, int m,
            std::size_t value) {
  const double s = std::chrono::duration<double>(Clock::now() - t0).count() / double(st.iterations());
  st.counters["ns/row"] = s / rows * 1e9;
  st.counters["GB/s"] = bytes_per_row(m, value) * rows / s / 1e9;
  st.counters["GFLOP/s"] = flops_per_row(m) * rows / s / 1e9;
  g_ms[key].push_back(s * 1e3);
}

template <class T>
void bm_ours(benchmark::State& st, int m, bool interleaved, const std::string& key, bool periodic = false) {
  Batch<T>& bt = batch<T>(m);
  const adi::BlockLineSet l = interleaved ? adi::to_block_lines(adi::BlockInterleaved{m, bt.n, bt.p})
                                          : adi::to_block_lines(adi::BlockContiguous{m, bt.n, bt.p});
  adi::BlockTridiagonalPlan<T> plan(adi::Executor::host(), l, {adi::BlockKernel::automatic, 0, periodic});
  const auto t0 = Clock::now();
  for (auto _ : st) {
    plan.solve({bt.a.data(), bt.b.data(), bt.c.data()}, bt.d.data(), bt.u.data());
    benchmark::ClobberMemory();
  }
  record(st, key, t0, double(bt.n * bt.p), m, sizeof(T));
}

#ifdef ADI_HAVE_LAPACKE
lapack_int gbsv(lapack_int n, lapack_int k, float* ab, lapack_int ldab, lapack_int* ipiv, float* x) {
  return LAPACKE_sgbsv_work(LAPACK_COL_MAJOR, n, k, k, 1, ab, ldab, ipiv, x, n);
}
lapack_int gbsv(lapack_int n, lapack_int k, double* ab, lapack_int ldab, lapack_int* ipiv, double* x) {
  return LAPACKE_dgbsv_work(LAPACK_COL_MAJOR, n, k, k, 1, ab, ldab, ipiv, x, n);
}

// Per system: the blocks copied into LAPACK band storage (kl = ku = 2M - 1, ldab =
// 2 kl + ku + 1), gbsv, the solution copied out. OpenMP across systems.
template <class T>
void bm_lapack(benchmark::State& st, int m, const std::string& key, const std::string& check_key) {
  Batch<T>& bt = batch<T>(m);
  const index_t n = bt.n, N = n * m, k = 2 * m - 1, ldab = 3 * k + 1;
  std::vector<T> out(bt.u.size());
  int failures = 0;
  const auto t0 = Clock::now();
  for (auto _ : st) {
#pragma omp parallel reduction(+ : failures)
    {
      std::vector<T> ab(static_cast<std::size_t>(ldab * N)), x(static_cast<std::size_t>(N));
      std::vector<lapack_int> ipiv(static_cast<std::size_t>(N));
#pragma omp for schedule(static)
      for (index_t s = 0; s < bt.p; ++s) {
        std::fill(ab.begin(), ab.end(), T(0));
        const std::size_t o = static_cast<std::size_t>(s * n * m * m);
        for (index_t i = 0; i < n; ++i)
          for (int r = 0; r < m; ++r) {
            const index_t row = i * m + r;
            for (int q = 0; q < m; ++q) {
              const std::size_t e = o + static_cast<std::size_t>((i * m + r) * m + q);
              auto put = [&](index_t col, T v) { ab[static_cast<std::size_t>(2 * k + row - col + col * ldab)] = v; };
              if (i > 0) put((i - 1) * m + q, bt.a[e]);
              put(i * m + q, bt.b[e]);
              if (i + 1 < n) put((i + 1) * m + q, bt.c[e]);
            }
            x[static_cast<std::size_t>(row)] = bt.d[static_cast<std::size_t>(s * N + row)];
          }
        failures += gbsv(static_cast<lapack_int>(N), static_cast<lapack_int>(k), ab.data(),
                         static_cast<lapack_int>(ldab), ipiv.data(), x.data()) != 0;
        std::copy(x.begin(), x.end(), out.begin() + s * N);
      }
    }
    benchmark::ClobberMemory();
  }
  record(st, key, t0, double(bt.n * bt.p), m, sizeof(T));
  if (failures) st.SkipWithError("gbsv reported a singular system");
  // Agreement with our solver on the same batch (relative to max |u|).
  adi::BlockTridiagonalPlan<T>(adi::Executor::host(), adi::BlockContiguous{m, bt.n, bt.p})
      .solve({bt.a.data(), bt.b.data(), bt.c.data()}, bt.d.data(), bt.u.data());
  double diff = 0, size = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    diff = std::max(diff, std::fabs(double(out[i]) - double(bt.u[i]))), size = std::max(size, std::fabs(double(out[i])));
  g_check[check_key] = diff / size;
}
#endif

// Parallel memcpy of `bytes` (read + write counted).
double copy_gbs(std::size_t bytes) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double best = 0;
  for (int r = 0; r < 10; ++r) {
    const auto t0 = Clock::now();
#pragma omp parallel
    {
      const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::size_t chunk = (bytes + nt - 1) / nt, lo = std::min(bytes, t * chunk), hi = std::min(bytes, lo + chunk);
      std::memcpy(dst.data() + lo, src.data() + lo, hi - lo);
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r > 0) best = std::max(best, 2.0 * double(bytes) / s / 1e9);
  }
  return best;
}

struct Row {
  std::string prec;
  int m;
};

template <class T>
std::vector<Row> register_precision(const std::string& prec) {
  std::vector<Row> rows;
  for (int m = 2; m <= 8; ++m) {
    const std::string base = prec + "/M=" + std::to_string(m) + "/";
    benchmark::RegisterBenchmark((base + "block_thomas").c_str(),
                                 [=](benchmark::State& st) { bm_ours<T>(st, m, false, base + "ours"); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((base + "block_thomas_periodic").c_str(),
                                 [=](benchmark::State& st) { bm_ours<T>(st, m, false, base + "ours_per", true); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((base + "block_thomas_interleaved").c_str(),
                                 [=](benchmark::State& st) { bm_ours<T>(st, m, true, base + "ours_il"); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
#ifdef ADI_HAVE_LAPACKE
    benchmark::RegisterBenchmark((base + "lapacke_gbsv").c_str(),
                                 [=](benchmark::State& st) { bm_lapack<T>(st, m, base + "lapack", base); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1);
#endif
    rows.push_back({prec, m});
  }
  return rows;
}

double median_ms(const std::string& key) {
  auto it = g_ms.find(key);
  if (it == g_ms.end() || it->second.empty()) return 0;
  std::vector<double> v = it->second;
  // Drop Google Benchmark's calibration runs: keep the last g_repetitions.
  if (v.size() > std::size_t(g_repetitions)) v.erase(v.begin(), v.end() - g_repetitions);
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--mb=", 5) == 0)
      g_mb = std::atof(argv[i] + 5);
    else
      args.push_back(argv[i]);
  }
  std::string reps = "--benchmark_repetitions=" + std::to_string(g_repetitions);
  bool has_reps = false;
  for (char* a : args)
    if (std::strncmp(a, "--benchmark_repetitions=", 24) == 0) has_reps = true, g_repetitions = std::max(1, std::atoi(a + 24));
  if (!has_reps) args.push_back(reps.data());
  int ac = static_cast<int>(args.size());
  g_copy_gbs = copy_gbs(static_cast<std::size_t>(g_mb * 1e6));
  const auto rf = register_precision<float>("float");
  const auto rd = register_precision<double>("double");
  benchmark::Initialize(&ac, args.data());
  if (benchmark::ReportUnrecognizedArguments(ac, args.data())) return 1;
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("copy_GB/s", std::to_string(g_copy_gbs));
#ifndef ADI_HAVE_LAPACKE
  benchmark::AddCustomContext("lapack", "LAPACKE not found at configure time: no gbsv rows");
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf(
      "\nSummary (median of %d, %d threads, copy %.1f GB/s read+write; GB/s counts A,B,C,d read + u written;\n"
      "GFLOP/s of (14/3)M^3 + 6M^2 per block row; LAPACK includes the copy into band storage)\n",
      g_repetitions, omp_get_max_threads(), g_copy_gbs);
  std::printf("%-7s %2s %5s %7s | %9s %8s %7s %6s %8s | %9s %8s | %8s %9s %9s | %9s\n", "prec", "M", "N", "P",
              "ms", "ns/row", "GB/s", "%copy", "GFLOP/s", "interl ms", "GB/s", "gbsv ms", "x gbsv", "|diff|",
              "period ms");
  for (const auto* rows : {&rf, &rd})
    for (const Row& r : *rows) {
      const std::string base = r.prec + "/M=" + std::to_string(r.m) + "/";
      const std::size_t value = r.prec == "float" ? 4 : 8;
      const index_t n = rows_for(r.m), p = value == 4 ? systems_for<float>(r.m) : systems_for<double>(r.m);
      const double ms = median_ms(base + "ours"), il = median_ms(base + "ours_il"), lp = median_ms(base + "lapack");
      const double per = median_ms(base + "ours_per");
      if (ms <= 0) continue;
      const double rowsn = double(n * p);
      const double gbs = bytes_per_row(r.m, value) * rowsn / (ms * 1e-3) / 1e9;
      const double gbs_il = il > 0 ? bytes_per_row(r.m, value) * rowsn / (il * 1e-3) / 1e9 : 0;
      std::printf("%-7s %2d %5lld %7lld | %9.3f %8.2f %7.2f %5.1f%% %8.2f | %9.3f %8.2f | %8.2f %9.2f %9.1e | %9.3f\n",
                  r.prec.c_str(), r.m, (long long)n, (long long)p, ms, ms * 1e6 / rowsn, gbs,
                  100 * gbs / g_copy_gbs, flops_per_row(r.m) * rowsn / (ms * 1e-3) / 1e9, il, gbs_il, lp,
                  lp > 0 ? lp / ms : 0.0, g_check.count(base) ? g_check[base] : 0.0, per);
    }
  return 0;
}
