// The device block partition passes (solvers/cuda/block_partition_local_passes.hpp: the
// local reduction and back-substitution of DistributedBlockTridiagonalPlan) on one GPU,
// without MPI: L lines of n block rows (one rank's segments, interleaved like lines along a
// split z axis of an AoS grid), M = 2..8, fp64 and fp32, one thread per line (S = 1) and
// S sub-segments. Per row: milliseconds of reduce + back_substitute (median), GB/s of the
// minimum traffic (reduce reads A, B, C, d and writes alpha, gamma, delta; the
// back-substitution reads delta, alpha, gamma and writes u: (7 M^2 + 4 M) values a block
// row), its % of the device copy, and a checksum of u (the same inputs in every build, so
// two builds of this program compare their answers too). Issue 15 item 8: a build with
// -DADI_CUDA_UNROLL_ALL=ON runs the fully unrolled M = 6..8 kernels, the default build the
// rolled ones; scripts/gpu_build_check.sh runs both and prints them side by side.
//
//   bench_cuda_block_partition [--lines L] [--rows n] [--reps R] [--m M]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "benchmarks/cuda_bench_util.cuh"
#include "solvers/cuda/block_partition_local_passes.hpp"

using adi::index_t;
namespace bp = adi::cuda_backend::block_partition;
using namespace adi::bench;

namespace {

__device__ double hash01(unsigned long long i, unsigned seed) {
  unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return double(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;  // [-1, 1)
}

// Entry v of every M x M block: off * u in (-off, off), plus 4 on the diagonal of B.
template <class T>
__global__ void fill_blocks(T* p, long long count, int M, double off, double diag, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    const int v = int(i % (M * M));
    p[i] = T(off * hash01(i, seed) + (v % (M + 1) == 0 ? diag : 0.0));
  }
}

template <class T>
double checksum(const T* d, std::size_t n) {
  std::vector<T> h(std::min<std::size_t>(n, 1 << 20));
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
  double s = 0;
  for (T x : h) s += std::fabs(double(x));
  return s;
}

template <class T>
void run(int M, index_t L, index_t n, int S, int reps, double copy_gbs) {
  const index_t MM = index_t(M) * M, R = 3 * MM + M;
  adi::BlockLineSet ls;
  ls.m = M;
  ls.n = n;
  ls.count0 = L;
  ls.count1 = 1;
  ls.blocks = {L * MM, MM, 0, 1};  // row, system0, system1, component
  ls.vectors = {L * M, M, 0, 1};
  const std::size_t nb = std::size_t(n * L * MM), nv = std::size_t(n * L * M);
  Dev<T> a(nb), b(nb), c(nb), d(nv), u(nv), alpha(nb), gamma(nb), red(std::size_t(L * 2 * R)), sol(std::size_t(L * 2 * M));
  Dev<T> red1(std::size_t(2 * R * S * L)), alpha2(std::size_t(2 * S * MM * L)), gamma2(std::size_t(2 * S * MM * L)),
      x2(std::size_t(2 * S * M * L));
  const double off = 1.0 / M;
  fill_blocks<T><<<1024, 256>>>(a.p, (long long)nb, M, off, 0.0, 1u);
  fill_blocks<T><<<1024, 256>>>(b.p, (long long)nb, M, off, 4.0, 2u);
  fill_blocks<T><<<1024, 256>>>(c.p, (long long)nb, M, off, 0.0, 3u);
  fill_blocks<T><<<1024, 256>>>(d.p, (long long)nv, 1, 1.0, 0.0, 4u);
  fill_blocks<T><<<64, 256>>>(sol.p, (long long)(L * 2 * M), 1, 1.0, 0.0, 5u);
  CK(cudaGetLastError());
  bp::Workspace<T> w;
  w.alpha = alpha.p;
  w.gamma = gamma.p;
  w.S = S;
  if (S > 1) w.red1 = red1.p, w.alpha2 = alpha2.p, w.gamma2 = gamma2.p, w.x2 = x2.p;
  const T tol = T(sizeof(T) == 4 ? 1e-6 : 1e-13);
  auto body = [&] {
    bp::reduce<T>(ls, a.p, b.p, c.p, d.p, u.p, w, red.p, tol, true, true, nullptr);
    bp::back_substitute<T>(ls, w, sol.p, u.p, nullptr);
  };
  const double ms = median_ms(body, reps);
  const double bytes = double(7 * MM + 4 * M) * double(n) * double(L) * sizeof(T);
  const double gbs = bytes / (ms * 1e6);
  const double redsum = checksum(red.p, std::size_t(L * 2 * R));
  std::printf("bp %-6s M=%d L=%lld n=%lld S=%-3d %9.3f ms %8.1f GB/s %6.1f%% of copy  sum(|u|)=%.12g sum(|red|)=%.12g\n",
              sizeof(T) == 8 ? "fp64" : "fp32", M, (long long)L, (long long)n, S, ms, gbs, 100.0 * gbs / copy_gbs,
              checksum(u.p, nv), redsum);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  index_t L = 8192, n = 128;
  int reps = 10, only_m = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--lines")) L = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rows")) n = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--m")) only_m = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--lines L] [--rows n] [--reps R] [--m M]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  const CopyBandwidth copy = measure_copy(10, 2, 4 * p.multiProcessorCount, 256);
  std::printf("== bench_cuda_block_partition on %s: copy %.0f GB/s (memcpy %.0f, kernel %.0f)\n", p.name, copy.best(),
              copy.memcpy_gbs, copy.kernel_gbs);
  for (int S : {1, 4})
    for (int M = 2; M <= 8; ++M) {
      if (only_m && M != only_m) continue;
      run<double>(M, L, n, S, reps, copy.best());
      run<float>(M, L, n, S, reps, copy.best());
    }
  return 0;
}
