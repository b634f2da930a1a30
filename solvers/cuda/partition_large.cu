// One large tridiagonal system on the device: the two-pass partition method
// (partition_large.cuh, partition_large_tile.hpp), recursing on the reduced system until
// one thread can solve it. Entry points declared in backend.hpp.
#include <cuda_runtime.h>

#include <string>

#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/partition_large.cuh"

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

template <class T, int M, bool Staged>
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
    k::partition_pass1<T, M, Staged><<<blocks(tiles), W * 32, 0, stream>>>(L[l], ch, tiles);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
  T* cp = adi::large::direct_scratch<T>(p, workspace, 0);
  T* z = adi::large::direct_scratch<T>(p, workspace, 1);
  if (tail) {
    k::partition_tail<T, M><<<1, k::kTailWarps * 32, 0, stream>>>(
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
    k::partition_pass2<T, M, Staged><<<blocks(tiles), W * 32, 0, stream>>>(v, ch, tiles);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
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

template void large_solve<float>(index_t, const float*, const float*, const float*, const float*, float*, bool, int,
                                 double, void*, unsigned long long*, unsigned long long, void*, int,
                                 unsigned long long*);
template void large_solve<double>(index_t, const double*, const double*, const double*, const double*, double*,
                                  bool, int, double, void*, unsigned long long*, unsigned long long, void*, int,
                                  unsigned long long*);

}  // namespace adi::cuda_backend
