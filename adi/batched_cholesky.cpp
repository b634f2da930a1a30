#include "adi/batched_cholesky.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/cpu/cholesky_vbatched.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

const char* cholesky_kernel_name(CholeskyKernel k) {
  switch (k) {
    case CholeskyKernel::automatic: return "automatic";
    case CholeskyKernel::reference: return "reference";
    case CholeskyKernel::cpu_scalar: return "cpu_scalar";
    case CholeskyKernel::cpu_vector: return "cpu_vector";
    case CholeskyKernel::cuda_fused: return "cuda_fused";
    case CholeskyKernel::cuda_blocked: return "cuda_blocked";
  }
  return "unknown";
}

double cholesky_flops(const VariableBatchPlan& batch) {
  double f = 0;
  const VariableBatchView& v = batch.host_view();
  for (index_t s = 0; s < v.count; ++s) {
    const double n = v.sizes[s];
    f += n * n * n / 3.0;
  }
  return f;
}

namespace {

// Dispatch table of the variable-size Cholesky (measured: benchmarks/bench_cuda_variable_batch.cu
// and bench_variable_batch.cpp, quoted in docs/variable_batch.md).
// Host: SIMD groups of matrices (one lane each) up to this size, a matrix per thread above.
// Sweep on 16 cores (Xeon, AVX-512, 2 MiB L2; GFLOP/s of the group kernel vs the per-thread
// one vs LAPACK potrf per thread): fp64 n=128 137 vs 131 vs 123, n=192 124 vs 138 vs 166;
// fp32 n=96 169 vs 102 vs 124, n=128 83 vs 105 vs 191 (16 fp32 lanes of a 128 x 128
// triangle no longer fit L2).
int host_crossover(std::size_t value_size) { return value_size == 8 ? 128 : 96; }
// CUDA: the fused warp kernel holds a matrix of up to 32 rows in registers and beat every
// blocked shape at every size up to 32 in the H100 sweep (1000 matrices of one size, fp64:
// n = 32 fused 849 GFLOP/s, best blocked 354; fp32 943 vs 371), so the crossover is the
// warp's capacity; all sizes up to 32 go in one launch (small batches are latency-bound:
// one launch beats three). Above it the blocked kernel, one launch per size class
// (launches of different classes overlap on side streams), its shape by the class's
// largest size, the fastest in the same sweep (GFLOP/s, the runner-up after "vs"):
//   fp32: n <= 256 (16, 64)   n=256: 6207 vs 5767;  n <= 384 (32, 128) 8091 vs 6640;
//         n <= 512 (32, 256)  8572 vs 8075
//   fp64: n <= 192 (16, 64)   n=192: 2707 vs 2430;  n <= 256 (32, 256) 3343 vs 3292;
//         n <= 512 (16, 256)  n=384: 4329 vs 4077, n=512: 5263 vs 4105
// That table is the throughput regime (a class of many matrices). A class with fewer
// matrices than about 4 blocks per SM cannot fill the GPU with small blocks: its time is
// one matrix's latency, which more threads per matrix shorten. Measured on mixed batches
// of 800 matrices: fp32 U[1,256] 2875 GFLOP/s with (32, 256) for the (192, 256] class
// against 1267 with (16, 64); fp64 U[1,128] 560 with (32, 128) against 489.
constexpr int kCudaFusedMax = 32;
const std::vector<int> kCudaClassEdges = {32, 64, 96, 128, 192, 256, 384, 512};
int cuda_blocked_variant(int max_size, index_t count, int sms, std::size_t value_size) {
  const bool fp64 = value_size == 8;
  if (count < 4 * static_cast<index_t>(sms)) {
    if (max_size <= 128) return 1;         // (32, 128)
    return fp64 && max_size > 256 ? 3 : 2;  // (16, 256) / (32, 256)
  }
  if (!fp64) {
    if (max_size <= 256) return 0;  // (16, 64)
    if (max_size <= 384) return 1;  // (32, 128)
    return 2;                       // (32, 256)
  }
  if (max_size <= 192) return 0;
  if (max_size <= 256) return 2;
  return 3;  // (16, 256)
}
constexpr int kSideStreams = 4;

enum class LayoutKind { pointers, compact };

}  // namespace

