#include "adi/variable_tridiagonal.hpp"

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/cpu/thomas_variable.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/pivoting_variable.hpp"

namespace adi {

const char* variable_kernel_name(VariableKernel m) {
  switch (m) {
    case VariableKernel::automatic: return "automatic";
    case VariableKernel::reference: return "reference";
    case VariableKernel::padded: return "padded (CP)";
    case VariableKernel::stop_at_size: return "stop_at_size (NCP)";
    case VariableKernel::sorted: return "sorted";
    case VariableKernel::truncated: return "truncated";
  }
  return "unknown";
}

namespace {
enum class LayoutKind { padded, sorted, compact, pointers };
const char* layout_name(LayoutKind k) {
  return k == LayoutKind::padded ? "PaddedInterleaved" : k == LayoutKind::sorted ? "SortedInterleaved"
                                                     : k == LayoutKind::compact  ? "CompactBatch"
                                                                                 : "PointerBatch";
}
}  // namespace

template <class T>
struct VariableTridiagonalPlan<T>::Impl {
  VariableBatchPlan batch;
  LayoutKind kind = LayoutKind::padded;
  VariableTridiagonalOptions options;
  VariableKernel kernel = VariableKernel::automatic;
  index_t stride = 0;  // padded
  int rows = 0;        // padded
  index_t span = 0;
  // Truncated sweeps on the padded layout: the lanes of a warp in step, where some 32 neighbouring
  // systems differ in size (own sizes there: predicated loads, 1.4-1.6x slower on an H200; equal
  // sizes: own sizes, 5-10% faster; docs/variable_batch.md). The sorted layout: own sizes.
  bool lanes_in_step = false;
  std::vector<index_t> offsets;  // compact, host
  detail::Storage device_offsets;
  detail::Storage workspace;
  detail::Storage pivot_workspace;  // CUDA, pivoting != none: U's u1', u2' (periodic: + columns n-2, n-1)
  detail::Storage bad_flag;  // device int

  explicit Impl(const VariableBatchPlan& b) : batch(b) {}
  void choose(VariableKernel requested);
  void allocate();
  // The backend's kernel for the layout and the chosen kernel (in place: never a truncated kind).
  cuda_backend::VariableKernel launch_kind(bool in_place) const {
    using Launch = cuda_backend::VariableKernel;
    const bool truncated = kernel == VariableKernel::truncated && !in_place;
    return kind == LayoutKind::sorted       ? (truncated ? Launch::sorted_truncated : Launch::sorted)
           : kind == LayoutKind::compact    ? (truncated ? Launch::compact_truncated : Launch::compact)
           : kind == LayoutKind::pointers   ? Launch::pointers
           : kernel == VariableKernel::stop_at_size ? Launch::stop_at_size
           : truncated                      ? Launch::padded_truncated
                                            : Launch::padded;
  }
  void check_arrays(std::initializer_list<std::pair<const void*, const char*>> arrays, const T* d,
                    const T* u) const;
  void report(index_t bad, index_t row = -1) const;
  // A zero or non-finite pivot under partial pivoting (CUDA): the system is singular. row: where
  // Thomas meets its zero pivot in that system (failed_row*, as the host's report), -1 if none.
  [[noreturn]] void report_pivoted(index_t bad, index_t row) const;
  // CUDA: partial pivoting of the whole batch (pivoting_variable.cuh); throws SingularSystem
  // naming the first singular system (row(s): its row) when check_pivots is on (always after
  // automatic's check).
  template <class Row>
  void pivot_cuda(cuda_backend::VariableKernel k, const cuda_backend::VariableDeviceArrays<T>& x, bool check,
                  Row row);
  // CUDA, kernel k on x under options.pivoting: partial pivots the batch; none / automatic run
  // the (checked) Thomas kernel, then automatic re-solves the whole batch with partial pivoting
  // where a system is flagged (as the host does) unless in_place() (some u is its d: throws
  // UnstableSystem). row(s): the failing row of system s, for the errors.
  template <class InPlace, class Row>
  void solve_cuda(cuda_backend::VariableKernel k, const cuda_backend::VariableDeviceArrays<T>& x, InPlace in_place,
                  Row row);
  [[noreturn]] void report_unstable(index_t bad, bool in_place, index_t row = -1) const;
  // The row of system s where Thomas (no pivoting, in double) meets a zero or non-finite
  // pivot, for the error's row(): -1 when it meets none (a growth-check failure) or the
  // system's values are gone (in place). The kernels report the system only; this runs on
  // the failure path (the device backend copies its arrays to the host first).
  index_t failed_row(index_t s, const T* a, const T* b, const T* c) const;
  index_t failed_row(index_t s, const PointerBands<T>& bands) const;
  index_t failed_row_on_device(index_t s, const T* a, const T* b, const T* c) const;
  index_t failed_row_on_device(index_t s, const PointerBands<T>& bands) const;
  // Validate, then solve through the backend.
  void solve(const T* a, const T* b, const T* c, const T* d, T* u);
  void solve(const PointerBands<T>& bands, const T* const* d, T* const* u);

