// cuda_thomas_naive (solvers/cuda/thomas_naive.cuh) against the fp64 reference, on
// both layout families and all three axes of a padded box.
#include "cuda_tridiagonal_check.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasNaiveX, Kernel::cuda_thomas_naive, Family::contiguous, Axis::x, Axis::y,
                           Axis::z)
ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasNaiveYZ, Kernel::cuda_thomas_naive, Family::adjacent, Axis::z)