template <class T>
struct BatchedCholeskyPlan<T>::Impl {
  VariableBatchPlan batch;
  LayoutKind kind = LayoutKind::pointers;
  CholeskyOptions options;
  CholeskyKernel small = CholeskyKernel::automatic, large = CholeskyKernel::automatic;
  int crossover = 0;
  std::vector<int> ld;               // host, per matrix (compact: max(1, n_s))
  std::vector<index_t> offsets;      // compact, host
  std::vector<T*> host_ptrs;         // compact on the host: base + offsets, refilled per call
  std::vector<T*> host_b_ptrs;       // compact solve on the host
  std::vector<cuda_backend::CholeskyRange> ranges;  // CUDA launches
  detail::Storage workspace;         // host scratch
  // Device copies, all allocated by setup() (no solve allocates device memory): leading
  // dimensions of A, matrix offsets, pointer arrays, info, the compact solve's B offsets
  // (refilled when nrhs changes) and the pointer solve's B leading dimensions (refilled per call).
  detail::Storage d_ld, d_offsets, d_ptrs, d_info, d_bptrs, d_boffsets, d_ldb;
  std::vector<int> host_info;        // info when the caller passes none; the read-back of info
  std::vector<index_t> host_boffsets;  // compact solve: B offsets for b_nrhs
  std::vector<std::shared_ptr<void>> streams, joins;  // CUDA side streams, one join event each
  std::shared_ptr<void> fork;
  int b_nrhs = -1;                   // nrhs the compact solve's device offsets were built for

  explicit Impl(const VariableBatchPlan& b) : batch(b) {}
  void setup();
  void check_matrix_pointers(const T* const* A, const char* what) const;
  void finish(int* info, bool on_device);

  // The backend, chosen once by setup() from the executor; the public members validate and
  // make one call through it.
  struct Backend {
    void (*factor)(Impl&, T* const* A, int* info);  // pointer batch
    void (*factor_compact)(Impl&, T* A, int* info);
    void (*solve)(Impl&, const T* const* L, T* const* B, int nrhs, const int* ldb, const std::vector<int>& hldb,
                  const int* info);
    void (*solve_compact)(Impl&, const T* L, T* B, int nrhs, const int* info);
  };
  const Backend* backend = nullptr;
  static void factor_host(Impl&, T* const* A, int* info);
  static void factor_cuda(Impl&, T* const* A, int* info);
  static void factor_compact_host(Impl&, T* A, int* info);
  static void factor_compact_cuda(Impl&, T* A, int* info);
  static void solve_host(Impl&, const T* const* L, T* const* B, int nrhs, const int* ldb,
                         const std::vector<int>& hldb, const int* info);
  static void solve_cuda(Impl&, const T* const* L, T* const* B, int nrhs, const int* ldb,
                         const std::vector<int>& hldb, const int* info);
  static void solve_compact_host(Impl&, const T* L, T* B, int nrhs, const int* info);
  static void solve_compact_cuda(Impl&, const T* L, T* B, int nrhs, const int* info);
  static constexpr Backend kHost{&factor_host, &factor_compact_host, &solve_host, &solve_compact_host};
  static constexpr Backend kCuda{&factor_cuda, &factor_compact_cuda, &solve_cuda, &solve_compact_cuda};
};

