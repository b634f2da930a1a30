#pragma once
// automatic's fall-back decided on the device for LargeTridiagonalPlan (issue 23, stop 37;
// opt-in with ADI_PIVOTING_FALLBACK=device when the plan is made; docs/pivoting.md "Stop 37").
// Declared apart from backend.hpp, whose every includer would otherwise recompile; defined in
// solvers/cuda/partition_large.cu. Without CUDA: the stand-ins of kernel_list.hpp.
//
// large_solve_device_fallback enqueues one launch of a CUDA graph: [the checked partition of
// `count` systems (system s: bands + s * band_step, d / u + s * stride), raising `flag`] ->
// [one thread reading and clearing `flag`] -> IF raised { Kernel::cuda_pivoting on the
// systems, its zero pivots into pivot_flag (pinned host memory, may be null) }. Nothing is
// waited for. Graphs are kept per pointer set in `cache` (large_fallback_cache_create, one per
// plan; the least recently used of 4 replaced). false: conditional graph nodes are unavailable
// (toolkit < 12.4, driver; said once on stderr): nothing enqueued, the caller decides on the host.
// A broken context (a sticky error such as an earlier kernel's illegal address) throws DeviceError
// instead and leaves the fall-back on.
// ADI_LARGE_FALLBACK_TRACE=1: one stderr line per graph built. A graph keeps what the environment
// said when it was built: ADI_LARGE_CHECK_FORM is part of the key, the pivoting solve's own timing
// switches (ADI_PIVOTING_ROUTE, _PARTITION_FORM, _PARTITION_DOMINANCE, _REFINE_GATE, ...) are not,
// so an A/B of those needs a plan made after each change.
#include "adi/base/layout.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN
ADI_CUDA_KERNEL(void* large_fallback_cache_create())
ADI_CUDA_KERNEL_OR(, void large_fallback_cache_destroy(void* cache) noexcept)
template <class T>
ADI_CUDA_KERNEL(bool large_solve_device_fallback(void* cache, index_t count, index_t n, index_t stride,
                 index_t band_step, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, int chunk,
                 double tolerance, void* workspace, unsigned long long* flag, void* pivot_workspace,
                 int* pivot_flag, void* stream))
ADI_CUDA_KERNELS_END

// The checked partition (large_solve, default load) of `count` systems of n rows enqueued on
// `stream`, system s with bands from a, b, c + band(s) and d, u + off(s): the flag's bias is
// total - s * n (total = count * n), so a raised flag names the first failing position over all
// systems as total - (s * n + row). report: large_solve's (null: the flag stays raised). Both
// users: LargeTridiagonalPlan / TridiagonalPlan's few long lines (adi/large_tridiagonal.cpp,
// cuda_partition_systems) and the device fall-back's graph (partition_large.cu).
template <class T, class Band, class Off>
void enqueue_large_systems(index_t count, index_t n, const T* a, const T* b, const T* c, const T* d, T* u, Band band,
                           Off off, bool periodic, int chunk, double tolerance, void* workspace,
                           unsigned long long* flag, void* stream, unsigned long long* report) {
  const unsigned long long total = static_cast<unsigned long long>(count) * static_cast<unsigned long long>(n);
  for (index_t s = 0; s < count; ++s) {
    const index_t bo = band(s), o = off(s);
    large_solve<T>(n, a + bo, b + bo, c + bo, d + o, u + o, periodic, chunk, tolerance, workspace, flag,
                   total - static_cast<unsigned long long>(s) * n, stream, 0, report);
  }
}
}  // namespace adi::cuda_backend
