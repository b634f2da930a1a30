// cuda_thomas_pcr_strided (solvers/cuda/thomas_pcr_strided.cuh + pcr_warp_core.cuh,
// paper algorithm 11) against the fp64 reference: lines adjacent in memory (Y/Z axes).
#include "cuda_tridiagonal_check.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasPcrStrided, Kernel::cuda_thomas_pcr_strided, Family::adjacent, Axis::y,
                           Axis::z)

TEST(CudaThomasPcrStrided, LongLines) {
  ADI_REQUIRE_CUDA();
  for (adi::index_t n : {1025, 2049, 4096})
    for (int p = 0; p < 2; ++p) {
      adi::test_cuda::Case c;
      c.lines = adi::test_cuda::adjacent(n, 37);
      c.periodic = p;
      c.shared = !p;
      c.base = 2;
      adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr_strided, c);
      adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr_strided, c);
    }
}