template <class T>
void BatchedCholeskyPlan<T>::Impl::setup() {
  const Executor& exec = batch.executor();
  host_info.resize(static_cast<std::size_t>(batch.count()));
  if (batch.max_size() > kMaxSize)
    throw InvalidArgument("BatchedCholeskyPlan: matrix " + detail::number(batch.host_view().order[0]) + " has size " +
                          detail::number(batch.max_size()) + ", over the supported maximum " +
                          detail::number(kMaxSize) + "; split it or use a dense solver");
  if (options.crossover < 0)
    throw InvalidArgument("BatchedCholeskyPlan: options.crossover = " + detail::number(options.crossover) +
                          " must be >= 0 (0: the measured default)");
  const CholeskyKernel k = options.kernel;
  const bool host = exec.is_host();
  backend = host ? &kHost : &kCuda;
  auto reject = [&](const char* why) {
    throw InvalidArgument(std::string("BatchedCholeskyPlan: kernel ") + cholesky_kernel_name(k) + " " + why);
  };
  if (host) {
    crossover = options.crossover > 0 ? std::min(options.crossover, kMaxSize) : host_crossover(sizeof(T));
    small = CholeskyKernel::cpu_vector;
    large = CholeskyKernel::cpu_scalar;
    if (k == CholeskyKernel::cuda_fused || k == CholeskyKernel::cuda_blocked) reject("needs a CUDA executor");
    if (k == CholeskyKernel::reference) small = large = CholeskyKernel::reference;
    if (k == CholeskyKernel::cpu_scalar) small = CholeskyKernel::cpu_scalar;
    if (k == CholeskyKernel::cpu_vector) {
      crossover = kMaxSize;
      large = CholeskyKernel::cpu_vector;
    }
    workspace = detail::Storage(cpu::cholesky_workspace_bytes(small == CholeskyKernel::cpu_vector ? crossover : 0,
                                                              exec.threads(), sizeof(T)),
                                exec);
    return;
  }
  if (k == CholeskyKernel::reference || k == CholeskyKernel::cpu_scalar || k == CholeskyKernel::cpu_vector)
    reject("runs on the host only; use Executor::host() or CholeskyKernel::automatic");
  // Side streams and events belong to the current device: make it the plan's, give the
  // caller's back at the end of setup.
  cuda_backend::DeviceGuard device_guard(exec.device());
  crossover = options.crossover > 0 ? std::min(options.crossover, kCudaFusedMax) : kCudaFusedMax;
  if (k == CholeskyKernel::cuda_fused && batch.max_size() > kCudaFusedMax)
    reject(("holds matrices of up to " + detail::number(kCudaFusedMax) + " rows; the batch has " +
            detail::number(batch.max_size()))
               .c_str());
  if (k == CholeskyKernel::cuda_blocked) crossover = 0;
  small = CholeskyKernel::cuda_fused;
  large = CholeskyKernel::cuda_blocked;
  if (options.blocked_shape >= cuda_backend::kCholeskyBlockedVariants)
    throw InvalidArgument("BatchedCholeskyPlan: blocked_shape = " + detail::number(options.blocked_shape) +
                          " must be -1 or in [0, " + detail::number(cuda_backend::kCholeskyBlockedVariants) + ")");
  // One launch per size class, largest class first (its long blocks start first).
  std::vector<int> edges;
  for (int e : kCudaClassEdges)
    if (e != crossover) edges.push_back(e);
  if (crossover > 0) edges.push_back(crossover);
  std::sort(edges.begin(), edges.end());
  const auto bins = batch.bins(edges);
  const int sms = std::max(1, cuda_backend::device_info(exec.device()).sm_count);
  for (auto it = bins.rbegin(); it != bins.rend(); ++it) {
    if (it->count == 0) continue;  // a class of empty matrices still runs: it sets their info
    cuda_backend::CholeskyRange r;
    r.first = it->first;
    r.count = it->count;
    r.max_size = it->max_size;
    r.kernel = it->upper_bound <= crossover ? cuda_backend::CholeskyGpuKernel::fused
                                            : cuda_backend::CholeskyGpuKernel::blocked;
    r.variant = options.blocked_shape >= 0 ? options.blocked_shape
                                             : cuda_blocked_variant(r.max_size, r.count, sms, sizeof(T));
    ranges.push_back(r);
  }
  if (ranges.size() > 1) {
    const int dev = exec.device();
    fork = std::shared_ptr<void>(cuda_backend::side_event_create(dev), cuda_backend::side_event_destroy);
    for (std::size_t j = 0; j < std::min<std::size_t>(kSideStreams, ranges.size()); ++j) {
      streams.emplace_back(cuda_backend::side_stream_create(dev), cuda_backend::side_stream_destroy);
      joins.emplace_back(cuda_backend::side_event_create(dev), cuda_backend::side_event_destroy);
    }
  }
  const std::size_t count = static_cast<std::size_t>(batch.count());
  d_ld = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(int), exec);
  if (kind == LayoutKind::pointers) d_ldb = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(int), exec);
  detail::copy_bytes(d_ld.get(), MemorySpace::device, ld.data(), MemorySpace::host, count * sizeof(int),
                     exec.stream());
  d_info = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(int), exec);
  if (kind == LayoutKind::compact) {
    d_offsets = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(index_t), exec);
    detail::copy_bytes(d_offsets.get(), MemorySpace::device, offsets.data(), MemorySpace::host,
                       count * sizeof(index_t), exec.stream());
    d_ptrs = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(T*), exec);
    d_bptrs = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(T*), exec);
    d_boffsets = detail::Storage(std::max<std::size_t>(count, 1) * sizeof(index_t), exec);
    host_boffsets.resize(count);
  }
}

