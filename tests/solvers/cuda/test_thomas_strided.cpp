// cuda_thomas_strided (solvers/cuda/thomas_strided.cuh, paper 6.2) against the fp64
// reference: lines adjacent in memory (Y/Z axes of a padded box, interleaved batches).
#include "cuda_tridiagonal_check.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasStrided, Kernel::cuda_thomas_strided, Family::adjacent, Axis::y, Axis::z)
