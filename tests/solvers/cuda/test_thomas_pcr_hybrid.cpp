// cuda_thomas_pcr (solvers/cuda/thomas_pcr_hybrid.cuh + pcr_warp_core.cuh, paper 2.3
// and algorithm 10) against the fp64 reference: contiguous lines (X axis).
#include "cuda_tridiagonal_check.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasPcr, Kernel::cuda_thomas_pcr, Family::contiguous, Axis::x)

// Lines up to the hybrid's limit (m = 128 rows per lane) and just past a power of two.
TEST(CudaThomasPcr, LongLines) {
  ADI_REQUIRE_CUDA();
  for (adi::index_t n : {1025, 2049, 4096})
    for (int p = 0; p < 2; ++p) {
      adi::test_cuda::Case c;
      c.lines = adi::test_cuda::contiguous(n, 35);
      c.periodic = p;
      c.shared = p;
      c.base = 1;
      adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr, c);
      adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr, c);
    }
}

// The launch shapes of bench_cuda_tridiagonal's tuning rows (warps per block, cp.async).
TEST(CudaThomasPcr, LaunchShapes) {
  ADI_REQUIRE_CUDA();
  std::vector<adi::cuda_backend::Tuning> shapes;
  for (int prefetch : {0, 1})
    for (int warps : {2, 8}) {
      adi::cuda_backend::Tuning t;
      t.warps_per_block = warps;
      t.prefetch = prefetch;
      shapes.push_back(t);
    }
  adi::test_cuda::launch_shapes<float>(Kernel::cuda_thomas_pcr, Family::contiguous, shapes);
  adi::test_cuda::launch_shapes<double>(Kernel::cuda_thomas_pcr, Family::contiguous, shapes);
}