  // The backend, chosen once when the plan is built (allocate()) from the executor: solves
  // validated arrays (padded, sorted, compact layouts) or pointer arrays (PointerBatch).
  using Run = void (*)(Impl&, const T* a, const T* b, const T* c, const T* d, T* u);
  using RunPointers = void (*)(Impl&, const PointerBands<T>& bands, const T* const* d, T* const* u);
  Run run = nullptr;
  RunPointers run_pointers = nullptr;
  static void run_host(Impl& p, const T* a, const T* b, const T* c, const T* d, T* u);
  static void run_cuda(Impl& p, const T* a, const T* b, const T* c, const T* d, T* u);
  static void run_pointers_host(Impl& p, const PointerBands<T>& bands, const T* const* d, T* const* u);
  static void run_pointers_cuda(Impl& p, const PointerBands<T>& bands, const T* const* d, T* const* u);
};

template <class T>
void VariableTridiagonalPlan<T>::Impl::choose(VariableKernel requested) {
  const bool host = batch.executor().is_host();
  // The truncated sweeps (CUDA, stop 45): interleaved and compact layouts, non-periodic.
  const bool truncated_fits = !host && !options.periodic && kind != LayoutKind::pointers;
  auto allowed = [&](VariableKernel m) {
    if (m == VariableKernel::reference) return host;
    if (m == VariableKernel::truncated) return truncated_fits;
    switch (kind) {
      case LayoutKind::padded: return m == VariableKernel::padded || m == VariableKernel::stop_at_size;
      case LayoutKind::sorted: return m == VariableKernel::sorted;
      default: return m == VariableKernel::stop_at_size;
    }
  };
  if (requested == VariableKernel::automatic) {
    kernel = kind == LayoutKind::padded   ? VariableKernel::padded
             : kind == LayoutKind::sorted ? VariableKernel::sorted
                                          : VariableKernel::stop_at_size;
    // The truncated sweeps wherever they run (ADI_VARIABLE_TRUNCATED=0: never).
    if (truncated_fits && detail::env_int("ADI_VARIABLE_TRUNCATED", 0, 1, 1) == 1) kernel = VariableKernel::truncated;
  } else {
    if (!allowed(requested))
      throw InvalidArgument(std::string("VariableTridiagonalPlan: kernel ") + variable_kernel_name(requested) +
                            " cannot run the " + layout_name(kind) + " layout on " + batch.executor().name() +
                            std::string(options.periodic ? " (periodic)" : "") +
                            " (padded/stop_at_size: PaddedInterleaved; sorted: SortedInterleaved; "
                            "stop_at_size: CompactBatch, PointerBatch; reference: host only; truncated: "
                            "PaddedInterleaved, SortedInterleaved or CompactBatch on CUDA, not periodic)");
    kernel = requested;
  }
  if (kernel == VariableKernel::truncated && kind == LayoutKind::padded) {
    const int* n = batch.host_view().sizes;
    for (index_t s = 0; s < batch.count() && !lanes_in_step; ++s) lanes_in_step = s % 32 != 0 && n[s] != n[s - 1];
  }
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::allocate() {
  const Executor& exec = batch.executor();
  const int rows_max = std::max(rows, batch.max_size());
  if (exec.is_host()) {
    run = &Impl::run_host;
    run_pointers = &Impl::run_pointers_host;
    workspace = detail::Storage(cpu::variable_workspace_bytes(rows_max, exec.threads(), sizeof(T)), exec);
    return;
  }
  run = &Impl::run_cuda;
  run_pointers = &Impl::run_pointers_cuda;
  cuda_backend::DeviceGuard device_guard(exec.device());
  const cuda_backend::VariableKernel k = launch_kind(false);
  workspace = detail::Storage(
      cuda_backend::variable_tridiagonal_workspace_bytes(k, batch.view(), stride, rows, options.periodic,
                                                          sizeof(T)),
      exec);
  bad_flag = detail::Storage(sizeof(int), exec);
  // Partial pivoting (and automatic's re-solve): one thread per system, U's two super-diagonals
  // (periodic: and its columns n-2, n-1) packed by the plan's offsets.
  if (options.pivoting != Pivoting::none)
    pivot_workspace = detail::Storage(
        std::max<std::size_t>(
            cuda_backend::variable_pivoting_workspace_bytes(batch.view(), options.periodic, sizeof(T)), 1),
        exec);
  if (kind == LayoutKind::compact) {
    device_offsets = detail::Storage(std::max<std::size_t>(offsets.size(), 1) * sizeof(index_t), exec);
    detail::copy_bytes(device_offsets.get(), MemorySpace::device, offsets.data(), MemorySpace::host,
                       offsets.size() * sizeof(index_t), exec.stream());
  }
}

template <class T>
VariableTridiagonalPlan<T>::VariableTridiagonalPlan(const VariableBatchPlan& batch, const PaddedInterleaved& l,
                                                    VariableTridiagonalOptions options)
    : impl_(std::make_unique<Impl>(batch)) {
  Impl& p = *impl_;
  p.kind = LayoutKind::padded;
  p.options = options;
  detail::require(l.stride == 0 || l.stride >= batch.count(),
                  "VariableTridiagonalPlan: PaddedInterleaved stride = " + detail::number(l.stride) +
                      " must be 0 (the count) or >= the batch count " + detail::number(batch.count()));
  detail::require(l.rows == 0 || l.rows >= batch.max_size(),
                  "VariableTridiagonalPlan: PaddedInterleaved rows = " + detail::number(l.rows) +
                      " must be 0 (the largest size) or >= the largest size " + detail::number(batch.max_size()));
  detail::require(l.rows <= INT_MAX, "VariableTridiagonalPlan: PaddedInterleaved rows must fit an int");
  p.stride = l.stride ? l.stride : batch.count();
  p.rows = static_cast<int>(l.rows ? l.rows : batch.max_size());
  p.span = batch.span(PaddedInterleaved{p.stride, p.rows});
  p.choose(options.kernel);
  p.allocate();
}

template <class T>
VariableTridiagonalPlan<T>::VariableTridiagonalPlan(const VariableBatchPlan& batch, const SortedInterleaved& l,
                                                    VariableTridiagonalOptions options)
    : impl_(std::make_unique<Impl>(batch)) {
  Impl& p = *impl_;
  p.kind = LayoutKind::sorted;
  p.options = options;
  p.span = batch.span(l);
  p.choose(options.kernel);
  p.allocate();
}

template <class T>
VariableTridiagonalPlan<T>::VariableTridiagonalPlan(const VariableBatchPlan& batch, const CompactBatch& l,
                                                    VariableTridiagonalOptions options)
    : impl_(std::make_unique<Impl>(batch)) {
  Impl& p = *impl_;
  p.kind = LayoutKind::compact;
  p.options = options;
  auto g = detail::compact_geometry(batch, l, [](int n) -> index_t { return n; }, "VariableTridiagonalPlan");
  p.offsets = std::move(g.offsets);
  p.span = g.span;
  p.choose(options.kernel);
  p.allocate();
}

template <class T>
VariableTridiagonalPlan<T>::VariableTridiagonalPlan(const VariableBatchPlan& batch, const PointerBatch& l,
                                                    VariableTridiagonalOptions options)
    : impl_(std::make_unique<Impl>(batch)) {
  Impl& p = *impl_;
  p.kind = LayoutKind::pointers;
  p.options = options;
  detail::require(l.ld == nullptr,
                  "VariableTridiagonalPlan: PointerBatch leading dimensions have no meaning for tridiagonal "
                  "systems (each system's elements are contiguous); pass ld = nullptr");
  p.choose(options.kernel);
  p.allocate();
}

template <class T>
VariableTridiagonalPlan<T>::~VariableTridiagonalPlan() = default;
template <class T>
VariableTridiagonalPlan<T>::VariableTridiagonalPlan(VariableTridiagonalPlan&&) noexcept = default;
template <class T>
VariableTridiagonalPlan<T>& VariableTridiagonalPlan<T>::operator=(VariableTridiagonalPlan&&) noexcept = default;

template <class T>
void VariableTridiagonalPlan<T>::Impl::check_arrays(std::initializer_list<std::pair<const void*, const char*>> arrays,
                                                    const T* d, const T* u) const {
  const Executor& exec = batch.executor();
  for (const auto& [ptr, name] : arrays) {
    if (ptr == nullptr)
      throw InvalidArgument(std::string("variable tridiagonal solve: ") + name + " is null; pass an array of " +
                            detail::number(span) + " values (plan.span())");
    if (reinterpret_cast<std::uintptr_t>(ptr) % alignof(T) != 0)
      throw InvalidArgument(std::string("variable tridiagonal solve: ") + name + " is not aligned to " +
                            detail::number(alignof(T)) + " bytes");
    if (cuda_backend::is_device_pointer(ptr) != exec.is_cuda())
      throw InvalidArgument(std::string("variable tridiagonal solve: ") + name + " is not in the executor's memory (" +
                            exec.name() + ")");
  }
  if (d != nullptr && u != nullptr && d != u && detail::arrays_overlap(d, span, u, span))
    throw InvalidArgument("variable tridiagonal solve: u and d overlap without being equal; pass u == d for an "
                          "in-place solve or separate arrays");
}

namespace {
// First row k of a system (element k at base + k*step of host arrays) where the plain Thomas
// elimination in double has a zero or non-finite pivot; -1 if none.
template <class T>
index_t zero_pivot_row(int n, const T* a, const T* b, const T* c, index_t base, index_t step) {
  double cp = 0;
  for (int k = 0; k < n; ++k) {
    const index_t i = base + k * step;
    const double piv = double(b[i]) - (k > 0 ? double(a[i]) * cp : 0.0);
    if (piv == 0.0 || !std::isfinite(piv)) return k;
    cp = double(c[i]) / piv;
  }
  return -1;
}
}  // namespace

template <class T>
index_t VariableTridiagonalPlan<T>::Impl::failed_row(index_t s, const T* a, const T* b, const T* c) const {
  if (s < 0) return -1;
  const VariableBatchView& v = batch.host_view();
  index_t base = s, step = stride;
  if (kind == LayoutKind::compact) {
    base = offsets[s];
    step = 1;
  } else if (kind == LayoutKind::sorted) {
    const index_t p = v.position[s];
    base = v.chunk_offsets[p / v.chunk_width] + p % v.chunk_width;
    step = v.chunk_width;
  }
  return zero_pivot_row(v.sizes[s], a, b, c, base, step);
}

template <class T>
index_t VariableTridiagonalPlan<T>::Impl::failed_row_on_device(index_t s, const T* a, const T* b,
                                                               const T* c) const {
  if (s < 0) return -1;
  const Executor& exec = batch.executor();
  std::vector<T> h[3];
  const T* src[3] = {a, b, c};
  for (int j = 0; j < 3; ++j) {
    h[j].resize(static_cast<std::size_t>(span));
    detail::copy_bytes(h[j].data(), MemorySpace::host, src[j], MemorySpace::device, h[j].size() * sizeof(T),
                       exec.stream());
  }
  return failed_row(s, h[0].data(), h[1].data(), h[2].data());
}

template <class T>
index_t VariableTridiagonalPlan<T>::Impl::failed_row(index_t s, const PointerBands<T>& bands) const {
  if (s < 0) return -1;
  return zero_pivot_row(batch.size(s), bands.a[s], bands.b[s], bands.c[s], 0, 1);
}

template <class T>
index_t VariableTridiagonalPlan<T>::Impl::failed_row_on_device(index_t s, const PointerBands<T>& bands) const {
  if (s < 0) return -1;
  const int n = batch.size(s);
  const Executor& exec = batch.executor();
  std::vector<T> h[3];
  const T* const* src[3] = {bands.a, bands.b, bands.c};
  for (int j = 0; j < 3; ++j) {
    const auto ptrs = detail::to_host(src[j], batch.count(), exec.stream());
    h[j].resize(static_cast<std::size_t>(n));
    detail::copy_bytes(h[j].data(), MemorySpace::host, ptrs[s], MemorySpace::device, h[j].size() * sizeof(T),
                       exec.stream());
  }
  return zero_pivot_row(n, h[0].data(), h[1].data(), h[2].data(), 0, 1);
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::report_unstable(index_t bad, bool in_place, index_t row) const {
  throw UnstableSystem("variable tridiagonal solve (" + std::string(variable_kernel_name(kernel)) + "): system " +
                           detail::number(bad) + " (size " + detail::number(batch.size(bad)) +
                           ") met a zero pivot or failed the stability check of Thomas without pivoting (it is "
                           "singular or not diagonally dominant enough)" +
                           (in_place ? "; the in-place solve overwrote d, so it cannot be re-solved with "
                                       "pivoting: pass u != d or set VariableTridiagonalOptions::pivoting to partial"
                                     : "; set VariableTridiagonalOptions::pivoting to automatic or partial "
                                       "(docs/pivoting.md)"),
                       bad, row);
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::report(index_t bad, index_t row) const {
  if (bad < 0) return;
  throw SingularSystem("variable tridiagonal solve (" + std::string(variable_kernel_name(kernel)) + "): system " +
                       detail::number(bad) + " (size " + detail::number(batch.size(bad)) +
                       ") has a zero or non-finite pivot" +
                       (row >= 0 ? " at row " + detail::number(row) : std::string()) +
                       "; it is singular or not diagonally dominant enough for a solver without pivoting",
                       bad, row);
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::report_pivoted(index_t bad, index_t row) const {
  throw SingularSystem("variable tridiagonal solve (partial pivoting): system " + detail::number(bad) + " (size " +
                           detail::number(batch.size(bad)) +
                           ") has a zero or non-finite pivot under partial pivoting" +
                           (row >= 0 ? " (Thomas's zero pivot at row " + detail::number(row) + ")" : std::string()) +
                           ": it is singular, or its coefficients or right-hand side are not finite",
                       bad, row);
}

template <class T>
template <class Row>
void VariableTridiagonalPlan<T>::Impl::pivot_cuda(cuda_backend::VariableKernel k,
                                                  const cuda_backend::VariableDeviceArrays<T>& x, bool check,
                                                  Row row) {
  const Executor& exec = batch.executor();
  int* flag = check ? static_cast<int*>(bad_flag.get()) : nullptr;
  cuda_backend::variable_pivoting_solve<T>(cuda_backend::exact_variable_kernel(k), batch.view(), x, options.periodic, pivot_workspace.get(), flag,
                                           exec.stream());
  if (flag) {
    int h = cuda_backend::kNoBadSystem;
    cuda_backend::copy_on_stream(&h, flag, sizeof(int), cuda_backend::Copy::device_to_host, exec.stream());
    if (h != cuda_backend::kNoBadSystem) report_pivoted(h, row(h));
  }
}

template <class T>
template <class InPlace, class Row>
void VariableTridiagonalPlan<T>::Impl::solve_cuda(cuda_backend::VariableKernel k,
                                                  const cuda_backend::VariableDeviceArrays<T>& x, InPlace in_place,
                                                  Row row) {
  const Executor& exec = batch.executor();
  cuda_backend::DeviceGuard device_guard(exec.device());
  if (options.pivoting == Pivoting::partial) return pivot_cuda(k, x, options.check_pivots, row);
  // automatic: the checked Thomas kernel, then, where it flags a system and u != d, the whole
  // batch again with partial pivoting (as the host does).
  const bool fallback = options.pivoting == Pivoting::automatic;
  int* flag = options.check_pivots || fallback ? static_cast<int*>(bad_flag.get()) : nullptr;
  cuda_backend::variable_tridiagonal_solve<T>(k, batch.view(), x, options.periodic, workspace.get(), flag,
                                              exec.stream());
  if (flag) {
    int h = cuda_backend::kNoBadSystem;
    cuda_backend::copy_on_stream(&h, flag, sizeof(int), cuda_backend::Copy::device_to_host, exec.stream());
    if (h == cuda_backend::kNoBadSystem) return;
    if (fallback) {
      if (in_place()) report_unstable(h, true, row(h));
      return pivot_cuda(k, x, options.check_pivots, row);
    }
    if (options.check_pivots) report(h, row(h));
  }
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::solve(const T* a, const T* b, const T* c, const T* d, T* u) {
  if (kind == LayoutKind::pointers)
    throw InvalidArgument("VariableTridiagonalPlan: this plan was built for a PointerBatch; call "
                          "solve(PointerBands, d pointers, u pointers)");
  if (batch.count() == 0 || span == 0) return;
  check_arrays({{a, "a"}, {b, "b"}, {c, "c"}, {d, "d"}, {u, "u"}}, d, u);
  run(*this, a, b, c, d, u);
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::run_host(Impl& p, const T* a, const T* b, const T* c, const T* d, T* u) {
  const Executor& exec = p.batch.executor();
  const bool periodic = p.options.periodic;
  const LayoutKind kind = p.kind;
  const cpu::VariableArrays<T> x{a, b, c, d, u};
  const VariableBatchView& v = p.batch.host_view();
  const index_t* offs = kind == LayoutKind::compact ? p.offsets.data() : nullptr;
  auto pivoting = [&]() {
    return cpu::variable_thomas_reference<T>(v, offs, p.stride, kind == LayoutKind::sorted, x, periodic, true);
  };
  index_t bad = -1;
  if (p.options.pivoting == Pivoting::partial) {
    bad = pivoting();
  } else if (p.kernel == VariableKernel::reference) {
    bad = cpu::variable_thomas_reference<T>(v, offs, p.stride, kind == LayoutKind::sorted, x, periodic);
  } else if (kind == LayoutKind::padded) {
    bad = cpu::variable_thomas_padded<T>(v, p.stride, p.rows, x, periodic, p.kernel == VariableKernel::stop_at_size,
                                         p.workspace.get(), exec.threads());
  } else if (kind == LayoutKind::sorted) {
    bad = cpu::variable_thomas_sorted<T>(v, x, periodic, p.workspace.get(), exec.threads());
  } else {
    bad = cpu::variable_thomas_compact<T>(v, p.offsets.data(), x, periodic, p.workspace.get(), exec.threads());
  }
  if (bad >= 0 && p.options.pivoting == Pivoting::automatic && p.kernel != VariableKernel::reference) {
    if (d == u) p.report_unstable(bad, true, p.failed_row(bad, a, b, c));
    bad = pivoting();
  } else if (bad >= 0 && p.options.pivoting == Pivoting::none && p.options.check_pivots) {
    p.report_unstable(bad, false, p.failed_row(bad, a, b, c));
  }
  if (p.options.check_pivots && bad >= 0) p.report(bad, p.failed_row(bad, a, b, c));
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::run_cuda(Impl& p, const T* a, const T* b, const T* c, const T* d, T* u) {
  cuda_backend::VariableDeviceArrays<T> x;
  x.a = a, x.b = b, x.c = c, x.d = d, x.u = u;
  x.stride = p.stride;
  x.rows = p.rows;
  x.offsets = static_cast<const index_t*>(p.device_offsets.get());
  x.lanes_in_step = p.lanes_in_step;
  // In place the truncated sweeps cannot run (their re-solve reads d): the exact kernel.
  const cuda_backend::VariableKernel k = p.launch_kind(d == u);
  p.solve_cuda(k, x, [&] { return d == u; }, [&](index_t s) { return p.failed_row_on_device(s, a, b, c); });
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::solve(const PointerBands<T>& bands, const T* const* d, T* const* u) {
  if (kind != LayoutKind::pointers)
    throw InvalidArgument(std::string("VariableTridiagonalPlan: this plan was built for a ") + layout_name(kind) +
                          "; call solve(Bands, d, u)");
  if (batch.count() == 0) return;
  const Executor& exec = batch.executor();
  const std::pair<const void*, const char*> arrays[] = {
      {bands.a, "a"}, {bands.b, "b"}, {bands.c, "c"}, {d, "d"}, {u, "u"}};
  for (const auto& [ptr, name] : arrays) {
    if (ptr == nullptr)
      throw InvalidArgument(std::string("variable tridiagonal solve: pointer array ") + name +
                            " is null; pass an array of count pointers");
    if (cuda_backend::is_device_pointer(ptr) != exec.is_cuda())
      throw InvalidArgument(std::string("variable tridiagonal solve: pointer array ") + name +
                            " is not in the executor's memory (" + exec.name() + ")");
  }
  if (options.check_pointers) {
    const VariableBatchView& v = batch.host_view();
    for (const auto& [ptr, name] : arrays) {
      const auto h = detail::to_host(static_cast<const T* const*>(ptr), v.count, exec.stream());
      for (index_t s = 0; s < v.count; ++s)
        if (v.sizes[s] > 0 && h[s] == nullptr)
          throw InvalidArgument(std::string("variable tridiagonal solve: ") + name + "[" + detail::number(s) +
                                "] is null for a system of size " + detail::number(v.sizes[s]));
    }
  }
  run_pointers(*this, bands, d, u);
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::run_pointers_host(Impl& p, const PointerBands<T>& bands, const T* const* d,
                                                         T* const* u) {
  const Executor& exec = p.batch.executor();
  const VariableTridiagonalOptions& o = p.options;
  const cpu::VariablePointers<T> x{bands.a, bands.b, bands.c, d, u};
  const VariableBatchView& v = p.batch.host_view();
  const bool partial = o.pivoting == Pivoting::partial;
  index_t bad = p.kernel == VariableKernel::reference || partial
                    ? cpu::variable_thomas_reference<T>(v, x, o.periodic, partial)
                    : cpu::variable_thomas_pointers<T>(v, x, o.periodic, p.workspace.get(), exec.threads());
  if (bad >= 0 && o.pivoting == Pivoting::automatic && p.kernel != VariableKernel::reference) {
    bool in_place = false;
    for (index_t s = 0; s < v.count; ++s) in_place = in_place || (v.sizes[s] > 0 && d[s] == u[s]);
    if (in_place) p.report_unstable(bad, true, p.failed_row(bad, bands));
    bad = cpu::variable_thomas_reference<T>(v, x, o.periodic, true);
  } else if (bad >= 0 && o.pivoting == Pivoting::none && o.check_pivots) {
    p.report_unstable(bad, false, p.failed_row(bad, bands));
  }
  if (o.check_pivots && bad >= 0) p.report(bad, p.failed_row(bad, bands));
}

template <class T>
void VariableTridiagonalPlan<T>::Impl::run_pointers_cuda(Impl& p, const PointerBands<T>& bands, const T* const* d,
                                                         T* const* u) {
  const Executor& exec = p.batch.executor();
  cuda_backend::VariableDeviceArrays<T> x;
  x.pa = bands.a, x.pb = bands.b, x.pc = bands.c, x.pd = d, x.pu = u;
  // In place where some system's u is its d (the pointer arrays read back on the fall-back path only).
  auto in_place = [&] {
    const VariableBatchView& v = p.batch.host_view();
    const auto hd = detail::to_host(d, v.count, exec.stream());
    const auto hu = detail::to_host(static_cast<const T* const*>(u), v.count, exec.stream());
    for (index_t s = 0; s < v.count; ++s)
      if (v.sizes[s] > 0 && hd[s] == hu[s]) return true;
    return false;
  };
  p.solve_cuda(cuda_backend::VariableKernel::pointers, x, in_place,
               [&](index_t s) { return p.failed_row_on_device(s, bands); });
}

template <class T>
void VariableTridiagonalPlan<T>::solve(const Bands<T>& bands, const T* d, T* u) {
  impl_->solve(bands.a, bands.b, bands.c, d, u);
}
template <class T>
void VariableTridiagonalPlan<T>::solve(const PointerBands<T>& bands, const T* const* d, T* const* u) {
  impl_->solve(bands, d, u);
}
template <class T>
VariableKernel VariableTridiagonalPlan<T>::kernel() const {
  return impl_->kernel;
}
template <class T>
index_t VariableTridiagonalPlan<T>::span() const {
  return impl_->span;
}
template <class T>
const VariableBatchPlan& VariableTridiagonalPlan<T>::batch() const {
  return impl_->batch;
}

template class VariableTridiagonalPlan<float>;
template class VariableTridiagonalPlan<double>;

}  // namespace adi