template <class T>
BatchedCholeskyPlan<T>::BatchedCholeskyPlan(const VariableBatchPlan& batch, const PointerBatch& layout,
                                            CholeskyOptions options)
    : impl_(std::make_unique<Impl>(batch)) {
  impl_->kind = LayoutKind::pointers;
  impl_->options = options;
  impl_->ld = detail::leading_dimensions(batch, layout, "BatchedCholeskyPlan");
  impl_->setup();
}

template <class T>
BatchedCholeskyPlan<T>::BatchedCholeskyPlan(const VariableBatchPlan& batch, const CompactBatch& layout,
                                            CholeskyOptions options)
    : impl_(std::make_unique<Impl>(batch)) {
  Impl& p = *impl_;
  p.kind = LayoutKind::compact;
  p.options = options;
  auto g = detail::compact_geometry(
      batch, layout, [](int n) -> index_t { return static_cast<index_t>(n) * n; }, "BatchedCholeskyPlan");
  p.offsets = std::move(g.offsets);
  p.ld = detail::leading_dimensions(batch, PointerBatch{}, "BatchedCholeskyPlan");
  p.host_ptrs.resize(static_cast<std::size_t>(batch.count()));
  p.host_b_ptrs.resize(static_cast<std::size_t>(batch.count()));
  p.setup();
}

template <class T>
BatchedCholeskyPlan<T>::~BatchedCholeskyPlan() = default;
template <class T>
BatchedCholeskyPlan<T>::BatchedCholeskyPlan(BatchedCholeskyPlan&&) noexcept = default;
template <class T>
BatchedCholeskyPlan<T>& BatchedCholeskyPlan<T>::operator=(BatchedCholeskyPlan&&) noexcept = default;

template <class T>
void BatchedCholeskyPlan<T>::Impl::check_matrix_pointers(const T* const* A, const char* what) const {
  const Executor& exec = batch.executor();
  if (A == nullptr)
    throw InvalidArgument(std::string("batched Cholesky: the ") + what +
                          " pointer array is null; pass an array of count matrix pointers");
  if (cuda_backend::is_device_pointer(A) != exec.is_cuda())
    throw InvalidArgument(std::string("batched Cholesky: the ") + what + " pointer array is not in the executor's memory (" +
                          exec.name() + ")");
  if (!options.check_pointers) return;
  const VariableBatchView& v = batch.host_view();
  const auto h = detail::to_host(reinterpret_cast<const T* const*>(A), v.count, exec.stream());
  for (index_t s = 0; s < v.count; ++s)
    if (v.sizes[s] > 0 && h[s] == nullptr)
      throw InvalidArgument(std::string("batched Cholesky: ") + what + "[" + detail::number(s) +
                            "] is null for a matrix of size " + detail::number(v.sizes[s]));
}

