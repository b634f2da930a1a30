#include "adi/large_tridiagonal.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "adi/base/env_switch.hpp"
#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/cpu/large_tridiagonal_cpu.hpp"
#include "solvers/cpu/tridiagonal_cpu.hpp"
#include "solvers/common/partition_large_math.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/large_fallback.hpp"

namespace adi {

namespace {
struct KernelName {
  LargeKernel v;
  const char* name;
};
constexpr KernelName kKernelNames[] = {
    {LargeKernel::automatic, "automatic"},
    {LargeKernel::thomas, "thomas"},
    {LargeKernel::pcr_thomas, "pcr_thomas"},
    {LargeKernel::pcr_thomas_overlapped, "pcr_thomas_overlapped"},
    {LargeKernel::shuffled_pcr_thomas, "shuffled_pcr_thomas"},
    {LargeKernel::partition, "partition"},
    {LargeKernel::truncated, "truncated"},
};

bool is_pcr(LargeKernel v) {
  return v == LargeKernel::pcr_thomas || v == LargeKernel::pcr_thomas_overlapped ||
         v == LargeKernel::shuffled_pcr_thomas;
}

int host_cores(const Executor& exec) {
  return exec.threads() > 0 ? exec.threads() : std::max(1, omp_get_num_procs());
}

// The pivot flag of the CUDA path: the kernels raise it to (bias - row), so the first
// bad position over all systems is bias minus its final value (0: none). TridiagonalPlan's
// route (large_lines_solve) keeps it at the start of its workspace; LargeTridiagonalPlan in
// a device word of its own (Impl::flag_dev).
constexpr std::size_t kFlagBytes = 256;

std::string where(const Executor& e) { return e.is_host() ? "host" : "device"; }

// The CUDA partition on `count` systems of n rows (system s: bands from a, b, c + band(s), d
// and u + off(s)) and its check, for both plans that run it (LargeTridiagonalPlan and
// TridiagonalPlan's route for few long lines): the kernels raise the device word `flag` to
// (bias - row), a word that is zero between solves (zeroed when allocated, and by the kernel
// that publishes it); each system's last checking kernel publishes a raised flag into the
// pinned host word `report` (the largest value: the first failing position), read after one
// synchronisation. No memset, no copy (stop 32: they cost +10% of a 2^24 solve, +35% at
// 2^20). flag == nullptr: unchecked, nothing waited for, returns 0. Otherwise returns the
// report: 0, or the first failing position's total - (s * n + row), total = count * n.
template <class T, class Band, class Off>
unsigned long long cuda_partition_systems(const Executor& exec, index_t count, index_t n, const T* a, const T* b,
                                          const T* c, const T* d, T* u, Band band, Off off, bool periodic, int chunk,
                                          double tolerance, void* ws, unsigned long long* flag,
                                          unsigned long long* report) {
  if (flag != nullptr && report == nullptr)
    throw std::logic_error("large tridiagonal solve (CUDA): a checked solve needs its pinned report word");
  if (flag) *report = 0;  // no kernel can be writing it: every checked solve ends synchronised
  cuda_backend::enqueue_large_systems<T>(count, n, a, b, c, d, u, band, off, periodic, chunk, tolerance, ws, flag,
                                         exec.stream(), flag ? report : nullptr);
  if (flag == nullptr) return 0;
  cuda_backend::synchronize(exec.stream());
  return *report;
}

// The truncated sweeps (LargeKernel::truncated) on `count` systems of n rows, laid out as for
// cuda_partition_systems, for both plans that run them: one launch a system, one synchronisation;
// `bad` (pinned host memory) zeroed here and raised by a refusing kernel. true: every system taken;
// false: u is not the solution (the caller's partition solves every system again and checks).
template <class T, class Band, class Off>
bool cuda_truncated_systems(const Executor& exec, index_t count, index_t n, const T* a, const T* b, const T* c,
                            const T* d, T* u, Band band, Off off, int* bad) {
  *bad = 0;  // no kernel can be writing it: every solve that uses it ends synchronised
  for (index_t s = 0; s < count; ++s)
    cuda_backend::large_truncated_solve<T>(n, a + band(s), b + band(s), c + band(s), d + off(s), u + off(s), bad,
                                           exec.stream());
  cuda_backend::synchronize(exec.stream());
  return *bad == 0;
}

}  // namespace

const char* large_kernel_name(LargeKernel v) {
  for (const auto& e : kKernelNames)
    if (e.v == v) return e.name;
  return "unknown";
}

LargeKernel large_kernel_from_name(const std::string& name) {
  std::string all;
  for (const auto& e : kKernelNames) {
    if (name == e.name) return e.v;
    all += all.empty() ? "" : ", ";
    all += e.name;
  }
  throw InvalidArgument("unknown large tridiagonal kernel '" + name + "'; expected one of: " + all);
}

int large_switch_point(index_t n, int cores) { return adi::large::analytic_switch_point(n, cores); }

template <class T>
struct LargeTridiagonalPlan<T>::Impl {
  Executor exec = Executor::host();
  index_t n = 0, count = 0, stride = 0;
  LargeTridiagonalOptions options;
  LargeKernel kernel = LargeKernel::partition;
  int k = 0;
  cpu::large::Settings settings;  // host
  int cuda_chunk = 0;             // device
  std::size_t ws_bytes = 0;
  detail::Storage workspace;
  // The pivoting route's scratch: from construction with pivoting = partial; with automatic,
  // allocated when a system first fails the stability check (the failure path only).
  detail::Storage pivot_ws;
  // CUDA, pinned host memory the kernels write directly, read after the solve's one
  // synchronisation (no memset, no copy; as TridiagonalPlan's, adi/tridiagonal.cpp): [0] the
  // partition's check (the first failing position, published by its direct kernel), [1] the
  // pivoting route's flag.
  std::shared_ptr<unsigned long long> flags_host;
  // CUDA: the partition kernels' device flag (raised by atomicMax, zeroed when allocated and
  // by the kernel that publishes it, so never by the host; not in the workspace, which the
  // caller may pass, dirty, per solve).
  detail::Storage flag_dev;
  // CUDA, ADI_PIVOTING_FALLBACK=device when the plan is made (stop 37, opt-in): automatic out of
  // place decides the fall-back on the device (one graph launch: the partition, a condition
  // kernel, an IF node with the pivoting solve; cuda_backend::large_solve_device_fallback), so
  // with check_pivots off nothing is waited for; the graphs, per pointer set, in fallback_cache.
  bool device_fallback = false;
  std::shared_ptr<void> fallback_cache;

