#include "adi/tridiagonal.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "adi/detail/host_team.hpp"
#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/detail/tridiagonal_stage.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"
#include "adi/large_tridiagonal.hpp"
#include "solvers/common/stage_rhs_core.hpp"
#include "solvers/cpu/tridiagonal_cpu.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace {
constexpr const char* kPivotingNames[] = {"automatic", "none", "partial"};
}  // namespace

const char* pivoting_name(Pivoting p) {
  const int i = static_cast<int>(p);
  return i >= 0 && i < 3 ? kPivotingNames[i] : "unknown";
}

Pivoting pivoting_from_name(const std::string& name) {
  for (int i = 0; i < 3; ++i)
    if (name == kPivotingNames[i]) return static_cast<Pivoting>(i);
  throw InvalidArgument("unknown pivoting '" + name + "'; expected one of: automatic, none, partial");
}

Kernel kernel_from_name(const std::string& name) {
  std::string all;
  for (const auto& e : detail::kKernelNames) {
    if (name == e.name) return e.kernel;
    all += all.empty() ? "" : ", ";
    all += e.name;
  }
  throw InvalidArgument("unknown tridiagonal kernel '" + name + "'; expected one of: " + all);
}

namespace detail {
template <class T>
FailedRow locate_failure(const Executor& exec, const LineSet& l, const T* a, const T* b, const T* c, bool shared,
                         const T* d, bool periodic, Pivoting pivoting) {
  try {
    const index_t span = checked_span(l, "locate_failure");
    const index_t band = shared ? l.n : span;
    std::vector<T> ha(static_cast<std::size_t>(band)), hb(ha.size()), hc(ha.size());
    std::vector<T> hd(static_cast<std::size_t>(span)), hu(hd.size());
    const MemorySpace m = exec.memory_space();
    void* stream = exec.is_cuda() ? exec.stream() : nullptr;
    copy_bytes(ha.data(), MemorySpace::host, a, m, ha.size() * sizeof(T), stream);
    copy_bytes(hb.data(), MemorySpace::host, b, m, hb.size() * sizeof(T), stream);
    copy_bytes(hc.data(), MemorySpace::host, c, m, hc.size() * sizeof(T), stream);
    copy_bytes(hd.data(), MemorySpace::host, d, m, hd.size() * sizeof(T), stream);
    const Kernel k = pivoting == Pivoting::partial ? Kernel::cpu_pivoting : Kernel::reference;
    const Pivoting p = pivoting == Pivoting::partial ? Pivoting::partial : Pivoting::none;
    Storage ws(cpu::workspace_bytes(k, l, periodic, 1, sizeof(T), p), Executor::host());
    cpu::solve<T>(k, l, cpu::BandView<T>{ha.data(), hb.data(), hc.data(), shared}, hd.data(), hu.data(), periodic,
                  true, ws.get(), 1, p);
  } catch (const SingularSystem& e) {
    return FailedRow{e.system(), e.row()};
  } catch (const Error&) {  // the report stays without position rather than failing differently
  }
  return FailedRow{};
}
template FailedRow locate_failure<float>(const Executor&, const LineSet&, const float*, const float*, const float*,
                                         bool, const float*, bool, Pivoting);
template FailedRow locate_failure<double>(const Executor&, const LineSet&, const double*, const double*,
                                          const double*, bool, const double*, bool, Pivoting);
}  // namespace detail

