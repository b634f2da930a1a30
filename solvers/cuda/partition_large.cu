// One large tridiagonal system on the device: the two-pass partition method
// (partition_large.cuh, partition_large_tile.hpp), recursing on the reduced system until
// one thread can solve it. Entry points declared in backend.hpp.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/conditional_graph.cuh"
#include "solvers/cuda/large_fallback.hpp"
#include "solvers/cuda/partition_large.cuh"
#include "solvers/cuda/thomas_pcr_window.cuh"
#include "solvers/cuda/thomas_truncated.cuh"

namespace adi::cuda_backend {

namespace {
using adi::large::LevelPlan;
namespace k = kernels::large;

// Rows per thread: M of the kernels' register arrays. 16-byte loads need M * sizeof(T)
// to be a multiple of 16 (every M here). The defaults are from bench_cuda_large_tridiagonal
// on an H100 (docs/large_tridiagonal.md).
constexpr int kChunks[] = {8, 16, 32};
constexpr int kDefaultChunk32 = 16;
constexpr int kDefaultChunk64 = 8;
// 1: each lane loads its chunk straight from global memory; 2: the warp stages its tile in
// shared memory with coalesced loads. Measured (bench_cuda_large_tridiagonal, H100, 2^26,
// default chunks): global 0.90 ms fp32 / 1.98 ms fp64, staged 1.07 / 2.28 ms; staged is
// behind from 2^21 on (2 warps per block instead of 4 and the stage's extra shared-memory
// pass), level only at 2^20 fp64. So the lanes load straight from global memory.
constexpr int kDefaultLoad = 1;

// How the passes check their rows (stop 37, issue 23: the large plan's automatic solve was
// +5.8% fp32 / +8.7% fp64 at 2^24 against the unchecked one, most of it scaling with n):
// ADI_LARGE_CHECK_FORM=0 stop 32's kernels (LaneCheck::runtime: the row's test behind a run-time
// test of the flag, the first failing row kept row by row, in pass 1, pass 2 and the tail), 1
// (the default) pass 1 and the tail with the test fused into one predicate per lane where the
// solve is checked (LaneCheck::fused; pass 1 held to 5 blocks an SM at the default chunks,
// kFusedBlocks) and without any test where it is not, pass 2 without it (LaneCheck::off); 2 as
// 1 without the hold. The same rows raise the flag with the same position. Read at each solve,
// so bench_cuda_pivoting --stop37=1 times the forms in one process; any value but 0, 1, 2 (or
// unset) an InvalidArgument (before stop 40: a note on stderr and the default).
// Issue 15 item 8: forms 0 and 2 (kept for comparison) are compiled only with ADI_CUDA_UNROLL_ALL;
// asked for in a build without them, said once on stderr, and form 1 runs (the same rows flagged).
int large_check_form() {
  const int f = ::adi::detail::env_int("ADI_LARGE_CHECK_FORM", 0, 2, 1);
#if !defined(ADI_CUDA_UNROLL_ALL)
  if (f != 1) {
    static std::once_flag gated;
    note_form_not_compiled(gated, f == 0 ? "ADI_LARGE_CHECK_FORM=0 (stop 32's run-time row checks)"
                                         : "ADI_LARGE_CHECK_FORM=2 (the fused check without pass 1's register hold)",
                           "the default (form 1)");
    return 1;
  }
#endif
  return f;
}

template <class T, int M, bool Staged, k::LaneCheck C1, k::LaneCheck C2, int MinBlocks = 0>
void run_levels(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, double tol,
                void* workspace, unsigned long long* flag, unsigned long long bias, unsigned long long* report,
                cudaStream_t stream) {
  const LevelPlan p = LevelPlan::make(n, M, sizeof(T));
  adi::large::Level<T> L[LevelPlan::kMaxLevels];
  adi::large::make_levels<T>(p, n, a, b, c, d, u, periodic, tol, flag, bias, workspace, L);
  constexpr int W = k::kWarps<Staged>;
  auto blocks = [](adi::large::i64 tiles) { return static_cast<unsigned>((tiles + W - 1) / W); };
  const int last = p.levels - 1;
  // The level before the direct one joins it in one launch when it is a few tiles.
  const adi::large::Chunks before = adi::large::Chunks::make(p.N[last > 0 ? last - 1 : 0], M);
  const bool tail = last >= 1 && adi::large::tile_count(before) <= k::kTailWarps;
  const int passes = tail ? last - 1 : last;  // levels 0 .. passes-1 run pass 1 and pass 2 apart
  for (int l = 0; l < passes; ++l) {
    const adi::large::Chunks ch = adi::large::Chunks::make(p.N[l], M);
    const adi::large::i64 tiles = adi::large::tile_count(ch);
    k::partition_pass1<T, M, Staged, C1, MinBlocks><<<blocks(tiles), W * 32, 0, stream>>>(L[l], ch, tiles);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
  T* cp = adi::large::direct_scratch<T>(p, workspace, 0);
  T* z = adi::large::direct_scratch<T>(p, workspace, 1);
  if (tail) {
    k::partition_tail<T, M, C1><<<1, k::kTailWarps * 32, 0, stream>>>(
        L[last - 1], before, adi::large::tile_count(before), L[last], cp, z, report);
  } else {
    k::partition_direct<T><<<1, 32, 0, stream>>>(L[last], cp, z, report);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
  for (int l = passes - 1; l >= 0; --l) {
    adi::large::Level<T> v = L[l];
    v.flag = nullptr;  // pass 2 meets the same pivots as pass 1
    const adi::large::Chunks ch = adi::large::Chunks::make(p.N[l], M);
    const adi::large::i64 tiles = adi::large::tile_count(ch);
    k::partition_pass2<T, M, Staged, C2><<<blocks(tiles), W * 32, 0, stream>>>(v, ch, tiles);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
}

// The check's form (large_check_form) and whether the solve is checked pick the kernels.
template <class T, int M, bool Staged>
void run_levels(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, double tol,
                void* workspace, unsigned long long* flag, unsigned long long bias, unsigned long long* report,
                cudaStream_t stream) {
  using LC = k::LaneCheck;
  [[maybe_unused]] const int form = large_check_form();  // 1 unless ADI_CUDA_UNROLL_ALL (forms 0, 2)
#if defined(ADI_CUDA_UNROLL_ALL)
  if (form == 0)
    run_levels<T, M, Staged, LC::runtime, LC::runtime>(n, a, b, c, d, u, periodic, tol, workspace, flag, bias,
                                                       report, stream);
  else
#endif
  if (flag == nullptr)
    run_levels<T, M, Staged, LC::off, LC::off>(n, a, b, c, d, u, periodic, tol, workspace, nullptr, bias, report,
                                               stream);
#if defined(ADI_CUDA_UNROLL_ALL)
  else if (form == 2)
    run_levels<T, M, Staged, LC::fused, LC::off>(n, a, b, c, d, u, periodic, tol, workspace, flag, bias, report,
                                                 stream);
#endif
  else
    run_levels<T, M, Staged, LC::fused, LC::off, k::kFusedBlocks<T, M>>(n, a, b, c, d, u, periodic, tol, workspace,
                                                                       flag, bias, report, stream);
}

template <class T, int M>
void run_levels_load(int load, index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic,
                     double tol, void* workspace, unsigned long long* flag, unsigned long long bias,
                     unsigned long long* report, cudaStream_t stream) {
  // A stage of 32 double rows per lane would not fit the 48 KiB of static shared memory.
  constexpr bool can_stage = sizeof(T) * M <= 128;
  if constexpr (can_stage) {
    if ((load == 0 ? kDefaultLoad : load) == 2) {
#if defined(ADI_CUDA_UNROLL_ALL)
      run_levels<T, M, true>(n, a, b, c, d, u, periodic, tol, workspace, flag, bias, report, stream);
      return;
#else
      // Issue 15 item 8: the staged form (load 2: the benchmark's "partition staged loads"
      // rows and the tests; the library passes 0 = global loads) only with ADI_CUDA_UNROLL_ALL.
      static std::once_flag once;
      note_form_not_compiled(once, "large_solve load = 2 (tiles staged in shared memory)",
                             "the default (global loads)");
#endif
    }
  }
  run_levels<T, M, false>(n, a, b, c, d, u, periodic, tol, workspace, flag, bias, report, stream);
}

}  // namespace

int large_chunk_min() { return kChunks[0]; }
int large_chunk_max() { return kChunks[2]; }
int large_default_chunk(std::size_t value_size) { return value_size == 4 ? kDefaultChunk32 : kDefaultChunk64; }

std::size_t large_workspace_bytes(index_t n, bool, int chunk, std::size_t value_size) {
  return LevelPlan::make(n, chunk, value_size).bytes;
}

template <class T>
void large_solve(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, int chunk,
                 double tolerance, void* workspace, unsigned long long* flag, unsigned long long bias,
                 void* stream, int load, unsigned long long* report) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (chunk) {
    case 8:
      run_levels_load<T, 8>(load, n, a, b, c, d, u, periodic, tolerance, workspace, flag, bias, report, s);
      break;
    case 16:
      run_levels_load<T, 16>(load, n, a, b, c, d, u, periodic, tolerance, workspace, flag, bias, report, s);
      break;
    case 32:
      run_levels_load<T, 32>(load, n, a, b, c, d, u, periodic, tolerance, workspace, flag, bias, report, s);
      break;
    default:
      throw InvalidArgument("large tridiagonal solve on CUDA: chunk = " + std::to_string(chunk) +
                            " must be 8, 16 or 32");
  }
}

// ---- automatic's fall-back decided on the device (stop 37, ADI_PIVOTING_FALLBACK=device) ----

namespace {
#if ADI_CUDA_CONDITIONAL_GRAPHS
// Reads the partition's flag (raised: a row failed the check), clears it for the next solve and
// opens the IF node on it. One thread.
__global__ void large_fallback_condition(unsigned long long* flag, cudaGraphConditionalHandle handle) {
  const unsigned long long v = *flag;
  if (v != 0) *flag = 0;
  cudaGraphSetConditional(handle, v != 0 ? 1u : 0u);
}
#endif

struct LargeFallbackKey {
  const void *a, *b, *c, *d, *u, *workspace, *flag, *pivot_workspace, *pivot_flag;
  long long count, n, stride, band_step;
  int device, value_size, chunk, form, periodic, pad;
  double tolerance;
  bool operator==(const LargeFallbackKey& o) const { return std::memcmp(this, &o, sizeof o) == 0; }
};
static_assert(sizeof(LargeFallbackKey) == 9 * sizeof(void*) + 4 * sizeof(long long) + 6 * sizeof(int) + sizeof(double),
              "no padding: the key is compared with memcmp");
constexpr std::size_t kLargeFallbackGraphs = 4;
struct LargeFallbackCache {
  std::mutex mutex;
  struct Entry {
    LargeFallbackKey key;
    cudaGraphExec_t exec;
    unsigned long long used;
  };
  std::vector<Entry> entries;
  unsigned long long clock = 0;
  std::string unavailable;  // why no graph could be built (then: false, the host decides)
  ~LargeFallbackCache() {
    for (auto& e : entries) (void)cudaGraphExecDestroy(e.exec);
  }
};

#if ADI_CUDA_CONDITIONAL_GRAPHS
// [partition, raising flag] -> condition -> IF { cuda_pivoting on the systems } (build_if_graph).
template <class T>
cudaGraphExec_t large_fallback_build(index_t count, index_t n, index_t stride, index_t band_step, const T* a,
                                     const T* b, const T* c, const T* d, T* u, bool periodic, int chunk, double tol,
                                     void* ws, unsigned long long* flag, void* pws, int* pflag) {
  return build_if_graph(
      [&](cudaStream_t cs, cudaGraphConditionalHandle handle) {
        // report null: the flag stays raised for the condition kernel
        enqueue_large_systems<T>(
            count, n, a, b, c, d, u, [&](index_t q) { return q * band_step; }, [&](index_t q) { return q * stride; },
            periodic, chunk, tol, ws, flag, cs, nullptr);
        large_fallback_condition<<<1, 1, 0, cs>>>(flag, handle);
        ADI_CUDA_CHECK(cudaGetLastError());
      },
      [&](cudaStream_t cs) {
        // The pivoting solve sees a capturing stream: its own graph gates take launches.
        const LineSet l{n, 1, count, stride, 1, 0};
        tridiagonal_solve<T>(Kernel::cuda_pivoting, l, BandView<T>{a, b, c, band_step == 0 && count > 1}, d, u,
                             periodic, pws, pflag, cs);
      });
}

// After a failed CUDA call, its error cleared by cudaGetLastError (ADI_CUDA_CHECK, GraphCapture):
// true where the context is unusable: a sticky error (cudaErrorIllegalAddress, cudaErrorLaunchFailure,
// ...; left by this call or by any earlier kernel, of this library or not) is not cleared, and every
// later call (here: a probe stream's create and query) returns it again. false where the call only
// refused (cudaErrorNotSupported, a capture refusal, ...: the feature is unavailable), which leaves
// the context usable.
bool context_unusable() {
  if (cudaPeekAtLastError() != cudaSuccess) return true;
  cudaStream_t probe = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    e = cudaStreamQuery(probe);  // empty: cudaSuccess, or an error of earlier asynchronous work
    (void)cudaStreamDestroy(probe);
  }
  if (e == cudaSuccess) return false;
  (void)cudaGetLastError();  // a non-sticky one: cleared (a sticky one stays)
  return true;
}
#endif
}  // namespace

void* large_fallback_cache_create() { return new LargeFallbackCache; }
void large_fallback_cache_destroy(void* cache) noexcept { delete static_cast<LargeFallbackCache*>(cache); }

template <class T>
bool large_solve_device_fallback(void* cache, index_t count, index_t n, index_t stride, index_t band_step, const T* a,
                                 const T* b, const T* c, const T* d, T* u, bool periodic, int chunk, double tol,
                                 void* ws, unsigned long long* flag, void* pws, int* pflag, void* stream) {
#if ADI_CUDA_CONDITIONAL_GRAPHS
  auto& g = *static_cast<LargeFallbackCache*>(cache);
  LargeFallbackKey key{};
  key.a = a;
  key.b = b;
  key.c = c;
  key.d = d;
  key.u = u;
  key.workspace = ws;
  key.flag = flag;
  key.pivot_workspace = pws;
  key.pivot_flag = pflag;
  key.count = count;
  key.n = n;
  key.stride = stride;
  key.band_step = band_step;
  ADI_CUDA_CHECK(cudaGetDevice(&key.device));
  key.value_size = static_cast<int>(sizeof(T));
  key.chunk = chunk;
  key.form = large_check_form();
  key.periodic = periodic ? 1 : 0;
  key.tolerance = tol;
  std::lock_guard<std::mutex> lock(g.mutex);
  if (!g.unavailable.empty()) return false;
  ++g.clock;
  cudaGraphExec_t exec = nullptr;
  for (auto& e : g.entries)
    if (e.key == key) {
      e.used = g.clock;
      exec = e.exec;
    }
  if (exec == nullptr) {
    try {
      exec = large_fallback_build<T>(count, n, stride, band_step, a, b, c, d, u, periodic, chunk, tol, ws, flag, pws,
                                     pflag);
    } catch (const ::adi::DeviceError& e) {
      // A broken context (a sticky error, e.g. an earlier kernel's illegal address) is no reason
      // to switch the device fall-back off: the host path would fail the same way. Only a
      // refusal (conditional nodes or a captured call unsupported) does.
      if (context_unusable()) throw;
      g.unavailable = e.what();
      std::fprintf(stderr, "adi: large plan: the device fall-back's graph is unavailable (%s); the host decides from now on\n",
                   e.what());
      return false;
    }
    if (::adi::detail::env_switch("ADI_LARGE_FALLBACK_TRACE", false))
      std::fprintf(stderr, "adi: large plan: device fall-back graph built (%lld systems of %lld, %d-byte values)\n",
                   static_cast<long long>(count), static_cast<long long>(n), static_cast<int>(sizeof(T)));
    if (g.entries.size() < kLargeFallbackGraphs) {
      g.entries.push_back({key, exec, g.clock});
    } else {
      auto lru = g.entries.begin();
      for (auto it = g.entries.begin(); it != g.entries.end(); ++it)
        if (it->used < lru->used) lru = it;
      (void)cudaGraphExecDestroy(lru->exec);  // in flight: freed on completion
      *lru = {key, exec, g.clock};
    }
  }
  ADI_CUDA_CHECK(cudaGraphLaunch(exec, static_cast<cudaStream_t>(stream)));
  return true;
#else
  (void)cache, (void)count, (void)n, (void)stride, (void)band_step, (void)a, (void)b, (void)c, (void)d, (void)u;
  (void)periodic, (void)chunk, (void)tol, (void)ws, (void)flag, (void)pws, (void)pflag, (void)stream;
  return false;
#endif
}

template bool large_solve_device_fallback<float>(void*, index_t, index_t, index_t, index_t, const float*, const float*,
                                                 const float*, const float*, float*, bool, int, double, void*,
                                                 unsigned long long*, void*, int*, void*);
template bool large_solve_device_fallback<double>(void*, index_t, index_t, index_t, index_t, const double*,
                                                  const double*, const double*, const double*, double*, bool, int,
                                                  double, void*, unsigned long long*, void*, int*, void*);

bool large_truncated_windows() { return ::adi::detail::env_switch("ADI_LARGE_WINDOWS", true); }
index_t large_truncated_min_rows() { return index_t(kernels::kTruncSystemMinRows); }
index_t large_truncated_max_rows() { return index_t(kernels::kTruncSystemMaxRows); }

// LargeKernel::truncated: the windows of the lean X kernel's warp (thomas_pcr_window.cuh; the default since
// stop 51: H200 run s51/7, fp64 2^24 0.417 -> 0.297 ms, fp32 0.287 -> 0.139), or ADI_LARGE_WINDOWS=0 the
// single-system kernel of stop 44 (a thread per part; read at each solve, kept for timing).
template <class T>
void large_truncated_solve(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, int* bad, void* stream) {
  if (large_truncated_windows())
    kernels::launch_thomas_pcr_window_system<T>(static_cast<kernels::i64>(n), a, b, c, d, u, bad,
                                                static_cast<cudaStream_t>(stream));
  else
    kernels::launch_thomas_truncated_system<T>(static_cast<kernels::i64>(n), a, b, c, d, u, bad,
                                               static_cast<cudaStream_t>(stream));
}
template void large_truncated_solve<float>(index_t, const float*, const float*, const float*, const float*, float*,
                                           int*, void*);
template void large_truncated_solve<double>(index_t, const double*, const double*, const double*, const double*,
                                            double*, int*, void*);

template void large_solve<float>(index_t, const float*, const float*, const float*, const float*, float*, bool, int,
                                 double, void*, unsigned long long*, unsigned long long, void*, int,
                                 unsigned long long*);
template void large_solve<double>(index_t, const double*, const double*, const double*, const double*, double*,
                                  bool, int, double, void*, unsigned long long*, unsigned long long, void*, int,
                                  unsigned long long*);

}  // namespace adi::cuda_backend
