// TridiagonalOptions::measure: the dispatch decided by timing the candidates on the device
// (or host) the plan runs on, once per shape and process (docs/design.md, "Measured dispatch").
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi::detail {

namespace {

struct Choice {
  Kernel per_line = Kernel::automatic, shared = Kernel::automatic;
};

// Everything the choice depends on: the executor's device (or host team), the layout, the
// precision, periodicity and pivoting.
std::string cache_key(const Executor& exec, const LineSet& l, std::size_t value_size, const TridiagonalOptions& o) {
  std::string k = exec.is_host() ? "host:" + std::to_string(exec.threads())
                                 : "cuda:" + std::to_string(exec.device()) + ":" +
                                       std::string(cuda_backend::device_info(exec.device()).name);
  // Appended piece by piece (GCC 12 warns, -Wrestrict, on ":" + std::to_string(...) here).
  for (long long v : {static_cast<long long>(l.n), static_cast<long long>(l.stride), static_cast<long long>(l.count0),
                      static_cast<long long>(l.stride0), static_cast<long long>(l.count1),
                      static_cast<long long>(l.stride1), static_cast<long long>(value_size),
                      static_cast<long long>(o.periodic), static_cast<long long>(o.pivoting)}) {
    k += ':';
    k += std::to_string(v);
  }
  return k;
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Choice>& cache() {
  static std::map<std::string, Choice> c;
  return c;
}

// A diagonally dominant system with values that vary along and across lines (never zeros:
// timings on zeros can flatter a kernel).
template <class T>
void fill(const Executor& exec, T* p, index_t count, T base, T step, unsigned period) {
  if (exec.is_host()) {
    for (index_t i = 0; i < count; ++i) p[i] = base + step * static_cast<T>(i % period);
  } else {
    cuda_backend::fill_pattern<T>(p, static_cast<std::size_t>(count), base, step, period, exec.stream());
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

template <class T>
KernelMeasurement measure_kernels(const Executor& exec, const LineSet& lines, const TridiagonalOptions& options,
                                  Kernel& per_line, Kernel& shared) {
  KernelMeasurement m;
  m.measured = true;
  // A few very long lines: the partition solver is another regime, not a batched kernel.
  const DispatchQuery q0{lines, sizeof(T), options.periodic, false, options.pivoting};
  if (choose_kernel(exec, q0) == Kernel::large_partition) {
    per_line = shared = Kernel::large_partition;
    return m;
  }
  const std::string key = cache_key(exec, lines, sizeof(T), options);
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    const auto it = cache().find(key);
    if (it != cache().end()) {
      per_line = it->second.per_line;
      shared = it->second.shared;
      m.cached = true;
      return m;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const index_t span = lines.span();
  Storage sa(sizeof(T) * static_cast<std::size_t>(span), exec), sb(sa.bytes(), exec), sc(sa.bytes(), exec),
      sd(sa.bytes(), exec), su(sa.bytes(), exec);
  T* a = static_cast<T*>(sa.get());
  T* b = static_cast<T*>(sb.get());
  T* c = static_cast<T*>(sc.get());
  T* d = static_cast<T*>(sd.get());
  T* u = static_cast<T*>(su.get());
  fill<T>(exec, a, span, T(-1), T(0.0625), 7);
  fill<T>(exec, b, span, T(4), T(0.125), 5);
  fill<T>(exec, c, span, T(-1), T(0.03125), 11);
  fill<T>(exec, d, span, T(1), T(0.25), 13);
  exec.synchronize();

  void* start = nullptr;
  void* stop = nullptr;
  if (exec.is_cuda()) {
    start = cuda_backend::event_create();
    stop = cuda_backend::event_create();
  }
  struct Events {
    void *start, *stop;
    ~Events() {
      cuda_backend::event_destroy(start);
      cuda_backend::event_destroy(stop);
    }
  } events{start, stop};

  DispatchQuery q{lines, sizeof(T), options.periodic, false, options.pivoting};
  for (int sh = 0; sh < 2; ++sh) {
    q.shared_bands = sh == 1;
    Kernel best = choose_kernel(exec, q);
    double best_ms = -1;
    for (Kernel k : candidate_kernels(exec, q)) {
      TridiagonalOptions o = options;
      o.kernel = k;
      o.measure = false;
      o.check_pivots = false;
      if (o.pivoting == Pivoting::automatic) o.pivoting = Pivoting::none;
      double ms = -1;
      try {
        TridiagonalPlan<T> plan(exec, lines, o);
        auto once = [&] {
          if (sh == 1)
            plan.solve(SharedBands<T>{a, b, c}, d, u);
          else
            plan.solve(Bands<T>{a, b, c}, d, u);
        };
        once();  // warm-up (module load, first-touch)
        exec.synchronize();
        std::vector<double> t;
        for (int r = 0; r < 5; ++r) {
          if (exec.is_cuda()) {
            cuda_backend::event_record(start, exec.stream());
            once();
            cuda_backend::event_record(stop, exec.stream());
            t.push_back(cuda_backend::event_elapsed_ms(start, stop));
          } else {
            const auto h0 = std::chrono::steady_clock::now();
            once();
            t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count());
          }
        }
        ms = median(t);
      } catch (const Unsupported&) {  // e.g. a launch shape the device refuses: not a candidate
        continue;
      }
      m.timings.push_back(KernelTiming{k, sh == 1, ms});
      if (best_ms < 0 || ms < best_ms) {
        best_ms = ms;
        best = k;
      }
    }
    (sh == 1 ? shared : per_line) = best;
  }
  m.cost_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(cache_mutex());
  cache()[key] = Choice{per_line, shared};
  return m;
}

template KernelMeasurement measure_kernels<float>(const Executor&, const LineSet&, const TridiagonalOptions&,
                                                  Kernel&, Kernel&);
template KernelMeasurement measure_kernels<double>(const Executor&, const LineSet&, const TridiagonalOptions&,
                                                   Kernel&, Kernel&);

}  // namespace adi::detail