template <class T>
struct TridiagonalPlan<T>::Impl {
  Executor exec = Executor::host();
  // The caller's lines (lines(), the stage entry) and the same lines as the kernels solve them
  // (merged_line_indices: one run where the outer index continues the inner; the array path's
  // dispatch, workspace and launches).
  LineSet user_lines, lines;
  TridiagonalOptions options;
  Kernel kernel = Kernel::automatic;
  Kernel kernel_shared = Kernel::automatic;  // the choice may differ for shared bands
  // cuda_thomas_truncated's re-solve where a line is refused (run_cuda): the table's exact kernel.
  Kernel exact = Kernel::automatic;
  Kernel exact_shared = Kernel::automatic;
  // Chosen by automatic (not by name): after a solve where a line was refused, the plan stays on
  // the exact kernel (one re-solve a plan at most; kernel() then reports the exact kernel).
  bool truncated_refused = false, truncated_refused_shared = false;
  // ADI_TRUNCATED_UNCHECKED=1 with check_pivots off (stop 43, opt-in until measured): the truncated
  // sweeps without a synchronisation; where a line is refused the batch is re-solved on the device
  // by the gated pivoting kernel (run_cuda).
  bool truncated_unchecked = false;
  detail::Storage workspace;
  detail::Storage pivot_flag;  // CUDA only: a device int, the gate of the device-side fall-back
  // CUDA only: the flags the kernels write directly (pinned host memory; run_cuda).
  struct PinnedFree {
    template <class Q>
    void operator()(Q* q) const noexcept {
      cuda_backend::pinned_free(q);
    }
  };
  std::unique_ptr<int, PinnedFree> flags_host;
  // CUDA, the large-system route (run_large): the pinned word its check is published into.
  std::unique_ptr<unsigned long long, PinnedFree> large_report;
  // The few-long-lines route (Kernel::large_partition) on CUDA: the truncated sweeps first (fp64 lines of
  // 2^21 .. 2^29 rows, as LargeTridiagonalPlan's automatic), until a batch is refused.
  bool large_truncated = false;
  bool device_fallback = false;  // ADI_PIVOTING_FALLBACK=device (measurement; run_cuda)
  detail::TeamTuner team;      // host threads per solve (adi/detail/host_team.hpp)
  detail::Storage fallback_ws;  // automatic: the pivoting fall-back's scratch, allocated on first use
  T fallback_probe{};
  KernelMeasurement measurement;  // options.measure
  // options.stages: the ADI stage's kernel and (CUDA) its launch, decided in the constructor.
  Kernel kernel_stage = Kernel::automatic;
  cuda_backend::FusedLaunch stage_launch;
  std::vector<T> stage_rhs, stage_a, stage_b, stage_c;  // host: one line's right-hand side, the bands