  std::size_t pivot_bytes() const;
  void allocate();  // the constructor's last step

  void check_pointers(const T* a, const T* b, const T* c, bool shared, const T* d, const T* u) const;
  // Validates, then solves through the backend.
  void run(const T* a, const T* b, const T* c, bool shared, const T* d, T* u, void* ws, std::size_t bytes);

  // The backend, chosen once in the constructor from the executor: the partition solve (on
  // a validated workspace) and the batched pivoting solve it falls back to.
  using Solve = void (Impl::*)(const T* a, const T* b, const T* c, bool shared, const T* d, T* u, void* ws);
  using PivotSolve = void (Impl::*)(const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  Solve solve_backend = nullptr;
  PivotSolve pivot_solve = nullptr;
  void solve_host(const T* a, const T* b, const T* c, bool shared, const T* d, T* u, void* ws);
  void solve_cuda(const T* a, const T* b, const T* c, bool shared, const T* d, T* u, void* ws);
  void pivot_host(const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  void pivot_cuda(const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  void pivot(const T* a, const T* b, const T* c, bool shared, const T* d, T* u) {
    (this->*pivot_solve)(a, b, c, shared, d, u);
  }
  // A failed stability check that the plan cannot or may not re-solve with pivoting.
  // near: the device names a row of the failing chunk (or, in the reduced system, near it).
  [[noreturn]] void unstable(index_t system, index_t row, bool near = false) const;
  // The pivoting fall-back met a zero pivot (CUDA): SingularSystem naming the system and row.
  [[noreturn]] void singular_fallback(const T* a, const T* b, const T* c, bool shared, const T* d, const T* u) const;
};

template <class T>
LargeTridiagonalPlan<T>::LargeTridiagonalPlan(const Executor& exec, index_t n, index_t count,
                                              index_t system_stride, LargeTridiagonalOptions o)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  const std::string who = "LargeTridiagonalPlan: ";
  detail::require(n >= 1, who + "n = " + detail::number(n) + " must be >= 1");
  detail::require(count >= 0, who + "count = " + detail::number(count) + " must be >= 0");
  // Past 2^56 bytes no memory holds the system, and the workspace sizes would overflow.
  detail::require(n <= (index_t(1) << 56) / index_t(sizeof(T)),
                  who + "n = " + detail::number(n) + " is larger than any memory holds (at most 2^56 bytes of " +
                      detail::number(sizeof(T)) + "-byte values per array)");
  if (system_stride == 0) system_stride = n;
  detail::require(count <= 1 || system_stride >= n,
                  who + "system_stride = " + detail::number(system_stride) + " must be >= n = " +
                      detail::number(n) + " (systems must not overlap)");
  detail::checked_span(LineSet{n, 1, count, system_stride, 1, 0}, "LargeTridiagonalPlan");
  detail::require(o.pcr_levels >= -1 && o.pcr_levels <= 30,
                  who + "pcr_levels = " + detail::number(o.pcr_levels) +
                      " must be -1 (analytic switch point) or 0 .. 30");
  detail::check_pivot_tolerance(o.pivot_tolerance, "LargeTridiagonalOptions");
  p.exec = exec;
  p.n = n;
  p.count = count;
  p.stride = system_stride;
  p.options = o;
  p.kernel = o.kernel == LargeKernel::automatic ? LargeKernel::partition : o.kernel;
  if (o.kernel == LargeKernel::truncated)
    detail::require(exec.is_cuda() && !o.periodic && n <= cuda_backend::large_truncated_max_rows(),
                    who + "kernel truncated runs on a CUDA device, on non-periodic systems of at most " +
                        detail::number(cuda_backend::large_truncated_max_rows()) +
                        " rows; use LargeKernel::partition (or automatic)");
  // Automatic on a CUDA device: the truncated sweeps (one pass over the bands, docs/large_tridiagonal.md)
  // for a non-periodic system in their range (fp32 only in the window form, large_truncated_applies)
  // where the solve is checked anyway (it synchronises to
  // read the refusal), no relative pivot tolerance is asked for (the partition tests it) and no chunk;
  // ADI_LARGE_TRUNCATED=0 keeps the partition.
  if (o.kernel == LargeKernel::automatic && o.pivot_tolerance == 0 && o.chunk == 0 && o.pivoting != Pivoting::partial &&
      (o.check_pivots || o.pivoting == Pivoting::automatic) && !detail::pivoting_fallback_on_device() &&
      detail::large_truncated_applies(exec, n, sizeof(T), o.periodic))
    p.kernel = LargeKernel::truncated;
  p.solve_backend = exec.is_cuda() ? &Impl::solve_cuda : &Impl::solve_host;
  p.pivot_solve = exec.is_cuda() ? &Impl::pivot_cuda : &Impl::pivot_host;

  if (exec.is_cuda()) {
    detail::require(p.kernel == LargeKernel::partition || p.kernel == LargeKernel::truncated,
                    who + "kernel " + std::string(large_kernel_name(p.kernel)) +
                        " runs on the host only; use LargeKernel::partition (or automatic) on " + exec.name());
    detail::require(o.lanes == 0, who + "lanes applies to the host partition only; leave it 0 on " + exec.name());
    const int lo = cuda_backend::large_chunk_min(), hi = cuda_backend::large_chunk_max();
    detail::require(o.chunk == 0 || (o.chunk >= lo && o.chunk <= hi),
                    who + "chunk = " + detail::number(o.chunk) + " must be 0 (default) or " + detail::number(lo) +
                        " .. " + detail::number(hi) + " on a CUDA executor");
    p.cuda_chunk = o.chunk > 0 ? o.chunk : cuda_backend::large_default_chunk(sizeof(T));
    p.ws_bytes = cuda_backend::large_workspace_bytes(n, o.periodic, p.cuda_chunk, sizeof(T));
    p.flags_host.reset(static_cast<unsigned long long*>(cuda_backend::pinned_allocate(3 * sizeof(long long))),
                       [](unsigned long long* q) { cuda_backend::pinned_free(q); });
    p.device_fallback = detail::pivoting_fallback_on_device() && o.pivoting == Pivoting::automatic;
    if (p.device_fallback)
      p.fallback_cache.reset(cuda_backend::large_fallback_cache_create(),
                             [](void* q) { cuda_backend::large_fallback_cache_destroy(q); });
    p.allocate();
    return;
  }

  const int w = cpu::large::simd_width(sizeof(T));
  cpu::large::Settings& s = p.settings;
  s.variant = p.kernel;
  s.periodic = o.periodic;
  s.tolerance = o.pivot_tolerance;
  s.threads = exec.threads();
  if (p.kernel == LargeKernel::partition) {
    detail::require(o.chunk == 0 || (o.chunk >= 8 && o.chunk % w == 0 && o.chunk <= (1 << 20)),
                    who + "chunk = " + detail::number(o.chunk) + " must be 0 (default) or a multiple of " +
                        detail::number(w) + " (the SIMD width) in 8 .. 2^20");
    detail::require(o.lanes == 0 || o.lanes == 1 || o.lanes == w || o.lanes == 2 * w || o.lanes == 4 * w,
                    who + "lanes = " + detail::number(o.lanes) + " must be 0 (default), 1, " + detail::number(w) +
                        ", " + detail::number(2 * w) + " or " + detail::number(4 * w));
    s.chunk = o.chunk > 0 ? o.chunk : cpu::large::default_chunk(sizeof(T));
    s.lanes = o.lanes > 0 ? o.lanes : cpu::large::default_lanes(sizeof(T));
  } else {
    detail::require(o.chunk == 0 && o.lanes == 0,
                    who + "chunk and lanes apply to the partition kernel only; leave them 0 for " +
                        std::string(large_kernel_name(p.kernel)));
  }
  if (is_pcr(p.kernel)) p.k = o.pcr_levels >= 0 ? o.pcr_levels : large_switch_point(n, host_cores(exec));
  s.k = p.k;
  p.ws_bytes = cpu::large::workspace_bytes(s, n, sizeof(T));
  p.allocate();
}

template <class T>
std::size_t LargeTridiagonalPlan<T>::Impl::pivot_bytes() const {
  const LineSet l{n, 1, count, stride, 1, 0};
  if (exec.is_host())
    return cpu::workspace_bytes(Kernel::cpu_pivoting, l, options.periodic, exec.threads(), sizeof(T),
                                Pivoting::partial);
  return cuda_backend::tridiagonal_workspace_bytes(Kernel::cuda_pivoting, l, options.periodic, sizeof(T));
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::allocate() {
  if (count == 0) return;
  if (options.allocate_workspace) workspace = detail::Storage(ws_bytes, exec);
  if (exec.is_cuda()) flag_dev = detail::Storage(sizeof(unsigned long long), exec);  // zeroed
  if (options.pivoting == Pivoting::partial) pivot_ws = detail::Storage(pivot_bytes(), exec);
}

template <class T>
LargeTridiagonalPlan<T>::LargeTridiagonalPlan(const Executor& exec, const StridedLines& l,
                                              LargeTridiagonalOptions o)
    : LargeTridiagonalPlan(exec, (to_lines(l), l.n), l.count, l.count > 1 ? l.line_stride : l.n, o) {
  detail::require(l.element_stride == 1, "LargeTridiagonalPlan: element_stride = " +
                                             detail::number(l.element_stride) +
                                             " must be 1 (use TridiagonalPlan for strided lines)");
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::check_pointers(const T* a, const T* b, const T* c, bool shared, const T* d,
                                                   const T* u) const {
  const index_t span = count == 0 ? 0 : (count - 1) * stride + n;
  const index_t band_span = shared ? n : span;
  const struct {
    const T* p;
    const char* name;
    index_t span;
  } ptrs[] = {{a, "a", band_span}, {b, "b", band_span}, {c, "c", band_span}, {d, "d", span}, {u, "u", span}};
  for (const auto& q : ptrs) {
    if (q.p == nullptr)
      throw InvalidArgument(std::string("large tridiagonal solve: pointer ") + q.name +
                            " is null; pass an array of " + detail::number(q.span) + " values");
    if (reinterpret_cast<std::uintptr_t>(q.p) % alignof(T) != 0)
      throw InvalidArgument(std::string("large tridiagonal solve: pointer ") + q.name + " is not aligned to " +
                            detail::number(alignof(T)) + " bytes");
    const bool on_device = cuda_backend::is_device_pointer(q.p);
    if (on_device != exec.is_cuda())
      throw InvalidArgument(std::string("large tridiagonal solve: array ") + q.name + " is in " +
                            (on_device ? "device" : "host") + " memory but the executor is " + exec.name() +
                            "; pass " + where(exec) + " arrays or change the executor");
  }
  if (u != d && detail::arrays_overlap(u, span, d, span))
    throw InvalidArgument("large tridiagonal solve: u and d overlap without being equal; pass u == d for an "
                          "in-place solve or separate arrays");
  const struct {
    const T* p;
    const char* name;
  } bands[] = {{a, "a"}, {b, "b"}, {c, "c"}};
  for (const auto& q : bands)
    if (detail::arrays_overlap(u, span, q.p, band_span))
      throw InvalidArgument(std::string("large tridiagonal solve: u overlaps ") + q.name +
                            "; a, b and c are left intact, so u must be d or a separate array");
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::run(const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
                                        void* ws, std::size_t bytes) {
  check_pointers(a, b, c, shared, d, u);
  if (count == 0) return;
  if (ws == nullptr) {
    detail::require(options.allocate_workspace,
                    "large tridiagonal solve: the plan was built with allocate_workspace = false; pass a "
                    "workspace of workspace_bytes() = " + detail::number(ws_bytes) +
                        " bytes to solve(), or build the plan with allocate_workspace = true");
    ws = workspace.get();
  } else {
    detail::require(bytes >= ws_bytes, "large tridiagonal solve: workspace of " + detail::number(bytes) +
                                           " bytes is smaller than workspace_bytes() = " +
                                           detail::number(ws_bytes));
    detail::require(reinterpret_cast<std::uintptr_t>(ws) % 64 == 0,
                    "large tridiagonal solve: workspace must be aligned to 64 bytes");
    const bool on_device = cuda_backend::is_device_pointer(ws);
    detail::require(on_device == exec.is_cuda(), "large tridiagonal solve: workspace is in " +
                                                     std::string(on_device ? "device" : "host") +
                                                     " memory but the executor is " + exec.name());
  }
  if (options.pivoting == Pivoting::partial) {
    pivot(a, b, c, shared, d, u);
    return;
  }
  (this->*solve_backend)(a, b, c, shared, d, u, ws);
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::unstable(index_t s, index_t row, bool near) const {
  const bool fallback = options.pivoting == Pivoting::automatic;
  throw UnstableSystem("large tridiagonal solve (" + std::string(large_kernel_name(kernel)) +
                           "): zero pivot, or the partition's elimination fails the stability check, at " +
                           (near ? "(or, in the reduced interface system, near) " : "") + "row " +
                           detail::number(row) + " of system " + detail::number(s) +
                           (fallback ? "; the in-place solve overwrote d, so it cannot be re-solved with pivoting: "
                                       "pass u != d or set LargeTridiagonalOptions::pivoting to partial"
                                     : "; set LargeTridiagonalOptions::pivoting to automatic or partial "
                                       "(docs/pivoting.md)"),
                       s, row);
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::solve_host(const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
                                               void* ws) {
  const index_t band_step = shared ? 0 : stride;
  const bool fallback = options.pivoting == Pivoting::automatic;
  for (index_t s = 0; s < count; ++s) {
    const cpu::large::System<T> sys{a + s * band_step, b + s * band_step, c + s * band_step, d + s * stride,
                                    u + s * stride, n};
    const cpu::large::Failure f = cpu::large::solve<T>(settings, sys, ws);
    if (f.failed() && fallback) {
      if (d == u) unstable(s, f.row);
      pivot(a, b, c, shared, d, u);  // every system: simple, and only on failure
      return;
    }
    if (f.failed() && options.check_pivots && options.pivoting == Pivoting::none && options.pivot_tolerance == 0)
      unstable(s, f.row);
    if (f.failed() && options.check_pivots)
      throw SingularSystem("large tridiagonal solve (" + std::string(large_kernel_name(kernel)) +
                               "): zero or tiny pivot at row " + detail::number(f.row) + " of system " +
                               detail::number(s) + " (" + f.stage +
                               (f.level > 0 ? ", reduced level " + detail::number(f.level) : std::string()) +
                               "); the system is singular or not diagonally dominant enough for a solver "
                               "without pivoting" +
                               (options.periodic ? " (periodic: Sherman-Morrison also needs b[0] != 0)" : ""),
                           s, f.row);
  }
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::solve_cuda(const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
                                               void* ws) {
  const index_t band_step = shared ? 0 : stride;
  const bool fallback = options.pivoting == Pivoting::automatic;
  cuda_backend::DeviceGuard device_guard(exec.device());
  const unsigned long long total = static_cast<unsigned long long>(count) * static_cast<unsigned long long>(n);
  const bool checked = options.check_pivots || fallback;
  if (kernel == LargeKernel::truncated && d != u) {
    // [2] of flags_host: the kernel's refusal
    if (cuda_truncated_systems<T>(
            exec, count, n, a, b, c, d, u, [&](index_t s) { return s * band_step; },
            [&](index_t s) { return s * stride; }, reinterpret_cast<int*>(flags_host.get() + 2)))
      return;
    // Refused: the partition solves again; automatic's plan keeps it from now on (a refusal costs a
    // pass, and the next systems of a plan are usually alike: weakly dominant ones are refused each time).
    if (options.kernel == LargeKernel::automatic) kernel = LargeKernel::partition;
  }
  auto* flag = checked ? static_cast<unsigned long long*>(flag_dev.get()) : nullptr;
  if (fallback && d != u && device_fallback) {
    // Stop 37 (opt-in): the fall-back decided on the device. Nothing is waited for unless
    // check_pivots asks for the fall-back's zero pivots (then one synchronisation, as
    // TridiagonalPlan's ADI_PIVOTING_FALLBACK=device). Its scratch from the first solve on.
    const std::size_t bytes = pivot_bytes();
    if (pivot_ws.bytes() < bytes) pivot_ws = detail::Storage(bytes, exec);
    int* pflag = options.check_pivots ? reinterpret_cast<int*>(flags_host.get() + 1) : nullptr;
    if (pflag) *pflag = 0;  // no kernel can be writing it: every solve with check_pivots ends synchronised
    if (cuda_backend::large_solve_device_fallback<T>(fallback_cache.get(), count, n, stride, band_step, a, b, c, d, u,
                                                     options.periodic, cuda_chunk, options.pivot_tolerance, ws, flag,
                                                     pivot_ws.get(), pflag, exec.stream())) {
      if (pflag == nullptr) return;
      cuda_backend::synchronize(exec.stream());
      if (*pflag != 0) singular_fallback(a, b, c, shared, d, u);
      return;
    }
  }
  const unsigned long long h = cuda_partition_systems<T>(
      exec, count, n, a, b, c, d, u, [&](index_t s) { return s * band_step; }, [&](index_t s) { return s * stride; },
      options.periodic, cuda_chunk, options.pivot_tolerance, ws, flag, flags_host.get());
  if (h == 0) return;
  const unsigned long long pos = total - h;
  if (fallback) {
    if (d == u) unstable(index_t(pos / n), index_t(pos % n), true);
    pivot(a, b, c, shared, d, u);
    return;
  }
  // As on the host: without a pivot tolerance the flag is a zero pivot or the growth test.
  if (options.pivoting == Pivoting::none && options.pivot_tolerance == 0)
    unstable(index_t(pos / n), index_t(pos % n), true);
  if (options.check_pivots)
    throw SingularSystem("large tridiagonal solve (" + std::string(large_kernel_name(kernel)) + ", " + exec.name() +
                             "): zero or tiny pivot at (or, in the reduced interface system, near) row " +
                             detail::number(pos % n) + " of system " + detail::number(pos / n) +
                             "; the system is singular or not diagonally dominant enough for a solver "
                             "without pivoting",
                         index_t(pos / n), index_t(pos % n));
}

// The pivoting route: the systems as a LineSet of stride-1 lines, the batched pivoting kernels.
template <class T>
void LargeTridiagonalPlan<T>::Impl::pivot_host(const T* a, const T* b, const T* c, bool shared, const T* d,
                                               T* u) {
  const LineSet l{n, 1, count, stride, 1, 0};
  const std::size_t bytes = pivot_bytes();
  if (pivot_ws.bytes() < bytes) pivot_ws = detail::Storage(bytes, exec);  // automatic: the failure path
  cpu::solve<T>(Kernel::cpu_pivoting, l, cpu::BandView<T>{a, b, c, shared}, d, u, options.periodic,
                options.check_pivots, pivot_ws.get(), exec.threads(), Pivoting::partial);
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::pivot_cuda(const T* a, const T* b, const T* c, bool shared, const T* d,
                                               T* u) {
  const LineSet l{n, 1, count, stride, 1, 0};
  cuda_backend::DeviceGuard device_guard(exec.device());
  const std::size_t bytes = pivot_bytes();
  if (pivot_ws.bytes() < bytes) pivot_ws = detail::Storage(bytes, exec);  // automatic: the failure path
  int* flag = options.check_pivots ? reinterpret_cast<int*>(flags_host.get() + 1) : nullptr;
  if (flag) *flag = 0;  // no kernel can be writing it: every checked solve ends synchronised
  cuda_backend::tridiagonal_solve<T>(Kernel::cuda_pivoting, l, cuda_backend::BandView<T>{a, b, c, shared}, d, u,
                                     options.periodic, pivot_ws.get(), flag, exec.stream());
  if (flag) {
    cuda_backend::synchronize(exec.stream());
    if (*flag != 0) singular_fallback(a, b, c, shared, d, u);
  }
}

template <class T>
void LargeTridiagonalPlan<T>::Impl::singular_fallback(const T* a, const T* b, const T* c, bool shared, const T* d,
                                                      const T* u) const {
  const LineSet l{n, 1, count, stride, 1, 0};
  const detail::FailedRow f =
      u == d ? detail::FailedRow{}
             : detail::locate_failure(exec, l, a, b, c, shared, d, options.periodic, Pivoting::partial);
  throw SingularSystem("large tridiagonal solve (partial pivoting, " + exec.name() + "): zero pivot" +
                           (f.system < 0 ? std::string()
                                         : " at row " + detail::number(f.row) + " of system " +
                                               detail::number(f.system)) +
                           ": a system is singular",
                       f.system, f.row);
}

template <class T>
LargeTridiagonalPlan<T>::~LargeTridiagonalPlan() = default;
template <class T>
LargeTridiagonalPlan<T>::LargeTridiagonalPlan(LargeTridiagonalPlan&&) noexcept = default;
template <class T>
LargeTridiagonalPlan<T>& LargeTridiagonalPlan<T>::operator=(LargeTridiagonalPlan&&) noexcept = default;

template <class T>
void LargeTridiagonalPlan<T>::solve(const Bands<T>& bd, const T* d, T* u) {
  impl_->run(bd.a, bd.b, bd.c, false, d, u, nullptr, 0);
}
template <class T>
void LargeTridiagonalPlan<T>::solve(const SharedBands<T>& bd, const T* d, T* u) {
  impl_->run(bd.a, bd.b, bd.c, true, d, u, nullptr, 0);
}
template <class T>
void LargeTridiagonalPlan<T>::solve(const Bands<T>& bd, const T* d, T* u, void* ws, std::size_t bytes) {
  detail::require(ws != nullptr, "large tridiagonal solve: workspace is null; pass workspace_bytes() bytes");
  impl_->run(bd.a, bd.b, bd.c, false, d, u, ws, bytes);
}
template <class T>
void LargeTridiagonalPlan<T>::solve(const SharedBands<T>& bd, const T* d, T* u, void* ws, std::size_t bytes) {
  detail::require(ws != nullptr, "large tridiagonal solve: workspace is null; pass workspace_bytes() bytes");
  impl_->run(bd.a, bd.b, bd.c, true, d, u, ws, bytes);
}

template <class T>
std::size_t LargeTridiagonalPlan<T>::workspace_bytes() const {
  return impl_->ws_bytes;
}
template <class T>
std::size_t LargeTridiagonalPlan<T>::cached_workspace_bytes() const {
  return impl_->workspace.bytes();
}
template <class T>
LargeKernel LargeTridiagonalPlan<T>::kernel() const {
  return impl_->kernel;
}
template <class T>
int LargeTridiagonalPlan<T>::pcr_levels() const {
  return impl_->k;
}
template <class T>
int LargeTridiagonalPlan<T>::chunk() const {
  if (impl_->kernel != LargeKernel::partition) return 0;
  return impl_->exec.is_cuda() ? impl_->cuda_chunk : impl_->settings.chunk;
}
template <class T>
int LargeTridiagonalPlan<T>::lanes() const {
  return impl_->exec.is_host() && impl_->kernel == LargeKernel::partition ? impl_->settings.lanes : 0;
}
template <class T>
index_t LargeTridiagonalPlan<T>::n() const {
  return impl_->n;
}
template <class T>
index_t LargeTridiagonalPlan<T>::count() const {
  return impl_->count;
}
template <class T>
const Executor& LargeTridiagonalPlan<T>::executor() const {
  return impl_->exec;
}
template <class T>
const LargeTridiagonalOptions& LargeTridiagonalPlan<T>::options() const {
  return impl_->options;
}

template class LargeTridiagonalPlan<float>;
template class LargeTridiagonalPlan<double>;

namespace detail {

namespace {
cpu::large::Settings default_host_settings(const Executor& exec, bool periodic, std::size_t vs) {
  cpu::large::Settings s;
  s.variant = LargeKernel::partition;
  s.periodic = periodic;
  s.chunk = cpu::large::default_chunk(vs);
  s.lanes = cpu::large::default_lanes(vs);
  s.threads = exec.threads();
  return s;
}
}  // namespace

std::size_t large_lines_workspace_bytes(const Executor& exec, const LineSet& lines, bool periodic,
                                        std::size_t vs) {
  if (exec.is_host()) return cpu::large::workspace_bytes(default_host_settings(exec, periodic, vs), lines.n, vs);
  return kFlagBytes +
         cuda_backend::large_workspace_bytes(lines.n, periodic, cuda_backend::large_default_chunk(vs), vs);
}

// fp32 only in the window form (the default since stop 51): stop 44's single-system kernel was slower than
// the partition in fp32 on an H200, the windows 1.8x faster (run s51/7, 2^24: 0.139 against 0.249 ms).
bool large_truncated_applies(const Executor& exec, index_t n, std::size_t value_size, bool periodic) {
  return exec.is_cuda() && (value_size == 8 || cuda_backend::large_truncated_windows()) && !periodic &&
         n >= cuda_backend::large_truncated_min_rows() && n <= cuda_backend::large_truncated_max_rows() &&
         env_int("ADI_LARGE_TRUNCATED", 0, 1, 1) == 1;
}

template <class T>
void large_lines_solve(const Executor& exec, const LineSet& l, const T* a, const T* b, const T* c, bool shared,
                       const T* d, T* u, bool periodic, bool check_pivots, void* ws, unsigned long long* report,
                       bool* truncated) {
  const index_t lines = l.lines();
  auto fail = [&](index_t line, index_t row, const std::string& stage) {
    throw SingularSystem("tridiagonal solve (large-system partition): zero or tiny pivot at row " +
                         detail::number(row) + " of line " + detail::number(line) + " (l0 = " +
                         detail::number(line % l.count0) + ", l1 = " + detail::number(line / l.count0) + ")" +
                         stage + "; the system is singular or not diagonally dominant enough for a solver "
                         "without pivoting", line, row);
  };
  if (exec.is_host()) {
    const cpu::large::Settings s = default_host_settings(exec, periodic, sizeof(T));
    for (index_t line = 0; line < lines; ++line) {
      const index_t o = l.offset(line), ob = shared ? 0 : o;
      const cpu::large::Failure f = cpu::large::solve<T>(s, {a + ob, b + ob, c + ob, d + o, u + o, l.n}, ws);
      if (f.failed() && check_pivots) fail(line, f.row, std::string(" (") + f.stage + ")");
    }
    return;
  }
  cuda_backend::DeviceGuard device_guard(exec.device());
  auto band = [&](index_t s) { return shared ? index_t(0) : l.offset(s); };
  auto off = [&](index_t s) { return l.offset(s); };
  if (truncated != nullptr && *truncated && check_pivots && d != u && report != nullptr) {
    // The truncated sweeps first; report[1]: their refusal.
    if (cuda_truncated_systems<T>(exec, lines, l.n, a, b, c, d, u, band, off, reinterpret_cast<int*>(report + 1)))
      return;
    *truncated = false;  // refused: the partition below, and from now on
  }
  // The flag word at the workspace's start: zeroed with the plan's workspace, and after a
  // failure by the kernel that publishes it into `report` (cuda_partition_systems; until stop
  // 33 a memset before each solve and a copy back after it).
  auto* flag = check_pivots ? static_cast<unsigned long long*>(ws) : nullptr;
  void* kws = static_cast<char*>(ws) + kFlagBytes;
  const int chunk = cuda_backend::large_default_chunk(sizeof(T));
  const unsigned long long total = static_cast<unsigned long long>(lines) * static_cast<unsigned long long>(l.n);
  const unsigned long long h =
      cuda_partition_systems<T>(exec, lines, l.n, a, b, c, d, u, band, off, periodic, chunk, 0.0, kws, flag, report);
  if (h != 0) {
    const unsigned long long pos = total - h;
    fail(static_cast<index_t>(pos / l.n), static_cast<index_t>(pos % l.n), " (or near it, on the device)");
  }
}

template void large_lines_solve<float>(const Executor&, const LineSet&, const float*, const float*, const float*,
                                       bool, const float*, float*, bool, bool, void*, unsigned long long*, bool*);
template void large_lines_solve<double>(const Executor&, const LineSet&, const double*, const double*,
                                        const double*, bool, const double*, double*, bool, bool, void*,
                                        unsigned long long*, bool*);

}  // namespace detail

}  // namespace adi