// Reports failures when asked (after the whole batch is done).
template <class T>
void BatchedCholeskyPlan<T>::Impl::finish(int* info, bool on_device) {
  if (!options.check_pivots) return;
  const index_t count = batch.count();
  std::vector<int>& h = host_info;  // count ints from construction
  if (on_device) {
    detail::copy_bytes(h.data(), MemorySpace::host, info, MemorySpace::device, h.size() * sizeof(int),
                       batch.executor().stream());  // after the factorisation queued there
  } else if (info != h.data()) {
    std::copy(info, info + count, h.begin());
  }
  for (index_t s = 0; s < count; ++s)
    if (h[s] != 0)
      throw SingularSystem("batched Cholesky: matrix " + detail::number(s) + " (size " +
                           detail::number(batch.size(s)) + ") is not positive definite: column " +
                           detail::number(h[s] - 1) + " has a non-positive or non-finite pivot (info = " +
                           detail::number(h[s]) + "); the other matrices are factored", s, h[s] - 1);
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::factor_host(Impl& p, T* const* A, int* info) {
  if (!info) info = p.host_info.data();  // check_pivots without info: the plan's
  const VariableBatchView& v = p.batch.host_view();
  if (p.small == CholeskyKernel::reference)
    cpu::cholesky_factor_reference<T>(v, A, p.ld.data(), info);
  else
    cpu::cholesky_factor<T>(v, A, p.ld.data(), info, p.crossover, p.small == CholeskyKernel::cpu_vector,
                            p.workspace.get(), p.batch.executor().threads());
  p.finish(info, false);
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::factor_cuda(Impl& p, T* const* A, int* info) {
  const Executor& exec = p.batch.executor();
  cuda_backend::DeviceGuard device_guard(exec.device());
  int* dinfo = info ? info : static_cast<int*>(p.d_info.get());
  const int* dld = static_cast<const int*>(p.d_ld.get());
  if (p.streams.empty()) {
    for (const auto& r : p.ranges)
      cuda_backend::cholesky_vbatched_factor<T>(p.batch.view(), r, A, dld, dinfo, exec.stream());
  } else {
    // Fork: the size classes run on side streams (largest first), joined back before return.
    cuda_backend::side_event_record(p.fork.get(), exec.stream());
    for (const auto& s : p.streams) cuda_backend::side_stream_wait(s.get(), p.fork.get());
    for (std::size_t i = 0; i < p.ranges.size(); ++i)
      cuda_backend::cholesky_vbatched_factor<T>(p.batch.view(), p.ranges[i], A, dld, dinfo,
                                                p.streams[i % p.streams.size()].get());
    for (std::size_t j = 0; j < p.streams.size(); ++j) {
      cuda_backend::side_event_record(p.joins[j].get(), p.streams[j].get());
      cuda_backend::side_stream_wait(exec.stream(), p.joins[j].get());
    }
  }
  p.finish(dinfo, true);
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::factor_compact_host(Impl& p, T* A, int* info) {
  for (std::size_t s = 0; s < p.offsets.size(); ++s) p.host_ptrs[s] = A ? A + p.offsets[s] : nullptr;
  factor_host(p, p.host_ptrs.data(), info);
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::factor_compact_cuda(Impl& p, T* A, int* info) {
  const Executor& exec = p.batch.executor();
  cuda_backend::DeviceGuard device_guard(exec.device());
  T** ptrs = static_cast<T**>(p.d_ptrs.get());
  if (p.batch.max_size() > 0)  // all empty: A may be null
    cuda_backend::cholesky_pointers<T>(A, static_cast<const index_t*>(p.d_offsets.get()), p.batch.count(), ptrs,
                                       exec.stream());
  factor_cuda(p, ptrs, info);
}

// The checks every factorisation makes before its backend runs.
static void check_info_pointer(const Executor& exec, const int* info, bool check_pivots) {
  if (info == nullptr && !check_pivots)
    throw InvalidArgument("batched Cholesky: info is null; pass count ints or set check_pivots");
  if (info != nullptr && cuda_backend::is_device_pointer(info) != exec.is_cuda())
    throw InvalidArgument("batched Cholesky: info is not in the executor's memory (" + exec.name() + ")");
}

template <class T>
void BatchedCholeskyPlan<T>::factor(T* const* A, int* info) {
  Impl& p = *impl_;
  if (p.kind != LayoutKind::pointers)
    throw InvalidArgument("BatchedCholeskyPlan: built for a CompactBatch; call factor(T* A, info)");
  if (p.batch.count() == 0) return;
  p.check_matrix_pointers(A, "A");
  check_info_pointer(p.batch.executor(), info, p.options.check_pivots);
  p.backend->factor(p, A, info);
}

template <class T>
void BatchedCholeskyPlan<T>::factor(T* A, int* info) {
  Impl& p = *impl_;
  if (p.kind != LayoutKind::compact)
    throw InvalidArgument("BatchedCholeskyPlan: built for a PointerBatch; call factor(T* const* A, info)");
  if (p.batch.count() == 0) return;
  const Executor& exec = p.batch.executor();
  const bool any = p.batch.max_size() > 0;  // all empty: A may be null
  if (any && A == nullptr) throw InvalidArgument("batched Cholesky: A is null; pass the compact batch's array");
  if (any && cuda_backend::is_device_pointer(A) != exec.is_cuda())
    throw InvalidArgument("batched Cholesky: A is not in the executor's memory (" + exec.name() + ")");
  check_info_pointer(exec, info, p.options.check_pivots);
  p.backend->factor_compact(p, A, info);
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::solve_host(Impl& p, const T* const* L, T* const* B, int nrhs, const int*,
                                              const std::vector<int>& hldb, const int* info) {
  cpu::cholesky_solve<T>(p.batch.host_view(), L, p.ld.data(), B, hldb.data(), nrhs, info,
                         p.batch.executor().threads());
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::solve_cuda(Impl& p, const T* const* L, T* const* B, int nrhs, const int* ldb,
                                              const std::vector<int>& hldb, const int* info) {
  const Executor& exec = p.batch.executor();
  cuda_backend::DeviceGuard device_guard(exec.device());
  const int* dldb = ldb;
  if (ldb == nullptr || !cuda_backend::is_device_pointer(ldb)) {
    // The plan's buffer: the copy waits for earlier work on the stream that may still read it.
    detail::copy_bytes(p.d_ldb.get(), MemorySpace::device, hldb.data(), MemorySpace::host, hldb.size() * sizeof(int),
                       exec.stream());
    dldb = static_cast<const int*>(p.d_ldb.get());
  }
  cuda_backend::cholesky_vbatched_solve<T>(p.batch.view(), L, static_cast<const int*>(p.d_ld.get()), B, dldb, nrhs,
                                           info, exec.stream());
}

template <class T>
void BatchedCholeskyPlan<T>::solve(const T* const* L, T* const* B, int nrhs, const int* ldb, const int* info) {
  Impl& p = *impl_;
  if (p.kind != LayoutKind::pointers)
    throw InvalidArgument("BatchedCholeskyPlan: built for a CompactBatch; call solve(L, B, nrhs, info)");
  detail::require(nrhs >= 0, "batched Cholesky solve: nrhs = " + detail::number(nrhs) + " must be >= 0");
  if (p.batch.count() == 0 || nrhs == 0) return;
  p.check_matrix_pointers(L, "L");
  p.check_matrix_pointers(B, "B");
  const Executor& exec = p.batch.executor();
  if (info != nullptr && cuda_backend::is_device_pointer(info) != exec.is_cuda())
    throw InvalidArgument("batched Cholesky solve: info is not in the executor's memory (" + exec.name() + ")");
  const std::vector<int> hldb =
      detail::leading_dimensions(p.batch, PointerBatch{ldb}, "batched Cholesky solve (ldb)");
  p.backend->solve(p, L, B, nrhs, ldb, hldb, info);
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::solve_compact_host(Impl& p, const T* L, T* B, int nrhs, const int* info) {
  const VariableBatchView& v = p.batch.host_view();
  index_t at = 0;
  for (index_t s = 0; s < v.count; ++s) {
    p.host_ptrs[s] = const_cast<T*>(L) + p.offsets[s];
    p.host_b_ptrs[s] = B + at;
    at += static_cast<index_t>(v.sizes[s]) * nrhs;
  }
  cpu::cholesky_solve<T>(v, p.host_ptrs.data(), p.ld.data(), p.host_b_ptrs.data(), p.ld.data(), nrhs, info,
                         p.batch.executor().threads());
}

template <class T>
void BatchedCholeskyPlan<T>::Impl::solve_compact_cuda(Impl& p, const T* L, T* B, int nrhs, const int* info) {
  const Executor& exec = p.batch.executor();
  const VariableBatchView& v = p.batch.host_view();
  cuda_backend::DeviceGuard device_guard(exec.device());
  if (p.b_nrhs != nrhs) {  // refilled, never reallocated (setup() sized it)
    std::vector<index_t>& boff = p.host_boffsets;
    index_t at = 0;
    for (index_t s = 0; s < v.count; ++s) {
      boff[s] = at;
      at += static_cast<index_t>(v.sizes[s]) * nrhs;
    }
    detail::copy_bytes(p.d_boffsets.get(), MemorySpace::device, boff.data(), MemorySpace::host,
                       boff.size() * sizeof(index_t), exec.stream());
    p.b_nrhs = nrhs;
  }
  T** lp = static_cast<T**>(p.d_ptrs.get());
  T** bp = static_cast<T**>(p.d_bptrs.get());
  cuda_backend::cholesky_pointers<T>(const_cast<T*>(L), static_cast<const index_t*>(p.d_offsets.get()), v.count, lp,
                                     exec.stream());
  cuda_backend::cholesky_pointers<T>(B, static_cast<const index_t*>(p.d_boffsets.get()), v.count, bp, exec.stream());
  const int* dld = static_cast<const int*>(p.d_ld.get());
  cuda_backend::cholesky_vbatched_solve<T>(p.batch.view(), lp, dld, bp, dld, nrhs, info, exec.stream());
}

template <class T>
void BatchedCholeskyPlan<T>::solve(const T* L, T* B, int nrhs, const int* info) {
  Impl& p = *impl_;
  if (p.kind != LayoutKind::compact)
    throw InvalidArgument("BatchedCholeskyPlan: built for a PointerBatch; call solve(L ptrs, B ptrs, nrhs, ldb, info)");
  detail::require(nrhs >= 0, "batched Cholesky solve: nrhs = " + detail::number(nrhs) + " must be >= 0");
  if (p.batch.count() == 0 || nrhs == 0 || p.batch.max_size() == 0) return;
  const Executor& exec = p.batch.executor();
  detail::require(L != nullptr && B != nullptr, "batched Cholesky solve: L or B is null");
  for (const void* q : {static_cast<const void*>(L), static_cast<const void*>(B)})
    detail::require(cuda_backend::is_device_pointer(q) == exec.is_cuda(),
                    "batched Cholesky solve: L and B must be in the executor's memory (" + exec.name() + ")");
  p.backend->solve_compact(p, L, B, nrhs, info);
}

template <class T>
CholeskyKernel BatchedCholeskyPlan<T>::small_kernel() const {
  return impl_->small;
}
template <class T>
CholeskyKernel BatchedCholeskyPlan<T>::large_kernel() const {
  return impl_->large;
}
template <class T>
int BatchedCholeskyPlan<T>::crossover() const {
  return impl_->crossover;
}
template <class T>
const VariableBatchPlan& BatchedCholeskyPlan<T>::batch() const {
  return impl_->batch;
}

template class BatchedCholeskyPlan<float>;
template class BatchedCholeskyPlan<double>;

}  // namespace adi