  // The backend, chosen once in the constructor from the executor and the kernel (one for
  // per-line bands, one for shared bands): solves every line of validated arguments with
  // kernel k. The large-system partition's fall-back to partial pivoting, likewise.
  using Run = void (*)(Impl&, Kernel k, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  using Pivot = void (*)(Impl&, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  Run run = nullptr;
  Run run_shared = nullptr;
  Pivot pivot = nullptr;

  void check_pointers(const T* a, const T* b, const T* c, const T* d, const T* u, bool shared) const;
  // Validates, then solves through the backend.
  void solve(const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  static Run backend(const Executor& exec, Kernel k) {
    if (k == Kernel::large_partition) return &Impl::run_large;
    return exec.is_host() ? &Impl::run_host : &Impl::run_cuda;
  }
  static void run_host(Impl& p, Kernel k, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  static void run_cuda(Impl& p, Kernel k, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  static void run_large(Impl& p, Kernel k, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  static void pivot_host(Impl& p, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  static void pivot_cuda(Impl& p, const T* a, const T* b, const T* c, bool shared, const T* d, T* u);
  void prepare_stage();
  void stage_host(const detail::TridiagonalStage<T>& st);
};

namespace {
std::string where(const Executor& e) { return e.is_host() ? "host" : "device"; }
}  // namespace

template <class T>
void TridiagonalPlan<T>::Impl::check_pointers(const T* a, const T* b, const T* c, const T* d,
                                              const T* u, bool shared) const {
  const struct {
    const T* p;
    const char* name;
  } ptrs[] = {{a, "a"}, {b, "b"}, {c, "c"}, {d, "d"}, {u, "u"}};
  for (const auto& q : ptrs) {
    if (q.p == nullptr)
      throw InvalidArgument(std::string("tridiagonal solve: pointer ") + q.name +
                            " is null; pass an array of the layout's span (" +
                            detail::number(lines.span()) + " values)");
    if (reinterpret_cast<std::uintptr_t>(q.p) % alignof(T) != 0)
      throw InvalidArgument(std::string("tridiagonal solve: pointer ") + q.name + " is not aligned to " +
                            detail::number(alignof(T)) + " bytes");
    const bool on_device = cuda_backend::is_device_pointer(q.p);
    if (on_device != exec.is_cuda())
      throw InvalidArgument(std::string("tridiagonal solve: array ") + q.name + " is in " +
                            (on_device ? "device" : "host") + " memory but the executor is " + exec.name() +
                            "; pass " + where(exec) + " arrays or change the executor");
  }
  // u must not overlap the coefficients: a kernel may read a, b, c after writing u.
  const index_t band_span = shared ? lines.n : lines.span();
  for (const auto& q : {ptrs[0], ptrs[1], ptrs[2]})
    if (detail::arrays_overlap(u, lines.span(), q.p, band_span))
      throw InvalidArgument(std::string("tridiagonal solve: u overlaps the coefficient array ") + q.name +
                            "; the solution needs an array of its own (or u == d for an in-place solve)");
  // Different arrays must not overlap: the kernels read d after writing u.
  if (d != u && detail::arrays_overlap(d, lines.span(), u, lines.span()))
    throw InvalidArgument("tridiagonal solve: u and d overlap without being equal; pass u == d for an "
                          "in-place solve or separate arrays");
}

template <class T>
void TridiagonalPlan<T>::Impl::solve(const T* a, const T* b, const T* c, bool shared, const T* d, T* u) {
  check_pointers(a, b, c, d, u, shared);
  if (lines.lines() == 0) return;
  if (shared)
    run_shared(*this, kernel_shared, a, b, c, true, d, u);
  else
    run(*this, kernel, a, b, c, false, d, u);
}

// The large-system partition (few long lines, either executor; adi/large_tridiagonal.cpp).
// It does not pivot: with pivoting = automatic a failing batch is solved again by the
// executor's batched pivoting kernel.
template <class T>
void TridiagonalPlan<T>::Impl::run_large(Impl& p, Kernel, const T* a, const T* b, const T* c, bool shared,
                                         const T* d, T* u) {
  const TridiagonalOptions& o = p.options;
  const bool fallback = o.pivoting == Pivoting::automatic;
  try {
    detail::large_lines_solve<T>(p.exec, p.lines, a, b, c, shared, d, u, o.periodic, o.check_pivots || fallback,
                                 p.workspace.get(), p.large_report.get(), &p.large_truncated);
  } catch (const SingularSystem& e) {
    // pivoting = none: the partition's failure is a zero pivot or its growth test (on the
    // device too since stop 31), so it is reported as every Thomas kernel of this plan reports
    // it: UnstableSystem (a SingularSystem), naming the option to change.
    if (!fallback)
      throw UnstableSystem(std::string(e.what()) + "; set TridiagonalOptions::pivoting to automatic or partial",
                           e.system(), e.row());
    if (u == d)
      throw UnstableSystem(std::string(e.what()) + "; the in-place solve overwrote d, so it cannot be re-solved "
                           "with pivoting: pass u != d or set TridiagonalOptions::pivoting to partial",
                           e.system(), e.row());
    p.pivot(p, a, b, c, shared, d, u);
  }
}

// The fall-back's kernel, its scratch on first use.
template <class T>
void TridiagonalPlan<T>::Impl::pivot_host(Impl& p, const T* a, const T* b, const T* c, bool shared, const T* d,
                                          T* u) {
  const TridiagonalOptions& o = p.options;
  const Kernel pk = Kernel::cpu_pivoting;
  const std::size_t bytes =
      cpu::workspace_bytes(pk, p.lines, o.periodic, p.exec.threads(), sizeof(T), Pivoting::partial);
  if (p.fallback_ws.bytes() < bytes) p.fallback_ws = detail::Storage(bytes, p.exec);
  cpu::solve<T>(pk, p.lines, cpu::BandView<T>{a, b, c, shared}, d, u, o.periodic, o.check_pivots,
                p.fallback_ws.get(), p.exec.threads(), Pivoting::partial);
}

template <class T>
void TridiagonalPlan<T>::Impl::pivot_cuda(Impl& p, const T* a, const T* b, const T* c, bool shared, const T* d,
                                          T* u) {
  const TridiagonalOptions& o = p.options;
  const Kernel pk = Kernel::cuda_pivoting;
  const std::size_t bytes = cuda_backend::tridiagonal_workspace_bytes(pk, p.lines, o.periodic, sizeof(T));
  if (p.fallback_ws.bytes() < bytes) p.fallback_ws = detail::Storage(bytes, p.exec);
  cuda_backend::DeviceGuard device_guard(p.exec.device());
  cuda_backend::tridiagonal_solve<T>(pk, p.lines, cuda_backend::BandView<T>{a, b, c, shared}, d, u, o.periodic,
                                     p.fallback_ws.get(), nullptr, p.exec.stream());
  cuda_backend::copy_on_stream(&p.fallback_probe, u, sizeof(T), cuda_backend::Copy::device_to_host,
                               p.exec.stream());  // waits, like a checked solve
}

template <class T>
void TridiagonalPlan<T>::Impl::run_host(Impl& p, Kernel k, const T* a, const T* b, const T* c, bool shared,
                                        const T* d, T* u) {
  detail::TeamScope scope(p.team);
  cpu::solve<T>(k, p.lines, cpu::BandView<T>{a, b, c, shared}, d, u, p.options.periodic, p.options.check_pivots,
                p.workspace.get(), scope.team(), p.options.pivoting);
}

template <class T>
void TridiagonalPlan<T>::Impl::run_cuda(Impl& p, Kernel k, const T* a, const T* b, const T* c, bool shared,
                                        const T* d, T* u) {
  const Executor& exec = p.exec;
  const LineSet& lines = p.lines;
  const TridiagonalOptions& options = p.options;
  void* const stream = exec.stream();
  cuda_backend::DeviceGuard device_guard(exec.device());
  int* const host = p.flags_host.get();
  const cuda_backend::BandView<T> bv{a, b, c, shared};
  if (k == Kernel::cuda_thomas_truncated) {
    // Truncated sweeps: their answer is kept where every line's truncations pass the check (the
    // kernel writes host[2], pinned, where a line is refused: one synchronisation a solve, with
    // check_pivots on or off); otherwise every line is solved again below by the exact kernel
    // (and its own checks). In place (u == d) the exact kernel alone: a part reads d past its
    // ends, which its neighbours' u overwrite.
    // Chosen by automatic, a plan that has seen a line refused stays on the exact kernel.
    bool& refused = shared ? p.truncated_refused_shared : p.truncated_refused;
    if (u != d && !refused && p.truncated_unchecked) {  // (truncated_unchecked: check_pivots off)
      // Unchecked (ADI_TRUNCATED_UNCHECKED=1): nothing read back. The pivoting kernel is enqueued
      // behind the truncated sweeps, its blocks returning at once unless a part was refused
      // (cuda_backend::pivoting_fallback_solve, the gate in pinned memory the truncated kernel
      // writes); its answer overwrites every line then. Chosen by automatic, the gate is host[2]
      // and never cleared (only ever raised, so no solve in flight can miss its own refusal): the
      // host sees it at a later solve and the plan stays on the exact kernel from then on; one
      // gate for both band kinds, so a refusal of either moves both. A plan by name: the device
      // flag, cleared on the stream before each solve (no stickiness, nothing seen by the host).
      const bool by_name = options.kernel != Kernel::automatic;
      volatile int* seen = host + 2;
      if (by_name || *seen == 0) {
        int* g = by_name ? static_cast<int*>(p.pivot_flag.get()) : host + 2;
        if (by_name) cuda_backend::memset_zero_async(g, sizeof(int), stream);
        cuda_backend::tridiagonal_solve<T>(k, lines, bv, d, u, false, nullptr, g, stream);
        if (cuda_backend::pivoting_fallback_solve<T>(lines, bv, d, u, false, p.fallback_ws.get(), g, nullptr, stream))
          return;
        // A route that cannot be gated (nothing enqueued): decided on the host.
        int refused_here = 0;
        if (by_name) {
          cuda_backend::copy_on_stream(&refused_here, g, sizeof(int), cuda_backend::Copy::device_to_host, stream);
        } else {
          cuda_backend::synchronize(stream);
          refused_here = *seen;
        }
        if (refused_here == 0) return;
      }
      refused = !by_name;
    } else if (u != d && !refused) {
      host[2] = 0;
      cuda_backend::tridiagonal_solve<T>(k, lines, bv, d, u, false, nullptr, host + 2, stream);
      cuda_backend::synchronize(stream);
      if (host[2] == 0) return;
      refused = options.kernel == Kernel::automatic;
    }
    k = shared ? p.exact_shared : p.exact;
  }
  const bool pivots = k == Kernel::cuda_pivoting;
  const bool automatic = options.pivoting == Pivoting::automatic && !pivots;
  // The flags live in pinned host memory that the kernels write directly (host[0]: the
  // solve's check, host[1]: the fall-back's pivots), so reading them costs the
  // synchronisation only: no memset, no copy (until stop 29 a device int, cleared by a
  // memset and copied back to pageable memory: ~15 us a solve, 10-12% of a 256^3 fp32 one).
  // No kernel of this plan can be writing them here: every checked solve ends synchronised.
  const std::string who = "tridiagonal solve (" + std::string(kernel_name(k)) + "): ";
  auto at = [](const detail::FailedRow& f) {
    return f.system < 0 ? std::string()
                        : " at row " + detail::number(f.row) + " of line " + detail::number(f.system);
  };
  auto singular = [&](const char* how) {
    const detail::FailedRow f =
        u == d ? detail::FailedRow{}
               : detail::locate_failure(exec, lines, a, b, c, shared, d, options.periodic, Pivoting::partial);
    return SingularSystem(who + "zero or non-finite pivot with partial pivoting" + how + at(f) +
                              ": the system is singular",
                          f.system, f.row);
  };
  // The fall-back's scratch (2-4 values per element), allocated when first needed.
  auto fallback_ws = [&] {
    const std::size_t bytes =
        cuda_backend::tridiagonal_workspace_bytes(Kernel::cuda_pivoting, lines, options.periodic, sizeof(T));
    if (p.fallback_ws.bytes() < bytes) p.fallback_ws = detail::Storage(bytes, exec);
    return p.fallback_ws.get();
  };
  host[0] = host[1] = 0;

  // For measurement (ADI_PIVOTING_FALLBACK=device when the plan is made): automatic out of
  // place falls back on the device. The pivoting kernel is enqueued right behind the Thomas
  // kernel whatever that finds, its blocks returning at once while the Thomas kernel's
  // device flag is zero (cuda_backend::pivoting_fallback_solve): the pivoted answer needs
  // no read-back, so it comes with check_pivots off too, at the price of a memset, an empty
  // launch and the fall-back's scratch from the first solve on. With check_pivots the
  // fall-back's pivots are read as below. Routes that cannot be gated (the partition route
  // for few long lines, forced routes) enqueue nothing and decide on the host.
  if (automatic && u != d && p.device_fallback) {
    void* ws = fallback_ws();
    int* gate = static_cast<int*>(p.pivot_flag.get());
    cuda_backend::memset_zero_async(gate, sizeof(int), stream);
    cuda_backend::tridiagonal_solve<T>(k, lines, bv, d, u, options.periodic, p.workspace.get(), gate, stream);
    if (cuda_backend::pivoting_fallback_solve<T>(lines, bv, d, u, options.periodic, ws, gate,
                                                 options.check_pivots ? host + 1 : nullptr, stream)) {
      if (!options.check_pivots) return;
      cuda_backend::synchronize(stream);
      if (host[1] != 0) throw singular(" (cuda_pivoting, automatic's fall-back on the device)");
      return;
    }
    if (!options.check_pivots) return;
    cuda_backend::copy_on_stream(host, gate, sizeof(int), cuda_backend::Copy::device_to_host, stream);
  } else {
    // check_pivots off: no flag and no synchronisation, so no fall-back either (measured
    // at stop 28: the read-back of a device flag cost 8-16 us per solve).
    cuda_backend::tridiagonal_solve<T>(k, lines, bv, d, u, options.periodic, p.workspace.get(),
                                       options.check_pivots ? host : nullptr, stream);
    if (!options.check_pivots) return;
    cuda_backend::synchronize(stream);
  }
  if (host[0] == 0) return;
  if (pivots) throw singular("");
  if (automatic) {
    if (u == d)
      throw UnstableSystem(who + "Thomas without pivoting failed its stability check (or met a zero pivot) "
                                 "and the in-place solve has overwritten d, so it cannot be re-solved with "
                                 "pivoting; pass u != d, or set TridiagonalOptions::pivoting to partial");
    cuda_backend::tridiagonal_solve<T>(Kernel::cuda_pivoting, lines, bv, d, u, options.periodic, fallback_ws(),
                                       host + 1, stream);
    cuda_backend::synchronize(stream);
    if (host[1] != 0) throw singular(" (cuda_pivoting)");
    return;
  }
  const detail::FailedRow f =
      u == d ? detail::FailedRow{}
             : detail::locate_failure(exec, lines, a, b, c, shared, d, options.periodic, Pivoting::none);
  throw UnstableSystem(who + "zero pivot, or Thomas without pivoting failed its stability check" + at(f) +
                           " (the system is not diagonally dominant enough); set "
                           "TridiagonalOptions::pivoting to automatic or partial (docs/pivoting.md)",
                       f.system, f.row);
}

template <class T>
TridiagonalPlan<T>::TridiagonalPlan(const Executor& exec, const LineSet& lines_in, TridiagonalOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.exec = exec;
  p.user_lines = to_lines(lines_in);
  p.lines = merged_line_indices(p.user_lines);
  p.options = options;
  p.team.reset(exec.threads());
  detail::require(static_cast<int>(options.pivoting) >= 0 && static_cast<int>(options.pivoting) <= 2,
                  "TridiagonalPlan: options.pivoting is not a Pivoting value");
  detail::DispatchQuery q{p.lines, sizeof(T), options.periodic, false, options.pivoting};
  detail::DispatchQuery qs = q;
  qs.shared_bands = true;
  if (options.kernel == Kernel::automatic && options.measure && p.lines.lines() > 0) {
    p.measurement = detail::measure_kernels<T>(exec, p.lines, options, p.kernel, p.kernel_shared);
  } else if (options.kernel == Kernel::automatic) {
    p.kernel = detail::choose_kernel(exec, q);
    p.kernel_shared = detail::choose_kernel(exec, qs);
  } else {
    if (!detail::kernel_supports(options.kernel, exec, q))
      throw InvalidArgument(std::string("TridiagonalPlan: kernel ") + kernel_name(options.kernel) +
                            " cannot run this layout (n = " + detail::number(p.lines.n) +
                            ", element stride = " + detail::number(p.lines.stride) + ", line stride = " +
                            detail::number(p.lines.stride0) + ") on executor " + exec.name() +
                            "; use Kernel::automatic");
    p.kernel = p.kernel_shared = options.kernel;
    if (options.pivoting == Pivoting::partial && exec.is_cuda() && options.kernel != Kernel::cuda_pivoting &&
        options.kernel != Kernel::large_partition)
      throw InvalidArgument(std::string("TridiagonalPlan: kernel ") + kernel_name(options.kernel) +
                            " does not pivot but options.pivoting is partial; use Kernel::cuda_pivoting or "
                            "Kernel::automatic");
    if (options.pivoting == Pivoting::partial && options.kernel == Kernel::large_partition)
      throw InvalidArgument("TridiagonalPlan: kernel large_partition does not pivot but options.pivoting is "
                            "partial; use Kernel::automatic");
  }
  auto exact_of = [&](const detail::DispatchQuery& qq) {  // (a CUDA kernel: the run path's)
    const Kernel e = detail::choose_exact_kernel(exec, qq);
    return e == Kernel::large_partition ? detail::choose_cuda_kernel(detail::cuda_device_traits(exec), qq) : e;
  };
  if (p.kernel == Kernel::cuda_thomas_truncated) p.exact = exact_of(q);
  if (p.kernel_shared == Kernel::cuda_thomas_truncated) p.exact_shared = exact_of(qs);
  // ADI_TRUNCATED_UNCHECKED=1 (read when the plan is made): with check_pivots off the truncated
  // sweeps' re-solve is decided on the device (run_cuda), so automatic keeps them too.
  p.truncated_unchecked = !options.check_pivots && exec.is_cuda() &&
                          detail::env_switch("ADI_TRUNCATED_UNCHECKED", false);
  if (options.kernel == Kernel::automatic) {
    // automatic's truncated sweeps synchronise each solve (the refusal flag is read back): where the
    // plan would not (check_pivots off) it keeps the exact kernel unless ADI_LONG_TRUNCATED=1 or
    // ADI_TRUNCATED_UNCHECKED=1.
    const bool keep_sync = !options.check_pivots && !p.truncated_unchecked &&
                           detail::long_truncated_mode() != detail::LongTruncated::on;
    if (keep_sync && p.kernel == Kernel::cuda_thomas_truncated) p.kernel = p.exact;
    if (keep_sync && p.kernel_shared == Kernel::cuda_thomas_truncated) p.kernel_shared = p.exact_shared;
  }
  p.run = Impl::backend(exec, p.kernel);
  p.run_shared = Impl::backend(exec, p.kernel_shared);
  p.pivot = exec.is_host() ? &Impl::pivot_host : &Impl::pivot_cuda;
  if (options.stages) p.prepare_stage();
  if (p.kernel == Kernel::large_partition || p.kernel_shared == Kernel::large_partition) {
    // Both resolve to it together (the rule looks at the layout only).
    p.workspace =
        detail::Storage(detail::large_lines_workspace_bytes(exec, p.lines, options.periodic, sizeof(T)), exec);
    if (exec.is_cuda()) {
      // [0] the partition's check, [1] the truncated sweeps' refusal (large_lines_solve)
      p.large_report.reset(
          static_cast<unsigned long long*>(cuda_backend::pinned_allocate(2 * sizeof(unsigned long long))));
      p.large_truncated = detail::large_truncated_applies(exec, p.lines.n, sizeof(T), options.periodic);
    }
    return;
  }
  if (exec.is_host()) {
    const int threads = exec.threads();
    const std::size_t bytes =
        std::max(cpu::workspace_bytes(p.kernel, p.lines, options.periodic, threads, sizeof(T), options.pivoting),
                 cpu::workspace_bytes(p.kernel_shared, p.lines, options.periodic, threads, sizeof(T),
                                      options.pivoting));
    p.workspace = detail::Storage(bytes, exec);
  } else {
    std::size_t bytes = 0;
    for (Kernel k : {p.kernel, p.kernel_shared, p.exact, p.exact_shared})
      if (k != Kernel::automatic)
        bytes = std::max(bytes, cuda_backend::tridiagonal_workspace_bytes(k, p.lines, options.periodic, sizeof(T)));
    p.workspace = detail::Storage(bytes, exec);
    p.pivot_flag = detail::Storage(sizeof(int), exec);
    // [0] the solve's check, [1] the pivoting fall-back's, [2] cuda_thomas_truncated's refusal
    p.flags_host.reset(static_cast<int*>(cuda_backend::pinned_allocate(3 * sizeof(int))));
    p.device_fallback = detail::pivoting_fallback_on_device();
    p.flags_host.get()[2] = 0;
    // The unchecked truncated sweeps' re-solve: its scratch now (no allocation in a first solve).
    p.truncated_unchecked = p.truncated_unchecked && (p.kernel == Kernel::cuda_thomas_truncated ||
                                                      p.kernel_shared == Kernel::cuda_thomas_truncated);
    if (p.truncated_unchecked)
      p.fallback_ws = detail::Storage(
          cuda_backend::tridiagonal_workspace_bytes(Kernel::cuda_pivoting, p.lines, false, sizeof(T)), exec);
  }
}

// The stage entry (options.stages): the dispatch table's stage kernel and, on CUDA, its launch
// (kernel instance, shared-memory fit, occupancy-sized grid) for these lines and the current
// device, once. Lines whose shared memory does not fit the device get no stage entry.
template <class T>
void TridiagonalPlan<T>::Impl::prepare_stage() {
  if (exec.is_host()) {
    kernel_stage = kernel_shared == Kernel::large_partition ? Kernel::automatic : kernel_shared;
    for (auto* v : {&stage_rhs, &stage_a, &stage_b, &stage_c}) v->resize(static_cast<std::size_t>(user_lines.n));
    return;
  }
  detail::DispatchQuery q{user_lines, sizeof(T), options.periodic, true, options.pivoting};
  kernel_stage = detail::choose_stage_kernel(exec, q);
  if (kernel_stage != Kernel::cuda_thomas_pcr_fused_stage) return;
  try {
    cuda_backend::DeviceGuard device_guard(exec.device());
    stage_launch = cuda_backend::fused_stage_prepare<T>(user_lines, cuda_backend::FusedTuning{});
  } catch (const Unsupported&) {
    kernel_stage = Kernel::automatic;  // lines too long for the device's shared memory
  }
}

// The host stage: each line's right-hand side as the fused kernel forms it (the same terms in
// the same order: solvers/cuda/thomas_pcr_fused_stage.cuh, stage_rhs), written over u once the
// line is formed (u may be base or v), then the shared-band kernel in place on u with the bands
// of I/s - A (a and c zero beyond a non-periodic line's ends, b = 1/s - d).
template <class T>
void TridiagonalPlan<T>::Impl::stage_host(const detail::TridiagonalStage<T>& st) {
  if (st.fold.count > 0)
    throw Unsupported("TridiagonalPlan::solve_stage: the explicit operator folds into the CUDA stage only");
  const LineSet& ul = user_lines;
  const index_t n = ul.n, nl = ul.lines();
  const bool per = options.periodic;
  std::vector<T>& a = stage_a;
  std::vector<T>& b = stage_b;
  std::vector<T>& c = stage_c;
  for (index_t r = 0; r < n; ++r) {
    a[r] = r == 0 && !per ? T(0) : st.a[r];
    c[r] = r == n - 1 && !per ? T(0) : st.c[r];
    b[r] = st.inv_s - st.d[r];
  }
  const common::StageRhsArgs<T> g{st.inv_s,      {st.src[0], st.src[1]},         {st.src_scale[0], st.src_scale[1]},
                                  st.v,          {st.end[0], st.end[1]},         {st.neu_add[0], st.neu_add[1]},
                                  {st.neu_sub[0], st.neu_sub[1]}};
  T* x = stage_rhs.data();
  for (index_t line = 0; line < nl; ++line) {
    const index_t off = ul.offset(line);
    const index_t fi =
        ul.count1 == 1 ? st.face_base + line : st.face_base + line % ul.count0 + (line / ul.count0) * st.face_n1;
    auto v_at = [&](index_t r) -> T {
      if (!per && r == 0 && st.v_end[0]) return st.v_end[0][fi];
      if (!per && r == n - 1 && st.v_end[1]) return st.v_end[1][fi];
      return st.v[off + r * ul.stride];
    };
    for (index_t r = 0; r < n; ++r) {
      const index_t node = off + r * ul.stride;
      const bool end = !per && (r == 0 || r == n - 1);
      const int side = r == 0 ? 0 : 1;
      const bool hv = st.v != nullptr;  // the neighbours' v: read only where the stage has one
      const T vm = hv ? v_at(r > 0 ? r - 1 : n - 1) : T(0), vc = hv ? v_at(r) : T(0);
      const T vp = hv ? v_at(r < n - 1 ? r + 1 : 0) : T(0);
      x[r] = end ? common::stage_rhs_end(g, side, a[r], st.d[r], c[r], st.base[node], vm, vc, vp, fi, node)
                 : common::stage_rhs_inner(g, a[r], st.d[r], c[r], st.base[node], vm, vc, vp, node);
    }
    for (index_t r = 0; r < n; ++r) st.u[off + r * ul.stride] = x[r];
  }
  run_host(*this, kernel_stage, a.data(), b.data(), c.data(), true, st.u, st.u);
}

template <class T>
void TridiagonalPlan<T>::solve_stage(const detail::TridiagonalStage<T>& st, int* pivot_flag) {
  Impl& p = *impl_;
  if (p.kernel_stage == Kernel::automatic)
    throw InvalidArgument(std::string("TridiagonalPlan::solve_stage: the plan has no stage entry (") +
                          (p.options.stages ? "the stage kernel does not take these lines" : "options.stages is off") +
                          "); form the right-hand side and call solve()");
  if (p.lines.lines() == 0) return;
  if (p.exec.is_host()) {
    p.stage_host(st);
    return;
  }
  cuda_backend::DeviceGuard device_guard(p.exec.device());
  if (pivot_flag) cuda_backend::memset_zero_async(pivot_flag, sizeof(int), p.exec.stream());
  cuda_backend::fused_stage_run<T>(st, p.stage_launch, pivot_flag, p.exec.stream());
}

template <class T>
TridiagonalPlan<T>::~TridiagonalPlan() = default;
template <class T>
TridiagonalPlan<T>::TridiagonalPlan(TridiagonalPlan&&) noexcept = default;
template <class T>
TridiagonalPlan<T>& TridiagonalPlan<T>::operator=(TridiagonalPlan&&) noexcept = default;

template <class T>
void TridiagonalPlan<T>::solve(const Bands<T>& bands, const T* d, T* u) {
  impl_->solve(bands.a, bands.b, bands.c, false, d, u);
}
template <class T>
void TridiagonalPlan<T>::solve(const SharedBands<T>& bands, const T* d, T* u) {
  impl_->solve(bands.a, bands.b, bands.c, true, d, u);
}
template <class T>
Kernel TridiagonalPlan<T>::kernel() const {
  return impl_->truncated_refused ? impl_->exact : impl_->kernel;
}
template <class T>
Kernel TridiagonalPlan<T>::shared_bands_kernel() const {
  return impl_->truncated_refused_shared ? impl_->exact_shared : impl_->kernel_shared;
}
template <class T>
Kernel TridiagonalPlan<T>::stage_kernel() const {
  return impl_->kernel_stage;
}
template <class T>
const KernelMeasurement& TridiagonalPlan<T>::measurement() const {
  return impl_->measurement;
}
template <class T>
const LineSet& TridiagonalPlan<T>::lines() const {
  return impl_->user_lines;
}
template <class T>
const Executor& TridiagonalPlan<T>::executor() const {
  return impl_->exec;
}
template <class T>
const TridiagonalOptions& TridiagonalPlan<T>::options() const {
  return impl_->options;
}

template <class T>
void TridiagonalPlan<T>::solve(const BandSpans<T>& bands, std::span<const T> d, std::span<T> u) {
  const index_t need = impl_->lines.span(), band_need = bands.shared ? impl_->lines.n : need;
  constexpr const char* who = "tridiagonal solve";
  detail::require_length(bands.a.size(), band_need, who, "a");
  detail::require_length(bands.b.size(), band_need, who, "b");
  detail::require_length(bands.c.size(), band_need, who, "c");
  detail::require_length(d.size(), need, who, "d");
  detail::require_length(u.size(), need, who, "u");
  impl_->solve(bands.a.data(), bands.b.data(), bands.c.data(), bands.shared, d.data(), u.data());
}

template class TridiagonalPlan<float>;
template class TridiagonalPlan<double>;

}  // namespace adi
