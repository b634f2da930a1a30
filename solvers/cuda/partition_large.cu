// One large tridiagonal system on the device: the two-pass partition method
// (partition_large.cuh, partition_large_tile.hpp), recursing on the reduced system until
// one thread can solve it. Entry points declared in backend.hpp.
#include <cuda_runtime.h>

#include <string>

#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
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

template <class T, int M>
void run_levels(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, double tol,
                void* workspace, unsigned long long* flag, unsigned long long bias, cudaStream_t stream) {
  const LevelPlan p = LevelPlan::make(n, M, sizeof(T));
  adi::large::Level<T> L[LevelPlan::kMaxLevels];
  adi::large::make_levels<T>(p, n, a, b, c, d, u, periodic, tol, flag, bias, workspace, L);
  auto blocks = [](adi::large::i64 tiles) {
    return static_cast<unsigned>((tiles + k::kWarpsPerBlock - 1) / k::kWarpsPerBlock);
  };
  for (int l = 0; l + 1 < p.levels; ++l) {
    const adi::large::Chunks ch = adi::large::Chunks::make(p.N[l], M);
    const adi::large::i64 tiles = adi::large::tile_count(ch);
    k::partition_pass1<T, M><<<blocks(tiles), k::kBlockThreads, 0, stream>>>(L[l], ch, tiles);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
  const int last = p.levels - 1;
  k::partition_direct<T><<<1, 32, 0, stream>>>(L[last], adi::large::direct_scratch<T>(p, workspace, 0),
                                               adi::large::direct_scratch<T>(p, workspace, 1));
  ADI_CUDA_CHECK(cudaGetLastError());
  for (int l = last - 1; l >= 0; --l) {
    adi::large::Level<T> v = L[l];
    v.flag = nullptr;  // pass 2 meets the same pivots as pass 1
    const adi::large::Chunks ch = adi::large::Chunks::make(p.N[l], M);
    const adi::large::i64 tiles = adi::large::tile_count(ch);
    k::partition_pass2<T, M><<<blocks(tiles), k::kBlockThreads, 0, stream>>>(v, ch, tiles);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace

int large_chunk_min() { return kChunks[0]; }
int large_chunk_max() { return kChunks[2]; }
int large_default_chunk(std::size_t value_size) { return value_size == 4 ? kDefaultChunk32 : kDefaultChunk64; }

std::size_t large_workspace_bytes(index_t n, bool, int chunk, std::size_t value_size) {
  return LevelPlan::make(n, chunk, value_size).bytes;
}

void large_flag_reset(unsigned long long* flag, void* stream) {
  ADI_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(unsigned long long), static_cast<cudaStream_t>(stream)));
}

template <class T>
void large_solve(index_t n, const T* a, const T* b, const T* c, const T* d, T* u, bool periodic, int chunk,
                 double tolerance, void* workspace, unsigned long long* flag, unsigned long long bias,
                 void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (chunk) {
    case 8: run_levels<T, 8>(n, a, b, c, d, u, periodic, tolerance, workspace, flag, bias, s); break;
    case 16: run_levels<T, 16>(n, a, b, c, d, u, periodic, tolerance, workspace, flag, bias, s); break;
    case 32: run_levels<T, 32>(n, a, b, c, d, u, periodic, tolerance, workspace, flag, bias, s); break;
    default:
      throw InvalidArgument("large tridiagonal solve on CUDA: chunk = " + std::to_string(chunk) +
                            " must be 8, 16 or 32");
  }
}

template void large_solve<float>(index_t, const float*, const float*, const float*, const float*, float*, bool, int,
                                 double, void*, unsigned long long*, unsigned long long, void*);
template void large_solve<double>(index_t, const double*, const double*, const double*, const double*, double*,
                                  bool, int, double, void*, unsigned long long*, unsigned long long, void*);

}  // namespace adi::cuda_backend
